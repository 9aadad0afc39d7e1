//! Template actions that compute rather than print: variables, `if`,
//! `range` and `fail`, for a `define` whose work is to check (the chart
//! guard). Printed as Go template actions, one a line, each trimming the
//! line break before it, so the `define` prints nothing unless it fails;
//! run here with Go's scoping and Helm's meaning.

use serde_json::Value;

use super::expr::{EvalError, Expr, Locals, Scope, truthy};

/// One action.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `$NAME := EXPR`: a new variable, until the end of the block.
    Let(String, Expr),
    /// `$NAME = EXPR`: a variable declared before.
    Set(String, Expr),
    /// `if EXPR` ... `else` ... `end` (an `else` that is one `if` prints
    /// as `else if`).
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `range $KEY, $VALUE := EXPR` (or `range $VALUE :=`, or `range
    /// EXPR` with the item as the dot): a list's items in order, a map's
    /// entries by sorted key; nothing for null.
    Range(Range),
    /// `fail EXPR`: Helm stops rendering with EXPR as the error.
    Fail(Expr),
}

/// A `range` action.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    /// `$KEY`: the index or the map key.
    pub key: Option<String>,
    /// `$VALUE`: the item; without it the item is the dot.
    pub value: Option<String>,
    /// What is iterated over.
    pub over: Expr,
    /// The body, run once per item.
    pub body: Vec<Stmt>,
}

/// Shorthands that read like the actions they print.
impl Stmt {
    /// `$NAME := EXPR`.
    pub fn let_(name: &str, expr: Expr) -> Stmt {
        Stmt::Let(name.into(), expr)
    }
    /// `$NAME = EXPR`.
    pub fn set(name: &str, expr: Expr) -> Stmt {
        Stmt::Set(name.into(), expr)
    }
    /// `if EXPR` with no `else`.
    pub fn when(condition: Expr, then: Vec<Stmt>) -> Stmt {
        Stmt::If(condition, then, Vec::new())
    }
    /// `range $VALUE := EXPR`.
    pub fn each(value: &str, over: Expr, body: Vec<Stmt>) -> Stmt {
        Stmt::Range(Range {
            key: None,
            value: Some(value.into()),
            over,
            body,
        })
    }
    /// `range $KEY, $VALUE := EXPR`.
    pub fn each_entry(key: &str, value: &str, over: Expr, body: Vec<Stmt>) -> Stmt {
        Stmt::Range(Range {
            key: Some(key.into()),
            value: Some(value.into()),
            over,
            body,
        })
    }
}

/// The actions as template text, one a line.
pub fn print(body: &[Stmt]) -> String {
    let mut out = String::new();
    print_into(body, &mut out);
    out
}

fn line(out: &mut String, action: &str) {
    out.push_str("{{- ");
    out.push_str(action);
    out.push_str(" }}\n");
}

fn print_into(body: &[Stmt], out: &mut String) {
    for stmt in body {
        match stmt {
            Stmt::Let(name, expr) => line(out, &format!("${name} := {}", expr.to_go())),
            Stmt::Set(name, expr) => line(out, &format!("${name} = {}", expr.to_go())),
            Stmt::If(condition, then, otherwise) => {
                line(out, &format!("if {}", condition.to_go()));
                print_if_rest(then, otherwise, out);
            }
            Stmt::Range(range) => {
                let over = range.over.to_go();
                let head = match (&range.key, &range.value) {
                    (Some(key), Some(value)) => format!("range ${key}, ${value} := {over}"),
                    (None, Some(value)) => format!("range ${value} := {over}"),
                    _ => format!("range {over}"),
                };
                line(out, &head);
                print_into(&range.body, out);
                line(out, "end");
            }
            Stmt::Fail(expr) => line(out, &format!("fail {}", expr.to_go_operand())),
        }
    }
}

fn print_if_rest(then: &[Stmt], otherwise: &[Stmt], out: &mut String) {
    print_into(then, out);
    match otherwise {
        [] => {}
        [Stmt::If(condition, then, otherwise)] => {
            line(out, &format!("else if {}", condition.to_go()));
            return print_if_rest(then, otherwise, out);
        }
        _ => {
            line(out, "else");
            print_into(otherwise, out);
        }
    }
    line(out, "end");
}

/// Runs the actions: `Ok(Some(message))` when one calls `fail`.
pub fn run(body: &[Stmt], scope: &Scope) -> Result<Option<String>, EvalError> {
    let mut locals = Locals::default();
    run_block(body, scope, &mut locals)
}

fn run_block(
    body: &[Stmt],
    scope: &Scope,
    locals: &mut Locals,
) -> Result<Option<String>, EvalError> {
    let depth = locals.depth();
    let outcome = run_stmts(body, scope, locals);
    locals.end_block(depth);
    outcome
}

fn run_stmts(
    body: &[Stmt],
    scope: &Scope,
    locals: &mut Locals,
) -> Result<Option<String>, EvalError> {
    for stmt in body {
        let failed = match stmt {
            Stmt::Let(name, expr) => {
                let value = expr.eval_in(scope, locals)?;
                locals.declare(name, value);
                None
            }
            Stmt::Set(name, expr) => {
                let value = expr.eval_in(scope, locals)?;
                locals.assign(name, value)?;
                None
            }
            Stmt::If(condition, then, otherwise) => {
                let chosen = if truthy(&condition.eval_in(scope, locals)?) {
                    then
                } else {
                    otherwise
                };
                run_block(chosen, scope, locals)?
            }
            Stmt::Range(range) => run_range(range, scope, locals)?,
            Stmt::Fail(expr) => Some(super::expr::to_text(&expr.eval_in(scope, locals)?)),
        };
        if failed.is_some() {
            return Ok(failed);
        }
    }
    Ok(None)
}

