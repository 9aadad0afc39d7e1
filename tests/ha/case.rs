//! One case of I4 (docs/split-topology.md section 2): an install as asogen
//! renders it, on three nodes of its own that the real kube-scheduler
//! places its pods on, then one disruption, watched by the node agent
//! until the install settled again; and what the timeline shows of it.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::{Agent, Plane, TIMING, control_plane_of};
use crate::common::apiserver::install_crds;
use crate::disruption::{Drained, drain, lose};
use crate::paths::KUBECTL;
use crate::scenario::{STEP_LIMIT, Topology, now_ms, settle, webhook_deployments};
use crate::timeline::{Event, PodState, Timeline};

/// The label of a case's nodes, which its pods select through the
/// chart's `nodeSelector` value: each case has a node pool of its own, so
/// cases run at once without sharing nodes.
const POOL_LABEL: &str = "node-pool";

/// The control plane of the HA tests: the rollout harness's controllers,
/// the node lifecycle controller, which taints a cordoned Node (so a
/// topology spread with `nodeTaintsPolicy: Honor` stops counting it) and a
/// NotReady one, and the real kube-scheduler, which places the pods.
pub const SCHEDULED: Plane = Plane {
    more_controllers: &["node-lifecycle-controller"],
    scheduler: true,
};

/// How many nodes a case has.
pub const NODES: usize = 3;

/// What happens to the install once it settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disruption {
    /// `kubectl drain` of every node that holds a webhook pod, at once:
    /// the budgets must refuse some evictions when a role has all its
    /// pods there, and let them through once replacements are ready.
    Drain,
    /// The loss of the node with the most webhook pods (then the most
    /// controller pods, then the first by name).
    Loss,
}

/// One case: a topology (its `asogen` values arguments) and a disruption.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The topology.
    pub topology: &'static Topology,
    /// What happens to it.
    pub disruption: Disruption,
}

/// Where the pods of each role were when the install settled.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// The nodes of the webhook Service's ready endpoints.
    pub webhooks: BTreeSet<String>,
    /// How many webhook endpoints there were.
    pub webhook_pods: usize,
    /// The nodes of the pods that run the controllers (ASO's watchers).
    pub controller: BTreeSet<String>,
    /// How many such pods there were.
    pub controller_pods: usize,
}

/// What the timeline shows of the window from the disruption's first
/// write until the install settled again.
#[derive(Debug, Clone, Default)]
pub struct Availability {
    /// How long the webhook Service had no ready endpoint.
    pub zero_endpoints_ms: i64,
    /// The fewest webhook endpoints at one moment.
    pub fewest_endpoints: usize,
    /// The fewest Ready controller pods not terminating at one moment.
    pub fewest_controllers: usize,
    /// Controller pods that ran, Ready, through the whole window.
    pub untouched_controllers: usize,
    /// Whether the install settled again within the wait.
    pub recovered: bool,
}

/// A case as it ran.
pub struct HaRun {
    /// The case.
    pub case: Case,
    /// Where the scheduler put the pods.
    pub placement: Placement,
    /// The nodes drained or lost.
    pub targets: Vec<String>,
    /// For a drain, what `kubectl drain` did.
    pub drained: Option<Drained>,
    /// The pods a node loss took.
    pub lost: Vec<String>,
    /// I4's figures.
    pub availability: Availability,
    /// Everything the agent saw.
    pub timeline: Timeline,
    /// The agent (its events file is kept when a test fails).
    pub agent: Agent,
}

impl HaRun {
    /// A summary for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "{} ({:?} of {:?}):\n{:?}\n{:?}\ndrained: {:?}\nlost: {:?}\nagent errors: {:?}\nevents: {}",
            self.case.topology.name,
            self.case.disruption,
            self.targets,
            self.placement,
            self.availability,
            self.drained,
            self.lost,
            self.timeline.errors(),
            self.agent.events().display()
        )
    }
}

