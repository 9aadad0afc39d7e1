//! The rules in CEL, for the in-cluster guard (a ValidatingAdmissionPolicy,
//! see `objects::admission`): each rule whose keys all have a field on the
//! Deployment becomes one validation, generated from the rule table like
//! every other enforcement point, so `kubectl edit` and `kubectl scale`
//! cannot make a shape that `validate` refuses.
//!
//! In the cluster a missing field means the API server's default, not the
//! chart's: a Deployment without `replicas` has 1, without a strategy type
//! RollingUpdate.

use super::{Condition, RULES, Rule, RuleKey, Test};

/// What the policy sees: the Deployment itself, or a `scale` request whose
/// `object` is a Scale and whose `params` is the Deployment it scales.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// CREATE and UPDATE of the Deployment.
    Deployment,
    /// UPDATE of the Deployment's `scale` subresource.
    Scale,
}

/// One validation of the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// True when the rule holds.
    pub expression: String,
    /// The rule id first, then the rule and its help.
    pub message: String,
}

/// The CEL that reads `key` on `subject`, with the API server's default
/// when the field is missing; None for a key the Deployment does not carry
/// (the feature gate is a value, not a field) or that the API server
/// already validates itself (maxSurge and maxUnavailable both 0 is refused
/// by its own Deployment validation).
fn read(key: RuleKey, subject: Subject) -> Option<String> {
    // The Deployment: the object, or the scale request's params.
    let deployment = match subject {
        Subject::Deployment => "object",
        Subject::Scale => "params",
    };
    let strategy = format!("{deployment}.spec.strategy");
    Some(match key {
        // A Scale carries the new count as spec.replicas too, but leaves
        // it out when it is 0 (the field is not a pointer there).
        RuleKey::ReplicaCount => match subject {
            Subject::Deployment => "(has(object.spec.replicas) ? object.spec.replicas : 1)".into(),
            Subject::Scale => "(has(object.spec.replicas) ? object.spec.replicas : 0)".into(),
        },
        RuleKey::StrategyType => format!(
            "(has({deployment}.spec.strategy) && has({strategy}.type) ? {strategy}.type : 'RollingUpdate')"
        ),
        RuleKey::RollingUpdate => {
            format!("(has({deployment}.spec.strategy) && has({strategy}.rollingUpdate))")
        }
        RuleKey::MaxSurge | RuleKey::MaxUnavailable | RuleKey::Gate => return None,
    })
}

/// The CEL for one condition, or None when it cannot be read.
fn condition(condition: &Condition, subject: Subject) -> Option<String> {
    let field = read(condition.key, subject)?;
    Some(match condition.test {
        Test::AtLeast(n) => format!("{field} >= {n}"),
        Test::AtMost(n) => format!("{field} <= {n}"),
        Test::Is(text) => format!("{field} == '{text}'"),
        Test::Set => field,
        Test::NotTrue | Test::Zero => return None,
    })
}

/// The validation for one rule on `subject`, or None when the rule cannot
/// be checked there. A scale request changes only the replica count, so
/// only rules that read it are checked on `scale`.
pub fn validation(rule: &Rule, subject: Subject) -> Option<Validation> {
    if subject == Subject::Scale && !rule.breach.iter().any(|c| c.key == RuleKey::ReplicaCount) {
        return None;
    }
    let breach: Vec<String> = rule
        .breach
        .iter()
        .map(|c| condition(c, subject))
        .collect::<Option<_>>()?;
    Some(Validation {
        expression: format!("!({})", breach.join(" && ")),
        message: format!("{}: {}; {}", rule.id, rule.summary, rule.help),
    })
}

/// Every validation for `subject`, in the rule table's order.
pub fn validations(subject: Subject) -> Vec<Validation> {
    RULES
        .iter()
        .filter_map(|rule| validation(rule, subject))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expressible_rules_become_validations() {
        let ids = |subject| -> Vec<String> {
            validations(subject)
                .iter()
                .map(|v| v.message.split(':').next().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            ids(Subject::Deployment),
            [
                "ha-requires-recreate",
                "recreate-forbids-rolling-update",
                "replica-count-positive"
            ]
        );
        assert_eq!(
            ids(Subject::Scale),
            ["ha-requires-recreate", "replica-count-positive"]
        );
        let ha = &validations(Subject::Scale)[0];
        assert_eq!(
            ha.expression,
            "!((has(object.spec.replicas) ? object.spec.replicas : 0) >= 2 && (has(params.spec.strategy) && has(params.spec.strategy.type) ? params.spec.strategy.type : 'RollingUpdate') == 'RollingUpdate')"
        );
    }
}
