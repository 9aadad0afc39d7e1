//! Values cannot inject objects through the chart: every string key of the
//! values schema (the list comes from `asogen schema`) gets each payload
//! of `PAYLOADS` (newlines, a YAML document, comments, quotes, template
//! actions, line separators, ...), and `asogen template` and the real Helm
//! engine on the generated chart must render the same objects, or both
//! refuse the values.
//!
//! Keys that cannot interfere share a values file (one file per payload);
//! keys with an enum or a pattern, which both refuse for every payload,
//! share another; the keys the chart evaluates with `tpl` get a file each
//! for payloads holding a template action.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Mutex;

use common::{asogen_in, chart, first_difference, helm_render, objects, text};
use serde_json::{Map, Value, json};

/// The payloads, by name.
const PAYLOADS: [(&str, &str); 24] = [
    // `azureTargetNamespaces: [""]` among them.
    ("empty", ""),
    ("newline", "a\nb"),
    (
        "document",
        "x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n",
    ),
    ("comment", "a #b"),
    ("single-quote", "it's"),
    ("double-quote", "say \"hi\""),
    ("empty-action", "{{ }}"),
    ("values-action", "{{ .Values.x }}"),
    ("line-separator", "a\u{2028}b"),
    ("next-line", "a\u{85}b"),
    ("c1-control", "a\u{80}b"),
    ("delete", "a\u{7f}b"),
    ("byte-order-mark", "a\u{feff}b"),
    ("non-character", "a\u{fffe}b"),
    ("tab-and-return", "a\tb\rc"),
    ("backslashes", "a\\b\\\\c\\n"),
    ("spaces", "  padded  "),
    ("colon", "a: b"),
    ("dash", "- item"),
    ("alias", "*alias"),
    ("anchor", "&anchor x"),
    ("no-value", "a<no value>b"),
    ("html", "<b title=\"x\">&amp;"),
    ("long", LONG),
];

/// A long value (well past any line width a YAML writer folds at).
const LONG: &str = "abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789";

/// One step of a key path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index,
}

fn path_text(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index => out.push_str("[0]"),
        }
    }
    out
}

struct Schema {
    root: Value,
}

