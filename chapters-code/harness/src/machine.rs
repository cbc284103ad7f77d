//! What machine a number was measured on, and the operating-system limits that the
//! experiments can run into. Everything is read live; nothing is assumed.

use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

/// The machine description stored with every result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    pub cpu: String,
    pub logical_cpus: usize,
    pub virtualised: Option<bool>,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub rustc: String,
    /// `release` or `debug`: a debug build's timings are not comparable.
    pub build: String,
}

impl Machine {
    pub fn current() -> Machine {
        Machine {
            cpu: cpu_model(),
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            virtualised: virtualised(),
            os: os_name(),
            kernel: kernel_release(),
            arch: std::env::consts::ARCH.into(),
            rustc: env!("COW_RUSTC")
                .split(" (")
                .next()
                .unwrap_or("rustc")
                .to_string(),
            build: if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
        }
    }

    pub fn cpu_line(&self) -> String {
        let virt = match self.virtualised {
            Some(true) => ", virtual machine",
            _ => "",
        };
        format!("{} ({} logical CPUs{virt})", self.cpu, self.logical_cpus)
    }

    pub fn os_line(&self) -> String {
        if self.kernel.is_empty() {
            self.os.clone()
        } else {
            format!("{}, kernel {}", self.os, self.kernel)
        }
    }
}

use crate::procfs::{read as read_trim, read_u64};

fn command_output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn cpu_model() -> String {
    if let Some(info) = read_trim("/proc/cpuinfo") {
        for key in ["model name", "Hardware", "Processor", "cpu model"] {
            if let Some(v) = info
                .lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_once(':'))
            {
                return v.1.trim().to_string();
            }
        }
    }
    if cfg!(target_os = "macos")
        && let Some(s) = command_output("sysctl", &["-n", "machdep.cpu.brand_string"])
    {
        return s;
    }
    if let Ok(s) = std::env::var("PROCESSOR_IDENTIFIER") {
        return s;
    }
    "unknown CPU".into()
}

fn virtualised() -> Option<bool> {
    let info = read_trim("/proc/cpuinfo")?;
    let flags = info.lines().find(|l| l.starts_with("flags"))?;
    Some(flags.split_whitespace().any(|f| f == "hypervisor"))
}

fn os_name() -> String {
    if let Some(release) = read_trim("/etc/os-release")
        && let Some(name) = release.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))
    {
        return name.trim_matches('"').to_string();
    }
    if cfg!(target_os = "macos")
        && let Some(v) = command_output("sw_vers", &["-productVersion"])
    {
        return format!("macOS {v}");
    }
    std::env::consts::OS.to_string()
}

fn kernel_release() -> String {
    if let Some(r) = read_trim("/proc/sys/kernel/osrelease") {
        return r;
    }
    #[cfg(unix)]
    if let Some(r) = command_output("uname", &["-r"]) {
        return r;
    }
    String::new()
}

/// One fact about the machine for the "Your machine" page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fact {
    pub name: String,
    pub value: Option<String>,
    pub why: String,
}

fn fact(name: &str, value: Option<String>, why: &str) -> Fact {
    Fact {
        name: name.into(),
        value,
        why: why.into(),
    }
}

/// The limits that stop experiments which create many threads, file descriptors or
/// mappings. `None` means "not readable here" (another OS, or no such file).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Limits {
    pub open_files_soft: Option<u64>,
    pub open_files_hard: Option<u64>,
    pub processes_soft: Option<u64>,
    pub cgroup_pids_max: Option<u64>,
    pub cgroup_memory_max: Option<u64>,
    pub max_map_count: Option<u64>,
    pub pid_max: Option<u64>,
    pub threads_max: Option<u64>,
    pub memory_total: Option<u64>,
    pub stack_size_soft: Option<u64>,
}

/// `getrlimit` for one resource as (soft, hard); `None` for unlimited or unreadable.
/// A macro because the resource constants have a different type on each libc.
#[cfg(unix)]
macro_rules! rlimit {
    ($resource:expr) => {{
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes into the struct we pass.
        if unsafe { libc::getrlimit($resource, &mut r) } == 0 {
            let v = |x: libc::rlim_t| (x != libc::RLIM_INFINITY).then_some(x as u64);
            (v(r.rlim_cur), v(r.rlim_max))
        } else {
            (None, None)
        }
    }};
}

