//! Helm's `--set`: splitting `a=1,b=2` into assignments and turning each
//! into a values source, its value typed as YAML would type it.

use serde_json::{Map, Value};

use super::{LoadError, Source};
use crate::diagnostics::Diagnostic;
use crate::pointer::escape_segment;
use crate::yaml::{self, LocatedDocument, NodeSpan};

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
