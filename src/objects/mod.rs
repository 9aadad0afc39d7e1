//! The objects of an install, each described once (see [`crate::describe`]):
//! the chart prints its templates from these descriptions and asogen
//! evaluates its manifests from them.

mod admission;
mod deployment;
mod identity;
mod network;
mod rbac;
mod settings;
mod webhooks;

use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::describe::tree::{json, map, text};
use crate::describe::{self, Entry, Expr, Node, Resource, helpers};
use crate::keys;
use crate::model::Release;
use crate::roles::Role;
use crate::values::Topology;

pub use admission::{NAMESPACE_FIELDS, kustomize_references};
pub use deployment::REFRESH_ANNOTATION;
pub use settings::SECRET_ENV;
pub use webhooks::{Configuration, WEBHOOKS, WebhookFields, configurations, webhook_item};

/// Names of the objects, shared by the descriptions.
pub mod names {
    /// The Deployment.
    pub const DEPLOYMENT: &str = "azureserviceoperator-controller-manager";
    /// The Secret holding the Azure settings.
    pub const SETTINGS_SECRET: &str = "aso-controller-settings";
    /// The webhook Service.
    pub const WEBHOOK_SERVICE: &str = "azureserviceoperator-webhook-service";
    /// The metrics Service.
    pub const METRICS_SERVICE: &str = "azureserviceoperator-controller-manager-metrics-service";
    /// The cert-manager Issuer.
    pub const ISSUER: &str = "azureserviceoperator-selfsigned-issuer";
    /// The webhook serving Certificate.
    pub const SERVING_CERT: &str = "azureserviceoperator-serving-cert";
    /// The metrics serving Certificate.
    pub const METRICS_CERT: &str = "azureserviceoperator-metrics-server-cert";
    /// The leader election Role.
    pub const LEADER_ELECTION_ROLE: &str = "azureserviceoperator-leader-election-role";
    /// The leader election RoleBinding.
    pub const LEADER_ELECTION_BINDING: &str = "azureserviceoperator-leader-election-rolebinding";
    /// The PodDisruptionBudget.
    pub const PDB: &str = "azureserviceoperator-pdb";
    /// The ingress NetworkPolicy.
    pub const ALLOW_INGRESS: &str = "azure-service-operator-allow-ingress";
    /// The egress NetworkPolicy.
    pub const ALLOW_EGRESS: &str = "azure-service-operator-allow-egress";
    /// The Secret cert-manager writes the webhook certificate to.
    pub const WEBHOOK_CERT_SECRET: &str = "webhook-server-cert";
    /// The Secret cert-manager writes the metrics certificate to.
    pub const METRICS_CERT_SECRET: &str = "metrics-server-cert";
    /// Topology split's webhooks Deployment.
    pub const WEBHOOKS_DEPLOYMENT: &str = "azureserviceoperator-webhooks";
    /// The webhook pods' ServiceAccount.
    pub const WEBHOOKS_SERVICE_ACCOUNT: &str = "azureserviceoperator-webhooks";
    /// The webhook pods' PodDisruptionBudget.
    pub const WEBHOOKS_PDB: &str = "azureserviceoperator-webhooks-pdb";
    /// The webhook pods' ingress NetworkPolicy.
    pub const WEBHOOKS_ALLOW_INGRESS: &str = "azure-service-operator-webhooks-allow-ingress";
    /// The webhook pods' egress NetworkPolicy.
    pub const WEBHOOKS_ALLOW_EGRESS: &str = "azure-service-operator-webhooks-allow-egress";
    /// The ClusterRole secure metrics need (token and access reviews).
    pub const METRICS_AUTH_ROLE: &str = "azureserviceoperator-metrics-auth";
}

/// The role of each of the install's Deployments, PodDisruptionBudgets
/// and Services that belongs to one, by kind and name: the objects are
/// named by [`names`] alone, and a test holds this table to what each
/// object selects. The webhook Service has none: it routes to whichever
/// role serves the webhooks in the topology.
pub fn role_of(kind: &str, name: &str) -> Option<Role> {
    match (kind, name) {
        ("Deployment", _) => Role::ALL
            .into_iter()
            .find(|&role| deployment_of(role) == name),
        ("PodDisruptionBudget", names::WEBHOOKS_PDB) => Some(Role::Webhooks),
        ("PodDisruptionBudget", names::PDB) | ("Service", names::METRICS_SERVICE) => {
            Some(Role::Controller)
        }
        _ => None,
    }
}

