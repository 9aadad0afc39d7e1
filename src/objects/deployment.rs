//! The controller-manager Deployment: the one object every install has.

use serde_json::{Value, json};

use super::names::{DEPLOYMENT, METRICS_CERT_SECRET, SETTINGS_SECRET, WEBHOOK_CERT_SECRET};
use super::settings::SECRET_ENV;
use super::{header, lit, match_labels, resource, secure_metrics, serves_webhooks};
use crate::catalog::Catalog;
use crate::describe::tree::{field, item, json, list, map, text, when};
use crate::describe::{Entry, Expr, Func, Item, Node, Resource};
use crate::model::Release;

/// Where the metrics certificate is mounted.
const METRICS_CERT_DIR: &str = "/tmp/k8s-metrics-server/serving-certs";

/// The values the chart evaluates as templates (`tpl`), as upstream's
/// defaults do: `{{ .Values.KEY }}` substitutions only, of keys Helm reads
/// as keys and that hold no secret (see [`crate::describe::expr::tpl`]).
pub const TEMPLATED_VALUES: [&str; 2] = ["image.repository", "metrics.address"];

/// `tpl .Values.PATH $`.
fn tpl(path: &'static str) -> Expr {
    debug_assert!(TEMPLATED_VALUES.contains(&path));
    Expr::Call(Func::Tpl, vec![Expr::value(path)])
}

