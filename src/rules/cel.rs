//! The rules in CEL, for the in-cluster guard (a ValidatingAdmissionPolicy,
//! see `objects::admission`): each rule whose keys all have a field on the
//! Deployment becomes one validation, generated from the rule table like
//! every other enforcement point, so `kubectl edit` and `kubectl scale`
//! cannot make a shape that `validate` refuses.
//!
//! In the cluster a missing field means the API server's default, not the
//! chart's: a Deployment without `replicas` has 1, without a strategy type
//! RollingUpdate.
//!
//! A scale request reads the strategy from its `params`: the Deployment as
//! the API server's informer last saw it, which lags the stored one for a
//! moment after every change. The request's `oldObject`, in contrast, is
//! the Scale of the Deployment being replaced (the storage runs validating
//! admission inside its optimistic-concurrency update, again on a conflict,
//! and the Scale carries the Deployment's resourceVersion). So a rule that
//! reads `params` is judged only when both resourceVersions agree, and
//! otherwise the request is refused with "retry": every scale that passes
//! was judged on the strategy it is stored with.

use serde_json::Value;

use super::{Condition, RULES, Rule, RuleKey, Test};
use crate::roles::{Field, Role};
use crate::values::Topology;

/// What the policy sees: the Deployment itself, or a `scale` request whose
/// `object` is a Scale and whose `params` is the Deployment it scales.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// CREATE and UPDATE of the Deployment.
    Deployment,
    /// UPDATE of the Deployment's `scale` subresource.
    Scale,
}

/// True when the scale request's `params` are the Deployment being scaled,
/// not an older copy of it.
const PARAMS_CURRENT: &str =
    "params.metadata.resourceVersion == oldObject.metadata.resourceVersion";

/// What a scale guard refusal says, after the rule id, when its copy of the
/// Deployment is not the one being scaled.
pub const NOT_CURRENT: &str = "not checked yet: the Deployment changed a moment ago and the API server's copy of it is not current yet; retry the request";

/// One validation of the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// True when the rule holds.
    pub expression: String,
    /// The rule id first, then the rule and its help.
    pub message: String,
}

pub use crate::roles::MANAGER_CONTAINER;

/// CEL for the repository of the image reference `image` (a CEL string):
/// the reference without its `@digest` and `:tag` (a `:` before the last
/// `/` is a registry's port).
fn repository(image: &str) -> String {
    let reference = format!("{image}.split('@')[0]");
    format!(
        "({reference}.lastIndexOf(':') > {reference}.lastIndexOf('/') ? {reference}.substring(0, {reference}.lastIndexOf(':')) : {reference})"
    )
}

/// CEL for the containers of the pod spec `spec` (a CEL path) that run
/// ASO's manager, whatever their names: among its containers and init
/// containers (a native sidecar is one), the one named
/// [`MANAGER_CONTAINER`] and every other of that container's image
/// repository, at any tag or digest; and every container when none is
/// named so (a renamed manager cannot be told from a sidecar, so each is
/// judged as one). A container of another repository is not ASO's
/// manager here.
pub fn manager_containers(spec: &str) -> String {
    let all =
        format!("({spec}.containers + (has({spec}.initContainers) ? {spec}.initContainers : []))");
    let named = |m: &str| format!("{m}.name == '{MANAGER_CONTAINER}'");
    format!(
        "{all}.filter(c, {c_named} || !{spec}.containers.exists(m, {m_named}) || (has(c.image) && {spec}.containers.exists(m, {m_named} && has(m.image) && {} == {})))",
        repository("m.image"),
        repository("c.image"),
        c_named = named("c"),
        m_named = named("m"),
    )
}

/// The field a condition reads in the cluster: the one its values key is
/// written as ([`crate::roles::field_of`]); None for a values key with no
/// such field (the feature gate is a value, `paused` a replica count of
/// 0, the topology is resolved before: see `on_topology`). A rule the
/// cluster does not check says so itself ([`super::InCluster`]).
fn reads(condition: &Condition) -> Option<Field> {
    match *condition {
        Condition::Value(key, _) => crate::roles::field_of(key.key()),
        Condition::Object(field, _) => Some(field),
        // Read by the change checks ([`change_checks`]), not a field.
        Condition::Change(..) => None,
    }
}

