//! File names and values reach asogen, and the commands it prints, as the
//! caller meant them: a file named like a flag is a file (`-hvalues.yaml`
//! once read as -h, printed help and passed a CI check), standard input is
//! not promised twice, and a value in a printed `--set` sets only its key
//! (checked with Helm's own values code, tests/tools/strvals).

use crate::common;

use common::{asogen_in, helm_merge_values, text};
use serde_json::json;

const BAD: &str = "replicaCount: 3\nstrategy:\n  type: RollingUpdate\n";

/// Every way a file named like a flag can reach `validate`: after `--`,
/// after `-f`, as ./NAME; and without `--`, a usage error (exit 2), never
/// help and exit 0.
#[test]
fn a_file_named_like_a_flag_is_checked_or_refused_never_passed() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["-hvalues.yaml", "-Vvalues.yaml", "--help", "-h"] {
        std::fs::write(dir.path().join(name), BAD).unwrap();
        for args in [
            vec!["validate", "--", name],
            vec!["validate", "-f", name],
            vec!["validate", "--values", name],
        ] {
            let out = asogen_in(dir.path(), &args);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{args:?}: {}",
                text(&out.stdout)
            );
            assert!(
                text(&out.stdout).contains("ha-requires-recreate"),
                "{args:?}: {}",
                text(&out.stdout)
            );
        }
    }
    for cluster in ["-hvalues.yaml", "-Vvalues.yaml"] {
        let out = asogen_in(dir.path(), &["validate", cluster]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{cluster}: {}",
            text(&out.stdout)
        );
        let stderr = text(&out.stderr);
        // -h is help everywhere; -V is the version only before a command.
        if cluster.starts_with("-h") {
            assert!(
                stderr.contains(&format!("'{cluster}' reads as"))
                    && stderr.contains(&format!("asogen validate -- {cluster}")),
                "{stderr}"
            );
        }
        assert!(!text(&out.stdout).contains("Usage"), "help was printed");
    }
    // Help asked for plainly is still help.
    for args in [
        &["validate", "-h"][..],
        &["validate", "--help"],
        &["help", "validate"],
    ] {
        let out = asogen_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(text(&out.stdout).contains("Usage"), "{args:?}");
    }
}

/// `upgrade-plan` prints commands that read the values files again: a
/// file named like a flag is printed as ./NAME, and standard input, which
/// its commands would read empty, is refused with help.
#[test]
fn upgrade_plan_prints_files_its_commands_can_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("-hvalues.yaml"), "topology: split\n").unwrap();
    let out = asogen_in(
        dir.path(),
        &["upgrade-plan", "--via", "helm", "-f", "-hvalues.yaml"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let plan = text(&out.stdout);
    assert!(plan.contains(" -f ./-hvalues.yaml "), "{plan}");
    assert!(!plan.contains(" -f -hvalues.yaml"), "{plan}");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_asogen"))
        .args([
            "upgrade-plan",
            "--via",
            "helm",
            "--from",
            "single",
            "-f",
            "-",
        ])
        .current_dir(dir.path())
        .stdin(std::fs::File::open(dir.path().join("-hvalues.yaml")).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(out.stdout.is_empty(), "no plan is printed");
    assert!(
        text(&out.stderr).contains("help: save the values to a file"),
        "{}",
        text(&out.stderr)
    );
    // One step's objects read standard input once, as asked.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_asogen"))
        .args([
            "upgrade-plan",
            "--via",
            "helm",
            "-f",
            "-",
            "--manifest",
            "1",
        ])
        .current_dir(dir.path())
        .stdin(std::fs::File::open(dir.path().join("-hvalues.yaml")).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// The `--set-string` a Helm plan prints carries the image tag as text and
/// sets nothing else, as Helm's own values code reads it, whatever the tag
/// holds (commas, braces, backslashes, digits only).
#[test]
fn a_printed_set_sets_only_its_key_in_helm() {
    let dir = tempfile::tempdir().unwrap();
    let tags = [
        "v2.20.0,admissionPolicy.enable=false",
        "2200",
        "{a,b}",
        r"v\2,x=y\\",
        "v2.20.0",
    ];
    let mut cases = Vec::new();
    for tag in tags {
        let values = json!({"topology": "split", "image": {"tag": tag}});
        std::fs::write(dir.path().join("values.yaml"), values.to_string()).unwrap();
        let out = asogen_in(
            dir.path(),
            &["upgrade-plan", "--via", "helm", "-f", "values.yaml"],
        );
        assert_eq!(out.status.code(), Some(0), "{tag}: {}", text(&out.stderr));
        let plan = text(&out.stdout);
        let line = plan
            .lines()
            .find(|line| line.contains("--set-string"))
            .unwrap_or_else(|| panic!("{tag}: no --set-string in\n{plan}"));
        // The shell word after --set-string, as the shell reads it.
        let word = line.split("--set-string ").nth(1).unwrap();
        let word = if let Some(quoted) = word.strip_prefix('\'') {
            quoted[..quoted.find('\'').unwrap()].to_string()
        } else {
            word.split(' ').next().unwrap().to_string()
        };
        cases.push((tag, vec!["--set-string".to_string(), word]));
    }
    let answers = helm_merge_values(
        dir.path(),
        &cases
            .iter()
            .map(|(_, args)| args.clone())
            .collect::<Vec<_>>(),
    );
    for ((tag, args), answer) in cases.iter().zip(answers) {
        assert_eq!(
            answer["values"],
            json!({"split": {"webhooks": {"refreshToken": tag}}}),
            "{args:?}: Helm read {answer}"
        );
    }
}
