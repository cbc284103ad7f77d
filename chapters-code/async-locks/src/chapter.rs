//! The chapter's registry: its experiments, views, headline figures and findings, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{DESIGNS, DesignKey, HAZARDS, SWEEP, UNIT_CHECK};
use crate::{Design, Flavour, headline, views};
use harness::Headline;

/// The chapter: its experiments, views and headline figures.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [DESIGNS, SWEEP, HAZARDS, UNIT_CHECK],
    views: [
        views::DESIGNS_CDF, views::DESIGNS_TABLE, views::WAITS, views::COST,
        views::FLAVOURS, views::FLAVOURS_CDF, views::WRITEUP, views::SWEEP_TABLE, views::HAZARDS_TABLE, views::UNIT_CHECK_TABLE,
    ],
    headlines: [
        Headline::new(
            headline::DESIGN2_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::TokioMutexCap1, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 2 (tokio mutex, channel of capacity 1), multi-thread runtime: lateness of a timeout past its own deadline, the median over rounds of each round's median"),
        Headline::new(
            headline::FIX_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::Fix, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 4 (each timeout's own deadline in its message, a channel with room for all), multi-thread runtime: lateness, the median over rounds of each round's median"),
        Headline::new(
            headline::STD_MUTEX_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::StdMutexTask, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 1 as re-created (std mutex, synchronous callback in a task per timeout), multi-thread runtime: lateness, the median over rounds of each round's median"),
        Headline::new(
            headline::NO_LOCK_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::TaskEach, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 1's structure without its lock (a task per timeout, nothing shared), the control for the lock question, multi-thread runtime: lateness, the median over rounds of each round's median"),
    ],
    findings: [
        views::LOCK, views::GUARD, views::DESIGN2, views::SLOT, views::DESIGN4, views::FLAVOUR,
    ],
);
