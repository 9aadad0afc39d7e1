//! asogen's own objects for a validated model: the descriptions of
//! [`crate::objects`] evaluated over the model's values, exactly as Helm
//! evaluates the chart templates printed from the same descriptions.

use serde_json::Value;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::catalog::Catalog;
use crate::describe::{self, Capabilities, Resource, Scope};
use crate::model::{Model, Release};
use crate::objects::{Configuration, WEBHOOKS, WebhookFields};
use chart_template::emit::Doc;

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

/// One install: a model's values over the descriptions of its catalog and
/// release, for one installer. The one way into evaluation: built once,
/// asked for the objects, their texts, or what differs from another.
pub struct Install<'a> {
    model: &'a Model,
    installer: Installer<'a>,
    described: Arc<Described>,
    /// Whether an earlier install used these descriptions: only then can
    /// the text cache hold anything for this one, so only then are the
    /// inputs' values worked out as its keys.
    cached: bool,
    /// One webhook's text with its scalars left out, laid out when first
    /// needed (None: this install's webhooks take the slow path).
    layout: OnceLock<Option<WebhookLayout>>,
}

impl<'a> Install<'a> {
    /// The install of `model` by `installer`.
    pub fn new(model: &'a Model, installer: Installer<'a>) -> Self {
        let described = described(&model.catalog, &model.release);
        let cached = described.installs.fetch_add(1, Ordering::Relaxed) > 0;
        Install {
            model,
            installer,
            described,
            cached,
            layout: OnceLock::new(),
        }
    }

