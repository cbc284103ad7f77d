//! The chapter's plots: how late a sleep ends against the length asked for, and
//! against where in tokio's millisecond tick it began.

use super::low_slack;
use super::tables::{requests, sweep_modes};
use crate::experiments::{MsRound, SweepKey, SweepRound, TOKIO_REQUESTS_US};
use crate::{MsArm, PHASE_BINS, TICK_NS, bin_centre_ns, fmt_request, tick_models};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit};
use harness::{Estimate, Results};
use std::time::Duration;

/// Median lateness per round against the request, with the intervals as bars.
pub fn sweep(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let low = low_slack(r);
    let mut plot = Plot::new(
        "how late a sleep ends, by the length asked for",
        "requested length (log scale; bars: intervals over rounds)",
        "median lateness per round (log scale)",
    )
    .x(Axis::Log, PlotUnit::Nanos)
    .y(Axis::Log, PlotUnit::Nanos);
    for m in sweep_modes(r) {
        let points = requests()
            .into_iter()
            .filter_map(|q| Some((q, r.estimate(&SweepKey::late(m, q as u64, low))?)))
            .collect();
        plot = plot.series(Series::estimates(m.label(low), points));
    }
    plot.to_svg()
}

/// Lateness against the phase at which the sleep began: tokio's two requests and the
/// standard library's 1 ms, with each reading's prediction as a line.
pub fn tokio(r: &Results<MsRound>) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        "how late a sleep ends, by where in tokio's millisecond tick it began",
        "where in the tick the sleep began (bars: intervals over rounds)",
        "median lateness per round",
    )
    .x(Axis::Linear, PlotUnit::Nanos)
    .y(Axis::Linear, PlotUnit::Nanos);
    let series = |name: String, arm: &dyn Fn(u32) -> MsArm| {
        let points: Vec<(f64, Estimate)> = (0..PHASE_BINS)
            .filter_map(|b| Some((bin_centre_ns(b) as f64, r.estimate(&arm(b))?)))
            .collect();
        Series::estimates(name, points)
    };
    let label = |us: u32| fmt_request(Duration::from_micros(u64::from(us)));
    for request_us in TOKIO_REQUESTS_US {
        let arm = |bin| MsArm::Tokio { request_us, bin };
        let name = format!("tokio::time::sleep({})", label(request_us));
        plot = plot.series(series(name, &arm));
    }
    let std = |bin| MsArm::Std {
        request_us: 1_000,
        bin,
    };
    plot = plot.series(series("thread::sleep(1 ms)".into(), &std));
    let c = r
        .estimate_of(MsRound::wake_cost)
        .ok_or_else(|| anyhow::anyhow!("no thread::sleep(1 ms) to take the wake-up cost from"))?;
    for us in TOKIO_REQUESTS_US {
        let line = |pick: fn((f64, f64)) -> f64| -> Vec<(f64, f64)> {
            (0..=100)
                .map(|i| f64::from(i) * TICK_NS as f64 / 100.0)
                .map(|p| (p, c.median + pick(tick_models(f64::from(us) * 1e3, p))))
                .collect()
        };
        let l = label(us);
        plot = plot
            .series(Series::new(format!("{l}: whole ticks predicts"), line(|m| m.1)).line_only())
            .series(Series::new(format!("{l}: next tick predicts"), line(|m| m.0)).line_only());
    }
    plot.to_svg()
}
