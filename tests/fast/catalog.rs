//! `asogen catalog import`: the catalog read back from what asogen renders,
//! and from a small release manifest built here.

use crate::common;

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

/// A release manifest, one string an import reads on each `@NAME@` line.
const TAMPERABLE: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: azureserviceoperator-controller-manager
spec:
  template:
    spec:
      containers:
      - name: manager
        image: @IMAGE@
        args:
        - --metrics-addr=:8080
        - @ARG@
        env:
        - name: @ENV@
          value: x
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: azureserviceoperator-widgets-mwh
webhooks:
- name: default.v1api20250101.widgets.widgets.azure.com
  clientConfig:
    service:
      path: @PATH@
  rules:
  - apiGroups:
    - @GROUP@
    apiVersions:
    - @VERSION@
    resources:
    - @RESOURCE@
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: @ROLE@
rules:
- apiGroups:
  - @RULE_GROUP@
  resources:
  - @RULE_RESOURCE@
  resourceNames:
  - @RESOURCE_NAME@
  verbs:
  - @VERB@
";

/// Each string field of [`TAMPERABLE`]: its placeholder, its valid value,
/// how a payload goes into it, and the key path a refusal names.
const FIELDS: [(&str, &str, &str, &str); 13] = [
    (
        "IMAGE",
        "mcr.microsoft.com/k8s/azureserviceoperator:v9.1.0",
        "mcr.microsoft.com/k8s/azureserviceoperator:{}",
        "spec.template.spec.containers[0].image",
    ),
    (
        "ARG",
        "--v=2",
        "--{}",
        "spec.template.spec.containers[0].args[1]",
    ),
    (
        "ENV",
        "AZURE_CLIENT_ID",
        "{}",
        "spec.template.spec.containers[0].env[0].name",
    ),
    (
        "PATH",
        "/mutate-widgets-azure-com-v1api20250101-widget",
        "/mutate-widgets-azure-com-v1api20250101-{}",
        "webhooks[0].clientConfig.service.path",
    ),
    (
        "GROUP",
        "widgets.azure.com",
        "{}",
        "webhooks[0].rules[0].apiGroups[0]",
    ),
    (
        "VERSION",
        "v1api20250101",
        "{}",
        "webhooks[0].rules[0].apiVersions[0]",
    ),
    (
        "RESOURCE",
        "widgets",
        "{}",
        "webhooks[0].rules[0].resources[0]",
    ),
    (
        "ROLE",
        "azureserviceoperator-manager-role",
        "azureserviceoperator-{}",
        "metadata.name",
    ),
    (
        "RULE_GROUP",
        "widgets.azure.com",
        "{}",
        "rules[0].apiGroups[0]",
    ),
    ("RULE_RESOURCE", "widgets", "{}", "rules[0].resources[0]"),
    (
        "RESOURCE_NAME",
        "one-widget",
        "{}",
        "rules[0].resourceNames[0]",
    ),
    ("VERB", "get", "{}", "rules[0].verbs[0]"),
    // The same verb written as a wildcard with a flow list after it.
    ("VERB", "get", "{}", "rules[0].verbs[0]"),
];

/// Strings no field of a catalog may hold: template actions, quotes, line
/// breaks, wildcards, YAML syntax, Helm's `<no value>`.
const PAYLOADS: [&str; 20] = [
    "{{ .Values.x }}",
    "get{{ \"\\n- apiGroups: ['*']\\n  resources: ['*']\" }}",
    "{{- /* */ -}}",
    "*",
    "*/status",
    "x\ny",
    "x\n- '*'",
    "x'y",
    "x\"y",
    "x y",
    "x: y",
    "- x",
    "x]",
    "x}",
    "#x",
    "x<no value>",
    "x\u{2028}y",
    "x\ty",
    "x\\y",
    "x,y",
];

/// TAMPERABLE with `field` holding `value` and every other field valid.
fn tampered(field: &str, value: &str, quote: bool) -> String {
    let mut text = TAMPERABLE.to_string();
    for (name, good, _, _) in FIELDS {
        let placeholder = format!("@{name}@");
        if name == field {
            let written = if quote {
                serde_json::to_string(value).unwrap()
            } else {
                value.to_string()
            };
            text = text.replace(&placeholder, &written);
        } else {
            text = text.replace(&placeholder, good);
        }
    }
    text
}

