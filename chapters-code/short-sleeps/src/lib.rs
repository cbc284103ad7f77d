//! Chapter 3 of *The Cost of Waiting*: how long a sleep of zero and of one nanosecond
//! really takes, on each operating system, and what Linux timer slack does to it.
//!
//! Two experiments: `calls` times one loop of back-to-back calls of every variant per
//! round (the sleeping ones twice on Linux: with the thread's timer slack and with it
//! set low), and `sweep` compares the requested and the actual length of single sleeps
//! from 1 µs to 10 ms.
//!
//! `lib.rs` holds the mechanism and the names of the headline figures;
//! `experiments.rs` the rounds; `views.rs` the tables and plots; `os.rs` the system
//! calls; `chapter.rs` the chapter's registry (its experiments, views and headlines),
//! kept apart so that the mechanism imports nothing that builds on it.

pub mod experiments;
pub mod os;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::io;
use std::time::{Duration, Instant};

/// The names of the chapter's headline figures: the guide, the appendix and the
/// comparisons read them by these constants, so a renamed figure fails to compile.
pub mod headline {
    pub const NANOSLEEP_1NS_DEFAULT_SLACK: &str = "nanosleep-1ns-default-slack";
    pub const NANOSLEEP_1NS_SLACK_1NS: &str = "nanosleep-1ns-slack-1ns";
    pub const SCHED_YIELD: &str = "sched-yield";
    pub const THREAD_SLEEP_1MS_LATE: &str = "thread-sleep-1ms-late";
}

// ---------------------------------------------------------------------------------
// One loop of calls
// ---------------------------------------------------------------------------------

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
}

// ANCHOR: bracket
/// The readings around one loop, nested: scheduler counters outside, then the thread's
/// CPU clock, then the monotonic clock, and the same in reverse after it. The wall
/// window holds only the calls (a CPU-clock read is a system call), so CPU per call may
/// exceed time per call by about one CPU-clock read and two clock reads ÷ the calls.
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
        }
    }
}
// ANCHOR_END: bracket

// ANCHOR: per_call
/// Calls `call` `calls` times back to back and returns the cost per call. The loop is
/// the write-up's: the only other work is an xor the optimiser must keep.
pub fn per_call(calls: u32, mut call: impl FnMut() -> io::Result<()>) -> io::Result<Sample> {
    let bracket = Bracket::open();
    let mut guard = 0u32;
    for i in 0..calls {
        call()?;
        guard ^= black_box(i);
    }
    let sample = bracket.close(calls);
    black_box(guard);
    Ok(sample)
}
// ANCHOR_END: per_call

// ANCHOR: tokio_sleep
/// `tokio::time::sleep(request)` awaited `calls` times on a current-thread runtime
/// that runs on the calling thread (so that thread's timer slack applies to it).
pub fn tokio_sleep(calls: u32, request: Duration) -> io::Result<Sample> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    Ok(rt.block_on(async {
        let bracket = Bracket::open();
        for _ in 0..calls {
            tokio::time::sleep(request).await;
        }
        bracket.close(calls)
    }))
}
// ANCHOR_END: tokio_sleep

/// `std::thread::sleep`, as a fallible call for [`per_call`].
fn std_sleep(d: Duration) -> io::Result<()> {
    std::thread::sleep(d);
    Ok(())
}

/// `std::thread::yield_now`, as a fallible call for [`per_call`].
fn yield_now() -> io::Result<()> {
    std::thread::yield_now();
    Ok(())
}

// ---------------------------------------------------------------------------------
// The calls, and the variants per OS
// ---------------------------------------------------------------------------------

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

/// A requested duration as the tables write it: `0`, `1 ns`, `100 ns`, `20 µs`, `1 ms`.
pub fn fmt_request(d: Duration) -> String {
    let ns = d.as_nanos();
    match ns {
        0 => "0".into(),
        n if n < 1_000 => format!("{n} ns"),
        n if n < 1_000_000 && n % 1_000 == 0 => format!("{} µs", n / 1_000),
        n if n % 1_000_000 == 0 => format!("{} ms", n / 1_000_000),
        n => harness::render::fmt_ns(n as f64),
    }
}

