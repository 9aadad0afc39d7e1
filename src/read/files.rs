//! Reading a values file (or a live Deployment) from disk: refused when it
//! is missing, a folder, larger than [`MAX_FILE_BYTES`] (checked before and
//! while reading, so an endless pipe cannot fill memory) or not UTF-8.

use std::path::Path;

use super::{LoadError, Source, parse_yaml_source};
use crate::diagnostics::{Diagnostic, Severity};

/// Largest values file accepted. Real values files are a few KiB; the cap
/// keeps a mistaken path (a log, an image) from being read into memory.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// A problem reading `file` (no position; keyword `io`).
pub fn io_diagnostic(file: &str, message: String, help: &str) -> Diagnostic {
    Diagnostic {
        file: file.to_string(),
        line: None,
        column: None,
        key: String::new(),
        rule: None,
        keyword: Some("io".into()),
        message,
        help: Some(help.to_string()),
        severity: Severity::Error,
        span_len: 1,
    }
}

/// Reads and parses one values file.
pub fn read_source(path: &Path) -> Result<Source, LoadError> {
    read_yaml_file(path, "values file")
}

/// Reads and parses one single-document YAML mapping; `what` names the file
/// in errors ("values file", "live Deployment file").
pub fn read_yaml_file(path: &Path, what: &str) -> Result<Source, LoadError> {
    let text = read_text(path, what)?;
    parse_yaml_source(path.display().to_string(), text, what)
}

/// The text of a file, read once within [`MAX_FILE_BYTES`]; refused when
/// missing, a folder, larger, or not UTF-8.
pub fn read_text(path: &Path, what: &str) -> Result<String, LoadError> {
    let name = path.display().to_string();
    let metadata = std::fs::metadata(path).map_err(|err| {
        let help = if what == "values file" && err.kind() == std::io::ErrorKind::NotFound {
            // The first hour: a user follows the quick start without a file.
            "check the path; -f is optional (without it, the chart defaults apply), and `asogen show values > my-values.yaml` writes a values file to start from"
        } else {
            "check the path"
        };
        LoadError::Io(vec![io_diagnostic(
            &name,
            format!("cannot read {what}: {err}"),
            help,
        )])
    })?;
    if metadata.is_dir() {
        return Err(LoadError::Io(vec![io_diagnostic(
            &name,
            format!("is a directory, not a {what}"),
            "pass a YAML file",
        )]));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(LoadError::Invalid(vec![io_diagnostic(
            &name,
            format!(
                "{what} is {} bytes; asogen reads files up to {} bytes",
                metadata.len(),
                MAX_FILE_BYTES
            ),
            "values files and Deployments are a few KiB; check the path",
        )]));
    }
    let file = std::fs::File::open(path).map_err(|err| {
        LoadError::Io(vec![io_diagnostic(
            &name,
            format!("cannot read {what}: {err}"),
            "check the file's permissions",
        )])
    })?;
    capped_text(file, &name, what)
}

/// Standard input's text (for `-f -` and `--set-file KEY=-`), within
/// [`MAX_FILE_BYTES`].
pub fn read_stdin_text(what: &str) -> Result<String, LoadError> {
    capped_text(std::io::stdin().lock(), STDIN_NAME, what)
}

/// How standard input is named in diagnostics.
pub const STDIN_NAME: &str = "<stdin>";

/// Reads at most one byte more than [`MAX_FILE_BYTES`], so `/dev/zero` or
/// an endless pipe is refused instead of filling memory.
fn capped_text(reader: impl std::io::Read, name: &str, what: &str) -> Result<String, LoadError> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    reader
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| {
            LoadError::Io(vec![io_diagnostic(
                name,
                format!("cannot read {what}: {err}"),
                "check the file's permissions",
            )])
        })?;
    // A pipe, a device or a growing file has no size up front.
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(LoadError::Invalid(vec![io_diagnostic(
            name,
            format!("{what} is larger than {MAX_FILE_BYTES} bytes, the most asogen reads"),
            "values files and Deployments are a few KiB; check the path",
        )]));
    }
    String::from_utf8(bytes).map_err(|err| {
        let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
        let valid = String::from_utf8_lossy(valid);
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        LoadError::Invalid(vec![Diagnostic {
            line: Some(line),
            column: Some(column),
            ..io_diagnostic(
                name,
                format!(
                    "not UTF-8 text: invalid byte at offset {}",
                    err.utf8_error().valid_up_to()
                ),
                "save the file as UTF-8",
            )
        }])
    })
}

/// A release manifest's text, read up to `limit` bytes: larger, or not
/// UTF-8, is an error (an install manifest with every CRD is large, but
/// not endless).
pub fn read_capped_text(path: &Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB",
            limit / (1024 * 1024)
        )));
    }
    String::from_utf8(bytes).map_err(|_| std::io::Error::other("not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_without_filling_memory() {
        let path = Path::new("/dev/zero");
        if !path.exists() {
            return;
        }
        match read_source(path) {
            Err(LoadError::Invalid(d)) => {
                assert!(d[0].message.contains("larger than"), "{}", d[0].message)
            }
            other => panic!("{other:?}"),
        }
    }
}
