//! The Deployments: the controller-manager's, the one object every install
//! has, and with topology split the webhooks Deployment beside it. Both are
//! written by the same functions, told which [`Role`] they describe, so
//! what the two pods share (image, env, probes, mounts) is written once.
//!
//! A values key reaches a Deployment only through its row of
//! [`roles::BINDINGS`] ([`value`]), and a key written as itself is written
//! at the field its row names ([`from_row`], [`role_entry`]); field names
//! come from [`Field`]. What is still told apart by role here are the
//! roles' own facts, which no values key sets: labels, service account,
//! flags, the webhook pods' readiness check and their preStop sleep.

use serde_json::{Value, json};

use super::names::{
    METRICS_CERT_SECRET, SETTINGS_SECRET, WEBHOOK_CERT_SECRET, WEBHOOKS_SERVICE_ACCOUNT,
};
use super::settings::SECRET_ENV;
use super::{
    header, lit, match_labels, resource, role_header, secure_metrics, serves_webhooks,
    split_topology, webhooks_deployed, webhooks_match_labels, webhooks_selector_labels,
};
use crate::catalog::{CRD_LABELS_FLAG, Catalog};
use crate::describe::tree::{field, item, json, list, map, text, when};
use crate::describe::{self, Entry, Expr, Func, Item, Node, Resource, helpers};
use crate::keys::{self, Key};
use crate::model::Release;
use crate::roles::{self, Field, OPERATOR_MODE_VARIABLE, Role};
use crate::values::StrategyType;

/// The operator mode each role's pods run with topology split, written as
/// a literal env var (the settings Secret's one key cannot hold two).
/// The pod-template annotation that `split.webhooks.refreshToken` writes.
pub const REFRESH_ANNOTATION: &str = "asogen/webhooks-refresh-token";

/// How long a webhook pod keeps serving after it is told to stop, so the
/// endpoint's removal reaches every API server first (the image has no
/// shell: the sleep is the pod spec's own action, Kubernetes 1.30+).
const WEBHOOKS_PRE_STOP_SECONDS: i64 = 5;

/// Where the metrics certificate is mounted.
const METRICS_CERT_DIR: &str = "/tmp/k8s-metrics-server/serving-certs";

/// `tpl .Values.KEY $`, for a key the table marks templated (as
/// upstream's defaults are: `{{ .Values.KEY }}` substitutions only, of keys
/// Helm reads as keys and that hold no secret; see
/// [`crate::describe::expr::tpl`]).
fn tpl(role: Role, key: Key) -> Expr {
    assert!(key.is_templated(), "{} is not templated", key.path());
    Expr::Call(Func::Tpl, vec![value(role, key)])
}

/// `.Values.KEY` on `role`'s Deployment: every key reaches a role only as
/// [`roles::BINDINGS`] says (a key without its row panics here).
fn value(role: Role, key: Key) -> Expr {
    Expr::value(roles::bound(role, key))
}

/// The health probes' port.
const HEALTH_PORT: i64 = 8081;

/// `role`'s Deployment down to its spec: its kind and name, its labels
/// (the controller's as upstream's Deployment has them, the webhooks' with
/// their role), and the annotations of `deploymentAnnotations`.
fn deployment_header(role: Role) -> Vec<Entry> {
    let name = super::deployment_of(role);
    let annotations = vec![from_row(role, keys::DEPLOYMENT_ANNOTATIONS)];
    match role {
        Role::Controller => header("apps/v1", "Deployment", name, true, annotations),
        Role::Webhooks => role_header("apps/v1", "Deployment", name, annotations),
    }
}

