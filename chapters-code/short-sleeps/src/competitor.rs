//! A yield with something to yield to: the calls whose yielding is tested, and a
//! busy thread pinned to the measuring thread's CPU (Linux).

#[cfg(unix)]
use crate::calls::NS1;
use crate::calls::{Call, ZERO};
#[cfg(target_os = "linux")]
use crate::os;
use std::io;

/// The calls whose yielding the competitor experiment tests, and the shortest sleep, so
/// that a yield and a sleep are compared with a thread waiting for the CPU too.
#[cfg(unix)]
pub const YIELD_CALLS: [Call; 3] = [Call::SchedYield, Call::Pselect(ZERO), Call::StdSleep(NS1)];

/// Without `sched_yield` and `pselect`, the standard library's yield and zero sleep
/// (the experiment reports that pinning is not available here anyway).
#[cfg(not(unix))]
pub const YIELD_CALLS: [Call; 2] = [Call::YieldNow, Call::StdSleep(ZERO)];

// ANCHOR: competitor
/// Runs `f` with the calling thread pinned to the CPU it is on, and, if `busy`, a
/// second thread pinned to the same CPU spinning all the while: a thread that always
/// wants that CPU, so that a call that yields has someone to yield to. The thread's
/// old CPU mask is restored afterwards. Linux only (`sched_setaffinity`).
#[cfg(target_os = "linux")]
pub fn on_one_cpu<T>(busy: bool, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let _pinned = os::PinGuard::here()?;
    let cpu = _pinned.cpu;
    if !busy {
        return f();
    }
    let (ready, stop) = (AtomicBool::new(false), AtomicBool::new(false));
    std::thread::scope(|s| {
        let spinner = s.spawn(|| {
            let pinned = os::pin_to(cpu);
            ready.store(true, Ordering::Release);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            pinned
        });
        // Until the spinner runs, this thread gives it the CPU they share.
        while !ready.load(Ordering::Acquire) && !spinner.is_finished() {
            std::thread::yield_now();
        }
        let out = f();
        stop.store(true, Ordering::Relaxed);
        let pinned = spinner
            .join()
            .map_err(|_| io::Error::other("the busy thread panicked"))?;
        pinned.and(out)
    })
}
// ANCHOR_END: competitor

/// Pinning a thread is Linux-only here.
#[cfg(not(target_os = "linux"))]
pub fn on_one_cpu<T>(_busy: bool, _f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "pinning a thread to one CPU (sched_setaffinity) is Linux-only in this chapter",
    ))
}
