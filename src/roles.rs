//! The install's roles (its Deployments, by what their pods do) and which
//! values key lands on which role's Deployment, at which field: one table
//! ([`BINDINGS`]) that the Deployments' descriptions write from, the
//! in-cluster guard reads its fields from, the metadata checks name in
//! their messages, and `diff` asks for the keys and fields of a topology.
//!
//! A key reaches a role's pods because its row says so, never by default:
//! the descriptions read a key for a role only through [`bound`], which
//! panics naming a key with no row, or whose row keeps it from that role
//! (every render does that, so any test finds it), and a test holds every
//! row to what the rendered Deployments read. Under topology split the
//! webhook pods hold no Azure credential: the keys that carry one (the
//! user's env, the identity binding and labels) reach the controller only.

use crate::keys::{self, Key};
use crate::values::OperatorMode;

/// The environment variable ASO's manager reads its operator mode from.
pub const OPERATOR_MODE_VARIABLE: &str = "AZURE_OPERATOR_MODE";

/// The Deployment a rule or a values key is about, by what its pods do:
/// the in-cluster guard of a role checks that role's Deployment
/// (`objects::admission` says which Deployment plays which role).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// The Deployment that runs the control loop (upstream's
    /// controller-manager): the only one in the single topology, where its
    /// pods serve the webhooks too. With topology split it runs mode
    /// watchers-and-webhooks, applies the CRDs and leads; no Service sends
    /// it webhook traffic.
    Controller,
    /// The split topology's Deployment that only serves the webhooks: mode
    /// webhooks, no CRD management, no leader election (F10 of
    /// docs/aso-facts.md).
    Webhooks,
}

impl Role {
    /// Every role, in the order their guards are rendered.
    pub const ALL: [Role; 2] = [Role::Controller, Role::Webhooks];

    /// The role's name in docs and tables.
    pub fn name(self) -> &'static str {
        match self {
            Role::Controller => "controller",
            Role::Webhooks => "webhooks",
        }
    }

    /// One of its pods, in messages.
    pub fn pod(self) -> &'static str {
        match self {
            Role::Controller => "controller pod",
            Role::Webhooks => "webhook pod",
        }
    }

    /// Its pods, in messages.
    pub fn pods(self) -> String {
        format!("{}s", self.pod())
    }

    /// The operator mode its pods run in under topology split (the
    /// environment variable [`OPERATOR_MODE_VARIABLE`], as a literal).
    pub const fn split_mode(self) -> OperatorMode {
        match self {
            Role::Controller => OperatorMode::WatchersAndWebhooks,
            Role::Webhooks => OperatorMode::Webhooks,
        }
    }

    /// Whether the role's pods get an Azure identity (the workload
    /// identity token, the aad-pod-identity binding, the user's env): the
    /// webhook pods hold no Azure credential (docs/security.md).
    pub fn talks_to_azure(self) -> bool {
        self == Role::Controller
    }

    /// Whether every topology has the role's Deployment (the controller's:
    /// upstream's one Deployment); the webhooks Deployment is topology
    /// split's own, so its pods take their role's keys wherever it runs.
    pub fn in_every_topology(self) -> bool {
        self == Role::Controller
    }
}

