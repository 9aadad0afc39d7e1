//! The read stage: values as Helm reads them (each built-in profile asked
//! for, each `-f` file, then each `--set`) into located sources, where every key keeps its file, line and
//! column, and their merge over the chart defaults.
//!
//! This file owns what a source is, why reading fails, turning text into a
//! source, and the order the sources apply in. `files.rs` reads from disk
//! (or standard input) within a size cap, `bounded.rs` reads any input
//! within its bound, `set.rs` applies the `--set` family in Helm's order
//! (its language is `helm_values::strvals`), and `merge.rs` merges the
//! sources over the defaults with Helm's merges (`helm_values::merge`)
//! and finds where a key was set; `profiles.rs` holds the built-in
//! profiles. Folders are read by `output_folder`. The
//! YAML itself is parsed by [`crate::yaml`].

pub mod bounded;
mod files;
mod merge;
pub mod profiles;
mod set;

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, Severity};
use crate::yaml::{self, LocatedDocument};

pub use files::{
    MAX_FILE_BYTES, STDIN_NAME, io_diagnostic, read_capped_text, read_source, read_text,
    read_yaml_file,
};
pub use helm_values::merge::{merge, merge_maps};
use helm_values::strvals;
pub use helm_values::strvals::{Refusal, set_string_expression};
pub use merge::{Merged, default_values, merge_sources, user_values};
pub use set::{SetFlag, is_flag_source, set_source};

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

/// The values of `sources` that Helm (YAML 1.1) reads otherwise than YAML
/// 1.2 tools do, as warnings: asogen reads them as Helm does.
pub fn yaml_warnings(sources: &[Source]) -> Vec<Diagnostic> {
    sources
        .iter()
        .flat_map(|source| {
            source.document.notes.iter().map(|note| Diagnostic {
                file: source.name.clone(),
                line: Some(note.position.line),
                column: Some(note.position.column),
                key: helm_values::pointer::to_key_path(&note.pointer),
                rule: None,
                keyword: Some("yaml-1.1".into()),
                message: note.message.clone(),
                help: Some(note.help.clone()),
                severity: Severity::Warning,
                span_len: note.len,
            })
        })
        .collect()
}

/// Where a later values file sets a key that a built-in profile
/// (`--profile`, applied first) sets, to another value, as warnings: a
/// values file from `asogen show values` holds every key, so a profile
/// before it is quietly undone (`topology: single` after `--profile
/// split`). The values are accepted as Helm merges them.
pub fn profile_warnings(sources: &[Source]) -> Vec<Diagnostic> {
    let profile_prefix = profile_source_name("");
    let mut warnings = Vec::new();
    for (at, profile) in sources.iter().enumerate() {
        let Some(name) = profile.name.strip_prefix(&profile_prefix) else {
            continue;
        };
        for (pointer, _) in profile.document.spans.iter() {
            let Some(set) = profile.document.value.pointer(pointer) else {
                continue;
            };
            if pointer.is_empty() || set.is_object() {
                continue;
            }
            for later in &sources[at + 1..] {
                let (Some(span), Some(value)) = (
                    later.document.spans.get(pointer),
                    later.document.value.pointer(pointer),
                ) else {
                    continue;
                };
                if value == set || later.name.starts_with(&profile_prefix) {
                    continue;
                }
                let key = helm_values::pointer::to_key_path(pointer);
                let position = span.key_or_value();
                // (a profile sets no secret: its keys are the shapes')
                let text = |v: &Value| match v {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let (value, set) = (text(value), text(set));
                warnings.push(Diagnostic {
                    file: later.name.clone(),
                    line: Some(position.line),
                    column: Some(position.column),
                    key: key.clone(),
                    rule: None,
                    keyword: Some("profile".into()),
                    message: format!(
                        "`{key}` is {value} here, which undoes --profile {name} (`{key}: {set}`): a later values file wins"
                    ),
                    help: Some(format!(
                        "remove `{key}` from {} to keep the profile's (a file from `asogen show values` sets every key: delete the ones you keep at their defaults)",
                        later.name
                    )),
                    severity: Severity::Warning,
                    span_len: key.rsplit('.').next().map_or(1, str::len),
                });
            }
        }
    }
    warnings
}

/// Values given on the command line, as Helm's flags name them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValuesInput {
    /// Built-in values profiles (`--profile NAME`, of
    /// [`profiles::BUILTIN_PROFILES`]), applied before the files, in order.
    pub profiles: Vec<String>,
    /// `-f`/`--values` files (`-` is standard input); later files win.
    pub files: Vec<std::path::PathBuf>,
    /// `--set-json` expressions.
    pub set_json: Vec<String>,
    /// `--set` expressions.
    pub set: Vec<String>,
    /// `--set-string` expressions.
    pub set_string: Vec<String>,
    /// `--set-file` expressions.
    pub set_file: Vec<String>,
    /// `--set-literal` expressions.
    pub set_literal: Vec<String>,
}

impl ValuesInput {
    /// The expressions of one flag.
    pub fn expressions(&self, flag: SetFlag) -> &[String] {
        match flag {
            SetFlag::Json => &self.set_json,
            SetFlag::Set => &self.set,
            SetFlag::String => &self.set_string,
            SetFlag::File => &self.set_file,
            SetFlag::Literal => &self.set_literal,
        }
    }

    /// The same `--set` family without profiles or files.
    pub fn sets_only(&self) -> ValuesInput {
        ValuesInput {
            profiles: Vec::new(),
            files: Vec::new(),
            ..self.clone()
        }
    }
}

/// Values that could not be read, with the text of every file that was
/// read (so a report shows the offending line without reading it again).
#[derive(Debug)]
pub struct ReadError {
    /// What went wrong.
    pub error: LoadError,
    /// Each file read, by its name (its document is empty when it did
    /// not parse).
    pub read: Vec<Source>,
}

