//! The `asogen` command: parses arguments and hands over to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = asogen::cli::Cli::parse();
    ExitCode::from(asogen::cli::run(args))
}
