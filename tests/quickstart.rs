//! The README's quick start, as a newcomer runs it: asogen installed with
//! `cargo install` (into a folder of the test's own), then the quick
//! start's `asogen` commands, word for word, from a folder outside the
//! repository.

mod common;

use std::path::Path;
use std::process::Command;

use common::{root, text};

/// The lines of the README's quick-start block that run asogen.
fn quick_start_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("## Quick start\n")
        .nth(1)
        .expect("the README has a quick start");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the quick start has a sh block");
    let head_lines = readme.lines().position(|l| l == "## Quick start").unwrap();
    assert!(
        head_lines + block.lines().count() < 40,
        "the quick start is in the README's first 40 lines"
    );
    block
        .lines()
        .filter(|line| line.starts_with("asogen "))
        .map(|line| line.split(" #").next().unwrap().trim().to_string())
        .collect()
}

fn install(into: &Path) -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The project's own target folder: the debug build the tests use is
    // reused, so this links rather than compiles.
    let out = Command::new(cargo)
        .args(["install", "--locked", "--offline", "--debug", "--path"])
        .arg(root())
        .arg("--root")
        .arg(into)
        .arg("--target-dir")
        .arg(root().join("target"))
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo install: {}", text(&out.stderr));
    into.join("bin")
}

#[test]
fn the_readme_quick_start_runs_outside_the_repository() {
    let commands = quick_start_commands();
    assert!(
        commands.iter().any(|c| c.starts_with("asogen template"))
            && commands.iter().any(|c| c.starts_with("asogen validate")),
        "{commands:?}"
    );
    let root_dir = tempfile::tempdir().unwrap();
    let bin = install(root_dir.path());
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("my-values.yaml"),
        "azureSubscriptionID: 00000000-0000-0000-0000-00000000000a\nazureTenantID: 00000000-0000-0000-0000-00000000000b\nazureClientID: 00000000-0000-0000-0000-00000000000c\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for command in &commands {
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(work.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}`: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    // The template went where the quick start sends it, whole.
    let manifest = std::fs::read_to_string(work.path().join("aso.yaml")).unwrap();
    let objects = common::objects(&manifest);
    assert!(objects.len() > 100, "{} objects", objects.len());
    assert!(manifest.contains("kind: Deployment"));
    // And a broken file gets its rule id, from there too.
    std::fs::write(
        work.path().join("my-values.yaml"),
        "replicaCount: 3\nstrategy:\n  type: RollingUpdate\n",
    )
    .unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg("asogen validate -f my-values.yaml")
        .current_dir(work.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("ha-requires-recreate"));
}
