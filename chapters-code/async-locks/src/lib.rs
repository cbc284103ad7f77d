//! Chapter 5 of *The Cost of Waiting*: synchronous locks in async code.
//!
//! N timeouts of 20 ms each report their expiry to a handler, built the three ways
//! the write-up built them, against a baseline that shares nothing and a fix. The
//! designs live in [`designs`], the re-created timeout in [`timeout`]; this file
//! holds the experiments and their views.

pub mod designs;
pub mod timeout;

use designs::{Design, Flavour, Run, run_design};
use harness::plot::{Axis, Plot, Series, Unit};
use harness::reference::{self, Compare, RefMachine, Source};
use harness::render::{Table, fmt_count, fmt_ns, latency_cells, latency_headers};
use harness::stats::quantile_curve;
use harness::{Chapter, Ctx, Experiment, NoteKind, Profile, Record, Summary, View, ViewKind};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Every timeout's length, as in the write-up.
pub const TIMEOUT: Duration = Duration::from_millis(20);

pub const CHAPTER: Chapter = Chapter {
    name: env!("CARGO_PKG_NAME"),
    dir: env!("CARGO_MANIFEST_DIR"),
    experiments: EXPERIMENTS,
    views: VIEWS,
};

const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "designs",
        about: "N timeouts of 20 ms per design and runtime flavour: lateness distributions",
        bound: |p| p.pick(Duration::from_secs(5), Duration::from_secs(60)),
        run: run_designs,
    },
    Experiment {
        name: "sweep",
        about: "N = 1 … 100,000 timeouts per design and runtime flavour",
        bound: |p| p.pick(Duration::from_secs(5), Duration::from_secs(100)),
        run: run_sweep,
    },
    Experiment {
        name: "unit-check",
        about: "the write-up's unit check: 20 ms extended by 20 ms fires within 36–44 ms",
        bound: |p| p.pick(Duration::from_secs(2), Duration::from_secs(10)),
        run: run_unit_check,
    },
];

const VIEWS: &[View] = &[
    View {
        name: "designs",
        kind: ViewKind::Table,
        experiment: "designs",
        render: table_designs,
    },
    View {
        name: "writeup",
        kind: ViewKind::Table,
        experiment: "designs",
        render: table_writeup,
    },
    View {
        name: "pairing",
        kind: ViewKind::Table,
        experiment: "designs",
        render: table_pairing,
    },
    View {
        name: "flavours",
        kind: ViewKind::Table,
        experiment: "designs",
        render: table_flavours,
    },
    View {
        name: "designs-cdf",
        kind: ViewKind::Plot,
        experiment: "designs",
        render: plot_designs_cdf,
    },
    View {
        name: "flavours-cdf",
        kind: ViewKind::Plot,
        experiment: "designs",
        render: plot_flavours_cdf,
    },
    View {
        name: "sweep",
        kind: ViewKind::Table,
        experiment: "sweep",
        render: table_sweep,
    },
    View {
        name: "sweep-multi-thread",
        kind: ViewKind::Plot,
        experiment: "sweep",
        render: plot_sweep_multi,
    },
    View {
        name: "sweep-current-thread",
        kind: ViewKind::Plot,
        experiment: "sweep",
        render: plot_sweep_current,
    },
    View {
        name: "unit-check",
        kind: ViewKind::Table,
        experiment: "unit-check",
        render: table_unit_check,
    },
];

// ---------------------------------------------------------------------------
// Data

/// The summary of one or more runs of one design on one runtime flavour.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DesignResult {
    pub design: Design,
    pub flavour: Flavour,
    /// Timeouts started, over all repetitions.
    pub started: usize,
    /// Expiries handled, over all repetitions.
    pub handled: usize,
    /// Own deadline → handled.
    pub lateness: Option<Summary>,
    /// Own start → handled.
    pub elapsed: Option<Summary>,
    /// Oldest queued start → handled (the write-up's measure), for queue designs.
    pub fifo_elapsed: Option<Summary>,
    /// Handled expiries that popped another timeout's start.
    pub mispaired: usize,
    /// Mean wall time of one run, ns.
    pub wall_ns: f64,
    /// Mean process CPU time of one run, ns.
    pub cpu_ns: Option<f64>,
    /// (quantile, lateness ns) points for the distribution plot.
    pub curve: Vec<(f64, f64)>,
}

