//! The sprig and Go template functions that take only values (no scope),
//! each with the meaning Helm gives it: sprig 3's source (`dict.go`,
//! `list.go`, `regex.go`, `strings.go`, `numeric.go`), the `cast` package
//! sprig converts numbers with, and Go's `text/template` builtins.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Map, Value};

/// The functions an expression may call; each has the name, argument order
/// and meaning of its Go template, sprig or Helm namesake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `default FALLBACK VALUE`: VALUE unless it is empty, else FALLBACK.
    Default,
    /// `int64 VALUE`: a number, truncated to an integer.
    Int64,
    /// `printf FORMAT ARGS...`: the verbs `%s`, `%v`, `%d`, `%q` and `%%`,
    /// without flags or widths (anything else is an error).
    Printf,
    /// `join SEP LIST`: a list's items (or one string) joined by SEP.
    Join,
    /// `eq A B`.
    Eq,
    /// `ne A B`.
    Ne,
    /// `gt A B`: Go's ordering of two integers, floats or strings (two
    /// different kinds are an error).
    Gt,
    /// `lt A B`, as [`Func::Gt`].
    Lt,
    /// `ge A B`, as [`Func::Gt`].
    Ge,
    /// `le A B`, as [`Func::Gt`].
    Le,
    /// `and A B...`: the first empty operand, else the last.
    And,
    /// `or A B...`: the first non-empty operand, else the last.
    Or,
    /// `not A`.
    Not,
    /// `hasKey MAP KEY`.
    HasKey,
    /// `b64enc STRING`.
    B64enc,
    /// `toString VALUE`.
    ToString,
    /// `dig KEY... DEFAULT MAP`: a nested key, or DEFAULT when any is missing.
    Dig,
    /// `replace OLD NEW STRING`.
    Replace,
    /// `ternary IF_TRUE IF_FALSE CONDITION`.
    Ternary,
    /// `tpl TEXT $`: TEXT as a template over the chart's inputs; only
    /// `{{ .Values.KEY }}` substitutions are supported (see [`super::expr::tpl`]).
    Tpl,
    /// `get MAP KEY`: the key's value, `""` when the map has no such key.
    Get,
    /// `dict KEY VALUE...`: a new map (`dict` alone: an empty one).
    Dict,
    /// `omit MAP KEY...`: a new map without those keys.
    Omit,
    /// `list ITEM...`: a new list.
    List,
    /// `append LIST ITEM`: a new list with ITEM at the end.
    Append,
    /// `concat LIST...`: the lists' items in one new list.
    Concat,
    /// `has NEEDLE LIST`: whether an item equals NEEDLE, type included
    /// (Go's `reflect.DeepEqual`); false for a null LIST.
    Has,
    /// `index LIST N` or `index MAP KEY` (Go's builtin): out of range is an
    /// error, a missing map key null.
    Index,
    /// `kindIs KIND VALUE`: `kindOf VALUE` is KIND.
    KindIs,
    /// `kindOf VALUE`: Go's kind, `invalid` for null, `map`, `slice`,
    /// `string`, `bool`, `int64` or `float64`.
    KindOf,
    /// `len VALUE`: a string's bytes, a list's items, a map's keys.
    Len,
    /// `lower STRING`: Go's `strings.ToLower`.
    Lower,
    /// `trim STRING`: Go's `strings.TrimSpace` (Unicode white space).
    Trim,
    /// `splitList SEP STRING`: Go's `strings.Split`.
    SplitList,
    /// `rest LIST`: every item but the first.
    Rest,
    /// `last LIST`: the last item, null for an empty list.
    Last,
    /// `add N...`: the sum, each operand taken as `int64` takes it.
    Add,
    /// `contains SUBSTRING STRING`.
    Contains,
    /// `regexMatch REGEX STRING`: whether REGEX matches anywhere in STRING
    /// (false for a REGEX that does not compile).
    RegexMatch,
    /// `regexFindAll REGEX STRING N`: the matches, all of them for N < 0.
    RegexFindAll,
    /// `regexQuoteMeta STRING`: Go's `regexp.QuoteMeta`.
    RegexQuoteMeta,
    /// `regexReplaceAllLiteral REGEX STRING REPLACEMENT`.
    RegexReplaceAllLiteral,
}

