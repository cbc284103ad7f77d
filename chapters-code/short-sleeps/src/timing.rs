//! Timing one loop of calls: the readings bracketed around it (scheduler counters,
//! the thread's CPU clock, the monotonic clock), the loop of back-to-back calls, the
//! same loop as tokio sleeps, and what one read of each clock costs.

use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::io;
use std::time::{Duration, Instant};

/// What one loop of calls cost, per call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Calls the loop made.
    pub calls: u32,
    /// Wall-clock time per call (monotonic clock).
    pub ns: f64,
    /// CPU time the measuring thread spent per call, where the OS tells it.
    pub cpu_ns: Option<f64>,
    /// Voluntary context switches per call (the thread blocked), where the OS tells it.
    pub voluntary: Option<f64>,
    /// Involuntary context switches per call (the thread was preempted).
    pub involuntary: Option<f64>,
    /// Time per call the thread spent runnable but waiting for a CPU (Linux).
    #[serde(default)]
    pub run_delay_ns: Option<f64>,
    /// tokio's loops: the first sleep on the loop's fresh runtime, timed alone before
    /// the loop's bracket opens (ns); the loop's figure holds the later sleeps only.
    #[serde(default)]
    pub first_ns: Option<f64>,
    /// The first of the single calls made before the loop to size it
    /// ([`crate::bounded_loop`]): this call's first in its cell of the round (ns).
    #[serde(default)]
    pub probe_first_ns: Option<f64>,
    /// A loop of calls that take milliseconds: the median of its calls, each timed
    /// alone inside the loop's window (ns). A loop of few long calls has a mean that
    /// one stalled call decides; its round's figure is this median ([`Sample::figure`]).
    #[serde(default)]
    pub median_ns: Option<f64>,
}

impl Sample {
    /// The round's figure for this loop: the median of its calls where each was timed
    /// (calls that take milliseconds), else the loop's mean per call, the write-up's.
    pub fn figure(&self) -> f64 {
        self.median_ns.unwrap_or(self.ns)
    }
}

/// The median of `v`; `None` when it is empty.
fn median_of(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| harness::stats::median_sorted(&v))
}

// ANCHOR: bracket
/// The readings around one loop, nested: counters, CPU clock, monotonic clock, then the
/// reverse. CPU per call may exceed time per call by a CPU-clock and two clock reads ÷ calls.
pub struct Bracket {
    counters: harness::Counters,
    start: Instant,
    cpu: Option<Duration>,
}

impl Bracket {
    pub fn open() -> Bracket {
        let counters = harness::Counters::thread();
        let cpu = harness::thread_cpu_time();
        let start = Instant::now();
        Bracket {
            counters,
            start,
            cpu,
        }
    }

    /// Closes the bracket around a loop of `calls` calls: its cost per call.
    pub fn close(self, calls: u32) -> Sample {
        let elapsed = self.start.elapsed();
        let cpu = harness::thread_cpu_time();
        let counters = harness::Counters::thread().since(&self.counters);
        let per = |v: f64| v / f64::from(calls.max(1));
        let per_op = counters.per_op(u64::from(calls.max(1)));
        Sample {
            calls,
            ns: per(elapsed.as_nanos() as f64),
            cpu_ns: (self.cpu.zip(cpu)).map(|(a, b)| per(b.saturating_sub(a).as_nanos() as f64)),
            voluntary: per_op.voluntary,
            involuntary: per_op.involuntary,
            run_delay_ns: per_op.run_delay_ns,
            first_ns: None,
            probe_first_ns: None,
            median_ns: None,
        }
    }
}
// ANCHOR_END: bracket

