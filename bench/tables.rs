//! The rollout harness's tables (docs/rollout-harness.md): figures, not
//! assertions, so they live beside the benchmarks instead of among the
//! tests (the tests assert the invariants: tests/rollout.rs, tests/ha.rs,
//! tests/real_manager.rs). `bench/rollout [ha|real]` runs this through
//! `cargo bench`; it prints one markdown table on stdout.
//!
//! It shares the harness with those tests: the same modules, by path.

#[allow(dead_code)]
#[path = "../tests/ha/case.rs"]
mod case;
#[allow(dead_code)]
#[path = "../tests/rollout/cluster.rs"]
mod cluster;
#[path = "../tests/common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../tests/ha/disruption.rs"]
mod disruption;
#[allow(dead_code)]
#[path = "../tests/rollout/one_shot.rs"]
mod one_shot;
#[allow(dead_code)]
#[path = "../tests/rollout/paths.rs"]
mod paths;
#[allow(dead_code)]
#[path = "../tests/rollout/real.rs"]
mod real;
#[allow(dead_code)]
#[path = "../tests/rollout/scenario.rs"]
mod scenario;
#[allow(dead_code)]
#[path = "../tests/rollout/timeline.rs"]
mod timeline;

use std::process::ExitCode;

use paths::Outcome;
use real::{
    Guards, REAL_STEP_LIMIT, RealRun, catalog_tag, next_tag, real_downgrade, real_migrate,
    real_one_shot, real_upgrade, real_upgrade_with_crds_by_the_path,
};
use scenario::{
    FORBIDDEN_ROLLING, SINGLE_ROLLING, SINGLE_ROLLING_WITHOUT_ELECTION, SPLIT_2, SPLIT_3,
    SPLIT_CRDS_BY_THE_PATH, Topology, UPSTREAM, on_every_path,
};
use timeline::Observation;

/// The topologies of the upgrade tables.
const TOPOLOGIES: [Topology; 5] = [
    UPSTREAM,
    SINGLE_ROLLING,
    SINGLE_ROLLING_WITHOUT_ELECTION,
    SPLIT_2,
    SPLIT_3,
];

const USAGE: &str = "usage: bench/rollout [ha|real|real-ca]";

