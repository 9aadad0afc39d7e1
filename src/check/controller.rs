//! Values the release's controller cannot act on: they render nothing
//! (passing an undefined flag would make the controller exit), so the
//! user is told, as a warning, rather than left to wonder.

use serde_json::Value;

use crate::catalog::CRD_LABELS_FLAG;
use crate::catalog::Catalog;
use crate::diagnostics::{Diagnostic, Severity};
use crate::keys;
use crate::read::Merged;

/// A warning for `crdLabels` when the catalog's controller has no
/// `--crd-labels` flag.
pub fn ignored_value_warnings(merged: &Merged, catalog: &Catalog) -> Vec<Diagnostic> {
    let key = keys::CRD_LABELS;
    let set = match merged.value.get(key.path()) {
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        _ => false,
    };
    if !set || catalog.controller.defines(CRD_LABELS_FLAG) {
        return Vec::new();
    }
    let mut d = merged.diagnostic(&key.pointer(), false);
    d.key = key.path().into();
    d.keyword = Some("controller".into());
    d.severity = Severity::Warning;
    d.message = format!(
        "{} has no effect: the ASO {} controller has no --{CRD_LABELS_FLAG} flag (it came later) and would exit on it, so it is not passed",
        key.path(),
        catalog.release
    );
    d.help = Some(format!(
        "remove {}, or render for a release whose controller defines the flag",
        key.path()
    ));
    vec![d]
}
