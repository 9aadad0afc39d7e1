//! asogen against the ASO 2.20.0 release as its chart renders it: every
//! variant of ../shared/upstream equal, except the differences listed (with
//! their reasons) in values/upstream-differences.yaml. Runs the shared
//! upstream-parity tool when the shared folder is there (it is on the
//! project's machines and in CI). The split topology, which the release
//! does not have, is one more variant (tests/fixtures/upstream-split),
//! compared with the release's defaults: its differences must be the
//! ones listed there and in values/upstream-differences-split.yaml.

mod common;

use std::path::PathBuf;

/// The intended differences: the release's variants', then the split
/// topology's (which only the split variant can match).
const DIFFERENCES: [&str; 2] = [
    "values/upstream-differences.yaml",
    "values/upstream-differences-split.yaml",
];

fn tool() -> Option<PathBuf> {
    let tool = common::root().join("../shared/tools/upstream-parity");
    tool.exists().then_some(tool)
}

#[test]
fn every_upstream_variant_is_rendered_as_released_or_as_listed() {
    let Some(tool) = tool() else {
        eprintln!("../shared/tools/upstream-parity is not here; nothing to compare with");
        return;
    };
    // The release's variants and the split's, as one list (two YAML
    // sequences written one after the other are one sequence).
    let mut listed = String::new();
    for file in DIFFERENCES {
        listed += &std::fs::read_to_string(common::root().join(file)).expect(file);
    }
    let scratch = tempfile::tempdir().expect("a scratch folder");
    let differences = scratch.path().join("differences.yaml");
    std::fs::write(&differences, listed).expect("the scratch folder takes a file");
    let upstream = common::root().join("../shared/upstream/aso-2.20.0");
    let split = common::root().join("tests/fixtures/upstream-split");
    // The tools venv has PyYAML, which the parity tool needs.
    let python = common::python_tools().join("python3");
    let out = common::tool(python)
        .arg(&tool)
        .args(["--bin", env!("CARGO_BIN_EXE_asogen"), "--json", "--facts"])
        .arg(&upstream)
        .arg("--facts")
        .arg(&split)
        .arg("--differences")
        .arg(&differences)
        .output()
        .expect("the tools venv's python3 runs the parity tool");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        panic!(
            "the parity tool printed no JSON ({err}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let text = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "upstream-parity found differences:\n{}",
        text(&report)
    );
    let variants = report["variants"].as_array().expect("a list of variants");
    let status = |name: &str| {
        variants
            .iter()
            .find(|v| v["name"] == name)
            .map(|v| v["status"].clone())
    };
    assert_eq!(
        status("topology-split"),
        Some("ok".into()),
        "{}",
        text(&report)
    );
    // Every listed difference still happens somewhere (the split's only in
    // its variant), so none hides a change that went away.
    assert_eq!(report["summary"]["stale"], 0, "{}", text(&report["stale"]));
}
