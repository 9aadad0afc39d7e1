//! The one place that reads and writes YAML, and the one YAML parser.
//!
//! One YAML reader for every text a program reads, built on
//! `saphyr-parser` events: values files ([`Reader::parse_document`], where every
//! key and value keeps its line and column), one-document files such as a
//! chart's values.yaml, `Chart.yaml` or a chart repository's index.yaml
//! ([`Reader::parse_value`]), and streams of Kubernetes objects such as install
//! manifests and the release manifests `catalog import` reads
//! ([`Reader::parse_stream`], [`Reader::for_each_document`]; [`Reader::locate`] finds a node's
//! line and column again when a check refuses it). So every reader has the
//! same bounds, checked as the parser's events arrive: at most
//! [`MAX_YAML_BYTES`] of text, nesting at most [`MAX_DEPTH`] levels deep,
//! block or flow, and aliases that cannot expand a document past
//! [`MAX_NODES`] nodes (values) or past one node per byte of text
//! (streams). Time and memory stay linear in the text. The program says
//! who reads and which keys are secret ([`Reader`]).
//!
//! Why one parser: `serde_yaml` (libyaml's scanner) read streams here
//! before, and its time grows with the square of the flow nesting depth
//! (200 KB of `[` took half a minute) while a pre-scan of the text could
//! only guess where YAML starts a flow collection (block scalars, quotes
//! and plain scalars hide brackets, or look like they do). Here the bound
//! is the parser's own view of the text, and every document is read as
//! Helm and kubectl read YAML (1.1, see [`crate::yaml11`]), duplicate keys,
//! merge keys and unknown tags refused.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::{Map, Number, Value};

use crate::pointer::{escape_segment, to_key_path};

/// Who reads: the program's name, for messages, and which key paths name
/// secrets, whose values a message never quotes.
#[derive(Debug, Clone, Copy)]
pub struct Reader {
    /// The program, as messages name it ("asogen reads at most ...").
    pub program: &'static str,
    /// Whether a JSON pointer or key path names a secret.
    pub is_secret: fn(&str) -> bool,
}

/// Deepest nesting of lists and maps, block or flow, that any reader
/// accepts. Real values files stay under ten levels and Kubernetes objects
/// (CRD schemas included) well under a hundred; `serde_yaml`, which read
/// manifests before, stopped at 128 too.
pub const MAX_DEPTH: usize = 128;

/// Most nodes a values document may expand to, aliases included. Bounds
/// memory and time for "billion laughs" documents; every node of a values
/// document keeps its span, so the bound is low.
pub const MAX_NODES: usize = 200_000;

/// Most bytes the aliases of a stream may add to it: as much as the
/// largest values file asogen reads (4 MiB). Node counts alone let a few
/// thousand aliases of one long string copy gigabytes; the text an alias
/// stands for is counted here, so aliases never make a document more than
/// this much larger than its text.
pub const MAX_ALIAS_BYTES: usize = 4 * 1024 * 1024;

/// The most text any reader parses (a release manifest with every CRD is
/// about 100 MiB); each reader caps what it reads lower.
pub const MAX_YAML_BYTES: usize = 512 * 1024 * 1024;

/// A 1-based line and column in a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// Where a node of the document sits: its key (for mapping entries) and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSpan {
    /// The key of the mapping entry that holds the node, if any.
    pub key: Option<Position>,
    /// The start of the value.
    pub value: Position,
    /// Length of the value in characters when it is a scalar on one line.
    pub value_len: usize,
}

impl NodeSpan {
    /// Where a diagnostic about this node should point: the key when there
    /// is one (that is where the editor puts the squiggle for key problems),
    /// else the value.
    pub fn key_or_value(&self) -> Position {
        self.key.unwrap_or(self.value)
    }
}

/// A parsed YAML document: its JSON value and the span of every node,
/// indexed by JSON pointer (`""` is the root, `/strategy/type` a nested key).
#[derive(Debug, Clone, Default)]
pub struct LocatedDocument {
    /// The document as JSON data.
    pub value: Value,
    /// Span of every node, keyed by JSON pointer.
    pub spans: BTreeMap<String, NodeSpan>,
    /// Values that YAML 1.1 (Helm) and YAML 1.2 (editors) read differently;
    /// typed as Helm types them.
    pub notes: Vec<YamlNote>,
    /// The pointers an alias of a secret set: the anchor sat at a key that
    /// holds a secret ([`Reader::is_secret`]), so the value is one wherever
    /// it lands (a message must not quote it there either).
    pub secret_aliases: BTreeSet<String>,
}

