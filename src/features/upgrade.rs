//! `asogen upgrade-check`: predicts, per apply path, whether applying the
//! Deployment asogen renders over a live one is refused by the API server,
//! and prints the one request that clears the way.
//!
//! The failure it predicts: a Deployment created with RollingUpdate carries
//! the API-server-defaulted `spec.strategy.rollingUpdate`; an update to
//! `type: Recreate` that leaves the block in place is refused with
//! ``spec.strategy.rollingUpdate: Forbidden: may not be specified when
//! strategy `type` is 'Recreate'`` (the API server's words). Whether the
//! block is left in place depends on the apply path and on who owns the
//! field in `metadata.managedFields`.

use serde::Serialize;
use serde_json::{Value, json};

use crate::diagnostics::{Diagnostic, Severity};
use crate::output::printable;
use crate::read::Source;
use crate::roles::OPERATOR_MODE_VARIABLE;
use crate::roles::{Field, MANAGER_CONTAINER};
use crate::values::Topology;
use helm_values::pointer::to_key_path;

/// The field managers the common tools write with.
pub mod managers {
    /// `kubectl apply` (client-side).
    pub const KUBECTL_CLIENT_SIDE: &str = "kubectl-client-side-apply";
    /// Helm 3, and Helm 4 in client-side mode (`Update` operations), and
    /// Helm 4 server-side apply (`Apply` operations).
    pub const HELM: &str = "helm";
    /// Flux kustomize-controller (server-side apply).
    pub const FLUX_KUSTOMIZE: &str = "kustomize-controller";
    /// Argo CD's application controller (client-side by default, server-side
    /// apply with `ServerSideApply=true`).
    pub const ARGOCD: &str = "argocd-controller";
    /// `kubectl apply --server-side` (as the README installs).
    pub const KUBECTL_SERVER_SIDE: &str = "kubectl";
}

/// One entry of `metadata.managedFields`, reduced to what matters here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldManager {
    /// The manager name (`kubectl-client-side-apply`, `helm`, `kustomize-controller`).
    pub manager: String,
    /// `Apply` (server-side apply) or `Update` (every other write).
    pub operation: String,
    /// Whether it owns `spec.strategy.rollingUpdate` or a field inside it.
    pub owns_rolling_update: bool,
    /// Whether it owns part of `spec.template` or `spec.strategy`: what
    /// the tool that installs and upgrades the Deployment writes.
    pub owns_spec: bool,
}

/// The live Deployment, as far as the upgrade is concerned.
#[derive(Debug, Clone, Serialize)]
pub struct LiveDeployment {
    /// metadata.name.
    pub name: String,
    /// metadata.namespace.
    pub namespace: String,
    /// spec.replicas.
    pub replicas: Option<i64>,
    /// spec.strategy.type.
    pub strategy_type: String,
    /// spec.strategy.rollingUpdate, when present.
    pub rolling_update: Option<Value>,
    /// spec.selector, when present (immutable once created).
    pub selector: Option<Value>,
    /// Every main-resource field manager (status and scale writers are left out).
    pub managers: Vec<FieldManager>,
    /// The topology the Deployment is of ([`topology_of`]).
    pub topology: Topology,
    /// The manager container's image.
    pub image: Option<String>,
    /// Where its metadata.name is in the file read (a JSON pointer).
    #[serde(skip)]
    pub name_at: String,
}

impl LiveDeployment {
    /// The managers that own the rollingUpdate block.
    pub fn rolling_update_owners(&self) -> Vec<&FieldManager> {
        self.managers
            .iter()
            .filter(|m| m.owns_rolling_update)
            .collect()
    }

    /// Whether the live object holds a rollingUpdate block a Recreate update must remove.
    pub fn has_rolling_update(&self) -> bool {
        self.rolling_update.as_ref().is_some_and(|v| !v.is_null())
    }
}

/// What asogen renders for the Deployment's strategy.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// spec.replicas.
    pub replicas: i64,
    /// spec.strategy as rendered (with `rollingUpdate: null` for Recreate).
    pub strategy: Value,
    /// spec.selector as rendered.
    pub selector: Value,
    /// The topology the values say (the bridge renders the single
    /// topology's controller, so [`topology_of`] cannot tell it).
    pub topology: Topology,
    /// The manager container's image as rendered.
    pub image: Option<String>,
}

