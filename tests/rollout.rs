//! Upgrades watched on a live control plane (issue 23): the tests' API
//! server, the real kube-controller-manager v1.37.2 and a stand-in node
//! agent that plays the nodes and ASO 2.20.0's start-up
//! (docs/rollout-harness.md). Each test installs a topology asogen renders
//! at the previous release's image tag, upgrades it to the catalog's
//! through an apply path, and asserts the invariants of
//! docs/split-topology.md section 2 that must hold or must break: counts
//! and booleans, never times. `bench/rollout` prints the figures.

#[path = "rollout/cluster.rs"]
mod cluster;
mod common;
#[path = "rollout/helm_cli.rs"]
mod helm_cli;
#[path = "rollout/one_shot.rs"]
mod one_shot;
#[path = "rollout/paths.rs"]
mod paths;
#[path = "rollout/scenario.rs"]
mod scenario;
#[path = "rollout/timeline.rs"]
mod timeline;

use paths::{KUBECTL, Outcome, PATHS, Sequence};
use scenario::{
    Run, SINGLE_ROLLING, SINGLE_ROLLING_WITHOUT_ELECTION, SPLIT_2, SPLIT_3, SPLIT_SHARED_SELECTOR,
    SPLIT_WEBHOOKS_APPLY_CRDS, STEP_LIMIT, Topology, UPSTREAM, change, migrate,
    migrate_in_one_pass, on_every_path, upgrade, upgrade_reversed,
};

/// The split keeps I1, I2 and I3 on every path: the webhooks Deployment
/// rolls out (never without a ready endpoint) before a controller pod of
/// the new version applies the CRDs, and the controller's Recreate never
/// runs two versions.
fn split_keeps_the_invariants(topology: &Topology) {
    for (path, run) in on_every_path(topology) {
        let o = &run.observation;
        let why = format!("via {}: {}", path.name, run.describe());
        assert!(
            matches!(run.outcome, Outcome::Done),
            "every step completes {why}"
        );
        assert!(o.completed, "the upgrade completes {why}");
        assert!(o.crd_epoch, "the new controller wrote its CRDs {why}");
        assert_eq!(o.zero_endpoints_ms, 0, "I1 holds {why}");
        assert_eq!(o.stale_pods, 0, "I2 holds {why}");
        assert_eq!(o.controller_versions, 1, "I3 holds {why}");
        assert_eq!(o.leader_versions, 1, "one leader version at a time {why}");
    }
}

#[test]
fn split_with_2_webhook_replicas_keeps_the_invariants_on_every_path() {
    split_keeps_the_invariants(&SPLIT_2);
}

#[test]
fn split_with_3_webhook_replicas_keeps_the_invariants_on_every_path() {
    split_keeps_the_invariants(&SPLIT_3);
}

/// Negative: webhook pods that apply CRDs (`--crd-management` left out)
/// write the new version's CRDs from the first surge pod, while old
/// webhook pods are still endpoints: I2 is broken, and the harness sees it.
#[test]
fn split_whose_webhook_pods_apply_crds_breaks_version_safety() {
    let run = upgrade(&SPLIT_WEBHOOKS_APPLY_CRDS, &KUBECTL, STEP_LIMIT);
    let o = &run.observation;
    let why = run.describe();
    assert!(o.crd_epoch, "the new version wrote its CRDs: {why}");
    assert!(
        o.stale_pods > 0,
        "I2 is broken: old webhook pods after the CRD epoch: {why}"
    );
    assert!(o.stale_ms > 0, "{why}");
}

/// Negative: the split's plan run backwards (the controller first): the
/// new controller writes its CRDs while every webhook endpoint is of the
/// old version, so I2 is broken; the order is what keeps it.
#[test]
fn split_with_the_controller_first_breaks_version_safety() {
    let run = upgrade_reversed(&SPLIT_2, &KUBECTL, STEP_LIMIT);
    let o = &run.observation;
    let why = run.describe();
    assert!(o.crd_epoch, "the new controller wrote its CRDs: {why}");
    assert!(
        o.stale_pods >= 2,
        "I2 is broken by every old webhook pod: {why}"
    );
    assert!(o.stale_ms > 0, "{why}");
}

/// Negative: a webhook Service that selects the controller pods too. The
/// harness sees the overlap (controller pods are webhook endpoints); with
/// the plan's order it breaks none of I1 to I3, since the old controller
/// pods are gone (Recreate) before a new one writes the CRDs: the order,
/// not the selector, is what keeps I2 (docs/rollout-harness.md).
#[test]
fn split_with_a_shared_selector_routes_webhooks_to_the_controller() {
    let run = upgrade(&SPLIT_SHARED_SELECTOR, &KUBECTL, STEP_LIMIT);
    let o = &run.observation;
    let why = run.describe();
    let routed = run.timeline.routed_since(0);
    assert!(
        routed.contains("azureserviceoperator-controller-manager")
            && routed.contains("azureserviceoperator-webhooks"),
        "the Service routes to both roles: {routed:?} {why}"
    );
    assert!(o.completed && o.crd_epoch, "{why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1 holds: {why}");
    assert_eq!(o.stale_pods, 0, "I2 holds: {why}");
    assert_eq!(o.controller_versions, 1, "I3 holds: {why}");
}

