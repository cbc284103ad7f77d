//! The chapter's registry: its experiments, views and headline figures, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{LIMITS, SWEEP, VARIANTS, VariantsKey};
use crate::{Kind, experiments, headline, views};
use harness::Headline;

/// The chapter: its experiments, views and headline figures.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [VARIANTS, SWEEP, LIMITS],
    views: [
        views::ANSWER, views::VARIANTS_TABLE, views::HOP_CDF, views::FINDINGS, views::REFERENCE,
        views::SWITCHES, views::PINNING, views::SPAWN_TABLE, views::MEMORY,
        views::SWEEP_MEMORY, views::SWEEP_HOP, views::LIMITS_TABLE, views::LIMIT_RUNS,
    ],
    headlines: [
        Headline::new(headline::THREADS_PER_HOP, &VARIANTS, &VariantsKey::hop(Kind::Thread))
            .params(&["tasks"])
            .about("one hand-over in the thread brigade over socket pairs: median lap ÷ tasks"),
        Headline::new(headline::ASYNC_CURRENT_SOCKET_PER_HOP, &VARIANTS, &VariantsKey::hop(Kind::AsyncCurrentSocket))
            .params(&["tasks"])
            .about("one hand-over between async tasks on tokio's current-thread runtime over socket pairs: median lap ÷ tasks"),
        Headline::new(headline::ASYNC_CURRENT_CHANNEL_PER_HOP, &VARIANTS, &VariantsKey::hop(Kind::AsyncCurrentChannel))
            .params(&["tasks"])
            .about("one hand-over between async tasks on tokio's current-thread runtime over tokio channels: median lap ÷ tasks"),
        Headline::new(headline::ASYNC_TASK_BYTES, &SWEEP, &experiments::ASYNC_TASK_BYTES)
            .params(&["max_threads"])
            .about("resident memory one more async task adds (current-thread runtime, socket pairs): the slope over a sweep of sizes"),
    ],
);
