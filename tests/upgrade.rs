//! `asogen upgrade-check` on live Deployments as each tool leaves them:
//! kubectl client-side apply, Helm 3, Flux and Helm 4 server-side apply, a
//! Flux install that owns the block, and one already on Recreate.

mod common;

use std::path::{Path, PathBuf};

use common::{asogen, python_tools, root, text};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/upgrade").join(name)
}

fn check_json(live: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec![
        "upgrade-check",
        "--live",
        live.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = asogen(&args);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}{}", text(&out.stdout), text(&out.stderr)));
    (out.status.code(), report)
}

/// (path kind, manager for server-side rows, verdict), in report order.
fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    report["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"]["kind"].as_str().unwrap().to_string(),
                p["path"]["manager"].as_str().unwrap_or("").to_string(),
                p["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row(kind: &str, manager: &str, verdict: &str) -> (String, String, String) {
    (kind.into(), manager.into(), verdict.into())
}

/// The API server's refusal, word for word (tests/apiserver.rs observes it).
const API_ERROR: &str = "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'";

/// Every common path, whatever the live object shows in use.
const ALL_PATHS: [&str; 8] = [
    "--via",
    "client-side",
    "--via",
    "helm3",
    "--via",
    "helm4",
    "--via",
    "server-side",
];

