//! The upgrade plan: for a topology and an apply path, the ordered steps
//! of an upgrade (docs/split-topology.md sections 3 and 6), as data. Each
//! step says which values it sets, which objects it applies, what it waits
//! for and what the user runs. `asogen upgrade-plan` prints it; the rollout
//! harness (tests/rollout.rs) executes the same steps from its JSON.
//!
//! With `topology: single` every path is one step, as today. With `split`
//! the webhooks Deployment is upgraded and rolled out before the controller
//! Deployment starts a pod of the new version: the controller applies the
//! CRDs (the CRD epoch), so every webhook endpoint is already new then (I2),
//! and the controller's Recreate never runs two versions (I3).

use serde::Serialize;
use serde_json::Value;

use crate::keys::{self, Key};
use crate::model::Shape;
use crate::objects::{self, names};
use crate::roles::Role;
pub use crate::values::Topology;

/// How the user applies the install (`upgrade-plan --via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// One Helm release, `helm upgrade --wait`.
    Helm,
    /// Flux kustomize-controller: Kustomizations with dependsOn and wait.
    Flux,
    /// Argo CD: one sync ordered by sync waves.
    Argo,
    /// kubectl apply, then kubectl rollout status.
    Kubectl,
}

impl Via {
    /// Every path, in the order the docs list them.
    pub const ALL: [Via; 4] = [Via::Helm, Via::Flux, Via::Argo, Via::Kubectl];

    /// Its name on the command line (`--via`).
    pub fn name(self) -> &'static str {
        match self {
            Via::Helm => "helm",
            Via::Flux => "flux",
            Via::Argo => "argo",
            Via::Kubectl => "kubectl",
        }
    }
}

/// The values key that scales the controller to zero (Helm's first step).
pub const PAUSED_KEY: Key = keys::SPLIT_CONTROLLER_PAUSED;
/// The values key whose change restarts the webhook pods (the refresh).
pub const REFRESH_KEY: Key = keys::SPLIT_WEBHOOKS_REFRESH_TOKEN;
/// The annotation Argo CD orders a sync by.
pub const SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
/// How long the printed commands wait for one rollout.
const TIMEOUT: &str = "10m";
/// How soon Flux and Argo CD try a refused write again (seconds): the
/// order guard refuses the controller while the webhooks' old pods stop
/// (their preStop delay and the manager's shutdown), and the appliers'
/// defaults would wait 10 minutes (Flux's retryInterval is its interval)
/// or forever (Argo CD retries a failed sync only when told to).
const RETRY_SECONDS: u64 = 30;

/// Which objects of the install a step applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// Every object.
    All,
    /// Everything but the controller's own objects: the webhooks
    /// Deployment and what it and the webhook Service need.
    Webhooks,
    /// The controller Deployment, its PDB and its metrics Service.
    Controller,
    /// The webhooks part without the webhook Service and configurations:
    /// a migration's first step, which must not route to the new pods
    /// before they are ready.
    Unrouted,
    /// The webhook Service and configurations alone: the switch of a
    /// migration.
    Routing,
}

/// Which Deployment an Argo CD sync rolls out first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Prerequisites, the webhooks, the webhook Service, the controller:
    /// an upgrade, and the migration to `split`.
    WebhooksFirst,
    /// Prerequisites, the controller, the webhook Service: the migration
    /// back to `single`, where the Service may move to the controller pods
    /// only once they are of the new shape and ready.
    ControllerFirst,
}

/// When a step is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum When {
    /// Every upgrade.
    Always,
    /// Only when the CRDs gained kinds (a new release adds some, or
    /// `crdPattern` grew, or a first install): webhook pods serve only the
    /// kinds whose CRDs existed when they started (F2, F11.4 of
    /// docs/aso-facts.md).
    KindsAdded,
}

/// Where an object goes in the order of a split upgrade; Argo CD's sync
/// wave is its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// ServiceAccounts, RBAC, Secrets, certificates, NetworkPolicies.
    Prerequisites,
    /// The webhooks Deployment and its PDB.
    Webhooks,
    /// The webhook Service and the webhook configurations: routed to the
    /// webhook pods once they are healthy.
    Routing,
    /// The controller Deployment, its PDB and its metrics Service.
    Controller,
}

impl Stage {
    /// Its Argo CD sync wave in `order`.
    pub fn wave(self, order: Order) -> i32 {
        match (self, order) {
            (Stage::Prerequisites, _) => -2,
            (Stage::Webhooks, _) => -1,
            (Stage::Routing, _) => 0,
            (Stage::Controller, Order::WebhooksFirst) => 1,
            (Stage::Controller, Order::ControllerFirst) => -1,
        }
    }

    /// Whether a step that applies `part` applies objects of this stage.
    pub fn is_in(self, part: Part) -> bool {
        match part {
            Part::All => true,
            Part::Webhooks => self != Stage::Controller,
            Part::Controller => self == Stage::Controller,
            Part::Unrouted => matches!(self, Stage::Prerequisites | Stage::Webhooks),
            Part::Routing => self == Stage::Routing,
        }
    }
}

/// The stage of one rendered object of a split install.
pub fn stage_of(object: &Value) -> Stage {
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    match kind {
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => Stage::Routing,
        "Service" if name == names::WEBHOOK_SERVICE => Stage::Routing,
        _ => match objects::role_of(kind, name) {
            Some(Role::Webhooks) => Stage::Webhooks,
            Some(Role::Controller) => Stage::Controller,
            None => Stage::Prerequisites,
        },
    }
}

/// Whether `object` belongs to `part`.
pub fn in_part(object: &Value, part: Part) -> bool {
    stage_of(object).is_in(part)
}

/// Adds the sync-wave annotation of its stage to every object (Argo CD).
pub fn annotate_waves(objects: &mut [Value], order: Order) {
    for object in objects {
        let wave = stage_of(object).wave(order).to_string();
        let metadata = object["metadata"]
            .as_object_mut()
            .expect("a rendered object has metadata");
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        annotations[SYNC_WAVE] = Value::String(wave);
    }
}

/// One value a step sets on top of the user's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// The key path, as `--set` takes it.
    #[serde(serialize_with = "key_path")]
    pub key: Key,
    /// The value, as `--set` takes it.
    pub value: String,
}

fn key_path<S: serde::Serializer>(key: &Key, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(key.path())
}

