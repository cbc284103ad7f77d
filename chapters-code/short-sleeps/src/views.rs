//! How the chapter's results are shown: Markdown tables, sentences decided by the
//! intervals, the write-up's numbers beside the reader's, and an SVG plot. Every
//! figure is a median over rounds with its 95 % interval; tails pool every sleep of
//! every round and are shown only where enough sleeps support them.

use crate::experiments::{CALLS_EXP, CallsRound, SWEEP_EXP, SweepRound, plan, sweep_key};
use crate::{Mode, Sample, Slack, VARIANTS, fmt_request, fmt_slack, key, sweep_requests};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit};
use harness::reference::{self, RefMachine, Source};
use harness::render::{
    Better, Table, Tails, compare_sentence, fmt_count, fmt_estimate, fmt_ns, fmt_opt_estimate,
    fmt_ratio_estimate, sig3,
};
use harness::render::{capitalise, undecided_text};
use harness::stats::verdict;
use harness::{Dist, Estimate, Results, Unit, View};
use serde::Deserialize;

pub static CALLS: View<CallsRound> = View::table("calls", &CALLS_EXP, calls_table);
pub static SLACK: View<CallsRound> = View::table("slack", &CALLS_EXP, slack_table).brief();
pub static FINDINGS: View<CallsRound> = View::table("findings", &CALLS_EXP, findings).brief();
pub static REFERENCE: View<CallsRound> =
    View::table("reference", &CALLS_EXP, reference_table).brief();
pub static SWEEP_PLOT: View<SweepRound> = View::plot("sweep", &SWEEP_EXP, sweep_plot);
pub static SWEEP_TABLE: View<SweepRound> = View::table("sweep", &SWEEP_EXP, sweep_table).brief();
pub static SWEEP_TAILS: View<SweepRound> =
    View::table("sweep-tails", &SWEEP_EXP, sweep_tails_table).brief();
pub static SWEEP_CPU: View<SweepRound> =
    View::table("sweep-cpu", &SWEEP_EXP, sweep_cpu_table).brief();

/// The low slack the result was measured with (1 ns unless set).
fn low_slack<R>(r: &Results<R>) -> u64 {
    r.param("low_slack_ns").map_or(1, |v| v as u64)
}

fn param_count<R>(r: &Results<R>, name: &str) -> String {
    r.param(name)
        .map_or_else(|| "?".into(), |v| fmt_count(v as u64))
}

// ---------------------------------------------------------------------------------
// `calls`
// ---------------------------------------------------------------------------------

/// Median over rounds of a per-loop value of one cell.
fn per_loop(
    r: &Results<CallsRound>,
    key: &str,
    f: impl Fn(&Sample) -> Option<f64>,
) -> Option<Estimate> {
    r.estimate_of(|round| round.find(key).and_then(|l| f(&l.sample)))
}

/// A count per call, to two decimals.
fn per_call_count(e: Option<Estimate>) -> String {
    e.map_or_else(|| "–".into(), |e| format!("{:.2}", e.median))
}

/// The timer slack the rounds found on the measuring thread: one value, or a range.
fn thread_slack(r: &Results<CallsRound>) -> Option<String> {
    let v: Vec<u64> = r.data().filter_map(|x| x.thread_slack_ns).collect();
    let (lo, hi) = (*v.iter().min()?, *v.iter().max()?);
    Some(if lo == hi {
        fmt_slack(lo)
    } else {
        format!("{}–{}", fmt_slack(lo), fmt_slack(hi))
    })
}

/// Every variant with the thread's own slack: time, CPU and context switches per call.
fn calls_table(r: &Results<CallsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "call",
        "time per call",
        "CPU per call",
        "blocked",
        "preempted",
    ]);
    for v in VARIANTS {
        let k = v.call.name();
        let Some(e) = r.estimate(&k) else {
            t.row([k, "not measured (see the notes)".into()]);
            continue;
        };
        t.row([
            k.clone(),
            fmt_estimate(&e, Unit::Nanos),
            fmt_opt_estimate(per_loop(r, &k, |s| s.cpu_ns), Unit::Nanos),
            per_call_count(per_loop(r, &k, |s| s.voluntary)),
            per_call_count(per_loop(r, &k, |s| s.involuntary)),
        ]);
    }
    anyhow::ensure!(
        r.rounds.iter().any(|x| !x.data.loops.is_empty()),
        "no variant could run on this machine"
    );
    Ok(format!(
        "{}\nEach round times one loop of every call: {} calls per loop, {} for the calls \
         that take milliseconds (the 1 ms sleeps and tokio's). *Time per call* and *CPU per \
         call* (the measuring thread's own CPU time) are medians over the {} rounds, with \
         95 % confidence intervals for this machine's medians in brackets. Both come from \
         one bracket around the loop, the CPU clock read inside the wall clock, so that they \
         cover the same calls and CPU per call cannot exceed time per call. *Blocked* and \
         *preempted* are the thread's voluntary and involuntary context switches per call \
         (`getrusage`, read outside both clocks), medians over the rounds: a call that \
         really slept blocked about once.\n",
        t.to_markdown(),
        param_count(r, "calls"),
        param_count(r, "slow_calls"),
        r.rounds.len()
    ))
}

