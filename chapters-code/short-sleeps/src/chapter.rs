//! The chapter's registry: its experiments, views, headline figures and findings (the
//! rows of its decision table, `table answer`), as the command line, the book-wide
//! measuring driver, the guide and the appendix find them. It lives apart from the
//! mechanism (`lib.rs`), which never imports the views. A pair is judged by the
//! harness's verdict rule on the rounds' own pairs; a figure is a median over rounds.

use crate::experiments::{CALLS_EXP, CallsKey, CallsRound, MS_EXP, SWEEP_EXP, SweepKey};
use crate::experiments::{SweepRound, YIELD_EXP};
use crate::{Call, MS1, Mode, NS1, Timerfd, fmt_slack, headline, views};
use harness::stats::Better;
use harness::{Evidence, Finding, Headline, Results, Why};

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
            .params(&["sleeps"])
            .about("how much later than asked a 1 ms std::thread::sleep returns, from the sweep designed to measure it"),
    ],
    findings: [SHORTEST, SLACK, TIMERFD, YIELD, ONE_MS, TOKIO],
);

/// The low slack a result was measured with (1 ns unless set).
fn low_slack<R>(r: &Results<R>) -> u64 {
    r.param("low_slack_ns").map_or(1, |v| v as u64)
}

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
    "the kernel may wake a sleeper as late as the thread's timer slack, shown in the \
     slack table's header.",
));

/// The same sleep with the thread's slack set to 1 ns (Linux).
pub static SLACK: Finding<CallsRound> = Finding::new(
    "sleeps-slack",
    &CALLS_EXP,
    "Your short sleeps must end sooner (Linux)",
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
    "Set the sleeping thread's timer slack to 1 ns (`libc::prctl`)",
    "Keep the default slack: 1 ns cost time here",
    "Keep the default slack: 1 ns bought no clear gain here",
)
.why(Why::Counter(
    "the slack table: the time per call and *blocked* per call at each slack.",
))
.guide("sleeps");

/// A re-armed timerfd against `thread::sleep`, both for 1 ns with the default slack.
pub static TIMERFD: Finding<CallsRound> = Finding::new(
    "sleeps-timerfd",
    &CALLS_EXP,
    "Short sleeps, the thread's slack left as it is (Linux)",
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
    "Wait on a re-armed timerfd instead of `thread::sleep`",
    "Use `thread::sleep`: the timerfd took longer here",
    "Use `thread::sleep`: a timerfd bought no clear gain here",
)
.why(Why::Hypothesis(
    "a timerfd's timer ignores the thread's slack. The slack table's *default ÷ low* \
     column tests it.",
));

/// A yield against the shortest sleep.
pub static YIELD: Finding<CallsRound> = Finding::new(
    "sleeps-yield",
    &CALLS_EXP,
    "You only want to let other threads run",
    |r| {
        let sleep = ("a 1 ns sleep", &SLEEP_1NS);
        Evidence::readings(
            r,
            ("`sched_yield()`", &CallsKey::of(Call::SchedYield)),
            sleep,
        )
        .or_else(|| Evidence::readings(r, ("`yield_now()`", &CallsKey::of(Call::YieldNow)), sleep))
    },
)
.better(Better::Lower)
.advice(
    "Yield (`std::thread::yield_now`, `sched_yield` on Linux), not sleep 1 ns",
    "Sleep 1 ns: the yield took longer here",
    "Either: neither returned sooner here",
)
.why(Why::Counter(
    "*blocked* per call, in the calls table: the sleep puts the thread to sleep, a \
     yield need not.",
));

/// How late a single 1 ms `thread::sleep` ends, from the sweep.
pub static ONE_MS: Finding<SweepRound> = Finding::new(
    "sleeps-1ms-late",
    &SWEEP_EXP,
    "You call `thread::sleep(1 ms)`",
    |r: &Results<SweepRound>| {
        Evidence::reading(
            r,
            "late by",
            &SweepKey::late(Mode::Sleep, 1_000_000, low_slack(r)),
        )
    },
)
.always("Expect it to end this much later than asked")
.why(Why::Hypothesis(
    "the timer slack plus the wake-up. The sweep table's *slack 1 ns* column shows the \
     slack's part.",
));

/// `tokio::time::sleep(1 ms)`, back to back.
pub static TOKIO: Finding<CallsRound> = Finding::new(
    "sleeps-tokio-1ms",
    &CALLS_EXP,
    "You call `tokio::time::sleep(1 ms)`",
    |r| Evidence::reading(r, "it took", &CallsKey::of(Call::TokioSleep(MS1))),
)
.always("Budget this, not 1 ms, per tokio sleep")
.why(Why::Hypothesis(
    "tokio counts whole 1 ms ticks and rounds a sleep up to them. The tick plot tests \
     it.",
));