/// The image of `deployment`'s manager container.
fn manager_image(deployment: &Value) -> Option<String> {
    deployment
        .pointer("/spec/template/spec/containers")?
        .as_array()?
        .iter()
        .find(|container| container["name"] == MANAGER_CONTAINER)?["image"]
        .as_str()
        .map(str::to_string)
}

/// The tag of an image reference (None without one).
fn tag_of(image: &str) -> Option<&str> {
    let reference = image.split('@').next().unwrap_or(image);
    let (repository, tag) = reference.rsplit_once(':')?;
    (!tag.contains('/') && !repository.is_empty()).then_some(tag)
}

impl Target {
    /// The rendered Deployment that upgrades `live`: the one of the same
    /// name (a Deployment is upgraded by name; under topology split two are
    /// rendered), of the values' `topology`. An error at the live file's
    /// metadata.name when the values render none of that name.
    pub fn for_live(
        live: &LiveDeployment,
        source: &Source,
        rendered: &[Value],
        topology: Topology,
    ) -> Result<Target, Box<Diagnostic>> {
        let name_of = |d: &Value| {
            d["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        match rendered.iter().find(|d| name_of(d) == live.name) {
            Some(deployment) => Ok(Target::from_deployment(deployment, topology)),
            None => {
                let names: Vec<String> = rendered.iter().map(name_of).collect();
                Err(live_error(
                    source,
                    &live.name_at,
                    format!(
                        "these values render no Deployment named {} (topology {}: {}), so it has nothing to be upgraded to",
                        live.name,
                        topology.as_str(),
                        names.join(", ")
                    ),
                    "upgrade-check compares a live Deployment with the rendered Deployment of the same name: export that one (`kubectl get deployment NAME -n NAMESPACE -o yaml --show-managed-fields`); a Deployment the values no longer render is deleted, not upgraded (`asogen upgrade-plan` prints a migration's steps)",
                ))
            }
        }
    }

    /// Reads a rendered Deployment, of the values' `topology`.
    fn from_deployment(deployment: &Value, topology: Topology) -> Target {
        Target {
            replicas: Field::Replicas
                .read(deployment)
                .as_i64()
                .unwrap_or_default(),
            strategy: deployment["spec"]["strategy"].clone(),
            selector: deployment["spec"]["selector"].clone(),
            topology,
            image: manager_image(deployment),
        }
    }

    fn is_recreate(&self) -> bool {
        self.strategy["type"] == "Recreate"
    }
}

/// The ways a Deployment update reaches the API server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ApplyPath {
    /// `kubectl apply` without `--server-side` (also Argo CD's default sync).
    ClientSide,
    /// Helm 3 `helm upgrade`, and Helm 4 upgrading a release that was last
    /// applied client-side (Helm 4's `--server-side=auto` keeps the method).
    Helm3,
    /// Helm 4 `helm upgrade` of a release installed by Helm 4 (server-side
    /// apply, field manager `helm`).
    Helm4,
    /// Server-side apply with a named field manager (Flux kustomize-controller,
    /// Argo CD with ServerSideApply, `kubectl apply --server-side`).
    ServerSide {
        /// The field manager the applier uses.
        manager: String,
    },
}

/// What `upgrade-check --via` names on the command line: an applier, as
/// `upgrade-plan --via` names it, or one apply method less its field
/// manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApplyMethod {
    /// Helm: Helm 3, and Helm 4 (server-side, or client-side on a release
    /// last applied so).
    Helm,
    /// Flux: server-side apply as `kustomize-controller`.
    Flux,
    /// Argo CD: its default sync (kubectl's client-side apply), and with
    /// ServerSideApply=true server-side apply as `argocd-controller`.
    Argo,
    /// kubectl as the README and `upgrade-plan --via kubectl` apply:
    /// `kubectl apply --server-side` (field manager `kubectl`).
    Kubectl,
    /// `kubectl apply` without --server-side (and Argo CD's default sync).
    ClientSide,
    /// Helm 3 (and Helm 4 upgrading a release last applied client-side).
    Helm3,
    /// Helm 4 server-side apply.
    Helm4,
    /// Server-side apply by a field manager (Flux, Argo CD ServerSideApply, kubectl --server-side).
    ServerSide,
}

