//! The careless one-shot `helm upgrade` (docs/split-topology.md section 6)
//! with the real Helm v4 CLI ([`crate::common::helm_cli`]), not the Helm
//! path's imitation by kubectl: a split install made by `helm install` of
//! the generated chart at the previous tag, then one `helm upgrade` to the
//! catalog's, no plan followed (no `split.controller.paused` step). The
//! ordering guard comes with the release (its policies and bindings are
//! cluster-scoped, named for the release namespace). Helm v4 writes by
//! server-side apply: `helm install --server-side` is true by default and
//! `helm upgrade --server-side=auto` (the default) keeps the method the
//! release was last applied with.

use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::{Agent, TIMING, control_plane};
use crate::common::apiserver::{ApiServer, install_crds};
use crate::common::{chart, helm_cli, root, text, tool};
use crate::one_shot::{CONTROLLER, RULE, WEBHOOKS, manager_image, rollout_status, wait_enforced};
use crate::paths::Outcome;
use crate::scenario::{
    PREVIOUS_TAG, Run, STEP_LIMIT, Topology, now_ms, version_of, webhook_deployments,
};

/// The release name (asogen's default: the same instance label).
const RELEASE: &str = "azure-service-operator";

/// What the one `helm upgrade` did, and the same upgrade run again.
pub struct HelmOneShot {
    /// Whether the first `helm upgrade` exited 0.
    pub first_ok: bool,
    /// Its stderr.
    pub first: String,
    /// The release's status after it and how Helm applied it (`helm
    /// status`: "failed" when Helm rolled nothing back; "ssa" or "csa").
    pub status_after_first: (String, String),
    /// The manager images after it: (webhooks, controller).
    pub images_after_first: (String, String),
    /// The versions of the controller's pods the agent saw once the
    /// webhooks Deployment had rolled out, before the upgrade ran again.
    pub controller_pods_before_retry: Vec<String>,
    /// How many times `helm upgrade` ran after the webhooks rolled out
    /// until it passed (the guard reads the webhooks Deployment from a
    /// cache a moment behind).
    pub reupgraded: usize,
    /// The controller's manager image at the end.
    pub controller_image: String,
    /// The upgrade as the node agent saw it.
    pub run: Run,
}

/// The real Helm CLI against the test API server, its configuration,
/// data and cache in a folder of its own, run in the repository root (the
/// topologies' values files are relative to it).
struct Helm {
    home: tempfile::TempDir,
    kubeconfig: String,
}

impl Helm {
    fn new(server: &ApiServer) -> Helm {
        Helm {
            home: tempfile::tempdir().unwrap(),
            kubeconfig: server.kubeconfig.display().to_string(),
        }
    }

    fn run(&self, args: &[String]) -> Output {
        let home = self.home.path();
        tool(helm_cli())
            .args(args)
            .arg(format!("--kubeconfig={}", self.kubeconfig))
            .current_dir(root())
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_DATA_HOME", home.join("data"))
            .output()
            .expect("helm runs")
    }

    /// `helm VERB RELEASE CHART VALUES --wait=watcher --timeout=...`, the
    /// values arguments as [`Topology::args`] makes them (`-n`, `-f`,
    /// `--set`: Helm takes them as asogen does).
    fn release(&self, verb: &str, values: &[String], extra: &[&str]) -> Output {
        let mut args: Vec<String> = vec![verb.into(), RELEASE.into(), chart()];
        args.extend(values.iter().cloned());
        args.extend(extra.iter().map(|a| a.to_string()));
        args.extend([
            "--wait=watcher".into(),
            format!("--timeout={}s", STEP_LIMIT.as_secs()),
        ]);
        self.run(&args)
    }

    fn upgrade(&self, values: &[String]) -> Output {
        // the values as given, not the install's --set image.tag
        self.release("upgrade", values, &["--reset-values"])
    }

    /// The release's status and apply method, as `helm status -o json`
    /// prints them.
    fn status(&self, namespace: &str) -> (String, String) {
        let out = self.run(&[
            "status".into(),
            RELEASE.into(),
            "-n".into(),
            namespace.into(),
            "-o".into(),
            "json".into(),
        ]);
        assert!(out.status.success(), "helm status: {}", text(&out.stderr));
        let status: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
        let field = |v: &Value| v.as_str().unwrap_or_default().to_string();
        (
            field(&status["info"]["status"]),
            field(&status["apply_method"]),
        )
    }
}

/// Installs `topology` with `helm install` at the previous tag and waits
/// until it settled; runs one `helm upgrade` to the catalog's tag; once
/// the webhooks Deployment rolled out, runs the same `helm upgrade` until
/// it passes.
pub fn one_helm_upgrade(topology: &Topology) -> HelmOneShot {
    let server = control_plane();
    install_crds(server);
    let namespace = server.fresh_namespace("rollout-helm-cli");
    let helm = Helm::new(server);
    let previous_args = topology.args(&namespace, Some(PREVIOUS_TAG), &[]);
    let current_args = topology.args(&namespace, None, &[]);
    let previous = topology.render(&previous_args, &namespace);
    let current = topology.render(&current_args, &namespace);
    let (before, target) = (version_of(&previous), version_of(&current));
    assert_ne!(before, target, "the catalog's tag is the previous one");
    let routed = webhook_deployments(&previous);
    let mut agent = Agent::start(server, &namespace, &TIMING);

    let installed = helm.release("install", &previous_args, &[]);
    assert!(
        installed.status.success(),
        "helm install: {}; events: {}",
        text(&installed.stderr),
        agent.events().display()
    );
    assert!(
        agent
            .wait_for(STEP_LIMIT, |t| t.settled(&before, &routed))
            .is_some(),
        "the install never settled; events: {}",
        agent.events().display()
    );
    wait_enforced(server, &namespace, &current);

    let start = now_ms();
    let first = helm.upgrade(&current_args);
    let status_after_first = helm.status(&namespace);
    let images_after_first = (
        manager_image(server, &namespace, WEBHOOKS),
        manager_image(server, &namespace, CONTROLLER),
    );
    let first_stderr = text(&first.stderr);
    let mut reupgraded = 0;
    let mut controller_pods_before_retry = Vec::new();
    let outcome = if first.status.success() {
        Outcome::Done
    } else {
        assert!(
            rollout_status(server, &namespace, WEBHOOKS, STEP_LIMIT),
            "the webhooks never rolled out: {first_stderr}"
        );
        controller_pods_before_retry = agent
            .timeline()
            .pods_now()
            .iter()
            .filter(|p| p.deployment == CONTROLLER)
            .map(|p| p.version.clone())
            .collect();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            reupgraded += 1;
            let again = helm.upgrade(&current_args);
            let stderr = text(&again.stderr);
            if again.status.success() {
                break Outcome::Done;
            }
            if !stderr.contains(RULE) || Instant::now() >= deadline {
                break Outcome::GaveUp(format!("helm upgrade, run again: {stderr}"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    HelmOneShot {
        first_ok: first.status.success(),
        first: first_stderr,
        status_after_first,
        images_after_first,
        controller_pods_before_retry,
        reupgraded,
        controller_image: manager_image(server, &namespace, CONTROLLER),
        run: Run::after_rollout(
            server,
            &namespace,
            agent,
            (start, &target),
            STEP_LIMIT,
            outcome,
        ),
    }
}