impl Func {
    /// The name a template calls it by.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Func::Default => "default",
            Func::Int64 => "int64",
            Func::Printf => "printf",
            Func::Join => "join",
            Func::Eq => "eq",
            Func::Ne => "ne",
            Func::Gt => "gt",
            Func::Lt => "lt",
            Func::And => "and",
            Func::Or => "or",
            Func::Not => "not",
            Func::HasKey => "hasKey",
            Func::B64enc => "b64enc",
            Func::ToString => "toString",
            Func::Dig => "dig",
            Func::Replace => "replace",
            Func::Ternary => "ternary",
            Func::Tpl => "tpl",
            Func::Ge => "ge",
            Func::Le => "le",
            Func::Get => "get",
            Func::Dict => "dict",
            Func::Omit => "omit",
            Func::List => "list",
            Func::Append => "append",
            Func::Concat => "concat",
            Func::Has => "has",
            Func::Index => "index",
            Func::KindIs => "kindIs",
            Func::KindOf => "kindOf",
            Func::Len => "len",
            Func::Lower => "lower",
            Func::Trim => "trim",
            Func::SplitList => "splitList",
            Func::Rest => "rest",
            Func::Last => "last",
            Func::Add => "add",
            Func::Contains => "contains",
            Func::RegexMatch => "regexMatch",
            Func::RegexFindAll => "regexFindAll",
            Func::RegexQuoteMeta => "regexQuoteMeta",
            Func::RegexReplaceAllLiteral => "regexReplaceAllLiteral",
        }
    }
}

/// An expression that Helm would refuse to evaluate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

/// A value as Go's `%v`/sprig's `toString` prints it.
pub fn to_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
            (None, Some(f)) => f.to_string(),
            (None, None) => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A value as Go's `%v` prints the `interface{}` Helm holds for it (values
