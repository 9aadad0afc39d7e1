//! Swapping a staged folder in for the output folder in one step, and
//! cleaning up what a killed writer left beside it.
//!
//! On Linux and macOS the swap is one `renameat2(RENAME_EXCHANGE)`
//! (`renameatx_np(RENAME_SWAP)`): the output path names the old tree or the
//! new one at every instant, so a `kill -9` at any moment leaves an output
//! folder. Elsewhere (or on a filesystem without the flag) it is two
//! renames, and the next run puts the old tree back if a writer died
//! between them.

use std::io;
use std::path::{Path, PathBuf};

/// What a staging folder is called: `.NAME.asogen-new-PID` beside `NAME`.
pub fn staging_name(out_name: &str, pid: u32) -> String {
    format!(".{out_name}.asogen-new-{pid}")
}

/// Where the two-rename fallback parks the old tree: `.NAME.asogen-old-PID`.
pub fn retired_name(out_name: &str, pid: u32) -> String {
    format!(".{out_name}.asogen-old-{pid}")
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

/// The process id in a folder name asogen gave a staged or retired tree
/// of `out_name` (this version's names, and the `.NAME.new-PID` and
/// `.NAME.old-PID` of earlier versions); with whether it is a retired one.
fn stale_pid(entry: &str, out_name: &str) -> Option<(u32, bool)> {
    let rest = entry.strip_prefix('.')?.strip_prefix(out_name)?;
    let (kind, pid) = rest.rsplit_once('-')?;
    let retired = match kind {
        ".asogen-new" | ".new" => false,
        ".asogen-old" | ".old" => true,
        _ => return None,
    };
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((pid.parse().ok()?, retired))
}

/// Cleans what killed writers of `parent/out_name` left: their staged
/// folders are removed, and when `out` is missing because a writer died
/// between the two renames of the fallback, its retired tree is put back.
/// Only folders asogen named, and only when their process is gone. Call
/// with the output's lock held. Returns how many folders were removed.
pub fn clean_stale(parent: &Path, out_name: &str) -> io::Result<usize> {
    let out = parent.join(out_name);
    let mut stale: Vec<(PathBuf, bool)> = Vec::new();
    for entry in std::fs::read_dir(parent)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some((pid, retired)) = name.to_str().and_then(|n| stale_pid(n, out_name)) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_dir && !alive(pid) {
            stale.push((entry.path(), retired));
        }
    }
    stale.sort();
    if std::fs::symlink_metadata(&out).is_err()
        && let Some((retired, _)) = stale.iter().find(|(_, retired)| *retired)
    {
        std::fs::rename(retired, &out)?;
    }
    let mut removed = 0;
    for (path, _) in stale {
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_names_are_only_the_ones_asogen_gives() {
        assert_eq!(stale_pid(".gen.asogen-new-12", "gen"), Some((12, false)));
        assert_eq!(stale_pid(".gen.asogen-old-7", "gen"), Some((7, true)));
        assert_eq!(stale_pid(".gen.new-7", "gen"), Some((7, false)));
        assert_eq!(stale_pid(".gen.asogen-new-", "gen"), None);
        assert_eq!(stale_pid(".gen.asogen-new-1x", "gen"), None);
        assert_eq!(stale_pid(".other.asogen-new-1", "gen"), None);
        assert_eq!(stale_pid(".gen.lock", "gen"), None);
        assert_eq!(stale_pid("gen.asogen-new-1", "gen"), None);
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

    #[cfg(unix)]
    #[test]
    fn stale_staging_of_gone_writers_is_removed_and_a_retired_tree_restored() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str| {
            let path = dir.path().join(name);
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("file"), name).unwrap();
        };
        // A process id no process has (above the Linux maximum, 2^22).
        let gone = 4_194_400;
        make(&staging_name("gen", gone));
        make(&retired_name("gen", gone));
        make(&staging_name("gen", std::process::id()));
        // The parent of this test runner is alive: its staging stays.
        let alive = std::os::unix::process::parent_id();
        make(&staging_name("gen", alive));
        make(".gen.asogen-new-x");
        make(&staging_name("other", gone));
        assert_eq!(clean_stale(dir.path(), "gen").unwrap(), 2);
        // The retired tree was the output, put back.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("gen/file")).unwrap(),
            retired_name("gen", gone)
        );
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![
            ".gen.asogen-new-x".to_string(),
            staging_name("gen", alive),
            staging_name("other", gone),
            "gen".to_string(),
        ];
        want.sort();
        assert_eq!(left, want);
    }
}
