//! One upgrade on the live control plane: a topology as asogen renders it,
//! installed at the previous release's image tag through an apply path,
//! then upgraded through the same path to the catalog's tag, watched by
//! the node agent.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::Value;

use crate::cluster::{Agent, TIMING, control_plane};
use crate::common::apiserver::install_crds;
use crate::common::{asogen, text};
use crate::paths::{ApplyPath, Outcome};
use crate::timeline::{Observation, Timeline};

/// The release before the catalog's: what the upgrade starts from. Only
/// the image tag differs; the harness reads versions off the tags.
pub const PREVIOUS_TAG: &str = "v2.19.0";

/// How long an install or an upgrade step may take before the path gives
/// up: far above what a rollout takes here (seconds), far below the
/// 120 s startup budget after which a stuck pod is restarted.
pub const STEP_LIMIT: Duration = Duration::from_secs(45);

/// A deployment shape asogen renders, as `asogen template` arguments.
#[derive(Debug, Clone, Copy)]
pub struct Topology {
    /// Its name in the table.
    pub name: &'static str,
    /// Arguments to `asogen template` (run in the repository root).
    pub args: &'static [&'static str],
    /// False to take `--enable-leader-election` out of the rendered
    /// Deployment: not a shape asogen offers (2.20.0 always passes it), the
    /// what-if of docs/split-topology.md F12.
    pub leader_election: bool,
}

/// Upstream 2.20.0's defaults: 2 replicas, Recreate, leader election.
pub const UPSTREAM: Topology = Topology {
    name: "upstream 2.20.0 (2 replicas, Recreate)",
    args: &[],
    leader_election: true,
};

/// The single-replica-rolling profile: 1 replica, RollingUpdate
/// (maxSurge 1, maxUnavailable 0), leader election as upstream.
pub const SINGLE_ROLLING: Topology = Topology {
    name: "single-replica rolling",
    args: &["-f", "values/profiles/single-replica-rolling.yaml"],
    leader_election: true,
};

/// The same without leader election (what-if).
pub const SINGLE_ROLLING_WITHOUT_ELECTION: Topology = Topology {
    name: "single-replica rolling, no leader election (what-if)",
    args: &["-f", "values/profiles/single-replica-rolling.yaml"],
    leader_election: false,
};

/// The topologies available today.
pub const TOPOLOGIES: [Topology; 3] = [UPSTREAM, SINGLE_ROLLING, SINGLE_ROLLING_WITHOUT_ELECTION];

const ELECTION_FLAG: &str = "--enable-leader-election";

impl Topology {
    /// The namespaced objects of the install into `namespace`, at image tag
    /// `tag` (the catalog's when None), with `extra` arguments to `asogen
    /// template`. Cluster-scoped objects (webhook
    /// configurations, ClusterRoles, admission policies) play no part in a
    /// rollout and would be shared by the scenarios, so they are left out.
    pub fn render(&self, namespace: &str, tag: Option<&str>, extra: &[&str]) -> Vec<Value> {
        let mut args = vec!["template", "-n", namespace];
        args.extend(self.args);
        args.extend(extra);
        let set = tag.map(|t| format!("image.tag={t}"));
        if let Some(set) = &set {
            args.extend(["--set", set]);
        }
        let out = asogen(&args);
        assert!(
            out.status.success(),
            "asogen {args:?}: {}",
            text(&out.stderr)
        );
        let mut objects: Vec<Value> = serde_yaml::Deserializer::from_str(&text(&out.stdout))
            .map(|d| Value::deserialize(d).expect("asogen prints YAML"))
            .filter(|o| o["metadata"]["namespace"] == namespace)
            .collect();
        if !self.leader_election {
            let mut removed = 0;
            for o in objects.iter_mut().filter(|o| o["kind"] == "Deployment") {
                for c in o["spec"]["template"]["spec"]["containers"]
                    .as_array_mut()
                    .unwrap()
                {
                    if let Some(args) = c["args"].as_array_mut() {
                        let before = args.len();
                        args.retain(|a| a != ELECTION_FLAG);
                        removed += before - args.len();
                    }
                }
            }
            assert!(removed > 0, "{}: no {ELECTION_FLAG} to remove", self.name);
        }
        objects
    }
}

