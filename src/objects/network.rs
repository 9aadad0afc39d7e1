//! What reaches the controller pods and what they reach: the NetworkPolicies,
//! the metrics Service and the PodDisruptionBudget; with topology split, the
//! webhook pods' own NetworkPolicies and PodDisruptionBudget.

use serde_json::json;

use super::names::{
    ALLOW_EGRESS, ALLOW_INGRESS, METRICS_SERVICE, PDB, WEBHOOKS_ALLOW_EGRESS,
    WEBHOOKS_ALLOW_INGRESS, WEBHOOKS_PDB,
};
use super::{
    header, lit, match_labels, resource, role_header, webhooks_deployed, webhooks_match_labels,
};
use crate::describe::tree::{field, item, json, list, map, text};
use crate::describe::{Entry, Expr, Item, Node, Resource, helpers};
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

/// The webhook pods' ingress NetworkPolicy: open to any source, as the
/// controller's (the API server calls the webhooks).
pub fn webhooks_ingress_policy() -> Resource {
    let mut object = role_header(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        WEBHOOKS_ALLOW_INGRESS,
        vec![],
    );
    object.push(map(
        "spec",
        vec![
            map("podSelector", vec![webhooks_match_labels()]),
            field("policyTypes", lit(json!(["Ingress"]))),
            field("ingress", lit(json!([{}]))),
        ],
    ));
    resource(
        "networkpolicy-webhooks-allow-ingress.yaml",
        Some(Expr::all(vec![
            Expr::value(keys::NETWORK_POLICIES_ENABLE),
            webhooks_deployed(),
        ])),
        object,
    )
}

/// The webhook pods' egress NetworkPolicy: DNS and the Kubernetes API only
/// (they list CRDs and review metrics tokens; they call no Azure API and
/// no database). 443 anywhere too: the API server's Service port, which
/// some network plugins judge before translating it to the API server's.
pub fn webhooks_egress_policy() -> Resource {
    let mut object = role_header(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        WEBHOOKS_ALLOW_EGRESS,
        vec![],
    );
    object.push(map(
        "spec",
        vec![
            map("podSelector", vec![webhooks_match_labels()]),
            field("policyTypes", lit(json!(["Egress"]))),
            list(
                "egress",
                vec![
                    Item::One(lit(json!({"ports": [
                        {"port": 53, "protocol": "UDP"},
                        {"port": 53, "protocol": "TCP"}
                    ]}))),
                    Item::One(lit(json!({"ports": [{"port": 443, "protocol": "TCP"}]}))),
                    egress_to(
                        Node::Int(Expr::value(keys::NETWORK_POLICIES_KUBERNETES_API_PORT)),
                        Expr::value(keys::NETWORK_POLICIES_KUBERNETES_API_CIDR),
                    ),
                ],
            ),
        ],
    ));
    resource(
        "networkpolicy-webhooks-allow-egress.yaml",
        Some(Expr::all(vec![
            Expr::value(keys::NETWORK_POLICIES_ENABLE),
            webhooks_deployed(),
        ])),
        object,
    )
}

/// `unhealthyPodEvictionPolicy`, when set: both roles' budgets take it.
fn unhealthy_pod_eviction_policy() -> Entry {
    let key = keys::POD_DISRUPTION_BUDGET_UNHEALTHY_POD_EVICTION_POLICY;
    Entry::If(
        Expr::value(key),
        vec![json("unhealthyPodEvictionPolicy", Expr::value(key))],
        vec![],
    )
}

/// The webhook pods' PodDisruptionBudget: a node drain takes at most
/// `split.webhooks.podDisruptionBudget.maxUnavailable` of them at once.
pub fn webhooks_pod_disruption_budget() -> Resource {
    let mut object = role_header("policy/v1", "PodDisruptionBudget", WEBHOOKS_PDB, vec![]);
    object.push(map(
        "spec",
        vec![
            json(
                "maxUnavailable",
                Expr::value(keys::SPLIT_WEBHOOKS_POD_DISRUPTION_BUDGET_MAX_UNAVAILABLE),
            ),
            map("selector", vec![webhooks_match_labels()]),
            unhealthy_pod_eviction_policy(),
        ],
    ));
    resource(
        "poddisruptionbudget-webhooks.yaml",
        Some(webhooks_deployed()),
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
                        Node::Int(Expr::value(keys::NETWORK_POLICIES_KUBERNETES_API_PORT)),
                        cidr(keys::NETWORK_POLICIES_KUBERNETES_API_CIDR),
                    ),
                    egress_to(fixed(3306), cidr(keys::NETWORK_POLICIES_MYSQL_CIDR)),
                    egress_to(fixed(5432), cidr(keys::NETWORK_POLICIES_POSTGRESQL_CIDR)),
                    egress_to(fixed(1433), cidr(keys::NETWORK_POLICIES_SQL_CIDR)),
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
            map("selector", vec![Entry::Include(helpers::selector_labels())]),
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
            json(
                "minAvailable",
                Expr::value(keys::POD_DISRUPTION_BUDGET_MIN_AVAILABLE),
            ),
            map("selector", vec![match_labels()]),
            unhealthy_pod_eviction_policy(),
        ],
    ));
    resource(
        "poddisruptionbudget.yaml",
        Some(Expr::value(keys::POD_DISRUPTION_BUDGET_ENABLED)),
        object,
    )
}
