//! Fleet mode: `template --values-dir DIR --out DIR` and `validate --values-dir DIR`.

use crate::common;

use std::path::Path;

use common::{asogen, text};

fn write(dir: &Path, name: &str, body: &str) {
    std::fs::write(dir.join(name), body).unwrap();
}

/// 30 clusters: 27 valid in three shapes, 3 invalid in three ways, and a
/// README that is not a values file.
fn fleet(dir: &Path) {
    for i in 0..27 {
        let body = match i % 3 {
            0 => "replicaCount: 1\nstrategy:\n  type: RollingUpdate\nfeatureGates:\n  singleReplicaRollingUpdate: true\n".to_string(),
            1 => "replicaCount: 3\n".to_string(),
            _ => String::new(),
        };
        write(
            dir,
            &format!("cluster-{i:02}.yaml"),
            &format!("{body}podLabels:\n  cluster: c{i:02}\n"),
        );
    }
    write(
        dir,
        "bad-rule.yaml",
        "replicaCount: 2\nstrategy:\n  type: RollingUpdate\n",
    );
    write(dir, "bad-typo.yml", "replicaCont: 2\n");
    write(dir, "bad-yaml.yaml", "podLabels: [unclosed\n");
    write(dir, "README.md", "not values\n");
}

#[test]
fn every_valid_file_is_rendered_and_every_invalid_one_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (values, out) = (dir.path().join("values"), dir.path().join("out"));
    std::fs::create_dir(&values).unwrap();
    fleet(&values);
    let run = asogen(&[
        "template",
        "--values-dir",
        values.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1), "some files are invalid");
    let err = text(&run.stderr);
    assert!(
        err.contains("bad-rule.yaml:3:9") && err.contains("ha-requires-recreate"),
        "{err}"
    );
    assert!(
        err.contains("bad-typo.yml:1:1") && err.contains("did you mean `replicaCount`"),
        "{err}"
    );
    assert!(err.contains("bad-yaml.yaml:"), "{err}");
    assert!(err.contains("rendered 27 of 30 values files"), "{err}");
    let mut written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    // The manifests, and the marker that makes the folder asogen's.
    assert_eq!(written.remove(0), ".asogen-output");
    assert_eq!(written.len(), 27);
    assert_eq!(written[0], "cluster-00.yaml");
    // Each manifest is what `template -f FILE` prints for that cluster.
    for name in ["cluster-00.yaml", "cluster-01.yaml", "cluster-26.yaml"] {
        let single = asogen(&["template", "-f", values.join(name).to_str().unwrap()]);
        assert_eq!(single.status.code(), Some(0));
        assert_eq!(
            std::fs::read_to_string(out.join(name)).unwrap(),
            text(&single.stdout),
            "{name}"
        );
    }
}

#[test]
fn shared_files_come_before_each_cluster_and_set_after() {
    let dir = tempfile::tempdir().unwrap();
    let (values, out) = (dir.path().join("values"), dir.path().join("out"));
    std::fs::create_dir(&values).unwrap();
    write(
        &values,
        "east.yaml",
        "podLabels:\n  region: east\n  tier: cluster\n",
    );
    let base = dir.path().join("base.yaml");
    std::fs::write(&base, "podLabels:\n  team: platform\n  tier: base\n").unwrap();
    let run = asogen(&[
        "template",
        "--values-dir",
        values.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-f",
        base.to_str().unwrap(),
        "--set",
        "podLabels.tier=set",
        "-n",
        "aso",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let objects = common::objects(&std::fs::read_to_string(out.join("east.yaml")).unwrap());
    let deployment = objects
        .values()
        .find(|o| o["kind"] == "Deployment")
        .unwrap();
    let labels = &deployment["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["team"], "platform");
    assert_eq!(labels["region"], "east");
    assert_eq!(labels["tier"], "set");
    assert_eq!(deployment["metadata"]["namespace"], "aso");
}

#[test]
fn validate_checks_every_file_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let run = asogen(&[
        "validate",
        "--values-dir",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.status.code(), Some(1));
    let diagnostics: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let mut files: Vec<String> = diagnostics
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            Path::new(d["file"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.dedup();
    assert_eq!(
        files,
        vec!["bad-rule.yaml", "bad-typo.yml", "bad-yaml.yaml"]
    );

    let human = asogen(&["validate", "--values-dir", dir.path().to_str().unwrap()]);
    assert!(text(&human.stdout).contains("27 of 30 values files valid (3 invalid)"));

    for bad in ["bad-rule.yaml", "bad-typo.yml", "bad-yaml.yaml"] {
        std::fs::remove_file(dir.path().join(bad)).unwrap();
    }
    let run = asogen(&["validate", "--values-dir", dir.path().to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stdout));
}

#[test]
fn bad_fleet_folders_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = asogen(&["validate", "--values-dir", dir.path().to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("holds no *.yaml"));

    let missing = dir.path().join("missing");
    let run = asogen(&[
        "template",
        "--values-dir",
        missing.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("cannot read the folder"));

    write(dir.path(), "a.yaml", "{}\n");
    write(dir.path(), "a.yml", "{}\n");
    let run = asogen(&[
        "template",
        "--values-dir",
        dir.path().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("would both write a.yaml"));
    assert!(!out.exists(), "nothing written");

    std::fs::remove_file(dir.path().join("a.yml")).unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "keep").unwrap();
    let run = asogen(&[
        "template",
        "--values-dir",
        dir.path().to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");

    let run = asogen(&["template", "--values-dir", dir.path().to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2), "--values-dir needs --out");
}
