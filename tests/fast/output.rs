//! `--out` deletes nothing asogen did not write (`render`, `release`,
//! `template --values-dir`), swaps the new tree in in one step even under
//! `kill -9`, and fleet mode reports every entry it cannot read and
//! streams its manifests (bounded memory).

use crate::measure;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use measure::{bin, run_limited};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn profiles() -> String {
    root().join("values/profiles").display().to_string()
}

fn asogen(dir: &Path, args: &[&str]) -> Output {
    asogen_env(dir, args, &[])
}

fn asogen_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let output = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("SOURCE_DATE_EPOCH")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(101), "panic: {}", err(&output));
    output
}

fn err(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every file under `dir` (relative path to bytes).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                out.insert(
                    relative.to_string_lossy().into_owned(),
                    std::fs::read(&path).unwrap_or_default(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The names in `dir` that start with a dot (staging, locks).
fn hidden(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[test]
fn render_replaces_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let run = asogen(
        dir.path(),
        &["render", "--out", "gen", "--profiles", &profiles()],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    let generated = dir.path().join("gen");
    let marker = std::fs::read_to_string(generated.join(".asogen-output")).unwrap();
    assert!(marker.contains("asogen-output: render\n"), "{marker}");
    assert!(marker.contains("\nmanifests/ha.yaml\n"), "{marker}");
    std::fs::write(generated.join("NOTES.md"), "mine").unwrap();
    std::fs::write(generated.join("manifests/mine.txt"), "mine").unwrap();
    std::fs::write(generated.join("manifests/ha.yaml"), "edited").unwrap();
    let run = asogen(
        dir.path(),
        &["render", "--out", "gen", "--profiles", &profiles()],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    assert_eq!(
        std::fs::read_to_string(generated.join("NOTES.md")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(generated.join("manifests/mine.txt")).unwrap(),
        "mine"
    );
    assert_ne!(
        std::fs::read(generated.join("manifests/ha.yaml")).unwrap(),
        b"edited"
    );
    assert_eq!(hidden(dir.path()), Vec::<String>::new(), "no staging left");
}

#[test]
fn a_folder_asogen_did_not_write_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(mine.join("sub")).unwrap();
    std::fs::write(mine.join("thesis.tex"), "years of work").unwrap();
    std::fs::write(mine.join("sub/data.csv"), "1,2").unwrap();
    let before = tree(&mine);
    let values = dir.path().join("values");
    std::fs::create_dir(&values).unwrap();
    std::fs::write(values.join("east.yaml"), "replicaCount: 3\n").unwrap();
    for args in [
        vec!["render", "--out", "mine", "--profiles", &profiles()],
        vec![
            "release",
            "--version",
            "2.22.0",
            "--out",
            "mine",
            "--profiles",
            &profiles(),
        ],
        vec!["template", "--values-dir", "values", "--out", "mine"],
    ] {
        let run = asogen(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        let stderr = err(&run);
        assert!(
            stderr.contains("is not empty and was not written by asogen")
                && stderr.contains("help: asogen writes only into a new or empty folder"),
            "{stderr}"
        );
        assert_eq!(tree(&mine), before, "{args:?}");
        assert_eq!(hidden(dir.path()), Vec::<String>::new());
    }
    // Another command's output is not this one's either.
    let run = asogen(
        dir.path(),
        &["render", "--out", "gen", "--profiles", &profiles()],
    );
    assert_eq!(run.status.code(), Some(0));
    let run = asogen(
        dir.path(),
        &["template", "--values-dir", "values", "--out", "gen"],
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(
        err(&run).contains("was written by `asogen render`"),
        "{}",
        err(&run)
    );
}

#[test]
fn inputs_are_never_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values");
    std::fs::create_dir(&values).unwrap();
    std::fs::write(values.join("east.yaml"), "replicaCount: 3\n").unwrap();
    let shared = dir.path().join("shared/base.yaml");
    std::fs::create_dir(dir.path().join("shared")).unwrap();
    std::fs::write(&shared, "podLabels:\n  a: b\n").unwrap();
    let profiles_copy = dir.path().join("profiles");
    std::fs::create_dir(&profiles_copy).unwrap();
    std::fs::copy(
        root().join("values/profiles/ha.yaml"),
        profiles_copy.join("ha.yaml"),
    )
    .unwrap();
    let before = tree(dir.path());
    for args in [
        vec!["template", "--values-dir", "values", "--out", "values"],
        vec!["template", "--values-dir", "values", "--out", "."],
        vec![
            "template",
            "--values-dir",
            "values",
            "--out",
            "shared",
            "-f",
            "shared/base.yaml",
        ],
        vec!["render", "--out", "profiles", "--profiles", "profiles"],
        vec![
            "release",
            "--version",
            "2.22.0",
            "--out",
            "profiles",
            "--profiles",
            "profiles",
        ],
    ] {
        let run = asogen(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", err(&run));
        assert!(
            err(&run).contains("would replace the input"),
            "{}",
            err(&run)
        );
        assert_eq!(tree(dir.path()), before, "{args:?}");
    }
}

#[cfg(unix)]
#[test]
fn an_out_symlink_is_followed_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::os::unix::fs::symlink("real", dir.path().join("link")).unwrap();
    for _ in 0..2 {
        let run = asogen(
            dir.path(),
            &["render", "--out", "link", "--profiles", &profiles()],
        );
        assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    }
    let link = std::fs::symlink_metadata(dir.path().join("link")).unwrap();
    assert!(link.file_type().is_symlink());
    assert!(dir.path().join("real/manifests/ha.yaml").is_file());
    std::os::unix::fs::symlink("nowhere", dir.path().join("dangling")).unwrap();
    let run = asogen(
        dir.path(),
        &["render", "--out", "dangling", "--profiles", &profiles()],
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(err(&run).contains("which does not exist"), "{}", err(&run));
    assert!(
        std::fs::symlink_metadata(dir.path().join("dangling"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

fn index_versions(repo: &Path) -> Vec<String> {
    let index: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string(repo.join("index.yaml")).unwrap()).unwrap();
    index["entries"]["azure-service-operator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["version"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn release_into_a_chart_repository_adds_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(
        repo.join("azure-service-operator-2.9.0.tgz"),
        "an old chart",
    )
    .unwrap();
    std::fs::write(repo.join("other-1.0.0.tgz"), "another chart").unwrap();
    std::fs::write(repo.join("README.md"), "our repository").unwrap();
    std::fs::write(
        repo.join("index.yaml"),
        "apiVersion: v1\nentries:\n  azure-service-operator:\n  - name: azure-service-operator\n    version: 2.9.0\n    digest: abc\n    urls:\n    - azure-service-operator-2.9.0.tgz\n  other:\n  - name: other\n    version: 1.0.0\n    urls:\n    - other-1.0.0.tgz\ngenerated: \"2020-01-01T00:00:00Z\"\n",
    )
    .unwrap();
    let release = |version: &str| {
        asogen_env(
            dir.path(),
            &[
                "release",
                "--version",
                version,
                "--out",
                "repo",
                "--profiles",
                &profiles(),
            ],
            &[("SOURCE_DATE_EPOCH", "1764672301")],
        )
    };
    let run = release("2.22.0");
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    assert!(
        err(&run).contains("merged into its index.yaml"),
        "{}",
        err(&run)
    );
    assert_eq!(index_versions(&repo), ["2.22.0", "2.9.0"]);
    let run = release("2.23.0");
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    assert_eq!(index_versions(&repo), ["2.23.0", "2.22.0", "2.9.0"]);
    let files = tree(&repo);
    assert_eq!(files["azure-service-operator-2.9.0.tgz"], b"an old chart");
    assert_eq!(files["other-1.0.0.tgz"], b"another chart");
    assert_eq!(files["README.md"], b"our repository");
    assert!(files.contains_key("azure-service-operator-2.22.0.tgz"));
    assert!(files.contains_key("azure-service-operator-2.23.0.tgz"));
    let index = String::from_utf8_lossy(&files["index.yaml"]).into_owned();
    assert!(
        index.contains("other-1.0.0.tgz") && index.contains("digest: abc"),
        "{index}"
    );
    let sums = Command::new("sha256sum")
        .args(["-c", "SHA256SUMS"])
        .current_dir(&repo)
        .output();
    if let Ok(sums) = sums {
        assert!(
            sums.status.success(),
            "{}",
            String::from_utf8_lossy(&sums.stdout)
        );
    }
    // `diff` reads the release the SHA256SUMS names, not an older archive.
    let run = asogen(dir.path(), &["diff", "repo", "repo"]);
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));

    // A published version that differs is never overwritten.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("index.yaml"), "apiVersion: v1\nentries: {}\n").unwrap();
    std::fs::write(other.join("azure-service-operator-2.22.0.tgz"), "published").unwrap();
    let run = asogen(
        dir.path(),
        &[
            "release",
            "--version",
            "2.22.0",
            "--out",
            "other",
            "--profiles",
            &profiles(),
        ],
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(
        err(&run).contains("was not written by asogen and differs"),
        "{}",
        err(&run)
    );
    assert_eq!(
        std::fs::read(other.join("azure-service-operator-2.22.0.tgz")).unwrap(),
        b"published"
    );
}

#[test]
fn a_profile_name_with_a_newline_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir(&profiles).unwrap();
    std::fs::copy(
        root().join("values/profiles/ha.yaml"),
        profiles.join("ha.yaml"),
    )
    .unwrap();
    std::fs::write(profiles.join("evil\n0000  ha.yaml"), "replicaCount: 2\n").unwrap();
    for command in ["render", "release"] {
        let mut args = vec![command, "--out", "out", "--profiles", "profiles"];
        if command == "release" {
            args.extend(["--version", "2.22.0"]);
        }
        let run = asogen(dir.path(), &args);
        assert_eq!(run.status.code(), Some(2), "{command}: {}", err(&run));
        assert!(
            err(&run).contains("control character '\\n'"),
            "{}",
            err(&run)
        );
        assert!(!dir.path().join("out").exists());
    }
}

#[test]
fn source_date_epoch_past_year_9999_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (epoch, code) in [
        ("18446744073709551615", 2),
        ("253402300800", 2),
        ("253402300799", 0),
    ] {
        let run = asogen_env(
            dir.path(),
            &[
                "release",
                "--version",
                "2.22.0",
                "--out",
                epoch,
                "--profiles",
                &profiles(),
            ],
            &[("SOURCE_DATE_EPOCH", epoch)],
        );
        assert_eq!(run.status.code(), Some(code), "{epoch}: {}", err(&run));
        if code == 2 {
            assert!(
                err(&run).contains("is after 9999-12-31T23:59:59Z"),
                "{}",
                err(&run)
            );
        } else {
            let index = std::fs::read_to_string(dir.path().join(epoch).join("index.yaml")).unwrap();
            assert!(index.contains("9999-12-31T23:59:59Z"), "{index}");
        }
    }
}

fn fleet_file(i: usize, label: &str) -> String {
    format!(
        "replicaCount: {}\npodLabels:\n  cluster: c{i:04}\n  run: {label}\n",
        2 + i % 2
    )
}

fn make_fleet(dir: &Path, n: usize, label: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        std::fs::write(
            dir.join(format!("cluster-{i:04}.yaml")),
            fleet_file(i, label),
        )
        .unwrap();
    }
}

#[cfg(unix)]
#[test]
fn fleet_reports_every_entry_it_cannot_read_and_keeps_its_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values");
    std::fs::create_dir(&values).unwrap();
    std::fs::write(values.join("east.yaml"), fleet_file(1, "a")).unwrap();
    std::fs::write(values.join("west.yaml"), fleet_file(2, "a")).unwrap();
    std::fs::write(values.join("NORTH.YAML"), fleet_file(3, "a")).unwrap();
    let run = asogen(
        dir.path(),
        &["template", "--values-dir", "values", "--out", "out"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    let out = dir.path().join("out");
    assert!(
        out.join("NORTH.yaml").is_file(),
        "upper-case extensions are read"
    );
    let east = std::fs::read(out.join("east.yaml")).unwrap();

    // east.yaml becomes a dangling link, west.yaml a FIFO; and a loop.
    std::fs::remove_file(values.join("east.yaml")).unwrap();
    std::os::unix::fs::symlink("gone.yaml", values.join("east.yaml")).unwrap();
    std::fs::remove_file(values.join("west.yaml")).unwrap();
    let fifo = Command::new("mkfifo")
        .arg(values.join("west.yaml"))
        .status();
    std::os::unix::fs::symlink("loop-b.yaml", values.join("loop-a.yaml")).unwrap();
    std::os::unix::fs::symlink("loop-a.yaml", values.join("loop-b.yaml")).unwrap();
    let run = run_limited(
        dir.path(),
        &["template", "--values-dir", "values", "--out", "out"],
        &[],
        30,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("east.yaml")
            && run.stderr.contains("dangling symbolic link to gone.yaml"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("loop-a.yaml") && run.stderr.contains("loops"),
        "{}",
        run.stderr
    );
    if fifo.is_ok_and(|s| s.success()) {
        assert!(
            run.stderr.contains("west.yaml") && run.stderr.contains("FIFO"),
            "{}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains("rendered 1 of 5 values files"),
        "{}",
        run.stderr
    );
    // The earlier manifests stay.
    assert_eq!(std::fs::read(out.join("east.yaml")).unwrap(), east);
    assert!(out.join("west.yaml").is_file());

    let run = run_limited(dir.path(), &["validate", "--values-dir", "values"], &[], 30);
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    assert!(
        run.stdout.contains("dangling symbolic link"),
        "{}",
        run.stdout
    );
}

#[test]
fn fleet_streams_its_manifests_in_bounded_memory() {
    // 300 manifests of 0.8 MB: 240 MB if they were all held at once.
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values");
    make_fleet(&values, 300, "a");
    let run = run_limited(
        dir.path(),
        &["template", "--values-dir", "values", "--out", "out"],
        &[],
        300,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.assert_bounded("fleet of 300");
    let out = dir.path().join("out");
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        301,
        "300 manifests and the marker"
    );
    for name in ["cluster-0000.yaml", "cluster-0299.yaml"] {
        let single = asogen(dir.path(), &["template", "-f", &format!("values/{name}")]);
        assert_eq!(
            std::fs::read(out.join(name)).unwrap(),
            single.stdout,
            "{name}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_killed_fleet_write_leaves_the_old_tree_or_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values");
    let out = dir.path().join("out");
    let n = 120;
    make_fleet(&values, n, "old");
    let run = asogen(
        dir.path(),
        &["template", "--values-dir", "values", "--out", "out"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    let started = std::time::Instant::now();
    let run = asogen(
        dir.path(),
        &["template", "--values-dir", "values", "--out", "out"],
    );
    assert_eq!(run.status.code(), Some(0));
    let full = started.elapsed();
    // Which run wrote the output: every manifest must say the same.
    let generation = || -> String {
        assert!(out.is_dir(), "the output folder is missing");
        assert!(out.join(".asogen-output").is_file(), "no marker");
        let labels: std::collections::BTreeSet<String> = [0, n / 2, n - 1]
            .iter()
            .map(|i| {
                let text =
                    std::fs::read_to_string(out.join(format!("cluster-{i:04}.yaml"))).unwrap();
                let at = text.find("run: ").expect("a run label") + 5;
                text[at..].split_whitespace().next().unwrap().to_string()
            })
            .collect();
        assert_eq!(labels.len(), 1, "a mix of runs: {labels:?}");
        labels.into_iter().next().unwrap()
    };
    let mut current = generation();
    assert_eq!(current, "old");
    let mut swapped = 0;
    for step in 1..=12u32 {
        let label = format!("g{step}");
        make_fleet(&values, n, &label);
        let mut child = Command::new(bin())
            .args(["template", "--values-dir", "values", "--out", "out"])
            .current_dir(dir.path())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // From early in the rendering to past its end.
        std::thread::sleep(full * step / 10);
        let _ = child.kill();
        let _ = child.wait();
        let found = generation();
        assert!(
            found == current || found == label,
            "{found}: neither {current} nor {label}"
        );
        if found == label {
            swapped += 1;
        }
        current = found;
    }
    eprintln!("{swapped} of 12 killed runs had swapped their tree in");
    let run = asogen(
        dir.path(),
        &["template", "--values-dir", "values", "--out", "out"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    assert_eq!(
        hidden(dir.path()),
        Vec::<String>::new(),
        "stale staging left"
    );
}

/// A work folder as a writer of `gen` killed long ago leaves it: its claim
/// first (`asogen-staging`, as docs/commands.md describes it: the output's
/// name, the process id in the folder's name, the folder's device:inode),
/// then a tree in `part` (`new` staged, or `old` parked).
#[cfg(unix)]
fn killed_writer(dir: &Path, pid: u32, part: &str, from: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let work = dir.join(format!(".gen.asogen-staging-{pid}"));
    std::fs::create_dir(&work).unwrap();
    let metadata = std::fs::metadata(&work).unwrap();
    std::fs::write(
        work.join("asogen-staging"),
        format!(
            "# a comment\nasogen-staging: gen\npid: {pid}\nfolder: {}:{}\n",
            metadata.dev(),
            metadata.ino()
        ),
    )
    .unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(work.join(part))
        .status()
        .unwrap();
    assert!(status.success());
    work
}

/// Every file under `dir` and what it is, links not followed.
#[cfg(unix)]
fn entries(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            let key = path.strip_prefix(root).unwrap().display().to_string();
            if kind.is_dir() {
                walk(root, &path, out);
                out.insert(key, "folder".into());
            } else if kind.is_symlink() {
                out.insert(
                    key,
                    format!("-> {}", std::fs::read_link(&path).unwrap().display()),
                );
            } else {
                out.insert(
                    key,
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into(),
                );
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// Folders beside the output that look like asogen's staging (issue 21,
/// finding 11): every name asogen gave staging (this version's
/// `.gen.asogen-staging-PID` and the `.gen.asogen-new-PID`,
/// `.gen.asogen-old-PID`, `.gen.new-PID`, `.gen.old-PID` of earlier ones)
/// crossed with every claim that proves nothing (none, an empty folder
/// inside, garbage, one naming another process, another output or another
/// folder, one that is a symbolic link to a real claim), each holding a
/// user's file, for process ids no process has. None is removed or moved,
/// not even into a missing output folder; a real work folder of a gone
/// writer is removed, and its parked old tree put back.
#[cfg(unix)]
#[test]
fn stale_staging_cleanup_touches_only_what_proves_to_be_asogens() {
    let dir = tempfile::tempdir().unwrap();
    let rendered = dir.path().join("rendered");
    let run = asogen(
        dir.path(),
        &["render", "--out", "rendered", "--profiles", &profiles()],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    let looks = dir.path().join("looks");
    std::fs::create_dir(&looks).unwrap();
    // A real claim elsewhere, for the copies and the link to point at.
    let real = killed_writer(dir.path(), 4_194_300, "new", &rendered);
    let real_claim = std::fs::read_to_string(real.join("asogen-staging")).unwrap();
    let names = |pid: u32| {
        [
            format!(".gen.asogen-staging-{pid}"),
            format!(".gen.asogen-new-{pid}"),
            format!(".gen.asogen-old-{pid}"),
            format!(".gen.new-{pid}"),
            format!(".gen.old-{pid}"),
        ]
    };
    // Process ids above Linux's maximum (2^22): no process has them.
    for (pid, claim) in (4_194_400..).zip([
        None,
        Some("garbage\n".to_string()),
        Some("asogen-staging: gen\npid: 1\nfolder: 0:0\n".to_string()),
        Some(real_claim.replace("asogen-staging: gen", "asogen-staging: other")),
        Some(real_claim.clone()),
        Some("link".to_string()),
    ]) {
        for name in names(pid) {
            let folder = looks.join(&name);
            std::fs::create_dir_all(folder.join("new")).unwrap();
            std::fs::write(folder.join("new/thesis.tex"), "years of work").unwrap();
            match claim.as_deref() {
                None => {}
                Some("link") => std::os::unix::fs::symlink(
                    real.join("asogen-staging"),
                    folder.join("asogen-staging"),
                )
                .unwrap(),
                Some(text) => {
                    // A claim with the right process id but another
                    // folder's identity: a copy.
                    let text = text.replace("pid: 4194300", &format!("pid: {pid}"));
                    std::fs::write(folder.join("asogen-staging"), text).unwrap();
                }
            }
            std::fs::create_dir_all(looks.join(&name).join("old")).unwrap();
        }
    }
    std::fs::remove_dir_all(&real).unwrap();
    let before = entries(&looks);
    assert!(before.len() > 100, "{}", before.len());
    let run = asogen(
        &looks,
        &["render", "--out", "gen", "--profiles", &profiles()],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    let mut after = entries(&looks);
    let generated: Vec<String> = after
        .keys()
        .filter(|key| *key == "gen" || key.starts_with("gen/"))
        .cloned()
        .collect();
    assert!(
        !generated.iter().any(|key| key.ends_with("thesis.tex")),
        "a look-alike was moved into the output"
    );
    for key in generated {
        after.remove(&key);
    }
    assert_eq!(after, before, "a look-alike was touched");

    // Real work folders of gone writers: one staged a tree, one parked the
    // old output (with a note of the user's) when it died; the output is
    // missing. The old tree comes back, with the note; both are removed.
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(rendered.join("NOTES.md"), "mine").unwrap();
    killed_writer(&real, 4_194_500, "new", &rendered);
    killed_writer(&real, 4_194_501, "old", &rendered);
    let run = asogen(
        &real,
        &["render", "--out", "gen", "--profiles", &profiles()],
    );
    assert_eq!(run.status.code(), Some(0), "{}", err(&run));
    assert_eq!(
        std::fs::read_to_string(real.join("gen/NOTES.md")).unwrap(),
        "mine"
    );
    assert_eq!(hidden(&real), Vec::<String>::new(), "stale staging left");
}
