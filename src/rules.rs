//! The rule table: the one place that says which deployment shapes break.
//!
//! Each rule has a stable id, a check over the parsed values, a message that
//! names the values involved, and a help line. The same table produces the
//! Rust checks (here), the `if`/`then` rules of `values.schema.json`
//! (`schema.rs`) and the chart's `fail` guard (`render/helm.rs`), so the
//! three enforcement points cannot drift apart.

use serde_json::{Value, json};

use crate::values::{StrategyType, Values};

/// A rule of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Stable id, shown at every enforcement point.
    pub id: &'static str,
    /// The rule in one sentence (README, schema descriptions).
    pub summary: &'static str,
    /// Why the rule exists (README).
    pub reason: &'static str,
    /// How to fix a value set that breaks it.
    pub help: &'static str,
    /// The keys the rule is reported on, in order of preference (dotted
    /// paths): the first one a values file sets is where the error points.
    pub keys: &'static [&'static str],
    /// The rule's breach as a Go template condition for the chart guard,
    /// over the variables the guard sets up (`$replicas`, `$type`, `$gate`,
    /// `$hasRollingUpdate`).
    pub helm_condition: &'static str,
}

/// `replicaCount` > 1 requires `strategy.type: Recreate`.
pub const HA_REQUIRES_RECREATE: Rule = Rule {
    id: "ha-requires-recreate",
    summary: "replicaCount > 1 requires strategy.type: Recreate",
    reason: "one pod serves both the control loop and the conversion webhooks; during a rolling update with 2+ replicas an old pod keeps serving webhooks that cannot convert the storage version the new leader writes, so about half of all requests fail until the rollout ends",
    help: "set strategy.type: Recreate, or replicaCount: 1 with featureGates.singleReplicaRollingUpdate: true",
    keys: &["strategy.type", "replicaCount"],
    helm_condition: r#"and (gt $replicas 1) (eq $type "RollingUpdate")"#,
};

/// With Recreate, `strategy.rollingUpdate` must be absent.
pub const RECREATE_FORBIDS_ROLLING_UPDATE: Rule = Rule {
    id: "recreate-forbids-rolling-update",
    summary: "with strategy.type: Recreate, strategy.rollingUpdate must be absent",
    reason: "the API server refuses a Deployment with type Recreate and a rollingUpdate block (`spec.strategy.rollingUpdate: Forbidden`), which is how Flux and other server-side-apply users were blocked on upgrade",
    help: "remove strategy.rollingUpdate",
    keys: &["strategy.rollingUpdate", "strategy.type"],
    helm_condition: r#"and (ne $type "RollingUpdate") $hasRollingUpdate"#,
};

/// RollingUpdate needs the feature gate.
pub const ROLLING_UPDATE_NEEDS_FEATURE_GATE: Rule = Rule {
    id: "rolling-update-needs-feature-gate",
    summary: "strategy.type: RollingUpdate requires featureGates.singleReplicaRollingUpdate: true",
    reason: "a rolling update is safe only with one replica (old and new pods never serve webhooks side by side as two leaders); the gate makes that choice explicit",
    help: "set featureGates.singleReplicaRollingUpdate: true (single replica only), or use strategy.type: Recreate",
    keys: &[
        "featureGates.singleReplicaRollingUpdate",
        "featureGates",
        "strategy.type",
    ],
    helm_condition: r#"and (eq $type "RollingUpdate") (not $gate)"#,
};

/// At least one replica.
pub const REPLICA_COUNT_POSITIVE: Rule = Rule {
    id: "replica-count-positive",
    summary: "replicaCount >= 1",
    reason: "with no replica the operator and its webhooks are down, and every create or update of an ASO resource is refused by the API server",
    help: "set replicaCount: 2 (the default) or 1",
    keys: &["replicaCount"],
    helm_condition: "lt $replicas 1",
};

/// Every rule, in the order they are reported.
pub const RULES: [Rule; 4] = [
    HA_REQUIRES_RECREATE,
    RECREATE_FORBIDS_ROLLING_UPDATE,
    ROLLING_UPDATE_NEEDS_FEATURE_GATE,
    REPLICA_COUNT_POSITIVE,
];

/// A broken rule, with a message that names the values involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule that is broken.
    pub rule: Rule,
    /// The message, naming the actual values.
    pub message: String,
    /// JSON pointer of the key to point at.
    pub pointer: String,
}

impl Violation {
    fn new(rule: Rule, message: String) -> Self {
        let pointer = format!("/{}", rule.keys[0].replace('.', "/"));
        Violation {
            rule,
            message,
            pointer,
        }
    }
}

