//! An output folder read from the inside: what `render --check` compares
//! and what `render`, `release` and `template --out` look at before they
//! rewrite a folder (its marker, the files they replace, the files they
//! keep, a chart repository's `index.yaml`).
//!
//! A pull request controls what such a folder holds, so nothing in it is
//! trusted: no symbolic link is followed, not even one in the middle of a
//! path (each folder is opened relative to its parent with `O_NOFOLLOW`,
//! the way Go's `os.Root` keeps a lookup inside its tree, so there is no
//! check-then-open race); a link is known by the text of its target only,
//! as Git stores one. Only regular files are read, each within a cap; a
//! FIFO, socket or device is never read (a file is opened only after it
//! was seen to be a regular file, without blocking, and checked again
//! once open). A walk lists at most [`FOLDER_ENTRIES`] entries, at most
//! [`FOLDER_DEPTH`] folders deep.

use std::fmt;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// The most entries asogen lists in an output folder (`render --check`,
/// and the old tree a write carries over): a fleet's thousands of
/// manifests fit, a runaway tree does not.
pub const FOLDER_ENTRIES: usize = 100_000;

/// How much of a file [`Folder::holds`] reads at a time.
pub const COMPARE_PIECE: usize = 64 * 1024;

/// The deepest nesting of folders asogen walks in an output folder
/// (`generated/` is four deep).
pub const FOLDER_DEPTH: usize = 64;

/// What an entry of a folder is, seen without following it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link, with the text of its target (never followed).
    Link(PathBuf),
    /// A FIFO (named pipe): opening it for reading can block forever.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A block or character device (`/dev/zero` never ends).
    Device,
    /// Anything else.
    Other,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::File => f.write_str("a regular file"),
            Kind::Folder => f.write_str("a folder"),
            Kind::Link(target) => write!(
                f,
                "a symbolic link to {}",
                crate::printable(&target.to_string_lossy())
            ),
            Kind::Fifo => f.write_str("a FIFO (named pipe)"),
            Kind::Socket => f.write_str("a socket"),
            Kind::Device => f.write_str("a device"),
            Kind::Other => f.write_str("a special file"),
        }
    }
}

impl Kind {
    /// The kind of an entry that is neither a regular file, a folder nor
    /// a symbolic link (from `symlink_metadata` or `metadata`).
    pub fn special(file_type: &std::fs::FileType) -> Kind {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if file_type.is_fifo() {
                return Kind::Fifo;
            }
            if file_type.is_socket() {
                return Kind::Socket;
            }
            if file_type.is_block_device() || file_type.is_char_device() {
                return Kind::Device;
            }
        }
        let _ = file_type;
        Kind::Other
    }
}

/// Why a file of an output folder was not read.
#[derive(Debug)]
pub enum NotRead {
    /// Nothing is there.
    Missing,
    /// The entry, or the folder on the way to it named in `at`, is not a
    /// regular file (or not a folder); it was not followed or opened.
    Kind {
        /// The folder on the way that is not one (relative to the folder
        /// read); None when it is the entry itself.
        at: Option<PathBuf>,
        /// What it is.
        kind: Kind,
    },
    /// Larger than the cap, in bytes.
    TooLarge(u64),
    /// The file system refused.
    Io(io::Error),
}

impl fmt::Display for NotRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotRead::Missing => f.write_str("does not exist"),
            NotRead::Kind { at: None, kind } => write!(f, "is {kind}"),
            NotRead::Kind { at: Some(at), kind } => write!(
                f,
                "is under {}, which is {kind}",
                crate::printable(&at.to_string_lossy())
            ),
            NotRead::TooLarge(limit) => {
                write!(
                    f,
                    "is larger than {limit} bytes, the most asogen reads of it"
                )
            }
            NotRead::Io(err) => write!(f, "cannot be read: {err}"),
        }
    }
}

/// One entry of a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The path relative to the folder, `/`-separated (names that are not
    /// UTF-8 shown lossily): how markers and artifacts name it.
    pub key: String,
    /// The same path as the file system names it.
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
}

