//! The apply paths of docs/rollout-harness.md: how each applier
//! writes objects (its field manager and patch type, as tests/apiserver.rs
//! and docs/upgrading.md imitate them with kubectl) and how it waits. The
//! steps, their objects and what each waits for are not written here: they
//! are the plan `asogen upgrade-plan --via PATH -o json` prints
//! (src/features/plan.rs), and each step's objects are what
//! `asogen upgrade-plan --manifest N` prints for it, as the user runs them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::cluster::Agent;
use crate::common::apiserver::ApiServer;
use crate::common::{asogen, text};
use crate::timeline::Generations;

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

/// How an applier waits for the Deployments a step names.
#[derive(Debug, Clone, Copy)]
pub enum Wait {
    /// `kubectl rollout status` of each.
    RolloutStatus,
    /// Each rolled out as its status says (observedGeneration caught up,
    /// updated == available == replicas, no running pod of another
    /// version; terminating pods, which status.replicas leaves out, are
    /// not waited for): Helm's `--wait`, Flux's `wait` (kstatus), Argo
    /// CD's health.
    Healthy,
}

/// One apply path.
#[derive(Debug, Clone, Copy)]
pub struct ApplyPath {
    /// Its name in the table.
    pub name: &'static str,
    /// Its name for `asogen upgrade-plan --via`.
    pub via: &'static str,
    /// How it writes.
    pub write: Write,
    /// How it waits.
    pub wait: Wait,
}

/// The four paths.
pub const PATHS: [ApplyPath; 4] = [
    // As `upgrade-plan --via kubectl` prints it (plan.rs KUBECTL_APPLY),
    // and the README's quick start installs.
    ApplyPath {
        name: "kubectl",
        via: "kubectl",
        write: Write::ServerSide { manager: "kubectl" },
        wait: Wait::RolloutStatus,
    },
    ApplyPath {
        name: "Helm",
        via: "helm",
        write: Write::HelmThreeWay,
        wait: Wait::Healthy,
    },
    ApplyPath {
        name: "Flux (server-side apply)",
        via: "flux",
        write: Write::ServerSide {
            manager: "kustomize-controller",
        },
        wait: Wait::Healthy,
    },
    ApplyPath {
        name: "Argo CD (sync waves)",
        via: "argo",
        write: Write::ClientSide {
            manager: "argocd-controller",
        },
        wait: Wait::Healthy,
    },
];

/// The kubectl path.
pub const KUBECTL: ApplyPath = PATHS[0];

/// How the steps ended.
#[derive(Debug)]
pub enum Outcome {
    /// Every step's wait ended well.
    Done,
    /// A wait gave up: which step, and why.
    GaveUp(String),
    /// A write was refused (an admission policy): which step, and what
    /// the applier printed.
    Refused(String),
}

/// The plan as `asogen upgrade-plan -o json` prints it: the fields the
/// harness acts on.
#[derive(Debug, Clone, Deserialize)]
pub struct Plan {
    /// "single" or "split".
    pub topology: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One step of the plan.
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    /// `--manifest N` prints its objects.
    pub number: usize,
    /// "always", or "kinds-added" (the webhook refresh).
    pub when: String,
    /// The order of its sync waves, when it has them: its objects are
    /// applied one wave at a time.
    pub waves: Option<String>,
    /// The Deployments whose rollout it waits for.
    pub wait: Vec<String>,
    /// The Deployments whose older pods must be gone, terminating ones
    /// included, before the next step (the plan's `kubectl wait` for
    /// status.terminatingReplicas 0).
    #[serde(default)]
    pub drain: Vec<String>,
    /// After how many seconds the applier tries a refused write again
    /// (Flux's retryInterval, Argo CD's sync retry), when it does.
    #[serde(default)]
    pub retry_seconds: Option<u64>,
    /// What it deletes after its waits (a migration's leftovers).
    pub delete: Vec<ObjectRef>,
}

/// An object a step deletes.
#[derive(Debug, Clone, Deserialize)]
pub struct ObjectRef {
    /// Its kind.
    pub kind: String,
    /// Its namespace ("" when cluster-scoped).
    pub namespace: String,
    /// Its name.
    pub name: String,
}

/// What the harness changes in what asogen renders, before applying it.
pub type Tweak = fn(&mut [Value]);

