//! The values interface: every key a values file may set, with its default
//! and its documentation.
//!
//! The doc comment on each field is the single source of its description:
//! it becomes the `description` in `values.schema.json`, the comment above
//! the key in the chart's `values.yaml`, and a row in the chart README.
//! These types accept every *shape* the schema accepts, including shapes
//! that break a rule (so the rule can be reported by id); `model.rs` turns
//! them into a model where those shapes cannot exist.
//!
//! Each struct is written inside [`values_struct!`], every field's default
//! beside it (`pub enable: bool = true,`; a field without one gets its
//! type's default): adding a key is adding its field, in one place.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, EnvVar, LocalObjectReference, PodSecurityContext, ResourceRequirements,
    SecurityContext, Toleration, TopologySpreadConstraint,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::keys::Key;

mod defaults;

use defaults::values_struct;

/// The controller image, without its tag (`image.repositoryBase`'s default).
pub const IMAGE_REPOSITORY: &str = "mcr.microsoft.com/k8s/azureserviceoperator";

values_struct! {
    /// Values of the azure-service-operator chart.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    #[schemars(title = "azure-service-operator chart values")]
    pub struct Values {
        /// replicaCount is the number of controller-manager pods. With more than one, leader election picks the one that runs the control loop and all of them serve webhooks, so strategy.type must be Recreate.
        #[schemars(extend("examples" = [2, 1]))]
        pub replica_count: i64 = 2,
        /// strategy is how the Deployment replaces pods on upgrade. Recreate (the default) stops every old pod before starting new ones, so old and new webhooks never serve side by side. RollingUpdate needs featureGates.singleReplicaRollingUpdate and one replica, and keeps webhooks up only through changes that keep ASO's version: a version upgrade of it does not finish.
        pub strategy: StrategyValues,
        /// featureGates turns on behaviour that is safe only in narrow cases.
        pub feature_gates: FeatureGates,
        /// revisionHistoryLimit is the number of old ReplicaSets kept to allow rollback.
        #[schemars(range(min = 0))]
        pub revision_history_limit: i32 = 10,
        /// image is the container image the controller-manager pod runs.
        pub image: Image,
        /// metrics configures the Prometheus metrics endpoint of the controller.
        pub metrics: Metrics,
        /// installCRDs lets the operator install and upgrade the CRDs matching crdPattern itself.
        #[serde(rename = "installCRDs")]
        pub install_crds: bool = true,
        /// crdPattern is a semicolon-delimited string (or a list) of "{group}/{kind}" globs naming the CRDs the operator installs, e.g. "resources.azure.com/*;keyvault.azure.com/*". No effect when installCRDs is false.
        #[schemars(extend("examples" = ["resources.azure.com/*;keyvault.azure.com/*"]))]
        pub crd_pattern: StringOrList,
        /// crdLabels is a comma-delimited string (or a list) of key=value labels the operator adds to every CRD it manages.
        pub crd_labels: StringOrList,
        /// multitenant.enable splits the operator into one cluster-wide webhooks install and per-tenant watchers installs.
        pub multitenant: Multitenant,
        /// azureOperatorMode is "watchers", "webhooks" or "watchers-and-webhooks"; empty means both.
        pub azure_operator_mode: OperatorMode = OperatorMode::Default,
        /// webhook configures the admission and conversion webhook server.
        pub webhook: Webhook,
        /// useJSONLogging makes the controller log JSON lines instead of text.
        #[serde(rename = "useJSONLogging")]
        pub use_json_logging: bool = false,
        /// go configures the Go runtime of the controller.
        pub go: GoRuntime,
        /// probes sets the timings of the liveness, readiness and startup probes (paths and ports are fixed).
        pub probes: Probes,
        /// extraEnv lists extra environment variables for the manager container (with topology split, the controller's only: the webhook pods hold no Azure credential).
        pub extra_env: Vec<EnvVar>,
        /// resources are the CPU and memory requests and limits of the manager container.
        pub resources: ResourceRequirements = default_resources(),
        /// securityContext is the manager container's security context. The default is the restricted Pod Security Standard; loosening it is not recommended.
        pub security_context: SecurityContext = default_security_context(),
        /// podSecurityContext is the pod's security context. The default runs as non-root with the RuntimeDefault seccomp profile.
        pub pod_security_context: PodSecurityContext = default_pod_security_context(),
        /// nodeSelector restricts the nodes the pod may run on.
        #[schemars(extend("examples" = [{"kubernetes.io/os": "linux"}]))]
        pub node_selector: BTreeMap<String, String> =
            BTreeMap::from([("kubernetes.io/os".into(), "linux".into())]),
        /// tolerations let the pod schedule onto nodes with matching taints.
        pub tolerations: Vec<Toleration>,
        /// affinity holds node affinity and pod (anti-)affinity rules.
        pub affinity: Affinity,
        /// priorityClassName is the PriorityClass of the pod; empty for none.
        #[schemars(extend("pattern" = crate::names::SUBDOMAIN_OR_EMPTY_PATTERN, "maxLength" = crate::names::SUBDOMAIN_MAX))]
        pub priority_class_name: String,
        /// podAnnotations are added to the pod.
        pub pod_annotations: BTreeMap<String, String>,
        /// podLabels are added to the pod (with topology split, to the pods of both roles, except the identity labels aadpodidbinding and azure.workload.identity/use, which only the controller pods get).
        #[schemars(extend("examples" = [{"team": "platform"}]))]
        pub pod_labels: BTreeMap<String, String>,
        /// deploymentAnnotations are added to the Deployment.
        pub deployment_annotations: BTreeMap<String, String>,
        /// aadPodIdentity configures the deprecated aad-pod-identity authentication.
        pub aad_pod_identity: AadPodIdentity,
        /// serviceAccount configures the controller's ServiceAccount.
        pub service_account: ServiceAccount,
        /// createAzureOperatorSecret makes the chart create the aso-controller-settings Secret from the azure* values; set false to bring your own.
        pub create_azure_operator_secret: bool = true,
        /// azureSubscriptionID is the Azure subscription the operator acts against.
        #[serde(rename = "azureSubscriptionID")]
        #[schemars(extend("examples" = ["00000000-0000-0000-0000-000000000000"]))]
        pub azure_subscription_id: String,
        /// azureTenantID is the Entra tenant the subscription is in.
        #[serde(rename = "azureTenantID")]
        pub azure_tenant_id: String,
        /// azureAdditionalTenants is a comma-separated list of extra tenants the operator may authenticate with.
        pub azure_additional_tenants: String,
        /// azureClientID is the client ID of the service principal or managed identity the operator authenticates as.
        #[serde(rename = "azureClientID")]
        pub azure_client_id: String,
        /// azureClientSecret is the client secret of the service principal (service principal authentication only). It is a secret: asogen never prints it in a message.
        pub azure_client_secret: String,
        /// azureClientCertificate is a PEM or PKCS12 certificate with its private key, for certificate authentication.
        pub azure_client_certificate: String,
        /// azureClientCertificatePassword protects azureClientCertificate.
        pub azure_client_certificate_password: String,
        /// azureSyncPeriod is how often resources are re-reconciled with Azure without a change in Kubernetes, e.g. "1h", "15m" or "never"; empty for the operator's default.
        #[schemars(extend("examples" = ["1h", "15m", "never"]))]
        pub azure_sync_period: String,
        /// azureTargetNamespaces lists the namespaces the operator watches; empty watches all.
        #[schemars(extend("examples" = [["team-a", "team-b"]]))]
        pub azure_target_namespaces: Vec<String>,
        /// azureAuthorityHost is the Entra authority URL; empty for the public cloud.
        pub azure_authority_host: String,
        /// azureResourceManagerEndpoint is the Azure Resource Manager endpoint; empty for the public cloud.
        pub azure_resource_manager_endpoint: String,
        /// azureResourceManagerAudience is the Azure Resource Manager audience; empty for the public cloud.
        pub azure_resource_manager_audience: String,
        /// azureUserAgentSuffix is appended to the User-Agent of the operator's Azure requests.
        pub azure_user_agent_suffix: String,
        /// useWorkloadIdentityAuth authenticates with Azure Workload Identity.
        pub use_workload_identity_auth: bool = false,
        /// allowMultiEnvManagement lets per-namespace and per-resource credentials name their own Azure cloud endpoints.
        pub allow_multi_env_management: bool = false,
        /// maxConcurrentReconciles is the number of workers per resource type.
        #[schemars(range(min = 1))]
        pub max_concurrent_reconciles: i32 = 4,
        /// rateLimit configures the operator's own rate limiting of reconciles.
        pub rate_limit: RateLimit,
        /// networkPolicies configures the NetworkPolicies that restrict the controller's traffic.
        pub network_policies: NetworkPolicies,
        /// podDisruptionBudget configures the PodDisruptionBudget of the controller.
        pub pod_disruption_budget: PodDisruptionBudgetValues,
        /// admissionPolicy configures the in-cluster guard: ValidatingAdmissionPolicies that refuse the Deployment shapes the rules forbid, whether they come from an upgrade, `kubectl edit` or `kubectl scale`.
        pub admission_policy: AdmissionPolicy,
        /// topology is how the operator runs: "single" (the default) runs one controller-manager Deployment whose pods serve the control loop and the webhooks; "split" runs the webhooks in their own Deployment (azureserviceoperator-webhooks, rolled out pod by pod so webhooks stay up) beside the controller Deployment (which applies the CRDs and runs the control loop), configured under split; "bridge" is only the middle step of a migration between the two with Helm (asogen upgrade-plan --via helm --from single|split runs it): the single controller Deployment beside the split's webhooks Deployment, the webhook Service routing to both.
        pub topology: Topology = Topology::Single,
        /// split configures the two Deployments of topology split; read only with topology split (split.webhooks also in the bridge of a Helm migration). Both take every other key (image, metrics, resources, affinity, nodeSelector, tolerations, ...) as the single Deployment does.
        pub split: Split,
        /// global is set by Helm when this chart is a dependency of another chart; asogen ignores it.
        #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
        pub global: serde_json::Map<String, serde_json::Value>,
    }
}

