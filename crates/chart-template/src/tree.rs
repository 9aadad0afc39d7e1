//! The shape of an object: maps, lists and scalars whose keys are fixed and
//! whose contents are constants or [`Expr`]essions, some present only under
//! a condition. [`print`](Resource::template) writes it as a chart template
//! in `helm create` style; [`eval`](Resource::eval) builds the object Helm
//! would render from that template.

use std::borrow::Cow;

use serde_json::Value;

use crate::emit::Doc;

use super::ast::{Body, Helper};
pub use super::ast::{Entry, Item, Node, Resource, field, item, json, list, map, text, when};
use super::expr::{EvalError, Expr, Scope, truthy};

/// The `key: "text"` entries of a map that hold whatever the values say,
/// map helpers included (conditional entries and computed values left
/// out): what the chart itself writes into labels or annotations.
pub fn literal_fields(entries: &[Entry]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in entries {
        match entry {
            Entry::Field(key, Node::Lit(Value::String(text))) => {
                out.push((key.clone(), text.clone()));
            }
            Entry::Include(helper) => out.extend(literal_fields(helper.entries())),
            _ => {}
        }
    }
    out
}

impl Resource {
    /// The object Helm renders from the template, or None when the
    /// resource's condition does not hold.
    pub fn eval(&self, scope: &Scope) -> Result<Option<Value>, EvalError> {
        Ok(self.eval_doc(scope)?.map(Doc::into_value))
    }

    /// [`eval`](Resource::eval) as a document that borrows the
    /// description's constants, every map's keys sorted: what is written
    /// as YAML without building the object as JSON first.
    pub fn eval_doc(&self, scope: &Scope) -> Result<Option<Doc<'_>>, EvalError> {
        if let Some(condition) = &self.when
            && !condition.holds(scope)?
        {
            return Ok(None);
        }
        let mut map = Vec::with_capacity(self.object.len());
        eval_entries(&self.object, scope, &mut map)?;
        Ok(Some(Doc::Map(sorted(map))))
    }

    /// The chart template, after `header` (a template comment line);
    /// every inserted value goes through the helper named `json` (see
    /// [`print_helpers`]).
    pub fn template(&self, header: &str, json: &str) -> String {
        let mut out = String::from(header);
        out.push('\n');
        if let Some(condition) = &self.when {
            out.push_str(&format!("{{{{- if {} }}}}\n", condition.to_go()));
            print_entries(&self.object, 0, json, &mut out);
            out.push_str("{{- end }}\n");
        } else {
            print_entries(&self.object, 0, json, &mut out);
        }
        out
    }
}

/// A map's entries as they were added, keys sorted; a key added twice
/// keeps its last value (as a JSON map's insert does).
fn sorted<'r>(mut entries: Vec<(Cow<'r, str>, Doc<'r>)>) -> Vec<(Cow<'r, str>, Doc<'r>)> {
    if entries.is_sorted_by(|a, b| a.0 < b.0) {
        return entries;
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(Cow<str>, Doc)> = Vec::with_capacity(entries.len());
    for (key, doc) in entries {
        match out.last_mut() {
            Some(last) if last.0 == key => last.1 = doc,
            _ => out.push((key, doc)),
        }
    }
    out
}

/// A constant as written: borrowed when its maps' keys are already sorted.
fn constant(value: &Value) -> Doc<'_> {
    fn keys_sorted(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.keys().is_sorted() && map.values().all(keys_sorted),
            Value::Array(items) => items.iter().all(keys_sorted),
            _ => true,
        }
    }
    if keys_sorted(value) {
        Doc::Json(Cow::Borrowed(value))
    } else {
        computed(value.clone())
    }
}

/// A computed value as written: its maps' keys sorted.
fn computed(mut value: Value) -> Doc<'static> {
    value.sort_all_objects();
    Doc::Json(Cow::Owned(value))
}

/// Null: what a map or list left with nothing reads as.
static NULL: Value = Value::Null;

