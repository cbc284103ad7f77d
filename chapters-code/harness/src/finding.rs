//! Findings as data: what a chapter concludes, declared once.
//!
//! A [`Finding`] is one row of a chapter's decision table: the situation a reader is
//! in, what the rounds compared (two arms of one experiment, one figure, or rounds in
//! which something happened), which way is better, the advice for each outcome, and
//! the counter that explains it (or our hypothesis). The harness renders every
//! finding the same way (`answer.rs`): the chapter's answer table, the guide's rows
//! and the appendix read the same list, so no view words a verdict by hand.
//!
//! The advice a row shows is chosen by the verdict rule, never by the chapter: when
//! the rounds favour neither arm, the row says so and gives the advice for that case.

pub use crate::evidence::{Advice, AnyFinding, Evidence, Why};
use crate::experiment::{Experiment, Results};
use crate::record::{Keyed, Record};
use crate::stats::Better;
use serde::de::DeserializeOwned;

/// One finding of one experiment, with its evidence read from the experiment's own
/// typed rounds.
pub struct Finding<R: 'static> {
    /// Unique in the book: the guide and the tests name findings by it.
    pub id: &'static str,
    pub experiment: &'static Experiment<R>,
    /// The reader's situation, in their words: "A message arrives every few ms".
    pub situation: &'static str,
    pub better: Better,
    pub advice: Advice,
    pub why: Why,
    /// The guide section it belongs in, if any (`what-to-use-when`'s section names).
    pub guide: Option<&'static str>,
    /// A threat to validity rather than a finding ([`Finding::threat`]).
    pub threat: bool,
    pub evidence: fn(&Results<R>) -> Option<Evidence>,
}

impl<R> Finding<R> {
    pub const fn new(
        id: &'static str,
        experiment: &'static Experiment<R>,
        situation: &'static str,
        evidence: fn(&Results<R>) -> Option<Evidence>,
    ) -> Finding<R> {
        Finding {
            id,
            experiment,
            situation,
            better: Better::Lower,
            advice: Advice::always(""),
            why: Why::Hypothesis(""),
            guide: None,
            threat: false,
            evidence,
        }
    }

    /// A threat to validity: what could make a figure of the chapter wrong (`risk`),
    /// what the chapter does about it (`control`), and the figures before and after the
    /// control (`evidence`: best a pair, the figure without the control as `a` and with
    /// it as `b`, judged by the same rule). It renders in the chapter's threats table
    /// (`table threats`), never in the decision table or the guide.
    pub const fn threat(
        id: &'static str,
        experiment: &'static Experiment<R>,
        risk: &'static str,
        control: &'static str,
        evidence: fn(&Results<R>) -> Option<Evidence>,
    ) -> Finding<R> {
        Finding {
            id,
            experiment,
            situation: risk,
            better: Better::Lower,
            advice: Advice::always(control),
            why: Why::Hypothesis(""),
            guide: None,
            threat: true,
            evidence,
        }
    }

    pub const fn better(self, better: Better) -> Finding<R> {
        Finding { better, ..self }
    }

    pub const fn advice(
        self,
        a: &'static str,
        b: &'static str,
        neither: &'static str,
    ) -> Finding<R> {
        Finding {
            advice: Advice { a, b, neither },
            ..self
        }
    }

    pub const fn always(self, advice: &'static str) -> Finding<R> {
        Finding {
            advice: Advice::always(advice),
            ..self
        }
    }

    pub const fn why(self, why: Why) -> Finding<R> {
        Finding { why, ..self }
    }

    pub const fn guide(self, section: &'static str) -> Finding<R> {
        Finding {
            guide: Some(section),
            ..self
        }
    }
}

impl<R: DeserializeOwned + Sync + 'static> AnyFinding for Finding<R> {
    fn id(&self) -> &'static str {
        self.id
    }
    fn experiment(&self) -> &'static str {
        self.experiment.name
    }
    fn situation(&self) -> &'static str {
        self.situation
    }
    fn better(&self) -> Better {
        self.better
    }
    fn advice(&self) -> Advice {
        self.advice
    }
    fn why(&self) -> Why {
        self.why
    }
    fn guide(&self) -> Option<&'static str> {
        self.guide
    }
    fn is_threat(&self) -> bool {
        self.threat
    }
    fn evidence(&self, record: &Record) -> anyhow::Result<Option<Evidence>> {
        Ok((self.evidence)(&Results::decode(record)?))
    }
}

/// Evidence read from a result by the experiment's own typed keys.
impl Evidence {
    /// Two readings of one result, by the experiment's own keys, judged on their pairs.
    pub fn readings<R: Keyed>(
        r: &Results<R>,
        (a, ka): (&str, &R::Key),
        (b, kb): (&str, &R::Key),
    ) -> Option<Evidence> {
        let comparison = r.compare(ka, kb)?;
        let unit = r.record.unit(&crate::record::ReadingKey::stored(ka))?;
        Some(Evidence::Pair {
            a: a.to_string(),
            b: b.to_string(),
            unit,
            comparison,
        })
    }

    /// One reading of one result, by the experiment's own key.
    pub fn reading<R: Keyed>(r: &Results<R>, what: &str, key: &R::Key) -> Option<Evidence> {
        let stored = crate::record::ReadingKey::stored(key);
        Some(Evidence::Figure {
            what: what.to_string(),
            unit: r.record.unit(&stored)?,
            estimate: r.estimate(key)?,
        })
    }
}
