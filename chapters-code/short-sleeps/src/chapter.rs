//! The chapter's registry: its experiments, views, headline figures and findings (the
//! rows of its decision table, `table answer`), as the command line, the book-wide
//! measuring driver, the guide and the appendix find them. It lives apart from the
//! mechanism (`lib.rs`), which never imports the views. A pair is judged by the
//! harness's verdict rule on the rounds' own pairs; a figure is a median over rounds.

use crate::experiments::{CALLS_EXP, CallsKey, CallsRound, MS_EXP, SWEEP_EXP, SweepKey};
use crate::experiments::{SweepRound, YIELD_EXP};
use crate::{Call, MS1, Mode, NS1, Sample, Timerfd, fmt_slack, headline, views};
use harness::stats::Better;
use harness::{Evidence, Finding, Headline, Results, Unit, Why};

/// The chapter: its experiments, views, headline figures and findings.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [CALLS_EXP, SWEEP_EXP, MS_EXP, YIELD_EXP],
    views: [
        views::SWEEP_PLOT, views::SLACK, views::YIELD_TABLE,
        views::TOKIO_PLOT, views::TOKIO_TABLE, views::CALLS, views::SWEEP_TABLE,
        views::SWEEP_TAILS, views::SWEEP_CPU,
    ],
    headlines: [
        Headline::new(headline::NANOSLEEP_1NS_DEFAULT_SLACK, &CALLS_EXP, &CallsKey::of(Call::Nanosleep(NS1)))
            .params(&["calls"])
            .about("time per call of nanosleep(1 ns) with the thread's default timer slack"),
        Headline::new(headline::NANOSLEEP_1NS_SLACK_1NS, &CALLS_EXP, &CallsKey::low_slack(Call::Nanosleep(NS1), 1))
            .params(&["calls", "low_slack_ns"])
            .about("time per call of nanosleep(1 ns) after prctl(PR_SET_TIMERSLACK, 1)"),
        Headline::new(headline::SCHED_YIELD, &CALLS_EXP, &CallsKey::of(Call::SchedYield))
            .params(&["calls"])
            .about("time per call of sched_yield()"),
        Headline::new(headline::THREAD_SLEEP_1MS_LATE, &SWEEP_EXP, &SweepKey::late(Mode::Sleep, 1_000_000, 0))
            .params(&["sleeps", "min_sleeps", "point_ms"])
            .about("how much later than asked a 1 ms std::thread::sleep returns, from the sweep designed to measure it"),
    ],
    findings: [
        SHORTEST, SLACK, SLACK_BLOCKING, TIMERFD, YIELD, ONE_MS, TOKIO,
        THREAT_SLACK, THREAT_FIRST_TICK, THREAT_FIRST_CALL, THREAT_CLOCK, THREAT_CPU_WAIT,
        THREAT_NO_BLOCK,
    ],
);

use views::low_slack;

/// The shortest sleep a Rust program asks for, on every system.
const SLEEP_1NS: CallsKey = CallsKey::of(Call::StdSleep(NS1));

/// How long `thread::sleep(1 ns)` takes with the thread's own timer slack.
pub static SHORTEST: Finding<CallsRound> = Finding::new(
    "sleeps-shortest",
    &CALLS_EXP,
    "You ask a thread to sleep for 1 ns",
    |r| Evidence::reading(r, "`thread::sleep(1 ns)` took", &SLEEP_1NS),
)
.always("Expect this, not 1 ns, from the shortest sleep")
.why(Why::Counter(
    "by our reading of the kernel, a sleeper's timer may fire up to the thread's timer \
     slack after its deadline (the slack table's header), and the wake-up comes after \
     that; the slack table's *default − low* column is what 1 ns of slack saves.",
));

