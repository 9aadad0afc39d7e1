//! `crdPattern` against the catalog: each `group/kind` entry must name an
//! API group the release serves (a glob must match one), or the controller
//! would install nothing for it, silently. The grammar and the served
//! groups are [`crate::catalog::crd_pattern`]'s.

use serde_json::Value;

use super::shape::closest;
use crate::catalog::Catalog;
use crate::catalog::crd_pattern::{
    HELP, KIND_SEPARATOR, Problem, classify, entries, served_groups,
};
use crate::diagnostics::Diagnostic;
use crate::read::Merged;

/// A problem with one entry, or None when it names served groups.
fn entry_problem(entry: &str, catalog: &Catalog) -> Option<(String, String)> {
    let groups = || served_groups(catalog).into_iter();
    let problem = classify(entry, &served_groups(catalog))?;
    let (group, kind) = entry.split_once(KIND_SEPARATOR).unwrap_or((entry, ""));
    match problem {
        Problem::NotGroupKind => {
            return Some((
                format!("crdPattern entry {entry:?} is not group/kind"),
                HELP.into(),
            ));
        }
        Problem::NoKind => {
            return Some((
                format!("crdPattern entry {entry:?} names no kind"),
                format!("write {group}/* for every kind of the group"),
            ));
        }
        Problem::NotServed => {}
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
    let key = crate::keys::CRD_PATTERN;
    let mut out = Vec::new();
    let value = values.get(key.path()).unwrap_or(&Value::Null);
    for (index, entry) in entries(value) {
        let pointer = match index {
            Some(i) => format!("{}/{i}", key.pointer()),
            None => key.pointer(),
        };
        if let Some((message, help)) = entry_problem(entry, catalog) {
            let mut d = merged.diagnostic(&pointer, false);
            d.key = helm_values::pointer::to_key_path(&pointer);
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
    }
}
