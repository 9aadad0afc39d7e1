//! Reading an existing output folder follows no symbolic link, opens no
//! FIFO, socket or device, and is bounded (issue 21, findings 3 and 4).
//!
//! A pull request controls what a committed `generated/` holds, and CI runs
//! `render --check` on it: a link there to a runner's file, a folder or
//! `/proc/self/environ` must not put their content in the log; a link to
//! `/dev/zero`, a FIFO or two links to `.` must not exhaust memory or hang.
//!
//! The corpus is generated: every kind of entry that is not a regular file
//! or a folder ([`Hostile`]) is put at every kind of place in an output
//! folder (a name render does not write, deep in a folder it does not,
//! where it writes a file, where it writes a folder, its marker), and
//! every command that reads such a folder runs on
//! it (`render --check`, `render --out`, `template --values-dir V --out`,
//! `release --out`, and `diff` and `release --previous`, which compare
//! such folders) with a secret in its environment and in the files the
//! links point to, under a 1 GiB address-space cap and a timeout. No byte
//! of a link's target may appear in standard output or error; each entry
//! is reported by its path (a link by its target's text); every run ends
//! under the memory limit with its own exit code.

#![cfg(unix)]

use crate::measure;

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use measure::{Limited, run_limited};

/// What the files the links point to hold.
const SECRET: &str = "s3cr3t-0a9f-link-target-content";
/// What the environment of every run holds (`/proc/self/environ`).
const ENV_SECRET: &str = "env-s3cr3t-77d1-runner-token";

fn profiles() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("values/profiles")
        .display()
        .to_string()
}

/// Every kind of entry that is not a regular file or a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hostile {
    LinkToFile,
    RelativeLinkToFile,
    LinkToFolder,
    LinkToDot,
    TwoLinksToDot,
    LinkToParent,
    SelfLoop,
    Dangling,
    LinkToDevZero,
    LinkToEnviron,
    Fifo,
    Socket,
    Device,
}

const HOSTILE: [Hostile; 13] = [
    Hostile::LinkToFile,
    Hostile::RelativeLinkToFile,
    Hostile::LinkToFolder,
    Hostile::LinkToDot,
    Hostile::TwoLinksToDot,
    Hostile::LinkToParent,
    Hostile::SelfLoop,
    Hostile::Dangling,
    Hostile::LinkToDevZero,
    Hostile::LinkToEnviron,
    Hostile::Fifo,
    Hostile::Socket,
    Hostile::Device,
];

/// One entry made: its path in the folder and what `--check` must say it is.
#[derive(Debug, Clone)]
struct Made {
    path: String,
    says: String,
}

