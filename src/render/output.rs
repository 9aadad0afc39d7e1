//! Comparing a rendered tree with a folder (`render --check`) and writing
//! one file atomically. Output folders are written by [`output_folder::write`].
//!
//! The folder compared is input (a pull request controls it), so it is
//! read through [`output_folder::folder`]: no symbolic link is followed,
//! only regular files are read, within caps. A link is a difference known
//! by its target's text, a FIFO, socket or device by its kind.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::read::MAX_FILE_BYTES;
use crate::read::bounded::SIDE_BYTES;
use output_folder::folder::{Folder, Kind, NotRead, WalkError};

/// What the folder has at a path where it differs from the rendered tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Have {
    /// No file there.
    Nothing,
    /// A regular file's text (bytes that are not UTF-8 shown lossily).
    Text(String),
    /// Something that was not read, and why: a symbolic link (by its
    /// target), a FIFO, socket or device, a folder where a file belongs,
    /// a file over the caps.
    NotRead(String),
}

/// One path where the folder differs from the rendered tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The path, relative to the folder, `/`-separated.
    pub path: String,
    /// What the folder has there.
    pub have: Have,
    /// What render writes there (None: nothing).
    pub want: Option<String>,
}

/// Why a folder could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The folder is not one (a symbolic link is not followed).
    #[error(
        "{} {reason}; `render --check` follows no symbolic link and reads only folders and regular files, so that it never shows a file from outside the folder\nhelp: pass the folder itself with --out",
        crate::output::printable(&.out.to_string_lossy())
    )]
    Open {
        /// The folder.
        out: PathBuf,
        /// What it is instead.
        reason: NotRead,
    },
    /// The folder holds more than a walk reads.
    #[error("{}: {source}", crate::output::printable(&.out.to_string_lossy()))]
    Walk {
        /// The folder.
        out: PathBuf,
        /// The bound the walk reached, or the entry it could not read.
        source: WalkError,
    },
}

/// The differences between the folder `out` and `artifacts` (every file
/// render writes, by path), sorted by path. A missing folder has nothing.
/// Reads at most [`MAX_FILE_BYTES`] of a file render does not write (or
/// as much as render writes there, if more), and in all at most
/// [`SIDE_BYTES`] more than the artifacts' size.
pub fn differences(
    out: &Path,
    artifacts: &BTreeMap<String, String>,
) -> Result<Vec<Difference>, CompareError> {
    let folder = match Folder::open(out, false) {
        Ok(folder) => Some(folder),
        Err(NotRead::Missing) => None,
        Err(reason) => {
            return Err(CompareError::Open {
                out: out.to_path_buf(),
                reason,
            });
        }
    };
    let mut found = BTreeMap::new();
    if let Some(folder) = &folder {
        let entries = folder.walk().map_err(|source| CompareError::Walk {
            out: out.to_path_buf(),
            source,
        })?;
        let mut budget = SIDE_BYTES + artifacts.values().map(|a| a.len() as u64).sum::<u64>();
        for entry in entries {
            let want = artifacts.get(&entry.key);
            let have = match &entry.kind {
                // A folder's files are entries of their own.
                Kind::Folder if want.is_none() => continue,
                Kind::Folder => Have::NotRead("a folder, where render writes a file".into()),
                Kind::File => {
                    let cap = MAX_FILE_BYTES.max(want.map_or(0, |w| w.len() as u64));
                    let limit = cap.min(budget);
                    match folder.read(&entry.path, limit) {
                        Ok(bytes) => {
                            budget -= bytes.len() as u64;
                            Have::Text(String::from_utf8_lossy(&bytes).into_owned())
                        }
                        Err(NotRead::Missing) => continue,
                        Err(NotRead::TooLarge(_)) if limit < cap => Have::NotRead(format!(
                            "not read: `render --check` reads at most {} MiB in all",
                            budget_mib(artifacts)
                        )),
                        Err(NotRead::TooLarge(_)) => {
                            Have::NotRead(format!("larger than {cap} bytes, not read"))
                        }
                        Err(other) => Have::NotRead(format!("{other}, not read")),
                    }
                }
                Kind::Link(_) => Have::NotRead(format!("{}, not followed", entry.kind)),
                other => Have::NotRead(format!("{other}, not read")),
            };
            found.insert(entry.key, have);
        }
    }
    let mut diffs = Vec::new();
    for (path, want) in artifacts {
        match found.remove(path) {
            Some(Have::Text(have)) if &have == want => {}
            have => diffs.push(Difference {
                path: path.clone(),
                have: have.unwrap_or(Have::Nothing),
                want: Some(want.clone()),
            }),
        }
    }
    for (path, have) in found {
        diffs.push(Difference {
            path,
            have,
            want: None,
        });
    }
    diffs.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(diffs)
}

fn budget_mib(artifacts: &BTreeMap<String, String>) -> u64 {
    (SIDE_BYTES + artifacts.values().map(|a| a.len() as u64).sum::<u64>()).div_ceil(1024 * 1024)
}

/// Writes one file so that readers see the old or the new contents, never
/// a part: a temporary file beside it, then a rename.
pub fn write_file_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("not a file name"))?;
    let temporary = parent.join(format!(
        ".{}.new-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&temporary, contents)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}
