//! How the chapter's results are shown: Markdown tables, sentences decided by the
//! intervals, and SVG plots. A figure with an interval is the median over rounds of
//! one value per round; distributions pool every timeout of every round.

use crate::experiments::{
    DESIGNS, DesignKey, DesignRun, DesignsRound, HAZARDS, HazardKey, HazardsRound, SWEEP, SWEPT,
    SweepKey, SweepRound, TWINNED, UNIT_CHECK, UnitKey, UnitRound,
};
use crate::{Design, Flavour, Hazard, Tallied};
use harness::cells;
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::Published;
use harness::render::{
    Better, Cell, Formatted, Table, Tails, answer_block, comparison_sentence, confidence_text,
    fmt_count, fmt_ns, fmt_opt_estimate, fmt_ratio_estimate, ratio_cell, sig3, undecided_lists,
};
use harness::stats::{Comparison, Verdict};
use harness::{Dist, Estimate, Results, Unit, View};
use serde::Deserialize;

pub static ANSWER: View<DesignsRound> = View::table("answer", &DESIGNS, answer);
// The answer block, first on the page, carries this result's provenance and notes.
pub static DESIGNS_TABLE: View<DesignsRound> =
    View::table("designs", &DESIGNS, designs_table).brief();
pub static FINDINGS: View<DesignsRound> = View::table("findings", &DESIGNS, findings).brief();
pub static COST_MULTI: View<DesignsRound> =
    View::table("cost", &DESIGNS, |r| cost_table(r, Flavour::MultiThread)).brief();
pub static COST_CURRENT: View<DesignsRound> = View::table("cost-current-thread", &DESIGNS, |r| {
    cost_table(r, Flavour::CurrentThread)
})
.brief();
pub static WAITS: View<DesignsRound> = View::table("waits", &DESIGNS, waits_table).brief();
pub static WHY: View<DesignsRound> = View::table("why", &DESIGNS, why).brief();
pub static WRITEUP: View<DesignsRound> = View::table("writeup", &DESIGNS, writeup_table).brief();
pub static PAIRING: View<DesignsRound> = View::table("pairing", &DESIGNS, pairing_table).brief();
pub static FLAVOURS: View<DesignsRound> = View::table("flavours", &DESIGNS, flavours_table).brief();
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
pub static HAZARDS_TABLE: View<HazardsRound> = View::table("hazards", &HAZARDS, hazards_table);
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

/// Lateness on the multi-thread runtime: the median over rounds of each run's median,
/// with its interval; then the tails of every timeout of every round, pooled.
fn designs_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let fl = Flavour::MultiThread;
    let dists: Vec<(Design, Dist)> = Design::ALL.iter().map(|&d| (d, pooled(r, d, fl))).collect();
    // Tail columns as far as every design that has any timeouts supports them.
    let tails = Tails::for_counts(dists.iter().map(|(_, d)| d.len()).filter(|n| *n > 0));
    let any_stalled = Design::ALL.iter().any(|&d| stalled(r, d, fl) > 0);
    let mut headers = vec!["design", "median lateness", "n"];
    headers.extend(tails.tail_headers());
    if any_stalled {
        headers.push("stalled rounds");
    }
    let mut t = Table::new(headers);
    for (design, d) in &dists {
        let mut row: Vec<Cell> = cells![
            design.label(),
            fmt_opt_estimate(est(r, *design, fl), Unit::Nanos),
            harness::render::fmt_count(d.len()),
        ]
        .into();
        match d.summary() {
            Some(s) => row.extend(tails.tail_cells(&s, fmt_ns).into_iter().map(Cell::from)),
            None => row.extend(tails.tail_headers().iter().map(|_| Cell::from("–"))),
        }
        if any_stalled {
            row.push(stalled(r, *design, fl).to_string().into());
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
        Design::TaskEach => "the task-each control",
        Design::StdMutexTask => "design 1",
        Design::StdMutex => "design 1 inline",
        Design::TokioMutexCap1 => "design 2",
        Design::TokioMutexCapN => "design 2′",
        Design::TwoRuntimes => "design 3",
        Design::Fix => "the fix",
    }
}

type Arm = (Design, Flavour);

const MT: Flavour = Flavour::MultiThread;
const CT: Flavour = Flavour::CurrentThread;

/// A per-run value of two arms, judged on their pairs (complete runs only).
fn paired(
    r: &Results<DesignsRound>,
    a: Arm,
    b: Arm,
    f: impl Fn(&DesignRun) -> Option<f64>,
) -> Option<Comparison> {
    let get = |round: &DesignsRound, (d, fl): Arm| {
        round.find(d, fl).filter(|x| x.complete()).and_then(&f)
    };
    r.compare_of(|round| get(round, a), |round| get(round, b))
}

