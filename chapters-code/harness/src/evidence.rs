//! What a finding shows and says, apart from the experiment it reads: its
//! [`Evidence`], the [`Advice`] for each outcome, the [`Why`], and [`AnyFinding`], a
//! finding with its round type erased as a chapter's registry holds it. The typed
//! [`crate::finding::Finding`] builds on these.

use crate::record::{Record, Unit};
use crate::stats::{Better, Comparison, Estimate, Verdict};

/// What the rounds showed for one finding. (A pair's [`Comparison`] makes that variant
/// the largest; a page holds a few of these, one per row, so it is not boxed.)
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
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
    /// A figure favours `a` (its one piece of advice) unless its interval reaches both
    /// sides of zero; a count favours `a` when it happened in any round, and neither
    /// when it never did.
    pub fn favours(&self, better: Better) -> Option<bool> {
        match self {
            Evidence::Pair { comparison, .. } => match (comparison.verdict, better) {
                (Verdict::Below, Better::Lower | Better::Smaller) => Some(true),
                (Verdict::Above, Better::Higher) => Some(true),
                (Verdict::Above, Better::Lower | Better::Smaller) => Some(false),
                (Verdict::Below, Better::Higher) => Some(false),
                (Verdict::Same | Verdict::Unclear, _) => None,
            },
            // A figure favours its advice unless its interval reaches both sides of
            // zero (a difference the rounds cannot sign): then the `neither` advice.
            Evidence::Figure { estimate, .. } => {
                (!(estimate.lo < 0.0 && estimate.hi > 0.0)).then_some(true)
            }
            Evidence::Count { k, .. } => (*k > 0).then_some(true),
        }
    }

    /// A pair the rule could not judge for want of rounds: fewer than
    /// [`crate::stats::VERDICT_MIN_ROUNDS`] independent ones measured both arms
    /// ([`crate::stats::Comparison::too_few_rounds`]). Its advice is none of
    /// the three: "neither" would read as "no difference", which nobody measured.
    pub fn too_few_rounds(&self) -> bool {
        match self {
            Evidence::Pair { comparison, .. } => comparison.too_few_rounds(),
            Evidence::Figure { .. } | Evidence::Count { .. } => false,
        }
    }
}

/// The advice of a row whose pair had too few rounds to judge.
pub const TOO_FEW_ROUNDS_ADVICE: &str =
    "None yet: too few rounds ran to judge; measure again (`make regenerate`)";

/// The advice for each outcome. For a pair: `a` when the rounds favour `a`, `b` when
/// they favour `b`, `neither` when the rule decides nothing. For a figure: `a`, or
/// `neither` when its interval reaches both sides of zero. For a count: `a` when it
/// happened in any round, else `neither`.
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

/// A finding with its round type erased, as the registry holds it.
pub trait AnyFinding: Sync {
    fn id(&self) -> &'static str;
    fn experiment(&self) -> &'static str;
    fn situation(&self) -> &'static str;
    fn better(&self) -> Better;
    fn advice(&self) -> Advice;
    fn why(&self) -> Why;
    fn guide(&self) -> Option<&'static str>;
    /// A threat to validity, not a finding: a row of the chapter's threats table
    /// (`table threats`), where the situation is what could make a figure wrong and the
    /// advice is what the chapter does about it.
    fn is_threat(&self) -> bool {
        false
    }
    /// The evidence in `record` (a result of [`AnyFinding::experiment`]); `Ok(None)`
    /// when the record lacks what the finding reads.
    fn evidence(&self, record: &Record) -> anyhow::Result<Option<Evidence>>;
}
