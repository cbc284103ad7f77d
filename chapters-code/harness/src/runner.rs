//! Running an experiment: rounds until the budget says stop, each in a worker process
//! (or all in one, where the experiment says why), assembled into a [`Record`].

use crate::cache::{self, MeasureLock, Shown};
use crate::experiment::{AnyExperiment, Budget, Chapter, Ctx, Isolation, MIN_ROUNDS, RoundOutput};
use crate::machine::Machine;
use crate::noise::{self, Noise};
use crate::params::{self, Override, ParamValue};
use crate::profile::Profile;
use crate::record::{
    FORMAT, Note, NoteKind, Provenance, Record, RoundRecord, Status, reading_keys, reading_values,
};
use crate::stats::Estimate;
use crate::worker;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How a round ended.
pub enum RoundEnd {
    Done {
        out: RoundOutput,
        noise: Noise,
    },
    /// The round returned an error or panicked.
    Failed(String),
    /// The worker did not finish before it was killed.
    TimedOut {
        after_s: f64,
    },
    /// The worker died of a signal or exited without a result.
    Crashed(String),
}

/// Runs rounds: in worker processes, or in this process.
pub trait Exec {
    fn round(&mut self, index: u32, deadline: Instant, kill_at: Instant) -> RoundEnd;
}

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

/// Runs a round in this process, catching a panic.
pub struct InProcess<'a> {
    pub experiment: &'a dyn AnyExperiment,
    pub profile: Profile,
    pub params: Vec<ParamValue>,
}

impl Exec for InProcess<'_> {
    fn round(&mut self, index: u32, deadline: Instant, _kill_at: Instant) -> RoundEnd {
        let before = noise::Usage::of_self();
        let counter = noise::MigrationCounter::open();
        let m0 = counter.as_ref().and_then(|c| c.read());
        let watch = noise::Watch::start();
        let ctx = Ctx::new(self.profile, index, self.params.clone(), deadline);
        let exp = self.experiment;
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exp.run_round(ctx)));
        let migrations = match (m0, counter.as_ref().and_then(|c| c.read())) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        let noise = watch.finish(
            noise::usage_since(before, noise::Usage::of_self()),
            0.0,
            migrations,
        );
        match out {
            Ok(Ok(out)) => RoundEnd::Done { out, noise },
            Ok(Err(e)) => RoundEnd::Failed(crate::privacy::scrub(&format!("{e:#}"))),
            Err(panic) => RoundEnd::Failed(format!("it panicked: {}", panic_message(&*panic))),
        }
    }
}

pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Whether every reading's interval already reaches the stated confidence and lies
/// within `target` of its median.
fn tight(rounds: &[RoundRecord], target: f64) -> bool {
    if target <= 0.0 {
        return false;
    }
    reading_keys(rounds).into_iter().all(|k| {
        let v: Vec<f64> = reading_values(rounds, k)
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        Estimate::of(&v)
            .is_some_and(|e| e.at_stated_confidence() && e.relative_half_width() <= target)
    })
}

/// What a run of rounds gave.
pub struct Rounds {
    pub rounds: Vec<RoundRecord>,
    pub notes: Vec<Note>,
    pub details: Vec<(String, String)>,
    pub status: Status,
}

/// One experiment's run of rounds, decided round by round: whether to start the next
/// round (the stopping rule), the deadline it gets, and what the finished rounds gave.
/// [`run_rounds`] drives one plan on its own; [`interleave`] drives several, a round
/// of each in turn. The budget counts only the time of this experiment's own rounds,
/// so interleaving with other experiments neither shortens nor stretches it.
pub struct Plan {
    budget: Budget,
    /// Time spent in this experiment's own rounds.
    spent: Duration,
    round_walls: Vec<f64>,
    rounds: Vec<RoundRecord>,
    notes: Vec<Note>,
    details: Vec<(String, String)>,
    ended: Option<Status>,
    out_of_budget: bool,
    done: bool,
}

impl Plan {
    pub fn new(budget: Budget) -> Plan {
        Plan {
            budget,
            spent: Duration::ZERO,
            round_walls: Vec::new(),
            rounds: Vec::new(),
            notes: Vec::new(),
            details: Vec::new(),
            ended: None,
            out_of_budget: false,
            done: false,
        }
    }

    /// The index the next round would have.
    pub fn next_index(&self) -> u32 {
        self.round_walls.len() as u32
    }

