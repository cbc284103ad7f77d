//! How the chapter's results are shown: Markdown tables, sentences decided by the
//! intervals, and SVG plots. A figure with an interval is the median over rounds of
//! one value per round; distributions pool every timeout of every round.

use crate::experiments::{
    DESIGNS, DesignRun, DesignsRound, SWEEP, SWEPT, SweepRound, UNIT_CHECK, UnitRound, key,
    sweep_key,
};
use crate::{Design, Flavour};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::{RefMachine, Source, attribution};
use harness::render::{
    Better, Table, Tails, compare_sentence, confidence_text, fmt_count, fmt_ns, fmt_opt_estimate,
    fmt_ratio_estimate, sig3,
};
use harness::render::{capitalise, undecided_text};
use harness::stats::{Verdict, verdict};
use harness::{Dist, Estimate, Results, Unit, View};
use serde::Deserialize;

pub static DESIGNS_TABLE: View<DesignsRound> = View::table("designs", &DESIGNS, designs_table);
pub static FINDINGS: View<DesignsRound> = View::table("findings", &DESIGNS, findings).brief();
pub static WRITEUP: View<DesignsRound> = View::table("writeup", &DESIGNS, writeup_table).brief();
pub static PAIRING: View<DesignsRound> = View::table("pairing", &DESIGNS, pairing_table).brief();
pub static FLAVOURS: View<DesignsRound> = View::table("flavours", &DESIGNS, flavours_table).brief();
pub static COST: View<DesignsRound> = View::table("cost", &DESIGNS, cost_table).brief();
pub static DESIGNS_CDF: View<DesignsRound> = View::plot("designs-cdf", &DESIGNS, |r| {
    cdf_plot(r, Flavour::MultiThread)
})
.brief();
pub static FLAVOURS_CDF: View<DesignsRound> = View::plot("flavours-cdf", &DESIGNS, |r| {
    cdf_plot(r, Flavour::CurrentThread)
})
.brief();
pub static SWEEP_MULTI: View<SweepRound> = View::plot("sweep-multi-thread", &SWEEP, |r| {
    sweep_plot(r, Flavour::MultiThread)
});
pub static SWEEP_CURRENT: View<SweepRound> = View::plot("sweep-current-thread", &SWEEP, |r| {
    sweep_plot(r, Flavour::CurrentThread)
})
.brief();
pub static SWEEP_TABLE: View<SweepRound> = View::table("sweep", &SWEEP, sweep_table).brief();
pub static SWEEP_FINDINGS: View<SweepRound> =
    View::table("sweep-findings", &SWEEP, sweep_findings).brief();
pub static UNIT_CHECK_TABLE: View<UnitRound> =
    View::table("unit-check", &UNIT_CHECK, unit_check_table);

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
    let mut d = Dist::new();
    for run in r
        .data()
        .filter_map(|x| x.find(design, flavour))
        .filter(|x| x.complete())
    {
        if let Some(l) = &run.lateness {
            d.merge(l);
        }
    }
    d
}

/// Rounds in which a design on a runtime did not handle every expiry in time.
fn stalled(r: &Results<DesignsRound>, design: Design, flavour: Flavour) -> usize {
    r.data()
        .filter_map(|x| x.find(design, flavour))
        .filter(|x| !x.complete())
        .count()
}

fn est(r: &Results<DesignsRound>, design: Design, flavour: Flavour) -> Option<Estimate> {
    r.estimate(&key(design, flavour))
}

/// Lateness on the multi-thread runtime: the median over rounds of each run's median,
/// with its interval; then the tails of every timeout of every round, pooled.
fn designs_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let fl = Flavour::MultiThread;
    let dists: Vec<(Design, Dist)> = Design::ALL.iter().map(|&d| (d, pooled(r, d, fl))).collect();
    // Tail columns as far as every design that has any timeouts supports them.
    let tails = Tails::for_counts(dists.iter().map(|(_, d)| d.len()).filter(|n| *n > 0));
    let any_stalled = Design::ALL.iter().any(|&d| stalled(r, d, fl) > 0);
    let mut headers = vec!["design", "median lateness", "n"];
    if tails.p99 {
        headers.push("p99");
    }
    if tails.p999 {
        headers.push("p99.9");
    }
    headers.push("max");
    if any_stalled {
        headers.push("stalled rounds");
    }
    let mut t = Table::new(headers);
    for (design, d) in &dists {
        let s = d.summary();
        let cell = |v: Option<f64>| v.map_or_else(|| "–".into(), fmt_ns);
        let mut row = vec![
            design.label().to_string(),
            fmt_opt_estimate(est(r, *design, fl), Unit::Nanos),
            harness::render::fmt_count(d.len()),
        ];
        if tails.p99 {
            row.push(cell(s.as_ref().and_then(|s| s.p99)));
        }
        if tails.p999 {
            row.push(cell(s.as_ref().and_then(|s| s.p999)));
        }
        row.push(cell(s.as_ref().map(|s| s.max)));
        if any_stalled {
            row.push(stalled(r, *design, fl).to_string());
        }
        t.row(row);
    }
    Ok(t.to_markdown())
}

