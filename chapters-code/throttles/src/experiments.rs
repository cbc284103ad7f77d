//! The chapter's experiments: what one round runs, with which parameters, and the one
//! value per variant each round is summarised by (a sleep's lateness, a loop's time
//! per operation, a throttle's achieved rate, a latency percentile).

use crate::{
    OmissionPlan, Pacer, Run, Sink, StallingEcho, UdpOp, closed_loop_client, naive_iteration,
    sweep_pass, with_omitted,
};
use harness::Counters;
use harness::bounds::{Limit, Params, RoundBounds};
use harness::counters::PerOp;
use harness::record::twin_key;
use harness::render::fmt_count;
use harness::stats::{median_sorted, percentile_sorted};
use harness::unit::grouped;
use harness::{Budget, Ctx, Dist, Experiment, Keyed, NoteKind, Param, Reading, ReadingKey, Unit};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

// ------------------------------------------------------------------ the sleep sweep

/// The write-up's requested sleeps, in milliseconds.
pub const SWEEP_MS: [u64; 9] = [1, 2, 3, 5, 10, 15, 20, 30, 50];

const SLEEPS: Param = Param::int("sleeps", 1, 1_000)
    .defaults(3, 10)
    .unit("per length and round")
    .about("sleeps of each requested length in one round (interleaved passes over the lengths)");

pub static SWEEP: Experiment<SweepRound> = Experiment::new(
    "sweep",
    "std::thread::sleep of 1, 2, 3, 5, 10, 15, 20, 30 and 50 ms: requested against measured",
    sweep,
    SweepRound::readings,
)
.params(&[SLEEPS])
.budget(|p| p.pick(Budget::quick(3), Budget::full(25, 10)));

/// One requested length in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepLength {
    pub requested_ms: u64,
    /// How long each sleep took, pooled with the other rounds' for the tails.
    pub actual: Dist,
    /// This round's exact median sleep, and its lateness (median − requested).
    pub median_ns: Option<f64>,
    pub late_ns: Option<f64>,
    /// This round's median run-queue delay per sleep: time runnable but waiting for a
    /// CPU (Linux's schedstat; `None` elsewhere).
    #[serde(default)]
    pub run_delay_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepRound {
    pub lengths: Vec<SweepLength>,
    /// 1 ms sleeps that each follow another 1 ms sleep, as the short-sleeps chapter
    /// takes them (every sleep of the sweep itself follows a sleep of another length).
    #[serde(default)]
    pub back_to_back: Option<SweepLength>,
    /// The sleeping thread's timer slack (Linux's `PR_GET_TIMERSLACK`).
    #[serde(default)]
    pub timer_slack_ns: Option<u64>,
}

/// The readings of the sleep sweep, by what they are: how late the sleeps of one
/// requested length ended, and how late the 1 ms sleeps taken back to back ended.
/// Stored as `sleep(1 ms) · late by` and `sleep(1 ms) back to back · late by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepKey {
    /// The sleeps of one requested length (milliseconds, one of [`SWEEP_MS`]), each
    /// following a sleep of another length.
    Late(u64),
    /// The 1 ms sleeps that each follow another 1 ms sleep.
    BackToBack,
}

impl ReadingKey for SweepKey {
    fn stored(&self) -> String {
        match *self {
            SweepKey::Late(ms) => format!("sleep({ms} ms) · late by"),
            SweepKey::BackToBack => "sleep(1 ms) back to back · late by".to_string(),
        }
    }
}

impl Keyed for SweepRound {
    type Key = SweepKey;
}

/// Sleeps in a back-to-back block of each pass; the first, which follows a sleep of
/// another length, is not counted.
pub const BACK_TO_BACK: usize = 4;

/// A sweep round holds one length per requested sleep, each of at most `sleeps`
/// sleeps, and at most `sleeps` × 3 back-to-back 1 ms sleeps (each block of 4 keeps
/// its last 3).
impl RoundBounds for SweepRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        Limit::count(SWEEP_MS.len(), "requested lengths").len(
            "lengths",
            "lengths",
            &self.lengths,
        )?;
        let sleeps = p.limit(&SLEEPS);
        for l in &self.lengths {
            sleeps.dist(&format!("the length {} ms", l.requested_ms), &l.actual)?;
        }
        if let Some(b) = &self.back_to_back {
            let kept = BACK_TO_BACK as u64 - 1;
            sleeps
                .clone()
                .times(Limit::new(kept, format!("{kept} kept of each block")))
                .dist("the back-to-back sleeps", &b.actual)?;
        }
        Ok(())
    }
}

impl SweepRound {
    fn readings(&self) -> Vec<Reading> {
        let keyed = self
            .lengths
            .iter()
            .map(|l| (SweepKey::Late(l.requested_ms), l))
            .chain(self.back_to_back.iter().map(|l| (SweepKey::BackToBack, l)));
        keyed
            .filter_map(|(key, l)| Some(Reading::of(&key, Unit::Nanos, l.late_ns?)))
            .collect()
    }

    pub fn find(&self, ms: u64) -> Option<&SweepLength> {
        self.lengths.iter().find(|l| l.requested_ms == ms)
    }
}

/// `items` rotated left by `k`.
fn rotate<T: Clone>(items: &[T], k: usize) -> Vec<T> {
    if items.is_empty() {
        return Vec::new();
    }
    let k = k % items.len();
    items[k..].iter().chain(&items[..k]).cloned().collect()
}

/// What one step of a pass sleeps: one of the write-up's lengths once, or a block of
/// 1 ms sleeps back to back.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Length(u64),
    BackToBack,
}

/// The cycle a pass is a rotation of. The back-to-back block comes right after the
/// single 1 ms sleep, so that every single 1 ms sleep follows a 30 or 50 ms one (or
/// opens the round), never a 1 ms one.
fn steps() -> Vec<Step> {
    let mut steps: Vec<Step> = SWEEP_MS.iter().map(|&ms| Step::Length(ms)).collect();
    steps.insert(1, Step::BackToBack);
    steps
}

/// A length's sleeps in one round, summarised.
fn summarise(ms: u64, slept: &[crate::Slept]) -> SweepLength {
    let mut s: Vec<f64> = slept.iter().map(|x| x.took.as_nanos() as f64).collect();
    s.sort_by(f64::total_cmp);
    let mut waits: Vec<f64> = slept
        .iter()
        .filter_map(|x| Some(x.run_delay?.as_nanos() as f64))
        .collect();
    waits.sort_by(f64::total_cmp);
    let median = (!s.is_empty()).then(|| median_sorted(&s));
    SweepLength {
        requested_ms: ms,
        actual: Dist::from_samples(s.iter().copied()),
        median_ns: median,
        late_ns: median.map(|m| m - ms as f64 * 1e6),
        run_delay_ns: (!waits.is_empty() && waits.len() == slept.len())
            .then(|| median_sorted(&waits)),
    }
}

