//! The chapter's registry: its experiments, views, headline figures and findings, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{
    Measure, NAIVE, OMISSION, OmissionRound, RATES, RateRun, RatesKey, RatesRound, SWEEP, SweepKey,
    WRITEUP_RATE,
};
use crate::{Pacer, headline, views};
use harness::stats::Better;
use harness::{Evidence, Finding, Headline, Results, Unit, Why};

/// The chapter: its experiments, views and headline figures.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [SWEEP, NAIVE, RATES, OMISSION],
    views: [
        views::ACHIEVED_PLOT, views::ACHIEVED, views::JITTER_1K, views::JITTER_10K, views::WHY_1K,
        views::WHY_10K, views::PAIRS, views::CPU, views::STALL, views::CHECKS, views::GAPS_1K,
        views::GAPS_10K, views::NAIVE_TABLE, views::SWEEP_TABLE, views::SWEEP_REFERENCE,
        views::OMISSION_TABLE, views::OMISSION_PLOT,
    ],
    headlines: [
        Headline::new(headline::NAIVE_RATE_AT_10K, &RATES, &RatesKey::Rate(Pacer::Naive, 10_000))
            .params(&["run_ms"])
            .about("achieved ops/s (steady state) of the naive `op; sleep(period)` loop asked for 10,000 ops/s"),
        Headline::new(headline::DEADLINE_RATE_AT_10K, &RATES, &RatesKey::Rate(Pacer::Deadline, 10_000))
            .params(&["run_ms"])
            .about("achieved ops/s (steady state) of the deadline throttle asked for 10,000 ops/s"),
        Headline::new(headline::GOVERNOR_BURST_RATE_AT_10K, &RATES, &RatesKey::Rate(Pacer::GovernorBurst, 10_000))
            .params(&["run_ms"])
            .about("achieved ops/s of governor with a 10 ms burst, used as a pacer, asked for 10,000 ops/s (steady state: its start-up burst left out)"),
        Headline::new(headline::SLEEP_1MS_LATENESS, &SWEEP, &SweepKey::Late(1))
            .params(&["sleeps"])
            .about("how much later than asked a 1 ms std::thread::sleep returns (median of the rounds' medians)"),
    ],
    findings: [
        views::HOLD_1K, views::HOLD_10K, views::NAIVE_1K, STALL_TICKS, views::OMITTED,
        views::CPU_10K, FIRST_TICK_RATE, RUN_LENGTH_1K, RUN_LENGTH_10K, FIRST_TICK_WAIT, CPU_PER_SECOND, OMISSION_SEND,
        SLEEP_OVERSHOOT, READER_THREAD,
    ],
);

/// A stall against tokio's missed-tick behaviours (a decision row, kept here to leave
/// the views room).
pub static STALL_TICKS: Finding<RatesRound> = Finding::new(
    "throttles-stall-ticks",
    &RATES,
    "A stall holds up an `interval` loop at 1,000 ops/s",
    |r| {
        Evidence::readings(
            r,
            ("Burst", &RatesKey::Stall(Pacer::TokioBurst)),
            ("Skip", &RatesKey::Stall(Pacer::TokioSkip)),
        )
    },
)
.better(Better::Higher)
// tokio 1.54.1 `src/time/interval.rs`, `Interval::poll_tick`: a tick is missed when it is
// polled over 5 ms after its deadline, its own lateness included.
.advice(
    "For stalls of a few ms or more, choose `Skip` for a quota, `Burst` to keep the count; a tick counts as missed once polled 5 ms past its deadline, its own lateness included",
    "Choose by job; `Skip` kept the higher rate here",
    "Choose by job; `Burst` and `Skip` ended alike here",
)
.why(Why::Counter(
    "*back to back after* in the stall table: the missed ticks `Burst` fired at once. \
     By our arithmetic the run's design sets most of the ratio: its 30 operations span \
     about 29 ms when the missed ones go at once, about 49 ms when they are skipped.",
));

// ------------------------------------------------------------ threats to validity

/// Two per-run values of the runs at `target`, paired by round.
fn paired(
    r: &Results<RatesRound>,
    (a, b): (&str, &str),
    unit: Unit,
    fa: impl Fn(&RatesRound) -> Option<f64>,
    fb: impl Fn(&RatesRound) -> Option<f64>,
) -> Option<Evidence> {
    Some(Evidence::pair(a, b, unit, r.compare_of(fa, fb)?))
}

