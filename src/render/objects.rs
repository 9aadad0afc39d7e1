//! The Kubernetes objects of an install, built from the validated model with
//! k8s-openapi types. The chart templates (`templates/chart/`) render the same
//! objects through Helm; the tests hold the two to field-for-field equality.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, Namespace, ObjectFieldSelector,
    PodSpec, PodTemplateSpec, Probe, ProjectedVolumeSource, Secret, SecretKeySelector,
    SecretVolumeSource, Service, ServiceAccount, ServiceAccountTokenProjection, ServicePort,
    ServiceSpec, Volume, VolumeMount, VolumeProjection,
};
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use crate::model::{CHART_NAME, Model, Strategy};

/// Names shared by the Rust objects and the chart templates.
pub mod names {
    /// The Deployment.
    pub const DEPLOYMENT: &str = "azureserviceoperator-controller-manager";
    /// The Secret holding the Azure settings.
    pub const SETTINGS_SECRET: &str = "aso-controller-settings";
    /// The webhook Service.
    pub const WEBHOOK_SERVICE: &str = "azureserviceoperator-webhook-service";
    /// The metrics Service.
    pub const METRICS_SERVICE: &str = "azureserviceoperator-controller-manager-metrics-service";
    /// The cert-manager Issuer.
    pub const ISSUER: &str = "azureserviceoperator-selfsigned-issuer";
    /// The webhook serving Certificate.
    pub const SERVING_CERT: &str = "azureserviceoperator-serving-cert";
    /// The metrics serving Certificate.
    pub const METRICS_CERT: &str = "azureserviceoperator-metrics-server-cert";
    /// The leader election Role and RoleBinding prefix.
    pub const LEADER_ELECTION: &str = "azureserviceoperator-leader-election";
    /// The manager ClusterRole.
    pub const MANAGER_ROLE: &str = "azureserviceoperator-manager-role";
    /// The manager ClusterRoleBinding.
    pub const MANAGER_ROLE_BINDING: &str = "azureserviceoperator-manager-rolebinding";
    /// The PodDisruptionBudget.
    pub const PDB: &str = "azureserviceoperator-pdb";
    /// The mutating webhook configuration.
    pub const MUTATING: &str = "azureserviceoperator-mutating-webhook-configuration";
    /// The validating webhook configuration.
    pub const VALIDATING: &str = "azureserviceoperator-validating-webhook-configuration";
    /// The ingress NetworkPolicy.
    pub const ALLOW_INGRESS: &str = "azure-service-operator-allow-ingress";
    /// The egress NetworkPolicy.
    pub const ALLOW_EGRESS: &str = "azure-service-operator-allow-egress";
}

/// The tool that rendered an object, for the labels that say so.
#[derive(Debug, Clone, Copy)]
pub struct Installer {
    /// `app.kubernetes.io/managed-by`.
    pub managed_by: &'static str,
    /// `app.kubernetes.io/instance`.
    pub instance: &'static str,
}

/// asogen's own installs (manifests, kustomize, `template`).
pub const ASOGEN: Installer = Installer {
    managed_by: "asogen",
    instance: "azure-service-operator",
};

fn strings<const N: usize>(items: [&str; N]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn selector_labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".into(), CHART_NAME.into()),
        ("control-plane".into(), "controller-manager".into()),
    ])
}

fn labels(installer: Installer, version: &str) -> BTreeMap<String, String> {
    let mut labels = selector_labels();
    labels.insert("app.kubernetes.io/version".into(), version.into());
    labels.insert(
        "app.kubernetes.io/managed-by".into(),
        installer.managed_by.into(),
    );
    labels.insert(
        "app.kubernetes.io/instance".into(),
        installer.instance.into(),
    );
    labels
}

struct Context<'a> {
    model: &'a Model,
    installer: Installer,
}