/// This process's cgroup folders for `controller` (cgroup v2's unified one, or the v1
/// controller's), each followed by its ancestors up to the hierarchy's root: a limit
/// set on an ancestor applies to its descendants too.
fn cgroup_dirs(controller: &str) -> Vec<PathBuf> {
    let Some(cgroups) = read_trim("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let root = if ctrls.is_empty() {
            PathBuf::from("/sys/fs/cgroup")
        } else if ctrls.split(',').any(|c| c == controller) {
            PathBuf::from("/sys/fs/cgroup").join(controller)
        } else {
            continue;
        };
        let mut d = root.join(path.trim_start_matches('/'));
        loop {
            out.push(d.clone());
            if d == root || !d.pop() || !d.starts_with(&root) {
                break;
            }
        }
    }
    out
}

/// The smallest `limit − used` over this process's cgroup and its ancestors, with that
/// limit; "max" (and v1's near-2⁶³ "unlimited") is no limit.
fn cgroup_headroom(controller: &str, pairs: &[(&str, &str)]) -> Option<(u64, u64)> {
    let mut best: Option<(u64, u64)> = None;
    for dir in cgroup_dirs(controller) {
        for (max_file, used_file) in pairs {
            let read = |f: &str| read_u64(dir.join(f));
            let (Some(max), Some(used)) = (read(max_file), read(used_file)) else {
                continue;
            };
            if max >= 1 << 60 {
                continue;
            }
            let room = max.saturating_sub(used);
            if best.is_none_or(|b| room < b.0) {
                best = Some((room, max));
            }
        }
    }
    best
}

/// A limit as the page words it: a value, or why there is none to show. The words are
/// the book's (the "Your machine" page uses the same).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LimitValue {
    Value(u64),
    /// The file reads `max` (or cgroup v1's near-2⁶³ "no limit"), or the rlimit is
    /// infinite.
    Unlimited,
    /// There is no such cgroup file: no controller, or no limit set at any level.
    NotSet,
    /// The file exists but reading or parsing it failed.
    #[default]
    NotReadable,
}