/// A field of a Deployment that values land on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `metadata.annotations`.
    Annotations,
    /// `spec.replicas` (the API server's default: 1).
    Replicas,
    /// `spec.minReadySeconds`.
    MinReadySeconds,
    /// `spec.revisionHistoryLimit`.
    RevisionHistoryLimit,
    /// `spec.strategy.type` (the API server's default: RollingUpdate).
    StrategyType,
    /// `spec.strategy.rollingUpdate`: whether the block is there.
    RollingUpdate,
    /// `spec.strategy.rollingUpdate.maxSurge` (integer or percent; the API
    /// server's default: 25%).
    MaxSurge,
    /// `spec.strategy.rollingUpdate.maxUnavailable` (integer or percent;
    /// the API server's default: 25%).
    MaxUnavailable,
    /// The pod template's `metadata.annotations`.
    PodAnnotations,
    /// The pod template's `metadata.labels`.
    PodLabels,
    /// The pod's `securityContext`.
    PodSecurityContext,
    /// The pod's `priorityClassName`.
    PriorityClassName,
    /// The pod's `nodeSelector`.
    NodeSelector,
    /// The pod's `tolerations`.
    Tolerations,
    /// The pod's `affinity`.
    Affinity,
    /// The pod's `topologySpreadConstraints`.
    TopologySpreadConstraints,
    /// The pod's `imagePullSecrets`.
    ImagePullSecrets,
    /// The pod's `volumes`.
    Volumes,
    /// The operator container's `image`.
    Image,
    /// The `args` of the operator's container.
    ManagerArgs,
    /// The operator container's `env`.
    ManagerEnv,
    /// The operator container's `ports`.
    ManagerPorts,
    /// The operator container's probes.
    ManagerProbes,
    /// The operator container's `resources`.
    ManagerResources,
    /// The operator container's `securityContext`.
    ManagerSecurityContext,
    /// The operator container's `volumeMounts`.
    ManagerVolumeMounts,
}

impl Field {
    /// The field's path in the Deployment, for messages and docs.
    pub fn path(self) -> &'static str {
        match self {
            Field::Annotations => "metadata.annotations",
            Field::Replicas => "spec.replicas",
            Field::MinReadySeconds => "spec.minReadySeconds",
            Field::RevisionHistoryLimit => "spec.revisionHistoryLimit",
            Field::StrategyType => "spec.strategy.type",
            Field::RollingUpdate => "spec.strategy.rollingUpdate",
            Field::MaxSurge => "spec.strategy.rollingUpdate.maxSurge",
            Field::MaxUnavailable => "spec.strategy.rollingUpdate.maxUnavailable",
            Field::PodAnnotations => "spec.template.metadata.annotations",
            Field::PodLabels => "spec.template.metadata.labels",
            Field::PodSecurityContext => "spec.template.spec.securityContext",
            Field::PriorityClassName => "spec.template.spec.priorityClassName",
            Field::NodeSelector => "spec.template.spec.nodeSelector",
            Field::Tolerations => "spec.template.spec.tolerations",
            Field::Affinity => "spec.template.spec.affinity",
            Field::TopologySpreadConstraints => "spec.template.spec.topologySpreadConstraints",
            Field::ImagePullSecrets => "spec.template.spec.imagePullSecrets",
            Field::Volumes => "spec.template.spec.volumes",
            Field::Image => "spec.template.spec.containers[manager].image",
            Field::ManagerArgs => "spec.template.spec.containers[manager].args",
            Field::ManagerEnv => "spec.template.spec.containers[manager].env",
            Field::ManagerPorts => "spec.template.spec.containers[manager].ports",
            Field::ManagerProbes => "spec.template.spec.containers[manager].*Probe",
            Field::ManagerResources => "spec.template.spec.containers[manager].resources",
            Field::ManagerSecurityContext => {
                "spec.template.spec.containers[manager].securityContext"
            }
            Field::ManagerVolumeMounts => "spec.template.spec.containers[manager].volumeMounts",
        }
    }
}

/// The container of a Deployment that runs ASO's manager, by name (the
/// in-cluster guards also recognise it by its image: `rules::cel`).
pub const MANAGER_CONTAINER: &str = "manager";

impl Field {
    /// Every field, in the order of [`Field::path`].
    pub const ALL: [Field; 26] = [
        Field::Annotations,
        Field::Replicas,
        Field::MinReadySeconds,
        Field::RevisionHistoryLimit,
        Field::StrategyType,
        Field::RollingUpdate,
        Field::MaxSurge,
        Field::MaxUnavailable,
        Field::PodAnnotations,
        Field::PodLabels,
        Field::PodSecurityContext,
        Field::PriorityClassName,
        Field::NodeSelector,
        Field::Tolerations,
        Field::Affinity,
        Field::TopologySpreadConstraints,
        Field::ImagePullSecrets,
        Field::Volumes,
        Field::Image,
        Field::ManagerArgs,
        Field::ManagerEnv,
        Field::ManagerPorts,
        Field::ManagerProbes,
        Field::ManagerResources,
        Field::ManagerSecurityContext,
        Field::ManagerVolumeMounts,
    ];

