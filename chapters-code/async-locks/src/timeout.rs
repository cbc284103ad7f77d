//! A timeout whose deadline can be pushed back, built on `tokio::time`.
//!
//! The write-up used a small crate for this; its behaviour is simple enough to
//! re-create: a timeout knows its deadline, `extend` moves the deadline later, and
//! `expire` completes once the (latest) deadline has passed. Because the deadline
//! only ever moves later, waking up, re-reading it and sleeping again is enough.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

// ANCHOR: timeout
/// A timeout that may be extended while it runs, from any thread.
#[derive(Clone)]
pub struct Timeout {
    created: Instant,
    /// Nanoseconds from `created` to the deadline; it only grows.
    deadline_ns: Arc<AtomicU64>,
}

impl Timeout {
    /// A timeout that expires `after` from now.
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

    /// The current deadline: the instant this timeout is due.
    pub fn deadline(&self) -> Instant {
        self.created + Duration::from_nanos(self.deadline_ns.load(Ordering::Relaxed))
    }

    /// Completes at or after the deadline, following any extensions made meanwhile.
    pub async fn expire(&self) {
        loop {
            let due = self.deadline();
            if Instant::now() >= due {
                return;
            }
            tokio::time::sleep_until(due.into()).await;
        }
    }
}
// ANCHOR_END: timeout

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