/// Operations after the first over the time from the throttle's set-up to the last
/// start (the first wait included): what a loop timed from its set-up would report,
/// counting n − 1 periods against n − 1 gaps so that no fencepost offsets the wait.
fn from_setup_rate(x: &RateRun) -> Option<f64> {
    let gaps = x.ran.checked_sub(1).filter(|g| *g > 0)? as f64;
    let span_ns = (x.achieved > 0.0).then(|| gaps * 1e9 / x.achieved)?;
    Some(gaps * 1e9 / (span_ns + x.first_wait_ns?))
}

fn tokio_at(d: &RatesRound, target: f64) -> Option<&RateRun> {
    d.find(Pacer::TokioBurst, target)
}

/// tokio Burst's rate at `target` from its set-up, against another reading of the same
/// runs (`after`, named `after_name`), round by round.
fn from_setup_against(
    r: &Results<RatesRound>,
    target: f64,
    after_name: &str,
    after: fn(&RateRun) -> Option<f64>,
) -> Option<Evidence> {
    paired(
        r,
        ("from the set-up", after_name),
        Unit::OpsPerSec,
        |d| from_setup_rate(tokio_at(d, target)?),
        |d| after(tokio_at(d, target)?),
    )
}

/// tokio's first tick (tokio 1.54.1: see the comment in `pacers.rs`, `tokio_interval`),
/// in a rate: the same operations over the time from set-up and from the first start,
/// so the ratio isolates the first wait (the steady state also moves the last start's
/// place in the sawtooth, which is not the first tick's doing).
pub static FIRST_TICK_RATE: Finding<RatesRound> = Finding::threat(
    "throttles-threat-first-tick-rate",
    &RATES,
    "tokio's first `interval` tick waits about a millisecond, as any of its ticks does: the driver parks whole milliseconds counted from when it parks. A rate timed from the set-up counts that wait (tokio Burst, 1,000/s)",
    "Every rate is a steady-state pace, with the start-up left out. This row shows the first wait alone. Before: the operations after the first over the time from set-up to the last start; after: the same operations from the first start to the last",
    |r| {
        from_setup_against(r, WRITEUP_RATE, "from the first start", |x| {
            Some(x.achieved).filter(|v| *v > 0.0)
        })
    },
)
.better(Better::Higher);

/// A start-up lateness counted in a rate: from the second start to the last, against
/// the steady state (the reading), as tokio `interval`'s signed rates at `target`: a
/// ratio of two misses (absolute values, one near zero) moved by hundreds when the
/// steady miss was 0.007 %, where the rates agreed to 2 %.
fn run_length(r: &Results<RatesRound>, target: f64) -> Option<Evidence> {
    paired(
        r,
        ("from the second start", "steady state"),
        Unit::Number,
        |d| tokio_at(d, target)?.steady,
        |d| tokio_at(d, target)?.reading(),
    )
}

pub static RUN_LENGTH_1K: Finding<RatesRound> = Finding::threat(
    "throttles-threat-run-length-1k",
    &RATES,
    "The second start's place in tokio's sawtooth (ticks drift late, then catch up), divided by the run's length: by our arithmetic a rate from the second start moves with how long the run is; no arm here varies the length (tokio Burst, 1,000/s, ops/s)",
    "Rates are a least-squares pace through every start from 2 ms after the first on; the first wait is its own column. Before: the rate from the second start to the last, after: the steady-state rate",
    |r| run_length(r, WRITEUP_RATE),
)
.better(Better::Smaller);

/// A rate between two instants of a short run at 10,000/s: from set-up (the first
/// tick's wait, which the burst repays) to the last start (its lateness, which nothing
/// repays), against the steady state, which no single start decides.
pub static RUN_LENGTH_10K: Finding<RatesRound> = Finding::threat(
    "throttles-threat-run-length-10k",
    &RATES,
    "A short run's rate between two instants carries their lateness, divided by the run's length. At 10,000/s tokio's first tick waits about a millisecond, ten periods, which a burst of the ticks it made overdue repays; the last tick can be late by the sawtooth's depth, about a millisecond, which nothing repays (tokio Burst, 10,000/s, ops/s)",
    "Every rate is a steady-state pace through the starts from 2 ms after the first on, so no single start's lateness decides it, and each run lasts `run_ms` (20 ms quick, 150 ms full). Before: the operations after the first over the time from set-up to the last start; after: the steady-state rate",
    |r| from_setup_against(r, 10_000.0, "steady state", RateRun::reading),
)
.better(Better::Higher);

