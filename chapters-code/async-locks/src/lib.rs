//! Chapter 5 of *The Cost of Waiting*: synchronous locks in async code.
//!
//! N timeouts of 20 ms each report their expiry to a handler, built the ways the
//! write-up built them, against a baseline that shares nothing and a fix. Every design
//! returns one [`Sample`] per handled expiry; a timeout's lateness runs from its *own*
//! deadline to the moment its expiry was handled, on the monotonic clock. Every wait is
//! bounded: a design that has not handled every expiry by its `give_up` instant stops
//! and returns what it has.
//!
//! `lib.rs` holds the mechanism (the timeout, the designs) and the names of the
//! headline figures; `experiments.rs` the rounds; `views.rs` the tables and plots;
//! `os.rs` the scheduler counters of a run; `chapter.rs` the chapter's registry (its
//! experiments, views and headlines), kept apart so that the mechanism imports nothing
//! that builds on it.

use futures_util::FutureExt;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::time::timeout_at;

pub mod experiments;
pub mod os;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

/// The names of the chapter's headline figures: the guide, the appendix and the
/// comparisons read them by these constants, so a renamed figure fails to compile.
pub mod headline {
    pub const DESIGN2_MULTI_THREAD_LATENESS_P50: &str = "design2-multi-thread-lateness-p50";
    pub const FIX_MULTI_THREAD_LATENESS_P50: &str = "fix-multi-thread-lateness-p50";
    pub const STD_MUTEX_MULTI_THREAD_LATENESS_P50: &str = "std-mutex-multi-thread-lateness-p50";
    pub const NO_LOCK_MULTI_THREAD_LATENESS_P50: &str = "no-lock-multi-thread-lateness-p50";
}

/// Every timeout's length, as in the write-up.
pub const TIMEOUT: Duration = Duration::from_millis(20);

// ANCHOR: timeout
/// A timeout whose deadline can be pushed back while it runs, from any thread: the
/// deadline is an atomic offset from the creation instant that only grows, so after
/// each sleep the timeout reads it again and sleeps on if it moved.
#[derive(Clone)]
pub struct Timeout {
    created: Instant,
    deadline_ns: Arc<AtomicU64>,
}

impl Timeout {
    pub fn new(after: Duration) -> Timeout {
        Timeout {
            created: Instant::now(),
            deadline_ns: Arc::new(AtomicU64::new(nanos(after))),
        }
    }

    /// Pushes the deadline back by `by`.
    pub fn extend(&self, by: Duration) {
        self.deadline_ns.fetch_add(nanos(by), Ordering::Relaxed);
    }

    pub fn deadline(&self) -> Instant {
        self.created + Duration::from_nanos(self.deadline_ns.load(Ordering::Relaxed))
    }

    /// Completes at or after the deadline, following any extension made meanwhile.
    pub async fn expire(&self) {
        loop {
            let due = self.deadline();
            if Instant::now() >= due {
                return;
            }
            watch(&TIMERS, tokio::time::sleep_until(due.into())).await;
        }
    }
}
// ANCHOR_END: timeout

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One handled timeout.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Own deadline → handled.
    pub lateness: Duration,
    /// Own start → handled.
    pub elapsed: Duration,
    /// Oldest queued start → handled: the write-up's quantity, for the queue designs.
    pub fifo_elapsed: Option<Duration>,
    /// The start popped for this expiry was another timeout's.
    pub mispaired: bool,
}

impl Sample {
    pub fn new(start: Instant, deadline: Instant, fifo: Option<Instant>, done: Instant) -> Sample {
        Sample {
            lateness: done.saturating_duration_since(deadline),
            elapsed: done.saturating_duration_since(start),
            fifo_elapsed: fifo.map(|f| done.saturating_duration_since(f)),
            mispaired: fifo.is_some_and(|f| f != start),
        }
    }
}

