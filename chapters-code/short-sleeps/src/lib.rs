//! Chapter 3 of *The Cost of Waiting*: how long a sleep of zero and of one nanosecond
//! really takes, on each operating system, and what Linux timer slack does to it.
//!
//! Two experiments: `calls` times loops of back-to-back calls of every variant,
//! interleaved over repetitions (the write-up's method), and `sweep` compares the
//! requested and the actual length of single sleeps from 1 µs to 10 ms.

pub mod os;
pub mod views;

use harness::{Ctx, Experiment, MeanCi, NoteKind, Summary, View, ViewKind};
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::io;
use std::time::{Duration, Instant};

pub const CHAPTER: harness::Chapter = harness::Chapter {
    name: env!("CARGO_PKG_NAME"),
    dir: env!("CARGO_MANIFEST_DIR"),
    experiments: &[
        Experiment {
            name: "calls",
            about: "loops of sleep(0), sleep(1 ns), yields and timers, interleaved repetitions",
            bound: |p| p.pick(Duration::from_secs(12), Duration::from_secs(110)),
            run: run_calls,
        },
        Experiment {
            name: "sweep",
            about: "requested vs actual sleep length from 1 µs to 10 ms, with and without slack",
            bound: |p| p.pick(Duration::from_secs(8), Duration::from_secs(60)),
            run: run_sweep,
        },
    ],
    views: &[
        View {
            name: "calls",
            kind: ViewKind::Table,
            experiment: "calls",
            render: views::calls_table,
        },
        View {
            name: "slack",
            kind: ViewKind::Table,
            experiment: "calls",
            render: views::slack_table,
        },
        View {
            name: "reference",
            kind: ViewKind::Table,
            experiment: "calls",
            render: views::reference_table,
        },
        View {
            name: "sweep",
            kind: ViewKind::Table,
            experiment: "sweep",
            render: views::sweep_table,
        },
        View {
            name: "sweep-mean",
            kind: ViewKind::Plot,
            experiment: "sweep",
            render: views::sweep_mean_plot,
        },
        View {
            name: "sweep-p99",
            kind: ViewKind::Plot,
            experiment: "sweep",
            render: views::sweep_p99_plot,
        },
    ],
};

// ---------------------------------------------------------------------------------
// One loop of calls
// ---------------------------------------------------------------------------------

/// What one loop of calls cost, per call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Wall-clock time per call (monotonic clock).
    pub ns: f64,
    /// CPU time the measuring thread spent per call, where the OS tells it.
    pub cpu_ns: Option<f64>,
    /// Voluntary context switches per call (the thread blocked), where the OS tells it.
    pub voluntary: Option<f64>,
    /// Involuntary context switches per call (the thread was preempted).
    pub involuntary: Option<f64>,
}

/// Counters read just before a loop starts.
pub struct Before {
    cpu: Option<Duration>,
    switches: Option<(u64, u64)>,
    start: Instant,
}

impl Before {
    pub fn now() -> Before {
        let cpu = harness::thread_cpu_time();
        let switches = context_switches();
        Before {
            cpu,
            switches,
            start: Instant::now(),
        }
    }

    /// The per-call sample of a loop of `calls` that ran for `elapsed`.
    pub fn sample(self, calls: u32, elapsed: Duration) -> Sample {
        let n = f64::from(calls.max(1));
        let cpu_after = harness::thread_cpu_time();
        let switches_after = context_switches();
        let per = |v: f64| v / n;
        Sample {
            ns: per(elapsed.as_nanos() as f64),
            cpu_ns: self
                .cpu
                .zip(cpu_after)
                .map(|(a, b)| per(b.saturating_sub(a).as_nanos() as f64)),
            voluntary: self
                .switches
                .zip(switches_after)
                .map(|(a, b)| per(b.0.saturating_sub(a.0) as f64)),
            involuntary: self
                .switches
                .zip(switches_after)
                .map(|(a, b)| per(b.1.saturating_sub(a.1) as f64)),
        }
    }
}