impl ApplyMethod {
    /// The paths it names; a server-side method as `managers` say (the
    /// `--field-manager` flags), else as the applier does.
    pub fn paths(self, live: &LiveDeployment, managers: &[String]) -> Vec<ApplyPath> {
        let server_side = |default: &str| -> Vec<ApplyPath> {
            let names: Vec<String> = if managers.is_empty() {
                vec![default.to_string()]
            } else {
                managers.to_vec()
            };
            names
                .into_iter()
                .map(|manager| ApplyPath::ServerSide { manager })
                .collect()
        };
        match self {
            ApplyMethod::Helm => vec![ApplyPath::Helm3, ApplyPath::Helm4],
            ApplyMethod::Flux => server_side(managers::FLUX_KUSTOMIZE),
            ApplyMethod::Argo => {
                let mut paths = vec![ApplyPath::ClientSide];
                paths.extend(server_side(managers::ARGOCD));
                paths
            }
            ApplyMethod::Kubectl => server_side(managers::KUBECTL_SERVER_SIDE),
            ApplyMethod::ClientSide => vec![ApplyPath::ClientSide],
            ApplyMethod::Helm3 => vec![ApplyPath::Helm3],
            ApplyMethod::Helm4 => vec![ApplyPath::Helm4],
            ApplyMethod::ServerSide => default_paths(live, managers)
                .into_iter()
                .filter(|path| path.method() == ApplyMethod::ServerSide)
                .collect(),
        }
    }
}

/// The paths `vias` name (each once, in order), with `managers` for the
/// server-side ones.
pub fn paths_via(
    live: &LiveDeployment,
    vias: &[ApplyMethod],
    managers: &[String],
) -> Vec<ApplyPath> {
    let mut paths: Vec<ApplyPath> = Vec::new();
    for via in vias {
        for path in via.paths(live, managers) {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

impl ApplyPath {
    /// The method, without the field manager.
    pub fn method(&self) -> ApplyMethod {
        match self {
            ApplyPath::ClientSide => ApplyMethod::ClientSide,
            ApplyPath::Helm3 => ApplyMethod::Helm3,
            ApplyPath::Helm4 => ApplyMethod::Helm4,
            ApplyPath::ServerSide { .. } => ApplyMethod::ServerSide,
        }
    }

    /// How people name this path.
    pub fn label(&self) -> String {
        match self {
            ApplyPath::ClientSide => "kubectl apply (client-side; Argo CD default sync)".into(),
            ApplyPath::Helm3 => "helm upgrade, Helm 3 (or Helm 4 on a client-side release)".into(),
            ApplyPath::Helm4 => {
                "helm upgrade, Helm 4 server-side (releases Helm 4 installed, or --server-side=true)"
                    .into()
            }
            ApplyPath::ServerSide { manager } => {
                format!("server-side apply as field manager {manager}")
            }
        }
    }

    fn ssa_manager(&self) -> Option<&str> {
        match self {
            ApplyPath::Helm4 => Some(managers::HELM),
            ApplyPath::ServerSide { manager } => Some(manager),
            ApplyPath::ClientSide | ApplyPath::Helm3 => None,
        }
    }
}

/// The predicted outcome on one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The update is accepted.
    Safe,
    /// The API server refuses the update.
    Refused,
}

/// The prediction for one apply path, with its reason.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    /// The apply path.
    pub path: ApplyPath,
    /// How people name it.
    pub label: String,
    /// Accepted or refused.
    pub verdict: Verdict,
    /// Why, from the live object's managedFields and the rendered strategy.
    pub why: String,
}

/// The full answer of `upgrade-check`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The live Deployment as read.
    pub live: LiveDeployment,
    /// What asogen renders.
    pub target: Target,
    /// One prediction per apply path checked.
    pub predictions: Vec<Prediction>,
    /// A ready-to-run command that removes the stale block, when any path is refused.
    pub remedy: Option<String>,
    /// The JSON patch inside the remedy.
    pub remedy_patch: Option<Value>,
    /// Topology changes this upgrade makes (replicas, strategy type).
    pub topology_changes: Vec<String>,
    /// The version change this upgrade makes (`v2.11.0 -> v2.20.0`), by
    /// the manager images' tags; None when they are the same or unknown.
    pub version_change: Option<String>,
    /// Set when the live Deployment is of another topology than the one
    /// rendered: a migration, whose steps `upgrade-plan --from` prints.
    pub migration: Option<Migration>,
    /// Where the checked paths come from.
    pub paths_from: PathsFrom,
}

