//! Upgrades with ASO's own manager (issues 32 and 41): the rollout
//! harness's real mode (tests/rollout/real.rs, docs/rollout-harness.md),
//! where every pod runs ASO's manager built from its Go module: ASO 2.20.0
//! itself, and a next release derived from that module
//! (tests/aso-manager/next-release.py) in which ResourceGroup gains the API
//! version v1api20240301, whose storage variant becomes the hub and the
//! storage version. The CRDs are written by the managers, cert-manager's
//! own injection code puts their CA back, and users make requests through
//! every upgrade (several clients, faster around each pod's deletion and
//! CRD write) while a probe opens new connections to the webhook Service;
//! each failure is counted by its cause. Each test asserts what ASO does
//! with the shape asogen renders, or with a shape the rules forbid, so that
//! what asogen says about them (README, the rules' reasons, `validate`,
//! `upgrade-plan`) can be held to it. `bench/rollout real` prints the
//! figures.
//!
//! Each scenario has a control plane of its own (the ASO CRDs and webhook
//! configurations are cluster-wide), so they run side by side; the large
//! groups take a lock, so that two of them never share the machine.

// the modelled mode's parts of the shared modules go unused here
#[allow(dead_code)]
#[path = "rollout/cluster.rs"]
mod cluster;
mod common;
#[allow(dead_code)]
#[path = "rollout/one_shot.rs"]
mod one_shot;
#[allow(dead_code)]
#[path = "rollout/paths.rs"]
mod paths;
#[path = "rollout/real.rs"]
mod real;
#[allow(dead_code)]
#[path = "rollout/scenario.rs"]
mod scenario;
#[allow(dead_code)]
#[path = "rollout/timeline.rs"]
mod timeline;

use std::sync::Mutex;

use common::{text, tool};
use paths::{ApplyPath, KUBECTL, Outcome, PATHS};
use real::{
    Guards, REAL_STEP_LIMIT, RealRun, catalog_tag, crd_versions, manager_logs, next_tag,
    real_change, real_downgrade, real_install, real_one_shot, real_upgrade,
    real_upgrade_controller_first, real_upgrade_with_crds_by_the_path,
};
use scenario::{
    FORBIDDEN_ROLLING, FORBIDDEN_ROLLING_WITHOUT_ELECTION, SINGLE_ROLLING, SPLIT_2, SPLIT_3,
    SPLIT_CONTROLLER_ROLLS, SPLIT_CRDS_BY_THE_PATH, SPLIT_SHARED_SELECTOR, SPLIT_WEBHOOKS_ELECT,
    SPLIT_WEBHOOKS_WITHOUT_PRESTOP, SPLIT_WEBHOOKS_WITHOUT_SURGE, Topology, UPSTREAM,
};

/// One group of planes at a time: each group fills the machine.
static ONE_GROUP: Mutex<()> = Mutex::new(());

/// What the error of a conversion refused by a webhook pod of the older
/// release says: its scheme has no type for the next release's storage
/// version (controller-runtime's conversion webhook).
const UNKNOWN_STORAGE_VERSION: &str = "no kind \"ResourceGroup\" is registered for version \"resources.azure.com/v1api20240301storage\"";

fn report(what: &str, real: &RealRun) {
    let o = &real.run.observation;
    eprintln!("{what}: {o:?}");
    let errors = real.run.timeline.request_errors(real.run.start, real.end);
    for error in errors.iter().take(3) {
        eprintln!("  failed: {error}");
    }
    if errors.len() > 3 {
        eprintln!("  ... {} failed requests in all", errors.len());
    }
}

fn upgrade(topology: &Topology) -> RealRun {
    upgrade_via(topology, &KUBECTL)
}

fn upgrade_via(topology: &Topology, path: &ApplyPath) -> RealRun {
    let real = real_upgrade(topology, path, REAL_STEP_LIMIT);
    report(&format!("{} via {}", topology.name, path.via), &real);
    real
}

fn one_shot(guards: Guards) -> RealRun {
    let real = real_one_shot(&SPLIT_2, guards);
    report(&format!("split, one-shot apply, guards {guards:?}"), &real);
    real
}

/// What one run must show.
type Check = fn(RealRun);