/// One round: `sleeps` passes over the nine lengths and the back-to-back block, each
/// pass in a different rotated order, so that a slow moment of the machine is spread
/// over every length.
fn sweep(ctx: &mut Ctx) -> anyhow::Result<SweepRound> {
    let passes = ctx.count(&SLEEPS);
    let cycle = steps();
    let mut samples: Vec<Vec<crate::Slept>> = vec![Vec::new(); SWEEP_MS.len()];
    let mut back_to_back: Vec<crate::Slept> = Vec::new();
    for pass in 0..passes {
        let order = rotate(&cycle, ctx.round as usize + pass);
        let asked: Vec<(Duration, usize)> = order
            .iter()
            .map(|step| match step {
                Step::Length(ms) => (Duration::from_millis(*ms), 1),
                Step::BackToBack => (Duration::from_millis(1), BACK_TO_BACK),
            })
            .collect();
        let slept = sweep_pass(&asked, ctx.deadline());
        let complete =
            slept.len() == order.len() && slept.iter().zip(&asked).all(|(s, a)| s.len() == a.1);
        for (step, these) in order.iter().zip(slept) {
            match step {
                Step::Length(ms) => {
                    let i = SWEEP_MS.iter().position(|x| x == ms).expect("a length");
                    samples[i].extend(these);
                }
                Step::BackToBack => back_to_back.extend(these.into_iter().skip(1)),
            }
        }
        if !complete {
            ctx.note(
                NoteKind::Timeout,
                format!(
                    "the time bound stopped a round after {pass} of {passes} passes over the lengths"
                ),
            );
            break;
        }
    }
    let lengths = SWEEP_MS
        .iter()
        .zip(&samples)
        .map(|(&ms, s)| summarise(ms, s))
        .collect();
    Ok(SweepRound {
        lengths,
        back_to_back: (!back_to_back.is_empty()).then(|| summarise(1, &back_to_back)),
        timer_slack_ns: crate::timer_slack_ns(),
    })
}

// ------------------------------------------------------ the write-up's benchmark

const OPS: Param = Param::int("ops", 1, 100_000)
    .defaults(20, 100)
    .unit("per loop and round")
    .about("operations (a send or not, then a 1 ms sleep) timed together as one iteration");

pub static NAIVE: Experiment<NaiveRound> = Experiment::new(
    "naive",
    "the write-up's loop at 1,000 ops/s: send a datagram and sleep 1 ms, with and without the send",
    naive,
    NaiveRound::readings,
)
.params(&[OPS])
.budget(|p| p.pick(Budget::quick(1), Budget::full(8, 10)));

/// One loop in one round: one timed iteration of `ops` operations.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NaiveRun {
    pub with_send: bool,
    pub ops: u64,
    /// The iteration's time divided by its operations.
    pub per_op_ns: f64,
    /// The time spent in the 1 ms sleeps, divided by the operations.
    #[serde(default)]
    pub asleep_per_op_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NaiveRound {
    pub runs: Vec<NaiveRun>,
    pub datagrams_sent: u64,
    /// `None`: the datagrams went to a port nobody holds, as in the write-up.
    pub datagrams_received: Option<u64>,
    #[serde(default)]
    pub send_errors: u64,
}

pub const WITH_SEND: [bool; 2] = [true, false];

/// The reading of the naive experiment: one loop's time per operation, with the send
/// or without it. Stored as `send; sleep(1 ms)` and `sleep(1 ms) only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NaiveKey {
    pub with_send: bool,
}

impl ReadingKey for NaiveKey {
    fn stored(&self) -> String {
        if self.with_send {
            "send; sleep(1 ms)"
        } else {
            "sleep(1 ms) only"
        }
        .to_string()
    }
}

impl Keyed for NaiveRound {
    type Key = NaiveKey;
}

/// A naive round holds one run with the send and one without, each of at most `ops`
/// operations, and sends at most `ops` datagrams.
impl RoundBounds for NaiveRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        Limit::count(WITH_SEND.len(), "loops").len("runs", "runs", &self.runs)?;
        let ops = p.limit(&OPS);
        for r in &self.runs {
            ops.check(
                &format!(
                    "the run {}",
                    NaiveKey {
                        with_send: r.with_send
                    }
                    .stored()
                ),
                "operations",
                r.ops,
            )?;
        }
        ops.check("the round", "datagrams sent", self.datagrams_sent)?;
        ops.check("the round", "send errors", self.send_errors)?;
        ops.check(
            "the round",
            "datagrams received",
            self.datagrams_received.unwrap_or(0),
        )
    }
}

impl NaiveRound {
    fn readings(&self) -> Vec<Reading> {
        self.runs
            .iter()
            .map(|r| {
                let key = NaiveKey {
                    with_send: r.with_send,
                };
                Reading::of(&key, Unit::Nanos, r.per_op_ns)
            })
            .collect()
    }
}

fn naive(ctx: &mut Ctx) -> anyhow::Result<NaiveRound> {
    let ops = ctx.int(&OPS);
    let mut op = UdpOp::new()?;
    let mut runs = Vec::new();
    for with_send in ctx.rotated(&WITH_SEND) {
        let (done, took, asleep) = naive_iteration(&mut op, with_send, ops, ctx.deadline());
        if done < ops {
            ctx.note(
                NoteKind::Timeout,
                format!("the time bound stopped an iteration after {done} of {ops} operations"),
            );
        }
        if done > 0 {
            runs.push(NaiveRun {
                with_send,
                ops: done,
                per_op_ns: took.as_nanos() as f64 / done as f64,
                asleep_per_op_ns: Some(asleep.as_nanos() as f64 / done as f64),
            });
        }
    }
    runs.sort_by_key(|r| !r.with_send);
    let (datagrams_sent, send_errors) = (op.sent, op.errors);
    let datagrams_received = op.finish();
    Ok(NaiveRound {
        runs,
        datagrams_sent,
        datagrams_received,
        send_errors,
    })
}

// ------------------------------------------------------ every throttle, every rate

const RATES_FROM: Param = Param::int("rates_from", 1, 1_000_000)
    .defaults(100, 100)
    .unit("ops/s")
    .about("the lowest target rate; the others are tenfold steps up to rates_to");
const RATES_TO: Param = Param::int("rates_to", 1, 1_000_000)
    .defaults(100_000, 100_000)
    .unit("ops/s")
    .about("the highest target rate (set both to one value to measure a single rate)");
const RUN_MS: Param = Param::int("run_ms", 1, 60_000)
    .defaults(20, 150)
    .unit("ms")
    .about("planned length of each run (but see run_ms_1k): target × run_ms operations, at least min_ops");
const RUN_MS_1K: Param = Param::int("run_ms_1k", 1, 60_000)
    .defaults(30, 150)
    .unit("ms")
    .about("planned length of each run at 1,000 ops/s, the write-up's target: long enough for tokio's millisecond timer to catch up (see the text) a few times");
const MIN_OPS: Param = Param::int("min_ops", 3, 1_000_000)
    .defaults(4, 20)
    .unit("operations")
    .about("the fewest operations a run asks for, so that a low rate has gaps to measure");

const HICCUP_MS: Param = Param::int("hiccup_ms", 0, 10_000)
    .defaults(20, 20)
    .unit("ms")
    .about("in the stall runs (1,000 ops/s), the 5th operation takes this much longer: a pause in the client itself");

pub static RATES: Experiment<RatesRound> = Experiment::new(
    "rates",
    "every throttle at every target rate (100 … 100,000 ops/s), and at 1,000 ops/s around one stalled operation: achieved rate, gaps, drift, CPU",
    rates,
    RatesRound::readings,
)
.params(&[RATES_FROM, RATES_TO, RUN_MS, RUN_MS_1K, MIN_OPS, HICCUP_MS])
// Quick: 10 s (5 rounds in 7.6 s at 8 s; a verdict needs 6).
.budget(|p| p.pick(Budget::quick(10), Budget::full(90, 10)));

/// The write-up's target rate.
pub const WRITEUP_RATE: f64 = 1_000.0;
/// The stall runs' target rate: the write-up's.
pub const STALL_RATE: f64 = WRITEUP_RATE;
/// The operation (1-based) that stalls in a stall run, and how many run after the
/// stall's worth of missed slots.
pub const STALL_AT: u64 = 5;
pub const AFTER_STALL: u64 = 5;