/// are JSON: numbers are float64, maps print with sorted keys).
pub fn go_print(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_float(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_print).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_print(v)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

/// Go's `%v` of a float64: the shortest digits, with an exponent (`1e+06`)
/// below 1e-4 and from 1e6 on.
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        format!("{f}")
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// A function applied to its evaluated arguments (borrowed where an
/// argument names a value rather than computing one: [`Cow`]).
pub(super) fn call(func: Func, args: &[Cow<'_, Value>]) -> Result<Value, EvalError> {
    let name = func_name(func);
    let take = |count: usize| -> Result<(), EvalError> {
        if args.len() == count {
            Ok(())
        } else {
            Err(EvalError(format!(
                "{name} takes {count} arguments, got {}",
                args.len()
            )))
        }
    };
    Ok(match func {
        Func::Get => {
            take(2)?;
            let map = as_map(name, &args[0])?;
            map.get(&text_arg(name, &args[1])?)
                .cloned()
                .unwrap_or_else(|| Value::from(""))
        }
        Func::Dict => {
            // Keys are strings (sprig's strval); an odd last key maps to "".
            let mut map = Map::new();
            for pair in args.chunks(2) {
                let value = pair
                    .get(1)
                    .map_or_else(|| Value::from(""), |v| v.clone().into_owned());
                map.insert(go_string(&pair[0]), value);
            }
            Value::Object(map)
        }
        Func::Omit => {
            let Some((map, keys)) = args.split_first() else {
                return Err(EvalError(format!(
                    "{name}: wrong number of args: want at least 1"
                )));
            };
            let keys: Vec<String> = keys.iter().map(|key| go_string(key)).collect();
            let mut kept = as_map(name, map)?.into_owned();
            kept.retain(|key, _| !keys.contains(key));
            Value::Object(kept)
        }
        Func::List => Value::Array(args.iter().map(|v| v.clone().into_owned()).collect()),
        Func::Append => {
            take(2)?;
            let mut items = as_list(name, &args[0])?.to_vec();
            items.push(args[1].clone().into_owned());
            Value::Array(items)
        }
        Func::Concat => {
            let mut items = Vec::new();
            for list in args {
                items.extend(as_list(name, list)?.iter().cloned());
            }
            Value::Array(items)
        }
        Func::Has => {
            take(2)?;
            match &*args[1] {
                Value::Null => Value::Bool(false),
                list => Value::Bool(as_list(name, list)?.iter().any(|item| same(item, &args[0]))),
            }
        }
        Func::Index => {
            take(2)?;
            index(&args[0], &args[1])?
        }
        Func::KindIs => {
            take(2)?;
            Value::Bool(text_arg(name, &args[0])? == kind_of(&args[1]))
        }
        Func::KindOf => {
            take(1)?;
            Value::from(kind_of(&args[0]))
        }
        Func::Len => {
            take(1)?;
            Value::from(match &*args[0] {
                Value::String(text) => text.len(),
                Value::Array(items) => items.len(),
                Value::Object(map) => map.len(),
                other => {
                    return Err(EvalError(format!("len of type {}", go_type(other))));
                }
            })
        }
        Func::Lower => {
            take(1)?;
            Value::from(go_lower(&text_arg(name, &args[0])?))
        }
        Func::Trim => {
            take(1)?;
            // Rust's white space is Unicode's White_Space, as Go's IsSpace.
            Value::from(text_arg(name, &args[0])?.trim())
        }
        Func::SplitList => {
            take(2)?;
            let separator = text_arg(name, &args[0])?;
            if separator.is_empty() {
                return Err(EvalError(
                    "splitList with an empty separator is not modelled".into(),
                ));
            }
            let text = text_arg(name, &args[1])?;
            Value::Array(text.split(separator.as_str()).map(Value::from).collect())
        }
        Func::Rest => {
            take(1)?;
            let items = as_list(name, &args[0])?;
            if items.is_empty() {
                Value::Null
            } else {
                Value::Array(items[1..].to_vec())
            }
        }
        Func::Last => {
            take(1)?;
            as_list(name, &args[0])?
                .last()
                .cloned()
                .unwrap_or(Value::Null)
        }
        Func::Add => Value::from(
            args.iter()
                .map(|v| to_int64(v))
                .fold(0i64, i64::wrapping_add),
        ),
        Func::Contains => {
            take(2)?;
            let (needle, text) = (text_arg(name, &args[0])?, text_arg(name, &args[1])?);
            Value::Bool(text.contains(needle.as_str()))
        }
        Func::RegexMatch => {
            take(2)?;
            let text = text_arg(name, &args[1])?;
            // sprig's regexMatch ignores a pattern that does not compile.
            match with_regex(&text_arg(name, &args[0])?, |re| re.is_match(&text)) {
                Ok(matched) => Value::Bool(matched),
                Err(RegexError::Invalid(_)) => Value::Bool(false),
                Err(RegexError::NotModelled(err)) => return Err(EvalError(err)),
            }
        }
        Func::RegexFindAll => {
            take(3)?;
            let text = text_arg(name, &args[1])?;
            let limit = to_int64(&args[2]);
            let found = with_regex(&text_arg(name, &args[0])?, |re| {
                let matches = re.find_iter(&text).map(|m| Value::from(m.as_str()));
                match usize::try_from(limit) {
                    Ok(limit) => matches.take(limit).collect::<Vec<_>>(),
                    Err(_) => matches.collect(),
                }
            })?;
            // Go's FindAllString returns nil for no match.
            if found.is_empty() {
                Value::Null
            } else {
                Value::Array(found)
            }
        }
        Func::RegexQuoteMeta => {
            take(1)?;
            Value::from(quote_meta(&text_arg(name, &args[0])?))
        }
        Func::RegexReplaceAllLiteral => {
            take(3)?;
            let text = text_arg(name, &args[1])?;
            let replacement = text_arg(name, &args[2])?;
            Value::from(with_regex(&text_arg(name, &args[0])?, |re| {
                re.replace_all(&text, regex::NoExpand(&replacement))
                    .into_owned()
            })?)
        }
        other => {
            return Err(EvalError(format!(
                "{} needs the chart's inputs",
                func_name(other)
            )));
        }
    })
}

fn func_name(func: Func) -> &'static str {
    func.name()
}

/// Go's name for the type Helm holds for a value, as a failed interface
/// conversion names it (`nil` for null).
pub fn go_type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "nil",
        other => go_type(other),
    }
}

