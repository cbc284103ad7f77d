//! The chapter's experiments: what one round runs, with which parameters, and the one
//! value per variant each round is summarised by.
//!
//! - `calls`: one round is one loop of every (variant, slack) cell, in the round's
//!   order (a row of a balanced Latin square, `Ctx::rotated`) — the write-up's
//!   interleaved repetitions, one repetition per round, each round in a fresh
//!   process. The round's reading for a cell is that loop's time per call; for a call
//!   that takes milliseconds (a loop of few calls), the median of its calls.
//! - `sweep`: one round is a batch of single sleeps at every (request, way of
//!   sleeping) point, ordered the same way; the round's reading for a point is the
//!   median of how late its sleeps ended (its key ends in `late by`).
//!
//! Each experiment's readings are named by a key type of its own ([`CallsKey`],
//! [`SweepKey`], [`MsArm`], [`YieldKey`]): the views and the headline figures ask for a
//! reading by what it is, and the string a record stores it under is written from the
//! mechanism's own names ([`ReadingKey::stored`]; `Call::name`, `fmt_request`), which
//! are inside the code key.

use crate::{
    Batch, Call, Mode, MsArm, PHASE_BINS, PhasedSleep, Sample, Slack, TICK_NS, VARIANTS, Variant,
    bin_centre_ns, bounded_loop, calibrate_margin, fmt_request, phased_sleep, sweep_count,
    sweep_requests, timed_sleeps, timer_runtime, unsupported_here, with_slack,
};
use harness::bounds::{Limit, Params, RoundBounds};
use harness::record::twin_key;
use harness::render::fmt_count;
use harness::{Budget, Ctx, Dist, Experiment, Keyed, NoteKind, Param, Reading, ReadingKey, Unit};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

pub const CALLS: Param = Param::int("calls", 10, 1_000_000)
    .defaults(500, 3_000)
    .unit("per loop")
    .about("calls in one loop of a variant that takes microseconds or less (the write-up's program made 3,000)");
pub const SLOW_CALLS: Param = Param::int("slow_calls", 2, 100_000)
    .defaults(10, 100)
    .unit("per loop")
    .about("calls in one loop of a variant that takes milliseconds: the 1 ms sleeps and tokio's sleeps");
pub const LOW_SLACK_NS: Param = Param::int("low_slack_ns", 1, 1_000_000_000)
    .defaults(1, 1)
    .unit("ns")
    .about("the timer slack set for the second run of each sleeping call and for the sweep's low-slack sleeps (Linux; the kernel reads 0 as `the default`)");
pub const BOUND_MS: Param = Param::int("bound_ms", 10, 60_000)
    .defaults(1_000, 5_000)
    .unit("ms")
    .about("the longest one loop (calls) or one point (sweep) may take; past it a loop makes fewer calls and a point fewer sleeps, with a note");
pub const SLEEPS: Param = Param::int("sleeps", 1, 1_000_000)
    .defaults(100, 1_000)
    .unit("per point and round")
    .about("the most single sleeps one point takes in a round (short requests)");
pub const MIN_SLEEPS: Param = Param::int("min_sleeps", 1, 1_000_000)
    .defaults(5, 10)
    .unit("per point and round")
    .about("the fewest single sleeps one point takes in a round (long requests)");
pub const POINT_MS: Param = Param::int("point_ms", 1, 60_000)
    .defaults(2, 20)
    .unit("ms")
    .about("about how much requested sleep one point gets per round: between the two bounds above, a point takes point_ms ÷ request sleeps");

pub static CALLS_EXP: Experiment<CallsRound> = Experiment::new(
    "calls",
    "time per call of sleep(0), sleep(1 ns), yields and timers, with each timer slack: one loop of each per round",
    calls_round,
    CallsRound::readings,
)
.params(&[CALLS, SLOW_CALLS, LOW_SLACK_NS, BOUND_MS])
// Two seconds of the quick budget (ten of the full) went to the `yield` experiment
// (which later gave one of them to the millisecond experiment).
// (Of those ten, five and two of the millisecond experiment's went to async-locks'
// hazards: on a loaded 2-vCPU VM the full `yield` took 2.4 s for its 20 rounds, the full
// `millisecond` 16.5 s for its 10.) A third quick second went to async-locks' designs
// (10 rounds ran in 5 s here).
.budget(|p| p.pick(Budget::quick(4), Budget::full(65, 20)));

pub const PHASE_SLEEPS: Param = Param::int("phase_sleeps", 1, 1_000)
    .defaults(3, 9)
    .unit("per arm and round")
    .about("sleeps of each phase arm of the millisecond experiment in one round (each phase bin of each sleep is an arm)");
pub const AFTER_SLEEPS: Param = Param::int("after_sleeps", 1, 1_000)
    .defaults(8, 20)
    .unit("per arm and round")
    .about("1 ms sleeps of each `after` arm of the millisecond experiment in one round: enough that a round's share of late sleeps is a figure, not 0 or 1 of 3");
pub const BEFORE_MS: Param = Param::int("before_ms", 2, 1_000)
    .defaults(50, 50)
    .unit("ms")
    .about("the long sleep before a 1 ms sleep in the millisecond experiment's second context (the throttles sweep sleeps 50 ms before each 1 ms sleep)");

pub static MS_EXP: Experiment<MsRound> = Experiment::new(
    "millisecond",
    "how late a 1 ms sleep ends: tokio's by where in its millisecond tick it began, the standard library's after a 1 ms or a long sleep",
    ms_round,
    MsRound::readings,
)
.params(&[PHASE_SLEEPS, AFTER_SLEEPS, BEFORE_MS])
// Quick: a round took 0.6 s with 3 sleeps per `after` arm and 0.88 s with 10, so 8 need
// about 0.8 s, and 6 rounds 5 s: the second the `yield` experiment gave up (the whole
// book's quick bounds were at their 150 s). Full: 20 sleeps add about 0.6 s a round to
// the 1.65 s it took, 22 s for 10 rounds, within the 28 s it had (the whole book's full
// budgets were at their 15-minute aim).
.budget(|p| p.pick(Budget::quick(5), Budget::full(28, 10)));

