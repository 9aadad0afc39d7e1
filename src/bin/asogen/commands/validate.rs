//! `asogen validate`: every problem of the given values, printed as the
//! report on standard output (human, JSON or GitHub annotations); or, in
//! fleet mode, of each values file of a folder on its own.

use std::io::Write;

use super::{FleetError, Status, human};
use crate::cli::ValidateArgs;
use crate::config::ValidateInput;
use asogen::check::Checker;
use asogen::diagnostics::{self, Diagnostic, Format};
use asogen::features::fleet::Fleet;
use asogen::model::{DEFAULT_NAMESPACE, Release};
use asogen::output::Stdout;
use asogen::read::ValuesInput;

/// Why `validate` could not check (problems in the values are its report,
/// not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Fleet mode: the folder or the shared values cannot be used.
    #[error(transparent)]
    Fleet(#[from] FleetError),
}

impl super::Failure for Error {
    /// 2, or 1 when the shared values do not parse.
    fn exit_code(&self) -> u8 {
        match self {
            Error::Fleet(err) => err.exit_code(),
        }
    }

    /// What to print.
    fn report(&self) -> String {
        match self {
            Error::Fleet(err) => err.report(),
        }
    }
}

/// Checks the values, or every file of the fleet, and prints the report.
pub fn run<W: Write>(args: &ValidateArgs, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    match ValidateInput::new(args) {
        ValidateInput::Values(values) => Ok(one(&values, args.format, stdout)),
        ValidateInput::Fleet { dir, shared } => {
            let fleet = super::read_fleet(&dir, &shared)?;
            Ok(check_fleet(&fleet, args.format, stdout))
        }
        ValidateInput::Each { files, shared } => {
            let fleet = super::read_fleet_files(&files, &shared)?;
            Ok(check_fleet(&fleet, args.format, stdout))
        }
    }
}

fn one<W: Write>(values: &ValuesInput, format: Format, stdout: &mut Stdout<W>) -> Status {
    let (diagnostics, sources, status) = match super::read_values(values) {
        Err(err) => {
            let status = if err.unreadable {
                Status::Unreadable
            } else {
                Status::Failed
            };
            (err.diagnostics, err.read, status)
        }
        Ok(sources) => {
            // Checked once: compile only the part of the schema these
            // values write.
            let checker = Checker::for_sources(Release::default(), &sources);
            let warnings = checker.warnings(&sources);
            match checker.check(&sources, DEFAULT_NAMESPACE) {
                Ok(_) => (warnings, sources, Status::Success),
                Err(mut diagnostics) => {
                    diagnostics.extend(warnings);
                    (diagnostics, sources, Status::Failed)
                }
            }
        }
    };
    match format {
        Format::Human if status == Status::Success => {
            if !diagnostics.is_empty() {
                stdout.print(human(&diagnostics, &sources));
            }
            stdout.println(format_args!("ok: valid: {}", checked_sources(values)));
        }
        Format::Human => stdout.print(human(&diagnostics, &sources)),
        Format::Json => stdout.print(diagnostics::format_json(&diagnostics)),
        Format::Github => stdout.print(diagnostics::format_github(&diagnostics)),
    }
    status
}

/// What `validate` checked, in the order Helm applies it: "a.yaml, b.yaml
/// and 2 --set flags over the chart defaults", or "the chart defaults (no
/// -f or --set given)".
fn checked_sources(values: &ValuesInput) -> String {
    let mut parts: Vec<String> = values
        .profiles
        .iter()
        .map(|name| asogen::read::profile_source_name(name))
        .chain(values.files.iter().map(|path| match path.to_str() {
            Some(p) if p.trim() == "-" => asogen::read::STDIN_NAME.to_string(),
            _ => path.display().to_string(),
        }))
        .collect();
    for flag in asogen::read::SetFlag::HELM_ORDER {
        let count = values.expressions(flag).len();
        if count > 0 {
            let plural = if count == 1 { "" } else { "s" };
            parts.push(format!("{count} {} flag{plural}", flag.name()));
        }
    }
    match parts.split_last() {
        None => "the chart defaults (no -f or --set given)".to_string(),
        Some((last, [])) => format!("{last} over the chart defaults"),
        Some((last, rest)) => format!("{} and {last} over the chart defaults", rest.join(", ")),
    }
}

/// Checks each file of the fleet on its own and prints the report.
fn check_fleet<W: Write>(fleet: &Fleet, format: Format, stdout: &mut Stdout<W>) -> Status {
    let started = std::time::Instant::now();
    let tally = fleet.check_all(DEFAULT_NAMESPACE, |_, _| ());
    let failed = tally.failed.len();
    let unreadable = tally.failed.iter().any(|failed| failed.unreadable);
    match format {
        Format::Human => {
            for failed in &tally.failed {
                stdout.print(human(&failed.diagnostics, &failed.sources));
            }
            stdout.println(format_args!(
                "{} of {} values files valid ({failed} invalid) in {:.2?}",
                fleet.len() - failed,
                fleet.len(),
                started.elapsed()
            ));
        }
        Format::Json | Format::Github => {
            let all: Vec<Diagnostic> = tally
                .failed
                .into_iter()
                .flat_map(|failed| failed.diagnostics)
                .collect();
            stdout.print(if format == Format::Json {
                diagnostics::format_json(&all)
            } else {
                diagnostics::format_github(&all)
            });
        }
    }
    match (failed, unreadable) {
        (0, _) => Status::Success,
        (_, true) => Status::Unreadable,
        _ => Status::Failed,
    }
}