impl DesignResult {
    /// Pools repeated runs of the same design and flavour.
    pub fn of(runs: &[Run], curve_points: usize) -> Option<DesignResult> {
        let first = runs.first()?;
        let ns = |d: Duration| d.as_nanos() as f64;
        let samples = runs.iter().flat_map(|r| r.samples.iter());
        let mut lateness: Vec<f64> = samples.clone().map(|s| ns(s.lateness)).collect();
        let elapsed: Vec<f64> = samples.clone().map(|s| ns(s.elapsed)).collect();
        let fifo: Vec<f64> = samples
            .clone()
            .filter_map(|s| s.fifo_elapsed.map(ns))
            .collect();
        let lateness_summary = Summary::of(&lateness);
        lateness.sort_by(f64::total_cmp);
        let cpus: Vec<f64> = runs.iter().filter_map(|r| r.cpu.map(ns)).collect();
        Some(DesignResult {
            design: first.design,
            flavour: first.flavour,
            started: runs.iter().map(|r| r.n).sum(),
            handled: lateness.len(),
            lateness: lateness_summary,
            elapsed: Summary::of(&elapsed),
            fifo_elapsed: Summary::of(&fifo),
            mispaired: samples.filter(|s| s.mispaired).count(),
            wall_ns: runs.iter().map(|r| ns(r.wall)).sum::<f64>() / runs.len() as f64,
            cpu_ns: (cpus.len() == runs.len())
                .then(|| cpus.iter().sum::<f64>() / runs.len() as f64),
            curve: quantile_curve(&lateness, curve_points.min(lateness.len())),
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DesignsData {
    pub n: usize,
    pub repetitions: usize,
    pub results: Vec<DesignResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepData {
    pub ns: Vec<usize>,
    pub results: Vec<(usize, DesignResult)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnitCheckData {
    pub first_ms: u64,
    pub extra_ms: u64,
    pub low_ms: u64,
    pub high_ms: u64,
    pub fired: Summary,
    pub inside: usize,
    pub early: usize,
    pub late: usize,
}

// ---------------------------------------------------------------------------
// Experiments

/// How long one run may take before it counts as stalled.
fn run_cap(profile: Profile) -> Duration {
    profile.pick(Duration::from_secs(2), Duration::from_secs(15))
}

/// Runs one design, stopping at the run cap or the experiment's deadline, and adds a
/// note if it stalled.
fn run_one(ctx: &mut Ctx, design: Design, flavour: Flavour, n: usize) -> anyhow::Result<Run> {
    let give_up = (Instant::now() + run_cap(ctx.profile)).min(ctx.deadline());
    let run = run_design(design, flavour, n, TIMEOUT, give_up)?;
    if run.stalled() {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "{} on the {} runtime handled {} of {} expiries before its time ran out \
                 ({}); it is reported as stalled and its numbers cover only what was handled.",
                design.label(),
                flavour.label(),
                fmt_count(run.samples.len() as u64),
                fmt_count(n as u64),
                fmt_ns(run.wall.as_nanos() as f64),
            ),
        );
    }
    Ok(run)
}

fn run_designs(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let n = ctx.param("N", ctx.profile.pick(10_000, 10_000));
    let reps = ctx.param("repetitions", ctx.profile.pick(1, 5));
    ctx.param("timeout", "20 ms");
    let configs: Vec<(Flavour, Design)> = Flavour::ALL
        .into_iter()
        .flat_map(|f| Design::ALL.into_iter().map(move |d| (f, d)))
        .collect();
    let bar = ctx.progress((configs.len() * reps) as u64, "designs × flavours");
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); configs.len()];
    // Interleave: every configuration once per repetition, so drift hits all alike.
    'reps: for rep in 0..reps {
        for (i, &(flavour, design)) in configs.iter().enumerate() {
            if ctx.past_deadline() {
                ctx.note(
                    NoteKind::Timeout,
                    format!("the time bound was reached during repetition {}", rep + 1),
                );
                break 'reps;
            }
            runs[i].push(run_one(ctx, design, flavour, n)?);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let results = runs
        .iter()
        .filter_map(|r| DesignResult::of(r, 200))
        .collect();
    Ok(serde_json::to_value(DesignsData {
        n,
        repetitions: reps,
        results,
    })?)
}

fn run_sweep(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let ns: Vec<usize> = ctx.profile.pick(
        vec![1, 10, 100, 1_000, 10_000],
        vec![1, 10, 100, 1_000, 10_000, 100_000],
    );
    let shown: Vec<String> = ns.iter().map(|&n| fmt_count(n as u64)).collect();
    ctx.param("N", shown.join(", "));
    let reps = ctx.param("repetitions", ctx.profile.pick(1, 3));
    ctx.param("timeout", "20 ms");
    let per_n = reps * Flavour::ALL.len() * Design::ALL.len();
    let bar = ctx.progress((ns.len() * per_n) as u64, "N sweep");
    let mut results = Vec::new();
    let mut done_ns = Vec::new();
    'sizes: for &n in &ns {
        let mut runs: Vec<Vec<Run>> = vec![Vec::new(); Flavour::ALL.len() * Design::ALL.len()];
        for _ in 0..reps {
            for (i, (flavour, design)) in Flavour::ALL
                .into_iter()
                .flat_map(|f| Design::ALL.into_iter().map(move |d| (f, d)))
                .enumerate()
            {
                if ctx.past_deadline() {
                    let largest = done_ns
                        .last()
                        .map_or("none".into(), |&m: &usize| fmt_count(m as u64));
                    ctx.note(
                        NoteKind::Timeout,
                        format!(
                            "the time bound was reached at N = {}; the largest N measured \
                             for every design is {largest}",
                            fmt_count(n as u64),
                        ),
                    );
                    break 'sizes;
                }
                runs[i].push(run_one(ctx, design, flavour, n)?);
                bar.inc(1);
            }
        }
        results.extend(
            runs.iter()
                .filter_map(|r| DesignResult::of(r, 0))
                .map(|r| (n, r)),
        );
        done_ns.push(n);
    }
    bar.finish_and_clear();
    Ok(serde_json::to_value(SweepData {
        ns: done_ns,
        results,
    })?)
}

fn run_unit_check(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let reps = ctx.param("repetitions", ctx.profile.pick(10, 50));
    ctx.param("runtime", "current-thread, as #[tokio::test]");
    let (first, extra) = (TIMEOUT, TIMEOUT);
    let (low, high) = (Duration::from_millis(36), Duration::from_millis(44));
    let rt = Flavour::CurrentThread.runtime()?;
    let mut fired = Vec::with_capacity(reps);
    for _ in 0..reps {
        if ctx.past_deadline() {
            ctx.note(
                NoteKind::Timeout,
                format!("stopped after {} of {reps} checks", fired.len()),
            );
            break;
        }
        fired.push(rt.block_on(designs::extended_timeout(first, extra)));
    }
    let Some(summary) = Summary::of_durations(&fired) else {
        anyhow::bail!("no check finished within the time bound");
    };
    Ok(serde_json::to_value(UnitCheckData {
        first_ms: first.as_millis() as u64,
        extra_ms: extra.as_millis() as u64,
        low_ms: low.as_millis() as u64,
        high_ms: high.as_millis() as u64,
        fired: summary,
        inside: fired.iter().filter(|d| **d > low && **d < high).count(),
        early: fired.iter().filter(|d| **d <= low).count(),
        late: fired.iter().filter(|d| **d >= high).count(),
    })?)
}

// ---------------------------------------------------------------------------
// Reference numbers

#[derive(Debug, Deserialize)]
pub struct RefData {
    pub source: Source,
    pub machines: Vec<RefMachine>,
    pub designs: Vec<RefDesign>,
}

#[derive(Debug, Deserialize)]
pub struct RefDesign {
    pub design: String,
    pub n: usize,
    pub timeout_ms: f64,
    pub mean_ms: f64,
}

pub fn reference_data() -> anyhow::Result<RefData> {
    let r: RefData = reference::parse(include_str!("../../../assets/reference/async-locks.toml"))?;
    for d in &r.designs {
        Design::parse(&d.design)?;
    }
    Ok(r)
}

// ---------------------------------------------------------------------------
// Views

fn pick(results: &[DesignResult], flavour: Flavour) -> Vec<&DesignResult> {
    results.iter().filter(|r| r.flavour == flavour).collect()
}

fn handled_cell(r: &DesignResult) -> String {
    if r.handled == r.started {
        fmt_count(r.handled as u64)
    } else {
        format!(
            "{} of {} (stalled)",
            fmt_count(r.handled as u64),
            fmt_count(r.started as u64)
        )
    }
}

fn table_designs(record: &Record) -> anyhow::Result<String> {
    let data: DesignsData = record.data()?;
    let mut headers = vec!["design (multi-thread runtime)"];
    headers.extend(latency_headers(true));
    headers.extend(["CPU per run", "wall per run"]);
    let mut t = Table::new(headers);
    for r in pick(&data.results, Flavour::MultiThread) {
        let mut cells = vec![r.design.label().to_string()];
        match &r.lateness {
            Some(s) => {
                cells.extend(latency_cells(s, true));
                cells[1] = handled_cell(r);
            }
            None => cells.push(handled_cell(r)),
        }
        cells.resize(8, "–".into());
        cells.push(r.cpu_ns.map(fmt_ns).unwrap_or_else(|| "–".into()));
        cells.push(fmt_ns(r.wall_ns));
        t.row(cells);
    }
    Ok(format!(
        "Lateness of each timeout past its own deadline, {} timeouts of 20 ms per run.\n\n{}",
        fmt_count(data.n as u64),
        t.to_markdown()
    ))
}

fn table_writeup(record: &Record) -> anyhow::Result<String> {
    let data: DesignsData = record.data()?;
    let reference = reference_data()?;
    let rows: Vec<Compare> = reference
        .designs
        .iter()
        .map(|d| {
            let design = Design::parse(&d.design).expect("checked by reference_data");
            let yours = data
                .results
                .iter()
                .find(|r| r.design == design && r.flavour == Flavour::MultiThread)
                .and_then(|r| r.fifo_elapsed.as_ref().or(r.elapsed.as_ref()))
                .map(|s| s.mean);
            Compare {
                label: format!("{} (N = {})", design.label(), fmt_count(d.n as u64)),
                theirs: Some(d.mean_ms * 1e6),
                yours,
            }
        })
        .collect();
    let t = reference::compare_table("design, start → handled, mean", "theirs", &rows, fmt_ns);
    let machines: Vec<&RefMachine> = reference.machines.iter().collect();
    Ok(format!(
        "{}\n{}\n\nYours: the same quantity (start time popped from the shared queue → \
         expiry handled, including the 20 ms itself), multi-thread runtime, {} timeouts per run.\n",
        t.to_markdown(),
        reference::attribution(&reference.source, &machines),
        fmt_count(data.n as u64)
    ))
}

fn table_pairing(record: &Record) -> anyhow::Result<String> {
    let data: DesignsData = record.data()?;
    let mut t = Table::new([
        "design (multi-thread)",
        "mis-paired",
        "mean, own start",
        "mean, FIFO",
        "p99, own start",
        "p99, FIFO",
        "max, own start",
        "max, FIFO",
    ]);
    for r in pick(&data.results, Flavour::MultiThread)
        .into_iter()
        .filter(|r| r.design.uses_queue())
    {
        let (Some(own), Some(fifo)) = (&r.elapsed, &r.fifo_elapsed) else {
            continue;
        };
        t.row([
            r.design.label().to_string(),
            format!(
                "{} of {}",
                fmt_count(r.mispaired as u64),
                fmt_count(r.handled as u64)
            ),
            fmt_ns(own.mean),
            fmt_ns(fifo.mean),
            fmt_ns(own.p99),
            fmt_ns(fifo.p99),
            fmt_ns(own.max),
            fmt_ns(fifo.max),
        ]);
    }
    Ok(t.to_markdown())
}

fn table_flavours(record: &Record) -> anyhow::Result<String> {
    let data: DesignsData = record.data()?;
    let mut t = Table::new([
        "design",
        "p50, current-thread",
        "p50, multi-thread",
        "p99, current-thread",
        "p99, multi-thread",
        "mean, current-thread",
        "mean, multi-thread",
        "CPU/run, current-thread",
        "CPU/run, multi-thread",
    ]);
    for design in Design::ALL {
        let find = |f: Flavour| {
            data.results
                .iter()
                .find(|r| r.design == design && r.flavour == f)
        };
        let (ct, mt) = (find(Flavour::CurrentThread), find(Flavour::MultiThread));
        let cell = |r: Option<&DesignResult>, get: fn(&Summary) -> f64| {
            r.and_then(|r| r.lateness.as_ref())
                .map(|s| fmt_ns(get(s)))
                .unwrap_or_else(|| "–".into())
        };
        let cpu = |r: Option<&DesignResult>| {
            r.and_then(|r| r.cpu_ns)
                .map(fmt_ns)
                .unwrap_or_else(|| "–".into())
        };
        t.row([
            design.label().to_string(),
            cell(ct, |s| s.p50),
            cell(mt, |s| s.p50),
            cell(ct, |s| s.p99),
            cell(mt, |s| s.p99),
            cell(ct, |s| s.mean),
            cell(mt, |s| s.mean),
            cpu(ct),
            cpu(mt),
        ]);
    }
    Ok(t.to_markdown())
}

fn cdf_plot(data: &DesignsData, flavour: Flavour) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        format!(
            "Lateness past the deadline, {} timeouts, {} runtime",
            fmt_count(data.n as u64),
            flavour.label()
        ),
        "lateness past own deadline (log scale)",
        "fraction of timeouts ≤ lateness",
    )
    .x(Axis::Log, Unit::Nanos)
    .y(Axis::Linear, Unit::Percent);
    for r in pick(&data.results, flavour) {
        let pts = r.curve.iter().map(|&(q, v)| (v, q)).collect();
        plot = plot.series(Series::new(r.design.label(), pts).line_only());
    }
    plot.to_svg()
}

