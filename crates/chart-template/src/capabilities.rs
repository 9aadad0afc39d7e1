//! `.Capabilities` as the chart reads it: which APIs the target cluster
//! serves. Helm asks the cluster (or, for `helm template`, its built-in
//! list plus `--api-versions`); asogen renders for a current cluster unless
//! `--kube-version` names an older one, and `--api-versions` adds APIs.

use std::fmt;

/// The APIs the chart asks about and the Kubernetes version that first
/// served each (GA); an API not listed here is taken as served.
const SERVED_SINCE: &[(&str, KubeVersion)] = &[
    (
        "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
        KubeVersion {
            major: 1,
            minor: 30,
        },
    ),
    (
        "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding",
        KubeVersion {
            major: 1,
            minor: 30,
        },
    ),
];

/// A Kubernetes version, major and minor (the patch does not change the
/// APIs served).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubeVersion {
    /// Major version (1).
    pub major: u64,
    /// Minor version.
    pub minor: u64,
}

impl KubeVersion {
    /// Parses `1.29`, `v1.29` or `1.29.3` (what Helm's `--kube-version`
    /// takes); None for anything else.
    pub fn parse(text: &str) -> Option<KubeVersion> {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts = text.splitn(3, '.');
        let number = |part: Option<&str>| -> Option<u64> {
            let part = part?;
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())
                .flatten()
        };
        let major = number(parts.next())?;
        let minor = number(parts.next())?;
        if let Some(patch) = parts.next() {
            // A pre-release or build suffix after the patch is allowed, as in
            // `1.29.3-gke.100`.
            let digits = patch.split(['-', '+']).next().unwrap_or("");
            number(Some(digits))?;
        }
        Some(KubeVersion { major, minor })
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// What the target cluster serves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The cluster's version; None for a current cluster (every API the
    /// chart asks about is served).
    pub kube_version: Option<KubeVersion>,
    /// APIs served whatever the version (`--api-versions`): `GROUP/VERSION`
    /// or `GROUP/VERSION/KIND`.
    pub api_versions: Vec<String>,
}

impl Capabilities {
    /// `.Capabilities.APIVersions.Has API`, for `GROUP/VERSION/KIND` or
    /// `GROUP/VERSION`.
    pub fn has(&self, api: &str) -> bool {
        if self.api_versions.iter().any(|served| served == api) {
            return true;
        }
        match self.kube_version {
            None => true,
            Some(version) => SERVED_SINCE
                .iter()
                .find(|(known, _)| *known == api)
                .is_none_or(|(_, since)| version >= *since),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";

    #[test]
    fn versions_parse_as_helm_takes_them() {
        let v = |major, minor| Some(KubeVersion { major, minor });
        assert_eq!(KubeVersion::parse("1.29"), v(1, 29));
        assert_eq!(KubeVersion::parse("v1.30.2"), v(1, 30));
        assert_eq!(KubeVersion::parse("1.31.0-gke.100"), v(1, 31));
        for bad in ["", "1", "1.", "one.two", "1.29.x", "1.-2"] {
            assert_eq!(KubeVersion::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_policy_api_is_served_from_1_30_or_when_named() {
        let at = |text: &str| Capabilities {
            kube_version: KubeVersion::parse(text),
            api_versions: Vec::new(),
        };
        assert!(Capabilities::default().has(POLICY));
        assert!(!at("1.29").has(POLICY));
        assert!(at("1.30").has(POLICY));
        assert!(at("1.29").has("apps/v1/Deployment"));
        let mut named = at("1.29");
        named.api_versions.push(POLICY.into());
        assert!(named.has(POLICY));
    }
}
