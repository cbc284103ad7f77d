//! What the operating system says: resource usage (getrusage), resident memory, the
//! limits a big brigade runs into, how much of each is left, and which of them refused
//! a call. Nothing here names a cgroup's path: a reader's page says "this cgroup".

use serde::{Deserialize, Serialize};
use std::io;

/// Process-wide resource usage between two points (all threads together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// CPU time of the whole process, exact (`CLOCK_PROCESS_CPUTIME_ID`).
    pub cpu_ns: f64,
    /// getrusage's split of the CPU time into user and kernel time. Linux samples it at
    /// the scheduler's tick (every 1 to 10 ms), so over a short window it is mostly
    /// chance; see `SPLIT_MIN_CPU_NS` in the views.
    pub user_ns: f64,
    pub system_ns: f64,
    /// The thread gave up the CPU itself (it blocked).
    pub voluntary_switches: f64,
    /// The kernel took the CPU away (time slice over, or a higher-priority wake-up).
    pub involuntary_switches: f64,
    /// Time the process's threads spent runnable but waiting for a CPU (run-queue
    /// delay, Linux's schedstat summed over the threads alive at both readings).
    #[serde(default)]
    pub run_delay_ns: Option<f64>,
    /// Wall time between the two readings: the window every other field covers.
    #[serde(default)]
    pub wall_ns: f64,
    /// Times the scheduler moved one of the process's threads to another CPU
    /// (`se.nr_migrations` in Linux's `/proc/<pid>/task/<tid>/sched`, summed over the
    /// threads alive at both readings): in a brigade, mostly a woken member placed on
    /// another CPU than the one it last ran on.
    #[serde(default)]
    pub migrations: Option<f64>,
    /// Page faults served without I/O (`ru_minflt`): a page the process touched for
    /// the first time, such as a new thread's stack. Exact, not sampled.
    #[serde(default)]
    pub minor_faults: f64,
    #[serde(skip)]
    taken: Option<std::time::Instant>,
}

impl Usage {
    /// The process's totals so far; `None` where getrusage is not available. Every
    /// counter is read first and the window's start stamp taken last: the run-queue
    /// delay alone, with hundreds of threads to scan, takes milliseconds, which must
    /// not fall inside the window the counters annotate.
    pub fn now() -> Option<Usage> {
        let run_delay = harness::Counters::process().run_delay_ns;
        let migrations = process_migrations();
        let mut u = Self::clocks()?;
        u.run_delay_ns = run_delay.map(|d| d as f64);
        u.migrations = migrations;
        u.taken = Some(std::time::Instant::now());
        Some(u)
    }

    /// What was used since `start` (as returned by [`Usage::now`]): the window's end
    /// stamp is taken first, then the clocks, then the run-queue delay, so the window
    /// (`wall_ns`) holds none of the reads and the clocks' window none of the scan.
    pub fn since(start: Option<Usage>) -> Option<Usage> {
        let end = std::time::Instant::now();
        let a = start?;
        let mut b = Self::clocks()?;
        b.run_delay_ns = harness::Counters::process().run_delay_ns.map(|d| d as f64);
        b.migrations = process_migrations();
        let wall_ns = a
            .taken
            .map_or(0.0, |t| end.saturating_duration_since(t).as_nanos() as f64);
        Some(Usage {
            wall_ns,
            taken: None,
            cpu_ns: b.cpu_ns - a.cpu_ns,
            user_ns: b.user_ns - a.user_ns,
            system_ns: b.system_ns - a.system_ns,
            voluntary_switches: b.voluntary_switches - a.voluntary_switches,
            involuntary_switches: b.involuntary_switches - a.involuntary_switches,
            minor_faults: b.minor_faults - a.minor_faults,
            run_delay_ns: match (a.run_delay_ns, b.run_delay_ns) {
                (Some(x), Some(y)) => Some((y - x).max(0.0)),
                _ => None,
            },
            migrations: match (a.migrations, b.migrations) {
                (Some(x), Some(y)) => Some((y - x).max(0.0)),
                _ => None,
            },
        })
    }

