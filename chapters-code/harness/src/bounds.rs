//! What one round can hold, from the parameters it ran with (issue 35, "numbers that
//! cannot exhaust a reader").
//!
//! The door ([`crate::validate`]) caps every record with book-wide sizes. A round's own
//! counts are bounded more tightly here, by what its experiment's code can make: a
//! loop of `messages` messages stores at most `messages` latencies, a sweep stores one
//! point per request it sweeps, a time-limited loop at most one sample per nanosecond
//! of its bound. Each chapter's round type says so in [`RoundBounds`], and
//! [`crate::AnyExperiment::check_rounds`] asks it of every stored round, with the
//! parameters its record stores (checked first against their declared ranges).
//!
//! A refusal names the field, the stored figure, the bound and where the bound comes
//! from: `round 3: latency holds 4,294,967,295 samples; this experiment makes at most
//! 20,000 a round (messages = 20,000)`.

use crate::fmt::fmt_count;
use crate::params::{Param, ParamValue};
use crate::stats::Dist;

/// The most readings one round may give (the book's most is 61): the door's cap on
/// every round ([`crate::validate::MAX_READINGS`]), and the bound on a list of arms of
/// another OS's build.
pub const MAX_READINGS: usize = 256;

/// A round type's bounds: every count, length and distribution of one round at most
/// what the experiment's code makes with `params`.
pub trait RoundBounds {
    /// `Err` names the first field beyond its bound (without the round's number,
    /// which the caller adds).
    fn check_bounds(&self, params: &Params) -> Result<(), String>;
}

/// The parameters a record stores, as its round bounds read them.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    stored: &'a [ParamValue],
    /// Whether the record was made by a build for this OS, whose arms this build has.
    this_os: bool,
}

impl<'a> Params<'a> {
    /// The parameters of a record made by a build for this OS.
    pub fn new(stored: &'a [ParamValue]) -> Params<'a> {
        Params {
            stored,
            this_os: true,
        }
    }

    /// The parameters of `record`, which may come from another OS's build.
    pub fn of(record: &'a crate::Record) -> Params<'a> {
        Params {
            stored: &record.params,
            this_os: record.provenance.machine.target_os()
                == crate::machine::TargetOs::this_build(),
        }
    }

    /// Whether the record was made by a build for this OS.
    pub fn this_os(&self) -> bool {
        self.this_os
    }

    /// The number of arms a round of this build has (`n`, `why`) as a bound on a list
    /// of them. A record of another OS's build may have arms this build lacks (its
    /// calls, its ways of sleeping): its lists are bounded by the most readings any
    /// round may give ([`MAX_READINGS`]) instead.
    pub fn arms(&self, n: usize, why: impl Into<String>) -> Limit {
        if self.this_os {
            Limit::new(n as u64, why)
        } else {
            Limit::new(
                MAX_READINGS as u64,
                "the most readings a round gives; a record of another OS's build",
            )
        }
    }

    /// The value the record stores for `p`; where it stores none (a record older than
    /// the parameter), the largest value `p` takes, which bounds whatever was measured.
    pub fn value(&self, p: &Param) -> f64 {
        self.stored
            .iter()
            .find(|v| v.name == p.name)
            .map_or(p.max, |v| v.value)
    }

    /// `p`'s value as a bound, if the record stores it: for a round type that several
    /// experiments share, whose parameters differ.
    pub fn stored(&self, p: &Param) -> Option<Limit> {
        self.stored
            .iter()
            .any(|v| v.name == p.name)
            .then(|| self.limit(p))
    }

    /// `p`'s value as a bound: `messages = 20,000`.
    pub fn limit(&self, p: &Param) -> Limit {
        let v = self.value(p).max(0.0).ceil();
        let n = if v >= u64::MAX as f64 {
            u64::MAX
        } else {
            v as u64
        };
        Limit::new(n, format!("{} = {}", p.name, fmt_count(n)))
    }
}

/// A bound on a count, with where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub n: u64,
    pub why: String,
}

impl Limit {
    /// A bound of the code itself: `Limit::new(4, "4 transports")`.
    pub fn new(n: u64, why: impl Into<String>) -> Limit {
        Limit { n, why: why.into() }
    }

    /// Both bounds multiplied: `messages = 20 × 2 arms`.
    /// A list the code makes `n` of (arms, sizes, ways of measuring): `n`, said as
    /// "`n` `what`".
    pub fn count(n: usize, what: &str) -> Limit {
        Limit::new(n as u64, format!("{n} {what}"))
    }

    pub fn times(self, other: Limit) -> Limit {
        Limit {
            n: self.n.saturating_mul(other.n),
            why: format!("{} × {}", self.why, other.why),
        }
    }

    /// Both bounds added: `messages = 20 + warmup_messages = 2`.
    pub fn plus(self, other: Limit) -> Limit {
        Limit {
            n: self.n.saturating_add(other.n),
            why: format!("{} + {}", self.why, other.why),
        }
    }

    /// The larger of two bounds, either of which a round may meet.
    pub fn max(self, other: Limit) -> Limit {
        if other.n > self.n { other } else { self }
    }

    /// `stored` against the bound: `latency holds 4,294,967,295 samples; this
    /// experiment makes at most 20,000 a round (messages = 20,000)`.
    pub fn check(&self, field: &str, noun: &str, stored: u64) -> Result<(), String> {
        if stored <= self.n {
            return Ok(());
        }
        Err(format!(
            "{field} holds {} {noun}; this experiment makes at most {} a round ({})",
            fmt_count(stored),
            fmt_count(self.n),
            self.why
        ))
    }

    /// A list's length against the bound.
    pub fn len<T>(&self, field: &str, noun: &str, items: &[T]) -> Result<(), String> {
        self.check(field, noun, items.len() as u64)
    }

    /// A distribution's samples against the bound.
    pub fn dist(&self, field: &str, d: &Dist) -> Result<(), String> {
        self.check(field, "samples", d.len())
    }
}

/// The most samples a loop bounded by `ms` milliseconds can take: one a nanosecond,
/// far above what any of the book's loops (a system call or a message each) makes.
pub fn per_ns_of(params: &Params, bound_ms: &Param) -> Limit {
    params
        .limit(bound_ms)
        .times(Limit::new(1_000_000, "1 a nanosecond"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_names_the_field_the_figure_and_where_it_comes_from() {
        const MESSAGES: Param = Param::int("messages", 1, 1_000_000).defaults(20, 20_000);
        let stored = [ParamValue {
            name: "messages".into(),
            value: 20_000.0,
            integer: true,
            unit: String::new(),
            default: true,
        }];
        let p = Params::new(&stored);
        let limit = p.limit(&MESSAGES);
        assert_eq!(limit.check("latency", "samples", 20_000), Ok(()));
        assert_eq!(
            limit
                .check("latency", "samples", 4_294_967_295)
                .unwrap_err(),
            "latency holds 4,294,967,295 samples; this experiment makes at most 20,000 a round (messages = 20,000)"
        );
        let two = limit.times(Limit::new(2, "2 arms"));
        assert_eq!(two.n, 40_000);
        assert_eq!(two.why, "messages = 20,000 × 2 arms");
        // A record without the parameter is bounded by the largest value it takes.
        assert_eq!(Params::new(&[]).limit(&MESSAGES).n, 1_000_000);
    }
}