/// The Deployment.
pub fn deployment(catalog: &Catalog, release: &Release) -> Resource {
    let role = Role::Controller;
    let mut object = deployment_header(role);
    object.push(map(
        "spec",
        vec![
            Entry::If(
                split_topology(),
                vec![Entry::If(
                    value(role, keys::SPLIT_CONTROLLER_PAUSED),
                    vec![field(Field::Replicas.name(), lit(json!(0)))],
                    vec![field(
                        Field::Replicas.name(),
                        Node::Int(value(role, keys::SPLIT_CONTROLLER_REPLICA_COUNT)),
                    )],
                )],
                vec![field(
                    Field::Replicas.name(),
                    Node::Int(value(role, keys::REPLICA_COUNT)),
                )],
            ),
            field(
                Field::RevisionHistoryLimit.name(),
                Node::Int(value(role, keys::REVISION_HISTORY_LIMIT)),
            ),
            map("selector", vec![match_labels()]),
            Entry::Note(
                "Recreate with 2+ replicas: old and new pods must never serve webhooks\nside by side. RollingUpdate only with one replica behind\nfeatureGates.singleReplicaRollingUpdate. With topology split, always\nRecreate: two controller versions never run at once.",
            ),
            Entry::If(
                split_topology(),
                vec![map("strategy", recreate())],
                vec![map("strategy", strategy())],
            ),
            map(
                "template",
                vec![
                    map("metadata", pod_metadata(Role::Controller)),
                    map("spec", pod_spec(catalog, release, Role::Controller)),
                ],
            ),
        ],
    ));
    resource("deployment.yaml", None, object)
}

/// Topology split's webhooks Deployment: rolled out pod by pod, a new pod
/// ready (its webhook port listening) before an old one goes.
pub fn webhooks_deployment(catalog: &Catalog, release: &Release) -> Resource {
    let role = Role::Webhooks;
    let mut object = deployment_header(role);
    object.push(map(
        "spec",
        vec![
            field(
                Field::Replicas.name(),
                Node::Int(value(role, keys::SPLIT_WEBHOOKS_REPLICA_COUNT)),
            ),
            field(
                Field::MinReadySeconds.name(),
                Node::Int(value(role, keys::SPLIT_WEBHOOKS_MIN_READY_SECONDS)),
            ),
            field(
                Field::RevisionHistoryLimit.name(),
                Node::Int(value(role, keys::REVISION_HISTORY_LIMIT)),
            ),
            map("selector", vec![webhooks_match_labels()]),
            Entry::Note(
                "Never below the replica count: a new pod is ready before an old one\ngoes, so the webhook Service always has an endpoint.",
            ),
            map(
                "strategy",
                vec![
                    text(Field::StrategyType.name(), "RollingUpdate"),
                    map(
                        Field::RollingUpdate.name(),
                        vec![
                            json(
                                Field::MaxSurge.name(),
                                value(role, keys::SPLIT_WEBHOOKS_MAX_SURGE),
                            ),
                            field(Field::MaxUnavailable.name(), lit(json!(0))),
                        ],
                    ),
                ],
            ),
            map(
                "template",
                vec![
                    map("metadata", pod_metadata(Role::Webhooks)),
                    map("spec", pod_spec(catalog, release, Role::Webhooks)),
                ],
            ),
        ],
    ));
    resource(
        "deployment-webhooks.yaml",
        Some(webhooks_deployed()),
        object,
    )
}

/// `type: Recreate` and the explicit null that clears a defaulted
/// `rollingUpdate` block.
fn recreate() -> Vec<Entry> {
    vec![
        text(Field::StrategyType.name(), "Recreate"),
        Entry::Note(
            "Explicit null: deletes the rollingUpdate block the API server defaulted\nwhile this Deployment used RollingUpdate (upgrades from 2.12 and older).",
        ),
        field(Field::RollingUpdate.name(), lit(Value::Null)),
    ]
}

fn strategy() -> Vec<Entry> {
    let role = Role::Controller;
    let rolling_param = |key: Key| {
        json(
            row_field(key).name(),
            describe::dig(
                roles::bound(role, key),
                roles::bound(role, keys::STRATEGY_ROLLING_UPDATE),
            ),
        )
    };
    vec![Entry::If(
        value(role, keys::STRATEGY_TYPE)
            .or_default(describe::default_of(keys::STRATEGY_TYPE))
            .eq(Expr::str(StrategyType::RollingUpdate.as_str())),
        vec![
            text(Field::StrategyType.name(), "RollingUpdate"),
            map(
                Field::RollingUpdate.name(),
                vec![
                    rolling_param(keys::STRATEGY_ROLLING_UPDATE_MAX_SURGE),
                    rolling_param(keys::STRATEGY_ROLLING_UPDATE_MAX_UNAVAILABLE),
                ],
            ),
        ],
        recreate(),
    )]
}