impl Schema {
    fn resolve<'a>(&'a self, mut node: &'a Value) -> &'a Value {
        while let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap();
            node = &self.root["definitions"][name];
        }
        node
    }

    /// The node and its alternatives (`anyOf`, `oneOf`, `allOf`).
    fn branches<'a>(&'a self, node: &'a Value) -> Vec<&'a Value> {
        let node = self.resolve(node);
        let mut out = vec![node];
        for keyword in ["anyOf", "oneOf", "allOf"] {
            if let Some(list) = node.get(keyword).and_then(Value::as_array) {
                // Combinators nest (a property that also takes null is an
                // anyOf of null and its own allOf).
                out.extend(list.iter().flat_map(|b| self.branches(b)));
            }
        }
        out
    }

    /// Every string leaf under `node`: its path and whether the schema
    /// constrains it (enum, pattern, length).
    fn leaves(
        &self,
        node: &Value,
        path: Vec<Step>,
        seen: &[String],
        out: &mut Vec<(Vec<Step>, bool)>,
    ) {
        if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            if seen.iter().any(|s| s == reference) {
                return;
            }
            let mut seen = seen.to_vec();
            seen.push(reference.to_string());
            return self.leaves(self.resolve(node), path, &seen, out);
        }
        for keyword in ["anyOf", "oneOf", "allOf"] {
            for branch in node
                .get(keyword)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.leaves(branch, path.clone(), seen, out);
            }
        }
        let is_string = match &node["type"] {
            Value::String(t) => t == "string",
            Value::Array(types) => types.iter().any(|t| t == "string"),
            _ => false,
        };
        if is_string && !out.iter().any(|(p, _)| *p == path) {
            let constrained = [
                "enum",
                "pattern",
                "minLength",
                "maxLength",
                "const",
                "format",
            ]
            .iter()
            .any(|k| node.get(k).is_some());
            out.push((path.clone(), constrained));
        }
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (key, child) in properties {
                let mut next = path.clone();
                next.push(Step::Key(key.clone()));
                self.leaves(child, next, seen, out);
            }
        }
        if let Some(items) = node.get("items").filter(|i| i.is_object()) {
            let mut next = path.clone();
            next.push(Step::Index);
            self.leaves(items, next, seen, out);
        }
        if let Some(values) = node.get("additionalProperties").filter(|v| v.is_object()) {
            let mut next = path;
            next.push(Step::Key("key".into()));
            self.leaves(values, next, seen, out);
        }
    }

    /// The schema node at `path`.
    fn at(&self, path: &[Step]) -> Option<&Value> {
        let mut node = &self.root;
        for step in path {
            node = self.branches(node).into_iter().find_map(|b| match step {
                Step::Index => b.get("items").filter(|i| i.is_object()),
                Step::Key(key) => b
                    .get("properties")
                    .and_then(|p| p.get(key))
                    .or_else(|| b.get("additionalProperties").filter(|v| v.is_object())),
            })?;
        }
        Some(node)
    }

    /// A small valid instance of a map: its required keys, filled in.
    fn required(&self, node: &Value) -> Map<String, Value> {
        let mut out = Map::new();
        for branch in self.branches(node) {
            let Some(required) = branch.get("required").and_then(Value::as_array) else {
                continue;
            };
            for key in required.iter().filter_map(Value::as_str) {
                let child = &branch["properties"][key];
                out.insert(key.into(), self.example(child));
            }
        }
        out
    }

    fn example(&self, node: &Value) -> Value {
        let branches = self.branches(node);
        if let Some(options) = branches.iter().find_map(|b| b.get("enum")?.as_array()) {
            return options
                .iter()
                .find(|o| o.as_str().is_none_or(|s| !s.is_empty()))
                .cloned()
                .unwrap_or(Value::Null);
        }
        let kind = branches
            .iter()
            .find_map(|b| match &b["type"] {
                Value::String(t) if t != "null" => Some(t.clone()),
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .find(|t| *t != "null")
                    .map(String::from),
                _ => None,
            })
            .unwrap_or_default();
        match kind.as_str() {
            "object" => Value::Object(self.required(node)),
            "array" => json!([]),
            "integer" | "number" => json!(1),
            "boolean" => json!(true),
            _ => json!("x"),
        }
    }

    /// Sets the leaf at `path` in `values`, filling in each map on the
    /// way with its required keys.
    fn set(&self, values: &mut Value, path: &[Step], payload: &str) {
        let mut node = values;
        for (depth, step) in path.iter().enumerate() {
            let last = depth + 1 == path.len();
            let next_is_index = path.get(depth + 1) == Some(&Step::Index);
            let fresh = || {
                if last {
                    Value::from(payload)
                } else if next_is_index {
                    json!([])
                } else {
                    Value::Object(self.required(self.at(&path[..=depth]).unwrap()))
                }
            };
            node = match step {
                Step::Key(key) => {
                    let map = node.as_object_mut().unwrap();
                    if last || !map.get(key).is_some_and(|v| v.is_object() || v.is_array()) {
                        map.insert(key.clone(), fresh());
                    }
                    map.get_mut(key).unwrap()
                }
                Step::Index => {
                    let list = node.as_array_mut().unwrap();
                    if list.is_empty() || last {
                        list.clear();
                        list.push(fresh());
                    }
                    &mut list[0]
                }
            };
        }
    }
}