values_struct! {
    /// The Deployment strategy as written in values (any shape the schema
    /// allows; the rules decide which combinations are accepted).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct StrategyValues {
        /// strategy.type is Recreate (required with 2+ replicas) or RollingUpdate (one replica, behind featureGates.singleReplicaRollingUpdate).
        #[serde(rename = "type")]
        pub kind: StrategyType = StrategyType::Recreate,
        /// strategy.rollingUpdate tunes a rolling update; allowed only with strategy.type RollingUpdate.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub rolling_update: Option<RollingUpdateValues>,
    }
}

/// The two Deployment strategy types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StrategyType {
    /// Stop every old pod, then start the new ones (required with 2+ replicas).
    Recreate,
    /// Start a new pod before stopping the old one (one replica only, behind the feature gate).
    RollingUpdate,
}

impl StrategyType {
    /// The name Kubernetes uses.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyType::Recreate => "Recreate",
            StrategyType::RollingUpdate => "RollingUpdate",
        }
    }
}

values_struct! {
    /// Rolling update parameters.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct RollingUpdateValues {
        /// strategy.rollingUpdate.maxSurge is how many pods may be created above replicaCount during an update: a number or a percentage like "50%".
        #[schemars(extend("examples" = [1, "25%"]))]
        pub max_surge: IntOrPercent = IntOrPercent::Int(1),
        /// strategy.rollingUpdate.maxUnavailable is how many pods may be unavailable during an update: a number or a percentage like "0%".
        #[schemars(extend("examples" = [0, "25%"]))]
        pub max_unavailable: IntOrPercent = IntOrPercent::Int(0),
    }
}

