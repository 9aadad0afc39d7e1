//! The read stage: values as Helm reads them (each `-f` file, then each
//! `--set`) into located sources, where every key keeps its file, line and
//! column, and their merge over the chart defaults.
//!
//! This file owns what a source is, why reading fails, turning text into a
//! source, and the order the sources apply in. `files.rs` reads from disk
//! within a size cap, `set.rs` parses `--set`, `merge.rs` is Helm's merge.
//! The YAML itself is parsed by [`crate::yaml`].

pub mod bounded;
mod files;
mod merge;
mod set;

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, Severity};
use crate::yaml::{self, LocatedDocument};

pub use files::{MAX_FILE_BYTES, io_diagnostic, read_capped_text, read_source, read_yaml_file};
pub use merge::{Merged, default_values, merge, merge_sources};
pub use set::{set_source, split_set};

/// One source of values, in the order they apply.
#[derive(Debug, Clone)]
pub struct Source {
    /// The name shown in diagnostics (the path as given, or `--set`).
    pub name: String,
    /// The text, for showing the offending line.
    pub text: String,
    /// The parsed document with spans.
    pub document: LocatedDocument,
}

/// Why values could not be turned into a model.
#[derive(Debug)]
pub enum LoadError {
    /// A file could not be read (missing, a directory, unreadable): exit 2.
    Io(Vec<Diagnostic>),
    /// The values are wrong (syntax, shape or rules): exit 1.
    Invalid(Vec<Diagnostic>),
}

/// Parses values text (from a file or `--set`).
pub fn parse_source(name: String, text: String) -> Result<Source, LoadError> {
    parse_yaml_source(name, text, "values file")
}

fn parse_yaml_source(name: String, text: String, what: &str) -> Result<Source, LoadError> {
    // A byte-order mark is not content.
    let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut document = yaml::parse_document(body).map_err(|err| {
        LoadError::Invalid(vec![Diagnostic {
            file: name.clone(),
            line: Some(err.position.line),
            column: Some(err.position.column),
            key: err.key,
            rule: None,
            keyword: Some("yaml".into()),
            message: format!("invalid YAML: {}", err.message),
            help: Some("fix the YAML syntax at this position".into()),
            severity: Severity::Error,
            span_len: 1,
        }])
    })?;
    // A document that is only `---` (or `~`) is empty, as Helm reads it.
    if document.value.is_null() {
        document.value = Value::Object(Map::new());
    }
    if !document.value.is_object() {
        let kind = match &document.value {
            Value::Array(_) => "a list",
            _ => "a single value",
        };
        // Where the document starts (after any leading comments).
        let start = document
            .spans
            .get("")
            .map_or(yaml::Position { line: 1, column: 1 }, |span| span.value);
        return Err(LoadError::Invalid(vec![Diagnostic {
            file: name,
            line: Some(start.line),
            column: Some(start.column),
            key: String::new(),
            rule: None,
            keyword: Some("type".into()),
            message: format!("a {what} must be a mapping of keys, not {kind}"),
            help: Some("write `key: value` lines at the top level, e.g. `replicaCount: 2`".into()),
            severity: Severity::Error,
            span_len: 1,
        }]));
    }
    Ok(Source {
        name,
        text: body.to_string(),
        document,
    })
}

/// Reads every `-f` file and `--set`, in Helm's order (files, then sets).
pub fn read_sources(
    files: &[std::path::PathBuf],
    sets: &[String],
) -> Result<Vec<Source>, LoadError> {
    let mut sources = Vec::new();
    let mut io = Vec::new();
    let mut invalid = Vec::new();
    for path in files {
        match read_source(path) {
            Ok(source) => sources.push(source),
            Err(LoadError::Io(d)) => io.extend(d),
            Err(LoadError::Invalid(d)) => invalid.extend(d),
        }
    }
    for set in sets {
        for assignment in split_set(set) {
            match set_source(&assignment) {
                Ok(source) => sources.push(source),
                Err(LoadError::Io(d)) => io.extend(d),
                Err(LoadError::Invalid(d)) => invalid.extend(d),
            }
        }
    }
    if !io.is_empty() {
        io.extend(invalid);
        return Err(LoadError::Io(io));
    }
    if !invalid.is_empty() {
        return Err(LoadError::Invalid(invalid));
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_of_only_a_marker_is_empty_as_in_helm() {
        for text in ["---\n", "--- # values\n", "~\n", "null\n"] {
            let source = parse_source("v.yaml".into(), text.into()).expect(text);
            assert_eq!(source.document.value, serde_json::json!({}), "{text}");
        }
        assert!(parse_source("v.yaml".into(), "- a\n".into()).is_err());
    }

    #[test]
    fn a_top_level_list_is_pointed_at_where_it_starts() {
        match parse_source("v.yaml".into(), "# my values\n\n- a\n".into()) {
            Err(LoadError::Invalid(d)) => assert_eq!((d[0].line, d[0].column), (Some(3), Some(1))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn yaml_errors_name_the_key_and_hide_secret_values() {
        let err = |text: &str| match parse_source("v.yaml".into(), text.into()) {
            Err(LoadError::Invalid(d)) => d[0].clone(),
            other => panic!("{other:?}"),
        };
        let d = err("resources:\n  limits:\n    cpu: 1e400\n");
        assert_eq!(d.key, "resources.limits.cpu");
        assert!(d.message.contains("1e400"), "{}", d.message);
        let d = err("azureClientSecret: 123456789012345678901234567890\n");
        assert_eq!(d.key, "azureClientSecret");
        assert!(!d.message.contains("1234567890"), "{}", d.message);
        let d = err("strategy:\n  type: Recreate\n  type: Recreate\n");
        assert_eq!(d.key, "strategy.type");
        assert_eq!((d.line, d.column), (Some(3), Some(3)));
    }
}
