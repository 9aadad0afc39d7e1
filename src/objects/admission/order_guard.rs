//! Topology split's ordering guard (`split-controller-after-webhooks`):
//! the controller Deployment, whose new pod applies the CRDs, moves to a
//! new image or starts from 0 replicas only once the webhooks Deployment
//! runs that image and has rolled out, so a one-shot apply of a new
//! version (`kubectl apply -f` of the whole manifest, one `helm upgrade`)
//! is refused before the new controller writes CRDs that old webhook pods
//! cannot convert (invariant I2 of docs/split-topology.md).
//!
//! It compares the old and the new object and reads a second Deployment,
//! which the rule table's conditions (one Deployment, as it is) cannot
//! say; so it is written here, as its own pair of policies, and the rule
//! table leaves it out (docs/rules.md). Its references are fields the
//! guard's kustomize configuration already covers for every policy and
//! binding ([`super::kustomize_references`]).

use serde_json::json;

use super::{Param, ParamBy, binding, cluster_header, enabled, match_constraints};
use crate::describe::tree::{field, map, text};
use crate::describe::{Expr, Resource};
use crate::metadata::WEBHOOKS_SELECTOR_LABELS;
use crate::objects::names::{DEPLOYMENT, WEBHOOKS_DEPLOYMENT};
use crate::objects::{lit, resource, webhooks_deployed};

/// The rule id every refusal starts with.
const RULE: &str = "split-controller-after-webhooks";

/// The rule in one sentence.
const SUMMARY: &str = "with topology: split (or bridge), the controller Deployment changes its manager image, or starts from 0 replicas, only once the webhooks Deployment runs that image and has rolled out";

/// How to get past a refusal.
const HELP: &str = "apply the webhooks Deployment first and wait until it has rolled out (kubectl rollout status), then apply the controller again; asogen upgrade-plan prints the steps for your apply path";

/// Short names (the objects' names add the release namespace) and files.
const DEPLOYMENT_GUARD: (&str, &str) = ("azureserviceoperator-order-guard", "order.yaml");
const SCALE_GUARD: (&str, &str) = ("azureserviceoperator-order-scale-guard", "order-scale.yaml");
const PODS_GUARD: (&str, &str) = ("azureserviceoperator-order-pods-guard", "order-pods.yaml");
const DOWNGRADE_GUARD: (&str, &str) = (
    "azureserviceoperator-order-downgrade-guard",
    "order-downgrade.yaml",
);

/// The downgrade half of the rule: the webhooks never fall behind the
/// controller, whose CRDs old webhook pods cannot convert.
const DOWNGRADE_SUMMARY: &str = "with topology: split (or bridge), the webhooks Deployment never moves to an older release than the controller Deployment runs (by the images' semantic version tags; other tags are not compared)";

/// Why a downgrade is refused and what to do instead.
const DOWNGRADE_HELP: &str = "a downgrade would leave webhook pods that cannot convert the CRDs the newer controller applied; ASO does not support going back once its CRDs moved on. If the two releases' CRDs are the same, downgrade with the guard off for that change (admissionPolicy.enable: false), controller first";

/// The manager container's images of a Deployment in CEL (a list, so a
/// Deployment without one compares equal only to another without one).
fn images(deployment: &str) -> String {
    format!(
        "{deployment}.spec.template.spec.containers.filter(c, c.name == 'manager').map(c, c.image)"
    )
}

/// A status count of the webhooks Deployment (left out when 0).
fn status(name: &str) -> String {
    format!("(has(params.status.{name}) ? params.status.{name} : 0)")
}

/// The Deployment policy's variables: what the update does to the
/// controller and what the webhooks Deployment (the parameter) runs.
fn variables() -> serde_json::Value {
    // Complete as `kubectl rollout status` and kstatus judge it, and no
    // pod of an older template left (status.replicas counts the pods of
    // every template that are not terminating; a terminating pod is no
    // ready endpoint).
    let want = "(has(params.spec.replicas) ? params.spec.replicas : 1)";
    let complete = format!(
        "{} >= params.metadata.generation && {} == {want} && {} == {want} && {} == {want}",
        status("observedGeneration"),
        status("updatedReplicas"),
        status("availableReplicas"),
        status("replicas"),
    );
    json!([
        {"name": "image", "expression": images("object")},
        starts(),
        {"name": "webhooksImage", "expression": images("params")},
        {"name": "webhooksComplete", "expression": complete},
    ])
}

