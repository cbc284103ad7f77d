//! Timer slack, and loops that keep to their bound: which slack a loop ran with,
//! running under a set slack (Linux), and a loop made shorter when it would not end
//! in time.

use crate::calls::{Call, fmt_request, run_loop};
#[cfg(target_os = "linux")]
use crate::os;
use crate::timing::Sample;
use serde::{Deserialize, Serialize};
use std::io;
use std::time::Duration;

/// Which timer slack a loop ran with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Slack {
    /// Whatever the thread had (on Linux, normally 50 µs).
    Default,
    /// `prctl(PR_SET_TIMERSLACK, low)` on the measuring thread (1 ns unless set).
    Low,
}

/// `1 ns`, `50 µs`: a slack as the tables and notes name it.
pub fn fmt_slack(ns: u64) -> String {
    fmt_request(Duration::from_nanos(ns))
}

/// Runs `f` with this thread's timer slack at `ns`, then restores the old slack.
#[cfg(target_os = "linux")]
pub fn with_slack<T>(ns: u64, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let _restore_on_drop = os::SlackGuard::set(ns)?;
    f()
}

/// Per-thread timer slack is Linux-only.
#[cfg(not(target_os = "linux"))]
pub fn with_slack<T>(_ns: u64, _f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "per-thread timer slack is Linux-only",
    ))
}

/// Single calls made before each loop to learn whether the loop fits its bound.
pub const PROBE_CALLS: u32 = 3;

/// CPU time of one call where the thread's CPU clock is too coarse for a loop to read it
/// (it moves in steps of `step`, as Windows' thread times and Wine's do): the call is
/// repeated, in chunks of `chunk` calls, until the clock has moved at least
/// [`CPU_LOOP_STEPS`] steps or `limit` has passed. The total CPU time over the total
/// calls is then known to within one step over that total.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuLoop {
    /// Calls made.
    pub calls: u64,
    /// The thread's CPU time over all of them (ns), chunk brackets included.
    pub cpu_ns: f64,
    /// The clock's step it was read with (ns).
    pub step_ns: f64,
}

/// How many steps of a coarse CPU clock a [`CpuLoop`] waits for: one step's error is
/// then at most a tenth of the figure.
pub const CPU_LOOP_STEPS: f64 = 10.0;

/// Runs a [`CpuLoop`] of `call`; `None` where the thread's CPU clock cannot be read.
pub fn cpu_loop(call: Call, chunk: u32, step: Duration, limit: Duration) -> Option<CpuLoop> {
    let start = std::time::Instant::now();
    let cpu0 = harness::thread_cpu_time()?;
    let want = step.mul_f64(CPU_LOOP_STEPS);
    let mut calls = 0u64;
    let mut cpu = cpu0;
    while cpu - cpu0 < want && start.elapsed() < limit {
        run_loop(call, chunk.max(1)).ok()?;
        calls += u64::from(chunk.max(1));
        cpu = harness::thread_cpu_time()?;
    }
    Some(CpuLoop {
        calls,
        cpu_ns: (cpu - cpu0).as_nanos() as f64,
        step_ns: step.as_nanos() as f64,
    })
}

/// One loop of `planned` calls, under the slack given (`None`: the thread's own), made
/// shorter if it would not end within `limit`: a few single calls first tell, by their
/// median, how long one call takes here. They also warm the call up: the loop times
/// only later calls, and the sample keeps the first probe's time apart
/// (`probe_first_ns`). The sample says how many calls it made.
pub fn bounded_loop(
    call: Call,
    slack_ns: Option<u64>,
    planned: u32,
    limit: Duration,
) -> io::Result<Sample> {
    let run = || {
        let mut probe = (0..PROBE_CALLS)
            .map(|_| run_loop(call, 1).map(|s| s.ns))
            .collect::<io::Result<Vec<f64>>>()?;
        let first = probe[0];
        probe.sort_by(f64::total_cmp);
        let one = probe[probe.len() / 2].max(1.0);
        let fits = (limit.as_nanos() as f64 / one) as u32;
        let sample = run_loop(call, planned.min(fits).max(1))?;
        Ok(Sample {
            probe_first_ns: Some(first),
            ..sample
        })
    };
    match slack_ns {
        None => run(),
        Some(ns) => with_slack(ns, run),
    }
}