/// Upstream's Recreate takes every webhook pod down at once (the downtime
/// the maintainers described), and never runs two controller versions:
/// on every path, the paths at once.
#[test]
fn upstream_recreate_on_every_path() {
    for (path, run) in on_every_path(&UPSTREAM) {
        let o = &run.observation;
        let why = format!("via {}: {}", path.name, run.describe());
        assert!(o.completed, "the upgrade completes {why}");
        assert!(o.crd_epoch, "the new version wrote its CRDs {why}");
        assert!(
            o.zero_endpoints_ms > 0,
            "I1 is broken: no webhook endpoint for a while {why}"
        );
        assert_eq!(o.stale_pods, 0, "I2 holds {why}");
        assert_eq!(o.controller_versions, 1, "I3 holds {why}");
        assert_eq!(o.leader_versions, 1, "one leader version at a time {why}");
    }
}

/// docs/aso-facts.md F12: with leader election the surge pod waits for
/// the Lease the old pod holds, never becomes Ready, and maxUnavailable 0
/// keeps the old pod: the rollout never completes. Bounded by STEP_LIMIT.
#[test]
fn single_replica_rolling_with_leader_election_never_completes() {
    let run = upgrade(&SINGLE_ROLLING, &KUBECTL, STEP_LIMIT);
    let o = &run.observation;
    let why = run.describe();
    assert!(
        matches!(run.outcome, Outcome::GaveUp(_)),
        "kubectl rollout status gives up: {why}"
    );
    assert!(!o.completed, "the rollout is stuck: {why}");
    assert!(
        !run.timeline.ever_ready(&o.target),
        "the new pod never becomes Ready: {why}"
    );
    assert!(!o.crd_epoch, "the new pod never gets the Lease: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "the old pod keeps serving: {why}");
    // both pods exist, but only the old one can lead
    assert_eq!(o.controller_versions, 2, "I3 (pods) is broken: {why}");
    assert_eq!(o.leader_versions, 1, "the Lease keeps one leader: {why}");
}

/// The control for the test above: the same topology and path, a change
/// of the pod template that keeps the version (a pod annotation), so no
/// CRD is applied and no Lease is taken in the CRD step: it completes.
#[test]
fn single_replica_rolling_without_a_version_change_completes() {
    let extra = ["--set-string", "podAnnotations.harness/change=1"];
    let run = change(
        &SINGLE_ROLLING,
        &KUBECTL,
        None,
        &extra,
        STEP_LIMIT,
        Sequence::AsPlanned,
    );
    let why = run.describe();
    assert!(
        matches!(run.outcome, Outcome::Done),
        "kubectl rollout status sees it complete: {why}"
    );
    assert_eq!(
        run.timeline.became_ready_since(run.start),
        1,
        "the new pod became Ready: {why}"
    );
    assert_eq!(run.observation.zero_endpoints_ms, 0, "I1 holds: {why}");
}

/// Without leader election nothing waits: the surge pod writes its CRDs
/// while the old pod is still the webhook endpoint (I2 broken) and both
/// versions run their controllers at once (I3 broken).
#[test]
fn single_replica_rolling_without_leader_election_breaks_version_safety() {
    let run = upgrade(&SINGLE_ROLLING_WITHOUT_ELECTION, &KUBECTL, STEP_LIMIT);
    let o = &run.observation;
    let why = run.describe();
    assert!(o.completed, "the upgrade completes: {why}");
    assert!(o.crd_epoch, "the new version wrote its CRDs: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1 holds: {why}");
    assert_eq!(o.stale_pods, 1, "I2 is broken by the old pod: {why}");
    assert!(o.stale_ms > 0, "{why}");
    assert_eq!(o.controller_versions, 2, "I3 is broken: {why}");
}

/// The migrations of docs/split-topology.md section 3, at the same
/// version, through the plan `upgrade-plan --from` prints: single to split
/// and back keep the webhook Service routed to ready pods all along (I1)
/// and never run two controller versions (I3), on kubectl, on Argo CD's
/// waves, on Helm (two `helm upgrade --wait` through topology bridge,
/// each applying the whole release and deleting what left it) and on Flux
/// (the same bridge in one Kustomization, and the hand-over between its
/// layouts, which rolls nothing) at once.
#[test]
fn migrations_to_split_and_back_keep_webhooks_up() {
    let runs: Vec<(String, Run)> = std::thread::scope(|s| {
        let cases = [
            (&UPSTREAM, &SPLIT_2, &KUBECTL),
            (&SPLIT_2, &UPSTREAM, &KUBECTL),
            (&UPSTREAM, &SPLIT_2, &PATHS[3]),
            (&SPLIT_2, &UPSTREAM, &PATHS[3]),
            (&UPSTREAM, &SPLIT_2, &PATHS[1]),
            (&SPLIT_2, &UPSTREAM, &PATHS[1]),
            (&UPSTREAM, &SPLIT_2, &PATHS[2]),
            (&SPLIT_2, &UPSTREAM, &PATHS[2]),
        ];
        let handles: Vec<_> = cases
            .into_iter()
            .map(|(from, to, path)| {
                let what = format!("{} to {} via {}", from.name, to.name, path.name);
                (what, s.spawn(move || migrate(from, to, path, true)))
            })
            .collect();
        handles
            .into_iter()
            .map(|(what, h)| {
                let run = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                (what, run)
            })
            .collect()
    });
    for (what, run) in runs {
        let o = &run.observation;
        let why = format!("{what}: {}", run.describe());
        assert!(matches!(run.outcome, Outcome::Done), "{why}");
        assert!(o.completed, "the migration completes: {why}");
        assert_eq!(o.zero_endpoints_ms, 0, "I1 holds: {why}");
        assert_eq!(o.stale_pods, 0, "I2 holds: {why}");
        assert_eq!(o.controller_versions, 1, "I3 holds: {why}");
        println!("{what}: {:?}", run.observation);
    }
}

/// Negative, the reason Helm migrates through the bridge: one `helm
/// upgrade` from single straight to split (the whole release in one pass)
/// moves the webhook Service to webhook pods that are not ready yet while
/// Recreate replaces the controller's: I1 is broken.
#[test]
fn one_helm_upgrade_from_single_to_split_breaks_webhook_availability() {
    let helm = &PATHS[1];
    assert_eq!(helm.via, "helm");
    let run = migrate_in_one_pass(&UPSTREAM, &SPLIT_2, helm);
    let o = &run.observation;
    let why = run.describe();
    assert!(matches!(run.outcome, Outcome::Done), "{why}");
    assert!(
        o.zero_endpoints_ms > 0,
        "I1 is broken: no webhook endpoint for a while: {why}"
    );
    println!("one helm upgrade, single to split: {o:?}");
}

/// Negative: moving a single install to split with the split's upgrade
/// plan instead of the migration plan points the webhook Service at the
/// new webhook pods before they are ready: I1 is broken.
#[test]
fn migration_with_the_upgrade_plan_breaks_webhook_availability() {
    let run = migrate(&UPSTREAM, &SPLIT_2, &KUBECTL, false);
    let o = &run.observation;
    let why = run.describe();
    assert!(
        o.zero_endpoints_ms > 0,
        "I1 is broken: no webhook endpoint for a while: {why}"
    );
}

/// A first install of split in one `kubectl apply` of `asogen template
/// --create-namespace`, as docs/topologies.md says it may be done: on a
/// namespace with nothing of ASO in it, with every guard of the namespace
/// bound and enforced beforehand, nothing is refused (no older webhook
/// pod, no CRD of a newer release), and both Deployments roll out.
#[test]
fn split_first_install_in_one_apply_is_refused_nothing() {
    let first = one_shot::first_install(&SPLIT_2);
    assert!(first.guards >= 16, "every guard bound: {}", first.guards);
    assert_eq!(first.refused, None, "the one apply was refused in part");
    assert!(first.rolled_out, "both Deployments roll out");
}

/// The new user's kubectl path, run as printed: a first install of split
/// at the previous release through `upgrade-plan --via kubectl --profile
/// split` (its refresh step included), then the version upgrade through
/// the same command once the values lose the tag; every printed command
/// succeeds in a shell, the guards bound all along, and the upgrade keeps
/// I1 to I3.
#[test]
fn the_kubectl_plan_runs_as_printed_from_a_first_install_to_an_upgrade() {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_asogen"))
        .parent()
        .unwrap();
    let printed = one_shot::kubectl_path_as_printed(bin);
    let why = printed.run.describe();
    assert!(printed.failed.is_empty(), "{:#?}", printed.failed);
    assert!(printed.ran >= 12, "{} commands", printed.ran);
    let [installed, upgraded] = &printed.tags;
    assert_eq!(
        (installed.0.as_str(), installed.1.as_str()),
        (scenario::PREVIOUS_TAG, scenario::PREVIOUS_TAG)
    );
    assert_eq!(upgraded.0, upgraded.1);
    assert_ne!(upgraded.1, scenario::PREVIOUS_TAG);
    let o = &printed.run.observation;
    assert!(o.completed, "{why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1 holds: {why}");
    assert_eq!(o.stale_pods, 0, "I2 holds: {why}");
    assert_eq!(o.controller_versions, 1, "I3 holds: {why}");
}

/// The careless one-shot apply of split on kubectl: the whole new-version
/// manifest in one `kubectl apply`. The ordering guard refuses the
/// controller's update and lets the rest through; the same apply after the
/// webhooks rolled out finishes the upgrade, with I1 to I3 held. Without
/// the guard, run at the same time, the same apply breaks I2.
#[test]
fn split_one_shot_apply_is_refused_until_the_webhooks_roll_out() {
    let (guarded, unguarded) = std::thread::scope(|s| {
        let guarded = s.spawn(|| one_shot::one_shot(&SPLIT_2, true));
        let unguarded = s.spawn(|| one_shot::one_shot(&SPLIT_2, false));
        let join = |h: std::thread::ScopedJoinHandle<'_, one_shot::OneShot>| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        };
        (join(guarded), join(unguarded))
    });

    let why = guarded.run.describe();
    assert!(
        guarded.first.contains(one_shot::RULE)
            && guarded
                .first
                .contains("azureserviceoperator-controller-manager"),
        "the first apply is refused for the controller: {:?} {why}",
        guarded.first
    );
    assert!(
        guarded.controller_kept,
        "the controller kept its version: {why}"
    );
    assert!(guarded.reapplied >= 1, "{why}");
    let o = &guarded.run.observation;
    assert!(matches!(guarded.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed && o.crd_epoch, "the upgrade completes: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1 holds: {why}");
    assert_eq!(o.stale_pods, 0, "I2 holds: {why}");
    assert_eq!(o.controller_versions, 1, "I3 holds: {why}");

    let why = unguarded.run.describe();
    assert!(unguarded.first.is_empty(), "nothing refused: {why}");
    let o = &unguarded.run.observation;
    assert!(o.crd_epoch, "the new controller wrote its CRDs: {why}");
    assert!(o.stale_pods > 0, "I2 is broken: {why}");
}

/// The careless one-shot upgrade of split with the real Helm v4 CLI:
/// `helm install` of the generated chart at the previous tag, then one
/// `helm upgrade --wait` to the catalog's, no plan followed. Helm applies
/// what the guard lets through, reports the controller's refusal by rule
/// id, marks the release failed and rolls nothing back (it applied by
/// server-side apply, Helm v4's default); the controller
/// keeps its version; once the webhooks rolled out the same `helm
/// upgrade` passes, with I1 to I3 held.
#[test]
fn split_one_shot_helm_upgrade_is_refused_until_the_webhooks_roll_out() {
    let shot = helm_cli::one_helm_upgrade(&SPLIT_2);
    let why = shot.run.describe();
    let o = &shot.run.observation;
    let (before, target) = (
        format!(":{}", scenario::PREVIOUS_TAG),
        format!(":{}", o.target),
    );
    assert!(!shot.first_ok, "the first helm upgrade fails: {why}");
    assert!(
        shot.first.contains(one_shot::RULE) && shot.first.contains(one_shot::CONTROLLER),
        "Helm reports the guard's refusal of the controller: {:?} {why}",
        shot.first
    );
    let (status, method) = &shot.status_after_first;
    assert_eq!(
        status, "failed",
        "a failed release, nothing rolled back: {why}"
    );
    assert_eq!(method, "ssa", "Helm v4 applied server-side: {why}");
    let (webhooks, controller) = &shot.images_after_first;
    assert!(
        webhooks.ends_with(&target),
        "Helm updated the webhooks past the refusal: {webhooks} {why}"
    );
    assert!(
        controller.ends_with(&before),
        "the controller kept its version: {controller} {why}"
    );
    assert!(
        !shot.controller_pods_before_retry.is_empty()
            && shot
                .controller_pods_before_retry
                .iter()
                .all(|v| format!(":{v}") == before),
        "only controller pods of the previous version ran before the retry: {:?} {why}",
        shot.controller_pods_before_retry
    );
    assert!(shot.reupgraded >= 1, "{why}");
    assert!(
        matches!(shot.run.outcome, Outcome::Done),
        "the same helm upgrade passes once the webhooks rolled out: {why}"
    );
    assert!(
        shot.controller_image.ends_with(&target),
        "the controller runs the new version: {} {why}",
        shot.controller_image
    );
    assert!(o.completed && o.crd_epoch, "the upgrade completes: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1 holds: {why}");
    assert_eq!(o.stale_pods, 0, "I2 holds: {why}");
    assert_eq!(o.controller_versions, 1, "I3 holds: {why}");
    println!(
        "one helm upgrade of split: first refused: {}\n{} tries to pass after the webhooks rolled out; {o:?}",
        shot.first.trim(),
        shot.reupgraded
    );
}
