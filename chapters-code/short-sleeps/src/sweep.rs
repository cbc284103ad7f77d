//! Requested vs actual: the sweep's requested lengths and ways to sleep (the hybrid
//! sleeper among them), single timed sleeps and whether each blocked, how many a
//! point takes, and the hybrid sleeper's margin.

#[cfg(unix)]
use crate::os;
use crate::slack::fmt_slack;
use serde::{Deserialize, Serialize};
use std::io;
use std::time::{Duration, Instant};

// ANCHOR: hybrid
/// Sleeps natively until `margin` before the deadline, then spins the rest, yielding
/// the CPU on each turn (the idea behind the `spin_sleep` crate). Accurate, at the
/// price of the CPU time the spinning burns, as long as the native sleep wakes within
/// the margin. Returns how long it spun: the whole request when that is no longer
/// than the margin, nothing when the native sleep woke after the deadline.
pub fn hybrid_sleep(request: Duration, margin: Duration) -> Duration {
    let deadline = Instant::now() + request;
    if request > margin {
        std::thread::sleep(request - margin);
    }
    let woke = Instant::now();
    while Instant::now() < deadline {
        std::thread::yield_now();
    }
    deadline.saturating_duration_since(woke)
}
// ANCHOR_END: hybrid

/// The requested lengths of the sweep: 1 µs to 10 ms in 1-2-5 steps.
pub fn sweep_requests() -> Vec<Duration> {
    let mut out = Vec::new();
    let mut decade = 1_000u64; // 1 µs in ns
    while decade <= 10_000_000 {
        for m in [1, 2, 5] {
            let ns = decade * m;
            if ns <= 10_000_000 {
                out.push(Duration::from_nanos(ns));
            }
        }
        decade *= 10;
    }
    out
}

/// A way to sleep for a requested time in the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// `std::thread::sleep` with the thread's default slack.
    Sleep,
    /// `std::thread::sleep` with the slack set low (Linux).
    SleepLowSlack,
    /// A timerfd re-armed one-shot (Linux).
    TimerFd,
    /// Native sleep then spin ([`hybrid_sleep`]).
    Hybrid,
}

impl Mode {
    /// `thread::sleep, slack 1 ns`: the mode as the tables and notes name it and its
    /// readings are stored ([`experiments::SweepKey`](crate::experiments::SweepKey)).
    pub fn label(self, low_slack_ns: u64) -> String {
        match self {
            Mode::Sleep => "thread::sleep".into(),
            Mode::SleepLowSlack => format!("thread::sleep, slack {}", fmt_slack(low_slack_ns)),
            Mode::TimerFd => "timerfd".into(),
            Mode::Hybrid => "hybrid".into(),
        }
    }

    pub fn available() -> &'static [Mode] {
        if cfg!(target_os = "linux") {
            &[
                Mode::Sleep,
                Mode::SleepLowSlack,
                Mode::TimerFd,
                Mode::Hybrid,
            ]
        } else {
            &[Mode::Sleep, Mode::Hybrid]
        }
    }
}

/// One timed sleep: how long it really took, and for the hybrid sleeper how long it
/// spun.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub actual: Duration,
    pub spun: Option<Duration>,
    /// Whether the thread blocked during the sleep (its voluntary context switches,
    /// read just outside the timed window, went up), where the OS tells.
    pub blocked: Option<bool>,
}

/// A batch of timed sleeps, with the CPU time the thread used over the whole batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub sleeps: Vec<Timed>,
    pub cpu: Option<Duration>,
}

/// Times single sleeps of `request` in `mode`, `count` of them or as many as fit
/// before `until`. The thread's CPU time is read around the whole batch, so that its
/// own reading costs nothing per sleep; its voluntary context switches are read around
/// each sleep, outside the sleep's timed window, to tell a sleep that blocked from one
/// that returned without blocking. The caller sets the thread's slack for
/// [`Mode::SleepLowSlack`].
pub fn timed_sleeps(
    mode: Mode,
    request: Duration,
    margin: Duration,
    count: usize,
    until: Instant,
) -> io::Result<Batch> {
    #[cfg(target_os = "linux")]
    let timer = os::TimerFd::new()?;
    let mut sleeps = Vec::with_capacity(count);
    let cpu0 = harness::thread_cpu_time();
    while sleeps.len() < count && Instant::now() < until {
        let switches = voluntary_switches(); // before the start stamp
        let start = Instant::now();
        let spun = match mode {
            Mode::Sleep | Mode::SleepLowSlack => {
                std::thread::sleep(request);
                None
            }
            Mode::Hybrid => Some(hybrid_sleep(request, margin)),
            #[cfg(target_os = "linux")]
            Mode::TimerFd => {
                timer.set_oneshot(request)?;
                timer.wait()?;
                None
            }
            #[cfg(not(target_os = "linux"))]
            Mode::TimerFd => return Err(io::ErrorKind::Unsupported.into()),
        };
        let actual = start.elapsed();
        let blocked = blocked_since(switches); // after the end stamp
        sleeps.push(Timed {
            actual,
            spun,
            blocked,
        });
    }
    let cpu = cpu0.zip(harness::thread_cpu_time());
    let cpu = cpu.map(|(a, b)| b.saturating_sub(a));
    Ok(Batch { sleeps, cpu })
}

/// How many single sleeps of `request` one point takes per round: as many as fit in
/// about `time` of requested sleep, at least `min` and at most `max`.
pub fn sweep_count(request: Duration, time: Duration, min: usize, max: usize) -> usize {
    let per = request.as_nanos().max(1);
    let n = usize::try_from(time.as_nanos() / per).unwrap_or(usize::MAX);
    n.min(max).max(min.min(max))
}

/// The hybrid sleeper's margin: the 90th percentile of how long a 1 µs native sleep
/// takes on this machine (100 of them), kept between 10 µs and 500 µs.
pub fn calibrate_margin() -> Duration {
    let mut over: Vec<f64> = (0..100)
        .map(|_| {
            let t = Instant::now();
            std::thread::sleep(Duration::from_micros(1));
            t.elapsed().as_nanos() as f64
        })
        .collect();
    over.sort_by(f64::total_cmp);
    let p90 = harness::stats::percentile_sorted(&over, 0.90);
    Duration::from_nanos(p90 as u64).clamp(Duration::from_micros(10), Duration::from_micros(500))
}

// ANCHOR: blocked
/// The calling thread's voluntary context switches so far (`getrusage`; the thread's
/// on Linux, the process's on other Unix systems), or `None` where the OS does not tell.
pub fn voluntary_switches() -> Option<u64> {
    #[cfg(unix)]
    {
        os::context_switches().map(|(voluntary, _)| voluntary)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Whether the thread blocked since `before` (read with [`voluntary_switches`]): its
/// count of voluntary switches went up.
pub fn blocked_since(before: Option<u64>) -> Option<bool> {
    Some(voluntary_switches()? > before?)
}
// ANCHOR_END: blocked

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calls::ZERO;
    #[test]
    fn counts_stay_in_their_range() {
        let t = Duration::from_millis(2);
        assert_eq!(sweep_count(Duration::from_micros(1), t, 5, 100), 100);
        assert_eq!(sweep_count(Duration::from_millis(10), t, 5, 100), 5);
        assert_eq!(sweep_count(Duration::from_micros(100), t, 5, 100), 20);
        assert_eq!(sweep_count(ZERO, t, 5, 100), 100);
        // A minimum above the maximum gives the maximum, not a panic.
        assert_eq!(sweep_count(Duration::from_millis(10), t, 50, 10), 10);
    }
}
