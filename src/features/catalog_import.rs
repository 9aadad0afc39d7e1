//! `asogen catalog import`: the catalog of one ASO release
//! ([`crate::catalog::Catalog`]) read from the release's own manifests,
//! every string checked by the catalog's grammar where it is read, with the
//! file, line, column and key of any that breaks it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::catalog::grammar::{self, Field};
use crate::catalog::{
    Catalog, Controller, Group, NAME_PREFIX, PolicyRule, Webhook, check_rule, position,
};
use crate::yaml::{self, YamlError};
use helm_values::pointer::to_key_path;

/// Why a catalog could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file is not a YAML stream.
    #[error("{file}:{}:{}: {}", .error.position.line, .error.position.column, .error.message)]
    Parse {
        /// The file.
        file: String,
        /// What is wrong, and where.
        error: YamlError,
    },
    /// A string or an object of a manifest is not what an ASO release
    /// holds.
    #[error(transparent)]
    Refused(Box<Refused>),
    /// `--release` is not a release tag.
    #[error("--release: {0}")]
    Release(String),
    /// A flag the `--controller-flags` file lists is not a flag name.
    #[error("{file}:{line}: {message}")]
    Flag {
        /// The file.
        file: String,
        /// The line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The input holds no webhook configuration or no manager ClusterRole.
    #[error("{0}")]
    Incomplete(String),
}

impl ImportError {
    /// What to do about it.
    pub fn help(&self) -> &'static str {
        match self {
            ImportError::Refused(_) | ImportError::Flag { .. } | ImportError::Release(_) => {
                "a catalog holds names as Kubernetes defines them and nothing else; check that the file is the release's own, unchanged"
            }
            ImportError::Parse { .. } => {
                "the release's own manifests are YAML a YAML 1.1 reader (kubectl's, Helm's) reads; check that the file is the release's own, unchanged"
            }
            _ => {
                "give the release's install manifest (or its webhook configurations and ClusterRoles)"
            }
        }
    }
}

/// A manifest string or object an import refuses, where it is and why.
#[derive(Debug, thiserror::Error)]
#[error("{file}{}: {object}, {key}: {message}", position(*line, *column))]
pub struct Refused {
    /// The file.
    pub file: String,
    /// The line of the key (or value), when found.
    pub line: Option<usize>,
    /// Its column.
    pub column: Option<usize>,
    /// The object (`ClusterRole azureserviceoperator-manager-role`).
    pub object: String,
    /// The dotted key path in the object.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// A manifest string or object refused: where in its document, and why.
struct Refusal {
    /// The object, for people.
    object: String,
    /// The JSON pointer in the document.
    pointer: String,
    message: String,
}

/// Why reading a file stopped.
enum Stop {
    Yaml(YamlError),
    Refused(usize, Refusal),
}

impl From<YamlError> for Stop {
    fn from(error: YamlError) -> Stop {
        Stop::Yaml(error)
    }
}

/// The webhook's group and entry, or where (a pointer relative to the
/// webhook) and why it does not have the shape ASO's webhooks have.
fn webhook_entry(hook: &Value) -> Result<(String, Webhook), (String, String)> {
    let rules = hook["rules"].as_array().filter(|r| r.len() == 1);
    let rule = rules.map(|r| &r[0]).ok_or((
        "/rules".to_string(),
        "expected exactly one rule".to_string(),
    ))?;
    let one = |key: &str, field: Field| -> Result<String, (String, String)> {
        match rule[key].as_array().map(Vec::as_slice) {
            Some([Value::String(value)]) => match grammar::problem(field, value) {
                Some(message) => Err((format!("/rules/0/{key}/0"), message)),
                None => Ok(value.clone()),
            },
            _ => Err((
                format!("/rules/0/{key}"),
                format!("expected one entry in rules[0].{key}"),
            )),
        }
    };
    let group = one("apiGroups", Field::WebhookGroup)?;
    let version = one("apiVersions", Field::Version)?;
    let resource = one("resources", Field::Resource)?;
    let path_at = "/clientConfig/service/path".to_string();
    let path = hook["clientConfig"]["service"]["path"]
        .as_str()
        .ok_or((path_at.clone(), "no clientConfig.service.path".to_string()))?;
    // controller-runtime's path; the chart writes it again from the parts.
    let prefix = format!("/mutate-{}-{version}-", group.replace('.', "-"));
    let kind = path.strip_prefix(&prefix).ok_or_else(|| {
        (
            path_at.clone(),
            format!("path {path:?} does not follow {prefix}<kind>"),
        )
    })?;
    if let Some(message) = grammar::problem(Field::Kind, kind) {
        return Err((path_at, message));
    }
    Ok((
        group,
        Webhook {
            version,
            resource,
            kind: kind.to_string(),
        },
    ))
}

/// The container of a Deployment that runs ASO's controller image: its
/// index, and the image's tag.
fn controller_container(deployment: &Value) -> Option<(usize, &Value, String)> {
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_array()?;
    containers
        .iter()
        .enumerate()
        .find_map(|(index, container)| {
            let image = container["image"].as_str()?;
            let image = image.split('@').next().unwrap_or(image);
            let (repository, tag) = image.rsplit_once(':')?;
            repository
                .ends_with("/azureserviceoperator")
                .then(|| (index, container, tag.to_string()))
        })
}

/// The flags a controller's `--help` lists (Go's flag package prints
/// `  -name type` and then an indented description): every line whose first
/// non-blank character is a dash, with its line number. A plain list, one
/// `--flag` per line, reads the same; `#` starts a comment.
pub fn flags_from_help(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let line = line.split('#').next().unwrap_or_default().trim_start();
            // pflag prints `-v, --v level`: the first name, without its comma.
            let word = line.split_whitespace().next()?.trim_end_matches(',');
            Some((index + 1, go_semantics::flag::name(word)?.to_string()))
        })
        .collect()
}

