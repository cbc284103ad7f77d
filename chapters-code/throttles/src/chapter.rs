//! The chapter's registry: its experiments, views, headline figures and findings, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{NAIVE, OMISSION, RATES, RatesKey, SWEEP, SweepKey};
use crate::{Pacer, headline, views};
use harness::Headline;

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
            .about("achieved ops/s (second start to last) of the naive `op; sleep(period)` loop asked for 10,000 ops/s"),
        Headline::new(headline::DEADLINE_RATE_AT_10K, &RATES, &RatesKey::Rate(Pacer::Deadline, 10_000))
            .params(&["run_ms"])
            .about("achieved ops/s (second start to last) of the deadline throttle asked for 10,000 ops/s"),
        Headline::new(headline::GOVERNOR_BURST_RATE_AT_10K, &RATES, &RatesKey::Rate(Pacer::GovernorBurst, 10_000))
            .params(&["run_ms"])
            .about("achieved ops/s of governor with a 10 ms burst, used as a pacer, asked for 10,000 ops/s (a short run: the start-up burst weighs)"),
        Headline::new(headline::SLEEP_1MS_LATENESS, &SWEEP, &SweepKey::Late(1))
            .params(&["sleeps"])
            .about("how much later than asked a 1 ms std::thread::sleep returns (median of the rounds' medians)"),
    ],
    findings: [
        views::HOLD_1K, views::HOLD_10K, views::NAIVE_1K, views::STALL_TICKS, views::OMITTED,
        views::CPU_10K,
    ],
);
