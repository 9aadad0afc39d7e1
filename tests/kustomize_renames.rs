//! The in-cluster guards keep guarding under every rename an overlay can
//! make of the generated kustomize base and components: `namePrefix`,
//! `nameSuffix`, `namespace:` alone and together, over the base alone and
//! with each component. Built by the real kustomize; every policy must
//! name Deployments the build holds, every binding a policy, a parameter
//! and a namespace the build holds. On kube-apiserver 1.37, the split
//! component renamed by a prefix or a suffix alone (the guards once kept
//! the old names there) refuses the webhooks Deployment's forbidden shapes.

mod common;

use std::collections::BTreeSet;

use common::apiserver::server;
use common::{component_overlays, kustomize};
use serde::Deserialize;
use serde_json::Value;

const RULE_UNAVAILABLE: &str = "split-webhooks-never-unavailable";

/// The transformations an overlay applies, by name.
fn renames() -> Vec<(&'static str, &'static str)> {
    vec![
        ("prefix", "namePrefix: p-\n"),
        ("suffix", "nameSuffix: -s\n"),
        ("prefix and suffix", "namePrefix: p-\nnameSuffix: -s\n"),
        ("namespace", "namespace: moved\n"),
        ("prefix and namespace", "namePrefix: p-\nnamespace: moved\n"),
        ("suffix and namespace", "nameSuffix: -s\nnamespace: moved\n"),
        (
            "all three",
            "namePrefix: p-\nnameSuffix: -s\nnamespace: moved\n",
        ),
    ]
}

fn documents(stream: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(stream)
        .map(|document| Value::deserialize(document).expect("YAML parses"))
        .filter(|value| !value.is_null())
        .collect()
}

