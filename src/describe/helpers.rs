//! The chart's named helpers (`_helpers.tpl`, `helm create` names): each is
//! described once, printed as a `define` for the chart and evaluated for
//! asogen's own objects when a description includes it. A description
//! includes a helper by reference ([`labels`], ...), so a helper that does
//! not exist cannot be named.

use std::sync::LazyLock;

use super::ast::{Entry, json, text};
use super::{Body, Expr, Func, Helper};
use crate::keys;

/// The chart name, and the prefix of every helper's name.
pub const CHART: &str = crate::names::CHART_NAME;

/// A helper of this chart: its `define` is named `<chart>.<name>`.
fn helper(name: &str, doc: &'static str, body: Body) -> Helper {
    Helper {
        name: format!("{CHART}.{name}"),
        doc,
        body,
    }
}

static NAME: LazyLock<Helper> =
    LazyLock::new(|| helper("name", "The chart name.", Body::Text(Expr::ChartName)));

static CHART_LABEL: LazyLock<Helper> = LazyLock::new(|| {
    helper(
        "chart",
        "Chart name and version, for the helm.sh/chart label.",
        Body::Text(Expr::Call(
            Func::Replace,
            vec![
                Expr::str("+"),
                Expr::str("_"),
                Expr::printf("%s-%s", vec![Expr::ChartName, Expr::ChartVersion]),
            ],
        )),
    )
});

static SELECTOR_LABELS: LazyLock<Helper> = LazyLock::new(|| {
    helper(
        "selectorLabels",
        "Labels that select the controller pods. They never change between\nversions: a selector change would break upgrades.",
        Body::Entries(selector_label_entries()),
    )
});

static LABELS: LazyLock<Helper> = LazyLock::new(|| {
    helper(
        "labels",
        "Labels on every object.",
        Body::Entries(vec![
            Entry::HelmOnly(Box::new(json("helm.sh/chart", Expr::Include(&CHART_LABEL)))),
            json("app.kubernetes.io/name", Expr::Include(name())),
            Entry::Include(&SELECTOR_LABELS),
            json("app.kubernetes.io/version", Expr::AppVersion),
            json("app.kubernetes.io/managed-by", Expr::ReleaseService),
            json("app.kubernetes.io/instance", Expr::ReleaseName),
        ]),
    )
});

static SERVICE_ACCOUNT_NAME: LazyLock<Helper> = LazyLock::new(|| {
    helper(
        "serviceAccountName",
        "The ServiceAccount the controller runs as.",
        Body::Text(
            Expr::value(keys::SERVICE_ACCOUNT_NAME).or_default(Expr::Call(
                Func::Ternary,
                vec![
                    Expr::str("azureserviceoperator-default"),
                    Expr::str("default"),
                    Expr::value(keys::SERVICE_ACCOUNT_CREATE),
                ],
            )),
        ),
    )
});

static SERVES_WEBHOOKS: LazyLock<Helper> = LazyLock::new(|| {
    helper(
        "servesWebhooks",
        "Whether this install serves webhooks (everything but a multi-tenant\nwatchers-only tenant). Returns \"true\" or \"\".",
        Body::Flag(Expr::any(vec![
            !Expr::value(keys::MULTITENANT_ENABLE),
            Expr::value(keys::AZURE_OPERATOR_MODE).eq(Expr::str("webhooks")),
        ])),
    )
});

/// `name`: the chart name.
pub fn name() -> &'static Helper {
    &NAME
}

/// `selectorLabels`: the labels that select the controller pods.
pub fn selector_labels() -> &'static Helper {
    &SELECTOR_LABELS
}

/// `labels`: the labels on every object.
pub fn labels() -> &'static Helper {
    &LABELS
}

/// `serviceAccountName`: the ServiceAccount the controller runs as.
pub fn service_account_name() -> &'static Helper {
    &SERVICE_ACCOUNT_NAME
}

/// `servesWebhooks`: "true" when this install serves webhooks.
pub fn serves_webhooks() -> &'static Helper {
    &SERVES_WEBHOOKS
}

/// Every helper, in the helpers file's order.
pub fn all() -> [&'static Helper; 6] {
    [
        name(),
        &CHART_LABEL,
        selector_labels(),
        labels(),
        service_account_name(),
        serves_webhooks(),
    ]
}

/// The labels that select the controller pods: the release's own
/// (`control-plane` alone), since a Deployment's selector is immutable and
/// anything else would block every upgrade of an existing install.
fn selector_label_entries() -> Vec<Entry> {
    crate::metadata::SELECTOR_LABELS
        .iter()
        .map(|(key, value)| text(*key, value))
        .collect()
}

/// The helper every inserted value goes through: `include "<chart>.json" VALUE`.
pub fn json_helper() -> String {
    format!("{CHART}.json")
}

/// The helpers file: the json helper, then every helper.
pub fn print() -> String {
    super::tree::print_helpers(&json_helper(), &all())
}
