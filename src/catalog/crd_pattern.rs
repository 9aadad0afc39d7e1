//! The grammar of the `crdPattern` value and the API groups it may name,
//! written once: asogen's check (`check/crds.rs`) and the chart guard
//! (`rules/guard.rs`, which prints the same check as a Go template) both
//! take them from here, and the guard's tests run both on the same values.

use serde_json::Value;

use super::Catalog;

/// What separates entries in one string (a list item may hold several).
pub const ENTRY_SEPARATOR: &str = ";";

/// What separates an entry's group from its kind (the first one does).
pub const KIND_SEPARATOR: &str = "/";

/// In a group, any run of characters.
pub const WILDCARD: char = '*';

/// In a group, any one character.
pub const ONE_CHARACTER: char = '?';

/// The group of an entry as ASO 2.20.0 matches it (`internal/util/match`,
/// `newGlobRegex`): an RE2 pattern of the whole text, case folded, with
/// [`WILDCARD`] for any run of characters, [`ONE_CHARACTER`] for any one,
/// and every other character standing for itself. The chart guard builds
/// the same pattern with sprig's `regexQuoteMeta`.
pub fn group_regex(group: &str) -> String {
    let quoted = crate::describe::funcs::quote_meta(group)
        .replace(&quote(WILDCARD), ".*")
        .replace(&quote(ONE_CHARACTER), ".");
    format!("{CASE_FOLDED}^{quoted}$")
}

/// RE2's flag for case-folded matching, which ASO's patterns carry.
pub const CASE_FOLDED: &str = "(?i)";

/// A wildcard as Go's `regexp.QuoteMeta` writes it.
pub fn quote(wildcard: char) -> String {
    crate::describe::funcs::quote_meta(&wildcard.to_string())
}

/// The API groups the release serves: what an entry's group must match.
pub fn served_groups(catalog: &Catalog) -> Vec<&str> {
    catalog.groups.iter().map(|g| g.group.as_str()).collect()
}

/// The entries of a `crdPattern` value: a string's `;`-separated entries,
/// or each string item's (with the item's index); white space around an
/// entry is dropped, and so are empty entries. Other values hold none.
pub fn entries(value: &Value) -> Vec<(Option<usize>, &str)> {
    let items: Vec<(Option<usize>, &str)> = match value {
        Value::String(text) => vec![(None, text.as_str())],
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| Some((Some(i), item.as_str()?)))
            .collect(),
        _ => Vec::new(),
    };
    items
        .into_iter()
        .flat_map(|(index, text)| {
            text.split(ENTRY_SEPARATOR)
                .map(str::trim)
                .filter(|entry| !entry.is_empty())
                .map(move |entry| (index, entry))
        })
        .collect()
}

/// The group `glob` compiled as ASO's controller matches it
/// ([`group_regex`]); quoted, it always compiles, and its size is the
/// value's, which the values reader bounds.
fn group_matcher(glob: &str) -> Option<regex::Regex> {
    regex::Regex::new(&group_regex(glob)).ok()
}

#[cfg(test)]
fn glob_matches(glob: &str, text: &str) -> bool {
    group_matcher(glob).is_some_and(|re| re.is_match(text))
}

/// How entries are written.
pub const HELP: &str = "write entries as group/kind, e.g. resources.azure.com/*";

/// Why an entry is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// No [`KIND_SEPARATOR`].
    NotGroupKind,
    /// Nothing after the first [`KIND_SEPARATOR`].
    NoKind,
    /// The group matches no served group.
    NotServed,
}

impl Problem {
    /// The chart guard's message, `%q` standing for the entry.
    pub fn guard_text(self) -> String {
        let what = match self {
            Problem::NotGroupKind => "is not group/kind",
            Problem::NoKind => "names no kind",
            Problem::NotServed => "names no API group the release serves",
        };
        format!("crdPattern entry %q {what}; help: {HELP}")
    }
}

/// Why `entry` is refused, if it is.
pub fn classify(entry: &str, served: &[&str]) -> Option<Problem> {
    let Some((group, kind)) = entry.split_once(KIND_SEPARATOR) else {
        return Some(Problem::NotGroupKind);
    };
    if kind.is_empty() {
        Some(Problem::NoKind)
    } else if group_matcher(group).is_some_and(|re| served.iter().any(|s| re.is_match(s))) {
        None
    } else {
        Some(Problem::NotServed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_and_globs_match_as_the_controller_reads_them() {
        assert!(glob_matches("a*c*", "abcde"));
        assert!(!glob_matches("a*x", "abc"));
        // ASO's glob_matcher_test.go, and its case folding
        assert!(glob_matches("*", "foobarbaz"));
        assert!(glob_matches("foo?", "fool"));
        assert!(glob_matches("foo?", "foo7"));
        assert!(!glob_matches("foo?", "foo"));
        assert!(glob_matches("Resources.Azure.COM", "resources.azure.com"));
        assert!(glob_matches("resources.azure.co?", "resources.azure.com"));
        assert!(!glob_matches("resources.azure.c?", "resources.azure.com"));
        // every other character stands for itself
        assert!(!glob_matches(
            "resources.azure.co[m]",
            "resources.azure.com"
        ));
        assert!(!glob_matches("resources.azure.co.", "resources.azure.com"));
        assert_eq!(
            entries(&serde_json::json!([" a/b ;; c", 3, "d/*"])),
            [(Some(0), "a/b"), (Some(0), "c"), (Some(2), "d/*")]
        );
        assert_eq!(entries(&serde_json::json!(" ; ")), []);
    }
}
