//! The chapter's plots: latency and CPU against the idle gap, the variants'
//! distributions and the floor's.

use super::{gap_key, keys, per_run, pooled};
use crate::experiments::{Arm, FloorRound, GAPS_US, Runs, SWEPT, gap_label};
use crate::{Runtime, Wait};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::{Dist, Results};

/// Every message of one runtime's six variants, one curve each.
pub(super) fn cdf_plot(r: &Results<Runs>, rt: Runtime) -> anyhow::Result<String> {
    let prefix = format!("{} · ", rt.label());
    let series: Vec<(String, Dist)> = keys(r)
        .into_iter()
        .filter(|k| k.runtime == rt && k.arm == Arm::Main && k.wait != Wait::BlockBounded)
        .map(|k| {
            let label = k.label();
            let name = label.strip_prefix(&prefix).unwrap_or(&label).to_string();
            (name, pooled(r, &k))
        })
        .collect();
    dist_cdf(
        &format!(
            "{}: send-to-receive latency, every message of every round",
            rt.label()
        ),
        "latency (log scale)",
        series.iter().map(|(n, d)| (n.clone(), d)),
    )
    .to_svg()
}

/// Median latency (or the receiver's CPU per message) against the gap, one line per
/// transport and way of waiting, with the intervals over rounds as bars.
pub(super) fn gaps_plot(r: &Results<Runs>, cpu: bool) -> anyhow::Result<String> {
    let (title, y_label) = if cpu {
        (
            "the receiving thread's CPU time per message against the idle gap",
            "receiver CPU time per message (log)",
        )
    } else {
        (
            "median latency against the idle gap before each message",
            "median send-to-receive latency (log)",
        )
    };
    // The bars' coverage, as the rounds allow it (95 % from six rounds up).
    let confidence = keys(r)
        .iter()
        .filter_map(|k| r.estimate(k))
        .map(|e| e.confidence)
        .fold(1.0, f64::min)
        .min(harness::stats::CONFIDENCE);
    let x_label = format!(
        "gap before each message (bars: {:.0} % intervals over rounds)",
        confidence * 100.0
    );
    let mut plot = Plot::new(title, &x_label, y_label)
        .x_categories(GAPS_US.iter().map(|g| gap_label(*g)))
        .y(Axis::Log, PlotUnit::Nanos);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
            let points = GAPS_US
                .iter()
                .enumerate()
                .filter_map(|(i, &g)| {
                    let k = gap_key(tr, wait, g);
                    let e = if cpu {
                        per_run(r, &k, |x| x.receiver_cpu_per_message_ns)?
                    } else {
                        r.estimate(&k)?
                    };
                    Some((i as f64, e))
                })
                .collect();
            plot = plot.series(Series::estimates(
                format!("{} {}", tr.label(), wait.label()),
                points,
            ));
        }
    }
    plot.to_svg()
}

pub(super) fn floor_plot(r: &Results<FloorRound>) -> anyhow::Result<String> {
    let pooled = super::tables::floor_pooled(r);
    dist_cdf(
        "atomic ping-pong: one-way hand-over between two spinning threads",
        "one-way latency (log scale)",
        pooled.iter().map(|(p, d)| (p.label().to_string(), d)),
    )
    .to_svg()
}
