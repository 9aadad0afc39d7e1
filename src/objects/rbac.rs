//! The ServiceAccount and what it may do: the release's ClusterRoles,
//! leader election's Role, and their bindings; with topology split, the
//! webhook pods' ServiceAccount, which may read CRDs (and review metrics
//! tokens) and nothing else: no CRD writes, no lease, no ASO resources.

use serde_json::{Value, json};

use super::names::{
    LEADER_ELECTION_BINDING, LEADER_ELECTION_ROLE, METRICS_AUTH_ROLE, WEBHOOKS_SERVICE_ACCOUNT,
};
use super::{header, lit, resource, role_header, secure_metrics, webhooks_deployed};
use crate::catalog::{Catalog, NAME_PREFIX, PolicyRule};
use crate::describe::tree::{field, item, json, list, map, text};
use crate::describe::{Entry, Expr, Item, Node, Resource, helpers};
use crate::keys;

/// The ServiceAccount, when the chart creates it.
pub fn service_account() -> Resource {
    let object = vec![
        text("apiVersion", "v1"),
        text("kind", "ServiceAccount"),
        map(
            "metadata",
            vec![
                json("name", Expr::Include(helpers::service_account_name())),
                json("namespace", Expr::Namespace),
                map("labels", vec![Entry::Include(helpers::labels())]),
                Entry::Yaml(
                    "annotations".into(),
                    Expr::value(keys::SERVICE_ACCOUNT_ANNOTATIONS),
                ),
            ],
        ),
    ];
    resource(
        "serviceaccount.yaml",
        Some(Expr::value(keys::SERVICE_ACCOUNT_CREATE)),
        object,
    )
}

/// A multi-tenant install's watchers-only tenant: its ClusterRoles come
/// from the release that serves the webhooks.
fn tenant_watchers() -> Expr {
    Expr::all(vec![
        Expr::value(keys::MULTITENANT_ENABLE),
        Expr::value(keys::AZURE_OPERATOR_MODE).eq(Expr::str("watchers")),
    ])
}

/// The ClusterRoles of the release (values/catalog.json): the manager's,
/// and the CRD manager's (when the controller installs CRDs) and reader's.
pub fn cluster_roles(catalog: &Catalog) -> Vec<Resource> {
    let role = |short: &str, when: Expr| {
        let mut object = header(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            &format!("{NAME_PREFIX}{short}"),
            false,
            vec![],
        );
        object.push(Entry::Note(
            "The release's own rules (values/catalog.json).",
        ));
        object.push(field("rules", rules(catalog.cluster_role(short))));
        resource(&format!("clusterrole-{short}.yaml"), Some(when), object)
    };
    vec![
        role("manager-role", !tenant_watchers()),
        role(
            "crd-manager-role",
            Expr::all(vec![Expr::value(keys::INSTALL_CRDS), !tenant_watchers()]),
        ),
        role("crd-reader-role", !tenant_watchers()),
    ]
}

/// The ClusterRoleBindings; a multi-tenant install suffixes the names of
/// the manager's and the CRD reader's with its namespace, so tenants'
/// bindings do not collide.
pub fn cluster_role_bindings() -> Vec<Resource> {
    // `tenant`: whether a multi-tenant install suffixes the name.
    let bound = |short: &str, when: Option<Expr>, tenant: bool| {
        let role = format!("{NAME_PREFIX}{short}-role");
        let name = format!("{NAME_PREFIX}{short}-rolebinding");
        let mut object = binding("ClusterRoleBinding", &name, "ClusterRole", &role, false);
        let metadata = match &mut object[2] {
            Entry::Field(_, Node::Map(entries)) => entries,
            _ => unreachable!("header puts metadata third"),
        };
        if tenant {
            metadata[0] = Entry::If(
                Expr::value(keys::MULTITENANT_ENABLE),
                vec![json(
                    "name",
                    Expr::printf(&format!("{name}-%s"), vec![Expr::Namespace]),
                )],
                vec![text("name", &name)],
            );
        }
        resource(&format!("clusterrolebinding-{short}.yaml"), when, object)
    };
    let tenant_webhooks = Expr::all(vec![
        Expr::value(keys::MULTITENANT_ENABLE),
        Expr::value(keys::AZURE_OPERATOR_MODE).eq(Expr::str("webhooks")),
    ]);
    vec![
        bound("manager", Some(!tenant_webhooks), true),
        // The CRDs are the cluster's, installed once: no tenant suffix.
        bound("crd-manager", Some(Expr::value(keys::INSTALL_CRDS)), false),
        bound("crd-reader", None, true),
    ]
}

