//! Thin wrappers over each operating system's sleep and timer calls. Every call's
//! result is checked and turned into an `io::Error`; nothing here panics on a failed
//! system call, and nothing can be asked to wait forever.
//!
//! Every item sits at the top level, gated with `cfg`, so that the book can show any
//! of them as it is (an included listing keeps its indentation).

use std::io;
use std::time::Duration;

#[cfg(target_os = "linux")]
use std::cell::Cell;
#[cfg(target_os = "linux")]
use std::marker::PhantomData;
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A `timespec` for a relative duration; an error if it does not fit `time_t`.
#[cfg(unix)]
pub(crate) fn timespec(d: Duration) -> io::Result<libc::timespec> {
    let tv_sec = libc::time_t::try_from(d.as_secs()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{d:?} is too long for a timespec"),
        )
    })?;
    Ok(libc::timespec {
        tv_sec,
        tv_nsec: d.subsec_nanos() as _,
    })
}

// ANCHOR: nanosleep
/// `nanosleep(2)`: sleep for `d`, resuming with the remainder after a signal.
#[cfg(unix)]
pub fn nanosleep(d: Duration) -> io::Result<()> {
    let mut request = timespec(d)?;
    loop {
        let mut remaining = timespec(Duration::ZERO)?;
        // SAFETY: both pointers refer to live timespecs on this stack frame.
        if unsafe { libc::nanosleep(&request, &mut remaining) } == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
        request = remaining;
    }
}
// ANCHOR_END: nanosleep

/// `pselect(2)` watching no descriptors: only its timeout can end it.
#[cfg(unix)]
pub fn pselect(d: Duration) -> io::Result<()> {
    let timeout = timespec(d)?;
    let null = std::ptr::null_mut();
    // SAFETY: no fd sets and no signal mask; the timeout lives across the call.
    let rc = unsafe { libc::pselect(0, null, null, null, &timeout, std::ptr::null()) };
    match rc {
        0 => Ok(()),
        // A signal ended the wait early; for a single call that is still a return.
        _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// `sched_yield(2)`: give up the CPU to any runnable thread, without a timer.
#[cfg(unix)]
pub fn sched_yield() -> io::Result<()> {
    // SAFETY: no arguments, no memory touched.
    match unsafe { libc::sched_yield() } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Voluntary and involuntary context switches of the calling thread so far (Linux),
/// or of the whole process (other Unix systems, which lack `RUSAGE_THREAD`).
#[cfg(unix)]
pub fn context_switches() -> Option<(u64, u64)> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let who = libc::RUSAGE_THREAD;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let who = libc::RUSAGE_SELF;
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return None;
    }
    Some((usage.ru_nvcsw as u64, usage.ru_nivcsw as u64))
}

/// Context switches are not read on this OS.
#[cfg(not(unix))]
pub fn context_switches() -> Option<(u64, u64)> {
    None
}

/// What the calls table says of its CPU column on Windows: where the thread's CPU time
/// comes from there, and its grain.
pub const WINDOWS_CPU_NOTE: &str = " On Windows the thread's CPU time is `GetThreadTimes`' \
    (kernel + user, in 100 ns units). Windows adds it a clock tick at a time, so it moves \
    in steps, measured each round. Where a loop's CPU time read less than one step, only a \
    bound is known: the cell says *below* the step divided by the loop's calls.";

/// What the other systems' tables say of their CPU column.
pub const CPU_BELOW_NOTE: &str = " *CPU per call*: the measuring thread's CPU time per \
    call there. That clock moves in steps: Windows adds CPU time a clock tick at a time. \
    Where a loop's CPU time read less than one step, only a bound is known, and the cell \
    says *below* the step divided by the loop's calls.";

/// `clock_nanosleep(2)` on the monotonic clock, relative to now.
#[cfg(target_os = "linux")]
pub fn clock_nanosleep(d: Duration) -> io::Result<()> {
    let mut request = timespec(d)?;
    loop {
        let mut remaining = timespec(Duration::ZERO)?;
        // SAFETY: both pointers refer to live timespecs; it returns an errno value.
        let rc =
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &request, &mut remaining) };
        match rc {
            0 => return Ok(()),
            libc::EINTR => request = remaining,
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
}

/// A Linux timerfd on the monotonic clock. Waiting is a blocking `read` of the number
/// of expirations since the last read; `armed` remembers whether a read can return
/// at all (a disarmed timerfd blocks forever).
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub struct TimerFd {
    fd: OwnedFd,
    armed: Cell<bool>,
    periodic: Cell<bool>,
}

#[cfg(target_os = "linux")]
impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: plain system call; the returned descriptor is owned below.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(TimerFd {
            // SAFETY: `fd` is a fresh descriptor nobody else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            armed: Cell::new(false),
            periodic: Cell::new(false),
        })
    }

    /// Fire once, `after` from now.
    pub fn set_oneshot(&self, after: Duration) -> io::Result<()> {
        timerfd_arm(self, after, Duration::ZERO)
    }

    /// Fire `every` from now, then every `every` after that.
    pub fn set_interval(&self, every: Duration) -> io::Result<()> {
        timerfd_arm(self, every, every)
    }

    /// Blocks until the timer has fired; returns how many times it fired.
    pub fn wait(&self) -> io::Result<u64> {
        timerfd_wait(self)
    }
}