/// A non-negative count or a percentage ("25%").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IntOrPercent {
    /// An absolute number.
    Int(i32),
    /// A percentage, written "N%".
    Percent(String),
}

impl JsonSchema for IntOrPercent {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IntOrPercent".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": "^[0-9]+%$"}
            ]
        })
    }
}

impl From<&IntOrPercent> for k8s_openapi::apimachinery::pkg::util::intstr::IntOrString {
    fn from(value: &IntOrPercent) -> Self {
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        match value {
            IntOrPercent::Int(n) => IntOrString::Int(*n),
            IntOrPercent::Percent(s) => IntOrString::String(s.clone()),
        }
    }
}

values_struct! {
    /// Feature gates of the chart.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct FeatureGates {
        /// featureGates.singleReplicaRollingUpdate allows strategy.type RollingUpdate with replicaCount 1, which keeps webhooks up through changes that keep ASO's version; a version upgrade of that shape does not finish (the new pod's CRD step waits for the Lease the old pod holds), so upgrade versions with strategy.type Recreate or use topology split.
        pub single_replica_rolling_update: bool,
    }
}

/// A string, or a list of strings joined by the chart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StringOrList {
    /// One delimited string.
    String(String),
    /// A list of entries.
    List(Vec<String>),
}

// An enum: its default is a variant, not a list of fields.
impl Default for StringOrList {
    fn default() -> Self {
        StringOrList::String(String::new())
    }
}

impl StringOrList {
    /// The entries joined with `separator` (a string is passed through as written).
    pub fn joined(&self, separator: &str) -> String {
        match self {
            StringOrList::String(s) => s.clone(),
            StringOrList::List(items) => items.join(separator),
        }
    }
}

values_struct! {
    /// Container image settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct Image {
        /// image.repository is the full image reference of the controller, tag included, evaluated as a Helm template like upstream's default "{{ .Values.image.repositoryBase }}:{{ .Values.image.tag }}" (only {{ .Values.KEY }} substitutions naming a string, number or boolean that is not a secret, through no key named like a method of Helm's values such as YAML); empty means image.repositoryBase tagged with image.tag.
        #[schemars(extend("examples" = ["{{ .Values.image.repositoryBase }}:{{ .Values.image.tag }}", "myregistry.example.com/aso/controller:v2.20.0"]))]
        pub repository: String,
        /// image.repositoryBase is the controller image without its tag.
        pub repository_base: String = IMAGE_REPOSITORY.into(),
        /// image.tag is the controller image's tag; empty means the chart's appVersion.
        #[schemars(extend("examples" = ["v2.20.0"]))]
        pub tag: String,
        /// image.kubeRBACProxy is accepted for compatibility with older values files and unused: the controller serves secure metrics itself.
        #[serde(rename = "kubeRBACProxy", skip_serializing_if = "Option::is_none")]
        pub kube_rbac_proxy: Option<String>,
        /// image.pullSecrets are the image pull secrets of the pod.
        pub pull_secrets: Vec<LocalObjectReference>,
    }
}