/// A test's folder: `outside/` holds the secrets, `gen/` the output.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(outside.join("folder")).unwrap();
        std::fs::write(outside.join("target.txt"), format!("token: {SECRET}\n")).unwrap();
        std::fs::write(
            outside.join("folder/inner.yaml"),
            format!("password: {SECRET}\n"),
        )
        .unwrap();
        Case { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn out(&self) -> PathBuf {
        self.path().join("gen")
    }

    /// `gen/` as `render --out` wrote it (copied from one render).
    fn rendered(self) -> Case {
        let status = Command::new("cp")
            .arg("-a")
            .arg(rendered_once())
            .arg(self.out())
            .status()
            .unwrap();
        assert!(status.success());
        self
    }

    /// Makes `hostile` at `relative` (under `gen/`), replacing what is
    /// there; None when this machine does not allow it (a device node
    /// needs privileges).
    fn make(&self, hostile: Hostile, relative: &str) -> Option<Vec<Made>> {
        let at = self.out().join(relative);
        if let Ok(metadata) = std::fs::symlink_metadata(&at) {
            if metadata.is_dir() {
                std::fs::remove_dir_all(&at).unwrap();
            } else {
                std::fs::remove_file(&at).unwrap();
            }
        }
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        let outside = self.path().join("outside");
        let link = |target: &Path| {
            symlink(target, &at).unwrap();
            vec![Made {
                path: relative.to_string(),
                says: format!("a symbolic link to {}", target.display()),
            }]
        };
        let made = match hostile {
            Hostile::LinkToFile => link(&outside.join("target.txt")),
            Hostile::RelativeLinkToFile => {
                let up = "../".repeat(relative.split('/').count());
                link(Path::new(&format!("{up}outside/target.txt")))
            }
            Hostile::LinkToFolder => link(&outside.join("folder")),
            Hostile::LinkToDot => link(Path::new(".")),
            Hostile::TwoLinksToDot => {
                let mut made = link(Path::new("."));
                let again = format!("{relative}-again");
                symlink(".", self.out().join(&again)).unwrap();
                made.push(Made {
                    path: again,
                    says: "a symbolic link to .".into(),
                });
                made
            }
            Hostile::LinkToParent => link(Path::new("..")),
            Hostile::SelfLoop => link(Path::new(at.file_name().unwrap())),
            Hostile::Dangling => link(Path::new("nowhere/at/all")),
            Hostile::LinkToDevZero => link(Path::new("/dev/zero")),
            Hostile::LinkToEnviron => link(Path::new("/proc/self/environ")),
            Hostile::Fifo => {
                let status = Command::new("mkfifo").arg(&at).status().unwrap();
                assert!(status.success(), "mkfifo");
                vec![Made {
                    path: relative.to_string(),
                    says: "a FIFO (named pipe)".into(),
                }]
            }
            Hostile::Socket => {
                // Bound at a short path (a socket's path has a length
                // limit), then moved into place.
                let short = self.path().join("s");
                drop(std::os::unix::net::UnixListener::bind(&short).unwrap());
                std::fs::rename(&short, &at).unwrap();
                vec![Made {
                    path: relative.to_string(),
                    says: "a socket".into(),
                }]
            }
            Hostile::Device => {
                // /dev/zero's numbers: a character device that never ends.
                let made = Command::new("mknod")
                    .arg(&at)
                    .args(["c", "1", "5"])
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success());
                if !made {
                    return None;
                }
                vec![Made {
                    path: relative.to_string(),
                    says: "a device".into(),
                }]
            }
        };
        Some(made)
    }

    fn run(&self, args: &[&str]) -> Limited {
        let run = run_limited(self.path(), args, &[("ASOGEN_TEST_TOKEN", ENV_SECRET)], 120);
        assert!(
            run.code.is_some(),
            "{args:?} was killed (timeout or memory): {}",
            run.stderr
        );
        run.assert_bounded(&format!("{args:?}"));
        for secret in [SECRET, ENV_SECRET] {
            assert!(
                !run.stdout.contains(secret) && !run.stderr.contains(secret),
                "{args:?} printed a link target's content:\n{}\n{}",
                run.stdout,
                run.stderr
            );
        }
        run
    }

    fn check(&self) -> Limited {
        self.run(&[
            "render",
            "--check",
            "--out",
            "gen",
            "--profiles",
            &profiles(),
        ])
    }

    fn render(&self) -> Limited {
        self.run(&["render", "--out", "gen", "--profiles", &profiles()])
    }
}

/// One render's output folder, shared by the tests (copied per case).
fn rendered_once() -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let run = run_limited(
            dir.path(),
            &["render", "--out", "gen", "--profiles", &profiles()],
            &[],
            120,
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        dir
    })
    .path()
    .join("gen")
}

/// The files render owns, from its marker.
fn owned() -> Vec<String> {
    let marker = std::fs::read_to_string(rendered_once().join(".asogen-output")).unwrap();
    marker
        .lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("asogen-output:"))
        .map(str::to_string)
        .collect()
}

