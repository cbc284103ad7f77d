//! tokio's millisecond timer, and a 1 ms sleep in context: where tokio's ticks lie,
//! waiting for a phase of a tick, one sleep begun at a chosen phase, and the two
//! readings of tokio's timer that say how late such a sleep ends.

use serde::{Deserialize, Serialize};
use std::io;
use std::time::{Duration, Instant};

/// One millisecond in nanoseconds: tokio's tick.
pub const TICK_NS: u64 = 1_000_000;

// ANCHOR: ticks
/// Where tokio's ticks lie. tokio's timer counts whole milliseconds (*ticks*) from the
/// moment its runtime was built (tokio 1.54.1, `src/runtime/time/source.rs`:
/// `TimeSource::new` stores `clock.now()`; `runtime/time/mod.rs`, `Driver::new`, calls
/// it while `build()` creates the time driver), so that moment
/// lies between two clock reads around `build()`; the tick grid is taken from their
/// midpoint, so a phase is known to within half their distance.
pub struct Ticks {
    pub origin: Instant,
    /// The distance between the two clock reads around `build()`.
    pub uncertainty: Duration,
}

/// A current-thread runtime with only the timer enabled, as every tokio loop in the
/// book builds it, and where its ticks start.
pub fn timer_runtime() -> io::Result<(tokio::runtime::Runtime, Ticks)> {
    let before = Instant::now();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let after = Instant::now();
    let uncertainty = after - before;
    let origin = before + uncertainty / 2;
    Ok((
        rt,
        Ticks {
            origin,
            uncertainty,
        },
    ))
}
// ANCHOR_END: ticks

// ANCHOR: phase
impl Ticks {
    /// How far into its tick `t` lies, in nanoseconds.
    pub fn phase_ns(&self, t: Instant) -> u64 {
        let since = t.saturating_duration_since(self.origin).as_nanos();
        (since % u128::from(TICK_NS)) as u64
    }

    /// Waits until the clock is `phase_ns` into a tick and returns that moment: sleeps
    /// until shortly before a moment at that phase at least 1.2 ms away, then spins the
    /// rest, so that the thread arrives from a sleep, as a sleeping loop does, having
    /// spun for a fraction of a millisecond at most (on time, about a quarter).
    pub fn wait_for_phase(&self, phase_ns: u64) -> Instant {
        let tick = Duration::from_nanos(TICK_NS);
        let soon = Instant::now() + Duration::from_micros(1_200);
        let wait = (phase_ns + TICK_NS - self.phase_ns(soon)) % TICK_NS;
        let mut target = soon + Duration::from_nanos(wait);
        let early = target - Duration::from_micros(250);
        std::thread::sleep(early.saturating_duration_since(Instant::now()));
        while Instant::now() > target {
            target += tick;
        }
        let mut now = Instant::now();
        while now < target {
            std::hint::spin_loop();
            now = Instant::now();
        }
        now
    }
}
// ANCHOR_END: phase

/// How a 1 ms-scale sleep of the `millisecond` experiment is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MsArm {
    /// `tokio::time::sleep(request)`, begun at a chosen phase of a tick.
    Tokio { request_us: u32, bin: u32 },
    /// `std::thread::sleep(request)`, begun at a chosen phase (the control).
    Std { request_us: u32, bin: u32 },
    /// `std::thread::sleep(1 ms)` right after a sleep of `before_ms`.
    After { before_ms: u32 },
}

/// The phase bins: tenths of a tick.
pub const PHASE_BINS: u32 = 10;

/// The middle of a phase bin, in nanoseconds into the tick.
pub fn bin_centre_ns(bin: u32) -> u64 {
    (u64::from(bin) * 2 + 1) * TICK_NS / (2 * u64::from(PHASE_BINS))
}

/// One timed sleep of the `millisecond` experiment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhasedSleep {
    /// How far into its tick the sleep began (ns).
    pub phase_ns: f64,
    /// Actual minus requested length (ns).
    pub late_ns: f64,
}

// ANCHOR: phased_sleep
/// One sleep begun `phase_ns` into a tick: spin to that moment, then sleep, and time
/// the sleep from that moment.
pub fn phased_sleep(
    rt: &tokio::runtime::Runtime,
    ticks: &Ticks,
    tokio: bool,
    request: Duration,
    phase_ns: u64,
) -> PhasedSleep {
    let (start, end) = if tokio {
        rt.block_on(async {
            let start = ticks.wait_for_phase(phase_ns);
            tokio::time::sleep(request).await;
            (start, Instant::now())
        })
    } else {
        let start = ticks.wait_for_phase(phase_ns);
        std::thread::sleep(request);
        (start, Instant::now())
    };
    PhasedSleep {
        phase_ns: ticks.phase_ns(start) as f64,
        late_ns: (end - start).as_nanos() as f64 - request.as_nanos() as f64,
    }
}
// ANCHOR_END: phased_sleep

// ANCHOR: tick_models
/// How late a tokio sleep of `request_ns` begun `phase_ns` into a tick ends, before
/// the wake-up's own cost: *whole ticks*, what tokio 1.54.1's source does, and *next
/// tick*, the contrast. Both round the deadline up to the end of its millisecond
/// (`src/runtime/time/source.rs`, `TimeSource::deadline_to_tick`: + 999,999 ns, then
/// whole ms). *Whole ticks* (`src/runtime/time/mod.rs`, `Driver::park_internal`): the
/// driver parks for the whole ticks from the tick it is in (`TimeSource::now`, rounded
/// down) to the deadline's, counted from the moment it parks, and `Handle::process`
/// fires the timer once the tick, rounded down, reaches the deadline's; so it wakes as
/// far past the deadline's tick as the sleep began past its own. *Next tick*: a timer
/// that woke at the deadline's tick.
pub fn tick_models(request_ns: f64, phase_ns: f64) -> (f64, f64) {
    let tick = TICK_NS as f64;
    let deadline = phase_ns + request_ns;
    let when = (deadline / tick).ceil() * tick;
    let next_tick = when - deadline;
    let whole_ticks = phase_ns + when - deadline;
    (next_tick, whole_ticks)
}
// ANCHOR_END: tick_models
