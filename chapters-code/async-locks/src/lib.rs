//! Chapter 5 of *The Cost of Waiting*: synchronous locks in async code.
//!
//! N timeouts of 20 ms each report their expiry to a handler, built the ways the
//! write-up built them, against a baseline that shares nothing and a fix. Every design
//! returns one [`Sample`] per handled expiry; a timeout's lateness runs from its *own*
//! deadline to the moment its expiry was handled, on the monotonic clock. Every wait is
//! bounded: a design that has not handled every expiry by its `give_up` instant stops
//! and returns what it has.
//!
//! The mechanism is split by idea: `timeout.rs` the timeout; `designs.rs` the designs;
//! `run.rs` the runtimes and one run of a design; `hazards.rs` the hazards; `waits.rs`
//! the counters of what a run waited for; `lib.rs` re-exports them. `headline.rs` names
//! the headline figures; `experiments.rs` the rounds; `views.rs` the tables and plots;
//! `os.rs` the scheduler counters of a run; `chapter.rs` the chapter's registry (its
//! experiments, views and headlines), kept apart so that the mechanism imports nothing
//! that builds on it.

pub mod designs;
pub mod hazards;
pub mod run;
pub mod timeout;
pub mod waits;

pub mod experiments;
pub mod os;
pub mod views;

pub mod chapter;
pub mod headline;
pub use chapter::CHAPTER;

pub use designs::{
    Budgeted, Design, Fired, TWO_RUNTIMES_CAPACITY, baseline, baseline_unconstrained,
    handle_with_queue, own_deadline_channel, std_mutex_inline, std_mutex_task_each, task_each,
    tokio_mutex_channel, two_runtimes,
};
pub use hazards::{
    Callback, Counts, HOLD_PAST, Hazard, HazardRun, at_once, guard_across_await, late_and_idle,
    long_section, run_hazard, spin_for, stretch,
};
pub use run::{Flavour, Run, run_design};
pub use timeout::{Sample, TIMEOUT, Timeout, extended_timeout};
pub use waits::{LOCKS, RECEIVES, SENDS, TIMERS, Tallied, Tally, Waits, lock_tokio, watch};
