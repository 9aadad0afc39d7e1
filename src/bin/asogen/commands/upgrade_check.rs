//! `asogen upgrade-check`: whether upgrading a live Deployment to what
//! asogen renders for the given values is refused, per apply path, printed
//! as a report (human or JSON) with the fix.

use std::io::Write;

use super::{Problems, Status, ValuesError, error_line};
use crate::cli::{ReportFormat, UpgradeCheckArgs};
use asogen::check::Checker;
use asogen::exit::{EXIT_FAILED, EXIT_USAGE};
use asogen::features::upgrade::{self, ApplyPath};
use asogen::model::Release;
use asogen::output::Stdout;
use asogen::read::{self, LoadError};
use asogen::render;

/// Why `upgrade-check` could not judge the upgrade.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The live Deployment file cannot be read or is not a Deployment.
    #[error("the live Deployment cannot be read: {} problem(s)", .0.diagnostics.len())]
    Live(Problems),
    /// The values cannot be read (exit 2) or do not parse (exit 1).
    #[error(transparent)]
    Values(#[from] ValuesError),
    /// The values are refused: there is nothing to upgrade to.
    #[error("the values are refused, so there is nothing to upgrade to")]
    Refused(Problems),
}

impl super::Failure for Error {
    /// 1 for refused values, else 2.
    fn exit_code(&self) -> u8 {
        match self {
            Error::Live(_) => EXIT_USAGE,
            Error::Values(err) => err.exit_code(),
            Error::Refused(_) => EXIT_FAILED,
        }
    }

    /// What to print: the message and the problems.
    fn report(&self) -> String {
        match self {
            Error::Live(problems) => problems.human(),
            Error::Values(err) => err.report(),
            Error::Refused(problems) => error_line(self) + &problems.human(),
        }
    }
}

/// Reads the live Deployment and the values, predicts every apply path and
/// prints the report; fails (exit 1) when some path is refused.
pub fn run<W: Write>(config: &UpgradeCheckArgs, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    let live_source =
        read::read_yaml_file(&config.live, "live Deployment file").map_err(|err| match err {
            LoadError::Io(diagnostics) | LoadError::Invalid(diagnostics) => Error::Live(Problems {
                diagnostics,
                sources: Vec::new(),
            }),
        })?;
    let live = upgrade::read_live(&live_source).map_err(|diagnostic| {
        Error::Live(Problems {
            diagnostics: vec![*diagnostic],
            sources: vec![live_source.clone()],
        })
    })?;
    let sources = super::read_values(&config.values.clone().into())?;
    let checker = Checker::for_sources(Release::default(), &sources);
    let model = checker
        .check(&sources, &live.namespace)
        .map_err(|diagnostics| {
            Error::Refused(Problems {
                diagnostics,
                sources,
            })
        })?;
    let target = upgrade::Target::for_live(
        &live,
        &live_source,
        &render::deployments(&model),
        model.values.topology,
    )
    .map_err(|diagnostic| {
        Error::Live(Problems {
            diagnostics: vec![*diagnostic],
            sources: vec![live_source.clone()],
        })
    })?;
    // --via: the paths it names. Without --via or --field-manager: the
    // paths the live object shows in use (and the report says so); every
    // common path when it shows none.
    let in_use = if config.via.is_empty() && config.field_manager.is_empty() {
        upgrade::paths_in_use(&live)
    } else {
        Vec::new()
    };
    let (paths, chosen): (Vec<ApplyPath>, upgrade::PathsFrom) = if !config.via.is_empty() {
        (
            upgrade::paths_via(&live, &config.via, &config.field_manager),
            upgrade::PathsFrom::Asked,
        )
    } else if !in_use.is_empty() {
        (in_use, upgrade::PathsFrom::ManagedFields)
    } else {
        (
            upgrade::default_paths(&live, &config.field_manager),
            upgrade::PathsFrom::Common,
        )
    };
    let mut report = upgrade::check(live, target, &paths);
    report.paths_from = chosen;
    match config.format {
        ReportFormat::Human => stdout.print(upgrade::format_human(&report)),
        ReportFormat::Json => {
            stdout.println(serde_json::to_string_pretty(&report).expect("reports serialize"))
        }
    }
    Ok(if report.any_refused() {
        Status::Failed
    } else {
        Status::Success
    })
}
