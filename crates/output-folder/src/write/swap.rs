//! Swapping a staged folder in for the output folder in one step, and
//! cleaning up what a killed writer left beside it.
//!
//! A writer works in a folder of its own beside the output,
//! `.NAME.asogen-staging-PID`, and the first thing it writes there is its
//! claim ([`CLAIM`]): the output's name, its process id and the work
//! folder's own identity (device and inode). The staged tree is `new`
//! inside it; the two-rename fallback parks the old tree in `old`. A
//! later writer removes a work folder (or puts its `old` back) only when
//! its process is gone and its claim proves it asogen's: a folder that
//! merely looks like one (a name alone, a copy of a real one, a claim that
//! is a symbolic link) is left alone.
//!
//! On Linux and macOS the swap is one `renameat2(RENAME_EXCHANGE)`
//! (`renameatx_np(RENAME_SWAP)`): the output path names the old tree or the
//! new one at every instant, so a `kill -9` at any moment leaves an output
//! folder. Elsewhere (or on a filesystem without the flag) it is two
//! renames, and the next run puts the old tree back if a writer died
//! between them.

use std::io;
use std::path::{Path, PathBuf};

use crate::folder::{Folder, Kind};

/// The claim's file name inside a work folder.
pub const CLAIM: &str = "asogen-staging";

/// The staged tree's name inside a work folder.
pub const NEW: &str = "new";

/// Where the two-rename fallback parks the old tree, inside a work folder.
pub const OLD: &str = "old";

/// The most a claim is read: a few lines.
const CLAIM_BYTES: u64 = 4096;

/// What a writer's work folder is called: `.NAME.asogen-staging-PID`
/// beside `NAME`.
pub fn work_name(out_name: &str, pid: u32) -> String {
    format!(".{out_name}.asogen-staging-{pid}")
}

