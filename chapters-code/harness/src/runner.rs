//! Running an experiment: rounds until the budget says stop, each in a worker process
//! (or all in one, where the experiment says why), assembled into a [`Record`].

use crate::cache::{self, MeasureLock, Shown};
use crate::experiment::{AnyExperiment, Budget, Chapter, Isolation};
use crate::machine::Machine;
use crate::params::{self, Override, ParamValue};
use crate::profile::Profile;
use crate::record::{FORMAT, Provenance, Record};
use crate::worker;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

pub use crate::record::RoundEnd;
pub use crate::rounds::{
    Exec, InProcess, Job, Plan, Progress, Rounds, ended_early_note, interleave, panic_message,
    run_rounds,
};

/// Where rounds run.
#[derive(Debug, Clone)]
pub enum Mode {
    /// `exe __worker <chapter> …`: a fresh process per round (or one for all rounds).
    Workers { exe: PathBuf },
    /// In this process, on this thread (tests; and inside a one-process worker).
    InProcess,
}

impl Mode {
    /// Workers run by this very executable. On Linux that is `/proc/self/exe`, the
    /// file this process was started from even if a rebuild has since replaced it
    /// (workers also check the code key they are given).
    pub fn this_executable() -> Mode {
        if cfg!(target_os = "linux") && std::path::Path::new("/proc/self/exe").exists() {
            return Mode::Workers {
                exe: PathBuf::from("/proc/self/exe"),
            };
        }
        match std::env::current_exe() {
            Ok(exe) => Mode::Workers { exe },
            Err(_) => Mode::InProcess,
        }
    }
}

fn utc_now() -> (String, u64) {
    let now = SystemTime::now();
    let s = humantime::format_rfc3339_seconds(now).to_string();
    let unix = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    (s.replace('T', " ").replace('Z', " UTC"), unix)
}

/// What to measure.
pub struct Request<'a> {
    pub chapter: &'a Chapter,
    pub experiment: &'a dyn AnyExperiment,
    pub profile: Profile,
    pub overrides: &'a [Override],
    pub mode: Mode,
}

/// Measures one experiment and returns its record (not stored). The parameters are
/// resolved first: a bad override is an `Err` with the reason.
pub fn measure(req: &Request) -> Result<Record, String> {
    let exp = req.experiment;
    let values = params::resolve(exp.name(), exp.params(), req.profile, req.overrides)?;
    let budget = exp.budget(req.profile);
    let label = format!("{}/{}", req.chapter.name, exp.name());
    eprintln!(
        "measuring {label} (profile {}, budget {} s, {})",
        req.profile,
        budget.time.as_secs(),
        exp.isolation().describe()
    );
    let bar = progress_bar(&label, budget);
    let start = Instant::now();
    let rounds = match (&req.mode, exp.isolation()) {
        (Mode::InProcess, _) => {
            let mut exec = InProcess {
                experiment: exp,
                profile: req.profile,
                params: values.clone(),
            };
            run_rounds(budget, &mut exec, |r| tick(&bar, start, r.index + 1))
        }
        (Mode::Workers { exe }, Isolation::FreshProcess) => {
            let mut exec = worker::PerRound {
                exe,
                chapter: req.chapter,
                experiment: exp.name(),
                profile: req.profile,
                overrides: req.overrides,
            };
            run_rounds(budget, &mut exec, |r| tick(&bar, start, r.index + 1))
        }
        (Mode::Workers { exe }, Isolation::OneProcess(_)) => worker::all_rounds(
            exe,
            req.chapter,
            exp.name(),
            req.profile,
            req.overrides,
            budget,
        ),
    };
    bar.finish_and_clear();
    Ok(record_of(req, values, rounds, start.elapsed()))
}

/// The record of a run of rounds of `req`'s experiment, measured with `params`
/// (resolved from its overrides), which took `took`.
pub fn record_of(req: &Request, params: Vec<ParamValue>, rounds: Rounds, took: Duration) -> Record {
    let (measured_at, measured_unix) = utc_now();
    Record {
        format: FORMAT,
        chapter: req.chapter.name.into(),
        experiment: req.experiment.name().into(),
        key: req.chapter.key.into(),
        profile: req.profile,
        build: req.chapter.build.into(),
        provenance: Provenance {
            machine: Machine::current(),
            measured_at,
            measured_unix,
        },
        params,
        details: rounds.details,
        isolation: req.experiment.isolation().describe(),
        status: rounds.status,
        notes: rounds.notes,
        wall_s: took.as_secs_f64(),
        rounds: rounds.rounds,
    }
}

