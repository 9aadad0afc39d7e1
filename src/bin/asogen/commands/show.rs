//! `asogen show`: the chart's information, as `helm show` prints it; `show
//! values` is the values file a user starts from.

use std::io::Write;

use super::Status;
use crate::cli::ShowWhat;
use asogen::exit::EXIT_USAGE;
use asogen::model::Release;
use asogen::output::Stdout;
use asogen::render::{BUILTIN_PROFILES, builtin_profile, helm};

/// Why `show` printed nothing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The chart's README template did not render (a defect of asogen,
    /// not of the input).
    #[error("the chart's README does not render: {0}")]
    Readme(#[from] minijinja::Error),
    /// `show profile` without a name.
    #[error(
        "show profile needs the profile's name\nhelp: asogen show profile NAME, NAME one of: {0}"
    )]
    NoProfile(String),
    /// A name given to something other than `profile`.
    #[error("show {0} takes no name (got {1:?}; only `show profile NAME` takes one)")]
    NameNotTaken(&'static str, String),
}

impl super::Failure for Error {
    /// Always 2.
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// Prints what was asked for, for the built-in release.
pub fn run<W: Write>(
    what: ShowWhat,
    name: Option<&str>,
    stdout: &mut Stdout<W>,
) -> Result<Status, Error> {
    let release = Release::default();
    if let Some(given) = name {
        let taken = match what {
            ShowWhat::All => Some("all"),
            ShowWhat::Chart => Some("chart"),
            ShowWhat::Readme => Some("readme"),
            ShowWhat::Values => Some("values"),
            ShowWhat::Profile => None,
        };
        if let Some(what) = taken {
            return Err(Error::NameNotTaken(what, given.to_string()));
        }
    }
    let text = match what {
        ShowWhat::Profile => {
            let names: Vec<&str> = BUILTIN_PROFILES.iter().map(|(name, _)| *name).collect();
            let name = name.ok_or_else(|| Error::NoProfile(names.join(", ")))?;
            // clap took only a built-in name
            builtin_profile(name)
                .ok_or_else(|| Error::NoProfile(names.join(", ")))?
                .to_string()
        }
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
