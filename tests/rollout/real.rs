//! The harness's real mode (docs/rollout-harness.md, "Real mode"): every
//! pod runs ASO 2.20.0's own manager (tests/aso-manager), on a control
//! plane of its own per scenario, because the ASO CRDs and the webhook
//! configurations are cluster-wide and each scenario writes them:
//!   - an API server whose "cluster" egress (webhook and conversion calls)
//!     goes through the node agent's cluster proxy (`node-agent proxy`,
//!     which plays kube-proxy) into the pods' network namespaces;
//!   - the real kube-controller-manager, as in the modelled mode;
//!   - the ASO CRD subset of the previous release, as its install left it;
//!   - one node agent in real mode: the kubelet, cert-manager and a client
//!     making users' requests, counted per upgrade.

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::cluster::{Agent, Daemon, ROLLOUT, TIMING, node_agent, start_plane};
use crate::common::apiserver::{self, ApiServer, fixture};
use crate::common::{go_tool, root, text, tool};
use crate::one_shot::{OneShot, apply_at_once, wait_enforced};
use crate::paths::{ApplyPath, KUBECTL, Planned, Sequence};
use crate::scenario::{
    Run, Topology, UPSTREAM, now_ms, settle_within, template, version_of, watch_upgrade,
};

/// How long one upgrade step may take in the real mode: above the
/// startup probe's budget (12 x 10 s), so that a pod stuck at start is
/// seen restarted, and far above a real rollout here (about a minute).
pub const REAL_STEP_LIMIT: Duration = Duration::from_secs(170);

/// Each user's interval between requests outside a burst (four users;
/// tests/kube-apiserver/cmd/node-agent/traffic.go).
const TRAFFIC_EVERY: &str = "1s";

/// The releases the real mode plays, built once: ASO 2.20.0's manager, the
/// next release's (derived from ASO's module by
/// tests/aso-manager/next-release.py: ResourceGroup gains the API version
/// v1api20240301, whose storage variant is the new hub and storage
/// version), and the CRD folders, one per release's image tag.
pub struct Releases {
    /// ASO 2.20.0's manager (the catalog's release).
    pub manager: PathBuf,
    /// The next release's manager.
    pub next_manager: PathBuf,
    /// The next release's image tag (its CRD folder's name).
    pub next_tag: String,
    /// One folder of CRD files per image tag.
    pub crds: PathBuf,
}

/// The releases, built on first use.
pub fn releases() -> &'static Releases {
    static BUILT: OnceLock<Releases> = OnceLock::new();
    BUILT.get_or_init(|| {
        let manager = apiserver::build_with("tests/aso-manager/aso-manager", "ASO's manager");
        let next_manager = PathBuf::from(aso_manager("next"));
        let crds = PathBuf::from(aso_manager("crds"));
        let catalog = catalog_tag();
        let mut others: Vec<String> = std::fs::read_dir(&crds)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|tag| *tag != catalog)
            .collect();
        assert!(
            others.len() == 1,
            "tests/aso-manager/aso-manager crds gives the catalog's release {catalog} and one next release, not {others:?}"
        );
        Releases {
            manager,
            next_manager,
            next_tag: others.remove(0),
            crds,
        }
    })
}

/// The next release's image tag (tests/aso-manager/aso-manager's NEXT_VERSION).
pub fn next_tag() -> &'static str {
    &releases().next_tag
}

/// What `tests/aso-manager/aso-manager COMMAND` prints (a path).
fn aso_manager(command: &str) -> String {
    let script = root().join("tests/aso-manager/aso-manager");
    let out = tool("bash")
        .arg(&script)
        .arg(command)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", script.display()));
    assert!(
        out.status.success(),
        "tests/aso-manager/aso-manager {command} failed (above)"
    );
    text(&out.stdout).trim().to_string()
}

/// cert-manager's CA injector (tests/cert-manager: the injection code of
/// cert-manager v1.21.2's root module over a controller-runtime manager),
/// built on first use.
pub fn cainjector() -> PathBuf {
    go_tool(
        "tests/cert-manager",
        &["go.mod", "go.sum", "cmd/cainjector/main.go"],
        "./cmd/cainjector",
        "cainjector",
        "the real-manager tests run cert-manager's CA injection with it",
    )
}

