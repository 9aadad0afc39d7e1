//! Writing an output folder (`render --out`, `release --out`, `template
//! --values-dir V --out`) so that it deletes nothing asogen did not write:
//!
//! - the folder must be new, empty, or an earlier output of the same
//!   command (its [`marker`] lists the files that command owns); a chart
//!   repository (an `index.yaml`) is accepted by `release`;
//! - the new tree is staged beside the folder: the new files, the files
//!   asogen does not own (hard links, not copies) and the owned files the
//!   caller keeps; then [`swap`] puts it in place in one step;
//! - an `--out` that is or holds an input is refused; an `--out` symbolic
//!   link is followed, never replaced;
//! - what is inside the folder is read through [`crate::folder`]: no
//!   symbolic link in it is followed, only regular files are read, within
//!   caps (a link, FIFO, socket or device of the user's is kept as it is,
//!   never opened);
//! - writers of one folder take turns (a lock on its parent folder).

pub mod marker;
pub mod swap;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use marker::{MARKER, Marker};

use crate::folder::{Folder, Kind, NotRead, WalkError};

/// Why an output folder was not written; it is left as it was.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// `--out` names something that is not a folder.
    #[error("{} exists and is not a folder; it is unchanged\nhelp: pass a folder, or a path that does not exist yet", .0.display())]
    NotAFolder(PathBuf),
    /// `--out` is a symbolic link to nothing.
    #[error("{} is a symbolic link to {}, which does not exist; nothing was written\nhelp: create the folder it points to, or pass another --out", .link.display(), .target.display())]
    DanglingLink {
        /// The link.
        link: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// A non-empty folder without a marker.
    #[error(
        "{} is not empty and was not written by asogen (it has no {MARKER}; it holds {example}); it is unchanged\nhelp: asogen writes only into a new or empty folder or one it wrote before; pass another --out, or move the folder's contents away",
        .out.display()
    )]
    NotOurs {
        /// The folder.
        out: PathBuf,
        /// One entry in it, to show what would be at stake.
        example: String,
    },
    /// A folder another asogen command wrote.
    #[error(
        "{} was written by `asogen {other}`, not `asogen {command}`; it is unchanged\nhelp: give each command its own --out folder",
        .out.display()
    )]
    OtherCommand {
        /// The folder.
        out: PathBuf,
        /// The command that wrote it.
        other: String,
        /// This command.
        command: String,
    },
    /// A marker that does not parse.
    #[error("{} is not an asogen marker (was it edited?); the folder is unchanged\nhelp: restore it, or pass another --out", .0.display())]
    BadMarker(PathBuf),
    /// `--out` is, or holds, an input of the command.
    #[error(
        "--out {} would replace the input {}; nothing was written\nhelp: write the output to a folder of its own, outside the inputs",
        .out.display(), .input.display()
    )]
    Input {
        /// The output folder.
        out: PathBuf,
        /// The input it holds.
        input: PathBuf,
    },
    /// A file asogen would write is already there, not asogen's and different.
    #[error(
        "{} exists, was not written by asogen and differs from what asogen would write there; the folder is unchanged\nhelp: move that file away, or pass another --out",
        .0.display()
    )]
    Conflict(PathBuf),
    /// A path that cannot be written and listed (a newline in a file name).
    #[error(
        "cannot write a file named {0:?}: a name needs text without control characters; nothing was written\nhelp: rename the input it comes from"
    )]
    BadName(String),
    /// An entry of the folder that asogen must read is not a regular
    /// file within its cap (a symbolic link, a FIFO, a device, ...).
    #[error(
        "{} {reason}; asogen follows no symbolic link in an output folder and reads only regular files, within a cap; the folder is unchanged\nhelp: replace it with the regular file asogen wrote, or remove it",
        crate::printable(&.path.to_string_lossy())
    )]
    NotRead {
        /// The entry.
        path: PathBuf,
        /// What it is instead.
        reason: NotRead,
    },
    /// The folder holds more than asogen walks.
    #[error("{}: {source}; the folder is unchanged\nhelp: move what is not asogen's out of the folder", .out.display())]
    Walk {
        /// The folder.
        out: PathBuf,
        /// The bound the walk reached, or the entry it could not read.
        source: WalkError,
    },
    /// The file system refused.
    #[error("{}: {source}; the folder is unchanged", .path.display())]
    Io {
        /// The path the file system refused.
        path: PathBuf,
        /// The file system's error.
        source: io::Error,
    },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An output folder being written: opened with [`OutputFolder::open`],
