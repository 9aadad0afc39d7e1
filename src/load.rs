//! Reading values the way Helm does (chart defaults, then each `-f` file,
//! then each `--set`), checking their shape against the structural schema
//! and the rules, and reporting every problem at its file, line and column.

use std::path::Path;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::diagnostics::{Diagnostic, Severity};
use crate::model::Model;
use crate::pointer::{escape_segment, to_key_path, unescape_segment};
use crate::rules::Violation;
use crate::schema;
use crate::values::Values;
use crate::yaml::{self, LocatedDocument, NodeSpan};

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
    let bytes = read_capped(path).map_err(|err| {
        LoadError::Io(vec![io_diagnostic(
            &name,
            format!("cannot read {what}: {err}"),
            "check the file's permissions",
        )])
    })?;
    // A pipe, a device or a growing file has no size up front.
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(LoadError::Invalid(vec![io_diagnostic(
            &name,
            format!("{what} is larger than {MAX_FILE_BYTES} bytes, the most asogen reads"),
            "values files and Deployments are a few KiB; check the path",
        )]));
    }
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

/// Reads at most one byte more than `MAX_FILE_BYTES`, so `/dev/zero` or an
/// endless pipe is refused instead of filling memory.
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
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
        pointer.push_str(&escape_segment(segment));
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
    static DEFAULTS: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    DEFAULTS
        .get_or_init(|| serde_json::to_value(Values::default()).expect("defaults serialize"))
        .clone()
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
                    key: to_key_path(pointer),
                    span_len: len,
                    ..Default::default()
                }
            }
            None => Diagnostic {
                file: "<defaults>".into(),
                key: to_key_path(pointer),
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
    crate::diagnostics::is_secret_name(pointer)
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
    let mut out = Vec::new();
    shape_errors(merged, schema, validator, &merged.value, "", &mut out);
    out
}

/// The schema node that governs the instance at `pointer`, through
/// properties, list items, maps and the non-null branch of an optional
/// value (`anyOf [T, null]`); resolved.
fn schema_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    raw_schema_at(schema, pointer).map(|node| open_optional(schema, node))
}

/// Like `schema_at`, but the last node is left as written (an optional
/// value stays `anyOf [T, null]`).
fn raw_schema_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut node = schema::resolve(schema, schema);
    for segment in pointer.split('/').skip(1) {
        let node_open = open_optional(schema, node);
        let segment = unescape_segment(segment);
        let next = match node_open.get("properties").and_then(|p| p.get(&segment)) {
            Some(next) => next,
            None => match node_open.get("items") {
                Some(items) if segment.parse::<usize>().is_ok() => items,
                _ => node_open
                    .get("additionalProperties")
                    .filter(|a| a.is_object())?,
            },
        };
        node = schema::resolve(schema, next);
    }
    Some(node)
}

/// The one non-null branch of `anyOf [T, null]` (how an `Option` of a
/// struct is written), or the node itself.
fn open_optional<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    optional_branch(root, node).unwrap_or(node)
}

fn optional_branch<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    let branches = node.get("anyOf").and_then(Value::as_array)?;
    let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
    let mut others = branches.iter().filter(|b| !is_null(b));
    match (branches.iter().any(is_null), others.next(), others.next()) {
        (true, Some(only), None) => Some(schema::resolve(root, only)),
        _ => None,
    }
}

/// "an integer of at least 0 or a percentage string like \"50%\"": what
/// the branches of an `anyOf` accept.
fn describe_branches(root: &Value, node: &Value) -> String {
    let branches = node
        .get("anyOf")
        .or_else(|| node.get("oneOf"))
        .and_then(Value::as_array);
    let names: Vec<String> = branches
        .into_iter()
        .flatten()
        .map(|branch| {
            let branch = schema::resolve(root, branch);
            match branch.get("type").and_then(Value::as_str) {
                Some("integer") => match branch.get("minimum") {
                    Some(min) => format!("an integer of at least {min}"),
                    None => "an integer".to_string(),
                },
                Some("string")
                    if branch
                        .get("pattern")
                        .and_then(Value::as_str)
                        .is_some_and(|p| p.contains('%')) =>
                {
                    "a percentage string like \"50%\"".to_string()
                }
                Some("string") => "a string".to_string(),
                Some("array") => "a list".to_string(),
                Some("object") => "a mapping".to_string(),
                Some("null") => "null".to_string(),
                _ => "a value of another form".to_string(),
            }
        })
        .collect();
    if names.is_empty() {
        "a value of another form".to_string()
    } else {
        names.join(" or ")
    }
}

