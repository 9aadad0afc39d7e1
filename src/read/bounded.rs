//! Reading the artifacts `diff` and `release --previous` compare, within
//! bounds (a walk through an output folder has its own, in
//! [`output_folder::folder`]): text within a budget per side, and a file
//! inside a chart archive with its decompressed size capped (a 3 MB archive
//! can hold gigabytes of zeros). The YAML read is bounded by the one
//! reader, [`crate::yaml`] (nesting depth and alias expansion, as it
//! parses).

use std::io::Read;
use std::path::Path;

use output_folder::folder::{Folder, NotRead};

/// The most text one side of a comparison reads in all (its install
/// manifests, values and schema). asogen's own are under 2 MiB.
pub const SIDE_BYTES: u64 = 16 * 1024 * 1024;

/// The most a chart archive decompresses to, all entries together.
pub const ARCHIVE_BYTES: u64 = 64 * 1024 * 1024;

/// The most entries a chart archive may have.
pub const ARCHIVE_ENTRIES: usize = 10_000;

/// The largest file read from inside a chart archive.
pub const ARCHIVE_FILE_BYTES: u64 = super::MAX_FILE_BYTES;

/// What is left to read of one side.
#[derive(Debug)]
pub struct Budget {
    left: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { left: SIDE_BYTES }
    }
}

impl Budget {
    /// Reads `path` as UTF-8 text within what is left. Errors are for
    /// people, without the path.
    pub fn read_text(&mut self, path: &Path) -> Result<String, String> {
        let metadata = std::fs::metadata(path).map_err(|err| err.to_string())?;
        if !metadata.is_file() {
            return Err("not a regular file".into());
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(|err| err.to_string())?
            .take(self.left + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| err.to_string())?;
        if bytes.len() as u64 > self.left {
            return Err(format!(
                "too large: one side of a comparison reads at most {} MiB in all",
                SIDE_BYTES / (1024 * 1024)
            ));
        }
        self.left -= bytes.len() as u64;
        String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
    }

    /// Reads the regular file `relative` inside `folder` as UTF-8 text
    /// within what is left, following no symbolic link on the way (see
    /// [`output_folder::folder`]): what a folder side holds may come from a pull
    /// request. Errors are for people, without the path.
    pub fn read_inside(&mut self, folder: &Folder, relative: &Path) -> Result<String, String> {
        let bytes = folder.read(relative, self.left).map_err(|err| match err {
            NotRead::TooLarge(_) => format!(
                "too large: one side of a comparison reads at most {} MiB in all",
                SIDE_BYTES / (1024 * 1024)
            ),
            NotRead::Kind { .. } => format!(
                "{err}; asogen follows no symbolic link and reads only regular files inside a folder it compares"
            ),
            other => other.to_string(),
        })?;
        self.left -= bytes.len() as u64;
        String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
    }
}

/// A reader that fails once more than `left` bytes came through it.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other(format!(
                "the archive decompresses to more than {} MiB; a chart archive is a few hundred KiB",
                ARCHIVE_BYTES / (1024 * 1024)
            ))
        })?;
        Ok(n)
    }
}

/// The text of the file `name` in the chart folder at the top of the
/// gzipped tar `file` (`azure-service-operator/values.yaml`); None when
/// there is none. Decompresses at most [`ARCHIVE_BYTES`], reads at most
/// [`ARCHIVE_FILE_BYTES`] of the file and looks at most at
/// [`ARCHIVE_ENTRIES`] entries.
pub fn archive_file(file: std::fs::File, name: &str) -> Result<Option<String>, String> {
    let gzip = flate2::read::GzDecoder::new(std::io::BufReader::new(file));
    let mut archive = tar::Archive::new(Capped {
        inner: gzip,
        left: ARCHIVE_BYTES,
    });
    let entries = archive.entries().map_err(|err| err.to_string())?;
    for (index, entry) in entries.enumerate() {
        if index >= ARCHIVE_ENTRIES {
            return Err(format!(
                "more than {ARCHIVE_ENTRIES} entries; a chart archive has a few dozen"
            ));
        }
        let entry = entry.map_err(|err| err.to_string())?;
        let entry_path = entry.path().map_err(|err| err.to_string())?.into_owned();
        if entry_path.components().count() != 2 || !entry_path.ends_with(name) {
            continue;
        }
        if entry.header().size().unwrap_or(0) > ARCHIVE_FILE_BYTES {
            return Err(format!(
                "{} is {} bytes; asogen reads files up to {ARCHIVE_FILE_BYTES} bytes",
                entry_path.display(),
                entry.header().size().unwrap_or(0)
            ));
        }
        let mut bytes = Vec::new();
        entry
            .take(ARCHIVE_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| err.to_string())?;
        if bytes.len() as u64 > ARCHIVE_FILE_BYTES {
            return Err(format!(
                "{} is larger than {ARCHIVE_FILE_BYTES} bytes, the most asogen reads",
                entry_path.display()
            ));
        }
        return String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("{} is not UTF-8 text", entry_path.display()));
    }
    Ok(None)
}