#[cfg(unix)]
fn context_switches() -> Option<(u64, u64)> {
    os::context_switches()
}

#[cfg(not(unix))]
fn context_switches() -> Option<(u64, u64)> {
    None
}

// ANCHOR: per_call
/// Calls `call` `calls` times back to back and returns the cost per call. The loop is
/// the write-up's: the only other work is an xor the optimiser must keep.
pub fn per_call(calls: u32, mut call: impl FnMut() -> io::Result<()>) -> io::Result<Sample> {
    let before = Before::now();
    let mut guard = 0u32;
    for i in 0..calls {
        call()?;
        guard ^= black_box(i);
    }
    let elapsed = before.start.elapsed();
    black_box(guard);
    Ok(before.sample(calls, elapsed))
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
        let before = Before::now();
        for _ in 0..calls {
            tokio::time::sleep(request).await;
        }
        let elapsed = before.start.elapsed();
        before.sample(calls, elapsed)
    }))
}
// ANCHOR_END: tokio_sleep

/// Plain `std::thread::sleep`, as a fallible call for [`per_call`].
fn std_sleep(d: Duration) -> io::Result<()> {
    std::thread::sleep(d);
    Ok(())
}

const NS1: Duration = Duration::from_nanos(1);
const MS1: Duration = Duration::from_millis(1);

// ---------------------------------------------------------------------------------
// The variants, per OS
// ---------------------------------------------------------------------------------

/// The argument a variant passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arg {
    /// No call at all: the loop alone.
    None,
    Zero,
    OneNs,
    /// The smallest unit of the API, when it is not 1 ns (100 ns for Windows timers).
    Smallest,
    OneMs,
}

impl Arg {
    pub fn label(self) -> &'static str {
        match self {
            Arg::None => "–",
            Arg::Zero => "0",
            Arg::OneNs => "1 ns",
            Arg::Smallest => "100 ns",
            Arg::OneMs => "1 ms",
        }
    }
}

/// One way of sleeping or yielding, timed as a loop of `calls` calls.
pub struct Variant {
    /// A stable key, also used by the reference data.
    pub id: &'static str,
    /// What the table calls it (Markdown).
    pub label: &'static str,
    pub arg: Arg,
    /// Whether Linux timer slack can lengthen it (measured again with slack 1 ns).
    pub sleeps: bool,
    /// Whether a call takes milliseconds (such loops run fewer calls).
    pub slow: bool,
    pub run: fn(u32) -> io::Result<Sample>,
}

