//! The hazards: arms that do what the advice warns against (a std mutex guard held
//! across an `.await`, a long critical section under the std mutex) and their control,
//! each run on a thread and runtime of its own so that one that deadlocks can be left
//! behind at its bound.

use crate::designs::Starts;
use crate::run::Flavour;
use crate::timeout::{Sample, Timeout};
use crate::waits::{Tallied, Waits, lock};
use futures_util::FutureExt;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

// ANCHOR: long_section
/// Design 1 with a long critical section: each callback holds the std mutex while it
/// spins for `work` of wall time (on the clock: busy, no sleep), as a callback that did
/// real work under the lock would. With `lock: false` the same work runs unlocked.
/// Each callback also returns when its work ran and, after its sample, its thread.
pub async fn long_section(
    n: usize,
    after: Duration,
    work: Duration,
    lock: bool,
    handled: Arc<AtomicU64>,
) -> Vec<Callback> {
    let starts: Starts = Arc::new(Mutex::new(VecDeque::with_capacity(n)));
    let timeouts = (0..n).map(|_| {
        let (starts, handled) = (Arc::clone(&starts), Arc::clone(&handled));
        async move {
            let start = Instant::now();
            let timeout = Timeout::new(after);
            let task = tokio::spawn(async move {
                timeout.expire().await;
                let guard = lock.then(|| self::lock(&starts));
                let began = Instant::now();
                spin_for(work);
                let worked = (began, Instant::now());
                drop(guard);
                handled.fetch_add(1, Ordering::Relaxed);
                let due = timeout.deadline();
                let sample = Sample::new(start, due, None, Instant::now());
                let thread = std::thread::current().id();
                Callback {
                    sample,
                    thread,
                    worked,
                    due,
                }
            });
            task.await.ok()
        }
    });
    join_all(timeouts).await.into_iter().flatten().collect()
}
// ANCHOR_END: long_section

/// One callback of a long section: its sample, the thread it ran on, and when its work
/// began and ended.
#[derive(Debug, Clone)]
pub struct Callback {
    pub sample: Sample,
    pub thread: ThreadId,
    pub worked: Worked,
    /// When its timeout was due.
    pub due: Instant,
}

/// How many callbacks worked at once, on average over the time any worked: their work
/// summed, over the length of the union of their work intervals. 1 when they ran one
/// at a time (as under the lock), up to the worker count when all ran side by side.
/// `None` for fewer than two callbacks.
pub fn at_once(worked: &[Worked]) -> Option<f64> {
    let (total, span) = (work_total(worked), spans(worked)?);
    (worked.len() > 1 && !span.union.is_zero())
        .then(|| total.as_secs_f64() / span.union.as_secs_f64())
}

/// The callbacks' work intervals taken together: the first start, the last end, and the
/// length of their union (the time any worked).
struct Spans {
    first: Instant,
    last: Instant,
    union: Duration,
}

fn spans(worked: &[Worked]) -> Option<Spans> {
    let mut v = worked.to_vec();
    v.sort_unstable();
    let first = v.first()?.0;
    let (mut union, mut reach) = (Duration::ZERO, first);
    for (a, b) in v {
        union += b.saturating_duration_since(a.max(reach));
        reach = reach.max(b);
    }
    Some(Spans {
        first,
        last: reach,
        union,
    })
}

/// Every callback's work on the clock, summed.
fn work_total(worked: &[Worked]) -> Duration {
    worked
        .iter()
        .map(|(a, b)| b.saturating_duration_since(*a))
        .sum()
}

/// What `at_once` cannot see: how long after the first timeout was due the first
/// callback began, and how long no callback worked between the first start and the
/// last end (the span less the union of the work intervals). `None` without callbacks.
pub fn late_and_idle(
    worked: &[Worked],
    first_due: Option<Instant>,
) -> Option<(Duration, Duration)> {
    let s = spans(worked)?;
    let idle = s
        .last
        .saturating_duration_since(s.first)
        .saturating_sub(s.union);
    Some((s.first.saturating_duration_since(first_due?), idle))
}

/// The callbacks' work on the clock over the work asked of them: 1 when every spin
/// ended on time; above 1 when spins ran past their time because their thread was off
/// its CPU as the time ran out (waiting for a CPU, or the host's). `None` without any.
pub fn stretch(worked: &[Worked], work: Duration) -> Option<f64> {
    let asked = work.as_secs_f64() * worked.len() as f64;
    (asked > 0.0).then(|| work_total(worked).as_secs_f64() / asked)
}

/// What the guard arm counts as it happens, so that a stalled run has its counts too:
/// expiries handled, and callbacks that came due while the guard was held.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub handled: Arc<AtomicU64>,
    pub overlapped: Arc<AtomicU64>,
}

