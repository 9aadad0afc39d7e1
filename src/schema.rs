//! `values.schema.json`, generated in one place as a pipeline of small named
//! transforms over the schemars-derived schema of [`Values`](crate::values::Values).
//!
//! Two schemas come out: the *structural* schema (types, enums, closed
//! objects) that asogen validates shapes with before it applies the Rust
//! rules, and the *published* schema (structural plus the rule table as
//! draft-07 `if`/`then`) that ships in the chart for Helm and editors.

use serde_json::{Map, Value, json};

use crate::rules;

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
    let mut schema = crate::values::derived_schema().clone();
    enums_from_const_variants(&mut schema);
    close_kubernetes_objects(&mut schema);
    allow_numeric_quantities(&mut schema);
    schema
}

/// A `null` at a key whose absence the chart reads as empty
/// ([`crate::values::absence_is_empty`]: `nodeSelector: null` selects no
/// node) is a value the editor must accept; Helm's merge deletes the key
/// before its schema sees the values, and asogen's merge makes it empty.
/// Each such property (not the definition it refers to, which other keys
/// share) takes null beside its own schema, in the published schema only:
/// the values asogen checks are merged, so they hold no such null.
fn allow_null_where_absence_is_empty(schema: &mut Value) {
    for &key in crate::keys::ALL {
        if !crate::values::absence_is_empty(key) {
            continue;
        }
        let parent = match key.parent() {
            Some(parent) => node_pointer(schema, parent.path()),
            None => Some(String::new()),
        };
        let Some(Value::Object(node)) = parent.and_then(|parent| {
            let pointer = format!(
                "{parent}/properties/{}",
                helm_values::pointer::escape_segment(key.leaf())
            );
            schema.pointer_mut(&pointer)
        }) else {
            panic!("{} has a schema", key.path());
        };
        match node.get_mut("type") {
            Some(Value::String(kind)) => {
                let kind = std::mem::take(kind);
                node.insert("type".into(), json!([kind, "null"]));
            }
            _ => {
                // Its shape (a `$ref`) as one alternative, its words kept.
                let mut shape = Map::new();
                for keyword in [
                    "$ref",
                    "allOf",
                    "type",
                    "properties",
                    "additionalProperties",
                    "items",
                ] {
                    if let Some(value) = node.remove(keyword) {
                        shape.insert(keyword.into(), value);
                    }
                }
                node.insert("anyOf".into(), json!([{"type": "null"}, shape]));
            }
        }
    }
}

/// The structural schema narrowed to the top-level keys in `written`: every
/// other top-level value gets the schema `true`, and only the definitions
/// still referenced are kept.
///
/// Validating merged values (chart defaults, then the user's) against it
/// gives the same errors as the full schema, because the keywords at the
/// root (`properties`, `additionalProperties`) judge each key on its own and
/// a key nobody wrote holds the chart default, which the full schema
/// accepts (tested). It compiles in a fraction of the time when a values
/// file sets a few keys, which is the common case: a profile sets two.
pub fn structural_schema_for_keys<'a>(written: impl IntoIterator<Item = &'a str>) -> Value {
    let full = structural_schema_ref();
    let written: std::collections::BTreeSet<&str> = written.into_iter().collect();
    let mut narrowed = Map::new();
    for (keyword, value) in full.as_object().expect("root schema is an object") {
        match keyword.as_str() {
            "properties" => {
                let properties = value
                    .as_object()
                    .expect("properties is an object")
                    .iter()
                    .map(|(key, schema)| {
                        let schema = if written.contains(key.as_str()) {
                            schema.clone()
                        } else {
                            Value::Bool(true)
                        };
                        (key.clone(), schema)
                    })
                    .collect();
                narrowed.insert(keyword.clone(), Value::Object(properties));
            }
            "definitions" => {}
            _ => {
                narrowed.insert(keyword.clone(), value.clone());
            }
        }
    }
    let mut narrowed = Value::Object(narrowed);
    let definitions = referenced_definitions(full, &narrowed);
    if !definitions.is_empty() {
        narrowed["definitions"] = Value::Object(definitions);
    }
    narrowed
}

