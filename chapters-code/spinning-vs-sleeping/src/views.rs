//! How the chapter's results are shown: Markdown tables and SVG plots.

use crate::experiments::{Floor, GAPS_MS, PLACEMENTS, RUNTIMES, Run, Runs, SWEPT, TRANSPORTS};
use crate::{Runtime, Transport, Wait};
use harness::plot::{Axis, Plot, Series, Unit, latency_cdf, quantile_cdf};
use harness::reference::{RefMachine, Source, attribution};
use harness::render::{Table, fmt_ns, fmt_ratio, latency_cells, latency_headers, sig3};
use harness::stats::speedup;
use harness::{Record, View, ViewKind};
use serde::Deserialize;

pub const VIEWS: &[View] = &[
    View {
        name: "variants",
        kind: ViewKind::Table,
        experiment: "variants",
        render: variants_table,
    },
    View {
        name: "speedups",
        kind: ViewKind::Table,
        experiment: "variants",
        render: speedups_table,
    },
    View {
        name: "reference",
        kind: ViewKind::Table,
        experiment: "variants",
        render: reference_table,
    },
    View {
        name: "cdf-std",
        kind: ViewKind::Plot,
        experiment: "variants",
        render: |r| cdf_plot(r, Runtime::Std),
    },
    View {
        name: "cdf-tokio",
        kind: ViewKind::Plot,
        experiment: "variants",
        render: |r| cdf_plot(r, Runtime::Tokio),
    },
    View {
        name: "gaps",
        kind: ViewKind::Table,
        experiment: "gaps",
        render: gaps_table,
    },
    View {
        name: "gaps-latency",
        kind: ViewKind::Plot,
        experiment: "gaps",
        render: |r| gaps_plot(r, false),
    },
    View {
        name: "gaps-cpu",
        kind: ViewKind::Plot,
        experiment: "gaps",
        render: |r| gaps_plot(r, true),
    },
    View {
        name: "pinning",
        kind: ViewKind::Table,
        experiment: "pinning",
        render: pinning_table,
    },
    View {
        name: "floor",
        kind: ViewKind::Table,
        experiment: "floor",
        render: floor_table,
    },
    View {
        name: "floor-cdf",
        kind: ViewKind::Plot,
        experiment: "floor",
        render: floor_plot,
    },
];

fn find(runs: &Runs, rt: Runtime, tr: Transport, wait: Wait) -> Option<&Run> {
    runs.runs
        .iter()
        .find(|r| r.runtime == rt && r.transport == tr && r.wait == wait)
}

fn opt_ns(v: Option<f64>) -> String {
    v.map(fmt_ns).unwrap_or_else(|| "–".into())
}

fn latency_row(label: String, run: &Run, extra: Vec<String>) -> Vec<String> {
    let mut cells = vec![label];
    match &run.summary {
        Some(s) => cells.extend(latency_cells(s, false)),
        None => cells.extend(std::iter::repeat_n("–".to_string(), 6)),
    }
    cells.extend(extra);
    cells
}

fn variants_table(r: &Record) -> anyhow::Result<String> {
    let runs: Runs = r.data()?;
    let mut headers = vec!["variant"];
    headers.extend(latency_headers(false));
    headers.extend(["CPU per message", "cores busy"]);
    let mut t = Table::new(headers);
    for run in &runs.runs {
        let cores = run.cores_busy().map(sig3).unwrap_or_else(|| "–".into());
        t.row(latency_row(
            run.label(),
            run,
            vec![opt_ns(run.cpu_per_message_ns()), cores],
        ));
    }
    Ok(t.to_markdown())
}

// The write-up's published numbers.
#[derive(Deserialize)]
struct Reference {
    source: Source,
    machines: Vec<RefMachine>,
    results: Vec<RefResult>,
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

fn reference() -> anyhow::Result<Reference> {
    harness::reference::parse(include_str!(
        "../../../assets/reference/spinning-vs-sleeping.toml"
    ))
}

impl Reference {
    fn get(&self, machine: &str, rt: Runtime, tr: Transport, wait: Wait) -> Option<&RefResult> {
        self.results.iter().find(|x| {
            x.machine == machine
                && x.runtime == rt.label()
                && x.transport == tr.label()
                && x.wait == wait.label()
        })
    }
}

fn speedups_table(r: &Record) -> anyhow::Result<String> {
    let runs: Runs = r.data()?;
    let refs = reference()?;
    let mut t = Table::new([
        "runtime · transport",
        "blocking mean",
        "spinning mean",
        "speedup (mean)",
        "speedup (median)",
        "theirs, macOS (mean / median)",
        "theirs, Ubuntu (mean / median)",
    ]);
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            let (Some(b), Some(s)) = (
                find(&runs, rt, tr, Wait::Block),
                find(&runs, rt, tr, Wait::Spin),
            ) else {
                continue;
            };
            let (Some(bs), Some(ss)) = (&b.summary, &s.summary) else {
                continue;
            };
            let theirs = |m: &str| match (
                refs.get(m, rt, tr, Wait::Block),
                refs.get(m, rt, tr, Wait::Spin),
            ) {
                (Some(b), Some(s)) => format!(
                    "{} / {}",
                    fmt_ratio(speedup(b.avg_us, s.avg_us)),
                    fmt_ratio(speedup(b.median_us, s.median_us))
                ),
                _ => "–".into(),
            };
            t.row([
                format!("{} · {}", rt.label(), tr.label()),
                fmt_ns(bs.mean),
                fmt_ns(ss.mean),
                fmt_ratio(speedup(bs.mean, ss.mean)),
                fmt_ratio(speedup(bs.p50, ss.p50)),
                theirs("macos"),
                theirs("ubuntu"),
            ]);
        }
    }
    Ok(t.to_markdown())
}

