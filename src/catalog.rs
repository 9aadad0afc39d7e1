//! The catalog of what one ASO release serves and may do, kept as data in
//! `values/catalog.json` and compiled in, so `template` works anywhere:
//! every API group with the resource versions its admission webhooks
//! cover, and the rules of the ClusterRoles and Roles the release ships.
//! `asogen catalog import` writes it from a release's own manifests
//! ([`crate::features::catalog_import`]), so the next release is one
//! command away.
//!
//! Every string of a catalog follows a closed grammar ([`grammar`]),
//! checked where it comes from: an import refuses a manifest string that
//! breaks it, naming the file, line, column and key, and so does reading
//! a catalog file ([`Catalog::from_json`]). The catalog compiled in is a
//! constant of the build: Rust tables (`src/catalog/tables.rs`) generated
//! from `values/catalog.json` through those same checks by `cargo xtask
//! regen` (`render::catalog_source`), so no process
//! parses or checks it at start.
//! Neither a tampered manifest nor a hand-edited catalog can put anything
//! but names into the chart.

pub mod crd_pattern;
pub mod grammar;
#[rustfmt::skip]
mod tables;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::yaml;
use grammar::Field;
use helm_values::pointer::to_key_path;

/// The catalog shipped with this build.
pub const CATALOG_JSON: &str = include_str!("../values/catalog.json");

/// Where the catalog shipped with this build comes from, for messages.
pub const CATALOG_FILE: &str = "values/catalog.json";

/// FNV-1a of a text. `tables.rs` records the hash of the catalog it was
/// generated from, so a build whose values/catalog.json changed since (an
/// import not yet compiled in) fails to compile instead of shipping the
/// old tables.
pub(crate) const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut index = 0;
    while index < bytes.len() {
        hash ^= bytes[index] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        index += 1;
    }
    hash
}

// Not in the unit tests, nor in the build `cargo xtask regen` links
// (feature `sourcegen`): both must run with the tables this refuses, to
// say they are stale or to write them.
#[cfg(not(any(test, feature = "sourcegen")))]
const _: () = assert!(
    fnv1a(CATALOG_JSON.as_bytes()) == tables::SOURCE_FNV,
    "values/catalog.json changed since src/catalog/tables.rs was generated: run `cargo xtask regen`"
);

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
    pub cluster_roles: BTreeMap<String, Vec<PolicyRule>>,
    /// The rules of each namespaced Role, by name without [`NAME_PREFIX`]
    /// (`leader-election-role`), as released.
    pub roles: BTreeMap<String, Vec<PolicyRule>>,
    /// What the release's controller reads.
    pub controller: Controller,
}

/// One rule of a ClusterRole or Role: resource rules only (ASO's roles
/// grant no non-resource URLs), every string by [`grammar`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PolicyRule {
    /// API groups (`""` is the core group).
    pub api_groups: Vec<String>,
    /// Resources, `plural` or `plural/subresource`.
    pub resources: Vec<String>,
    /// Object names the rule is limited to, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_names: Vec<String>,
    /// The verbs it allows (`get`, `list`, `watch`, ...).
    pub verbs: Vec<String>,
}

/// A webhook as [`tables`] holds it: version, resource, kind.
type WebhookRow = [&'static str; 3];

/// A rule as [`tables`] holds it: apiGroups, resources, resourceNames, verbs.
type RuleRow = [&'static [&'static str]; 4];

/// The keys of a rule and the grammar of their entries; the first three
/// may not be empty (Kubernetes' `ValidatePolicyRule`).
const RULE_FIELDS: [(&str, Field, bool); 4] = [
    ("apiGroups", Field::RuleGroup, true),
    ("resources", Field::RuleResource, true),
    ("resourceNames", Field::ResourceName, false),
    ("verbs", Field::Verb, true),
];

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

/// The label ASO's release puts on each of its CRDs, by which the cluster
/// tells them apart from others (its CRD files carry it; the manager
/// applies them as they are).
pub const CRD_NAME_LABEL: (&str, &str) = ("app.kubernetes.io/name", "azure-service-operator");