/// A comparison: the sentence the harness words, its verdict, and the two estimates.
struct Compared {
    text: String,
    verdict: Verdict,
    estimates: [Estimate; 2],
}

impl Compared {
    fn new(an: &str, bn: &str, c: Comparison, better: Better) -> Compared {
        Compared {
            text: comparison_sentence(an, bn, &c, better),
            verdict: c.verdict,
            estimates: [c.a, c.b],
        }
    }
}

/// Two arms' median lateness judged on their pairs.
fn late_cmp(r: &Results<DesignsRound>, a: (Arm, &str), b: (Arm, &str)) -> Option<Compared> {
    let (ka, kb) = (DesignKey::new(a.0.0, a.0.1), DesignKey::new(b.0.0, b.0.1));
    let c = r.compare(&ka, &kb)?;
    Some(Compared::new(a.1, b.1, c, Better::Lower))
}

/// Two arms' per-run value (a cost) judged on their pairs: "higher"/"lower".
fn value_cmp(
    r: &Results<DesignsRound>,
    a: (Arm, &str),
    b: (Arm, &str),
    f: fn(&DesignRun) -> Option<f64>,
) -> Option<Compared> {
    let c = paired(r, a.0, b.0, f)?;
    Some(Compared::new(a.1, b.1, c, Better::Higher))
}

/// One run's p99 lateness (a run of fewer timeouts than a p99 needs has none).
fn p99_of_run(x: &DesignRun) -> Option<f64> {
    x.lateness.as_ref()?.summary()?.p99
}

/// Two arms' p99 lateness, one per run, compared by the verdict rule like the medians.
fn p99_cmp(r: &Results<DesignsRound>, a: (Arm, &str), b: (Arm, &str)) -> Option<Compared> {
    let c = paired(r, a.0, b.0, p99_of_run)?;
    Some(Compared::new(a.1, b.1, c, Better::Lower))
}

/// Lateness of one arm, as the tables print it.
fn late(r: &Results<DesignsRound>, design: Design, flavour: Flavour) -> Formatted {
    fmt_opt_estimate(est(r, design, flavour), Unit::Nanos)
}

/// The share of a tally's calls that had to wait, in one run.
fn waited(t: &Tallied) -> Option<f64> {
    (t.calls > 0).then(|| t.waited as f64 / t.calls as f64)
}

/// One kind of wait of one arm, summed over the complete runs of every round.
fn pooled_tally(
    r: &Results<DesignsRound>,
    design: Design,
    flavour: Flavour,
    of: fn(&crate::Waits) -> Tallied,
) -> Option<Tallied> {
    let runs: Vec<Tallied> = r
        .data()
        .filter_map(|x| x.find(design, flavour))
        .filter(|x| x.complete())
        .map(|x| of(&x.waits))
        .collect();
    let sum = runs.iter().fold(Tallied::default(), |a, t| Tallied {
        calls: a.calls + t.calls,
        waited: a.waited + t.waited,
        refused: a.refused + t.refused,
    });
    (sum.calls > 0).then_some(sum)
}

/// "12 of 80,000 lockings (0.015 %)", over every round; "none of …" for zero. In a
/// table the share in brackets may wrap under the count, as an interval does.
fn count_text(t: &Tallied, what: &str) -> Formatted {
    if t.waited == 0 {
        return Formatted::plain(format!("none of {} {what}", fmt_count(t.calls)));
    }
    Formatted::with_interval(
        format!("{} of {} {what}", fmt_count(t.waited), fmt_count(t.calls)),
        harness::render::fmt_percent(t.waited as f64 / t.calls as f64),
    )
}

/// CPU time per timeout started, ns.
fn cpu_per_timeout(x: &DesignRun) -> Option<f64> {
    x.per_timeout(x.counters.cpu_ns)
}

/// Context switches (voluntary and involuntary) per timeout started.
fn switches_per_timeout(x: &DesignRun) -> Option<f64> {
    let c = &x.counters;
    x.per_timeout(Some(c.voluntary? + c.involuntary?))
}

/// Run-queue delay per timeout started, ns.
fn run_delay_per_timeout(x: &DesignRun) -> Option<f64> {
    x.per_timeout(x.counters.run_delay_ns)
}

/// Polls of the timers that tokio refused for want of budget, per timeout started.
fn refusals_per_timeout(x: &DesignRun) -> Option<f64> {
    x.per_timeout(Some(x.waits.timers.refused))
}