/// What an expired timeout sends to its handler in the channel designs.
#[derive(Debug, Clone, Copy)]
pub struct Fired {
    pub start: Instant,
    pub deadline: Instant,
}

/// The start-time queue of the designs that share one. A lock is poisoned only if a
/// holder panicked; the queue is still sound then, so the designs go on with it.
type Starts = Arc<Mutex<VecDeque<Instant>>>;

/// Locks a `std::sync::Mutex`, counting in [`LOCKS`] whether it was free: a `try_lock`
/// first (what `lock` does first anyway), and only if that fails a blocking `lock`.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    LOCKS.calls.fetch_add(1, Ordering::Relaxed);
    match m.try_lock() {
        Ok(guard) => guard,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => {
            LOCKS.waited.fetch_add(1, Ordering::Relaxed);
            m.lock().unwrap_or_else(PoisonError::into_inner)
        }
    }
}

/// How often one kind of wait happened in a run: `calls` made, how many of them could
/// not complete at their first poll (`waited`: the lock was taken, the channel full or
/// empty), and how many polls tokio refused because the task had spent its cooperative
/// budget (`refused`). The designs run one at a time in a worker process, so one set of
/// these counters serves every run; [`run_design`] resets and reads them.
#[derive(Debug, Default)]
pub struct Tally {
    pub calls: AtomicU64,
    pub waited: AtomicU64,
    pub refused: AtomicU64,
}

