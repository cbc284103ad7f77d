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

/// What Linux reports about the two logical CPUs that the *different CPUs* placement
/// pins to (`/sys/devices/system/cpu/cpuN/topology/thread_siblings_list` and
/// `cache/index*/shared_cpu_list`): whether they are two threads of one core, and the
/// cache levels they share. In a virtual machine this is what the host tells the guest,
/// not what lies underneath.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PairTopology {
    /// The two CPUs' numbers: the sender's, then the receiver's.
    pub cpus: [usize; 2],
    /// The second is listed among the first's hardware threads.
    pub one_core: bool,
    /// The cache levels (1, 2, 3 …) whose sharers, as listed for the first, include
    /// the second.
    pub shared_caches: Vec<u64>,
}

impl PairTopology {
    /// The shared cache levels as a page names them: `L2, L3`, or `no cache`.
    pub fn caches_named(&self) -> String {
        let named: Vec<String> = self.shared_caches.iter().map(|l| format!("L{l}")).collect();
        if named.is_empty() {
            "no cache".into()
        } else {
            named.join(", ")
        }
    }
}

/// The most cache levels [`PairTopology::shared_caches`] lists (L1 to L4, with room).
pub const MOST_CACHE_LEVELS: usize = 8;

/// [`PairTopology`] of the pinned pair, where Linux reports it (`None` elsewhere).
pub fn pinned_pair_topology() -> Option<PairTopology> {
    use harness::procfs::{entries, read, read_u64};
    let cores = core_affinity::get_core_ids()?;
    let (a, b) = (cores.first()?.id, cores.get(1)?.id);
    let cpu = format!("/sys/devices/system/cpu/cpu{a}");
    let one_core = cpu_list_has(&read(format!("{cpu}/topology/thread_siblings_list"))?, b)?;
    let mut shared_caches = Vec::new();
    for dir in entries(format!("{cpu}/cache")).unwrap_or_default() {
        let (Some(level), Some(list)) = (
            read_u64(dir.join("level")),
            read(dir.join("shared_cpu_list")),
        ) else {
            continue;
        };
        if cpu_list_has(&list, b) == Some(true) && !shared_caches.contains(&level) {
            shared_caches.push(level);
        }
    }
    shared_caches.sort_unstable();
    shared_caches.truncate(MOST_CACHE_LEVELS);
    Some(PairTopology {
        cpus: [a, b],
        one_core,
        shared_caches,
    })
}

/// Whether a Linux CPU list (`0-3,8`) holds `cpu`; `None` where it does not parse.
pub fn cpu_list_has(list: &str, cpu: usize) -> Option<bool> {
    for part in list.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.trim().parse().ok()?, hi.trim().parse().ok()?),
            None => {
                let v: usize = part.trim().parse().ok()?;
                (v, v)
            }
        };
        if (lo..=hi).contains(&cpu) {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::cpu_list_has;

    #[test]
    fn cpu_lists_are_read_as_linux_writes_them() {
        assert_eq!(cpu_list_has("0-1", 1), Some(true));
        assert_eq!(cpu_list_has("0", 1), Some(false));
        assert_eq!(cpu_list_has("0-3,8,10-11", 8), Some(true));
        assert_eq!(cpu_list_has("0-3,8,10-11", 9), Some(false));
        assert_eq!(cpu_list_has("x", 0), None);
    }
}