/// One throttle at one target rate in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RateRun {
    pub pacer: Pacer,
    pub target: f64,
    pub asked: u64,
    pub ran: u64,
    /// Operations per second between the first and the last start. It leaves the
    /// first wait out (tokio's first tick waits about a millisecond) and counts one
    /// wake-up's lateness, the last operation's after the first's, against n − 1
    /// periods: in a short run, the endpoint decides it.
    pub achieved: f64,
    /// Operations per second between the *second* start and the last (n − 2 gaps):
    /// the reading before `paced`. The second start's own lateness (its place in
    /// tokio's millisecond sawtooth; at 10,000/s, the ticks the first one made overdue)
    /// stays in it, divided by the run's length. `None` below 3 operations.
    #[serde(default)]
    pub steady: Option<f64>,
    /// The steady-state rate, the reading (stall runs excepted): one second over the
    /// slope of a line fitted (least squares) through the starts against their index,
    /// every start from [`STARTUP`] after the first operation on. A start-up burst or a
    /// first tick's lateness stays out, and no single start (the last one's lateness, a
    /// clump's phase, a catch-up) decides it, so it does not move with the run's length
    /// as a rate from one start to another does. `None` where fewer than two starts
    /// come after the start-up (see [`paced_rate`]).
    #[serde(default)]
    pub paced: Option<f64>,
    /// Where the datagrams went (the write-up's closed port, or the in-process
    /// reader of the control arm).
    #[serde(default = "closed_port")]
    pub sink: Sink,
    /// Time inside the operation (the send call), per operation.
    #[serde(default)]
    pub send_ns_per_op: Option<f64>,
    /// How much later than the schedule set by the first operation the last one
    /// started (negative: earlier), in nanoseconds.
    pub drift_ns: f64,
    /// This run's exact median gap between successive starts.
    pub gap_p50_ns: Option<f64>,
    /// Every gap, pooled with the other rounds' for distributions.
    pub gaps: Dist,
    /// CPU time of the pacing thread (sends included), from the throttle's set-up done
    /// to its last operation ([`crate::Run::pacing_ns`]); `None` where the OS has no
    /// per-thread CPU clock.
    pub cpu_ns: Option<f64>,
    /// The whole run's wall time, set-up included.
    pub wall_ns: f64,
    /// The wall time `cpu_ns` covers; absent in older records.
    #[serde(default)]
    pub paced_ns: Option<f64>,
    /// `None` where nobody reads the datagrams.
    pub datagrams_received: Option<u64>,
    pub send_errors: u64,
    /// In a stall run: what happened around the stalled operation.
    pub stall: Option<StallSeen>,
    /// Time between the first and the last start not spent in an operation (the
    /// throttle's waiting), per gap.
    #[serde(default)]
    pub wait_per_op_ns: Option<f64>,
    /// How much later than the schedule set by the first operation (`first + k ×
    /// period`) the operations started: the median and the largest.
    #[serde(default)]
    pub late_p50_ns: Option<f64>,
    #[serde(default)]
    pub late_max_ns: Option<f64>,
    /// Gaps shorter than half a period: operations that went (nearly) back to back.
    #[serde(default)]
    pub short_gaps: u64,
    /// The pacing thread's scheduler counters over the run, per operation.
    #[serde(default)]
    pub per_op: PerOp,
    /// An A/A twin: the same code as the run it twins, measured as a separate arm.
    #[serde(default)]
    pub twin: bool,
    /// From the throttle's set-up (after tokio's runtime and `interval` are built) to
    /// the first operation's start: the first wait, or the first tick's.
    #[serde(default)]
    pub first_wait_ns: Option<f64>,
}

/// One operation took `hiccup_ms` longer than the others; what the throttle did next.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StallSeen {
    pub hiccup_ms: u64,
    /// Operations that started less than half a period after the one before, right
    /// after the stall: the catch-up burst.
    pub burst: u64,
}

fn closed_port() -> Sink {
    Sink::ClosedPort
}

impl RateRun {
    /// The reading: the steady-state rate (`paced`); a stall run's, and a run with no
    /// two starts after an ordinary wait (it never waits: it runs behind), from its
    /// second start to its last.
    pub fn reading(&self) -> Option<f64> {
        let paced = self.paced.filter(|_| self.stall.is_none());
        paced.or(self.steady).filter(|v| *v > 0.0)
    }

    /// Stopped at twice its planned time before all its operations ran.
    pub fn capped(&self) -> bool {
        self.ran < self.asked
    }

    /// The pacing thread's CPU time from its set-up done to its last operation (sends
    /// included), per operation.
    pub fn cpu_per_op(&self) -> Option<f64> {
        (self.ran > 0).then_some(self.cpu_ns? / self.ran as f64)
    }

    /// How far the reading missed the target, either way: 100 × |ln(rate ÷ target)|,
    /// about the percentage off for a small miss.
    pub fn miss(&self) -> Option<f64> {
        Some((self.reading()? / self.target).ln().abs() * 100.0)
    }

    /// The key of this run's reading.
    pub fn key(&self) -> RatesKey {
        match (self.stall.is_some(), self.twin, self.sink) {
            (true, _, _) => RatesKey::Stall(self.pacer),
            (false, true, _) => RatesKey::twin(self.pacer, self.target),
            (false, false, Sink::InProcess) => RatesKey::reader(self.pacer, self.target),
            (false, false, Sink::ClosedPort) => RatesKey::rate(self.pacer, self.target),
        }
    }

    /// Its steady-state figure reads start-up, not a pace: it plans fewer than 10 starts
    /// past [`STARTUP`], or it is governor's 10 ms burst still draining past it, at the
    /// pace of its sends less the target's (our arithmetic). Stall runs are never so.
    pub fn start_up_only(&self) -> bool {
        let s = STARTUP.as_secs_f64();
        let few = (self.asked as f64) < (self.target * s).floor() + 11.0;
        let burst = (crate::DEFAULT_MAX_LAG.as_secs_f64() * self.target).max(1.0);
        let net = self.send_ns_per_op.map_or(0.0, |ns| 1e9 / ns - self.target);
        let draining = self.pacer == Pacer::GovernorBurst && (net <= 0.0 || burst / net > s);
        self.stall.is_none() && (few || draining)
    }

    /// The longest gap between two starts (to the three significant digits of `gaps`).
    pub fn longest_gap_ns(&self) -> Option<f64> {
        self.gaps.quantile(1.0)
    }

    /// The pacing thread's CPU time over the wall time it covers.
    pub fn cpu_share(&self) -> Option<f64> {
        let wall = self.paced_ns.unwrap_or(self.wall_ns);
        self.cpu_ns.filter(|_| wall > 0.0).map(|c| c / wall)
    }
}

/// A run with a stall inside (see [`stalled_runs`]): the figure that stands out and
/// its arm's median of it.
#[derive(Debug, Clone, Copy)]
pub struct Stalled<'a> {
    pub run: &'a RateRun,
    /// Found by its longest gap (else by its latest start's lateness).
    pub by_gap: bool,
    pub value_ns: f64,
    pub median_ns: f64,
}

impl Stalled<'_> {
    /// What stood out, for a list of the runs.
    pub fn what(&self) -> &'static str {
        if self.by_gap {
            "longest gap"
        } else {
            "latest start"
        }
    }
}