impl Tally {
    const fn new() -> Tally {
        Tally {
            calls: AtomicU64::new(0),
            waited: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    fn take(&self) -> Tallied {
        Tallied {
            calls: self.calls.swap(0, Ordering::Relaxed),
            waited: self.waited.swap(0, Ordering::Relaxed),
            refused: self.refused.swap(0, Ordering::Relaxed),
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

/// One [`Tally`] after a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tallied {
    pub calls: u64,
    pub waited: u64,
    pub refused: u64,
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

// ANCHOR: baseline
/// Baseline: N timeouts in one task (`join_all`), sharing nothing. Each future
/// returns its own measurement.
pub async fn baseline(n: usize, after: Duration) -> Vec<Sample> {
    let timeouts = (0..n).map(|_| async move {
        let start = Instant::now();
        let timeout = Timeout::new(after);
        timeout.expire().await;
        Sample::new(start, timeout.deadline(), None, Instant::now())
    });
    join_all(timeouts).await
}
// ANCHOR_END: baseline

// ANCHOR: unconstrained
/// The baseline with tokio's cooperative budget switched off for the `join_all`
/// task: every expired timer may complete in the same poll.
pub async fn baseline_unconstrained(n: usize, after: Duration) -> Vec<Sample> {
    tokio::task::coop::unconstrained(baseline(n, after)).await
}
// ANCHOR_END: unconstrained

// ANCHOR: std_mutex_task
/// Design 1 as the write-up ran it: N futures under one `join_all` push their start
/// times into a queue behind a `std::sync::Mutex`; each creates a timeout that starts
/// a task of its own, and the synchronous callback runs in that task: it locks the
/// queue and pops the oldest start. The future only waits for the task to end. On a
/// multi-thread runtime two callbacks can want the lock at once on two workers.
pub async fn std_mutex_task_each(n: usize, after: Duration) -> Vec<Sample> {
    let starts: Starts = Arc::new(Mutex::new(VecDeque::with_capacity(n)));
    let timeouts = (0..n).map(|_| {
        let starts = Arc::clone(&starts);
        async move {
            let start = Instant::now();
            lock(&starts).push_back(start);
            let timeout = Timeout::new(after);
            let task = tokio::spawn(async move {
                timeout.expire().await;
                // The synchronous callback, in the timeout's own task.
                let fifo_start = lock(&starts).pop_front();
                Sample::new(start, timeout.deadline(), fifo_start, Instant::now())
            });
            task.await.ok()
        }
    });
    join_all(timeouts).await.into_iter().flatten().collect()
}
// ANCHOR_END: std_mutex_task

// ANCHOR: task_each
/// The control for design 1: the same structure (N futures under one `join_all`, a
/// task per timeout that the future waits for), with no queue and no lock. Design 1
/// against this changes one thing, the lock.
pub async fn task_each(n: usize, after: Duration) -> Vec<Sample> {
    let timeouts = (0..n).map(|_| async move {
        let start = Instant::now();
        let timeout = Timeout::new(after);
        let task = tokio::spawn(async move {
            timeout.expire().await;
            Sample::new(start, timeout.deadline(), None, Instant::now())
        });
        task.await.ok()
    });
    join_all(timeouts).await.into_iter().flatten().collect()
}
// ANCHOR_END: task_each

// ANCHOR: long_section
/// Design 1 with a long critical section: each callback holds the std mutex while it
/// works for `work` (a spin on the clock: CPU work, no sleep), as a callback that did
/// real work under the lock would. With `lock: false` the same work runs unlocked.
pub async fn long_section(
    n: usize,
    after: Duration,
    work: Duration,
    lock: bool,
    handled: Arc<AtomicU64>,
) -> Vec<Sample> {
    let starts: Starts = Arc::new(Mutex::new(VecDeque::with_capacity(n)));
    let timeouts = (0..n).map(|_| {
        let (starts, handled) = (Arc::clone(&starts), Arc::clone(&handled));
        async move {
            let start = Instant::now();
            let timeout = Timeout::new(after);
            let task = tokio::spawn(async move {
                timeout.expire().await;
                let guard = lock.then(|| self::lock(&starts));
                spin_for(work);
                drop(guard);
                handled.fetch_add(1, Ordering::Relaxed);
                Sample::new(start, timeout.deadline(), None, Instant::now())
            });
            task.await.ok()
        }
    });
    join_all(timeouts).await.into_iter().flatten().collect()
}
// ANCHOR_END: long_section

/// Busy for `d` on this thread (the clock read in a loop).
pub fn spin_for(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

// ANCHOR: across_await
/// The hazard: design 1 plus a reporter that holds the queue's `std::sync::Mutex`
/// guard across an `.await` (allowed: the `join_all` future is never spawned, so it
/// need not be `Send`). `handled` counts the expiries handled, for a stopped run.
#[allow(clippy::await_holding_lock)] // on purpose: this lint flags exactly the hazard
pub async fn guard_across_await(n: usize, after: Duration, handled: Arc<AtomicU64>) -> Vec<Sample> {
    let starts: Starts = Arc::new(Mutex::new(VecDeque::with_capacity(n)));
    let timeouts: Vec<_> = (0..n)
        .map(|_| {
            let (starts, handled) = (Arc::clone(&starts), Arc::clone(&handled));
            async move {
                let start = Instant::now();
                lock(&starts).push_back(start);
                let timeout = Timeout::new(after);
                let task = tokio::spawn(async move {
                    timeout.expire().await;
                    let fifo_start = lock(&starts).pop_front();
                    handled.fetch_add(1, Ordering::Relaxed);
                    Sample::new(start, timeout.deadline(), fifo_start, Instant::now())
                });
                task.await.ok()
            }
            .boxed_local()
        })
        .collect();
    let reporter = async move {
        while handled.load(Ordering::Relaxed) < n as u64 {
            let queue = lock(&starts); // the guard, read, then ...
            tokio::task::yield_now().await; // ... held across an await
            drop(queue);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        None
    }
    .boxed_local();
    join_all(timeouts.into_iter().chain([reporter]))
        .await
        .into_iter()
        .flatten()
        .collect()
}
// ANCHOR_END: across_await

// ANCHOR: std_mutex
/// Design 1, our inline variant: the same queue and callback, but the timer runs in
/// the future itself, so all N timers and callbacks live in the one `join_all` task
/// and the lock is never contended.
pub async fn std_mutex_inline(n: usize, after: Duration) -> Vec<Sample> {
    let starts: Starts = Arc::new(Mutex::new(VecDeque::with_capacity(n)));
    let timeouts = (0..n).map(|_| {
        let starts = Arc::clone(&starts);
        async move {
            let start = Instant::now();
            lock(&starts).push_back(start);
            let timeout = Timeout::new(after);
            timeout.expire().await;
            // The synchronous callback, inline: locked and released right here.
            let fifo_start = lock(&starts).pop_front();
            Sample::new(start, timeout.deadline(), fifo_start, Instant::now())
        }
    });
    join_all(timeouts).await
}
// ANCHOR_END: std_mutex

/// The start-time queue of designs 2 and 3, behind tokio's mutex.
type AsyncStarts = Arc<tokio::sync::Mutex<VecDeque<Instant>>>;

// ANCHOR: tokio_mutex
/// Design 2: a spawner task spawns one task per timeout; start times go into a
/// `tokio::sync::Mutex<VecDeque>`; each expiry is signalled over a bounded channel
/// (capacity 1 in the write-up) to a handler that pops the oldest start.
pub async fn tokio_mutex_channel(
    n: usize,
    after: Duration,
    capacity: usize,
    give_up: Instant,
) -> Vec<Sample> {
    let (tx, rx) = mpsc::channel::<Fired>(capacity);
    let starts: AsyncStarts = Arc::new(tokio::sync::Mutex::new(VecDeque::with_capacity(n)));
    let spawner_starts = Arc::clone(&starts);
    tokio::spawn(async move {
        for _ in 0..n {
            let (tx, starts) = (tx.clone(), Arc::clone(&spawner_starts));
            tokio::spawn(async move {
                let start = Instant::now();
                watch(&LOCKS, starts.lock()).await.push_back(start);
                let timeout = Timeout::new(after);
                timeout.expire().await;
                let fired = Fired {
                    start,
                    deadline: timeout.deadline(),
                };
                let _ = watch(&SENDS, tx.send(fired)).await; // waits while full
            });
        }
    });
    handle_with_queue(rx, starts, n, give_up).await
}
// ANCHOR_END: tokio_mutex

// ANCHOR: handler
/// The handler of designs 2 and 3: one message per expiry, then the shared queue.
/// It stops at `give_up` with what it has.
pub async fn handle_with_queue(
    mut rx: mpsc::Receiver<Fired>,
    starts: AsyncStarts,
    n: usize,
    give_up: Instant,
) -> Vec<Sample> {
    let mut samples = Vec::with_capacity(n);
    while samples.len() < n {
        let Ok(Some(fired)) = timeout_at(give_up.into(), watch(&RECEIVES, rx.recv())).await else {
            break; // past the bound, or every sender gone
        };
        let fifo_start = watch(&LOCKS, starts.lock()).await.pop_front();
        samples.push(Sample::new(
            fired.start,
            fired.deadline,
            fifo_start,
            Instant::now(),
        ));
    }
    samples
}
// ANCHOR_END: handler

/// The channel capacity of the write-up's third design.
pub const TWO_RUNTIMES_CAPACITY: usize = 100_000;

// ANCHOR: two_runtimes
/// Design 3: the timeouts run under `join_all` on a second OS thread with its own
/// runtime; the handler runs on `handler`'s runtime and hears of each expiry over a
/// channel of capacity 100,000. Start times share a `tokio::sync::Mutex<VecDeque>`.
pub fn two_runtimes(
    handler: &tokio::runtime::Runtime,
    timer_runtime: tokio::runtime::Runtime,
    n: usize,
    after: Duration,
    give_up: Instant,
) -> Vec<Sample> {
    let (tx, rx) = mpsc::channel::<Fired>(TWO_RUNTIMES_CAPACITY);
    let starts: AsyncStarts = Arc::new(tokio::sync::Mutex::new(VecDeque::with_capacity(n)));
    let timer_starts = Arc::clone(&starts);
    let timers = os::spawn_counted(move || {
        timer_runtime.block_on(async move {
            let all = join_all((0..n).map(|_| {
                let (tx, starts) = (tx.clone(), Arc::clone(&timer_starts));
                async move {
                    let start = Instant::now();
                    watch(&LOCKS, starts.lock()).await.push_back(start);
                    let timeout = Timeout::new(after);
                    timeout.expire().await;
                    let fired = Fired {
                        start,
                        deadline: timeout.deadline(),
                    };
                    let _ = watch(&SENDS, tx.send(fired)).await;
                }
            }));
            let _ = timeout_at(give_up.into(), all).await;
        });
        timer_runtime.shutdown_timeout(Duration::from_millis(100));
    });
    let samples = handler.block_on(handle_with_queue(rx, starts, n, give_up));
    join_until(timers, give_up + Duration::from_millis(500));
    samples
}
// ANCHOR_END: two_runtimes

/// Waits for a thread until `until` at the latest; a thread still running then is
/// left behind (the worker process ends with the round).
fn join_until(thread: std::thread::JoinHandle<()>, until: Instant) {
    while !thread.is_finished() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    if thread.is_finished() {
        let _ = thread.join();
    }
}

// ANCHOR: fix
/// The fix: each timeout carries its own start and deadline in the message (no
/// shared queue, no lock, no FIFO pairing), tasks are spawned directly, and the
/// channel has room for every expiry, so a timer never waits for the handler.
pub async fn own_deadline_channel(n: usize, after: Duration, give_up: Instant) -> Vec<Sample> {
    let (tx, mut rx) = mpsc::channel::<Fired>(n.max(1));
    for _ in 0..n {
        let tx = tx.clone();
        tokio::spawn(async move {
            let start = Instant::now();
            let timeout = Timeout::new(after);
            timeout.expire().await;
            offer(&tx, timeout.deadline(), start);
        });
    }
    drop(tx);
    let mut samples = Vec::with_capacity(n);
    while let Ok(Some(fired)) = timeout_at(give_up.into(), watch(&RECEIVES, rx.recv())).await {
        let done = Instant::now();
        samples.push(Sample::new(fired.start, fired.deadline, None, done));
    }
    samples
}
// ANCHOR_END: fix

/// `try_send`, counted in [`SENDS`]: a failure would lose the message, so it is
/// counted as a wait; with room for every expiry it never happens.
fn offer(tx: &mpsc::Sender<Fired>, deadline: Instant, start: Instant) {
    SENDS.calls.fetch_add(1, Ordering::Relaxed);
    if tx.try_send(Fired { start, deadline }).is_err() {
        SENDS.waited.fetch_add(1, Ordering::Relaxed);
    }
}

// ANCHOR: unit_check
/// The write-up's unit check: a 20 ms timeout, extended by 20 ms before anyone
/// waits on it, should fire between 36 and 44 ms after it was created.
pub async fn extended_timeout(first: Duration, extra: Duration) -> Duration {
    let start = Instant::now();
    let timeout = Timeout::new(first);
    timeout.extend(extra);
    timeout.expire().await;
    start.elapsed()
}
// ANCHOR_END: unit_check

/// The runtime a design's handler (and, in design 3, its timers) runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flavour {
    /// `#[tokio::main(flavor = "current_thread")]`, `#[tokio::test]`.
    CurrentThread,
    /// `#[tokio::main]`: one worker per core.
    MultiThread,
}

impl Flavour {
    pub const ALL: [Flavour; 2] = [Flavour::MultiThread, Flavour::CurrentThread];

    pub fn label(self) -> &'static str {
        match self {
            Flavour::CurrentThread => "current-thread",
            Flavour::MultiThread => "multi-thread",
        }
    }

    pub fn runtime(self) -> std::io::Result<tokio::runtime::Runtime> {
        match self {
            Flavour::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            Flavour::MultiThread => tokio::runtime::Builder::new_multi_thread(),
        }
        .enable_time()
        .on_thread_start(os::thread_started)
        .on_thread_stop(os::thread_stopped)
        .build()
    }
}

/// The designs, in the order the chapter shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    Baseline,
    BaselineUnconstrained,
    /// Design 1's structure without its lock: the control for the lock question.
    TaskEach,
    /// Design 1 as the write-up's crate ran it: a task per timeout.
    StdMutexTask,
    /// Design 1 with its timers inline under `join_all`: our variant.
    StdMutex,
    TokioMutexCap1,
    TokioMutexCapN,
    TwoRuntimes,
    Fix,
}

impl Design {
    pub const ALL: [Design; 9] = [
        Design::Baseline,
        Design::BaselineUnconstrained,
        Design::TaskEach,
        Design::StdMutexTask,
        Design::StdMutex,
        Design::TokioMutexCap1,
        Design::TokioMutexCapN,
        Design::TwoRuntimes,
        Design::Fix,
    ];

    /// The short name used in the data and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Design::Baseline => "baseline",
            Design::BaselineUnconstrained => "baseline-unconstrained",
            Design::TaskEach => "task-each",
            Design::StdMutexTask => "std-mutex-task",
            Design::StdMutex => "std-mutex",
            Design::TokioMutexCap1 => "tokio-mutex-cap1",
            Design::TokioMutexCapN => "tokio-mutex-cap-n",
            Design::TwoRuntimes => "two-runtimes",
            Design::Fix => "fix",
        }
    }

    /// How the tables and plots name it. Records name a design by its reading key
    /// (`experiments::DesignKey`), which does not follow a change of this label.
    pub fn label(self) -> &'static str {
        match self {
            Design::Baseline => "baseline",
            Design::BaselineUnconstrained => "baseline, no budget",
            Design::TaskEach => "task each, no lock",
            Design::StdMutexTask => "1: std mutex, task each",
            Design::StdMutex => "1 inline (ours)",
            Design::TokioMutexCap1 => "2: tokio mutex, channel(1)",
            Design::TokioMutexCapN => "2′: channel(N)",
            Design::TwoRuntimes => "3: two runtimes",
            Design::Fix => "fix",
        }
    }

    pub fn parse(s: &str) -> anyhow::Result<Design> {
        Design::ALL
            .into_iter()
            .find(|d| d.name() == s.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Design::ALL.iter().map(|d| d.name()).collect();
                anyhow::anyhow!("unknown design `{s}`; valid designs: {}", names.join(", "))
            })
    }