/// A name for a design in a sentence.
fn spoken(design: Design) -> &'static str {
    match design {
        Design::Baseline => "the baseline",
        Design::BaselineUnconstrained => "the baseline with the budget off",
        Design::StdMutexTask => "design 1",
        Design::StdMutex => "design 1 inline",
        Design::TokioMutexCap1 => "design 2",
        Design::TokioMutexCapN => "design 2′",
        Design::TwoRuntimes => "design 3",
        Design::Fix => "the fix",
    }
}

/// Sentences decided by the intervals: which design's timeouts were later than
/// which, on this machine in this run.
fn findings(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    use Design::*;
    use Flavour::*;
    let pair = |a: (Design, Flavour), b: (Design, Flavour), an: &str, bn: &str| {
        let (ka, kb) = (key(a.0, a.1), key(b.0, b.1));
        let (ea, eb) = (r.estimate(&ka)?, r.estimate(&kb)?);
        Some(compare_sentence(
            (an, &ea),
            (bn, &eb),
            r.ratio(&ka, &kb).as_ref(),
            Better::Lower,
        ))
    };
    let mt = |a: Design, b: Design| pair((a, MultiThread), (b, MultiThread), spoken(a), spoken(b));
    let mut out: Vec<String> = [
        mt(TokioMutexCap1, Fix),
        mt(StdMutexTask, TokioMutexCap1),
        mt(StdMutexTask, TwoRuntimes),
        mt(StdMutexTask, StdMutex),
        mt(StdMutexTask, Baseline),
        mt(StdMutex, Baseline),
        mt(TokioMutexCapN, TokioMutexCap1),
        mt(Fix, Baseline),
        pair(
            (TokioMutexCap1, CurrentThread),
            (TokioMutexCap1, MultiThread),
            "design 2 on the current-thread runtime",
            "design 2 on the multi-thread one",
        ),
        pair(
            (StdMutexTask, CurrentThread),
            (StdMutex, CurrentThread),
            "on the current-thread runtime, design 1",
            "design 1 inline",
        ),
        pair(
            (BaselineUnconstrained, CurrentThread),
            (Baseline, CurrentThread),
            "on the current-thread runtime, the baseline with the budget off",
            "the baseline",
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    anyhow::ensure!(!out.is_empty(), "no design has a result to compare");
    out.insert(
        0,
        "Median lateness, multi-thread runtime unless stated".to_string(),
    );
    let mut text = format!("{}:\n\n", out.remove(0));
    for s in out {
        text.push_str(&format!("- {}.\n", capitalise(&s)));
    }
    Ok(text)
}

// The write-up's published numbers.
#[derive(Deserialize)]
pub struct Reference {
    pub source: Source,
    pub machines: Vec<RefMachine>,
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
    let r: Reference =
        harness::reference::parse(include_str!("../../../assets/reference/async-locks.toml"))?;
    for d in &r.designs {
        Design::parse(&d.design)?;
    }
    Ok(r)
}

/// The write-up's "medium value" per design beside your median and mean of the same
/// quantity (start popped off the shared queue → expiry handled, 20 ms included),
/// multi-thread runtime.
fn writeup_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let fl = Flavour::MultiThread;
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
        let theirs = refs
            .designs
            .iter()
            .find(|d| Design::parse(&d.design).ok() == Some(design))
            .map_or_else(
                || "– (our variant)".to_string(),
                // As printed: its digits, not rounded to three.
                |d| format!("{} ms", d.medium_value_ms),
            );
        let fifo = |f: fn(&crate::experiments::Pairing) -> f64| {
            per_run(r, design, fl, |x| x.pairing.as_ref().map(f))
        };
        t.row([
            design.label().to_string(),
            theirs,
            fmt_opt_estimate(fifo(|p| p.fifo_p50_ns), Unit::Nanos),
            fmt_opt_estimate(fifo(|p| p.fifo_mean_ns), Unit::Nanos),
        ]);
    }
    let machines: Vec<&RefMachine> = refs.machines.iter().collect();
    let n = r
        .param("timeouts")
        .map_or_else(|| "N".into(), |v| fmt_count(v as u64));
    Ok(format!(
        "{}\n{}\n\nYours: multi-thread runtime, {n} timeouts per run; each round's median and \
         mean of the time from the start popped off the queue to the handled expiry, then the \
         median over rounds with its confidence interval.\n",
        t.to_markdown(),
        attribution(&refs.source, &machines),
    ))
}

