//! Every selector of an install selects the pods it is for, whatever
//! `podLabels` sets: in each topology, with generated `podLabels` over the
//! labels the chart's selectors read (empty values among them, once a
//! bridge whose webhook Service selected no pod), each Service, budget and
//! NetworkPolicy selects a pod of a Deployment of the install, and the
//! bridge's webhook Service selects the pods of both. asogen's objects and
//! Helm's (its own `helm template` code) must be the same, or both refuse.

mod common;

use common::{asogen_in, first_object_difference, helm_template_as_asogen, objects_of, text};
use serde_json::{Map, Value, json};

fn selects(selector: &Map<String, Value>, labels: &Value) -> bool {
    !selector.is_empty()
        && selector
            .iter()
            .all(|(key, value)| labels.get(key) == Some(value))
}

/// What selects no pod in one install's objects.
fn blind_selectors(objects: &[Value], topology: &str) -> Vec<String> {
    let pods: Vec<(&str, &Value)> = objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .map(|o| {
            (
                o["metadata"]["name"].as_str().unwrap(),
                &o["spec"]["template"]["metadata"]["labels"],
            )
        })
        .collect();
    let mut out = Vec::new();
    for object in objects {
        let selector = match object["kind"].as_str() {
            Some("Service") => object["spec"]["selector"].as_object(),
            Some("PodDisruptionBudget") => object["spec"]["selector"]["matchLabels"].as_object(),
            Some("NetworkPolicy") => object["spec"]["podSelector"]["matchLabels"].as_object(),
            _ => continue,
        };
        let name = format!("{} {}", object["kind"], object["metadata"]["name"]);
        let Some(selector) = selector else {
            out.push(format!("{name} has no selector"));
            continue;
        };
        let selected: Vec<&str> = pods
            .iter()
            .filter(|(_, labels)| selects(selector, labels))
            .map(|(deployment, _)| *deployment)
            .collect();
        if selected.is_empty() {
            out.push(format!("{name} selects no pod ({selector:?})"));
        }
        let webhook_service = object["kind"] == "Service"
            && object["metadata"]["name"] == "azureserviceoperator-webhook-service";
        if topology == "bridge" && webhook_service && selected.len() != pods.len() {
            out.push(format!(
                "{name} selects the pods of {selected:?} only, in the bridge"
            ));
        }
    }
    out
}

#[test]
fn every_selector_selects_its_pods_whatever_pod_labels_set() {
    let dir = tempfile::tempdir().unwrap();
    let read_by_selectors = [
        "app.kubernetes.io/name",
        "control-plane",
        "app.kubernetes.io/version",
    ];
    let values_of = [
        "",
        "x",
        "azure-service-operator",
        "controller-manager",
        "webhooks",
    ];
    let mut cases = Vec::new();
    for topology in ["single", "split", "bridge"] {
        cases.push((topology, json!({"topology": topology})));
        for key in read_by_selectors {
            for value in values_of {
                cases.push((
                    topology,
                    json!({"topology": topology, "podLabels": {key: value}}),
                ));
            }
        }
    }
    let mut args = Vec::new();
    for (index, (_, values)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("case-{index}.yaml"));
        std::fs::write(&file, values.to_string()).unwrap();
        args.push(vec!["-f".to_string(), file.display().to_string()]);
    }
    let helm = helm_template_as_asogen(dir.path(), &args);
    let mut problems = Vec::new();
    let mut rendered = 0;
    for (((topology, values), args), helm) in cases.iter().zip(&args).zip(&helm) {
        let mut all = vec!["template", "-o", "json"];
        all.extend(args.iter().map(String::as_str));
        let out = asogen_in(dir.path(), &all);
        match (out.status.code(), helm["objects"].as_array()) {
            (Some(0), Some(theirs)) => {
                rendered += 1;
                let list: Value = serde_json::from_slice(&out.stdout).unwrap();
                let ours = list["items"].as_array().unwrap();
                for problem in blind_selectors(ours, topology) {
                    problems.push(format!("{values}: {problem}"));
                }
                if let Some(difference) =
                    first_object_difference(&objects_of(ours.clone()), &objects_of(theirs.clone()))
                {
                    problems.push(format!(
                        "{values}: asogen and Helm differ: {difference:.800}"
                    ));
                }
            }
            (Some(1), None) => {}
            (code, _) => problems.push(format!(
                "{values}: asogen exited {code:?} ({}), Helm answered {:.300}",
                text(&out.stdout),
                helm.to_string()
            )),
        }
    }
    assert!(rendered >= 30, "only {rendered} cases rendered");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
