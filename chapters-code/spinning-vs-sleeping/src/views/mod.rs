//! How the chapter's results are shown: the findings of its decision table
//! (`answer.rs`), Markdown tables (`tables.rs`), SVG plots (`plots.rs`) and the
//! write-up's published numbers (`reference.rs`). Every figure is a median over rounds
//! with its interval; distributions pool every message of every round. Two arms
//! measured in the same rounds are judged on their per-round ratios; every verdict is
//! worded by `harness::render`.

mod answer;
mod plots;
mod reference;
mod tables;

pub use answer::{CPU, GAP, SPIN_OR_BLOCK, TOKIO_TASK};

use crate::experiments::{Arm, FLOOR, FloorRound, GAPS, PINNING, Run, RunKey, Runs, VARIANTS};
use crate::{Runtime, Transport, Wait};
use harness::render::{Formatted, fmt_opt_estimate};
use harness::stats::Comparison;
use harness::{Dist, Estimate, Results, Unit, View};

// The first view of each experiment on the page carries the run's notes; the others
// are brief.
pub static GAPS_LATENCY: View<Runs> =
    View::plot("gaps-latency", &GAPS, |r| plots::gaps_plot(r, false));
pub static LATENCY: View<Runs> = View::table("variants", &VARIANTS, tables::latency_table);
pub static SPEEDUPS: View<Runs> =
    View::table("speedups", &VARIANTS, tables::speedups_table).brief();
pub static CDF_STD: View<Runs> =
    View::plot("cdf-std", &VARIANTS, |r| plots::cdf_plot(r, Runtime::Std)).brief();
pub static CDF_TOKIO: View<Runs> = View::plot("cdf-tokio", &VARIANTS, |r| {
    plots::cdf_plot(r, Runtime::Tokio)
})
.brief();
pub static COST: View<Runs> = View::table("cost", &VARIANTS, tables::cost_table).brief();
pub static GAPS_TABLE: View<Runs> = View::table("gaps", &GAPS, tables::gaps_table).brief();
pub static GAPS_CPU: View<Runs> =
    View::plot("gaps-cpu", &GAPS, |r| plots::gaps_plot(r, true)).brief();
pub static GAP_WHY: View<Runs> = View::table("gap-why", &GAPS, tables::gap_why_table).brief();
pub static PINNING_TABLE: View<Runs> = View::table("pinning", &PINNING, tables::pinning_table);
pub static FLOOR_TABLE: View<FloorRound> = View::table("floor", &FLOOR, tables::floor_table);
pub static FLOOR_CDF: View<FloorRound> = View::plot("floor-cdf", &FLOOR, plots::floor_plot).brief();
pub static ARMS: View<Runs> = View::table("arms", &VARIANTS, tables::arms_table).brief();
pub static REFERENCE: View<Runs> =
    View::table("reference", &VARIANTS, reference::reference_table).brief();

/// A variant of the std channel.
const fn chan(wait: Wait) -> RunKey {
    RunKey::variant(Runtime::Std, Transport::Mpsc, wait)
}

/// A variant of the gap sweep at one gap.
fn gap_key(tr: Transport, wait: Wait, gap_us: u64) -> RunKey {
    RunKey::variant(Runtime::Std, tr, wait).at_gap(gap_us)
}

/// The spinning std channel in the gap sweep, with a sleeping or a busy-waiting sender.
fn chan_key(gap_us: u64, busy: bool) -> RunKey {
    let arm = if busy { Arm::BusySender } else { Arm::Main };
    gap_key(Transport::Mpsc, Wait::Spin, gap_us).arm(arm)
}

/// All rounds' latencies of one variant, pooled.
fn pooled(r: &Results<Runs>, key: &RunKey) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(key).map(|run| &run.latency))
}

/// The keys of an experiment's variants and its arms that have rows in the tables
/// (bounded blocking, spawned tokio receivers), in the order the rounds list them; the
/// no-gap arm, its A/A twin and the busy sender have lines of their own.
fn keys(r: &Results<Runs>) -> Vec<RunKey> {
    let mut keys: Vec<RunKey> = Vec::new();
    for k in r.data().flat_map(Runs::keys) {
        let own_line = k.twin || matches!(k.arm, Arm::NoGap | Arm::BusySender);
        if !own_line && !keys.contains(&k) && r.estimate(&k).is_some() {
            keys.push(k);
        }
    }
    keys
}

/// Median over rounds of a per-run value of one variant.
fn per_run(r: &Results<Runs>, key: &RunKey, f: impl Fn(&Run) -> Option<f64>) -> Option<Estimate> {
    r.estimate_of(|round| round.find(key).and_then(&f))
}

/// A per-run value of two variants, judged on the rounds' pairs.
fn compare_runs(
    r: &Results<Runs>,
    a: &RunKey,
    b: &RunKey,
    f: impl Fn(&Run) -> Option<f64>,
) -> Option<Comparison> {
    r.compare_of(|x| x.find(a).and_then(&f), |x| x.find(b).and_then(&f))
}

/// A per-run counter as a cell: its median over rounds with the interval, "–" where
/// it was not measured.
fn counter_cell(
    r: &Results<Runs>,
    key: &RunKey,
    f: fn(&Run) -> Option<f64>,
    unit: Unit,
) -> Formatted {
    fmt_opt_estimate(per_run(r, key, f), unit)
}

/// A share as a percentage with its interval over rounds.
fn fmt_share(e: &Estimate) -> Formatted {
    Formatted::with_interval(
        format!("{:.0} %", e.median * 100.0),
        format!("{:.0}–{:.0}", e.lo * 100.0, e.hi * 100.0),
    )
}
