//! The designs under test: N timeouts of the same length, each reporting its expiry
//! to a handler, built the ways the write-up built them, plus a baseline and a fix.
//!
//! Every design returns one [`Sample`] per timeout that was handled. A timeout's
//! lateness is measured from its *own* deadline to the moment its expiry was
//! handled, on the monotonic clock; the FIFO pairing the write-up relied on is
//! recorded beside it so the two can be compared. Nothing prints in here.

use crate::timeout::Timeout;
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::time::timeout_at;

/// The channel capacity of the write-up's third design.
pub const TWO_RUNTIMES_CAPACITY: usize = 100_000;

/// One handled timeout.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Own deadline → handled.
    pub lateness: Duration,
    /// Own start → handled (the write-up's quantity, had it been paired correctly).
    pub elapsed: Duration,
    /// Oldest queued start → handled: what the write-up actually printed.
    pub fifo_elapsed: Option<Duration>,
    /// The queued start popped for this timeout was another timeout's.
    pub mispaired: bool,
}

impl Sample {
    pub fn new(
        start: Instant,
        deadline: Instant,
        fifo_start: Option<Instant>,
        done: Instant,
    ) -> Self {
        Sample {
            lateness: done.saturating_duration_since(deadline),
            elapsed: done.saturating_duration_since(start),
            fifo_elapsed: fifo_start.map(|f| done.saturating_duration_since(f)),
            mispaired: fifo_start.is_some_and(|f| f != start),
        }
    }
}

/// What an expired timeout sends to its handler in the channel designs.
#[derive(Debug, Clone, Copy)]
pub struct Fired {
    pub start: Instant,
    pub deadline: Instant,
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

// ANCHOR: std_mutex
/// Design 1: N timeouts in one task (`join_all`). Start times go into a shared
/// `std::sync::Mutex<VecDeque>`; the synchronous expiry callback locks it and pops
/// the oldest start.
pub async fn std_mutex_callback(n: usize, after: Duration) -> Vec<Sample> {
    let starts = Arc::new(std::sync::Mutex::new(VecDeque::with_capacity(n)));
    let timeouts = (0..n).map(|_| {
        let starts = Arc::clone(&starts);
        async move {
            let start = Instant::now();
            starts.lock().unwrap().push_back(start);
            let timeout = Timeout::new(after);
            timeout.expire().await;
            // The synchronous callback: the lock is taken and released right here.
            let fifo_start = starts.lock().unwrap().pop_front();
            Sample::new(start, timeout.deadline(), fifo_start, Instant::now())
        }
    });
    join_all(timeouts).await
}
// ANCHOR_END: std_mutex

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
    let starts = Arc::new(tokio::sync::Mutex::new(VecDeque::with_capacity(n)));
    let spawner_starts = Arc::clone(&starts);
    tokio::spawn(async move {
        for _ in 0..n {
            let (tx, starts) = (tx.clone(), Arc::clone(&spawner_starts));
            tokio::spawn(async move {
                let start = Instant::now();
                starts.lock().await.push_back(start);
                let timeout = Timeout::new(after);
                timeout.expire().await;
                let fired = Fired {
                    start,
                    deadline: timeout.deadline(),
                };
                let _ = tx.send(fired).await; // waits while the channel is full
            });
        }
    });
    handle_with_queue(rx, starts, n, give_up).await
}

/// The handler of designs 2 and 3: one message per expiry, then the shared queue.
async fn handle_with_queue(
    mut rx: mpsc::Receiver<Fired>,
    starts: Arc<tokio::sync::Mutex<VecDeque<Instant>>>,
    n: usize,
    give_up: Instant,
) -> Vec<Sample> {
    let mut samples = Vec::with_capacity(n);
    while samples.len() < n {
        let Ok(Some(fired)) = timeout_at(give_up.into(), rx.recv()).await else {
            break; // stalled past the time bound, or every sender gone
        };
        let fifo_start = starts.lock().await.pop_front();
        samples.push(Sample::new(
            fired.start,
            fired.deadline,
            fifo_start,
            Instant::now(),
        ));
    }
    samples
}
// ANCHOR_END: tokio_mutex

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
    let starts = Arc::new(tokio::sync::Mutex::new(VecDeque::with_capacity(n)));
    let timer_starts = Arc::clone(&starts);
    let timers = std::thread::spawn(move || {
        timer_runtime.block_on(join_all((0..n).map(|_| {
            let (tx, starts) = (tx.clone(), Arc::clone(&timer_starts));
            async move {
                let start = Instant::now();
                starts.lock().await.push_back(start);
                let timeout = Timeout::new(after);
                timeout.expire().await;
                let fired = Fired {
                    start,
                    deadline: timeout.deadline(),
                };
                let _ = tx.send(fired).await;
            }
        })));
    });
    let samples = handler.block_on(handle_with_queue(rx, starts, n, give_up));
    // The receiver is gone now, so a timer thread blocked on a full channel ends too.
    let _ = timers.join();
    samples
}
// ANCHOR_END: two_runtimes

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
            let _ = tx.try_send(Fired {
                start,
                deadline: timeout.deadline(),
            });
        });
    }
    drop(tx);
    let mut samples = Vec::with_capacity(n);
    while let Ok(Some(fired)) = timeout_at(give_up.into(), rx.recv()).await {
        samples.push(Sample::new(
            fired.start,
            fired.deadline,
            None,
            Instant::now(),
        ));
    }
    samples
}
// ANCHOR_END: fix

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
    pub const ALL: [Flavour; 2] = [Flavour::CurrentThread, Flavour::MultiThread];

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
        .build()
    }
}

