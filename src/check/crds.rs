//! `crdPattern` against the catalog: each `group/kind` entry must name an
//! API group the release serves (a glob must match one), or the controller
//! would install nothing for it, silently.

use serde_json::Value;

use super::shape::closest;
use crate::catalog::Catalog;
use crate::diagnostics::Diagnostic;
use crate::read::Merged;

/// Whether `glob` (with `*` for any run of characters) matches `text`.
fn glob_matches(glob: &str, text: &str) -> bool {
    match glob.split_once('*') {
        None => glob == text,
        Some((head, tail)) => {
            text.starts_with(head)
                && (0..=text.len() - head.len()).any(|skip| {
                    text.is_char_boundary(head.len() + skip)
                        && glob_matches(tail, &text[head.len() + skip..])
                })
        }
    }
}

/// How entries are written.
const HELP: &str = "write entries as group/kind, e.g. resources.azure.com/*";

/// A problem with one entry, or None when it names served groups.
fn entry_problem(entry: &str, catalog: &Catalog) -> Option<(String, String)> {
    let groups = || catalog.groups.iter().map(|g| g.group.as_str());
    let Some((group, kind)) = entry.split_once('/') else {
        return Some((
            format!("crdPattern entry {entry:?} is not group/kind"),
            HELP.into(),
        ));
    };
    if kind.is_empty() || groups().any(|served| glob_matches(group, served)) {
        return kind.is_empty().then(|| {
            (
                format!("crdPattern entry {entry:?} names no kind"),
                format!("write {group}/* for every kind of the group"),
            )
        });
    }
    let help = match closest(group, groups()) {
        Some(near) => format!("did you mean `{near}/{kind}`?"),
        None => format!(
            "ASO {} serves: {}",
            catalog.release,
            groups().collect::<Vec<_>>().join(", ")
        ),
    };
    Some((
        format!(
            "crdPattern entry {entry:?}: ASO {} serves no API group {group:?}",
            catalog.release
        ),
        help,
    ))
}

/// One diagnostic per `crdPattern` entry that names no served group.
pub fn crd_pattern_diagnostics(
    merged: &Merged,
    values: &Value,
    catalog: &Catalog,
) -> Vec<Diagnostic> {
    // A string holds `;`-separated entries; a list holds one entry each
    // (an item may still hold several).
    let key = crate::keys::CRD_PATTERN;
    let items: Vec<(String, &str)> = match values.get(key.path()) {
        Some(Value::String(text)) => vec![(key.pointer(), text.as_str())],
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| Some((format!("{}/{i}", key.pointer()), item.as_str()?)))
            .collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for (pointer, text) in items {
        for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            if let Some((message, help)) = entry_problem(entry, catalog) {
                let mut d = merged.diagnostic(&pointer, false);
                d.key = crate::pointer::to_key_path(&pointer);
                d.keyword = Some(key.path().into());
                // The entry is quoted (`{:?}`); a file's content is not shown.
                let hidden = merged.hides_value(&pointer);
                d.message = if hidden {
                    crate::redact::without_quoted_text(&message)
                } else {
                    message
                };
                d.help = Some(if hidden { HELP.to_string() } else { help });
                out.push(d);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_checked_against_the_served_groups() {
        let catalog = Catalog::builtin();
        assert_eq!(entry_problem("resources.azure.com/*", &catalog), None);
        assert_eq!(entry_problem("*.azure.com/*", &catalog), None);
        assert_eq!(
            entry_problem("network.frontdoor.azure.com/*", &catalog),
            None
        );
        let (message, help) = entry_problem("resorces.azure.com/*", &catalog).unwrap();
        assert!(message.contains("serves no API group"), "{message}");
        assert_eq!(help, "did you mean `resources.azure.com/*`?");
        assert!(entry_problem("resources.azure.com", &catalog).is_some());
        assert!(entry_problem("resources.azure.com/", &catalog).is_some());
        assert!(glob_matches("a*c*", "abcde"));
        assert!(!glob_matches("a*x", "abc"));
    }
}
