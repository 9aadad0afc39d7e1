//! Bad input, run through the real binary like a user would: every file of
//! tests/bad-input through `validate`, `template` and `validate --format
//! json`, the inputs too large to commit generated here, and `render --out`
//! into places it cannot or must not write.
//!
//! Each corpus file starts with
//! `# expect: exit=N [at=LINE:COL] [key=KEY] [absent=TEXT] contains=TEXT`:
//! the exit code, where the first problem is, its key path, a text that
//! must never be printed (a secret), and the texts (` && ` between them)
//! that the report must contain. Files that cannot carry the comment are in
//! `HEADERLESS`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{asogen, asogen_in, text};
use serde_json::Value;

/// What a corpus file expects.
#[derive(Debug, Clone, Default)]
struct Expect {
    exit: i32,
    at: Option<(u64, u64)>,
    key: Option<String>,
    absent: Option<String>,
    contains: Vec<String>,
}

/// A file with no header: name, exit code, first position, expected text.
type Headerless = (&'static str, i32, Option<(u64, u64)>, &'static str);

/// Files with no room for the `# expect:` comment.
const HEADERLESS: [Headerless; 2] = [
    // Helm reads an empty values file as no values: the defaults, valid.
    ("empty.yaml", 0, None, "valid"),
    // `azureTenantID: caf\xe9`: Latin-1, not UTF-8.
    ("not-utf8.yaml", 1, Some((1, 19)), "not UTF-8"),
];

fn parse_header(path: &Path) -> Expect {
    let bytes = std::fs::read(path).unwrap();
    let body = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
    let first = String::from_utf8_lossy(body)
        .lines()
        .next()
        .unwrap_or("")
        .trim_end_matches('\r')
        .to_string();
    let fields = first
        .strip_prefix("# expect:")
        .unwrap_or_else(|| panic!("{} has no `# expect:` line", path.display()));
    let (words, contains) = fields
        .split_once("contains=")
        .unwrap_or_else(|| panic!("{}: no contains= in {first:?}", path.display()));
    let mut expect = Expect {
        contains: contains.split(" && ").map(str::to_string).collect(),
        ..Default::default()
    };
    let mut exit = None;
    for word in words.split_whitespace() {
        match word.split_once('=') {
            Some(("exit", n)) => exit = Some(n.parse().unwrap()),
            Some(("at", at)) => {
                let (line, column) = at.split_once(':').unwrap();
                expect.at = Some((line.parse().unwrap(), column.parse().unwrap()));
            }
            Some(("key", key)) => expect.key = Some(key.to_string()),
            Some(("absent", absent)) => expect.absent = Some(absent.to_string()),
            _ => panic!("{}: cannot read {word:?} in {first:?}", path.display()),
        }
    }
    expect.exit = exit.unwrap_or_else(|| panic!("{}: no exit=", path.display()));
    expect
}

/// Every corpus file (as a path relative to the repository root, the way a
/// user types it) with its expectation.
fn corpus() -> Vec<(String, Expect)> {
    let dir = common::root().join("tests/bad-input");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let path = format!("tests/bad-input/{name}");
        let expect = match HEADERLESS.iter().find(|(n, ..)| *n == name) {
            Some((_, exit, at, contains)) => Expect {
                exit: *exit,
                at: *at,
                contains: vec![contains.to_string()],
                ..Default::default()
            },
            None => parse_header(&dir.join(&name)),
        };
        out.push((path, expect));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, ..) in HEADERLESS {
        assert!(
            out.iter().any(|(p, _)| p.ends_with(name)),
            "{name} is missing"
        );
    }
    out
}

fn all_text(out: &Output) -> String {
    text(&out.stdout) + &text(&out.stderr)
}