impl Context<'_> {
    fn meta(&self, name: &str, namespaced: bool) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: namespaced.then(|| self.model.namespace.clone()),
            labels: Some(labels(self.installer, &self.model.release.app_version)),
            ..ObjectMeta::default()
        }
    }

    fn service_account_subject(&self) -> Vec<Subject> {
        vec![Subject {
            kind: "ServiceAccount".into(),
            name: self.model.service_account_name(),
            namespace: Some(self.model.namespace.clone()),
            ..Subject::default()
        }]
    }
}

fn to_value<T: serde::Serialize>(object: &T) -> Value {
    serde_json::to_value(object).expect("Kubernetes objects serialize")
}

fn with_type<T: k8s_openapi::Resource + serde::Serialize>(object: &T) -> Value {
    let mut value = to_value(object);
    let map = value.as_object_mut().expect("object");
    map.insert("apiVersion".into(), json!(T::API_VERSION));
    map.insert("kind".into(), json!(T::KIND));
    value
}

/// Every object of the install, in the order Helm installs kinds.
pub fn objects(model: &Model, installer: Installer) -> Vec<Value> {
    let cx = Context { model, installer };
    let v = &model.values;
    let mut out = Vec::new();
    if v.network_policies.enable {
        out.push(with_type(&ingress_policy(&cx)));
        out.push(with_type(&egress_policy(&cx)));
    }
    if v.pod_disruption_budget.enabled {
        out.push(with_type(&pod_disruption_budget(&cx)));
    }
    if v.service_account.create {
        out.push(with_type(&service_account(&cx)));
    }
    if v.create_azure_operator_secret {
        out.push(with_type(&settings_secret(&cx)));
    }
    out.push(with_type(&manager_role(&cx)));
    out.push(with_type(&ClusterRoleBinding {
        metadata: cx.meta(names::MANAGER_ROLE_BINDING, false),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: names::MANAGER_ROLE.into(),
        },
        subjects: Some(cx.service_account_subject()),
    }));
    out.push(with_type(&leader_election_role(&cx)));
    out.push(with_type(&RoleBinding {
        metadata: cx.meta(&format!("{}-rolebinding", names::LEADER_ELECTION), true),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Role".into(),
            name: format!("{}-role", names::LEADER_ELECTION),
        },
        subjects: Some(cx.service_account_subject()),
    }));
    if v.metrics.enable {
        out.push(with_type(&metrics_service(&cx)));
    }
    if model.serves_webhooks() {
        out.push(with_type(&webhook_service(&cx)));
    }
    out.push(deployment_value(&cx));
    if model.serves_webhooks() {
        out.push(with_type(&mutating_webhooks(&cx)));
        out.push(with_type(&validating_webhooks(&cx)));
        out.push(issuer(&cx));
        out.push(certificate(
            &cx,
            names::SERVING_CERT,
            names::WEBHOOK_SERVICE,
            "webhook-server-cert",
        ));
    }
    if v.metrics.enable && v.metrics.secure {
        if !model.serves_webhooks() {
            out.push(issuer(&cx));
        }
        out.push(certificate(
            &cx,
            names::METRICS_CERT,
            names::METRICS_SERVICE,
            "metrics-server-cert",
        ));
    }
    out
}