/// The FIFO pairing of the queue designs against each timeout's own start,
/// multi-thread runtime: medians over rounds of each run's figures.
fn pairing_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let fl = Flavour::MultiThread;
    let mut t = Table::new([
        "design",
        "mis-paired",
        "mean: own / FIFO",
        "p99: own / FIFO",
        "max: own / FIFO",
    ]);
    let median = |design: Design, f: &dyn Fn(&crate::experiments::Pairing) -> Option<f64>| {
        per_run(r, design, fl, |x| x.pairing.as_ref().and_then(f)).map(|e| e.median)
    };
    let both = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{} / {}", fmt_ns(a), fmt_ns(b)),
        _ => "–".into(),
    };
    for design in Design::ALL.into_iter().filter(|d| d.uses_queue()) {
        let share = per_run(r, design, fl, |x| {
            x.pairing
                .as_ref()
                .map(|p| p.mispaired as f64 / x.handled.max(1) as f64)
        });
        let Some(share) = share else { continue };
        t.row([
            design.label().to_string(),
            format!("{} %", sig3(share.median * 100.0)),
            both(
                median(design, &|p| Some(p.own_mean_ns)),
                median(design, &|p| Some(p.fifo_mean_ns)),
            ),
            both(
                median(design, &|p| p.own_p99_ns),
                median(design, &|p| p.fifo_p99_ns),
            ),
            both(
                median(design, &|p| Some(p.own_max_ns)),
                median(design, &|p| Some(p.fifo_max_ns)),
            ),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no queue design has a result");
    Ok(t.to_markdown())
}

/// Median lateness per design on each runtime, and the per-round ratio between them
/// where their intervals are apart.
fn flavours_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "design",
        "current-thread",
        "multi-thread",
        "multi ÷ current",
    ]);
    for design in Design::ALL {
        let (ct, mt) = (
            est(r, design, Flavour::CurrentThread),
            est(r, design, Flavour::MultiThread),
        );
        let ratio = match (&ct, &mt) {
            (Some(c), Some(m)) if !verdict(m, c).is_clear() => {
                undecided_text(verdict(m, c)).unwrap_or_default()
            }
            (Some(_), Some(_)) => r
                .ratio(
                    &key(design, Flavour::MultiThread),
                    &key(design, Flavour::CurrentThread),
                )
                .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e)),
            _ => "–".into(),
        };
        t.row([
            design.label().to_string(),
            fmt_opt_estimate(ct, Unit::Nanos),
            fmt_opt_estimate(mt, Unit::Nanos),
            ratio,
        ]);
    }
    Ok(t.to_markdown())
}

/// What each design costs: process CPU time and wall time of one run.
fn cost_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "design",
        "CPU, current-thread",
        "CPU, multi-thread",
        "wall, multi-thread",
    ]);
    for design in Design::ALL {
        let cpu = |fl| per_run(r, design, fl, |x| x.cpu_ns);
        t.row([
            design.label().to_string(),
            fmt_opt_estimate(cpu(Flavour::CurrentThread), Unit::Nanos),
            fmt_opt_estimate(cpu(Flavour::MultiThread), Unit::Nanos),
            fmt_opt_estimate(
                per_run(r, design, Flavour::MultiThread, |x| Some(x.wall_ns)),
                Unit::Nanos,
            ),
        ]);
    }
    Ok(t.to_markdown())
}

