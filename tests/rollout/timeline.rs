//! What the node agent saw, and the invariants of docs/split-topology.md
//! section 2 computed from it: I1 (webhook endpoints), I2 (stale webhook
//! endpoints after the CRD epoch), I3 (controller versions at once, from
//! the pods and from the Lease) and the upgrade time.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

/// One line of the agent's output; `t` is Unix milliseconds.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The agent watches.
    Started {},
    /// A step of a pod's life (created, ready, terminating, gone...);
    /// `ip` is the pod's address where the step names it (terminating).
    Pod {
        t: i64,
        step: String,
        #[serde(default)]
        ip: String,
    },
    /// The CRD epoch of a version: a CRD-applying pod of it may write CRDs.
    Epoch { t: i64, version: String },
    /// The CRDs were written.
    Crds {},
    /// A Lease step: campaign, acquired, released.
    Lease {
        t: i64,
        step: String,
        pod: String,
        version: String,
        purpose: String,
    },
    /// The state, when it changed (sampled every 100 ms).
    Sample {
        t: i64,
        endpoints: Vec<Endpoint>,
        pods: Vec<PodState>,
        deployments: Vec<DeploymentState>,
    },
    /// Something the agent could not do.
    Error { pod: String, error: String },
    /// A CRD of the operator seen without its CA bundle (real mode, with
    /// cert-manager's own cainjector).
    CaMissing { t: i64, crd: String },
    /// The same CRD seen with it again, `ms` later.
    CaWindow { t: i64, crd: String, ms: i64 },
    /// A new connection to the webhook Service (real mode, the agent's
    /// probe): whether the proxy could open it, and why not.
    Probe {
        t: i64,
        ok: bool,
        #[serde(default)]
        cause: String,
        #[serde(default)]
        error: String,
    },
    /// A user's request (real mode): create, update or read of an ASO
    /// object; `through` names what failed (admission, conversion, other),
    /// `cause` why (the agent's `cause` in traffic.go: unknown-version,
    /// ca-bundle, pod-stopping, no-endpoint, other).
    #[allow(dead_code)] // op and error: read by the real mode's messages
    Request {
        t: i64,
        op: String,
        ok: bool,
        #[serde(default)]
        through: String,
        #[serde(default)]
        cause: String,
        #[serde(default)]
        error: String,
    },
}

/// A ready address of the webhook Service.
#[derive(Debug, Clone, Deserialize)]
pub struct Endpoint {
    /// The pod behind it.
    pub pod: String,
    /// That pod's version ("" once it is gone).
    pub version: String,
}

/// A pod in a non-terminal phase.
#[derive(Debug, Clone, Deserialize)]
pub struct PodState {
    /// Its name.
    pub pod: String,
    /// The Node it is bound to ("" while it waits for one).
    #[allow(dead_code)] // read by the HA tests (tests/ha/case.rs)
    pub node: String,
    /// The Deployment it belongs to.
    pub deployment: String,
    /// Its version (the manager image's tag).
    pub version: String,
    /// Whether its mode includes watchers (it runs the control loop).
    pub watchers: bool,
    /// Whether it is Ready.
    pub ready: bool,
    /// Whether it has a deletion timestamp.
    pub terminating: bool,
}

/// A Deployment's rollout state.
#[derive(Debug, Clone, Deserialize)]
pub struct DeploymentState {
    /// Its name.
    pub name: String,
    /// metadata.generation as the agent's informer last saw it.
    pub generation: i64,
    /// observedGeneration caught up and updated == available == replicas.
    pub complete: bool,
}

/// Everything the agent wrote, in order.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// The events.
    pub events: Vec<Event>,
}

impl Timeline {
    /// Reads an agent's events file (a line being written is left out).
    pub fn read(path: &Path) -> Timeline {
        let data = std::fs::read_to_string(path).unwrap_or_default();
        let events = data
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        Timeline { events }
    }

