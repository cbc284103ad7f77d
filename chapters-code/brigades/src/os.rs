//! What the operating system says: resource usage (getrusage), resident memory, the
//! limits a big thread brigade runs into, and which of them refused a call.

use serde::{Deserialize, Serialize};
use std::io;

/// Process-wide resource usage between two points (all threads together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub user_ns: f64,
    pub system_ns: f64,
    /// The thread gave up the CPU itself (it blocked).
    pub voluntary_switches: f64,
    /// The kernel took the CPU away (time slice over, or a higher-priority wake-up).
    pub involuntary_switches: f64,
}

impl Usage {
    /// The process's totals so far; `None` where getrusage is not available.
    pub fn now() -> Option<Usage> {
        #[cfg(unix)]
        {
            // SAFETY: getrusage writes only into the struct we pass.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
                return None;
            }
            let ns = |tv: libc::timeval| tv.tv_sec as f64 * 1e9 + tv.tv_usec as f64 * 1e3;
            Some(Usage {
                user_ns: ns(ru.ru_utime),
                system_ns: ns(ru.ru_stime),
                voluntary_switches: ru.ru_nvcsw as f64,
                involuntary_switches: ru.ru_nivcsw as f64,
            })
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// What was used since `start` (as returned by [`Usage::now`]).
    pub fn since(start: Option<Usage>) -> Option<Usage> {
        let (a, b) = (start?, Usage::now()?);
        Some(Usage {
            user_ns: b.user_ns - a.user_ns,
            system_ns: b.system_ns - a.system_ns,
            voluntary_switches: b.voluntary_switches - a.voluntary_switches,
            involuntary_switches: b.involuntary_switches - a.involuntary_switches,
        })
    }

    /// Divides every field by `n` (for "per hop" figures).
    pub fn per(self, n: f64) -> Usage {
        Usage {
            user_ns: self.user_ns / n,
            system_ns: self.system_ns / n,
            voluntary_switches: self.voluntary_switches / n,
            involuntary_switches: self.involuntary_switches / n,
        }
    }
}

pub fn resident_bytes() -> Option<u64> {
    harness::machine::resident_bytes()
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn read_u64(path: &str) -> Option<u64> {
    read_trim(path)?.parse().ok()
}

/// A `/proc/meminfo` field in bytes (for kernel memory that RSS does not show).
pub fn meminfo_bytes(field: &str) -> Option<u64> {
    let text = read_trim("/proc/meminfo")?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?;
    let kb: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// Threads in the whole system (the fourth field of `/proc/loadavg` is running/total).
pub fn system_threads() -> Option<u64> {
    let s = read_trim("/proc/loadavg")?;
    s.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok()
}

/// Memory mappings of this process (each thread stack adds a mapping and a guard page).
pub fn own_mappings() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/maps").ok()?;
    Some(s.lines().count() as u64)
}

/// The smallest `pids.max − pids.current` over this process's pids cgroup and its
/// ancestors (cgroup v1 or v2), with the folder it came from. `None`: no limit found.
pub fn cgroup_pids_headroom() -> Option<(u64, u64, String)> {
    let cgroups = read_trim("/proc/self/cgroup")?;
    let mut dirs = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        if ctrls.is_empty() {
            dirs.push(format!("/sys/fs/cgroup{path}"));
        } else if ctrls.split(',').any(|c| c == "pids") {
            dirs.push(format!("/sys/fs/cgroup/pids{path}"));
        }
    }
    let mut best: Option<(u64, u64, String)> = None;
    for dir in dirs {
        let mut d = std::path::PathBuf::from(dir.trim_end_matches('/'));
        loop {
            let max = read_u64(&format!("{}/pids.max", d.display()));
            let cur = read_u64(&format!("{}/pids.current", d.display()));
            if let (Some(max), Some(cur)) = (max, cur) {
                let head = max.saturating_sub(cur);
                if best.as_ref().is_none_or(|b| head < b.0) {
                    best = Some((head, max, d.display().to_string()));
                }
            }
            if !d.pop() || !d.starts_with("/sys/fs/cgroup") || d.as_os_str() == "/sys/fs/cgroup" {
                break;
            }
        }
    }
    best
}

/// The guard for a thread brigade: how many more threads this process may start
/// while leaving a share of the machine's shared limits to everyone else, and the
/// limit that sets it. Per-process limits (open files) are left to fail for real.
pub fn thread_guard() -> (usize, String) {
    let keep = |total: u64| (total / 10).max(1000);
    let mut best: (u64, String) = (u64::MAX, String::new());
    let mut consider = |room: u64, why: String| {
        if room < best.0 {
            best = (room, why);
        }
    };
    let used = system_threads();
    if let (Some(max), Some(used)) = (read_u64("/proc/sys/kernel/pid_max"), used) {
        consider(
            max.saturating_sub(used + keep(max)),
            format!(
                "kernel.pid_max = {max} (system-wide; {used} in use, {} left to others)",
                keep(max)
            ),
        );
    }
    if let (Some(max), Some(used)) = (read_u64("/proc/sys/kernel/threads-max"), used) {
        consider(
            max.saturating_sub(used + keep(max)),
            format!(
                "kernel.threads-max = {max} (system-wide; {used} in use, {} left to others)",
                keep(max)
            ),
        );
    }
    if let Some((room, max, dir)) = cgroup_pids_headroom() {
        consider(
            room.saturating_sub(keep(max)),
            format!(
                "cgroup pids.max = {max} ({dir}; {} left to other processes)",
                keep(max)
            ),
        );
    }
    if let (Some(max), Some(own)) = (read_u64("/proc/sys/vm/max_map_count"), own_mappings()) {
        // Two mappings per thread (stack and guard page); keep 1,000 for the allocator.
        consider(
            max.saturating_sub(own + 1000) / 2,
            format!("vm.max_map_count = {max} (two mappings per thread stack; {own} in use)"),
        );
    }
    (best.0.min(usize::MAX as u64) as usize, best.1)
}

/// Names the limit behind a failed socket-pair call.
pub fn diagnose_link_error(e: &io::Error) -> (String, String) {
    let limit = match e.raw_os_error() {
        #[cfg(unix)]
        Some(libc::EMFILE) => {
            let l = harness::machine::Limits::current();
            format!(
                "open files per process (RLIMIT_NOFILE = {})",
                l.open_files_soft
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "unlimited".into())
            )
        }
        #[cfg(unix)]
        Some(libc::ENFILE) => "open files system-wide (fs.file-max)".to_string(),
        #[cfg(unix)]
        Some(libc::ENOMEM) | Some(libc::ENOBUFS) => "kernel memory for sockets".to_string(),
        _ => format!("a refused link ({e})"),
    };
    (limit, e.to_string())
}

