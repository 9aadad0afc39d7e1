//! The values keys: one typed handle per key a values file may set.
//!
//! Everything that names a values key (the object descriptions, the rule
//! table, the chart guard, the checks, the values docs) takes a [`Key`]
//! from here, and a `Key` can only be made here: a key that does not exist
//! cannot be named (`keys::POD_ANNOTATIONZ` does not compile). Each key is
//! written once, with what the schema cannot say about it (whether the
//! chart evaluates it as a template, whether its value is a Kubernetes
//! object); everything else about it is read from the typed values
//! (`src/values.rs`): its type, doc and default from their schema
//! (`values::default_of`), whether it is secret from `redact`. The table
//! of every key with all of those is `render::values_doc::key_table`,
//! whose tests check this list against the schema both ways (every handle
//! resolves; every key of the schema has a handle).
//!
//! This module imports nothing of the crate: every stage may use it.

/// What the schema cannot say about a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flag {
    /// The chart evaluates the value as a template (`tpl`), as upstream's
    /// defaults do.
    Templated,
    /// The value is a Kubernetes object or list (k8s-openapi typed): its
    /// fields are the API's, documented there, not one by one here.
    Kubernetes,
}

/// A values key: a dotted path from the values root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    path: &'static str,
    flags: &'static [Flag],
}

impl Key {
    /// The dotted path (`strategy.rollingUpdate.maxSurge`).
    pub const fn path(self) -> &'static str {
        self.path
    }

    /// The path's segments, root first.
    pub fn segments(self) -> impl Iterator<Item = &'static str> {
        self.path.split('.')
    }

    /// The last segment (`maxSurge`).
    pub fn leaf(self) -> &'static str {
        self.path.rsplit('.').next().unwrap_or(self.path)
    }

    /// The key that holds this one (`strategy.rollingUpdate` for
    /// `strategy.rollingUpdate.maxSurge`); None at the top level.
    pub fn parent(self) -> Option<Key> {
        let (parent, _) = self.path.rsplit_once('.')?;
        Some(
            *ALL.iter()
                .find(|key| key.path == parent)
                .expect("every key's parent is a key"),
        )
    }

    /// The key's JSON pointer (`/strategy/rollingUpdate/maxSurge`).
    pub fn pointer(self) -> String {
        self.segments()
            .map(|segment| format!("/{segment}"))
            .collect()
    }

    /// The key at a dotted path, if there is one.
    pub fn find(path: &str) -> Option<Key> {
        ALL.iter().copied().find(|key| key.path == path)
    }

    /// Whether the chart evaluates the value as a template.
    pub fn is_templated(self) -> bool {
        self.flags.contains(&Flag::Templated)
    }

    /// Whether the value is a Kubernetes object or list.
    pub fn is_kubernetes(self) -> bool {
        self.flags.contains(&Flag::Kubernetes)
    }

    /// Whether other keys lie inside this one.
    pub fn has_children(self) -> bool {
        ALL.iter().any(|key| key.parent() == Some(self))
    }
}

/// The words of a text that look like values keys, as prose does not: a
/// camelCase name (`podAnnotations`), or a dotted one under a top-level
/// key (`admissionPolicy.enable`; not a Kubernetes field path such as
/// `spec.strategy`), quotes and punctuation around them left out. For
/// checking that text written for people names keys that exist.
pub fn mentioned_in(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| "(),;:`\"'.".contains(c)))
        .filter(|word| {
            let letters = word.split('.').all(|segment| {
                segment.starts_with(|c: char| c.is_ascii_lowercase())
                    && segment.chars().all(|c| c.is_ascii_alphabetic())
            });
            let top = word.split('.').next().unwrap_or(word);
            let dotted_key = word.contains('.') && ALL.iter().any(|key| key.path == top);
            letters
                && (dotted_key
                    || (!word.contains('.') && word.chars().any(|c| c.is_ascii_uppercase())))
        })
        .collect()
}

/// Whether a word names a key, by its path or by its last segment
/// (`maxUnavailable` after `strategy.rollingUpdate.maxSurge`).
pub fn names_a_key(word: &str) -> bool {
    ALL.iter().any(|key| key.path == word || key.leaf() == word)
}

/// Every templated key ([`Flag::Templated`]).
pub fn templated() -> impl Iterator<Item = Key> {
    ALL.iter().copied().filter(|key| key.is_templated())
}

macro_rules! keys {
    ($($name:ident = $path:literal $([$($flag:ident),*])?;)*) => {
        $(
            #[doc = concat!("`", $path, "`")]
            pub const $name: Key = Key {
                path: $path,
                flags: &[$($(Flag::$flag),*)?],
            };
        )*
        /// Every key, in the order of the values (a parent before its
        /// children).
        pub const ALL: &[Key] = &[$($name),*];
    };
}

