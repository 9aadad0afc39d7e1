//! Helm's two merges of values: a values file over the earlier ones
//! ([`merge_maps`], Helm's `mergeMaps` of `pkg/cli/values`: `null` is
//! kept, to delete a chart default later), and the user's values over the
//! chart's defaults ([`merge`], as Helm coalesces them: `null` deletes a
//! key the defaults hold, and is kept where they do not).
//! In both, maps merge deeply and anything else, lists included, replaces.

use serde_json::{Map, Value};

/// Helm's coalesce of the user's values (`overlay`) over the chart's
/// defaults (`base`): maps merge deeply, anything else (lists included)
/// replaces. A `null` deletes the key where the defaults hold it; where
/// they do not (a key of the chart's schema the defaults leave out, an
/// entry of a map the user added), Helm walks no defaults and the `null`
/// stays, for the schema to judge and the templates to read.
pub fn merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(key) {
                    Some(_) if value.is_null() => {
                        base.remove(key);
                    }
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge(existing, value);
                    }
                    // anything the defaults do not walk is the user's, as
                    // written
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
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

/// Every number as Helm holds it after decoding YAML into Go's
/// `map[string]interface{}`: a float64 (what templates and `fail` guards
/// then compare and print).
pub fn as_float64(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(float) = n.as_f64() {
                *value = Value::from(float);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(as_float64),
        Value::Object(map) => map.values_mut().for_each(as_float64),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn over_the_defaults_maps_merge_lists_replace_and_null_deletes_a_default() {
        let mut base = json!({"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": {"z": 1}, "d": "s"});
        merge(
            &mut base,
            &json!({
                "a": {"y": [3], "x": null, "w": {"n": null, "m": 1}, "v": null},
                "b": null,
                "c": "s",
                "d": {"p": null},
                "e": null
            }),
        );
        // null deletes a.x and b (the defaults hold them); a.w.n, a.v and
        // e are not the defaults' and stay null, as d.p inside a map that
        // replaced a default string
        assert_eq!(
            base,
            json!({
                "a": {"y": [3], "w": {"n": null, "m": 1}, "v": null},
                "c": "s",
                "d": {"p": null},
                "e": null
            })
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