/// Arms `timer` to fire `first` from now, then every `interval` (zero: once).
#[cfg(target_os = "linux")]
fn timerfd_arm(timer: &TimerFd, first: Duration, interval: Duration) -> io::Result<()> {
    if first.is_zero() {
        // A zero expiry disarms a timerfd: a later read would never return.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a timerfd cannot be armed with zero: the kernel reads zero as `disarm`",
        ));
    }
    let spec = libc::itimerspec {
        it_value: timespec(first)?,
        it_interval: timespec(interval)?,
    };
    let fd = timer.fd.as_raw_fd();
    // SAFETY: `spec` lives across the call; the old value is not asked for.
    if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    timer.armed.set(true);
    timer.periodic.set(!interval.is_zero());
    Ok(())
}

/// Reads the expiration count, refusing to wait on a timer that can never fire.
#[cfg(target_os = "linux")]
fn timerfd_wait(timer: &TimerFd) -> io::Result<u64> {
    if !timer.armed.get() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "waiting on a timerfd that is not armed would block forever",
        ));
    }
    let mut expirations = 0u64;
    loop {
        // SAFETY: reads at most 8 bytes into a live u64.
        let n = unsafe { libc::read(timer.fd.as_raw_fd(), (&raw mut expirations).cast(), 8) };
        match n {
            8 => break,
            n if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            n if n < 0 => return Err(io::Error::last_os_error()),
            n => {
                return Err(io::Error::other(format!(
                    "a timerfd read gave {n} bytes, not 8"
                )));
            }
        }
    }
    if !timer.periodic.get() {
        timer.armed.set(false);
    }
    Ok(expirations)
}

/// The calling thread's timer slack in nanoseconds (`PR_GET_TIMERSLACK`).
#[cfg(target_os = "linux")]
pub fn timer_slack() -> io::Result<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
    let rc = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc as u64)
}

/// Sets the calling thread's timer slack (`PR_SET_TIMERSLACK`); 0 would mean "back to
/// the default", so the guard below never passes it.
#[cfg(target_os = "linux")]
fn set_timer_slack(ns: u64) -> io::Result<()> {
    let ns = libc::c_ulong::try_from(ns).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: PR_SET_TIMERSLACK takes the value itself, no pointer.
    if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

// ANCHOR: slack_guard
/// Sets the calling thread's timer slack and puts the old value back when dropped.
/// Slack is per thread, so the guard cannot be sent to another thread. Which timers
/// the kernel lets the slack delay is our reading of the kernel, not measured here.
#[cfg(target_os = "linux")]
pub struct SlackGuard {
    previous: u64,
    _same_thread: PhantomData<*const ()>,
}

#[cfg(target_os = "linux")]
impl SlackGuard {
    pub fn set(ns: u64) -> io::Result<SlackGuard> {
        if ns == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "timer slack 0 means `the default` to the kernel; the smallest slack is 1 ns",
            ));
        }
        let previous = timer_slack()?;
        set_timer_slack(ns)?;
        Ok(SlackGuard {
            previous,
            _same_thread: PhantomData,
        })
    }
}

#[cfg(target_os = "linux")]
impl Drop for SlackGuard {
    fn drop(&mut self) {
        // Restoring the value this same thread had cannot reasonably fail; if it did,
        // there is nothing better to do than carry on.
        let _ = set_timer_slack(self.previous);
    }
}
// ANCHOR_END: slack_guard

/// The slack in `/proc/self/timerslack_ns` (the process's main thread).
#[cfg(target_os = "linux")]
pub fn proc_timer_slack() -> io::Result<u64> {
    let text = std::fs::read_to_string("/proc/self/timerslack_ns")?;
    text.trim()
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{text:?}: {e}")))
}

/// `Sleep(ms)`: 0 gives up the rest of the time slice.
#[cfg(windows)]
pub fn win_sleep(ms: u32) -> io::Result<()> {
    // SAFETY: no memory is touched.
    unsafe { windows_sys::Win32::System::Threading::Sleep(ms) };
    Ok(())
}

/// `SleepEx(ms, FALSE)`: the same, not alertable.
#[cfg(windows)]
pub fn win_sleep_ex(ms: u32) -> io::Result<()> {
    // SAFETY: no memory is touched.
    unsafe { windows_sys::Win32::System::Threading::SleepEx(ms, 0) };
    Ok(())
}