pub static SWEEP_EXP: Experiment<SweepRound> = Experiment::new(
    "sweep",
    "how late single sleeps of 1 µs to 10 ms end (actual minus requested length), four ways of sleeping",
    sweep_round,
    SweepRound::readings,
)
.params(&[SLEEPS, MIN_SLEEPS, POINT_MS, LOW_SLACK_NS, BOUND_MS])
// Quick: 4 s (9 rounds in 5 s here); a second went to spinning's variants.
.budget(|p| p.pick(Budget::quick(4), Budget::full(35, 10)));

// ---------------------------------------------------------------------------------
// `calls`
// ---------------------------------------------------------------------------------

/// One loop of one (variant, slack) cell in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Loop {
    /// The variant's id (the reference data uses it).
    pub id: String,
    /// The reading's key as stored ([`CallsKey::stored`]): `nanosleep(1 ns)`,
    /// `nanosleep(1 ns) · slack 1 ns`.
    pub key: String,
    pub slack: Slack,
    /// Calls the loop was planned to make; `sample.calls` says how many it made.
    pub planned: u32,
    pub sample: Sample,
    /// Where the thread's CPU clock is coarse (Windows, Wine) and this loop's CPU time
    /// read under [`crate::CPU_LOOP_STEPS`] steps: a longer loop of the same call that
    /// times its CPU alone ([`crate::cpu_loop`]). Absent on Linux, whose clock is fine.
    #[serde(default)]
    pub cpu_loop: Option<crate::CpuLoop>,
}

/// One round of `calls`: every cell once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallsRound {
    /// The measuring thread's timer slack when the round began (Linux).
    pub thread_slack_ns: Option<u64>,
    /// The slack of the second measurement of the sleeping variants.
    pub low_slack_ns: u64,
    /// In the plan's order (every round's data reads alike), not the order they ran.
    pub loops: Vec<Loop>,
    /// What one read of the monotonic clock and of the thread's CPU clock cost in this
    /// round's process (ns): the first lies at both ends of every loop's CPU window,
    /// the second just outside its wall-clock window.
    #[serde(default)]
    pub clock_read_ns: Option<f64>,
    #[serde(default)]
    pub cpu_clock_read_ns: Option<f64>,
    /// The smallest step the thread's CPU clock took in this round (ns), found by
    /// spinning on it ([`harness::thread_cpu_step`]): a loop's CPU time below it can
    /// read 0, and the views then give a bound, not a figure. Records made before it
    /// was kept lack it.
    #[serde(default)]
    pub cpu_clock_step_ns: Option<f64>,
}

/// The readings of the `calls` experiment, by what they are: the time per call of a
/// loop of one call, with the measuring thread's own timer slack or with the slack set
/// to `low_slack_ns` first, and the A/A twin's. Stored as `nanosleep(1 ns)`,
/// `nanosleep(1 ns) · slack 1 ns` and `sched_yield() (A/A twin)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallsKey {
    pub call: Call,
    /// `None`: the thread's own slack; `Some(ns)`: the slack set to `ns`.
    pub low_slack_ns: Option<u64>,
    /// The A/A twin's loop (see [`plan`]).
    pub twin: bool,
}

impl CallsKey {
    /// A call with the thread's own slack.
    pub const fn of(call: Call) -> CallsKey {
        CallsKey {
            call,
            low_slack_ns: None,
            twin: false,
        }
    }

    /// A call with the thread's slack set to `ns` first.
    pub const fn low_slack(call: Call, ns: u64) -> CallsKey {
        CallsKey {
            call,
            low_slack_ns: Some(ns),
            twin: false,
        }
    }

    /// A call with a slack of a loop: the thread's own, or the low one (`low_slack_ns`).
    pub const fn with(call: Call, slack: Slack, low_slack_ns: u64) -> CallsKey {
        match slack {
            Slack::Default => CallsKey::of(call),
            Slack::Low => CallsKey::low_slack(call, low_slack_ns),
        }
    }

    /// The A/A twin of this reading.
    pub const fn twin(self) -> CallsKey {
        CallsKey { twin: true, ..self }
    }
}

/// The low slack the result was measured with (1 ns unless set).
pub fn low_slack<R>(r: &harness::Results<R>) -> u64 {
    r.param("low_slack_ns").map_or(1, |v| v as u64)
}

/// What the low slack saved `call` per call: each round's time with the thread's own
/// slack less its time with the low slack, over the rounds that measured both (an
/// amount, which a ratio would show as a share).
pub fn slack_saving(r: &harness::Results<CallsRound>, call: Call) -> Option<harness::Estimate> {
    r.difference(
        &CallsKey::of(call),
        &CallsKey::low_slack(call, low_slack(r)),
    )
}

impl ReadingKey for CallsKey {
    fn stored(&self) -> String {
        let call = self.call.name();
        let slacked = match self.low_slack_ns {
            None => call,
            Some(ns) => format!("{call} · slack {}", fmt_request(Duration::from_nanos(ns))),
        };
        if self.twin {
            twin_key(&slacked)
        } else {
            slacked
        }
    }
}

impl Keyed for CallsRound {
    type Key = CallsKey;
}

/// A `calls` round holds at most one loop per cell of the plan, and a loop makes at
/// most the calls its parameter plans.
impl RoundBounds for CallsRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        p.arms(plan().len(), format!("{} cells in the plan", plan().len()))
            .len("loops", "loops", &self.loops)?;
        let most = p.limit(&CALLS).max(p.limit(&SLOW_CALLS));
        for l in &self.loops {
            most.check(
                &format!("the loop {}", l.key),
                "planned calls",
                u64::from(l.planned),
            )?;
            most.check(
                &format!("the loop {}", l.key),
                "calls",
                u64::from(l.sample.calls),
            )?;
        }
        Ok(())
    }
}

impl CallsRound {
    /// One value per cell that ran: the loop's time per call, or the median of its
    /// calls where each was timed (calls that take milliseconds, [`Sample::figure`]).
    fn readings(&self) -> Vec<Reading> {
        plan()
            .iter()
            .filter_map(|c| {
                let key = c.key(self.low_slack_ns);
                Some(Reading::of(
                    &key,
                    Unit::Nanos,
                    self.find(&key)?.sample.figure(),
                ))
            })
            .collect()
    }

