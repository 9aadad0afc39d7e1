//! The rule table: the one place that says which deployment shapes break.
//!
//! Each rule is one entry: a stable id, a message, a help line, and its
//! breach as conditions over a closed set of typed rule keys. Everything
//! else is generated from the entries: the Rust check ([`check`]), the
//! `if`/`then` rules of `values.schema.json` ([`schema`]), the chart's `fail`
//! guard with its variables ([`guard`]), the in-cluster admission policy's
//! CEL ([`cel`]) and the README's table
//! ([`markdown_table`]). A rule is added here and nowhere else.

pub mod cel;
pub mod change;
pub mod evaluate;
pub mod guard;
pub mod schema;

pub use evaluate::{RuleInputs, Violation, check, check_json};
pub use schema::{schema_message, schema_rules};

use serde_json::Value;

use crate::keys::{self, Key};
use crate::roles::{Field, OPERATOR_MODE_VARIABLE, Role};
use crate::values::Topology;

macro_rules! rule_keys {
    ($($(#[$doc:meta])* $name:ident = $key:ident, $kind:ident;)*) => {
        /// A key the rules read. Null and absence both mean the chart
        /// default ([`crate::values::default_of`]), at every enforcement
        /// point.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum RuleKey {
            $($(#[$doc])* $name,)*
        }

        impl RuleKey {
            /// Every rule key.
            pub const ALL: &[RuleKey] = &[$(RuleKey::$name),*];

            /// The values key.
            pub fn key(self) -> Key {
                match self {
                    $(RuleKey::$name => keys::$key,)*
                }
            }

            /// The type of its values.
            pub fn kind(self) -> KeyType {
                match self {
                    $(RuleKey::$name => KeyType::$kind,)*
                }
            }
        }
    };
}

// One line per key a rule reads: its name in the rule table, its values
// key, and the type of its values.
rule_keys! {
    /// `replicaCount`.
    ReplicaCount = REPLICA_COUNT, Int;
    /// `strategy.type`.
    StrategyType = STRATEGY_TYPE, Text;
    /// `strategy.rollingUpdate`: only whether it is set counts.
    RollingUpdate = STRATEGY_ROLLING_UPDATE, Any;
    /// `strategy.rollingUpdate.maxSurge`.
    MaxSurge = STRATEGY_ROLLING_UPDATE_MAX_SURGE, IntOrPercent;
    /// `strategy.rollingUpdate.maxUnavailable`.
    MaxUnavailable = STRATEGY_ROLLING_UPDATE_MAX_UNAVAILABLE, IntOrPercent;
    /// `featureGates.singleReplicaRollingUpdate`.
    Gate = FEATURE_GATES_SINGLE_REPLICA_ROLLING_UPDATE, Bool;
    /// `topology`. In the cluster the chart knows it when it renders, so
    /// each topology gets the guard of its own rules.
    Topology = TOPOLOGY, Text;
    /// `split.webhooks.replicaCount`.
    WebhooksReplicaCount = SPLIT_WEBHOOKS_REPLICA_COUNT, Int;
    /// `split.webhooks.maxSurge`.
    WebhooksMaxSurge = SPLIT_WEBHOOKS_MAX_SURGE, IntOrPercent;
    /// `split.controller.replicaCount`.
    ControllerReplicaCount = SPLIT_CONTROLLER_REPLICA_COUNT, Int;
    /// `split.controller.paused`.
    ControllerPaused = SPLIT_CONTROLLER_PAUSED, Bool;
    /// `multitenant.enable`.
    Multitenant = MULTITENANT_ENABLE, Bool;
    /// `azureOperatorMode`.
    OperatorMode = AZURE_OPERATOR_MODE, Text;
}

/// What type of value a rule key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    /// An integer.
    Int,
    /// A string.
    Text,
    /// A boolean.
    Bool,
    /// An integer or a percent string.
    IntOrPercent,
    /// Anything: only presence counts.
    Any,
}

impl RuleKey {
    /// The dotted values path.
    pub fn path(self) -> &'static str {
        self.key().path()
    }

    /// The value a values file that leaves the key out gets from the
    /// chart.
    pub fn default(self) -> Value {
        crate::values::default_of(self.key())
    }
}

/// The text of a zero count or percentage (`0`, `0%`, `00%`; an integer
/// prints as its digits), as every enforcement point tests it: the API
/// server reads a percentage by its number, so "00%" is zero too.
pub const ZERO_PATTERN: &str = "^0+%?$";

/// A test on one key's value (after defaults), or on a field of the
/// Deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    /// An integer >= N.
    AtLeast(i64),
    /// An integer <= N.
    AtMost(i64),
    /// Equal to the string.
    Is(&'static str),
    /// Anything but the string.
    IsNot(&'static str),
    /// Set to anything but null.
    Set,
    /// `true`.
    True,
    /// Anything but `true`.
    NotTrue,
    /// Zero by its meaning: 0, or a percentage of zero however spelled
    /// ("0%", "00%"), as the API server reads it ([`ZERO_PATTERN`]).
    Zero,
    /// Not zero by its meaning.
    NotZero,
    /// A list of command-line arguments that turns the boolean flag (its
    /// name without dashes) on.
    FlagOn(&'static str),
    /// A list of command-line arguments without `--FLAG=VALUE` (given as
    /// `(FLAG, VALUE)`), or that also sets the flag some other way.
    FlagNot(&'static str, &'static str),
    /// A container environment (`env`) without the variable NAME set to
    /// the literal VALUE (given as `(NAME, VALUE)`), or that also sets it
    /// some other way (`valueFrom`, another value).
    EnvNot(&'static str, &'static str),
    /// A container environment (`env`) that sets the variable NAME to a
    /// literal other than VALUE (given as `(NAME, VALUE)`); a reference
    /// (`valueFrom`) passes.
    EnvOther(&'static str, &'static str),
}

/// One condition of a breach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// A test on a values key's value (after defaults); in the cluster, on
    /// the field of the Deployment that the key renders, where there is one.
    Value(RuleKey, Test),
    /// A test on a field of the Deployment that no values key sets (the
    /// objects render it, fixed for the rule's role): only the in-cluster
    /// guard can see it broken.
    Object(Field, Test),
    /// A test on a change the API server is asked to make to a role's
    /// Deployment, read from the Deployment before and after it and from
    /// an object beside it (the other role's Deployment or pods): only
    /// the in-cluster guard sees it.
    Change(Role, Change),
}

/// A change to a Deployment, judged against what it replaces and what
/// runs beside it (`cel::change_checks` says how the cluster reads each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// It starts pods that apply CRDs: a new manager image while pods run,
    /// pods where there were none, or a Deployment created with pods.
    StartsPods,
    /// A scale request starts pods where there were none (a Scale shows
    /// no image, so it cannot be told apart from a new version).
    ScalesFromZero,
    /// The other role's Deployment runs another manager image.
    PeerRunsAnotherImage,
    /// The other role's Deployment has not rolled out (pods of an older
    /// template are left, or it has not seen its latest change).
    PeerNotRolledOut,
    /// A pod of the other role that serves runs another manager image.
    PeerPodRunsAnotherImage,
    /// It moves to an image whose semantic version tag is below the other
    /// role's Deployment's.
    FallsBehindPeer,
    /// It moves to an image whose semantic version tag is below the
    /// release that applied ASO's CRDs in the cluster (their version
    /// label): what the cluster remembers of the newest release it ran.
    FallsBehindCrds,
}

pub(crate) const fn when(key: RuleKey, test: Test) -> Condition {
    Condition::Value(key, test)
}

/// A condition on a field of the Deployment (see [`Field`]).
const fn object(field: Field, test: Test) -> Condition {
    Condition::Object(field, test)
}

/// A condition on a change to `role`'s Deployment (see [`Change`]).
pub(crate) const fn change(role: Role, change: Change) -> Condition {
    Condition::Change(role, change)
}

/// A rule of the table.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable id, shown at every enforcement point.
    pub id: &'static str,
    /// The Deployments the rule is about.
    pub roles: &'static [Role],
    /// The rule in one sentence (README, schema descriptions).
    pub summary: &'static str,
    /// Why the rule exists (README).
    pub reason: &'static str,
    /// How to fix a value set that breaks it.
    pub help: &'static str,
    /// The keys the rule is reported on, in order of preference: the
    /// first one a values file sets is where the error points.
    pub keys: &'static [Key],
    /// The rule is broken when every condition of one of these
    /// alternatives holds (most rules have one).
    pub breach: &'static [&'static [Condition]],
    /// The message, naming the values involved.
    pub message: fn(&RuleInputs) -> String,
    /// How the cluster checks it: the guards, or why not
    /// (`every_rule_states_how_the_cluster_checks_it` holds it to the
    /// policies generated).
    pub in_cluster: InCluster,
}