/// Go's name for the type Helm holds for a value.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// sprig's `kindOf`: the `reflect.Kind` of the value.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "invalid",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "slice",
        Value::Object(_) => "map",
    }
}

/// A string argument: Go refuses to call a function with another type.
fn text_arg(name: &str, value: &Value) -> Result<String, EvalError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        other => Err(EvalError(format!(
            "{name}: wrong type for value; expected string; got {}",
            go_type(other)
        ))),
    }
}

/// A map argument; null stands for Go's nil map.
fn as_map<'v>(
    name: &str,
    value: &'v Value,
) -> Result<std::borrow::Cow<'v, Map<String, Value>>, EvalError> {
    match value {
        Value::Object(map) => Ok(std::borrow::Cow::Borrowed(map)),
        Value::Null => Ok(std::borrow::Cow::Owned(Map::new())),
        other => Err(EvalError(format!(
            "{name}: wrong type for value; expected map[string]interface {{}}; got {}",
            go_type(other)
        ))),
    }
}

/// A list argument (sprig's lists accept any slice; anything else panics).
fn as_list<'v>(name: &str, value: &'v Value) -> Result<&'v [Value], EvalError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(EvalError(format!(
            "{name}: cannot take type {} as a list",
            go_type(other)
        ))),
    }
}

/// `reflect.DeepEqual` over the values Helm holds: the type counts, so
/// the int64 1 and the float64 1 differ.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.is_f64() == y.is_f64() && x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Go's `index`: a list by an integer, a map by a key.
fn index(collection: &Value, at: &Value) -> Result<Value, EvalError> {
    match (collection, at) {
        (Value::Array(items), Value::Number(n)) if !n.is_f64() => {
            let i = n.as_i64().unwrap_or(-1);
            usize::try_from(i)
                .ok()
                .and_then(|i| items.get(i))
                .cloned()
                .ok_or_else(|| EvalError(format!("index out of range: {i}")))
        }
        (Value::Object(map), Value::String(key)) => {
            Ok(map.get(key).cloned().unwrap_or(Value::Null))
        }
        (Value::Null, _) => Err(EvalError("index of untyped nil".into())),
        (other, at) => Err(EvalError(format!(
            "can't index item of type {} with {}",
            go_type(other),
            go_type(at)
        ))),
    }
}

/// sprig's `toInt64` (the `cast` package): numbers truncated, strings
/// parsed as Go's `strconv.ParseInt(s, 0, 64)` after `.0`-only decimals
/// are dropped, true 1; anything else (and what does not parse) 0.
pub fn to_int64(value: &Value) -> i64 {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(i64::MAX),
        Value::String(text) => {
            go_semantics::strconv::parse_int(trim_zero_decimal(text)).unwrap_or(0)
        }
        Value::Bool(true) => 1,
        _ => 0,
    }
}

