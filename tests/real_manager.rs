//! Upgrades with ASO's own manager (issue 32): the rollout harness's real
//! mode (tests/rollout/real.rs, docs/rollout-harness.md), where every pod
//! runs ASO 2.20.0's manager built from its Go module, the CRDs are
//! written by that manager, and a client makes users' requests through
//! every upgrade and counts the ones that fail. Each test asserts what
//! ASO does with the shape asogen renders, so that what asogen says about
//! that shape (README, the rules' help, `validate`, `upgrade-plan`) can be
//! held to it. `bench/rollout real` prints the figures.
//!
//! Each scenario has a control plane of its own (the ASO CRDs and webhook
//! configurations are cluster-wide), so they run side by side: the five
//! version upgrades at once, in one test.

// the modelled mode's parts of the shared modules go unused here
#[allow(dead_code)]
#[path = "rollout/cluster.rs"]
mod cluster;
mod common;
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

use common::{text, tool};
use paths::{KUBECTL, Outcome};
use real::{
    REAL_STEP_LIMIT, RealRun, catalog_tag, crd_versions, manager_logs, real_change, real_install,
    real_upgrade,
};
use scenario::{
    PREVIOUS_TAG, SINGLE_ROLLING, SPLIT_2, SPLIT_CONTROLLER_ROLLS, SPLIT_WEBHOOKS_ELECT,
    SPLIT_WEBHOOKS_WITHOUT_SURGE, Topology, UPSTREAM,
};

fn upgrade(topology: &Topology) -> RealRun {
    let real = real_upgrade(topology, &KUBECTL, REAL_STEP_LIMIT);
    eprintln!("{} via kubectl: {:?}", topology.name, real.run.observation);
    let errors = real.run.timeline.request_errors(real.run.start, real.end);
    for error in errors.iter().take(3) {
        eprintln!("  failed: {error}");
    }
    if errors.len() > 3 {
        eprintln!("  ... {} failed requests in all", errors.len());
    }
    real
}

/// What one upgrade's run must show.
type Check = fn(RealRun);

/// The version upgrades, run at once (each on a control plane of its own:
/// they mostly wait for probe periods and startup budgets), then each
/// checked by its function below.
#[test]
fn version_upgrades_with_the_real_manager() {
    let cases: [(&Topology, Check); 5] = [
        (
            &SINGLE_ROLLING,
            a_version_upgrade_of_the_single_replica_rolling_profile_stalls,
        ),
        (&UPSTREAM, upstream_defaults_upgrade_with_webhook_downtime),
        (
            &SPLIT_2,
            the_split_keeps_webhooks_answering_through_the_upgrade,
        ),
        (
            &SPLIT_WEBHOOKS_WITHOUT_SURGE,
            webhooks_rolled_without_surge_fail_requests,
        ),
        (
            &SPLIT_CONTROLLER_ROLLS,
            a_split_controller_rolled_instead_of_recreated_stalls_with_two_versions,
        ),
    ];
    let runs: Vec<RealRun> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .map(|(topology, _)| s.spawn(|| upgrade(topology)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for ((_, check), run) in cases.iter().zip(runs) {
        check(run);
    }
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
        crds.iter().all(|v| v == PREVIOUS_TAG),
        "the CRDs stay at {PREVIOUS_TAG}: {crds:?}: {why}"
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
        &["--set", "resources.limits.memory=600Mi"],
        REAL_STEP_LIMIT,
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
    assert_eq!(
        o.failed_admission + o.failed_conversion + o.failed_other,
        o.failed_as_a_pod_stops,
        "only requests that race the old pod's stop fail: {why}"
    );
}

/// Upstream 2.20.0's defaults (2 replicas, Recreate) complete the upgrade:
/// the new manager applies the CRDs (seen on the API server, not booked)
/// and one controller version runs at a time; the webhooks are down while
/// Recreate replaces the pods, and requests fail then.
fn upstream_defaults_upgrade_with_webhook_downtime(real: RealRun) {
    let o = real.run.observation.clone();
    let crds = crd_versions(real.server());
    let why = real.describe();
    assert!(matches!(real.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed, "{why}");
    assert!(o.crd_epoch, "the new manager wrote the CRDs: {why}");
    assert!(
        crds.iter().all(|v| v != PREVIOUS_TAG),
        "the CRDs moved on: {crds:?}: {why}"
    );
    assert_eq!(o.controller_versions, 1, "I3: {why}");
    assert!(
        o.zero_endpoints_ms > 0,
        "Recreate leaves no endpoint: {why}"
    );
    assert!(
        o.failed_admission + o.failed_conversion > 0,
        "requests fail while no pod serves: {why}"
    );
}

/// The split keeps the webhooks answering through the upgrade: the
/// webhooks Deployment rolls first, the controller applies the CRDs after
/// it, and no admission request fails.
fn the_split_keeps_webhooks_answering_through_the_upgrade(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    assert!(matches!(real.run.outcome, Outcome::Done), "{why}");
    assert!(o.completed, "{why}");
    assert!(o.crd_epoch, "the new controller wrote the CRDs: {why}");
    assert_eq!(o.zero_endpoints_ms, 0, "I1: {why}");
    assert_eq!(o.stale_pods, 0, "I2: {why}");
    assert_eq!(o.controller_versions, 1, "I3: {why}");
    assert!(o.requests > 0, "requests were made: {why}");
    assert_eq!(o.failed_admission, 0, "{why}");
    // A conversion may fail in the moment after the manager's CRD apply
    // drops the CA bundle (docs/rollout-harness.md), never for want of a pod.
    let errors = real.run.timeline.request_errors(real.run.start, real.end);
    assert!(
        errors
            .iter()
            .all(|e| e.contains("x509: certificate signed by unknown authority")),
        "no request fails for want of a serving webhook pod: {errors:#?}: {why}"
    );
}

/// Negative: a webhooks Deployment of one replica rolled without a surge
/// (`maxUnavailable: 1`, which `split-webhooks-never-unavailable`
/// forbids) leaves the webhook Service without a pod, and users' requests
/// fail meanwhile: the failed-request count sees what I1 is about.
fn webhooks_rolled_without_surge_fail_requests(real: RealRun) {
    let o = real.run.observation.clone();
    let why = real.describe();
    assert!(o.zero_endpoints_ms > 0, "I1 breaks: {why}");
    assert!(
        o.failed_admission + o.failed_conversion > 0,
        "requests fail while no webhook pod serves: {why}"
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
    assert!(!o.completed, "the rollout never completes: {why}");
    assert_eq!(
        o.controller_versions, 2,
        "I3 breaks (two versions run): {why}"
    );
    assert!(o.startup_budget_spent, "the surge pod is restarted: {why}");
    assert!(
        crds.iter().all(|v| v == PREVIOUS_TAG),
        "the CRDs stay at {PREVIOUS_TAG}: {crds:?}: {why}"
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
    let installed = real_install(&SPLIT_WEBHOOKS_ELECT, &KUBECTL, PREVIOUS_TAG);
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

/// A pod's network namespace reaches nothing but what the test made: no
/// route leaves it (a documentation address, which no network routes, is
/// unreachable; nothing is sent), the host's loopback (where the test API
/// server listens) is not the pod's, and the one way out is the API
/// server's Service address, which the agent forwards.
#[test]
fn a_pod_reaches_nothing_beyond_the_test() {
    let installed = real_install(&UPSTREAM, &KUBECTL, PREVIOUS_TAG);
    let sandboxes = installed.plane.sandboxes();
    assert!(!sandboxes.is_empty(), "the install runs pods");
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
    }
}
