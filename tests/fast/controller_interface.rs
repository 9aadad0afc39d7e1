//! The controller's interface, as the catalog lists it: every argument
//! asogen renders, for every valid case and every profile, is a flag the
//! release's controller defines (any other makes it exit, so the pod would
//! crash-loop), and every environment variable it sets is one the release
//! sets.

use crate::common;

use asogen::catalog::Catalog;
use common::{Expect, asogen, cases, text};
use go_semantics::flag::name as flag_name;

/// The items of `field` (`args`, `env`) of every container of every
/// Deployment in a stream.
fn container_items(stream: &str, field: &str) -> Vec<serde_json::Value> {
    let mut items = Vec::new();
    for object in common::objects(stream).into_values() {
        if object["kind"] != "Deployment" {
            continue;
        }
        for container in object["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
        {
            items.extend(container[field].as_array().into_iter().flatten().cloned());
        }
    }
    items
}

fn unknown_flags(stream: &str) -> Vec<String> {
    let controller = &Catalog::builtin().controller;
    container_items(stream, "args")
        .iter()
        .map(|arg| arg.as_str().unwrap().to_string())
        .filter(|arg| !flag_name(arg).is_some_and(|flag| controller.defines(flag)))
        .collect()
}

#[test]
fn every_rendered_argument_is_a_flag_the_controller_defines() {
    let mut checked = 0;
    for (path, expect) in cases() {
        if expect != Expect::Valid {
            continue;
        }
        let out = asogen(&["template", "-f", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(
            unknown_flags(&text(&out.stdout)),
            Vec::<String>::new(),
            "{}",
            path.display()
        );
        checked += 1;
    }
    for entry in std::fs::read_dir(common::root().join("generated/manifests")).unwrap() {
        let stream = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert_eq!(unknown_flags(&stream), Vec::<String>::new());
        checked += 1;
    }
    assert!(checked > 10);
    // The check can fail: a flag the 2.20 controller lacks is caught.
    assert_eq!(
        unknown_flags(
            "kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - args: [--leader-lease-duration=15s, --v=2]\n"
        ),
        vec!["--leader-lease-duration=15s".to_string()]
    );
}

/// The names of the environment variables a Deployment sets, except those
/// the values add through `extraEnv`.
fn env_names(stream: &str, extra: &[String]) -> Vec<String> {
    container_items(stream, "env")
        .iter()
        .map(|var| var["name"].as_str().unwrap().to_string())
        .filter(|name| !extra.contains(name))
        .collect()
}

#[test]
fn every_rendered_environment_variable_is_one_the_release_sets() {
    let controller = Catalog::builtin().controller.clone();
    let mut checked = 0;
    for (path, expect) in cases() {
        if expect != Expect::Valid {
            continue;
        }
        let values: serde_json::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let extra: Vec<String> = values["extraEnv"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|var| Some(var["name"].as_str()?.to_string()))
            .collect();
        let out = asogen(&["template", "-f", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let names = env_names(&text(&out.stdout), &extra);
        assert!(!names.is_empty(), "{}", path.display());
        let unknown: Vec<_> = names
            .iter()
            .filter(|name| !controller.env.contains(name))
            .collect();
        assert!(unknown.is_empty(), "{}: {unknown:?}", path.display());
        checked += 1;
    }
    assert!(checked > 10);
}

#[test]
fn crd_labels_reach_only_a_controller_that_defines_the_flag() {
    // v2.20.0's controller has no --crd-labels: the value has no effect
    // rather than a crash-looping pod.
    assert!(!Catalog::builtin().controller.defines("crd-labels"));
    let dir = tempfile::tempdir().unwrap();
    let values = dir.path().join("values.yaml");
    std::fs::write(&values, "crdLabels: env=prod\n").unwrap();
    let out = asogen(&["template", "-f", values.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stream = text(&out.stdout);
    assert!(stream.contains("--crd-pattern="), "{stream}");
    assert!(!stream.contains("--crd-labels"), "{stream}");
    assert_eq!(unknown_flags(&stream), Vec::<String>::new());
    // Said, not silent: a warning at the key, and the values stay valid.
    let warning = text(&out.stderr);
    assert!(
        warning.contains("warning[controller]: crdLabels has no effect"),
        "{warning}"
    );
    assert!(warning.contains("values.yaml:1:12"), "{warning}");
    let out = asogen(&["validate", "-f", values.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("crdLabels has no effect"));
}
