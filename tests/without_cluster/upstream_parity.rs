//! asogen against the ASO 2.20.0 release as its chart renders it: every
//! variant of tests/fixtures/upstream-2.20.0 equal, except the differences
//! listed (with their reasons) in values/upstream-differences.yaml, by the
//! upstream-parity tool (tests/tools/upstream-parity). The split topology,
//! which the release does not have, is one more variant
//! (tests/fixtures/upstream-split), compared with the release's defaults:
//! its differences must be the ones listed there and in
//! values/upstream-differences-split.yaml. Facts and tool are in the
//! repository, so the comparison runs wherever it is cloned.

use crate::common;

use std::path::Path;

/// The intended differences: the release's variants', then the split
/// topology's (which only the split variant can match).
const DIFFERENCES: [&str; 2] = [
    "values/upstream-differences.yaml",
    "values/upstream-differences-split.yaml",
];

/// The release's facts, in the repository.
const FACTS: &str = "tests/fixtures/upstream-2.20.0";
/// The comparison tool, in the repository.
const TOOL: &str = "tests/tools/upstream-parity";

#[test]
fn every_upstream_variant_is_rendered_as_released_or_as_listed() {
    let tool = common::root().join(TOOL);
    // The release's variants and the split's, as one list (two YAML
    // sequences written one after the other are one sequence).
    let mut listed = String::new();
    for file in DIFFERENCES {
        listed += &std::fs::read_to_string(common::root().join(file)).expect(file);
    }
    let scratch = tempfile::tempdir().expect("a scratch folder");
    let differences = scratch.path().join("differences.yaml");
    std::fs::write(&differences, listed).expect("the scratch folder takes a file");
    let upstream = common::root().join(FACTS);
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

/// Every file of `dir`, as paths below it, sorted.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).expect("a readable folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path.strip_prefix(dir).expect("below").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The facts and the tool were taken from the team's shared folder; where
/// it sits beside the repository, they are still the same bytes (the
/// fixture's README is the repository's own).
#[test]
fn the_facts_and_the_tool_are_the_shared_ones_where_those_are_here() {
    let shared = common::root().join("../shared");
    if !shared.is_dir() {
        // Nothing to hold them to: the copies in the repository are what
        // every other test reads.
        return;
    }
    let pairs = [
        (
            shared.join("tools/upstream-parity"),
            common::root().join(TOOL),
        ),
        (
            shared.join("upstream/aso-2.20.0"),
            common::root().join(FACTS),
        ),
    ];
    for (theirs, ours) in pairs {
        if theirs.is_file() {
            assert_eq!(
                std::fs::read(&theirs).unwrap(),
                std::fs::read(&ours).unwrap(),
                "{} differs from {}",
                ours.display(),
                theirs.display()
            );
            continue;
        }
        let listed: Vec<_> = files(&theirs);
        let kept: Vec<_> = files(&ours)
            .into_iter()
            .filter(|path| path != Path::new("README.md"))
            .collect();
        assert_eq!(kept, listed, "{} lists other files", ours.display());
        for path in listed {
            assert_eq!(
                std::fs::read(theirs.join(&path)).unwrap(),
                std::fs::read(ours.join(&path)).unwrap(),
                "{} differs",
                path.display()
            );
        }
    }
}