/// The JSON report: a list of complete diagnostics, each naming `file`.
fn json_items(file: &str, out: &Output) -> Vec<Value> {
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: --format json printed no JSON ({e}):\n{}",
            all_text(out)
        )
    });
    let items = parsed
        .as_array()
        .unwrap_or_else(|| panic!("{file}: not a JSON list: {parsed}"))
        .clone();
    for item in &items {
        for field in [
            "file", "line", "column", "key", "rule", "keyword", "message", "help", "severity",
        ] {
            assert!(item.get(field).is_some(), "{file}: no `{field}` in {item}");
        }
        assert_eq!(item["file"], file, "{file}: {item}");
        assert!(item["key"].is_string(), "{file}: {item}");
        assert!(
            item["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{file}: {item}"
        );
        // A position is both numbers (1-based) or neither.
        match (item["line"].as_u64(), item["column"].as_u64()) {
            (Some(l), Some(c)) => assert!(l >= 1 && c >= 1, "{file}: {item}"),
            (None, None) => assert!(item["line"].is_null() && item["column"].is_null()),
            _ => panic!("{file}: half a position in {item}"),
        }
    }
    items
}

fn positions(items: &[Value]) -> Vec<(u64, u64)> {
    items
        .iter()
        .filter_map(|d| Some((d["line"].as_u64()?, d["column"].as_u64()?)))
        .collect()
}

/// Asserts what a refusing report (human, on `report`) must hold.
fn assert_human_report(what: &str, file: &str, report: &str, items: &[Value], expect: &Expect) {
    assert!(
        report.contains(file),
        "{what}: the report does not name {file}:\n{report}"
    );
    for (line, column) in positions(items) {
        let location = format!("{file}:{line}:{column}");
        assert!(
            report.contains(&location),
            "{what}: no `{location}` in\n{report}"
        );
    }
    for needle in &expect.contains {
        assert!(
            report.contains(needle),
            "{what}: no {needle:?} in\n{report}"
        );
    }
    assert_eq!(
        report.matches("  --> ").count(),
        items.len(),
        "{what}: one `-->` location per problem\n{report}"
    );
}

#[test]
fn every_corpus_file_is_refused_clearly_by_every_command() {
    let corpus = corpus();
    assert!(
        corpus.len() >= 40,
        "expected at least 40 corpus files, found {}",
        corpus.len()
    );
    for (file, expect) in &corpus {
        let json = asogen(&["validate", "-f", file, "--format", "json"]);
        let human = asogen(&["validate", "-f", file]);
        let template = asogen(&["template", "-f", file]);
        for (what, out) in [
            ("validate --format json", &json),
            ("validate", &human),
            ("template", &template),
        ] {
            assert_eq!(
                out.status.code(),
                Some(expect.exit),
                "{file}: {what} exit code\n{}",
                all_text(out)
            );
            if let Some(secret) = &expect.absent {
                assert!(
                    !all_text(out).contains(secret.as_str()),
                    "{file}: {what} printed the secret {secret:?}:\n{}",
                    all_text(out)
                );
            }
        }
        let items = json_items(file, &json);
        if expect.exit == 0 {
            assert!(items.is_empty(), "{file}: {items:?}");
            assert!(text(&human.stdout).contains("ok:"), "{file}");
            assert!(
                text(&template.stdout).contains("kind: Deployment"),
                "{file}: template printed no install"
            );
            continue;
        }
        assert!(!items.is_empty(), "{file}: refused with no diagnostic");
        // Everything in the corpus is a problem inside a file, so every
        // diagnostic has a position.
        assert_eq!(
            positions(&items).len(),
            items.len(),
            "{file}: a diagnostic without line/column: {items:?}"
        );
        if let Some(at) = expect.at {
            assert_eq!(
                positions(&items)[0],
                at,
                "{file}: first problem's position: {items:?}"
            );
        }
        if let Some(key) = &expect.key {
            assert_eq!(items[0]["key"], key.as_str(), "{file}: {items:?}");
        }
        let json_words: String = items
            .iter()
            .flat_map(|d| ["message", "help", "rule", "keyword"].map(|f| d[f].as_str()))
            .flatten()
            .collect::<Vec<_>>()
            .join("\n");
        for needle in &expect.contains {
            assert!(
                json_words.contains(needle),
                "{file}: no {needle:?} in the JSON report:\n{json_words}"
            );
        }
        // validate prints its report on stdout; template prints nothing
        // there and reports on stderr.
        assert_human_report(
            &format!("{file}: validate"),
            file,
            &text(&human.stdout),
            &items,
            expect,
        );
        assert!(
            template.stdout.is_empty(),
            "{file}: template printed a manifest for refused values"
        );
        assert_human_report(
            &format!("{file}: template"),
            file,
            &text(&template.stderr),
            &items,
            expect,
        );
    }
}

