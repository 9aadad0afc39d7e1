//! asogen's own objects for a validated model: the descriptions of
//! [`crate::objects`] evaluated over the model's values, exactly as Helm
//! evaluates the chart templates printed from the same descriptions.

use serde_json::Value;

use std::sync::{Arc, Mutex};

use crate::catalog::Catalog;
use crate::describe::{self, Resource, Scope};
use crate::model::{Model, Release};

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
    let resources = described(&model.catalog, &model.release);
    describe::evaluate(&resources, &scope)
        .unwrap_or_else(|err| panic!("a description does not evaluate over checked values: {err}"))
}

/// The resources for a catalog and release, described once and reused
/// while they stay the same (a render's profiles and a fleet's files all
/// share them; the webhook configurations alone hold 1,328 webhooks).
fn described(catalog: &Catalog, release: &Release) -> Arc<Vec<Resource>> {
    type Last = Option<(Catalog, Release, Arc<Vec<Resource>>)>;
    static LAST: Mutex<Last> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((c, r, resources)) = &*last
        && c == catalog
        && r == release
    {
        return Arc::clone(resources);
    }
    let resources = Arc::new(crate::objects::resources(catalog, release));
    *last = Some((catalog.clone(), release.clone(), Arc::clone(&resources)));
    resources
}

/// The Namespace object that install manifests start with.
pub fn namespace(model: &Model, installer: Installer) -> Value {
    crate::objects::namespace_object(&model.namespace, installer.managed_by)
}