/// The sleeping variants with the thread's slack and with the low slack, and the
/// per-round ratio where the two intervals are apart.
fn slack_table(r: &Results<CallsRound>) -> anyhow::Result<String> {
    if !crate::experiments::LOW_SLACK_HERE {
        return Ok(
            "Timer slack is a Linux feature (`prctl(PR_SET_TIMERSLACK)`); this system \
                   has no such setting, so there is nothing to compare.\n"
                .into(),
        );
    }
    let low = low_slack(r);
    let default = thread_slack(r).map_or_else(
        || "default slack".to_string(),
        |s| format!("default slack ({s})"),
    );
    let mut t = Table::new([
        "call".to_string(),
        default,
        format!("slack {}", fmt_slack(low)),
        "default ÷ low".to_string(),
    ]);
    for v in VARIANTS.iter().filter(|v| v.call.sleeps()) {
        let (dk, lk) = (
            key(v.call, Slack::Default, low),
            key(v.call, Slack::Low, low),
        );
        let (Some(de), Some(le)) = (r.estimate(&dk), r.estimate(&lk)) else {
            continue;
        };
        let ratio = match undecided_text(verdict(&de, &le)) {
            Some(text) => text,
            None => r
                .ratio(&dk, &lk)
                .map_or_else(|| "–".into(), |x| fmt_ratio_estimate(&x)),
        };
        t.row([
            v.call.name(),
            fmt_estimate(&de, Unit::Nanos),
            fmt_estimate(&le, Unit::Nanos),
            ratio,
        ]);
    }
    anyhow::ensure!(
        !t.is_empty(),
        "no sleeping call ran with both slack settings"
    );
    Ok(format!(
        "{}\nBoth columns come from the same rounds: each round runs every call once with the \
         thread's slack and once after `prctl(PR_SET_TIMERSLACK, {low})`. *Default ÷ low* is \
         the median of the rounds' own ratios, with its interval; where the two columns' \
         intervals overlap it says so instead.\n",
        t.to_markdown()
    ))
}

/// A call's name as a sentence shows it: in code type, except the empty loop.
fn code(call: &str) -> String {
    if call == "empty loop" {
        "the empty loop".into()
    } else {
        format!("`{call}`")
    }
}

/// The comparisons the page draws: (key a, key b, name a, name b). Pairs whose keys
/// this system does not measure are left out when the findings are written.
pub fn finding_pairs(low: u64) -> Vec<(String, String, String, String)> {
    let s = fmt_slack(low);
    let slack = |call: &str| {
        (
            format!("{call} · slack {s}"),
            call.to_string(),
            format!("{} with slack {s}", code(call)),
            format!("{} with the default slack", code(call)),
        )
    };
    let plain = |a: &str, b: &str| (a.to_string(), b.to_string(), code(a), code(b));
    vec![
        slack("nanosleep(1 ns)"),
        slack("timerfd re-armed (1 ns)"),
        slack("timerfd per call (1 ns)"),
        slack("timerfd interval (1 ns)"),
        (
            "timerfd re-armed (1 ns)".to_string(),
            "nanosleep(1 ns)".to_string(),
            code("timerfd re-armed (1 ns)"),
            format!("{} with the default slack", code("nanosleep(1 ns)")),
        ),
        (
            format!("timerfd re-armed (1 ns) · slack {s}"),
            format!("nanosleep(1 ns) · slack {s}"),
            format!("{} with slack {s}", code("timerfd re-armed (1 ns)")),
            format!("{} with slack {s}", code("nanosleep(1 ns)")),
        ),
        plain("nanosleep(0)", "nanosleep(1 ns)"),
        plain("sched_yield()", "yield_now()"),
        plain("pselect(0)", "sched_yield()"),
        plain("thread::sleep(0)", "nanosleep(0)"),
        plain("thread::sleep(0)", "empty loop"),
        plain("Sleep(0)", "SleepEx(0, FALSE)"),
        plain("Sleep(0)", "yield_now()"),
        plain("tokio::time::sleep(1 ms)", "thread::sleep(1 ms)"),
    ]
}

