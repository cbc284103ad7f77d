//! Noise sensors: how disturbed each round was. On a shared or virtual machine most of
//! the variance between rebuilds comes from outside the measured code — the hypervisor
//! taking the CPU away (steal time), other processes wanting the CPU, the scheduler
//! moving our threads. Each round records what the OS lets us read of that; what it
//! does not expose is `None` and shown as "not readable".
//!
//! Linux: `/proc/stat` (steal, all CPUs' busy time), the states of other processes'
//! threads (`/proc/<pid>/stat`), the worker's resource usage (involuntary context
//! switches) and a software perf counter for CPU migrations. Elsewhere: the resource
//! usage where `getrusage` exists (on Windows, nothing yet), and the `/proc` sensors
//! are `None`, even where Wine shows the Linux host's `/proc` to a Windows build.
//!
//! None of those sees the host run this virtual machine slower for a minute (a busy
//! sibling hyperthread, a costlier path into the kernel). So before every round the
//! parent also times the cheapest system call there is ([`syscall_probe_ns`]): the
//! same work every time, so a change in it is the machine's, not the code's.

use serde::{Deserialize, Serialize};

/// A round is called disturbed above this share of stolen CPU time …
pub const STEAL_DISTURBED: f64 = 0.02;
/// … or when other processes kept, on average, this many cores busy …
pub const OTHERS_BUSY_DISTURBED: f64 = 0.5;
/// … or had, on average, this many runnable threads besides ours.
pub const OTHERS_RUNNABLE_DISTURBED: f64 = 1.0;

/// What the sensors saw during one round.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Noise {
    /// Share of all CPU time the hypervisor gave to other guests (0.01 = 1 %).
    pub steal: Option<f64>,
    /// CPU time used by everything except this measurement, in cores (0.5 = half a
    /// core busy on average).
    pub others_busy: Option<f64>,
    /// Running or runnable threads of other processes (neither the measured process
    /// nor the one watching it; [`others_runnable_now`]), averaged over the samples
    /// taken during the round; `None` where other processes could not be seen.
    pub others_runnable: Option<f64>,
    /// Times the measured process was preempted.
    pub involuntary_switches: Option<u64>,
    /// Times the measured process's threads moved to another CPU.
    pub migrations: Option<u64>,
    /// CPU time of the measured process (user + system), seconds.
    pub cpu_s: Option<f64>,
    /// Peak resident memory of the measured process, bytes.
    pub max_rss_bytes: Option<u64>,
    /// What one `getppid` system call took just before the round, in nanoseconds
    /// ([`syscall_probe_ns`]): the machine's own speed at entering the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscall_ns: Option<f64>,
    /// The watcher's own samples of the other processes during the round ([`Watch`]):
    /// how many, their time in all and the longest, in nanoseconds. Each runs on one CPU
    /// while the round does (the sixth review: a burst no sensor showed, its CPU being
    /// taken out of "other processes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchCost>,
    pub wall_s: f64,
}

/// What the watcher's sampling cost during one round.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct WatchCost {
    pub samples: u64,
    pub total_ns: f64,
    pub longest_ns: f64,
}

impl Noise {
    /// Why this round counts as disturbed, if it does.
    pub fn disturbance(&self) -> Option<String> {
        let mut why = Vec::new();
        if let Some(s) = self.steal.filter(|s| *s > STEAL_DISTURBED) {
            why.push(format!("steal {:.1} %", s * 100.0));
        }
        if let Some(b) = self.others_busy.filter(|b| *b > OTHERS_BUSY_DISTURBED) {
            why.push(format!("other processes busy on {b:.1} cores"));
        }
        if let Some(r) = self
            .others_runnable
            .filter(|r| *r >= OTHERS_RUNNABLE_DISTURBED)
        {
            why.push(format!("{r:.1} other runnable threads"));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}

/// The system-wide counters of `/proc/stat` that the sensors difference.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemTimes {
    /// Busy time of all CPUs (user, nice, system, irq, softirq), seconds.
    busy_s: f64,
    steal_s: f64,
    total_s: f64,
}

/// Reads the first line of `/proc/stat` (Linux builds only, as every `procfs` reader).
pub fn system_times() -> Option<SystemTimes> {
    let text = crate::procfs::read("/proc/stat")?;
    parse_system_times(&text, clock_ticks()?)
}

fn parse_system_times(stat: &str, ticks_per_s: f64) -> Option<SystemTimes> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    let get = |i: usize| v.get(i).copied().unwrap_or(0.0) / ticks_per_s;
    // user nice system idle iowait irq softirq steal (guest is inside user)
    let busy_s = get(0) + get(1) + get(2) + get(5) + get(6);
    let total_s = (0..8).map(get).sum();
    Some(SystemTimes {
        busy_s,
        steal_s: get(7),
        total_s,
    })
}