/// The same sleep with the thread's slack set to 1 ns (Linux).
pub static SLACK: Finding<CallsRound> = Finding::new(
    "sleeps-slack",
    &CALLS_EXP,
    "Your short sleeps must end sooner (Linux; measured on a 1 ns `thread::sleep`; the sweep gives longer ones)",
    |r| {
        let low = low_slack(r);
        Evidence::readings(
            r,
            (
                &format!("slack {}", fmt_slack(low)),
                &CallsKey::low_slack(Call::StdSleep(NS1), low),
            ),
            ("default slack", &SLEEP_1NS),
        )
    },
)
.better(Better::Lower)
.advice(
    "For 1 ns requests, set the sleeping thread's timer slack to 1 ns (`libc::prctl`). \
     Where the slack table's *blocked* reads 0.00 at 1 ns, the call no longer sleeps: a \
     loop of them keeps its CPU as busy as a loop of yields",
    "Keep the default slack: 1 ns cost time here",
    "Keep the default slack: 1 ns bought no clear gain here",
)
.why(Why::Counter(
    "the slack table's *default − low* column, an amount saved per call, not a share. At \
     1 ns of slack these calls stop blocking (*blocked*), so the saving also holds a block \
     and a wake-up; the next row gives it for a sleep that blocks either way.",
))
.guide("sleeps");

/// The 1 ms request of the sweep: long enough that a sleep blocks with either slack.
const SWEEP_1MS: f64 = 1e6;

/// What 1 ns of slack saves a sleep that blocks with either slack: a 1 ms
/// `thread::sleep`, each round's time with the default slack less its time with the
/// low slack (the slack table's *default − low*).
pub static SLACK_BLOCKING: Finding<CallsRound> = Finding::new(
    "sleeps-slack-blocking",
    &CALLS_EXP,
    "Your sleeps block with either slack (Linux; measured on a 1 ms `thread::sleep`)",
    |r| {
        let what = format!("slack {} saved, per sleep:", fmt_slack(low_slack(r)));
        let saved = views::slack_saving(r, Call::StdSleep(MS1))?;
        Some(Evidence::figure(&what, Unit::Nanos, saved))
    },
)
.advice(
    "Expect 1 ns of slack to save about this much per sleep, not a share of it",
    "Expect 1 ns of slack to save about this much per sleep, not a share of it",
    "Expect no clear saving here: the rounds' savings reach both sides of zero",
)
.why(Why::Counter(
    "the slack table's *thread::sleep(1 ms)* row: its *blocked* column shows the call \
     blocking with either slack, and its *default − low* column is this figure, each \
     round's own difference. That the slack alone makes it is not shown (a round's can \
     exceed the slack).",
))
.guide("sleeps");

/// A re-armed timerfd against `thread::sleep`, both for 1 ns with the default slack.
pub static TIMERFD: Finding<CallsRound> = Finding::new(
    "sleeps-timerfd",
    &CALLS_EXP,
    "Short sleeps, the thread's slack left as it is (Linux; measured on 1 ns waits)",
    |r| {
        Evidence::readings(
            r,
            (
                "a re-armed timerfd",
                &CallsKey::of(Call::Timerfd(Timerfd::Rearmed, NS1)),
            ),
            ("`thread::sleep`", &SLEEP_1NS),
        )
    },
)
.better(Better::Lower)
.advice(
    "For 1 ns requests, wait on a re-armed timerfd instead of `thread::sleep`. Where the \
     slack table's *blocked* reads 0.00 for it, it no longer sleeps: a loop of them keeps \
     its CPU as busy as a loop of yields",
    "Use `thread::sleep`: the timerfd took longer here",
    "Use `thread::sleep`: a timerfd bought no clear gain here",
)
.why(Why::Hypothesis(
    "a timerfd's timer ignores the thread's slack. The slack table's *default − low* \
     column tests it.",
));

/// A yield against the shortest sleep.
pub static YIELD: Finding<CallsRound> = Finding::new(
    "sleeps-yield",
    &CALLS_EXP,
    "A yield or a 1 ns sleep, with no other thread waiting",
    |r| {
        // The call the advice names; `sched_yield()` is what it calls on Linux.
        let sleep = ("a 1 ns sleep", &SLEEP_1NS);
        Evidence::readings(r, ("`yield_now()`", &CallsKey::of(Call::YieldNow)), sleep)
    },
)
.better(Better::Lower)
.advice(
    "Yield (`std::thread::yield_now`), not sleep 1 ns (the calls table's *blocked / \
     preempted* shows whether it gave the CPU up), but a loop of yields keeps its CPU busy",
    "Sleep 1 ns: the yield took longer here",
    "Either: neither returned sooner here",
)
.why(Why::Counter(
    "*blocked* per call, in the calls table: the sleep puts the thread to sleep, a \
     yield with no one waiting does not. With a thread waiting for the CPU, the yield table \
     times both: a yield that hands the CPU over, and the 1 ns sleep beside it.",
));