/// The system timer's resolution as the write-up read it (Sysinternals ClockRes): the
/// coarsest interval, the finest, and the current one, in nanoseconds. Read with
/// `NtQueryTimerResolution`, which ClockRes uses; `ntdll` is linked by name at run time
/// (`raw-dylib`), so no import library is needed.
#[cfg(windows)]
pub fn timer_resolution() -> io::Result<(u64, u64, u64)> {
    #[link(name = "ntdll", kind = "raw-dylib")]
    unsafe extern "system" {
        fn NtQueryTimerResolution(coarsest: *mut u32, finest: *mut u32, current: *mut u32) -> i32;
    }
    let (mut coarsest, mut finest, mut current) = (0u32, 0u32, 0u32);
    // SAFETY: three valid out-pointers to u32 (the call writes 100 ns units).
    let status = unsafe { NtQueryTimerResolution(&mut coarsest, &mut finest, &mut current) };
    if status < 0 {
        return Err(io::Error::other(format!(
            "NtQueryTimerResolution failed with status {status:#x}"
        )));
    }
    let ns = |units: u32| u64::from(units) * 100;
    Ok((ns(coarsest), ns(finest), ns(current)))
}

/// A high-resolution waitable timer (Windows 10 1803 and later).
#[cfg(windows)]
pub struct WaitableTimer(windows_sys::Win32::Foundation::HANDLE);

#[cfg(windows)]
impl WaitableTimer {
    pub fn new() -> io::Result<WaitableTimer> {
        use windows_sys::Win32::System::Threading::{
            CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, CreateWaitableTimerExW, TIMER_ALL_ACCESS,
        };
        // SAFETY: no name, no security attributes; the handle is owned below.
        let h = unsafe {
            CreateWaitableTimerExW(
                std::ptr::null(),
                std::ptr::null(),
                CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                TIMER_ALL_ACCESS,
            )
        };
        if h.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(WaitableTimer(h))
    }

    /// Sleeps for `d`, rounded up to the timer's 100 ns unit (at least one unit). The
    /// wait is bounded: a timer that has not fired a second after its due time is an
    /// error, never a hang.
    pub fn sleep(&self, d: Duration) -> io::Result<()> {
        use windows_sys::Win32::Foundation::{WAIT_OBJECT_0, WAIT_TIMEOUT};
        use windows_sys::Win32::System::Threading::{SetWaitableTimer, WaitForSingleObject};
        let units = i64::try_from(d.as_nanos().div_ceil(100).max(1))
            .map_err(|_| io::ErrorKind::InvalidInput)?;
        let due = -units; // negative: relative to now
        // SAFETY: `due` lives across the call; no completion routine.
        if unsafe { SetWaitableTimer(self.0, &due, 0, None, std::ptr::null(), 0) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // Never u32::MAX, which is INFINITE.
        let bound_ms = u32::try_from(d.as_millis().saturating_add(1_000)).unwrap_or(u32::MAX - 1);
        // SAFETY: the handle is valid for the life of `self`.
        match unsafe { WaitForSingleObject(self.0, bound_ms) } {
            WAIT_OBJECT_0 => Ok(()),
            WAIT_TIMEOUT => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the waitable timer had not fired a second after its due time",
            )),
            _ => Err(io::Error::last_os_error()),
        }
    }
}

#[cfg(windows)]
impl Drop for WaitableTimer {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe { windows_sys::Win32::Foundation::CloseHandle(self.0) };
    }
}

/// The calling thread pinned to one CPU (`sched_setaffinity`); dropping it restores
/// the CPU mask the thread had.
#[cfg(target_os = "linux")]
pub struct PinGuard {
    /// The CPU the thread is pinned to.
    pub cpu: usize,
    old: libc::cpu_set_t,
    _not_send: PhantomData<*const ()>,
}

#[cfg(target_os = "linux")]
impl PinGuard {
    /// Pins the calling thread to the CPU it is running on now.
    pub fn here() -> io::Result<PinGuard> {
        // SAFETY: sched_getcpu takes no arguments.
        let cpu = unsafe { libc::sched_getcpu() };
        let cpu = usize::try_from(cpu).map_err(|_| io::Error::last_os_error())?;
        // SAFETY: sched_getaffinity writes only into the set we pass, of the size given.
        let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if unsafe { libc::sched_getaffinity(0, size, &mut old) } != 0 {
            return Err(io::Error::last_os_error());
        }
        pin_to(cpu)?;
        Ok(PinGuard {
            cpu,
            old,
            _not_send: PhantomData,
        })
    }
}

#[cfg(target_os = "linux")]
impl Drop for PinGuard {
    fn drop(&mut self) {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: the set was filled by sched_getaffinity for this thread.
        unsafe { libc::sched_setaffinity(0, size, &self.old) };
    }
}

/// Pins the calling thread to `cpu`.
#[cfg(target_os = "linux")]
pub fn pin_to(cpu: usize) -> io::Result<()> {
    // SAFETY: CPU_ZERO and CPU_SET write only into the local set; sched_setaffinity
    // reads it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
    }
    let size = std::mem::size_of::<libc::cpu_set_t>();
    match unsafe { libc::sched_setaffinity(0, size, &set) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}
