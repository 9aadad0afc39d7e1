//! The closed grammar of every string a catalog holds. A catalog is data
//! that the chart prints into its templates and asogen into its objects,
//! so each string must be what Kubernetes says such a string is, and
//! nothing else: no quotes, blanks, line breaks, braces or wildcards can
//! pass, whatever a tampered manifest or a hand-edited catalog holds.
//!
//! Where the grammars come from:
//! - API groups, versions, resources and kinds as the API server checks a
//!   CustomResourceDefinition (apiextensions-apiserver's validation): the
//!   group an RFC 1123 subdomain with at least one dot, each version, the
//!   plural and the lowercased kind an RFC 1035 label (`v1api20230101preview`
//!   is one). Built-in groups in RBAC rules are subdomains too (`apps`,
//!   `coordination.k8s.io`), and the core group is `""`.
//! - RBAC rules: Kubernetes checks only that verbs, groups and resources
//!   are not empty (`ValidatePolicyRule`) and matches `*` as "all" (and
//!   `*/subresource`). A release's rules are narrower: a resource is
//!   `plural` or `plural/subresource`; a verb one of the API server's
//!   request verbs (`get list watch create update patch delete
//!   deletecollection proxy`) or the special verbs RBAC and admission check
//!   (`use bind escalate impersonate approve sign attest`). Custom verbs
//!   matter only to aggregated API servers, which ASO does not serve, and
//!   a wildcard would grant the controller every resource of the cluster:
//!   ASO's releases use neither, so an import refuses both rather than
//!   widen the controller's rights unseen.
//! - Webhook paths as controller-runtime forms them:
//!   `/mutate-<group with . as ->-<version>-<lowercase kind>` (and
//!   `/validate-...`), rebuilt from the parts above.
//! - The release: `v` and a SemVer 2 version (the chart version is the
//!   same without the `v`), a valid image tag.
//! - Flag names as Go's flag package prints them (letters, digits, `-`,
//!   `_`, `.`), environment variable names as the API server has always
//!   accepted them (`[-._a-zA-Z][-._a-zA-Z0-9]*`).

use crate::names;

/// What a catalog string names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The API group of a webhook's resource (a CRD's `spec.group`).
    WebhookGroup,
    /// An entry of an RBAC rule's `apiGroups`.
    RuleGroup,
    /// An API version (a CRD version's name).
    Version,
    /// A resource a webhook covers (a CRD's plural).
    Resource,
    /// An entry of an RBAC rule's `resources`.
    RuleResource,
    /// An entry of an RBAC rule's `resourceNames`.
    ResourceName,
    /// An entry of an RBAC rule's `verbs`.
    Verb,
    /// The lowercase kind in a webhook's path.
    Kind,
    /// A ClusterRole's or Role's name after `azureserviceoperator-`.
    RoleName,
    /// The release (the controller image's tag).
    Release,
    /// A controller flag's name, without dashes.
    Flag,
    /// An environment variable's name.
    EnvName,
}

/// The verbs a rule may hold (see the module documentation).
pub const VERBS: [&str; 16] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "proxy",
    "use",
    "bind",
    "escalate",
    "impersonate",
    "approve",
    "sign",
    "attest",
];

/// The most characters a flag name may have.
const FLAG_MAX: usize = 128;

/// Why `text` is not a valid `field`; `None` when it is one. Messages
/// quote the text with escapes, so a line break shows as `\n`.
pub fn problem(field: Field, text: &str) -> Option<String> {
    let what = field.description();
    let bad = |why: &str| Some(format!("{text:?} is not {what}: {why}"));
    let wildcard = text == "*" || text.starts_with("*/") || text.ends_with("/*");
    if wildcard && matches!(field, Field::RuleGroup | Field::RuleResource | Field::Verb) {
        return bad(
            "a wildcard would grant the controller every one there is, and ASO's releases name what they need",
        );
    }
    match field {
        Field::WebhookGroup => match names::subdomain_problem(text) {
            Some(why) => bad(&why),
            None if !text.contains('.') => {
                bad("an API group of custom resources has at least one dot")
            }
            None => None,
        },
        Field::RuleGroup => match text {
            "" => None,
            _ => names::subdomain_problem(text).and_then(|why| bad(&why)),
        },
        Field::Version | Field::Resource | Field::Kind => dns1035(text).and_then(&bad),
        Field::RuleResource => {
            let mut parts = text.splitn(2, '/');
            let resource = parts.next().unwrap_or_default();
            let sub = parts.next();
            match (dns1035(resource), sub.map(dns1035)) {
                (Some(why), _) | (None, Some(Some(why))) => {
                    bad(&format!("write plural or plural/subresource; {why}"))
                }
                _ => None,
            }
        }
        Field::ResourceName => names::subdomain_problem(text).and_then(|why| bad(&why)),
        Field::Verb => (!VERBS.contains(&text)).then(|| {
            format!(
                "{text:?} is not {what}: Kubernetes' verbs are {}",
                VERBS.join(", ")
            )
        }),
        Field::RoleName => names::subdomain_problem(&format!("{}{text}", super::NAME_PREFIX))
            .and_then(|why| bad(&why)),
        Field::Release => {
            let version = text.strip_prefix('v').unwrap_or_default();
            if !names::valid_image_tag(text) {
                bad("an image tag is 1 to 128 of A-Z a-z 0-9 _ . -, not starting with . or -")
            } else if let Err(err) = semver::Version::parse(version) {
                bad(&format!(
                    "write v and a SemVer 2 version, e.g. v2.20.0 ({err})"
                ))
            } else {
                None
            }
        }
        Field::Flag => {
            let ok = (1..=FLAG_MAX).contains(&text.len())
                && text.starts_with(|c: char| c.is_ascii_alphanumeric())
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            (!ok).then(|| {
                format!(
                    "{text:?} is not {what}: letters, digits, -, _ and ., starting with a letter or digit"
                )
            })
        }
        Field::EnvName => {
            let ok = text.starts_with(|c: char| c.is_ascii_alphabetic() || "-._".contains(c))
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
            (!ok).then(|| {
                format!(
                    "{text:?} is not {what}: letters, digits, -, . and _, not starting with a digit"
                )
            })
        }
    }
}

