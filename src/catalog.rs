//! The catalog of what one ASO release serves and may do, kept as data in
//! `values/catalog.json` and compiled in, so `template` works anywhere:
//! every API group with the resource versions its admission webhooks
//! cover, and the rules of the ClusterRoles and Roles the release ships.
//! `asogen catalog import` writes it from a release's own manifests
//! ([`import`]), so the next release is one command away.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::yaml;

/// The catalog shipped with this build.
pub const CATALOG_JSON: &str = include_str!("../values/catalog.json");

/// The prefix of every object name the release installs.
pub const NAME_PREFIX: &str = "azureserviceoperator-";

/// What one ASO release serves (`values/catalog.json`, written by
/// `asogen catalog import`; do not edit it by hand).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Catalog {
    /// The release described (the controller image tag, e.g. `v2.20.0`).
    pub release: String,
    /// Every API group with webhooks, sorted by name.
    pub groups: Vec<Group>,
    /// The rules of each ClusterRole, by name without [`NAME_PREFIX`]
    /// (`manager-role`, `crd-manager-role`, `crd-reader-role`), as released.
    pub cluster_roles: std::collections::BTreeMap<String, Vec<Value>>,
    /// The rules of each namespaced Role, by name without [`NAME_PREFIX`]
    /// (`leader-election-role`), as released.
    pub roles: std::collections::BTreeMap<String, Vec<Value>>,
    /// What the release's controller reads.
    pub controller: Controller,
}

/// The interface of the release's controller binary: a Deployment may pass
/// only these flags (its flag set exits on any other, so the pod would
/// crash-loop) and these environment variables mean something to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Controller {
    /// Flag names without dashes (`metrics-addr`), sorted.
    pub flags: Vec<String>,
    /// Environment variable names the release's Deployment sets, in its order.
    pub env: Vec<String>,
}

impl Controller {
    /// Whether the controller defines `--flag`.
    pub fn defines(&self, flag: &str) -> bool {
        self.flags.iter().any(|known| known == flag)
    }
}

/// One API group and the resource versions its webhooks cover.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// The API group, e.g. `resources.azure.com`.
    pub group: String,
    /// One entry per served resource version, in the release's order.
    pub webhooks: Vec<Webhook>,
}

/// One resource version with a mutating and a validating webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    /// The API version, e.g. `v1api20200601`.
    pub version: String,
    /// The resource (plural), e.g. `resourcegroups`.
    pub resource: String,
    /// The lower-case kind in the webhook's path, e.g. `resourcegroup`.
    pub kind: String,
}

impl Group {
    /// The short name in the webhook configurations' names: the group
    /// without `.azure.com` (`network.frontdoor` for `network.frontdoor.azure.com`).
    pub fn short_name(&self) -> &str {
        self.group.strip_suffix(".azure.com").unwrap_or(&self.group)
    }
}

impl Webhook {
    /// `<version>.<resource>.<group>`: the webhook name after its prefix.
    pub fn name(&self, group: &str) -> String {
        format!("{}.{}.{group}", self.version, self.resource)
    }

    /// `<group with dashes>-<version>-<kind>`: the path after `/mutate-` or `/validate-`.
    pub fn path(&self, group: &str) -> String {
        format!("{}-{}-{}", group.replace('.', "-"), self.version, self.kind)
    }
}

impl Catalog {
    /// The catalog compiled into this build, read once and shared: every
    /// model holds it, and a fleet has thousands of models.
    pub fn builtin() -> Arc<Catalog> {
        static BUILTIN: std::sync::OnceLock<Arc<Catalog>> = std::sync::OnceLock::new();
        Arc::clone(BUILTIN.get_or_init(|| {
            Arc::new(
                serde_json::from_str(CATALOG_JSON).expect("values/catalog.json is valid (tested)"),
            )
        }))
    }

    /// A ClusterRole's rules by its short name; empty if the release has none.
    pub fn cluster_role(&self, name: &str) -> &[Value] {
        self.cluster_roles.get(name).map_or(&[], Vec::as_slice)
    }

