//! Thin wrappers over each operating system's sleep and timer calls. Every call's
//! result is checked and turned into an `io::Error`; nothing here panics on a failed
//! syscall, and nothing can be asked to wait forever.

#[cfg(unix)]
pub use unix::*;

#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(windows)]
pub use win::*;

#[cfg(unix)]
mod unix {
    use std::io;
    use std::time::Duration;

    /// A `timespec` for a relative duration; an error if it does not fit `time_t`.
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

    // ANCHOR: unix_calls
    /// `nanosleep(2)`: sleep for `d`, resuming with the remainder after a signal.
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

    /// `pselect(2)` watching no descriptors: only its timeout can end it.
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
    pub fn sched_yield() -> io::Result<()> {
        // SAFETY: no arguments, no memory touched.
        match unsafe { libc::sched_yield() } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }
    // ANCHOR_END: unix_calls

    /// Voluntary and involuntary context switches of the calling thread so far (Linux),
    /// or of the whole process (other Unix systems, which lack `RUSAGE_THREAD`).
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
}

#[cfg(target_os = "linux")]
mod linux {
    use super::unix::timespec;
    use std::cell::Cell;
    use std::io;
    use std::marker::PhantomData;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::Duration;

    /// `clock_nanosleep(2)` on the monotonic clock, relative to now.
    pub fn clock_nanosleep(d: Duration) -> io::Result<()> {
        let mut request = timespec(d)?;
        loop {
            let mut remaining = timespec(Duration::ZERO)?;
            // SAFETY: both pointers refer to live timespecs; it returns an errno value.
            let rc = unsafe {
                libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &request, &mut remaining)
            };
            match rc {
                0 => return Ok(()),
                libc::EINTR => request = remaining,
                e => return Err(io::Error::from_raw_os_error(e)),
            }
        }
    }

    // ANCHOR: timerfd
    /// A Linux timerfd on the monotonic clock. Waiting is a blocking `read` of the
    /// number of expirations since the last read.
    #[derive(Debug)]
    pub struct TimerFd {
        fd: OwnedFd,
        /// Whether a `wait` can ever return: a disarmed timerfd blocks forever.
        armed: Cell<bool>,
        periodic: Cell<bool>,
    }

    impl TimerFd {
        pub fn new() -> io::Result<TimerFd> {
            // SAFETY: plain syscall; the returned descriptor is owned below.
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
            self.arm(after, Duration::ZERO)
        }

        /// Fire `every` from now, then every `every` after that.
        pub fn set_interval(&self, every: Duration) -> io::Result<()> {
            self.arm(every, every)
        }

        fn arm(&self, first: Duration, interval: Duration) -> io::Result<()> {
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
            let fd = self.fd.as_raw_fd();
            // SAFETY: `spec` lives across the call; the old value is not asked for.
            if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            self.armed.set(true);
            self.periodic.set(!interval.is_zero());
            Ok(())
        }

        /// Blocks until the timer has fired; returns how many times it fired.
        pub fn wait(&self) -> io::Result<u64> {
            if !self.armed.get() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "waiting on a timerfd that is not armed would block forever",
                ));
            }
            let mut expirations = 0u64;
            loop {
                // SAFETY: reads at most 8 bytes into a live u64.
                let n =
                    unsafe { libc::read(self.fd.as_raw_fd(), (&raw mut expirations).cast(), 8) };
                match n {
                    8 => break,
                    n if n < 0
                        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                    n if n < 0 => return Err(io::Error::last_os_error()),
                    n => {
                        return Err(io::Error::other(format!(
                            "a timerfd read returned {n} bytes instead of 8"
                        )));
                    }
                }
            }
            if !self.periodic.get() {
                self.armed.set(false);
            }
            Ok(expirations)
        }
    }
    // ANCHOR_END: timerfd

    // ANCHOR: slack
    /// The calling thread's timer slack in nanoseconds (`PR_GET_TIMERSLACK`).
    pub fn timer_slack() -> io::Result<u64> {
        // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
        let rc = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc as u64)
    }

    /// Sets the calling thread's timer slack and puts the old value back when dropped.
    /// Slack is per thread, so the guard cannot be sent to another thread.
    pub struct SlackGuard {
        previous: u64,
        _same_thread: PhantomData<*const ()>,
    }

    impl SlackGuard {
        pub fn set(ns: u64) -> io::Result<SlackGuard> {
            if ns == 0 {
                // For PR_SET_TIMERSLACK, zero means "back to the default", not "none".
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

    impl Drop for SlackGuard {
        fn drop(&mut self) {
            // Restoring the value this same thread had cannot reasonably fail; if it
            // did, there is nothing better to do than carry on.
            let _ = set_timer_slack(self.previous);
        }
    }

    fn set_timer_slack(ns: u64) -> io::Result<()> {
        let ns = libc::c_ulong::try_from(ns).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: PR_SET_TIMERSLACK takes the value itself, no pointer.
        if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    // ANCHOR_END: slack

    /// The slack in `/proc/self/timerslack_ns` (the process's main thread).
    pub fn proc_timer_slack() -> io::Result<u64> {
        let text = std::fs::read_to_string("/proc/self/timerslack_ns")?;
        text.trim()
            .parse()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{text:?}: {e}")))
    }
}

#[cfg(windows)]
mod win {
    use std::io;
    use std::time::Duration;
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, WAIT_OBJECT_0};
    use windows_sys::Win32::System::Threading::{
        CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, CreateWaitableTimerExW, INFINITE, SetWaitableTimer,
        Sleep, SleepEx, TIMER_ALL_ACCESS, WaitForSingleObject,
    };

    /// `Sleep(ms)`: 0 gives up the rest of the time slice.
    pub fn win_sleep(ms: u32) {
        // SAFETY: no memory is touched.
        unsafe { Sleep(ms) }
    }

    /// `SleepEx(ms, FALSE)`: the same, not alertable.
    pub fn win_sleep_ex(ms: u32) {
        // SAFETY: no memory is touched.
        unsafe { SleepEx(ms, 0) };
    }

    /// A high-resolution waitable timer (Windows 10 1803 and later).
    pub struct WaitableTimer(HANDLE);

    impl WaitableTimer {
        pub fn new() -> io::Result<WaitableTimer> {
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

        /// Sleeps for `d`, rounded up to the timer's 100 ns unit (at least one unit).
        pub fn sleep(&self, d: Duration) -> io::Result<()> {
            let units = i64::try_from(d.as_nanos().div_ceil(100).max(1))
                .map_err(|_| io::ErrorKind::InvalidInput)?;
            let due = -units; // negative: relative to now
            // SAFETY: `due` lives across the call; no completion routine.
            if unsafe { SetWaitableTimer(self.0, &due, 0, None, std::ptr::null(), 0) } == 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: the handle is valid for the life of `self`.
            match unsafe { WaitForSingleObject(self.0, INFINITE) } {
                WAIT_OBJECT_0 => Ok(()),
                _ => Err(io::Error::last_os_error()),
            }
        }
    }

    impl Drop for WaitableTimer {
        fn drop(&mut self) {
            // SAFETY: the handle is ours and closed once.
            unsafe { CloseHandle(self.0) };
        }
    }
}