    /// Whether the agent watches.
    pub fn started(&self) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e, Event::Started { .. }))
    }

    /// The last sample: (time, pods, deployments).
    fn last_sample(&self) -> Option<(&[PodState], &[DeploymentState])> {
        self.events.iter().rev().find_map(|e| match e {
            Event::Sample {
                pods, deployments, ..
            } => Some((pods.as_slice(), deployments.as_slice())),
            _ => None,
        })
    }

    /// The pods of the last sample (none before the first).
    #[allow(dead_code)] // the HA tests' (tests/ha/case.rs)
    pub fn pods_now(&self) -> &[PodState] {
        self.last_sample().map_or(&[], |(pods, _)| pods)
    }

    /// Whether the Deployments named (all, when `deployments` is None) have
    /// rolled out to `version`: complete, and every pod of theirs is of
    /// that version and not terminating (a sample taken before the
    /// controller saw a new generation still says complete).
    pub fn rolled_out(&self, version: &str, deployments: Option<&[String]>) -> bool {
        self.rolled_out_since(version, deployments, &Generations::new())
    }

    /// [`Timeline::rolled_out`], counting a Deployment only once the agent
    /// saw at least the generation `written` names for it (what the last
    /// write made): without it a sample taken just after a write that
    /// keeps the version can still show the old generation complete.
    pub fn rolled_out_since(
        &self,
        version: &str,
        deployments: Option<&[String]>,
        written: &Generations,
    ) -> bool {
        let Some((pods, states)) = self.last_sample() else {
            return false;
        };
        let chosen = |name: &str| deployments.is_none_or(|names| names.iter().any(|n| n == name));
        let scoped: Vec<_> = states.iter().filter(|d| chosen(&d.name)).collect();
        !scoped.is_empty()
            && deployments.is_none_or(|names| all_seen(names, states))
            && scoped.iter().all(|d| d.complete && caught_up(d, written))
            && pods
                .iter()
                .filter(|p| chosen(&p.deployment))
                .all(|p| p.version == version && !p.terminating)
    }

    /// Whether `deployments` are healthy at `version` as kstatus, Helm's
    /// `--wait` and Argo CD's health judge a Deployment: complete and
    /// caught up with `written`, and every pod not terminating of
    /// `version`. A terminating pod of the older version may still run
    /// (status.replicas does not count it): unlike [`rolled_out_since`].
    pub fn healthy_since(
        &self,
        version: &str,
        deployments: &[String],
        written: &Generations,
    ) -> bool {
        let Some((pods, states)) = self.last_sample() else {
            return false;
        };
        let chosen = |name: &str| deployments.iter().any(|n| n == name);
        let scoped: Vec<_> = states.iter().filter(|d| chosen(&d.name)).collect();
        !scoped.is_empty()
            && all_seen(deployments, states)
            && scoped.iter().all(|d| d.complete && caught_up(d, written))
            && pods
                .iter()
                .filter(|p| chosen(&p.deployment) && !p.terminating)
                .all(|p| p.version == version)
    }

    /// Whether `version` rolled out everywhere and the webhook Service
    /// routes to every Ready pod of `routed` (the Deployments it selects;
    /// the EndpointSlice controller follows the pods a moment later): the
    /// steady state an upgrade starts from.
    pub fn settled(&self, version: &str, routed: &[String]) -> bool {
        let endpoints = self.events.iter().rev().find_map(|e| match e {
            Event::Sample { endpoints, .. } => Some(endpoints.len()),
            _ => None,
        });
        let ready = self.last_sample().map_or(0, |(pods, _)| {
            pods.iter()
                .filter(|p| p.ready && routed.contains(&p.deployment))
                .count()
        });
        self.rolled_out(version, None) && endpoints == Some(ready)
    }

    /// The Deployments whose pods were webhook endpoints at or after `t`
    /// (Unix ms).
    pub fn routed_since(&self, t: i64) -> BTreeSet<String> {
        let mut routed = BTreeSet::new();
        for e in &self.events {
            if let Event::Sample {
                t: at,
                endpoints,
                pods,
                ..
            } = e
                && *at >= t
            {
                routed.extend(endpoints.iter().filter_map(|e| {
                    pods.iter()
                        .find(|p| p.pod == e.pod)
                        .map(|p| p.deployment.clone())
                }));
            }
        }
        routed
    }

    /// How many pods became Ready at or after `t` (Unix ms).
    pub fn became_ready_since(&self, t: i64) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::Pod { t: at, step, .. } if step == "ready" && *at >= t))
            .count()
    }

    /// Errors the agent reported.
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Error { pod, error, .. } => Some(format!("{pod}: {error}")),
                _ => None,
            })
            .collect()
    }

    /// Whether a pod of `version` ever became Ready.
    pub fn ever_ready(&self, version: &str) -> bool {
        self.events.iter().any(|e| match e {
            Event::Sample { pods, .. } => pods.iter().any(|p| p.version == version && p.ready),
            _ => false,
        })
    }

    /// The observation of an upgrade to `target` that started at `start`
    /// and was watched until `until` (Unix ms): a sample is written only
    /// when something changed, so the last one lasts until `until`. The
    /// rollout is finished at the first sample where every Deployment is
    /// complete at (at least) the generation `written` names for it.
    pub fn observe(
        &self,
        start: i64,
        until: i64,
        target: &str,
        written: &Generations,
    ) -> Observation {
        let samples: Vec<Snapshot> = self
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Sample {
                    t,
                    endpoints,
                    pods,
                    deployments,
                } => Some(Snapshot {
                    t: *t,
                    endpoints,
                    pods,
                    deployments,
                }),
                _ => None,
            })
            .collect();
        let epoch = self.events.iter().find_map(|e| match e {
            Event::Epoch { t, version } if version == target && *t >= start => Some(*t),
            _ => None,
        });
        // the window ends at the first sample of the finished rollout
        let done = samples.iter().find(|s| {
            s.t >= start
                && !s.deployments.is_empty()
                && s.deployments
                    .iter()
                    .all(|d| d.complete && caught_up(d, written))
                && s.pods.iter().all(|p| p.version == target && !p.terminating)
        });
        let end = done.map_or(until, |s| s.t).max(start);
        let mut o = Observation {
            target: target.to_string(),
            completed: done.is_some(),
            upgrade_ms: done.map(|s| s.t - start),
            crd_epoch: epoch.is_some(),
            ..Observation::default()
        };
        let mut stale = BTreeSet::new();
        // each sample's state lasts until the next one
        for (i, sample) in samples.iter().enumerate() {
            let (endpoints, pods) = (sample.endpoints, sample.pods);
            let next = samples.get(i + 1).map_or(end, |s| s.t);
            let (from, to) = (sample.t.max(start), next.min(end));
            if to <= from {
                continue; // before the upgrade, or after it
            }
            let span = to - from;
            if endpoints.is_empty() {
                o.zero_endpoints_ms += span;
            }
            if epoch.is_some_and(|e| to > e) {
                let old: Vec<_> = endpoints.iter().filter(|e| e.version != target).collect();
                if !old.is_empty() {
                    o.stale_ms += to - from.max(epoch.unwrap());
                    stale.extend(old.iter().map(|e| e.pod.clone()));
                }
            }
            let versions: BTreeSet<_> = pods
                .iter()
                .filter(|p| p.watchers)
                .map(|p| p.version.as_str())
                .collect();
            o.controller_versions = o.controller_versions.max(versions.len());
        }
        o.stale_pods = stale.len();
        o.leader_versions = self.leader_versions_at_once(start, end);
        o.startup_budget_spent = self.events.iter().any(|e| {
            matches!(e, Event::Pod { t, step, .. }
                if (step == "startup-budget-spent" || step == "startup-probe-failed") && *t >= start)
        });
        // the pods deleted so far, by address, and when
        let stops: Vec<(i64, &str)> = self
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Pod { t, step, ip, .. } if step == "terminating" && !ip.is_empty() => {
                    Some((*t, ip.as_str()))
                }
                _ => None,
            })
            .collect();
        for e in &self.events {
            if let Event::Request {
                t,
                ok,
                through,
                cause,
                error,
                ..
            } = e
                && (start..=end).contains(t)
            {
                o.requests += 1;
                if !ok {
                    let cause = if cause.is_empty() { "other" } else { cause };
                    *o.failed_by_cause.entry(cause.to_string()).or_default() += 1;
                    // the pod the request reached, named in the error (the
                    // proxy's dial), had been deleted: the stop race
                    let reached_a_stopping_pod = stops
                        .iter()
                        .any(|(s, ip)| s <= t && names_address(error, ip));
                    if cause == "pod-stopping" && reached_a_stopping_pod {
                        o.failed_as_a_pod_stops += 1;
                    }
                    match through.as_str() {
                        "admission" => o.failed_admission += 1,
                        "conversion" => o.failed_conversion += 1,
                        _ => o.failed_other += 1,
                    }
                }
            }
        }
        // the CA windows: from a CRD seen without its bundle to its
        // return (None: not back by the end)
        let mut open: BTreeMap<&str, i64> = BTreeMap::new();
        for e in &self.events {
            match e {
                Event::CaMissing { t, crd } if *t <= end => {
                    open.insert(crd, *t);
                }
                Event::CaWindow { t, crd, ms }
                    if *t <= end && open.remove(crd.as_str()).is_some() && *t >= start =>
                {
                    o.ca_windows.push((t - ms, Some(*ms)));
                }
                _ => {}
            }
        }
        o.ca_windows
            .extend(open.values().filter(|t| **t >= start).map(|t| (*t, None)));
        o.ca_windows.sort();
        for e in &self.events {
            if let Event::Request {
                t,
                ok: false,
                cause,
                ..
            } = e
                && (start..=end).contains(t)
                && cause == "ca-bundle"
                && !o.ca_windows.iter().any(|(from, ms)| {
                    *t >= *from && ms.is_none_or(|ms| *t <= from + ms + CA_RELOAD_MS)
                })
            {
                o.ca_failures_outside_windows += 1;
            }
        }
        for e in &self.events {
            if let Event::Probe {
                t,
                ok,
                cause,
                error,
                ..
            } = e
                && (start..=end).contains(t)
            {
                o.probes += 1;
                if !ok {
                    *o.refused_probes_by_cause.entry(cause.clone()).or_default() += 1;
                    if cause == "pod-stopping"
                        && stops
                            .iter()
                            .any(|(s, ip)| s <= t && names_address(error, ip))
                    {
                        o.probes_refused_as_a_pod_stops += 1;
                    }
                }
            }
        }
        o
    }

    /// Whether a probe of the webhook Service got a connection at or
    /// after `t` (Unix ms): the proxy routes to a serving pod.
    #[allow(dead_code)] // the real mode's
    pub fn probe_ok_since(&self, t: i64) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e, Event::Probe { t: at, ok: true, .. } if *at >= t))
    }

    /// The failed probes' errors in [start, end], first ones first.
    #[allow(dead_code)] // read by the real mode (tests/real_manager.rs)
    pub fn probe_errors(&self, start: i64, end: i64) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Probe {
                    t,
                    ok: false,
                    error,
                    ..
                } if (start..=end).contains(t) => Some(format!("{t}: {error}")),
                _ => None,
            })
            .collect()
    }

    /// The first failed request's error of each cause in [start, end].
    #[allow(dead_code)] // read by the real mode (tests/real_manager.rs)
    pub fn first_error_by_cause(&self, start: i64, end: i64) -> BTreeMap<String, String> {
        let mut first = BTreeMap::new();
        for e in &self.events {
            if let Event::Request {
                t,
                ok: false,
                op,
                cause,
                error,
                ..
            } = e
                && (start..=end).contains(t)
            {
                first
                    .entry(cause.clone())
                    .or_insert_with(|| format!("{t} {op}: {error}"));
            }
        }
        first
    }

    /// The failed requests' errors in [start, end], first ones first.
    #[allow(dead_code)] // read by the real mode (tests/real_manager.rs)
    pub fn request_errors(&self, start: i64, end: i64) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Request {
                    t,
                    ok: false,
                    op,
                    error,
                    ..
                } if (start..=end).contains(t) => Some(format!("{t} {op}: {error}")),
                _ => None,
            })
            .collect()
    }

    /// The Lease-holder form of I3: the most versions that held the Lease
    /// as controllers' leader at one moment of [start, end].
    fn leader_versions_at_once(&self, start: i64, end: i64) -> usize {
        let mut held: BTreeMap<String, (String, i64)> = BTreeMap::new();
        let mut spans = Vec::new();
        for e in &self.events {
            if let Event::Lease {
                t,
                step,
                pod,
                version,
                purpose,
            } = e
                // the real mode observes holders, whatever they hold it for
                && (purpose == "leader" || purpose == "observed")
            {
                match step.as_str() {
                    "acquired" => {
                        held.insert(pod.clone(), (version.clone(), *t));
                    }
                    "released" => {
                        if let Some((v, from)) = held.remove(pod) {
                            spans.push((v, from, *t));
                        }
                    }
                    _ => {}
                }
            }
        }
        spans.extend(held.into_values().map(|(v, from)| (v, from, i64::MAX)));
        let mut most = 0;
        for (_, from, to) in &spans {
            // the count is highest at some span's start
            let at = (*from).max(start);
            if at > end || *to < start {
                continue;
            }
            let versions: BTreeSet<_> = spans
                .iter()
                .filter(|(_, f, t)| *f <= at && at < *t)
                .map(|(v, _, _)| v)
                .collect();
            most = most.max(versions.len());
        }
        most
    }
}