    /// The loop of one reading.
    pub fn find(&self, key: &CallsKey) -> Option<&Loop> {
        let key = key.stored();
        self.loops.iter().find(|l| l.key == key)
    }
}

/// CPU per call of one `calls` cell, as far as the thread's CPU clock can tell it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CpuPerCall {
    /// The median over rounds, with its interval.
    Measured(harness::Estimate),
    /// The loop's CPU time read less than one step of the clock in most rounds, so
    /// only a bound is known: per call, below this many nanoseconds (the clock's step
    /// divided by the loop's calls, median over rounds). A 0 read there means "under
    /// one step", not "no CPU time".
    Below(f64),
}

impl CpuPerCall {
    pub fn of(r: &harness::Results<CallsRound>, key: &CallsKey) -> Option<CpuPerCall> {
        // A longer loop where the clock was coarse: a figure where it read a step or
        // more in most rounds (k steps: within 1/k of the figure), else a bound over
        // its many calls.
        let long = |x: &CallsRound| x.find(key)?.cpu_loop.filter(|c| c.calls > 0);
        if let Some(cpu) = r.estimate_of(|x| long(x).map(|c| c.cpu_ns / c.calls as f64)) {
            let below = r.estimate_of(|x| long(x).map(|c| c.step_ns / c.calls as f64))?;
            let read = r.estimate_of(|x| long(x).map(|c| c.cpu_ns / c.step_ns))?;
            return Some(if read.median < 1.0 {
                CpuPerCall::Below(below.median)
            } else {
                CpuPerCall::Measured(cpu)
            });
        }
        let cpu = r.estimate_of(|x| x.find(key)?.sample.cpu_ns)?;
        let step = r.estimate_of(|x| {
            Some(x.cpu_clock_step_ns? / f64::from(x.find(key)?.sample.calls.max(1)))
        });
        Some(match step {
            Some(step) if cpu.median < step.median => CpuPerCall::Below(step.median),
            _ => CpuPerCall::Measured(cpu),
        })
    }
}

/// Whether the second, low-slack measurement exists on this OS.
pub const LOW_SLACK_HERE: bool = cfg!(target_os = "linux");

/// One arm of a `calls` round: a variant, the slack it runs with, and whether it is
/// the A/A twin (the same code as its original, a separate arm of the same rounds,
/// whose reading key carries the twin suffix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub variant: Variant,
    pub slack: Slack,
    pub twin: bool,
}

impl Cell {
    /// The arm's reading, with `low` the slack of the low-slack cells.
    pub fn key(&self, low: u64) -> CallsKey {
        let key = CallsKey::with(self.variant.call, self.slack, low);
        if self.twin { key.twin() } else { key }
    }
}

/// The variant measured twice for the A/A self-check: a cheap one (a loop of
/// `sched_yield` costs well under a millisecond).
pub const TWIN_ID: &str = "sched-yield";

/// Every variant with the thread's slack, then the sleeping ones with the low slack,
/// then the A/A twin.
pub fn plan() -> Vec<Cell> {
    let cell = |variant: Variant, slack, twin| Cell {
        variant,
        slack,
        twin,
    };
    let mut cells: Vec<Cell> = VARIANTS
        .iter()
        .map(|v| cell(*v, Slack::Default, false))
        .collect();
    if LOW_SLACK_HERE {
        cells.extend(
            VARIANTS
                .iter()
                .filter(|v| v.call.sleeps())
                .map(|v| cell(*v, Slack::Low, false)),
        );
    }
    cells.extend(
        VARIANTS
            .iter()
            .filter(|v| v.id == TWIN_ID)
            .map(|v| cell(*v, Slack::Default, true)),
    );
    cells
}

/// One round: one loop of every (variant, slack) cell, in this round's order (a row
/// of a balanced Latin square), so that no cell keeps the same place from round to
/// round.
fn calls_round(ctx: &mut Ctx) -> anyhow::Result<CallsRound> {
    let (fast, slow) = (ctx.int(&CALLS) as u32, ctx.int(&SLOW_CALLS) as u32);
    let low = ctx.int(&LOW_SLACK_NS);
    let bound = Duration::from_millis(ctx.int(&BOUND_MS));
    let thread_slack_ns = read_slack(ctx);
    // At most 100 ms: three steps of a 15.625 ms tick, with room to spare.
    let step = harness::thread_cpu_step(Duration::from_millis(100));
    let cells = plan();
    let mut loops: Vec<Option<Loop>> = vec![None; cells.len()];
    for i in ctx.rotated(&(0..cells.len()).collect::<Vec<_>>()) {
        if ctx.past_deadline() {
            ctx.note(NoteKind::Timeout, "the time bound ended a round early");
            break;
        }
        let cell = cells[i];
        let planned = if cell.variant.call.slow() { slow } else { fast };
        let slack_ns = (cell.slack == Slack::Low).then_some(low);
        let limit = bound.min(ctx.time_left());
        match bounded_loop(cell.variant.call, slack_ns, planned, limit) {
            Ok(sample) => {
                let mut l = checked(ctx, cell, low, planned, sample);
                l.cpu_loop = cpu_loop_for(ctx, cell, &l, step);
                loops[i] = Some(l);
            }
            Err(e) => unavailable(ctx, cell, low, &e),
        }
    }
    let (clock, cpu_clock) = crate::clock_read_costs(21, 200);
    Ok(CallsRound {
        thread_slack_ns,
        low_slack_ns: low,
        loops: loops.into_iter().flatten().collect(),
        clock_read_ns: Some(clock),
        cpu_clock_read_ns: cpu_clock,
        cpu_clock_step_ns: step.map(|d| d.as_nanos() as f64),
    })
}

/// The loop as stored, with a note when it had to make fewer calls than planned.
fn checked(ctx: &mut Ctx, cell: Cell, low: u64, planned: u32, s: Sample) -> Loop {
    let key = cell.key(low).stored();
    if s.calls < planned {
        ctx.note(
            NoteKind::Limit,
            format!(
                "{key}: its first calls showed that a loop of {} calls would take longer \
                 than its bound (bound_ms, or the time left), so it made {}",
                fmt_count(u64::from(planned)),
                fmt_count(u64::from(s.calls))
            ),
        );
    }
    Loop {
        id: cell.variant.id.to_string(),
        key,
        slack: cell.slack,
        planned,
        sample: s,
        cpu_loop: None,
    }
}