/// The runs with a stall inside, the one that stands out most first, against their
/// arm (the same throttle, target, twin and sink, over rounds). A stall: a longest gap
/// that overran the period by more than 3× what the arm's median longest gap did, and
/// by over 1 ms more; or else a latest start (against first start + k periods) more
/// than 3×, and over 1 ms, later than the arm's median one. The gap's overrun, not the
/// gap, is compared, so that a 20 ms stall counts at 100/s (10 ms gaps) as at
/// 10,000/s. The gap finds a stall in a throttle that runs ahead of its schedule
/// (governor's burst stays ahead through one, so its latest start shows nothing); the
/// lateness finds several shorter hold-ups that add up. Round-level noise sensors can
/// miss either. Also the count of runs looked at.
pub fn stalled_runs<'a>(rounds: impl Iterator<Item = &'a RatesRound>) -> (Vec<Stalled<'a>>, usize) {
    let runs: Vec<&RateRun> = rounds
        .flat_map(|d| d.runs.iter().chain(&d.twins).chain(&d.controls))
        .collect();
    let arm = |x: &RateRun| (x.pacer, x.target.to_bits(), x.twin, x.sink);
    // This run's figure and its arm's median, where the arm has it.
    let against = |x: &RateRun, f: fn(&RateRun) -> Option<f64>| {
        let mut v: Vec<f64> = runs
            .iter()
            .filter(|y| arm(y) == arm(x))
            .filter_map(|y| f(y))
            .collect();
        v.sort_by(f64::total_cmp);
        Some((f(x)?, (!v.is_empty()).then(|| median_sorted(&v))?))
    };
    let mut found = Vec::new();
    for &x in &runs {
        let period = 1e9 / x.target;
        let over = |g: f64| (g - period).max(0.0);
        let gap = against(x, RateRun::longest_gap_ns)
            .filter(|&(g, m)| over(g) > 3.0 * over(m) && g - m > 1e6);
        let late = against(x, |y| y.late_max_ns).filter(|&(l, m)| l > 3.0 * m && l - m > 1e6);
        if let Some((value_ns, median_ns)) = gap.or(late) {
            let by_gap = gap.is_some();
            found.push(Stalled {
                run: x,
                by_gap,
                value_ns,
                median_ns,
            });
        }
    }
    let excess = |s: &Stalled| s.value_ns - s.median_ns;
    found.sort_by(|a, b| excess(b).total_cmp(&excess(a)));
    (found, runs.len())
}

/// The run the A/A twin repeats: the deadline throttle at the write-up's rate.
pub const TWIN: Pacer = Pacer::Deadline;

/// The control arms: these throttles at these rates run a second time in every round,
/// sending to a socket of the process that a thread reads (what this chapter did
/// before it sent where the write-up did), so the page can show what that thread costs.
pub const READER_ARMS: [(Pacer, f64); 2] =
    [(Pacer::Deadline, 1_000.0), (Pacer::Deadline, 10_000.0)];

/// The readings of the rates experiment, by what they are: a throttle's steady rate
/// at a target rate (whole operations per second), in one of the runs at that target,
/// or over its stall run. Stored as `deadline · 10,000/s`, `deadline · 1,000/s (A/A
/// twin)`, `deadline · 1,000/s · reader thread` and `deadline · stall`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RatesKey {
    /// A run sending where the write-up did (a port nobody holds).
    Rate(Pacer, u64),
    /// The A/A twin of that run (see [`TWIN`]).
    Twin(Pacer, u64),
    /// The control arm: the same run, sending to an in-process reader thread (see
    /// [`READER_ARMS`]).
    Reader(Pacer, u64),
    /// The stall run, at [`STALL_RATE`].
    Stall(Pacer),
}

impl RatesKey {
    /// A throttle's run at a target rate (a whole number of operations per second).
    pub fn rate(pacer: Pacer, target: f64) -> RatesKey {
        RatesKey::Rate(pacer, target as u64)
    }

    /// The A/A twin of a throttle's run at a target rate.
    pub fn twin(pacer: Pacer, target: f64) -> RatesKey {
        RatesKey::Twin(pacer, target as u64)
    }

    /// The control arm of a throttle's run at a target rate.
    pub fn reader(pacer: Pacer, target: f64) -> RatesKey {
        RatesKey::Reader(pacer, target as u64)
    }
}

impl ReadingKey for RatesKey {
    fn stored(&self) -> String {
        let at = |p: Pacer, target: u64| format!("{} · {}/s", p.label(), grouped(target));
        match *self {
            RatesKey::Rate(p, t) => at(p, t),
            RatesKey::Twin(p, t) => twin_key(&at(p, t)),
            RatesKey::Reader(p, t) => format!("{} · reader thread", at(p, t)),
            RatesKey::Stall(p) => format!("{} · stall", p.label()),
        }
    }
}

impl Keyed for RatesRound {
    type Key = RatesKey;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RatesRound {
    pub targets: Vec<f64>,
    pub run_ms: u64,
    pub runs: Vec<RateRun>,
    /// Every throttle at [`STALL_RATE`] with one stalled operation.
    pub stalls: Vec<RateRun>,
    /// The A/A twin's run (see [`TWIN`]), kept apart from the tables' runs.
    #[serde(default)]
    pub twins: Vec<RateRun>,
    /// The control arms (see [`READER_ARMS`]), kept apart too.
    #[serde(default)]
    pub controls: Vec<RateRun>,
}

/// A rates round holds one run per (throttle, target rate), one stall run per
/// throttle, one twin and the control arms; a run asks for at most the operations its
/// parameters give the largest rate (or the stall runs), and its counts are at most
/// that.
impl RoundBounds for RatesRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        let (from, to) = (p.limit(&RATES_FROM), p.limit(&RATES_TO));
        let targets = target_rates(from.n, to.n).unwrap_or_default();
        let rates = Limit::new(
            targets.len() as u64,
            format!(
                "{} target rates from {} to {}",
                targets.len(),
                from.why,
                to.why
            ),
        );
        rates.len("targets", "target rates", &self.targets)?;
        let pacers = Limit::new(
            Pacer::ALL.len() as u64,
            format!("{} throttles", Pacer::ALL.len()),
        );
        rates
            .clone()
            .times(pacers.clone())
            .len("runs", "runs", &self.runs)?;
        pacers.len("stalls", "stall runs", &self.stalls)?;
        Limit::new(1, "one twin").len("twins", "twin runs", &self.twins)?;
        Limit::count(READER_ARMS.len(), "control arms").len(
            "controls",
            "control runs",
            &self.controls,
        )?;
        let (run_ms, run_ms_1k, min_ops) =
            (p.limit(&RUN_MS), p.limit(&RUN_MS_1K), p.limit(&MIN_OPS));
        let hiccup = p.limit(&HICCUP_MS);
        let missed = (hiccup.n as f64 / 1e3 * STALL_RATE).ceil() as u64;
        let most = targets
            .iter()
            .map(|&r| ops_for(r, run_ms.n, run_ms_1k.n, min_ops.n))
            .fold(STALL_AT + missed + AFTER_STALL, u64::max);
        let ops = Limit::new(
            most,
            format!(
                "the most operations a run asks for with {}, {}, {}, {}, {} and {}",
                from.why, to.why, run_ms.why, run_ms_1k.why, min_ops.why, hiccup.why
            ),
        );
        for r in self
            .runs
            .iter()
            .chain(&self.stalls)
            .chain(&self.twins)
            .chain(&self.controls)
        {
            let what = format!(
                "the run of {} at {}/s",
                r.pacer.label(),
                fmt_count(r.target as u64)
            );
            ops.check(&what, "operations asked for", r.asked)?;
            ops.check(&what, "operations", r.ran)?;
            ops.dist(&format!("{what}: its gaps"), &r.gaps)?;
            ops.check(&what, "short gaps", r.short_gaps)?;
            ops.check(&what, "send errors", r.send_errors)?;
            ops.check(
                &what,
                "datagrams received",
                r.datagrams_received.unwrap_or(0),
            )?;
            if let Some(st) = &r.stall {
                ops.check(&what, "operations in its burst", st.burst)?;
            }
        }
        Ok(())
    }
}

