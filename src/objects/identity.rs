//! aad-pod-identity (deprecated upstream, still in the 2.20.0 chart): the
//! AzureIdentity for the controller's managed identity and its binding to
//! the pods labelled `aadpodidbinding: aso-manager-binding`.

use serde_json::json;

use super::{lit, resource};
use crate::describe::tree::{field, json, map, text};
use crate::describe::{Expr, Resource};
use crate::keys;

/// The label value on the controller pods the binding selects.
pub const POD_BINDING_LABEL: &str = "aso-manager-binding";

const IDENTITY: &str = "aso-identity";

fn object(kind: &str, name: &str) -> Vec<crate::describe::Entry> {
    vec![
        text("apiVersion", "aadpodidentity.k8s.io/v1"),
        text("kind", kind),
        map(
            "metadata",
            vec![text("name", name), json("namespace", Expr::Namespace)],
        ),
    ]
}

/// The AzureIdentity.
pub fn azure_identity() -> Resource {
    let mut entries = object("AzureIdentity", IDENTITY);
    entries.push(map(
        "spec",
        vec![
            json("clientID", Expr::value(keys::AZURE_CLIENT_ID)),
            json(
                "resourceID",
                Expr::value(keys::AAD_POD_IDENTITY_AZURE_MANAGED_IDENTITY_RESOURCE_ID),
            ),
            field("type", lit(json!(0))),
        ],
    ));
    resource(
        "azureidentity.yaml",
        Some(Expr::value(keys::AAD_POD_IDENTITY_ENABLE)),
        entries,
    )
}

/// The AzureIdentityBinding.
pub fn azure_identity_binding() -> Resource {
    let mut entries = object("AzureIdentityBinding", &format!("{IDENTITY}-binding"));
    entries.push(field(
        "spec",
        lit(json!({"azureIdentity": IDENTITY, "selector": POD_BINDING_LABEL})),
    ));
    resource(
        "azureidentitybinding.yaml",
        Some(Expr::value(keys::AAD_POD_IDENTITY_ENABLE)),
        entries,
    )
}
