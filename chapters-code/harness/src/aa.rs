//! The A/A self-test: a twin arm runs the identical code as one of an experiment's
//! variants, in the same rounds, under a reading key ending in [`crate::AA_TWIN`].
//! The book's verdict rule, judging the two on their pairs as it judges every two arms
//! of one experiment, should find no difference between them; how often it does is its
//! false-verdict rate on this machine ("How we measure" shows it), and a result whose
//! own pair came out different says so under its tables.

use crate::fmt::{fmt_estimate, fmt_ratio_estimate, threshold_text};
use crate::record::{Note, NoteKind, Record, Unit};
use crate::stats::{Comparison, Estimate, Verdict};

/// One reading and its A/A twin, summarised over the same rounds.
#[derive(Debug, Clone)]
pub struct Pair {
    /// The original reading's key.
    pub key: String,
    pub unit: Unit,
    pub original: Estimate,
    pub twin: Estimate,
    /// The twin against the original, on their per-round pairs.
    pub comparison: Comparison,
}

impl Pair {
    /// The book's verdict rule on the pair, paired by round as the rule judges any two
    /// arms of one experiment.
    pub fn verdict(&self) -> Verdict {
        self.comparison.verdict
    }

    /// Whether the rule calls the pair different.
    pub fn called_different(&self) -> bool {
        self.verdict().is_clear()
    }

    /// Whether the ratio's interval alone (no threshold) calls it different.
    pub fn apart(&self) -> bool {
        crate::stats::paired_verdict(&self.comparison.ratio, self.comparison.rounds(), 0.0)
            .is_clear()
    }
}

/// Every A/A pair in a record: each reading whose key is another's followed by
/// [`crate::AA_TWIN`], with both summaries.
pub fn pairs(r: &Record) -> Vec<Pair> {
    r.keys()
        .into_iter()
        .filter_map(|twin| {
            let key = twin.strip_suffix(crate::AA_TWIN)?;
            Some(Pair {
                key: key.to_string(),
                unit: r.unit(key)?,
                original: r.estimate(key)?,
                twin: r.estimate(twin)?,
                comparison: r.compare(twin, key)?,
            })
        })
        .collect()
}

/// The note under a result whose own A/A pair the rule called different.
pub fn note(r: &Record) -> Option<Note> {
    let wrong: Vec<String> = pairs(r)
        .into_iter()
        .filter(Pair::called_different)
        .map(|p| {
            format!(
                "{} measured {} and its identical twin {} (the twin's per-round ratio {})",
                p.key,
                fmt_estimate(&p.original, p.unit),
                fmt_estimate(&p.twin, p.unit),
                fmt_ratio_estimate(&p.comparison.ratio)
            )
        })
        .collect();
    (!wrong.is_empty()).then(|| Note {
        kind: NoteKind::Noise,
        text: format!(
            "this run's A/A check failed: {} — the same code, yet a per-round ratio whose interval excludes 1 and lies beyond the {} threshold. A verdict on this result may be a false one too; measure again before acting on it.",
            wrong.join("; "),
            threshold_text()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Reading;

    /// A record whose rounds read `x` and its twin as given.
    pub(crate) fn record(x: &[f64], twin: &[f64]) -> Record {
        let rounds = x
            .iter()
            .zip(twin)
            .map(|(a, b)| {
                vec![
                    Reading::new("x", Unit::Nanos, *a),
                    Reading::new(format!("x{}", crate::AA_TWIN), Unit::Nanos, *b),
                    Reading::new("y", Unit::Nanos, *a),
                ]
            })
            .collect();
        crate::fixture::record_of_readings("ch", "exp", rounds)
    }

    /// A difference pairs the two readings by round: a round that lacks one is left
    /// out, and the rounds keep the order they ran in.
    #[test]
    fn a_difference_pairs_its_readings_by_round() {
        let r = record(&[10.0, 12.0, 30.0], &[4.0, 5.0, 6.0]);
        let d = r.difference("x", &format!("x{}", crate::AA_TWIN)).unwrap();
        assert_eq!((d.median, d.lo, d.hi, d.n), (7.0, 6.0, 24.0, 3));
        assert!(r.difference("x", "absent").is_none());
    }

    #[test]
    fn pairs_are_found_by_their_key_and_judged_by_the_rule() {
        let same = record(
            &[10.0, 11.0, 12.0, 10.5, 11.5, 10.8],
            &[10.2, 11.1, 11.9, 10.4, 11.6, 10.9],
        );
        let p = pairs(&same);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].key, "x");
        assert!(!p[0].called_different() && !p[0].apart());
        assert!(note(&same).is_none());
        // Apart by 2 %: the intervals call it different, the threshold does not.
        let close = record(
            &[100.0, 100.1, 100.2, 100.0, 100.1, 100.2],
            &[102.0, 102.1, 102.2, 102.0, 102.1, 102.2],
        );
        let p = &pairs(&close)[0];
        assert!(p.apart() && !p.called_different());
        assert!(note(&close).is_none());
        // Apart by 20 %: a false verdict, named under the result.
        let far = record(
            &[100.0, 100.1, 100.2, 100.0, 100.1, 100.2],
            &[120.0, 120.1, 120.2, 120.0, 120.1, 120.2],
        );
        assert!(pairs(&far)[0].called_different());
        let n = note(&far).unwrap();
        assert!(
            n.text.contains("A/A check failed") && n.text.contains("x measured"),
            "{}",
            n.text
        );
    }
}