    /// A Role's rules by its short name; empty if the release has none.
    pub fn role(&self, name: &str) -> &[Value] {
        self.roles.get(name).map_or(&[], Vec::as_slice)
    }

    /// The catalog as `values/catalog.json` holds it. JSON, not YAML: every
    /// process reads it at start, and serde_json reads it several times
    /// faster than a YAML parser would.
    pub fn to_file(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a catalog serializes");
        text.push('\n');
        text
    }
}

/// Why a catalog could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file is not a YAML stream of objects.
    #[error("{file}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A webhook does not have the shape ASO's webhooks have.
    #[error("{file}: webhook {webhook:?} in {configuration}: {message}")]
    Webhook {
        /// The file.
        file: String,
        /// Its configuration.
        configuration: String,
        /// The webhook's name.
        webhook: String,
        /// What is wrong.
        message: String,
    },
    /// The input holds no webhook configuration or no manager ClusterRole.
    #[error("{0}")]
    Incomplete(String),
}

fn webhook_entry(hook: &Value) -> Result<(String, Webhook), String> {
    let rules = hook["rules"].as_array().filter(|r| r.len() == 1);
    let rule = rules.map(|r| &r[0]).ok_or("expected exactly one rule")?;
    let one = |key: &str| -> Result<String, String> {
        match rule[key].as_array().map(Vec::as_slice) {
            Some([Value::String(value)]) => Ok(value.clone()),
            _ => Err(format!("expected one entry in rules[0].{key}")),
        }
    };
    let (group, version, resource) = (one("apiGroups")?, one("apiVersions")?, one("resources")?);
    let path = hook["clientConfig"]["service"]["path"]
        .as_str()
        .ok_or("no clientConfig.service.path")?;
    let prefix = format!("{}-{version}-", group.replace('.', "-"));
    let kind = path
        .split_once('-')
        .and_then(|(_, rest)| rest.strip_prefix(&prefix))
        .ok_or_else(|| format!("path {path:?} does not follow /<verb>-{prefix}<kind>"))?;
    Ok((
        group,
        Webhook {
            version,
            resource,
            kind: kind.to_string(),
        },
    ))
}

/// The container of a Deployment that runs ASO's controller image, with
/// the image's tag.
fn controller_container(deployment: &Value) -> Option<(&Value, String)> {
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_array()?;
    containers.iter().find_map(|container| {
        let image = container["image"].as_str()?;
        let image = image.split('@').next().unwrap_or(image);
        let (repository, tag) = image.rsplit_once(':')?;
        repository
            .ends_with("/azureserviceoperator")
            .then(|| (container, tag.to_string()))
    })
}

/// The flag an argument passes (`--v=2` passes `v`), if it is a flag.
pub fn flag_name(arg: &str) -> Option<&str> {
    let name = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    let name = name.split('=').next().unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// The flags a controller's `--help` lists (Go's flag package prints
/// `  -name type` and then an indented description): every line whose first
/// non-blank character is a dash. A plain list, one `--flag` per line,
/// reads the same; `#` starts a comment.
pub fn flags_from_help(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim_start())
        .filter_map(|line| flag_name(line.split_whitespace().next()?))
        .map(str::to_string)
        .collect()
}

