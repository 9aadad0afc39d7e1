//! Topology split's ordering guard (`split-controller-after-webhooks`) on a
//! real kube-apiserver (tests/kube-apiserver): the split profile as
//! `asogen template` renders it, the webhooks Deployment's rollout played
//! by writing its status through the status subresource (no controller
//! manager runs here). The controller's image changes only once the
//! webhooks Deployment runs that image and has rolled out; it changes
//! freely at 0 replicas (the Helm plan's first step), and a change that
//! keeps the image passes. docs/split-topology.md section 6.

mod common;

use std::time::{Duration, Instant};

use common::apiserver::{ApiServer, install_crds, server};
use common::{asogen, root, text};
use serde::Deserialize;
use serde_json::{Value, json};

const RULE: &str = "split-controller-after-webhooks";
const WEBHOOKS: &str = "azureserviceoperator-webhooks";
const CONTROLLER: &str = "azureserviceoperator-controller-manager";
const OLD: &str = "v2.19.0";

/// The split profile at image tag [`OLD`] into a namespace of its own;
/// the namespace and the manager image of the catalog's tag.
fn install(server: &ApiServer) -> (String, String) {
    install_at(server, OLD)
}

/// The split profile at image tag `old` into a namespace of its own; the
/// namespace and the manager image of the catalog's tag.
fn install_at(server: &ApiServer, old: &str) -> (String, String) {
    let namespace = server.fresh_namespace("order-guard");
    let profile = root().join("values/profiles/split.yaml");
    let tag = format!("image.tag={old}");
    let out = asogen(&[
        "template",
        "-f",
        profile.to_str().unwrap(),
        "-n",
        &namespace,
        "--set",
        &tag,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stream = text(&out.stdout);
    let objects: Vec<Value> = serde_yaml::Deserializer::from_str(&stream)
        .map(|d| Value::deserialize(d).unwrap())
        .collect();
    let named = |name: &str| {
        objects
            .iter()
            .filter(|o| o["metadata"]["name"] == name)
            .count()
    };
    let guard = format!("azureserviceoperator-order-guard-{namespace}");
    assert_eq!(named(&guard), 2, "the order guard and its binding");
    let image = image_of(&objects, CONTROLLER).replace(old, "v2.20.0");
    let applied = server.kubectl(
        &[
            "apply",
            "--server-side",
            "--field-manager=order-guard-test",
            "-f",
            "-",
        ],
        &stream,
    );
    assert!(
        applied.status.success(),
        "the API server refused the split install:\n{}",
        text(&applied.stderr)
    );
    (namespace, image)
}

/// The manager container's image of Deployment `name` among `objects`.
fn image_of(objects: &[Value], name: &str) -> String {
    let deployment = objects
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no Deployment {name}"));
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "manager")
        .and_then(|c| c["image"].as_str())
        .expect("a manager container")
        .to_string()
}

struct Cluster<'a> {
    server: &'a ApiServer,
    namespace: String,
}

impl Cluster<'_> {
    fn live(&self, name: &str) -> Value {
        let out = self.server.kubectl_ok(
            &[
                "get",
                "deployment",
                name,
                "-n",
                &self.namespace,
                "-o",
                "json",
            ],
            "",
        );
        serde_json::from_str(&out).unwrap()
    }

    /// The webhooks Deployment at `image` (its template; a new generation).
    fn webhooks_template(&self, image: &str) {
        let set = format!("manager={image}");
        self.server.kubectl_ok(
            &[
                "set",
                "image",
                &format!("deployment/{WEBHOOKS}"),
                &set,
                "-n",
                &self.namespace,
            ],
            "",
        );
    }

    /// Writes the webhooks Deployment's status: `updated` and `available`
    /// of its replicas, `total` pods, observed at its generation (or the
    /// one before when `stale`).
    fn webhooks_status(&self, updated: i64, available: i64, total: i64, stale: bool) {
        let generation = self.live(WEBHOOKS)["metadata"]["generation"]
            .as_i64()
            .unwrap();
        let status = json!({"status": {
            "observedGeneration": generation - i64::from(stale),
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": available,
            "availableReplicas": available,
        }});
        self.server.kubectl_ok(
            &[
                "patch",
                "deployment",
                WEBHOOKS,
                "-n",
                &self.namespace,
                "--subresource=status",
                "--type=merge",
                "-p",
                &status.to_string(),
            ],
            "",
        );
    }

    /// A change of the controller: `kubectl ARGS -n NS`, server-side dry run.
    fn try_controller(&self, args: &[&str]) -> Result<String, String> {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["-n", &self.namespace, "--dry-run=server"]);
        self.server.attempt(&all)
    }

    /// The verdict on `args` once the guard's copy of the webhooks
    /// Deployment (an informer's, a moment behind) has caught up: the first
    /// that is `expected`, or the last after 20 s; stored when allowed.
    fn controller(&self, args: &[&str], expected: Verdict) -> Result<String, String> {
        let matches = |result: &Result<String, String>| match (result, expected) {
            (Ok(_), Verdict::Allowed) => true,
            (Err(stderr), Verdict::Refused(why)) => stderr.contains(why),
            _ => false,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut result = self.try_controller(args);
        while !matches(&result) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            result = self.try_controller(args);
        }
        if result.is_ok() {
            let mut all: Vec<&str> = args.to_vec();
            all.extend(["-n", &self.namespace]);
            result = self.server.attempt(&all);
        }
        result
    }
}

