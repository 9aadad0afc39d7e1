//! kustomize: a base holding the default (high-availability) install, one
//! file per resource, and a kustomize Component per other profile that
//! turns the base into that profile with JSON patches.

use serde_json::{Value, json};

use super::Artifacts;
use super::helm::GENERATED_BY;
use crate::yaml;

/// The kustomize folder under the output directory.
pub const KUSTOMIZE_DIR: &str = "kustomize";

/// The base's kustomize transformer configuration.
const REFERENCES_FILE: &str = "kustomizeconfig.yaml";

/// `kind-name.yaml`, lower case: the file a resource lives in.
pub fn file_name(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or("object").to_lowercase();
    let name = object["metadata"]["name"].as_str().unwrap_or("unnamed");
    format!("{kind}-{name}.yaml")
}

fn identity(object: &Value) -> (String, String, String, String) {
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    (
        text(&object["apiVersion"]),
        text(&object["kind"]),
        text(&object["metadata"]["namespace"]),
        text(&object["metadata"]["name"]),
    )
}

fn header() -> String {
    format!("# {GENERATED_BY}\n")
}

/// The base: every object of the base profile, by its head (`apiVersion`,
/// `kind`, `metadata.name` and `namespace`: what names its file), with
/// its text (`texts`, the objects as YAML, in the same order).
pub fn render_base<T: AsRef<str>>(
    objects: &[Value],
    texts: &[T],
    profile: &str,
    artifacts: &mut Artifacts,
) {
    assert_eq!(objects.len(), texts.len(), "one text per object");
    let mut resources = Vec::new();
    for (object, text) in objects.iter().zip(texts) {
        let file = file_name(object);
        artifacts.insert(
            format!("{KUSTOMIZE_DIR}/base/{file}"),
            header() + text.as_ref(),
        );
        resources.push(file);
    }
    let mut kustomization = json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    });
    if objects
        .iter()
        .any(|o| o["kind"] == "ValidatingAdmissionPolicyBinding")
    {
        // Overlays built on the base keep its configurations: their
        // renames reach the guard's references.
        artifacts.insert(
            format!("{KUSTOMIZE_DIR}/base/{REFERENCES_FILE}"),
            format!(
                "{}# The in-cluster guard's references to the Deployment, its policies and\n# the namespace, for kustomize's name reference and namespace transformers.\n{}",
                header(),
                yaml::to_yaml(&crate::objects::kustomize_references())
            ),
        );
        kustomization["configurations"] = json!([REFERENCES_FILE]);
        // kustomize renames a reference only to an object in the
        // referrer's namespace, unless it knows the referrer is
        // cluster-scoped; kustomize up to v5.8.1 (kyaml v0.21.1, in kubectl
        // 1.37) does not know the policies and bindings are, and takes them
        // for objects of the `default` namespace, so an overlay's
        // `namePrefix` alone would not reach their references. The base's
        // own namespace puts them beside the Deployment there (it changes
        // nothing else: every namespaced object already has it, and a
        // kustomize that knows them leaves cluster-scoped objects alone).
        if let Some(namespace) = release_namespace(objects) {
            kustomization["namespace"] = json!(namespace);
        }
    }
    artifacts.insert(
        format!("{KUSTOMIZE_DIR}/base/kustomization.yaml"),
        format!(
            "{}# The `{profile}` profile: the default install.\n{}",
            header(),
            yaml::to_yaml(&kustomization)
        ),
    );
}

/// RFC 6902 operations that turn `from` into `to`: maps are compared key
/// by key; lists and scalars are replaced whole.
pub fn json_patch(from: &Value, to: &Value, path: &str, ops: &mut Vec<Value>) {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, old) in a {
                let child = format!("{path}/{}", helm_values::pointer::escape_segment(key));
                match b.get(key) {
                    None => ops.push(json!({"op": "remove", "path": child})),
                    Some(new) if new == old => {}
                    Some(new) => json_patch(old, new, &child, ops),
                }
            }
            for (key, new) in b {
                if !a.contains_key(key) {
                    ops.push(json!({"op": "add", "path": format!("{path}/{}", helm_values::pointer::escape_segment(key)), "value": new}));
                }
            }
        }
        (a, b) if a == b => {}
        (_, b) => ops.push(json!({"op": "replace", "path": path, "value": b})),
    }
}

