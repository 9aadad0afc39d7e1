//! The policies of the rules' change checks ([`crate::rules::change`]):
//! today topology split's ordering guard (`split-controller-after-webhooks`),
//! under which the controller Deployment, whose new pod applies the CRDs,
//! moves to a new image or starts from 0 replicas only once the webhooks
//! Deployment runs that image and has rolled out, so a one-shot apply of a
//! new version (`kubectl apply -f` of the whole manifest, one `helm
//! upgrade`) is refused before the new controller writes CRDs that old
//! webhook pods cannot convert (invariant I2 of docs/split-topology.md).
//!
//! The checks, their CEL and their messages come from the rule's entry;
//! this module names each policy, matches it to its Deployment and binds
//! it to its parameter. Its references are fields the guard's kustomize
//! configuration already covers for every policy and binding
//! ([`super::kustomize_references`]).

use serde_json::{Value, json};

use super::{Param, ParamBy, binding, cluster_header, enabled, match_constraints};
use crate::catalog::CRD_NAME_LABEL;
use crate::describe::tree::{field, map, text};
use crate::describe::{Expr, Resource};
use crate::metadata::selector_labels;
use crate::objects::{deployment_of, lit, resource, topology_is};
use crate::roles::Role;
use crate::rules::RULES;
use crate::rules::cel::Subject;
use crate::rules::change::{ChangeCheck, Peer, change_checks};

/// The short name (the object's name adds the release namespace) and file
/// of each check's policy: a new kind of check needs its own here.
fn names_of(check: &ChangeCheck) -> (&'static str, &'static str) {
    match (check.role, check.subject, check.peer) {
        (Role::Controller, Subject::Deployment, Peer::Deployment(Role::Webhooks)) => {
            ("azureserviceoperator-order-guard", "order.yaml")
        }
        (Role::Controller, Subject::Scale, Peer::None) => {
            ("azureserviceoperator-order-scale-guard", "order-scale.yaml")
        }
        (Role::Controller, Subject::Deployment, Peer::Pods(Role::Webhooks)) => {
            ("azureserviceoperator-order-pods-guard", "order-pods.yaml")
        }
        (Role::Webhooks, Subject::Deployment, Peer::Deployment(Role::Controller)) => (
            "azureserviceoperator-order-downgrade-guard",
            "order-downgrade.yaml",
        ),
        (Role::Controller, Subject::Deployment, Peer::Crds) => {
            ("azureserviceoperator-crds-guard", "crds.yaml")
        }
        (Role::Webhooks, Subject::Deployment, Peer::Crds) => (
            "azureserviceoperator-webhooks-crds-guard",
            "webhooks-crds.yaml",
        ),
        other => panic!("no policy name for the change check {other:?}"),
    }
}

/// The binding's parameter. Allow when there is none: with no peer
/// Deployment, or no pod of the peer, nothing of the peer can be stale or
/// ahead (a fresh install, or one whose peer is gone), while Deny would
/// refuse every update of the Deployment (the Deployment controller's and
/// the garbage collector's too) for as long as the binding outlived the
/// peer (a migration back to single that keeps it). A binding naming the
/// wrong Deployment, the one case Allow would hide, is what the kustomize
/// references prevent.
fn param_of(peer: Peer) -> Option<Param> {
    let by = match peer {
        Peer::None => return None,
        Peer::Deployment(role) => ParamBy::Name(deployment_of(role)),
        Peer::Pods(role) => ParamBy::Labels(selector_labels(role)),
        Peer::Crds => ParamBy::Labels(&[CRD_NAME_LABEL]),
    };
    Some(Param {
        by,
        when_missing: "Allow",
    })
}

/// A policy's parameter kind.
fn param_kind(peer: Peer) -> Option<Value> {
    match peer {
        Peer::None => None,
        Peer::Deployment(_) => Some(json!({"apiVersion": "apps/v1", "kind": "Deployment"})),
        Peer::Pods(_) => Some(json!({"apiVersion": "v1", "kind": "Pod"})),
        Peer::Crds => Some(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}),
        ),
    }
}

/// The policy of one check, rendered when `when` holds.
fn policy(check: &ChangeCheck, when: &Expr) -> Resource {
    let (short, file) = names_of(check);
    let resource_name = match check.subject {
        Subject::Deployment => "deployments",
        Subject::Scale => "deployments/scale",
    };
    let mut spec = vec![
        text("failurePolicy", "Fail"),
        match_constraints(
            json!(check.operations),
            resource_name,
            deployment_of(check.role),
        ),
    ];
    if let Some(kind) = param_kind(check.peer) {
        spec.push(field("paramKind", lit(kind)));
    }
    if !check.variables.is_empty() {
        spec.push(field(
            "variables",
            lit(Value::from(check.variables.clone())),
        ));
    }
    spec.push(field(
        "validations",
        lit(Value::from(check.validations.clone())),
    ));
    let mut object = cluster_header("ValidatingAdmissionPolicy", short);
    object.push(map("spec", spec));
    resource(
        &format!("admissionpolicy-{file}"),
        Some(when.clone()),
        object,
    )
}

/// The change checks' policies, then their bindings (those with a
/// parameter first), each rendered in the topologies where its rule's
/// alternatives can hold (topology split and the bridge of a Helm
/// migration, where the ordering guard also refuses the controller's half
/// of a version upgrade, which would mix versions behind the webhook
/// Service) and where the guard is.
pub fn objects() -> Vec<Resource> {
    let checks: Vec<ChangeCheck> = RULES.iter().flat_map(change_checks).collect();
    let when_of = |check: &ChangeCheck| {
        enabled(Some(Expr::any(
            check.topologies.iter().map(|t| topology_is(*t)).collect(),
        )))
    };
    let mut objects: Vec<Resource> = checks
        .iter()
        .map(|check| policy(check, &when_of(check)))
        .collect();
    let mut bound: Vec<&ChangeCheck> = checks.iter().collect();
    bound.sort_by_key(|check| check.peer == Peer::None);
    objects.extend(bound.into_iter().map(|check| {
        let (short, file) = names_of(check);
        binding(
            &format!("admissionpolicybinding-{file}"),
            short,
            param_of(check.peer),
            when_of(check),
        )
    }));
    objects
}