fn eval_entries<'r>(
    entries: &'r [Entry],
    scope: &Scope,
    map: &mut Vec<(Cow<'r, str>, Doc<'r>)>,
) -> Result<(), EvalError> {
    for entry in entries {
        match entry {
            Entry::Field(key, node) => {
                map.push((Cow::Borrowed(key), eval_node(node, scope)?));
            }
            Entry::Yaml(key, expr) => {
                let value = expr.eval(scope)?;
                if truthy(&value) {
                    map.push((Cow::Borrowed(key), computed(value)));
                }
            }
            Entry::Splice(expr) => {
                if let Value::Object(spliced) = expr.eval(scope)? {
                    map.extend(spliced.into_iter().map(
                        |(key, value)| -> (Cow<'r, str>, Doc<'r>) {
                            (Cow::Owned(key), computed(value))
                        },
                    ));
                }
            }
            Entry::Include(helper) => eval_entries(helper.entries(), scope, map)?,
            Entry::If(condition, then, otherwise) => {
                let chosen = if condition.holds(scope)? {
                    then
                } else {
                    otherwise
                };
                eval_entries(chosen, scope, map)?;
            }
            Entry::HelmOnly(inner) => {
                if scope.release_service == "Helm" {
                    eval_entries(std::slice::from_ref(inner), scope, map)?;
                }
            }
            Entry::Note(_) => {}
        }
    }
    Ok(())
}

fn eval_items<'r>(
    items: &'r [Item],
    scope: &Scope,
    out: &mut Vec<Doc<'r>>,
) -> Result<(), EvalError> {
    for item in items {
        match item {
            Item::One(node) => out.push(eval_node(node, scope)?),
            Item::Splice(expr) => {
                if let Value::Array(spliced) = expr.eval(scope)? {
                    out.extend(
                        spliced
                            .into_iter()
                            .map(|value| -> Doc<'r> { computed(value) }),
                    );
                }
            }
            Item::If(condition, then, otherwise) => {
                let chosen = if condition.holds(scope)? {
                    then
                } else {
                    otherwise
                };
                eval_items(chosen, scope, out)?;
            }
        }
    }
    Ok(())
}

fn eval_node<'r>(node: &'r Node, scope: &Scope) -> Result<Doc<'r>, EvalError> {
    Ok(match node {
        Node::Lit(value) | Node::Json(Expr::Lit(value)) => constant(value),
        Node::Json(expr) => computed(expr.eval(scope)?),
        Node::Int(expr) => computed(expr.clone().int64().eval(scope)?),
        // A key whose every entry or item was left out reads as null.
        Node::Map(entries) => {
            let mut map = Vec::with_capacity(entries.len());
            eval_entries(entries, scope, &mut map)?;
            if map.is_empty() {
                Doc::Json(Cow::Borrowed(&NULL))
            } else {
                Doc::Map(sorted(map))
            }
        }
        Node::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            eval_items(items, scope, &mut out)?;
            if out.is_empty() {
                Doc::Json(Cow::Borrowed(&NULL))
            } else {
                Doc::List(out)
            }
        }
    })
}

fn pad(out: &mut String, width: usize) {
    out.extend(std::iter::repeat_n(' ', width));
}

fn action(out: &mut String, width: usize, body: &str) {
    pad(out, width);
    out.push_str("{{- ");
    out.push_str(body);
    out.push_str(" }}\n");
}

/// A map key, quoted when YAML would read it as something else.
fn key_text(key: &str) -> String {
    let plain = crate::emit::to_yaml(&Value::from(key));
    plain.trim_end().to_string()
}

/// `include "<json>" OPERAND`: every inserted value is JSON text (never
/// `toYaml`, whose text YAML may read back otherwise).
fn json_of(json: &str, operand: &str) -> String {
    format!("{{{{ include \"{json}\" {operand} }}}}")
}

/// A values map's entries, written in place, one `"key": value` line each.
fn print_map_splice(expr: &Expr, width: usize, json: &str, out: &mut String) {
    action(
        out,
        width,
        &format!("range $key, $value := {}", expr.to_go()),
    );
    pad(out, width);
    out.push_str(&format!(
        "{}: {}\n",
        json_of(json, "$key"),
        json_of(json, "$value")
    ));
    action(out, width, "end");
}

/// A values list's items, written in place, one `- item` line each.
fn print_list_splice(expr: &Expr, width: usize, json: &str, out: &mut String) {
    action(out, width, &format!("range {}", expr.to_go()));
    pad(out, width);
    out.push_str(&format!("- {}\n", json_of(json, ".")));
    action(out, width, "end");
}

/// A constant as YAML lines at `width` (its first line follows `prefix`).
fn print_lit(value: &Value, width: usize, out: &mut String) {
    let yaml = crate::emit::to_yaml(value);
    for line in yaml.lines() {
        pad(out, width);
        out.push_str(line);
        out.push('\n');
    }
}

fn is_scalar(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => true,
    }
}