/// The base's Deployment: the controller, whose namespace is the
/// release's.
fn release_deployment(objects: &[Value]) -> Option<&Value> {
    objects.iter().find(|o| o["kind"] == "Deployment")
}

/// The namespace the base's objects are in (its Deployment's).
fn release_namespace(objects: &[Value]) -> Option<&str> {
    release_deployment(objects).and_then(|o| o["metadata"]["namespace"].as_str())
}

/// A kustomize replacement that copies the namespace the base's
/// Deployment ends up in into every field of the component's `objects`
/// that holds the release namespace (`metadata.namespace`, and the
/// guard's [`crate::objects::NAMESPACE_FIELDS`]). It runs where the
/// component is used, after the layers below it: an overlay over another
/// that sets `namespace:` keeps the component's objects beside the base's.
fn follow_namespace(deployment: &Value, objects: &[&Value]) -> Option<Value> {
    let namespace = deployment["metadata"]["namespace"].as_str()?;
    let mut targets = Vec::new();
    for object in objects {
        let mut paths = Vec::new();
        let (api_version, kind, _, name) = identity(object);
        // The guard's objects are cluster-scoped, but kustomize takes them
        // for namespaced and gives them the objects' namespace (see
        // [`render_base`]): moved with the rest, they stay where the
        // Deployments they name are, which kustomize's name references
        // need to follow a rename made below the overlay.
        let taken_for_namespaced = kind.starts_with("ValidatingAdmissionPolicy");
        if object["metadata"]["namespace"] == namespace || taken_for_namespaced {
            paths.push("metadata.namespace".to_string());
        }
        let group = api_version.split_once('/').map_or("", |(group, _)| group);
        for (field_group, field_kind, keys) in crate::objects::NAMESPACE_FIELDS {
            let pointer: String = keys
                .iter()
                .map(|key| format!("/{}", helm_values::pointer::escape_segment(key)))
                .collect();
            if (*field_group, *field_kind) == (group, kind.as_str())
                && object.pointer(&pointer) == Some(&json!(namespace))
            {
                // a key with a dot is one field in brackets
                let keys: Vec<String> = keys
                    .iter()
                    .map(|key| {
                        if key.contains('.') {
                            format!("[{key}]")
                        } else {
                            key.to_string()
                        }
                    })
                    .collect();
                paths.push(keys.join("."));
            }
        }
        if !paths.is_empty() {
            targets.push(json!({"select": {"kind": kind, "name": name}, "fieldPaths": paths}));
        }
    }
    (!targets.is_empty()).then(|| {
        json!({
            "source": {
                "kind": "Deployment",
                "name": deployment["metadata"]["name"],
                "fieldPath": "metadata.namespace",
            },
            "targets": targets,
        })
    })
}

/// The folder of a component that holds the objects it adds.
const OBJECTS_DIR: &str = "objects";

