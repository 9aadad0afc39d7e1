//! Helm's and kubectl's flags on asogen's commands, run like a user runs
//! them: `template`'s Helm-shaped flags, one `-o/--output` convention,
//! the binary working outside the repository, and completions.

use crate::common;

use std::path::Path;

use common::{asogen, asogen_in, asogen_with_env, root, text};
use serde_json::Value;

/// The kinds of a YAML stream, in order.
fn kinds(stream: &str) -> Vec<String> {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("kind: "))
        .map(str::to_string)
        .collect()
}

fn ok(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn usage_error(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    text(&out.stderr)
}

#[test]
fn show_only_prints_the_objects_of_the_named_templates() {
    let out = ok(&asogen(&["template", "-s", "templates/deployment.yaml"]));
    assert_eq!(kinds(&out), ["Deployment"]);
    // Helm's chart-prefixed form, several -s and a glob.
    let out = ok(&asogen(&[
        "template",
        "--show-only",
        "azure-service-operator/templates/serviceaccount.yaml",
        "-s",
        "templates/networkpolicy-*.yaml",
    ]));
    assert_eq!(
        kinds(&out),
        ["NetworkPolicy", "NetworkPolicy", "ServiceAccount"]
    );
    let err = usage_error(&asogen(&["template", "-s", "templates/nope.yaml"]));
    assert!(
        err.contains("error: could not find template templates/nope.yaml in chart\n"),
        "{err}"
    );
    assert!(err.contains("help: give a path under the chart"), "{err}");
    // A template of the chart that renders nothing for these values.
    let err = usage_error(&asogen(&["template", "-s", "templates/azureidentity.yaml"]));
    assert!(err.contains("it renders nothing for these values"), "{err}");
}

/// `--show-only` patterns mean what Go's `filepath.Match` makes of them in
/// the real Helm CLI: classes, ranges, escapes and `?`, none crossing `/`;
/// a malformed pattern matches nothing.
#[test]
fn show_only_patterns_select_what_helm_selects() {
    let helm = common::helm_cli();
    let chart = root().join("generated/charts/azure-service-operator");
    let selected = |output: &std::process::Output| -> Option<Vec<String>> {
        output
            .status
            .success()
            .then(|| kinds(&text(&output.stdout)))
    };
    for pattern in [
        "templates/[d]eployment.yaml",
        "templates/[^x]eployment.yaml",
        "templates/[c-e]eployment.yaml",
        "templates/deploymen?.yaml",
        "templates/deploy\\ment.yaml",
        "templates/networkpolicy-[a-m]*.yaml",
        "templates/[x-z]eployment.yaml",
        "templates?deployment.yaml",
        "templates/[]eployment.yaml",
        "templates/deployment.yaml\\",
    ] {
        let ours = asogen(&["template", "-s", pattern]);
        let theirs = common::tool(&helm)
            .args(["template", "azureserviceoperator"])
            .arg(&chart)
            .args(["-n", "azureserviceoperator-system", "-s", pattern])
            .output()
            .unwrap();
        assert_eq!(
            selected(&ours),
            selected(&theirs),
            "{pattern}: asogen {} / helm {}",
            text(&ours.stderr),
            text(&theirs.stderr)
        );
    }
}

#[test]
fn output_dir_writes_one_file_per_template_as_helm_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = asogen_in(dir.path(), &["template", "--output-dir", "out"]);
    ok(&out);
    let templates = dir.path().join("out/azure-service-operator/templates");
    let deployment = std::fs::read_to_string(templates.join("deployment.yaml")).unwrap();
    assert!(
        deployment.starts_with(
            "---\n# Source: azure-service-operator/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\n"
        ),
        "{deployment}"
    );
    // Every object of the manifest, each in its template's file.
    let manifest = ok(&asogen(&["template"]));
    let mut written = 0;
    for entry in std::fs::read_dir(&templates).unwrap() {
        written += kinds(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).len();
    }
    assert_eq!(written, kinds(&manifest).len());
    // The folder's marker: a second run replaces what the first wrote.
    assert!(dir.path().join("out/.asogen-output").is_file());
    ok(&asogen_in(
        dir.path(),
        &[
            "template",
            "--output-dir",
            "out",
            "-s",
            "templates/deployment.yaml",
        ],
    ));
    assert!(!templates.join("serviceaccount.yaml").exists());
    // A folder of someone else's files is refused, and left as it was.
    std::fs::create_dir(dir.path().join("mine")).unwrap();
    std::fs::write(dir.path().join("mine/notes.txt"), "mine").unwrap();
    usage_error(&asogen_in(
        dir.path(),
        &["template", "--output-dir", "mine"],
    ));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mine/notes.txt")).unwrap(),
        "mine"
    );
    // The Namespace, which no chart template renders, beside templates/.
    ok(&asogen_in(
        dir.path(),
        &[
            "template",
            "--output-dir",
            "ns",
            "--create-namespace",
            "-n",
            "aso",
        ],
    ));
    let namespace =
        std::fs::read_to_string(dir.path().join("ns/azure-service-operator/namespace.yaml"))
            .unwrap();
    assert_eq!(kinds(&namespace), ["Namespace"]);
    // --release-name puts the release name in the path, as Helm does.
    ok(&asogen_in(
        dir.path(),
        &["template", "aso", "--output-dir", "named", "--release-name"],
    ));
    assert!(
        dir.path()
            .join("named/aso/azure-service-operator/templates/deployment.yaml")
            .is_file()
    );
    let err = usage_error(&asogen(&["template", "--output-dir", "x", "-o", "json"]));
    assert!(err.contains("cannot be used with -o json"), "{err}");
}

