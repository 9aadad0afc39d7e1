//! The controller-manager Deployment: the one object every install has.

use serde_json::{Value, json};

use super::names::{DEPLOYMENT, METRICS_CERT_SECRET, SETTINGS_SECRET, WEBHOOK_CERT_SECRET};
use super::settings::SECRET_ENV;
use super::{header, lit, match_labels, resource, secure_metrics, serves_webhooks};
use crate::catalog::{CRD_LABELS_FLAG, Catalog};
use crate::describe::tree::{field, item, json, list, map, text, when};
use crate::describe::{Entry, Expr, Func, Item, Node, Resource};
use crate::keys::{self, Key};
use crate::model::Release;
use crate::values::StrategyType;

/// Where the metrics certificate is mounted.
const METRICS_CERT_DIR: &str = "/tmp/k8s-metrics-server/serving-certs";

/// `tpl .Values.KEY $`, for a key the table marks templated (as
/// upstream's defaults are: `{{ .Values.KEY }}` substitutions only, of keys
/// Helm reads as keys and that hold no secret; see
/// [`crate::describe::expr::tpl`]).
fn tpl(key: Key) -> Expr {
    assert!(key.is_templated(), "{} is not templated", key.path());
    Expr::Call(Func::Tpl, vec![Expr::value(key)])
}

/// The health probes' port.
const HEALTH_PORT: i64 = 8081;

/// The Deployment.
pub fn deployment(catalog: &Catalog, release: &Release) -> Resource {
    let mut object = header(
        "apps/v1",
        "Deployment",
        DEPLOYMENT,
        true,
        vec![Entry::Yaml(
            "annotations".into(),
            Expr::value(keys::DEPLOYMENT_ANNOTATIONS),
        )],
    );
    object.push(map(
        "spec",
        vec![
            field("replicas", Node::Int(Expr::value(keys::REPLICA_COUNT))),
            field(
                "revisionHistoryLimit",
                Node::Int(Expr::value(keys::REVISION_HISTORY_LIMIT)),
            ),
            map("selector", vec![match_labels()]),
            Entry::Note(
                "Recreate with 2+ replicas: old and new pods must never serve webhooks\nside by side. RollingUpdate only with one replica behind\nfeatureGates.singleReplicaRollingUpdate.",
            ),
            map("strategy", strategy()),
            map(
                "template",
                vec![
                    map("metadata", pod_metadata()),
                    map("spec", pod_spec(catalog, release)),
                ],
            ),
        ],
    ));
    resource("deployment.yaml", None, object)
}

fn strategy() -> Vec<Entry> {
    let rolling_param = |key: Key| json(key.leaf(), Expr::dig(key, keys::STRATEGY));
    vec![Entry::If(
        Expr::value_or_default(keys::STRATEGY_TYPE)
            .eq(Expr::str(StrategyType::RollingUpdate.as_str())),
        vec![
            text("type", "RollingUpdate"),
            map(
                "rollingUpdate",
                vec![
                    rolling_param(keys::MAX_SURGE),
                    rolling_param(keys::MAX_UNAVAILABLE),
                ],
            ),
        ],
        vec![
            text("type", "Recreate"),
            Entry::Note(
                "Explicit null: deletes the rollingUpdate block the API server defaulted\nwhile this Deployment used RollingUpdate (upgrades from 2.12 and older).",
            ),
            field("rollingUpdate", lit(Value::Null)),
        ],
    )]
}

/// The entries the pod template's `labels` or `annotations` map holds
/// whatever the values (the selector labels; the default container):
/// podLabels and podAnnotations are written beside them. The metadata
/// table (`crate::metadata`) must say the same; a test holds them together.
#[cfg(test)]
pub fn pod_template_literals(map: &str) -> Vec<(String, String)> {
    pod_metadata()
        .iter()
        .find_map(|entry| match entry {
            Entry::Field(key, Node::Map(entries)) if key == map => {
                Some(crate::describe::tree::literal_fields(entries))
            }
            _ => None,
        })
        .unwrap_or_default()
}

fn pod_metadata() -> Vec<Entry> {
    vec![
        map(
            "annotations",
            std::iter::once(Entry::Splice(Expr::value(keys::POD_ANNOTATIONS)))
                .chain(
                    crate::metadata::POD_ANNOTATIONS
                        .iter()
                        .map(|(key, value)| text(*key, value)),
                )
                .collect(),
        ),
        map(
            "labels",
            vec![
                Entry::Include("selectorLabels"),
                json("app.kubernetes.io/name", Expr::Include("name")),
                json("app.kubernetes.io/version", Expr::AppVersion),
                when(
                    Expr::value(keys::AAD_POD_IDENTITY_ENABLE),
                    vec![text("aadpodidbinding", super::identity::POD_BINDING_LABEL)],
                ),
                Entry::Splice(Expr::value(keys::POD_LABELS)),
            ],
        ),
    ]
}