    /// Whether the design pairs expiries with start times through a FIFO queue.
    pub fn uses_queue(self) -> bool {
        matches!(
            self,
            Design::StdMutexTask
                | Design::StdMutex
                | Design::TokioMutexCap1
                | Design::TokioMutexCapN
                | Design::TwoRuntimes
        )
    }
}

/// One run of one design.
#[derive(Debug, Clone)]
pub struct Run {
    pub design: Design,
    pub flavour: Flavour,
    pub n: usize,
    pub samples: Vec<Sample>,
    pub wall: Duration,
    /// CPU time of the whole process during the run, where the OS reports it.
    pub cpu: Option<Duration>,
    /// The process's scheduler counters during the run: context switches and CPU of
    /// every thread, run-queue delay of every thread that ran in it (see [`os`]).
    pub counters: harness::Counters,
    /// How often the run's locks, sends, receives and timers waited.
    pub waits: Waits,
}

impl Run {
    /// Fewer expiries were handled than timeouts were started.
    pub fn stalled(&self) -> bool {
        self.samples.len() < self.n
    }
}

/// Runs `design` with `n` timeouts of `after` on a fresh runtime of `flavour`,
/// stopping (and keeping what was handled) at `give_up`. The runtime is shut down
/// with a bound, so a task left waiting cannot hold the round up.
pub fn run_design(
    design: Design,
    flavour: Flavour,
    n: usize,
    after: Duration,
    give_up: Instant,
) -> anyhow::Result<Run> {
    anyhow::ensure!(n >= 1, "N must be at least 1 timeout (got {n})");
    os::new_run();
    let rt = flavour.runtime()?;
    let _ = Waits::take();
    let before = os::counters();
    let cpu0 = harness::process_cpu_time();
    let t0 = Instant::now();
    let samples = match design {
        Design::TwoRuntimes => two_runtimes(&rt, flavour.runtime()?, n, after, give_up),
        Design::Baseline => rt.block_on(all_or_nothing(baseline(n, after), give_up)),
        Design::BaselineUnconstrained => {
            rt.block_on(all_or_nothing(baseline_unconstrained(n, after), give_up))
        }
        Design::TaskEach => rt.block_on(all_or_nothing(task_each(n, after), give_up)),
        Design::StdMutexTask => rt.block_on(all_or_nothing(std_mutex_task_each(n, after), give_up)),
        Design::StdMutex => rt.block_on(all_or_nothing(std_mutex_inline(n, after), give_up)),
        Design::TokioMutexCap1 => rt.block_on(tokio_mutex_channel(n, after, 1, give_up)),
        Design::TokioMutexCapN => rt.block_on(tokio_mutex_channel(n, after, n, give_up)),
        Design::Fix => rt.block_on(own_deadline_channel(n, after, give_up)),
    };
    let wall = t0.elapsed();
    let cpu = harness::process_cpu_time()
        .zip(cpu0)
        .map(|(b, a)| b.saturating_sub(a));
    let counters = os::counters().since(&before);
    let waits = Waits::take();
    rt.shutdown_timeout(Duration::from_millis(200));
    Ok(Run {
        design,
        flavour,
        n,
        samples,
        wall,
        cpu,
        counters,
        waits,
    })
}

