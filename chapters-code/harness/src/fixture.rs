//! A tiny chapter for the harness's own tests of worker processes and faults: rounds
//! that succeed, fail, panic, hang, abort or are killed, and rounds with a crowd of
//! threads for the noise sensors. The `fixture-chapter` binary
//! serves it; nothing in the book uses it.

use crate::experiment::{Budget, Chapter, Ctx, Experiment};
use crate::params::Param;
use crate::record::{Reading, Unit};
use crate::{Headline, Results, View};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Serialize, Deserialize)]
pub struct Round {
    pub pid: u32,
    pub round: u32,
    pub n: u64,
}

const N: Param = Param::int("n", 1, 1_000).defaults(3, 5).unit("things");

fn budget(_: crate::Profile) -> Budget {
    Budget::quick(3)
}

fn readings(r: &Round) -> Vec<Reading> {
    vec![Reading::new("steady", Unit::Nanos, 1000.0 + r.n as f64)]
}

fn ok(ctx: &mut Ctx) -> anyhow::Result<Round> {
    ctx.detail("derived", ctx.int(&N) * 2);
    ctx.note(crate::NoteKind::Info, "a note from the round");
    Ok(Round {
        pid: std::process::id(),
        round: ctx.round,
        n: ctx.int(&N),
    })
}

fn sleepy(ctx: &mut Ctx) -> anyhow::Result<Round> {
    std::thread::sleep(Duration::from_millis(60));
    ok(ctx)
}