/// The CEL that reads `field` on `subject`, with the API server's default
/// when the field is missing (None for a field no rule tests).
fn read(field: Field, subject: Subject) -> Option<String> {
    // The Deployment: the object, or the scale request's params.
    let deployment = match subject {
        Subject::Deployment => "object",
        Subject::Scale => "params",
    };
    Some(match field {
        // A Scale carries the new count as spec.replicas too, but leaves
        // it out when it is 0 (the field is not a pointer there).
        Field::Replicas if subject == Subject::Scale => {
            "(has(object.spec.replicas) ? object.spec.replicas : 0)".into()
        }
        Field::Replicas
        | Field::StrategyType
        | Field::RollingUpdate
        | Field::MaxSurge
        | Field::MaxUnavailable => field.cel(deployment)?,
        // The manager containers' argument lists, as a list of lists; a
        // container with a `command` starts with COMMAND_MARK, which
        // unreadable() takes as not a flag.
        Field::ManagerArgs => format!(
            "{}.map(c, (has(c.command) ? ['{COMMAND_MARK}'] : []) + (has(c.args) ? c.args : []))",
            manager_containers(&format!("{deployment}.spec.template.spec"))
        ),
        // The manager containers' environments, as a list of lists.
        Field::ManagerEnv => format!(
            "{}.map(c, has(c.env) ? c.env : [])",
            manager_containers(&format!("{deployment}.spec.template.spec"))
        ),
        // The guard reads no other field: no rule tests one.
        _ => return None,
    })
}

/// Stands for a container's `command` at the head of its argument list.
const COMMAND_MARK: &str = "$command";

/// CEL for an argument list whose flags cannot be read as the manager
/// reads them ([`super::check::unreadable_args`]).
fn unreadable(args: &str) -> String {
    format!("{args}.exists(a, a.contains('$(') || !a.startsWith('-') || a == '-' || a == '--')")
}

/// An RE2 pattern for an argument that sets `flag` (one or two dashes),
/// followed by `rest` (a pattern for `=VALUE`). Flag names are letters and
/// dashes, which need no quoting (a unit test holds the table to it).
fn flag_pattern(flag: &str, rest: &str) -> String {
    format!("^--?{flag}{rest}$")
}

/// The CEL for one condition, or None when it cannot be read.
fn condition(condition: &Condition, subject: Subject) -> Option<String> {
    let field = read(reads(condition)?, subject)?;
    let test = match *condition {
        Condition::Value(_, test) | Condition::Object(_, test) => test,
        Condition::Change(..) => return None,
    };
    // An integer or a percent string is 0 (as text, so that a percent is
    // never compared with a number).
    let zero = |field: &str| format!("string({field}).matches('{}')", super::ZERO_PATTERN);
    Some(match test {
        Test::AtLeast(n) => format!("{field} >= {n}"),
        Test::AtMost(n) => format!("{field} <= {n}"),
        Test::Is(text) => format!("{field} == '{text}'"),
        Test::IsNot(text) => format!("{field} != '{text}'"),
        Test::Set => field,
        Test::Zero => zero(&field),
        Test::NotZero => format!("!({})", zero(&field)),
        Test::FlagOn(flag) => {
            let on = format!("(=({}))?", go_semantics::flag::GO_TRUE.join("|"));
            format!(
                "{field}.exists(args, {} || args.exists(a, a.matches('{}')))",
                unreadable("args"),
                flag_pattern(flag, &on)
            )
        }
        Test::FlagNot(flag, setting) => {
            let wanted = format!("--{flag}={setting}");
            format!(
                "{field}.exists(args, {} || !args.exists(a, a == '{wanted}') || args.exists(a, a != '{wanted}' && a.matches('{}')))",
                unreadable("args"),
                flag_pattern(flag, "(=.*)?")
            )
        }
        // An entry named so that is not the literal value (`valueFrom`,
        // or another value), or no such entry at all. `envFrom` cannot
        // set it past a literal entry: `env` takes precedence.
        Test::EnvNot(name, setting) => format!(
            "{field}.exists(env, !env.exists(e, e.name == '{name}') || env.exists(e, e.name == '{name}' && (has(e.valueFrom) || !has(e.value) || e.value != '{setting}')))"
        ),
        Test::EnvOther(name, setting) => format!(
            "{field}.exists(env, env.exists(e, e.name == '{name}' && !has(e.valueFrom) && (has(e.value) ? e.value : '') != '{setting}'))"
        ),
        Test::True | Test::NotTrue => return None,
    })
}

/// Whether `condition` is read from the scale request's `params` (the
/// cached Deployment) rather than from the request itself.
fn reads_params(condition: &Condition, subject: Subject) -> bool {
    subject == Subject::Scale && reads(condition) != Some(Field::Replicas)
}

