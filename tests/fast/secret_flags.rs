//! Secrets given on the command line are never printed: a generated corpus
//! of `--set` family flags that carry a secret (by a secret key anywhere,
//! nested, misspelt or cut; as an `extraEnv` entry's value; as a file's
//! content through `--set-file`), malformed in every way the flags can be
//! and well formed but failing a later check, goes through the real binary
//! (`validate` in every output format, `template`, `upgrade-check`), and
//! no output, standard output or error, holds any part of the secret.

use crate::common;

use std::path::Path;

use common::{asogen_in, root, text};
use serde_json::{Value, json};

/// Every secret below holds this; no output may.
const NEEDLE: &str = "ENTINEL";

/// Secret values, each with text that breaks the `--set` language or JSON
/// in its own way (a `,` starts another pair, `=`, brackets, a quote, a
/// backslash, blanks and `#`).
const SECRETS: [&str; 9] = [
    "qq1ENTINELa",
    "qq2ENTINELb,qq3ENTINELc",
    "k=qq4ENTINELd",
    r"qq5ENTINELe\,qq6ENTINELf",
    "[qq7ENTINELg",
    "{qq8ENTINELh",
    "qq9ENTINELi]",
    "p4ss #qqENTINELj",
    "\"qqENTINELk",
];

/// Key paths (in `--set` syntax) whose value is a secret: by name,
/// misspelt or cut, nested anywhere, and an `extraEnv` entry's value.
const SECRET_KEYS: [&str; 8] = [
    "azureClientSecret",
    "azureClientCertificatePassword",
    "azureClientCertificate",
    "azureClientSecert",
    "azureClientCert",
    "extraEnv[0].value",
    "podLabels.dbPassword",
    "nodeSelector.apiToken",
];

/// What follows a `key=secret` pair to break the expression after it, in
/// each of the ways Helm's parser refuses (the secret's text then sits
/// where Helm reads a key).
const BREAKERS: [&str; 8] = [
    "",
    ",oops",
    ",qqENTINELz",
    ",x[",
    ",qqENTINELy[-1]=1",
    ",qqENTINELx[abc]=1",
    ",l[0]qqENTINELw=1",
    ",qqENTINELv[99999999]=1",
];

/// A key path in `--set` syntax as the JSON object that sets it, with
/// `leaf` at its end.
fn as_json_object(path: &str, leaf: Value) -> Value {
    let mut value = leaf;
    for segment in path.rsplit('.') {
        value = match segment.split_once('[') {
            Some((key, _)) => json!({ key: [value] }),
            None => json!({ segment: value }),
        };
    }
    value
}

/// Ways to break a JSON text that holds a secret: cut it short at every
/// place after the secret starts, add junk, leave keys unquoted, spell a
/// key with a `\u` escape, and single quotes.
fn broken_json(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let start = text.find(NEEDLE).map_or(0, |at| at.saturating_sub(3));
    for cut in (start..text.len()).step_by(3) {
        if text.is_char_boundary(cut) {
            out.push(text[..cut].to_string());
        }
    }
    out.push(format!("{text} oops"));
    out.push(text.replacen('}', ", oops}", 1));
    out.push(text.replace('"', "'"));
    out.push(text.replacen(':', " ", 1));
    out.push(
        text.replace("Secret", "\\u0053ecret")
            .replace("Token", "\\u0054oken")
            + "x",
    );
    out.push(text.replace("\"value\"", "value"));
    out
}

