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
        policies, 9,
        "controller, webhooks and webhooks scale guards, the four order guards and the two CRDs' guards"
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

/// A container that runs ASO's manager, as the guards must find it: how it
/// sits in the pod template (the class of finding 2 of the fourth attack
/// round: a manager the guards look for by the name `manager` alone).
#[derive(Debug, Clone, Copy)]
enum Placement {
    /// The manager container itself, renamed.
    Renamed,
    /// A second container of the manager's image.
    Second,
    /// An init container of the manager's image, run before the pod starts.
    Init,
    /// A native sidecar: an init container that keeps running.
    NativeSidecar,
    /// A container of the manager's image repository at another tag.
    OtherTag,
    /// A container of the manager's image repository by digest.
    Digest,
}

const PLACEMENTS: [Placement; 6] = [
    Placement::Renamed,
    Placement::Second,
    Placement::Init,
    Placement::NativeSidecar,
    Placement::OtherTag,
    Placement::Digest,
];

/// The JSON patch that puts a container with `args` and `env` at
/// `placement` into the pod template whose manager container is at
/// `index` with `image`.
fn placed(placement: Placement, index: usize, image: &str, args: &Value, env: &Value) -> String {
    let repository = image.rsplit_once(':').map_or(image, |(repo, _)| repo);
    let container = |name: &str, image: String| serde_json::json!({"name": name, "image": image, "args": args, "env": env});
    let template = "/spec/template/spec";
    let ops = match placement {
        Placement::Renamed => serde_json::json!([
            {"op": "replace", "path": format!("{template}/containers/{index}/name"), "value": "aso"},
            {"op": "replace", "path": format!("{template}/containers/{index}/args"), "value": args},
            {"op": "replace", "path": format!("{template}/containers/{index}/env"), "value": env},
        ]),
        Placement::Second => serde_json::json!([
            {"op": "add", "path": format!("{template}/containers/-"), "value": container("manager-2", image.to_string())},
        ]),
        Placement::Init => serde_json::json!([
            {"op": "add", "path": format!("{template}/initContainers"), "value": [container("setup", image.to_string())]},
        ]),
        Placement::NativeSidecar => {
            let mut sidecar = container("aso-sidecar", image.to_string());
            sidecar["restartPolicy"] = "Always".into();
            serde_json::json!([
                {"op": "add", "path": format!("{template}/initContainers"), "value": [sidecar]},
            ])
        }
        Placement::OtherTag => serde_json::json!([
            {"op": "add", "path": format!("{template}/containers/-"), "value": container("manager-next", format!("{repository}:v2.21.0"))},
        ]),
        Placement::Digest => serde_json::json!([
            {"op": "add", "path": format!("{template}/containers/-"), "value": container("pinned", format!("{repository}@sha256:{}", "ab".repeat(32)))},
        ]),
    };
    ops.to_string()
}

