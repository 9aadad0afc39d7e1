//! The binary, run like a user runs it: render, check, validate, template.

use crate::common;

use common::{Expect, asogen, asogen_in, cases, text};
use serde_json::Value;

#[test]
fn generated_folder_is_up_to_date() {
    let out = asogen(&["render", "--check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "generated/ is stale; run `cargo xtask regen`\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[test]
fn render_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = common::root().join("values/profiles");
    let profiles = profiles.to_str().unwrap();
    for name in ["one", "two"] {
        let out = asogen_in(
            dir.path(),
            &["render", "--out", name, "--profiles", profiles],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let diff = std::process::Command::new("diff")
        .args(["-r", "one", "two"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(diff.status.success(), "{}", text(&diff.stdout));
    // And equal to the committed tree.
    let out = asogen_in(
        dir.path(),
        &["render", "--check", "--out", "one", "--profiles", profiles],
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn render_check_reports_a_changed_file_with_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = common::root().join("values/profiles");
    let profiles = profiles.to_str().unwrap();
    asogen_in(
        dir.path(),
        &["render", "--out", "gen", "--profiles", profiles],
    );
    let file = dir
        .path()
        .join("gen/charts/azure-service-operator/values.yaml");
    let original = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        original.replace("replicaCount: 2", "replicaCount: 5"),
    )
    .unwrap();
    std::fs::write(dir.path().join("gen/stray.txt"), "x").unwrap();
    let out = asogen_in(
        dir.path(),
        &["render", "--check", "--out", "gen", "--profiles", profiles],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("-replicaCount: 5") && stdout.contains("+replicaCount: 2"),
        "{stdout}"
    );
    assert!(stdout.contains("stray.txt"));
    // The command that updates gen/, not generated/.
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "run `asogen render --out gen --profiles {profiles}` to update"
        )),
        "{stderr}"
    );
    // --check wrote nothing.
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("replicaCount: 5")
    );
}

#[test]
fn render_into_a_file_fails_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = common::root().join("values/profiles");
    std::fs::write(dir.path().join("gen"), "precious").unwrap();
    let out = asogen_in(
        dir.path(),
        &[
            "render",
            "--out",
            "gen",
            "--profiles",
            profiles.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("gen exists and is not a folder") && stderr.contains("unchanged"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("gen")).unwrap(),
        "precious"
    );
    // Nothing staged or left behind next to it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["gen"]);
}

#[test]
fn an_invalid_profile_is_never_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir(&profiles).unwrap();
    std::fs::write(profiles.join("ha.yaml"), "replicaCount: 2\n").unwrap();
    std::fs::write(
        profiles.join("bad.yaml"),
        "replicaCount: 2\nstrategy:\n  type: RollingUpdate\n",
    )
    .unwrap();
    let out = asogen_in(
        dir.path(),
        &["render", "--out", "gen", "--profiles", "profiles"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("ha-requires-recreate") && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(!dir.path().join("gen").exists());
    // No staging folder and no lock file left beside it either.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn json_diagnostics(path: &std::path::Path) -> (Option<i32>, Vec<Value>) {
    let out = asogen(&["validate", "--format", "json", "-f", path.to_str().unwrap()]);
    let parsed: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {}", path.display(), text(&out.stdout)));
    (out.status.code(), parsed.as_array().unwrap().clone())
}

#[test]
fn every_case_gets_its_verdict_and_exactly_its_rule_ids() {
    for (path, expect) in cases() {
        let (code, diagnostics) = json_diagnostics(&path);
        let name = path.display();
        match &expect {
            Expect::Valid => {
                assert_eq!(code, Some(0), "{name}: {diagnostics:?}");
                // A valid file may carry warnings (crdLabels on a
                // controller without --crd-labels), never an error.
                assert!(
                    diagnostics.iter().all(|d| d["severity"] == "warning"),
                    "{name}: {diagnostics:?}"
                );
            }
            Expect::Rules(ids) => {
                assert_eq!(code, Some(1), "{name}");
                // Warnings (what a shape does on upgrade) beside the errors
                // are not verdicts.
                let mut got: Vec<String> = diagnostics
                    .iter()
                    .filter(|d| d["severity"] == "error")
                    .map(|d| d["rule"].as_str().unwrap_or("<schema>").to_string())
                    .collect();
                got.sort();
                assert_eq!(&got, ids, "{name}");
            }
            Expect::Schema => {
                assert_eq!(code, Some(1), "{name}");
                assert!(!diagnostics.is_empty(), "{name}");
                assert!(
                    diagnostics
                        .iter()
                        .all(|d| d["rule"].is_null() && d["keyword"].is_string()),
                    "{name}: {diagnostics:?}"
                );
            }
        }
        for d in &diagnostics {
            assert!(
                d["file"]
                    .as_str()
                    .unwrap()
                    .ends_with(path.file_name().unwrap().to_str().unwrap())
            );
            assert!(d["line"].as_u64().is_some_and(|l| l >= 1), "{name}: {d}");
            assert!(d["column"].as_u64().is_some_and(|c| c >= 1), "{name}: {d}");
            assert!(!d["key"].as_str().unwrap().is_empty(), "{name}: {d}");
            assert!(
                d["help"].as_str().is_some_and(|h| !h.is_empty()),
                "{name}: {d}"
            );
        }
    }
}

/// A rule that values can break has a case in tests/cases that expects
/// it, so every test that runs the cases (asogen, Helm's engine and the
/// editor, tests/real_tools.rs) sees it: adding such a rule demands its
/// fixture. (Rules only the cluster can see are tested in
/// tests/split_rules.rs.)
#[test]
fn every_rule_values_can_break_has_a_case() {
    let expected: Vec<String> = cases()
        .into_iter()
        .flat_map(|(_, expect)| match expect {
            Expect::Rules(ids) => ids,
            _ => Vec::new(),
        })
        .collect();
    for rule in asogen::rules::RULES {
        if !rule.values_breach().is_empty() {
            assert!(
                expected.iter().any(|id| id == rule.id),
                "no file of tests/cases expects {}; add one whose first line is `# expect: invalid {}`",
                rule.id,
                rule.id
            );
        }
    }
}

/// Each rule a case breaks is reported at the line that says so, the key
/// that breaks it: a case marks that line `# <- RULE-ID` (several ids
/// when one key breaks several rules), and every expected rule has its
/// mark.
#[test]
fn every_rule_breach_is_reported_at_the_line_of_the_key_that_breaks_it() {
    let mut checked = 0;
    for (path, expect) in cases() {
        let Expect::Rules(ids) = expect else {
            continue;
        };
        let name = path.display();
        let text = std::fs::read_to_string(&path).unwrap();
        let marked = |rule: &str| -> Vec<u64> {
            text.lines()
                .enumerate()
                .filter(|(_, line)| {
                    line.split_once("# <- ")
                        .is_some_and(|(_, ids)| ids.split_whitespace().any(|id| id == rule))
                })
                .map(|(i, _)| i as u64 + 1)
                .collect()
        };
        let (_, diagnostics) = json_diagnostics(&path);
        for id in &ids {
            let lines = marked(id);
            assert_eq!(lines.len(), 1, "{name}: one line marked `# <- {id}`");
            let reported: Vec<u64> = diagnostics
                .iter()
                .filter(|d| d["rule"] == id.as_str())
                .filter_map(|d| d["line"].as_u64())
                .collect();
            assert_eq!(reported, lines, "{name}: {id} reported at its key's line");
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} breaches");
}

#[test]
fn a_broken_file_names_file_line_column_key_rules_and_help() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.yaml");
    std::fs::write(
        &file,
        "# mine\nreplicaCount: 3\nstrategy:\n  type: RollingUpdate\n",
    )
    .unwrap();
    let out = asogen_in(dir.path(), &["validate", "-f", "broken.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let expected = "error[ha-requires-recreate]: replicaCount is 3, so strategy.type must be Recreate (got RollingUpdate)\n  --> broken.yaml:4:9 (key `strategy.type`)\n";
    assert!(stdout.contains(expected), "{stdout}");
    assert!(stdout.contains("4 |   type: RollingUpdate\n"), "{stdout}");
    assert!(stdout.contains("^^^^^^^^^^^^^"), "{stdout}");
    assert!(
        stdout.contains("error[rolling-update-needs-feature-gate]"),
        "{stdout}"
    );
    assert!(stdout.contains("help: set strategy.type: Recreate, or replicaCount: 1 with featureGates.singleReplicaRollingUpdate: true"));
    assert!(stdout.contains("2 problems found"));
}

#[test]
fn typos_get_did_you_mean() {
    let typo = common::root().join("tests/cases/typo-key.yaml");
    let (_, d) = json_diagnostics(&typo);
    assert_eq!(d[0]["help"], "did you mean `replicaCount`?");
    assert_eq!(
        (d[0]["line"].as_u64(), d[0]["column"].as_u64()),
        (Some(2), Some(1))
    );
    let enum_typo = common::root().join("tests/cases/unknown-strategy.yaml");
    let (_, d) = json_diagnostics(&enum_typo);
    assert_eq!(d[0]["help"], "did you mean `RollingUpdate`?");
    assert_eq!(d[0]["key"], "strategy.type");
}

#[test]
fn templated_values_are_evaluated_as_helm_does_and_other_templates_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.yaml");
    std::fs::write(
        &good,
        "image:\n  repositoryBase: reg.example.com/aso\n  tag: v9\n  repository: \"{{ .Values.image.repositoryBase }}:{{ .Values.image.tag }}\"\nmetrics:\n  address: \"127.0.0.1:{{ .Values.metrics.port }}\"\n",
    )
    .unwrap();
    let out = asogen(&["template", "-f", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("image: reg.example.com/aso:v9"), "{stdout}");
    assert!(stdout.contains("--metrics-addr=127.0.0.1:8443"), "{stdout}");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "image:\n  repository: '{{ include \"x\" . }}:v1'\nmetrics:\n  address: '{{ .Values.metrics.nope.deeper }}'\n",
    )
    .unwrap();
    let (code, d) = json_diagnostics(&bad);
    assert_eq!(code, Some(1));
    let keys: Vec<_> = d.iter().map(|d| d["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["image.repository", "metrics.address"]);
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .contains("only {{ .Values.KEY }}")
    );
    assert!(
        d[1]["message"]
            .as_str()
            .unwrap()
            .contains("nil pointer evaluating interface {}.deeper")
    );
}

#[test]
fn bad_input_gets_a_clear_error_and_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &[u8]| std::fs::write(dir.path().join(name), body).unwrap();
    write("unclosed.yaml", b"replicaCount: [1, 2\n");
    write("dupe.yaml", b"replicaCount: 1\nreplicaCount: 2\n");
    write("list.yaml", b"- a\n- b\n");
    write("latin1.yaml", b"azureTenantID: caf\xe9\n");
    write("empty.yaml", b"");
    write("tab.yaml", b"strategy:\n\ttype: Recreate\n");
    write("huge.yaml", b"replicaCount: 99999999999999999999999\n");
    let cases: [(&str, i32, &str); 9] = [
        ("unclosed.yaml", 1, "unclosed.yaml:"),
        ("dupe.yaml", 1, "duplicate key `replicaCount`"),
        ("list.yaml", 1, "must be a mapping of keys, not a list"),
        ("latin1.yaml", 1, "not UTF-8"),
        ("empty.yaml", 0, "valid"),
        ("tab.yaml", 1, "tab.yaml:2:"),
        ("huge.yaml", 1, "too large"),
        ("missing.yaml", 2, "cannot read values file"),
        (".", 2, "is a directory"),
    ];
    for (file, code, needle) in cases {
        let out = asogen_in(dir.path(), &["validate", "-f", file]);
        let all = text(&out.stdout) + &text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{file}: {all}");
        assert!(
            all.contains(needle),
            "{file}: expected {needle:?} in\n{all}"
        );
    }
}

#[test]
fn template_prints_the_install_and_honours_set_and_namespace() {
    let out = asogen(&["template", "--set", "replicaCount=3", "--namespace", "ops"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let objects = common::objects(&text(&out.stdout));
    let deployment = &objects[&(
        "Deployment".into(),
        "ops".into(),
        "azureserviceoperator-controller-manager".into(),
    )];
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(
        deployment["spec"]["strategy"],
        serde_json::json!({"type": "Recreate", "rollingUpdate": null}),
        "Recreate carries an explicit null so upgrades delete a defaulted block"
    );
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(args.contains("--enable-leader-election"));
    let refused = asogen(&["template", "--set", "strategy.type=RollingUpdate"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("ha-requires-recreate"));
    assert!(
        refused.stdout.is_empty(),
        "nothing rendered for invalid values"
    );
}

#[test]
fn later_files_win_and_maps_merge() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), "replicaCount: 1\nstrategy:\n  type: RollingUpdate\nfeatureGates:\n  singleReplicaRollingUpdate: true\n").unwrap();
    std::fs::write(dir.path().join("b.yaml"), "replicaCount: 2\n").unwrap();
    let out = asogen_in(
        dir.path(),
        &[
            "validate", "--format", "json", "-f", "a.yaml", "-f", "b.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d[0]["rule"], "ha-requires-recreate");
    // Points at the file that set the offending value.
    assert_eq!(d[0]["file"], "a.yaml");
    assert_eq!(d[0]["line"], 3);
}

#[test]
fn secrets_never_appear_in_messages() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "azureClientSecret: 12345\nazureClientCertificatePassword: [hunter2]\n",
    )
    .unwrap();
    let out = asogen_in(dir.path(), &["validate", "-f", "s.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(all.contains("azureClientSecret"));
    // The human format shows the source line; the message itself must not echo the value.
    let json = asogen_in(
        dir.path(),
        &["validate", "--format", "json", "-f", "s.yaml"],
    );
    let d: Value = serde_json::from_slice(&json.stdout).unwrap();
    for item in d.as_array().unwrap() {
        let message = item["message"].as_str().unwrap();
        assert!(
            !message.contains("12345") && !message.contains("hunter2"),
            "{message}"
        );
    }
}

#[test]
fn schema_command_prints_the_published_schema() {
    let out = asogen(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let printed = text(&out.stdout);
    let shipped = std::fs::read_to_string(
        common::root().join("generated/charts/azure-service-operator/values.schema.json"),
    )
    .unwrap();
    assert_eq!(printed, shipped);
    let schema: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
}

#[test]
fn a_closed_output_pipe_is_no_panic_and_a_full_disk_is_an_error() {
    // `asogen ... | true`: the reader is gone before asogen writes; asogen
    // stops writing quietly and exits with its own code.
    let with_closed_stdout = |args: &[&str]| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_asogen"))
            .args(args)
            .current_dir(common::root())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        child.wait_with_output().unwrap()
    };
    let out = with_closed_stdout(&["template", "-f", "tests/cases/default-ha.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    // Invalid values still exit 1.
    let out = with_closed_stdout(&["validate", "-f", "tests/cases/ha-rolling-without-gate.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    // A write that fails for another reason (a full disk) is reported
    // and the command fails.
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_asogen"))
        .arg("schema")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot write to standard output: No space left on device"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = asogen(&["validate", "--format", "xml"]);
    assert_eq!(out.status.code(), Some(2));
    let out = asogen(&["nonsense"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn github_format_prints_workflow_annotations() {
    let case = common::root().join("tests/cases/ha-rolling-without-gate.yaml");
    let out = asogen(&[
        "validate",
        "--format",
        "github",
        "-f",
        case.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(lines[0].starts_with("::error file="), "{stdout}");
    assert!(
        lines[0].contains(",line=4,col=9,title=ha-requires-recreate::replicaCount is 2"),
        "{stdout}"
    );
    assert!(
        lines[1].contains("title=rolling-update-needs-feature-gate::"),
        "{stdout}"
    );
}

/// An invalid profile stops the render before anything is rendered or
/// written, wherever it sorts among the profiles. The affinity typo passes
/// the typed model (Kubernetes types ignore unknown fields) and is caught
/// only by the schema.
#[test]
fn an_invalid_profile_stops_render_and_writes_nothing() {
    for (body, expected) in [
        ("affinity:\n  nodeAffinty: {}\n", "affinity.nodeAffinty"),
        (
            "replicaCount: 2\nstrategy:\n  type: RollingUpdate\n",
            "ha-requires-recreate",
        ),
        ("replicaCont: 2\n", "did you mean `replicaCount`"),
    ] {
        // The broken profile alone, as the base beside a valid profile, and
        // as the other profile beside a valid base.
        let valid_ha = "replicaCount: 2\n";
        let valid_other = std::fs::read_to_string(
            common::root().join("values/profiles/single-replica-rolling.yaml"),
        )
        .unwrap();
        for (broken, files) in [
            ("ha.yaml", vec![("ha.yaml", body)]),
            (
                "ha.yaml",
                vec![("ha.yaml", body), ("other.yaml", &valid_other)],
            ),
            (
                "other.yaml",
                vec![("ha.yaml", valid_ha), ("other.yaml", body)],
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let profiles = dir.path().join("profiles");
            std::fs::create_dir(&profiles).unwrap();
            for (name, text) in &files {
                std::fs::write(profiles.join(name), text).unwrap();
            }
            let out = dir.path().join("out");
            let run = asogen(&[
                "render",
                "--out",
                out.to_str().unwrap(),
                "--profiles",
                profiles.to_str().unwrap(),
            ]);
            assert_eq!(run.status.code(), Some(1), "{body} in {broken}");
            let err = text(&run.stderr);
            assert!(
                err.contains(broken) && err.contains(expected),
                "{body} in {broken}: {err}"
            );
            assert!(err.contains("nothing was written"), "{err}");
            assert!(!out.exists(), "{body} in {broken}: nothing written");
        }
    }
}

/// The plan `upgrade-plan` prints as JSON for these arguments.
fn plan_json(args: &[&str]) -> Value {
    let mut all = vec!["upgrade-plan", "-o", "json"];
    all.extend(args);
    let out = asogen(&all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_str(&text(&out.stdout)).unwrap()
}

/// The objects `upgrade-plan --manifest N` prints.
fn plan_manifest(args: &[&str], n: &str) -> Vec<Value> {
    let mut all = vec!["upgrade-plan", "--manifest", n];
    all.extend(args);
    let out = asogen(&all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    common::objects(&text(&out.stdout)).into_values().collect()
}

#[test]
fn upgrade_plan_for_a_single_install_is_one_step_on_every_path() {
    for via in ["helm", "flux", "argo", "kubectl"] {
        let plan = plan_json(&["--via", via, "-n", "ops"]);
        assert_eq!(plan["topology"], "single", "{via}");
        let steps = plan["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1, "{via}: {plan:#}");
        assert_eq!(steps[0]["part"], "all");
        assert_eq!(
            steps[0]["wait"],
            serde_json::json!(["azureserviceoperator-controller-manager"])
        );
        // step 1's objects are the install, as template renders it (with
        // the namespace on kubectl's path, a first install)
        let manifest = plan_manifest(&["--via", via, "-n", "ops"], "1");
        let template = if via == "kubectl" {
            asogen(&["template", "-n", "ops", "--create-namespace"])
        } else {
            asogen(&["template", "-n", "ops"])
        };
        let mut expected: Vec<Value> = common::objects(&text(&template.stdout))
            .into_values()
            .collect();
        let mut got = manifest;
        let key = |o: &Value| o.to_string();
        expected.sort_by_key(key);
        got.sort_by_key(key);
        assert_eq!(got, expected, "{via}");
    }
    let out = asogen(&[
        "upgrade-plan",
        "--via",
        "kubectl",
        "-n",
        "ops",
        "-f",
        "values/profiles/single-replica-rolling.yaml",
    ]);
    let human = text(&out.stdout);
    assert!(
        human.contains("$ asogen upgrade-plan --via kubectl -n ops -f values/profiles/single-replica-rolling.yaml --manifest 1 | kubectl apply --server-side --force-conflicts -f -\n")
            && human.contains("$ kubectl rollout status deployment/azureserviceoperator-controller-manager -n ops --timeout=10m\n"),
        "{human}"
    );
}

#[test]
fn upgrade_plan_refuses_what_it_cannot_plan() {
    let out = asogen(&["upgrade-plan", "--via", "kubectl", "--manifest", "7"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "there is no step 7\nhelp: run `asogen upgrade-plan --via kubectl` without --manifest"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = asogen(&[
        "upgrade-plan",
        "--via",
        "kubectl",
        "--set",
        "strategy.type=RollingUpdate",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("ha-requires-recreate"));
    let out = asogen(&["upgrade-plan", "--via", "ansible"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("[possible values: helm, flux, argo, kubectl]"));
    let out = asogen(&["upgrade-plan"]);
    assert_eq!(out.status.code(), Some(2), "--via is required");
}

/// Helm migrates through `topology: bridge`: two whole-release steps,
/// the first with `--set topology=bridge`, each of whose objects is what
/// `template` renders for it; values that are the bridge get no plan.
#[test]
fn upgrade_plan_migrates_helm_through_the_bridge() {
    let sorted = |mut objects: Vec<Value>| {
        objects.sort_by_key(|o| o.to_string());
        objects
    };
    let template = |args: &[&str]| {
        let mut all = vec!["template", "-n", "ops"];
        all.extend(args);
        let out = asogen(&all);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        sorted(common::objects(&text(&out.stdout)).into_values().collect())
    };
    for (from, values) in [
        ("single", vec!["-f", "values/profiles/split.yaml"]),
        ("split", vec![]),
    ] {
        let mut args = vec!["--via", "helm", "--from", from, "-n", "ops"];
        args.extend(&values);
        let plan = plan_json(&args);
        assert_eq!(plan["from"], from, "{plan:#}");
        let steps = plan["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2, "{plan:#}");
        assert_eq!(
            steps[0]["set"],
            serde_json::json!([{"key": "topology", "value": "bridge"}])
        );
        assert!(
            steps[0]["commands"][0]
                .as_str()
                .unwrap()
                .contains("--set topology=bridge --wait"),
            "{plan:#}"
        );
        assert_eq!(steps[1]["set"], serde_json::json!([]));
        let mut bridge = values.clone();
        bridge.extend(["--set", "topology=bridge"]);
        assert_eq!(
            sorted(plan_manifest(&args, "1")),
            template(&bridge),
            "{from}"
        );
        assert_eq!(
            sorted(plan_manifest(&args, "2")),
            template(&values),
            "{from}"
        );
    }
    let out = asogen(&["upgrade-plan", "--via", "helm", "--set", "topology=bridge"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("finish the migration first"),
        "{}",
        text(&out.stderr)
    );
    let out = asogen(&["upgrade-plan", "--via", "kubectl", "--from", "bridge"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--via helm --from bridge"));
}

/// The printed commands repeat the `-f` files, never a `--set` value.
#[test]
fn upgrade_plan_never_prints_a_set_value() {
    for format in ["human", "json"] {
        let out = asogen(&[
            "upgrade-plan",
            "--via",
            "helm",
            "-o",
            format,
            "--set-string",
            "azureClientSecret=s3cr3t-value",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let printed = text(&out.stdout);
        assert!(!printed.contains("s3cr3t"), "{printed}");
        assert!(printed.contains("<your --set flags>"), "{printed}");
    }
}

#[test]
fn upgrade_plan_is_in_the_help_and_the_completions() {
    let help = text(&asogen(&["--help"]).stdout);
    assert!(help.contains("\n  upgrade-plan "), "{help}");
    for shell in ["bash", "zsh", "fish"] {
        let script = text(&asogen(&["completions", shell]).stdout);
        assert!(script.contains("upgrade-plan"), "{shell}");
        assert!(script.contains("kubectl"), "{shell}: the --via values");
    }
}

/// The split's plan: the webhooks before the controller on every path, and
/// each step's objects are the install's (nothing lost, nothing added but
/// the step's values and Argo CD's waves).
#[test]
fn upgrade_plan_for_a_split_install_orders_the_webhooks_first() {
    let split = ["-f", "values/profiles/split.yaml", "-n", "ops"];
    let with = |via: &'static str| {
        let mut args = vec!["--via", via];
        args.extend(split);
        args
    };
    let names = |objects: &[Value], kind: &str| -> Vec<String> {
        objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut template_args = vec!["template"];
    template_args.extend(split);
    let install: Vec<Value> = common::objects(&text(&asogen(&template_args).stdout))
        .into_values()
        .collect();
    // kubectl and Flux: the webhooks part, then the controller part, then
    // (only when kinds were added) the webhooks part again
    for via in ["kubectl", "flux"] {
        let plan = plan_json(&with(via));
        assert_eq!(plan["topology"], "split");
        let steps = plan["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 3, "{via}: {plan:#}");
        assert_eq!(
            steps[0]["wait"],
            serde_json::json!(["azureserviceoperator-webhooks"])
        );
        assert_eq!(
            steps[1]["wait"],
            serde_json::json!(["azureserviceoperator-controller-manager"])
        );
        assert_eq!(steps[2]["when"], "kinds-added");
        let first = plan_manifest(&with(via), "1");
        let second = plan_manifest(&with(via), "2");
        assert_eq!(
            names(&first, "Deployment"),
            ["azureserviceoperator-webhooks"]
        );
        assert_eq!(
            names(&second, "Deployment"),
            ["azureserviceoperator-controller-manager"]
        );
        // kubectl's first step also creates the namespace (a first install)
        let namespaces = first.iter().filter(|o| o["kind"] == "Namespace").count();
        assert_eq!(namespaces, usize::from(via == "kubectl"), "{via}");
        assert_eq!(
            first.len() - namespaces + second.len(),
            install.len(),
            "{via}: every object once"
        );
        let refresh = plan_manifest(&with(via), "3");
        let deployment = &refresh[refresh
            .iter()
            .position(|o| o["kind"] == "Deployment")
            .unwrap()];
        let token = &steps[2]["set"][0];
        assert_eq!(token["key"], "split.webhooks.refreshToken");
        assert_eq!(
            deployment["spec"]["template"]["metadata"]["annotations"]["asogen/webhooks-refresh-token"],
            token["value"],
            "{via}: the refresh token is on the webhook pods"
        );
    }
    // Helm: step 1 holds the controller at zero replicas, step 2 releases it
    let paused = plan_manifest(&with("helm"), "1");
    let resumed = plan_manifest(&with("helm"), "2");
    let replicas = |objects: &[Value]| {
        objects
            .iter()
            .find(|o| {
                o["kind"] == "Deployment"
                    && o["metadata"]["name"] == "azureserviceoperator-controller-manager"
            })
            .map(|o| o["spec"]["replicas"].clone())
            .unwrap()
    };
    assert_eq!(replicas(&paused), 0);
    assert_eq!(replicas(&resumed), 2);
    assert_eq!(paused.len(), install.len());
    // Argo CD: one sync, every object in a wave, the webhooks before the controller
    let argo = plan_manifest(&with("argo"), "1");
    assert_eq!(argo.len(), install.len());
    let wave = |name: &str| -> i64 {
        let o = argo
            .iter()
            .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == name)
            .unwrap();
        o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        argo.iter()
            .all(|o| o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"].is_string())
    );
    assert!(
        wave("azureserviceoperator-webhooks") < wave("azureserviceoperator-controller-manager")
    );
}

/// What asogen says of the single-replica rolling shape is what ASO does
/// with it (docs/aso-facts.md F12, observed on ASO 2.20.0's manager):
/// a version upgrade does not finish. `validate` warns at strategy.type,
/// `upgrade-plan` says what to do for a version upgrade, and the README no
/// longer calls the shape safe for upgrades.
#[test]
fn the_single_replica_rolling_shape_is_said_to_stall_on_version_upgrades() {
    let profile = "values/profiles/single-replica-rolling.yaml";
    let out = asogen(&["validate", "-f", profile]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout) + &text(&out.stderr);
    assert!(
        report.contains("warning[upgrade]")
            && report.contains("a version upgrade does not finish")
            && report.contains("(key `strategy.type`)"),
        "{report}"
    );
    let plan = asogen(&["upgrade-plan", "--via", "kubectl", "-f", profile]);
    assert!(
        text(&plan.stdout).contains("a version upgrade does not finish"),
        "{}",
        text(&plan.stdout)
    );
    // The default topologies warn of nothing of the kind.
    for values in [&["validate"][..], &["validate", "--set", "topology=split"]] {
        let out = asogen(values);
        assert!(
            !text(&out.stdout).contains("warning[upgrade]"),
            "{values:?}"
        );
    }
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    assert!(!readme.contains("is safe and keeps webhooks up during\nupgrades"));
    assert!(readme.contains("version upgrade of that shape does not finish"));
}

/// Helm's plugin runner takes `-n` off a plugin's arguments and passes
/// HELM_NAMESPACE instead, so an explicit `-n` means asogen was not started
/// by it, even inside another plugin's environment (`helm diff` running
/// asogen, with HELM_PLUGIN_NAME, HELM_NAMESPACE and HELM_KUBECONTEXT set):
/// the explicit namespace is honoured, in each way it can be written, and
/// the cluster flags Helm would have passed are not asogen's to refuse.
#[test]
fn an_explicit_namespace_is_honoured_inside_another_plugins_environment() {
    let dir = tempfile::tempdir().unwrap();
    let another_plugin = [
        ("HELM_PLUGIN_NAME", "diff"),
        ("HELM_NAMESPACE", "default"),
        ("HELM_KUBECONTEXT", "prod-cluster"),
    ];
    let written: [&[&str]; 4] = [
        &["-n", "team-aso"],
        &["--namespace", "team-aso"],
        &["--namespace=team-aso"],
        &["-nteam-aso"],
    ];
    let commands: [&[&str]; 2] = [&["template"], &["upgrade-plan", "--via", "kubectl"]];
    for command in commands {
        let mut plain = command.to_vec();
        plain.extend(["-n", "team-aso"]);
        let expected = text(&asogen(&plain).stdout);
        assert!(expected.contains("team-aso"), "{command:?}: {expected}");
        for namespace in written {
            let mut args = command.to_vec();
            args.extend(namespace);
            let out = common::asogen_with_env(dir.path(), &args, &another_plugin);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{args:?}: {}",
                text(&out.stderr)
            );
            assert_eq!(text(&out.stdout), expected, "{args:?}");
        }
    }
    // Without -n, inside asogen's own plugin environment, Helm's namespace
    // stands, and a cluster flag Helm passed is refused.
    let helms = [("HELM_PLUGIN_NAME", "asogen"), ("HELM_NAMESPACE", "prod")];
    let out = common::asogen_with_env(dir.path(), &["template"], &helms);
    assert_eq!(
        text(&out.stdout),
        text(&asogen(&["template", "-n", "prod"]).stdout)
    );
    let out = common::asogen_with_env(dir.path(), &["template"], &another_plugin);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("contacts no cluster"));
}

/// `--profile NAME` is the built-in profile, byte for byte the one of
/// values/profiles (which `show profile` prints), applied before the -f
/// files: its render is the file's render, from any folder; an unknown
/// name, a name given to `show values`, or `show profile` alone are usage
/// errors (exit 2) naming the profiles; a later file that undoes a profile
/// key gets a warning at that key.
#[test]
fn a_profile_is_built_in_applied_first_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["ha", "single-replica-rolling", "split"] {
        let file = common::root().join(format!("values/profiles/{name}.yaml"));
        let shown = asogen_in(dir.path(), &["show", "profile", name]);
        assert_eq!(shown.status.code(), Some(0));
        assert_eq!(text(&shown.stdout), std::fs::read_to_string(&file).unwrap());
        let by_name = asogen_in(dir.path(), &["template", "--profile", name]);
        let by_file = asogen(&["template", "-f", file.to_str().unwrap()]);
        assert_eq!(by_name.status.code(), Some(0), "{}", text(&by_name.stderr));
        assert_eq!(text(&by_name.stdout), text(&by_file.stdout), "{name}");
    }
    for args in [
        &["template", "--profile", "nope"][..],
        &["validate", "--profile", "../values/profiles/split"],
        &["show", "profile"],
        &["show", "values", "split"],
        &["show", "profile", "split.yaml"],
    ] {
        let out = asogen_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("split") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
    // a file after the profile wins, as Helm merges; the undo is warned at
    // its line, and what the profile left alone is not
    std::fs::write(
        dir.path().join("v.yaml"),
        "replicaCount: 2\ntopology: single\n",
    )
    .unwrap();
    let out = asogen_in(
        dir.path(),
        &["validate", "--profile", "split", "-f", "v.yaml"],
    );
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .contains("warning[profile]: `topology` is single here, which undoes --profile split")
            && stdout.contains("v.yaml:2:1"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("warning[profile]").count(), 1, "{stdout}");
}
