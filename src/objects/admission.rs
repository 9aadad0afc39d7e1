//! The in-cluster guard: two ValidatingAdmissionPolicies with their
//! bindings, whose validations are the rules in CEL ([`crate::rules::cel`]).
//! One checks the controller Deployment on every create and update (an
//! upgrade, `kubectl edit`, `kubectl apply`); the other checks its `scale`
//! subresource (`kubectl scale`, an autoscaler), which a policy on the
//! Deployment does not see, reading the Deployment's strategy as its
//! parameter. Both are cluster-scoped, so their names carry the release
//! namespace: two installs never share one.
//!
//! The guard names the Deployment, the policies and the namespace in fields
//! kustomize knows nothing of; [`kustomize_references`] tells it, so an
//! overlay's `namePrefix`, `nameSuffix` and `namespace` reach them too.

use serde_json::{Value, json};

use super::names::DEPLOYMENT;
use super::{header, lit, resource};
use crate::describe::tree::{field, json, map, text};
use crate::describe::{Entry, Expr, Node, Resource};
use crate::keys;
use crate::rules::cel::{Subject, validations};

/// The API the guard needs; where the cluster does not serve it (before
/// Kubernetes 1.30) the chart leaves the guard out.
const POLICY_API: &str = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
const GROUP: &str = "admissionregistration.k8s.io";
const API_VERSION: &str = "admissionregistration.k8s.io/v1";

/// The short names of the two guards.
const DEPLOYMENT_GUARD: &str = "azureserviceoperator-deployment-guard";
const SCALE_GUARD: &str = "azureserviceoperator-scale-guard";

/// The policy's field naming the Deployment (a kustomize field path).
const RESOURCE_NAMES: &str = "spec/matchConstraints/resourceRules/resourceNames";
/// The scale binding's field naming the Deployment.
const PARAM_NAME: &str = "spec/paramRef/name";
/// The binding's field naming its policy.
const POLICY_NAME: &str = "spec/policyName";
/// The label the API server sets on every Namespace to its name.
const NAMESPACE_LABEL: &str = "kubernetes.io/metadata.name";

/// When the guard is rendered.
fn enabled() -> Expr {
    Expr::all(vec![
        Expr::value(keys::ADMISSION_POLICY_ENABLE),
        Expr::ApiServed(POLICY_API),
    ])
}

/// `SHORT-<release namespace>`.
fn namespaced_name(short: &str) -> Expr {
    Expr::printf(&format!("{short}-%s"), vec![Expr::Namespace])
}

/// The object's header with the cluster-scoped name `SHORT-<namespace>`.
fn cluster_header(kind: &str, short: &str) -> Vec<Entry> {
    let mut object = header(API_VERSION, kind, short, false, vec![]);
    match &mut object[2] {
        Entry::Field(_, Node::Map(metadata)) => metadata[0] = json("name", namespaced_name(short)),
        _ => unreachable!("header puts metadata third"),
    }
    object
}

/// A policy on `resource` of the controller Deployment.
fn policy(
    file: &str,
    short: &str,
    resource_name: &str,
    operations: Value,
    subject: Subject,
) -> Resource {
    let mut spec = vec![
        text("failurePolicy", "Fail"),
        field(
            "matchConstraints",
            lit(json!({"resourceRules": [{
                "apiGroups": ["apps"],
                "apiVersions": ["v1"],
                "operations": operations,
                "resources": [resource_name],
                "resourceNames": [DEPLOYMENT],
            }]})),
        ),
    ];
    if subject == Subject::Scale {
        spec.push(field(
            "paramKind",
            lit(json!({"apiVersion": "apps/v1", "kind": "Deployment"})),
        ));
    }
    let checks: Vec<Value> = validations(subject)
        .into_iter()
        .map(|v| json!({"expression": v.expression, "message": v.message}))
        .collect();
    spec.push(field("validations", lit(Value::Array(checks))));
    let mut object = cluster_header("ValidatingAdmissionPolicy", short);
    object.push(map("spec", spec));
    resource(file, Some(enabled()), object)
}

/// The binding of a policy to the release namespace (`params`: the scale
/// guard reads the controller Deployment).
fn binding(file: &str, short: &str, params: bool) -> Resource {
    let mut spec = vec![
        json("policyName", namespaced_name(short)),
        field("validationActions", lit(json!(["Deny"]))),
        map(
            "matchResources",
            vec![map(
                "namespaceSelector",
                vec![map(
                    "matchLabels",
                    vec![json(NAMESPACE_LABEL, Expr::Namespace)],
                )],
            )],
        ),
    ];
    if params {
        spec.push(map(
            "paramRef",
            vec![
                // No namespace: the request's, which the namespace selector
                // above makes the release namespace (one name less for a
                // kustomize overlay to follow).
                text("name", DEPLOYMENT),
                // A scale request always has its Deployment (the API server
                // reads it directly when its cache has none yet), so a
                // missing one means this binding names the wrong object:
                // refuse rather than let every scale through unchecked.
                text("parameterNotFoundAction", "Deny"),
            ],
        ));
    }
    let mut object = cluster_header("ValidatingAdmissionPolicyBinding", short);
    object.push(map("spec", spec));
    resource(file, Some(enabled()), object)
}

/// kustomize transformer configuration (a base's `configurations:`, which
/// kustomize keeps for every overlay built on it) for the guard's
/// references: the Deployment named by the policies' `resourceNames` and
/// the scale binding's `paramRef`, the policies named by their bindings,
/// and the release namespace in the bindings' namespace selector. Without
/// it, an overlay's renames leave the guard matching nothing.
pub fn kustomize_references() -> Value {
    let spec = |kind: &str, path: String| json!({"group": GROUP, "kind": kind, "path": path});
    // A `/` inside a key is escaped in a kustomize field path.
    let label_path = format!(
        "spec/matchResources/namespaceSelector/matchLabels/{}",
        NAMESPACE_LABEL.replace('/', "\\/")
    );
    json!({
        "nameReference": [
            {
                "group": "apps",
                "kind": "Deployment",
                "fieldSpecs": [
                    spec("ValidatingAdmissionPolicy", RESOURCE_NAMES.into()),
                    spec("ValidatingAdmissionPolicyBinding", PARAM_NAME.into()),
                ],
            },
            {
                "group": GROUP,
                "kind": "ValidatingAdmissionPolicy",
                "fieldSpecs": [spec("ValidatingAdmissionPolicyBinding", POLICY_NAME.into())],
            },
        ],
        "namespace": [spec("ValidatingAdmissionPolicyBinding", label_path)],
    })
}

/// The guard's four objects: the policies, then their bindings (the order
/// Helm installs kinds it does not list: by kind).
pub fn admission_policies() -> Vec<Resource> {
    vec![
        policy(
            "admissionpolicy-deployment.yaml",
            DEPLOYMENT_GUARD,
            "deployments",
            json!(["CREATE", "UPDATE"]),
            Subject::Deployment,
        ),
        policy(
            "admissionpolicy-scale.yaml",
            SCALE_GUARD,
            "deployments/scale",
            json!(["UPDATE"]),
            Subject::Scale,
        ),
        binding(
            "admissionpolicybinding-deployment.yaml",
            DEPLOYMENT_GUARD,
            false,
        ),
        binding("admissionpolicybinding-scale.yaml", SCALE_GUARD, true),
    ]
}