#[test]
fn secret_values_never_appear_in_any_output() {
    // The corpus carries the cases (absent=...); make sure they are there,
    // including a secret next to an error elsewhere in the file.
    let corpus = corpus();
    let secret_cases: Vec<&String> = corpus
        .iter()
        .filter(|(_, e)| e.absent.is_some())
        .map(|(f, _)| f)
        .collect();
    assert!(secret_cases.len() >= 5, "{secret_cases:?}");
    let elsewhere = "tests/bad-input/secret-with-error-elsewhere.yaml";
    assert!(secret_cases.iter().any(|f| *f == elsewhere));
    for format in ["human", "json", "github"] {
        let out = asogen(&["validate", "-f", elsewhere, "--format", format]);
        assert_eq!(out.status.code(), Some(1));
        assert!(!all_text(&out).contains("s3cr3t-value"), "{format}");
    }
}

/// Runs `validate`, `validate --format json` and `template` on `file` in
/// `dir`; asserts the exit code, that nothing is rendered, that every
/// output names the file and holds `needle`, and returns the JSON items.
fn refused_everywhere(dir: &Path, file: &str, code: i32, needle: &str) -> Vec<Value> {
    let json = asogen_in(dir, &["validate", "-f", file, "--format", "json"]);
    let items = json_items(file, &json);
    assert!(!items.is_empty(), "{file}");
    assert!(
        items
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains(needle)),
        "{file}: no {needle:?} in {items:?}"
    );
    for (what, out, report) in [
        ("json", &json, None),
        (
            "validate",
            &asogen_in(dir, &["validate", "-f", file]),
            Some(true),
        ),
        (
            "template",
            &asogen_in(dir, &["template", "-f", file]),
            Some(false),
        ),
    ] {
        assert_eq!(
            out.status.code(),
            Some(code),
            "{file}: {what}\n{}",
            all_text(out)
        );
        let Some(on_stdout) = report else { continue };
        let report = if on_stdout {
            text(&out.stdout)
        } else {
            assert!(out.stdout.is_empty(), "{file}: template printed something");
            text(&out.stderr)
        };
        assert!(report.contains(file), "{file}: {what}\n{report}");
        assert!(report.contains(needle), "{file}: {what}\n{report}");
        for (line, column) in positions(&items) {
            assert!(
                report.contains(&format!("{file}:{line}:{column}")),
                "{file}: {what}\n{report}"
            );
        }
    }
    items
}