fn plot_designs_cdf(record: &Record) -> anyhow::Result<String> {
    cdf_plot(&record.data()?, Flavour::MultiThread)
}

fn plot_flavours_cdf(record: &Record) -> anyhow::Result<String> {
    cdf_plot(&record.data()?, Flavour::CurrentThread)
}

fn table_sweep(record: &Record) -> anyhow::Result<String> {
    let data: SweepData = record.data()?;
    let mut headers = vec!["design".to_string(), "runtime".to_string()];
    headers.extend(
        data.ns
            .iter()
            .map(|&n| format!("N = {}", fmt_count(n as u64))),
    );
    let mut t = Table::new(headers);
    for flavour in Flavour::ALL {
        for design in Design::ALL {
            let mut cells = vec![design.label().to_string(), flavour.label().to_string()];
            for &n in &data.ns {
                let r = data
                    .results
                    .iter()
                    .find(|(m, r)| *m == n && r.design == design && r.flavour == flavour);
                cells.push(match r {
                    Some((_, r)) if r.handled < r.started => "stalled".into(),
                    Some((_, r)) => r.lateness.as_ref().map_or("–".into(), |s| fmt_ns(s.mean)),
                    None => "–".into(),
                });
            }
            t.row(cells);
        }
    }
    Ok(format!(
        "Mean lateness past each timeout's own deadline, by number of timeouts N.\n\n{}",
        t.to_markdown()
    ))
}