    /// The chart's inputs as asogen's own objects see them.
    fn scope(&self) -> Scope<'_> {
        Scope {
            values: &self.model.json,
            namespace: &self.model.namespace,
            release_name: self.installer.instance,
            release_service: self.installer.managed_by,
            chart_name: describe::helpers::CHART,
            chart_version: &self.model.release.chart_version,
            app_version: &self.model.release.app_version,
            capabilities: self.installer.capabilities,
            is_secret: describe::IS_SECRET,
        }
    }

    /// Every object of the install, in the order Helm installs kinds.
    pub fn objects(&self) -> Vec<Value> {
        self.objects_by_file()
            .into_iter()
            .map(|(_, object)| object)
            .collect()
    }

    /// Every object of the install, each with the chart template file it
    /// comes from (its path under `templates/`).
    pub fn objects_by_file(&self) -> Vec<(String, Value)> {
        let scope = self.scope();
        self.described
            .each_resource()
            .filter_map(|resource| {
                doc(&resource, &scope).map(|object| (resource.file.clone(), object.into_value()))
            })
            .collect()
    }

    /// The objects of one `kind`, in install order: only the resources
    /// that describe that kind (a literal of their description) are
    /// evaluated.
    pub fn objects_of_kind(&self, kind: &str) -> Vec<Value> {
        let scope = self.scope();
        let configurations = crate::objects::configurations(&self.described.catalog);
        self.described
            .outline
            .iter()
            .enumerate()
            .filter(|(_, resource)| {
                crate::describe::tree::literal_fields(&resource.object)
                    .iter()
                    .any(|(field, value)| field == "kind" && value == kind)
            })
            .filter_map(|(index, _)| {
                let resource = self.described.resource(index, &configurations);
                doc(&resource, &scope).map(Doc::into_value)
            })
            .collect()
    }

    /// Every object's head (`apiVersion`, `kind`, `metadata.name` and
    /// `metadata.namespace`), in the order of [`Install::objects`]: what
    /// names an object's file and finds it, without holding every object
    /// at once (each is evaluated and dropped in turn).
    pub fn heads(&self) -> Vec<Value> {
        let scope = self.scope();
        // The outline: a webhook configuration's head is its header's.
        self.described
            .outline
            .iter()
            .filter_map(|resource| {
                let object = doc(resource, &scope)?.into_value();
                let mut metadata = serde_json::Map::new();
                for field in ["name", "namespace"] {
                    if let Some(value) = object["metadata"].get(field) {
                        metadata.insert(field.into(), value.clone());
                    }
                }
                Some(serde_json::json!({
                    "apiVersion": object["apiVersion"],
                    "kind": object["kind"],
                    "metadata": metadata,
                }))
            })
            .collect()
    }

    /// Every object of the install as YAML text.
    pub fn texts(&self) -> Vec<Arc<str>> {
        self.texts_by_file()
            .into_iter()
            .map(|(_, text)| text)
            .collect()
    }

    /// Every object of the install as YAML text, each with its chart
    /// template file. An object is written once per distinct value of the
    /// inputs it reads (its [`Resource::inputs`]), so a fleet of clusters
    /// that differ in a few values writes the 92 webhook configurations
    /// once, not once per cluster.
    pub fn texts_by_file(&self) -> Vec<(String, Arc<str>)> {
        let scope = self.scope();
        let described = &self.described;
        let configurations = crate::objects::configurations(&described.catalog);
        let write = |index: usize| {
            let mut text = String::new();
            self.write_object(index, &scope, &configurations, &mut text)
                .then(|| Arc::from(text))
        };
        let mut texts = Vec::new();
        for (index, resource) in described.outline.iter().enumerate() {
            let text = if self.cached {
                let key = input_key(described, index, &scope);
                let cached = described.cache().get(&key).cloned();
                cached.unwrap_or_else(|| {
                    let text = write(index);
                    let mut cache = described.cache();
                    // Bounded: a long fleet of all-different values starts afresh.
                    if cache.len() >= MAX_CACHED_TEXTS {
                        cache.clear();
                    }
                    cache.insert(key, text.clone());
                    text
                })
            } else {
                write(index)
            };
            texts.extend(text.map(|text| (resource.file.clone(), text)));
        }
        texts
    }

    /// Every object's text appended to `out`, each after `separator`. With
    /// nothing cached to reuse, each object is written straight into `out`
    /// (a manifest is 800 KiB: no copy of it per object).
    pub fn write_texts(&self, separator: &str, out: &mut String) {
        self.write_texts_with(separator, out, |_| {});
    }

    /// [`Install::write_texts`], calling `after_each` with `out` after each
    /// object, which may take what was written so far (and clear `out`):
    /// a manifest printed as it is written never needs all of it in
    /// memory.
    pub fn write_texts_with(
        &self,
        separator: &str,
        out: &mut String,
        mut after_each: impl FnMut(&mut String),
    ) {
        if self.cached {
            let texts = self.texts();
            // Sized once: a fleet holds one manifest per core.
            out.reserve(texts.iter().map(|text| separator.len() + text.len()).sum());
            for text in texts {
                out.push_str(separator);
                out.push_str(&text);
                after_each(out);
            }
            return;
        }
        let scope = self.scope();
        let configurations = crate::objects::configurations(&self.described.catalog);
        for index in 0..self.described.outline.len() {
            let start = out.len();
            out.push_str(separator);
            if self.write_object(index, &scope, &configurations, out) {
                after_each(out);
            } else {
                out.truncate(start);
            }
        }
    }

    /// Appends the text of the resource at `index` to `out`; false when
    /// its condition does not hold. A webhook configuration of the
    /// catalog is written from the layout of one webhook, filled in for
    /// each ([`WebhookLayout`]): the same text as its description gives.
    fn write_object(
        &self,
        index: usize,
        scope: &Scope,
        configurations: &[Configuration],
        out: &mut String,
    ) -> bool {
        let described = &self.described;
        if let Some(configuration) = described.configuration_of[index]
            && let Some(layout) = self.layout.get_or_init(|| WebhookLayout::new(scope))
        {
            let configuration = &configurations[configuration];
            let Some(header) = doc(&described.outline[index], scope) else {
                return false;
            };
            let start = out.len();
            if layout.write(&header, configuration, out) {
                return true;
            }
            out.truncate(start);
        }
        match doc(&described.resource(index, configurations), scope) {
            Some(object) => {
                chart_template::emit::write_doc(&object, out);
                true
            }
            None => false,
        }
    }

    /// The chart's template files (paths under `templates/`) that render
    /// an object, in install order.
    pub fn template_files(&self) -> Vec<String> {
        let outline = &self.described.outline;
        outline
            .iter()
            .map(|resource| resource.file.clone())
            .collect()
    }

    /// The Namespace object that install manifests start with.
    pub fn namespace(&self) -> Value {
        crate::objects::namespace_object(&self.model.namespace, self.installer.managed_by)
    }

    /// The resources whose objects may differ between this install and
    /// `other` (of the same catalog and release), each evaluated under both.
    /// A resource whose inputs read the same values under both gives the
    /// same object, so it is not evaluated at all: two profiles share the
    /// 92 webhook configurations, and a kustomize component needs only
    /// what differs.
    pub fn differing(&self, other: &Install) -> Vec<ObjectPair> {
        assert!(
            Arc::ptr_eq(&self.described, &other.described),
            "differing compares installs of one catalog and release"
        );
        let (base_scope, other_scope) = (self.scope(), other.scope());
        let described = &self.described;
        let configurations = crate::objects::configurations(&described.catalog);
        (0..described.outline.len())
            .filter(|index| {
                input_key(described, *index, &base_scope)
                    != input_key(described, *index, &other_scope)
            })
            .map(|index| {
                let resource = described.resource(index, &configurations);
                ObjectPair {
                    base: doc(&resource, &base_scope).map(Doc::into_value),
                    other: doc(&resource, &other_scope).map(Doc::into_value),
                }
            })
            .collect()
    }
}

