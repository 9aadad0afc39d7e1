//! The `--set` family as Helm applies it: after the values files, every
//! `--set-json`, then `--set`, `--set-string`, `--set-file` and
//! `--set-literal` (Helm's order, whatever the order on the command line),
//! each applied
//! into the values the files set ([`helm_values::strvals`] is the language).
//!
//! Each expression becomes a source of its own holding only the nodes it
//! set, with their values after it applied (a list it indexed is taken
//! whole, since a merge replaces lists), so the merge over the chart
//! defaults gives Helm's values and a diagnostic names the flag and the
//! expression.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Source, merge_maps};
use crate::diagnostics::Diagnostic;
use crate::redact::{REDACTED, may_hold_secret};
use crate::yaml::{LocatedDocument, NodeSpan, Position};
use helm_values::pointer::unescape_segment;
use helm_values::strvals::{self, Budget, Refusal, Typing};

/// A flag of the `--set` family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetFlag {
    /// `--set-json key=JSON` or `--set-json '{"key": JSON}'`.
    Json,
    /// `--set key=value`: booleans, null and integers typed, else text.
    Set,
    /// `--set-string key=value`: always text.
    String,
    /// `--set-file key=path`: the file's content as text.
    File,
    /// `--set-literal key=text`: everything after the `=`, as it is.
    Literal,
}

impl SetFlag {
    /// The order Helm applies them in.
    pub const HELM_ORDER: [SetFlag; 5] = [
        SetFlag::Json,
        SetFlag::Set,
        SetFlag::String,
        SetFlag::File,
        SetFlag::Literal,
    ];

    /// The flag as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SetFlag::Json => "--set-json",
            SetFlag::Set => "--set",
            SetFlag::String => "--set-string",
            SetFlag::File => "--set-file",
            SetFlag::Literal => "--set-literal",
        }
    }

    fn example(self) -> &'static str {
        match self {
            SetFlag::Json => r#"--set-json 'tolerations=[{"key":"k","operator":"Exists"}]'"#,
            SetFlag::Set => r"--set replicaCount=1, --set nodeSelector.kubernetes\.io/os=linux",
            SetFlag::String => "--set-string podLabels.team=007",
            SetFlag::File => "--set-file azureClientCertificate=./client.pem",
            SetFlag::Literal => "--set-literal azureClientSecret='a,b=c'",
        }
    }
}

/// Whether a source name is a command-line flag (no lines and columns).
pub fn is_flag_source(name: &str) -> bool {
    name.starts_with("--")
}

/// A problem with one expression of `flag`. An expression that may hold a
/// secret ([`may_hold_secret`]) is shown only up to its first `=` (a JSON
/// object not at all) and with a reason that quotes none of it, in every
/// output format; `--set-file` values are paths, shown whole.
pub fn set_diagnostic(flag: SetFlag, expression: &str, reason: &Refusal) -> Diagnostic {
    let message = if flag != SetFlag::File && may_hold_secret(expression) {
        format!(
            "{} `{}`: {}",
            flag.name(),
            redacted_expression(expression),
            reason.plain
        )
    } else {
        format!("{} `{expression}`: {}", flag.name(), reason.quoting)
    };
    Diagnostic {
        file: flag.name().into(),
        keyword: Some("set".into()),
        message,
        help: Some(format!(
            "write KEY=VALUE pairs separated by `,`; escape `.`, `,`, `=` and `[` in keys and values with `\\`; e.g. {}",
            flag.example()
        )),
        ..Default::default()
    }
}

/// An expression as a message may show it when it may hold a secret: its
/// first key and `=<redacted>`; a JSON object, or text with no `=` (which
/// may be a value typed without its key), as `<redacted>` alone.
fn redacted_expression(expression: &str) -> String {
    match expression.split_once('=') {
        Some((key, _)) if !expression.trim_start().starts_with('{') => {
            format!("{key}={REDACTED}")
        }
        _ => REDACTED.to_string(),
    }
}

/// Applies one expression of `flag` into `base` (the values so far) and
/// returns it as a source. `read_file` reads `--set-file` paths; what the
/// expression creates and copies is charged to `budget`, one for the whole
/// family.
pub fn apply_set(
    flag: SetFlag,
    expression: &str,
    base: &mut Map<String, Value>,
    read_file: &mut dyn FnMut(&str) -> Result<Value, Refusal>,
    budget: &mut Budget,
) -> Result<Source, Box<Diagnostic>> {
    let fail = |reason: &Refusal| Box::new(set_diagnostic(flag, expression, reason));
    let set = if flag == SetFlag::Json && expression.trim_start().starts_with('{') {
        // A whole JSON object merges like a values file.
        let object: Map<String, Value> =
            serde_json::from_str(expression.trim()).map_err(|err| {
                fail(&Refusal::plain(format!(
                    "not a JSON object: {}",
                    strvals::json_problem(&err)
                )))
            })?;
        let object = match strvals::go_json_numbers(Value::Object(object)) {
            Value::Object(map) => map,
            _ => unreachable!("an object stays an object"),
        };
        let pointers = leaf_pointers(&object, "");
        *base = merge_maps(std::mem::take(base), object);
        Ok(pointers)
    } else {
        let typing = match flag {
            SetFlag::Json => Typing::Json,
            SetFlag::Set => Typing::Typed,
            SetFlag::String => Typing::Strings,
            SetFlag::File => Typing::File(read_file),
            SetFlag::Literal => Typing::Literal,
        };
        strvals::apply(expression, base, typing, budget)
    };
    let set = set.and_then(|set| source_of(flag, expression, &set, base, budget));
    set.map_err(|reason| {
        let mut diagnostic = set_diagnostic(flag, expression, &reason);
        if budget.is_spent() {
            diagnostic.help = Some(
                "set fewer or smaller list indexes (the --set flags after this one were not applied); a values file (-f) holds lists of any length".into(),
            );
        }
        Box::new(diagnostic)
    })
}