/// The identity of the folder at `path` (not followed): its device and
/// inode, which a copy does not share. None where there is none.
fn identity(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::symlink_metadata(path).ok()?;
        Some(format!("{}:{}", metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The claim of the work folder `work` of process `pid` writing `out_name`.
fn claim_text(out_name: &str, pid: u32, work: &Path) -> String {
    format!(
        "# asogen is writing {out_name} from this folder: `{NEW}` is the new tree, `{OLD}`\n\
         # the old one while they are swapped. Once process {pid} is gone, the next\n\
         # asogen that writes {out_name} removes this folder.\n\
         asogen-staging: {out_name}\n\
         pid: {pid}\n\
         folder: {}\n",
        identity(work).unwrap_or_else(|| "-".into())
    )
}

/// Creates the work folder of this process for `parent/out_name` and
/// writes its claim first; returns its path. Call with the output's lock
/// held, after [`clean_stale`].
pub fn create_work(parent: &Path, out_name: &str) -> io::Result<PathBuf> {
    use std::io::Write as _;
    let pid = std::process::id();
    let work = parent.join(work_name(out_name, pid));
    std::fs::create_dir(&work)?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(work.join(CLAIM))
        // One write of a few hundred bytes: a killed writer leaves the
        // whole claim or an empty file.
        .and_then(|mut file| file.write_all(claim_text(out_name, pid, &work).as_bytes()));
    if let Err(err) = written {
        let _ = remove_work(&work);
        return Err(err);
    }
    Ok(work)
}

/// Removes a work folder with its claim last: a writer killed while it
/// removes one leaves a folder whose claim still proves it asogen's, so
/// the next run can remove the rest (what removing it whole, in the order
/// the file system lists it, could not promise).
pub fn remove_work(work: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(work)? {
        let entry = entry?;
        if entry.file_name() == CLAIM {
            continue;
        }
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    match std::fs::remove_file(work.join(CLAIM)) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        _ => {}
    }
    std::fs::remove_dir(work)
}

/// What a work folder of a gone writer proves.
#[derive(Debug, PartialEq, Eq)]
enum Proof {
    /// Its claim is asogen's, for this output, this process id and this
    /// very folder.
    Claimed,
    /// It holds nothing, or only an empty claim (a writer killed before
    /// its claim was written): nothing in it can be lost.
    Empty,
    /// Not shown to be asogen's: left alone.
    None,
}

/// Reads the claim of `work` (no link followed, within a cap).
fn proof(work: &Path, out_name: &str, pid: u32) -> Proof {
    let Ok(folder) = Folder::open(work, false) else {
        return Proof::None;
    };
    match folder.read(Path::new(CLAIM), CLAIM_BYTES) {
        Ok(bytes) if bytes.is_empty() => {}
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let mut lines = text.lines().filter(|line| !line.starts_with('#'));
            let want = [
                format!("asogen-staging: {out_name}"),
                format!("pid: {pid}"),
                format!("folder: {}", identity(work).unwrap_or_else(|| "-".into())),
            ];
            let matches = want.iter().all(|line| lines.next() == Some(line.as_str()))
                && lines.next().is_none();
            return if matches { Proof::Claimed } else { Proof::None };
        }
        Err(crate::folder::NotRead::Missing) => {}
        Err(_) => return Proof::None,
    }
    // No claim, or an empty one: empty only if that is all there is.
    // Two entries at most and no folder (`new` makes it not empty).
    let Ok(entries) = folder.walk_within(crate::folder::Limits {
        entries: 2,
        depth: 0,
    }) else {
        return Proof::None;
    };
    match entries.as_slice() {
        [] => Proof::Empty,
        [only] if only.key == CLAIM && only.kind == Kind::File => Proof::Empty,
        _ => Proof::None,
    }
}

/// Exchanges two existing paths atomically.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
pub fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

/// Exchanges two existing paths atomically: not available here.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
pub fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Puts the staged tree at `out`. Returns the path that now holds the old
/// tree, for the caller to remove (None when `out` did not exist). On an
/// error `out` holds the old tree.
pub fn swap_in(staging: &Path, out: &Path, retired: &Path) -> io::Result<Option<PathBuf>> {
    if std::fs::symlink_metadata(out).is_err() {
        std::fs::rename(staging, out)?;
        return Ok(None);
    }
    match exchange(staging, out) {
        Ok(()) => return Ok(Some(staging.to_path_buf())),
        // EINVAL: a filesystem without the flag; ENOSYS: an old kernel.
        Err(err)
            if err.kind() == io::ErrorKind::Unsupported
                || matches!(err.raw_os_error(), Some(22 | 38 | 95)) => {}
        Err(err) => return Err(err),
    }
    std::fs::rename(out, retired)?;
    if let Err(err) = std::fs::rename(staging, out) {
        std::fs::rename(retired, out)?;
        return Err(err);
    }
    Ok(Some(retired.to_path_buf()))
}

/// Whether the process `pid` still runs (when unsure: yes).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        // This process has not staged anything yet: a folder with its id
        // is from an earlier process that had the same id.
        return false;
    }
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        // EPERM: it exists, owned by someone else.
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// The process id in the name of a work folder of `out_name`
/// (`.NAME.asogen-staging-PID`). The names earlier versions gave
/// (`.NAME.asogen-new-PID`, `.NAME.new-PID`, ...) are not matched: those
/// folders carry no claim, so nothing shows they are asogen's.
fn work_pid(entry: &str, out_name: &str) -> Option<u32> {
    let pid = entry
        .strip_prefix('.')?
        .strip_prefix(out_name)?
        .strip_prefix(".asogen-staging-")?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Cleans what killed writers of `parent/out_name` left: their work
/// folders are removed, and when `out` is missing because a writer died
/// between the two renames of the fallback, its old tree is put back.
/// Only work folders whose process is gone and whose claim proves them
/// asogen's (or that hold nothing). Call with the output's lock held.
/// Returns how many folders were removed.
pub fn clean_stale(parent: &Path, out_name: &str) -> io::Result<usize> {
    let out = parent.join(out_name);
    let mut stale: Vec<PathBuf> = Vec::new();
    let mut removed = 0;
    for entry in std::fs::read_dir(parent)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| work_pid(n, out_name)) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if !is_dir || alive(pid) {
            continue;
        }
        match proof(&entry.path(), out_name, pid) {
            Proof::Claimed => stale.push(entry.path()),
            Proof::Empty => {
                // rmdir fails if anything appeared meanwhile.
                let _ = std::fs::remove_file(entry.path().join(CLAIM));
                if std::fs::remove_dir(entry.path()).is_ok() {
                    removed += 1;
                }
            }
            Proof::None => {}
        }
    }
    stale.sort();
    if std::fs::symlink_metadata(&out).is_err()
        && let Some(old) = stale
            .iter()
            .map(|work| work.join(OLD))
            .find(|old| std::fs::symlink_metadata(old).is_ok_and(|m| m.is_dir()))
    {
        std::fs::rename(old, &out)?;
    }
    for work in stale {
        remove_work(&work)?;
        removed += 1;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_folder_names_are_only_the_ones_asogen_gives() {
        assert_eq!(work_pid(".gen.asogen-staging-12", "gen"), Some(12));
        assert_eq!(work_pid(&work_name("gen", 7), "gen"), Some(7));
        for other in [
            ".gen.asogen-new-12",
            ".gen.asogen-old-7",
            ".gen.new-7",
            ".gen.old-7",
            ".gen.asogen-staging-",
            ".gen.asogen-staging-1x",
            ".other.asogen-staging-1",
            ".gen.lock",
            "gen.asogen-staging-1",
        ] {
            assert_eq!(work_pid(other, "gen"), None, "{other}");
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
    #[test]
    fn exchange_swaps_two_folders_in_one_step() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(a.join("x"), "from a").unwrap();
        std::fs::write(b.join("x"), "from b").unwrap();
        exchange(&a, &b).unwrap();
        assert_eq!(std::fs::read_to_string(a.join("x")).unwrap(), "from b");
        assert_eq!(std::fs::read_to_string(b.join("x")).unwrap(), "from a");
        let retired = dir.path().join("r");
        let old = swap_in(&a, &b, &retired).unwrap().unwrap();
        assert_eq!(old, a);
        assert_eq!(std::fs::read_to_string(b.join("x")).unwrap(), "from b");
    }

    /// A work folder as a writer `pid` of `gen` leaves it, with its claim,
    /// and a file in `part` (`new` or `old`).
    fn claimed(dir: &Path, pid: u32, part: &str) -> PathBuf {
        let work = dir.join(work_name("gen", pid));
        std::fs::create_dir(&work).unwrap();
        std::fs::write(work.join(CLAIM), claim_text("gen", pid, &work)).unwrap();
        std::fs::create_dir(work.join(part)).unwrap();
        std::fs::write(work.join(part).join("file"), format!("{pid} {part}")).unwrap();
        work
    }

    #[cfg(unix)]
    #[test]
    fn only_proven_work_folders_of_gone_writers_are_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        // Process ids no process has (above the Linux maximum, 2^22).
        let gone = 4_194_400;
        claimed(dir.path(), gone, NEW);
        claimed(dir.path(), gone + 1, OLD);
        // The parent of this test runner is alive: its folder stays.
        let alive = std::os::unix::process::parent_id();
        claimed(dir.path(), alive, NEW);
        // Look-alikes: a name without a claim, a copy of a real work
        // folder (its claim names another folder), a claim for another
        // process id, a claim that is a symbolic link to a real one.
        let bare = dir.path().join(work_name("gen", gone + 2));
        std::fs::create_dir_all(bare.join(NEW)).unwrap();
        let real = claimed(dir.path(), gone + 3, NEW);
        let copy = dir.path().join(work_name("gen", gone + 4));
        std::fs::create_dir_all(copy.join(NEW)).unwrap();
        std::fs::write(copy.join(CLAIM), claim_text("gen", gone + 4, &real)).unwrap();
        let other_pid = dir.path().join(work_name("gen", gone + 5));
        std::fs::create_dir(&other_pid).unwrap();
        std::fs::write(other_pid.join(CLAIM), claim_text("gen", gone, &other_pid)).unwrap();
        let linked = dir.path().join(work_name("gen", gone + 6));
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(real.join(CLAIM), linked.join(CLAIM)).unwrap();
        // Killed before its claim was written: nothing to lose.
        std::fs::create_dir(dir.path().join(work_name("gen", gone + 7))).unwrap();
        let empty_claim = dir.path().join(work_name("gen", gone + 8));
        std::fs::create_dir(&empty_claim).unwrap();
        std::fs::write(empty_claim.join(CLAIM), "").unwrap();
        assert_eq!(clean_stale(dir.path(), "gen").unwrap(), 5);
        // The old tree was the output, put back.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("gen/file")).unwrap(),
            format!("{} old", gone + 1)
        );
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![
            work_name("gen", alive),
            work_name("gen", gone + 2),
            work_name("gen", gone + 4),
            work_name("gen", gone + 5),
            work_name("gen", gone + 6),
            "gen".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
    }

    #[test]
    fn a_new_work_folder_carries_its_claim() {
        let dir = tempfile::tempdir().unwrap();
        let work = create_work(dir.path(), "gen").unwrap();
        assert_eq!(
            work.file_name().unwrap().to_string_lossy(),
            work_name("gen", std::process::id())
        );
        // This process's id counts as gone (see `alive`): its own earlier
        // folder is proven and cleaned.
        assert_eq!(
            proof(&work, "gen", std::process::id()),
            Proof::Claimed,
            "{}",
            std::fs::read_to_string(work.join(CLAIM)).unwrap()
        );
        assert_eq!(proof(&work, "other", std::process::id()), Proof::None);
        assert_eq!(clean_stale(dir.path(), "gen").unwrap(), 1);
        assert!(!work.exists());
    }
}