/// Whether `condition` reads the replica count, the one field a scale
/// request changes.
fn reads_replicas(condition: &Condition) -> bool {
    reads(condition) == Some(Field::Replicas)
}

/// CEL that holds when any of `parts` (each a conjunction) holds.
fn any_of(parts: Vec<String>) -> String {
    if parts.len() == 1 {
        return parts.into_iter().next().unwrap_or_default();
    }
    let parts: Vec<String> = parts.into_iter().map(|part| format!("({part})")).collect();
    parts.join(" || ")
}

/// The validations for one rule on `subject`: none when the rule is not
/// the guards' ([`super::InCluster`] says why) or cannot be checked there,
/// else the rule over the alternatives of its breach that
/// can be, preceded on `scale` by a freshness check when one of them reads
/// `params`. A scale request changes only the replica count, so only
/// alternatives that read it are checked on `scale`.
pub fn rule_validations(rule: &Rule, subject: Subject, topology: Topology) -> Vec<Validation> {
    if rule.in_cluster != super::InCluster::Guarded {
        return Vec::new();
    }
    let alternatives: Vec<(Vec<Condition>, Vec<String>)> = rule
        .breach
        .iter()
        .filter_map(|alternative| on_topology(alternative, topology))
        .filter(|alternative| {
            subject == Subject::Deployment || alternative.iter().any(reads_replicas)
        })
        .filter_map(|alternative| {
            let cel = alternative
                .iter()
                .map(|c| condition(c, subject))
                .collect::<Option<Vec<String>>>()?;
            Some((alternative, cel))
        })
        .collect();
    if alternatives.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Refused while an alternative's other conditions hold and the copy is
    // stale: then the verdict would rest on a strategy that may be gone.
    let stale: Vec<String> = alternatives
        .iter()
        .filter(|(alternative, _)| alternative.iter().any(|c| reads_params(c, subject)))
        .map(|(alternative, cel)| {
            let mut parts: Vec<String> = alternative
                .iter()
                .zip(cel)
                .filter(|(c, _)| !reads_params(c, subject))
                .map(|(_, cel)| cel.clone())
                .collect();
            parts.push(format!("!({PARAMS_CURRENT})"));
            parts.join(" && ")
        })
        .collect();
    if !stale.is_empty() {
        out.push(Validation {
            expression: format!("!({})", any_of(stale)),
            message: format!("{}: {NOT_CURRENT}", rule.id),
        });
    }
    let breach = alternatives
        .into_iter()
        .map(|(_, cel)| cel.join(" && "))
        .collect();
    out.push(Validation {
        expression: format!("!({})", any_of(breach)),
        message: format!("{}: {}; {}", rule.id, rule.summary, rule.help),
    });
    out
}

/// Every validation for `subject` of the Deployment playing `role` in
/// `topology`, in the rule table's order.
pub fn validations(role: Role, subject: Subject, topology: Topology) -> Vec<Validation> {
    RULES
        .iter()
        .filter(|rule| rule.roles.contains(&role))
        .flat_map(|rule| rule_validations(rule, subject, topology))
        .collect()
}