/// Runs `case` on its own node pool.
pub fn run(case: Case) -> HaRun {
    let server = control_plane_of(&SCHEDULED);
    install_crds(server);
    let namespace = server.fresh_namespace(&format!("ha-{:?}", case.disruption));
    let flags = [
        "--bind=false".to_string(),
        format!("--nodes={NODES}"),
        format!("--node-prefix={namespace}-node-"),
        format!("--node-label={POOL_LABEL}={namespace}"),
    ];
    let mut agent = Agent::start_with(server, &namespace, &TIMING, &flags);
    let pool = format!("nodeSelector.{POOL_LABEL}={namespace}");
    let args = case
        .topology
        .args(&namespace, None, &["--set-string", &pool]);
    let version = settle(
        server,
        &mut agent,
        &namespace,
        case.topology,
        &args,
        &KUBECTL,
    );
    let routed = webhook_deployments(&case.topology.render(&args, &namespace));
    let placement = placement(&agent.timeline());
    let start = now_ms();
    let (targets, drained, lost) = match case.disruption {
        Disruption::Drain => {
            let targets: Vec<String> = placement.webhooks.iter().cloned().collect();
            let drained = drain(server, &targets);
            (targets, Some(drained), vec![])
        }
        Disruption::Loss => {
            let node = busiest(&agent.timeline());
            let lost = lose(server, &namespace, &node);
            (vec![node], None, lost)
        }
    };
    // settled again, with nothing left on the nodes it disrupted (a
    // sample from before the disruption would pass `settled` alone)
    let recovered = agent
        .wait_for(STEP_LIMIT, |t| {
            t.settled(&version, &routed)
                && t.pods_now()
                    .iter()
                    .all(|p| !targets.contains(&p.node) && !p.node.is_empty())
        })
        .is_some();
    let timeline = agent.timeline();
    let mut availability = availability(&timeline, start, now_ms());
    availability.recovered = recovered;
    HaRun {
        case,
        placement,
        targets,
        drained,
        lost,
        availability,
        timeline,
        agent,
    }
}

/// The pods of the last sample that are not terminating.
fn live(timeline: &Timeline) -> Vec<PodState> {
    timeline
        .pods_now()
        .iter()
        .filter(|p| !p.terminating)
        .cloned()
        .collect()
}

/// The endpoints of the last sample.
fn endpoints_now(timeline: &Timeline) -> BTreeSet<String> {
    timeline
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Sample { endpoints, .. } => {
                Some(endpoints.iter().map(|e| e.pod.clone()).collect())
            }
            _ => None,
        })
        .unwrap_or_default()
}

fn placement(timeline: &Timeline) -> Placement {
    let pods = live(timeline);
    let endpoints = endpoints_now(timeline);
    let webhooks: Vec<&PodState> = pods.iter().filter(|p| endpoints.contains(&p.pod)).collect();
    let controller: Vec<&PodState> = pods.iter().filter(|p| p.watchers).collect();
    Placement {
        webhooks: webhooks.iter().map(|p| p.node.clone()).collect(),
        webhook_pods: webhooks.len(),
        controller: controller.iter().map(|p| p.node.clone()).collect(),
        controller_pods: controller.len(),
    }
}

/// The node with the most webhook endpoints, then the most controller
/// pods, then the first by name: the one whose loss hurts most.
fn busiest(timeline: &Timeline) -> String {
    let endpoints = endpoints_now(timeline);
    let mut load: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for p in live(timeline) {
        let entry = load.entry(p.node.clone()).or_default();
        entry.0 += usize::from(endpoints.contains(&p.pod));
        entry.1 += usize::from(p.watchers);
    }
    let most = load.values().max().copied().unwrap_or_default();
    load.into_iter()
        .find(|(_, l)| *l == most)
        .map(|(node, _)| node)
        .expect("the install has pods")
}