/// One step of an upgrade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// Its number, from 1: `upgrade-plan --manifest N` prints what it applies.
    pub number: usize,
    /// What it does, for people.
    pub title: String,
    /// When it is needed.
    pub when: When,
    /// Values set on top of the user's for this step.
    pub set: Vec<Setting>,
    /// Which objects it applies.
    pub part: Part,
    /// Whether its objects carry sync waves, applied wave by wave, each
    /// healthy before the next (Argo CD), and in which order.
    pub waves: Option<Order>,
    /// Objects to delete after its objects are applied (a migration
    /// leaves the other topology's own objects).
    pub delete: Vec<ObjectRef>,
    /// The Deployments whose rollout must complete before the next step.
    pub wait: Vec<String>,
    /// The Deployments whose pods of an older template must be gone,
    /// terminating ones included, before the next step: a terminating
    /// webhook pod still answers, through its preStop delay, on the
    /// connections the API server keeps open to it, so the controller
    /// must not write the next CRDs until it stopped.
    pub drain: Vec<String>,
    /// After how many seconds the applier tries a write again that an
    /// admission policy refused (Flux's retryInterval, Argo CD's sync
    /// retry), for appliers that cannot wait for `drain`: the order guard
    /// refuses the controller until the webhooks' old pods are gone.
    pub retry_seconds: Option<u64>,
    /// What the user runs, in order.
    pub commands: Vec<String>,
}

impl Step {
    /// Step `number`: it always runs and applies `part`; what it sets,
    /// waits for and runs is filled in by its plan.
    fn new(number: usize, title: impl Into<String>, part: Part) -> Step {
        Step {
            number,
            title: title.into(),
            when: When::Always,
            set: Vec::new(),
            part,
            waves: None,
            delete: Vec::new(),
            wait: Vec::new(),
            drain: Vec::new(),
            retry_seconds: None,
            commands: Vec::new(),
        }
    }
}

/// An object to delete.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectRef {
    /// Its kind.
    pub kind: String,
    /// Its namespace; empty for a cluster-scoped object.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl ObjectRef {
    fn of(object: &Value) -> ObjectRef {
        let field = |v: &Value| v.as_str().unwrap_or_default().to_string();
        ObjectRef {
            kind: field(&object["kind"]),
            namespace: field(&object["metadata"]["namespace"]),
            name: field(&object["metadata"]["name"]),
        }
    }
}

/// The objects of `before` that `after` does not have: what a migration
/// from `before` to `after` leaves behind, in reverse install order.
pub fn leftovers(before: &[Value], after: &[Value]) -> Vec<ObjectRef> {
    let kept: std::collections::BTreeSet<ObjectRef> = after.iter().map(ObjectRef::of).collect();
    let mut left: Vec<ObjectRef> = before
        .iter()
        .map(ObjectRef::of)
        .filter(|o| !kept.contains(o))
        .collect();
    left.reverse();
    left
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The topology the live install has.
    pub from: Topology,
    /// The topology the values render.
    pub topology: Topology,
    /// The apply path.
    pub via: Via,
    /// The namespace.
    pub namespace: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// What else the user must know.
    pub notes: Vec<String>,
}

/// What the printed commands repeat of the user's command line.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// The namespace.
    pub namespace: String,
    /// The built-in profiles (`--profile`), as given.
    pub profiles: Vec<String>,
    /// The values files, as given.
    pub files: Vec<String>,
    /// Whether `--set` flags were given (not repeated: they may hold secrets).
    pub sets: bool,
}

impl Invocation {
    /// ` -n NS --profile NAME... -f FILE...` for asogen (and a reminder of
    /// the `--set` flags).
    fn values_args(&self) -> String {
        let profiles: String = self
            .profiles
            .iter()
            .map(|name| format!(" --profile {}", shell_word(name)))
            .collect();
        self.with_files(profiles)
    }

    /// ` -n NS -f PROFILE-FILE... -f FILE...` for Helm, which reads a
    /// profile from the file [`profile_file`] names.
    fn helm_values_args(&self) -> String {
        let profiles: String = self
            .profiles
            .iter()
            .map(|name| format!(" -f {}", shell_word(&profile_file(name))))
            .collect();
        self.with_files(profiles)
    }

    /// ` -n NS`, then `profiles`, then ` -f FILE...` (and the `--set`
    /// reminder).
    fn with_files(&self, profiles: String) -> String {
        let mut args = format!(" -n {}{profiles}", shell_word(&self.namespace));
        for file in &self.files {
            // A relative name that starts with `-` reads as flags to every
            // tool the commands run; `./` keeps it a file.
            let file = if file.starts_with('-') {
                format!("./{file}")
            } else {
                file.clone()
            };
            args.push_str(&format!(" -f {}", shell_word(&file)));
        }
        if self.sets {
            args.push_str(" <your --set flags>");
        }
        args
    }

    /// The `asogen upgrade-plan --from` line that prints a migration's
    /// step `n`.
    fn migration_manifest(&self, via: Via, from: Topology, n: usize) -> String {
        format!(
            "asogen upgrade-plan --via {} --from {}{} --manifest {n}",
            via.name(),
            from.as_str(),
            self.values_args()
        )
    }

    /// The `asogen upgrade-plan` line that prints step `n`'s objects.
    fn manifest(&self, via: Via, n: usize) -> String {
        format!(
            "asogen upgrade-plan --via {}{} --manifest {n}",
            via.name(),
            self.values_args()
        )
    }
}