values_struct! {
    /// Metrics endpoint settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct Metrics {
        /// metrics.enable serves Prometheus metrics and creates the metrics Service.
        pub enable: bool = true,
        /// metrics.secure serves metrics over HTTPS with a cert-manager certificate.
        pub secure: bool = true,
        /// metrics.profiling exposes the /debug/pprof endpoints (only when metrics.secure).
        pub profiling: bool = false,
        /// metrics.address is the bind address, evaluated as a Helm template like upstream's default "0.0.0.0:{{ .Values.metrics.port }}" (only {{ .Values.KEY }} substitutions naming a string, number or boolean that is not a secret, through no key named like a method of Helm's values such as YAML); empty means 0.0.0.0:{metrics.port}.
        pub address: String,
        /// metrics.port is the metrics port of the container and the Service.
        #[schemars(range(min = 1, max = 65535))]
        pub port: i32 = 8443,
    }
}

values_struct! {
    /// Multi-tenant mode.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct Multitenant {
        /// multitenant.enable installs the operator in multi-tenant mode (see azureOperatorMode).
        pub enable: bool,
    }
}

/// What the operator pod runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum OperatorMode {
    /// Both watchers and webhooks (the default).
    #[default]
    #[serde(rename = "")]
    Default,
    /// Watchers and webhooks, written out.
    #[serde(rename = "watchers-and-webhooks")]
    WatchersAndWebhooks,
    /// Only the control loops (a tenant in multi-tenant mode).
    #[serde(rename = "watchers")]
    Watchers,
    /// Only the webhooks (the cluster part in multi-tenant mode).
    #[serde(rename = "webhooks")]
    Webhooks,
}

impl OperatorMode {
    /// The value as written in values and in the Secret.
    pub const fn as_str(self) -> &'static str {
        match self {
            OperatorMode::Default => "",
            OperatorMode::WatchersAndWebhooks => "watchers-and-webhooks",
            OperatorMode::Watchers => "watchers",
            OperatorMode::Webhooks => "webhooks",
        }
    }
}

values_struct! {
    /// Webhook server settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct Webhook {
        /// webhook.port is the port the webhook server listens on.
        #[schemars(range(min = 1, max = 65535))]
        pub port: i32 = 9443,
        /// webhook.certDir is where the webhook serving certificate is mounted.
        #[schemars(length(min = 1))]
        pub cert_dir: String = "/tmp/k8s-webhook-server/serving-certs".into(),
    }
}

values_struct! {
    /// Go runtime settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct GoRuntime {
        /// go.memLimit sets GOMEMLIMIT; keep it at 80-90% of the memory limit. Empty to leave it unset.
        pub mem_limit: String = "400MiB".into(),
    }
}

values_struct! {
    /// Probe timings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct Probes {
        /// probes.startup times the startup probe; raise failureThreshold on clusters with many CRDs.
        pub startup: ProbeTiming = ProbeTiming {
            failure_threshold: 12,
            ..ProbeTiming::default()
        },
        /// probes.liveness times the liveness probe.
        pub liveness: ProbeTiming,
        /// probes.readiness times the readiness probe.
        pub readiness: ProbeTiming,
    }
}

values_struct! {
    /// The timings of one probe.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct ProbeTiming {
        /// periodSeconds is the time between two probes.
        #[schemars(range(min = 1))]
        pub period_seconds: i32 = 10,
        /// failureThreshold is how many failures in a row count as failed.
        #[schemars(range(min = 1))]
        pub failure_threshold: i32 = 3,
        /// timeoutSeconds is how long one probe may take.
        #[schemars(range(min = 1))]
        pub timeout_seconds: i32 = 1,
    }
}

values_struct! {
    /// Deprecated aad-pod-identity settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct AadPodIdentity {
        /// aadPodIdentity.enable labels the pod for aad-pod-identity and creates its AzureIdentity and binding (deprecated).
        pub enable: bool,
        /// aadPodIdentity.azureManagedIdentityResourceId is the resource ID of the user-assigned managed identity.
        pub azure_managed_identity_resource_id: String,
    }
}

values_struct! {
    /// ServiceAccount settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct ServiceAccount {
        /// serviceAccount.create creates the ServiceAccount.
        pub create: bool = true,
        /// serviceAccount.name names the ServiceAccount; empty means azureserviceoperator-default (or default when create is false).
        #[schemars(extend("pattern" = crate::names::SUBDOMAIN_OR_EMPTY_PATTERN, "maxLength" = crate::names::SUBDOMAIN_MAX))]
        pub name: String,
        /// serviceAccount.annotations are added to the ServiceAccount (e.g. azure.workload.identity/client-id).
        pub annotations: BTreeMap<String, String>,
    }
}

