//! Helm's two merges of values: a values file over the earlier ones
//! ([`merge_maps`], Helm's `mergeMaps` of `pkg/cli/values`: `null` is
//! kept, to delete a chart default later), and the user's values over the
//! chart's defaults ([`merge`], as Helm coalesces them: `null` deletes).
//! In both, maps merge deeply and anything else, lists included, replaces.

use serde_json::{Map, Value};

/// Helm's merge: maps merge deeply, anything else (lists included) is
/// replaced, and `null` deletes the key.
pub fn merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                if value.is_null() {
                    base.remove(key);
                } else if let Some(existing) = base.get_mut(key)
                    && existing.is_object()
                    && value.is_object()
                {
                    merge(existing, value);
                } else {
                    let mut fresh = Value::Null;
                    merge_into_fresh(&mut fresh, value);
                    base.insert(key.clone(), fresh);
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

/// Copies a value, dropping null map entries (Helm never keeps them).
fn merge_into_fresh(target: &mut Value, value: &Value) {
    *target = match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    let mut fresh = Value::Null;
                    merge_into_fresh(&mut fresh, v);
                    (k.clone(), fresh)
                })
                .collect(),
        ),
        other => other.clone(),
    };
}

/// Helm's merge of one values file over the earlier ones (before the
/// chart defaults): maps merge deeply, anything else replaces, and `null`
/// is kept (it deletes a chart default later).
pub fn merge_maps(mut base: Map<String, Value>, overlay: Map<String, Value>) -> Map<String, Value> {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(inner)) => {
                let merged = merge_maps(std::mem::take(existing), inner);
                *existing = merged;
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn over_the_defaults_maps_merge_lists_replace_and_null_deletes() {
        let mut base = json!({"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": {"z": 1}});
        merge(
            &mut base,
            &json!({"a": {"y": [3], "w": {"n": null, "m": 1}}, "b": null, "c": "s"}),
        );
        assert_eq!(
            base,
            json!({"a": {"x": 1, "y": [3], "w": {"m": 1}}, "c": "s"})
        );
    }

    #[test]
    fn file_over_file_keeps_null_to_delete_a_default_later() {
        let first = json!({"a": {"x": 1, "y": 2}, "b": [1]});
        let second = json!({"a": {"x": null}, "b": [2, 3]});
        let (Value::Object(first), Value::Object(second)) = (first, second) else {
            unreachable!()
        };
        assert_eq!(
            Value::Object(merge_maps(first, second)),
            json!({"a": {"x": null, "y": 2}, "b": [2, 3]})
        );
    }
}