#[test]
fn kube_version_decides_whether_the_guard_is_served() {
    let policies = |args: &[&str]| {
        let mut all = vec!["template"];
        all.extend(args);
        kinds(&ok(&asogen(&all)))
            .iter()
            .filter(|kind| kind.starts_with("ValidatingAdmissionPolicy"))
            .count()
    };
    assert_eq!(policies(&[]), 4);
    assert_eq!(policies(&["--kube-version", "1.30"]), 4);
    assert_eq!(policies(&["--kube-version", "v1.29.4"]), 0);
    assert_eq!(
        policies(&[
            "--kube-version",
            "1.29",
            "--api-versions",
            "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy,apps/v1"
        ]),
        4
    );
    let err = usage_error(&asogen(&["template", "--kube-version", "latest"]));
    assert!(
        err.contains("--kube-version \"latest\" is not a Kubernetes version"),
        "{err}"
    );
    let err = usage_error(&asogen(&["template", "--api-versions", "v1 beta"]));
    assert!(
        err.contains("is not VERSION, GROUP/VERSION or GROUP/VERSION/KIND"),
        "{err}"
    );
}

#[test]
fn release_name_is_the_instance_label() {
    let out = ok(&asogen(&[
        "template",
        "aso-prod",
        "-s",
        "templates/deployment.yaml",
    ]));
    assert!(
        out.contains("app.kubernetes.io/instance: aso-prod\n"),
        "{out}"
    );
    // Object names stay upstream's.
    assert!(
        out.contains("name: azureserviceoperator-controller-manager\n"),
        "{out}"
    );
    let err = usage_error(&asogen(&["template", "Not_A_Name"]));
    assert!(
        err.contains("release name \"Not_A_Name\" is not valid"),
        "{err}"
    );
    let err = usage_error(&asogen(&["template", "./azure-service-operator"]));
    assert!(err.contains("asogen is the chart"), "{err}");
    // `helm template NAME CHART`: the CHART has no place.
    usage_error(&asogen(&["template", "aso", "azure-service-operator"]));
}

#[test]
fn helm_flags_without_meaning_are_explained() {
    let err = usage_error(&asogen(&["template", "--skip-schema-validation"]));
    assert!(
        err.contains("--skip-schema-validation has no meaning for asogen"),
        "{err}"
    );
    assert!(err.contains("help: "), "{err}");
    // --debug is accepted and changes nothing.
    assert_eq!(
        ok(&asogen(&["template", "--debug"])),
        ok(&asogen(&["template"]))
    );
    let help = ok(&asogen(&["template", "--help"]));
    for flag in [
        "--include-crds",
        "--repo",
        "--version",
        "--dependency-update",
        "--post-renderer",
        "--validate",
        "--is-upgrade",
        "--no-hooks",
        "--name-template",
    ] {
        assert!(help.contains(flag), "{flag} is not explained:\n{help}");
    }
    assert!(help.contains("asogen ships no CRDs"), "{help}");
}

#[test]
fn template_json_is_one_kubectl_list() {
    let out = ok(&asogen(&[
        "template",
        "-o",
        "json",
        "--create-namespace",
        "-n",
        "aso",
    ]));
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items[0]["kind"], "Namespace");
    let yaml = ok(&asogen(&["template", "--create-namespace", "-n", "aso"]));
    assert_eq!(items.len(), kinds(&yaml).len());
    let one = ok(&asogen(&[
        "template",
        "--output",
        "json",
        "-s",
        "templates/deployment.yaml",
    ]));
    let one: Value = serde_json::from_str(&one).unwrap();
    assert_eq!(one["items"][0]["kind"], "Deployment");
    assert_eq!(one["items"].as_array().unwrap().len(), 1);
}

#[test]
fn every_command_takes_dash_o_and_lists_its_formats() {
    let values = root().join("values/profiles/ha.yaml");
    let values = values.to_str().unwrap();
    let json = ok(&asogen(&["validate", "-o", "json", "-f", values]));
    assert_eq!(json.trim(), "[]");
    // --format stays as an alias.
    assert_eq!(
        ok(&asogen(&["validate", "--format", "json", "-f", values])),
        json
    );
    ok(&asogen(&["validate", "--output", "github", "-f", values]));
    let notes = ok(&asogen(&[
        "diff",
        "-o",
        "markdown",
        "generated/manifests/ha.yaml",
        "generated/manifests/ha.yaml",
    ]));
    assert!(!notes.is_empty());
    for (args, valid) in [
        (
            vec!["template", "-o", "human"],
            "[possible values: yaml, json]",
        ),
        (
            vec!["validate", "-o", "yaml"],
            "[possible values: human, json, github]",
        ),
        (
            vec!["diff", "a", "b", "-o", "github"],
            "[possible values: human, json, markdown]",
        ),
        (
            vec!["upgrade-check", "--live", "x", "-o", "markdown"],
            "[possible values: human, json]",
        ),
    ] {
        let err = usage_error(&asogen(&args));
        assert!(err.contains("invalid value"), "{args:?}: {err}");
        assert!(err.contains(valid), "{args:?}: {err}");
    }
}

