//! Counters that say *why* a number is what it is: context switches, CPU time and time
//! spent runnable but waiting for a CPU (run-queue delay), for the calling thread or
//! the whole process. A chapter takes a snapshot before and after the work it measures
//! and divides the difference by the operations it did.
//!
//! Each counter is an `Option`: `None` where the OS does not tell (run-queue delay needs
//! Linux's schedstat, read by Linux builds only; switches need `getrusage`; CPU time
//! is `clock_gettime`'s on Unix and `GetThreadTimes`' on Windows).

use std::time::Duration;

/// A snapshot of scheduler counters, or the difference of two.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    /// Context switches the thread (or process) asked for: it blocked or yielded.
    pub voluntary: Option<u64>,
    /// Context switches forced on it: preempted because its time was up or a more
    /// urgent task woke.
    pub involuntary: Option<u64>,
    /// CPU time (user + system), in nanoseconds.
    pub cpu_ns: Option<u64>,
    /// Time runnable but not running (waiting in a run queue), in nanoseconds.
    pub run_delay_ns: Option<u64>,
}

impl Counters {
    /// The calling thread's counters.
    pub fn thread() -> Counters {
        Counters {
            cpu_ns: crate::thread_cpu_time().map(as_ns),
            run_delay_ns: crate::procfs::run_delay_ns("/proc/thread-self/schedstat"),
            ..switches(Scope::Thread)
        }
    }

    /// The whole process's counters (every thread, including those that have ended,
    /// for switches and CPU; the run-queue delay of the threads alive now).
    pub fn process() -> Counters {
        Counters {
            cpu_ns: crate::process_cpu_time().map(as_ns),
            run_delay_ns: process_run_delay(),
            ..switches(Scope::Process)
        }
    }

    /// What happened between `earlier` and `self` (saturating: a counter never goes
    /// backwards, but a thread that ended takes its run-queue delay with it).
    pub fn since(&self, earlier: &Counters) -> Counters {
        fn d(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            Some(a?.saturating_sub(b?))
        }
        Counters {
            voluntary: d(self.voluntary, earlier.voluntary),
            involuntary: d(self.involuntary, earlier.involuntary),
            cpu_ns: d(self.cpu_ns, earlier.cpu_ns),
            run_delay_ns: d(self.run_delay_ns, earlier.run_delay_ns),
        }
    }

    /// The sum of two differences (for adding up threads).
    pub fn plus(&self, other: &Counters) -> Counters {
        fn s(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            Some(a? + b?)
        }
        Counters {
            voluntary: s(self.voluntary, other.voluntary),
            involuntary: s(self.involuntary, other.involuntary),
            cpu_ns: s(self.cpu_ns, other.cpu_ns),
            run_delay_ns: s(self.run_delay_ns, other.run_delay_ns),
        }
    }

    /// Each counter divided by `ops` operations, as `f64` (nanoseconds for the times).
    pub fn per_op(&self, ops: u64) -> PerOp {
        let per = |v: Option<u64>| v.filter(|_| ops > 0).map(|v| v as f64 / ops as f64);
        PerOp {
            voluntary: per(self.voluntary),
            involuntary: per(self.involuntary),
            cpu_ns: per(self.cpu_ns),
            run_delay_ns: per(self.run_delay_ns),
        }
    }
}

/// [`Counters`] per operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PerOp {
    pub voluntary: Option<f64>,
    pub involuntary: Option<f64>,
    pub cpu_ns: Option<f64>,
    pub run_delay_ns: Option<f64>,
}

fn as_ns(d: Duration) -> u64 {
    d.as_nanos() as u64
}

/// Whose counters: the calling thread's or the whole process's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Thread,
    Process,
}

/// CPU time on Windows: `GetThreadTimes` and `GetProcessTimes`, kernel plus user time,
/// in 100 ns units. Windows charges a thread's CPU time a clock tick at a time (about
/// 15.6 ms, or the timer resolution a program asked for), so a span shorter than a few
/// ticks reads as 0 or as whole ticks; over many calls the mean per call still holds.
/// (`QueryThreadCycleTime` is finer, but counts cycles of a clock whose rate Windows
/// does not give, so it cannot be told in nanoseconds.)
#[cfg(windows)]
pub mod windows {
    use super::Scope;
    use std::ffi::c_void;
    use std::time::Duration;