/// The `#/definitions/...` entries of `full` that `node` reaches, directly
/// or through other definitions.
fn referenced_definitions(full: &Value, node: &Value) -> Map<String, Value> {
    fn refs<'v>(value: &'v Value, found: &mut Vec<&'v str>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    match (key.as_str(), child) {
                        ("$ref", Value::String(target)) => {
                            if let Some(name) = target.strip_prefix("#/definitions/") {
                                found.push(name);
                            }
                        }
                        _ => refs(child, found),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| refs(item, found)),
            _ => {}
        }
    }
    let all = full.get("definitions").and_then(Value::as_object);
    let mut kept = Map::new();
    let mut pending = Vec::new();
    refs(node, &mut pending);
    while let Some(name) = pending.pop() {
        if kept.contains_key(name) {
            continue;
        }
        if let Some(definition) = all.and_then(|all| all.get(name)) {
            refs(definition, &mut pending);
            kept.insert(name.to_string(), definition.clone());
        }
    }
    kept
}

/// The schema the chart ships: shapes plus every rule, and the API
/// server's checks of labels and annotations.
pub fn published_schema() -> Value {
    let mut schema = structural_schema();
    allow_null_where_absence_is_empty(&mut schema);
    add_rules(&mut schema);
    add_metadata_checks(&mut schema);
    schema
}

/// The JSON pointer, in `schema`, of the node that governs the values at
/// a dotted path (through `properties` and `$ref`s).
fn node_pointer(schema: &Value, path: &str) -> Option<String> {
    let mut pointer = String::new();
    for key in path.split('.') {
        pointer = format!(
            "{pointer}/properties/{}",
            helm_values::pointer::escape_segment(key)
        );
        let node = schema.pointer(&pointer)?;
        let reference = node.get("$ref").or_else(|| {
            node.get("allOf")
                .and_then(Value::as_array)
                .filter(|all| all.len() == 1)
                .and_then(|all| all[0].get("$ref"))
        });
        if let Some(target) = reference.and_then(Value::as_str) {
            pointer = target.strip_prefix('#')?.to_string();
        }
    }
    Some(pointer)
}

/// The labels and annotations maps ([`crate::metadata::METADATA_VALUES`]):
/// keys (and label values) as the API server checks them, and the pod
/// labels kept off the Deployment's selector labels. Each schema carries
/// its code in an `errorMessage` for editors; Helm prints the key path and
/// the keyword. A key's syntax is a `patternProperties` (Helm reports an
/// "additional property" at the map's path) rather than `propertyNames`,
/// whose errors Helm 4's validator reports at a wrong path
/// (santhosh-tekuri/jsonschema#269); only the rare prefix longer than 253
/// bytes is left to `propertyNames`. The annotations' total size is the
/// chart guard's to check.
fn add_metadata_checks(schema: &mut Value) {
    use crate::metadata::{METADATA_VALUES, MetadataKind};
    let mut selector_checks = Vec::new();
    for map in METADATA_VALUES {
        let pointer = node_pointer(schema, map.key.path())
            .unwrap_or_else(|| panic!("{} is not in the values schema", map.key.path()));
        let node = schema
            .pointer_mut(&pointer)
            .and_then(Value::as_object_mut)
            .expect("a map's schema is an object");
        let (code, lower_cased) = match map.kind {
            MetadataKind::Labels => (crate::names::metadata_codes::LABEL_KEY, false),
            MetadataKind::Annotations => (crate::names::metadata_codes::ANNOTATION_KEY, true),
        };
        let message = format!(
            "{code}: the API server refuses this key in {}: a key is an optional DNS subdomain prefix (at most {} characters) and '/', then at most {} letters, digits, '-', '_' or '.' starting and ending with a letter or digit{}",
            map.lands_on(),
            crate::names::SUBDOMAIN_MAX,
            crate::names::KEY_NAME_MAX,
            if lower_cased {
                " (letters of either case)"
            } else {
                ""
            }
        );
        let value = match map.kind {
            MetadataKind::Labels => json!({
                "pattern": crate::names::label_value_pattern(),
                "errorMessage": format!(
                    "{}: the API server refuses this value in {}: a label value is empty or at most {} letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
                    crate::names::metadata_codes::LABEL_VALUE,
                    map.lands_on(),
                    crate::names::LABEL_VALUE_MAX
                ),
            }),
            MetadataKind::Annotations => json!({}),
        };
        let [syntax, prefix_length] = crate::names::key_patterns(lower_cased);
        let mut keys = Map::new();
        keys.insert(syntax, value);
        node.insert(
            "allOf".into(),
            json!([
                {"patternProperties": keys, "additionalProperties": false, "errorMessage": message},
                {"propertyNames": {"pattern": prefix_length, "errorMessage": message}},
            ]),
        );
        let selector = map.selector;
        if !selector.is_empty() {
            let refused: Map<String, Value> = selector
                .iter()
                .map(|(key, _)| (key.to_string(), Value::Bool(false)))
                .collect();
            let keys: Vec<String> = selector
                .iter()
                .map(|(key, value)| format!("{key}: {value}"))
                .collect();
            let check = json!({"properties": refused, "errorMessage": format!(
                "{}: {} must not set the Deployment's selector labels ({}), which the chart sets: another value leaves the Deployment selecting none of its pods",
                crate::names::metadata_codes::SELECTOR_LABEL,
                map.key.path(),
                keys.join(", ")
            )});
            selector_checks.push(
                map.key
                    .path()
                    .rsplit('.')
                    .fold(check, |inner, key| json!({"properties": {key: inner}})),
            );
        }
    }
    schema["allOf"]
        .as_array_mut()
        .expect("the rules are an allOf")
        .extend(selector_checks);
}

