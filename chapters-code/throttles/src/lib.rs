//! Chapter 4 of *The Cost of Waiting*: holding a fixed operation rate, from a naive
//! sleep loop to deadline scheduling, and what a naive throttle hides in a load test.

pub mod cli;
pub mod experiments;
pub mod omission;
pub mod pacers;
pub mod throttle;
pub mod views;

pub use throttle::{RateError, Throttle};

use harness::{Chapter, Experiment, Profile, View, ViewKind};
use std::time::Duration;

fn secs(p: Profile, quick: u64, full: u64) -> Duration {
    Duration::from_secs(p.pick(quick, full))
}

const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "sleep-sweep",
        about: "sleep(1 … 50 ms): requested against measured",
        bound: |p| secs(p, 4, 25),
        run: experiments::run_sweep,
    },
    Experiment {
        name: "naive",
        about: "send a datagram; sleep(1 ms), aiming at 1,000 ops/s",
        bound: |p| secs(p, 3, 12),
        run: experiments::run_naive,
    },
    Experiment {
        name: "rates",
        about: "every throttle at 100 … 100,000 ops/s: rate, drift, jitter, CPU",
        bound: |p| secs(p, 12, 120),
        run: experiments::run_rates,
    },
    Experiment {
        name: "omission",
        about: "coordinated omission: latency from the actual vs the intended send",
        bound: |p| secs(p, 4, 20),
        run: experiments::run_omission,
    },
];

const VIEWS: &[View] = &[
    View {
        name: "sweep",
        kind: ViewKind::Table,
        experiment: "sleep-sweep",
        render: views::sweep_table,
    },
    View {
        name: "naive",
        kind: ViewKind::Table,
        experiment: "naive",
        render: views::naive_table,
    },
    View {
        name: "achieved",
        kind: ViewKind::Table,
        experiment: "rates",
        render: views::achieved_table,
    },
    View {
        name: "jitter",
        kind: ViewKind::Table,
        experiment: "rates",
        render: views::jitter_table,
    },
    View {
        name: "omission",
        kind: ViewKind::Table,
        experiment: "omission",
        render: views::omission_table,
    },
    View {
        name: "achieved",
        kind: ViewKind::Plot,
        experiment: "rates",
        render: views::achieved_plot,
    },
    View {
        name: "gaps-1k",
        kind: ViewKind::Plot,
        experiment: "rates",
        render: views::gaps_plot_1k,
    },
    View {
        name: "gaps-10k",
        kind: ViewKind::Plot,
        experiment: "rates",
        render: views::gaps_plot_10k,
    },
    View {
        name: "omission",
        kind: ViewKind::Plot,
        experiment: "omission",
        render: views::omission_plot,
    },
];

pub const CHAPTER: Chapter = Chapter {
    name: env!("CARGO_PKG_NAME"),
    dir: env!("CARGO_MANIFEST_DIR"),
    experiments: EXPERIMENTS,
    views: VIEWS,
};
