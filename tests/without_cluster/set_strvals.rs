//! `--set` and its siblings mean what they mean to Helm: every case of
//! tests/strvals/corpus.jsonl goes through asogen's reader and through
//! Helm's own merge of the same flags (tests/tools/strvals, built with Go
//! on first use), and the values must be equal, or both refuse. Cases that
//! carry their expected values check asogen without Go too.

use crate::common;

use asogen::read::{self, LoadError, ValuesInput};
use common::{asogen, helm_merge_values, root, text};
use serde_json::Value;

struct Case {
    line: usize,
    args: Vec<String>,
    values: Option<Value>,
    error: bool,
}

fn corpus() -> Vec<Case> {
    let text = std::fs::read_to_string(root().join("tests/strvals/corpus.jsonl")).unwrap();
    let cases: Vec<Case> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
        .map(|(i, line)| {
            let case: Value = serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("corpus line {}: {err}", i + 1));
            Case {
                line: i + 1,
                args: serde_json::from_value(case["args"].clone()).unwrap(),
                values: case.get("values").cloned(),
                error: case["error"].as_bool().unwrap_or(false),
            }
        })
        .collect();
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    cases
}

fn input(args: &[String]) -> ValuesInput {
    let mut input = ValuesInput::default();
    for pair in args.chunks(2) {
        let value = pair[1].clone();
        match pair[0].as_str() {
            "-f" | "--values" => input.files.push(value.into()),
            "--set" => input.set.push(value),
            "--set-string" => input.set_string.push(value),
            "--set-file" => input.set_file.push(value),
            "--set-json" => input.set_json.push(value),
            "--set-literal" => input.set_literal.push(value),
            other => panic!("unknown flag {other}"),
        }
    }
    input
}

/// asogen's values before the chart defaults, or its first message.
fn ours(args: &[String]) -> Result<Value, String> {
    match read::read_sources(&input(args)) {
        Ok(sources) => Ok(read::user_values(&sources)),
        Err(err) => match err.error {
            LoadError::Io(d) | LoadError::Invalid(d) => Err(d[0].message.clone()),
        },
    }
}

/// Numbers compared as the 64-bit floats or integers they hold.
fn normalized(value: &Value) -> Value {
    common::numbers_read(value, &|n| {
        if n.as_i64().is_none() && n.as_u64().is_none() {
            let f = n.as_f64().unwrap();
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                Value::from(f as i64)
            } else {
                Value::from(f)
            }
        } else if n.as_u64().is_some_and(|u| u > i64::MAX as u64) {
            Value::from(n.as_f64().unwrap())
        } else {
            Value::Number(n.clone())
        }
    })
}

#[test]
fn the_corpus_expectations_hold_without_helm() {
    let mut failures = Vec::new();
    for case in corpus() {
        let got = ours(&case.args);
        if let Some(expected) = &case.values
            && got.as_ref() != Ok(expected)
        {
            failures.push(format!(
                "line {} {:?}: expected {expected}, got {got:?}",
                case.line, case.args
            ));
        }
        if case.error && got.is_ok() {
            failures.push(format!("line {} {:?}: accepted", case.line, case.args));
        }
        if let Err(message) = &got {
            // A refused expression names its flag.
            assert!(
                case.args
                    .iter()
                    .step_by(2)
                    .any(|f| message.contains(f.as_str()))
                    || message.contains("tests/strvals"),
                "line {}: {message}",
                case.line
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn asogen_merges_values_flags_exactly_as_helm_does() {
    let cases = corpus();
    let args: Vec<Vec<String>> = cases.iter().map(|case| case.args.clone()).collect();
    let answers = helm_merge_values(&root(), &args);
    let mut failures = Vec::new();
    for (case, helm) in cases.iter().zip(&answers) {
        let ours = ours(&case.args);
        match (helm.get("error"), &ours) {
            (Some(_), Err(_)) => {}
            (Some(error), Ok(values)) => failures.push(format!(
                "line {} {:?}: Helm refuses ({error}), asogen gives {values}",
                case.line, case.args
            )),
            (None, Err(message)) => failures.push(format!(
                "line {} {:?}: Helm gives {}, asogen refuses: {message}",
                case.line, case.args, helm["values"]
            )),
            (None, Ok(values)) => {
                let theirs = helm
                    .get("values")
                    .cloned()
                    .unwrap_or(Value::Object(Default::default()));
                if normalized(values) != normalized(&theirs) {
                    failures.push(format!(
                        "line {} {:?}:\n  Helm:   {theirs}\n  asogen: {values}",
                        case.line, case.args
                    ));
                }
            }
        }
        if let (Some(expected), Some(theirs)) = (&case.values, helm.get("values")) {
            assert_eq!(
                normalized(expected),
                normalized(theirs),
                "line {}: the corpus expectation is not what Helm gives",
                case.line
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from Helm:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn the_rendered_secret_carries_the_whole_secret() {
    let out = asogen(&[
        "template",
        "--set",
        "azureSubscriptionID=sub,azureTenantID=tenant,azureClientID=client",
        "--set",
        "azureClientSecret=p4ss #w0rd",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let secret = common::objects(&text(&out.stdout))
        .into_iter()
        .find(|((kind, _, _), _)| kind == "Secret")
        .expect("a Secret")
        .1;
    // base64 of `p4ss #w0rd`
    assert_eq!(secret["data"]["AZURE_CLIENT_SECRET"], "cDRzcyAjdzByZA==");
}

#[test]
fn a_bad_expression_names_the_flag_and_hides_the_secret() {
    let out = asogen(&["validate", "--set", "azureClientSecret=p4ss,w0rd"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("--set `azureClientSecret=<redacted>`: not KEY=VALUE pairs"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("p4ss") && !stdout.contains("w0rd"),
        "{stdout}"
    );
    assert!(stdout.contains("help: write KEY=VALUE"), "{stdout}");
}

#[test]
fn values_come_from_standard_input_once() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_asogen"))
            .args(args)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"replicaCount: 3\nstrategy:\n  type: RollingUpdate\n")
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(&["validate", "--values", "-"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("<stdin>:3:9"), "{stdout}");
    assert!(stdout.contains("ha-requires-recreate"), "{stdout}");
    let out = run(&["validate", "-f", "-", "--set-file", "azureClientSecret=-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).contains("standard input is read once"));
}

#[test]
fn files_merge_as_helm_merges_them_before_the_defaults() {
    // A null in one file and a map in a later one: Helm merges the files
    // first, so the map still merges with the chart defaults.
    let files: Vec<String> = ["merge-1-port", "merge-2-null", "merge-3-enable"]
        .iter()
        .map(|name| {
            root()
                .join(format!("tests/strvals/{name}.yaml"))
                .display()
                .to_string()
        })
        .collect();
    let mut args = vec!["template".to_string()];
    for file in &files {
        args.push("-f".into());
        args.push(file.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let ours = asogen(&args);
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    let mut helm_args = vec![
        "template",
        "-n",
        "azureserviceoperator-system",
        "--manifest",
    ];
    let chart = common::chart();
    helm_args.insert(1, &chart);
    helm_args.extend(&args[1..]);
    let helm = common::helm_render(&helm_args);
    assert_eq!(helm.status.code(), Some(0), "{}", text(&helm.stderr));
    common::assert_same_objects("merge", &text(&ours.stdout), &text(&helm.stdout));
}
