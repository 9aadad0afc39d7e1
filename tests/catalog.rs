//! `asogen catalog import`: the catalog read back from what asogen renders,
//! and from a small release manifest built here.

mod common;

use common::{asogen, text};

/// `asogen catalog import MANIFEST --out CATALOG [EXTRA...]`.
fn import(
    manifest: &std::path::Path,
    catalog: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "catalog",
        "import",
        manifest.to_str().unwrap(),
        "--out",
        catalog.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    asogen(&args)
}

#[test]
fn the_catalog_imported_from_asogens_own_install_is_the_committed_one() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("install.yaml");
    let out = asogen(&["template"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(&manifest, &out.stdout).unwrap();
    let catalog = dir.path().join("catalog.json");
    let flags = common::root().join("values/controller-flags.txt");
    let out = import(
        &manifest,
        &catalog,
        &["--controller-flags", flags.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("ASO v2.20.0, 46 API groups, 664 resource versions"),
        "{}",
        text(&out.stdout)
    );
    let committed = std::fs::read_to_string(common::root().join("values/catalog.json")).unwrap();
    assert_eq!(std::fs::read_to_string(&catalog).unwrap(), committed);
}

const RELEASE: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: azureserviceoperator-controller-manager}
spec:
  template:
    spec:
      containers:
      - name: manager
        image: mcr.microsoft.com/k8s/azureserviceoperator:v9.1.0
        args: [--metrics-addr=:8080, --v=2, --enable-leader-election]
        env:
        - {name: AZURE_CLIENT_ID, valueFrom: {secretKeyRef: {name: s, key: AZURE_CLIENT_ID}}}
        - {name: POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: azureserviceoperator-widgets-mwh}
webhooks:
- name: default.v1api20250101.widgets.widgets.azure.com
  clientConfig: {service: {path: /mutate-widgets-azure-com-v1api20250101-widget}}
  rules: [{apiGroups: [widgets.azure.com], apiVersions: [v1api20250101], resources: [widgets]}]
- name: default.v1api20250101.gadgetries.widgets.azure.com
  clientConfig: {service: {path: /mutate-widgets-azure-com-v1api20250101-gadgetry}}
  rules: [{apiGroups: [widgets.azure.com], apiVersions: [v1api20250101], resources: [gadgetries]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: azureserviceoperator-manager-role}
rules:
- {apiGroups: [widgets.azure.com], resources: [widgets], verbs: [get]}
"#;

#[test]
fn a_release_manifest_gives_its_groups_webhooks_roles_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("release.yaml");
    std::fs::write(&manifest, RELEASE).unwrap();
    let catalog = dir.path().join("catalog.json");
    let out = import(&manifest, &catalog, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written: serde_json::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&catalog).unwrap()).unwrap();
    assert_eq!(written["release"], "v9.1.0");
    assert_eq!(written["groups"][0]["group"], "widgets.azure.com");
    assert_eq!(
        written["groups"][0]["webhooks"][1],
        serde_json::json!({"version": "v1api20250101", "resource": "gadgetries", "kind": "gadgetry"})
    );
    assert_eq!(
        written["clusterRoles"]["manager-role"][0]["resources"][0],
        "widgets"
    );
    assert_eq!(
        written["controller"],
        serde_json::json!({
            "flags": ["enable-leader-election", "metrics-addr", "v"],
            "env": ["AZURE_CLIENT_ID", "POD_NAMESPACE"],
        })
    );
    // The controller's --help adds the flags the Deployment does not pass.
    let help = dir.path().join("help.txt");
    std::fs::write(
        &help,
        "Usage of aso-controller:\n  -crd-pattern string\n    \tWhich CRDs to install (-- not a flag)\n  -json-logging\n    \tLog as JSON\n",
    )
    .unwrap();
    let out = import(
        &manifest,
        &catalog,
        &["--controller-flags", help.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&catalog).unwrap()).unwrap();
    assert_eq!(
        written["controller"]["flags"],
        serde_json::json!([
            "crd-pattern",
            "enable-leader-election",
            "json-logging",
            "metrics-addr",
            "v"
        ])
    );
    // --release wins over the image tag.
    let out = import(&manifest, &catalog, &["--release", "v9.1.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&catalog)
            .unwrap()
            .contains("\"release\": \"v9.1.1\"")
    );
}

#[test]
fn an_incomplete_or_odd_manifest_is_refused_and_the_catalog_kept() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog.json");
    std::fs::write(&catalog, "kept\n").unwrap();
    let import_text = |body: &str| {
        let manifest = dir.path().join("m.yaml");
        std::fs::write(&manifest, body).unwrap();
        import(&manifest, &catalog, &[])
    };
    let no_webhooks = RELEASE.split("---").nth(2).unwrap();
    let out = import_text(no_webhooks);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no MutatingWebhookConfiguration"));
    let odd_path = RELEASE.replace(
        "/mutate-widgets-azure-com-v1api20250101-widget",
        "/elsewhere",
    );
    let out = import_text(&odd_path);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("default.v1api20250101.widgets.widgets.azure.com"),
        "{}",
        text(&out.stderr)
    );
    let no_version = RELEASE.replace("azureserviceoperator:v9.1.0", "other:v1");
    let out = import_text(&no_version);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--release"));
    assert_eq!(std::fs::read_to_string(&catalog).unwrap(), "kept\n");
    let out = asogen(&["catalog", "import", "/nonexistent.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent.yaml"));
}
