//! A tiny chapter for the harness's own tests of worker processes and faults: rounds
//! that succeed, fail, panic, hang, abort or are killed, and rounds with a crowd of
//! threads for the noise sensors. The `fixture-chapter` binary
//! serves it; nothing in the book uses it.

use crate::experiment::{Budget, Chapter, Ctx, Experiment};
use crate::params::Param;
use crate::record::{Keyed, Reading, ReadingKey, Unit};
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

/// The fixture's one reading.
#[derive(Debug)]
pub struct Steady;

impl ReadingKey for Steady {
    fn stored(&self) -> String {
        "steady".into()
    }
}

impl Keyed for Round {
    type Key = Steady;
}

/// A round's `n` is its parameter's value.
impl crate::bounds::RoundBounds for Round {
    fn check_bounds(&self, params: &crate::bounds::Params) -> Result<(), String> {
        params.limit(&N).check("n", "things", self.n)
    }
}

fn readings(r: &Round) -> Vec<Reading> {
    vec![Reading::of(&Steady, Unit::Nanos, 1000.0 + r.n as f64)]
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
        .estimate(&Steady)
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
    headlines: &[Headline::new("steady-median", &OK, &Steady).params(&["n"])],
    findings: &[&STEADY_FIGURE],
};

/// The fixture's one finding: its one reading as a figure.
pub static STEADY_FIGURE: crate::Finding<Round> =
    crate::Finding::new("steady-figure", &OK, "A fixture's steady reading", |r| {
        crate::Evidence::reading(r, "steady", &Steady)
    })
    .always("Expect about a microsecond")
    .why(crate::Why::Counter("the fixture reads a constant"));

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

// ---------------------------------------------------------------------------------------
// Golden records: the fixed results a chapter's golden test (`tests/golden.rs`) renders
// every view from, kept in the repository under `tests/golden/records/`.
// ---------------------------------------------------------------------------------------

/// Where a chapter keeps its golden records: `<crate>/tests/golden/records`, one
/// `<experiment>.json` per experiment.
pub fn golden_dir(chapter: &Chapter) -> std::path::PathBuf {
    std::path::Path::new(chapter.dir).join("tests/golden/records")
}

/// The machine every golden record names: plainly a fixture, the same whichever machine
/// made the records, so that regenerating them changes only what was measured.
pub fn golden_machine() -> crate::machine::Machine {
    use crate::machine::{Clock, Idle, IdleState, Machine, Preemption, Underneath};
    let state = |name: &str, latency_us, residency_us| IdleState {
        name: name.into(),
        latency_us: Some(latency_us),
        residency_us: Some(residency_us),
        disabled: Some(false),
    };
    Machine {
        cpu: "Golden Fixture CPU @ 2.00GHz".into(),
        logical_cpus: 2,
        virtualised: Some(true),
        // As records older than the typed field: the golden records stay as they are.
        target_os: None,
        os: "Linux (golden fixture)".into(),
        kernel: "6.1.0-golden".into(),
        arch: "x86_64".into(),
        rustc: "rustc 1.95.0".into(),
        build: "release".into(),
        underneath: Some(Underneath {
            os: "linux".into(),
            clock: Clock {
                source: Some("kvm-clock".into()),
                available: Some("kvm-clock tsc acpi_pm".into()),
                step_ns: Some(30.0),
                read_ns: Some(25.0),
                reads: 10_000,
                getres_ns: Some(1.0),
            },
            idle: Idle {
                driver: Some("haltpoll".into()),
                governor: Some("haltpoll".into()),
                states: vec![state("POLL", 0, 0), state("haltpoll", 1, 1)],
                guest_halt_poll: vec![("guest_halt_poll_ns".into(), "200000".into())],
                kvm_halt_poll_ns: None,
            },
            preemption: Some(Preemption {
                model: "voluntary".into(),
                how: "the kernel's build configuration".into(),
            }),
            cpuid: Some(crate::machine::CpuidCost {
                ns: 1_200.0,
                batches: 20,
                per_batch: 50,
                hypervisor: true,
            }),
        }),
    }
}

/// The date every golden record was "measured" at.
pub const GOLDEN_MEASURED_AT: &str = "2025-01-02 03:04:05 UTC";