/// How the cluster checks a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InCluster {
    /// The admission policies generated from its breach refuse it.
    Guarded,
    /// The API server refuses the breach by itself: why.
    ByTheApiServer(&'static str),
    /// Admission cannot see the breach: why.
    NotVisible(&'static str),
}

impl InCluster {
    /// The enforcement table's words for it.
    pub fn describe(self) -> String {
        match self {
            InCluster::Guarded => "the guards".into(),
            InCluster::ByTheApiServer(why) => format!("the API server: {why}"),
            InCluster::NotVisible(why) => format!("not visible to admission: {why}"),
        }
    }
}

impl Rule {
    /// The alternatives of the breach that values can reach (every
    /// condition on a values key), as (key, test) pairs: what asogen, the
    /// schema and the chart guard check. The others hold only when the
    /// Deployment was changed in the cluster.
    pub fn values_breach(&self) -> Vec<Vec<(RuleKey, Test)>> {
        self.breach
            .iter()
            .filter_map(|alternative| {
                alternative
                    .iter()
                    .map(|condition| match *condition {
                        Condition::Value(key, test) => Some((key, test)),
                        Condition::Object(..) | Condition::Change(..) => None,
                    })
                    .collect()
            })
            .collect()
    }
}

/// Rules are the same when their ids are.
impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.id == other.id
    }
}

