//! What changed since the previous run: `make regenerate` takes a snapshot of the
//! results the book shows before it measures, and compares afterwards.
//!
//! A summary is one reading of one experiment: its median over rounds with its 95 %
//! interval. It "moved" when the two runs' intervals do not overlap *and* the medians
//! differ by more than the practical threshold — the rule the chapters use for
//! "faster" and "slower".
//!
//! The machine itself is compared too: every round is preceded by the same system
//! call, timed (`harness::noise::syscall_probe_ns`). When that moved between the runs,
//! the host ran this machine at another speed, and the report says so: a change
//! between runs is one that rounds inside one run cannot cover.
//!
//! Each comparison is remembered (`two-runs.json` in the results folder), so "How we
//! measure" can show how often two runs on this machine disagree, the way a test suite
//! shows its pass rate.

use harness::cache::{self, write_atomically};
use harness::fmt::fmt_ns;
use harness::noise::syscall_estimate;
use harness::render::{fmt_estimate, sig3, threshold_text};
use harness::stats::{Comparison, Estimate};
use harness::{Profile, Record};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Whether `after` moved from `before`: two runs are measured apart, so they are
/// judged unpaired, on their two intervals, and beyond the threshold.
pub fn moved(after: &Estimate, before: &Estimate) -> bool {
    Comparison::unpaired(*after, *before).is_clear()
}

pub fn snapshot_path(dir: &Path) -> PathBuf {
    dir.join("previous-run.json")
}

/// What the book shows now, measuring nothing: the best good result for the current
/// code, else the newest stored record of the experiment (from older code, or failed).
pub fn current(dir: &Path) -> Vec<Record> {
    let stored = cache::all_records(dir);
    crate::CHAPTERS
        .iter()
        .flat_map(|ch| {
            let stored = &stored;
            ch.experiments.iter().filter_map(move |e| {
                crate::shown(ch, e.name(), Profile::Quick, dir, false)
                    .map(|s| s.record)
                    .or_else(|| {
                        stored
                            .iter()
                            .filter(|r| {
                                r.chapter == ch.name
                                    && r.experiment == e.name()
                                    && r.default_params()
                            })
                            .max_by_key(|r| r.provenance.measured_unix)
                            .cloned()
                    })
            })
        })
        .collect()
}

/// Saves what the book shows now as the previous run; returns how many records.
pub fn snapshot(dir: &Path) -> anyhow::Result<usize> {
    let records = current(dir);
    write_atomically(&snapshot_path(dir), &serde_json::to_vec(&records)?)?;
    Ok(records.len())
}

/// The previous run, if its file reads (it and its folder this user's or root's, and
/// no one else can write them) and every record in it passes the schema
/// (`harness::validate`); a file that fails is named with the first reason and
/// read as absent.
pub fn load_snapshot(dir: &Path) -> Option<Vec<Record>> {
    let path = snapshot_path(dir);
    if std::fs::symlink_metadata(&path).is_err() {
        return None;
    }
    // Read as every stored result is: through its checked folder (issue 35).
    let bytes = harness::safe::read_own_file(&path, harness::safe::BUNDLE_CAP)
        .map_err(|why| cache::warn_ignored(&path, &why))
        .ok()??;
    harness::validate::check_values(&bytes, harness::validate::MAX_BUNDLE_VALUES)
        .map_err(|why| cache::warn_ignored(&path, &why))
        .ok()?;
    let records: Vec<Record> = serde_json::from_slice(&bytes)
        .map_err(|e| cache::warn_ignored(&path, &format!("it is not a previous run: {e}")))
        .ok()?;
    match records.iter().try_for_each(harness::validate::record) {
        Ok(()) => Some(records),
        Err(why) => {
            cache::warn_ignored(&path, &why);
            None
        }
    }
}

/// One summary whose interval moved clear of its previous one.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    pub experiment: String,
    pub key: String,
    pub before: String,
    pub after: String,
    /// after ÷ before, of the medians.
    pub ratio: f64,
}

