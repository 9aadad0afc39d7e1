//! Names Kubernetes refuses are refused before anything is rendered:
//! `-n` as an RFC 1123 label, `serviceAccount.name` and
//! `priorityClassName` as subdomains (also in the chart's schema, so Helm
//! and the editor agree), and `--create-namespace` never emits a namespace
//! every cluster has. Driven by tests/names/cases.jsonl.

use crate::common;

use common::{asogen, text};
use serde_json::Value;

#[test]
fn names_are_checked_as_the_api_server_checks_them() {
    let corpus = std::fs::read_to_string(common::root().join("tests/names/cases.jsonl")).unwrap();
    let mut count = 0;
    for line in corpus.lines().filter(|l| !l.starts_with('#')) {
        let case: Value = serde_json::from_str(line).unwrap();
        let args: Vec<String> = serde_json::from_value(case["args"].clone()).unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = asogen(&args);
        let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(
            out.status.code(),
            case["exit"].as_i64().map(|c| c as i32),
            "{args:?}: {shown}"
        );
        assert!(
            shown.contains(case["contains"].as_str().unwrap()),
            "{args:?}: {shown}"
        );
        if out.status.code() != Some(0) {
            assert!(shown.contains("help:"), "{args:?}: {shown}");
        }
        count += 1;
    }
    assert!(count >= 20, "{count} cases");
}

#[test]
fn helm_refuses_the_same_names_through_the_schema() {
    let file = |name: &str| {
        common::root()
            .join("tests/names")
            .join(name)
            .display()
            .to_string()
    };
    let out = common::helm_render(&[
        "template",
        &common::chart(),
        "-f",
        &file("service-account.yaml"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("serviceAccount"),
        "{}",
        text(&out.stderr)
    );
    let out = common::helm_render(&[
        "template",
        &common::chart(),
        "-f",
        &file("valid-names.yaml"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