/// Fixes in a freshly measured record what came from this machine, this build and this
/// moment rather than from the rounds: the code key (`golden`), the build (`release`,
/// as the book measures), the machine ([`golden_machine`]), the date
/// ([`GOLDEN_MEASURED_AT`]) and the time taken (rounded to whole seconds, at least 1).
/// Then the record is made to pass the validation at the door, as the cache does before
/// it stores one.
pub fn pin_golden(record: &mut crate::Record) {
    record.key = "golden".into();
    record.build = "release".into();
    record.provenance = crate::record::Provenance {
        machine: golden_machine(),
        measured_at: GOLDEN_MEASURED_AT.into(),
        measured_unix: 1_735_787_045,
    };
    record.wall_s = record.wall_s.round().max(1.0);
    crate::validate::sanitize(record);
}

/// Measures every experiment of `chapter` afresh in this process with the quick profile
/// (exactly `rounds` rounds, with the `overrides` each experiment is given), pins what
/// the machine and the clock gave ([`pin_golden`]) and writes the records into
/// [`golden_dir`], compact as the cache writes them (a round's pooled samples make
/// pretty-printed records three times larger). A run that did not end well is refused:
/// the golden pages are those of good results.
pub fn write_golden_records(
    chapter: &Chapter,
    rounds: u32,
    overrides: impl Fn(&str) -> Vec<crate::params::Override>,
) -> anyhow::Result<()> {
    use crate::runner::{Mode, Request, rounds_in_process};
    let dir = golden_dir(chapter);
    std::fs::create_dir_all(&dir)?;
    for exp in chapter.experiments {
        let overrides = overrides(exp.name());
        let req = Request {
            chapter,
            experiment: *exp,
            profile: crate::Profile::Quick,
            overrides: &overrides,
            mode: Mode::InProcess,
        };
        let mut record = rounds_in_process(&req, rounds, Duration::from_secs(600))
            .map_err(|e| anyhow::anyhow!("{}: {e}", exp.name()))?;
        anyhow::ensure!(
            record.is_ok() && record.rounds.len() == rounds as usize,
            "{}: {} rounds, {}",
            exp.name(),
            record.rounds.len(),
            record.status.describe()
        );
        pin_golden(&mut record);
        crate::validate::record(&record).map_err(|e| anyhow::anyhow!("{}: {e}", exp.name()))?;
        let mut json = serde_json::to_string(&record)?;
        json.push('\n');
        std::fs::write(dir.join(format!("{}.json", exp.name())), json)?;
    }
    Ok(())
}

/// The golden records of `chapter`, one per experiment in the registry's order, each
/// read through the validation at the door ([`crate::cache::read_checked`]) and checked
/// to be the registry's chapter and experiment, a good result, pinned
/// ([`pin_golden`]): nothing in them comes from the machine that reads them.
pub fn golden_records(chapter: &Chapter) -> anyhow::Result<Vec<crate::Record>> {
    let dir = golden_dir(chapter);
    chapter
        .experiments
        .iter()
        .map(|exp| {
            let path = dir.join(format!("{}.json", exp.name()));
            let r = crate::cache::read_checked(&path).map_err(|e| {
                anyhow::anyhow!(
                    "{}: {e} (regenerate the golden records: see the chapter's tests/golden.rs)",
                    path.display()
                )
            })?;
            anyhow::ensure!(
                r.chapter == chapter.name && r.experiment == exp.name(),
                "{} holds {}/{}",
                path.display(),
                r.chapter,
                r.experiment
            );
            anyhow::ensure!(r.is_ok(), "{}: {}", path.display(), r.status.describe());
            anyhow::ensure!(
                r.key == "golden"
                    && r.provenance.machine == golden_machine()
                    && r.provenance.measured_at == GOLDEN_MEASURED_AT,
                "{} is not pinned (fixture::pin_golden)",
                path.display()
            );
            Ok(r)
        })
        .collect()
}

/// The golden records of `chapter`, and its records in the folder `COW_MEASURED_RECORDS`
/// names, that their experiment's door ([`crate::AnyExperiment::check_rounds`])
/// refuses, each with why. Says on stderr how many measured records it read.
pub fn out_of_bounds(chapter: &Chapter) -> Vec<String> {
    let mut records: Vec<(String, crate::Record)> = match golden_records(chapter) {
        Ok(rs) => rs
            .into_iter()
            .map(|r| (format!("golden {}", r.experiment), r))
            .collect(),
        Err(e) => return vec![format!("{e:#}")],
    };
    if let Some(dir) = std::env::var_os("COW_MEASURED_RECORDS") {
        let dir = std::path::Path::new(&dir).join(chapter.name);
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                match crate::cache::read_checked(&path) {
                    Ok(r) => records.push((path.display().to_string(), r)),
                    Err(e) => return vec![format!("{}: {e}", path.display())],
                }
                n += 1;
            }
        }
        eprintln!(
            "{}: {n} measured records read from {}",
            chapter.name,
            dir.display()
        );
    }
    records
        .into_iter()
        .filter_map(|(name, r)| {
            let Some(exp) = chapter.experiment(&r.experiment) else {
                return Some(format!("{name}: no experiment {}", r.experiment));
            };
            exp.check_rounds(&r)
                .err()
                .map(|why| format!("{name}: {why}"))
        })
        .collect()
}

