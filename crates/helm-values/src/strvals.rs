//! Helm's `--set` language (its `strvals` package), reimplemented from its
//! documented and observed behaviour, so that `--set` means here what it
//! means to `helm install`:
//!
//! - `a.b=v` sets a nested key; `a=1,b=2` sets two; `\` escapes the next
//!   character anywhere (`nodeSelector.kubernetes\.io/os=linux`, `a=x\,y`).
//! - `a[0].b=v` sets inside a list, growing it with nulls; `a={x,y}` is a
//!   list.
//! - `--set` types only `true`, `false`, `null` (any case), `0` and
//!   integers within 64 bits that do not start with `0`; everything else,
//!   `1e3`, `010`, `0x10`, `p4ss #w0rd`, is the literal text. No YAML.
//! - `--set-string` types nothing, `--set-file` reads the value from a
//!   file, `--set-json` takes a JSON value (numbers as 64-bit floats, as Go
//!   decodes them).
//!
//! Expressions apply into one map, over the values files (a list index
//! edits the list the files set, it does not replace it). The quirks are
//! Helm's too and are kept on purpose: `a=` is the empty string, `a[0]`
//! without `=` sets an empty list, an index that never closes sets nothing.
//! The differential test `tests/without_cluster/set_strvals.rs` holds these to Helm's own
//! code.

use serde_json::{Map, Number, Value};

use crate::pointer::escape_segment;

/// Helm's bound on a list index.
pub const MAX_INDEX: i64 = 65_536;

/// Helm's bound on how deep a key path may nest.
pub const MAX_NESTING: usize = 30;

/// The most list elements and values the whole `--set` family may create
/// or copy, all flags together. Helm bounds each list index (65,536) but
/// not their sum: 200 flags of `--set xN[65536]=1` took 53 s and 2.8 GB
/// here, as each flag's list was copied again and again. This is 16 lists
/// of Helm's largest index; the values a chart like this one takes hold a
/// few hundred.
pub const MAX_SET_WORK: usize = 16 * (MAX_INDEX as usize + 1);

/// What is left of [`MAX_SET_WORK`]: every list element an expression
/// creates and every value copied (into a flag's own source, or to edit
/// an element of a list) is charged here, so the whole family's time and
/// memory stay linear in its size, whatever the number of flags.
#[derive(Debug)]
pub struct Budget {
    left: usize,
    spent: bool,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            left: MAX_SET_WORK,
            spent: false,
        }
    }
}

impl Budget {
    /// Takes `n` from what is left, or says why not (and is spent).
    pub fn charge(&mut self, n: usize) -> Result<(), Refusal> {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => {
                self.spent = true;
                Err(Refusal::plain(format!(
                    "with this flag the --set flags together create and copy more than {MAX_SET_WORK} list elements and values; Helm allows an index up to {MAX_INDEX} in each list, not that many in all"
                )))
            }
        }
    }

    /// Whether a charge failed: the flags after the one that spent the
    /// budget are not applied.
    pub fn is_spent(&self) -> bool {
        self.spent
    }

    /// Takes the size of `value` (its nodes), counting no further than
    /// what is left.
    pub fn charge_value(&mut self, value: &Value) -> Result<(), Refusal> {
        self.charge_nodes(std::iter::once(value))
    }

    /// Takes the size of `values` (their nodes), counting no further than
    /// what is left.
    pub fn charge_nodes<'v>(
        &mut self,
        values: impl IntoIterator<Item = &'v Value>,
    ) -> Result<(), Refusal> {
        let mut count = 0usize;
        let mut stack: Vec<&Value> = values.into_iter().collect();
        while let Some(node) = stack.pop() {
            count += 1;
            if count > self.left {
                break;
            }
            match node {
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.values()),
                _ => {}
            }
        }
        self.charge(count)
    }
}

/// How a flag turns the text after `=` into a value.
pub enum Typing<'a> {
    /// `--set`: booleans, null and 64-bit integers; else the text.
    Typed,
    /// `--set-string`: always the text.
    Strings,
    /// `--set-json`: a JSON value.
    Json,
    /// `--set-file`: the text names a file; the value is what it reads.
    File(&'a mut dyn FnMut(&str) -> Result<Value, Refusal>),
    /// `--set-literal`: the rest of the expression, as it is.
    Literal,
}

/// Why Helm refuses an expression, said twice: `quoting` may quote the
/// expression's text (a key, an index), `plain` quotes none of it, for an
/// expression that may hold a secret (a `,` inside a secret value starts
/// what Helm reads as another key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The reason, quoting the text where that helps.
    pub quoting: String,
    /// The same reason without any of the expression's text.
    pub plain: String,
}