fn run_range(
    range: &Range,
    scope: &Scope,
    locals: &mut Locals,
) -> Result<Option<String>, EvalError> {
    let items: Vec<(Value, Value)> = match range.over.eval_in(scope, locals)? {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| (Value::from(i), item))
            .collect(),
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
                .into_iter()
                .map(|(key, item)| (Value::from(key), item))
                .collect()
        }
        other => {
            return Err(EvalError(format!(
                "range can't iterate over {}",
                super::expr::go_print(&other)
            )));
        }
    };
    for (key, item) in items {
        let depth = locals.depth();
        if let Some(name) = &range.key {
            locals.declare(name, key);
        }
        let outer = match &range.value {
            Some(name) => {
                locals.declare(name, item.clone());
                None
            }
            None => Some(locals.move_dot(Some(item.clone()))),
        };
        let outcome = run_block(&range.body, scope, locals);
        if let Some(dot) = outer {
            locals.move_dot(dot);
        }
        locals.end_block(depth);
        if let Some(message) = outcome? {
            return Ok(Some(message));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Func;
    use crate::test_scope as scope;
    use serde_json::json;

    /// Counts the items of `.Values.xs` above 1 and fails naming them.
    fn counting() -> Vec<Stmt> {
        vec![
            Stmt::let_("big", Expr::strings::<&str>([])),
            Stmt::each(
                "x",
                Expr::AllValues.get("xs"),
                vec![Stmt::If(
                    Expr::call(Func::Gt, vec![Expr::var("x"), Expr::int(1)]),
                    vec![Stmt::set(
                        "big",
                        Expr::call(Func::Append, vec![Expr::var("big"), Expr::var("x")]),
                    )],
                    vec![Stmt::when(
                        Expr::call(Func::Lt, vec![Expr::var("x"), Expr::int(0)]),
                        vec![Stmt::Fail(Expr::str("negative"))],
                    )],
                )],
            ),
            Stmt::when(
                Expr::var("big"),
                vec![Stmt::Fail(Expr::printf(
                    "%d above 1: %s",
                    vec![
                        Expr::call(Func::Len, vec![Expr::var("big")]),
                        Expr::call(Func::Join, vec![Expr::str(","), Expr::var("big")]),
                    ],
                ))],
            ),
        ]
    }

    #[test]
    fn prints_one_action_a_line() {
        assert_eq!(
            print(&counting()),
            r#"{{- $big := list }}
{{- range $x := get $.Values "xs" }}
{{- if gt $x 1 }}
{{- $big = append $big $x }}
{{- else if lt $x 0 }}
{{- fail "negative" }}
{{- end }}
{{- end }}
{{- if $big }}
{{- fail (printf "%d above 1: %s" (len $big) (join "," $big)) }}
{{- end }}
"#
        );
    }

    #[test]
    fn runs_with_gos_scoping() {
        let run_on = |values: Value| run(&counting(), &scope(&values));
        assert_eq!(
            run_on(json!({"xs": [1, 2, 3]})).unwrap().unwrap(),
            "2 above 1: 2,3"
        );
        assert_eq!(run_on(json!({"xs": [0, 1]})).unwrap(), None);
        assert_eq!(run_on(json!({"xs": null})).unwrap(), None);
        // `get` gives "" for a missing key, and Go ranges over no string.
        assert!(run_on(json!({})).is_err());
        assert_eq!(run_on(json!({"xs": [2, -1]})).unwrap().unwrap(), "negative");
        assert!(run_on(json!({"xs": "text"})).is_err());
        // A variable ends with its block; `=` needs one declared before.
        let scoped = vec![
            Stmt::when(Expr::Lit(json!(true)), vec![Stmt::let_("y", Expr::int(1))]),
            Stmt::Fail(Expr::var("y")),
        ];
        assert!(run(&scoped, &scope(&json!({}))).is_err());
        assert!(run(&[Stmt::set("z", Expr::int(1))], &scope(&json!({}))).is_err());
        // A map's entries by sorted key; the dot is the item.
        let keys = vec![
            Stmt::let_("seen", Expr::strings::<&str>([])),
            Stmt::each_entry(
                "k",
                "v",
                Expr::AllValues,
                vec![Stmt::set(
                    "seen",
                    Expr::call(Func::Append, vec![Expr::var("seen"), Expr::var("k")]),
                )],
            ),
            Stmt::Range(Range {
                key: None,
                value: None,
                over: Expr::AllValues.get("b"),
                body: vec![Stmt::set(
                    "seen",
                    Expr::call(Func::Append, vec![Expr::var("seen"), Expr::Dot]),
                )],
            }),
            Stmt::Fail(Expr::call(
                Func::Join,
                vec![Expr::str(" "), Expr::var("seen")],
            )),
        ];
        assert_eq!(
            run(&keys, &scope(&json!({"b": ["x", "y"], "a": 1})))
                .unwrap()
                .unwrap(),
            "a b x y"
        );
    }
}
