//! The careless one-shot apply (docs/split-topology.md section 6): a split
//! install upgraded by applying the whole new-version manifest at once
//! with `kubectl apply`, no plan followed. With the ordering guard
//! (`split-controller-after-webhooks`, its policy and binding applied
//! beside the install: they are cluster-scoped, named for the scenario's
//! namespace) the controller's update is refused and everything else
//! applied; the same apply, run again once the webhooks Deployment has
//! rolled out, finishes the upgrade. Without it both Deployments change at
//! once.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::cluster::{Agent, TIMING, control_plane};
use crate::common::apiserver::{ApiServer, install_crds};
use crate::common::{asogen, text};
use crate::paths::{KUBECTL, Outcome, Planned, Sequence};
use crate::scenario::{
    PREVIOUS_TAG, Run, STEP_LIMIT, Topology, now_ms, version_of, webhook_deployments,
};

/// The rule id of the ordering guard's refusals.
pub const RULE: &str = "split-controller-after-webhooks";
/// The controller Deployment of the split.
pub const CONTROLLER: &str = "azureserviceoperator-controller-manager";
/// The webhooks Deployment of the split.
pub const WEBHOOKS: &str = "azureserviceoperator-webhooks";

/// What the one-shot apply did.
pub struct OneShot {
    /// The first apply's stderr (kubectl goes on past a refused object).
    pub first: String,
    /// Whether the first apply left the controller at the old version.
    pub controller_kept: bool,
    /// How many times the apply ran after the webhooks rolled out until
    /// it was accepted (the guard reads the webhooks Deployment from a
    /// cache a moment behind).
    pub reapplied: usize,
    /// The upgrade as the node agent saw it.
    pub run: Run,
}

/// `asogen template` of `args`, every object.
fn render(args: &[String]) -> Vec<Value> {
    let mut all = vec!["template"];
    all.extend(args.iter().map(String::as_str));
    let out = asogen(&all);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_yaml::Deserializer::from_str(&text(&out.stdout))
        .map(|d| Value::deserialize(d).unwrap())
        .collect()
}

fn stream(objects: &[Value]) -> String {
    objects
        .iter()
        .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
        .collect()
}

/// `kubectl apply --server-side --force-conflicts` (as the kubectl path,
/// and the README's quick start) of `objects`.
fn apply(server: &ApiServer, namespace: &str, objects: &[Value]) -> Result<(), String> {
    let out = server.kubectl(
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=kubectl",
            "-n",
            namespace,
            "-f",
            "-",
        ],
        &stream(objects),
    );
    if out.status.success() {
        Ok(())
    } else {
        Err(text(&out.stderr))
    }
}

/// The manager container's image of the live Deployment `name`.
pub fn manager_image(server: &ApiServer, namespace: &str, name: &str) -> String {
    server.kubectl_ok(
        &[
            "get",
            "deployment",
            name,
            "-n",
            namespace,
            "-o",
            "jsonpath={.spec.template.spec.containers[?(@.name=='manager')].image}",
        ],
        "",
    )
}

/// Whether `kubectl rollout status` of the Deployment `name` ends well
/// within `limit`.
pub fn rollout_status(server: &ApiServer, namespace: &str, name: &str, limit: Duration) -> bool {
    let timeout = format!("--timeout={}s", limit.as_secs());
    let target = format!("deployment/{name}");
    server
        .kubectl(
            &["rollout", "status", &target, "-n", namespace, &timeout],
            "",
        )
        .status
        .success()
}

