//! The calls and the variants per OS: every system's ways of sleeping or yielding,
//! named in every build, how the tables name them, one timed loop of any of them,
//! and the variants each system runs.

use crate::os;
use crate::timing::{Sample, per_call, tokio_sleep};
use std::io;
use std::time::Duration;

pub const ZERO: Duration = Duration::ZERO;
pub const NS1: Duration = Duration::from_nanos(1);
pub const MS1: Duration = Duration::from_millis(1);

/// The three ways the write-up used a timerfd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timerfd {
    /// Created, armed once and read, for every call.
    PerCall,
    /// Created once, re-armed as a one-shot before every read.
    Rearmed,
    /// Armed once as an interval timer; every call only reads it.
    Interval,
}

/// One way of sleeping or yielding, with its argument. Every system's calls are named
/// in every build, so that a reading of another system's call (an imported record, a
/// headline figure) can be asked for by its call; [`run_loop`] makes only the calls of
/// the system it was built for, and [`VARIANTS`] lists only those.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// No call at all: the loop and the clock alone (the ground truth).
    Nothing,
    StdSleep(Duration),
    YieldNow,
    TokioSleep(Duration),
    /// Unix.
    Nanosleep(Duration),
    /// Unix.
    Pselect(Duration),
    /// Unix.
    SchedYield,
    /// Linux.
    ClockNanosleep(Duration),
    /// Linux.
    Timerfd(Timerfd, Duration),
    /// `Sleep(ms)` (Windows).
    Sleep(u32),
    /// `SleepEx(ms, FALSE)` (Windows).
    SleepEx(u32),
    /// A high-resolution waitable timer, in its 100 ns units (Windows).
    WaitableTimer(Duration),
}

/// A requested duration as the tables write it and reading keys store it: `0`, `1 ns`,
/// `100 ns`, `20 µs`, `1 ms`, else three significant digits (`1.50 ms`). Kept here, in
/// the code key, rather than on the page layer's number format, so that a change to how
/// the page writes numbers cannot change what a record is found by.
pub fn fmt_request(d: Duration) -> String {
    let ns = d.as_nanos();
    match ns {
        0 => "0".into(),
        n if n < 1_000 => format!("{n} ns"),
        n if n < 1_000_000 && n % 1_000 == 0 => format!("{} µs", n / 1_000),
        n if n % 1_000_000 == 0 => format!("{} ms", n / 1_000_000),
        n => three_digits(n as f64),
    }
}

