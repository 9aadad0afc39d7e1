//! `asogen release`: every artifact of one version (packaged chart,
//! index.yaml, install manifests, schema, upgrade notes, SHA256SUMS),
//! built in memory and written into the output folder in one atomic step.

use std::path::PathBuf;

use super::render::{render_error_code, render_error_report};
use super::{Status, error_line};
use crate::config::ReleaseConfig;
use crate::release::{self, ReleaseError, ReleaseRequest};

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
    #[error("cannot write {}: {source}; nothing was written", .out.display())]
    Write {
        /// The output folder.
        out: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Error {
    /// 1 for an invalid profile, else 2.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Build(ReleaseError::Render(err)) => render_error_code(err),
            _ => super::EXIT_USAGE,
        }
    }

    /// What to print: the message, and an invalid profile's problems.
    pub fn report(&self) -> String {
        match self {
            Error::Build(ReleaseError::Render(err)) => render_error_report(err),
            other => error_line(other),
        }
    }
}

/// Builds the release and writes it; lists the files on standard error.
pub fn run(config: &ReleaseConfig) -> Result<Status, Error> {
    if config.source_date_epoch.is_none() {
        eprintln!(
            "note: SOURCE_DATE_EPOCH is not set; timestamps are 1970-01-01T00:00:00Z (set it, e.g. to the commit time, for a meaningful index.yaml `created`)"
        );
    }
    if config.out.is_file() {
        return Err(Error::OutIsFile(config.out.clone()));
    }
    let request = ReleaseRequest {
        version: config.version.clone(),
        image_tag: config.image_tag.clone(),
        image_digest: config.image_digest.clone(),
        previous: config.previous.clone(),
        profiles: config.profiles.clone(),
        source_date_epoch: config.source_date_epoch.unwrap_or(0),
    };
    let files = release::build(&request)?;
    if request.previous.is_none() {
        eprintln!("note: no --previous release given; UPGRADE-NOTES.md is skipped");
    }
    let out = &config.out;
    release::write(out, &files).map_err(|source| Error::Write {
        out: out.clone(),
        source,
    })?;
    for (name, bytes) in &files {
        eprintln!("  {:>9} bytes  {}/{name}", bytes.len(), out.display());
    }
    eprintln!(
        "wrote release {} ({} files) to {}",
        request.version,
        files.len(),
        out.display()
    );
    Ok(Status::Success)
}
