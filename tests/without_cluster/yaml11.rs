//! Values mean what they mean to Helm, which reads values files as YAML
//! 1.1: every file of tests/yaml11/ goes through asogen's reader and
//! through Helm's own loader (tests/tools/strvals), and its first line
//! says what must hold:
//!
//! - `same [warnings=N]`: both read the same values; asogen warns N times
//!   where YAML 1.2 tools would read otherwise;
//! - `both-refuse`: both refuse the file;
//! - `asogen-refuses REASON`: Helm reads it, asogen refuses on purpose.
//!
//! And the chart installs through the real Helm engine with YAML 1.1
//! booleans, rendering what `asogen template` renders.

use crate::common;

use std::path::PathBuf;

use asogen::read::{self, LoadError, ValuesInput};
use common::{asogen, assert_same_objects, chart, helm_merge_values, helm_render, root, text};
use serde_json::Value;

fn corpus() -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(root().join("tests/yaml11"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .map(|path| {
            let first = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_string();
            let expect = first
                .strip_prefix("# expect: ")
                .unwrap_or_else(|| panic!("{}: no `# expect:` line", path.display()))
                .to_string();
            (path, expect)
        })
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{} files", files.len());
    files
}

/// Numbers compared by value (Helm holds them as 64-bit floats).
fn normalized(value: &Value) -> Value {
    common::numbers_read(value, &|n| Value::from(n.as_f64().unwrap()))
}

#[test]
fn asogen_reads_values_files_as_helm_does() {
    let corpus = corpus();
    let cases: Vec<Vec<String>> = corpus
        .iter()
        .map(|(path, _)| vec!["-f".to_string(), path.display().to_string()])
        .collect();
    let answers = helm_merge_values(&root(), &cases);
    let mut failures = Vec::new();
    for ((path, expect), helm) in corpus.iter().zip(&answers) {
        let input = ValuesInput {
            files: vec![path.clone()],
            ..Default::default()
        };
        let ours = read::read_sources(&input);
        let name = path.file_name().unwrap().to_string_lossy();
        let helm_refuses = helm.get("error").is_some();
        let mut words = expect.split_whitespace();
        match (words.next(), ours) {
            (Some("same"), Ok(sources)) => {
                let theirs = helm
                    .get("values")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Default::default()));
                let values = read::user_values(&sources);
                if helm_refuses || normalized(&values) != normalized(&theirs) {
                    failures.push(format!("{name}:\n  Helm:   {helm}\n  asogen: {values}"));
                }
                let warnings = read::yaml_warnings(&sources).len();
                let expected = words
                    .next()
                    .and_then(|w| w.strip_prefix("warnings="))
                    .map_or(0, |n| n.parse().unwrap());
                if warnings != expected {
                    failures.push(format!("{name}: {warnings} warnings, expected {expected}"));
                }
            }
            (Some("both-refuse" | "asogen-refuses"), Ok(sources)) => failures.push(format!(
                "{name}: asogen accepts it: {}",
                read::user_values(&sources)
            )),
            (Some("both-refuse"), Err(_)) if !helm_refuses => {
                failures.push(format!("{name}: Helm accepts it: {helm}"))
            }
            (Some("asogen-refuses"), Err(_)) if helm_refuses => {
                failures.push(format!("{name}: Helm refuses it too; say both-refuse"))
            }
            (Some("same"), Err(err)) => {
                let (LoadError::Io(d) | LoadError::Invalid(d)) = err.error;
                failures.push(format!("{name}: asogen refuses: {}", d[0].message));
            }
            (_, Err(err)) => {
                // A refusal names the line and column, with help.
                let (LoadError::Io(d) | LoadError::Invalid(d)) = err.error;
                assert!(d[0].line.is_some() && d[0].help.is_some(), "{name}: {d:?}");
            }
            (other, _) => panic!("{name}: cannot read expectation {other:?}"),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_chart_installs_with_yaml_1_1_booleans_as_asogen_renders_it() {
    let file = root().join("tests/yaml11/chart-values.yaml");
    let file = file.to_str().unwrap();
    let helm = helm_render(&[
        "template",
        &chart(),
        "-n",
        "azureserviceoperator-system",
        "--manifest",
        "-f",
        file,
    ]);
    assert_eq!(
        helm.status.code(),
        Some(0),
        "Helm refused: {}",
        text(&helm.stderr)
    );
    let ours = asogen(&["template", "-f", file]);
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    assert!(
        text(&ours.stderr).contains("warning[yaml-1.1]"),
        "{}",
        text(&ours.stderr)
    );
    assert_same_objects(file, &text(&ours.stdout), &text(&helm.stdout));
    // metrics.enable: yes is true: the metrics Service is rendered.
    assert!(
        text(&ours.stdout)
            .contains("name: azureserviceoperator-controller-manager-metrics-service")
    );
}