/// The report of a comparison, as lines for the terminal.
#[derive(Debug, Default)]
pub struct Report {
    pub moves: Vec<Move>,
    pub compared: usize,
    /// Summaries left out of the count: fewer than the rule's independent rounds behind
    /// one side, so they could not have moved by its rule.
    pub too_few: usize,
    /// Headline figures compared, and those of them that moved.
    pub headlines: usize,
    pub headlines_moved: Vec<String>,
    /// Experiments compared (measured in both runs).
    pub experiments: usize,
    pub profiles: Vec<(Profile, Profile)>,
    pub notes: Vec<String>,
    /// The machine's speed (a system call's time, over every round of the experiments
    /// compared) before and after; `None` where a run has no probe.
    pub machine: Option<(Estimate, Estimate)>,
    /// The earlier run's records compared: the first and the last finished (seconds since
    /// 1970). A snapshot can hold records of several sessions (`make build` measures only
    /// what is missing).
    pub before_finished: Option<(u64, u64)>,
}

/// How far apart the earlier run's records may have finished and still be one session:
/// about the longest a session of each profile runs (its hard bounds, 147 s quick and
/// 1,350 s full, with room to spare).
fn one_session_s(full: bool) -> u64 {
    if full { 1_800 } else { 300 }
}

impl Report {
    /// Minutes between the earlier run's first and last record, where that is longer
    /// than a session of its profile runs.
    pub fn before_sessions_min(&self) -> Option<u64> {
        let (lo, hi) = self.before_finished?;
        let full = self.profiles.iter().any(|(b, _)| *b == Profile::Full);
        (hi - lo > one_session_s(full)).then(|| (hi - lo).div_ceil(60))
    }

    /// Whether the machine itself moved between the runs, by the same rule as a summary.
    pub fn machine_moved(&self) -> bool {
        self.machine.is_some_and(|(b, a)| moved(&a, &b))
    }

    /// The machine's speed before → after, as the page's table shows it: the medians
    /// and the rule's reading, `214 ns → 262 ns, moved ×1.22` (the intervals are in
    /// [`Report::machine_text`]).
    pub fn machine_cell(&self) -> Option<String> {
        let (b, a) = self.machine?;
        Some(format!(
            "{} → {}, {}",
            fmt_ns(b.median),
            fmt_ns(a.median),
            harness::comparison::move_cell(&a, &b)
        ))
    }

    /// One sentence on whether the machine itself moved between the runs.
    pub fn machine_text(&self) -> Option<String> {
        let (b, a) = self.machine?;
        Some(harness::comparison::machine_move_sentence(&a, &b))
    }
}

const NEW: &str = " (nothing to compare with)";

/// `; 108 more had too few rounds to tell`, or nothing.
pub fn too_few_text(k: usize) -> String {
    match k {
        0 => String::new(),
        k => format!(
            "; {k} more had under {} independent rounds on a side, too few to tell",
            harness::stats::VERDICT_MIN_ROUNDS
        ),
    }
}

/// The headline a reading is, if it is one.
fn headline_of(chapter: &str, experiment: &str, key: &str) -> Option<&'static str> {
    crate::chapter(chapter)?
        .headlines
        .iter()
        .find(|h| h.experiment == experiment && h.reading.stored() == key)
        .map(|h| h.name)
}