#[test]
fn a_100_mb_file_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let line = "# padding padding padding padding padding padding padding padding\n";
    let mut body = String::with_capacity(100 * 1024 * 1024 + line.len());
    body.push_str("replicaCount: 2\n");
    while body.len() < 100 * 1024 * 1024 {
        body.push_str(line);
    }
    std::fs::write(dir.path().join("huge.yaml"), &body).unwrap();
    drop(body);
    let start = Instant::now();
    let items = refused_everywhere(dir.path(), "huge.yaml", 1, "asogen reads files up to");
    assert!(
        items[0]["message"].as_str().unwrap().contains("4194304"),
        "{items:?}"
    );
    // Refused by its size, so no position.
    assert!(items[0]["line"].is_null());
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn an_endless_device_is_refused_without_filling_memory() {
    let zero = Path::new("/dev/zero");
    if !zero.exists() {
        println!("note: no /dev/zero here; skipped");
        return;
    }
    // Under a 2 GiB address-space limit, so a regression fails this test
    // instead of filling the machine's memory.
    let out = Command::new("sh")
        .args([
            "-c",
            "ulimit -v 2097152 && exec \"$0\" validate -f /dev/zero --format json",
            env!("CARGO_BIN_EXE_asogen"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", all_text(&out));
    let items = json_items("/dev/zero", &out);
    assert!(
        items[0]["message"]
            .as_str()
            .unwrap()
            .contains("larger than"),
        "{items:?}"
    );
}

#[test]
fn a_billion_laughs_alias_bomb_is_refused_fast() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for level in 1..10 {
        let refs = vec![format!("*a{}", level - 1); 9].join(",");
        body.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
    }
    body.push_str("podLabels: *a9\n");
    std::fs::write(dir.path().join("bomb.yaml"), body).unwrap();
    let start = Instant::now();
    let items = refused_everywhere(dir.path(), "bomb.yaml", 1, "alias bomb");
    assert!(items[0]["line"].as_u64().is_some());
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "three runs took {:?}",
        start.elapsed()
    );
}

#[test]
fn deep_nesting_is_refused_with_a_position() {
    let dir = tempfile::tempdir().unwrap();
    let mut block = String::new();
    for depth in 0..200 {
        block.push_str(&format!("{}k{depth}:\n", "  ".repeat(depth)));
    }
    block.push_str(&format!("{}leaf: 1\n", "  ".repeat(200)));
    std::fs::write(dir.path().join("deep-block.yaml"), block).unwrap();
    let depth = 100_000;
    let flow_list = format!("podLabels: {}{}\n", "[".repeat(depth), "]".repeat(depth));
    std::fs::write(dir.path().join("deep-flow-list.yaml"), flow_list).unwrap();
    let flow_map = format!(
        "podLabels: {}1{}\n",
        "{a: ".repeat(depth),
        "}".repeat(depth)
    );
    std::fs::write(dir.path().join("deep-flow-map.yaml"), flow_map).unwrap();
    let items = refused_everywhere(dir.path(), "deep-block.yaml", 1, "nesting deeper than 128");
    assert_eq!(items[0]["line"], 130, "{items:?}");
    refused_everywhere(
        dir.path(),
        "deep-flow-map.yaml",
        1,
        "nesting deeper than 128",
    );
    // The parser's own limit on flow nesting comes first for flow lists,
    // with the same message.
    let items = refused_everywhere(
        dir.path(),
        "deep-flow-list.yaml",
        1,
        "nesting deeper than 128",
    );
    assert_eq!(items[0]["keyword"], "yaml", "{items:?}");
}

#[test]
fn io_errors_exit_2_and_name_the_path() {
    let dir = "tests/bad-input";
    let missing = "tests/bad-input/does-not-exist.yaml";
    for (file, needle) in [
        (dir, "is a directory"),
        (missing, "cannot read values file"),
    ] {
        for args in [
            vec!["validate", "-f", file],
            vec!["template", "-f", file],
            vec!["validate", "-f", file, "--format", "json"],
        ] {
            let out = asogen(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}\n{}", all_text(&out));
            let all = all_text(&out);
            assert!(
                all.contains(file) && all.contains(needle),
                "{args:?}\n{all}"
            );
            if args.contains(&"template") {
                assert!(out.stdout.is_empty());
            }
            if args.contains(&"json") {
                let items = json_items(file, &out);
                assert_eq!(items.len(), 1);
                assert!(items[0]["line"].is_null(), "{items:?}");
            }
        }
    }
    // An I/O error and a file that does not parse: exit 2, both reported.
    let out = asogen(&[
        "validate",
        "--format",
        "json",
        "-f",
        missing,
        "-f",
        "tests/bad-input/yaml-stray-colon.yaml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let parsed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files: Vec<&str> = parsed
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, [missing, "tests/bad-input/yaml-stray-colon.yaml"]);
}

/// Whether permission bits stop this process (not so for root).
fn permissions_bite(read_only_dir: &Path) -> bool {
    let probe = read_only_dir.join(".probe");
    match std::fs::write(&probe, "x") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            false
        }
        Err(_) => true,
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secret.yaml");
    std::fs::write(&file, "replicaCount: 1\n").unwrap();
    set_mode(&file, 0o000);
    if std::fs::read(&file).is_ok() {
        println!("note: running as root; an unreadable file is readable here, skipped");
        return;
    }
    let out = asogen_in(dir.path(), &["validate", "-f", "secret.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", all_text(&out));
    assert!(all_text(&out).contains("secret.yaml"));
}

/// Every file under `dir` by relative path, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.insert(
                    path.strip_prefix(base).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn profiles() -> String {
    common::root()
        .join("values/profiles")
        .to_str()
        .unwrap()
        .to_string()
}

fn render_into(dir: &Path, out: &str) -> Output {
    asogen_in(dir, &["render", "--out", out, "--profiles", &profiles()])
}

/// Leftovers of a render (staging or retired trees) next to `out`.
fn leftovers(parent: &Path) -> Vec<String> {
    std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".new-") || n.contains(".old-"))
        .collect()
}