/// Names the limit behind a refused thread: the OS says only EAGAIN, so compare the
/// counts that could have run out with their ceilings.
pub fn diagnose_spawn_error(e: &io::Error, own_threads: usize) -> (String, String) {
    let detail = format!("{e} after {own_threads} brigade threads");
    if e.raw_os_error().is_none() {
        return (e.to_string(), detail);
    }
    let near = |used: u64, max: u64| used + 64 >= max;
    let l = harness::machine::Limits::current();
    if let (Some((room, max, dir)), _) = (cgroup_pids_headroom(), ()) {
        if room < 64 {
            return (format!("cgroup pids.max = {max} ({dir})"), detail);
        }
    }
    if let (Some(used), Some(max)) = (system_threads(), l.threads_max) {
        if near(used, max) {
            return (format!("kernel.threads-max = {max}"), detail);
        }
    }
    if let (Some(used), Some(max)) = (system_threads(), l.pid_max) {
        if near(used, max) {
            return (format!("kernel.pid_max = {max}"), detail);
        }
    }
    if let (Some(own), Some(max)) = (own_mappings(), l.max_map_count) {
        if near(own, max) {
            return (format!("vm.max_map_count = {max}"), detail);
        }
    }
    if let Some(n) = l.processes_soft {
        return (
            format!("processes per user (RLIMIT_NPROC = {n}) or memory for thread stacks"),
            detail,
        );
    }
    ("memory for thread stacks".to_string(), detail)
}