fn binding(kind: &str, name: &str, role_kind: &str, role: &str, namespaced: bool) -> Vec<Entry> {
    let mut object = header(
        "rbac.authorization.k8s.io/v1",
        kind,
        name,
        namespaced,
        vec![],
    );
    object.push(field(
        "roleRef",
        lit(json!({"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role})),
    ));
    object.push(list(
        "subjects",
        vec![item(vec![
            text("kind", "ServiceAccount"),
            json("name", Expr::Include(helpers::service_account_name())),
            json("namespace", Expr::Namespace),
        ])],
    ));
    object
}

/// A role's rules from the catalog, every string through the json helper
/// (as `catalog_data` writes catalog text), described straight from the
/// typed rules: no JSON of them is built on the way.
fn rules(rules: &[PolicyRule]) -> Node {
    if rules.is_empty() {
        return Node::Lit(Value::Array(Vec::new()));
    }
    let strings = |entries: &[String]| match entries {
        [] => Node::Lit(Value::Array(Vec::new())),
        entries => Node::List(
            entries
                .iter()
                .map(|entry| Item::One(Node::Json(Expr::str(entry.as_str()))))
                .collect(),
        ),
    };
    Node::List(
        rules
            .iter()
            .map(|rule| {
                Item::One(Node::Map(
                    rule.fields()
                        .map(|(key, entries)| field(key, strings(entries)))
                        .collect(),
                ))
            })
            .collect(),
    )
}

/// The leader election Role.
pub fn leader_election_role(catalog: &Catalog) -> Resource {
    let mut object = header(
        "rbac.authorization.k8s.io/v1",
        "Role",
        LEADER_ELECTION_ROLE,
        true,
        vec![],
    );
    object.push(field("rules", rules(catalog.role("leader-election-role"))));
    resource("role-leader-election.yaml", None, object)
}

/// The leader election RoleBinding.
pub fn leader_election_role_binding() -> Resource {
    resource(
        "rolebinding-leader-election.yaml",
        None,
        binding(
            "RoleBinding",
            LEADER_ELECTION_BINDING,
            "Role",
            LEADER_ELECTION_ROLE,
            true,
        ),
    )
}

/// The webhook pods' ServiceAccount.
pub fn webhooks_service_account() -> Resource {
    let object = role_header("v1", "ServiceAccount", WEBHOOKS_SERVICE_ACCOUNT, vec![]);
    resource(
        "serviceaccount-webhooks.yaml",
        Some(webhooks_deployed()),
        object,
    )
}

/// The API groups of the reviews secure metrics make (controller-runtime's
/// authentication and authorization filter).
const REVIEW_GROUPS: [&str; 2] = ["authentication.k8s.io", "authorization.k8s.io"];

/// The ClusterRole secure metrics need: the release's CRD manager rules
/// for token and access reviews, without its CRD writes.
pub fn metrics_auth_role(catalog: &Catalog) -> Resource {
    let reviews: Vec<PolicyRule> = catalog
        .cluster_role("crd-manager-role")
        .iter()
        .filter(|rule| {
            rule.api_groups
                .iter()
                .all(|group| REVIEW_GROUPS.contains(&group.as_str()))
        })
        .cloned()
        .collect();
    let mut object = header(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        METRICS_AUTH_ROLE,
        false,
        vec![],
    );
    object.push(Entry::Note(
        "The release's review rules (values/catalog.json, crd-manager-role).",
    ));
    object.push(field("rules", rules(&reviews)));
    resource(
        "clusterrole-metrics-auth.yaml",
        Some(Expr::all(vec![webhooks_deployed(), secure_metrics()])),
        object,
    )
}

/// A ClusterRoleBinding of the webhook pods' ServiceAccount.
fn webhooks_binding(file: &str, name: &str, role: &str, when: Expr) -> Resource {
    let mut object = header(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        name,
        false,
        vec![],
    );
    object.push(field(
        "roleRef",
        lit(json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role})),
    ));
    object.push(list(
        "subjects",
        vec![item(vec![
            text("kind", "ServiceAccount"),
            text("name", WEBHOOKS_SERVICE_ACCOUNT),
            json("namespace", Expr::Namespace),
        ])],
    ));
    resource(file, Some(when), object)
}

/// The webhook pods read CRDs at start (to know which kinds to serve).
pub fn webhooks_crd_reader_binding() -> Resource {
    webhooks_binding(
        "clusterrolebinding-webhooks-crd-reader.yaml",
        &format!("{NAME_PREFIX}webhooks-crd-reader-rolebinding"),
        &format!("{NAME_PREFIX}crd-reader-role"),
        webhooks_deployed(),
    )
}

/// The webhook pods review the tokens of metrics requests.
pub fn webhooks_metrics_auth_binding() -> Resource {
    webhooks_binding(
        "clusterrolebinding-webhooks-metrics-auth.yaml",
        &format!("{NAME_PREFIX}webhooks-metrics-auth-rolebinding"),
        METRICS_AUTH_ROLE,
        Expr::all(vec![webhooks_deployed(), secure_metrics()]),
    )
}
