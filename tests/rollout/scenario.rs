//! One upgrade on the live control plane: a topology as asogen renders it,
//! installed at the previous release's image tag through an apply path,
//! then upgraded through the same path to the catalog's tag, watched by
//! the node agent.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::Value;

use crate::cluster::{Agent, TIMING, control_plane};
use crate::common::apiserver::{ApiServer, install_crds};
use crate::common::{asogen, text};
use crate::paths::{ApplyPath, Outcome, Planned, Sequence, Tweak, generations};
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
    /// Values arguments (run in the repository root).
    pub args: &'static [&'static str],
    /// The topology `asogen upgrade-plan` must see in them.
    pub shape: &'static str,
    /// What the harness changes in the rendered objects: a shape asogen
    /// does not render (a what-if or a negative test), or None.
    pub tweak: Option<Tweak>,
}

/// Upstream 2.20.0's defaults: 2 replicas, Recreate, leader election.
pub const UPSTREAM: Topology = Topology {
    name: "upstream 2.20.0 (2 replicas, Recreate)",
    args: &[],
    shape: "single",
    tweak: None,
};

/// The single-replica-rolling profile: 1 replica, RollingUpdate
/// (maxSurge 1, maxUnavailable 0), leader election as upstream.
pub const SINGLE_ROLLING: Topology = Topology {
    name: "single-replica rolling",
    args: &["-f", "values/profiles/single-replica-rolling.yaml"],
    shape: "single",
    tweak: None,
};

/// The same without leader election (what-if: 2.20.0 always passes it).
pub const SINGLE_ROLLING_WITHOUT_ELECTION: Topology = Topology {
    name: "single-replica rolling, no leader election (what-if)",
    args: &["-f", "values/profiles/single-replica-rolling.yaml"],
    shape: "single",
    tweak: Some(without_leader_election),
};

/// The split profile with 2 webhook replicas (and 2 controller replicas).
pub const SPLIT_2: Topology = Topology {
    name: "split, 2 webhook replicas",
    args: &[
        "-f",
        "values/profiles/split.yaml",
        "--set",
        "split.webhooks.replicaCount=2",
    ],
    shape: "split",
    tweak: None,
};

/// The split profile with 3 webhook replicas.
pub const SPLIT_3: Topology = Topology {
    name: "split, 3 webhook replicas",
    args: &[
        "-f",
        "values/profiles/split.yaml",
        "--set",
        "split.webhooks.replicaCount=3",
    ],
    shape: "split",
    tweak: None,
};

/// Negative: the split whose webhook pods apply CRDs (`--crd-management`
/// left out, so `auto`), as `split-webhooks-never-apply-crds` forbids.
pub const SPLIT_WEBHOOKS_APPLY_CRDS: Topology = Topology {
    name: "split, webhook pods apply CRDs (negative)",
    tweak: Some(webhooks_apply_crds),
    ..SPLIT_2
};

/// Negative: the split whose webhook Service selects the controller pods
/// too (a label both roles carry), as `split-selectors-disjoint` forbids.
pub const SPLIT_SHARED_SELECTOR: Topology = Topology {
    name: "split, webhook Service selects controller pods too (negative)",
    tweak: Some(shared_selector),
    ..SPLIT_2
};

/// Negative: the split whose webhooks Deployment has one replica and
/// rolls it without a surge (`maxUnavailable: 1`), as
/// `split-webhooks-never-unavailable` forbids (the real mode's: its
/// failed requests show it; tests/real_manager.rs).
#[allow(dead_code)]
pub const SPLIT_WEBHOOKS_WITHOUT_SURGE: Topology = Topology {
    name: "split, 1 webhook replica rolled without surge (negative)",
    tweak: Some(webhooks_without_surge),
    ..SPLIT_2
};

/// Negative: the split whose controller Deployment rolls (RollingUpdate,
/// maxSurge 1, maxUnavailable 0) instead of Recreate, as
/// `split-controller-never-rolls` forbids (the real mode's).
#[allow(dead_code)]
pub const SPLIT_CONTROLLER_ROLLS: Topology = Topology {
    name: "split, controller rolled instead of recreated (negative)",
    tweak: Some(controller_rolls),
    ..SPLIT_2
};

/// Negative: the split whose webhook pods run leader election, as
/// `split-webhooks-no-leader-election` forbids (the real mode's).
#[allow(dead_code)]
pub const SPLIT_WEBHOOKS_ELECT: Topology = Topology {
    name: "split, webhook pods with leader election (negative)",
    tweak: Some(webhooks_elect),
    ..SPLIT_2
};

