//! Shape errors: the structural schema's verdicts (from `jsonschema`)
//! translated into diagnostics a person can act on, with a did-you-mean
//! for unknown keys and enum values, and, for an optional mapping that is
//! present but wrong, what is wrong inside it. Owns the walk that finds the
//! schema node governing a key.

use serde_json::Value;

use crate::diagnostics::Diagnostic;
use crate::read::Merged;
use crate::schema;
use helm_values::pointer::{escape_segment, to_key_path, unescape_segment};

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

pub(super) fn closest<'a>(
    word: &str,
    options: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
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
        let secret = merged.hides_value(&pointer);
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
                        let help = if crate::read::is_flag_source(&d.file) {
                            // A flag, not a file: say how flags type values.
                            format!(
                                "give {expected} on the command line: --set reads true, false, null and integers as such and anything else as text; --set-string always gives text, --set-json any JSON (--set-json '{key}=...')"
                            )
                        } else if yaml11 && expected.starts_with("a boolean") {
                            "write true or false without quotes: quoted, it is the text".to_string()
                        } else if expected.starts_with("a mapping") && instance.is_array() {
                            format!(
                                "write `{key}` as `key: value` lines indented under it (e.g. `example.com/team: payments`), not as `- item` lines"
                            )
                        } else if expected.starts_with("a list") && instance.is_object() {
                            format!("write `{key}` as a list: one `- item` line per entry under it")
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
                    Kind::Pattern { pattern }
                        if pattern == crate::names::SUBDOMAIN_OR_EMPTY_PATTERN =>
                    {
                        name_problem(&key, instance, secret)
                    }
                    Kind::MaxLength { .. } if name_key(&pointer) => {
                        name_problem(&key, instance, secret)
                    }
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

/// Keys whose value names a Kubernetes object (checked as a subdomain).
fn name_key(pointer: &str) -> bool {
    matches!(pointer, "/priorityClassName" | "/serviceAccount/name")
}

/// The message and help for a name the API server would refuse (the name
/// itself not shown when it is `hidden`).
fn name_problem(key: &str, instance: &Value, hidden: bool) -> (String, String) {
    let name = instance.as_str().unwrap_or_default();
    let why = crate::names::subdomain_problem(name).unwrap_or_default();
    let shown = if hidden {
        crate::redact::REDACTED.to_string()
    } else if name.chars().count() > crate::names::LABEL_MAX {
        let start: String = name.chars().take(20).collect();
        format!("\"{start}…\"")
    } else {
        instance.to_string()
    };
    (
        format!("`{key}` is {shown}, a name Kubernetes refuses: {why}"),
        if hidden {
            format!(
                "use lowercase letters, digits, '-' and '.' (at most {} characters), or leave it empty",
                crate::names::SUBDOMAIN_MAX
            )
        } else {
            format!(
                "use lowercase letters, digits, '-' and '.' (at most {} characters), e.g. `{}`, or leave it empty",
                crate::names::SUBDOMAIN_MAX,
                suggested_name(name)
            )
        },
    )
}

/// `name` made valid: lowercase, other characters as '-', trimmed.
fn suggested_name(name: &str) -> String {
    let lowered: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let parts: Vec<&str> = lowered
        .split('.')
        .map(|part| part.trim_matches('-'))
        .filter(|part| !part.is_empty())
        .collect();
    let joined: String = parts
        .join(".")
        .chars()
        .take(crate::names::SUBDOMAIN_MAX)
        .collect();
    if joined.is_empty() {
        "my-name".into()
    } else {
        joined.trim_end_matches(['-', '.']).to_string()
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

#[cfg(test)]
mod tests {
    use crate::check::check_text as check;

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
}