/// Fails with what is missing unless this process can give a pod its own
/// network and mount namespaces (root, and util-linux's `unshare`).
fn can_make_namespaces() {
    let out = tool("unshare").args(["--net", "--mount", "true"]).output();
    match out {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "the real-manager tests run each pod in network and mount namespaces of its own, which needs root: `unshare --net --mount true` failed: {}",
            text(&out.stderr).trim()
        ),
        Err(err) => panic!("the real-manager tests need util-linux's unshare: {err}"),
    }
}

/// One scenario's control plane; everything stops when it is dropped.
pub struct RealPlane {
    /// Its own API server.
    pub server: ApiServer,
    _daemons: Vec<Daemon>,
    proxy: Child,
    _proxy_stdin: ChildStdin,
    /// Where the pods publish their sandboxes and keep their roots
    /// (None once kept).
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl RealPlane {
    /// Starts a control plane for one real scenario.
    pub fn start() -> RealPlane {
        can_make_namespaces();
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("proxy.sock");
        let egress = dir.path().join("egress.yaml");
        std::fs::write(
            &egress,
            format!(
                "apiVersion: apiserver.k8s.io/v1beta1\nkind: EgressSelectorConfiguration\n\
                 egressSelections:\n- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n\
                 \x20   transport:\n      uds:\n        udsName: {}\n",
                socket.display()
            ),
        )
        .unwrap();
        let server = apiserver::start_with(&[format!(
            "--egress-selector-config-file={}",
            egress.display()
        )]);
        let mut daemons = start_plane(&server, &ROLLOUT);
        std::fs::create_dir_all(dir.path().join("sandboxes")).unwrap();
        let mut proxy = tool(node_agent())
            .arg("proxy")
            .arg(format!("--kubeconfig={}", server.kubeconfig.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!(
                "--sandboxes={}",
                dir.path().join("sandboxes").display()
            ))
            .arg(format!(
                "--out={}",
                dir.path().join("proxy.jsonl").display()
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the cluster proxy");
        let proxy_stdin = proxy.stdin.take().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "the cluster proxy did not start");
            assert!(
                proxy.try_wait().unwrap().is_none(),
                "the cluster proxy exited"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server.kubectl_ok(
            &["apply", "--server-side", "-f", "-"],
            &fixture("tests/fixtures/apiserver/crds.yaml"),
        );
        // cert-manager's own injection code puts the CA into the CRDs
        // and webhook configurations (the agent plays only the issuer)
        daemons.push(Daemon::start(
            "cainjector",
            &cainjector(),
            &[format!("--kubeconfig={}", server.kubeconfig.display())],
        ));
        RealPlane {
            server,
            _daemons: daemons,
            proxy,
            _proxy_stdin: proxy_stdin,
            path: dir.path().to_path_buf(),
            dir: Some(dir),
        }
    }

    /// Installs the CRD subset as release `tag` labels it, for an operator
    /// in `namespace` (whose manager rewrites the conversion webhook's
    /// namespace so when it applies them).
    pub fn install_crds(&self, tag: &str, namespace: &str) {
        let folder = releases().crds.join(tag);
        let mut stream = String::new();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let yaml = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            stream.push_str("---\n");
            stream.push_str(&yaml.replace("azureserviceoperator-system", namespace));
        }
        self.server
            .kubectl_ok(&["apply", "--server-side", "-f", "-"], &stream);
    }

    /// Starts the node agent in real mode for `namespace`.
    pub fn agent(&self, namespace: &str) -> Agent {
        let releases = releases();
        let work = self.path.join("pods");
        let flags = [
            format!("--manager={}", releases.manager.display()),
            format!(
                "--manager-for={}={}",
                releases.next_tag,
                releases.next_manager.display()
            ),
            format!("--crds={}", releases.crds.display()),
            format!("--sandboxes={}", self.path.join("sandboxes").display()),
            format!("--work={}", work.display()),
            "--subnet=1".to_string(),
            format!("--traffic={TRAFFIC_EVERY}"),
            format!("--probe-socket={}", self.path.join("proxy.sock").display()),
            // the agent deletes a pod once its container stopped
            "--grace-delay=0s".to_string(),
            // cert-manager's cainjector runs beside (RealPlane::start)
            "--inject-ca=false".to_string(),
        ];
        Agent::start_with(&self.server, namespace, &TIMING, &flags)
    }

    /// The pods' folders (roots and the managers' logs).
    pub fn pods(&self) -> PathBuf {
        self.path.join("pods")
    }

    /// What the cluster proxy could not route in [start, end], first ones
    /// first: the reason behind a request that failed with its 503.
    pub fn proxy_errors(&self, start: i64, end: i64) -> Vec<String> {
        let log = std::fs::read_to_string(self.path.join("proxy.jsonl")).unwrap_or_default();
        log.lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|e| e["error"].is_string())
            .filter(|e| e["t"].as_i64().is_some_and(|t| (start..=end).contains(&t)))
            .take(8)
            .map(|e| format!("{} {}: {}", e["t"], e["target"], e["error"]))
            .collect()
    }

    /// The running sandboxes: each pod address with the pid of the
    /// process in that pod's network namespace.
    pub fn sandboxes(&self) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(self.path.join("sandboxes"))
            .unwrap()
            .flatten()
        {
            if let Ok(pid) = std::fs::read_to_string(entry.path()) {
                let ip = entry.file_name().to_string_lossy().into_owned();
                out.push((ip, pid.trim().parse().unwrap()));
            }
        }
        out
    }

    /// Keeps the folder (the managers' logs) after the plane stops.
    fn keep(&mut self) -> PathBuf {
        if let Some(dir) = self.dir.take() {
            let _ = dir.keep();
        }
        self.path.clone()
    }
}

impl Drop for RealPlane {
    fn drop(&mut self) {
        let _ = self.proxy.kill();
        let _ = self.proxy.wait();
        if std::thread::panicking() {
            eprintln!("the managers' logs: {}", self.keep().join("pods").display());
        }
    }
}

/// The cluster-scoped objects of a render: its RBAC and its webhook
/// configurations, and its guards' admission policies and bindings when
/// `guards` (a plane of its own per scenario, so nothing else meets them).
fn cluster_objects(args: &[String], guards: Guards) -> String {
    template(args)
        .into_iter()
        .filter(|o| {
            let kind = o["kind"].as_str().unwrap_or_default();
            matches!(
                kind,
                "ClusterRole"
                    | "ClusterRoleBinding"
                    | "MutatingWebhookConfiguration"
                    | "ValidatingWebhookConfiguration"
            ) || (guards == Guards::On && kind.starts_with("ValidatingAdmissionPolicy"))
        })
        .map(|o| format!("---\n{}\n", serde_json::to_string(&o).unwrap()))
        .collect()
}

/// What a real scenario gives the test: the run, and its plane (kept for
/// the managers' logs).
pub struct RealRun {
    /// As the modelled mode's.
    pub run: Run,
    /// When the observation window ended (Unix ms).
    pub end: i64,
    /// What the one-shot apply met, for a one-shot scenario.
    pub shot: Option<Shot>,
    namespace: String,
    plane: Option<RealPlane>,
}

/// What a one-shot apply met ([`real_one_shot`]).
#[derive(Debug, Clone)]
pub struct Shot {
    /// The first apply's stderr: empty when all of it was accepted.
    pub first: String,
    /// Whether the first apply left the controller at the old version.
    pub controller_kept: bool,
    /// How many times the apply ran after the webhooks rolled out.
    pub reapplied: usize,
}

impl RealRun {
    /// A summary for assertion messages: the run's, the failed requests'
    /// first errors and where the managers' logs are.
    pub fn describe(&self) -> String {
        let errors = self.run.timeline.request_errors(self.run.start, self.end);
        // the plane keeps its folder if the test fails (RealPlane's drop)
        let logs = self.plane.as_ref().map(RealPlane::pods).unwrap_or_default();
        let proxy = self
            .plane
            .as_ref()
            .map(|plane| plane.proxy_errors(self.run.start, self.end))
            .unwrap_or_default();
        let by_cause = self
            .run
            .timeline
            .first_error_by_cause(self.run.start, self.end);
        format!(
            "{}\nfailed requests ({}), the first of each cause: {by_cause:#?}\nthe first ones: {:#?}\nwhat the cluster proxy could not route meanwhile: {:#?}\nmanagers' logs: {}",
            self.run.describe(),
            errors.len(),
            &errors[..errors.len().min(8)],
            proxy,
            logs.display()
        )
    }

