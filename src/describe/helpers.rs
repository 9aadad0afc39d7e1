//! The chart's named helpers (`_helpers.tpl`, `helm create` names): each is
//! described once, printed as a `define` for the chart and evaluated for
//! asogen's own objects when a description includes it.

use super::ast::{Entry, Expr, json, text};
use super::funcs::Func;
use crate::keys;

/// The chart name, and the prefix of every helper's name.
pub const CHART: &str = crate::names::CHART_NAME;

/// What a helper yields.
pub(super) enum Body {
    /// A string.
    Text(Expr),
    /// "true" when the condition holds, else "" (Go templates have no
    /// boolean helpers: `include` always returns a string).
    Flag(Expr),
    /// Map entries, included with `nindent`.
    Entries(Vec<Entry>),
}

pub(super) struct Helper {
    pub(super) name: &'static str,
    pub(super) doc: &'static str,
    pub(super) body: Body,
}

/// Every helper, described once per process.
pub(super) fn all() -> &'static [Helper] {
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
    crate::metadata::SELECTOR_LABELS
        .iter()
        .map(|(key, value)| text(*key, value))
        .collect()
}

pub(super) fn find(name: &str) -> &'static Helper {
    all()
        .iter()
        .find(|helper| helper.name == name)
        .unwrap_or_else(|| panic!("no helper {name:?} (a bug in a description)"))
}

/// A map helper's entries.
pub fn map_helper(name: &str) -> &'static [Entry] {
    match &find(name).body {
        Body::Entries(entries) => entries,
        _ => panic!("{name} is not a map helper (a bug in a description)"),
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
pub(super) fn unsafe_for_yaml() -> impl Iterator<Item = char> {
    ('\u{7f}'..='\u{9f}').chain(['\u{feff}', '\u{fffe}', '\u{ffff}'])
}
