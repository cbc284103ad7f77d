//! The leaf of the harness: numbers and units as a reader reads them (`412 ns`,
//! `12.3 µs (11.9–12.8)`, `9.61×`, `1,000,000`, `9.50 KiB`). It imports nothing from
//! the rest of the crate but the statistics' plain types and the stored [`Unit`], so
//! every layer can use it. It is outside the code key: a new number format re-renders
//! the book and measures nothing.

use crate::stats::{CONFIDENCE, Estimate, threshold};

/// The stored unit type lives in the key's `unit.rs`; it is re-exported here so
/// `harness::fmt::Unit` keeps naming it.
pub use crate::unit::Unit;

impl Unit {
    /// A value in this unit, for people.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Nanos => fmt_ns(v),
            Unit::Bytes => fmt_bytes(v),
            Unit::OpsPerSec => format!("{} ops/s", fmt_rate(v)),
            Unit::Number => sig3(v),
        }
    }
}

/// Formats nanoseconds with three significant digits and a unit a reader expects:
/// `412 ns`, `12.3 µs`, `45.1 ms`, `1.23 s`.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "–".into();
    }
    // The unit is chosen after rounding, so 999.6 µs reads 1.00 ms, not 1000 µs.
    let (value, unit) = match round_sig3(ns).abs() {
        x if x < 1e3 => (ns, "ns"),
        x if x < 1e6 => (ns / 1e3, "µs"),
        x if x < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    format!("{} {unit}", sig3(value))
}

/// `x` rounded to three significant digits.
fn round_sig3(x: f64) -> f64 {
    round_sig(x, 3)
}

/// `x` rounded to `digits` significant digits.
fn round_sig(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// A ratio (its median or an interval's bound) as the book writes it: three significant
/// digits, or more (up to six) where three would round it onto or across an edge the
/// verdict rule reads: 1 (no difference) or the threshold's 1 + t and 1 ÷ (1 + t). Beside a 5 % threshold, 1.054
/// reads `1.054`, not `1.05`, and 0.998 reads `0.998`, not `1.00`.
pub fn ratio_bound(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || x.abs() >= 100.0 {
        return sig3(x);
    }
    let t = threshold();
    let side = |v: f64, edge: f64| {
        let close = (v - edge).abs() <= edge.abs() * 1e-12;
        if close {
            0
        } else if v > edge {
            1
        } else {
            -1
        }
    };
    let keeps_side = |v: f64| {
        [1.0, 1.0 + t, 1.0 / (1.0 + t)]
            .iter()
            .all(|&e| side(v, e) == side(x, e))
    };
    let digits = (3..=6).find(|&d| keeps_side(round_sig(x, d))).unwrap_or(6);
    if digits == 3 {
        return sig3(x);
    }
    let decimals = (digits - 1 - x.abs().log10().floor() as i32).clamp(0, 8) as usize;
    let text = format!("{:.decimals$}", x.abs());
    if x < 0.0 { format!("−{text}") } else { text }
}

/// A number with three significant digits (no exponent, no trailing noise), thousands
/// separated from 1,000 up, and a true minus sign: `0.0123`, `45.6`, `37,300`, `−12.0`.
pub fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let r = round_sig3(x);
    let digits = r.abs().log10().floor() as i32;
    let text = if digits >= 3 {
        fmt_count(r.abs() as u64)
    } else {
        let decimals = (2 - digits).clamp(0, 6) as usize;
        format!("{:.decimals$}", r.abs())
    };
    if r < 0.0 { format!("−{text}") } else { text }
}

/// A share as a percentage, the one way every page writes one: three significant
/// digits without trailing zeros (`0.004 %`, `75.3 %`, `50 %`), and `> 99.9 %` for a
/// share just short of all, never a rounded `100 %` that is not all.
pub fn fmt_percent(fraction: f64) -> String {
    if (0.999..1.0).contains(&fraction) {
        return "> 99.9 %".to_string();
    }
    let s = sig3(fraction * 100.0);
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s} %")
}

/// A ratio such as a speedup: `48.3×`.
pub fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        Some(r) if r.is_finite() => format!("{}×", ratio_bound(r)),
        _ => "–".into(),
    }
}

/// An integer with thousands separators: `1,000,000`.
pub fn fmt_count(n: u64) -> String {
    crate::unit::grouped(n)
}