/// Where `upgrade-check` took the apply paths it checks from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathsFrom {
    /// `--via` (or `--field-manager`) named them.
    Asked,
    /// The live object's managedFields show them in use.
    ManagedFields,
    /// The live object names no applier: every common path.
    Common,
}

/// The applier (as `upgrade-plan --via` names it) every path in `paths`
/// belongs to, when they share one.
fn applier_of(paths: &[ApplyPath]) -> Option<&'static str> {
    let mut appliers = paths.iter().map(|path| match path {
        ApplyPath::Helm3 | ApplyPath::Helm4 => "helm",
        ApplyPath::ServerSide { manager } if manager == managers::FLUX_KUSTOMIZE => "flux",
        ApplyPath::ServerSide { manager } if manager == managers::ARGOCD => "argo",
        ApplyPath::ServerSide { manager } if manager == managers::KUBECTL_SERVER_SIDE => "kubectl",
        ApplyPath::ClientSide => "kubectl",
        ApplyPath::ServerSide { .. } => "",
    });
    let first = appliers.next()?;
    (!first.is_empty() && appliers.all(|applier| applier == first)).then_some(first)
}

/// A change of topology (`single` to `split` or back), or one in
/// progress (the values say `bridge`, a Helm migration's middle step).
#[derive(Debug, Clone, Serialize)]
pub struct Migration {
    /// The live topology.
    pub from: Topology,
    /// The rendered one.
    pub to: Topology,
    /// Whether the values are the bridge: the migration must be finished
    /// before the version changes.
    pub in_progress: bool,
    /// What to run instead of one apply.
    pub plan: String,
}

impl Migration {
    /// The migration from `from` to `to` on `paths`, if the topologies
    /// differ or the values are the bridge.
    fn of(from: Topology, to: Topology, paths: &[ApplyPath]) -> Option<Migration> {
        if to == Topology::Bridge {
            return Some(Migration {
                from,
                to,
                in_progress: true,
                plan: "asogen upgrade-plan --via helm --from bridge (with values saying topology: split, or single)".into(),
            });
        }
        let via = match applier_of(paths) {
            Some("helm") => {
                "helm (with these values: two helm upgrade --wait, through topology bridge)"
                    .to_string()
            }
            Some(applier) => format!("{applier} (with these values)"),
            None => "PATH (with these values; PATH is helm, flux, argo or kubectl: with helm, two helm upgrade --wait through topology bridge)".to_string(),
        };
        (from != to).then(|| Migration {
            from,
            to,
            in_progress: false,
            plan: format!("asogen upgrade-plan --from {} --via {via}", from.as_str()),
        })
    }
}

impl Report {
    /// Whether any checked path is refused.
    pub fn any_refused(&self) -> bool {
        self.predictions
            .iter()
            .any(|p| p.verdict == Verdict::Refused)
    }
}

fn live_error(source: &Source, pointer: &str, message: String, help: &str) -> Box<Diagnostic> {
    let (line, column, span_len) = match source.document.spans.get(pointer) {
        Some(span) => {
            let position = span.key_or_value();
            (Some(position.line), Some(position.column), span.value_len)
        }
        None => (Some(1), Some(1), 1),
    };
    Box::new(Diagnostic {
        file: source.name.clone(),
        line,
        column,
        key: to_key_path(pointer),
        rule: None,
        keyword: Some("live".into()),
        message,
        help: Some(help.to_string()),
        severity: Severity::Error,
        span_len: span_len.max(1),
    })
}

const EXPORT_HELP: &str = "export the live object with `kubectl get deployment NAME -n NAMESPACE -o yaml --show-managed-fields`";