fn main() -> ExitCode {
    // cargo bench passes --bench first
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["rollout"] => upgrades(),
        ["ha"] => ha(),
        ["real"] => real(),
        ["real-ca"] => real_ca(),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// The table of issue 23: the topologies asogen renders today under every
/// apply path, with the modelled node agent.
fn upgrades() {
    println!(
        "| topology | apply path | webhook endpoints zero for | stale webhook pods after CRDs changed | controller versions at once | upgrade time |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for topology in &TOPOLOGIES {
        for (path, run) in on_every_path(topology) {
            let [zero, stale, versions, time] = cells(&run.observation);
            println!(
                "| {} | {} | {zero} | {stale} | {versions} | {time} |",
                topology.name, path.name
            );
        }
    }
}

/// The I4 table: each topology drained and losing a node.
fn ha() {
    println!(
        "| topology | webhook replicas | nodes used by webhooks / controller (drain case; loss case) | drain: endpoints zero for, refused evictions | node loss: endpoints zero for | controller pod survived (drain; loss) |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    let topologies = [
        &SPLIT_2,
        &UPSTREAM,
        &case::SPLIT_ONE_WEBHOOK,
        &case::SPLIT_SPREAD_OFF,
        &case::SPLIT_SPREAD_COUNTS_CORDONED,
    ];
    for topology in topologies {
        let (drain, loss) = case::drain_and_loss(topology);
        let refused = drain.drained.as_ref().map_or(0, |d| d.refused);
        let finished = drain.drained.as_ref().is_some_and(|d| d.finished);
        let yes = |b: bool| if b { "yes" } else { "no" };
        println!(
            "| {} | {} | {}; {} | {}, {refused}{} | {} | {}; {} |",
            topology.name,
            loss.placement.webhook_pods,
            nodes_cell(&drain),
            nodes_cell(&loss),
            zero_cell(&drain),
            if finished { "" } else { " (a drain gave up)" },
            zero_cell(&loss),
            yes(drain.availability.fewest_controllers >= 1),
            yes(loss.availability.untouched_controllers >= 1),
        );
    }
}

/// The nodes each role's pods were on: "nodes of pods" for the webhooks,
/// then for the controller.
fn nodes_cell(run: &case::HaRun) -> String {
    let p = &run.placement;
    format!(
        "{} of {} / {} of {}",
        p.webhooks.len(),
        p.webhook_pods,
        p.controller.len(),
        p.controller_pods
    )
}

/// How long no webhook endpoint was ready.
fn zero_cell(run: &case::HaRun) -> String {
    let a = &run.availability;
    let mut cell = seconds(a.zero_endpoints_ms);
    if !a.recovered {
        cell.push_str(" (not recovered)");
    }
    cell
}

/// The table of issues 32 and 41, every row observed with ASO's own
/// manager: the topologies of the modelled table and the forbidden shape
/// (2 replicas rolled, rendered past the rules) under every apply path,
/// upgraded from ASO 2.20.0 to the next release derived from its module,
/// the split's one-shot apply and its downgrade with the guards on and
/// off, and the migrations to the split and back. The guards asogen
/// renders are applied wherever the shape is asogen's. Two scenarios at a
/// time (each has its own control plane).
fn real() {
    type Case<'a> = (String, Box<dyn Fn() -> RealRun + Send + Sync + 'a>);
    let mut cases: Vec<Case> = Vec::new();
    for topology in TOPOLOGIES.iter().chain([&FORBIDDEN_ROLLING]) {
        for path in &paths::PATHS {
            cases.push((
                format!("{} | {}", topology.name, path.name),
                Box::new(move || real_upgrade(topology, path, REAL_STEP_LIMIT)),
            ));
        }
    }
    for guards in [Guards::On, Guards::Off] {
        cases.push((
            format!("{}, one-shot apply | kubectl", SPLIT_2.name),
            Box::new(move || real_one_shot(&SPLIT_2, guards)),
        ));
    }
    for (topology, guards) in [
        (&UPSTREAM, Guards::Off),
        (&SPLIT_2, Guards::Off),
        (&SPLIT_2, Guards::On),
    ] {
        cases.push((
            format!(
                "{}, downgrade {} to {} | kubectl",
                topology.name,
                next_tag(),
                catalog_tag()
            ),
            Box::new(move || real_downgrade(topology, &paths::KUBECTL, REAL_STEP_LIMIT, guards)),
        ));
    }
    for path in [&paths::PATHS[0], &paths::PATHS[1], &paths::PATHS[3]] {
        for (from, to) in [(&UPSTREAM, &SPLIT_2), (&SPLIT_2, &UPSTREAM)] {
            cases.push((
                format!("migration: {} to {} | {}", from.name, to.name, path.name),
                Box::new(move || real_migrate(from, to, path)),
            ));
        }
    }
    println!(
        "| topology | apply path | guards | webhook endpoints zero for | stale webhook pods after CRDs changed | controller versions at once | failed admission requests | failed conversion requests | failed by cause | probes refused by a stopped pod | CA windows | upgrade time |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for pair in cases.chunks(2) {
        let rows: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = pair
                .iter()
                .map(|(name, run)| (name, s.spawn(run)))
                .collect();
            handles
                .into_iter()
                .map(|(name, h)| {
                    let real = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                    let o = &real.run.observation;
                    let [zero, stale, versions, mut time] = cells(o);
                    if let Outcome::Refused(_) = real.run.outcome {
                        time = "refused by a guard, nothing moved".into();
                    } else if real.shot.as_ref().is_some_and(|s| !s.first.is_empty()) {
                        time = format!("{time} (first apply refused for the controller)");
                    }
                    let guards = if real.bound_policies().is_empty() { "off" } else { "on" };
                    let causes: Vec<String> = o
                        .failed_by_cause
                        .iter()
                        .map(|(cause, n)| format!("{cause} {n}"))
                        .collect();
                    let windows: Vec<String> = o
                        .ca_windows
                        .iter()
                        .map(|(_, ms)| ms.map_or("not back".into(), |ms| format!("{ms} ms")))
                        .collect();
                    format!(
                        "| {name} | {guards} | {zero} | {stale} | {versions} | {} of {} | {} of {} | {} | {} of {} | {} | {time} |",
                        o.failed_admission,
                        o.requests,
                        o.failed_conversion,
                        o.requests,
                        if causes.is_empty() { "none".into() } else { causes.join(", ") },
                        o.probes_refused_as_a_pod_stops,
                        o.probes,
                        if windows.is_empty() { "none".into() } else { windows.join(", ") },
                    )
                })
                .collect()
        });
        for row in rows {
            println!("{row}");
        }
    }
}