fn pod_spec(catalog: &Catalog, release: &Release) -> Vec<Entry> {
    let optional = |field: &str, key: Key| Entry::Yaml(field.into(), Expr::value(key));
    vec![
        json("serviceAccountName", Expr::Include("serviceAccountName")),
        field("terminationGracePeriodSeconds", lit(json!(10))),
        optional("securityContext", keys::POD_SECURITY_CONTEXT),
        when(
            Expr::value(keys::PRIORITY_CLASS_NAME),
            vec![json(
                "priorityClassName",
                Expr::value(keys::PRIORITY_CLASS_NAME),
            )],
        ),
        optional("nodeSelector", keys::NODE_SELECTOR),
        optional("tolerations", keys::TOLERATIONS),
        optional("affinity", keys::AFFINITY),
        optional("imagePullSecrets", keys::IMAGE_PULL_SECRETS),
        list("containers", vec![item(container(catalog, release))]),
        list("volumes", volumes()),
    ]
}

fn container(catalog: &Catalog, release: &Release) -> Vec<Entry> {
    let default_image = Expr::printf(
        &format!("%s:%s{}", release.digest_suffix()),
        vec![
            Expr::value(keys::IMAGE_REPOSITORY_BASE),
            Expr::value(keys::IMAGE_TAG).or_default(Expr::AppVersion),
        ],
    );
    let mut entries = vec![
        text("name", "manager"),
        json(
            "image",
            tpl(keys::IMAGE_REPOSITORY).or_default(default_image),
        ),
        text("imagePullPolicy", "Always"),
        list("args", args(catalog)),
        list("env", env()),
        list("ports", ports()),
    ];
    for (field, path, timing) in [
        (
            "livenessProbe",
            "/healthz",
            [
                keys::LIVENESS_PERIOD_SECONDS,
                keys::LIVENESS_FAILURE_THRESHOLD,
                keys::LIVENESS_TIMEOUT_SECONDS,
            ],
        ),
        (
            "readinessProbe",
            "/readyz",
            [
                keys::READINESS_PERIOD_SECONDS,
                keys::READINESS_FAILURE_THRESHOLD,
                keys::READINESS_TIMEOUT_SECONDS,
            ],
        ),
        (
            "startupProbe",
            "/healthz",
            [
                keys::STARTUP_PERIOD_SECONDS,
                keys::STARTUP_FAILURE_THRESHOLD,
                keys::STARTUP_TIMEOUT_SECONDS,
            ],
        ),
    ] {
        entries.push(map(field, probe(path, timing)));
    }
    entries.extend([
        Entry::Yaml("resources".into(), Expr::value(keys::RESOURCES)),
        Entry::Yaml(
            "securityContext".into(),
            Expr::value(keys::SECURITY_CONTEXT),
        ),
        list("volumeMounts", mounts()),
    ]);
    entries
}

/// One argument built from a format and values.
fn arg(format: &str, args: Vec<Expr>) -> Item {
    Item::One(Node::Json(Expr::printf(format, args)))
}

/// A fixed argument.
fn flag(text: &str) -> Item {
    Item::One(lit(Value::from(text)))
}

fn args(catalog: &Catalog) -> Vec<Item> {
    let metrics_address = tpl(keys::METRICS_ADDRESS).or_default(Expr::printf(
        "0.0.0.0:%d",
        vec![Expr::value(keys::METRICS_PORT).int64()],
    ));
    let join = |separator: &str, key: Key| {
        Expr::Call(Func::Join, vec![Expr::str(separator), Expr::value(key)])
    };
    vec![
        Item::If(
            Expr::value(keys::METRICS_ENABLE),
            vec![
                arg("--metrics-addr=%s", vec![metrics_address]),
                arg(
                    "--secure-metrics=%v",
                    vec![Expr::value(keys::METRICS_SECURE)],
                ),
                arg(
                    "--profiling-metrics=%v",
                    vec![Expr::value(keys::METRICS_PROFILING)],
                ),
                Item::If(
                    Expr::value(keys::METRICS_SECURE),
                    vec![flag(&format!("--metrics-cert-dir={METRICS_CERT_DIR}"))],
                    vec![],
                ),
            ],
            vec![],
        ),
        flag(&format!("--health-addr=:{HEALTH_PORT}")),
        flag("--enable-leader-election"),
        flag("--v=2"),
        Item::If(
            Expr::all(vec![Expr::value(keys::INSTALL_CRDS), serves_webhooks()]),
            vec![
                arg("--crd-pattern=%s", vec![join(";", keys::CRD_PATTERN)]),
                // A controller without the flag would exit on it: crdLabels
                // then has no effect (and `check` says so).
                Item::If(
                    Expr::value(keys::CRD_LABELS),
                    if catalog.controller.defines(CRD_LABELS_FLAG) {
                        vec![arg("--crd-labels=%s", vec![join(",", keys::CRD_LABELS)])]
                    } else {
                        vec![]
                    },
                    vec![],
                ),
            ],
            vec![],
        ),
        arg(
            "--webhook-port=%d",
            vec![Expr::value(keys::WEBHOOK_PORT).int64()],
        ),
        Item::If(
            serves_webhooks(),
            vec![arg(
                "--webhook-cert-dir=%s",
                vec![Expr::value(keys::WEBHOOK_CERT_DIR)],
            )],
            vec![],
        ),
        Item::If(
            Expr::value(keys::USE_JSON_LOGGING),
            vec![flag("--json-logging")],
            vec![],
        ),
    ]
}

