//! Rule violations as diagnostics, each at the key of the rule that a
//! values file sets, and the fallback that still reads the rules when
//! other keys have shape errors (so one run reports every problem).

use serde_json::Value;

use crate::diagnostics::Diagnostic;
use crate::pointer::to_key_path;
use crate::read::Merged;
use crate::rules::Violation;
use crate::values::Values;

/// The rule violations as diagnostics, each at the first key of the rule
/// that a values file sets.
pub fn rule_diagnostics(merged: &Merged, violations: &[Violation]) -> Vec<Diagnostic> {
    violations
        .iter()
        .map(|violation| {
            let pointer = violation
                .rule
                .keys
                .iter()
                .map(|key| format!("/{}", key.replace('.', "/")))
                .find(|pointer| {
                    merged
                        .locate(pointer)
                        .is_some_and(|(_, _, found)| &found == pointer)
                })
                .unwrap_or_else(|| violation.pointer.clone());
            let mut d = merged.diagnostic(&pointer, false);
            d.key = to_key_path(&pointer);
            d.rule = Some(violation.rule.id.to_string());
            d.message = violation.message.clone();
            d.help = Some(violation.rule.help.to_string());
            d
        })
        .collect()
}

/// The keys the rules read.
const RULE_KEYS: [&str; 4] = [
    "replicaCount",
    "strategy.type",
    "strategy.rollingUpdate",
    "featureGates.singleReplicaRollingUpdate",
];

/// The rules, read straight from the merged values when other keys have
/// shape problems; nothing when any key the rules read is itself malformed.
pub(super) fn rules_despite_shape_errors(merged: &Merged, shape: &[Diagnostic]) -> Vec<Violation> {
    let touches_rule_key = |key: &str| {
        RULE_KEYS.iter().any(|rule_key| {
            key == *rule_key
                || rule_key.starts_with(&format!("{key}."))
                || key.starts_with(&format!("{rule_key}."))
        })
    };
    if shape
        .iter()
        .any(|d| d.key.is_empty() || touches_rule_key(&d.key))
    {
        return Vec::new();
    }
    let value = &merged.value;
    let mut values = Values::default();
    match value.get("replicaCount").map(Value::as_i64) {
        Some(Some(replicas)) => values.replica_count = replicas,
        Some(None) => return Vec::new(),
        None => {}
    }
    match value.pointer("/strategy/type").map(Value::as_str) {
        Some(Some("Recreate")) | None => {
            values.strategy.kind = crate::values::StrategyType::Recreate
        }
        Some(Some("RollingUpdate")) => {
            values.strategy.kind = crate::values::StrategyType::RollingUpdate
        }
        Some(_) => return Vec::new(),
    }
    if value
        .pointer("/strategy/rollingUpdate")
        .is_some_and(|v| !v.is_null())
    {
        values.strategy.rolling_update = Some(Default::default());
    }
    match value
        .pointer("/featureGates/singleReplicaRollingUpdate")
        .map(Value::as_bool)
    {
        Some(Some(gate)) => values.feature_gates.single_replica_rolling_update = gate,
        Some(None) => return Vec::new(),
        None => {}
    }
    crate::rules::check(&values)
}
