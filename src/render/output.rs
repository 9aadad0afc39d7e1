//! Writing rendered trees: atomically (a failure leaves the previous tree as
//! it was), serialised against concurrent writers, and untouched when the
//! tree already holds exactly the rendered files.
//!
//! [`Staging`] is the building block: a private folder beside the output
//! that the files are written into, and that is swapped in by renames at
//! the end or removed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Whether `out` holds exactly `artifacts`, byte for byte, and nothing else.
pub fn tree_matches<C: AsRef<[u8]>>(out: &Path, artifacts: &BTreeMap<String, C>) -> bool {
    fn count_files(dir: &Path) -> Option<usize> {
        let mut count = 0;
        for entry in std::fs::read_dir(dir).ok()? {
            let entry = entry.ok()?;
            let kind = entry.file_type().ok()?;
            if kind.is_dir() {
                count += count_files(&entry.path())?;
            } else {
                count += 1;
            }
        }
        Some(count)
    }
    out.is_dir()
        && count_files(out) == Some(artifacts.len())
        && artifacts.iter().all(|(path, contents)| {
            std::fs::read(out.join(path)).is_ok_and(|bytes| bytes == contents.as_ref())
        })
}

/// Files that differ between `artifacts` and the folder `out`: path, what
/// the folder has, what it should have.
pub fn differences(
    out: &Path,
    artifacts: &BTreeMap<String, String>,
) -> Vec<(String, Option<String>, Option<String>)> {
    let mut found = BTreeMap::new();
    collect_files(out, out, &mut found);
    let mut diffs = Vec::new();
    for (path, want) in artifacts {
        match found.remove(path) {
            Some(have) if &have == want => {}
            have => diffs.push((path.clone(), have, Some(want.clone()))),
        }
    }
    for (path, have) in found {
        diffs.push((path, Some(have), None));
    }
    diffs
}

fn collect_files(root: &Path, dir: &Path, found: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(root, &path, found);
        } else if let Ok(relative) = path.strip_prefix(root) {
            let text = std::fs::read(&path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            found.insert(relative.to_string_lossy().replace('\\', "/"), text);
        }
    }
}

/// A tree being written beside `out`, to replace it in one step.
///
/// While a `Staging` lives it holds the lock of `out`'s parent folder, so
/// concurrent writers take turns. Dropping it without
/// [`Staging::commit`] removes what was staged and leaves `out` untouched.
pub struct Staging {
    out: PathBuf,
    dir: PathBuf,
    retired: PathBuf,
    committed: bool,
    _lock: File,
}

impl Staging {
    /// Locks `out` and creates the private staging folder beside it.
    pub fn begin(out: &Path) -> io::Result<Staging> {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = out
            .file_name()
            .ok_or_else(|| io::Error::other(format!("{} is not a folder name", out.display())))?
            .to_string_lossy()
            .to_string();
        if out.exists() && !out.is_dir() {
            return Err(io::Error::other(format!(
                "{} exists and is not a folder",
                out.display()
            )));
        }
        std::fs::create_dir_all(&parent)?;
        let lock = lock_folder(&parent, &name)?;
        let dir = parent.join(format!(".{name}.new-{}", std::process::id()));
        let retired = parent.join(format!(".{name}.old-{}", std::process::id()));
        // Left over by a writer that was killed with this process id.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir)?;
        Ok(Staging {
            out: out.to_path_buf(),
            dir,
            retired,
            committed: false,
            _lock: lock,
        })
    }

    /// Writes `files` (paths relative to the tree) into the staging folder.
    pub fn put<C: AsRef<[u8]>>(&self, files: &BTreeMap<String, C>) -> io::Result<()> {
        let folders: BTreeSet<&str> = files
            .keys()
            .filter_map(|path| path.rsplit_once('/').map(|(folder, _)| folder))
            .collect();
        for folder in folders {
            std::fs::create_dir_all(self.dir.join(folder))?;
        }
        for (path, contents) in files {
            std::fs::write(self.dir.join(path), contents)?;
        }
        Ok(())
    }

    /// Swaps the staged tree in for `out`: the old tree is renamed aside,
    /// the new one renamed into place, the old one removed. On any error
    /// `out` is left as it was.
    pub fn commit(mut self) -> io::Result<()> {
        if self.out.exists() {
            std::fs::rename(&self.out, &self.retired)?;
        }
        if let Err(err) = std::fs::rename(&self.dir, &self.out) {
            // Put the old tree back before reporting.
            if self.retired.exists() {
                let _ = std::fs::rename(&self.retired, &self.out);
            }
            return Err(err);
        }
        self.committed = true;
        let _ = std::fs::remove_dir_all(&self.retired);
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Locks `parent` for writing its child `name`: the folder itself where it
/// can be opened (Unix), which leaves nothing behind; otherwise a lock file
/// beside the output, which stays (removing it would race with a writer
/// waiting for it).
fn lock_folder(parent: &Path, name: &str) -> io::Result<File> {
    let lock = match File::open(parent) {
        Ok(folder) => folder,
        Err(_) => std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(parent.join(format!(".{name}.lock")))?,
    };
    lock.lock()?;
    Ok(lock)
}

/// Writes `artifacts` as the whole content of `out`, atomically (see
/// [`Staging`]). Returns false when `out` already held exactly these files:
/// nothing is written then, so an up-to-date tree keeps its timestamps.
pub fn write_atomically<C: AsRef<[u8]>>(
    out: &Path,
    artifacts: &BTreeMap<String, C>,
) -> io::Result<bool> {
    let staging = Staging::begin(out)?;
    if tree_matches(out, artifacts) {
        return Ok(false);
    }
    staging.put(artifacts)?;
    staging.commit()?;
    Ok(true)
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