/// Reads the live Deployment from a parsed file: a Deployment, or a `List`
/// holding exactly one (what `kubectl get deployment -o yaml` prints without a name).
pub fn read_live(source: &Source) -> Result<LiveDeployment, Box<Diagnostic>> {
    let root = &source.document.value;
    let (object, base) = if root["kind"] == "List" {
        let deployments: Vec<(usize, &Value)> = root["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, item)| item["kind"] == "Deployment")
                    .collect()
            })
            .unwrap_or_default();
        match deployments.as_slice() {
            [(index, item)] => (*item, format!("/items/{index}")),
            _ => {
                return Err(live_error(
                    source,
                    "/items",
                    format!(
                        "the List holds {} Deployments; upgrade-check reads exactly one",
                        deployments.len()
                    ),
                    EXPORT_HELP,
                ));
            }
        }
    } else {
        (root, String::new())
    };
    let at = |path: &str| format!("{base}{path}");
    let kind = object["kind"].as_str().unwrap_or("");
    if kind != "Deployment" {
        let shown = if kind.is_empty() {
            "no kind".to_string()
        } else {
            format!("a {kind}")
        };
        return Err(live_error(
            source,
            &at("/kind"),
            format!("this is {shown}, not a Deployment"),
            EXPORT_HELP,
        ));
    }
    if object["apiVersion"] != "apps/v1" {
        return Err(live_error(
            source,
            &at("/apiVersion"),
            format!(
                "apiVersion is {}, expected apps/v1",
                object["apiVersion"].as_str().unwrap_or("missing")
            ),
            EXPORT_HELP,
        ));
    }
    let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
    let name = text("/metadata/name").ok_or_else(|| {
        live_error(
            source,
            &at("/metadata"),
            "the Deployment has no metadata.name".into(),
            EXPORT_HELP,
        )
    })?;
    let namespace = text("/metadata/namespace").unwrap_or("default");
    let Some(entries) = object.pointer("/metadata/managedFields") else {
        return Err(live_error(
            source,
            &at("/metadata"),
            "the Deployment has no metadata.managedFields, so who owns spec.strategy.rollingUpdate cannot be told".into(),
            "kubectl hides managedFields unless asked: add --show-managed-fields to `kubectl get deployment NAME -n NAMESPACE -o yaml`",
        ));
    };
    let Some(entries) = entries.as_array() else {
        return Err(live_error(
            source,
            &at("/metadata/managedFields"),
            "metadata.managedFields must be a list of field managers".into(),
            EXPORT_HELP,
        ));
    };
    let mut managers = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let pointer = at(&format!("/metadata/managedFields/{index}"));
        let (Some(manager), Some(operation)) =
            (entry["manager"].as_str(), entry["operation"].as_str())
        else {
            return Err(live_error(
                source,
                &pointer,
                "a managedFields entry needs `manager` and `operation`".into(),
                EXPORT_HELP,
            ));
        };
        // Status and scale writers never touch spec.strategy.
        if entry["subresource"].as_str().is_some_and(|s| !s.is_empty()) {
            continue;
        }
        let owns_rolling_update = entry
            .pointer("/fieldsV1/f:spec/f:strategy/f:rollingUpdate")
            .is_some();
        let owns_spec = ["f:template", "f:strategy"]
            .iter()
            .any(|field| entry["fieldsV1"]["f:spec"].get(field).is_some());
        managers.push(FieldManager {
            manager: manager.to_string(),
            operation: operation.to_string(),
            owns_rolling_update,
            owns_spec,
        });
    }
    let Some(strategy) = object.pointer("/spec/strategy").filter(|s| s.is_object()) else {
        return Err(live_error(
            source,
            &at("/spec"),
            "the Deployment has no spec.strategy; the API server always sets one".into(),
            "pass the object as the API server returns it, not a manifest from disk",
        ));
    };
    let type_at = at(&Field::StrategyType.pointer().expect("a Deployment field"));
    // left out: the API server's default, for a hand-written object; a
    // null is not what the API server returns
    let strategy_type = match strategy.get("type") {
        None => Field::StrategyType
            .api_default()
            .and_then(|default| default.as_str().map(str::to_string))
            .unwrap_or_default(),
        Some(Value::String(kind)) => kind.clone(),
        Some(other) => {
            return Err(live_error(
                source,
                &type_at,
                format!(
                    "spec.strategy.type is {other}, not a string; Kubernetes knows Recreate and RollingUpdate"
                ),
                EXPORT_HELP,
            ));
        }
    };
    if strategy_type != "Recreate" && strategy_type != "RollingUpdate" {
        return Err(live_error(
            source,
            &type_at,
            format!(
                "spec.strategy.type is {strategy_type}; Kubernetes knows Recreate and RollingUpdate"
            ),
            EXPORT_HELP,
        ));
    }
    Ok(LiveDeployment {
        name: name.to_string(),
        namespace: namespace.to_string(),
        replicas: object.pointer("/spec/replicas").and_then(Value::as_i64),
        strategy_type,
        rolling_update: strategy.get("rollingUpdate").cloned(),
        selector: object.pointer("/spec/selector").cloned(),
        managers,
        topology: topology_of(object),
        image: manager_image(object),
        name_at: at("/metadata/name"),
    })
}

