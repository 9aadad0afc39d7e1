//! asogen's own objects for a validated model: the descriptions of
//! [`crate::objects`] evaluated over the model's values, exactly as Helm
//! evaluates the chart templates printed from the same descriptions.

use serde_json::Value;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::catalog::Catalog;
use crate::describe::{self, Capabilities, Resource, Scope};
use crate::model::{Model, Release};

/// The tool that rendered an object, for the labels that say so, and the
/// cluster it renders for.
#[derive(Debug, Clone, Copy)]
pub struct Installer<'a> {
    /// `app.kubernetes.io/managed-by` (Helm's `.Release.Service`).
    pub managed_by: &'static str,
    /// `app.kubernetes.io/instance` (Helm's `.Release.Name`).
    pub instance: &'a str,
    /// What the cluster serves (Helm's `.Capabilities`).
    pub capabilities: &'a Capabilities,
}

/// A current cluster: every API the chart asks about is served.
static CURRENT_CLUSTER: Capabilities = Capabilities {
    kube_version: None,
    api_versions: Vec::new(),
};

/// The release name of asogen's own installs (`.Release.Name`).
pub const DEFAULT_INSTANCE: &str = "azure-service-operator";

/// asogen's own installs (manifests, kustomize, `template`) for a current
/// cluster.
pub const ASOGEN: Installer<'static> = Installer {
    managed_by: "asogen",
    instance: DEFAULT_INSTANCE,
    capabilities: &CURRENT_CLUSTER,
};

/// The chart's inputs as asogen's own objects see them.
fn scope<'a>(model: &'a Model, values: &'a Value, installer: Installer<'a>) -> Scope<'a> {
    Scope {
        values,
        namespace: &model.namespace,
        release_name: installer.instance,
        release_service: installer.managed_by,
        chart_version: &model.release.chart_version,
        app_version: &model.release.app_version,
        capabilities: installer.capabilities,
    }
}

/// Every object of the install, in the order Helm installs kinds.
pub fn objects(model: &Model, installer: Installer) -> Vec<Value> {
    let values = serde_json::to_value(&model.values).expect("values serialize");
    let described = described(&model.catalog, &model.release);
    describe::evaluate(&described.resources, &scope(model, &values, installer))
        .unwrap_or_else(|err| panic!("a description does not evaluate over checked values: {err}"))
}

/// Every object of the install as YAML text. An object is written once per
/// distinct value of the inputs it reads (its [`Resource::inputs`]), so a
/// fleet of clusters that differ in a few values writes the 92 webhook
/// configurations once, not once per cluster.
pub fn object_texts(model: &Model, installer: Installer) -> Vec<Arc<str>> {
    object_texts_by_file(model, installer)
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

/// Every object of the install as YAML text, each with the chart template
/// file it comes from (its path under `templates/`).
pub fn object_texts_by_file(model: &Model, installer: Installer) -> Vec<(String, Arc<str>)> {
    let values = serde_json::to_value(&model.values).expect("values serialize");
    let scope = scope(model, &values, installer);
    let described = described(&model.catalog, &model.release);
    let mut texts = Vec::new();
    for (index, resource) in described.resources.iter().enumerate() {
        let key = input_key(&described, index, &scope);
        let cached = described
            .texts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&key)
            .cloned();
        let text = match cached {
            Some(text) => text,
            None => {
                let text = describe::evaluate(std::slice::from_ref(resource), &scope)
                    .unwrap_or_else(|err| {
                        panic!("a description does not evaluate over checked values: {err}")
                    })
                    .first()
                    .map(|object| Arc::from(crate::emit::to_yaml(object)));
                let mut texts = described.texts.lock().unwrap_or_else(|p| p.into_inner());
                // Bounded: a long fleet of all-different values starts afresh.
                if texts.len() >= MAX_CACHED_TEXTS {
                    texts.clear();
                }
                texts.insert(key, text.clone());
                text
            }
        };
        texts.extend(text.map(|text| (resource.file.clone(), text)));
    }
    texts
}