#[cfg(unix)]
fn clock_ticks() -> Option<f64> {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (t > 0).then_some(t as f64)
}

#[cfg(not(unix))]
fn clock_ticks() -> Option<f64> {
    None
}

/// Running or runnable threads (state `R`) of every process on the machine except
/// `ours` and their children, now. Each process's `stat` gives its state; only a
/// process with more than one thread has its threads' `stat` files read, and ours are
/// never read, so a sample costs the same however many threads the measurement has.
///
/// Not `procs_running` less our runnable threads: since Linux 6.12 a thread that has
/// just gone to sleep may stay on its run queue a while (the EEVDF scheduler's delayed
/// dequeue), and `procs_running` counts it. While 500 threads woke and slept every
/// 10 ms, a 6.18 kernel's `procs_running` read 129 to 169 with 7 or 8 threads in state
/// `R` on the whole machine: hundreds of runnable threads that no thread's state shows
/// as ours, which were counted as other processes'.
///
/// `None` where other processes cannot be seen: not Linux, or a `/proc` that hides
/// other users' processes (it does not show process 1).
pub fn others_runnable_now(ours: &[u32]) -> Option<u64> {
    // Linux builds only: a Windows build under Wine sees the host's `/proc` through
    // `Z:`, where its own process ids (Windows ones) name no process, so it counted
    // itself, and Wine's server, as other processes and every round was disturbed.
    if !cfg!(target_os = "linux") {
        return None;
    }
    others_runnable_in(std::path::Path::new("/proc"), ours)
}

fn others_runnable_in(proc_root: &std::path::Path, ours: &[u32]) -> Option<u64> {
    let mut runnable = 0;
    let mut sees_init = false;
    for entry in std::fs::read_dir(proc_root).ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if ours.contains(&pid) {
            continue;
        }
        // None: the process has just ended.
        let Some(stat) = crate::procfs::stat(entry.path().join("stat")) else {
            continue;
        };
        sees_init |= pid == 1;
        if ours.contains(&stat.ppid) {
            continue;
        }
        if stat.threads <= 1 {
            runnable += u64::from(stat.state == 'R');
            continue;
        }
        let Ok(tasks) = std::fs::read_dir(entry.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            runnable += u64::from(crate::procfs::state(t.path().join("stat")) == Some('R'));
        }
    }
    sees_init.then_some(runnable)
}

/// Resource usage of a process: CPU time, context switches, peak memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub cpu_s: f64,
    pub voluntary: u64,
    pub involuntary: u64,
    pub max_rss_bytes: u64,
}

#[cfg(unix)]
impl Usage {
    pub fn from_rusage(r: &libc::rusage) -> Usage {
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        // ru_maxrss is in kibibytes on Linux and in bytes on macOS.
        let rss_unit = if cfg!(target_os = "macos") { 1 } else { 1024 };
        Usage {
            cpu_s: tv(r.ru_utime) + tv(r.ru_stime),
            voluntary: r.ru_nvcsw as u64,
            involuntary: r.ru_nivcsw as u64,
            max_rss_bytes: r.ru_maxrss as u64 * rss_unit,
        }
    }