values_struct! {
    /// Reconcile rate limiting.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct RateLimit {
        /// rateLimit.mode is "disabled" or "bucket" (a token bucket limits reconciles).
        pub mode: RateLimitMode = RateLimitMode::Disabled,
        /// rateLimit.qps is the bucket refill rate per second (mode bucket only).
        #[schemars(range(min = 1))]
        pub qps: i32 = 5,
        /// rateLimit.bucketSize is the size of the bucket (mode bucket only).
        #[schemars(range(min = 1))]
        pub bucket_size: i32 = 100,
    }
}

/// Rate limiting modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateLimitMode {
    /// No rate limiting by the operator.
    #[default]
    Disabled,
    /// A token bucket limits reconciles.
    Bucket,
}

values_struct! {
    /// NetworkPolicy settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct NetworkPolicies {
        /// networkPolicies.enable creates the NetworkPolicies.
        pub enable: bool = true,
        /// networkPolicies.kubernetesApiPort is the TCP port of the Kubernetes API the controller may reach.
        #[schemars(range(min = 1, max = 65535))]
        pub kubernetes_api_port: i32 = 6443,
        /// networkPolicies.kubernetesApiCIDR is the CIDR of the Kubernetes API.
        #[serde(rename = "kubernetesApiCIDR")]
        pub kubernetes_api_cidr: String = "0.0.0.0/0".into(),
        /// networkPolicies.mysqlCIDR is the CIDR of the MySQL servers the controller may reach.
        #[serde(rename = "mysqlCIDR")]
        pub mysql_cidr: String = "0.0.0.0/0".into(),
        /// networkPolicies.postgresqlCIDR is the CIDR of the PostgreSQL servers the controller may reach.
        #[serde(rename = "postgresqlCIDR")]
        pub postgresql_cidr: String = "0.0.0.0/0".into(),
        /// networkPolicies.sqlCIDR is the CIDR of the Azure SQL servers the controller may reach.
        #[serde(rename = "sqlCIDR")]
        pub sql_cidr: String = "0.0.0.0/0".into(),
    }
}

values_struct! {
    /// The in-cluster guard.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct AdmissionPolicy {
        /// admissionPolicy.enable creates the ValidatingAdmissionPolicies and their bindings where the cluster serves them (admissionregistration.k8s.io/v1, Kubernetes 1.30 and later).
        pub enable: bool = true,
    }
}

values_struct! {
    /// PodDisruptionBudget settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct PodDisruptionBudgetValues {
        /// podDisruptionBudget.enabled creates the PodDisruptionBudget.
        pub enabled: bool = true,
        /// podDisruptionBudget.minAvailable is how many pods must stay up during a voluntary disruption: a number or a percentage.
        pub min_available: IntOrPercent = IntOrPercent::Percent("50%".into()),
        /// podDisruptionBudget.unhealthyPodEvictionPolicy is IfHealthyBudget or AlwaysAllow; empty for the Kubernetes default.
        pub unhealthy_pod_eviction_policy: EvictionPolicy = EvictionPolicy::Unset,
    }
}

/// Unhealthy pod eviction policies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum EvictionPolicy {
    /// The Kubernetes default (IfHealthyBudget).
    #[default]
    #[serde(rename = "")]
    Unset,
    /// Evict unhealthy pods only while the budget allows.
    IfHealthyBudget,
    /// Always allow evicting unhealthy pods.
    AlwaysAllow,
}

impl EvictionPolicy {
    /// The value Kubernetes uses, or `None` when unset.
    pub fn as_kubernetes(self) -> Option<&'static str> {
        match self {
            EvictionPolicy::Unset => None,
            EvictionPolicy::IfHealthyBudget => Some("IfHealthyBudget"),
            EvictionPolicy::AlwaysAllow => Some("AlwaysAllow"),
        }
    }
}

// Also `upgrade-plan --from`, whose help is each value's short one.
/// How the operator's pods are laid out.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// One Deployment: every pod serves webhooks, the leader runs the control loop (upstream's shape).
    #[default]
    #[value(help = "One Deployment (upstream's shape)")]
    Single,
    /// Two Deployments: webhook pods that roll one by one, and a controller that applies the CRDs and runs the control loop.
    #[value(help = "A webhooks Deployment and a controller Deployment")]
    Split,
    #[value(help = "The middle step of a Helm migration, left with `--via helm`")]
    /// The middle step of a migration between single and split with Helm (`asogen upgrade-plan --via helm --from ...` sets it for one step): the single topology's controller Deployment beside the split's webhooks Deployment, the webhook Service routing to the pods of both. Not a topology to stay in or to upgrade the version in.
    Bridge,
}