fn shape_errors(
    merged: &Merged,
    schema: &Value,
    validator: &jsonschema::Validator,
    instance_root: &Value,
    prefix: &str,
    out: &mut Vec<Diagnostic>,
) {
    use jsonschema::error::ValidationErrorKind as Kind;
    for error in validator.iter_errors(instance_root) {
        let pointer = format!("{prefix}{}", error.instance_path().as_str());
        let instance = error.instance();
        let secret = is_secret_key(&pointer);
        let node = schema_at(schema, &pointer);
        // An optional mapping (`strategy.rollingUpdate`) that is present but
        // wrong: report what is wrong inside it, not that the `anyOf` failed.
        if matches!(error.kind(), Kind::AnyOf { .. })
            && !instance.is_null()
            && let Some(branch) =
                raw_schema_at(schema, &pointer).and_then(|raw| optional_branch(schema, raw))
        {
            let mut wrapper = serde_json::json!({"allOf": [branch]});
            if let Some(definitions) = schema.get("definitions") {
                wrapper["definitions"] = definitions.clone();
            }
            if let Ok(inner) = jsonschema::draft7::new(&wrapper) {
                let before = out.len();
                shape_errors(merged, schema, &inner, instance, &pointer, out);
                if out.len() > before {
                    continue;
                }
            }
        }
        match error.kind() {
            Kind::AdditionalProperties { unexpected } => {
                let known: Vec<String> = node
                    .and_then(|n| n.get("properties"))
                    .and_then(Value::as_object)
                    .map(|props| props.keys().cloned().collect())
                    .unwrap_or_else(|| schema::known_keys(schema, &pointer));
                for key in unexpected {
                    let child = format!("{pointer}/{}", escape_segment(key));
                    let mut d = merged.diagnostic(&child, true);
                    d.keyword = Some("additionalProperties".into());
                    d.message = format!("unknown key `{}`", to_key_path(&child));
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
                let key = to_key_path(&pointer);
                d.keyword = Some(kind.keyword().to_string());
                let (message, help) = match kind {
                    Kind::Type { kind } => {
                        let expected = type_names(kind);
                        let yaml11 = matches!(
                            instance.as_str(),
                            Some(
                                "yes"
                                    | "no"
                                    | "on"
                                    | "off"
                                    | "y"
                                    | "n"
                                    | "Yes"
                                    | "No"
                                    | "On"
                                    | "Off"
                                    | "YES"
                                    | "NO"
                                    | "ON"
                                    | "OFF"
                            )
                        );
                        let help = if yaml11 && expected.starts_with("a boolean") {
                            "write true or false: asogen reads YAML 1.2, where yes/no/on/off are strings".to_string()
                        } else {
                            "write the value in the expected type (quote strings, leave numbers unquoted)".to_string()
                        };
                        (
                            format!("`{key}` must be {expected}, got {}", json_type(instance)),
                            help,
                        )
                    }
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
                        let shown = if secret {
                            String::new()
                        } else {
                            format!(" (got {instance})")
                        };
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
                    Kind::AnyOf { .. } | Kind::OneOfNotValid { .. } => {
                        let accepted = raw_schema_at(schema, &pointer)
                            .map(|n| describe_branches(schema, n))
                            .unwrap_or_else(|| "a value of another form".to_string());
                        (
                            format!("`{key}` must be {accepted}, got {}", json_type(instance)),
                            format!("use {accepted}"),
                        )
                    }
                    _ => (
                        format!(
                            "`{key}` is not valid here ({} check failed)",
                            kind.keyword()
                        ),
                        "see the key's description in values.yaml".to_string(),
                    ),
                };
                d.message = message;
                d.help = Some(help);
                out.push(d);
            }
        }
    }
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
            d.key = to_key_path(&pointer);
            d.rule = Some(violation.rule.id.to_string());
            d.message = violation.message.clone();
            d.help = Some(violation.rule.help.to_string());
            d
        })
        .collect()
}

