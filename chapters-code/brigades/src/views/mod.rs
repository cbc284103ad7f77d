//! How the chapter's results are shown: Markdown tables (`tables.rs`), SVG plots
//! (`plots.rs`) and the write-up's published numbers (`reference.rs`); the findings
//! that make the decision table are declared in `chapter.rs`. Every figure is a
//! median over rounds with its interval unless a header says otherwise;
//! distributions pool every lap of every round. No view words a verdict:
//! comparisons go through `ratio_cell` or a finding.

mod plots;
mod reference;
mod tables;

pub use reference::{Numbers, Reference, fmt_published_mib, fmt_published_ns, reference_data};

use crate::Kind;
use crate::experiments::{
    LIMITS, LimitsRound, SWEEP, SweepRound, VARIANT_KINDS, VARIANTS, Variant, VariantsRound,
};
use harness::render::fmt_count;
use harness::{Dist, Estimate, Results, View};

pub static HOP_CDF: View<VariantsRound> = View::plot("hop-cdf", &VARIANTS, plots::hop_cdf);
pub static VARIANTS_TABLE: View<VariantsRound> =
    View::table("variants", &VARIANTS, tables::variants_table).brief();
pub static PAIRS: View<VariantsRound> = View::table("pairs", &VARIANTS, tables::pairs).brief();
pub static SWITCHES: View<VariantsRound> =
    View::table("switches", &VARIANTS, tables::switches_table).brief();
pub static SPAWN_TABLE: View<VariantsRound> =
    View::table("spawn", &VARIANTS, tables::spawn_table).brief();
pub static REFERENCE: View<VariantsRound> =
    View::table("reference", &VARIANTS, reference::reference_table).brief();
pub static MEMORY_TABLE: View<SweepRound> = View::table("memory", &SWEEP, tables::memory_table);
pub static SWEEP_MEMORY: View<SweepRound> =
    View::plot("sweep-memory", &SWEEP, plots::sweep_memory_plot).brief();
pub static SWEEP_HOP: View<SweepRound> =
    View::plot("sweep-hop", &SWEEP, plots::sweep_hop_plot).brief();
pub static LIMIT_RUNS: View<LimitsRound> =
    View::table("limit-runs", &LIMITS, tables::limit_runs_table);
pub static LIMITS_TABLE: View<LimitsRound> =
    View::table("limits", &LIMITS, tables::limits_table).brief();

// ---------------------------------------------------------------------------------
// helpers shared by the views

/// Every round's per-hop times of one brigade, pooled.
fn pooled_hops(r: &Results<VariantsRound>, kind: Kind) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(kind).map(|v| &v.hop))
}

/// A per-brigade value of each round, as an estimate over rounds.
fn per_variant(
    r: &Results<VariantsRound>,
    kind: Kind,
    f: impl Fn(&Variant) -> Option<f64>,
) -> Option<Estimate> {
    r.estimate_of(|round| round.find(kind).and_then(&f))
}

/// A per-hop counter of one brigade, as an estimate over rounds.
fn counter(
    r: &Results<VariantsRound>,
    kind: Kind,
    f: impl Fn(&crate::Usage) -> Option<f64>,
) -> Option<Estimate> {
    per_variant(r, kind, |v| v.per_hop.as_ref().and_then(&f))
}

/// The brigades of a result, in table order.
fn kinds_in(r: &Results<VariantsRound>) -> Vec<Kind> {
    VARIANT_KINDS
        .into_iter()
        .filter(|&k| r.data().any(|x| x.find(k).is_some()))
        .collect()
}

/// The row label: the short name, and the member count where a limit made it smaller
/// than asked for.
fn label(r: &Results<VariantsRound>, kind: Kind) -> String {
    let asked = r.data().map(|x| x.tasks).max().unwrap_or(0);
    let had = r
        .data()
        .filter_map(|x| x.find(kind))
        .map(|v| v.tasks)
        .min()
        .unwrap_or(asked);
    if had < asked {
        format!("{} ({} members)", kind.short(), fmt_count(had as u64))
    } else {
        kind.short().to_string()
    }
}

/// A median alone, for the counter columns (their intervals would crowd the table).
fn median_cell(e: Option<Estimate>, f: impl Fn(f64) -> String) -> String {
    e.map_or_else(|| "–".into(), |e| f(e.median))
}
