//! The scheduler counters of one run, for the whole process.
//!
//! Context switches and CPU time come from [`harness::Counters::process`], which counts
//! every thread, including those that ended during the run. Run-queue delay (time a
//! thread was runnable but waited for a CPU) is kept per thread by Linux
//! (`/proc/self/task/<tid>/schedstat`) and leaves with a thread that ends, so here it
//! is summed per thread: for each thread alive at the end of the run, its delay since
//! the start of the run (all of it for a thread born during the run), plus the delay of
//! every thread that was born during the run and ended before its end, which those
//! threads add up themselves as they stop (tokio's worker threads through the
//! runtime's thread hooks, design 3's timer thread through [`spawn_counted`]). Where
//! the OS does not tell, the run-queue delay is `None`.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which run is under way; a thread born in one run and ended in the next adds
/// nothing, so no run is charged for another's thread.
static RUN: AtomicU64 = AtomicU64::new(0);
/// Run-queue delay of the threads born and ended in the current run, ns.
static ENDED_DELAY_NS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The run this thread was born in and its run-queue delay then.
    static BORN: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

/// This thread's run-queue delay so far (Linux builds only: the harness's `procfs`
/// reads no Linux file elsewhere, not even the host's that Wine shows a Windows build).
fn own_delay() -> Option<u64> {
    harness::procfs::run_delay_ns("/proc/thread-self/schedstat")
}

/// Marks the start of a run: threads born from now on belong to it.
pub fn new_run() {
    RUN.fetch_add(1, Ordering::Relaxed);
    ENDED_DELAY_NS.store(0, Ordering::Relaxed);
}

/// Called on a thread as it starts (a tokio runtime's `on_thread_start`).
pub fn thread_started() {
    let run = RUN.load(Ordering::Relaxed);
    BORN.with(|b| b.set(own_delay().map(|d| (run, d))));
}

/// Called on a thread as it stops (a tokio runtime's `on_thread_stop`).
pub fn thread_stopped() {
    let Some((run, at_birth)) = BORN.with(|b| b.take()) else {
        return;
    };
    if let Some(now) = own_delay()
        && run == RUN.load(Ordering::Relaxed)
    {
        ENDED_DELAY_NS.fetch_add(now.saturating_sub(at_birth), Ordering::Relaxed);
    }
}

/// `std::thread::spawn`, with the thread's run-queue delay counted in the run's
/// counters when it ends.
pub fn spawn_counted<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::spawn(move || {
        thread_started();
        let out = f();
        thread_stopped();
        out
    })
}

/// The process's counters at one instant.
pub struct Snapshot {
    process: harness::Counters,
    /// Run-queue delay per live thread, ns; `None` where the OS does not tell.
    by_thread: Option<HashMap<String, u64>>,
    ended_ns: u64,
}

/// The counters now.
pub fn counters() -> Snapshot {
    Snapshot {
        process: harness::Counters::process(),
        by_thread: by_thread(),
        ended_ns: ENDED_DELAY_NS.load(Ordering::Relaxed),
    }
}

fn by_thread() -> Option<HashMap<String, u64>> {
    let mut out = HashMap::new();
    for t in harness::procfs::entries("/proc/self/task")? {
        if let Some(d) = harness::procfs::run_delay_ns(t.join("schedstat")) {
            out.insert(t.to_string_lossy().into_owned(), d);
        }
    }
    (!out.is_empty()).then_some(out)
}

impl Snapshot {
    /// What happened between `before` and `self`.
    pub fn since(&self, before: &Snapshot) -> harness::Counters {
        let delay = match (&self.by_thread, &before.by_thread) {
            (Some(now), Some(then)) => Some(
                now.iter()
                    .map(|(tid, d)| d.saturating_sub(*then.get(tid).unwrap_or(&0)))
                    .sum::<u64>()
                    + self.ended_ns.saturating_sub(before.ended_ns),
            ),
            _ => None,
        };
        harness::Counters {
            run_delay_ns: delay,
            ..self.process.since(&before.process)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linux tells each thread's run-queue delay; no other build reads it.
    #[test]
    fn run_queue_delay_is_read_on_linux_only() {
        let (a, b) = (counters(), counters());
        let delay = b.since(&a).run_delay_ns;
        assert_eq!(delay.is_some(), cfg!(target_os = "linux"), "{delay:?}");
    }
}
