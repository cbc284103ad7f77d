//! How the chapter's results are shown: Markdown tables, sentences decided by the
//! intervals, and SVG plots. Every figure is a median over rounds with its 95 %
//! interval; distributions and extremes pool every sample of every round.

use crate::Pacer;
use crate::experiments::{
    Measure, NAIVE, NaiveRound, OMISSION, OmissionRound, RATES, RateRun, RatesRound, STALL_AT,
    STALL_RATE, SWEEP, SWEEP_MS, SweepRound, WITH_SEND, WRITEUP_RATE, naive_key, rate_key,
    stall_key, sweep_key,
};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::{RefMachine, Source, attribution};
use harness::render::capitalise;
use harness::render::{
    Better, Table, Tails, compare_sentence, fmt_count, fmt_estimate, fmt_range, sig3,
};
use harness::{Dist, Estimate, Results, Unit, View};
use serde::Deserialize;

pub static NAIVE_TABLE: View<NaiveRound> = View::table("naive", &NAIVE, naive_table);
pub static SWEEP_TABLE: View<SweepRound> = View::table("sweep", &SWEEP, sweep_table);
pub static SWEEP_REFERENCE: View<SweepRound> =
    View::table("sweep-reference", &SWEEP, sweep_reference).brief();
pub static ACHIEVED: View<RatesRound> = View::table("achieved", &RATES, achieved_table);
pub static ACHIEVED_PLOT: View<RatesRound> = View::plot("achieved", &RATES, achieved_plot).brief();
pub static FINDINGS: View<RatesRound> = View::table("findings", &RATES, findings).brief();
pub static STALL: View<RatesRound> = View::table("stall", &RATES, stall_table).brief();
pub static JITTER_1K: View<RatesRound> =
    View::table("jitter-1k", &RATES, |r| jitter_table(r, 1_000.0)).brief();
pub static JITTER_10K: View<RatesRound> =
    View::table("jitter-10k", &RATES, |r| jitter_table(r, 10_000.0)).brief();
pub static CPU: View<RatesRound> = View::table("cpu", &RATES, cpu_table).brief();
pub static GAPS_1K: View<RatesRound> =
    View::plot("gaps-1k", &RATES, |r| gaps_plot(r, 1_000.0)).brief();
pub static GAPS_10K: View<RatesRound> =
    View::plot("gaps-10k", &RATES, |r| gaps_plot(r, 10_000.0)).brief();
pub static OMISSION_TABLE: View<OmissionRound> = View::table("omission", &OMISSION, omission_table);
pub static OMISSION_PLOT: View<OmissionRound> =
    View::plot("omission", &OMISSION, omission_plot).brief();

// ------------------------------------------------------- the write-up's numbers

#[derive(Debug, Deserialize)]
struct RefRow {
    #[serde(default)]
    requested_ms: u64,
    #[serde(default)]
    with_send: bool,
    mean_ms: f64,
    error_ms: f64,
    stddev_ms: f64,
}

#[derive(Debug, Deserialize)]
struct Reference {
    source: Source,
    machines: Vec<RefMachine>,
    naive: Vec<RefRow>,
    sweep: Vec<RefRow>,
}

fn reference() -> anyhow::Result<Reference> {
    harness::reference::parse(include_str!("../../../assets/reference/throttles.toml"))
}

impl Reference {
    fn attribution(&self) -> String {
        let machines: Vec<&RefMachine> = self.machines.iter().collect();
        attribution(&self.source, &machines)
    }
}

/// A published Mean, with the three decimals the write-up printed.
fn mean_ms(v: f64) -> String {
    format!("{v:.3} ms")
}

/// A published Error or StdDev, with the four decimals the write-up printed.
fn spread_ms(v: f64) -> String {
    format!("{v:.4}")
}

fn per_s(rate: f64) -> String {
    format!("{}/s", fmt_count(rate as u64))
}

// ------------------------------------------------------------------ the naive loop

