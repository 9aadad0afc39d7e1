//! Kubernetes object names as the API server validates them (RFC 1123):
//! a namespace is a label, a ServiceAccount or PriorityClass a subdomain.
//! The checks of `-n` and the schema patterns of the name-valued keys come
//! from here, so the command line, asogen's values check, Helm and the
//! editor refuse the same names.

/// Longest RFC 1123 label (a namespace).
pub const LABEL_MAX: usize = 63;

/// Longest RFC 1123 subdomain (most object names).
pub const SUBDOMAIN_MAX: usize = 253;

/// A subdomain, or empty (the keys where empty means "the default").
pub const SUBDOMAIN_OR_EMPTY_PATTERN: &str =
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$";

/// Namespaces every cluster has: `--create-namespace` must not emit them
/// (applying would relabel them, e.g. kube-system as restricted).
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

fn is_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// Why `name` is not a valid namespace (an RFC 1123 label), in the API
/// server's terms; `None` when it is one.
pub fn label_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a namespace name may not be empty".into());
    }
    if name.chars().count() > LABEL_MAX {
        return Some(format!(
            "must be no more than {LABEL_MAX} characters (it has {})",
            name.chars().count()
        ));
    }
    (!is_label(name)).then(|| {
        "a lowercase RFC 1123 label must consist of lowercase letters, digits or '-', \
         and must start and end with a letter or digit"
            .to_string()
    })
}

/// Why `name` is not a valid object name (an RFC 1123 subdomain), in the
/// API server's terms; `None` when it is one.
pub fn subdomain_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a name may not be empty".into());
    }
    if name.chars().count() > SUBDOMAIN_MAX {
        return Some(format!(
            "must be no more than {SUBDOMAIN_MAX} characters (it has {})",
            name.chars().count()
        ));
    }
    (!name.split('.').all(is_label)).then(|| {
        "a lowercase RFC 1123 subdomain must consist of lowercase letters, digits, '-' or '.', \
         and each part between dots must start and end with a letter or digit"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains_as_the_api_server_has_them() {
        for good in ["a", "azureserviceoperator-system", "0-9", &"a".repeat(63)] {
            assert_eq!(label_problem(good), None, "{good}");
        }
        for bad in [
            "",
            "Bad_NS",
            "../x",
            "-a",
            "a-",
            "a.b",
            &"a".repeat(64),
            "ns\n",
        ] {
            assert!(label_problem(bad).is_some(), "{bad:?}");
        }
        for good in ["a.b", "system-node-critical", "x-1.y-2"] {
            assert_eq!(subdomain_problem(good), None, "{good}");
        }
        for bad in ["", "a..b", ".a", "a.", "A", "a_b", &"a".repeat(254)] {
            assert!(subdomain_problem(bad).is_some(), "{bad:?}");
        }
    }
}