/// A word for a POSIX shell: as it is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The names of the Deployments among `objects` that `part` applies.
fn deployments(objects: &[Value], part: Part) -> Vec<String> {
    objects
        .iter()
        .filter(|o| o["kind"] == "Deployment" && in_part(o, part))
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

/// The image tag of the rendered manager container: the refresh token
/// (it changes with every release, so a step 3 after each upgrade restarts
/// the webhook pods once).
fn version(objects: &[Value]) -> String {
    objects
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .flat_map(|o| o["spec"]["template"]["spec"]["containers"].as_array())
        .flatten()
        .filter_map(|c| c["image"].as_str())
        .find_map(|image| image.rsplit_once(':').map(|(_, tag)| tag.to_string()))
        .unwrap_or_default()
}

/// `helm upgrade` of the user's release with their values and `extra`.
fn helm_upgrade(invocation: &Invocation, extra: &str) -> String {
    format!(
        "helm upgrade RELEASE CHART{}{extra} --wait --timeout {TIMEOUT}",
        invocation.helm_values_args()
    )
}

/// The file a Helm command reads the built-in profile `name` from.
fn profile_file(name: &str) -> String {
    format!("asogen-profile-{name}.yaml")
}

/// The notes of a Helm plan: where its placeholders come from, and the
/// profiles' files it reads.
fn helm_notes(invocation: &Invocation) -> Vec<String> {
    let mut notes = vec![HELM_NOTE.to_string()];
    for name in &invocation.profiles {
        notes.push(format!(
            "Helm reads the built-in profile {name} from a file: asogen show profile {name} > {}",
            shell_word(&profile_file(name))
        ));
    }
    notes
}

/// What a plan for the single-replica rolling shape says: ASO's start
/// stalls its version upgrades (docs/aso-facts.md F12).
const ROLLING_VERSION_NOTE: &str = "one replica rolls surge-first: a change that keeps ASO's version completes with webhooks up, but a version upgrade does not finish (the new pod's CRD step waits for the leader-election Lease the old pod holds, so it is never Ready and maxUnavailable 0 keeps the old pod); for a version upgrade set strategy.type: Recreate (without strategy.rollingUpdate) in the values these steps apply, and go back to RollingUpdate after it, or move to topology: split (asogen upgrade-plan --from single with topology: split), which keeps webhooks up through version upgrades";

/// What every Helm plan says about its placeholders.
const HELM_NOTE: &str = "RELEASE and CHART are your release's name and chart: `asogen render --out DIR` \
     writes the chart to DIR/charts/azure-service-operator (e.g. aso and aso-chart/charts/azure-service-operator \
     after asogen render --out aso-chart)";

/// The plan for `objects` (the install the user's values render, of the
/// model's `shape`) applied through `via`; refused for the bridge, which
/// is only ever left.
pub fn plan(
    shape: &Shape,
    via: Via,
    objects: &[Value],
    invocation: &Invocation,
) -> Result<Plan, Refused> {
    let topology = shape.topology();
    let ns = shell_word(&invocation.namespace);
    let helm = |extra: &str| helm_upgrade(invocation, extra);
    let step = |number: usize, title: &str, part: Part| Step {
        wait: deployments(objects, part),
        ..Step::new(number, title, part)
    };
    let mut notes = Vec::new();
    if shape.rolls_one_replica() {
        notes.push(ROLLING_VERSION_NOTE.into());
    }
    let mut steps = match topology {
        Topology::Single => {
            let mut one = step(1, "apply the install and wait for its rollout", Part::All);
            one.commands = match via {
                Via::Helm => vec![helm("")],
                Via::Flux => {
                    let aso = &FLUX_SINGLE[0];
                    vec![
                        write_to(invocation.manifest(via, aso.manifest), aso.file),
                        format!(
                            "commit aso/; {}   # Kustomization aso below applies it (wait: true)",
                            flux_reconcile(aso.name)
                        ),
                        flux_kustomization(aso, &invocation.namespace),
                    ]
                }
                Via::Argo => vec![
                    write_to(invocation.manifest(via, 1), "aso/aso.yaml"),
                    "commit aso/; sync the Application".into(),
                ],
                Via::Kubectl => kubectl_apply(invocation.manifest(via, 1), &one.wait, &ns),
            };
            vec![one]
        }
        Topology::Split => split_steps(via, invocation, &step, &ns, &helm),
        Topology::Bridge => return Err(Refused::InBridge),
    };
    match via {
        Via::Helm => notes.extend(helm_notes(invocation)),
        Via::Flux => notes.push(FLUX_NOTE.into()),
        Via::Argo | Via::Kubectl => {}
    }
    if topology == Topology::Split {
        let refresh = steps.len() + 1;
        let mut last = step(
            refresh,
            "only when the CRDs gained kinds: restart the webhook pods, so they serve the new kinds",
            match via {
                Via::Helm | Via::Argo => Part::All,
                Via::Flux | Via::Kubectl => Part::Webhooks,
            },
        );
        last.when = When::KindsAdded;
        last.waves = (via == Via::Argo).then_some(Order::WebhooksFirst);
        let token = version(objects);
        last.set = vec![Setting {
            key: REFRESH_KEY,
            value: token.clone(),
        }];
        // --set-string, escaped for Helm's grammar: a tag is text (a number
        // would be typed), and its commas set nothing else.
        let set = format!(
            " --set-string {}",
            shell_word(&crate::read::set_string_expression(
                REFRESH_KEY.path(),
                &token
            ))
        );
        last.commands = match via {
            Via::Helm => vec![helm(&set)],
            Via::Flux => vec![
                format!(
                    "{}   # carries{set}",
                    write_to(invocation.manifest(via, refresh), FLUX_SPLIT[0].file)
                ),
                format!(
                    "commit aso/; {}   # Kustomization aso-webhooks rolls the webhook pods",
                    flux_reconcile(FLUX_SPLIT[0].name)
                ),
            ],
            Via::Argo => vec![
                format!(
                    "{}   # carries{set}",
                    write_to(invocation.manifest(via, refresh), "aso/aso.yaml")
                ),
                "commit aso/; sync the Application".into(),
            ],
            Via::Kubectl => kubectl_apply(invocation.manifest(via, refresh), &last.wait, &ns),
        };
        steps.push(last);
        notes.push(format!(
            "step {refresh} is needed after a release that adds kinds, a wider crdPattern, or a first install; \
             keep {} in your values afterwards",
            REFRESH_KEY.path()
        ));
        if via == Via::Helm {
            notes.push(
                "do not pass --atomic or --rollback-on-failure: a failed step 2 would roll the webhooks back"
                    .into(),
            );
            notes.push(format!(
                "step 1 scales the controller to zero ({}=true): reconciliation pauses \
                 until step 2; the webhooks stay up",
                PAUSED_KEY.path()
            ));
        }
    }
    Ok(Plan {
        from: topology,
        topology,
        via,
        namespace: invocation.namespace.clone(),
        steps,
        notes,
    })
}

/// Why there is no plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The values are the bridge: an upgrade from it would roll the
    /// controller and the webhooks at once behind one Service (two
    /// versions serving, the new controller writing CRDs the old webhook
    /// pods cannot convert).
    #[error(
        "topology bridge is the middle step of a Helm migration between single and split, \
         not a topology to upgrade in: an upgrade now would put two versions behind the webhook Service\n\
         help: finish the migration first: set topology: split (or single) in your values and run \
         `asogen upgrade-plan --via helm --from bridge`; upgrade the version afterwards"
    )]
    InBridge,
    /// Only Helm and Flux enter the bridge, so only they leave it.
    #[error(
        "topology bridge is the middle step of a migration with Helm or Flux; it is left the way it was entered, not with {via}\n\
         help: run `asogen upgrade-plan --via helm --from bridge`, or `--via flux --from bridge`"
    )]
    BridgeNotEntered {
        /// The path asked for.
        via: &'static str,
    },
}

/// The topology whose objects a migration's last step leaves behind
/// (deletes): Helm's and Flux's last step starts from the bridge.
pub fn left_from(from: Topology, via: Via) -> Topology {
    match via {
        Via::Helm | Via::Flux => Topology::Bridge,
        Via::Argo | Via::Kubectl => from,
    }
}