/// The forbidden shape the rules exist for (`ha-requires-recreate`):
/// upstream's 2 replicas with leader election, rolled (RollingUpdate,
/// maxSurge 1, maxUnavailable 1) instead of recreated. asogen refuses to
/// render it; the real mode renders it past the rules to show what it does
/// (tests/real_manager.rs).
#[allow(dead_code)]
pub const FORBIDDEN_ROLLING: Topology = Topology {
    name: "2 replicas rolled (forbidden: ha-requires-recreate)",
    args: &[],
    shape: "single",
    tweak: Some(two_replicas_roll),
};

/// The forbidden shape without leader election (what-if: 2.20.0 always
/// passes it): no Lease decides which pod writes the CRDs, so the new pod
/// writes them as it starts, beside the old pods.
#[allow(dead_code)]
pub const FORBIDDEN_ROLLING_WITHOUT_ELECTION: Topology = Topology {
    name: "2 replicas rolled, no leader election (forbidden, what-if)",
    args: &[],
    shape: "single",
    tweak: Some(two_replicas_roll_without_election),
};

/// Negative: the split whose webhook pods have no preStop delay, so a
/// webhook pod stops serving while the proxy may still route to it (the
/// real mode's).
#[allow(dead_code)]
pub const SPLIT_WEBHOOKS_WITHOUT_PRESTOP: Topology = Topology {
    name: "split, webhook pods without preStop (negative)",
    tweak: Some(webhooks_without_prestop),
    ..SPLIT_2
};

/// What-if: the split whose controller leaves the CRDs alone
/// (`--crd-management=none`), the apply path applying the next release's
/// CRDs with server-side apply instead, just before the controller's step
/// (`real::real_upgrade_with_crds_by_the_path`): cert-manager's cainjector
/// owns the CA bundle field then, and the apply keeps it.
#[allow(dead_code)]
pub const SPLIT_CRDS_BY_THE_PATH: Topology = Topology {
    name: "split, CRDs applied server-side by the path, controller --crd-management=none (what-if)",
    tweak: Some(controller_leaves_crds_alone),
    ..SPLIT_2
};

#[allow(dead_code)] // SPLIT_CRDS_BY_THE_PATH's
fn controller_leaves_crds_alone(objects: &mut [Value]) {
    // a step without the controller's Deployment is left as it is
    for c in managers(objects, Some("controller-manager")) {
        let args = c["args"].as_array_mut().expect("the manager's args");
        args.retain(|a| {
            a.as_str()
                .is_none_or(|a| !a.starts_with("--crd-management"))
        });
        args.push(Value::from("--crd-management=none"));
    }
}

/// The webhook pods' `control-plane` label in the split.
const WEBHOOKS_ROLE: &str = "webhooks";

const ELECTION_FLAG: &str = "--enable-leader-election";

/// The manager containers of the Deployments among `objects` whose pod
/// template has `role` as its `control-plane` label (every one when None).
pub fn managers<'a>(
    objects: &'a mut [Value],
    role: Option<&'a str>,
) -> impl Iterator<Item = &'a mut Value> + 'a {
    objects
        .iter_mut()
        .filter(|o| o["kind"] == "Deployment")
        .filter(move |o| {
            role.is_none_or(|r| o["spec"]["template"]["metadata"]["labels"]["control-plane"] == r)
        })
        .flat_map(|o| {
            o["spec"]["template"]["spec"]["containers"]
                .as_array_mut()
                .unwrap()
        })
        .filter(|c| c["name"] == "manager")
}

/// Removes `flag` (exactly, or as `flag=...`) from the args of the manager
/// containers `managers` yields; how many it removed.
pub fn remove_flag<'a>(containers: impl Iterator<Item = &'a mut Value>, flag: &str) -> usize {
    let mut removed = 0;
    for c in containers {
        if let Some(args) = c["args"].as_array_mut() {
            let before = args.len();
            args.retain(|a| {
                a.as_str()
                    .is_none_or(|a| a != flag && !a.starts_with(&format!("{flag}=")))
            });
            removed += before - args.len();
        }
    }
    removed
}

fn without_leader_election(objects: &mut [Value]) {
    // a step without a Deployment (some plans have them) has no flag
    remove_flag(managers(objects, None), ELECTION_FLAG);
}

fn webhooks_apply_crds(objects: &mut [Value]) {
    remove_flag(managers(objects, Some(WEBHOOKS_ROLE)), "--crd-management");
}

