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
//! command, in the order their inputs need:
//!
//! 1. `src/keys/all.rs` (from the values schema) and
//!    `src/catalog/tables.rs` (from values/catalog.json), which are
//!    compiled into asogen: this process links the library with feature
//!    `sourcegen`, which builds even with stale tables. When it writes
//!    either, what comes next must be built from the new ones, so it runs
//!    `cargo xtask regen` once more, a new build;
//! 2. the docs' generated tables (the README's rules, docs/rules.md,
//!    docs/split-topology.md, docs/artifacts.md);
//! 3. `generated/`, by `asogen render` itself.
//!
//! 1 and 2 are `asogen::render::sourcegen`, written through its one
//! `ensure_file_contents`; no test writes anything. `--check` writes
//! nothing and exits 1 when anything is stale (CI runs it).

use std::process::{Command, ExitCode};

/// The cargo arguments of `asogen render`, which writes `generated/`
/// (with `--check` after them, compares it).
const RENDER: &[&str] = &[
    "run",
    "--locked",
    "--quiet",
    "--package",
    "asogen",
    "--bin",
    "asogen",
    "--",
    "render",
];

/// Set when this process is the second run, after the compiled-in
/// sources were written: they must be current then.
const AFTER_SOURCES: &str = "ASOGEN_XTASK_AFTER_SOURCES";

/// The fast lane's integration tests: one binary, `tests/fast/` (every
/// file there is in the lane; tests/common refuses them a tool under
/// `ASOGEN_FAST_LANE`).
const FAST_LANE: &str = "fast";

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
    command.args(["--test", FAST_LANE]);
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
    regen(&cargo, root, check)
}

/// `cargo xtask regen [--check]`.
fn regen(cargo: &std::ffi::OsStr, root: &std::path::Path, check: bool) -> ExitCode {
    use asogen::render::sourcegen::{self, Fresh, Generated};
    let mut stale = Vec::new();
    // Writes or checks each generated text, naming what it did.
    let ensure = |all: Result<Vec<Generated>, String>, stale: &mut Vec<String>| {
        let all = all.map_err(|err| format!("xtask: {err}"))?;
        let mut written = false;
        for generated in &all {
            let name = generated.name();
            match sourcegen::ensure_file_contents(root, generated, !check)
                .map_err(|err| format!("xtask: {err}"))?
            {
                Fresh::Current => {}
                Fresh::Stale => stale.push(name),
                Fresh::Written => {
                    eprintln!("xtask: wrote {name}");
                    written = true;
                }
            }
        }
        Ok::<bool, String>(written)
    };
    eprintln!(
        "xtask: {} the compiled-in sources",
        if check { "checking" } else { "regenerating" }
    );
    let wrote_sources = match ensure(sourcegen::compiled_in(), &mut stale) {
        Ok(written) => written,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    if wrote_sources {
        if std::env::var_os(AFTER_SOURCES).is_some() {
            eprintln!(
                "xtask: the compiled-in sources changed again after a rebuild; a generator is not deterministic"
            );
            return ExitCode::FAILURE;
        }
        eprintln!("xtask: the compiled-in sources changed: running again on a build of them");
        return match Command::new(cargo)
            .args(["xtask", "regen"])
            .env(AFTER_SOURCES, "1")
            .current_dir(root)
            .status()
        {
            Ok(status) if status.success() => ExitCode::SUCCESS,
            Ok(_) => ExitCode::FAILURE,
            Err(err) => {
                eprintln!("xtask: cannot run cargo: {err}");
                ExitCode::FAILURE
            }
        };
    }
    eprintln!(
        "xtask: {} the docs' tables",
        if check { "checking" } else { "regenerating" }
    );
    if let Err(err) = ensure(sourcegen::docs(root), &mut stale) {
        eprintln!("{err}");
        return ExitCode::FAILURE;
    }
    eprintln!(
        "xtask: {} generated/",
        if check { "checking" } else { "regenerating" }
    );
    let mut render = Command::new(cargo);
    render.args(RENDER).current_dir(root);
    if check {
        render.arg("--check");
    }
    match render.status() {
        Ok(status) if status.success() => {}
        Ok(_) if check => stale.push("generated/".into()),
        Ok(status) => {
            eprintln!("xtask: regenerating generated/ failed ({status}); see above");
            return ExitCode::FAILURE;
        }
        Err(err) => {
            eprintln!("xtask: cannot run cargo: {err}");
            return ExitCode::FAILURE;
        }
    }
    if stale.is_empty() {
        eprintln!(
            "xtask: every generated file is {}",
            if check { "current" } else { "written" }
        );
        ExitCode::SUCCESS
    } else {
        eprintln!("xtask: stale: {}; {}", stale.join(", "), sourcegen::REMEDY);
        ExitCode::FAILURE
    }
}