/// A values file as YAML flow text: every string double-quoted, with the
/// characters YAML readers treat differently written as escapes, so the
/// payload arrives in both engines as written.
fn flow(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let mut out = String::from('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    c if c.is_control()
                        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}') =>
                    {
                        out.push_str(&format!("\\u{:04x}", c as u32))
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(flow).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", flow(&Value::from(k.as_str())), flow(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[test]
fn every_string_value_renders_the_same_objects_through_asogen_and_helm_or_is_refused_by_both() {
    let dir = tempfile::tempdir().unwrap();
    let schema_text = asogen_in(dir.path(), &["schema"]);
    let schema = Schema {
        root: serde_json::from_slice(&schema_text.stdout).unwrap(),
    };
    let mut leaves = Vec::new();
    schema.leaves(&schema.root.clone(), Vec::new(), &[], &mut leaves);
    assert!(leaves.len() >= 100, "only {} string keys", leaves.len());
    // The keys the chart evaluates with `tpl`, read from its templates.
    let templated = common::templated_keys();
    assert!(!templated.is_empty());
    // One file per payload and group.
    let mut files: Vec<(String, String)> = Vec::new();
    for (name, payload) in PAYLOADS {
        let mut groups: BTreeMap<String, Value> = BTreeMap::new();
        for (path, constrained) in &leaves {
            // crdLabels and crdPattern as a string and as a list are one
            // key each (a list's items are split like the string).
            let first = path.first();
            let listed = ["crdLabels", "crdPattern"].map(|k| Step::Key(k.into()));
            if first.is_some_and(|f| listed.contains(f)) && path.len() > 1 {
                continue;
            }
            let text = path_text(path);
            // crdPattern entries are checked against the served API groups
            // (by both): on their own, so a refusal hides no other key.
            let group = if text == "crdPattern" {
                "crdPattern".into()
            } else if templated.contains(&text) && payload.contains("{{") {
                format!("tpl-{text}")
            } else if *constrained {
                "constrained".into()
            } else {
                "free".into()
            };
            let values = groups.entry(group).or_insert_with(|| json!({}));
            schema.set(values, path, payload);
        }
        for (group, values) in groups {
            let file = format!("{name}--{group}.yaml");
            std::fs::write(dir.path().join(&file), flow(&values) + "\n").unwrap();
            files.push((file, path_text(&[])));
        }
    }
    let queue = Mutex::new(files.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>());
    let failures = Mutex::new(Vec::new());
    let checked = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                loop {
                    let Some(file) = queue.lock().unwrap().pop() else { break };
                    let path = dir.path().join(&file);
                    let ours = asogen_in(dir.path(), &["template", "-f", &file]);
                    let args = [
                        "template",
                        &chart(),
                        "-n",
                        "azureserviceoperator-system",
                        "--manifest",
                        "-f",
                        path.to_str().unwrap(),
                    ];
                    let mut helm = helm_render(&args);
                    // The engine talks to a local fake API server; on a busy
                    // machine that can time out once. A real disagreement
                    // repeats.
                    if helm.status.code() != ours.status.code() {
                        helm = helm_render(&args);
                    }
                    let verdict = match (ours.status.code(), helm.status.code()) {
                        (Some(0), Some(0)) => first_difference(&text(&ours.stdout), &text(&helm.stdout)),
                        (Some(1), Some(1)) => None,
                        (a, b) => Some(format!(
                            "asogen exit {a:?}, Helm exit {b:?}\n--- asogen\n{:.1500}\n--- Helm\n{:.1500}",
                            text(&ours.stderr),
                            text(&helm.stderr)
                        )),
                    };
                    *checked.lock().unwrap() += 1;
                    if let Some(problem) = verdict {
                        failures.lock().unwrap().push(format!("{file}: {problem}"));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} values files differ:\n\n{}",
        failures.len(),
        checked.into_inner().unwrap(),
        failures.join("\n\n")
    );
}

#[test]
fn catalog_strings_past_the_grammar_are_still_data_to_the_real_helm_engine() {
    use asogen::catalog::Catalog;
    use asogen::check::Checker;
    use std::sync::Arc;

    // A catalog holding every payload where the grammar refuses it (as if
    // it had a gap): in rules' groups, resources and verbs, in webhooks'
    // versions, resources and kinds (which make their names and paths).
    let mut catalog = (*Catalog::builtin()).clone();
    for (i, (_, payload)) in PAYLOADS.iter().enumerate() {
        let rules = catalog.cluster_roles.get_mut("manager-role").unwrap();
        let rule = &mut rules[i];
        rule.api_groups[0] = payload.to_string();
        rule.resources[0] = format!("r{payload}");
        rule.verbs[0] = format!("{payload}v");
        let hooks = &mut catalog.groups[i].webhooks;
        hooks[0].version = format!("v{payload}");
        hooks[0].resource = format!("{payload}s");
        hooks[0].kind = payload.to_string();
    }
    let election = catalog.roles.get_mut("leader-election-role").unwrap();
    election[0].verbs.push("{{ fail \"injected\" }}".into());
    assert!(catalog.problem().is_some(), "the grammar refuses these");

    // The chart printed from it, in a copy of the generated chart.
    let dir = tempfile::tempdir().unwrap();
    let chart_dir = dir.path().join("azure-service-operator");
    common::copy_dir(std::path::Path::new(&chart()), &chart_dir);
    let mut model = Checker::new()
        .check(&[], "azureserviceoperator-system")
        .unwrap();
    model.catalog = Arc::new(catalog);
    let header = "{{- /* a catalog past its grammar */}}";
    for resource in asogen::objects::resources(&model.catalog, &model.release) {
        std::fs::write(
            chart_dir.join("templates").join(&resource.file),
            resource.template(header, &asogen::describe::helpers::json_helper()),
        )
        .unwrap();
    }
    let ours = asogen::render::manifest(&model, false, "");
    let helm = helm_render(&[
        "template",
        chart_dir.to_str().unwrap(),
        "-n",
        "azureserviceoperator-system",
        "--manifest",
    ]);
    assert_eq!(helm.status.code(), Some(0), "{}", text(&helm.stderr));
    if let Some(problem) = first_difference(&ours, &text(&helm.stdout)) {
        panic!("{problem}");
    }
    let roles = objects(&ours);
    let manager = &roles[&(
        "ClusterRole".to_string(),
        String::new(),
        "azureserviceoperator-manager-role".to_string(),
    )];
    assert_eq!(manager["rules"][1]["apiGroups"][0], PAYLOADS[1].1);
}