    /// The managers' logs folder, while the plane runs.
    pub fn logs(&self) -> Option<PathBuf> {
        self.plane.as_ref().map(RealPlane::pods)
    }

    /// The operator's namespace.
    pub fn namespace(&self) -> String {
        self.namespace.clone()
    }

    /// The plane's API server, while it runs.
    pub fn server(&self) -> &ApiServer {
        &self.plane.as_ref().expect("the plane runs").server
    }

    /// The admission policies bound on the plane (the guards, when on).
    pub fn bound_policies(&self) -> Vec<String> {
        let out = self.server().kubectl_ok(
            &[
                "get",
                "validatingadmissionpolicybindings",
                "-o",
                "jsonpath={.items[*].spec.policyName}",
            ],
            "",
        );
        out.split_whitespace().map(str::to_string).collect()
    }
}

/// An install of the previous release on a plane of its own, settled.
pub struct Installed {
    /// The plane.
    pub plane: RealPlane,
    /// Its node agent.
    pub agent: Agent,
    /// The operator's namespace.
    pub namespace: String,
}

/// Whether a scenario's plane has the guards asogen renders (the
/// admission policies and their bindings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guards {
    /// Applied with the install, as a user applies the whole render.
    On,
    /// Left out: a negative test, or a shape the guards would refuse
    /// (rendered past the rules).
    Off,
}

