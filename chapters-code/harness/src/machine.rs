//! What machine a number was measured on, and the operating-system limits that the
//! experiments can run into. Everything is read live; nothing is assumed.

use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

/// The operating system a build was made for: Rust's `std::env::consts::OS`, in the
/// families the book tells apart. Typed, so that which OS a record comes from never
/// hangs on how its machine describes itself: a Windows build that Wine runs on Linux
/// once described itself as the Debian host it read through Wine's `Z:` drive.
/// Stored by name (`"windows"`); a name not listed here is refused when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetOs {
    Linux,
    Macos,
    Windows,
    /// FreeBSD, OpenBSD, NetBSD, DragonFly.
    Bsd,
    /// Any other target (`std::env::consts::OS` names it).
    Other,
}

impl TargetOs {
    /// The OS this build was made for.
    pub fn this_build() -> TargetOs {
        TargetOs::from_rust(std::env::consts::OS)
    }

    /// The family of one of Rust's names for an OS (`std::env::consts::OS`).
    pub fn from_rust(os: &str) -> TargetOs {
        match os {
            "linux" | "android" => TargetOs::Linux,
            "macos" => TargetOs::Macos,
            "windows" => TargetOs::Windows,
            "freebsd" | "openbsd" | "netbsd" | "dragonfly" => TargetOs::Bsd,
            _ => TargetOs::Other,
        }
    }

    /// The family a machine's own description names, for records older than the typed
    /// field (`/etc/os-release`'s name, `macOS 14.5`, Rust's `windows`): `windows`,
    /// `macos`, `bsd`, else Linux, as the book read them before.
    pub fn from_description(os: &str) -> TargetOs {
        let os = os.to_ascii_lowercase();
        if os.contains("windows") {
            TargetOs::Windows
        } else if ["macos", "mac os", "os x", "darwin"]
            .iter()
            .any(|m| os.contains(m))
        {
            TargetOs::Macos
        } else if os.contains("bsd") {
            TargetOs::Bsd
        } else {
            TargetOs::Linux
        }
    }

    /// The stored name: `linux`, `macos`, `windows`, `bsd` or `other`.
    pub fn name(self) -> &'static str {
        match self {
            TargetOs::Linux => "linux",
            TargetOs::Macos => "macos",
            TargetOs::Windows => "windows",
            TargetOs::Bsd => "bsd",
            TargetOs::Other => "other",
        }
    }
}

/// The machine description stored with every result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    pub cpu: String,
    pub logical_cpus: usize,
    pub virtualised: Option<bool>,
    /// The OS the measuring build was made for; `None` in records written before it
    /// was stored, which [`Machine::target_os`] reads from `os` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_os: Option<TargetOs>,
    /// The machine's own description of its OS (free text).
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub rustc: String,
    /// `release` or `debug`: a debug build's timings are not comparable.
    pub build: String,
    /// The clock, the idle states, the preemption model and the hypervisor under the
    /// numbers; `None` in records written before they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub underneath: Option<Underneath>,
}

impl Machine {
    pub fn current() -> Machine {
        Machine {
            cpu: cpu_model(),
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            virtualised: virtualised(),
            target_os: Some(TargetOs::this_build()),
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
            underneath: Some(Underneath::current()),
        }
    }