impl LimitValue {
    pub fn value(self) -> Option<u64> {
        match self {
            LimitValue::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The cell for a limits table: `20,000`, `unlimited`, `no limit set`, `not readable`.
    pub fn words(self) -> String {
        match self {
            LimitValue::Value(v) => crate::fmt::fmt_count(v),
            LimitValue::Unlimited => "unlimited".into(),
            LimitValue::NotSet => "no limit set".into(),
            LimitValue::NotReadable => "not readable".into(),
        }
    }
}

/// One cgroup limit file read as [`LimitValue`].
fn cgroup_limit_file(path: &std::path::Path) -> LimitValue {
    match std::fs::read_to_string(path) {
        Ok(s) if s.trim() == "max" => LimitValue::Unlimited,
        Ok(s) => match s.trim().parse::<u64>() {
            Ok(v) if v >= 1 << 60 => LimitValue::Unlimited,
            Ok(v) => LimitValue::Value(v),
            Err(_) => LimitValue::NotReadable,
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => LimitValue::NotSet,
        Err(_) => LimitValue::NotReadable,
    }
}

/// What several levels of limits add up to: the smallest value if any level has one;
/// else `unlimited` if a level says so; else `not readable` if a level could not be
/// read; else `no limit set`.
pub fn combine_limits(levels: impl IntoIterator<Item = LimitValue>) -> LimitValue {
    let levels: Vec<LimitValue> = levels.into_iter().collect();
    if let Some(v) = levels.iter().filter_map(|l| l.value()).min() {
        return LimitValue::Value(v);
    }
    [LimitValue::Unlimited, LimitValue::NotReadable]
        .into_iter()
        .find(|w| levels.contains(w))
        .unwrap_or(LimitValue::NotSet)
}

/// A cgroup limit over this process's cgroup and its ancestors (a parent's limit
/// applies to its descendants), combined as in [`combine_limits`]: the first of
/// `files` that a level has is read there (v2's name, then v1's).
pub fn cgroup_limit(controller: &str, files: &[&str]) -> LimitValue {
    #[cfg(target_os = "linux")]
    if read_trim("/proc/self/cgroup").is_none() {
        return LimitValue::NotReadable;
    }
    combine_limits(cgroup_dirs(controller).iter().map(|d| {
        files
            .iter()
            .map(|f| cgroup_limit_file(&d.join(f)))
            .find(|v| *v != LimitValue::NotSet)
            .unwrap_or(LimitValue::NotSet)
    }))
}
/// Process ids this cgroup (or an ancestor) still allows, with its `pids.max`.
pub fn cgroup_pids_headroom() -> Option<(u64, u64)> {
    cgroup_headroom("pids", &[("pids.max", "pids.current")])
}

/// Memory this cgroup (or an ancestor) still allows, with its limit: `memory.max −
/// memory.current` (v2) or `memory.limit_in_bytes − memory.usage_in_bytes` (v1).
pub fn cgroup_memory_headroom() -> Option<(u64, u64)> {
    cgroup_headroom(
        "memory",
        &[
            ("memory.max", "memory.current"),
            ("memory.limit_in_bytes", "memory.usage_in_bytes"),
        ],
    )
}

impl Limits {
    pub fn current() -> Limits {
        #[allow(unused_mut)]
        let mut l = Limits {
            cgroup_pids_max: cgroup_limit("pids", &["pids.max"]).value(),
            cgroup_memory_max: cgroup_limit("memory", &["memory.max", "memory.limit_in_bytes"])
                .value(),
            max_map_count: read_u64("/proc/sys/vm/max_map_count"),
            pid_max: read_u64("/proc/sys/kernel/pid_max"),
            threads_max: read_u64("/proc/sys/kernel/threads-max"),
            memory_total: read_trim("/proc/meminfo").and_then(|m| {
                m.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                    .map(|kb| kb * 1024)
            }),
            ..Limits::default()
        };
        #[cfg(unix)]
        {
            (l.open_files_soft, l.open_files_hard) = rlimit!(libc::RLIMIT_NOFILE);
            l.processes_soft = rlimit!(libc::RLIMIT_NPROC).0;
            l.stack_size_soft = rlimit!(libc::RLIMIT_STACK).0;
        }
        l
    }
}

/// Raises the soft open-file limit to the hard limit for this process and returns the
/// new soft limit (experiments with many sockets need it). `None` where unsupported.
#[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
pub fn raise_fd_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: plain libc calls on a struct we own.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
                return None;
            }
            // macOS refuses anything above OPEN_MAX (10,240) even when the hard limit
            // says "unlimited", so fall back to that.
            for want in [r.rlim_max, r.rlim_max.min(10_240)] {
                if r.rlim_cur >= want {
                    break;
                }
                let n = libc::rlimit {
                    rlim_cur: want,
                    rlim_max: r.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &n) == 0 {
                    r.rlim_cur = want;
                    break;
                }
            }
        }
        Some(r.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Resident set size of this process in bytes, where the OS tells it.
pub fn resident_bytes() -> Option<u64> {
    let status = read_trim("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Everything the "Your machine" page shows, read now.
pub fn facts() -> Vec<Fact> {
    let m = Machine::current();
    let l = Limits::current();
    let num = |v: Option<u64>| v.map(crate::fmt::fmt_count);
    let bytes = |v: Option<u64>| v.map(|b| crate::fmt::fmt_bytes(b as f64));
    let governor = read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    vec![
        fact(
            "CPU",
            Some(m.cpu.clone()),
            "the processor every number on these pages ran on",
        ),
        fact(
            "logical CPUs",
            Some(m.logical_cpus.to_string()),
            "how many threads can run at once; spinning costs one each",
        ),
        fact(
            "virtual machine",
            m.virtualised
                .map(|v| if v { "yes" } else { "no" }.to_string()),
            "a hypervisor adds its own scheduling to every wake-up",
        ),
        fact("operating system", Some(m.os.clone()), ""),
        fact(
            "kernel",
            Some(m.kernel.clone()).filter(|k| !k.is_empty()),
            "",
        ),
        fact("architecture", Some(m.arch.clone()), ""),
        fact(
            "compiler",
            Some(m.rustc.clone()),
            "the rustc that built the measuring code",
        ),
        fact(
            "clock source",
            read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            "what `Instant::now()` reads underneath; `tsc` is cheapest",
        ),
        fact(
            "timer slack",
            read_u64("/proc/self/timerslack_ns").map(|ns| crate::fmt::fmt_ns(ns as f64)),
            "how late Linux may fire a sleeping thread's timer to batch wake-ups",
        ),
        fact(
            "CPU frequency governor",
            governor,
            "`powersave` lets an idle core slow down, which a wake-up then pays for",
        ),
        fact("memory", bytes(l.memory_total), ""),
        fact(
            "open files (soft / hard)",
            match (l.open_files_soft, l.open_files_hard) {
                (None, None) => None,
                (s, h) => Some(format!(
                    "{} / {}",
                    num(s).unwrap_or_else(|| "unlimited".into()),
                    num(h).unwrap_or_else(|| "unlimited".into())
                )),
            },
            "each socket pair costs two; the experiments raise soft to hard",
        ),
        fact(
            "processes per user",
            num(l.processes_soft),
            "threads count as processes for this limit",
        ),
        fact(
            "cgroup pids.max",
            Some(cgroup_limit("pids", &["pids.max"]).words()),
            "threads this cgroup (or a parent) may have in all",
        ),
        fact(
            "cgroup memory limit",
            Some(
                match cgroup_limit("memory", &["memory.max", "memory.limit_in_bytes"]) {
                    LimitValue::Value(b) => crate::fmt::fmt_bytes(b as f64),
                    other => other.words(),
                },
            ),
            "memory this cgroup (or a parent) may use in all",
        ),
        fact(
            "vm.max_map_count",
            num(l.max_map_count),
            "memory mappings per process; every thread stack takes two",
        ),
        fact(
            "kernel.pid_max",
            num(l.pid_max),
            "the largest thread or process id",
        ),
        fact(
            "kernel.threads-max",
            num(l.threads_max),
            "threads the whole system may have",
        ),
        fact(
            "default stack size (soft)",
            bytes(l.stack_size_soft),
            "the main thread's stack; Rust gives spawned threads 2 MiB unless told otherwise",
        ),
    ]
}

/// The CPU, OS and compiler of a machine, in one line.
pub fn machine_line(m: &Machine) -> String {
    format!("{} · {} · {}", m.cpu_line(), m.os_line(), m.rustc)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cgroup_limits_have_three_words_besides_a_value() {
        use LimitValue::*;
        assert_eq!(
            combine_limits([Unlimited, Value(10_813), NotSet]),
            Value(10_813)
        );
        assert_eq!(combine_limits([Unlimited, NotSet]), Unlimited);
        assert_eq!(combine_limits([NotReadable, NotSet]), NotReadable);
        assert_eq!(combine_limits([]), NotSet);
        assert_eq!(Unlimited.words(), "unlimited");
        assert_eq!(NotSet.words(), "no limit set");
        assert_eq!(NotReadable.words(), "not readable");
        assert_eq!(Value(32_768).words(), "32,768");
        let dir = std::env::temp_dir().join(format!("harness-cg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pids.max"), "max\n").unwrap();
        assert_eq!(cgroup_limit_file(&dir.join("pids.max")), Unlimited);
        std::fs::write(dir.join("pids.max"), "10813\n").unwrap();
        assert_eq!(cgroup_limit_file(&dir.join("pids.max")), Value(10_813));
        assert_eq!(cgroup_limit_file(&dir.join("nothing")), NotSet);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use super::*;

    #[test]
    fn machine_has_the_basics() {
        let m = Machine::current();
        assert!(m.logical_cpus >= 1);
        assert!(!m.cpu.is_empty());
        assert!(m.rustc.starts_with("rustc"));
        assert!(m.build == "debug" || m.build == "release");
    }

    #[test]
    fn limits_are_read_on_linux() {
        let l = Limits::current();
        if cfg!(target_os = "linux") {
            assert!(l.open_files_soft.is_some() || l.open_files_hard.is_none());
            assert!(l.pid_max.is_some());
            assert!(resident_bytes().unwrap() > 0);
        }
        assert!(facts().len() > 10);
    }
}
