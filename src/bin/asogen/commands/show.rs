//! `asogen show`: the chart's information, as `helm show` prints it; `show
//! values` is the values file a user starts from.

use std::io::Write;

use super::Status;
use crate::cli::ShowWhat;
use asogen::exit::EXIT_USAGE;
use asogen::model::Release;
use asogen::output::Stdout;
use asogen::render::helm;

/// Why `show` printed nothing: the chart's README template did not render
/// (a defect of asogen, not of the input).
#[derive(Debug, thiserror::Error)]
#[error("the chart's README does not render: {0}")]
pub struct Error(#[from] minijinja::Error);

impl super::Failure for Error {
    /// Always 2.
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// Prints what was asked for, for the built-in release.
pub fn run<W: Write>(what: ShowWhat, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    let release = Release::default();
    let text = match what {
        ShowWhat::Chart => helm::chart_yaml(&release),
        ShowWhat::Values => helm::starter_values_yaml(&release),
        ShowWhat::Readme => helm::chart_readme(&release)?,
        // As `helm show all`: the parts in this order, `---` between them.
        ShowWhat::All => [
            helm::chart_yaml(&release),
            helm::starter_values_yaml(&release),
            helm::chart_readme(&release)?,
        ]
        .join("---\n"),
    };
    stdout.print(text);
    Ok(Status::Success)
}