fn cdf_plot(r: &Results<DesignsRound>, flavour: Flavour) -> anyhow::Result<String> {
    let series: Vec<(String, Dist)> = Design::ALL
        .iter()
        .map(|&d| (d.label().to_string(), pooled(r, d, flavour)))
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

/// The sizes every round of the sweep ran.
fn sweep_sizes(r: &Results<SweepRound>) -> Vec<usize> {
    r.data().next().map(|x| x.sizes.clone()).unwrap_or_default()
}

/// Words for the level of a set of intervals, `at only 88 %, from 4 rounds`, when the
/// lowest of them falls short of the book's 95 %; `None` when all reach it. (The same
/// words `compare_sentence` appends; the harness could export this.)
fn shortfall<'a>(estimates: impl IntoIterator<Item = &'a Estimate>) -> Option<String> {
    estimates
        .into_iter()
        .filter(|e| !e.at_stated_confidence())
        .min_by(|a, b| a.confidence.total_cmp(&b.confidence))
        .map(|e| format!("at only {:.0} %, from {} rounds", e.confidence * 100.0, e.n))
}

fn sweep_plot(r: &Results<SweepRound>, flavour: Flavour) -> anyhow::Result<String> {
    let sizes = sweep_sizes(r);
    let all: Vec<Estimate> = SWEPT
        .iter()
        .flat_map(|&d| sizes.iter().map(move |&n| sweep_key(d, flavour, n)))
        .filter_map(|k| r.estimate(&k))
        .collect();
    let bars = shortfall(&all).map_or_else(
        || format!("{} confidence intervals", confidence_text()),
        |s| format!("confidence intervals {s}"),
    );
    let mut plot = Plot::new(
        format!(
            "median lateness against the number of timeouts, {} runtime",
            flavour.label()
        ),
        format!("timeouts started together, N (log scale; bars: {bars})"),
        "median lateness (log scale)",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Nanos);
    for design in SWEPT {
        let points = sizes
            .iter()
            .filter_map(|&n| Some((n as f64, r.estimate(&sweep_key(design, flavour, n))?)))
            .collect();
        plot = plot.series(Series::estimates(design.label(), points));
    }
    plot.to_svg()
}

/// Per design and runtime: the median lateness at the smallest and the largest N, and
/// the per-round ratio of the two (how much the lateness grew with N).
fn sweep_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let sizes = sweep_sizes(r);
    let (Some(&lo), Some(&hi)) = (sizes.first(), sizes.last()) else {
        anyhow::bail!("the sweep has no sizes");
    };
    let (lo_s, hi_s) = (fmt_count(lo as u64), fmt_count(hi as u64));
    let mut t = Table::new([
        "design".to_string(),
        "runtime".to_string(),
        format!("N = {lo_s}"),
        format!("N = {hi_s}"),
        "growth".to_string(),
    ]);
    for flavour in Flavour::ALL {
        for design in SWEPT {
            let (a, b) = (
                sweep_key(design, flavour, lo),
                sweep_key(design, flavour, hi),
            );
            t.row([
                design.label().to_string(),
                short(flavour).to_string(),
                fmt_opt_estimate(r.estimate(&a), Unit::Nanos),
                fmt_opt_estimate(r.estimate(&b), Unit::Nanos),
                r.ratio(&b, &a)
                    .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e)),
            ]);
        }
    }
    Ok(t.to_markdown())
}

fn short(flavour: Flavour) -> &'static str {
    match flavour {
        Flavour::CurrentThread => "current",
        Flavour::MultiThread => "multi",
    }
}