/// Every object of the install, each with the chart template file it comes
/// from (its path under `templates/`).
pub fn objects_by_file(model: &Model, installer: Installer) -> Vec<(String, Value)> {
    let values = serde_json::to_value(&model.values).expect("values serialize");
    let scope = scope(model, &values, installer);
    let described = described(&model.catalog, &model.release);
    described
        .resources
        .iter()
        .filter_map(|resource| {
            describe::evaluate(std::slice::from_ref(resource), &scope)
                .unwrap_or_else(|err| {
                    panic!("a description does not evaluate over checked values: {err}")
                })
                .pop()
                .map(|object| (resource.file.clone(), object))
        })
        .collect()
}

/// The chart's template files (paths under `templates/`) that render an
/// object, in install order.
pub fn template_files(model: &Model) -> Vec<String> {
    described(&model.catalog, &model.release)
        .resources
        .iter()
        .map(|resource| resource.file.clone())
        .collect()
}

/// The inputs' values of the resource at `index`, as the text-cache key.
fn input_key(described: &Described, index: usize, scope: &Scope) -> (usize, String) {
    let key: Vec<Value> = described.inputs[index]
        .iter()
        .map(|input| input.eval(scope).unwrap_or(Value::Null))
        .collect();
    (
        index,
        serde_json::to_string(&key).expect("inputs serialize"),
    )
}

/// One resource's object under two models (None where its condition does
/// not hold).
pub struct ObjectPair {
    /// Under the first model.
    pub base: Option<Value>,
    /// Under the second.
    pub other: Option<Value>,
}

/// The resources whose objects may differ between two models of the same
/// catalog and release, each evaluated under both. A resource whose inputs
/// read the same values under both models gives the same object, so it is
/// not evaluated at all: two profiles share the 92 webhook configurations,
/// and a kustomize component needs only what differs.
pub fn differing_objects(base: &Model, other: &Model, installer: Installer) -> Vec<ObjectPair> {
    let described = described(&base.catalog, &base.release);
    assert!(
        Arc::ptr_eq(&described, &self::described(&other.catalog, &other.release)),
        "differing_objects compares models of one catalog and release"
    );
    let (base_values, other_values) = (
        serde_json::to_value(&base.values).expect("values serialize"),
        serde_json::to_value(&other.values).expect("values serialize"),
    );
    let base_scope = scope(base, &base_values, installer);
    let other_scope = scope(other, &other_values, installer);
    let eval = |resource: &Resource, scope: &Scope| {
        describe::evaluate(std::slice::from_ref(resource), scope)
            .unwrap_or_else(|err| {
                panic!("a description does not evaluate over checked values: {err}")
            })
            .pop()
    };
    described
        .resources
        .iter()
        .enumerate()
        .filter(|(index, _)| {
            input_key(&described, *index, &base_scope)
                != input_key(&described, *index, &other_scope)
        })
        .map(|(_, resource)| ObjectPair {
            base: eval(resource, &base_scope),
            other: eval(resource, &other_scope),
        })
        .collect()
}

/// Object texts by (resource index, its inputs' values as JSON); None for
/// a resource whose condition does not hold.
type Texts = HashMap<(usize, String), Option<Arc<str>>>;

/// How many object texts are kept for reuse.
const MAX_CACHED_TEXTS: usize = 4096;

/// The resources of one catalog and release, with the inputs each reads
/// and the object texts written so far.
pub(crate) struct Described {
    catalog: Arc<Catalog>,
    release: Release,
    pub(crate) resources: Vec<Resource>,
    inputs: Vec<Vec<describe::Expr>>,
    texts: Mutex<Texts>,
}

/// The resources for a catalog and release, described once and reused
/// while they stay the same (a render's profiles and a fleet's files all
/// share them; the webhook configurations alone hold 1,328 webhooks).
pub(crate) fn described(catalog: &Arc<Catalog>, release: &Release) -> Arc<Described> {
    static LAST: Mutex<Option<Arc<Described>>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(described) = &*last
        && (Arc::ptr_eq(&described.catalog, catalog) || described.catalog == *catalog)
        && &described.release == release
    {
        return Arc::clone(described);
    }
    let resources = crate::objects::resources(catalog, release);
    let described = Arc::new(Described {
        catalog: Arc::clone(catalog),
        release: release.clone(),
        inputs: resources.iter().map(Resource::inputs).collect(),
        resources,
        texts: Mutex::new(HashMap::new()),
    });
    *last = Some(Arc::clone(&described));
    described
}

