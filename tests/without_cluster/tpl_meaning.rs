//! The values the chart evaluates with `tpl` (`image.repository`,
//! `metrics.address`) mean what they mean to Helm, or are refused by
//! asogen and by the chart alike; and no secret reaches the pod spec
//! through them.
//!
//! The expressions are generated: every name a template resolves in the
//! data Helm v4's engine gives `tpl` (tests/tools/helm-names reads Helm's
//! own types: the methods of its values type, `.Release`, `.Chart`,
//! `.Capabilities`, `.Template`, `.Files`, ...), the values type's
//! methods at nested positions and as user keys (nested; and top-level,
//! which the schema refuses, with Helm skipping the schema so that the
//! chart's guard alone must refuse them), every key path
//! `is_secret_name` marks (from the values schema, and misspelt, cut and
//! user keys), the maps and lists holding secrets, and plain keys. Each
//! goes into each templated key of a values file that holds a sentinel in
//! every secret; `asogen template` and the real Helm engine on the
//! generated chart must render the same objects or both refuse, and no
//! sentinel may appear in a container's image, command or args of either
//! output.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Mutex;

use asogen::describe::expr::{Refusal, VALUES_METHODS};
use asogen::diagnostics::is_secret_name;
use common::{asogen_in, chart, first_difference, helm_render, helm_template_names, text};
use serde_json::{Value, json};

/// Each secret's value in the values files: any text holding it leaks it.
const SENTINEL: &str = "SENTINEL";

/// Keys of the free-form `podAnnotations` map that name a secret the way
/// `is_secret_name` reads names: misspelt, cut, or only partly a word.
const SECRET_USER_KEYS: [&str; 5] = [
    "azureClientSecert",
    "dbPass",
    "apiToken",
    "Token",
    "clientCert",
];

/// Every key path of the values schema (through `$ref`s and alternatives,
/// not into lists), for the secret ones.
fn schema_paths(root: &Value, node: &Value, path: &str, depth: usize, out: &mut BTreeSet<String>) {
    if depth > 8 {
        return;
    }
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => &root["definitions"][reference.rsplit('/').next().unwrap()],
        None => node,
    };
    for keyword in ["anyOf", "oneOf", "allOf"] {
        for branch in node
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            schema_paths(root, branch, path, depth + 1, out);
        }
    }
    for (key, child) in node
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let next = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        if out.insert(next.clone()) {
            schema_paths(root, child, &next, depth + 1, out);
        }
    }
}

/// The values every case starts from: a sentinel in each secret (of the
/// schema, the `extraEnv` values, user keys), and user keys named like
/// the values type's methods.
fn base_values(secret_paths: &[String]) -> Value {
    let mut values = json!({
        "extraEnv": [{"name": "EXTRA", "value": format!("{SENTINEL}-extraEnv")}],
        "podAnnotations": {"note": "plain"},
        "global": {"yaml": "lower-case"},
    });
    for path in secret_paths.iter().filter(|p| !p.contains('.')) {
        values[path.as_str()] = json!(format!("{SENTINEL}-{path}"));
    }
    for key in SECRET_USER_KEYS {
        values["podAnnotations"][key] = json!(format!("{SENTINEL}-{key}"));
    }
    for method in VALUES_METHODS {
        values["global"][method] = json!(format!("{SENTINEL}-global-{method}"));
    }
    values
}

/// Every string under a container's `image`, `command` or `args`.
fn container_texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                if ["containers", "initContainers"].contains(&key.as_str())
                    && let Value::Array(containers) = child
                {
                    for container in containers {
                        for field in ["image", "command", "args"] {
                            let mut texts = Vec::new();
                            strings(&container[field], &mut texts);
                            out.extend(texts);
                        }
                    }
                }
                container_texts(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| container_texts(item, out)),
        _ => {}
    }
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        _ => {}
    }
}

/// A sentinel in a container's image, command or args of a stream.
fn leak(stream: &str) -> Option<String> {
    let objects = std::panic::catch_unwind(|| common::objects(stream)).ok()?;
    let mut texts = Vec::new();
    for object in objects.values() {
        container_texts(object, &mut texts);
    }
    texts.into_iter().find(|t| t.contains(SENTINEL))
}

