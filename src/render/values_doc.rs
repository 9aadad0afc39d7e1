//! The table of values keys, and the chart's `values.yaml` and README
//! values table written from it: the keys of [`crate::keys`] with their
//! type, default and doc from the schema (the Rust doc comments and the
//! defaults beside the fields of `src/values.rs`), so the documentation
//! cannot drift from the model.

use serde_json::{Value, json};

use crate::keys::{self, Key};
use crate::schema;
use crate::schema::resolve;
use crate::yaml;

/// Everything about one values key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRow {
    /// The key.
    pub key: Key,
    /// Its type as the schema says it (`integer`, `int or string`, ...).
    pub type_name: String,
    /// The chart's default; null for a key absent by default.
    pub default: Value,
    /// Whether its value is a secret, never printed in a message.
    pub secret: bool,
    /// Whether the chart evaluates it as a template.
    pub templated: bool,
    /// Its description (the field's doc comment).
    pub doc: String,
}

/// The schema of a key in the structural schema, through `$ref`s and an
/// `Option`'s `anyOf` with null; None when the schema has no such key.
fn key_node(root: &Value, key: Key) -> Option<&Value> {
    let mut node = root;
    for segment in key.segments() {
        node = optional_inner(root, resolve(root, node))
            .get("properties")?
            .get(segment)?;
    }
    Some(node)
}

/// The schema inside an `Option` (`anyOf: [X, null]`), else the node.
fn optional_inner<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let Some(branches) = node.get("anyOf").and_then(Value::as_array) else {
        return node;
    };
    let not_null: Vec<&Value> = branches
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    match not_null.as_slice() {
        [one] if branches.len() == 2 => resolve(root, one),
        _ => node,
    }
}

/// A key as the values schema has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaKey {
    /// The dotted path.
    pub path: String,
    /// Whether its value is a Kubernetes object or a list of them.
    pub kubernetes: bool,
}

/// Every key of the values schema, in the values' order (a parent before
/// its children): down through the chart's own objects, not into a
/// Kubernetes object (its fields are the API's) nor into a free-form map.
/// `src/keys/all.rs` is generated from this list.
pub fn schema_keys() -> Vec<SchemaKey> {
    fn walk(root: &Value, node: &Value, prefix: &str, out: &mut Vec<SchemaKey>) {
        let node = optional_inner(root, resolve(root, node));
        let Some(properties) = node.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (name, child) in properties {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let kubernetes = is_kubernetes(child);
            out.push(SchemaKey {
                path: path.clone(),
                kubernetes,
            });
            if !kubernetes {
                walk(root, child, &path, out);
            }
        }
    }
    let root = schema::structural_schema_ref();
    let mut out = Vec::new();
    walk(root, root, "", &mut out);
    out
}

/// Whether a key's schema, or its items' schema, is a k8s-openapi type's
/// (a definition named `io.k8s.…`).
fn is_kubernetes(node: &Value) -> bool {
    let refers = |node: &Value| {
        let node = match node
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([one]) => one,
            _ => node,
        };
        node.get("$ref")
            .and_then(Value::as_str)
            .is_some_and(|target| target.starts_with("#/definitions/io.k8s."))
    };
    refers(node) || node.get("items").is_some_and(refers)
}

/// Every values key with its type, default, secrecy, templating and doc,
/// in the values' order.
pub fn key_table() -> Vec<KeyRow> {
    let root = schema::structural_schema_ref();
    keys::ALL
        .iter()
        .map(|&key| {
            let node = key_node(root, key)
                .unwrap_or_else(|| panic!("{} is not a key of the values schema", key.path()));
            KeyRow {
                key,
                type_name: type_name(root, optional_inner(root, resolve(root, node))),
                default: crate::values::default_of(key),
                secret: crate::redact::is_secret_name(key.path()),
                templated: key.is_templated(),
                doc: description(root, node),
            }
        })
        .collect()
}

