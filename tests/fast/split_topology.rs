//! The split topology's objects as asogen renders them: every selector
//! (Deployment, Service, PodDisruptionBudget, NetworkPolicy, topology
//! spread) picks the pods of exactly one role, the webhook pods can neither
//! write CRDs nor take the controllers' lease, each role runs its own
//! operator mode and flags, and the single topology renders as if the split
//! did not exist. Each check is a function over the rendered objects, shown
//! to fail on a render broken the way it guards against.

use crate::common;

use std::collections::BTreeMap;

use asogen::objects::REFRESH_ANNOTATION;
use common::{asogen, root, text};
use serde::Deserialize;
use serde_json::{Value, json};

const CONTROLLER: &str = "azureserviceoperator-controller-manager";
const WEBHOOKS: &str = "azureserviceoperator-webhooks";
const WEBHOOK_SERVICE: &str = "azureserviceoperator-webhook-service";

/// `asogen template` of a values text.
fn render(values: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("values.yaml");
    std::fs::write(&file, values).unwrap();
    let out = asogen(&["template", "-f", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_yaml::Deserializer::from_str(&text(&out.stdout))
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|object| !object.is_null())
        .collect()
}

/// The split values every check runs over: the profile and the test cases
/// that choose the split.
fn split_renders() -> Vec<(String, Vec<Value>)> {
    let mut files = vec![root().join("values/profiles/split.yaml")];
    for (path, expect) in common::cases() {
        let values = std::fs::read_to_string(&path).unwrap();
        if expect == common::Expect::Valid && values.contains("topology: split") {
            files.push(path);
        }
    }
    assert!(files.len() >= 3, "{files:?}");
    files
        .into_iter()
        .map(|path| {
            let values = std::fs::read_to_string(&path).unwrap();
            (path.display().to_string(), render(&values))
        })
        .collect()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name}"))
}

/// Whether `labels` carry every entry of `match_labels` (an empty selector
/// selects nothing here: none of ours is empty, and one that were would be
/// a defect this should report).
fn selects(match_labels: &Value, labels: &Value) -> bool {
    let Some(wanted) = match_labels.as_object().filter(|m| !m.is_empty()) else {
        return false;
    };
    wanted
        .iter()
        .all(|(key, value)| labels.get(key) == Some(value))
}

/// Every label selector of the objects, with where it is.
fn selectors(objects: &[Value]) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for object in objects {
        let id = format!(
            "{}/{}",
            object["kind"].as_str().unwrap(),
            object["metadata"]["name"].as_str().unwrap()
        );
        let spec = &object["spec"];
        match object["kind"].as_str().unwrap() {
            "Deployment" => {
                out.push((id.clone(), spec["selector"]["matchLabels"].clone()));
                let pod = &spec["template"]["spec"];
                for (i, spread) in pod["topologySpreadConstraints"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    out.push((
                        format!("{id} spread {i}"),
                        spread["labelSelector"]["matchLabels"].clone(),
                    ));
                }
            }
            "Service" => out.push((id, spec["selector"].clone())),
            "PodDisruptionBudget" => out.push((id, spec["selector"]["matchLabels"].clone())),
            "NetworkPolicy" => out.push((id, spec["podSelector"]["matchLabels"].clone())),
            _ => {}
        }
    }
    out
}

/// The pod labels of each Deployment, by Deployment name (its role).
fn pod_labels(objects: &[Value]) -> BTreeMap<String, Value> {
    objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .map(|d| {
            (
                d["metadata"]["name"].as_str().unwrap().to_string(),
                d["spec"]["template"]["metadata"]["labels"].clone(),
            )
        })
        .collect()
}

/// Selectors that pick the pods of no role or of more than one, and
/// Deployments whose selector misses their own pods.
fn selector_problems(objects: &[Value]) -> Vec<String> {
    let pods = pod_labels(objects);
    let mut problems = Vec::new();
    for (id, selector) in selectors(objects) {
        let roles: Vec<&String> = pods
            .iter()
            .filter(|(_, labels)| selects(&selector, labels))
            .map(|(role, _)| role)
            .collect();
        if roles.len() != 1 {
            problems.push(format!("{id} ({selector}) selects the pods of {roles:?}"));
        } else if let Some(own) = id.strip_prefix("Deployment/") {
            let own = own.split(' ').next().unwrap();
            if roles[0] != own {
                problems.push(format!("{id} selects the pods of {}", roles[0]));
            }
        }
    }
    problems
}

