//! `asogen diff`: classification of changes between two artifact sets and
//! the release notes' "Upgrade notes".

use crate::common;

use std::path::Path;

use common::{asogen, root, text};
use serde_json::Value;

fn diff(old: &Path, new: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["diff", old.to_str().unwrap(), new.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = asogen(&args);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn changes(old: &Path, new: &Path) -> Vec<Value> {
    let (code, stdout, stderr) = diff(old, new, &["--format", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    serde_json::from_str::<Value>(&stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn titles(changes: &[Value], class: &str) -> Vec<String> {
    changes
        .iter()
        .filter(|c| c["class"] == class)
        .map(|c| c["title"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_2_10_to_2_13_topology_change_is_flagged_with_its_migration() {
    let old = root().join("tests/fixtures/diff/aso-2.10.yaml");
    let new = root().join("generated/manifests/ha.yaml");
    let all = changes(&old, &new);
    assert_eq!(
        titles(&all, "topology"),
        vec![
            "replicas 1 -> 2",
            "update strategy RollingUpdate -> Recreate",
            "leader election enabled"
        ]
    );
    let strategy = all
        .iter()
        .find(|c| c["title"] == "update strategy RollingUpdate -> Recreate")
        .unwrap();
    let migration = strategy["migration"].as_str().unwrap();
    assert!(migration.contains("server-side apply"), "{migration}");
    assert!(migration.contains("asogen upgrade-check"), "{migration}");
    assert!(
        migration.contains("/spec/strategy/rollingUpdate"),
        "{migration}"
    );
    // Version stamps are one line, not one per object.
    assert_eq!(
        titles(&all, "other")
            .iter()
            .filter(|t| t.starts_with("version "))
            .count(),
        1
    );

    let (code, markdown, _) = diff(&old, &new, &["--format", "markdown"]);
    assert_eq!(code, Some(0));
    assert!(markdown.starts_with("## Upgrade notes\n"), "{markdown}");
    assert!(markdown.contains("### Breaking and topology changes"));
    assert!(markdown.contains("- **replicas 1 -> 2**"));
    assert!(markdown.contains("- **update strategy RollingUpdate -> Recreate**"));
    assert!(markdown.contains("Why it matters: "));
    assert!(markdown.contains("Forbidden: may not be specified when strategy type is 'Recreate'"));

    let (code, human, _) = diff(&old, &new, &["--fail-on-breaking"]);
    assert_eq!(code, Some(1), "a gate fails on breaking changes");
    assert!(human.contains("TOPOLOGY"));
}

#[test]
fn identical_sets_have_no_changes() {
    let generated = root().join("generated");
    let (code, human, _) = diff(&generated, &generated, &["--fail-on-breaking"]);
    assert_eq!(code, Some(0));
    assert_eq!(human, "no changes\n");
    let (_, markdown, _) = diff(&generated, &generated, &["--format", "markdown"]);
    assert!(markdown.contains("No breaking or topology changes."));
}

fn edit_yaml(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_yaml::to_string(&value).unwrap()).unwrap();
}

#[test]
fn chart_values_interface_changes_are_breaking() {
    let dir = tempfile::tempdir().unwrap();
    let chart = root().join("generated/charts/azure-service-operator");
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    common::copy_dir(&chart, &old);
    common::copy_dir(&chart, &new);
    edit_yaml(&new.join("values.yaml"), |values| {
        let map = values.as_object_mut().unwrap();
        map.remove("azureSyncPeriod");
        let class = map.remove("priorityClassName").unwrap();
        map.insert("podPriorityClassName".into(), class);
        map.insert("replicaCount".into(), 1.into());
        map.insert("newSetting".into(), true.into());
        map.insert("azureClientSecret".into(), "s3cr3t-in-defaults".into());
        map.insert("azureClientSecret".into(), "s3cr3t-in-defaults".into());
    });
    let schema_path = new.join("values.schema.json");
    let mut schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    schema["required"] = serde_json::json!(["azureSubscriptionID"]);
    std::fs::write(&schema_path, serde_json::to_string(&schema).unwrap()).unwrap();

    let all = changes(&old, &new);
    assert_eq!(
        titles(&all, "topology"),
        vec!["default replicaCount 2 -> 1"]
    );
    let breaking = titles(&all, "breaking");
    assert!(
        breaking.contains(&"values key azureSyncPeriod removed".to_string()),
        "{breaking:?}"
    );
    assert!(
        breaking
            .contains(&"values key priorityClassName renamed to podPriorityClassName".to_string()),
        "{breaking:?}"
    );
    assert!(
        breaking.contains(&"azureSubscriptionID is now required".to_string()),
        "{breaking:?}"
    );
    assert!(
        titles(&all, "other").contains(&"values key newSetting added (default true)".to_string())
    );
    // A secret default never reaches the notes.
    assert!(
        titles(&all, "other")
            .contains(&"default azureClientSecret <redacted> -> <redacted>".to_string()),
        "{:?}",
        titles(&all, "other")
    );
    for format in ["human", "json", "markdown"] {
        let (_, out, _) = diff(&old, &new, &["--format", format]);
        assert!(!out.contains("s3cr3t"), "{format} output shows the secret");
    }
}

#[test]
fn rbac_narrowing_service_ports_and_removed_objects_are_breaking() {
    let dir = tempfile::tempdir().unwrap();
    let old = root().join("generated/manifests/ha.yaml");
    let source = std::fs::read_to_string(&old).unwrap();
    let mut objects: Vec<Value> = serde_yaml::Deserializer::from_str(&source)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect();
    for object in &mut objects {
        match object["kind"].as_str().unwrap() {
            "ClusterRole" => {
                // Drop `delete` from every rule.
                for rule in object["rules"].as_array_mut().unwrap() {
                    rule["verbs"]
                        .as_array_mut()
                        .unwrap()
                        .retain(|verb| verb != "delete");
                }
            }
            "Service" if object["metadata"]["name"] == "azureserviceoperator-webhook-service" => {
                object["spec"]["ports"][0]["port"] = 8443.into();
            }
            _ => {}
        }
    }
    objects.retain(|o| o["kind"] != "PodDisruptionBudget");
    let new = dir.path().join("ha.yaml");
    let stream: String = objects
        .iter()
        .map(|o| format!("---\n{}", serde_yaml::to_string(o).unwrap()))
        .collect();
    std::fs::write(&new, stream).unwrap();

    let breaking = titles(&changes(&old, &new), "breaking");
    assert_eq!(breaking.len(), 3, "{breaking:?}");
    assert!(
        breaking
            .iter()
            .any(|t| t.starts_with("RBAC narrowed: ") && t.contains("delete ")),
        "{breaking:?}"
    );
    assert!(
        breaking
            .iter()
            .any(|t| t.starts_with("Service ports 443->")),
        "{breaking:?}"
    );
    assert!(breaking.contains(
        &"PodDisruptionBudget azureserviceoperator-pdb is no longer installed".to_string()
    ));
    // And the reverse direction widens RBAC, which is not breaking.
    let reverse = changes(&new, &old);
    assert!(
        titles(&reverse, "other")
            .iter()
            .any(|t| t.starts_with("RBAC widened: "))
    );
}

#[test]
fn bad_sides_are_a_clear_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = root().join("generated/manifests/ha.yaml");

    let (code, _, err) = diff(&dir.path().join("missing"), &good, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("missing"), "{err}");

    let (code, _, err) = diff(dir.path(), &good, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is neither a generated/ folder"), "{err}");

    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "kind: Service\nmetadata: {name: [x\n").unwrap();
    let (code, _, err) = diff(&good, &broken, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("broken.yaml") && err.contains("line"), "{err}");

    let not_object = dir.path().join("values.yaml");
    std::fs::write(&not_object, "replicaCount: 2\n").unwrap();
    let (code, _, err) = diff(&good, &not_object, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a Kubernetes object"), "{err}");
}

/// Leader election is read from the manager's flags as Go's flag package
/// reads them: `-enable-leader-election=T` turns it on as the rendered
/// `--enable-leader-election` does, and a flag after a non-flag argument
/// is never parsed.
#[test]
fn leader_election_is_read_as_go_reads_the_flags() {
    let old = root().join("tests/fixtures/diff/aso-2.10.yaml");
    let rendered = std::fs::read_to_string(root().join("generated/manifests/ha.yaml")).unwrap();
    assert!(rendered.contains("- --enable-leader-election\n"));
    let dir = tempfile::tempdir().unwrap();
    let go_spelling = dir.path().join("go-spelling.yaml");
    std::fs::write(
        &go_spelling,
        rendered.replace(
            "- --enable-leader-election\n",
            "- -enable-leader-election=T\n",
        ),
    )
    .unwrap();
    let enabled = |new: &Path| {
        titles(&changes(&old, new), "topology")
            .iter()
            .any(|t| t == "leader election enabled")
    };
    assert!(enabled(&go_spelling));
    let unparsed = dir.path().join("unparsed.yaml");
    std::fs::write(
        &unparsed,
        rendered.replace(
            "- --enable-leader-election\n",
            "- --\n        - --enable-leader-election\n",
        ),
    )
    .unwrap();
    assert!(!enabled(&unparsed));
}