/// Why a folder could not be walked.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// More entries than [`FOLDER_ENTRIES`].
    #[error("holds more than {FOLDER_ENTRIES} entries, the most asogen reads in an output folder")]
    TooMany,
    /// Folders nested deeper than [`FOLDER_DEPTH`].
    #[error(
        "{}: folders nest more than {FOLDER_DEPTH} levels deep, the most asogen reads in an output folder",
        crate::printable(&.0.to_string_lossy())
    )]
    TooDeep(PathBuf),
    /// The file system refused.
    #[error("{}: {source}", crate::printable(&.path.to_string_lossy()))]
    Io {
        /// Where, relative to the folder.
        path: PathBuf,
        /// The file system's error.
        source: io::Error,
    },
}

/// How many entries and how deep a walk goes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most entries.
    pub entries: usize,
    /// The deepest nesting of folders.
    pub depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            entries: FOLDER_ENTRIES,
            depth: FOLDER_DEPTH,
        }
    }
}

/// A folder opened for reading from the inside.
pub struct Folder {
    path: PathBuf,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

impl fmt::Debug for Folder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Folder").field("path", &self.path).finish()
    }
}

/// The names of `relative`, which must be a plain relative path.
fn names(relative: &Path) -> io::Result<Vec<&std::ffi::OsStr>> {
    relative
        .components()
        .map(|component| match component {
            Component::Normal(name) => Ok(name),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a plain relative path",
            )),
        })
        .collect()
}

