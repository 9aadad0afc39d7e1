//! Block YAML from JSON-shaped data: the writer behind every rendered file.
//!
//! A dedicated writer instead of a general YAML serializer because render
//! writes several hundred KiB of YAML per run and this is the hot path. It
//! only ever sees JSON-shaped data (`serde_json::Value`, or a [`Doc`] built
//! around such values), so it needs three decisions: when a
//! string may stay plain, how to quote one that may not, and how to lay out
//! maps and lists. Quoting errs on the safe side: any string that a YAML
//! 1.1 or 1.2 reader could take for something else (a bool, null, number,
//! timestamp) or that holds an indicator is quoted.

use std::borrow::Cow;

use serde_json::Value;

/// A document built from parts: maps and lists assembled while an object
/// is evaluated, around JSON values that are mostly borrowed from the
/// object's description. Writing one needs no JSON tree of the whole object
/// first (for the 92 webhook configurations that tree was most of the
/// work: built, sorted, written, then freed).
#[derive(Debug, Clone, PartialEq)]
pub enum Doc<'a> {
    /// A JSON value; its maps' keys in the order they are written.
    Json(Cow<'a, Value>),
    /// A map; its entries in the order they are written.
    Map(Vec<(Cow<'a, str>, Doc<'a>)>),
    /// A list.
    List(Vec<Doc<'a>>),
}

impl Doc<'_> {
    /// The same document as one JSON value.
    pub fn into_value(self) -> Value {
        match self {
            Doc::Json(value) => value.into_owned(),
            Doc::Map(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(key, doc)| (key.into_owned(), doc.into_value()))
                    .collect(),
            ),
            Doc::List(items) => Value::Array(items.into_iter().map(Doc::into_value).collect()),
        }
    }
}

/// Writes `value` as a block YAML document (no `---`), ending in a newline.
pub fn to_yaml(value: &Value) -> String {
    doc_to_yaml_view(View::Json(value))
}

/// Writes `doc` as [`to_yaml`] writes the same document as one JSON value.
pub fn doc_to_yaml(doc: &Doc) -> String {
    doc_to_yaml_view(View::Doc(doc))
}

/// [`doc_to_yaml`], appended to `out`.
pub fn write_doc(doc: &Doc, out: &mut String) {
    write_view(View::Doc(doc), out);
}

fn doc_to_yaml_view(view: View) -> String {
    let mut out = String::with_capacity(1024);
    write_view(view, &mut out);
    out
}

fn write_view(view: View, out: &mut String) {
    match view.block() {
        Block::Map(map) => write_map(map, 0, out),
        Block::List(list) => write_list(list, 0, out),
        Block::Scalar(scalar) => {
            write_scalar(scalar, 0, out);
            out.push('\n');
        }
    }
}

/// A node of either kind of tree, so that one layout writes both.
#[derive(Clone, Copy)]
enum View<'b> {
    Json(&'b Value),
    Doc(&'b Doc<'b>),
}

/// A non-empty map, a non-empty list, or what is written on one line.
enum Block<'b> {
    Map(View<'b>),
    List(View<'b>),
    Scalar(&'b Value),
}

/// What an empty built map or list is written as.
static EMPTY_MAP: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(serde_json::Map::new()));
static EMPTY_LIST: Value = Value::Array(Vec::new());

impl<'b> View<'b> {
    fn block(self) -> Block<'b> {
        match self {
            View::Doc(Doc::Json(value)) => View::Json(value).block(),
            View::Json(Value::Object(map)) if !map.is_empty() => Block::Map(self),
            View::Json(Value::Array(items)) if !items.is_empty() => Block::List(self),
            View::Json(scalar) => Block::Scalar(scalar),
            View::Doc(Doc::Map(entries)) if entries.is_empty() => Block::Scalar(&EMPTY_MAP),
            View::Doc(Doc::Map(_)) => Block::Map(self),
            View::Doc(Doc::List(items)) if items.is_empty() => Block::Scalar(&EMPTY_LIST),
            View::Doc(Doc::List(_)) => Block::List(self),
        }
    }

    /// A map's entries, for a view [`Block::Map`] returned.
    fn entries(self, mut each: impl FnMut(usize, &'b str, View<'b>)) {
        match self {
            View::Json(Value::Object(map)) => {
                for (index, (key, value)) in map.iter().enumerate() {
                    each(index, key, View::Json(value));
                }
            }
            View::Doc(Doc::Map(entries)) => {
                for (index, (key, doc)) in entries.iter().enumerate() {
                    each(index, key, View::Doc(doc));
                }
            }
            View::Doc(Doc::Json(value)) => View::Json(value).entries(each),
            _ => {}
        }
    }

    /// A list's items, for a view [`Block::List`] returned.
    fn items(self, mut each: impl FnMut(usize, View<'b>)) {
        match self {
            View::Json(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    each(index, View::Json(item));
                }
            }
            View::Doc(Doc::List(items)) => {
                for (index, item) in items.iter().enumerate() {
                    each(index, View::Doc(item));
                }
            }
            View::Doc(Doc::Json(value)) => View::Json(value).items(each),
            _ => {}
        }
    }
}