/// `chapter`'s golden record of `experiment` with `grow` applied to its first round's
/// data, and what its experiment's door says of it: the chapters' tests that a count
/// beyond its parameter's bound is refused.
pub fn golden_grown(
    chapter: &Chapter,
    experiment: &str,
    grow: impl Fn(&mut serde_json::Value),
) -> Result<(), String> {
    let exp = chapter
        .experiment(experiment)
        .expect("an experiment of the chapter");
    let mut r = golden_records(chapter)
        .expect("golden records")
        .into_iter()
        .find(|r| r.experiment == experiment)
        .expect("a golden record of the experiment");
    assert_eq!(exp.check_rounds(&r), Ok(()), "the golden record passes");
    grow(&mut r.rounds[0].data);
    exp.check_rounds(&r)
}

/// Every view of `chapter`'s registry with the golden record of its experiment, named
/// as its snapshot: `<table|plot>-<view>`.
pub fn golden_views(
    chapter: &Chapter,
) -> anyhow::Result<
    Vec<(
        String,
        &'static dyn crate::experiment::AnyView,
        crate::Record,
    )>,
> {
    let records = golden_records(chapter)?;
    chapter
        .views
        .iter()
        .map(|v| {
            let record = records
                .iter()
                .find(|r| r.experiment == v.experiment())
                .ok_or_else(|| anyhow::anyhow!("no golden record of `{}`", v.experiment()))?;
            let kind = match v.kind() {
                crate::experiment::ViewKind::Table => "table",
                crate::experiment::ViewKind::Plot => "plot",
            };
            Ok((format!("{kind}-{}", v.name()), *v, record.clone()))
        })
        .collect()
}

/// The chapter's decision table (`table answer`) from its findings over the golden
/// records, as the page shows it; `None` for a chapter without findings.
pub fn golden_answer(chapter: &Chapter) -> anyhow::Result<Option<String>> {
    if !chapter.findings.iter().any(|f| !f.is_threat()) {
        return Ok(None);
    }
    let records = golden_records(chapter)?;
    Ok(Some(crate::answer::chapter_answer(
        chapter.findings,
        &records,
    )))
}

/// The chapter's threats table (`table threats`) over the golden records; `None` for a
/// chapter that declares no threat.
pub fn golden_threats(chapter: &Chapter) -> anyhow::Result<Option<String>> {
    if !chapter.findings.iter().any(|f| f.is_threat()) {
        return Ok(None);
    }
    let records = golden_records(chapter)?;
    Ok(Some(crate::answer::chapter_threats(
        chapter.findings,
        &records,
    )))
}

/// The snapshots in `<crate_dir>/tests/snapshots/` of a golden test (`golden__*.snap`)
/// that name none of `names`: left behind by a view that was renamed or removed.
pub fn stale_snapshots(crate_dir: &str, names: &[&str]) -> Vec<String> {
    let dir = std::path::Path::new(crate_dir).join("tests/snapshots");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|f| {
            f.strip_prefix("golden__")
                .and_then(|f| f.strip_suffix(".snap"))
                .is_some_and(|n| !names.contains(&n))
        })
        .collect();
    out.sort();
    out
}

/// `insta::assert_snapshot!(name, page)` into `tests/snapshots/golden__<name>.snap`,
/// whatever module the assertion sits in: a crate's integration tests are modules of one
/// binary (`tests/main.rs`), where insta's default name would be `it__golden__<name>`.
#[macro_export]
macro_rules! golden_snapshot {
    ($name:expr, $page:expr) => {
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(format!("golden__{}", $name), $page)
        })
    };
}