impl Call {
    /// The call as the tables and notes name it: `nanosleep(1 ns)` (its readings are
    /// stored as [`experiments::CallsKey`] spells them).
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
    /// without a system call and `pselect(0)` without a timer.
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

// ANCHOR: run_loop
/// One loop of `calls` calls of `call`, timed by [`per_call`]. A timer is created
/// before the loop, except where creating it is part of what is measured.
pub fn run_loop(call: Call, calls: u32) -> io::Result<Sample> {
    match call {
        Call::Nothing => per_call(calls, || Ok(())),
        Call::StdSleep(d) => per_call(calls, || std_sleep(d)),
        Call::YieldNow => per_call(calls, yield_now),
        Call::TokioSleep(d) => tokio_sleep(calls, d),
        #[cfg(unix)]
        Call::Nanosleep(d) => per_call(calls, || os::nanosleep(d)),
        #[cfg(unix)]
        Call::Pselect(d) => per_call(calls, || os::pselect(d)),
        #[cfg(unix)]
        Call::SchedYield => per_call(calls, os::sched_yield),
        #[cfg(target_os = "linux")]
        Call::ClockNanosleep(d) => per_call(calls, || os::clock_nanosleep(d)),
        #[cfg(target_os = "linux")]
        Call::Timerfd(how, d) => timerfd_loop(how, d, calls),
        #[cfg(windows)]
        Call::Sleep(ms) => per_call(calls, || os::win_sleep(ms)),
        #[cfg(windows)]
        Call::SleepEx(ms) => per_call(calls, || os::win_sleep_ex(ms)),
        #[cfg(windows)]
        Call::WaitableTimer(d) => {
            let timer = os::WaitableTimer::new()?;
            per_call(calls, || timer.sleep(d))
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
    match how {
        Timerfd::PerCall => per_call(calls, || {
            let timer = os::TimerFd::new()?;
            timer.set_oneshot(d)?;
            timer.wait().map(drop)
        }),
        Timerfd::Rearmed => {
            let timer = os::TimerFd::new()?;
            per_call(calls, || {
                timer.set_oneshot(d)?;
                timer.wait().map(drop)
            })
        }
        Timerfd::Interval => {
            let timer = os::TimerFd::new()?;
            timer.set_interval(d)?;
            per_call(calls, || timer.wait().map(drop))
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

// ---------------------------------------------------------------------------------
// Timer slack, and loops that keep to their bound
// ---------------------------------------------------------------------------------

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
/// median, how long one call takes here. The sample says how many calls it made.
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
        probe.sort_by(f64::total_cmp);
        let one = probe[probe.len() / 2].max(1.0);
        let fits = (limit.as_nanos() as f64 / one) as u32;
        run_loop(call, planned.min(fits).max(1))
    };
    match slack_ns {
        None => run(),
        Some(ns) => with_slack(ns, run),
    }
}

// ---------------------------------------------------------------------------------
// Requested vs actual
// ---------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------
// tokio's millisecond timer, and a 1 ms sleep in context
// ---------------------------------------------------------------------------------

/// One millisecond in nanoseconds: tokio's tick.
pub const TICK_NS: u64 = 1_000_000;

// ANCHOR: ticks
/// Where tokio's ticks lie. tokio's timer counts whole milliseconds (*ticks*) from the
/// moment its runtime was built (`TimeSource::new`, inside `build()`), so that moment
/// lies between two clock reads around `build()`; the tick grid is taken from their
/// midpoint, so a phase is known to within half their distance.
pub struct Ticks {
    pub origin: Instant,
    /// The distance between the two clock reads around `build()`.
    pub uncertainty: Duration,
}

/// A current-thread runtime with only the timer enabled, as every tokio loop in the
/// book builds it, and where its ticks start.
pub fn timer_runtime() -> io::Result<(tokio::runtime::Runtime, Ticks)> {
    let before = Instant::now();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let after = Instant::now();
    let uncertainty = after - before;
    let origin = before + uncertainty / 2;
    Ok((
        rt,
        Ticks {
            origin,
            uncertainty,
        },
    ))
}
// ANCHOR_END: ticks

// ANCHOR: phase
impl Ticks {
    /// How far into its tick `t` lies, in nanoseconds.
    pub fn phase_ns(&self, t: Instant) -> u64 {
        let since = t.saturating_duration_since(self.origin).as_nanos();
        (since % u128::from(TICK_NS)) as u64
    }

    /// Waits until the clock is `phase_ns` into a tick and returns that moment: sleeps
    /// until shortly before a moment at that phase at least 1.2 ms away, then spins the
    /// rest, so that the thread arrives from a sleep, as a sleeping loop does, having
    /// spun for a fraction of a millisecond at most (on time, about a quarter).
    pub fn wait_for_phase(&self, phase_ns: u64) -> Instant {
        let tick = Duration::from_nanos(TICK_NS);
        let soon = Instant::now() + Duration::from_micros(1_200);
        let wait = (phase_ns + TICK_NS - self.phase_ns(soon)) % TICK_NS;
        let mut target = soon + Duration::from_nanos(wait);
        let early = target - Duration::from_micros(250);
        std::thread::sleep(early.saturating_duration_since(Instant::now()));
        while Instant::now() > target {
            target += tick;
        }
        let mut now = Instant::now();
        while now < target {
            std::hint::spin_loop();
            now = Instant::now();
        }
        now
    }
}
// ANCHOR_END: phase

/// How a 1 ms-scale sleep of the `millisecond` experiment is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MsArm {
    /// `tokio::time::sleep(request)`, begun at a chosen phase of a tick.
    Tokio { request_us: u32, bin: u32 },
    /// `std::thread::sleep(request)`, begun at a chosen phase (the control).
    Std { request_us: u32, bin: u32 },
    /// `std::thread::sleep(1 ms)` right after a sleep of `before_ms`.
    After { before_ms: u32 },
}

/// The phase bins: tenths of a tick.
pub const PHASE_BINS: u32 = 10;

/// The middle of a phase bin, in nanoseconds into the tick.
pub fn bin_centre_ns(bin: u32) -> u64 {
    (u64::from(bin) * 2 + 1) * TICK_NS / (2 * u64::from(PHASE_BINS))
}

/// One timed sleep of the `millisecond` experiment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhasedSleep {
    /// How far into its tick the sleep began (ns).
    pub phase_ns: f64,
    /// Actual minus requested length (ns).
    pub late_ns: f64,
}

// ANCHOR: phased_sleep
/// One sleep begun `phase_ns` into a tick: spin to that moment, then sleep, and time
/// the sleep from that moment.
pub fn phased_sleep(
    rt: &tokio::runtime::Runtime,
    ticks: &Ticks,
    tokio: bool,
    request: Duration,
    phase_ns: u64,
) -> PhasedSleep {
    let (start, end) = if tokio {
        rt.block_on(async {
            let start = ticks.wait_for_phase(phase_ns);
            tokio::time::sleep(request).await;
            (start, Instant::now())
        })
    } else {
        let start = ticks.wait_for_phase(phase_ns);
        std::thread::sleep(request);
        (start, Instant::now())
    };
    PhasedSleep {
        phase_ns: ticks.phase_ns(start) as f64,
        late_ns: (end - start).as_nanos() as f64 - request.as_nanos() as f64,
    }
}
// ANCHOR_END: phased_sleep

// ANCHOR: tick_models
/// How late a tokio sleep of `request_ns` begun `phase_ns` into a tick ends, before
/// the wake-up's own cost, by each reading of its timer (`runtime/time/source.rs` and
/// `park_internal` in `runtime/time/mod.rs`, tokio 1.54). Both round the deadline up
/// to the end of its millisecond (`deadline_to_tick`). *Next tick*: the thread wakes
/// at that tick. *Whole ticks*: the driver parks for the number of whole ticks from
/// the tick it is in (`now`, rounded down) to the deadline's, counted from the moment
/// it parks, so it wakes as far past the deadline's tick as the sleep began past its
/// own.
pub fn tick_models(request_ns: f64, phase_ns: f64) -> (f64, f64) {
    let tick = TICK_NS as f64;
    let deadline = phase_ns + request_ns;
    let when = (deadline / tick).ceil() * tick;
    let next_tick = when - deadline;
    let whole_ticks = phase_ns + when - deadline;
    (next_tick, whole_ticks)
}
// ANCHOR_END: tick_models

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
    /// `thread::sleep, slack 1 ns`: the mode as the tables and notes name it (its
    /// readings are stored as [`experiments::SweepKey`] spells them).
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

// ---------------------------------------------------------------------------------
// Did a single sleep block? And what do the clocks cost?
// ---------------------------------------------------------------------------------

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
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        harness::stats::median_sorted(&v)
    };
    (med(wall), cpu_ok.then(|| med(cpu)))
}