fn env() -> Vec<Item> {
    let mut items = vec![Item::If(
        Expr::value(keys::GO_MEM_LIMIT),
        vec![item(vec![
            text("name", "GOMEMLIMIT"),
            json("value", Expr::value(keys::GO_MEM_LIMIT)),
        ])],
        vec![],
    )];
    for (name, optional) in SECRET_ENV {
        let mut selector = json!({"key": name, "name": SETTINGS_SECRET});
        if optional {
            selector["optional"] = json!(true);
        }
        items.push(Item::One(lit(json!({
            "name": name,
            "valueFrom": {"secretKeyRef": selector}
        }))));
    }
    items.push(Item::One(lit(json!({
        "name": "POD_NAMESPACE",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}
    }))));
    items.push(Item::Splice(Expr::value(keys::EXTRA_ENV)));
    items
}

fn port(name: &str, number: Node) -> Item {
    item(vec![
        field("containerPort", number),
        text("name", name),
        text("protocol", "TCP"),
    ])
}

fn ports() -> Vec<Item> {
    vec![
        port("webhook-server", Node::Int(Expr::value(keys::WEBHOOK_PORT))),
        port("health-port", lit(json!(HEALTH_PORT))),
        Item::If(
            Expr::value(keys::METRICS_ENABLE),
            vec![port(
                "metrics-port",
                Node::Int(Expr::value(keys::METRICS_PORT)),
            )],
            vec![],
        ),
    ]
}

/// A probe of the health port at `path`, timed by its period, failure
/// threshold and timeout keys (the fields are named as the keys are).
fn probe(path: &str, timing: [Key; 3]) -> Vec<Entry> {
    let mut entries = vec![field(
        "httpGet",
        lit(json!({"path": path, "port": HEALTH_PORT})),
    )];
    entries.extend(timing.map(|key| field(key.leaf(), Node::Int(Expr::value(key)))));
    entries
}

fn mount(name: &str, path: Node) -> Item {
    item(vec![
        field("mountPath", path),
        text("name", name),
        field("readOnly", lit(json!(true))),
    ])
}

fn mounts() -> Vec<Item> {
    vec![
        mount("azure-identity", lit(json!("/var/run/secrets/tokens"))),
        Item::If(
            serves_webhooks(),
            vec![mount(
                "cert",
                Node::Json(Expr::value(keys::WEBHOOK_CERT_DIR)),
            )],
            vec![],
        ),
        Item::If(
            secure_metrics(),
            vec![mount("metrics-cert", lit(json!(METRICS_CERT_DIR)))],
            vec![],
        ),
    ]
}

fn secret_volume(name: &str, secret: &str) -> Item {
    Item::One(lit(json!({
        "name": name,
        "secret": {"defaultMode": 420, "secretName": secret}
    })))
}

fn volumes() -> Vec<Item> {
    vec![
        Item::If(
            serves_webhooks(),
            vec![secret_volume("cert", WEBHOOK_CERT_SECRET)],
            vec![],
        ),
        Item::If(
            secure_metrics(),
            vec![secret_volume("metrics-cert", METRICS_CERT_SECRET)],
            vec![],
        ),
        Item::One(lit(json!({
            "name": "azure-identity",
            "projected": {
                "defaultMode": 420,
                "sources": [{"serviceAccountToken": {
                    "audience": "api://AzureADTokenExchange",
                    "expirationSeconds": 3600,
                    "path": "azure-identity"
                }}]
            }
        }))),
    ]
}