/// The Namespace object that install manifests start with.
pub fn namespace(model: &Model, installer: Installer) -> Value {
    with_type(&Namespace {
        metadata: ObjectMeta {
            name: Some(model.namespace.clone()),
            labels: Some(BTreeMap::from([
                (
                    "app.kubernetes.io/managed-by".into(),
                    installer.managed_by.into(),
                ),
                ("app.kubernetes.io/name".into(), CHART_NAME.into()),
                // The controller pod meets the restricted standard; enforce it.
                (
                    "pod-security.kubernetes.io/enforce".into(),
                    "restricted".into(),
                ),
            ])),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    })
}

fn service_account(cx: &Context) -> ServiceAccount {
    let mut metadata = cx.meta(&cx.model.service_account_name(), true);
    let annotations = &cx.model.values.service_account.annotations;
    if !annotations.is_empty() {
        metadata.annotations = Some(annotations.clone());
    }
    ServiceAccount {
        metadata,
        ..ServiceAccount::default()
    }
}

/// A boolean setting as the Secret holds it: "true", or absent (empty).
fn flag(on: bool) -> String {
    if on { "true".into() } else { String::new() }
}

/// The keys of the settings Secret, in the order the chart writes them.
pub fn settings_entries(model: &Model) -> Vec<(&'static str, String)> {
    let v = &model.values;
    let mut entries = vec![
        ("AZURE_SUBSCRIPTION_ID", v.azure_subscription_id.clone()),
        ("AZURE_TENANT_ID", v.azure_tenant_id.clone()),
        ("AZURE_CLIENT_ID", v.azure_client_id.clone()),
        (
            "AZURE_WORKLOAD_IDENTITY_AUTH_MODE",
            serde_json::to_value(v.workload_identity_auth_mode)
                .ok()
                .and_then(|m| m.as_str().map(str::to_string))
                .unwrap_or_default(),
        ),
    ];
    let optional = [
        (
            "AZURE_ADDITIONAL_TENANTS",
            v.azure_additional_tenants.clone(),
        ),
        ("AZURE_CLIENT_SECRET", v.azure_client_secret.clone()),
        ("AZURE_SYNC_PERIOD", v.azure_sync_period.clone()),
        (
            "AZURE_OPERATOR_MODE",
            v.azure_operator_mode.as_str().to_string(),
        ),
        (
            "AZURE_TARGET_NAMESPACES",
            v.azure_target_namespaces.join(","),
        ),
        ("AZURE_AUTHORITY_HOST", v.azure_authority_host.clone()),
        (
            "AZURE_RESOURCE_MANAGER_ENDPOINT",
            v.azure_resource_manager_endpoint.clone(),
        ),
        (
            "AZURE_RESOURCE_MANAGER_AUDIENCE",
            v.azure_resource_manager_audience.clone(),
        ),
        (
            "USE_WORKLOAD_IDENTITY_AUTH",
            flag(v.use_workload_identity_auth),
        ),
        (
            "AZURE_CLIENT_CERTIFICATE",
            v.azure_client_certificate.clone(),
        ),
        (
            "AZURE_CLIENT_CERTIFICATE_PASSWORD",
            v.azure_client_certificate_password.clone(),
        ),
        ("AZURE_USER_AGENT_SUFFIX", v.azure_user_agent_suffix.clone()),
        (
            "MAX_CONCURRENT_RECONCILES",
            v.max_concurrent_reconciles.to_string(),
        ),
        (
            "ALLOW_MULTI_ENV_MANAGEMENT",
            flag(v.allow_multi_env_management),
        ),
    ];
    entries.extend(optional.into_iter().filter(|(_, value)| !value.is_empty()));
    if v.rate_limit.mode == crate::values::RateLimitMode::Bucket {
        entries.push(("RATE_LIMIT_MODE", "bucket".into()));
        entries.push(("RATE_LIMIT_QPS", v.rate_limit.qps.to_string()));
        entries.push((
            "RATE_LIMIT_BUCKET_SIZE",
            v.rate_limit.bucket_size.to_string(),
        ));
    }
    entries
}

fn settings_secret(cx: &Context) -> Secret {
    let data = settings_entries(cx.model)
        .into_iter()
        .map(|(key, value)| (key.to_string(), ByteString(value.into_bytes())))
        .collect();
    Secret {
        metadata: cx.meta(names::SETTINGS_SECRET, true),
        type_: Some("Opaque".into()),
        data: Some(data),
        ..Secret::default()
    }
}

fn rule(groups: &[&str], resources: Vec<String>, verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(groups.iter().map(|s| s.to_string()).collect()),
        resources: Some(resources),
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        ..PolicyRule::default()
    }
}

const ALL_VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];

fn manager_role(cx: &Context) -> ClusterRole {
    ClusterRole {
        metadata: cx.meta(names::MANAGER_ROLE, false),
        rules: Some(manager_rules(&cx.model.catalog)),
        ..ClusterRole::default()
    }
}