#[test]
fn templated_values_mean_what_helm_means_or_both_refuse_and_never_carry_a_secret() {
    let dir = tempfile::tempdir().unwrap();

    // The names Helm resolves, from Helm's own types.
    let names = helm_template_names();
    for root in [
        ".Values",
        ".Release",
        ".Chart",
        ".Capabilities",
        ".Template",
        ".Files",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(&format!("{root}."))),
            "helm-names resolves nothing under {root}: {names:?}"
        );
    }
    // `.Values` holds no keys there: everything under it is a method of
    // Helm's values type, and asogen's list must be exactly those.
    let helm_methods: BTreeSet<&str> = names
        .iter()
        .filter_map(|n| n.strip_prefix(".Values."))
        .collect();
    assert_eq!(
        helm_methods,
        VALUES_METHODS.into_iter().collect::<BTreeSet<_>>(),
        "asogen's VALUES_METHODS against the methods of Helm's values type"
    );

    // The secret key paths of the schema.
    let schema: Value = serde_json::from_slice(&asogen_in(dir.path(), &["schema"]).stdout).unwrap();
    let mut paths = BTreeSet::new();
    schema_paths(&schema, &schema, "", 0, &mut paths);
    assert!(paths.len() > 100, "only {} schema paths", paths.len());
    let secret_paths: Vec<String> = paths.into_iter().filter(|p| is_secret_name(p)).collect();
    assert!(
        secret_paths.iter().any(|p| p == "azureClientSecret"),
        "{secret_paths:?}"
    );

    let mut expressions: Vec<String> = names.clone();
    for method in &helm_methods {
        // Nested, where Helm reads a plain map (a schema map, a free map
        // holding the key), and as a user key.
        expressions.push(format!(".Values.image.{method}"));
        expressions.push(format!(".Values.global.{method}"));
    }
    expressions.extend(secret_paths.iter().map(|p| format!(".Values.{p}")));
    expressions.extend(
        SECRET_USER_KEYS
            .iter()
            .map(|key| format!(".Values.podAnnotations.{key}")),
    );
    expressions.extend(
        [
            // Maps and lists holding secrets, and one holding none.
            ".Values",
            ".Values.extraEnv",
            ".Values.extraEnv.0",
            ".Values.extraEnv.value",
            ".Values.podAnnotations",
            ".Values.global",
            ".Values.image",
            // What both evaluate: scalars, a missing key, a name only
            // partly secret, a lower-case method name.
            ".Values.image.repositoryBase",
            ".Values.metrics.port",
            ".Values.podAnnotations.note",
            ".Values.global.yaml",
            ".Values.createAzureOperatorSecret",
            ".Values.nope",
        ]
        .map(String::from),
    );
    let base = base_values(&secret_paths);

    // The keys the chart evaluates with `tpl`, read from its templates.
    let templated = common::templated_keys();
    assert_eq!(templated.len(), 2, "{templated:?}");

    // Each case: its file, what it sets, and whether Helm skips the
    // schema (so that only the chart's guard stands in the way).
    let mut files = Vec::new();
    for (n, expression) in expressions.iter().enumerate() {
        for key in &templated {
            let mut values = base.clone();
            let (map, leaf) = key.split_once('.').unwrap();
            values[map][leaf] = json!(format!("{{{{ {expression} }}}}"));
            let file = format!("case-{n}-{map}.yaml");
            std::fs::write(dir.path().join(&file), values.to_string()).unwrap();
            files.push((file, format!("{key}: {{{{ {expression} }}}}"), false));
        }
    }
    // A top-level user key named like a method, which the schema refuses:
    // without the schema, Helm's guard must refuse it as asogen does.
    for method in &helm_methods {
        for key in &templated {
            let mut values = base.clone();
            values[*method] = json!(format!("{SENTINEL}-top-{method}"));
            let (map, leaf) = key.split_once('.').unwrap();
            values[map][leaf] = json!(format!("{{{{ .Values.{method} }}}}"));
            let file = format!("user-key-{method}-{map}.yaml");
            std::fs::write(dir.path().join(&file), values.to_string()).unwrap();
            files.push((
                file,
                format!(
                    "{method}: (set), {key}: {{{{ .Values.{method} }}}}, Helm without the schema"
                ),
                true,
            ));
        }
    }

    let queue = Mutex::new(files);
    let failures = Mutex::new(Vec::new());
    let (accepted, checked) = (Mutex::new(0usize), Mutex::new(0usize));
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                loop {
                    let Some((file, case, skip_schema)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let path = dir.path().join(&file);
                    let ours = asogen_in(dir.path(), &["template", "-f", &file]);
                    let mut args = vec![
                        "template".to_string(),
                        chart(),
                        "-n".into(),
                        "azureserviceoperator-system".into(),
                        "--manifest".into(),
                        "-f".into(),
                        path.display().to_string(),
                    ];
                    if skip_schema {
                        args.push("--skip-schema-validation".into());
                    }
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let mut helm = helm_render(&args);
                    // A stand-in server time-out on a busy machine; a real
                    // disagreement repeats.
                    if helm.status.code() != ours.status.code() {
                        helm = helm_render(&args);
                    }
                    let (ours_out, helm_out) = (text(&ours.stdout), text(&helm.stdout));
                    let mut problems = Vec::new();
                    match (ours.status.code(), helm.status.code()) {
                        (Some(0), Some(0)) => {
                            *accepted.lock().unwrap() += 1;
                            problems.extend(first_difference(&ours_out, &helm_out));
                        }
                        (Some(1), Some(1)) => {
                            // Without the schema, the guard is what refused.
                            let reason = Refusal::Method.text();
                            let reason = reason.trim_start_matches("%s ");
                            if skip_schema && !text(&helm.stderr).contains(reason) {
                                problems.push(format!(
                                    "Helm refused for another reason than the guard's {reason:?}:\n{:.800}",
                                    text(&helm.stderr)
                                ));
                            }
                        }
                        (a, b) => problems.push(format!(
                            "asogen exit {a:?}, Helm exit {b:?}\n--- asogen\n{:.800}\n--- Helm\n{:.800}",
                            text(&ours.stderr),
                            text(&helm.stderr)
                        )),
                    }
                    for (who, code, out) in [
                        ("asogen", ours.status.code(), &ours_out),
                        ("Helm", helm.status.code(), &helm_out),
                    ] {
                        if code == Some(0)
                            && let Some(leaked) = leak(out)
                        {
                            problems.push(format!("{who} put a secret into a container: {leaked:.300}"));
                        }
                    }
                    *checked.lock().unwrap() += 1;
                    if !problems.is_empty() {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{case}\n{}", problems.join("\n")));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let checked = checked.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {checked} cases fail:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // Both must have accepted the plain keys, or the comparison proved
    // little.
    let accepted = accepted.into_inner().unwrap();
    assert!(
        accepted >= 10,
        "only {accepted} of {checked} cases accepted"
    );
}

#[test]
fn refused_templated_values_are_reported_at_their_key_with_help_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("{{ .Values.YAML }}", "names a method of Helm's values"),
        (
            "r/{{- .Values.image.AsMap }}",
            "names a method of Helm's values",
        ),
        ("{{ .Values.azureClientSecret }}", "names a secret value"),
        (
            "{{ .Values.podAnnotations.dbPass }}",
            "names a secret value",
        ),
        ("{{ .Values.extraEnv }}", "is a map or a list"),
        ("{{ .Values.podAnnotations }}", "is a map or a list"),
    ];
    for (n, (template, reason)) in cases.iter().enumerate() {
        for key in ["image.repository", "metrics.address"] {
            let (map, leaf) = key.split_once('.').unwrap();
            let file = format!("refused-{n}-{map}.yaml");
            std::fs::write(
                dir.path().join(&file),
                format!(
                    "azureClientSecret: {SENTINEL}-1\nextraEnv:\n- name: X\n  value: {SENTINEL}-2\npodAnnotations:\n  dbPass: {SENTINEL}-3\n{map}:\n  {leaf}: {}\n",
                    json!(template)
                ),
            )
            .unwrap();
            let out = asogen_in(dir.path(), &["validate", "--format", "json", "-f", &file]);
            assert_eq!(out.status.code(), Some(1), "{file}: {}", text(&out.stderr));
            let diagnostics: Value = serde_json::from_slice(&out.stdout).unwrap();
            let [d] = diagnostics.as_array().unwrap().as_slice() else {
                panic!("{file}: one problem expected: {diagnostics}");
            };
            assert_eq!(d["file"], file.as_str(), "{d}");
            assert_eq!(
                (d["line"].as_u64(), d["column"].as_u64()),
                (Some(8), Some(3 + leaf.len() as u64 + 2)),
                "{d}"
            );
            assert_eq!(d["key"], key, "{d}");
            assert!(d["message"].as_str().unwrap().contains(reason), "{d}");
            assert!(d["help"].as_str().unwrap().contains("not a secret"), "{d}");
            let human = asogen_in(dir.path(), &["validate", "-f", &file]);
            for output in [&out.stdout, &out.stderr, &human.stdout, &human.stderr] {
                assert!(!text(output).contains(SENTINEL), "{file}: {}", text(output));
            }
        }
    }
}
