//! The catalog of API groups and kinds the operator serves, kept as data in
//! `values/catalog.yaml` and compiled in, so `template` works anywhere.

use serde::Deserialize;

/// The catalog shipped with this build.
pub const CATALOG_YAML: &str = include_str!("../values/catalog.yaml");

/// Every served group.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// Groups, in the order of the file (kept sorted by the test below).
    pub groups: Vec<Group>,
    /// The webhook entries, derived once (every profile and the chart use
    /// them).
    #[serde(skip)]
    webhooks: std::sync::OnceLock<Vec<WebhookEntry>>,
}

/// One API group.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// The API group, e.g. `resources.azure.com`.
    pub group: String,
    /// Its kinds.
    pub kinds: Vec<Kind>,
}

/// One kind of a group.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kind {
    /// The kind, e.g. `ResourceGroup`.
    pub kind: String,
    /// The served version its webhooks are registered for.
    pub version: String,
    /// The resource plural when it is not the lower-case kind plus `s`.
    #[serde(default)]
    pub plural: Option<String>,
}

/// One webhook endpoint derived from a kind.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WebhookEntry {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource plural.
    pub plural: String,
    /// Name suffix: `<version>.<plural>.<group>`.
    pub name: String,
    /// Path suffix: `<group with dashes>-<version>-<lower-case kind>`.
    pub path: String,
}

impl Kind {
    /// The resource plural.
    pub fn plural(&self) -> String {
        if let Some(plural) = &self.plural {
            return plural.clone();
        }
        let lower = self.kind.to_lowercase();
        // Kubernetes' English plurals: identity -> identities, but key -> keys.
        match lower.strip_suffix('y') {
            Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{stem}ies"),
            _ => format!("{lower}s"),
        }
    }
}

impl Catalog {
    /// The catalog compiled into this build.
    pub fn builtin() -> Catalog {
        static BUILTIN: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                crate::yaml::from_str(CATALOG_YAML).expect("values/catalog.yaml is valid (tested)")
            })
            .clone()
    }

    /// Webhook entries for every kind, in catalog order.
    pub fn webhooks(&self) -> &[WebhookEntry] {
        self.webhooks.get_or_init(|| self.derive_webhooks())
    }

    fn derive_webhooks(&self) -> Vec<WebhookEntry> {
        self.groups
            .iter()
            .flat_map(|group| {
                group.kinds.iter().map(move |kind| WebhookEntry {
                    group: group.group.clone(),
                    version: kind.version.clone(),
                    plural: kind.plural(),
                    name: format!("{}.{}.{}", kind.version, kind.plural(), group.group),
                    path: format!(
                        "{}-{}-{}",
                        group.group.replace('.', "-"),
                        kind.version,
                        kind.kind.to_lowercase()
                    ),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_parses_and_is_sorted_and_unique() {
        let catalog = Catalog::builtin();
        let groups: Vec<_> = catalog.groups.iter().map(|g| g.group.clone()).collect();
        let mut sorted = groups.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(groups, sorted, "groups must be sorted and unique");
        let names: Vec<_> = catalog.webhooks().iter().map(|w| w.name.clone()).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(names.len(), unique.len());
    }

    #[test]
    fn webhook_names_follow_the_operator_convention() {
        let catalog = Catalog::builtin();
        let rg = catalog
            .webhooks()
            .iter()
            .find(|w| w.group == "resources.azure.com")
            .unwrap();
        assert_eq!(rg.name, "v1api20200601.resourcegroups.resources.azure.com");
        assert_eq!(rg.path, "resources-azure-com-v1api20200601-resourcegroup");
        let identity = Kind {
            kind: "UserAssignedIdentity".into(),
            version: "v1".into(),
            plural: None,
        };
        assert_eq!(identity.plural(), "userassignedidentities");
        let gateway = Kind {
            kind: "Gateway".into(),
            version: "v1".into(),
            plural: None,
        };
        assert_eq!(gateway.plural(), "gateways");
    }
}