/// Pointers of the leaves of a map (maps merge deeply; anything else is
/// set whole).
fn leaf_pointers(map: &Map<String, Value>, pointer: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in map {
        let child = format!("{pointer}/{}", helm_values::pointer::escape_segment(key));
        match value {
            Value::Object(inner) if !inner.is_empty() => out.extend(leaf_pointers(inner, &child)),
            _ => out.push(child),
        }
    }
    out
}

/// The node at a JSON pointer of a map.
fn lookup<'v>(map: &'v Map<String, Value>, pointer: &str) -> Option<&'v Value> {
    let mut segments = pointer.split('/').skip(1).map(unescape_segment);
    let mut node = map.get(&segments.next()?)?;
    for segment in segments {
        node = match node {
            Value::Object(map) => map.get(&segment)?,
            // As RFC 6901 (and serde_json) read an index: no sign, no
            // leading zero.
            Value::Array(items) => {
                let canonical =
                    !segment.starts_with('+') && (segment == "0" || !segment.starts_with('0'));
                items.get(segment.parse::<usize>().ok().filter(|_| canonical)?)?
            }
            _ => return None,
        };
    }
    Some(node)
}

/// The source for one applied expression: the nodes it set, with their
/// values in `base` (copies, charged to `budget`), and a span for each
/// (and each ancestor) so a diagnostic finds the flag.
fn source_of(
    flag: SetFlag,
    expression: &str,
    set: &[String],
    base: &Map<String, Value>,
    budget: &mut Budget,
) -> Result<Source, Refusal> {
    let mut value = Value::Object(Map::new());
    let mut spans = BTreeMap::new();
    let span = NodeSpan {
        key: None,
        value: Position { line: 1, column: 1 },
        value_len: expression.chars().count(),
    };
    // A node set twice (`a[1]=x,a[2]=y`) is copied once.
    let mut seen = std::collections::BTreeSet::new();
    for pointer in set {
        if !seen.insert(pointer.as_str()) {
            continue;
        }
        // A later part of the expression may have replaced this node.
        let Some(node) = lookup(base, pointer) else {
            continue;
        };
        let mut target = &mut value;
        let segments: Vec<String> = pointer.split('/').skip(1).map(unescape_segment).collect();
        let mut prefix = String::new();
        for (i, segment) in segments.iter().enumerate() {
            prefix.push('/');
            prefix.push_str(&helm_values::pointer::escape_segment(segment));
            spans.insert(prefix.clone(), span);
            let map = match target {
                Value::Object(map) => map,
                // An ancestor was set whole: it holds this node already.
                _ => break,
            };
            if i + 1 == segments.len() {
                budget.charge_value(node)?;
                map.insert(segment.clone(), node.clone());
                break;
            }
            target = map
                .entry(segment.clone())
                .or_insert_with(|| Value::Object(Map::new()));
        }
    }
    Ok(Source {
        name: flag.name().into(),
        text: expression.to_string(),
        document: LocatedDocument {
            value,
            spans,
            ..Default::default()
        },
    })
}

/// One `--set` expression on its own, over no values files.
pub fn set_source(expression: &str) -> Result<Source, super::LoadError> {
    let mut base = Map::new();
    apply_set(
        SetFlag::Set,
        expression,
        &mut base,
        &mut |_| Err(Refusal::plain("no files here")),
        &mut Budget::default(),
    )
    .map_err(|d| super::LoadError::Invalid(vec![*d]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_source_holds_only_what_the_expression_set() {
        let mut base = json!({"image": {"pullSecrets": [{"name": "a"}, {"name": "b"}]}, "x": 1});
        let Value::Object(base) = &mut base else {
            unreachable!()
        };
        let source = apply_set(
            SetFlag::Set,
            "image.pullSecrets[0].name=acr,y.z=2",
            base,
            &mut |_| unreachable!(),
            &mut Budget::default(),
        )
        .unwrap();
        assert_eq!(
            source.document.value,
            json!({"image": {"pullSecrets": [{"name": "acr"}, {"name": "b"}]}, "y": {"z": 2}})
        );
        assert!(source.document.spans.contains_key("/image/pullSecrets"));
    }

    #[test]
    fn errors_name_the_flag_and_hide_secrets() {
        let d = set_source("a=1,azureClientSecret=p4ss,w0rd").unwrap_err();
        let super::super::LoadError::Invalid(d) = d else {
            unreachable!()
        };
        assert_eq!(
            d[0].message,
            "--set `a=<redacted>`: not KEY=VALUE pairs: a key has no value (a `,` in a value starts another pair; write it as `\\,`)"
        );
        let d = set_source("replicaCount=1,oops").unwrap_err();
        let super::super::LoadError::Invalid(d) = d else {
            unreachable!()
        };
        assert_eq!(
            d[0].message,
            "--set `replicaCount=1,oops`: key `oops` has no value"
        );
    }
}