/// `1.0` is an integer to JSON Schema (and to Helm, which reads every
/// number as a float); make it one for the typed model too.
fn integral_floats_to_integers(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_to_integers),
        Value::Object(map) => map.values_mut().for_each(integral_floats_to_integers),
        _ => {}
    }
}

/// Keys the schema declares `int64` whose Kubernetes field is `int32`:
/// `replicaCount` becomes `spec.replicas`.
const INT32_KEYS: [&str; 1] = ["/replicaCount"];

/// Integers outside 32 bits where the field holds 32 (every integer whose
/// schema is not `format: int64`). Draft-07 validators ignore `format`, so
/// without this such a value reached the typed model and failed there with
/// no position (or, for `replicaCount`, crashed it).
fn range_diagnostics(merged: &Merged, typed: &Value, schema: &Value) -> Vec<Diagnostic> {
    fn has_wide_number(value: &Value) -> bool {
        match value {
            Value::Number(n) => n.as_i64().is_none_or(|i| i32::try_from(i).is_err()),
            Value::Array(items) => items.iter().any(has_wide_number),
            Value::Object(map) => map.values().any(has_wide_number),
            _ => false,
        }
    }
    let mut out = Vec::new();
    // Every value fits 32 bits in nearly every file: skip the schema walk.
    if !has_wide_number(typed) {
        return out;
    }
    check_ranges(merged, schema, schema, typed, "", &mut out);
    out
}

