//! The `asogen` command: parses arguments and hands over to the library.

use clap::Parser;

/// mimalloc instead of the system allocator: rendering builds and drops many
/// small JSON values, and a third of `render`'s instructions went to glibc's
/// malloc and free (measured with callgrind; see bench/README.md). Built
/// with `no_thp`: with transparent huge pages its arenas doubled the peak
/// memory of a render (25 MiB instead of 13).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args = asogen::cli::Cli::parse();
    let code = asogen::cli::run(args);
    exit_now(code)
}

/// Ends the process once the command is done: every file is written and
/// closed, standard output flushed and every thread joined by then.
/// Exiting at once skips the exit handlers, of which the allocator's walks
/// every page to hand it back to the kernel just before the kernel takes
/// the whole address space back anyway: 0.2 ms of a 6 ms render
/// (bench/README.md).
fn exit_now(code: u8) -> ! {
    // SAFETY: `_exit` takes any status and does not return; nothing of
    // this process is needed after it (see above).
    unsafe { libc::_exit(i32::from(code)) }
}
