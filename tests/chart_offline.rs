//! The chart's templates against asogen's own objects, offline: a small
//! interpreter of the Go template subset the chart uses executes the
//! committed chart (generated/charts/) for every valid case, and the objects
//! must equal what `asogen template` prints. It catches a template that says
//! something other than the object (a printer bug, a hand edit, a wrong
//! indent) with no Helm and no Python; the real Helm engine is still the
//! judge of Go-template semantics (tests/real_tools.rs).

mod common;

use std::collections::BTreeMap;

use asogen::describe::{Expr, Func, Scope};
use common::{Expect, asogen, cases, text};
use serde_json::{Map, Value};

const CHART: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/generated/charts/azure-service-operator"
);

/// A parsed template.
#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Output(String),
    If(String, Vec<Part>, Vec<Part>),
    With(String, Vec<Part>, Vec<Part>),
    Define(String, Vec<Part>),
    /// `range EXPR` (dot is each item) or `range $key, $value := EXPR`.
    Range(String, Vec<Part>),
    /// Actions the object templates never use (the rules guard's
    /// variables and ranges): an error if executed.
    Unsupported(String),
}

/// Splits a template into text and actions, applying `{{-`/`-}}` trimming.
fn lex(source: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    let mut rest = source;
    let mut trim_next = false;
    while let Some(start) = rest.find("{{") {
        let mut before = rest[..start].to_string();
        if trim_next {
            before = before.trim_start().to_string();
        }
        let after = &rest[start + 2..];
        let trim_left = after.starts_with('-');
        if trim_left {
            before = before.trim_end().to_string();
        }
        out.push((false, before));
        let end = after.find("}}").expect("unclosed action");
        let mut body = &after[..end];
        trim_next = body.ends_with('-');
        if trim_left {
            body = &body[1..];
        }
        if trim_next {
            body = &body[..body.len() - 1];
        }
        out.push((true, body.trim().to_string()));
        rest = &after[end + 2..];
    }
    let mut tail = rest.to_string();
    if trim_next {
        tail = tail.trim_start().to_string();
    }
    out.push((false, tail));
    out
}

/// Parses lexed parts until `end`/`else`; returns the parts and the
/// closing keyword.
fn parse(tokens: &mut std::vec::IntoIter<(bool, String)>) -> (Vec<Part>, String) {
    let mut parts = Vec::new();
    while let Some((action, body)) = tokens.next() {
        if !action {
            parts.push(Part::Text(body));
            continue;
        }
        let word = body.split_whitespace().next().unwrap_or("");
        match word {
            "end" | "else" => return (parts, body),
            "if" | "with" | "range" | "define" => {
                let argument = body[word.len()..].trim().to_string();
                let (then, close) = parse(tokens);
                let otherwise = if close == "else" {
                    parse(tokens).0
                } else {
                    Vec::new()
                };
                parts.push(match word {
                    "if" => Part::If(argument, then, otherwise),
                    "with" => Part::With(argument, then, otherwise),
                    "define" => Part::Define(argument.trim_matches('"').to_string(), then),
                    _ => Part::Range(argument, then),
                });
            }
            _ if body.starts_with("/*") => {}
            _ if body.starts_with('$') || word == "fail" => parts.push(Part::Unsupported(body)),
            _ => parts.push(Part::Output(body)),
        }
    }
    (parts, String::new())
}

fn parse_template(source: &str) -> Vec<Part> {
    parse(&mut lex(source).into_iter()).0
}

/// The template's inputs.
struct Context<'a> {
    values: &'a Value,
    /// `$key` and `$value` of the innermost `range`.
    variables: std::cell::RefCell<BTreeMap<String, Value>>,
    defines: &'a BTreeMap<String, Vec<Part>>,
    namespace: &'a str,
    app_version: &'a str,
    chart_version: &'a str,
}

