//! asogen's own objects for a validated model: the descriptions of
//! [`crate::objects`] evaluated over the model's values, exactly as Helm
//! evaluates the chart templates printed from the same descriptions.

use serde_json::Value;

use crate::describe::{self, Scope};
use crate::model::Model;

/// The tool that rendered an object, for the labels that say so.
#[derive(Debug, Clone, Copy)]
pub struct Installer {
    /// `app.kubernetes.io/managed-by` (Helm's `.Release.Service`).
    pub managed_by: &'static str,
    /// `app.kubernetes.io/instance` (Helm's `.Release.Name`).
    pub instance: &'static str,
}

/// asogen's own installs (manifests, kustomize, `template`).
pub const ASOGEN: Installer = Installer {
    managed_by: "asogen",
    instance: "azure-service-operator",
};

/// Every object of the install, in the order Helm installs kinds.
pub fn objects(model: &Model, installer: Installer) -> Vec<Value> {
    let values = serde_json::to_value(&model.values).expect("values serialize");
    let scope = Scope {
        values: &values,
        namespace: &model.namespace,
        release_name: installer.instance,
        release_service: installer.managed_by,
        chart_version: &model.release.chart_version,
        app_version: &model.release.app_version,
    };
    let resources = crate::objects::resources(&model.catalog, &model.release);
    describe::evaluate(&resources, &scope)
        .unwrap_or_else(|err| panic!("a description does not evaluate over checked values: {err}"))
}

/// The Namespace object that install manifests start with.
pub fn namespace(model: &Model, installer: Installer) -> Value {
    crate::objects::namespace_object(&model.namespace, installer.managed_by)
}