/// How late a single 1 ms `thread::sleep` ends, from the sweep.
pub static ONE_MS: Finding<SweepRound> = Finding::new(
    "sleeps-1ms-late",
    &SWEEP_EXP,
    "You call `thread::sleep(1 ms)` back to back",
    |r: &Results<SweepRound>| {
        let n = r
            .data()
            .filter_map(|x| Some(x.find(Mode::Sleep, SWEEP_1MS)?.late.len()));
        let (lo, hi) = n.fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
        let sleeps = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        };
        Evidence::reading(
            r,
            &format!("late by (each round: the median of {sleeps} sleeps)"),
            &SweepKey::late(Mode::Sleep, 1_000_000, low_slack(r)),
        )
    },
)
.always("Expect it to end this much later than asked")
.why(Why::Counter(
    "the sweep table splits it: its *thread::sleep* cell less its *slack 1 ns* cell is the \
     timer slack's part, and the *slack 1 ns* cell the rest, which grows with the requested \
     length (why is *our hypothesis*, in depth under *Requested vs actual*). The figure is the median over rounds \
     of each round's median of its single sleeps at 1 ms, a small batch (the cell says how \
     many).",
));

/// `tokio::time::sleep(1 ms)`, back to back.
pub static TOKIO: Finding<CallsRound> = Finding::new(
    "sleeps-tokio-1ms",
    &CALLS_EXP,
    "You call `tokio::time::sleep(1 ms)`",
    |r| Evidence::reading(r, "it took", &CallsKey::of(Call::TokioSleep(MS1))),
)
.always("Budget this, not 1 ms, per tokio sleep")
// tokio-1.54.1/src/runtime/time/mod.rs: `park_internal` ends every wake-up of the
// driver with `handle.process(..)`, whose `process_at_time` fires what
// `lock.wheel.poll(now)` returns; so any other wake-up fires a due timer early.
.why(Why::Counter(
    "tokio 1.54.1's source rounds the deadline up to a whole 1 ms tick and parks for \
     whole ticks from the current tick, rounded down (`runtime/time/source.rs`, \
     `runtime/time/mod.rs`): 1 ms late. The tick plot measures it. This holds on an idle \
     runtime, as measured: by the same source, any other wake-up once the deadline's tick \
     has passed fires the timer sooner (`Handle::process` polls the wheel at the current \
     tick).",
));

// ---------------------------------------------------------------------------------
// Threats to validity (`table threats`): what could make a figure wrong, what the
// chapter does about it, and the figure without the control (`a`) and with it (`b`).
// ---------------------------------------------------------------------------------

/// A loop's sample in one round.
fn sample(r: &CallsRound, key: &CallsKey) -> Option<Sample> {
    r.find(key).map(|l| l.sample)
}

/// Two per-round values of the `calls` loops, judged on their pairs.
fn pair_of(
    r: &Results<CallsRound>,
    (a, fa): (&str, impl Fn(&CallsRound) -> Option<f64>),
    (b, fb): (&str, impl Fn(&CallsRound) -> Option<f64>),
) -> Option<Evidence> {
    Some(Evidence::pair(a, b, Unit::Nanos, r.compare_of(fa, fb)?))
}

const NANOSLEEP_1NS: CallsKey = CallsKey::of(Call::Nanosleep(NS1));
const TOKIO_1MS: CallsKey = CallsKey::of(Call::TokioSleep(MS1));

