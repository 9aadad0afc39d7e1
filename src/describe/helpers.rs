//! The chart's named helpers (`_helpers.tpl`, `helm create` names): each is
//! described once, printed as a `define` for the chart and evaluated for
//! asogen's own objects when a description includes it.

use super::expr::{EvalError, Expr, Func, Scope, to_text, truthy};
use super::tree::{Entry, json, print_entries, text};
use crate::keys;

/// The chart name, and the prefix of every helper's name.
pub const CHART: &str = crate::names::CHART_NAME;

/// What a helper yields.
enum Body {
    /// A string.
    Text(Expr),
    /// "true" when the condition holds, else "" (Go templates have no
    /// boolean helpers: `include` always returns a string).
    Flag(Expr),
    /// Map entries, included with `nindent`.
    Entries(Vec<Entry>),
}

struct Helper {
    name: &'static str,
    doc: &'static str,
    body: Body,
}

/// Every helper, described once per process.
fn helpers() -> &'static [Helper] {
    static HELPERS: std::sync::OnceLock<Vec<Helper>> = std::sync::OnceLock::new();
    HELPERS.get_or_init(describe_helpers)
}

fn describe_helpers() -> Vec<Helper> {
    vec![
        Helper {
            name: "name",
            doc: "The chart name.",
            body: Body::Text(Expr::ChartName),
        },
        Helper {
            name: "chart",
            doc: "Chart name and version, for the helm.sh/chart label.",
            body: Body::Text(Expr::Call(
                Func::Replace,
                vec![
                    Expr::str("+"),
                    Expr::str("_"),
                    Expr::printf("%s-%s", vec![Expr::ChartName, Expr::ChartVersion]),
                ],
            )),
        },
        Helper {
            name: "selectorLabels",
            doc: "Labels that select the controller pods. They never change between\nversions: a selector change would break upgrades.",
            body: Body::Entries(selector_labels()),
        },
        Helper {
            name: "labels",
            doc: "Labels on every object.",
            body: Body::Entries(vec![
                Entry::HelmOnly(Box::new(json("helm.sh/chart", Expr::Include("chart")))),
                json("app.kubernetes.io/name", Expr::Include("name")),
                Entry::Include("selectorLabels"),
                json("app.kubernetes.io/version", Expr::AppVersion),
                json("app.kubernetes.io/managed-by", Expr::ReleaseService),
                json("app.kubernetes.io/instance", Expr::ReleaseName),
            ]),
        },
        Helper {
            name: "serviceAccountName",
            doc: "The ServiceAccount the controller runs as.",
            body: Body::Text(
                Expr::value(keys::SERVICE_ACCOUNT_NAME).or_default(Expr::Call(
                    Func::Ternary,
                    vec![
                        Expr::str("azureserviceoperator-default"),
                        Expr::str("default"),
                        Expr::value(keys::SERVICE_ACCOUNT_CREATE),
                    ],
                )),
            ),
        },
        Helper {
            name: "servesWebhooks",
            doc: "Whether this install serves webhooks (everything but a multi-tenant\nwatchers-only tenant). Returns \"true\" or \"\".",
            body: Body::Flag(Expr::any(vec![
                !Expr::value(keys::MULTITENANT_ENABLE),
                Expr::value(keys::AZURE_OPERATOR_MODE).eq(Expr::str("webhooks")),
            ])),
        },
    ]
}

/// The labels that select the controller pods: the release's own
/// (`control-plane` alone), since a Deployment's selector is immutable and
/// anything else would block every upgrade of an existing install.
pub fn selector_labels() -> Vec<Entry> {
    vec![text("control-plane", "controller-manager")]
}

fn find(name: &str) -> &'static Helper {
    helpers()
        .iter()
        .find(|helper| helper.name == name)
        .unwrap_or_else(|| panic!("no helper {name:?} (a bug in a description)"))
}

/// The string `include` yields for a helper.
pub fn eval_include(name: &str, scope: &Scope) -> Result<String, EvalError> {
    match &find(name).body {
        Body::Text(expr) => Ok(to_text(&expr.eval(scope)?)),
        Body::Flag(expr) => Ok(if truthy(&expr.eval(scope)?) {
            "true".into()
        } else {
            String::new()
        }),
        Body::Entries(_) => Err(EvalError(format!(
            "{name} is a map helper; include it as entries"
        ))),
    }
}

/// A map helper's entries.
pub fn map_helper(name: &str) -> &'static [Entry] {
    match &find(name).body {
        Body::Entries(entries) => entries,
        _ => panic!("{name} is not a map helper (a bug in a description)"),
    }
}

/// The inputs a helper reads.
pub(super) fn helper_inputs(name: &str, out: &mut Vec<Expr>) {
    match &find(name).body {
        Body::Text(expr) | Body::Flag(expr) => super::tree::expr_inputs(expr, out),
        Body::Entries(entries) => super::tree::entries_inputs(entries, out),
    }
}

/// The helper every inserted value goes through: `include "<chart>.json" VALUE`.
pub fn json_helper() -> String {
    format!("{CHART}.json")
}

/// Characters `toJson` writes as they are but YAML 1.1 readers (Helm's,
/// Kubernetes') do not read back as written: DEL and the C1 controls are
/// refused, NEL is a line break, U+FEFF, U+FFFE and U+FFFF are refused or
/// dropped. The json helper writes them as `\u` escapes.
fn unsafe_for_yaml() -> impl Iterator<Item = char> {
    ('\u{7f}'..='\u{9f}').chain(['\u{feff}', '\u{fffe}', '\u{ffff}'])
}

/// The json helper's `define`: `toJson`, then each unsafe character escaped.
fn print_json_helper() -> String {
    let mut body = String::from("toJson .");
    for c in unsafe_for_yaml() {
        body.push_str(&format!(
            " | replace \"\\u{:04x}\" \"\\\\u{:04x}\"",
            c as u32, c as u32
        ));
    }
    format!(
        "\n{{{{/* A value as JSON text that YAML reads back unchanged; every value a\ntemplate inserts goes through it (toYaml would write some characters raw,\nand Helm drops any \"<no value>\" it finds in toYaml's text). */}}}}\n{{{{- define \"{}\" -}}}}\n{{{{- {body} }}}}\n{{{{- end }}}}\n",
        json_helper()
    )
}

/// Every helper as `define` blocks, for `_helpers.tpl`.
pub fn print_helpers() -> String {
    let mut out = print_json_helper();
    for helper in helpers() {
        out.push_str(&format!("\n{{{{/* {} */}}}}\n", helper.doc));
        out.push_str(&format!("{{{{- define \"{CHART}.{}\" -}}}}\n", helper.name));
        match &helper.body {
            Body::Text(expr) => out.push_str(&format!("{{{{- {} }}}}\n", expr.to_go())),
            Body::Flag(expr) => out.push_str(&format!(
                "{{{{- if {} }}}}true{{{{ end }}}}\n",
                expr.to_go()
            )),
            Body::Entries(entries) => {
                let mut body = String::new();
                print_entries(entries, 0, &mut body);
                // `define ... -}}` trims the newline before the first line.
                out.push_str(&body);
            }
        }
        out.push_str("{{- end }}\n");
    }
    out
}