impl Guards {
    /// On for the shapes asogen renders, off for a what-if or a negative
    /// (a tweak the guards exist to refuse).
    pub fn for_topology(topology: &Topology) -> Guards {
        if topology.tweak.is_none() {
            Guards::On
        } else {
            Guards::Off
        }
    }
}

/// Installs `topology` at image tag `tag` (its CRDs at that release)
/// through `path` on a plane of its own with the real manager, with its
/// guards when `guards`, and waits until it settled.
pub fn real_install(topology: &Topology, path: &ApplyPath, tag: &str, guards: Guards) -> Installed {
    let plane = RealPlane::start();
    let server = &plane.server;
    let namespace = server.fresh_namespace(&format!("real-{}", path.via));
    let previous_args = topology.args(&namespace, Some(tag), &[]);
    plane.install_crds(tag, &namespace);
    server.kubectl_ok(
        &["apply", "--server-side", "-f", "-"],
        &cluster_objects(&previous_args, guards),
    );
    let mut agent = plane.agent(&namespace);
    // real pods start on real probe periods, several planes at once
    settle_within(
        server,
        &mut agent,
        &namespace,
        topology,
        &previous_args,
        path,
        REAL_STEP_LIMIT,
    );
    // settled as users see it too: cainjector has put the CA into every
    // webhook configuration and CRD, and the proxy (which lags the
    // EndpointSlices) routes to a serving pod
    let settled = now_ms();
    wait_for_ca(server);
    assert!(
        agent
            .wait_for(Duration::from_secs(60), |t| t.probe_ok_since(settled))
            .is_some(),
        "the webhook Service takes no connection after the install settled: {}",
        agent.events().display()
    );
    Installed {
        plane,
        agent,
        namespace,
    }
}

/// Installs `topology` at the catalog's release (ASO 2.20.0) on a plane of
/// its own with the real manager, upgrades it to the next release through
/// `path` (each wait giving up after `limit`), and observes. The guards
/// are on for a shape asogen renders ([`Guards::for_topology`]).
pub fn real_upgrade(topology: &Topology, path: &ApplyPath, limit: Duration) -> RealRun {
    let guards = Guards::for_topology(topology);
    real_change(
        topology,
        path,
        &catalog_tag(),
        next_tag(),
        &[],
        limit,
        guards,
    )
}

/// Installs `topology` at the next release and moves it back to the
/// catalog's (ASO 2.20.0), whose types do not know the next release's
/// storage version, through `path`, with or without its guards, and
/// observes.
pub fn real_downgrade(
    topology: &Topology,
    path: &ApplyPath,
    limit: Duration,
    guards: Guards,
) -> RealRun {
    real_change(
        topology,
        path,
        next_tag(),
        &catalog_tag(),
        &[],
        limit,
        guards,
    )
}

