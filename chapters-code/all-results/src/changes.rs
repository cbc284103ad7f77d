//! What changed since the previous run: `make regenerate` takes a snapshot of the
//! results the book shows before it measures, and compares afterwards.
//!
//! A summary "moved" when its median (or, for a mean-only summary, its mean) changed
//! by more than the two runs' 99.9 % confidence half-widths added together — the
//! interval of the mean stands in for the noise of the centre.

use crate::CHAPTERS;
use crate::stats::stats;
use harness::render::{fmt_ns, sig3};
use harness::{Profile, Record, cache};
use std::path::{Path, PathBuf};

pub fn snapshot_path(dir: &Path) -> PathBuf {
    dir.join("previous-run.json")
}

/// The newest stored record of an experiment, whatever code made it.
fn newest_on_disk(dir: &Path, chapter: &str, experiment: &str) -> Option<Record> {
    [Profile::Full, Profile::Quick]
        .into_iter()
        .filter_map(|p| cache::load(dir, chapter, experiment, p))
        .max_by(|a, b| a.provenance.measured_at.cmp(&b.provenance.measured_at))
}

/// What the book shows now, without measuring anything: the matching record, else the
/// newest one on disk.
pub fn current(dir: &Path) -> Vec<Record> {
    CHAPTERS
        .iter()
        .flat_map(|ch| {
            let key = ch.key();
            ch.experiments.iter().filter_map(move |e| {
                cache::best_match(dir, ch.name, e.name, &key)
                    .or_else(|| newest_on_disk(dir, ch.name, e.name))
            })
        })
        .collect()
}

/// Saves what the book shows now as the previous run; returns how many records.
pub fn snapshot(dir: &Path) -> anyhow::Result<usize> {
    let records = current(dir);
    std::fs::create_dir_all(dir)?;
    let path = snapshot_path(dir);
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&records)?)?;
    std::fs::rename(&tmp, &path)?;
    Ok(records.len())
}

pub fn load_snapshot(dir: &Path) -> Option<Vec<Record>> {
    serde_json::from_slice(&std::fs::read(snapshot_path(dir)).ok()?).ok()
}

/// One summary whose centre moved beyond its noise.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    pub experiment: String,
    pub label: String,
    pub what: &'static str,
    pub before: f64,
    pub after: f64,
    pub noise: f64,
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
        if b.provenance.measured_at == a.provenance.measured_at && b.key == a.key {
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
        let old = stats(&b.data);
        for s in stats(&a.data) {
            let Some(o) = old.iter().find(|o| o.label == s.label) else {
                continue;
            };
            rep.compared += 1;
            let noise = o.ci + s.ci;
            if (s.center() - o.center()).abs() > noise {
                rep.moves.push(Move {
                    experiment: id.clone(),
                    label: s.label.clone(),
                    what: s.center_name(),
                    before: o.center(),
                    after: s.center(),
                    noise,
                });
            }
        }
    }
    rep
}

impl Report {
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "What changed since the previous run: {} of {} summaries moved by more than their noise \
             (the sum of both runs' 99.9 % confidence half-widths).\n",
            self.moves.len(),
            self.compared
        ));
        for n in &self.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        for m in &self.moves {
            let pct = if m.before != 0.0 {
                let pct = (m.after - m.before) / m.before * 100.0;
                let sign = if pct >= 0.0 { "+" } else { "" };
                format!(" ({sign}{}%)", sig3(pct))
            } else {
                String::new()
            };
            out.push_str(&format!(
                "  {}  {}: {} {} → {}{pct}, noise ±{}\n",
                m.experiment,
                m.label,
                m.what,
                fmt_ns(m.before),
                fmt_ns(m.after),
                fmt_ns(m.noise)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::machine::Machine;
    use harness::record::{Provenance, Status};

    fn rec(at: &str, p50: f64, ci: f64) -> Record {
        Record {
            chapter: "ch".into(),
            experiment: "exp".into(),
            key: "k".into(),
            profile: Profile::Full,
            provenance: Provenance {
                machine: Machine::current(),
                measured_at: at.into(),
            },
            params: vec![],
            status: Status::Ok,
            notes: vec![],
            wall_s: 1.0,
            data: serde_json::json!({"rows": [
                {"name": "moves", "s": {"n": 5, "p50": p50, "mean": p50, "ci999": ci}},
                {"name": "stays", "s": {"n": 5, "p50": 100.0, "mean": 100.0, "ci999": ci}},
            ]}),
        }
    }

    #[test]
    fn only_moves_beyond_the_noise_are_reported() {
        let r = compare(&[rec("t1", 100.0, 5.0)], &[rec("t2", 150.0, 5.0)]);
        assert_eq!(r.compared, 2);
        assert_eq!(r.moves.len(), 1, "{r:?}");
        assert_eq!(r.moves[0].label, "moves · s");
        assert!(r.render().contains("+50.0%"), "{}", r.render());
        let quiet = compare(&[rec("t1", 100.0, 30.0)], &[rec("t2", 150.0, 30.0)]);
        assert!(quiet.moves.is_empty());
        let same = compare(&[rec("t1", 100.0, 5.0)], &[rec("t1", 100.0, 5.0)]);
        assert_eq!(same.compared, 0);
    }

    #[test]
    fn snapshot_round_trips_through_the_results_folder() {
        let dir = tempfile::tempdir().unwrap();
        let r = rec("t1", 1.0, 1.0);
        cache::store(dir.path(), &r).unwrap();
        assert_eq!(newest_on_disk(dir.path(), "ch", "exp"), Some(r));
        snapshot(dir.path()).unwrap();
        assert!(load_snapshot(dir.path()).is_some());
    }
}