/// The write-up's benchmark on your machine, beside its published Mean.
fn naive_table(r: &Results<NaiveRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new(["loop", "time per op", "rate", "write-up: Mean ± Error"]);
    let mut ours = Vec::new();
    for with_send in WITH_SEND {
        let Some(e) = r.estimate(naive_key(with_send)) else {
            continue;
        };
        let theirs = refs.naive.iter().find(|x| x.with_send == with_send);
        if let Some(x) = theirs {
            ours.push(format!(
                "{} for *{}*",
                Unit::OpsPerSec.format(1e3 / x.mean_ms),
                naive_key(with_send)
            ));
        }
        t.row([
            naive_key(with_send).to_string(),
            fmt_estimate(&e, Unit::Nanos),
            fmt_estimate(&e.inverse().scaled(1e9), Unit::OpsPerSec),
            theirs.map_or("–".into(), |x| {
                format!("{:.3} ± {} ms", x.mean_ms, spread_ms(x.error_ms))
            }),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "the loop recorded no iterations");
    let sent: u64 = r.data().map(|d| d.datagrams_sent).sum();
    let received: u64 = r.data().map(|d| d.datagrams_received).sum();
    Ok(format!(
        "{}\n*Time per op*: each round times one iteration of {} operations per loop, as \
         BenchmarkDotNet times iterations, and divides; the figure is the median over rounds \
         with its 95 % interval, and *rate* is one second divided by it. The write-up's Mean \
         and Error are as published; one second divided by its Mean, our arithmetic, gives \
         {}. Datagrams sent: {}, received by the sink: {}.\n\n{}\n",
        t.to_markdown(),
        r.param("ops").map_or("–".into(), |v| fmt_count(v as u64)),
        ours.join(" and "),
        fmt_count(sent),
        fmt_count(received),
        refs.attribution()
    ))
}

// ----------------------------------------------------------------- the sleep sweep

/// All rounds' sleeps of one length, pooled.
fn pooled_sleeps(r: &Results<SweepRound>, ms: u64) -> Dist {
    let mut d = Dist::new();
    for round in r.data() {
        if let Some(l) = round.find(ms) {
            d.merge(&l.actual);
        }
    }
    d
}

fn sweep_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let dists: Vec<Dist> = SWEEP_MS.iter().map(|&ms| pooled_sleeps(r, ms)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len));
    let mut headers = vec!["requested", "actual sleep", "late by", "sleeps"];
    if tails.p99 {
        headers.push("p99");
    }
    headers.push("max");
    let mut t = Table::new(headers);
    for (&ms, d) in SWEEP_MS.iter().zip(&dists) {
        let (Some(late), Some(s)) = (r.estimate(&sweep_key(ms)), d.summary()) else {
            continue;
        };
        let actual = r.estimate_of(|x| x.find(ms)?.median_ns);
        let mut row = vec![
            format!("{ms} ms"),
            actual.map_or("–".into(), |e| fmt_estimate(&e, Unit::Nanos)),
            fmt_estimate(&late, Unit::Nanos),
            fmt_count(s.n),
        ];
        if tails.p99 {
            row.push(s.p99.map_or("–".into(), |v| Unit::Nanos.format(v)));
        }
        row.push(Unit::Nanos.format(s.max));
        t.row(row);
    }
    anyhow::ensure!(!t.is_empty(), "the sweep recorded no sleeps");
    Ok(format!(
        "{}\n*Actual sleep* and *late by* (actual minus requested): the median over rounds of \
         each round's median sleep of that length, with its 95 % interval. *Sleeps* and *max* \
         pool every sleep of every round{}.\n",
        t.to_markdown(),
        if tails.p99 {
            ""
        } else {
            " (a p99 column appears from 1,000 sleeps per length)"
        }
    ))
}