/// The entries the pod template's `labels` or `annotations` map holds
/// whatever the values (the selector labels; the default container):
/// podLabels and podAnnotations are written beside them. The metadata
/// table (`crate::metadata`) must say the same; a test holds them together.
#[cfg(test)]
pub fn pod_template_literals(map: &str) -> Vec<(String, String)> {
    pod_metadata(Role::Controller)
        .iter()
        .find_map(|entry| match entry {
            Entry::Field(key, Node::Map(entries)) if key == map => {
                Some(crate::describe::tree::literal_fields(entries))
            }
            _ => None,
        })
        .unwrap_or_default()
}

fn pod_metadata(role: Role) -> Vec<Entry> {
    let mut annotations: Vec<Entry> =
        std::iter::once(role_entry(role, keys::POD_ANNOTATIONS, |_, v| {
            Entry::Splice(v)
        }))
        .chain(
            crate::metadata::WRITTEN_POD_ANNOTATIONS
                .iter()
                .map(|(key, value)| text(*key, value)),
        )
        .collect();
    if roles::reaches(role, keys::SPLIT_WEBHOOKS_REFRESH_TOKEN) {
        // A new token changes the pod template: the webhook pods restart,
        // one by one, and serve the kinds whose CRDs exist now.
        annotations.push(when(
            value(role, keys::SPLIT_WEBHOOKS_REFRESH_TOKEN),
            vec![json(
                REFRESH_ANNOTATION,
                value(role, keys::SPLIT_WEBHOOKS_REFRESH_TOKEN),
            )],
        ));
    }
    let selector = match role {
        Role::Controller => vec![Entry::Include(helpers::selector_labels())],
        Role::Webhooks => webhooks_selector_labels(),
    };
    // The user's labels, less those that would give a pod an identity
    // when the role holds none.
    let pod_labels = role_entry(role, keys::POD_LABELS, |_, labels| {
        if !roles::less_identity(role, keys::POD_LABELS) {
            return Entry::Splice(labels);
        }
        let mut args = vec![labels.or_default(Expr::call(Func::Dict, vec![]))];
        args.extend(
            crate::metadata::IDENTITY_LABELS
                .iter()
                .map(|label| Expr::str(*label)),
        );
        Entry::Splice(Expr::call(Func::Omit, args))
    });
    let identity_binding = roles::reaches(role, keys::AAD_POD_IDENTITY_ENABLE).then(|| {
        when(
            value(role, keys::AAD_POD_IDENTITY_ENABLE),
            vec![text("aadpodidbinding", super::identity::POD_BINDING_LABEL)],
        )
    });
    vec![
        map(Field::PodAnnotations.name(), annotations),
        map(
            Field::PodLabels.name(),
            selector
                .into_iter()
                .chain([
                    json(
                        crate::metadata::BOTH_ROLES_LABEL,
                        Expr::Include(helpers::name()),
                    ),
                    json("app.kubernetes.io/version", Expr::AppVersion),
                ])
                .chain(identity_binding)
                .chain([pod_labels])
                .collect(),
        ),
    ]
}

fn pod_spec(catalog: &Catalog, release: &Release, role: Role) -> Vec<Entry> {
    let service_account = match role {
        Role::Controller => json(
            "serviceAccountName",
            Expr::Include(helpers::service_account_name()),
        ),
        Role::Webhooks => text("serviceAccountName", WEBHOOKS_SERVICE_ACCOUNT),
    };
    let mut entries = vec![
        service_account,
        field("terminationGracePeriodSeconds", lit(json!(10))),
        from_row(role, keys::POD_SECURITY_CONTEXT),
        role_entry(role, keys::PRIORITY_CLASS_NAME, |field, name| {
            when(name.clone(), vec![json(field.name(), name)])
        }),
        role_entry(role, keys::NODE_SELECTOR, at),
        role_entry(role, keys::TOLERATIONS, at),
        role_entry(role, keys::AFFINITY, at),
    ];
    // With topology split each role spreads over nodes unless its key says
    // otherwise, so one node's loss leaves a pod of each role (I4 of
    // docs/split-topology.md); the single topology's controller keeps
    // upstream's pod spec, which has no spread.
    let spread_field = Field::TopologySpreadConstraints;
    let key = roles::own_key(role, spread_field);
    let labels = crate::metadata::selector_labels(role);
    let spread = Entry::If(
        value(role, key),
        vec![at(spread_field, value(role, key))],
        vec![field(spread_field.name(), lit(hostname_spread(labels)))],
    );
    entries.extend([
        under_split(role, spread, vec![]),
        from_row(role, keys::IMAGE_PULL_SECRETS),
        list("containers", vec![item(container(catalog, release, role))]),
        list(Field::Volumes.name(), volumes(role)),
    ]);
    entries
}

