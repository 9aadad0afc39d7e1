//! Listing the YAML files of a folder: values profiles, fleet values files
//! and the install manifests of a generated/ folder are all found the same
//! way, here.

use std::io;
use std::path::{Path, PathBuf};

/// The `*.yaml` and `*.yml` files directly in `dir`, sorted by name. Not
/// recursive; folders and hidden files (`.name.yaml`, as editors leave
/// them) are skipped.
pub fn yaml_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let yaml = path
            .extension()
            .is_some_and(|extension| extension == "yaml" || extension == "yml");
        let hidden = path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'));
        if yaml && !hidden && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
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

    #[test]
    fn yaml_files_are_listed_sorted_without_folders_hidden_files_or_others() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.yml", "a.yaml", ".a.yaml", "notes.txt", "c.yaml.bak"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        std::fs::create_dir(dir.path().join("d.yaml")).unwrap();
        let names: Vec<String> = yaml_files(dir.path())
            .unwrap()
            .iter()
            .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.yaml", "b.yml"]);
        assert!(yaml_files(&dir.path().join("missing")).is_err());
    }
}