impl Topology {
    /// The value as written in values.
    pub fn as_str(self) -> &'static str {
        match self {
            Topology::Single => "single",
            Topology::Split => "split",
            Topology::Bridge => "bridge",
        }
    }
}

values_struct! {
    /// The two Deployments of topology split.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct Split {
        /// split.webhooks configures the webhooks Deployment (azureserviceoperator-webhooks): operator mode webhooks, no CRD management, no leader election, a rolling update that never takes a pod away before its replacement is ready.
        pub webhooks: SplitWebhooks,
        /// split.controller configures the controller Deployment (azureserviceoperator-controller-manager): operator mode watchers-and-webhooks, applies the CRDs, leader election, Recreate. Upgrade it only after the webhooks Deployment has rolled out.
        pub controller: SplitController,
    }
}

values_struct! {
    /// The webhooks Deployment of topology split.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct SplitWebhooks {
        /// split.webhooks.replicaCount is the number of webhook pods; 2 or more keep the webhooks up when a pod or node is lost.
        #[schemars(range(min = 0), extend("examples" = [2, 3]))]
        pub replica_count: i32 = 2,
        /// split.webhooks.maxSurge is how many webhook pods may be created above split.webhooks.replicaCount during an update: a number or a percentage like "50%" (maxUnavailable is always 0).
        #[schemars(extend("examples" = [1, "50%"]))]
        pub max_surge: IntOrPercent = IntOrPercent::Int(1),
        /// split.webhooks.minReadySeconds is how long a new webhook pod must be ready before it counts as available, so its endpoint reaches every API server before an old pod goes.
        #[schemars(range(min = 0))]
        pub min_ready_seconds: i32 = 5,
        /// split.webhooks.podDisruptionBudget configures the PodDisruptionBudget of the webhook pods (azureserviceoperator-webhooks-pdb).
        pub pod_disruption_budget: SplitWebhooksDisruptionBudget,
        /// split.webhooks.refreshToken is written into the webhook pods' annotations when not empty: change it to restart the webhook pods after the controller applied CRDs of new kinds (a webhook pod serves only the kinds whose CRDs existed when it started).
        #[schemars(extend("examples" = ["2026-12-04T15:00:00Z"]))]
        pub refresh_token: String,
        /// split.webhooks.resources are the webhook pods' CPU and memory requests and limits; empty for the top-level resources.
        pub resources: ResourceRequirements,
        /// split.webhooks.affinity holds the webhook pods' node affinity and pod (anti-)affinity rules; empty for the top-level affinity.
        pub affinity: Affinity,
        /// split.webhooks.topologySpreadConstraints replace the webhook pods' own spread (at most one more pod per node than on any other, counted per revision); empty keeps it.
        pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
        /// split.webhooks.nodeSelector restricts the nodes the webhook pods may run on; empty for the top-level nodeSelector.
        pub node_selector: BTreeMap<String, String>,
        /// split.webhooks.tolerations let the webhook pods schedule onto nodes with matching taints; empty for the top-level tolerations.
        pub tolerations: Vec<Toleration>,
        /// split.webhooks.priorityClassName is the PriorityClass of the webhook pods; empty for the top-level priorityClassName.
        #[schemars(extend("pattern" = crate::names::SUBDOMAIN_OR_EMPTY_PATTERN, "maxLength" = crate::names::SUBDOMAIN_MAX))]
        pub priority_class_name: String,
    }
}

values_struct! {
    /// The webhook pods' PodDisruptionBudget.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct SplitWebhooksDisruptionBudget {
        /// split.webhooks.podDisruptionBudget.maxUnavailable is how many webhook pods a voluntary disruption (a node drain) may take at once: a number or a percentage.
        #[schemars(extend("examples" = [1, "25%"]))]
        pub max_unavailable: IntOrPercent = IntOrPercent::Int(1),
    }
}

values_struct! {
    /// The controller Deployment of topology split.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields, rename_all = "camelCase")]
    pub struct SplitController {
        /// split.controller.replicaCount is the number of controller pods; leader election picks the one that runs the control loop.
        #[schemars(range(min = 0), extend("examples" = [2, 1]))]
        pub replica_count: i32 = 2,
        /// split.controller.paused scales the controller Deployment to 0 pods, the first step of an upgrade with Helm: upgrade with it true (the webhooks roll out, no new controller starts early), then again with it false.
        pub paused: bool = false,
        /// split.controller.resources are the controller pods' CPU and memory requests and limits; empty for the top-level resources.
        pub resources: ResourceRequirements,
        /// split.controller.affinity holds the controller pods' node affinity and pod (anti-)affinity rules; empty for the top-level affinity.
        pub affinity: Affinity,
        /// split.controller.topologySpreadConstraints replace the controller pods' own spread (at most one more pod per node than on any other, counted per revision); empty keeps it.
        pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    }
}

