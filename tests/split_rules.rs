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
        policies, 7,
        "controller, webhooks and webhooks scale guards, and the four order guards"
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

    // Flags the manager reads but the literal args do not show: a command
    // that runs it with its own flags, an argument Kubernetes expands from
    // the environment, flags after `--` (Go's flag package stops there).
    let container = |field: &str| format!("/spec/template/spec/containers/{manager}/{field}");
    for (body, rule, step) in [
        (
            format!(
                r#"[{{"op":"add","path":"{}","value":["/manager","--enable-leader-election"]}}]"#,
                container("command")
            ),
            // Both rules of the container break; the server names the first.
            "split-webhooks-never-apply-crds",
            "webhooks with a command that turns leader election on",
        ),
        (
            format!(
                r#"[{{"op":"add","path":"{}","value":{{"name":"EXTRA","value":"--crd-management=auto"}}}},{{"op":"add","path":"{}","value":"$(EXTRA)"}}]"#,
                container("env/-"),
                arg_path(args.len())
            ),
            "split-webhooks-never-apply-crds",
            "webhooks with an argument $(EXTRA) the environment expands",
        ),
        (
            format!(
                r#"[{{"op":"replace","path":"{}","value":"--"}},{{"op":"add","path":"{}","value":"--crd-management=none"}}]"#,
                arg_path(crd_none),
                arg_path(args.len())
            ),
            "split-webhooks-never-apply-crds",
            "webhooks with --crd-management=none after --",
        ),
    ] {
        refused(patch(WEBHOOKS, "json", &body), rule, step);
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

/// What `asogen template --set topology=TOPOLOGY` renders into `namespace`
/// that belongs to this install alone: its namespaced objects and its
/// guard (whose names carry the namespace), as a stream and by kind/name.
fn helm_release(namespace: &str, topology: &str) -> (String, Vec<(String, String)>) {
    let set = format!("topology={topology}");
    let out = asogen(&["template", "--set", &set]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let objects: Vec<Value> = serde_yaml::Deserializer::from_str(
        &text(&out.stdout).replace(RELEASE_NAMESPACE, namespace),
    )
    .map(|document| Value::deserialize(document).unwrap())
    .filter(|o| {
        o["metadata"]["namespace"] == namespace
            || o["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("ValidatingAdmissionPolicy"))
    })
    .collect();
    let stream = objects
        .iter()
        .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
        .collect();
    let names = objects
        .iter()
        .map(|o| {
            let field = |v: &Value| v.as_str().unwrap().to_string();
            (field(&o["kind"]), field(&o["metadata"]["name"]))
        })
        .collect();
    (stream, names)
}

/// The Helm migration through `topology: bridge` on the real API server,
/// written as Helm 3 writes a release (created with its manifest saved,
/// then the three-way patch as manager `helm`, in the render's order,
/// which puts the Deployments before the policies, as Helm does; then what
/// left the release deleted): single, bridge, split, bridge, single. Each
/// step passes the guards the step before enforces (checked enforced
/// before it), and the bridge is guarded by both topologies' rules: the
/// single rules on its controller, the split webhooks' on its webhooks
/// Deployment, and the ordering guard on a new controller image (the
/// version upgrade the bridge must refuse).
#[test]
fn the_guards_let_the_helm_migration_through_and_guard_the_bridge() {
    let server = server();
    install_crds(server);
    let ns = &server.fresh_namespace("bridge-rules");
    let dry_patch = |name: &str, kind: &str, body: &str| {
        let kind = format!("--type={kind}");
        server.attempt(&[
            "patch",
            "deployment",
            name,
            "-n",
            ns,
            &kind,
            "-p",
            body,
            "--dry-run=server",
        ])
    };
    let rolling = r#"{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}"#;
    // Waits until `attempt` is refused with `rule` (a new policy takes a
    // moment to be enforced).
    let enforced = |what: &str, rule: &str, attempt: &dyn Fn() -> Result<String, String>| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match attempt() {
                Err(stderr) if stderr.contains(&format!("{rule}:")) => return,
                other => assert!(
                    std::time::Instant::now() < deadline,
                    "{what}: never refused with {rule}: {other:?}\n{}",
                    server.log_tail()
                ),
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    };
    let guarded = |topology: &str| match topology {
        "single" => enforced("single", "ha-requires-recreate", &|| {
            dry_patch(CONTROLLER, "merge", rolling)
        }),
        "split" => enforced("split", "split-controller-never-rolls", &|| {
            dry_patch(CONTROLLER, "merge", rolling)
        }),
        _ => {
            enforced("the bridge's controller", "ha-requires-recreate", &|| {
                dry_patch(CONTROLLER, "merge", rolling)
            });
            enforced(
                "the bridge's webhooks",
                "split-webhooks-never-unavailable",
                &|| dry_patch(WEBHOOKS, "merge", r#"{"spec":{"replicas":0}}"#),
            );
            let (manager, _) = manager_args(server, ns, CONTROLLER);
            let image = format!(
                r#"[{{"op":"replace","path":"/spec/template/spec/containers/{manager}/image","value":"example.com/aso:v9.9.9"}}]"#
            );
            enforced(
                "a new controller image in the bridge",
                "split-controller-after-webhooks",
                &|| dry_patch(CONTROLLER, "json", &image),
            );
        }
    };

    let (stream, mut live) = helm_release(ns, "single");
    server.kubectl_ok(
        &[
            "create",
            "--save-config",
            "--field-manager=helm",
            "-n",
            ns,
            "-f",
            "-",
        ],
        &stream,
    );
    guarded("single");
    for topology in ["bridge", "split", "bridge", "single"] {
        let (stream, names) = helm_release(ns, topology);
        let applied = server.kubectl(
            &["apply", "--field-manager=helm", "-n", ns, "-f", "-"],
            &stream,
        );
        assert!(
            applied.status.success(),
            "helm upgrade to {topology} refused:\n{}",
            text(&applied.stderr)
        );
        for (kind, name) in live.iter().filter(|o| !names.contains(o)) {
            let target = format!("{}/{name}", kind.to_lowercase());
            // the guard's policies and bindings are cluster-scoped
            if kind.starts_with("ValidatingAdmissionPolicy") {
                server.kubectl_ok(&["delete", &target], "");
            } else {
                server.kubectl_ok(&["delete", &target, "-n", ns], "");
            }
        }
        live = names;
        guarded(topology);
    }
}
