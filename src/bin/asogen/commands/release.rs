//! `asogen release`: every artifact of one version (packaged chart,
//! index.yaml, install manifests, schema, upgrade notes, SHA256SUMS),
//! built in memory and written into the output folder in one atomic step.

use std::path::PathBuf;

use super::render::{render_error_code, render_error_report};
use super::{Status, WriteFailed, error_line};
use crate::config::ReleaseConfig;
use asogen::exit::EXIT_USAGE;
use asogen::features::release::{self, ReleaseError, ReleaseRequest};
use output_folder::write::{Accept, OutputFolder};

/// The largest chart repository index.yaml read for merging (Helm's own
/// repositories hold a few MiB).
const MAX_INDEX_BYTES: u64 = 64 * 1024 * 1024;

/// Why `release` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--out` names a file.
    #[error("--out {} is a file, not a folder; nothing was written", .0.display())]
    OutIsFile(PathBuf),
    /// The request is refused or a profile is invalid.
    #[error("{0}; nothing was written")]
    Build(#[from] ReleaseError),
    /// The output folder cannot be written.
    #[error(transparent)]
    Write(#[from] WriteFailed),
}

impl super::Failure for Error {
    /// 1 for an invalid profile, else 2.
    fn exit_code(&self) -> u8 {
        match self {
            Error::Build(ReleaseError::Render(err)) => render_error_code(err),
            _ => EXIT_USAGE,
        }
    }

    /// What to print: the message, and an invalid profile's problems.
    fn report(&self) -> String {
        match self {
            Error::Build(ReleaseError::Render(err)) => render_error_report(err),
            other => error_line(other),
        }
    }
}

/// Builds the release and writes it; lists the files on standard error.
pub fn run(config: &ReleaseConfig) -> Result<Status, Error> {
    if config.out.is_file() {
        return Err(Error::OutIsFile(config.out.clone()));
    }
    let out = &config.out;
    let fail = WriteFailed::at(out);
    // Release writes a new folder, an empty one, its own earlier output or
    // a chart repository: the archives of other versions stay, index.yaml
    // gets the new version merged in.
    let mut inputs: Vec<&std::path::Path> = config.profiles.iter().map(PathBuf::as_path).collect();
    inputs.extend(config.previous.as_deref());
    let folder =
        OutputFolder::open(out, "release", &inputs, Accept::ChartRepository).map_err(fail)?;
    let request = ReleaseRequest {
        version: config.version.clone(),
        image_tag: config.app_version.clone(),
        image_digest: config.image_digest.clone(),
        previous: config.previous.clone(),
        profiles: config.profiles.clone(),
        source_date_epoch: config.source_date_epoch.unwrap_or(0),
        existing_index: folder
            .take_over("index.yaml", MAX_INDEX_BYTES)
            .map_err(fail)?,
    };
    let merged = request.existing_index.is_some();
    let files = release::build(&request)?;
    // Noted only once the version and tag are accepted.
    if config.source_date_epoch.is_none() {
        eprintln!(
            "note: SOURCE_DATE_EPOCH is not set; timestamps are 1970-01-01T00:00:00Z (set it, e.g. to the commit time, for a meaningful index.yaml `created`)"
        );
    }
    if request.previous.is_none() {
        eprintln!("note: no --previous release given; UPGRADE-NOTES.md is skipped");
    }
    folder.put_all(&files).map_err(fail)?;
    let written = folder.commit(release::is_archive).map_err(fail)?;
    for (name, bytes) in &files {
        eprintln!("  {:>9} bytes  {}/{name}", bytes.len(), out.display());
    }
    eprintln!(
        "wrote release {} ({} files) to {}{}",
        request.version,
        files.len(),
        out.display(),
        match (merged, written.kept) {
            (true, kept) => format!("; merged into its index.yaml, {kept} other file(s) kept"),
            (false, 0) => String::new(),
            (false, kept) => format!("; {kept} other file(s) kept"),
        }
    );
    Ok(Status::Success)
}
