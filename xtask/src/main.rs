//! The repository's own tasks, the cargo xtask convention as
//! rust-analyzer uses it.
//!
//! `cargo xtask fast`: the fast test lane, the library's unit tests and
//! the integration tests that run no external tool (no Helm, kustomize,
//! Go, kubectl, API server or language server), for a contributor's loop;
//! `cargo test --locked` still runs everything. The lane sets
//! `ASOGEN_FAST_LANE`, under which the tests' one way to a tool
//! (tests/common) fails, so a test that starts needing a tool cannot stay
//! in it unnoticed.
//!
//! `cargo xtask regen [--check]`: every file of the repository generated
//! from its own data, written (or, with `--check`, compared) in one
//! command. Each kind
//! of file keeps its generator and its check where the data is; this runs
//! them in the order their inputs need:
//!
//! 1. `src/keys/all.rs` (from the values schema) and
//!    `src/catalog/tables.rs` (from values/catalog.json): compiled into the
//!    library, so they come first, from the library's unit tests, which
//!    build without the tables' freshness check;
//! 2. the docs' generated tables (the README's rules, docs/rules.md,
//!    docs/split-topology.md, docs/artifacts.md), from tests/docs.rs;
//! 3. `generated/`, from `asogen render` itself.
//!
//! Writing is asked of the generators with `ASOGEN_REGEN=write`; without
//! it, as in `cargo test`, each only checks and names this command when
//! its file is stale. `--check` writes nothing and exits 1 when anything
//! is stale (CI runs it).

use std::process::{Command, ExitCode};

/// One step: what it regenerates, the cargo arguments that do it, and
/// what it adds to them to only check (the tests check without
/// `ASOGEN_REGEN`; `asogen render` takes `--check`).
struct Step {
    what: &'static str,
    cargo: &'static [&'static str],
    check: &'static [&'static str],
}

const STEPS: [Step; 3] = [
    Step {
        what: "src/keys/all.rs and src/catalog/tables.rs",
        cargo: &[
            "test",
            "--locked",
            "--quiet",
            "--package",
            "asogen",
            "--lib",
            "--",
            "keys_source",
            "catalog_source",
        ],
        check: &[],
    },
    Step {
        what: "the docs' generated tables",
        cargo: &[
            "test",
            "--locked",
            "--quiet",
            "--package",
            "asogen",
            "--test",
            "docs",
        ],
        check: &[],
    },
    Step {
        what: "generated/",
        cargo: &[
            "run",
            "--locked",
            "--quiet",
            "--package",
            "asogen",
            "--bin",
            "asogen",
            "--",
            "render",
        ],
        check: &["--check"],
    },
];

/// The integration tests of the fast lane: each runs asogen and reads
/// files, and nothing else (tests/common refuses them a tool under
/// `ASOGEN_FAST_LANE`).
const FAST_LANE: &[&str] = &[
    "bad_input",
    "bounded_reads",
    "catalog",
    "cli",
    "controller_interface",
    "diff",
    "docs",
    "fleet",
    "fuzz_corpus",
    "layout",
    "memory_limits",
    "narrowed_checker",
    "output",
    "quickstart",
    "secret_flags",
    "split_topology",
];

/// The library crates under crates/, whose unit tests the fast lane runs.
const CRATES: &[&str] = &[
    "chart-template",
    "go-semantics",
    "helm-values",
    "output-folder",
];

const USAGE: &str = "usage: cargo xtask regen [--check] | fast [CARGO TEST ARGS]\n\n  regen           write every generated file that is stale\n  regen --check   write nothing; exit 1 if any generated file is stale\n  fast            the fast test lane: unit tests and the integration\n                  tests that run no external tool (docs/development.md)";

/// Runs the fast lane, passing `extra` on to `cargo test`.
fn fast(cargo: &std::ffi::OsStr, root: &std::path::Path, extra: &[String]) -> ExitCode {
    let mut command = Command::new(cargo);
    // asogen and its crates (crates/): the unit tests of their libraries
    // and of the command line (a binary crate), then asogen's integration
    // tests of the lane.
    command.args(["test", "--locked", "--package", "asogen"]);
    for crate_name in CRATES {
        command.args(["--package", crate_name]);
    }
    command.args(["--lib", "--bins"]);
    for test in FAST_LANE {
        command.args(["--test", test]);
    }
    command
        .args(extra)
        .env("ASOGEN_FAST_LANE", "1")
        .current_dir(root);
    match command.status() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("xtask: cannot run cargo: {err}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // the repository root: this crate's parent folder
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ is inside the repository");
    if args.first().map(String::as_str) == Some("fast") {
        return fast(&cargo, root, &args[1..]);
    }
    let check = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["regen"] => false,
        ["regen", "--check"] => true,
        ["-h" | "--help" | "help"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut stale = Vec::new();
    for step in &STEPS {
        eprintln!(
            "xtask: {} {}",
            if check { "checking" } else { "regenerating" },
            step.what
        );
        let mut command = Command::new(&cargo);
        command.args(step.cargo).current_dir(root);
        if check {
            command.args(step.check);
        }
        if check {
            command.env_remove("ASOGEN_REGEN");
        } else {
            command.env("ASOGEN_REGEN", "write");
        }
        match command.status() {
            Ok(status) if status.success() => {}
            Ok(_) if check => stale.push(step.what),
            Ok(status) => {
                eprintln!(
                    "xtask: regenerating {} failed ({status}); see above",
                    step.what
                );
                return ExitCode::FAILURE;
            }
            Err(err) => {
                eprintln!("xtask: cannot run cargo: {err}");
                return ExitCode::FAILURE;
            }
        }
    }
    if stale.is_empty() {
        eprintln!(
            "xtask: every generated file is {}",
            if check { "current" } else { "written" }
        );
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "xtask: stale: {}; run `cargo xtask regen`",
            stale.join(", ")
        );
        ExitCode::FAILURE
    }
}