/// `cast`'s trimZeroDecimal: `12.00` is `12`, `12.01` stays.
fn trim_zero_decimal(text: &str) -> &str {
    let mut found_zero = false;
    for (i, byte) in text.bytes().enumerate().rev() {
        match byte {
            b'.' if found_zero => return &text[..i],
            b'.' => return text,
            b'0' => found_zero = true,
            _ => return text,
        }
    }
    text
}

/// sprig's `toString` (`strval`): a string as it is, anything else as
/// Go's `%v` prints it (null `<nil>`, floats `1e+06`).
pub fn go_string(value: &Value) -> String {
    match value {
        Value::Number(n) if !n.is_f64() => to_text(value),
        other => go_print(other),
    }
}

/// Go's `<`, `==` and `>` on two values of one basic kind (`lt`, `le`,
/// `gt`, `ge`): integers, floats or strings; two kinds are an error.
pub fn go_compare(a: &Value, b: &Value) -> Result<Ordering, EvalError> {
    let incompatible = || EvalError("incompatible types for comparison".into());
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() == y.is_f64() => {
            if x.is_f64() {
                x.as_f64().partial_cmp(&y.as_f64()).ok_or_else(incompatible)
            } else {
                let big = |n: &serde_json::Number| {
                    n.as_i64().map(i128::from).or(n.as_u64().map(i128::from))
                };
                Ok(big(x).cmp(&big(y)))
            }
        }
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Null, _) | (_, Value::Null) => Err(EvalError("invalid type for comparison".into())),
        _ => Err(incompatible()),
    }
}

/// Go's `strings.ToLower`: rune by rune (Rust lowers U+0130 to two
/// characters, Go to `i`).
fn go_lower(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{130}' => 'i',
            c => c.to_lowercase().next().unwrap_or(c),
        })
        .collect()
}