/// Sentences decided by the intervals: what this run shows, and what it cannot tell.
fn findings(r: &Results<CallsRound>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    for (a, b, an, bn) in finding_pairs(low_slack(r)) {
        let (Some(ae), Some(be)) = (r.estimate(&a), r.estimate(&b)) else {
            continue;
        };
        out.push(compare_sentence(
            (&an, &ae),
            (&bn, &be),
            r.ratio(&a, &b).as_ref(),
            Better::Lower,
        ));
    }
    anyhow::ensure!(!out.is_empty(), "no pair of calls has results to compare");
    Ok(out
        .iter()
        .map(|s| format!("- {}.\n", capitalise(s)))
        .collect())
}

// ---------------------------------------------------------------------------------
// The write-up's numbers
// ---------------------------------------------------------------------------------

/// A value as the write-up published it: a central value and the half-width of its
/// 99.9 % confidence interval, per call or (with `per`) per loop of that many calls.
#[derive(Debug, Clone, Deserialize)]
pub struct RefValue {
    pub mean: f64,
    pub ci: f64,
    #[serde(default)]
    pub per: Option<f64>,
}

impl RefValue {
    /// Per call: as published, or divided by the loop's calls (our division).
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

impl RefRow {
    pub fn on(&self, os: &str) -> Option<&RefValue> {
        match os {
            "linux" => self.linux.as_ref(),
            "macos" => self.macos.as_ref(),
            "windows" => self.windows.as_ref(),
            _ => None,
        }
    }
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

/// The reader's OS as the reference data names it, and as a column header.
pub fn this_os() -> Option<(&'static str, &'static str)> {
    if cfg!(target_os = "linux") {
        Some(("linux", "Linux 4.1"))
    } else if cfg!(target_os = "macos") {
        Some(("macos", "OS X 10.10"))
    } else if cfg!(windows) {
        Some(("windows", "Windows 10"))
    } else {
        None
    }
}

/// A value of theirs: as published where it was published per call (whole
/// nanoseconds), and to three significant digits where we divided a per-loop value.
fn fmt_ref(v: Option<&RefValue>) -> String {
    v.map_or_else(
        || "–".into(),
        |v| match v.per {
            Some(_) => {
                let (m, ci) = v.per_call();
                format!("{} ± {}", sig3(m), sig3(ci))
            }
            None => format!(
                "{} ± {}",
                fmt_count(v.mean.round() as u64),
                fmt_count(v.ci.round() as u64)
            ),
        },
    )
}

fn ref_attribution(refs: &RefData) -> String {
    let machines: Vec<&RefMachine> = refs.machines.iter().collect();
    reference::attribution(&refs.source, &machines)
}

/// The write-up's per-call numbers on its three systems, as published, and beside
/// them the reader's median for the same call where this system has it.
fn reference_table(r: &Results<CallsRound>) -> anyhow::Result<String> {
    let refs = reference_data()?;
    let mut t = Table::new([
        "call",
        "Windows 10 (ns)",
        "Linux 4.1 (ns)",
        "OS X 10.10 (ns)",
        "yours",
    ]);
    for row in &refs.rows {
        let yours = VARIANTS
            .iter()
            .find(|v| v.id == row.id)
            .and_then(|v| r.estimate(&v.call.name()));
        t.row([
            row.label.clone(),
            fmt_ref(row.windows.as_ref()),
            fmt_ref(row.linux.as_ref()),
            fmt_ref(row.macos.as_ref()),
            fmt_opt_estimate(yours, Unit::Nanos),
        ]);
    }
    let compare = this_os().map_or_else(
        || {
            "The write-up measured none of this system's kind, so no column of theirs \
            matches yours."
                .to_string()
        },
        |(_, name)| {
            format!(
                "Set *yours* beside the {name} column, the write-up's system of the same \
                 kind; the difference mixes hardware, kernel and compiler, so read it as \
                 what changed, not as a score."
            )
        },
    );
    Ok(format!(
        "{}\n{} The first three columns are the write-up's: its value for one call ± the \
         half-width of the 99.9 % confidence interval it gives, in nanoseconds; that the value is a mean over \
         its repetitions is our reading (the write-up does not say how it computed the value \
         or the interval). It published the empty loop and some zero-length sleeps per loop \
         of 3,000 calls; those are divided by 3,000 here (our division, to three significant \
         digits), and the rest stand as published. *sleep_for* is the \
         C++ call it measured, *thread::sleep* the Rust call measured here. *Yours* is this \
         machine's median over rounds with its 95 % confidence interval, with the thread's own \
         slack (the line below says how it was measured). {compare} A dash: not measured on \
         that system.\n",
        t.to_markdown(),
        ref_attribution(&refs)
    ))
}

// ---------------------------------------------------------------------------------
// `sweep`
// ---------------------------------------------------------------------------------

/// The modes that have at least one result, in their fixed order.
fn sweep_modes(r: &Results<SweepRound>) -> Vec<Mode> {
    Mode::available()
        .iter()
        .copied()
        .filter(|m| r.data().any(|x| x.points.iter().any(|p| p.mode == *m)))
        .collect()
}

fn request_ns() -> Vec<f64> {
    sweep_requests()
        .iter()
        .map(|d| d.as_nanos() as f64)
        .collect()
}

/// Every round's lateness at one point, pooled.
fn pooled(r: &Results<SweepRound>, mode: Mode, request_ns: f64) -> Dist {
    let mut d = Dist::new();
    for round in r.data() {
        if let Some(p) = round.find(mode, request_ns) {
            d.merge(&p.late);
        }
    }
    d
}

fn request_label(ns: f64) -> String {
    fmt_request(std::time::Duration::from_nanos(ns as u64))
}

/// A way of sleeping as a column header: short, with [`legend`] to explain it.
fn column(m: Mode, low: u64) -> String {
    match m {
        Mode::SleepLowSlack => format!("slack {}", fmt_slack(low)),
        m => m.label(low),
    }
}

/// The sentence that explains the short column headers of the sweep's tables.
fn legend(modes: &[Mode], low: u64) -> String {
    if modes.contains(&Mode::SleepLowSlack) {
        format!(
            "*Slack {}* is `thread::sleep` after `prctl(PR_SET_TIMERSLACK, {low})`.",
            fmt_slack(low)
        )
    } else {
        String::new()
    }
}

/// Median lateness per round against the request, with the intervals as bars.
fn sweep_plot(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let low = low_slack(r);
    let mut plot = Plot::new(
        "how late a sleep ends, by the length asked for",
        "requested length (log scale; bars: 95 % intervals over rounds)",
        "median lateness per round (log scale)",
    )
    .x(Axis::Log, PlotUnit::Nanos)
    .y(Axis::Log, PlotUnit::Nanos);
    for m in sweep_modes(r) {
        let points = request_ns()
            .into_iter()
            .filter_map(|q| Some((q, r.estimate(&sweep_key(m, q, low))?)))
            .collect();
        plot = plot.series(Series::estimates(m.label(low), points));
    }
    plot.to_svg()
}

/// Median lateness per round, with intervals, one column per way of sleeping.
fn sweep_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let low = low_slack(r);
    let modes = sweep_modes(r);
    anyhow::ensure!(!modes.is_empty(), "no way of sleeping has a result");
    let mut headers = vec!["requested".to_string()];
    headers.extend(modes.iter().map(|m| column(*m, low)));
    let mut t = Table::new(headers);
    for q in request_ns() {
        let mut row = vec![request_label(q)];
        row.extend(
            modes
                .iter()
                .map(|m| fmt_opt_estimate(r.estimate(&sweep_key(*m, q, low)), Unit::Nanos)),
        );
        t.row(row);
    }
    Ok(format!(
        "{}\nHow late each sleep ended (actual − requested): in each round, the median over \
         that round's sleeps of one length; in the table, the median over the {} rounds with \
         a 95 % confidence interval for this machine's median. {}\n",
        t.to_markdown(),
        r.rounds.len(),
        legend(&modes, low)
    ))
}

/// The pooled tail of the lateness: p99 where every point of a row pooled at least
/// 1,000 sleeps, the maximum otherwise (the row says which).
fn sweep_tails_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let low = low_slack(r);
    let modes = sweep_modes(r);
    anyhow::ensure!(!modes.is_empty(), "no way of sleeping has a result");
    let mut headers = vec!["requested · tail".to_string()];
    headers.extend(modes.iter().map(|m| column(*m, low)));
    let mut t = Table::new(headers);
    let (mut fewest, mut most) = (u64::MAX, 0u64);
    for q in request_ns() {
        let dists: Vec<Dist> = modes.iter().map(|m| pooled(r, *m, q)).collect();
        let n = dists.iter().map(Dist::len).min().unwrap_or(0);
        if n == 0 {
            continue;
        }
        fewest = fewest.min(n);
        most = most.max(dists.iter().map(Dist::len).max().unwrap_or(0));
        let p99 = Tails::for_counts(dists.iter().map(Dist::len)).p99;
        let mut row = vec![format!(
            "{} · {}",
            request_label(q),
            if p99 { "p99" } else { "max" }
        )];
        row.extend(dists.iter().map(|d| {
            d.summary().map_or_else(
                || "–".into(),
                |s| fmt_ns(if p99 { s.p99.unwrap_or(s.max) } else { s.max }),
            )
        }));
        t.row(row);
    }
    anyhow::ensure!(!t.is_empty(), "no point has a sleep to pool");
    Ok(format!(
        "{}\nThe tail of the lateness, pooling every sleep of every round: from {} sleeps per \
         point (long requests) to {} (short ones). A row shows the 99th percentile where each \
         of its points pooled at least 1,000 sleeps, and the maximum where any pooled fewer. \
         {}\n",
        t.to_markdown(),
        fmt_count(fewest),
        fmt_count(most),
        legend(&modes, low)
    ))
}