/// The topology a controller Deployment is of, read off its manager
/// container: only topology split writes `AZURE_OPERATOR_MODE` as a
/// literal value (one mode per Deployment); the single topology reads it
/// from the settings Secret, as upstream does. The bridge's controller is
/// the single topology's, so it reads as `single`.
pub fn topology_of(deployment: &Value) -> Topology {
    let literal_mode = deployment
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|container| container["name"] == MANAGER_CONTAINER)
        .filter_map(|container| container["env"].as_array())
        .flatten()
        .any(|env| env["name"] == OPERATOR_MODE_VARIABLE && env["value"].is_string());
    if literal_mode {
        Topology::Split
    } else {
        Topology::Single
    }
}

/// The apply paths worth checking for this live object: the four common
/// ones, with a server-side row for every `Apply` manager the object shows
/// (Flux, Argo CD, kubectl --server-side) and for each one asked for.
pub fn default_paths(live: &LiveDeployment, extra_managers: &[String]) -> Vec<ApplyPath> {
    let mut paths = vec![ApplyPath::ClientSide, ApplyPath::Helm3, ApplyPath::Helm4];
    let mut ssa: Vec<String> = live
        .managers
        .iter()
        .filter(|m| m.operation == "Apply" && m.manager != managers::HELM)
        .map(|m| m.manager.clone())
        .collect();
    ssa.extend(extra_managers.iter().cloned());
    if ssa.is_empty() {
        ssa.push(managers::FLUX_KUSTOMIZE.into());
    }
    ssa.dedup();
    for manager in ssa {
        if !paths
            .iter()
            .any(|p| p.ssa_manager() == Some(manager.as_str()))
        {
            paths.push(ApplyPath::ServerSide { manager });
        }
    }
    paths
}

