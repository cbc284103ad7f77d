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
    /// A multi-thread runtime's workers: the time each was busy over the timed laps
    /// (nanoseconds, by worker index).
    pub worker_busy_ns: Option<Vec<f64>>,
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

/// What a multi-thread runtime's workers had been busy for so far, one entry per
/// worker, in nanoseconds. From tokio 1.54.1's source: `src/runtime/metrics/runtime.rs`,
/// `RuntimeMetrics::worker_total_busy_duration` (stable on 64-bit targets); a worker
/// counts time from picking up local work until its queues are empty
/// (`src/runtime/scheduler/multi_thread/worker.rs`, `Context::run`,
/// `start/end_processing_scheduled_tasks`), not its search for work or its park. It
/// publishes the total when it parks (`Context::park`) and in `Context::maintenance`,
/// which acts when its tick count is a multiple of `event_interval` (61 for
/// `Builder::new_multi_thread`, `src/runtime/builder.rs`). The tick counts turns of
/// `Context::run`'s loop (`core.tick()`); a turn polls one task, then up to
/// `MAX_LIFO_POLLS_PER_TICK` (3) more from the LIFO slot (`Context::run_task`). So a
/// reading lags a busy worker by up to 61 turns: 61 to 244 polls of its work
/// ([`crate::experiments::BUSY_LAG_POLLS`]).
fn busy_now(rt: &tokio::runtime::RuntimeMetrics) -> Vec<f64> {
    (0..rt.num_workers())
        .map(|w| rt.worker_total_busy_duration(w).as_nanos() as f64)
        .collect()
}

/// The bookkeeping of timed laps, for a loop that runs them one after the other
/// (synchronously in [`drive`], or inside a task on the runtime).
pub struct LapLog {
    out: Laps,
    warmup: usize,
    laps: usize,
    deadline: Instant,
    busy: Option<(tokio::runtime::RuntimeMetrics, Vec<f64>)>,
}

impl LapLog {
    /// `busy`: the runtime whose workers' busy time the timed laps are read with.
    pub fn new(
        tasks: usize,
        (warmup, laps): (usize, usize),
        deadline: Instant,
        busy: Option<tokio::runtime::RuntimeMetrics>,
    ) -> LapLog {
        let out = Laps {
            tasks,
            ns: Vec::with_capacity(laps),
            ..Laps::default()
        };
        let busy = busy.map(|m| (m, Vec::new()));
        LapLog {
            out,
            warmup,
            laps,
            deadline,
            busy,
        }
    }

    /// Laps to run, warm-up included.
    pub fn total(&self) -> usize {
        self.warmup + self.laps
    }

    /// Before lap `i`: the counters are read just before the first timed lap.
    pub fn before(&mut self, i: usize) {
        if i == self.warmup {
            self.out.usage = Usage::now(); // its reads end before the first lap's start
            // Read last: where the laps run in a task, the worker running it also makes
            // the reads above, which must not count as busy over the laps.
            if let Some((m, start)) = &mut self.busy {
                *start = busy_now(m);
            }
        }
    }

    /// After lap `i`, which sent `i as u8`, got `got` back and took `took`: checks the
    /// byte, keeps the time, and says whether to stop (the deadline ends the timed
    /// laps, but not before the first three).
    pub fn after(&mut self, i: usize, got: u8, took: Duration) -> io::Result<bool> {
        round_trip_check(i as u8, got, self.out.tasks)?;
        let ns = took.as_nanos() as f64;
        self.out.first_ns = self.out.first_ns.or(Some(ns)); // lap 0, kept apart
        self.out.laps_run += 1;
        if i >= self.warmup {
            self.out.ns.push(ns);
        }
        let enough = self.out.ns.len() >= self.laps.min(3);
        let stop = Instant::now() >= self.deadline && enough && i + 1 < self.total();
        self.out.stopped_early |= stop;
        Ok(stop)
    }

    /// The laps, with the counters read just after the last one.
    pub fn finish(mut self) -> Laps {
        if let Some((m, start)) = &self.busy {
            let end = busy_now(m); // read first, for the same reason as in `before`
            let went = end.iter().zip(start).map(|(b, a)| (b - a).max(0.0));
            self.out.worker_busy_ns = (start.len() == end.len()).then(|| went.collect());
        }
        self.out.usage = Usage::since(self.out.usage); // its reads start after the last lap
        self.out
    }
}

// ANCHOR: drive
/// Runs `warmup + laps` laps, timing each of the last `laps` from the write into the
/// first link to the read out of the last, and checks that the byte came back
/// increased once per member. Stops at `deadline`, keeping the laps it has (at
/// least three timed laps, so a slow build still gives the round a value). Around
/// the timed laps it reads the process's counters and, given a runtime, its workers'
/// busy time.
pub fn drive(
    tasks: usize,
    (warmup, laps): (usize, usize),
    deadline: Instant,
    busy: Option<tokio::runtime::RuntimeMetrics>,
    mut lap: impl FnMut(u8) -> io::Result<u8>,
) -> io::Result<Laps> {
    let mut log = LapLog::new(tasks, (warmup, laps), deadline, busy);
    for i in 0..log.total() {
        log.before(i);
        let start = Instant::now();
        let got = lap(i as u8)?;
        if log.after(i, got, start.elapsed())? {
            break;
        }
    }
    Ok(log.finish())
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
