//! Against a real kube-apiserver (tests/kube-apiserver, Kubernetes v1.37.2):
//! every install artifact is accepted by server-side apply without a
//! warning, and every upgrade path from a 2.12-era and a 2.20.0 controller
//! Deployment does what `asogen upgrade-check` predicts, its remedy
//! included.

mod common;

use asogen::rules::cel::NOT_CURRENT;
use common::apiserver::{ApiServer, fixture, install_crds, server};
use common::{asogen, chart, component_overlays, helm_render, kustomize, python_tools, root, text};
use serde::Deserialize;
use serde_json::{Value, json};

/// The namespace every artifact is rendered for; each test moves it to a
/// namespace of its own.
const RELEASE_NAMESPACE: &str = "azureserviceoperator-system";
const DEPLOYMENT: &str = "azureserviceoperator-controller-manager";
/// The API server's refusal of a Recreate Deployment that keeps the block.
const API_ERROR: &str = "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'";

/// The documents of a YAML stream, as JSON values (empty documents left out).
fn documents(stream: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(stream)
        .map(|document| Value::deserialize(document).expect("YAML parses"))
        .filter(|value| !value.is_null())
        .collect()
}

/// Applies a stream server-side into `namespace` (every mention of the
/// release namespace moved there) and asserts each object was accepted,
/// without a warning.
fn apply_install(server: &ApiServer, what: &str, stream: &str, namespace: &str) {
    let stream = stream.replace(RELEASE_NAMESPACE, namespace);
    let objects = documents(&stream);
    assert!(objects.len() > 10, "{what}: only {} objects", objects.len());
    let out = server.kubectl(
        &[
            "apply",
            "--server-side",
            "--field-manager=asogen-install-test",
            "-f",
            "-",
        ],
        &stream,
    );
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "{what}: the API server refused the install:\n{stderr}"
    );
    assert!(!stderr.contains("Warning:"), "{what}: warnings:\n{stderr}");
    let applied = text(&out.stdout)
        .lines()
        .filter(|line| line.ends_with(" serverside-applied"))
        .count();
    assert_eq!(
        applied,
        objects.len(),
        "{what}: every object applied:\n{}",
        text(&out.stdout)
    );
    // what was stored is what was sent: read every Deployment back (the
    // split topology has two)
    let deployments: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .collect();
    assert!(
        deployments
            .iter()
            .any(|d| d["metadata"]["name"] == DEPLOYMENT),
        "{what}: no controller Deployment"
    );
    for deployment in deployments {
        let name = deployment["metadata"]["name"].as_str().unwrap();
        let live: Value = serde_json::from_str(&server.kubectl_ok(
            &["get", "deployment", name, "-n", namespace, "-o", "json"],
            "",
        ))
        .unwrap();
        assert_eq!(
            live["spec"]["replicas"], deployment["spec"]["replicas"],
            "{what}: {name}"
        );
        let strategy = &deployment["spec"]["strategy"];
        assert_eq!(
            live["spec"]["strategy"]["type"], strategy["type"],
            "{what}: {name}"
        );
        if !strategy["rollingUpdate"].is_null() {
            assert_eq!(
                live["spec"]["strategy"]["rollingUpdate"], strategy["rollingUpdate"],
                "{what}: {name}"
            );
        }
    }
}

#[test]
fn every_install_manifest_is_accepted() {
    let server = server();
    install_crds(server);
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("generated/manifests")).unwrap() {
        let path = entry.unwrap().path();
        let stream = std::fs::read_to_string(&path).unwrap();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        // the manifest creates its Namespace itself
        let namespace = format!("manifest-{name}");
        apply_install(server, &path.display().to_string(), &stream, &namespace);
        seen += 1;
    }
    assert!(seen >= 3, "expected the profiles' manifests, found {seen}");
}

#[test]
fn the_chart_rendered_by_helm_is_accepted() {
    let server = server();
    install_crds(server);
    let dir = tempfile::tempdir().unwrap();
    let variants = [
        ("defaults", String::new()),
        (
            "single-replica-rolling",
            std::fs::read_to_string(root().join("values/profiles/single-replica-rolling.yaml"))
                .unwrap(),
        ),
        (
            "split",
            std::fs::read_to_string(root().join("values/profiles/split.yaml")).unwrap(),
        ),
        (
            "aad-pod-identity",
            "aadPodIdentity:\n  enable: true\n  azureManagedIdentityResourceId: /subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/aso\n".into(),
        ),
        (
            "multitenant-webhooks",
            "multitenant:\n  enable: true\nazureOperatorMode: webhooks\n".into(),
        ),
        (
            "multitenant-watchers",
            "multitenant:\n  enable: true\nazureOperatorMode: watchers\n".into(),
        ),
    ];
    for (name, values) in variants {
        let file = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&file, values).unwrap();
        let namespace = server.fresh_namespace(&format!("chart-{name}"));
        let args = [
            "template",
            &chart(),
            "-n",
            &namespace,
            "-f",
            file.to_str().unwrap(),
        ];
        let out = helm_render(&args);
        assert!(
            out.status.success(),
            "helm-render {name}: {}",
            text(&out.stderr)
        );
        let stream = text(&out.stdout);
        if name == "aad-pod-identity" {
            assert!(stream.contains("kind: AzureIdentityBinding"), "{name}");
        }
        if name == "multitenant-watchers" {
            // watchers-only installs no webhook configurations
            assert!(!stream.contains("WebhookConfiguration"), "{name}");
            let objects = documents(&stream);
            assert!(objects.iter().any(|o| o["kind"] == "Deployment"), "{name}");
            server.kubectl_ok(
                &[
                    "apply",
                    "--server-side",
                    "--field-manager=asogen-install-test",
                    "-f",
                    "-",
                ],
                &stream,
            );
            continue;
        }
        apply_install(server, &format!("chart ({name})"), &stream, &namespace);
    }
}

