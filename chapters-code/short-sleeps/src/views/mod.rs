//! The chapter's tables, plots and the write-up's numbers beside this machine's and other
//! systems' (`reference.rs`); its findings are in `chapter.rs`.

mod plots;
mod reference;
mod tables;

pub use reference::{OtherRow, RefData, RefRow, RefValue, fmt_ref, other_lacks};
pub use reference::{other_os_section, other_rows, reference_data};

use crate::experiments::{
    CALLS_EXP, CallsKey, CallsRound, CpuPerCall, MS_EXP, MsRound, SWEEP_EXP, SweepRound, YIELD_EXP,
    YieldRound,
};
use crate::{Sample, fmt_request};
use harness::render::{Cell, Formatted, Table, fmt_count, fmt_estimate};
use harness::{Estimate, Results, Unit, View};

pub static CALLS: View<CallsRound> = View::table("calls", &CALLS_EXP, reference::calls).brief();
pub static SLACK: View<CallsRound> = View::table("slack", &CALLS_EXP, tables::slack);
pub static SWEEP_PLOT: View<SweepRound> = View::plot("sweep", &SWEEP_EXP, plots::sweep);
pub static SWEEP_TABLE: View<SweepRound> = View::table("sweep", &SWEEP_EXP, tables::sweep).brief();
pub static SWEEP_TAILS: View<SweepRound> =
    View::table("sweep-tails", &SWEEP_EXP, tables::sweep_tails).brief();
pub static SWEEP_CPU: View<SweepRound> =
    View::table("sweep-cpu", &SWEEP_EXP, tables::sweep_cpu).brief();
pub static TOKIO_PLOT: View<MsRound> = View::plot("tokio-phase", &MS_EXP, plots::tokio);
pub static TOKIO_TABLE: View<MsRound> = View::table("tokio-phase", &MS_EXP, tables::tokio).brief();
pub static YIELD_TABLE: View<YieldRound> = View::table("yield", &YIELD_EXP, tables::yields);

pub(crate) use crate::experiments::{low_slack, slack_saving};

/// A parameter's value as a count: `3,000`.
fn param_count<R>(r: &Results<R>, name: &str) -> String {
    r.param(name).map_or("?".into(), |v| fmt_count(v as u64))
}

/// A time with its interval: `47.4 µs (35.0–64.9)`.
fn est(e: &Estimate) -> Formatted {
    fmt_estimate(e, Unit::Nanos)
}

/// A time with its interval as a cell, where there is one.
fn opt(e: Option<Estimate>) -> Option<Cell> {
    e.map(|e| est(&e).into())
}

/// CPU per call of a `calls` cell: its figure, or the bound where the clock's step hid it.
fn cpu_cell(r: &Results<CallsRound>, key: &CallsKey) -> Option<Cell> {
    match CpuPerCall::of(r, key)? {
        CpuPerCall::Measured(e) => opt(Some(e)),
        CpuPerCall::Below(ns) => Some(format!("below {}", harness::fmt::fmt_ns(ns)).into()),
    }
}

/// A count per call, to two decimals (the median over rounds).
fn count(e: Option<Estimate>) -> Option<String> {
    e.map(|e| format!("{:.2}", e.median))
}

/// The median over rounds of a per-loop value of one `calls` cell.
fn per_loop(
    r: &Results<CallsRound>,
    key: &CallsKey,
    f: impl Fn(&Sample) -> Option<f64>,
) -> Option<Estimate> {
    r.estimate_of(|round| round.find(key).and_then(|l| f(&l.sample)))
}

/// A request in nanoseconds as the tables name it: `20 µs`.
fn request_label(ns: f64) -> String {
    fmt_request(std::time::Duration::from_nanos(ns as u64))
}

/// A table whose columns after the first show only where some row has a value.
fn sparse(headers: &[String], rows: Vec<(String, Vec<Option<Cell>>)>) -> Table {
    let shown: Vec<usize> = (0..headers.len() - 1)
        .filter(|&c| rows.iter().any(|(_, cells)| cells[c].is_some()))
        .collect();
    let mut t = Table::new(
        std::iter::once(headers[0].clone()).chain(shown.iter().map(|&c| headers[c + 1].clone())),
    );
    for (label, mut cells) in rows {
        let mut row: Vec<Cell> = vec![label.into()];
        row.extend(
            shown
                .iter()
                .map(|&c| cells[c].take().unwrap_or_else(|| "–".into())),
        );
        t.row(row);
    }
    t
}
