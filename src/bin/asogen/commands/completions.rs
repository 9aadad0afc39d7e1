//! `asogen completions SHELL`: the shell completion script, generated from
//! the same clap definitions as `--help`.

use std::io::Write;

use clap::CommandFactory;

use super::Status;
use crate::cli::Cli;
use asogen::output::Stdout;

/// Prints the completion script for `shell`.
pub fn run<W: Write>(shell: clap_complete::Shell, stdout: &mut Stdout<W>) -> Status {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "asogen", &mut script);
    stdout.print(String::from_utf8_lossy(&script));
    Status::Success
}