/// The plan that moves a live `from` install to the topology `objects`
/// render (`to`), through `via`, deleting `leftovers` (the objects only
/// the topology [`left_from`] names has) at the end: docs/split-topology.md
/// section 3, "Migration". Both ways the webhook Service moves only to
/// pods that are ready and of their final shape.
pub fn migration(
    from: Topology,
    to: Topology,
    via: Via,
    objects: &[Value],
    leftovers: Vec<ObjectRef>,
    invocation: &Invocation,
) -> Result<Plan, Refused> {
    if to == Topology::Bridge {
        return Err(Refused::InBridge);
    }
    if matches!(via, Via::Helm | Via::Flux) {
        return Ok(bridge_migration(
            from, to, via, objects, leftovers, invocation,
        ));
    }
    if from == Topology::Bridge {
        return Err(Refused::BridgeNotEntered { via: via.name() });
    }
    let ns = shell_word(&invocation.namespace);
    let step = |number: usize, title: &str, part: Part| {
        let wait = deployments(objects, part);
        // Argo CD's one step writes its own commands below
        let commands = kubectl_apply(invocation.migration_manifest(via, from, number), &wait, &ns);
        Step {
            wait,
            commands,
            ..Step::new(number, title, part)
        }
    };
    let delete_commands = |refs: &[ObjectRef]| -> Vec<String> {
        refs.iter()
            .map(|o| {
                let scope = if o.namespace.is_empty() {
                    String::new()
                } else {
                    format!(" -n {}", shell_word(&o.namespace))
                };
                format!("kubectl delete {} {}{scope}", o.kind.to_lowercase(), o.name)
            })
            .collect()
    };
    // Helm and Flux went through the bridge above: Argo CD or kubectl here
    let mut steps = match (via, to) {
        (Via::Argo, _) => {
            let order = match to {
                // never the bridge here: refused above
                Topology::Split | Topology::Bridge => Order::WebhooksFirst,
                Topology::Single => Order::ControllerFirst,
            };
            let mut sync = step(
                1,
                "one sync ordered by sync waves; prune what the old topology alone had (PruneLast=true)",
                Part::All,
            );
            sync.waves = Some(order);
            sync.commands = vec![
                format!(
                    "{}   # every object annotated with its {SYNC_WAVE}",
                    write_to(invocation.migration_manifest(via, from, 1), "aso/aso.yaml")
                ),
                "commit aso/; sync the Application with prune and the sync option PruneLast=true"
                    .into(),
            ];
            sync.delete = leftovers.clone();
            vec![sync]
        }
        (_, Topology::Split) => vec![
            step(
                1,
                "create the webhooks Deployment and what it needs; the webhook Service still routes to the controller",
                Part::Unrouted,
            ),
            step(
                2,
                "route the webhook Service and configurations to the webhook pods",
                Part::Routing,
            ),
            step(3, "give the controller its split shape", Part::Controller),
        ],
        // never the bridge here: refused above
        (_, Topology::Single | Topology::Bridge) => vec![
            step(
                1,
                "give the controller its single shape; the webhook Service still routes to the webhook pods",
                Part::Controller,
            ),
            step(
                2,
                "route the webhook Service back to the controller pods",
                Part::Webhooks,
            ),
        ],
    };
    if via != Via::Argo && !leftovers.is_empty() {
        let n = steps.len() + 1;
        let mut delete = step(n, "delete what only the old topology had", Part::Routing);
        delete.part = Part::All;
        delete.wait = Vec::new();
        delete.commands = delete_commands(&leftovers);
        delete.delete = leftovers;
        steps.push(delete);
    }
    Ok(Plan {
        from,
        topology: to,
        via,
        namespace: invocation.namespace.clone(),
        steps,
        notes: vec![format!(
            "a migration keeps the version: upgrade before or after it, with `asogen upgrade-plan --via {}`",
            via.name()
        )],
    })
}

/// A migration with an applier that applies a whole set of objects in one
/// pass and then deletes what left it (Helm's release, Flux's
/// Kustomization with `prune: true`): through the bridge, two applies that
/// each wait for every Deployment. Step 1 renders `topology: bridge`: the
/// single controller Deployment beside the split's webhooks Deployment,
/// each as its own topology renders it, and the webhook Service routing to
/// the pods of both, so the Service only gains pods (the webhook pods as
/// they become ready on the way to split; the controller's, which Recreate
/// replaces, beside the ready webhook pods on the way back). Step 2 renders
/// the target: the Service drops the other role's pods, which the wait of
/// step 1 made ready ones of their final shape, and the applier deletes
/// what only the bridge had (`leftovers`). From the bridge, step 2 alone.
/// Flux moves the objects between its one Kustomization (`aso`, the
/// single plan's) and the split plan's two on the side of split
/// ([`flux_hand_over`]).
fn bridge_migration(
    from: Topology,
    to: Topology,
    via: Via,
    objects: &[Value],
    leftovers: Vec<ObjectRef>,
    invocation: &Invocation,
) -> Plan {
    // The bridge has what `to` renders and what step 2 leaves.
    let mut bridge = deployments(objects, Part::All);
    bridge.extend(
        leftovers
            .iter()
            .filter(|o| o.kind == "Deployment")
            .map(|o| o.name.clone()),
    );
    // numbered below, once the steps are known
    let step = |title: String, set: Vec<Setting>, wait: Vec<String>| Step {
        set,
        wait,
        ..Step::new(0, title, Part::All)
    };
    let enter = step(
        match to {
            Topology::Split => "enter the bridge: create the webhooks Deployment beside the controller; the webhook Service routes to both".into(),
            _ => "enter the bridge: give the controller its single shape beside the webhooks Deployment; the webhook Service routes to both".into(),
        },
        vec![Setting {
            key: keys::TOPOLOGY,
            value: Topology::Bridge.as_str().into(),
        }],
        bridge,
    );
    let mut leave = step(
        format!(
            "leave the bridge for {}: the webhook Service routes to the {} pods alone; {} deletes what only the bridge had",
            to.as_str(),
            if to == Topology::Split {
                "webhook"
            } else {
                "controller"
            },
            if via == Via::Helm {
                "Helm"
            } else {
                "Flux (prune: true)"
            }
        ),
        Vec::new(),
        deployments(objects, Part::All),
    );
    leave.delete = leftovers;
    let mut steps = Vec::new();
    // Flux: a split install's two Kustomizations hand over to one first
    if via == Via::Flux && from == Topology::Split {
        let mut hand_over = step(
            "hand the install over from Kustomizations aso-webhooks and aso-controller to one Kustomization aso (nothing rolls)".into(),
            vec![Setting {
                key: keys::TOPOLOGY,
                value: Topology::Split.as_str().into(),
            }],
            Vec::new(),
        );
        // the one file holds the live install: this step's objects
        let live = invocation.migration_manifest(via, from, 1);
        hand_over.commands = flux_hand_over(invocation, FLUX_SPLIT, FLUX_SINGLE, &[live]);
        steps.push(hand_over);
    }
    if from != Topology::Bridge {
        steps.push(enter);
    }
    steps.push(leave);
    if via == Via::Flux && to == Topology::Split {
        let mut hand_over = step(
            "hand the install over from Kustomization aso to the split plan's aso-webhooks and aso-controller (nothing rolls)".into(),
            Vec::new(),
            Vec::new(),
        );
        // the two files are what the split plan applies from now on
        let parts: Vec<String> = FLUX_SPLIT
            .iter()
            .map(|p| invocation.manifest(via, p.manifest))
            .collect();
        hand_over.commands = flux_hand_over(invocation, FLUX_SINGLE, FLUX_SPLIT, &parts);
        steps.push(hand_over);
    }
    for (i, step) in steps.iter_mut().enumerate() {
        step.number = i + 1;
        if step.commands.is_empty() {
            step.commands = match via {
                Via::Helm => {
                    let set: String = step
                        .set
                        .iter()
                        .map(|s| format!(" --set {}={}", s.key.path(), s.value))
                        .collect();
                    vec![helm_upgrade(invocation, &set)]
                }
                _ => vec![
                    write_to(
                        invocation.migration_manifest(via, from, i + 1),
                        FLUX_SINGLE[0].file,
                    ),
                    format!(
                        "commit aso/; {}   # waits until Kustomization aso applied it and every Deployment is ready (wait: true)",
                        flux_reconcile("aso")
                    ),
                ],
            };
        }
    }
    let mut notes = if via == Via::Helm {
        helm_notes(invocation)
    } else {
        vec![FLUX_NOTE.to_string()]
    };
    notes.extend([
        format!(
            "{}={} is only the migration's middle step: do not upgrade the version, or stop, there; \
             `asogen upgrade-plan --via {} --from bridge` finishes a migration that stopped in it",
            keys::TOPOLOGY.path(),
            Topology::Bridge.as_str(),
            via.name()
        ),
        format!(
            "a migration keeps the version: upgrade before or after it, with `asogen upgrade-plan --via {}`",
            via.name()
        ),
    ]);
    Plan {
        from,
        topology: to,
        via,
        namespace: invocation.namespace.clone(),
        steps,
        notes,
    }
}