/// The entry `build` writes at `top`'s field (its row's) from `top`'s
/// value, or for `role`'s pods with topology split from the role's own key
/// ([`roles::replacement`]) when that is set (`default`: an empty one takes
/// the top-level value). The controller's stays upstream's with topology
/// single.
fn role_entry(role: Role, top: Key, build: impl Fn(Field, Expr) -> Entry) -> Entry {
    let field = row_field(top);
    let Some(role_key) = roles::replacement(role, top) else {
        return build(field, value(role, top));
    };
    let chosen = value(role, role_key).or_default(value(role, top));
    under_split(
        role,
        build(field, chosen),
        vec![build(field, value(role, top))],
    )
}

/// `split`, an entry of the role's own keys, as the role's Deployment has
/// it with topology split; a role whose Deployment every topology has (the
/// controller) has `single` (upstream's) in the others.
fn under_split(role: Role, split: Entry, single: Vec<Entry>) -> Entry {
    if role.in_every_topology() {
        Entry::If(split_topology(), vec![split], single)
    } else {
        split
    }
}

/// `field` of the Deployment, written from `expr` (left out when it is
/// empty).
fn at(field: Field, expr: Expr) -> Entry {
    Entry::Yaml(field.name().into(), expr)
}

/// `key`'s value for `role` (or, with topology split, its role's own key
/// that replaces it), written as itself at the field its row in
/// [`roles::BINDINGS`] names: the table says where the value lands.
fn from_row(role: Role, key: Key) -> Entry {
    role_entry(role, key, at)
}

/// The one field `key`'s row writes it at as itself (panics for a row
/// that names none: such a key is written by code of its own).
fn row_field(key: Key) -> Field {
    roles::field_of(key).unwrap_or_else(|| {
        panic!(
            "{}: its row in roles::BINDINGS names no one field it is written at",
            key.path()
        )
    })
}

/// At most one pod more per node than on any other, for the pods that
/// carry `labels`. Counted per revision (pod-template-hash), so a surge pod
/// never waits for an old one; tainted nodes, where no pod may go, do not
/// count.
fn hostname_spread(labels: &[(&str, &str)]) -> Value {
    let labels: serde_json::Map<_, _> = labels
        .iter()
        .map(|(key, value)| ((*key).to_string(), Value::from(*value)))
        .collect();
    json!([{
        "labelSelector": {"matchLabels": labels},
        "matchLabelKeys": ["pod-template-hash"],
        "maxSkew": 1,
        "nodeTaintsPolicy": "Honor",
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
    }])
}

