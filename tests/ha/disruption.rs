//! The two disruptions of I4 (docs/split-topology.md section 2): a drain
//! as an administrator runs it (the real `kubectl drain`: cordon, then the
//! Eviction API for each pod, which the API server refuses with 429 while
//! a PodDisruptionBudget allows no disruption, retried every 5 s), and the
//! loss of a node.

use serde_json::Value;

use crate::common::apiserver::ApiServer;
use crate::common::text;

/// What the drains did.
#[derive(Debug, Default)]
pub struct Drained {
    /// Evictions the API server refused for a disruption budget (each
    /// retry counts).
    pub refused: usize,
    /// Whether every `kubectl drain` finished (all its pods evicted and
    /// gone within its timeout).
    pub finished: bool,
    /// What kubectl printed on stderr, for messages.
    pub stderr: String,
}

/// The line kubectl prints for each refused eviction ends with the API
/// server's reason, which names the budget.
const REFUSED_FOR_BUDGET: &str = "violate the pod's disruption budget";

/// Drains `nodes` at once, one `kubectl drain` each (as a node pool
/// upgrade draining several nodes, or two administrators, would).
pub fn drain(server: &ApiServer, nodes: &[String]) -> Drained {
    let outputs: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = nodes
            .iter()
            .map(|node| {
                s.spawn(move || {
                    server.kubectl(
                        &[
                            "drain",
                            node,
                            "--ignore-daemonsets",
                            "--delete-emptydir-data",
                            "--timeout=60s",
                        ],
                        "",
                    )
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut drained = Drained {
        finished: true,
        ..Drained::default()
    };
    for out in outputs {
        let stderr = text(&out.stderr);
        drained.refused += stderr
            .lines()
            .filter(|l| l.contains(REFUSED_FOR_BUDGET))
            .count();
        drained.finished &= out.status.success();
        drained.stderr.push_str(&stderr);
    }
    drained
}

/// Loses `node`: its kubelet reports it NotReady and it is cordoned, and
/// every pod of `namespace` on it is deleted at once, with no grace (what
/// the node lifecycle and pod garbage collection end in, minutes later on
/// a real cluster). Returns the pods deleted.
pub fn lose(server: &ApiServer, namespace: &str, node: &str) -> Vec<String> {
    server.kubectl_ok(&["cordon", node], "");
    let not_ready = serde_json::json!({"status": {"conditions": [{
        "type": "Ready",
        "status": "False",
        "reason": "NodeLost",
        "message": "the node was lost (tests/ha.rs)",
    }]}});
    server.kubectl_ok(
        &[
            "patch",
            "node",
            node,
            "--subresource=status",
            "--type=strategic",
            "-p",
            &not_ready.to_string(),
        ],
        "",
    );
    let pods = pods_on(server, namespace, node);
    if !pods.is_empty() {
        let mut args = vec![
            "delete",
            "pods",
            "-n",
            namespace,
            "--grace-period=0",
            "--force",
            "--wait=false",
        ];
        args.extend(pods.iter().map(String::as_str));
        // kubectl warns that a forced deletion may leave the container running
        let out = server.kubectl(&args, "");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            text(&out.stderr)
        );
    }
    pods
}

/// The names of the pods of `namespace` bound to `node`.
fn pods_on(server: &ApiServer, namespace: &str, node: &str) -> Vec<String> {
    let selector = format!("spec.nodeName={node}");
    let out = server.kubectl_ok(
        &[
            "get",
            "pods",
            "-n",
            namespace,
            "--field-selector",
            &selector,
            "-o",
            "json",
        ],
        "",
    );
    let list: Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}
