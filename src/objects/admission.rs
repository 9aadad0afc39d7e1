//! The in-cluster guard: ValidatingAdmissionPolicies with their bindings,
//! whose validations are the rules in CEL ([`crate::rules::cel`]), two per
//! role ([`Role`]) that has rules the cluster can check, each matching the
//! Deployment of that role by name. One checks the Deployment on every
//! create and update (an upgrade, `kubectl edit`, `kubectl apply`); the
//! other checks its `scale` subresource (`kubectl scale`, an autoscaler),
//! which a policy on the Deployment does not see, reading the Deployment's
//! strategy as its parameter. All are cluster-scoped, so their names carry
//! the release namespace: two installs never share one.
//!
//! The guard names the Deployment, the policies and the namespace in fields
//! kustomize knows nothing of; [`kustomize_references`] tells it, so an
//! overlay's `namePrefix`, `nameSuffix` and `namespace` reach them too.

pub(super) mod change_guard;

use serde_json::{Value, json};

use super::deployment_of;
use super::{header, lit, resource};
use crate::describe::tree::{field, json, map, text};
use crate::describe::{Entry, Expr, Node, Resource};
use crate::keys;
use crate::roles::Role;
use crate::rules::TOPOLOGIES;
use crate::rules::cel::{Subject, validations};
use crate::values::Topology;

/// The API the guard needs; where the cluster does not serve it (before
/// Kubernetes 1.30) the chart leaves the guard out.
const POLICY_API: &str = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
const GROUP: &str = "admissionregistration.k8s.io";
const API_VERSION: &str = "admissionregistration.k8s.io/v1";

/// The guard of one role: the Deployment it checks, and the short names
/// and files of its two policies (a binding's file is its policy's with
/// `admissionpolicybinding-`).
struct Guard {
    /// Checks the Deployment.
    object: (&'static str, &'static str),
    /// Checks its `scale` subresource.
    scale: (&'static str, &'static str),
}

/// The names of `role`'s guard ([`deployment_of`] names its Deployment). The
/// controller's keep the names they had before there were roles, so an
/// upgrade replaces them in place.
fn guard_of(role: Role) -> Guard {
    match role {
        Role::Controller => Guard {
            object: ("azureserviceoperator-deployment-guard", "deployment.yaml"),
            scale: ("azureserviceoperator-scale-guard", "scale.yaml"),
        },
        Role::Webhooks => Guard {
            object: ("azureserviceoperator-webhooks-guard", "webhooks.yaml"),
            scale: (
                "azureserviceoperator-webhooks-scale-guard",
                "webhooks-scale.yaml",
            ),
        },
    }
}

/// The policy's field naming the Deployment (a kustomize field path).
const RESOURCE_NAMES: &str = "spec/matchConstraints/resourceRules/resourceNames";
/// The scale binding's field naming the Deployment.
const PARAM_NAME: &str = "spec/paramRef/name";
/// The binding's field naming its policy.
const POLICY_NAME: &str = "spec/policyName";
/// The label the API server sets on every Namespace to its name.
const NAMESPACE_LABEL: &str = "kubernetes.io/metadata.name";

