//! The chart guard means to Helm what it means to asogen's evaluator: for
//! values sets chosen to reach every branch of the guard (each rule, every
//! `crdPattern` problem with entries Go quotes in its own way, each
//! refusal of a templated value, label and annotation problems), the real
//! Helm v4 engine, rendering the generated chart without its schema,
//! reports exactly the lines the evaluator gets running the guard's
//! description on the same values (the chart's defaults with the file
//! merged over them, numbers as float64, as Helm reads a values file).
//! The unit tests of `src/rules/guard.rs` run the evaluator over many more
//! values sets against asogen's own checks.

mod common;

use asogen::catalog::Catalog;
use asogen::describe::{Capabilities, Scope, stmt};
use common::{chart, helm_render, text};
use serde_json::{Value, json};

/// The values sets, as values files (JSON is YAML).
fn cases() -> Vec<Value> {
    let big = "x".repeat(130_000);
    vec![
        json!({}),
        json!({"replicaCount": 3, "strategy": {"type": "RollingUpdate"}}),
        json!({"replicaCount": 1, "strategy": {"type": "RollingUpdate"}, "featureGates": {"singleReplicaRollingUpdate": true}}),
        json!({"replicaCount": 1, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}, "featureGates": {"singleReplicaRollingUpdate": true}}),
        json!({"replicaCount": 0, "strategy": {"rollingUpdate": {"maxSurge": 1}}}),
        json!({"replicaCount": -2, "strategy": null, "featureGates": null}),
        json!({"replicaCount": null, "strategy": {"type": null, "rollingUpdate": null}}),
        json!({"replicaCount": 2.0, "strategy": {"type": "RollingUpdate"}, "featureGates": {"singleReplicaRollingUpdate": false}}),
        json!({"topology": "split", "split": {"webhooks": {"replicaCount": 0, "maxSurge": "0%"}, "controller": {"replicaCount": 0}}}),
        json!({"topology": "split", "split": {"webhooks": {"maxSurge": 0}, "controller": {"replicaCount": 0, "paused": true}}, "replicaCount": 0}),
        json!({"topology": "split", "multitenant": {"enable": true}, "azureOperatorMode": "watchers"}),
        json!({"topology": "single", "split": {"webhooks": {"replicaCount": 0}}, "multitenant": {"enable": true}, "azureOperatorMode": "webhooks"}),
        json!({"topology": null, "split": null, "replicaCount": 0}),
        json!({"crdPattern": "resources.azure.com/*;*.azure.com/*;network.frontdoor.azure.com/FrontDoor"}),
        json!({"crdPattern": "resorces.azure.com/*; resources.azure.com ;keyvault.azure.com/;a/b/c;*"}),
        json!({"crdPattern": ".*/*;res*.azure.com/*;*frontdoor*/x;(resources).azure.com/*;[r]esources.azure.com/*;resources\\.azure.com/*"}),
        json!({"crdPattern": "quote\"d/x;tab\there/y;é.azure.com/x;\u{a0}nbsp/x;zero\u{200b}width/x;bom\u{feff}/x;\u{1F600}/x;del\u{7f}/x;nel\u{85}/x"}),
        json!({"crdPattern": ["resources.azure.com/*", 3, null, "x/y;  ; keyvault.azure.com/Vault", ""]}),
        json!({"crdPattern": "Resources.Azure.COM/*;resources.azure.co?/*;resources.azure.c?/*;KEYVAULT.azure.com/Vault;r??ources.azure.com/x"}),
        json!({"crdPattern": {"a": "b"}}),
        json!({"image": {"repository": "x/{{ .Values.azureClientSecret }}"}}),
        json!({"image": {"repository": "{{ .Values.YAML }}"}}),
        json!({"image": {"repository": "{{ .Values.image }}"}, "metrics": {"address": "{{ .Values.nodeSelector }}"}}),
        json!({"metrics": {"address": "{{ include \"x\" . }}:{{ .Values.metrics.port }}"}}),
        json!({"metrics": {"address": "{{- .Values.extraEnv -}}"}}),
        json!({"podLabels": {"control-plane": "x", "Bad Key": "v", "ok": "bad value!", "n": 1000000}}),
        json!({"nodeSelector": {"example.com/zone": "a", "-x": ""}}),
        json!({"podAnnotations": {"K\u{212a}/x": "v", "İ/y": "v", "big": big}}),
        json!({"deploymentAnnotations": {"a": big, "b": big}, "serviceAccount": {"annotations": {"UPPER/ok": "v"}}}),
    ]
}

/// What the evaluator gets from the guard's description on `case`.
fn evaluated(case: &Value) -> Vec<String> {
    let mut values = asogen::read::default_values();
    asogen::read::merge(&mut values, case);
    helm_values::merge::as_float64(&mut values);
    let capabilities = Capabilities::default();
    let scope = Scope {
        values: &values,
        namespace: "default",
        release_name: "release",
        release_service: "Helm",
        chart_name: asogen::names::CHART_NAME,
        chart_version: "0",
        app_version: "0",
        capabilities: &capabilities,
        is_secret: asogen::describe::IS_SECRET,
    };
    let guard = asogen::rules::guard::guard(asogen::names::CHART_NAME, &Catalog::builtin());
    match stmt::run(&guard, &scope) {
        Ok(None) => Vec::new(),
        Ok(Some(message)) => message.lines().map(String::from).collect(),
        Err(err) => panic!("{case}: the evaluator did not run the guard: {err}"),
    }
}

/// The values as YAML text that YAML readers take as written: JSON, with
/// every character past ASCII and DEL escaped (YAML refuses some raw).
fn yaml_text(case: &Value) -> String {
    let mut out = String::new();
    for c in case.to_string().chars() {
        match c as u32 {
            0x7f..=0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            0x10000.. => out.push_str(&format!("\\U{:08x}", c as u32)),
            _ => out.push(c),
        }
    }
    out
}

/// What Helm's `fail` reported, one line each; none when it rendered.
fn helm_reported(case: &Value, dir: &std::path::Path) -> Vec<String> {
    let file = dir.join("values.yaml");
    std::fs::write(&file, yaml_text(case)).unwrap();
    let out = helm_render(&[
        "template",
        &chart(),
        "--skip-schema-validation",
        "-f",
        file.to_str().unwrap(),
    ]);
    if out.status.success() {
        return Vec::new();
    }
    let stderr = text(&out.stderr);
    let start = stderr
        .find("values break ")
        .unwrap_or_else(|| panic!("{case}: Helm refused for another reason:\n{stderr}"));
    let mut lines: Vec<String> = stderr[start..].lines().map(String::from).collect();
    // The message has as many lines as its head counts, after the head.
    let count: usize = lines[0]
        .strip_prefix("values break ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{case}: {stderr}"));
    lines.truncate(count + 1);
    lines
}

#[test]
fn helm_and_the_evaluator_read_the_guard_alike() {
    let dir = tempfile::tempdir().unwrap();
    let mut refused = 0;
    let mut differences = Vec::new();
    for case in cases() {
        let ours = evaluated(&case);
        let helm = helm_reported(&case, dir.path());
        refused += usize::from(!helm.is_empty());
        if ours != helm {
            differences.push(format!(
                "{:.300}\n  evaluator: {ours:#?}\n  Helm: {helm:#?}",
                case.to_string()
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert!(refused >= 15, "only {refused} cases refused");
}
