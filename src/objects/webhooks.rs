//! Serving the admission webhooks: their Service, one mutating and one
//! validating configuration over every kind of the catalog, and the
//! cert-manager Issuer and Certificates for webhook and metrics TLS.

use serde_json::json;

use super::names::{
    ISSUER, METRICS_CERT, METRICS_CERT_SECRET, METRICS_SERVICE, MUTATING, SERVING_CERT, VALIDATING,
    WEBHOOK_CERT_SECRET, WEBHOOK_SERVICE,
};
use super::{header, lit, resource, secure_metrics, serves_webhooks};
use crate::catalog::{Catalog, WebhookEntry};
use crate::describe::tree::{field, item, json, list, map, text};
use crate::describe::{Entry, Expr, Item, Resource};

/// The webhook Service.
pub fn webhook_service() -> Resource {
    let mut object = header("v1", "Service", WEBHOOK_SERVICE, true, vec![]);
    object.push(map(
        "spec",
        vec![
            field(
                "ports",
                lit(json!([{"name": "webhook", "port": 443, "protocol": "TCP", "targetPort": "webhook-server"}])),
            ),
            map("selector", vec![Entry::Include("selectorLabels")]),
        ],
    ));
    resource("service-webhook.yaml", Some(serves_webhooks()), object)
}

/// `cert-manager.io/inject-ca-from`: the serving certificate's CA.
fn inject_ca() -> Entry {
    map(
        "annotations",
        vec![json(
            "cert-manager.io/inject-ca-from",
            Expr::printf("%s/%s", vec![Expr::Namespace, Expr::str(SERVING_CERT)]),
        )],
    )
}

/// One webhook: `prefix` is `default`/`validate` in its name and
/// `mutate`/`validate` in its path.
fn webhook(entry: &WebhookEntry, prefix: &str, path: &str) -> Item {
    item(vec![
        text("name", &format!("{prefix}.{}", entry.name)),
        field("admissionReviewVersions", lit(json!(["v1"]))),
        map(
            "clientConfig",
            vec![map(
                "service",
                vec![
                    text("name", WEBHOOK_SERVICE),
                    json("namespace", Expr::Namespace),
                    text("path", &format!("/{path}-{}", entry.path)),
                ],
            )],
        ),
        text("failurePolicy", "Fail"),
        field(
            "rules",
            lit(json!([{
                "apiGroups": [entry.group],
                "apiVersions": [entry.version],
                "operations": ["CREATE", "UPDATE"],
                "resources": [entry.plural],
            }])),
        ),
        text("sideEffects", "None"),
    ])
}

fn configuration(
    catalog: &Catalog,
    file: &str,
    kind: &str,
    name: &str,
    prefix: &str,
    path: &str,
) -> Resource {
    let mut object = header(
        "admissionregistration.k8s.io/v1",
        kind,
        name,
        false,
        vec![inject_ca()],
    );
    object.push(Entry::Note(
        "One webhook per kind of the catalog of served API groups (values/catalog.yaml).",
    ));
    object.push(list(
        "webhooks",
        catalog
            .webhooks()
            .iter()
            .map(|entry| webhook(entry, prefix, path))
            .collect(),
    ));
    resource(file, Some(serves_webhooks()), object)
}

/// The mutating webhook configuration.
pub fn mutating_webhooks(catalog: &Catalog) -> Resource {
    configuration(
        catalog,
        "mutatingwebhookconfiguration.yaml",
        "MutatingWebhookConfiguration",
        MUTATING,
        "default",
        "mutate",
    )
}

/// The validating webhook configuration.
pub fn validating_webhooks(catalog: &Catalog) -> Resource {
    configuration(
        catalog,
        "validatingwebhookconfiguration.yaml",
        "ValidatingWebhookConfiguration",
        VALIDATING,
        "validate",
        "validate",
    )
}

/// The self-signed Issuer, for the webhook or the metrics certificate.
pub fn issuer() -> Resource {
    let mut object = header("cert-manager.io/v1", "Issuer", ISSUER, true, vec![]);
    object.push(field("spec", lit(json!({"selfSigned": {}}))));
    resource(
        "issuer.yaml",
        Some(Expr::any(vec![serves_webhooks(), secure_metrics()])),
        object,
    )
}

fn certificate(name: &str, service: &str, secret: &str) -> Vec<Entry> {
    let mut object = header("cert-manager.io/v1", "Certificate", name, true, vec![]);
    let dns = |suffix: &str| {
        Item::One(crate::describe::Node::Json(Expr::printf(
            &format!("{service}.%s.{suffix}"),
            vec![Expr::Namespace],
        )))
    };
    object.push(map(
        "spec",
        vec![
            list("dnsNames", vec![dns("svc"), dns("svc.cluster.local")]),
            field("issuerRef", lit(json!({"kind": "Issuer", "name": ISSUER}))),
            text("secretName", secret),
            field("subject", lit(json!({"organizations": ["azure"]}))),
        ],
    ));
    object
}

/// The webhook serving Certificate.
pub fn serving_certificate() -> Resource {
    resource(
        "certificate-serving.yaml",
        Some(serves_webhooks()),
        certificate(SERVING_CERT, WEBHOOK_SERVICE, WEBHOOK_CERT_SECRET),
    )
}

/// The metrics serving Certificate.
pub fn metrics_certificate() -> Resource {
    resource(
        "certificate-metrics.yaml",
        Some(secure_metrics()),
        certificate(METRICS_CERT, METRICS_SERVICE, METRICS_CERT_SECRET),
    )
}