/// Reads the webhook configurations and ClusterRoles of an ASO release
/// from YAML streams (`(file name, text)`): an install manifest, a chart's
/// render, or controller-gen's output. `release` names the release; by
/// default it is the tag of the controller image in the files. The
/// controller's flags are those its Deployment passes plus those
/// `flags_help` lists (its `--help`), since a manifest passes only some.
pub fn import(
    release: Option<&str>,
    files: &[(String, String)],
    flags_help: Option<&str>,
) -> Result<Catalog, ImportError> {
    let mut groups: std::collections::BTreeMap<String, Vec<Webhook>> = Default::default();
    let mut cluster_roles = std::collections::BTreeMap::new();
    let mut roles = std::collections::BTreeMap::new();
    let mut image_tag = None;
    let mut flags: std::collections::BTreeSet<String> = flags_help
        .map(flags_from_help)
        .into_iter()
        .flatten()
        .collect();
    let mut env = Vec::new();
    for (file, text) in files {
        let objects = yaml::parse_stream(text).map_err(|err| ImportError::Parse {
            file: file.clone(),
            message: err.to_string(),
        })?;
        // A `kind: List` holds its objects under `items`.
        let objects = objects.into_iter().flat_map(|object| match object {
            Value::Object(ref map) if map.get("kind") == Some(&Value::from("List")) => map
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            other => vec![other],
        });
        for object in objects {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            match object["kind"].as_str() {
                // Mutating and validating webhooks cover the same resource
                // versions; the mutating ones are read.
                Some("MutatingWebhookConfiguration") => {
                    for hook in object["webhooks"].as_array().into_iter().flatten() {
                        let (group, webhook) =
                            webhook_entry(hook).map_err(|message| ImportError::Webhook {
                                file: file.clone(),
                                configuration: name.to_string(),
                                webhook: hook["name"].as_str().unwrap_or_default().to_string(),
                                message,
                            })?;
                        let list = groups.entry(group).or_default();
                        if !list.contains(&webhook) {
                            list.push(webhook);
                        }
                    }
                }
                Some("Deployment") if image_tag.is_none() => {
                    if let Some((container, tag)) = controller_container(&object) {
                        image_tag = Some(tag);
                        let args = container["args"].as_array().into_iter().flatten();
                        flags.extend(
                            args.filter_map(|a| flag_name(a.as_str()?))
                                .map(String::from),
                        );
                        let names = container["env"].as_array().into_iter().flatten();
                        env.extend(names.filter_map(|e| Some(e["name"].as_str()?.to_string())));
                    }
                }
                Some(kind @ ("ClusterRole" | "Role")) if name.starts_with(NAME_PREFIX) => {
                    let rules = object["rules"].as_array().cloned().unwrap_or_default();
                    let into = if kind == "Role" {
                        &mut roles
                    } else {
                        &mut cluster_roles
                    };
                    into.insert(name[NAME_PREFIX.len()..].to_string(), rules);
                }
                _ => {}
            }
        }
    }
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
    Ok(Catalog {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalog_is_the_release_it_names() {
        let catalog = Catalog::builtin();
        assert_eq!(catalog.release, "v2.20.0");
        assert_eq!(catalog.groups.len(), 46);
        let hooks: usize = catalog.groups.iter().map(|g| g.webhooks.len()).sum();
        assert_eq!(hooks, 664);
        assert_eq!(catalog.cluster_role("manager-role").len(), 96);
        let names: Vec<_> = catalog.groups.iter().map(|g| g.group.clone()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(names, sorted, "groups are sorted and unique");
    }

    #[test]
    fn the_catalog_file_reads_back() {
        let catalog = Catalog::builtin();
        let back: Catalog = serde_json::from_str(&catalog.to_file()).unwrap();
        assert_eq!(back, *catalog);
        assert_eq!(
            catalog.to_file(),
            CATALOG_JSON,
            "values/catalog.json is as written"
        );
    }

    #[test]
    fn names_and_paths_follow_the_operator_convention() {
        let group = Group {
            group: "network.frontdoor.azure.com".into(),
            webhooks: vec![],
        };
        assert_eq!(group.short_name(), "network.frontdoor");
        let hook = Webhook {
            version: "v1api20200601".into(),
            resource: "resourcegroups".into(),
            kind: "resourcegroup".into(),
        };
        assert_eq!(
            hook.name("resources.azure.com"),
            "v1api20200601.resourcegroups.resources.azure.com"
        );
        assert_eq!(
            hook.path("resources.azure.com"),
            "resources-azure-com-v1api20200601-resourcegroup"
        );
    }
}