/// I4's figures over [start, end] (Unix ms): each sample's state lasts
/// until the next one.
fn availability(timeline: &Timeline, start: i64, end: i64) -> Availability {
    let samples: Vec<(i64, usize, &[PodState])> = timeline
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Sample {
                t, endpoints, pods, ..
            } => Some((*t, endpoints.len(), pods.as_slice())),
            _ => None,
        })
        .collect();
    let mut a = Availability {
        fewest_endpoints: usize::MAX,
        fewest_controllers: usize::MAX,
        ..Availability::default()
    };
    let mut untouched: Option<BTreeSet<String>> = None;
    for (i, (t, endpoints, pods)) in samples.iter().enumerate() {
        let next = samples.get(i + 1).map_or(end, |s| s.0);
        // the state in force at `start` is the last sample before it
        if next <= start || *t > end {
            continue;
        }
        let span = next.min(end) - (*t).max(start);
        if *endpoints == 0 {
            a.zero_endpoints_ms += span.max(0);
        }
        a.fewest_endpoints = a.fewest_endpoints.min(*endpoints);
        let running: BTreeSet<String> = pods
            .iter()
            .filter(|p| p.watchers && p.ready && !p.terminating)
            .map(|p| p.pod.clone())
            .collect();
        a.fewest_controllers = a.fewest_controllers.min(running.len());
        untouched = Some(match untouched {
            None => running,
            Some(before) => before.intersection(&running).cloned().collect(),
        });
    }
    a.untouched_controllers = untouched.map_or(0, |u| u.len());
    if a.fewest_endpoints == usize::MAX {
        a.fewest_endpoints = 0;
        a.fewest_controllers = 0;
    }
    a
}

/// Runs `cases` at once, each on its own nodes; in their order.
pub fn run_all(cases: &[Case]) -> Vec<HaRun> {
    std::thread::scope(|s| {
        let runs: Vec<_> = cases
            .iter()
            .map(|case| s.spawn(move || run(*case)))
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Negative: the split with one webhook replica
/// (`split.webhooks.replicaCount: 1`).
pub const SPLIT_ONE_WEBHOOK: Topology = Topology {
    name: "split, 1 webhook replica (negative)",
    args: &[
        "-f",
        "values/profiles/split.yaml",
        "--set",
        "split.webhooks.replicaCount=1",
    ],
    shape: "split",
    tweak: None,
};

/// Negative: the split whose webhook spread lets both pods share a node
/// and whose affinity draws them together (tests/fixtures/ha/spread-off.yaml),
/// set through the values the chart offers.
pub const SPLIT_SPREAD_OFF: Topology = Topology {
    name: "split, 2 webhook replicas, spread relaxed, drawn to one node (negative)",
    args: &[
        "-f",
        "values/profiles/split.yaml",
        "-f",
        "tests/fixtures/ha/spread-off.yaml",
    ],
    shape: "split",
    tweak: None,
};

/// Negative: the split whose webhook spread counts tainted nodes
/// (`nodeTaintsPolicy: Ignore`, tests/fixtures/ha/spread-counts-cordoned.yaml),
/// where asogen's spread honours taints.
pub const SPLIT_SPREAD_COUNTS_CORDONED: Topology = Topology {
    name: "split, 2 webhook replicas, spread counting cordoned nodes (negative)",
    args: &[
        "-f",
        "values/profiles/split.yaml",
        "-f",
        "tests/fixtures/ha/spread-counts-cordoned.yaml",
    ],
    shape: "split",
    tweak: None,
};

/// A drain and a node loss of `topology`, two installs at once.
pub fn drain_and_loss(topology: &'static Topology) -> (HaRun, HaRun) {
    let mut runs = run_all(&[
        Case {
            topology,
            disruption: Disruption::Drain,
        },
        Case {
            topology,
            disruption: Disruption::Loss,
        },
    ]);
    let loss = runs.pop().unwrap();
    (runs.pop().unwrap(), loss)
}
