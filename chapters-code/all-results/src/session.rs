//! `all-results measure`: one measuring session for the whole book. Every
//! experiment's rounds are interleaved — round 1 of each, then round 2 of each, … —
//! so each experiment's rounds spread over the session's minutes instead of a few
//! seconds of it, and its interval sees the drift between them.
//!
//! The rounds run in worker processes of this binary (`all-results __worker CHAPTER
//! EXPERIMENT …`), which links every chapter's crate: a worker runs the chapter's own
//! code and refuses to measure unless the chapter's code key is the one the session
//! was started with, and each result is stored under its chapter's key, exactly as
//! the chapter's own `run` would store it.

use crate::{CHAPTERS, changes, chapter};
use harness::cache::{self, MeasureLock};
use harness::experiment::{AnyExperiment, Isolation};
use harness::params::{self, Override, SetList};
use harness::runner::{self, InProcess, Job, Mode, Plan, Progress, Request};
use harness::worker::PerRound;
use harness::{Chapter, Profile};
use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

/// The `--set` entries, `CHAPTER.NAME=VALUE` or `CHAPTER.EXPERIMENT.NAME=VALUE`, by
/// chapter, read by the same parser as `$COW_SET` ([`SetList`]); an entry naming no
/// chapter or no parameter of it, or a value it cannot take, is an error.
pub fn overrides(sets: &[String]) -> Result<Vec<(&'static str, Vec<Override>)>, String> {
    let set = SetList::parse("--set", sets.iter().map(String::as_str), &crate::slugs())?;
    set.chapters()
        .into_iter()
        .map(|slug| {
            let ch = chapter(slug).expect("SetList::parse checked the slug");
            Ok((ch.name, set.check_for(ch.name, &crate::declared(ch))?))
        })
        .collect()
}

/// One experiment to measure in the session.
struct Todo {
    chapter: &'static Chapter,
    experiment: &'static dyn AnyExperiment,
    overrides: Vec<Override>,
    values: Vec<params::ParamValue>,
}

impl Todo {
    fn label(&self) -> String {
        format!("{}/{}", self.chapter.name, self.experiment.name())
    }

    fn request(&self, profile: Profile) -> Request<'_> {
        Request {
            chapter: self.chapter,
            experiment: self.experiment,
            profile,
            overrides: &self.overrides,
            mode: Mode::this_executable(),
        }
    }
}

/// What a session did, for its last lines.
pub struct Outcome {
    /// The records it measured (and stored), in the order they finished.
    pub records: Vec<harness::Record>,
    pub failed: usize,
    pub took: Duration,
}

/// Every experiment of the book with its parameters resolved for `profile` and the
/// `--set` entries: a bad parameter is refused here, before anything is measured.
fn resolve_all(profile: Profile, sets: &[String]) -> Result<Vec<Todo>, String> {
    let by_chapter = overrides(sets)?;
    let mut all = Vec::new();
    for ch in CHAPTERS {
        let overrides = by_chapter
            .iter()
            .find(|(c, _)| *c == ch.name)
            .map(|(_, o)| o.clone())
            .unwrap_or_default();
        for e in ch.experiments {
            all.push(Todo {
                chapter: ch,
                experiment: *e,
                values: params::resolve(e.name(), e.params(), profile, &overrides)?,
                overrides: overrides.clone(),
            });
        }
    }
    Ok(all)
}

/// Refuses bad parameters without measuring or writing anything: what `measure` would
/// refuse, checked first, so a refused command leaves the previous run as it was.
pub fn check(profile: Profile, sets: &[String]) -> Result<(), String> {
    resolve_all(profile, sets).map(|_| ())
}

/// A session ready to measure: what it will measure, with the measuring lock held and
/// every folder it will write probed. Nothing has been written yet.
pub struct Ready {
    todo: Vec<Todo>,
    _lock: Option<MeasureLock>,
}

