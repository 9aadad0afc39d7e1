//! `asogen show`, as `helm show` has it: each part is the chart's own file
//! (the values file with a header that says to edit it), and the values
//! file it prints is one the real tools accept as it is: the editor's
//! language server reports nothing, and Helm renders it to the objects
//! asogen renders.

use crate::common;

use common::{asogen, asogen_in, chart, helm_render, objects, root, text};

const NAMESPACE: &str = "azureserviceoperator-system";

fn show(what: &str) -> String {
    let out = asogen(&["show", what]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn chart_file(name: &str) -> String {
    std::fs::read_to_string(
        root()
            .join("generated/charts/azure-service-operator")
            .join(name),
    )
    .unwrap()
}

/// The chart's values.yaml without its header (the comment lines before
/// the first blank line).
fn body(values_yaml: &str) -> &str {
    values_yaml
        .split_once("\n\n")
        .expect("a header, then the keys")
        .1
}

#[test]
fn each_part_is_the_charts_own_file() {
    assert_eq!(show("chart"), chart_file("Chart.yaml"));
    assert_eq!(show("readme"), chart_file("README.md"));
    let values = show("values");
    assert_eq!(body(&values), body(&chart_file("values.yaml")));
    // The chart's file says not to edit it; a file to start from says to.
    assert!(chart_file("values.yaml").contains("do not edit"));
    assert!(!values.contains("do not edit"), "{values}");
    assert!(values.contains("Change what you need"), "{values}");
    assert_eq!(
        show("all"),
        [show("chart"), values, show("readme")].join("---\n")
    );
}

#[test]
fn an_unknown_part_is_refused_with_the_list() {
    let out = asogen(&["show", "crds"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    for part in ["all", "chart", "readme", "values"] {
        assert!(stderr.contains(part), "{stderr}");
    }
}

/// The file `show values` prints, with the schema beside it as the quick
/// start has it: the real yaml-language-server reports nothing, asogen
/// says it is valid, and the real Helm engine renders it to asogen's
/// objects, which are the defaults'.
#[test]
fn the_values_file_it_prints_is_valid_for_the_real_tools() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("my-values.yaml");
    std::fs::write(&values, show("values")).unwrap();
    let schema = dir.path().join("values.schema.json");
    let out = asogen_in(dir.path(), &["schema"]);
    std::fs::write(&schema, &out.stdout).unwrap();

    let diagnostics = common::yaml_language_server(&schema, std::slice::from_ref(&values));
    assert!(
        diagnostics.is_empty(),
        "the editor reports: {diagnostics:?}"
    );

    let report = asogen_in(dir.path(), &["validate", "-f", "my-values.yaml"]);
    assert_eq!(
        text(&report.stdout),
        "ok: valid: my-values.yaml over the chart defaults\n"
    );
    let ours = asogen_in(dir.path(), &["template", "-f", "my-values.yaml"]);
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    let defaults = asogen(&["template"]);
    assert_eq!(text(&ours.stdout), text(&defaults.stdout));

    let helm = helm_render(&[
        "template",
        &chart(),
        "-n",
        NAMESPACE,
        "--manifest",
        "-f",
        values.to_str().unwrap(),
    ]);
    assert_eq!(helm.status.code(), Some(0), "{}", text(&helm.stderr));
    common::assert_same_objects("show values", &text(&ours.stdout), &text(&helm.stdout));
    assert!(objects(&text(&helm.stdout)).len() > 100);
}

/// `validate` says what it checked, so `--set` is seen to be applied.
#[test]
fn validate_names_what_it_checked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), "replicaCount: 3\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["validate"], "the chart defaults (no -f or --set given)"),
        (
            &["validate", "--set", "replicaCount=3"],
            "1 --set flag over the chart defaults",
        ),
        (
            &[
                "validate",
                "-f",
                "a.yaml",
                "-f",
                "a.yaml",
                "--set",
                "replicaCount=3",
                "--set-string",
                "podLabels.a=b",
                "--set-string",
                "podLabels.c=d",
            ],
            "a.yaml, a.yaml, 1 --set flag and 2 --set-string flags over the chart defaults",
        ),
    ];
    for (args, said) in cases {
        let out = asogen_in(dir.path(), args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stdout)
        );
        assert_eq!(
            text(&out.stdout),
            format!("ok: valid: {said}\n"),
            "{args:?}"
        );
    }
}

/// A value of the wrong type from a flag gets help about flags, not files.
#[test]
fn a_flag_of_the_wrong_type_gets_help_about_flags() {
    for (flag, expression) in [
        ("--set", "replicaCount=abc"),
        ("--set-string", "replicaCount=3"),
        ("--set", "podLabels.a=7"),
        ("--set-json", "replicaCount=\"3\""),
    ] {
        let out = asogen(&["validate", flag, expression]);
        assert_eq!(out.status.code(), Some(1), "{flag} {expression}");
        let report = text(&out.stdout);
        assert!(
            report.contains("on the command line"),
            "{flag} {expression}: {report}"
        );
        assert!(report.contains("--set-string"), "{report}");
        assert!(!report.contains("quote strings"), "{report}");
    }
}

/// A values file that is not there: the help says -f is optional and how
/// to get one.
#[test]
fn a_missing_values_file_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["validate", "template"] {
        let out = asogen_in(dir.path(), &[command, "-f", "my-values.yaml"]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(report.contains("my-values.yaml"), "{report}");
        assert!(
            report.contains("asogen show values > my-values.yaml"),
            "{report}"
        );
        assert!(report.contains("-f is optional"), "{report}");
    }
}