/// One Flux Kustomization of a plan's layout: its name, the folder it
/// applies, the file asogen writes there, the `--manifest` step of the
/// topology's own plan that prints it, and the Kustomization it depends on.
struct FluxPart {
    name: &'static str,
    folder: &'static str,
    file: &'static str,
    manifest: usize,
    after: Option<&'static str>,
}

/// A single install on Flux: one Kustomization applies the whole install.
const FLUX_SINGLE: &[FluxPart] = &[FluxPart {
    name: "aso",
    folder: "aso",
    file: "aso/aso.yaml",
    manifest: 1,
    after: None,
}];

/// A split install on Flux: the webhooks part, then the controller part.
const FLUX_SPLIT: &[FluxPart] = &[
    FluxPart {
        name: "aso-webhooks",
        folder: "aso/webhooks",
        file: "aso/webhooks/aso.yaml",
        manifest: 1,
        after: None,
    },
    FluxPart {
        name: "aso-controller",
        folder: "aso/controller",
        file: "aso/controller/aso.yaml",
        manifest: 2,
        after: Some("aso-webhooks"),
    },
];

/// What every Flux plan says about its placeholders and its waits.
const FLUX_NOTE: &str = "the Kustomizations are printed with sourceRef YOUR-REPOSITORY (your GitRepository); \
     `flux reconcile kustomization NAME --with-source` fetches your commit and returns once NAME applied it \
     and, with wait: true, every Deployment it applies is ready; flux-system is the Kustomization that applies \
     your Kustomization objects in a `flux bootstrap` repository";

/// `flux reconcile` of one Kustomization: returns when it applied the
/// latest commit and, with `wait: true`, what it applied is healthy.
fn flux_reconcile(name: &str) -> String {
    format!("flux reconcile kustomization {name} -n flux-system --with-source")
}

/// The commands that move a live install from the Kustomizations `old` to
/// `new` without a rollout: Flux deletes a Kustomization's objects with it
/// only when `prune: true`, so `old` get `prune: false` first (one commit),
/// then the files and Kustomization objects are swapped (a second commit),
/// and `new` apply the objects unchanged, taking them over. In between, the
/// user checks that the first commit took effect. `manifests` print the
/// files of `new`, one each.
fn flux_hand_over(
    invocation: &Invocation,
    old: &[FluxPart],
    new: &[FluxPart],
    manifests: &[String],
) -> Vec<String> {
    let old_names: Vec<&str> = old.iter().map(|p| p.name).collect();
    let mut commands = vec![format!(
        "in Kustomization {} set spec.prune: false; commit; {}",
        old_names.join(" and "),
        flux_reconcile("flux-system")
    )];
    commands.extend(old.iter().map(|p| {
        format!(
            "kubectl get kustomization {} -n flux-system -o jsonpath='{{.spec.prune}}'   # must print false before you go on",
            p.name
        )
    }));
    commands.push(format!(
        "git rm {}",
        old.iter().map(|p| p.file).collect::<Vec<_>>().join(" ")
    ));
    for (part, manifest) in new.iter().zip(manifests) {
        commands.push(write_to(manifest.clone(), part.file));
    }
    commands.push(format!(
        "replace Kustomization {} with the {} below; commit; {}   # Flux deletes the old without its objects, and the new apply them unchanged",
        old_names.join(" and "),
        if new.len() == 1 { "one" } else { "two" },
        flux_reconcile("flux-system")
    ));
    commands.extend(
        new.iter()
            .map(|p| flux_kustomization(p, &invocation.namespace)),
    );
    commands
}

/// A command that writes `command`'s output to `file` in the user's
/// repository, creating its folder first (an empty folder has none).
fn write_to(command: String, file: &str) -> String {
    match file.rsplit_once('/') {
        Some((dir, _)) => format!("mkdir -p {dir} && {command} > {file}"),
        None => format!("{command} > {file}"),
    }
}

/// How kubectl applies, as the README's quick start installs and ASO's own
/// docs do: server-side, as field manager `kubectl`, conflicts forced (an
/// install made with client-side `kubectl apply` owns the fields it set as
/// `kubectl-client-side-apply`, and an unforced apply stops on them, as
/// the API server showed; forced, it takes them over, as Flux and Argo CD
/// do). One apply for the install and every upgrade, which `upgrade-check
/// --via kubectl` predicts.
pub const KUBECTL_APPLY: &str = "kubectl apply --server-side --force-conflicts -f -";

/// kubectl's commands for one step: apply the step's manifest (printed
/// by `manifest`), then wait for each Deployment's rollout.
fn kubectl_apply(manifest: String, wait: &[String], namespace: &str) -> Vec<String> {
    std::iter::once(format!("{manifest} | {KUBECTL_APPLY}"))
        .chain(wait.iter().map(|deployment| {
            format!(
                "kubectl rollout status deployment/{deployment} -n {namespace} --timeout={TIMEOUT}"
            )
        }))
        .collect()
}

/// Waits until `deployment` has no terminating pod (Kubernetes 1.35 and
/// later count them in status.terminatingReplicas): `kubectl rollout
/// status`, Helm's --wait and kstatus do not wait for them.
fn drain_command(deployment: &str, namespace: &str) -> String {
    format!(
        "kubectl wait deployment/{deployment} -n {namespace} --for=jsonpath='{{.status.terminatingReplicas}}'=0 --timeout={TIMEOUT}"
    )
}

