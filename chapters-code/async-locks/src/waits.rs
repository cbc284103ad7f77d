//! Counting the waits of a run: the counters ([`Tally`], one per kind of wait), the
//! `std::sync::Mutex` lock that counts whether it was free, [`watch`], which counts
//! whether an `.await` had to wait, and what a run's counters read ([`Waits`]).

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Instant;

/// Locks a `std::sync::Mutex`, counting in [`LOCKS`] whether it was free: a `try_lock`
/// first (what `lock` does first anyway), and only if that fails a blocking `lock`,
/// timed into `blocked_ns`. A free lock reads no clock.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    LOCKS.calls.fetch_add(1, Ordering::Relaxed);
    match m.try_lock() {
        Ok(guard) => guard,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => {
            LOCKS.waited.fetch_add(1, Ordering::Relaxed);
            let t0 = Instant::now();
            let guard = m.lock().unwrap_or_else(PoisonError::into_inner);
            let blocked = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
            LOCKS.blocked_ns.fetch_add(blocked, Ordering::Relaxed);
            guard
        }
    }
}

/// How often one kind of wait happened in a run: `calls` made, how many of them could
/// not complete at their first poll (`waited`: the lock was taken, the channel full or
/// empty), and how many polls tokio refused because the task had spent its cooperative
/// budget (`refused`). The designs run one at a time in a worker process, so one set of
/// these counters serves every run; [`run_design`](crate::run_design) resets and reads them.
#[derive(Debug, Default)]
pub struct Tally {
    pub calls: AtomicU64,
    pub waited: AtomicU64,
    pub refused: AtomicU64,
    /// Polls of a tokio `lock()` that took the mutex and still returned *Pending*
    /// (see [`lock_tokio`]).
    pub held: AtomicU64,
    /// Time spent blocked in a std `lock()` that found the mutex taken (see [`lock`]).
    pub blocked_ns: AtomicU64,
}

impl Tally {
    const fn new() -> Tally {
        Tally {
            calls: AtomicU64::new(0),
            waited: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            held: AtomicU64::new(0),
            blocked_ns: AtomicU64::new(0),
        }
    }

    fn take(&self) -> Tallied {
        Tallied {
            calls: self.calls.swap(0, Ordering::Relaxed),
            waited: self.waited.swap(0, Ordering::Relaxed),
            refused: self.refused.swap(0, Ordering::Relaxed),
            held: self.held.swap(0, Ordering::Relaxed),
            blocked_ns: Some(self.blocked_ns.swap(0, Ordering::Relaxed)),
        }
    }
}

/// Locks of the shared start-time queue (std and tokio mutex alike).
pub static LOCKS: Tally = Tally::new();
/// Messages sent to the handler.
pub static SENDS: Tally = Tally::new();
/// Messages the handler waited for.
pub static RECEIVES: Tally = Tally::new();
/// Sleeps of the timeouts (`waited` is not kept: a sleep always waits).
pub static TIMERS: Tally = Tally::new();

// ANCHOR: watch
/// Awaits `fut` exactly as `.await` would, and counts in `tally` whether its first poll
/// had to wait and every poll made after the task's cooperative budget was spent.
pub async fn watch<F: Future>(tally: &Tally, fut: F) -> F::Output {
    tally.calls.fetch_add(1, Ordering::Relaxed);
    let mut fut = std::pin::pin!(fut);
    let mut first = true;
    std::future::poll_fn(|cx| {
        let budget_left = tokio::task::coop::has_budget_remaining();
        if !budget_left {
            tally.refused.fetch_add(1, Ordering::Relaxed);
        }
        let poll = fut.as_mut().poll(cx);
        if first && budget_left && poll.is_pending() {
            tally.waited.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
        poll
    })
    .await
}
// ANCHOR_END: watch

// ANCHOR: lock_tokio
/// Awaits `lock`, a `lock()` of the tokio mutex `m` (or the same out of the budget),
/// counting in [`LOCKS`] as the std mutex's [`lock`] does: a locking *found it taken*
/// when a `try_lock` just before its first poll failed (the probe's guard is dropped at
/// once, so `lock` itself is what takes the mutex). A poll made while the mutex was free
/// and the task's budget was spent that still returned *Pending* is counted in `held`:
/// tokio 1.54.1's `Acquire::poll` (`tokio/src/sync/batch_semaphore.rs`) takes the permit
/// in `poll_acquire` and only then asks `coop::poll_proceed` (`tokio/src/task/coop/mod.rs`),
/// which answers *Pending* once the budget is spent, so that `lock()` keeps the mutex
/// until its task is polled again. (Another thread taking the mutex between the probe and
/// the poll would be counted there too; the designs' other locker, the handler, locks
/// only after an expiry.)
pub async fn lock_tokio<'a, T, F>(m: &'a tokio::sync::Mutex<T>, lock: F) -> F::Output
where
    F: Future<Output = tokio::sync::MutexGuard<'a, T>>,
{
    LOCKS.calls.fetch_add(1, Ordering::Relaxed);
    let mut lock = std::pin::pin!(lock);
    let mut first = true;
    std::future::poll_fn(|cx| {
        let budget_left = tokio::task::coop::has_budget_remaining();
        if !budget_left {
            LOCKS.refused.fetch_add(1, Ordering::Relaxed);
        }
        let free = m.try_lock().is_ok();
        if first && !free {
            LOCKS.waited.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
        let poll = lock.as_mut().poll(cx);
        if free && !budget_left && poll.is_pending() {
            LOCKS.held.fetch_add(1, Ordering::Relaxed);
        }
        poll
    })
    .await
}
// ANCHOR_END: lock_tokio

/// One [`Tally`] after a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tallied {
    pub calls: u64,
    pub waited: u64,
    pub refused: u64,
    /// Polls that returned *Pending* holding the mutex (tokio's mutex only).
    #[serde(default)]
    pub held: u64,
    /// Nanoseconds blocked in a std `lock()` after its `try_lock` failed (std mutex
    /// only; `None` in records made before it was timed).
    #[serde(default)]
    pub blocked_ns: Option<u64>,
}

/// The waits of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waits {
    pub locks: Tallied,
    pub sends: Tallied,
    pub receives: Tallied,
    pub timers: Tallied,
}

impl Waits {
    /// Reads every counter and sets it back to zero.
    pub fn take() -> Waits {
        Waits {
            locks: LOCKS.take(),
            sends: SENDS.take(),
            receives: RECEIVES.take(),
            timers: TIMERS.take(),
        }
    }
}