/// Installs `topology` at image tag `from`, then applies it at tag `to`
/// with `extra` values arguments through `path`, and observes as
/// [`real_upgrade`] does.
pub fn real_change(
    topology: &Topology,
    path: &ApplyPath,
    from: &str,
    to: &str,
    extra: &[&str],
    limit: Duration,
    guards: Guards,
) -> RealRun {
    let change = Change {
        migration: false,
        sequence: Sequence::AsPlanned,
        guards,
        crds_by_the_path: false,
    };
    scenario(topology, topology, path, (from, to), extra, change, limit)
}

/// Upgrades `topology` from the catalog's release to the next one through
/// `path` as `change` says, each wait giving up after the real step limit.
fn to_the_next_release(topology: &Topology, path: &ApplyPath, change: Change) -> RealRun {
    let from = catalog_tag();
    scenario(
        topology,
        topology,
        path,
        (&from, next_tag()),
        &[],
        change,
        REAL_STEP_LIMIT,
    )
}

/// Upgrades `topology` from the catalog's release to the next one with the
/// plan's steps in reverse order (the controller first), as an applier
/// with no order would, with no admission policy to refuse it.
pub fn real_upgrade_controller_first(topology: &Topology, path: &ApplyPath) -> RealRun {
    let change = Change {
        migration: false,
        sequence: Sequence::Reversed,
        guards: Guards::Off,
        crds_by_the_path: false,
    };
    to_the_next_release(topology, path, change)
}

/// Upgrades `topology` (whose controller leaves the CRDs alone,
/// `SPLIT_CRDS_BY_THE_PATH`) from the catalog's release to the next one
/// through `path`, the path applying the next release's CRDs with
/// server-side apply just before the controller's step, as a user's
/// pipeline would: the what-if that takes the CA window away.
pub fn real_upgrade_with_crds_by_the_path(topology: &Topology, path: &ApplyPath) -> RealRun {
    let change = Change {
        migration: false,
        sequence: Sequence::AsPlanned,
        guards: Guards::for_topology(topology),
        crds_by_the_path: true,
    };
    to_the_next_release(topology, path, change)
}

/// The careless one-shot upgrade (docs/split-topology.md section 6) with
/// the real manager: `topology` installed at the catalog's release through
/// the kubectl plan, then the whole next release applied in one
/// `kubectl apply`, with or without the guards; guarded, the refused
/// apply is run again once the webhooks rolled out.
pub fn real_one_shot(topology: &Topology, guards: Guards) -> RealRun {
    let catalog = catalog_tag();
    let Installed {
        plane,
        agent,
        namespace,
    } = real_install(topology, &KUBECTL, &catalog, guards);
    let server = &plane.server;
    let current_args = topology.args(&namespace, Some(next_tag()), &[]);
    let current = topology.render(&current_args, &namespace);
    let target = version_of(&current);
    if guards == Guards::On {
        wait_enforced(server, &namespace, &current);
    }
    let OneShot {
        first,
        controller_kept,
        reapplied,
        run,
    } = apply_at_once(
        server,
        agent,
        &namespace,
        &current,
        (&catalog, &target),
        REAL_STEP_LIMIT,
    );
    RealRun {
        run,
        end: now_ms(),
        namespace,
        plane: Some(plane),
        shot: Some(Shot {
            first,
            controller_kept,
            reapplied,
        }),
    }
}

/// Installs `install` at the catalog's tag, then moves it to the topology
/// `to` at the same tag through `path` with the migration plan
/// (`upgrade-plan --from`), and observes.
#[allow(dead_code)] // the migrations are in the real table only (bench/tables.rs)
pub fn real_migrate(install: &Topology, to: &Topology, path: &ApplyPath) -> RealRun {
    let tag = catalog_tag();
    let change = Change {
        migration: true,
        sequence: Sequence::AsPlanned,
        guards: Guards::for_topology(to),
        crds_by_the_path: false,
    };
    scenario(
        install,
        to,
        path,
        (&tag, &tag),
        &[],
        change,
        REAL_STEP_LIMIT,
    )
}