// ANCHOR: variants_linux
#[cfg(target_os = "linux")]
#[rustfmt::skip]
pub const VARIANTS: &[Variant] = &[
    Variant { id: "ground-truth", label: "empty loop (ground truth)", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, || Ok(())) },
    Variant { id: "std-sleep-0", label: "`std::thread::sleep`", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || std_sleep(Duration::ZERO)) },
    Variant { id: "nanosleep-0", label: "`nanosleep`", arg: Arg::Zero, sleeps: true, slow: false,
        run: |n| per_call(n, || os::nanosleep(Duration::ZERO)) },
    Variant { id: "pselect-0", label: "`pselect`", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || os::pselect(Duration::ZERO)) },
    Variant { id: "sched-yield", label: "`sched_yield`", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, os::sched_yield) },
    Variant { id: "yield-now", label: "`std::thread::yield_now`", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, || { std::thread::yield_now(); Ok(()) }) },
    Variant { id: "std-sleep-1ns", label: "`std::thread::sleep`", arg: Arg::OneNs, sleeps: true, slow: false,
        run: |n| per_call(n, || std_sleep(NS1)) },
    Variant { id: "nanosleep-1ns", label: "`nanosleep`", arg: Arg::OneNs, sleeps: true, slow: false,
        run: |n| per_call(n, || os::nanosleep(NS1)) },
    Variant { id: "clock-nanosleep-1ns", label: "`clock_nanosleep` (monotonic)", arg: Arg::OneNs, sleeps: true, slow: false,
        run: |n| per_call(n, || os::clock_nanosleep(NS1)) },
    Variant { id: "pselect-1ns", label: "`pselect`", arg: Arg::OneNs, sleeps: true, slow: false,
        run: |n| per_call(n, || os::pselect(NS1)) },
    Variant { id: "timerfd-recreate-1ns", label: "`timerfd`, created per call", arg: Arg::OneNs, sleeps: true, slow: false,
        run: |n| per_call(n, || {
            let timer = os::TimerFd::new()?;
            timer.set_oneshot(NS1)?;
            timer.wait().map(drop)
        }) },
    Variant { id: "timerfd-reuse-1ns", label: "`timerfd`, re-armed one-shot", arg: Arg::OneNs, sleeps: true, slow: false,
        run: |n| {
            let timer = os::TimerFd::new()?;
            per_call(n, || {
                timer.set_oneshot(NS1)?;
                timer.wait().map(drop)
            })
        } },
    Variant { id: "timerfd-interval-1ns", label: "`timerfd`, 1 ns interval", arg: Arg::OneNs, sleeps: true, slow: false,
        run: |n| {
            let timer = os::TimerFd::new()?;
            timer.set_interval(NS1)?;
            per_call(n, || timer.wait().map(drop))
        } },
    Variant { id: "tokio-sleep-1ns", label: "`tokio::time::sleep`", arg: Arg::OneNs, sleeps: true, slow: true,
        run: |n| tokio_sleep(n, NS1) },
    Variant { id: "std-sleep-1ms", label: "`std::thread::sleep`", arg: Arg::OneMs, sleeps: true, slow: true,
        run: |n| per_call(n, || std_sleep(MS1)) },
    Variant { id: "tokio-sleep-1ms", label: "`tokio::time::sleep`", arg: Arg::OneMs, sleeps: true, slow: true,
        run: |n| tokio_sleep(n, MS1) },
];
// ANCHOR_END: variants_linux

/// macOS and the BSDs: the POSIX calls, but no timerfd, no clock_nanosleep in every
/// libc, and no timer slack to set.
#[cfg(all(unix, not(target_os = "linux")))]
#[rustfmt::skip]
pub const VARIANTS: &[Variant] = &[
    Variant { id: "ground-truth", label: "empty loop (ground truth)", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, || Ok(())) },
    Variant { id: "std-sleep-0", label: "`std::thread::sleep`", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || std_sleep(Duration::ZERO)) },
    Variant { id: "nanosleep-0", label: "`nanosleep`", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || os::nanosleep(Duration::ZERO)) },
    Variant { id: "pselect-0", label: "`pselect`", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || os::pselect(Duration::ZERO)) },
    Variant { id: "sched-yield", label: "`sched_yield`", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, os::sched_yield) },
    Variant { id: "yield-now", label: "`std::thread::yield_now`", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, || { std::thread::yield_now(); Ok(()) }) },
    Variant { id: "std-sleep-1ns", label: "`std::thread::sleep`", arg: Arg::OneNs, sleeps: false, slow: false,
        run: |n| per_call(n, || std_sleep(NS1)) },
    Variant { id: "nanosleep-1ns", label: "`nanosleep`", arg: Arg::OneNs, sleeps: false, slow: false,
        run: |n| per_call(n, || os::nanosleep(NS1)) },
    Variant { id: "pselect-1ns", label: "`pselect`", arg: Arg::OneNs, sleeps: false, slow: false,
        run: |n| per_call(n, || os::pselect(NS1)) },
    Variant { id: "tokio-sleep-1ns", label: "`tokio::time::sleep`", arg: Arg::OneNs, sleeps: false, slow: true,
        run: |n| tokio_sleep(n, NS1) },
    Variant { id: "std-sleep-1ms", label: "`std::thread::sleep`", arg: Arg::OneMs, sleeps: false, slow: true,
        run: |n| per_call(n, || std_sleep(MS1)) },
    Variant { id: "tokio-sleep-1ms", label: "`tokio::time::sleep`", arg: Arg::OneMs, sleeps: false, slow: true,
        run: |n| tokio_sleep(n, MS1) },
];

