//! The rules' change conditions ([`Change`]) in CEL, for the in-cluster
//! guard: a rule whose breach compares a Deployment with the one it
//! replaces, or with what runs beside it, becomes policies of their own,
//! one per kind of thing they read beside the object (the policy's
//! parameter), generated from the rule's entry like every other
//! enforcement point (`objects::admission::change_guard` names and binds
//! them).
//!
//! Each alternative of the breach becomes one validation; alternatives
//! that read the same parameter of the same request share a policy, whose
//! variables are those its conditions need, in the order they first need
//! them.

use serde_json::{Value, json};

use super::cel::{Subject, manager_containers};
use super::{Change, Condition, Rule, RuleKey, TOPOLOGIES};
use crate::catalog::CRD_VERSION_LABEL;
use crate::roles::{Field, Role};
use crate::values::Topology;

/// What a policy reads beside the request's object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// Nothing.
    None,
    /// This role's Deployment.
    Deployment(Role),
    /// Each pod of this role (the policy must pass for each).
    Pods(Role),
    /// Each of ASO's CRDs in the cluster (by their name label).
    Crds,
}

/// One policy's checks: the alternatives of a rule that read the same
/// peer on the same request to a role's Deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeCheck {
    /// The role whose Deployment the request changes.
    pub role: Role,
    /// The Deployment itself, or its `scale` subresource.
    pub subject: Subject,
    /// What the policy reads beside it.
    pub peer: Peer,
    /// The operations it checks.
    pub operations: &'static [&'static str],
    /// The topologies where it is rendered.
    pub topologies: Vec<Topology>,
    /// Its variables (`name`, `expression`).
    pub variables: Vec<Value>,
    /// Its validations, one per alternative.
    pub validations: Vec<Value>,
}

/// The other role.
fn other(role: Role) -> Role {
    match role {
        Role::Controller => Role::Webhooks,
        Role::Webhooks => Role::Controller,
    }
}

/// The images of the containers that run ASO's manager in a Deployment's
/// pod template, in CEL (a list: [`manager_containers`]).
fn images(deployment: &str) -> String {
    pod_images(&format!("{deployment}.spec.template.spec"))
}

/// The images of the containers that run ASO's manager in the pod spec
/// `spec`.
fn pod_images(spec: &str) -> String {
    format!(
        "{}.map(c, has(c.image) ? c.image : '')",
        manager_containers(spec)
    )
}

/// A status count of the peer Deployment (left out when 0).
fn status(name: &str) -> String {
    format!("(has(params.status.{name}) ? params.status.{name} : 0)")
}

/// The tags of a CEL list of image references (`''` for one without: a
/// bare name, or a digest alone).
fn tags_of(list: &str) -> String {
    let reference = "i.split('@')[0]";
    format!(
        "{list}.map(i, {reference}.lastIndexOf(':') > {reference}.lastIndexOf('/') ? {reference}.substring({reference}.lastIndexOf(':') + 1) : '')"
    )
}

fn variable(name: &str, expression: String) -> Value {
    json!({"name": name, "expression": expression})
}

/// `variables.image`: the request's manager images.
fn image() -> Value {
    variable("image", images("object"))
}

/// The version label of the CRD read as the parameter, in CEL (`''`
/// without one).
fn crd_version() -> String {
    let labels = "params.metadata.labels";
    format!(
        "has({labels}) && '{CRD_VERSION_LABEL}' in {labels} ? {labels}['{CRD_VERSION_LABEL}'] : ''"
    )
}

/// How the cluster reads one change condition on `role`'s Deployment.
struct Reading {
    subject: Subject,
    peer: Peer,
    /// The operations it needs checked (None: whatever the others need).
    operations: Option<&'static [&'static str]>,
    variables: Vec<Value>,
    /// CEL that holds when the condition does not.
    not: String,
}