/// The CA windows at the release's scale (issue 41): upstream's defaults,
/// the split, and the split whose path applies the CRDs (what-if),
/// upgraded from ASO 2.20.0 to the next release on the kubectl path, one
/// at a time, with every CRD of the release installed
/// (`bench/rollout real-ca` sets `ASOGEN_ASO_CRD_GROUPS=all`): the new
/// manager rewrites each CRD, and cert-manager's cainjector puts each
/// bundle back. Per run: how many CRDs lost their bundle, the windows'
/// median, 90th percentile and longest, how long from the first CRD seen
/// without its bundle to the last one back, and ResourceGroup's own window
/// (the kind the users' requests convert) with the x509 failures.
fn real_ca() {
    assert_eq!(
        std::env::var("ASOGEN_ASO_CRD_GROUPS").as_deref(),
        Ok("all"),
        "bench/rollout real-ca sets ASOGEN_ASO_CRD_GROUPS=all"
    );
    println!(
        "| topology | CRDs installed | CRDs without their bundle | window median | 90th percentile | longest | not back | first missing to last back | ResourceGroup's window | x509 failures (of requests) | upgrade time |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let topologies = [&UPSTREAM, &SPLIT_2, &SPLIT_CRDS_BY_THE_PATH];
    for topology in topologies {
        let real = if topology.name == SPLIT_CRDS_BY_THE_PATH.name {
            real_upgrade_with_crds_by_the_path(topology, &paths::KUBECTL)
        } else {
            real_upgrade(topology, &paths::KUBECTL, REAL_STEP_LIMIT)
        };
        let (start, end) = (real.run.start, real.end);
        let mut missing: std::collections::BTreeMap<&str, i64> = Default::default();
        let mut windows: Vec<(String, i64, i64)> = Vec::new();
        for e in &real.run.timeline.events {
            match e {
                timeline::Event::CaMissing { t, crd } if (start..=end).contains(t) => {
                    missing.insert(crd, *t);
                }
                timeline::Event::CaWindow { t, crd, ms }
                    if (start..=end).contains(t) && missing.remove(crd.as_str()).is_some() =>
                {
                    windows.push((crd.clone(), t - ms, *ms));
                }
                _ => {}
            }
        }
        let mut ms: Vec<i64> = windows.iter().map(|w| w.2).collect();
        ms.sort();
        let at = |q: f64| {
            ms.get(((ms.len() as f64 - 1.0) * q).round() as usize)
                .map_or("-".to_string(), |v| format!("{v} ms"))
        };
        let span = match (
            windows.iter().map(|w| w.1).min(),
            windows.iter().map(|w| w.1 + w.2).max(),
        ) {
            (Some(first), Some(last)) => seconds(last - first),
            _ => "-".into(),
        };
        let resource_group = windows
            .iter()
            .find(|w| w.0.starts_with("resourcegroups."))
            .map_or("none".to_string(), |w| format!("{} ms", w.2));
        let o = &real.run.observation;
        let installed = real
            .server()
            .kubectl_ok(
                &[
                    "get",
                    "crd",
                    "-l",
                    "app.kubernetes.io/name=azure-service-operator",
                    "-o",
                    "name",
                ],
                "",
            )
            .lines()
            .count();
        let [_, _, _, time] = cells(o);
        println!(
            "| {} | {installed} | {} | {} | {} | {} | {} | {span} | {resource_group} | {} of {} | {time} |",
            topology.name,
            windows.len() + missing.len(),
            at(0.5),
            at(0.9),
            at(1.0),
            missing.len(),
            o.failed_for("ca-bundle"),
            o.requests,
        );
    }
}

fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// An upgrade row's cells after topology and path.
fn cells(o: &Observation) -> [String; 4] {
    [
        seconds(o.zero_endpoints_ms),
        if o.crd_epoch {
            format!("{} ({})", o.stale_pods, seconds(o.stale_ms))
        } else {
            "no CRD epoch".to_string()
        },
        format!(
            "{} (Lease holders: {})",
            o.controller_versions, o.leader_versions
        ),
        match o.upgrade_ms {
            Some(ms) => seconds(ms),
            None if o.startup_budget_spent => {
                "never completes (stuck; startup budget spent)".into()
            }
            None => "never completes (stuck)".into(),
        },
    ]
}
