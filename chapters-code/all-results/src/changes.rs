//! What changed since the previous run: `make regenerate` takes a snapshot of the
//! results the book shows before it measures, and compares afterwards.
//!
//! A summary is one reading of one experiment: its median over rounds with its 95 %
//! interval. It "moved" when the two runs' intervals do not overlap — the same rule the
//! chapters use for "faster" and "slower".

use harness::cache::{self, write_atomically};
use harness::render::{fmt_estimate, sig3};
use harness::stats::verdict;
use harness::{Profile, Record};
use std::path::{Path, PathBuf};

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

pub fn load_snapshot(dir: &Path) -> Option<Vec<Record>> {
    serde_json::from_slice(&std::fs::read(snapshot_path(dir)).ok()?).ok()
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
    pub notes: Vec<String>,
}

pub fn compare(before: &[Record], after: &[Record]) -> Report {
    let mut rep = Report::default();
    for a in after {
        let id = format!("{}/{}", a.chapter, a.experiment);
        let Some(b) = before
            .iter()
            .find(|b| b.chapter == a.chapter && b.experiment == a.experiment)
        else {
            rep.notes
                .push(format!("{id}: new (nothing to compare with)"));
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
        for key in a.keys() {
            let (Some(ea), Some(eb), Some(unit)) = (a.estimate(key), b.estimate(key), a.unit(key))
            else {
                continue;
            };
            rep.compared += 1;
            if verdict(&ea, &eb).is_clear() {
                rep.moves.push(Move {
                    experiment: id.clone(),
                    key: key.to_string(),
                    before: fmt_estimate(&eb, unit),
                    after: fmt_estimate(&ea, unit),
                    ratio: ea.median / eb.median,
                });
            }
        }
    }
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
            "What changed since the previous run: {} of {} summaries moved{share} — their 95 % intervals over rounds do not overlap.\n",
            self.moves.len(),
            self.compared
        );
        for n in &self.notes {
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

#[cfg(test)]
mod tests {
    use super::*;
    use harness::machine::Machine;
    use harness::noise::Noise;
    use harness::record::{FORMAT, Provenance, Reading, RoundRecord, Status, Unit};

    fn record(values: &[f64], at: u64) -> Record {
        Record {
            format: FORMAT,
            chapter: "ch".into(),
            experiment: "exp".into(),
            key: "k".into(),
            profile: Profile::Quick,
            build: "release".into(),
            provenance: Provenance {
                machine: Machine::current(),
                measured_at: format!("t{at}"),
                measured_unix: at,
            },
            params: vec![],
            details: vec![],
            isolation: String::new(),
            status: Status::Ok,
            notes: vec![],
            wall_s: 1.0,
            rounds: values
                .iter()
                .enumerate()
                .map(|(i, v)| RoundRecord {
                    index: i as u32,
                    noise: Noise::default(),
                    readings: vec![
                        Reading::new("steady", Unit::Nanos, 100.0 + (i % 3) as f64),
                        Reading::new("moving", Unit::Nanos, *v),
                    ],
                    data: serde_json::Value::Null,
                })
                .collect(),
        }
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
}