fn reading(role: Role, change: Change) -> Reading {
    let peer = other(role);
    let on_deployment = |peer_kind, operations, variables, not: String| Reading {
        subject: Subject::Deployment,
        peer: peer_kind,
        operations,
        variables,
        not,
    };
    match change {
        Change::StartsPods => {
            // A new image, pods where there were none, or a Deployment
            // created with pods (`oldObject` is null on create: `kubectl
            // replace --force` and `kubectl apply --force` delete and
            // create).
            let replicas = |o: &str| format!("(has({o}.spec.replicas) ? {o}.spec.replicas : 1)");
            let starts = format!(
                "{} > 0 && (oldObject == null || variables.image != {} || {} == 0)",
                replicas("object"),
                images("oldObject"),
                replicas("oldObject"),
            );
            on_deployment(
                Peer::None,
                None,
                vec![image(), variable("starts", starts)],
                "!variables.starts".into(),
            )
        }
        Change::ScalesFromZero => {
            // A Scale leaves spec.replicas out when it is 0.
            let replicas = |o: &str| format!("(has({o}.spec.replicas) ? {o}.spec.replicas : 0)");
            Reading {
                subject: Subject::Scale,
                peer: Peer::None,
                operations: Some(&["UPDATE"]),
                variables: vec![],
                not: format!(
                    "!({} == 0 && {} > 0)",
                    replicas("oldObject"),
                    replicas("object")
                ),
            }
        }
        Change::PeerRunsAnotherImage => {
            let name = format!("{}Image", peer.name());
            on_deployment(
                Peer::Deployment(peer),
                // A create has no old pods to outrun here (the pods check
                // sees creates against the pods that serve).
                Some(&["UPDATE"]),
                vec![image(), variable(&name, images("params"))],
                format!("variables.{name} == variables.image"),
            )
        }
        Change::PeerNotRolledOut => {
            // Complete as `kubectl rollout status` and kstatus judge it,
            // no pod of an older template left (status.replicas counts the
            // pods of every template that are not terminating), and none
            // terminating either where the cluster counts them
            // (status.terminatingReplicas, Kubernetes 1.35+): a terminating
            // webhook pod still answers, through its preStop delay, on the
            // connections the API server keeps open to it, as ASO's own
            // manager showed (docs/rollout-harness.md).
            let want = Field::Replicas
                .cel("params")
                .expect("spec.replicas is not a container's");
            let complete = format!(
                "{} >= params.metadata.generation && {} == {want} && {} == {want} && {} == {want} && (!has(params.status.terminatingReplicas) || params.status.terminatingReplicas == 0)",
                status("observedGeneration"),
                status("updatedReplicas"),
                status("availableReplicas"),
                status("replicas"),
            );
            let name = format!("{}Complete", peer.name());
            on_deployment(
                Peer::Deployment(peer),
                Some(&["UPDATE"]),
                vec![variable(&name, complete)],
                format!("variables.{name}"),
            )
        }
        Change::PeerPodRunsAnotherImage => on_deployment(
            // Pods are what serve: this sees the old pods a `kubectl delete
            // deployment --cascade=orphan` leaves behind the Service, and
            // old pods of a rollout in progress, where the Deployment's
            // status cannot. A terminating pod is out of the Service's
            // endpoints but still answers on the connections the API
            // server keeps open to it until its container stops (ASO's
            // manager converting for the old storage version after the
            // new controller's CRD write, docs/rollout-harness.md); a
            // finished one serves nothing.
            Peer::Pods(peer),
            Some(&["CREATE", "UPDATE"]),
            vec![
                image(),
                variable(
                    "serves",
                    "!(has(params.status.phase) && params.status.phase in ['Succeeded', 'Failed'])"
                        .into(),
                ),
                variable("podImage", pod_images("params.spec")),
            ],
            "!variables.serves || variables.podImage == variables.image".into(),
        ),
        Change::FallsBehindPeer => {
            // Any manager of this Deployment below any of the peer's.
            let (mine, theirs) = (
                format!("{}Tags", role.name()),
                format!("{}Tags", peer.name()),
            );
            on_deployment(
                Peer::Deployment(peer),
                Some(&["CREATE", "UPDATE"]),
                vec![
                    variable(&mine, tags_of(&images("object"))),
                    variable(&theirs, tags_of(&images("params"))),
                    variable(
                        "behind",
                        format!(
                            "variables.{mine}.exists(m, isSemver(m, true) && variables.{theirs}.exists(t, isSemver(t, true) && semver(m, true).isLessThan(semver(t, true))))"
                        ),
                    ),
                ],
                "!variables.behind".into(),
            )
        }
        Change::FallsBehindCrds => {
            // Only a move: the Deployment's other writes (the garbage
            // collector's, a scale) pass while it runs what it ran.
            let mine = format!("{}Tags", role.name());
            on_deployment(
                Peer::Crds,
                Some(&["CREATE", "UPDATE"]),
                vec![
                    image(),
                    variable(
                        "moves",
                        format!(
                            "oldObject == null || variables.image != {}",
                            images("oldObject")
                        ),
                    ),
                    variable(&mine, tags_of("variables.image")),
                    variable("crdVersion", crd_version()),
                    variable(
                        "belowCrds",
                        format!(
                            "isSemver(variables.crdVersion, true) && variables.{mine}.exists(m, isSemver(m, true) && semver(m, true).isLessThan(semver(variables.crdVersion, true)))"
                        ),
                    ),
                ],
                "!variables.moves || !variables.belowCrds".into(),
            )
        }
    }
}

