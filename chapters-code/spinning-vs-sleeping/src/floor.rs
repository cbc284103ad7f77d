//! The floor: what a hand-over between two spinning threads costs through one atomic,
//! with no kernel, queue or system call, and what one read of the clock costs.

use crate::probe::pin;
use crate::variant::Placement;
use crate::wait::{Attempt, Spun, spin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

// ANCHOR: floor
/// The floor: two threads hand a counter back and forth through one atomic, both
/// spinning. One writes an odd number and spins until the other (`echo`) answers
/// with the next even one. Half a round trip is the least a hand-over between two
/// threads can cost on this machine; no kernel, no queue, no syscall is involved.
pub fn atomic_ping_pong(round_trips: usize, placement: Placement, deadline: Instant) -> Vec<f64> {
    let ball = AtomicU64::new(0);
    let mut one_way_ns = Vec::with_capacity(round_trips);
    std::thread::scope(|s| {
        s.spawn(|| echo(&ball, placement));
        s.spawn(|| {
            pin(placement, 0);
            for i in 0..round_trips as u64 {
                let t0 = Instant::now();
                ball.store(2 * i + 1, Ordering::Release);
                let answer = 2 * i + 2;
                let answered = spin(deadline, || {
                    if ball.load(Ordering::Acquire) == answer {
                        Attempt::Got(())
                    } else {
                        Attempt::Empty
                    }
                });
                if !matches!(answered, Spun::Got(())) {
                    break; // the time bound
                }
                one_way_ns.push(t0.elapsed().as_nanos() as f64 / 2.0);
                if i % 4096 == 0 && Instant::now() >= deadline {
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