#[allow(dead_code)] // SPLIT_WEBHOOKS_WITHOUT_SURGE's
fn webhooks_without_surge(objects: &mut [Value]) {
    let webhooks = objects.iter_mut().filter(|o| {
        o["kind"] == "Deployment"
            && o["spec"]["template"]["metadata"]["labels"]["control-plane"] == WEBHOOKS_ROLE
    });
    for o in webhooks {
        o["spec"]["replicas"] = serde_json::json!(1);
        o["spec"]["strategy"] = serde_json::json!({
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}
        });
    }
}

#[allow(dead_code)] // SPLIT_CONTROLLER_ROLLS's
fn controller_rolls(objects: &mut [Value]) {
    let controllers = objects.iter_mut().filter(|o| {
        o["kind"] == "Deployment"
            && o["spec"]["template"]["metadata"]["labels"]["control-plane"] == "controller-manager"
    });
    for o in controllers {
        o["spec"]["strategy"] = serde_json::json!({
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}
        });
    }
}

#[allow(dead_code)] // FORBIDDEN_ROLLING's
fn two_replicas_roll(objects: &mut [Value]) {
    for o in objects.iter_mut().filter(|o| o["kind"] == "Deployment") {
        o["spec"]["strategy"] = serde_json::json!({
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}
        });
    }
}

#[allow(dead_code)] // FORBIDDEN_ROLLING_WITHOUT_ELECTION's
fn two_replicas_roll_without_election(objects: &mut [Value]) {
    two_replicas_roll(objects);
    without_leader_election(objects);
}

#[allow(dead_code)] // SPLIT_WEBHOOKS_WITHOUT_PRESTOP's
fn webhooks_without_prestop(objects: &mut [Value]) {
    for c in managers(objects, Some(WEBHOOKS_ROLE)) {
        if let Some(container) = c.as_object_mut() {
            container.remove("lifecycle");
        }
    }
}

#[allow(dead_code)] // SPLIT_WEBHOOKS_ELECT's
fn webhooks_elect(objects: &mut [Value]) {
    for c in managers(objects, Some(WEBHOOKS_ROLE)) {
        if let Some(args) = c["args"].as_array_mut() {
            args.push(ELECTION_FLAG.into());
        }
    }
}

/// A label every operator pod carries, of either role.
const SHARED_LABEL: (&str, &str) = ("app.kubernetes.io/name", "azure-service-operator");

fn shared_selector(objects: &mut [Value]) {
    for o in objects.iter_mut() {
        if o["kind"] == "Service" && o["metadata"]["name"] == WEBHOOK_SERVICE {
            o["spec"]["selector"] = serde_json::json!({SHARED_LABEL.0: SHARED_LABEL.1});
        }
    }
}

impl Topology {
    /// Its arguments for `asogen upgrade-plan` into `namespace`, at image
    /// tag `tag` (the catalog's when None), with `extra` arguments.
    pub fn args(&self, namespace: &str, tag: Option<&str>, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = vec!["-n".into(), namespace.into()];
        args.extend(self.args.iter().map(|a| a.to_string()));
        args.extend(extra.iter().map(|a| a.to_string()));
        if let Some(tag) = tag {
            args.extend(["--set".into(), format!("image.tag={tag}")]);
        }
        args
    }

    /// The whole install `asogen template` renders for `args`, namespaced
    /// objects only, tweaked.
    pub fn render(&self, args: &[String], namespace: &str) -> Vec<Value> {
        let mut objects: Vec<Value> = template(args)
            .into_iter()
            .filter(|o| o["metadata"]["namespace"] == namespace)
            .collect();
        if let Some(tweak) = self.tweak {
            let rendered = objects.clone();
            tweak(&mut objects);
            assert_ne!(
                objects, rendered,
                "{}: the tweak changes nothing",
                self.name
            );
        }
        objects
    }
}

/// Every object `asogen template ARGS` renders.
pub fn template(args: &[String]) -> Vec<Value> {
    let mut all = vec!["template".to_string()];
    all.extend(args.iter().cloned());
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let out = asogen(&all);
    assert!(
        out.status.success(),
        "asogen {all:?}: {}",
        text(&out.stderr)
    );
    serde_yaml::Deserializer::from_str(&text(&out.stdout))
        .map(|d| Value::deserialize(d).expect("asogen prints YAML"))
        .collect()
}