fn check_ranges(
    merged: &Merged,
    root: &Value,
    node: &Value,
    value: &Value,
    pointer: &str,
    out: &mut Vec<Diagnostic>,
) {
    let node = schema::resolve(root, node);
    // The node and its `anyOf`/`oneOf` branches (an `Option` is `anyOf [T, null]`).
    let branches: Vec<&Value> = std::iter::once(node)
        .chain(
            ["anyOf", "oneOf"]
                .iter()
                .filter_map(|k| node.get(*k).and_then(Value::as_array))
                .flatten()
                .map(|branch| schema::resolve(root, branch)),
        )
        .collect();
    match value {
        Value::Number(n) => {
            let integer_schemas: Vec<&&Value> = branches
                .iter()
                .filter(|s| s.get("type").and_then(Value::as_str) == Some("integer"))
                .collect();
            if integer_schemas.is_empty() {
                return;
            }
            let (bits, min, max) = if INT32_KEYS.contains(&pointer)
                || integer_schemas
                    .iter()
                    .all(|s| s.get("format").and_then(Value::as_str) != Some("int64"))
            {
                (32, i64::from(i32::MIN), i64::from(i32::MAX))
            } else {
                (64, i64::MIN, i64::MAX)
            };
            let fits = match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => (min..=max).contains(&i),
                (None, Some(f)) => f >= min as f64 && f <= max as f64,
                (None, None) => false,
            };
            if !fits {
                let key = to_key_path(pointer);
                let (keyword, bound) = if n.as_f64().is_some_and(|f| f > 0.0) {
                    ("maximum", format!("at most {max}"))
                } else {
                    ("minimum", format!("at least {min}"))
                };
                let mut d = merged.diagnostic(pointer, false);
                d.keyword = Some(keyword.into());
                d.message = format!(
                    "`{key}` must be {bound}: Kubernetes holds it in {bits} bits{}",
                    if is_secret_key(pointer) {
                        String::new()
                    } else {
                        format!(" (got {n})")
                    }
                );
                d.help = Some(format!("set `{key}` to a smaller number"));
                out.push(d);
            }
        }
        Value::Object(map) => {
            for (key, child) in map {
                let child_schema = branches.iter().find_map(|node| {
                    node.get("properties")
                        .and_then(|p| p.get(key))
                        .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
                });
                if let Some(child_schema) = child_schema {
                    let child_pointer = format!("{pointer}/{}", escape_segment(key));
                    check_ranges(merged, root, child_schema, child, &child_pointer, out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = branches.iter().find_map(|node| node.get("items")) {
                for (index, item) in items.iter().enumerate() {
                    check_ranges(
                        merged,
                        root,
                        item_schema,
                        item,
                        &format!("{pointer}/{index}"),
                        out,
                    );
                }
            }
        }
        _ => {}
    }
}

/// Everything `validate`, `template` and `render` need to check values.
pub struct Checker {
    release: crate::model::Release,
    schema: &'static Value,
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
        Self::with_schema(release, schema::structural_schema_ref())
    }

    /// A checker for the given values only, for one-shot commands: its
    /// validator covers just the top-level keys they write, so it compiles
    /// several times faster than the whole schema and reports the same
    /// errors for them (see [`schema::structural_schema_for_keys`]). Checks
    /// of other values are not meaningful; use [`Checker::new`] for those.
    pub fn for_sources<'s>(
        release: crate::model::Release,
        sources: impl IntoIterator<Item = &'s Source>,
    ) -> Checker {
        let mut written = Vec::new();
        for source in sources {
            match &source.document.value {
                Value::Object(map) => written.extend(map.keys().map(String::as_str)),
                Value::Null => {}
                // Not a mapping: the full schema reports it.
                _ => return Self::for_release(release),
            }
        }
        Self::with_schema(release, &schema::structural_schema_for_keys(written))
    }

    fn with_schema(release: crate::model::Release, validated_against: &Value) -> Checker {
        let validator = jsonschema::draft7::new(validated_against)
            .expect("the generated schema is valid draft-07");
        Checker {
            release,
            schema: schema::structural_schema_ref(),
            validator,
            catalog: Catalog::builtin(),
        }
    }

    /// Shape checks, then the rules; the model or every problem.
    pub fn check(&self, sources: &[Source], namespace: &str) -> Result<Model, Vec<Diagnostic>> {
        let merged = merge_sources(sources);
        let mut shape = shape_diagnostics(&merged, self.schema, &self.validator);
        if !shape.is_empty() {
            // Report the broken rules too when the keys they read are well
            // formed, so one run shows every problem (as an editor does).
            shape.extend(rule_diagnostics(
                &merged,
                &rules_despite_shape_errors(&merged, &shape),
            ));
            return Err(shape);
        }
        let mut typed = merged.value.clone();
        integral_floats_to_integers(&mut typed);
        let ranges = range_diagnostics(&merged, &typed, self.schema);
        if !ranges.is_empty() {
            return Err(ranges);
        }
        let values: Values = serde_json::from_value(typed).map_err(|err| {
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

/// The model for `sources` without the schema check, or None when the
/// values do not fit or break a rule. Rendering starts from it while the
/// schema validator compiles; the output is used only once `Checker::check`
/// accepts the same sources (it then yields the same model).
pub fn unchecked_model(
    sources: &[Source],
    namespace: &str,
    release: crate::model::Release,
) -> Option<Model> {
    let mut typed = merge_sources(sources).value;
    integral_floats_to_integers(&mut typed);
    let values: Values = serde_json::from_value(typed).ok()?;
    Model::new(values, namespace, Catalog::builtin(), release).ok()
}

/// The keys the rules read.
const RULE_KEYS: [&str; 4] = [
    "replicaCount",
    "strategy.type",
    "strategy.rollingUpdate",
    "featureGates.singleReplicaRollingUpdate",
];

/// The rules, read straight from the merged values when other keys have
/// shape problems; nothing when any key the rules read is itself malformed.
fn rules_despite_shape_errors(merged: &Merged, shape: &[Diagnostic]) -> Vec<Violation> {
    let touches_rule_key = |key: &str| {
        RULE_KEYS.iter().any(|rule_key| {
            key == *rule_key
                || rule_key.starts_with(&format!("{key}."))
                || key.starts_with(&format!("{rule_key}."))
        })
    };
    if shape
        .iter()
        .any(|d| d.key.is_empty() || touches_rule_key(&d.key))
    {
        return Vec::new();
    }
    let value = &merged.value;
    let mut values = Values::default();
    match value.get("replicaCount").map(Value::as_i64) {
        Some(Some(replicas)) => values.replica_count = replicas,
        Some(None) => return Vec::new(),
        None => {}
    }
    match value.pointer("/strategy/type").map(Value::as_str) {
        Some(Some("Recreate")) | None => {
            values.strategy.kind = crate::values::StrategyType::Recreate
        }
        Some(Some("RollingUpdate")) => {
            values.strategy.kind = crate::values::StrategyType::RollingUpdate
        }
        Some(_) => return Vec::new(),
    }
    if value
        .pointer("/strategy/rollingUpdate")
        .is_some_and(|v| !v.is_null())
    {
        values.strategy.rolling_update = Some(Default::default());
    }
    match value
        .pointer("/featureGates/singleReplicaRollingUpdate")
        .map(Value::as_bool)
    {
        Some(Some(gate)) => values.feature_gates.single_replica_rolling_update = gate,
        Some(None) => return Vec::new(),
        None => {}
    }
    crate::rules::check(&values)
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

/// Helm's `--set a=1,b=2` holds several assignments: splits them (a part
/// without `=` continues the previous value).
pub fn split_set(set: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<Model, Vec<Diagnostic>> {
        let source = parse_source("v.yaml".into(), text.into()).map_err(|err| match err {
            LoadError::Io(d) | LoadError::Invalid(d) => d,
        })?;
        Checker::new().check(&[source], "ns")
    }

    #[test]
    fn integers_too_wide_for_kubernetes_are_refused_at_their_key() {
        // Used to reach the model and panic (replicaCount) or fail there
        // with no position (the other 32-bit fields).
        for (text, key, line) in [
            ("replicaCount: 4294967296\n", "replicaCount", 1),
            (
                "revisionHistoryLimit: 3000000000\n",
                "revisionHistoryLimit",
                1,
            ),
            (
                "replicaCount: 1\nfeatureGates:\n  singleReplicaRollingUpdate: true\nstrategy:\n  type: RollingUpdate\n  rollingUpdate:\n    maxSurge: 3000000000\n",
                "strategy.rollingUpdate.maxSurge",
                7,
            ),
        ] {
            let Err(d) = check(text) else {
                panic!("accepted: {text}")
            };
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(d[0].key, key);
            assert_eq!(d[0].line, Some(line));
            assert_eq!(d[0].keyword.as_deref(), Some("maximum"));
            assert!(d[0].message.contains("2147483647"), "{}", d[0].message);
        }
    }

    #[test]
    fn integral_floats_are_integers_as_in_helm() {
        let model = check("replicaCount: 1.0\nrevisionHistoryLimit: 3.0\n");
        assert!(model.is_ok(), "{:?}", model.err());
    }

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
    fn a_wrong_optional_mapping_reports_what_is_wrong_inside_it() {
        let gate = "replicaCount: 1\nfeatureGates:\n  singleReplicaRollingUpdate: true\nstrategy:\n  type: RollingUpdate\n  rollingUpdate:\n";
        let d = check(&format!("{gate}    maxSurg: 1\n")).err().unwrap();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].key, "strategy.rollingUpdate.maxSurg");
        assert_eq!(d[0].help.as_deref(), Some("did you mean `maxSurge`?"));
        assert_eq!(d[0].line, Some(7));
        let d = check(&format!("{gate}    maxSurge: one\n")).err().unwrap();
        assert_eq!(d[0].key, "strategy.rollingUpdate.maxSurge");
        assert!(
            d[0].message.contains("percentage string"),
            "{}",
            d[0].message
        );
        // A list-or-string key does not get the percentage help.
        let d = check("crdPattern: {a: b}\n").err().unwrap();
        assert_eq!(
            d[0].message,
            "`crdPattern` must be a string or a list, got a mapping"
        );
    }

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