/// A resource's object as a document (None where its condition does not
/// hold). The model was checked, so a description that does not evaluate
/// is a bug in asogen, not in the values.
fn doc<'r>(resource: &'r Resource, scope: &Scope) -> Option<Doc<'r>> {
    describe::evaluate_doc(resource, scope)
        .unwrap_or_else(|err| panic!("a description does not evaluate over checked values: {err}"))
}

/// The inputs' values of the resource at `index`, as the text-cache key.
fn input_key(described: &Described, index: usize, scope: &Scope) -> (usize, String) {
    let key: Vec<Value> = described.inputs()[index]
        .iter()
        .map(|input| input.eval(scope).unwrap_or(Value::Null))
        .collect();
    (
        index,
        serde_json::to_string(&key).expect("inputs serialize"),
    )
}

/// One resource's object under two installs (None where its condition does
/// not hold).
pub struct ObjectPair {
    /// Under the first install.
    pub base: Option<Value>,
    /// Under the second.
    pub other: Option<Value>,
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
    /// Every resource, each webhook configuration of the catalog without
    /// its webhooks: what writing the text of an install needs.
    outline: Vec<Resource>,
    /// For each resource that is a webhook configuration of the catalog,
    /// which one (its index in [`crate::objects::configurations`]).
    configuration_of: Vec<Option<usize>>,
    /// What each resource reads, worked out when first needed.
    inputs: OnceLock<Vec<Vec<describe::Expr>>>,
    texts: Mutex<Texts>,
    /// How many installs used these descriptions.
    installs: AtomicUsize,
}