/// filled with [`OutputFolder::put`] (from any thread), swapped in with
/// [`OutputFolder::commit`]. Dropped without a commit, it removes what it
/// staged and leaves the folder as it was.
pub struct OutputFolder {
    out: PathBuf,
    /// This writer's folder beside `out` (see [`swap`]): its claim,
    /// `staging` and `retired`.
    work: PathBuf,
    staging: PathBuf,
    retired: PathBuf,
    command: String,
    /// The old folder's owned files (empty when it had no marker).
    owned: BTreeSet<String>,
    /// Whether the folder exists.
    exists: bool,
    /// The folder has no marker but may hold only files this run writes.
    unmarked: bool,
    /// Files asogen writes, and the old files it replaces on purpose.
    written: Mutex<BTreeSet<String>>,
    taken_over: Mutex<BTreeSet<String>>,
    committed: bool,
    _lock: File,
}

/// Which existing folders without a marker a command may write into,
/// besides empty ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    /// Only earlier outputs (with a marker).
    Outputs,
    /// Also a chart repository: a folder with an `index.yaml` (`release`).
    ChartRepository,
    /// Also a folder whose every file is one this run writes (a
    /// `generated/` folder rendered before markers existed).
    OnlyOurFiles,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Files asogen wrote.
    pub files: usize,
    /// Files that were there and are kept (not asogen's, or kept by the caller).
    pub kept: usize,
}

impl OutputFolder {
    /// Locks `out` for `command`, checks that asogen may write it (see the
    /// module), cleans what killed writers left beside it and creates the
    /// staging folder. `inputs` are the files and folders the command
    /// reads; `accept` says which unmarked folders it may write.
    pub fn open(
        out: &Path,
        command: &str,
        inputs: &[&Path],
        accept: Accept,
    ) -> Result<OutputFolder, WriteError> {
        let out = resolve(out)?;
        let (Some(parent), Some(name)) = (out.parent(), out.file_name()) else {
            // The root folder: there is nowhere beside it to stage.
            return Err(WriteError::NotOurs {
                out: out.clone(),
                example: "the whole file system".into(),
            });
        };
        let name = name.to_string_lossy().into_owned();
        for input in inputs {
            if let Ok(input) = std::fs::canonicalize(input)
                && input.starts_with(&out)
            {
                return Err(WriteError::Input {
                    out: out.clone(),
                    input,
                });
            }
        }
        let lock = lock_folder(parent).map_err(io_at(parent))?;
        swap::clean_stale(parent, &name).map_err(io_at(parent))?;
        let exists = out.is_dir();
        let (owned, unmarked) = if exists {
            ownership(&out, command, accept)?
        } else {
            (BTreeSet::new(), false)
        };
        let work = swap::create_work(parent, &name).map_err(io_at(parent))?;
        let staging = work.join(swap::NEW);
        if let Err(err) = std::fs::create_dir(&staging) {
            let _ = swap::remove_work(&work);
            return Err(WriteError::Io {
                path: staging,
                source: err,
            });
        }
        Ok(OutputFolder {
            retired: work.join(swap::OLD),
            work,
            out,
            staging,
            command: command.to_string(),
            owned,
            exists,
            unmarked,
            written: Mutex::default(),
            taken_over: Mutex::default(),
            committed: false,
            _lock: lock,
        })
    }

    /// The folder, symbolic links resolved.
    pub fn path(&self) -> &Path {
        &self.out
    }