/// The catalog's image tag (ASO 2.20.0: the release the harness upgrades
/// from, and the one it downgrades to).
pub fn catalog_tag() -> String {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let args = UPSTREAM.args("default", None, &[]);
        version_of(&UPSTREAM.render(&args, "default"))
    })
    .clone()
}

/// How a scenario changes its install.
struct Change {
    /// A move to another topology (`upgrade-plan --from`).
    migration: bool,
    /// Which of the plan's steps run, in which order.
    sequence: Sequence,
    /// Whether the guards are applied with the install.
    guards: Guards,
    /// Whether the path applies the new release's CRDs (server-side, just
    /// before the controller's step) instead of the controller's manager.
    crds_by_the_path: bool,
}

/// Installs `install` at tag `from`, then applies `to` at tag `to_tag`
/// as `change` says.
fn scenario(
    install: &Topology,
    to: &Topology,
    path: &ApplyPath,
    (from, to_tag): (&str, &str),
    extra: &[&str],
    change: Change,
    limit: Duration,
) -> RealRun {
    let Installed {
        plane,
        mut agent,
        namespace,
    } = real_install(install, path, from, change.guards);
    let server = &plane.server;
    let current_args = to.args(&namespace, Some(to_tag), extra);
    let target = version_of(&to.render(&current_args, &namespace));
    if change.migration {
        server.kubectl_ok(
            &["apply", "--server-side", "-f", "-"],
            &cluster_objects(&current_args, change.guards),
        );
    }
    let apply_crds = || plane.install_crds(to_tag, &namespace);
    let upgrade = Planned {
        args: &current_args,
        tweak: to.tweak,
        with_refresh: false,
        sequence: change.sequence,
        from: change.migration.then_some(install.shape),
        before_controller: change
            .crds_by_the_path
            .then_some(&apply_crds as &(dyn Fn() + Sync)),
    };
    let watched = watch_upgrade(
        server, &mut agent, &namespace, path, &upgrade, &target, limit,
    );
    RealRun {
        run: Run {
            start: watched.start,
            observation: watched.observation,
            outcome: watched.outcome,
            timeline: watched.timeline,
            agent,
        },
        end: watched.end,
        shot: None,
        namespace,
        plane: Some(plane),
    }
}

/// Waits until every webhook and the CRDs' conversion webhooks carry a CA
/// bundle (cert-manager's cainjector puts it there after the install; with
/// the release's every CRD, `ASOGEN_ASO_CRD_GROUPS=all`, that takes
/// minutes, so the wait is the real step limit).
fn wait_for_ca(server: &ApiServer) {
    let deadline = Instant::now() + REAL_STEP_LIMIT;
    loop {
        let bundles = server.kubectl_ok(
            &[
                "get",
                "validatingwebhookconfigurations,mutatingwebhookconfigurations",
                "-o",
                "jsonpath={range .items[*].webhooks[*]}[{.clientConfig.caBundle}]{end}",
            ],
            "",
        );
        let crds = server.kubectl_ok(
            &[
                "get",
                "crd",
                "-l",
                "app.kubernetes.io/name=azure-service-operator",
                "-o",
                "jsonpath={range .items[*]}[{.spec.conversion.webhook.clientConfig.caBundle}]{end}",
            ],
            "",
        );
        let all = format!("{bundles}{crds}");
        let (places, missing) = (all.matches('[').count(), all.matches("[]").count());
        if places > 0 && missing == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "cert-manager's cainjector did not inject the CA within {} s: {missing} of {places} webhooks and CRDs without a bundle",
            REAL_STEP_LIMIT.as_secs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The version label of the CRDs on `server` now.
pub fn crd_versions(server: &ApiServer) -> Vec<String> {
    let out = server.kubectl_ok(
        &[
            "get",
            "crd",
            "-l",
            "app.kubernetes.io/name=azure-service-operator",
            "-o",
            "jsonpath={.items[*].metadata.labels.app\\.kubernetes\\.io/version}",
        ],
        "",
    );
    out.split_whitespace().map(str::to_string).collect()
}

/// What the managers logged (every start of every pod), for assertions.
pub fn manager_logs(pods: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(pods).into_iter().flatten().flatten() {
        let log = entry.path().join("manager.log");
        if let Ok(text) = std::fs::read_to_string(&log) {
            all.push_str(&format!(
                "==== {}\n{text}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    all
}
