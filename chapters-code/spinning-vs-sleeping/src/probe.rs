//! Where the two threads run and what they note beside each message, off the timed
//! path: the CPU a thread is on, pinning for a placement, the per-message probe
//! (same CPU, preemptions, the receiver's counters) and the run's wall and CPU time.

use crate::variant::{Outcome, Placement};
use harness::counters::Counters;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The logical CPU the calling thread runs on now, where the OS tells.
pub fn current_cpu() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and touches no memory of ours.
        let c = unsafe { libc::sched_getcpu() };
        u32::try_from(c).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// What the two threads note beside each message, off the timed path: the CPU the
/// sender stamped it on, so the receiver can tell whether it took it on the same one,
/// and the receiving thread's counters when it last took a message, so it can tell
/// whether it was preempted while it waited for this one and what the wait cost it.
pub struct Probe {
    sender_cpu: AtomicU32,
    receiver_last: std::sync::Mutex<Option<(std::thread::ThreadId, Counters)>>,
    receiver_sum: std::sync::Mutex<(Option<Counters>, u64)>,
}

impl Default for Probe {
    fn default() -> Probe {
        Probe {
            sender_cpu: AtomicU32::new(u32::MAX),
            receiver_last: std::sync::Mutex::new(None),
            receiver_sum: std::sync::Mutex::new((None, 0)),
        }
    }
}

impl Probe {
    /// On the receiving thread, after the last untimed message: start counting.
    pub(crate) fn start(&self) {
        if let Ok(mut last) = self.receiver_last.lock() {
            *last = Some((std::thread::current().id(), Counters::thread()));
        }
    }

    /// On the receiving thread, once a message is taken: how often it was preempted
    /// since the last message, and that interval's counters added to the run's. `None`
    /// where the receiver changed threads in between (a tokio task can).
    pub(crate) fn preempted_since_last(&self) -> Option<u64> {
        let now = (std::thread::current().id(), Counters::thread());
        let mut last = self.receiver_last.lock().ok()?;
        let (thread, before) = last.replace(now)?;
        (thread == now.0).then_some(())?;
        let d = now.1.since(&before);
        if let Ok(mut sum) = self.receiver_sum.lock() {
            sum.0 = Some(sum.0.map_or(d, |s| s.plus(&d)));
            sum.1 += 1;
        }
        d.involuntary
    }

    /// The receiving thread's counters over the messages counted, and how many.
    pub(crate) fn receiver(&self) -> (Option<Counters>, u64) {
        self.receiver_sum.lock().map(|s| *s).unwrap_or((None, 0))
    }

    pub(crate) fn stamping_on(&self, cpu: Option<u32>) {
        self.sender_cpu
            .store(cpu.unwrap_or(u32::MAX), Ordering::Relaxed);
    }

    /// Whether the receiver, now, runs where the sender stamped the last message.
    pub(crate) fn same_cpu(&self) -> Option<bool> {
        let s = self.sender_cpu.load(Ordering::Relaxed);
        (s != u32::MAX).then_some(())?;
        current_cpu().map(|r| r == s)
    }
}

/// The wall time and the CPU time of the whole process over the timed messages.
pub(crate) struct Meter {
    cpu0: Option<Duration>,
    t0: Instant,
}

impl Meter {
    pub(crate) fn start() -> Meter {
        Meter {
            cpu0: harness::process_cpu_time(),
            t0: Instant::now(),
        }
    }

    /// Writes the run's wall and CPU time, and the receiving thread's counters, into
    /// `out`.
    pub(crate) fn finish(self, out: &mut Outcome, probe: &Probe) {
        out.wall_ns = self.t0.elapsed().as_nanos() as f64;
        out.cpu_ns = match (self.cpu0, harness::process_cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_nanos() as f64),
            _ => None,
        };
        (out.receiver, out.receiver_messages) = probe.receiver();
    }
}

/// Pins the calling thread for a placement; `role` 0 is the sender, 1 the receiver.
/// Returns false where pinning is impossible (one CPU, or an OS that does not allow it).
pub fn pin(placement: Placement, role: usize) -> bool {
    let cores = match core_affinity::get_core_ids() {
        Some(c) if !c.is_empty() => c,
        _ => return placement == Placement::Unpinned,
    };
    match placement {
        Placement::Unpinned => true,
        Placement::SameCpu => core_affinity::set_for_current(cores[0]),
        Placement::OtherCpu => cores.len() >= 2 && core_affinity::set_for_current(cores[role]),
    }
}

/// Whether this machine can run `placement` at all.
pub fn placement_supported(placement: Placement) -> bool {
    let can_pin = cfg!(any(
        target_os = "linux",
        target_os = "windows",
        target_os = "android"
    ));
    match placement {
        Placement::Unpinned => true,
        Placement::SameCpu => can_pin,
        Placement::OtherCpu => {
            can_pin && core_affinity::get_core_ids().is_some_and(|c| c.len() >= 2)
        }
    }
}
