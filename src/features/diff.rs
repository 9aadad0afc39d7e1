//! `asogen diff OLD NEW`: classifies every change between two rendered
//! artifact sets and writes the "Upgrade notes" for the release notes.
//!
//! A side is a `generated/` folder (every install manifest plus the chart's
//! values interface), a chart folder (its values interface: keys, defaults,
//! required keys), or one install manifest (a YAML stream of objects).
//! Topology changes (replicas, update strategy, leader election) are
//! breaking: they are what went out as a one-line note in ASO 2.13.

use crate::keys::Key;
use crate::roles::Field;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::read::bounded::{self, Budget};
use crate::yaml;
use helm_values::pointer::escape_segment;
use output_folder::folder::{Folder, Kind};

/// How much a change matters to someone upgrading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Changes how the operator runs: replicas, update strategy, leader election.
    Topology,
    /// Can break an install or a values file: removed keys, narrowed RBAC, changed ports.
    Breaking,
    /// Everything else.
    Other,
}

impl Class {
    /// Whether the change needs a line in the upgrade notes.
    pub fn is_breaking(self) -> bool {
        self != Class::Other
    }
}

/// One classified change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Topology, breaking or other.
    pub class: Class,
    /// Where: `manifest ha: Deployment ns/name` or `values`.
    pub subject: String,
    /// What changed, naming old and new values.
    pub title: String,
    /// Why it matters (empty for other changes).
    pub why: String,
    /// What to do before or while upgrading (empty for other changes).
    pub migration: String,
}

/// Why a side could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The path is missing or unreadable.
    #[error("{path}: {message}")]
    Io {
        /// The path as given.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The content is not what a side must be.
    #[error("{path}: {message}")]
    Invalid {
        /// The path as given.
        path: String,
        /// What went wrong, with line and column when YAML is broken.
        message: String,
    },
}

/// One side of the comparison.
#[derive(Debug, Default)]
pub struct Side {
    /// Install manifests by name (the profile, or the file stem), each as objects by key.
    pub manifests: BTreeMap<String, BTreeMap<ObjectKey, Value>>,
    /// The chart's values.yaml, when the side has a chart.
    pub values: Option<Value>,
    /// The chart's values.schema.json, when present.
    pub schema: Option<Value>,
}

/// (kind, namespace, name).
pub type ObjectKey = (String, String, String);

const CHART_IN_GENERATED: &str = "charts/azure-service-operator";

