//! The description language's types: expressions over the chart's inputs
//! ([`Expr`]) and the shape of an object ([`Entry`], [`Node`], [`Item`],
//! [`Resource`]), with the shorthands descriptions are written in. Only
//! data: evaluating them is [`super::expr`]'s and [`super::tree`]'s work,
//! printing them as Go templates too, so the chart's named helpers
//! ([`Helper`]) can be written in these types and still be evaluated and
//! printed by those modules.

use serde_json::Value;

use super::funcs::Func;

/// A key of the values: a dotted path from `.Values` (`metrics.port`).
/// Which paths exist is the chart's business: a chart makes them from its
/// own key handles (`From`), and the expressions only read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValuesPath(&'static str);

impl ValuesPath {
    /// The path `a.b.c`.
    pub const fn new(path: &'static str) -> ValuesPath {
        ValuesPath(path)
    }
    /// The dotted path.
    pub const fn path(self) -> &'static str {
        self.0
    }
}

/// A named template of the chart (`define`), `include`d by reference: a
/// helper that was never described cannot be included.
#[derive(Debug, PartialEq)]
pub struct Helper {
    /// The `define`'s name, the chart's name first (`mychart.labels`),
    /// as charts name them so that subcharts' helpers do not collide.
    pub name: String,
    /// What it is for, printed as a comment above its `define`.
    pub doc: &'static str,
    /// What it yields.
    pub body: Body,
}

/// What a helper yields.
#[derive(Debug, PartialEq)]
pub enum Body {
    /// A string.
    Text(Expr),
    /// "true" when the condition holds, else "" (Go templates have no
    /// boolean helpers: `include` always returns a string).
    Flag(Expr),
    /// Map entries, included with `nindent`.
    Entries(Vec<Entry>),
}

impl Helper {
    /// A map helper's entries.
    pub fn entries(&self) -> &[Entry] {
        match &self.body {
            Body::Entries(entries) => entries,
            _ => panic!("{} is not a map helper (a bug in a description)", self.name),
        }
    }
}

/// A value computed from the chart's inputs.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A constant (string, number, bool or null).
    Lit(Value),
    /// `.Values.a.b`: a key of the values; missing is null. Printed for
    /// the root context as the dot (outside a `range`).
    Values(ValuesPath),
    /// `.Release.Namespace`.
    Namespace,
    /// `.Release.Name`.
    ReleaseName,
    /// `.Release.Service`: `Helm` under Helm, `asogen` for asogen's output.
    ReleaseService,
    /// `.Chart.Name`.
    ChartName,
    /// `.Chart.Version`.
    ChartVersion,
    /// `.Chart.AppVersion`.
    AppVersion,
    /// `include "NAME" .`: a string helper.
    Include(&'static Helper),
    /// `.Capabilities.APIVersions.Has "GROUP/VERSION/KIND"`: whether the
    /// cluster serves a kind. Helm asks the cluster; asogen renders for a
    /// current one unless `--kube-version` names an older one (see
    /// [`super::Capabilities`]).
    ApiServed(&'static str),
    /// A function call.
    Call(Func, Vec<Expr>),
    /// `$NAME`: a variable of the template (see [`super::stmt`]).
    Var(String),
    /// `.` inside a `range`: the current item.
    Dot,
    /// `$.Values`: every value (`$` is the root context wherever the
    /// dot has moved).
    AllValues,
}

/// Shorthands that read like the template they print.
impl Expr {
    /// `.Values.KEY`.
    pub fn value(key: impl Into<ValuesPath>) -> Expr {
        Expr::Values(key.into())
    }
    /// `dig "a" "b" DEFAULT (default (dict) .Values.WITHIN)`: `key`, read
    /// from the map at `within` (one of its parents), or `default` when
    /// anything on the way is missing. `within` left out or null reads as
    /// an empty map: sprig's dig fails on a nil map, and a null Helm keeps
    /// (a key the chart's defaults do not hold) must mean what absence
    /// means.
    pub fn dig(key: impl Into<ValuesPath>, within: impl Into<ValuesPath>, default: Expr) -> Expr {
        let (key, within) = (key.into(), within.into());
        let below = key
            .path()
            .strip_prefix(within.path())
            .and_then(|rest| rest.strip_prefix('.'))
            .unwrap_or_else(|| panic!("{} is not inside {}", key.path(), within.path()));
        let mut args: Vec<Expr> = below.split('.').map(Expr::str).collect();
        args.push(default);
        args.push(Expr::value(within).or_default(Expr::Call(Func::Dict, Vec::new())));
        Expr::Call(Func::Dig, args)
    }
    /// A string constant.
    pub fn str(text: impl Into<String>) -> Expr {
        Expr::Lit(Value::String(text.into()))
    }
    /// An integer constant.
    pub fn int(number: i64) -> Expr {
        Expr::Lit(Value::from(number))
    }
    /// `default FALLBACK self`.
    pub fn or_default(self, fallback: Expr) -> Expr {
        Expr::Call(Func::Default, vec![fallback, self])
    }
    /// `int64 self`.
    pub fn int64(self) -> Expr {
        Expr::Call(Func::Int64, vec![self])
    }
    /// `eq self OTHER`.
    pub fn eq(self, other: Expr) -> Expr {
        Expr::Call(Func::Eq, vec![self, other])
    }
    /// `and A B...`.
    pub fn all(operands: Vec<Expr>) -> Expr {
        Expr::Call(Func::And, operands)
    }
    /// `or A B...`.
    pub fn any(operands: Vec<Expr>) -> Expr {
        Expr::Call(Func::Or, operands)
    }
    /// `printf FORMAT ARGS...`.
    pub fn printf(format: &str, args: Vec<Expr>) -> Expr {
        let mut all = vec![Expr::str(format)];
        all.extend(args);
        Expr::Call(Func::Printf, all)
    }
    /// `$NAME`.
    pub fn var(name: &str) -> Expr {
        Expr::Var(name.into())
    }
    /// `FUNC ARGS...`.
    pub fn call(func: Func, args: Vec<Expr>) -> Expr {
        Expr::Call(func, args)
    }
    /// `list "a" "b"...` of string constants.
    pub fn strings<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Expr {
        Expr::Call(
            Func::List,
            items
                .into_iter()
                .map(|item| Expr::str(item.as_ref()))
                .collect(),
        )
    }
    /// `get self KEY`.
    pub fn get(self, key: &str) -> Expr {
        Expr::Call(Func::Get, vec![self, Expr::str(key)])
    }
}

/// `not self`.
impl std::ops::Not for Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        Expr::Call(Func::Not, vec![self])
    }
}