/// A value Helm (YAML 1.1) reads otherwise than YAML 1.2 tools do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlNote {
    /// Where the value is.
    pub position: Position,
    /// The JSON pointer of the node (for a key: the key's entry).
    pub pointer: String,
    /// Length of the value on its line.
    pub len: usize,
    /// What each reads.
    pub message: String,
    /// How to write it so both read the same.
    pub help: String,
}

/// A YAML syntax or structure error with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// What went wrong.
    pub message: String,
    /// Where it went wrong.
    pub position: Position,
    /// The dotted key path of the node being read when it went wrong
    /// (empty for the document itself).
    pub key: String,
}

impl YamlError {
    fn new(message: impl Into<String>, position: Position) -> YamlError {
        YamlError {
            message: message.into(),
            position,
            key: String::new(),
        }
    }

    /// Names the node being read, unless a deeper node was named already.
    fn within(mut self, pointer: &str) -> YamlError {
        if self.key.is_empty() {
            self.key = to_key_path(pointer);
        }
        self
    }
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (line {}, column {})",
            self.message, self.position.line, self.position.column
        )
    }
}

impl std::error::Error for YamlError {}

fn position(span: &Span) -> Position {
    Position {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

/// The message for nesting beyond [`MAX_DEPTH`], from the reader or from
/// the parser's own limit on flow collections (whichever comes first).
fn too_deep() -> String {
    format!("nesting deeper than {MAX_DEPTH} levels; refused")
}

/// What a reader keeps of what it reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Values files: every node's span and the YAML 1.1 notes.
    Spans,
    /// Other YAML: the values alone.
    Values,
}

struct Builder<'a> {
    reader: Reader,
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    keep: Keep,
    spans: BTreeMap<String, NodeSpan>,
    anchors: BTreeMap<usize, Value>,
    /// Anchors set at a key that holds a secret.
    secret_anchors: BTreeSet<usize>,
    /// Where aliases of those landed.
    secret_aliases: BTreeSet<String>,
    nodes: usize,
    max_nodes: usize,
    /// Bytes the aliases read so far stand for (see [`MAX_ALIAS_BYTES`]).
    alias_bytes: usize,
    notes: Vec<YamlNote>,
    /// Every value scalar: its character range, whether it is quoted, its
    /// pointer; kept only for a values file that holds a line separator.
    scalars: Option<Vec<(usize, usize, bool, String)>>,
}

