//! Running the binary under limits: an address-space cap of 1 GiB
//! (`prlimit --as`), a wall-clock timeout (`timeout -s KILL`), and its
//! peak resident memory measured by GNU time. Where one of these tools is
//! missing the command runs without it (and without a figure).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: `ASOGEN_BIN` (to run these tests against
/// another build), else this package's.
pub fn bin() -> PathBuf {
    std::env::var_os("ASOGEN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_asogen")))
}

/// The most memory a command may hold at its peak.
pub const PEAK_LIMIT_KIB: u64 = 200 * 1024;

/// A run under limits.
pub struct Limited {
    /// Its exit code (None: killed, e.g. by the timeout).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error, without GNU time's lines.
    pub stderr: String,
    /// Peak resident memory, when GNU time was there to measure it.
    pub peak_kib: Option<u64>,
    /// Wall-clock time.
    pub seconds: f64,
}

fn have(tool: &str) -> bool {
    Path::new(tool).exists()
}

/// Runs asogen with `args` in `dir` with at most 1 GiB of address space
/// and `timeout` seconds.
pub fn run_limited(dir: &Path, args: &[&str], env: &[(&str, &str)], timeout: u32) -> Limited {
    let mut command: Vec<String> = Vec::new();
    if have("/usr/bin/timeout") {
        command.extend([
            "/usr/bin/timeout".into(),
            "-s".into(),
            "KILL".into(),
            timeout.to_string(),
        ]);
    }
    if have("/usr/bin/prlimit") {
        command.extend(["/usr/bin/prlimit".into(), "--as=1073741824".into()]);
    }
    if have("/usr/bin/time") {
        command.extend([
            "/usr/bin/time".into(),
            "-f".into(),
            "asogen-peak-kib=%M".into(),
        ]);
    }
    command.push(bin().display().to_string());
    command.extend(args.iter().map(|a| a.to_string()));
    let started = std::time::Instant::now();
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(&command[0])
        .args(&command[1..])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("the command runs");
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    let mut peak_kib = None;
    let mut kept = String::new();
    for line in stderr.lines() {
        if let Some(kib) = line.strip_prefix("asogen-peak-kib=") {
            peak_kib = kib.trim().parse().ok();
        } else if !line.starts_with("Command exited with non-zero status")
            && !line.starts_with("Command terminated by signal")
        {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    // GNU time passes the exit code on; 137 is the timeout's KILL.
    let code = status.code().filter(|code| *code != 137 && *code < 128);
    assert_ne!(code, Some(101), "asogen panicked: {kept}");
    Limited {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: kept,
        peak_kib,
        seconds,
    }
}

impl Limited {
    /// Asserts the run stayed under [`PEAK_LIMIT_KIB`].
    pub fn assert_bounded(&self, what: &str) {
        if let Some(peak) = self.peak_kib {
            assert!(
                peak < PEAK_LIMIT_KIB,
                "{what}: peak {peak} KiB, above {PEAK_LIMIT_KIB} KiB\n{}",
                self.stderr
            );
        }
    }
}
