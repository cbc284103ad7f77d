//! Summaries of samples: percentiles, Welford mean and variance, confidence intervals.
//!
//! All latencies are carried as `f64` nanoseconds. Percentiles use the nearest-rank
//! definition (the smallest sample such that at least a fraction `q` of all samples are
//! less than or equal to it), which is also what HdrHistogram reports.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::time::Duration;

/// The confidence level used throughout the book for intervals around a mean.
pub const CONFIDENCE: f64 = 0.999;

/// Streaming mean and variance (Welford's algorithm): numerically stable, one pass.
#[derive(Debug, Clone, Default)]
pub struct Welford {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Welford {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample variance (divides by n - 1); zero for fewer than two samples.
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            self.m2 / (self.n - 1) as f64
        }
    }

    pub fn stddev(&self) -> f64 {
        self.variance().sqrt()
    }
}

impl FromIterator<f64> for Welford {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Self {
        let mut w = Welford::new();
        for x in iter {
            w.push(x);
        }
        w
    }
}

/// Half-width of the two-sided confidence interval of a mean, from Student's t with
/// n - 1 degrees of freedom. `None` for fewer than two samples.
pub fn ci_half_width(stddev: f64, n: u64, confidence: f64) -> Option<f64> {
    if n < 2 || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    let q = t.inverse_cdf(1.0 - (1.0 - confidence) / 2.0);
    Some(q * stddev / (n as f64).sqrt())
}

/// A mean with the half-width of its confidence interval at [`CONFIDENCE`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct MeanCi {
    pub n: u64,
    pub mean: f64,
    pub stddev: f64,
    /// Half-width of the 99.9 % confidence interval of the mean (0 when n < 2).
    pub half_width: f64,
}

impl MeanCi {
    pub fn of(values: &[f64]) -> Option<MeanCi> {
        if values.is_empty() {
            return None;
        }
        let w: Welford = values.iter().copied().collect();
        Some(MeanCi {
            n: w.count(),
            mean: w.mean(),
            stddev: w.stddev(),
            half_width: ci_half_width(w.stddev(), w.count(), CONFIDENCE).unwrap_or(0.0),
        })
    }
}

/// The distribution of a set of samples (nanoseconds).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub n: u64,
    pub min: f64,
    pub p50: f64,
    pub mean: f64,
    pub p99: f64,
    /// Only reported when there are at least 1,000 samples.
    pub p999: Option<f64>,
    pub max: f64,
    pub stddev: f64,
    /// Half-width of the 99.9 % confidence interval of the mean.
    pub ci999: f64,
}

/// The nearest-rank percentile of already sorted samples; `q` in [0, 1].
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "percentile of no samples");
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Summary {
    /// Exact summary of samples. `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let w: Welford = samples.iter().copied().collect();
        let n = samples.len() as u64;
        Some(Summary {
            n,
            min: sorted[0],
            p50: percentile_sorted(&sorted, 0.50),
            mean: w.mean(),
            p99: percentile_sorted(&sorted, 0.99),
            p999: (n >= 1000).then(|| percentile_sorted(&sorted, 0.999)),
            max: sorted[sorted.len() - 1],
            stddev: w.stddev(),
            ci999: ci_half_width(w.stddev(), n, CONFIDENCE).unwrap_or(0.0),
        })
    }

    /// Summary of durations, in nanoseconds.
    pub fn of_durations(samples: &[Duration]) -> Option<Summary> {
        let ns: Vec<f64> = samples.iter().map(|d| d.as_nanos() as f64).collect();
        Summary::of(&ns)
    }

    /// Summary of an HdrHistogram of nanoseconds (for streams too long to keep).
    /// Percentiles carry the histogram's precision (3 significant digits is typical).
    pub fn of_histogram(h: &Histogram<u64>) -> Option<Summary> {
        let n = h.len();
        if n == 0 {
            return None;
        }
        // HdrHistogram reports the population deviation; convert to the sample one.
        let sd = if n > 1 {
            h.stdev() * (n as f64 / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            n,
            min: h.min() as f64,
            p50: h.value_at_quantile(0.50) as f64,
            mean: h.mean(),
            p99: h.value_at_quantile(0.99) as f64,
            p999: (n >= 1000).then(|| h.value_at_quantile(0.999) as f64),
            max: h.max() as f64,
            stddev: sd,
            ci999: ci_half_width(sd, n, CONFIDENCE).unwrap_or(0.0),
        })
    }
}

/// `count` evenly spaced quantiles of sorted samples, as (quantile, value) pairs, for
/// plotting a distribution without carrying every sample.
pub fn quantile_curve(sorted: &[f64], count: usize) -> Vec<(f64, f64)> {
    if sorted.is_empty() || count == 0 {
        return Vec::new();
    }
    let count = count.max(2);
    (0..count)
        .map(|i| {
            let q = i as f64 / (count - 1) as f64;
            (q, percentile_sorted(sorted, q))
        })
        .collect()
}

