//! Fleet mode: one values file per cluster, each checked (and rendered) on
//! top of shared values, on every core, every invalid file reported without
//! stopping the others. The only parallel part of asogen: one
//! `std::thread::scope` in [`parallel_map`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::check::Checker;
use crate::diagnostics::Diagnostic;
use crate::model::Model;
use crate::read::{self, LoadError, Source};

/// Maps `work` over `items` on `workers` threads (this one and helpers,
/// each taking the next item until none is left); results keep the input
/// order. A panic in a helper is passed on.
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

/// Checks one fleet file on top of the shared sources (`-f` files, then the
/// fleet file, then `--set`), and renders it with `render` when valid.
pub fn check_one<T>(
    checker: &Checker,
    shared_before: &[Source],
    shared_after: &[Source],
    file: &Path,
    namespace: &str,
    render: impl Fn(&Model) -> T,
) -> Result<T, Failed> {
    let source = read::read_source(file).map_err(|err| match err {
        LoadError::Io(diagnostics) => Failed {
            diagnostics,
            sources: Vec::new(),
            unreadable: true,
        },
        LoadError::Invalid(diagnostics) => Failed {
            diagnostics,
            sources: Vec::new(),
            unreadable: false,
        },
    })?;
    let mut sources = Vec::with_capacity(shared_before.len() + shared_after.len() + 1);
    sources.extend_from_slice(shared_before);
    sources.push(source);
    sources.extend_from_slice(shared_after);
    match checker.check(&sources, namespace) {
        Ok(model) => Ok(render(&model)),
        Err(diagnostics) => Err(Failed {
            diagnostics,
            sources,
            unreadable: false,
        }),
    }
}

/// A fleet: its values files and the values shared by all of them.
pub struct Fleet {
    /// The values files, one per cluster, in name order.
    pub files: Vec<PathBuf>,
    /// The entries named like values files that cannot be read (each is
    /// reported as a failed file that could not be read).
    pub unusable: Vec<output_folder::listing::Unusable>,
    /// Sources applied before each file (`-f`).
    pub before: Vec<Source>,
    /// Sources applied after each file (`--set`).
    pub after: Vec<Source>,
}

/// A file of the fleet that did not pass.
pub struct Failed {
    /// Every problem.
    pub diagnostics: Vec<Diagnostic>,
    /// The sources, for showing the offending lines (empty when the file
    /// did not parse).
    pub sources: Vec<Source>,
    /// The file could not be read at all.
    pub unreadable: bool,
}

/// Every file of a fleet, checked: the passed ones with what `render` made
/// of them, the failed ones with their problems, each in file order.
pub struct Tally<T> {
    /// The files that passed, with their output.
    pub passed: Vec<(PathBuf, T)>,
    /// The files that did not.
    pub failed: Vec<Failed>,
}

impl Fleet {
    /// How many entries the fleet has: its values files and the entries
    /// that cannot be read.
    pub fn len(&self) -> usize {
        self.files.len() + self.unusable.len()
    }

    /// Whether the fleet has no entry at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks every file on every core (with one checker, compiled once
    /// for the whole schema) and renders the valid ones with `render`
    /// (given the file and its model), as each passes: `render` writes its
    /// output away, so only one output per core is in memory at a time.
    /// The entries that cannot be read come first among the failed ones.
    pub fn check_all<T: Send>(
        &self,
        namespace: &str,
        render: impl Fn(&Path, &Model) -> T + Sync,
    ) -> Tally<T> {
        let checker = Checker::new();
        let progress = crate::progress::Progress::on_terminal("values files", self.files.len());
        let outcomes = parallel_map(&self.files, workers(), |file| {
            let outcome = check_one(
                &checker,
                &self.before,
                &self.after,
                file,
                namespace,
                |model| render(file, model),
            );
            progress.tick();
            outcome
        });
        progress.finish();
        let mut tally = Tally {
            passed: Vec::new(),
            failed: self
                .unusable
                .iter()
                .map(|entry| Failed {
                    diagnostics: vec![read::io_diagnostic(
                        &entry.path.display().to_string(),
                        format!("cannot read values file: {}", entry.reason),
                        "every *.yaml and *.yml entry of --values-dir must be a readable values file",
                    )],
                    sources: Vec::new(),
                    unreadable: true,
                })
                .collect(),
        };
        for (file, outcome) in self.files.iter().zip(outcomes) {
            match outcome {
                Ok(output) => tally.passed.push((file.clone(), output)),
                Err(failed) => tally.failed.push(failed),
            }
        }
        tally
    }

    /// Whether every values file has an output file of its own (see
    /// [`output_name`]); else the first name two files would both write
    /// (`a.yaml` and `a.yml`).
    pub fn check_output_names(&self) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        let unusable = self.unusable.iter().map(|entry| &entry.path);
        for file in self.files.iter().chain(unusable) {
            let name = output_name(file);
            if !seen.insert(name.clone()) {
                return Err(name);
            }
        }
        Ok(())
    }
}

/// The output file for a fleet values file: its stem plus `.yaml`.
pub fn output_name(file: &Path) -> String {
    format!("{}.yaml", output_folder::listing::stem(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_the_order_whatever_the_workers() {
        let items: Vec<u32> = (0..100).collect();
        for workers in [0, 1, 2, 7, 200] {
            assert_eq!(
                parallel_map(&items, workers, |i| i * 2),
                items.iter().map(|i| i * 2).collect::<Vec<_>>()
            );
        }
        assert!(parallel_map(&[] as &[u32], 4, |i| *i).is_empty());
    }

    #[test]
    fn two_files_with_one_stem_collide() {
        let fleet = |names: &[&str]| Fleet {
            files: names.iter().map(PathBuf::from).collect(),
            unusable: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
        };
        assert_eq!(fleet(&["d/a.yaml", "d/b.yml"]).check_output_names(), Ok(()));
        assert_eq!(
            fleet(&["d/a.yaml", "d/a.yml"]).check_output_names(),
            Err("a.yaml".into())
        );
    }
}
