//! Chapter 4, *Operation throttles*: holding a fixed operation rate, from the naive
//! `op; sleep(period)` loop to deadline scheduling, and what a load generator that
//! waits the wrong way hides (coordinated omission).
//!
//! `lib.rs` holds the mechanism: the sleep sweep and the write-up's loop, the operation
//! every throttle drives (a datagram on loopback), the throttles themselves, and the
//! closed-loop client of the coordinated-omission test; and the names of the headline
//! figures. `experiments.rs` holds the rounds; `views.rs` the tables and plots;
//! `chapter.rs` the chapter's registry (its experiments, views and headlines), kept
//! apart so that the mechanism imports nothing that builds on it. Every wait here is
//! bounded: by one period, by a per-request patience, or by the round's deadline.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::{self, ErrorKind};
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

pub mod experiments;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

use harness::Counters;

/// The names of the chapter's headline figures: the guide, the appendix and the
/// comparisons read them by these constants, so a renamed figure fails to compile.
pub mod headline {
    pub const NAIVE_RATE_AT_10K: &str = "naive-rate-at-10k";
    pub const DEADLINE_RATE_AT_10K: &str = "deadline-rate-at-10k";
    pub const GOVERNOR_BURST_RATE_AT_10K: &str = "governor-burst-rate-at-10k";
    pub const SLEEP_1MS_LATENESS: &str = "sleep-1ms-lateness";
}

// ------------------------------------------------------------------ sleeping, timed

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

// ------------------------------------------------------------------- the operation

/// Where the operation's datagrams go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sink {
    /// A loopback port nobody holds, as in the write-up (which sent to the QOTD port,
    /// 17, with nothing listening): the kernel answers each datagram with an ICMP "port
    /// unreachable", and no thread of this process is woken.
    ClosedPort,
    /// A socket of this process with a thread that reads every datagram: each send
    /// wakes that thread. The write-up had no such thread; this is the control that
    /// shows what one costs.
    InProcess,
}

// ANCHOR: operation
/// The operation every throttle drives: send a 4-byte datagram on loopback.
///
/// The socket is not connected: on Linux a connected UDP socket reports an ICMP
/// "port unreachable" as an error on its *next* send, which then sends nothing, so
/// every other operation would be skipped. An unconnected socket is not told (nothing
/// here asks for the error queue), so every send goes out; errors are still counted.
pub struct UdpOp {
    socket: UdpSocket,
    to: SocketAddr,
    pub sent: u64,
    pub errors: u64,
    sink: Option<thread::JoinHandle<u64>>,
    stop: Arc<AtomicBool>,
}

impl UdpOp {
    /// Sends to a loopback port that nobody holds: one bound to port 0 and released.
    pub fn new() -> anyhow::Result<UdpOp> {
        let to = UdpSocket::bind("127.0.0.1:0")?.local_addr()?; // the socket closes here
        Ok(UdpOp {
            socket: UdpSocket::bind("127.0.0.1:0")?,
            to,
            sent: 0,
            errors: 0,
            sink: None,
            stop: Arc::new(AtomicBool::new(false)),
        })
    }
}
// ANCHOR_END: operation

impl UdpOp {
    /// Sends to a socket of this process whose thread reads and counts every datagram.
    pub fn with_reader() -> anyhow::Result<UdpOp> {
        let rx = UdpSocket::bind("127.0.0.1:0")?;
        rx.set_read_timeout(Some(Duration::from_millis(100)))?;
        let to = rx.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sink = thread::Builder::new()
            .name("udp-sink".into())
            .spawn(move || {
                let mut buf = [0u8; 64];
                let mut received = 0;
                loop {
                    match rx.recv(&mut buf) {
                        // The empty datagram `finish` sends last: everything sent
                        // before it is already here.
                        Ok(0) => return received,
                        Ok(_) => received += 1,
                        Err(_) if flag.load(Ordering::Relaxed) => return received,
                        Err(_) => {}
                    }
                }
            })?;
        Ok(UdpOp {
            socket: UdpSocket::bind("127.0.0.1:0")?,
            to,
            sent: 0,
            errors: 0,
            sink: Some(sink),
            stop,
        })
    }

    /// The operation for a [`Sink`].
    pub fn to(sink: Sink) -> anyhow::Result<UdpOp> {
        match sink {
            Sink::ClosedPort => UdpOp::new(),
            Sink::InProcess => UdpOp::with_reader(),
        }
    }