/// The name of `role`'s Deployment: the one table of role and Deployment
/// (the controller's keeps upstream's name).
pub const fn deployment_of(role: Role) -> &'static str {
    match role {
        Role::Controller => names::DEPLOYMENT,
        Role::Webhooks => names::WEBHOOKS_DEPLOYMENT,
    }
}

/// Every resource of the chart, in the order Helm installs kinds. Topology
/// split's own objects (the webhooks Deployment and what only its pods
/// use) are rendered only with `topology: split`, each after the single
/// topology's object of its kind.
pub fn resources(catalog: &Catalog, release: &Release) -> Vec<Resource> {
    resources_with(catalog, release, |configuration| configuration.resource())
}

/// [`resources`], each webhook configuration of the catalog described by
/// `configuration` (render writes their webhooks without describing each).
pub fn resources_with(
    catalog: &Catalog,
    release: &Release,
    configuration: impl Fn(&Configuration) -> Resource,
) -> Vec<Resource> {
    let mut resources = vec![
        network::ingress_policy(),
        network::egress_policy(),
        network::webhooks_ingress_policy(),
        network::webhooks_egress_policy(),
        network::pod_disruption_budget(),
        network::webhooks_pod_disruption_budget(),
        rbac::service_account(),
        rbac::webhooks_service_account(),
        settings::settings_secret(),
    ];
    resources.extend(rbac::cluster_roles(catalog));
    resources.push(rbac::metrics_auth_role(catalog));
    resources.extend(rbac::cluster_role_bindings());
    resources.extend([
        rbac::webhooks_crd_reader_binding(),
        rbac::webhooks_metrics_auth_binding(),
        rbac::leader_election_role(catalog),
        rbac::leader_election_role_binding(),
        network::metrics_service(),
        webhooks::webhook_service(),
        deployment::deployment(catalog, release),
        deployment::webhooks_deployment(catalog, release),
    ]);
    resources.extend(webhooks::configurations(catalog).iter().map(configuration));
    resources.extend([
        identity::azure_identity(),
        identity::azure_identity_binding(),
        webhooks::issuer(),
        webhooks::serving_certificate(),
        webhooks::metrics_certificate(),
    ]);
    resources.extend(admission::admission_policies());
    resources.extend(admission::change_guard::objects());
    resources
}

/// `true` with `topology` set to `topology` (`single` when left out).
pub(crate) fn topology_is(topology: Topology) -> Expr {
    describe::value_or_default(keys::TOPOLOGY).eq(Expr::str(topology.as_str()))
}

/// `true` with `topology: split`: the controller's split shape.
pub(crate) fn split_topology() -> Expr {
    topology_is(Topology::Split)
}

/// `true` where the webhooks Deployment runs: topology split, and the
/// bridge of a Helm migration, which renders it exactly as split does so
/// that it never rolls on the way in or out.
pub(crate) fn webhooks_deployed() -> Expr {
    Expr::any(vec![
        topology_is(Topology::Split),
        topology_is(Topology::Bridge),
    ])
}

/// The webhook pods' selector labels, as map entries.
fn webhooks_selector_labels() -> Vec<Entry> {
    crate::metadata::WEBHOOKS_SELECTOR_LABELS
        .iter()
        .map(|(key, value)| text(*key, value))
        .collect()
}

/// `matchLabels` with the webhook pods' selector labels.
fn webhooks_match_labels() -> Entry {
    map("matchLabels", webhooks_selector_labels())
}

/// The labels of an object of the webhooks role: every object's labels,
/// with the webhook pods' `control-plane` in place of the controller's.
fn webhooks_object_labels() -> Vec<Entry> {
    helpers::labels()
        .entries()
        .iter()
        .flat_map(|entry| match entry {
            Entry::Include(helper) if std::ptr::eq(*helper, helpers::selector_labels()) => {
                webhooks_selector_labels()
            }
            other => vec![other.clone()],
        })
        .collect()
}

/// [`header`] for a namespaced object of the webhooks role.
fn role_header(api_version: &str, kind: &str, name: &str, more: Vec<Entry>) -> Vec<Entry> {
    let mut metadata = vec![text("name", name), json("namespace", Expr::Namespace)];
    metadata.push(map("labels", webhooks_object_labels()));
    metadata.extend(more);
    vec![
        text("apiVersion", api_version),
        text("kind", kind),
        map("metadata", metadata),
    ]
}