    /// Its JSON pointer in a Deployment; None for a field of the manager
    /// container, which is found by name ([`Field::read`]).
    pub fn pointer(self) -> Option<String> {
        let path = self.path();
        (!path.contains('[')).then(|| format!("/{}", path.replace('.', "/")))
    }

    /// What the API server writes when the field is left out, where it
    /// writes anything a rule or a check reads.
    pub fn api_default(self) -> Option<serde_json::Value> {
        match self {
            Field::Replicas => Some(1.into()),
            Field::RevisionHistoryLimit => Some(10.into()),
            Field::StrategyType => Some("RollingUpdate".into()),
            Field::MaxSurge | Field::MaxUnavailable => Some("25%".into()),
            _ => None,
        }
    }

    /// Its value in `deployment`, the API server's default when left out
    /// (null when it has none). The manager's probes are an object of the
    /// three (`livenessProbe`, `readinessProbe`, `startupProbe`).
    pub fn read(self, deployment: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        let found = match self.pointer() {
            Some(pointer) => deployment.pointer(&pointer).cloned(),
            None => {
                let manager = deployment
                    .pointer("/spec/template/spec/containers")
                    .and_then(Value::as_array)
                    .and_then(|containers| {
                        containers.iter().find(|c| c["name"] == MANAGER_CONTAINER)
                    });
                match (self, manager) {
                    (_, None) => None,
                    (Field::ManagerProbes, Some(manager)) => Some(Value::Object(
                        ["livenessProbe", "readinessProbe", "startupProbe"]
                            .into_iter()
                            .filter_map(|p| Some((p.to_string(), manager.get(p)?.clone())))
                            .collect(),
                    )),
                    (_, Some(manager)) => manager.get(self.name()).cloned(),
                }
            }
        };
        found
            .filter(|value| !value.is_null())
            .or_else(|| self.api_default())
            .unwrap_or(Value::Null)
    }

    /// CEL that reads the field of the Deployment at `deployment` (a CEL
    /// path: `object`, `oldObject`, `params`) with the API server's default
    /// when it is left out, or, for the rolling update block, whether it is
    /// there. None for a field of the manager container (read by the
    /// guards as every container that runs the manager), and for any other
    /// field without a default: a test of its value against its presence
    /// would be a CEL type error only the API server finds, so a rule on
    /// it is refused in the fast lane
    /// (`rules::tests::every_rule_states_how_the_cluster_checks_it`) until
    /// [`Field::api_default`] says what an absent one means.
    pub fn cel(self, deployment: &str) -> Option<String> {
        // a container's field is found by name, not by path
        self.pointer()?;
        // `spec` is always there; every step below it may be left out
        let steps: Vec<&str> = self.path().split('.').collect();
        let present: Vec<String> = (2..=steps.len())
            .map(|n| format!("has({deployment}.{})", steps[..n].join(".")))
            .collect();
        let present = present.join(" && ");
        let value = format!("{deployment}.{}", self.path());
        Some(match self.api_default() {
            Some(serde_json::Value::String(text)) => {
                format!("({present} ? {value} : '{text}')")
            }
            Some(default) => format!("({present} ? {value} : {default})"),
            None if self == Field::RollingUpdate => format!("({present})"),
            None => return None,
        })
    }

    /// The field's own name (`labels`, `nodeSelector`).
    pub fn name(self) -> &'static str {
        let path = self.path();
        path.rsplit('.').next().unwrap_or(path)
    }

    /// Whether it is part of the Deployment's topology ([`TOPOLOGY`]).
    pub fn is_topology(self) -> bool {
        TOPOLOGY.contains(&self)
    }

    /// Whether it is a field of the pods (their template), not of the
    /// Deployment itself.
    pub fn of_pods(self) -> bool {
        self.path().starts_with("spec.template.")
    }
}

