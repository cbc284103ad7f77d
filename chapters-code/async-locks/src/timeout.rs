//! The timeout of the chapter: a deadline that can be pushed back while it runs
//! ([`Timeout`]), what one handled expiry measures ([`Sample`]), and the write-up's
//! unit check of an extended timeout.

use crate::waits::{TIMERS, watch};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Every timeout's length, as in the write-up.
pub const TIMEOUT: Duration = Duration::from_millis(20);

// ANCHOR: timeout
/// A timeout whose deadline can be pushed back while it runs, from any thread: the
/// deadline is an atomic offset from the creation instant that only grows, so after
/// each sleep the timeout reads it again and sleeps on if it moved.
#[derive(Clone)]
pub struct Timeout {
    created: Instant,
    deadline_ns: Arc<AtomicU64>,
}

impl Timeout {
    pub fn new(after: Duration) -> Timeout {
        Timeout {
            created: Instant::now(),
            deadline_ns: Arc::new(AtomicU64::new(nanos(after))),
        }
    }

    /// Pushes the deadline back by `by`.
    pub fn extend(&self, by: Duration) {
        self.deadline_ns.fetch_add(nanos(by), Ordering::Relaxed);
    }

    pub fn deadline(&self) -> Instant {
        self.created + Duration::from_nanos(self.deadline_ns.load(Ordering::Relaxed))
    }

    /// Completes at or after the deadline, following any extension made meanwhile.
    pub async fn expire(&self) {
        loop {
            let due = self.deadline();
            if Instant::now() >= due {
                return;
            }
            watch(&TIMERS, tokio::time::sleep_until(due.into())).await;
        }
    }
}
// ANCHOR_END: timeout

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One handled timeout.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Own deadline → handled.
    pub lateness: Duration,
    /// Own start → handled.
    pub elapsed: Duration,
    /// Oldest queued start → handled: the write-up's quantity, for the queue designs.
    pub fifo_elapsed: Option<Duration>,
    /// The start popped for this expiry was another timeout's.
    pub mispaired: bool,
    /// Its own deadline, for how far apart a run's deadlines fell.
    pub deadline: Instant,
}

impl Sample {
    pub fn new(start: Instant, deadline: Instant, fifo: Option<Instant>, done: Instant) -> Sample {
        Sample {
            lateness: done.saturating_duration_since(deadline),
            elapsed: done.saturating_duration_since(start),
            fifo_elapsed: fifo.map(|f| done.saturating_duration_since(f)),
            mispaired: fifo.is_some_and(|f| f != start),
            deadline,
        }
    }
}

// ANCHOR: unit_check
/// The write-up's unit check: a 20 ms timeout, extended by 20 ms before anyone
/// waits on it, should fire between 36 and 44 ms after it was created.
pub async fn extended_timeout(first: Duration, extra: Duration) -> Duration {
    let start = Instant::now();
    let timeout = Timeout::new(first);
    timeout.extend(extra);
    timeout.expire().await;
    start.elapsed()
}
// ANCHOR_END: unit_check