/// The text after `key:` or `-` for a node written on one line, if it is.
fn inline(node: &Node, json: &str) -> Option<String> {
    match node {
        Node::Lit(value) if is_scalar(value) => {
            Some(crate::emit::to_yaml(value).trim_end().to_string())
        }
        Node::Json(expr) => Some(json_of(json, &expr.to_go_operand())),
        Node::Int(expr) => Some(format!("{{{{ {} | int64 }}}}", expr.to_go())),
        _ => None,
    }
}

fn print_entries(entries: &[Entry], width: usize, json: &str, out: &mut String) {
    for entry in entries {
        match entry {
            Entry::Field(key, node) => {
                pad(out, width);
                out.push_str(&key_text(key));
                out.push(':');
                match inline(node, json) {
                    Some(text) => {
                        out.push(' ');
                        out.push_str(&text);
                        out.push('\n');
                    }
                    None => {
                        out.push('\n');
                        print_block(node, width, json, out);
                    }
                }
            }
            Entry::Yaml(key, expr) => {
                action(out, width, &format!("with {}", expr.to_go()));
                pad(out, width);
                out.push_str(&key_text(key));
                out.push_str(": ");
                out.push_str(&json_of(json, "."));
                out.push('\n');
                action(out, width, "end");
            }
            Entry::Splice(expr) => print_map_splice(expr, width, json, out),
            Entry::Include(helper) => action(
                out,
                width,
                &format!("include \"{}\" . | nindent {width}", helper.name),
            ),
            Entry::If(condition, then, otherwise) => {
                action(out, width, &format!("if {}", condition.to_go()));
                print_entries(then, width, json, out);
                if !otherwise.is_empty() {
                    action(out, width, "else");
                    print_entries(otherwise, width, json, out);
                }
                action(out, width, "end");
            }
            Entry::HelmOnly(inner) => print_entries(std::slice::from_ref(inner), width, json, out),
            Entry::Note(text) => {
                for line in text.lines() {
                    pad(out, width);
                    out.push_str("# ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
}

/// A map or list under a `key:` at `width`: maps indent by two, lists
/// stay at the key's indent (`helm create` style).
fn print_block(node: &Node, width: usize, json: &str, out: &mut String) {
    match node {
        Node::Map(entries) => print_entries(entries, width + 2, json, out),
        Node::List(items) => print_items(items, width, json, out),
        Node::Lit(value @ Value::Array(_)) => print_lit(value, width, out),
        Node::Lit(value) => print_lit(value, width + 2, out),
        Node::Json(_) | Node::Int(_) => unreachable!("scalars print inline"),
    }
}

fn print_items(items: &[Item], width: usize, json: &str, out: &mut String) {
    for item in items {
        match item {
            Item::One(node) => {
                if let Some(text) = inline(node, json) {
                    pad(out, width);
                    out.push_str("- ");
                    out.push_str(&text);
                    out.push('\n');
                    continue;
                }
                // The item's lines at width + 2, its first line's indent
                // replaced by "- " when that line is YAML, not an action.
                let mut body = String::new();
                match node {
                    Node::Map(entries) => print_entries(entries, width + 2, json, &mut body),
                    Node::Lit(value) => print_lit(value, width + 2, &mut body),
                    Node::List(items) => print_items(items, width + 2, json, &mut body),
                    Node::Json(_) | Node::Int(_) => unreachable!("scalars print inline"),
                }
                let first_is_yaml = !body[width + 2..].starts_with("{{");
                pad(out, width);
                if first_is_yaml {
                    out.push_str("- ");
                    out.push_str(&body[width + 2..]);
                } else {
                    out.push_str("-\n");
                    out.push_str(&body);
                }
            }
            Item::Splice(expr) => print_list_splice(expr, width, json, out),
            Item::If(condition, then, otherwise) => {
                action(out, width, &format!("if {}", condition.to_go()));
                print_items(then, width, json, out);
                if !otherwise.is_empty() {
                    action(out, width, "else");
                    print_items(otherwise, width, json, out);
                }
                action(out, width, "end");
            }
        }
    }
}

/// Every input an expression reads, helpers followed.
fn expr_inputs(expr: &Expr, out: &mut Vec<Expr>) {
    match expr {
        Expr::Lit(_) | Expr::Var(_) | Expr::Dot => {}
        Expr::Include(helper) => helper_inputs(helper, out),
        Expr::Call(_, args) => args.iter().for_each(|arg| expr_inputs(arg, out)),
        leaf => {
            if !out.contains(leaf) {
                out.push(leaf.clone());
            }
        }
    }
}

fn entries_inputs(entries: &[Entry], out: &mut Vec<Expr>) {
    for entry in entries {
        match entry {
            Entry::Field(_, node) => node_inputs(node, out),
            Entry::Yaml(_, expr) | Entry::Splice(expr) => expr_inputs(expr, out),
            Entry::Include(helper) => helper_inputs(helper, out),
            Entry::If(condition, then, otherwise) => {
                expr_inputs(condition, out);
                entries_inputs(then, out);
                entries_inputs(otherwise, out);
            }
            Entry::HelmOnly(inner) => {
                // Evaluated only under Helm: the service decides.
                expr_inputs(&Expr::ReleaseService, out);
                entries_inputs(std::slice::from_ref(inner), out);
            }
            Entry::Note(_) => {}
        }
    }
}

fn items_inputs(items: &[Item], out: &mut Vec<Expr>) {
    for item in items {
        match item {
            Item::One(node) => node_inputs(node, out),
            Item::Splice(expr) => expr_inputs(expr, out),
            Item::If(condition, then, otherwise) => {
                expr_inputs(condition, out);
                items_inputs(then, out);
                items_inputs(otherwise, out);
            }
        }
    }
}

fn node_inputs(node: &Node, out: &mut Vec<Expr>) {
    match node {
        Node::Lit(_) => {}
        Node::Json(expr) | Node::Int(expr) => expr_inputs(expr, out),
        Node::Map(entries) => entries_inputs(entries, out),
        Node::List(items) => items_inputs(items, out),
    }
}

impl Resource {
    /// Every input the object depends on (values paths, release and chart
    /// fields): two scopes that agree on them give the same object.
    pub fn inputs(&self) -> Vec<Expr> {
        let mut out = Vec::new();
        if let Some(condition) = &self.when {
            expr_inputs(condition, &mut out);
        }
        entries_inputs(&self.object, &mut out);
        out
    }
}

/// The inputs a helper reads.
fn helper_inputs(helper: &Helper, out: &mut Vec<Expr>) {
    match &helper.body {
        Body::Text(expr) | Body::Flag(expr) => expr_inputs(expr, out),
        Body::Entries(entries) => entries_inputs(entries, out),
    }
}

/// Characters `toJson` writes as they are but YAML 1.1 readers (Helm's,
/// Kubernetes') do not read back as written: DEL and the C1 controls are
/// refused, NEL is a line break, U+FEFF, U+FFFE and U+FFFF are refused or
/// dropped. The json helper writes them as `\u` escapes.
fn unsafe_for_yaml() -> impl Iterator<Item = char> {
    ('\u{7f}'..='\u{9f}').chain(['\u{feff}', '\u{fffe}', '\u{ffff}'])
}

/// The json helper's `define`: `toJson`, then each unsafe character escaped.
fn print_json_helper(json: &str) -> String {
    let mut body = String::from("toJson .");
    for c in unsafe_for_yaml() {
        body.push_str(&format!(
            " | replace \"\\u{:04x}\" \"\\\\u{:04x}\"",
            c as u32, c as u32
        ));
    }
    format!(
        "\n{{{{/* A value as JSON text that YAML reads back unchanged; every value a\ntemplate inserts goes through it (toYaml would write some characters raw,\nand Helm drops any \"<no value>\" it finds in toYaml's text). */}}}}\n{{{{- define \"{json}\" -}}}}\n{{{{- {body} }}}}\n{{{{- end }}}}\n"
    )
}

/// The helpers file (`_helpers.tpl`): the json helper every inserted value
/// goes through, named `json` (the chart's name first, as its other
/// helpers), then each of `helpers` as a `define` block.
pub fn print_helpers(json: &str, helpers: &[&Helper]) -> String {
    let mut out = print_json_helper(json);
    for helper in helpers {
        out.push_str(&format!("\n{{{{/* {} */}}}}\n", helper.doc));
        out.push_str(&format!("{{{{- define \"{}\" -}}}}\n", helper.name));
        match &helper.body {
            Body::Text(expr) => out.push_str(&format!("{{{{- {} }}}}\n", expr.to_go())),
            Body::Flag(expr) => out.push_str(&format!(
                "{{{{- if {} }}}}true{{{{ end }}}}\n",
                expr.to_go()
            )),
            Body::Entries(entries) => {
                let mut body = String::new();
                print_entries(entries, 0, json, &mut body);
                // `define ... -}}` trims the newline before the first line.
                out.push_str(&body);
            }
        }
        out.push_str("{{- end }}\n");
    }
    out
}
