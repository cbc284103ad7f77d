//! How the chapter's results are shown: the findings of its decision table
//! (`answer.rs`), tables (`tables.rs`), plots (`plots.rs`) and the write-up's numbers
//! beside yours (`reference.rs`). A figure with an interval is the median over rounds
//! of one value per round; distributions pool every timeout of every round.

mod answer;
mod plots;
mod reference;
mod tables;

pub use answer::{DESIGN2, DESIGN4, FLAVOUR, GUARD, LOCK, SLOT};
pub use reference::{Numbers, RefDesign, RefUnitCheck, Reference, reference};

use crate::experiments::{
    DESIGNS, DesignKey, DesignRun, DesignsRound, HAZARDS, HazardsRound, SWEEP, SweepRound,
    UNIT_CHECK, UnitRound,
};
use crate::{Design, Flavour, Tallied};
use harness::{Dist, Estimate, Results, View};

// The first view of each result on the page carries its notes; later ones are brief.
pub static DESIGNS_CDF: View<DesignsRound> =
    View::plot("designs-cdf", &DESIGNS, |r| plots::cdf_plot(r, MT));
pub static DESIGNS_TABLE: View<DesignsRound> =
    View::table("designs", &DESIGNS, tables::designs_table).brief();
pub static WAITS: View<DesignsRound> = View::table("waits", &DESIGNS, tables::waits_table).brief();
pub static COST: View<DesignsRound> = View::table("cost", &DESIGNS, tables::cost_tables).brief();
pub static FLAVOURS: View<DesignsRound> =
    View::table("flavours", &DESIGNS, tables::flavours_table).brief();
pub static FLAVOURS_CDF: View<DesignsRound> =
    View::plot("flavours-cdf", &DESIGNS, |r| plots::cdf_plot(r, CT)).brief();
pub static WRITEUP: View<DesignsRound> =
    View::table("writeup", &DESIGNS, reference::writeup_table).brief();
pub static SWEEP_TABLE: View<SweepRound> = View::table("sweep", &SWEEP, tables::sweep_table);
pub static HAZARDS_TABLE: View<HazardsRound> =
    View::table("hazards", &HAZARDS, tables::hazards_table);
pub static UNIT_CHECK_TABLE: View<UnitRound> =
    View::table("unit-check", &UNIT_CHECK, reference::unit_check_table);

const MT: Flavour = Flavour::MultiThread;
const CT: Flavour = Flavour::CurrentThread;

/// A design's label as shown: design 4's stored key (`fix · …`) predates its name.
pub fn shown(design: Design) -> &'static str {
    match design {
        Design::Fix => "4: deadline in the message",
        other => other.label(),
    }
}

/// Median over rounds of a per-run value of one design on one runtime. A run stopped
/// at its bound handled only its earliest expiries, so only complete runs count here,
/// as in the readings.
fn per_run(
    r: &Results<DesignsRound>,
    design: Design,
    flavour: Flavour,
    f: impl Fn(&DesignRun) -> Option<f64>,
) -> Option<Estimate> {
    r.estimate_of(|round| {
        round
            .find(design, flavour)
            .filter(|x| x.complete())
            .and_then(&f)
    })
}

/// Every complete round's lateness of one design on one runtime, pooled.
fn pooled(r: &Results<DesignsRound>, design: Design, flavour: Flavour) -> Dist {
    harness::render::pooled(r.data(), |round| {
        round
            .find(design, flavour)
            .filter(|run| run.complete())
            .and_then(|run| run.lateness.as_ref())
    })
}

/// Rounds in which a design on a runtime did not handle every expiry in time.
fn stalled(r: &Results<DesignsRound>, design: Design, flavour: Flavour) -> usize {
    r.data()
        .filter_map(|x| x.find(design, flavour))
        .filter(|x| !x.complete())
        .count()
}

fn est(r: &Results<DesignsRound>, design: Design, flavour: Flavour) -> Option<Estimate> {
    r.estimate(&DesignKey::new(design, flavour))
}

/// The share of a tally's calls that had to wait, in one run.
fn waited(t: &Tallied) -> Option<f64> {
    (t.calls > 0).then(|| t.waited as f64 / t.calls as f64)
}