/// A CPU clock step above this is coarse: a loop's CPU time is then read again by a
/// [`crate::cpu_loop`].
const COARSE_CPU_STEP: Duration = Duration::from_micros(100);
/// A call that takes longer than this (it blocks) gets no [`crate::cpu_loop`]: its CPU
/// time is a small share of its wall time, and ten steps of it would take seconds.
const CPU_LOOP_MAX_CALL_NS: f64 = 50_000.0;
/// The longest a [`crate::cpu_loop`] runs, per cell and round.
const CPU_LOOP_LIMIT: Duration = Duration::from_millis(200);

/// The cell's [`crate::cpu_loop`], where the thread's CPU clock moved in steps of
/// `step` and the loop in `l` read fewer than [`crate::CPU_LOOP_STEPS`] of them.
fn cpu_loop_for(ctx: &Ctx, cell: Cell, l: &Loop, step: Option<Duration>) -> Option<crate::CpuLoop> {
    let step = step.filter(|s| *s > COARSE_CPU_STEP)?;
    let read = l.sample.cpu_ns? * f64::from(l.sample.calls);
    let enough = step.as_nanos() as f64 * crate::CPU_LOOP_STEPS;
    if cell.slack != Slack::Default || read >= enough || l.sample.ns > CPU_LOOP_MAX_CALL_NS {
        return None;
    }
    // Chunks of at least 10 ms, so the readings around each chunk (a few µs under
    // Wine) stay under a thousandth of its CPU time even for the empty loop.
    let chunk = (1e7 / l.sample.ns.max(1.0)).clamp(f64::from(l.sample.calls), 1e8) as u32;
    crate::cpu_loop(
        cell.variant.call,
        chunk,
        step,
        CPU_LOOP_LIMIT.min(ctx.time_left()),
    )
}

fn unavailable(ctx: &mut Ctx, cell: Cell, low: u64, e: &std::io::Error) {
    ctx.note(
        NoteKind::Unsupported,
        format!("{} could not run here: {e}", cell.key(low).stored()),
    );
}

/// Reads the measuring thread's timer slack (Linux) into the provenance line; a
/// failure is a note. Other systems have no such setting, which a note says.
fn read_slack(ctx: &mut Ctx) -> Option<u64> {
    let lacking = unsupported_here();
    if !lacking.is_empty() {
        ctx.note(NoteKind::Unsupported, lacking);
    }
    #[cfg(target_os = "linux")]
    match crate::os::timer_slack() {
        Ok(ns) => {
            ctx.detail("timer slack of the measuring thread", crate::fmt_slack(ns));
            return Some(ns);
        }
        Err(e) => ctx.note(NoteKind::Info, format!("PR_GET_TIMERSLACK failed: {e}")),
    }
    // Windows: the system timer that Sleep and SleepEx wait for, as the write-up read it.
    #[cfg(windows)]
    match crate::os::timer_resolution() {
        Ok((coarsest, finest, current)) => ctx.detail(
            TIMER_RESOLUTION_DETAIL,
            format!(
                "current {} (coarsest {}, finest {})",
                harness::render::fmt_ns(current as f64),
                harness::render::fmt_ns(coarsest as f64),
                harness::render::fmt_ns(finest as f64)
            ),
        ),
        Err(e) => ctx.note(NoteKind::Info, format!("the timer resolution: {e}")),
    }
    None
}

/// The detail a Windows round records: the system timer's resolution.
pub const TIMER_RESOLUTION_DETAIL: &str = "system timer resolution";

// ---------------------------------------------------------------------------------
// `sweep`
// ---------------------------------------------------------------------------------

/// One (way of sleeping, request) point in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub mode: Mode,
    pub request_ns: f64,
    /// How late each sleep of this round ended (actual − requested), pooled over
    /// rounds for the tails.
    pub late: Dist,
    /// This round's exact median lateness: the value the round contributes.
    pub late_p50_ns: Option<f64>,
    /// The measuring thread's CPU time over this round's batch, per sleep.
    pub cpu_ns: Option<f64>,
    /// The hybrid sleeper's mean spin per sleep in this round (hybrid only).
    #[serde(default)]
    pub spun_ns: Option<f64>,
    /// The share of this round's sleeps at this point during which the thread blocked
    /// (a voluntary context switch), where the OS tells.
    #[serde(default)]
    pub blocked_share: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepRound {
    /// The hybrid sleeper's margin, calibrated in this round's process.
    pub margin_ns: f64,
    pub thread_slack_ns: Option<u64>,
    pub low_slack_ns: u64,
    pub points: Vec<Point>,
}

/// A sweep point as notes name it: `thread::sleep · 20 µs`.
pub fn point_label(mode: Mode, request_ns: f64, low_slack_ns: u64) -> String {
    let request = Duration::from_nanos(request_ns as u64);
    format!("{} · {}", mode.label(low_slack_ns), fmt_request(request))
}

/// The reading of a sweep point, by what it is: how late the sleeps of one requested
/// length (whole nanoseconds) made in one way ended. Stored as
/// `thread::sleep · 20 µs · late by`, `thread::sleep, slack 1 ns · 20 µs · late by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepKey {
    mode: Mode,
    request_ns: u64,
    /// The slack of [`Mode::SleepLowSlack`]; 0 for the other ways, which set none.
    low_slack_ns: u64,
}

impl SweepKey {
    /// How late the sleeps of `request_ns` made in `mode` ended; `low_slack_ns`, the
    /// slack the rounds set, counts only for [`Mode::SleepLowSlack`].
    pub const fn late(mode: Mode, request_ns: u64, low_slack_ns: u64) -> SweepKey {
        SweepKey {
            mode,
            request_ns,
            low_slack_ns: if matches!(mode, Mode::SleepLowSlack) {
                low_slack_ns
            } else {
                0
            },
        }
    }
}

impl ReadingKey for SweepKey {
    fn stored(&self) -> String {
        let mode = self.mode.label(self.low_slack_ns);
        let request = fmt_request(Duration::from_nanos(self.request_ns));
        format!("{mode} · {request} · late by")
    }
}

