//! Replays the fuzzing corpus and every saved fuzz regression (fuzz/) in
//! process, with the fuzz targets' checks: loading, checking and formatting
//! never panic, and a valid values file renders a manifest that YAML reads
//! back as exactly the objects rendered. The fuzzers themselves need
//! cargo-fuzz (fuzz/run-short); this keeps what they found fixed.

use crate::common;

use asogen::check::Checker;
use asogen::diagnostics;
use asogen::read::{self, LoadError};
use asogen::render::{self, objects};
use serde::Deserialize as _;

const NAMESPACE: &str = "azureserviceoperator-system";

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = common::root().join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn replay(checker: &Checker, path: &std::path::Path) {
    let bytes = std::fs::read(path).unwrap();
    let Ok(text) = String::from_utf8(bytes) else {
        return;
    };
    let name = path.display().to_string();
    let sources = match read::parse_source(name.clone(), text.clone()) {
        Ok(source) => vec![source],
        Err(LoadError::Io(d) | LoadError::Invalid(d)) => {
            assert!(!d.is_empty(), "{name}: an error without a diagnostic");
            return;
        }
    };
    let model = match checker.check(&sources, NAMESPACE) {
        Ok(model) => model,
        Err(d) => {
            assert!(!d.is_empty(), "{name}: an error without a diagnostic");
            let shown = |_: &str| Some(text.clone());
            let _ = diagnostics::format_human(&d, &shown, true);
            let json: serde_json::Value =
                serde_json::from_str(&diagnostics::format_json(&d)).unwrap();
            assert_eq!(json.as_array().unwrap().len(), d.len(), "{name}");
            let github = diagnostics::format_github(&d);
            assert_eq!(github.lines().count(), d.len(), "{name}: {github}");
            return;
        }
    };
    let manifest = render::manifest(&model, true, "");
    let install = objects::Install::new(&model, objects::ASOGEN);
    let mut expected = vec![install.namespace()];
    expected.extend(install.objects());
    let read_back: Vec<serde_json::Value> = serde_yaml::Deserializer::from_str(&manifest)
        .map(|doc| {
            serde_json::Value::deserialize(doc)
                .unwrap_or_else(|e| panic!("{name}: the manifest is not valid YAML: {e}"))
        })
        .collect();
    assert_eq!(
        read_back, expected,
        "{name}: the manifest reads back differently"
    );
}

#[test]
fn the_fuzz_corpus_and_regressions_replay_cleanly() {
    let checker = Checker::new();
    let mut count = 0;
    for dir in [
        "fuzz/regressions",
        "fuzz/corpus/values",
        "fuzz/corpus/template",
    ] {
        for path in files(dir) {
            replay(&checker, &path);
            count += 1;
        }
    }
    assert!(count > 100, "only {count} files replayed");
}

#[test]
fn the_set_corpus_never_panics() {
    let checker = Checker::new();
    for path in files("fuzz/corpus/set") {
        let Ok(text) = String::from_utf8(std::fs::read(&path).unwrap()) else {
            continue;
        };
        for line in text.lines() {
            match read::set_source(line) {
                Ok(source) => {
                    let _ = checker.check(&[source], NAMESPACE);
                }
                Err(LoadError::Io(d) | LoadError::Invalid(d)) => assert!(!d.is_empty()),
            }
        }
    }
}