/// Standard input, which can be read once.
struct Stdin {
    used: bool,
}

impl Stdin {
    fn take(&mut self, what: &str) -> Result<String, LoadError> {
        if std::mem::replace(&mut self.used, true) {
            return Err(LoadError::Io(vec![Diagnostic {
                file: STDIN_NAME.into(),
                keyword: Some("io".into()),
                message: format!("standard input is read once; it cannot also be the {what}"),
                help: Some("pass `-` to one flag only and the others as files".into()),
                ..Default::default()
            }]));
        }
        files::read_stdin_text(what)
    }
}

/// `-` (blanks around it allowed) names standard input, as in Helm.
fn is_stdin(path: &str) -> bool {
    path.trim() == "-"
}

/// The name a built-in profile's values carry in messages.
pub fn profile_source_name(name: &str) -> String {
    format!("profile {name}")
}

/// A `--profile` that names no built-in profile.
fn unknown_profile(name: &str) -> Diagnostic {
    let known: Vec<&str> = profiles::BUILTIN_PROFILES
        .iter()
        .map(|(name, _)| *name)
        .collect();
    Diagnostic {
        file: profile_source_name(name),
        keyword: Some("io".into()),
        message: format!("there is no built-in profile {name:?}"),
        help: Some(format!("use one of: {}", known.join(", "))),
        ..Default::default()
    }
}

/// Reads every built-in profile asked for, then every `-f` file, then applies the `--set` family in Helm's order
/// (`--set-json`, `--set`, `--set-string`, `--set-file`, `--set-literal`)
/// over them.
pub fn read_sources(input: &ValuesInput) -> Result<Vec<Source>, ReadError> {
    let mut sources = Vec::new();
    let mut read = Vec::new();
    let mut io = Vec::new();
    let mut invalid = Vec::new();
    let mut stdin = Stdin { used: false };
    let mut base = Map::new();
    for name in &input.profiles {
        let parsed = match profiles::builtin_profile(name) {
            Some(text) => parse_source(profile_source_name(name), text.to_string()),
            None => Err(LoadError::Io(vec![unknown_profile(name)])),
        };
        match parsed {
            Ok(source) => {
                if let Value::Object(map) = &source.document.value {
                    base = merge_maps(base, map.clone());
                }
                read.push(source.clone());
                sources.push(source);
            }
            Err(LoadError::Io(d)) => io.extend(d),
            Err(LoadError::Invalid(d)) => invalid.extend(d),
        }
    }
    for path in &input.files {
        let text = if is_stdin(&path.to_string_lossy()) {
            stdin.take("values file")
        } else {
            read_text(path, "values file")
        };
        let name = if is_stdin(&path.to_string_lossy()) {
            STDIN_NAME.to_string()
        } else {
            path.display().to_string()
        };
        let parsed = text.and_then(|text| {
            read.push(Source {
                name: name.clone(),
                text: text.clone(),
                document: LocatedDocument::default(),
            });
            parse_source(name, text)
        });
        match parsed {
            Ok(source) => {
                if let Value::Object(map) = &source.document.value {
                    base = merge_maps(base, map.clone());
                }
                sources.push(source);
            }
            Err(LoadError::Io(d)) => io.extend(d),
            Err(LoadError::Invalid(d)) => invalid.extend(d),
        }
    }
    // A `--set-file` that cannot be read is an I/O error (exit 2), as a
    // `-f` file is; one too large is refused (exit 1).
    let unreadable = std::cell::Cell::new(false);
    let mut read_file = |path: &str| -> Result<Value, Refusal> {
        let text = if is_stdin(path) {
            stdin.take("--set-file value")
        } else {
            read_text(std::path::Path::new(path), "--set-file value")
        };
        text.map(Value::String).map_err(|err| {
            unreadable.set(matches!(err, LoadError::Io(_)));
            match err {
                // Paths are shown (a `--set-file` expression is never
                // redacted); the messages of files.rs quote no content.
                LoadError::Io(d) | LoadError::Invalid(d) => Refusal::plain(
                    d.into_iter()
                        .next()
                        .map_or_else(String::new, |d| format!("{}: {}", d.file, d.message)),
                ),
            }
        })
    };
    // One budget for the whole family (see strvals::MAX_SET_WORK).
    let mut budget = strvals::Budget::default();
    'family: for flag in SetFlag::HELM_ORDER {
        for expression in input.expressions(flag) {
            match set::apply_set(flag, expression, &mut base, &mut read_file, &mut budget) {
                Ok(source) => sources.push(source),
                Err(d) if unreadable.replace(false) => io.push(*d),
                Err(d) => invalid.push(*d),
            }
            // Once the budget is spent, every later flag would be refused
            // for it too: one message says it.
            if budget.is_spent() {
                break 'family;
            }
        }
    }
    if !io.is_empty() {
        io.extend(invalid);
        return Err(ReadError {
            error: LoadError::Io(io),
            read,
        });
    }
    if !invalid.is_empty() {
        return Err(ReadError {
            error: LoadError::Invalid(invalid),
            read,
        });
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
        let d = err("resources:\n  limits:\n    cpu: .inf\n");
        assert_eq!(d.key, "resources.limits.cpu");
        assert!(d.message.contains(".inf"), "{}", d.message);
        let d = err("azureClientSecret: 123456789012345678901234567890\n");
        assert_eq!(d.key, "azureClientSecret");
        assert!(!d.message.contains("1234567890"), "{}", d.message);
        let d = err("strategy:\n  type: Recreate\n  type: Recreate\n");
        assert_eq!(d.key, "strategy.type");
        assert_eq!((d.line, d.column), (Some(3), Some(3)));
    }
}
