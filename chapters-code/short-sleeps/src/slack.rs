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
