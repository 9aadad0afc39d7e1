//! Endless input never fills memory: each command of
//! tests/limits/commands.txt runs under `prlimit --as=1073741824` (1 GiB of
//! address space) and `/usr/bin/time -v`, and must exit as expected with a
//! peak resident size under 200 MiB. The values file cap (4 MiB) applies to
//! every read, and a report prints from what was read, never reading a file
//! again.

mod common;

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