/// A parameter value: integers with separators, other numbers as written.
pub fn fmt_number(v: f64, integer: bool) -> String {
    if integer || (v.fract() == 0.0 && v.abs() < 1e15) {
        let s = fmt_count(v.abs() as u64);
        if v < 0.0 { format!("-{s}") } else { s }
    } else {
        format!("{v}")
    }
}

/// A rate: three significant digits with separators (`9,870`), millions as `1.23 M`.
pub fn fmt_rate(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v.abs() >= 1e6 {
        return format!("{} M", sig3(v / 1e6));
    }
    if v.abs() >= 1000.0 {
        let digits = v.abs().log10().floor() as i32;
        let step = 10f64.powi(digits - 2);
        return fmt_count(((v / step).round() * step) as u64);
    }
    sig3(v)
}

/// Bytes in binary units: `9.50 KiB`.
pub fn fmt_bytes(b: f64) -> String {
    let (v, u) = match b.abs() {
        x if x < 1024.0 => (b, "B"),
        x if x < 1024.0 * 1024.0 => (b / 1024.0, "KiB"),
        x if x < 1024.0 * 1024.0 * 1024.0 => (b / 1024.0 / 1024.0, "MiB"),
        _ => (b / 1024.0 / 1024.0 / 1024.0, "GiB"),
    };
    format!("{} {u}", sig3(v))
}

/// `lo–hi` with the unit written once when both share it: `11.9–12.8 µs`.
pub fn fmt_range(lo: f64, hi: f64, unit: Unit) -> String {
    let (a, b) = (unit.format(lo), unit.format(hi));
    // A dash between negative numbers reads as a minus: say "to".
    let dash = if lo < 0.0 || hi < 0.0 { " to " } else { "–" };
    match (a.rsplit_once(' '), b.rsplit_once(' ')) {
        (Some((na, ua)), Some((nb, ub))) if ua == ub => format!("{na}{dash}{nb} {ub}"),
        _ => format!("{a}{dash}{b}"),
    }
}

/// A figure as the book writes it, kept in its parts: the value (`12.3 µs`) and, apart,
/// what goes in brackets after it, without them: its interval (`11.9–12.8`), or a share
/// that belongs to it (`42 of 215 lockings`, `19.5 %`). Written out it reads
/// `12.3 µs (11.9–12.8)`; a page's table lays the parts out itself (the bracket may go
/// under its value), so nothing reads the text back to find them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formatted {
    pub value: String,
    pub interval: Option<String>,
}

impl Formatted {
    /// A value with its interval.
    pub fn with_interval(value: impl Into<String>, interval: impl Into<String>) -> Formatted {
        Formatted {
            value: value.into(),
            interval: Some(interval.into()),
        }
    }

    /// A value alone: a count, a share, a dash.
    pub fn plain(value: impl Into<String>) -> Formatted {
        Formatted {
            value: value.into(),
            interval: None,
        }
    }

    /// The same figure after a label (`the other 4 alone: 1.90×`), its interval kept
    /// as an interval, so a page may still put it on a line of its own.
    pub fn labelled(self, label: &str) -> Formatted {
        Formatted {
            value: format!("{label}{}", self.value),
            ..self
        }
    }
}

impl std::fmt::Display for Formatted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.interval {
            Some(i) => write!(f, "{} ({i})", self.value),
            None => f.write_str(&self.value),
        }
    }
}

impl From<String> for Formatted {
    fn from(value: String) -> Formatted {
        Formatted::plain(value)
    }
}

impl From<&str> for Formatted {
    fn from(value: &str) -> Formatted {
        Formatted::plain(value)
    }
}

/// The median and, in brackets, its interval: `12.3 µs (11.9–12.8)`. The interval is
/// at [`CONFIDENCE`] when there were enough rounds; with fewer (or rounds that drifted)
/// the bracket says what it covers, `(11.9–12.8, 94 %)`, and a note under the view says
/// why.
pub fn fmt_estimate(e: &Estimate, unit: Unit) -> Formatted {
    let (lo, hi, med) = (unit.format(e.lo), unit.format(e.hi), unit.format(e.median));
    let unit_of = |s: &str| s.rsplit_once(' ').map(|(_, u)| u.to_string());
    let dash = if e.lo < 0.0 || e.hi < 0.0 {
        " to "
    } else {
        "–"
    };
    let range = match (lo.rsplit_once(' '), hi.rsplit_once(' ')) {
        // One shared unit, the median's: written once, after the median.
        (Some((a, ua)), Some((b, ub))) if ua == ub && unit_of(&med).as_deref() == Some(ua) => {
            format!("{a}{dash}{b}")
        }
        _ => fmt_range(e.lo, e.hi, unit),
    };
    let range = if e.at_stated_confidence() {
        range
    } else {
        format!("{range}, {:.0} %", e.confidence.max(0.0) * 100.0)
    };
    Formatted::with_interval(med, range)
}