/// Reads an open regular file of `size` bytes (as seen) within `limit`.
fn read_capped(file: std::fs::File, size: u64, limit: u64) -> Result<Vec<u8>, NotRead> {
    if size > limit {
        return Err(NotRead::TooLarge(limit));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(NotRead::Io)?;
    // A file that grows while it is read.
    if bytes.len() as u64 > limit {
        return Err(NotRead::TooLarge(limit));
    }
    Ok(bytes)
}

impl Folder {
    /// Opens the folder `path`. With `follow`, `path` itself may be a
    /// symbolic link to a folder (an `--out` link that writing follows);
    /// without, it is refused as [`NotRead::Kind`].
    pub fn open(path: &Path, follow: bool) -> Result<Folder, NotRead> {
        #[cfg(unix)]
        let fd = sys::open_root(path, follow)?;
        #[cfg(not(unix))]
        sys::open_root(path, follow)?;
        Ok(Folder {
            path: path.to_path_buf(),
            #[cfg(unix)]
            fd,
        })
    }

    /// The path it was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is at `relative` (links not followed); None when nothing is.
    pub fn kind(&self, relative: &Path) -> Result<Option<Kind>, NotRead> {
        match sys::lookup(self, relative) {
            Ok((kind, _)) => Ok(Some(kind)),
            Err(NotRead::Missing) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The bytes of the regular file at `relative`, at most `limit` of
    /// them. Nothing on the way is followed or opened unless it is a
    /// folder, and the file only when it is a regular file.
    pub fn read(&self, relative: &Path, limit: u64) -> Result<Vec<u8>, NotRead> {
        let (file, size) = sys::open_file(self, relative)?;
        read_capped(file, size, limit)
    }

    /// Whether the regular file at `relative` holds exactly `contents`:
    /// opened as [`Folder::read`] opens it, and read in pieces of
    /// [`COMPARE_PIECE`] bytes, so comparing a folder with what would be
    /// written holds no file of it in memory. Anything that is not such a
    /// file, or cannot be read, does not hold it.
    pub fn holds(&self, relative: &Path, contents: &[u8]) -> bool {
        let Ok((mut file, size)) = sys::open_file(self, relative) else {
            return false;
        };
        if size != contents.len() as u64 {
            return false;
        }
        let mut piece = vec![0; COMPARE_PIECE];
        let mut at = 0;
        loop {
            match file.read(&mut piece) {
                // A file that shrank or grew while it was read differs.
                Ok(0) => return at == contents.len(),
                Ok(read) => {
                    if contents.get(at..at + read) != Some(&piece[..read]) {
                        return false;
                    }
                    at += read;
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// The regular file at `relative`, opened (as [`Folder::read`] opens
    /// it) for the caller to stream.
    pub fn open_file(&self, relative: &Path) -> Result<std::fs::File, NotRead> {
        sys::open_file(self, relative).map(|(file, _)| file)
    }

    /// Every entry under the folder, sorted by key (a folder before what
    /// it holds), without following links, within [`Limits::default`].
    pub fn walk(&self) -> Result<Vec<Entry>, WalkError> {
        self.walk_within(Limits::default())
    }

    /// [`Folder::walk`] within `limits`.
    pub fn walk_within(&self, limits: Limits) -> Result<Vec<Entry>, WalkError> {
        let mut entries = Vec::new();
        sys::walk(self, limits, &mut entries)?;
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(entries)
    }
}

#[cfg(unix)]
mod sys {
    //! openat(2) with `O_NOFOLLOW` from the folder's descriptor down.

    use std::ffi::{OsStr, OsString};
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, Stat};

    use super::{Entry, Folder, Kind, Limits, NotRead, WalkError, names};

    fn dir_flags() -> OFlags {
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
    }

    /// What `stat` says an entry is; a link's target is read with `read_target`.
    fn kind_of(stat: &Stat, read_target: impl FnOnce() -> PathBuf) -> Kind {
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Folder,
            FileType::Symlink => Kind::Link(read_target()),
            FileType::Fifo => Kind::Fifo,
            FileType::Socket => Kind::Socket,
            FileType::CharacterDevice | FileType::BlockDevice => Kind::Device,
            FileType::Unknown => Kind::Other,
        }
    }

    /// The entry `name` of the folder `dir`, not followed.
    fn entry_at(dir: BorrowedFd<'_>, name: &OsStr) -> Result<(Kind, Stat), NotRead> {
        let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|err| {
            if err == rustix::io::Errno::NOENT || err == rustix::io::Errno::NOTDIR {
                NotRead::Missing
            } else {
                NotRead::Io(err.into())
            }
        })?;
        let kind = kind_of(&stat, || {
            rustix::fs::readlinkat(dir, name, Vec::new())
                .map(|target| PathBuf::from(OsStr::from_bytes(target.as_bytes())))
                .unwrap_or_default()
        });
        Ok((kind, stat))
    }

    /// Opens the folder `name` of `dir`; anything else is refused by kind.
    fn open_folder_at(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, NotRead> {
        rustix::fs::openat(dir, name, dir_flags(), Mode::empty()).map_err(|err| {
            match entry_at(dir, name) {
                Ok((Kind::Folder, _)) | Err(NotRead::Io(_)) => NotRead::Io(err.into()),
                Ok((kind, _)) => NotRead::Kind { at: None, kind },
                Err(other) => other,
            }
        })
    }

    pub fn open_root(path: &Path, follow: bool) -> Result<OwnedFd, NotRead> {
        let mut flags = dir_flags();
        if follow {
            flags.remove(OFlags::NOFOLLOW);
        }
        rustix::fs::openat(CWD, path, flags, Mode::empty()).map_err(|err| {
            let at = |metadata: &std::fs::Metadata| {
                let kind = metadata.file_type();
                if kind.is_symlink() {
                    Kind::Link(std::fs::read_link(path).unwrap_or_default())
                } else if kind.is_file() {
                    Kind::File
                } else {
                    Kind::special(&kind)
                }
            };
            let metadata = if follow {
                std::fs::metadata(path)
            } else {
                std::fs::symlink_metadata(path)
            };
            match metadata {
                Err(found) if found.kind() == io::ErrorKind::NotFound => NotRead::Missing,
                Ok(metadata) if !metadata.is_dir() => NotRead::Kind {
                    at: None,
                    kind: at(&metadata),
                },
                _ => NotRead::Io(err.into()),
            }
        })
    }

    /// Opens the folders on the way to `relative`'s last name; returns
    /// the last folder (None: the folder itself) and that name.
    fn parent_of<'a>(
        folder: &Folder,
        relative: &'a Path,
    ) -> Result<(Option<OwnedFd>, &'a OsStr), NotRead> {
        let names = names(relative).map_err(NotRead::Io)?;
        let Some((last, on_the_way)) = names.split_last() else {
            return Err(NotRead::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an empty path",
            )));
        };
        let mut current: Option<OwnedFd> = None;
        let mut walked = PathBuf::new();
        for name in on_the_way {
            walked.push(name);
            let dir = current.as_ref().map_or(folder.fd.as_fd(), |fd| fd.as_fd());
            let next = open_folder_at(dir, name).map_err(|err| match err {
                NotRead::Kind { kind, .. } => NotRead::Kind {
                    at: Some(walked.clone()),
                    kind,
                },
                other => other,
            })?;
            current = Some(next);
        }
        Ok((current, last))
    }

    pub fn lookup(folder: &Folder, relative: &Path) -> Result<(Kind, Stat), NotRead> {
        let (parent, name) = parent_of(folder, relative)?;
        let dir = parent.as_ref().map_or(folder.fd.as_fd(), |fd| fd.as_fd());
        entry_at(dir, name)
    }

    pub fn open_file(folder: &Folder, relative: &Path) -> Result<(std::fs::File, u64), NotRead> {
        let (parent, name) = parent_of(folder, relative)?;
        let dir = parent.as_ref().map_or(folder.fd.as_fd(), |fd| fd.as_fd());
        let (kind, seen) = entry_at(dir, name)?;
        if kind != Kind::File {
            return Err(NotRead::Kind { at: None, kind });
        }
        // Opened without blocking (a FIFO swapped in cannot hang the open)
        // and checked again: still the regular file that was seen.
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, name, flags, Mode::empty())
            .map_err(|err| NotRead::Io(err.into()))?;
        let opened = rustix::fs::fstat(&fd).map_err(|err| NotRead::Io(err.into()))?;
        if (opened.st_dev, opened.st_ino) != (seen.st_dev, seen.st_ino)
            || FileType::from_raw_mode(opened.st_mode) != FileType::RegularFile
        {
            return Err(NotRead::Kind {
                at: None,
                kind: kind_of(&opened, PathBuf::new),
            });
        }
        let size = u64::try_from(opened.st_size).unwrap_or(0);
        Ok((std::fs::File::from(fd), size))
    }

    pub fn walk(folder: &Folder, limits: Limits, out: &mut Vec<Entry>) -> Result<(), WalkError> {
        let fd = rustix::fs::openat(folder.fd.as_fd(), ".", dir_flags(), Mode::empty()).map_err(
            |err| WalkError::Io {
                path: PathBuf::new(),
                source: err.into(),
            },
        )?;
        super::walk_folder(&Opened(fd), "", Path::new(""), 1, limits, out)
    }

    /// A folder of a walk, by its descriptor.
    struct Opened(OwnedFd);

    impl super::Walked for Opened {
        fn names(&self, path: &Path, room: usize) -> Result<Vec<OsString>, WalkError> {
            let io_at = |err: rustix::io::Errno| WalkError::Io {
                path: path.to_path_buf(),
                source: err.into(),
            };
            // Listed through a second descriptor; this one looks the names up.
            let dir = Dir::read_from(&self.0).map_err(io_at)?;
            let mut names = Vec::new();
            for entry in dir {
                let entry = entry.map_err(io_at)?;
                let name = entry.file_name().to_bytes();
                if name == b"." || name == b".." {
                    continue;
                }
                if names.len() >= room {
                    return Err(WalkError::TooMany);
                }
                names.push(OsStr::from_bytes(name).to_os_string());
            }
            Ok(names)
        }

        fn kind(&self, name: &OsStr) -> Result<Kind, NotRead> {
            entry_at(self.0.as_fd(), name).map(|(kind, _)| kind)
        }

        fn child(&self, name: &OsStr, path: &Path) -> Result<Self, WalkError> {
            // A folder replaced since it was seen is an error, not a
            // guess: the walk must describe what is there.
            open_folder_at(self.0.as_fd(), name)
                .map(Opened)
                .map_err(|err| WalkError::Io {
                    path: path.to_path_buf(),
                    source: match err {
                        NotRead::Io(source) => source,
                        other => io::Error::other(format!("changed while it was read: {other}")),
                    },
                })
        }
    }
}

#[cfg(not(unix))]
mod sys {
    //! Paths checked with `symlink_metadata`, then opened and checked
    //! again (there is no `openat` here).

    use std::ffi::{OsStr, OsString};
    use std::io;
    use std::path::{Path, PathBuf};

    use super::{Entry, Folder, Kind, Limits, NotRead, WalkError, names};

    fn kind_at(path: &Path) -> Result<Kind, NotRead> {
        let metadata = std::fs::symlink_metadata(path).map_err(|err| {
            if err.kind() == io::ErrorKind::NotFound {
                NotRead::Missing
            } else {
                NotRead::Io(err)
            }
        })?;
        let kind = metadata.file_type();
        Ok(if kind.is_symlink() {
            Kind::Link(std::fs::read_link(path).unwrap_or_default())
        } else if kind.is_dir() {
            Kind::Folder
        } else if kind.is_file() {
            Kind::File
        } else {
            Kind::special(&kind)
        })
    }

    pub fn open_root(path: &Path, follow: bool) -> Result<(), NotRead> {
        let kind = if follow {
            match std::fs::metadata(path) {
                Ok(metadata) if metadata.is_dir() => Kind::Folder,
                Ok(_) => kind_at(path)?,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    return Err(NotRead::Missing);
                }
                Err(err) => return Err(NotRead::Io(err)),
            }
        } else {
            kind_at(path)?
        };
        match kind {
            Kind::Folder => Ok(()),
            kind => Err(NotRead::Kind { at: None, kind }),
        }
    }

    pub fn lookup(folder: &Folder, relative: &Path) -> Result<(Kind, ()), NotRead> {
        let names = names(relative).map_err(NotRead::Io)?;
        let mut path = folder.path.clone();
        let mut walked = PathBuf::new();
        for (index, name) in names.iter().enumerate() {
            path.push(name);
            walked.push(name);
            let kind = kind_at(&path)?;
            if index + 1 == names.len() {
                return Ok((kind, ()));
            }
            if kind != Kind::Folder {
                return Err(NotRead::Kind {
                    at: Some(walked),
                    kind,
                });
            }
        }
        Err(NotRead::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an empty path",
        )))
    }

    pub fn open_file(folder: &Folder, relative: &Path) -> Result<(std::fs::File, u64), NotRead> {
        let (kind, ()) = lookup(folder, relative)?;
        if kind != Kind::File {
            return Err(NotRead::Kind { at: None, kind });
        }
        let file = std::fs::File::open(folder.path.join(relative)).map_err(NotRead::Io)?;
        let metadata = file.metadata().map_err(NotRead::Io)?;
        if !metadata.is_file() {
            return Err(NotRead::Kind {
                at: None,
                kind: Kind::special(&metadata.file_type()),
            });
        }
        Ok((file, metadata.len()))
    }

    pub fn walk(folder: &Folder, limits: Limits, out: &mut Vec<Entry>) -> Result<(), WalkError> {
        let top = AtPath {
            folder,
            path: PathBuf::new(),
        };
        super::walk_folder(&top, "", Path::new(""), 1, limits, out)
    }

    /// A folder of a walk, by its path under the walked folder.
    struct AtPath<'a> {
        folder: &'a Folder,
        path: PathBuf,
    }

    impl super::Walked for AtPath<'_> {
        fn names(&self, path: &Path, room: usize) -> Result<Vec<OsString>, WalkError> {
            let io_at = |source| WalkError::Io {
                path: path.to_path_buf(),
                source,
            };
            let mut names = Vec::new();
            for entry in std::fs::read_dir(self.folder.path.join(&self.path)).map_err(io_at)? {
                if names.len() >= room {
                    return Err(WalkError::TooMany);
                }
                names.push(entry.map_err(io_at)?.file_name());
            }
            Ok(names)
        }

        fn kind(&self, name: &OsStr) -> Result<Kind, NotRead> {
            kind_at(&self.folder.path.join(&self.path).join(name))
        }

        fn child(&self, name: &OsStr, _path: &Path) -> Result<Self, WalkError> {
            Ok(AtPath {
                folder: self.folder,
                path: self.path.join(name),
            })
        }
    }
}