/// How long past the timeouts' deadline the guard-across-`.await` arm's reporter holds
/// the guard: every callback is due while it is held.
/// 5 ms was too short on a loaded 2-CPU VM: a thread woken 5 ms late fired the
/// reporter's timer with the callbacks', and the reporter let go first (no overlap).
pub const HOLD_PAST: Duration = Duration::from_millis(20);

/// Busy for `d` on this thread (the clock read in a loop).
pub fn spin_for(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

// ANCHOR: across_await
/// Design 1 plus a reporter holding the queue's std guard from before any deadline to
/// `HOLD_PAST` after them, across an `.await`. A callback due meanwhile counts itself.
#[allow(clippy::await_holding_lock)] // on purpose: this lint flags exactly the hazard
pub async fn guard_across_await(n: usize, after: Duration, counts: Counts) -> Vec<Sample> {
    let starts: Starts = Arc::new(Mutex::new(VecDeque::with_capacity(n)));
    let held = Arc::new(AtomicBool::new(false));
    let timeouts: Vec<_> = (0..n)
        .map(|_| {
            let (starts, held, counts) = (Arc::clone(&starts), Arc::clone(&held), counts.clone());
            async move {
                let start = Instant::now();
                lock(&starts).push_back(start);
                let timeout = Timeout::new(after);
                let task = tokio::spawn(async move {
                    timeout.expire().await;
                    let due_while_held = u64::from(held.load(Ordering::Acquire));
                    counts
                        .overlapped
                        .fetch_add(due_while_held, Ordering::Relaxed);
                    let fifo_start = lock(&starts).pop_front();
                    counts.handled.fetch_add(1, Ordering::Relaxed);
                    Sample::new(start, timeout.deadline(), fifo_start, Instant::now())
                });
                task.await.ok()
            }
            .boxed_local()
        })
        .collect();
    // Polled after every timeout above has pushed its start (`join_all` polls in order).
    let reporter = async move {
        let queue = lock(&starts); // the guard, taken before any deadline ...
        held.store(true, Ordering::Release);
        tokio::time::sleep(after + HOLD_PAST).await; // ... held across an await past them
        held.store(false, Ordering::Release);
        drop(queue);
        None
    };
    let all = join_all(timeouts.into_iter().chain([reporter.boxed_local()])).await;
    all.into_iter().flatten().collect()
}
// ANCHOR_END: across_await

/// The hazards: arms that do what the advice warns against, each on its own thread and
/// runtime so that one that deadlocks can be left behind at its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hazard {
    /// Design 1 plus a std mutex guard held across an `.await` ([`guard_across_await`]).
    /// On the multi-thread runtime the reporter runs on the `block_on` thread, which only
    /// parks (`CachedParkThread::block_on`, `tokio/src/runtime/park.rs`, 1.54.1); the
    /// workers drive the timer when they park (`Parker::park`,
    /// `tokio/src/runtime/scheduler/multi_thread/park.rs`). A worker blocked in a callback
    /// drives nothing, so once all are, the reporter's sleep never ends.
    GuardAcrossAwait,
    /// Design 1's callback working for the critical section's length under the std mutex.
    LongUnderLock,
    /// The same work with no lock: the control. It runs callbacks side by side only if
    /// more than one worker gets them. In tokio 1.54.1 a task the timer wakes goes to the
    /// queue (or LIFO slot) of the worker that drove the timer (`schedule_local`), which
    /// notifies another worker only once its park ends (`park_internal`,
    /// `should_notify_others`; all in `tokio/src/runtime/scheduler/multi_thread/worker.rs`);
    /// that worker then steals. Which threads ran the callbacks is recorded per run.
    LongNoLock,
}

impl Hazard {
    pub const ALL: [Hazard; 3] = [
        Hazard::GuardAcrossAwait,
        Hazard::LongUnderLock,
        Hazard::LongNoLock,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Hazard::GuardAcrossAwait => "guard held across .await",
            Hazard::LongUnderLock => "long section, std mutex",
            Hazard::LongNoLock => "long section, no lock",
        }
    }
}

/// One hazard run: what was handled by the bound, and whether it stopped there.
#[derive(Debug, Clone)]
pub struct HazardRun {
    pub samples: Vec<Sample>,
    /// Expiries handled (counted as they happen, so a stalled run has a count too).
    pub handled: u64,
    /// Callbacks that came due while the reporter held the guard across its `.await`
    /// (the guard arm only; counted as they happen).
    pub overlapped: u64,
    /// The run had not finished at its bound and was left behind.
    pub stalled: bool,
    pub wall: Duration,
    pub locks: Tallied,
    /// Callbacks each thread ran, most first (the long sections only; empty otherwise).
    pub per_thread: Vec<u64>,
    /// How many callbacks worked at once, on average ([`at_once`]; long sections only).
    pub at_once: Option<f64>,
    /// The runtime's worker threads (`RuntimeMetrics::num_workers`; 1 on the
    /// current-thread runtime, whose one thread is the `block_on` thread).
    pub workers: usize,
    /// From the first timeout due to the first callback's work, and the time no callback
    /// worked between the first start and the last end ([`late_and_idle`]).
    pub late_and_idle: Option<(Duration, Duration)>,
    /// The callbacks' work on the clock over the work asked ([`stretch`]).
    pub stretch: Option<f64>,
}