impl Eq for Rule {}

const CONTROLLER: &[Role] = &[Role::Controller];
const WEBHOOKS: &[Role] = &[Role::Webhooks];
const BOTH: &[Role] = &[Role::Controller, Role::Webhooks];

/// The single topology's rules read its keys, which topology split leaves
/// unused (there the split.* keys count, and the controller at 0 replicas
/// is paused, not broken). The bridge of a Helm migration renders the
/// single topology's controller, so they hold there too.
const SINGLE: Condition = when(RuleKey::Topology, Test::IsNot("split"));
/// Topology split's rules about its controller.
const SPLIT: Condition = when(RuleKey::Topology, Test::Is("split"));
/// Topology split's rules about its webhooks Deployment, or both roles:
/// they hold wherever the webhooks Deployment runs, split and the bridge
/// (which renders it as split does).
const WEBHOOKS_DEPLOYED: Condition = when(RuleKey::Topology, Test::IsNot("single"));

/// Every rule, in the order they are reported.
pub const RULES: &[Rule] = &[
    Rule {
        id: "ha-requires-recreate",
        roles: CONTROLLER,
        in_cluster: InCluster::Guarded,
        summary: "replicaCount > 1 requires strategy.type: Recreate",
        reason: "one pod serves both the control loop and the conversion webhooks; during a rolling update with 2+ replicas an old pod keeps serving webhooks that cannot convert the storage version the new leader writes, so conversions routed to it fail until the rollout ends; with ASO 2.20.0's leader election it breaks either way, as observed in the rollout harness: when the new pod wins the Lease the old pods refuse its storage version, otherwise the new pod waits for the Lease and the upgrade never finishes",
        help: "set strategy.type: Recreate, or replicaCount: 1 with featureGates.singleReplicaRollingUpdate: true",
        keys: &[keys::STRATEGY_TYPE, keys::REPLICA_COUNT],
        breach: &[&[
            SINGLE,
            when(RuleKey::ReplicaCount, Test::AtLeast(2)),
            when(RuleKey::StrategyType, Test::Is("RollingUpdate")),
        ]],
        message: |v| {
            format!(
                "replicaCount is {}, so strategy.type must be Recreate (got RollingUpdate)",
                v.text(RuleKey::ReplicaCount)
            )
        },
    },
    Rule {
        id: "recreate-forbids-rolling-update",
        roles: CONTROLLER,
        in_cluster: InCluster::Guarded,
        summary: "with strategy.type: Recreate, strategy.rollingUpdate must be absent (or null)",
        reason: "the API server refuses a Deployment with type Recreate and a rollingUpdate block (`spec.strategy.rollingUpdate: Forbidden`), which is how Flux and other server-side-apply users were blocked on upgrade",
        help: "remove strategy.rollingUpdate",
        keys: &[keys::STRATEGY_ROLLING_UPDATE, keys::STRATEGY_TYPE],
        breach: &[&[
            SINGLE,
            when(RuleKey::StrategyType, Test::Is("Recreate")),
            when(RuleKey::RollingUpdate, Test::Set),
        ]],
        message: |_| {
            "strategy.type is Recreate, so strategy.rollingUpdate must be absent (the API server refuses both together)".into()
        },
    },
    Rule {
        id: "rolling-update-needs-feature-gate",
        roles: CONTROLLER,
        in_cluster: InCluster::NotVisible(
            "the feature gate is a chart value that no field of the Deployment carries",
        ),
        summary: "strategy.type: RollingUpdate requires featureGates.singleReplicaRollingUpdate: true",
        reason: "a rolling update can keep webhooks up only with one replica (old and new pods never serve webhooks side by side as two leaders), and only through changes that keep ASO's version: a version upgrade of that shape does not finish (the new pod's CRD step waits for the leader-election Lease the old pod holds, so it is never Ready; observed with ASO 2.20.0's manager); the gate makes that choice explicit",
        help: "set featureGates.singleReplicaRollingUpdate: true (single replica only; upgrade ASO's version with strategy.type: Recreate or topology: split), or use strategy.type: Recreate",
        keys: &[
            keys::FEATURE_GATES_SINGLE_REPLICA_ROLLING_UPDATE,
            keys::FEATURE_GATES,
            keys::STRATEGY_TYPE,
        ],
        breach: &[&[
            SINGLE,
            when(RuleKey::StrategyType, Test::Is("RollingUpdate")),
            when(RuleKey::Gate, Test::NotTrue),
        ]],
        message: |_| {
            "strategy.type is RollingUpdate, which needs featureGates.singleReplicaRollingUpdate: true (got false)".into()
        },
    },
    Rule {
        id: "replica-count-positive",
        roles: CONTROLLER,
        in_cluster: InCluster::Guarded,
        summary: "replicaCount >= 1",
        reason: "with no replica the operator and its webhooks are down, and every create or update of an ASO resource is refused by the API server",
        help: "set replicaCount: 2 (the default) or 1",
        keys: &[keys::REPLICA_COUNT],
        breach: &[&[SINGLE, when(RuleKey::ReplicaCount, Test::AtMost(0))]],
        message: |v| {
            format!(
                "replicaCount is {}; it must be at least 1",
                v.text(RuleKey::ReplicaCount)
            )
        },
    },
    Rule {
        id: "rolling-update-makes-progress",
        roles: CONTROLLER,
        in_cluster: InCluster::ByTheApiServer(
            "its own Deployment validation refuses maxSurge and maxUnavailable both 0",
        ),
        summary: "strategy.rollingUpdate.maxSurge and maxUnavailable are not both 0",
        reason: "a rolling update that may neither add a pod nor remove one can never progress; the API server refuses such a Deployment",
        help: "set strategy.rollingUpdate.maxSurge: 1 (the default) and maxUnavailable: 0",
        keys: &[
            keys::STRATEGY_ROLLING_UPDATE_MAX_SURGE,
            keys::STRATEGY_ROLLING_UPDATE_MAX_UNAVAILABLE,
            keys::STRATEGY_ROLLING_UPDATE,
        ],
        breach: &[&[
            SINGLE,
            when(RuleKey::RollingUpdate, Test::Set),
            when(RuleKey::MaxSurge, Test::Zero),
            when(RuleKey::MaxUnavailable, Test::Zero),
        ]],
        message: |v| {
            format!(
                "strategy.rollingUpdate.maxSurge is {} and maxUnavailable is {}: a rolling update needs one of them above 0",
                v.text(RuleKey::MaxSurge),
                v.text(RuleKey::MaxUnavailable)
            )
        },
    },
    Rule {
        id: "split-webhooks-never-unavailable",
        roles: WEBHOOKS,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split (or bridge), the webhooks Deployment keeps a ready pod through every update: split.webhooks.replicaCount >= 1, split.webhooks.maxSurge >= 1, and in the cluster strategy RollingUpdate with maxUnavailable 0",
        reason: "the webhook Service sends every admission and conversion request to the webhook pods; with no replica, or a rolling update that must take an old pod away before its replacement is ready (no surge, or maxUnavailable above 0, or Recreate), it has no ready endpoint and the API server refuses every request for an ASO resource",
        help: "set split.webhooks.replicaCount: 2 (the default) or more and split.webhooks.maxSurge: 1 (the default); in the cluster, keep the webhooks Deployment's strategy as rendered",
        keys: &[
            keys::SPLIT_WEBHOOKS_REPLICA_COUNT,
            keys::SPLIT_WEBHOOKS_MAX_SURGE,
            keys::TOPOLOGY,
        ],
        breach: &[
            &[
                WEBHOOKS_DEPLOYED,
                when(RuleKey::WebhooksReplicaCount, Test::AtMost(0)),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                when(RuleKey::WebhooksMaxSurge, Test::Zero),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                object(Field::StrategyType, Test::IsNot("RollingUpdate")),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                object(Field::MaxUnavailable, Test::NotZero),
            ],
        ],
        message: |v| {
            format!(
                "topology is {}, split.webhooks.replicaCount is {} and split.webhooks.maxSurge is {}: both must be at least 1, or an update leaves the webhooks with no ready pod",
                v.text(RuleKey::Topology),
                v.text(RuleKey::WebhooksReplicaCount),
                v.text(RuleKey::WebhooksMaxSurge)
            )
        },
    },
    Rule {
        id: "split-webhooks-never-apply-crds",
        roles: WEBHOOKS,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split (or bridge), every container of the webhooks Deployment that runs ASO's manager runs with --crd-management=none (flags it can be seen to parse: no command, every argument a --flag, no $(VAR))",
        reason: "a pod that applies CRDs in a rolling Deployment writes new storage versions while old webhook pods are still endpoints, and an old pod that restarts mid-rollout writes its older CRDs back; only the controller, replaced with Recreate after the webhooks rolled out, applies them",
        help: "keep --crd-management=none, as rendered, among the webhooks Deployment's container args, with no command and no argument that is not a flag (nothing after --)",
        keys: &[],
        breach: &[&[
            WEBHOOKS_DEPLOYED,
            object(Field::ManagerArgs, Test::FlagNot("crd-management", "none")),
        ]],
        message: |_| "the webhooks Deployment must run with --crd-management=none".into(),
    },
    Rule {
        id: "split-webhooks-no-leader-election",
        roles: WEBHOOKS,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split (or bridge), every container of the webhooks Deployment that runs ASO's manager runs without --enable-leader-election (flags it can be seen to parse: no command, every argument a --flag, no $(VAR))",
        reason: "a webhooks pod with leader election campaigns for the controllers' own lease in the same namespace from its start, before the controller's: with the webhooks' RBAC as rendered (no access to Leases) every campaign is refused and logged as an error every few seconds (observed with ASO 2.20.0's manager); with RBAC that allows it, a webhook pod holds the lease while the controller waits, so no control loop runs",
        help: "remove --enable-leader-election from the webhooks Deployment's container args, as rendered, with no command and no argument that is not a flag (nothing after --)",
        keys: &[],
        breach: &[&[
            WEBHOOKS_DEPLOYED,
            object(Field::ManagerArgs, Test::FlagOn("enable-leader-election")),
        ]],
        message: |_| "the webhooks Deployment must run without --enable-leader-election".into(),
    },
    Rule {
        id: "split-webhooks-operator-mode",
        roles: WEBHOOKS,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split (or bridge), every container of the webhooks Deployment that runs ASO's manager has AZURE_OPERATOR_MODE set to webhooks in its env, as a literal value",
        reason: "in another mode a webhook pod also runs the control loops, with no leader election, beside the controller's: two managers would reconcile every resource (invariant I3 of docs/split-topology.md)",
        help: "keep the webhooks Deployment's env entry AZURE_OPERATOR_MODE: webhooks as rendered: a literal value, not a reference, and no second entry of that name (a Secret or ConfigMap the container takes its whole environment from cannot override it: the entry takes precedence)",
        keys: &[],
        breach: &[&[
            WEBHOOKS_DEPLOYED,
            object(
                Field::ManagerEnv,
                Test::EnvNot(OPERATOR_MODE_VARIABLE, Role::Webhooks.split_mode().as_str()),
            ),
        ]],
        message: |_| "the webhooks Deployment must run in operator mode webhooks".into(),
    },
    Rule {
        id: "split-controller-operator-mode",
        roles: CONTROLLER,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split, no container of the controller Deployment that runs ASO's manager sets AZURE_OPERATOR_MODE to a literal other than watchers-and-webhooks",
        reason: "the controller is the one Deployment that runs the control loops: in mode webhooks none would run; a reference to the settings Secret passes, as the single topology's controller reads it there (the bridge of a Helm migration renders that controller, and the values rule split-no-operator-mode keeps the Secret's mode empty, which means watchers-and-webhooks)",
        help: "keep the controller Deployment's env entry AZURE_OPERATOR_MODE: watchers-and-webhooks as rendered",
        keys: &[],
        breach: &[&[
            SPLIT,
            object(
                Field::ManagerEnv,
                Test::EnvOther(
                    OPERATOR_MODE_VARIABLE,
                    Role::Controller.split_mode().as_str(),
                ),
            ),
        ]],
        message: |_| {
            "the controller Deployment must run in operator mode watchers-and-webhooks".into()
        },
    },
    Rule {
        id: "split-controller-never-rolls",
        roles: CONTROLLER,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split, the controller Deployment's strategy is Recreate",
        reason: "a rolling update starts a controller of the new version while the old one still runs: with leader election, as rendered, the new pod's CRD step waits for the Lease the old controller holds, so it is never Ready and the update never finishes (observed with ASO 2.20.0's manager); without it, two versions would reconcile and the new one would apply CRDs under the old one's feet",
        help: "keep the controller Deployment's strategy as rendered (type Recreate, no rollingUpdate)",
        keys: &[],
        breach: &[&[SPLIT, object(Field::StrategyType, Test::IsNot("Recreate"))]],
        message: |_| "the controller Deployment must use strategy Recreate".into(),
    },
    Rule {
        id: "split-controller-replicas-positive",
        roles: CONTROLLER,
        in_cluster: InCluster::NotVisible(
            "a controller at 0 replicas is how split.controller.paused pauses it; the Deployment cannot tell a pause from a mistake",
        ),
        summary: "with topology: split, split.controller.replicaCount >= 1 unless split.controller.paused is true",
        reason: "with no controller pod no control loop runs and no CRD is applied; scaling it to 0 is the upgrade's pause, which split.controller.paused says on purpose",
        help: "set split.controller.replicaCount: 2 (the default) or 1, or split.controller.paused: true to pause the controller",
        keys: &[keys::SPLIT_CONTROLLER_REPLICA_COUNT, keys::TOPOLOGY],
        breach: &[&[
            SPLIT,
            when(RuleKey::ControllerReplicaCount, Test::AtMost(0)),
            when(RuleKey::ControllerPaused, Test::NotTrue),
        ]],
        message: |v| {
            format!(
                "split.controller.replicaCount is {} and split.controller.paused is false; it must be at least 1",
                v.text(RuleKey::ControllerReplicaCount)
            )
        },
    },
    Rule {
        id: "split-controller-after-webhooks",
        roles: BOTH,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split (or bridge), the controller Deployment changes its manager image, or starts from 0 replicas, only once the webhooks Deployment runs that image, has rolled out, and no webhook pod of an older image is left, terminating ones included",
        reason: "the new controller applies its CRDs as it starts: while webhook pods of the older version serve, they cannot convert the new storage versions, so a one-shot apply of a new version (`kubectl apply` of the whole manifest, one `helm upgrade`) would break conversion (invariant I2 of docs/split-topology.md); a terminating webhook pod still answers, through its pre-stop delay, on the connections the API server keeps open to it, so a rollout that `kubectl rollout status` calls complete is not enough (ASO's own manager refused conversions so in the rollout harness); for the same reason the webhooks never fall behind the controller",
        help: "apply the webhooks Deployment first and wait until it has rolled out and its old pods are gone (kubectl rollout status, then kubectl wait --for=jsonpath='{.status.terminatingReplicas}'=0 on it), then apply the controller again; asogen upgrade-plan prints the steps for your apply path",
        keys: &[],
        breach: &[
            &[
                WEBHOOKS_DEPLOYED,
                change(Role::Controller, Change::StartsPods),
                change(Role::Controller, Change::PeerRunsAnotherImage),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                change(Role::Controller, Change::StartsPods),
                change(Role::Controller, Change::PeerNotRolledOut),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                change(Role::Controller, Change::ScalesFromZero),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                change(Role::Controller, Change::StartsPods),
                change(Role::Controller, Change::PeerPodRunsAnotherImage),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                change(Role::Webhooks, Change::FallsBehindPeer),
            ],
        ],
        message: |_| {
            "the controller Deployment may start a new version only after the webhooks Deployment rolled out to it".into()
        },
    },
    Rule {
        id: "split-never-below-crds",
        roles: BOTH,
        in_cluster: InCluster::Guarded,
        summary: "with topology: split (or bridge), neither Deployment moves its manager to a release older than the one that applied ASO's CRDs in the cluster (their app.kubernetes.io/version label; by semantic version tags, other tags are not compared)",
        reason: "a manager older than the CRDs cannot convert the storage versions the newer release wrote, and an older controller would apply its older CRDs back; each Deployment's write compared with the other Deployment alone lets a downgrade through as a sequence of allowed writes (the controller paused, moved back, the webhooks moved back, the controller started), while the CRDs hold the newest release the cluster ran",
        help: "ASO does not support going back once its CRDs moved on; if the two releases' CRDs are the same, downgrade with the guard off for that change (admissionPolicy.enable: false), controller first",
        keys: &[],
        breach: &[
            &[
                WEBHOOKS_DEPLOYED,
                change(Role::Controller, Change::FallsBehindCrds),
            ],
            &[
                WEBHOOKS_DEPLOYED,
                change(Role::Webhooks, Change::FallsBehindCrds),
            ],
        ],
        message: |_| {
            "a Deployment may not move to a release older than the one that applied the CRDs".into()
        },
    },
    Rule {
        id: "split-no-multitenant",
        roles: BOTH,
        in_cluster: InCluster::NotVisible(
            "multitenant.enable chooses which objects are rendered, not a field of either Deployment",
        ),
        summary: "topology: split (or bridge) does not combine with multitenant.enable: true",
        reason: "multi-tenant mode has its own cluster-wide webhooks Deployment and per-tenant watchers; splitting it too is not supported",
        help: "set topology: single, or multitenant.enable: false",
        keys: &[keys::MULTITENANT_ENABLE, keys::TOPOLOGY],
        breach: &[&[WEBHOOKS_DEPLOYED, when(RuleKey::Multitenant, Test::True)]],
        message: |v| {
            format!(
                "topology is {} and multitenant.enable is true; the two do not combine",
                v.text(RuleKey::Topology)
            )
        },
    },
    Rule {
        id: "split-no-operator-mode",
        roles: BOTH,
        in_cluster: InCluster::NotVisible(
            "azureOperatorMode chooses the Deployments' modes, which the cluster checks as split-webhooks-operator-mode and split-controller-operator-mode",
        ),
        summary: "with topology: split (or bridge), azureOperatorMode is left empty",
        reason: "with topology split each Deployment's operator mode is fixed by its role (webhooks, and watchers-and-webhooks for the controller); the one mode azureOperatorMode sets cannot be both",
        help: "remove azureOperatorMode (or set it to \"\")",
        keys: &[keys::AZURE_OPERATOR_MODE, keys::TOPOLOGY],
        breach: &[&[
            WEBHOOKS_DEPLOYED,
            when(RuleKey::OperatorMode, Test::IsNot("")),
        ]],
        message: |v| {
            format!(
                "topology is {} and azureOperatorMode is {:?}; each role's mode is fixed",
                v.text(RuleKey::Topology),
                v.text(RuleKey::OperatorMode)
            )
        },
    },
];