/// Splits a pipeline or command into tokens: strings, parenthesized
/// groups, `|`, and words.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '"' {
            let start = i;
            i += 1;
            while chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(chars[start..i].iter().collect());
        } else if c == '(' {
            let start = i;
            let mut depth = 0;
            loop {
                match chars[i] {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    '"' => {
                        i += 1;
                        while chars[i] != '"' {
                            if chars[i] == '\\' {
                                i += 1;
                            }
                            i += 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
            out.push(chars[start..i].iter().collect());
        } else if c == '|' {
            out.push("|".into());
            i += 1;
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && chars[i] != '|' {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        }
    }
    out
}

fn func(name: &str) -> Option<Func> {
    Some(match name {
        "default" => Func::Default,
        "int64" => Func::Int64,
        "printf" => Func::Printf,
        "join" => Func::Join,
        "eq" => Func::Eq,
        "ne" => Func::Ne,
        "gt" => Func::Gt,
        "lt" => Func::Lt,
        "and" => Func::And,
        "or" => Func::Or,
        "not" => Func::Not,
        "hasKey" => Func::HasKey,
        "b64enc" => Func::B64enc,
        "toString" => Func::ToString,
        "dig" => Func::Dig,
        "replace" => Func::Replace,
        "ternary" => Func::Ternary,
        "tpl" => Func::Tpl,
        _ => return None,
    })
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

impl Context<'_> {
    fn operand(&self, token: &str, dot: &Value) -> Value {
        if let Some(inner) = token.strip_prefix('(') {
            return self.pipeline(&inner[..inner.len() - 1], dot);
        }
        if token.starts_with('"') {
            return serde_json::from_str(token).expect("a string literal");
        }
        if token == "." {
            return dot.clone();
        }
        if let Some(value) = self.variables.borrow().get(token) {
            return value.clone();
        }
        if token == "$" {
            // The root context: only `tpl` takes it, and evaluates over the values.
            return Value::Null;
        }
        if let Some(path) = token.strip_prefix(".Values.") {
            return path
                .split('.')
                .try_fold(self.values, |node, key| node.get(key))
                .cloned()
                .unwrap_or(Value::Null);
        }
        match token {
            ".Release.Namespace" => Value::from(self.namespace),
            ".Release.Name" => Value::from("azure-service-operator"),
            ".Release.Service" => Value::from("asogen"),
            ".Chart.Name" => Value::from("azure-service-operator"),
            ".Chart.Version" => Value::from(self.chart_version),
            ".Chart.AppVersion" => Value::from(self.app_version),
            "nil" => Value::Null,
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            number => serde_json::from_str(number)
                .unwrap_or_else(|_| panic!("unknown operand {number:?}")),
        }
    }

    fn command(&self, words: &[String], piped: Option<Value>, dot: &Value) -> Value {
        let name = words[0].as_str();
        let mut args: Vec<Value> = words[1..].iter().map(|w| self.operand(w, dot)).collect();
        if name == ".Capabilities.APIVersions.Has" {
            // asogen renders for a cluster that serves every kind it asks
            // about (Kubernetes 1.30 or later); so does this interpreter.
            assert!(matches!(args.as_slice(), [Value::String(_)]), "{words:?}");
            return Value::Bool(true);
        }
        if !name.chars().next().unwrap().is_ascii_alphabetic()
            || ["nil", "true", "false"].contains(&name)
        {
            assert!(piped.is_none() && words.len() == 1, "{words:?}");
            return self.operand(name, dot);
        }
        args.extend(piped);
        if name == "tpl" {
            assert_eq!(words.last().map(String::as_str), Some("$"), "tpl X $");
            args.pop();
        }
        if let Some(func) = func(name) {
            let call = Expr::Call(func, args.into_iter().map(Expr::Lit).collect());
            let scope = Scope {
                values: self.values,
                namespace: self.namespace,
                release_name: "",
                release_service: "",
                chart_version: "",
                app_version: "",
                capabilities: &asogen::describe::Capabilities::default(),
            };
            return call.eval(&scope).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        match (name, args.as_slice()) {
            ("toJson", [value]) => Value::String(serde_json::to_string(value).unwrap()),
            ("toYaml", [value]) => {
                Value::String(serde_yaml::to_string(value).unwrap().trim_end().to_string())
            }
            ("nindent", [width, Value::String(s)]) => {
                let pad = " ".repeat(width.as_u64().unwrap() as usize);
                let lines: Vec<String> = s.lines().map(|l| format!("{pad}{l}")).collect();
                Value::String(format!("\n{}", lines.join("\n")))
            }
            ("include", [Value::String(define), dot]) => {
                let body = self
                    .defines
                    .get(define)
                    .unwrap_or_else(|| panic!("no define {define}"));
                Value::String(self.run(body, dot))
            }
            _ => panic!("unsupported command {words:?}"),
        }
    }

    fn pipeline(&self, text: &str, dot: &Value) -> Value {
        let mut value = None;
        for command in tokens(text).split(|t| t == "|") {
            value = Some(self.command(command, value, dot));
        }
        value.expect("an empty pipeline")
    }

    fn run(&self, parts: &[Part], dot: &Value) -> String {
        let mut out = String::new();
        for part in parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Output(pipeline) => match self.pipeline(pipeline, dot) {
                    Value::String(s) => out.push_str(&s),
                    Value::Null => out.push_str("<no value>"),
                    other => out.push_str(&other.to_string()),
                },
                Part::If(condition, then, otherwise) => {
                    let chosen = if truthy(&self.pipeline(condition, dot)) {
                        then
                    } else {
                        otherwise
                    };
                    out.push_str(&self.run(chosen, dot));
                }
                Part::With(pipeline, then, otherwise) => {
                    let value = self.pipeline(pipeline, dot);
                    if truthy(&value) {
                        out.push_str(&self.run(then, &value));
                    } else {
                        out.push_str(&self.run(otherwise, dot));
                    }
                }
                Part::Define(..) => {}
                Part::Range(argument, body) => {
                    let (names, pipeline) = match argument.split_once(":=") {
                        Some((names, pipeline)) => (
                            names.split(',').map(|n| n.trim().to_string()).collect(),
                            pipeline.trim(),
                        ),
                        None => (Vec::new(), argument.as_str()),
                    };
                    let pairs: Vec<(Value, Value)> = match self.pipeline(pipeline, dot) {
                        // Go ranges over a map in key order.
                        Value::Object(map) => {
                            let mut pairs: Vec<_> =
                                map.into_iter().map(|(k, v)| (Value::from(k), v)).collect();
                            pairs.sort_by(|a, b| a.0.as_str().cmp(&b.0.as_str()));
                            pairs
                        }
                        Value::Array(items) => items
                            .into_iter()
                            .enumerate()
                            .map(|(i, v)| (Value::from(i), v))
                            .collect(),
                        _ => Vec::new(),
                    };
                    for (key, value) in pairs {
                        if let [k, v] = names.as_slice() {
                            let mut variables = self.variables.borrow_mut();
                            variables.insert(k.clone(), key);
                            variables.insert(v.clone(), value.clone());
                        }
                        out.push_str(&self.run(body, &value));
                    }
                }
                Part::Unsupported(action) => panic!("unsupported action {action:?}"),
            }
        }
        out
    }
}

fn defines(parts: &[Part], into: &mut BTreeMap<String, Vec<Part>>) {
    for part in parts {
        if let Part::Define(name, body) = part {
            into.insert(name.clone(), body.clone());
        }
    }
}

/// Helm's merge of a values file over the chart's: maps merge, the rest
/// replaces, null deletes.
fn merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                if value.is_null() {
                    base.remove(key);
                } else if let Some(slot) = base.get_mut(key) {
                    merge(slot, value);
                } else {
                    base.insert(key.clone(), value.clone());
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

fn yaml(text: &str) -> Value {
    serde_yaml::from_str::<Option<Value>>(text)
        .unwrap()
        .unwrap_or(Value::Object(Map::new()))
}

/// Renders the committed chart's object templates for a values file.
fn render_chart(values_file: &std::path::Path) -> String {
    let mut values = yaml(&std::fs::read_to_string(format!("{CHART}/values.yaml")).unwrap());
    merge(
        &mut values,
        &yaml(&std::fs::read_to_string(values_file).unwrap()),
    );
    let chart: Value = yaml(&std::fs::read_to_string(format!("{CHART}/Chart.yaml")).unwrap());
    let mut templates = BTreeMap::new();
    for entry in std::fs::read_dir(format!("{CHART}/templates")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        templates.insert(
            name,
            parse_template(&std::fs::read_to_string(&path).unwrap()),
        );
    }
    let mut defined = BTreeMap::new();
    defines(&templates["_helpers.tpl"], &mut defined);
    let context = Context {
        values: &values,
        variables: Default::default(),
        defines: &defined,
        namespace: "azureserviceoperator-system",
        app_version: chart["appVersion"].as_str().unwrap(),
        chart_version: chart["version"].as_str().unwrap(),
    };
    let mut stream = String::new();
    for (name, parts) in &templates {
        // The guard renders nothing for valid values; Helm checks it.
        if !name.ends_with(".yaml") || name == "validate-values.yaml" {
            continue;
        }
        stream.push_str("---\n");
        stream.push_str(&context.run(parts, &Value::Null));
        stream.push('\n');
    }
    stream
}

#[test]
fn the_chart_templates_render_exactly_asogens_objects_for_every_valid_case() {
    let mut checked = 0;
    for (path, expect) in cases() {
        if expect != Expect::Valid {
            continue;
        }
        let ours = asogen(&["template", "-f", path.to_str().unwrap()]);
        assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
        let chart = render_chart(&path);
        common::assert_same_objects(
            &format!("{} (offline chart)", path.display()),
            &text(&ours.stdout),
            &chart,
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} valid cases");
}

#[test]
fn the_interpreter_sees_a_drifted_template() {
    // A template edited by hand (the replica count from another key) must
    // no longer give asogen's objects: the check above can fail.
    let source = std::fs::read_to_string(format!("{CHART}/templates/deployment.yaml")).unwrap();
    let drifted = source.replace(
        "replicas: {{ .Values.replicaCount | int64 }}",
        "replicas: {{ .Values.revisionHistoryLimit | int64 }}",
    );
    assert_ne!(source, drifted, "the Deployment template writes replicas");
    let values = yaml(&std::fs::read_to_string(format!("{CHART}/values.yaml")).unwrap());
    let mut defined = BTreeMap::new();
    let helpers = std::fs::read_to_string(format!("{CHART}/templates/_helpers.tpl")).unwrap();
    defines(&parse_template(&helpers), &mut defined);
    let context = Context {
        values: &values,
        variables: Default::default(),
        defines: &defined,
        namespace: "ns",
        app_version: "v0",
        chart_version: "0.0.0",
    };
    let render = |source: &str| {
        let object = yaml(&context.run(&parse_template(source), &Value::Null));
        object["spec"]["replicas"].clone()
    };
    assert_eq!(render(&source), values["replicaCount"]);
    assert_eq!(render(&drifted), values["revisionHistoryLimit"]);
    assert_ne!(render(&source), render(&drifted));
}