#[cfg(unix)]
#[test]
fn render_into_a_read_only_folder_fails_and_keeps_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir_all(ro.join("gen")).unwrap();
    std::fs::write(ro.join("gen/keep.txt"), "precious").unwrap();
    set_mode(&ro, 0o555);
    if !permissions_bite(&ro) {
        set_mode(&ro, 0o755);
        println!(
            "note: running as root, so a read-only folder is writable; \
             skipped the read-only render assertion"
        );
        return;
    }
    let out = render_into(dir.path(), "ro/gen");
    set_mode(&ro, 0o755);
    assert_eq!(out.status.code(), Some(2), "{}", all_text(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot write ro/gen") && stderr.contains("unchanged"),
        "{stderr}"
    );
    assert_eq!(
        tree(&ro.join("gen")),
        BTreeMap::from([(PathBuf::from("keep.txt"), b"precious".to_vec())])
    );
    assert!(leftovers(&ro).is_empty(), "{:?}", leftovers(&ro));
}

#[test]
fn render_into_a_folder_whose_parent_is_a_file_fails_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("afile"), "precious").unwrap();
    let out = render_into(dir.path(), "afile/gen");
    assert_eq!(out.status.code(), Some(2), "{}", all_text(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot write afile/gen") && stderr.contains("unchanged"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("afile")).unwrap(),
        "precious"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn concurrent_renders_into_one_folder_equal_a_single_render() {
    let dir = tempfile::tempdir().unwrap();
    let single = render_into(dir.path(), "single");
    assert_eq!(single.status.code(), Some(0), "{}", all_text(&single));
    let expected = tree(&dir.path().join("single"));
    assert!(expected.len() > 10);
    // First onto nothing, then replacing an existing tree.
    for round in 0..2 {
        let children: Vec<_> = (0..2)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_asogen"))
                    .args(["render", "--out", "same", "--profiles", &profiles()])
                    .current_dir(dir.path())
                    .env("NO_COLOR", "1")
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "round {round}: {}",
                all_text(&out)
            );
        }
        let got = tree(&dir.path().join("same"));
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "round {round}: different files"
        );
        for (path, bytes) in &expected {
            assert!(
                got[path] == *bytes,
                "round {round}: {} differs",
                path.display()
            );
        }
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }
}

#[test]
fn github_annotations_of_every_corpus_file_hold_no_control_characters() {
    // Workflow commands end at a newline and a terminal obeys escape
    // sequences: each annotation is one line of printable text.
    let corpus = corpus();
    assert!(
        corpus
            .iter()
            .any(|(file, _)| file.ends_with("control-escape-in-key.yaml")),
        "the corpus holds a key with escape sequences"
    );
    for (file, expect) in &corpus {
        let out = asogen(&["validate", "-f", file, "--format", "github"]);
        assert_eq!(out.status.code(), Some(expect.exit), "{file}");
        let report = text(&out.stdout);
        for line in report.lines() {
            assert!(
                line.starts_with("::error ") || line.starts_with("::warning "),
                "{file}: {line:?}"
            );
            assert!(
                !line.chars().any(char::is_control),
                "{file}: a control character in {line:?}"
            );
        }
    }
}

