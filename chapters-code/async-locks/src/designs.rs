//! The designs: the baseline that shares nothing, the write-up's three designs (a
//! `std::sync::Mutex` queue, a `tokio::sync::Mutex` queue with a channel, two runtimes)
//! with their controls and variants, and the fix; [`Design`] names them.

use crate::os;
use crate::timeout::{Sample, Timeout};
use crate::waits::{RECEIVES, SENDS, lock, lock_tokio, watch};
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::sync::{MutexGuard, mpsc};
use tokio::task::coop::unconstrained;
use tokio::time::{Sleep, sleep_until, timeout_at};

/// What an expired timeout sends to its handler in the channel designs.
#[derive(Debug, Clone, Copy)]
pub struct Fired {
    pub start: Instant,
    pub deadline: Instant,
}

/// The start-time queue of the designs that share one. A lock is poisoned only if a
/// holder panicked; the queue is still sound then, so the designs go on with it.
pub(crate) type Starts = Arc<Mutex<VecDeque<Instant>>>;

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
/// against this takes away the lock with the push and the pop it guards.
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
                lock_queue(&starts, Budgeted::Yes).await.push_back(start);
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
    handle_with_queue(rx, starts, n, give_up, Budgeted::Yes).await
}
// ANCHOR_END: tokio_mutex

/// Whether a `lock()` of the tokio mutex counts against the task's cooperative budget:
/// as written (`Yes`), or wrapped in `tokio::task::coop::unconstrained` (`No`), design
/// 3's control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budgeted {
    Yes,
    No,
}

// ANCHOR: lock_queue
/// Locks the start-time queue of designs 2 and 3, counted (`lock_tokio`). Tokio 1.54.1's
/// `Acquire::poll` (`tokio/src/sync/batch_semaphore.rs`) takes the mutex first and then
/// asks the budget (`coop::poll_proceed`, `tokio/src/task/coop/mod.rs`): a task whose
/// budget is spent gets *Pending* from a `lock()` that now holds the mutex, and every
/// other `lock()` queues behind it until that task is polled again. `unconstrained`
/// (`tokio/src/task/coop/unconstrained.rs`) polls the `lock()` with no budget through
/// `with_unconstrained`, whose `with_budget` (`tokio/src/task/coop/mod.rs`) puts the
/// task's budget back afterwards, so its other operations still count.
async fn lock_queue(starts: &AsyncStarts, budget: Budgeted) -> MutexGuard<'_, VecDeque<Instant>> {
    match budget {
        Budgeted::Yes => lock_tokio(starts, starts.lock()).await,
        Budgeted::No => lock_tokio(starts, unconstrained(starts.lock())).await,
    }
}
// ANCHOR_END: lock_queue