impl Refusal {
    /// A reason that quotes nothing of the expression.
    pub fn plain(message: impl Into<String>) -> Refusal {
        let message = message.into();
        Refusal {
            quoting: message.clone(),
            plain: message,
        }
    }

    fn quoting(quoting: String, plain: &str) -> Refusal {
        Refusal {
            quoting,
            plain: plain.to_string(),
        }
    }
}

/// Why an expression stopped: the end of the text (Helm then keeps what was
/// set, even mid-expression), or an error that refuses the whole command.
enum Halt {
    End,
    Error(Refusal),
}

type Step<T> = Result<T, Halt>;

fn error<T>(refusal: Refusal) -> Step<T> {
    Err(Halt::Error(refusal))
}

/// What serde_json says about text that is not JSON, without any of the
/// text: a syntax error's reason and place (those messages quote nothing),
/// else only that it is not JSON.
pub fn json_problem(err: &serde_json::Error) -> String {
    match err.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => err.to_string(),
        _ => format!(
            "not valid JSON at line {} column {}",
            err.line(),
            err.column()
        ),
    }
}

/// Applies one expression to `data`. Returns the JSON pointers of the
/// nodes it set (a list is set as a whole: the pointer stops at it), or
/// Helm's reason for refusing the expression.
pub fn apply(
    expression: &str,
    data: &mut Map<String, Value>,
    typing: Typing<'_>,
    budget: &mut Budget,
) -> Result<Vec<String>, Refusal> {
    let mut parser = Parser {
        chars: expression.chars().collect(),
        at: 0,
        typing,
        set: Vec::new(),
        budget,
    };
    loop {
        match parser.key(data, 0, "", false) {
            Ok(()) => {}
            Err(Halt::End) => return Ok(parser.set),
            Err(Halt::Error(message)) => return Err(message),
        }
    }
}

struct Parser<'a, 'b> {
    chars: Vec<char>,
    at: usize,
    typing: Typing<'a>,
    /// Pointers of the nodes set so far.
    set: Vec<String>,
    budget: &'b mut Budget,
}

/// Text up to a stop character (`None` at the end), `\` escaping any
/// character.
struct Run {
    text: String,
    stop: Option<char>,
}