pub fn compare(before: &[Record], after: &[Record]) -> Report {
    let mut rep = Report::default();
    let (mut noise_before, mut noise_after) = (Vec::new(), Vec::new());
    for a in after {
        let id = format!("{}/{}", a.chapter, a.experiment);
        let Some(b) = before
            .iter()
            .find(|b| b.chapter == a.chapter && b.experiment == a.experiment)
        else {
            rep.notes.push(format!("{id}: new{NEW}"));
            continue;
        };
        if b.provenance.measured_unix == a.provenance.measured_unix && b.key == a.key {
            rep.notes.push(format!("{id}: not measured again"));
            continue;
        }
        if b.profile != a.profile || b.params != a.params {
            rep.notes.push(format!(
                "{id}: profile {} → {}{}",
                b.profile.name(),
                a.profile.name(),
                if b.params != a.params {
                    ", other parameters: a difference may be the parameters'"
                } else {
                    ""
                }
            ));
        }
        if b.key != a.key {
            rep.notes.push(format!(
                "{id}: the measuring code changed since the previous run"
            ));
        }
        rep.experiments += 1;
        let t = b.provenance.measured_unix;
        rep.before_finished = Some(
            rep.before_finished
                .map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))),
        );
        noise_before.extend(b.rounds.iter().map(|x| &x.noise));
        noise_after.extend(a.rounds.iter().map(|x| &x.noise));
        if !rep.profiles.contains(&(b.profile, a.profile)) {
            rep.profiles.push((b.profile, a.profile));
        }
        for key in a.keys() {
            let (Some(ea), Some(eb), Some(unit)) = (a.estimate(key), b.estimate(key), a.unit(key))
            else {
                continue;
            };
            // A summary the rule cannot judge could not move: counted apart.
            let least = harness::stats::VERDICT_MIN_ROUNDS;
            if ea.independent_rounds() < least || eb.independent_rounds() < least {
                rep.too_few += 1;
                continue;
            }
            rep.compared += 1;
            let headline = headline_of(&a.chapter, &a.experiment, key);
            if headline.is_some() {
                rep.headlines += 1;
            }
            if moved(&ea, &eb) {
                if let Some(h) = headline {
                    rep.headlines_moved.push(h.to_string());
                }
                rep.moves.push(Move {
                    experiment: id.clone(),
                    key: key.to_string(),
                    before: fmt_estimate(&eb, unit).to_string(),
                    after: fmt_estimate(&ea, unit).to_string(),
                    ratio: ea.median / eb.median,
                });
            }
        }
    }
    rep.machine = syscall_estimate(noise_before).zip(syscall_estimate(noise_after));
    rep
}

impl Report {
    pub fn render(&self) -> String {
        let share = if self.compared > 0 {
            format!(
                " ({} %)",
                sig3(self.moves.len() as f64 / self.compared as f64 * 100.0)
            )
        } else {
            String::new()
        };
        let mut out = format!(
            "What changed since the previous run: {} of {} summaries moved{share} — their intervals over rounds (95 %, or less with fewer rounds) do not overlap and their medians differ by more than {}{}; {} of {} headline figures moved{}.\n",
            self.moves.len(),
            self.compared,
            threshold_text(),
            too_few_text(self.too_few),
            self.headlines_moved.len(),
            self.headlines,
            if self.headlines_moved.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.headlines_moved.join(", "))
            }
        );
        if let Some(m) = self.machine_text() {
            out.push_str(&format!("{m}\n"));
        }
        let new: Vec<&String> = self.notes.iter().filter(|n| n.ends_with(NEW)).collect();
        if new.len() > 3 {
            out.push_str(&format!("  note: {} experiments are new{NEW}\n", new.len()));
        }
        for n in self
            .notes
            .iter()
            .filter(|n| new.len() <= 3 || !n.ends_with(NEW))
        {
            out.push_str(&format!("  note: {n}\n"));
        }
        for m in &self.moves {
            out.push_str(&format!(
                "  {}  {}: {} → {} (×{})\n",
                m.experiment,
                m.key,
                m.before,
                m.after,
                sig3(m.ratio)
            ));
        }
        out
    }
}

/// One comparison of two runs on this machine, as "How we measure" shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TwoRuns {
    /// When the comparison was made (UTC), and as seconds since 1970.
    pub at: String,
    pub at_unix: u64,
    pub machine: String,
    /// The profiles of the two runs ("quick → quick").
    pub profiles: String,
    pub experiments: usize,
    pub summaries: usize,
    pub moved: usize,
    /// Summaries left out for want of rounds ([`Report::too_few`]); 0 in older files.
    #[serde(default)]
    pub too_few: usize,
    /// Minutes between the first and the last of the earlier run's records, where that is
    /// longer than one session ([`Report::before_finished`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_sessions_min: Option<u64>,
    pub headlines: usize,
    pub headlines_moved: Vec<String>,
    /// The practical threshold in force, in percent.
    pub threshold_percent: f64,
    /// The machine's speed before → after ([`Report::machine_cell`]) and whether it
    /// moved; absent in comparisons of runs without the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_speed: Option<String>,
    #[serde(default)]
    pub machine_speed_moved: bool,
}

impl TwoRuns {
    /// Whether both runs of every experiment compared had one profile (and so the same
    /// parameters): only such a comparison says how well an interval covers a rebuild.
    /// Read from [`TwoRuns::profiles`], as [`Report::two_runs`] writes it.
    pub fn same_profile(&self) -> bool {
        self.profiles.split(", ").all(|p| {
            p.split(" → ")
                .collect::<Vec<_>>()
                .windows(2)
                .all(|w| w[0] == w[1])
        })
    }
}

