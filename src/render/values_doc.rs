//! The chart's `values.yaml` and its README values table, both written from
//! the defaults and the schema descriptions (the Rust doc comments), so the
//! documentation cannot drift from the model.

use serde_json::{Value, json};

use crate::schema;
use crate::yaml;

/// Keys whose values are Kubernetes objects: shown as one YAML block, not
/// documented field by field (their fields are the Kubernetes API's).
const KUBERNETES_TYPED: [&str; 6] = [
    "resources",
    "securityContext",
    "podSecurityContext",
    "affinity",
    "tolerations",
    "extraEnv",
];

use crate::schema::resolve;

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
    depth: usize,
    out: &mut String,
) {
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
        if depth == 0 && !first {
            out.push('\n');
        }
        first = false;
        wrap(&description(root, child_schema), &indent, out);
        let nested = value.is_object()
            && !KUBERNETES_TYPED.contains(&key.as_str())
            && resolve(root, child_schema).get("properties").is_some();
        if nested {
            out.push_str(&format!("{indent}{key}:\n"));
            write_object(root, child_schema, value, depth + 1, out);
        } else {
            out.push_str(&block(key, value, &indent));
        }
        if key == "type" && depth == 1 && properties.get("rollingUpdate").is_some() {
            // The strategy: show the gated variant, commented out.
            let rolling = properties.get("rollingUpdate").unwrap_or(NONE);
            wrap(&description(root, rolling), &indent, out);
            out.push_str(&format!(
                "{indent}# rollingUpdate:\n{indent}#   maxSurge: 1\n{indent}#   maxUnavailable: 0\n"
            ));
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
    write_object(root, root, &defaults, 0, &mut out);
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

fn rows(root: &Value, schema_node: &Value, defaults: &Value, prefix: &str, out: &mut String) {
    const NONE: &Value = &Value::Null;
    let properties = resolve(root, schema_node).get("properties").unwrap_or(NONE);
    let Some(map) = defaults.as_object() else {
        return;
    };
    for (key, value) in map {
        if key == "global" {
            continue;
        }
        let child = properties.get(key).unwrap_or(NONE);
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let nested = value.is_object()
            && !KUBERNETES_TYPED.contains(&key.as_str())
            && resolve(root, child).get("properties").is_some();
        if nested {
            rows(root, child, value, &path, out);
            if key == "strategy" {
                let rolling = properties
                    .get("strategy")
                    .map(|s| resolve(root, s))
                    .and_then(|s| s.get("properties"))
                    .and_then(|p| p.get("rollingUpdate"))
                    .unwrap_or(NONE);
                out.push_str(&format!(
                    "| `strategy.rollingUpdate` | object | (absent) | {} |\n",
                    description(root, rolling).replace('|', "\\|")
                ));
            }
            continue;
        }
        let default = serde_json::to_string(value).expect("json");
        out.push_str(&format!(
            "| `{path}` | {} | `{}` | {} |\n",
            type_name(root, child),
            default.replace('|', "\\|"),
            description(root, child).replace('|', "\\|")
        ));
    }
}

/// The values table of the chart README.
pub fn values_table() -> String {
    let root = schema::structural_schema_ref();
    let defaults = crate::read::default_values();
    let mut out =
        String::from("| Key | Type | Default | Description |\n| --- | --- | --- | --- |\n");
    rows(root, root, &defaults, "", &mut out);
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
        let free_form = |key: &str| KUBERNETES_TYPED.contains(&key) || key == "nodeSelector";
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
}