/// What accuracy costs: the measuring thread's CPU time per sleep, native and hybrid,
/// and how long the hybrid spun.
fn sweep_cpu_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let low = low_slack(r);
    let cpu = |m: Mode, q: f64| r.estimate_of(|x| x.find(m, q).and_then(|p| p.cpu_ns));
    let spun = |q: f64| r.estimate_of(|x| x.find(Mode::Hybrid, q).and_then(|p| p.spun_ns));
    let mut t = Table::new([
        "requested".to_string(),
        format!("{}: CPU", Mode::Sleep.label(low)),
        format!("{}: CPU", Mode::Hybrid.label(low)),
        format!("{}: spinning", Mode::Hybrid.label(low)),
    ]);
    for q in request_ns() {
        t.row([
            request_label(q),
            fmt_opt_estimate(cpu(Mode::Sleep, q), Unit::Nanos),
            fmt_opt_estimate(cpu(Mode::Hybrid, q), Unit::Nanos),
            fmt_opt_estimate(spun(q), Unit::Nanos),
        ]);
    }
    let margin = r
        .estimate_of(|x| Some(x.margin_ns))
        .map_or_else(|| "–".into(), |m| fmt_estimate(&m, Unit::Nanos));
    Ok(format!(
        "{}\n*CPU* is the measuring thread's CPU time per sleep: in each round, the CPU time \
         over a point's whole batch divided by its sleeps (so it includes timing each sleep); \
         here the median over rounds with its 95 % confidence interval. *Spinning* is how long \
         the hybrid sleeper spun, yielding, per sleep: from the moment its native sleep woke \
         to the deadline, or the whole request where the request was no longer than its \
         margin. The margin, calibrated in each round's process, had a median over rounds of \
         {margin}. Where the native sleep wakes later than the margin allows for, there is \
         little or nothing left to spin, and the hybrid ends late by the difference.\n",
        t.to_markdown()
    ))
}