/// Exactly `rounds` rounds of an experiment in this process, as a record: for tests
/// that render a chapter's views from real rounds without worker processes. The
/// budget's time is `bound`; a round that fails ends the run, as in [`run_rounds`].
pub fn rounds_in_process(req: &Request, rounds: u32, bound: Duration) -> Result<Record, String> {
    let exp = req.experiment;
    let values = params::resolve(exp.name(), exp.params(), req.profile, req.overrides)?;
    let budget = Budget {
        time: bound,
        min_rounds: rounds,
        max_rounds: rounds,
        target: 0.0,
    };
    let start = Instant::now();
    let mut exec = InProcess {
        experiment: exp,
        profile: req.profile,
        params: values.clone(),
    };
    let run = run_rounds(budget, &mut exec, |_| {});
    Ok(record_of(req, values, run, start.elapsed()))
}

fn progress_bar(label: &str, budget: Budget) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(budget.time.as_millis().max(1) as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix:.bold} {wide_msg} [{bar:30}] {elapsed_precise} ETA {eta}",
        )
        .expect("a valid progress template")
        .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    bar.set_message("round 1");
    bar
}

fn tick(bar: &indicatif::ProgressBar, start: Instant, rounds_done: u32) {
    bar.set_position(start.elapsed().as_millis() as u64);
    bar.set_message(format!("round {}", rounds_done + 1));
}

/// `--missing`'s question, asked by a chapter's `run` and by the book-wide session
/// alike: the line saying `exp` is up to date, when a good result for this code and
/// these parameter values is stored (full or quick); `None` when it must be measured.
pub fn up_to_date(
    chapter: &Chapter,
    exp: &dyn AnyExperiment,
    values: &[ParamValue],
    dir: &Path,
) -> Option<String> {
    let s = cache::best(
        dir,
        chapter.name,
        exp.name(),
        chapter.key,
        chapter.build,
        params::tag(values),
        &|r| exp.check_rounds(r),
    )?;
    s.record.is_ok().then(|| {
        format!(
            "{}/{}: up to date ({} result of {})",
            chapter.name,
            exp.name(),
            s.record.profile,
            s.record.provenance.measured_at
        )
    })
}

