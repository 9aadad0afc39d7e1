//! The live control plane of the rollout harness and the HA tests: the
//! tests' API server (tests/common/apiserver.rs), the real
//! kube-controller-manager of the same release beside it (one per test
//! binary), for the HA tests the real kube-scheduler too, and one node
//! agent per scenario (tests/kube-apiserver/cmd/node-agent) that plays the
//! nodes and ASO's start-up and records what it saw.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::common::apiserver::{self, ApiServer, server, tail_of_stderr};
use crate::common::{go_tool, tool};
use crate::timeline::Timeline;

/// The controllers that decide a rollout (their kube-controller-manager
/// v1.37 names): Deployments make ReplicaSets, ReplicaSets make pods,
/// EndpointSlices route to the ready ones; the disruption controller keeps
/// the PDBs' status; the garbage collector removes what owners leave.
const CONTROLLERS: [&str; 5] = [
    "deployment-controller",
    "replicaset-controller",
    "endpointslice-controller",
    "disruption-controller",
    "garbage-collector-controller",
];

/// What runs beside the API server: one per test binary.
#[derive(Debug, PartialEq, Eq)]
pub struct Plane {
    /// kube-controller-manager's controllers beside [`CONTROLLERS`].
    pub more_controllers: &'static [&'static str],
    /// Whether the real kube-scheduler binds the pods (else the node
    /// agents do, round-robin).
    pub scheduler: bool,
}

/// The rollout harness's: the controllers that decide a rollout; the node
/// agents bind the pods.
pub const ROLLOUT: Plane = Plane {
    more_controllers: &[],
    scheduler: false,
};

/// A control-plane process; it exits when this process does (it watches
/// the stdin this struct holds).
pub struct Daemon {
    name: &'static str,
    child: Mutex<Child>,
    log: Arc<Mutex<VecDeque<String>>>,
    _stdin: Mutex<ChildStdin>,
}

impl Daemon {
    /// Starts `binary --stdin-watch ARGS` as `name`.
    pub fn start(name: &'static str, binary: &Path, args: &[String]) -> Daemon {
        let mut child = tool(binary)
            .arg("--stdin-watch")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {}: {err}", binary.display()));
        let log = tail_of_stderr(&mut child);
        let stdin = child.stdin.take().unwrap();
        Daemon {
            name,
            child: Mutex::new(child),
            log,
            _stdin: Mutex::new(stdin),
        }
    }

    /// Fails the test, with the daemon's last log lines, if it exited.
    fn check(&self) {
        if let Ok(Some(status)) = self.child.lock().unwrap().try_wait() {
            panic!(
                "{} exited ({status}):\n{}",
                self.name,
                Vec::from(self.log.lock().unwrap().clone()).join("\n")
            );
        }
    }
}

static RUNNING: OnceLock<(&'static Plane, Vec<Daemon>)> = OnceLock::new();

/// The API server, with the rollout harness's controllers running
/// against it.
pub fn control_plane() -> &'static ApiServer {
    control_plane_of(&ROLLOUT)
}

/// The API server, with `plane` running against it (one plane per test
/// binary).
pub fn control_plane_of(plane: &'static Plane) -> &'static ApiServer {
    let server = server();
    let (running, daemons) = RUNNING.get_or_init(|| (plane, start_plane(server, plane)));
    assert_eq!(*running, plane, "one control plane per test binary");
    daemons.iter().for_each(Daemon::check);
    server
}

/// Starts `plane`'s processes against `server`; they stop when dropped.
pub fn start_plane(server: &ApiServer, plane: &Plane) -> Vec<Daemon> {
    let kubeconfig = format!("--kubeconfig={}", server.kubeconfig.display());
    // one instance of each, no serving: nothing to elect, nothing to probe
    let common = [kubeconfig, "--leader-elect=false".into(), "--v=1".into()];
    let binary = apiserver::build_with(
        "tests/kube-controller-manager/kube-controller-manager",
        "kube-controller-manager",
    );
    let mut args = common.to_vec();
    args.extend([
        format!(
            "--controllers={}",
            [&CONTROLLERS[..], plane.more_controllers]
                .concat()
                .join(",")
        ),
        "--secure-port=0".into(),
        // the controllers act as the admin of the kubeconfig, so no
        // token controller is needed
        "--use-service-account-credentials=false".into(),
        "--kube-api-qps=200".into(),
        "--kube-api-burst=400".into(),
    ]);
    let mut daemons = vec![Daemon::start("kube-controller-manager", &binary, &args)];
    if plane.scheduler {
        let binary = apiserver::build_with("tests/kube-scheduler/kube-scheduler", "kube-scheduler");
        let mut args = common.to_vec();
        args.push("--secure-port=0".into());
        daemons.push(Daemon::start("kube-scheduler", &binary, &args));
    }
    daemons
}

/// How fast the stand-in nodes and ASO's start-up go (the node agent's
/// flags). Real pods are slower; the invariants are about order, not speed.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// From binding (or a container restart) to Running.
    pub start: Duration,
    /// From a container's exit (after applying CRDs, or a spent startup
    /// budget) to the restarted process reaching the CRD step: the
    /// kubelet's restart and ASO's initialisation. Longer than the Lease's
    /// retry (2 s, jittered up to 4.4 s), so a second new pod waiting for
    /// the Lease gets it before the first one's manager campaigns; with a
    /// faster restart that pod can lose the race and wait out its startup
    /// budget (docs/rollout-harness.md).
    pub restart: Duration,
    /// From the manager's start to Ready.
    pub ready: Duration,
    /// From terminating to deleted.
    pub grace: Duration,
    /// How long applying the CRDs takes.
    pub crd_apply: Duration,
    /// The startup probe's budget before a restart (2.20.0: 12 x 10 s).
    pub startup_budget: Duration,
}