impl Keyed for SweepRound {
    type Key = SweepKey;
}

/// A sweep round holds at most one point per (request, way of sleeping), and a point
/// at most `sleeps` sleeps.
impl RoundBounds for SweepRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        let (requests, modes) = (sweep_requests().len(), Mode::available().len());
        p.arms(
            requests * modes,
            format!("{requests} requests × {modes} ways of sleeping"),
        )
        .len("points", "points", &self.points)?;
        let sleeps = p.limit(&SLEEPS);
        for x in &self.points {
            let label = point_label(x.mode, x.request_ns, self.low_slack_ns);
            sleeps.dist(&format!("the point {label}"), &x.late)?;
        }
        Ok(())
    }
}

impl SweepRound {
    /// One value per point: the median lateness of its sleeps in this round.
    fn readings(&self) -> Vec<Reading> {
        self.points
            .iter()
            .filter_map(|p| {
                let key = SweepKey::late(p.mode, p.request_ns as u64, self.low_slack_ns);
                Some(Reading::of(&key, Unit::Nanos, p.late_p50_ns?))
            })
            .collect()
    }

    pub fn find(&self, mode: Mode, request_ns: f64) -> Option<&Point> {
        self.points
            .iter()
            .find(|p| p.mode == mode && p.request_ns == request_ns)
    }
}

fn sweep_round(ctx: &mut Ctx) -> anyhow::Result<SweepRound> {
    let (most, least) = (ctx.count(&SLEEPS), ctx.count(&MIN_SLEEPS));
    let per_point = Duration::from_millis(ctx.int(&POINT_MS));
    let bound = Duration::from_millis(ctx.int(&BOUND_MS));
    let low = ctx.int(&LOW_SLACK_NS);
    let thread_slack_ns = read_slack(ctx);
    // Stored per round; the views show the median over rounds.
    let margin = calibrate_margin();
    let cells: Vec<(Duration, Mode)> = sweep_requests()
        .into_iter()
        .flat_map(|r| Mode::available().iter().map(move |m| (r, *m)))
        .collect();
    let mut points: Vec<Option<Point>> = vec![None; cells.len()];
    for i in ctx.rotated(&(0..cells.len()).collect::<Vec<_>>()) {
        if ctx.past_deadline() {
            ctx.note(NoteKind::Timeout, "the time bound ended a round early");
            break;
        }
        let (request, mode) = cells[i];
        let count = sweep_count(request, per_point, least, most);
        let until = (Instant::now() + bound).min(ctx.deadline());
        let run = || timed_sleeps(mode, request, margin, count, until);
        let timed = match mode {
            Mode::SleepLowSlack => with_slack(low, run),
            _ => run(),
        };
        match timed {
            Ok(t) => {
                let label = point_label(mode, request.as_nanos() as f64, low);
                if t.sleeps.len() < count {
                    ctx.note(
                        NoteKind::Limit,
                        format!(
                            "{label}: {} sleeps would have taken longer than the bound \
                             (bound_ms, or the time left), so the point has {} in a round",
                            fmt_count(count as u64),
                            fmt_count(t.sleeps.len() as u64)
                        ),
                    );
                }
                points[i] = Point::new(mode, request, &t);
            }
            Err(e) => ctx.note(
                NoteKind::Unsupported,
                format!("{} could not run here: {e}", mode.label(low)),
            ),
        }
    }
    Ok(SweepRound {
        margin_ns: margin.as_nanos() as f64,
        thread_slack_ns,
        low_slack_ns: low,
        points: points.into_iter().flatten().collect(),
    })
}

impl Point {
    fn new(mode: Mode, request: Duration, batch: &Batch) -> Option<Point> {
        let request_ns = request.as_nanos() as f64;
        let mut late: Vec<f64> = batch
            .sleeps
            .iter()
            .map(|t| t.actual.as_nanos() as f64 - request_ns)
            .collect();
        if late.is_empty() {
            return None;
        }
        let n = late.len() as f64;
        late.sort_by(f64::total_cmp);
        let spun: Option<Vec<f64>> = batch
            .sleeps
            .iter()
            .map(|t| t.spun.map(|d| d.as_nanos() as f64))
            .collect();
        Some(Point {
            mode,
            request_ns,
            late_p50_ns: Some(harness::stats::median_sorted(&late)),
            late: Dist::from_samples(late),
            cpu_ns: batch.cpu.map(|c| c.as_nanos() as f64 / n),
            spun_ns: spun.map(|s| s.iter().sum::<f64>() / n),
            blocked_share: blocked_share(batch),
        })
    }
}

/// The share of a batch's sleeps that blocked; `None` where any sleep could not tell.
fn blocked_share(batch: &Batch) -> Option<f64> {
    let flags: Option<Vec<bool>> = batch.sleeps.iter().map(|t| t.blocked).collect();
    let flags = flags.filter(|f| !f.is_empty())?;
    Some(flags.iter().filter(|b| **b).count() as f64 / flags.len() as f64)
}

// ---------------------------------------------------------------------------------
// `millisecond`
// ---------------------------------------------------------------------------------

/// The tokio requests: 1 ms, and 1.5 ms, whose deadline falls mid-tick.
pub const TOKIO_REQUESTS_US: [u32; 2] = [1_000, 1_500];

/// The arms of the `millisecond` experiment, in the plan's order.
pub fn ms_plan(before_ms: u32) -> Vec<MsArm> {
    let mut arms = Vec::new();
    for request_us in TOKIO_REQUESTS_US {
        arms.extend((0..PHASE_BINS).map(|bin| MsArm::Tokio { request_us, bin }));
    }
    arms.extend((0..PHASE_BINS).map(|bin| MsArm::Std {
        request_us: 1_000,
        bin,
    }));
    arms.push(MsArm::After { before_ms: 1 });
    arms.push(MsArm::After { before_ms });
    arms
}

/// `0.3–0.4 ms`: a phase bin as the tables name it.
pub fn bin_label(bin: u32) -> String {
    let step = 1.0 / f64::from(PHASE_BINS);
    format!(
        "{:.1}–{:.1} ms",
        f64::from(bin) * step,
        f64::from(bin + 1) * step
    )
}