    /// Time spent in this experiment's rounds so far.
    pub fn spent(&self) -> Duration {
        self.spent
    }

    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// Whether the plan has stopped: the budget or the intervals said so, or a round
    /// ended the run.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The stopping rule: at least [`MIN_ROUNDS`] if the hard bound allows, then on
    /// until `min_rounds` within the budget, then until every interval is tight or the
    /// budget is spent, at most `max_rounds`. Once it says no, the plan is done.
    pub fn wants_round(&mut self) -> bool {
        if self.done {
            return false;
        }
        let index = self.next_index();
        let start_it = if index >= self.budget.max_rounds {
            false
        } else if index == 0 {
            true
        } else {
            let mean = self.round_walls.iter().sum::<f64>() / self.round_walls.len() as f64;
            let expected = self.spent + Duration::from_secs_f64(mean);
            if index < MIN_ROUNDS.min(self.budget.max_rounds) {
                expected <= self.budget.bound()
            } else if index < self.budget.min_rounds {
                expected <= self.budget.time
            } else {
                !tight(&self.rounds, self.budget.target) && expected <= self.budget.time
            }
        };
        if !start_it {
            self.out_of_budget = index < self.budget.min_rounds;
            self.done = true;
        }
        start_it
    }

    /// The next round's deadline (the end of its hard bound) and when its worker is
    /// killed.
    pub fn deadlines(&self) -> (Instant, Instant) {
        let left = self.budget.bound().saturating_sub(self.spent);
        let deadline = Instant::now() + left;
        (deadline, deadline + Duration::from_secs(2))
    }

    /// Takes a finished round, which took `wall`; returns the round record when it
    /// succeeded. A failed, timed-out or crashed round ends the plan.
    pub fn finished(&mut self, end: RoundEnd, wall: Duration) -> Option<&RoundRecord> {
        let index = self.next_index();
        self.round_walls.push(wall.as_secs_f64());
        self.spent += wall;
        let ended = match end {
            RoundEnd::Done { out, noise } => {
                for n in out.notes {
                    if !self.notes.contains(&n) {
                        self.notes.push(n);
                    }
                }
                if self.details.is_empty() {
                    self.details = out.details;
                }
                self.rounds.push(RoundRecord {
                    index,
                    noise,
                    readings: out.readings,
                    data: out.data,
                });
                return self.rounds.last();
            }
            RoundEnd::Failed(error) => Status::Failed { error },
            RoundEnd::TimedOut { after_s } => Status::TimedOut { after_s },
            RoundEnd::Crashed(what) => Status::Crashed { what },
        };
        self.ended = Some(ended);
        self.done = true;
        None
    }

    /// What the rounds gave, with the notes on how the run ended.
    pub fn finish(self) -> Rounds {
        let status = self.ended.unwrap_or(Status::Ok);
        let mut notes = self.notes;
        if !self.rounds.is_empty() {
            ended_early_note(&status, self.rounds.len(), &mut notes);
        }
        if self.out_of_budget && status == Status::Ok {
            notes.push(Note {
                kind: NoteKind::Timeout,
                text: format!(
                    "the time budget ({} s) allowed {} of the {} planned rounds, so the intervals are wider than planned",
                    self.budget.time.as_secs(),
                    self.rounds.len(),
                    self.budget.min_rounds
                ),
            });
        }
        Rounds {
            rounds: self.rounds,
            notes,
            details: self.details,
            status,
        }
    }
}

/// Runs rounds under `budget` by the stopping rule of [`Plan::wants_round`]. A
/// failed, timed-out or crashed round ends the run, and the run is not a good result
/// (it never replaces one in the cache); the rounds before it are kept, and a page
/// with nothing better shows them with a note saying so. `on_round` sees each
/// finished round.
pub fn run_rounds(
    budget: Budget,
    exec: &mut dyn Exec,
    mut on_round: impl FnMut(&RoundRecord),
) -> Rounds {
    let mut plan = Plan::new(budget);
    while plan.wants_round() {
        let (deadline, kill_at) = plan.deadlines();
        let t0 = Instant::now();
        let end = exec.round(plan.next_index(), deadline, kill_at);
        if let Some(r) = plan.finished(end, t0.elapsed()) {
            on_round(r);
        }
    }
    plan.finish()
}

