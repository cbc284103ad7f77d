//! The chapter's experiments: what one round runs, with which parameters, and the one
//! value per variant each round is summarised by.
//!
//! - `calls`: one round is one loop of every (variant, slack) cell, in the round's
//!   order (a row of a balanced Latin square, `Ctx::rotated`) — the write-up's
//!   interleaved repetitions, one repetition per round, each round in a fresh
//!   process. The round's reading for a cell is that loop's time per call.
//! - `sweep`: one round is a batch of single sleeps at every (request, way of
//!   sleeping) point, ordered the same way; the round's reading for a point is the
//!   median of how late its sleeps ended (its key ends in `late by`).

use crate::{
    Batch, Call, Mode, Sample, Slack, VARIANTS, Variant, bounded_loop, calibrate_margin,
    fmt_request, key, sweep_count, sweep_requests, timed_sleeps, unsupported_here, with_slack,
};
use harness::render::fmt_count;
use harness::{Budget, Ctx, Dist, Experiment, NoteKind, Param, Reading, Unit};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

pub const CALLS: Param = Param::int("calls", 10, 1_000_000)
    .defaults(1_000, 3_000)
    .unit("per loop")
    .about("calls in one loop of a variant that takes microseconds or less (the write-up's program made 3,000)");
pub const SLOW_CALLS: Param = Param::int("slow_calls", 2, 100_000)
    .defaults(20, 100)
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
.budget(|p| p.pick(Budget::quick(8), Budget::full(75, 20)));

pub static SWEEP_EXP: Experiment<SweepRound> = Experiment::new(
    "sweep",
    "how late single sleeps of 1 µs to 10 ms end (actual minus requested length), four ways of sleeping",
    sweep_round,
    SweepRound::readings,
)
.params(&[SLEEPS, MIN_SLEEPS, POINT_MS, LOW_SLACK_NS, BOUND_MS])
.budget(|p| p.pick(Budget::quick(6), Budget::full(35, 10)));

// ---------------------------------------------------------------------------------
// `calls`
// ---------------------------------------------------------------------------------

/// One loop of one (variant, slack) cell in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Loop {
    /// The variant's id (the reference data uses it).
    pub id: String,
    /// The reading's key: `nanosleep(1 ns)`, `nanosleep(1 ns) · slack 1 ns`.
    pub key: String,
    pub slack: Slack,
    /// Calls the loop was planned to make; `sample.calls` says how many it made.
    pub planned: u32,
    pub sample: Sample,
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
}

impl CallsRound {
    /// One value per cell: the loop's time per call.
    fn readings(&self) -> Vec<Reading> {
        self.loops
            .iter()
            .map(|l| Reading::new(l.key.clone(), Unit::Nanos, l.sample.ns))
            .collect()
    }

    pub fn find(&self, key: &str) -> Option<&Loop> {
        self.loops.iter().find(|l| l.key == key)
    }
}

/// Whether the second, low-slack measurement exists on this OS.
pub const LOW_SLACK_HERE: bool = cfg!(target_os = "linux");

/// Every variant with the thread's slack, then the sleeping ones with the low slack.
pub fn plan() -> Vec<(Variant, Slack)> {
    let mut cells: Vec<(Variant, Slack)> = VARIANTS.iter().map(|v| (*v, Slack::Default)).collect();
    if LOW_SLACK_HERE {
        cells.extend(
            VARIANTS
                .iter()
                .filter(|v| v.call.sleeps())
                .map(|v| (*v, Slack::Low)),
        );
    }
    cells
}

// ANCHOR: calls_round
/// One round: one loop of every (variant, slack) cell, in this round's order (a row
/// of a balanced Latin square), so that no cell keeps the same place from round to
/// round.
fn calls_round(ctx: &mut Ctx) -> anyhow::Result<CallsRound> {
    let (fast, slow) = (ctx.int(&CALLS) as u32, ctx.int(&SLOW_CALLS) as u32);
    let low = ctx.int(&LOW_SLACK_NS);
    let bound = Duration::from_millis(ctx.int(&BOUND_MS));
    let thread_slack_ns = read_slack(ctx);
    let cells = plan();
    let mut loops: Vec<Option<Loop>> = vec![None; cells.len()];
    for i in ctx.rotated(&(0..cells.len()).collect::<Vec<_>>()) {
        if ctx.past_deadline() {
            ctx.note(NoteKind::Timeout, "the time bound ended a round early");
            break;
        }
        let (v, slack) = cells[i];
        let planned = if v.call.slow() { slow } else { fast };
        let slack_ns = (slack == Slack::Low).then_some(low);
        let limit = bound.min(ctx.time_left());
        match bounded_loop(v.call, slack_ns, planned, limit) {
            Ok(sample) => loops[i] = Some(checked(ctx, v, slack, low, planned, sample)),
            Err(e) => unavailable(ctx, v.call, slack, low, &e),
        }
    }
    Ok(CallsRound {
        thread_slack_ns,
        low_slack_ns: low,
        loops: loops.into_iter().flatten().collect(),
    })
}
// ANCHOR_END: calls_round

/// The loop as stored, with a note when it had to make fewer calls than planned.
fn checked(ctx: &mut Ctx, v: Variant, slack: Slack, low: u64, planned: u32, s: Sample) -> Loop {
    let key = key(v.call, slack, low);
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
        id: v.id.to_string(),
        key,
        slack,
        planned,
        sample: s,
    }
}

fn unavailable(ctx: &mut Ctx, call: Call, slack: Slack, low: u64, e: &std::io::Error) {
    ctx.note(
        NoteKind::Unsupported,
        format!("{} could not run here: {e}", key(call, slack, low)),
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
    None
}

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

/// The key of a sweep reading, which is a lateness: `thread::sleep · 20 µs · late by`.
pub fn sweep_key(mode: Mode, request_ns: f64, low_slack_ns: u64) -> String {
    format!("{} · late by", point_label(mode, request_ns, low_slack_ns))
}

impl SweepRound {
    /// One value per point: the median lateness of its sleeps in this round.
    fn readings(&self) -> Vec<Reading> {
        self.points
            .iter()
            .filter_map(|p| {
                let key = sweep_key(p.mode, p.request_ns, self.low_slack_ns);
                Some(Reading::new(key, Unit::Nanos, p.late_p50_ns?))
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
        })
    }
}