/// The apply paths in use, read from the managers that own the pod template
/// or the strategy: `helm` as Update is Helm 3 (or Helm 4 client-side), as
/// Apply Helm 4 server-side; `kubectl-client-side-apply` and Argo CD's
/// `argocd-controller` as Update are kubectl's client-side apply; any other
/// Apply manager is a server-side applier (Flux, Argo CD with
/// ServerSideApply, `kubectl apply --server-side`). Other Update managers
/// (`kubectl edit`/`patch`, controllers, `before-first-apply`) apply
/// nothing, so they name no path. Empty when no manager tells.
pub fn paths_in_use(live: &LiveDeployment) -> Vec<ApplyPath> {
    let mut paths: Vec<ApplyPath> = Vec::new();
    for m in live.managers.iter().filter(|m| m.owns_spec) {
        let path = match (m.operation.as_str(), m.manager.as_str()) {
            ("Update", managers::HELM) => ApplyPath::Helm3,
            ("Apply", managers::HELM) => ApplyPath::Helm4,
            ("Update", managers::KUBECTL_CLIENT_SIDE | managers::ARGOCD) => ApplyPath::ClientSide,
            ("Apply", manager) => ApplyPath::ServerSide {
                manager: manager.to_string(),
            },
            _ => continue,
        };
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

fn owner_list(owners: &[&FieldManager]) -> String {
    owners
        .iter()
        .map(|m| format!("{} ({})", m.manager, m.operation))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Predicts one path.
pub fn predict(live: &LiveDeployment, target: &Target, path: &ApplyPath) -> Prediction {
    let (verdict, why) = outcome(live, target, path);
    Prediction {
        path: path.clone(),
        label: path.label(),
        verdict,
        why,
    }
}

fn outcome(live: &LiveDeployment, target: &Target, path: &ApplyPath) -> (Verdict, String) {
    // Every path sends the whole selector, and the API server refuses any
    // change to it: no apply path gets past this.
    if let Some(selector) = &live.selector
        && selector != &target.selector
    {
        return (
            Verdict::Refused,
            format!(
                "spec.selector differs (live {}, rendered {}) and a Deployment's selector is immutable: `spec.selector: Invalid value: ...: field is immutable`; delete the Deployment with `kubectl delete deployment {} -n {} --cascade=orphan` (its pods keep running) and apply again",
                serde_json::to_string(selector).unwrap_or_default(),
                serde_json::to_string(&target.selector).unwrap_or_default(),
                live.name,
                live.namespace
            ),
        );
    }
    if !target.is_recreate() {
        return (
            Verdict::Safe,
            "the rendered strategy is RollingUpdate, which allows a rollingUpdate block".into(),
        );
    }
    if !live.has_rolling_update() {
        return (
            Verdict::Safe,
            "the live Deployment has no rollingUpdate block to remove".into(),
        );
    }
    let owners = live.rolling_update_owners();
    let Some(manager) = path.ssa_manager() else {
        return (
            Verdict::Safe,
            "the three-way strategic merge patch carries the rendered `rollingUpdate: null` and the strategy's `$retainKeys`, which delete the live block".into(),
        );
    };
    let others: Vec<&FieldManager> = owners
        .iter()
        .copied()
        .filter(|m| !(m.manager == manager && m.operation == "Apply"))
        .collect();
    let sole_owner = others.is_empty() && owners.len() > others.len();
    if sole_owner {
        return (
            Verdict::Safe,
            format!(
                "{manager} applied the rollingUpdate block before and is its only owner, so server-side apply removes it once {manager} stops applying it"
            ),
        );
    }
    let owned = if others.is_empty() {
        "no field manager owns spec.strategy.rollingUpdate (the API server defaulted it)"
            .to_string()
    } else {
        format!(
            "spec.strategy.rollingUpdate is owned by {}, not by {manager}'s server-side apply",
            owner_list(&others)
        )
    };
    (
        Verdict::Refused,
        format!(
            "{owned}; server-side apply leaves fields it does not own, so the block stays beside type Recreate and the API server answers: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"
        ),
    )
}

/// The JSON patch that removes the stale block and sets the type in one
/// request (the API server validates the patched object, so the pair is accepted together).
pub fn remedy_patch() -> Value {
    let pointer = |field: Field| field.pointer().expect("a Deployment field");
    json!([
        {"op": "remove", "path": pointer(Field::RollingUpdate)},
        {"op": "replace", "path": pointer(Field::StrategyType), "value": "Recreate"}
    ])
}

/// The ready-to-run kubectl command for the remedy.
pub fn remedy_command(live: &LiveDeployment) -> String {
    format!(
        "kubectl --namespace {} patch deployment {} --type=json -p '{}'",
        shell_word(&live.namespace),
        shell_word(&live.name),
        remedy_patch()
    )
}

/// The command that deletes the Deployment and leaves its pods running,
/// for a selector that cannot change in place.
pub fn orphan_command(live: &LiveDeployment) -> String {
    format!(
        "kubectl --namespace {} delete deployment {} --cascade=orphan",
        shell_word(&live.namespace),
        shell_word(&live.name)
    )
}

/// Quotes a word for a POSIX shell when it needs it (names are DNS labels,
/// so this only matters for hand-edited input).
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn topology_changes(live: &LiveDeployment, target: &Target) -> Vec<String> {
    let mut changes = Vec::new();
    if let Some(replicas) = live.replicas.filter(|r| *r != target.replicas) {
        changes.push(format!("replicas {replicas} -> {}", target.replicas));
    }
    let target_type = target.strategy["type"].as_str().unwrap_or("");
    if live.strategy_type != target_type {
        changes.push(format!("strategy {} -> {target_type}", live.strategy_type));
    }
    changes
}

/// Builds the report for the given paths.
pub fn check(live: LiveDeployment, target: Target, paths: &[ApplyPath]) -> Report {
    let predictions: Vec<Prediction> = paths.iter().map(|p| predict(&live, &target, p)).collect();
    let refused = predictions.iter().any(|p| p.verdict == Verdict::Refused);
    // a new selector is refused before anything else, and no patch helps
    let selector_changed = live
        .selector
        .as_ref()
        .is_some_and(|selector| selector != &target.selector);
    let topology_changes = topology_changes(&live, &target);
    let migration = Migration::of(live.topology, target.topology, paths);
    let version_change = match (
        live.image.as_deref().and_then(tag_of),
        target.image.as_deref().and_then(tag_of),
    ) {
        (Some(from), Some(to)) if from != to => Some(format!("{from} -> {to}")),
        _ => None,
    };
    Report {
        version_change,
        migration,
        remedy: refused.then(|| {
            if selector_changed {
                orphan_command(&live)
            } else {
                remedy_command(&live)
            }
        }),
        remedy_patch: (refused && !selector_changed).then(remedy_patch),
        live,
        target,
        predictions,
        topology_changes,
        paths_from: PathsFrom::Common,
    }
}

/// The report for people. Everything read from the live file is passed
/// through [`printable`].
pub fn format_human(report: &Report) -> String {
    let live = &report.live;
    let mut out = String::new();
    let block = match &live.rolling_update {
        Some(v) if !v.is_null() => format!(" with rollingUpdate {}", printable(&v.to_string())),
        _ => String::new(),
    };
    out.push_str(&format!(
        "live:     deployment {} in {}: {} replica(s), {}{block}\n",
        printable(&live.name),
        printable(&live.namespace),
        live.replicas.map_or("?".into(), |r| r.to_string()),
        live.strategy_type,
    ));
    let owners = live.rolling_update_owners();
    if live.has_rolling_update() {
        out.push_str(&format!(
            "          spec.strategy.rollingUpdate owned by: {}\n",
            if owners.is_empty() {
                "no field manager (defaulted by the API server)".into()
            } else {
                printable(&owner_list(&owners))
            }
        ));
    }
    out.push_str(&format!(
        "rendered: {} replica(s), strategy {}\n",
        report.target.replicas, report.target.strategy
    ));
    let checked = match report.paths_from {
        PathsFrom::Asked => "the apply paths --via names".to_string(),
        PathsFrom::ManagedFields => {
            let in_use: Vec<&FieldManager> =
                live.managers.iter().filter(|m| m.owns_spec).collect();
            format!(
                "the apply paths the live object's managedFields show in use ({}); --via checks others",
                printable(&owner_list(&in_use))
            )
        }
        PathsFrom::Common => {
            "every common apply path (the live object's managedFields name no applier); --via helm|flux|argo|kubectl checks yours".to_string()
        }
    };
    out.push_str(&format!("checked:  {checked}\n"));
    if let Some(version) = &report.version_change {
        out.push_str(&format!("version:  {}\n", printable(version)));
    }
    if !report.topology_changes.is_empty() {
        out.push_str(&format!(
            "topology: {} (a topology change, which the release's UPGRADE-NOTES.md flags: `asogen diff OLD NEW` writes it; docs/topologies.md says what each shape does)\n",
            report.topology_changes.join(", ")
        ));
    }
    if let Some(migration) = report.migration.as_ref().filter(|m| m.in_progress) {
        out.push_str(&format!(
            "migration: in progress: topology bridge is the middle step of a Helm migration, not a topology to upgrade in (the controller and the webhooks would roll at once behind one Service); finish it first with `{}`, then upgrade the version\n",
            migration.plan
        ));
    } else if let Some(migration) = &report.migration {
        out.push_str(&format!(
            "migration: topology {} -> {}: applied at once, the webhook Service would move to pods that are not ready yet (no webhook endpoint for a while); run the steps of `{}` instead\n",
            migration.from.as_str(),
            migration.to.as_str(),
            migration.plan
        ));
        if report.version_change.is_some() {
            out.push_str(
                "          and the version changes too: move first, at the live version (its image.tag in the values), then upgrade the version with `asogen upgrade-plan`\n",
            );
        }
    }
    out.push('\n');
    for p in &report.predictions {
        let verdict = match p.verdict {
            Verdict::Safe => "ok     ",
            Verdict::Refused => "REFUSED",
        };
        out.push_str(&format!(
            "{verdict}  {}\n         {}\n",
            printable(&p.label),
            printable(&p.why)
        ));
    }
    if let (Some(remedy), None) = (&report.remedy, &report.remedy_patch) {
        out.push_str(&format!(
            "\nremedy: the selector cannot change in place; delete the Deployment (its pods keep running), then apply as usual:\n  {}\n",
            printable(remedy)
        ));
    } else if let Some(remedy) = &report.remedy {
        out.push_str(&format!(
            "\nremedy: before the upgrade, remove the stale block and set the type in one request:\n  {}\n\
             then apply as usual.\n",
            printable(remedy)
        ));
    }
    out
}