impl<'a> Builder<'a> {
    fn new(
        reader: Reader,
        source: &'a str,
        keep: Keep,
        max_nodes: usize,
    ) -> Result<Builder<'a>, YamlError> {
        if source.len() > MAX_YAML_BYTES {
            return Err(YamlError::new(
                format!(
                    "the text is {} bytes; {} reads at most {} MiB of YAML",
                    source.len(),
                    reader.program,
                    MAX_YAML_BYTES / (1024 * 1024)
                ),
                Position { line: 1, column: 1 },
            ));
        }
        // Values must mean to the reader what they mean to Helm; other YAML
        // (release manifests with long descriptions) is read as it is.
        let separators = keep == Keep::Spans && source.contains(['\u{85}', '\u{2028}', '\u{2029}']);
        Ok(Builder {
            reader,
            parser: Parser::new_from_str(source),
            keep,
            spans: BTreeMap::new(),
            anchors: BTreeMap::new(),
            secret_anchors: BTreeSet::new(),
            secret_aliases: BTreeSet::new(),
            nodes: 0,
            max_nodes,
            alias_bytes: 0,
            notes: Vec::new(),
            scalars: separators.then(Vec::new),
        })
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), YamlError> {
        match self.parser.next_event() {
            Some(Ok(event)) => Ok(event),
            Some(Err(err)) => {
                let at = Position {
                    line: err.marker().line(),
                    column: err.marker().col() + 1,
                };
                // The scanner's own bound on flow nesting (255 levels) can
                // come before the reader sees level 129 of it.
                if err.info() == "recursion limit exceeded" {
                    return Err(YamlError::new(too_deep(), at));
                }
                Err(YamlError::new(err.info(), at))
            }
            None => Err(YamlError::new(
                "unexpected end of input",
                Position { line: 1, column: 1 },
            )),
        }
    }

    /// Keeps `value` for the aliases of `anchor`, noting whether it sits
    /// at a key that holds a secret (`pointer`).
    fn anchor(&mut self, anchor: usize, value: &Value, pointer: &str) {
        self.anchors.insert(anchor, value.clone());
        if (self.reader.is_secret)(pointer) {
            self.secret_anchors.insert(anchor);
        }
    }

    fn count(&mut self, n: usize, at: Position) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.max_nodes {
            return Err(YamlError::new(
                format!(
                    "the YAML expands to more than {} nodes (an alias bomb?); refused",
                    self.max_nodes
                ),
                at,
            ));
        }
        Ok(())
    }

    /// The pointer of a child node, when spans are kept (else nothing is
    /// built: a stream of many megabytes would spend most of its time on
    /// pointers nobody reads).
    fn child(&self, pointer: &str, segment: impl fmt::Display) -> String {
        match self.keep {
            Keep::Spans => format!("{pointer}/{segment}"),
            Keep::Values => String::new(),
        }
    }

    /// Reads one node whose first event is `event`; an error names the
    /// deepest node it happened in.
    fn node(
        &mut self,
        event: Event<'a>,
        span: Span,
        pointer: &str,
        key: Option<Position>,
        depth: usize,
    ) -> Result<Value, YamlError> {
        self.node_inner(event, span, pointer, key, depth)
            .map_err(|err| err.within(pointer))
    }

    fn node_inner(
        &mut self,
        event: Event<'a>,
        span: Span,
        pointer: &str,
        key: Option<Position>,
        depth: usize,
    ) -> Result<Value, YamlError> {
        let at = position(&span);
        if depth > MAX_DEPTH {
            return Err(YamlError::new(too_deep(), at));
        }
        self.count(1, at)?;
        if self.keep == Keep::Spans {
            let value_len = if span.end.line() == span.start.line() {
                span.end.col().saturating_sub(span.start.col()).max(1)
            } else {
                1
            };
            self.spans.insert(
                pointer.to_string(),
                NodeSpan {
                    key,
                    value: at,
                    value_len,
                },
            );
        }
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                if let Some(scalars) = &mut self.scalars {
                    scalars.push((
                        span.start.index(),
                        span.end.index(),
                        matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted),
                        pointer.to_string(),
                    ));
                }
                let notes = (self.keep == Keep::Spans).then_some(&mut self.notes);
                let value = scalar(
                    &text,
                    style,
                    tag.as_deref(),
                    at,
                    pointer,
                    notes,
                    self.reader.is_secret,
                )?;
                if anchor > 0 {
                    self.anchor(anchor, &value, pointer);
                }
                Ok(value)
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    let child = self.child(pointer, items.len());
                    items.push(self.node(event, span, &child, None, depth + 1)?);
                }
                let value = Value::Array(items);
                if anchor > 0 {
                    self.anchor(anchor, &value, pointer);
                }
                Ok(value)
            }
            Event::MappingStart(anchor, _) => {
                let mut map = Map::new();
                loop {
                    let (event, key_span) = self.next()?;
                    if matches!(event, Event::MappingEnd) {
                        break;
                    }
                    let key_at = position(&key_span);
                    let (key, merge) = match event {
                        Event::Scalar(text, style, _, tag) => {
                            // A merge key is a plain `<<`; quoted, it is text.
                            let merge =
                                style == ScalarStyle::Plain && tag.is_none() && text == "<<";
                            let key_pointer = self.child(pointer, escape_segment(&text));
                            let notes = (self.keep == Keep::Spans).then_some(&mut self.notes);
                            match scalar(
                                &text,
                                style,
                                tag.as_deref(),
                                key_at,
                                &key_pointer,
                                notes,
                                self.reader.is_secret,
                            )? {
                                Value::String(s) => (s, merge),
                                Value::Null => ("null".to_string(), merge),
                                other => (other.to_string(), merge),
                            }
                        }
                        _ => {
                            return Err(YamlError::new(
                                "a mapping key must be a plain value, not a list, a map or an alias",
                                key_at,
                            ));
                        }
                    };
                    let child = self.child(pointer, escape_segment(&key));
                    if merge {
                        return Err(YamlError::new(
                            "YAML merge keys (`<<`) are not supported; write the keys out",
                            key_at,
                        ));
                    }
                    if map.contains_key(&key) {
                        return Err(YamlError::new(
                            format!("duplicate key `{key}`: a key may appear once per mapping"),
                            key_at,
                        )
                        .within(&child));
                    }
                    let (event, span) = self.next()?;
                    let value = self.node(event, span, &child, Some(key_at), depth + 1)?;
                    map.insert(key, value);
                }
                let value = Value::Object(map);
                if anchor > 0 {
                    self.anchor(anchor, &value, pointer);
                }
                Ok(value)
            }
            Event::Alias(anchor) => {
                let value = self
                    .anchors
                    .get(&anchor)
                    .cloned()
                    .ok_or(YamlError::new("alias to an unknown anchor", at))?;
                if self.secret_anchors.contains(&anchor) {
                    self.secret_aliases.insert(pointer.to_string());
                }
                self.count(node_count(&value), at)?;
                self.alias_bytes = self.alias_bytes.saturating_add(text_bytes(&value));
                if self.alias_bytes > MAX_ALIAS_BYTES {
                    return Err(YamlError::new(
                        format!(
                            "the YAML's aliases stand for more than {} MiB of text (an anchored value used again and again); {} refuses it",
                            MAX_ALIAS_BYTES / (1024 * 1024),
                            self.reader.program
                        ),
                        at,
                    ));
                }
                Ok(value)
            }
            _ => Err(YamlError::new("unexpected YAML structure", at)),
        }
    }

    /// Reads the next document: `None` at the end of the stream, else its
    /// value (`Null` for an empty one) and where it starts.
    fn document(&mut self) -> Result<Option<(Value, Position)>, YamlError> {
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
                Event::StreamEnd => return Ok(None),
                Event::DocumentStart(_) => {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::DocumentEnd) {
                        return Ok(Some((Value::Null, position(&span))));
                    }
                    let at = position(&span);
                    let value = self.node(event, span, "", None, 0)?;
                    return Ok(Some((value, at)));
                }
                _ => {
                    return Err(YamlError::new("unexpected YAML structure", position(&span)));
                }
            }
        }
    }

    /// Refuses line separators read otherwise by YAML 1.1 in a values file
    /// (see [`line_separators`]), once the whole text was read.
    fn finish(&self, source: &str) -> Result<(), YamlError> {
        match &self.scalars {
            Some(scalars) => line_separators(source, scalars, self.reader.program),
            None => Ok(()),
        }
    }
}