/// Whether the request starts a controller pod that applies CRDs: a new
/// image, pods where there were none, or a Deployment created with pods
/// (`oldObject` is null on create: `kubectl replace --force` and `kubectl
/// apply --force` delete and create).
fn starts() -> serde_json::Value {
    let replicas = |o: &str| format!("(has({o}.spec.replicas) ? {o}.spec.replicas : 1)");
    json!({"name": "starts", "expression": format!(
        "{} > 0 && (oldObject == null || variables.image != {} || {} == 0)",
        replicas("object"), images("oldObject"), replicas("oldObject"),
    )})
}

/// One of the guard's policies: `operations` on `resource` named `name`,
/// with a parameter of `param_kind` if any, its variables and validations.
struct Policy {
    guard: (&'static str, &'static str),
    operations: &'static [&'static str],
    resource: &'static str,
    name: &'static str,
    param_kind: Option<serde_json::Value>,
    variables: Option<serde_json::Value>,
    validations: serde_json::Value,
}

impl Policy {
    fn resource(self, when: &Expr) -> Resource {
        let (short, file) = self.guard;
        let mut spec = vec![
            text("failurePolicy", "Fail"),
            match_constraints(json!(self.operations), self.resource, self.name),
        ];
        if let Some(kind) = self.param_kind {
            spec.push(field("paramKind", lit(kind)));
        }
        if let Some(variables) = self.variables {
            spec.push(field("variables", lit(variables)));
        }
        spec.push(field("validations", lit(self.validations)));
        let mut object = cluster_header("ValidatingAdmissionPolicy", short);
        object.push(map("spec", spec));
        resource(
            &format!("admissionpolicy-{file}"),
            Some(when.clone()),
            object,
        )
    }
}

/// A Deployment as a policy's parameter.
fn deployment_param() -> Option<serde_json::Value> {
    Some(json!({"apiVersion": "apps/v1", "kind": "Deployment"}))
}

/// A refusal's message: the rule, what is missing, the help.
fn message(missing: &str) -> String {
    format!("{RULE}: {SUMMARY} ({missing}); {HELP}")
}

/// On every update of the controller Deployment, with the webhooks
/// Deployment as its parameter.
fn deployment_policy(when: &Expr) -> Resource {
    Policy {
        guard: DEPLOYMENT_GUARD,
        // A create has no old pods to outrun here (the pods policy below
        // checks creates against the webhook pods that serve).
        operations: &["UPDATE"],
        resource: "deployments",
        name: DEPLOYMENT,
        param_kind: deployment_param(),
        variables: Some(variables()),
        validations: json!([
            {
                "expression": "!variables.starts || variables.webhooksImage == variables.image",
                "message": message("the webhooks Deployment runs another image"),
            },
            {
                "expression": "!variables.starts || variables.webhooksComplete",
                "message": message("the webhooks Deployment has not rolled out yet"),
            },
        ]),
    }
    .resource(when)
}

/// On every create and update of the controller Deployment, with each
/// webhook pod as its parameter (selected by the webhook pods' selector
/// labels in the controller's namespace): a controller pod starts only
/// when every webhook pod that serves or will serve runs its image. Pods
/// are what serve: this sees the old pods a `kubectl delete deployment
/// --cascade=orphan` leaves behind the Service, and old pods of a rollout
/// in progress, where the Deployment's status cannot. A terminating pod
/// is out of the Service's endpoints already; a finished one serves
/// nothing. No webhook pod at all (a fresh install) leaves nothing stale.
fn pods_policy(when: &Expr) -> Resource {
    Policy {
        guard: PODS_GUARD,
        operations: &["CREATE", "UPDATE"],
        resource: "deployments",
        name: DEPLOYMENT,
        param_kind: Some(json!({"apiVersion": "v1", "kind": "Pod"})),
        variables: Some(json!([
            {"name": "image", "expression": images("object")},
            starts(),
            {"name": "serves", "expression": "!has(params.metadata.deletionTimestamp) && !(has(params.status.phase) && params.status.phase in ['Succeeded', 'Failed'])"},
            {"name": "podImage", "expression": "params.spec.containers.filter(c, c.name == 'manager').map(c, c.image)"},
        ])),
        validations: json!([{
            "expression": "!variables.starts || !variables.serves || variables.podImage == variables.image",
            "message": message("a webhook pod runs another image"),
        }]),
    }
    .resource(when)
}

/// The tag of the first image in a CEL list of image references (`''` when
/// it has none: a bare name, or a digest alone).
fn tag_of(list: &str) -> String {
    let reference = format!("{list}[0].split('@')[0]");
    format!(
        "{list}.size() > 0 && {reference}.lastIndexOf(':') > {reference}.lastIndexOf('/') ? {reference}.substring({reference}.lastIndexOf(':') + 1) : ''"
    )
}