/// A positive number of nanoseconds to three significant digits in the unit that
/// reads best, chosen after rounding (999.6 µs reads `1.00 ms`): `1.50 µs`, `12.3 ms`.
fn three_digits(ns: f64) -> String {
    let round = |x: f64| {
        let scale = 10f64.powi(2 - x.log10().floor() as i32);
        (x * scale).round() / scale
    };
    let (value, unit) = match round(ns) {
        x if x < 1e3 => (ns, "ns"),
        x if x < 1e6 => (ns / 1e3, "µs"),
        x if x < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    let r = round(value);
    let digits = r.log10().floor() as i32;
    let text = if digits >= 3 {
        let whole = (r as u64).to_string();
        let mut out = String::new();
        for (i, c) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else {
        let decimals = (2 - digits).clamp(0, 6) as usize;
        format!("{r:.decimals$}")
    };
    format!("{text} {unit}")
}

impl Call {
    /// The call as the tables and notes name it and its readings are stored:
    /// `nanosleep(1 ns)` (see [`experiments::CallsKey`](crate::experiments::CallsKey)).
    pub fn name(self) -> String {
        let a = fmt_request;
        match self {
            Call::Nothing => "empty loop".into(),
            Call::StdSleep(d) => format!("thread::sleep({})", a(d)),
            Call::YieldNow => "yield_now()".into(),
            Call::TokioSleep(d) => format!("tokio::time::sleep({})", a(d)),
            Call::Nanosleep(d) => format!("nanosleep({})", a(d)),
            Call::Pselect(d) => format!("pselect({})", a(d)),
            Call::SchedYield => "sched_yield()".into(),
            Call::ClockNanosleep(d) => format!("clock_nanosleep({})", a(d)),
            Call::Timerfd(Timerfd::PerCall, d) => format!("timerfd per call ({})", a(d)),
            Call::Timerfd(Timerfd::Rearmed, d) => format!("timerfd re-armed ({})", a(d)),
            Call::Timerfd(Timerfd::Interval, d) => format!("timerfd interval ({})", a(d)),
            Call::Sleep(ms) => format!("Sleep({ms})"),
            Call::SleepEx(ms) => format!("SleepEx({ms}, FALSE)"),
            Call::WaitableTimer(d) => format!("waitable timer ({})", a(d)),
        }
    }

    /// The duration the call asks for, if it asks for one.
    pub fn request(self) -> Option<Duration> {
        match self {
            Call::Nothing | Call::YieldNow | Call::SchedYield => None,
            Call::StdSleep(d) | Call::TokioSleep(d) => Some(d),
            Call::Nanosleep(d) | Call::Pselect(d) => Some(d),
            Call::ClockNanosleep(d) | Call::Timerfd(_, d) => Some(d),
            Call::Sleep(ms) | Call::SleepEx(ms) => Some(Duration::from_millis(u64::from(ms))),
            Call::WaitableTimer(d) => Some(d),
        }
    }

    /// Whether the call arms a timer on Linux, so that timer slack can lengthen it
    /// (measured a second time with the slack set low). `thread::sleep(0)` returns
    /// without a system call (std 1.95, `sys/thread/unix.rs`, `sleep`: its loop runs
    /// while time is left) and `pselect(0)`, by our reading of the kernel, without a
    /// timer. That slack applies to the others is our reading of the kernel too.
    pub fn sleeps(self) -> bool {
        let linux = cfg!(target_os = "linux");
        match self {
            Call::Nothing | Call::YieldNow | Call::SchedYield => false,
            Call::StdSleep(d) | Call::Pselect(d) => linux && !d.is_zero(),
            Call::Nanosleep(_) | Call::TokioSleep(_) => linux,
            Call::ClockNanosleep(_) | Call::Timerfd(..) => linux,
            Call::Sleep(_) | Call::SleepEx(_) | Call::WaitableTimer(_) => false,
        }
    }

    /// Whether a call takes milliseconds, so that its loops make fewer calls: tokio's
    /// sleeps (a timer wheel of 1 ms ticks), requests of 1 ms or more, and every
    /// non-zero sleep on Windows (bound to the system timer interval).
    pub fn slow(self) -> bool {
        let request = self.request().unwrap_or(ZERO);
        matches!(self, Call::TokioSleep(_))
            || request >= MS1
            || (cfg!(windows) && !request.is_zero())
    }
}

/// `std::thread::sleep`, as a fallible call for [`per_call`]. On Linux, std 1.95
/// (`library/std/src/sys/thread/unix.rs`, `sleep`) calls
/// `clock_nanosleep(CLOCK_MONOTONIC, 0, …)` with the relative request, again with the
/// remainder after `EINTR`, while any of it is left: a zero request makes no call.
fn std_sleep(d: Duration) -> io::Result<()> {
    std::thread::sleep(d);
    Ok(())
}

/// `std::thread::yield_now`, as a fallible call for [`per_call`]: on Unix, std 1.95's
/// `yield_now` (`library/std/src/sys/thread/unix.rs`) is `libc::sched_yield()`.
fn yield_now() -> io::Result<()> {
    std::thread::yield_now();
    Ok(())
}

// ANCHOR: run_loop
/// One loop of `calls` calls of `call`, timed by [`per_call`]. A timer is created
/// before the loop, except where creating it is part of what is measured. A call that
/// takes milliseconds is also timed alone (`each`): its loop is short.
pub fn run_loop(call: Call, calls: u32) -> io::Result<Sample> {
    let each = call.slow();
    match call {
        Call::Nothing => per_call(calls, each, || Ok(())),
        Call::StdSleep(d) => per_call(calls, each, || std_sleep(d)),
        Call::YieldNow => per_call(calls, each, yield_now),
        Call::TokioSleep(d) => tokio_sleep(calls, d),
        #[cfg(unix)]
        Call::Nanosleep(d) => per_call(calls, each, || os::nanosleep(d)),
        #[cfg(unix)]
        Call::Pselect(d) => per_call(calls, each, || os::pselect(d)),
        #[cfg(unix)]
        Call::SchedYield => per_call(calls, each, os::sched_yield),
        #[cfg(target_os = "linux")]
        Call::ClockNanosleep(d) => per_call(calls, each, || os::clock_nanosleep(d)),
        #[cfg(target_os = "linux")]
        Call::Timerfd(how, d) => timerfd_loop(how, d, calls),
        #[cfg(windows)]
        Call::Sleep(ms) => per_call(calls, each, || os::win_sleep(ms)),
        #[cfg(windows)]
        Call::SleepEx(ms) => per_call(calls, each, || os::win_sleep_ex(ms)),
        #[cfg(windows)]
        Call::WaitableTimer(d) => {
            let timer = os::WaitableTimer::new()?;
            per_call(calls, each, || timer.sleep(d))
        }
        // Another system's call.
        _ => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{} is not a call of this system", call.name()),
        )),
    }
}
// ANCHOR_END: run_loop