/// The chapter's answer, first on the page: did the std mutex hurt, what did, and what
/// the other designs and the fix gave, each comparison decided by the verdict rule.
fn answer(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    use Design::*;
    let refs = reference()?;
    let n = r
        .param("timeouts")
        .map_or_else(|| "N".into(), |v| fmt_count(v as u64));
    let ms = r
        .param("timeout_ms")
        .map_or_else(|| "?".into(), |v| fmt_count(v as u64));
    let mut out: Vec<String> = Vec::new();
    let d1 = ((StdMutexTask, MT), "design 1");
    let base = ((Baseline, MT), "the baseline");
    // The lock question changes one thing: design 1 against the same structure (a task
    // per timeout that its future waits for) without the queue and its lock.
    let ctl = ((TaskEach, MT), "the same structure without the lock");
    let c = late_cmp(r, d1, ctl)
        .ok_or_else(|| anyhow::anyhow!("design 1 or its control has no result"))?;
    let lock = pooled_tally(r, StdMutexTask, MT, |w| w.locks);
    // The median can hide a tail: each run's p99, compared the same way.
    let tail = p99_cmp(
        r,
        ((StdMutexTask, MT), "design 1's p99"),
        ((TaskEach, MT), "the control's"),
    );
    out.push(format!(
        "**Did the std mutex in design 1's synchronous callback hurt?** Against the same \
         structure without the lock (a task per timeout, nothing shared), with {n} timeouts \
         of {ms} ms on a multi-thread runtime: design 1 handled them {} past their \
         deadlines, the control {}; {}{}{}",
        late(r, StdMutexTask, MT),
        late(r, TaskEach, MT),
        c.text,
        tail.map_or_else(String::new, |t| format!(
            "; each run's p99, median over rounds, {} against {}: {}",
            fmt_ns(t.estimates[0].median),
            fmt_ns(t.estimates[1].median),
            t.text
        )),
        lock.map_or_else(String::new, |t| format!(
            "; pushes and callbacks together, pooled over every round, found the lock taken \
             in {}",
            count_text(&t, "lockings")
        )),
    ));
    // The old headline pair, which changes two things at once, said as such.
    let structure = |fl: Flavour, name: &str| -> Option<String> {
        let c = late_cmp(
            r,
            ((TaskEach, fl), "a task per timeout"),
            ((Baseline, fl), "one `join_all` task"),
        )?;
        Some(format!("{name}, {}", c.text))
    };
    let said: Vec<String> = [
        structure(MT, "multi-thread"),
        structure(CT, "current-thread"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !said.is_empty() {
        out.push(format!(
            "**What the structure does, with no lock on either side** (the baseline keeps every \
             timer in one `join_all` task; the control gives each its own): {}",
            said.join("; ")
        ));
    }
    let d2 = ((TokioMutexCap1, MT), "design 2");
    let d2n = ((TokioMutexCapN, MT), "design 2′");
    if let (Some(vs_room), Some(vs_base)) = (late_cmp(r, d2, d2n), late_cmp(r, d2, base)) {
        let full = pooled_tally(r, TokioMutexCap1, MT, |w| w.sends);
        let full = full.map_or_else(String::new, |t| {
            format!(
                "; its senders found the slot full in {}",
                count_text(&t, "sends")
            )
        });
        let (d2l, d2nl) = (late(r, TokioMutexCap1, MT), late(r, TokioMutexCapN, MT));
        out.push(if vs_room.verdict == Verdict::Above {
            format!(
                "**What did?** On the multi-thread runtime, the channel's single slot: design 2 (tokio mutex, a channel of \
                 capacity 1) handled its timeouts {d2l} late, design 2′ (the same with room \
                 for all {n} messages) {d2nl}; {}{full}",
                vs_room.text.clone()
            )
        } else if vs_base.verdict == Verdict::Above {
            format!(
                "**What did?** Design 2 (tokio mutex, a channel of capacity 1, {d2l}) was \
                 later than the baseline ({}), but not through its single slot: {}{full}",
                vs_base.text.clone(),
                vs_room.text.clone()
            )
        } else {
            format!(
                "**What did?** Nothing clearly: design 2 (tokio mutex, a channel of capacity \
                 1) gave {d2l}; {}",
                vs_base.text.clone()
            )
        });
    }
    if let Some(c) = late_cmp(r, ((TwoRuntimes, MT), "design 3"), d1) {
        out.push(format!(
            "**Did splitting the work across two runtimes help, against design 1?** Design 3 \
             gave {}; {}",
            late(r, TwoRuntimes, MT),
            c.text.clone()
        ));
    }
    let fix = ((Fix, MT), "the fix");
    if let (Some(vs1), Some(cpu)) = (
        late_cmp(r, fix, d1),
        value_cmp(
            r,
            ((Fix, MT), "the fix's CPU time per timeout"),
            ((StdMutexTask, MT), "design 1's"),
            cpu_per_timeout,
        ),
    ) {
        out.push(format!(
            "**Did the fix beat design 1?** The fix (own deadline in each message, a task per \
             timeout, room for every message) gave {}; {}. Its CPU time per timeout was {} \
             against design 1's {}: {}",
            late(r, Fix, MT),
            vs1.text.clone(),
            fmt_ns(cpu.estimates[0].median),
            fmt_ns(cpu.estimates[1].median),
            cpu.text.clone(),
        ));
    }
    let theirs = |d: Design| {
        refs.designs
            .iter()
            .find(|x| Design::parse(&x.design).ok() == Some(d))
            .map(|x| format!("{} ms", x.medium_value_ms))
    };
    let writeup = match (
        theirs(StdMutexTask),
        theirs(TokioMutexCap1),
        theirs(TwoRuntimes),
    ) {
        (Some(a), Some(b), Some(c)) => format!(
            "“{}” reported a “medium value” (start to handling, the {ms} ms included) of {a} \
             for design 1, {b} for design 2 and {c} for design 3, and so found the lock it \
             had called “badly designed” the fastest.",
            refs.source.title
        ),
        _ => String::new(),
    };
    Ok(answer_block(out, &writeup))
}

/// Sentences decided by the verdict rule that the answer above does not already give:
/// which design's timeouts were later than which, and the A/A self-check.
fn findings(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    use Design::*;
    let mt = |a: Design, b: Design| late_cmp(r, ((a, MT), spoken(a)), ((b, MT), spoken(b)));
    let compared: Vec<Compared> = [
        mt(StdMutexTask, StdMutex),
        mt(StdMutex, Baseline),
        mt(Fix, Baseline),
        mt(TokioMutexCap1, Fix),
        late_cmp(
            r,
            (
                (TokioMutexCap1, CT),
                "design 2 on the current-thread runtime",
            ),
            ((TokioMutexCap1, MT), "design 2 on the multi-thread one"),
        ),
        late_cmp(
            r,
            ((StdMutexTask, CT), "design 1 on the current-thread runtime"),
            ((StdMutex, CT), "design 1 inline there"),
        ),
        late_cmp(
            r,
            (
                (BaselineUnconstrained, CT),
                "the baseline with the budget off on the current-thread runtime",
            ),
            ((Baseline, CT), "the baseline there"),
        ),
        late_cmp(
            r,
            (
                (BaselineUnconstrained, MT),
                "the baseline with the budget off on the multi-thread runtime",
            ),
            ((Baseline, MT), "the baseline there"),
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    anyhow::ensure!(!compared.is_empty(), "no design has a result to compare");
    let mut out: Vec<String> = compared.iter().map(|c| c.text.clone()).collect();
    out.extend(aa_line(r));
    Ok(format!(
        "Median lateness, multi-thread runtime unless stated:\n\n{}",
        harness::render::findings(out)
    ))
}

/// The A/A self-check: the twinned arm against its twin, by the verdict rule.
fn aa_line(r: &Results<DesignsRound>) -> Option<String> {
    let c = r.compare(&DesignKey::new(TWINNED.0, TWINNED.1), &DesignKey::TWIN)?;
    Some(harness::render::aa_sentence(
        &format!("{} on the {} runtime", spoken(TWINNED.0), TWINNED.1.label()),
        None,
        &fmt_opt_estimate(Some(c.a), Unit::Nanos).to_string(),
        &fmt_opt_estimate(Some(c.b), Unit::Nanos).to_string(),
        &c,
        Better::Lower,
    ))
}

// The write-up's published numbers.
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
    let r: Reference = Published::load(include_str!("../../../assets/reference/async-locks.toml"))?;
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
        t.row(cells![
            design.label(),
            theirs,
            fmt_opt_estimate(fifo(|p| p.fifo_p50_ns), Unit::Nanos),
            fmt_opt_estimate(fifo(|p| p.fifo_mean_ns), Unit::Nanos),
        ]);
    }
    let n = r
        .param("timeouts")
        .map_or_else(|| "N".into(), |v| fmt_count(v as u64));
    Ok(format!(
        "{}\n{}\n\nYours: multi-thread runtime, {n} timeouts per run; each round's median and \
         mean of the time from the start popped off the queue to the handled expiry, then the \
         median over rounds with its confidence interval.\n\n{}",
        t.to_markdown(),
        refs.attribution(),
        writeup_order(r, &refs),
    ))
}

/// The write-up's order of its three designs, pair by pair, against yours (each run's
/// FIFO median, decided by the verdict rule): which of its orderings your run repeats.
fn writeup_order(r: &Results<DesignsRound>, refs: &Reference) -> String {
    let fifo_p50 = |x: &DesignRun| x.pairing.as_ref().map(|p| p.fifo_p50_ns);
    let theirs = |d: Design| {
        refs.designs
            .iter()
            .find(|x| Design::parse(&x.design).ok() == Some(d))
            .map(|x| x.medium_value_ms)
    };
    let three = [
        Design::StdMutexTask,
        Design::TokioMutexCap1,
        Design::TwoRuntimes,
    ];
    let (mut out, mut kept, mut pairs) = (Vec::new(), 0, 0);
    for (i, &a) in three.iter().enumerate() {
        for &b in &three[i + 1..] {
            let (Some(ta), Some(tb)) = (theirs(a), theirs(b)) else {
                continue;
            };
            // The write-up's later design first.
            let (later, sooner) = if ta > tb { (a, b) } else { (b, a) };
            let Some(c) = paired(r, (later, MT), (sooner, MT), fifo_p50) else {
                continue;
            };
            pairs += 1;
            if c.verdict == Verdict::Above {
                kept += 1;
            }
            out.push(format!(
                "the write-up had {} later than {}; yours: {}",
                spoken(later),
                spoken(sooner),
                comparison_sentence(spoken(later), spoken(sooner), &c, Better::Lower)
            ));
        }
    }
    if out.is_empty() {
        return String::new();
    }
    out.push(format!(
        "so your run repeats the write-up's order in {kept} of these {pairs} pairs; the size \
         of its gaps is not compared, since it gives one figure per design and no spread"
    ));
    format!(
        "The write-up's order of its designs beside yours, each round's median (from the \
         start popped off the queue), by the book's rule:\n\n{}",
        harness::render::findings(out)
    )
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
        (Some(a), Some(b)) => Cell::join([fmt_ns(a).into(), fmt_ns(b).into()], " / "),
        _ => "–".into(),
    };
    for design in Design::ALL.into_iter().filter(|d| d.uses_queue()) {
        let share = per_run(r, design, fl, |x| {
            x.pairing
                .as_ref()
                .map(|p| p.mispaired as f64 / x.handled.max(1) as f64)
        });
        let Some(share) = share else { continue };
        t.row(cells![
            design.label(),
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
        let ratio = r
            .compare(
                &DesignKey::new(design, Flavour::MultiThread),
                &DesignKey::new(design, Flavour::CurrentThread),
            )
            .map_or_else(|| "–".into(), |c| ratio_cell(&c));
        t.row(cells![
            design.label(),
            fmt_opt_estimate(ct, Unit::Nanos),
            fmt_opt_estimate(mt, Unit::Nanos),
            ratio,
        ]);
    }
    Ok(t.to_markdown())
}

/// What each design costs on one runtime, per timeout started: the process's CPU time,
/// context switches and run-queue delay during a run, and the run's wall time.
fn cost_table(r: &Results<DesignsRound>, flavour: Flavour) -> anyhow::Result<String> {
    let mut t = Table::new([
        "design",
        "CPU per timeout",
        "switches per timeout",
        "run-queue delay per timeout",
        "wall per run",
    ]);
    for design in Design::ALL {
        let e = |f: fn(&DesignRun) -> Option<f64>| per_run(r, design, flavour, f);
        t.row(cells![
            design.label(),
            fmt_opt_estimate(e(cpu_per_timeout), Unit::Nanos),
            e(switches_per_timeout).map_or_else(|| "–".into(), |x| fmt_plain(&x)),
            fmt_opt_estimate(e(run_delay_per_timeout), Unit::Nanos),
            fmt_opt_estimate(e(|x| Some(x.wall_ns)), Unit::Nanos),
        ]);
    }
    Ok(t.to_markdown())
}

/// A plain number with its interval: `0.52 (0.40–0.61)`.
fn fmt_plain(e: &Estimate) -> Formatted {
    if e.lo == e.hi {
        return Formatted::plain(sig3(e.median));
    }
    Formatted::with_interval(sig3(e.median), format!("{}–{}", sig3(e.lo), sig3(e.hi)))
}

/// How often each design's waits happened, per run, medians over rounds, both runtimes:
/// the lock found taken, the channel's slot found full by a sender, the channel found
/// empty by the handler, and timer polls refused for want of cooperative budget.
fn waits_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "design",
        "lock found taken",
        "sender found slot full",
        "handler found channel empty",
        "budget refusals per timeout",
    ]);
    let cell = |design: Design, f: fn(&DesignRun) -> Option<f64>, pct: bool| {
        let one = |fl| {
            per_run(r, design, fl, f).map(|e| {
                if pct {
                    harness::render::fmt_percent(e.median)
                } else {
                    sig3(e.median)
                }
            })
        };
        match (one(MT), one(CT)) {
            (None, None) => "–".into(),
            (a, b) => Cell::join(
                [a, b].map(|x| Formatted::plain(x.unwrap_or_else(|| "–".into()))),
                " · ",
            ),
        }
    };
    for design in Design::ALL {
        t.row(cells![
            design.label(),
            cell(design, |x| waited(&x.waits.locks), true),
            cell(design, |x| waited(&x.waits.sends), true),
            cell(design, |x| waited(&x.waits.receives), true),
            cell(design, refusals_per_timeout, false),
        ]);
    }
    Ok(format!(
        "{}\nEach cell: multi-thread · current-thread runtime, the median over rounds of one \
         run's figure; – where the design has no such wait.\n",
        t.to_markdown()
    ))
}