/// Everything a session checks before it writes anything (issue 35, items 6 and 7):
/// the parameters, what is up to date (with `missing`), the results folder and every
/// chapter folder it will write (each made if missing, checked and probed), and the
/// measuring lock, taken here. Only then may the caller remember the previous run. An
/// `Err` is a refusal that changed nothing.
pub fn prepare(
    profile: Profile,
    missing: bool,
    sets: &[String],
    dir: &Path,
) -> Result<Ready, String> {
    let mut todo = resolve_all(profile, sets)?;
    // With `missing`, what is up to date is left out (said, with `why`).
    let drop_up_to_date = |todo: &mut Vec<Todo>, why: &str| {
        todo.retain(|t| {
            let Some(line) = runner::up_to_date(t.chapter, t.experiment, &t.values, dir) else {
                return true;
            };
            println!("{line}{why}");
            false
        })
    };
    if missing {
        drop_up_to_date(&mut todo, "");
    }
    if todo.is_empty() {
        return Ok(Ready { todo, _lock: None });
    }
    // Folders that cannot take the results are said now, not after measuring.
    let mut chapters: Vec<&str> = todo.iter().map(|t| t.chapter.name).collect();
    chapters.dedup();
    cache::check_writable_chapters(dir, &chapters).map_err(|e| format!("{e:#}"))?;
    let lock = MeasureLock::acquire().map_err(|e| format!("{e:#}"))?;
    // A session that waited for another measurement looks again: what that one
    // measured is now up to date, and measuring it twice would only cost time.
    if missing {
        drop_up_to_date(&mut todo, " (measured while this session waited)");
    }
    Ok(Ready {
        todo,
        _lock: Some(lock),
    })
}

/// Measures what [`prepare`] made ready in one interleaved session, storing each
/// result as soon as its experiment stops.
pub fn measure(profile: Profile, ready: Ready, dir: &Path) -> Result<Outcome, String> {
    let Ready { todo, _lock } = ready;
    if todo.is_empty() {
        return Ok(Outcome {
            records: Vec::new(),
            failed: 0,
            took: Duration::ZERO,
        });
    }
    // The session's time, not counting a wait for another measurement to end.
    let start = Instant::now();
    let (together, alone): (Vec<&Todo>, Vec<&Todo>) = todo
        .iter()
        .partition(|t| t.experiment.isolation() == Isolation::FreshProcess);
    let store = |t: &Todo, record: &harness::Record| match cache::store(dir, record) {
        Ok(p) => Ok(format!(
            "{}: {} in {:.1} s, {} rounds -> {}",
            t.label(),
            record.status.describe(),
            record.wall_s,
            record.rounds.len(),
            p.display()
        )),
        Err(e) => Err(format!("{}: cannot store the result: {e:#}", t.label())),
    };
    eprintln!(
        "measuring {} experiments in one session, their rounds interleaved (profile {profile}, budgets {} s in all)",
        together.len(),
        together
            .iter()
            .map(|t| t.experiment.budget(profile).time.as_secs())
            .sum::<u64>()
    );
    let mode = Mode::this_executable();
    let jobs: Vec<Job> = together
        .iter()
        .map(|t| Job {
            plan: Plan::new(t.experiment.budget(profile)),
            exec: match &mode {
                Mode::Workers { exe } => Box::new(PerRound {
                    exe,
                    chapter: t.chapter,
                    experiment: t.experiment.name(),
                    profile,
                    overrides: &t.overrides,
                }),
                Mode::InProcess => Box::new(InProcess {
                    experiment: t.experiment,
                    profile,
                    params: t.values.clone(),
                }),
            },
        })
        .collect();
    let state = RefCell::new(Session {
        bar: book_bar(),
        budgets: together
            .iter()
            .map(|t| t.experiment.budget(profile).time)
            .collect(),
        spent: vec![Duration::ZERO; together.len()],
        done: vec![false; together.len()],
        span: vec![None; together.len()],
    });
    let others = together.len().saturating_sub(1);
    let mut records: Vec<harness::Record> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    runner::interleave(
        jobs,
        |p| {
            let mut s = state.borrow_mut();
            match p {
                Progress::Starting { job, index } => {
                    let now = Instant::now();
                    s.span[job] = Some(s.span[job].map_or((now, now), |(a, _)| (a, now)));
                    let left = s.done.iter().filter(|d| !**d).count();
                    s.bar.set_message(format!(
                        "{} round {} ({left} of {} experiments still measuring)",
                        together[job].label(),
                        index + 1,
                        together.len()
                    ));
                }
                Progress::Finished { job, spent, .. } => {
                    s.spent[job] = spent;
                    if let Some((a, _)) = s.span[job] {
                        s.span[job] = Some((a, Instant::now()));
                    }
                    s.show();
                }
            }
        },
        |job, rounds| {
            let mut s = state.borrow_mut();
            s.done[job] = true;
            s.show();
            let t = together[job];
            let mut record =
                runner::record_of(&t.request(profile), t.values.clone(), rounds, s.spent[job]);
            if let Some((a, b)) = s.span[job] {
                record.isolation = format!(
                    "{}, interleaved with the rounds of {others} other experiment{} and spread over {:.0} s",
                    record.isolation,
                    if others == 1 { "" } else { "s" },
                    (b - a).as_secs_f64()
                );
            }
            // Printed above the bar (and printed at all when there is no terminal).
            match store(t, &record) {
                Ok(l) => s.bar.suspend(|| println!("{l}")),
                Err(e) => {
                    s.bar.suspend(|| eprintln!("error: {e}"));
                    errors.push(e);
                }
            }
            records.push(record);
        },
    );
    state.into_inner().bar.finish_and_clear();
    // Experiments that run every round in one process (the page says why) come after
    // the interleaved ones, each on its own.
    for t in alone {
        let record = runner::measure(&t.request(profile))?;
        match store(t, &record) {
            Ok(l) => println!("{l}"),
            Err(e) => errors.push(e),
        }
        records.push(record);
    }
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    // In the book's order, for the report.
    let order = |r: &harness::Record| {
        CHAPTERS.iter().position(|c| c.name == r.chapter).map(|i| {
            let e = CHAPTERS[i]
                .experiments
                .iter()
                .position(|e| e.name() == r.experiment);
            (i, e)
        })
    };
    records.sort_by_key(order);
    Ok(Outcome {
        failed: records.iter().filter(|r| !r.is_ok()).count(),
        records,
        took: start.elapsed(),
    })
}