/// The fields of a Deployment's topology: how many pods run and how they
/// are replaced (what a release's notes must flag).
pub const TOPOLOGY: [Field; 5] = [
    Field::Replicas,
    Field::StrategyType,
    Field::RollingUpdate,
    Field::MaxSurge,
    Field::MaxUnavailable,
];

/// Which roles' Deployments a key reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every role's, with the same value.
    Every,
    /// This role's alone.
    Only(Role),
    /// Every role's pods, less the entries that would give a pod an Azure
    /// identity ([`crate::metadata::IDENTITY_LABELS`]) on a role that holds
    /// none.
    EveryLessIdentity,
}

/// How a key lands on its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lands {
    /// Its value is written there (or read to compute what is).
    At(&'static [Field]),
    /// It decides which of these fields, or which of their entries, are
    /// written, not their values (a mode, a switch).
    Decides(&'static [Field]),
    /// Its value is written at the first field, and decides whether the
    /// others are written (`strategy.type` and the rolling update block
    /// that only RollingUpdate keeps).
    AtDeciding(&'static [Field]),
}

/// One values key on the Deployments.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// The values key.
    pub key: Key,
    /// The roles whose Deployments it reaches.
    pub reach: Reach,
    /// Where it lands.
    pub lands: Lands,
    /// A role's own key under topology split: the key it replaces for that
    /// role's pods when it is set (an empty one takes the other's value).
    pub replaces: Option<Key>,
}

impl Binding {
    /// Whether the key reaches `role`'s Deployment.
    pub fn reaches(&self, role: Role) -> bool {
        match self.reach {
            Reach::Every | Reach::EveryLessIdentity => true,
            Reach::Only(only) => only == role,
        }
    }

    /// The fields the key lands on, whichever way.
    pub fn fields(&self) -> &'static [Field] {
        match self.lands {
            Lands::At(fields) | Lands::Decides(fields) | Lands::AtDeciding(fields) => fields,
        }
    }
}

const fn every(key: Key, lands: Lands) -> Binding {
    Binding {
        key,
        reach: Reach::Every,
        lands,
        replaces: None,
    }
}

const fn only(role: Role, key: Key, lands: Lands) -> Binding {
    Binding {
        key,
        reach: Reach::Only(role),
        lands,
        replaces: None,
    }
}

/// `role`'s own key under topology split, in place of `top` when set.
const fn replacing(role: Role, key: Key, top: Key, lands: Lands) -> Binding {
    Binding {
        key,
        reach: Reach::Only(role),
        lands,
        replaces: Some(top),
    }
}

use Field as F;
use Lands::{At, AtDeciding, Decides};
use Role::{Controller, Webhooks};

