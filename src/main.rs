//! The `asogen` command: parses arguments and hands over to the library.

use clap::Parser;

/// mimalloc instead of the system allocator: rendering builds and drops many
/// small JSON values, and a third of `render`'s instructions went to glibc's
/// malloc and free (measured with callgrind; see bench/README.md). Built
/// with `no_thp`: with transparent huge pages its arenas doubled the peak
/// memory of a render (25 MiB instead of 13).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = asogen::cli::Cli::parse();
    std::process::ExitCode::from(asogen::cli::run(args))
}
