//! Serving the admission webhooks: their Service, a mutating and a
//! validating configuration per API group of the catalog, and the
//! cert-manager Issuer and Certificates for webhook and metrics TLS.

use serde_json::json;

use super::names::{
    ISSUER, METRICS_CERT, METRICS_CERT_SECRET, METRICS_SERVICE, SERVING_CERT, WEBHOOK_CERT_SECRET,
    WEBHOOK_SERVICE,
};
use super::{
    catalog_data, header, lit, resource, secure_metrics, serves_webhooks, split_topology,
    topology_is, webhooks_selector_labels,
};
use crate::catalog::{Catalog, Group, NAME_PREFIX};
use crate::describe::tree::{field, item, json, list, map, text};
use crate::describe::{Entry, Expr, Func, Item, Resource, helpers};
use crate::keys;
use crate::metadata::BOTH_ROLES_LABEL;
use crate::values::Topology;

/// The webhook Service.
pub fn webhook_service() -> Resource {
    let mut object = header("v1", "Service", WEBHOOK_SERVICE, true, vec![]);
    object.push(map(
        "spec",
        vec![
            list(
                "ports",
                vec![item(vec![
                    field("port", lit(json!(443))),
                    field(
                        "targetPort",
                        crate::describe::Node::Int(Expr::value(keys::WEBHOOK_PORT)),
                    ),
                ])],
            ),
            // The name is in every CRD's conversion config: only the
            // selector may move to topology split's webhook pods. In the
            // bridge it selects the pods of both roles, so a Helm
            // migration's steps only ever add ready pods before removing
            // the others.
            Entry::If(
                split_topology(),
                vec![map("selector", webhooks_selector_labels())],
                vec![Entry::If(
                    topology_is(Topology::Bridge),
                    vec![map("selector", vec![both_roles_selector()])],
                    vec![map(
                        "selector",
                        vec![Entry::Include(helpers::selector_labels())],
                    )],
                )],
            ),
        ],
    ));
    resource("service-webhook.yaml", Some(serves_webhooks()), object)
}

/// The label the pods of both roles carry with the same value: the
/// chart's name, or what `podLabels` puts in its place on both, whatever
/// it is (an empty value too: `default` would select the chart's name,
/// which no pod then carries).
fn both_roles_selector() -> Entry {
    let labels = || Expr::value(keys::POD_LABELS).or_default(Expr::Call(Func::Dict, vec![]));
    json(
        BOTH_ROLES_LABEL,
        Expr::Call(
            Func::Ternary,
            vec![
                Expr::Call(Func::Index, vec![labels(), Expr::str(BOTH_ROLES_LABEL)]),
                Expr::Include(helpers::name()),
                Expr::Call(Func::HasKey, vec![labels(), Expr::str(BOTH_ROLES_LABEL)]),
            ],
        ),
    )
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

/// One webhook as its configuration writes it. Every text that differs
/// between two webhooks of the catalog is one whole scalar here, so that
/// render can lay out one webhook and fill the others in
/// (`render::objects`), where evaluating 1,328 descriptions twice would
/// be most of the work of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookFields<'a> {
    /// `default.` or `validate.` before the webhook's name.
    pub name: String,
    /// The path the API server calls, `/mutate-...` or `/validate-...`.
    pub path: String,
    /// The API group.
    pub group: &'a str,
    /// The API version.
    pub version: &'a str,
    /// The resource (plural).
    pub resource: &'a str,
}

impl WebhookFields<'_> {
    /// The scalars, in the order [`WebhookFields::SCALARS`] names them.
    pub fn scalars(&self) -> [&str; 5] {
        [
            &self.name,
            &self.path,
            self.group,
            self.version,
            self.resource,
        ]
    }

    /// How many scalars [`WebhookFields::scalars`] gives.
    pub const SCALARS: usize = 5;
}

/// One webhook's description. What comes from the catalog goes through the
/// json helper (see [`catalog_data`]).
pub fn webhook_item(fields: &WebhookFields) -> Item {
    let one = |text: &str| catalog_data(&json!([text]));
    item(vec![
        json("name", Expr::str(fields.name.as_str())),
        field("admissionReviewVersions", lit(json!(["v1"]))),
        map(
            "clientConfig",
            vec![map(
                "service",
                vec![
                    text("name", WEBHOOK_SERVICE),
                    json("namespace", Expr::Namespace),
                    json("path", Expr::str(fields.path.as_str())),
                ],
            )],
        ),
        text("failurePolicy", "Fail"),
        text("matchPolicy", "Exact"),
        list(
            "rules",
            vec![item(vec![
                field("apiGroups", one(fields.group)),
                field("apiVersions", one(fields.version)),
                field("operations", lit(json!(["CREATE", "UPDATE"]))),
                field("resources", one(fields.resource)),
            ])],
        ),
        text("sideEffects", "None"),
    ])
}
/// Mutating (`mwh`) or validating (`vwh`) webhooks of one API group.
#[derive(Debug)]
struct Flavour {
    kind: &'static str,
    file: &'static str,
    suffix: &'static str,
    prefix: &'static str,
    path: &'static str,
}

