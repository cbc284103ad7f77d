//! The floor: what a hand-over between two spinning threads costs through one atomic,
//! with no kernel, queue or system call, and what one read of the clock costs.

use crate::probe::pin;
use crate::variant::Placement;
use crate::wait::{Attempt, Spun, spin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Round trips timed between two clock reads in each floor sample. A read costs tens
/// of nanoseconds, about a floor's one-way time: timed one round trip at a time, the
/// reads' cost sits in every sample; over this many, it is shared out 2,000 ways.
pub const ROUND_TRIPS_PER_SAMPLE: usize = 1_000;

// ANCHOR: floor
/// The floor: two threads hand a counter back and forth through one atomic, both
/// spinning. One writes an odd number and spins until the other (`echo`) answers with
/// the next even one. A sample: `per_sample` round trips between two clock reads, over
/// twice their number (one way); the time bound can cut the last one short.
pub fn atomic_ping_pong(trips: usize, per_sample: usize, on: Placement, end: Instant) -> Vec<f64> {
    let (ball, per_sample) = (AtomicU64::new(0), per_sample.max(1));
    let mut one_way_ns = Vec::with_capacity(trips / per_sample);
    std::thread::scope(|s| {
        s.spawn(|| echo(&ball, on));
        s.spawn(|| {
            pin(on, 0);
            let mut sent = 1; // the odd number to send next
            for n in 0..trips / per_sample {
                let (t0, mut done) = (Instant::now(), 0);
                while done < per_sample {
                    ball.store(sent, Ordering::Release);
                    let answered = spin(end, || match ball.load(Ordering::Acquire) {
                        v if v == sent + 1 => Attempt::Got(()),
                        _ => Attempt::Empty,
                    });
                    if !matches!(answered, Spun::Got(())) {
                        break; // the time bound
                    }
                    (sent, done) = (sent + 2, done + 1);
                }
                if done > 0 {
                    one_way_ns.push(t0.elapsed().as_nanos() as f64 / (2 * done) as f64);
                }
                let look = (n * per_sample) % 4096 < per_sample; // the clock, now and then
                if done < per_sample || look && Instant::now() >= end {
                    break;
                }
            }
            ball.store(STOP, Ordering::Release);
        });
    });
    one_way_ns
}
// ANCHOR_END: floor

/// What one `Instant::now()` costs here: batches of reads timed together, the median
/// batch's time per read.
pub fn clock_read_ns() -> f64 {
    const READS: u32 = 10_000;
    let mut per_read: Vec<f64> = (0..21)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..READS {
                std::hint::black_box(Instant::now());
            }
            t0.elapsed().as_nanos() as f64 / f64::from(READS)
        })
        .collect();
    per_read.sort_by(f64::total_cmp);
    harness::stats::median_sorted(&per_read)
}

// ANCHOR: floor_echo
/// Tells `echo` that the ping-pong is over.
const STOP: u64 = u64::MAX;

/// The other end of the floor: answers every odd number with the next even one,
/// spinning in between, until it reads `STOP`.
fn echo(ball: &AtomicU64, placement: Placement) {
    pin(placement, 1);
    let mut seen = 0;
    loop {
        let v = ball.load(Ordering::Acquire);
        if v == STOP {
            return;
        }
        if v != seen && v % 2 == 1 {
            seen = v + 1;
            ball.store(seen, Ordering::Release);
        }
        std::hint::spin_loop();
    }
}
// ANCHOR_END: floor_echo