    /// The OS the record's build was made for: the typed field, else (an older
    /// record) what the description names.
    pub fn target_os(&self) -> TargetOs {
        self.target_os
            .unwrap_or_else(|| TargetOs::from_description(&self.os))
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
    #[cfg(windows)]
    if let Some(s) = windows::cpu_name() {
        return s;
    }
    if cfg!(windows)
        && let Ok(s) = std::env::var("PROCESSOR_IDENTIFIER")
    {
        return s;
    }
    "unknown CPU".into()
}

/// Whether a hypervisor is underneath: Linux's `hypervisor` flag in `/proc/cpuinfo`;
/// elsewhere, on x86, the bit that flag shows (CPUID leaf 1, ECX bit 31).
fn virtualised() -> Option<bool> {
    if cfg!(target_os = "linux") {
        let info = read_trim("/proc/cpuinfo")?;
        let flags = info.lines().find(|l| l.starts_with("flags"))?;
        return Some(flags.split_whitespace().any(|f| f == "hypervisor"));
    }
    cpuid_hypervisor()
}

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "x86", target_feature = "sse")
))]
fn cpuid_hypervisor() -> Option<bool> {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::__cpuid;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::__cpuid;
    // SAFETY: CPUID exists on every CPU this is compiled for (as in `cpuid_cost`).
    #[allow(unused_unsafe)]
    let ecx = unsafe { __cpuid(1) }.ecx;
    Some((ecx >> 31) & 1 == 1)
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "x86", target_feature = "sse")
)))]
fn cpuid_hypervisor() -> Option<bool> {
    None
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
    #[cfg(windows)]
    if let Some(v) = windows::version() {
        return v;
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
    // Windows: its version (in `os`) is its kernel's.
    String::new()
}

/// How a Windows machine describes itself, from Windows: its version from
/// `RtlGetVersion` (which, unlike `GetVersionEx`, does not answer an unmanifested
/// program with Windows 8's), its CPU from the registry, and Wine when Wine runs it.
#[cfg(windows)]
mod windows {
    use std::ffi::c_void;

    #[repr(C)]
    struct OsVersionInfoW {
        size: u32,
        major: u32,
        minor: u32,
        build: u32,
        platform: u32,
        service_pack: [u16; 128],
    }

    #[link(name = "ntdll")]
    unsafe extern "system" {
        fn RtlGetVersion(info: *mut OsVersionInfoW) -> i32;
    }

    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetModuleHandleW(name: *const u16) -> *mut c_void;
        fn GetProcAddress(module: *mut c_void, name: *const u8) -> *mut c_void;
    }

    #[link(name = "advapi32")]
    unsafe extern "system" {
        fn RegGetValueW(
            key: isize,
            subkey: *const u16,
            value: *const u16,
            flags: u32,
            kind: *mut u32,
            data: *mut c_void,
            size: *mut u32,
        ) -> i32;
    }

    /// `HKEY_LOCAL_MACHINE`: `(HKEY)(LONG)0x80000002`, sign-extended.
    const HKEY_LOCAL_MACHINE: isize = 0x8000_0002_u32 as i32 as isize;
    const RRF_RT_REG_SZ: u32 = 0x2;

    fn wide(s: &str) -> Vec<u16> {
        s.encode_utf16().chain([0]).collect()
    }

    /// `Windows 10.0 (build 19045)`, and `, run by Wine 8.0` where Wine's `ntdll`
    /// exports `wine_get_version`.
    pub fn version() -> Option<String> {
        let mut v = OsVersionInfoW {
            size: std::mem::size_of::<OsVersionInfoW>() as u32,
            major: 0,
            minor: 0,
            build: 0,
            platform: 0,
            service_pack: [0; 128],
        };
        // SAFETY: the struct is OSVERSIONINFOW's layout, its size set as the call asks.
        if unsafe { RtlGetVersion(&mut v) } != 0 {
            return None;
        }
        let mut out = format!("Windows {}.{} (build {})", v.major, v.minor, v.build);
        if let Some(wine) = wine_version() {
            out.push_str(&format!(", run by Wine {wine}"));
        }
        Some(out)
    }

    /// Wine's version, where Wine runs this program.
    fn wine_version() -> Option<String> {
        let ntdll = wide("ntdll.dll");
        // SAFETY: a NUL-terminated name; ntdll is loaded in every Windows process.
        let module = unsafe { GetModuleHandleW(ntdll.as_ptr()) };
        if module.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated name; a null result means no such export.
        let f = unsafe { GetProcAddress(module, c"wine_get_version".as_ptr().cast()) };
        if f.is_null() {
            return None;
        }
        // SAFETY: Wine's `const char *wine_get_version(void)`, which returns a static,
        // NUL-terminated string.
        let get: unsafe extern "C" fn() -> *const std::ffi::c_char =
            unsafe { std::mem::transmute(f) };
        let p = unsafe { get() };
        if p.is_null() {
            return None;
        }
        // SAFETY: as above.
        let text = unsafe { std::ffi::CStr::from_ptr(p) };
        Some(text.to_string_lossy().trim().to_string()).filter(|s| !s.is_empty())
    }

    #[repr(C)]
    #[derive(Default)]
    struct ProcessMemoryCounters {
        size: u32,
        page_faults: u32,
        peak_working_set: usize,
        working_set: usize,
        quota_peak_paged_pool: usize,
        quota_paged_pool: usize,
        quota_peak_non_paged_pool: usize,
        quota_non_paged_pool: usize,
        pagefile: usize,
        peak_pagefile: usize,
    }

    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetCurrentProcess() -> *mut c_void;
        fn K32GetProcessMemoryInfo(
            process: *mut c_void,
            counters: *mut ProcessMemoryCounters,
            size: u32,
        ) -> i32;
    }

    /// This process's working set: the memory of it resident now, in bytes.
    pub fn working_set_bytes() -> Option<u64> {
        let mut c = ProcessMemoryCounters::default();
        let size = std::mem::size_of::<ProcessMemoryCounters>() as u32;
        c.size = size;
        // SAFETY: the struct is PROCESS_MEMORY_COUNTERS' layout, its size passed; the
        // current process's pseudo-handle needs no closing.
        let ok = unsafe { K32GetProcessMemoryInfo(GetCurrentProcess(), &mut c, size) };
        (ok != 0).then_some(c.working_set as u64)
    }

    /// The CPU's name as Windows keeps it: `ProcessorNameString` under
    /// `HKLM\HARDWARE\DESCRIPTION\System\CentralProcessor\0`.
    pub fn cpu_name() -> Option<String> {
        let key = wide(r"HARDWARE\DESCRIPTION\System\CentralProcessor\0");
        let value = wide("ProcessorNameString");
        let mut buf = [0u16; 256];
        let mut size = std::mem::size_of_val(&buf) as u32;
        // SAFETY: NUL-terminated names; `size` is the buffer's size in bytes, and the
        // call writes at most that many bytes, NUL included (RRF_RT_REG_SZ).
        let rc = unsafe {
            RegGetValueW(
                HKEY_LOCAL_MACHINE,
                key.as_ptr(),
                value.as_ptr(),
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                buf.as_mut_ptr().cast(),
                &mut size,
            )
        };
        if rc != 0 {
            return None;
        }
        let len = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        Some(String::from_utf16_lossy(&buf[..len]).trim().to_string()).filter(|s| !s.is_empty())
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

/// A limit: a value, or why there is none to show (the words for each are in
/// `machine_words.rs`, with the "Your machine" page's).
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
    // cgroups are Linux's, and `procfs` reads nothing elsewhere: "not readable" there,
    // never "no limit set".
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

/// Resident set size of this process in bytes, where the OS tells it: `VmRSS` on
/// Linux, the working set (`GetProcessMemoryInfo`) on Windows.
pub fn resident_bytes() -> Option<u64> {
    #[cfg(windows)]
    if let Some(b) = windows::working_set_bytes() {
        return Some(b);
    }
    let status = read_trim("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The CPU, OS and compiler of a machine, in one line.
pub fn machine_line(m: &Machine) -> String {
    format!("{} · {} · {}", m.cpu_line(), m.os_line(), m.rustc)
}

// ---------------------------------------------------------------------------------------
// Underneath: the clock, the idle states, the preemption model and the hypervisor.
// ---------------------------------------------------------------------------------------

/// What lies under every number: the clock that timestamps it, what an idle CPU does
/// (and so what a wake-up pays), how the kernel preempts, and what one exit to the
/// hypervisor costs. Read (and, for the clock and the exit, measured) live once per
/// process. Every field has a default, so a record from an older or newer harness
/// still reads.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Underneath {
    /// The OS that read it (`std::env::consts::OS`): the clock source, the idle states
    /// and the preemption model are read from Linux's files, and elsewhere are "not
    /// read on this OS".
    pub os: String,
    pub clock: Clock,
    pub idle: Idle,
    pub preemption: Option<Preemption>,
    /// A timed `CPUID`, on x86 only.
    pub cpuid: Option<CpuidCost>,
}

/// The clock under `Instant::now()` (`clock_gettime(CLOCK_MONOTONIC)` on Linux).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Clock {
    /// `current_clocksource`: `tsc`, `kvm-clock`, `hpet`, …
    pub source: Option<String>,
    /// `available_clocksource`, as listed.
    pub available: Option<String>,
    /// The smallest nonzero difference between two successive `Instant::now()`
    /// readings, in ns: the resolution as measured (never below one reading's cost).
    pub step_ns: Option<f64>,
    /// The typical cost of one reading, in ns ([`reading_cost`]).
    pub read_ns: Option<f64>,
    /// How many readings the loop took.
    pub reads: u64,
    /// `clock_getres(CLOCK_MONOTONIC)`, in ns: the resolution the kernel states.
    pub getres_ns: Option<f64>,
}

/// The cpuidle driver and its states, and the halt-poll windows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Idle {
    /// `cpuidle/current_driver`: `intel_idle`, `acpi_idle`, `haltpoll`, …
    pub driver: Option<String>,
    /// `cpuidle/current_governor` (or `current_governor_ro`): `menu`, `teo`, `haltpoll`, …
    pub governor: Option<String>,
    /// CPU 0's idle states, shallowest first.
    pub states: Vec<IdleState>,
    /// The haltpoll governor's parameters (`guest_halt_poll_ns`, `_grow`, `_shrink`,
    /// `_grow_start`, `_allow_shrink`) as (name, value), where the module exists.
    pub guest_halt_poll: Vec<(String, String)>,
    /// `/sys/module/kvm/parameters/halt_poll_ns`: the window of this kernel's own KVM,
    /// for guests it runs.
    pub kvm_halt_poll_ns: Option<u64>,
}