// ANCHOR: timerfd_loop
/// The write-up's three timerfd configurations; each call ends with a blocking read.
#[cfg(target_os = "linux")]
pub fn timerfd_loop(how: Timerfd, d: Duration, calls: u32) -> io::Result<Sample> {
    let each = Call::Timerfd(how, d).slow();
    match how {
        Timerfd::PerCall => per_call(calls, each, || {
            let timer = os::TimerFd::new()?;
            timer.set_oneshot(d)?;
            timer.wait().map(drop)
        }),
        Timerfd::Rearmed => {
            let timer = os::TimerFd::new()?;
            per_call(calls, each, || {
                timer.set_oneshot(d)?;
                timer.wait().map(drop)
            })
        }
        Timerfd::Interval => {
            let timer = os::TimerFd::new()?;
            timer.set_interval(d)?;
            per_call(calls, each, || timer.wait().map(drop))
        }
    }
}
// ANCHOR_END: timerfd_loop

/// One variant: a stable id (the reference data uses it) and the call it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub id: &'static str,
    pub call: Call,
}

impl Variant {
    pub const fn new(id: &'static str, call: Call) -> Variant {
        Variant { id, call }
    }
}

// ANCHOR: variants_linux
/// The Linux variants: the write-up's, then `clock_nanosleep`, `yield_now` and tokio.
#[cfg(target_os = "linux")]
pub const VARIANTS: &[Variant] = &[
    Variant::new("ground-truth", Call::Nothing),
    Variant::new("std-sleep-0", Call::StdSleep(ZERO)),
    Variant::new("nanosleep-0", Call::Nanosleep(ZERO)),
    Variant::new("pselect-0", Call::Pselect(ZERO)),
    Variant::new("sched-yield", Call::SchedYield),
    Variant::new("yield-now", Call::YieldNow),
    Variant::new("std-sleep-1ns", Call::StdSleep(NS1)),
    Variant::new("nanosleep-1ns", Call::Nanosleep(NS1)),
    Variant::new("clock-nanosleep-1ns", Call::ClockNanosleep(NS1)),
    Variant::new("pselect-1ns", Call::Pselect(NS1)),
    Variant::new("timerfd-recreate-1ns", Call::Timerfd(Timerfd::PerCall, NS1)),
    Variant::new("timerfd-reuse-1ns", Call::Timerfd(Timerfd::Rearmed, NS1)),
    Variant::new(
        "timerfd-interval-1ns",
        Call::Timerfd(Timerfd::Interval, NS1),
    ),
    Variant::new("tokio-sleep-1ns", Call::TokioSleep(NS1)),
    Variant::new("std-sleep-1ms", Call::StdSleep(MS1)),
    Variant::new("tokio-sleep-1ms", Call::TokioSleep(MS1)),
];
// ANCHOR_END: variants_linux

// ANCHOR: variants_other
/// macOS and the BSDs: the POSIX calls, but no timerfd, no `clock_nanosleep` in every
/// libc, and no timer slack to set.
#[cfg(all(unix, not(target_os = "linux")))]
pub const VARIANTS: &[Variant] = &[
    Variant::new("ground-truth", Call::Nothing),
    Variant::new("std-sleep-0", Call::StdSleep(ZERO)),
    Variant::new("nanosleep-0", Call::Nanosleep(ZERO)),
    Variant::new("pselect-0", Call::Pselect(ZERO)),
    Variant::new("sched-yield", Call::SchedYield),
    Variant::new("yield-now", Call::YieldNow),
    Variant::new("std-sleep-1ns", Call::StdSleep(NS1)),
    Variant::new("nanosleep-1ns", Call::Nanosleep(NS1)),
    Variant::new("pselect-1ns", Call::Pselect(NS1)),
    Variant::new("tokio-sleep-1ns", Call::TokioSleep(NS1)),
    Variant::new("std-sleep-1ms", Call::StdSleep(MS1)),
    Variant::new("tokio-sleep-1ms", Call::TokioSleep(MS1)),
];