/// The published schema as the bytes written to `values.schema.json`:
/// pretty JSON and a final newline.
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

/// The schema object of the value at a JSON pointer of the instance, as
/// written there (a documented reference keeps its `description` and
/// `examples` beside the `$ref`: [`resolve`] follows it); None where the
/// schema says nothing of it.
pub fn node_at<'a>(schema: &'a Value, instance_pointer: &str) -> Option<&'a Value> {
    let mut node = schema;
    for segment in instance_pointer.split('/').skip(1) {
        node = resolve(schema, node);
        // a nullable object is an `anyOf` of the object and null
        let alternatives = node
            .get("anyOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|alternative| resolve(schema, alternative));
        let property = std::iter::once(node)
            .chain(alternatives)
            .find_map(|n| n.get("properties").and_then(|p| p.get(segment)));
        node = match property {
            Some(next) => next,
            None => match node.get("items") {
                Some(items) if segment.parse::<usize>().is_ok() => items,
                _ => match node.get("additionalProperties") {
                    Some(next) if next.is_object() => next,
                    _ => return None,
                },
            },
        };
    }
    Some(node)
}

/// The property names a schema object allows at a JSON pointer of the
/// instance (for "did you mean" on unknown keys).
pub fn known_keys(schema: &Value, instance_pointer: &str) -> Vec<String> {
    node_at(schema, instance_pointer)
        .and_then(|node| resolve(schema, node).get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

/// The values a schema `enum` allows at a JSON pointer of the instance;
/// None when the value there is not an enum.
pub fn allowed_values(schema: &Value, instance_pointer: &str) -> Option<Vec<Value>> {
    resolve(schema, node_at(schema, instance_pointer)?)
        .get("enum")?
        .as_array()
        .cloned()
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
        // Every rule values can break; none that only the cluster sees.
        for rule in rules::RULES {
            let reachable = !rule.values_breach().is_empty();
            assert_eq!(
                text.contains(&format!("\"{}: ", rule.id)),
                reachable,
                "rule {}",
                rule.id
            );
        }
        assert_eq!(schema["additionalProperties"], json!(false));
        assert!(schema["properties"]["global"].is_object());
    }

    #[test]
    fn no_keyword_the_dropped_transforms_would_rewrite() {
        let text = structural_schema().to_string();
        assert!(!text.contains("unevaluatedProperties"));
        assert!(!text.contains("prefixItems"));
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
