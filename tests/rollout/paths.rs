//! The apply paths of docs/split-topology.md section 7, as data: how each
//! applier writes objects (its field manager and patch type, as
//! tests/apiserver.rs and docs/upgrading.md imitate them with kubectl), in
//! which groups (one pass, or Argo CD's sync waves) and what it waits for
//! between and after them. A topology of several Deployments gets its
//! order from the same data.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::Agent;
use crate::common::apiserver::ApiServer;
use crate::common::text;

/// How an applier writes objects.
#[derive(Debug, Clone, Copy)]
pub enum Write {
    /// `kubectl apply`: client-side, the last-applied annotation.
    ClientSide {
        /// The field manager.
        manager: &'static str,
    },
    /// Helm 3: created with the manifest saved, upgraded by the three-way
    /// strategic merge patch of the old manifest, the new one and the live
    /// object (kubectl's client-side apply computes the same patch from its
    /// last-applied configuration; tests/apiserver.rs says why).
    HelmThreeWay,
    /// Server-side apply, conflicts forced.
    ServerSide {
        /// The field manager.
        manager: &'static str,
    },
}

/// What an applier waits for after a group of objects.
#[derive(Debug, Clone, Copy)]
pub enum Wait {
    /// `kubectl rollout status` of each Deployment of the group.
    RolloutStatus,
    /// Every Deployment of the group rolled out (observedGeneration caught
    /// up, updated == available == replicas, no pod of another version):
    /// Helm's `--wait`, Flux's `wait` (kstatus), Argo CD's health.
    Healthy,
}

/// How the objects are grouped into steps.
#[derive(Debug, Clone, Copy)]
pub enum Groups {
    /// Everything in one pass.
    OnePass,
    /// Argo CD's sync waves: by the `argocd.argoproj.io/sync-wave`
    /// annotation (0 when absent), lowest first.
    SyncWaves,
}

/// One apply path.
#[derive(Debug, Clone, Copy)]
pub struct ApplyPath {
    /// Its name in the table.
    pub name: &'static str,
    /// How it writes.
    pub write: Write,
    /// Its steps.
    pub groups: Groups,
    /// What it waits for after each step.
    pub wait: Wait,
}

/// The four paths.
pub const PATHS: [ApplyPath; 4] = [
    ApplyPath {
        name: "kubectl",
        write: Write::ClientSide {
            manager: "kubectl-client-side-apply",
        },
        groups: Groups::OnePass,
        wait: Wait::RolloutStatus,
    },
    ApplyPath {
        name: "Helm",
        write: Write::HelmThreeWay,
        groups: Groups::OnePass,
        wait: Wait::Healthy,
    },
    ApplyPath {
        name: "Flux (server-side apply)",
        write: Write::ServerSide {
            manager: "kustomize-controller",
        },
        groups: Groups::OnePass,
        wait: Wait::Healthy,
    },
    ApplyPath {
        name: "Argo CD (sync waves)",
        write: Write::ClientSide {
            manager: "argocd-controller",
        },
        groups: Groups::SyncWaves,
        wait: Wait::Healthy,
    },
];

/// The kubectl path.
pub const KUBECTL: ApplyPath = PATHS[0];

/// How a step ended.
#[derive(Debug)]
pub enum Outcome {
    /// Every step's wait ended well.
    Done,
    /// A wait gave up: which group, and why.
    GaveUp(String),
}

impl ApplyPath {
    /// Installs `objects` into `namespace`: each group written, then waited for.
    pub fn install(
        &self,
        server: &ApiServer,
        agent: &mut Agent,
        namespace: &str,
        objects: &[Value],
        version: &str,
        limit: Duration,
    ) -> Outcome {
        self.steps(server, agent, namespace, objects, version, limit, true)
    }

    /// Upgrades to `objects`; each wait gives up after `limit`.
    pub fn upgrade(
        &self,
        server: &ApiServer,
        agent: &mut Agent,
        namespace: &str,
        objects: &[Value],
        version: &str,
        limit: Duration,
    ) -> Outcome {
        self.steps(server, agent, namespace, objects, version, limit, false)
    }

    #[allow(clippy::too_many_arguments)]
    fn steps(
        &self,
        server: &ApiServer,
        agent: &mut Agent,
        namespace: &str,
        objects: &[Value],
        version: &str,
        limit: Duration,
        first: bool,
    ) -> Outcome {
        for (wave, group) in self.group(objects) {
            self.write(server, namespace, &group, first);
            let deployments: Vec<String> = group
                .iter()
                .filter(|o| o["kind"] == "Deployment")
                .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
                .collect();
            if deployments.is_empty() {
                continue;
            }
            let ok = match self.wait {
                Wait::RolloutStatus => deployments.iter().all(|name| {
                    let timeout = format!("--timeout={}s", limit.as_secs());
                    let target = format!("deployment/{name}");
                    let out = server.kubectl(
                        &["rollout", "status", &target, "-n", namespace, &timeout],
                        "",
                    );
                    out.status.success()
                }),
                Wait::Healthy => agent
                    .wait_for(limit, |t| t.rolled_out(version, Some(&deployments)))
                    .is_some(),
            };
            if !ok {
                return Outcome::GaveUp(format!(
                    "wave {wave}: {deployments:?} not rolled out to {version} within {} s",
                    limit.as_secs()
                ));
            }
        }
        Outcome::Done
    }

    /// The steps: (wave, objects), in order.
    fn group(&self, objects: &[Value]) -> Vec<(i64, Vec<Value>)> {
        let mut waves: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
        for o in objects {
            let wave = match self.groups {
                Groups::OnePass => 0,
                Groups::SyncWaves => o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
                    .as_str()
                    .map_or(0, |w| w.parse().expect("a sync wave is an integer")),
            };
            waves.entry(wave).or_default().push(o.clone());
        }
        waves.into_iter().collect()
    }

    /// Writes one group; `first` when the objects are new.
    fn write(&self, server: &ApiServer, namespace: &str, group: &[Value], first: bool) {
        let stream: String = group
            .iter()
            .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
            .collect();
        let manager;
        let args: Vec<&str> = match (self.write, first) {
            (Write::ClientSide { manager: m }, _) => {
                manager = format!("--field-manager={m}");
                vec!["apply", &manager]
            }
            (Write::HelmThreeWay, true) => vec!["create", "--save-config", "--field-manager=helm"],
            (Write::HelmThreeWay, false) => vec!["apply", "--field-manager=helm"],
            (Write::ServerSide { manager: m }, _) => {
                manager = format!("--field-manager={m}");
                vec!["apply", "--server-side", "--force-conflicts", &manager]
            }
        };
        let mut args = args;
        args.extend(["-n", namespace, "-f", "-"]);
        let out = server.kubectl(&args, &stream);
        assert!(
            out.status.success(),
            "{}: kubectl {args:?} failed:\n{}",
            self.name,
            text(&out.stderr)
        );
    }
}