fn reference_table(r: &Record) -> anyhow::Result<String> {
    let runs: Runs = r.data()?;
    let refs = reference()?;
    let mut t = Table::new([
        "variant",
        "mean: macOS",
        "mean: Ubuntu",
        "mean: yours",
        "median: macOS",
        "median: Ubuntu",
        "median: yours",
    ]);
    for run in &runs.runs {
        let get = |m: &str| refs.get(m, run.runtime, run.transport, run.wait);
        let us = |v: Option<f64>| v.map(|v| fmt_ns(v * 1e3)).unwrap_or_else(|| "–".into());
        t.row([
            run.label(),
            us(get("macos").map(|x| x.avg_us)),
            us(get("ubuntu").map(|x| x.avg_us)),
            opt_ns(run.summary.as_ref().map(|s| s.mean)),
            us(get("macos").map(|x| x.median_us)),
            us(get("ubuntu").map(|x| x.median_us)),
            opt_ns(run.summary.as_ref().map(|s| s.p50)),
        ]);
    }
    let machines: Vec<&RefMachine> = refs.machines.iter().collect();
    Ok(format!(
        "{}\n{}\n",
        t.to_markdown(),
        attribution(&refs.source, &machines)
    ))
}

fn cdf_plot(r: &Record, rt: Runtime) -> anyhow::Result<String> {
    let runs: Runs = r.data()?;
    let series: Vec<(String, Vec<f64>)> = runs
        .runs
        .iter()
        .filter(|x| x.runtime == rt && !x.outcome.latencies_ns.is_empty())
        .map(|x| {
            (
                format!("{} {}", x.transport.label(), x.wait.label()),
                x.outcome.latencies_ns.clone(),
            )
        })
        .collect();
    latency_cdf(
        &format!("{}: send-to-receive latency, all messages", rt.label()),
        &series,
    )
    .to_svg()
}

fn gap_label(ms: u64) -> String {
    format!("{ms} ms")
}

fn gaps_table(r: &Record) -> anyhow::Result<String> {
    let runs: Runs = r.data()?;
    let mut t = Table::new([
        "transport · wait",
        "gap",
        "n",
        "p50",
        "mean",
        "p99",
        "max",
        "CPU per message",
    ]);
    for run in &runs.runs {
        let Some(s) = &run.summary else { continue };
        t.row([
            format!("{} · {}", run.transport.label(), run.wait.label()),
            gap_label((run.gap_ns / 1e6) as u64),
            s.n.to_string(),
            fmt_ns(s.p50),
            fmt_ns(s.mean),
            fmt_ns(s.p99),
            fmt_ns(s.max),
            opt_ns(run.cpu_per_message_ns()),
        ]);
    }
    Ok(t.to_markdown())
}

fn gaps_plot(r: &Record, cpu: bool) -> anyhow::Result<String> {
    let runs: Runs = r.data()?;
    let (title, y_label) = if cpu {
        (
            "CPU time burnt per message against the idle gap",
            "process CPU time per message (log)",
        )
    } else {
        (
            "median latency against the idle gap before each message",
            "median send-to-receive latency (log)",
        )
    };
    let mut plot = Plot::new(title, "gap before each message", y_label)
        .x_categories(GAPS_MS.iter().map(|&g| gap_label(g)))
        .y(Axis::Log, Unit::Nanos);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
            let points = GAPS_MS
                .iter()
                .enumerate()
                .filter_map(|(i, &g)| {
                    let run = runs.runs.iter().find(|x| {
                        x.transport == tr && x.wait == wait && (x.gap_ns / 1e6) as u64 == g
                    })?;
                    let y = if cpu {
                        run.cpu_per_message_ns()?
                    } else {
                        run.summary.as_ref()?.p50
                    };
                    Some((i as f64, y))
                })
                .collect();
            plot = plot.series(Series::new(
                format!("{} {}", tr.label(), wait.label()),
                points,
            ));
        }
    }
    plot.to_svg()
}

fn pinning_table(r: &Record) -> anyhow::Result<String> {
    let runs: Runs = r.data()?;
    let mut headers = vec!["transport · wait", "placement"];
    headers.extend(latency_headers(false));
    let mut t = Table::new(headers).align(1, harness::render::Align::Left);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin] {
            for placement in PLACEMENTS {
                let Some(run) = runs
                    .runs
                    .iter()
                    .find(|x| x.transport == tr && x.wait == wait && x.placement == placement)
                else {
                    continue;
                };
                let mut row =
                    latency_row(format!("{} · {}", tr.label(), wait.label()), run, vec![]);
                row.insert(1, placement.label().to_string());
                t.row(row);
            }
        }
    }
    Ok(t.to_markdown())
}

fn floor_table(r: &Record) -> anyhow::Result<String> {
    let floor: Floor = r.data()?;
    anyhow::ensure!(
        !floor.runs.is_empty(),
        "the floor could not be measured here"
    );
    let mut headers = vec!["atomic ping-pong, one way"];
    headers.extend(latency_headers(true));
    let mut t = Table::new(headers);
    for run in &floor.runs {
        let Some(s) = &run.summary else { continue };
        let mut row = vec![run.placement.label().to_string()];
        row.extend(latency_cells(s, true));
        t.row(row);
    }
    Ok(t.to_markdown())
}

fn floor_plot(r: &Record) -> anyhow::Result<String> {
    let floor: Floor = r.data()?;
    quantile_cdf(
        "atomic ping-pong: one-way hand-over between two spinning threads",
        "one-way latency (log scale)",
        "fraction of hand-overs ≤ latency",
        floor
            .runs
            .iter()
            .map(|run| (run.placement.label().to_string(), run.curve.as_slice())),
    )
    .to_svg()
}
