//! Endless input never fills memory: each command of
//! tests/limits/commands.txt runs under `prlimit --as=1073741824` (1 GiB of
//! address space) and `/usr/bin/time -v`, and must exit as expected with a
//! peak resident size under 200 MiB. The values file cap (4 MiB) applies to
//! every read, and a report prints from what was read, never reading a file
//! again.

use crate::common;

use std::process::{Command, Stdio};

use common::{root, text};

const LIMIT_KIB: u64 = 200 * 1024;

#[test]
fn endless_input_stays_under_200_mib() {
    if !std::path::Path::new("/usr/bin/time").exists()
        || !std::path::Path::new("/dev/zero").exists()
    {
        panic!("this test needs /usr/bin/time (Debian package `time`) and /dev/zero");
    }
    let corpus = std::fs::read_to_string(root().join("tests/limits/commands.txt")).unwrap();
    let mut count = 0;
    for line in corpus
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        let exit: i32 = words.remove(0).parse().unwrap();
        let zero_stdin = words.last() == Some(&"<zero");
        if zero_stdin {
            words.pop();
        }
        let stdin = if zero_stdin {
            Stdio::from(std::fs::File::open("/dev/zero").unwrap())
        } else {
            Stdio::null()
        };
        let out = Command::new("/usr/bin/time")
            .args(["-v", "prlimit", "--as=1073741824"])
            .arg(env!("CARGO_BIN_EXE_asogen"))
            .args(&words)
            .current_dir(root())
            .env("NO_COLOR", "1")
            .stdin(stdin)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        let peak: u64 = stderr
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("Maximum resident set size (kbytes): ")
            })
            .unwrap_or_else(|| panic!("{line}: no peak in {stderr}"))
            .parse()
            .unwrap();
        assert_eq!(out.status.code(), Some(exit), "{line}: {stderr}");
        assert!(
            peak < LIMIT_KIB,
            "{line}: peak resident size {} MiB",
            peak / 1024
        );
        assert!(
            text(&out.stdout).contains("larger than") || stderr.contains("larger than"),
            "{line}: {}",
            text(&out.stdout)
        );
        count += 1;
    }
    assert!(count >= 8, "{count} commands");
}

use crate::measure;

#[test]
fn many_set_list_indexes_are_refused_at_once_under_200_mib() {
    // Helm bounds each list index (65,536), not their sum: 200 flags of
    // `x[65536]=1` took 53 s and 2.8 GB before the whole family had a
    // budget. Each shape: distinct lists, one list set again and again,
    // lists within lists, maps within a list, and many indexes in one flag.
    let many = |make: &dyn Fn(usize) -> String, count: usize| -> Vec<String> {
        (0..count)
            .flat_map(|i| ["--set".to_string(), make(i)])
            .collect()
    };
    let in_one_flag = (0..200)
        .map(|i| format!("x{i}[65536]=1"))
        .collect::<Vec<_>>()
        .join(",");
    let shapes: Vec<(&str, Vec<String>)> = vec![
        ("distinct lists", many(&|i| format!("x{i}[65536]=1"), 200)),
        ("one list", many(&|_| "x[65536]=1".into(), 200)),
        (
            "nested lists",
            many(&|i| format!("x[0][{}]=1", 65536 - i), 200),
        ),
        ("maps in a list", many(&|i| format!("x[65536].k{i}=1"), 200)),
        ("one flag", vec!["--set".into(), in_one_flag]),
        (
            "set-string and set-json",
            (0..100)
                .flat_map(|i| {
                    [
                        "--set-string".to_string(),
                        format!("s{i}[65536]=1"),
                        "--set-json".to_string(),
                        format!("j{i}[65536]=1"),
                    ]
                })
                .collect(),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (what, flags) in shapes {
        let mut args = vec!["validate"];
        args.extend(flags.iter().map(String::as_str));
        let run = measure::run_limited(dir.path(), &args, &[], 120);
        assert_eq!(run.code, Some(1), "{what}: {}", run.stderr);
        assert!(
            run.stdout
                .contains("list elements and values; Helm allows an index up to 65536"),
            "{what}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains("1 problem found"),
            "{what}: {}",
            run.stdout
        );
        run.assert_bounded(what);
    }
    // Below the budget, Helm's largest index still works, several times.
    let flags = many(&|i| format!("podLabels.x{i}[65536]=1"), 4);
    let mut args = vec!["validate"];
    args.extend(flags.iter().map(String::as_str));
    let run = measure::run_limited(dir.path(), &args, &[], 120);
    assert!(
        !run.stdout.contains("list elements and values"),
        "{}",
        run.stdout
    );
    run.assert_bounded("four of Helm's largest lists");
}

#[test]
fn aliases_of_a_long_text_are_refused_at_the_alias_under_200_mib() {
    // A 1 MiB anchored string and 1,500 aliases of it: the reader bounded
    // nodes, not the text they stand for, and `validate` copied gigabytes
    // (aborted at 1.9 GB under a 2 GiB cap). Each shape of the class: the
    // aliases in a list, as map values, and an anchored map of long texts.
    let long = "x".repeat(1024 * 1024);
    let lines = |item: &dyn Fn(usize) -> String| -> String {
        (0..1500).map(item).collect::<Vec<_>>().join("\n")
    };
    let shapes: Vec<(&str, String, usize)> = vec![
        (
            "a list of aliases",
            format!(
                "podAnnotations: {{a: &s \"{long}\"}}\ntolerations:\n{}\n",
                lines(&|_| "  - key: *s".into())
            ),
            7,
        ),
        (
            "map values",
            format!(
                "podAnnotations: {{a: &s \"{long}\"}}\npodLabels:\n{}\n",
                lines(&|i| format!("  k{i}: *s"))
            ),
            7,
        ),
        (
            "an anchored map",
            format!(
                "podAnnotations: &m {{a: \"{}\", b: \"{}\"}}\nnodeSelector: *m\naffinity:\n{}\n",
                &long[..600_000],
                &long[..600_000],
                lines(&|i| format!("  k{i}: *m"))
            ),
            6,
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (what, text, line) in shapes {
        std::fs::write(dir.path().join("values.yaml"), &text).unwrap();
        let run = measure::run_limited(dir.path(), &["validate", "-f", "values.yaml"], &[], 120);
        assert_eq!(run.code, Some(1), "{what}: {}", run.stderr);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains("aliases stand for more than 4 MiB of text")
                && said.contains(&format!("values.yaml:{line}:")),
            "{what}: refused at the alias, line {line}: {said}"
        );
        run.assert_bounded(what);
    }
}