/// What the guard should answer.
#[derive(Clone, Copy)]
enum Verdict {
    Allowed,
    /// Refused, saying this.
    Refused(&'static str),
}

fn set_image(image: &str) -> [String; 4] {
    [
        "set".into(),
        "image".into(),
        format!("deployment/{CONTROLLER}"),
        format!("manager={image}"),
    ]
}

fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn the_controller_follows_the_webhooks() {
    let server = server();
    install_crds(server);
    let (namespace, new) = install(server);
    let cluster = Cluster { server, namespace };
    let old = new.replace("v2.20.0", OLD);
    let image = set_image(&new);
    let patch = |body: &str| {
        vec![
            "patch".to_string(),
            "deployment".into(),
            CONTROLLER.into(),
            "--type=strategic".into(),
            "-p".into(),
            body.into(),
        ]
    };
    let refused = |result: Result<String, String>, why: &str, step: &str| {
        let stderr = result.expect_err(step);
        assert!(
            stderr.contains("ValidatingAdmissionPolicy")
                && stderr.contains(&format!("{RULE}:"))
                && stderr.contains(why),
            "{step}: {stderr}"
        );
    };
    const OTHER_IMAGE: &str = "the webhooks Deployment runs another image";
    const NOT_DONE: &str = "the webhooks Deployment has not rolled out yet";
    const NO_IMAGE: &str = "a scale request cannot show the image";
    const DOWNGRADE: &str = "never moves to an older release than the controller";

    // (a) The webhooks complete at the old image: the controller's image
    // change is refused (this also waits for the new policy to be enforced).
    cluster.webhooks_status(2, 2, 2, false);
    refused(
        cluster.controller(&refs(&image), Verdict::Refused(OTHER_IMAGE)),
        OTHER_IMAGE,
        "a new controller while the webhooks run the old image",
    );
    // (d) A change that keeps the image passes meanwhile.
    cluster
        .controller(
            &refs(&patch(
                r#"{"spec":{"template":{"metadata":{"annotations":{"test/restart":"1"}}}}}"#,
            )),
            Verdict::Allowed,
        )
        .unwrap_or_else(|err| panic!("a pod annotation on the controller: {err}"));
    cluster
        .controller(
            &refs(&patch(r#"{"spec":{"replicas":3}}"#)),
            Verdict::Allowed,
        )
        .unwrap_or_else(|err| panic!("the controller scaled from 2 to 3: {err}"));

    // (a) The webhooks mid-rollout at the new image: a surge pod, one of
    // two updated; then every count right but observed at the generation
    // before; then the counts right but an old pod left.
    cluster.webhooks_template(&new);
    for (updated, available, total, stale, step) in [
        (1, 2, 3, false, "one of two webhook pods updated"),
        (2, 2, 2, true, "the webhooks' status not observed yet"),
        (2, 1, 2, false, "an updated webhook pod not available yet"),
        (2, 2, 3, false, "an old webhook pod left"),
    ] {
        cluster.webhooks_status(updated, available, total, stale);
        refused(
            cluster.controller(&refs(&image), Verdict::Refused(NOT_DONE)),
            NOT_DONE,
            step,
        );
    }
    // (d) A change that keeps the image passes mid-rollout too.
    cluster
        .controller(
            &refs(&patch(
                r#"{"spec":{"template":{"metadata":{"annotations":{"test/restart":"2"}}}}}"#,
            )),
            Verdict::Allowed,
        )
        .unwrap_or_else(|err| panic!("a pod annotation mid-rollout: {err}"));

    // (c) At 0 replicas the image changes freely (the Helm plan's step 1),
    // but the paused controller does not start until the webhooks are done:
    // not by the Deployment, not by a scale request (which has no image).
    cluster
        .controller(
            &refs(&patch(&format!(
                r#"{{"spec":{{"replicas":0,"template":{{"spec":{{"containers":[{{"name":"manager","image":"{new}"}}]}}}}}}}}"#
            ))),
            Verdict::Allowed,
        )
        .unwrap_or_else(|err| panic!("the paused controller at the new image: {err}"));
    refused(
        cluster.controller(
            &refs(&patch(r#"{"spec":{"replicas":2}}"#)),
            Verdict::Refused(NOT_DONE),
        ),
        NOT_DONE,
        "the paused controller started mid-rollout",
    );
    let scale = |replicas: &str| -> Vec<String> {
        vec![
            "scale".into(),
            format!("deployment/{CONTROLLER}"),
            format!("--replicas={replicas}"),
        ]
    };
    refused(
        cluster.controller(&refs(&scale("2")), Verdict::Refused(NO_IMAGE)),
        NO_IMAGE,
        "the paused controller scaled up",
    );

    // (b) The webhooks complete at the new image: the paused controller
    // starts (Helm's step 2) ...
    cluster.webhooks_status(2, 2, 2, false);
    cluster
        .controller(
            &refs(&patch(r#"{"spec":{"replicas":2}}"#)),
            Verdict::Allowed,
        )
        .unwrap_or_else(|err| panic!("the controller started after the webhooks: {err}"));
    // ... but not at an image the webhooks do not run (a downgrade) ...
    refused(
        cluster.controller(&refs(&set_image(&old)), Verdict::Refused(OTHER_IMAGE)),
        OTHER_IMAGE,
        "the controller back to the old image",
    );
    // ... and the webhooks do not go back behind it (a downgrade): their
    // old pods could not convert the CRDs the new controller applied.
    let set_webhooks = format!("manager={old}");
    refused(
        server.attempt(&[
            "set",
            "image",
            &format!("deployment/{WEBHOOKS}"),
            &set_webhooks,
            "-n",
            &cluster.namespace,
        ]),
        DOWNGRADE,
        "the webhooks back to the old image behind the controller",
    );
    assert_eq!(image_of(&[cluster.live(WEBHOOKS)], WEBHOOKS), new);
    assert_eq!(image_of(&[cluster.live(CONTROLLER)], CONTROLLER), new);
    // Scaling between counts above 0, and to 0, passes.
    cluster
        .controller(&refs(&scale("3")), Verdict::Allowed)
        .unwrap_or_else(|err| panic!("the controller scaled to 3: {err}"));
    cluster
        .controller(&refs(&scale("0")), Verdict::Allowed)
        .unwrap_or_else(|err| panic!("the controller paused by a scale: {err}"));
}

/// The binding's parameter follows a kustomize overlay's renames (its
/// `parameterNotFoundAction` is Allow, so a parameter left behind would
/// let every update through unchecked): built with the real kustomize
/// from the generated base and the split component.
#[test]
fn the_order_guard_follows_kustomize_renames() {
    let dir = tempfile::tempdir().unwrap();
    let copy = std::process::Command::new("cp")
        .args(["-r", root().join("generated/kustomize").to_str().unwrap()])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(copy.success());
    let overlay = dir.path().join("overlay");
    std::fs::create_dir(&overlay).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "resources: [../kustomize/base]\ncomponents: [../kustomize/components/split]\nnamePrefix: x-\nnamespace: elsewhere\n",
    )
    .unwrap();
    let built: Vec<Value> = serde_yaml::Deserializer::from_str(&common::kustomize(&overlay))
        .map(|d| Value::deserialize(d).unwrap())
        .collect();
    let guard = |kind: &str| {
        built
            .iter()
            .find(|o| {
                o["kind"] == kind
                    && o["metadata"]["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("x-azureserviceoperator-order-guard-"))
            })
            .unwrap_or_else(|| panic!("no renamed {kind} of the order guard"))
    };
    let (policy, binding) = (
        guard("ValidatingAdmissionPolicy"),
        guard("ValidatingAdmissionPolicyBinding"),
    );
    assert_eq!(
        policy["spec"]["matchConstraints"]["resourceRules"][0]["resourceNames"],
        json!([format!("x-{CONTROLLER}")])
    );
    assert_eq!(binding["spec"]["paramRef"]["name"], format!("x-{WEBHOOKS}"));
    assert_eq!(binding["spec"]["policyName"], policy["metadata"]["name"]);
    assert_eq!(
        binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
        "elsewhere"
    );
}

/// A live object as a create request carries it: without what the API
/// server sets (its identity, version, managed fields and status).
fn to_create(mut object: Value) -> Value {
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
        "managedFields",
    ] {
        object["metadata"].as_object_mut().unwrap().remove(field);
    }
    object.as_object_mut().unwrap().remove("status");
    object
}

/// A webhook pod at `image`, made directly (no Deployment owns it: the
/// pods an orphaning delete leaves behind).
fn webhook_pod(cluster: &Cluster, name: &str, image: &str) {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": cluster.namespace, "labels": {"control-plane": "webhooks"}},
        // The install's webhooks ServiceAccount (no controller here makes
        // a namespace's default one).
        "spec": {
            "serviceAccountName": "azureserviceoperator-webhooks",
            "automountServiceAccountToken": false,
            "containers": [{"name": "manager", "image": image}],
        },
    });
    cluster
        .server
        .kubectl_ok(&["apply", "--server-side", "-f", "-"], &pod.to_string());
}

/// The verdict on creating the controller Deployment `object`, once the
/// guard's copy of the pods has caught up (the first that is `expected`,
/// or the last after 20 s).
fn create_controller(cluster: &Cluster, object: &Value, expected: Verdict) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = cluster.server.kubectl(
            &[
                "create",
                "-n",
                &cluster.namespace,
                "--dry-run=server",
                "-f",
                "-",
            ],
            &object.to_string(),
        );
        let result = if out.status.success() {
            Ok(())
        } else {
            Err(text(&out.stderr))
        };
        let done = match (&result, expected) {
            (Ok(()), Verdict::Allowed) => true,
            (Err(stderr), Verdict::Refused(why)) => stderr.contains(why),
            _ => false,
        };
        if done || Instant::now() > deadline {
            return result;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The webhook pods, not the webhooks Deployment's status, say what
/// serves: the old pods a `kubectl delete deployment --cascade=orphan`
/// leaves behind the Service refuse a controller at a new image (the
/// Deployment, the parameter of the status check, is gone), and so does
/// a delete + create of the controller (`kubectl replace --force`,
/// `kubectl apply --force`), which the update check never saw. A pod that
/// finished, or none at all (a fresh install), leaves nothing stale.
#[test]
fn the_webhook_pods_that_serve_run_the_controllers_image() {
    let server = server();
    install_crds(server);
    let (namespace, new) = install(server);
    let cluster = Cluster { server, namespace };
    let old = new.replace("v2.20.0", OLD);
    const POD_IMAGE: &str = "a webhook pod runs another image";
    webhook_pod(&cluster, "old-webhooks-a", &old);
    webhook_pod(&cluster, "old-webhooks-b", &old);
    // No garbage collector runs here: the orphan finalizer it would
    // remove (after releasing the ReplicaSets) is removed by hand.
    server.kubectl_ok(
        &[
            "delete",
            "deployment",
            WEBHOOKS,
            "-n",
            &cluster.namespace,
            "--cascade=orphan",
            "--wait=false",
        ],
        "",
    );
    server.kubectl_ok(
        &[
            "patch",
            "deployment",
            WEBHOOKS,
            "-n",
            &cluster.namespace,
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
        "",
    );
    // An update at a new image, with the old pods still there.
    let refused = cluster
        .controller(&refs(&set_image(&new)), Verdict::Refused(POD_IMAGE))
        .expect_err("a new controller beside orphaned old webhook pods");
    assert!(
        refused.contains(RULE) && refused.contains(POD_IMAGE),
        "{refused}"
    );
    // Delete + create at a new image.
    let mut controller = to_create(cluster.live(CONTROLLER));
    controller["spec"]["template"]["spec"]["containers"][0]["image"] = json!(new);
    server.kubectl_ok(
        &[
            "delete",
            "deployment",
            CONTROLLER,
            "-n",
            &cluster.namespace,
            "--wait=false",
        ],
        "",
    );
    let refused = create_controller(&cluster, &controller, Verdict::Refused(POD_IMAGE))
        .expect_err("a controller created at a new image beside old webhook pods");
    assert!(
        refused.contains(RULE) && refused.contains(POD_IMAGE),
        "{refused}"
    );
    // One old pod finished, the other gone: nothing stale is left.
    server.kubectl_ok(
        &[
            "patch",
            "pod",
            "old-webhooks-a",
            "-n",
            &cluster.namespace,
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"phase":"Succeeded"}}"#,
        ],
        "",
    );
    server.kubectl_ok(
        &[
            "delete",
            "pod",
            "old-webhooks-b",
            "-n",
            &cluster.namespace,
            "--wait=false",
        ],
        "",
    );
    create_controller(&cluster, &controller, Verdict::Allowed)
        .unwrap_or_else(|err| panic!("a controller with no stale webhook pod: {err}"));
    // A webhook pod at the controller's image serves alongside.
    webhook_pod(&cluster, "new-webhooks", &new);
    create_controller(&cluster, &controller, Verdict::Allowed)
        .unwrap_or_else(|err| panic!("a controller beside webhook pods at its image: {err}"));
}

/// A CRD of ASO's as its release labels it, applied by release `version`
/// (`labelled: false`: another project's CRD with the same version label).
fn aso_crd(plural: &str, version: &str, labelled: bool) -> Value {
    let mut labels = json!({"app.kubernetes.io/version": version});
    if labelled {
        labels["app.kubernetes.io/name"] = json!("azure-service-operator");
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.downgrade.test"), "labels": labels},
        "spec": {
            "group": "downgrade.test",
            "names": {"kind": plural, "plural": plural, "singular": plural},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    })
}

/// A downgrade is judged against what the cluster remembers: the version
/// label of ASO's CRDs, which the newest manager the cluster ran applied.
/// From both Deployments at v2.21.0, rolled out, with the CRDs at
/// v2.21.0, every write that moves a manager below it is refused, alone
/// or in a sequence of writes each allowed before (finding 3 of the
/// fourth attack round: the controller paused, moved back, the webhooks
/// moved back, the controller started), by update, by delete + create,
/// and by a whole render applied twice (a `helm upgrade` to an older
/// `image.tag`, run again). Writes that keep the image, upgrades, tags
/// that are not versions, and CRDs of other projects pass. On an API
/// server of its own: the CRDs are cluster-wide.
#[test]
fn a_downgrade_is_refused_against_what_the_cluster_remembers() {
    const CRDS_RULE: &str = "split-never-below-crds";
    let server = &common::apiserver::start_with(&[]);
    common::apiserver::install_crds_on(server);
    for crd in [
        aso_crd("groups", "v2.21.0", true),
        aso_crd("others", "v9.0.0", false),
    ] {
        server.kubectl_ok(&["apply", "--server-side", "-f", "-"], &crd.to_string());
    }
    let (namespace, at_20) = install_at(server, "v2.21.0");
    let cluster = Cluster { server, namespace };
    let at_21 = at_20.replace("v2.20.0", "v2.21.0");
    cluster.webhooks_status(2, 2, 2, false);
    let ns = cluster.namespace.clone();
    let attempt = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-n", &ns]);
        server.attempt(&all)
    };
    let set = |deployment: &str, image: &str| {
        attempt(&[
            "set",
            "image",
            &format!("deployment/{deployment}"),
            &format!("manager={image}"),
        ])
    };
    let refused = |result: Result<String, String>, step: &str| {
        let stderr = result.expect_err(step);
        assert!(
            stderr.contains("ValidatingAdmissionPolicy")
                && stderr.contains(&format!("{CRDS_RULE}:"))
                && stderr.contains("was applied by v2.21.0"),
            "{step}: {stderr}"
        );
    };
    // Refused by this guard or by the webhooks' own downgrade check against
    // the controller (the API server names one denial).
    let refused_either = |result: Result<String, String>, step: &str| {
        let stderr = result.expect_err(step);
        assert!(
            stderr.contains(&format!("{CRDS_RULE}:")) || stderr.contains(&format!("{RULE}:")),
            "{step}: {stderr}"
        );
    };
    // The new policies and their parameters take a moment: wait until the
    // first write of the sequence is refused (a dry run stores nothing).
    let deadline = Instant::now() + Duration::from_secs(60);
    while attempt(&["patch", "deployment", CONTROLLER, "--type=strategic", "--dry-run=server", "-p",
        &format!(r#"{{"spec":{{"replicas":0,"template":{{"spec":{{"containers":[{{"name":"manager","image":"{at_20}"}}]}}}}}}}}"#)]).is_ok()
    {
        assert!(Instant::now() < deadline, "the CRDs' guard was never enforced:\n{}", server.log_tail());
        std::thread::sleep(Duration::from_millis(300));
    }

    // The sequence that passed write by write: pausing passes, the rest
    // is refused.
    attempt(&["scale", &format!("deployment/{CONTROLLER}"), "--replicas=0"])
        .unwrap_or_else(|err| panic!("pause the controller: {err}"));
    refused(
        set(CONTROLLER, &at_20),
        "the paused controller back to v2.20.0",
    );
    refused_either(set(WEBHOOKS, &at_20), "the webhooks back to v2.20.0");
    // A native sidecar of the older release in the webhooks, too: the
    // webhooks' own manager, in every other way as rendered.
    let mut sidecar = cluster.live(WEBHOOKS)["spec"]["template"]["spec"]["containers"][0].clone();
    sidecar["name"] = json!("old");
    sidecar["image"] = json!(at_20);
    sidecar["restartPolicy"] = json!("Always");
    let add_sidecar =
        json!([{"op": "add", "path": "/spec/template/spec/initContainers", "value": [sidecar]}]);
    refused_either(
        attempt(&[
            "patch",
            "deployment",
            WEBHOOKS,
            "--type=json",
            "-p",
            &add_sidecar.to_string(),
        ]),
        "a sidecar of v2.20.0 in the webhooks",
    );

    // Delete + create: the controller gone, the webhooks' downgrade has
    // no Deployment to fall behind, and still the CRDs say no.
    let mut controller = to_create(cluster.live(CONTROLLER));
    server.kubectl_ok(
        &[
            "delete",
            "deployment",
            CONTROLLER,
            "-n",
            &ns,
            "--wait=false",
        ],
        "",
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let downgrade_alone = loop {
        // until the peer Deployment is gone from the guards' view
        let result = set(WEBHOOKS, &at_20);
        match &result {
            Err(stderr) if stderr.contains(CRDS_RULE) => break result,
            _ if Instant::now() > deadline => break result,
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    };
    refused(
        downgrade_alone,
        "the webhooks back to v2.20.0 with no controller",
    );
    controller["spec"]["replicas"] = json!(0);
    controller["spec"]["template"]["spec"]["containers"][0]["image"] = json!(at_20);
    refused(
        create_controller(&cluster, &controller, Verdict::Refused(CRDS_RULE))
            .map(|()| String::new()),
        "the controller created at v2.20.0, paused",
    );
    // A whole render at the older release, applied twice (Helm goes on past
    // a refused object): neither Deployment moves.
    let render = asogen(&[
        "template",
        "-f",
        root().join("values/profiles/split.yaml").to_str().unwrap(),
        "-n",
        &ns,
        "--set",
        "image.tag=v2.20.0",
    ]);
    assert!(render.status.success(), "{}", text(&render.stderr));
    for run in 1..=2 {
        let applied = server.kubectl(
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=helm",
                "-f",
                "-",
            ],
            &text(&render.stdout),
        );
        let stderr = text(&applied.stderr);
        assert!(
            !applied.status.success() && stderr.contains(CRDS_RULE),
            "apply {run}: {stderr}"
        );
        assert_eq!(
            image_of(&[cluster.live(WEBHOOKS)], WEBHOOKS),
            at_21,
            "apply {run}"
        );
    }
    let live = server.kubectl(
        &["get", "deployment", CONTROLLER, "-n", &ns, "-o", "json"],
        "",
    );
    if live.status.success() {
        let live: Value = serde_json::from_slice(&live.stdout).unwrap();
        assert_eq!(
            image_of(&[live], CONTROLLER),
            at_21,
            "the controller created by the render"
        );
    }

    // What passes: a write that keeps the image, an upgrade, a tag that is
    // not a version; a CRD of another project at v9.0.0 is not ASO's.
    attempt(&[
        "patch",
        "deployment",
        WEBHOOKS,
        "--type=merge",
        "-p",
        r#"{"spec":{"template":{"metadata":{"annotations":{"test/restart":"1"}}}}}"#,
    ])
    .unwrap_or_else(|err| panic!("a pod annotation on the webhooks: {err}"));
    set(WEBHOOKS, &at_21.replace("v2.21.0", "v2.22.0"))
        .unwrap_or_else(|err| panic!("the webhooks to v2.22.0: {err}"));
    set(WEBHOOKS, &at_21.replace("v2.21.0", "latest"))
        .unwrap_or_else(|err| panic!("the webhooks to latest: {err}"));
}