/// Timer slack: before, the thread's own; after, 1 ns.
pub static THREAT_SLACK: Finding<CallsRound> = Finding::threat(
    "sleeps-threat-slack",
    &CALLS_EXP,
    "Timer slack: by our reading of the kernel, a sleep may end as much as the thread's \
     slack late, so a sleep's figure holds for one slack only",
    "Records the measuring thread's slack in every round, and times each sleeping call \
     twice: with that slack, and at 1 ns (`prctl(PR_SET_TIMERSLACK, 1)`)",
    |r| {
        Evidence::readings(
            r,
            ("`nanosleep(1 ns)`, default slack", &NANOSLEEP_1NS),
            (
                &format!("slack {}", fmt_slack(low_slack(r))),
                &CallsKey::low_slack(Call::Nanosleep(NS1), low_slack(r)),
            ),
        )
    },
);

/// tokio's first tick: before, a fresh runtime's first sleep; after, the later ones.
pub static THREAT_FIRST_TICK: Finding<CallsRound> = Finding::threat(
    "sleeps-threat-first-tick",
    &CALLS_EXP,
    "tokio: a fresh runtime's first sleep may not be like the later ones",
    "Times each loop's first sleep on its fresh runtime alone, outside the loop; the \
     figures hold later sleeps only, and the millisecond experiment sleeps once, \
     untimed, before its arms",
    |r| {
        pair_of(
            r,
            ("the first `tokio::time::sleep(1 ms)`", |d| {
                sample(d, &TOKIO_1MS)?.first_ns
            }),
            ("the later ones", |d| Some(sample(d, &TOKIO_1MS)?.figure())),
        )
    },
);

/// Warm-up: before, the first call of a sleep in its cell; after, the loop's calls.
pub static THREAT_FIRST_CALL: Finding<CallsRound> = Finding::threat(
    "sleeps-threat-first-call",
    &CALLS_EXP,
    "The first call of a sleep in a round can cost more than the later ones",
    "Makes three single calls before each loop, to size it, and the loops leave them out. \
     Before: the first of those calls, timed alone, of the sleep (named) whose first call \
     stands out most clearly of the sleeps with a non-zero request, by the lower end of \
     the interval of its per-round ratios (picked after the fact, as the largest of them); \
     after: its loop's mean per call. A lone call also differs from a \
     loop's by more than being first, so the row bounds the cost the loops leave out, not \
     first use alone. tokio's first sleep has a row of its own",
    |r| {
        let low = low_slack(r);
        let (key, c) = crate::experiments::plan()
            .into_iter()
            .map(|cell| cell.key(low))
            .filter(|k| !k.twin && !matches!(k.call, Call::TokioSleep(_)))
            .filter(|k| k.call.request().is_some_and(|d| !d.is_zero()))
            .filter_map(|k| {
                let first = |d: &CallsRound| sample(d, &k)?.probe_first_ns;
                Some((k, r.compare_of(first, |d| Some(sample(d, &k)?.figure()))?))
            })
            // The lower end, not the median: the noisiest sleep has the highest median.
            .max_by(|a, b| a.1.ratio.lo.total_cmp(&b.1.ratio.lo))?;
        let first = format!("the first {}", named(&key));
        Some(Evidence::pair(&first, "the loop's", Unit::Nanos, c))
    },
);

/// The clock inside the window: before, a read per call; after, the loop's share.
pub static THREAT_CLOCK: Finding<CallsRound> = Finding::threat(
    "sleeps-threat-clock",
    &CALLS_EXP,
    "The clock read that ends a timed window lies inside it",
    "Stamps once at each end of a loop of many calls, so a read adds its cost ÷ the calls; \
     the empty loop (ground truth) is that floor. The sweep's single sleeps each hold \
     one read",
    |r| {
        pair_of(
            r,
            ("one `Instant::now()` read", |d| d.clock_read_ns),
            ("the empty loop, per call", |d| {
                Some(sample(d, &CallsKey::of(Call::Nothing))?.ns)
            }),
        )
    },
)
.better(Better::Smaller);

/// A loop's call as the threats table names it: `` `nanosleep(1 ns)`, slack 1 ns ``.
fn named(key: &CallsKey) -> String {
    let slack = key
        .low_slack_ns
        .map(|ns| format!(", slack {}", fmt_slack(ns)));
    format!("`{}`{}", key.call.name(), slack.unwrap_or_default())
}