/// The rule table as Markdown, for the README.
pub fn markdown_table() -> String {
    let mut out = String::from("| id | rule | help |\n| --- | --- | --- |\n");
    for rule in RULES {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            rule.id, rule.summary, rule.help
        ));
    }
    out
}

/// Every topology, in the order the guard's choices are rendered.
pub const TOPOLOGIES: [Topology; 3] = [Topology::Single, Topology::Split, Topology::Bridge];

// A new topology fails to compile here until TOPOLOGIES lists it.
const _: () = match Topology::Single {
    Topology::Single | Topology::Split | Topology::Bridge => (),
};

impl Rule {
    /// The topologies in which the rule can be broken (its conditions on
    /// `topology` allow them).
    pub fn topologies(&self) -> Vec<Topology> {
        TOPOLOGIES
            .into_iter()
            .filter(|topology| {
                let written = Value::from(topology.as_str());
                self.breach.iter().any(|alternative| {
                    alternative.iter().all(|condition| match *condition {
                        Condition::Value(RuleKey::Topology, test) => test.holds(&written),
                        _ => true,
                    })
                })
            })
            .collect()
    }
}

/// Topology split's rules as built, as Markdown, for
/// docs/split-topology.md: what each checks, on which Deployment, and
/// where.
pub fn split_table() -> String {
    let mut out = String::from(
        "| id | role | rule | values (asogen, schema, chart guard) | Deployment guard | scale guard |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    let yes = |yes: bool| if yes { "yes" } else { "no" };
    let guarded = |rule: &Rule, subject| {
        yes(
            !cel::rule_validations(rule, subject, Topology::Split).is_empty()
                || change::checks_changes_on(rule, subject),
        )
    };
    for rule in RULES
        .iter()
        .filter(|rule| !rule.topologies().contains(&Topology::Single))
    {
        let roles: Vec<&str> = rule.roles.iter().map(|role| role.name()).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            rule.id,
            roles.join(", "),
            rule.summary,
            yes(!rule.values_breach().is_empty()),
            guarded(rule, cel::Subject::Deployment),
            guarded(rule, cel::Subject::Scale),
        ));
    }
    out
}

