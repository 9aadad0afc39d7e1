//! Values the release's controller cannot act on: they render nothing
//! (passing an undefined flag would make the controller exit), so the
//! user is told, as a warning, rather than left to wonder.

use serde_json::Value;

use crate::catalog::Catalog;
use crate::diagnostics::{Diagnostic, Severity};
use crate::objects::CRD_LABELS_FLAG;
use crate::read::Merged;

/// A warning for `crdLabels` when the catalog's controller has no
/// `--crd-labels` flag.
pub fn ignored_value_warnings(merged: &Merged, catalog: &Catalog) -> Vec<Diagnostic> {
    let set = match merged.value.get("crdLabels") {
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        _ => false,
    };
    if !set || catalog.controller.defines(CRD_LABELS_FLAG) {
        return Vec::new();
    }
    let mut d = merged.diagnostic("/crdLabels", false);
    d.key = "crdLabels".into();
    d.keyword = Some("controller".into());
    d.severity = Severity::Warning;
    d.message = format!(
        "crdLabels has no effect: the ASO {} controller has no --{CRD_LABELS_FLAG} flag (it came later) and would exit on it, so it is not passed",
        catalog.release
    );
    d.help =
        Some("remove crdLabels, or render for a release whose controller defines the flag".into());
    vec![d]
}