fn default_resources() -> ResourceRequirements {
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    let quantities = |cpu: &str, memory: &str| {
        BTreeMap::from([
            ("cpu".to_string(), Quantity(cpu.into())),
            ("memory".to_string(), Quantity(memory.into())),
        ])
    };
    ResourceRequirements {
        limits: Some(quantities("500m", "512Mi")),
        requests: Some(quantities("200m", "256Mi")),
        ..ResourceRequirements::default()
    }
}

/// The restricted Pod Security Standard for the manager container.
fn default_security_context() -> SecurityContext {
    use k8s_openapi::api::core::v1::{Capabilities, SeccompProfile};
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            ..Capabilities::default()
        }),
        read_only_root_filesystem: Some(true),
        run_as_group: Some(65532),
        run_as_non_root: Some(true),
        run_as_user: Some(65532),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            ..SeccompProfile::default()
        }),
        ..SecurityContext::default()
    }
}

fn default_pod_security_context() -> PodSecurityContext {
    use k8s_openapi::api::core::v1::SeccompProfile;
    PodSecurityContext {
        run_as_non_root: Some(true),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            ..SeccompProfile::default()
        }),
        ..PodSecurityContext::default()
    }
}

/// The draft-07 schema schemars derives from [`Values`], before the
/// transforms of `src/schema.rs`: every key's type, doc comment and
/// default (the defaults written beside the fields), built once per process.
pub fn derived_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut settings = schemars::generate::SchemaSettings::draft07();
        // Of draft-07's transforms only RemoveRefSiblings changes this
        // schema: the others rewrite `unevaluatedProperties` and
        // `prefixItems`, which nothing here produces (a test in
        // `src/schema.rs` checks). Each walks the whole schema, so the two
        // no-ops are dropped.
        settings.transforms.retain(|transform| {
            !transform.is::<schemars::transform::ReplaceUnevaluatedProperties>()
                && !transform.is::<schemars::transform::ReplacePrefixItems>()
        });
        settings
            .into_generator()
            .into_root_schema_for::<Values>()
            .to_value()
    })
}

/// The schema of the key at `segment` under `node`, through `$ref`s, an
/// `allOf` of one and an `anyOf` of one schema or null (an `Option`).
fn property<'a>(root: &'a Value, node: &'a Value, segment: &str) -> Option<&'a Value> {
    let resolve = |mut node: &'a Value| {
        for _ in 0..8 {
            let next = if let Some(target) = node.get("$ref").and_then(Value::as_str) {
                target.strip_prefix('#').and_then(|p| root.pointer(p))
            } else if let Some([one]) = node
                .get("allOf")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
            {
                Some(one)
            } else if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
                let mut not_null = branches
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"));
                match (not_null.next(), not_null.next()) {
                    (Some(one), None) if branches.len() == 2 => Some(one),
                    _ => None,
                }
            } else {
                None
            };
            match next {
                Some(next) => node = next,
                None => break,
            }
        }
        node
    };
    resolve(node).get("properties")?.get(segment)
}

/// The schema of a key (before transforms; None only for a handle that
/// names no key, which `render::values_doc`'s tests refuse).
pub fn key_schema(key: Key) -> Option<&'static Value> {
    let root = derived_schema();
    key.segments()
        .try_fold(root, |node, segment| property(root, node, segment))
}

/// The chart's defaults as JSON ([`Values::default`] serialized), built
/// once per process.
pub fn defaults_json() -> &'static Value {
    static DEFAULTS: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    DEFAULTS.get_or_init(|| serde_json::to_value(Values::default()).expect("defaults serialize"))
}

/// The chart's default for a key: what a values file that leaves it out
/// gets (a `null` deletes it instead, [`needed_keys`]). The default of the nearest enclosing key
/// first (`probes.startup`'s failureThreshold is 12, not a probe's 3);
/// below a key absent by default, what its struct's defaults would give if
/// it were set (the parameters of a `strategy.rollingUpdate`); null for a
/// key absent by default. The schema's `default`s say the same (a test
/// holds the two equal for every key), but deriving the schema to read
/// them cost more than all of `template`'s checks.
pub fn default_of(key: Key) -> Value {
    if let Some(value) = at(defaults_json(), key) {
        return value.clone();
    }
    let (filled, set) = filled_defaults();
    match at(filled, key) {
        Some(value) if !set.contains(&key) => value.clone(),
        _ => Value::Null,
    }
}

/// Whether the chart reads a key's absence as its empty value: a key the
/// defaults set that holds a map or a list of the user's entries (annotations, a Kubernetes
/// object, tolerations) rather than keys of the chart's. A values `null`
/// deletes a key the defaults set, as Helm merges values; such a key is
/// then empty (`nodeSelector: null` selects no node, `resources: null`
/// sets no requests or limits), in asogen as in the chart's templates.
pub fn absence_is_empty(key: Key) -> bool {
    !key.has_children()
        && matches!(
            at(defaults_json(), key),
            Some(Value::Object(_) | Value::Array(_))
        )
}