/// Steps 1 and 2 of a split upgrade on `via`.
fn split_steps(
    via: Via,
    invocation: &Invocation,
    step: &dyn Fn(usize, &str, Part) -> Step,
    namespace: &str,
    helm: &dyn Fn(&str) -> String,
) -> Vec<Step> {
    match via {
        Via::Helm => {
            // One release applies every object at once: the controller is
            // held at zero replicas while the webhooks roll.
            let mut paused = step(
                1,
                "upgrade the webhooks; hold the controller at zero replicas",
                Part::All,
            );
            paused.set = vec![Setting {
                key: PAUSED_KEY,
                value: "true".into(),
            }];
            paused.drain = vec![names::WEBHOOKS_DEPLOYMENT.into()];
            paused.commands = vec![
                helm(&format!(" --set {}=true", PAUSED_KEY.path())),
                drain_command(names::WEBHOOKS_DEPLOYMENT, namespace),
            ];
            let mut resume = step(
                2,
                "start the controller of the new version (it applies the CRDs)",
                Part::All,
            );
            resume.commands = vec![helm("")];
            vec![paused, resume]
        }
        Via::Flux => {
            let [webhooks_part, controller_part] = FLUX_SPLIT else {
                unreachable!("the split layout has two Kustomizations")
            };
            let mut webhooks = step(
                1,
                "Kustomization aso-webhooks: the webhooks Deployment and what it needs, wait: true",
                Part::Webhooks,
            );
            webhooks.commands = FLUX_SPLIT
                .iter()
                .map(|p| write_to(invocation.manifest(via, p.manifest), p.file))
                .collect();
            webhooks.commands.push(format!(
                "commit aso/ and the Kustomizations below; {}   # returns when both applied it",
                flux_reconcile(controller_part.name)
            ));
            webhooks.commands.extend(
                FLUX_SPLIT
                    .iter()
                    .map(|p| flux_kustomization(p, &invocation.namespace)),
            );
            let mut controller = step(
                2,
                "Kustomization aso-controller: dependsOn aso-webhooks, wait: true",
                Part::Controller,
            );
            controller.commands = vec![format!(
                "nothing to run: Flux applies {} once {} is Ready (dependsOn), and tries again each retryInterval while the order guard refuses it",
                controller_part.name, webhooks_part.name
            )];
            controller.retry_seconds = Some(RETRY_SECONDS);
            vec![webhooks, controller]
        }
        Via::Argo => {
            let mut sync = step(
                1,
                "one sync: waves -2 prerequisites, -1 webhooks Deployment, 0 webhook Service and configurations, 1 controller; each wave healthy before the next",
                Part::All,
            );
            sync.waves = Some(Order::WebhooksFirst);
            sync.retry_seconds = Some(RETRY_SECONDS);
            sync.commands = vec![
                format!(
                    "{}   # every object annotated with its {SYNC_WAVE}",
                    write_to(invocation.manifest(via, 1), "aso/aso.yaml")
                ),
                format!(
                    "commit aso/; sync the Application (Argo CD applies a wave once the earlier ones are healthy); \
                     give it syncPolicy.retry (limit: 5, backoff: {{duration: {RETRY_SECONDS}s, factor: 1}}): \
                     the controller's wave is refused until the webhooks' old pods are gone, and Argo CD retries a failed sync only so"
                ),
            ];
            vec![sync]
        }
        Via::Kubectl => {
            let mut webhooks = step(
                1,
                "apply the webhooks part; wait for its rollout",
                Part::Webhooks,
            );
            webhooks.drain = vec![names::WEBHOOKS_DEPLOYMENT.into()];
            webhooks.commands =
                kubectl_apply(invocation.manifest(via, 1), &webhooks.wait, namespace);
            webhooks
                .commands
                .push(drain_command(names::WEBHOOKS_DEPLOYMENT, namespace));
            let mut controller = step(
                2,
                "apply the controller part; wait for its rollout",
                Part::Controller,
            );
            controller.commands =
                kubectl_apply(invocation.manifest(via, 2), &controller.wait, namespace);
            vec![webhooks, controller]
        }
    }
}

/// A Flux Kustomization of one part, as a YAML document (`---` first, so
/// that several pasted one after another stay apart).
fn flux_kustomization(part: &FluxPart, namespace: &str) -> String {
    let depends = part.after.map_or(String::new(), |a| {
        format!("  dependsOn:\n    - name: {a}\n")
    });
    let (name, folder) = (part.name, part.folder);
    format!(
        "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n{depends}  path: ./{folder}\n  prune: true\n  wait: true\n  timeout: {TIMEOUT}\n  targetNamespace: {namespace}\n  interval: 10m\n  retryInterval: {RETRY_SECONDS}s\n  sourceRef:\n    kind: GitRepository\n    name: YOUR-REPOSITORY\n"
    )
}

/// The objects step `step` applies: `render` renders the install with the
/// step's values; its part is kept, and waves are added for Argo CD.
pub fn step_objects(step: &Step, rendered: Vec<Value>) -> Vec<Value> {
    let mut objects: Vec<Value> = rendered
        .into_iter()
        .filter(|o| in_part(o, step.part))
        .collect();
    if let Some(order) = step.waves {
        annotate_waves(&mut objects, order);
    }
    objects
}