/// About the text a value would take written out: its scalars and keys,
/// and a byte for each node.
fn text_bytes(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.iter().map(text_bytes).fold(1, usize::saturating_add),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| k.len().saturating_add(text_bytes(v)))
            .fold(1, usize::saturating_add),
        Value::String(s) => s.len().max(1),
        Value::Number(n) => n.to_string().len(),
        _ => 4,
    }
}

fn node_count(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(node_count).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(node_count).sum::<usize>(),
        _ => 1,
    }
}

/// Resolves a scalar as Helm does (YAML 1.1, see [`helm_values::yaml11`]), and
/// notes in `notes`, when given (values files), where YAML 1.2 reads it
/// otherwise. Errors quote the text unless the key at `pointer` holds a
/// secret (decided only on error: the check is costly and most scalars
/// are fine).
fn scalar(
    text: &str,
    style: ScalarStyle,
    tag: Option<&saphyr_parser::Tag>,
    at: Position,
    pointer: &str,
    notes: Option<&mut Vec<YamlNote>>,
    is_secret: fn(&str) -> bool,
) -> Result<Value, YamlError> {
    let value = scalar_yaml12(text, style, tag, at, pointer, is_secret);
    if style != ScalarStyle::Plain || tag.is_some() {
        return value;
    }
    let helm = if let Some(b) = crate::yaml11::boolean(text) {
        Value::Bool(b)
    } else {
        match crate::yaml11::number(text) {
            None => return value,
            // Beyond 64 bits: a values file is refused as YAML 1.2
            // refuses it (below), as no values key holds such a number;
            // other YAML (a CRD's `maximum`) reads as Kubernetes reads it.
            Some(crate::yaml11::Resolved::TooLarge) => match notes {
                Some(_) => return value,
                None => return crate::yaml11::too_large(text).map_or(value, Ok),
            },
            Some(crate::yaml11::Resolved::Text) => Value::String(text.to_string()),
            Some(resolved) => crate::yaml11::to_json(&resolved).unwrap_or(Value::Null),
        }
    };
    let Some(notes) = notes else {
        return Ok(helm);
    };
    let same = match (&value, &helm) {
        (Ok(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Ok(a), b) => a == b,
        (Err(_), _) => false,
    };
    if !same {
        let secret = is_secret(pointer);
        let shown = |v: &Value| {
            if secret {
                "another value".to_string()
            } else {
                v.to_string()
            }
        };
        let yaml12 = match &value {
            Ok(v) => shown(v),
            Err(_) => "a number out of range".to_string(),
        };
        let message = if secret {
            "Helm, which reads values as YAML 1.1, reads this value otherwise than YAML 1.2 tools (editors, yq) do".to_string()
        } else {
            format!(
                "`{text}` is {} to Helm, which reads values as YAML 1.1; YAML 1.2 tools (editors, yq) read {yaml12}",
                shown(&helm)
            )
        };
        notes.push(YamlNote {
            position: at,
            pointer: pointer.to_string(),
            len: text.chars().count().max(1),
            message,
            help: match &helm {
                Value::String(_) => format!("quote it (\"{text}\") so every tool reads the same"),
                _ if secret => "quote the value if it is text".to_string(),
                other => format!("write {other} so every tool reads the same"),
            },
        });
    }
    Ok(helm)
}

/// Resolves a scalar by the YAML 1.2 core schema.
fn scalar_yaml12(
    text: &str,
    style: ScalarStyle,
    tag: Option<&saphyr_parser::Tag>,
    at: Position,
    pointer: &str,
    is_secret: fn(&str) -> bool,
) -> Result<Value, YamlError> {
    let quoted = |what: &str| {
        if is_secret(pointer) {
            "the value".to_string()
        } else {
            format!("{what} {text}")
        }
    };
    if let Some(tag) = tag {
        if tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!" {
            match tag.suffix.as_str() {
                "str" => return Ok(Value::String(text.to_string())),
                "null" | "bool" | "int" | "float" => {}
                other => {
                    return Err(YamlError::new(
                        format!("unsupported YAML tag `!!{other}`"),
                        at,
                    ));
                }
            }
        } else {
            return Err(YamlError::new(
                format!("unsupported YAML tag `{}{}`", tag.handle, tag.suffix),
                at,
            ));
        }
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(text.to_string()));
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "-.inf" | ".nan" | ".NaN" | ".NAN" => {
            return Err(YamlError::new(
                format!(
                    "{} is not a finite number; values must be JSON numbers",
                    quoted("the number")
                ),
                at,
            ));
        }
        _ => {}
    }
    if let Some(number) = integer(text) {
        return match number {
            Some(n) => Ok(Value::Number(n)),
            None => Err(YamlError::new(
                format!(
                    "{} is too large (integers go up to {})",
                    quoted("the number"),
                    i64::MAX
                ),
                at,
            )),
        };
    }
    if is_float(text) {
        return match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) if n.as_f64().is_some_and(f64::is_finite) => Ok(Value::Number(n)),
            _ => Err(YamlError::new(
                format!("{} is out of range", quoted("the number")),
                at,
            )),
        };
    }
    Ok(Value::String(text.to_string()))
}

