//! The rules in Rust: the rule keys read from values (typed or merged raw),
//! and every broken rule with a message that names the values.

use serde_json::Value;

use super::{KeyType, RULES, Rule, RuleKey, Test};
use go_semantics::flag as goflags;

/// The value of every rule key, defaults applied (null is absent).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleInputs(Vec<(RuleKey, Value)>);

impl RuleInputs {
    /// Reads the rule keys from values as Helm sees them; None when any
    /// of them has a value of the wrong type.
    pub fn read(values: &Value) -> Option<RuleInputs> {
        let mut inputs = Vec::new();
        for &key in RuleKey::ALL {
            let found = key
                .path()
                .split('.')
                .try_fold(values, |node, part| node.get(part))
                .filter(|value| !value.is_null())
                .cloned()
                .unwrap_or_else(|| key.default());
            let fits = match key.kind() {
                KeyType::Int => found.is_i64() || found.is_u64(),
                KeyType::Text => found.is_string(),
                KeyType::Bool => found.is_boolean(),
                KeyType::IntOrPercent => found.is_i64() || found.is_string(),
                KeyType::Any => true,
            };
            if !fits {
                return None;
            }
            inputs.push((key, found));
        }
        Some(RuleInputs(inputs))
    }

    /// A key's value.
    pub fn get(&self, key: RuleKey) -> &Value {
        &self
            .0
            .iter()
            .find(|(k, _)| *k == key)
            .expect("every rule key is read")
            .1
    }