/// The write-up's sweep as published, beside your lateness.
fn sweep_reference(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new([
        "DelayMS",
        "write-up: Mean",
        "Error / StdDev",
        "Mean − DelayMS (ours)",
        "yours: late by",
    ]);
    for row in &refs.sweep {
        let ms_ = row.requested_ms;
        t.row([
            ms_.to_string(),
            mean_ms(row.mean_ms),
            format!(
                "{} / {} ms",
                spread_ms(row.error_ms),
                spread_ms(row.stddev_ms)
            ),
            Unit::Nanos.format((row.mean_ms - ms_ as f64) * 1e6),
            r.estimate(&sweep_key(ms_))
                .map_or("–".into(), |e| fmt_estimate(&e, Unit::Nanos)),
        ]);
    }
    Ok(format!(
        "{}\nMean, Error and StdDev as the write-up published them (BenchmarkDotNet's columns, \
         with the send commented out); Mean − DelayMS is our subtraction. *Yours* is the \
         median lateness from the table above.\n\n{}\n",
        t.to_markdown(),
        refs.attribution()
    ))
}

// ------------------------------------------------------ every throttle, every rate

/// The target rates the result was measured at.
fn targets(r: &Results<RatesRound>) -> Vec<f64> {
    r.data()
        .next()
        .map(|d| d.targets.clone())
        .unwrap_or_default()
}

fn any_capped(r: &Results<RatesRound>, pacer: Pacer, target: f64) -> bool {
    r.data()
        .filter_map(|d| d.find(pacer, target))
        .any(|x| x.capped())
}

/// Achieved rate as a percentage of the target, per throttle and target.
fn achieved_table(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let targets = targets(r);
    anyhow::ensure!(!targets.is_empty(), "no throttle ran");
    let mut headers = vec!["throttle".to_string()];
    headers.extend(targets.iter().map(|&t| per_s(t)));
    let mut t = Table::new(headers);
    let mut dagger = false;
    for pacer in Pacer::ALL {
        let mut row = vec![pacer.label().to_string()];
        for &target in &targets {
            row.push(match r.estimate(&rate_key(pacer, target)) {
                Some(e) => {
                    let capped = any_capped(r, pacer, target);
                    dagger |= capped;
                    format!(
                        "{}{}",
                        fmt_estimate(&e.scaled(100.0 / target), Unit::Number),
                        if capped { " †" } else { "" }
                    )
                }
                None => "–".into(),
            });
        }
        t.row(row);
    }
    let ms = |name: &str| fmt_count(r.param(name).unwrap_or(0.0) as u64);
    let at_1k = if targets.contains(&WRITEUP_RATE) && ms("run_ms_1k") != ms("run_ms") {
        format!(" ({} ms at {})", ms("run_ms_1k"), per_s(WRITEUP_RATE))
    } else {
        String::new()
    };
    Ok(format!(
        "{}\nAchieved rate in **% of the target**: the median over rounds of each run's rate \
         (operations from the first start to the last, over that time), with its 95 % \
         interval. Each run asked for the operations of {} ms at its target{at_1k}, at least \
         {}.{}\n",
        t.to_markdown(),
        ms("run_ms"),
        ms("min_ops"),
        if dagger {
            " † In some rounds this run fell so far behind that it was stopped at twice its \
             planned time; its rate is counted over the operations that ran."
        } else {
            ""
        }
    ))
}

fn achieved_plot(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let targets = targets(r);
    let mut plot = Plot::new(
        "Achieved rate against the target rate",
        "target rate (ops/s, log scale; bars: 95 % intervals over rounds)",
        "achieved rate (ops/s, log scale)",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Number)
    .series(Series::new("target", targets.iter().map(|&t| (t, t)).collect()).line_only());
    for pacer in Pacer::ALL {
        let points = targets
            .iter()
            .filter_map(|&t| Some((t, r.estimate(&rate_key(pacer, t))?)))
            .filter(|(_, e)| e.lo > 0.0)
            .collect();
        plot = plot.series(Series::estimates(pacer.label(), points));
    }
    plot.to_svg()
}

/// `52.1 % (50.3–53.9)`: an estimate of a fraction, as a percentage.
fn pct(e: &Estimate) -> String {
    let s = e.scaled(100.0);
    let coverage = if s.at_stated_confidence() {
        String::new()
    } else {
        format!(", a {:.0} % interval", s.confidence * 100.0)
    };
    format!(
        "{} % ({}–{}{coverage})",
        sig3(s.median),
        sig3(s.lo),
        sig3(s.hi)
    )
}