/// One cpuidle state.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct IdleState {
    pub name: String,
    /// The exit latency, in µs: the longest a wake-up from it takes.
    pub latency_us: Option<u64>,
    /// The target residency, in µs: the shortest idle time it pays off for.
    pub residency_us: Option<u64>,
    pub disabled: Option<bool>,
}

/// The kernel's preemption model and how it was learnt.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Preemption {
    /// `none`, `voluntary`, `full`, `lazy`, `real-time`, or words for what is known.
    pub model: String,
    /// Where it was read, in words.
    pub how: String,
}

/// The median time of one `CPUID` instruction. Under a hypervisor every `CPUID` traps
/// to it, so this is the cost of one exit and return; on bare metal it is only the
/// instruction.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CpuidCost {
    pub ns: f64,
    pub batches: u32,
    pub per_batch: u32,
    /// `CPUID` leaf 1's hypervisor bit (ECX bit 31): a hypervisor is there to exit to.
    pub hypervisor: bool,
}

impl Underneath {
    /// Read and measured once per process (about 10 ms at most), then copied.
    pub fn current() -> Underneath {
        static ONCE: std::sync::OnceLock<Underneath> = std::sync::OnceLock::new();
        ONCE.get_or_init(|| Underneath {
            os: std::env::consts::OS.into(),
            clock: Clock::current(),
            idle: Idle::current(),
            preemption: preemption_now(),
            cpuid: cpuid_cost(),
        })
        .clone()
    }

