//! Expressions over the chart's inputs (`.Values`, `.Release`, `.Chart`)
//! and a template's own variables: printed as Go template pipelines for the
//! chart, evaluated here with Helm's meaning for asogen's own output and
//! for the chart guard. Only the functions listed in [`Func`] exist, so
//! both sides stay small enough to keep in step.
//!
//! Numbers: a JSON integer stands for a Go `int64` (what `--set`, `int64`,
//! `len` and `add` give), a JSON float for a `float64` (what Helm makes of
//! every number in a values file); `kindOf` and the comparisons tell them
//! apart as Go does.

use base64::Engine as _;
use serde_json::Value;
use std::borrow::Cow;

pub use super::ast::Expr;
use super::ast::{Body, Helper};
pub use super::funcs::{EvalError, Func, go_print, to_text};

/// The string `include` yields for a helper.
pub fn eval_include(helper: &Helper, scope: &Scope) -> Result<String, EvalError> {
    match &helper.body {
        Body::Text(expr) => Ok(to_text(&expr.eval(scope)?)),
        Body::Flag(expr) => Ok(if truthy(&expr.eval(scope)?) {
            "true".into()
        } else {
            String::new()
        }),
        Body::Entries(_) => Err(EvalError(format!(
            "{} is a map helper; include it as entries",
            helper.name
        ))),
    }
}

/// What an expression is evaluated against.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    /// The merged values (`.Values`).
    pub values: &'a Value,
    /// `.Release.Namespace`.
    pub namespace: &'a str,
    /// `.Release.Name`.
    pub release_name: &'a str,
    /// `.Release.Service`.
    pub release_service: &'a str,
    /// `.Chart.Name`.
    pub chart_name: &'a str,
    /// `.Chart.Version`.
    pub chart_version: &'a str,
    /// `.Chart.AppVersion`.
    pub app_version: &'a str,
    /// `.Capabilities`: the APIs the target cluster serves.
    pub capabilities: &'a super::Capabilities,
    /// Whether a values key path names a secret, which `tpl` refuses to
    /// print (the chart's own judgement of its keys).
    pub is_secret: fn(&str) -> bool,
}

/// Go template truth: false, 0, "", nil and empty collections are false.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

fn lookup<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(root, |node, key| node.get(key))
}

/// A template's variables and its dot while a block of
/// [`super::stmt::Stmt`]s runs: Go's scoping, a variable lives until the
/// `end` of the block that declared it.
#[derive(Debug, Clone, Default)]
pub struct Locals {
    vars: Vec<(String, Value)>,
    dot: Option<Value>,
}

impl Locals {
    /// `$NAME`.
    fn get(&self, name: &str) -> Result<&Value, EvalError> {
        self.vars
            .iter()
            .rev()
            .find(|(known, _)| known == name)
            .map(|(_, value)| value)
            .ok_or_else(|| EvalError(format!("undefined variable \"${name}\"")))
    }

    /// `$NAME := VALUE`.
    pub fn declare(&mut self, name: &str, value: Value) {
        self.vars.push((name.into(), value));
    }

    /// `$NAME = VALUE`: the innermost variable of that name.
    pub fn assign(&mut self, name: &str, value: Value) -> Result<(), EvalError> {
        match self.vars.iter_mut().rev().find(|(known, _)| known == name) {
            Some((_, slot)) => {
                *slot = value;
                Ok(())
            }
            None => Err(EvalError(format!("undefined variable \"${name}\""))),
        }
    }

    /// Where the current block's variables start.
    pub fn depth(&self) -> usize {
        self.vars.len()
    }

    /// Ends the variables declared since `depth`.
    pub fn end_block(&mut self, depth: usize) {
        self.vars.truncate(depth);
    }

    /// Moves the dot; returns where it was.
    pub fn move_dot(&mut self, dot: Option<Value>) -> Option<Value> {
        std::mem::replace(&mut self.dot, dot)
    }
}

impl Expr {
    /// The value under Helm's semantics.
    pub fn eval(&self, scope: &Scope) -> Result<Value, EvalError> {
        self.eval_in(scope, &Locals::default())
    }

