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
