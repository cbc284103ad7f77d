//! Chapter 1, *Spinning vs sleeping*: how long a message waits when the receiver
//! blocks in the kernel, against a receiver that busy-waits for it.
//!
//! Every variant has the same shape: a sender stays idle for a gap, stamps the time and
//! sends a sequence number with the stamp; the receiver waits for it (blocking,
//! spinning or both) and records how long it took. One message is in flight at a time.
//! The write-up's blocking receive has no time bound, and neither has ours: a run is
//! bounded by its sender, which stops at the deadline and closes its end, which wakes
//! the receiver. The bounded receive (`recv_timeout`, a read timeout, `timeout_at`) is
//! an arm of its own, where a message that does not come within its bound is counted as
//! lost and the run goes on.
//!
//! The mechanism is split by idea: `variant.rs` the clock, the message, the variant's
//! parts, a run's plan and outcome; `wait.rs` the ways to wait; `transport.rs` the
//! std and tokio transports' ends; `probe.rs` where the threads run and what they note
//! beside each message; `runner.rs` the pacer, the two loops and the runs of a variant;
//! `floor.rs` the atomic hand-over floor. `headline.rs` names the headline figures;
//! `experiments.rs` the rounds; `views.rs` the tables and plots; `chapter.rs` the
//! chapter's registry (its experiments, views and headlines), kept apart so that the
//! mechanism imports nothing that builds on it.

pub mod floor;
pub mod probe;
pub mod runner;
pub mod transport;
pub mod variant;
pub mod wait;

pub mod experiments;
pub mod headline;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

pub use harness::counters::Counters;

pub use floor::{atomic_ping_pong, clock_read_ns};
pub use probe::{Probe, current_cpu, pin, placement_supported};
pub use runner::{Pacer, run_std, run_tokio, run_variant};
pub use transport::{CLOSE_SEQ, ReadMsg, Socket, SocketMode, TcpLink, UdpLink};
pub use variant::{
    Host, Idle, Missed, Msg, Outcome, Placement, Plan, Runtime, Transport, Wait, now_ns,
};
pub use wait::{Attempt, Link, Spun, receive, spin};