/// An alternative as it reads in `topology`: its conditions on the
/// topology, which the chart knows when it renders the guard, decided
/// there (None: the alternative cannot hold in that topology).
fn on_topology(alternative: &[Condition], topology: Topology) -> Option<Vec<Condition>> {
    let written = Value::from(topology.as_str());
    let mut rest = Vec::new();
    for condition in alternative {
        match *condition {
            Condition::Value(RuleKey::Topology, test) => {
                if !test.holds(&written) {
                    return None;
                }
            }
            other => rest.push(other),
        }
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::TOPOLOGIES;

    fn ids(validations: &[Validation]) -> Vec<&str> {
        validations
            .iter()
            .map(|v| v.message.split(':').next().unwrap())
            .collect()
    }

    fn rule(id: &str) -> &'static Rule {
        RULES.iter().find(|r| r.id == id).unwrap()
    }

    /// Whether the cluster can see `condition` (read independently of
    /// [`reads`]: the values keys that render a Deployment field the API
    /// server does not already police, and every object condition).
    fn visible(condition: &Condition, subject: Subject) -> bool {
        match *condition {
            Condition::Value(key, _) => match subject {
                Subject::Deployment => matches!(
                    key,
                    RuleKey::ReplicaCount
                        | RuleKey::StrategyType
                        | RuleKey::RollingUpdate
                        | RuleKey::WebhooksReplicaCount
                        | RuleKey::WebhooksMaxSurge
                        | RuleKey::ControllerReplicaCount
                ),
                // The scale guard reads the strategy from params.
                Subject::Scale => matches!(
                    key,
                    RuleKey::ReplicaCount
                        | RuleKey::StrategyType
                        | RuleKey::WebhooksReplicaCount
                        | RuleKey::ControllerReplicaCount
                ),
            },
            Condition::Object(..) => subject == Subject::Deployment,
            // Read by the change checks' own policies.
            Condition::Change(..) => false,
        }
    }

    fn replicas(condition: &Condition) -> bool {
        matches!(
            condition,
            Condition::Value(
                RuleKey::ReplicaCount
                    | RuleKey::WebhooksReplicaCount
                    | RuleKey::ControllerReplicaCount,
                _
            )
        )
    }

    /// Each policy carries exactly the rules of its role that have an
    /// alternative, in its topology, whose every condition it can see (on
    /// `scale`, one that reads the replica count), in table order; on
    /// `scale`, one that also reads the cached Deployment is first checked
    /// for a current copy.
    #[test]
    fn the_expressible_rules_become_validations() {
        let mut seen = 0;
        for role in Role::ALL {
            for topology in TOPOLOGIES {
                for subject in [Subject::Deployment, Subject::Scale] {
                    let mut expected = Vec::new();
                    for rule in RULES.iter().filter(|r| r.roles.contains(&role)) {
                        let checked: Vec<Vec<Condition>> = rule
                            .breach
                            .iter()
                            .filter_map(|a| on_topology(a, topology))
                            .filter(|a| a.iter().all(|c| visible(c, subject)))
                            .filter(|a| subject == Subject::Deployment || a.iter().any(replicas))
                            .collect();
                        if checked.is_empty() {
                            continue;
                        }
                        if subject == Subject::Scale
                            && checked.iter().any(|a| a.iter().any(|c| !replicas(c)))
                        {
                            expected.push(rule.id);
                        }
                        expected.push(rule.id);
                    }
                    seen += expected.len();
                    assert_eq!(
                        ids(&validations(role, subject, topology)),
                        expected,
                        "{role:?} {subject:?} {topology:?}"
                    );
                }
            }
        }
        assert!(seen >= 8, "only {seen} validations");
        // The webhooks Deployment exists only in topology split.
        for subject in [Subject::Deployment, Subject::Scale] {
            assert!(validations(Role::Webhooks, subject, Topology::Single).is_empty());
        }

        let ha = rule_validations(
            rule("ha-requires-recreate"),
            Subject::Scale,
            Topology::Single,
        );
        assert_eq!(
            ha[0].expression,
            "!((has(object.spec.replicas) ? object.spec.replicas : 0) >= 2 && !(params.metadata.resourceVersion == oldObject.metadata.resourceVersion))"
        );
        assert!(ha[0].message.contains("retry"), "{}", ha[0].message);
        assert_eq!(
            ha[1].expression,
            "!((has(object.spec.replicas) ? object.spec.replicas : 0) >= 2 && (has(params.spec.strategy) && has(params.spec.strategy.type) ? params.spec.strategy.type : 'RollingUpdate') == 'RollingUpdate')"
        );
        // a rule that does not read params needs no fresh copy
        let positive = rule_validations(
            rule("replica-count-positive"),
            Subject::Scale,
            Topology::Single,
        );
        assert_eq!(positive.len(), 1);
        assert!(!positive[0].expression.contains("params"));
        // In topology split the single topology's rules are not checked:
        // the controller at 0 replicas is paused.
        assert!(
            rule_validations(
                rule("replica-count-positive"),
                Subject::Deployment,
                Topology::Split
            )
            .is_empty()
        );
        // Several alternatives are one validation, any of them refused.
        let webhooks = rule_validations(
            rule("split-webhooks-never-unavailable"),
            Subject::Deployment,
            Topology::Split,
        );
        assert_eq!(webhooks.len(), 1);
        assert_eq!(webhooks[0].expression.matches(") || (").count(), 3);
    }

    /// A flag test's pattern is a whole-argument match on one or two
    /// dashes, with Go's true values.
    #[test]
    fn flag_tests_print_whole_argument_patterns() {
        let on = condition(
            &Condition::Object(Field::ManagerArgs, Test::FlagOn("enable-leader-election")),
            Subject::Deployment,
        )
        .unwrap();
        assert!(
            on.contains("a.matches('^--?enable-leader-election(=(1|t|T|TRUE|true|True))?$')"),
            "{on}"
        );
        assert!(on.contains("c.name == 'manager'"), "{on}");
    }
}