/// `Some(Some(n))` for an integer that fits, `Some(None)` for one that
/// does not, `None` when the text is not an integer at all.
fn integer(text: &str) -> Option<Option<Number>> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = digits.strip_prefix("0x") {
        (16, hex)
    } else if let Some(oct) = digits.strip_prefix("0o") {
        (8, oct)
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok();
    // Within i64, like Go's int64 in Helm and Kubernetes; beyond it no
    // values field fits, and the typed model could not say where it failed.
    Some(match (negative, magnitude) {
        (_, None) => None,
        (false, Some(m)) => i64::try_from(m).ok().map(Number::from),
        (true, Some(m)) if m == i64::MIN.unsigned_abs() => Some(Number::from(i64::MIN)),
        (true, Some(m)) => i64::try_from(m).ok().map(|m| Number::from(-m)),
    })
}

fn is_float(text: &str) -> bool {
    let body = text.trim_start_matches(['-', '+']);
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut chars = body.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            '0'..='9' => seen_digit = true,
            '.' if !seen_dot => seen_dot = true,
            'e' | 'E' => break,
            _ => return false,
        }
        chars.next();
    }
    if !seen_digit {
        return false;
    }
    match chars.next() {
        None => true,
        Some(_) => {
            let rest: String = chars.collect();
            let exp = rest.trim_start_matches(['-', '+']);
            !exp.is_empty() && exp.chars().all(|c| c.is_ascii_digit())
        }
    }
}

