//! `asogen diff`: every change between two artifact sets, classified, and
//! printed for people, as JSON or as the release notes' "Upgrade notes".

use std::io::Write;

use super::Status;
use crate::cli::{DiffArgs, DiffFormat};
use asogen::exit::EXIT_USAGE;
use asogen::features::diff::{self, DiffError};
use asogen::output::Stdout;

/// Why `diff` could not compare.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A side cannot be read.
    #[error("{0}\nhelp: pass two generated/ folders, two chart folders or two install manifests")]
    Read(#[from] DiffError),
    /// One side is a folder, the other a file.
    #[error(
        "cannot compare the folder {} with the file {}: a folder holds several manifests and a chart, a file one manifest\nhelp: compare two folders, or two manifests, e.g. asogen diff {}/manifests/{} {}",
        .folder.display(), .file.display(), .folder.display(),
        .file.file_name().map_or("ha.yaml".into(), |name| name.to_string_lossy()),
        .file.display()
    )]
    FolderAgainstFile {
        /// The side that is a folder.
        folder: std::path::PathBuf,
        /// The side that is a file.
        file: std::path::PathBuf,
    },
}

impl super::Failure for Error {
    /// 2: the input cannot be read.
    fn exit_code(&self) -> u8 {
        EXIT_USAGE
    }
}

/// Reads both sides, prints the changes; fails (exit 1) on a breaking
/// change when asked to.
pub fn run<W: Write>(config: &DiffArgs, stdout: &mut Stdout<W>) -> Result<Status, Error> {
    let old = diff::read_side(&config.old)?;
    let new = diff::read_side(&config.new)?;
    // A folder against a file would compare the one manifest of the same
    // name and report every other artifact as removed or added.
    let (old_dir, new_dir) = (config.old.is_dir(), config.new.is_dir());
    if old_dir != new_dir {
        let (folder, file) = if old_dir {
            (&config.old, &config.new)
        } else {
            (&config.new, &config.old)
        };
        return Err(Error::FolderAgainstFile {
            folder: folder.clone(),
            file: file.clone(),
        });
    }
    let changes = diff::compare(&old, &new);
    match config.format {
        DiffFormat::Human => stdout.print(diff::format_human(&changes)),
        DiffFormat::Json => {
            stdout.println(serde_json::to_string_pretty(&changes).expect("changes serialize"))
        }
        DiffFormat::Markdown => stdout.print(diff::format_markdown(&changes)),
    }
    let breaking = changes.iter().any(|change| change.class.is_breaking());
    Ok(if config.fail_on_breaking && breaking {
        Status::Failed
    } else {
        Status::Success
    })
}