/// What is under `dir`, seen without following links or opening anything
/// but regular files.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let key = path.strip_prefix(root).unwrap().display().to_string();
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            let what = if kind.is_symlink() {
                format!("link to {}", std::fs::read_link(&path).unwrap().display())
            } else if kind.is_dir() {
                walk(root, &path, out);
                "folder".into()
            } else if kind.is_file() {
                format!("file {:?}", std::fs::read(&path).unwrap())
            } else if kind.is_fifo() {
                "fifo".into()
            } else if kind.is_socket() {
                "socket".into()
            } else {
                "device".into()
            };
            out.insert(key, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// `render --check` reports every entry made, by path and by what it is.
fn assert_reported(check: &Limited, made: &[Made]) {
    assert_eq!(check.code, Some(1), "{}", check.stderr);
    for made in made {
        let header = format!("--- a/{}\t({}", made.path, made.says);
        assert!(
            check.stdout.contains(&header),
            "{header:?} not in:\n{}",
            check.stdout
        );
    }
}

fn name(hostile: Hostile) -> String {
    format!("{hostile:?}").to_lowercase()
}

#[test]
fn entries_render_does_not_write_are_reported_never_read_and_kept() {
    let case = Case::new().rendered();
    let mut made = Vec::new();
    // A name render does not write, and deep in a folder it does not.
    for prefix in ["extra-", "notes/deep/"] {
        for hostile in HOSTILE {
            made.extend(
                case.make(hostile, &format!("{prefix}{}", name(hostile)))
                    .unwrap_or_default(),
            );
        }
    }
    assert_reported(&case.check(), &made);
    let before = snapshot(&case.out());
    let render = case.render();
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    let after = snapshot(&case.out());
    for made in &made {
        assert_eq!(
            after.get(&made.path),
            before.get(&made.path),
            "{} is kept as it was",
            made.path
        );
    }
    // Nothing else changed either: render had written this very tree.
    assert_eq!(after, before);
}

#[test]
fn entries_where_render_writes_a_file_are_reported_and_replaced() {
    let case = Case::new().rendered();
    let owned = owned();
    let mut made = Vec::new();
    for (index, hostile) in HOSTILE.into_iter().enumerate() {
        // Spread over the tree: manifests, chart, kustomize.
        let path = &owned[index * owned.len() / HOSTILE.len()];
        made.extend(case.make(hostile, path).unwrap_or_default());
    }
    assert_reported(&case.check(), &made);
    let render = case.render();
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    let check = case.check();
    // What render owns is its again; only the second link to `.`, a name
    // render does not write, stays.
    assert_eq!(check.code, Some(1), "{}", check.stdout);
    let again: Vec<&Made> = made
        .iter()
        .filter(|made| made.path.ends_with("-again"))
        .collect();
    assert_reported(&check, &again.into_iter().cloned().collect::<Vec<_>>());
    assert_eq!(
        check.stdout.matches("\n--- a/").count() + usize::from(check.stdout.starts_with("--- ")),
        1,
        "{}",
        check.stdout
    );
}

#[test]
fn entries_where_render_writes_a_folder_or_its_marker_are_refused() {
    for hostile in HOSTILE {
        // Where render writes a folder, and its marker.
        for path in ["manifests", ".asogen-output"] {
            let case = Case::new().rendered();
            let Some(made) = case.make(hostile, path) else {
                continue;
            };
            let check = case.check();
            assert_reported(&check, &made);
            if path == "manifests" {
                // Every file render writes there is missing.
                assert!(
                    check.stdout.contains("+++ b/manifests/ha.yaml"),
                    "{}",
                    check.stdout
                );
            }
            let before = snapshot(&case.out());
            let render = case.render();
            assert_eq!(
                render.code,
                Some(2),
                "{hostile:?} at {path}: {}",
                render.stderr
            );
            assert!(
                render.stderr.contains(path) && render.stderr.contains("the folder is unchanged"),
                "{}",
                render.stderr
            );
            assert_eq!(snapshot(&case.out()), before, "{hostile:?} at {path}");
        }
    }
}

#[test]
fn the_checked_folder_itself_is_not_followed() {
    let case = Case::new();
    symlink(case.path().join("outside"), case.out()).unwrap();
    let check = case.check();
    assert_eq!(check.code, Some(2), "{}", check.stdout);
    assert!(
        check.stderr.contains(&format!(
            "gen is a symbolic link to {}",
            case.path().join("outside").display()
        )) && check.stderr.contains("help: pass the folder itself"),
        "{}",
        check.stderr
    );
    assert_eq!(check.stdout, "");
}

#[test]
fn large_files_in_the_folder_are_read_within_caps() {
    let case = Case::new().rendered();
    // Unique lines (the worst case for a diff), 5 MiB where render writes
    // a manifest and, after it, five extra files of 4 MiB: more than a
    // check reads in all.
    let lines = |seed: u64, bytes: usize| {
        let mut text = String::with_capacity(bytes + 64);
        let mut state = seed;
        while text.len() < bytes {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push_str(&format!("{state:016x}\n"));
        }
        text
    };
    std::fs::write(case.out().join("manifests/ha.yaml"), lines(1, 5 << 20)).unwrap();
    for i in 0..5 {
        std::fs::write(
            case.out().join(format!("zz-big-{i}.txt")),
            lines(i + 2, (4 << 20) - 64),
        )
        .unwrap();
    }
    let check = case.check();
    assert_eq!(check.code, Some(1), "{}", check.stderr);
    assert!(
        check
            .stdout
            .contains("--- a/manifests/ha.yaml\t(larger than"),
        "{}",
        &check.stdout[..check.stdout.len().min(2000)]
    );
    assert!(
        check.stdout.contains("reads at most"),
        "a file past the budget is named, not read"
    );
}

#[test]
fn template_and_release_read_their_folders_the_same_way() {
    // Fleet mode: a link to /dev/zero where a manifest is written, a FIFO
    // and a link to a secret beside it; then the marker as a link.
    let case = Case::new();
    let values = case.path().join("values");
    std::fs::create_dir(&values).unwrap();
    std::fs::write(values.join("east.yaml"), "replicaCount: 3\n").unwrap();
    let fleet = ["template", "--values-dir", "values", "--out", "gen"];
    assert_eq!(case.run(&fleet).code, Some(0));
    let mut made = Vec::new();
    for (hostile, path) in [
        (Hostile::LinkToDevZero, "east.yaml"),
        (Hostile::Fifo, "fifo"),
        (Hostile::Socket, "socket"),
        (Hostile::LinkToFile, "notes"),
    ] {
        made.extend(case.make(hostile, path).unwrap());
    }
    let run = case.run(&fleet);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let after = snapshot(&case.out());
    assert!(after["east.yaml"].starts_with("file"), "{after:?}");
    for path in ["fifo", "socket", "notes"] {
        assert_ne!(after.get(path), None, "{path} is kept");
    }
    case.make(Hostile::LinkToEnviron, ".asogen-output").unwrap();
    let run = case.run(&fleet);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(".asogen-output is a symbolic link to /proc/self/environ"),
        "{}",
        run.stderr
    );

    // A chart repository whose index.yaml is a link to a secret index, or
    // a FIFO: its content is never merged into the new index.
    for hostile in [Hostile::LinkToFile, Hostile::Fifo, Hostile::LinkToDevZero] {
        let case = Case::new();
        std::fs::write(
            case.path().join("outside/target.txt"),
            format!(
                "apiVersion: v1\nentries:\n  leak:\n  - name: leak\n    version: 1.0.0\n    description: {SECRET}\n"
            ),
        )
        .unwrap();
        std::fs::create_dir(case.out()).unwrap();
        let made = case.make(hostile, "index.yaml").unwrap();
        let run = case.run(&[
            "release",
            "--version",
            "2.22.0",
            "--out",
            "gen",
            "--profiles",
            &profiles(),
        ]);
        assert_eq!(run.code, Some(2), "{hostile:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains(&format!("index.yaml is {}", made[0].says)),
            "{}",
            run.stderr
        );
        assert_eq!(
            std::fs::read_dir(case.out()).unwrap().count(),
            1,
            "nothing written"
        );
    }
}

