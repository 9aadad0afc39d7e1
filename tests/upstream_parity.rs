//! asogen against the ASO 2.20.0 release as its chart renders it: every
//! variant of ../shared/upstream equal, except the differences listed (with
//! their reasons) in values/upstream-differences.yaml. Runs the shared
//! upstream-parity tool when the shared folder is there (it is on the
//! project's machines and in CI).

mod common;

use std::path::PathBuf;

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
    let differences = common::root().join("values/upstream-differences.yaml");
    // The tools venv has PyYAML, which the parity tool needs.
    let python = common::python_tools().join("python3");
    let out = common::tool(python)
        .arg(&tool)
        .args([
            "--bin",
            env!("CARGO_BIN_EXE_asogen"),
            "--json",
            "--differences",
        ])
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
}
