//! The sources merged over the chart defaults with Helm's merges
//! (`helm_values::merge`), and finding which source set a key, so a
//! diagnostic points at the line that set it.

use serde_json::{Map, Value};

use super::Source;
use crate::diagnostics::Diagnostic;
use crate::yaml::NodeSpan;
use helm_values::merge::{merge, merge_maps};
use helm_values::pointer::to_key_path;

/// The chart defaults as JSON.
pub fn default_values() -> Value {
    crate::values::defaults_json().clone()
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

    /// Whether a values file or flag (not the defaults) sets `pointer` to
    /// something other than null.
    pub fn sets(&self, pointer: &str) -> bool {
        self.sources.iter().any(|source| {
            source
                .document
                .value
                .pointer(pointer)
                .is_some_and(|value| !value.is_null())
        })
    }

    /// Whether a message must not quote the value at `pointer`: a secret by
    /// its key ([`crate::redact::is_secret_name`]), a file's content that
    /// `--set-file` set there (the value or an ancestor set whole), or a
    /// secret a YAML alias brought there (the secret follows its value, not
    /// only its key).
    pub fn hides_value(&self, pointer: &str) -> bool {
        crate::redact::is_secret_name(pointer)
            || self.locate(pointer).is_some_and(|(source, _, _)| {
                source.name == super::SetFlag::File.name()
                    && source.document.value.pointer(pointer).is_some()
            })
            || self.sources.iter().any(|source| {
                source.document.secret_aliases.iter().any(|alias| {
                    pointer == alias
                        || pointer.starts_with(&format!("{alias}/"))
                        || alias.starts_with(&format!("{pointer}/"))
                })
            })
    }

    /// A diagnostic for `pointer` at the source that set it (its key when
    /// `on_key` or the node is a mapping or list, else its value), or at
    /// `<defaults>`; the caller fills in what is wrong.
    pub(crate) fn diagnostic(&self, pointer: &str, on_key: bool) -> Diagnostic {
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
                    line: (!super::is_flag_source(&source.name)).then_some(position.line),
                    column: (!super::is_flag_source(&source.name)).then_some(position.column),
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

/// Merges the sources over the chart defaults as Helm does: the user's
/// values first ([`user_values`]), then those over the defaults in one
/// step, so a `null` in one file and a map in a later one still merges
/// with the defaults.
pub fn merge_sources(sources: &[Source]) -> Merged<'_> {
    let mut value = default_values();
    merge(&mut value, &user_values(sources));
    absent_as_empty(&mut value);
    Merged { value, sources }
}

/// Each key a `null` deleted whose absence the chart reads as empty
/// ([`crate::values::absence_is_empty`]) set to that empty value, so the
/// typed values do not fill its default back in. A deleted key the chart
/// needs stays absent: the check stage refuses it.
fn absent_as_empty(value: &mut Value) {
    for &key in crate::keys::ALL {
        if !crate::values::absence_is_empty(key) {
            continue;
        }
        let parent = match key.parent() {
            Some(parent) => value.pointer_mut(&parent.pointer()),
            None => Some(&mut *value),
        };
        if let Some(Value::Object(parent)) = parent
            && !parent.contains_key(key.leaf())
        {
            parent.insert(key.leaf().to_string(), crate::values::empty_of(key));
        }
    }
}

/// The values the user gave, merged as Helm merges them before the chart
/// defaults (files in order, then what the `--set` family set): what
/// Helm's own merge of the same flags returns.
pub fn user_values(sources: &[Source]) -> Value {
    let mut out = Map::new();
    for source in sources {
        if let Value::Object(map) = &source.document.value {
            out = merge_maps(out, map.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> Source {
        super::super::parse_source("v.yaml".into(), text.into()).unwrap()
    }

    #[test]
    fn a_null_then_a_map_still_merges_with_the_defaults() {
        // Helm merges the files first (the null is replaced by the map),
        // then the result over the chart defaults.
        let sources = [
            source("metrics:\n  port: 9000\n"),
            source("metrics: null\n"),
            source("metrics:\n  enable: true\n"),
        ];
        let merged = merge_sources(&sources);
        assert_eq!(merged.value["metrics"]["enable"], true);
        assert_eq!(
            merged.value["metrics"]["port"],
            default_values()["metrics"]["port"]
        );
    }
}
