//! The validated model: values that passed the shape checks and every rule,
//! in a form where the broken shapes cannot be written down.

use std::num::NonZeroU32;
use std::sync::Arc;

use crate::catalog::Catalog;
use crate::roles::Role;
use crate::rules::{self, Violation};
use crate::values::{IntOrPercent, StrategyType, Topology, Values};

/// The versions of one release. The one place they live: Chart.yaml, the
/// `app.kubernetes.io/version` label and the default image all read them from here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The chart version (SemVer, no `v`).
    pub chart_version: String,
    /// The operator version: the image tag and Chart.yaml's appVersion.
    pub app_version: String,
    /// The image digest (`sha256:...`) that pins the tag, when known.
    pub image_digest: Option<String>,
}

/// The release the built-in catalog describes: its image tag is the
/// appVersion, and the chart version is the same without the `v`.
impl Default for Release {
    fn default() -> Self {
        let app_version = Catalog::builtin().release.clone();
        Release {
            chart_version: app_version.trim_start_matches('v').to_string(),
            app_version,
            image_digest: None,
        }
    }
}

impl Release {
    /// `@sha256:...` when the digest is known, else nothing.
    pub fn digest_suffix(&self) -> String {
        self.image_digest
            .as_ref()
            .map_or(String::new(), |digest| format!("@{digest}"))
    }
}

/// The namespace install manifests and `template` use unless told otherwise.
pub const DEFAULT_NAMESPACE: &str = "azureserviceoperator-system";

/// How the Deployment replaces pods. Only `RollingUpdate` carries rolling
/// update parameters, so "Recreate with a rollingUpdate block" cannot exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// Stop every old pod before starting new ones.
    Recreate,
    /// One replica, replaced surge-first (behind the feature gate).
    RollingUpdate {
        /// Pods above the replica count during an update.
        max_surge: IntOrPercent,
        /// Pods that may be unavailable during an update.
        max_unavailable: IntOrPercent,
    },
}

/// One Deployment of a [`Shape`]: its replica count (0 for a paused
/// controller) and how it replaces its pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentShape {
    /// `spec.replicas`.
    pub replicas: u32,
    /// `spec.strategy`.
    pub strategy: Strategy,
}

/// The Deployments of a topology, in the form their rules make valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One Deployment that runs the control loop and serves the webhooks.
    Single {
        /// At least one replica.
        replicas: NonZeroU32,
        /// The update strategy, valid for the replica count.
        strategy: Strategy,
    },
    /// The webhooks Deployment (rolling, never below its replica count)
    /// beside the controller Deployment (always Recreate).
    Split {
        /// At least one webhook pod.
        webhooks: NonZeroU32,
        /// Webhook pods above the count during an update, never 0
        /// (maxUnavailable is always 0).
        webhooks_max_surge: IntOrPercent,
        /// The controller pods; None while paused.
        controller: Option<NonZeroU32>,
    },
    /// The middle step of a Helm migration: the single topology's
    /// Deployment beside the split's webhooks Deployment.
    Bridge {
        /// The controller, as [`Shape::Single`].
        controller: Box<Shape>,
        /// At least one webhook pod.
        webhooks: NonZeroU32,
        /// As topology split's.
        webhooks_max_surge: IntOrPercent,
    },
}

impl Shape {
    /// The topology that lays the Deployments out so.
    pub fn topology(&self) -> Topology {
        match self {
            Shape::Single { .. } => Topology::Single,
            Shape::Split { .. } => Topology::Split,
            Shape::Bridge { .. } => Topology::Bridge,
        }
    }