const MUTATING: Flavour = Flavour {
    kind: "MutatingWebhookConfiguration",
    file: "mutatingwebhookconfiguration",
    suffix: "mwh",
    prefix: "default",
    path: "mutate",
};

const VALIDATING: Flavour = Flavour {
    kind: "ValidatingWebhookConfiguration",
    file: "validatingwebhookconfiguration",
    suffix: "vwh",
    prefix: "validate",
    path: "validate",
};

/// The key of a configuration's list of webhooks.
pub const WEBHOOKS: &str = "webhooks";

/// One webhook configuration of the catalog: the webhooks of one API
/// group, mutating or validating.
#[derive(Debug, Clone, Copy)]
pub struct Configuration<'c> {
    group: &'c Group,
    flavour: &'static Flavour,
}

impl<'c> Configuration<'c> {
    /// Its chart template file (under templates/).
    pub fn file(&self) -> String {
        format!("{}-{}.yaml", self.flavour.file, self.group.short_name())
    }

    /// Its description.
    pub fn resource(&self) -> Resource {
        let mut resource = self.header();
        resource.object.push(Entry::Note(
            "One webhook per served resource version of the group (values/catalog.json).",
        ));
        resource.object.push(list(
            WEBHOOKS,
            self.webhooks().iter().map(webhook_item).collect(),
        ));
        resource
    }

    /// Its description without the [`WEBHOOKS`] list: everything else.
    pub fn header(&self) -> Resource {
        let (group, flavour) = (self.group, self.flavour);
        let name = format!("{NAME_PREFIX}{}-{}", group.short_name(), flavour.suffix);
        let mut object = header(
            "admissionregistration.k8s.io/v1",
            flavour.kind,
            &name,
            false,
            vec![inject_ca()],
        );
        // The name holds the catalog's group: through the json helper too.
        match &mut object[2] {
            Entry::Field(_, crate::describe::Node::Map(metadata)) => {
                metadata[0] = json("name", Expr::str(name));
            }
            _ => unreachable!("header puts metadata third"),
        }
        resource(&self.file(), Some(serves_webhooks()), object)
    }

    /// How many webhooks it lists.
    pub fn len(&self) -> usize {
        self.group.webhooks.len()
    }

    /// Whether it lists none.
    pub fn is_empty(&self) -> bool {
        self.group.webhooks.is_empty()
    }

    /// Calls `each` with its webhooks, one per served resource version of
    /// the group, in the catalog's order, until `each` returns false
    /// (false then). One value is filled in for each webhook in turn: a
    /// configuration lists up to 148, written in every run.
    pub fn each_webhook(&self, mut each: impl FnMut(&WebhookFields<'c>) -> bool) -> bool {
        let (group, flavour) = (self.group, self.flavour);
        let mut path = String::new();
        for part in ["/", flavour.path, "-"] {
            path.push_str(part);
        }
        crate::catalog::write_path_start(&group.group, &mut path);
        let path_start = path.len();
        let mut fields = WebhookFields {
            name: String::new(),
            path,
            group: &group.group,
            version: "",
            resource: "",
        };
        for hook in &group.webhooks {
            fields.name.clear();
            fields.name.push_str(flavour.prefix);
            fields.name.push('.');
            hook.write_name(&group.group, &mut fields.name);
            fields.path.truncate(path_start);
            hook.write_path_end(&mut fields.path);
            fields.version = &hook.version;
            fields.resource = &hook.resource;
            if !each(&fields) {
                return false;
            }
        }
        true
    }

    /// Its webhooks, as [`Configuration::each_webhook`] gives them.
    pub fn webhooks(&self) -> Vec<WebhookFields<'c>> {
        let mut webhooks = Vec::with_capacity(self.len());
        self.each_webhook(|fields| {
            webhooks.push(fields.clone());
            true
        });
        webhooks
    }
}

/// One mutating and one validating webhook configuration per API group,
/// in install order.
pub fn configurations(catalog: &Catalog) -> Vec<Configuration<'_>> {
    [&MUTATING, &VALIDATING]
        .into_iter()
        .flat_map(|flavour| {
            catalog
                .groups
                .iter()
                .map(move |group| Configuration { group, flavour })
        })
        .collect()
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