    /// Takes over an existing file that asogen rewrites from its contents
    /// (a chart repository's `index.yaml`): its old bytes, if there are,
    /// read up to `limit` bytes.
    pub fn take_over(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>, WriteError> {
        if !self.exists {
            return Ok(None);
        }
        let not_read = |reason| WriteError::NotRead {
            path: self.out.join(path),
            reason,
        };
        let folder = Folder::open(&self.out, true).map_err(not_read)?;
        match folder.read(Path::new(path), limit) {
            Ok(bytes) => {
                self.taken_over
                    .lock()
                    .expect("no writer panicked")
                    .insert(path.to_string());
                Ok(Some(bytes))
            }
            Err(NotRead::Missing) => Ok(None),
            Err(reason) => Err(not_read(reason)),
        }
    }

    /// Whether the folder already is exactly what writing `files` would
    /// leave: same marker, same bytes (then nothing needs writing). A file
    /// is compared only if it is a regular file, read no further than
    /// its new contents' size.
    pub fn unchanged<C: AsRef<[u8]>>(&self, files: &BTreeMap<String, C>) -> bool {
        self.owns_exactly(files.keys().map(String::as_str))
            && files
                .iter()
                .all(|(path, contents)| self.holds(path, contents.as_ref()))
    }

    /// Whether the folder's marker names exactly `paths` (in order): with
    /// [`OutputFolder::holds`] true of each, writing them would change
    /// nothing.
    pub fn owns_exactly<'p>(&self, paths: impl Iterator<Item = &'p str>) -> bool {
        self.exists && self.owned.iter().map(String::as_str).eq(paths)
    }

    /// Whether the folder already holds `contents` at `path`, a regular
    /// file asogen wrote, read no further than `contents`' size.
    pub fn holds(&self, path: &str, contents: &[u8]) -> bool {
        self.exists
            && self.owned.contains(path)
            && Folder::open(&self.out, true)
                .is_ok_and(|folder| folder.holds(Path::new(path), contents))
    }

    /// Stages one file (`path` relative to the folder, `/`-separated).
    pub fn put(&self, path: &str, contents: &[u8]) -> Result<(), WriteError> {
        if !marker::valid_path(path) {
            return Err(WriteError::BadName(path.to_string()));
        }
        let file = self.staging.join(path);
        if let Some(folder) = file.parent() {
            std::fs::create_dir_all(folder).map_err(io_at(folder))?;
        }
        std::fs::write(&file, contents).map_err(io_at(&file))?;
        self.written
            .lock()
            .expect("no writer panicked")
            .insert(path.to_string());
        Ok(())
    }

    /// Stages every file of `files`.
    pub fn put_all<C: AsRef<[u8]>>(&self, files: &BTreeMap<String, C>) -> Result<(), WriteError> {
        files
            .iter()
            .try_for_each(|(path, contents)| self.put(path, contents.as_ref()))
    }

    /// Completes the new tree and swaps it in: the staged files, the old
    /// files asogen does not own, the owned ones `keep` says to keep, and
    /// the marker. Owned files neither written nor kept are gone. A file
    /// not asogen's where it writes one must have the same bytes.
    pub fn commit(mut self, keep: impl Fn(&str) -> bool) -> Result<Written, WriteError> {
        let written = std::mem::take(&mut *self.written.lock().expect("no writer panicked"));
        let taken_over = std::mem::take(&mut *self.taken_over.lock().expect("no writer panicked"));
        let mut owned = written.clone();
        let mut kept = 0;
        if self.exists {
            let folder = Folder::open(&self.out, true).map_err(|reason| WriteError::NotRead {
                path: self.out.clone(),
                reason,
            })?;
            let mut carry = Carry {
                out: &self.out,
                unmarked: self.unmarked,
                from: &folder,
                to: &self.staging,
                written: &written,
                taken_over: &taken_over,
                old_owned: &self.owned,
                keep: &keep,
                owned: &mut owned,
                kept: &mut kept,
            };
            carry.all()?;
        }
        let marker = Marker {
            command: self.command.clone(),
            owned,
        };
        let marker_path = self.staging.join(MARKER);
        std::fs::write(&marker_path, marker.to_text()).map_err(io_at(&marker_path))?;
        swap::swap_in(&self.staging, &self.out, &self.retired).map_err(io_at(&self.out))?;
        self.committed = true;
        // The new tree is in place; the work folder holds the old one (or
        // nothing). A failure here leaves a claimed work folder that the
        // next run removes.
        let _ = swap::remove_work(&self.work);
        Ok(Written {
            files: written.len(),
            kept,
        })
    }
}

impl Drop for OutputFolder {
    fn drop(&mut self) {
        if !self.committed {
            let _ = swap::remove_work(&self.work);
        }
    }
}