    use super::{FileTime, filetime_sum};

    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetCurrentThread() -> *mut c_void;
        fn GetCurrentProcess() -> *mut c_void;
        fn GetThreadTimes(
            thread: *mut c_void,
            creation: *mut FileTime,
            exit: *mut FileTime,
            kernel: *mut FileTime,
            user: *mut FileTime,
        ) -> i32;
        fn GetProcessTimes(
            process: *mut c_void,
            creation: *mut FileTime,
            exit: *mut FileTime,
            kernel: *mut FileTime,
            user: *mut FileTime,
        ) -> i32;
    }

    /// The calling thread's or the process's CPU time (kernel + user).
    pub fn cpu_time(scope: Scope) -> Option<Duration> {
        let [mut c, mut e, mut k, mut u] = Default::default();
        // SAFETY: the pseudo-handles of the current thread and process need no closing;
        // the calls write only into the four FILETIMEs we pass.
        let ok = unsafe {
            match scope {
                Scope::Thread => GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u),
                Scope::Process => {
                    GetProcessTimes(GetCurrentProcess(), &mut c, &mut e, &mut k, &mut u)
                }
            }
        };
        (ok != 0).then(|| filetime_sum(&k, &u))
    }
}

/// Windows' `FILETIME`: a count of 100 ns, in two halves.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
#[cfg_attr(not(windows), allow(dead_code))]
struct FileTime {
    low: u32,
    high: u32,
}

/// Kernel plus user time, each a `FILETIME` count of 100 ns.
#[cfg_attr(not(windows), allow(dead_code))]
fn filetime_sum(kernel: &FileTime, user: &FileTime) -> Duration {
    let n = |t: &FileTime| (u64::from(t.high) << 32) | u64::from(t.low);
    Duration::from_nanos(n(kernel).saturating_add(n(user)).saturating_mul(100))
}

#[cfg(target_os = "linux")]
fn switches(scope: Scope) -> Counters {
    let who = match scope {
        Scope::Thread => libc::RUSAGE_THREAD,
        Scope::Process => libc::RUSAGE_SELF,
    };
    // SAFETY: getrusage writes only into `u`.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut u) } != 0 {
        return Counters::default();
    }
    Counters {
        voluntary: Some(u.ru_nvcsw as u64),
        involuntary: Some(u.ru_nivcsw as u64),
        ..Counters::default()
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn switches(scope: Scope) -> Counters {
    // Outside Linux getrusage has no per-thread scope; the process's counts are given
    // only when the process was asked for.
    let Scope::Process = scope else {
        return Counters::default();
    };
    // SAFETY: getrusage writes only into `u`.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return Counters::default();
    }
    Counters {
        voluntary: Some(u.ru_nvcsw as u64),
        involuntary: Some(u.ru_nivcsw as u64),
        ..Counters::default()
    }
}

#[cfg(not(unix))]
fn switches(_scope: Scope) -> Counters {
    Counters::default()
}

fn process_run_delay() -> Option<u64> {
    // Linux builds only, as every `procfs` reader.
    let tasks = crate::procfs::entries("/proc/self/task")?;
    let mut sum = 0u64;
    let mut any = false;
    for t in tasks {
        if let Some(v) = crate::procfs::run_delay_ns(t.join("schedstat")) {
            sum += v;
            any = true;
        }
    }
    any.then_some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_and_rates() {
        let a = Counters {
            voluntary: Some(10),
            involuntary: Some(2),
            cpu_ns: Some(1_000),
            run_delay_ns: None,
        };
        let b = Counters {
            voluntary: Some(30),
            involuntary: Some(2),
            cpu_ns: Some(5_000),
            run_delay_ns: Some(7),
        };
        let d = b.since(&a);
        assert_eq!(d.voluntary, Some(20));
        assert_eq!(d.involuntary, Some(0));
        assert_eq!(d.run_delay_ns, None);
        let p = d.per_op(4);
        assert_eq!(p.voluntary, Some(5.0));
        assert_eq!(p.cpu_ns, Some(1_000.0));
        assert_eq!(d.per_op(0).voluntary, None);
        assert_eq!(d.plus(&d).voluntary, Some(40));
    }

    #[test]
    fn windows_cpu_times_are_counts_of_100_ns() {
        let t = |low, high| FileTime { low, high };
        assert_eq!(filetime_sum(&t(0, 0), &t(0, 0)), Duration::ZERO);
        // One clock tick of 15.625 ms in the kernel, two in user mode.
        assert_eq!(
            filetime_sum(&t(156_250, 0), &t(312_500, 0)),
            Duration::from_micros(46_875)
        );
        // The high half counts 2^32 units of 100 ns.
        assert_eq!(
            filetime_sum(&t(0, 1), &t(0, 0)),
            Duration::from_nanos((1u64 << 32) * 100)
        );
        assert!(crate::thread_cpu_time().is_some() || !cfg!(any(unix, windows)));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_that_sleeps_switches_voluntarily() {
        let before = Counters::thread();
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let d = Counters::thread().since(&before);
        assert!(d.voluntary.unwrap() >= 3, "{d:?}");
        assert!(Counters::process().cpu_ns.is_some());
    }
}