/// The reading of an arm of the `millisecond` experiment is the arm itself: how late
/// its sleeps ended. Stored as
/// `tokio::time::sleep(1 ms) · begun 0.3–0.4 ms into a tick · late by` and
/// `thread::sleep(1 ms) · after a 50 ms sleep · late by`.
impl ReadingKey for MsArm {
    fn stored(&self) -> String {
        let us = |u: u32| fmt_request(Duration::from_micros(u64::from(u)));
        let tenths = |bin: u32| {
            let step = 1.0 / f64::from(PHASE_BINS);
            format!(
                "{:.1}–{:.1} ms",
                f64::from(bin) * step,
                f64::from(bin + 1) * step
            )
        };
        match *self {
            MsArm::Tokio { request_us, bin } => format!(
                "tokio::time::sleep({}) · begun {} into a tick · late by",
                us(request_us),
                tenths(bin)
            ),
            MsArm::Std { request_us, bin } => format!(
                "thread::sleep({}) · begun {} into a tick · late by",
                us(request_us),
                tenths(bin)
            ),
            MsArm::After { before_ms } => {
                format!("thread::sleep(1 ms) · after a {before_ms} ms sleep · late by")
            }
        }
    }
}

impl Keyed for MsRound {
    type Key = MsArm;
}

/// A millisecond round holds at most one cell per arm, and a cell at most
/// `phase_sleeps` sleeps.
impl RoundBounds for MsRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        let arms = ms_plan(0).len();
        Limit::new(arms as u64, format!("{arms} arms")).len("cells", "cells", &self.cells)?;
        let (phase, after) = (p.limit(&PHASE_SLEEPS), p.limit(&AFTER_SLEEPS));
        for c in &self.cells {
            // The "after" arms take `after_sleeps` a round, the phase arms `phase_sleeps`.
            let sleeps = match c.arm {
                MsArm::After { .. } => &after,
                _ => &phase,
            };
            sleeps.len(&format!("the arm {}", c.arm.stored()), "sleeps", &c.sleeps)?;
        }
        Ok(())
    }
}

/// One arm in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MsCell {
    pub arm: MsArm,
    pub sleeps: Vec<PhasedSleep>,
    /// This round's median lateness: the value the round contributes.
    pub late_p50_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MsRound {
    /// How far apart the two clock reads around the runtime's `build()` were: the
    /// tick grid is known to within half of it.
    pub origin_uncertainty_ns: f64,
    pub thread_slack_ns: Option<u64>,
    pub cells: Vec<MsCell>,
}

impl MsRound {
    fn readings(&self) -> Vec<Reading> {
        self.cells
            .iter()
            .filter_map(|c| Some(Reading::of(&c.arm, Unit::Nanos, c.late_p50_ns?)))
            .collect()
    }

    pub fn find(&self, arm: MsArm) -> Option<&MsCell> {
        self.cells.iter().find(|c| c.arm == arm)
    }

    /// How many sleeps of an `after` arm ended more than `ns` late this round, of how many.
    pub fn late_over(&self, before_ms: u32, ns: f64) -> Option<(usize, usize)> {
        let s = &self.find(MsArm::After { before_ms })?.sleeps;
        Some((s.iter().filter(|s| s.late_ns > ns).count(), s.len()))
    }

    /// This round's wake-up cost: the median lateness of its `thread::sleep(1 ms)` sleeps
    /// begun at the chosen phases (all bins together).
    pub fn wake_cost(&self) -> Option<f64> {
        let mut v: Vec<f64> = self
            .cells
            .iter()
            .filter(|c| matches!(c.arm, MsArm::Std { .. }))
            .flat_map(|c| c.sleeps.iter().map(|s| s.late_ns))
            .collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| harness::stats::median_sorted(&v))
    }

    /// How far each reading of tokio's timer misses this round's tokio sleeps, less the
    /// round's wake-up cost (its plain 1 ms sleeps): (next tick, whole ticks), medians.
    pub fn misses(&self) -> Option<(f64, f64)> {
        let c = self.wake_cost()?;
        let (mut next, mut whole) = (Vec::new(), Vec::new());
        for cell in &self.cells {
            let MsArm::Tokio { request_us, .. } = cell.arm else {
                continue;
            };
            for s in &cell.sleeps {
                let (n, w) = crate::tick_models(f64::from(request_us) * 1e3, s.phase_ns);
                next.push((s.late_ns - c - n).abs());
                whole.push((s.late_ns - c - w).abs());
            }
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            harness::stats::median_sorted(&v)
        };
        (!next.is_empty()).then(|| (median(next), median(whole)))
    }
}

fn ms_round(ctx: &mut Ctx) -> anyhow::Result<MsRound> {
    let (per_phase, per_after) = (ctx.count(&PHASE_SLEEPS), ctx.count(&AFTER_SLEEPS));
    let before_ms = ctx.int(&BEFORE_MS) as u32;
    let thread_slack_ns = read_slack(ctx);
    let (rt, ticks) = timer_runtime()?;
    // The runtime's first sleep is in no arm: the `calls` experiment times a fresh
    // runtime's first sleep apart (a threat row), and every arm here is a later sleep.
    rt.block_on(async { tokio::time::sleep(crate::MS1).await });
    let arms = ms_plan(before_ms);
    let mut cells: Vec<Option<MsCell>> = vec![None; arms.len()];
    'arms: for i in ctx.rotated(&(0..arms.len()).collect::<Vec<_>>()) {
        let arm = arms[i];
        let per_arm = match arm {
            MsArm::After { .. } => per_after,
            _ => per_phase,
        };
        let mut sleeps = Vec::with_capacity(per_arm);
        for _ in 0..per_arm {
            // The longest sleep an arm makes, plus a tick of spinning and a margin.
            if ctx.time_left() < Duration::from_millis(u64::from(before_ms) + 10) {
                ctx.note(NoteKind::Timeout, "the time bound ended a round early");
                cells[i] = MsCell::new(arm, sleeps);
                break 'arms;
            }
            sleeps.push(match arm {
                MsArm::Tokio { request_us, bin } | MsArm::Std { request_us, bin } => {
                    let request = Duration::from_micros(u64::from(request_us));
                    let tokio = matches!(arm, MsArm::Tokio { .. });
                    phased_sleep(&rt, &ticks, tokio, request, bin_centre_ns(bin))
                }
                MsArm::After { before_ms } => {
                    std::thread::sleep(Duration::from_millis(u64::from(before_ms)));
                    let start = std::time::Instant::now();
                    std::thread::sleep(crate::MS1);
                    PhasedSleep {
                        phase_ns: ticks.phase_ns(start) as f64,
                        late_ns: start.elapsed().as_nanos() as f64 - TICK_NS as f64,
                    }
                }
            });
        }
        cells[i] = MsCell::new(arm, sleeps);
    }
    Ok(MsRound {
        origin_uncertainty_ns: ticks.uncertainty.as_nanos() as f64,
        thread_slack_ns,
        cells: cells.into_iter().flatten().collect(),
    })
}

