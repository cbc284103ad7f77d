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

use crate::experiment::{Experiment, Results};
use crate::record::{Keyed, Record, Unit};
use crate::stats::{Better, Comparison, Estimate, Verdict};
use serde::de::DeserializeOwned;

/// What the rounds showed for one finding.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    /// Two arms, `a` ÷ `b`: of the same rounds (judged on their per-round ratios) or
    /// measured apart (on their two intervals); [`Comparison`] says which.
    Pair {
        a: String,
        b: String,
        unit: Unit,
        comparison: Comparison,
    },
    /// One figure: the median over rounds with its interval.
    Figure {
        what: String,
        unit: Unit,
        estimate: Estimate,
    },
    /// Rounds in which something happened: `k` of `n` (a deadlock, a missed deadline).
    Count { what: String, k: u32, n: u32 },
}

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

    /// Two arms from any comparison the chapter computed (a derived per-round value).
    pub fn pair(a: &str, b: &str, unit: Unit, comparison: Comparison) -> Evidence {
        Evidence::Pair {
            a: a.to_string(),
            b: b.to_string(),
            unit,
            comparison,
        }
    }

    /// One figure the chapter computed (a derived per-round value).
    pub fn figure(what: &str, unit: Unit, estimate: Estimate) -> Evidence {
        Evidence::Figure {
            what: what.to_string(),
            unit,
            estimate,
        }
    }

    /// `k` of `n` rounds in which `what` happened.
    pub fn count(what: &str, k: u32, n: u32) -> Evidence {
        Evidence::Count {
            what: what.to_string(),
            k,
            n,
        }
    }

    /// Which arm the rounds favour: `Some(true)` for `a`, `Some(false)` for `b`, `None`
    /// when the rule decides neither (no clear difference, or within the threshold).
    /// A figure favours nothing; a count favours `a` when it happened in any round.
    pub fn favours(&self, better: Better) -> Option<bool> {
        match self {
            Evidence::Pair { comparison, .. } => match (comparison.verdict, better) {
                (Verdict::Below, Better::Lower | Better::Smaller) => Some(true),
                (Verdict::Above, Better::Higher) => Some(true),
                (Verdict::Above, Better::Lower | Better::Smaller) => Some(false),
                (Verdict::Below, Better::Higher) => Some(false),
                (Verdict::Same | Verdict::Unclear, _) => None,
            },
            Evidence::Figure { .. } => Some(true),
            Evidence::Count { k, .. } => Some(*k > 0),
        }
    }
}

/// The advice for each outcome. For a pair: `a` when the rounds favour `a`, `b` when
/// they favour `b`, `neither` when the rule decides nothing. For a figure: `a`. For a
/// count: `a` when it happened in any round, else `neither`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advice {
    pub a: &'static str,
    pub b: &'static str,
    pub neither: &'static str,
}

impl Advice {
    /// The same advice whatever the rounds show (a figure to know, not a choice).
    pub const fn always(text: &'static str) -> Advice {
        Advice {
            a: text,
            b: text,
            neither: text,
        }
    }

    /// The advice the rounds support.
    pub fn chosen(&self, favours: Option<bool>) -> &'static str {
        match favours {
            Some(true) => self.a,
            Some(false) => self.b,
            None => self.neither,
        }
    }
}

/// What explains a finding: a counter the chapter measures and shows, or our
/// hypothesis, marked as such.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Names the counter and where on the page it is shown.
    Counter(&'static str),
    /// Not measured here: the page marks it as our hypothesis.
    Hypothesis(&'static str),
}

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

/// A finding with its round type erased, as the registry holds it.
pub trait AnyFinding: Sync {
    fn id(&self) -> &'static str;
    fn experiment(&self) -> &'static str;
    fn situation(&self) -> &'static str;
    fn better(&self) -> Better;
    fn advice(&self) -> Advice;
    fn why(&self) -> Why;
    fn guide(&self) -> Option<&'static str>;
    /// The evidence in `record` (a result of [`AnyFinding::experiment`]); `Ok(None)`
    /// when the record lacks what the finding reads.
    fn evidence(&self, record: &Record) -> anyhow::Result<Option<Evidence>>;
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
    fn evidence(&self, record: &Record) -> anyhow::Result<Option<Evidence>> {
        Ok((self.evidence)(&Results::decode(record)?))
    }
}