/// Go's `regexp.QuoteMeta`.
pub fn quote_meta(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if r"\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Go's `%q` of a string (`strconv.Quote`): printable characters as they
/// are, the rest escaped. Printable is Go's `unicode.IsPrint`; here, a
/// character that is not a control, not white space other than the
/// space, and not one of the invisible format characters.
pub fn go_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn printable(c: char) -> bool {
    c == ' '
        || !(c.is_control()
            || c.is_whitespace()
            || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
            || ('\u{e000}'..='\u{f8ff}').contains(&c))
}

thread_local! {
    /// Compiled patterns: the guard matches the same few many times.
    static REGEXES: std::cell::RefCell<HashMap<String, Result<regex::Regex, String>>> =
        std::cell::RefCell::new(HashMap::new());
}

/// Why a pattern is not run.
enum RegexError {
    /// Go refuses it too.
    Invalid(String),
    /// Go reads it otherwise than Rust.
    NotModelled(String),
}

impl From<RegexError> for EvalError {
    fn from(err: RegexError) -> EvalError {
        match err {
            RegexError::Invalid(text) | RegexError::NotModelled(text) => EvalError(text),
        }
    }
}

/// Runs `f` with `pattern` compiled as Go's RE2 reads it. Perl classes
/// (`\d`, `\w`, `\s`, `\b`) are ASCII in Go and Unicode in Rust: a pattern
/// using one is refused rather than read otherwise.
fn with_regex<T>(pattern: &str, f: impl FnOnce(&regex::Regex) -> T) -> Result<T, RegexError> {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(next) = chars.next()
            && "dDwWsSbB".contains(next)
        {
            return Err(RegexError::NotModelled(format!(
                "regexp {pattern:?}: \\{next} means otherwise in Go than here"
            )));
        }
    }
    REGEXES.with(|cache| {
        let mut cache = cache.borrow_mut();
        let compiled = cache.entry(pattern.to_string()).or_insert_with(|| {
            regex::Regex::new(pattern).map_err(|err| format!("regexp {pattern:?}: {err}"))
        });
        match compiled {
            Ok(re) => Ok(f(re)),
            Err(err) => Err(RegexError::Invalid(err.clone())),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(func: Func, args: Value) -> Result<Value, EvalError> {
        let args: Vec<Cow<Value>> = args.as_array().unwrap().iter().map(Cow::Borrowed).collect();
        call(func, &args)
    }

    fn ok(func: Func, args: Value) -> Value {
        run(func, args).unwrap()
    }

    #[test]
    fn maps_and_lists_as_sprig_has_them() {
        // get: a missing key is "", a nil map reads as empty, a string is
        // not a map.
        assert_eq!(ok(Func::Get, json!([{"a": null}, "a"])), Value::Null);
        assert_eq!(ok(Func::Get, json!([{}, "a"])), "");
        assert_eq!(ok(Func::Get, json!([null, "a"])), "");
        assert!(run(Func::Get, json!(["text", "a"])).is_err());
        assert_eq!(ok(Func::Dict, json!([])), json!({}));
        assert_eq!(
            ok(Func::Dict, json!(["a", 1, "b"])),
            json!({"a": 1, "b": ""})
        );
        assert_eq!(ok(Func::List, json!([1, "a"])), json!([1, "a"]));
        assert_eq!(ok(Func::Append, json!([["a"], "b"])), json!(["a", "b"]));
        assert!(run(Func::Append, json!([null, "b"])).is_err());
        assert_eq!(
            ok(Func::Concat, json!([["a"], [], ["b", "c"]])),
            json!(["a", "b", "c"])
        );
        assert!(run(Func::Concat, json!([["a"], "b"])).is_err());
        // has: DeepEqual, so the type counts; a nil list holds nothing.
        assert_eq!(ok(Func::Has, json!(["0", ["0", "0%"]])), true);
        assert_eq!(ok(Func::Has, json!([0, ["0", "0%"]])), false);
        assert_eq!(ok(Func::Has, json!([1, [1.0]])), false);
        assert_eq!(ok(Func::Has, json!(["a", null])), false);
        assert!(run(Func::Has, json!(["a", "abc"])).is_err());
        assert_eq!(ok(Func::Index, json!([["a", "b"], 1])), "b");
        assert!(run(Func::Index, json!([["a"], 1])).is_err());
        assert!(run(Func::Index, json!([null, 0])).is_err());
        assert_eq!(ok(Func::Index, json!([{"k": 1}, "x"])), Value::Null);
        assert_eq!(ok(Func::Rest, json!([["a", "b", "c"]])), json!(["b", "c"]));
        assert_eq!(ok(Func::Rest, json!([[]])), Value::Null);
        assert_eq!(ok(Func::Last, json!([["a", "b"]])), "b");
        assert_eq!(ok(Func::Last, json!([[]])), Value::Null);
        assert_eq!(ok(Func::Len, json!(["é"])), 2);
        assert_eq!(ok(Func::Len, json!([{"a": 1}])), 1);
        assert!(run(Func::Len, json!([null])).is_err());
    }

    #[test]
    fn kinds_are_go_kinds() {
        for (value, kind) in [
            (json!(null), "invalid"),
            (json!(1), "int64"),
            (json!(1.0), "float64"),
            (json!("1"), "string"),
            (json!([]), "slice"),
            (json!({}), "map"),
            (json!(true), "bool"),
        ] {
            assert_eq!(ok(Func::KindOf, json!([value])), kind);
            assert_eq!(ok(Func::KindIs, json!([kind, value])), true);
        }
    }

    #[test]
    fn strings_and_numbers_convert_as_helm_converts_them() {
        assert_eq!(ok(Func::Lower, json!(["AbİZ"])), "abiz");
        assert_eq!(ok(Func::Trim, json!(["\u{a0} a b\n\u{3000}"])), "a b");
        assert_eq!(
            ok(Func::SplitList, json!([";", "a;;b"])),
            json!(["a", "", "b"])
        );
        assert_eq!(ok(Func::SplitList, json!([";", ""])), json!([""]));
        assert_eq!(ok(Func::Contains, json!(["{{", "a{{b"])), true);
        // cast's ToInt64: base prefixes, `_`, `.0` decimals; the rest 0.
        for (text, n) in [
            ("3", 3),
            ("-3", -3),
            ("+3", 3),
            ("0x10", 16),
            ("010", 8),
            ("1_000", 1000),
            ("3.00", 3),
            ("3.5", 0),
            (" 3", 0),
            ("", 0),
            ("_1", 0),
            ("9223372036854775808", 0),
        ] {
            assert_eq!(to_int64(&json!(text)), n, "{text:?}");
        }
        assert_eq!(to_int64(&json!(2.9)), 2);
        assert_eq!(to_int64(&json!(-2.9)), -2);
        assert_eq!(to_int64(&json!(true)), 1);
        assert_eq!(to_int64(&json!(null)), 0);
        assert_eq!(ok(Func::Add, json!([1, "2", 3.5, null])), 6);
        // toString: Go's %v, so nil is <nil> and a float64 1000000 1e+06.
        assert_eq!(go_string(&json!(null)), "<nil>");
        assert_eq!(go_string(&json!(1000000.0)), "1e+06");
        assert_eq!(go_string(&json!(1000000)), "1000000");
        assert_eq!(go_string(&json!(0.5)), "0.5");
        assert_eq!(go_string(&json!(true)), "true");
        assert_eq!(go_string(&json!({"b": 1.0, "a": "x"})), "map[a:x b:1]");
        // Go's comparisons: one kind on both sides.
        assert_eq!(go_compare(&json!(2), &json!(10)).unwrap(), Ordering::Less);
        assert_eq!(
            go_compare(&json!("b"), &json!("a")).unwrap(),
            Ordering::Greater
        );
        assert!(go_compare(&json!(2.0), &json!(2)).is_err());
        assert!(go_compare(&json!(null), &json!(2)).is_err());
        assert!(go_compare(&json!("2"), &json!(2)).is_err());
    }

    #[test]
    fn regular_expressions_are_re2s() {
        assert_eq!(ok(Func::RegexMatch, json!(["^a.c$", "abc"])), true);
        assert_eq!(ok(Func::RegexMatch, json!(["b", "abc"])), true);
        // A pattern that does not compile matches nothing (sprig ignores
        // the error); the other regex functions fail on it.
        assert_eq!(ok(Func::RegexMatch, json!(["(", "("])), false);
        assert!(run(Func::RegexFindAll, json!(["(", "(", -1])).is_err());
        assert!(run(Func::RegexMatch, json!([r"\d", "1"])).is_err());
        assert_eq!(ok(Func::RegexMatch, json!([r"\\d", "\\d"])), true);
        assert_eq!(
            ok(Func::RegexFindAll, json!(["[a-z]+", "ab 1 cd ef", -1])),
            json!(["ab", "cd", "ef"])
        );
        assert_eq!(
            ok(Func::RegexFindAll, json!(["[a-z]+", "ab 1 cd ef", 2])),
            json!(["ab", "cd"])
        );
        assert_eq!(ok(Func::RegexFindAll, json!(["x", "ab", -1])), Value::Null);
        assert_eq!(ok(Func::RegexQuoteMeta, json!(["a.b*c\\-"])), r"a\.b\*c\\-");
        assert_eq!(
            ok(Func::RegexReplaceAllLiteral, json!(["b+", "abbcb", "$0"])),
            "a$0c$0"
        );
    }

    #[test]
    fn quoting_is_gos() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\n\t\u{1}\u{7f}"), r#""\n\t\x01\x7f""#);
        assert_eq!(go_quote("é ü"), "\"é ü\"");
        assert_eq!(go_quote("\u{a0}\u{feff}\u{85}"), r#""\u00a0\ufeff\u0085""#);
        assert_eq!(go_quote("\u{1F600}"), "\"\u{1F600}\"");
    }
}