fn io_error(path: &Path, message: impl std::fmt::Display) -> DiffError {
    DiffError::Io {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

fn invalid(path: &Path, message: impl std::fmt::Display) -> DiffError {
    DiffError::Invalid {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// Reads one install manifest inside a folder side (no link followed),
/// within the side's budget.
fn read_manifest_in(
    folder: &Folder,
    relative: &Path,
    budget: &mut Budget,
) -> Result<BTreeMap<ObjectKey, Value>, DiffError> {
    let path = folder.path().join(relative);
    let text = budget
        .read_inside(folder, relative)
        .map_err(|err| io_error(&path, err))?;
    parse_manifest(&path.display().to_string(), &text)
}

/// Reads one install manifest into objects by key, within the side's budget.
fn read_manifest(
    path: &Path,
    budget: &mut Budget,
) -> Result<BTreeMap<ObjectKey, Value>, DiffError> {
    let text = budget.read_text(path).map_err(|err| io_error(path, err))?;
    parse_manifest(&path.display().to_string(), &text)
}

/// Parses install manifest text into objects by key; `name` is for errors.
pub fn parse_manifest(name: &str, text: &str) -> Result<BTreeMap<ObjectKey, Value>, DiffError> {
    let path = Path::new(name);
    let documents = yaml::parse_stream(text).map_err(|err| invalid(path, err))?;
    let mut objects = BTreeMap::new();
    for (index, object) in documents.into_iter().enumerate() {
        let field = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let key = (
            field("/kind"),
            field("/metadata/namespace"),
            field("/metadata/name"),
        );
        if key.0.is_empty() || key.2.is_empty() {
            return Err(invalid(
                path,
                format!(
                    "document {} is not a Kubernetes object (no kind or metadata.name)",
                    index + 1
                ),
            ));
        }
        if objects.insert(key.clone(), object).is_some() {
            return Err(invalid(
                path,
                format!("{} {}/{} appears twice", key.0, key.1, key.2),
            ));
        }
    }
    Ok(objects)
}

/// A chart's values.yaml text as a document (an empty file is `{}`).
fn parse_values(path: &Path, text: &str) -> Result<Value, DiffError> {
    Ok(
        match yaml::parse_value(text).map_err(|err| invalid(path, err))? {
            Value::Null => Value::Object(Default::default()),
            value => value,
        },
    )
}

fn read_chart(
    folder: &Folder,
    dir: &Path,
    side: &mut Side,
    budget: &mut Budget,
) -> Result<(), DiffError> {
    let values = dir.join("values.yaml");
    let values_path = folder.path().join(&values);
    let text = budget
        .read_inside(folder, &values)
        .map_err(|err| io_error(&values_path, err))?;
    side.values = Some(parse_values(&values_path, &text)?);
    let schema = dir.join("values.schema.json");
    if has(folder, &schema) {
        side.schema = Some(read_json(folder, &schema, budget)?);
    }
    Ok(())
}

fn read_json(folder: &Folder, relative: &Path, budget: &mut Budget) -> Result<Value, DiffError> {
    let path = folder.path().join(relative);
    let text = budget
        .read_inside(folder, relative)
        .map_err(|err| io_error(&path, err))?;
    serde_json::from_str(&text).map_err(|err| invalid(&path, err))
}

/// Whether anything is at `relative` in `folder` (a link included: reading
/// it then says what it is).
fn has(folder: &Folder, relative: &Path) -> bool {
    folder.kind(relative).is_ok_and(|kind| kind.is_some())
}

/// Reads a side: a generated/ folder, a chart folder, or a manifest file.
/// Everything it reads is bounded (see [`bounded`]); inside a folder no
/// symbolic link is followed (see [`output_folder::folder`]).
pub fn read_side(path: &Path) -> Result<Side, DiffError> {
    let metadata = std::fs::metadata(path).map_err(|err| io_error(path, err))?;
    let mut side = Side::default();
    let budget = &mut Budget::default();
    if !metadata.is_dir() {
        let name = path
            .file_stem()
            .map_or("manifest".into(), |s| s.to_string_lossy().into_owned());
        side.manifests.insert(name, read_manifest(path, budget)?);
        return Ok(side);
    }
    let folder = Folder::open(path, true).map_err(|err| io_error(path, err))?;
    if has(&folder, Path::new("Chart.yaml")) {
        read_chart(&folder, Path::new(""), &mut side, budget)?;
        return Ok(side);
    }
    if has(&folder, Path::new("SHA256SUMS")) {
        return read_release(&folder, budget);
    }
    let is_folder = |relative: &str| {
        folder
            .kind(Path::new(relative))
            .is_ok_and(|kind| kind == Some(Kind::Folder))
    };
    let (manifests, chart) = (is_folder("manifests"), is_folder(CHART_IN_GENERATED));
    if !manifests && !chart {
        return Err(invalid(
            path,
            "is neither a generated/ folder (manifests/, charts/), a release folder (SHA256SUMS), a chart folder (Chart.yaml) nor a manifest file",
        ));
    }
    if manifests {
        let dir = path.join("manifests");
        let files = output_folder::listing::yaml_files(&dir).map_err(|err| io_error(&dir, err))?;
        for file in files {
            let relative = Path::new("manifests").join(file.file_name().unwrap_or_default());
            side.manifests.insert(
                output_folder::listing::stem(&file),
                read_manifest_in(&folder, &relative, budget)?,
            );
        }
    }
    if chart {
        read_chart(&folder, Path::new(CHART_IN_GENERATED), &mut side, budget)?;
    }
    Ok(side)
}

/// Reads a folder `asogen release` wrote: the files its SHA256SUMS lists
/// (install-PROFILE.yaml manifests, values.schema.json, and values.yaml
/// from inside the chart archive). In a chart repository folder the
/// archives of other versions are not this release's and are not read.
fn read_release(folder: &Folder, budget: &mut Budget) -> Result<Side, DiffError> {
    let sums_path = folder.path().join("SHA256SUMS");
    let sums = budget
        .read_inside(folder, Path::new("SHA256SUMS"))
        .map_err(|err| io_error(&sums_path, err))?;
    let mut names: Vec<&str> = sums
        .lines()
        .filter_map(|line| line.split_once("  ").map(|(_, name)| name))
        .filter(|name| !name.contains(['/', '\\']) && !name.starts_with('.'))
        .collect();
    names.sort();
    let mut side = Side::default();
    for file in names {
        let relative = Path::new(file);
        if let Some(profile) = file
            .strip_prefix("install-")
            .and_then(|p| p.strip_suffix(".yaml"))
        {
            side.manifests.insert(
                profile.to_string(),
                read_manifest_in(folder, relative, budget)?,
            );
        } else if file.ends_with(".tgz") {
            side.values = Some(values_from_archive(folder, relative)?);
        } else if file == "values.schema.json" {
            side.schema = Some(read_json(folder, relative, budget)?);
        }
    }
    Ok(side)
}

fn values_from_archive(folder: &Folder, relative: &Path) -> Result<Value, DiffError> {
    let path = folder.path().join(relative);
    let file = folder.open_file(relative).map_err(|err| {
        io_error(
            &path,
            format!(
                "{err}; asogen follows no symbolic link and reads only regular files inside a folder it compares"
            ),
        )
    })?;
    match bounded::archive_file(file, "values.yaml").map_err(|err| invalid(&path, err))? {
        Some(text) => parse_values(&path.join("values.yaml"), &text),
        None => Err(invalid(&path, "the chart archive has no values.yaml")),
    }
}

const SSA_MIGRATION: &str = "On a Deployment that used RollingUpdate, the API server defaulted `spec.strategy.rollingUpdate`; an apply that leaves it refuses the upgrade with `spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy type is 'Recreate'`. The new manifests send `rollingUpdate: null`, which kubectl client-side apply and Helm 3 turn into a deletion. With server-side apply (Flux, Helm 4, Argo CD ServerSideApply) run `asogen upgrade-check --live <(kubectl get deployment NAME -n NAMESPACE -o yaml --show-managed-fields)` first; when it predicts a refusal, run the one `kubectl patch --type=json` it prints (remove `/spec/strategy/rollingUpdate`, set `/spec/strategy/type` to Recreate), then apply.";

/// Whether the manager runs with leader election, its flags read as Go's
/// flag package reads them (`-enable-leader-election`, `=true`, ...).
fn leader_election(deployment: &Value) -> bool {
    let containers = deployment.pointer("/spec/template/spec/containers");
    containers
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            let args = c["args"].as_array().into_iter().flatten();
            go_semantics::flag::parsed(args.filter_map(Value::as_str)).any(|arg| {
                go_semantics::flag::turns_on("enable-leader-election", arg)
                    || go_semantics::flag::turns_on("leader-elect", arg)
            })
        })
}

fn container_ports(object: &Value) -> BTreeSet<String> {
    object
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
        .map(|p| {
            format!(
                "{}/{}",
                p["containerPort"],
                p["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn strategy_type(deployment: &Value) -> String {
    // No strategy means the API server's default.
    Field::StrategyType
        .read(deployment)
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn replicas(deployment: &Value) -> i64 {
    // No replicas means the API server's default.
    Field::Replicas
        .read(deployment)
        .as_i64()
        .unwrap_or_default()
}

fn deployment_changes(subject: &str, old: &Value, new: &Value, out: &mut Vec<Change>) {
    let change = |class, title: String, why: &str, migration: &str| Change {
        class,
        subject: subject.to_string(),
        title,
        why: why.to_string(),
        migration: migration.to_string(),
    };
    let (before, after) = (replicas(old), replicas(new));
    if before != after {
        out.push(change(
            Class::Topology,
            format!("replicas {before} -> {after}"),
            if after > 1 {
                "Several operator pods run at once: one holds the leader-election lease and runs the control loop, all serve webhooks."
            } else {
                "One operator pod: webhooks are down while it restarts."
            },
            "Check that the cluster has room for the extra pods and that any PodDisruptionBudget and resource quotas in the namespace allow them.",
        ));
    }
    let (before, after) = (strategy_type(old), strategy_type(new));
    if before != after {
        let (why, migration) = if after == "Recreate" {
            (
                "With 2+ replicas a rolling update would run old and new pods side by side; the new pod can write a storage version the old pod's webhooks cannot convert. Recreate stops every old pod first (a short webhook outage during upgrades).",
                SSA_MIGRATION,
            )
        } else {
            (
                "RollingUpdate keeps webhooks up through changes that keep ASO's version and is only safe with one replica; a version upgrade of that shape does not finish (the new pod waits for the Lease the old pod holds), so upgrade versions with Recreate or topology: split.",
                "Keep replicaCount at 1 and set featureGates.singleReplicaRollingUpdate: true.",
            )
        };
        out.push(change(
            Class::Topology,
            format!("update strategy {before} -> {after}"),
            why,
            migration,
        ));
    }
    let (before, after) = (leader_election(old), leader_election(new));
    if before != after {
        out.push(change(
            Class::Topology,
            format!(
                "leader election {}",
                if after { "enabled" } else { "disabled" }
            ),
            "Only the lease holder runs the control loop; the others wait and serve webhooks.",
            "The ServiceAccount needs the leader-election Role (in the manifests); nothing to set.",
        ));
    }
    let (before, after) = (container_ports(old), container_ports(new));
    if before != after {
        out.push(change(
            Class::Breaking,
            format!("container ports {} -> {}", join(&before), join(&after)),
            "Services, NetworkPolicies and scrapers that name the old ports stop reaching the pod.",
            "Update anything outside this install that targets the pod's ports.",
        ));
    }
}

fn join(set: &BTreeSet<String>) -> String {
    if set.is_empty() {
        "none".into()
    } else {
        set.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

fn service_ports(object: &Value) -> BTreeSet<String> {
    object
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| format!("{}->{}", p["port"], p["targetPort"]))
        .collect()
}

/// Every (apiGroup, resource, verb) a role grants, resourceNames folded in.
fn permissions(role: &Value) -> BTreeSet<String> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_array().into_iter().flatten() {
        let names = strings(&rule["resourceNames"]);
        let scope = if names.is_empty() {
            String::new()
        } else {
            format!(" ({})", names.join(","))
        };
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    let group = if group.is_empty() { "core" } else { &group };
                    out.insert(format!("{verb} {group}/{resource}{scope}"));
                }
            }
        }
        for url in strings(&rule["nonResourceURLs"]) {
            for verb in strings(&rule["verbs"]) {
                out.insert(format!("{verb} {url}"));
            }
        }
    }
    out
}

fn sample(items: &[&String]) -> String {
    let shown: Vec<&str> = items.iter().take(5).map(|s| s.as_str()).collect();
    let more = items.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join("; "))
    } else {
        shown.join("; ")
    }
}

fn object_changes(
    manifest: &str,
    old: &BTreeMap<ObjectKey, Value>,
    new: &BTreeMap<ObjectKey, Value>,
    out: &mut Vec<Change>,
) {
    let describe = |(kind, namespace, name): &ObjectKey| {
        if namespace.is_empty() {
            format!("manifest {manifest}: {kind} {name}")
        } else {
            format!("manifest {manifest}: {kind} {namespace}/{name}")
        }
    };
    for (key, before) in old {
        let subject = describe(key);
        let Some(after) = new.get(key) else {
            let (class, why, migration) = if key.0 == "Service" {
                (
                    Class::Breaking,
                    "Clients and webhook configurations that name this Service stop resolving it.",
                    "Point anything that names the old Service at its replacement.",
                )
            } else {
                (
                    Class::Breaking,
                    "The upgrade deletes it (Helm, Flux and Argo CD prune objects a release no longer has).",
                    "If something else depends on it, keep a copy outside the release.",
                )
            };
            out.push(Change {
                class,
                subject,
                title: format!("{} {} is no longer installed", key.0, key.2),
                why: why.into(),
                migration: migration.into(),
            });
            continue;
        };
        if before == after {
            continue;
        }
        match key.0.as_str() {
            "Deployment" => deployment_changes(&subject, before, after, out),
            "Service" => {
                let (b, a) = (service_ports(before), service_ports(after));
                if b != a {
                    out.push(Change {
                        class: Class::Breaking,
                        subject: subject.clone(),
                        title: format!("Service ports {} -> {}", join(&b), join(&a)),
                        why: "Clients of the old port stop reaching the operator.".into(),
                        migration: "Update scrapers and clients that use the old port.".into(),
                    });
                }
            }
            "ClusterRole" | "Role" => {
                let (b, a) = (permissions(before), permissions(after));
                let removed: Vec<&String> = b.difference(&a).collect();
                let added: Vec<&String> = a.difference(&b).collect();
                if !removed.is_empty() {
                    out.push(Change {
                        class: Class::Breaking,
                        subject: subject.clone(),
                        title: format!("RBAC narrowed: {} permission(s) removed: {}", removed.len(), sample(&removed)),
                        why: "The operator can no longer do this; resources that need it stop reconciling.".into(),
                        migration: "Check that no managed resource kind needs the removed permissions (crdPattern).".into(),
                    });
                }
                if !added.is_empty() {
                    out.push(other(
                        &subject,
                        format!(
                            "RBAC widened: {} permission(s) added: {}",
                            added.len(),
                            sample(&added)
                        ),
                    ));
                }
            }
            _ => {}
        }
        let paths: Vec<String> = changed_paths(before, after, "")
            .into_iter()
            .filter(|p| !(is_version_stamp(p) || key.0 == "Deployment" && covered_by_topology(p)))
            .collect();
        let listed: Vec<&String> = paths.iter().collect();
        if !listed.is_empty() {
            out.push(other(&subject, format!("changed: {}", sample(&listed))));
        }
    }
    for key in new.keys().filter(|k| !old.contains_key(*k)) {
        out.push(other(&describe(key), format!("{} {} is new", key.0, key.2)));
    }
    if let (Some(b), Some(a)) = (version_of(old), version_of(new))
        && a != b
    {
        out.push(other(
            &format!("manifest {manifest}"),
            format!("version {b} -> {a} (app.kubernetes.io/version on every object)"),
        ));
    }
}

/// Labels every release changes; reported once per manifest, not per object.
const VERSION_LABELS: [&str; 2] = ["app.kubernetes.io~1version", "helm.sh~1chart"];

fn is_version_stamp(pointer: &str) -> bool {
    VERSION_LABELS
        .iter()
        .any(|label| pointer.ends_with(&format!("/labels/{label}")))
}

/// Deployment fields the topology checks already report: the blocks of
/// spec that hold a topology field (`spec.replicas`, `spec.strategy`).
fn covered_by_topology(pointer: &str) -> bool {
    crate::roles::TOPOLOGY.iter().any(|field| {
        let block: Vec<&str> = field.path().split('.').take(2).collect();
        let at = format!("/{}", block.join("/"));
        pointer == at || pointer.starts_with(&format!("{at}/"))
    })
}

fn version_of(objects: &BTreeMap<ObjectKey, Value>) -> Option<String> {
    objects.values().find_map(|o| {
        o.pointer("/metadata/labels/app.kubernetes.io~1version")
            .and_then(Value::as_str)
            .map(str::to_string)
    })
}

fn other(subject: &str, title: String) -> Change {
    Change {
        class: Class::Other,
        subject: subject.to_string(),
        title,
        why: String::new(),
        migration: String::new(),
    }
}

/// JSON pointers of every leaf that differs (lists compared whole).
fn changed_paths(old: &Value, new: &Value, at: &str) -> Vec<String> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter()
                .flat_map(|k| {
                    let path = format!("{at}/{}", escape_segment(k));
                    match (a.get(k), b.get(k)) {
                        (Some(x), Some(y)) => changed_paths(x, y, &path),
                        _ => vec![path],
                    }
                })
                .collect()
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .flat_map(|(i, (x, y))| changed_paths(x, y, &format!("{at}/{i}")))
            .collect(),
        (a, b) if a == b => Vec::new(),
        _ => vec![if at.is_empty() {
            "/".into()
        } else {
            at.to_string()
        }],
    }
}