/// Every container that runs ASO's manager is judged by the guards,
/// whatever its name and wherever it sits (containers, init containers,
/// native sidecars; the manager's image at its tag, another or a digest),
/// on the webhooks Deployment (CRD management, leader election, operator
/// mode) and on the controller (operator mode, and the ordering guard's
/// images); a container of another image is not the manager, and a
/// manager placed so with what the role runs passes. Every request is a
/// server-side dry run on a real kube-apiserver.
#[test]
fn the_guards_judge_every_container_that_runs_the_manager() {
    let server = server();
    install_crds(server);
    let ns = &install_split(server);
    let dry_patch = |name: &str, body: &str| {
        server.attempt(&[
            "patch",
            "deployment",
            name,
            "-n",
            ns,
            "--type=json",
            "-p",
            body,
            "--dry-run=server",
        ])
    };
    let live = |name: &str| -> (usize, Value) {
        let live: Value = serde_json::from_str(
            &server.kubectl_ok(&["get", "deployment", name, "-n", ns, "-o", "json"], ""),
        )
        .unwrap();
        let containers = live["spec"]["template"]["spec"]["containers"].clone();
        let index = containers
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["name"] == "manager")
            .expect("a manager container");
        (index, containers[index].clone())
    };
    // the policies are enforced once a dry run of a breach is refused
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while dry_patch(
        WEBHOOKS,
        r#"[{"op":"replace","path":"/spec/replicas","value":0}]"#,
    )
    .is_ok()
    {
        assert!(std::time::Instant::now() < deadline, "never enforced");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let mut judged = 0;
    let mut verdict = |what: String, result: Result<String, String>, rule: Option<&str>| {
        judged += 1;
        match rule {
            Some(rule) => {
                let stderr = result.expect_err(&format!("{what}: accepted"));
                assert!(
                    stderr.contains("ValidatingAdmissionPolicy")
                        && stderr.contains(&format!("{rule}:")),
                    "{what}: refused, but not for {rule}: {stderr}"
                );
            }
            None => {
                result.unwrap_or_else(|err| panic!("{what}: refused: {err}"));
            }
        }
    };

    // The webhooks Deployment: what its manager must run, in any container
    // that runs it.
    let (index, manager) = live(WEBHOOKS);
    let image = manager["image"].as_str().unwrap().to_string();
    let args = manager["args"].clone();
    let env = manager["env"].clone();
    let with_arg = |arg: &str| {
        let mut args = args.as_array().unwrap().clone();
        args.retain(|a| a != "--crd-management=none");
        args.push(arg.into());
        Value::from(args)
    };
    let mut leader = args.as_array().unwrap().clone();
    leader.push("--enable-leader-election".into());
    let mode = |entry: Value| {
        let mut env = env.as_array().unwrap().clone();
        env.retain(|e| e["name"] != "AZURE_OPERATOR_MODE");
        env.push(entry);
        Value::from(env)
    };
    let breaches = [
        (
            "--crd-management=auto",
            with_arg("--crd-management=auto"),
            env.clone(),
            "split-webhooks-never-apply-crds",
        ),
        (
            "no --crd-management",
            with_arg("--v=2"),
            env.clone(),
            "split-webhooks-never-apply-crds",
        ),
        (
            "--enable-leader-election",
            Value::from(leader),
            env.clone(),
            "split-webhooks-no-leader-election",
        ),
        (
            "mode watchers-and-webhooks",
            args.clone(),
            mode(
                serde_json::json!({"name": "AZURE_OPERATOR_MODE", "value": "watchers-and-webhooks"}),
            ),
            "split-webhooks-operator-mode",
        ),
        (
            "the mode from a ConfigMap",
            args.clone(),
            mode(
                serde_json::json!({"name": "AZURE_OPERATOR_MODE", "valueFrom": {"configMapKeyRef": {"name": "aso-mode", "key": "mode"}}}),
            ),
            "split-webhooks-operator-mode",
        ),
        (
            "no mode",
            args.clone(),
            mode(serde_json::json!({"name": "GOGC", "value": "100"})),
            "split-webhooks-operator-mode",
        ),
    ];
    for placement in PLACEMENTS {
        for (what, args, env, rule) in &breaches {
            verdict(
                format!("webhooks, {placement:?} with {what}"),
                dry_patch(WEBHOOKS, &placed(placement, index, &image, args, env)),
                Some(rule),
            );
        }
        // what the webhooks run, in a container placed so, passes
        verdict(
            format!("webhooks, {placement:?} as rendered"),
            dry_patch(WEBHOOKS, &placed(placement, index, &image, &args, &env)),
            None,
        );
    }
    // A whole environment from a ConfigMap cannot override the literal
    // entry (env takes precedence), so it passes beside it.
    let env_from = serde_json::json!([{"op": "add", "path": format!("/spec/template/spec/containers/{index}/envFrom"),
        "value": [{"configMapRef": {"name": "aso-mode"}}]}]);
    verdict(
        "webhooks with envFrom beside the literal mode".into(),
        dry_patch(WEBHOOKS, &env_from.to_string()),
        None,
    );
    // A container of another image is not ASO's manager, whatever it runs.
    let sidecar = serde_json::json!([{"op": "add", "path": "/spec/template/spec/containers/-", "value": {
        "name": "log-shipper", "image": "registry.test/log-shipper:1.0", "args": ["--enable-leader-election"],
    }}]);
    verdict(
        "webhooks with another image's sidecar".into(),
        dry_patch(WEBHOOKS, &sidecar.to_string()),
        None,
    );
    // An older release in any container is a downgrade below the controller.
    let repository = image.rsplit_once(':').unwrap().0;
    let older = serde_json::json!([{"op": "add", "path": "/spec/template/spec/initContainers", "value": [{
        "name": "aso-old", "image": format!("{repository}:v2.19.0"), "args": args, "env": env, "restartPolicy": "Always",
    }]}]);
    verdict(
        "webhooks with a native sidecar of an older release".into(),
        dry_patch(WEBHOOKS, &older.to_string()),
        Some("split-controller-after-webhooks"),
    );

    // The controller: its operator mode in any manager container (paused at
    // 0 replicas, so that no new image starts), and the ordering guard on
    // every manager container's image.
    let (index, manager) = live(CONTROLLER);
    let args = manager["args"].clone();
    let env = manager["env"].clone();
    let paused = |patch: String| {
        let mut ops: Vec<Value> = serde_json::from_str(&patch).unwrap();
        ops.push(serde_json::json!({"op": "replace", "path": "/spec/replicas", "value": 0}));
        Value::from(ops).to_string()
    };
    let webhooks_mode = {
        let mut env = env.as_array().unwrap().clone();
        env.retain(|e| e["name"] != "AZURE_OPERATOR_MODE");
        env.push(serde_json::json!({"name": "AZURE_OPERATOR_MODE", "value": "webhooks"}));
        Value::from(env)
    };
    for placement in PLACEMENTS {
        verdict(
            format!("controller, {placement:?} in mode webhooks"),
            dry_patch(
                CONTROLLER,
                &paused(placed(placement, index, &image, &args, &webhooks_mode)),
            ),
            Some("split-controller-operator-mode"),
        );
        verdict(
            format!("controller, {placement:?} as rendered, paused"),
            dry_patch(
                CONTROLLER,
                &paused(placed(placement, index, &image, &args, &env)),
            ),
            None,
        );
    }
    // A newer manager beside the old one starts a new release: refused
    // until the webhooks run it, wherever it sits.
    for placement in [
        Placement::OtherTag,
        Placement::Init,
        Placement::NativeSidecar,
    ] {
        let newer = format!("{repository}:v2.21.0");
        verdict(
            format!("controller, {placement:?} at v2.21.0 while the webhooks run {image}"),
            dry_patch(CONTROLLER, &placed(placement, index, &newer, &args, &env)),
            Some("split-controller-after-webhooks"),
        );
    }
    assert_eq!(judged, 6 * 7 + 3 + 6 * 2 + 3);
}
