//! The chapter's plots: achieved rate against target rate, the gaps between
//! operations, and the latency percentiles of the coordinated-omission test.

use super::{has_target, per_s, pooled_gaps, targets};
use crate::Pacer;
use crate::experiments::{Measure, OmissionRound, RatesKey, RatesRound};
use harness::Results;
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};

/// Every throttle's achieved rate at every target rate, with the target as a line.
pub(super) fn achieved(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let targets = targets(r);
    let mut plot = Plot::new(
        "Achieved rate against the target rate",
        "target rate (ops/s, log scale; bars: 95 % intervals over rounds)",
        "achieved rate (ops/s, log scale)",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Number)
    .series(Series::new("target", targets.iter().map(|&t| (t, t)).collect()).line_only());
    for pacer in Pacer::ALL {
        let points = targets
            .iter()
            .filter_map(|&t| Some((t, r.estimate(&RatesKey::rate(pacer, t))?)))
            .filter(|(_, e)| e.lo > 0.0)
            .collect();
        plot = plot.series(Series::estimates(pacer.label(), points));
    }
    plot.to_svg()
}

/// The CDF of every gap between successive starts at one target rate.
pub(super) fn gaps(r: &Results<RatesRound>, target: f64) -> anyhow::Result<String> {
    has_target(r, target)?;
    let pooled: Vec<(Pacer, harness::Dist)> = Pacer::ALL
        .iter()
        .map(|&p| (p, pooled_gaps(r, p, target)))
        .collect();
    dist_cdf(
        &format!(
            "Time between successive operations at a target of {} (every gap of every round)",
            per_s(target)
        ),
        "gap between successive starts (log scale)",
        pooled.iter().map(|(p, d)| (p.label().to_string(), d)),
    )
    .to_svg()
}

/// Latency by percentile, three ways of measuring the same requests.
pub(super) fn omission(r: &Results<OmissionRound>) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        "Latency by percentile: three ways of measuring the same requests",
        "1 in N requests is slower (log scale: 10 = p90, 100 = p99)",
        "latency (log scale)",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Nanos);
    for m in Measure::ALL {
        let d = super::tables::pooled_latency(r, m);
        let points = d
            .curve(200)
            .into_iter()
            .filter(|(q, _)| *q < 1.0)
            .map(|(q, v)| (1.0 / (1.0 - q), v.max(1.0)))
            .collect();
        plot = plot.series(Series::new(m.label(), points).line_only());
    }
    plot.to_svg()
}
