//! The values keys: one typed handle per key a values file may set.
//!
//! Everything that names a values key (the object descriptions, the rule
//! table, the chart guard, the checks, the values docs) takes a [`Key`]
//! from here, and a `Key` can only be made here: a key that does not exist
//! cannot be named (`keys::POD_ANNOTATIONZ` does not compile). The handles
//! are generated from the typed values (`src/values.rs`) into
//! `src/keys/all.rs` by `cargo xtask regen`
//! (`render::keys_source`): each name from its path, whether the value is
//! a Kubernetes object from its schema. The one fact about a key that the
//! schema cannot say, whether the chart evaluates it as a template, is the
//! list [`TEMPLATED`] below. Everything else is read from the typed values:
//! type, doc and default from their schema (`values::default_of`), whether
//! it is secret from `redact`. The table of every key with all of those is
//! `render::values_doc::key_table`, whose tests check the handles against
//! the schema both ways (every handle resolves; every key of the schema
//! has a handle).
//!
//! This module imports nothing of the crate: every stage may use it.
//! A `Key` is a path of the template language's `.Values` (`From`).

/// What a key's handle says besides its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flag {
    /// The value is a Kubernetes object or list (k8s-openapi typed): its
    /// fields are the API's, documented there, not one by one here.
    Kubernetes,
}

/// A values key: a dotted path from the values root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    path: &'static str,
    flags: &'static [Flag],
}

impl Key {
    /// The dotted path (`strategy.rollingUpdate.maxSurge`).
    pub const fn path(self) -> &'static str {
        self.path
    }

    /// The path's segments, root first.
    pub fn segments(self) -> impl Iterator<Item = &'static str> {
        self.path.split('.')
    }

    /// The last segment (`maxSurge`).
    pub fn leaf(self) -> &'static str {
        self.path.rsplit('.').next().unwrap_or(self.path)
    }

    /// The key that holds this one (`strategy.rollingUpdate` for
    /// `strategy.rollingUpdate.maxSurge`); None at the top level.
    pub fn parent(self) -> Option<Key> {
        let (parent, _) = self.path.rsplit_once('.')?;
        Some(
            *ALL.iter()
                .find(|key| key.path == parent)
                .expect("every key's parent is a key"),
        )
    }

    /// The key's JSON pointer (`/strategy/rollingUpdate/maxSurge`).
    pub fn pointer(self) -> String {
        self.segments()
            .map(|segment| format!("/{segment}"))
            .collect()
    }

    /// The key at a dotted path, if there is one.
    pub fn find(path: &str) -> Option<Key> {
        ALL.iter().copied().find(|key| key.path == path)
    }

    /// Whether the chart evaluates the value as a template.
    pub fn is_templated(self) -> bool {
        TEMPLATED.contains(&self)
    }

    /// Whether the value is a Kubernetes object or list.
    pub fn is_kubernetes(self) -> bool {
        self.flags.contains(&Flag::Kubernetes)
    }

    /// Whether other keys lie inside this one.
    pub fn has_children(self) -> bool {
        // Every key's parent is a key (a test holds it), so a path that
        // continues this one is a child's or below.
        ALL.iter().any(|key| {
            key.path
                .strip_prefix(self.path)
                .is_some_and(|rest| rest.starts_with('.'))
        })
    }
}

/// A key is a path of `.Values` to the template language: how the object
/// descriptions read it.
impl From<Key> for chart_template::ValuesPath {
    fn from(key: Key) -> Self {
        chart_template::ValuesPath::new(key.path)
    }
}

/// The words of a text that look like values keys, as prose does not: a
/// camelCase name (`podAnnotations`), or a dotted one under a top-level
/// key (`admissionPolicy.enable`; not a Kubernetes field path such as
/// `spec.strategy`), quotes and punctuation around them left out. For
/// checking that text written for people names keys that exist.
pub fn mentioned_in(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| "(),;:`\"'.".contains(c)))
        .filter(|word| {
            let letters = word.split('.').all(|segment| {
                segment.starts_with(|c: char| c.is_ascii_lowercase())
                    && segment.chars().all(|c| c.is_ascii_alphabetic())
            });
            let top = word.split('.').next().unwrap_or(word);
            let dotted_key = word.contains('.') && ALL.iter().any(|key| key.path == top);
            letters
                && (dotted_key
                    || (!word.contains('.') && word.chars().any(|c| c.is_ascii_uppercase())))
        })
        .collect()
}

/// Whether a word names a key, by its path or by its last segment
/// (`maxUnavailable` after `strategy.rollingUpdate.maxSurge`).
pub fn names_a_key(word: &str) -> bool {
    ALL.iter().any(|key| key.path == word || key.leaf() == word)
}

/// Every templated key, in the values' order.
pub fn templated() -> impl Iterator<Item = Key> {
    ALL.iter().copied().filter(|key| key.is_templated())
}

macro_rules! keys {
    ($($name:ident = $path:literal $([$($flag:ident),*])?;)*) => {
        $(
            #[doc = concat!("`", $path, "`")]
            pub const $name: Key = Key {
                path: $path,
                flags: &[$($(Flag::$flag),*)?],
            };
        )*
        /// Every key, in the order of the values (a parent before its
        /// children).
        pub const ALL: &[Key] = &[$($name),*];
    };
}

include!("keys/all.rs");

/// The keys the chart evaluates as templates (`tpl`), as upstream's
/// defaults do: a fact about the chart, not the schema, written here only.
const TEMPLATED: &[Key] = &[IMAGE_REPOSITORY, METRICS_ADDRESS];

/// The keys accepted and read by nothing, on purpose (their docs say so):
/// `global`, which Helm sets for a subchart, and `image.kubeRBACProxy`,
/// kept so that older values files still load. Every other key is read
/// by an object or a rule (`render::objects`'s `every_values_key_is_read`).
pub const ACCEPTED_UNUSED: &[Key] = &[GLOBAL, IMAGE_KUBE_RBAC_PROXY];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_parents_come_first() {
        for (index, key) in ALL.iter().enumerate() {
            assert!(
                ALL[..index].iter().all(|before| before.path != key.path),
                "{} twice",
                key.path
            );
            if let Some(parent) = key.parent() {
                assert!(
                    ALL[..index].contains(&parent),
                    "{} before its parent",
                    key.path
                );
            }
        }
        assert_eq!(
            STRATEGY_ROLLING_UPDATE_MAX_SURGE.parent(),
            Some(STRATEGY_ROLLING_UPDATE)
        );
        assert_eq!(STRATEGY_ROLLING_UPDATE_MAX_SURGE.leaf(), "maxSurge");
        assert_eq!(
            STRATEGY_ROLLING_UPDATE_MAX_SURGE.pointer(),
            "/strategy/rollingUpdate/maxSurge"
        );
        assert!(
            STRATEGY_ROLLING_UPDATE.has_children()
                && !STRATEGY_ROLLING_UPDATE_MAX_SURGE.has_children()
        );
        assert_eq!(
            templated().collect::<Vec<_>>(),
            [IMAGE_REPOSITORY, METRICS_ADDRESS]
        );
    }
}
