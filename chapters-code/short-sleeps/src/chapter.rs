//! The chapter's registry: its experiments, views and headline figures, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{CALLS_EXP, CallsKey, MS_EXP, SWEEP_EXP, SweepKey, YIELD_EXP};
use crate::{Call, Mode, NS1, headline, views};
use harness::Headline;

/// The chapter: its experiments, views and headline figures.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [CALLS_EXP, SWEEP_EXP, MS_EXP, YIELD_EXP],
    views: [
        views::ANSWER, views::CALLS, views::SLACK, views::FINDINGS, views::REFERENCE,
        views::SWEEP_PLOT, views::SWEEP_TABLE, views::SWEEP_TAILS, views::SWEEP_CPU,
        views::TOKIO_PLOT, views::TOKIO_TABLE, views::ONE_MS, views::YIELD_TABLE,
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
);