/// The plan for people.
pub fn format_human(plan: &Plan) -> String {
    let from = if plan.from == plan.topology {
        String::new()
    } else {
        format!("from {} to ", plan.from.as_str())
    };
    let mut out = format!(
        "upgrade plan: topology {from}{}, via {}, namespace {}\n",
        plan.topology.as_str(),
        plan.via.name(),
        plan.namespace
    );
    for step in &plan.steps {
        out.push_str(&format!("\nstep {}: {}\n", step.number, step.title));
        for setting in &step.set {
            out.push_str(&format!(
                "  sets {}={}\n",
                setting.key.path(),
                setting.value
            ));
        }
        if !step.wait.is_empty() {
            out.push_str(&format!(
                "  waits for the rollout of: {}\n",
                step.wait.join(", ")
            ));
        }
        if !step.drain.is_empty() {
            out.push_str(&format!(
                "  then waits until no older pod of it is left, terminating ones included: {}\n",
                step.drain.join(", ")
            ));
        }
        if let Some(seconds) = step.retry_seconds {
            out.push_str(&format!(
                "  a write the order guard refuses (the webhooks' old pods still stopping) is tried again after {seconds} s\n"
            ));
        }
        for object in &step.delete {
            out.push_str(&format!("  deletes {} {}\n", object.kind, object.name));
        }
        for command in &step.commands {
            for (i, line) in command.lines().enumerate() {
                let lead = if i == 0 { "  $ " } else { "    " };
                if command.contains('\n') {
                    out.push_str(&format!("    {line}\n"));
                } else {
                    out.push_str(&format!("{lead}{line}\n"));
                }
            }
        }
    }
    for note in &plan.notes {
        out.push_str(&format!("\nnote: {note}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{SELECTOR_LABELS, WEBHOOKS_SELECTOR_LABELS};
    use serde_json::json;

    fn labels(of: &[(&str, &str)]) -> Value {
        of.iter().map(|(k, v)| (k.to_string(), json!(v))).collect()
    }

    fn deployment(name: &str, role: &[(&str, &str)]) -> Value {
        json!({"kind": "Deployment", "metadata": {"name": name},
               "spec": {"selector": {"matchLabels": labels(role)},
                        "template": {"metadata": {"labels": labels(role)},
                                     "spec": {"containers": [{"name": "manager", "image": "r/c:v9"}]}}}})
    }

    fn split() -> Vec<Value> {
        vec![
            json!({"kind": "ServiceAccount", "metadata": {"name": "sa"}}),
            deployment(names::WEBHOOKS_DEPLOYMENT, WEBHOOKS_SELECTOR_LABELS),
            deployment(names::DEPLOYMENT, SELECTOR_LABELS),
            json!({"kind": "Service", "metadata": {"name": names::WEBHOOK_SERVICE},
                   "spec": {"selector": labels(WEBHOOKS_SELECTOR_LABELS)}}),
            json!({"kind": "Service", "metadata": {"name": names::METRICS_SERVICE},
                   "spec": {"selector": labels(SELECTOR_LABELS)}}),
            json!({"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"}}),
        ]
    }

    /// The default shape of `topology`, as the model builds it.
    fn shape(topology: Topology) -> Shape {
        let source = crate::read::parse_source(
            "v.yaml".into(),
            format!("topology: {}\n", topology.as_str()),
        )
        .unwrap();
        crate::check::Checker::new()
            .check(&[source], "ns")
            .unwrap()
            .shape
    }

    fn invocation() -> Invocation {
        Invocation {
            namespace: "ns".into(),
            files: vec!["my values.yaml".into()],
            ..Default::default()
        }
    }

    #[test]
    fn objects_go_to_their_stage() {
        let stages: Vec<Stage> = split().iter().map(stage_of).collect();
        assert_eq!(
            stages,
            [
                Stage::Prerequisites,
                Stage::Webhooks,
                Stage::Controller,
                Stage::Routing,
                Stage::Controller,
                Stage::Routing
            ]
        );
    }

    #[test]
    fn single_is_one_step_on_every_path() {
        let objects = vec![deployment(names::DEPLOYMENT, SELECTOR_LABELS)];
        for via in Via::ALL {
            let plan = plan(&shape(Topology::Single), via, &objects, &invocation()).unwrap();
            assert_eq!(plan.steps.len(), 1, "{via:?}");
            assert_eq!(plan.steps[0].part, Part::All);
            assert_eq!(plan.steps[0].wait, [names::DEPLOYMENT]);
        }
    }

    #[test]
    fn split_upgrades_the_webhooks_before_the_controller() {
        let objects = split();
        for via in Via::ALL {
            let plan = plan(&shape(Topology::Split), via, &objects, &invocation()).unwrap();
            let always: Vec<&Step> = plan
                .steps
                .iter()
                .filter(|s| s.when == When::Always)
                .collect();
            match via {
                Via::Helm => {
                    assert_eq!(always.len(), 2);
                    assert_eq!(always[0].set[0].key, PAUSED_KEY);
                    assert!(always[1].set.is_empty());
                    assert!(always[0].commands[0].contains("--set split.controller.paused=true"));
                }
                Via::Argo => {
                    assert_eq!(always.len(), 1);
                    assert_eq!(always[0].waves, Some(Order::WebhooksFirst));
                }
                Via::Flux | Via::Kubectl => {
                    assert_eq!(always.len(), 2);
                    assert_eq!(always[0].wait, [names::WEBHOOKS_DEPLOYMENT]);
                    assert_eq!(always[1].wait, [names::DEPLOYMENT]);
                }
            }
            let last = plan.steps.last().unwrap();
            assert_eq!(last.when, When::KindsAdded);
            assert_eq!(last.set[0].key, REFRESH_KEY);
            assert_eq!(last.set[0].value, "v9");
        }
    }

    /// Flux and Argo CD call the webhooks healthy while their old pods
    /// still stop, so the guard refuses the controller then: the plan
    /// makes each applier try again soon, where the kubectl and Helm plans
    /// wait for the old pods instead.
    #[test]
    fn appliers_that_cannot_wait_for_old_pods_retry_the_controller_soon() {
        for via in Via::ALL {
            let plan = plan(&shape(Topology::Split), via, &split(), &invocation()).unwrap();
            let controller = plan
                .steps
                .iter()
                .find(|s| s.when == When::Always && s.wait.iter().any(|w| w == names::DEPLOYMENT))
                .unwrap();
            let drains = plan.steps.iter().any(|s| !s.drain.is_empty());
            match via {
                Via::Flux | Via::Argo => {
                    assert_eq!(controller.retry_seconds, Some(RETRY_SECONDS), "{via:?}");
                    assert!(!drains, "{via:?}");
                }
                Via::Helm | Via::Kubectl => {
                    assert_eq!(controller.retry_seconds, None, "{via:?}");
                    assert!(drains, "{via:?}");
                }
            }
        }
        let flux = plan(&shape(Topology::Split), Via::Flux, &split(), &invocation()).unwrap();
        let kustomizations: Vec<&String> = flux
            .steps
            .iter()
            .flat_map(|s| &s.commands)
            .filter(|c| c.contains("kind: Kustomization"))
            .collect();
        assert_eq!(kustomizations.len(), 2);
        for k in kustomizations {
            assert!(
                k.contains(&format!("retryInterval: {RETRY_SECONDS}s")),
                "{k}"
            );
        }
    }

    #[test]
    fn waves_follow_the_stages() {
        let plan = plan(&shape(Topology::Split), Via::Argo, &split(), &invocation()).unwrap();
        let objects = step_objects(&plan.steps[0], split());
        let waves: Vec<&str> = objects
            .iter()
            .map(|o| o["metadata"]["annotations"][SYNC_WAVE].as_str().unwrap())
            .collect();
        assert_eq!(waves, ["-2", "-1", "1", "0", "1", "0"]);
    }

    #[test]
    fn a_migration_moves_the_service_only_to_ready_pods_of_their_final_shape() {
        let to_split = migration(
            Topology::Single,
            Topology::Split,
            Via::Kubectl,
            &split(),
            Vec::new(),
            &invocation(),
        )
        .unwrap();
        let parts: Vec<Part> = to_split.steps.iter().map(|s| s.part).collect();
        assert_eq!(parts, [Part::Unrouted, Part::Routing, Part::Controller]);
        assert_eq!(to_split.steps[0].wait, [names::WEBHOOKS_DEPLOYMENT]);
        let service = &split()[3];
        assert!(!in_part(service, Part::Unrouted) && in_part(service, Part::Routing));
        let single = vec![
            deployment(names::DEPLOYMENT, SELECTOR_LABELS),
            json!({"kind": "Service", "metadata": {"name": names::WEBHOOK_SERVICE},
                   "spec": {"selector": labels(SELECTOR_LABELS)}}),
        ];
        let left = leftovers(&split(), &single);
        assert!(left.iter().any(|o| o.name == names::WEBHOOKS_DEPLOYMENT));
        assert!(!left.iter().any(|o| o.name == names::DEPLOYMENT));
        let to_single = migration(
            Topology::Split,
            Topology::Single,
            Via::Kubectl,
            &single,
            left.clone(),
            &invocation(),
        )
        .unwrap();
        let parts: Vec<Part> = to_single.steps.iter().map(|s| s.part).collect();
        assert_eq!(parts, [Part::Controller, Part::Webhooks, Part::All]);
        assert_eq!(to_single.steps[2].delete, left);
        let argo = migration(
            Topology::Split,
            Topology::Single,
            Via::Argo,
            &single,
            left,
            &invocation(),
        )
        .unwrap();
        assert_eq!(argo.steps[0].waves, Some(Order::ControllerFirst));
        assert!(
            Stage::Controller.wave(Order::ControllerFirst)
                < Stage::Routing.wave(Order::ControllerFirst)
        );
    }

    fn single() -> Vec<Value> {
        vec![
            deployment(names::DEPLOYMENT, SELECTOR_LABELS),
            json!({"kind": "Service", "metadata": {"name": names::WEBHOOK_SERVICE},
                   "spec": {"selector": labels(SELECTOR_LABELS)}}),
        ]
    }

    /// What the bridge renders besides `single()`: the webhooks
    /// Deployment (its Service selects both roles).
    fn bridge() -> Vec<Value> {
        let mut objects = single();
        objects.push(deployment(
            names::WEBHOOKS_DEPLOYMENT,
            WEBHOOKS_SELECTOR_LABELS,
        ));
        objects
    }

    #[test]
    fn helm_and_flux_migrate_through_the_bridge_in_two_applies() {
        assert_eq!(left_from(Topology::Single, Via::Helm), Topology::Bridge);
        assert_eq!(left_from(Topology::Single, Via::Flux), Topology::Bridge);
        assert_eq!(left_from(Topology::Single, Via::Kubectl), Topology::Single);
        for via in [Via::Helm, Via::Flux] {
            for (from, to, objects) in [
                (Topology::Single, Topology::Split, split()),
                (Topology::Split, Topology::Single, single()),
            ] {
                let left = leftovers(&bridge(), &objects);
                let plan = migration(from, to, via, &objects, left.clone(), &invocation()).unwrap();
                assert_eq!((plan.from, plan.topology), (from, to));
                // Flux hands the objects between its layouts on split's side
                let hand_over = |s: &Step| s.title.starts_with("hand the install over");
                let moves: Vec<&Step> = plan.steps.iter().filter(|s| !hand_over(s)).collect();
                let handed: Vec<usize> = plan
                    .steps
                    .iter()
                    .filter(|s| hand_over(s))
                    .map(|s| s.number)
                    .collect();
                match (via, from) {
                    (Via::Helm, _) => assert!(handed.is_empty()),
                    (_, Topology::Split) => assert_eq!(handed, [1]),
                    _ => assert_eq!(handed, [3]),
                }
                assert_eq!(moves.len(), 2, "{plan:#?}");
                let [enter, leave] = [moves[0], moves[1]];
                // step 1 renders the bridge, step 2 the values as they are
                assert_eq!(
                    enter.set,
                    [Setting {
                        key: keys::TOPOLOGY,
                        value: "bridge".into()
                    }]
                );
                if via == Via::Helm {
                    assert!(
                        enter.commands[0].contains(" --set topology=bridge --wait"),
                        "{:?}",
                        enter.commands
                    );
                    assert!(!leave.commands[0].contains("--set"), "{:?}", leave.commands);
                } else {
                    for step in [enter, leave] {
                        assert!(
                            step.commands[0]
                                .ends_with(&format!("--manifest {} > aso/aso.yaml", step.number)),
                            "{:?}",
                            step.commands
                        );
                    }
                }
                assert!(leave.set.is_empty());
                assert!(
                    plan.steps
                        .iter()
                        .all(|s| s.part == Part::All && s.waves.is_none())
                );
                // step 1 waits for both Deployments: the new role's pods are
                // ready before step 2 routes the Service to them alone
                let mut waited = enter.wait.clone();
                waited.sort();
                assert_eq!(waited, [names::DEPLOYMENT, names::WEBHOOKS_DEPLOYMENT]);
                // the applier deletes what only the bridge had, after step 2
                assert!(enter.delete.is_empty());
                assert_eq!(leave.delete, left);
                let gone = leave
                    .delete
                    .iter()
                    .any(|o| o.name == names::WEBHOOKS_DEPLOYMENT);
                assert_eq!(gone, to == Topology::Single);
                // a hand-over rolls nothing, deletes nothing, and turns the
                // old Kustomizations' prune off before it removes them
                for step in plan.steps.iter().filter(|s| hand_over(s)) {
                    assert!(step.wait.is_empty() && step.delete.is_empty());
                    let at = |what: &str| {
                        step.commands
                            .iter()
                            .position(|c| c.contains(what))
                            .unwrap_or_else(|| panic!("{what}: {:?}", step.commands))
                    };
                    assert!(at("spec.prune: false") < at("git rm "));
                    assert!(at("git rm ") < at("replace Kustomization"));
                }
            }
            // left halfway: step 2 alone finishes it (and Flux hands over)
            let finish = migration(
                Topology::Bridge,
                Topology::Split,
                via,
                &split(),
                Vec::new(),
                &invocation(),
            )
            .unwrap();
            assert_eq!(finish.steps[0].number, 1);
            assert!(finish.steps[0].set.is_empty());
            assert_eq!(finish.steps.len(), if via == Via::Helm { 1 } else { 2 });
        }
    }

    #[test]
    fn the_bridge_is_only_left() {
        for via in Via::ALL {
            assert_eq!(
                plan(&shape(Topology::Bridge), via, &bridge(), &invocation()),
                Err(Refused::InBridge),
                "{via:?}"
            );
            assert_eq!(
                migration(
                    Topology::Single,
                    Topology::Bridge,
                    via,
                    &bridge(),
                    Vec::new(),
                    &invocation()
                ),
                Err(Refused::InBridge),
                "{via:?}"
            );
        }
        assert_eq!(
            migration(
                Topology::Bridge,
                Topology::Single,
                Via::Kubectl,
                &single(),
                Vec::new(),
                &invocation()
            ),
            Err(Refused::BridgeNotEntered { via: "kubectl" })
        );
        let message = Refused::InBridge.to_string();
        assert!(message.contains("finish the migration first"), "{message}");
    }

    #[test]
    fn commands_quote_what_the_shell_would_split() {
        let plan = plan(
            &shape(Topology::Split),
            Via::Kubectl,
            &split(),
            &invocation(),
        )
        .unwrap();
        assert_eq!(
            plan.steps[0].commands,
            [
                "asogen upgrade-plan --via kubectl -n ns -f 'my values.yaml' --manifest 1 | kubectl apply --server-side --force-conflicts -f -",
                "kubectl rollout status deployment/azureserviceoperator-webhooks -n ns --timeout=10m",
                "kubectl wait deployment/azureserviceoperator-webhooks -n ns --for=jsonpath='{.status.terminatingReplicas}'=0 --timeout=10m",
            ]
        );
    }
}