/// Sentences that say *why*, each resting on a counter in the tables above.
fn why(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    use Design::*;
    let mut out = Vec::new();
    if let Some(t) = pooled_tally(r, StdMutexTask, MT, |w| w.locks) {
        out.push(format!(
            "Design 1's std mutex, with a task per timeout on the multi-thread runtime, was \
             found taken in {}, counting the pushes and the callbacks' pops together and \
             pooling every round (the waits table gives instead the median over rounds of \
             each run's share)",
            count_text(&t, "lockings")
        ));
    }
    let sw = |a: Arm, an: &str, b: Arm, bn: &str| {
        let c = value_cmp(r, (a, an), (b, bn), switches_per_timeout)?;
        Some(c.text.clone())
    };
    if let (Some(full), Some(empty)) = (
        pooled_tally(r, TokioMutexCap1, MT, |w| w.sends),
        pooled_tally(r, TokioMutexCap1, MT, |w| w.receives),
    ) {
        let mut s = format!(
            "Design 2's senders found its one slot full in {}, and its handler found the \
             channel empty in {}",
            count_text(&full, "sends"),
            count_text(&empty, "receives")
        );
        if let Some(c) = sw(
            (TokioMutexCap1, MT),
            "its switch count per timeout",
            (TokioMutexCapN, MT),
            "design 2′'s",
        ) {
            s.push_str(&format!("; {c}"));
        }
        out.push(s);
    }
    if let Some(c) = sw(
        (TokioMutexCap1, MT),
        "design 2's switch count per timeout on the multi-thread runtime",
        (TokioMutexCap1, CT),
        "on the current-thread one",
    ) {
        out.push(c);
    }
    for fl in [CT, MT] {
        let refused = |d: Design| per_run(r, d, fl, refusals_per_timeout);
        if let (Some(base), Some(off), Some(inline), Some(task)) = (
            refused(Baseline),
            refused(BaselineUnconstrained),
            refused(StdMutex),
            refused(StdMutexTask),
        ) {
            out.push(format!(
                "On the {} runtime tokio refused, for want of budget, {} polls per timeout of \
                 the baseline's timers, {} of design 1 inline's (all N timers in one task), {} \
                 of design 1's (a task per timer) and {} with the budget off",
                fl.label(),
                fmt_plain(&base),
                fmt_plain(&inline),
                fmt_plain(&task),
                fmt_plain(&off)
            ));
        }
    }
    for other in [Baseline, StdMutexTask] {
        let theirs = format!("{}'s", spoken(other));
        if let Some(c) = value_cmp(
            r,
            ((Fix, MT), "the fix's CPU time per timeout"),
            ((other, MT), &theirs),
            cpu_per_timeout,
        ) {
            out.push(c.text.clone());
        }
    }
    // Where the fix was later than design 1, our hypothesis for why, with the count that
    // bears on it.
    let fix = ((Fix, MT), "the fix");
    if let (Some(c), Some(parks)) = (
        late_cmp(r, fix, ((StdMutexTask, MT), "design 1")),
        pooled_tally(r, Fix, MT, |w| w.receives),
    ) && c.verdict == Verdict::Above
    {
        out.push(format!(
            "The fix was later than design 1; our hypothesis: every expiry funnels through \
             its one handler task, handled one after another, while design 1's callbacks run \
             in their own tasks on every worker thread. Its handler found the channel empty \
             in {}, so it was seldom waiting for work",
            count_text(&parks, "receives")
        ));
    }
    anyhow::ensure!(!out.is_empty(), "no design has counters to show");
    Ok(harness::render::findings(out))
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
/// words `comparison_sentence` appends; the harness could export this.)
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
        .flat_map(|&d| sizes.iter().map(move |&n| SweepKey::new(d, flavour, n)))
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
        format!(
            "timeouts started together, N (log scale; sizes run: {}; bars: {bars})",
            listed(
                &sizes
                    .iter()
                    .map(|&n| fmt_count(n as u64))
                    .collect::<Vec<_>>()
            )
        ),
        "median lateness (log scale)",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Nanos);
    for design in SWEPT {
        let points = sizes
            .iter()
            .filter_map(|&n| Some((n as f64, r.estimate(&SweepKey::new(design, flavour, n))?)))
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
                SweepKey::new(design, flavour, lo),
                SweepKey::new(design, flavour, hi),
            );
            t.row(cells![
                design.label(),
                flavour.label(),
                fmt_opt_estimate(r.estimate(&a), Unit::Nanos),
                fmt_opt_estimate(r.estimate(&b), Unit::Nanos),
                r.ratio(&b, &a)
                    .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e)),
            ]);
        }
    }
    let named: Vec<String> = sizes.iter().map(|&n| fmt_count(n as u64)).collect();
    let shape = if sizes.len() <= 2 {
        "; with only these sizes, each line in the plots joins two points and says nothing \
         of the shape between them"
    } else {
        ""
    };
    Ok(format!(
        "{}\nThis run's sizes: N = {}{shape}.\n",
        t.to_markdown(),
        listed(&named)
    ))
}