    /// getrusage and the process's CPU clock.
    fn clocks() -> Option<Usage> {
        #[cfg(unix)]
        {
            // SAFETY: getrusage writes only into the struct we pass.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
                return None;
            }
            let ns = |tv: libc::timeval| tv.tv_sec as f64 * 1e9 + tv.tv_usec as f64 * 1e3;
            let (user_ns, system_ns) = (ns(ru.ru_utime), ns(ru.ru_stime));
            Some(Usage {
                cpu_ns: harness::process_cpu_time()
                    .map_or(user_ns + system_ns, |d| d.as_nanos() as f64),
                user_ns,
                system_ns,
                voluntary_switches: ru.ru_nvcsw as f64,
                involuntary_switches: ru.ru_nivcsw as f64,
                minor_faults: ru.ru_minflt as f64,
                run_delay_ns: None,
                wall_ns: 0.0,
                migrations: None,
                taken: None,
            })
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// Divides every field by `n` (for "per hop" figures).
    pub fn per(self, n: f64) -> Usage {
        Usage {
            cpu_ns: self.cpu_ns / n,
            user_ns: self.user_ns / n,
            system_ns: self.system_ns / n,
            voluntary_switches: self.voluntary_switches / n,
            involuntary_switches: self.involuntary_switches / n,
            minor_faults: self.minor_faults / n,
            run_delay_ns: self.run_delay_ns.map(|d| d / n),
            wall_ns: self.wall_ns / n,
            migrations: self.migrations.map(|m| m / n),
            taken: None,
        }
    }
}

/// Migrations of every thread of this process alive now, summed (Linux; `None`
/// elsewhere or where `/proc` cannot be read). A thread that ends between two readings
/// takes its count with it, as with the run-queue delay.
pub fn process_migrations() -> Option<f64> {
    let mut total = 0u64;
    for task in harness::procfs::entries("/proc/self/task")? {
        let Some(text) = harness::procfs::read(task.join("sched")) else {
            continue; // the thread ended while we read
        };
        total += text
            .lines()
            .find_map(|l| l.strip_prefix("se.nr_migrations"))
            .and_then(|v| v.trim().trim_start_matches(':').trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    Some(total as f64)
}

pub fn resident_bytes() -> Option<u64> {
    harness::machine::resident_bytes()
}

/// The page size, the unit resident memory moves by (`None` where not read).
#[cfg(unix)]
pub fn page_bytes() -> Option<u64> {
    // SAFETY: sysconf reads a configuration value; it has no pointer arguments.
    let b = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(b).ok().filter(|b| *b > 0)
}

/// The page size: not read on this system.
#[cfg(not(unix))]
pub fn page_bytes() -> Option<u64> {
    None
}

/// Returns freed heap to the OS so the next resident-memory reading starts clean.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

// Linux's files are read through the harness's `procfs`, by Linux builds only: Wine
// shows a Windows build the Linux host's `/proc`, whose figures are not that OS's.
use harness::procfs::{read as read_trim, read_u64};

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
    Some(read_trim("/proc/self/maps")?.lines().count() as u64)
}

pub use harness::machine::{LimitValue, combine_limits};

/// `pids.max` of this process's cgroup and its ancestors (a parent's limit applies to
/// its descendants).
pub fn cgroup_pids_max() -> LimitValue {
    harness::machine::cgroup_limit("pids", &["pids.max"])
}

/// The soft RLIMIT_NPROC as [`LimitValue`].
pub fn nproc_limit() -> LimitValue {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes into the struct we pass.
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NPROC as _, &mut r) } == 0;
        match (ok, r.rlim_cur == libc::RLIM_INFINITY) {
            (false, _) => LimitValue::NotReadable,
            (true, true) => LimitValue::Unlimited,
            #[allow(clippy::unnecessary_cast)]
            (true, false) => LimitValue::Value(r.rlim_cur as u64),
        }
    }
    #[cfg(not(unix))]
    {
        LimitValue::NotSet
    }
}

pub use harness::machine::{cgroup_memory_headroom, cgroup_pids_headroom};

/// The most memory a brigade may add, and where that figure comes from: 1 GiB, or
/// less where this cgroup's memory limit leaves less room.
pub fn memory_budget() -> (u64, String) {
    const GIB: u64 = 1 << 30;
    match cgroup_memory_headroom() {
        Some((room, max)) if room < GIB => (
            room,
            format!(
                "the room this cgroup's memory limit of {} leaves ({})",
                mib(max),
                mib(room)
            ),
        ),
        _ => (GIB, "1 GiB, the chapter's own ceiling".to_string()),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / 1048576.0)
}