/// The label on each of ASO's CRDs that names the release that applied it:
/// the manager applies its own CRDs where the label differs from its
/// version (docs/aso-facts.md, "equality, not order"), so the CRDs hold
/// the version the cluster last moved to.
pub const CRD_VERSION_LABEL: &str = "app.kubernetes.io/version";

/// The flag `crdLabels` maps to; controllers after v2.20.0 define it.
pub const CRD_LABELS_FLAG: &str = "crd-labels";

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
        let mut name = String::new();
        self.write_name(group, &mut name);
        name
    }

    /// [`Webhook::name`], appended to `out`.
    pub fn write_name(&self, group: &str, out: &mut String) {
        for part in [&self.version, ".", &self.resource, ".", group] {
            out.push_str(part);
        }
    }

    /// `<group with dashes>-<version>-<kind>`: the path after `/mutate-` or `/validate-`.
    pub fn path(&self, group: &str) -> String {
        let mut path = String::new();
        write_path_start(group, &mut path);
        self.write_path_end(&mut path);
        path
    }

    /// The end of [`Webhook::path`], after [`write_path_start`]:
    /// `<version>-<kind>`, appended to `out`.
    pub fn write_path_end(&self, out: &mut String) {
        for part in [&self.version, "-", &self.kind] {
            out.push_str(part);
        }
    }
}

/// The start of [`Webhook::path`], the same for every webhook of a group
/// (so written once per group): `<group with dashes>-`, appended to `out`.
pub fn write_path_start(group: &str, out: &mut String) {
    out.extend(group.chars().map(|c| if c == '.' { '-' } else { c }));
    out.push('-');
}

impl Catalog {
    /// The catalog compiled into this build, built once and shared:
    /// every model holds it, and a fleet has thousands of models.
    pub fn builtin() -> Arc<Catalog> {
        static BUILTIN: std::sync::OnceLock<Arc<Catalog>> = std::sync::OnceLock::new();
        Arc::clone(BUILTIN.get_or_init(|| Arc::new(Catalog::from_tables())))
    }

    /// The catalog of `values/catalog.json` from its tables, generated
    /// from it and held equal to it by a test (`the_builtin_catalog_is_the_catalog_file_s`).
    fn from_tables() -> Catalog {
        let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        let roles = |table: &[(&str, &[RuleRow])]| {
            table
                .iter()
                .map(|&(name, rules)| {
                    let rules = rules
                        .iter()
                        .map(
                            |&[api_groups, resources, resource_names, verbs]| PolicyRule {
                                api_groups: strings(api_groups),
                                resources: strings(resources),
                                resource_names: strings(resource_names),
                                verbs: strings(verbs),
                            },
                        )
                        .collect();
                    (name.to_string(), rules)
                })
                .collect()
        };
        Catalog {
            release: tables::RELEASE.to_string(),
            groups: tables::GROUPS
                .iter()
                .map(|&(group, webhooks)| Group {
                    group: group.to_string(),
                    webhooks: webhooks
                        .iter()
                        .map(|&[version, resource, kind]| Webhook {
                            version: version.to_string(),
                            resource: resource.to_string(),
                            kind: kind.to_string(),
                        })
                        .collect(),
                })
                .collect(),
            cluster_roles: roles(tables::CLUSTER_ROLES),
            roles: roles(tables::ROLES),
            controller: Controller {
                flags: strings(tables::FLAGS),
                env: strings(tables::ENV),
            },
        }
    }

    /// Reads a catalog file (`file` names it in messages): its shape, then
    /// every string's grammar, so a hand-edited catalog is refused with
    /// the line, column and key of what breaks it.
    pub fn from_json(file: &str, text: &str) -> Result<Catalog, CatalogError> {
        let catalog: Catalog = serde_json::from_str(text).map_err(|err| CatalogError {
            file: file.to_string(),
            line: Some(err.line()),
            column: Some(err.column()),
            key: String::new(),
            message: err.to_string(),
        })?;
        match catalog.problem() {
            None => Ok(catalog),
            Some((pointer, message)) => {
                let at = yaml::locate(text, 0, &pointer);
                Err(CatalogError {
                    file: file.to_string(),
                    line: at.map(|at| at.line),
                    column: at.map(|at| at.column),
                    key: to_key_path(&pointer),
                    message,
                })
            }
        }
    }