fn container(catalog: &Catalog, release: &Release, role: Role) -> Vec<Entry> {
    let default_image = Expr::printf(
        &format!("%s:%s{}", release.digest_suffix()),
        vec![
            value(role, keys::IMAGE_REPOSITORY_BASE),
            value(role, keys::IMAGE_TAG).or_default(Expr::AppVersion),
        ],
    );
    let mut entries = vec![
        text("name", roles::MANAGER_CONTAINER),
        json(
            Field::Image.name(),
            tpl(role, keys::IMAGE_REPOSITORY).or_default(default_image),
        ),
        text("imagePullPolicy", "Always"),
        list(Field::ManagerArgs.name(), args(catalog, role)),
        list(Field::ManagerEnv.name(), env(role)),
        list(Field::ManagerPorts.name(), ports(role)),
    ];
    for (probe_field, path, timing) in [
        (
            "livenessProbe",
            "/healthz",
            [
                keys::PROBES_LIVENESS_PERIOD_SECONDS,
                keys::PROBES_LIVENESS_FAILURE_THRESHOLD,
                keys::PROBES_LIVENESS_TIMEOUT_SECONDS,
            ],
        ),
        (
            "readinessProbe",
            "/readyz",
            [
                keys::PROBES_READINESS_PERIOD_SECONDS,
                keys::PROBES_READINESS_FAILURE_THRESHOLD,
                keys::PROBES_READINESS_TIMEOUT_SECONDS,
            ],
        ),
        (
            "startupProbe",
            "/healthz",
            [
                keys::PROBES_STARTUP_PERIOD_SECONDS,
                keys::PROBES_STARTUP_FAILURE_THRESHOLD,
                keys::PROBES_STARTUP_TIMEOUT_SECONDS,
            ],
        ),
    ] {
        let readiness = probe_field == "readinessProbe";
        let check = if readiness && role == Role::Webhooks {
            // Ready once the webhook server listens (the health server,
            // which answers first, says nothing about it).
            field("tcpSocket", lit(json!({"port": "webhook-server"})))
        } else {
            field("httpGet", lit(json!({"path": path, "port": HEALTH_PORT})))
        };
        entries.push(map(probe_field, probe(role, check, timing)));
    }
    entries.extend([
        role_entry(role, keys::RESOURCES, at),
        from_row(role, keys::SECURITY_CONTEXT),
        list(Field::ManagerVolumeMounts.name(), mounts(role)),
    ]);
    if role == Role::Webhooks {
        entries.push(field(
            "lifecycle",
            lit(json!({"preStop": {"sleep": {"seconds": WEBHOOKS_PRE_STOP_SECONDS}}})),
        ));
    }
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

fn args(catalog: &Catalog, role: Role) -> Vec<Item> {
    let metrics_address = tpl(role, keys::METRICS_ADDRESS).or_default(Expr::printf(
        "0.0.0.0:%d",
        vec![value(role, keys::METRICS_PORT).int64()],
    ));
    let mut items = vec![
        Item::If(
            value(role, keys::METRICS_ENABLE),
            vec![
                arg("--metrics-addr=%s", vec![metrics_address]),
                arg(
                    "--secure-metrics=%v",
                    vec![value(role, keys::METRICS_SECURE)],
                ),
                arg(
                    "--profiling-metrics=%v",
                    vec![value(role, keys::METRICS_PROFILING)],
                ),
                Item::If(
                    value(role, keys::METRICS_SECURE),
                    vec![flag(&format!("--metrics-cert-dir={METRICS_CERT_DIR}"))],
                    vec![],
                ),
            ],
            vec![],
        ),
        flag(&format!("--health-addr=:{HEALTH_PORT}")),
    ];
    // The webhook pods apply no CRDs (a rolling Deployment would write new
    // storage versions while old pods still serve) and take no part in the
    // controllers' leader election.
    let role_flags = match role {
        Role::Controller => vec![
            flag("--enable-leader-election"),
            flag("--v=2"),
            crd_flags(catalog),
        ],
        Role::Webhooks => vec![flag("--crd-management=none"), flag("--v=2")],
    };
    items.extend(role_flags);
    items.extend([
        arg(
            "--webhook-port=%d",
            vec![value(role, keys::WEBHOOK_PORT).int64()],
        ),
        Item::If(
            serves_webhooks(),
            vec![arg(
                "--webhook-cert-dir=%s",
                vec![value(role, keys::WEBHOOK_CERT_DIR)],
            )],
            vec![],
        ),
        Item::If(
            value(role, keys::USE_JSON_LOGGING),
            vec![flag("--json-logging")],
            vec![],
        ),
    ]);
    items
}

/// `--crd-pattern` (and `--crd-labels` where the controller defines it),
/// when the controller installs CRDs.
fn crd_flags(catalog: &Catalog) -> Item {
    let role = Role::Controller;
    let join = |separator: &str, key: Key| {
        Expr::Call(Func::Join, vec![Expr::str(separator), value(role, key)])
    };
    Item::If(
        Expr::all(vec![value(role, keys::INSTALL_CRDS), serves_webhooks()]),
        vec![
            arg("--crd-pattern=%s", vec![join(";", keys::CRD_PATTERN)]),
            // A controller without the flag would exit on it: crdLabels
            // then has no effect (and `check` says so).
            Item::If(
                value(role, keys::CRD_LABELS),
                if catalog.controller.defines(CRD_LABELS_FLAG) {
                    vec![arg("--crd-labels=%s", vec![join(",", keys::CRD_LABELS)])]
                } else {
                    vec![]
                },
                vec![],
            ),
        ],
        vec![],
    )
}

fn env(role: Role) -> Vec<Item> {
    let mut items = vec![Item::If(
        value(role, keys::GO_MEM_LIMIT),
        vec![item(vec![
            text("name", "GOMEMLIMIT"),
            json("value", value(role, keys::GO_MEM_LIMIT)),
        ])],
        vec![],
    )];
    for (name, optional) in SECRET_ENV {
        let mut selector = json!({"key": name, "name": SETTINGS_SECRET});
        if optional {
            selector["optional"] = json!(true);
        }
        let from_secret = Item::One(lit(json!({
            "name": name,
            "valueFrom": {"secretKeyRef": selector}
        })));
        let mode = |role: Role| {
            Item::One(lit(
                json!({"name": name, "value": role.split_mode().as_str()}),
            ))
        };
        items.push(match (name, role) {
            (OPERATOR_MODE_VARIABLE, Role::Webhooks) => mode(role),
            (OPERATOR_MODE_VARIABLE, Role::Controller) => {
                Item::If(split_topology(), vec![mode(role)], vec![from_secret])
            }
            // Least privilege: a webhooks-mode pod reads none of the
            // settings. ASO 2.20.0 builds no Azure credential without
            // AZURE_SUBSCRIPTION_ID (cmd/controller/app/setup.go,
            // getDefaultAzureTokenCredential), defaults the other
            // settings (internal/config/vars.go, ReadFromEnvironment), and
            // exits when a webhooks-mode pod sees target namespaces.
            (_, Role::Webhooks) => continue,
            _ => from_secret,
        });
    }
    items.push(Item::One(lit(json!({
        "name": "POD_NAMESPACE",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}
    }))));
    // The user's variables, on the roles their row names (they carry
    // Azure credentials: the controller's alone).
    if roles::reaches(role, keys::EXTRA_ENV) {
        items.push(Item::Splice(value(role, keys::EXTRA_ENV)));
    }
    items
}