#[test]
fn every_selector_picks_the_pods_of_exactly_one_role() {
    for (what, objects) in split_renders() {
        assert_eq!(
            pod_labels(&objects).keys().collect::<Vec<_>>(),
            [CONTROLLER, WEBHOOKS],
            "{what}"
        );
        assert_eq!(selector_problems(&objects), Vec::<String>::new(), "{what}");
        // The webhook Service sends its traffic to the webhook pods.
        let service = find(&objects, "Service", WEBHOOK_SERVICE);
        let pods = pod_labels(&objects);
        assert!(
            selects(&service["spec"]["selector"], &pods[WEBHOOKS]),
            "{what}"
        );
    }
}

#[test]
fn a_shared_selector_is_reported() {
    let (_, mut objects) = split_renders().remove(0);
    // The webhook pods labelled as controller pods: the controller's
    // selector, Services and policies now pick both roles.
    let webhooks = objects
        .iter_mut()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == WEBHOOKS)
        .unwrap();
    webhooks["spec"]["template"]["metadata"]["labels"]["control-plane"] =
        json!("controller-manager");
    let problems = selector_problems(&objects);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(&format!("Deployment/{CONTROLLER} "))),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(&format!("Service/{WEBHOOK_SERVICE} "))),
        "{problems:?}"
    );
}

/// The rules a ServiceAccount is granted by the install's bindings, each as
/// (apiGroup, resource, verb), with the names of the roles that grant them.
fn grants(objects: &[Value], account: &str, namespace: &str) -> (Vec<String>, Vec<[String; 3]>) {
    let mut roles = Vec::new();
    let mut permissions = Vec::new();
    for binding in objects
        .iter()
        .filter(|o| o["kind"] == "ClusterRoleBinding" || o["kind"] == "RoleBinding")
    {
        let bound = binding["subjects"].as_array().unwrap().iter().any(|s| {
            s["kind"] == "ServiceAccount" && s["name"] == account && s["namespace"] == namespace
        });
        if !bound {
            continue;
        }
        let role_kind = binding["roleRef"]["kind"].as_str().unwrap();
        let role_name = binding["roleRef"]["name"].as_str().unwrap();
        roles.push(role_name.to_string());
        let role = find(objects, role_kind, role_name);
        for rule in role["rules"].as_array().unwrap() {
            for group in rule["apiGroups"].as_array().unwrap() {
                for resource in rule["resources"].as_array().unwrap() {
                    for verb in rule["verbs"].as_array().unwrap() {
                        permissions
                            .push([group, resource, verb].map(|v| v.as_str().unwrap().into()));
                    }
                }
            }
        }
    }
    roles.sort();
    (roles, permissions)
}

/// Write access to CRDs, and the leader election's leases, that an
/// account's permissions hold.
fn forbidden_for_webhooks(permissions: &[[String; 3]]) -> Vec<String> {
    const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "*"];
    permissions
        .iter()
        .filter(|[group, resource, verb]| {
            let crd_write = group == "apiextensions.k8s.io"
                && resource.starts_with("customresourcedefinitions")
                && WRITES.contains(&verb.as_str());
            let lease = resource == "leases" || resource == "*";
            let operator = group.ends_with(".azure.com") || group == "*";
            crd_write || lease || operator
        })
        .map(|p| p.join(" "))
        .collect()
}

fn service_account(objects: &[Value], deployment: &str) -> String {
    find(objects, "Deployment", deployment)["spec"]["template"]["spec"]["serviceAccountName"]
        .as_str()
        .unwrap()
        .to_string()
}

const NAMESPACE: &str = "azureserviceoperator-system";

#[test]
fn webhook_pods_can_neither_write_crds_nor_take_the_lease() {
    for (what, objects) in split_renders() {
        let webhooks = service_account(&objects, WEBHOOKS);
        let controller = service_account(&objects, CONTROLLER);
        assert_ne!(webhooks, controller, "{what}");
        let (roles, permissions) = grants(&objects, &webhooks, NAMESPACE);
        assert!(
            roles.contains(&"azureserviceoperator-crd-reader-role".to_string()),
            "{what}: {roles:?}"
        );
        assert_eq!(
            forbidden_for_webhooks(&permissions),
            Vec::<String>::new(),
            "{what}: {roles:?}"
        );
        for role in ["crd-manager-role", "leader-election-role", "manager-role"] {
            assert!(
                !roles.contains(&format!("azureserviceoperator-{role}")),
                "{what}: {roles:?}"
            );
        }
        // The controller keeps what it needs to apply CRDs and lead.
        let (roles, _) = grants(&objects, &controller, NAMESPACE);
        for role in ["crd-manager-role", "leader-election-role", "manager-role"] {
            assert!(
                roles.contains(&format!("azureserviceoperator-{role}")),
                "{what}: {roles:?}"
            );
        }
    }
}