#[test]
fn many_problems_print_the_first_hundred_and_a_count_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let keys = 20_000;
    let body: String = (0..keys).map(|i| format!("unknownKey{i}: {i}\n")).collect();
    std::fs::write(dir.path().join("many.yaml"), body).unwrap();
    let timed = |args: &[&str]| {
        let start = Instant::now();
        let out = asogen_in(dir.path(), args);
        (out, start.elapsed())
    };
    let (json, json_time) = timed(&["validate", "-f", "many.yaml", "--format", "json"]);
    assert_eq!(json_items("many.yaml", &json).len(), keys);
    let (human, human_time) = timed(&["validate", "-f", "many.yaml"]);
    assert_eq!(human.status.code(), Some(1));
    let report = text(&human.stdout);
    assert_eq!(report.matches("  --> ").count(), 100, "{report:.2000}");
    assert!(
        report.contains(&format!(
            "... and {} more problems (use -o json for all)",
            keys - 100
        )),
        "{report:.2000}"
    );
    assert!(report.ends_with(&format!("{keys} problems found\n")));
    // The human report costs about what the JSON report costs (it used to
    // rescan the file for every problem).
    assert!(
        human_time < json_time * 3 / 2 + Duration::from_secs(1),
        "human {human_time:?}, json {json_time:?}"
    );
}

/// A value outside a rule key's enum does not hide the rules: read as the
/// value it differs from only in case (what its error suggests, said in
/// the message), or else as every value it allows, a rule broken in every
/// reading is reported beside the enum error, and one broken only in some
/// is not.
#[test]
fn a_misspelt_enum_value_hides_no_rule_that_holds_whatever_it_meant() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], Option<&str>); 4] = [
        (
            "topology: Split\nsplit:\n  webhooks:\n    maxSurge: 0\n",
            &["enum", "split-webhooks-never-unavailable"],
            Some("topology read as split"),
        ),
        // not a case slip: single, split and bridge disagree on the rule
        (
            "topology: Splt\nsplit:\n  webhooks:\n    maxSurge: 0\n",
            &["enum"],
            None,
        ),
        (
            "replicaCount: 3\nstrategy:\n  type: recreate\n  rollingUpdate:\n    maxSurge: 1\n",
            &["enum", "recreate-forbids-rolling-update"],
            Some("strategy.type read as Recreate"),
        ),
        // broken whichever type was meant
        (
            "replicaCount: 0\nstrategy:\n  type: Rolling\n",
            &["enum", "replica-count-positive"],
            None,
        ),
    ];
    for (values, expected, assumed) in cases {
        std::fs::write(dir.path().join("values.yaml"), values).unwrap();
        let out = asogen_in(dir.path(), &["validate", "-f", "values.yaml", "-o", "json"]);
        assert_eq!(out.status.code(), Some(1), "{values}");
        let items = json_items("values.yaml", &out);
        let mut codes: Vec<&str> = items
            .iter()
            .map(|d| {
                d["rule"]
                    .as_str()
                    .or(d["keyword"].as_str())
                    .unwrap_or_default()
            })
            .collect();
        codes.sort();
        assert_eq!(codes, expected, "{values}: {items:?}");
        let rule = items.iter().find(|d| d["rule"].is_string());
        let said = rule.map(|d| d["message"].as_str().unwrap().to_string());
        match assumed {
            Some(reading) => assert!(
                said.as_deref().is_some_and(|m| m.contains(reading)),
                "{values}: {said:?}"
            ),
            None => assert!(
                !said.as_deref().is_some_and(|m| m.contains("read as")),
                "{values}: {said:?}"
            ),
        }
    }
}