    /// The value under Helm's semantics, with a template's variables.
    pub fn eval_in(&self, scope: &Scope, locals: &Locals) -> Result<Value, EvalError> {
        if let Some(value) = self.place(scope, locals) {
            return Ok(value.clone());
        }
        Ok(match self {
            Expr::Lit(value) => value.clone(),
            Expr::Values(key) => lookup(scope.values, key.path())
                .cloned()
                .unwrap_or(Value::Null),
            Expr::Namespace => Value::from(scope.namespace),
            Expr::ReleaseName => Value::from(scope.release_name),
            Expr::ReleaseService => Value::from(scope.release_service),
            Expr::ChartName => Value::from(scope.chart_name),
            Expr::ChartVersion => Value::from(scope.chart_version),
            Expr::AppVersion => Value::from(scope.app_version),
            Expr::Include(helper) => Value::String(eval_include(helper, scope)?),
            Expr::ApiServed(api) => Value::Bool(scope.capabilities.has(api)),
            Expr::Call(func, args) => call(*func, args, scope, locals)?,
            Expr::Var(name) => locals.get(name)?.clone(),
            Expr::Dot => locals.dot.clone().ok_or_else(|| {
                EvalError("`.` is the chart's root context only inside a range".into())
            })?,
            Expr::AllValues => scope.values.clone(),
        })
    }

