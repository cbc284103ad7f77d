//! The throttles of the chapter: one paced run, and each way to pace it (naive, the
//! write-up's debt, compensating, deadline, tokio's interval, governor).

use crate::throttle::{DEFAULT_MAX_LAG, DEFAULT_MIN_SLEEP, Throttle, period_ns};
use serde::{Deserialize, Serialize};
use std::thread;
use std::time::{Duration, Instant};

/// One paced run: calls the operation until `want` operations have started or the
/// clock passes `stop_at`, and records when each one started and how long the
/// operations themselves took (the rest of the run is the throttle's waiting).
pub struct Run<'a> {
    op: &'a mut dyn FnMut(),
    want: usize,
    stop_at: Instant,
    pub starts: Vec<Instant>,
    /// Time spent inside the operations, all of them, and the last one alone.
    pub busy: Duration,
    pub last_busy: Duration,
    /// When the throttle was set up and about to wait for its first operation (a
    /// runtime built, a schedule made): the first start less this is its first wait.
    pub ready: Option<Instant>,
    /// The thread's CPU time at [`Run::ready`] and once the last operation is done
    /// ([`Run::more`] says stop): the pacing's CPU, without the set-up before it (a
    /// runtime built) or the tear-down after (it dropped).
    pub cpu_ready: Option<Duration>,
    pub cpu_done: Option<Duration>,
    /// When [`Run::more`] first said stop.
    pub done: Option<Instant>,
}

impl<'a> Run<'a> {
    pub fn new(op: &'a mut dyn FnMut(), want: usize, stop_at: Instant) -> Run<'a> {
        Run {
            op,
            want,
            stop_at,
            starts: Vec::with_capacity(want.min(1 << 22)),
            busy: Duration::ZERO,
            last_busy: Duration::ZERO,
            ready: None,
            cpu_ready: None,
            cpu_done: None,
            done: None,
        }
    }

    /// Whether to go on: not enough operations yet, and still time. The first "no"
    /// reads the thread's CPU clock: the pacing is done.
    pub fn more(&mut self) -> bool {
        let more = self.starts.len() < self.want && Instant::now() < self.stop_at;
        if !more && self.done.is_none() {
            self.cpu_done = harness::thread_cpu_time();
            self.done = Some(Instant::now());
        }
        more
    }

    /// Notes that the throttle is set up: what comes next is its first wait.
    pub fn ready(&mut self) {
        self.cpu_ready = harness::thread_cpu_time();
        self.ready = Some(Instant::now());
    }

    /// The thread's CPU and the wall time from [`Run::ready`] to the end of its
    /// pacing, in nanoseconds.
    pub fn pacing_ns(&self) -> (Option<f64>, Option<f64>) {
        let ns = |d: Duration| d.as_nanos() as f64;
        let cpu = self.cpu_ready.zip(self.cpu_done);
        let wall = self.ready.zip(self.done);
        (
            cpu.map(|(a, b)| ns(b.saturating_sub(a))),
            wall.map(|(a, b)| ns(b.saturating_duration_since(a))),
        )
    }

    /// Runs the operation once, noting its start and how long it took.
    pub fn op(&mut self) {
        let start = Instant::now();
        self.starts.push(start);
        (self.op)();
        self.last_busy = start.elapsed();
        self.busy += self.last_busy;
    }

    /// Time between the first start and the last that was not spent in an operation:
    /// what the throttle spent waiting (and its own bookkeeping).
    pub fn waiting(&self) -> Duration {
        match (self.starts.first(), self.starts.last()) {
            (Some(&a), Some(&b)) => (b - a).saturating_sub(self.busy - self.last_busy),
            _ => Duration::ZERO,
        }
    }
}

/// The throttles of this chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pacer {
    Naive,
    DebtAsPublished,
    Compensating,
    Deadline,
    TokioBurst,
    TokioDelay,
    TokioSkip,
    Governor,
    GovernorBurst,
}

impl Pacer {
    pub const ALL: [Pacer; 9] = [
        Pacer::Naive,
        Pacer::DebtAsPublished,
        Pacer::Compensating,
        Pacer::Deadline,
        Pacer::TokioBurst,
        Pacer::TokioDelay,
        Pacer::TokioSkip,
        Pacer::Governor,
        Pacer::GovernorBurst,
    ];

    /// The short name tables and sentences use, and its readings are stored under
    /// ([`crate::experiments::RatesKey`]).
    pub fn label(self) -> &'static str {
        match self {
            Pacer::Naive => "naive",
            Pacer::DebtAsPublished => "debt, as published",
            Pacer::Compensating => "compensating",
            Pacer::Deadline => "deadline",
            Pacer::TokioBurst => "tokio Burst",
            Pacer::TokioDelay => "tokio Delay",
            Pacer::TokioSkip => "tokio Skip",
            Pacer::Governor => "governor, burst 1",
            Pacer::GovernorBurst => "governor, 10 ms burst",
        }
    }

    /// Drives `run` at `rate` operations per second with this throttle.
    pub fn drive(self, rate: f64, run: &mut Run<'_>) -> anyhow::Result<()> {
        let period = Duration::from_nanos(period_ns(rate)?.round() as u64);
        // A throttle with set-up of its own (tokio's runtime) marks itself again.
        run.ready();
        match self {
            Pacer::Naive => naive(period, run),
            Pacer::DebtAsPublished => debt_as_published(period, run),
            Pacer::Compensating => compensating(period, DEFAULT_MIN_SLEEP, DEFAULT_MAX_LAG, run),
            Pacer::Deadline => deadline(&mut Throttle::per_second(rate)?, run),
            Pacer::TokioBurst => tokio_interval(period, MissedTickBehavior::Burst, run)?,
            Pacer::TokioDelay => tokio_interval(period, MissedTickBehavior::Delay, run)?,
            Pacer::TokioSkip => tokio_interval(period, MissedTickBehavior::Skip, run)?,
            Pacer::Governor => governor_paced(period, 1, run)?,
            Pacer::GovernorBurst => {
                let burst = (DEFAULT_MAX_LAG.as_nanos() / period.as_nanos().max(1))
                    .clamp(1, u128::from(u32::MAX)) as u32;
                governor_paced(period, burst, run)?
            }
        }
        Ok(())
    }
}

