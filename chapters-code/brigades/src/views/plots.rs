//! The chapter's plots: every hop of every brigade as a distribution, and the sweep of
//! brigade sizes. A plot of fewer than three sizes is refused: the memory table and
//! the limit runs give those figures as a table.

use super::{kinds_in, pooled_hops};
use crate::experiments::{SWEEP_KINDS, SweepKey, SweepRound, VariantsRound};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::{Estimate, Results};

pub fn hop_cdf(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let series: Vec<_> = kinds_in(r)
        .into_iter()
        .map(|k| (k.short().to_string(), pooled_hops(r, k)))
        .collect();
    dist_cdf(
        "Time per hop (lap ÷ members), every timed lap of every round",
        "time per hop (log scale)",
        series.iter().map(|(n, d)| (n.clone(), d)),
    )
    .to_svg()
}

/// One plot of the sweep: a series per brigade of `value` at each size that has one.
/// `plot` gets the x axis's label, which names the bars' coverage as the rounds allow
/// it (95 % from six rounds up, 75 % from three; one round draws no bar).
fn sweep_plot(
    r: &Results<SweepRound>,
    plot: impl FnOnce(&str) -> Plot,
    value: impl Fn(crate::Kind, usize) -> Option<Estimate>,
) -> anyhow::Result<String> {
    let mut sizes: Vec<usize> = r
        .data()
        .flat_map(|x| x.series.iter())
        .flat_map(|s| s.points.iter().map(|p| p.tasks))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let series: Vec<(crate::Kind, Vec<(f64, Estimate)>)> = SWEEP_KINDS
        .into_iter()
        .map(|k| {
            let at = |&n: &usize| Some((n as f64, value(k, n)?));
            (k, sizes.iter().filter_map(at).collect())
        })
        .collect();
    let cover = series
        .iter()
        .flat_map(|(_, p)| p.iter().filter(|(_, e)| e.n > 1));
    let cover = cover.map(|(_, e)| e.confidence.min(harness::stats::CONFIDENCE) * 100.0);
    let (lo, hi) = cover.fold((100.0, 0.0), |(l, h), c: f64| (c.min(l), c.max(h)));
    let bars = match lo == hi {
        true => format!("bars: {hi:.0} % intervals over rounds"),
        false => format!("bars: intervals over rounds, {hi:.0} % to {lo:.0} % where fewer ran"),
    };
    let mut plot = plot(&format!("members (log scale; {bars})"));
    let mut shown = Vec::new();
    for (k, points) in series {
        shown.extend(points.iter().map(|p| p.0 as usize));
        plot = plot.series(Series::estimates(k.short(), points));
    }
    shown.sort_unstable();
    shown.dedup();
    anyhow::ensure!(
        shown.len() >= 3,
        "only {} brigade sizes ran, too few for a line",
        shown.len()
    );
    plot.to_svg()
}

pub fn sweep_memory_plot(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let plot = |x: &str| {
        Plot::new(
            "Resident memory added per member, against the brigade's size",
            x,
            "resident memory added ÷ members",
        )
        .x(Axis::Log, PlotUnit::Number)
        .y(Axis::Log, PlotUnit::Bytes)
    };
    sweep_plot(r, plot, |k, n| {
        r.estimate_of(|x| {
            let d = x.find(k)?.at(n)?.resident_delta?;
            (d > 0.0).then(|| d / n as f64)
        })
    })
}

pub fn sweep_hop_plot(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let plot = |x: &str| {
        Plot::new(
            "Time per hop against the brigade's size",
            x,
            "median lap ÷ members (log scale)",
        )
        .x(Axis::Log, PlotUnit::Number)
        .y(Axis::Log, PlotUnit::Nanos)
    };
    sweep_plot(r, plot, |k, n| r.estimate(&SweepKey::PerHop(k, n)))
}