/// A list of design names for a sentence: `a, b and c`.
fn listed(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Sentences decided by the verdict rule: whose median lateness grew more with N than
/// the baseline's (per-round ratios of the largest N to N = 1), and how the write-up's
/// designs and the fix compare with the baseline at the largest N.
fn sweep_findings(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let sizes = sweep_sizes(r);
    let (Some(&lo), Some(&hi)) = (sizes.first(), sizes.last()) else {
        anyhow::bail!("the sweep has no sizes");
    };
    let (lo_s, hi_s) = (fmt_count(lo as u64), fmt_count(hi as u64));
    let growth =
        |d: Design, fl: Flavour| r.ratio(&SweepKey::new(d, fl, hi), &SweepKey::new(d, fl, lo));
    // One round's growth of a design: its reading at the largest N over that at the
    // smallest, so that two designs' growths are judged on their pairs.
    let grew = |d: Design, fl: Flavour| {
        move |round: &SweepRound| {
            let at = |n: usize| {
                round
                    .runs
                    .iter()
                    .find(|x| x.design == d && x.flavour == fl && x.n == n)?
                    .reading()
            };
            Some(at(hi)? / at(lo)?)
        }
    };
    let reference = Design::Baseline;
    let mut out = Vec::new();
    for flavour in Flavour::ALL {
        let fl = flavour.label();
        if let Some(base) = growth(reference, flavour) {
            let mut s = format!(
                "{fl} runtime, from N = {lo_s} to N = {hi_s}: the baseline's median lateness \
                 grew {}",
                fmt_ratio_estimate(&base)
            );
            let mut undecided = Vec::new();
            for design in SWEPT.into_iter().filter(|d| *d != reference) {
                let Some(c) = r.compare_of(grew(design, flavour), grew(reference, flavour)) else {
                    continue;
                };
                if c.is_clear() {
                    s.push_str(&format!(
                        "; {}",
                        comparison_sentence(
                            &format!("{}'s growth", spoken(design)),
                            "the baseline's",
                            &c,
                            Better::Higher
                        )
                    ));
                } else {
                    undecided.push((format!("{} and the baseline", spoken(design)), c));
                }
            }
            for u in undecided_lists(&undecided) {
                s.push_str(&format!("; {} (growth)", u));
            }
            out.push(s);
            // The two causes the page's hypothesis names, tested on this runtime: the
            // budget (its ablation) and neither (the fix, which has no single slot and
            // no one task holding every timer).
            if let Some(c) = r.compare_of(
                grew(reference, flavour),
                grew(Design::BaselineUnconstrained, flavour),
            ) {
                let so = if c.verdict == Verdict::Above {
                    "so there the budget accounts for part of its growth"
                } else {
                    "so nothing here ties the baseline's growth there to the budget"
                };
                out.push(format!(
                    "{fl} runtime: {}; {so}",
                    comparison_sentence(
                        "the baseline's growth",
                        "the growth of the same baseline with the budget off",
                        &c,
                        Better::Higher
                    )
                ));
            }
            if let Some(c) = r.compare_of(grew(Design::Fix, flavour), grew(reference, flavour))
                && c.verdict == Verdict::Above
            {
                out.push(format!(
                    "{fl} runtime: {}, so neither a single slot nor timers in one task (the \
                     fix has neither) explains its growth (our hypothesis, not measured here: \
                     its one handler task receives every expiry in turn)",
                    comparison_sentence("the fix's growth", "the baseline's", &c, Better::Higher)
                ));
            }
        }
        // Each design against the reference; then the pair the answer at the top compares
        // at the chapter's N (the fix and design 1), here at the largest size, and the
        // baseline with and without the budget.
        let pairs = [
            Design::StdMutexTask,
            Design::TokioMutexCap1,
            Design::TwoRuntimes,
            Design::Fix,
        ]
        .map(|d| (d, reference))
        .into_iter()
        .chain([
            (Design::Fix, Design::StdMutexTask),
            (Design::Baseline, Design::BaselineUnconstrained),
        ]);
        for (x, y) in pairs {
            let (a, b) = (SweepKey::new(x, flavour, hi), SweepKey::new(y, flavour, hi));
            if let Some(c) = r.compare(&a, &b) {
                out.push(format!(
                    "{fl} runtime, N = {hi_s}: {}",
                    comparison_sentence(spoken(x), spoken(y), &c, Better::Lower)
                ));
            }
        }
    }
    anyhow::ensure!(!out.is_empty(), "no design has a result to compare");
    Ok(harness::render::findings(out))
}

/// The hazards: per arm and runtime, how many rounds stalled (left behind at their
/// bound, every thread blocked), how far the stalled ones got, and the median lateness
/// of the rounds that finished; then the long section against its control.
fn hazards_table(r: &Results<HazardsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "arm",
        "runtime",
        "stalled rounds",
        "handled by the bound (stalled rounds)",
        "median lateness (finished rounds)",
        "lock found taken",
    ]);
    let rounds = r.data().count();
    for fl in Flavour::ALL {
        for h in Hazard::ALL {
            let runs: Vec<_> = r.data().filter_map(|d| d.find(h, fl)).collect();
            if runs.is_empty() {
                continue;
            }
            let stalled: Vec<_> = runs.iter().filter(|x| x.stalled).collect();
            let got = if stalled.is_empty() {
                "–".to_string()
            } else {
                let mut v: Vec<u64> = stalled.iter().map(|x| x.handled).collect();
                v.sort_unstable();
                format!(
                    "{} to {} of {}",
                    fmt_count(v[0]),
                    fmt_count(v[v.len() - 1]),
                    fmt_count(stalled[0].n as u64)
                )
            };
            let calls: u64 = runs.iter().map(|x| x.locks.calls).sum();
            let waited: u64 = runs.iter().map(|x| x.locks.waited).sum();
            t.row(cells![
                h.label(),
                fl.label(),
                format!("{} of {}", stalled.len(), runs.len()),
                got,
                fmt_opt_estimate(r.estimate(&HazardKey::new(h, fl)), Unit::Nanos),
                if calls == 0 {
                    "–".into()
                } else {
                    count_text(
                        &Tallied {
                            calls,
                            waited,
                            refused: 0,
                        },
                        "lockings",
                    )
                },
            ]);
        }
    }
    anyhow::ensure!(!t.is_empty(), "no hazard ran");
    let first = r.data().next();
    let n = first.and_then(|d| d.runs.first()).map_or(0, |x| x.n as u64);
    let work = first.map_or(0, |d| d.work_us);
    let bound = first
        .and_then(|d| d.runs.first())
        .map_or(0.0, |x| x.bound_ns);
    let mut out = Vec::new();
    for fl in Flavour::ALL {
        let (a, b) = (
            HazardKey::new(Hazard::LongUnderLock, fl),
            HazardKey::new(Hazard::LongNoLock, fl),
        );
        if let Some(c) = r.compare(&a, &b) {
            out.push(format!(
                "{} runtime, {} µs of work in each callback: {}",
                fl.label(),
                fmt_count(work),
                comparison_sentence(
                    "with the work under the std mutex, lateness",
                    "with the same work unlocked",
                    &c,
                    Better::Lower
                )
            ));
        }
    }
    Ok(format!(
        "{}\nEach run: {} timeouts of 20 ms, design 1's task per timeout, on a fresh runtime \
         in a thread of its own, {rounds} round(s). A run still going at its bound ({}: the \
         20 ms, every callback's work one after another, and a slack) is *stalled*: it is \
         left behind, its threads blocked, and has no lateness. *Lock found taken*: over \
         every round, lockings whose `try_lock` failed, so the thread blocked in `lock`.\n\n{}",
        t.to_markdown(),
        fmt_count(n),
        fmt_ns(bound),
        harness::render::findings(out)
    ))
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
    t.row(cells![
        fmt_count(s.n),
        fmt_opt_estimate(r.estimate(&UnitKey::FiredAfter), Unit::Nanos),
        fmt_ns(s.min),
        fmt_ns(s.max),
        Cell::join([inside, early, late].map(|x| x.to_string().into()), " / "),
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
