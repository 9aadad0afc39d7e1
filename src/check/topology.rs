//! Values the chosen topology does not read: with `topology: split` each
//! Deployment's count and strategy come from its role's keys, so a
//! `replicaCount: 3` the user wrote would vanish without a word. It is
//! accepted (Helm reads it too, and ignores it), with a warning at the line
//! that set it naming the key that counts.

use crate::diagnostics::{Diagnostic, Severity};
use crate::keys::{self, Key};
use crate::read::Merged;
use crate::values::Topology;

/// The single topology's keys that split does not read, each with what
/// decides the same thing in split.
const UNREAD_IN_SPLIT: [(Key, &str); 3] = [
    (
        keys::REPLICA_COUNT,
        "the counts are split.controller.replicaCount and split.webhooks.replicaCount",
    ),
    (
        keys::STRATEGY,
        "the controller always uses Recreate and the webhooks RollingUpdate with maxUnavailable 0 (split.webhooks.maxSurge)",
    ),
    (
        keys::FEATURE_GATES_SINGLE_REPLICA_ROLLING_UPDATE,
        "the controller always uses Recreate; the webhooks roll without it",
    ),
];

/// A warning for each key the user set that the topology does not read.
pub fn unread_value_warnings(merged: &Merged) -> Vec<Diagnostic> {
    let topology = merged.value.get(keys::TOPOLOGY.path());
    if topology.and_then(|t| t.as_str()) != Some(Topology::Split.as_str()) {
        return Vec::new();
    }
    UNREAD_IN_SPLIT
        .iter()
        .filter(|(key, _)| merged.sets(&key.pointer()))
        .map(|&(key, instead)| {
            let mut d = merged.diagnostic(&key.pointer(), true);
            d.key = key.path().into();
            d.keyword = Some("topology".into());
            d.severity = Severity::Warning;
            d.message = format!(
                "{} has no effect with topology: split; {instead}",
                key.path()
            );
            d.help = Some(format!(
                "remove {}, or set the split's keys (docs/split-topology.md section 4)",
                key.path()
            ));
            d
        })
        .collect()
}