/// A Component turning the base objects into the profile's objects.
pub fn render_component(name: &str, base: &[Value], profile: &[Value], artifacts: &mut Artifacts) {
    let dir = format!("{KUSTOMIZE_DIR}/components/{name}");
    let mut resources = Vec::new();
    let mut added: Vec<&Value> = Vec::new();
    let mut patches = Vec::new();
    let base_ids: Vec<_> = base.iter().map(identity).collect();
    let profile_ids: Vec<_> = profile.iter().map(identity).collect();
    for (object, id) in profile.iter().zip(&profile_ids) {
        match base_ids.iter().position(|b| b == id).map(|i| &base[i]) {
            Some(original) => {
                let mut ops = Vec::new();
                json_patch(original, object, "", &mut ops);
                if ops.is_empty() {
                    continue;
                }
                let file = format!("patches/{}", file_name(object));
                artifacts.insert(format!("{dir}/{file}"), header() + &yaml::to_yaml(&ops));
                patches.push(json!({"path": file, "target": target(object)}));
            }
            None => {
                let file = file_name(object);
                artifacts.insert(
                    format!("{dir}/{OBJECTS_DIR}/{file}"),
                    header() + &yaml::to_yaml(object),
                );
                resources.push(file);
                added.push(object);
            }
        }
    }
    for (object, id) in base.iter().zip(&base_ids) {
        if !profile_ids.contains(id) {
            // Deletion is a strategic-merge patch with `$patch: delete`.
            let (api_version, kind, namespace, name) = identity(object);
            let mut metadata = json!({"name": name});
            if !namespace.is_empty() {
                metadata["namespace"] = json!(namespace);
            }
            let file = format!("patches/delete-{}", file_name(object));
            let patch = json!({"$patch": "delete", "apiVersion": api_version, "kind": kind, "metadata": metadata});
            artifacts.insert(format!("{dir}/{file}"), header() + &yaml::to_yaml(&patch));
            patches.push(json!({"path": file}));
        }
    }
    let mut component = json!({
        "apiVersion": "kustomize.config.k8s.io/v1alpha1",
        "kind": "Component",
    });
    if !resources.is_empty() {
        // The component's own objects in a Kustomization of their own with
        // the base's namespace, for the reason the base has it
        // ([`render_base`]): an overlay's namePrefix or nameSuffix alone
        // must reach the references of the component's policies too. A
        // component's own `namespace:` would move every object of the
        // overlay, the user's included.
        let mut objects = json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": resources,
        });
        if let Some(namespace) = release_namespace(base) {
            objects["namespace"] = json!(namespace);
        }
        artifacts.insert(
            format!("{dir}/{OBJECTS_DIR}/kustomization.yaml"),
            format!(
                "{}# The objects the `{name}` component adds to the base, in the base's namespace\n# (the component's replacements move them to where the base ends up).\n{}",
                header(),
                yaml::to_yaml(&objects)
            ),
        );
        component["resources"] = json!([OBJECTS_DIR]);
    }
    if !patches.is_empty() {
        component["patches"] = json!(patches);
    }
    if let Some(replacement) = release_deployment(base).and_then(|d| follow_namespace(d, &added)) {
        component["replacements"] = json!([replacement]);
    }
    artifacts.insert(
        format!("{dir}/kustomization.yaml"),
        format!(
            "{}# The `{name}` profile as a Component over ../../base:\n#   components: [../../components/{name}]\n{}",
            header(),
            yaml::to_yaml(&component)
        ),
    );
}

fn target(object: &Value) -> Value {
    let (api_version, kind, namespace, name) = identity(object);
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group.to_string(), version.to_string()),
        None => (String::new(), api_version.clone()),
    };
    let mut target = json!({"version": version, "kind": kind, "name": name});
    if !group.is_empty() {
        target["group"] = json!(group);
    }
    if !namespace.is_empty() {
        target["namespace"] = json!(namespace);
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_patch_replaces_changed_leaves_and_lists() {
        let mut ops = Vec::new();
        json_patch(
            &json!({"spec": {"replicas": 2, "strategy": {"type": "Recreate"}, "keep": [1]}}),
            &json!({"spec": {"replicas": 1, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}, "keep": [1]}}),
            "",
            &mut ops,
        );
        assert_eq!(
            ops,
            vec![
                json!({"op": "replace", "path": "/spec/replicas", "value": 1}),
                json!({"op": "replace", "path": "/spec/strategy/type", "value": "RollingUpdate"}),
                json!({"op": "add", "path": "/spec/strategy/rollingUpdate", "value": {"maxSurge": 1}}),
            ]
        );
    }
}