/// The timing every scenario runs with.
pub const TIMING: Timing = Timing {
    start: Duration::from_secs(1),
    restart: Duration::from_secs(5),
    ready: Duration::from_secs(1),
    grace: Duration::from_secs(1),
    crd_apply: Duration::from_secs(2),
    startup_budget: Duration::from_secs(120),
};

/// The node agent's binary, built for its current sources.
pub fn node_agent() -> PathBuf {
    go_tool(
        "tests/kube-apiserver",
        &[
            "go.mod",
            "go.sum",
            "cmd/node-agent/main.go",
            "cmd/node-agent/netns.go",
            "cmd/node-agent/proxy.go",
            "cmd/node-agent/real.go",
            "cmd/node-agent/traffic.go",
        ],
        "./cmd/node-agent",
        "node-agent",
        "the rollout harness needs it to play the nodes",
    )
}

/// A node agent for one namespace; stopped when dropped.
pub struct Agent {
    child: Child,
    events: PathBuf,
    /// Kept when a test fails, for its events.
    dir: Option<tempfile::TempDir>,
}

impl Agent {
    /// Starts the agent for `namespace` and waits until it watches.
    pub fn start(server: &ApiServer, namespace: &str, timing: &Timing) -> Agent {
        Agent::start_with(server, namespace, timing, &[])
    }

    /// [`Agent::start`] with more of the agent's flags (its nodes, and
    /// whether it binds pods).
    pub fn start_with(
        server: &ApiServer,
        namespace: &str,
        timing: &Timing,
        flags: &[String],
    ) -> Agent {
        let binary = node_agent();
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("events.jsonl");
        let secs = |d: Duration| format!("{}ms", d.as_millis());
        let child = tool(&binary)
            .arg(format!("--kubeconfig={}", server.kubeconfig.display()))
            .arg(format!("--namespace={namespace}"))
            .arg(format!("--out={}", events.display()))
            .arg(format!("--start-delay={}", secs(timing.start)))
            .arg(format!("--restart-delay={}", secs(timing.restart)))
            .arg(format!("--ready-delay={}", secs(timing.ready)))
            .arg(format!("--grace-delay={}", secs(timing.grace)))
            .arg(format!("--crd-apply={}", secs(timing.crd_apply)))
            .arg(format!("--startup-budget={}", secs(timing.startup_budget)))
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {}: {err}", binary.display()));
        let mut agent = Agent {
            child,
            events,
            dir: Some(dir),
        };
        let started = agent.wait_for(Duration::from_secs(60), |t| t.started());
        assert!(started.is_some(), "the node agent did not start watching");
        agent
    }

    /// What the agent wrote so far.
    pub fn timeline(&self) -> Timeline {
        Timeline::read(&self.events)
    }

    /// Polls the timeline until `done` holds or `limit` passes; the
    /// timeline where it held, or None.
    pub fn wait_for(
        &mut self,
        limit: Duration,
        done: impl Fn(&Timeline) -> bool,
    ) -> Option<Timeline> {
        let deadline = Instant::now() + limit;
        loop {
            let timeline = self.timeline();
            if done(&timeline) {
                return Some(timeline);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the node agent exited ({status}); events: {}",
                    self.events.display()
                );
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The events file (for failure messages).
    pub fn events(&self) -> &Path {
        &self.events
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking()
            && let Some(dir) = self.dir.take()
        {
            let _ = dir.keep(); // the failure message names the events file
        }
    }
}