/// The Namespace that install manifests start with (not part of the chart:
/// Helm creates namespaces itself).
pub fn namespace_object(namespace: &str, managed_by: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "labels": {
                "app.kubernetes.io/managed-by": managed_by,
                "app.kubernetes.io/name": helpers::CHART,
                // The controller pod meets the restricted standard; enforce it.
                "pod-security.kubernetes.io/enforce": "restricted",
            },
            "name": namespace,
        }
    })
}

/// `true` when this install serves webhooks.
fn serves_webhooks() -> Expr {
    Expr::Include(helpers::serves_webhooks())
}

/// `metrics.enable` and `metrics.secure`.
fn secure_metrics() -> Expr {
    Expr::all(vec![
        Expr::value(keys::METRICS_ENABLE),
        Expr::value(keys::METRICS_SECURE),
    ])
}

/// `apiVersion`, `kind` and `metadata` (name, the release namespace when
/// namespaced, the labels), then `more` metadata entries.
fn header(
    api_version: &str,
    kind: &str,
    name: &str,
    namespaced: bool,
    more: Vec<Entry>,
) -> Vec<Entry> {
    let mut metadata = vec![text("name", name)];
    if namespaced {
        metadata.push(json("namespace", Expr::Namespace));
    }
    metadata.push(map("labels", vec![Entry::Include(helpers::labels())]));
    metadata.extend(more);
    vec![
        text("apiVersion", api_version),
        text("kind", kind),
        map("metadata", metadata),
    ]
}

/// A resource: `file` under templates/, rendered when `when` holds.
fn resource(file: &str, when: Option<Expr>, object: Vec<Entry>) -> Resource {
    Resource {
        file: file.into(),
        when,
        object,
    }
}

/// `matchLabels` with the selector labels.
fn match_labels() -> Entry {
    map(
        "matchLabels",
        vec![Entry::Include(helpers::selector_labels())],
    )
}

/// A constant node from JSON.
fn lit(value: Value) -> Node {
    Node::Lit(value)
}