/// One command line's `--set` family flags.
type Flags = Vec<(&'static str, String)>;

/// The generated corpus: each entry is the flags of one run.
fn corpus(dir: &Path) -> Vec<Flags> {
    let mut out: Vec<Flags> = Vec::new();
    let flags = ["--set", "--set-string", "--set-literal"];
    for (k, &key) in SECRET_KEYS.iter().enumerate() {
        for (s, &secret) in SECRETS.iter().enumerate() {
            for (b, breaker) in BREAKERS.iter().enumerate() {
                let flag = flags[(k + s + b) % flags.len()];
                out.push(vec![(flag, format!("{key}={secret}{breaker}"))]);
                if b % 2 == 0 {
                    out.push(vec![(
                        flag,
                        format!("replicaCount=1,{key}={secret}{breaker}"),
                    )]);
                }
            }
            // `--set-json key=JSON`: the value well formed, or not.
            let quoted = Value::from(secret).to_string();
            for json in [
                quoted.clone(),
                quoted[..quoted.len() - 1].to_string(),
                secret.to_string(),
                format!("[{quoted},"),
                format!("{{\"a\": {quoted}"),
                format!("{quoted} junk"),
            ] {
                out.push(vec![("--set-json", format!("{key}={json}"))]);
            }
            // `--set-json '{...}'`: the object well formed, and broken.
            let object = as_json_object(key, Value::from(secret));
            let text = object.to_string();
            out.push(vec![("--set-json", text.clone())]);
            for broken in broken_json(&text) {
                out.push(vec![("--set-json", broken)]);
            }
        }
    }
    // A whole extraEnv list with a secret value, as key=JSON and as an
    // object, broken at every place.
    let env = json!([{"name": "AZURE_CLIENT_SECRET", "value": "qqENTINEL,e=1"}]).to_string();
    out.push(vec![("--set-json", format!("extraEnv={env}"))]);
    for broken in broken_json(&env) {
        out.push(vec![("--set-json", format!("extraEnv={broken}"))]);
    }
    for broken in broken_json(
        &json!({ "extraEnv": serde_json::from_str::<Value>(&env).unwrap() }).to_string(),
    ) {
        out.push(vec![("--set-json", broken)]);
    }
    // `--set-file`: a file's content is a secret, whatever key it lands
    // on: every key of the chart's values, so every later check that may
    // quote a value sees one.
    let contents = [
        "qqENTINEL",
        "{{ .Values.qqENTINEL }} Upper_Case qqENTINEL/x,y;z",
        "-----BEGIN CERTIFICATE-----\nMIIqqENTINEL\n-----END CERTIFICATE-----\n",
    ];
    for (i, content) in contents.iter().enumerate() {
        std::fs::write(dir.join(format!("secret-{i}.txt")), content).unwrap();
    }
    for key in chart_keys() {
        for i in 0..contents.len() {
            out.push(vec![("--set-file", format!("{key}=secret-{i}.txt"))]);
        }
    }
    for key in [
        "podLabels.team",
        "podAnnotations.a",
        "nodeSelector.b",
        "serviceAccount.annotations.c",
        "crdPattern[0]",
    ] {
        for i in 0..contents.len() {
            out.push(vec![("--set-file", format!("{key}=secret-{i}.txt"))]);
        }
    }
    // Expressions that start with `-`: values of their flag, as in Helm,
    // not unknown arguments for the usage error to print.
    for flag in ["--set", "--set-string", "--set-literal", "--set-json"] {
        out.push(vec![(flag, "--azureClientSecret=qqENTINEL,x".to_string())]);
        out.push(vec![(flag, "-azureClientSecret=qqENTINEL".to_string())]);
        out.push(vec![(
            flag,
            r#"-{"azureClientSecret": "qqENTINEL"}"#.to_string(),
        )]);
    }
    // Well formed, with a secret key whose value a later check refuses,
    // and beside a malformed expression of another flag.
    for key in SECRET_KEYS {
        for value in [
            json!({"x": "qqENTINEL"}),
            json!(["qqENTINEL"]),
            json!("bad value qqENTINEL!"),
        ] {
            out.push(vec![(
                "--set-json",
                as_json_object(key, value.clone()).to_string(),
            )]);
            out.push(vec![
                ("--set-json", format!("{}={value}", key)),
                ("--set", "replicaCount=1,oops".into()),
            ]);
        }
    }
    out
}

/// Every scalar key of the chart's default values, in `--set` syntax.
fn chart_keys() -> Vec<String> {
    fn walk(value: &Value, path: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let key = key.replace('.', "\\.");
                    let child_path = if path.is_empty() {
                        key
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(child, &child_path, out);
                }
            }
            _ => out.push(path.to_string()),
        }
    }
    let values =
        std::fs::read_to_string(root().join("generated/charts/azure-service-operator/values.yaml"))
            .unwrap();
    let values: Value = serde_yaml::from_str(&values).unwrap();
    let mut out = Vec::new();
    walk(&values, "", &mut out);
    assert!(out.len() > 40, "{out:?}");
    out
}