/// When the guard is rendered, with `more` conditions of one policy.
fn enabled(more: Option<Expr>) -> Expr {
    let mut all = vec![
        Expr::value(keys::ADMISSION_POLICY_ENABLE),
        Expr::ApiServed(POLICY_API),
    ];
    all.extend(more);
    Expr::all(all)
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

/// A policy on `subject` of `deployment`, with `checks` as its
/// validations, rendered when `when` holds.
fn policy(
    file: &str,
    short: &str,
    deployment: &str,
    subject: Subject,
    checks: Entry,
    when: Expr,
) -> Resource {
    let (resource_name, operations) = match subject {
        Subject::Deployment => ("deployments", json!(["CREATE", "UPDATE"])),
        Subject::Scale => ("deployments/scale", json!(["UPDATE"])),
    };
    let mut spec = vec![
        text("failurePolicy", "Fail"),
        match_constraints(operations, resource_name, deployment),
    ];
    if subject == Subject::Scale {
        spec.push(field(
            "paramKind",
            lit(json!({"apiVersion": "apps/v1", "kind": "Deployment"})),
        ));
    }
    spec.push(checks);
    let mut object = cluster_header("ValidatingAdmissionPolicy", short);
    object.push(map("spec", spec));
    resource(file, Some(when), object)
}

/// The validations of `role`'s policy on `subject` as the chart renders
/// them (the rules' conditions on the topology are decided when it
/// renders: one list, or a choice by topology), and when the policy is
/// rendered at all; None when no topology has any.
fn checks(role: Role, subject: Subject) -> Option<(Entry, Expr)> {
    let lists: Vec<(Topology, Value)> = TOPOLOGIES
        .into_iter()
        .filter_map(|topology| {
            let list: Vec<Value> = validations(role, subject, topology)
                .into_iter()
                .map(|v| json!({"expression": v.expression, "message": v.message}))
                .collect();
            (!list.is_empty()).then(|| (topology, Value::Array(list)))
        })
        .collect();
    let entry = |list: &Value| field("validations", lit(list.clone()));
    // The first topology's list (the default's) is the one left over when
    // the others are tested.
    let (first, others) = lists.split_first()?;
    let mut checks = entry(&first.1);
    for (topology, list) in others.iter().rev() {
        if *list != first.1 {
            checks = Entry::If(
                super::topology_is(*topology),
                vec![entry(list)],
                vec![checks],
            );
        }
    }
    // Rendered only in the topologies that have validations.
    let mut only: Vec<Expr> = lists
        .iter()
        .map(|(topology, _)| super::topology_is(*topology))
        .collect();
    let only = match only.len() {
        n if n == TOPOLOGIES.len() => None,
        1 => Some(only.remove(0)),
        _ => Some(Expr::any(only)),
    };
    let when = enabled(only);
    Some((checks, when))
}

/// A policy's `matchConstraints`: `operations` on the apps/v1 `resource`
/// (`deployments` or `deployments/scale`) of the Deployment `name`.
fn match_constraints(operations: Value, resource: &str, name: &str) -> Entry {
    field(
        "matchConstraints",
        lit(json!({"resourceRules": [{
            "apiGroups": ["apps"],
            "apiVersions": ["v1"],
            "operations": operations,
            "resources": [resource],
            "resourceNames": [name],
        }]})),
    )
}

/// A binding's parameter: the objects its policy reads (in the request's
/// namespace), and what the binding does when there is none
/// (`parameterNotFoundAction`, `Allow` or `Deny`; each caller says why).
struct Param {
    by: ParamBy,
    when_missing: &'static str,
}

/// How a binding finds its parameter.
enum ParamBy {
    /// One object by its name (a Deployment of the release).
    Name(&'static str),
    /// Every object with these labels (the policy must pass for each).
    Labels(&'static [(&'static str, &'static str)]),
}

/// The binding of a policy to the release namespace, with its parameter
/// if the policy reads one.
fn binding(file: &str, short: &str, param: Option<Param>, when: Expr) -> Resource {
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
    if let Some(param) = param {
        spec.push(map(
            "paramRef",
            vec![
                // No namespace: the request's, which the namespace selector
                // above makes the release namespace (one name less for a
                // kustomize overlay to follow).
                match param.by {
                    ParamBy::Name(name) => text("name", name),
                    ParamBy::Labels(labels) => field(
                        "selector",
                        lit(json!({"matchLabels": labels
                            .iter()
                            .map(|(key, value)| (key.to_string(), json!(value)))
                            .collect::<serde_json::Map<_, _>>()})),
                    ),
                },
                text("parameterNotFoundAction", param.when_missing),
            ],
        ));
    }
    let mut object = cluster_header("ValidatingAdmissionPolicyBinding", short);
    object.push(map("spec", spec));
    resource(file, Some(when), object)
}

/// The fields of the guard's objects that hold the release namespace
/// beside `metadata.namespace`: (API group, kind, the field's path as its
/// keys). kustomize's namespace transformer learns them from
/// [`kustomize_references`]; a component's replacements copy the base's
/// namespace into them (`render::kustomize`).
pub const NAMESPACE_FIELDS: &[(&str, &str, &[&str])] = &[(
    GROUP,
    "ValidatingAdmissionPolicyBinding",
    &[
        "spec",
        "matchResources",
        "namespaceSelector",
        "matchLabels",
        NAMESPACE_LABEL,
    ],
)];

/// kustomize transformer configuration (a base's `configurations:`, which
/// kustomize keeps for every overlay built on it) for the guard's
/// references: the Deployment named by the policies' `resourceNames` and
/// the scale binding's `paramRef`, the policies named by their bindings,
/// and the release namespace in the bindings' namespace selector. Without
/// it, an overlay's renames leave the guard matching nothing.
pub fn kustomize_references() -> Value {
    let spec = |kind: &str, path: String| json!({"group": GROUP, "kind": kind, "path": path});
    // A `/` inside a key is escaped in a kustomize field path.
    let namespace_fields: Vec<Value> = NAMESPACE_FIELDS
        .iter()
        .map(|(group, kind, keys)| {
            let keys: Vec<String> = keys.iter().map(|key| key.replace('/', "\\/")).collect();
            json!({"group": group, "kind": kind, "path": keys.join("/")})
        })
        .collect();
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
        "namespace": namespace_fields,
    })
}

/// The guard's objects: for each role with rules the cluster can check,
/// its policies, then the bindings (the order Helm installs kinds it does
/// not list: by kind).
pub fn admission_policies() -> Vec<Resource> {
    let mut policies = Vec::new();
    let mut bindings = Vec::new();
    for role in Role::ALL {
        let guard = guard_of(role);
        let subjects = [
            (guard.object, Subject::Deployment),
            (guard.scale, Subject::Scale),
        ];
        for ((short, file), subject) in subjects {
            // A role without such rules needs no policy.
            let Some((checks, when)) = checks(role, subject) else {
                continue;
            };
            policies.push(policy(
                &format!("admissionpolicy-{file}"),
                short,
                deployment_of(role),
                subject,
                checks,
                when.clone(),
            ));
            // A scale request always has its Deployment (the API server
            // reads it directly when its cache has none yet), so a missing
            // one means the binding names the wrong object: refuse rather
            // than let every scale through unchecked.
            let param = (subject == Subject::Scale).then_some(Param {
                by: ParamBy::Name(deployment_of(role)),
                when_missing: "Deny",
            });
            bindings.push(binding(
                &format!("admissionpolicybinding-{file}"),
                short,
                param,
                when,
            ));
        }
    }
    policies.extend(bindings);
    policies
}
