//! Comparing a rendered tree with a folder (`render --check`) and writing
//! one file atomically. Output folders are written by [`crate::write`].

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

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