#[test]
fn a_crd_manager_binding_of_the_webhook_pods_is_reported() {
    let (_, mut objects) = split_renders().remove(0);
    let mut binding = find(
        &objects,
        "ClusterRoleBinding",
        "azureserviceoperator-crd-manager-rolebinding",
    )
    .clone();
    binding["metadata"]["name"] = json!("webhooks-crd-manager");
    binding["subjects"][0]["name"] = json!(WEBHOOKS);
    objects.push(binding);
    let (_, permissions) = grants(&objects, WEBHOOKS, NAMESPACE);
    let forbidden = forbidden_for_webhooks(&permissions);
    assert!(
        forbidden.contains(&"apiextensions.k8s.io customresourcedefinitions create".to_string()),
        "{forbidden:?}"
    );
}

fn container(objects: &[Value], deployment: &str) -> Value {
    find(objects, "Deployment", deployment)["spec"]["template"]["spec"]["containers"][0].clone()
}

fn env_value(container: &Value, name: &str) -> Option<Value> {
    container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .cloned()
}

fn args(container: &Value) -> Vec<String> {
    container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn each_role_runs_its_own_mode_and_flags() {
    for (what, objects) in split_renders() {
        let webhooks = container(&objects, WEBHOOKS);
        assert_eq!(
            env_value(&webhooks, "AZURE_OPERATOR_MODE"),
            Some(json!({"name": "AZURE_OPERATOR_MODE", "value": "webhooks"})),
            "{what}"
        );
        assert_eq!(
            env_value(&webhooks, "AZURE_TARGET_NAMESPACES"),
            None,
            "{what}"
        );
        let flags = args(&webhooks);
        assert!(
            flags.contains(&"--crd-management=none".into()),
            "{what}: {flags:?}"
        );
        assert!(
            !flags.iter().any(
                |f| f.starts_with("--enable-leader-election") || f.starts_with("--crd-pattern")
            ),
            "{what}: {flags:?}"
        );
        let controller = container(&objects, CONTROLLER);
        assert_eq!(
            env_value(&controller, "AZURE_OPERATOR_MODE"),
            Some(json!({"name": "AZURE_OPERATOR_MODE", "value": "watchers-and-webhooks"})),
            "{what}"
        );
        let flags = args(&controller);
        assert!(flags.contains(&"--enable-leader-election".into()), "{what}");
        assert!(
            !flags.iter().any(|f| f.starts_with("--crd-management")),
            "{what}"
        );
        // The controller never rolls; the webhooks never go below their count.
        let spec = |name: &str| find(&objects, "Deployment", name)["spec"].clone();
        assert_eq!(
            spec(CONTROLLER)["strategy"],
            json!({"type": "Recreate", "rollingUpdate": null}),
            "{what}"
        );
        assert_eq!(
            spec(WEBHOOKS)["strategy"]["type"],
            "RollingUpdate",
            "{what}"
        );
        assert_eq!(
            spec(WEBHOOKS)["strategy"]["rollingUpdate"]["maxUnavailable"],
            0,
            "{what}"
        );
    }
}

#[test]
fn the_split_keys_reach_their_objects() {
    let values = std::fs::read_to_string(root().join("tests/cases/own-split-tuned.yaml")).unwrap();
    let objects = render(&values);
    let spec = |name: &str| find(&objects, "Deployment", name)["spec"].clone();
    assert_eq!(spec(CONTROLLER)["replicas"], 0, "paused");
    assert_eq!(spec(WEBHOOKS)["replicas"], 3);
    assert_eq!(spec(WEBHOOKS)["minReadySeconds"], 10);
    assert_eq!(
        spec(WEBHOOKS)["strategy"]["rollingUpdate"]["maxSurge"],
        "50%"
    );
    assert_eq!(
        spec(WEBHOOKS)["template"]["metadata"]["annotations"][REFRESH_ANNOTATION],
        "2026-12-04T15:00:00Z"
    );
    let pdb = find(
        &objects,
        "PodDisruptionBudget",
        "azureserviceoperator-webhooks-pdb",
    );
    assert_eq!(pdb["spec"]["maxUnavailable"], "34%");
    // Each role's own placement and resources where set, the top-level
    // ones where not.
    let pod = |name: &str| spec(name)["template"]["spec"].clone();
    assert_eq!(
        pod(WEBHOOKS)["priorityClassName"],
        "system-cluster-critical"
    );
    assert_eq!(pod(CONTROLLER)["priorityClassName"], "operators");
    assert_eq!(pod(WEBHOOKS)["nodeSelector"]["node-role"], "webhooks");
    assert_eq!(
        pod(CONTROLLER)["nodeSelector"],
        json!({"kubernetes.io/os": "linux"})
    );
    assert_eq!(pod(WEBHOOKS)["tolerations"][0]["value"], "webhooks");
    assert!(pod(CONTROLLER).get("tolerations").is_none());
    assert!(pod(WEBHOOKS)["affinity"].get("nodeAffinity").is_some());
    assert!(pod(CONTROLLER)["affinity"].get("podAntiAffinity").is_some());
    assert_eq!(
        pod(WEBHOOKS)["topologySpreadConstraints"][0]["topologyKey"],
        "topology.kubernetes.io/zone"
    );
    assert_eq!(
        pod(CONTROLLER)["topologySpreadConstraints"][0]["topologyKey"],
        "kubernetes.io/hostname"
    );
    assert_eq!(
        container(&objects, WEBHOOKS)["resources"],
        json!({"requests": {"cpu": "50m", "memory": "64Mi"}})
    );
    assert_eq!(
        container(&objects, CONTROLLER)["resources"],
        json!({"limits": {"cpu": "1", "memory": "1Gi"}})
    );

    let defaults = render("topology: split\n");
    let spec = |name: &str| find(&defaults, "Deployment", name)["spec"].clone();
    assert_eq!(spec(CONTROLLER)["replicas"], 2);
    assert_eq!(spec(WEBHOOKS)["replicas"], 2);
    assert!(
        spec(WEBHOOKS)["template"]["metadata"]["annotations"]
            .get(REFRESH_ANNOTATION)
            .is_none()
    );
    // Without overrides both roles take the top-level resources, and each
    // role's pods spread by hostname over its own pods (I4).
    assert_eq!(
        container(&defaults, WEBHOOKS)["resources"],
        container(&defaults, CONTROLLER)["resources"]
    );
    for (name, label) in [(WEBHOOKS, "webhooks"), (CONTROLLER, "controller-manager")] {
        let spread = &spec(name)["template"]["spec"]["topologySpreadConstraints"][0];
        assert_eq!(spread["topologyKey"], "kubernetes.io/hostname", "{name}");
        assert_eq!(
            spread["labelSelector"]["matchLabels"]["control-plane"], label,
            "{name}"
        );
    }
    // The single topology's controller keeps upstream's pod spec: no spread.
    let single = render("topology: single\n");
    assert!(
        find(&single, "Deployment", CONTROLLER)["spec"]["template"]["spec"]
            .get("topologySpreadConstraints")
            .is_none()
    );
    // Secure metrics off: no review rules for the webhook pods.
    let plain = render("topology: split\nmetrics:\n  secure: false\n");
    assert!(
        !plain
            .iter()
            .any(|o| o["metadata"]["name"] == "azureserviceoperator-metrics-auth")
    );
    assert!(
        defaults
            .iter()
            .any(|o| o["metadata"]["name"] == "azureserviceoperator-metrics-auth")
    );
}

#[test]
fn the_single_topology_renders_as_if_the_split_did_not_exist() {
    let plain = render("");
    assert_eq!(render("topology: single\n"), plain);
    // The split's keys are read only with topology split.
    assert_eq!(
        render(
            "topology: single\nsplit:\n  webhooks:\n    replicaCount: 5\n    refreshToken: x\n  controller:\n    paused: true\n"
        ),
        plain
    );
    assert_eq!(pod_labels(&plain).keys().collect::<Vec<_>>(), [CONTROLLER]);
    let service = find(&plain, "Service", WEBHOOK_SERVICE);
    assert_eq!(
        service["spec"]["selector"],
        json!({"control-plane": "controller-manager"})
    );
}

/// The objects of `objects` by kind and name.
fn by_name(objects: Vec<Value>) -> BTreeMap<(String, String), Value> {
    objects
        .into_iter()
        .map(|o| {
            let key = (
                o["kind"].as_str().unwrap().to_string(),
                o["metadata"]["name"].as_str().unwrap().to_string(),
            );
            (key, o)
        })
        .collect()
}

/// Whether a Service's `selector` selects the pods of `deployment`.
fn selects_pods(selector: &Value, deployment: &Value) -> bool {
    selects(
        selector,
        &deployment["spec"]["template"]["metadata"]["labels"],
    )
}

/// The bridge of a Helm migration: every object is single's or split's,
/// byte for byte (so neither Deployment rolls on the way in or out), it
/// has every object of both, and its webhook Service alone differs,
/// selecting the pods of both roles, whatever `podLabels` says.
#[test]
fn the_bridge_is_single_controller_beside_split_webhooks() {
    let tuned = std::fs::read_to_string(root().join("tests/cases/own-split-tuned.yaml")).unwrap();
    // the tuned case pauses its controller, which only split reads
    let tuned = tuned.replace("topology: split\n", "");
    for (what, values) in [
        ("defaults", String::new()),
        ("the tuned split case", tuned),
        (
            "podLabels replacing the shared label",
            "podLabels:\n  app.kubernetes.io/name: ours\n  team: platform\n".to_string(),
        ),
    ] {
        let render_as =
            |topology: &str| by_name(render(&format!("topology: {topology}\n{values}")));
        let (single, split, bridge) =
            (render_as("single"), render_as("split"), render_as("bridge"));
        let service = (String::from("Service"), WEBHOOK_SERVICE.to_string());
        for (key, object) in &bridge {
            if *key == service {
                continue;
            }
            assert!(
                single.get(key) == Some(object) || split.get(key) == Some(object),
                "{what}: {key:?} is neither single's nor split's"
            );
        }
        for key in single.keys().chain(split.keys()) {
            assert!(bridge.contains_key(key), "{what}: the bridge lacks {key:?}");
        }
        let key = |name: &str| (String::from("Deployment"), name.to_string());
        assert_eq!(bridge[&key(CONTROLLER)], single[&key(CONTROLLER)], "{what}");
        assert_eq!(bridge[&key(WEBHOOKS)], split[&key(WEBHOOKS)], "{what}");
        let selector = &bridge[&service]["spec"]["selector"];
        for name in [CONTROLLER, WEBHOOKS] {
            assert!(
                selects_pods(selector, &bridge[&key(name)]),
                "{what}: the bridge's Service {selector} misses the pods of {name}"
            );
        }
        // single's and split's Services each select one role only
        assert!(!selects_pods(
            &single[&service]["spec"]["selector"],
            &split[&key(WEBHOOKS)]
        ));
        assert!(!selects_pods(
            &split[&service]["spec"]["selector"],
            &single[&key(CONTROLLER)]
        ));
    }
}

/// What of the Azure identity a Deployment's pods get: the settings
/// Secret's keys in their environment, the workload identity token volume
/// and the aad-pod-identity binding label.
fn azure_identity(objects: &[Value], deployment: &str) -> Vec<String> {
    let pod = &find(objects, "Deployment", deployment)["spec"]["template"];
    let mut held: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["env"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["valueFrom"]["secretKeyRef"]["name"] == "aso-controller-settings")
        .map(|e| format!("env {}", e["name"].as_str().unwrap()))
        .collect();
    let volumes = pod["spec"]["volumes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    held.extend(
        volumes
            .iter()
            .filter(|v| v["name"] == "azure-identity")
            .map(|_| "volume azure-identity".to_string()),
    );
    if pod["metadata"]["labels"].get("aadpodidbinding").is_some() {
        held.push("label aadpodidbinding".into());
    }
    held
}

#[test]
fn webhook_pods_hold_no_azure_identity() {
    let mut renders = split_renders();
    renders.push((
        "every identity on".into(),
        render(
            "topology: split\nazureSubscriptionID: s\nazureTenantID: t\nazureClientID: c\n\
             azureClientSecret: x\nuseWorkloadIdentityAuth: true\n\
             aadPodIdentity:\n  enable: true\n  azureManagedIdentityResourceId: /subscriptions/s/id\n",
        ),
    ));
    for (what, objects) in &renders {
        assert_eq!(
            azure_identity(objects, WEBHOOKS),
            Vec::<String>::new(),
            "{what}"
        );
        // The controller keeps them: the check sees what it looks for.
        let controller = azure_identity(objects, CONTROLLER);
        assert!(
            controller.contains(&"env AZURE_CLIENT_SECRET".to_string())
                && controller.contains(&"volume azure-identity".to_string()),
            "{what}: {controller:?}"
        );
    }
    let (_, everything) = renders.last().unwrap();
    assert!(azure_identity(everything, CONTROLLER).contains(&"label aadpodidbinding".to_string()));
}

/// `asogen validate` of a values text and flags: its exit code and report
/// (printed on stdout).
fn validate(values: &str, flags: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("values.yaml");
    std::fs::write(&file, values).unwrap();
    let mut args = vec!["validate", "-f", file.to_str().unwrap()];
    args.extend(flags);
    let out = asogen(&args);
    (out.status.code(), text(&out.stdout))
}

#[test]
fn single_topology_keys_the_split_does_not_read_are_warned_of_where_they_are_set() {
    let (code, report) = validate(
        "topology: split\nreplicaCount: 3\nstrategy:\n  type: Recreate\n",
        &["--set", "featureGates.singleReplicaRollingUpdate=true"],
    );
    assert_eq!(code, Some(0), "accepted, as Helm accepts it: {report}");
    for (key, at) in [
        ("replicaCount", "values.yaml:2:1"),
        ("strategy", "values.yaml:3:1"),
        ("featureGates.singleReplicaRollingUpdate", "--set"),
    ] {
        let warning = format!("warning[topology]: {key} has no effect with topology: split");
        let start = report
            .find(&warning)
            .unwrap_or_else(|| panic!("no warning for {key}:\n{report}"));
        let location = report[start..].lines().nth(1).unwrap();
        assert!(location.contains(at), "{key} at {location}, not {at}");
    }
    // The split's own keys, the defaults and the single topology warn of nothing.
    for (values, flags) in [
        (
            "topology: split\nsplit:\n  controller:\n    replicaCount: 3\n",
            &[][..],
        ),
        // (A null would delete replicaCount, which the chart needs in
        // every topology: refused, tests/without_cluster/null_meaning.rs.)
        ("topology: split\n", &[][..]),
        ("replicaCount: 1\nstrategy:\n  type: Recreate\n", &[][..]),
    ] {
        let (code, report) = validate(values, flags);
        assert_eq!(code, Some(0), "{report}");
        assert!(!report.contains("warning"), "{values}: {report}");
    }
}

/// Which role a pod setting reaches (topology split and the bridge): the
/// user's environment variables (Azure credentials among them) and the
/// labels that give a pod an Azure identity reach the controller pods
/// only; the webhook pods hold no credential and get every other label.
#[test]
fn credentials_and_identities_reach_the_controller_pods_only() {
    let identity = asogen::metadata::IDENTITY_LABELS;
    assert!(identity.contains(&"aadpodidbinding"));
    for topology in ["split", "bridge"] {
        let mut labels = serde_json::Map::new();
        for label in identity {
            labels.insert(label.to_string(), json!("x"));
        }
        labels.insert("team".into(), json!("platform"));
        let values = json!({
            "topology": topology,
            "extraEnv": [
                {"name": "AZURE_CLIENT_SECRET", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "secret"}}},
                {"name": "HTTPS_PROXY", "value": "http://proxy.example:3128"},
            ],
            "podLabels": labels,
        });
        let objects = render(&values.to_string());
        for (deployment, holds) in [(CONTROLLER, true), (WEBHOOKS, false)] {
            let container = container(&objects, deployment);
            for name in ["AZURE_CLIENT_SECRET", "HTTPS_PROXY"] {
                assert_eq!(
                    env_value(&container, name).is_some(),
                    holds,
                    "{topology}: {deployment} and {name}"
                );
            }
            let pod_labels =
                &find(&objects, "Deployment", deployment)["spec"]["template"]["metadata"]["labels"];
            for label in identity {
                assert_eq!(
                    pod_labels.get(*label).is_some(),
                    holds,
                    "{topology}: {deployment} and the label {label}"
                );
            }
            assert_eq!(pod_labels["team"], "platform", "{topology}: {deployment}");
        }
    }
}
