//! What every chapter of *The Cost of Waiting* shares: statistics over rounds, noise
//! sensors, worker processes, parameters, the machine description, profiles, the
//! result cache, Markdown tables, SVG plots, reference numbers and the command line.
//! Nothing chapter-specific lives here.
//!
//! The flow of a number: a chapter's [`Experiment`] runs one round in a worker process
//! and returns its typed data → the [`runner`] repeats rounds within the budget and
//! records each round's noise → a [`record::Record`] with its provenance is cached →
//! a [`View`] renders the typed rounds as Markdown or SVG → cmdrun puts it in the page.

pub mod aa;
pub mod answer;
pub mod bounds;
pub mod cache;
pub mod cli;
pub mod comparison;
pub mod counters;
pub mod env;
pub mod evidence;
pub mod experiment;
pub mod finding;
#[doc(hidden)]
pub mod fixture;
pub mod fmt;
pub mod key;
pub mod machine;
pub mod machine_words;
pub mod noise;
pub mod notes;
pub mod params;
pub mod plot;
pub mod privacy;
pub mod procfs;
pub mod profile;
pub mod provenance;
pub mod record;
pub mod reference;
pub mod render;
pub mod rounds;
pub mod runner;
pub mod safe;
pub mod stats;
pub mod table;
pub mod tails;
pub mod unit;
pub mod usage;
pub mod validate;
pub mod worker;

pub use bounds::{Limit, RoundBounds};
pub use counters::Counters;
pub use experiment::{
    AnyExperiment, AnyView, Budget, Chapter, Ctx, Experiment, Figure, Headline, Results, View,
    ViewKind,
};
pub use finding::{AnyFinding, Evidence, Finding, Why};
pub use params::Param;
pub use profile::Profile;
pub use record::{Keyed, NoteKind, Reading, ReadingKey, Record, Unit};
pub use stats::{Dist, Estimate, Summary, Welford};

/// The suffix of an A/A twin's reading key: a second arm that runs exactly the code of
/// the reading whose key precedes the suffix, in the same rounds. "How we measure"
/// compares every such pair with the book's verdict rule, which should find no
/// difference between them.
pub const AA_TWIN: &str = " (A/A twin)";

/// Time spent on the calling thread's CPU (user + system), where the OS tells it. On
/// Windows `GetThreadTimes`, which counts in whole clock ticks (`counters::windows`).
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    #[cfg(windows)]
    {
        counters::windows::cpu_time(counters::Scope::Thread)
    }
    #[cfg(not(windows))]
    {
        cpu_clock(
            #[cfg(unix)]
            libc::CLOCK_THREAD_CPUTIME_ID,
        )
    }
}

/// The smallest step the calling thread's CPU clock was seen to take, found by spinning
/// on it for at most `limit` of wall time; `None` where the OS gives no such clock, or
/// where it did not step twice within `limit`.
///
/// A loop whose CPU time is shorter than one step can read 0. On Linux the clock counts
/// nanoseconds, and the step seen is about one read of it. Windows adds CPU time to a
/// thread at clock interrupts: Microsoft's pages on interrupt time put a clock tick at
/// 0.5 to 15.625 ms, depending on the hardware. The page of `GetThreadTimes` states no
/// grain, so it is measured here rather than assumed. Wine 8.0 is not Windows: under
/// it the step measured here was 10 ms, the Linux host's clock tick at 100 Hz (Wine
/// takes a thread's times from the host, as we read it), which is why a loop of 500
/// short calls read 0 there.
pub fn thread_cpu_step(limit: std::time::Duration) -> Option<std::time::Duration> {
    let start = std::time::Instant::now();
    let mut last = thread_cpu_time()?;
    // The first change ends a step begun before we looked; the next ones are whole.
    let (mut edges, mut best) = (0u32, None::<std::time::Duration>);
    while start.elapsed() < limit {
        let now = thread_cpu_time()?;
        if now > last {
            if edges > 0 {
                let step = now - last;
                best = Some(best.map_or(step, |b| b.min(step)));
            }
            edges += 1;
            last = now;
            if edges == 3 {
                break;
            }
        }
    }
    best
}

/// Time spent on the CPU by the whole process (all threads, user + system).
pub fn process_cpu_time() -> Option<std::time::Duration> {
    #[cfg(windows)]
    {
        counters::windows::cpu_time(counters::Scope::Process)
    }
    #[cfg(not(windows))]
    {
        cpu_clock(
            #[cfg(unix)]
            libc::CLOCK_PROCESS_CPUTIME_ID,
        )
    }
}

#[cfg(unix)]
fn cpu_clock(clock: libc::clockid_t) -> Option<std::time::Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into `ts`.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0)
        .then(|| std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

#[cfg(not(any(unix, windows)))]
fn cpu_clock() -> Option<std::time::Duration> {
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_clocks_advance_when_spinning() {
        let (Some(t0), Some(p0)) = (super::thread_cpu_time(), super::process_cpu_time()) else {
            return; // not available on this OS
        };
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        assert!(super::thread_cpu_time().unwrap() > t0);
        assert!(super::process_cpu_time().unwrap() > p0);
    }

    #[test]
    fn the_cpu_clock_step_is_found_and_is_short_here() {
        let limit = std::time::Duration::from_millis(200);
        match super::thread_cpu_step(limit) {
            // Linux and macOS count CPU time finer than a millisecond.
            Some(step) if cfg!(unix) => {
                assert!(step > std::time::Duration::ZERO);
                assert!(step < std::time::Duration::from_millis(1), "{step:?}");
            }
            Some(step) => assert!(step > std::time::Duration::ZERO),
            None => assert!(super::thread_cpu_time().is_none() || !cfg!(unix)),
        }
    }
}