/// The designs, in the order the chapter shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    Baseline,
    BaselineUnconstrained,
    StdMutex,
    TokioMutexCap1,
    TokioMutexCapN,
    TwoRuntimes,
    Fix,
}

impl Design {
    pub const ALL: [Design; 7] = [
        Design::Baseline,
        Design::BaselineUnconstrained,
        Design::StdMutex,
        Design::TokioMutexCap1,
        Design::TokioMutexCapN,
        Design::TwoRuntimes,
        Design::Fix,
    ];

    /// The short name used on the command line and in the data.
    pub fn name(self) -> &'static str {
        match self {
            Design::Baseline => "baseline",
            Design::BaselineUnconstrained => "baseline-unconstrained",
            Design::StdMutex => "std-mutex",
            Design::TokioMutexCap1 => "tokio-mutex-cap1",
            Design::TokioMutexCapN => "tokio-mutex-cap-n",
            Design::TwoRuntimes => "two-runtimes",
            Design::Fix => "fix",
        }
    }

    /// How the chapter labels it.
    pub fn label(self) -> &'static str {
        match self {
            Design::Baseline => "baseline: nothing shared",
            Design::BaselineUnconstrained => "baseline, coop budget off",
            Design::StdMutex => "1: std Mutex, sync callback",
            Design::TokioMutexCap1 => "2: tokio Mutex, channel(1)",
            Design::TokioMutexCapN => "2′: as 2, channel(N)",
            Design::TwoRuntimes => "3: second runtime, channel(100k)",
            Design::Fix => "fix: own deadline, channel(N)",
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
            Design::StdMutex
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
}

impl Run {
    /// Fewer expiries were handled than timeouts were started.
    pub fn stalled(&self) -> bool {
        self.samples.len() < self.n
    }
}

/// Runs `design` with `n` timeouts of `after` on a fresh runtime of `flavour`,
/// giving up (and keeping what was handled) at `give_up`.
pub fn run_design(
    design: Design,
    flavour: Flavour,
    n: usize,
    after: Duration,
    give_up: Instant,
) -> anyhow::Result<Run> {
    anyhow::ensure!(n >= 1, "N must be at least 1 timeout (got {n})");
    let rt = flavour.runtime()?;
    let timer_rt = match design {
        Design::TwoRuntimes => Some(flavour.runtime()?),
        _ => None,
    };
    let cpu0 = harness::process_cpu_time();
    let t0 = Instant::now();
    let samples = match (design, timer_rt) {
        (Design::TwoRuntimes, Some(timer_rt)) => two_runtimes(&rt, timer_rt, n, after, give_up),
        (Design::Baseline, _) => rt.block_on(all_or_nothing(baseline(n, after), give_up)),
        (Design::BaselineUnconstrained, _) => {
            rt.block_on(all_or_nothing(baseline_unconstrained(n, after), give_up))
        }
        (Design::StdMutex, _) => rt.block_on(all_or_nothing(std_mutex_callback(n, after), give_up)),
        (Design::TokioMutexCap1, _) => rt.block_on(tokio_mutex_channel(n, after, 1, give_up)),
        (Design::TokioMutexCapN, _) => rt.block_on(tokio_mutex_channel(n, after, n, give_up)),
        (Design::Fix, _) => rt.block_on(own_deadline_channel(n, after, give_up)),
        (Design::TwoRuntimes, None) => unreachable!("built above"),
    };
    let wall = t0.elapsed();
    let cpu = harness::process_cpu_time()
        .zip(cpu0)
        .map(|(b, a)| b.saturating_sub(a));
    drop(rt);
    Ok(Run {
        design,
        flavour,
        n,
        samples,
        wall,
        cpu,
    })
}

/// `join_all` hands back all its outputs or none: past `give_up`, none.
async fn all_or_nothing(
    f: impl std::future::Future<Output = Vec<Sample>>,
    give_up: Instant,
) -> Vec<Sample> {
    timeout_at(give_up.into(), f).await.unwrap_or_default()
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