impl RatesRound {
    fn readings(&self) -> Vec<Reading> {
        let keyed = |runs: &[RateRun], key: fn(&RateRun) -> RatesKey| -> Vec<Reading> {
            runs.iter()
                .filter_map(|r| Some(Reading::of(&key(r), Unit::OpsPerSec, r.reading()?)))
                .collect()
        };
        let mut out = keyed(&self.runs, |r| RatesKey::rate(r.pacer, r.target));
        out.extend(keyed(&self.stalls, |r| RatesKey::Stall(r.pacer)));
        out.extend(keyed(&self.twins, |r| RatesKey::twin(r.pacer, r.target)));
        out.extend(keyed(&self.controls, |r| {
            RatesKey::reader(r.pacer, r.target)
        }));
        out
    }

    pub fn find(&self, pacer: Pacer, target: f64) -> Option<&RateRun> {
        self.runs
            .iter()
            .find(|r| r.pacer == pacer && r.target == target)
    }

    pub fn control(&self, pacer: Pacer, target: f64) -> Option<&RateRun> {
        self.controls
            .iter()
            .find(|r| r.pacer == pacer && r.target == target)
    }

    pub fn stall(&self, pacer: Pacer) -> Option<&RateRun> {
        self.stalls.iter().find(|r| r.pacer == pacer)
    }
}

/// The target rates: `from`, then tenfold steps while they do not exceed `to`.
pub fn target_rates(from: u64, to: u64) -> anyhow::Result<Vec<f64>> {
    anyhow::ensure!(
        from <= to,
        "rates_from ({}) is above rates_to ({}); set rates_from ≤ rates_to",
        fmt_count(from),
        fmt_count(to)
    );
    let mut out = Vec::new();
    let mut r = from;
    while r <= to {
        out.push(r as f64);
        r = r.saturating_mul(10);
    }
    Ok(out)
}

/// Runs one throttle at one rate: `ops` operations, stopped at twice the planned
/// time or at `deadline`, whichever comes first. With `hiccup`, operation
/// [`STALL_AT`] takes that much longer than the others.
pub fn measure_rate(
    pacer: Pacer,
    rate: f64,
    ops: u64,
    hiccup: Option<Duration>,
    sink: Sink,
    deadline: Instant,
) -> anyhow::Result<RateRun> {
    let period_ns = crate::period_ns(rate)?;
    let planned =
        Duration::from_secs_f64(ops.saturating_sub(1) as f64 / rate) + hiccup.unwrap_or_default();
    let mut op = UdpOp::to(sink)?;
    let start = Instant::now();
    let stop_at = deadline.min(start + 2 * planned + Duration::from_millis(20));
    let counters0 = Counters::thread();
    let (starts, waiting, busy, ready, (cpu, paced_ns)) = {
        let mut done = 0;
        let mut send = || {
            done += 1;
            if let Some(h) = hiccup.filter(|_| done == STALL_AT) {
                std::thread::sleep(h);
            }
            op.send();
        };
        let mut run = Run::new(&mut send, ops as usize, stop_at);
        pacer.drive(rate, &mut run)?;
        let (waiting, paced) = (run.waiting(), run.pacing_ns());
        (run.starts, waiting, run.busy, run.ready, paced)
    };
    let counters = Counters::thread().since(&counters0);
    let wall_ns = start.elapsed().as_nanos() as f64;
    let send_errors = op.errors;
    let datagrams_received = op.finish();
    let mut gaps: Vec<f64> = starts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_nanos() as f64)
        .collect();
    let span: f64 = gaps.iter().sum();
    let n = starts.len() as u64;
    // Gap i is from operation i to i + 1 (0-based): the stalled operation is
    // STALL_AT - 1, and the burst is the run of short gaps after the one it made long.
    let stall = hiccup.map(|h| StallSeen {
        hiccup_ms: h.as_millis() as u64,
        burst: gaps
            .iter()
            .skip(STALL_AT as usize)
            .take_while(|&&g| g < period_ns / 2.0)
            .count() as u64,
    });
    let lateness = {
        let first = starts.first().copied();
        let mut late: Vec<f64> = starts
            .iter()
            .enumerate()
            .filter_map(|(k, &t)| {
                let first = first?;
                Some((t - first).as_nanos() as f64 - k as f64 * period_ns)
            })
            .collect();
        late.sort_by(f64::total_cmp);
        late
    };
    let short_gaps = gaps.iter().filter(|&&g| g < period_ns / 2.0).count() as u64;
    gaps.sort_by(f64::total_cmp);
    Ok(RateRun {
        pacer,
        target: rate,
        asked: ops,
        ran: n,
        achieved: if span > 0.0 {
            (n - 1) as f64 * 1e9 / span
        } else {
            0.0
        },
        paced: paced_rate(&starts),
        steady: match starts.as_slice() {
            [_, second, .., last] if last > second => {
                Some((n - 2) as f64 * 1e9 / (*last - *second).as_nanos() as f64)
            }
            _ => None,
        },
        sink,
        send_ns_per_op: (n > 0).then(|| busy.as_nanos() as f64 / n as f64),
        drift_ns: span - n.saturating_sub(1) as f64 * period_ns,
        gap_p50_ns: (!gaps.is_empty()).then(|| median_sorted(&gaps)),
        gaps: Dist::from_samples(gaps),
        cpu_ns: cpu,
        wall_ns,
        paced_ns,
        datagrams_received,
        send_errors,
        stall,
        wait_per_op_ns: (n >= 2).then(|| waiting.as_nanos() as f64 / (n - 1) as f64),
        late_p50_ns: (!lateness.is_empty()).then(|| median_sorted(&lateness)),
        late_max_ns: lateness.last().copied(),
        short_gaps,
        per_op: counters.per_op(n),
        twin: false,
        first_wait_ns: starts
            .first()
            .zip(ready)
            .map(|(&first, ready)| first.saturating_duration_since(ready).as_nanos() as f64),
    })
}

/// What a rate leaves out as start-up: tokio's first tick waits up to a millisecond
/// tick and fires the ticks it made overdue at once after it; governor spends its
/// burst at once.
pub const STARTUP: Duration = Duration::from_millis(2);

/// The steady-state rate of a run's starts (see [`RateRun::paced`]): a least-squares
/// line through the starts past the start-up.
pub fn paced_rate(starts: &[Instant]) -> Option<f64> {
    let first = *starts.first()?;
    let a = starts.iter().position(|s| *s - first >= STARTUP)?;
    let b = starts.len() - 1;
    let t: Vec<f64> = starts[a..]
        .iter()
        .map(|s| (*s - starts[a]).as_nanos() as f64)
        .collect();
    let n = t.len() as f64;
    let (x_mean, t_mean) = ((n - 1.0) / 2.0, t.iter().sum::<f64>() / n);
    let (mut sxt, mut sxx) = (0.0, 0.0);
    for (i, ti) in t.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxt += dx * (ti - t_mean);
        sxx += dx * dx;
    }
    let slope_ns = sxt / sxx; // NaN (refused below) for a single start
    (b > a && slope_ns > 0.0).then(|| 1e9 / slope_ns)
}

/// Operations a run at `rate` asks for: `run_ms`' worth (`run_ms_1k`'s at the
/// write-up's 1,000/s), at least `min_ops`.
pub fn ops_for(rate: f64, run_ms: u64, run_ms_1k: u64, min_ops: u64) -> u64 {
    let ms = if rate == WRITEUP_RATE {
        run_ms_1k
    } else {
        run_ms
    };
    ((rate * ms as f64 / 1e3).ceil() as u64).max(min_ops)
}