/// How many times faster `fast` is than `slow` (`slow / fast`); `None` if either is not
/// a positive number.
pub fn speedup(slow: f64, fast: f64) -> Option<f64> {
    (slow > 0.0 && fast > 0.0 && slow.is_finite() && fast.is_finite()).then(|| slow / fast)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn welford_matches_two_pass_on_known_data() {
        let data = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let w: Welford = data.iter().copied().collect();
        assert_eq!(w.count(), 8);
        assert!(close(w.mean(), 5.0, 1e-12));
        // Sample variance of this classic set is 32 / 7.
        assert!(close(w.variance(), 32.0 / 7.0, 1e-12));
    }

    #[test]
    fn welford_is_stable_with_a_large_offset() {
        let w: Welford = [1e9 + 4.0, 1e9 + 7.0, 1e9 + 13.0, 1e9 + 16.0]
            .into_iter()
            .collect();
        assert!(close(w.variance(), 30.0, 1e-6));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_sorted(&sorted, 0.50), 50.0);
        assert_eq!(percentile_sorted(&sorted, 0.99), 99.0);
        assert_eq!(percentile_sorted(&sorted, 1.0), 100.0);
        assert_eq!(percentile_sorted(&sorted, 0.0), 1.0);
        assert_eq!(percentile_sorted(&[7.0], 0.5), 7.0);
    }

    #[test]
    fn summary_of_known_data() {
        let samples: Vec<f64> = (1..=1000).rev().map(f64::from).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!(s.n, 1000);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 1000.0);
        assert_eq!(s.p50, 500.0);
        assert_eq!(s.p99, 990.0);
        assert_eq!(s.p999, Some(999.0));
        assert!(close(s.mean, 500.5, 1e-9));
        // Sample stddev of 1..=n is sqrt(n(n+1)/12).
        assert!(close(s.stddev, (1000.0f64 * 1001.0 / 12.0).sqrt(), 1e-9));
        assert!(Summary::of(&[]).is_none());
        assert_eq!(Summary::of(&[1.0; 999]).unwrap().p999, None);
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Two-sided 95 % with 10 degrees of freedom: t = 2.228; 99.9 % with 19: 3.883.
        let hw = ci_half_width(1.0, 11, 0.95).unwrap() * 11f64.sqrt();
        assert!(close(hw, 2.2281, 1e-3), "{hw}");
        let hw = ci_half_width(1.0, 20, 0.999).unwrap() * 20f64.sqrt();
        assert!(close(hw, 3.8834, 1e-3), "{hw}");
        // Large n approaches the normal quantile 3.2905.
        let hw = ci_half_width(1.0, 1_000_001, 0.999).unwrap() * 1_000_001f64.sqrt();
        assert!(close(hw, 3.2905, 1e-3), "{hw}");
        assert!(ci_half_width(1.0, 1, 0.999).is_none());
    }

    #[test]
    fn mean_ci_of_repetitions() {
        let m = MeanCi::of(&[10.0, 12.0, 11.0, 9.0, 13.0]).unwrap();
        assert!(close(m.mean, 11.0, 1e-12));
        assert!(close(m.stddev, 2.5f64.sqrt(), 1e-12));
        // t(0.9995, 4) = 8.610
        assert!(close(
            m.half_width,
            8.610 * 2.5f64.sqrt() / 5f64.sqrt(),
            1e-2
        ));
        assert!(MeanCi::of(&[]).is_none());
        assert_eq!(MeanCi::of(&[3.0]).unwrap().half_width, 0.0);
    }

    #[test]
    fn histogram_summary_agrees_with_exact() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        let samples: Vec<f64> = (1..=10_000).map(|i| (i * 100) as f64).collect();
        for s in &samples {
            h.record(*s as u64).unwrap();
        }
        let exact = Summary::of(&samples).unwrap();
        let approx = Summary::of_histogram(&h).unwrap();
        assert_eq!(approx.n, exact.n);
        for (a, e) in [
            (approx.p50, exact.p50),
            (approx.p99, exact.p99),
            (approx.max, exact.max),
            (approx.mean, exact.mean),
            (approx.stddev, exact.stddev),
        ] {
            assert!((a - e).abs() / e < 2e-3, "{a} vs {e}");
        }
    }

    #[test]
    fn quantile_curve_and_speedup() {
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        let c = quantile_curve(&sorted, 3);
        assert_eq!(c, vec![(0.0, 1.0), (0.5, 5.0), (1.0, 10.0)]);
        assert_eq!(speedup(10.0, 2.0), Some(5.0));
        assert_eq!(speedup(10.0, 0.0), None);
    }
}