impl MsCell {
    fn new(arm: MsArm, sleeps: Vec<PhasedSleep>) -> Option<MsCell> {
        if sleeps.is_empty() {
            return None;
        }
        let mut late: Vec<f64> = sleeps.iter().map(|s| s.late_ns).collect();
        late.sort_by(f64::total_cmp);
        Some(MsCell {
            arm,
            late_p50_ns: Some(harness::stats::median_sorted(&late)),
            sleeps,
        })
    }
}

// ---------------------------------------------------------------------------------
// `yield`: a yield with, and without, a busy thread on the measuring thread's CPU
// ---------------------------------------------------------------------------------

pub const YIELD_LOOP_CALLS: Param = Param::int("yield_calls", 2, 1_000_000)
    .defaults(10, 30)
    .unit("per loop")
    .about("calls in every loop of the yield experiment, alone or not (a yield that hands the CPU to a busy thread waits for the scheduler's next tick to get it back, milliseconds); fewer where a loop would outrun yield_bound_ms");
pub const YIELD_BOUND_MS: Param = Param::int("yield_bound_ms", 10, 60_000)
    .defaults(100, 500)
    .unit("ms")
    .about("the longest one loop of the yield experiment may take");

pub static YIELD_EXP: Experiment<YieldRound> = Experiment::new(
    "yield",
    "sched_yield() and pselect(0) on one CPU, alone and with a busy thread pinned to the same CPU",
    yield_round,
    YieldRound::readings,
)
.params(&[YIELD_LOOP_CALLS, YIELD_BOUND_MS])
// Quick: 1 s (about 20 rounds here; 2 s ran 40, the most a quick run takes); its other
// second went to the millisecond experiment.
.budget(|p| p.pick(Budget::quick(1), Budget::full(5, 20)));

/// One loop of the yield experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct YieldLoop {
    /// The call, as its readings store it (`sched_yield()`).
    pub call: String,
    /// Whether a busy thread shared the measuring thread's CPU.
    pub busy: bool,
    pub planned: u32,
    pub sample: Sample,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct YieldRound {
    pub loops: Vec<YieldLoop>,
}

/// The reading of a yield loop, by what it is: a yielding call's time per call pinned
/// to one CPU, alone or with a busy thread pinned to the same CPU. Stored as
/// `sched_yield() · alone on its CPU` and `sched_yield() · a busy thread on its CPU`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YieldKey {
    pub call: Call,
    pub busy: bool,
}

impl ReadingKey for YieldKey {
    fn stored(&self) -> String {
        let company = if self.busy {
            "a busy thread on its CPU"
        } else {
            "alone on its CPU"
        };
        format!("{} · {company}", self.call.name())
    }
}

impl Keyed for YieldRound {
    type Key = YieldKey;
}

/// A yield round holds at most one loop per (call, company), and a loop makes at most
/// `yield_calls` calls.
impl RoundBounds for YieldRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        let arms = yield_plan().len();
        p.arms(arms, format!("{arms} loops in the plan"))
            .len("loops", "loops", &self.loops)?;
        let calls = p.limit(&YIELD_LOOP_CALLS);
        for l in &self.loops {
            let what = format!("the loop {}", l.call);
            calls.check(&what, "planned calls", u64::from(l.planned))?;
            calls.check(&what, "calls", u64::from(l.sample.calls))?;
        }
        Ok(())
    }
}

/// The loops of a yield round, in the plan's order: each yielding call alone, then
/// with the busy thread.
pub fn yield_plan() -> Vec<YieldKey> {
    crate::YIELD_CALLS
        .iter()
        .flat_map(|&call| [false, true].map(|busy| YieldKey { call, busy }))
        .collect()
}

impl YieldRound {
    /// One value per loop that ran: its time per call.
    fn readings(&self) -> Vec<Reading> {
        yield_plan()
            .iter()
            .filter_map(|key| Some(Reading::of(key, Unit::Nanos, self.find(key)?.sample.ns)))
            .collect()
    }

    /// The loop of one reading.
    pub fn find(&self, key: &YieldKey) -> Option<&YieldLoop> {
        let call = key.call.name();
        self.loops
            .iter()
            .find(|l| l.call == call && l.busy == key.busy)
    }
}