/// Windows: `Sleep` and `SleepEx` take milliseconds; the waitable timer 100 ns units.
#[cfg(windows)]
pub const VARIANTS: &[Variant] = &[
    Variant::new("ground-truth", Call::Nothing),
    Variant::new("std-sleep-0", Call::StdSleep(ZERO)),
    Variant::new("win-sleep-0", Call::Sleep(0)),
    Variant::new("win-sleepex-0", Call::SleepEx(0)),
    Variant::new("yield-now", Call::YieldNow),
    Variant::new("std-sleep-1ns", Call::StdSleep(NS1)),
    Variant::new(
        "waitable-timer-100ns",
        Call::WaitableTimer(Duration::from_nanos(100)),
    ),
    Variant::new("std-sleep-1ms", Call::StdSleep(MS1)),
    Variant::new("win-sleep-1ms", Call::Sleep(1)),
    Variant::new("win-sleepex-1ms", Call::SleepEx(1)),
    Variant::new("tokio-sleep-1ns", Call::TokioSleep(NS1)),
    Variant::new("tokio-sleep-1ms", Call::TokioSleep(MS1)),
];
// ANCHOR_END: variants_other

/// What this OS lacks, stated rather than failed.
pub fn unsupported_here() -> &'static str {
    if cfg!(target_os = "linux") {
        ""
    } else if cfg!(windows) {
        "Windows has no nanosleep, pselect, sched_yield, timerfd or timer slack; its timers \
         take milliseconds (Sleep, SleepEx) or 100 ns units (waitable timers)."
    } else {
        "This OS has no timerfd and no per-thread timer slack (both are Linux-only), and not \
         every libc here offers clock_nanosleep; those rows are Linux-only."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request that is not a whole number of its unit reads as the page's number
    /// format writes it (the format is not used, so that it cannot change a stored key).
    #[test]
    fn odd_requests_read_as_the_page_writes_numbers() {
        for ns in [
            1_234.0,
            1_505.0,
            45_678.0,
            999_600.0,
            3_210_987.0,
            7.5e9,
            1.2345e12,
        ] {
            assert_eq!(three_digits(ns), harness::render::fmt_ns(ns), "{ns} ns");
        }
        assert_eq!(fmt_request(Duration::from_nanos(1_500)), "1.50 µs");
        assert_eq!(fmt_request(Duration::from_nanos(2_345_678)), "2.35 ms");
    }
    use crate::sweep::Mode;
    #[test]
    fn variant_ids_and_names_are_unique() {
        let mut ids: Vec<&str> = VARIANTS.iter().map(|v| v.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), VARIANTS.len());
        let mut names: Vec<String> = VARIANTS.iter().map(|v| v.call.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), VARIANTS.len());
    }

    #[test]
    fn requests_and_labels_read_naturally() {
        assert_eq!(fmt_request(ZERO), "0");
        assert_eq!(fmt_request(NS1), "1 ns");
        assert_eq!(fmt_request(Duration::from_micros(20)), "20 µs");
        assert_eq!(fmt_request(Duration::from_millis(10)), "10 ms");
        assert_eq!(fmt_request(Duration::from_nanos(1_500)), "1.50 µs");
        assert_eq!(Call::StdSleep(NS1).name(), "thread::sleep(1 ns)");
        assert_eq!(Mode::SleepLowSlack.label(1), "thread::sleep, slack 1 ns");
    }

    /// Another system's call is named here and refused, not made.
    #[test]
    fn another_systems_call_is_refused() {
        let other = if cfg!(windows) {
            Call::SchedYield
        } else {
            Call::Sleep(0)
        };
        let e = run_loop(other, 1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(!other.sleeps() && !VARIANTS.iter().any(|v| v.call == other));
    }

    #[test]
    fn which_calls_are_slow_and_which_feel_the_slack() {
        assert!(Call::TokioSleep(NS1).slow() && Call::StdSleep(MS1).slow());
        assert!(!Call::Nothing.slow() && !Call::YieldNow.slow());
        assert!(!Call::StdSleep(ZERO).sleeps() && !Call::YieldNow.sleeps());
        assert_eq!(Call::StdSleep(NS1).slow(), cfg!(windows));
        if cfg!(target_os = "linux") {
            assert!(Call::StdSleep(NS1).sleeps() && Call::TokioSleep(MS1).sleeps());
        } else {
            assert!(VARIANTS.iter().all(|v| !v.call.sleeps()));
        }
        #[cfg(target_os = "linux")]
        {
            assert!(Call::Nanosleep(ZERO).sleeps(), "nanosleep(0) arms a timer");
            assert!(!Call::Pselect(ZERO).sleeps() && Call::Pselect(NS1).sleeps());
            assert!(!Call::Timerfd(Timerfd::Interval, NS1).slow());
        }
    }
}
