//! The write-up's published numbers beside this machine's: its averages and medians,
//! and the speedups it printed.

use crate::experiments::{RUNTIMES, RunKey, Runs, TRANSPORTS};
use crate::{Runtime, Transport, Wait};
use harness::cells;
use harness::reference::Published;
use harness::render::{Cell, Table, fmt_opt_estimate, ratio_cell};
use harness::{Profile, Results, Unit};
use serde::Deserialize;

/// The write-up's numbers, with its source and machines (`Published`).
type Reference = Published<Numbers>;

#[derive(Deserialize)]
struct Numbers {
    results: Vec<RefResult>,
    speedups: Vec<RefSpeedup>,
}

#[derive(Deserialize)]
struct RefResult {
    machine: String,
    runtime: String,
    transport: String,
    wait: String,
    avg_us: f64,
    median_us: f64,
}

/// A speedup exactly as the write-up printed it.
#[derive(Deserialize)]
struct RefSpeedup {
    machine: String,
    runtime: String,
    transport: String,
    avg_x: f64,
    median_x: f64,
}

fn reference() -> anyhow::Result<Reference> {
    Published::load(include_str!(
        "../../../../assets/reference/spinning-vs-sleeping.toml"
    ))
}

impl Numbers {
    fn get(&self, machine: &str, rt: Runtime, tr: Transport, wait: Wait) -> Option<&RefResult> {
        self.results.iter().find(|x| {
            x.machine == machine
                && x.runtime == rt.label()
                && x.transport == tr.label()
                && x.wait == wait.label()
        })
    }

    fn speedup(&self, machine: &str, rt: Runtime, tr: Transport) -> Option<&RefSpeedup> {
        self.speedups
            .iter()
            .find(|x| x.machine == machine && x.runtime == rt.label() && x.transport == tr.label())
    }
}

/// Under a "theirs vs yours" table: a line whenever yours were measured with another
/// gap than the write-up's 100 ms.
fn gap_line(r: &Results<Runs>) -> String {
    let Some(gap) = r.param("gap_ms").filter(|g| *g != 100.0) else {
        return String::new();
    };
    let quick = r.record.profile == Profile::Quick && gap == 10.0;
    let why = if quick { " (the quick profile)" } else { "" };
    format!(
        "\nYours were measured with a {gap} ms gap before each message{why}; the \
         write-up's was 100 ms. The gap sweep shows what the gap does here; the full \
         profile (`make regenerate`) measures with 100 ms.\n"
    )
}

/// Two published figures in one cell: "avg / median".
fn two(a: String, b: String) -> Cell {
    Cell::join([a.into(), b.into()], " / ")
}

const HEADERS: &str =
    " | theirs, macOS: avg / median | theirs, Ubuntu: avg / median | yours: median";

/// The speedups the write-up printed beside yours (blocking ÷ spinning, by the rule on
/// the rounds' pairs: a ratio only where it decides); then their averages and medians
/// beside your medians, per variant.
pub(super) fn reference_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut speedups = Table::new(format!("runtime · transport{HEADERS}").split(" | "));
    let mut raw = Table::new(format!("variant{HEADERS}").split(" | "));
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            let printed = |m: &str| {
                refs.speedup(m, rt, tr).map_or_else(
                    || Cell::from("–"),
                    |x| two(printed_ratio(x.avg_x), printed_ratio(x.median_x)),
                )
            };
            let (b, s) = (
                RunKey::variant(rt, tr, Wait::Block),
                RunKey::variant(rt, tr, Wait::Spin),
            );
            let yours = r
                .compare(&b, &s)
                .map_or_else(|| "–".into(), |c| ratio_cell(&c));
            speedups.row(cells![
                format!("{} · {}", rt.label(), tr.label()),
                printed("macos"),
                printed("ubuntu"),
                yours,
            ]);
            for wait in [Wait::Block, Wait::Spin] {
                let key = RunKey::variant(rt, tr, wait);
                let theirs = |m: &str| {
                    refs.get(m, rt, tr, wait).map_or_else(
                        || Cell::from("–"),
                        |x| {
                            let us = |v: f64| Unit::Nanos.format(v * 1e3);
                            two(us(x.avg_us), us(x.median_us))
                        },
                    )
                };
                raw.row(cells![
                    key.label(),
                    theirs("macos"),
                    theirs("ubuntu"),
                    fmt_opt_estimate(r.estimate(&key), Unit::Nanos),
                ]);
            }
        }
    }
    Ok(format!(
        "{}\nTheir averages and medians beside your medians:\n\n{}\n{}\n{}",
        speedups.to_markdown(),
        raw.to_markdown(),
        refs.attribution(),
        gap_line(r)
    ))
}

/// A speedup as the write-up printed it: one decimal ("295.6x", "6.0x"), with the
/// book's × sign.
fn printed_ratio(x: f64) -> String {
    format!("{x:.1}×")
}
