//! The integration tests that run real tools but start no cluster: the
//! Helm engine and CLI, Helm's own Go code, the language server, checkov
//! and the upstream release's render, each against asogen's output; one
//! test binary, as the fast lane is (`tests/fast/`). The tests that start
//! an API server stay one binary per file: each owns its process's API
//! server and control plane (`tests/rollout/cluster.rs`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../measure/mod.rs"]
mod measure;

mod chart_injection;
mod file_operands;
mod helm_flags;
mod names;
mod null_meaning;
mod output_reads;
mod release;
mod security;
mod set_strvals;
mod show;
mod tpl_meaning;
mod upstream_parity;
mod yaml11;