// ANCHOR: variants_windows
#[cfg(windows)]
#[rustfmt::skip]
pub const VARIANTS: &[Variant] = &[
    Variant { id: "ground-truth", label: "empty loop (ground truth)", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, || Ok(())) },
    Variant { id: "std-sleep-0", label: "`std::thread::sleep`", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || std_sleep(Duration::ZERO)) },
    Variant { id: "win-sleep-0", label: "`Sleep`", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || { os::win_sleep(0); Ok(()) }) },
    Variant { id: "win-sleepex-0", label: "`SleepEx` (not alertable)", arg: Arg::Zero, sleeps: false, slow: false,
        run: |n| per_call(n, || { os::win_sleep_ex(0); Ok(()) }) },
    Variant { id: "yield-now", label: "`std::thread::yield_now`", arg: Arg::None, sleeps: false, slow: false,
        run: |n| per_call(n, || { std::thread::yield_now(); Ok(()) }) },
    Variant { id: "std-sleep-1ns", label: "`std::thread::sleep`", arg: Arg::OneNs, sleeps: false, slow: true,
        run: |n| per_call(n, || std_sleep(NS1)) },
    Variant { id: "waitable-timer-100ns", label: "high-resolution waitable timer", arg: Arg::Smallest, sleeps: false, slow: true,
        run: |n| {
            let timer = os::WaitableTimer::new()?;
            per_call(n, || timer.sleep(Duration::from_nanos(100)))
        } },
    Variant { id: "std-sleep-1ms", label: "`std::thread::sleep`", arg: Arg::OneMs, sleeps: false, slow: true,
        run: |n| per_call(n, || std_sleep(MS1)) },
    Variant { id: "win-sleep-1ms", label: "`Sleep`", arg: Arg::OneMs, sleeps: false, slow: true,
        run: |n| per_call(n, || { os::win_sleep(1); Ok(()) }) },
    Variant { id: "win-sleepex-1ms", label: "`SleepEx` (not alertable)", arg: Arg::OneMs, sleeps: false, slow: true,
        run: |n| per_call(n, || { os::win_sleep_ex(1); Ok(()) }) },
    Variant { id: "tokio-sleep-1ns", label: "`tokio::time::sleep`", arg: Arg::OneNs, sleeps: false, slow: true,
        run: |n| tokio_sleep(n, NS1) },
    Variant { id: "tokio-sleep-1ms", label: "`tokio::time::sleep`", arg: Arg::OneMs, sleeps: false, slow: true,
        run: |n| tokio_sleep(n, MS1) },
];
// ANCHOR_END: variants_windows

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
// Experiment `calls`: interleaved repetitions, mean ± 99.9 % CI
// ---------------------------------------------------------------------------------

/// Which timer slack a row ran with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Slack {
    /// Whatever the thread had (on Linux, normally 50 µs).
    Default,
    /// `prctl(PR_SET_TIMERSLACK, 1)` on the measuring thread.
    OneNs,
}

/// One variant under one slack: a sample per completed repetition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CallRow {
    pub id: String,
    pub label: String,
    pub arg: Arg,
    pub slack: Slack,
    pub sleeps: bool,
    /// Calls per repetition.
    pub calls: u32,
    /// Mean time per call over the repetitions, with its 99.9 % CI.
    pub per_call: Option<MeanCi>,
    pub cpu_per_call: Option<MeanCi>,
    pub voluntary_per_call: Option<f64>,
    pub involuntary_per_call: Option<f64>,
    /// Why the variant could not run, if it could not.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CallsData {
    pub calls: u32,
    pub slow_calls: u32,
    pub reps_planned: u32,
    pub reps_done: u32,
    /// The measuring thread's timer slack before anything changed it (Linux).
    pub thread_slack_ns: Option<u64>,
    /// `/proc/self/timerslack_ns` (Linux).
    pub proc_slack_ns: Option<u64>,
    pub rows: Vec<CallRow>,
}

