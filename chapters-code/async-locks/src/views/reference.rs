//! The write-up's published numbers beside yours: its "medium value" per design, its
//! order of the designs, and its unit check.

use super::{MT, per_run, shown};
use crate::Design;
use crate::experiments::{DesignsRound, UnitKey, UnitRound};
use harness::cells;
use harness::reference::Published;
use harness::render::{Cell, Table, fmt_count, fmt_ns, fmt_opt_estimate, ratio_cell};
use harness::{Dist, Results, Unit};
use serde::Deserialize;

/// The write-up's numbers, with its source and machines (`Published`).
pub type Reference = Published<Numbers>;

#[derive(Deserialize)]
pub struct Numbers {
    pub designs: Vec<RefDesign>,
    pub unit_check: RefUnitCheck,
}

#[derive(Deserialize)]
pub struct RefDesign {
    pub design: String,
    pub n: usize,
    pub timeout_ms: f64,
    /// The number the write-up calls a "medium value", in milliseconds.
    pub medium_value_ms: f64,
    pub reported_as: String,
    pub printed: String,
}

#[derive(Deserialize)]
pub struct RefUnitCheck {
    pub first_ms: u64,
    pub extra_ms: u64,
    pub low_ms: u64,
    pub high_ms: u64,
}

pub fn reference() -> anyhow::Result<Reference> {
    let r: Reference = Published::load(include_str!(
        "../../../../assets/reference/async-locks.toml"
    ))?;
    for d in &r.designs {
        Design::parse(&d.design)?;
    }
    Ok(r)
}

/// The write-up's "medium value" of a design, in ms, as printed.
fn theirs(refs: &Reference, d: Design) -> Option<f64> {
    refs.designs
        .iter()
        .find(|x| Design::parse(&x.design).ok() == Some(d))
        .map(|x| x.medium_value_ms)
}

/// The write-up's "medium value" per design beside your median and mean of the same
/// quantity (start popped off the shared queue → expiry handled, 20 ms included),
/// multi-thread runtime; then its order of the designs, pair by pair, beside the
/// per-round ratio of yours.
pub fn writeup_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new([
        "design",
        "theirs: “medium value”",
        "yours: median",
        "yours: mean",
    ]);
    for design in [
        Design::StdMutexTask,
        Design::StdMutex,
        Design::TokioMutexCap1,
        Design::TwoRuntimes,
    ] {
        let fifo = |f: fn(&crate::experiments::Pairing) -> f64| {
            per_run(r, design, MT, |x| x.pairing.as_ref().map(f))
        };
        t.row(cells![
            shown(design),
            // As printed: its digits, not rounded to three.
            theirs(&refs, design).map_or_else(|| "– (our variant)".into(), |v| format!("{v} ms")),
            fmt_opt_estimate(fifo(|p| p.fifo_p50_ns), Unit::Nanos),
            fmt_opt_estimate(fifo(|p| p.fifo_mean_ns), Unit::Nanos),
        ]);
    }
    let mut order = Table::new([
        "the write-up's later",
        "its sooner",
        "theirs",
        "yours: later ÷ sooner",
    ]);
    let three = [
        Design::StdMutexTask,
        Design::TokioMutexCap1,
        Design::TwoRuntimes,
    ];
    // One run's FIFO median: start popped off the queue → handled.
    let pick = |d: Design| {
        move |round: &DesignsRound| {
            Some(
                round
                    .find(d, MT)
                    .filter(|x| x.complete())?
                    .pairing
                    .as_ref()?
                    .fifo_p50_ns,
            )
        }
    };
    let yours = |later, sooner| {
        r.compare_of(pick(later), pick(sooner))
            .map_or_else(|| "–".into(), |c| ratio_cell(&c))
    };
    for (i, &a) in three.iter().enumerate() {
        for &b in &three[i + 1..] {
            let (Some(ta), Some(tb)) = (theirs(&refs, a), theirs(&refs, b)) else {
                continue;
            };
            let mut pair = [(a, ta), (b, tb)];
            pair.sort_by(|x, y| y.1.total_cmp(&x.1));
            let [(later, tl), (sooner, ts)] = pair;
            let theirs = format!("{tl} ms ÷ {ts} ms");
            order.row(cells![
                shown(later),
                shown(sooner),
                theirs,
                yours(later, sooner)
            ]);
        }
    }
    // Design 3 without the budget's hold on its lock (not a design of the write-up's).
    let (free, one) = (Design::TwoRuntimesFreeLock, Design::StdMutexTask);
    order.row(cells![shown(free), shown(one), "–", yours(free, one)]);
    Ok(format!(
        "{}\n{}\n\nYours: multi-thread runtime, each round's median and mean of the time from \
         the start popped off the queue to the handled expiry, then the median over rounds. \
         The write-up's order of its designs beside yours, on the same quantity:\n\n{}\n\
         How that pairing compares with each timeout's own start, median over rounds of each \
         run's figure:\n\n{}",
        t.to_markdown(),
        refs.attribution(),
        order.to_markdown(),
        super::tables::pairing_table(r)?,
    ))
}

/// The write-up's unit check, repeated: when each extended timeout fired.
pub fn unit_check_table(r: &Results<UnitRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let u = &refs.unit_check;
    let all = Dist::from_samples(r.data().flat_map(|x| x.fired_ns.iter().copied()));
    let s = all
        .summary()
        .ok_or_else(|| anyhow::anyhow!("no check finished"))?;
    let (mut inside, mut early, mut late) = (0, 0, 0);
    for x in r.data() {
        // The checks inside, before and after the write-up's window (not the verdict rule).
        let (i, e, l) = UnitRound::verdicts(x);
        inside += i;
        early += e;
        late += l;
    }
    let mut t = Table::new([
        "checks",
        "median fired after",
        "min",
        "max",
        "in / early / late",
    ]);
    t.row(cells![
        fmt_count(s.n),
        fmt_opt_estimate(r.estimate(&UnitKey::FiredAfter), Unit::Nanos),
        fmt_ns(s.min),
        fmt_ns(s.max),
        Cell::join([inside, early, late].map(|x| x.to_string().into()), " / "),
    ]);
    Ok(format!(
        "{}\nEach check: a {} ms timeout extended by {} ms. The write-up's window is more than \
         {} ms and less than {} ms.\n",
        t.to_markdown(),
        u.first_ms,
        u.extra_ms,
        u.low_ms,
        u.high_ms
    ))
}