/// The Namespace object that install manifests start with.
pub fn namespace(model: &Model, installer: Installer) -> Value {
    crate::objects::namespace_object(&model.namespace, installer.managed_by)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_texts_are_the_objects_written_whatever_came_before() {
        let checker = crate::check::Checker::new();
        let model = |text: &str, namespace: &str| {
            let source = crate::read::parse_source("v.yaml".into(), text.into())
                .unwrap_or_else(|_| panic!("{text}"));
            checker.check(&[source], namespace).unwrap()
        };
        let models = [
            model("", "ns-a"),
            model(
                "multitenant: {enable: true}\nazureOperatorMode: watchers\ninstallCRDs: false\n",
                "ns-a",
            ),
            model("", "ns-b"),
            model("metrics: {enable: false}\npodLabels: {team: x}\n", "ns-b"),
            model("", "ns-a"),
        ];
        // Twice over, so the second round reads what the first cached.
        for model in models.iter().chain(models.iter()) {
            let written: Vec<String> = objects(model, ASOGEN)
                .iter()
                .map(crate::emit::to_yaml)
                .collect();
            let texts: Vec<String> = object_texts(model, ASOGEN)
                .iter()
                .map(|text| text.to_string())
                .collect();
            assert_eq!(texts, written, "namespace {}", model.namespace);
        }
    }

    #[test]
    fn crd_labels_become_a_flag_only_for_a_controller_that_defines_it() {
        let checker = crate::check::Checker::new();
        let source =
            crate::read::parse_source("v.yaml".into(), "crdLabels: [env=prod, team=x]\n".into())
                .unwrap();
        let mut model = checker.check(&[source], "ns").unwrap();
        let args = |model: &Model| {
            let deployment = objects(model, ASOGEN)
                .into_iter()
                .find(|object| object["kind"] == "Deployment")
                .unwrap();
            deployment["spec"]["template"]["spec"]["containers"][0]["args"].clone()
        };
        let passed = |model: &Model| {
            args(model)
                .as_array()
                .unwrap()
                .iter()
                .any(|arg| arg == "--crd-labels=env=prod,team=x")
        };
        assert!(!passed(&model), "{}", args(&model));
        std::sync::Arc::make_mut(&mut model.catalog)
            .controller
            .flags
            .push("crd-labels".into());
        assert!(passed(&model), "{}", args(&model));
    }

    #[test]
    fn differing_objects_are_those_whose_inputs_differ_and_all_that_differ() {
        let checker = crate::check::Checker::new();
        let model = |text: &str| {
            let source = crate::read::parse_source("v.yaml".into(), text.into()).unwrap();
            checker.check(&[source], "ns").unwrap()
        };
        let base = model("");
        let other = model(
            "replicaCount: 1\nstrategy: {type: RollingUpdate}\nfeatureGates: {singleReplicaRollingUpdate: true}\n",
        );
        let pairs = differing_objects(&base, &other, ASOGEN);
        let kinds: Vec<&str> = pairs
            .iter()
            .filter_map(|pair| pair.other.as_ref()?["kind"].as_str())
            .collect();
        assert!(kinds.contains(&"Deployment"), "{kinds:?}");
        assert!(
            !kinds.contains(&"MutatingWebhookConfiguration"),
            "{kinds:?}"
        );
        // Every object that differs is among them.
        let (all_base, all_other) = (objects(&base, ASOGEN), objects(&other, ASOGEN));
        for (a, b) in all_base.iter().zip(&all_other) {
            if a != b {
                assert!(
                    pairs.iter().any(|pair| pair.base.as_ref() == Some(a)
                        && pair.other.as_ref() == Some(b)),
                    "{}",
                    a["kind"]
                );
            }
        }
        assert!(differing_objects(&base, &model(""), ASOGEN).is_empty());
    }
}