/// Words for an interval's coverage when it falls short of the stated confidence:
/// `at 88 % (4 rounds; 95 % needs 6)`, or, where the rounds drifted and so count as
/// fewer (`stats::drift`), `at 50 % for a figure whose 10 rounds drifted and count as 2`.
pub fn coverage_shortfall(e: &Estimate) -> Option<String> {
    (!e.at_stated_confidence()).then(|| match e.drift {
        Some(rho) => format!(
            "at {:.0} % for a figure whose {} rounds drifted and count as {}",
            e.confidence * 100.0,
            e.n,
            crate::stats::independent_rounds(e.n, rho)
        ),
        None => format!(
            "at {:.0} % ({} rounds; {} needs 6)",
            e.confidence * 100.0,
            e.n,
            confidence_text()
        ),
    })
}

/// An estimate or a dash.
pub fn fmt_opt_estimate(e: Option<Estimate>, unit: Unit) -> Formatted {
    e.map(|e| fmt_estimate(&e, unit))
        .unwrap_or_else(|| Formatted::plain("–"))
}

/// A ratio estimate: `9.61× (8.10–11.2)`.
pub fn fmt_ratio_estimate(e: &Estimate) -> Formatted {
    Formatted::with_interval(
        format!("{}×", ratio_bound(e.median)),
        format!("{}–{}", ratio_bound(e.lo), ratio_bound(e.hi)),
    )
}

/// The book's stated confidence, as a reader reads it: `95 %`.
pub fn confidence_text() -> String {
    format!("{:.0} %", CONFIDENCE * 100.0)
}

/// The practical threshold in words: `5 %`.
pub fn threshold_text() -> String {
    format!("{} %", sig3_trim(threshold() * 100.0))
}

/// A percentage as written: `5`, `2.5`.
fn sig3_trim(x: f64) -> String {
    let s = sig3(x);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_bound_keeps_its_side_of_the_threshold() {
        // The default 5 % threshold: its edges are 1.05 and 1 ÷ 1.05 = 0.95238….
        if crate::env::text("COW_THRESHOLD").ok().flatten().is_some() {
            return;
        }
        // Three digits where they keep the side, or where the bound is the edge.
        for (x, s) in [
            (1.03, "1.03"),
            (1.18, "1.18"),
            (1.05, "1.05"),
            (0.9521, "0.952"),
        ] {
            assert_eq!(ratio_bound(x), s);
        }
        assert_eq!(ratio_bound(12.34), "12.3");
        // Rounded onto the edge from above or below, or across it: more digits.
        assert_eq!(ratio_bound(1.054), "1.054");
        assert_eq!(ratio_bound(1.0499), "1.0499");
        assert_eq!(ratio_bound(1.0461), "1.046");
        assert_eq!(ratio_bound(0.95241), "0.9524");
        // And onto 1, which decides whether an interval shows a difference at all (the
        // eighth review read 0.998 printed as `1.00` beside "no clear difference").
        assert_eq!(ratio_bound(0.998), "0.998");
        assert_eq!(ratio_bound(1.0004), "1.0004");
        assert_eq!(ratio_bound(1.0), "1.00");
        let e = Estimate {
            median: 1.05,
            lo: 1.032,
            hi: 1.054,
            confidence: CONFIDENCE,
            n: 9,
            drift: None,
        };
        assert_eq!(
            fmt_ratio_estimate(&e).interval.as_deref(),
            Some("1.03–1.054")
        );
    }

    #[test]
    fn percentages_read_alike_everywhere() {
        assert_eq!(fmt_percent(0.5), "50 %");
        assert_eq!(fmt_percent(0.753), "75.3 %");
        assert_eq!(fmt_percent(0.00004), "0.004 %");
        assert_eq!(fmt_percent(0.9996), "> 99.9 %");
        assert_eq!(fmt_percent(1.0), "100 %");
        assert_eq!(fmt_percent(0.0), "0 %");
    }
}