    /// The value an expression names rather than computes, borrowed: a
    /// variable, the values, `.`, `get` of a key a map so named holds, and
    /// `default` of a truthy value so named.
    /// Reading `get (get $root "a") "b"` then copies that key's value, not
    /// all of `$root` and of `a` on the way. None for anything else (a
    /// missing key, a non-map, an error), which [`Expr::eval_in`] computes
    /// with Helm's meaning.
    fn place<'a>(&'a self, scope: &'a Scope, locals: &'a Locals) -> Option<&'a Value> {
        match self {
            Expr::Var(name) => locals.get(name).ok(),
            Expr::AllValues => Some(scope.values),
            Expr::Dot => locals.dot.as_ref(),
            Expr::Call(Func::Get, args) => match args.as_slice() {
                [map, Expr::Lit(Value::String(key))] => {
                    map.place(scope, locals)?.as_object()?.get(key)
                }
                _ => None,
            },
            // `default D X` is X when X is truthy
            Expr::Call(Func::Default, args) => match args.as_slice() {
                [_, given] => given.place(scope, locals).filter(|v| truthy(v)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether the expression is true in a Go template `if`.
    pub fn holds(&self, scope: &Scope) -> Result<bool, EvalError> {
        Ok(truthy(&self.eval(scope)?))
    }

    /// The expression as a Go template pipeline (no surrounding braces).
    pub fn to_go(&self) -> String {
        match self {
            Expr::Call(func, args) => {
                let mut out = func.name().to_string();
                for arg in args {
                    out.push(' ');
                    out.push_str(&arg.to_go_operand());
                }
                // tpl evaluates its text against the chart's root context.
                if *func == Func::Tpl {
                    out.push_str(" $");
                }
                out
            }
            Expr::Include(helper) => format!("include \"{}\" .", helper.name),
            Expr::ApiServed(kind) => format!(".Capabilities.APIVersions.Has \"{kind}\""),
            other => other.to_go_operand(),
        }
    }

    /// The expression as one operand: calls with arguments in parentheses.
    pub(crate) fn to_go_operand(&self) -> String {
        match self {
            Expr::Lit(Value::Null) => "nil".into(),
            Expr::Lit(value) => value.to_string(),
            Expr::Values(key) => format!(".Values.{}", key.path()),
            Expr::Namespace => ".Release.Namespace".into(),
            Expr::ReleaseName => ".Release.Name".into(),
            Expr::ReleaseService => ".Release.Service".into(),
            Expr::ChartName => ".Chart.Name".into(),
            Expr::ChartVersion => ".Chart.Version".into(),
            Expr::AppVersion => ".Chart.AppVersion".into(),
            Expr::Var(name) => format!("${name}"),
            Expr::Dot => ".".into(),
            Expr::AllValues => "$.Values".into(),
            Expr::Call(func, args) if args.is_empty() => func.name().into(),
            Expr::Include(_) | Expr::ApiServed(_) | Expr::Call(..) => format!("({})", self.to_go()),
        }
    }
}

fn arity(func: Func, args: &[Expr], count: usize) -> Result<(), EvalError> {
    if args.len() == count {
        Ok(())
    } else {
        Err(EvalError(format!(
            "{} takes {count} arguments, got {}",
            func.name(),
            args.len()
        )))
    }
}

fn call<'a>(
    func: Func,
    args: &'a [Expr],
    scope: &'a Scope,
    locals: &'a Locals,
) -> Result<Value, EvalError> {
    let value = |index: usize| args[index].eval_in(scope, locals);
    // a named value is lent to what only reads it, not copied
    let lend = |arg: &'a Expr| match arg.place(scope, locals) {
        Some(value) => Ok(Cow::Borrowed(value)),
        None => arg.eval_in(scope, locals).map(Cow::Owned),
    };
    let lent = |index: usize| lend(&args[index]);
    let all = || -> Result<Vec<Cow<Value>>, EvalError> { args.iter().map(lend).collect() };
    match func {
        Func::Default => {
            arity(func, args, 2)?;
            let given = lent(1)?;
            if truthy(&given) {
                Ok(given.into_owned())
            } else {
                value(0)
            }
        }
        Func::Int64 => {
            arity(func, args, 1)?;
            Ok(Value::from(super::funcs::to_int64(&*lent(0)?)))
        }
        Func::ToString => {
            arity(func, args, 1)?;
            Ok(Value::String(super::funcs::go_string(&*lent(0)?)))
        }
        Func::B64enc => {
            arity(func, args, 1)?;
            let text = to_text(&value(0)?);
            Ok(Value::String(
                base64::engine::general_purpose::STANDARD.encode(text),
            ))
        }
        Func::Printf => {
            let format = to_text(&value(0)?);
            let rest = args[1..]
                .iter()
                .map(|arg| arg.eval_in(scope, locals))
                .collect::<Result<Vec<_>, _>>()?;
            printf(&format, &rest).map(Value::String)
        }
        Func::Join => {
            arity(func, args, 2)?;
            let separator = to_text(&value(0)?);
            Ok(Value::String(match value(1)? {
                Value::Array(items) => items
                    .iter()
                    .filter(|item| !item.is_null())
                    .map(to_text)
                    .collect::<Vec<_>>()
                    .join(&separator),
                Value::Null => String::new(),
                other => to_text(&other),
            }))
        }
        Func::Eq | Func::Ne => {
            arity(func, args, 2)?;
            let same = loosely_equal(&*lent(0)?, &*lent(1)?);
            Ok(Value::Bool(same == (func == Func::Eq)))
        }
        Func::Gt | Func::Lt | Func::Ge | Func::Le => {
            arity(func, args, 2)?;
            let order = super::funcs::go_compare(&*lent(0)?, &*lent(1)?)?;
            Ok(Value::Bool(match func {
                Func::Gt => order.is_gt(),
                Func::Lt => order.is_lt(),
                Func::Ge => order.is_ge(),
                _ => order.is_le(),
            }))
        }
        Func::And | Func::Or => {
            let mut last = Value::Null;
            for arg in args {
                last = arg.eval_in(scope, locals)?;
                if truthy(&last) != (func == Func::And) {
                    break;
                }
            }
            Ok(last)
        }
        Func::Not => {
            arity(func, args, 1)?;
            Ok(Value::Bool(!truthy(&*lent(0)?)))
        }
        Func::HasKey => {
            arity(func, args, 2)?;
            let key = to_text(&value(1)?);
            Ok(Value::Bool(
                lent(0)?
                    .as_object()
                    .is_some_and(|map| map.contains_key(&key)),
            ))
        }
        Func::Replace => {
            arity(func, args, 3)?;
            let (old, new) = (to_text(&value(0)?), to_text(&value(1)?));
            Ok(Value::String(to_text(&value(2)?).replace(&old, &new)))
        }
        Func::Ternary => {
            arity(func, args, 3)?;
            if truthy(&*lent(2)?) {
                value(0)
            } else {
                value(1)
            }
        }
        Func::Tpl => {
            arity(func, args, 1)?;
            tpl(&to_text(&value(0)?), scope.values, scope.is_secret).map(Value::String)
        }
        Func::Dig => {
            let (keys, rest) = args.split_at(args.len().saturating_sub(2));
            let [fallback, map] = rest else {
                return Err(EvalError("dig takes keys, a default and a map".into()));
            };
            // The map is lent: only the value found is copied. As sprig's
            // dig: a key missing gives the default, a value found on the way
            // that is not a map (null included) fails the call.
            let root = lend(map)?;
            let mut node: &Value = &root;
            for key in keys {
                let key = to_text(&key.eval_in(scope, locals)?);
                let Some(map) = node.as_object() else {
                    return Err(EvalError(format!(
                        "error calling dig: interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                        super::funcs::go_type_of(node)
                    )));
                };
                match map.get(&key) {
                    Some(next) => node = next,
                    None => return fallback.eval_in(scope, locals),
                }
            }
            Ok(node.clone())
        }
        _ => super::funcs::call(func, &all()?),
    }
}

