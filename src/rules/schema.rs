//! The rules as draft-07 `if`/`then` for `values.schema.json`, generated
//! from the rule entries, written so that editors point at the offending
//! key and show the rule id: yaml-language-server shows an `errorMessage`
//! only on the sub-schema holding the failing keyword (and ignores it for
//! `not`/`minimum`), so each breach ends in a schema that fails exactly
//! where asogen points (see [`fail_at`]).

use serde_json::{Value, json};

use super::{KeyType, RULES, Rule, RuleKey, Test};
use crate::keys::Key;

/// The message an editor or Helm shows for a rule: the id first, then the
/// rule and the help, so any one line of output names all three.
pub fn schema_message(rule: &Rule) -> String {
    format!("{}: {}; help: {}", rule.id, rule.summary, rule.help)
}

/// A zero count or percentage however spelled ([`super::ZERO_PATTERN`]).
fn zero() -> Value {
    json!({"anyOf": [{"const": 0}, {"type": "string", "pattern": super::ZERO_PATTERN}]})
}

/// The schema of a test's passing values at the key itself.
fn leaf(test: Test) -> Value {
    match test {
        Test::AtLeast(n) => json!({"type": "integer", "minimum": n}),
        Test::AtMost(n) => json!({"type": "integer", "maximum": n}),
        Test::Is(text) => json!({"const": text}),
        Test::IsNot(text) => json!({"not": {"const": text}}),
        Test::Set => json!({"not": {"type": "null"}}),
        Test::True => json!({"const": true}),
        Test::NotTrue => json!({"not": {"const": true}}),
        Test::Zero => zero(),
        Test::NotZero => json!({"not": zero()}),
        // Tests on arguments are tests on fields, never on values.
        Test::FlagOn(_) | Test::FlagNot(..) | Test::EnvNot(..) | Test::EnvOther(..) => {
            unreachable!("no values key holds arguments or an environment")
        }
    }
}

/// `schema` at a dotted path: the path is present down to the leaf.
fn at(path: &str, schema: Value) -> Value {
    path.rsplit('.').fold(
        schema,
        |inner, key| json!({"properties": {key: inner}, "required": [key]}),
    )
}

/// The key at `path` is left out or null at some level.
fn absent(path: &str) -> Value {
    json!({"not": at(path, json!({"not": {"type": "null"}}))})
}

/// A condition holds: on the written value, or on the chart default when
/// the file leaves the key out (null counts as left out).
fn holds((key, test): &(RuleKey, Test)) -> Value {
    let written = at(key.path(), leaf(*test));
    if test.holds(&key.default()) {
        json!({"anyOf": [absent(key.path()), written]})
    } else {
        written
    }
}

/// Fails the key at `path` with `message`, where asogen points too: on
/// a scalar rule key, its value (a `const` no value can match: the rule
/// id); on a map, the key itself (`false`, with the message on its parent).
fn fail_at(key: Key, message: &str, id: &str) -> Value {
    let path = key.path();
    let scalar = RuleKey::ALL
        .iter()
        .any(|rule_key| rule_key.key() == key && rule_key.kind() != KeyType::Any);
    if scalar {
        return at(path, json!({"const": id, "errorMessage": message}));
    }
    let (parent, leaf) = path.rsplit_once('.').unwrap_or(("", path));
    let fail = json!({"properties": {leaf: false}, "errorMessage": message});
    if parent.is_empty() {
        fail
    } else {
        at(parent, fail)
    }
}

/// One rule: for each key it may be reported on, "breached, this key
/// written, the keys before it not" makes this key fail with the message.
fn rule_schemas(rule: &Rule) -> Vec<Value> {
    // One alternative is spliced in as its conditions; several are anyOf.
    let alternatives: Vec<Vec<Value>> = rule
        .values_breach()
        .iter()
        .map(|alternative| alternative.iter().map(holds).collect())
        .collect();
    if alternatives.is_empty() {
        return Vec::new();
    }
    let breach: Vec<Value> = match <[Vec<Value>; 1]>::try_from(alternatives) {
        Ok([only]) => only,
        Err(many) => {
            let any: Vec<Value> = many
                .into_iter()
                .map(|conditions| json!({"allOf": conditions}))
                .collect();
            vec![json!({"anyOf": any})]
        }
    };
    let message = schema_message(rule);
    rule.keys
        .iter()
        .enumerate()
        .map(|(index, key)| {
            let mut all = breach.clone();
            all.push(at(key.path(), json!({"not": {"type": "null"}})));
            all.extend(
                rule.keys[..index]
                    .iter()
                    .map(|before| absent(before.path())),
            );
            json!({"if": {"allOf": all}, "then": fail_at(*key, &message, rule.id)})
        })
        .collect()
}

/// Every rule as `if`/`then` schemas.
pub fn schema_rules() -> Vec<Value> {
    RULES.iter().flat_map(rule_schemas).collect()
}
