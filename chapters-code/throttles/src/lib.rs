//! Chapter 4, *Operation throttles*: holding a fixed operation rate, from the naive
//! `op; sleep(period)` loop to deadline scheduling, and what a load generator that
//! waits the wrong way hides (coordinated omission).
//!
//! The mechanism is split by idea: `sleeping.rs` the sleep sweep and the write-up's
//! loop; `operation.rs` the operation every throttle drives (a datagram on loopback);
//! `throttle.rs` the deadline throttle and the rates it accepts; `pacers.rs` the
//! throttles themselves; `omission.rs` the stalling server and the closed-loop client
//! of the coordinated-omission test. `headline.rs` names the headline figures;
//! `experiments.rs` holds the rounds; `views.rs` the tables and plots; `chapter.rs` the
//! chapter's registry (its experiments, views and headlines), kept apart so that the
//! mechanism imports nothing that builds on it. Every wait here is bounded: by one
//! period, by a per-request patience, or by the round's deadline.

pub mod omission;
pub mod operation;
pub mod pacers;
pub mod sleeping;
pub mod throttle;

pub mod experiments;
pub mod headline;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

pub use omission::{
    Exchange, Exchanges, OmissionPlan, Served, StallingEcho, await_reply, closed_loop_client,
    pauses_at, with_omitted,
};
pub use operation::{Sink, UdpOp};
pub use pacers::{
    MissedTickBehavior, Pacer, Run, compensating, deadline, debt_as_published, governor_paced,
    naive, tokio_interval,
};
pub use sleeping::{Slept, naive_iteration, sweep_pass, timer_slack_ns};
pub use throttle::{
    DEFAULT_MAX_LAG, DEFAULT_MIN_SLEEP, MAX_RATE, MIN_RATE, RateError, Throttle, period_ns,
    sleep_until,
};