/// Checks every rule and returns every broken one (not only the first).
pub fn check(values: &Values) -> Vec<Violation> {
    let replicas = values.replica_count;
    let strategy = values.strategy.kind;
    let gate = values.feature_gates.single_replica_rolling_update;
    let mut broken = Vec::new();
    if replicas > 1 && strategy == StrategyType::RollingUpdate {
        broken.push(Violation::new(
            HA_REQUIRES_RECREATE,
            format!(
                "replicaCount is {replicas}, so strategy.type must be Recreate (got RollingUpdate)"
            ),
        ));
    }
    if strategy == StrategyType::Recreate && values.strategy.rolling_update.is_some() {
        broken.push(Violation::new(
            RECREATE_FORBIDS_ROLLING_UPDATE,
            "strategy.type is Recreate, so strategy.rollingUpdate must be absent (the API server refuses both together)".to_string(),
        ));
    }
    if strategy == StrategyType::RollingUpdate && !gate {
        broken.push(Violation::new(
            ROLLING_UPDATE_NEEDS_FEATURE_GATE,
            "strategy.type is RollingUpdate, which needs featureGates.singleReplicaRollingUpdate: true (got false)".to_string(),
        ));
    }
    if replicas < 1 {
        broken.push(Violation::new(
            REPLICA_COUNT_POSITIVE,
            format!("replicaCount is {replicas}; it must be at least 1"),
        ));
    }
    broken
}

/// The message an editor or Helm shows for a rule: the id first, then the
/// rule and the help, so any one line of output names all three.
pub fn schema_message(rule: &Rule) -> String {
    format!("{}: {}; help: {}", rule.id, rule.summary, rule.help)
}

/// Each rule as draft-07 `if`/`then`, written so that editors point at the
/// offending key and show the rule id (yaml-language-server shows only an
/// `errorMessage` placed on the sub-schema that holds the failing keyword,
/// and ignores it for `not`/`minimum`; so rules are `const` leaves and
/// `false` properties).
pub fn schema_rules() -> Vec<Value> {
    let rolling = json!({
        "properties": {"strategy": {"properties": {"type": {"const": "RollingUpdate"}}, "required": ["type"]}},
        "required": ["strategy"]
    });
    let ha = schema_message(&HA_REQUIRES_RECREATE);
    let recreate = schema_message(&RECREATE_FORBIDS_ROLLING_UPDATE);
    let gate = schema_message(&ROLLING_UPDATE_NEEDS_FEATURE_GATE);
    let positive = schema_message(&REPLICA_COUNT_POSITIVE);
    // The error sits on `strategy.type`, where asogen points too.
    let type_must_be_recreate = |message: &str| json!({"properties": {"strategy": {"properties": {"type": {"const": "Recreate", "errorMessage": message}}}}});
    let absent = |key: &str| json!({"not": {"required": [key]}});
    vec![
        // ha-requires-recreate: 2+ replicas with RollingUpdate.
        json!({
            "if": {
                "allOf": [rolling.clone(), {
                    "properties": {"replicaCount": {"type": "integer", "minimum": 2}},
                    "required": ["replicaCount"]
                }]
            },
            "then": type_must_be_recreate(&ha)
        }),
        // ha-requires-recreate, for a values file that leaves replicaCount at
        // its default of 2 (only an editor sees such a file on its own; Helm
        // always has the chart default merged in).
        json!({
            "if": {"allOf": [rolling.clone(), absent("replicaCount")]},
            "then": type_must_be_recreate(&ha)
        }),
        // recreate-forbids-rolling-update: any type but RollingUpdate (the
        // default is Recreate) forbids the block.
        json!({
            "if": rolling.clone(),
            "else": {
                "properties": {"strategy": {
                    "properties": {"rollingUpdate": false},
                    "errorMessage": recreate
                }}
            }
        }),
        // rolling-update-needs-feature-gate, on the gate when featureGates is written...
        json!({
            "if": {"allOf": [rolling.clone(), {"required": ["featureGates"]}]},
            "then": {
                "properties": {"featureGates": {
                    "properties": {"singleReplicaRollingUpdate": {"const": true, "errorMessage": gate}},
                    "required": ["singleReplicaRollingUpdate"],
                    "errorMessage": gate
                }}
            }
        }),
        // ...and on strategy.type when it is not.
        json!({
            "if": {"allOf": [rolling, absent("featureGates")]},
            "then": type_must_be_recreate(&gate)
        }),
        // replica-count-positive.
        json!({
            "if": {
                "properties": {"replicaCount": {"type": "integer", "maximum": 0}},
                "required": ["replicaCount"]
            },
            "then": {
                "properties": {"replicaCount": false},
                "errorMessage": positive
            }
        }),
    ]
}
