//! Timing a brigade's laps: the laps of one brigade ([`Laps`]), the loop that drives
//! and checks them ([`drive`]), and what a lap that never comes back turns into.

use crate::os::Usage;
use std::io;
use std::time::{Duration, Instant};

/// The timed laps of one brigade.
#[derive(Debug, Clone, Default)]
pub struct Laps {
    /// Members in the chain (threads or tasks).
    pub tasks: usize,
    /// Nanoseconds per lap, one entry per timed lap (warm-up laps are not kept).
    pub ns: Vec<f64>,
    /// What the whole process spent during the timed laps (getrusage), where available.
    pub usage: Option<Usage>,
    /// The deadline came before every requested lap ran.
    pub stopped_early: bool,
    /// Laps that completed, warm-up included.
    pub laps_run: u64,
    /// Resident memory the brigade added (read after its laps, before it closed).
    pub resident_added: Option<f64>,
    /// The very first lap through the fresh brigade (a warm-up lap where there are
    /// any), kept apart: the threats table sets it beside the steady laps.
    pub first_ns: Option<f64>,
    /// Building the brigade (its links, threads or tasks), timed apart before the
    /// first lap: no member is created inside a timed lap.
    pub build_ns: Option<f64>,
}

fn round_trip_check(sent: u8, got: u8, tasks: usize) -> io::Result<()> {
    let want = sent.wrapping_add(tasks as u8);
    if got == want {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the byte came back as {got}, expected {want}: a member skipped it"),
        ))
    }
}

// ANCHOR: drive
/// Runs `warmup + laps` laps, timing each of the last `laps` from the write into the
/// first link to the read out of the last, and checks that the byte came back
/// increased once per member. Stops at `deadline`, keeping the laps it has (at
/// least three timed laps, so a slow build still gives the round a value).
pub fn drive(
    tasks: usize,
    warmup: usize,
    laps: usize,
    deadline: Instant,
    mut lap: impl FnMut(u8) -> io::Result<u8>,
) -> io::Result<Laps> {
    let mut out = Laps {
        tasks,
        ns: Vec::with_capacity(laps),
        ..Laps::default()
    };
    for i in 0..warmup + laps {
        if i == warmup {
            out.usage = Usage::now(); // its reads end before the first lap's start
        }
        let sent = i as u8;
        let start = Instant::now();
        let got = lap(sent)?;
        let took = start.elapsed();
        round_trip_check(sent, got, tasks)?;
        out.first_ns = out.first_ns.or(Some(took.as_nanos() as f64)); // lap 0, kept apart
        out.laps_run += 1;
        if i >= warmup {
            out.ns.push(took.as_nanos() as f64);
        }
        // The deadline ends the timed laps, but not before the first three.
        let enough = out.ns.len() >= laps.min(3);
        if Instant::now() >= deadline && enough && i + 1 < warmup + laps {
            out.stopped_early = true;
            break;
        }
    }
    out.usage = Usage::since(out.usage); // its reads start after the last lap's end
    Ok(out)
}
// ANCHOR_END: drive

/// How long a lap may take past the deadline before the brigade counts as stalled.
pub(crate) const STALL_GRACE: Duration = Duration::from_secs(2);

pub(crate) fn stalled(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            "the byte did not come back before the time bound: the brigade stalled",
        ),
        _ => e,
    }
}