/// The per-repetition samples of one (variant, slack) cell.
struct Cell {
    variant: &'static Variant,
    slack: Slack,
    calls: u32,
    samples: Vec<Sample>,
    error: Option<String>,
}

/// Runs one loop of a variant under the given slack, on the calling thread.
fn run_cell(variant: &Variant, slack: Slack, calls: u32) -> io::Result<Sample> {
    match slack {
        Slack::Default => (variant.run)(calls),
        Slack::OneNs => with_min_slack(|| (variant.run)(calls)),
    }
}

// ANCHOR: with_min_slack
/// Runs `f` with this thread's timer slack at 1 ns, then restores the old slack.
#[cfg(target_os = "linux")]
pub fn with_min_slack<T>(f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let _restore_on_drop = os::SlackGuard::set(1)?;
    f()
}
// ANCHOR_END: with_min_slack

#[cfg(not(target_os = "linux"))]
pub fn with_min_slack<T>(_f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "per-thread timer slack is Linux-only",
    ))
}

/// The plan: every variant under the default slack, and the sleeping ones again with
/// slack 1 ns where the OS has slack.
fn plan(calls: u32, slow_calls: u32) -> Vec<Cell> {
    let mut cells = Vec::new();
    for slack in [Slack::Default, Slack::OneNs] {
        for v in VARIANTS {
            if slack == Slack::OneNs && !(cfg!(target_os = "linux") && v.sleeps) {
                continue;
            }
            cells.push(Cell {
                variant: v,
                slack,
                calls: if v.slow { slow_calls } else { calls },
                samples: Vec::new(),
                error: None,
            });
        }
    }
    cells
}

// ANCHOR: interleave
/// Runs `reps` repetitions; each repetition runs every cell once, starting at a
/// different cell each time so no variant always follows the same neighbour.
fn interleave(ctx: &mut Ctx, cells: &mut [Cell], reps: u32) -> u32 {
    let bar = ctx.progress(u64::from(reps) * cells.len() as u64, "interleaved loops");
    let mut done = 0;
    'reps: for rep in 0..reps as usize {
        for k in 0..cells.len() {
            if ctx.past_deadline() {
                break 'reps;
            }
            let cell = &mut cells[(rep + k) % cells.len()];
            if cell.error.is_none() {
                match run_cell(cell.variant, cell.slack, cell.calls) {
                    Ok(sample) => cell.samples.push(sample),
                    Err(e) => cell.error = Some(e.to_string()),
                }
            }
            bar.inc(1);
        }
        done += 1;
    }
    bar.finish_and_clear();
    done
}
// ANCHOR_END: interleave