/// What one run of a rates round is: a throttle at a target, or a stall run.
#[derive(Debug, Clone, Copy)]
struct Spec {
    pacer: Pacer,
    rate: f64,
    ops: u64,
    hiccup: Option<Duration>,
    twin: bool,
    sink: Sink,
}

/// One round: every throttle at every target rate once, and every throttle's stall
/// run, all in the round's rotated order.
fn rates(ctx: &mut Ctx) -> anyhow::Result<RatesRound> {
    let targets = target_rates(ctx.int(&RATES_FROM), ctx.int(&RATES_TO))?;
    let (run_ms, run_ms_1k) = (ctx.int(&RUN_MS), ctx.int(&RUN_MS_1K));
    let min_ops = ctx.int(&MIN_OPS);
    let hiccup = Duration::from_millis(ctx.int(&HICCUP_MS));
    let missed = (hiccup.as_secs_f64() * STALL_RATE).ceil() as u64;
    let mut specs: Vec<Spec> = targets
        .iter()
        .flat_map(|&rate| {
            Pacer::ALL.map(|pacer| Spec {
                pacer,
                rate,
                ops: ops_for(rate, run_ms, run_ms_1k, min_ops),
                hiccup: None,
                twin: false,
                sink: Sink::ClosedPort,
            })
        })
        .collect();
    // The A/A twin: the same throttle, rate and size as one of the runs above.
    if let Some(original) = specs
        .iter()
        .find(|s| s.pacer == TWIN && s.rate == WRITEUP_RATE)
        .copied()
    {
        specs.push(Spec {
            twin: true,
            ..original
        });
    }
    // The control arms: the same runs, sending to an in-process reader.
    for (pacer, rate) in READER_ARMS {
        if let Some(original) = specs
            .iter()
            .find(|s| s.pacer == pacer && s.rate == rate && !s.twin)
            .copied()
        {
            specs.push(Spec {
                sink: Sink::InProcess,
                ..original
            });
        }
    }
    specs.extend(Pacer::ALL.map(|pacer| Spec {
        pacer,
        rate: STALL_RATE,
        ops: STALL_AT + missed + AFTER_STALL,
        hiccup: Some(hiccup),
        twin: false,
        sink: Sink::ClosedPort,
    }));
    let mut done: Vec<Option<RateRun>> = vec![None; specs.len()];
    for i in ctx.rotated(&(0..specs.len()).collect::<Vec<_>>()) {
        let spec = specs[i];
        let key = match (spec.hiccup, spec.twin, spec.sink) {
            (Some(_), _, _) => RatesKey::Stall(spec.pacer),
            (None, true, _) => RatesKey::twin(spec.pacer, spec.rate),
            (None, false, Sink::InProcess) => RatesKey::reader(spec.pacer, spec.rate),
            (None, false, Sink::ClosedPort) => RatesKey::rate(spec.pacer, spec.rate),
        };
        if ctx.past_deadline() {
            ctx.note(
                NoteKind::Timeout,
                "the time bound was reached before every run of a round; the missing ones have fewer rounds",
            );
            break;
        }
        match measure_rate(
            spec.pacer,
            spec.rate,
            spec.ops,
            spec.hiccup,
            spec.sink,
            ctx.deadline(),
        ) {
            Ok(run) => {
                done[i] = Some(RateRun {
                    twin: spec.twin,
                    ..run
                })
            }
            Err(e) => ctx.note(
                NoteKind::Info,
                format!("{} could not run: {e:#}", key.stored()),
            ),
        }
    }
    let (twins, done): (Vec<RateRun>, Vec<RateRun>) =
        done.into_iter().flatten().partition(|r| r.twin);
    let (controls, done): (Vec<RateRun>, Vec<RateRun>) =
        done.into_iter().partition(|r| r.sink == Sink::InProcess);
    let (runs, stalls): (Vec<RateRun>, Vec<RateRun>) =
        done.into_iter().partition(|r| r.stall.is_none());
    if harness::thread_cpu_time().is_none() {
        ctx.note(
            NoteKind::Unsupported,
            "this OS has no per-thread CPU clock, so the CPU column is empty",
        );
    }
    ctx.detail(
        "target rates",
        targets
            .iter()
            .map(|&t| format!("{}/s", fmt_count(t as u64)))
            .collect::<Vec<_>>()
            .join(", "),
    );
    ctx.detail(
        "stall runs",
        format!("{} operations each", STALL_AT + missed + AFTER_STALL),
    );
    Ok(RatesRound {
        targets,
        run_ms,
        runs,
        stalls,
        twins,
        controls,
    })
}

// ------------------------------------------------------------ coordinated omission

const RATE: Param = Param::int("rate", 1, 100_000)
    .defaults(1_000, 1_000)
    .unit("requests/s")
    .about("the client's schedule");
const REQUESTS: Param = Param::int("requests", 10, 1_000_000)
    .defaults(200, 1_000)
    .unit("per round")
    .about("requests the client sends in one round");
const STALL_EVERY: Param = Param::int("stall_every", 1, 1_000_000)
    .defaults(100, 200)
    .unit("requests")
    .about("the server pauses before answering one request in every this many (the middle one: the 50th, 150th, … for 100)");
const STALL_MS: Param = Param::int("stall_ms", 0, 10_000)
    .defaults(25, 40)
    .unit("ms")
    .about("how long each pause lasts");
const PATIENCE_MS: Param = Param::int("patience_ms", 1, 60_000)
    .defaults(2_000, 2_000)
    .unit("ms")
    .about("how long the client waits for an answer before it counts the request as lost");

pub static OMISSION: Experiment<OmissionRound> = Experiment::new(
    "omission",
    "coordinated omission: a closed-loop client against a stalling server, latency from the actual and from the intended send",
    omission,
    OmissionRound::readings,
)
.params(&[RATE, REQUESTS, STALL_EVERY, STALL_MS, PATIENCE_MS])
.budget(|p| p.pick(Budget::quick(2), Budget::full(20, 10)));

/// The three ways of measuring the same requests' latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Measure {
    /// From the moment the request actually went out: what a closed-loop tester sees.
    FromSend,
    /// The same, with the samples HdrHistogram's `record_correct` would add.
    Corrected,
    /// From the moment the schedule said the request should go out.
    FromIntent,
}

impl Measure {
    pub const ALL: [Measure; 3] = [Measure::FromSend, Measure::Corrected, Measure::FromIntent];

    pub fn label(self) -> &'static str {
        match self {
            Measure::FromSend => "from the actual send",
            Measure::Corrected => "same, record_correct",
            Measure::FromIntent => "from the intended send",
        }
    }
}

/// The reading of the omission experiment: one measure's 90th percentile in a round,
/// the measure being its own key. Stored as `from the actual send · p90`.
impl ReadingKey for Measure {
    fn stored(&self) -> String {
        let measure = match self {
            Measure::FromSend => "from the actual send",
            Measure::Corrected => "same, record_correct",
            Measure::FromIntent => "from the intended send",
        };
        format!("{measure} · p90")
    }
}