/// Every values key the Deployments read, the roles it reaches and the
/// fields it lands on. The keys of the single topology's Deployment sit
/// with the controller (it is the controller's Deployment there).
pub const BINDINGS: &[Binding] = &[
    // The Deployment itself.
    every(keys::DEPLOYMENT_ANNOTATIONS, At(&[F::Annotations])),
    only(Controller, keys::REPLICA_COUNT, At(&[F::Replicas])),
    only(
        Controller,
        keys::SPLIT_CONTROLLER_REPLICA_COUNT,
        At(&[F::Replicas]),
    ),
    // Paused is replicas 0, whatever the count says.
    only(
        Controller,
        keys::SPLIT_CONTROLLER_PAUSED,
        Decides(&[F::Replicas]),
    ),
    only(
        Webhooks,
        keys::SPLIT_WEBHOOKS_REPLICA_COUNT,
        At(&[F::Replicas]),
    ),
    only(
        Webhooks,
        keys::SPLIT_WEBHOOKS_MIN_READY_SECONDS,
        At(&[F::MinReadySeconds]),
    ),
    every(keys::REVISION_HISTORY_LIMIT, At(&[F::RevisionHistoryLimit])),
    only(
        Controller,
        keys::STRATEGY_TYPE,
        AtDeciding(&[
            F::StrategyType,
            F::RollingUpdate,
            F::MaxSurge,
            F::MaxUnavailable,
        ]),
    ),
    // The rolling parameters are dug out of `strategy.rollingUpdate`,
    // which may be left out or null.
    only(
        Controller,
        keys::STRATEGY_ROLLING_UPDATE,
        At(&[F::RollingUpdate]),
    ),
    only(
        Controller,
        keys::STRATEGY_ROLLING_UPDATE_MAX_SURGE,
        At(&[F::MaxSurge]),
    ),
    only(
        Controller,
        keys::STRATEGY_ROLLING_UPDATE_MAX_UNAVAILABLE,
        At(&[F::MaxUnavailable]),
    ),
    only(Webhooks, keys::SPLIT_WEBHOOKS_MAX_SURGE, At(&[F::MaxSurge])),
    // The pod template's metadata.
    every(keys::POD_ANNOTATIONS, At(&[F::PodAnnotations])),
    only(
        Webhooks,
        keys::SPLIT_WEBHOOKS_REFRESH_TOKEN,
        At(&[F::PodAnnotations]),
    ),
    Binding {
        key: keys::POD_LABELS,
        reach: Reach::EveryLessIdentity,
        lands: At(&[F::PodLabels]),
        replaces: None,
    },
    only(
        Controller,
        keys::AAD_POD_IDENTITY_ENABLE,
        Decides(&[F::PodLabels]),
    ),
    // The pod.
    every(keys::POD_SECURITY_CONTEXT, At(&[F::PodSecurityContext])),
    every(keys::PRIORITY_CLASS_NAME, At(&[F::PriorityClassName])),
    replacing(
        Webhooks,
        keys::SPLIT_WEBHOOKS_PRIORITY_CLASS_NAME,
        keys::PRIORITY_CLASS_NAME,
        At(&[F::PriorityClassName]),
    ),
    every(keys::NODE_SELECTOR, At(&[F::NodeSelector])),
    replacing(
        Webhooks,
        keys::SPLIT_WEBHOOKS_NODE_SELECTOR,
        keys::NODE_SELECTOR,
        At(&[F::NodeSelector]),
    ),
    every(keys::TOLERATIONS, At(&[F::Tolerations])),
    replacing(
        Webhooks,
        keys::SPLIT_WEBHOOKS_TOLERATIONS,
        keys::TOLERATIONS,
        At(&[F::Tolerations]),
    ),
    every(keys::AFFINITY, At(&[F::Affinity])),
    replacing(
        Controller,
        keys::SPLIT_CONTROLLER_AFFINITY,
        keys::AFFINITY,
        At(&[F::Affinity]),
    ),
    replacing(
        Webhooks,
        keys::SPLIT_WEBHOOKS_AFFINITY,
        keys::AFFINITY,
        At(&[F::Affinity]),
    ),
    only(
        Controller,
        keys::SPLIT_CONTROLLER_TOPOLOGY_SPREAD_CONSTRAINTS,
        At(&[F::TopologySpreadConstraints]),
    ),
    only(
        Webhooks,
        keys::SPLIT_WEBHOOKS_TOPOLOGY_SPREAD_CONSTRAINTS,
        At(&[F::TopologySpreadConstraints]),
    ),
    every(keys::IMAGE_PULL_SECRETS, At(&[F::ImagePullSecrets])),
    // The operator's container.
    every(keys::IMAGE_REPOSITORY, At(&[F::Image])),
    every(keys::IMAGE_REPOSITORY_BASE, At(&[F::Image])),
    every(keys::IMAGE_TAG, At(&[F::Image])),
    every(
        keys::METRICS_ENABLE,
        Decides(&[
            F::ManagerArgs,
            F::ManagerPorts,
            F::ManagerVolumeMounts,
            F::Volumes,
        ]),
    ),
    every(keys::METRICS_ADDRESS, At(&[F::ManagerArgs])),
    every(keys::METRICS_PORT, At(&[F::ManagerArgs, F::ManagerPorts])),
    every(
        keys::METRICS_SECURE,
        At(&[F::ManagerArgs, F::ManagerVolumeMounts, F::Volumes]),
    ),
    every(keys::METRICS_PROFILING, At(&[F::ManagerArgs])),
    // The CRDs are the controller's to apply.
    only(Controller, keys::INSTALL_CRDS, Decides(&[F::ManagerArgs])),
    only(Controller, keys::CRD_PATTERN, At(&[F::ManagerArgs])),
    only(Controller, keys::CRD_LABELS, At(&[F::ManagerArgs])),
    every(keys::WEBHOOK_PORT, At(&[F::ManagerArgs, F::ManagerPorts])),
    every(
        keys::WEBHOOK_CERT_DIR,
        At(&[F::ManagerArgs, F::ManagerVolumeMounts]),
    ),
    every(keys::USE_JSON_LOGGING, Decides(&[F::ManagerArgs])),
    every(keys::GO_MEM_LIMIT, At(&[F::ManagerEnv])),
    // The user's variables carry Azure credentials (AZURE_CLIENT_SECRET
    // from a Secret), which the webhook pods must not hold.
    only(Controller, keys::EXTRA_ENV, At(&[F::ManagerEnv])),
    every(
        keys::PROBES_LIVENESS_PERIOD_SECONDS,
        At(&[F::ManagerProbes]),
    ),
    every(
        keys::PROBES_LIVENESS_FAILURE_THRESHOLD,
        At(&[F::ManagerProbes]),
    ),
    every(
        keys::PROBES_LIVENESS_TIMEOUT_SECONDS,
        At(&[F::ManagerProbes]),
    ),
    every(
        keys::PROBES_READINESS_PERIOD_SECONDS,
        At(&[F::ManagerProbes]),
    ),
    every(
        keys::PROBES_READINESS_FAILURE_THRESHOLD,
        At(&[F::ManagerProbes]),
    ),
    every(
        keys::PROBES_READINESS_TIMEOUT_SECONDS,
        At(&[F::ManagerProbes]),
    ),
    every(keys::PROBES_STARTUP_PERIOD_SECONDS, At(&[F::ManagerProbes])),
    every(
        keys::PROBES_STARTUP_FAILURE_THRESHOLD,
        At(&[F::ManagerProbes]),
    ),
    every(
        keys::PROBES_STARTUP_TIMEOUT_SECONDS,
        At(&[F::ManagerProbes]),
    ),
    every(keys::RESOURCES, At(&[F::ManagerResources])),
    replacing(
        Controller,
        keys::SPLIT_CONTROLLER_RESOURCES,
        keys::RESOURCES,
        At(&[F::ManagerResources]),
    ),
    replacing(
        Webhooks,
        keys::SPLIT_WEBHOOKS_RESOURCES,
        keys::RESOURCES,
        At(&[F::ManagerResources]),
    ),
    every(keys::SECURITY_CONTEXT, At(&[F::ManagerSecurityContext])),
];

