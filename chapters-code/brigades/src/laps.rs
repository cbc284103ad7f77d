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
    /// A multi-thread runtime's workers: how many times each parked over the timed
    /// laps (tokio's `worker_park_count`), by worker index. Each park ends in a wake-up.
    pub worker_parks: Option<Vec<f64>>,
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
/// `Builder::new_multi_thread`, `src/runtime/builder.rs`). So a reading may lag a busy
/// worker; [`Probes`] reads it only while every worker is parked.
fn busy_now(rt: &tokio::runtime::RuntimeMetrics) -> Vec<f64> {
    (0..rt.num_workers())
        .map(|w| rt.worker_total_busy_duration(w).as_nanos() as f64)
        .collect()
}

/// How many times each worker has parked so far. tokio 1.54.1,
/// `src/runtime/metrics/runtime.rs`, `worker_park_count` (stable on 64-bit targets),
/// counted in `src/runtime/metrics/batch.rs`, `about_to_park`, and published with the
/// busy time just before the park (`worker.rs`, `Context::park`).
fn parks_now(rt: &tokio::runtime::RuntimeMetrics) -> Vec<f64> {
    (0..rt.num_workers())
        .map(|w| rt.worker_park_count(w) as f64)
        .collect()
}

/// Waits, up to 20 ms, until every worker is parked: tokio 1.54.1 publishes a
/// worker's counters as it parks, and its park/unpark count is odd while it is parked
/// (`src/runtime/metrics/runtime.rs`, `worker_park_unpark_count`; the count is published
/// again at once after the wake-up, `worker.rs`, `Context::park` calls
/// `Core::maintenance`, which submits). A read taken then lags no work. Says whether
/// every worker was parked.
fn all_parked(rt: &tokio::runtime::RuntimeMetrics) -> bool {
    let until = Instant::now() + Duration::from_millis(20);
    loop {
        let parked = (0..rt.num_workers()).all(|w| rt.worker_park_unpark_count(w) % 2 == 1);
        if parked || Instant::now() >= until {
            return parked;
        }
        std::thread::yield_now();
    }
}

/// The counters read around the timed laps: the process's usage and, given a
/// multi-thread runtime, its workers' busy time and parks. Where the laps run in a
/// task, [`crate::tasks`] reads them from the `block_on` thread, which is none of the
/// runtime's workers, while every worker is parked.
pub struct Probes {
    usage: Option<Usage>,
    busy: Option<(tokio::runtime::RuntimeMetrics, Vec<f64>, Vec<f64>)>,
}

impl Probes {
    pub fn new(busy: Option<tokio::runtime::RuntimeMetrics>) -> Probes {
        let busy = busy.map(|m| (m, Vec::new(), Vec::new()));
        Probes { usage: None, busy }
    }

    /// Just before the first timed lap, from a thread that is none of the runtime's
    /// workers: lets every worker park, reads their counters, then the process's.
    pub fn start(&mut self) {
        if let Some((m, busy, parks)) = &mut self.busy {
            // A round whose workers did not all park gives no worker readings.
            if all_parked(m) {
                (*busy, *parks) = (busy_now(m), parks_now(m));
            }
        }
        self.usage = Usage::now(); // its reads end before the first lap's start
    }

    /// Just after the last timed lap, into `out`, in the reverse order: the wait for
    /// the workers to park stays out of the process's window.
    pub fn finish(self, out: &mut Laps) {
        out.usage = Usage::since(self.usage); // its reads start after the last lap
        if let Some((m, busy, parks)) = &self.busy {
            let parked = all_parked(m) && !busy.is_empty();
            let went = |a: &[f64], b: Vec<f64>| {
                let d = b.iter().zip(a).map(|(b, a)| (b - a).max(0.0));
                (parked && a.len() == b.len()).then(|| d.collect())
            };
            out.worker_busy_ns = went(busy, busy_now(m));
            out.worker_parks = went(parks, parks_now(m));
        }
    }
}

/// The bookkeeping of timed laps, for a loop that runs them one after the other
/// (synchronously in [`drive`], or inside a task on the runtime).
pub struct LapLog {
    out: Laps,
    warmup: usize,
    laps: usize,
    deadline: Instant,
    /// `None` where another thread reads the counters.
    probes: Option<Probes>,
}

impl LapLog {
    /// `probes`: the counters this loop reads around its timed laps (`None` where
    /// another thread reads them).
    pub fn new(
        tasks: usize,
        (warmup, laps): (usize, usize),
        deadline: Instant,
        probes: Option<Probes>,
    ) -> LapLog {
        let out = Laps {
            tasks,
            ns: Vec::with_capacity(laps),
            ..Laps::default()
        };
        LapLog {
            out,
            warmup,
            laps,
            deadline,
            probes,
        }
    }

    /// Laps to run, warm-up included.
    pub fn total(&self) -> usize {
        self.warmup + self.laps
    }

    /// Whether lap `i` is the first timed one.
    pub fn first_timed(&self, i: usize) -> bool {
        i == self.warmup
    }

    /// Before lap `i`: the counters are read just before the first timed lap.
    pub fn before(&mut self, i: usize) {
        if let Some(p) = self.probes.as_mut().filter(|_| i == self.warmup) {
            p.start();
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
        if let Some(p) = self.probes.take() {
            p.finish(&mut self.out);
        }
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
    let mut log = LapLog::new(tasks, (warmup, laps), deadline, Some(Probes::new(busy)));
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
