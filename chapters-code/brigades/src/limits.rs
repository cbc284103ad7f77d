//! The limits a brigade is built under: the smallest brigade worth timing, why a
//! brigade stopped short of its size ([`Stop`]), the ceilings a builder stops at
//! before the operating system says no ([`Caps`]), and the descriptors held back while
//! it builds.

use crate::os;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A brigade smaller than this is not measured: its laps would say nothing about
/// hand-overs between members, so a limit that leaves fewer is reported, not timed.
pub const MIN_MEMBERS: usize = 2;

/// Why a brigade has fewer members than were asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub wanted: usize,
    /// The members that were built.
    pub built: usize,
    /// The limit that stopped it, in a reader's words.
    pub limit: String,
}

/// What [`Stop::limit`] says when the round's time, not a limit, ended the build.
pub const TIME_BOUND: &str = "the time bound of this round";

impl Stop {
    pub fn new(wanted: usize, built: usize, limit: String) -> Stop {
        Stop {
            wanted,
            built,
            limit,
        }
    }

    /// Whether the round's time bound, not a resource limit, stopped the build.
    pub fn by_time(&self) -> bool {
        self.limit == TIME_BOUND
    }
}

/// Ceilings a builder stops at before the operating system says no.
#[derive(Debug, Clone)]
pub struct Caps {
    /// Threads this process may still start, and the limit that says so.
    pub threads: usize,
    pub threads_why: String,
    /// That limit and its value, short (`kernel.pid_max = 32,768`).
    pub threads_limit: String,
    /// Resident memory one build may add, and where that budget comes from.
    pub memory: u64,
    pub memory_why: String,
    /// Building stops at this instant.
    pub deadline: Option<Instant>,
}

impl Caps {
    /// No ceilings but the operating system's own.
    pub fn none() -> Caps {
        Caps {
            threads: usize::MAX,
            threads_why: String::new(),
            threads_limit: String::new(),
            memory: u64::MAX,
            memory_why: String::new(),
            deadline: None,
        }
    }

    /// The ceilings of this machine now: threads left under the limits they share
    /// with others (see [`os::thread_guard`]), and the memory budget (1 GiB, or what
    /// this cgroup leaves).
    pub fn here(deadline: Instant) -> Caps {
        let guard = os::thread_guard_named();
        let (memory, source) = os::memory_budget();
        let memory_why = format!("the memory budget ({source})");
        Caps {
            threads: guard.room,
            threads_why: guard.why,
            threads_limit: guard.limit,
            memory,
            memory_why,
            deadline: Some(deadline),
        }
    }

    /// Why member `i` must not be built, if it must not. The thread count is checked
    /// for every member, the clock and resident memory every 1,024.
    pub(crate) fn refuse(&self, i: usize, thread: bool, start_rss: Option<u64>) -> Option<String> {
        if thread && i >= self.threads {
            return Some(self.threads_why.clone());
        }
        if i == 0 || !i.is_multiple_of(1024) {
            return None;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(TIME_BOUND.into());
        }
        let grown = os::resident_bytes()?.saturating_sub(start_rss?);
        (grown > self.memory).then(|| self.memory_why.clone())
    }
}

/// A few descriptors held while a brigade is built and given back afterwards, so that
/// a brigade that runs into the open-file limit still leaves the process room to read
/// `/proc`, start its runtime and report the limit.
pub(crate) struct FdReserve(#[allow(dead_code)] Vec<std::fs::File>);

impl FdReserve {
    pub(crate) fn new() -> FdReserve {
        #[cfg(unix)]
        let v = (0..16)
            .filter_map(|_| std::fs::File::open("/dev/null").ok())
            .collect();
        #[cfg(not(unix))]
        let v = Vec::new();
        FdReserve(v)
    }
}