/// Why `text` is not an RFC 1035 label (what the API server requires of a
/// CRD's versions, plural and lowercased kind).
fn dns1035(text: &str) -> Option<&'static str> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() > names::LABEL_MAX {
        return Some("an RFC 1035 label has 1 to 63 characters");
    }
    let ok = bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[bytes.len() - 1] != b'-';
    (!ok).then_some(
        "an RFC 1035 label is lowercase letters, digits and '-', starting with a letter and ending with a letter or digit",
    )
}

impl Field {
    /// The field in a message: "... is not an API group".
    pub fn description(self) -> &'static str {
        match self {
            Field::WebhookGroup => "an API group of custom resources",
            Field::RuleGroup => "an API group",
            Field::Version => "an API version",
            Field::Resource => "a resource (a plural name)",
            Field::RuleResource => "a resource",
            Field::ResourceName => "an object name",
            Field::Verb => "a verb",
            Field::Kind => "a lowercase kind",
            Field::RoleName => "a role name",
            Field::Release => "a release tag",
            Field::Flag => "a flag name",
            Field::EnvName => "an environment variable name",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_each_field_accepts() {
        let cases: &[(Field, &[&str], &[&str])] = &[
            (
                Field::WebhookGroup,
                &["resources.azure.com", "network.frontdoor.azure.com"],
                &[
                    "apps",
                    "",
                    "a..b",
                    "A.com",
                    "x.com\n",
                    "{{ . }}.com",
                    "'x'.com",
                ],
            ),
            (
                Field::RuleGroup,
                &["", "apps", "coordination.k8s.io", "resources.azure.com"],
                &["*", " ", "a b", "x\ny", "x{{"],
            ),
            (
                Field::Version,
                &[
                    "v1",
                    "v1beta1",
                    "v1api20230101preview",
                    "v1api20230101storage",
                ],
                &["", "V1", "1v", "v1-", "v1 ", "v1\"", &"v".repeat(64)],
            ),
            (
                Field::RuleResource,
                &["secrets", "resourcegroups/status", "deployments/finalizers"],
                &[
                    "*", "*/status", "pods/*", "a/b/c", "Pods", "a b", "/status", "x/",
                ],
            ),
            (
                Field::Verb,
                &["get", "deletecollection", "attest"],
                &["*", "GET", "get ", "custom", ""],
            ),
            (
                Field::Release,
                &["v2.20.0", "v2.22.0-rc.1"],
                &["2.20.0", "v2.20", "latest", "v2.20.0\n", "v2.20.0+{{x}}"],
            ),
            (
                Field::Flag,
                &["metrics-addr", "v", "add_dir_header", "log.level"],
                &["", "-x", "a=b", "a b", "a\n"],
            ),
            (
                Field::EnvName,
                &["AZURE_CLIENT_ID", "_X", "a.b-c"],
                &["", "1X", "A B", "A=B", "A\n"],
            ),
            (
                Field::RoleName,
                &["manager-role", "leader-election-role"],
                &["", "Manager", "a_b", "x\n"],
            ),
        ];
        for (field, good, bad) in cases {
            for text in *good {
                assert_eq!(problem(*field, text), None, "{field:?} {text:?}");
            }
            for text in *bad {
                assert!(problem(*field, text).is_some(), "{field:?} {text:?}");
            }
        }
    }
}