/// One experiment of an interleaved session: its plan and where its rounds run.
pub struct Job<'a> {
    pub plan: Plan,
    pub exec: Box<dyn Exec + 'a>,
}

/// What [`interleave`] reports as it goes.
pub enum Progress<'r> {
    /// Job `job`'s round `index` starts.
    Starting { job: usize, index: u32 },
    /// Job `job`'s round ended (`round` is `None` when it failed); the job has now
    /// spent `spent` in its rounds.
    Finished {
        job: usize,
        round: Option<&'r RoundRecord>,
        spent: Duration,
    },
}

/// Runs several experiments' rounds interleaved: round 1 of each, then round 2 of
/// each, and so on, so that every experiment's rounds spread over the whole session
/// instead of a few seconds of it. Inside a pass the experiments run in the order of
/// a row of a balanced Latin square (as the variants inside a round do), so no
/// experiment always follows the same one. Each experiment keeps its own budget and
/// stopping rule; `on_progress` sees each round start and end, and
/// `on_done(job, rounds)` gets an experiment's rounds as soon as it stops. Returns
/// how many passes were run.
pub fn interleave(
    jobs: Vec<Job>,
    mut on_progress: impl FnMut(Progress),
    mut on_done: impl FnMut(usize, Rounds),
) -> u32 {
    let mut slots: Vec<Option<Job>> = jobs.into_iter().map(Some).collect();
    let all: Vec<usize> = (0..slots.len()).collect();
    let mut pass = 0u32;
    while slots.iter().any(Option::is_some) {
        for j in latin_row(&all, pass) {
            let Some(job) = slots[j].as_mut() else {
                continue;
            };
            if job.plan.wants_round() {
                let index = job.plan.next_index();
                on_progress(Progress::Starting { job: j, index });
                let (deadline, kill_at) = job.plan.deadlines();
                let t0 = Instant::now();
                let end = job.exec.round(index, deadline, kill_at);
                let wall = t0.elapsed();
                let spent = job.plan.spent() + wall;
                let round = job.plan.finished(end, wall);
                on_progress(Progress::Finished {
                    job: j,
                    round,
                    spent,
                });
            }
            if job.plan.is_done() {
                let job = slots[j].take().expect("checked above");
                on_done(j, job.plan.finish());
            }
        }
        pass += 1;
    }
    pass
}

/// `items` in the order of row `r` of a balanced Latin square (Williams' design):
/// over `n` rows (`2n` for an odd count) each item takes every position once and, for
/// an even count, follows each other item once.
pub fn latin_row<T: Clone>(items: &[T], r: u32) -> Vec<T> {
    let n = items.len();
    if n == 0 {
        return Vec::new();
    }
    let r = r as usize;
    // 0, 1, n-1, 2, n-2, 3, …
    let base = (0..n).map(|j| match j {
        0 => 0,
        j if j % 2 == 1 => j.div_ceil(2),
        j => n - j / 2,
    });
    let mut order: Vec<T> = base.map(|b| items[(b + r) % n].clone()).collect();
    if n % 2 == 1 && (r / n) % 2 == 1 {
        order.reverse();
    }
    order
}

/// The note a run that ended early carries about the rounds it kept.
pub fn ended_early_note(status: &Status, finished: usize, notes: &mut Vec<Note>) {
    if *status == Status::Ok {
        return;
    }
    notes.push(Note {
        kind: if matches!(status, Status::TimedOut { .. }) {
            NoteKind::Timeout
        } else {
            NoteKind::Info
        },
        text: format!(
            "this run ended early: round {} {}; the figures use the {finished} round(s) that finished before it, and the next build measures again",
            finished + 1,
            status.describe(),
        ),
    });
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
    use crate::record::{Reading, Unit};

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
            RoundEnd::Done {
                out: RoundOutput {
                    readings: vec![Reading::new("x", Unit::Nanos, (self.value)(index))],
                    data: serde_json::Value::Null,
                    notes: vec![Note {
                        kind: NoteKind::Info,
                        text: "same every round".into(),
                    }],
                    details: vec![("d".into(), index.to_string())],
                },
                noise: Noise::default(),
            }
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
            end_at: Some((2, || RoundEnd::Crashed("was killed (signal 9)".into()))),
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
            end_at: Some((0, || RoundEnd::TimedOut { after_s: 7.0 })),
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
                Some((2, || RoundEnd::Crashed("was killed (signal 9)".into()))),
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