// ANCHOR: per_call
/// Calls `call` `calls` times back to back and returns the cost per call. The loop is
/// the write-up's: the only other work is an xor the optimiser must keep. With `each`
/// (calls that take milliseconds) it also stamps the clock after every call, so the
/// sample holds the median of the calls as well as their mean.
pub fn per_call(
    calls: u32,
    each: bool,
    mut call: impl FnMut() -> io::Result<()>,
) -> io::Result<Sample> {
    let mut times = Vec::with_capacity(if each { calls as usize } else { 0 });
    let bracket = Bracket::open();
    let mut guard = 0u32;
    if each {
        let mut last = bracket.start;
        for i in 0..calls {
            call()?;
            let now = Instant::now();
            times.push(now.duration_since(last).as_nanos() as f64);
            last = now;
            guard ^= black_box(i);
        }
    } else {
        for i in 0..calls {
            call()?;
            guard ^= black_box(i);
        }
    }
    let sample = bracket.close(calls);
    black_box(guard);
    let median_ns = median_of(times);
    Ok(Sample {
        median_ns,
        ..sample
    })
}
// ANCHOR_END: per_call

// ANCHOR: tokio_sleep
/// `tokio::time::sleep(request)` awaited `calls` times on a current-thread runtime
/// that runs on the calling thread (so that thread's timer slack applies to it). The
/// runtime's first sleep is timed alone, before the loop: a threat row compares it.
/// Each sleep takes milliseconds, so each is stamped too: the sample's median.
///
/// What tokio 1.54.1 does here, read from its source (`tokio/src/`):
/// - `time/sleep.rs`, `sleep`: the deadline is `Instant::now() + request`;
///   `Sleep::poll_elapsed` registers it as a tick, `TimeSource::deadline_to_tick`
///   (`runtime/time/source.rs`): whole milliseconds since the runtime was built
///   (`TimeSource::new`, from `build()`), rounded *up*.
/// - `runtime/time/mod.rs`, `Driver::park_internal`: the thread parks for
///   `when - now` whole milliseconds, `now` rounded *down* (`instant_to_tick`);
///   `Handle::process` then fires the timers whose tick is at most the new `now`.
/// - `runtime/park.rs`, `Inner::park_timeout`: without an I/O driver the park is
///   std's `Condvar::wait_timeout`, a futex wait with an absolute monotonic timeout
///   (std 1.95, `library/std/src/sys/pal/unix/futex.rs`, `futex_wait`).
pub fn tokio_sleep(calls: u32, request: Duration) -> io::Result<Sample> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    Ok(rt.block_on(async {
        let first = Instant::now();
        tokio::time::sleep(request).await;
        let first_ns = first.elapsed().as_nanos() as f64;
        let mut times = Vec::with_capacity(calls as usize);
        let bracket = Bracket::open();
        let mut last = bracket.start;
        for _ in 0..calls {
            tokio::time::sleep(request).await;
            let now = Instant::now();
            times.push(now.duration_since(last).as_nanos() as f64);
            last = now;
        }
        Sample {
            first_ns: Some(first_ns),
            median_ns: median_of(times),
            ..bracket.close(calls)
        }
    }))
}
// ANCHOR_END: tokio_sleep

/// What one read of each clock costs here, in nanoseconds: the median of `batches`
/// batches of `per_batch` back-to-back reads (monotonic clock, thread CPU clock).
pub fn clock_read_costs(batches: usize, per_batch: u32) -> (f64, Option<f64>) {
    let mut wall = Vec::with_capacity(batches);
    let mut cpu = Vec::with_capacity(batches);
    let mut cpu_ok = true;
    for _ in 0..batches.max(1) {
        let t = Instant::now();
        for _ in 0..per_batch {
            black_box(Instant::now());
        }
        wall.push(t.elapsed().as_nanos() as f64 / f64::from(per_batch.max(1)));
        let t = Instant::now();
        for _ in 0..per_batch {
            cpu_ok &= black_box(harness::thread_cpu_time()).is_some();
        }
        cpu.push(t.elapsed().as_nanos() as f64 / f64::from(per_batch.max(1)));
    }
    let med = |v: Vec<f64>| median_of(v).unwrap_or(0.0);
    (med(wall), cpu_ok.then(|| med(cpu)))
}