/// One folder reached by a walk, as each platform opens it; the walk
/// itself ([`walk_folder`]) is the same everywhere.
trait Walked: Sized {
    /// The names the folder holds (at `path`, for errors), refused as
    /// [`WalkError::TooMany`] past `room`.
    fn names(&self, path: &Path, room: usize) -> Result<Vec<std::ffi::OsString>, WalkError>;
    /// What `name` is, not followed.
    fn kind(&self, name: &std::ffi::OsStr) -> Result<Kind, NotRead>;
    /// The folder `name` (at `path`), opened to walk on.
    fn child(&self, name: &std::ffi::OsStr, path: &Path) -> Result<Self, WalkError>;
}

/// Lists `folder` (at `key` and `path`, `depth` folders deep) into `out`,
/// then each folder it holds, within `limits`.
fn walk_folder<W: Walked>(
    folder: &W,
    key: &str,
    path: &Path,
    depth: usize,
    limits: Limits,
    out: &mut Vec<Entry>,
) -> Result<(), WalkError> {
    let names = folder.names(path, limits.entries.saturating_sub(out.len()))?;
    for name in names {
        let entry_path = path.join(&name);
        let kind = match folder.kind(&name) {
            Ok(kind) => kind,
            // Removed since it was listed.
            Err(NotRead::Missing) => continue,
            Err(NotRead::Io(source)) => {
                return Err(WalkError::Io {
                    path: entry_path,
                    source,
                });
            }
            Err(_) => Kind::Other,
        };
        if out.len() >= limits.entries {
            return Err(WalkError::TooMany);
        }
        let entry_key = join_key(key, &name.to_string_lossy());
        let is_folder = kind == Kind::Folder;
        out.push(Entry {
            key: entry_key.clone(),
            path: entry_path.clone(),
            kind,
        });
        if is_folder {
            if depth > limits.depth {
                return Err(WalkError::TooDeep(entry_path));
            }
            let child = folder.child(&name, &entry_path)?;
            walk_folder(&child, &entry_key, &entry_path, depth + 1, limits, out)?;
        }
    }
    Ok(())
}

