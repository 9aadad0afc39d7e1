//! Listing the YAML files of a folder: values profiles, fleet values files
//! and the install manifests of a generated/ folder are all found the same
//! way, here. An entry that looks like a YAML file but cannot be read as
//! one (a dangling symbolic link, a loop, a FIFO, a name with a newline) is
//! reported, never skipped in silence.

use std::io;
use std::path::{Path, PathBuf};

use crate::folder::Kind;

/// A folder's YAML files, and the entries that look like YAML files but
/// cannot be used.
#[derive(Debug, Default)]
pub struct Listing {
    /// The readable `*.yaml` and `*.yml` files, sorted by name.
    pub files: Vec<PathBuf>,
    /// The entries that cannot be read as YAML files, sorted by name.
    pub unusable: Vec<Unusable>,
}

/// A folder entry named like a YAML file that cannot be read as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", .path.display())]
pub struct Unusable {
    /// The entry.
    pub path: PathBuf,
    /// Why, for people ("a dangling symbolic link to x.yaml").
    pub reason: String,
}

/// Whether a name ends in `.yaml` or `.yml`, in any case: `EAST.YAML` is a
/// values file too (Helm reads any name; a silent skip would lose a
/// cluster).
fn yaml_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// Lists `dir`: its `*.yaml` and `*.yml` files (any case), not recursive.
/// Folders and hidden entries (`.name.yaml`, as editors leave them) are
/// skipped; every other entry named like a YAML file that cannot be read
/// as one is in [`Listing::unusable`]. Nothing is opened, so a FIFO cannot
/// block.
pub fn list_yaml(dir: &Path) -> io::Result<Listing> {
    let mut listing = Listing::default();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let raw_name = path.file_name().unwrap_or_default();
        let lossy = raw_name.to_string_lossy();
        if lossy.starts_with('.') || !yaml_name(&lossy) {
            continue;
        }
        let unusable = |reason: String| Unusable {
            path: path.clone(),
            reason,
        };
        if raw_name.to_str().is_none() {
            listing.unusable.push(unusable(
                "its name is not UTF-8; rename it (output names and SHA256SUMS need text)".into(),
            ));
            continue;
        }
        if let Some(c) = lossy.chars().find(|c| c.is_control()) {
            listing.unusable.push(unusable(format!(
                "its name holds the control character {c:?}; rename it (a newline would break SHA256SUMS and every list of files)"
            )));
            continue;
        }
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_file() => listing.files.push(path),
            Ok(metadata) if metadata.is_dir() => {}
            Ok(metadata) => listing.unusable.push(unusable(format!(
                "{}, not a regular file; replace it with the values file",
                Kind::special(&metadata.file_type())
            ))),
            Err(err) => {
                let reason = match std::fs::read_link(&path) {
                    Ok(_) if err.raw_os_error() == Some(ELOOP) => {
                        "a symbolic link that loops; point it at a values file".to_string()
                    }
                    Ok(target) if err.kind() == io::ErrorKind::NotFound => format!(
                        "a dangling symbolic link to {}; point it at a values file or remove it",
                        target.display()
                    ),
                    _ => format!("cannot be read: {err}"),
                };
                listing.unusable.push(unusable(reason));
            }
        }
    }
    listing.files.sort();
    listing.unusable.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(listing)
}

/// `ELOOP` ("too many levels of symbolic links"): 40 on Linux, 62 on the
/// BSDs and macOS.
#[cfg(any(target_os = "linux", target_os = "android"))]
const ELOOP: i32 = 40;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const ELOOP: i32 = 62;

/// The YAML files of `dir` (see [`list_yaml`]); the first entry that cannot
/// be read is an error naming it.
pub fn yaml_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let listing = list_yaml(dir)?;
    match listing.unusable.into_iter().next() {
        Some(unusable) => Err(io::Error::other(unusable.to_string())),
        None => Ok(listing.files),
    }
}

/// A file's name without its extension (`ha` for `values/profiles/ha.yaml`).
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn yaml_files_are_listed_sorted_without_folders_hidden_files_or_others() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "b.yml",
            "a.yaml",
            ".a.yaml",
            "notes.txt",
            "c.yaml.bak",
            "D.YAML",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("d.yaml")).unwrap();
        assert_eq!(
            names(&yaml_files(dir.path()).unwrap()),
            ["D.YAML", "a.yaml", "b.yml"]
        );
        assert!(yaml_files(&dir.path().join("missing")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn entries_that_cannot_be_read_are_reported_not_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("ok.yaml"), "").unwrap();
        std::os::unix::fs::symlink("gone.yaml", at("dangling.yaml")).unwrap();
        std::os::unix::fs::symlink("loop-b.yaml", at("loop-a.yaml")).unwrap();
        std::os::unix::fs::symlink("loop-a.yaml", at("loop-b.yaml")).unwrap();
        std::fs::write(at("new\nline.yaml"), "").unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(at("fifo.yaml"))
            .status();
        let listing = list_yaml(dir.path()).unwrap();
        assert_eq!(names(&listing.files), ["ok.yaml"]);
        let reasons: Vec<String> = listing.unusable.iter().map(|u| u.to_string()).collect();
        let find = |name: &str| {
            reasons
                .iter()
                .find(|r| r.contains(name))
                .unwrap_or_else(|| panic!("{name} not reported: {reasons:?}"))
                .clone()
        };
        assert!(find("dangling.yaml").contains("dangling symbolic link to gone.yaml"));
        assert!(find("loop-a.yaml").contains("loops"));
        assert!(find("line.yaml").contains("control character '\\n'"));
        if status.is_ok_and(|s| s.success()) {
            assert!(find("fifo.yaml").contains("FIFO"));
        }
        let err = yaml_files(dir.path()).unwrap_err().to_string();
        assert!(err.contains("dangling.yaml"), "{err}");
    }
}