impl Parser<'_, '_> {
    /// Charges `values` (about to be copied) to the budget.
    fn charge<'v>(&mut self, values: impl IntoIterator<Item = &'v Value>) -> Step<()> {
        self.budget.charge_nodes(values).map_err(Halt::Error)
    }

    fn next_char(&mut self) -> Option<char> {
        let c = self.chars.get(self.at).copied();
        if c.is_some() {
            self.at += 1;
        }
        c
    }

    fn literal(&self) -> bool {
        matches!(self.typing, Typing::Literal)
    }

    fn until(&mut self, stops: &[char]) -> Run {
        let escapes = !self.literal();
        let mut text = String::new();
        loop {
            match self.next_char() {
                None => return Run { text, stop: None },
                Some(c) if stops.contains(&c) => {
                    return Run {
                        text,
                        stop: Some(c),
                    };
                }
                Some('\\') if escapes => match self.next_char() {
                    Some(c) => text.push(c),
                    None => return Run { text, stop: None },
                },
                Some(c) => text.push(c),
            }
        }
    }

    fn record(&mut self, pointer: String, in_list: bool) {
        if !in_list {
            self.set.push(pointer);
        }
    }

    /// One `key...=value` into the map `data` at `pointer`; `in_list` when
    /// the map sits inside a list (whose pointer was recorded already).
    fn key(
        &mut self,
        data: &mut Map<String, Value>,
        depth: usize,
        pointer: &str,
        in_list: bool,
    ) -> Step<()> {
        let stops: &[char] = if self.literal() {
            &['=', '[', '.']
        } else {
            &['=', '[', ',', '.']
        };
        let run = self.until(stops);
        let key = run.text;
        let child = format!("{pointer}/{}", escape_segment(&key));
        match run.stop {
            None if key.is_empty() => Err(Halt::End),
            None => error(Refusal::quoting(
                format!("key `{key}` has no value"),
                NO_VALUE,
            )),
            Some('[') => {
                let index = self.index()?;
                // The list is taken out and put back, never copied (it is
                // put back whatever happens); an empty key is not set, so
                // its list is a copy.
                let mut list = match data.get_mut(&key) {
                    None => Vec::new(),
                    Some(Value::Array(items)) if key.is_empty() => {
                        self.charge(items.iter())?;
                        items.clone()
                    }
                    Some(Value::Array(items)) => std::mem::take(items),
                    Some(other) => return error(not_a(&key, other, "a list")),
                };
                let result = self.list_item(&mut list, index, depth, &child);
                set(data, &key, Value::Array(list));
                if !key.is_empty() {
                    self.record(child, in_list);
                }
                result
            }
            Some('=') => {
                let value = self.value()?;
                if !key.is_empty() {
                    self.record(child, in_list);
                }
                let end = value.1;
                set(data, &key, value.0);
                if end { Err(Halt::End) } else { Ok(()) }
            }
            Some(',') => error(Refusal::quoting(
                format!("key `{key}` has no value (cannot end with `,`)"),
                NO_VALUE,
            )),
            Some(_) => {
                let depth = depth + 1;
                if depth > MAX_NESTING {
                    return error(Refusal::plain(format!(
                        "the key path nests deeper than {MAX_NESTING} levels"
                    )));
                }
                // Taken out and put back unless it stays empty (then it
                // was empty before: nothing removes a key); an empty key
                // is not set, so its map is a copy.
                let mut inner = match data.get_mut(&key) {
                    None => Map::new(),
                    Some(Value::Object(map)) if key.is_empty() => {
                        self.charge(map.values())?;
                        map.clone()
                    }
                    Some(Value::Object(map)) => std::mem::take(map),
                    Some(other) => return error(not_a(&key, other, "a map")),
                };
                let result = self.key(&mut inner, depth, &child, in_list);
                if result.is_ok() && inner.is_empty() {
                    return error(Refusal::quoting(
                        format!("key map `{key}` has no value"),
                        NO_VALUE,
                    ));
                }
                if !inner.is_empty() {
                    set(data, &key, Value::Object(inner));
                }
                result
            }
        }
    }

    /// The value after `=`, and whether the text ended there.
    fn value(&mut self) -> Step<(Value, bool)> {
        if let Typing::Json = self.typing {
            return self.json_value().map(|value| (value, false));
        }
        if self.literal() {
            let rest: String = self.chars[self.at..].iter().collect();
            self.at = self.chars.len();
            return Ok((Value::String(rest), false));
        }
        match self.list_literal() {
            Some(Ok(list)) => Ok((list, false)),
            Some(Err(halt)) => Err(halt),
            // `a=` at the very end: the empty string, and the end.
            None if self.at >= self.chars.len() => Ok((Value::String(String::new()), true)),
            None => {
                let text = self.until(&[',']).text;
                Ok((self.convert(&text)?, false))
            }
        }
    }

    /// `{a,b}`: `None` when the value does not start with `{`.
    fn list_literal(&mut self) -> Option<Step<Value>> {
        if self.chars.get(self.at) != Some(&'{') {
            return None;
        }
        self.at += 1;
        let mut items = Vec::new();
        loop {
            let run = self.until(&[',', '}']);
            match run.stop {
                None => return Some(error(Refusal::plain("a list must end with `}`"))),
                Some('}') => {
                    // A `,` right after the list is its separator.
                    if self.chars.get(self.at) == Some(&',') {
                        self.at += 1;
                    }
                    return Some(self.convert(&run.text).map(|item| {
                        items.push(item);
                        Value::Array(items)
                    }));
                }
                Some(_) => match self.convert(&run.text) {
                    Ok(item) => items.push(item),
                    Err(halt) => return Some(Err(halt)),
                },
            }
        }
    }

    fn convert(&mut self, text: &str) -> Step<Value> {
        match &mut self.typing {
            Typing::Typed => Ok(typed(text)),
            Typing::Strings | Typing::Json | Typing::Literal => Ok(Value::String(text.to_string())),
            Typing::File(read) => read(text).map_err(Halt::Error),
        }
    }

    /// Skips blanks up to a `,` or the end (true: no value there); stops
    /// before anything else (false).
    fn empty_value(&mut self) -> bool {
        while let Some(&c) = self.chars.get(self.at) {
            if c == ',' {
                self.at += 1;
                return true;
            }
            if !c.is_whitespace() {
                return false;
            }
            self.at += 1;
        }
        true
    }

    /// `--set-json`: one JSON value (nothing is null), then an optional `,`.
    fn json_value(&mut self) -> Step<Value> {
        if self.empty_value() {
            return Ok(Value::Null);
        }
        let rest: String = self.chars[self.at..].iter().collect();
        let mut stream = serde_json::Deserializer::from_str(&rest).into_iter::<Value>();
        let value = match stream.next() {
            Some(Ok(value)) => value,
            Some(Err(err)) => {
                return error(Refusal::plain(format!("not JSON: {}", json_problem(&err))));
            }
            None => return error(Refusal::plain("not JSON: no value")),
        };
        let used = rest[..stream.byte_offset()].chars().count();
        self.at += used;
        self.empty_value();
        Ok(go_json_numbers(value))
    }

    /// `[N]`: the index (refused below 0 or above [`MAX_INDEX`]).
    fn index(&mut self) -> Step<i64> {
        let run = self.until(&[']']);
        if run.stop.is_none() {
            // Helm stops here and keeps what was set before.
            return Err(Halt::End);
        }
        go_atoi(&run.text).map_err(|()| {
            Halt::Error(Refusal::quoting(
                format!("`[{}]` is not a list index", run.text),
                "not KEY=VALUE pairs: a list index is not a number",
            ))
        })
    }

    /// What follows `[i]`: `=value`, `.key...` or another `[j]`.
    fn list_item(
        &mut self,
        list: &mut Vec<Value>,
        index: i64,
        depth: usize,
        pointer: &str,
    ) -> Step<()> {
        if index < 0 {
            return error(negative_index(index));
        }
        let run = self.until(&['[', '.', '=']);
        if !run.text.is_empty() {
            return error(Refusal::quoting(
                format!("unexpected `{}` after a list index", run.text),
                "not KEY=VALUE pairs: unexpected text after a list index",
            ));
        }
        match run.stop {
            None => Err(Halt::End),
            Some('=') => {
                let (value, _) = self.value()?;
                self.set_index(list, index, value)
            }
            Some('[') => {
                let next = self.index()?;
                // A copy: a failed edit leaves the element as it was.
                let mut inner = match list.get(index as usize) {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(items)) => {
                        self.charge(items.iter())?;
                        items.clone()
                    }
                    Some(other) => {
                        return error(not_a(&format!("[{index}]"), other, "a list"));
                    }
                };
                self.list_item(&mut inner, next, depth, pointer)?;
                self.set_index(list, index, Value::Array(inner))
            }
            Some(_) => {
                // A copy: a failed edit leaves the element as it was.
                let mut inner = match list.get(index as usize) {
                    Some(Value::Object(map)) => {
                        self.charge(map.values())?;
                        map.clone()
                    }
                    _ => Map::new(),
                };
                if let Some(slot) = list.get_mut(index as usize)
                    && !slot.is_object()
                {
                    *slot = Value::Object(Map::new());
                }
                match self.key(&mut inner, depth, pointer, true) {
                    Ok(()) => self.set_index(list, index, Value::Object(inner)),
                    // Helm edits an existing element in place, so what was
                    // set before the end stays; a new element is dropped.
                    Err(Halt::End) => {
                        if let Some(slot) = list.get_mut(index as usize) {
                            *slot = Value::Object(inner);
                        }
                        Err(Halt::End)
                    }
                    Err(halt) => Err(halt),
                }
            }
        }
    }
}