/// The manager's permissions: its own bookkeeping plus every served group.
pub fn manager_rules(catalog: &crate::catalog::Catalog) -> Vec<PolicyRule> {
    let mut rules = vec![
        rule(&[""], strings(["configmaps", "secrets"]), &ALL_VERBS),
        rule(&[""], strings(["events"]), &["create", "patch"]),
        rule(
            &[""],
            strings(["namespaces", "serviceaccounts"]),
            &["get", "list", "watch"],
        ),
        rule(
            &["apiextensions.k8s.io"],
            strings(["customresourcedefinitions"]),
            &["create", "get", "list", "patch", "update", "watch"],
        ),
    ];
    for group in &catalog.groups {
        let plurals: Vec<String> = group.kinds.iter().map(|k| k.plural()).collect();
        let mut resources = plurals.clone();
        resources.extend(plurals.iter().map(|p| format!("{p}/status")));
        resources.extend(plurals.iter().map(|p| format!("{p}/finalizers")));
        rules.push(rule(&[group.group.as_str()], resources, &ALL_VERBS));
    }
    rules
}

fn leader_election_role(cx: &Context) -> Role {
    Role {
        metadata: cx.meta(&format!("{}-role", names::LEADER_ELECTION), true),
        rules: Some(leader_election_rules()),
    }
}

/// What leader election needs: the lease, and events about it.
pub fn leader_election_rules() -> Vec<PolicyRule> {
    vec![
        rule(&["coordination.k8s.io"], strings(["leases"]), &ALL_VERBS),
        rule(&[""], strings(["events"]), &["create", "patch"]),
    ]
}