#[test]
fn the_kustomize_base_and_component_are_accepted() {
    let server = server();
    install_crds(server);
    let generated = root().join("generated/kustomize");
    let base = kustomize(&generated.join("base"));
    apply_install(server, "kustomize base", &base, "kustomize-base");
    let dir = tempfile::tempdir().unwrap();
    for (component, overlay) in component_overlays(dir.path()) {
        let built = kustomize(&overlay);
        apply_install(
            server,
            &format!("kustomize base + {component}"),
            &built,
            &format!("kustomize-{component}"),
        );
    }
}

// ------------------------------------------------------------ upgrades

/// How an applier writes a Deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applier {
    /// `kubectl apply` (client-side, last-applied annotation).
    KubectlClientSide,
    /// Helm 3: created by the `helm` manager, upgraded by a three-way
    /// strategic merge patch from the old manifest, the new one and the live
    /// object. kubectl's client-side apply computes the same patch (the same
    /// `CreateThreeWayMergePatch`) when the old manifest is its last-applied
    /// configuration, so the install saves it (`--save-config`) and the
    /// upgrade is a client-side apply as manager `helm`.
    Helm3,
    /// Helm 4: server-side apply as `helm`, conflicts not forced.
    Helm4,
    /// Flux kustomize-controller: a forced server-side dry-run, then the
    /// take-over of `kubectl*` and `before-first-apply` managers, then a
    /// forced server-side apply, as `kustomize-controller`.
    Flux,
    /// Argo CD's default sync: kubectl apply semantics as `argocd-controller`.
    ArgoClientSide,
    /// Argo CD with `ServerSideApply=true`: a forced server-side apply as
    /// `argocd-controller`.
    ArgoServerSide,
    /// `kubectl apply --server-side --force-conflicts` (field manager
    /// `kubectl`): the README's install and `upgrade-plan --via kubectl`.
    KubectlServerSide,
}

impl Applier {
    fn install(self, server: &ApiServer, namespace: &str, manifest: &str) {
        let args: &[&str] = match self {
            Applier::KubectlClientSide => &["apply"],
            Applier::Helm3 => &["create", "--save-config", "--field-manager=helm"],
            Applier::Helm4 => &["apply", "--server-side", "--field-manager=helm"],
            Applier::Flux => &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=kustomize-controller",
            ],
            Applier::ArgoClientSide => &["apply", "--field-manager=argocd-controller"],
            Applier::ArgoServerSide => &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=argocd-controller",
            ],
            Applier::KubectlServerSide => &["apply", "--server-side", "--force-conflicts"],
        };
        let mut args = args.to_vec();
        args.extend(["-n", namespace, "-f", "-"]);
        server.kubectl_ok(&args, manifest);
    }

    /// Upgrades to `manifest`; Err holds the API server's refusal.
    fn upgrade(self, server: &ApiServer, namespace: &str, manifest: &str) -> Result<(), String> {
        let run = |args: &[&str]| {
            let mut args = args.to_vec();
            args.extend(["-n", namespace, "-f", "-"]);
            let out = server.kubectl(&args, manifest);
            let stderr = text(&out.stderr);
            assert!(!stderr.contains("Warning:"), "{self:?}: {stderr}");
            if out.status.success() {
                Ok(())
            } else {
                Err(stderr)
            }
        };
        match self {
            Applier::KubectlClientSide => run(&["apply"]),
            Applier::Helm3 => run(&["apply", "--field-manager=helm"]),
            Applier::Helm4 => run(&["apply", "--server-side", "--field-manager=helm"]),
            Applier::Flux => {
                let ssa = [
                    "apply",
                    "--server-side",
                    "--force-conflicts",
                    "--field-manager=kustomize-controller",
                ];
                let mut dry_run = ssa.to_vec();
                dry_run.push("--dry-run=server");
                run(&dry_run)?;
                flux_take_over(server, namespace);
                run(&ssa)
            }
            Applier::ArgoClientSide => run(&["apply", "--field-manager=argocd-controller"]),
            Applier::ArgoServerSide => run(&[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=argocd-controller",
            ]),
            Applier::KubectlServerSide => run(&["apply", "--server-side", "--force-conflicts"]),
        }
    }
}