impl Reader {
    /// Parses one YAML document with spans. An empty document (or one holding
    /// only comments) is an empty mapping, as Helm treats an empty values file.
    pub fn parse_document(&self, source: &str) -> Result<LocatedDocument, YamlError> {
        let mut builder = Builder::new(*self, source, Keep::Spans, MAX_NODES)?;
        let mut value = None;
        // The last line of the previous document: directives sit between it
        // and the next explicit `---`.
        let mut after = 0;
        loop {
            let (event, span) = builder.next()?;
            match event {
                Event::StreamStart | Event::Nothing => {}
                Event::DocumentEnd => after = span.start.line(),
                Event::StreamEnd => break,
                Event::DocumentStart(explicit) => {
                    if explicit {
                        refuse_directives(source, after, span.start.line())?;
                    }
                    let (event, span) = builder.next()?;
                    if matches!(event, Event::DocumentEnd) {
                        continue;
                    }
                    if value.is_some() {
                        return Err(YamlError::new(
                            "a values file holds one YAML document; found a second one",
                            position(&span),
                        ));
                    }
                    value = Some(builder.node(event, span, "", None, 0)?);
                }
                _ => {
                    return Err(YamlError::new("unexpected YAML structure", position(&span)));
                }
            }
        }
        builder.finish(source)?;
        Ok(LocatedDocument {
            value: value.unwrap_or_else(|| Value::Object(Map::new())),
            spans: builder.spans,
            notes: builder.notes,
            secret_aliases: builder.secret_aliases,
        })
    }

    /// Calls `each` with every document of a YAML stream (install manifests,
    /// release manifests), in order, with its index from 0; an empty document
    /// is `Null`. One document is held at a time.
    pub fn for_each_document<E: From<YamlError>>(
        &self,
        source: &str,
        mut each: impl FnMut(usize, Value) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut builder = Builder::new(*self, source, Keep::Values, stream_nodes(source))?;
        let mut index = 0;
        while let Some((value, _)) = builder.document()? {
            each(index, value)?;
            index += 1;
        }
        builder.finish(source)?;
        Ok(())
    }

    /// Parses a multi-document YAML stream of Kubernetes objects. Empty
    /// documents are skipped.
    pub fn parse_stream(&self, source: &str) -> Result<Vec<Value>, YamlError> {
        let mut out = Vec::new();
        self.for_each_document(source, |_, value| {
            if !value.is_null() {
                out.push(value);
            }
            Ok::<_, YamlError>(())
        })?;
        Ok(out)
    }

    /// Parses a file that holds one YAML document (a chart's values.yaml or
    /// `Chart.yaml`, a chart repository's index.yaml); an empty file is `Null`.
    pub fn parse_value(&self, source: &str) -> Result<Value, YamlError> {
        let mut builder = Builder::new(*self, source, Keep::Values, stream_nodes(source))?;
        let mut value = Value::Null;
        let mut documents = 0;
        while let Some((document, at)) = builder.document()? {
            if document.is_null() {
                continue;
            }
            documents += 1;
            if documents > 1 {
                return Err(YamlError::new(
                    "this file holds one YAML document; found a second one",
                    at,
                ));
            }
            value = document;
        }
        builder.finish(source)?;
        Ok(value)
    }

    /// Where the node at `pointer` of document `index` of a stream (as
    /// [`Reader::for_each_document`] counts them) is: its key for a mapping entry,
    /// else its value; when there is no such node, its nearest ancestor.
    /// `None` when the stream does not read (it read before, so it does).
    pub fn locate(&self, source: &str, index: usize, pointer: &str) -> Option<Position> {
        let mut builder = Builder::new(*self, source, Keep::Values, stream_nodes(source)).ok()?;
        for _ in 0..index {
            builder.document().ok()??;
        }
        builder.keep = Keep::Spans;
        let (_, start) = builder.document().ok()??;
        let mut pointer = pointer;
        loop {
            if let Some(span) = builder.spans.get(pointer) {
                return Some(span.key_or_value());
            }
            match pointer.rsplit_once('/') {
                Some((parent, _)) => pointer = parent,
                None => return Some(start),
            }
        }
    }
}

/// A directive (`%YAML 1.2`, `%TAG ...`) on the lines after line `after`
/// and before line `before` (1-based), which lie between documents:
/// Helm's values reader refuses every one (even `%YAML 1.1`: "did not find
/// expected <document start>"), so this reader does.
fn refuse_directives(source: &str, after: usize, before: usize) -> Result<(), YamlError> {
    let directive = source
        .lines()
        .enumerate()
        .skip(after)
        .take(before.saturating_sub(after + 1))
        .find(|(_, line)| line.starts_with('%'));
    match directive {
        Some((index, line)) => Err(YamlError::new(
            format!(
                "a YAML directive ({}): Helm refuses a values file with directives; \
                 help: remove the line (a values file needs no %YAML or %TAG)",
                line.split_whitespace().next().unwrap_or("%")
            ),
            Position {
                line: index + 1,
                column: 1,
            },
        )),
        None => Ok(()),
    }
}

/// The most nodes a stream of `source` may expand to: one per byte of
/// text, and [`MAX_NODES`] more, so aliases cannot make a document larger
/// than its text would be written out.
fn stream_nodes(source: &str) -> usize {
    MAX_NODES.saturating_add(source.len())
}