    /// Every text it holds, named, for the validation at the door.
    pub fn texts(&self) -> Vec<(&'static str, &str)> {
        let mut out = vec![("the machine's OS family", self.os.as_str())];
        for (what, s) in [
            ("the clock source", &self.clock.source),
            ("the clock sources", &self.clock.available),
            ("the cpuidle driver", &self.idle.driver),
            ("the cpuidle governor", &self.idle.governor),
        ] {
            out.extend(s.as_deref().map(|s| (what, s)));
        }
        out.extend(
            self.idle
                .states
                .iter()
                .map(|s| ("an idle state's name", s.name.as_str())),
        );
        for (k, v) in &self.idle.guest_halt_poll {
            out.push(("a halt-poll parameter's name", k));
            out.push(("a halt-poll parameter", v));
        }
        if let Some(p) = &self.preemption {
            out.push(("the preemption model", &p.model));
            out.push(("where the preemption model was read", &p.how));
        }
        out
    }

    /// The same texts, to be made safe before a record is stored.
    pub fn texts_mut(&mut self) -> Vec<&mut String> {
        let mut out = vec![&mut self.os];
        out.extend(self.clock.source.as_mut());
        out.extend(self.clock.available.as_mut());
        out.extend(self.idle.driver.as_mut());
        out.extend(self.idle.governor.as_mut());
        out.extend(self.idle.states.iter_mut().map(|s| &mut s.name));
        for (k, v) in &mut self.idle.guest_halt_poll {
            out.push(k);
            out.push(v);
        }
        if let Some(p) = &mut self.preemption {
            out.push(&mut p.model);
            out.push(&mut p.how);
        }
        out
    }

    /// Every number it holds, named, for the validation at the door.
    pub fn numbers(&self) -> Vec<(&'static str, f64)> {
        let c = &self.clock;
        let mut out: Vec<(&'static str, f64)> = [
            ("the clock's smallest step", c.step_ns),
            ("the clock's reading cost", c.read_ns),
            ("the clock's stated resolution", c.getres_ns),
        ]
        .into_iter()
        .filter_map(|(w, v)| v.map(|v| (w, v)))
        .collect();
        if let Some(x) = &self.cpuid {
            out.push(("the time of one CPUID", x.ns));
        }
        out
    }
}

/// The smallest nonzero difference between successive readings (in ns from any
/// origin), or `None` when no two differ.
pub fn smallest_step(readings: &[u64]) -> Option<u64> {
    readings
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .filter(|d| *d > 0)
        .min()
}