    /// The Deployment of `role` as the shape makes it, None when the
    /// topology has none: what the render must write (held by
    /// `render::objects::tests::every_topology_renders_its_shape`).
    pub fn deployment(&self, role: Role) -> Option<DeploymentShape> {
        let webhooks = |replicas: &NonZeroU32, max_surge: &IntOrPercent| DeploymentShape {
            replicas: replicas.get(),
            strategy: Strategy::RollingUpdate {
                max_surge: max_surge.clone(),
                max_unavailable: IntOrPercent::Int(0),
            },
        };
        match (self, role) {
            (Shape::Single { replicas, strategy }, Role::Controller) => Some(DeploymentShape {
                replicas: replicas.get(),
                strategy: strategy.clone(),
            }),
            (Shape::Single { .. }, Role::Webhooks) => None,
            (Shape::Split { controller, .. }, Role::Controller) => Some(DeploymentShape {
                replicas: controller.map_or(0, NonZeroU32::get),
                strategy: Strategy::Recreate,
            }),
            (
                Shape::Split {
                    webhooks: replicas,
                    webhooks_max_surge,
                    ..
                }
                | Shape::Bridge {
                    webhooks: replicas,
                    webhooks_max_surge,
                    ..
                },
                Role::Webhooks,
            ) => Some(webhooks(replicas, webhooks_max_surge)),
            (Shape::Bridge { controller, .. }, Role::Controller) => controller.deployment(role),
        }
    }

    /// Whether it is the single-replica rolling shape: one Deployment of
    /// one replica, replaced surge-first.
    pub fn rolls_one_replica(&self) -> bool {
        matches!(
            self,
            Shape::Single { replicas, strategy: Strategy::RollingUpdate { .. } } if replicas.get() == 1
        )
    }
}

/// A deployment that may be rendered.
#[derive(Debug, Clone)]
pub struct Model {
    /// The values it was built from (shape-checked).
    pub values: Values,
    /// The same values as the chart's templates see `.Values`: written
    /// once here, read by the rules and by every object's render.
    pub json: serde_json::Value,
    /// The Deployments, as the topology lays them out.
    pub shape: Shape,
    /// The namespace of every namespaced object.
    pub namespace: String,
    /// The API groups and kinds the operator serves.
    pub catalog: Arc<Catalog>,
    /// The versions being rendered.
    pub release: Release,
}

impl Model {
    /// Applies every rule; returns every broken one, or the model.
    pub fn new(
        values: Values,
        namespace: &str,
        catalog: Arc<Catalog>,
        release: Release,
    ) -> Result<Model, Vec<Violation>> {
        let json = serde_json::to_value(&values).expect("values serialize");
        let broken = rules::check(&json);
        if !broken.is_empty() {
            return Err(broken);
        }
        // The rules guarantee each count >= 1 where it is read (their
        // ids are in the rule table only); the schema bounds it above.
        let positive = |count: i64| {
            u32::try_from(count)
                .ok()
                .and_then(NonZeroU32::new)
                .expect("the rules hold: a count read here is positive")
        };
        let single = || Shape::Single {
            replicas: positive(values.replica_count),
            strategy: match values.strategy.kind {
                StrategyType::Recreate => Strategy::Recreate,
                StrategyType::RollingUpdate => {
                    let params = values.strategy.rolling_update.clone().unwrap_or_default();
                    Strategy::RollingUpdate {
                        max_surge: params.max_surge,
                        max_unavailable: params.max_unavailable,
                    }
                }
            },
        };
        let webhooks = || {
            (
                positive(values.split.webhooks.replica_count.into()),
                values.split.webhooks.max_surge.clone(),
            )
        };
        let shape = match values.topology {
            Topology::Single => single(),
            Topology::Split => {
                let (webhooks, webhooks_max_surge) = webhooks();
                Shape::Split {
                    webhooks,
                    webhooks_max_surge,
                    controller: (!values.split.controller.paused)
                        .then(|| positive(values.split.controller.replica_count.into())),
                }
            }
            Topology::Bridge => {
                let (webhooks, webhooks_max_surge) = webhooks();
                Shape::Bridge {
                    controller: Box::new(single()),
                    webhooks,
                    webhooks_max_surge,
                }
            }
        };
        Ok(Model {
            values,
            json,
            shape,
            namespace: namespace.to_string(),
            catalog,
            release,
        })
    }
}