/// A loop's wait for a CPU, in all, above which the threats row counts its round as
/// one where a loop waited long.
const LONG_WAIT_NS: f64 = 1e6;

/// One round's sleeping loops: each one's wait for a CPU as a share of its time, and
/// whether any waited over [`LONG_WAIT_NS`] in all. `None` where none was read.
fn waits(d: &CallsRound, low: u64) -> Option<(Vec<f64>, bool)> {
    let samples: Vec<Sample> = crate::experiments::plan()
        .into_iter()
        .map(|cell| cell.key(low))
        .filter(|k| k.call.sleeps())
        .filter_map(|k| sample(d, &k))
        .filter(|s| s.run_delay_ns.is_some() && s.ns > 0.0)
        .collect();
    let wait = |s: &Sample| s.run_delay_ns.unwrap_or(0.0);
    let mut shares: Vec<f64> = samples.iter().map(|s| wait(s) / s.ns).collect();
    shares.sort_by(f64::total_cmp);
    let long = samples
        .iter()
        .any(|s| wait(s) * f64::from(s.calls) > LONG_WAIT_NS);
    (!shares.is_empty()).then_some((shares, long))
}

/// Another thread's load: the sleeping loops' wait for a CPU as a share of their time,
/// each round's median and largest over loops, and the rounds where a loop waited long.
/// A ratio of the time less its wait against the time could never fall below 1, so it
/// is no test: any round without a wait puts 1 inside its interval.
pub static THREAT_CPU_WAIT: Finding<CallsRound> = Finding::threat(
    "sleeps-threat-cpu-wait",
    &CALLS_EXP,
    "Another thread can take the measuring thread's CPU: a woken sleeper waits for it, or \
     a running loop is preempted; either wait lands inside the figure",
    "Reads the thread's wait for a CPU (`/proc/thread-self/schedstat`) around each loop, \
     outside its window: the calls table's *run-queue wait*. The sleeper is not pinned \
     here; the yield table times it pinned, alone and beside a busy thread. Shown: each \
     sleeping loop's wait as a share of its time, per round the median loop's and the \
     largest, and the rounds in which a loop waited over 1 ms in all. *Our hypothesis, \
     not a finding:* the round's parent, which samples the other threads on one CPU \
     while the round runs ([How we measure](how-we-measure.md#noise-measured)), \
     causes part of that wait",
    |r| {
        let low = low_slack(r);
        let median = r.estimate_of(|d| {
            let (s, _) = waits(d, low)?;
            Some(harness::stats::median_sorted(&s))
        })?;
        let largest = r.estimate_of(|d| Some(*waits(d, low)?.0.last()? * 100.0))?;
        let long = r.data().filter(|d| waits(d, low).is_some_and(|w| w.1));
        let what = format!(
            "a sleeping loop waited over {} ms in all in {} of {} rounds. Wait for a CPU as \
             a share of a loop's time, median over rounds: the median loop {}; the most \
             exposed loop, in %:",
            LONG_WAIT_NS / 1e6,
            long.count(),
            largest.n,
            harness::render::fmt_percent(median.median),
        );
        Some(Evidence::figure(&what, Unit::Number, largest))
    },
);

/// A sleep that does not block: its time is all CPU time and waiting for a CPU.
pub static THREAT_NO_BLOCK: Finding<CallsRound> = Finding::threat(
    "sleeps-threat-no-block",
    &CALLS_EXP,
    "A sleeping call that returns without blocking (*blocked* 0.00 in the slack table) \
     is read as a sleep",
    "Reads the thread's voluntary switches, CPU time and wait for a CPU around each \
     loop. For `nanosleep(1 ns)` at 1 ns of slack: if the thread never slept, those two \
     make up its whole time per call",
    |r| {
        let key = CallsKey::low_slack(Call::Nanosleep(NS1), low_slack(r));
        pair_of(
            r,
            ("time per call", |d| Some(sample(d, &key)?.ns)),
            ("CPU time + wait for a CPU", |d| {
                let s = sample(d, &key)?;
                Some(s.cpu_ns? + s.run_delay_ns?)
            }),
        )
    },
);