/// The record to show for `exp` with `overrides`: the best good one stored for the
/// code, or, if none, a fresh measurement in `profile` (stored). A stored failure
/// with no good result is measured again once per build ([`cache::claim_retry`]). Measuring takes the
/// machine's measuring lock; a page that can show a stored result never waits.
pub fn obtain(
    chapter: &Chapter,
    exp: &dyn AnyExperiment,
    profile: Profile,
    overrides: &[Override],
    dir: &Path,
    mode: Mode,
) -> Result<Shown, String> {
    let values = params::resolve(exp.name(), exp.params(), profile, overrides)?;
    let find = || {
        cache::best(
            dir,
            chapter.name,
            exp.name(),
            chapter.key,
            chapter.build,
            params::tag(&values),
            &|r| exp.check_rounds(r),
        )
    };
    // A stored failure with no good result is measured again, once per build.
    let retry = match find() {
        Some(shown) if shown.record.is_ok() || !cache::claim_retry(dir, &shown.record) => {
            return Ok(shown);
        }
        Some(shown) => Some(shown.record.provenance.measured_unix),
        None => None,
    };
    // A folder that cannot take the result (the results folder or the chapter's) is
    // said now, not after measuring.
    cache::check_writable_chapters(dir, &[chapter.name]).map_err(|e| format!("{e:#}"))?;
    let _lock = MeasureLock::acquire().map_err(|e| format!("{e:#}"))?;
    // Someone may have measured it while we waited.
    if let Some(shown) = find()
        && (shown.record.is_ok() || Some(shown.record.provenance.measured_unix) != retry)
    {
        return Ok(shown);
    }
    let record = measure(&Request {
        chapter,
        experiment: exp,
        profile,
        overrides,
        mode,
    })?;
    if let Err(e) = cache::store(dir, &record) {
        eprintln!("warning: could not store the result: {e:#}");
    }
    Ok(find().unwrap_or(Shown {
        record,
        newer_failures: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Note, NoteKind, Reading, RoundRecord, Status, Unit};

    /// Rounds that take `ms` each and read `value(index)`.
    struct Fake {
        ms: u64,
        value: fn(u32) -> f64,
        end_at: Option<(u32, fn() -> RoundEnd)>,
    }

    impl Exec for Fake {
        fn round(&mut self, index: u32, _: Instant, _: Instant) -> RoundEnd {
            if let Some((at, end)) = self.end_at
                && at == index
            {
                return end();
            }
            std::thread::sleep(Duration::from_millis(self.ms));
            Ok(RoundRecord {
                index,
                readings: vec![Reading::new("x", Unit::Nanos, (self.value)(index))],
                notes: vec![Note {
                    kind: NoteKind::Info,
                    text: "same every round".into(),
                }],
                details: vec![("d".into(), index.to_string())],
                ..RoundRecord::default()
            })
        }
    }

    #[test]
    fn rounds_in_this_process_make_a_record() {
        let r = rounds_in_process(
            &Request {
                chapter: &crate::fixture::CHAPTER,
                experiment: &crate::fixture::OK,
                profile: Profile::Quick,
                overrides: &[Override::parse("n=7").unwrap()],
                mode: Mode::InProcess,
            },
            4,
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!((r.rounds.len(), r.status.clone()), (4, Status::Ok));
        assert_eq!(r.param("n"), Some(7.0));
        assert_eq!(r.estimate("steady").unwrap().median, 1007.0);
        assert_eq!(r.chapter, "fixture");
    }

    #[test]
    fn steady_readings_stop_at_the_minimum() {
        let mut f = Fake {
            ms: 1,
            value: |_| 100.0,
            end_at: None,
        };
        let r = run_rounds(Budget::quick(5), &mut f, |_| {});
        assert_eq!(r.rounds.len(), 6);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.notes.len(), 1, "notes are merged: {:?}", r.notes);
        assert_eq!(r.details, vec![("d".to_string(), "0".to_string())]);
    }

    #[test]
    fn noisy_readings_run_until_tight_or_the_budget() {
        // Alternating 100 and 200: never within ±10 %, so the budget ends it.
        let mut f = Fake {
            ms: 20,
            value: |i| if i % 2 == 0 { 100.0 } else { 200.0 },
            end_at: None,
        };
        let budget = Budget {
            time: Duration::from_millis(300),
            ..Budget::quick(1)
        };
        let t0 = Instant::now();
        let r = run_rounds(budget, &mut f, |_| {});
        assert!(
            r.rounds.len() >= 6 && r.rounds.len() < 40,
            "{}",
            r.rounds.len()
        );
        // The budget, not the round count, ended it (generous for a loaded machine).
        assert!(t0.elapsed() < Duration::from_secs(3));
        // Full runs exactly its rounds.
        let mut f = Fake {
            ms: 1,
            value: |_| 1.0,
            end_at: None,
        };
        assert_eq!(
            run_rounds(Budget::full(5, 12), &mut f, |_| {}).rounds.len(),
            12
        );
    }

    #[test]
    fn a_slow_experiment_gets_at_least_three_rounds_and_a_note() {
        let mut f = Fake {
            ms: 120,
            value: |i| f64::from(i),
            end_at: None,
        };
        let budget = Budget {
            time: Duration::from_millis(100),
            ..Budget::quick(1)
        };
        let r = run_rounds(budget, &mut f, |_| {});
        assert!(r.rounds.len() >= 3, "{}", r.rounds.len());
        assert!(
            r.notes
                .iter()
                .any(|n| n.kind == NoteKind::Timeout && n.text.contains("planned rounds")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn a_failing_round_keeps_the_rounds_before_it() {
        let mut f = Fake {
            ms: 1,
            value: |_| 1.0,
            end_at: Some((2, || {
                Err(Status::Crashed {
                    what: "was killed (signal 9)".into(),
                })
            })),
        };
        let r = run_rounds(Budget::quick(5), &mut f, |_| {});
        // Not a good result: it must not replace one. Its rounds are kept.
        assert!(matches!(r.status, Status::Crashed { .. }), "{:?}", r.status);
        assert_eq!(r.rounds.len(), 2);
        assert!(
            r.notes
                .iter()
                .any(|n| n.text.contains("round 3") && n.text.contains("signal 9"))
        );
        // With nothing before it, the failure is the result.
        let mut f = Fake {
            ms: 1,
            value: |_| 1.0,
            end_at: Some((0, || Err(Status::TimedOut { after_s: 7.0 }))),
        };
        let r = run_rounds(Budget::quick(5), &mut f, |_| {});
        assert_eq!(r.status, Status::TimedOut { after_s: 7.0 });
        assert!(r.rounds.is_empty());
    }

    /// Rounds that log which job ran which round.
    struct Logged {
        job: usize,
        log: std::rc::Rc<std::cell::RefCell<Vec<(usize, u32)>>>,
        inner: Fake,
    }

    impl Exec for Logged {
        fn round(&mut self, index: u32, deadline: Instant, kill_at: Instant) -> RoundEnd {
            self.log.borrow_mut().push((self.job, index));
            self.inner.round(index, deadline, kill_at)
        }
    }

    #[test]
    fn interleaved_rounds_take_turns_and_keep_their_own_rules() {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let fake = |job, value: fn(u32) -> f64, end_at| Job {
            plan: Plan::new(Budget::quick(5)),
            exec: Box::new(Logged {
                job,
                log: log.clone(),
                inner: Fake {
                    ms: 1,
                    value,
                    end_at,
                },
            }),
        };
        let jobs = vec![
            // Steady: stops at 6 rounds.
            fake(0, |_| 100.0, None),
            // Never tight: runs to its most rounds (40) well within its 5 s.
            fake(1, |i| if i % 2 == 0 { 100.0 } else { 200.0 }, None),
            // Crashes in its third round: two rounds kept, the others go on.
            fake(
                2,
                |_| 1.0,
                Some((2, || {
                    Err(Status::Crashed {
                        what: "was killed (signal 9)".into(),
                    })
                })),
            ),
        ];
        let mut done: Vec<(usize, usize, Status)> = Vec::new();
        let mut started = 0;
        let passes = interleave(
            jobs,
            |p| {
                if let Progress::Starting { .. } = p {
                    started += 1;
                }
            },
            |job, r| done.push((job, r.rounds.len(), r.status)),
        );
        done.sort_by_key(|d| d.0);
        assert_eq!(done[0], (0, 6, Status::Ok));
        assert_eq!(done[1], (1, 40, Status::Ok));
        assert_eq!((done[2].0, done[2].1), (2, 2));
        assert!(matches!(done[2].2, Status::Crashed { .. }));
        // The 41st pass finds that job 1 has run its most rounds.
        assert_eq!(passes, 41);
        let log = log.borrow();
        assert_eq!(started, log.len());
        // Round r of every experiment still measuring before round r + 1 of any.
        assert!(log.windows(2).all(|w| w[0].1 <= w[1].1), "{log:?}");
        // Every round of the first passes, from each of the three.
        for r in 0..2 {
            let mut jobs: Vec<usize> = log.iter().filter(|l| l.1 == r).map(|l| l.0).collect();
            jobs.sort();
            assert_eq!(jobs, vec![0, 1, 2]);
        }
        // The order inside a pass changes from pass to pass.
        let pass =
            |r: u32| -> Vec<usize> { log.iter().filter(|l| l.1 == r).map(|l| l.0).collect() };
        assert_ne!(pass(0), pass(1));
    }

    #[test]
    fn an_interleaved_budget_counts_only_its_own_rounds() {
        // Job 0 takes 30 ms a round with a 100 ms budget; job 1 takes 60 ms a round.
        // Wall time per pass is 90 ms, yet job 0 still gets at least 3 rounds (its own
        // time, not the session's, decides) and stops once its own budget is spent.
        let jobs = vec![
            Job {
                plan: Plan::new(Budget {
                    time: Duration::from_millis(100),
                    ..Budget::quick(1)
                }),
                exec: Box::new(Fake {
                    ms: 30,
                    value: |i| f64::from(i + 1),
                    end_at: None,
                }),
            },
            Job {
                plan: Plan::new(Budget::quick(1).rounds(4, 4)),
                exec: Box::new(Fake {
                    ms: 60,
                    value: |_| 1.0,
                    end_at: None,
                }),
            },
        ];
        let mut rounds = vec![0; 2];
        interleave(jobs, |_| {}, |job, r| rounds[job] = r.rounds.len());
        assert!((3..=4).contains(&rounds[0]), "{rounds:?}");
        assert_eq!(rounds[1], 4);
    }
}