/// `key/name`, or `name` at the top.
fn join_key(key: &str, name: &str) -> String {
    if key.is_empty() {
        name.to_string()
    } else {
        format!("{key}/{name}")
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A file of several pieces holds its bytes, and not bytes that differ
    /// in the last one or that it ends before.
    #[test]
    fn a_long_file_is_compared_piece_by_piece() {
        let dir = tempfile::tempdir().unwrap();
        let long: Vec<u8> = (0..3 * COMPARE_PIECE + 7)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(dir.path().join("long"), &long).unwrap();
        let folder = Folder::open(dir.path(), false).unwrap();
        assert!(folder.holds(Path::new("long"), &long));
        let mut changed = long.clone();
        *changed.last_mut().unwrap() ^= 1;
        assert!(!folder.holds(Path::new("long"), &changed));
        assert!(!folder.holds(Path::new("long"), &long[..long.len() - 1]));
    }

    #[test]
    fn nothing_is_followed_and_only_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret"), "secret").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("sub")).unwrap();
        std::fs::write(out.join("sub/file"), "ok").unwrap();
        symlink(outside.join("secret"), out.join("link")).unwrap();
        symlink(&outside, out.join("folder-link")).unwrap();
        symlink(".", out.join("loop-a")).unwrap();
        symlink(".", out.join("loop-b")).unwrap();
        symlink("/dev/zero", out.join("zero")).unwrap();
        let folder = Folder::open(&out, false).unwrap();
        assert_eq!(folder.read(Path::new("sub/file"), 10).unwrap(), b"ok");
        for (path, want) in [
            ("link", Kind::Link(outside.join("secret"))),
            ("zero", Kind::Link("/dev/zero".into())),
        ] {
            match folder.read(Path::new(path), 1 << 20) {
                Err(NotRead::Kind { at: None, kind }) => assert_eq!(kind, want),
                other => panic!("{path}: {other:?}"),
            }
        }
        match folder.read(Path::new("folder-link/secret"), 1 << 20) {
            Err(NotRead::Kind { at: Some(at), kind }) => {
                assert_eq!(at, Path::new("folder-link"));
                assert_eq!(kind, Kind::Link(outside.clone()));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            folder.read(Path::new("sub/file"), 1),
            Err(NotRead::TooLarge(1))
        ));
        // Holding: the same bytes only, and never through a link.
        assert!(folder.holds(Path::new("sub/file"), b"ok"));
        for other in [&b"o"[..], b"ok!", b"no", b""] {
            assert!(!folder.holds(Path::new("sub/file"), other), "{other:?}");
        }
        assert!(!folder.holds(Path::new("link"), b"secret"));
        assert!(!folder.holds(Path::new("folder-link/secret"), b"secret"));
        assert!(!folder.holds(Path::new("zero"), b""));
        assert!(!folder.holds(Path::new("missing"), b""));

        assert!(matches!(
            folder.read(Path::new("missing"), 1),
            Err(NotRead::Missing)
        ));
        assert!(matches!(
            folder.read(Path::new("../outside/secret"), 100),
            Err(NotRead::Io(_))
        ));
        let keys: Vec<(String, Kind)> = folder
            .walk()
            .unwrap()
            .into_iter()
            .map(|entry| (entry.key, entry.kind))
            .collect();
        assert_eq!(
            keys,
            [
                ("folder-link".to_string(), Kind::Link(outside.clone())),
                ("link".into(), Kind::Link(outside.join("secret"))),
                ("loop-a".into(), Kind::Link(".".into())),
                ("loop-b".into(), Kind::Link(".".into())),
                ("sub".into(), Kind::Folder),
                ("sub/file".into(), Kind::File),
                ("zero".into(), Kind::Link("/dev/zero".into())),
            ]
        );
        // The folder itself as a link: followed only when asked.
        let link = dir.path().join("out-link");
        symlink(&out, &link).unwrap();
        assert!(matches!(
            Folder::open(&link, false),
            Err(NotRead::Kind {
                kind: Kind::Link(_),
                ..
            })
        ));
        assert!(Folder::open(&link, true).is_ok());
    }

    #[test]
    fn a_fifo_is_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("fifo"))
            .status()
            .is_ok_and(|status| status.success());
        assert!(made, "mkfifo");
        let folder = Folder::open(dir.path(), false).unwrap();
        assert!(matches!(
            folder.read(Path::new("fifo"), 10),
            Err(NotRead::Kind {
                kind: Kind::Fifo,
                ..
            })
        ));
        assert_eq!(folder.kind(Path::new("fifo")).unwrap(), Some(Kind::Fifo));
    }

    #[test]
    fn a_walk_stops_at_its_limits() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_path_buf();
        for _ in 0..5 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        for i in 0..10 {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        let folder = Folder::open(dir.path(), false).unwrap();
        assert_eq!(folder.walk().unwrap().len(), 15);
        let limits = |entries, depth| Limits { entries, depth };
        assert!(matches!(
            folder.walk_within(limits(14, 64)),
            Err(WalkError::TooMany)
        ));
        assert!(matches!(
            folder.walk_within(limits(100, 4)),
            Err(WalkError::TooDeep(_))
        ));
        assert_eq!(folder.walk_within(limits(15, 5)).unwrap().len(), 15);
    }
}
