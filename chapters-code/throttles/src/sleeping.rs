//! Sleeping, timed: the sleep sweep (single sleeps timed with their run-queue
//! delay), the thread's timer slack, and one iteration of the write-up's benchmark.

use crate::operation::UdpOp;
use harness::Counters;
use std::thread;
use std::time::{Duration, Instant};

// ANCHOR: sweep
/// One timed sleep: how long it took, and how much of that time the thread spent
/// runnable but waiting for a CPU (its run-queue delay; `None` where the OS does not
/// tell). The counters are read outside the timed interval.
#[derive(Debug, Clone, Copy)]
pub struct Slept {
    pub took: Duration,
    pub run_delay: Option<Duration>,
}

/// One pass of the sweep: for each `(length, times)` in the order given, `times`
/// sleeps of that length back to back, each timed with the monotonic clock. Stops
/// (keeping what it has) before a sleep that would end past `until`.
pub fn sweep_pass(order: &[(Duration, usize)], until: Instant) -> Vec<Vec<Slept>> {
    let mut slept = Vec::with_capacity(order.len());
    for &(asked, times) in order {
        let mut these = Vec::with_capacity(times);
        for _ in 0..times {
            if Instant::now() + asked > until {
                slept.push(these);
                return slept;
            }
            let before = Counters::thread();
            let start = Instant::now();
            thread::sleep(asked);
            let took = start.elapsed();
            let waited = Counters::thread().since(&before).run_delay_ns;
            these.push(Slept {
                took,
                run_delay: waited.map(Duration::from_nanos),
            });
        }
        slept.push(these);
    }
    slept
}
// ANCHOR_END: sweep

/// The calling thread's timer slack in nanoseconds (Linux's `PR_GET_TIMERSLACK`): how
/// far past its deadline the kernel may let a sleep run so as to batch wake-ups.
#[cfg(target_os = "linux")]
pub fn timer_slack_ns() -> Option<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
    let rc = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    u64::try_from(rc).ok()
}

/// No timer slack to read outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn timer_slack_ns() -> Option<u64> {
    None
}

// ANCHOR: naive_bench
/// One iteration of the write-up's benchmark: `ops` times, send a datagram (or not)
/// and sleep 1 ms. Returns how many operations ran (fewer if `until` came first), how
/// long they took together, and how much of that was spent in the sleeps.
pub fn naive_iteration(
    op: &mut UdpOp,
    with_send: bool,
    ops: u64,
    until: Instant,
) -> (u64, Duration, Duration) {
    let start = Instant::now();
    let (mut done, mut asleep) = (0, Duration::ZERO);
    while done < ops && Instant::now() < until {
        if with_send {
            op.send();
        }
        let nap = Instant::now();
        thread::sleep(Duration::from_millis(1));
        asleep += nap.elapsed();
        done += 1;
    }
    (done, start.elapsed(), asleep)
}
// ANCHOR_END: naive_bench
