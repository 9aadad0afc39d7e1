//! Rule violations as diagnostics, each at the key of the rule that a
//! values file sets, and the fallback that still reads the rules when
//! other keys have shape errors (so one run reports every problem).

use crate::diagnostics::Diagnostic;
use crate::read::Merged;
use crate::rules::Violation;
use helm_values::pointer::to_key_path;

/// The rule violations as diagnostics, each at the first key that breaks
/// it (of the alternative that holds) that a values file sets, else at the
/// first key of the rule that one sets.
pub fn rule_diagnostics(merged: &Merged, violations: &[Violation]) -> Vec<Diagnostic> {
    violations
        .iter()
        .map(|violation| {
            // the rule's keys in its order of preference, those that
            // break it first
            let rule_keys = violation.rule.keys.iter().copied();
            let breaking: Vec<_> = violation.breaking.iter().map(|key| key.key()).collect();
            let pointer = rule_keys
                .clone()
                .filter(|key| breaking.contains(key))
                .chain(breaking.iter().copied())
                .chain(rule_keys)
                .map(|key| key.pointer())
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

/// The rules, read straight from the merged values when other keys have
/// shape problems; nothing when a shape problem touches a key the rules
/// read, or when one of those keys is itself malformed.
pub(super) fn rules_despite_shape_errors(merged: &Merged, shape: &[Diagnostic]) -> Vec<Violation> {
    if shape
        .iter()
        .any(|d| d.key.is_empty() || crate::rules::evaluate::touches_rule_key(&d.key))
    {
        return Vec::new();
    }
    crate::rules::check_json(&merged.value).unwrap_or_default()
}