/// The line and column a refusal of `field` names: the list item, or the
/// key of a mapping entry.
fn position_of(field: &str) -> (usize, usize) {
    let placeholder = format!("@{field}@");
    let (index, line) = TAMPERABLE
        .lines()
        .enumerate()
        .find(|(_, line)| line.contains(&placeholder))
        .unwrap();
    let indent = line.len() - line.trim_start().len();
    let item = line.trim_start().strip_prefix("- ");
    let column = match item {
        // `- name: VALUE`: the key of a map in a list.
        Some(rest) if rest.contains(": ") => indent + 2,
        // `- VALUE`: the item.
        Some(_) => line.find(&placeholder).unwrap(),
        // `key: VALUE`: the key.
        None => indent,
    };
    (index + 1, column + 1)
}

#[test]
fn a_tampered_string_in_any_field_is_refused_with_its_file_line_column_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("m.yaml");
    let catalog = dir.path().join("catalog.json");
    // Every field valid: the manifest imports.
    std::fs::write(&manifest, tampered("", "", true)).unwrap();
    let out = import(&manifest, &catalog, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut checked = 0;
    for (field, _, embed, key) in FIELDS {
        for payload in PAYLOADS {
            // A `:` or `@` in an image reference ends the repository or
            // starts a digest, so the tag would not hold the payload whole.
            if field == "IMAGE" && payload.contains([':', '@']) {
                continue;
            }
            std::fs::write(&catalog, "kept\n").unwrap();
            let value = embed.replace("{}", payload);
            std::fs::write(&manifest, tampered(field, &value, true)).unwrap();
            let out = import(&manifest, &catalog, &[]);
            let stderr = text(&out.stderr);
            let (line, column) = position_of(field);
            let at = format!("{}:{line}:{column}: ", manifest.display());
            assert_eq!(out.status.code(), Some(1), "{field} {payload:?}: {stderr}");
            assert!(
                stderr.contains(&at) && stderr.contains(&format!(", {key}: ")),
                "{field} {payload:?}: expected {at} and {key}:\n{stderr}"
            );
            assert!(stderr.contains("help: "), "{stderr}");
            assert_eq!(std::fs::read_to_string(&catalog).unwrap(), "kept\n");
            // Unquoted, the payload is YAML: refused as YAML or by the
            // grammar, with a position either way.
            std::fs::write(&manifest, tampered(field, &value, false)).unwrap();
            let out = import(&manifest, &catalog, &[]);
            let stderr = text(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{field} {value:?} unquoted: {stderr}"
            );
            let named = stderr
                .split(&format!("{}:", manifest.display()))
                .nth(1)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
            assert!(named, "{field} {value:?} unquoted: no line in {stderr}");
            assert_eq!(std::fs::read_to_string(&catalog).unwrap(), "kept\n");
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn release_and_controller_flags_given_on_the_command_line_follow_the_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("m.yaml");
    std::fs::write(&manifest, tampered("", "", true)).unwrap();
    let catalog = dir.path().join("catalog.json");
    std::fs::write(&catalog, "kept\n").unwrap();
    for payload in PAYLOADS.iter().chain(&["2.20.0", "latest", ""]) {
        let out = import(&manifest, &catalog, &[&format!("--release={payload}")]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{payload:?}: {stderr}");
        assert!(stderr.contains("--release: "), "{stderr}");
    }
    let help = dir.path().join("help.txt");
    for payload in PAYLOADS {
        // Each payload as the name of the third flag a --help lists (a
        // blank ends a name there, and `#` starts a comment).
        let name = payload;
        if name.contains(char::is_whitespace) || name.starts_with('#') {
            continue;
        }
        std::fs::write(&help, format!("  -a string\n  -b\n  -{name} int\n")).unwrap();
        let out = import(
            &manifest,
            &catalog,
            &["--controller-flags", help.to_str().unwrap()],
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{payload:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{}:3: ", help.display())),
            "{payload:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read_to_string(&catalog).unwrap(), "kept\n");
}

#[test]
fn the_released_2_20_0_objects_import_to_the_committed_catalog() {
    // What the released 2.20.0 chart renders (tests/fixtures/upstream-2.20.0/README.md).
    let defaults = common::root().join("tests/fixtures/upstream-2.20.0/defaults.json");
    let objects: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&defaults).unwrap()).unwrap();
    let stream: String = objects
        .iter()
        .map(|object| format!("---\n{object}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("upstream.yaml");
    std::fs::write(&manifest, stream).unwrap();
    let catalog = dir.path().join("catalog.json");
    let flags = common::root().join("values/controller-flags.txt");
    let out = import(
        &manifest,
        &catalog,
        &["--controller-flags", flags.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let committed = std::fs::read_to_string(common::root().join("values/catalog.json")).unwrap();
    assert_eq!(std::fs::read_to_string(&catalog).unwrap(), committed);
}

#[test]
fn a_hand_edited_catalog_is_refused_with_its_line_column_and_key() {
    use asogen::catalog::{CATALOG_JSON, Catalog};
    assert!(Catalog::from_json("catalog.json", CATALOG_JSON).is_ok());
    let committed: serde_json::Value = serde_json::from_str(CATALOG_JSON).unwrap();
    // One string of each kind the catalog holds.
    let pointers = [
        ("/release", "release"),
        ("/groups/0/group", "groups[0].group"),
        (
            "/groups/0/webhooks/0/version",
            "groups[0].webhooks[0].version",
        ),
        (
            "/groups/0/webhooks/0/resource",
            "groups[0].webhooks[0].resource",
        ),
        ("/groups/0/webhooks/0/kind", "groups[0].webhooks[0].kind"),
        (
            "/clusterRoles/manager-role/0/apiGroups/0",
            "clusterRoles.manager-role[0].apiGroups[0]",
        ),
        (
            "/clusterRoles/manager-role/3/resources/1",
            "clusterRoles.manager-role[3].resources[1]",
        ),
        (
            "/clusterRoles/manager-role/95/verbs/2",
            "clusterRoles.manager-role[95].verbs[2]",
        ),
        (
            "/roles/leader-election-role/0/verbs/0",
            "roles.leader-election-role[0].verbs[0]",
        ),
        ("/controller/flags/0", "controller.flags[0]"),
        ("/controller/env/3", "controller.env[3]"),
    ];
    // Each string gets every fourth payload (a read of the whole catalog
    // takes a while in a debug build); every payload is used.
    for (i, (pointer, key)) in pointers.into_iter().enumerate() {
        for payload in PAYLOADS.iter().skip(i % 4).step_by(4) {
            let mut edited = committed.clone();
            *edited.pointer_mut(pointer).unwrap() = serde_json::Value::from(*payload);
            let text = serde_json::to_string_pretty(&edited).unwrap();
            let quoted = serde_json::to_string(payload).unwrap();
            let (index, line) = text
                .lines()
                .enumerate()
                .find(|(_, line)| line.contains(&quoted))
                .unwrap();
            let column = line.len() - line.trim_start().len() + 1;
            let err = Catalog::from_json("catalog.json", &text).unwrap_err();
            let expected = format!("catalog.json:{}:{column}: {key}: ", index + 1);
            assert!(
                err.to_string().starts_with(&expected),
                "{pointer} {payload:?}: expected {expected}, got {err}"
            );
        }
    }
    // A key a rule does not have, and a rule with no verbs.
    let mut edited = committed.clone();
    edited["clusterRoles"]["manager-role"][0]["nonResourceURLs"] = serde_json::json!(["/x"]);
    let err = Catalog::from_json("catalog.json", &edited.to_string()).unwrap_err();
    assert!(err.to_string().contains("nonResourceURLs"), "{err}");
    let mut edited = committed;
    edited["roles"]["leader-election-role"][0]["verbs"] = serde_json::json!([]);
    let err = Catalog::from_json("catalog.json", &edited.to_string()).unwrap_err();
    assert!(
        err.to_string()
            .contains("roles.leader-election-role[0]: a rule needs at least one entry in `verbs`"),
        "{err}"
    );
}
