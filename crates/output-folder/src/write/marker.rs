//! The marker that makes a folder an asogen output: `.asogen-output`,
//! naming the command that wrote the folder and every file it owns. The
//! next run of that command replaces those files and keeps every other
//! one; a non-empty folder without a marker is not asogen's to write.

use std::collections::BTreeSet;

/// The marker's file name, at the top of the output folder.
pub const MARKER: &str = ".asogen-output";

/// The most of a marker asogen reads: 100,000 owned paths (a fleet's
/// manifests, [`crate::folder::FOLDER_ENTRIES`]) of 160 bytes.
pub const MARKER_BYTES: u64 = 16 * 1024 * 1024;

/// What a marker says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// The command that wrote the folder (`render`, `release`, `template`).
    pub command: String,
    /// The files it owns, relative to the folder, `/`-separated.
    pub owned: BTreeSet<String>,
}

const HEADER_KEY: &str = "asogen-output: ";

impl Marker {
    /// The marker's text: a comment for people, the command, then one
    /// owned path a line, sorted (so the text is reproducible).
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "# Written by `asogen {0}`. The files listed below are asogen's: the next\n\
             # `asogen {0}` into this folder replaces them and keeps every other file.\n\
             {HEADER_KEY}{0}\n",
            self.command
        );
        for path in &self.owned {
            text.push_str(path);
            text.push('\n');
        }
        text
    }

    /// Reads a marker's text; None when it is not one.
    pub fn parse(text: &str) -> Option<Marker> {
        let mut lines = text.lines().filter(|line| !line.starts_with('#'));
        let command = lines.next()?.strip_prefix(HEADER_KEY)?.to_string();
        if command.is_empty() {
            return None;
        }
        let mut owned = BTreeSet::new();
        for line in lines.filter(|line| !line.is_empty()) {
            if !valid_path(line) {
                return None;
            }
            owned.insert(line.to_string());
        }
        Some(Marker { command, owned })
    }
}

/// Whether `path` is a path asogen may own: relative, `/`-separated, with
/// no empty, `.` or `..` segment and no control character (a newline would
/// split the marker's and SHA256SUMS' lines).
pub fn valid_path(path: &str) -> bool {
    !path.is_empty()
        && path != MARKER
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|segment| !matches!(segment, "" | "." | ".."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_back_what_it_wrote() {
        let marker = Marker {
            command: "render".into(),
            owned: ["b/c.yaml".to_string(), "a.yaml".to_string()].into(),
        };
        let text = marker.to_text();
        assert!(
            text.ends_with("asogen-output: render\na.yaml\nb/c.yaml\n"),
            "{text}"
        );
        assert_eq!(Marker::parse(&text), Some(marker));
        assert_eq!(Marker::parse("hello\n"), None);
        assert_eq!(Marker::parse("asogen-output: render\n../x\n"), None);
    }

    #[test]
    fn owned_paths_stay_inside_the_folder_on_one_line() {
        assert!(valid_path("manifests/ha.yaml"));
        for bad in ["", "/etc/x", "a/../b", "a//b", "./a", "a\nb", MARKER] {
            assert!(!valid_path(bad), "{bad:?}");
        }
    }
}
