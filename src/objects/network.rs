//! What reaches the controller pods and what they reach: the NetworkPolicies,
//! the metrics Service and the PodDisruptionBudget.

use serde_json::json;

use super::names::{ALLOW_EGRESS, ALLOW_INGRESS, METRICS_SERVICE, PDB};
use super::{header, lit, match_labels, resource};
use crate::describe::tree::{field, item, json, list, map, text};
use crate::describe::{Entry, Expr, Item, Node, Resource};
use crate::keys::{self, Key};

fn tcp_port(number: Node) -> Item {
    item(vec![field("port", number), text("protocol", "TCP")])
}

/// The ingress NetworkPolicy: open to any source, as released.
pub fn ingress_policy() -> Resource {
    let mut object = header(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        ALLOW_INGRESS,
        true,
        vec![],
    );
    object.push(map(
        "spec",
        vec![
            map("podSelector", vec![match_labels()]),
            field("policyTypes", lit(json!(["Ingress"]))),
            Entry::Note(
                "Any source: the API server calls the webhooks from addresses no\nselector can name (and Cilium needs this form).",
            ),
            field("ingress", lit(json!([{}]))),
        ],
    ));
    resource(
        "networkpolicy-allow-ingress.yaml",
        Some(Expr::value(keys::NETWORK_POLICIES_ENABLE)),
        object,
    )
}

/// One egress rule: a TCP port to one CIDR.
fn egress_to(port: Node, cidr: Expr) -> Item {
    item(vec![
        list("ports", vec![tcp_port(port)]),
        list(
            "to",
            vec![item(vec![map("ipBlock", vec![json("cidr", cidr)])])],
        ),
    ])
}

/// The egress NetworkPolicy: one rule per destination.
pub fn egress_policy() -> Resource {
    let mut object = header(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        ALLOW_EGRESS,
        true,
        vec![],
    );
    let fixed = |port: i64| lit(json!(port));
    let cidr = |key: Key| Expr::value(key);
    object.push(map(
        "spec",
        vec![
            map("podSelector", vec![match_labels()]),
            field("policyTypes", lit(json!(["Egress"]))),
            Entry::Note("DNS, the Azure APIs (443 anywhere), then one rule per destination with\nits own `to`: the Kubernetes API, MySQL, PostgreSQL and Azure SQL servers."),
            list(
                "egress",
                vec![
                    Item::One(lit(json!({"ports": [
                        {"port": 53, "protocol": "UDP"},
                        {"port": 53, "protocol": "TCP"}
                    ]}))),
                    Item::One(lit(json!({"ports": [{"port": 443, "protocol": "TCP"}]}))),
                    egress_to(
                        Node::Int(Expr::value(keys::KUBERNETES_API_PORT)),
                        cidr(keys::KUBERNETES_API_CIDR),
                    ),
                    egress_to(fixed(3306), cidr(keys::MYSQL_CIDR)),
                    egress_to(fixed(5432), cidr(keys::POSTGRESQL_CIDR)),
                    egress_to(fixed(1433), cidr(keys::SQL_CIDR)),
                ],
            ),
        ],
    ));
    resource(
        "networkpolicy-allow-egress.yaml",
        Some(Expr::value(keys::NETWORK_POLICIES_ENABLE)),
        object,
    )
}

/// The metrics Service.
pub fn metrics_service() -> Resource {
    let mut object = header("v1", "Service", METRICS_SERVICE, true, vec![]);
    object.push(map(
        "spec",
        vec![
            list(
                "ports",
                vec![item(vec![
                    text("name", "metrics"),
                    field("port", Node::Int(Expr::value(keys::METRICS_PORT))),
                ])],
            ),
            map("selector", vec![Entry::Include("selectorLabels")]),
        ],
    ));
    resource(
        "service-metrics.yaml",
        Some(Expr::value(keys::METRICS_ENABLE)),
        object,
    )
}

/// The PodDisruptionBudget.
pub fn pod_disruption_budget() -> Resource {
    let mut object = header("policy/v1", "PodDisruptionBudget", PDB, true, vec![]);
    object.push(map(
        "spec",
        vec![
            json("minAvailable", Expr::value(keys::PDB_MIN_AVAILABLE)),
            map("selector", vec![match_labels()]),
            Entry::If(
                Expr::value(keys::PDB_UNHEALTHY_POD_EVICTION_POLICY),
                vec![json(
                    "unhealthyPodEvictionPolicy",
                    Expr::value(keys::PDB_UNHEALTHY_POD_EVICTION_POLICY),
                )],
                vec![],
            ),
        ],
    ));
    resource(
        "poddisruptionbudget.yaml",
        Some(Expr::value(keys::POD_DISRUPTION_BUDGET_ENABLED)),
        object,
    )
}