    pub fn send(&mut self) {
        match self.socket.send_to(b"QOTD", self.to) {
            Ok(_) => self.sent += 1,
            Err(_) => self.errors += 1,
        }
    }

    /// Stops the reading thread, if there is one, and returns how many datagrams it
    /// received (`None`: nobody reads them).
    pub fn finish(mut self) -> Option<u64> {
        self.stop_sink()
    }

    fn stop_sink(&mut self) -> Option<u64> {
        let sink = self.sink.take()?;
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.socket.send_to(&[], self.to);
        Some(sink.join().unwrap_or(0))
    }
}

impl Drop for UdpOp {
    fn drop(&mut self) {
        self.stop_sink();
    }
}

// -------------------------------------------------------------- the deadline throttle

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

// ------------------------------------------------------------------- the throttles

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
        }
    }

    /// Whether to go on: not enough operations yet, and still time.
    pub fn more(&self) -> bool {
        self.starts.len() < self.want && Instant::now() < self.stop_at
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

    /// The short name tables and sentences use (its readings are stored as
    /// [`crate::experiments::RatesKey`] spells them).
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
        while run.more() {
            ticks.tick().await;
            run.op();
        }
    });
    Ok(())
}
// ANCHOR_END: tokio_interval

// ANCHOR: governor
/// governor's GCRA limiter used as a pacer: a burst we choose (its default is a
/// whole second's worth), and a sleep for as long as it says when it refuses.
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

// ------------------------------------------------------------- coordinated omission

/// A UDP echo server on 127.0.0.1 (port 0) that, once in every `stall_every`
/// requests, sleeps `stall` before answering: a garbage-collection pause, a
/// page-fault storm, a lock held too long. It answers with the request's own bytes
/// (its sequence number).
pub struct StallingEcho {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<Served>>,
}

/// What the stalling server did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    pub requests: u64,
    pub pauses: u64,
}

/// Whether the server pauses before answering its `n`th request (1-based): the
/// middle request of every block of `every`, so that no pause falls on the last
/// request of a round, where it would delay no request after it.
pub fn pauses_at(n: u64, every: u64) -> bool {
    every > 0 && n % every == every / 2
}