/// The image tag of the manager container of the rendered Deployments.
pub fn version_of(objects: &[Value]) -> String {
    let images: Vec<&str> = objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .flat_map(|o| {
            o["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
        })
        .filter(|c| c["name"] == "manager")
        .map(|c| c["image"].as_str().unwrap())
        .collect();
    assert!(!images.is_empty(), "no manager container rendered");
    let tag = images[0].rsplit_once(':').expect("a tagged image").1;
    assert!(images.iter().all(|i| i.ends_with(&format!(":{tag}"))));
    tag.to_string()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// What a scenario gives the test.
pub struct Run {
    /// When the upgrade's first write went out (Unix ms).
    pub start: i64,
    /// The invariants' figures.
    pub observation: Observation,
    /// How the path's upgrade steps ended.
    pub outcome: Outcome,
    /// The whole timeline.
    pub timeline: Timeline,
    /// Where the events are, for messages (kept while the test runs).
    pub agent: Agent,
}

impl Run {
    /// A summary for assertion messages.
    pub fn describe(&self) -> String {
        let outcome = match &self.outcome {
            Outcome::Done => "done",
            Outcome::GaveUp(why) => why,
        };
        format!(
            "{:?}\npath outcome: {outcome}\nagent errors: {:?}\nevents: {}",
            self.observation,
            self.timeline.errors(),
            self.agent.events().display()
        )
    }
}

/// Installs `topology` at the previous tag through `path`, upgrades it to
/// the catalog's tag through `path`, and observes until the rollout ends or
/// `limit` passes after the upgrade's last write.
pub fn upgrade(topology: &Topology, path: &ApplyPath, limit: Duration) -> Run {
    change(topology, path, Some(PREVIOUS_TAG), &[], limit)
}

/// Installs `topology` at image tag `from` (the catalog's when None), then
/// applies it at the catalog's tag with `extra` arguments to `asogen
/// template`, through `path`, and observes as [`upgrade`] does.
pub fn change(
    topology: &Topology,
    path: &ApplyPath,
    from: Option<&str>,
    extra: &[&str],
    limit: Duration,
) -> Run {
    let server = control_plane();
    install_crds(server);
    let namespace = server.fresh_namespace(&format!("rollout-{}", path.name));
    // no serviceaccount-controller runs: pods need their ServiceAccount,
    // which the install brings, and nothing else
    let previous = topology.render(&namespace, from, &[]);
    let current = topology.render(&namespace, None, extra);
    let (before, target) = (version_of(&previous), version_of(&current));
    if from.is_some() {
        assert_ne!(before, target, "the catalog's tag is the previous one");
    }
    let mut agent = Agent::start(server, &namespace, &TIMING);
    let installed = path.install(
        server, &mut agent, &namespace, &previous, &before, STEP_LIMIT,
    );
    assert!(
        matches!(installed, Outcome::Done),
        "{} via {}: the install did not roll out: {installed:?}; events: {}",
        topology.name,
        path.name,
        agent.events().display()
    );
    let settled = agent.wait_for(STEP_LIMIT, |t| t.settled(&before));
    assert!(
        settled.is_some(),
        "{} via {}: the webhook Service never routed to every Ready pod; events: {}",
        topology.name,
        path.name,
        agent.events().display()
    );
    let start = now_ms();
    let outcome = path.upgrade(server, &mut agent, &namespace, &current, &target, limit);
    // the path's last wait may end before the agent's last sample
    let timeline = agent
        .wait_for(Duration::from_secs(5), |t| t.rolled_out(&target, None))
        .unwrap_or_else(|| agent.timeline());
    Run {
        start,
        observation: timeline.observe(start, now_ms(), &target),
        outcome,
        timeline,
        agent,
    }
}