impl Keyed for OmissionRound {
    type Key = Measure;
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    pub measure: Measure,
    pub latency: Dist,
    /// This round's exact 90th percentile.
    pub p90_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OmissionRound {
    pub rate: f64,
    pub stall_every: u64,
    pub stall_ms: u64,
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    pub late: u64,
    /// Requests the server saw, and the pauses it made.
    pub served: u64,
    pub pauses: u64,
    pub measured: Vec<Measured>,
    /// Answered requests that went out more than one period after the schedule said:
    /// the ones a pause held up.
    #[serde(default)]
    pub sent_late: u64,
    /// How much later than intended the requests went out: the median and the largest.
    #[serde(default)]
    pub send_late_p50_ns: Option<f64>,
    #[serde(default)]
    pub send_late_max_ns: Option<f64>,
}

/// An omission round sends at most `requests` requests, and each latency list holds
/// one sample per answered request; the corrected one adds at most one sample per
/// period of its latency, which the client's patience bounds (with a margin of 2 for
/// answers taken just past it).
impl RoundBounds for OmissionRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        let requests = p.limit(&REQUESTS);
        for (field, n) in [
            ("requests sent", self.sent),
            ("answers", self.answered),
            ("lost requests", self.lost),
            ("late answers", self.late),
            ("requests served", self.served),
            ("pauses", self.pauses),
            ("requests sent late", self.sent_late),
        ] {
            requests.check("the round", field, n)?;
        }
        Limit::count(Measure::ALL.len(), "ways of measuring").len(
            "measured",
            "latency lists",
            &self.measured,
        )?;
        let (patience, rate) = (p.limit(&PATIENCE_MS), p.limit(&RATE));
        let per = patience.n.saturating_mul(rate.n) / 1_000 + 1;
        let corrected = requests.clone().times(Limit::new(
            per.saturating_mul(2),
            format!(
                "2 × (1 + {} × {} ÷ 1,000 periods of patience)",
                patience.why, rate.why
            ),
        ));
        for m in &self.measured {
            let bound = if m.measure == Measure::Corrected {
                &corrected
            } else {
                &requests
            };
            bound.dist(&format!("the latency {}", m.measure.label()), &m.latency)?;
        }
        Ok(())
    }
}

impl OmissionRound {
    fn readings(&self) -> Vec<Reading> {
        self.measured
            .iter()
            .filter_map(|m| Some(Reading::of(&m.measure, Unit::Nanos, m.p90_ns?)))
            .collect()
    }

    pub fn find(&self, m: Measure) -> Option<&Measured> {
        self.measured.iter().find(|x| x.measure == m)
    }
}

fn measured(measure: Measure, mut samples: Vec<f64>) -> Measured {
    samples.sort_by(f64::total_cmp);
    Measured {
        measure,
        p90_ns: (!samples.is_empty()).then(|| percentile_sorted(&samples, 0.90)),
        latency: Dist::from_samples(samples),
    }
}