/// `getrlimit` soft value; `None` when unlimited or unreadable.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
fn soft_rlimit(resource: libc::c_int) -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes into the struct we pass. The resource constant's
    // type differs between libcs, hence the cast.
    #[allow(clippy::useless_conversion)]
    let ok = unsafe { libc::getrlimit(resource as _, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur as u64)
}

/// The soft RLIMIT_NPROC: how many processes and threads this user may have.
pub fn nproc_soft() -> Option<u64> {
    #[cfg(unix)]
    {
        soft_rlimit(libc::RLIMIT_NPROC as libc::c_int)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Threads (and processes) that belong to this process's real user, all over the
/// system: what RLIMIT_NPROC counts. `None` where `/proc` cannot tell.
pub fn user_threads() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() }.to_string();
        let mut total = 0;
        for entry in harness::procfs::entries("/proc")? {
            let name = entry.file_name().unwrap_or_default().to_string_lossy();
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Some(status) = harness::procfs::read(entry.join("status")) else {
                continue; // it ended meanwhile
            };
            let field = |f: &str| status.lines().find_map(|l| l.strip_prefix(f));
            let real_uid = field("Uid:").and_then(|v| v.split_whitespace().next());
            if real_uid == Some(uid.as_str()) {
                total += field("Threads:")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(1);
            }
        }
        Some(total)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Whether this process runs as root (which the kernel exempts from RLIMIT_NPROC).
pub fn is_root() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: geteuid cannot fail.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The limit that caps how many more threads this process may start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Guard {
    /// Threads this process may still start; `usize::MAX` where no limit was found.
    pub room: usize,
    /// The limit and its value, short: `kernel.pid_max = 32,768`; empty: none found.
    pub limit: String,
    /// The same with the arithmetic behind `room`.
    pub why: String,
}

/// How many more threads this process may start, and the limit that sets it: the
/// smallest room under the limits that threads use up, each minus a share left to
/// everyone else. `usize::MAX` and an empty reason: no limit found.
///
/// The soft RLIMIT_NPROC is respected even for root, whom the kernel exempts: a reader
/// who set `ulimit -u` asked for fewer threads, and gets them.
pub fn thread_guard() -> (usize, String) {
    let g = thread_guard_named();
    (g.room, g.why)
}

/// [`thread_guard`], with the limit's short name kept apart.
pub fn thread_guard_named() -> Guard {
    let mut best = Guard {
        room: usize::MAX,
        ..Guard::default()
    };
    let mut consider = |room: u64, limit: String, rest: String| {
        let room = room.min(usize::MAX as u64) as usize;
        if room < best.room {
            best = Guard {
                room,
                why: format!("{limit}{rest}"),
                limit,
            };
        }
    };
    let n = harness::render::fmt_count;
    // Shared with every program on the machine: leave a tenth (at least 1,000).
    let keep = |total: u64| (total / 10).max(1000);
    let used = system_threads();
    for (file, name) in [
        ("/proc/sys/kernel/pid_max", "kernel.pid_max"),
        ("/proc/sys/kernel/threads-max", "kernel.threads-max"),
    ] {
        if let (Some(max), Some(used)) = (read_u64(file), used) {
            consider(
                max.saturating_sub(used + keep(max)),
                format!("{name} = {}", n(max)),
                format!(
                    " (system-wide), less the {} left to others and the {} threads \
                     already running",
                    n(keep(max)),
                    n(used)
                ),
            );
        }
    }
    // Shared with the other processes of this cgroup or this user: leave a tenth.
    let keep_small = |total: u64| (total / 10).max(4);
    if let Some((room, max)) = cgroup_pids_headroom() {
        consider(
            room.saturating_sub(keep_small(max)),
            format!("pids.max = {} of this cgroup or a parent", n(max)),
            format!(
                ", less the {} left to its other processes and the {} process ids \
                 already in use",
                n(keep_small(max)),
                n(max - room)
            ),
        );
    }
    if let Some(max) = nproc_soft() {
        let root = if is_root() {
            "; respected although root is exempt"
        } else {
            ""
        };
        let limit = format!("RLIMIT_NPROC = {}", n(max));
        match user_threads() {
            Some(used) => consider(
                max.saturating_sub(used + keep_small(max)),
                limit,
                format!(
                    " (every thread of this user counts), less the {} left to others \
                     and the {} threads this user already has{root}",
                    n(keep_small(max)),
                    n(used)
                ),
            ),
            None => consider(max, limit, root.to_string()),
        }
    }
    if let (Some(max), Some(own)) = (read_u64("/proc/sys/vm/max_map_count"), own_mappings()) {
        // Four mappings per std thread (glibc's stack and guard, std's signal stack and
        // its guard page: std `sys/pal/unix/stack_overflow.rs`, `get_stack`); keep 1,000
        // for the allocator.
        consider(
            max.saturating_sub(own + 1000) / 4,
            format!("vm.max_map_count = {}", n(max)),
            format!(
                ", less the {} mappings in use and 1,000 kept for the allocator, \
                 quartered (four mappings per thread: glibc's stack and guard, \
                 std's signal stack and guard)",
                n(own)
            ),
        );
    }
    best
}

/// The soft open-file limit, in words: "RLIMIT_NOFILE = 20,000".
#[cfg(unix)]
fn nofile_text() -> String {
    let l = harness::machine::Limits::current();
    format!(
        "RLIMIT_NOFILE = {}",
        l.open_files_soft
            .map(harness::render::fmt_count)
            .unwrap_or_else(|| "unlimited".into())
    )
}

/// Names the limit behind a failed socket-pair, epoll or eventfd call.
pub fn diagnose_link_error(e: &io::Error) -> String {
    match e.raw_os_error() {
        #[cfg(unix)]
        Some(libc::EMFILE) => format!("open files per process ({})", nofile_text()),
        #[cfg(unix)]
        Some(libc::ENFILE) => "open files system-wide (fs.file-max)".to_string(),
        #[cfg(unix)]
        Some(libc::ENOMEM) | Some(libc::ENOBUFS) => "kernel memory for sockets".to_string(),
        _ => format!("a refused link ({e})"),
    }
}

/// Names the limit behind a refused thread: the OS says only EAGAIN, so compare the
/// counts that could have run out with their ceilings.
pub fn diagnose_spawn_error(e: &io::Error) -> String {
    if e.raw_os_error().is_none() {
        return e.to_string();
    }
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::EMFILE) {
        return diagnose_link_error(e);
    }
    let near = |used: u64, max: u64| used + 64 >= max;
    let l = harness::machine::Limits::current();
    if let Some((room, max)) = cgroup_pids_headroom()
        && room < 64
    {
        return format!("pids.max = {max} of this cgroup");
    }
    if let (Some(used), Some(max)) = (system_threads(), l.threads_max)
        && near(used, max)
    {
        return format!("kernel.threads-max = {max}");
    }
    if let (Some(used), Some(max)) = (system_threads(), l.pid_max)
        && near(used, max)
    {
        return format!("kernel.pid_max = {max}");
    }
    if let (Some(own), Some(max)) = (own_mappings(), l.max_map_count)
        && near(own, max)
    {
        return format!("vm.max_map_count = {max}");
    }
    if let (Some(max), Some(used)) = (nproc_soft(), user_threads())
        && near(used, max)
    {
        return format!("processes and threads per user (RLIMIT_NPROC = {max})");
    }
    "memory for thread stacks (the OS refused a thread)".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_here_never_name_a_cgroup_folder() {
        let (_, why) = thread_guard();
        assert!(!why.contains("/sys/fs/cgroup"), "{why}");
        let (budget, why) = memory_budget();
        assert!(budget > 0 && budget <= 1 << 30);
        assert!(!why.contains('/'), "{why}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_user_has_at_least_this_thread() {
        assert!(user_threads().unwrap() >= 1);
        assert!(system_threads().unwrap() >= 1);
    }

    #[test]
    fn usage_differences_are_per_hop() {
        let u = Usage {
            cpu_ns: 30.0,
            user_ns: 10.0,
            system_ns: 20.0,
            voluntary_switches: 4.0,
            involuntary_switches: 2.0,
            run_delay_ns: Some(8.0),
            ..Usage::default()
        };
        assert_eq!(u.per(2.0).system_ns, 10.0);
        assert_eq!(u.per(2.0).run_delay_ns, Some(4.0));
    }
}