// ANCHOR: handler
/// The handler of designs 2 and 3: one message per expiry, then the shared queue.
/// It stops at `give_up` with what it has.
pub async fn handle_with_queue(
    mut rx: mpsc::Receiver<Fired>,
    starts: AsyncStarts,
    n: usize,
    give_up: Instant,
    budget: Budgeted,
) -> Vec<Sample> {
    let mut samples = Vec::with_capacity(n);
    let mut bound = std::pin::pin!(sleep_until(give_up.into()));
    while samples.len() < n {
        let Some(fired) = watch(&RECEIVES, recv_before(&mut rx, bound.as_mut())).await else {
            break; // past the bound, or every sender gone
        };
        let fifo_start = lock_queue(&starts, budget).await.pop_front();
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

// ANCHOR: recv_before
/// The next message, or `None` once every sender is gone or `bound` has passed. `bound`
/// is one `Sleep` for the whole run, made before the handler's loop; it is polled only
/// while the channel is empty. A `timeout_at` around each `recv` would make a `Sleep` per
/// message (`Handle::current()`, `Sleep::new_timeout`, `tokio/src/time/sleep.rs`) and,
/// whenever `recv` waits, put a timer into the wheel and take it out again on drop
/// (`poll_elapsed`, `Timer::new`, `tokio/src/runtime/time/entry.rs`), all in the timed path.
async fn recv_before(rx: &mut mpsc::Receiver<Fired>, mut bound: Pin<&mut Sleep>) -> Option<Fired> {
    std::future::poll_fn(|cx| match rx.poll_recv(cx) {
        Poll::Ready(message) => Poll::Ready(message),
        Poll::Pending => bound.as_mut().poll(cx).map(|()| None),
    })
    .await
}
// ANCHOR_END: recv_before

/// The channel capacity of the write-up's third design.
pub const TWO_RUNTIMES_CAPACITY: usize = 100_000;

// ANCHOR: two_runtimes
/// Design 3: the timeouts run under `join_all` on a second OS thread with its own
/// runtime; the handler runs on `handler`'s runtime and hears of each expiry over a
/// channel of capacity 100,000. Start times share a `tokio::sync::Mutex<VecDeque>`.
/// `budget`: `Budgeted::No` is the control, every `lock()` out of the budget.
pub fn two_runtimes(
    handler: &tokio::runtime::Runtime,
    timer_runtime: tokio::runtime::Runtime,
    n: usize,
    after: Duration,
    give_up: Instant,
    budget: Budgeted,
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
                    lock_queue(&starts, budget).await.push_back(start);
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
    let samples = handler.block_on(handle_with_queue(rx, starts, n, give_up, budget));
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
/// Design 4: each timeout carries its own start and deadline in the message (no
/// shared queue, no lock, no FIFO pairing), and the channel has room for every expiry,
/// so a timer never waits for the handler. A spawner task spawns the timeouts' tasks,
/// as design 2's does; with `Spawner::BlockOn` the `block_on` thread spawns them itself,
/// as design 4 first did (its control).
pub async fn own_deadline_channel(
    n: usize,
    after: Duration,
    give_up: Instant,
    spawner: Spawner,
) -> Vec<Sample> {
    let (tx, mut rx) = mpsc::channel::<Fired>(n.max(1));
    let spawn_all = move || {
        for _ in 0..n {
            let tx = tx.clone();
            tokio::spawn(async move {
                let start = Instant::now();
                let timeout = Timeout::new(after);
                timeout.expire().await;
                offer(&tx, timeout.deadline(), start);
            });
        }
        drop(tx); // once every task has sent, no sender is left and the loop below ends
    };
    match spawner {
        Spawner::Task => drop(tokio::spawn(async move { spawn_all() })),
        Spawner::BlockOn => spawn_all(),
    }
    let mut samples = Vec::with_capacity(n);
    let mut bound = std::pin::pin!(sleep_until(give_up.into()));
    while let Some(fired) = watch(&RECEIVES, recv_before(&mut rx, bound.as_mut())).await {
        let done = Instant::now();
        samples.push(Sample::new(fired.start, fired.deadline, None, done));
    }
    samples
}
// ANCHOR_END: fix

/// Where design 4's tasks are spawned from: a spawner task on the runtime (as design 2's),
/// or the thread that called `block_on` (its control).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spawner {
    Task,
    BlockOn,
}

/// `try_send`, counted in [`SENDS`]: a failure would lose the message, so it is
/// counted as a wait; with room for every expiry it never happens.
fn offer(tx: &mpsc::Sender<Fired>, deadline: Instant, start: Instant) {
    SENDS.calls.fetch_add(1, Ordering::Relaxed);
    if tx.try_send(Fired { start, deadline }).is_err() {
        SENDS.waited.fetch_add(1, Ordering::Relaxed);
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
    /// Design 3 with every `lock()` out of the cooperative budget: its control.
    TwoRuntimesFreeLock,
    /// Design 4: tasks spawned from a spawner task.
    Fix,
    /// Design 4 with its tasks spawned from the `block_on` thread: its control.
    FixBlockOn,
}

impl Design {
    pub const ALL: [Design; 11] = [
        Design::Baseline,
        Design::BaselineUnconstrained,
        Design::TaskEach,
        Design::StdMutexTask,
        Design::StdMutex,
        Design::TokioMutexCap1,
        Design::TokioMutexCapN,
        Design::TwoRuntimes,
        Design::TwoRuntimesFreeLock,
        Design::Fix,
        Design::FixBlockOn,
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
            Design::TwoRuntimesFreeLock => "two-runtimes-free-lock",
            Design::Fix => "fix",
            Design::FixBlockOn => "fix-block-on",
        }
    }

    /// How the tables and plots name it, and the reading keys store it
    /// (`experiments::DesignKey`).
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
            Design::TwoRuntimesFreeLock => "3, lock out of the budget",
            Design::Fix => "fix",
            Design::FixBlockOn => "4, spawned in block_on",
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
                | Design::TwoRuntimesFreeLock
        )
    }
}