/// Sets `key`, unless it is empty (Helm ignores an empty key).
fn set(data: &mut Map<String, Value>, key: &str, value: Value) {
    if !key.is_empty() {
        data.insert(key.to_string(), value);
    }
}

impl Parser<'_, '_> {
    /// Sets `list[index]`, growing the list with nulls (each charged to
    /// the budget).
    fn set_index(&mut self, list: &mut Vec<Value>, index: i64, value: Value) -> Step<()> {
        if index < 0 {
            return error(negative_index(index));
        }
        if index > MAX_INDEX {
            return error(Refusal::quoting(
                format!("list index {index} is larger than {MAX_INDEX}, the largest Helm allows"),
                &format!(
                    "not KEY=VALUE pairs: a list index is larger than {MAX_INDEX}, the largest Helm allows"
                ),
            ));
        }
        let index = index as usize;
        if list.len() <= index {
            self.budget
                .charge(index + 1 - list.len())
                .map_err(Halt::Error)?;
            list.resize(index + 1, Value::Null);
        }
        list[index] = value;
        Ok(())
    }
}

/// The plain reason for a key with no value: in an expression that may
/// hold a secret, most often a `,` inside a value.
const NO_VALUE: &str = "not KEY=VALUE pairs: a key has no value (a `,` in a value starts another pair; write it as `\\,`)";