/// The white space of Go templates (trim markers, padding in actions).
const GO_SPACE: [char; 4] = [' ', '\t', '\r', '\n'];

/// Whether `key` is a field name a Go template reads after a dot.
fn is_go_field(key: &str) -> bool {
    key.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The exported methods of Helm's values type (`common.Values`, Helm v4's
/// pkg/chart/common/values.go). A Go template calls a method of the
/// receiver's type before it reads a map key, and `.Values` is that type
/// (its nested maps are plain maps): `{{ .Values.YAML }}` prints every
/// value, secrets included, and `.Values.AsMap` all of them as a map,
/// whatever the values' own keys. `tpl` refuses a key path with any of
/// these names, at any depth, and so does the chart guard.
pub const VALUES_METHODS: [&str; 5] = ["YAML", "Table", "AsMap", "Encode", "PathValue"];

/// The help for a templated value `tpl` refuses (asogen's and the chart
/// guard's).
pub const TPL_HELP: &str = "write the value itself, or {{ .Values.KEY }} naming a string, number or boolean value that is set and is not a secret";

/// Why `tpl` refuses an action of the `{{ .Values.KEY }}` form although
/// Helm would evaluate it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A key is named like a method of Helm's values ([`VALUES_METHODS`]).
    Method,
    /// The key path names a secret (see [`Scope::is_secret`]).
    Secret,
    /// The value is a map or a list: Helm prints everything under it.
    Collection,
}

impl Refusal {
    /// The reason, with one `%s` standing for the action (the chart guard
    /// prints it with `printf`; asogen fills it in).
    pub fn text(self) -> String {
        match self {
            Refusal::Method => format!(
                "%s names a method of Helm's values ({}), which Helm calls instead of reading a key: .Values.YAML prints every value, secrets included",
                VALUES_METHODS.join(", ")
            ),
            Refusal::Secret => {
                "%s names a secret value, which must not reach the pod spec".into()
            }
            Refusal::Collection => {
                "%s is a map or a list, which Helm prints with everything under it, secrets included".into()
            }
        }
    }

    fn error(self, path: &str) -> EvalError {
        EvalError(
            self.text()
                .replacen("%s", &format!("{{{{ .Values.{path} }}}}"), 1),
        )
    }
}