fn omission(ctx: &mut Ctx) -> anyhow::Result<OmissionRound> {
    let rate = ctx.int(&RATE) as f64;
    let requests = ctx.int(&REQUESTS);
    let (stall_every, stall_ms) = (ctx.int(&STALL_EVERY), ctx.int(&STALL_MS));
    let patience = Duration::from_millis(ctx.int(&PATIENCE_MS));
    let server = StallingEcho::start(stall_every, Duration::from_millis(stall_ms))?;
    let plan = OmissionPlan {
        rate,
        requests,
        patience,
        deadline: ctx.deadline(),
    };
    let got = closed_loop_client(server.addr, &plan);
    let served = server.stop();
    let got = got?;
    if got.stopped {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "the time bound stopped the client after {} of {} requests",
                got.sent,
                fmt_count(requests)
            ),
        );
    }
    if got.lost > 0 {
        ctx.note(
            NoteKind::Info,
            format!(
                "some requests got no answer within {} ms (patience_ms) and are not in the latencies; answers that came later were matched by sequence number and skipped",
                patience.as_millis()
            ),
        );
    }
    let ns = |d: Duration| d.as_nanos() as f64;
    let from_send: Vec<f64> = got
        .answered
        .iter()
        .map(|x| ns(x.answered - x.sent))
        .collect();
    let from_intent: Vec<f64> = got
        .answered
        .iter()
        .map(|x| ns(x.answered.saturating_duration_since(x.due)))
        .collect();
    let corrected = with_omitted(&from_send, 1e9 / rate);
    let mut send_late: Vec<f64> = got
        .answered
        .iter()
        .map(|x| ns(x.sent.saturating_duration_since(x.due)))
        .collect();
    send_late.sort_by(f64::total_cmp);
    let sent_late = send_late.iter().filter(|&&v| v > 1e9 / rate).count() as u64;
    Ok(OmissionRound {
        rate,
        stall_every,
        stall_ms,
        sent: got.sent,
        answered: got.answered.len() as u64,
        lost: got.lost,
        late: got.late,
        served: served.requests,
        pauses: served.pauses,
        measured: vec![
            measured(Measure::FromSend, from_send),
            measured(Measure::Corrected, corrected),
            measured(Measure::FromIntent, from_intent),
        ],
        sent_late,
        send_late_p50_ns: (!send_late.is_empty()).then(|| median_sorted(&send_late)),
        send_late_max_ns: send_late.last().copied(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_rates_are_tenfold_steps() {
        assert_eq!(
            target_rates(100, 100_000).unwrap(),
            vec![100.0, 1e3, 1e4, 1e5]
        );
        assert_eq!(target_rates(2_500, 2_500).unwrap(), vec![2_500.0]);
        assert_eq!(target_rates(3, 50).unwrap(), vec![3.0, 30.0]);
        let e = target_rates(10, 5).unwrap_err().to_string();
        assert!(e.contains("rates_from"), "{e}");
    }

    /// The strings records hold, pinned: a typed key must store what the stored
    /// results were found by before it existed.
    #[test]
    fn typed_keys_store_the_strings_records_hold() {
        let stored = |k: &dyn ReadingKey| k.stored();
        assert_eq!(stored(&SweepKey::Late(1)), "sleep(1 ms) · late by");
        assert_eq!(stored(&SweepKey::Late(50)), "sleep(50 ms) · late by");
        assert_eq!(
            stored(&SweepKey::BackToBack),
            "sleep(1 ms) back to back · late by"
        );
        assert_eq!(stored(&NaiveKey { with_send: true }), "send; sleep(1 ms)");
        assert_eq!(stored(&NaiveKey { with_send: false }), "sleep(1 ms) only");
        assert_eq!(
            stored(&RatesKey::rate(Pacer::Naive, 10_000.0)),
            "naive · 10,000/s"
        );
        assert_eq!(
            stored(&RatesKey::Rate(Pacer::DebtAsPublished, 100_000)),
            "debt, as published · 100,000/s"
        );
        assert_eq!(
            stored(&RatesKey::Rate(Pacer::GovernorBurst, 100)),
            "governor, 10 ms burst · 100/s"
        );
        assert_eq!(
            stored(&RatesKey::twin(TWIN, WRITEUP_RATE)),
            "deadline · 1,000/s (A/A twin)"
        );
        assert_eq!(
            stored(&RatesKey::reader(Pacer::Deadline, 10_000.0)),
            "deadline · 10,000/s · reader thread"
        );
        assert_eq!(
            stored(&RatesKey::Stall(Pacer::TokioSkip)),
            "tokio Skip · stall"
        );
        assert_eq!(stored(&Measure::FromSend), "from the actual send · p90");
        assert_eq!(stored(&Measure::Corrected), "same, record_correct · p90");
        assert_eq!(stored(&Measure::FromIntent), "from the intended send · p90");
        let names = [
            "naive",
            "debt, as published",
            "compensating",
            "deadline",
            "tokio Burst",
            "tokio Delay",
            "tokio Skip",
            "governor, burst 1",
            "governor, 10 ms burst",
        ];
        for (p, name) in Pacer::ALL.into_iter().zip(names) {
            assert_eq!(stored(&RatesKey::Stall(p)), format!("{name} · stall"));
            assert_eq!(
                stored(&RatesKey::rate(p, 1_000.0)),
                format!("{name} · 1,000/s")
            );
        }
    }

    #[test]
    fn headline_figures_read_readings_of_their_experiments() {
        for h in crate::CHAPTER.headlines {
            let key = h.reading.stored();
            assert!(key.contains(" · "), "{key}");
        }
        crate::CHAPTER.check().unwrap();
    }

    #[test]
    fn ops_grow_with_the_rate_from_a_floor() {
        assert_eq!(ops_for(100.0, 20, 40, 5), 5);
        assert_eq!(ops_for(1_000.0, 12, 40, 4), 40);
        assert_eq!(ops_for(10_000.0, 20, 40, 5), 200);
    }

    /// The steady-state rate leaves out a start-up burst and a first tick's lateness,
    /// reads bursts at their average pace, and hardly moves with the run's length.
    #[test]
    fn the_paced_rate_skips_the_start_up() {
        let t0 = Instant::now();
        let at = |us: &[u64]| -> Vec<Instant> {
            us.iter().map(|u| t0 + Duration::from_micros(*u)).collect()
        };
        // A made-up run at 1,000/s: the first start 1.2 ms late, the second back to
        // back, then one a millisecond.
        let tokio = |n: u64| {
            at(&[
                &[1_200, 1_205][..],
                &(2..n).map(|k| k * 1_000).collect::<Vec<_>>(),
            ]
            .concat())
        };
        for n in [10, 100] {
            let r = paced_rate(&tokio(n)).expect("a rate");
            assert!((r - 1_000.0).abs() < 1e-6, "{n} operations: {r}");
        }
        // Bursts of two every 200 µs at 10,000/s, after a start-up burst of five.
        let mut us = vec![0, 1, 2, 3, 4];
        us.extend((1..=50).flat_map(|k| [k * 200, k * 200 + 1]));
        let r = paced_rate(&at(&us)).expect("a rate");
        assert!((r / 10_000.0 - 1.0).abs() < 0.01, "{r}");
        // tokio's sawtooth: each tick 0.1 ms later than the last, two at once every
        // tenth; 30 or 300 operations read within 1 % of each other and of the target.
        let saw = |n: u64| {
            let mut late = 1_100;
            at(&(0..n)
                .map(|k| {
                    late = if k % 10 == 9 { 1_100 } else { late + 100 };
                    k * 1_000 + late
                })
                .collect::<Vec<_>>())
        };
        let (short, long) = (
            paced_rate(&saw(30)).unwrap(),
            paced_rate(&saw(300)).unwrap(),
        );
        assert!(
            (short / long - 1.0).abs() < 0.01 && (long / 1_000.0 - 1.0).abs() < 0.01,
            "{short} {long}"
        );
        // Nothing past the start-up: no paced rate; one start past it: none either.
        assert_eq!(paced_rate(&at(&[0, 1, 2, 3])), None);
        assert_eq!(paced_rate(&at(&[0, 2_000])), None);
        assert_eq!(paced_rate(&at(&[0])), None);
    }

    /// A run of made-up figures, as a record stores it.
    fn made_up(pacer: Pacer, target: f64, asked: u64, send_ns: f64, late_max_ms: f64) -> RateRun {
        serde_json::from_value(serde_json::json!({
            "pacer": pacer, "target": target, "asked": asked, "ran": asked,
            "achieved": target, "drift_ns": 0.0, "gaps": Dist::from_samples(Vec::new()),
            "wall_ns": 1e6, "send_errors": 0, "send_ns_per_op": send_ns,
            "late_max_ns": late_max_ms * 1e6,
        }))
        .expect("a run")
    }

    /// Few starts past the start-up, or governor's burst draining past it, read as
    /// start-up; a run with a pace past it does not.
    #[test]
    fn start_up_only_marks_few_starts_and_a_long_burst() {
        let d = Pacer::Deadline;
        assert!(made_up(d, 100.0, 4, 10e3, 0.1).start_up_only());
        assert!(!made_up(d, 100.0, 15, 10e3, 0.1).start_up_only());
        assert!(!made_up(d, 1_000.0, 30, 10e3, 0.1).start_up_only());
        let g = Pacer::GovernorBurst;
        // 1,000 cells at 156k sends/s less 100k/s: about 18 ms, past the start-up.
        assert!(made_up(g, 100_000.0, 2_000, 6.4e3, 0.0).start_up_only());
        // 100 cells at 156k/s less 10k/s: under 1 ms.
        assert!(!made_up(g, 10_000.0, 200, 6.4e3, 0.0).start_up_only());
        // A loop slower than the target never drains its burst.
        assert!(made_up(g, 100_000.0, 2_000, 20e3, 0.0).start_up_only());
    }

    /// A run of made-up figures whose longest gap is `longest_ms`, the others a period.
    fn with_gap(pacer: Pacer, target: f64, longest_ms: f64, late_max_ms: f64) -> RateRun {
        let mut run = made_up(pacer, target, 30, 10e3, late_max_ms);
        let period = 1e9 / target;
        run.gaps = Dist::from_samples([period, period, longest_ms * 1e6]);
        run
    }

    /// One run whose longest gap stands far out from its arm's other rounds is a
    /// stall, whatever its lateness (governor's burst runs ahead of its schedule, so a
    /// stall leaves its latest start early). A gap a little longer than the others is
    /// not, nor is an arm whose gaps are long in every round (tokio's millisecond). At
    /// 100/s, a 20 ms stall on 10 ms gaps is. A latest start far later than the arm's
    /// is one too, with no gap that stands out (hold-ups that add up).
    #[test]
    fn stalled_runs_stand_out_from_their_arm() {
        let round =
            |deadline_ms: f64, tokio_ms: f64, governor_ms: f64, slow_ms: f64, late_ms: f64| {
                RatesRound {
                    targets: vec![100.0, 10_000.0],
                    run_ms: 20,
                    runs: vec![
                        with_gap(Pacer::Deadline, 10_000.0, deadline_ms, 0.1),
                        with_gap(Pacer::TokioBurst, 10_000.0, tokio_ms, 0.9),
                        with_gap(Pacer::GovernorBurst, 10_000.0, governor_ms, 0.0),
                        with_gap(Pacer::Deadline, 100.0, slow_ms, 0.1),
                        with_gap(Pacer::TokioDelay, 10_000.0, 1.1, late_ms),
                    ],
                    stalls: Vec::new(),
                    twins: Vec::new(),
                    controls: Vec::new(),
                }
            };
        let rounds = [
            round(0.29, 1.13, 0.21, 10.1, 0.9),
            round(0.30, 1.30, 2.76, 10.2, 0.95),
            round(0.28, 1.10, 0.16, 30.2, 12.0),
            round(1.10, 1.12, 0.24, 10.1, 0.9),
            round(0.27, 1.44, 0.17, 10.3, 1.0),
        ];
        let (found, total) = stalled_runs(rounds.iter());
        assert_eq!(total, 25);
        let seen: Vec<_> = found
            .iter()
            .map(|s| (s.run.pacer, s.run.target, s.by_gap))
            .collect();
        let want = [
            (Pacer::Deadline, 100.0, true),
            (Pacer::TokioDelay, 10_000.0, false),
            (Pacer::GovernorBurst, 10_000.0, true),
        ];
        assert_eq!(seen, want, "{found:?}");
        let (gap, median) = (found[2].value_ns, found[2].median_ns);
        assert!((gap - 2.76e6).abs() < 0.01e6, "{gap}");
        assert!((median - 0.21e6).abs() < 0.001e6, "{median}");
    }

    #[test]
    fn rotation_moves_every_item() {
        assert_eq!(rotate(&[1, 2, 3], 1), vec![2, 3, 1]);
        assert_eq!(rotate(&[1, 2, 3], 4), vec![2, 3, 1]);
        assert!(rotate::<u8>(&[], 2).is_empty());
    }
}