/// When a callback's work began and ended.
pub type Worked = (Instant, Instant);

/// A long section's callbacks as samples, and each one's thread and work interval.
fn split(callbacks: Vec<Callback>) -> (Vec<Sample>, Vec<(ThreadId, Worked, Instant)>) {
    callbacks
        .into_iter()
        .map(|c| (c.sample, (c.thread, c.worked, c.due)))
        .unzip()
}

/// How many callbacks each thread ran, most first.
pub fn callbacks_per_thread(threads: impl Iterator<Item = ThreadId>) -> Vec<u64> {
    let mut counts: Vec<(ThreadId, u64)> = Vec::new();
    for t in threads {
        match counts.iter_mut().find(|(id, _)| *id == t) {
            Some((_, k)) => *k += 1,
            None => counts.push((t, 1)),
        }
    }
    let mut v: Vec<u64> = counts.into_iter().map(|(_, k)| k).collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

/// Runs a hazard with `n` timeouts on a fresh runtime of `flavour` in a thread of its
/// own; waits for it until `give_up` and no longer. A run still going then (a
/// deadlock: its threads wait on a lock nobody will release) is left behind, blocked,
/// until the worker process ends with its round; it takes no CPU.
pub fn run_hazard(
    hazard: Hazard,
    flavour: Flavour,
    n: usize,
    after: Duration,
    work: Duration,
    give_up: Instant,
) -> anyhow::Result<HazardRun> {
    let handled = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&handled);
    let guard_counts = Counts {
        handled: Arc::clone(&handled),
        overlapped: Arc::new(AtomicU64::new(0)),
    };
    let overlapped = Arc::clone(&guard_counts.overlapped);
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = Waits::take();
    // The run's clock starts once its thread and runtime exist, as `run_design`'s does:
    // building them is not part of what the hazard costs.
    let started = Arc::new(std::sync::OnceLock::new());
    let start = Arc::clone(&started);
    let spawned = Instant::now();
    std::thread::Builder::new()
        .name("hazard".into())
        .spawn(move || {
            let Ok(rt) = flavour.runtime() else { return };
            // tokio 1.54.1: `tokio/src/runtime/metrics/runtime.rs`, `num_workers`.
            let workers = rt.metrics().num_workers();
            let _ = start.set(Instant::now());
            let (samples, callbacks) = rt.block_on(async move {
                let long = |lock| long_section(n, after, work, lock, count);
                match hazard {
                    Hazard::GuardAcrossAwait => {
                        (guard_across_await(n, after, guard_counts).await, Vec::new())
                    }
                    Hazard::LongUnderLock => split(long(true).await),
                    Hazard::LongNoLock => split(long(false).await),
                }
            });
            let end = Instant::now();
            let per_thread = callbacks_per_thread(callbacks.iter().map(|c| c.0));
            let worked: Vec<_> = callbacks.iter().map(|c| c.1).collect();
            let gaps = late_and_idle(&worked, callbacks.iter().map(|c| c.2).min());
            let stretched = stretch(&worked, work);
            let at = at_once(&worked);
            let _ = tx.send((samples, per_thread, at, workers, end, gaps, stretched));
            rt.shutdown_timeout(Duration::from_millis(100));
        })?;
    let left = give_up.saturating_duration_since(Instant::now());
    let (samples, per_thread, at_once, workers, stalled, end, late_and_idle, stretch) =
        match rx.recv_timeout(left) {
            Ok((s, t, a, w, end, g, x)) => (s, t, a, w, false, end, g, x),
            Err(_) => (
                Vec::new(),
                Vec::new(),
                None,
                0,
                true,
                Instant::now(),
                None,
                None,
            ),
        };
    let run = HazardRun {
        samples,
        handled: handled.load(Ordering::Relaxed),
        overlapped: overlapped.load(Ordering::Relaxed),
        stalled,
        wall: end.saturating_duration_since(started.get().copied().unwrap_or(spawned)),
        locks: Waits::take().locks,
        per_thread,
        at_once,
        workers,
        late_and_idle,
        stretch,
    };
    if stalled {
        // A run slow rather than deadlocked still handles expiries past its bound, and
        // its locking would land in the next arm's counts and on its CPU: wait while it
        // makes progress (at most a second), then drop what it counted meanwhile.
        let until = Instant::now() + Duration::from_secs(1);
        let mut seen = handled.load(Ordering::Relaxed);
        while Instant::now() < until && rx.recv_timeout(Duration::from_millis(50)).is_err() {
            let now = handled.load(Ordering::Relaxed);
            if now == seen {
                break;
            }
            seen = now;
        }
        let _ = Waits::take();
    }
    Ok(run)
}