#[test]
fn no_output_of_any_command_holds_a_secret_given_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    assert!(corpus.len() > 1500, "only {} cases", corpus.len());
    let live = root().join("tests/fixtures/upgrade/helm3.yaml");
    let live = live.to_str().unwrap();
    let commands: [&[&str]; 6] = [
        &["validate"],
        &["validate", "-o", "json"],
        &["validate", "-o", "github"],
        &["template"],
        &["upgrade-check", "--live", live],
        &["upgrade-check", "--live", live, "-o", "json"],
    ];
    // Each case through `validate` and one other command in turn (the
    // first ones through every command), on two threads.
    let runs: Vec<Vec<&str>> = corpus
        .iter()
        .enumerate()
        .flat_map(|(i, flags)| {
            let chosen = if i < 40 {
                commands.to_vec()
            } else {
                vec![commands[0], commands[1 + i % (commands.len() - 1)]]
            };
            chosen.into_iter().map(move |command| {
                let mut args: Vec<&str> = command.to_vec();
                for (flag, value) in flags {
                    args.push(flag);
                    args.push(value);
                }
                // A case that is valid after all would print the manifest,
                // which holds the secret by design: one more flag makes
                // every run fail.
                args.extend(["--set", "replicaCount=0"]);
                args
            })
        })
        .collect();
    let refused = runs.len();
    let leaks: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = runs
            .chunks(runs.len().div_ceil(2))
            .map(|chunk| {
                let dir = dir.path();
                scope.spawn(move || {
                    let mut leaks = Vec::new();
                    for args in chunk {
                        let out = asogen_in(dir, args);
                        let all = text(&out.stdout) + &text(&out.stderr);
                        assert!(
                            out.status.code().is_some_and(|code| code == 1 || code == 2),
                            "{args:?}: {all}"
                        );
                        if all.contains(NEEDLE) {
                            leaks.push(format!("{args:?}:\n{all}"));
                        }
                    }
                    leaks
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    });
    assert!(refused > 3000, "{refused}");
    assert!(
        leaks.is_empty(),
        "{} of {refused} runs printed a secret, e.g.:\n{}",
        leaks.len(),
        leaks
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

#[test]
fn a_redacted_expression_still_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = asogen_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        text(&out.stdout)
    };
    let out = run(&["validate", "--set", "azureClientSecret=qqENTINEL,x"]);
    assert!(
        out.contains(
            "--set `azureClientSecret=<redacted>`: not KEY=VALUE pairs: a key has no value"
        ),
        "{out}"
    );
    let out = run(&[
        "validate",
        "--set-json",
        r#"{"azureClientSecret": "qqENTINEL"#,
    ]);
    assert!(
        out.contains("--set-json `<redacted>`: not a JSON object: EOF while parsing a string at line 1 column"),
        "{out}"
    );
    // Without a secret, the expression and Helm's reason are shown whole.
    let out = run(&["validate", "--set", "replicaCount=1,oops"]);
    assert!(
        out.contains("--set `replicaCount=1,oops`: key `oops` has no value"),
        "{out}"
    );
}

/// A secret in a values file reached through a YAML alias is a secret
/// where it lands too: each secret key anchors each secret value, and an
/// alias carries it to keys whose checks quote what they refuse (an enum,
/// an integer, a label value, a map, an annotation, a list item), alone or
/// inside an anchored map or list. No output of `validate` (every format)
/// or `template` holds any part of it.
#[test]
fn no_output_holds_a_secret_that_an_alias_carries() {
    let dir = tempfile::tempdir().unwrap();
    // where the alias lands, as the lines that follow the anchor
    let landings: [&str; 8] = [
        "topology: *pw",
        "replicaCount: *pw",
        "podLabels:\n  team: *pw",
        "podAnnotations: *pw",
        "image:\n  tag: *pw",
        "strategy:\n  type: *pw",
        "nodeSelector: {a: [*pw]}",
        "tolerations:\n  - key: *pw\n    operator: *pw",
    ];
    let mut runs = 0;
    let mut leaks = Vec::new();
    for key in [
        "azureClientSecret",
        "azureClientSecert",
        "azureClientCertificatePassword",
    ] {
        for secret in SECRETS {
            for landing in landings {
                let quoted = serde_json::to_string(secret).unwrap();
                let values = format!("{key}: &pw {quoted}\n{landing}\nreplicaCount: 0\n")
                    // a landing that sets replicaCount itself keeps it
                    .replacen(
                        "replicaCount: *pw\nreplicaCount: 0\n",
                        "replicaCount: *pw\n",
                        1,
                    );
                let file = dir.path().join("values.yaml");
                std::fs::write(&file, &values).unwrap();
                for command in [
                    &["validate"][..],
                    &["validate", "-o", "json"],
                    &["validate", "-o", "github"],
                    &["template"],
                ] {
                    let mut args = command.to_vec();
                    args.extend(["-f", "values.yaml"]);
                    let out = asogen_in(dir.path(), &args);
                    let all = text(&out.stdout) + &text(&out.stderr);
                    runs += 1;
                    assert!(
                        out.status.code() == Some(1),
                        "{args:?} over {values:?} must fail (replicaCount 0 or the landing): {all}"
                    );
                    if all.contains(NEEDLE) {
                        leaks.push(format!("{args:?} over {values:?}:\n{all}"));
                    }
                }
            }
        }
    }
    assert!(runs >= 800, "{runs}");
    assert!(
        leaks.is_empty(),
        "{} of {runs} runs printed a secret, e.g.:\n{}",
        leaks.len(),
        leaks
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