/// What each throttle reached, and comparisons decided by the intervals alone.
fn findings(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let share = |p: Pacer, t: f64| r.estimate(&rate_key(p, t)).map(|e| e.scaled(1.0 / t));
    let compare = |a: (Pacer, &str), b: (Pacer, &str), t: f64| -> Option<String> {
        let (ka, kb) = (rate_key(a.0, t), rate_key(b.0, t));
        let (ea, eb) = (r.estimate(&ka)?, r.estimate(&kb)?);
        Some(compare_sentence(
            (a.1, &ea),
            (b.1, &eb),
            r.ratio(&ka, &kb).as_ref(),
            Better::Higher,
        ))
    };
    let reached = |t: f64, names: &[(Pacer, &str)]| -> Option<String> {
        let parts: Vec<String> = names
            .iter()
            .filter_map(|&(p, n)| Some(format!("{n} {}", pct(&share(p, t)?))))
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    };
    for t in targets(r) {
        let Some(reach) = reached(
            t,
            &[
                (Pacer::Naive, "the naive loop"),
                (Pacer::DebtAsPublished, "the debt loop as published"),
                (Pacer::Compensating, "the compensating loop"),
                (Pacer::Deadline, "the deadline throttle"),
            ],
        ) else {
            continue;
        };
        let deadline = (Pacer::Deadline, "the deadline throttle's rate");
        let comparisons: Vec<String> = [
            compare(deadline, (Pacer::Naive, "the naive loop's"), t),
            compare(
                (Pacer::Compensating, "the compensating loop's rate"),
                (Pacer::Naive, "the naive loop's"),
                t,
            ),
            compare(
                deadline,
                (Pacer::Compensating, "the compensating loop's"),
                t,
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        out.push(format!(
            "**{}**: {reach} of the target. {}.",
            per_s(t),
            capitalise(&comparisons.join("; "))
        ));
    }
    for t in targets(r) {
        let Some(reach) = reached(
            t,
            &[
                (Pacer::TokioBurst, "Burst"),
                (Pacer::TokioDelay, "Delay"),
                (Pacer::TokioSkip, "Skip"),
            ],
        ) else {
            continue;
        };
        let comparisons: Vec<String> = TOKIO_COMPARISONS
            .iter()
            .filter_map(|&(a, b)| compare(a, b, t))
            .collect();
        out.push(format!(
            "**tokio `interval` at {}**: {reach} of the target. {}.",
            per_s(t),
            capitalise(&comparisons.join("; "))
        ));
    }
    if let Some(s) = stall_findings(r) {
        out.push(s);
    }
    anyhow::ensure!(!out.is_empty(), "no throttle has a result to compare");
    Ok(out.iter().map(|s| format!("- {s}\n")).collect())
}

/// A throttle and how a finding names it.
type Named = (Pacer, &'static str);

/// The pairs the findings compare, with or without a stall: each of tokio's
/// `MissedTickBehavior`s, and Burst against the deadline throttle.
const TOKIO_COMPARISONS: [(Named, Named); 3] = [
    (
        (Pacer::TokioBurst, "Burst's rate"),
        (Pacer::TokioDelay, "Delay's"),
    ),
    (
        (Pacer::TokioSkip, "Skip's rate"),
        (Pacer::TokioDelay, "Delay's"),
    ),
    (
        (Pacer::TokioBurst, "Burst's rate"),
        (Pacer::Deadline, "the deadline throttle's"),
    ),
];

/// The stall runs: what each tokio behaviour, and the bounded catch-up, did with one
/// stalled operation.
fn stall_findings(r: &Results<RatesRound>) -> Option<String> {
    let hiccup = r.param("hiccup_ms")?;
    let share = |p: Pacer| {
        r.estimate(&stall_key(p))
            .map(|e| e.scaled(1.0 / STALL_RATE))
    };
    let compare = |a: (Pacer, &str), b: (Pacer, &str)| -> Option<String> {
        let (ka, kb) = (stall_key(a.0), stall_key(b.0));
        let (ea, eb) = (r.estimate(&ka)?, r.estimate(&kb)?);
        Some(compare_sentence(
            (a.1, &ea),
            (b.1, &eb),
            r.ratio(&ka, &kb).as_ref(),
            Better::Higher,
        ))
    };
    let reach: Vec<String> = [
        (Pacer::TokioBurst, "Burst"),
        (Pacer::TokioDelay, "Delay"),
        (Pacer::TokioSkip, "Skip"),
        (Pacer::Deadline, "the deadline throttle"),
    ]
    .iter()
    .filter_map(|&(p, n)| Some(format!("{n} {}", pct(&share(p)?))))
    .collect();
    if reach.is_empty() {
        return None;
    }
    let comparisons: Vec<String> = TOKIO_COMPARISONS
        .iter()
        .filter_map(|&(a, b)| compare(a, b))
        .collect();
    Some(format!(
        "**With one {} ms stall at {}**: over the run, {} of the target. {}.",
        fmt_count(hiccup as u64),
        per_s(STALL_RATE),
        reach.join(", "),
        capitalise(&comparisons.join("; "))
    ))
}

/// Every throttle's stall run: its rate over the run, how far behind its schedule it
/// ended, and the burst it sent to catch up.
fn stall_table(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "throttle",
        "rate, % of target",
        "behind at the end",
        "back to back after",
    ]);
    for pacer in Pacer::ALL {
        let Some(e) = r.estimate(&stall_key(pacer)) else {
            continue;
        };
        let per_run =
            |f: fn(&RateRun) -> Option<f64>| r.estimate_of(|d| d.stall(pacer).and_then(f));
        t.row([
            pacer.label().to_string(),
            fmt_estimate(&e.scaled(100.0 / STALL_RATE), Unit::Number),
            per_run(|x| Some(x.drift_ns)).map_or("–".into(), |e| fmt_estimate(&e, Unit::Nanos)),
            per_run(|x| Some(x.stall.as_ref()?.burst as f64))
                .map_or("–".into(), |e| fmt_estimate(&e, Unit::Number)),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no stall run finished");
    let first = r.data().find_map(|d| d.stalls.first());
    Ok(format!(
        "{}\nEach throttle at {}, {} operations per run; operation {STALL_AT} takes {} ms \
         longer than the others, once. *Rate*: over the whole run, stall included. *Behind \
         at the end*: how much later than its schedule (set by its first operation) the \
         last operation started. *Back to back after*: operations that started less than \
         half a period after the one before, right after the stall (the catch-up burst). \
         Medians over rounds, with 95 % intervals.\n",
        t.to_markdown(),
        per_s(STALL_RATE),
        first.map_or("–".into(), |x| fmt_count(x.asked)),
        first
            .and_then(|x| x.stall.as_ref())
            .map_or("–".into(), |s| fmt_count(s.hiccup_ms)),
    ))
}

/// All rounds' gaps of one throttle at one target, pooled.
fn pooled_gaps(r: &Results<RatesRound>, pacer: Pacer, target: f64) -> Dist {
    let mut d = Dist::new();
    for round in r.data() {
        if let Some(x) = round.find(pacer, target) {
            d.merge(&x.gaps);
        }
    }
    d
}

/// How evenly each throttle spreads its operations at one target rate.
fn jitter_table(r: &Results<RatesRound>, target: f64) -> anyhow::Result<String> {
    anyhow::ensure!(
        targets(r).contains(&target),
        "this result has no runs at {} (see rates_from and rates_to)",
        per_s(target)
    );
    let mut t = Table::new([
        "throttle",
        "median gap",
        "shortest–longest",
        "drift at the end",
    ]);
    let mut gaps = u64::MAX;
    for pacer in Pacer::ALL {
        let per_run =
            |f: fn(&RateRun) -> Option<f64>| r.estimate_of(|d| d.find(pacer, target).and_then(f));
        let d = pooled_gaps(r, pacer, target);
        gaps = gaps.min(d.len());
        let Some(s) = d.summary() else { continue };
        t.row([
            pacer.label().to_string(),
            per_run(|x| x.gap_p50_ns).map_or("–".into(), |e| fmt_estimate(&e, Unit::Nanos)),
            fmt_range(s.min, s.max, Unit::Nanos),
            per_run(|x| Some(x.drift_ns)).map_or("–".into(), |e| fmt_estimate(&e, Unit::Nanos)),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no throttle ran at {}", per_s(target));
    Ok(format!(
        "{}\nThe ideal gap is {}. *Median gap* and *drift*: medians over rounds of each run's \
         value, with 95 % intervals. *Drift*: how much later than its schedule (set by its \
         first operation) the last operation started; negative is early. \
         *Shortest–longest*: over every gap of every round (at least {} per throttle).\n",
        t.to_markdown(),
        Unit::Nanos.format(1e9 / target),
        fmt_count(gaps)
    ))
}

/// The pacing thread's CPU time as a share of one core, per throttle and target.
fn cpu_table(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let targets = targets(r);
    anyhow::ensure!(!targets.is_empty(), "no throttle ran");
    let mut headers = vec!["throttle".to_string()];
    headers.extend(targets.iter().map(|&t| per_s(t)));
    let mut t = Table::new(headers);
    let mut any = false;
    for pacer in Pacer::ALL {
        let mut row = vec![pacer.label().to_string()];
        for &target in &targets {
            let e = r.estimate_of(|d| Some(d.find(pacer, target)?.cpu_share()? * 100.0));
            any |= e.is_some();
            row.push(e.map_or("–".into(), |e| fmt_estimate(&e, Unit::Number)));
        }
        t.row(row);
    }
    if !any {
        return Ok(
            "This OS has no per-thread CPU clock that the chapter reads, so there is \
                   no CPU time to show.\n"
                .into(),
        );
    }
    Ok(format!(
        "{}\nCPU time of the pacing thread (sends included) over the run's wall time, in **% \
         of one core**: the median over rounds of each run's share, with its 95 % interval.\n",
        t.to_markdown()
    ))
}

fn gaps_plot(r: &Results<RatesRound>, target: f64) -> anyhow::Result<String> {
    anyhow::ensure!(
        targets(r).contains(&target),
        "this result has no runs at {} (see rates_from and rates_to)",
        per_s(target)
    );
    let pooled: Vec<(Pacer, Dist)> = Pacer::ALL
        .iter()
        .map(|&p| (p, pooled_gaps(r, p, target)))
        .collect();
    dist_cdf(
        &format!(
            "Time between successive operations at a target of {} (every gap of every round)",
            per_s(target)
        ),
        "gap between successive starts (log scale)",
        pooled.iter().map(|(p, d)| (p.label().to_string(), d)),
    )
    .to_svg()
}

// ------------------------------------------------------------ coordinated omission

fn pooled_latency(r: &Results<OmissionRound>, m: Measure) -> Dist {
    let mut d = Dist::new();
    for round in r.data() {
        if let Some(x) = round.find(m) {
            d.merge(&x.latency);
        }
    }
    d
}

fn omission_table(r: &Results<OmissionRound>) -> anyhow::Result<String> {
    let dists: Vec<Dist> = Measure::ALL.iter().map(|&m| pooled_latency(r, m)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len));
    let mut headers = vec!["latency measured", "p90", "n"];
    if tails.p99 {
        headers.push("p99");
    }
    if tails.p999 {
        headers.push("p99.9");
    }
    headers.push("max");
    let mut t = Table::new(headers);
    for (&m, d) in Measure::ALL.iter().zip(&dists) {
        let (Some(e), Some(s)) = (r.estimate(&m.key()), d.summary()) else {
            continue;
        };
        let mut row = vec![
            m.label().to_string(),
            fmt_estimate(&e, Unit::Nanos),
            fmt_count(s.n),
        ];
        let tail = |v: Option<f64>| v.map_or("–".into(), |v| Unit::Nanos.format(v));
        if tails.p99 {
            row.push(tail(s.p99));
        }
        if tails.p999 {
            row.push(tail(s.p999));
        }
        row.push(Unit::Nanos.format(s.max));
        t.row(row);
    }
    anyhow::ensure!(!t.is_empty(), "no request was answered");
    let first = r.data().next().expect("a round, since the table has rows");
    let sum = |f: fn(&OmissionRound) -> u64| -> u64 { r.data().map(f).sum() };
    Ok(format!(
        "{}\nEach round: {} requests at {} to a UDP echo server on loopback that pauses {} ms \
         before answering one request in every {}. *p90*: the median over rounds of each \
         round's 90th percentile, with its 95 % interval; {}*max* pool every sample of every \
         round: {} per row, {} in the record_correct row, which adds the samples the \
         correction infers. Over all rounds: {} requests sent, {} answered, {} lost, {} late \
         answers skipped, {} pauses.\n\n{}",
        t.to_markdown(),
        fmt_count(first.sent),
        per_s(first.rate),
        first.stall_ms,
        fmt_count(first.stall_every),
        if tails.p99 { "the tails and " } else { "" },
        fmt_count(dists[0].len()),
        fmt_count(dists[1].len()),
        fmt_count(sum(|d| d.sent)),
        fmt_count(sum(|d| d.answered)),
        fmt_count(sum(|d| d.lost)),
        fmt_count(sum(|d| d.late)),
        fmt_count(sum(|d| d.pauses)),
        omission_findings(r),
    ))
}

/// What the p90s of the three rows say, decided by their intervals alone.
fn omission_findings(r: &Results<OmissionRound>) -> String {
    let compare = |a: (Measure, &str), b: (Measure, &str)| -> Option<String> {
        let (ka, kb) = (a.0.key(), b.0.key());
        let (ea, eb) = (r.estimate(&ka)?, r.estimate(&kb)?);
        Some(compare_sentence(
            (a.1, &ea),
            (b.1, &eb),
            r.ratio(&ka, &kb).as_ref(),
            Better::Higher,
        ))
    };
    let sentences: Vec<String> = [
        compare(
            (Measure::FromIntent, "the p90 from the intended send"),
            (Measure::FromSend, "the p90 from the actual send"),
        )
        .map(|s| format!("What coordinated omission hides: {s}.")),
        compare(
            (Measure::Corrected, "the record_correct row's p90"),
            (Measure::FromIntent, "the intended-send row's"),
        )
        .map(|s| format!("How near the correction comes: {s}.")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if sentences.is_empty() {
        return String::new();
    }
    format!("{}\n", sentences.join(" "))
}

fn omission_plot(r: &Results<OmissionRound>) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        "Latency by percentile: three ways of measuring the same requests",
        "1 in N requests is slower (log scale: 10 = p90, 100 = p99)",
        "latency (log scale)",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Nanos);
    for m in Measure::ALL {
        let d = pooled_latency(r, m);
        let points = d
            .curve(200)
            .into_iter()
            .filter(|(q, _)| *q < 1.0)
            .map(|(q, v)| (1.0 / (1.0 - q), v.max(1.0)))
            .collect();
        plot = plot.series(Series::new(m.label(), points).line_only());
    }
    plot.to_svg()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_data_parses_with_every_published_row() {
        let r = reference().unwrap();
        assert_eq!(r.naive.len(), 2);
        assert_eq!(r.sweep.len(), SWEEP_MS.len());
        assert!(r.sweep.iter().map(|x| x.requested_ms).eq(SWEEP_MS));
        assert_eq!(mean_ms(1.99), "1.990 ms");
        assert_eq!(spread_ms(0.007), "0.0070");
    }

    #[test]
    fn percentages_and_sentences_read_well() {
        let e = Estimate::of(&[0.5, 0.52, 0.51, 0.49, 0.5, 0.53]).unwrap();
        assert_eq!(pct(&e), "50.5 % (49.0–53.0)");
    }
}
