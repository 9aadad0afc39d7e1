//! Which core a helper thread starts on.
//!
//! On the 2-core virtual machines render is measured on, Linux often
//! queues a new thread on the core of the thread that spawned it, where it
//! waits until the spawner is preempted or the load balancer moves it:
//! 1 to 3 ms later, in runs where a render takes 5. A helper that finds
//! itself on its spawner's core moves itself once to another core it may
//! use (a thread may always change its own affinity) and then allows
//! itself every core again, so the scheduler stays free to move it later.
//! Measured in bench/README.md: the helper then starts within about
//! 0.2 ms in every run.

/// Spawns `work` on a thread of `scope` that first leaves the spawner's
/// core (see the module). The spawner should call
/// `std::thread::yield_now()` once it has spawned its helpers, so that a
/// helper queued on its core gets to move at once.
pub fn spawn_elsewhere<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    work: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    let spawner_core = current();
    scope.spawn(move || {
        if let Some(core) = spawner_core {
            leave(core);
        }
        work()
    })
}

/// The core the calling thread runs on, where the platform says.
pub fn current() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        nix::sched::sched_getcpu().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Moves the calling thread off `core` if it runs there and may run on
/// another core; afterwards it may run on every core it could before.
/// Returns whether it moved.
pub fn leave(core: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
        use nix::unistd::Pid;
        if current() != Some(core) {
            return false;
        }
        let this_thread = Pid::from_raw(0);
        let Ok(allowed) = sched_getaffinity(this_thread) else {
            return false;
        };
        let mut elsewhere = CpuSet::new();
        let mut any = false;
        for other in (0..CpuSet::count()).filter(|&other| other != core) {
            if allowed.is_set(other) == Ok(true) && elsewhere.set(other).is_ok() {
                any = true;
            }
        }
        // Setting an affinity that excludes the current core moves the
        // thread before the call returns.
        let moved = any && sched_setaffinity(this_thread, &elsewhere).is_ok();
        if moved {
            let _ = sched_setaffinity(this_thread, &allowed);
        }
        moved
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = core;
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use nix::sched::{CpuSet, sched_getaffinity};
    use nix::unistd::Pid;

    fn allowed() -> Vec<usize> {
        let set = sched_getaffinity(Pid::from_raw(0)).unwrap();
        (0..CpuSet::count())
            .filter(|&core| set.is_set(core) == Ok(true))
            .collect()
    }

    #[test]
    fn leaving_moves_off_the_core_when_another_is_allowed_and_keeps_every_core_allowed() {
        let before = allowed();
        let core = super::current().expect("Linux reports the core");
        assert!(before.contains(&core));
        // Away from the core, leaving it is nothing to do; on it, it moves
        // when another core is allowed (the affinity call moves the thread
        // before it returns). The scheduler may move the thread between
        // reading its core and leaving it: a few tries make that moot.
        let away = (0..CpuSet::count()).find(|&other| other != core).unwrap();
        let tries = || {
            let here = super::current().unwrap();
            let not_there = here != away && !super::leave(away);
            not_there && super::leave(here) == (before.len() > 1)
        };
        assert!((0..3).any(|_| tries()));
        assert_eq!(allowed(), before, "every core is allowed again");
    }
}