fn mean_ci_of(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> Option<MeanCi> {
    let v: Option<Vec<f64>> = samples.iter().map(f).collect();
    MeanCi::of(&v?)
}

fn mean_of(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
    mean_ci_of(samples, f).map(|m| m.mean)
}

fn run_calls(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let calls = ctx.param("calls per repetition", ctx.profile.pick(1_000, 3_000));
    let slow_calls = ctx.param("calls per repetition (ms-scale)", ctx.profile.pick(20, 100));
    let reps = ctx.param("repetitions", ctx.profile.pick(5, 20));
    ctx.param("confidence", "99.9 %");
    let (thread_slack_ns, proc_slack_ns) = read_slack(ctx);
    let unsupported = unsupported_here();
    if !unsupported.is_empty() {
        ctx.note(NoteKind::Unsupported, unsupported);
    }

    let mut cells = plan(calls, slow_calls);
    let reps_done = interleave(ctx, &mut cells, reps);
    if reps_done < reps {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "the time bound stopped the run after {reps_done} of {reps} repetitions; \
                 the intervals are wider than planned"
            ),
        );
    }
    for c in cells.iter().filter(|c| c.error.is_some()) {
        ctx.note(
            NoteKind::Unsupported,
            format!(
                "{} ({}) could not run here: {}",
                c.variant.label,
                c.variant.arg.label(),
                c.error.as_deref().unwrap_or_default()
            ),
        );
    }
    let rows = cells
        .iter()
        .map(|c| CallRow {
            id: c.variant.id.into(),
            label: c.variant.label.into(),
            arg: c.variant.arg,
            slack: c.slack,
            sleeps: c.variant.sleeps,
            calls: c.calls,
            per_call: mean_ci_of(&c.samples, |s| Some(s.ns)),
            cpu_per_call: mean_ci_of(&c.samples, |s| s.cpu_ns),
            voluntary_per_call: mean_of(&c.samples, |s| s.voluntary),
            involuntary_per_call: mean_of(&c.samples, |s| s.involuntary),
            error: c.error.clone(),
        })
        .collect();
    Ok(serde_json::to_value(CallsData {
        calls,
        slow_calls,
        reps_planned: reps,
        reps_done,
        thread_slack_ns,
        proc_slack_ns,
        rows,
    })?)
}

/// Reads the timer slack (Linux), recording it as parameters; a failure is a note.
#[cfg(target_os = "linux")]
fn read_slack(ctx: &mut Ctx) -> (Option<u64>, Option<u64>) {
    let thread = match os::timer_slack() {
        Ok(ns) => Some(ctx.param("timer slack of the measuring thread (ns)", ns)),
        Err(e) => {
            ctx.note(NoteKind::Info, format!("PR_GET_TIMERSLACK failed: {e}"));
            None
        }
    };
    let proc = match os::proc_timer_slack() {
        Ok(ns) => Some(ns),
        Err(e) => {
            ctx.note(
                NoteKind::Info,
                format!("/proc/self/timerslack_ns could not be read: {e}"),
            );
            None
        }
    };
    (thread, proc)
}

#[cfg(not(target_os = "linux"))]
fn read_slack(_ctx: &mut Ctx) -> (Option<u64>, Option<u64>) {
    (None, None)
}

// ---------------------------------------------------------------------------------
// Experiment `sweep`: requested vs actual
// ---------------------------------------------------------------------------------