fn names_of<'v>(objects: &'v [Value], kind: &str) -> BTreeSet<(&'v str, &'v str)> {
    objects
        .iter()
        .filter(|o| o["kind"] == kind)
        .map(|o| {
            (
                o["metadata"]["namespace"].as_str().unwrap_or(""),
                o["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect()
}

/// What in a build guards nothing: a policy naming a Deployment the build
/// lacks, a binding naming a policy, parameter or namespace it lacks.
fn dangling(objects: &[Value]) -> Vec<String> {
    let deployments = names_of(objects, "Deployment");
    let namespaces: BTreeSet<&str> = deployments.iter().map(|(ns, _)| *ns).collect();
    let deployment_names: BTreeSet<&str> = deployments.iter().map(|(_, name)| *name).collect();
    let policies: BTreeSet<&str> = names_of(objects, "ValidatingAdmissionPolicy")
        .into_iter()
        .map(|(_, name)| name)
        .collect();
    let mut out = Vec::new();
    for object in objects {
        let name = object["metadata"]["name"].as_str().unwrap_or("");
        let spec = &object["spec"];
        match object["kind"].as_str() {
            Some("ValidatingAdmissionPolicy") => {
                for rule in spec["matchConstraints"]["resourceRules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    for target in rule["resourceNames"].as_array().into_iter().flatten() {
                        let target = target.as_str().unwrap();
                        if !deployment_names.contains(target) {
                            out.push(format!(
                                "policy {name} guards Deployment {target}, which is not there"
                            ));
                        }
                    }
                }
            }
            Some("ValidatingAdmissionPolicyBinding") => {
                let policy = spec["policyName"].as_str().unwrap_or("");
                if !policies.contains(policy) {
                    out.push(format!(
                        "binding {name} binds policy {policy}, which is not there"
                    ));
                }
                if let Some(param) = spec["paramRef"]["name"].as_str() {
                    let param_ns = spec["paramRef"]["namespace"].as_str();
                    let found = deployments
                        .iter()
                        .any(|(ns, n)| *n == param && param_ns.is_none_or(|p| p == *ns));
                    if !found {
                        out.push(format!(
                            "binding {name} reads parameter {param}, which is not there"
                        ));
                    }
                }
                let selected = spec["matchResources"]["namespaceSelector"]["matchLabels"]
                    ["kubernetes.io/metadata.name"]
                    .as_str();
                if let Some(selected) = selected
                    && !namespaces.contains(selected)
                {
                    out.push(format!(
                        "binding {name} selects namespace {selected}, where no Deployment is"
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_guard_names_what_the_build_holds_under_every_rename() {
    let scratch = tempfile::tempdir().unwrap();
    let mut overlays = component_overlays(scratch.path());
    let base_only = scratch.path().join("overlay-base");
    std::fs::create_dir(&base_only).unwrap();
    std::fs::write(
        base_only.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../kustomize/base\n",
    )
    .unwrap();
    overlays.push(("base".into(), base_only));
    let mut problems = Vec::new();
    let mut checked = 0;
    for (component, overlay) in &overlays {
        let plain = std::fs::read_to_string(overlay.join("kustomization.yaml")).unwrap();
        for (rename, transform) in renames() {
            std::fs::write(
                overlay.join("kustomization.yaml"),
                format!("{plain}{transform}"),
            )
            .unwrap();
            let built = documents(&kustomize(overlay));
            let policies = names_of(&built, "ValidatingAdmissionPolicy").len();
            assert!(policies > 0, "{component}, {rename}: no policies");
            for problem in dangling(&built) {
                problems.push(format!("{component}, {rename}: {problem}"));
            }
            checked += 1;
        }
        std::fs::write(overlay.join("kustomization.yaml"), plain).unwrap();
    }
    assert_eq!(checked, overlays.len() * renames().len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The split component renamed by a prefix, or a suffix, alone: applied
/// to the API server, its webhooks guards refuse `maxUnavailable: 1` and
/// `replicas: 0` on the renamed webhooks Deployment.
#[test]
fn the_split_guards_hold_under_a_prefix_or_a_suffix_alone() {
    let server = server();
    let scratch = tempfile::tempdir().unwrap();
    let (_, overlay) = component_overlays(scratch.path())
        .into_iter()
        .find(|(component, _)| component == "split")
        .unwrap();
    let plain = std::fs::read_to_string(overlay.join("kustomization.yaml")).unwrap();
    for (rename, transform, webhooks) in [
        (
            "prefix",
            "namePrefix: rp-\n",
            "rp-azureserviceoperator-webhooks",
        ),
        (
            "suffix",
            "nameSuffix: -rs\n",
            "azureserviceoperator-webhooks-rs",
        ),
    ] {
        std::fs::write(
            overlay.join("kustomization.yaml"),
            format!("{plain}{transform}"),
        )
        .unwrap();
        let built = documents(&kustomize(&overlay));
        // The Namespace, the Deployments and the guards: nothing that
        // would serve or intercept other tests' requests.
        let kept: Vec<&Value> = built
            .iter()
            .filter(|o| {
                matches!(
                    o["kind"].as_str(),
                    Some(
                        "Namespace"
                            | "Deployment"
                            | "ValidatingAdmissionPolicy"
                            | "ValidatingAdmissionPolicyBinding"
                    )
                )
            })
            .collect();
        let namespace = kept
            .iter()
            .find(|o| o["metadata"]["name"] == webhooks)
            .and_then(|o| o["metadata"]["namespace"].as_str())
            .unwrap_or_else(|| panic!("{rename}: no Deployment {webhooks}"))
            .to_string();
        let stream: String = kept
            .iter()
            .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
            .collect();
        server.kubectl_ok(
            &[
                "apply",
                "--server-side",
                "--field-manager=renames-test",
                "-f",
                "-",
            ],
            &stream,
        );
        let patch = |body: &str, dry_run: bool| {
            let mut args = vec![
                "patch",
                "deployment",
                webhooks,
                "-n",
                &namespace,
                "--type=merge",
                "-p",
                body,
            ];
            if dry_run {
                args.push("--dry-run=server");
            }
            server.attempt(&args)
        };
        let unavailable = r#"{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":1}}}}"#;
        // A new policy takes a moment to be enforced.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while patch(unavailable, true).is_ok() {
            assert!(
                std::time::Instant::now() < deadline,
                "{rename}: {webhooks} took maxUnavailable: 1 for a minute: its guard guards nothing"
            );
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        let refused = patch(unavailable, false).expect_err("maxUnavailable: 1 is refused");
        assert!(refused.contains(RULE_UNAVAILABLE), "{rename}: {refused}");
        let refused =
            patch(r#"{"spec":{"replicas":0}}"#, false).expect_err("replicas: 0 is refused");
        assert!(refused.contains(RULE_UNAVAILABLE), "{rename}: {refused}");
    }
}

/// Layers under the overlay that uses a component, as a user stacks
/// them: (what, the layers from the base up, each a transformation of the
/// one below; the overlay's own transformation).
fn layerings() -> Vec<(&'static str, Vec<&'static str>, &'static str)> {
    vec![
        (
            "a layer sets the namespace",
            vec!["namespace: team-aso\n"],
            "",
        ),
        (
            "a layer sets the namespace and a prefix",
            vec!["namespace: team-aso\nnamePrefix: t-\n"],
            "",
        ),
        (
            "two layers set namespaces",
            vec!["namespace: inner\n", "namespace: team-aso\n"],
            "",
        ),
        (
            "a layer and the overlay set namespaces",
            vec!["namespace: inner\n"],
            "namespace: team-aso\n",
        ),
        ("a layer sets a suffix", vec!["nameSuffix: -t\n"], ""),
    ]
}

/// What in a build is split across namespaces: namespaced objects in more
/// than one, a Service without a pod of its selector's Deployment beside
/// it, a ServiceAccount a pod or a binding names that is not beside it.
fn scattered(objects: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    // the guard's objects are cluster-scoped (kustomize gives them one)
    let namespaced: BTreeSet<&str> = objects
        .iter()
        .filter(|o| {
            !o["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("ValidatingAdmissionPolicy"))
        })
        .filter_map(|o| o["metadata"]["namespace"].as_str())
        .collect();
    if namespaced.len() != 1 {
        out.push(format!("namespaced objects in {namespaced:?}"));
    }
    let accounts = names_of(objects, "ServiceAccount");
    for object in objects {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or("");
        let name = object["metadata"]["name"].as_str().unwrap_or("");
        match object["kind"].as_str() {
            Some("Service") => {
                let selector = object["spec"]["selector"].as_object();
                let served = objects.iter().any(|d| {
                    d["kind"] == "Deployment"
                        && d["metadata"]["namespace"] == namespace
                        && selector.is_some_and(|s| {
                            s.iter()
                                .all(|(k, v)| &d["spec"]["template"]["metadata"]["labels"][k] == v)
                        })
                });
                if !served {
                    out.push(format!(
                        "Service {namespace}/{name} selects no pod beside it"
                    ));
                }
            }
            Some("Deployment") => {
                let account = object["spec"]["template"]["spec"]["serviceAccountName"]
                    .as_str()
                    .unwrap_or("default");
                if !accounts.contains(&(namespace, account)) {
                    out.push(format!(
                        "Deployment {namespace}/{name} runs as {account}, not beside it"
                    ));
                }
            }
            Some("RoleBinding" | "ClusterRoleBinding") => {
                let role = (
                    object["roleRef"]["kind"].as_str().unwrap_or(""),
                    object["roleRef"]["name"].as_str().unwrap_or(""),
                );
                let role_namespace = if role.0 == "Role" { namespace } else { "" };
                if !names_of(objects, role.0).contains(&(role_namespace, role.1)) {
                    out.push(format!("{name} grants {role:?}, which is not there"));
                }
                for subject in object["subjects"].as_array().into_iter().flatten() {
                    if subject["kind"] == "ServiceAccount" {
                        let at = (
                            subject["namespace"].as_str().unwrap_or(""),
                            subject["name"].as_str().unwrap_or(""),
                        );
                        if !accounts.contains(&at) {
                            out.push(format!("{name} binds {at:?}, which is not there"));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A component follows the namespace its base ends up in, under any
/// layering kustomize allows: every namespaced object of the build in one
/// namespace, every Service beside the pods it selects, every binding's
/// namespace and references in the build (finding 1 of the fourth attack
/// round: a layer below the overlay set the namespace, and the split
/// component's objects stayed in the base's). Built by the real
/// kustomize.
#[test]
fn every_component_follows_the_namespace_of_the_layers_below_it() {
    let scratch = tempfile::tempdir().unwrap();
    let overlays = component_overlays(scratch.path());
    let mut problems = Vec::new();
    let mut checked = 0;
    for (component, _) in &overlays {
        for (layering, layers, own) in layerings() {
            let stack = scratch.path().join(format!("{component}-{checked}"));
            let mut below = "kustomize/base".to_string();
            for (at, transform) in layers.iter().enumerate() {
                let layer = stack.join(format!("layer-{at}"));
                std::fs::create_dir_all(&layer).unwrap();
                std::fs::write(
                    layer.join("kustomization.yaml"),
                    format!("resources:\n- ../../{below}\n{transform}"),
                )
                .unwrap();
                below = format!("{}-{checked}/layer-{at}", component);
            }
            let top = stack.join("overlay");
            std::fs::create_dir_all(&top).unwrap();
            std::fs::write(
                top.join("kustomization.yaml"),
                format!(
                    "resources:\n- ../../{below}\ncomponents:\n- ../../kustomize/components/{component}\n{own}"
                ),
            )
            .unwrap();
            let built = documents(&kustomize(&top));
            for problem in dangling(&built).into_iter().chain(scattered(&built)) {
                problems.push(format!("{component}, {layering}: {problem}"));
            }
            checked += 1;
        }
    }
    assert_eq!(checked, overlays.len() * layerings().len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