impl StallingEcho {
    pub fn start(stall_every: u64, stall: Duration) -> anyhow::Result<StallingEcho> {
        anyhow::ensure!(stall_every > 0, "stall_every must be at least 1");
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let addr = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::Builder::new()
            .name("stalling-echo".into())
            .spawn(move || {
                let mut buf = [0u8; 64];
                let mut served = Served::default();
                while !flag.load(Ordering::Relaxed) {
                    let Ok((len, from)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    if len == 0 {
                        break; // `stop` wakes the server with an empty datagram
                    }
                    served.requests += 1;
                    if pauses_at(served.requests, stall_every) {
                        served.pauses += 1;
                        // The pause; `stop` cuts it short, so stopping never waits it out.
                        let until = Instant::now() + stall;
                        while !flag.load(Ordering::Relaxed) && Instant::now() < until {
                            thread::park_timeout(until.saturating_duration_since(Instant::now()));
                        }
                    }
                    let _ = socket.send_to(&buf[..len], from);
                }
                served
            })?;
        Ok(StallingEcho {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the server; returns how many requests it served, and its pauses.
    pub fn stop(mut self) -> Served {
        self.halt()
    }

    fn halt(&mut self) -> Served {
        let Some(t) = self.thread.take() else {
            return Served::default();
        };
        self.stop.store(true, Ordering::Relaxed);
        t.thread().unpark();
        if let Ok(s) = UdpSocket::bind("127.0.0.1:0") {
            let _ = s.send_to(&[], self.addr);
        }
        t.join().unwrap_or_default()
    }
}

impl Drop for StallingEcho {
    fn drop(&mut self) {
        self.halt();
    }
}

/// What the closed-loop client is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct OmissionPlan {
    pub rate: f64,
    pub requests: u64,
    /// How long the client waits for an answer before it counts the request as lost.
    pub patience: Duration,
    /// Everything stops here, finished or not.
    pub deadline: Instant,
}

/// One answered request: when the schedule wanted it sent, when it was sent, and when
/// its answer came.
#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    pub due: Instant,
    pub sent: Instant,
    pub answered: Instant,
}

/// What the client saw.
#[derive(Debug, Clone, Default)]
pub struct Exchanges {
    pub answered: Vec<Exchange>,
    /// Requests sent whose answer did not come within the patience.
    pub lost: u64,
    /// Answers that came after their request had been given up (and were skipped).
    pub late: u64,
    /// Requests sent (answered or not).
    pub sent: u64,
    /// The deadline ended the run before every request was sent.
    pub stopped: bool,
}

// ANCHOR: await_reply
/// Waits until `give_up` for the answer to request `seq`. An answer to an earlier
/// request, one the client already gave up on, is counted as late and skipped: a
/// slow answer is never taken for a later request's, so one stall cannot shift every
/// later latency by one.
pub fn await_reply(
    socket: &UdpSocket,
    seq: u64,
    give_up: Instant,
    late: &mut u64,
) -> io::Result<Option<Instant>> {
    let mut buf = [0u8; 16];
    loop {
        let left = give_up.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        socket.set_read_timeout(Some(left))?;
        match socket.recv(&mut buf) {
            Ok(8) => match u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")) {
                s if s == seq => return Ok(Some(Instant::now())),
                s if s < seq => *late += 1,
                _ => {} // not an answer to anything sent: ignore it
            },
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
// ANCHOR_END: await_reply

// ANCHOR: omission
/// Sends request `k` when the schedule says (a deadline throttle with no catch-up
/// bound: every request goes, late if need be), waits for its answer, and keeps
/// both moments its latency can be measured from: when it went out, and when it
/// was due.
pub fn closed_loop_client(server: SocketAddr, plan: &OmissionPlan) -> anyhow::Result<Exchanges> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.connect(server)?;
    let mut throttle = Throttle::per_second(plan.rate)?
        .max_lag(Duration::MAX)
        .min_sleep(Duration::ZERO);
    let mut out = Exchanges::default();
    for seq in 0..plan.requests {
        if Instant::now() >= plan.deadline {
            out.stopped = true;
            break;
        }
        let due = throttle.wait();
        let sent = Instant::now();
        socket.send(&seq.to_le_bytes())?;
        out.sent += 1;
        let give_up = (sent + plan.patience).min(plan.deadline);
        match await_reply(&socket, seq, give_up, &mut out.late)? {
            Some(answered) => out.answered.push(Exchange {
                due,
                sent,
                answered,
            }),
            None => out.lost += 1,
        }
    }
    Ok(out)
}
// ANCHOR_END: omission

/// HdrHistogram's `record_correct`, over plain samples: a latency longer than the
/// intended interval implies requests that were never sent while it lasted; each
/// gets a sample one interval shorter than the one before, down to the interval.
pub fn with_omitted(samples: &[f64], interval_ns: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(samples.len());
    for &v in samples {
        out.push(v);
        if interval_ns > 0.0 {
            let mut missing = v - interval_ns;
            while missing >= interval_ns {
                out.push(missing);
                missing -= interval_ns;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omitted_samples_form_a_staircase() {
        assert_eq!(
            with_omitted(&[0.5, 3.5, 1.0], 1.0),
            vec![0.5, 3.5, 2.5, 1.5, 1.0]
        );
        assert_eq!(with_omitted(&[5.0], 0.0), vec![5.0]);
    }

    #[test]
    fn pauses_fall_mid_block_never_on_the_last_request() {
        let at = |every: u64, n: u64| (1..=n).filter(|&k| pauses_at(k, every)).collect::<Vec<_>>();
        assert_eq!(at(100, 200), vec![50, 150]);
        assert_eq!(at(200, 1_000), vec![100, 300, 500, 700, 900]);
        assert_eq!(at(1, 3), vec![1, 2, 3]);
        assert_eq!(at(3, 7), vec![1, 4, 7]);
        assert!(at(0, 5).is_empty());
    }

    /// A late answer is skipped and counted, and the awaited one is still found.
    #[test]
    fn a_late_answer_is_never_taken_for_the_next() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client.connect(server.local_addr().unwrap()).unwrap();
        let to = client.local_addr().unwrap();
        for seq in [3u64, 4, 7] {
            server.send_to(&seq.to_le_bytes(), to).unwrap();
        }
        let mut late = 0;
        let far = Instant::now() + Duration::from_secs(5);
        assert!(await_reply(&client, 7, far, &mut late).unwrap().is_some());
        assert_eq!(late, 2);
        // Nothing more comes: the wait ends at its bound.
        let soon = Instant::now() + Duration::from_millis(30);
        assert!(await_reply(&client, 8, soon, &mut late).unwrap().is_none());
        assert!(Instant::now() >= soon);
    }
}
