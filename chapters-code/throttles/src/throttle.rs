//! The deadline throttle: the rates accepted and why one is refused, and the
//! throttle that schedules every operation at an absolute deadline.

use std::fmt;
use std::thread;
use std::time::{Duration, Instant};

/// Why a rate was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum RateError {
    /// NaN or infinite.
    NotFinite(f64),
    /// Zero or negative: no schedule exists.
    NotPositive(f64),
    /// So low that the first wait would outlast any sensible run.
    TooLow(f64),
    /// Faster than one operation per nanosecond, the clock's own resolution.
    TooHigh(f64),
}

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let range =
            format!("a rate must be between {MIN_RATE} and {MAX_RATE:e} operations per second");
        match self {
            RateError::NotFinite(r) => write!(f, "the rate {r} is not a finite number; {range}"),
            RateError::NotPositive(r) => write!(
                f,
                "the rate {r} ops/s is not positive, so no operation could ever be scheduled; {range}"
            ),
            RateError::TooLow(r) => write!(
                f,
                "the rate {r} ops/s would wait more than {} s between operations; {range}",
                (1.0 / MIN_RATE) as u64
            ),
            RateError::TooHigh(r) => write!(
                f,
                "the rate {r:e} ops/s asks for more than one operation per nanosecond; {range}"
            ),
        }
    }
}

impl std::error::Error for RateError {}

/// The slowest rate accepted: one operation every 1,000 s.
pub const MIN_RATE: f64 = 1e-3;
/// The fastest rate accepted: one operation per nanosecond.
pub const MAX_RATE: f64 = 1e9;
/// Waits shorter than this are not slept: the operation goes early instead, and the
/// schedule's debt is paid by a later, longer sleep (batching).
pub const DEFAULT_MIN_SLEEP: Duration = Duration::from_micros(100);
/// How far behind the schedule may fall before older slots are given up: after a
/// stall, at most this much time's worth of operations (and at least one) goes back
/// to back. It must exceed an ordinary sleep's overshoot, or a fast schedule would
/// drop slots on every wake-up.
pub const DEFAULT_MAX_LAG: Duration = Duration::from_millis(10);

/// Checks a rate in operations per second; returns the period in nanoseconds.
pub fn period_ns(rate: f64) -> Result<f64, RateError> {
    if !rate.is_finite() {
        return Err(RateError::NotFinite(rate));
    }
    if rate <= 0.0 {
        return Err(RateError::NotPositive(rate));
    }
    if rate < MIN_RATE {
        return Err(RateError::TooLow(rate));
    }
    if rate > MAX_RATE {
        return Err(RateError::TooHigh(rate));
    }
    Ok(1e9 / rate)
}

// ANCHOR: throttle
/// Holds a fixed rate by scheduling operation `k` at `epoch + k × period`, so a late
/// wake-up is never carried into the next wait: every deadline is absolute.
#[derive(Debug, Clone)]
pub struct Throttle {
    period_ns: f64,
    epoch: Option<Instant>, // set by the first call: operation 0 goes at once
    slot: u64,              // index of the next operation
    max_lag: Duration,      // after a stall, at most this much catch-up (≥ 1 op)
    min_sleep: Duration,    // a shorter wait is not slept: the operation goes early
    dropped: u64,           // slots given up after stalls
    due: Option<Instant>,   // when the operation last let through was due
}
// ANCHOR_END: throttle

// ANCHOR: plan
impl Throttle {
    /// The whole decision, given the time: `None` = go now, `Some(t)` = sleep until
    /// `t`, then go. Pure apart from `self`, so tests can feed it made-up instants.
    pub fn plan(&mut self, now: Instant) -> Option<Instant> {
        let epoch = *self.epoch.get_or_insert(now);
        let behind = now.saturating_duration_since(self.deadline(epoch, self.slot));
        let overdue = behind.as_nanos() as f64 / self.period_ns;
        // Bounded catch-up: if more than `burst` slots are overdue, start a new
        // schedule that leaves exactly `burst` of them to go at once.
        let burst = (self.max_lag.as_nanos() as f64 / self.period_ns)
            .floor()
            .max(1.0);
        if overdue >= burst {
            self.dropped += (overdue.floor() + 1.0 - burst) as u64;
            let back = Duration::from_nanos(((burst - 1.0) * self.period_ns).round() as u64);
            self.epoch = Some(now.checked_sub(back).unwrap_or(now));
            self.slot = 0;
        }
        let due = self.deadline(self.epoch.unwrap_or(now), self.slot);
        self.slot += 1;
        self.due = Some(due);
        // Batching: a wait shorter than `min_sleep` is not slept; the operation goes
        // early and a later, longer sleep puts the schedule right.
        (due > now + self.min_sleep).then_some(due)
    }

    /// Blocks until the next operation is due; returns the moment it was due.
    pub fn wait(&mut self) -> Instant {
        let now = Instant::now();
        if let Some(due) = self.plan(now) {
            sleep_until(due);
        }
        self.due.unwrap_or(now)
    }
}
// ANCHOR_END: plan

impl Throttle {
    pub fn per_second(rate: f64) -> Result<Throttle, RateError> {
        Ok(Throttle {
            period_ns: period_ns(rate)?,
            epoch: None,
            slot: 0,
            max_lag: DEFAULT_MAX_LAG,
            min_sleep: DEFAULT_MIN_SLEEP,
            dropped: 0,
            due: None,
        })
    }

    /// After a stall, at most `lag` worth of overdue operations (at least one) go
    /// back to back; older slots are given up and counted by [`Throttle::dropped`].
    pub fn max_lag(mut self, lag: Duration) -> Throttle {
        self.max_lag = lag;
        self
    }

    /// The shortest wait worth a sleep; shorter ones let the operation go early.
    pub fn min_sleep(mut self, d: Duration) -> Throttle {
        self.min_sleep = d;
        self
    }

    fn deadline(&self, epoch: Instant, slot: u64) -> Instant {
        epoch + Duration::from_nanos((slot as f64 * self.period_ns).round() as u64)
    }

    /// Slots given up after stalls.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period_ns.round() as u64)
    }
}

/// Sleeps until `t` (at once if it has passed). The sleep may overshoot; the caller's
/// next deadline is still measured from the schedule, not from when it woke.
pub fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        thread::sleep(t - now);
    }
}