fn indent(out: &mut String, width: usize) {
    const SPACES: &str = "                                                                ";
    let mut left = width;
    while left > 0 {
        let step = left.min(SPACES.len());
        out.push_str(&SPACES[..step]);
        left -= step;
    }
}

fn write_map(map: View, width: usize, out: &mut String) {
    map.entries(|index, key, value| {
        // The first key of a map inside a list item follows the "- ".
        if index > 0 || !out.ends_with("- ") {
            indent(out, width);
        }
        let start = out.len();
        write_key(key, out);
        // YAML caps implicit keys at 1024 characters; longer ones (never a
        // Kubernetes name, but values may hold anything) use `? key`.
        if out.len() - start > 1000 {
            out.insert_str(start, "? ");
            out.push('\n');
            indent(out, width);
        }
        out.push(':');
        write_child(value, width, out);
    });
}

fn write_list(list: View, width: usize, out: &mut String) {
    list.items(|index, item| {
        if index > 0 || !out.ends_with("- ") {
            indent(out, width);
        }
        out.push_str("- ");
        match item.block() {
            Block::Map(map) => write_map(map, width + 2, out),
            Block::List(inner) => write_list(inner, width + 2, out),
            Block::Scalar(scalar) => {
                write_scalar(scalar, width + 2, out);
                out.push('\n');
            }
        }
    });
}

/// The value after `key:`: nested blocks on the next lines, scalars inline.
fn write_child(value: View, width: usize, out: &mut String) {
    match value.block() {
        Block::Map(map) => {
            out.push('\n');
            write_map(map, width + 2, out);
        }
        // Lists under a key sit at the key's indentation, as kubectl writes them.
        Block::List(items) => {
            out.push('\n');
            write_list(items, width, out);
        }
        Block::Scalar(scalar) => {
            out.push(' ');
            write_scalar(scalar, width + 2, out);
            out.push('\n');
        }
    }
}

fn write_scalar(value: &Value, width: usize, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, width, out),
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
    }
}

/// A mapping key: plain or quoted on one line (never a block scalar).
fn write_key(key: &str, out: &mut String) {
    if is_plain_safe(key) {
        out.push_str(key);
    } else if key.chars().all(|c| c != '\t' && printable(c)) {
        out.push('\'');
        out.push_str(&key.replace('\'', "''"));
        out.push('\'');
    } else {
        write_double_quoted(key, out);
    }
}

/// Characters YAML allows in a document as they are (the `c-printable`
/// set, less tab and line breaks, which callers handle).
fn printable(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
        // BOM, and the line and paragraph separators YAML 1.1 reads as line breaks.
        && !matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}')
}

/// A double-quoted scalar with every non-printable character escaped
/// (JSON's escaping is not enough: it leaves DEL and C1 controls raw).
fn write_double_quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
}

/// Writes `s` as a scalar on one line (plain or quoted, as anywhere in a
/// document), or writes nothing and returns false when it is written as a
/// literal block, whose lines depend on where it stands.
pub fn write_inline_str(s: &str, out: &mut String) -> bool {
    // A plain scalar holds no line break: most are settled by one pass.
    if is_plain_safe(s) {
        out.push_str(s);
        return true;
    }
    if s.contains('\n') && literal_block_safe(s) {
        return false;
    }
    write_string(s, 0, out);
    true
}

fn write_string(s: &str, width: usize, out: &mut String) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else if s.contains('\n') && literal_block_safe(s) {
        write_literal(s, width, out);
    } else if s.chars().all(|c| c != '\t' && printable(c)) {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    } else {
        write_double_quoted(s, out);
    }
}