#[test]
fn fleet_flags_that_print_one_manifest_are_refused_in_fleet_mode() {
    for flag in [
        &["-o", "json"][..],
        &["-s", "templates/deployment.yaml"][..],
    ] {
        let mut args = vec!["template", "--values-dir", "values/profiles", "--out", "x"];
        args.extend(flag);
        let err = usage_error(&asogen(&args));
        assert!(err.contains("cannot be used with --values-dir"), "{err}");
    }
}

#[test]
fn fleet_progress_stays_off_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = root().join("values/profiles");
    let out = asogen_in(
        dir.path(),
        &[
            "template",
            "--values-dir",
            profiles.to_str().unwrap(),
            "--out",
            "fleet",
        ],
    );
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains('\r'), "{stderr:?}");
    // One values file per profile.
    let count = std::fs::read_dir(&profiles).unwrap().count();
    assert!(count >= 3, "{count} profiles");
    assert!(
        stderr.starts_with(&format!("rendered {count} of {count} values files")),
        "{stderr:?}"
    );
}

/// A released binary works anywhere: nothing read from the repository.
#[test]
fn the_binary_works_outside_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("my-values.yaml");
    std::fs::write(&values, "replicaCount: 3\n").unwrap();
    let manifest = ok(&asogen_in(
        dir.path(),
        &["template", "-f", "my-values.yaml"],
    ));
    assert!(manifest.contains("replicas: 3\n"), "{manifest}");
    let report = ok(&asogen_in(
        dir.path(),
        &["validate", "-f", "my-values.yaml"],
    ));
    assert_eq!(
        report,
        "ok: valid: my-values.yaml over the chart defaults\n"
    );
    ok(&asogen_in(dir.path(), &["render", "--out", "gen"]));
    // The built-in profiles render what the repository's do.
    let ours = std::fs::read_to_string(dir.path().join("gen/manifests/ha.yaml")).unwrap();
    let committed = std::fs::read_to_string(root().join("generated/manifests/ha.yaml")).unwrap();
    assert_eq!(ours, committed);
    let check = asogen_in(dir.path(), &["render", "--check", "--out", "gen"]);
    ok(&check);
    let release = asogen_with_env(
        dir.path(),
        &["release", "--version", "2.22.0", "--out", "rel"],
        &[("SOURCE_DATE_EPOCH", "1700000000")],
    );
    ok(&release);
    assert!(dir.path().join("rel/install-ha.yaml").is_file());
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = ok(&asogen(&["completions", shell]));
        assert!(script.contains("show-only"), "{shell}");
    }
    let err = usage_error(&asogen(&["completions", "tcsh"]));
    assert!(
        err.contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{err}"
    );
}

#[test]
fn release_app_version_is_the_app_version_and_the_image_tag() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("SOURCE_DATE_EPOCH", "1700000000")];
    ok(&asogen_with_env(
        dir.path(),
        &[
            "release",
            "--version",
            "2.22.0",
            "--app-version",
            "v2.22.0-hotfix.1",
            "--out",
            "rel",
        ],
        &env,
    ));
    let index = std::fs::read_to_string(dir.path().join("rel/index.yaml")).unwrap();
    assert!(index.contains("appVersion: v2.22.0-hotfix.1\n"), "{index}");
    assert!(index.contains("version: '2.22.0'\n"), "{index}");
    let manifest = std::fs::read_to_string(dir.path().join("rel/install-ha.yaml")).unwrap();
    assert!(manifest.contains("azureserviceoperator:v2.22.0-hotfix.1\n"));
    // A refused version is the only message: no note before it.
    let out = asogen_in(
        dir.path(),
        &["release", "--version", "v2.22.0", "--out", "x"],
    );
    let err = usage_error(&out);
    assert!(err.starts_with("error: --version \"v2.22.0\""), "{err}");
    assert!(!err.contains("SOURCE_DATE_EPOCH"), "{err}");
}

#[test]
fn diff_refuses_a_folder_against_a_file() {
    let err = usage_error(&asogen(&[
        "diff",
        "generated",
        "generated/manifests/ha.yaml",
    ]));
    assert!(
        err.contains(
            "cannot compare the folder generated with the file generated/manifests/ha.yaml"
        ),
        "{err}"
    );
    assert!(err.contains("help: "), "{err}");
    assert!(Path::new(&root().join("generated")).is_dir());
}
