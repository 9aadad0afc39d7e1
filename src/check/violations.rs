//! Rule violations as diagnostics, each at the key of the rule that a
//! values file sets, and the fallback that still reads the rules when
//! other keys have shape errors (so one run reports every problem).

use crate::diagnostics::Diagnostic;
use crate::read::Merged;
use crate::rules::{RuleKey, Violation};
use crate::schema::allowed_values;
use helm_values::pointer::to_key_path;
use serde_json::Value;

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

/// The most readings of misspelt enum values the rules are checked under
/// (topology's three values times strategy.type's two fit well below).
const MAX_READINGS: usize = 16;

/// The rules, read straight from the merged values when other keys have
/// shape problems. A rule key whose value is not one of its enum's values
/// is read as the one value it differs from only in case (`topology:
/// Split` as `split`, which its error suggests; the violations then say
/// so), else as each value it allows, keeping a violation only when every
/// reading has it: it holds whatever the user meant. Nothing when any
/// other shape problem touches a key the rules read.
pub(super) fn rules_despite_shape_errors(merged: &Merged, shape: &[Diagnostic]) -> Vec<Violation> {
    let schema = crate::schema::structural_schema_ref();
    let mut readings = vec![merged.value.clone()];
    let mut assumed = Vec::new();
    for d in shape {
        if !d.key.is_empty() && !crate::rules::evaluate::touches_rule_key(&d.key) {
            continue;
        }
        let choices = RuleKey::ALL
            .iter()
            .find(|key| key.path() == d.key && d.keyword.as_deref() == Some("enum"))
            .and_then(|key| {
                let pointer = key.key().pointer();
                let allowed = allowed_values(schema, &pointer)?;
                Some((pointer, allowed))
            });
        let Some((pointer, mut choices)) = choices else {
            return Vec::new();
        };
        let given = merged.value.pointer(&pointer).and_then(Value::as_str);
        let same_but_case = choices.iter().find(|choice| {
            choice
                .as_str()
                .zip(given)
                .is_some_and(|(choice, given)| choice.eq_ignore_ascii_case(given))
        });
        if let Some(choice) = same_but_case.cloned() {
            let shown = choice.as_str().unwrap_or_default();
            assumed.push(format!("{} read as {shown}", d.key));
            choices = vec![choice];
        }
        readings = readings
            .iter()
            .flat_map(|reading| {
                choices.iter().map(|choice| {
                    let mut reading = reading.clone();
                    if let Some(slot) = reading.pointer_mut(&pointer) {
                        *slot = choice.clone();
                    }
                    reading
                })
            })
            .collect();
        if readings.len() > MAX_READINGS {
            return Vec::new();
        }
    }
    let Some(mut each) = readings
        .iter()
        .map(crate::rules::check_json)
        .collect::<Option<Vec<_>>>()
    else {
        return Vec::new();
    };
    let first = each.remove(0);
    first
        .into_iter()
        .filter(|v| {
            each.iter()
                .all(|other| other.iter().any(|w| w.rule.id == v.rule.id))
        })
        .map(|mut v| {
            if !assumed.is_empty() {
                v.message = format!("{} (checked with {})", v.message, assumed.join(", "));
            }
            v
        })
        .collect()
}
