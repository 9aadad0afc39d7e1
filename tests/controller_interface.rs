//! The controller's interface: every argument asogen renders, for every
//! valid case and every profile, is a flag the release's controller defines
//! (any other makes it exit, so the pod would crash-loop).

mod common;

use asogen::catalog::CONTROLLER_FLAGS;
use common::{Expect, asogen, cases, text};

fn unknown_flags(stream: &str) -> Vec<String> {
    let mut unknown = Vec::new();
    for object in common::objects(stream).into_values() {
        if object["kind"] != "Deployment" {
            continue;
        }
        for container in object["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
        {
            for arg in container["args"].as_array().into_iter().flatten() {
                let arg = arg.as_str().unwrap();
                let flag = arg
                    .strip_prefix("--")
                    .map(|f| f.split('=').next().unwrap())
                    .unwrap_or(arg);
                if !CONTROLLER_FLAGS.contains(&flag) {
                    unknown.push(arg.to_string());
                }
            }
        }
    }
    unknown
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