/// A value in an object.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A constant subtree, written as YAML.
    Lit(Value),
    /// A value from an expression, as JSON text: `{{ include "<chart>.json" EXPR }}`.
    Json(Expr),
    /// An integer from an expression: `{{ EXPR | int64 }}`.
    Int(Expr),
    /// A map.
    Map(Vec<Entry>),
    /// A list.
    List(Vec<Item>),
}

/// One part of a map.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// `key: value`.
    Field(String, Node),
    /// `key:` with a values subtree as JSON text, left out when it is empty
    /// (`{{- with EXPR }}`).
    Yaml(String, Expr),
    /// A values map's own entries, merged in here (`range`, one line each).
    Splice(Expr),
    /// The entries of a map helper (`include ... | nindent`).
    Include(&'static Helper),
    /// Entries present only when the condition holds, or else others.
    If(Expr, Vec<Entry>, Vec<Entry>),
    /// An entry the chart writes and asogen's own output leaves out: the
    /// labels that say Helm installed the object.
    HelmOnly(Box<Entry>),
    /// A YAML comment for chart readers.
    Note(&'static str),
}

/// One part of a list.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// One item.
    One(Node),
    /// A values list's own items, appended here.
    Splice(Expr),
    /// Items present only when the condition holds, or else others.
    If(Expr, Vec<Item>, Vec<Item>),
}

/// Shorthands for descriptions.
pub fn field(key: impl Into<String>, node: Node) -> Entry {
    Entry::Field(key.into(), node)
}

/// `key: "text"`.
pub fn text(key: impl Into<String>, value: &str) -> Entry {
    Entry::Field(key.into(), Node::Lit(Value::from(value)))
}

/// `key: {{ include "<chart>.json" EXPR }}`.
pub fn json(key: impl Into<String>, expr: Expr) -> Entry {
    Entry::Field(key.into(), Node::Json(expr))
}

/// `key:` with a nested map.
pub fn map(key: impl Into<String>, entries: Vec<Entry>) -> Entry {
    Entry::Field(key.into(), Node::Map(entries))
}

/// `key:` with a list.
pub fn list(key: impl Into<String>, items: Vec<Item>) -> Entry {
    Entry::Field(key.into(), Node::List(items))
}

/// Entries present only when `condition` holds.
pub fn when(condition: Expr, entries: Vec<Entry>) -> Entry {
    Entry::If(condition, entries, Vec::new())
}

/// A list item that is a map.
pub fn item(entries: Vec<Entry>) -> Item {
    Item::One(Node::Map(entries))
}

/// One file of the chart's templates/ and the object it renders.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The file name under templates/.
    pub file: String,
    /// Rendered only when this holds (a whole-file `if`).
    pub when: Option<Expr>,
    /// The object.
    pub object: Vec<Entry>,
}