#[test]
fn by_default_the_path_in_use_is_checked() {
    // the manager that owns the pod template and the strategy names the path
    let table = [
        ("kubectl-client-side.yaml", row("client-side", "", "safe")),
        ("helm3.yaml", row("helm3", "", "safe")),
        ("helm4-server-side.yaml", row("helm4", "", "refused")),
        (
            "flux-server-side.yaml",
            row("server-side", "kustomize-controller", "refused"),
        ),
        (
            "flux-owns-block.yaml",
            row("server-side", "kustomize-controller", "safe"),
        ),
        (
            "recreate.yaml",
            row("server-side", "kustomize-controller", "safe"),
        ),
    ];
    for (name, want) in table {
        let (code, report) = check_json(&fixture(name), &[]);
        let refused = want.2 == "refused";
        assert_eq!(verdicts(&report), vec![want], "{name}");
        assert_eq!(code, Some(if refused { 1 } else { 0 }), "{name}");
    }
    // Argo CD's default sync is kubectl's client-side apply under its own name
    let argo = std::fs::read_to_string(fixture("kubectl-client-side.yaml"))
        .unwrap()
        .replace(
            "manager: kubectl-client-side-apply",
            "manager: argocd-controller",
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("argocd.yaml");
    std::fs::write(&path, argo).unwrap();
    let (_, report) = check_json(&path, &[]);
    assert_eq!(verdicts(&report), vec![row("client-side", "", "safe")]);
    // an object no applier owns: every common path
    let edited = std::fs::read_to_string(fixture("kubectl-client-side.yaml"))
        .unwrap()
        .replace(
            "manager: kubectl-client-side-apply",
            "manager: kubectl-edit",
        );
    std::fs::write(&path, edited).unwrap();
    let (_, report) = check_json(&path, &[]);
    assert_eq!(verdicts(&report).len(), 4, "{report}");
}

#[test]
fn control_characters_from_the_live_file_are_escaped() {
    // A manager name can carry a newline and terminal escapes; printed raw
    // it would forge a line of the report ("ok" under a REFUSED one).
    let forged = r"evil\n\nok       kubectl apply (forged)\n\u001b[32mgreen\u202e";
    let live = std::fs::read_to_string(fixture("kubectl-client-side.yaml"))
        .unwrap()
        .replace(
            "manager: kubectl-client-side-apply",
            &format!("manager: \"{forged}\""),
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forged.yaml");
    std::fs::write(&path, live).unwrap();
    let out = asogen(&[
        "upgrade-check",
        "--live",
        path.to_str().unwrap(),
        "--via",
        "server-side",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        !report
            .chars()
            .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
        "{report:?}"
    );
    assert!(
        !report.lines().any(|line| line.starts_with("ok")),
        "a forged line: {report}"
    );
    assert!(report.contains(r"evil\n\nok"), "{report}");
    assert!(report.contains(r"\u{1b}[32mgreen\u{202e}"), "{report}");
}

#[test]
fn a_strategy_type_that_is_not_a_string_is_an_error() {
    for (name, value) in [("number", "5"), ("list", "[Recreate]"), ("null", "null")] {
        let live = std::fs::read_to_string(fixture("kubectl-client-side.yaml"))
            .unwrap()
            .replace("    type: RollingUpdate\n", &format!("    type: {value}\n"));
        let (code, err) = bad_live(&format!("{name}.yaml"), &live);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains("spec.strategy.type"), "{name}: {err}");
        assert!(err.contains("not a string"), "{name}: {err}");
    }
}

#[test]
fn each_apply_path_is_predicted_from_the_managed_fields() {
    let safe = "safe";
    let refused = "refused";
    let table = [
        (
            "kubectl-client-side.yaml",
            "kustomize-controller",
            [safe, safe, refused, refused],
        ),
        (
            "helm3.yaml",
            "kustomize-controller",
            [safe, safe, refused, refused],
        ),
        (
            "flux-server-side.yaml",
            "kustomize-controller",
            [safe, safe, refused, refused],
        ),
        (
            "helm4-server-side.yaml",
            "kustomize-controller",
            [safe, safe, refused, refused],
        ),
        (
            "flux-owns-block.yaml",
            "kustomize-controller",
            [safe, safe, refused, safe],
        ),
        (
            "recreate.yaml",
            "kustomize-controller",
            [safe, safe, safe, safe],
        ),
    ];
    for (name, manager, expected) in table {
        let (code, report) = check_json(&fixture(name), &ALL_PATHS);
        let want = vec![
            row("client-side", "", expected[0]),
            row("helm3", "", expected[1]),
            row("helm4", "", expected[2]),
            row("server-side", manager, expected[3]),
        ];
        assert_eq!(verdicts(&report), want, "{name}");
        let any_refused = expected.contains(&refused);
        assert_eq!(code, Some(if any_refused { 1 } else { 0 }), "{name}");
        assert_eq!(report["remedy"].is_string(), any_refused, "{name}");
        for prediction in report["predictions"].as_array().unwrap() {
            assert!(
                !prediction["why"].as_str().unwrap().is_empty(),
                "{name}: every verdict says why"
            );
        }
    }
}

#[test]
fn the_refusal_names_the_owner_and_the_api_server_error() {
    let (_, report) = check_json(
        &fixture("kubectl-client-side.yaml"),
        &["--via", "server-side"],
    );
    let why = report["predictions"][0]["why"].as_str().unwrap();
    assert!(why.contains("kubectl-client-side-apply (Update)"), "{why}");
    assert!(why.contains(API_ERROR), "{why}");
    let (_, report) = check_json(&fixture("flux-server-side.yaml"), &["--via", "server-side"]);
    let why = report["predictions"][0]["why"].as_str().unwrap();
    assert!(why.contains("no field manager owns"), "{why}");
    assert_eq!(
        report["live"]["rolling_update"],
        json!({"maxSurge": "25%", "maxUnavailable": "25%"})
    );
    assert_eq!(
        report["topology_changes"],
        json!(["replicas 1 -> 2", "strategy RollingUpdate -> Recreate"])
    );
}

#[test]
fn a_changed_selector_is_refused_on_every_path() {
    // A Deployment whose selector is not the release's (control-plane
    // alone), as an older asogen rendered it: no apply path can change it.
    let live = std::fs::read_to_string(fixture("recreate.yaml")).unwrap();
    let other = live.replacen(
        "    matchLabels:\n      control-plane: controller-manager\n",
        "    matchLabels:\n      app.kubernetes.io/name: azure-service-operator\n      control-plane: controller-manager\n",
        1,
    );
    assert_ne!(live, other, "the fixture has the release's selector");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.yaml");
    std::fs::write(&path, other).unwrap();
    let (code, report) = check_json(&path, &ALL_PATHS);
    assert_eq!(code, Some(1));
    // no patch helps: the remedy is the orphaning delete
    assert_eq!(
        report["remedy"],
        "kubectl --namespace azureserviceoperator-system delete deployment azureserviceoperator-controller-manager --cascade=orphan"
    );
    assert!(report["remedy_patch"].is_null());
    let predictions = report["predictions"].as_array().unwrap();
    assert!(predictions.len() >= 4);
    for prediction in predictions {
        assert_eq!(prediction["verdict"], "refused", "{prediction}");
        let why = prediction["why"].as_str().unwrap();
        assert!(why.contains("field is immutable"), "{why}");
        assert!(why.contains("--cascade=orphan"), "{why}");
    }
    // The release's own selector upgrades in place.
    let (code, _) = check_json(&fixture("recreate.yaml"), &[]);
    assert_eq!(code, Some(0));
}

#[test]
fn via_and_field_manager_choose_the_paths() {
    let live = fixture("flux-server-side.yaml");
    let (code, report) = check_json(&live, &["--via", "client-side", "--via", "helm3"]);
    assert_eq!(code, Some(0), "the paths that clear the block: safe");
    assert_eq!(
        verdicts(&report),
        vec![row("client-side", "", "safe"), row("helm3", "", "safe")]
    );
    let (code, report) = check_json(
        &live,
        &[
            "--via",
            "server-side",
            "--field-manager",
            "argocd-controller",
        ],
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        verdicts(&report),
        vec![
            row("server-side", "kustomize-controller", "refused"),
            row("server-side", "argocd-controller", "refused"),
        ]
    );
}

#[test]
fn values_decide_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("keep-rolling.yaml");
    std::fs::write(
        &values,
        "replicaCount: 1\nstrategy:\n  type: RollingUpdate\nfeatureGates:\n  singleReplicaRollingUpdate: true\n",
    )
    .unwrap();
    let live = fixture("flux-server-side.yaml");
    let (code, report) = check_json(&live, &["-f", values.to_str().unwrap()]);
    assert_eq!(
        code,
        Some(0),
        "keeping RollingUpdate is safe everywhere: {report}"
    );
    assert_eq!(report["target"]["strategy"]["type"], "RollingUpdate");
    // Values the rules refuse: nothing to upgrade to, exit 1 with the rule id.
    let out = asogen(&[
        "upgrade-check",
        "--live",
        live.to_str().unwrap(),
        "--set",
        "strategy.type=RollingUpdate",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("ha-requires-recreate"));
}

fn patched(live: &Path, remedy: &str) -> Value {
    let patch_text = remedy
        .split_once("-p '")
        .and_then(|(_, rest)| rest.strip_suffix('\''))
        .unwrap_or_else(|| panic!("a -p '...' argument in {remedy}"));
    let patch: json_patch::Patch = serde_json::from_str(patch_text).unwrap();
    let mut object: Value = serde_yaml::from_str(&std::fs::read_to_string(live).unwrap()).unwrap();
    json_patch::patch(&mut object, &patch).expect("the remedy applies to the live object");
    object
}

#[test]
fn the_printed_remedy_yields_a_deployment_the_rules_and_kubernetes_accept() {
    let dir = tempfile::tempdir().unwrap();
    let mut to_validate = Vec::new();
    for name in [
        "kubectl-client-side.yaml",
        "helm3.yaml",
        "flux-server-side.yaml",
        "helm4-server-side.yaml",
        "flux-owns-block.yaml",
    ] {
        let live = fixture(name);
        let (_, report) = check_json(&live, &ALL_PATHS);
        let remedy = report["remedy"].as_str().unwrap();
        assert!(remedy.starts_with(
            "kubectl --namespace azureserviceoperator-system patch deployment azureserviceoperator-controller-manager --type=json -p '"
        ));
        let object = patched(&live, remedy);
        assert_eq!(
            object["spec"]["strategy"],
            json!({"type": "Recreate"}),
            "{name}"
        );

        // After the patch every path is safe.
        let after = dir.path().join(name);
        std::fs::write(&after, serde_yaml::to_string(&object).unwrap()).unwrap();
        let (code, report) = check_json(&after, &ALL_PATHS);
        assert_eq!(code, Some(0), "{name} after the remedy: {report}");

        // The patched shape, read back as values, passes the rules.
        let values = dir.path().join(format!("values-{name}"));
        let shape = json!({
            "replicaCount": object["spec"]["replicas"],
            "strategy": object["spec"]["strategy"],
        });
        std::fs::write(&values, serde_yaml::to_string(&shape).unwrap()).unwrap();
        let out = asogen(&["validate", "-f", values.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));

        // Without status and managedFields, as a manifest for the schema check.
        let mut manifest = object.clone();
        manifest.as_object_mut().unwrap().remove("status");
        manifest["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        // JSON (valid YAML) keeps timestamps quoted, as the API server sends them.
        let file = dir.path().join(format!("manifest-{name}"));
        std::fs::write(&file, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
        to_validate.push(file);
    }
    // The real Kubernetes 1.37 schema accepts the patched Deployments.
    let out = common::tool(python_tools().join("kubernetes-validate"))
        .args(["--strict", "--kubernetes-version", "1.37.0"])
        .args(&to_validate)
        .output()
        .expect("kubernetes-validate runs");
    let report = text(&out.stdout) + &text(&out.stderr);
    assert!(out.status.success(), "{report}");
    assert_eq!(report.matches("passed for resource").count(), 5, "{report}");
}

fn bad_live(name: &str, content: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let out = asogen(&["upgrade-check", "--live", path.to_str().unwrap()]);
    assert!(out.stdout.is_empty(), "no report for bad input");
    (out.status.code(), text(&out.stderr))
}

#[test]
fn bad_live_input_is_a_clear_error_with_exit_2() {
    let flux = std::fs::read_to_string(fixture("flux-server-side.yaml")).unwrap();

    let without_managed_fields: String = {
        let mut object: Value = serde_yaml::from_str(&flux).unwrap();
        object["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        serde_yaml::to_string(&object).unwrap()
    };
    let (code, err) = bad_live("plain.yaml", &without_managed_fields);
    assert_eq!(code, Some(2));
    assert!(err.contains("no metadata.managedFields"), "{err}");
    assert!(err.contains("--show-managed-fields"), "{err}");
    assert!(err.contains("plain.yaml:"), "names the file: {err}");

    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec: {}\n";
    let (code, err) = bad_live("service.yaml", service);
    assert_eq!(code, Some(2));
    assert!(err.contains("service.yaml:2:1"), "points at kind: {err}");
    assert!(err.contains("this is a Service, not a Deployment"), "{err}");

    let (code, err) = bad_live("broken.yaml", "kind: Deployment\nmetadata: [unclosed\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("broken.yaml:"), "{err}");
    assert!(err.contains("invalid YAML"), "{err}");

    let (code, err) = bad_live("list.yaml", "- 1\n- 2\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("must be a mapping"), "{err}");

    let two = format!(
        "apiVersion: v1\nkind: List\nitems:\n- {}\n- {}\n",
        json!({"kind": "Deployment"}),
        json!({"kind": "Deployment"})
    );
    let (code, err) = bad_live("two.yaml", &two);
    assert_eq!(code, Some(2));
    assert!(err.contains("holds 2 Deployments"), "{err}");

    let out = asogen(&["upgrade-check", "--live", "no/such/live.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/live.yaml"));
    assert!(text(&out.stderr).contains("cannot read live Deployment file"));
}

#[test]
fn a_list_with_one_deployment_is_read() {
    let flux: Value =
        serde_yaml::from_str(&std::fs::read_to_string(fixture("flux-server-side.yaml")).unwrap())
            .unwrap();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [flux], "metadata": {}});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("list.yaml");
    std::fs::write(&path, serde_yaml::to_string(&list).unwrap()).unwrap();
    let (code, report) = check_json(&path, &["--via", "server-side"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        report["live"]["name"],
        "azureserviceoperator-controller-manager"
    );
}

/// The live controller Deployment that asogen renders with `set` (its
/// `managedFields` as kubectl client-side apply leaves them), in a file.
fn rendered_live(dir: &Path, set: &str) -> PathBuf {
    let out = asogen(&[
        "template",
        "--set",
        set,
        "--show-only",
        "templates/deployment.yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut deployment: Value = serde_yaml::from_slice(&out.stdout).expect("one Deployment");
    deployment["metadata"]["managedFields"] = json!([{
        "manager": "kubectl-client-side-apply",
        "operation": "Update",
        "fieldsV1": {"f:spec": {"f:replicas": {}}}
    }]);
    let path = dir.join(format!("live-{set}.yaml"));
    std::fs::write(&path, serde_json::to_string(&deployment).unwrap()).unwrap();
    path
}

/// A change of topology is a migration: the report says so, both ways,
/// and names the plan that keeps the webhooks up; the same topology is none.
#[test]
fn a_change_of_topology_is_reported_as_a_migration_with_its_plan() {
    let dir = tempfile::tempdir().unwrap();
    let single = rendered_live(dir.path(), "topology=single");
    let split = rendered_live(dir.path(), "topology=split");
    for (live, set, migration) in [
        (&single, "topology=split", Some(("single", "split"))),
        (&split, "topology=single", Some(("split", "single"))),
        (&single, "topology=single", None),
        (&split, "topology=split", None),
    ] {
        let (_, report) = check_json(live, &["--set", set]);
        match migration {
            Some((from, to)) => {
                assert_eq!(report["migration"]["from"], from, "{report:#}");
                assert_eq!(report["migration"]["to"], to, "{report:#}");
                let plan = report["migration"]["plan"].as_str().unwrap();
                assert!(
                    plan.contains(&format!("upgrade-plan --from {from}")),
                    "{plan}"
                );
            }
            None => assert!(report["migration"].is_null(), "{report:#}"),
        }
    }
    let out = asogen(&[
        "upgrade-check",
        "--live",
        single.to_str().unwrap(),
        "--set",
        "topology=split",
    ]);
    let human = text(&out.stdout);
    assert!(
        human.contains("migration: topology single -> split")
            && human.contains("asogen upgrade-plan --from single"),
        "{human}"
    );
    // The bridge (a Helm migration's middle step) renders the single
    // controller, so only the values tell it: a migration in progress,
    // to finish before the version changes.
    for live in [&single, &split] {
        let (_, report) = check_json(live, &["--set", "topology=bridge"]);
        assert_eq!(report["migration"]["to"], "bridge", "{report:#}");
        assert_eq!(report["migration"]["in_progress"], true, "{report:#}");
        let plan = report["migration"]["plan"].as_str().unwrap();
        assert!(
            plan.contains("upgrade-plan --via helm --from bridge"),
            "{plan}"
        );
    }
    let out = asogen(&[
        "upgrade-check",
        "--live",
        single.to_str().unwrap(),
        "--set",
        "topology=bridge",
    ]);
    let human = text(&out.stdout);
    assert!(
        human.contains("migration: in progress") && human.contains("finish it first"),
        "{human}"
    );
    // Helm alone in use: the plan named is Helm's.
    let (_, report) = check_json(&single, &["--set", "topology=split", "--via", "helm3"]);
    let plan = report["migration"]["plan"].as_str().unwrap();
    assert!(plan.contains("--from single --via helm "), "{plan}");
}

/// Under topology split two Deployments are rendered: a live one is
/// compared with the rendered one of its own name. The split's webhooks
/// Deployment as asogen renders it, live under kubectl, upgrades to
/// itself on every path (it was compared with the controller's Deployment:
/// a selector change, and advice to delete it). Values that render no
/// Deployment of that name are an error at the live file's name.
#[test]
fn a_live_deployment_is_checked_against_the_rendered_one_of_its_name() {
    let split = root().join("values/profiles/split.yaml");
    let out = asogen(&[
        "template",
        "-f",
        split.to_str().unwrap(),
        "--show-only",
        "templates/deployment-webhooks.yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut live: Value = serde_yaml::from_slice(&out.stdout).unwrap();
    assert_eq!(live["metadata"]["name"], "azureserviceoperator-webhooks");
    live["metadata"]["namespace"] = json!("azureserviceoperator-system");
    live["metadata"]["managedFields"] = json!([{
        "manager": "kubectl-client-side-apply",
        "operation": "Update",
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}, "f:strategy": {
            "f:type": {}, "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}
        }}}
    }]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("webhooks.yaml");
    std::fs::write(&path, serde_yaml::to_string(&live).unwrap()).unwrap();

    let mut args = vec!["-f", split.to_str().unwrap()];
    args.extend_from_slice(&ALL_PATHS);
    let (code, report) = check_json(&path, &args);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["target"]["selector"], live["spec"]["selector"]);
    assert_eq!(report["target"]["strategy"]["type"], "RollingUpdate");
    for (kind, manager, verdict) in verdicts(&report) {
        assert_eq!(verdict, "safe", "{kind} {manager}: {report:#}");
    }

    // the single topology renders no webhooks Deployment
    let out = asogen(&["upgrade-check", "--live", path.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "no report: {}", text(&out.stdout));
    let line = serde_yaml::to_string(&live)
        .unwrap()
        .lines()
        .position(|l| l == "  name: azureserviceoperator-webhooks")
        .unwrap()
        + 1;
    assert!(
        err.contains(&format!("webhooks.yaml:{line}:3 (key `metadata.name`)")),
        "{err}"
    );
    assert!(
        err.contains("no Deployment named azureserviceoperator-webhooks (topology single: azureserviceoperator-controller-manager)"),
        "{err}"
    );
}

/// `--via` takes `upgrade-plan`'s words: each names the rows of its
/// applier; `--field-manager` still renames the server-side ones.
#[test]
fn via_takes_the_plans_words() {
    let live = fixture("flux-server-side.yaml");
    for (via, rows) in [
        (
            "helm",
            vec![row("helm3", "", "safe"), row("helm4", "", "refused")],
        ),
        (
            "flux",
            vec![row("server-side", "kustomize-controller", "refused")],
        ),
        (
            "argo",
            vec![
                row("client-side", "", "safe"),
                row("server-side", "argocd-controller", "refused"),
            ],
        ),
        ("kubectl", vec![row("server-side", "kubectl", "refused")]),
    ] {
        let (code, report) = check_json(&live, &["--via", via]);
        assert_eq!(verdicts(&report), rows, "--via {via}");
        assert_eq!(code, Some(1), "--via {via}");
        assert_eq!(report["paths_from"], "asked", "--via {via}");
    }
    let (_, report) = check_json(&live, &["--via", "flux", "--field-manager", "my-flux"]);
    assert_eq!(
        verdicts(&report),
        vec![row("server-side", "my-flux", "refused")]
    );
    // without --via: the paths the live object shows, and the report says so
    let (_, report) = check_json(&live, &[]);
    assert_eq!(report["paths_from"], "managed-fields");
    let out = asogen(&["upgrade-check", "--live", live.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains("checked:  the apply paths the live object's managedFields show in use (kustomize-controller (Apply))"),
        "{}",
        text(&out.stdout)
    );
}

/// The example of docs/upgrading.md is the real output, word for word.
#[test]
fn the_upgrading_page_shows_the_real_output() {
    let page = std::fs::read_to_string(root().join("docs/upgrading.md")).unwrap();
    let command = "$ asogen upgrade-check --live live.yaml -f my-values.yaml --via flux\n";
    let shown = page
        .split(command)
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/upgrading.md shows the upgrade-check example");
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("my-values.yaml");
    std::fs::write(&values, "").unwrap();
    let out = asogen(&[
        "upgrade-check",
        "--live",
        fixture("flux-server-side.yaml").to_str().unwrap(),
        "-f",
        values.to_str().unwrap(),
        "--via",
        "flux",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(shown, text(&out.stdout));
}

/// A version change is flagged whatever else changes, a migration
/// included; the remedy suggests nothing asogen would warn about or
/// refuse.
#[test]
fn a_version_change_is_flagged_and_no_remedy_contradicts_the_rules() {
    let live = fixture("kubectl-client-side.yaml");
    for set in ["topology=single", "topology=split"] {
        let (_, report) = check_json(&live, &["--set", set]);
        assert_eq!(report["version_change"], "v2.10.0 -> v2.20.0", "{set}");
        let out = asogen(&[
            "upgrade-check",
            "--live",
            live.to_str().unwrap(),
            "--set",
            set,
        ]);
        let human = text(&out.stdout);
        assert!(human.contains("version:  v2.10.0 -> v2.20.0"), "{human}");
        if set == "topology=split" {
            assert!(
                human.contains("and the version changes too: move first"),
                "{human}"
            );
            // the move it suggests, at the live version, is valid as it is
            let out = asogen(&["validate", "--set", set, "--set", "image.tag=v2.10.0"]);
            assert_eq!(out.status.code(), Some(0));
            assert!(
                !text(&out.stdout).contains("warning"),
                "{}",
                text(&out.stdout)
            );
        }
    }
    let (_, report) = check_json(&live, &["--set", "image.tag=v2.10.0"]);
    assert!(report["version_change"].is_null(), "{report:#}");
    // every remedy of every fixture: no values it names breaks a rule
    for name in [
        "flux-owns-block.yaml",
        "flux-server-side.yaml",
        "helm3.yaml",
        "helm4-server-side.yaml",
        "kubectl-client-side.yaml",
        "recreate.yaml",
    ] {
        let out = asogen(&[
            "upgrade-check",
            "--live",
            fixture(name).to_str().unwrap(),
            "--via",
            "helm",
            "--via",
            "flux",
            "--via",
            "argo",
            "--via",
            "kubectl",
        ]);
        let human = text(&out.stdout);
        assert!(
            !human.contains("RollingUpdate for now")
                && !human.contains("singleReplicaRollingUpdate"),
            "{name}: a remedy that validate warns about: {human}"
        );
    }
}