/// `out` made absolute with its parent's symbolic links resolved; an
/// `out` that is a symbolic link is followed to its target.
fn resolve(out: &Path) -> Result<PathBuf, WriteError> {
    match std::fs::symlink_metadata(out) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            let target = std::fs::canonicalize(out).map_err(|_| WriteError::DanglingLink {
                link: out.to_path_buf(),
                target: std::fs::read_link(out).unwrap_or_default(),
            })?;
            if !target.is_dir() {
                return Err(WriteError::NotAFolder(out.to_path_buf()));
            }
            Ok(target)
        }
        Ok(metadata) if !metadata.is_dir() => Err(WriteError::NotAFolder(out.to_path_buf())),
        Ok(_) => std::fs::canonicalize(out).map_err(io_at(out)),
        Err(_) => {
            let name = out
                .file_name()
                .ok_or_else(|| WriteError::NotAFolder(out.to_path_buf()))?;
            let parent = match out.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            std::fs::create_dir_all(parent).map_err(io_at(parent))?;
            let parent = std::fs::canonicalize(parent).map_err(io_at(parent))?;
            Ok(parent.join(name))
        }
    }
}

/// The files `command` owns in the existing folder `out` and whether it
/// is an unmarked folder to check file by file, or why asogen may not
/// write it.
fn ownership(
    out: &Path,
    command: &str,
    accept: Accept,
) -> Result<(BTreeSet<String>, bool), WriteError> {
    let marker_path = out.join(MARKER);
    let folder = Folder::open(out, true).map_err(|reason| WriteError::NotRead {
        path: out.to_path_buf(),
        reason,
    })?;
    match folder.read(Path::new(MARKER), marker::MARKER_BYTES) {
        Ok(bytes) => {
            let marker = String::from_utf8(bytes)
                .ok()
                .and_then(|text| Marker::parse(&text))
                .ok_or_else(|| WriteError::BadMarker(marker_path.clone()))?;
            if marker.command != command {
                return Err(WriteError::OtherCommand {
                    out: out.to_path_buf(),
                    other: marker.command,
                    command: command.to_string(),
                });
            }
            Ok((marker.owned, false))
        }
        Err(NotRead::Missing) => {
            // An index.yaml that is not a regular file is refused when it
            // is taken over, by name.
            let index = folder.kind(Path::new("index.yaml")).ok().flatten();
            if accept == Accept::ChartRepository && index.is_some() {
                return Ok((BTreeSet::new(), false));
            }
            // The first name, without holding them all.
            let mut first: Option<String> = None;
            for entry in std::fs::read_dir(out).map_err(io_at(out))? {
                let name = entry
                    .map_err(io_at(out))?
                    .file_name()
                    .to_string_lossy()
                    .into_owned();
                if first.as_ref().is_none_or(|first| name < *first) {
                    first = Some(name);
                }
            }
            match first {
                None => Ok((BTreeSet::new(), false)),
                Some(_) if accept == Accept::OnlyOurFiles => Ok((BTreeSet::new(), true)),
                Some(example) => Err(WriteError::NotOurs {
                    out: out.to_path_buf(),
                    example: crate::printable(&example),
                }),
            }
        }
        Err(reason) => Err(WriteError::NotRead {
            path: marker_path,
            reason,
        }),
    }
}

/// Carries the old tree's files into the staging folder.
struct Carry<'a, K: Fn(&str) -> bool> {
    out: &'a Path,
    unmarked: bool,
    from: &'a Folder,
    to: &'a Path,
    written: &'a BTreeSet<String>,
    taken_over: &'a BTreeSet<String>,
    old_owned: &'a BTreeSet<String>,
    keep: &'a K,
    owned: &'a mut BTreeSet<String>,
    kept: &'a mut usize,
}