// ANCHOR: hybrid
/// Sleeps natively until `margin` before the deadline, then spins the rest, yielding
/// the CPU on each turn (the idea behind the `spin_sleep` crate). Accurate, at the
/// price of the CPU time the spinning burns.
pub fn hybrid_sleep(request: Duration, margin: Duration) {
    let deadline = Instant::now() + request;
    if request > margin {
        std::thread::sleep(request - margin);
    }
    while Instant::now() < deadline {
        std::thread::yield_now();
    }
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
    /// `std::thread::sleep` with slack 1 ns (Linux).
    SleepMinSlack,
    /// A timerfd re-armed one-shot (Linux).
    TimerFd,
    /// Native sleep then spin ([`hybrid_sleep`]).
    Hybrid,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::Sleep => "thread::sleep",
            Mode::SleepMinSlack => "thread::sleep, slack 1 ns",
            Mode::TimerFd => "timerfd one-shot",
            Mode::Hybrid => "sleep + spin (hybrid)",
        }
    }

    pub fn available() -> &'static [Mode] {
        if cfg!(target_os = "linux") {
            &[
                Mode::Sleep,
                Mode::SleepMinSlack,
                Mode::TimerFd,
                Mode::Hybrid,
            ]
        } else {
            &[Mode::Sleep, Mode::Hybrid]
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepPoint {
    pub mode: Mode,
    pub request_ns: f64,
    /// Actual lengths of single sleeps.
    pub actual: Summary,
    /// Mean CPU time of the measuring thread per sleep.
    pub cpu_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepData {
    pub margin_ns: f64,
    pub points: Vec<SweepPoint>,
}

/// One timed sleep: its actual length and the CPU time it used, in nanoseconds.
type Timed = (f64, Option<f64>);

// ANCHOR: one_sleep
/// Times single sleeps of `request` in `mode`; returns (actual ns, CPU ns) per sleep.
fn timed_sleeps(
    mode: Mode,
    request: Duration,
    margin: Duration,
    count: usize,
) -> io::Result<Vec<Timed>> {
    #[cfg(target_os = "linux")]
    let timer = os::TimerFd::new()?;
    #[cfg(target_os = "linux")]
    let _slack = match mode {
        Mode::SleepMinSlack => Some(os::SlackGuard::set(1)?),
        _ => None,
    };
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let cpu0 = harness::thread_cpu_time();
        let start = Instant::now();
        match mode {
            Mode::Sleep | Mode::SleepMinSlack => std::thread::sleep(request),
            Mode::Hybrid => hybrid_sleep(request, margin),
            #[cfg(target_os = "linux")]
            Mode::TimerFd => {
                timer.set_oneshot(request)?;
                timer.wait()?;
            }
            #[cfg(not(target_os = "linux"))]
            Mode::TimerFd => return Err(io::ErrorKind::Unsupported.into()),
        }
        let actual = start.elapsed().as_nanos() as f64;
        let cpu = cpu0
            .zip(harness::thread_cpu_time())
            .map(|(a, b)| b.saturating_sub(a).as_nanos() as f64);
        out.push((actual, cpu));
    }
    Ok(out)
}
// ANCHOR_END: one_sleep

/// How many single sleeps to take of `request`: enough for a p99 at short requests,
/// bounded in time at long ones.
pub fn sweep_count(request: Duration, budget: Duration, min: usize, max: usize) -> usize {
    let per = request.as_nanos().max(1);
    let n = (budget.as_nanos() / per) as usize;
    n.clamp(min, max)
}

/// The hybrid sleeper's margin: the 90th percentile of how long a 1 µs native sleep
/// takes on this machine, kept between 10 µs and 500 µs.
pub fn calibrate_margin() -> Duration {
    let over: Vec<f64> = (0..100)
        .map(|_| {
            let t = Instant::now();
            std::thread::sleep(Duration::from_micros(1));
            t.elapsed().as_nanos() as f64
        })
        .collect();
    let mut sorted = over;
    sorted.sort_by(f64::total_cmp);
    let p90 = harness::stats::percentile_sorted(&sorted, 0.90);
    Duration::from_nanos(p90 as u64).clamp(Duration::from_micros(10), Duration::from_micros(500))
}

fn run_sweep(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let budget = Duration::from_millis(ctx.profile.pick(30, 300));
    let (min, max) = ctx.profile.pick((20, 300), (100, 2_000));
    ctx.param(
        "sleeps per point",
        format!("{min}–{max}, about {} ms each", budget.as_millis()),
    );
    let rounds = ctx.param("interleaved rounds", ctx.profile.pick(2usize, 5));
    let margin = calibrate_margin();
    ctx.param(
        "hybrid margin",
        harness::render::fmt_ns(margin.as_nanos() as f64),
    );
    let unsupported = unsupported_here();
    if !unsupported.is_empty() {
        ctx.note(NoteKind::Unsupported, unsupported);
    }
    let requests = sweep_requests();
    let modes = Mode::available();
    let mut samples: Vec<Vec<Vec<Timed>>> = vec![vec![Vec::new(); requests.len()]; modes.len()];
    let mut failed: Vec<Option<String>> = vec![None; modes.len()];
    let bar = ctx.progress((rounds * requests.len()) as u64, "requested vs actual");
    let mut stopped = None;
    'rounds: for round in 0..rounds {
        for (ri, &request) in requests.iter().enumerate() {
            let count = sweep_count(request, budget, min, max).div_ceil(rounds);
            for k in 0..modes.len() {
                let mi = (round + ri + k) % modes.len();
                if failed[mi].is_some() {
                    continue;
                }
                if ctx.past_deadline() {
                    stopped = Some((round, request));
                    break 'rounds;
                }
                match timed_sleeps(modes[mi], request, margin, count) {
                    Ok(s) => samples[mi][ri].extend(s),
                    Err(e) => failed[mi] = Some(e.to_string()),
                }
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    if let Some((round, request)) = stopped {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "the time bound stopped the sweep in round {} of {rounds}, at a request of {}; \
                 later points have fewer samples",
                round + 1,
                harness::render::fmt_ns(request.as_nanos() as f64)
            ),
        );
    }
    for (mi, e) in failed.iter().enumerate() {
        if let Some(e) = e {
            ctx.note(
                NoteKind::Unsupported,
                format!("{} could not run here: {e}", modes[mi].label()),
            );
        }
    }
    let mut points = Vec::new();
    for (mi, mode) in modes.iter().enumerate() {
        for (ri, request) in requests.iter().enumerate() {
            let s = &samples[mi][ri];
            let actual: Vec<f64> = s.iter().map(|x| x.0).collect();
            let Some(summary) = Summary::of(&actual) else {
                continue;
            };
            let cpu: Option<Vec<f64>> = s.iter().map(|x| x.1).collect();
            points.push(SweepPoint {
                mode: *mode,
                request_ns: request.as_nanos() as f64,
                actual: summary,
                cpu_ns: cpu.and_then(|c| MeanCi::of(&c)).map(|m| m.mean),
            });
        }
    }
    Ok(serde_json::to_value(SweepData {
        margin_ns: margin.as_nanos() as f64,
        points,
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ns: f64) -> Sample {
        Sample {
            ns,
            cpu_ns: Some(ns / 2.0),
            voluntary: Some(1.0),
            involuntary: None,
        }
    }

    #[test]
    fn mean_and_99_9_percent_interval_over_repetitions() {
        // 20 repetitions alternating 90 and 110: mean 100, sample sd 10.26,
        // t(0.9995, 19) = 3.883, so the half-width is 3.883 · 10.26 / √20.
        let reps: Vec<Sample> = (0..20)
            .map(|i| sample(if i % 2 == 0 { 90.0 } else { 110.0 }))
            .collect();
        let m = mean_ci_of(&reps, |s| Some(s.ns)).unwrap();
        assert_eq!(m.n, 20);
        assert!((m.mean - 100.0).abs() < 1e-9);
        let sd = (20.0f64 * 100.0 / 19.0).sqrt();
        assert!((m.stddev - sd).abs() < 1e-9, "{}", m.stddev);
        let expected = 3.8834 * sd / 20f64.sqrt();
        assert!((m.half_width - expected).abs() < 1e-2, "{}", m.half_width);
        assert_eq!(mean_of(&reps, |s| s.cpu_ns), Some(50.0));
        // A counter the OS does not give is absent, not zero.
        assert_eq!(mean_of(&reps, |s| s.involuntary), None);
        assert!(mean_ci_of(&[], |s| Some(s.ns)).is_none());
    }

    #[test]
    fn plan_measures_sleeping_variants_twice_only_on_linux() {
        let cells = plan(10, 2);
        let defaults = cells.iter().filter(|c| c.slack == Slack::Default).count();
        assert_eq!(defaults, VARIANTS.len());
        let min = cells.iter().filter(|c| c.slack == Slack::OneNs).count();
        if cfg!(target_os = "linux") {
            assert_eq!(min, VARIANTS.iter().filter(|v| v.sleeps).count());
            assert!(min > 0);
        } else {
            assert_eq!(min, 0);
        }
        for c in &cells {
            assert_eq!(c.calls, if c.variant.slow { 2 } else { 10 });
        }
    }

    #[test]
    fn variant_ids_are_unique() {
        let mut ids: Vec<&str> = VARIANTS.iter().map(|v| v.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), VARIANTS.len());
    }
}