fn negative_index(index: i64) -> Refusal {
    Refusal::quoting(
        format!("negative list index {index}"),
        "not KEY=VALUE pairs: a list index is negative",
    )
}

fn not_a(key: &str, found: &Value, wanted: &str) -> Refusal {
    let kind = match found {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    };
    Refusal::quoting(
        format!("`{key}` is already {kind}, so it cannot be used as {wanted}"),
        &format!("not KEY=VALUE pairs: a key is already {kind}, so it cannot be used as {wanted}"),
    )
}

/// Go's `strconv.Atoi`: an optional sign, then decimal digits, within 64 bits.
fn go_atoi(text: &str) -> Result<i64, ()> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    text.parse().map_err(|_| ())
}

/// Go's `strings.EqualFold` against a lowercase ASCII word: ASCII case
/// folding, plus the long s (U+017F), which folds to `s`.
fn equal_fold(text: &str, word: &str) -> bool {
    text.chars().count() == word.len()
        && text
            .chars()
            .zip(word.chars())
            .all(|(c, w)| c.eq_ignore_ascii_case(&w) || (w == 's' && c == '\u{17f}'))
}

/// `KEY=VALUE` for `--set-string` that Helm's strvals (and asogen's) read
/// back as exactly `value` under the dotted `key`: a backslash before each
/// character the grammar gives a meaning (`,` would start another
/// assignment, `{` a list, `\\` an escape), so a value cannot set other
/// keys.
pub fn set_string_expression(key: &str, value: &str) -> String {
    let mut out = format!("{key}=");
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `--set`'s typing: `true`/`false`/`null` in any case, `0`, and decimal
/// integers within 64 bits that do not start with `0`; else the text.
pub fn typed(text: &str) -> Value {
    if equal_fold(text, "true") {
        return Value::Bool(true);
    }
    if equal_fold(text, "false") {
        return Value::Bool(false);
    }
    if equal_fold(text, "null") {
        return Value::Null;
    }
    if text == "0" {
        return Value::from(0);
    }
    if !text.starts_with('0')
        && let Ok(n) = go_atoi(text)
    {
        return Value::from(n);
    }
    Value::String(text.to_string())
}

/// JSON numbers as Go decodes them into an interface: 64-bit floats. An
/// integral float within 64 bits is kept as an integer, which prints the
/// same.
pub fn go_json_numbers(value: Value) -> Value {
    match value {
        Value::Number(n) => {
            let float = n.as_f64().unwrap_or(f64::NAN);
            if float.fract() == 0.0 && float.abs() < 9.2e18 {
                Value::from(float as i64)
            } else {
                Number::from_f64(float).map_or(Value::Null, Value::Number)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(go_json_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, go_json_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(expression: &str) -> Result<Value, Refusal> {
        let mut data = Map::new();
        apply(expression, &mut data, Typing::Typed, &mut Budget::default())
            .map(|_| Value::Object(data))
    }

    #[test]
    fn values_are_text_unless_helm_types_them() {
        assert_eq!(
            parse("a=p4ss #w0rd,b=1e3,c=010,d=-5,e=TRUE,f=Null,g=0,h=0x10").unwrap(),
            json!({"a": "p4ss #w0rd", "b": "1e3", "c": "010", "d": -5, "e": true,
                   "f": null, "g": 0, "h": "0x10"})
        );
        assert_eq!(typed("99999999999999999999"), json!("99999999999999999999"));
        assert_eq!(typed("fal\u{17f}e"), json!(false));
    }

    #[test]
    fn escapes_indexes_and_lists() {
        assert_eq!(
            parse(r"nodeSelector.kubernetes\.io/os=linux,l[1].name=acr,m={a,b},n=x\,y").unwrap(),
            json!({"nodeSelector": {"kubernetes.io/os": "linux"},
                   "l": [null, {"name": "acr"}], "m": ["a", "b"], "n": "x,y"})
        );
    }

    #[test]
    fn records_what_it_set() {
        let mut data = Map::new();
        let set = apply(
            "a.b=1,l[0].x=2",
            &mut data,
            Typing::Typed,
            &mut Budget::default(),
        )
        .unwrap();
        assert_eq!(set, ["/a/b", "/l"]);
    }

    #[test]
    fn refuses_what_helm_refuses() {
        for bad in [
            "a",
            "a=1,b",
            "a=x,y",
            "a={x",
            "a[x]=1",
            "a[-1]=1",
            "a[65537]=1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