/// The hazards: arms that do what the advice warns against, each on its own thread and
/// runtime so that one that deadlocks can be left behind at its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hazard {
    /// Design 1 plus a std mutex guard held across an `.await` ([`guard_across_await`]).
    GuardAcrossAwait,
    /// Design 1's callback working for the critical section's length under the std mutex.
    LongUnderLock,
    /// The same work with no lock: the control.
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
    /// The run had not finished at its bound and was left behind.
    pub stalled: bool,
    pub wall: Duration,
    pub locks: Tallied,
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
            let _ = start.set(Instant::now());
            let samples = rt.block_on(async move {
                match hazard {
                    Hazard::GuardAcrossAwait => guard_across_await(n, after, count).await,
                    Hazard::LongUnderLock => long_section(n, after, work, true, count).await,
                    Hazard::LongNoLock => long_section(n, after, work, false, count).await,
                }
            });
            let _ = tx.send((samples, Instant::now()));
            rt.shutdown_timeout(Duration::from_millis(100));
        })?;
    let left = give_up.saturating_duration_since(Instant::now());
    let (samples, stalled, end) = match rx.recv_timeout(left) {
        Ok((s, end)) => (s, false, end),
        Err(_) => (Vec::new(), true, Instant::now()),
    };
    Ok(HazardRun {
        samples,
        handled: handled.load(Ordering::Relaxed),
        stalled,
        wall: end.saturating_duration_since(started.get().copied().unwrap_or(spawned)),
        locks: Waits::take().locks,
    })
}

/// `join_all` hands back all its outputs or none: past `give_up`, none.
async fn all_or_nothing(
    f: impl std::future::Future<Output = Vec<Sample>>,
    give_up: Instant,
) -> Vec<Sample> {
    timeout_at(give_up.into(), f).await.unwrap_or_default()
}
