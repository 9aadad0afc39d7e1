//! The README's quick start, as a newcomer runs it: asogen installed with
//! `cargo install` (into a folder of the test's own), then the quick
//! start's commands, word for word, from an empty folder outside the
//! repository (the editor step with an `$EDITOR` that edits as a user
//! would; `kubectl apply` needs a cluster with cert-manager and is only
//! checked to apply what `template` wrote).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{root, text};

/// The lines of the README's quick-start block, comments cut.
fn quick_start_lines() -> Vec<String> {
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
        .map(|line| line.split(" #").next().unwrap().trim().to_string())
        .filter(|line| !line.is_empty())
        .collect()
}

/// The quick start's lines that run on this machine: every one but the
/// `kubectl apply`.
fn quick_start_commands() -> Vec<String> {
    let lines = quick_start_lines();
    let apply: Vec<&String> = lines.iter().filter(|l| l.starts_with("kubectl ")).collect();
    assert_eq!(
        apply,
        ["kubectl apply --server-side --force-conflicts -f aso.yaml"],
        "the quick start applies what template wrote"
    );
    lines
        .into_iter()
        .filter(|line| !line.starts_with("kubectl "))
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
        commands
            .iter()
            .any(|c| c.contains("asogen template --create-namespace -f my-values.yaml > aso.yaml"))
            && commands
                .iter()
                .any(|c| c.contains("asogen validate -f my-values.yaml")),
        "{commands:?}"
    );
    assert!(
        commands[0].starts_with("asogen show values > "),
        "the quick start starts by getting a values file: {commands:?}"
    );
    let root_dir = tempfile::tempdir().unwrap();
    let bin = install(root_dir.path());
    let work = tempfile::tempdir().unwrap();
    // The editor step: fill in the identity as a user would, in the file
    // `show values` wrote.
    let editor = root_dir.path().join("edit");
    std::fs::write(
        &editor,
        "#!/bin/sh\nset -e\nsed -i \\\n  -e \"s/^azureSubscriptionID: ''$/azureSubscriptionID: 00000000-0000-0000-0000-00000000000a/\" \\\n  -e \"s/^azureTenantID: ''$/azureTenantID: 00000000-0000-0000-0000-00000000000b/\" \\\n  -e \"s/^azureClientID: ''$/azureClientID: 00000000-0000-0000-0000-00000000000c/\" \"$1\"\ngrep -q '^azureTenantID: 0' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
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
            .env("EDITOR", &editor)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}`: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    // The template went where the quick start sends it, whole, with the
    // edit in it.
    let manifest = std::fs::read_to_string(work.path().join("aso.yaml")).unwrap();
    // (The Secret holds it base64-encoded.)
    assert!(manifest.contains("AZURE_TENANT_ID: MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDBi"));
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

/// Every `asogen` command of the user's pages' shell blocks (the README,
/// docs/topologies.md, docs/upgrading.md), in page order, a `|` between
/// choices taken as one command per choice.
fn documented_commands() -> Vec<String> {
    let mut commands = Vec::new();
    for page in ["README.md", "docs/topologies.md", "docs/upgrading.md"] {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        for block in text.split("```sh\n").skip(1) {
            let block = block.split("```").next().unwrap_or("");
            for line in block.lines() {
                let line = line.split(" #").next().unwrap().trim();
                if !line.starts_with("asogen ") {
                    continue;
                }
                // `--via helm|flux|argo|kubectl`: each choice
                match line.split_whitespace().find(|word| word.contains('|')) {
                    Some(choices) => {
                        for choice in choices.split('|') {
                            commands.push(line.replacen(choices, choice, 1));
                        }
                    }
                    None => commands.push(line.to_string()),
                }
            }
        }
    }
    commands
}

/// The commands the user's pages show, and the `asogen` commands the plans
/// they lead to print (which write into folders of the user's repository),
/// run from an empty folder with the installed binary: every one works
/// there, with no checkout beside it.
#[test]
fn the_user_pages_commands_run_from_an_empty_folder() {
    let commands = documented_commands();
    assert!(
        commands.iter().any(|c| c.contains("--profile split"))
            && commands
                .iter()
                .filter(|c| c.starts_with("asogen upgrade-plan"))
                .count()
                >= 6,
        "{commands:?}"
    );
    let root_dir = tempfile::tempdir().unwrap();
    let bin = install(root_dir.path());
    let work = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |command: &str| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(work.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}` in an empty folder: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    };
    // the quick start's values file, edited as it says (`$EDITOR
    // my-values.yaml`): the identity set, the keys kept at their defaults
    // deleted
    let edit = || {
        std::fs::write(
            work.path().join("my-values.yaml"),
            "azureSubscriptionID: 00000000-0000-0000-0000-00000000000a\nazureTenantID: 00000000-0000-0000-0000-00000000000b\n",
        )
        .unwrap()
    };
    edit();
    let mut printed = Vec::new();
    for command in &commands {
        let out = run(command);
        if command.ends_with("> my-values.yaml") {
            edit();
        }
        // a command that writes into a file prints nothing itself
        assert!(
            command.contains(" > ") || !out.trim().is_empty(),
            "`{command}` printed nothing"
        );
        if command.starts_with("asogen upgrade-plan") {
            // the plan's own commands that asogen runs, as printed
            printed.extend(
                out.lines()
                    .filter_map(|line| line.trim().strip_prefix("$ "))
                    .filter(|line| line.contains("asogen ") && !line.contains("kubectl apply"))
                    .map(|line| line.split("   #").next().unwrap().to_string()),
            );
        }
    }
    assert!(
        printed.iter().any(|c| c.starts_with("mkdir -p aso/")),
        "{printed:?}"
    );
    for command in &printed {
        run(command);
    }
    // and the profile Helm's plan names, as its note says
    run("asogen show profile split > asogen-profile-split.yaml");
    assert!(work.path().join("aso/webhooks/aso.yaml").exists());
}
