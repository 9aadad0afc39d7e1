//! `asogen template`: the install manifest for the given values, to
//! standard output; or, in fleet mode, one manifest per values file of a
//! folder, written to an output folder in one atomic step, every invalid
//! file reported and the others still rendered.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{FleetError, Problems, Status, ValuesError, error_line, human};
use crate::check::Checker;
use crate::config::{TemplateConfig, TemplateInput, ValuesArgs};
use crate::model::Release;
use crate::output::Stdout;
use crate::render;
use crate::write::{Accept, OutputFolder, WriteError};

/// Why `template` failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The values cannot be read (exit 2) or do not parse (exit 1).
    #[error(transparent)]
    Values(#[from] ValuesError),
    /// The values are refused (exit 1); nothing is rendered.
    #[error("the values are invalid: {} problem(s); nothing was rendered", .0.diagnostics.len())]
    Invalid(Problems),
    /// Fleet mode: the folder or the shared values cannot be used.
    #[error(transparent)]
    Fleet(#[from] FleetError),
    /// Fleet mode: two values files would write the same manifest.
    #[error("two values files in {} would both write {name}; rename one", .dir.display())]
    Collision {
        /// The fleet folder.
        dir: PathBuf,
        /// The manifest both would write.
        name: String,
    },
    /// Fleet mode: the output folder cannot be written; it is left as it was.
    #[error("cannot write {}: {source}", .out.display())]
    Write {
        /// The output folder.
        out: PathBuf,
        /// Why.
        source: WriteError,
    },
}

impl Error {
    /// 1 for values that do not parse or are refused, else 2.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Values(err) => err.exit_code(),
            Error::Invalid(_) => super::EXIT_FAILED,
            Error::Fleet(err) => err.exit_code(),
            Error::Collision { .. } | Error::Write { .. } => super::EXIT_USAGE,
        }
    }

    /// What to print: the problems, or the message.
    pub fn report(&self) -> String {
        match self {
            Error::Values(err) => err.report(),
            Error::Invalid(problems) => problems.human(),
            Error::Fleet(err) => err.report(),
            other => error_line(other),
        }
    }
}

/// Renders the manifest, or the fleet's manifests.
pub fn run<W: Write>(config: &TemplateConfig, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    match &config.input {
        TemplateInput::Values(values) => one(values, config, stdout),
        TemplateInput::Fleet { dir, out, shared } => fleet(dir, out, shared, config),
    }
}

/// One manifest, to standard output.
fn one<W: Write>(
    values: &ValuesArgs,
    config: &TemplateConfig,
    stdout: &mut Stdout<W>,
) -> Result<Status, Error> {
    let sources = super::read_values(values)?;
    // Checked once: compile only the part of the schema these values write.
    let checker = Checker::for_sources(Release::default(), &sources);
    let warnings = checker.warnings(&sources);
    if !warnings.is_empty() {
        eprint!("{}", human(&warnings, &sources));
    }
    match checker.check(&sources, &config.namespace) {
        Ok(model) => {
            stdout.print(render::manifest(&model, config.create_namespace, ""));
            Ok(Status::Success)
        }
        Err(diagnostics) => Err(Error::Invalid(Problems {
            diagnostics,
            sources,
        })),
    }
}

/// One manifest per values file of `dir`, into `out`: each written into
/// the staged folder as soon as it is rendered (one manifest per core in
/// memory), the folder swapped in at the end. A file that fails keeps its
/// earlier manifest; the manifest of a file no longer in `dir` is gone.
fn fleet(
    dir: &Path,
    out: &Path,
    shared: &ValuesArgs,
    config: &TemplateConfig,
) -> Result<Status, Error> {
    let started = std::time::Instant::now();
    let fleet = super::read_fleet(dir, shared)?;
    fleet
        .check_output_names()
        .map_err(|name| Error::Collision {
            dir: dir.to_path_buf(),
            name,
        })?;
    let fail = |source| Error::Write {
        out: out.to_path_buf(),
        source,
    };
    let mut inputs: Vec<&Path> = vec![dir];
    inputs.extend(shared.files.iter().map(PathBuf::as_path));
    let folder = OutputFolder::open(out, "template", &inputs, Accept::Outputs).map_err(fail)?;
    let tally = fleet.check_all(&config.namespace, |file, model| {
        let text = render::manifest(model, config.create_namespace, "");
        folder.put(&crate::fleet::output_name(file), text.as_bytes())
    });
    for failed in &tally.failed {
        eprint!("{}", human(&failed.diagnostics, &failed.sources));
    }
    let mut rendered = 0;
    for (_, written) in tally.passed {
        written.map_err(fail)?;
        rendered += 1;
    }
    // The earlier manifests of the files that failed stay.
    let failed_outputs: BTreeSet<String> = fleet
        .files
        .iter()
        .chain(fleet.unusable.iter().map(|entry| &entry.path))
        .map(|file| crate::fleet::output_name(file))
        .collect();
    folder
        .commit(|path| failed_outputs.contains(path))
        .map_err(fail)?;
    let failed = tally.failed.len();
    let unreadable = tally.failed.iter().any(|failed| failed.unreadable);
    eprintln!(
        "rendered {rendered} of {} values files to {} in {:.2?}{}",
        fleet.len(),
        out.display(),
        started.elapsed(),
        if failed > 0 {
            format!(
                "; {failed} invalid or unreadable (above), not rendered (their earlier manifests, if any, are kept)"
            )
        } else {
            String::new()
        }
    );
    Ok(match (failed, unreadable) {
        (0, _) => Status::Success,
        (_, true) => Status::Unreadable,
        _ => Status::Failed,
    })
}