keys! {
    REPLICA_COUNT = "replicaCount";
    STRATEGY = "strategy";
    STRATEGY_TYPE = "strategy.type";
    ROLLING_UPDATE = "strategy.rollingUpdate";
    MAX_SURGE = "strategy.rollingUpdate.maxSurge";
    MAX_UNAVAILABLE = "strategy.rollingUpdate.maxUnavailable";
    FEATURE_GATES = "featureGates";
    SINGLE_REPLICA_ROLLING_UPDATE = "featureGates.singleReplicaRollingUpdate";
    REVISION_HISTORY_LIMIT = "revisionHistoryLimit";
    IMAGE = "image";
    IMAGE_REPOSITORY = "image.repository" [Templated];
    IMAGE_REPOSITORY_BASE = "image.repositoryBase";
    IMAGE_TAG = "image.tag";
    IMAGE_KUBE_RBAC_PROXY = "image.kubeRBACProxy";
    IMAGE_PULL_SECRETS = "image.pullSecrets" [Kubernetes];
    METRICS = "metrics";
    METRICS_ENABLE = "metrics.enable";
    METRICS_SECURE = "metrics.secure";
    METRICS_PROFILING = "metrics.profiling";
    METRICS_ADDRESS = "metrics.address" [Templated];
    METRICS_PORT = "metrics.port";
    INSTALL_CRDS = "installCRDs";
    CRD_PATTERN = "crdPattern";
    CRD_LABELS = "crdLabels";
    MULTITENANT = "multitenant";
    MULTITENANT_ENABLE = "multitenant.enable";
    AZURE_OPERATOR_MODE = "azureOperatorMode";
    WEBHOOK = "webhook";
    WEBHOOK_PORT = "webhook.port";
    WEBHOOK_CERT_DIR = "webhook.certDir";
    USE_JSON_LOGGING = "useJSONLogging";
    GO = "go";
    GO_MEM_LIMIT = "go.memLimit";
    PROBES = "probes";
    PROBES_STARTUP = "probes.startup";
    STARTUP_PERIOD_SECONDS = "probes.startup.periodSeconds";
    STARTUP_FAILURE_THRESHOLD = "probes.startup.failureThreshold";
    STARTUP_TIMEOUT_SECONDS = "probes.startup.timeoutSeconds";
    PROBES_LIVENESS = "probes.liveness";
    LIVENESS_PERIOD_SECONDS = "probes.liveness.periodSeconds";
    LIVENESS_FAILURE_THRESHOLD = "probes.liveness.failureThreshold";
    LIVENESS_TIMEOUT_SECONDS = "probes.liveness.timeoutSeconds";
    PROBES_READINESS = "probes.readiness";
    READINESS_PERIOD_SECONDS = "probes.readiness.periodSeconds";
    READINESS_FAILURE_THRESHOLD = "probes.readiness.failureThreshold";
    READINESS_TIMEOUT_SECONDS = "probes.readiness.timeoutSeconds";
    EXTRA_ENV = "extraEnv" [Kubernetes];
    RESOURCES = "resources" [Kubernetes];
    SECURITY_CONTEXT = "securityContext" [Kubernetes];
    POD_SECURITY_CONTEXT = "podSecurityContext" [Kubernetes];
    NODE_SELECTOR = "nodeSelector";
    TOLERATIONS = "tolerations" [Kubernetes];
    AFFINITY = "affinity" [Kubernetes];
    PRIORITY_CLASS_NAME = "priorityClassName";
    POD_ANNOTATIONS = "podAnnotations";
    POD_LABELS = "podLabels";
    DEPLOYMENT_ANNOTATIONS = "deploymentAnnotations";
    AAD_POD_IDENTITY = "aadPodIdentity";
    AAD_POD_IDENTITY_ENABLE = "aadPodIdentity.enable";
    AAD_POD_IDENTITY_RESOURCE_ID = "aadPodIdentity.azureManagedIdentityResourceId";
    SERVICE_ACCOUNT = "serviceAccount";
    SERVICE_ACCOUNT_CREATE = "serviceAccount.create";
    SERVICE_ACCOUNT_NAME = "serviceAccount.name";
    SERVICE_ACCOUNT_ANNOTATIONS = "serviceAccount.annotations";
    CREATE_AZURE_OPERATOR_SECRET = "createAzureOperatorSecret";
    AZURE_SUBSCRIPTION_ID = "azureSubscriptionID";
    AZURE_TENANT_ID = "azureTenantID";
    AZURE_ADDITIONAL_TENANTS = "azureAdditionalTenants";
    AZURE_CLIENT_ID = "azureClientID";
    AZURE_CLIENT_SECRET = "azureClientSecret";
    AZURE_CLIENT_CERTIFICATE = "azureClientCertificate";
    AZURE_CLIENT_CERTIFICATE_PASSWORD = "azureClientCertificatePassword";
    AZURE_SYNC_PERIOD = "azureSyncPeriod";
    AZURE_TARGET_NAMESPACES = "azureTargetNamespaces";
    AZURE_AUTHORITY_HOST = "azureAuthorityHost";
    AZURE_RESOURCE_MANAGER_ENDPOINT = "azureResourceManagerEndpoint";
    AZURE_RESOURCE_MANAGER_AUDIENCE = "azureResourceManagerAudience";
    AZURE_USER_AGENT_SUFFIX = "azureUserAgentSuffix";
    USE_WORKLOAD_IDENTITY_AUTH = "useWorkloadIdentityAuth";
    ALLOW_MULTI_ENV_MANAGEMENT = "allowMultiEnvManagement";
    MAX_CONCURRENT_RECONCILES = "maxConcurrentReconciles";
    RATE_LIMIT = "rateLimit";
    RATE_LIMIT_MODE = "rateLimit.mode";
    RATE_LIMIT_QPS = "rateLimit.qps";
    RATE_LIMIT_BUCKET_SIZE = "rateLimit.bucketSize";
    NETWORK_POLICIES = "networkPolicies";
    NETWORK_POLICIES_ENABLE = "networkPolicies.enable";
    KUBERNETES_API_PORT = "networkPolicies.kubernetesApiPort";
    KUBERNETES_API_CIDR = "networkPolicies.kubernetesApiCIDR";
    MYSQL_CIDR = "networkPolicies.mysqlCIDR";
    POSTGRESQL_CIDR = "networkPolicies.postgresqlCIDR";
    SQL_CIDR = "networkPolicies.sqlCIDR";
    POD_DISRUPTION_BUDGET = "podDisruptionBudget";
    POD_DISRUPTION_BUDGET_ENABLED = "podDisruptionBudget.enabled";
    PDB_MIN_AVAILABLE = "podDisruptionBudget.minAvailable";
    PDB_UNHEALTHY_POD_EVICTION_POLICY = "podDisruptionBudget.unhealthyPodEvictionPolicy";
    ADMISSION_POLICY = "admissionPolicy";
    ADMISSION_POLICY_ENABLE = "admissionPolicy.enable";
    TOPOLOGY = "topology";
    SPLIT = "split";
    SPLIT_WEBHOOKS = "split.webhooks";
    SPLIT_WEBHOOKS_REPLICA_COUNT = "split.webhooks.replicaCount";
    SPLIT_WEBHOOKS_MAX_SURGE = "split.webhooks.maxSurge";
    SPLIT_WEBHOOKS_MIN_READY_SECONDS = "split.webhooks.minReadySeconds";
    SPLIT_WEBHOOKS_PDB = "split.webhooks.podDisruptionBudget";
    SPLIT_WEBHOOKS_PDB_MAX_UNAVAILABLE = "split.webhooks.podDisruptionBudget.maxUnavailable";
    SPLIT_WEBHOOKS_REFRESH_TOKEN = "split.webhooks.refreshToken";
    SPLIT_WEBHOOKS_RESOURCES = "split.webhooks.resources" [Kubernetes];
    SPLIT_WEBHOOKS_AFFINITY = "split.webhooks.affinity" [Kubernetes];
    SPLIT_WEBHOOKS_TOPOLOGY_SPREAD = "split.webhooks.topologySpreadConstraints" [Kubernetes];
    SPLIT_WEBHOOKS_NODE_SELECTOR = "split.webhooks.nodeSelector";
    SPLIT_WEBHOOKS_TOLERATIONS = "split.webhooks.tolerations" [Kubernetes];
    SPLIT_WEBHOOKS_PRIORITY_CLASS_NAME = "split.webhooks.priorityClassName";
    SPLIT_CONTROLLER = "split.controller";
    SPLIT_CONTROLLER_REPLICA_COUNT = "split.controller.replicaCount";
    SPLIT_CONTROLLER_PAUSED = "split.controller.paused";
    SPLIT_CONTROLLER_RESOURCES = "split.controller.resources" [Kubernetes];
    SPLIT_CONTROLLER_AFFINITY = "split.controller.affinity" [Kubernetes];
    SPLIT_CONTROLLER_TOPOLOGY_SPREAD = "split.controller.topologySpreadConstraints" [Kubernetes];
    GLOBAL = "global";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_parents_come_first() {
        for (index, key) in ALL.iter().enumerate() {
            assert!(
                ALL[..index].iter().all(|before| before.path != key.path),
                "{} twice",
                key.path
            );
            if let Some(parent) = key.parent() {
                assert!(
                    ALL[..index].contains(&parent),
                    "{} before its parent",
                    key.path
                );
            }
        }
        assert_eq!(MAX_SURGE.parent(), Some(ROLLING_UPDATE));
        assert_eq!(MAX_SURGE.leaf(), "maxSurge");
        assert_eq!(MAX_SURGE.pointer(), "/strategy/rollingUpdate/maxSurge");
        assert!(ROLLING_UPDATE.has_children() && !MAX_SURGE.has_children());
        assert_eq!(
            templated().collect::<Vec<_>>(),
            [IMAGE_REPOSITORY, METRICS_ADDRESS]
        );
    }
}