/// The row of `key`, if the Deployments read it.
pub fn binding(key: Key) -> Option<&'static Binding> {
    BINDINGS.iter().find(|binding| binding.key == key)
}

/// `key`, read for `role`'s Deployment: panics when the key has no row or
/// its row keeps it from `role`, so no key reaches a role without the
/// table saying so.
pub fn bound(role: Role, key: Key) -> Key {
    match binding(key) {
        Some(row) if row.reaches(role) => key,
        Some(_) => panic!(
            "{} does not reach the {} Deployment (roles::BINDINGS)",
            key.path(),
            role.name()
        ),
        None => panic!(
            "{} has no row in roles::BINDINGS: say which roles it reaches and where",
            key.path()
        ),
    }
}

/// Whether `key` reaches `role`'s Deployment (panics when the key has no
/// row: every key the Deployments read has one).
pub fn reaches(role: Role, key: Key) -> bool {
    binding(key)
        .unwrap_or_else(|| panic!("{} has no row in roles::BINDINGS", key.path()))
        .reaches(role)
}

/// Whether `key`'s entries reach `role`'s pods less those that would give
/// them an Azure identity ([`Reach::EveryLessIdentity`] on a role that
/// holds none).
pub fn less_identity(role: Role, key: Key) -> bool {
    binding(key).is_some_and(|row| row.reach == Reach::EveryLessIdentity) && !role.talks_to_azure()
}

