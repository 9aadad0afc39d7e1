//! The commands: one function per command, each taking its arguments from
//! [`crate::cli`] (or the settings [`crate::config`] builds from them) and a
//! [`Stdout`] writer, and returning a [`Status`] or its own error type, a
//! [`Failure`] that knows its exit code and how it is reported.
//! Also what several commands share: reading the values given on the
//! command line, reading a fleet folder, and showing problems.
//!
//! Exit codes: 0 ok; 1 the input or the check failed; 2 usage or I/O error.

pub mod catalog;
pub mod completions;
pub mod diff;
pub mod release;
pub mod render;
pub mod schema;
pub mod show;
pub mod template;
pub mod upgrade_check;
pub mod upgrade_plan;
pub mod validate;

use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{CatalogCommand, Cli, Command};
use crate::config::{ConfigError, ReleaseConfig, TemplateConfig};
use asogen::diagnostics::{self, Diagnostic};
use asogen::exit::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use asogen::features::fleet::Fleet;
use asogen::output::{OutputError, Stdout};
use asogen::read::{self, LoadError, Source, ValuesInput};

/// How a command that ran to its end came out; its report (on standard
/// output or standard error) says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything passed.
    Success,
    /// The check failed: invalid values, a refused upgrade, a breaking change.
    Failed,
    /// Some input could not be read (the report names it).
    Unreadable,
}

impl Status {
    /// The exit code: 0, 1 or 2.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Success => EXIT_OK,
            Status::Failed => EXIT_FAILED,
            Status::Unreadable => EXIT_USAGE,
        }
    }
}

/// A command's error: its exit code and what to print on standard error.
pub trait Failure: std::error::Error + Send + Sync + 'static {
    /// The exit code: 1 or 2.
    fn exit_code(&self) -> u8;

    /// What to print on standard error: `error: ` and the message, with
    /// the problems (file, line, key, rule, help) when there are some.
    fn report(&self) -> String {
        error_line(&self)
    }
}

impl Failure for ConfigError {
    fn exit_code(&self) -> u8 {
        ConfigError::exit_code(self)
    }
}

/// Why a command did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The arguments do not make sense together, or the command failed.
    #[error("{0}")]
    Command(Box<dyn Failure>),
    /// Standard output failed; `exit_code` is the command's own when it
    /// failed too (its error is in `command`), else 2.
    #[error("{source}")]
    Output {
        /// The write error.
        source: OutputError,
        /// The exit code.
        exit_code: u8,
        /// The command's own error, if it had one.
        command: Option<Box<Error>>,
    },
}

impl<E: Failure> From<E> for Error {
    fn from(err: E) -> Self {
        Error::Command(Box::new(err))
    }
}

impl Error {
    /// The exit code: 1 or 2.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Command(err) => err.exit_code(),
            Error::Output { exit_code, .. } => *exit_code,
        }
    }

    /// What to print on standard error: `error: ` and the message, with
    /// the problems (file, line, key, rule, help) when there are some.
    pub fn report(&self) -> String {
        match self {
            Error::Command(err) => err.report(),
            Error::Output {
                source, command, ..
            } => {
                let mut report = error_line(source);
                if let Some(command) = command {
                    report.push_str(&command.report());
                }
                report
            }
        }
    }
}

/// Runs the command line, with output to this process's standard output.
pub fn run(args: Cli) -> Result<Status, Error> {
    let mut stdout = Stdout::new();
    let result = run_command(args.command, &mut stdout);
    match stdout.finish() {
        Ok(()) => result,
        Err(source) => Err(match result {
            Ok(status) => Error::Output {
                source,
                exit_code: match status {
                    Status::Success => EXIT_USAGE,
                    failed => failed.exit_code(),
                },
                command: None,
            },
            Err(command) => Error::Output {
                source,
                exit_code: command.exit_code(),
                command: Some(Box::new(command)),
            },
        }),
    }
}

/// Runs one command, with output to `stdout`.
pub fn run_command<W: Write>(command: Command, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    Ok(match command {
        Command::Render(args) => render::run(&args, stdout)?,
        Command::Template(args) => template::run(&TemplateConfig::new(args)?, stdout)?,
        Command::Validate(args) => validate::run(&args, stdout)?,
        Command::Schema => schema::run(stdout),
        Command::Show(args) => show::run(args.what, args.name.as_deref(), stdout)?,
        Command::UpgradeCheck(args) => upgrade_check::run(&args, stdout)?,
        Command::UpgradePlan(args) => upgrade_plan::run(&args, stdout)?,
        Command::Diff(args) => diff::run(&args, stdout)?,
        Command::Release(args) => release::run(&ReleaseConfig::from_env(args)?)?,
        Command::Catalog(args) => match args.action {
            CatalogCommand::Import(args) => catalog::run(&args, stdout)?,
        },
        Command::Completions(args) => completions::run(args.shell, stdout),
    })
}

/// `error: ` and the message, as one line (or more, for a `help:`).
fn error_line(err: &dyn Display) -> String {
    format!("error: {err}\n")
}

/// An output folder that cannot be written; the writer left it as it was
/// (`render`, `release` and `template --out` write one).
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", .out.display())]
pub struct WriteFailed {
    /// The output folder.
    pub out: PathBuf,
    /// What the writer refused or could not do.
    pub source: output_folder::write::WriteError,
}