/// The refusal of an alternative decided by `change` (the last of its
/// conditions): the rule, what is missing, the help; a message, or the
/// CEL of one (`messageExpression`).
fn refusal(rule: &Rule, role: Role, change: Change) -> (&'static str, String) {
    let peer = other(role);
    let (id, summary, help) = (rule.id, rule.summary, rule.help);
    let missing = |missing: String| ("message", format!("{id}: {summary} ({missing}); {help}"));
    match change {
        Change::StartsPods => missing(format!("the {} starts pods", role.name())),
        Change::PeerRunsAnotherImage => {
            missing(format!("the {} Deployment runs another image", peer.name()))
        }
        Change::PeerNotRolledOut => missing(format!(
            "the {} Deployment has not rolled out yet, or pods of its older template are still terminating",
            peer.name()
        )),
        Change::PeerPodRunsAnotherImage => missing(format!("a {} runs another image", peer.pod())),
        Change::ScalesFromZero => (
            "message",
            format!(
                "{id}: {summary} (a scale request cannot show the image); start the paused {} by its Deployment instead (helm upgrade with split.controller.paused: false, kubectl apply, or kubectl patch of spec.replicas), which the guard checks against the {} Deployment",
                role.name(),
                peer.name()
            ),
        ),
        Change::FallsBehindCrds => (
            "messageExpression",
            format!(
                "\"{id}: {summary} (the {mine} would run \" + variables.{mine}Tags.join(', ') + \", the CRD \" + params.metadata.name + \" was applied by \" + variables.crdVersion + \"); {help}\"",
                mine = role.name(),
            ),
        ),
        // The other half of the rule: the peer never falls behind.
        Change::FallsBehindPeer => (
            "messageExpression",
            format!(
                "\"{id}: with topology: split (or bridge), the {mine} Deployment never moves to an older release than the {theirs} Deployment runs (by the images' semantic version tags; other tags are not compared) (the {mine} would run \" + variables.{mine}Tags.join(', ') + \", the {theirs} runs \" + variables.{theirs}Tags.join(', ') + \"); a downgrade would leave webhook pods that cannot convert the CRDs the newer controller applied; ASO does not support going back once its CRDs moved on. If the two releases' CRDs are the same, downgrade with the guard off for that change (admissionPolicy.enable: false), controller first\"",
                mine = role.name(),
                theirs = peer.name(),
            ),
        ),
    }
}