/// The key that replaces `top` for `role`'s pods under topology split, if
/// the table has one.
pub fn replacement(role: Role, top: Key) -> Option<Key> {
    BINDINGS
        .iter()
        .find(|row| row.replaces == Some(top) && row.reaches(role))
        .map(|row| row.key)
}

/// The one key that reaches `role`'s Deployment alone, replaces no other,
/// and is written at `field` (the split's `topologySpreadConstraints` of
/// each role); panics unless exactly one row says so, so the Deployments
/// read such a key from its row, not from a list of their own.
pub fn own_key(role: Role, field: Field) -> Key {
    let rows: Vec<&Binding> = BINDINGS
        .iter()
        .filter(|row| row.reach == Reach::Only(role) && row.replaces.is_none())
        .filter(|row| matches!(row.lands, Lands::At([at]) if *at == field))
        .collect();
    match rows.as_slice() {
        [row] => row.key,
        _ => panic!(
            "{} rows of roles::BINDINGS are the {} Deployment's own key at {}; one must be",
            rows.len(),
            role.name(),
            field.path()
        ),
    }
}

/// The keys whose value decides a Deployment's topology: those landing on
/// a topology field ([`Field::is_topology`]), the topology itself, and the
/// feature gate that lets one replica roll.
pub fn topology_keys() -> impl Iterator<Item = Key> {
    BINDINGS
        .iter()
        .filter(|row| row.fields().iter().any(|field| field.is_topology()))
        .map(|row| row.key)
        .chain([
            keys::TOPOLOGY,
            keys::FEATURE_GATES_SINGLE_REPLICA_ROLLING_UPDATE,
        ])
}

/// Where `key` lands, for messages: "the webhook pods' nodeSelector",
/// "the pods' labels" (of every role), "the Deployments' annotations".
pub fn lands_on(key: Key) -> String {
    let row =
        binding(key).unwrap_or_else(|| panic!("{} has no row in roles::BINDINGS", key.path()));
    let field = row.fields()[0];
    let whose = match (row.reach, field.of_pods()) {
        (Reach::Only(role), true) => format!("the {}'", role.pods()),
        (_, true) => "the pods'".to_string(),
        (Reach::Only(role), false) => format!("the {} Deployment's", role.name()),
        (_, false) => "the Deployments'".to_string(),
    };
    format!("{whose} {}", field.name())
}

