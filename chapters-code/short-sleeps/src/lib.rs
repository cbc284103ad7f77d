//! Chapter 3 of *The Cost of Waiting*: how long a sleep of zero and of one nanosecond
//! really takes, on each operating system, and what Linux timer slack does to it.
//!
//! Two experiments: `calls` times one loop of back-to-back calls of every variant per
//! round (the sleeping ones twice on Linux: with the thread's timer slack and with it
//! set low), and `sweep` compares the requested and the actual length of single sleeps
//! from 1 µs to 10 ms.
//!
//! The mechanism is split by idea: `timing.rs` times one loop of calls; `calls.rs`
//! names every system's calls and the variants each runs; `slack.rs` runs loops under a
//! timer slack and within their bound; `sweep.rs` times single sleeps against their
//! request; `ticks.rs` places a sleep within tokio's millisecond ticks; `competitor.rs`
//! gives a yield something to yield to. `headline.rs` names the headline figures;
//! `experiments.rs` the rounds; `views.rs` the tables and plots; `os.rs` the system
//! calls; `chapter.rs` the chapter's registry (its experiments, views and headlines),
//! kept apart so that the mechanism imports nothing that builds on it.

pub mod calls;
pub mod competitor;
pub mod slack;
pub mod sweep;
pub mod ticks;
pub mod timing;

pub mod experiments;
pub mod headline;
pub mod os;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

#[cfg(target_os = "linux")]
pub use calls::timerfd_loop;
pub use calls::{
    Call, MS1, NS1, Timerfd, VARIANTS, Variant, ZERO, fmt_request, run_loop, unsupported_here,
};
pub use competitor::{YIELD_CALLS, on_one_cpu};
pub use slack::{
    CPU_LOOP_STEPS, CpuLoop, PROBE_CALLS, Slack, bounded_loop, cpu_loop, fmt_slack, with_slack,
};
pub use sweep::{
    Batch, Mode, Timed, blocked_since, calibrate_margin, hybrid_sleep, sweep_count, sweep_requests,
    timed_sleeps, voluntary_switches,
};
pub use ticks::{
    MsArm, PHASE_BINS, PhasedSleep, TICK_NS, Ticks, bin_centre_ns, phased_sleep, tick_models,
    timer_runtime,
};
pub use timing::{Bracket, Sample, clock_read_costs, per_call, tokio_sleep};