/// The typical cost of one reading. The gap between two successive readings is a whole
/// number of the clock's steps, so its median cannot tell a 15 ns read from a 20 ns step
/// (the sixth review). So the readings are cut into blocks of [`COST_BLOCK`]; a block's
/// time over its readings is not bound to the step, and the median over blocks is not
/// moved by an interruption of the loop. With fewer readings than two blocks, the median
/// gap where it is not zero, else the mean (a coarse clock: most readings share a tick).
pub fn reading_cost(readings: &[u64]) -> Option<f64> {
    let (first, last) = (*readings.first()?, *readings.last()?);
    if readings.len() < 2 {
        return None;
    }
    if readings.len() > 2 * COST_BLOCK {
        // Blocks share their ends: block i spans readings [i·B, (i+1)·B].
        let mut means: Vec<f64> = (0..(readings.len() - 1) / COST_BLOCK)
            .map(|i| {
                let (a, b) = (readings[i * COST_BLOCK], readings[(i + 1) * COST_BLOCK]);
                b.saturating_sub(a) as f64 / COST_BLOCK as f64
            })
            .collect();
        means.sort_by(f64::total_cmp);
        return Some(means[means.len() / 2]);
    }
    let mut gaps: Vec<u64> = readings
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    Some(if median > 0 {
        median as f64
    } else {
        last.saturating_sub(first) as f64 / gaps.len() as f64
    })
}

/// Readings per block in [`reading_cost`]: enough that a block spans many clock steps.
pub const COST_BLOCK: usize = 256;

impl Clock {
    fn current() -> Clock {
        const MAX_READS: usize = 20_000;
        const MAX_TIME: std::time::Duration = std::time::Duration::from_millis(5);
        let dir = "/sys/devices/system/clocksource/clocksource0";
        // Successive readings, kept first and compared afterwards so the loop is no
        // more than a reading and a store.
        let mut at: Vec<std::time::Instant> = Vec::with_capacity(MAX_READS);
        let start = std::time::Instant::now();
        at.push(start);
        while at.len() < MAX_READS {
            let now = std::time::Instant::now();
            at.push(now);
            if at.len().is_multiple_of(1024) && now - start > MAX_TIME {
                break;
            }
        }
        let ns: Vec<u64> = at
            .iter()
            .map(|t| t.duration_since(start).as_nanos() as u64)
            .collect();
        let reads = (ns.len() - 1) as u64;
        Clock {
            source: read_trim(format!("{dir}/current_clocksource")),
            available: read_trim(format!("{dir}/available_clocksource")),
            step_ns: smallest_step(&ns).map(|s| s as f64),
            read_ns: reading_cost(&ns),
            reads,
            getres_ns: clock_getres_ns(),
        }
    }
}

#[cfg(unix)]
fn clock_getres_ns() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres only writes into the timespec we pass.
    let rc = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64)
}

#[cfg(not(unix))]
fn clock_getres_ns() -> Option<f64> {
    None
}

impl Idle {
    fn current() -> Idle {
        let cpuidle = "/sys/devices/system/cpu/cpuidle";
        let mut guest_halt_poll = Vec::new();
        // Linux builds only, as every `procfs` reader (Wine shows a host's `/sys`).
        if cfg!(target_os = "linux")
            && let Ok(dir) = std::fs::read_dir("/sys/module/haltpoll/parameters")
        {
            for e in dir.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("guest_halt_poll")
                    && let Some(v) = read_trim(e.path())
                {
                    guest_halt_poll.push((name, v));
                }
            }
            guest_halt_poll.sort();
        }
        Idle {
            driver: read_trim(format!("{cpuidle}/current_driver")),
            governor: read_trim(format!("{cpuidle}/current_governor"))
                .or_else(|| read_trim(format!("{cpuidle}/current_governor_ro"))),
            states: idle_states(std::path::Path::new("/sys/devices/system/cpu/cpu0/cpuidle")),
            guest_halt_poll,
            kvm_halt_poll_ns: read_u64("/sys/module/kvm/parameters/halt_poll_ns"),
        }
    }
}

/// The idle states under a `cpuN/cpuidle` folder (`state0`, `state1`, … until one is
/// missing; at most 32).
pub fn idle_states(dir: &std::path::Path) -> Vec<IdleState> {
    (0..32)
        .map_while(|i| {
            let d = dir.join(format!("state{i}"));
            let name = read_trim(d.join("name"))?;
            Some(IdleState {
                name,
                latency_us: read_u64(d.join("latency")),
                residency_us: read_u64(d.join("residency")),
                disabled: read_u64(d.join("disable")).map(|v| v != 0),
            })
        })
        .collect()
}

/// The mode the debugfs file `/sys/kernel/debug/sched/preempt` marks as in use:
/// `none voluntary (full) lazy` → `full`.
pub fn preempt_debugfs_mode(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
        .map(str::to_string)
}

