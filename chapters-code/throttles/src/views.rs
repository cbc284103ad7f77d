//! The chapter's tables and plots, rendered from the stored results.

use crate::experiments::{NaiveData, OmissionData, RateRun, RatesData, SweepData, TARGET_RATES};
use crate::pacers::Pacer;
use harness::Record;
use harness::plot::{Axis, Plot, Series, Unit};
use harness::reference::{RefMachine, Source, attribution};
use harness::render::{Table, fmt_count, fmt_ns, fmt_ratio, latency_cells, latency_headers, sig3};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct RefRow {
    #[serde(default)]
    pub requested_ms: u64,
    #[serde(default)]
    pub with_send: bool,
    pub mean_ms: f64,
    pub error_ms: f64,
    pub stddev_ms: f64,
}

#[derive(Debug, Deserialize)]
pub struct Reference {
    pub source: Source,
    pub machines: Vec<RefMachine>,
    pub naive: Vec<RefRow>,
    pub sweep: Vec<RefRow>,
}

pub fn reference() -> anyhow::Result<Reference> {
    harness::reference::parse(include_str!("../../../assets/reference/throttles.toml"))
}

fn credit(r: &Reference) -> String {
    let machines: Vec<&RefMachine> = r.machines.iter().collect();
    format!("\n{}\n", attribution(&r.source, &machines))
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn fmt_ms(v: f64) -> String {
    format!("{v:.3} ms")
}

fn rate(v: f64) -> String {
    if v >= 100.0 {
        format!("{}/s", fmt_count(v.round() as u64))
    } else {
        format!("{}/s", sig3(v))
    }
}

pub fn sweep_table(record: &Record) -> anyhow::Result<String> {
    let data: SweepData = record.data()?;
    let r = reference()?;
    let mut t = Table::new([
        "DelayMS",
        "Mean",
        "Error",
        "StdDev",
        "late by",
        "p99",
        "write-up Mean (Windows)",
        "write-up late by",
        "yours ÷ theirs",
    ]);
    for row in &data.rows {
        let theirs = r.sweep.iter().find(|x| x.requested_ms == row.requested_ms);
        let m = &row.actual;
        t.row([
            row.requested_ms.to_string(),
            fmt_ms(ms(m.mean)),
            fmt_ms(ms(m.half_width)),
            fmt_ms(ms(m.stddev)),
            fmt_ns(m.mean - row.requested_ms as f64 * 1e6),
            fmt_ms(ms(row.p99)),
            theirs.map_or("–".into(), |x| fmt_ms(x.mean_ms)),
            theirs.map_or("–".into(), |x| {
                fmt_ns((x.mean_ms - row.requested_ms as f64) * 1e6)
            }),
            fmt_ratio(theirs.map(|x| ms(m.mean) / x.mean_ms)),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "the sweep recorded no sleeps");
    Ok(format!(
        "{}\nEach row: {} sleeps of that length, in interleaved rounds; Error is the half-width of the 99.9 % confidence interval of the mean, StdDev is per sleep.\n{}",
        t.to_markdown(),
        data.rounds_done,
        credit(&r)
    ))
}

pub fn naive_table(record: &Record) -> anyhow::Result<String> {
    let data: NaiveData = record.data()?;
    let r = reference()?;
    let mut t = Table::new([
        "loop (target 1,000 ops/s)",
        "time per op",
        "Error",
        "StdDev",
        "achieved",
        "write-up time per op (Windows)",
        "write-up achieved",
    ]);
    for row in &data.rows {
        let theirs = r.naive.iter().find(|x| x.with_send == row.with_send);
        let m = &row.per_op;
        t.row([
            if row.with_send {
                "send a datagram; sleep(1 ms)"
            } else {
                "sleep(1 ms) only"
            }
            .to_string(),
            fmt_ms(ms(m.mean)),
            fmt_ms(ms(m.half_width)),
            fmt_ms(ms(m.stddev)),
            rate(1e9 / m.mean),
            theirs.map_or("–".into(), |x| {
                format!("{} ± {}", fmt_ms(x.mean_ms), fmt_ms(x.error_ms))
            }),
            theirs.map_or("–".into(), |x| rate(1e3 / x.mean_ms)),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "the loop recorded no iterations");
    Ok(format!(
        "{}\nStatistics over {} iterations of {} operations each, as BenchmarkDotNet reports them. Datagrams sent: {}, received by the sink: {}.\n{}",
        t.to_markdown(),
        data.iterations_done,
        data.ops_per_iteration,
        fmt_count(data.datagrams_sent),
        fmt_count(data.datagrams_received),
        credit(&r)
    ))
}

fn run_of(data: &RatesData, pacer: Pacer, target: f64) -> Option<&RateRun> {
    data.runs
        .iter()
        .find(|r| r.pacer == pacer && r.target == target)
}

pub fn achieved_table(record: &Record) -> anyhow::Result<String> {
    let data: RatesData = record.data()?;
    anyhow::ensure!(!data.runs.is_empty(), "no throttle ran");
    let mut headers = vec!["throttle".to_string()];
    headers.extend(TARGET_RATES.iter().map(|&r| format!("target {}", rate(r))));
    let mut t = Table::new(headers);
    for pacer in Pacer::ALL {
        let mut cells = vec![pacer.label().to_string()];
        for target in TARGET_RATES {
            cells.push(match run_of(&data, pacer, target) {
                Some(r) => format!(
                    "{} ({}%){}",
                    rate(r.achieved),
                    sig3(100.0 * r.achieved / target),
                    if r.capped() { " †" } else { "" }
                ),
                None => "–".into(),
            });
        }
        t.row(cells);
    }
    Ok(format!(
        "{}\nAchieved rate between the first and the last operation of each run (about {} s per run); † the run fell so far behind that it was stopped before all its operations ran.\n",
        t.to_markdown(),
        sig3(data.seconds_per_run)
    ))
}

pub fn jitter_table(record: &Record) -> anyhow::Result<String> {
    let data: RatesData = record.data()?;
    anyhow::ensure!(!data.runs.is_empty(), "no throttle ran");
    let mut t = Table::new([
        "target",
        "throttle",
        "ops run",
        "achieved",
        "drift at the end",
        "gap p1",
        "gap p50",
        "gap p99",
        "gap max",
        "CPU (of one core)",
    ]);
    for r in &data.runs {
        let g = r.gaps.as_ref();
        let p1 = r
            .gap_curve
            .iter()
            .find(|(q, _)| *q >= 0.01)
            .map(|p| fmt_ns(p.1));
        t.row([
            rate(r.target),
            r.pacer.label().to_string(),
            format!("{} of {}", fmt_count(r.ran), fmt_count(r.asked)),
            rate(r.achieved),
            fmt_ns(r.drift_ns),
            p1.unwrap_or_else(|| "–".into()),
            g.map_or("–".into(), |g| fmt_ns(g.p50)),
            g.map_or("–".into(), |g| fmt_ns(g.p99)),
            g.map_or("–".into(), |g| fmt_ns(g.max)),
            r.cpu_ns.map_or("–".into(), |c| {
                format!("{}%", sig3(100.0 * c / r.wall_ns.max(1.0)))
            }),
        ]);
    }
    Ok(format!(
        "{}\nThe gap is the time between the starts of two successive operations; the ideal gap is 1 / target. Drift: how much later than the schedule (set by the first operation) the last operation started; negative means early.\n",
        t.to_markdown()
    ))
}

pub fn achieved_plot(record: &Record) -> anyhow::Result<String> {
    let data: RatesData = record.data()?;
    let mut plot = Plot::new(
        "Achieved rate against target rate",
        "target rate (ops/s, log scale)",
        "achieved rate (ops/s, log scale)",
    )
    .x(Axis::Log, Unit::Number)
    .y(Axis::Log, Unit::Number)
    .series(Series::new("ideal", TARGET_RATES.iter().map(|&r| (r, r)).collect()).line_only());
    for pacer in Pacer::ALL {
        let pts = TARGET_RATES
            .iter()
            .filter_map(|&t| run_of(&data, pacer, t).map(|r| (t, r.achieved)))
            .filter(|p| p.1 > 0.0)
            .collect();
        plot = plot.series(Series::new(pacer.label(), pts));
    }
    plot.to_svg()
}

fn gaps_plot(record: &Record, target: f64) -> anyhow::Result<String> {
    let data: RatesData = record.data()?;
    let mut plot = Plot::new(
        format!("Time between operations at a target of {}", rate(target)),
        "gap between successive operations (log scale)",
        "fraction of gaps ≤ x",
    )
    .x(Axis::Log, Unit::Nanos)
    .y(Axis::Linear, Unit::Percent);
    for pacer in Pacer::ALL {
        if let Some(r) = run_of(&data, pacer, target) {
            let pts = r.gap_curve.iter().map(|&(q, v)| (v, q)).collect();
            plot = plot.series(Series::new(pacer.label(), pts).line_only());
        }
    }
    plot.to_svg()
}

pub fn gaps_plot_1k(record: &Record) -> anyhow::Result<String> {
    gaps_plot(record, 1_000.0)
}

pub fn gaps_plot_10k(record: &Record) -> anyhow::Result<String> {
    gaps_plot(record, 10_000.0)
}

pub fn omission_table(record: &Record) -> anyhow::Result<String> {
    let d: OmissionData = record.data()?;
    let mut headers = vec!["latency measured".to_string()];
    headers.extend(latency_headers(true).into_iter().map(String::from));
    let mut t = Table::new(headers);
    for (label, s) in [
        (
            "from the actual send (what a closed-loop tester records)",
            &d.from_send,
        ),
        ("the same, corrected with record_correct", &d.corrected),
        ("from the intended send (the schedule)", &d.from_intent),
    ] {
        let Some(s) = s else { continue };
        let mut cells = vec![label.to_string()];
        cells.extend(latency_cells(s, true));
        t.row(cells);
    }
    anyhow::ensure!(!t.is_empty(), "no request was answered");
    let stalls = d.served / d.stall_every.max(1);
    Ok(format!(
        "{}\n{} requests at {} to a UDP echo server on loopback that paused {} after every {} requests ({} pauses); the corrected row adds the requests the histogram infers were never sent, so its n is larger.\n",
        t.to_markdown(),
        fmt_count(d.requests),
        rate(d.rate),
        fmt_ns(d.stall_ns),
        d.stall_every,
        stalls
    ))
}

pub fn omission_plot(record: &Record) -> anyhow::Result<String> {
    let d: OmissionData = record.data()?;
    let mut plot = Plot::new(
        "Latency by percentile, three ways of measuring the same requests",
        "percentile, as 1 in N requests is slower (log scale: 10 = p90, 100 = p99)",
        "latency (log scale)",
    )
    .x(Axis::Log, Unit::Number)
    .y(Axis::Log, Unit::Nanos);
    for (name, curve) in &d.curves {
        let pts = curve
            .0
            .iter()
            .filter(|(_, q)| *q < 1.0)
            .map(|&(v, q)| (1.0 / (1.0 - q), v.max(1.0)))
            .collect();
        plot = plot.series(Series::new(name.clone(), pts).line_only());
    }
    plot.to_svg()
}