/// The Deployments whose pods the webhook Service selects: its selector's
/// labels are all on their pod template.
pub fn webhook_deployments(objects: &[Value]) -> Vec<String> {
    let service = objects
        .iter()
        .find(|o| o["kind"] == "Service" && o["metadata"]["name"] == WEBHOOK_SERVICE)
        .expect("the install has the webhook Service");
    let selector = service["spec"]["selector"].as_object().unwrap();
    objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .filter(|o| {
            let labels = &o["spec"]["template"]["metadata"]["labels"];
            selector.iter().all(|(k, v)| &labels[k] == v)
        })
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// The webhook Service's name (upstream's, in the CRDs' conversion stanza).
pub const WEBHOOK_SERVICE: &str = "azureserviceoperator-webhook-service";

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

/// Now, in Unix milliseconds (the agent's clock).
pub fn now_ms() -> i64 {
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
    /// The run of a change that began at `start` with its writes done
    /// (`outcome`): the agent's timeline once `target` rolled out (or when
    /// `limit` passed), observed from `start` until now.
    pub fn after_rollout(
        server: &ApiServer,
        namespace: &str,
        mut agent: Agent,
        (start, target): (i64, &str),
        limit: Duration,
        outcome: Outcome,
    ) -> Run {
        let written = generations(server, namespace);
        let timeline = agent
            .wait_for(limit, |t| t.rolled_out_since(target, None, &written))
            .unwrap_or_else(|| agent.timeline());
        Run {
            start,
            observation: timeline.observe(start, now_ms(), target, &written),
            outcome,
            timeline,
            agent,
        }
    }

    /// A summary for assertion messages.
    pub fn describe(&self) -> String {
        let outcome = match &self.outcome {
            Outcome::Done => "done",
            Outcome::GaveUp(why) | Outcome::Refused(why) => why,
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
    change(
        topology,
        path,
        Some(PREVIOUS_TAG),
        &[],
        limit,
        Sequence::AsPlanned,
    )
}

/// The upgrade of `topology` through every path, the paths at once (each
/// in its own namespace, with its own node agent): the invariants are
/// about order, not speed, and the rollouts mostly wait.
pub fn on_every_path(topology: &Topology) -> Vec<(&'static ApplyPath, Run)> {
    std::thread::scope(|s| {
        let runs: Vec<_> = crate::paths::PATHS
            .iter()
            .map(|path| (path, s.spawn(move || upgrade(topology, path, STEP_LIMIT))))
            .collect();
        runs.into_iter()
            .map(|(path, run)| {
                let run = run
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (path, run)
            })
            .collect()
    })
}

/// [`upgrade`] with the plan's steps run last to first.
pub fn upgrade_reversed(topology: &Topology, path: &ApplyPath, limit: Duration) -> Run {
    change(
        topology,
        path,
        Some(PREVIOUS_TAG),
        &[],
        limit,
        Sequence::Reversed,
    )
}

/// Installs `topology` at image tag `from` (the catalog's when None), then
/// applies it at the catalog's tag with `extra` values arguments, each
/// through the plan `asogen upgrade-plan --via PATH` prints, and observes
/// as [`upgrade`] does; the upgrade's steps in `sequence`.
pub fn change(
    topology: &Topology,
    path: &ApplyPath,
    from: Option<&str>,
    extra: &[&str],
    limit: Duration,
    sequence: Sequence,
) -> Run {
    scenario(
        topology, topology, path, from, extra, limit, sequence, false,
    )
}

/// Installs `install` at the catalog's tag, then moves it to the topology
/// `to` at the same tag through `path`: with the migration plan
/// (`upgrade-plan --from`) when `with_migration_plan`, else with `to`'s
/// plain upgrade plan (a negative test).
pub fn migrate(
    install: &Topology,
    to: &Topology,
    path: &ApplyPath,
    with_migration_plan: bool,
) -> Run {
    scenario(
        install,
        to,
        path,
        None,
        &[],
        STEP_LIMIT,
        Sequence::AsPlanned,
        with_migration_plan,
    )
}

/// Installs `install`, then applies `to`'s values at the same tag in one
/// step: the last step of `to`'s own plan on `path` (with Helm, one `helm
/// upgrade` straight to the values), as a careless migration would.
pub fn migrate_in_one_pass(install: &Topology, to: &Topology, path: &ApplyPath) -> Run {
    scenario(
        install,
        to,
        path,
        None,
        &[],
        STEP_LIMIT,
        Sequence::LastOnly,
        false,
    )
}

/// Installs `topology` into `namespace` with its `args` (as
/// [`Topology::args`] makes them) through the plan `path` runs, and waits
/// until it settled: rolled out, and the webhook Service routing to every
/// Ready pod of the Deployments it selects. The version installed.
pub fn settle(
    server: &ApiServer,
    agent: &mut Agent,
    namespace: &str,
    topology: &Topology,
    args: &[String],
    path: &ApplyPath,
) -> String {
    settle_within(server, agent, namespace, topology, args, path, STEP_LIMIT)
}

/// [`settle`], each wait giving up after `limit` (the real mode's pods
/// start on real probe periods, several control planes at once).
pub fn settle_within(
    server: &ApiServer,
    agent: &mut Agent,
    namespace: &str,
    topology: &Topology,
    args: &[String],
    path: &ApplyPath,
    limit: Duration,
) -> String {
    let objects = topology.render(args, namespace);
    let version = version_of(&objects);
    let routed = webhook_deployments(&objects);
    let installing = Planned {
        args,
        tweak: topology.tweak,
        with_refresh: false,
        sequence: Sequence::AsPlanned,
        from: None,
        before_controller: None,
    };
    assert_eq!(
        installing.plan(path).topology,
        topology.shape,
        "{}",
        topology.name
    );
    let installed = path.run(server, agent, namespace, &installing, &version, limit, true);
    assert!(
        matches!(installed, Outcome::Done),
        "{} via {}: the install did not roll out: {installed:?}; events: {}",
        topology.name,
        path.name,
        agent.events().display()
    );
    let settled = agent.wait_for(limit, |t| t.settled(&version, &routed));
    assert!(
        settled.is_some(),
        "{} via {}: the webhook Service never routed to every Ready pod of {routed:?}; events: {}",
        topology.name,
        path.name,
        agent.events().display()
    );
    version
}

#[allow(clippy::too_many_arguments)]
fn scenario(
    install: &Topology,
    to: &Topology,
    path: &ApplyPath,
    from: Option<&str>,
    extra: &[&str],
    limit: Duration,
    sequence: Sequence,
    migration: bool,
) -> Run {
    let server = control_plane();
    install_crds(server);
    let namespace = server.fresh_namespace(&format!("rollout-{}", path.via));
    // no serviceaccount-controller runs: pods need their ServiceAccount,
    // which the install brings, and nothing else
    let previous_args = install.args(&namespace, from, &[]);
    let current_args = to.args(&namespace, None, extra);
    let target = version_of(&to.render(&current_args, &namespace));
    let mut agent = Agent::start(server, &namespace, &TIMING);
    let before = settle(
        server,
        &mut agent,
        &namespace,
        install,
        &previous_args,
        path,
    );
    if from.is_some() {
        assert_ne!(before, target, "the catalog's tag is the previous one");
    }
    let upgrade = Planned {
        args: &current_args,
        tweak: to.tweak,
        with_refresh: false,
        sequence,
        from: migration.then_some(install.shape),
        before_controller: None,
    };
    let watched = watch_upgrade(
        server, &mut agent, &namespace, path, &upgrade, &target, limit,
    );
    Run {
        start: watched.start,
        observation: watched.observation,
        outcome: watched.outcome,
        timeline: watched.timeline,
        agent,
    }
}

/// What [`watch_upgrade`] saw.
pub struct Watched {
    /// When the upgrade's first write went out (Unix ms).
    pub start: i64,
    /// When the watch ended (Unix ms).
    #[allow(dead_code)] // read by the real mode (tests/rollout/real.rs)
    pub end: i64,
    /// How the path's steps ended.
    pub outcome: Outcome,
    /// The agent's timeline.
    pub timeline: Timeline,
    /// The invariants' figures over [start, end].
    pub observation: Observation,
}

/// Runs the `upgrade` plan through `path` to version `target` (each wait
/// giving up after `limit`) and observes it.
pub fn watch_upgrade(
    server: &ApiServer,
    agent: &mut Agent,
    namespace: &str,
    path: &ApplyPath,
    upgrade: &Planned,
    target: &str,
    limit: Duration,
) -> Watched {
    let start = now_ms();
    let outcome = path.run(server, agent, namespace, upgrade, target, limit, false);
    let written = generations(server, namespace);
    // the path's last wait may end before the agent's last sample
    let timeline = agent
        .wait_for(Duration::from_secs(5), |t| {
            t.rolled_out_since(target, None, &written)
        })
        .unwrap_or_else(|| agent.timeline());
    let end = now_ms();
    Watched {
        start,
        end,
        observation: timeline.observe(start, end, target, &written),
        outcome,
        timeline,
    }
}