/// Flux's take-over of other managers before it applies (fluxcd/pkg ssa,
/// `PatchReplaceFieldsManagers`, with kustomize-controller's list): the
/// fields of every main-resource entry of a `kubectl*` manager (Update or
/// Apply), of `before-first-apply` and of its own Update entry join its
/// Apply entry, and the last-applied annotation goes, in one JSON patch.
fn flux_take_over(server: &ApiServer, namespace: &str) {
    const ME: &str = "kustomize-controller";
    let live = live(server, namespace);
    let entries = live["metadata"]["managedFields"].as_array().unwrap();
    let taken = |entry: &Value| {
        let manager = entry["manager"].as_str().unwrap_or("");
        let operation = entry["operation"].as_str().unwrap_or("");
        entry["subresource"].as_str().unwrap_or("").is_empty()
            && (manager.starts_with("kubectl")
                || (manager == "before-first-apply" && operation == "Update")
                || (manager == ME && operation == "Update"))
    };
    if !entries.iter().any(taken) {
        return;
    }
    let mut fields = json!({});
    let mut kept = Vec::new();
    for entry in entries {
        if taken(entry) || (entry["manager"] == ME && entry["operation"] == "Apply") {
            merge_fields(&mut fields, &entry["fieldsV1"]);
        } else {
            kept.push(entry.clone());
        }
    }
    kept.push(json!({
        "manager": ME,
        "operation": "Apply",
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }));
    let mut patch =
        vec![json!({"op": "replace", "path": "/metadata/managedFields", "value": kept})];
    if live["metadata"]["annotations"]
        .get("kubectl.kubernetes.io/last-applied-configuration")
        .is_some()
    {
        patch.push(json!({"op": "remove", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"}));
    }
    server.kubectl_ok(
        &[
            "patch",
            "deployment",
            DEPLOYMENT,
            "-n",
            namespace,
            "--type=json",
            "--field-manager",
            ME,
            "-p",
            &serde_json::to_string(&patch).unwrap(),
        ],
        "",
    );
}

/// The union of two field sets (FieldsV1 trees).
fn merge_fields(into: &mut Value, from: &Value) {
    if let (Value::Object(into), Value::Object(from)) = (into, from) {
        for (key, value) in from {
            merge_fields(into.entry(key.clone()).or_insert(json!({})), value);
        }
    }
}

fn live(server: &ApiServer, namespace: &str) -> Value {
    serde_json::from_str(&server.kubectl_ok(
        &[
            "get",
            "deployment",
            DEPLOYMENT,
            "-n",
            namespace,
            "-o",
            "json",
            "--show-managed-fields",
        ],
        "",
    ))
    .unwrap()
}

/// asogen's Deployment (default values) for `namespace`, as JSON.
fn asogen_deployment(namespace: &str) -> String {
    let out = asogen(&["template", "-n", namespace]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let deployment = documents(&text(&out.stdout))
        .into_iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("a Deployment");
    serde_json::to_string(&deployment).unwrap()
}

/// `asogen upgrade-check` on the live object: exit code and JSON report.
fn upgrade_check(live: &Value, extra: &[&str]) -> (Option<i32>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.json");
    std::fs::write(&file, serde_json::to_string_pretty(live).unwrap()).unwrap();
    let mut args = vec![
        "upgrade-check",
        "--live",
        file.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = asogen(&args);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}{}", text(&out.stdout), text(&out.stderr)));
    (out.status.code(), report)
}

/// Runs a command line as printed by upgrade-check, in a shell with kubectl
/// on PATH and this server's kubeconfig.
fn run_as_printed(server: &ApiServer, command: &str) -> std::process::Output {
    let path = format!(
        "{}:{}",
        python_tools().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    common::tool("sh")
        .args(["-c", command])
        .env("PATH", path)
        .env("KUBECONFIG", &server.kubeconfig)
        .output()
        .unwrap()
}

/// As [`run_as_printed`], without waiting; its errors go to the test's output.
fn run_as_printed_in_background(server: &ApiServer, command: &str) -> std::process::Child {
    let path = format!(
        "{}:{}",
        python_tools().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    common::tool("sh")
        .args(["-c", command])
        .env("PATH", path)
        .env("KUBECONFIG", &server.kubeconfig)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// One observed upgrade: (start, how it was installed and upgraded,
/// predicted, observed).
type Row = (&'static str, String, String, String);

fn observe(
    server: &ApiServer,
    start: &'static str,
    old: &str,
    installer: Applier,
    applier: Applier,
    check_args: &[&str],
) -> Row {
    let what = format!("{start}, installed by {installer:?}, upgraded by {applier:?}");
    let namespace = server.fresh_namespace(&format!("up-{start}-{installer:?}-{applier:?}"));
    installer.install(
        server,
        &namespace,
        &old.replace(RELEASE_NAMESPACE, &namespace),
    );
    let before = live(server, &namespace);
    let (code, report) = upgrade_check(&before, check_args);
    let predictions = report["predictions"].as_array().unwrap();
    assert_eq!(predictions.len(), 1, "{what}: one path checked: {report:#}");
    let predicted = predictions[0]["verdict"].as_str().unwrap().to_string();
    assert_eq!(
        code,
        Some(if predicted == "refused" { 1 } else { 0 }),
        "{what}"
    );
    let new = asogen_deployment(&namespace);
    let observed = match applier.upgrade(server, &namespace, &new) {
        Ok(()) => "safe".to_string(),
        Err(refusal) => {
            // upgrade-check quotes the API server word for word
            assert!(refusal.contains(API_ERROR), "{what}: {refusal}");
            assert!(
                predictions[0]["why"].as_str().unwrap().contains(API_ERROR),
                "{what}: {report:#}"
            );
            "refused".to_string()
        }
    };
    assert_eq!(
        predicted, observed,
        "{what}: upgrade-check predicted {predicted}, the API server did {observed}: {report:#}"
    );
    if observed == "refused" {
        // the remedy, run as printed, clears the way for the same apply
        let remedy = report["remedy"].as_str().expect("a refusal has a remedy");
        let out = run_as_printed(server, remedy);
        assert!(
            out.status.success(),
            "{what}: the remedy failed: {remedy}\n{}",
            text(&out.stderr)
        );
        applier
            .upgrade(server, &namespace, &new)
            .unwrap_or_else(|err| panic!("{what}: refused after the remedy: {err}"));
    }
    let after = live(server, &namespace);
    let wanted: Value = serde_json::from_str(&new).unwrap();
    assert_eq!(
        after["spec"]["strategy"],
        wanted["spec"]["strategy"]["type"]
            .as_str()
            .map_or(json!(null), |t| json!({"type": t})),
        "{what}: the upgraded strategy"
    );
    assert_eq!(
        after["spec"]["replicas"], wanted["spec"]["replicas"],
        "{what}"
    );
    // and on the upgraded object every path is clear
    let (code, report) = upgrade_check(&after, &[]);
    assert_eq!(code, Some(0), "{what}: after the upgrade: {report:#}");
    let how = if installer == applier {
        format!("{applier:?}")
    } else {
        format!("{installer:?} -> {applier:?}")
    };
    (start, how, predicted, observed)
}

#[test]
fn every_upgrade_path_does_what_upgrade_check_predicts() {
    let server = server();
    let starts = [
        (
            "2.12",
            fixture("tests/fixtures/apiserver/deployment-2.12.yaml"),
        ),
        (
            "2.20.0",
            fixture("tests/fixtures/apiserver/deployment-2.20.0.yaml"),
        ),
    ];
    let appliers = [
        Applier::KubectlClientSide,
        Applier::Helm3,
        Applier::Helm4,
        Applier::Flux,
        Applier::ArgoClientSide,
        Applier::ArgoServerSide,
        Applier::KubectlServerSide,
    ];
    let mut rows: Vec<Row> = Vec::new();
    for (start, old) in &starts {
        for applier in appliers {
            // upgrade-check's default: the path in use, read from managedFields
            rows.push(observe(server, start, old, applier, applier, &[]));
        }
        // kubectl --server-side (the README's apply, and the plan's) over an
        // install made with kubectl client-side apply, checked by the
        // word upgrade-plan uses
        rows.push(observe(
            server,
            start,
            old,
            Applier::KubectlClientSide,
            Applier::KubectlServerSide,
            &["--via", "kubectl"],
        ));
        // Flux taking over an install made with kubectl client-side apply
        rows.push(observe(
            server,
            start,
            old,
            Applier::KubectlClientSide,
            Applier::Flux,
            &[
                "--via",
                "server-side",
                "--field-manager",
                "kustomize-controller",
            ],
        ));
    }
    eprintln!("start   applier                      predicted  observed");
    for (start, how, predicted, observed) in &rows {
        eprintln!("{start:<7} {how:<28} {predicted:<10} {observed}");
    }
    // the 2.12-era block is refused somewhere, so the test can tell paths apart
    assert!(rows.iter().any(|r| r.3 == "refused"));
    assert!(rows.iter().any(|r| r.0 == "2.12" && r.3 == "safe"));
}

#[test]
fn a_changed_selector_is_refused_and_the_printed_orphaning_delete_works() {
    // a Deployment whose selector is not the release's, as an earlier
    // asogen rendered it: the selector is immutable, on every path
    let server = server();
    let namespace = server.fresh_namespace("selector");
    let old = fixture("tests/fixtures/apiserver/deployment-2.20.0.yaml")
        .replace(RELEASE_NAMESPACE, &namespace)
        .replacen(
            "    matchLabels:\n      control-plane: controller-manager\n",
            "    matchLabels:\n      app.kubernetes.io/name: azure-service-operator\n      control-plane: controller-manager\n",
            1,
        );
    assert!(old.contains("app.kubernetes.io/name: azure-service-operator\n      control-plane"));
    Applier::KubectlClientSide.install(server, &namespace, &old);
    let (code, report) = upgrade_check(&live(server, &namespace), &[]);
    assert_eq!(code, Some(1), "{report:#}");
    let new = asogen_deployment(&namespace);
    let refusal = Applier::KubectlClientSide
        .upgrade(server, &namespace, &new)
        .expect_err("a new selector is refused");
    assert!(refusal.contains("field is immutable"), "{refusal}");
    let remedy = report["remedy"].as_str().unwrap();
    assert!(remedy.contains("--cascade=orphan"), "{remedy}");
    // An orphaning delete leaves the `orphan` finalizer for the garbage
    // collector, a controller this server does not run: the test does its
    // part (there are no ReplicaSets to orphan, so only the finalizer goes)
    // while the printed command waits for the deletion.
    let mut command = run_as_printed_in_background(server, remedy);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let object = live(server, &namespace);
        if object["metadata"]["deletionTimestamp"].is_string() {
            assert_eq!(object["metadata"]["finalizers"], json!(["orphan"]));
            server.kubectl_ok(
                &[
                    "patch",
                    "deployment",
                    DEPLOYMENT,
                    "-n",
                    &namespace,
                    "--type=merge",
                    "-p",
                    r#"{"metadata":{"finalizers":null}}"#,
                ],
                "",
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{remedy}: no deletion after 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let status = command.wait().unwrap();
    assert!(status.success(), "{remedy} failed");
    Applier::KubectlClientSide
        .upgrade(server, &namespace, &new)
        .unwrap_or_else(|err| panic!("refused after the remedy: {err}"));
    assert_eq!(
        live(server, &namespace)["spec"]["selector"],
        json!({"matchLabels": {"control-plane": "controller-manager"}})
    );
}

/// `kubectl scale` of `name` in `namespace` to `replicas`.
fn scale(
    server: &ApiServer,
    namespace: &str,
    name: &str,
    replicas: &str,
    dry_run: bool,
) -> Result<String, String> {
    let replicas = format!("--replicas={replicas}");
    let mut args = vec!["scale", "deployment", name, "-n", namespace, &replicas];
    if dry_run {
        args.push("--dry-run=server");
    }
    server.attempt(&args)
}

/// As [`scale`], sent again (up to 20 times) while the scale guard answers
/// that its copy of the Deployment is not current yet: what docs/rules.md
/// tells a user to do right after another change to the Deployment.
fn scale_retrying(
    server: &ApiServer,
    namespace: &str,
    name: &str,
    replicas: &str,
) -> Result<String, String> {
    let mut result = scale(server, namespace, name, replicas, false);
    for _ in 0..20 {
        match &result {
            Err(stderr) if stderr.contains(NOT_CURRENT) => {
                std::thread::sleep(std::time::Duration::from_millis(100));
                result = scale(server, namespace, name, replicas, false);
            }
            _ => break,
        }
    }
    result
}

/// On a real server, the guard of the single-replica RollingUpdate
/// Deployment `name` in `namespace` refuses the shapes the rules forbid,
/// with the rule id, by `kubectl patch` (as `kubectl edit` sends) and by
/// `kubectl scale`, and lets compliant changes pass.
fn assert_guarded(server: &ApiServer, what: &str, namespace: &str, name: &str) {
    let ns = namespace;
    // A new policy takes a moment to be enforced: wait for it with a
    // server-side dry run, which admission sees but nothing stores.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while scale(server, ns, name, "2", true).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: the scale guard was never enforced:\n{}",
            server.log_tail()
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let refused = |result: Result<String, String>, rule: &str, step: &str| {
        let stderr = result.expect_err(&format!("{what}: {step}"));
        assert!(
            stderr.contains("ValidatingAdmissionPolicy") && stderr.contains(rule),
            "{what}: {step}: {stderr}"
        );
    };
    // Scaling a single-replica RollingUpdate Deployment.
    refused(
        scale(server, ns, name, "2", false),
        "ha-requires-recreate",
        "scale to 2",
    );
    refused(
        scale(server, ns, name, "0", false),
        "replica-count-positive",
        "scale to 0",
    );
    scale(server, ns, name, "1", false)
        .unwrap_or_else(|err| panic!("{what}: scaling to the same single replica: {err}"));
    // Editing the Deployment (kubectl edit sends such a patch).
    let patch = |body: &str| {
        server.attempt(&[
            "patch",
            "deployment",
            name,
            "-n",
            ns,
            "--type=merge",
            "-p",
            body,
        ])
    };
    refused(
        patch(r#"{"spec":{"replicas":3}}"#),
        "ha-requires-recreate",
        "two replicas with RollingUpdate",
    );
    // Recreate with the block left: the API server's own validation or the
    // guard refuses it, whichever runs first.
    let stderr = patch(r#"{"spec":{"strategy":{"type":"Recreate"}}}"#)
        .expect_err("Recreate with a rollingUpdate block");
    assert!(
        stderr.contains("recreate-forbids-rolling-update") || stderr.contains(API_ERROR),
        "{what}: {stderr}"
    );
    // The compliant way to more replicas: Recreate without the block, then scale.
    patch(r#"{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null},"replicas":2}}"#)
        .unwrap_or_else(|err| panic!("{what}: Recreate with 2 replicas: {err}"));
    scale_retrying(server, ns, name, "3")
        .unwrap_or_else(|err| panic!("{what}: a Recreate Deployment scales: {err}"));
    refused(
        scale(server, ns, name, "0", false),
        "replica-count-positive",
        "scale to 0",
    );
    // Back to the single-replica rolling shape, for the next caller.
    patch(r#"{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}},"replicas":1}}"#)
        .unwrap_or_else(|err| panic!("{what}: back to one rolling replica: {err}"));
}

/// The in-cluster guard (admissionPolicy.enable) on the install `asogen
/// template` renders.
#[test]
fn the_admission_policies_refuse_what_the_rules_forbid() {
    let server = server();
    install_crds(server);
    let namespace = server.fresh_namespace("guard");
    let values = root().join("values/profiles/single-replica-rolling.yaml");
    let out = asogen(&["template", "-f", values.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stream = text(&out.stdout);
    assert_eq!(
        documents(&stream)
            .iter()
            .filter(|o| o["kind"]
                .as_str()
                .unwrap_or_default()
                .starts_with("ValidatingAdmissionPolicy"))
            .count(),
        4,
        "two policies and their bindings"
    );
    apply_install(server, "single-replica-rolling", &stream, &namespace);
    assert_guarded(server, "asogen template", &namespace, DEPLOYMENT);
    // With the guard turned off, the chart renders none of it.
    let off = asogen(&["template", "--set", "admissionPolicy.enable=false"]);
    assert!(off.status.success(), "{}", text(&off.stderr));
    assert!(!text(&off.stdout).contains("ValidatingAdmissionPolicy"));
}

/// Two writes that are each allowed, sent at once, never reach a shape the
/// rules forbid: a patch to RollingUpdate (one replica) and a scale to 3,
/// raced 200 times from a compliant Recreate Deployment with one replica,
/// half of them at the same moment on two connections, half pipelined on
/// one (the scale judged the moment the patch is stored). See
/// docs/rules.md, "Concurrent writes".
#[test]
fn racing_a_strategy_patch_and_a_scale_never_reaches_a_forbidden_shape() {
    let server = server();
    install_crds(server);
    let namespace = server.fresh_namespace("race");
    let out = asogen(&["template"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    apply_install(server, "defaults", &text(&out.stdout), &namespace);
    let reset = r#"{"spec":{"replicas":1,"strategy":{"type":"Recreate","rollingUpdate":null}}}"#;
    let rolling = r#"{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}}}}"#;
    // wait until the guard is enforced: a rolling Deployment cannot scale
    server.kubectl_ok(
        &[
            "patch",
            "deployment",
            DEPLOYMENT,
            "-n",
            &namespace,
            "--type=merge",
            "-p",
            &rolling.replace(r#""spec":{"#, r#""spec":{"replicas":1,"#),
        ],
        "",
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while scale(server, &namespace, DEPLOYMENT, "2", true).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the scale guard was never enforced"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let out = common::tool("python3")
        .arg(root().join("tests/tools/apiserver-race"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args([
            "--namespace",
            &namespace,
            "--name",
            DEPLOYMENT,
            "--attempts",
            "200",
            "--reset",
            reset,
            "--patch",
            rolling,
            "--scale",
            "3",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "apiserver-race: {}",
        text(&out.stderr)
    );
    let attempts: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(attempts.len(), 200);
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for a in &attempts {
        let (patched, scaled) = (a["patch"]["status"] == 200, a["scale"]["status"] == 200);
        // the stored shape is always one the rules allow
        assert!(
            !(a["strategy"] == "RollingUpdate" && a["replicas"].as_i64().unwrap() > 1),
            "both writes passed and made a forbidden shape: {a}"
        );
        assert!(!(patched && scaled), "both writes passed: {a}");
        // a refusal names the rule
        for (ok, answer) in [(patched, &a["patch"]), (scaled, &a["scale"])] {
            if !ok {
                let message = answer["message"].as_str().unwrap();
                assert!(message.contains("ha-requires-recreate"), "{a}");
            }
        }
        // pipelined, the scale comes after the stored patch: refused
        if a["mode"] == "pipelined" {
            assert!(patched && !scaled, "{a}");
        }
        let stale = a["scale"]["message"]
            .as_str()
            .unwrap()
            .contains(NOT_CURRENT);
        *outcomes
            .entry(format!(
                "{:<9} {} {}",
                a["mode"].as_str().unwrap(),
                if patched {
                    "patch stored, "
                } else {
                    "scale stored, "
                },
                if stale {
                    "scale refused: not current"
                } else if scaled {
                    "patch refused"
                } else {
                    "scale refused by the rule"
                }
            ))
            .or_default() += 1;
    }
    for (outcome, count) in &outcomes {
        eprintln!("{count:>4}  {outcome}");
    }
    // the two writes did race: each won at least once at the same moment
    let parallel = |won: &str| {
        outcomes
            .iter()
            .any(|(k, n)| k.starts_with("parallel") && k.contains(won) && *n > 0)
    };
    assert!(
        parallel("patch stored") && parallel("scale stored"),
        "{outcomes:#?}"
    );
}

/// A kustomize overlay over the base (with the single-replica component)
/// that renames with `namePrefix`, `nameSuffix`, `namespace:`, all three,
/// a patch or a replacement keeps the guard on the renamed Deployment:
/// built by the real kustomize, applied to the real server. (Short affixes: the metrics Service's name
/// has 8 characters to spare.)
#[test]
fn the_guard_follows_kustomize_renames() {
    let server = server();
    install_crds(server);
    let dir = tempfile::tempdir().unwrap();
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(root().join("generated/kustomize"))
        .arg(dir.path().join("kustomize"))
        .status()
        .unwrap();
    assert!(copy.success());
    let moved = server.fresh_namespace("kustomize-moved");
    let all = server.fresh_namespace("kustomize-all");
    // (name, resources besides the base, the overlay's transformation)
    let overlays = [
        ("prefix", "", "namePrefix: a-\n".to_string()),
        ("suffix", "", "nameSuffix: -b\n".to_string()),
        ("namespace", "", format!("namespace: {moved}\n")),
        (
            "all",
            "",
            format!("namePrefix: c-\nnameSuffix: -c\nnamespace: {all}\n"),
        ),
        // kustomize follows a rename by a patch or a replacement too
        (
            "patch",
            "",
            "patches:\n- target: {kind: Deployment}\n  patch: |-\n    - op: replace\n      path: /metadata/name\n      value: aso-by-patch\n".to_string(),
        ),
        (
            "replacement",
            "- naming.yaml\n",
            "replacements:\n- source: {kind: ConfigMap, name: naming, fieldPath: data.deployment}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.name]\n".to_string(),
        ),
    ];
    for (name, resources, transform) in overlays {
        let overlay = dir.path().join(name);
        std::fs::create_dir(&overlay).unwrap();
        std::fs::write(
            overlay.join("naming.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: naming\n  namespace: {RELEASE_NAMESPACE}\ndata:\n  deployment: aso-by-replacement\n"),
        )
        .unwrap();
        std::fs::write(
            overlay.join("kustomization.yaml"),
            format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../kustomize/base\n{resources}components:\n- ../kustomize/components/single-replica-rolling\n{transform}"),
        )
        .unwrap();
        let built = kustomize(&overlay);
        let deployment = documents(&built)
            .into_iter()
            .find(|o| o["kind"] == "Deployment")
            .expect("the overlay has the Deployment");
        let (namespace, deployment_name) = (
            deployment["metadata"]["namespace"]
                .as_str()
                .unwrap()
                .to_string(),
            deployment["metadata"]["name"].as_str().unwrap().to_string(),
        );
        assert_ne!(
            (namespace.as_str(), deployment_name.as_str()),
            (RELEASE_NAMESPACE, DEPLOYMENT),
            "{name}: the overlay renames"
        );
        let out = server.kubectl(
            &[
                "apply",
                "--server-side",
                "--field-manager=asogen-install-test",
                "-f",
                "-",
            ],
            &built,
        );
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{name}: {stderr}");
        assert!(!stderr.contains("Warning:"), "{name}: {stderr}");
        assert_guarded(
            server,
            &format!("overlay {name}"),
            &namespace,
            &deployment_name,
        );
    }
}

/// Where each labels or annotations map of the values lands in what asogen
/// renders: the kind of object, the JSON pointer of the map in it, and the
/// field as the API server names it in a refusal.
fn lands_in(map: &str) -> (&'static str, &'static str, &'static str) {
    match map {
        "podLabels" => (
            "Deployment",
            "/spec/template/metadata/labels",
            "spec.template.labels",
        ),
        "nodeSelector" => (
            "Deployment",
            "/spec/template/spec/nodeSelector",
            "spec.template.spec.nodeSelector",
        ),
        "podAnnotations" => (
            "Deployment",
            "/spec/template/metadata/annotations",
            "spec.template.annotations",
        ),
        "deploymentAnnotations" => (
            "Deployment",
            "/metadata/annotations",
            "metadata.annotations",
        ),
        "serviceAccount.annotations" => (
            "ServiceAccount",
            "/metadata/annotations",
            "metadata.annotations",
        ),
        other => panic!("where does {other} land?"),
    }
}

/// Writes `values` to a file of its own in `dir`.
fn values_file(dir: &std::path::Path, values: &Value) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let file = dir.join(format!(
        "values-{}.json",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::write(&file, values.to_string()).unwrap();
    file.to_str().unwrap().to_string()
}

/// Whether `asogen validate` accepts `values` (exit 0) or refuses them
/// (exit 1).
fn asogen_accepts(dir: &std::path::Path, values: &Value) -> bool {
    let out = common::asogen_in(dir, &["validate", "-f", &values_file(dir, values)]);
    match out.status.code() {
        Some(0) => true,
        Some(1) => false,
        code => panic!("{values}: exit {code:?}: {}", text(&out.stdout)),
    }
}

/// The objects `asogen template` renders for `values`.
fn rendered(dir: &std::path::Path, values: &Value) -> Vec<Value> {
    let out = common::asogen_in(
        dir,
        &["template", "-o", "json", "-f", &values_file(dir, values)],
    );
    assert!(out.status.success(), "{values}: {}", text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list["items"].as_array().unwrap().clone()
}

fn object_of(objects: &[Value], kind: &str) -> Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
        .clone()
}

/// Creates `objects` (server-side dry run) in `namespace`: for each name,
/// None when the server accepted it, else its refusal.
fn dry_run_create(
    server: &ApiServer,
    namespace: &str,
    objects: Vec<Value>,
) -> std::collections::BTreeMap<String, Option<String>> {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let out = server.kubectl(
        &[
            "create",
            "--dry-run=server",
            "-n",
            namespace,
            "-o",
            "name",
            "-f",
            "-",
        ],
        &list.to_string(),
    );
    let mut verdicts = std::collections::BTreeMap::new();
    for line in text(&out.stdout).lines() {
        if let Some(name) = line.rsplit('/').next() {
            verdicts.insert(name.to_string(), None);
        }
    }
    for line in text(&out.stderr).lines() {
        // `... "STDIN": Deployment.apps "meta-12" is invalid: reason`
        if let Some(at) = line.find("\"meta-") {
            let name: String = line[at + 1..].chars().take_while(|c| *c != '"').collect();
            verdicts.insert(name, Some(line.to_string()));
        }
    }
    verdicts
}

/// One entry of the labels test: what it is, its values file, and where it
/// goes.
struct Case {
    what: String,
    values: Value,
    map: &'static str,
    key: String,
    value: String,
}

/// Labels and annotations: every key and value of a generated corpus at
/// every boundary (tests/common `metadata_corpus`), and the annotations'
/// size at 256 KiB and one byte more. Those asogen accepts, the real API
/// server accepts in the objects asogen renders (each map with all of
/// them at once, each size on its own); each one asogen refuses, the API
/// server refuses, in the same place of an object that is otherwise
/// asogen's. A pod label on the selector key breaks the Deployment.
#[test]
fn asogen_accepts_exactly_the_labels_and_annotations_the_api_server_accepts() {
    let server = server();
    let namespace = server.fresh_namespace("metadata");
    let dir = tempfile::tempdir().unwrap();
    let baseline = rendered(dir.path(), &json!({}));
    let mut cases: Vec<Case> = common::metadata_corpus()
        .into_iter()
        .map(|entry| Case {
            what: format!("{} {:?}: {:?}", entry.map, entry.key, entry.value),
            values: entry.values(),
            map: entry.map,
            key: entry.key,
            value: entry.value,
        })
        .collect();
    // The pod template carries the chart's own annotation, so podAnnotations
    // get what is left of 256 KiB.
    let max = 256 * 1024;
    let chart_own = "kubectl.kubernetes.io/default-container".len() + "manager".len();
    let mut sizes = Vec::new();
    for (map, room) in [
        ("podAnnotations", max - chart_own),
        ("deploymentAnnotations", max),
        ("serviceAccount.annotations", max),
    ] {
        for extra in [0, 1] {
            let entry = common::MetadataEntry {
                map,
                key: "a".into(),
                value: "x".repeat(room - 1 + extra),
            };
            sizes.push(cases.len());
            cases.push(Case {
                what: format!("{map} of {} bytes", room + extra),
                values: entry.values(),
                map,
                key: entry.key,
                value: entry.value,
            });
        }
    }
    // asogen's verdicts, two at a time.
    let verdicts: Vec<bool> = std::thread::scope(|scope| {
        let workers: Vec<_> = cases
            .chunks(cases.len().div_ceil(2))
            .map(|chunk| {
                let dir = dir.path();
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|case| asogen_accepts(dir, &case.values))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    });
    let accepted: Vec<usize> = (0..cases.len()).filter(|i| verdicts[*i]).collect();
    let refused: Vec<usize> = (0..cases.len()).filter(|i| !verdicts[*i]).collect();
    assert!(
        accepted.len() > 100 && refused.len() > 100,
        "{} {}",
        accepted.len(),
        refused.len()
    );
    let mut objects = Vec::new();
    // What asogen accepts: in the objects it renders, one per map with every
    // accepted key (values under keys of their own), one per size.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (map, _) in common::METADATA_MAPS {
        groups.push(
            accepted
                .iter()
                .copied()
                .filter(|i| cases[*i].map == map && !sizes.contains(i))
                .collect(),
        );
    }
    groups.extend(
        accepted
            .iter()
            .filter(|i| sizes.contains(i))
            .map(|i| vec![*i]),
    );
    for (group_index, group) in groups.iter().enumerate() {
        let Some(first) = group.first() else { continue };
        let map = cases[*first].map;
        let (kind, pointer, _) = lands_in(map);
        let entries: serde_json::Map<String, Value> = group
            .iter()
            .map(|i| (cases[*i].key_in_group(*i), json!(cases[*i].value)))
            .collect();
        let mut values = Value::Object(entries.clone());
        for key in map.rsplit('.') {
            values = json!({ key: values });
        }
        let mut object = object_of(&rendered(dir.path(), &values), kind);
        for (key, value) in &entries {
            assert_eq!(
                object.pointer(pointer).and_then(|m| m.get(key)),
                Some(value),
                "{map} {key:?}: not in the {kind} at {pointer}"
            );
        }
        object["metadata"]["name"] = json!(format!("meta-accepted-{group_index}"));
        object["metadata"]["namespace"] = json!(namespace);
        objects.push(object);
    }
    // What asogen refuses: each in asogen's default object.
    for i in &refused {
        let case = &cases[*i];
        let (kind, pointer, _) = lands_in(case.map);
        let mut object = object_of(&baseline, kind);
        let (parent, leaf) = pointer.rsplit_once('/').unwrap();
        let parent = object.pointer_mut(parent).unwrap().as_object_mut().unwrap();
        let map = parent.entry(leaf).or_insert_with(|| json!({}));
        map[case.key.as_str()] = json!(case.value);
        object["metadata"]["name"] = json!(format!("meta-refused-{i}"));
        object["metadata"]["namespace"] = json!(namespace);
        objects.push(object);
    }
    let verdicts = dry_run_create(server, &namespace, objects);
    let mut disagreements = Vec::new();
    for (group_index, group) in groups.iter().enumerate() {
        if group.is_empty() {
            continue;
        }
        let name = format!("meta-accepted-{group_index}");
        match verdicts.get(&name) {
            Some(None) => {}
            Some(Some(reason)) => disagreements.push(format!(
                "asogen accepts {}, the API server refuses: {reason}",
                cases[group[0]].map
            )),
            None => panic!("{name}: no answer"),
        }
    }
    for i in &refused {
        let case = &cases[*i];
        match verdicts.get(&format!("meta-refused-{i}")) {
            Some(Some(reason)) => {
                // The refusal is about the map itself.
                let (_, _, field) = lands_in(case.map);
                assert!(reason.contains(field), "{}: {reason}", case.what);
            }
            Some(None) => disagreements.push(format!(
                "{}: asogen refuses, the API server accepts",
                case.what
            )),
            None => panic!("{}: no answer", case.what),
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );

    // The selector label: asogen refuses it in podLabels, whatever its
    // value; with another value the API server refuses the Deployment.
    for value in ["controller-manager", "other"] {
        let values = json!({"podLabels": {"control-plane": value}});
        assert!(!asogen_accepts(dir.path(), &values), "{values}");
    }
    let mut deployment = object_of(&baseline, "Deployment");
    deployment["spec"]["template"]["metadata"]["labels"]["control-plane"] = json!("other");
    deployment["metadata"]["name"] = json!("meta-selector");
    deployment["metadata"]["namespace"] = json!(namespace);
    let verdicts = dry_run_create(server, &namespace, vec![deployment]);
    let reason = verdicts["meta-selector"].clone().expect("refused");
    assert!(
        reason.contains("`selector` does not match template `labels`"),
        "{reason}"
    );
}

impl Case {
    /// The key the case takes in a map of many: its own, or (for the
    /// cases that try values under one key) one of its own.
    fn key_in_group(&self, index: usize) -> String {
        if self.key == "k" {
            format!("k{index}")
        } else {
            self.key.clone()
        }
    }
}