#[test]
fn diff_and_release_previous_follow_no_link_inside_a_folder() {
    // A Kubernetes object with a secret, outside: a link to it where an
    // install manifest is expected must not be compared, and so shown.
    let case = Case::new().rendered();
    std::fs::write(
        case.path().join("outside/target.txt"),
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: runner\n  namespace: x\ndata:\n  token: {SECRET}\n"
        ),
    )
    .unwrap();
    let made = case.make(Hostile::LinkToFile, "manifests/ha.yaml").unwrap();
    let rendered = rendered_once().display().to_string();
    let release = [
        "release",
        "--version",
        "2.22.0",
        "--out",
        "release",
        "--profiles",
        &profiles(),
    ];
    assert_eq!(case.run(&release).code, Some(0));
    case.make(Hostile::LinkToFile, "../release/install-ha.yaml")
        .unwrap();
    for format in ["human", "json", "markdown"] {
        for args in [
            vec!["diff", &rendered, "gen", "-o", format],
            vec!["diff", "release", "release", "-o", format],
        ] {
            let run = case.run(&args);
            assert_eq!(run.code, Some(2), "{args:?}: {}", run.stdout);
            assert!(
                run.stderr
                    .contains(&format!("ha.yaml: is {}", made[0].says)),
                "{}",
                run.stderr
            );
        }
    }
    let run = case.run(&[
        "release",
        "--version",
        "2.23.0",
        "--previous",
        "release",
        "--out",
        "next",
        "--profiles",
        &profiles(),
    ]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("install-ha.yaml: is a symbolic link"),
        "{}",
        run.stderr
    );
}
