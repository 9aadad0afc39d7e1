//! Range checks: integers too wide for the Kubernetes field that holds
//! them (32 bits unless the schema says `int64`), which draft-07
//! validators let through, and integral floats (`1.0`) read as the
//! integers Helm takes them for.

use serde_json::Value;

use crate::diagnostics::Diagnostic;
use crate::read::Merged;
use crate::schema;
use helm_values::pointer::{escape_segment, to_key_path};

/// `1.0` is an integer to JSON Schema (and to Helm, which reads every
/// number as a float); make it one for the typed model too.
pub(super) fn integral_floats_to_integers(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_to_integers),
        Value::Object(map) => map.values_mut().for_each(integral_floats_to_integers),
        _ => {}
    }
}

/// Keys the schema declares `int64` whose Kubernetes field is `int32`:
/// `replicaCount` becomes `spec.replicas`.
const INT32_KEYS: [&str; 1] = ["/replicaCount"];

/// Integers outside 32 bits where the field holds 32 (every integer whose
/// schema is not `format: int64`). Draft-07 validators ignore `format`, so
/// without this such a value reached the typed model and failed there with
/// no position (or, for `replicaCount`, crashed it).
pub(super) fn range_diagnostics(merged: &Merged, typed: &Value, schema: &Value) -> Vec<Diagnostic> {
    fn has_wide_number(value: &Value) -> bool {
        match value {
            Value::Number(n) => n.as_i64().is_none_or(|i| i32::try_from(i).is_err()),
            Value::Array(items) => items.iter().any(has_wide_number),
            Value::Object(map) => map.values().any(has_wide_number),
            _ => false,
        }
    }
    let mut out = Vec::new();
    // Every value fits 32 bits in nearly every file: skip the schema walk.
    if !has_wide_number(typed) {
        return out;
    }
    check_ranges(merged, schema, schema, typed, "", &mut out);
    out
}

fn check_ranges(
    merged: &Merged,
    root: &Value,
    node: &Value,
    value: &Value,
    pointer: &str,
    out: &mut Vec<Diagnostic>,
) {
    let node = schema::resolve(root, node);
    // The node and its `anyOf`/`oneOf` branches (an `Option` is `anyOf [T, null]`).
    let branches: Vec<&Value> = std::iter::once(node)
        .chain(
            ["anyOf", "oneOf"]
                .iter()
                .filter_map(|k| node.get(*k).and_then(Value::as_array))
                .flatten()
                .map(|branch| schema::resolve(root, branch)),
        )
        .collect();
    match value {
        Value::Number(n) => {
            let integer_schemas: Vec<&&Value> = branches
                .iter()
                .filter(|s| s.get("type").and_then(Value::as_str) == Some("integer"))
                .collect();
            if integer_schemas.is_empty() {
                return;
            }
            let (bits, min, max) = if INT32_KEYS.contains(&pointer)
                || integer_schemas
                    .iter()
                    .all(|s| s.get("format").and_then(Value::as_str) != Some("int64"))
            {
                (32, i64::from(i32::MIN), i64::from(i32::MAX))
            } else {
                (64, i64::MIN, i64::MAX)
            };
            let fits = match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => (min..=max).contains(&i),
                (None, Some(f)) => f >= min as f64 && f <= max as f64,
                (None, None) => false,
            };
            if !fits {
                let key = to_key_path(pointer);
                let (keyword, bound) = if n.as_f64().is_some_and(|f| f > 0.0) {
                    ("maximum", format!("at most {max}"))
                } else {
                    ("minimum", format!("at least {min}"))
                };
                let mut d = merged.diagnostic(pointer, false);
                d.keyword = Some(keyword.into());
                d.message = format!(
                    "`{key}` must be {bound}: Kubernetes holds it in {bits} bits{}",
                    if merged.hides_value(pointer) {
                        String::new()
                    } else {
                        format!(" (got {n})")
                    }
                );
                d.help = Some(format!("set `{key}` to a smaller number"));
                out.push(d);
            }
        }
        Value::Object(map) => {
            for (key, child) in map {
                let child_schema = branches.iter().find_map(|node| {
                    node.get("properties")
                        .and_then(|p| p.get(key))
                        .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
                });
                if let Some(child_schema) = child_schema {
                    let child_pointer = format!("{pointer}/{}", escape_segment(key));
                    check_ranges(merged, root, child_schema, child, &child_pointer, out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = branches.iter().find_map(|node| node.get("items")) {
                for (index, item) in items.iter().enumerate() {
                    check_ranges(
                        merged,
                        root,
                        item_schema,
                        item,
                        &format!("{pointer}/{index}"),
                        out,
                    );
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::check::check_text as check;

    #[test]
    fn integers_too_wide_for_kubernetes_are_refused_at_their_key() {
        // Used to reach the model and panic (replicaCount) or fail there
        // with no position (the other 32-bit fields).
        for (text, key, line) in [
            ("replicaCount: 4294967296\n", "replicaCount", 1),
            (
                "revisionHistoryLimit: 3000000000\n",
                "revisionHistoryLimit",
                1,
            ),
            (
                "replicaCount: 1\nfeatureGates:\n  singleReplicaRollingUpdate: true\nstrategy:\n  type: RollingUpdate\n  rollingUpdate:\n    maxSurge: 3000000000\n",
                "strategy.rollingUpdate.maxSurge",
                7,
            ),
        ] {
            let Err(d) = check(text) else {
                panic!("accepted: {text}")
            };
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(d[0].key, key);
            assert_eq!(d[0].line, Some(line));
            assert_eq!(d[0].keyword.as_deref(), Some("maximum"));
            assert!(d[0].message.contains("2147483647"), "{}", d[0].message);
        }
    }

    #[test]
    fn integral_floats_are_integers_as_in_helm() {
        let model = check("replicaCount: 1.0\nrevisionHistoryLimit: 3.0\n");
        assert!(model.is_ok(), "{:?}", model.err());
    }
}
