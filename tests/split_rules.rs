//! Topology split's rules in the cluster, on a real kube-apiserver
//! (tests/kube-apiserver): the split profile as `asogen template` renders
//! it is accepted by its own guard, and every edit of the webhooks or the
//! controller Deployment that breaks a split rule is refused with that
//! rule's id, by `kubectl patch` (what `kubectl edit` and `kubectl apply`
//! send) and by `kubectl scale`; compliant edits pass, and the single
//! topology's rules do not apply (the controller at 0 replicas is paused).
//! The values side of the same rules is tested through tests/cases (asogen
//! validate, the schema in Helm and the editor, the chart guard in Helm).

mod common;

use common::apiserver::{ApiServer, install_crds, server};
use common::{asogen, root, text};
use serde::Deserialize;
use serde_json::Value;

/// The namespace `asogen template` renders for; the test moves it.
const RELEASE_NAMESPACE: &str = "azureserviceoperator-system";
const WEBHOOKS: &str = "azureserviceoperator-webhooks";
const CONTROLLER: &str = "azureserviceoperator-controller-manager";

/// The split profile, rendered by asogen, applied server-side into a
/// namespace of its own (every object accepted, the Deployments by their
/// own guards).
fn install_split(server: &ApiServer) -> String {
    let namespace = server.fresh_namespace("split-rules");
    let profile = root().join("values/profiles/split.yaml");
    let out = asogen(&["template", "-f", profile.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stream = text(&out.stdout).replace(RELEASE_NAMESPACE, &namespace);
    let policies = serde_yaml::Deserializer::from_str(&stream)
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|object| object["kind"] == "ValidatingAdmissionPolicy")
        .count();
    assert_eq!(
        policies, 5,
        "controller, webhooks and webhooks scale guards, and the order guards"
    );
    let applied = server.kubectl(
        &[
            "apply",
            "--server-side",
            "--field-manager=split-rules-test",
            "-f",
            "-",
        ],
        &stream,
    );
    assert!(
        applied.status.success(),
        "the API server refused the split install:\n{}",
        text(&applied.stderr)
    );
    namespace
}

/// The args of the manager container of `deployment` and its index.
fn manager_args(server: &ApiServer, namespace: &str, deployment: &str) -> (usize, Vec<String>) {
    let live: Value = serde_json::from_str(&server.kubectl_ok(
        &[
            "get",
            "deployment",
            deployment,
            "-n",
            namespace,
            "-o",
            "json",
        ],
        "",
    ))
    .unwrap();
    let containers = live["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    let index = containers
        .iter()
        .position(|c| c["name"] == "manager")
        .expect("a manager container");
    let args = serde_json::from_value(containers[index]["args"].clone()).unwrap();
    (index, args)
}

#[test]
fn the_cluster_refuses_what_the_split_rules_forbid() {
    let server = server();
    install_crds(server);
    let ns = &install_split(server);
    let scale = |name: &str, replicas: &str, dry_run: bool| {
        let replicas = format!("--replicas={replicas}");
        let mut args = vec!["scale", "deployment", name, "-n", ns, &replicas];
        if dry_run {
            args.push("--dry-run=server");
        }
        server.attempt(&args)
    };
    let patch = |name: &str, kind: &str, body: &str| {
        let kind = format!("--type={kind}");
        server.attempt(&["patch", "deployment", name, "-n", ns, &kind, "-p", body])
    };
    // A new policy takes a moment to be enforced: wait for it with a
    // server-side dry run, which admission sees but nothing stores.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while scale(WEBHOOKS, "0", true).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the webhooks scale guard was never enforced:\n{}",
            server.log_tail()
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let refused = |result: Result<String, String>, rule: &str, step: &str| {
        let stderr = result.expect_err(step);
        assert!(
            stderr.contains("ValidatingAdmissionPolicy") && stderr.contains(&format!("{rule}:")),
            "{step}: {stderr}"
        );
    };
    let unavailable = "split-webhooks-never-unavailable";

    // The webhooks Deployment never drops below one ready pod.
    refused(
        scale(WEBHOOKS, "0", false),
        unavailable,
        "scale the webhooks to 0",
    );
    refused(
        patch(WEBHOOKS, "merge", r#"{"spec":{"replicas":0}}"#),
        unavailable,
        "webhooks at 0 replicas",
    );
    refused(
        patch(
            WEBHOOKS,
            "merge",
            r#"{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}"#,
        ),
        unavailable,
        "webhooks with Recreate",
    );
    refused(
        patch(
            WEBHOOKS,
            "merge",
            r#"{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":1}}}}"#,
        ),
        unavailable,
        "webhooks with maxUnavailable 1",
    );
    // 0% is 0 too; 10% of 2 rounds down to 0 pods, but is refused all
    // the same: only 0 says "never".
    patch(
        WEBHOOKS,
        "merge",
        r#"{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":"0%","maxSurge":2}}}}"#,
    )
    .unwrap_or_else(|err| panic!("webhooks with maxUnavailable 0%: {err}"));
    refused(
        patch(
            WEBHOOKS,
            "merge",
            r#"{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":"10%"}}}}"#,
        ),
        unavailable,
        "webhooks with maxUnavailable 10%",
    );

    // The webhook pods never apply CRDs and never take the lease.
    let (manager, args) = manager_args(server, ns, WEBHOOKS);
    let crd_none = args
        .iter()
        .position(|arg| arg == "--crd-management=none")
        .expect("the webhooks run with --crd-management=none");
    assert!(
        !args.iter().any(|arg| arg.contains("leader-elect")),
        "{args:?}"
    );
    let arg_path = |index: usize| format!("/spec/template/spec/containers/{manager}/args/{index}");
    refused(
        patch(
            WEBHOOKS,
            "json",
            &format!(
                r#"[{{"op":"replace","path":"{}","value":"--crd-management=auto"}}]"#,
                arg_path(crd_none)
            ),
        ),
        "split-webhooks-never-apply-crds",
        "webhooks with --crd-management=auto",
    );
    refused(
        patch(
            WEBHOOKS,
            "json",
            &format!(r#"[{{"op":"remove","path":"{}"}}]"#, arg_path(crd_none)),
        ),
        "split-webhooks-never-apply-crds",
        "webhooks without --crd-management",
    );
    refused(
        patch(
            WEBHOOKS,
            "json",
            &format!(
                r#"[{{"op":"add","path":"{}","value":"--crd-management=auto"}}]"#,
                arg_path(args.len())
            ),
        ),
        "split-webhooks-never-apply-crds",
        "webhooks with a later --crd-management=auto",
    );
    for flag in ["--enable-leader-election", "-enable-leader-election=true"] {
        refused(
            patch(
                WEBHOOKS,
                "json",
                &format!(
                    r#"[{{"op":"add","path":"{}","value":"{flag}"}}]"#,
                    arg_path(args.len())
                ),
            ),
            "split-webhooks-no-leader-election",
            &format!("webhooks with {flag}"),
        );
    }

    // What the rules allow passes: more webhook pods, a larger surge, a
    // leader-election flag that is off.
    scale(WEBHOOKS, "3", false).unwrap_or_else(|err| panic!("scale the webhooks to 3: {err}"));
    patch(
        WEBHOOKS,
        "merge",
        r#"{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"50%","maxUnavailable":0}}}}"#,
    )
    .unwrap_or_else(|err| panic!("webhooks with maxSurge 50%: {err}"));
    patch(
        WEBHOOKS,
        "json",
        &format!(
            r#"[{{"op":"add","path":"{}","value":"--enable-leader-election=false"}}]"#,
            arg_path(args.len())
        ),
    )
    .unwrap_or_else(|err| panic!("webhooks with leader election off: {err}"));

    // The controller never rolls; at 0 replicas it is paused, which the
    // single topology's replica-count-positive would refuse.
    refused(
        patch(
            CONTROLLER,
            "merge",
            r#"{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}"#,
        ),
        "split-controller-never-rolls",
        "the controller with RollingUpdate",
    );
    // (Scaled up first: a start from 0 waits for the webhooks' rollout,
    // tests/order_guard.rs.)
    patch(CONTROLLER, "merge", r#"{"spec":{"replicas":3}}"#)
        .unwrap_or_else(|err| panic!("the controller at 3 replicas with Recreate: {err}"));
    scale(CONTROLLER, "0", false).unwrap_or_else(|err| panic!("pause the controller: {err}"));
}