/// Multi-line text as a literal block (`|`, `|-`, `|+`), as humans write it.
fn write_literal(s: &str, width: usize, out: &mut String) {
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    out.push('|');
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    for line in s[..body.len() + trailing.min(1)]
        .trim_end_matches('\n')
        .split('\n')
    {
        out.push('\n');
        if !line.is_empty() {
            indent(out, width);
            out.push_str(line);
        }
    }
    // `|+` keeps every trailing newline: write the extra empty lines.
    for _ in 1..trailing {
        out.push('\n');
    }
}

/// A literal block cannot start with spaces (it would need an indentation
/// indicator) and cannot hold control characters or trailing spaces.
fn literal_block_safe(s: &str) -> bool {
    !s.starts_with([' ', '\n'])
        && s.chars().all(|c| c == '\n' || printable(c))
        && s.split('\n').all(|line| !line.ends_with([' ', '\t']))
}

/// Words a YAML 1.1 reader takes for a bool or null.
const RESERVED: [&str; 22] = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
    "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
];

/// An ASCII byte that cannot change how a plain scalar reads, wherever it
/// stands after its first character: not space, `:` or `#` (`: ` and ` #`
/// end a value), not a control character, DEL or a non-ASCII byte.
fn plain_anywhere(byte: u8) -> bool {
    matches!(byte, 0x21..=0x7e) && byte != b':' && byte != b'#'
}

fn is_plain_safe(s: &str) -> bool {
    let bytes = s.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    if matches!(bytes[bytes.len() - 1], b' ' | b':') || first == b' ' {
        return false;
    }
    if s.len() <= 5
        && (RESERVED.contains(&s) || matches!(s, "null" | "Null" | "NULL" | "~" | "<<" | "="))
    {
        return false;
    }
    // Indicators may not start a plain scalar; `-`, `?` and `:` may when a
    // non-space follows, but quoting them too keeps the rule simple except
    // for `-` (command-line flags are common and unambiguous).
    if matches!(
        first,
        b'?' | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    ) {
        return false;
    }
    // `-` alone or before a blank starts a list item; `---` a document.
    if first == b'-' && (s.len() == 1 || matches!(bytes[1], b' ' | b'\t') || s.starts_with("---")) {
        return false;
    }
    // Most scalars (names, labels, paths) hold only letters, digits and
    // punctuation that can never matter here: one cheap pass settles them.
    // A fold, not `all`: with no early exit the compiler checks many bytes
    // at a time (a quarter of the instructions for a webhook's name), and
    // nearly every scalar passes anyway.
    if bytes
        .iter()
        .fold(true, |all, &byte| all & plain_anywhere(byte))
    {
        return !looks_like_number_or_date(s);
    }
    // One pass: `: ` and ` #` (a value and a comment), tabs and control
    // characters (ASCII here; other characters are checked below).
    let mut ascii = true;
    let mut previous = 0;
    for &byte in bytes {
        match byte {
            b' ' if previous == b':' => return false,
            b'#' if previous == b' ' => return false,
            0..=0x1f | 0x7f => return false,
            0x80.. => ascii = false,
            _ => {}
        }
        previous = byte;
    }
    if !ascii && !s.chars().all(printable) {
        return false;
    }
    !looks_like_number_or_date(s)
}

