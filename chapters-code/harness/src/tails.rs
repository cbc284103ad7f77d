//! Tail columns that are honest about their samples: p99 only from 1,000, p99.9
//! only from 10,000, otherwise the maximum.

use crate::fmt::*;
use crate::stats::{P99_MIN_SAMPLES, P999_MIN_SAMPLES, Summary};

/// Which tail columns a set of distributions supports: p99 only when every one has at
/// least 1,000 samples, p99.9 only from 10,000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tails {
    pub p99: bool,
    pub p999: bool,
}

impl Tails {
    pub fn for_counts(counts: impl IntoIterator<Item = u64>) -> Tails {
        let min = counts.into_iter().min().unwrap_or(0);
        Tails {
            p99: min >= P99_MIN_SAMPLES,
            p999: min >= P999_MIN_SAMPLES,
        }
    }

    /// Only up to the p99, for a table that keeps its columns few.
    pub fn without_p999(self) -> Tails {
        Tails {
            p999: false,
            ..self
        }
    }

    /// The tail columns alone, `[p99], [p99.9], max`, for a table with columns of its
    /// own before them.
    pub fn tail_headers(self) -> Vec<&'static str> {
        let mut h = Vec::new();
        if self.p99 {
            h.push("p99");
        }
        if self.p999 {
            h.push("p99.9");
        }
        h.push("max");
        h
    }

    /// The cells for [`Tails::tail_headers`], each formatted by `fmt` ("–" for a tail the
    /// distribution does not have).
    pub fn tail_cells(self, s: &Summary, fmt: impl Fn(f64) -> String) -> Vec<String> {
        let mut c = Vec::new();
        if self.p99 {
            c.push(s.p99.map_or_else(|| "–".into(), &fmt));
        }
        if self.p999 {
            c.push(s.p999.map_or_else(|| "–".into(), &fmt));
        }
        c.push(fmt(s.max));
        c
    }

    /// Headers for [`Tails::cells`]: `n, min, [p99], [p99.9], max` (the median is the
    /// table's own column, over rounds).
    pub fn headers(self) -> Vec<&'static str> {
        let mut h = vec!["n", "min"];
        h.extend(self.tail_headers());
        h
    }

    /// The cells of a pooled distribution in nanoseconds.
    pub fn cells(self, s: &Summary) -> Vec<String> {
        let mut c = vec![fmt_count(s.n), fmt_ns(s.min)];
        c.extend(self.tail_cells(s, fmt_ns));
        c
    }
}