/// The first tick's wait against every tick's lateness from set-up, both tokio's, in
/// the same rounds: is the first sample special? (The deadline throttle's first wait
/// made a ratio of a sleep with loop bookkeeping, which described no operation.)
pub static FIRST_TICK_WAIT: Finding<RatesRound> = Finding::threat(
    "throttles-threat-first-tick-wait",
    &RATES,
    "The first sample could be special: tokio's first tick waits a whole millisecond from when the driver parks, plus a sleep's overshoot, whatever the period (1,000/s, the rate whose row counts from set-up)",
    "The first wait (set-up → first operation) is kept out of every rate and gap, and shown as its own column; the 1,000/s lateness row counts from set-up on purpose, so the first tick's wait counts there as every tick's lateness does. Before: tokio Burst's first wait; after: its operations' median lateness from set-up (set-up + k periods), in the same rounds",
    |r| {
        let t = WRITEUP_RATE;
        paired(
            r,
            ("the first tick's wait", "a tick's median lateness"),
            Unit::Nanos,
            |d| tokio_at(d, t)?.first_wait_ns,
            |d| {
                let run = tokio_at(d, t)?;
                Some(run.first_wait_ns? + run.late_p50_ns?)
            },
        )
    },
)
.better(Better::Smaller);

/// The deadline throttle's CPU over tokio's, per wall second and per operation.
fn cpu_ratio(d: &RatesRound, per: fn(&RateRun) -> Option<f64>) -> Option<f64> {
    let t = 10_000.0;
    let (a, b) = (per(d.find(Pacer::Deadline, t)?)?, per(tokio_at(d, t)?)?);
    (b > 0.0).then(|| a / b)
}

pub static CPU_PER_SECOND: Finding<RatesRound> = Finding::threat(
    "throttles-threat-cpu-per-second",
    &RATES,
    // tokio 1.54.1 `src/time/interval.rs`, `Interval::poll_tick`: a tick under 5 ms late
    // schedules the next at `timeout + period`, so the ticks the first wait made overdue
    // fire at once and the run still ends on its schedule.
    "CPU per wall second counts tokio's longer wall time in its favour. Its first tick's wait does not lengthen a run at 10,000/s, since the ticks it made overdue fire at once; its last tick's millisecond rounding does (deadline ÷ tokio Burst CPU, 10,000/s, each from its throttle's set-up done to its last operation)",
    "CPU is divided by operations, not by wall time; before: the ratio of CPU per wall second, after: of CPU per operation",
    |r| {
        paired(
            r,
            ("per wall second", "per operation"),
            Unit::Number,
            |d| cpu_ratio(d, RateRun::cpu_share),
            |d| cpu_ratio(d, RateRun::cpu_per_op),
        )
    },
)
.better(Better::Smaller);

pub static OMISSION_SEND: Finding<OmissionRound> = Finding::threat(
    "throttles-threat-omission",
    &OMISSION,
    "Coordinated omission: a closed-loop client times a held-up request from its late send, so the stall vanishes from the latency (p90)",
    "Latency is timed from the send the schedule intended; before: from the actual send, after: from the intended send",
    |r| {
        Evidence::readings(
            r,
            ("from the actual send", &Measure::FromSend),
            ("from the intended send", &Measure::FromIntent),
        )
    },
)
.better(Better::Higher);

pub static SLEEP_OVERSHOOT: Finding<RatesRound> = Finding::threat(
    "throttles-threat-sleep-overshoot",
    &RATES,
    "Every sleep ends late (timer slack, the wake-up), and a loop that sleeps a period per operation pays that, and the operation's own time, every time (1,000/s)",
    "The throttles that keep an absolute schedule (the deadline throttle, the compensating loop, tokio's `interval`) absorb the overshoot, governor with a burst of one does not; the sweep measures the overshoot and reads the timer slack. Before: the naive loop's rate, after: the deadline throttle's",
    |r| {
        let t = WRITEUP_RATE;
        Evidence::readings(
            r,
            ("naive loop", &RatesKey::rate(Pacer::Naive, t)),
            ("deadline throttle", &RatesKey::rate(Pacer::Deadline, t)),
        )
    },
)
.better(Better::Higher);

pub static READER_THREAD: Finding<RatesRound> = Finding::threat(
    "throttles-threat-reader-thread",
    &RATES,
    "Sending to a socket a thread of ours reads, not to a closed port as the write-up did, adds waking the reader and drops the kernel's 'port unreachable' reply built in each send: the row is the net of the two (deadline, 1,000/s). Where it calls no difference, the checks table counts the rounds a send took longer with the reader",
    "Runs send to a port nobody holds, as the write-up did; control arms send to a reader thread. Before: time in a send with that thread, after: without",
    |r| {
        let t = WRITEUP_RATE;
        paired(
            r,
            ("with a reader thread", "to a closed port"),
            Unit::Nanos,
            |d| d.control(Pacer::Deadline, t)?.send_ns_per_op,
            |d| d.find(Pacer::Deadline, t)?.send_ns_per_op,
        )
    },
)
.better(Better::Lower);