    /// This process's usage so far.
    pub fn of_self() -> Option<Usage> {
        // SAFETY: getrusage writes only into `r`.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        (unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) } == 0).then(|| Usage::from_rusage(&r))
    }
}

#[cfg(not(unix))]
impl Usage {
    pub fn of_self() -> Option<Usage> {
        None
    }
}

/// Counts the CPU migrations of this process's threads (Linux perf software counter,
/// inherited by threads created after it is opened). `None` where perf is not
/// readable (another OS, `perf_event_paranoid` too strict, a seccomp filter).
pub struct MigrationCounter {
    #[cfg(target_os = "linux")]
    fd: libc::c_int,
}

#[cfg(target_os = "linux")]
impl MigrationCounter {
    pub fn open() -> Option<MigrationCounter> {
        // struct perf_event_attr, first version (64 bytes): type, size, config, …,
        // then the flags word (bit 1: inherit).
        let mut attr = [0u64; 8];
        const PERF_TYPE_SOFTWARE: u64 = 1;
        const PERF_COUNT_SW_CPU_MIGRATIONS: u64 = 4;
        const SIZE_VER0: u64 = 64;
        const INHERIT: u64 = 1 << 1;
        attr[0] = PERF_TYPE_SOFTWARE | (SIZE_VER0 << 32); // type: u32, size: u32 (little endian)
        attr[1] = PERF_COUNT_SW_CPU_MIGRATIONS;
        attr[5] = INHERIT;
        if cfg!(target_endian = "big") {
            return None;
        }
        // SAFETY: the attribute buffer is 64 bytes as `size` says; pid 0 = this process,
        // cpu -1 = any, no group, no flags.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                attr.as_ptr(),
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                0 as libc::c_ulong,
            )
        };
        (fd >= 0).then_some(MigrationCounter {
            fd: fd as libc::c_int,
        })
    }

    pub fn read(&self) -> Option<u64> {
        let mut v = 0u64;
        // SAFETY: reads 8 bytes into `v` from our own perf fd.
        let n = unsafe { libc::read(self.fd, (&mut v as *mut u64).cast(), 8) };
        (n == 8).then_some(v)
    }
}

#[cfg(target_os = "linux")]
impl Drop for MigrationCounter {
    fn drop(&mut self) {
        // SAFETY: the fd is ours and closed once.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(not(target_os = "linux"))]
impl MigrationCounter {
    pub fn open() -> Option<MigrationCounter> {
        None
    }
    pub fn read(&self) -> Option<u64> {
        None
    }
}

/// Batches of calls [`syscall_probe_ns`] times, and calls per batch: 1,024 calls,
/// about a quarter of a millisecond where a call takes 250 ns.
#[cfg(unix)]
const PROBE_BATCHES: usize = 16;
#[cfg(unix)]
const PROBE_CALLS: u32 = 64;

/// The machine's speed at entering the kernel: the time of one `getppid` system call
/// (no work inside the kernel, nothing cached by the C library), as the median over
/// 16 batches of 64 calls of each batch's mean, in nanoseconds. The same work every
/// time, so when it changes between rounds or between runs, the machine changed: a
/// host running this virtual machine slower moves it, and every figure that makes
/// system calls moves with it. `None` where there is no such call (not Unix).
pub fn syscall_probe_ns() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut batches = [0.0f64; PROBE_BATCHES];
        for b in &mut batches {
            let t0 = std::time::Instant::now();
            for _ in 0..PROBE_CALLS {
                // SAFETY: getppid takes nothing and cannot fail.
                std::hint::black_box(unsafe { libc::getppid() });
            }
            *b = t0.elapsed().as_nanos() as f64 / f64::from(PROBE_CALLS);
        }
        batches.sort_by(f64::total_cmp);
        Some(crate::stats::median_sorted(&batches))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The machine's speed over a set of rounds: the median of their probes
/// ([`Noise::syscall_ns`]) with its interval. Rounds without a probe are left out.
/// The rounds may come from several experiments, so their order is not the order in
/// time: they are pooled ([`crate::stats::Estimate::of`]), not judged for drift.
pub fn syscall_estimate<'a>(
    noise: impl IntoIterator<Item = &'a Noise>,
) -> Option<crate::stats::Estimate> {
    let probes: Vec<f64> = noise.into_iter().filter_map(|n| n.syscall_ns).collect();
    crate::stats::Estimate::of(&probes)
}

/// Watches one round from outside the measured code: the machine's speed
/// ([`syscall_probe_ns`]) and the system counters at the start, samples of the other
/// processes' runnable threads during, and the difference at the end.
pub struct Watch {
    start: Option<SystemTimes>,
    started: std::time::Instant,
    runnable: Vec<f64>,
    /// No sample before this: each waits [`SAMPLE_SPACING`] times what the last took.
    next_sample: std::time::Instant,
    syscall_ns: Option<f64>,
    cost: WatchCost,
}

/// A sample of the other processes' runnable threads is followed by at least this many
/// times its own duration without one, so that on a machine with many threads the
/// watcher stays under 1 % of a CPU.
pub const SAMPLE_SPACING: u32 = 100;

impl Watch {
    pub fn start() -> Watch {
        // Before the round's counters start: the probe is ours, not the round's.
        let syscall_ns = syscall_probe_ns();
        Watch {
            syscall_ns,
            start: system_times(),
            started: std::time::Instant::now(),
            runnable: Vec::new(),
            next_sample: std::time::Instant::now(),
            cost: WatchCost::default(),
        }
    }

