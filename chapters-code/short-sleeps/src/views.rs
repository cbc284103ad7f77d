//! The chapter's tables and plots.

use crate::{CallRow, CallsData, Mode, Slack, SweepData};
use harness::plot::{Axis, Plot, Series, Unit};
use harness::reference::{self, RefMachine, Source};
use harness::render::{Table, fmt_count, fmt_ns, fmt_ratio};
use harness::{MeanCi, Record};
use serde::Deserialize;
use std::collections::BTreeMap;

/// "12.3 µs ± 45.6 ns"
pub fn fmt_mean_ci(m: &MeanCi) -> String {
    format!("{} ± {}", fmt_ns(m.mean), fmt_ns(m.half_width))
}

fn per_call_cell(row: &CallRow) -> String {
    match (&row.per_call, &row.error) {
        (_, Some(e)) => format!("unavailable: {e}"),
        (Some(m), None) => fmt_mean_ci(m),
        (None, None) => "not measured (time bound)".into(),
    }
}

fn runs_cell(row: &CallRow) -> String {
    let reps = row.per_call.map(|m| m.n).unwrap_or(0);
    format!("{} × {reps}", fmt_count(u64::from(row.calls)))
}

fn frac(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into())
}

pub fn calls_table(record: &Record) -> anyhow::Result<String> {
    let data: CallsData = record.data()?;
    let mut t = Table::new([
        "call",
        "argument",
        "calls × repetitions",
        "time per call (mean ± 99.9 % CI)",
        "CPU per call",
        "blocked per call",
        "preempted per call",
    ]);
    for row in data.rows.iter().filter(|r| r.slack == Slack::Default) {
        t.row([
            row.label.clone(),
            row.arg.label().to_string(),
            runs_cell(row),
            per_call_cell(row),
            row.cpu_per_call
                .map(|m| fmt_ns(m.mean))
                .unwrap_or_else(|| "–".into()),
            frac(row.voluntary_per_call),
            frac(row.involuntary_per_call),
        ]);
    }
    let mut out = t.to_markdown();
    out.push_str(
        "\n*Blocked* and *preempted* count the measuring thread's voluntary and involuntary \
         context switches per call (`getrusage`); a call that really slept blocks about once.\n",
    );
    Ok(out)
}

pub fn slack_table(record: &Record) -> anyhow::Result<String> {
    let data: CallsData = record.data()?;
    if !cfg!(target_os = "linux") {
        return Ok(
            "Timer slack is a Linux feature (`prctl(PR_SET_TIMERSLACK)`); this OS has nothing \
             to compare.\n"
                .into(),
        );
    }
    let default = data
        .thread_slack_ns
        .map(|ns| format!("default slack ({})", fmt_ns(ns as f64)))
        .unwrap_or_else(|| "default slack".into());
    let mut t = Table::new([
        "call".to_string(),
        "argument".to_string(),
        default,
        "slack 1 ns".to_string(),
        "default ÷ 1 ns".to_string(),
    ]);
    let key = |r: &CallRow| (r.id.clone(), r.slack);
    let by: BTreeMap<(String, Slack), &CallRow> = data.rows.iter().map(|r| (key(r), r)).collect();
    for row in data
        .rows
        .iter()
        .filter(|r| r.slack == Slack::Default && r.sleeps)
    {
        let Some(min) = by.get(&(row.id.clone(), Slack::OneNs)) else {
            continue;
        };
        let ratio = match (row.per_call, min.per_call) {
            (Some(a), Some(b)) => harness::stats::speedup(a.mean, b.mean),
            _ => None,
        };
        t.row([
            row.label.clone(),
            row.arg.label().to_string(),
            per_call_cell(row),
            per_call_cell(min),
            fmt_ratio(ratio),
        ]);
    }
    let mut out = String::new();
    if let Some(p) = data.proc_slack_ns {
        out.push_str(&format!(
            "`/proc/self/timerslack_ns` reads {} on this machine.\n\n",
            fmt_ns(p as f64)
        ));
    }
    out.push_str(&t.to_markdown());
    Ok(out)
}

// ---------------------------------------------------------------------------------
// The write-up's numbers
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Deserialize)]
pub struct RefValue {
    pub mean: f64,
    pub ci: f64,
    /// Published per loop of this many calls (divide to get per call).
    #[serde(default)]
    pub per: Option<f64>,
}

