//! Fleet mode: one values file per cluster, checked or rendered on every
//! core, every invalid file reported without stopping the others.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::diagnostics::Diagnostic;
use crate::load::{self, Checker, LoadError, Source};

/// Maps `work` over `items` on `workers` threads (this one and helpers);
/// results keep the input order.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let workers = workers.clamp(1, items.len().max(1));
    let work_through = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                break done;
            };
            done.push((index, work(item)));
        }
    };
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(work_through)).collect();
        let mut results = work_through();
        for helper in helpers {
            let done = helper
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            results.extend(done);
        }
        results
    });
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

/// The cores to use.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What happened to one file of the fleet.
pub enum Outcome<T> {
    /// Valid; the rendered output (or `()` for validate).
    Ok(T),
    /// The file (or a shared `-f`/`--set` source) is invalid.
    Invalid {
        /// Every problem.
        diagnostics: Vec<Diagnostic>,
        /// The sources, for showing the offending lines.
        sources: Vec<Source>,
    },
    /// The file could not be read.
    Unreadable(Vec<Diagnostic>),
}

/// Checks one fleet file on top of the shared sources (`-f` files, then the
/// fleet file, then `--set`), and renders it with `render` when valid.
pub fn check_one<T>(
    checker: &Checker,
    shared_before: &[Source],
    shared_after: &[Source],
    file: &Path,
    namespace: &str,
    render: impl Fn(&crate::model::Model) -> T,
) -> Outcome<T> {
    let source = match load::read_source(file) {
        Ok(source) => source,
        Err(LoadError::Io(diagnostics)) => return Outcome::Unreadable(diagnostics),
        Err(LoadError::Invalid(diagnostics)) => {
            return Outcome::Invalid {
                diagnostics,
                sources: Vec::new(),
            };
        }
    };
    let mut sources = Vec::with_capacity(shared_before.len() + shared_after.len() + 1);
    sources.extend_from_slice(shared_before);
    sources.push(source);
    sources.extend_from_slice(shared_after);
    match checker.check(&sources, namespace) {
        Ok(model) => Outcome::Ok(render(&model)),
        Err(diagnostics) => Outcome::Invalid {
            diagnostics,
            sources,
        },
    }
}

/// The output file for a fleet values file: its stem plus `.yaml`.
pub fn output_name(file: &Path) -> String {
    format!("{}.yaml", crate::files::stem(file))
}