/// The session's progress: one bar for the book, naming the round that runs.
struct Session {
    bar: indicatif::ProgressBar,
    budgets: Vec<Duration>,
    spent: Vec<Duration>,
    done: Vec<bool>,
    /// When each experiment's first round started and its last one ended.
    span: Vec<Option<(Instant, Instant)>>,
}

impl Session {
    /// The bar's length is every budget, or what a finished experiment used.
    fn show(&self) {
        let total: Duration = self
            .budgets
            .iter()
            .zip(&self.spent)
            .zip(&self.done)
            .map(|((b, s), d)| if *d { *s } else { (*b).max(*s) })
            .sum();
        self.bar.set_length(total.as_millis().max(1) as u64);
        self.bar
            .set_position(self.spent.iter().sum::<Duration>().as_millis() as u64);
    }
}

fn book_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(1);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix:.bold} {wide_msg} [{bar:30}] {elapsed_precise} ETA {eta}",
        )
        .expect("a valid progress template")
        .progress_chars("=> "),
    );
    bar.set_prefix("the book");
    bar
}

/// The measured session's last lines: how long it took, and (after a session that
/// measured everything) what moved since the run before it.
pub fn summary(outcome: &Outcome, dir: &Path, compared_with: Option<&[harness::Record]>) -> String {
    let mut out = format!(
        "measured {} experiment(s) in {:.1} s{}\n",
        outcome.records.len(),
        outcome.took.as_secs_f64(),
        if outcome.failed > 0 {
            format!(
                "; {} did not succeed, and the book will say so",
                outcome.failed
            )
        } else {
            String::new()
        }
    );
    if let Some(before) = compared_with {
        out.push_str(&changes::report_and_remember(before, &outcome.records, dir));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn set_entries_name_a_chapter_and_a_parameter_it_declares() {
        let o = super::overrides(&["brigades.tasks=2000".into()]).unwrap();
        assert_eq!(o.len(), 1);
        assert_eq!((o[0].0, o[0].1[0].name.as_str()), ("brigades", "tasks"));
        let e = super::overrides(&["tasks=2000".into()]).unwrap_err();
        assert!(e.contains("names no chapter"), "{e}");
        let e = super::overrides(&["nochapter.tasks=1".into()]).unwrap_err();
        assert!(e.contains("brigades"), "{e}");
        assert!(super::overrides(&["brigades.nosuch=1".into()]).is_err());
    }
}