pub fn two_runs_path(dir: &Path) -> PathBuf {
    dir.join("two-runs.json")
}

/// The comparisons remembered in `dir`, oldest first (at most [`KEPT`]).
pub fn two_runs(dir: &Path) -> Vec<TwoRuns> {
    harness::safe::read_own_file(&two_runs_path(dir), harness::safe::RECORD_CAP)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// How many comparisons are remembered.
pub const KEPT: usize = 20;

impl Report {
    /// This report as a remembered comparison; `None` when nothing was compared.
    pub fn two_runs(&self, machine: String) -> Option<TwoRuns> {
        if self.compared == 0 {
            return None;
        }
        let now = std::time::SystemTime::now();
        let profiles = self
            .profiles
            .iter()
            .map(|(b, a)| format!("{b} → {a}"))
            .collect::<Vec<_>>()
            .join(", ");
        Some(TwoRuns {
            at: humantime::format_rfc3339_seconds(now)
                .to_string()
                .replace('T', " ")
                .replace('Z', " UTC"),
            at_unix: now
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            machine,
            profiles,
            experiments: self.experiments,
            summaries: self.compared,
            moved: self.moves.len(),
            too_few: self.too_few,
            before_sessions_min: self.before_sessions_min(),
            headlines: self.headlines,
            headlines_moved: self.headlines_moved.clone(),
            threshold_percent: harness::stats::threshold() * 100.0,
            machine_speed: self.machine_cell(),
            machine_speed_moved: self.machine_moved(),
        })
    }
}

/// Compares `before` with `after`, remembers the comparison in `dir` (when anything
/// was compared) and returns the report's text.
pub fn report_and_remember(before: &[Record], after: &[Record], dir: &Path) -> String {
    let rep = compare(before, after);
    let machine = after
        .first()
        .map(|r| harness::render::machine_line(&r.provenance.machine))
        .unwrap_or_default();
    let mut text = rep.render();
    if let Some(t) = rep.two_runs(machine) {
        let mut all = two_runs(dir);
        all.push(t);
        let skip = all.len().saturating_sub(KEPT);
        let all: Vec<TwoRuns> = all.into_iter().skip(skip).collect();
        let written = serde_json::to_vec_pretty(&all)
            .map_err(anyhow::Error::from)
            .and_then(|j| write_atomically(&two_runs_path(dir), &j));
        if let Err(e) = written {
            text.push_str(&format!(
                "  note: could not remember this comparison: {e:#}\n"
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::record::{Reading, Unit};

    /// A record measured at `at` whose rounds read a steady figure and `values`.
    fn record(values: &[f64], at: u64) -> Record {
        let rounds = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                vec![
                    Reading::new("steady", Unit::Nanos, 100.0 + (i % 3) as f64),
                    Reading::new("moving", Unit::Nanos, *v),
                ]
            })
            .collect();
        let mut r = harness::fixture::record_of_readings("ch", "exp", rounds);
        r.provenance.measured_at = format!("t{at}");
        r.provenance.measured_unix = at;
        r
    }

    #[test]
    fn only_summaries_whose_intervals_part_have_moved() {
        let before = record(&[10.0, 11.0, 12.0, 10.5, 11.5, 10.8], 1);
        let after = record(&[20.0, 21.0, 22.0, 20.5, 21.5, 20.8], 2);
        let rep = compare(std::slice::from_ref(&before), &[after]);
        assert_eq!(rep.compared, 2);
        assert_eq!(rep.moves.len(), 1);
        assert_eq!(rep.moves[0].key, "moving");
        let text = rep.render();
        assert!(
            text.starts_with("What changed since the previous run: 1 of 2 summaries moved"),
            "{text}"
        );
        // The same record again: not measured again, nothing moved.
        let rep = compare(std::slice::from_ref(&before), std::slice::from_ref(&before));
        assert_eq!((rep.compared, rep.moves.len()), (0, 0));
        assert!(rep.notes[0].contains("not measured again"));
    }

    /// An earlier run whose records finished in two sessions (`make build` measured
    /// some later) is said so; one session is not (the tenth review).
    #[test]
    fn an_earlier_run_over_several_sessions_is_named() {
        let v = [10.0, 11.0, 12.0, 10.5, 11.5, 10.8];
        let mut other = record(&v, 1_000);
        other.experiment = "other".into();
        let before = [record(&v, 40), other];
        let mut after_other = record(&v, 5_000);
        after_other.experiment = "other".into();
        let after = [record(&v, 5_000), after_other];
        let rep = compare(&before, &after);
        assert_eq!(rep.before_finished, Some((40, 1_000)));
        assert_eq!(rep.before_sessions_min(), Some(16));
        let rep = compare(&before[..1], &after[..1]);
        assert_eq!(rep.before_sessions_min(), None);
    }

    #[test]
    fn a_resolved_change_within_the_threshold_has_not_moved() {
        // Intervals about 1 % wide and apart, medians 2 % apart: resolved, not relevant.
        let before = record(&[100.0, 100.5, 101.0, 100.2, 100.8, 100.4], 1);
        let after = record(&[102.0, 102.5, 103.0, 102.2, 102.8, 102.4], 2);
        let rep = compare(std::slice::from_ref(&before), std::slice::from_ref(&after));
        assert_eq!((rep.compared, rep.moves.len()), (2, 0), "{rep:?}");
        assert!(moved(
            &after.estimate("moving").unwrap().scaled(1.1),
            &before.estimate("moving").unwrap()
        ));
    }

    /// `r` with every round's probe reading `ns` (plus a little jitter).
    fn probed(mut r: Record, ns: f64) -> Record {
        for (i, round) in r.rounds.iter_mut().enumerate() {
            round.noise.syscall_ns = Some(ns + (i % 3) as f64);
        }
        r
    }

    #[test]
    fn the_machine_is_compared_and_named_when_it_moved() {
        let before = record(&[10.0, 11.0, 12.0, 10.5, 11.5, 10.8], 1);
        let after = record(&[20.0, 21.0, 22.0, 20.5, 21.5, 20.8], 2);
        // No probe in either run (older results): nothing said about the machine.
        let rep = compare(std::slice::from_ref(&before), std::slice::from_ref(&after));
        assert_eq!(rep.machine, None);
        assert!(!rep.render().contains("machine"));
        // The same speed: compared, not moved.
        let rep = compare(
            &[probed(before.clone(), 200.0)],
            &[probed(after.clone(), 201.0)],
        );
        assert!(rep.machine.is_some() && !rep.machine_moved());
        assert!(
            rep.render()
                .contains("The machine itself did not clearly move"),
            "{}",
            rep.render()
        );
        // 25 % slower system calls: the machine moved, and the page's record says so.
        let rep = compare(&[probed(before, 200.0)], &[probed(after, 250.0)]);
        assert!(rep.machine_moved());
        let text = rep.render();
        assert!(
            text.contains("The machine itself moved between the runs") && text.contains("×1.25"),
            "{text}"
        );
        let t = rep.two_runs("m".into()).unwrap();
        assert!(t.machine_speed_moved && t.machine_speed.unwrap().contains("moved ×1.25"));
    }

    #[test]
    fn comparisons_are_remembered_for_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let before = record(&[10.0, 11.0, 12.0, 10.5, 11.5, 10.8], 1);
        let after = record(&[20.0, 21.0, 22.0, 20.5, 21.5, 20.8], 2);
        let text = report_and_remember(
            std::slice::from_ref(&before),
            std::slice::from_ref(&after),
            dir.path(),
        );
        assert!(text.contains("1 of 2 summaries moved"), "{text}");
        // Nothing compared: nothing remembered.
        report_and_remember(&[], std::slice::from_ref(&after), dir.path());
        let runs = two_runs(dir.path());
        assert_eq!(runs.len(), 1);
        assert_eq!(
            (runs[0].summaries, runs[0].moved, runs[0].experiments),
            (2, 1, 1)
        );
        assert_eq!(runs[0].profiles, "quick → quick");
        for _ in 0..KEPT + 3 {
            report_and_remember(
                std::slice::from_ref(&before),
                std::slice::from_ref(&after),
                dir.path(),
            );
        }
        assert_eq!(two_runs(dir.path()).len(), KEPT);
    }
}