// ---------------------------------------------------------------------------------
// A yield with something to yield to: a busy thread on the measuring thread's CPU
// ---------------------------------------------------------------------------------

/// The calls whose yielding the competitor experiment tests.
#[cfg(unix)]
pub const YIELD_CALLS: [Call; 2] = [Call::SchedYield, Call::Pselect(ZERO)];

/// Without `sched_yield` and `pselect`, the standard library's yield and zero sleep
/// (the experiment reports that pinning is not available here anyway).
#[cfg(not(unix))]
pub const YIELD_CALLS: [Call; 2] = [Call::YieldNow, Call::StdSleep(ZERO)];

// ANCHOR: competitor
/// Runs `f` with the calling thread pinned to the CPU it is on, and, if `busy`, a
/// second thread pinned to the same CPU spinning all the while: a thread that always
/// wants that CPU, so that a call that yields has someone to yield to. The thread's
/// old CPU mask is restored afterwards. Linux only (`sched_setaffinity`).
#[cfg(target_os = "linux")]
pub fn on_one_cpu<T>(busy: bool, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let _pinned = os::PinGuard::here()?;
    let cpu = _pinned.cpu;
    if !busy {
        return f();
    }
    let (ready, stop) = (AtomicBool::new(false), AtomicBool::new(false));
    std::thread::scope(|s| {
        let spinner = s.spawn(|| {
            let pinned = os::pin_to(cpu);
            ready.store(true, Ordering::Release);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            pinned
        });
        // Until the spinner runs, this thread gives it the CPU they share.
        while !ready.load(Ordering::Acquire) && !spinner.is_finished() {
            std::thread::yield_now();
        }
        let out = f();
        stop.store(true, Ordering::Relaxed);
        let pinned = spinner
            .join()
            .map_err(|_| io::Error::other("the busy thread panicked"))?;
        pinned.and(out)
    })
}
// ANCHOR_END: competitor

/// Pinning a thread is Linux-only here.
#[cfg(not(target_os = "linux"))]
pub fn on_one_cpu<T>(_busy: bool, _f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "pinning a thread to one CPU (sched_setaffinity) is Linux-only in this chapter",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