impl<K: Fn(&str) -> bool> Carry<'_, K> {
    /// Carries every entry of the old tree (listed within the walk's
    /// bounds, no link followed): keys as the marker names them, paths as
    /// the file system does (names that are not UTF-8 stay as they are).
    fn all(&mut self) -> Result<(), WriteError> {
        let entries = self.from.walk().map_err(|source| WriteError::Walk {
            out: self.out.to_path_buf(),
            source,
        })?;
        for entry in entries {
            let path = entry.key.clone();
            if path == MARKER {
                continue;
            }
            let source = self.out.join(&entry.path);
            let target = self.to.join(&entry.path);
            if entry.kind == Kind::Folder {
                if self.written.contains(&path) {
                    return Err(WriteError::Conflict(source));
                }
                std::fs::create_dir_all(&target).map_err(io_at(&target))?;
                continue;
            }
            let ours = self.old_owned.contains(&path) || self.unmarked;
            if self.unmarked && !self.written.contains(&path) {
                return Err(WriteError::NotOurs {
                    out: self.out.to_path_buf(),
                    example: crate::printable(&path),
                });
            }
            if self.written.contains(&path) {
                // Replaced: asogen's own file, one it took over, or a
                // foreign file with the very bytes asogen writes.
                if !ours && !self.taken_over.contains(&path) && !self.same_bytes(&entry, &target) {
                    return Err(WriteError::Conflict(source));
                }
                continue;
            }
            if ours && !(self.keep)(&path) {
                continue;
            }
            if std::fs::symlink_metadata(&target).is_ok() {
                // asogen writes a folder where this file is.
                return Err(WriteError::Conflict(source));
            }
            if let Some(folder) = target.parent() {
                std::fs::create_dir_all(folder).map_err(io_at(folder))?;
            }
            self.carry_entry(&entry, &source, &target)
                .map_err(io_at(&source))?;
            if ours {
                self.owned.insert(path);
            }
            *self.kept += 1;
        }
        Ok(())
    }

    /// Whether the old entry is a regular file with the bytes staged at
    /// `staged` (read no further than their size).
    fn same_bytes(&self, entry: &crate::folder::Entry, staged: &Path) -> bool {
        let Ok(ours) = std::fs::read(staged) else {
            return false;
        };
        entry.kind == Kind::File
            && self
                .from
                .read(&entry.path, ours.len() as u64)
                .is_ok_and(|theirs| theirs == ours)
    }

    /// One kept entry into the new tree, never opened unless it is a
    /// regular file: a hard link (no copy, the bytes stay as they were; a
    /// FIFO, socket or device stays the same node), the same symbolic
    /// link for a link.
    fn carry_entry(
        &self,
        entry: &crate::folder::Entry,
        source: &Path,
        target: &Path,
    ) -> io::Result<()> {
        match &entry.kind {
            Kind::Link(link) => {
                #[cfg(unix)]
                return std::os::unix::fs::symlink(link, target);
                #[cfg(not(unix))]
                {
                    let _ = link;
                    return Err(io::Error::other(
                        "a symbolic link; asogen cannot keep it in the new tree here (move it away)",
                    ));
                }
            }
            Kind::File => std::fs::hard_link(source, target).or_else(|_| {
                // No hard links here: a copy, streamed from the file that
                // was seen (no link followed).
                let mut from = self.from.open_file(&entry.path).map_err(|reason| {
                    io::Error::other(format!("{reason}; asogen cannot keep it in the new tree"))
                })?;
                let mut to = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(target)?;
                io::copy(&mut from, &mut to).map(|_| ())
            }),
            Kind::Folder => std::fs::create_dir_all(target),
            kind => std::fs::hard_link(source, target).map_err(|err| {
                io::Error::other(format!(
                    "{kind}, which asogen keeps as a hard link, and linking failed ({err}); move it away"
                ))
            }),
        }
    }
}

