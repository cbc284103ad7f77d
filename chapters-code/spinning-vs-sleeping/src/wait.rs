//! The ways a receiver waits: one attempt without waiting, a bounded spin, and the
//! receive that blocks, spins or does both on any std transport's [`Link`].

use crate::variant::{Msg, Wait};
use std::time::{Duration, Instant};

/// The result of one attempt to take a message without waiting.
pub enum Attempt<T> {
    Got(T),
    Empty,
    Closed,
}

/// How a spin ended.
pub enum Spun<T> {
    Got(T),
    Closed,
    TimedOut,
}

// ANCHOR: spin
/// Busy-waits: calls `attempt` until it yields a message, the other side closes, or
/// `until` passes. The clock is read only every 1,024 attempts so that checking the
/// time does not slow the loop down; `spin_loop` tells the CPU this is a wait.
pub fn spin<T>(until: Instant, mut attempt: impl FnMut() -> Attempt<T>) -> Spun<T> {
    let mut polls: u32 = 0;
    loop {
        match attempt() {
            Attempt::Got(v) => return Spun::Got(v),
            Attempt::Closed => return Spun::Closed,
            Attempt::Empty => {}
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(1024) && Instant::now() >= until {
            return Spun::TimedOut;
        }
        std::hint::spin_loop();
    }
}
// ANCHOR_END: spin

/// The receiving end of a std transport, able to wait in each of the ways.
pub trait Link {
    /// Takes a message if one is there, without waiting.
    fn attempt(&mut self) -> Attempt<Msg>;
    /// Sleeps in the kernel until a message arrives or the sender closes its end, with
    /// no time bound: the write-up's blocking receive.
    fn block(&mut self) -> Option<Msg>;
    /// Sleeps in the kernel until a message arrives or `until` passes.
    fn block_until(&mut self, until: Instant) -> Option<Msg>;
}

// ANCHOR: receive
/// Receives one message, waiting as `wait` says. Blocking has no time bound (the
/// sender closing its end ends it); the bounded wait, the spin and the hybrid's spin
/// end at `until`. The hybrid spins for `hybrid_spin` and only then blocks.
pub fn receive(
    link: &mut impl Link,
    wait: Wait,
    hybrid_spin: Duration,
    until: Instant,
) -> Option<Msg> {
    match wait {
        Wait::Block => link.block(),
        Wait::BlockBounded => link.block_until(until),
        Wait::Spin => match spin(until, || link.attempt()) {
            Spun::Got(msg) => Some(msg),
            Spun::Closed | Spun::TimedOut => None,
        },
        Wait::Hybrid => {
            let spin_until = (Instant::now() + hybrid_spin).min(until);
            match spin(spin_until, || link.attempt()) {
                Spun::Got(msg) => Some(msg),
                Spun::Closed => None,
                Spun::TimedOut => link.block(),
            }
        }
    }
}
// ANCHOR_END: receive

pub(crate) fn time_left(until: Instant) -> Option<Duration> {
    let left = until.saturating_duration_since(Instant::now());
    (!left.is_zero()).then_some(left)
}