    /// The first string that breaks the grammar: its JSON pointer in the
    /// catalog file and why.
    pub fn problem(&self) -> Option<(String, String)> {
        // Every string of every start is checked: the pointer is written
        // only for the one that breaks the grammar.
        let check = |field: Field, text: &str, pointer: &dyn Fn() -> String| {
            grammar::problem(field, text).map(|message| (pointer(), message))
        };
        if let Some(found) = check(Field::Release, &self.release, &|| "/release".into()) {
            return Some(found);
        }
        for (g, group) in self.groups.iter().enumerate() {
            let at = || format!("/groups/{g}");
            if let Some(found) = check(Field::WebhookGroup, &group.group, &|| {
                format!("{}/group", at())
            }) {
                return Some(found);
            }
            for (w, hook) in group.webhooks.iter().enumerate() {
                for (field, key, text) in [
                    (Field::Version, "version", &hook.version),
                    (Field::Resource, "resource", &hook.resource),
                    (Field::Kind, "kind", &hook.kind),
                ] {
                    if let Some(found) =
                        check(field, text, &|| format!("{}/webhooks/{w}/{key}", at()))
                    {
                        return Some(found);
                    }
                }
            }
        }
        for (kind, roles) in [
            ("clusterRoles", &self.cluster_roles),
            ("roles", &self.roles),
        ] {
            for (name, rules) in roles {
                let at = || format!("/{kind}/{}", helm_values::pointer::escape_segment(name));
                if let Some(found) = check(Field::RoleName, name, &at) {
                    return Some(found);
                }
                for (r, rule) in rules.iter().enumerate() {
                    if let Err((pointer, message)) = rule.check() {
                        return Some((format!("{}/{r}{pointer}", at()), message));
                    }
                }
            }
        }
        let controller = &self.controller;
        for (key, field, names) in [
            ("flags", Field::Flag, &controller.flags),
            ("env", Field::EnvName, &controller.env),
        ] {
            for (i, name) in names.iter().enumerate() {
                if let Some(found) = check(field, name, &|| format!("/controller/{key}/{i}")) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// A ClusterRole's rules by its short name; empty if the release has none.
    pub fn cluster_role(&self, name: &str) -> &[PolicyRule] {
        self.cluster_roles.get(name).map_or(&[], Vec::as_slice)
    }

    /// A Role's rules by its short name; empty if the release has none.
    pub fn role(&self, name: &str) -> &[PolicyRule] {
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

/// A catalog file that cannot be used: its shape or a string's grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}{}: {message}", position(*line, *column), if key.is_empty() { String::new() } else { format!(": {key}") })]
pub struct CatalogError {
    /// The catalog file.
    pub file: String,
    /// The line, when known.
    pub line: Option<usize>,
    /// The column, when known.
    pub column: Option<usize>,
    /// The dotted key path of the string, when it is one.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl CatalogError {
    /// What to do about it.
    pub const HELP: &str = "values/catalog.json is written by `asogen catalog import` from a release's own manifests; import it again rather than edit it";
}

/// `:LINE:COLUMN`, or nothing when unknown.
pub(crate) fn position(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        _ => String::new(),
    }
}

/// Checks one rule as a manifest or a catalog holds it: a map of the keys
/// in [`RULE_FIELDS`], each a list of strings by its grammar, the required
/// ones not empty. The error's pointer is relative to the rule.
pub(crate) fn check_rule(rule: &Value) -> Result<(), (String, String)> {
    let Some(map) = rule.as_object() else {
        return Err((
            String::new(),
            "a rule is a map of apiGroups, resources and verbs".into(),
        ));
    };
    for (key, value) in map {
        let Some((_, field, _)) = RULE_FIELDS.iter().find(|(name, _, _)| name == key) else {
            let why = if key == "nonResourceURLs" {
                "ASO's roles hold resource rules only".to_string()
            } else {
                format!(
                    "`{key}` is not a key of a rule; a rule holds {}",
                    RULE_FIELDS.map(|(name, _, _)| name).join(", ")
                )
            };
            return Err((
                format!("/{}", helm_values::pointer::escape_segment(key)),
                why,
            ));
        };
        let Some(items) = value.as_array() else {
            return Err((format!("/{key}"), format!("`{key}` is a list of strings")));
        };
        check_entries(
            key,
            *field,
            items.iter().map(|item| item.as_str().ok_or(item)),
        )?;
    }
    for (key, _, required) in RULE_FIELDS {
        let entries = map.get(key).and_then(Value::as_array).map_or(0, Vec::len);
        check_required(key, required, entries)?;
    }
    Ok(())
}

impl PolicyRule {
    /// Its lists with their keys, in the order a Role writes them; an
    /// empty `resourceNames` is left out, as the Kubernetes API leaves it.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, &[String])> {
        RULE_FIELDS
            .iter()
            .zip(self.lists())
            .filter(|((key, _, _), entries)| *key != "resourceNames" || !entries.is_empty())
            .map(|((key, _, _), entries)| (*key, entries.as_slice()))
    }

    fn lists(&self) -> [&Vec<String>; 4] {
        [
            &self.api_groups,
            &self.resources,
            &self.resource_names,
            &self.verbs,
        ]
    }

    /// [`check_rule`] of the rule as the catalog holds it, with no JSON
    /// of it built: the catalog compiled in is checked at every start.
    fn check(&self) -> Result<(), (String, String)> {
        let lists = self.lists();
        for ((key, field, _), entries) in RULE_FIELDS.iter().zip(lists) {
            check_entries(key, *field, entries.iter().map(|entry| Ok(entry.as_str())))?;
        }
        for ((key, _, required), entries) in RULE_FIELDS.iter().zip(lists) {
            check_required(key, *required, entries.len())?;
        }
        Ok(())
    }
}

/// The entries of a rule's list `key`, each by its grammar (`Err`: an
/// entry that is not a string).
fn check_entries<'v>(
    key: &str,
    field: Field,
    entries: impl Iterator<Item = Result<&'v str, &'v Value>>,
) -> Result<(), (String, String)> {
    for (i, entry) in entries.enumerate() {
        let problem = match entry {
            Ok(text) => grammar::problem(field, text),
            Err(item) => Some(format!("`{key}` holds strings, not {item}")),
        };
        if let Some(message) = problem {
            return Err((format!("/{key}/{i}"), message));
        }
    }
    Ok(())
}

/// A required list of a rule with no entries.
fn check_required(key: &str, required: bool, entries: usize) -> Result<(), (String, String)> {
    if required && entries == 0 {
        return Err((
            String::new(),
            format!("a rule needs at least one entry in `{key}`"),
        ));
    }
    Ok(())
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

    /// The catalog compiled in is not checked at start
    /// ([`Catalog::builtin`]): this holds its grammar.
    #[test]
    fn the_builtin_catalog_keeps_the_grammar() {
        assert_eq!(Catalog::builtin().problem(), None);
        assert!(Catalog::from_json(CATALOG_FILE, CATALOG_JSON).is_ok());
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
    fn a_rule_of_the_catalog_is_checked_as_its_json_is() {
        let rule = |groups: &[&str], verbs: &[&str], names: &[&str]| PolicyRule {
            api_groups: groups.iter().map(|g| g.to_string()).collect(),
            resources: vec!["pods".into()],
            resource_names: names.iter().map(|n| n.to_string()).collect(),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
        };
        let rules = [
            rule(&[""], &["get"], &[]),
            rule(&["a b"], &["get"], &[]),
            rule(&[""], &["get", "{{ x }}"], &[]),
            rule(&[""], &[], &[]),
            rule(&[], &["get"], &["x y"]),
            rule(&[""], &["get"], &["{{"]),
        ];
        let mut refused = 0;
        for rule in &rules {
            let json = serde_json::to_value(rule).unwrap();
            assert_eq!(rule.check(), check_rule(&json), "{json}");
            refused += usize::from(rule.check().is_err());
        }
        assert_eq!(refused, rules.len() - 1);
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