/// Anything a reader might resolve as a number, infinity, NaN or timestamp.
fn looks_like_number_or_date(s: &str) -> bool {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let Some(first) = body.chars().next() else {
        return true;
    };
    if first == '.' {
        // .5, .inf, .NaN
        return true;
    }
    if !first.is_ascii_digit() {
        return false;
    }
    // Digits with number or date punctuation only: 1, 1.5, 1e3, 0x1F, 0o7,
    // 1_000, 1:20 (sexagesimal), 2024-01-01, 2024-01-01T00:00:00Z.
    body.chars()
        .all(|c| c.is_ascii_hexdigit() || "xXoObB_.:+-eETtZz ".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(value: &Value) {
        let text = to_yaml(value);
        // A YAML 1.2 reader (serde_yaml, a dev-dependency) reads the same
        // back; asogen's tests hold its own YAML 1.1 reader (as Helm and
        // kubectl read) to the same text.
        let back: Value = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
        assert_eq!(&back, value, "a YAML 1.2 reader reads back:\n{text}");
    }

    #[test]
    fn ambiguous_strings_are_quoted_and_read_back_as_strings() {
        for s in [
            "- item",
            "-\titem",
            "---x",
            "",
            " ",
            "true",
            "yes",
            "No",
            "off",
            "y",
            "null",
            "~",
            "1",
            "-1",
            "1.5",
            ".5",
            "1e3",
            "0x1F",
            "0o17",
            "1_000",
            "12:30",
            "2024-01-01",
            "2024-01-01T00:00:00Z",
            ".inf",
            "-.inf",
            ".NaN",
            "a: b",
            "a #b",
            "#x",
            "- x",
            "-",
            "--",
            "---",
            "...",
            "[x]",
            "{x}",
            "*a",
            "&a",
            "!t",
            "|",
            ">",
            "'q'",
            "\"q\"",
            "%p",
            "@a",
            "`b",
            "?x",
            ":x",
            "x:",
            "tab\there",
            "ctl\u{1}",
            "trail ",
            " lead",
            "<<",
            "=",
            "it's",
            "\u{feff}bom",
        ] {
            round_trip(&json!({ "k": s }));
            round_trip(&json!({ s: 1 }));
            round_trip(&json!([s]));
        }
    }

    #[test]
    fn plain_strings_stay_plain() {
        for s in [
            "Recreate",
            "--enable-leader-election",
            "--metrics-addr=:8443",
            "mcr.microsoft.com/k8s/azureserviceoperator:v2.21.1",
            "25%",
            "app.kubernetes.io/name",
            "/spec/strategy/rollingUpdate",
            "v2.21.1",
        ] {
            assert_eq!(to_yaml(&json!({ "k": s })), format!("k: {s}\n"));
        }
    }

    #[test]
    fn keys_beyond_the_implicit_key_limit_are_explicit() {
        let long = "k".repeat(2000);
        let control = format!("te{}", "(\u{10}".repeat(600));
        for key in [
            long.as_str(),
            control.as_str(),
            "a\nb",
            "a\n",
            "\n",
            "\u{7f}",
            "\u{85}x",
            "\u{ffff}",
            "\u{feff}",
            "a\tb",
        ] {
            round_trip(&json!({ key: 1 }));
            round_trip(&json!({ "outer": { key: {"a": [1]} } }));
            round_trip(&json!([{ key: "v", "b": 2 }]));
        }
    }

    #[test]
    fn multi_line_strings_are_literal_blocks() {
        for s in [
            "a\nb", "a\nb\n", "a\nb\n\n", "x\n\ny", "a\n b", " lead\nx", "t \nx",
        ] {
            round_trip(&json!({ "k": s }));
            round_trip(&json!({ "outer": [{ "k": s }] }));
        }
        assert_eq!(to_yaml(&json!({"k": "a\nb\n"})), "k: |\n  a\n  b\n");
    }

    #[test]
    fn layout_matches_kubectl_style() {
        let value = json!({
            "a": {"b": [1, {"c": "d", "e": [true, null]}, [2, 3]], "f": {}},
            "g": [],
            "h": 1.5,
        });
        assert_eq!(
            to_yaml(&value),
            "a:\n  b:\n  - 1\n  - c: d\n    e:\n    - true\n    - null\n  - - 2\n    - 3\n  f: {}\ng: []\nh: 1.5\n"
        );
        round_trip(&value);
    }

    #[test]
    fn a_document_is_written_as_the_same_json_value_is() {
        let constant = json!({"a": [1, {"b": "yes"}], "c": {}});
        let doc = Doc::Map(vec![
            ("k".into(), Doc::Json(Cow::Borrowed(&constant))),
            (
                "l".into(),
                Doc::List(vec![
                    Doc::Map(vec![("m".into(), Doc::Json(Cow::Owned(json!("- x"))))]),
                    Doc::List(vec![Doc::Json(Cow::Owned(json!(null)))]),
                    Doc::Map(Vec::new()),
                    Doc::List(Vec::new()),
                ]),
            ),
        ]);
        let text = doc_to_yaml(&doc);
        assert_eq!(text, to_yaml(&doc.clone().into_value()));
        let mut appended = String::from("x\n");
        write_doc(&doc, &mut appended);
        assert_eq!(appended, format!("x\n{text}"));
        round_trip(&doc.into_value());
    }
}