// ANCHOR: naive
/// The first loop anyone writes: do the work, then sleep one period.
pub fn naive(period: Duration, run: &mut Run<'_>) {
    while run.more() {
        run.op();
        thread::sleep(period);
    }
}
// ANCHOR_END: naive

// ANCHOR: debt_as_published
/// The write-up's accumulate-the-debt loop, translated: three clock marks per
/// iteration; the debt grows by the period minus the operation's time and shrinks by
/// the time actually slept; it sleeps only once a whole period is owed.
pub fn debt_as_published(period: Duration, run: &mut Run<'_>) {
    let clock = Instant::now();
    let period_ns = period.as_nanos() as i64;
    let mut owed_ns: i64 = 0;
    while run.more() {
        let before_op = clock.elapsed();
        run.op();
        let after_op = clock.elapsed();
        owed_ns += period_ns - (after_op - before_op).as_nanos() as i64;
        if owed_ns >= period_ns {
            thread::sleep(Duration::from_nanos(owed_ns as u64));
            owed_ns -= (clock.elapsed() - after_op).as_nanos() as i64;
        }
    }
}
// ANCHOR_END: debt_as_published

// ANCHOR: compensating
/// The same idea written properly: one clock reading per iteration, so every
/// nanosecond (operation, sleep, loop overhead) is charged; a floor on the debt so a
/// stall is not repaid by an unbounded burst; and a minimum sleep, decoupled from
/// the period, below which the operation simply goes early.
pub fn compensating(period: Duration, min_sleep: Duration, max_debt: Duration, run: &mut Run<'_>) {
    let (period, min_sleep) = (period.as_nanos() as i64, min_sleep.as_nanos() as i64);
    let max_debt = max_debt.as_nanos() as i64;
    let mut credit: i64 = 0; // > 0: ahead of schedule, < 0: behind
    let mut last = Instant::now();
    while run.more() {
        run.op();
        let now = Instant::now();
        credit += period - (now - last).as_nanos() as i64;
        last = now;
        credit = credit.max(-max_debt);
        if credit >= min_sleep {
            thread::sleep(Duration::from_nanos(credit as u64));
        }
    }
}
// ANCHOR_END: compensating

// ANCHOR: deadline
/// The abstraction the series was heading to: ask the throttle, then work.
pub fn deadline(throttle: &mut Throttle, run: &mut Run<'_>) {
    while run.more() {
        throttle.wait();
        run.op();
    }
}
// ANCHOR_END: deadline

pub use tokio::time::MissedTickBehavior;

// ANCHOR: tokio_interval
/// tokio's `interval` on a current-thread runtime; `behavior` decides what happens
/// to ticks that were missed (Burst: fire them at once, Delay: restart the
/// schedule from now, Skip: jump to the next multiple of the period).
pub fn tokio_interval(
    period: Duration,
    behavior: MissedTickBehavior,
    run: &mut Run<'_>,
) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    rt.block_on(async {
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(behavior);
        // The first tick's wait starts here. tokio 1.54.1: `interval` (time/interval.rs)
        // makes its first deadline `Instant::now()`, and `deadline_to_tick`
        // (runtime/time/source.rs) rounds every deadline up to the end of a millisecond.
        // `Driver::park_internal` (runtime/time/mod.rs) then parks `when - now` whole
        // milliseconds, `now` rounded down: counted from when it parks, so the first
        // tick waits a millisecond and a sleep's overshoot, and each wake-up lands that
        // overshoot later in its millisecond than the last. Ticks drift late until one
        // is a whole millisecond behind: `Wheel::insert` (runtime/time/wheel/mod.rs)
        // finds it due, and it fires at once.
        run.ready();
        while run.more() {
            ticks.tick().await;
            run.op();
        }
    });
    Ok(())
}
// ANCHOR_END: tokio_interval

// ANCHOR: governor
/// governor's GCRA limiter used as a pacer: a burst we choose (`with_period` allows
/// one, `per_second(n)` would allow n), and a sleep for as long as it says when it refuses.
pub fn governor_paced(period: Duration, burst: u32, run: &mut Run<'_>) -> anyhow::Result<()> {
    use governor::clock::{Clock, DefaultClock};
    use governor::{Quota, RateLimiter};
    let quota = Quota::with_period(period)
        .ok_or_else(|| anyhow::anyhow!("governor refuses a zero period"))?
        .allow_burst(std::num::NonZeroU32::new(burst).unwrap_or(std::num::NonZeroU32::MIN));
    let clock = DefaultClock::default();
    let limiter = RateLimiter::direct_with_clock(quota, clock.clone());
    while run.more() {
        while let Err(not_yet) = limiter.check() {
            thread::sleep(not_yet.wait_time_from(clock.now()));
        }
        run.op();
    }
    Ok(())
}
// ANCHOR_END: governor