/// Installs `topology` at the previous tag through the kubectl plan, then
/// applies the catalog's version in one `kubectl apply`, with the ordering
/// guard in place when `guarded`; then, guarded, waits for the webhooks
/// and applies the same again until it is accepted.
pub fn one_shot(topology: &Topology, guarded: bool) -> OneShot {
    let server = control_plane();
    install_crds(server);
    let namespace = server.fresh_namespace("rollout-one-shot");
    let previous_args = topology.args(&namespace, Some(PREVIOUS_TAG), &[]);
    let current_args = topology.args(&namespace, None, &[]);
    let previous = topology.render(&previous_args, &namespace);
    let current = topology.render(&current_args, &namespace);
    let (before, target) = (version_of(&previous), version_of(&current));
    let routed = webhook_deployments(&previous);
    let mut agent = Agent::start(server, &namespace, &TIMING);
    let installing = Planned {
        args: &previous_args,
        tweak: None,
        with_refresh: false,
        sequence: Sequence::AsPlanned,
        from: None,
        before_controller: None,
    };
    let installed = KUBECTL.run(
        server,
        &mut agent,
        &namespace,
        &installing,
        &before,
        STEP_LIMIT,
        true,
    );
    assert!(matches!(installed, Outcome::Done), "{installed:?}");
    assert!(
        agent
            .wait_for(STEP_LIMIT, |t| t.settled(&before, &routed))
            .is_some(),
        "the install never settled; events: {}",
        agent.events().display()
    );
    if guarded {
        let prefix = "azureserviceoperator-order-";
        let guard: Vec<Value> = render(&current_args)
            .into_iter()
            .filter(|o| {
                o["kind"]
                    .as_str()
                    .is_some_and(|k| k.starts_with("ValidatingAdmissionPolicy"))
                    && o["metadata"]["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with(prefix) && n.ends_with(&namespace))
            })
            .collect();
        assert_eq!(guard.len(), 8, "the four order guards and their bindings");
        apply(server, &namespace, &guard).unwrap();
        wait_enforced(server, &namespace, &current);
    }
    apply_at_once(
        server,
        agent,
        &namespace,
        &current,
        (&before, &target),
        STEP_LIMIT,
    )
}

/// Applies `current` (the install at version `target`, from `before`) in
/// one `kubectl apply`; when an admission policy refuses part of it, waits
/// for the webhooks to roll out and applies the same again until it is
/// accepted. Each wait gives up after `limit`.
pub fn apply_at_once(
    server: &ApiServer,
    agent: Agent,
    namespace: &str,
    current: &[Value],
    (before, target): (&str, &str),
    limit: Duration,
) -> OneShot {
    let start = now_ms();
    let first = apply(server, namespace, current);
    let controller_kept =
        manager_image(server, namespace, CONTROLLER).ends_with(&format!(":{before}"));
    let mut reapplied = 0;
    let first = match first {
        Ok(()) => String::new(),
        Err(stderr) => {
            // the webhooks roll out (their old pods gone, as the guard
            // asks); then the same apply, again
            assert!(
                rollout_status(server, namespace, WEBHOOKS, limit),
                "the webhooks never rolled out: {stderr}"
            );
            let deadline = Instant::now() + limit;
            loop {
                reapplied += 1;
                match apply(server, namespace, current) {
                    Ok(()) => break,
                    Err(again) if again.contains(RULE) && Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    Err(again) => panic!("the apply after the webhooks rolled out: {again}"),
                }
            }
            stderr
        }
    };
    let outcome = if rollout_status(server, namespace, CONTROLLER, limit) {
        Outcome::Done
    } else {
        Outcome::GaveUp("the controller did not roll out".into())
    };
    OneShot {
        first,
        controller_kept,
        reapplied,
        run: Run::after_rollout(server, namespace, agent, (start, target), limit, outcome),
    }
}

/// Waits until the guard refuses the controller's new image (a
/// server-side dry run: admission sees it, nothing is stored).
pub fn wait_enforced(server: &ApiServer, namespace: &str, current: &[Value]) {
    let controller: Vec<Value> = current
        .iter()
        .filter(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == CONTROLLER)
        .cloned()
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = server.kubectl(
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=kubectl",
                "--dry-run=server",
                "-n",
                namespace,
                "-f",
                "-",
            ],
            &stream(&controller),
        );
        if !out.status.success() && text(&out.stderr).contains(RULE) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the order guard was never enforced: {}",
            text(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// What a first install of split in one apply did.
pub struct FirstInstall {
    /// The apply's stderr when it was refused in part.
    pub refused: Option<String>,
    /// The guards bound before it (policy names).
    pub guards: usize,
    /// Whether both Deployments rolled out.
    pub rolled_out: bool,
}

/// A first install of `topology` in one `kubectl apply` of `asogen
/// template --create-namespace` (docs/topologies.md, "A first install of
/// split"), on a namespace with nothing of ASO in it yet and every guard
/// of that namespace bound and enforced beforehand, as a cluster where
/// the guards came first would have them. Objects shared by the
/// scenarios' namespaces (ClusterRoles and their bindings, the webhook
/// configurations) are left out, as the other scenarios leave them out.
pub fn first_install(topology: &Topology) -> FirstInstall {
    let server = control_plane();
    install_crds(server);
    let namespace = server.fresh_namespace("rollout-first-install");
    let mut args = topology.args(&namespace, None, &[]);
    args.push("--create-namespace".into());
    let guard_of_namespace = |o: &Value| {
        o["kind"]
            .as_str()
            .is_some_and(|k| k.starts_with("ValidatingAdmissionPolicy"))
            && o["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with(&namespace))
    };
    let all = render(&args);
    let guards: Vec<Value> = all
        .iter()
        .filter(|o| guard_of_namespace(o))
        .cloned()
        .collect();
    let install: Vec<Value> = all
        .iter()
        .filter(|o| {
            o["metadata"]["namespace"] == namespace.as_str()
                || o["kind"] == "Namespace"
                || guard_of_namespace(o)
        })
        .cloned()
        .collect();
    let _agent = Agent::start(server, &namespace, &TIMING);
    apply(server, &namespace, &guards).unwrap();
    // enforced: a webhooks Deployment that leads, and a controller that
    // rolls, are refused (server-side dry runs)
    let breaches = [
        (WEBHOOKS, "split-webhooks-no-leader-election"),
        (CONTROLLER, "split-controller-never-rolls"),
    ];
    for (name, rule) in breaches {
        let mut breach = all
            .iter()
            .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == name)
            .unwrap()
            .clone();
        if name == WEBHOOKS {
            breach["spec"]["template"]["spec"]["containers"][0]["args"]
                .as_array_mut()
                .unwrap()
                .push("--enable-leader-election".into());
        } else {
            breach["spec"]["strategy"] = serde_json::json!({"type": "RollingUpdate"});
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = server.kubectl(
                &["create", "--dry-run=server", "-n", &namespace, "-f", "-"],
                &stream(&[breach.clone()]),
            );
            if !out.status.success() && text(&out.stderr).contains(rule) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{rule} was never enforced: {}",
                text(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    let refused = apply(server, &namespace, &install).err();
    let rolled_out = [WEBHOOKS, CONTROLLER]
        .iter()
        .all(|name| rollout_status(server, &namespace, name, STEP_LIMIT));
    FirstInstall {
        refused,
        guards: guards.len(),
        rolled_out,
    }
}

/// What the kubectl plan's printed commands did, run as printed.
pub struct AsPrinted {
    /// Every command run, in order, with its exit code and output when it
    /// failed.
    pub failed: Vec<String>,
    /// How many commands ran.
    pub ran: usize,
    /// The managers' image tags after the install, then after the upgrade
    /// (webhooks, controller).
    pub tags: [(String, String); 2],
    /// The upgrade as the node agent saw it.
    pub run: Run,
}

/// The new user's path of docs/topologies.md on kubectl, typed as the
/// docs and the plan print it: in an empty folder, a values file with the
/// previous release's tag; `asogen upgrade-plan --via kubectl --profile
/// split -n NS -f my-values.yaml`, and every `$` line it prints run in a
/// shell (asogen and kubectl on PATH), the first install with its
/// refresh; then the tag taken out of the values file and the plan printed
/// and run again, the version upgrade. The guards of the namespace come
/// with the manifests (the webhook configurations and ClusterRoles too).
pub fn kubectl_path_as_printed(asogen_dir: &std::path::Path) -> AsPrinted {
    let server = control_plane();
    install_crds(server);
    let namespace = server.fresh_namespace("rollout-as-printed");
    let work = tempfile::tempdir().unwrap();
    let identity = "azureSubscriptionID: 00000000-0000-0000-0000-00000000000a\nazureTenantID: 00000000-0000-0000-0000-00000000000b\n";
    let values = work.path().join("my-values.yaml");
    std::fs::write(
        &values,
        format!("{identity}image:\n  tag: {PREVIOUS_TAG}\n"),
    )
    .unwrap();
    let path = format!(
        "{}:{}:{}",
        asogen_dir.display(),
        crate::common::python_tools().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let agent = Agent::start(server, &namespace, &TIMING);
    let mut failed = Vec::new();
    let mut ran = 0;
    let mut follow_the_plan = || {
        let plan = crate::common::asogen_in(
            work.path(),
            &[
                "upgrade-plan",
                "--via",
                "kubectl",
                "--profile",
                "split",
                "-n",
                &namespace,
                "-f",
                "my-values.yaml",
            ],
        );
        assert!(plan.status.success(), "{}", text(&plan.stderr));
        for command in text(&plan.stdout)
            .lines()
            .filter_map(|line| line.trim().strip_prefix("$ "))
        {
            ran += 1;
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(command)
                .current_dir(work.path())
                .env("PATH", &path)
                .env("KUBECONFIG", &server.kubeconfig)
                .output()
                .unwrap();
            if !out.status.success() {
                failed.push(format!(
                    "`{command}`: {:?}\n{}{}",
                    out.status.code(),
                    text(&out.stdout),
                    text(&out.stderr)
                ));
            }
        }
    };
    let tags = |server: &ApiServer| {
        let tag = |name| {
            let image = manager_image(server, &namespace, name);
            image.rsplit(':').next().unwrap_or_default().to_string()
        };
        (tag(WEBHOOKS), tag(CONTROLLER))
    };
    follow_the_plan();
    let installed = tags(server);
    std::fs::write(&values, identity).unwrap();
    let start = now_ms();
    follow_the_plan();
    let upgraded = tags(server);
    let target = upgraded.1.clone();
    let outcome = if failed.is_empty() {
        Outcome::Done
    } else {
        Outcome::Refused(failed.join("\n"))
    };
    AsPrinted {
        failed,
        ran,
        tags: [installed, upgraded],
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