/// The build's preemption default from a kernel config's text.
fn config_preempt_default(config: &str) -> Option<&'static str> {
    config.lines().find_map(|l| match l.trim() {
        "CONFIG_PREEMPT_NONE=y" => Some("none"),
        "CONFIG_PREEMPT_VOLUNTARY=y" => Some("voluntary"),
        "CONFIG_PREEMPT=y" => Some("full"),
        "CONFIG_PREEMPT_LAZY=y" => Some("lazy"),
        _ => None,
    })
}

/// The preemption model from what the kernel tells: the debugfs file (the mode in use),
/// else its version string (`uname -v`: `PREEMPT_RT`, `PREEMPT_DYNAMIC`, `PREEMPT`),
/// the command line's `preempt=`, and the build's config.
pub fn preemption_from(
    debugfs: Option<&str>,
    version: Option<&str>,
    cmdline: Option<&str>,
    config: Option<&str>,
) -> Option<Preemption> {
    let p = |model: &str, how: &str| {
        Some(Preemption {
            model: model.into(),
            how: how.into(),
        })
    };
    if let Some(mode) = debugfs.and_then(preempt_debugfs_mode) {
        return p(&mode, "the mode in use, read from debugfs");
    }
    let version = version?;
    let words: Vec<&str> = version.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let default = config.and_then(config_preempt_default);
    if has("PREEMPT_RT") {
        return p("real-time", "a PREEMPT_RT kernel");
    }
    if has("PREEMPT_DYNAMIC") {
        if let Some(mode) = cmdline
            .unwrap_or("")
            .split_whitespace()
            .find_map(|w| w.strip_prefix("preempt="))
        {
            return p(
                mode,
                "preempt= on the kernel command line; the kernel is PREEMPT_DYNAMIC",
            );
        }
        return match default {
            Some(d) => p(
                d,
                "the build's default, not changed on the command line; the kernel is PREEMPT_DYNAMIC, and debugfs, where a change at run time would show, is not readable",
            ),
            None => p(
                "dynamic",
                "a PREEMPT_DYNAMIC kernel; the mode in use is not readable (no debugfs, no preempt= on the command line, no kernel config)",
            ),
        };
    }
    if has("PREEMPT_LAZY") {
        return p("lazy", "PREEMPT_LAZY in the kernel's version");
    }
    if has("PREEMPT") {
        return p("full", "PREEMPT in the kernel's version");
    }
    match default {
        Some(d) => p(d, "the kernel's config; no PREEMPT in its version"),
        None => p(
            "none or voluntary",
            "no PREEMPT in the kernel's version; the config that tells the two apart is not readable",
        ),
    }
}

/// The kernel's config text, if this system keeps it (`/boot/config-<release>` or
/// `/proc/config.gz`).
fn kernel_config() -> Option<String> {
    let release = read_trim("/proc/sys/kernel/osrelease")?;
    read_trim(format!("/boot/config-{release}")).or_else(|| {
        std::path::Path::new("/proc/config.gz")
            .exists()
            .then(|| command_output("gzip", &["-dc", "/proc/config.gz"]))
            .flatten()
    })
}

fn preemption_now() -> Option<Preemption> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let debugfs = read_trim("/sys/kernel/debug/sched/preempt");
    let version = read_trim("/proc/sys/kernel/version");
    let cmdline = read_trim("/proc/cmdline");
    // The config is read only when nothing cheaper tells the mode.
    let needs_config = debugfs.is_none()
        && !cmdline
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .any(|w| w.starts_with("preempt="))
        && !version
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .any(|w| ["PREEMPT", "PREEMPT_RT", "PREEMPT_LAZY"].contains(&w));
    let config = needs_config.then(kernel_config).flatten();
    preemption_from(
        debugfs.as_deref(),
        version.as_deref(),
        cmdline.as_deref(),
        config.as_deref(),
    )
}