fn port(name: &str, number: Node) -> Item {
    item(vec![
        field("containerPort", number),
        text("name", name),
        text("protocol", "TCP"),
    ])
}

fn ports(role: Role) -> Vec<Item> {
    vec![
        port("webhook-server", Node::Int(value(role, keys::WEBHOOK_PORT))),
        port("health-port", lit(json!(HEALTH_PORT))),
        Item::If(
            value(role, keys::METRICS_ENABLE),
            vec![port(
                "metrics-port",
                Node::Int(value(role, keys::METRICS_PORT)),
            )],
            vec![],
        ),
    ]
}

/// A probe by `check`, timed by its period, failure threshold and
/// timeout keys (the fields are named as the keys are).
fn probe(role: Role, check: Entry, timing: [Key; 3]) -> Vec<Entry> {
    let mut entries = vec![check];
    entries.extend(timing.map(|key| field(key.leaf(), Node::Int(value(role, key)))));
    entries
}

fn mount(name: &str, path: Node) -> Item {
    item(vec![
        field("mountPath", path),
        text("name", name),
        field("readOnly", lit(json!(true))),
    ])
}

fn mounts(role: Role) -> Vec<Item> {
    let mut mounts = Vec::new();
    if role.talks_to_azure() {
        mounts.push(mount(
            "azure-identity",
            lit(json!("/var/run/secrets/tokens")),
        ));
    }
    mounts.extend([
        Item::If(
            serves_webhooks(),
            vec![mount(
                "cert",
                Node::Json(value(role, keys::WEBHOOK_CERT_DIR)),
            )],
            vec![],
        ),
        Item::If(
            secure_metrics(),
            vec![mount("metrics-cert", lit(json!(METRICS_CERT_DIR)))],
            vec![],
        ),
    ]);
    mounts
}

fn secret_volume(name: &str, secret: &str) -> Item {
    Item::One(lit(json!({
        "name": name,
        "secret": {"defaultMode": 420, "secretName": secret}
    })))
}

fn volumes(role: Role) -> Vec<Item> {
    let mut volumes = vec![
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
    ];
    if role.talks_to_azure() {
        volumes.push(Item::One(lit(json!({
            "name": "azure-identity",
            "projected": {
                "defaultMode": 420,
                "sources": [{"serviceAccountToken": {
                    "audience": "api://AzureADTokenExchange",
                    "expirationSeconds": 3600,
                    "path": "azure-identity"
                }}]
            }
        }))));
    }
    volumes
}
