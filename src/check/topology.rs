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

/// What ASO does with the single-replica rolling shape (one replica,
/// RollingUpdate, in topology single, where leader election is always on):
/// a change that keeps its version rolls with webhooks up, but a version
/// upgrade does not finish, since the surge pod's CRD step waits for the
/// Lease the old pod holds (observed on ASO 2.20.0's manager;
/// docs/aso-facts.md F12). Accepted (the feature gate allows it), with
/// a warning at `strategy.type` saying what works.
pub fn rolling_upgrade_warnings(merged: &Merged) -> Vec<Diagnostic> {
    let text = |key: Key| {
        merged
            .value
            .pointer(&key.pointer())
            .and_then(|v| v.as_str())
    };
    let single = text(keys::TOPOLOGY).is_none_or(|t| t == Topology::Single.as_str());
    let rolling = text(keys::STRATEGY_TYPE) == Some("RollingUpdate");
    let one = merged
        .value
        .pointer(&keys::REPLICA_COUNT.pointer())
        .and_then(|v| v.as_f64())
        == Some(1.0);
    if !(single && rolling && one) {
        return Vec::new();
    }
    let pointer = keys::STRATEGY_TYPE.pointer();
    let mut d = merged.diagnostic(&pointer, false);
    d.key = keys::STRATEGY_TYPE.path().into();
    d.keyword = Some("upgrade".into());
    d.severity = Severity::Warning;
    d.message = "one replica with strategy.type RollingUpdate keeps webhooks up through changes that keep ASO's version, but a version upgrade does not finish: the new pod's CRD step waits for the leader-election Lease the old pod holds, so it never becomes Ready and maxUnavailable 0 never removes the old pod".into();
    d.help = Some("upgrade ASO's version with strategy.type: Recreate for that upgrade (webhooks are down while the new pod starts), or use topology: split, which keeps webhooks up through version upgrades; asogen upgrade-plan prints the steps".into());
    vec![d]
}