/// What a brigade's round does to the noise sensors: bursts of short-lived threads that
/// start, spin and end (as when threads are started in batches), then 500 threads that
/// each wake for a moment every 10 ms and sleep again (a brigade's laps), then all of
/// them ending.
fn crowd(ctx: &mut Ctx) -> anyhow::Result<Round> {
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Instant;
    let burst_until = Instant::now() + Duration::from_millis(150);
    while Instant::now() < burst_until {
        let batch: Vec<_> = (0..50)
            .map(|_| {
                std::thread::spawn(|| {
                    let t0 = Instant::now();
                    while t0.elapsed() < Duration::from_millis(1) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        batch
            .into_iter()
            .for_each(|t| t.join().expect("a burst thread"));
    }
    // (lap, over): each member sleeps until the lap changes or the round is over.
    let gate = Arc::new((Mutex::new((0u64, false)), Condvar::new()));
    let members: Vec<_> = (0..500)
        .map(|_| {
            let gate = gate.clone();
            std::thread::spawn(move || {
                let (lock, wake) = &*gate;
                let mut seen = 0;
                loop {
                    let g = wake
                        .wait_while(lock.lock().unwrap(), |g| g.0 == seen && !g.1)
                        .unwrap();
                    if g.1 {
                        return;
                    }
                    seen = g.0;
                }
            })
        })
        .collect();
    let laps_until = Instant::now() + Duration::from_millis(300);
    while Instant::now() < laps_until {
        std::thread::sleep(Duration::from_millis(10));
        gate.0.lock().unwrap().0 += 1;
        gate.1.notify_all();
    }
    gate.0.lock().unwrap().1 = true;
    gate.1.notify_all();
    members
        .into_iter()
        .for_each(|t| t.join().expect("a member"));
    ok(ctx)
}

fn fails(_: &mut Ctx) -> anyhow::Result<Round> {
    anyhow::bail!("no such device")
}

fn panics(_: &mut Ctx) -> anyhow::Result<Round> {
    panic!("boom")
}

fn hangs(_: &mut Ctx) -> anyhow::Result<Round> {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn aborts(_: &mut Ctx) -> anyhow::Result<Round> {
    std::process::abort()
}

fn killed(ctx: &mut Ctx) -> anyhow::Result<Round> {
    #[cfg(unix)]
    if ctx.round == 1 {
        // What the out-of-memory killer does.
        // SAFETY: sends a signal to this very process.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
    ok(ctx)
}

pub static OK: Experiment<Round> = Experiment::new("ok", "rounds that succeed", ok, readings)
    .params(&[N])
    .budget(budget);
pub static SLEEPY: Experiment<Round> =
    Experiment::new("sleepy", "rounds of 60 ms", sleepy, readings)
        .params(&[N])
        .budget(budget);
pub static CROWD: Experiment<Round> = Experiment::new(
    "crowd",
    "bursts of short threads, then 500 that wake every 10 ms",
    crowd,
    readings,
)
.params(&[N])
.budget(|_| Budget::quick(10));
pub static FAILS: Experiment<Round> =
    Experiment::new("fails", "an error", fails, readings).budget(budget);
pub static PANICS: Experiment<Round> =
    Experiment::new("panics", "a panic", panics, readings).budget(budget);
pub static HANGS: Experiment<Round> =
    Experiment::new("hangs", "ignores its deadline", hangs, readings).budget(|_| Budget {
        time: Duration::from_millis(500),
        ..Budget::quick(1)
    });
pub static ABORTS: Experiment<Round> =
    Experiment::new("aborts", "abort()", aborts, readings).budget(budget);
pub static KILLED: Experiment<Round> =
    Experiment::new("killed", "SIGKILL in its second round", killed, readings)
        .params(&[N])
        .budget(budget);
pub static KILLED_ONE: Experiment<Round> = Experiment::new(
    "killed-one-process",
    "SIGKILL in its second round, rounds in one process",
    killed,
    readings,
)
.params(&[N])
.budget(budget)
.one_process("the test says so");
pub static ONE: Experiment<Round> =
    Experiment::new("one-process", "rounds in one process", ok, readings)
        .params(&[N])
        .budget(budget)
        .one_process("the test says so");

fn table(r: &Results<Round>) -> anyhow::Result<String> {
    let e = r
        .estimate("steady")
        .ok_or_else(|| anyhow::anyhow!("no readings"))?;
    Ok(format!(
        "| rounds | median |\n| ---: | ---: |\n| {} | {} |\n",
        r.rounds.len(),
        crate::fmt::fmt_estimate(&e, Unit::Nanos)
    ))
}

pub static TABLE: View<Round> = View::table("steady", &OK, table);
pub static FAILS_TABLE: View<Round> = View::table("fails", &FAILS, table);

pub static CHAPTER: Chapter = Chapter {
    name: "fixture",
    dir: env!("CARGO_MANIFEST_DIR"),
    source_hash: env!("COW_SOURCE_HASH"),
    key: env!("COW_CODE_KEY"),
    build: env!("COW_BUILD"),
    experiments: &[
        &OK,
        &SLEEPY,
        &CROWD,
        &FAILS,
        &PANICS,
        &HANGS,
        &ABORTS,
        &KILLED,
        &KILLED_ONE,
        &ONE,
    ],
    views: &[&TABLE, &FAILS_TABLE],
    headlines: &[Headline::new("steady-median", &OK, "steady").params(&["n"])],
};

/// A good quick record of `chapter`/`experiment` whose rounds read `rounds[i]`, for
/// tests of what reads records (the A/A self-test, `changes`, the appendix): one
/// builder instead of a hand-written `Record` in each of them.
pub fn record_of_readings(
    chapter: &str,
    experiment: &str,
    rounds: Vec<Vec<Reading>>,
) -> crate::Record {
    use crate::record::{FORMAT, Provenance, RoundRecord, Status};
    crate::Record {
        format: FORMAT,
        chapter: chapter.into(),
        experiment: experiment.into(),
        key: "k".into(),
        profile: crate::Profile::Quick,
        build: "release".into(),
        provenance: Provenance {
            machine: crate::machine::Machine::current(),
            measured_at: "now".into(),
            measured_unix: 1,
        },
        params: vec![],
        details: vec![],
        isolation: String::new(),
        status: Status::Ok,
        notes: vec![],
        wall_s: 1.0,
        rounds: rounds
            .into_iter()
            .enumerate()
            .map(|(i, readings)| RoundRecord {
                index: i as u32,
                noise: crate::noise::Noise::default(),
                readings,
                ..RoundRecord::default()
            })
            .collect(),
    }
}