/// Helm's `tpl` for the one form values use: text with `{{ .Values.KEY }}`
/// actions (trim markers allowed), with Helm's meaning: a missing or null
/// key prints nothing, a string, number or boolean prints as Go's `%v`
/// (`1e+06`), a missing map on the way is an error, and `<no value>` is
/// removed from the result. Any other action is an error naming it, and
/// so is an action Helm would evaluate otherwise than a key or to a
/// secret ([`Refusal`]); the chart guard refuses the same ones
/// ([`TEMPLATE_ACTION`]).
pub fn tpl(text: &str, values: &Value, is_secret: fn(&str) -> bool) -> Result<String, EvalError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let mut before = &rest[..start];
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| EvalError(format!("{text:?}: an action is not closed with }}}}")))?;
        let mut action = &after[..end];
        // A trim marker is a dash beside white space: `{{- ` and ` -}}`.
        if let Some(trimmed) = action.strip_prefix('-')
            && trimmed.starts_with(GO_SPACE)
        {
            before = before.trim_end_matches(GO_SPACE);
            action = trimmed;
        }
        let trim_after = action
            .strip_suffix('-')
            .is_some_and(|rest| rest.ends_with(GO_SPACE));
        if trim_after {
            action = &action[..action.len() - 1];
        }
        out.push_str(before);
        let action = action.trim_matches(GO_SPACE);
        let path = action
            .strip_prefix(".Values.")
            .filter(|path| path.split('.').all(is_go_field))
            .ok_or_else(|| {
                EvalError(format!(
                    "{{{{ {action} }}}} is not supported here: only {{{{ .Values.KEY }}}} substitutions are"
                ))
            })?;
        if path.split('.').any(|key| VALUES_METHODS.contains(&key)) {
            return Err(Refusal::Method.error(path));
        }
        if is_secret(path) {
            return Err(Refusal::Secret.error(path));
        }
        out.push_str(&tpl_value(values, path)?);
        rest = &after[end + 2..];
        if trim_after {
            rest = rest.trim_start_matches(GO_SPACE);
        }
    }
    out.push_str(rest);
    // Helm's tpl drops every `<no value>` from what it renders.
    Ok(out.replace("<no value>", ""))
}

/// The regular expression (RE2 and Rust alike) of the one action `tpl`
/// evaluates; the chart guard refuses a templated value with any other.
pub const TEMPLATE_ACTION: &str =
    r"\{\{(-[ \t\r\n])?[ \t\r\n]*\.Values(\.[A-Za-z_][A-Za-z0-9_]*)+[ \t\r\n]*([ \t\r\n]-)?\}\}";

/// What `{{ .Values.PATH }}` prints under Helm (missingkey=zero), for a
/// value that is not a map or a list.
fn tpl_value(values: &Value, path: &str) -> Result<String, EvalError> {
    let keys: Vec<&str> = path.split('.').collect();
    let mut node = values;
    for (depth, key) in keys.iter().enumerate() {
        match node {
            Value::Object(map) => match map.get(*key) {
                Some(next) => node = next,
                None if depth + 1 == keys.len() => return Ok("<no value>".into()),
                None => {
                    return Err(EvalError(format!(
                        "{{{{ .Values.{path} }}}}: nil pointer evaluating interface {{}}.{}",
                        keys[depth + 1]
                    )));
                }
            },
            Value::Null => {
                return Err(EvalError(format!(
                    "{{{{ .Values.{path} }}}}: nil pointer evaluating interface {{}}.{key}"
                )));
            }
            _ => {
                return Err(EvalError(format!(
                    "{{{{ .Values.{path} }}}}: can't evaluate field {key} in type interface {{}}"
                )));
            }
        }
    }
    Ok(match node {
        Value::Null => "<no value>".into(),
        Value::Object(_) | Value::Array(_) => return Err(Refusal::Collection.error(path)),
        other => go_print(other),
    })
}

