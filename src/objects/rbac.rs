//! The ServiceAccount and what it may do: the manager's ClusterRole over
//! every served group, leader election's Role, and their bindings.

use serde_json::{Value, json};

use super::names::{
    LEADER_ELECTION_BINDING, LEADER_ELECTION_ROLE, MANAGER_ROLE, MANAGER_ROLE_BINDING,
};
use super::{header, lit, resource};
use crate::catalog::Catalog;
use crate::describe::tree::{field, item, json, list, map, text};
use crate::describe::{Entry, Expr, Resource};

const ALL_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];

fn rule(groups: &[&str], resources: &[String], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn names(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The manager's permissions: its own bookkeeping plus every served group.
pub fn manager_rules(catalog: &Catalog) -> Vec<Value> {
    let mut rules = vec![
        rule(&[""], &names(&["configmaps", "secrets"]), &ALL_VERBS),
        rule(&[""], &names(&["events"]), &["create", "patch"]),
        rule(
            &[""],
            &names(&["namespaces", "serviceaccounts"]),
            &["get", "list", "watch"],
        ),
        rule(
            &["apiextensions.k8s.io"],
            &names(&["customresourcedefinitions"]),
            &["create", "get", "list", "patch", "update", "watch"],
        ),
    ];
    for group in &catalog.groups {
        let plurals: Vec<String> = group.kinds.iter().map(|k| k.plural()).collect();
        let mut resources = plurals.clone();
        resources.extend(plurals.iter().map(|p| format!("{p}/status")));
        resources.extend(plurals.iter().map(|p| format!("{p}/finalizers")));
        rules.push(rule(&[group.group.as_str()], &resources, &ALL_VERBS));
    }
    rules
}

/// What leader election needs: the lease, and events about it.
pub fn leader_election_rules() -> Vec<Value> {
    vec![
        rule(&["coordination.k8s.io"], &names(&["leases"]), &ALL_VERBS),
        rule(&[""], &names(&["events"]), &["create", "patch"]),
    ]
}

/// The ServiceAccount, when the chart creates it.
pub fn service_account() -> Resource {
    let object = vec![
        text("apiVersion", "v1"),
        text("kind", "ServiceAccount"),
        map(
            "metadata",
            vec![
                json("name", Expr::Include("serviceAccountName")),
                json("namespace", Expr::Namespace),
                map("labels", vec![Entry::Include("labels")]),
                Entry::Yaml(
                    "annotations".into(),
                    Expr::value("serviceAccount.annotations"),
                ),
            ],
        ),
    ];
    resource(
        "serviceaccount.yaml",
        Some(Expr::value("serviceAccount.create")),
        object,
    )
}

/// The manager ClusterRole.
pub fn manager_role(catalog: &Catalog) -> Resource {
    let mut object = header(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        MANAGER_ROLE,
        false,
        vec![],
    );
    object.push(Entry::Note(
        "Generated from the catalog of served API groups (values/catalog.yaml).",
    ));
    object.push(field("rules", lit(Value::Array(manager_rules(catalog)))));
    resource("clusterrole-manager.yaml", None, object)
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
            json("name", Expr::Include("serviceAccountName")),
            json("namespace", Expr::Namespace),
        ])],
    ));
    object
}

/// The manager ClusterRoleBinding.
pub fn manager_role_binding() -> Resource {
    resource(
        "clusterrolebinding-manager.yaml",
        None,
        binding(
            "ClusterRoleBinding",
            MANAGER_ROLE_BINDING,
            "ClusterRole",
            MANAGER_ROLE,
            false,
        ),
    )
}

/// The leader election Role.
pub fn leader_election_role() -> Resource {
    let mut object = header(
        "rbac.authorization.k8s.io/v1",
        "Role",
        LEADER_ELECTION_ROLE,
        true,
        vec![],
    );
    object.push(field("rules", lit(Value::Array(leader_election_rules()))));
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