/// The one field whose value `key` is, where it is written as itself: what
/// the in-cluster guard reads in its place.
pub fn field_of(key: Key) -> Option<Field> {
    match binding(key)?.lands {
        Lands::At([field]) | Lands::AtDeciding([field, ..]) => Some(*field),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::catalog::Catalog;
    use crate::describe::tree::literal_fields;
    use crate::describe::{Entry, Expr, Node, Resource};
    use crate::model::Release;
    use crate::objects;

    /// The values keys an object reads (its `when` included).
    fn keys_read(resource: &Resource) -> BTreeSet<&'static str> {
        resource
            .inputs()
            .into_iter()
            .filter_map(|input| match input {
                Expr::Values(key) => Some(key.path()),
                _ => None,
            })
            .collect()
    }

    /// The install's objects, and each role's Deployment among them (by
    /// the literal kind and name each describes).
    fn install() -> (Vec<Resource>, Vec<(Role, Resource)>) {
        let all = objects::resources(&Catalog::builtin(), &Release::default());
        let deployments = all
            .iter()
            .filter_map(|resource| {
                let top = literal_fields(&resource.object);
                let kind = top.iter().find(|(key, _)| key == "kind")?.1.clone();
                let name = resource.object.iter().find_map(|entry| match entry {
                    Entry::Field(key, Node::Map(metadata)) if key == "metadata" => {
                        literal_fields(metadata)
                            .into_iter()
                            .find(|(key, _)| key == "name")
                            .map(|(_, name)| name)
                    }
                    _ => None,
                })?;
                (kind == "Deployment")
                    .then(|| objects::role_of(&kind, &name))
                    .flatten()
                    .map(|role| (role, resource.clone()))
            })
            .collect();
        (all, deployments)
    }

    /// A row is read where it says it reaches (itself, or the map it is
    /// dug out of), and nowhere else among the Deployments.
    #[test]
    fn every_row_is_read_by_the_deployments_it_reaches_and_no_other() {
        let (_, deployments) = install();
        assert_eq!(deployments.len(), 2, "one Deployment per role");
        for row in BINDINGS {
            for (role, deployment) in &deployments {
                let read = keys_read(deployment);
                let path = row.key.path();
                let read_here = read
                    .iter()
                    .any(|key| *key == path || path.starts_with(&format!("{key}.")));
                assert_eq!(
                    read_here,
                    row.reaches(*role),
                    "{path}: the row says it {} the {} Deployment, which {} it",
                    if row.reaches(*role) {
                        "reaches"
                    } else {
                        "does not reach"
                    },
                    role.name(),
                    if read_here { "reads" } else { "does not read" }
                );
            }
        }
    }

    /// Every key a Deployment reads has a row, unless the install's other
    /// objects read it too: a fact of the whole install (the topology, the
    /// operator mode, the names), not a setting of one role's pods.
    #[test]
    fn every_key_only_the_deployments_read_has_a_row() {
        let (all, deployments) = install();
        let elsewhere: BTreeSet<&str> = all
            .iter()
            .filter(|resource| !deployments.iter().any(|(_, d)| d.file == resource.file))
            .flat_map(keys_read)
            .collect();
        for (role, deployment) in &deployments {
            for key in keys_read(deployment) {
                let row = BINDINGS.iter().any(|row| row.key.path() == key);
                assert!(
                    row || elsewhere.contains(key),
                    "the {} Deployment reads {key}, which has no row in BINDINGS",
                    role.name()
                );
            }
        }
    }

    /// A role's own key names the top-level key it replaces, and that one
    /// reaches the role too (an empty own key falls back to it).
    #[test]
    fn a_replacement_falls_back_to_a_key_of_its_role() {
        for row in BINDINGS {
            if let Some(top) = row.replaces {
                let Reach::Only(role) = row.reach else {
                    panic!("{}: a replacement belongs to one role", row.key.path());
                };
                assert!(reaches(role, top), "{}", row.key.path());
                assert_eq!(replacement(role, top), Some(row.key));
            }
        }
    }

    /// The keys that carry an Azure credential or identity reach the
    /// controller alone.
    #[test]
    fn the_webhook_pods_get_no_azure_identity() {
        for key in [keys::EXTRA_ENV, keys::AAD_POD_IDENTITY_ENABLE] {
            assert!(reaches(Role::Controller, key));
            assert!(!reaches(Role::Webhooks, key), "{}", key.path());
        }
        assert!(less_identity(Role::Webhooks, keys::POD_LABELS));
        assert!(!less_identity(Role::Controller, keys::POD_LABELS));
    }

    /// One row per key.
    #[test]
    fn a_key_has_one_row() {
        let mut seen = BTreeSet::new();
        for row in BINDINGS {
            assert!(seen.insert(row.key.path()), "{} twice", row.key.path());
        }
    }
}