/// The keys the defaults set that the chart cannot do without: a values
/// `null` deletes such a key (as Helm merges values), and asogen, the
/// chart's guard and the editor refuse it (see [`absence_is_empty`] for
/// the keys whose absence means empty).
pub fn needed_keys() -> impl Iterator<Item = Key> {
    crate::keys::ALL
        .iter()
        .copied()
        .filter(|&key| at(defaults_json(), key).is_some() && !absence_is_empty(key))
}

/// The keys the chart needs ([`needed_keys`]) that a
/// `null` deleted: absent though the map holding them is there (only the
/// outermost of a deleted map's keys is named).
pub fn deleted_needed_keys(merged: &Value) -> Vec<Key> {
    needed_keys()
        .filter(|key| {
            let parent = match key.parent() {
                Some(parent) => merged.pointer(&parent.pointer()),
                None => Some(merged),
            };
            parent.is_some_and(|parent| parent.is_object() && parent.get(key.leaf()).is_none())
        })
        .collect()
}

/// What is wrong with a needed key a `null` deleted: one text for asogen
/// and the chart's guard.
pub fn deleted_key_message(key: Key) -> String {
    format!(
        "{} is null, and a null deletes the key (Helm merges values so), but the chart needs it",
        key.path()
    )
}

/// How to mend a needed key a `null` deleted.
pub fn deleted_key_help(key: Key) -> String {
    let default = default_of(key);
    let shown = if key.has_children() {
        "its defaults".to_string()
    } else {
        format!("its default, {default}")
    };
    format!("leave {} out to keep {shown}, or set a value", key.path())
}

/// A needed key a `null` deleted, as one line of the chart's guard.
pub fn deleted_key_line(key: Key) -> String {
    format!(
        "{}; help: {}",
        deleted_key_message(key),
        deleted_key_help(key)
    )
}

/// The empty value of a key whose absence is empty ([`absence_is_empty`]).
pub fn empty_of(key: Key) -> Value {
    match default_of(key) {
        Value::Array(_) => Value::Array(Vec::new()),
        _ => Value::Object(serde_json::Map::new()),
    }
}

/// The value at a key of a values tree.
fn at(tree: &Value, key: Key) -> Option<&Value> {
    key.segments()
        .try_fold(tree, |node, segment| node.get(segment))
}

/// The defaults with each key that is absent by default but has keys
/// inside it set to `{}`, and so filled with its struct's defaults; and
/// those keys. Built once, on the first default asked below such a key.
fn filled_defaults() -> &'static (Value, Vec<Key>) {
    static FILLED: std::sync::OnceLock<(Value, Vec<Key>)> = std::sync::OnceLock::new();
    FILLED.get_or_init(|| {
        let mut tree = defaults_json().clone();
        let mut set = Vec::new();
        // A key absent inside a key just filled is found on the next turn.
        loop {
            let absent: Vec<Key> = crate::keys::ALL
                .iter()
                .copied()
                .filter(|&key| at(&tree, key).is_none())
                .filter(|&key| {
                    key.parent()
                        .is_none_or(|parent| at(&tree, parent).is_some())
                })
                .filter(|&key| key.has_children())
                .collect();
            if absent.is_empty() {
                return (tree, set);
            }
            for &key in &absent {
                let parent = match key.parent() {
                    Some(parent) => tree.pointer_mut(&parent.pointer()),
                    None => Some(&mut tree),
                };
                parent
                    .and_then(Value::as_object_mut)
                    .expect("a key's parent holds keys")
                    .insert(key.leaf().to_string(), json!({}));
            }
            tree = serde_json::from_value::<Values>(tree)
                .and_then(serde_json::to_value)
                .expect("a key with keys inside is a struct with defaults");
            set.extend(absent);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key's default as the published schema says it: the nearest
    /// enclosing `default` holding the key, else the key's own.
    fn schema_default(key: Key) -> Value {
        let root = derived_schema();
        let mut node = root;
        let mut default: Option<&Value> = None;
        for segment in key.segments() {
            let Some(next) = property(root, node, segment) else {
                return Value::Null;
            };
            default = match default.and_then(|d| d.get(segment)) {
                Some(inherited) => Some(inherited),
                None => next.get("default"),
            };
            node = next;
        }
        default.cloned().unwrap_or(Value::Null)
    }

    #[test]
    fn every_key_s_default_is_the_schema_s() {
        for &key in crate::keys::ALL {
            assert_eq!(default_of(key), schema_default(key), "{}", key.path());
        }
        assert_eq!(
            default_of(crate::keys::STRATEGY_ROLLING_UPDATE_MAX_SURGE),
            json!(1)
        );
        assert_eq!(
            default_of(crate::keys::STRATEGY_ROLLING_UPDATE),
            Value::Null
        );
    }
}