/// On every create and update of the webhooks Deployment, with the
/// controller Deployment as its parameter: the webhooks never move to an
/// image whose semantic version tag is below the controller's. (An
/// upgrade moves the webhooks first, up; the controller follows, which
/// the policies above check.)
fn downgrade_policy(when: &Expr) -> Resource {
    Policy {
        guard: DOWNGRADE_GUARD,
        operations: &["CREATE", "UPDATE"],
        resource: "deployments",
        name: WEBHOOKS_DEPLOYMENT,
        param_kind: deployment_param(),
        variables: Some(json!([
            {"name": "webhooksTag", "expression": tag_of(&images("object"))},
            {"name": "controllerTag", "expression": tag_of(&images("params"))},
            {"name": "behind", "expression": "isSemver(variables.webhooksTag, true) && isSemver(variables.controllerTag, true) && semver(variables.webhooksTag, true).isLessThan(semver(variables.controllerTag, true))"},
        ])),
        validations: json!([{
            "expression": "!variables.behind",
            "messageExpression": format!(
                "\"{RULE}: {DOWNGRADE_SUMMARY} (the webhooks would run \" + variables.webhooksTag + \", the controller runs \" + variables.controllerTag + \"); {DOWNGRADE_HELP}\""
            ),
        }]),
    }
    .resource(when)
}

/// On the controller's `scale` subresource: a Scale carries no image, so
/// the check above cannot be made there, and a `kubectl scale` from 0
/// could start a new controller while old webhook pods serve. Starting the
/// paused controller is therefore left to a change of the Deployment,
/// which the policy above checks; scaling between counts above 0 and to 0
/// passes.
fn scale_policy(when: &Expr) -> Resource {
    // A Scale leaves spec.replicas out when it is 0.
    let replicas = |o: &str| format!("(has({o}.spec.replicas) ? {o}.spec.replicas : 0)");
    Policy {
        guard: SCALE_GUARD,
        operations: &["UPDATE"],
        resource: "deployments/scale",
        name: DEPLOYMENT,
        param_kind: None,
        variables: None,
        validations: json!([{
            "expression": format!("!({} == 0 && {} > 0)", replicas("oldObject"), replicas("object")),
            "message": format!(
                "{RULE}: {SUMMARY} (a scale request cannot show the image); start the paused controller by its Deployment instead (helm upgrade with split.controller.paused: false, kubectl apply, or kubectl patch of spec.replicas), which the guard checks against the webhooks Deployment"
            ),
        }]),
    }
    .resource(when)
}

/// The ordering guard's policies, then their bindings: rendered wherever
/// the webhooks Deployment runs (topology split, and the bridge of a Helm
/// migration, where it also refuses the controller's half of a version
/// upgrade, which would mix versions behind the webhook Service) and the
/// guard is.
pub fn objects() -> Vec<Resource> {
    let when = enabled(Some(webhooks_deployed()));
    let (deployment, deployment_file) = DEPLOYMENT_GUARD;
    let (scale, scale_file) = SCALE_GUARD;
    let (pods, pods_file) = PODS_GUARD;
    let (downgrade, downgrade_file) = DOWNGRADE_GUARD;
    vec![
        deployment_policy(&when),
        scale_policy(&when),
        pods_policy(&when),
        downgrade_policy(&when),
        binding(
            &format!("admissionpolicybinding-{deployment_file}"),
            deployment,
            // Allow: without the webhooks Deployment no webhook pod of the
            // split exists, so none can be stale (I2 has nothing to
            // protect), while Deny would refuse every update of the
            // controller (the Deployment controller's and the garbage
            // collector's too) for as long as this binding outlives the
            // webhooks Deployment (a migration back to single that keeps
            // it). A binding naming the wrong Deployment, the one case
            // Allow would hide, is what the kustomize references prevent.
            Some(Param {
                by: ParamBy::Name(WEBHOOKS_DEPLOYMENT),
                when_missing: "Allow",
            }),
            when.clone(),
        ),
        binding(
            &format!("admissionpolicybinding-{pods_file}"),
            pods,
            // Allow: no webhook pod, none stale (a fresh install, or one
            // whose webhook pods are all gone).
            Some(Param {
                by: ParamBy::Labels(WEBHOOKS_SELECTOR_LABELS),
                when_missing: "Allow",
            }),
            when.clone(),
        ),
        binding(
            &format!("admissionpolicybinding-{downgrade_file}"),
            downgrade,
            // Allow: without the controller Deployment no CRD is ahead of
            // the webhooks.
            Some(Param {
                by: ParamBy::Name(DEPLOYMENT),
                when_missing: "Allow",
            }),
            when.clone(),
        ),
        binding(
            &format!("admissionpolicybinding-{scale_file}"),
            scale,
            None,
            when,
        ),
    ]
}
