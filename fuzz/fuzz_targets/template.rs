//! A values file through to the install manifest (`asogen template`): when
//! the values are valid, rendering must not panic and the manifest must read
//! back (serde_yaml) as the same objects, each with `kind` and
//! `metadata.name`.
#![no_main]

use asogen::render::{self, objects};
use libfuzzer_sys::fuzz_target;
use serde::Deserialize as _;

#[path = "common.rs"]
mod common;

const NAMESPACE: &str = "azureserviceoperator-system";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(source) = asogen::read::parse_source("fuzz.yaml".into(), text.into()) else {
        return;
    };
    let Ok(model) = common::checker().check(&[source], NAMESPACE) else {
        return;
    };
    let manifest = render::manifest(&model, true, "");

    let mut read_back = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&manifest) {
        let value = serde_json::Value::deserialize(document).unwrap_or_else(|err| {
            panic!("the manifest is not valid YAML: {err}\n--- manifest ---\n{manifest}")
        });
        assert!(!value.is_null(), "an empty document in the manifest");
        assert!(
            value["kind"].as_str().is_some_and(|k| !k.is_empty()),
            "an object without kind: {value}"
        );
        assert!(
            value["metadata"]["name"].as_str().is_some_and(|n| !n.is_empty()),
            "an object without metadata.name: {value}"
        );
        read_back.push(value);
    }

    // The writer must be faithful: what YAML reads back is what was rendered.
    let mut expected = vec![objects::namespace(&model, objects::ASOGEN)];
    expected.extend(objects::objects(&model, objects::ASOGEN));
    assert_eq!(read_back.len(), expected.len(), "object count changed");
    for (got, want) in read_back.iter().zip(&expected) {
        if got != want {
            panic!(
                "the manifest reads back differently\n--- rendered ---\n{}\n--- read back ---\n{}",
                serde_json::to_string_pretty(want).unwrap(),
                serde_json::to_string_pretty(got).unwrap()
            );
        }
    }
});