fn yield_round(ctx: &mut Ctx) -> anyhow::Result<YieldRound> {
    let planned = ctx.int(&YIELD_LOOP_CALLS) as u32;
    let bound = Duration::from_millis(ctx.int(&YIELD_BOUND_MS));
    let cells = yield_plan();
    let mut loops: Vec<Option<YieldLoop>> = vec![None; cells.len()];
    for i in ctx.rotated(&(0..cells.len()).collect::<Vec<_>>()) {
        if ctx.past_deadline() {
            ctx.note(NoteKind::Timeout, "the time bound ended a round early");
            break;
        }
        let key = cells[i];
        let (call, busy) = (key.call, key.busy);
        let limit = bound.min(ctx.time_left());
        match crate::on_one_cpu(busy, || bounded_loop(call, None, planned, limit)) {
            Ok(sample) => {
                if sample.calls < planned {
                    ctx.note(
                        NoteKind::Limit,
                        format!(
                            "{}: its first calls showed that {} calls would take longer than \
                             yield_bound_ms, so its loops made fewer (the count is stored)",
                            key.stored(),
                            fmt_count(u64::from(planned))
                        ),
                    );
                }
                loops[i] = Some(YieldLoop {
                    call: call.name(),
                    busy,
                    planned,
                    sample,
                });
            }
            Err(e) => {
                ctx.note(
                    NoteKind::Unsupported,
                    format!("the yield experiment could not run here: {e}"),
                );
                break;
            }
        }
    }
    Ok(YieldRound {
        loops: loops.into_iter().flatten().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MS1, NS1, Timerfd, ZERO};

    /// The strings records hold, pinned: a typed key must store what the stored
    /// results were found by before it existed (the Windows and macOS ones as those
    /// systems' builds stored them).
    #[test]
    fn typed_keys_store_the_strings_records_hold() {
        let stored = |k: &dyn ReadingKey| k.stored();
        let of = |call| stored(&CallsKey::of(call));
        assert_eq!(of(Call::Nothing), "empty loop");
        assert_eq!(of(Call::StdSleep(ZERO)), "thread::sleep(0)");
        assert_eq!(of(Call::StdSleep(NS1)), "thread::sleep(1 ns)");
        assert_eq!(of(Call::YieldNow), "yield_now()");
        assert_eq!(of(Call::TokioSleep(MS1)), "tokio::time::sleep(1 ms)");
        assert_eq!(of(Call::Nanosleep(NS1)), "nanosleep(1 ns)");
        assert_eq!(of(Call::Pselect(ZERO)), "pselect(0)");
        assert_eq!(of(Call::SchedYield), "sched_yield()");
        assert_eq!(of(Call::ClockNanosleep(NS1)), "clock_nanosleep(1 ns)");
        assert_eq!(
            of(Call::Timerfd(Timerfd::PerCall, NS1)),
            "timerfd per call (1 ns)"
        );
        assert_eq!(
            of(Call::Timerfd(Timerfd::Rearmed, NS1)),
            "timerfd re-armed (1 ns)"
        );
        assert_eq!(
            of(Call::Timerfd(Timerfd::Interval, NS1)),
            "timerfd interval (1 ns)"
        );
        assert_eq!(of(Call::Sleep(0)), "Sleep(0)");
        assert_eq!(of(Call::SleepEx(1)), "SleepEx(1, FALSE)");
        assert_eq!(
            of(Call::WaitableTimer(Duration::from_nanos(100))),
            "waitable timer (100 ns)"
        );
        assert_eq!(
            stored(&CallsKey::low_slack(Call::Nanosleep(NS1), 1)),
            "nanosleep(1 ns) · slack 1 ns"
        );
        assert_eq!(
            stored(&CallsKey::with(Call::TokioSleep(MS1), Slack::Low, 50_000)),
            "tokio::time::sleep(1 ms) · slack 50 µs"
        );
        assert_eq!(
            stored(&CallsKey::with(Call::StdSleep(MS1), Slack::Default, 1)),
            "thread::sleep(1 ms)"
        );
        assert_eq!(
            stored(&CallsKey::of(Call::SchedYield).twin()),
            "sched_yield() (A/A twin)"
        );
        assert_eq!(
            stored(&SweepKey::late(Mode::Sleep, 1_000_000, 1)),
            "thread::sleep · 1 ms · late by"
        );
        assert_eq!(
            stored(&SweepKey::late(Mode::SleepLowSlack, 20_000, 1)),
            "thread::sleep, slack 1 ns · 20 µs · late by"
        );
        assert_eq!(
            stored(&SweepKey::late(Mode::TimerFd, 500_000, 1)),
            "timerfd · 500 µs · late by"
        );
        assert_eq!(
            stored(&SweepKey::late(Mode::Hybrid, 10_000_000, 1)),
            "hybrid · 10 ms · late by"
        );
        // The slack counts only where it was set.
        assert_eq!(
            SweepKey::late(Mode::Hybrid, 1_000, 1),
            SweepKey::late(Mode::Hybrid, 1_000, 50_000)
        );
        assert_eq!(
            stored(&MsArm::Tokio {
                request_us: 1_500,
                bin: 3
            }),
            "tokio::time::sleep(1.50 ms) · begun 0.3–0.4 ms into a tick · late by"
        );
        assert_eq!(
            stored(&MsArm::Std {
                request_us: 1_000,
                bin: 9
            }),
            "thread::sleep(1 ms) · begun 0.9–1.0 ms into a tick · late by"
        );
        assert_eq!(
            stored(&MsArm::After { before_ms: 50 }),
            "thread::sleep(1 ms) · after a 50 ms sleep · late by"
        );
        assert_eq!(
            stored(&YieldKey {
                call: Call::SchedYield,
                busy: false
            }),
            "sched_yield() · alone on its CPU"
        );
        assert_eq!(
            stored(&YieldKey {
                call: Call::Pselect(ZERO),
                busy: true
            }),
            "pselect(0) · a busy thread on its CPU"
        );
    }

    /// Every reading a round gives is one of its plan's, found again by its key.
    #[test]
    fn readings_follow_the_plan_and_are_found_by_their_keys() {
        let sample = Sample {
            calls: 1,
            ns: 5.0,
            cpu_ns: None,
            voluntary: None,
            involuntary: None,
            run_delay_ns: None,
            first_ns: None,
            probe_first_ns: None,
            median_ns: None,
        };
        let cells = plan();
        let low = 7;
        let round = CallsRound {
            thread_slack_ns: None,
            low_slack_ns: low,
            loops: cells
                .iter()
                .map(|c| Loop {
                    id: c.variant.id.to_string(),
                    key: c.key(low).stored(),
                    slack: c.slack,
                    planned: 1,
                    sample,
                    cpu_loop: None,
                })
                .collect(),
            clock_read_ns: None,
            cpu_clock_read_ns: None,
            cpu_clock_step_ns: None,
        };
        let keys: Vec<String> = round.readings().into_iter().map(|r| r.key).collect();
        let planned: Vec<String> = cells.iter().map(|c| c.key(low).stored()).collect();
        assert_eq!(keys, planned);
        let twin = cells.iter().find(|c| c.twin).unwrap();
        assert!(round.find(&twin.key(low)).is_some());
        assert_eq!(twin.key(low), CallsKey::of(twin.variant.call).twin());
    }
}
