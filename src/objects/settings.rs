//! The Secret holding the Azure settings, and the environment variables the
//! controller reads from it.

use super::names::SETTINGS_SECRET;
use super::{header, resource};
use crate::describe::tree::{json, map, text, when};
use crate::describe::{Entry, Expr, Func, Resource};

/// Environment variables read from the settings Secret, in the release's
/// order; `true` marks optional keys.
pub const SECRET_ENV: [(&str, bool); 22] = [
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
    ("DEFAULT_RECONCILE_POLICY", true),
    ("ALLOW_MULTI_ENV_MANAGEMENT", true),
];

/// A Secret data entry: the value, base64-encoded.
fn data(key: &str, value: Expr) -> Entry {
    json(key, Expr::Call(Func::B64enc, vec![value]))
}

/// A data entry present only when its value is set.
fn data_if_set(key: &str, path: &'static str) -> Entry {
    when(Expr::value(path), vec![data(key, Expr::value(path))])
}

/// "true" when a boolean value is on, else no entry.
fn data_flag(key: &str, path: &'static str) -> Entry {
    when(Expr::value(path), vec![data(key, Expr::str("true"))])
}

/// An integer setting, written as its decimal text.
fn data_int(key: &str, path: &'static str) -> Entry {
    data(
        key,
        Expr::Call(Func::ToString, vec![Expr::value(path).int64()]),
    )
}

/// The settings Secret.
pub fn settings_secret() -> Resource {
    let mut object = header("v1", "Secret", SETTINGS_SECRET, true, vec![]);
    object.push(text("type", "Opaque"));
    object.push(map(
        "data",
        vec![
            data("AZURE_SUBSCRIPTION_ID", Expr::value("azureSubscriptionID")),
            data("AZURE_TENANT_ID", Expr::value("azureTenantID")),
            data("AZURE_CLIENT_ID", Expr::value("azureClientID")),
            data_if_set("AZURE_ADDITIONAL_TENANTS", "azureAdditionalTenants"),
            data_if_set("AZURE_CLIENT_SECRET", "azureClientSecret"),
            data_if_set("AZURE_SYNC_PERIOD", "azureSyncPeriod"),
            data_if_set("AZURE_OPERATOR_MODE", "azureOperatorMode"),
            when(
                Expr::value("azureTargetNamespaces"),
                vec![data(
                    "AZURE_TARGET_NAMESPACES",
                    Expr::Call(
                        Func::Join,
                        vec![Expr::str(","), Expr::value("azureTargetNamespaces")],
                    ),
                )],
            ),
            data_if_set("AZURE_AUTHORITY_HOST", "azureAuthorityHost"),
            data_if_set(
                "AZURE_RESOURCE_MANAGER_ENDPOINT",
                "azureResourceManagerEndpoint",
            ),
            data_if_set(
                "AZURE_RESOURCE_MANAGER_AUDIENCE",
                "azureResourceManagerAudience",
            ),
            data_flag("USE_WORKLOAD_IDENTITY_AUTH", "useWorkloadIdentityAuth"),
            data_if_set("AZURE_CLIENT_CERTIFICATE", "azureClientCertificate"),
            data_if_set(
                "AZURE_CLIENT_CERTIFICATE_PASSWORD",
                "azureClientCertificatePassword",
            ),
            data_if_set("AZURE_USER_AGENT_SUFFIX", "azureUserAgentSuffix"),
            data_int("MAX_CONCURRENT_RECONCILES", "maxConcurrentReconciles"),
            data_flag("ALLOW_MULTI_ENV_MANAGEMENT", "allowMultiEnvManagement"),
            when(
                Expr::value("rateLimit.mode").eq(Expr::str("bucket")),
                vec![
                    data("RATE_LIMIT_MODE", Expr::str("bucket")),
                    data_int("RATE_LIMIT_QPS", "rateLimit.qps"),
                    data_int("RATE_LIMIT_BUCKET_SIZE", "rateLimit.bucketSize"),
                ],
            ),
        ],
    ));
    resource(
        "secret-aso-controller-settings.yaml",
        Some(Expr::value("createAzureOperatorSecret")),
        object,
    )
}
