//! `src/keys/all.rs`, the list of values-key handles, generated from the
//! values schema (rust-analyzer's sourcegen): [`super::sourcegen`] checks
//! the committed file against the list the schema gives, and `cargo xtask
//! regen` writes it. Adding, renaming or removing a
//! field of `src/values.rs` is then one edit; each handle's name is
//! derived from its path ([`const_name`]), and whether it is a Kubernetes
//! object from its schema ([`super::values_doc::schema_keys`]).

use super::values_doc::{SchemaKey, schema_keys};

/// The file the handles are written to, from the repository root.
pub(super) const FILE: &str = "src/keys/all.rs";

/// A handle's name: the path's words in capitals, joined by `_`
/// (`strategy.rollingUpdate.maxSurge` is `STRATEGY_ROLLING_UPDATE_MAX_SURGE`).
/// A run of capitals is one word (`useJSONLogging` is `USE_JSON_LOGGING`),
/// and so is one with a plural `s` (`installCRDs` is `INSTALL_CRDS`).
fn const_name(path: &str) -> String {
    let mut words = Vec::new();
    for segment in path.split('.') {
        let chars: Vec<char> = segment.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| chars[j]);
            let after = chars.get(i + 1).copied();
            let plural =
                after == Some('s') && chars.get(i + 2).is_none_or(char::is_ascii_uppercase);
            let starts_word = c.is_ascii_uppercase()
                && match before {
                    None => false,
                    Some(b) if !b.is_ascii_uppercase() => true,
                    // The last capital of a run starts the next word
                    // (`JSONLogging`), unless a plural `s` follows.
                    Some(_) => after.is_some_and(|a| a.is_ascii_lowercase()) && !plural,
                };
            if starts_word && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            word.push(c.to_ascii_uppercase());
        }
        words.push(word);
    }
    words.join("_")
}

/// The text of `src/keys/all.rs` for these keys; an error names two paths
/// that would get one name.
fn source(keys: &[SchemaKey]) -> Result<String, String> {
    let mut names: Vec<(String, &str)> = Vec::new();
    let mut out = String::from(
        "// Generated from the values schema (src/values.rs) by `cargo xtask regen`:\n\
         // do not edit. Add, rename or remove a field of src/values.rs and run it.\n\n\
         keys! {\n",
    );
    for key in keys {
        let name = const_name(&key.path);
        if let Some((_, other)) = names.iter().find(|(taken, _)| *taken == name) {
            return Err(format!(
                "{other} and {} would both be keys::{name}; rename one of the fields in src/values.rs",
                key.path
            ));
        }
        let flags = if key.kubernetes { " [Kubernetes]" } else { "" };
        out.push_str(&format!("    {name} = {:?}{flags};\n", key.path));
        names.push((name, &key.path));
    }
    out.push_str("}\n");
    Ok(out)
}

/// The text of `src/keys/all.rs` the values schema gives.
pub(super) fn text() -> Result<String, String> {
    source(&schema_keys())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_path_s_words() {
        for (path, name) in [
            ("replicaCount", "REPLICA_COUNT"),
            (
                "strategy.rollingUpdate.maxSurge",
                "STRATEGY_ROLLING_UPDATE_MAX_SURGE",
            ),
            ("useJSONLogging", "USE_JSON_LOGGING"),
            ("installCRDs", "INSTALL_CRDS"),
            ("image.kubeRBACProxy", "IMAGE_KUBE_RBAC_PROXY"),
            ("azureSubscriptionID", "AZURE_SUBSCRIPTION_ID"),
            (
                "networkPolicies.kubernetesApiCIDR",
                "NETWORK_POLICIES_KUBERNETES_API_CIDR",
            ),
            ("go", "GO"),
        ] {
            assert_eq!(const_name(path), name, "{path}");
        }
    }

    #[test]
    fn two_paths_with_one_name_are_refused() {
        let key = |path: &str| SchemaKey {
            path: path.into(),
            kubernetes: false,
        };
        let err = source(&[key("a.bC"), key("aB.c")]).unwrap_err();
        assert!(
            err.contains("a.bC and aB.c would both be keys::A_B_C"),
            "{err}"
        );
    }
}