fn sweep_plot(data: &SweepData, flavour: Flavour) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        format!(
            "Mean lateness vs number of timeouts, {} runtime",
            flavour.label()
        ),
        "N timeouts started together (log scale)",
        "mean lateness past own deadline (log scale)",
    )
    .x(Axis::Log, Unit::Number)
    .y(Axis::Log, Unit::Nanos);
    for design in Design::ALL {
        let pts: Vec<(f64, f64)> = data
            .results
            .iter()
            .filter(|(_, r)| r.design == design && r.flavour == flavour)
            .filter_map(|(n, r)| r.lateness.as_ref().map(|s| (*n as f64, s.mean)))
            .collect();
        plot = plot.series(Series::new(design.label(), pts));
    }
    plot.to_svg()
}

fn plot_sweep_multi(record: &Record) -> anyhow::Result<String> {
    sweep_plot(&record.data()?, Flavour::MultiThread)
}

fn plot_sweep_current(record: &Record) -> anyhow::Result<String> {
    sweep_plot(&record.data()?, Flavour::CurrentThread)
}

fn table_unit_check(record: &Record) -> anyhow::Result<String> {
    let d: UnitCheckData = record.data()?;
    let mut headers = vec!["check"];
    headers.extend(latency_headers(false));
    headers.extend(["inside the window", "too early", "too late"]);
    let mut t = Table::new(headers);
    let mut cells = vec![format!(
        "{} ms, extended by {} ms; window ({}, {}) ms",
        d.first_ms, d.extra_ms, d.low_ms, d.high_ms
    )];
    cells.extend(latency_cells(&d.fired, false));
    cells.extend([
        fmt_count(d.inside as u64),
        fmt_count(d.early as u64),
        fmt_count(d.late as u64),
    ]);
    t.row(cells);
    Ok(t.to_markdown())
}
