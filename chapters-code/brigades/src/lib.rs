//! Chapter 2, *Context-switch brigades*: one byte is handed along a chain of N
//! threads or N async tasks, each one waiting for it, adding one and passing it on.
//! The time a full lap takes, divided by N, is the cost of one hand-over: one wake-up,
//! one read, one write, and whatever the scheduler does in between.
//!
//! Every brigade has the same shape. Link 0 runs from the driver to member 0, link
//! `i + 1` from member `i` to member `i + 1`, and the last link back to the driver.
//! The driver writes a byte into link 0 and waits for it on the last link; it must
//! come back increased by N (mod 256), which proves that every member handled it.
//! Closing link 0 ends the brigade: each member sees end-of-file, closes its own
//! outgoing link and returns how many bytes it passed on.
//!
//! The mechanism is split by idea: `brigade.rs` the kinds and [`measure`];
//! `threads.rs` the thread brigade; `tasks.rs` the async brigades and their links;
//! `laps.rs` the timed laps; `limits.rs` the limits a build stops at; `spawn.rs` what
//! starting a thread or a task costs; `lib.rs` re-exports them. `headline.rs` names the
//! headline figures; `experiments.rs` the rounds; `views.rs` the tables and plots;
//! `os.rs` what the operating system says; `chapter.rs` the chapter's registry (its
//! experiments, views and headlines), kept apart so that the mechanism imports nothing
//! that builds on it.

pub mod brigade;
pub mod laps;
pub mod limits;
pub mod spawn;
pub mod tasks;
#[cfg(unix)]
pub mod threads;

pub mod experiments;
pub mod os;
pub mod views;

pub mod chapter;
pub mod headline;
pub use chapter::CHAPTER;

pub use brigade::{Brigade, Kind, Refused, check_counts, measure};
pub use laps::{Laps, drive};
pub use limits::{Caps, MIN_MEMBERS, Stop, TIME_BOUND};
pub use os::Usage;
pub use spawn::{spawn_tasks, spawn_threads};
pub use tasks::{
    AsyncBrigade, ChannelLink, Flavor, Link, PipeLink, async_lap, async_member, workers,
};
#[cfg(unix)]
pub use tasks::{SocketLink, SpreadBrigade};
#[cfg(unix)]
pub use threads::{
    OneThreadBrigade, ThreadBrigade, UnixStream, build_thread_brigade, one_thread_lap, thread_lap,
    thread_member,
};
