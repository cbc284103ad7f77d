//! How the chapter's results are shown: the findings (`answer.rs`, rendered by the
//! harness as the decision table), Markdown tables (`tables.rs`), SVG plots
//! (`plots.rs`) and the write-up's published numbers (`reference.rs`). Every figure is
//! a median over rounds with its 95 % interval; distributions and extremes pool every
//! sample of every round. No view words a verdict: comparisons go through
//! `ratio_cell`, choices through the findings' advice.

mod answer;
mod plots;
mod reference;
mod tables;

pub use answer::{CPU_10K, HOLD_1K, HOLD_10K, NAIVE_1K, OMITTED};

use crate::Pacer;
use crate::experiments::{NAIVE, NaiveRound, OMISSION, OmissionRound, RATES, RateRun};
use crate::experiments::{RatesRound, SWEEP, SweepRound};
use harness::render::fmt_count;
use harness::{Dist, Results, View};

pub static ACHIEVED_PLOT: View<RatesRound> = View::plot("achieved", &RATES, plots::achieved);
pub static ACHIEVED: View<RatesRound> = View::table("achieved", &RATES, tables::achieved).brief();
pub static JITTER_1K: View<RatesRound> =
    View::table("jitter-1k", &RATES, |r| tables::jitter(r, 1_000.0)).brief();
pub static JITTER_10K: View<RatesRound> =
    View::table("jitter-10k", &RATES, |r| tables::jitter(r, 10_000.0)).brief();
pub static WHY_1K: View<RatesRound> =
    View::table("why-1k", &RATES, |r| tables::why(r, 1_000.0)).brief();
pub static WHY_10K: View<RatesRound> =
    View::table("why-10k", &RATES, |r| tables::why(r, 10_000.0)).brief();
pub static PAIRS: View<RatesRound> = View::table("pairs", &RATES, tables::pairs).brief();
pub static CPU: View<RatesRound> = View::table("cpu", &RATES, tables::cpu).brief();
pub static STALL: View<RatesRound> = View::table("stall", &RATES, tables::stall).brief();
pub static CHECKS: View<RatesRound> = View::table("checks", &RATES, tables::checks).brief();
pub static GAPS_1K: View<RatesRound> =
    View::plot("gaps-1k", &RATES, |r| plots::gaps(r, 1_000.0)).brief();
pub static GAPS_10K: View<RatesRound> =
    View::plot("gaps-10k", &RATES, |r| plots::gaps(r, 10_000.0)).brief();
pub static NAIVE_TABLE: View<NaiveRound> = View::table("naive", &NAIVE, tables::naive);
pub static SWEEP_TABLE: View<SweepRound> = View::table("sweep", &SWEEP, tables::sweep);
pub static SWEEP_REFERENCE: View<SweepRound> =
    View::table("sweep-reference", &SWEEP, reference::sweep).brief();
pub static OMISSION_TABLE: View<OmissionRound> =
    View::table("omission", &OMISSION, tables::omission);
pub static OMISSION_PLOT: View<OmissionRound> =
    View::plot("omission", &OMISSION, plots::omission).brief();

/// A value of one run.
type Of = fn(&RateRun) -> Option<f64>;

/// `1,000/s`.
fn per_s(rate: f64) -> String {
    format!("{}/s", fmt_count(rate as u64))
}

/// The target rates the result was measured at.
fn targets(r: &Results<RatesRound>) -> Vec<f64> {
    r.data()
        .next()
        .map(|d| d.targets.clone())
        .unwrap_or_default()
}

/// An error unless the result has runs at `target`.
fn has_target(r: &Results<RatesRound>, target: f64) -> anyhow::Result<()> {
    anyhow::ensure!(
        targets(r).contains(&target),
        "this result has no runs at {} (see rates_from and rates_to)",
        per_s(target)
    );
    Ok(())
}

/// All rounds' gaps of one throttle at one target, pooled.
fn pooled_gaps(r: &Results<RatesRound>, pacer: Pacer, target: f64) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(pacer, target).map(|x| &x.gaps))
}