/// The keys every view of `calls` may read, for tests: those of the plan.
pub fn calls_keys(low: u64) -> Vec<String> {
    plan().iter().map(|(v, s)| key(v.call, *s, low)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_data_parses_and_divides_per_loop_values() {
        let refs = reference_data().unwrap();
        let gt = refs.rows.iter().find(|r| r.id == "ground-truth").unwrap();
        let (m, ci) = gt.linux.as_ref().unwrap().per_call();
        assert!((m - 604.0 / 3000.0).abs() < 1e-9 && (ci - 44.0 / 3000.0).abs() < 1e-9);
        assert_eq!(fmt_ref(gt.linux.as_ref()), "0.201 ± 0.0147");
        let nanosleep = refs.rows.iter().find(|r| r.id == "nanosleep-1ns").unwrap();
        assert_eq!(fmt_ref(nanosleep.linux.as_ref()), "498,693 ± 353");
        assert_eq!(fmt_ref(None), "–");
    }

    #[test]
    fn findings_name_only_keys_the_plan_measures_or_other_systems_do() {
        let keys = calls_keys(1);
        let mut missing = Vec::new();
        for (a, b, ..) in finding_pairs(1) {
            for k in [a, b] {
                if !keys.contains(&k) {
                    missing.push(k);
                }
            }
        }
        if cfg!(target_os = "linux") {
            // Only the Windows calls are absent on Linux.
            assert!(
                missing
                    .iter()
                    .all(|k| k.starts_with("Sleep") || k.starts_with("SleepEx")),
                "{missing:?}"
            );
        }
        assert_eq!(code("empty loop"), "the empty loop");
    }
}
