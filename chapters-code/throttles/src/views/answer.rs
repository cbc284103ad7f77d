//! The chapter's findings: the questions a reader brings, each answered from the
//! rounds by the verdict rule, rendered by the harness as the decision table.

use super::Of;
use crate::Pacer;
use crate::experiments::{Measure, OMISSION, OmissionRound, RATES, RateRun, RatesKey, RatesRound};
use harness::stats::Better;
use harness::{Evidence, Finding, Results, Unit, Why};

/// The deadline throttle against tokio's `interval` (Burst, its default) at `target`,
/// on a per-run value, judged on the rounds' pairs.
fn deadline_vs_tokio(
    r: &Results<RatesRound>,
    target: f64,
    (a, b): (&str, &str),
    unit: Unit,
    f: Of,
) -> Option<Evidence> {
    let c = r.compare_of(
        |d| f(d.find(Pacer::Deadline, target)?),
        |d| f(d.find(Pacer::TokioBurst, target)?),
    )?;
    Some(Evidence::pair(a, b, unit, c))
}

const ARMS: (&str, &str) = ("our deadline throttle", "tokio `interval`");

pub static HOLD_1K: Finding<RatesRound> = Finding::new(
    "throttles-hold-1k",
    &RATES,
    "Pacing at 1,000 ops/s (the write-up's rate): how late an operation starts against its slot (set-up plus k periods), median",
    |r| deadline_vs_tokio(r, 1_000.0, ARMS, Unit::Nanos, |x| Some(x.late_p50_ns? + x.first_wait_ns?)),
)
.better(Better::Smaller)
.advice(
    "Outside async code, use the deadline throttle: its operations kept closer to their slots \
     than `interval`'s (in async code tokio's own sleeps round to its millisecond too)",
    "Use tokio's `interval`: its operations kept closer to their slots than the deadline throttle's",
    "Unresolved: the rounds named no winner here; see the 1,000/s timing table",
)
.why(Why::Counter(
    "*late, median* (from the first start) plus *first wait* (set-up to the first start) \
     in the 1,000/s timing table. tokio parks a whole number of milliseconds, counted from when it parks, \
     so each tick overshoots like a 1 ms sleep (*median gap*). Its ticks drift late until one falls a \
     whole millisecond behind and fires at once. Each run's `interval` starts at a fresh \
     runtime's first millisecond; on an older runtime it would start anywhere in one, and \
     run less late by our arithmetic (not measured). The rate each held is in the rates table.",
))
.guide("throttles");

pub static HOLD_10K: Finding<RatesRound> = Finding::new(
    "throttles-hold-10k",
    &RATES,
    "Pacing at 10,000 ops/s: the rate each held over a 20 ms run, steady state, ops/s (both hold the rate over long runs)",
    |r| deadline_vs_tokio(r, 10_000.0, ARMS, Unit::Number, |x| x.reading()),
)
.better(Better::Higher)
.advice(
    "The deadline throttle ran faster: the rates table shows which kept to the target",
    "tokio's `interval` ran faster: the rates table shows which kept to the target",
    "No winner by the rule: `interval` in async code, the deadline throttle elsewhere",
)
.why(Why::Counter(
    "the rates table: a run with a stall inside it (§) moves its round's ratio and can set \
     this row's interval; where neither arm has one, the interval is the arms' own spread \
     between rounds. *Our hypothesis* for tokio's: it parks a whole number of milliseconds, \
     counted from when it parks, so its starts drift late and catch up in a sawtooth whose \
     place in a short run sets its rate; no arm varies the run's length to test it.",
));

pub static NAIVE_1K: Finding<RatesRound> = Finding::new(
    "throttles-naive-1k",
    &RATES,
    "A plain `op; sleep(1 ms)` loop, asked for 1,000 ops/s",
    |r| Evidence::reading(r, "naive loop", &RatesKey::Rate(Pacer::Naive, 1_000)),
)
.always("Don't pace with a fixed sleep: keep a schedule")
.why(Why::Counter(
    "*waiting per op* in the 1,000/s cost table: each sleep overshoots its 1 ms.",
));

pub static OMITTED: Finding<OmissionRound> = Finding::new(
    "throttles-omitted",
    &OMISSION,
    "Load-test latency (p90) while the server stalls now and then",
    |r| {
        Evidence::readings(
            r,
            ("from the intended send", &Measure::FromIntent),
            ("from the actual send", &Measure::FromSend),
        )
    },
)
.better(Better::Higher)
.advice(
    "Measure latency from the intended send time, not the actual",
    "Measure from the intended send time; stalls showed either way",
    "Measure from the intended send time; no stall showed here",
)
.why(Why::Counter(
    "*held up* under the omission table: requests a pause made go out late.",
))
.guide("throttles");

pub static CPU_10K: Finding<RatesRound> = Finding::new(
    "throttles-cpu-10k",
    &RATES,
    "CPU per operation, pacing 10,000 ops/s",
    |r| {
        let arms = ("deadline throttle CPU", "tokio `interval` CPU");
        deadline_vs_tokio(r, 10_000.0, arms, Unit::Nanos, RateRun::cpu_per_op)
    },
)
.better(Better::Smaller)
.advice(
    "Where CPU counts at this rate, the deadline throttle costs less per operation (the CPU table gives the other rates)",
    "Where CPU counts at this rate, `interval` costs less per operation (the CPU table gives the other rates)",
    "Decide on accuracy: CPU per operation came out alike",
)
.why(Why::Counter(
    "*sleeps per op* in the 10,000/s cost table: how often each blocked.",
));