/// What an import has read so far.
#[derive(Default)]
struct Importer {
    /// Whether `--release` names the release (else the image tag does).
    release_given: bool,
    groups: BTreeMap<String, Vec<Webhook>>,
    cluster_roles: BTreeMap<String, Vec<PolicyRule>>,
    roles: BTreeMap<String, Vec<PolicyRule>>,
    image_tag: Option<String>,
    flags: BTreeSet<String>,
    env: Vec<String>,
}

impl Importer {
    /// Reads one object at `at` (a JSON pointer in its document: "" or
    /// `/items/N` in a `kind: List`).
    fn object(&mut self, object: &Value, at: &str) -> Result<(), Refusal> {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        let refuse = |pointer: String, message: String| Refusal {
            object: format!("{kind} {name}"),
            pointer: format!("{at}{pointer}"),
            message,
        };
        match kind {
            // Mutating and validating webhooks cover the same resource
            // versions; the mutating ones are read.
            "MutatingWebhookConfiguration" => {
                for (index, hook) in object["webhooks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let (group, webhook) = webhook_entry(hook).map_err(|(pointer, message)| {
                        let hook_name = hook["name"].as_str().unwrap_or_default();
                        let mut refusal = refuse(format!("/webhooks/{index}{pointer}"), message);
                        refusal.object.push_str(&format!(", webhook {hook_name:?}"));
                        refusal
                    })?;
                    let list = self.groups.entry(group).or_default();
                    if !list.contains(&webhook) {
                        list.push(webhook);
                    }
                }
            }
            "Deployment" if self.image_tag.is_none() => {
                if let Some((index, container, tag)) = controller_container(object) {
                    let at = format!("/spec/template/spec/containers/{index}");
                    if !self.release_given
                        && let Some(message) = grammar::problem(Field::Release, &tag)
                    {
                        return Err(refuse(format!("{at}/image"), message));
                    }
                    self.image_tag = Some(tag);
                    for (i, arg) in container["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        let Some(arg) = arg.as_str() else {
                            return Err(refuse(
                                format!("{at}/args/{i}"),
                                format!("a container's args are strings, not {arg}"),
                            ));
                        };
                        if let Some(flag) = go_semantics::flag::name(arg) {
                            if let Some(message) = grammar::problem(Field::Flag, flag) {
                                return Err(refuse(format!("{at}/args/{i}"), message));
                            }
                            self.flags.insert(flag.to_string());
                        }
                    }
                    for (i, env) in container["env"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        let at = format!("{at}/env/{i}/name");
                        let Some(env_name) = env["name"].as_str() else {
                            return Err(refuse(at, "an environment variable has a name".into()));
                        };
                        if let Some(message) = grammar::problem(Field::EnvName, env_name) {
                            return Err(refuse(at, message));
                        }
                        self.env.push(env_name.to_string());
                    }
                }
            }
            "ClusterRole" | "Role" if name.starts_with(NAME_PREFIX) => {
                let short = &name[NAME_PREFIX.len()..];
                if let Some(message) = grammar::problem(Field::RoleName, short) {
                    return Err(refuse("/metadata/name".into(), message));
                }
                let rules = match &object["rules"] {
                    Value::Null => Vec::new(),
                    Value::Array(rules) => rules.clone(),
                    _ => return Err(refuse("/rules".into(), "`rules` is a list".into())),
                };
                let mut typed = Vec::with_capacity(rules.len());
                for (index, rule) in rules.iter().enumerate() {
                    check_rule(rule).map_err(|(pointer, message)| {
                        refuse(format!("/rules/{index}{pointer}"), message)
                    })?;
                    typed.push(
                        serde_json::from_value(rule.clone())
                            .expect("a rule of the grammar is a PolicyRule"),
                    );
                }
                let into = if kind == "Role" {
                    &mut self.roles
                } else {
                    &mut self.cluster_roles
                };
                into.insert(short.to_string(), typed);
            }
            _ => {}
        }
        Ok(())
    }
}