fn loosely_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn printf(format: &str, args: &[Value]) -> Result<String, EvalError> {
    let mut out = String::with_capacity(format.len() + 16);
    let mut args = args.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(verb @ ('s' | 'd' | 'v')) => {
                let arg = args
                    .next()
                    .ok_or_else(|| EvalError(format!("printf {format:?}: too few arguments")))?;
                if verb == 'd' && !arg.as_f64().is_some_and(|f| f.fract() == 0.0) {
                    return Err(EvalError(format!(
                        "printf {format:?}: %d needs an integer, got {arg}"
                    )));
                }
                out.push_str(&to_text(arg));
            }
            Some('q') => match args.next() {
                Some(Value::String(text)) => out.push_str(&super::funcs::go_quote(text)),
                other => {
                    return Err(EvalError(format!(
                        "printf {format:?}: %q needs a string, got {other:?}"
                    )));
                }
            },
            other => {
                return Err(EvalError(format!(
                    "printf {format:?}: unsupported verb {other:?}"
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ValuesPath;
    use crate::test_scope as scope;
    use serde_json::json;

    const METRICS_PORT: ValuesPath = ValuesPath::new("metrics.port");

    #[test]
    fn prints_go_pipelines() {
        let expr = Expr::printf("0.0.0.0:%d", vec![Expr::value(METRICS_PORT).int64()])
            .or_default(Expr::Lit(Value::Null));
        assert_eq!(
            expr.to_go(),
            r#"default nil (printf "0.0.0.0:%d" (int64 .Values.metrics.port))"#
        );
    }

    #[test]
    fn tpl_prints_what_helm_prints() {
        // Each expectation is what Helm v4's tpl rendered for it.
        let values = json!({
            "n": 1000000, "m": 123456, "b": true, "nil": null, "s": "t",
            "list": ["a", "b c"], "map": {"q": 5, "mode": "disabled", "z": [{"name": "x"}]}
        });
        let tpl = |text: &str| tpl(text, &values, crate::test_is_secret);
        assert_eq!(tpl("r/{{ .Values.x }}/e").unwrap(), "r//e");
        assert_eq!(tpl("r/{{ .Values.nil }}/e").unwrap(), "r//e");
        assert_eq!(
            tpl("r/{{ .Values.n }}/{{ .Values.m }}").unwrap(),
            "r/1e+06/123456"
        );
        assert_eq!(tpl("{{ .Values.b }}").unwrap(), "true");
        assert_eq!(go_print(&values["list"]), "[a b c]");
        assert_eq!(
            go_print(&values["map"]),
            "map[mode:disabled q:5 z:[map[name:x]]]"
        );
        // What Helm would print otherwise than a key, or a secret: refused.
        for refused in [
            "{{ .Values.list }}",
            "{{ .Values.map }}",
            "{{ .Values.YAML }}",
            "{{ .Values.map.AsMap }}",
            "{{ .Values.azureClientSecret }}",
            "{{ .Values.map.mytoken }}",
        ] {
            assert!(tpl(refused).is_err(), "{refused}");
        }
        assert_eq!(tpl("r/a<no value>b/e").unwrap(), "r/ab/e");
        assert_eq!(tpl("a  {{- .Values.s -}}  b").unwrap(), "atb");
        assert!(tpl("{{ .Values.x.y }}").is_err());
        assert!(tpl("{{ .Values.s.y }}").is_err());
        assert!(tpl("{{ }}").is_err());
        assert!(tpl("{{ .Chart.Name }}").is_err());
        assert!(tpl("{{-3}}").is_err());
        assert_eq!(go_print(&Value::from(1.5)), "1.5");
        assert_eq!(go_print(&Value::from(0.00001)), "1e-05");
        assert_eq!(go_print(&Value::from(1234567.0)), "1.234567e+06");
    }

    #[test]
    fn the_guards_functions_evaluate_through_expressions() {
        let values = json!({"metrics": {"port": 8443.0}, "s": "0x10", "f": 1000000.0});
        let scope = scope(&values);
        let eval = |e: Expr| e.eval(&scope);
        let ge = |a: Expr, b: Expr| Expr::call(Func::Ge, vec![a, b]);
        let le = |a: Expr, b: Expr| Expr::call(Func::Le, vec![a, b]);
        assert_eq!(eval(ge(Expr::int(2), Expr::int(2))).unwrap(), true);
        assert_eq!(eval(le(Expr::int(3), Expr::int(2))).unwrap(), false);
        // A values file's numbers are float64: Go compares no float with
        // an int, which is why the guard converts with int64 first.
        let port = || Expr::AllValues.get("metrics").get("port");
        assert!(eval(ge(port(), Expr::int(1))).is_err());
        assert_eq!(eval(ge(port().int64(), Expr::int(1))).unwrap(), true);
        assert_eq!(eval(Expr::AllValues.get("s").int64()).unwrap(), 16);
        let to_string = |e: Expr| Expr::call(Func::ToString, vec![e]);
        assert_eq!(eval(to_string(Expr::AllValues.get("f"))).unwrap(), "1e+06");
        assert_eq!(eval(to_string(Expr::Lit(Value::Null))).unwrap(), "<nil>");
        assert_eq!(
            eval(Expr::printf("%q!", vec![Expr::str("a\"b\n")])).unwrap(),
            r#""a\"b\n"!"#
        );
        assert!(eval(Expr::printf("%q", vec![Expr::int(1)])).is_err());
        // `.` and variables exist only where actions made them.
        assert!(eval(Expr::Dot).is_err());
        assert!(eval(Expr::var("x")).is_err());
        assert_eq!(
            Expr::AllValues
                .get("m")
                .or_default(Expr::call(Func::Dict, Vec::new()))
                .to_go(),
            r#"default dict (get $.Values "m")"#
        );
    }

    #[test]
    fn evaluates_with_helm_meaning() {
        const AZURE_SYNC_PERIOD: ValuesPath = ValuesPath::new("azureSyncPeriod");
        const AZURE_TARGET_NAMESPACES: ValuesPath = ValuesPath::new("azureTargetNamespaces");
        const NODE_SELECTOR: ValuesPath = ValuesPath::new("nodeSelector");
        const STRATEGY: ValuesPath = ValuesPath::new("strategy");
        const STRATEGY_ROLLING_UPDATE: ValuesPath = ValuesPath::new("strategy.rollingUpdate");
        const STRATEGY_ROLLING_UPDATE_MAX_SURGE: ValuesPath =
            ValuesPath::new("strategy.rollingUpdate.maxSurge");
        let values = json!({
            "azureSyncPeriod": "",
            "metrics": {"port": 8443.0},
            "azureTargetNamespaces": ["x", null, "y"],
            "nodeSelector": {"k": 1}
        });
        let scope = scope(&values);
        let eval = |e: Expr| e.eval(&scope).unwrap();
        assert_eq!(
            eval(Expr::value(AZURE_SYNC_PERIOD).or_default(Expr::str("d"))),
            "d"
        );
        assert_eq!(
            eval(Expr::value(STRATEGY_ROLLING_UPDATE_MAX_SURGE)),
            Value::Null
        );
        assert_eq!(
            eval(Expr::value(STRATEGY_ROLLING_UPDATE_MAX_SURGE).or_default(Expr::int(1))),
            1
        );
        assert_eq!(
            Expr::dig(STRATEGY_ROLLING_UPDATE_MAX_SURGE, STRATEGY, Expr::int(1)).to_go(),
            r#"dig "rollingUpdate" "maxSurge" 1 (default dict .Values.strategy)"#
        );
        // sprig's dig: a null (or any value that is not a map) on the way
        // fails the call; a null map to dig in reads as empty here, as
        // `default dict` makes it
        let nulls = json!({"strategy": {"rollingUpdate": null}});
        let nulls = crate::test_scope(&nulls);
        let error = Expr::Call(
            Func::Dig,
            vec![
                Expr::str("rollingUpdate"),
                Expr::str("maxSurge"),
                Expr::int(1),
                Expr::value(STRATEGY),
            ],
        )
        .eval(&nulls)
        .unwrap_err();
        assert!(
            error
                .0
                .contains("interface {} is nil, not map[string]interface {}"),
            "{error:?}"
        );
        assert_eq!(
            Expr::dig(
                STRATEGY_ROLLING_UPDATE_MAX_SURGE,
                STRATEGY_ROLLING_UPDATE,
                Expr::int(1)
            )
            .eval(&nulls)
            .unwrap(),
            1
        );
        assert_eq!(
            eval(Expr::printf(
                "p:%d",
                vec![Expr::value(METRICS_PORT).int64()]
            )),
            "p:8443"
        );
        assert_eq!(
            eval(Expr::Call(
                Func::Join,
                vec![Expr::str(","), Expr::value(AZURE_TARGET_NAMESPACES)]
            )),
            "x,y"
        );
        assert_eq!(
            eval(Expr::Call(Func::B64enc, vec![Expr::str("true")])),
            "dHJ1ZQ=="
        );
        assert_eq!(
            eval(Expr::Call(
                Func::Dig,
                vec![Expr::str("k"), Expr::int(7), Expr::value(NODE_SELECTOR)]
            )),
            1
        );
        assert_eq!(
            eval(Expr::all(vec![
                Expr::value(NODE_SELECTOR),
                Expr::value(AZURE_SYNC_PERIOD)
            ])),
            ""
        );
        assert!(
            Expr::printf("%d", vec![Expr::value(AZURE_SYNC_PERIOD)])
                .eval(&scope)
                .is_err()
        );
    }
}