/// Which of a plan's steps the harness runs, in which order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequence {
    /// Every step, in order.
    AsPlanned,
    /// Last to first (a negative test: the controller before the
    /// webhooks).
    Reversed,
    /// The last step alone (a negative test: one apply of the values as
    /// they are, e.g. one `helm upgrade` straight to another topology).
    LastOnly,
}

/// A plan to run: `asogen upgrade-plan` arguments for one install.
pub struct Planned<'a> {
    /// `asogen template`-style values arguments (`-f`, `--set`, `-n`).
    pub args: &'a [String],
    /// Changes to the objects (what-ifs and negative tests).
    pub tweak: Option<Tweak>,
    /// Whether to run the steps only needed when kinds were added.
    pub with_refresh: bool,
    /// Which of the plan's steps run, in which order.
    pub sequence: Sequence,
    /// The live topology, for a migration (`upgrade-plan --from`).
    pub from: Option<&'a str>,
    /// Run once before the first write of the controller's Deployment (the
    /// CRDs of the new release applied by the path, in a what-if).
    pub before_controller: Option<&'a (dyn Fn() + Sync)>,
}

impl Planned<'_> {
    fn plan_command(&self, path: &ApplyPath, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = vec!["upgrade-plan".into(), "--via".into(), path.via.into()];
        if let Some(from) = self.from {
            args.extend(["--from".into(), from.into()]);
        }
        args.extend(self.args.iter().cloned());
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    }

    fn asogen(&self, args: &[String]) -> String {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = asogen(&args);
        assert!(
            out.status.success(),
            "asogen {args:?}: {}",
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// The plan the command prints for `path`.
    pub fn plan(&self, path: &ApplyPath) -> Plan {
        let json = self.asogen(&self.plan_command(path, &["-o", "json"]));
        serde_json::from_str(&json).expect("upgrade-plan -o json prints a plan")
    }

    /// The namespaced objects of step `n` (cluster-scoped ones, webhook
    /// configurations, ClusterRoles and admission policies, take no part
    /// in a rollout and would be shared between scenarios), tweaked.
    pub fn objects(&self, path: &ApplyPath, namespace: &str, n: usize) -> Vec<Value> {
        let n = n.to_string();
        let yaml = self.asogen(&self.plan_command(path, &["--manifest", &n]));
        let mut objects: Vec<Value> = serde_yaml::Deserializer::from_str(&yaml)
            .map(|d| Value::deserialize(d).expect("upgrade-plan --manifest prints YAML"))
            .filter(|o| o["metadata"]["namespace"] == namespace)
            .collect();
        if let Some(tweak) = self.tweak {
            tweak(&mut objects);
        }
        objects
    }
}

impl ApplyPath {
    /// Runs the plan `planned` prints for this path: each step's objects
    /// written (wave by wave where the step has waves), then its
    /// Deployments waited for; each wait gives up after `limit`. `first`
    /// when nothing is installed yet.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        server: &ApiServer,
        agent: &mut Agent,
        namespace: &str,
        planned: &Planned,
        version: &str,
        limit: Duration,
        first: bool,
    ) -> Outcome {
        let plan = planned.plan(self);
        let mut steps: Vec<&Step> = plan
            .steps
            .iter()
            .filter(|step| step.when == "always" || planned.with_refresh)
            .collect();
        match planned.sequence {
            Sequence::AsPlanned => {}
            Sequence::Reversed => steps.reverse(),
            Sequence::LastOnly => steps = steps.split_off(steps.len().saturating_sub(1)),
        }
        let mut before_controller = planned.before_controller;
        for (i, step) in steps.into_iter().enumerate() {
            let objects = planned.objects(self, namespace, step.number);
            for (wave, group) in waves(&objects, step.waves.is_some()) {
                let controller = group.iter().any(|o| {
                    o["kind"] == "Deployment"
                        && o["spec"]["template"]["metadata"]["labels"]["control-plane"]
                            == "controller-manager"
                });
                if controller && let Some(hook) = before_controller.take() {
                    hook();
                }
                // a later step finds the objects of the first one
                let deadline = std::time::Instant::now() + limit;
                while let Err(stderr) = self.write(server, namespace, &group, first && i == 0) {
                    // as Flux and Argo CD do when the plan sets their retry
                    match step.retry_seconds {
                        Some(seconds) if std::time::Instant::now() < deadline => {
                            eprintln!(
                                "{}: step {} wave {wave} refused, tried again in {seconds} s: {}",
                                self.name,
                                step.number,
                                stderr.trim()
                            );
                            std::thread::sleep(Duration::from_secs(seconds));
                        }
                        _ => {
                            return Outcome::Refused(format!(
                                "step {} wave {wave}: {stderr}",
                                step.number
                            ));
                        }
                    }
                }
                let deployments: Vec<String> = group
                    .iter()
                    .filter(|o| o["kind"] == "Deployment")
                    .filter_map(|o| o["metadata"]["name"].as_str())
                    .filter(|name| step.wait.iter().any(|w| w == name))
                    .map(str::to_string)
                    .collect();
                if !self.wait(server, agent, namespace, &deployments, version, limit) {
                    return Outcome::GaveUp(format!(
                        "step {} wave {wave}: {deployments:?} not rolled out to {version} within {} s",
                        step.number,
                        limit.as_secs()
                    ));
                }
            }
            // as the plan's `kubectl wait --for=jsonpath=...` does
            for name in &step.drain {
                let target = format!("deployment/{name}");
                let timeout = format!("--timeout={}s", limit.as_secs());
                let out = server.kubectl(
                    &[
                        "wait",
                        &target,
                        "-n",
                        namespace,
                        "--for=jsonpath={.status.terminatingReplicas}=0",
                        &timeout,
                    ],
                    "",
                );
                if !out.status.success() {
                    return Outcome::GaveUp(format!(
                        "step {}: {name} kept terminating pods for {} s",
                        step.number,
                        limit.as_secs()
                    ));
                }
            }
            // cluster-scoped objects were never applied
            for o in step.delete.iter().filter(|o| !o.namespace.is_empty()) {
                let target = format!("{}/{}", o.kind.to_lowercase(), o.name);
                server.kubectl_ok(&["delete", &target, "-n", namespace, "--wait=false"], "");
            }
        }
        Outcome::Done
    }

    /// Waits for the rollout of `deployments`; false when it gave up.
    fn wait(
        &self,
        server: &ApiServer,
        agent: &mut Agent,
        namespace: &str,
        deployments: &[String],
        version: &str,
        limit: Duration,
    ) -> bool {
        if deployments.is_empty() {
            return true;
        }
        match self.wait {
            Wait::RolloutStatus => deployments.iter().all(|name| {
                let timeout = format!("--timeout={}s", limit.as_secs());
                let target = format!("deployment/{name}");
                let out = server.kubectl(
                    &["rollout", "status", &target, "-n", namespace, &timeout],
                    "",
                );
                out.status.success()
            }),
            Wait::Healthy => {
                let written = generations(server, namespace);
                agent
                    .wait_for(limit, |t| t.healthy_since(version, deployments, &written))
                    .is_some()
            }
        }
    }

    /// Writes one group; `first` when the objects are new. Err holds what
    /// the applier printed when the API server refused a write.
    fn write(
        &self,
        server: &ApiServer,
        namespace: &str,
        group: &[Value],
        first: bool,
    ) -> Result<(), String> {
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
        let stderr = text(&out.stderr);
        // an admission refusal is an outcome; anything else is the
        // harness's own failure
        let refused = stderr.contains("denied request") || stderr.contains("is forbidden");
        match (out.status.success(), refused) {
            (true, _) => Ok(()),
            (false, true) => Err(stderr),
            (false, false) => panic!("{}: kubectl {args:?} failed:\n{stderr}", self.name),
        }
    }
}

/// Each live Deployment's generation (what the last write made), as a
/// health check reads it (kstatus, Argo CD: observedGeneration must catch
/// up with it).
pub fn generations(server: &ApiServer, namespace: &str) -> Generations {
    let out = server.kubectl_ok(&["get", "deployments", "-n", namespace, "-o", "json"], "");
    let list: Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["metadata"]["name"].as_str().unwrap().to_string(),
                d["metadata"]["generation"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// The objects in the groups they are applied in: one, or by the
/// `argocd.argoproj.io/sync-wave` annotation (0 when absent), lowest first.
fn waves(objects: &[Value], by_wave: bool) -> Vec<(i64, Vec<Value>)> {
    let mut waves: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    for o in objects {
        let wave = if by_wave {
            o["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
                .as_str()
                .map_or(0, |w| w.parse().expect("a sync wave is an integer"))
        } else {
            0
        };
        waves.entry(wave).or_default().push(o.clone());
    }
    waves.into_iter().collect()
}
