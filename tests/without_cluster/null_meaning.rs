//! A `null` means what it means to Helm: its merge with the chart's
//! defaults deletes the key. Every key the defaults set (the chart's own
//! keys and every field inside their Kubernetes-typed defaults) is set to
//! null, in a values file and with `--set KEY=null`, over the defaults and
//! over `topology: split` and `bridge` (the keys they read apart), and goes through `asogen template` and through
//! Helm v4's own `helm template` code on the generated chart
//! (tests/tools/helm-template): the same objects, or both refuse.

use crate::common;

use std::collections::BTreeMap;

use common::{asogen_in, first_object_difference, helm_template_as_asogen, objects_of, text};
use serde_json::{Map, Value, json};

/// Every path into the defaults' maps (lists are values, not keys).
fn paths(node: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Object(map) = node {
        for (key, child) in map {
            prefix.push(key.clone());
            out.push(prefix.clone());
            paths(child, prefix, out);
            prefix.pop();
        }
    }
}

/// `{"a": {"b": null}}` for the path a.b.
fn nested_null(path: &[String]) -> Value {
    path.iter().rev().fold(Value::Null, |inner, key| {
        Value::Object(Map::from_iter([(key.clone(), inner)]))
    })
}

/// The path as `--set` reads it: `.` nests, so a dot inside a key (and the
/// other characters strvals reads) is escaped.
fn set_path(path: &[String]) -> String {
    path.iter()
        .map(|segment| {
            segment
                .chars()
                .flat_map(|c| {
                    let escape = matches!(c, '.' | ',' | '=' | '[' | ']' | '\\');
                    escape.then_some('\\').into_iter().chain([c])
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether topology split (or the bridge) may read the key otherwise than
/// the defaults' single Deployment does: its own keys, and the pod settings it copies to
/// both of its Deployments (a needed key is refused whatever the topology,
/// and each render costs Helm half a second).
fn split_reads_it_apart(path: &[String]) -> bool {
    let top = asogen::keys::Key::find(&path[0]).expect("a top-level key");
    path[0] == "split" || path[0] == "topology" || asogen::values::absence_is_empty(top)
}

type Objects = BTreeMap<(String, String, String), Value>;

/// asogen's objects for the values flags, or its first message.
fn ours(dir: &std::path::Path, args: &[String]) -> Result<Objects, String> {
    let mut all = vec!["template".to_string(), "-o".into(), "json".into()];
    all.extend(args.iter().cloned());
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let out = asogen_in(dir, &refs);
    match out.status.code() {
        Some(0) => {
            let list: Value = serde_json::from_slice(&out.stdout).expect("-o json prints JSON");
            let items = list["items"].as_array().expect("a List").clone();
            Ok(objects_of(items))
        }
        Some(1) => Err(text(&out.stderr)),
        other => panic!("asogen {args:?} exited {other:?}: {}", text(&out.stderr)),
    }
}

/// The two cases that set `path` to null over `base`: in a values file
/// (written to `file`) and with `--set`, each with its name.
fn set_to_null(
    file: &std::path::Path,
    base_name: &str,
    base: &[String],
    path: &[String],
) -> [(String, Vec<String>); 2] {
    // JSON is YAML, and writes any key as it is.
    std::fs::write(file, nested_null(path).to_string()).unwrap();
    let mut in_file = base.to_vec();
    in_file.extend(["-f".into(), file.display().to_string()]);
    let mut with_set = base.to_vec();
    with_set.extend(["--set".into(), format!("{}=null", set_path(path))]);
    [
        (
            format!("{base_name}: {} in a file", path.join(".")),
            in_file,
        ),
        (
            format!("{base_name}: --set {}=null", set_path(path)),
            with_set,
        ),
    ]
}

/// Runs every case through `asogen template` and Helm's own `helm
/// template` of the generated chart, and fails unless each renders the
/// same objects in both or is refused by both; (rendered, refused).
fn helm_and_asogen_agree(dir: &std::path::Path, cases: &[(String, Vec<String>)]) -> (usize, usize) {
    let args: Vec<Vec<String>> = cases.iter().map(|(_, args)| args.clone()).collect();
    // asogen renders the in-cluster guard for a cluster that serves it,
    // as Helm does when the cluster (or --api-versions) says it does.
    let helm = helm_template_as_asogen(dir, &args);
    let mut differences = Vec::new();
    let (mut rendered, mut refused) = (0, 0);
    for ((name, args), helm) in cases.iter().zip(&helm) {
        let theirs = match (&helm["objects"], &helm["error"]) {
            (Value::Array(items), _) => Ok(objects_of(items.clone())),
            (_, Value::String(error)) => Err(error.clone()),
            _ => panic!("{name}: helm-template answered {helm}"),
        };
        match (ours(dir, args), theirs) {
            (Ok(ours), Ok(theirs)) => {
                rendered += 1;
                if let Some(difference) = first_object_difference(&ours, &theirs) {
                    differences.push(format!("{name}: {difference:.1500}"));
                }
            }
            (Err(_), Err(_)) => refused += 1,
            (Ok(_), Err(error)) => differences.push(format!(
                "{name}: asogen renders, Helm refuses: {error:.600}"
            )),
            (Err(error), Ok(_)) => differences.push(format!(
                "{name}: Helm renders, asogen refuses: {error:.600}"
            )),
        }
    }
    eprintln!(
        "{} cases: {rendered} rendered alike, {refused} refused by both",
        cases.len()
    );
    assert!(
        differences.is_empty(),
        "{} of {} cases differ:\n{}",
        differences.len(),
        cases.len(),
        differences.join("\n\n")
    );
    (rendered, refused)
}

#[test]
fn every_key_set_to_null_renders_as_helm_renders_it_or_both_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let mut keys = Vec::new();
    paths(asogen::values::defaults_json(), &mut Vec::new(), &mut keys);
    assert!(keys.len() > 100, "only {} keys", keys.len());
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    for (base_name, base) in [
        ("defaults", vec![]),
        ("split", vec!["--set", "topology=split"]),
        ("bridge", vec!["--set", "topology=bridge"]),
    ] {
        let base: Vec<String> = base.into_iter().map(String::from).collect();
        for (index, path) in keys.iter().enumerate() {
            if base_name != "defaults" && !split_reads_it_apart(path) {
                continue;
            }
            let file = dir.path().join(format!("{base_name}-{index}.yaml"));
            cases.extend(set_to_null(&file, base_name, &base, path));
        }
    }
    let (rendered, refused) = helm_and_asogen_agree(dir.path(), &cases);
    // Both kinds of answer occur: keys whose absence is empty render, keys
    // the chart needs are refused.
    assert!(
        rendered > 20 && refused > 20,
        "{rendered} rendered, {refused} refused"
    );
}

/// A null where the chart's defaults hold nothing is kept by Helm (its
/// coalesce deletes only what the defaults hold), so the schema judges it
/// and the templates read it: every key of the schema the defaults leave
/// out, and an entry added to every map the defaults hold, set to null in
/// a file and with `--set`, over the defaults and over the single-replica
/// rolling profile (where `strategy.rollingUpdate` is read). asogen must
/// render the same objects, or refuse as Helm does.
#[test]
fn a_null_the_defaults_do_not_hold_means_what_it_means_to_helm() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = asogen::values::defaults_json();
    let mut nulls: Vec<Vec<String>> = Vec::new();
    for &key in asogen::keys::ALL {
        let segments: Vec<String> = key.segments().map(String::from).collect();
        match defaults.pointer(&key.pointer()) {
            None => nulls.push(segments),
            // a map the user fills: an entry of its own
            Some(Value::Object(_)) if !key.has_children() => {
                let mut entry = segments;
                entry.push("added-by-the-user".into());
                nulls.push(entry);
            }
            Some(_) => {}
        }
    }
    assert!(
        nulls.len() > 10
            && nulls
                .iter()
                .any(|p| p.join(".") == "strategy.rollingUpdate")
            && nulls
                .iter()
                .any(|p| p.join(".") == "podAnnotations.added-by-the-user"),
        "{nulls:?}"
    );
    let rolling = common::root().join("values/profiles/single-replica-rolling.yaml");
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    for (base_name, base) in [
        ("defaults", vec![]),
        (
            "rolling",
            vec!["-f".to_string(), rolling.display().to_string()],
        ),
    ] {
        for (index, path) in nulls.iter().enumerate() {
            if base_name == "rolling" && path[0] != "strategy" {
                continue;
            }
            let file = dir.path().join(format!("{base_name}-absent-{index}.yaml"));
            cases.extend(set_to_null(&file, base_name, &base, path));
        }
    }
    let (rendered, refused) = helm_and_asogen_agree(dir.path(), &cases);
    assert!(
        rendered > 0 && refused > 0,
        "{rendered} rendered, {refused} refused"
    );
}

/// The refusal names the file, line, column and key of the null, with
/// help, and the chart's guard says the same without the schema.
#[test]
fn a_needed_key_set_to_null_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("values.yaml");
    std::fs::write(
        &file,
        "split:\n  webhooks:\n    replicaCount: null\ntopology: split\n",
    )
    .unwrap();
    let out = asogen_in(dir.path(), &["validate", "-f", "values.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains("values.yaml:3:5")
            && report.contains("split.webhooks.replicaCount is null")
            && report
                .contains("help: leave split.webhooks.replicaCount out to keep its default, 2"),
        "{report}"
    );
    let json = asogen_in(
        dir.path(),
        &[
            "validate",
            "--format",
            "json",
            "--set",
            "admissionPolicy.enable=null",
        ],
    );
    assert_eq!(json.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let found = report
        .as_array()
        .or_else(|| report["diagnostics"].as_array())
        .expect("a list of problems")
        .iter()
        .any(|d| d["key"] == json!("admissionPolicy.enable") && d["keyword"] == json!("null"));
    assert!(found, "{report}");
}

/// A key whose absence is empty takes a null in the editor's schema too.
#[test]
fn the_schema_takes_null_exactly_where_absence_is_empty() {
    let schema = asogen::schema::published_schema();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    for &key in asogen::keys::ALL {
        if asogen::values::default_of(key).is_null() {
            continue;
        }
        let segments: Vec<String> = key.segments().map(String::from).collect();
        let document = nested_null(&segments);
        let valid = validator.is_valid(&document);
        assert_eq!(
            valid,
            asogen::values::absence_is_empty(key),
            "{}: null is {} by the schema",
            key.path(),
            if valid { "taken" } else { "refused" }
        );
    }
}