/// The rule's change checks, one per policy, in the order their
/// alternatives first appear. Empty for a rule with no change condition.
/// Panics on an alternative that mixes change conditions with conditions
/// other than on the topology (no policy can read both).
pub fn change_checks(rule: &Rule) -> Vec<ChangeCheck> {
    let mut checks: Vec<ChangeCheck> = Vec::new();
    if rule.in_cluster != super::InCluster::Guarded {
        return checks;
    }
    for alternative in rule.breach {
        let changes: Vec<(Role, Change)> = alternative
            .iter()
            .filter_map(|condition| match *condition {
                Condition::Change(role, change) => Some((role, change)),
                _ => None,
            })
            .collect();
        let Some(&(role, decider)) = changes.last() else {
            continue;
        };
        assert!(
            alternative.iter().all(|condition| matches!(
                condition,
                Condition::Change(..) | Condition::Value(RuleKey::Topology, _)
            )),
            "rule {}: an alternative with change conditions reads only the topology besides",
            rule.id
        );
        let topologies: Vec<Topology> = TOPOLOGIES
            .into_iter()
            .filter(|topology| {
                let written = Value::from(topology.as_str());
                alternative.iter().all(|condition| match *condition {
                    Condition::Value(_, test) => test.holds(&written),
                    _ => true,
                })
            })
            .collect();
        let readings: Vec<Reading> = changes
            .iter()
            .map(|&(on, change)| {
                assert_eq!(on, role, "rule {}: one role per alternative", rule.id);
                reading(role, change)
            })
            .collect();
        let subject = readings[readings.len() - 1].subject;
        let peer = readings
            .iter()
            .map(|reading| reading.peer)
            .find(|peer| *peer != Peer::None)
            .unwrap_or(Peer::None);
        let operations = readings
            .iter()
            .rev()
            .find_map(|reading| reading.operations)
            .unwrap_or(&["CREATE", "UPDATE"]);
        let expression = readings
            .iter()
            .map(|reading| reading.not.as_str())
            .collect::<Vec<_>>()
            .join(" || ");
        let (message_field, message) = refusal(rule, role, decider);
        let validation = json!({"expression": expression, message_field: message});
        let at = checks
            .iter()
            .position(|check| check.role == role && check.subject == subject && check.peer == peer);
        let check = match at {
            Some(at) => &mut checks[at],
            None => {
                checks.push(ChangeCheck {
                    role,
                    subject,
                    peer,
                    operations,
                    topologies: topologies.clone(),
                    variables: vec![],
                    validations: vec![],
                });
                checks.last_mut().expect("just pushed")
            }
        };
        assert_eq!(
            (check.operations, &check.topologies),
            (operations, &topologies),
            "rule {}: the alternatives of one policy check the same operations in the same topologies",
            rule.id
        );
        for variable in readings.into_iter().flat_map(|reading| reading.variables) {
            if !check
                .variables
                .iter()
                .any(|v| v["name"] == variable["name"])
            {
                check.variables.push(variable);
            }
        }
        check.validations.push(validation);
    }
    checks
}

/// Whether the cluster checks `rule` by change checks on `subject`.
pub fn checks_changes_on(rule: &Rule, subject: Subject) -> bool {
    change_checks(rule)
        .iter()
        .any(|check| check.subject == subject)
}

#[cfg(test)]
mod tests {
    use regex::Regex;

    use super::*;
    use crate::rules::{RULES, Test, change, when};

