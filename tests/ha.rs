//! I4 of docs/split-topology.md section 2 observed: HA in steady state.
//! Each case installs a topology asogen renders on three nodes of its own,
//! lets the real kube-scheduler v1.37.2 place the pods (following the
//! spread, affinity and node selectors the install carries), and the real
//! kube-controller-manager run the Deployments, EndpointSlices, the
//! disruption budgets' status and the nodes' taints; the node agent of the
//! rollout harness plays the nodes without binding. Then it drains nodes
//! with the real `kubectl drain` (the API server enforcing the budgets) or
//! loses one, and the webhook endpoints and controller pods are counted
//! from the agent's samples until the install settled again. Counts and
//! booleans, never times; `bench/rollout ha` prints the table
//! (docs/rollout-harness.md).

#[path = "ha/case.rs"]
mod case;
#[allow(dead_code)]
#[path = "rollout/cluster.rs"]
mod cluster;
mod common;
#[path = "ha/disruption.rs"]
mod disruption;
#[allow(dead_code)]
#[path = "rollout/paths.rs"]
mod paths;
#[allow(dead_code)]
#[path = "rollout/scenario.rs"]
mod scenario;
#[allow(dead_code)]
#[path = "rollout/timeline.rs"]
mod timeline;

use case::{
    Case, Disruption, HaRun, SPLIT_ONE_WEBHOOK, SPLIT_SPREAD_COUNTS_CORDONED, SPLIT_SPREAD_OFF,
    drain_and_loss, run_all,
};
use scenario::{SPLIT_2, UPSTREAM};

/// The split's spread, as the scheduler applies it: each role on as many
/// nodes as it has pods.
fn assert_spread(run: &HaRun) {
    let p = &run.placement;
    let why = run.describe();
    assert_eq!(p.webhook_pods, 2, "two webhook endpoints: {why}");
    assert_eq!(p.webhooks.len(), 2, "the webhook pods on two nodes: {why}");
    assert_eq!(p.controller_pods, 2, "two controller pods: {why}");
    assert_eq!(
        p.controller.len(),
        2,
        "the controller pods on two nodes: {why}"
    );
}

/// The split (2 webhook and 2 controller replicas) keeps I4: the
/// scheduler puts each role's pods on distinct nodes; draining both nodes
/// of the webhook pods at once, the webhooks' budget refuses an eviction
/// until a replacement is ready (then lets it through: every drain
/// finishes), so a webhook endpoint and a controller pod are there all
/// along; losing the busiest node leaves an endpoint and a controller pod
/// that never stopped.
#[test]
fn split_keeps_webhooks_and_controller_through_a_drain_and_a_node_loss() {
    let (drain, loss) = drain_and_loss(&SPLIT_2);
    assert_spread(&drain);
    assert_spread(&loss);

    let why = drain.describe();
    let drained = drain.drained.as_ref().unwrap();
    assert_eq!(drain.targets.len(), 2, "both webhook nodes drained: {why}");
    assert!(drained.finished, "every drain finished: {why}");
    assert!(
        drained.refused >= 1,
        "the budget refused an eviction: {why}"
    );
    let a = &drain.availability;
    assert!(a.recovered, "{why}");
    assert_eq!(a.zero_endpoints_ms, 0, "I4 holds for the webhooks: {why}");
    assert!(a.fewest_endpoints >= 1, "{why}");
    assert!(a.fewest_controllers >= 1, "a controller pod ran: {why}");

    let why = loss.describe();
    let a = &loss.availability;
    assert!(!loss.lost.is_empty(), "the node had pods: {why}");
    assert!(a.recovered, "{why}");
    assert_eq!(a.zero_endpoints_ms, 0, "I4 holds for the webhooks: {why}");
    assert!(a.fewest_endpoints >= 1, "{why}");
    assert!(
        a.untouched_controllers >= 1,
        "a controller pod survived the node: {why}"
    );
}

/// Upstream 2.20.0's defaults (2 replicas, a budget of 50%, no spread of
/// its own): the budget alone keeps an endpoint through a drain of every
/// node with a pod; a node loss keeps one exactly when the scheduler's
/// default (soft) spreading put the two pods on two nodes.
#[test]
fn upstream_keeps_webhooks_through_a_drain_and_a_node_loss_only_when_spread() {
    let (drain, loss) = drain_and_loss(&UPSTREAM);

    let why = drain.describe();
    let drained = drain.drained.as_ref().unwrap();
    assert!(drained.finished, "every drain finished: {why}");
    assert!(
        drained.refused >= 1,
        "the budget refused an eviction: {why}"
    );
    let a = &drain.availability;
    assert!(a.recovered, "{why}");
    assert_eq!(a.zero_endpoints_ms, 0, "{why}");
    assert!(a.fewest_controllers >= 1, "{why}");

    let why = loss.describe();
    let a = &loss.availability;
    assert!(a.recovered, "{why}");
    let spread = loss.placement.webhooks.len() == 2;
    assert_eq!(
        a.zero_endpoints_ms == 0,
        spread,
        "endpoints never zero exactly when the pods were on two nodes: {why}"
    );
    assert_eq!(a.untouched_controllers >= 1, spread, "{why}");
}

/// Negatives: the invariant fails, and the harness sees it. One webhook
/// replica loses every endpoint with its node; a spread relaxed so that
/// the scheduler puts both webhook pods on one node (drawn there by an
/// affinity) loses both with it. A spread that counts cordoned nodes
/// leaves a webhook replacement unschedulable after a drain of two nodes:
/// the drain finishes, but the install stays at one webhook pod, one
/// node loss from none (why asogen's spread honours taints).
#[test]
fn one_replica_a_shared_node_or_cordoned_nodes_counted_break_i4() {
    let runs = run_all(&[
        Case {
            topology: &SPLIT_SPREAD_COUNTS_CORDONED,
            disruption: Disruption::Drain,
        },
        Case {
            topology: &SPLIT_ONE_WEBHOOK,
            disruption: Disruption::Loss,
        },
        Case {
            topology: &SPLIT_SPREAD_OFF,
            disruption: Disruption::Loss,
        },
    ]);
    let [counted, one, shared] = runs.as_slice() else {
        unreachable!()
    };

    let why = counted.describe();
    let drained = counted.drained.as_ref().unwrap();
    assert_eq!(
        counted.targets.len(),
        2,
        "both webhook nodes drained: {why}"
    );
    assert!(drained.finished && drained.refused >= 1, "{why}");
    assert!(
        !counted.availability.recovered,
        "the install never settles again: {why}"
    );
    let pending = counted
        .timeline
        .pods_now()
        .iter()
        .filter(|p| p.node.is_empty())
        .count();
    assert_eq!(pending, 1, "one webhook replacement finds no node: {why}");

    let why = one.describe();
    assert_eq!(one.placement.webhook_pods, 1, "{why}");
    assert!(one.availability.recovered, "{why}");
    assert!(
        one.availability.zero_endpoints_ms > 0,
        "I4 broken: no webhook endpoint for a while: {why}"
    );
    assert_eq!(one.availability.fewest_endpoints, 0, "{why}");

    let why = shared.describe();
    assert_eq!(shared.placement.webhook_pods, 2, "{why}");
    assert_eq!(
        shared.placement.webhooks.len(),
        1,
        "the scheduler put both webhook pods on one node: {why}"
    );
    assert!(shared.availability.recovered, "{why}");
    assert!(
        shared.availability.zero_endpoints_ms > 0,
        "I4 broken: no webhook endpoint for a while: {why}"
    );
}
