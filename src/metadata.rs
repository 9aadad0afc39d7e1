//! The values maps the chart writes into objects' labels and annotations
//! (or a nodeSelector), and what the chart writes into the same maps
//! itself. The API server refuses a whole object, so leaves an install half
//! applied, when one of their keys or values is not valid: asogen's check
//! (`check/labels.rs`), the schema and the chart guard check each of them
//! as the API server does. The object descriptions write the chart's own
//! entries from here, and their tests hold the two together.

use crate::keys::{self, Key};
use crate::roles::Role;

/// How the API server checks a map of the values that the chart writes
/// into an object's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataKind {
    /// Label keys and label values (a nodeSelector is checked so too).
    Labels,
    /// Annotation keys (label keys, lower cased) and the total size of the
    /// object's annotations.
    Annotations,
}

/// A values map the chart writes into an object's labels or annotations
/// (or its nodeSelector).
#[derive(Debug, Clone, Copy)]
pub struct MetadataValues {
    /// Its values key.
    pub key: Key,
    /// How the API server checks it.
    pub kind: MetadataKind,
    /// Where the chart writes it, for messages: the Deployments' keys land
    /// where [`crate::roles::BINDINGS`] says.
    place: Place,
    /// Entries the chart writes into the same map whatever the values;
    /// the values' keys replace them, and they count in the size.
    pub written: &'static [(&'static str, &'static str)],
    /// Keys the values must not set: the Deployment's selector labels,
    /// with the value the chart gives them (another value would leave the
    /// Deployment and the Services selecting no pods).
    pub selector: &'static [(&'static str, &'static str)],
}

/// The labels that select the controller pods (the Deployment's, the
/// Services', the policies'): the release's own, `control-plane` alone,
/// since a Deployment's selector is immutable and anything else would
/// block every upgrade of an existing install.
pub const SELECTOR_LABELS: &[(&str, &str)] = &[("control-plane", "controller-manager")];

/// The labels that select topology split's webhook pods (the webhooks
/// Deployment's, the webhook Service's, their PodDisruptionBudget's and
/// NetworkPolicies'): the same key as [`SELECTOR_LABELS`] with another
/// value, so no selector of one role can match a pod of the other.
pub const WEBHOOKS_SELECTOR_LABELS: &[(&str, &str)] = &[("control-plane", "webhooks")];

/// The selector labels of `role`'s pods.
pub fn selector_labels(role: Role) -> &'static [(&'static str, &'static str)] {
    match role {
        Role::Controller => SELECTOR_LABELS,
        Role::Webhooks => WEBHOOKS_SELECTOR_LABELS,
    }
}

/// The label the pods of both roles carry with one value (the chart's
/// name, unless `podLabels` replaces it on both): what the webhook Service
/// selects in the bridge of a Helm migration, so it routes to both.
pub const BOTH_ROLES_LABEL: &str = "app.kubernetes.io/name";

/// Pod labels that give a pod an Azure identity (aad-pod-identity's
/// binding, Azure Workload Identity's opt-in): with topology split they
/// reach the controller pods only, since the webhook pods hold no Azure
/// credential (docs/security.md). Every other `podLabels` entry reaches
/// the pods of both roles.
pub const IDENTITY_LABELS: &[&str] = &["aadpodidbinding", "azure.workload.identity/use"];

/// The annotations the chart writes on the controller pods.
pub const WRITTEN_POD_ANNOTATIONS: &[(&str, &str)] = &[(
    "kubectl.kubernetes.io/default-container",
    crate::roles::MANAGER_CONTAINER,
)];

/// Where a values map is written.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// On the Deployments, as its row of [`crate::roles::BINDINGS`] says.
    Deployments,
    /// On another object: its field, for messages.
    Object(&'static str),
}

impl MetadataValues {
    /// Where the chart writes the map, for messages ("the pods' labels").
    pub fn lands_on(&self) -> String {
        match self.place {
            Place::Deployments => crate::roles::lands_on(self.key),
            Place::Object(field) => field.to_string(),
        }
    }
}

/// Every values map that becomes labels or annotations, checked as the API
/// server checks them by asogen, the schema and the chart guard.
pub const METADATA_VALUES: [MetadataValues; 6] = [
    MetadataValues {
        key: keys::POD_LABELS,
        kind: MetadataKind::Labels,
        place: Place::Deployments,
        written: SELECTOR_LABELS,
        selector: SELECTOR_LABELS,
    },
    MetadataValues {
        key: keys::NODE_SELECTOR,
        kind: MetadataKind::Labels,
        place: Place::Deployments,
        written: &[],
        selector: &[],
    },
    MetadataValues {
        key: keys::SPLIT_WEBHOOKS_NODE_SELECTOR,
        kind: MetadataKind::Labels,
        place: Place::Deployments,
        written: &[],
        selector: &[],
    },
    MetadataValues {
        key: keys::POD_ANNOTATIONS,
        kind: MetadataKind::Annotations,
        place: Place::Deployments,
        written: WRITTEN_POD_ANNOTATIONS,
        selector: &[],
    },
    MetadataValues {
        key: keys::DEPLOYMENT_ANNOTATIONS,
        kind: MetadataKind::Annotations,
        place: Place::Deployments,
        written: &[],
        selector: &[],
    },
    MetadataValues {
        key: keys::SERVICE_ACCOUNT_ANNOTATIONS,
        kind: MetadataKind::Annotations,
        place: Place::Object("the ServiceAccount's annotations"),
        written: &[],
        selector: &[],
    },
];