    /// Every variable a validation reads is one its policy declares, every
    /// declared one is read, and every refusal starts with its rule's id.
    #[test]
    fn each_policy_declares_what_its_validations_read() {
        let read = Regex::new(r"variables\.([A-Za-z]+)").expect("a pattern");
        let mut policies = 0;
        for rule in RULES {
            for check in change_checks(rule) {
                policies += 1;
                let declared: Vec<&str> = check
                    .variables
                    .iter()
                    .filter_map(|v| v["name"].as_str())
                    .collect();
                let mut used: Vec<&str> = Vec::new();
                let texts = check
                    .validations
                    .iter()
                    .flat_map(|v| ["expression", "messageExpression"].map(|k| v[k].as_str()))
                    .chain(check.variables.iter().map(|v| v["expression"].as_str()))
                    .flatten();
                for text in texts {
                    for name in read.captures_iter(text) {
                        let name = name.get(1).expect("a group").as_str();
                        assert!(declared.contains(&name), "{}: {name} undeclared", rule.id);
                        used.push(name);
                    }
                }
                for name in declared {
                    assert!(used.contains(&name), "{}: {name} unread", rule.id);
                }
                for validation in &check.validations {
                    let message = validation["message"]
                        .as_str()
                        .or(validation["messageExpression"].as_str())
                        .expect("a message");
                    assert!(
                        message.trim_start_matches('"').starts_with(rule.id),
                        "{message}"
                    );
                }
            }
        }
        assert_eq!(
            policies, 6,
            "the ordering guard's four policies and the two that read the CRDs"
        );
    }

    /// The ordering guard: the controller's updates against the webhooks
    /// Deployment and its pods, its scale requests alone, and the webhooks
    /// Deployment against the controller's, where the webhooks run.
    #[test]
    fn the_ordering_guard_reads_what_its_alternatives_say() {
        let rule = RULES
            .iter()
            .find(|rule| rule.id == "split-controller-after-webhooks")
            .expect("the rule");
        let shapes: Vec<(Role, Subject, Peer, usize)> = change_checks(rule)
            .iter()
            .map(|c| (c.role, c.subject, c.peer, c.validations.len()))
            .collect();
        assert_eq!(
            shapes,
            [
                (
                    Role::Controller,
                    Subject::Deployment,
                    Peer::Deployment(Role::Webhooks),
                    2
                ),
                (Role::Controller, Subject::Scale, Peer::None, 1),
                (
                    Role::Controller,
                    Subject::Deployment,
                    Peer::Pods(Role::Webhooks),
                    1
                ),
                (
                    Role::Webhooks,
                    Subject::Deployment,
                    Peer::Deployment(Role::Controller),
                    1
                ),
            ]
        );
        for check in change_checks(rule) {
            assert_eq!(check.topologies, [Topology::Split, Topology::Bridge]);
        }
        // The CRDs' guard: each Deployment against every ASO CRD.
        let crds = RULES
            .iter()
            .find(|rule| rule.id == "split-never-below-crds")
            .expect("the rule");
        let shapes: Vec<(Role, Subject, Peer)> = change_checks(crds)
            .iter()
            .map(|c| (c.role, c.subject, c.peer))
            .collect();
        assert_eq!(
            shapes,
            [
                (Role::Controller, Subject::Deployment, Peer::Crds),
                (Role::Webhooks, Subject::Deployment, Peer::Crds),
            ]
        );
        // Rules without change conditions have no such policies.
        for rule in RULES.iter().filter(|r| r.id != rule.id && r.id != crds.id) {
            assert!(change_checks(rule).is_empty(), "{}", rule.id);
        }
    }

    /// No policy reads a values key: a change alternative that also tests
    /// one is refused when the checks are built.
    #[test]
    #[should_panic(expected = "reads only the topology besides")]
    fn a_change_alternative_reads_no_values_key() {
        const MIXED: &[Condition] = &[
            when(RuleKey::ReplicaCount, Test::AtLeast(2)),
            change(Role::Controller, Change::StartsPods),
        ];
        let rule = Rule {
            breach: &[MIXED],
            ..RULES[0]
        };
        change_checks(&rule);
    }
}