/// Dotted key paths of every leaf in a values document (maps recursed;
/// lists, scalars and empty maps are leaves).
fn value_keys(values: &Value, prefix: &str, out: &mut BTreeMap<String, Value>) {
    match values {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                value_keys(value, &path, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

/// A value for the notes, or `<redacted>` for keys that hold secrets.
fn shown(key: &str, value: &Value) -> String {
    if crate::diagnostics::is_secret_name(key) {
        "<redacted>".into()
    } else {
        value.to_string()
    }
}

/// Every (object path, required key) a schema declares.
fn required_keys(schema: &Value, at: &str, out: &mut BTreeSet<String>) {
    if let Some(map) = schema.as_object() {
        if let Some(required) = map.get("required").and_then(Value::as_array) {
            for key in required.iter().filter_map(Value::as_str) {
                out.insert(if at.is_empty() {
                    key.to_string()
                } else {
                    format!("{at}.{key}")
                });
            }
        }
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            for (key, sub) in properties {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                required_keys(sub, &path, out);
            }
        }
    }
}

fn values_changes(old: &Value, new: &Value, out: &mut Vec<Change>) {
    let (mut before, mut after) = (BTreeMap::new(), BTreeMap::new());
    value_keys(old, "", &mut before);
    value_keys(new, "", &mut after);
    let removed: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let mut renamed_to = BTreeSet::new();
    for key in &removed {
        // A new key with the same last segment, or a near spelling, is a rename.
        let leaf = key.rsplit('.').next().unwrap_or(key);
        let successor = added.iter().find(|a| {
            !renamed_to.contains(*a)
                && (a.rsplit('.').next() == Some(leaf)
                    || strsim::normalized_levenshtein(key, a) > 0.8)
        });
        let (title, migration) = match successor {
            Some(new_key) => {
                renamed_to.insert(*new_key);
                (
                    format!("values key {key} renamed to {new_key}"),
                    format!("Move `{key}` to `{new_key}` in your values files."),
                )
            }
            None => (
                format!("values key {key} removed"),
                format!("Delete `{key}` from your values files; the schema refuses unknown keys."),
            ),
        };
        out.push(Change {
            class: Class::Breaking,
            subject: "values".into(),
            title,
            why: "Values files that set it are refused by values.schema.json (Helm, editors, asogen validate).".into(),
            migration,
        });
    }
    for key in added.iter().filter(|k| !renamed_to.contains(*k)) {
        out.push(other(
            "values",
            format!(
                "values key {key} added (default {})",
                shown(key, &after[*key])
            ),
        ));
    }
    // The defaults whose change changes the topology of every install that
    // keeps them.
    let topology: Vec<&str> = crate::roles::topology_keys().map(Key::path).collect();
    for key in topology.iter().copied() {
        if let (Some(b), Some(a)) = (before.get(key), after.get(key))
            && b != a
        {
            out.push(Change {
                class: Class::Topology,
                subject: "values".into(),
                title: format!("default {key} {b} -> {a}"),
                why: "Every install that does not set it changes topology on upgrade.".into(),
                migration: format!("To keep the old behaviour, set `{key}: {b}` explicitly (the rules still apply)."),
            });
        }
    }
    for (key, b) in &before {
        if let Some(a) = after.get(key)
            && a != b
            && !topology.contains(&key.as_str())
        {
            out.push(other(
                "values",
                format!("default {key} {} -> {}", shown(key, b), shown(key, a)),
            ));
        }
    }
}

fn schema_changes(old: &Value, new: &Value, out: &mut Vec<Change>) {
    let (mut before, mut after) = (BTreeSet::new(), BTreeSet::new());
    required_keys(old, "", &mut before);
    required_keys(new, "", &mut after);
    for key in after.difference(&before) {
        out.push(Change {
            class: Class::Breaking,
            subject: "values.schema.json".into(),
            title: format!("{key} is now required"),
            why: "Values files without it are refused at install time.".into(),
            migration: format!("Set `{key}` in your values files before upgrading."),
        });
    }
}

/// Every change from OLD to NEW, breaking and topology changes first.
pub fn compare(old: &Side, new: &Side) -> Vec<Change> {
    let mut out = Vec::new();
    for (name, old_objects) in &old.manifests {
        match new.manifests.get(name) {
            Some(new_objects) => object_changes(name, old_objects, new_objects, &mut out),
            None if new.manifests.len() == 1 && old.manifests.len() == 1 => {
                // Two single manifest files: compare them whatever their names.
                let (new_name, new_objects) = new.manifests.iter().next().expect("one manifest");
                object_changes(new_name, old_objects, new_objects, &mut out);
            }
            None => out.push(Change {
                class: Class::Breaking,
                subject: format!("manifest {name}"),
                title: format!("install manifest {name} is no longer published"),
                why: "Pipelines that download it fail.".into(),
                migration:
                    "Use another profile's manifest or template your own with `asogen template`."
                        .into(),
            }),
        }
    }
    if !(new.manifests.len() == 1 && old.manifests.len() == 1) {
        for name in new
            .manifests
            .keys()
            .filter(|n| !old.manifests.contains_key(*n))
        {
            out.push(other(
                &format!("manifest {name}"),
                format!("install manifest {name} is new"),
            ));
        }
    }
    if let (Some(a), Some(b)) = (&old.values, &new.values) {
        values_changes(a, b, &mut out);
    }
    if let (Some(a), Some(b)) = (&old.schema, &new.schema) {
        schema_changes(a, b, &mut out);
    }
    out.sort_by_key(|change| change.class);
    out
}

/// The changes for people, one per line, grouped by class.
pub fn format_human(changes: &[Change]) -> String {
    if changes.is_empty() {
        return "no changes\n".into();
    }
    let mut out = String::new();
    for change in changes {
        let class = match change.class {
            Class::Topology => "TOPOLOGY",
            Class::Breaking => "BREAKING",
            Class::Other => "other   ",
        };
        out.push_str(&format!("{class}  {}: {}\n", change.subject, change.title));
        if !change.migration.is_empty() {
            out.push_str(&format!("          migrate: {}\n", change.migration));
        }
    }
    let breaking = changes.iter().filter(|c| c.class.is_breaking()).count();
    out.push_str(&format!(
        "\n{breaking} breaking or topology change(s), {} other\n",
        changes.len() - breaking
    ));
    out
}

/// The "Upgrade notes" section for the release notes, in Markdown.
pub fn format_markdown(changes: &[Change]) -> String {
    let mut out = String::from("## Upgrade notes\n\n");
    let breaking: Vec<&Change> = changes.iter().filter(|c| c.class.is_breaking()).collect();
    if breaking.is_empty() {
        out.push_str("No breaking or topology changes.\n");
    } else {
        out.push_str("### Breaking and topology changes\n\nRead these before upgrading.\n\n");
        for change in &breaking {
            out.push_str(&format!(
                "- **{}** ({})  \n  Why it matters: {}  \n  Migration: {}\n",
                change.title, change.subject, change.why, change.migration
            ));
        }
    }
    let others: Vec<&Change> = changes.iter().filter(|c| !c.class.is_breaking()).collect();
    if !others.is_empty() {
        out.push_str("\n### Other changes\n\n");
        for change in others {
            out.push_str(&format!("- {}: {}\n", change.subject, change.title));
        }
    }
    out
}
