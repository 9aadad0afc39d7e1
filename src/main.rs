//! The `asogen` command: parses arguments and hands over to the library.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of the system allocator: rendering builds and drops many
/// small JSON values, and a third of `render`'s instructions went to glibc's
/// malloc and free (measured with callgrind; see bench/README.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = asogen::cli::Cli::parse();
    ExitCode::from(asogen::cli::run(args))
}
