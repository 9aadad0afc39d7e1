//! The `asogen` command, a crate of its own over the `asogen` library (as
//! cargo's binary sits over its library): [`cli`] holds each command's
//! arguments, [`config`] checks the flags that must agree, and
//! [`commands::run`] runs the command. Nothing of the library can reach
//! back into the command line.
#![deny(missing_docs, unsafe_code)]

mod cli;
mod commands;
mod config;

use std::process::ExitCode;

/// mimalloc instead of the system allocator: rendering builds and drops many
/// small JSON values, and a third of `render`'s instructions went to glibc's
/// malloc and free (measured with callgrind; see bench/README.md). Built
/// with `no_thp`: with transparent huge pages its arenas doubled the peak
/// memory of a render (25 MiB instead of 13).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = match cli::Cli::parse_operands(std::env::args_os())
        .and_then(|cli| cli.within_helm(|name| std::env::var(name).ok()))
    {
        Ok(args) => args,
        Err(err) => err.exit(),
    };
    match commands::run(args) {
        Ok(status) => ExitCode::from(status.exit_code()),
        Err(err) => {
            eprint!("{}", err.report());
            ExitCode::from(err.exit_code())
        }
    }
}