/// The median time of one `CPUID` (leaf 0) over batches, and whether a hypervisor is
/// there to trap it. About 1,000 instructions, and at most 20 ms.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "x86", target_feature = "sse")
))]
fn cpuid_cost() -> Option<CpuidCost> {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::__cpuid;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::__cpuid;
    use std::hint::black_box;
    use std::time::{Duration, Instant};
    // Short batches, many of them: a batch that another thread or the host interrupts
    // is an outlier, and the median ignores up to half of them.
    const PER_BATCH: u32 = 20;
    const BATCHES: u32 = 51;
    // SAFETY: CPUID exists on every x86_64 CPU and on every x86 one with SSE (this
    // function is compiled only for those); it reads identification registers and
    // changes nothing. Newer compilers mark the intrinsic safe, hence the allow.
    #[allow(unused_unsafe)]
    let cpuid = |leaf: u32| unsafe { __cpuid(leaf) };
    let hypervisor = (cpuid(1).ecx >> 31) & 1 == 1;
    let batch = || {
        let t = Instant::now();
        for _ in 0..PER_BATCH {
            black_box(cpuid(black_box(0)));
        }
        t.elapsed().as_nanos() as f64 / f64::from(PER_BATCH)
    };
    batch(); // warm-up
    let start = Instant::now();
    let mut per: Vec<f64> = Vec::new();
    while per.len() < BATCHES as usize
        && (per.len() < 5 || start.elapsed() < Duration::from_millis(20))
    {
        per.push(batch());
    }
    per.sort_by(f64::total_cmp);
    Some(CpuidCost {
        ns: crate::stats::median_sorted(&per),
        batches: per.len() as u32,
        per_batch: PER_BATCH,
        hypervisor,
    })
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "x86", target_feature = "sse")
)))]
fn cpuid_cost() -> Option<CpuidCost> {
    None
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
    // The words the "Your machine" page and the provenance details show.
    use crate::machine_words::{details_line, facts};

    #[test]
    fn the_typed_os_is_this_builds_and_older_records_read_theirs_from_the_text() {
        assert_eq!(
            Machine::current().target_os,
            Some(TargetOs::from_rust(std::env::consts::OS))
        );
        assert_eq!(Machine::current().target_os(), TargetOs::this_build());
        for (rust, os) in [
            ("linux", TargetOs::Linux),
            ("android", TargetOs::Linux),
            ("macos", TargetOs::Macos),
            ("windows", TargetOs::Windows),
            ("freebsd", TargetOs::Bsd),
            ("illumos", TargetOs::Other),
        ] {
            assert_eq!(TargetOs::from_rust(rust), os, "{rust}");
        }
        for (text, os) in [
            ("windows", TargetOs::Windows),
            (
                "Windows 10.0 (build 19045), run by Wine 8.0",
                TargetOs::Windows,
            ),
            ("macOS 14.5", TargetOs::Macos),
            ("FreeBSD 14.0", TargetOs::Bsd),
            ("Debian GNU/Linux 12 (bookworm)", TargetOs::Linux),
        ] {
            assert_eq!(TargetOs::from_description(text), os, "{text}");
        }
        // The typed field wins over the text: a Windows build under Wine once read the
        // Linux host's /etc/os-release.
        let mut m = Machine::current();
        m.os = "Debian GNU/Linux 12 (bookworm)".into();
        m.target_os = Some(TargetOs::Windows);
        assert_eq!(m.target_os(), TargetOs::Windows);
        m.target_os = None;
        assert_eq!(m.target_os(), TargetOs::Linux);
        for os in [
            TargetOs::Linux,
            TargetOs::Macos,
            TargetOs::Windows,
            TargetOs::Bsd,
            TargetOs::Other,
        ] {
            let json = serde_json::to_string(&os).unwrap();
            assert_eq!(json, format!("\"{}\"", os.name()));
            assert_eq!(serde_json::from_str::<TargetOs>(&json).unwrap(), os);
        }
    }

    #[test]
    fn this_machine_is_described_from_its_own_os() {
        let m = Machine::current();
        if cfg!(target_os = "linux") {
            assert!(!m.kernel.is_empty(), "{m:?}");
        }
        if cfg!(windows) {
            assert!(m.os.starts_with("Windows "), "{}", m.os);
        }
    }

    #[test]
    fn machine_has_the_basics() {
        let m = Machine::current();
        assert!(m.logical_cpus >= 1);
        assert!(!m.cpu.is_empty());
        assert!(m.rustc.starts_with("rustc"));
        assert!(m.build == "debug" || m.build == "release");
    }

    #[test]
    fn the_clock_step_is_the_smallest_nonzero_difference() {
        assert_eq!(smallest_step(&[0, 0, 20, 40, 41, 41, 80]), Some(1));
        assert_eq!(smallest_step(&[100, 100, 100]), None);
        assert_eq!(smallest_step(&[5]), None);
        assert_eq!(smallest_step(&[0, 1_000, 1_000, 2_000]), Some(1_000));
        // One interruption of the loop does not move the typical cost.
        assert_eq!(reading_cost(&[0, 20, 40, 8_000_000, 8_000_020]), Some(20.0));
        // A coarse clock: most readings share a tick, so the mean.
        assert_eq!(
            reading_cost(&[0, 0, 0, 4_000_000, 4_000_000]),
            Some(1_000_000.0)
        );
        assert_eq!(reading_cost(&[7]), None);
        // A 15 ns read on a clock that steps by 20 ns: the gaps are 20 or 0 (median 20,
        // the step); blocks of readings give the read's cost, and an interruption in one
        // block does not move the median over blocks.
        let mut t = 0u64;
        let mut readings: Vec<u64> = (0..10 * COST_BLOCK + 1)
            .map(|i| {
                let at = (i as u64 * 15) / 20 * 20;
                if i == 3 * COST_BLOCK + 7 {
                    t += 5_000_000;
                }
                at + t
            })
            .collect();
        let gaps_median = {
            let mut g: Vec<u64> = readings.windows(2).map(|w| w[1] - w[0]).collect();
            g.sort_unstable();
            g[g.len() / 2]
        };
        assert_eq!(gaps_median, 20);
        let cost = reading_cost(&readings).unwrap();
        assert!((cost - 15.0).abs() < 0.2, "{cost}");
        readings.truncate(COST_BLOCK);
        assert_eq!(reading_cost(&readings), Some(20.0));
    }

    #[test]
    fn the_preemption_model_is_read_from_what_the_kernel_tells() {
        let model = |d, v, c, k| preemption_from(d, v, c, k).map(|p| p.model);
        assert_eq!(
            preempt_debugfs_mode("none voluntary (full) lazy"),
            Some("full".into())
        );
        assert_eq!(preempt_debugfs_mode("none voluntary full"), None);
        // debugfs says what is in use, whatever the rest says.
        assert_eq!(
            model(
                Some("(none) voluntary full"),
                Some("#1 SMP PREEMPT_DYNAMIC"),
                Some("preempt=full"),
                None
            ),
            Some("none".into())
        );
        let v = Some("#1 SMP PREEMPT_DYNAMIC Debian 6.1.0-18 (2024-02-01)");
        assert_eq!(
            model(None, v, Some("quiet preempt=voluntary"), None),
            Some("voluntary".into())
        );
        let config = "# CONFIG_PREEMPT_VOLUNTARY is not set\nCONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\n";
        let p = preemption_from(None, v, Some("quiet"), Some(config)).unwrap();
        assert_eq!(p.model, "none");
        assert!(p.how.contains("default"), "{}", p.how);
        assert_eq!(model(None, v, None, None), Some("dynamic".into()));
        assert_eq!(
            model(None, Some("#1 SMP PREEMPT_RT Thu"), None, None),
            Some("real-time".into())
        );
        assert_eq!(
            model(None, Some("#1 SMP PREEMPT Tue Mar 5"), None, None),
            Some("full".into())
        );
        assert_eq!(
            model(
                None,
                Some("#1 SMP Tue"),
                None,
                Some("CONFIG_PREEMPT_VOLUNTARY=y")
            ),
            Some("voluntary".into())
        );
        assert_eq!(
            model(None, Some("#1 SMP Tue"), None, None),
            Some("none or voluntary".into())
        );
        assert_eq!(model(None, None, None, None), None);
    }

    /// Linux builds only read such files (`procfs`).
    #[cfg(target_os = "linux")]
    #[test]
    fn idle_states_are_read_in_order_until_one_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        for (i, name, lat, res, dis) in [
            (0, "POLL", "0", "0", "0"),
            (1, "C1", "2", "4", "1"),
            (3, "C6", "170", "600", "0"),
        ] {
            let d = dir.path().join(format!("state{i}"));
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in [
                ("name", name),
                ("latency", lat),
                ("residency", res),
                ("disable", dis),
            ] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        }
        let states = idle_states(dir.path());
        assert_eq!(states.len(), 2, "state3 follows a missing state2");
        assert_eq!(states[1].name, "C1");
        assert_eq!(
            (
                states[1].latency_us,
                states[1].residency_us,
                states[1].disabled
            ),
            (Some(2), Some(4), Some(true))
        );
    }

    #[test]
    fn the_underneath_is_read_and_measured_here() {
        let u = Underneath::current();
        assert_eq!(u.os, std::env::consts::OS);
        let c = &u.clock;
        assert!(c.reads > 0 && c.read_ns.is_some_and(|r| r > 0.0));
        assert!(c.step_ns.is_some_and(|s| s > 0.0));
        if cfg!(target_os = "linux") {
            // The clock source and idle states need /sys, which a container may hide;
            // the kernel's version (for the preemption model) is always in /proc.
            assert!(u.preemption.is_some());
            assert!(c.getres_ns.is_some());
        }
        assert_eq!(
            u.cpuid.is_some(),
            cfg!(any(target_arch = "x86_64", target_arch = "x86"))
        );
        let mut old = Machine::current();
        old.underneath = None;
        assert!(details_line(&old).ends_with("no clock or idle facts recorded"));
        let line = details_line(&Machine::current());
        assert!(line.contains(" clock") || line.contains("clock "));
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