    /// A key's value as text for messages.
    pub fn text(&self, key: RuleKey) -> String {
        match self.get(key) {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

impl Test {
    /// Whether a key's value passes the test.
    pub fn holds(self, value: &Value) -> bool {
        match self {
            Test::AtLeast(n) => value.as_i64().is_some_and(|v| v >= n),
            Test::AtMost(n) => value.as_i64().is_some_and(|v| v <= n),
            Test::Is(text) => value.as_str() == Some(text),
            Test::IsNot(text) => value.as_str() != Some(text),
            Test::Set => !value.is_null(),
            Test::True => value == &Value::Bool(true),
            Test::NotTrue => value != &Value::Bool(true),
            Test::Zero => {
                value.as_i64() == Some(0)
                    || value.as_str().is_some_and(|text| {
                        let digits = text.strip_suffix('%').unwrap_or(text);
                        !digits.is_empty() && digits.chars().all(|c| c == '0')
                    })
            }
            Test::NotZero => !Test::Zero.holds(value),
            Test::FlagOn(flag) => {
                unreadable_args(value) || args(value).any(|arg| goflags::turns_on(flag, arg))
            }
            Test::FlagNot(flag, setting) => {
                let wanted = format!("--{flag}={setting}");
                unreadable_args(value)
                    || !args(value).any(|arg| arg == wanted)
                    || args(value).any(|arg| goflags::sets(flag, arg) && arg != wanted)
            }
            Test::EnvNot(name, setting) => {
                let mut entries = env_entries(value, name).peekable();
                entries.peek().is_none()
                    || entries
                        .any(|entry| entry.get("valueFrom").is_some() || entry["value"] != setting)
            }
            Test::EnvOther(name, setting) => env_entries(value, name).any(|entry| {
                entry.get("valueFrom").is_none() && entry["value"].as_str().unwrap_or("") != setting
            }),
        }
    }
}

/// The entries named `name` of a container's `env`.
fn env_entries<'a>(env: &'a Value, name: &'a str) -> impl Iterator<Item = &'a Value> {
    env.as_array()
        .into_iter()
        .flatten()
        .filter(move |entry| entry["name"] == name)
}

/// The strings of a list of arguments.
fn args(value: &Value) -> impl Iterator<Item = &str> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether an argument list's flags cannot be read as the manager reads
/// them, so a rule on its flags counts as broken: Go's flag package stops
/// at the first argument that is not a flag (`-` too) or after `--`, so
/// what follows is never parsed; Kubernetes expands `$(VAR)` from the
/// environment before the manager sees it; and a list that starts with
/// the container's `command` (the CEL marks it `$command`) runs what the
/// command says. The rendered containers hold none of these.
pub(super) fn unreadable_args(value: &Value) -> bool {
    args(value).any(|arg| arg.contains("$(") || !arg.starts_with('-') || arg == "-" || arg == "--")
}

/// A broken rule, with a message that names the values involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule that is broken.
    pub rule: Rule,
    /// The message, naming the actual values.
    pub message: String,
    /// JSON pointer of the key to point at.
    pub pointer: String,
    /// The keys of the alternative that holds, the topology left out:
    /// what breaks the rule, to point at before the rule's other keys.
    pub breaking: Vec<RuleKey>,
}

/// Every broken rule (not only the first).
pub fn check_inputs(inputs: &RuleInputs) -> Vec<Violation> {
    RULES
        .iter()
        .filter_map(|rule| {
            let holding = rule.values_breach().into_iter().find(|alternative| {
                alternative
                    .iter()
                    .all(|(key, test)| test.holds(inputs.get(*key)))
            })?;
            Some(Violation {
                rule: *rule,
                message: (rule.message)(inputs),
                pointer: rule.keys[0].pointer(),
                breaking: holding
                    .into_iter()
                    .map(|(key, _)| key)
                    .filter(|key| *key != RuleKey::Topology)
                    .collect(),
            })
        })
        .collect()
}

/// Checks every rule on shape-checked values, as the chart sees them
/// ([`crate::model::Model::json`]).
pub fn check(values: &Value) -> Vec<Violation> {
    let inputs = RuleInputs::read(values).expect("typed values have typed rule keys");
    check_inputs(&inputs)
}

/// Checks every rule on values as merged from files (not shape-checked):
/// None when a key the rules read has the wrong type.
pub fn check_json(values: &Value) -> Option<Vec<Violation>> {
    RuleInputs::read(values).map(|inputs| check_inputs(&inputs))
}

/// Whether a dotted key is, holds or lies inside a key the rules read.
pub fn touches_rule_key(key: &str) -> bool {
    RuleKey::ALL.iter().any(|rule_key| {
        let rule_key = rule_key.path();
        key == rule_key
            || rule_key.starts_with(&format!("{key}."))
            || key.starts_with(&format!("{rule_key}."))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The flag tests read arguments as Go's flag package does.
    #[test]
    fn flag_tests_read_arguments_as_go_does() {
        let on = Test::FlagOn("enable-leader-election");
        for args in [
            json!(["--enable-leader-election"]),
            json!(["-enable-leader-election"]),
            json!(["--v=2", "--enable-leader-election=true"]),
            json!(["--enable-leader-election=T"]),
            // Not readable as flags, so not known to be off: a positional
            // argument (the parse stops there), `--`, a command, $(VAR).
            json!(["enable-leader-election"]),
            json!(["--", "--v=2"]),
            json!(["$command", "--v=2"]),
            json!(["--v=$(LEVEL)"]),
        ] {
            assert!(on.holds(&args), "{args}");
        }
        for args in [
            json!([]),
            json!(["--enable-leader-election=false"]),
            json!(["--enable-leader-election-x"]),
            json!(null),
        ] {
            assert!(!on.holds(&args), "{args}");
        }
        let not_none = Test::FlagNot("crd-management", "none");
        assert!(!not_none.holds(&json!(["--v=2", "--crd-management=none"])));
        for args in [
            json!([]),
            json!(["--crd-management=auto"]),
            json!(["--crd-management=none", "--crd-management=auto"]),
            json!(["--crd-management=none", "-crd-management", "auto"]),
            json!(["--crd-management", "none"]),
            json!(["--v=2", "--", "--crd-management=none"]),
            json!(["$command", "--crd-management=none"]),
            json!(["--crd-management=none", "$(EXTRA)"]),
        ] {
            assert!(not_none.holds(&args), "{args}");
        }
    }

    /// The environment test wants the variable as a literal, once or
    /// always the same, and nothing that reads it from elsewhere.
    #[test]
    fn env_tests_want_the_literal_value() {
        let not_webhooks = Test::EnvNot("AZURE_OPERATOR_MODE", "webhooks");
        let mode = |value: Value| json!({"name": "AZURE_OPERATOR_MODE", "value": value});
        for env in [
            json!([mode(json!("webhooks"))]),
            json!([{"name": "X", "value": "1"}, mode(json!("webhooks")), mode(json!("webhooks"))]),
        ] {
            assert!(!not_webhooks.holds(&env), "{env}");
        }
        for env in [
            json!([]),
            json!(null),
            json!([mode(json!("watchers-and-webhooks"))]),
            json!([mode(json!("webhooks")), mode(json!("watchers"))]),
            json!([{"name": "AZURE_OPERATOR_MODE"}]),
            json!([{"name": "AZURE_OPERATOR_MODE", "valueFrom": {"configMapKeyRef": {"name": "m", "key": "k"}}}]),
            json!([{"name": "AZURE_OPERATOR_MODE", "value": "webhooks", "valueFrom": {}}]),
        ] {
            assert!(not_webhooks.holds(&env), "{env}");
        }
        let other = Test::EnvOther("AZURE_OPERATOR_MODE", "watchers-and-webhooks");
        let secret = json!({"name": "AZURE_OPERATOR_MODE", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}});
        for env in [
            json!([]),
            json!([secret]),
            json!([mode(json!("watchers-and-webhooks"))]),
        ] {
            assert!(!other.holds(&env), "{env}");
        }
        for env in [
            json!([mode(json!("webhooks"))]),
            json!([secret, mode(json!("watchers"))]),
            json!([{"name": "AZURE_OPERATOR_MODE"}]),
        ] {
            assert!(other.holds(&env), "{env}");
        }
    }
}