/// Refuses U+0085, U+2028 and U+2029 where Helm would read them otherwise:
/// YAML 1.1 takes all three for line breaks, so outside quotes they end a
/// line (Helm refuses the file or reads another value) and in quotes U+0085
/// is folded into a space. U+2028 and U+2029 inside quotes are kept by
/// both, and so accepted.
fn line_separators(
    source: &str,
    scalars: &[(usize, usize, bool, String)],
    program: &str,
) -> Result<(), YamlError> {
    let mut line = 1;
    let mut column = 1;
    for (index, c) in source.chars().enumerate() {
        if matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}') {
            // The scalars are in the text's order and do not overlap.
            let after = scalars.partition_point(|(start, _, _, _)| *start <= index);
            let within = after
                .checked_sub(1)
                .map(|i| &scalars[i])
                .filter(|(_, end, _, _)| index < *end);
            let quoted = within.is_some_and(|(_, _, quoted, _)| *quoted);
            if c == '\u{85}' || !quoted {
                let (name, escape) = match c {
                    '\u{85}' => ("U+0085 (next line)", "\\N"),
                    '\u{2028}' => ("U+2028 (line separator)", "\\L"),
                    _ => ("U+2029 (paragraph separator)", "\\P"),
                };
                let how = if quoted {
                    "Helm (YAML 1.1) folds it into a space inside quotes"
                } else {
                    "Helm (YAML 1.1) reads it as a line break, which ends the value here"
                };
                let error = YamlError::new(
                    format!(
                        "{name} in the file: {how}, so Helm and {program} would not read the same value; write it as the escape {escape} inside double quotes, or remove it"
                    ),
                    Position { line, column },
                );
                return Err(match within {
                    Some((_, _, _, pointer)) => error.within(pointer),
                    None => error,
                });
            }
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_secret(pointer: &str) -> bool {
        pointer.to_lowercase().contains("secret")
    }

    const READER: Reader = Reader {
        program: "test",
        is_secret,
    };

    fn parse_document(source: &str) -> Result<LocatedDocument, YamlError> {
        READER.parse_document(source)
    }

    fn parse_value(source: &str) -> Result<Value, YamlError> {
        READER.parse_value(source)
    }

    fn parse_stream(source: &str) -> Result<Vec<Value>, YamlError> {
        READER.parse_stream(source)
    }

    fn for_each_document<E: From<YamlError>>(
        source: &str,
        each: impl FnMut(usize, Value) -> Result<(), E>,
    ) -> Result<(), E> {
        READER.for_each_document(source, each)
    }

    fn locate(source: &str, index: usize, pointer: &str) -> Option<Position> {
        READER.locate(source, index, pointer)
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let doc = parse_document("# c\nstrategy:\n  type: Recreate\n").unwrap();
        let span = doc.spans["/strategy/type"];
        assert_eq!(span.key, Some(Position { line: 3, column: 3 }));
        assert_eq!(span.value, Position { line: 3, column: 9 });
        assert_eq!(span.value_len, 8);
    }

    #[test]
    fn resolves_core_schema_scalars() {
        let doc = parse_document("a: 1\nb: '1'\nc: true\nd: ~\ne: 1.5\nf: 0x10\ng: -3\n").unwrap();
        assert_eq!(
            doc.value,
            serde_json::json!({"a":1,"b":"1","c":true,"d":null,"e":1.5,"f":16,"g":-3})
        );
    }

    #[test]
    fn types_plain_scalars_as_helm_and_notes_yaml_1_2() {
        let doc = parse_document("a: yes\nb: 0777\nc: '0777'\nn: 1\nd: true\n").unwrap();
        assert_eq!(
            doc.value,
            serde_json::json!({"a": true, "b": 511, "c": "0777", "false": 1, "d": true})
        );
        let noted: Vec<&str> = doc.notes.iter().map(|n| n.pointer.as_str()).collect();
        assert_eq!(noted, ["/a", "/b", "/n"]);
        assert_eq!(doc.notes[0].position, Position { line: 1, column: 4 });
    }

    #[test]
    fn refuses_line_breaks_helm_reads_otherwise() {
        let err = parse_document("a: x\u{2028}y\n").unwrap_err();
        assert!(err.message.contains("U+2028"), "{err}");
        assert_eq!(err.key, "a");
        assert!(parse_document("a: \"x\u{2028}y\"\n").is_ok());
        assert!(parse_document("a: \"x\u{85}y\"\n").is_err());
    }

    #[test]
    fn refuses_duplicate_keys_with_position() {
        let err = parse_document("a: 1\na: 2\n").unwrap_err();
        assert!(err.message.contains("duplicate key `a`"));
        assert_eq!(err.position, Position { line: 2, column: 1 });
    }

    #[test]
    fn refuses_aliases_of_a_long_text_used_again_and_again() {
        // a 1 MiB string and a few thousand aliases of it: few nodes, but
        // gigabytes of copies
        let long = "x".repeat(1024 * 1024);
        let mut doc = format!("podAnnotations: {{a: &s \"{long}\"}}\ntolerations:\n");
        for _ in 0..1500 {
            doc.push_str("- key: *s\n");
        }
        let err = parse_document(&doc).unwrap_err();
        assert!(
            err.message.contains("aliases stand for more than 4 MiB"),
            "{err}"
        );
        // refused at the alias that goes past the bound: four stand for
        // 4 MiB, the fifth (line 7) for more
        assert_eq!(err.position.line, 7, "{err}");
        // a few aliases of it are what YAML is for
        let mut few = format!("podAnnotations: {{a: &s \"{long}\"}}\ntolerations:\n");
        for _ in 0..3 {
            few.push_str("- key: *s\n");
        }
        assert!(parse_document(&few).is_ok());
    }

    #[test]
    fn refuses_alias_bombs() {
        let mut doc = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            doc.push_str(&format!(
                "{}: &{} [",
                (b'a' + i) as char,
                (b'a' + i) as char
            ));
            let prev = (b'a' + i - 1) as char;
            doc.push_str(&vec![format!("*{prev}"); 10].join(", "));
            doc.push_str("]\n");
        }
        let err = parse_document(&doc).unwrap_err();
        assert!(err.message.contains("alias bomb"), "{err}");
    }

    #[test]
    fn integers_stay_within_64_bits() {
        let doc = parse_document("a: -9223372036854775808\nb: 9223372036854775807\n").unwrap();
        assert_eq!(doc.value["a"], i64::MIN);
        assert_eq!(doc.value["b"], i64::MAX);
        let err = parse_document("x:\n  z: 18446744073709551615\n").unwrap_err();
        assert!(err.message.contains("too large"), "{err}");
        assert_eq!(err.key, "x.z");
        assert_eq!(err.position, Position { line: 2, column: 6 });
    }

    #[test]
    fn streams_count_documents_and_locate_nodes_again() {
        let stream = "a: 1\n---\n---\nkind: X\nrules:\n- verbs: [get, 'x{{']\n";
        let mut seen = Vec::new();
        for_each_document(stream, |index, value| {
            seen.push((index, value));
            Ok::<_, YamlError>(())
        })
        .unwrap();
        assert_eq!(seen.len(), 3);
        assert!(seen[1].1.is_null());
        assert_eq!(parse_stream(stream).unwrap().len(), 2);
        assert_eq!(
            locate(stream, 2, "/rules/0/verbs/1"),
            Some(Position {
                line: 6,
                column: 16
            })
        );
        // A key: its position; a missing node: its nearest ancestor.
        assert_eq!(
            locate(stream, 2, "/rules/0/verbs"),
            Some(Position { line: 6, column: 3 })
        );
        assert_eq!(
            locate(stream, 2, "/rules/0/resources/0"),
            Some(Position { line: 6, column: 3 })
        );
    }

    #[test]
    fn one_document_files_and_what_every_reader_refuses() {
        assert_eq!(parse_value("").unwrap(), Value::Null);
        assert!(parse_value("a: 1\n---\nb: 2\n").is_err());
        // Beyond 64 bits, outside values files: as Kubernetes reads it.
        assert_eq!(
            parse_value("max: 18446744073709551615\n").unwrap()["max"],
            u64::MAX
        );
        assert!(parse_document("max: 18446744073709551615\n").is_err());
        // A quoted `<<` is a key like any other; a plain one merges.
        assert_eq!(parse_value("'<<': 1\n").unwrap()["<<"], 1);
        assert!(parse_value("a: &a {x: 1}\nb:\n  <<: *a\n").is_err());
        for deep in [
            format!("k: {}", "[".repeat(300)),
            format!("k: {}1", "{a: ".repeat(200)),
            format!("k:\n{}x\n", "- ".repeat(200)),
        ] {
            for err in [
                parse_value(&deep).unwrap_err(),
                parse_stream(&deep).unwrap_err(),
                parse_document(&deep).unwrap_err(),
            ] {
                assert!(err.message.contains("nesting deeper than 128"), "{err}");
            }
        }
    }
}
