//! The round loop: running rounds one after another (or interleaved with other
//! experiments' rounds) until each experiment's budget says stop, whatever executes
//! them — worker processes (`worker.rs`) or this process ([`InProcess`]). It knows
//! nothing of processes or pages; `runner.rs` and `worker.rs` both build on it.

use crate::experiment::{AnyExperiment, Budget, Ctx, MIN_ROUNDS, latin_row};
use crate::noise;
use crate::params::ParamValue;
use crate::profile::Profile;
use crate::record::{Note, NoteKind, RoundEnd, RoundRecord, Status, reading_keys, reading_values};
use crate::stats::Estimate;
use std::time::{Duration, Instant};

/// Runs rounds: in worker processes, or in this process.
pub trait Exec {
    fn round(&mut self, index: u32, deadline: Instant, kill_at: Instant) -> RoundEnd;
}

/// Runs a round in this process, catching a panic.
pub struct InProcess<'a> {
    pub experiment: &'a dyn AnyExperiment,
    pub profile: Profile,
    pub params: Vec<ParamValue>,
}

impl Exec for InProcess<'_> {
    fn round(&mut self, index: u32, deadline: Instant, _kill_at: Instant) -> RoundEnd {
        // The watch first: its probe of the machine is not the round's CPU time or
        // migrations.
        let watch = noise::Watch::start();
        let before = noise::Usage::of_self();
        let counter = noise::MigrationCounter::open();
        let m0 = counter.as_ref().and_then(|c| c.read());
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
            Ok(Ok(round)) => Ok(RoundRecord { noise, ..round }),
            Ok(Err(e)) => Err(Status::Failed {
                error: crate::privacy::scrub(&format!("{e:#}")),
            }),
            Err(panic) => Err(Status::Failed {
                error: format!("it panicked: {}", panic_message(&*panic)),
            }),
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
        Estimate::of_rounds(&v)
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
            Ok(mut round) => {
                for n in std::mem::take(&mut round.notes) {
                    if !self.notes.contains(&n) {
                        self.notes.push(n);
                    }
                }
                let details = std::mem::take(&mut round.details);
                if self.details.is_empty() {
                    self.details = details;
                }
                round.index = index;
                self.rounds.push(round);
                return self.rounds.last();
            }
            Err(status) => status,
        };
        self.ended = Some(ended);
        self.done = true;
        None
    }

    /// What the rounds gave, with the notes on how the run ended.
    pub fn finish(self) -> Rounds {
        let status = match self.ended {
            // A run that ended well but finished no round has nothing to show: it is
            // stored as a failure that says so, never as a good result with no rounds
            // (the door refuses those).
            None if self.rounds.is_empty() => Status::Failed {
                error: "no round fitted in the time bound".into(),
            },
            ended => ended.unwrap_or(Status::Ok),
        };
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