/// Reads the webhook configurations and ClusterRoles of an ASO release
/// from YAML streams (`(file name, text)`): an install manifest, a chart's
/// render, or controller-gen's output. `release` names the release; by
/// default it is the tag of the controller image in the files. The
/// controller's flags are those its Deployment passes plus those
/// `flags_help` (`(file name, text)`) lists (its `--help`), since a
/// manifest passes only some. Every string read follows [`grammar`]; one
/// that does not is refused with its file, line, column and key.
pub fn import(
    release: Option<&str>,
    files: &[(String, String)],
    flags_help: Option<&(String, String)>,
) -> Result<Catalog, ImportError> {
    if let Some(release) = release
        && let Some(message) = grammar::problem(Field::Release, release)
    {
        return Err(ImportError::Release(message));
    }
    let mut importer = Importer {
        release_given: release.is_some(),
        ..Importer::default()
    };
    if let Some((file, text)) = flags_help {
        for (line, flag) in flags_from_help(text) {
            if let Some(message) = grammar::problem(Field::Flag, &flag) {
                return Err(ImportError::Flag {
                    file: file.clone(),
                    line,
                    message,
                });
            }
            importer.flags.insert(flag);
        }
    }
    for (file, text) in files {
        let read = yaml::for_each_document(text, |index, object| {
            // A `kind: List` holds its objects under `items`.
            match object.get("kind") {
                Some(kind) if kind == "List" => {
                    for (i, item) in object["items"].as_array().into_iter().flatten().enumerate() {
                        importer
                            .object(item, &format!("/items/{i}"))
                            .map_err(|refusal| Stop::Refused(index, refusal))?;
                    }
                }
                _ => importer
                    .object(&object, "")
                    .map_err(|refusal| Stop::Refused(index, refusal))?,
            }
            Ok(())
        });
        match read {
            Ok(()) => {}
            Err(Stop::Yaml(error)) => {
                return Err(ImportError::Parse {
                    file: file.clone(),
                    error,
                });
            }
            Err(Stop::Refused(document, refusal)) => {
                let at = yaml::locate(text, document, &refusal.pointer);
                // The key path within the object (a List's item is named
                // by its kind and name already).
                let inner = refusal
                    .pointer
                    .strip_prefix("/items/")
                    .and_then(|rest| rest.split_once('/').map(|(_, inner)| format!("/{inner}")))
                    .unwrap_or_else(|| refusal.pointer.clone());
                return Err(ImportError::Refused(Box::new(Refused {
                    file: file.clone(),
                    line: at.map(|at| at.line),
                    column: at.map(|at| at.column),
                    object: refusal.object,
                    key: to_key_path(&inner),
                    message: refusal.message,
                })));
            }
        }
    }
    let Importer {
        groups,
        cluster_roles,
        roles,
        image_tag,
        flags,
        env,
        ..
    } = importer;
    if groups.is_empty() {
        return Err(ImportError::Incomplete(
            "no MutatingWebhookConfiguration found: give the release's install manifest or its webhook configurations".into(),
        ));
    }
    if !cluster_roles.contains_key("manager-role") {
        return Err(ImportError::Incomplete(format!(
            "no ClusterRole {NAME_PREFIX}manager-role found: give the release's install manifest or its ClusterRoles"
        )));
    }
    let release = release
        .map(str::to_string)
        .or(image_tag)
        .ok_or_else(|| {
            ImportError::Incomplete(
                "no --release given and no ASO controller Deployment in the files to read it from: pass --release vX.Y.Z".into(),
            )
        })?;
    if env.is_empty() {
        return Err(ImportError::Incomplete(
            "no ASO controller Deployment with environment variables found: give the release's install manifest, which holds it".into(),
        ));
    }
    let catalog = Catalog {
        release,
        groups: groups
            .into_iter()
            .map(|(group, webhooks)| Group { group, webhooks })
            .collect(),
        cluster_roles,
        roles,
        controller: Controller {
            flags: flags.into_iter().collect(),
            env,
        },
    };
    // Every string was checked where it was read; the whole once more.
    if let Some((pointer, message)) = catalog.problem() {
        return Err(ImportError::Incomplete(format!(
            "the imported catalog breaks its grammar at {}: {message}",
            to_key_path(&pointer)
        )));
    }
    Ok(catalog)
}