/// The flag `crdLabels` maps to; controllers after v2.20.0 define it.
pub const CRD_LABELS_FLAG: &str = "crd-labels";

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
            Expr::value("deploymentAnnotations"),
        )],
    );
    object.push(map(
        "spec",
        vec![
            field("replicas", Node::Int(Expr::value("replicaCount"))),
            field(
                "revisionHistoryLimit",
                Node::Int(Expr::value("revisionHistoryLimit")),
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
    let rolling_param = |key: &str, fallback: i64| {
        json(
            key,
            Expr::Call(
                Func::Dig,
                vec![
                    Expr::str("rollingUpdate"),
                    Expr::str(key),
                    Expr::int(fallback),
                    Expr::value("strategy"),
                ],
            ),
        )
    };
    vec![Entry::If(
        Expr::value("strategy.type")
            .or_default(Expr::str("Recreate"))
            .eq(Expr::str("RollingUpdate")),
        vec![
            text("type", "RollingUpdate"),
            map(
                "rollingUpdate",
                vec![
                    rolling_param("maxSurge", 1),
                    rolling_param("maxUnavailable", 0),
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
/// podLabels and podAnnotations are written beside them.
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
            vec![
                Entry::Splice(Expr::value("podAnnotations")),
                text("kubectl.kubernetes.io/default-container", "manager"),
            ],
        ),
        map(
            "labels",
            vec![
                Entry::Include("selectorLabels"),
                json("app.kubernetes.io/name", Expr::Include("name")),
                json("app.kubernetes.io/version", Expr::AppVersion),
                when(
                    Expr::value("aadPodIdentity.enable"),
                    vec![text("aadpodidbinding", super::identity::POD_BINDING_LABEL)],
                ),
                Entry::Splice(Expr::value("podLabels")),
            ],
        ),
    ]
}

fn pod_spec(catalog: &Catalog, release: &Release) -> Vec<Entry> {
    let optional = |key: &str, path: &'static str| Entry::Yaml(key.into(), Expr::value(path));
    vec![
        json("serviceAccountName", Expr::Include("serviceAccountName")),
        field("terminationGracePeriodSeconds", lit(json!(10))),
        optional("securityContext", "podSecurityContext"),
        when(
            Expr::value("priorityClassName"),
            vec![json("priorityClassName", Expr::value("priorityClassName"))],
        ),
        optional("nodeSelector", "nodeSelector"),
        optional("tolerations", "tolerations"),
        optional("affinity", "affinity"),
        optional("imagePullSecrets", "image.pullSecrets"),
        list("containers", vec![item(container(catalog, release))]),
        list("volumes", volumes()),
    ]
}

fn container(catalog: &Catalog, release: &Release) -> Vec<Entry> {
    let default_image = Expr::printf(
        &format!("%s:%s{}", release.digest_suffix()),
        vec![
            Expr::value("image.repositoryBase"),
            Expr::value("image.tag").or_default(Expr::AppVersion),
        ],
    );
    let mut entries = vec![
        text("name", "manager"),
        json("image", tpl("image.repository").or_default(default_image)),
        text("imagePullPolicy", "Always"),
        list("args", args(catalog)),
        list("env", env()),
        list("ports", ports()),
    ];
    for (key, path, timing) in [
        ("livenessProbe", "/healthz", "liveness"),
        ("readinessProbe", "/readyz", "readiness"),
        ("startupProbe", "/healthz", "startup"),
    ] {
        entries.push(map(key, probe(path, timing)));
    }
    entries.extend([
        Entry::Yaml("resources".into(), Expr::value("resources")),
        Entry::Yaml("securityContext".into(), Expr::value("securityContext")),
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
    let metrics_address = tpl("metrics.address").or_default(Expr::printf(
        "0.0.0.0:%d",
        vec![Expr::value("metrics.port").int64()],
    ));
    let join = |separator: &str, path: &'static str| {
        Expr::Call(Func::Join, vec![Expr::str(separator), Expr::value(path)])
    };
    vec![
        Item::If(
            Expr::value("metrics.enable"),
            vec![
                arg("--metrics-addr=%s", vec![metrics_address]),
                arg("--secure-metrics=%v", vec![Expr::value("metrics.secure")]),
                arg(
                    "--profiling-metrics=%v",
                    vec![Expr::value("metrics.profiling")],
                ),
                Item::If(
                    Expr::value("metrics.secure"),
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
            Expr::all(vec![Expr::value("installCRDs"), serves_webhooks()]),
            vec![
                arg("--crd-pattern=%s", vec![join(";", "crdPattern")]),
                // A controller without the flag would exit on it: crdLabels
                // then has no effect (and `check` says so).
                Item::If(
                    Expr::value("crdLabels"),
                    if catalog.controller.defines(CRD_LABELS_FLAG) {
                        vec![arg("--crd-labels=%s", vec![join(",", "crdLabels")])]
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
            vec![Expr::value("webhook.port").int64()],
        ),
        Item::If(
            serves_webhooks(),
            vec![arg(
                "--webhook-cert-dir=%s",
                vec![Expr::value("webhook.certDir")],
            )],
            vec![],
        ),
        Item::If(
            Expr::value("useJSONLogging"),
            vec![flag("--json-logging")],
            vec![],
        ),
    ]
}

fn env() -> Vec<Item> {
    let mut items = vec![Item::If(
        Expr::value("go.memLimit"),
        vec![item(vec![
            text("name", "GOMEMLIMIT"),
            json("value", Expr::value("go.memLimit")),
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
    items.push(Item::Splice(Expr::value("extraEnv")));
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
        port("webhook-server", Node::Int(Expr::value("webhook.port"))),
        port("health-port", lit(json!(HEALTH_PORT))),
        Item::If(
            Expr::value("metrics.enable"),
            vec![port("metrics-port", Node::Int(Expr::value("metrics.port")))],
            vec![],
        ),
    ]
}

fn probe(path: &str, timing: &str) -> Vec<Entry> {
    let setting = |key: &str| {
        field(
            key,
            Node::Int(Expr::value(format!("probes.{timing}.{key}"))),
        )
    };
    vec![
        field("httpGet", lit(json!({"path": path, "port": HEALTH_PORT}))),
        setting("periodSeconds"),
        setting("failureThreshold"),
        setting("timeoutSeconds"),
    ]
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
            vec![mount("cert", Node::Json(Expr::value("webhook.certDir")))],
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