fn webhook_service(cx: &Context) -> Service {
    Service {
        metadata: cx.meta(names::WEBHOOK_SERVICE, true),
        spec: Some(ServiceSpec {
            ports: Some(vec![ServicePort {
                name: Some("webhook".into()),
                port: 443,
                protocol: Some("TCP".into()),
                target_port: Some(IntOrString::String("webhook-server".into())),
                ..ServicePort::default()
            }]),
            selector: Some(selector_labels()),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

fn metrics_service(cx: &Context) -> Service {
    Service {
        metadata: cx.meta(names::METRICS_SERVICE, true),
        spec: Some(ServiceSpec {
            ports: Some(vec![ServicePort {
                name: Some("metrics".into()),
                port: cx.model.values.metrics.port,
                protocol: Some("TCP".into()),
                target_port: Some(IntOrString::String("metrics-port".into())),
                ..ServicePort::default()
            }]),
            selector: Some(selector_labels()),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

fn pod_disruption_budget(cx: &Context) -> PodDisruptionBudget {
    let pdb = &cx.model.values.pod_disruption_budget;
    PodDisruptionBudget {
        metadata: cx.meta(names::PDB, true),
        spec: Some(PodDisruptionBudgetSpec {
            min_available: Some((&pdb.min_available).into()),
            selector: Some(LabelSelector {
                match_labels: Some(selector_labels()),
                ..LabelSelector::default()
            }),
            unhealthy_pod_eviction_policy: pdb
                .unhealthy_pod_eviction_policy
                .as_kubernetes()
                .map(str::to_string),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    }
}

fn pod_selector() -> LabelSelector {
    LabelSelector {
        match_labels: Some(selector_labels()),
        ..LabelSelector::default()
    }
}

fn ingress_policy(cx: &Context) -> NetworkPolicy {
    // Only the API server calls the webhooks; it and Prometheus reach the
    // webhook and metrics ports, nothing else.
    let mut ports = vec![NetworkPolicyPort {
        port: Some(IntOrString::Int(cx.model.values.webhook.port)),
        protocol: Some("TCP".into()),
        ..NetworkPolicyPort::default()
    }];
    if cx.model.values.metrics.enable {
        ports.push(NetworkPolicyPort {
            port: Some(IntOrString::Int(cx.model.values.metrics.port)),
            protocol: Some("TCP".into()),
            ..NetworkPolicyPort::default()
        });
    }
    NetworkPolicy {
        metadata: cx.meta(names::ALLOW_INGRESS, true),
        spec: Some(NetworkPolicySpec {
            ingress: Some(vec![NetworkPolicyIngressRule {
                ports: Some(ports),
                ..NetworkPolicyIngressRule::default()
            }]),
            pod_selector: Some(pod_selector()),
            policy_types: Some(strings(["Ingress"])),
            ..NetworkPolicySpec::default()
        }),
    }
}

fn egress_rule(port: i32, cidr: &str) -> NetworkPolicyEgressRule {
    NetworkPolicyEgressRule {
        ports: Some(vec![NetworkPolicyPort {
            port: Some(IntOrString::Int(port)),
            protocol: Some("TCP".into()),
            ..NetworkPolicyPort::default()
        }]),
        to: Some(vec![NetworkPolicyPeer {
            ip_block: Some(IPBlock {
                cidr: cidr.into(),
                ..IPBlock::default()
            }),
            ..NetworkPolicyPeer::default()
        }]),
    }
}

fn egress_policy(cx: &Context) -> NetworkPolicy {
    let np = &cx.model.values.network_policies;
    // One rule per destination: the upstream template wrote two `to:` keys
    // in one rule, so YAML kept the last and Azure (443) was dropped.
    let mut egress = vec![
        egress_rule(443, "0.0.0.0/0"),
        egress_rule(np.kubernetes_api_port, &np.kubernetes_api_cidr),
        egress_rule(3306, &np.mysql_cidr),
        egress_rule(5432, &np.postgresql_cidr),
        egress_rule(1433, &np.sql_cidr),
    ];
    // DNS, to resolve Azure endpoints.
    egress.push(NetworkPolicyEgressRule {
        ports: Some(
            ["UDP", "TCP"]
                .iter()
                .map(|protocol| NetworkPolicyPort {
                    port: Some(IntOrString::Int(53)),
                    protocol: Some(protocol.to_string()),
                    ..NetworkPolicyPort::default()
                })
                .collect(),
        ),
        to: None,
    });
    NetworkPolicy {
        metadata: cx.meta(names::ALLOW_EGRESS, true),
        spec: Some(NetworkPolicySpec {
            egress: Some(egress),
            pod_selector: Some(pod_selector()),
            policy_types: Some(strings(["Egress"])),
            ..NetworkPolicySpec::default()
        }),
    }
}

fn secret_env(name: &str, optional: bool) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                key: name.into(),
                name: names::SETTINGS_SECRET.into(),
                optional: optional.then_some(true),
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

/// Environment variables read from the settings Secret; `true` marks optional keys.
pub const SECRET_ENV: [(&str, bool); 21] = [
    ("AZURE_CLIENT_ID", false),
    ("AZURE_CLIENT_SECRET", true),
    ("AZURE_TENANT_ID", false),
    ("AZURE_ADDITIONAL_TENANTS", true),
    ("AZURE_SUBSCRIPTION_ID", false),
    ("AZURE_USER_ASSIGNED_IDENTITY_CREDENTIALS", true),
    ("AZURE_CLIENT_CERTIFICATE", true),
    ("AZURE_CLIENT_CERTIFICATE_PASSWORD", true),
    ("AZURE_AUTHORITY_HOST", true),
    ("AZURE_RESOURCE_MANAGER_ENDPOINT", true),
    ("AZURE_RESOURCE_MANAGER_AUDIENCE", true),
    ("AZURE_TARGET_NAMESPACES", true),
    ("AZURE_OPERATOR_MODE", true),
    ("AZURE_SYNC_PERIOD", true),
    ("USE_WORKLOAD_IDENTITY_AUTH", true),
    ("AZURE_USER_AGENT_SUFFIX", true),
    ("MAX_CONCURRENT_RECONCILES", true),
    ("RATE_LIMIT_MODE", true),
    ("RATE_LIMIT_QPS", true),
    ("RATE_LIMIT_BUCKET_SIZE", true),
    ("AZURE_WORKLOAD_IDENTITY_AUTH_MODE", true),
];

fn probe(path: &str, timing: &crate::values::ProbeTiming) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.into()),
            port: IntOrString::String("health-port".into()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(timing.period_seconds),
        failure_threshold: Some(timing.failure_threshold),
        timeout_seconds: Some(timing.timeout_seconds),
        ..Probe::default()
    }
}

fn port(name: &str, number: i32) -> ContainerPort {
    ContainerPort {
        container_port: number,
        name: Some(name.into()),
        protocol: Some("TCP".into()),
        ..ContainerPort::default()
    }
}

fn mount(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        mount_path: path.into(),
        name: name.into(),
        read_only: Some(true),
        ..VolumeMount::default()
    }
}

fn secret_volume(name: &str, secret: &str) -> Volume {
    Volume {
        name: name.into(),
        secret: Some(SecretVolumeSource {
            default_mode: Some(0o644),
            secret_name: Some(secret.into()),
            ..SecretVolumeSource::default()
        }),
        ..Volume::default()
    }
}

/// The manager's command-line arguments.
pub fn manager_args(model: &Model) -> Vec<String> {
    let v = &model.values;
    let mut args = Vec::new();
    if v.metrics.enable {
        let address = if v.metrics.address.is_empty() {
            format!("0.0.0.0:{}", v.metrics.port)
        } else {
            v.metrics.address.clone()
        };
        args.push(format!("--metrics-addr={address}"));
        args.push(format!("--secure-metrics={}", v.metrics.secure));
        args.push(format!("--profiling-metrics={}", v.metrics.profiling));
        if v.metrics.secure {
            args.push("--metrics-cert-dir=/tmp/k8s-metrics-server/serving-certs".into());
        }
    }
    args.push("--health-addr=:8081".into());
    args.push("--enable-leader-election".into());
    args.push(format!(
        "--leader-lease-duration={}",
        v.leader_election.lease_duration
    ));
    args.push(format!(
        "--leader-renew-deadline={}",
        v.leader_election.renew_deadline
    ));
    args.push(format!(
        "--leader-retry-period={}",
        v.leader_election.retry_period
    ));
    args.push("--v=2".into());
    if v.install_crds && model.serves_webhooks() {
        args.push(format!("--crd-pattern={}", v.crd_pattern.joined(";")));
        args.push(format!("--crd-labels={}", v.crd_labels.joined(",")));
    }
    args.push(format!("--webhook-port={}", v.webhook.port));
    if model.serves_webhooks() {
        args.push(format!("--webhook-cert-dir={}", v.webhook.cert_dir));
    }
    if v.use_json_logging {
        args.push("--json-logging".into());
    }
    args
}

/// The Deployment as JSON. With Recreate it carries an explicit
/// `rollingUpdate: null`: k8s-openapi cannot say "null" (it skips `None`), and
/// the null is what makes a three-way merge or an apply delete the block the
/// API server defaulted on a Deployment that once used RollingUpdate (see the
/// README's upgrade section and `asogen upgrade-check`).
fn deployment_value(cx: &Context) -> Value {
    let mut value = with_type(&deployment(cx));
    if matches!(cx.model.strategy, Strategy::Recreate) {
        value["spec"]["strategy"]
            .as_object_mut()
            .expect("the Deployment always has a strategy")
            .insert("rollingUpdate".into(), Value::Null);
    }
    value
}

fn deployment(cx: &Context) -> Deployment {
    let model = cx.model;
    let v = &model.values;
    let mut env = Vec::new();
    if !v.go.mem_limit.is_empty() {
        env.push(EnvVar {
            name: "GOMEMLIMIT".into(),
            value: Some(v.go.mem_limit.clone()),
            ..EnvVar::default()
        });
    }
    env.extend(
        SECRET_ENV
            .iter()
            .map(|(name, optional)| secret_env(name, *optional)),
    );
    env.push(EnvVar {
        name: "POD_NAMESPACE".into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: "metadata.namespace".into(),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    });
    env.extend(v.extra_env.iter().cloned());

    let mut ports = vec![
        port("webhook-server", v.webhook.port),
        port("health-port", 8081),
    ];
    if v.metrics.enable {
        ports.push(port("metrics-port", v.metrics.port));
    }
    let mut mounts = vec![mount("azure-identity", "/var/run/secrets/tokens")];
    let mut volumes = Vec::new();
    if model.serves_webhooks() {
        mounts.push(mount("cert", &v.webhook.cert_dir));
        volumes.push(secret_volume("cert", "webhook-server-cert"));
    }
    if v.metrics.enable && v.metrics.secure {
        mounts.push(mount(
            "metrics-cert",
            "/tmp/k8s-metrics-server/serving-certs",
        ));
        volumes.push(secret_volume("metrics-cert", "metrics-server-cert"));
    }
    volumes.push(Volume {
        name: "azure-identity".into(),
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(0o644),
            sources: Some(vec![VolumeProjection {
                service_account_token: Some(ServiceAccountTokenProjection {
                    audience: Some("api://AzureADTokenExchange".into()),
                    expiration_seconds: Some(3600),
                    path: "azure-identity".into(),
                    ..ServiceAccountTokenProjection::default()
                }),
                ..VolumeProjection::default()
            }]),
            ..ProjectedVolumeSource::default()
        }),
        ..Volume::default()
    });

    let container = Container {
        name: "manager".into(),
        image: Some(model.image()),
        image_pull_policy: Some("Always".into()),
        args: Some(manager_args(model)),
        env: Some(env),
        ports: Some(ports),
        liveness_probe: Some(probe("/healthz", &v.probes.liveness)),
        readiness_probe: Some(probe("/readyz", &v.probes.readiness)),
        startup_probe: Some(probe("/healthz", &v.probes.startup)),
        resources: (v.resources != Default::default()).then(|| v.resources.clone()),
        security_context: (v.security_context != Default::default())
            .then(|| v.security_context.clone()),
        volume_mounts: Some(mounts),
        ..Container::default()
    };

    let mut pod_labels = selector_labels();
    pod_labels.insert(
        "app.kubernetes.io/version".into(),
        model.release.app_version.clone(),
    );
    if v.aad_pod_identity.enable {
        pod_labels.insert("aadpodidbinding".into(), "aso-manager-binding".into());
    }
    pod_labels.extend(v.pod_labels.clone());
    let mut pod_annotations = v.pod_annotations.clone();
    pod_annotations.insert(
        "kubectl.kubernetes.io/default-container".into(),
        "manager".into(),
    );

    let non_empty = |items: &BTreeMap<String, String>| (!items.is_empty()).then(|| items.clone());
    let pod = PodSpec {
        affinity: (v.affinity != Default::default()).then(|| v.affinity.clone()),
        containers: vec![container],
        image_pull_secrets: (!v.image.pull_secrets.is_empty())
            .then(|| v.image.pull_secrets.clone()),
        node_selector: non_empty(&v.node_selector),
        priority_class_name: (!v.priority_class_name.is_empty())
            .then(|| v.priority_class_name.clone()),
        security_context: (v.pod_security_context != Default::default())
            .then(|| v.pod_security_context.clone()),
        service_account_name: Some(model.service_account_name()),
        termination_grace_period_seconds: Some(10),
        tolerations: (!v.tolerations.is_empty()).then(|| v.tolerations.clone()),
        volumes: Some(volumes),
        ..PodSpec::default()
    };

    let strategy = match &model.strategy {
        Strategy::Recreate => DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        },
        Strategy::RollingUpdate {
            max_surge,
            max_unavailable,
        } => DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(max_surge.into()),
                max_unavailable: Some(max_unavailable.into()),
            }),
        },
    };

    let mut metadata = cx.meta(names::DEPLOYMENT, true);
    metadata.annotations = non_empty(&v.deployment_annotations);
    Deployment {
        metadata,
        spec: DeploymentSpec {
            replicas: Some(i32::try_from(model.replicas.get()).unwrap_or(i32::MAX)),
            revision_history_limit: Some(v.revision_history_limit),
            selector: pod_selector(),
            strategy: Some(strategy),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    annotations: Some(pod_annotations),
                    labels: Some(pod_labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

fn webhook_client(cx: &Context, path: String) -> WebhookClientConfig {
    WebhookClientConfig {
        service: Some(ServiceReference {
            name: names::WEBHOOK_SERVICE.into(),
            namespace: cx.model.namespace.clone(),
            path: Some(path),
            ..ServiceReference::default()
        }),
        ..WebhookClientConfig::default()
    }
}

fn webhook_rule(entry: &crate::catalog::WebhookEntry) -> Vec<RuleWithOperations> {
    vec![RuleWithOperations {
        api_groups: Some(vec![entry.group.clone()]),
        api_versions: Some(vec![entry.version.clone()]),
        operations: Some(strings(["CREATE", "UPDATE"])),
        resources: Some(vec![entry.plural.clone()]),
        ..RuleWithOperations::default()
    }]
}

fn inject_ca(cx: &Context) -> ObjectMeta {
    ObjectMeta {
        annotations: Some(BTreeMap::from([(
            "cert-manager.io/inject-ca-from".into(),
            format!("{}/{}", cx.model.namespace, names::SERVING_CERT),
        )])),
        ..ObjectMeta::default()
    }
}

fn mutating_webhooks(cx: &Context) -> MutatingWebhookConfiguration {
    let mut metadata = cx.meta(names::MUTATING, false);
    metadata.annotations = inject_ca(cx).annotations;
    MutatingWebhookConfiguration {
        metadata,
        webhooks: Some(
            cx.model
                .catalog
                .webhooks()
                .iter()
                .map(|entry| MutatingWebhook {
                    admission_review_versions: strings(["v1"]),
                    client_config: webhook_client(cx, format!("/mutate-{}", entry.path)),
                    failure_policy: Some("Fail".into()),
                    name: format!("default.{}", entry.name),
                    rules: Some(webhook_rule(entry)),
                    side_effects: "None".into(),
                    ..MutatingWebhook::default()
                })
                .collect(),
        ),
    }
}

fn validating_webhooks(cx: &Context) -> ValidatingWebhookConfiguration {
    let mut metadata = cx.meta(names::VALIDATING, false);
    metadata.annotations = inject_ca(cx).annotations;
    ValidatingWebhookConfiguration {
        metadata,
        webhooks: Some(
            cx.model
                .catalog
                .webhooks()
                .iter()
                .map(|entry| ValidatingWebhook {
                    admission_review_versions: strings(["v1"]),
                    client_config: webhook_client(cx, format!("/validate-{}", entry.path)),
                    failure_policy: Some("Fail".into()),
                    name: format!("validate.{}", entry.name),
                    rules: Some(webhook_rule(entry)),
                    side_effects: "None".into(),
                    ..ValidatingWebhook::default()
                })
                .collect(),
        ),
    }
}

fn issuer(cx: &Context) -> Value {
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": to_value(&cx.meta(names::ISSUER, true)),
        "spec": {"selfSigned": {}}
    })
}

fn certificate(cx: &Context, name: &str, service: &str, secret: &str) -> Value {
    let ns = &cx.model.namespace;
    json!({
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": to_value(&cx.meta(name, true)),
        "spec": {
            "dnsNames": [format!("{service}.{ns}.svc"), format!("{service}.{ns}.svc.cluster.local")],
            "issuerRef": {"kind": "Issuer", "name": names::ISSUER},
            "secretName": secret,
            "subject": {"organizations": ["azure"]}
        }
    })
}