    /// One sample of the other processes' runnable threads while the measured one
    /// runs ([`others_runnable_now`]): `ours` are the processes that are not "other"
    /// (the worker and this process, whose sampling thread is running too). Only such
    /// samples count: a sample taken around the start or the end of a process also
    /// sees its creation and its reaping, which are ours. Skipped while the last
    /// sample's spacing ([`SAMPLE_SPACING`]) lasts.
    pub fn sample(&mut self, ours: &[u32]) {
        let t0 = std::time::Instant::now();
        if t0 < self.next_sample {
            return;
        }
        if let Some(n) = others_runnable_now(ours) {
            self.runnable.push(n as f64);
        }
        let took = t0.elapsed();
        let ns = took.as_nanos() as f64;
        self.cost.samples += 1;
        self.cost.total_ns += ns;
        self.cost.longest_ns = self.cost.longest_ns.max(ns);
        self.next_sample = std::time::Instant::now() + took * SAMPLE_SPACING;
    }

    /// The round's noise, given the measured process's usage during the round (and the
    /// watcher's own CPU time, which is not "other processes").
    pub fn finish(self, measured: Option<Usage>, own_cpu_s: f64, migrations: Option<u64>) -> Noise {
        let wall_s = self.started.elapsed().as_secs_f64();
        let end = system_times();
        let (steal, others_busy) = match (self.start, end) {
            // A round shorter than a clock tick may see no change at all: nothing was
            // counted at the counters' resolution, which reads as zero.
            (Some(a), Some(b)) => {
                let total = b.total_s - a.total_s;
                let steal = if total > 0.0 {
                    (b.steal_s - a.steal_s) / total
                } else {
                    0.0
                };
                let others = measured.map(|m| {
                    let busy = (b.busy_s - a.busy_s) - m.cpu_s - own_cpu_s;
                    (busy / wall_s.max(1e-9)).max(0.0)
                });
                (Some(steal.clamp(0.0, 1.0)), others)
            }
            _ => (None, None),
        };
        let others_runnable = (!self.runnable.is_empty())
            .then(|| self.runnable.iter().sum::<f64>() / self.runnable.len() as f64);
        Noise {
            steal,
            others_busy,
            others_runnable,
            involuntary_switches: measured.map(|m| m.involuntary),
            migrations,
            cpu_s: measured.map(|m| m.cpu_s),
            max_rss_bytes: measured.map(|m| m.max_rss_bytes).filter(|b| *b > 0),
            syscall_ns: self.syscall_ns,
            watch: (self.cost.samples > 0).then_some(self.cost),
            wall_s,
        }
    }
}

/// The usage of `b` since `a`, for in-process rounds (peak memory is the latest peak).
pub fn usage_since(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    let (a, b) = (a?, b?);
    Some(Usage {
        cpu_s: (b.cpu_s - a.cpu_s).max(0.0),
        voluntary: b.voluntary.saturating_sub(a.voluntary),
        involuntary: b.involuntary.saturating_sub(a.involuntary),
        max_rss_bytes: b.max_rss_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_stat() {
        let stat = "cpu  100 0 50 800 10 5 5 40 0 0\ncpu0 1 2 3\nprocs_running 3\n";
        let t = parse_system_times(stat, 100.0).unwrap();
        assert!((t.busy_s - 1.6).abs() < 1e-12);
        assert!((t.steal_s - 0.4).abs() < 1e-12);
        assert!((t.total_s - 10.1).abs() < 1e-12);
        assert!(parse_system_times("nothing", 100.0).is_none());
    }

    #[test]
    fn disturbance_is_named() {
        let quiet = Noise {
            steal: Some(0.001),
            others_busy: Some(0.1),
            others_runnable: Some(0.2),
            ..Noise::default()
        };
        assert_eq!(quiet.disturbance(), None);
        let busy = Noise {
            steal: Some(0.05),
            others_busy: Some(1.2),
            ..Noise::default()
        };
        let why = busy.disturbance().unwrap();
        assert!(
            why.contains("steal 5.0 %") && why.contains("1.2 cores"),
            "{why}"
        );
        assert_eq!(Noise::default().disturbance(), None);
    }

    /// A `/proc` of four processes: 1 (running, one thread), 7 (ours, running),
    /// 8 (sleeping, three threads, two of them runnable), 9 (a child of ours, running).
    /// Linux builds only read such files (`procfs`).
    #[cfg(target_os = "linux")]
    #[test]
    fn other_runnable_threads_leave_ours_and_our_childrens_out() {
        let root = std::env::temp_dir().join(format!("cow-proc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let stat = |pid: u32, state: char, ppid: u32, threads: u32| {
            format!(
                "{pid} (p{pid}) {state} {ppid} 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 {threads} 0 100 1 1"
            )
        };
        let write = |path: &str, text: String| {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("1/stat", stat(1, 'R', 0, 1));
        write("7/stat", stat(7, 'R', 1, 1));
        write("8/stat", stat(8, 'S', 1, 3));
        for (tid, state) in [(8, 'S'), (80, 'R'), (81, 'R')] {
            write(&format!("8/task/{tid}/stat"), stat(tid, state, 1, 3));
        }
        write("9/stat", stat(9, 'R', 7, 1));
        write("stat", "cpu  1 2 3".into());
        assert_eq!(others_runnable_in(&root, &[7]), Some(3));
        assert_eq!(others_runnable_in(&root, &[7, 8]), Some(1));
        // Without process 1 in sight, other users' processes may be hidden: unknown.
        std::fs::remove_dir_all(root.join("1")).unwrap();
        assert_eq!(others_runnable_in(&root, &[7]), None);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn sensors_read_this_machine() {
        assert!(system_times().is_some());
        // Other processes are seen (process 1 at least); this one is never counted.
        assert!(others_runnable_now(&[std::process::id()]).is_some());
        let w = Watch::start();
        let t0 = std::time::Instant::now();
        while t0.elapsed() < std::time::Duration::from_millis(30) {
            std::hint::spin_loop();
        }
        let n = w.finish(
            Usage::of_self(),
            0.0,
            MigrationCounter::open().and_then(|c| c.read()),
        );
        assert!(n.steal.is_some() && n.others_busy.is_some() && n.wall_s > 0.0);
        // A system call takes more than nothing and less than a millisecond.
        let probe = n.syscall_ns.unwrap();
        assert!(probe > 0.0 && probe < 1e6, "{probe}");
    }
}
