//! `values.schema.json`, generated in one place as a pipeline of small named
//! transforms over the schemars-derived schema of [`Values`].
//!
//! Two schemas come out: the *structural* schema (types, enums, closed
//! objects) that asogen validates shapes with before it applies the Rust
//! rules, and the *published* schema (structural plus the rule table as
//! draft-07 `if`/`then`) that ships in the chart for Helm and editors.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::rules;
use crate::values::Values;

/// The JSON Schema draft every consumer supports (Helm 3, Helm 4, yaml-language-server).
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

/// The schema without the rule table: shapes only. Built once per process
/// (render, values docs and the checker all read it).
pub fn structural_schema() -> Value {
    structural_schema_ref().clone()
}

/// The structural schema, shared (no copy).
pub fn structural_schema_ref() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(build_structural_schema)
}

fn build_structural_schema() -> Value {
    let generator = SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<Values>().to_value();
    enums_from_const_variants(&mut schema);
    close_kubernetes_objects(&mut schema);
    allow_numeric_quantities(&mut schema);
    schema
}

/// The schema the chart ships: shapes plus every rule.
pub fn published_schema() -> Value {
    let mut schema = structural_schema();
    add_rules(&mut schema);
    schema
}

/// The published schema as the bytes written to `values.schema.json`.
pub fn published_schema_text() -> String {
    serde_json::to_string_pretty(&published_schema()).expect("schema serializes") + "\n"
}

/// Visits every schema object (depth first).
fn walk(value: &mut Value, visit: &mut dyn FnMut(&mut Map<String, Value>)) {
    match value {
        Value::Object(map) => {
            visit(map);
            for child in map.values_mut() {
                walk(child, visit);
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, visit);
            }
        }
        _ => {}
    }
}

/// schemars writes a documented unit enum as `oneOf: [{const, description}]`.
/// Editors and Helm report a failed `oneOf` poorly ("matches none"), so turn
/// it into one `enum` with the variant descriptions kept as
/// `enumDescriptions` (shown by yaml-language-server on completion) and in
/// the description text.
fn enums_from_const_variants(schema: &mut Value) {
    walk(schema, &mut |map| {
        let Some(Value::Array(variants)) = map.get("oneOf") else {
            return;
        };
        let consts: Option<Vec<(Value, String)>> = variants
            .iter()
            .map(|variant| {
                let constant = variant.get("const")?.clone();
                let description = variant
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                Some((constant, description))
            })
            .collect();
        let Some(consts) = consts else { return };
        map.remove("oneOf");
        map.insert("type".into(), json!("string"));
        map.insert(
            "enum".into(),
            Value::Array(consts.iter().map(|(c, _)| c.clone()).collect()),
        );
        map.insert(
            "enumDescriptions".into(),
            Value::Array(consts.iter().map(|(_, d)| json!(d)).collect()),
        );
    });
}

/// Kubernetes types from k8s-openapi leave `additionalProperties` open; a
/// misspelt field inside `affinity` or `resources` would then vanish
/// silently. Close every object schema that lists its properties.
fn close_kubernetes_objects(schema: &mut Value) {
    walk(schema, &mut |map| {
        if map.contains_key("properties") && !map.contains_key("additionalProperties") {
            map.insert("additionalProperties".into(), json!(false));
        }
    });
}

/// Kubernetes quantities (`cpu: 1`, `memory: 1Gi`) are strings or numbers.
fn allow_numeric_quantities(schema: &mut Value) {
    if let Some(quantity) = schema.pointer_mut("/definitions/Quantity")
        && let Some(map) = quantity.as_object_mut()
    {
        map.insert("type".into(), json!(["string", "number"]));
    }
}

/// Adds the rule table as `allOf` if/then items, the `$schema` and `$id`.
fn add_rules(schema: &mut Value) {
    let map = schema.as_object_mut().expect("root schema is an object");
    map.insert("$schema".into(), json!(DRAFT_07));
    map.insert("allOf".into(), Value::Array(rules::schema_rules()));
}

/// The property names a schema object allows at a JSON pointer of the
/// instance (for "did you mean" on unknown keys).
pub fn known_keys(schema: &Value, instance_pointer: &str) -> Vec<String> {
    let mut node = schema;
    for segment in instance_pointer.split('/').skip(1) {
        node = resolve(schema, node);
        node = match node.get("properties").and_then(|p| p.get(segment)) {
            Some(next) => next,
            None => match node.get("items") {
                Some(items) if segment.parse::<usize>().is_ok() => items,
                _ => match node.get("additionalProperties") {
                    Some(next) if next.is_object() => next,
                    _ => return Vec::new(),
                },
            },
        };
    }
    let node = resolve(schema, node);
    node.get("properties")
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

/// Follows a local `$ref` (and an `allOf` of one ref, as schemars writes
/// for a documented reference).
pub fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..16 {
        if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            match reference
                .strip_prefix('#')
                .and_then(|pointer| root.pointer(pointer))
            {
                Some(target) => node = target,
                None => return node,
            }
        } else if let Some(Value::Array(all)) = node.get("allOf")
            && all.len() == 1
        {
            node = &all[0];
        } else {
            return node;
        }
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_schema_is_draft_07_with_every_rule() {
        let schema = published_schema();
        assert_eq!(schema["$schema"], DRAFT_07);
        let text = schema["allOf"].to_string();
        for rule in rules::RULES {
            assert!(text.contains(rule.id), "rule {} missing", rule.id);
        }
        assert_eq!(schema["additionalProperties"], json!(false));
        assert!(schema["properties"]["global"].is_object());
    }

    #[test]
    fn strategy_type_is_a_plain_enum() {
        let schema = structural_schema();
        let text = schema.to_string();
        assert!(
            text.contains(r#""enum":["Recreate","RollingUpdate"]"#),
            "{text}"
        );
    }

    #[test]
    fn known_keys_follow_refs() {
        let schema = structural_schema();
        let keys = known_keys(&schema, "/strategy");
        assert!(keys.contains(&"rollingUpdate".to_string()), "{keys:?}");
        assert!(known_keys(&schema, "").contains(&"replicaCount".to_string()));
    }
}
