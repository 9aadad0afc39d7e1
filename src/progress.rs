//! A one-line progress count on standard error for long runs over many
//! files (fleet mode), shown only when standard error is a terminal: a
//! pipe, a log or a test sees nothing of it.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often the line is redrawn at most.
const REDRAW: Duration = Duration::from_millis(100);

/// A count of `done` out of `total`, redrawn in place.
#[derive(Debug)]
pub struct Progress {
    what: &'static str,
    total: usize,
    done: AtomicUsize,
    /// When the line was last drawn; None while nothing was drawn.
    drawn: Mutex<Option<Instant>>,
    enabled: bool,
}

impl Progress {
    /// A counter for `total` items of `what` (e.g. "values files"), shown
    /// only on a terminal and only for more than one item.
    pub fn on_terminal(what: &'static str, total: usize) -> Progress {
        Progress::new(what, total, total > 1 && std::io::stderr().is_terminal())
    }

    fn new(what: &'static str, total: usize, enabled: bool) -> Progress {
        Progress {
            what,
            total,
            done: AtomicUsize::new(0),
            drawn: Mutex::new(None),
            enabled,
        }
    }

    /// One more item done (from any thread).
    pub fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.enabled {
            return;
        }
        // A busy lock means another thread is drawing: skip this tick,
        // but never the last, so the line ends at the total.
        let mut drawn = if done == self.total {
            self.drawn.lock().unwrap_or_else(|p| p.into_inner())
        } else {
            match self.drawn.try_lock() {
                Ok(drawn) => drawn,
                Err(_) => return,
            }
        };
        if drawn.is_none_or(|at| at.elapsed() >= REDRAW) || done == self.total {
            eprint!("\r{done}/{} {}", self.total, self.what);
            *drawn = Some(Instant::now());
        }
    }

    /// Clears the line, so the summary that follows starts clean.
    pub fn finish(&self) {
        let drawn = self.drawn.lock().unwrap_or_else(|p| p.into_inner());
        if self.enabled && drawn.is_some() {
            eprint!("\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_without_drawing_when_disabled() {
        let progress = Progress::new("files", 3, false);
        (0..3).for_each(|_| progress.tick());
        assert_eq!(progress.done.load(Ordering::Relaxed), 3);
        assert!(progress.drawn.lock().unwrap().is_none());
    }
}
