//! The chapter's plots: the lateness of every design as a distribution.

use super::{pooled, shown};
use crate::experiments::DesignsRound;
use crate::{Design, Flavour};
use harness::Results;
use harness::plot::dist_cdf;

/// Every timeout of every round of each design on one runtime, as a CDF.
pub fn cdf_plot(r: &Results<DesignsRound>, flavour: Flavour) -> anyhow::Result<String> {
    let series: Vec<(String, harness::Dist)> = Design::ALL
        .iter()
        .map(|&d| (shown(d).to_string(), pooled(r, d, flavour)))
        .collect();
    dist_cdf(
        &format!(
            "lateness past each timeout's own deadline, {} runtime, every timeout of every round",
            flavour.label()
        ),
        "lateness (log scale)",
        series.iter().map(|(n, d)| (n.clone(), d)),
    )
    .to_svg()
}
