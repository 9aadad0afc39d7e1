//! `asogen render`: every artifact written to the output folder in one
//! atomic step, each part staged as it is rendered (so no more than one
//! part is held at a time) or, with `--check`, rendered into memory,
//! compared with the folder and every difference printed as a unified
//! diff.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Status, WriteFailed, error_line, human};
use crate::cli::RenderArgs;
use asogen::exit::{EXIT_FAILED, EXIT_USAGE};
use asogen::model::Release;
use asogen::output::Stdout;
use asogen::render::{self, Artifacts, CompareError, Have, RenderError};
use output_folder::write::{Accept, MARKER, Marker, OutputFolder};

/// Why `render` failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A profile is invalid (exit 1), or the profiles or templates cannot
    /// be read (exit 2).
    #[error(transparent)]
    Render(#[from] RenderError),
    /// `--check`: the folder is not what render would write.
    #[error("{} is out of date: {files} file(s) differ; run `{command}` to update", .out.display())]
    OutOfDate {
        /// The output folder.
        out: PathBuf,
        /// How many files differ.
        files: usize,
        /// The command that updates it.
        command: String,
    },
    /// `--check`: the folder cannot be compared (it is a symbolic link, or
    /// holds more than a check reads).
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// The folder cannot be written; it is left as it was.
    #[error(transparent)]
    Write(#[from] WriteFailed),
}

impl super::Failure for Error {
    /// 1 for an invalid profile or an out-of-date folder, else 2.
    fn exit_code(&self) -> u8 {
        match self {
            Error::Render(err) => render_error_code(err),
            Error::OutOfDate { .. } => EXIT_FAILED,
            Error::Compare(_) | Error::Write(_) => EXIT_USAGE,
        }
    }

    /// What to print: the message, and an invalid profile's problems.
    fn report(&self) -> String {
        match self {
            Error::Render(err) => render_error_report(err),
            other => error_line(other),
        }
    }
}

/// The exit code of a failed render (also of `release`'s).
pub(super) fn render_error_code(err: &RenderError) -> u8 {
    match err {
        RenderError::InvalidProfile { .. } => EXIT_FAILED,
        RenderError::Io(_) | RenderError::Template(_) => EXIT_USAGE,
    }
}

/// The report of a failed render (also of `release`'s).
pub(super) fn render_error_report(err: &RenderError) -> String {
    match err {
        RenderError::InvalidProfile {
            profile,
            diagnostics,
            sources,
        } => {
            format!("error: profile {profile} is invalid; nothing was written\n")
                + &human(diagnostics, sources)
        }
        other => error_line(other),
    }
}

/// Renders every artifact, and writes or checks the output folder.
pub fn run<W: Write>(config: &RenderArgs, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    if config.check {
        let artifacts = render::render_all(config.profiles.as_deref(), &Release::default())?;
        check(config, artifacts, stdout)
    } else {
        write(&config.out, config.profiles.as_deref())
    }
}

/// Compares `out` with the artifacts; prints a unified diff of every file
/// that differs.
fn check<W: Write>(
    config: &RenderArgs,
    artifacts: Artifacts,
    stdout: &mut Stdout<W>,
) -> Result<Status, Error> {
    let out = config.out.as_path();
    let files = artifacts.len();
    // The tree render writes: the artifacts and the marker naming them.
    let marker = Marker {
        command: "render".into(),
        owned: artifacts.keys().cloned().collect(),
    };
    let mut expected = artifacts;
    expected.insert(MARKER.into(), marker.to_text());
    let diffs = render::differences(out, &expected)?;
    if diffs.is_empty() {
        eprintln!("{} is up to date ({files} files)", out.display());
        return Ok(Status::Success);
    }
    // A file of the folder may be anything up to its cap: past this
    // moment the diffs are coarser (whole hunks), never slower.
    let deadline = std::time::Instant::now() + DIFF_TIME;
    for difference in &diffs {
        let path = asogen::output::printable(&difference.path);
        let (have, old_name) = match &difference.have {
            Have::Nothing => ("", format!("a/{path}")),
            Have::Text(text) => (text.as_str(), format!("a/{path}")),
            // Known by what it is only: a link by its target's text.
            Have::NotRead(note) => ("", format!("a/{path}\t({note})")),
        };
        let want = difference.want.as_deref().unwrap_or("");
        let new_name = format!("b/{path}");
        let diff = similar::TextDiff::configure()
            .deadline(deadline)
            .diff_lines(have, want);
        let text = diff
            .unified_diff()
            .context_radius(2)
            .header(&old_name, &new_name)
            .to_string();
        if text.is_empty() {
            // No line differs (an empty file render does not write, a
            // link where it writes nothing): the header alone names it.
            stdout.print(format_args!("--- {old_name}\n+++ {new_name}\n"));
        } else {
            stdout.print(text);
        }
    }
    Err(Error::OutOfDate {
        out: out.to_path_buf(),
        files: diffs.len(),
        command: update_command(config),
    })
}

/// How long `render --check` spends on finding minimal diffs in all.
const DIFF_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// The command that writes what `render --check` expected: the same
/// render without `--check`.
fn update_command(config: &RenderArgs) -> String {
    let quote = |path: &Path| {
        let text = path.display().to_string();
        if text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@".contains(c))
        {
            text
        } else {
            format!("'{}'", text.replace('\'', "'\\''"))
        }
    };
    let mut command = format!("asogen render --out {}", quote(&config.out));
    if let Some(profiles) = &config.profiles {
        command.push_str(&format!(" --profiles {}", quote(profiles)));
    }
    command
}

/// Writes every artifact into `out`, atomically, replacing the files an
/// earlier render wrote and keeping every other; an up-to-date folder is
/// left untouched. Each part is staged as it is rendered and dropped; the
/// folder is opened at the first part, once every profile has passed its
/// checks.
fn write(out: &Path, profiles: Option<&Path>) -> Result<Status, Error> {
    let fail = WriteFailed::at(out);
    let mut folder: Option<OutputFolder> = None;
    let mut staged: Vec<String> = Vec::new();
    let mut same = true;
    render::render_in_parts(profiles, &Release::default(), |part: Artifacts| {
        let folder = match &mut folder {
            Some(folder) => folder,
            empty => empty.insert(
                OutputFolder::open(
                    out,
                    "render",
                    &profiles.into_iter().collect::<Vec<_>>(),
                    Accept::OnlyOurFiles,
                )
                .map_err(fail)?,
            ),
        };
        for (path, contents) in part {
            same = same && folder.holds(&path, contents.as_bytes());
            folder.put(&path, contents.as_bytes()).map_err(fail)?;
            staged.push(path);
        }
        Ok::<(), Error>(())
    })?;
    let folder = folder.expect("the chart is the first part: one at least");
    staged.sort();
    let files = staged.len();
    if same && folder.owns_exactly(staged.iter().map(String::as_str)) {
        // dropped uncommitted: the staged copy goes, the folder stays
        drop(folder);
        eprintln!(
            "{} is up to date ({files} files); nothing written",
            out.display()
        );
    } else {
        folder.commit(|_| false).map_err(fail)?;
        eprintln!("wrote {files} files to {}", out.display());
    }
    Ok(Status::Success)
}
