//! The fast lane, one test binary: every integration test that runs asogen
//! and reads files, and nothing else (no Helm, kustomize, Go, kubectl, API
//! server, language server or ASO manager). A file in this folder is in
//! the lane; `cargo xtask fast` runs this binary with the unit tests, and
//! sets `ASOGEN_FAST_LANE`, under which the tests' one way to a tool
//! (tests/common) fails, so a test that starts needing one cannot stay
//! here unnoticed. One binary, as ripgrep's tests are: one link after a
//! change instead of one per file, and the files' tests run side by side.

#[path = "../common/mod.rs"]
mod common;
#[path = "../measure/mod.rs"]
mod measure;

mod bad_input;
mod bounded_reads;
mod catalog;
mod cli;
mod controller_interface;
mod diff;
mod docs;
mod fleet;
mod fuzz_corpus;
mod layout;
mod memory_limits;
mod narrowed_checker;
mod output;
mod quickstart;
mod secret_flags;
mod split_topology;