/// Where each rule is enforced, as Markdown, for docs/rules.md: by asogen,
/// the schema and the chart guard when values can break it; in the
/// cluster, by the admission policy of each [`cel::Subject`] of its roles'
/// Deployments that has a validation for it, or not, and why
/// ([`InCluster`]).
pub fn enforcement_table() -> String {
    let mut out = String::from(
        "| id | role | topology | asogen, schema, chart guard | Deployment guard | scale guard | in the cluster |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let yes = |yes: bool| if yes { "yes" } else { "no" };
    let mark = |rule: &Rule, subject| {
        yes(TOPOLOGIES
            .into_iter()
            .any(|topology| !cel::rule_validations(rule, subject, topology).is_empty())
            || change::checks_changes_on(rule, subject))
    };
    for rule in RULES {
        let roles: Vec<&str> = rule.roles.iter().map(|role| role.name()).collect();
        let topologies: Vec<&str> = rule.topologies().iter().map(|t| t.as_str()).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            rule.id,
            roles.join(", "),
            topologies.join(", "),
            yes(!rule.values_breach().is_empty()),
            mark(rule, cel::Subject::Deployment),
            mark(rule, cel::Subject::Scale),
            rule.in_cluster.describe(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each rule says how the cluster checks it, and the policies agree:
    /// a rule of the guards has a validation or a change check on some
    /// Deployment, subject and topology (a new rule about a field the CEL
    /// cannot read fails here until it can, or until the rule says why
    /// not); any other rule gives its reason and has none.
    #[test]
    fn every_rule_states_how_the_cluster_checks_it() {
        for rule in RULES {
            let guarded = [cel::Subject::Deployment, cel::Subject::Scale]
                .into_iter()
                .any(|subject| {
                    change::checks_changes_on(rule, subject)
                        || TOPOLOGIES
                            .into_iter()
                            .any(|t| !cel::rule_validations(rule, subject, t).is_empty())
                });
            match rule.in_cluster {
                InCluster::Guarded => assert!(
                    guarded,
                    "rule {} says the guards check it, but no policy has a validation for it: \
                     make its conditions readable in src/rules/cel.rs (a field it tests needs \
                     Field::api_default in src/roles.rs, what the API server means when it is left out), \
                     or state InCluster::ByTheApiServer or InCluster::NotVisible with the reason",
                    rule.id
                ),
                InCluster::ByTheApiServer(why) | InCluster::NotVisible(why) => {
                    assert!(why.len() > 20, "rule {}: say why ({why:?})", rule.id);
                    assert!(!guarded, "rule {}", rule.id);
                }
            }
        }
    }

    /// The keys a rule's text names for people exist (a renamed or
    /// misspelt key in a summary, reason or help fails here).
    #[test]
    fn rule_texts_name_keys_that_exist() {
        let mut named = 0;
        for rule in RULES {
            let why = match rule.in_cluster {
                InCluster::Guarded => "",
                InCluster::ByTheApiServer(why) | InCluster::NotVisible(why) => why,
            };
            for text in [rule.summary, rule.reason, rule.help, why] {
                for word in keys::mentioned_in(text) {
                    assert!(
                        keys::names_a_key(word),
                        "rule {} names {word:?}, which is not a values key",
                        rule.id
                    );
                    named += 1;
                }
            }
        }
        assert!(named >= RULES.len(), "only {named} keys named");
    }

    /// Each test fits what it tests: flag tests only on the arguments and
    /// with names the CEL needs not quote, arguments only with flag tests,
    /// `Set` only on keys of any type; and a rule that values can break
    /// has keys to report it on.
    #[test]
    fn every_condition_fits_its_key() {
        let plain_flag = |flag: &str| {
            !flag.is_empty() && flag.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        };
        for rule in RULES {
            for condition in rule
                .breach
                .iter()
                .flat_map(|alternative| alternative.iter())
            {
                match *condition {
                    Condition::Value(key, test) => {
                        assert!(
                            !matches!(
                                test,
                                Test::FlagOn(_)
                                    | Test::FlagNot(..)
                                    | Test::EnvNot(..)
                                    | Test::EnvOther(..)
                            ),
                            "rule {}: a flag test on a values key",
                            rule.id
                        );
                        assert_eq!(
                            test == Test::Set,
                            key.kind() == KeyType::Any,
                            "rule {}: Set goes with keys of any type",
                            rule.id
                        );
                    }
                    Condition::Object(field, test) => match test {
                        Test::FlagOn(flag) | Test::FlagNot(flag, _) => {
                            assert_eq!(field, Field::ManagerArgs, "rule {}", rule.id);
                            assert!(plain_flag(flag), "rule {}: flag {flag:?}", rule.id);
                        }
                        Test::EnvNot(name, value) | Test::EnvOther(name, value) => {
                            assert_eq!(field, Field::ManagerEnv, "rule {}", rule.id);
                            // CEL string literals without quoting
                            assert!(
                                (name.to_owned() + value)
                                    .chars()
                                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c)),
                                "rule {}",
                                rule.id
                            );
                        }
                        _ => assert!(
                            !matches!(field, Field::ManagerArgs | Field::ManagerEnv),
                            "rule {}",
                            rule.id
                        ),
                    },
                    // change::tests hold these to their policies.
                    Condition::Change(..) => {}
                }
            }
            if !rule.values_breach().is_empty() {
                assert!(!rule.keys.is_empty(), "rule {} has no keys", rule.id);
            }
        }
    }

    /// Every rule is about at least one Deployment, each named once.
    #[test]
    fn every_rule_names_its_roles() {
        for rule in RULES {
            assert!(!rule.roles.is_empty(), "rule {} has no role", rule.id);
            let mut roles = rule.roles.to_vec();
            roles.dedup();
            assert_eq!(roles.len(), rule.roles.len(), "rule {}", rule.id);
        }
    }
}
