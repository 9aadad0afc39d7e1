//! The one-shot checker (`Checker::for_sources`, whose validator covers only
//! the top-level keys the values write) must report exactly what the full
//! checker reports, and yield the same model, for every values file we
//! keep: the shared-style cases, the bad-input corpus, the fuzz corpora and
//! the profiles. `render`, `template` and `validate` of one file use it.

use crate::common;

use asogen::check::Checker;
use asogen::model::Release;
use asogen::read::{self, LoadError, Source};
use asogen::render;

const NAMESPACE: &str = "azureserviceoperator-system";

fn values_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "tests/cases",
        "tests/bad-input",
        "values/profiles",
        "examples",
        "fuzz/regressions",
        "fuzz/corpus/values",
        "fuzz/corpus/template",
    ] {
        let dir = common::root().join(dir);
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn sources(path: &std::path::Path) -> Option<Vec<Source>> {
    let text = String::from_utf8(std::fs::read(path).ok()?).ok()?;
    match read::parse_source(path.display().to_string(), text) {
        Ok(source) => Some(vec![source]),
        Err(LoadError::Io(_) | LoadError::Invalid(_)) => None,
    }
}

#[test]
fn the_narrowed_checker_agrees_with_the_full_one_on_every_kept_file() {
    let full = Checker::new();
    let (mut accepted, mut refused) = (0, 0);
    for path in values_files() {
        let Some(sources) = sources(&path) else {
            continue;
        };
        let narrowed = Checker::for_sources(Release::default(), &sources);
        let name = path.display();
        match (
            full.check(&sources, NAMESPACE),
            narrowed.check(&sources, NAMESPACE),
        ) {
            (Ok(a), Ok(b)) => {
                assert_eq!(
                    render::manifest(&a, true, ""),
                    render::manifest(&b, true, ""),
                    "{name}: the models differ"
                );
                accepted += 1;
            }
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "{name}: the diagnostics differ");
                refused += 1;
            }
            (a, b) => panic!(
                "{name}: full says {:?}, narrowed says {:?}",
                a.map(|_| "ok"),
                b.map(|_| "ok")
            ),
        }
    }
    // Both kinds in numbers, so the comparison above means something.
    assert!(
        accepted > 50 && refused > 50,
        "accepted {accepted}, refused {refused}"
    );
}

#[test]
fn the_narrowed_schema_drops_what_nobody_wrote() {
    let narrowed = asogen::schema::structural_schema_for_keys(["replicaCount", "strategy"]);
    let properties = narrowed["properties"].as_object().unwrap();
    assert_eq!(properties["affinity"], serde_json::Value::Bool(true));
    assert!(properties["strategy"].is_object());
    let definitions = narrowed["definitions"].as_object().unwrap();
    assert!(definitions.contains_key("StrategyValues"));
    assert!(definitions.contains_key("RollingUpdateValues"));
    assert!(
        !definitions.keys().any(|k| k.contains("Affinity")),
        "{:?}",
        definitions.keys()
    );
    // Every property the full schema has is still named (unknown keys are
    // still refused).
    let full = asogen::schema::structural_schema();
    assert_eq!(
        properties.keys().collect::<Vec<_>>(),
        full["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );
}