/// Runs `runs` at once, each on a plane of its own, then checks each.
fn at_once(runs: Vec<(Box<dyn Fn() -> RealRun + Send + Sync>, Check)>) {
    let _group = ONE_GROUP.lock().unwrap_or_else(|e| e.into_inner());
    let done: Vec<RealRun> = std::thread::scope(|s| {
        let handles: Vec<_> = runs.iter().map(|(run, _)| s.spawn(run)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for ((_, check), run) in runs.iter().zip(done) {
        check(run);
    }
}

/// The version upgrades from ASO 2.20.0 to the next release, run at once
/// (they mostly wait for probe periods and startup budgets), then each
/// checked by its function below.
#[test]
fn version_upgrades_with_the_real_manager() {
    at_once(vec![
        (
            Box::new(|| upgrade(&SINGLE_ROLLING)),
            a_version_upgrade_of_the_single_replica_rolling_profile_stalls,
        ),
        (
            Box::new(|| upgrade(&UPSTREAM)),
            upstream_defaults_upgrade_with_webhook_downtime,
        ),
        (
            Box::new(|| upgrade(&FORBIDDEN_ROLLING)),
            two_replicas_rolled_break_the_upgrade,
        ),
        (
            Box::new(|| upgrade(&FORBIDDEN_ROLLING_WITHOUT_ELECTION)),
            two_replicas_rolled_fail_conversions_in_old_pods,
        ),
        (
            Box::new(|| upgrade(&SPLIT_2)),
            the_split_keeps_webhooks_answering_through_the_upgrade,
        ),
        (
            Box::new(|| upgrade(&SPLIT_CONTROLLER_ROLLS)),
            a_split_controller_rolled_instead_of_recreated_stalls_with_two_versions,
        ),
    ]);
}

/// The negatives of docs/rollout-harness.md ("Negatives"): each breaks one
/// of the split's safety details, and each must fail every run.
#[test]
fn each_safety_detail_of_the_split_is_needed() {
    at_once(vec![
        (
            Box::new(|| {
                let real = real_upgrade_controller_first(&SPLIT_2, &KUBECTL);
                report("split, controller first, no guard", &real);
                real
            }),
            the_controller_first_fails_conversions_in_old_webhook_pods,
        ),
        (
            Box::new(|| upgrade(&SPLIT_WEBHOOKS_WITHOUT_SURGE)),
            webhooks_rolled_without_surge_fail_requests,
        ),
        (
            Box::new(|| upgrade(&SPLIT_SHARED_SELECTOR)),
            a_webhook_service_that_selects_controller_pods_routes_to_stopped_pods,
        ),
        (
            Box::new(|| upgrade(&SPLIT_WEBHOOKS_WITHOUT_PRESTOP)),
            webhook_pods_without_prestop_are_routed_to_after_they_stopped,
        ),
        (
            Box::new(|| one_shot(Guards::Off)),
            a_one_shot_apply_without_the_guards_changes_both_deployments_at_once,
        ),
    ]);
}

/// The split's upgrade on the other apply paths (kubectl's is in
/// [`version_upgrades_with_the_real_manager`]), and with 3 webhook
/// replicas, each with the guards asogen renders: none refuses a step of
/// the plan, and each keeps the webhooks answering.
#[test]
fn the_split_upgrades_on_every_apply_path_with_its_guards() {
    let mut runs: Vec<(Box<dyn Fn() -> RealRun + Send + Sync>, Check)> = PATHS
        .iter()
        .filter(|path| path.via != KUBECTL.via)
        .map(|path| {
            let run: Box<dyn Fn() -> RealRun + Send + Sync> =
                Box::new(move || upgrade_via(&SPLIT_2, path));
            (
                run,
                the_split_keeps_webhooks_answering_through_the_upgrade as Check,
            )
        })
        .collect();
    runs.push((
        Box::new(|| upgrade(&SPLIT_3)),
        the_split_keeps_webhooks_answering_through_the_upgrade,
    ));
    runs.push((
        Box::new(|| {
            let real = real_upgrade_with_crds_by_the_path(&SPLIT_CRDS_BY_THE_PATH, &KUBECTL);
            report(SPLIT_CRDS_BY_THE_PATH.name, &real);
            real
        }),
        crds_applied_by_the_path_keep_their_ca_bundle,
    ));
    at_once(runs);
}

/// What-if: the split's controller leaves the CRDs alone
/// (`--crd-management=none`) and the path applies the next release's CRDs
/// with server-side apply before the controller's step. cert-manager's
/// cainjector owns the CA bundle it wrote, so the apply keeps it: no CRD is
/// ever seen without its bundle, and no conversion fails for it, where the
/// manager's own CRD write (every other split row) opens a window.
fn crds_applied_by_the_path_keep_their_ca_bundle(real: RealRun) {
    let o = real.run.observation.clone();
    let crds = crd_versions(real.server());
    let why = real.describe();
    assert!(matches!(real.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed, "{why}");
    assert!(
        crds.iter().all(|v| v == next_tag()),
        "the path moved the CRDs on: {crds:?}: {why}"
    );
    assert!(o.requests > 0, "requests were made: {why}");
    assert!(o.ca_windows.is_empty(), "no CRD lost its bundle: {why}");
    assert_eq!(o.failed_for("ca-bundle"), 0, "{why}");
    for cause in ["unknown-version", "no-endpoint", "pod-stopping", "other"] {
        assert_eq!(
            o.failed_for(cause),
            0,
            "no request fails for {cause}: {why}"
        );
    }
}

/// A downgrade from the next release to ASO 2.20.0, in upstream's topology
/// and in the split, at once.
/// The split's guarded downgrade and its guarded one-shot apply run in
/// this group too: the test is the real cluster's admission, so each
/// refusal is the policy's own.
#[test]
fn downgrades_across_a_storage_version_with_the_real_manager() {
    let down = |topology: &'static Topology, guards: Guards| {
        move || {
            let real = real_downgrade(topology, &KUBECTL, REAL_STEP_LIMIT, guards);
            report(
                &format!(
                    "{} downgraded via kubectl, guards {guards:?}",
                    topology.name
                ),
                &real,
            );
            real
        }
    };
    at_once(vec![
        (
            Box::new(down(&UPSTREAM, Guards::Off)),
            a_downgrade_cannot_take_the_crds_back,
        ),
        (
            Box::new(down(&SPLIT_2, Guards::Off)),
            a_downgrade_cannot_take_the_crds_back,
        ),
        (
            Box::new(down(&SPLIT_2, Guards::On)),
            the_guards_refuse_the_split_s_downgrade_before_any_pod_moves,
        ),
        (
            Box::new(|| one_shot(Guards::On)),
            a_one_shot_apply_is_refused_until_the_webhooks_rolled_out,
        ),
    ]);
}

/// F12 (docs/aso-facts.md) on the real manager: the single-replica RollingUpdate profile
/// never finishes a version upgrade. The new pod's manager waits for the
/// Lease the old one holds before it applies the CRDs, is never Ready, and
/// is restarted when its startup probe's budget is spent; the old pod is
/// removed only once the new one is Ready, so the CRDs stay at the old
/// version and the old pod keeps answering every request.
fn a_version_upgrade_of_the_single_replica_rolling_profile_stalls(real: RealRun) {
    let o = real.run.observation.clone();
    let logs = manager_logs(&real.logs().unwrap());
    let crds = crd_versions(real.server());
    let why = real.describe();
    let previous = catalog_tag();
    // what a user waiting on the rollout sees
    let namespace = real.namespace();
    let status = real.server().kubectl(
        &[
            "rollout",
            "status",
            "deployment/azureserviceoperator-controller-manager",
            "-n",
            &namespace,
            "--timeout=2s",
        ],
        "",
    );
    let said = format!("{}{}", text(&status.stdout), text(&status.stderr));
    eprintln!(
        "kubectl rollout status after {} s: {said}",
        REAL_STEP_LIMIT.as_secs()
    );
    assert!(
        !status.status.success() && said.contains("1 old replicas are pending termination"),
        "the old pod is never replaced: {said}: {why}"
    );
    assert!(
        matches!(real.run.outcome, Outcome::GaveUp(_)),
        "the rollout never completes: {why}"
    );
    assert!(!o.completed, "{why}");
    assert!(
        o.startup_budget_spent,
        "the new pod's startup probe fails and it is restarted: {why}"
    );
    assert!(
        logs.contains("Acquiring leader lock") && logs.contains("VersionDifferent"),
        "the new manager waits for the Lease to update the CRDs: {why}"
    );
    assert!(
        !logs.contains("Restarting operator pod after updating CRDs"),
        "no manager applied the CRDs: {why}"
    );
    assert!(!o.crd_epoch, "no CRD was written at the new version: {why}");
    assert!(
        crds.iter().all(|v| *v == previous),
        "the CRDs stay at {previous}: {crds:?}: {why}"
    );
    assert_eq!(o.zero_endpoints_ms, 0, "the old pod keeps serving: {why}");
    assert!(o.requests > 0, "requests were made: {why}");
    assert_eq!(
        (o.failed_admission, o.failed_conversion, o.failed_other),
        (0, 0, 0),
        "the old pod answers every request: {why}"
    );
}

/// The same profile keeps a webhook endpoint up through a change that
/// keeps ASO's version (here the manager's memory limit): the surge pod has
/// no CRD to apply, becomes Ready, and only then is the old pod removed.
/// Upstream's pod has no preStop delay, so the old manager stops serving
/// as soon as it is deleted, while the proxy may still route to it for a
/// moment: a request that lands then fails, as on any cluster. Any other
/// failed request fails the test.
#[test]
fn a_change_of_the_single_replica_rolling_profile_keeps_an_endpoint_up() {
    let tag = catalog_tag();
    let real = real_change(
        &SINGLE_ROLLING,
        &KUBECTL,
        &tag,
        &tag,
        &["--set", "resources.limits.memory=600Mi"],
        REAL_STEP_LIMIT,
        Guards::On,
    );
    eprintln!(
        "{} (same version) via kubectl: {:?}",
        SINGLE_ROLLING.name, real.run.observation
    );
    let o = real.run.observation.clone();
    let why = real.describe();
    if o.failed_as_a_pod_stops > 0 {
        eprintln!("requests that raced the old pod's stop: {why}");
    }
    assert!(matches!(real.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed, "{why}");
    assert!(!o.startup_budget_spent, "no pod waits for the Lease: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "{why}");
    assert!(o.requests > 0, "requests were made: {why}");
    assert!(
        o.failed_by_cause
            .keys()
            .all(|cause| cause == "pod-stopping"),
        "only requests that race the old pod's stop fail: {why}"
    );
}

/// Upstream's defaults (2 replicas, Recreate) complete the upgrade: the
/// new manager applies the CRDs (seen on the API server, not booked) and
/// one controller version runs at a time; the webhooks are down while
/// Recreate replaces the pods, and requests fail then, for want of an
/// endpoint, never in a pod of the older release.
fn upstream_defaults_upgrade_with_webhook_downtime(real: RealRun) {
    let o = real.run.observation.clone();
    let crds = crd_versions(real.server());
    let why = real.describe();
    assert!(matches!(real.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed, "{why}");
    assert!(o.crd_epoch, "the new manager wrote the CRDs: {why}");
    assert!(
        crds.iter().all(|v| v == next_tag()),
        "the CRDs moved on: {crds:?}: {why}"
    );
    assert_eq!(o.controller_versions, 1, "I3: {why}");
    assert!(
        o.zero_endpoints_ms > 0,
        "Recreate leaves no endpoint: {why}"
    );
    assert!(
        o.failed_for("no-endpoint") > 0,
        "requests fail while no pod serves: {why}"
    );
    assert_eq!(
        o.failed_for("unknown-version"),
        0,
        "no old pod serves beside the new one: {why}"
    );
    assert_eq!(o.ca_failures_outside_windows, 0, "{why}");
}

/// 2 replicas rolled instead of recreated (what `ha-requires-recreate`
/// forbids), as the chart renders them (leader election on): one old pod
/// goes at once (maxUnavailable 1) and one new pod starts. Which way it
/// breaks depends on a race ASO's manager runs: when the old pod that goes
/// held the Lease, and the new pod takes it before the other old pod does,
/// the new pod writes the next release's CRDs while the old one serves,
/// and conversions are refused (the seed's failure, below); otherwise the
/// new pod waits for the Lease the old one holds and the upgrade never
/// finishes (F12's stall). Seen here both ways; never a clean upgrade.
fn two_replicas_rolled_break_the_upgrade(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    let errors = real.run.timeline.request_errors(real.run.start, real.end);
    let seed = o.failed_for("unknown-version") > 0
        && errors.iter().any(|e| e.contains(UNKNOWN_STORAGE_VERSION));
    let stalled = !o.completed && o.startup_budget_spent && !o.crd_epoch;
    eprintln!("2 replicas rolled: seed's failure {seed}, stalled {stalled}");
    assert!(
        seed || stalled,
        "old pods refuse conversions to the new storage version, or the new pod never gets the Lease: {why}"
    );
    assert_eq!(o.controller_versions, 2, "two versions' pods run: {why}");
}

/// The seed's failure, on ASO's own code: 2 replicas rolled instead of
/// recreated, with no Lease to order the pods (what-if). The new pod
/// writes the next release's CRDs as it starts and restarts, while the
/// old pods still serve the webhooks: every conversion that reaches them
/// to or from the new storage version is refused, their scheme has no
/// such type.
fn two_replicas_rolled_fail_conversions_in_old_pods(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    let errors = real.run.timeline.request_errors(real.run.start, real.end);
    assert!(
        o.crd_epoch,
        "the new pod wrote the next release's CRDs: {why}"
    );
    assert_eq!(
        o.controller_versions, 2,
        "old and new pods run side by side: {why}"
    );
    assert!(
        o.stale_pods > 0,
        "I2 breaks: an old pod serves after the CRDs moved: {why}"
    );
    assert!(
        o.failed_for("unknown-version") > 0
            && errors.iter().any(|e| e.contains(UNKNOWN_STORAGE_VERSION)),
        "conversions are refused by the old webhook pod, which does not know the storage version: {why}"
    );
}

/// The split keeps the webhooks answering through the upgrade: the
/// webhooks Deployment rolls first and its old pods are gone (terminating
/// ones included) before the controller of the next release applies the
/// CRDs. No admission request fails, no request meets a webhook pod that
/// does not know the storage version, none finds no endpoint or a stopped
/// pod, and no new connection to the webhook Service is refused; what
/// fails is a conversion in a moment after a CRD write, before
/// cert-manager's cainjector has put the CA bundle back.
fn the_split_keeps_webhooks_answering_through_the_upgrade(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    let guards = real.bound_policies();
    assert!(
        guards.iter().any(|p| p.starts_with(ORDER_GUARD)),
        "the guards were bound, the order guard among them: {guards:?}: {why}"
    );
    assert!(matches!(real.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed, "{why}");
    assert!(o.crd_epoch, "the new controller wrote the CRDs: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1: {why}");
    assert_eq!(o.stale_pods, 0, "I2: {why}");
    assert_eq!(o.controller_versions, 1, "I3: {why}");
    assert!(o.requests > 0 && o.probes > 0, "requests were made: {why}");
    // an admission request sent on a connection a stopping webhook pod
    // closed just then fails with EOF or a reset, whatever the topology
    // (see stopped_pod_refusals); every other admission failure counts,
    // and so does more than one such race in a run
    let in_flight = in_flight_admissions(&real);
    assert!(
        in_flight <= 1,
        "{in_flight} admission requests lost in flight: {why}"
    );
    assert_eq!(o.failed_admission - in_flight, 0, "{why}");
    for cause in ["unknown-version", "no-endpoint", "other"] {
        assert_eq!(
            o.failed_for(cause),
            0,
            "no request fails for {cause}: {why}"
        );
    }
    let refused = stopped_pod_refusals(&real);
    assert!(
        refused.is_empty(),
        "no request is routed to a webhook pod that stopped: {refused:#?}: {why}"
    );
    assert!(
        o.refused_probes_by_cause.is_empty(),
        "no new connection to the webhook Service is refused: {why}"
    );
    assert_eq!(
        o.ca_failures_outside_windows, 0,
        "a conversion fails on the CA only while a CRD lacks its bundle: {why}"
    );
}

/// The order guard's policy name, without its namespace suffix.
const ORDER_GUARD: &str = "azureserviceoperator-order-guard-";

/// The split's careless one-shot apply with its guards: the first apply is
/// refused for the controller alone (everything else applied), the same
/// apply is accepted once the webhooks rolled out and their old pods are
/// gone, and the upgrade then finishes as the plan's does: no request
/// meets a webhook pod that does not know the version, none fails at
/// admission.
fn a_one_shot_apply_is_refused_until_the_webhooks_rolled_out(real: RealRun) {
    let shot = real.shot.clone().expect("a one-shot run");
    let why = format!("{shot:?}\n{}", real.describe());
    assert!(
        shot.first.contains(one_shot::RULE) && shot.first.contains(one_shot::CONTROLLER),
        "the first apply is refused for the controller: {why}"
    );
    assert!(shot.controller_kept, "the controller kept 2.20.0: {why}");
    assert!(shot.reapplied >= 1, "{why}");
    let o = real.run.observation.clone();
    assert!(matches!(real.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed && o.crd_epoch, "the upgrade completes: {why}");
    assert_eq!(o.stale_pods, 0, "I2: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1: {why}");
    assert_eq!(o.failed_admission, 0, "{why}");
    for cause in ["unknown-version", "no-endpoint", "pod-stopping"] {
        assert_eq!(
            o.failed_for(cause),
            0,
            "no request fails for {cause}: {why}"
        );
    }
}

/// The same one-shot apply with no guard: all of it is accepted, so both
/// Deployments change in one write, and the order between the controller's
/// CRD write and the webhooks' roll is left to chance. The table
/// (`bench/rollout real`) counts what each run met.
fn a_one_shot_apply_without_the_guards_changes_both_deployments_at_once(real: RealRun) {
    let shot = real.shot.clone().expect("a one-shot run");
    let why = format!("{shot:?}\n{}", real.describe());
    assert!(shot.first.is_empty(), "nothing refused: {why}");
    assert!(
        !shot.controller_kept,
        "the controller changed at once: {why}"
    );
    assert!(real.bound_policies().is_empty(), "no guard: {why}");
    assert!(
        real.run.observation.crd_epoch,
        "the new controller wrote its CRDs: {why}"
    );
}

/// The split's downgrade with its guards: the plan's first step, the
/// webhooks back to 2.20.0 below a controller of the next release and
/// below the CRDs it applied, is refused (by the order guard's downgrade
/// check or the CRDs' guard: the API server names one denial), so no pod
/// moves and the CRDs stay at the next release; no request fails.
fn the_guards_refuse_the_split_s_downgrade_before_any_pod_moves(real: RealRun) {
    let o = real.run.observation.clone();
    let crds = crd_versions(real.server());
    let why = real.describe();
    match &real.run.outcome {
        Outcome::Refused(stderr) => assert!(
            stderr.contains(one_shot::RULE) || stderr.contains("split-never-below-crds"),
            "refused by the order guard or the CRDs' guard: {stderr}: {why}"
        ),
        other => panic!("the downgrade's first step is refused, not {other:?}: {why}"),
    }
    assert!(
        crds.iter().all(|v| v == next_tag()),
        "the CRDs stay at the next release: {crds:?}: {why}"
    );
    assert!(o.requests > 0, "requests were made: {why}");
    assert!(o.failed_by_cause.is_empty(), "no request fails: {why}");
}

/// The requests of the run that failed as a pod stopped: (how they went
/// through, `admission` or `conversion`; when; the error; whether in
/// flight). A request sent on a connection the API server kept open to a
/// webhook pod just as that pod's server shut it down fails with `EOF` or
/// a reset, in flight (or, for a second request on that connection, "use of
/// closed network connection"): Go's HTTP client does not send a POST
/// again, whatever the topology (seen twice in one split run of about
/// fifteen, none in the others).
fn pod_stopping_failures(real: &RealRun) -> impl Iterator<Item = (&str, i64, &str, bool)> {
    real.run
        .timeline
        .events
        .iter()
        .filter_map(move |e| match e {
            timeline::Event::Request {
                t,
                ok: false,
                cause,
                error,
                through,
                ..
            } if cause == "pod-stopping" && (real.run.start..=real.end).contains(t) => {
                // Go's client reports the same close as "use of closed
                // network connection" to a request that shared the
                // connection (seen once in CI, 4 ms after an EOF on it)
                let in_flight = error.ends_with(": EOF")
                    || error.contains("connection reset by peer")
                    || error.contains("use of closed network connection");
                Some((through.as_str(), *t, error.as_str(), in_flight))
            }
            _ => None,
        })
}

/// The requests of the run that failed as a pod stopped other than in
/// flight: refused or routed to a pod that had stopped (what the webhook
/// pods' preStop delay and the proxy's lag exist to prevent).
fn stopped_pod_refusals(real: &RealRun) -> Vec<String> {
    pod_stopping_failures(real)
        .filter(|(_, _, _, in_flight)| !in_flight)
        .map(|(_, t, error, _)| format!("{t}: {error}"))
        .collect()
}

/// How many admission requests of the run failed in flight as a webhook
/// pod stopped.
fn in_flight_admissions(real: &RealRun) -> usize {
    pod_stopping_failures(real)
        .filter(|(through, _, _, in_flight)| *through == "admission" && *in_flight)
        .count()
}

/// Negative: the controller of the next release applied before the
/// webhooks (the plan's steps reversed, no admission policy to refuse it,
/// as `split-controller-after-webhooks` forbids): the controller writes the
/// CRDs while every webhook pod is of the older release, and conversions
/// are refused until the webhooks roll.
fn the_controller_first_fails_conversions_in_old_webhook_pods(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    let errors = real.run.timeline.request_errors(real.run.start, real.end);
    assert!(o.stale_pods > 0, "I2 breaks: {why}");
    assert!(
        o.failed_for("unknown-version") > 0
            && errors.iter().any(|e| e.contains(UNKNOWN_STORAGE_VERSION)),
        "old webhook pods refuse conversions to the new storage version: {why}"
    );
}

/// Negative: a webhooks Deployment of one replica rolled without a surge
/// (`maxUnavailable: 1`, which `split-webhooks-never-unavailable`
/// forbids) leaves the webhook Service without a ready pod (I1 breaks,
/// every run). The old pod, terminating, still serves through its preStop
/// delay, and the proxy routes to a serving terminating endpoint when no
/// ready one is left (as kube-proxy does), so users' requests fail for
/// want of an endpoint when the new pod takes longer than that delay and
/// the proxy's lag to become ready: most runs (its startup probe passes on
/// its second try, 10 s in), not a run where it passed on the first.
fn webhooks_rolled_without_surge_fail_requests(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    assert!(o.zero_endpoints_ms > 0, "I1 breaks: {why}");
    let bridged_ms = (webhooks_pre_stop_seconds() + 1) * 1000;
    if o.zero_endpoints_ms > bridged_ms + 1000 {
        assert!(
            o.failed_for("no-endpoint") > 0,
            "requests fail while no webhook pod serves, longer than the old pod's preStop delay and the proxy's lag ({bridged_ms} ms): {why}"
        );
    }
}

/// The preStop delay the split renders on its webhook pods, in seconds.
fn webhooks_pre_stop_seconds() -> i64 {
    let args = SPLIT_2.args("default", None, &[]);
    SPLIT_2
        .render(&args, "default")
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .flat_map(|o| {
            o["spec"]["template"]["spec"]["containers"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find_map(|c| c["lifecycle"]["preStop"]["sleep"]["seconds"].as_i64())
        .expect("the split's webhook pods have a preStop sleep")
}

/// Negative: a webhook Service that also selects the controller pods (as
/// `split-selectors-disjoint` forbids). The controller's pods have no
/// preStop delay and are recreated: each stops serving as it is deleted,
/// while the proxy still routes new connections to it for its lag, and
/// those are refused by the pod that stopped.
fn a_webhook_service_that_selects_controller_pods_routes_to_stopped_pods(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    let probes = real.run.timeline.probe_errors(real.run.start, real.end);
    assert!(
        o.probes_refused_as_a_pod_stops > 0,
        "new connections reach controller pods that stopped: {probes:#?}: {why}"
    );
}

/// Negative: webhook pods without the preStop delay asogen renders: each
/// old webhook pod stops serving as it is deleted, while the proxy still
/// routes new connections to it for its lag.
fn webhook_pods_without_prestop_are_routed_to_after_they_stopped(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    let probes = real.run.timeline.probe_errors(real.run.start, real.end);
    assert!(
        o.probes_refused_as_a_pod_stops > 0,
        "new connections reach webhook pods that stopped: {probes:#?}: {why}"
    );
}

/// Negative: a split controller rolled instead of recreated (as
/// `split-controller-never-rolls` forbids) runs two controller versions at
/// once, and the surge pod's manager waits for the Lease the old
/// controller holds before it would apply the CRDs, as in F12: the
/// upgrade never finishes, the CRDs stay at the old version.
fn a_split_controller_rolled_instead_of_recreated_stalls_with_two_versions(real: RealRun) {
    let o = real.run.observation.clone();
    let crds = crd_versions(real.server());
    let why = real.describe();
    let previous = catalog_tag();
    assert!(!o.completed, "the rollout never completes: {why}");
    assert_eq!(
        o.controller_versions, 2,
        "I3 breaks (two versions run): {why}"
    );
    assert!(o.startup_budget_spent, "the surge pod is restarted: {why}");
    assert!(
        crds.iter().all(|v| *v == previous),
        "the CRDs stay at {previous}: {crds:?}: {why}"
    );
}

/// A downgrade across a storage version: ASO 2.20.0's manager cannot take
/// the CRDs back (the API server refuses to drop a version objects are
/// stored at), so it never becomes ready; and webhook pods of 2.20.0
/// cannot convert what is stored. Requests fail either for want of an
/// endpoint (upstream's Recreate) or in the old webhook pods (the split's
/// webhooks, which move first).
fn a_downgrade_cannot_take_the_crds_back(real: RealRun) {
    let o = real.run.observation.clone();
    let crds = crd_versions(real.server());
    let logs = manager_logs(&real.logs().unwrap());
    let why = real.describe();
    assert!(!o.completed, "the downgrade never completes: {why}");
    assert!(
        crds.iter().all(|v| v == next_tag()),
        "the CRDs stay at the next release: {crds:?}: {why}"
    );
    assert!(
        logs.contains("Failed to apply CRD") && logs.contains("must remain in spec.versions"),
        "the API server refuses 2.20.0's CRDs: {why}"
    );
    assert!(
        o.failed_for("unknown-version") + o.failed_for("no-endpoint") > 0,
        "{why}"
    );
}

/// Negative: webhook pods with leader election (as
/// `split-webhooks-no-leader-election` forbids) campaign for the
/// controllers' own Lease as soon as they start, before the controller
/// exists. The split's RBAC gives the webhooks' ServiceAccount no access to
/// Leases, so every campaign is refused and the controller takes the Lease
/// when it starts: the rule guards against a webhook pod holding it, which
/// only RBAC wider than asogen's would allow.
#[test]
fn webhook_pods_with_leader_election_are_refused_the_controllers_lease() {
    let installed = real_install(
        &SPLIT_WEBHOOKS_ELECT,
        &KUBECTL,
        &catalog_tag(),
        Guards::for_topology(&SPLIT_WEBHOOKS_ELECT),
    );
    let server = &installed.plane.server;
    let holder = server.kubectl_ok(
        &[
            "get",
            "lease",
            "controllers-leader-election-azinfra-generated",
            "-n",
            &installed.namespace,
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
        "",
    );
    let logs = manager_logs(&installed.plane.pods());
    let webhook_pods: Vec<&str> = logs
        .split("==== ")
        .filter(|pod| pod.starts_with("azureserviceoperator-webhooks-"))
        .collect();
    assert!(
        holder.starts_with("azureserviceoperator-controller-manager-"),
        "the controller holds its Lease: {holder:?}"
    );
    assert!(!webhook_pods.is_empty(), "the webhook pods run");
    for pod in webhook_pods {
        assert!(
            pod.contains("Attempting to acquire leader lease")
                && pod.contains("is forbidden")
                && !pod.contains("Successfully acquired lease"),
            "the webhook pod campaigns and is refused: {pod}"
        );
    }
}

/// What a socket connect from inside the network namespace of `pid` to
/// `host:port` gives: "connected", or the error's name (Python's errno).
fn connect_from(pid: u32, host: &str, port: u16) -> String {
    let script = format!(
        "import errno, socket\n\
         try:\n    socket.create_connection(({host:?}, {port}), timeout=3).close(); print('connected')\n\
         except OSError as e:\n    print(errno.errorcode.get(e.errno, str(e)))"
    );
    let out = tool("nsenter")
        .arg(format!("--net=/proc/{pid}/ns/net"))
        .args(["python3", "-c", &script])
        .output()
        .expect("nsenter (util-linux) and python3 are needed");
    assert!(out.status.success(), "nsenter: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// What `/proc/PID/status` says on `field` (e.g. "CapEff"): the
/// process's first thread.
fn status_of(pid: u32, field: &str) -> String {
    status_at(&pid.to_string(), field)
}

/// What `/proc/TASK/status` says on `field`, for `TASK` a pid or
/// `pid/task/tid`.
fn status_at(task: &str, field: &str) -> String {
    std::fs::read_to_string(format!("/proc/{task}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// The plane's sandboxes once each pod's first process has finished its
/// set-up: the agent publishes a sandbox as soon as its network is up,
/// before the process drops its capabilities, and a pod that has just
/// (re)started is judged once it has.
fn settled_sandboxes(plane: &real::RealPlane) -> Vec<(String, u32)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let sandboxes = plane.sandboxes();
        if !sandboxes.is_empty()
            && sandboxes
                .iter()
                .all(|(_, pid)| status_of(*pid, "NoNewPrivs") == "1")
        {
            return sandboxes;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pods never finished starting: {sandboxes:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The thread ids of process `pid`.
fn threads(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Every process's pid, as /proc lists them.
fn processes() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// Whether process `pid` still runs (a zombie does not).
fn runs(pid: u32) -> bool {
    let state = status_of(pid, "State");
    !state.is_empty() && !state.starts_with('Z')
}

/// A pod's network namespace reaches nothing but what the test made: no
/// route leaves it (a documentation address, which no network routes, is
/// unreachable; nothing is sent), the host's loopback (where the test API
/// server listens) is not the pod's, and the one way out is the API
/// server's Service address, which the agent forwards. Its process is
/// confined as a container runtime confines one: namespaces of its own
/// (PID, IPC, mount, UTS, cgroup, network), no capability in any set, no
/// way to gain one; and no process of a pod outlives its test.
#[test]
fn a_pod_reaches_nothing_beyond_the_test() {
    let installed = real_install(&UPSTREAM, &KUBECTL, &catalog_tag(), Guards::On);
    let sandboxes = settled_sandboxes(&installed.plane);
    let api_port: u16 = std::fs::read_to_string(&installed.plane.server.kubeconfig)
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://127.0.0.1:"))
        .and_then(|p| p.parse().ok())
        .expect("the kubeconfig names the API server's port");
    for (ip, pid) in sandboxes {
        let routes = tool("nsenter")
            .arg(format!("--net=/proc/{pid}/ns/net"))
            .args(["ip", "-o", "route", "show", "table", "all"])
            .output()
            .expect("nsenter and ip");
        let routes = text(&routes.stdout);
        assert!(
            routes
                .lines()
                .all(|r| r.starts_with("local ") || r.contains(" dev lo ")),
            "pod {ip}: only local routes: {routes}"
        );
        assert_eq!(
            connect_from(pid, "198.51.100.7", 443),
            "ENETUNREACH",
            "pod {ip}"
        );
        assert_eq!(
            connect_from(pid, "127.0.0.1", api_port),
            "ECONNREFUSED",
            "pod {ip}"
        );
        assert_eq!(connect_from(pid, "10.0.0.1", 443), "connected", "pod {ip}");
        assert_eq!(
            connect_from(pid, &ip, 8081),
            "connected",
            "pod {ip}: its own health server"
        );
        for ns in ["pid", "ipc", "mnt", "uts", "cgroup", "net"] {
            let theirs = std::fs::read_link(format!("/proc/{pid}/ns/{ns}")).unwrap();
            let ours = std::fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
            assert_ne!(theirs, ours, "pod {ip}: a {ns} namespace of its own");
        }
        for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert_eq!(
                status_of(pid, set),
                "0000000000000000",
                "pod {ip}: no capability in {set}"
            );
        }
        assert_eq!(status_of(pid, "NoNewPrivs"), "1", "pod {ip}");
        // the pod's first process, whose end ends the pod
        assert_eq!(status_of(pid, "NSpid").split_whitespace().last(), Some("1"));
        // every process of the pod, the manager among them, as confined
        let pod_ns = std::fs::read_link(format!("/proc/{pid}/ns/pid")).unwrap();
        let in_pod: Vec<u32> = processes()
            .filter(|p| {
                std::fs::read_link(format!("/proc/{p}/ns/pid")).ok() == Some(pod_ns.clone())
            })
            .collect();
        assert!(
            in_pod.len() >= 2,
            "pod {ip}: its first process and the manager: {in_pod:?}"
        );
        // on every thread: capabilities and no_new_privs are per thread
        for p in in_pod {
            for task in threads(p) {
                let status = format!("{p}/task/{task}");
                for set in ["CapEff", "CapBnd"] {
                    assert_eq!(
                        status_at(&status, set),
                        "0000000000000000",
                        "pod {ip}, process {p}, thread {task}"
                    );
                }
                assert_eq!(
                    status_at(&status, "NoNewPrivs"),
                    "1",
                    "pod {ip}, process {p}, thread {task}"
                );
            }
        }
    }
    // every process of every pod: the first ones and what they run
    let first: Vec<u32> = installed
        .plane
        .sandboxes()
        .iter()
        .map(|(_, pid)| *pid)
        .collect();
    let pids: Vec<u32> = processes()
        .filter(|p| {
            let parent = status_of(*p, "PPid").parse::<u32>().unwrap_or(0);
            first.contains(p) || first.contains(&parent)
        })
        .collect();
    drop(installed);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while pids.iter().any(|pid| runs(*pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let left: Vec<&u32> = pids.iter().filter(|pid| runs(**pid)).collect();
    assert!(
        left.is_empty(),
        "pods' processes outlived their test: {left:?}"
    );
}