/// Data from the catalog: its maps and lists as they are, every scalar
/// through the chart's json helper, so that no catalog text is ever
/// template text, whatever it holds (the catalog's grammar already allows
/// only names; this holds even where the grammar had a gap).
fn catalog_data(value: &Value) -> Node {
    match value {
        Value::Object(map) if !map.is_empty() => Node::Map(
            map.iter()
                .map(|(key, value)| Entry::Field(key.clone(), catalog_data(value)))
                .collect(),
        ),
        Value::Array(items) if !items.is_empty() => Node::List(
            items
                .iter()
                .map(|item| crate::describe::Item::One(catalog_data(item)))
                .collect(),
        ),
        // An empty map or list (a list of no items would read as null).
        Value::Object(_) | Value::Array(_) => Node::Lit(value.clone()),
        scalar => Node::Json(Expr::Lit(scalar.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::{Item, Node};
    use crate::metadata::{METADATA_VALUES, SELECTOR_LABELS, WEBHOOKS_SELECTOR_LABELS};

    /// [`role_of`] is what the rendered objects select: in every topology,
    /// each Deployment, PodDisruptionBudget and Service of a role selects
    /// (and a Deployment's pods carry) that role's labels, every other one
    /// of those kinds is the webhook Service, and each role's Deployment
    /// is rendered where the topology runs it.
    #[test]
    fn roles_are_what_the_objects_select() {
        let checker = crate::check::Checker::new();
        for topology in ["single", "split", "bridge"] {
            let source = crate::read::parse_source(
                "v.yaml".into(),
                format!("topology: {topology}\nmetrics: {{enable: true}}\n"),
            )
            .unwrap();
            let model = checker.check(&[source], "ns").unwrap();
            let mut roles = Vec::new();
            for object in
                crate::render::objects::Install::new(&model, crate::render::objects::ASOGEN)
                    .objects()
            {
                let kind = object["kind"].as_str().unwrap();
                let name = object["metadata"]["name"].as_str().unwrap();
                if !["Deployment", "PodDisruptionBudget", "Service"].contains(&kind) {
                    continue;
                }
                let spec = &object["spec"];
                let selected = match kind {
                    "Service" => &spec["selector"],
                    _ => &spec["selector"]["matchLabels"],
                };
                let has = |labels: &[(&str, &str)]| {
                    labels.iter().all(|(k, v)| selected[*k] == *v)
                        && (kind != "Deployment"
                            || labels
                                .iter()
                                .all(|(k, v)| spec["template"]["metadata"]["labels"][*k] == *v))
                };
                match role_of(kind, name) {
                    Some(Role::Webhooks) => {
                        assert!(has(WEBHOOKS_SELECTOR_LABELS), "{topology}: {object}")
                    }
                    Some(Role::Controller) => assert!(has(SELECTOR_LABELS), "{topology}: {object}"),
                    None => assert_eq!(
                        (kind, name),
                        ("Service", names::WEBHOOK_SERVICE),
                        "{topology}"
                    ),
                }
                if kind == "Deployment" {
                    roles.push(role_of(kind, name).unwrap());
                }
            }
            let expected = match topology {
                "single" => vec![Role::Controller],
                _ => vec![Role::Controller, Role::Webhooks],
            };
            assert_eq!(roles, expected, "{topology}");
        }
    }

    /// The values paths written into a `labels`, `annotations` or
    /// `nodeSelector` map anywhere in `entries`.
    fn metadata_paths(entries: &[Entry], inside: bool, out: &mut Vec<String>) {
        const MAPS: [&str; 3] = ["labels", "annotations", "nodeSelector"];
        for entry in entries {
            match entry {
                Entry::Field(key, node) => node_paths(node, MAPS.contains(&key.as_str()), out),
                // A map of the values, or one chosen among several
                // (`default`: a role's own, else the top-level one).
                Entry::Yaml(key, expr) if MAPS.contains(&key.as_str()) => expr_keys(expr, out),
                Entry::Splice(Expr::Values(key)) if inside => out.push(key.path().to_string()),
                Entry::If(_, then, otherwise) => {
                    metadata_paths(then, inside, out);
                    metadata_paths(otherwise, inside, out);
                }
                Entry::HelmOnly(inner) => metadata_paths(std::slice::from_ref(inner), inside, out),
                _ => {}
            }
        }
    }

    fn expr_keys(expr: &Expr, out: &mut Vec<String>) {
        match expr {
            Expr::Values(key) => out.push(key.path().to_string()),
            Expr::Call(_, args) => args.iter().for_each(|arg| expr_keys(arg, out)),
            _ => {}
        }
    }

    fn node_paths(node: &Node, inside: bool, out: &mut Vec<String>) {
        match node {
            Node::Map(entries) => metadata_paths(entries, inside, out),
            Node::List(items) => items.iter().for_each(|item| item_paths(item, out)),
            _ => {}
        }
    }

    fn item_paths(item: &Item, out: &mut Vec<String>) {
        match item {
            Item::One(node) => node_paths(node, false, out),
            Item::If(_, then, otherwise) => {
                then.iter()
                    .chain(otherwise)
                    .for_each(|item| item_paths(item, out));
            }
            Item::Splice(_) => {}
        }
    }

    #[test]
    fn every_values_map_written_into_metadata_is_checked() {
        let mut written = Vec::new();
        for resource in resources(&Catalog::builtin(), &Release::default()) {
            metadata_paths(&resource.object, false, &mut written);
        }
        written.sort();
        written.dedup();
        let mut listed: Vec<String> = METADATA_VALUES
            .iter()
            .map(|m| m.key.path().to_string())
            .collect();
        listed.sort();
        assert_eq!(written, listed);
    }

    /// The table's entries are what the descriptions write, so a label or
    /// annotation added to a description is checked as the table says.
    #[test]
    fn the_metadata_table_is_what_the_descriptions_write() {
        let owned = |entries: &[(&str, &str)]| -> Vec<(String, String)> {
            entries
                .iter()
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .collect()
        };
        for map in METADATA_VALUES {
            let written = match map.key {
                keys::POD_LABELS => deployment::pod_template_literals("labels"),
                keys::POD_ANNOTATIONS => deployment::pod_template_literals("annotations"),
                _ => Vec::new(),
            };
            assert_eq!(owned(map.written), written, "{}", map.key.path());
        }
        assert_eq!(
            crate::describe::tree::literal_fields(&[Entry::Include(helpers::selector_labels())]),
            owned(crate::metadata::SELECTOR_LABELS)
        );
    }
}