fn description(root: &Value, node: &Value) -> String {
    node.get("description")
        .or_else(|| resolve(root, node).get("description"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn wrap(text: &str, indent: &str, out: &mut String) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + word.len() + 1 > 96 {
            out.push_str(&format!("{indent}# {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{indent}# {line}\n"));
    }
}

fn block(key: &str, value: &Value, indent: &str) -> String {
    let text = yaml::to_yaml(&json!({ key: value }));
    text.lines()
        .map(|line| format!("{indent}{line}\n"))
        .collect()
}

fn write_object(
    root: &Value,
    schema_node: &Value,
    defaults: &Value,
    prefix: &str,
    out: &mut String,
) {
    let depth = if prefix.is_empty() {
        0
    } else {
        prefix.split('.').count()
    };
    const NONE: &Value = &Value::Null;
    let indent = "  ".repeat(depth);
    let properties = resolve(root, schema_node).get("properties").unwrap_or(NONE);
    let Some(map) = defaults.as_object() else {
        return;
    };
    let mut first = true;
    for (key, value) in map {
        if key == "global" {
            continue;
        }
        let child_schema = properties.get(key).unwrap_or(NONE);
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        if depth == 0 && !first {
            out.push('\n');
        }
        first = false;
        wrap(&description(root, child_schema), &indent, out);
        let nested = value.is_object()
            && !Key::find(&path).is_some_and(Key::is_kubernetes)
            && resolve(root, child_schema).get("properties").is_some();
        if nested {
            out.push_str(&format!("{indent}{key}:\n"));
            write_object(root, child_schema, value, &path, out);
        } else {
            out.push_str(&block(key, value, &indent));
        }
        if path == keys::STRATEGY_TYPE.path() {
            // The strategy: show the gated variant (absent by default),
            // commented out, with its parameters' defaults.
            let rolling = keys::STRATEGY_ROLLING_UPDATE;
            let node = key_node(root, rolling).unwrap_or(NONE);
            wrap(&description(root, node), &indent, out);
            out.push_str(&format!("{indent}# {}:\n", rolling.leaf()));
            for param in [
                keys::STRATEGY_ROLLING_UPDATE_MAX_SURGE,
                keys::STRATEGY_ROLLING_UPDATE_MAX_UNAVAILABLE,
            ] {
                let default = crate::values::default_of(param);
                out.push_str(&format!("{indent}#   {}: {default}\n", param.leaf()));
            }
        }
    }
}

/// The chart's values.yaml.
pub fn values_yaml(header: &str) -> String {
    let root = schema::structural_schema_ref();
    let defaults = crate::read::default_values();
    let mut out = String::new();
    out.push_str("# yaml-language-server: $schema=values.schema.json\n");
    out.push_str(header);
    out.push_str("# Every key is checked by values.schema.json (Helm, editors) and by the\n");
    out.push_str(
        "# chart's rules guard; `asogen validate -f FILE` checks a values file offline.\n\n",
    );
    write_object(root, root, &defaults, "", &mut out);
    out
}

fn type_name(root: &Value, node: &Value) -> String {
    let node = resolve(root, node);
    match node.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ if node.get("anyOf").is_some() => "int or string".into(),
        _ => "object".into(),
    }
}

/// The values table of the chart README.
/// A row for each key a user sets as a whole: a key with no keys inside,
/// or one absent by default (`strategy.rollingUpdate`, whose keys are
/// then absent too); not `global`, which is Helm's.
pub fn values_table() -> String {
    values_table_of(|_| true)
}

/// The rows of [`values_table`] for `topology` and the `split.*` keys:
/// docs/split-topology.md's values interface.
pub fn split_values_table() -> String {
    values_table_of(|key| {
        key == keys::TOPOLOGY || key.path().starts_with(&format!("{}.", keys::SPLIT.path()))
    })
}

/// [`values_table`]'s rows of the keys `shown` picks.
fn values_table_of(shown: impl Fn(Key) -> bool) -> String {
    let mut out =
        String::from("| Key | Type | Default | Description |\n| --- | --- | --- | --- |\n");
    let table = key_table();
    let absent = |key: Key| {
        table
            .iter()
            .find(|row| row.key == key)
            .is_some_and(|row| row.default.is_null())
    };
    for row in &table {
        let key = row.key;
        let inside_absent = std::iter::successors(key.parent(), |k| k.parent()).any(absent);
        if key == keys::GLOBAL || inside_absent || !shown(key) {
            continue;
        }
        let default = match (&row.default, key.has_children()) {
            (Value::Null, true) => "(absent)".to_string(),
            (Value::Null, false) => continue,
            (_, true) => continue,
            (value, false) => format!(
                "`{}`",
                serde_json::to_string(value)
                    .expect("json")
                    .replace('|', "\\|")
            ),
        };
        out.push_str(&format!(
            "| `{}` | {} | {default} | {} |\n",
            key.path(),
            row.type_name,
            row.doc.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_values_yaml_is_documented() {
        let text = values_yaml("");
        let lines: Vec<&str> = text.lines().collect();
        // Children of these top-level keys are Kubernetes objects or free-form maps.
        let free_form = |key: &str| {
            Key::find(key).is_some_and(|key| key.is_kubernetes() || key == keys::NODE_SELECTOR)
        };
        let mut skip_children = false;
        let mut checked = 0;
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('-') {
                continue;
            }
            let indent = line.len() - trimmed.len();
            let key = trimmed.split(':').next().unwrap_or("");
            if indent == 0 {
                skip_children = free_form(key);
            } else if skip_children {
                continue;
            }
            assert!(
                lines[i - 1].trim_start().starts_with('#'),
                "undocumented key: {line}"
            );
            checked += 1;
        }
        assert!(checked > 60, "only {checked} keys checked");
    }

    #[test]
    fn values_table_has_a_row_per_leaf_key() {
        let table = values_table();
        for key in [
            "replicaCount",
            "strategy.type",
            "strategy.rollingUpdate",
            "featureGates.singleReplicaRollingUpdate",
            "podDisruptionBudget.minAvailable",
            "resources",
        ] {
            assert!(table.contains(&format!("| `{key}` |")), "{key} missing");
        }
    }

    /// The key table against the schema, both ways: every handle names a
    /// key of the values schema, with the schema's flags (a misspelt or
    /// stale path in `src/keys/all.rs` fails here), and every key of the
    /// schema has a handle, in the values' order (a field added to
    /// `src/values.rs` before `src/keys/all.rs` is generated fails here).
    #[test]
    fn the_key_table_is_the_schema_s_keys() {
        let root = schema::structural_schema_ref();
        for &key in keys::ALL {
            assert!(
                key_node(root, key).is_some(),
                "keys::ALL names {:?}, which is not a key of the values schema",
                key.path()
            );
        }
        let listed: Vec<SchemaKey> = keys::ALL
            .iter()
            .map(|key| SchemaKey {
                path: key.path().to_string(),
                kubernetes: key.is_kubernetes(),
            })
            .collect();
        assert_eq!(
            listed,
            schema_keys(),
            "src/keys/all.rs and the values schema differ; {}",
            crate::render::sourcegen::REMEDY
        );
        // The flag read from the schema: k8s-openapi types, not plain maps.
        assert!(keys::AFFINITY.is_kubernetes() && keys::EXTRA_ENV.is_kubernetes());
        assert!(!keys::NODE_SELECTOR.is_kubernetes() && !keys::IMAGE.is_kubernetes());
    }

    #[test]
    fn the_key_table_reads_defaults_and_secrets_from_the_model() {
        let table = key_table();
        let defaults = crate::read::default_values();
        for row in &table {
            // Where the typed defaults hold the key, the table says the same.
            if let Some(value) = row
                .key
                .segments()
                .try_fold(&defaults, |node, s| node.get(s))
            {
                assert_eq!(&row.default, value, "{}", row.key.path());
            }
        }
        let default = |key: Key| {
            table
                .iter()
                .find(|row| row.key == key)
                .unwrap()
                .default
                .clone()
        };
        assert_eq!(default(keys::PROBES_STARTUP_FAILURE_THRESHOLD), json!(12));
        assert_eq!(default(keys::PROBES_LIVENESS_FAILURE_THRESHOLD), json!(3));
        assert_eq!(default(keys::STRATEGY_ROLLING_UPDATE_MAX_SURGE), json!(1));
        assert_eq!(default(keys::STRATEGY_ROLLING_UPDATE), Value::Null);
        let secret: Vec<&str> = table
            .iter()
            .filter(|row| row.secret)
            .map(|row| row.key.path())
            .collect();
        assert_eq!(
            secret,
            [
                "azureClientSecret",
                "azureClientCertificate",
                "azureClientCertificatePassword"
            ]
        );
        let templated: Vec<Key> = table
            .iter()
            .filter(|r| r.templated)
            .map(|r| r.key)
            .collect();
        assert_eq!(templated, [keys::IMAGE_REPOSITORY, keys::METRICS_ADDRESS]);
        assert!(
            table
                .iter()
                .all(|row| row.key == keys::GLOBAL || !row.doc.is_empty())
        );
    }
}