/// The golden tests of a chapter, one line in its `tests/golden.rs`:
/// `harness::golden_tests!(brigades::CHAPTER);` (the crate needs `insta` as a
/// dev-dependency). It expands, in the calling test file, into three tests:
///
/// - `every_view_reads_as_its_snapshot`: every view of the registry rendered as the page
///   shows it from the golden records, each compared with its `insta` snapshot (all are
///   compared before the test fails, naming those that differ);
/// - `every_snapshot_is_of_a_view_in_the_registry`: no snapshot of a view that is gone;
/// - `write_the_golden_records` (ignored): with `COW_GOLDEN_RECORDS=1`, measures every
///   experiment afresh (quick profile, 6 rounds) and writes the records, pinned.
///
/// A macro rather than a function: `insta` finds the snapshot folder from the file the
/// assertion is written in, so the assertion must expand in the chapter's own test.
#[macro_export]
macro_rules! golden_tests {
    ($chapter:path) => {
        #[test]
        fn every_view_reads_as_its_snapshot() {
            assert!(
                std::env::var_os("COW_THRESHOLD").is_none(),
                "unset COW_THRESHOLD: the snapshots hold the verdicts of the default threshold"
            );
            let views =
                $crate::fixture::golden_views(&$chapter).unwrap_or_else(|e| panic!("{e:#}"));
            let mut differ = Vec::new();
            // The decision table, from the chapter's findings over every golden record.
            if let Some(page) =
                $crate::fixture::golden_answer(&$chapter).unwrap_or_else(|e| panic!("{e:#}"))
            {
                assert!(
                    !page.contains("no figure:"),
                    "a finding has no figure:\n{page}"
                );
                if std::panic::catch_unwind(|| $crate::golden_snapshot!("table-answer", page))
                    .is_err()
                {
                    differ.push("table-answer".to_string());
                }
            }
            if let Some(page) =
                $crate::fixture::golden_threats(&$chapter).unwrap_or_else(|e| panic!("{e:#}"))
            {
                assert!(
                    !page.contains("no figure:"),
                    "a threat has no figure:\n{page}"
                );
                if std::panic::catch_unwind(|| $crate::golden_snapshot!("table-threats", page))
                    .is_err()
                {
                    differ.push("table-threats".to_string());
                }
            }
            for (name, view, record) in views {
                let page = $crate::render::render_view(
                    view,
                    &$crate::cache::Shown {
                        record,
                        newer_failures: vec![],
                    },
                );
                assert!(
                    !page.contains("No result for"),
                    "{name} did not render:\n{page}"
                );
                // Every view is compared before the test fails, naming all that differ.
                if std::panic::catch_unwind(|| $crate::golden_snapshot!(name.as_str(), page))
                    .is_err()
                {
                    differ.push(name);
                }
            }
            assert!(
                differ.is_empty(),
                "these views read differently: {differ:?}"
            );
        }

        #[test]
        fn every_snapshot_is_of_a_view_in_the_registry() {
            let views =
                $crate::fixture::golden_views(&$chapter).unwrap_or_else(|e| panic!("{e:#}"));
            let mut names: Vec<&str> = views.iter().map(|(name, _, _)| name.as_str()).collect();
            if $chapter.findings.iter().any(|f| !f.is_threat()) {
                names.push("table-answer");
            }
            if $chapter.findings.iter().any(|f| f.is_threat()) {
                names.push("table-threats");
            }
            let stale = $crate::fixture::stale_snapshots($chapter.dir, &names);
            assert!(
                stale.is_empty(),
                "snapshots of no view: {stale:?}; remove them"
            );
        }

        /// Issue 35: every golden record passes its experiment's own door (rounds
        /// within the profile's budget, readings the code gives, counts within what
        /// the parameters make), and so does every record of this chapter in the
        /// folder `COW_MEASURED_RECORDS` names (a copy of a measured results folder).
        #[test]
        fn every_golden_and_measured_record_is_within_its_bounds() {
            let refused = $crate::fixture::out_of_bounds(&$chapter);
            assert!(refused.is_empty(), "{refused:#?}");
        }

        #[test]
        #[ignore = "measures and writes the golden records: COW_GOLDEN_RECORDS=1 … -- --ignored"]
        fn write_the_golden_records() {
            if std::env::var_os("COW_GOLDEN_RECORDS").is_none() {
                eprintln!("set COW_GOLDEN_RECORDS=1 to measure and write the golden records");
                return;
            }
            $crate::fixture::write_golden_records(&$chapter, 6, |_| vec![]).unwrap();
        }
    };
}
