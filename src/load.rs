//! Reading values the way Helm does (chart defaults, then each `-f` file,
//! then each `--set`), checking their shape against the structural schema
//! and the rules, and reporting every problem at its file, line and column.

use std::path::Path;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::diagnostics::{Diagnostic, Severity};
use crate::model::Model;
use crate::rules::Violation;
use crate::schema;
use crate::values::Values;
use crate::yaml::{self, LocatedDocument, NodeSpan, pointer_to_key_path};

/// Largest values file accepted. Real values files are a few KiB; the cap
/// keeps a mistaken path (a log, an image) from being read into memory.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

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

fn io_diagnostic(file: &str, message: String, help: &str) -> Diagnostic {
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
    let name = path.display().to_string();
    let metadata = std::fs::metadata(path).map_err(|err| {
        LoadError::Io(vec![io_diagnostic(
            &name,
            format!("cannot read {what}: {err}"),
            "check the path",
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
    let bytes = std::fs::read(path).map_err(|err| {
        LoadError::Io(vec![io_diagnostic(
            &name,
            format!("cannot read {what}: {err}"),
            "check the file's permissions",
        )])
    })?;
    let text = String::from_utf8(bytes).map_err(|err| {
        let valid = &err.as_bytes()[..err.utf8_error().valid_up_to()];
        let valid = String::from_utf8_lossy(valid);
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        LoadError::Invalid(vec![Diagnostic {
            line: Some(line),
            column: Some(column),
            ..io_diagnostic(
                &name,
                format!(
                    "not UTF-8 text: invalid byte at offset {}",
                    err.utf8_error().valid_up_to()
                ),
                "save the file as UTF-8",
            )
        }])
    })?;
    parse_yaml_source(name, text, what)
}

/// Parses values text (from a file or `--set`).
pub fn parse_source(name: String, text: String) -> Result<Source, LoadError> {
    parse_yaml_source(name, text, "values file")
}

fn parse_yaml_source(name: String, text: String, what: &str) -> Result<Source, LoadError> {
    // A byte-order mark is not content.
    let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let document = yaml::parse_document(body).map_err(|err| {
        LoadError::Invalid(vec![Diagnostic {
            file: name.clone(),
            line: Some(err.position.line),
            column: Some(err.position.column),
            key: String::new(),
            rule: None,
            keyword: Some("yaml".into()),
            message: format!("invalid YAML: {}", err.message),
            help: Some("fix the YAML syntax at this position".into()),
            severity: Severity::Error,
            span_len: 1,
        }])
    })?;
    if !document.value.is_object() {
        let kind = match &document.value {
            Value::Array(_) => "a list",
            Value::Null => "null",
            _ => "a single value",
        };
        return Err(LoadError::Invalid(vec![Diagnostic {
            file: name,
            line: Some(1),
            column: Some(1),
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

/// Turns `--set a.b=c` into a values source, typing the value as YAML
/// would (`true`, `2`, `null`), like Helm's `--set`.
pub fn set_source(assignment: &str) -> Result<Source, LoadError> {
    let invalid = |message: String| {
        LoadError::Invalid(vec![Diagnostic {
            file: "--set".into(),
            keyword: Some("set".into()),
            message,
            help: Some("write --set key.path=value, e.g. --set replicaCount=1".into()),
            ..Default::default()
        }])
    };
    let (path, raw) = assignment
        .split_once('=')
        .ok_or_else(|| invalid(format!("`{assignment}` has no `=`")))?;
    if path.is_empty() || path.split('.').any(str::is_empty) {
        return Err(invalid(format!("`{path}` is not a key path")));
    }
    let scalar = match yaml::parse_document(&format!("v: {raw}")) {
        Ok(doc) => doc.value["v"].clone(),
        Err(_) => Value::String(raw.to_string()),
    };
    let scalar = if scalar.is_object() || scalar.is_array() {
        Value::String(raw.to_string())
    } else {
        scalar
    };
    let mut value = scalar;
    for segment in path.rsplit('.') {
        let mut map = Map::new();
        map.insert(segment.to_string(), value);
        value = Value::Object(map);
    }
    let mut document = LocatedDocument {
        value,
        spans: Default::default(),
    };
    let mut pointer = String::new();
    for segment in path.split('.') {
        pointer.push('/');
        pointer.push_str(&yaml::escape_pointer_segment(segment));
        document.spans.insert(
            pointer.clone(),
            NodeSpan {
                key: None,
                value: yaml::Position { line: 1, column: 1 },
                value_len: assignment.chars().count(),
            },
        );
    }
    Ok(Source {
        name: "--set".into(),
        text: assignment.to_string(),
        document,
    })
}

/// Helm's merge: maps merge deeply, anything else (lists included) is
/// replaced, and `null` deletes the key.
pub fn merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                if value.is_null() {
                    base.remove(key);
                } else if let Some(existing) = base.get_mut(key)
                    && existing.is_object()
                    && value.is_object()
                {
                    merge(existing, value);
                } else {
                    let mut fresh = Value::Null;
                    merge_into_fresh(&mut fresh, value);
                    base.insert(key.clone(), fresh);
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

/// Copies a value, dropping null map entries (Helm never keeps them).
fn merge_into_fresh(target: &mut Value, value: &Value) {
    *target = match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    let mut fresh = Value::Null;
                    merge_into_fresh(&mut fresh, v);
                    (k.clone(), fresh)
                })
                .collect(),
        ),
        other => other.clone(),
    };
}

/// The chart defaults as JSON.
pub fn default_values() -> Value {
    serde_json::to_value(Values::default()).expect("defaults serialize")
}

/// Values merged from every source, with a way to find where a key was set.
pub struct Merged<'a> {
    /// The merged values (defaults first).
    pub value: Value,
    sources: &'a [Source],
}

impl Merged<'_> {
    /// The last source that sets `pointer` or its nearest ancestor, with
    /// that node's span; `None` when only the defaults set it.
    pub fn locate(&self, pointer: &str) -> Option<(&Source, NodeSpan, String)> {
        let mut candidate = pointer.to_string();
        loop {
            for source in self.sources.iter().rev() {
                if let Some(span) = source.document.spans.get(&candidate) {
                    return Some((source, *span, candidate));
                }
            }
            if candidate.is_empty() {
                return None;
            }
            candidate.truncate(candidate.rfind('/').unwrap_or(0));
        }
    }

    fn diagnostic(&self, pointer: &str, on_key: bool) -> Diagnostic {
        match self.locate(pointer) {
            Some((source, span, found)) => {
                let exact = found == pointer;
                // A mapping or list is pointed at by its key, a scalar by its value.
                let container = self
                    .value
                    .pointer(pointer)
                    .is_some_and(|v| v.is_object() || v.is_array());
                let on_key = on_key || container;
                let position = if on_key || !exact {
                    span.key_or_value()
                } else {
                    span.value
                };
                let len = if exact && !on_key && span.key.is_none_or(|k| k != position) {
                    span.value_len
                } else {
                    key_len(&found)
                };
                Diagnostic {
                    file: source.name.clone(),
                    line: (source.name != "--set").then_some(position.line),
                    column: (source.name != "--set").then_some(position.column),
                    key: pointer_to_key_path(pointer),
                    span_len: len,
                    ..Default::default()
                }
            }
            None => Diagnostic {
                file: "<defaults>".into(),
                key: pointer_to_key_path(pointer),
                ..Default::default()
            },
        }
    }
}

fn key_len(pointer: &str) -> usize {
    pointer
        .rsplit('/')
        .next()
        .map_or(1, |k| k.chars().count().max(1))
}

/// Merges the sources over the chart defaults.
pub fn merge_sources(sources: &[Source]) -> Merged<'_> {
    let mut value = default_values();
    for source in sources {
        merge(&mut value, &source.document.value);
    }
    Merged { value, sources }
}

/// Keys whose values are secrets: never echoed in a message.
fn is_secret_key(pointer: &str) -> bool {
    let lower = pointer.to_lowercase();
    ["secret", "password", "certificate"]
        .iter()
        .any(|word| lower.contains(word))
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn closest<'a>(word: &str, options: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    options
        .into_iter()
        .map(|option| (strsim::jaro_winkler(word, option), option))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, option)| option)
}

/// Checks the merged values against the structural schema; one diagnostic
/// per problem, pointing at the offending key.
pub fn shape_diagnostics(
    merged: &Merged,
    schema: &Value,
    validator: &jsonschema::Validator,
) -> Vec<Diagnostic> {
    use jsonschema::error::ValidationErrorKind as Kind;
    let mut out = Vec::new();
    for error in validator.iter_errors(&merged.value) {
        let pointer = error.instance_path().as_str().to_string();
        let instance = error.instance();
        let secret = is_secret_key(&pointer);
        match error.kind() {
            Kind::AdditionalProperties { unexpected } => {
                let known = schema::known_keys(schema, &pointer);
                for key in unexpected {
                    let child = format!("{pointer}/{}", yaml::escape_pointer_segment(key));
                    let mut d = merged.diagnostic(&child, true);
                    d.keyword = Some("additionalProperties".into());
                    d.message = format!("unknown key `{}`", pointer_to_key_path(&child));
                    d.help = Some(match closest(key, known.iter().map(String::as_str)) {
                        Some(near) => format!("did you mean `{near}`?"),
                        None if known.is_empty() => "remove this key".to_string(),
                        None => format!("remove it; known keys here: {}", known.join(", ")),
                    });
                    out.push(d);
                }
            }
            kind => {
                let mut d = merged.diagnostic(&pointer, false);
                let key = pointer_to_key_path(&pointer);
                d.keyword = Some(kind.keyword().to_string());
                let (message, help) = match kind {
                    Kind::Type { kind } => (
                        format!(
                            "`{key}` must be {}, got {}",
                            type_names(kind),
                            json_type(instance)
                        ),
                        "write the value in the expected type (quote strings, leave numbers unquoted)".to_string(),
                    ),
                    Kind::Enum { options } => {
                        let names: Vec<&str> = options
                            .as_array()
                            .map(|a| a.iter().filter_map(Value::as_str).collect())
                            .unwrap_or_default();
                        let given = instance.as_str().unwrap_or_default();
                        let list = names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ");
                        let help = match closest(given, names.iter().copied()) {
                            Some(near) => format!("did you mean `{near}`?"),
                            None => format!("use one of {list}"),
                        };
                        let shown = if secret { String::new() } else { format!(" (got {instance})") };
                        (format!("`{key}` must be one of {list}{shown}"), help)
                    }
                    Kind::Minimum { limit } => (
                        format!("`{key}` must be at least {limit}"),
                        format!("set `{key}` to {limit} or more"),
                    ),
                    Kind::Maximum { limit } => (
                        format!("`{key}` must be at most {limit}"),
                        format!("set `{key}` to {limit} or less"),
                    ),
                    Kind::Pattern { pattern } => (
                        format!("`{key}` does not match the expected form `{pattern}`"),
                        "see the key's description in values.yaml".to_string(),
                    ),
                    Kind::AnyOf { .. } | Kind::OneOfNotValid { .. } => (
                        format!("`{key}` has the wrong form ({})", json_type(instance)),
                        "use a number or a percentage string like \"50%\"".to_string(),
                    ),
                    _ => (
                        format!("`{key}` is not valid here ({} check failed)", kind.keyword()),
                        "see the key's description in values.yaml".to_string(),
                    ),
                };
                d.message = message;
                d.help = Some(help);
                out.push(d);
            }
        }
    }
    out
}

fn type_names(kind: &jsonschema::error::TypeKind) -> String {
    use jsonschema::error::TypeKind;
    let name = |t: &jsonschema::JsonType| match t.to_string().as_str() {
        "integer" => "an integer".to_string(),
        "object" => "a mapping".to_string(),
        "array" => "a list".to_string(),
        "boolean" => "a boolean (true or false)".to_string(),
        other => format!("a {other}"),
    };
    match kind {
        TypeKind::Single(t) => name(t),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|t| name(&t))
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

/// The rule violations as diagnostics, each at the first key of the rule
/// that a values file sets.
pub fn rule_diagnostics(merged: &Merged, violations: &[Violation]) -> Vec<Diagnostic> {
    violations
        .iter()
        .map(|violation| {
            let pointer = violation
                .rule
                .keys
                .iter()
                .map(|key| format!("/{}", key.replace('.', "/")))
                .find(|pointer| {
                    merged
                        .locate(pointer)
                        .is_some_and(|(_, _, found)| &found == pointer)
                })
                .unwrap_or_else(|| violation.pointer.clone());
            let mut d = merged.diagnostic(&pointer, false);
            d.key = pointer_to_key_path(&pointer);
            d.rule = Some(violation.rule.id.to_string());
            d.message = violation.message.clone();
            d.help = Some(violation.rule.help.to_string());
            d
        })
        .collect()
}

/// Everything `validate`, `template` and `render` need to check values.
pub struct Checker {
    release: crate::model::Release,
    schema: Value,
    validator: jsonschema::Validator,
    catalog: Catalog,
}

impl Default for Checker {
    fn default() -> Self {
        Self::new()
    }
}

impl Checker {
    /// Builds the structural schema validator once.
    pub fn new() -> Checker {
        Self::for_release(crate::model::Release::default())
    }

    /// A checker whose models render the given release's versions.
    pub fn for_release(release: crate::model::Release) -> Checker {
        let schema = schema::structural_schema();
        let validator =
            jsonschema::draft7::new(&schema).expect("the generated schema is valid draft-07");
        Checker {
            release,
            schema,
            validator,
            catalog: Catalog::builtin(),
        }
    }

    /// Shape checks, then the rules; the model or every problem.
    pub fn check(&self, sources: &[Source], namespace: &str) -> Result<Model, Vec<Diagnostic>> {
        let merged = merge_sources(sources);
        let shape = shape_diagnostics(&merged, &self.schema, &self.validator);
        if !shape.is_empty() {
            return Err(shape);
        }
        let values: Values = serde_json::from_value(merged.value.clone()).map_err(|err| {
            vec![Diagnostic {
                file: sources
                    .last()
                    .map_or("<defaults>".into(), |s| s.name.clone()),
                keyword: Some("type".into()),
                message: format!("values do not fit the model: {err}"),
                help: Some("see values.yaml for the expected shape".into()),
                ..Default::default()
            }]
        })?;
        Model::new(
            values,
            namespace,
            self.catalog.clone(),
            self.release.clone(),
        )
        .map_err(|violations| rule_diagnostics(&merged, &violations))
    }
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

/// Helm's `--set a=1,b=2` holds several assignments.
fn split_set(set: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in set.split(',') {
        match out.last_mut() {
            // A part without `=` continues the previous value.
            Some(last) if !part.contains('=') => {
                last.push(',');
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}