impl Described {
    /// Every resource in full, in order, each described when its turn
    /// comes (the chart, the objects as JSON, the inputs).
    pub(crate) fn each_resource(&self) -> impl Iterator<Item = Cow<'_, Resource>> {
        let configurations = crate::objects::configurations(&self.catalog);
        (0..self.outline.len()).map(move |index| self.resource(index, &configurations))
    }

    /// The resource at `index` in full: from the outline, or for a webhook
    /// configuration of the catalog (`configurations`, the catalog's)
    /// described anew. Its webhooks are most of every description, and
    /// only the chart and the slow paths need them, so they are not kept.
    fn resource(&self, index: usize, configurations: &[Configuration]) -> Cow<'_, Resource> {
        match self.configuration_of[index] {
            Some(at) => Cow::Owned(configurations[at].resource()),
            None => Cow::Borrowed(&self.outline[index]),
        }
    }

    fn inputs(&self) -> &[Vec<describe::Expr>] {
        self.inputs.get_or_init(|| {
            self.each_resource()
                .map(|resource| resource.inputs())
                .collect()
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Texts> {
        self.texts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One webhook's text with its scalars left out (one webhook is 14 lines
/// and six scalars; a configuration lists up to 148). Laid out once per
/// install, by writing one webhook's description whose scalars are marks,
/// so the text follows the description wherever it changes; only whole
/// scalars are filled in, each written as the YAML writer writes it.
struct WebhookLayout {
    /// The text between the scalars: one more than `holes`.
    chunks: Vec<String>,
    /// Which scalar each hole is: an index into
    /// [`WebhookFields::scalars`], or [`WebhookFields::SCALARS`] for the
    /// namespace.
    holes: Vec<usize>,
    /// The namespace as written.
    namespace: String,
}

/// The marks standing for the scalars (the namespace last): private-use
/// characters, written plain, never in a name.
const MARKS: [&str; WebhookFields::SCALARS + 1] = [
    "\u{e000}0",
    "\u{e000}1",
    "\u{e000}2",
    "\u{e000}3",
    "\u{e000}4",
    "\u{e000}5",
];

impl WebhookLayout {
    /// The layout under `scope`; None when a mark does not come out as a
    /// whole scalar (the description changed shape: the slow path is
    /// still right).
    fn new(scope: &Scope) -> Option<WebhookLayout> {
        let [name, path, group, version, resource] = std::array::from_fn(|index| MARKS[index]);
        let marked = WebhookFields {
            name: name.into(),
            path: path.into(),
            group,
            version,
            resource,
        };
        let one = Resource {
            file: String::new(),
            when: None,
            object: vec![crate::describe::tree::list(
                WEBHOOKS,
                vec![crate::objects::webhook_item(&marked)],
            )],
        };
        let marked_scope = Scope {
            namespace: MARKS[WebhookFields::SCALARS],
            ..scope.clone()
        };
        let text =
            chart_template::emit::doc_to_yaml(&describe::evaluate_doc(&one, &marked_scope).ok()??);
        let mut rest = text.strip_prefix(WEBHOOKS)?.strip_prefix(":\n")?;
        let (mut chunks, mut holes) = (Vec::new(), Vec::new());
        while let Some(at) = rest.find('\u{e000}') {
            let (before, after) = rest.split_at(at);
            let hole = MARKS.iter().position(|mark| after.starts_with(mark))?;
            let after = &after[MARKS[hole].len()..];
            // A whole scalar: after `key: ` or `- `, the end of its line.
            if !(before.ends_with(": ") || before.ends_with("- ")) || !after.starts_with('\n') {
                return None;
            }
            chunks.push(before.to_string());
            holes.push(hole);
            rest = after;
        }
        chunks.push(rest.to_string());
        let mut namespace = String::new();
        chart_template::emit::write_inline_str(scope.namespace, &mut namespace).then_some(
            WebhookLayout {
                chunks,
                holes,
                namespace,
            },
        )
    }

    /// Appends the configuration (`header`, its description less the
    /// webhooks, evaluated) to `out`; false, with part of it written,
    /// when the layout cannot write it.
    fn write(&self, header: &Doc, configuration: &Configuration, out: &mut String) -> bool {
        // The webhooks come last, after keys that sort before theirs.
        let Doc::Map(entries) = header else {
            return false;
        };
        if configuration.is_empty() || entries.iter().any(|(key, _)| key.as_ref() >= WEBHOOKS) {
            return false;
        }
        chart_template::emit::write_doc(header, out);
        out.push_str(WEBHOOKS);
        out.push_str(":\n");
        configuration.each_webhook(|fields| {
            let scalars = fields.scalars();
            for (chunk, &hole) in self.chunks.iter().zip(&self.holes) {
                out.push_str(chunk);
                match scalars.get(hole) {
                    Some(scalar) => {
                        if !chart_template::emit::write_inline_str(scalar, out) {
                            return false;
                        }
                    }
                    None => out.push_str(&self.namespace),
                }
            }
            out.push_str(self.chunks.last().expect("one more chunk than holes"));
            true
        })
    }
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
    let outline =
        crate::objects::resources_with(catalog, release, |configuration| configuration.header());
    let by_file: HashMap<String, usize> = crate::objects::configurations(catalog)
        .iter()
        .enumerate()
        .map(|(index, configuration)| (configuration.file(), index))
        .collect();
    let configuration_of = outline
        .iter()
        .map(|resource| by_file.get(&resource.file).copied())
        .collect();
    let described = Arc::new(Described {
        catalog: Arc::clone(catalog),
        release: release.clone(),
        outline,
        configuration_of,
        inputs: OnceLock::new(),
        texts: Mutex::new(HashMap::new()),
        installs: AtomicUsize::new(0),
    });
    *last = Some(Arc::clone(&described));
    described
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Values of one key, each different from its default, from the
    /// structural schema: its examples first, then by type (the other
    /// boolean, an integer above the default, another enum value, a text,
    /// a map or list with one entry built the same way). Bounded in depth
    /// and count.
    fn values_for(schema: &Value, node: &Value, default: &Value, depth: usize) -> Vec<Value> {
        use serde_json::json;
        // a documented reference keeps its examples beside the `$ref`
        let examples = |node: &Value| -> Vec<Value> {
            node.get("examples")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let mut out = examples(node);
        let node = crate::schema::resolve(schema, node);
        out.extend(examples(node));
        if let Some(choices) = node.get("enum").and_then(Value::as_array) {
            out.extend(choices.iter().cloned());
        }
        for alternative in node
            .get("anyOf")
            .or_else(|| node.get("oneOf"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(values_for(schema, alternative, default, depth));
        }
        let types: Vec<&str> = match node.get("type") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ if out.is_empty()
                && !node
                    .as_object()
                    .is_some_and(|o| o.contains_key("properties")) =>
            {
                vec!["string", "integer"]
            }
            _ => Vec::new(),
        };
        for kind in types {
            match kind {
                "boolean" => out.extend([json!(true), json!(false)]),
                "integer" => {
                    let above = default.as_i64().map_or(3, |n| n + 1);
                    out.extend([json!(above), json!(3), json!(1)]);
                }
                // a word, a percentage, a key=value pair
                "string" => out.extend([json!("sentinel"), json!("30%"), json!("sentinel=on")]),
                "object" if depth > 0 => {
                    if let Some(entry) = node.get("additionalProperties").filter(|e| e.is_object())
                    {
                        for value in values_for(schema, entry, &Value::Null, depth - 1)
                            .into_iter()
                            .take(2)
                        {
                            out.push(json!({"example.com/sentinel": value}));
                        }
                    }
                    let properties = node.get("properties").and_then(Value::as_object);
                    let required: Vec<&str> = node
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    // every required property, or else each property alone
                    let fill = |names: &[&str]| -> Option<Value> {
                        let mut object = serde_json::Map::new();
                        for name in names {
                            let property = properties?.get(*name)?;
                            let value = values_for(schema, property, &Value::Null, depth - 1)
                                .into_iter()
                                .next()?;
                            object.insert(name.to_string(), value);
                        }
                        Some(Value::Object(object))
                    };
                    if !required.is_empty() {
                        out.extend(fill(&required));
                    } else if let Some(properties) = properties {
                        for (name, property) in properties.iter().take(4) {
                            for value in values_for(schema, property, &Value::Null, depth - 1)
                                .into_iter()
                                .take(3)
                            {
                                out.push(json!({ name.as_str(): value }));
                            }
                        }
                    }
                }
                "array" if depth > 0 => {
                    if let Some(items) = node.get("items") {
                        for item in values_for(schema, items, &Value::Null, depth - 1)
                            .into_iter()
                            .take(2)
                        {
                            out.push(json!([item]));
                        }
                    }
                }
                _ => {}
            }
        }
        out.retain(|value| value != default && !value.is_null());
        out.truncate(12);
        out
    }

    /// The Deployments of a render, by role.
    fn deployments(objects: &[Value]) -> BTreeMap<String, Value> {
        objects
            .iter()
            .filter(|o| o["kind"] == "Deployment")
            .map(|o| {
                (
                    o["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    o.clone(),
                )
            })
            .collect()
    }

    /// Every values key does something: some object of the install reads
    /// it (itself, a key inside it, or the map it is in), or the rules do,
    /// or it is one of the few accepted and unused on purpose
    /// (`keys::ACCEPTED_UNUSED`). A key added with no read would be
    /// accepted and do nothing.
    #[test]
    fn every_values_key_is_read() {
        use chart_template::ast::Expr;
        let resources =
            crate::objects::resources(&crate::catalog::Catalog::builtin(), &Default::default());
        let mut read: Vec<&str> = resources
            .iter()
            .flat_map(|resource| resource.inputs())
            .filter_map(|input| match input {
                Expr::Values(key) => Some(key.path()),
                _ => None,
            })
            .collect();
        read.extend(crate::rules::RuleKey::ALL.iter().map(|key| key.path()));
        let unread: Vec<&str> = crate::keys::ALL
            .iter()
            .filter(|key| !crate::keys::ACCEPTED_UNUSED.contains(key))
            .map(|key| key.path())
            .filter(|path| {
                !read.iter().any(|read| {
                    read == path
                        || read.starts_with(&format!("{path}."))
                        || path.starts_with(&format!("{read}."))
                })
            })
            .collect();
        assert!(
            unread.is_empty(),
            "values keys nothing reads: {unread:?}; read each where it lands (src/objects/, with its BINDINGS row in src/roles.rs when it reaches a Deployment)"
        );
    }

    /// The replicas and strategy every Deployment is rendered with are
    /// the model's `Shape` says, in every topology and profile: the
    /// typed model and the chart's templates cannot disagree unseen.
    #[test]
    fn every_topology_renders_its_shape() {
        use crate::model::Strategy;
        use crate::roles::{Field, Role};
        let checker = crate::check::Checker::new();
        let mut cases: Vec<(String, String)> = crate::read::profiles::BUILTIN_PROFILES
            .iter()
            .map(|(name, text)| (format!("profile {name}"), text.to_string()))
            .collect();
        for (name, text) in [
            ("defaults", "{}"),
            ("three replicas", "replicaCount: 3"),
            (
                "one replica rolled by percentages",
                "replicaCount: 1\nstrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 50%, maxUnavailable: 0}}\nfeatureGates: {singleReplicaRollingUpdate: true}",
            ),
            (
                "split, 3 webhooks surging 50%",
                "topology: split\nsplit: {webhooks: {replicaCount: 3, maxSurge: 50%}, controller: {replicaCount: 1}}",
            ),
            (
                "split, controller paused",
                "topology: split\nsplit: {controller: {paused: true}}",
            ),
            ("bridge", "topology: bridge"),
            (
                "bridge over one rolled replica",
                "topology: bridge\nreplicaCount: 1\nstrategy: {type: RollingUpdate}\nfeatureGates: {singleReplicaRollingUpdate: true}",
            ),
        ] {
            cases.push((name.to_string(), text.to_string()));
        }
        for (name, text) in cases {
            let source = crate::read::parse_source(format!("{name}.yaml"), text).unwrap();
            let model = checker
                .check(&[source], "ns")
                .unwrap_or_else(|d| panic!("{name}: {d:?}"));
            let rendered = deployments(&Install::new(&model, ASOGEN).objects());
            for role in Role::ALL {
                let deployment = rendered.get(crate::objects::deployment_of(role));
                let Some(shape) = model.shape.deployment(role) else {
                    assert!(
                        deployment.is_none(),
                        "{name}: a {role:?} Deployment the shape has not"
                    );
                    continue;
                };
                let deployment =
                    deployment.unwrap_or_else(|| panic!("{name}: no {role:?} Deployment"));
                // as written, without the API server's defaults: the
                // render must say what the shape says
                let read = |field: Field| {
                    let pointer = field.pointer().expect("a field of the spec");
                    deployment.pointer(&pointer).cloned().unwrap_or_default()
                };
                let (kind, surge, unavailable) = match &shape.strategy {
                    Strategy::Recreate => ("Recreate", Value::Null, Value::Null),
                    Strategy::RollingUpdate {
                        max_surge,
                        max_unavailable,
                    } => (
                        "RollingUpdate",
                        serde_json::to_value(max_surge).unwrap(),
                        serde_json::to_value(max_unavailable).unwrap(),
                    ),
                };
                let want = (
                    Value::from(shape.replicas),
                    Value::from(kind),
                    surge,
                    unavailable,
                );
                let got = (
                    read(Field::Replicas),
                    read(Field::StrategyType),
                    read(Field::MaxSurge),
                    read(Field::MaxUnavailable),
                );
                assert_eq!(
                    got, want,
                    "{name}: the {role:?} Deployment against the model's shape"
                );
                if kind == "Recreate" {
                    // an explicit null, so that an apply clears a block an
                    // earlier RollingUpdate left (docs/upgrading.md)
                    assert_eq!(
                        deployment.pointer("/spec/strategy/rollingUpdate"),
                        Some(&Value::Null),
                        "{name}: the {role:?} Deployment's rollingUpdate under Recreate"
                    );
                }
            }
        }
    }

    /// Every row of `roles::BINDINGS` lands where it says: its key set to a
    /// value of its own (from the schema), on top of each context a key
    /// may need (the rolling single shape, metrics on), rendered in every
    /// topology, changes a field the row names on every role it reaches,
    /// no field it does not name on any Deployment, and nothing on a role it
    /// does not reach. A row moved to the wrong field or role fails here.
    #[test]
    fn every_row_lands_at_its_fields_on_exactly_its_roles() {
        use crate::roles::{BINDINGS, Field, Role};
        use crate::values::Topology;
        let schema = crate::schema::structural_schema_ref();
        let checker = crate::check::Checker::new();
        const CONTEXTS: [&str; 4] = [
            "{}",
            r#"{"replicaCount": 1, "featureGates": {"singleReplicaRollingUpdate": true}}"#,
            r#"{"replicaCount": 1, "strategy": {"type": "RollingUpdate"}, "featureGates": {"singleReplicaRollingUpdate": true}}"#,
            r#"{"metrics": {"enable": true, "secure": true}}"#,
        ];
        // Only the Deployments are evaluated; the renders without the key
        // (a context in a topology) are the same for every row: made once.
        let rendered = std::cell::RefCell::new(HashMap::new());
        let render = |values: &Value| -> Option<BTreeMap<String, Value>> {
            let text = values.to_string();
            if let Some(known) = rendered.borrow().get(&text) {
                return Clone::clone(known);
            }
            let source = crate::read::parse_source("sentinel.yaml".into(), text.clone()).ok();
            let model = source.and_then(|source| checker.check(&[source], "ns").ok());
            let objects = model.map(|model| {
                deployments(&Install::new(&model, ASOGEN).objects_of_kind("Deployment"))
            });
            rendered.borrow_mut().insert(text, objects.clone());
            objects
        };
        let topologies = [Topology::Single, Topology::Split, Topology::Bridge];
        let with_topology = |base: &Value, topology: Topology| {
            let mut values = base.clone();
            values["topology"] = topology.as_str().into();
            values
        };
        for row in BINDINGS {
            let key = row.key;
            let pointer = key.pointer();
            let node = crate::schema::node_at(schema, &pointer)
                .unwrap_or_else(|| panic!("{}: not in the schema", key.path()));
            let default = crate::values::default_of(key);
            let candidates = values_for(schema, node, &default, 4);
            // the first candidate and context with which the key changes
            // some Deployment
            let mut landed = None;
            'search: for candidate in &candidates {
                for context in CONTEXTS {
                    let base: Value = serde_json::from_str(context).unwrap();
                    let mut set = base.clone();
                    let mut slot = &mut set;
                    for part in key.path().split('.') {
                        slot = &mut slot[part];
                    }
                    *slot = candidate.clone();
                    let renders: Option<Vec<_>> = topologies
                        .iter()
                        .map(|&t| {
                            Some((
                                t,
                                render(&with_topology(&base, t))?,
                                render(&with_topology(&set, t))?,
                            ))
                        })
                        .collect();
                    let Some(renders) = renders else { continue };
                    if renders.iter().any(|(_, before, after)| before != after) {
                        landed = Some((candidate.clone(), context, renders));
                        break 'search;
                    }
                }
            }
            // a key the release's controller cannot act on renders nothing
            // (check/controller.rs warns of it): it must change nothing
            let inert = candidates.iter().any(|candidate| {
                let mut set = serde_json::json!({});
                let mut slot = &mut set;
                for part in key.path().split('.') {
                    slot = &mut slot[part];
                }
                *slot = candidate.clone();
                crate::read::parse_source("sentinel.yaml".into(), set.to_string())
                    .map(|source| checker.warnings(&[source]))
                    .unwrap_or_default()
                    .iter()
                    .any(|d| d.keyword.as_deref() == Some("controller") && d.key == key.path())
            });
            if inert {
                assert!(
                    landed.is_none(),
                    "{}: the controller cannot act on it, yet it changes a Deployment",
                    key.path()
                );
                continue;
            }
            let (value, context, renders) = landed.unwrap_or_else(|| {
                panic!(
                    "{}: no value tried changes a Deployment ({candidates:?})",
                    key.path()
                )
            });
            let why = format!("{} = {value} over {context}", key.path());
            let mut seen_on: Vec<Role> = Vec::new();
            for (topology, before, after) in &renders {
                for role in Role::ALL {
                    let name = crate::objects::deployment_of(role);
                    let (Some(old), Some(new)) = (before.get(name), after.get(name)) else {
                        continue;
                    };
                    if !row.reaches(role) {
                        assert_eq!(
                            old,
                            new,
                            "{why}: changes the {} Deployment ({}), which its row does not reach",
                            role.name(),
                            topology.as_str()
                        );
                        continue;
                    }
                    let changed: Vec<Field> = Field::ALL
                        .into_iter()
                        .filter(|f| f.read(old) != f.read(new))
                        .collect();
                    // a field inside one the row names is the row's too,
                    // and so is one that holds it (the rolling update block
                    // changes with its maxSurge); the block's other fields
                    // are fields of their own, checked on their own
                    let inside = |inner: &Field, outer: &Field| {
                        inner.path().starts_with(&format!("{}.", outer.path()))
                    };
                    let named = |field: &Field| {
                        row.fields()
                            .iter()
                            .any(|f| f == field || inside(field, f) || inside(f, field))
                    };
                    for field in &changed {
                        assert!(
                            named(field),
                            "{why}: changes {} of the {} Deployment ({}), a field its row does not name",
                            field.path(),
                            role.name(),
                            topology.as_str()
                        );
                    }
                    if !changed.is_empty() && !seen_on.contains(&role) {
                        seen_on.push(role);
                    }
                }
            }
            for role in Role::ALL.into_iter().filter(|&r| row.reaches(r)) {
                assert!(
                    seen_on.contains(&role),
                    "{why}: changes none of its row's fields ({:?}) on the {} Deployment in any topology",
                    row.fields().iter().map(|f| f.path()).collect::<Vec<_>>(),
                    role.name()
                );
            }
        }
    }

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
            let install = Install::new(model, ASOGEN);
            let written: Vec<String> = install
                .objects()
                .iter()
                .map(chart_template::emit::to_yaml)
                .collect();
            let texts: Vec<String> = install
                .texts()
                .iter()
                .map(|text| text.to_string())
                .collect();
            assert_eq!(texts, written, "namespace {}", model.namespace);
        }
    }

    #[test]
    fn webhook_configurations_from_the_layout_are_their_descriptions_written() {
        let checker = crate::check::Checker::new();
        let helm = Installer {
            managed_by: "Helm",
            ..ASOGEN
        };
        for (values, namespace) in [
            ("", "azureserviceoperator-system"),
            // Namespaces a YAML reader would take for a number or a bool.
            ("", "123"),
            ("", "yes"),
            ("podLabels: {team: x}\n", "ns"),
        ] {
            let source = crate::read::parse_source("v.yaml".into(), values.into()).unwrap();
            let mut model = checker.check(&[source], namespace).unwrap();
            // Catalog texts that must be quoted, and one written as a block.
            let catalog = Arc::make_mut(&mut model.catalog);
            catalog.groups[0].webhooks[0].resource = "yes".into();
            catalog.groups[1].webhooks[0].version = "1e3".into();
            catalog.groups[2].webhooks[0].resource = "a\nb".into();
            for installer in [ASOGEN, helm] {
                let install = Install::new(&model, installer);
                let scope = install.scope();
                assert!(WebhookLayout::new(&scope).is_some(), "{namespace}");
                let configurations = crate::objects::configurations(&model.catalog);
                let described = &install.described;
                let mut laid_out = 0;
                // Every resource in full, as the objects describe them
                // (and as the descriptions given one by one say).
                let full = crate::objects::resources(&model.catalog, &model.release);
                let each: Vec<Resource> = described.each_resource().map(Cow::into_owned).collect();
                assert!(each == full, "each_resource gives the full descriptions");
                for (index, resource) in full.iter().enumerate() {
                    if described.configuration_of[index].is_none() {
                        continue;
                    }
                    laid_out += 1;
                    let mut text = String::new();
                    let written = install.write_object(index, &scope, &configurations, &mut text);
                    let expected = doc(resource, &scope)
                        .map(|object| chart_template::emit::doc_to_yaml(&object));
                    assert_eq!(written.then_some(text), expected, "{}", resource.file);
                }
                assert_eq!(laid_out, configurations.len());
                // The outline is the resources, each configuration without its webhooks.
                for (index, resource) in described.outline.iter().enumerate() {
                    let full = &full[index];
                    match described.configuration_of[index] {
                        Some(at) => {
                            assert_eq!(*resource, configurations[at].header());
                            assert_eq!(*full, configurations[at].resource());
                        }
                        None => assert_eq!(resource, full),
                    }
                }
                assert_eq!(laid_out, 2 * model.catalog.groups.len());
            }
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
            let deployment = Install::new(model, ASOGEN)
                .objects()
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

    /// The objects of a kind are those of every object with that kind, in
    /// the same order, for every kind and topology.
    #[test]
    fn the_objects_of_a_kind_are_every_object_of_it() {
        let checker = crate::check::Checker::new();
        for text in ["", "topology: split\n", "topology: bridge\n"] {
            let source = crate::read::parse_source("v.yaml".into(), text.into()).unwrap();
            let model = checker.check(&[source], "ns").unwrap();
            let install = Install::new(&model, ASOGEN);
            let all = install.objects();
            let kinds: std::collections::BTreeSet<&str> =
                all.iter().filter_map(|o| o["kind"].as_str()).collect();
            assert!(kinds.contains("Deployment"), "{text}");
            for kind in kinds {
                let of_kind: Vec<&Value> = all.iter().filter(|o| o["kind"] == kind).collect();
                let found = install.objects_of_kind(kind);
                assert_eq!(found.iter().collect::<Vec<_>>(), of_kind, "{text}{kind}");
            }
        }
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
        let pairs = Install::new(&base, ASOGEN).differing(&Install::new(&other, ASOGEN));
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
        let (all_base, all_other) = (
            Install::new(&base, ASOGEN).objects(),
            Install::new(&other, ASOGEN).objects(),
        );
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
        let same = model("");
        assert!(
            Install::new(&base, ASOGEN)
                .differing(&Install::new(&same, ASOGEN))
                .is_empty()
        );
    }
}