impl WriteFailed {
    /// The error for `out`, for `map_err`.
    pub fn at(out: &Path) -> impl Fn(output_folder::write::WriteError) -> WriteFailed + Copy + '_ {
        move |source| WriteFailed {
            out: out.to_path_buf(),
            source,
        }
    }
}

/// Problems with values, and the sources they were found in.
#[derive(Debug)]
pub struct Problems {
    /// Every problem.
    pub diagnostics: Vec<Diagnostic>,
    /// The sources, to show the offending lines.
    pub sources: Vec<Source>,
}

impl Problems {
    /// The problems for people (see [`human`]).
    pub fn human(&self) -> String {
        human(&self.diagnostics, &self.sources)
    }
}

/// Problems for people: each with its source line, coloured on a
/// terminal. The line comes from `sources`, the text as it was read; only a
/// caller that kept no text (fleet mode, for a file that did not parse)
/// has it read again, within the values file cap.
pub fn human(diagnostics: &[Diagnostic], sources: &[Source]) -> String {
    let source_text = |name: &str| {
        sources
            .iter()
            .find(|source| source.name == name)
            .map(|source| source.text.clone())
            .or_else(|| {
                let path = Path::new(name);
                path.is_file()
                    .then(|| read::read_capped_text(path, read::MAX_FILE_BYTES).ok())
                    .flatten()
            })
    };
    diagnostics::format_human(diagnostics, &source_text, diagnostics::use_colour())
}

/// Values given on the command line that cannot be used: a file that cannot
/// be read (exit 2), or values that do not parse (exit 1).
#[derive(Debug, thiserror::Error)]
#[error("the values cannot be read: {} problem(s)", .diagnostics.len())]
pub struct ValuesError {
    /// Every problem.
    pub diagnostics: Vec<Diagnostic>,
    /// A file could not be read at all.
    pub unreadable: bool,
    /// The text of each file that was read, to show the offending lines.
    pub read: Vec<Source>,
}

impl ValuesError {
    /// 2 when a file could not be read, else 1.
    pub fn exit_code(&self) -> u8 {
        if self.unreadable {
            EXIT_USAGE
        } else {
            EXIT_FAILED
        }
    }

    /// The problems.
    pub fn report(&self) -> String {
        human(&self.diagnostics, &self.read)
    }
}

impl From<read::ReadError> for ValuesError {
    fn from(err: read::ReadError) -> Self {
        let (diagnostics, unreadable) = match err.error {
            LoadError::Io(diagnostics) => (diagnostics, true),
            LoadError::Invalid(diagnostics) => (diagnostics, false),
        };
        ValuesError {
            diagnostics,
            unreadable,
            read: err.read,
        }
    }
}

/// Reads every `-f` file and the `--set` family, in Helm's order.
fn read_values(values: &ValuesInput) -> Result<Vec<Source>, ValuesError> {
    Ok(read::read_sources(values)?)
}

/// A fleet folder that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The folder holds no values file.
    #[error("{} holds no *.yaml or *.yml values files", .dir.display())]
    Empty {
        /// The folder.
        dir: PathBuf,
    },
    /// The folder cannot be listed.
    #[error(
        "cannot read the folder {}: {source}\nhelp: --values-dir takes a folder of values files, one per cluster",
        .dir.display()
    )]
    Unlistable {
        /// The folder.
        dir: PathBuf,
        /// The file system's error.
        source: std::io::Error,
    },
    /// The shared values cannot be used.
    #[error(transparent)]
    Values(#[from] ValuesError),
}

impl FleetError {
    /// 2, or the shared values' code.
    pub fn exit_code(&self) -> u8 {
        match self {
            FleetError::Values(err) => err.exit_code(),
            FleetError::Empty { .. } | FleetError::Unlistable { .. } => EXIT_USAGE,
        }
    }

    /// What to print.
    pub fn report(&self) -> String {
        match self {
            FleetError::Values(err) => err.report(),
            other => error_line(other),
        }
    }
}

/// The values files of `dir` and the shared values (`-f` before each file,
/// `--set` after).
fn read_fleet(dir: &Path, shared: &ValuesInput) -> Result<Fleet, FleetError> {
    let listing =
        output_folder::listing::list_yaml(dir).map_err(|source| FleetError::Unlistable {
            dir: dir.to_path_buf(),
            source,
        })?;
    if listing.files.is_empty() && listing.unusable.is_empty() {
        return Err(FleetError::Empty {
            dir: dir.to_path_buf(),
        });
    }
    fleet_of(listing.files, listing.unusable, shared)
}

/// The given values files, each checked on its own on top of the shared
/// values (`-f` before each file, `--set` after); one that cannot be read
/// is reported as that file's failure.
fn read_fleet_files(files: &[PathBuf], shared: &ValuesInput) -> Result<Fleet, FleetError> {
    fleet_of(files.to_vec(), Vec::new(), shared)
}

fn fleet_of(
    files: Vec<PathBuf>,
    unusable: Vec<output_folder::listing::Unusable>,
    shared: &ValuesInput,
) -> Result<Fleet, FleetError> {
    let before = read_values(&ValuesInput {
        profiles: shared.profiles.clone(),
        files: shared.files.clone(),
        ..Default::default()
    })?;
    // The `--set` family applies over no files here: each cluster's file
    // comes between the shared files and these.
    let after = read_values(&shared.sets_only())?;
    Ok(Fleet {
        files,
        unusable,
        before,
        after,
    })
}