/// A list of design names for a sentence: `a, b and c`.
fn listed(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Sentences decided by the intervals: whose median lateness grew more with N than the
/// fix's (per-round ratios of the largest N to N = 1), and how the write-up's designs
/// compare with the fix at the largest N.
fn sweep_findings(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let sizes = sweep_sizes(r);
    let (Some(&lo), Some(&hi)) = (sizes.first(), sizes.last()) else {
        anyhow::bail!("the sweep has no sizes");
    };
    let (lo_s, hi_s) = (fmt_count(lo as u64), fmt_count(hi as u64));
    let growth = |d: Design, fl: Flavour| r.ratio(&sweep_key(d, fl, hi), &sweep_key(d, fl, lo));
    let mut out = Vec::new();
    for flavour in Flavour::ALL {
        let fl = flavour.label();
        if let Some(fix) = growth(Design::Fix, flavour) {
            let (mut more, mut same, mut less) = (Vec::new(), Vec::new(), Vec::new());
            let mut used = vec![fix];
            for design in SWEPT.into_iter().filter(|d| *d != Design::Fix) {
                let Some(g) = growth(design, flavour) else {
                    continue;
                };
                used.push(g);
                let named = format!("{} at {}", spoken(design), fmt_ratio_estimate(&g));
                match verdict(&g, &fix) {
                    Verdict::Above => more.push(named),
                    Verdict::Unclear | Verdict::Same => same.push(spoken(design).to_string()),
                    Verdict::Below => less.push(named),
                }
            }
            let mut s = format!(
                "{fl} runtime, from N = {lo_s} to N = {hi_s}: the fix's median lateness grew {}",
                fmt_ratio_estimate(&fix)
            );
            for (list, how) in [
                (&more, "clearly more"),
                (&same, "no clear difference (intervals overlap)"),
                (&less, "clearly less"),
            ] {
                if !list.is_empty() {
                    s.push_str(&format!("; {how}: {}", listed(list)));
                }
            }
            // With too few rounds for 95 %, the sentence says how sure it is.
            if let Some(level) = shortfall(&used) {
                s.push_str(&format!(" (intervals {level})"));
            }
            out.push(s);
        }
        for design in [
            Design::StdMutexTask,
            Design::TokioMutexCap1,
            Design::TwoRuntimes,
        ] {
            let (a, b) = (
                sweep_key(design, flavour, hi),
                sweep_key(Design::Fix, flavour, hi),
            );
            if let (Some(ea), Some(eb)) = (r.estimate(&a), r.estimate(&b)) {
                out.push(format!(
                    "{fl} runtime, N = {hi_s}: {}",
                    compare_sentence(
                        (spoken(design), &ea),
                        (spoken(Design::Fix), &eb),
                        r.ratio(&a, &b).as_ref(),
                        Better::Lower,
                    )
                ));
            }
        }
    }
    let ct = Flavour::CurrentThread;
    let (a, b) = (
        sweep_key(Design::Baseline, ct, hi),
        sweep_key(Design::BaselineUnconstrained, ct, hi),
    );
    if let (Some(ea), Some(eb)) = (r.estimate(&a), r.estimate(&b)) {
        out.push(format!(
            "current-thread runtime, N = {hi_s}: {}",
            compare_sentence(
                (spoken(Design::Baseline), &ea),
                (spoken(Design::BaselineUnconstrained), &eb),
                r.ratio(&a, &b).as_ref(),
                Better::Lower,
            )
        ));
    }
    anyhow::ensure!(!out.is_empty(), "no design has a result to compare");
    Ok(out
        .iter()
        .map(|s| format!("- {}.\n", capitalise(s)))
        .collect())
}

/// The write-up's unit check, repeated: when each extended timeout fired.
fn unit_check_table(r: &Results<UnitRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let u = &refs.unit_check;
    let all: Vec<f64> = r.data().flat_map(|x| x.fired_ns.iter().copied()).collect();
    let d = Dist::from_samples(all.iter().copied());
    let s = d
        .summary()
        .ok_or_else(|| anyhow::anyhow!("no check finished"))?;
    let (mut inside, mut early, mut late) = (0, 0, 0);
    for x in r.data() {
        let (i, e, l) = x.verdicts();
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
    t.row([
        fmt_count(s.n),
        fmt_opt_estimate(r.estimate("fired after"), Unit::Nanos),
        fmt_ns(s.min),
        fmt_ns(s.max),
        format!("{inside} / {early} / {late}"),
    ]);
    Ok(format!(
        "{}\nEach check: a {} ms timeout extended by {} ms; the write-up's window is more than \
         {} ms and less than {} ms.\n",
        t.to_markdown(),
        u.first_ms,
        u.extra_ms,
        u.low_ms,
        u.high_ms
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_data_parses_and_names_known_designs() {
        let r = reference().unwrap();
        assert_eq!(r.designs.len(), 3);
        assert!(
            r.designs
                .iter()
                .all(|d| d.n == 10_000 && d.timeout_ms == 20.0 && d.reported_as == "medium value")
        );
        let one = r.designs.iter().find(|d| d.design == "std-mutex-task");
        assert_eq!(one.map(|d| d.medium_value_ms), Some(45.1209));
        assert_eq!((r.unit_check.low_ms, r.unit_check.high_ms), (36, 44));
    }
}
