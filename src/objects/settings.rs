//! The Secret holding the Azure settings, and the environment variables the
//! controller reads from it.

use super::names::SETTINGS_SECRET;
use super::{header, resource};
use crate::describe::tree::{json, map, text, when};
use crate::describe::{Entry, Expr, Func, Resource};
use crate::keys::{self, Key};

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
fn data_if_set(name: &str, key: Key) -> Entry {
    when(Expr::value(key), vec![data(name, Expr::value(key))])
}

/// "true" when a boolean value is on, else no entry.
fn data_flag(name: &str, key: Key) -> Entry {
    when(Expr::value(key), vec![data(name, Expr::str("true"))])
}

/// An integer setting, written as its decimal text.
fn data_int(name: &str, key: Key) -> Entry {
    data(
        name,
        Expr::Call(Func::ToString, vec![Expr::value(key).int64()]),
    )
}

/// The settings Secret.
pub fn settings_secret() -> Resource {
    let mut object = header("v1", "Secret", SETTINGS_SECRET, true, vec![]);
    object.push(text("type", "Opaque"));
    object.push(map(
        "data",
        vec![
            data(
                "AZURE_SUBSCRIPTION_ID",
                Expr::value(keys::AZURE_SUBSCRIPTION_ID),
            ),
            data("AZURE_TENANT_ID", Expr::value(keys::AZURE_TENANT_ID)),
            data("AZURE_CLIENT_ID", Expr::value(keys::AZURE_CLIENT_ID)),
            data_if_set("AZURE_ADDITIONAL_TENANTS", keys::AZURE_ADDITIONAL_TENANTS),
            data_if_set("AZURE_CLIENT_SECRET", keys::AZURE_CLIENT_SECRET),
            data_if_set("AZURE_SYNC_PERIOD", keys::AZURE_SYNC_PERIOD),
            data_if_set("AZURE_OPERATOR_MODE", keys::AZURE_OPERATOR_MODE),
            when(
                Expr::value(keys::AZURE_TARGET_NAMESPACES),
                vec![data(
                    "AZURE_TARGET_NAMESPACES",
                    Expr::Call(
                        Func::Join,
                        vec![Expr::str(","), Expr::value(keys::AZURE_TARGET_NAMESPACES)],
                    ),
                )],
            ),
            data_if_set("AZURE_AUTHORITY_HOST", keys::AZURE_AUTHORITY_HOST),
            data_if_set(
                "AZURE_RESOURCE_MANAGER_ENDPOINT",
                keys::AZURE_RESOURCE_MANAGER_ENDPOINT,
            ),
            data_if_set(
                "AZURE_RESOURCE_MANAGER_AUDIENCE",
                keys::AZURE_RESOURCE_MANAGER_AUDIENCE,
            ),
            data_flag(
                "USE_WORKLOAD_IDENTITY_AUTH",
                keys::USE_WORKLOAD_IDENTITY_AUTH,
            ),
            data_if_set("AZURE_CLIENT_CERTIFICATE", keys::AZURE_CLIENT_CERTIFICATE),
            data_if_set(
                "AZURE_CLIENT_CERTIFICATE_PASSWORD",
                keys::AZURE_CLIENT_CERTIFICATE_PASSWORD,
            ),
            data_if_set("AZURE_USER_AGENT_SUFFIX", keys::AZURE_USER_AGENT_SUFFIX),
            data_int("MAX_CONCURRENT_RECONCILES", keys::MAX_CONCURRENT_RECONCILES),
            data_flag(
                "ALLOW_MULTI_ENV_MANAGEMENT",
                keys::ALLOW_MULTI_ENV_MANAGEMENT,
            ),
            when(
                Expr::value(keys::RATE_LIMIT_MODE).eq(Expr::str("bucket")),
                vec![
                    data("RATE_LIMIT_MODE", Expr::str("bucket")),
                    data_int("RATE_LIMIT_QPS", keys::RATE_LIMIT_QPS),
                    data_int("RATE_LIMIT_BUCKET_SIZE", keys::RATE_LIMIT_BUCKET_SIZE),
                ],
            ),
        ],
    ));
    resource(
        "secret-aso-controller-settings.yaml",
        Some(Expr::value(keys::CREATE_AZURE_OPERATOR_SECRET)),
        object,
    )
}