/// The generation each Deployment has after a write, by name.
pub type Generations = BTreeMap<String, i64>;

/// Whether the agent saw every Deployment named: one created by the write
/// just made may not have reached its informer yet, and the others alone
/// must not pass for all of them (a wait ended so before the webhooks
/// Deployment of a migration's first step existed for the agent).
fn all_seen(names: &[String], states: &[DeploymentState]) -> bool {
    names.iter().all(|n| states.iter().any(|d| d.name == *n))
}

fn caught_up(d: &DeploymentState, written: &Generations) -> bool {
    written.get(&d.name).is_none_or(|g| d.generation >= *g)
}

/// One sample, borrowed from its event.
struct Snapshot<'a> {
    t: i64,
    endpoints: &'a [Endpoint],
    pods: &'a [PodState],
    deployments: &'a [DeploymentState],
}

/// What one upgrade showed.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// The version upgraded to.
    pub target: String,
    /// Whether every Deployment rolled out to it within the wait.
    pub completed: bool,
    /// From the first write to the end of the rollout.
    #[allow(dead_code)] // read by the tables (bench/tables.rs)
    pub upgrade_ms: Option<i64>,
    /// I1: how long the webhook Service had no ready endpoint.
    pub zero_endpoints_ms: i64,
    /// Whether the target's CRD epoch happened during the upgrade.
    pub crd_epoch: bool,
    /// I2: pods of another version that were ready webhook endpoints
    /// after the target's CRD epoch, and for how long.
    pub stale_pods: usize,
    /// I2: how long such an endpoint existed.
    pub stale_ms: i64,
    /// I3: the most versions among non-terminal watcher pods at once.
    pub controller_versions: usize,
    /// I3, the Lease form: the most versions holding the Lease as leader
    /// at once.
    pub leader_versions: usize,
    /// Whether a new pod's startup probe budget ran out waiting for the
    /// Lease.
    pub startup_budget_spent: bool,
    /// Users' requests during the upgrade (real mode with traffic).
    pub requests: usize,
    /// Of those, failed by an admission webhook call.
    pub failed_admission: usize,
    /// Failed by a conversion webhook call.
    pub failed_conversion: usize,
    /// Failed otherwise.
    pub failed_other: usize,
    /// Of all failed requests, those refused by a pod that had been
    /// deleted (the pod the proxy dialled, named in the error): the race
    /// between a container's SIGTERM and its endpoint's removal, which only
    /// a preStop delay closes.
    pub failed_as_a_pod_stops: usize,
    /// The failed requests by cause (unknown-version, ca-bundle,
    /// pod-stopping, no-endpoint, other).
    pub failed_by_cause: BTreeMap<String, usize>,
    /// New connections the probe opened to the webhook Service.
    pub probes: usize,
    /// Those refused, by cause (pod-stopping, no-endpoint, other).
    pub refused_probes_by_cause: BTreeMap<String, usize>,
    /// Those refused by a pod that had been deleted (named in the error).
    pub probes_refused_as_a_pod_stops: usize,
    /// Each time a CRD of the operator lacked its CA bundle: from when
    /// (Unix ms), and for how long (None: not back by the end).
    pub ca_windows: Vec<(i64, Option<i64>)>,
    /// Requests that failed on the CA (x509) outside every CA window
    /// (and the [`CA_RELOAD_MS`] after it).
    pub ca_failures_outside_windows: usize,
}

/// How long after a CRD's CA bundle is back a conversion may still fail on
/// the CA: the API server builds the CRD's conversion client anew when
/// the CRD changes.
pub const CA_RELOAD_MS: i64 = 2_000;

/// Whether `error` names the address `ip` (not a longer one that starts
/// with it: 198.18.1.2 is not 198.18.1.23).
fn names_address(error: &str, ip: &str) -> bool {
    error.match_indices(ip).any(|(at, _)| {
        !error[at + ip.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

impl Observation {
    /// How many failed requests had `cause`.
    #[allow(dead_code)] // the real mode's
    pub fn failed_for(&self, cause: &str) -> usize {
        self.failed_by_cause.get(cause).copied().unwrap_or(0)
    }
}
