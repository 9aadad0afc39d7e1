//! `asogen release`: reproducible bytes, checksums that `sha256sum -c`
//! accepts, a chart archive the real Helm engine installs, versions that
//! flow into every artifact, upgrade notes, and refusals that write nothing.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use common::{assert_same_objects, helm_render, root, text};

const EPOCH: &str = "1764672301";

fn release(args: &[&str]) -> Output {
    let mut all = vec!["release"];
    all.extend_from_slice(args);
    common::asogen_with_env(&root(), &all, &[("SOURCE_DATE_EPOCH", EPOCH)])
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn two_runs_give_identical_bytes_and_sha256sum_accepts_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let run = release(&["--version", "2.22.0", "--out", out.to_str().unwrap()]);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    }
    let (first, second) = (files(&a), files(&b));
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        vec![
            ".asogen-output",
            "SHA256SUMS",
            "azure-service-operator-2.22.0.tgz",
            "index.yaml",
            "install-ha.yaml",
            "install-single-replica-rolling.yaml",
            "install-split.yaml",
            "values.schema.json",
        ]
    );
    for (name, bytes) in &first {
        assert!(&second[name] == bytes, "{name} differs between two runs");
    }
    let check = Command::new("sha256sum")
        .args(["-c", "SHA256SUMS"])
        .current_dir(&a)
        .output()
        .expect("sha256sum runs");
    assert!(check.status.success(), "{}", text(&check.stdout));
    // Every file but the sums and the output marker.
    assert_eq!(text(&check.stdout).matches(": OK").count(), first.len() - 2);
    // The index entry points at the archive by digest and relative URL.
    let index: serde_json::Value = serde_yaml::from_slice(&first["index.yaml"]).unwrap();
    let entry = &index["entries"]["azure-service-operator"][0];
    assert_eq!(entry["version"], "2.22.0");
    assert_eq!(entry["appVersion"], "v2.22.0");
    assert_eq!(entry["urls"][0], "azure-service-operator-2.22.0.tgz");
    assert_eq!(entry["created"], "2025-12-02T10:45:01Z");
    let sums = text(&first["SHA256SUMS"]);
    let digest = sums
        .lines()
        .find(|l| l.ends_with("azure-service-operator-2.22.0.tgz"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    assert_eq!(entry["digest"], digest);
}

#[test]
fn helm_installs_the_archive_and_the_version_flows_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rel");
    let run = release(&[
        "--version",
        "2.22.0-rc.1",
        "--image-tag",
        "v2.22.0-rc.1-hotfix",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let archive = out.join("azure-service-operator-2.22.0-rc.1.tgz");

    // The layout Helm expects: one top folder named after the chart.
    let listing = Command::new("tar")
        .arg("tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let names = text(&listing.stdout);
    assert!(
        names
            .lines()
            .all(|l| l.starts_with("azure-service-operator/")),
        "{names}"
    );
    assert!(names.contains("azure-service-operator/Chart.yaml"));
    assert!(names.contains("azure-service-operator/templates/deployment.yaml"));

    // The real Helm engine installs the archive, and the same chart unpacked.
    let unpacked = dir.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let untar = Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked)
        .output()
        .unwrap();
    assert!(untar.status.success());
    let namespace = "azureserviceoperator-system";
    let from_archive = helm_render(&[
        "template",
        "--manifest",
        "-n",
        namespace,
        archive.to_str().unwrap(),
    ]);
    assert!(
        from_archive.status.success(),
        "{}",
        text(&from_archive.stderr)
    );
    let chart_dir = unpacked.join("azure-service-operator");
    let from_folder = helm_render(&[
        "template",
        "--manifest",
        "-n",
        namespace,
        chart_dir.to_str().unwrap(),
    ]);
    assert!(
        from_folder.status.success(),
        "{}",
        text(&from_folder.stderr)
    );
    assert_same_objects(
        "archive vs folder",
        &text(&from_archive.stdout),
        &text(&from_folder.stdout),
    );
    // And Helm's objects are the release's HA install manifest (less the Namespace).
    let manifest = std::fs::read_to_string(out.join("install-ha.yaml")).unwrap();
    let without_namespace: String = manifest
        .split("---\n")
        .filter(|doc| !doc.contains("kind: Namespace\n"))
        .map(|doc| format!("---\n{doc}"))
        .collect();
    assert_same_objects(
        "archive vs install-ha.yaml",
        &without_namespace,
        &text(&from_archive.stdout),
    );

    // One version, one image, everywhere.
    let chart_yaml = std::fs::read_to_string(chart_dir.join("Chart.yaml")).unwrap();
    assert!(
        chart_yaml.contains("\nversion: 2.22.0-rc.1\n"),
        "{chart_yaml}"
    );
    assert!(
        chart_yaml.contains("\nappVersion: v2.22.0-rc.1-hotfix\n"),
        "{chart_yaml}"
    );
    let objects = common::objects(&manifest);
    let deployment = objects
        .values()
        .find(|o| o["kind"] == "Deployment")
        .unwrap();
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "mcr.microsoft.com/k8s/azureserviceoperator:v2.22.0-rc.1-hotfix"
    );
    for object in objects.values().filter(|o| o["kind"] != "Namespace") {
        assert_eq!(
            object["metadata"]["labels"]["app.kubernetes.io/version"], "v2.22.0-rc.1-hotfix",
            "{}",
            object["metadata"]["name"]
        );
    }
}

#[test]
fn previous_release_gives_upgrade_notes() {
    let dir = tempfile::tempdir().unwrap();
    // A previous release with the 2.10 topology: one replica, RollingUpdate.
    let profiles = dir.path().join("profiles");
    std::fs::create_dir(&profiles).unwrap();
    std::fs::write(
        profiles.join("ha.yaml"),
        "replicaCount: 1\nstrategy:\n  type: RollingUpdate\nfeatureGates:\n  singleReplicaRollingUpdate: true\n",
    )
    .unwrap();
    let previous = dir.path().join("prev");
    let run = release(&[
        "--version",
        "2.10.0",
        "--profiles",
        profiles.to_str().unwrap(),
        "--out",
        previous.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let out = dir.path().join("new");
    let run = release(&[
        "--version",
        "2.22.0",
        "--previous",
        previous.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let notes = std::fs::read_to_string(out.join("UPGRADE-NOTES.md")).unwrap();
    assert!(notes.starts_with("## Upgrade notes\n"), "{notes}");
    assert!(notes.contains("**replicas 1 -> 2**"), "{notes}");
    assert!(
        notes.contains("**update strategy RollingUpdate -> Recreate**"),
        "{notes}"
    );
    assert!(notes.contains("asogen upgrade-check"), "{notes}");
    assert!(notes.contains("version v2.10.0 -> v2.22.0"), "{notes}");
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    assert!(sums.contains("  UPGRADE-NOTES.md\n"));
}

#[test]
fn bad_input_is_refused_with_exit_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");

    let run = release(&["--version", "v2.22.0", "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    let err = text(&run.stderr);
    assert!(
        err.contains("not a SemVer 2 version") && err.contains("write --version 2.22.0"),
        "{err}"
    );
    assert!(!out.exists(), "no partial output folder");

    let run = release(&["--version", "2.22", "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(!out.exists());

    let run = release(&[
        "--version",
        "2.22.0",
        "--image-tag",
        "a/b",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("not a valid image tag"));
    assert!(!out.exists());

    let missing = dir.path().join("no-such-release");
    let run = release(&[
        "--version",
        "2.22.0",
        "--previous",
        missing.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        text(&run.stderr).contains("no-such-release"),
        "{}",
        text(&run.stderr)
    );
    assert!(!out.exists());

    let file = dir.path().join("a-file");
    std::fs::write(&file, "keep me").unwrap();
    let run = release(&["--version", "2.22.0", "--out", file.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("is a file"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");

    // A folder under a file cannot be created: exit 2, the file untouched.
    let under_file = file.join("out");
    let run = release(&["--version", "2.22.0", "--out", under_file.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("cannot write"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");

    let run = Command::new(env!("CARGO_BIN_EXE_asogen"))
        .args([
            "release",
            "--version",
            "2.22.0",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(root())
        .env("SOURCE_DATE_EPOCH", "yesterday")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("SOURCE_DATE_EPOCH"));
    assert!(!out.exists());
}

#[test]
fn an_image_digest_pins_every_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rel");
    let digest = format!("sha256:{}", "ab".repeat(32));
    let run = release(&[
        "--version",
        "2.22.0",
        "--image-digest",
        &digest,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let image = format!("mcr.microsoft.com/k8s/azureserviceoperator:v2.22.0@{digest}");
    for name in ["install-ha.yaml", "install-single-replica-rolling.yaml"] {
        let manifest = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(manifest.contains(&format!("image: {image}\n")), "{name}");
    }
    // Helm renders the same pinned image from the archive.
    let archive = out.join("azure-service-operator-2.22.0.tgz");
    let helm = helm_render(&["template", "--manifest", archive.to_str().unwrap()]);
    assert!(helm.status.success(), "{}", text(&helm.stderr));
    assert!(
        text(&helm.stdout).contains(&format!("image: \"{image}\"")),
        "{}",
        text(&helm.stdout)
    );

    for bad in [
        "sha256:abc",
        "md5:00",
        &format!("sha256:{}", "AB".repeat(32)),
    ] {
        let run = release(&[
            "--version",
            "2.22.0",
            "--image-digest",
            bad,
            "--out",
            dir.path().join("x").to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(2), "{bad}");
        assert!(text(&run.stderr).contains("is not a digest"));
        assert!(!dir.path().join("x").exists());
    }
}