/// Locks `parent` for writing one of its children: the folder itself where
/// it can be opened (Unix), which leaves nothing behind; otherwise a lock
/// file in it, which stays (removing it would race with a waiting writer).
fn lock_folder(parent: &Path) -> io::Result<File> {
    let lock = match File::open(parent) {
        Ok(folder) => folder,
        Err(_) => std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(parent.join(".asogen.lock"))?,
    };
    lock.lock()?;
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dir: &Path) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(root, &path, out);
                } else {
                    let rel = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    out.insert(rel, std::fs::read_to_string(&path).unwrap_or_default());
                }
            }
        }
        walk(dir, dir, &mut out);
        out.remove(MARKER);
        out
    }

    fn write(
        out: &Path,
        files: &[(&str, &str)],
        keep: impl Fn(&str) -> bool,
    ) -> Result<Written, WriteError> {
        let folder = OutputFolder::open(out, "render", &[], Accept::Outputs)?;
        for (path, text) in files {
            folder.put(path, text.as_bytes())?;
        }
        folder.commit(keep)
    }

    #[test]
    fn owned_files_are_replaced_and_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        write(&out, &[("a.yaml", "1"), ("sub/b.yaml", "1")], |_| false).unwrap();
        std::fs::write(out.join("mine.txt"), "user").unwrap();
        std::fs::write(out.join("sub/notes.md"), "user").unwrap();
        let written = write(&out, &[("a.yaml", "2"), ("c.yaml", "2")], |_| false).unwrap();
        assert_eq!(written, Written { files: 2, kept: 2 });
        let want: BTreeMap<String, String> = [
            ("a.yaml", "2"),
            ("c.yaml", "2"),
            ("mine.txt", "user"),
            ("sub/notes.md", "user"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .into();
        assert_eq!(tree(&out), want);
        let marker = Marker::parse(&std::fs::read_to_string(out.join(MARKER)).unwrap()).unwrap();
        assert_eq!(
            marker.owned,
            ["a.yaml".to_string(), "c.yaml".to_string()].into()
        );
        // Kept on request: still owned.
        write(&out, &[("c.yaml", "3")], |path| path == "a.yaml").unwrap();
        assert_eq!(tree(&out)["a.yaml"], "2");
        let marker = Marker::parse(&std::fs::read_to_string(out.join(MARKER)).unwrap()).unwrap();
        assert!(marker.owned.contains("a.yaml"));
    }

    #[cfg(unix)]
    #[test]
    fn a_kept_file_keeps_a_name_that_is_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        write(&out, &[("a", "1")], |_| false).unwrap();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::create_dir(out.join("sub")).unwrap();
        std::fs::write(out.join("sub").join(name), "latin-1").unwrap();
        write(&out, &[("a", "2")], |_| false).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("sub").join(name)).unwrap(),
            "latin-1"
        );
    }

    #[test]
    fn a_folder_asogen_did_not_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("precious"), "x").unwrap();
        let err = write(&out, &[("a", "1")], |_| false).err().unwrap();
        assert!(matches!(err, WriteError::NotOurs { .. }), "{err}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no staging left"
        );
        // Another command's output is refused too.
        let other = dir.path().join("other");
        write(&other, &[("a", "1")], |_| false).unwrap();
        let err = OutputFolder::open(&other, "release", &[], Accept::Outputs)
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("written by `asogen render`"),
            "{err}"
        );
    }

    #[test]
    fn a_foreign_file_where_asogen_writes_must_match() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        write(&out, &[("a", "1")], |_| false).unwrap();
        std::fs::write(out.join("b"), "hand-made").unwrap();
        let err = write(&out, &[("a", "1"), ("b", "asogen")], |_| false)
            .err()
            .unwrap();
        assert!(matches!(err, WriteError::Conflict(_)), "{err}");
        assert_eq!(std::fs::read_to_string(out.join("b")).unwrap(), "hand-made");
        write(&out, &[("a", "1"), ("b", "hand-made")], |_| false).unwrap();
    }

    #[test]
    fn inputs_inside_the_output_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let values = dir.path().join("values");
        std::fs::create_dir(&values).unwrap();
        for out in [values.clone(), dir.path().to_path_buf()] {
            let err = OutputFolder::open(&out, "template", &[&values], Accept::Outputs)
                .err()
                .unwrap();
            assert!(matches!(err, WriteError::Input { .. }), "{err}");
        }
        assert!(
            OutputFolder::open(&values.join("out"), "template", &[&values], Accept::Outputs)
                .is_ok()
        );
        let err = OutputFolder::open(Path::new("/"), "render", &[], Accept::Outputs)
            .err()
            .unwrap();
        assert!(matches!(err, WriteError::NotOurs { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_followed_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, &[("a", "1")], |_| false).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(target.join("a")).unwrap(), "1");
        std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("dangling")).unwrap();
        let err = write(&dir.path().join("dangling"), &[("a", "1")], |_| false)
            .err()
            .unwrap();
        assert!(matches!(err, WriteError::DanglingLink { .. }), "{err}");
    }
}