impl RefValue {
    pub fn per_call(&self) -> (f64, f64) {
        let d = self.per.unwrap_or(1.0);
        (self.mean / d, self.ci / d)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct RefRow {
    pub id: String,
    pub label: String,
    pub windows: Option<RefValue>,
    pub linux: Option<RefValue>,
    pub macos: Option<RefValue>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RefData {
    pub source: Source,
    pub machines: Vec<RefMachine>,
    pub rows: Vec<RefRow>,
}

pub const REFERENCE_TOML: &str = include_str!("../../../assets/reference/short-sleeps.toml");

pub fn reference_data() -> anyhow::Result<RefData> {
    reference::parse(REFERENCE_TOML)
}

/// The reader's OS as the reference data names it.
pub fn this_os() -> Option<&'static str> {
    if cfg!(target_os = "linux") {
        Some("linux")
    } else if cfg!(target_os = "macos") {
        Some("macos")
    } else if cfg!(windows) {
        Some("windows")
    } else {
        None
    }
}

fn fmt_ref(v: &Option<RefValue>) -> String {
    match v {
        None => "–".into(),
        Some(v) => {
            let (m, ci) = v.per_call();
            format!("{} ± {}", fmt_ns(m), fmt_ns(ci))
        }
    }
}

pub fn reference_table(record: &Record) -> anyhow::Result<String> {
    let data: CallsData = record.data()?;
    let refs = reference_data()?;
    let os = this_os();
    let yours: BTreeMap<&str, &CallRow> = data
        .rows
        .iter()
        .filter(|r| r.slack == Slack::Default)
        .map(|r| (r.id.as_str(), r))
        .collect();
    let mut t = Table::new([
        "call",
        "theirs: Windows 10",
        "theirs: Linux 4.1",
        "theirs: OS X 10.10",
        "yours (this machine)",
        "yours ÷ theirs (same OS)",
    ]);
    for row in &refs.rows {
        let mine = yours.get(row.id.as_str());
        let theirs = match os {
            Some("linux") => &row.linux,
            Some("macos") => &row.macos,
            Some("windows") => &row.windows,
            _ => &None,
        };
        let ratio = match (mine.and_then(|m| m.per_call), theirs) {
            (Some(m), Some(t)) => {
                let (tm, _) = t.per_call();
                (tm > 0.0).then(|| m.mean / tm)
            }
            _ => None,
        };
        t.row([
            row.label.clone(),
            fmt_ref(&row.windows),
            fmt_ref(&row.linux),
            fmt_ref(&row.macos),
            mine.map(|m| per_call_cell(m)).unwrap_or_else(|| "–".into()),
            fmt_ratio(ratio),
        ]);
    }
    let machines: Vec<&RefMachine> = refs.machines.iter().collect();
    let mut out = t.to_markdown();
    out.push('\n');
    out.push_str(&reference::attribution(&refs.source, &machines));
    out.push_str(
        " Their values are per call, mean ± 99.9 % CI; those published per loop of 3,000 \
         calls are divided by 3,000. A dash means the write-up did not measure it, or this \
         OS lacks it.\n",
    );
    Ok(out)
}

// ---------------------------------------------------------------------------------
// The sweep
// ---------------------------------------------------------------------------------

pub fn sweep_table(record: &Record) -> anyhow::Result<String> {
    let data: SweepData = record.data()?;
    let modes: Vec<Mode> = Mode::available()
        .iter()
        .copied()
        .filter(|m| data.points.iter().any(|p| p.mode == *m))
        .collect();
    let mut headers = vec!["requested".to_string()];
    for m in &modes {
        headers.push(format!("{}: mean / p99", m.label()));
    }
    headers.push("hybrid: CPU per sleep".into());
    let mut t = Table::new(headers);
    let mut requests: Vec<f64> = data.points.iter().map(|p| p.request_ns).collect();
    requests.sort_by(f64::total_cmp);
    requests.dedup();
    for r in requests {
        let mut cells = vec![fmt_ns(r)];
        for m in &modes {
            let cell = data
                .points
                .iter()
                .find(|p| p.mode == *m && p.request_ns == r)
                .map(|p| format!("{} / {}", fmt_ns(p.actual.mean), fmt_ns(p.actual.p99)))
                .unwrap_or_else(|| "–".into());
            cells.push(cell);
        }
        cells.push(
            data.points
                .iter()
                .find(|p| p.mode == Mode::Hybrid && p.request_ns == r)
                .and_then(|p| p.cpu_ns)
                .map(fmt_ns)
                .unwrap_or_else(|| "–".into()),
        );
        t.row(cells);
    }
    let n_min = data.points.iter().map(|p| p.actual.n).min().unwrap_or(0);
    let n_max = data.points.iter().map(|p| p.actual.n).max().unwrap_or(0);
    let mut out = t.to_markdown();
    out.push_str(&format!(
        "\nEach cell: mean / p99 of the actual length of {}–{} single sleeps. The hybrid \
         sleeper spins the last {} of every sleep.\n",
        fmt_count(n_min),
        fmt_count(n_max),
        fmt_ns(data.margin_ns)
    ));
    Ok(out)
}

fn sweep_plot(record: &Record, p99: bool) -> anyhow::Result<String> {
    let data: SweepData = record.data()?;
    let stat = if p99 { "p99" } else { "mean" };
    let mut plot = Plot::new(
        format!("Requested vs actual sleep ({stat})"),
        "requested (log scale)",
        format!("actual, {stat} (log scale)"),
    )
    .x(Axis::Log, Unit::Nanos)
    .y(Axis::Log, Unit::Nanos);
    let mut requests: Vec<f64> = data.points.iter().map(|p| p.request_ns).collect();
    requests.sort_by(f64::total_cmp);
    requests.dedup();
    for m in Mode::available() {
        let pts: Vec<(f64, f64)> = data
            .points
            .iter()
            .filter(|p| p.mode == *m)
            .map(|p| (p.request_ns, if p99 { p.actual.p99 } else { p.actual.mean }))
            .collect();
        plot = plot.series(Series::new(m.label(), pts));
    }
    let ideal = requests.iter().map(|&r| (r, r)).collect();
    plot = plot.series(Series::new("requested (ideal)", ideal).line_only());
    plot.to_svg()
}

pub fn sweep_mean_plot(record: &Record) -> anyhow::Result<String> {
    sweep_plot(record, false)
}

pub fn sweep_p99_plot(record: &Record) -> anyhow::Result<String> {
    sweep_plot(record, true)
}
