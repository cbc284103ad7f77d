//! How the chapter's results are shown: Markdown tables, sentences decided by the
//! intervals, the write-up's numbers beside the reader's, and an SVG plot. Every
//! figure is a median over rounds with its 95 % interval; tails pool every sleep of
//! every round and are shown only where enough sleeps support them.

use crate::experiments::{
    CALLS_EXP, CallsKey, CallsRound, MS_EXP, MsRound, SWEEP_EXP, SweepKey, SweepRound,
    TOKIO_REQUESTS_US, YIELD_EXP, YieldKey, YieldRound, bin_label, plan,
};
use crate::{
    Call, MS1, Mode, MsArm, NS1, PHASE_BINS, Sample, Slack, TICK_NS, Timerfd, VARIANTS, ZERO,
    bin_centre_ns, fmt_request, fmt_slack, sweep_requests, tick_models,
};
use harness::cells;
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit};
use harness::reference::Published;
use harness::render::{
    Better, Cell, Formatted, Table, Tails, answer_block, capitalise, comparison_sentence,
    fmt_count, fmt_estimate, fmt_ns, fmt_opt_estimate, ratio_cell, sig3,
};
use harness::{Dist, Estimate, ReadingKey, Results, Unit, View};
use serde::Deserialize;
use std::time::Duration;

pub static ANSWER: View<CallsRound> = View::table("answer", &CALLS_EXP, answer);
pub static CALLS: View<CallsRound> = View::table("calls", &CALLS_EXP, calls_table).brief();
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
pub static TOKIO_PLOT: View<MsRound> = View::plot("tokio-phase", &MS_EXP, tokio_plot);
pub static TOKIO_TABLE: View<MsRound> = View::table("tokio-phase", &MS_EXP, tokio_table).brief();
pub static ONE_MS: View<MsRound> = View::table("one-ms", &MS_EXP, one_ms_table).brief();
pub static YIELD_TABLE: View<YieldRound> = View::table("yield", &YIELD_EXP, yield_table);

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
    key: &CallsKey,
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
        "waiting for a CPU",
    ]);
    for v in VARIANTS {
        let (k, name) = (CallsKey::of(v.call), v.call.name());
        let Some(e) = r.estimate(&k) else {
            t.row([name, "not measured (see the notes)".into()]);
            continue;
        };
        t.row(cells![
            name,
            fmt_estimate(&e, Unit::Nanos),
            fmt_opt_estimate(per_loop(r, &k, |s| s.cpu_ns), Unit::Nanos),
            per_call_count(per_loop(r, &k, |s| s.voluntary)),
            per_call_count(per_loop(r, &k, |s| s.involuntary)),
            fmt_opt_estimate(per_loop(r, &k, |s| s.run_delay_ns), Unit::Nanos),
        ]);
    }
    anyhow::ensure!(
        r.rounds.iter().any(|x| !x.data.loops.is_empty()),
        "no variant could run on this machine"
    );
    let (cpu_read, cpu_per_call, wall_read, excess) = clock_costs(r);
    Ok(format!(
        "{}\nEach round times one loop of every call: {} calls per loop, {} for the calls \
         that take milliseconds (the 1 ms sleeps and tokio's). *Time per call* and *CPU per \
         call* (the measuring thread's own CPU time) are medians over the {} rounds, with \
         95 % confidence intervals for this machine's medians in brackets. Both come from \
         one bracket around the loop, the wall clock read inside the CPU clock: the timed \
         window holds the calls and no CPU-clock read (one costs {cpu_read} here, a system \
         call{cpu_per_call}), and the CPU window holds the two wall-clock stamps ({wall_read} \
         a read) and about one CPU-clock read, so CPU per call may exceed time per call by \
         about that much divided by the calls{excess}. *Blocked* and \
         *preempted* are the thread's voluntary and involuntary context switches per call \
         (`getrusage`, read outside both clocks), medians over the rounds: a call that \
         really slept blocked about once. *Waiting for a CPU* is the time per call the \
         thread was runnable but not running (its run-queue delay, from \
         `/proc/thread-self/schedstat`; Linux only).\n",
        t.to_markdown(),
        param_count(r, "calls"),
        param_count(r, "slow_calls"),
        r.rounds.len()
    ))
}

/// What one read of each clock cost, medians over rounds, and what the CPU-clock read
/// would have added to a call's time inside the window, in words for the calls table.
fn clock_costs(r: &Results<CallsRound>) -> (String, String, String, String) {
    let wall = r.estimate_of(|x| x.clock_read_ns);
    let cpu = r.estimate_of(|x| x.cpu_clock_read_ns);
    let calls = r.param("calls").unwrap_or(0.0);
    let f = |e: &Option<Estimate>| {
        e.as_ref()
            .map_or_else(|| "–".into(), |e| est(e).to_string())
    };
    let per_call = match (&cpu, calls > 0.0) {
        (Some(c), true) => format!(
            "; two inside the window would add {} to each call of a {}-call loop",
            fmt_ns(2.0 * c.median / calls),
            fmt_count(calls as u64)
        ),
        _ => String::new(),
    };
    let excess = match (&cpu, &wall, calls > 0.0) {
        (Some(c), Some(w), true) => format!(
            " (here about {} per call in a {}-call loop)",
            fmt_ns((c.median + 2.0 * w.median) / calls),
            fmt_count(calls as u64)
        ),
        _ => String::new(),
    };
    (f(&cpu), per_call, f(&wall), excess)
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
        format!("blocked: default · {}", fmt_slack(low)),
        format!("CPU per call, slack {}", fmt_slack(low)),
    ]);
    for v in VARIANTS.iter().filter(|v| v.call.sleeps()) {
        let (dk, lk) = (
            CallsKey::with(v.call, Slack::Default, low),
            CallsKey::with(v.call, Slack::Low, low),
        );
        let (Some(de), Some(le)) = (r.estimate(&dk), r.estimate(&lk)) else {
            continue;
        };
        let ratio = r
            .compare(&dk, &lk)
            .map_or_else(|| Formatted::plain("–"), |c| ratio_cell(&c));
        let blocked = Cell::join(
            [
                per_call_count(per_loop(r, &dk, |s| s.voluntary)).into(),
                per_call_count(per_loop(r, &lk, |s| s.voluntary)).into(),
            ],
            " · ",
        );
        t.row(cells![
            v.call.name(),
            fmt_estimate(&de, Unit::Nanos),
            fmt_estimate(&le, Unit::Nanos),
            ratio,
            blocked,
            fmt_opt_estimate(per_loop(r, &lk, |s| s.cpu_ns), Unit::Nanos),
        ]);
    }
    anyhow::ensure!(
        !t.is_empty(),
        "no sleeping call ran with both slack settings"
    );
    Ok(format!(
        "{}\nBoth columns come from the same rounds: each round runs every call once with the \
         thread's slack and once after `prctl(PR_SET_TIMERSLACK, {low})`. *Default ÷ low* is \
         the median of the rounds' own ratios, with its interval, where the book's rule finds \
         a difference; elsewhere the cell gives the rule's words instead. *Blocked* is the thread's voluntary context \
         switches per call with each slack, medians over the rounds (0.00: in the median round, \
         fewer than one call in 200 blocked), and *CPU per call* the measuring thread's own CPU \
         time with the low slack, as in the calls table.\n",
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

/// A comparison the page draws: reading a, reading b, name a, name b, and the call
/// both share where they differ only in the slack (the sentence then names it once,
/// first).
pub type FindingPair = (CallsKey, CallsKey, String, String, Option<String>);

/// The comparisons the page draws. Pairs whose readings this system does not measure
/// are left out when the findings are written.
pub fn finding_pairs(low: u64) -> Vec<FindingPair> {
    let s = fmt_slack(low);
    let named = |call: Call| code(&call.name());
    let slack = |call: Call| {
        (
            CallsKey::low_slack(call, low),
            CallsKey::of(call),
            format!("slack {s}"),
            "the default slack".to_string(),
            Some(named(call)),
        )
    };
    let plain = |a: Call, b: Call| (CallsKey::of(a), CallsKey::of(b), named(a), named(b), None);
    let (nano, rearmed) = (Call::Nanosleep(NS1), Call::Timerfd(Timerfd::Rearmed, NS1));
    vec![
        slack(nano),
        slack(rearmed),
        slack(Call::Timerfd(Timerfd::PerCall, NS1)),
        slack(Call::Timerfd(Timerfd::Interval, NS1)),
        (
            CallsKey::of(rearmed),
            CallsKey::of(nano),
            named(rearmed),
            format!("{} with the default slack", named(nano)),
            None,
        ),
        (
            CallsKey::low_slack(rearmed, low),
            CallsKey::low_slack(nano, low),
            format!("{} with slack {s}", named(rearmed)),
            format!("{} with slack {s}", named(nano)),
            None,
        ),
        plain(Call::Nanosleep(ZERO), nano),
        plain(Call::SchedYield, Call::YieldNow),
        plain(Call::Pselect(ZERO), Call::SchedYield),
        plain(Call::StdSleep(ZERO), Call::Nanosleep(ZERO)),
        plain(Call::StdSleep(ZERO), Call::Nothing),
        plain(Call::Sleep(0), Call::SleepEx(0)),
        plain(Call::Sleep(0), Call::YieldNow),
        plain(Call::TokioSleep(MS1), Call::StdSleep(MS1)),
    ]
}

/// Sentences decided by the intervals: what this run shows, and what it cannot tell.
fn findings(r: &Results<CallsRound>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    for (a, b, an, bn, call) in finding_pairs(low_slack(r)) {
        // Judged on the rounds' pairs; a "faster" sentence prints b ÷ a from the
        // rounds, exactly the slack table's *default ÷ low*.
        let Some(c) = r.compare(&a, &b) else {
            continue;
        };
        let sentence = comparison_sentence(&an, &bn, &c, Better::Lower);
        out.push(match call {
            Some(call) => format!("{call}: {sentence}"),
            None => sentence,
        });
    }
    anyhow::ensure!(!out.is_empty(), "no pair of calls has results to compare");
    if let Some(line) = twin_sentence(r) {
        out.push(line);
    }
    Ok(out
        .iter()
        .map(|s| format!("- {}.\n", capitalise(s)))
        .collect())
}

/// The A/A self-check: the twin arm against its original, by the same rule.
fn twin_sentence(r: &Results<CallsRound>) -> Option<String> {
    let twin = plan().into_iter().find(|c| c.twin)?;
    let call = twin.variant.call;
    let c = r.compare(&CallsKey::of(call), &twin.key(low_slack(r)))?;
    Some(harness::render::aa_sentence(
        &code(&call.name()),
        None,
        &format!("{} per call", est(&c.a)),
        &est(&c.b).to_string(),
        &c,
        Better::Lower,
    ))
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

/// The write-up's numbers, with its source and machines (`Published`).
pub type RefData = Published<RefRows>;

#[derive(Debug, Clone, Deserialize)]
pub struct RefRows {
    pub rows: Vec<RefRow>,
}

pub const REFERENCE_TOML: &str = include_str!("../../../assets/reference/short-sleeps.toml");

pub fn reference_data() -> anyhow::Result<RefData> {
    Published::load(REFERENCE_TOML)
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
            .and_then(|v| r.estimate(&CallsKey::of(v.call)));
        t.row(cells![
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
    // The one count of context switches the write-up gives, beside this run's.
    let call = Call::Timerfd(Timerfd::Interval, NS1);
    let (key, interval) = (CallsKey::of(call), call.name());
    let switches = match (
        per_loop(r, &key, |s| s.voluntary),
        per_loop(r, &key, |s| s.involuntary),
    ) {
        (Some(v), Some(i)) => format!(
            " Context switches: for its interval timerfd the write-up reports \"about 3000 \
             context switches\" (counted with GNU Time), which we read as about one per call \
             of its 3,000-call loop; here `{interval}` *blocked* {:.2} and was *preempted* \
             {:.2} times per call (calls table).",
            v.median, i.median
        ),
        _ => String::new(),
    };
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
         that system.{switches}\n",
        t.to_markdown(),
        refs.attribution()
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
    harness::render::pooled(r.data(), |round| {
        round.find(mode, request_ns).map(|p| &p.late)
    })
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

/// The reading of a sweep point: how late the sleeps of `request_ns` in `mode` ended.
fn late(mode: Mode, request_ns: f64, low: u64) -> SweepKey {
    SweepKey::late(mode, request_ns as u64, low)
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
            .filter_map(|q| Some((q, r.estimate(&late(m, q, low))?)))
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
        let mut row: Vec<Cell> = vec![request_label(q).into()];
        row.extend(modes.iter().map(|m| {
            let cell = fmt_opt_estimate(r.estimate(&late(*m, q, low)), Unit::Nanos);
            match blocked_share(r, *m, q) {
                Some(b) => Cell::join([cell, harness::render::fmt_percent(b).into()], " · "),
                None => cell.into(),
            }
        }));
        t.row(row);
    }
    Ok(format!(
        "{}\nHow late each sleep ended (actual − requested): in each round, the median over \
         that round's sleeps of one length; in the table, the median over the {} rounds with \
         a 95 % confidence interval for this machine's median. After the dot, the share of \
         that point's sleeps that **blocked** (the thread's voluntary context switches, read \
         with `getrusage` just before each sleep's start stamp and just after its end stamp, \
         went up), pooled over every round: a sleep that did not block returned before the \
         thread was put to sleep, because its timer had already expired. {}\n\n{}",
        t.to_markdown(),
        r.rounds.len(),
        legend(&modes, low),
        harness::render::findings(sweep_growth(r, &modes, low))
    ))
}

/// The share of a point's sleeps that blocked, pooled over every round (each round
/// weighted by its sleeps); `None` where no round could tell.
fn blocked_share(r: &Results<SweepRound>, mode: Mode, request_ns: f64) -> Option<f64> {
    let (mut blocked, mut all) = (0.0, 0.0);
    for p in r.data().filter_map(|x| x.find(mode, request_ns)) {
        let (Some(b), n) = (p.blocked_share, p.late.len() as f64) else {
            continue;
        };
        blocked += b * n;
        all += n;
    }
    (all > 0.0).then(|| blocked / all)
}

/// A point whose sleeps blocked: at least this share of them, pooled over rounds.
pub const BLOCKED_POINT: f64 = 0.9;

/// For each native way of sleeping, its lateness at the shortest request whose sleeps
/// blocked against the longest request, by the verdict rule: does a longer sleep end
/// later? Only points whose sleeps blocked are compared (a sleep that returns without
/// blocking is a different operation); the sentence says which requests did not block.
fn sweep_growth(r: &Results<SweepRound>, modes: &[Mode], low: u64) -> Vec<String> {
    let requests = request_ns();
    let mut out = Vec::new();
    for &m in modes {
        let name = match m {
            Mode::Sleep => "`thread::sleep`".to_string(),
            Mode::SleepLowSlack => format!("`thread::sleep` with slack {}", fmt_slack(low)),
            Mode::TimerFd => "the re-armed timerfd".to_string(),
            Mode::Hybrid => continue,
        };
        let share = |q: f64| blocked_share(r, m, q);
        // Where the OS cannot tell, every point counts as alike.
        let blocked = |q: f64| share(q).is_none_or(|b| b >= BLOCKED_POINT);
        let Some(&last) = requests.iter().rev().find(|&&q| blocked(q)) else {
            continue;
        };
        let Some(&first) = requests.iter().find(|&&q| q < last && blocked(q)) else {
            continue;
        };
        let skipped: Vec<String> = requests
            .iter()
            .filter(|&&q| q < first)
            .map(|&q| {
                // The thread's CPU time per sleep: longer than the request where the
                // timer expired while it was being armed.
                let cpu = r
                    .estimate_of(|x| x.find(m, q).and_then(|p| p.cpu_ns))
                    .map_or_else(String::new, |c| {
                        format!(", {} of CPU a sleep", fmt_ns(c.median))
                    });
                format!(
                    "{} ({} blocked{cpu})",
                    request_label(q),
                    share(q).map_or_else(|| "–".into(), harness::render::fmt_percent)
                )
            })
            .collect();
        let (kf, kl) = (late(m, first, low), late(m, last, low));
        let Some(c) = r.compare(&kl, &kf) else {
            continue;
        };
        let (ef, el) = (c.b, c.a);
        let (lf, ll) = (request_label(first), request_label(last));
        let outcome = comparison_sentence(
            &format!("its lateness at {ll}"),
            &format!("at {lf}"),
            &c,
            Better::Higher,
        );
        let from = if skipped.is_empty() {
            String::new()
        } else {
            format!(
                " (its shortest request whose sleeps blocked; the shorter ones returned \
                 mostly without blocking, a different operation: {})",
                and_list(&skipped)
            )
        };
        out.push(format!(
            "{name} ended {} late at {lf}{from} and {} late at {ll}: {outcome}",
            est(&ef),
            est(&el)
        ));
    }
    out
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
        t.row(cells![
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
         over a point's whole batch divided by its sleeps (so it includes timing each sleep \
         and reading the thread's switch count around it); \
         here the median over rounds with its 95 % confidence interval. *Spinning* is how long \
         the hybrid sleeper spun, yielding, per sleep: from the moment its native sleep woke \
         to the deadline, or the whole request where the request was no longer than its \
         margin. The margin, calibrated in each round's process, had a median over rounds of \
         {margin}. Where the native sleep wakes later than the margin allows for, there is \
         little or nothing left to spin, and the hybrid ends late by the difference.\n",
        t.to_markdown()
    ))
}

// ---------------------------------------------------------------------------------
// The answer
// ---------------------------------------------------------------------------------

/// A lateness or a time per call with its interval: `47.4 µs (35.0–64.9)`.
fn est(e: &Estimate) -> Formatted {
    fmt_estimate(e, Unit::Nanos)
}

/// The sleep calls asked for the shortest time the API accepts: every non-zero request
/// below a millisecond, and `nanosleep(0)`, which arms a timer too (Linux), with each
/// slack; not tokio's (a whole tick) and not the twin. Each with the table that shows
/// its counters.
fn shortest_candidates(low: u64) -> Vec<(CallsKey, String, &'static str)> {
    plan()
        .into_iter()
        .filter(|c| !c.twin && !c.variant.call.slow())
        .filter(|c| {
            let call = c.variant.call;
            call.request()
                .is_some_and(|d| !d.is_zero() || call.sleeps())
        })
        .map(|c| {
            let name = match c.slack {
                Slack::Default => code(&c.variant.call.name()),
                Slack::Low => format!(
                    "{} with slack {}",
                    code(&c.variant.call.name()),
                    fmt_slack(low)
                ),
            };
            let table = match c.slack {
                Slack::Default => "calls",
                Slack::Low => "slack",
            };
            (c.key(low), name, table)
        })
        .collect()
}

/// A list in words: `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The sentences that open the chapter, each decided by the verdict rule.
pub fn answer_sentences(r: &Results<CallsRound>) -> Vec<String> {
    let low = low_slack(r);
    let mut out = Vec::new();
    // The shortest sleep, and the calls this run cannot tell from it.
    let measured: Vec<(CallsKey, String, &str, Estimate)> = shortest_candidates(low)
        .into_iter()
        .filter_map(|(k, n, t)| Some((k, n, t, r.estimate(&k)?)))
        .collect();
    if let Some((best_key, best_name, table, best)) = measured
        .iter()
        .min_by(|a, b| a.3.median.total_cmp(&b.3.median))
    {
        // The calls the rule does not tell from the shortest, with their comparisons.
        let undecided: Vec<(String, harness::stats::Comparison)> = measured
            .iter()
            .filter(|(_, n, ..)| n != best_name)
            .filter_map(|(k, n, ..)| Some((n.clone(), r.compare(k, best_key)?)))
            .filter(|(_, c)| !c.is_clear())
            .collect();
        let ties: Vec<String> = undecided.iter().map(|(n, _)| n.clone()).collect();
        let others = measured.len() - 1;
        // Whether it blocked, with the table that shows the count.
        let blocked = r
            .estimate_of(|x| x.find(best_key).and_then(|l| l.sample.voluntary))
            .map(|b| {
                format!(
                    " ({} *blocked* {:.2} times per call, {table} table)",
                    if b.median < 0.5 {
                        "it returned without blocking:"
                    } else {
                        "it blocked:"
                    },
                    b.median
                )
            })
            .unwrap_or_default();
        // The rule's own words for the undecided pairs.
        let within = harness::render::undecided_lists(
            &undecided
                .iter()
                .map(|(n, c)| (format!("{n} and {best_name}"), *c))
                .collect::<Vec<_>>(),
        )
        .join("; ");
        // Which calls compete, said once: the slow ones are not short sleeps.
        let compared = "sleep calls under 1 ms (tokio's left out: it counts whole \
                        milliseconds)";
        out.push(match ties.len() {
            0 => format!(
                "the shortest return from a sleep call was {}, by {best_name}{blocked}; the \
                 rule finds a difference it may state between it and each of the {others} \
                 other {compared} (the tables below give each one's time)",
                est(best)
            ),
            n if n <= 3 => format!(
                "the shortest return from a sleep call (lowest median) was {}, by \
                 {best_name}{blocked}; this run cannot tell it from {}. {within}",
                est(best),
                and_list(&ties)
            ),
            n => format!(
                "the shortest return from a sleep call (lowest median) was {}, by \
                 {best_name}{blocked}; against {n} of the {others} other {compared} the \
                 rule finds no difference it may state (the tables below list them), so this \
                 run does not single out one call",
                est(best)
            ),
        });
    }
    // Timer slack.
    let slack_read = thread_slack(r);
    let (nano_key, nano_low) = (
        CallsKey::of(Call::Nanosleep(NS1)),
        CallsKey::low_slack(Call::Nanosleep(NS1), low),
    );
    let nano = Call::Nanosleep(NS1).name();
    if let (Some(slack), Some(d), Some(l)) = (
        slack_read.as_ref(),
        r.estimate(&nano_key),
        r.estimate(&nano_low),
    ) {
        let effect = match r.compare(&nano_low, &nano_key) {
            Some(c) => format!(
                "took `{nano}` from {} to {} per call: {}",
                est(&d),
                est(&l),
                comparison_sentence(
                    "the call with the low slack",
                    "with the default",
                    &c,
                    Better::Lower
                )
            ),
            None => format!("took `{nano}` from {} to {} per call", est(&d), est(&l)),
        };
        out.push(format!(
            "the measuring thread's timer slack was {slack}; setting it to {} with \
             `prctl(PR_SET_TIMERSLACK, {low})` {effect}",
            fmt_slack(low)
        ));
    }
    // Offering the CPU without sleeping, and whether it was taken.
    let (sched_yield, pselect) = (
        CallsKey::of(Call::SchedYield),
        CallsKey::of(Call::Pselect(ZERO)),
    );
    if let (Some(y), Some(p)) = (r.estimate(&sched_yield), r.estimate(&pselect)) {
        let switches = |k: &CallsKey| {
            let v = per_loop(r, k, |s| s.voluntary).map(|e| e.median);
            let i = per_loop(r, k, |s| s.involuntary).map(|e| e.median);
            v.zip(i)
        };
        let taken = match (switches(&sched_yield), switches(&pselect)) {
            (Some((yv, yi)), Some((pv, pi))) if yv.max(yi).max(pv).max(pi) < 0.005 => {
                format!(
                    "; neither gave up the CPU in these loops (*blocked* and *preempted* {:.2} \
                     per call for both), where no other thread wanted it, so these loops \
                     cannot show a yield: [a busy thread on the same \
                     CPU](#a-yield-with-someone-to-yield-to) can",
                    yv.max(yi).max(pv).max(pi)
                )
            }
            (Some((yv, yi)), Some((pv, pi))) => format!(
                "; per call `sched_yield()` *blocked* {yv:.2} and was *preempted* {yi:.2} \
                 times, `pselect(0)` {pv:.2} and {pi:.2}"
            ),
            _ => String::new(),
        };
        out.push(format!(
            "without sleeping, `sched_yield()` took {} and `pselect(0)` {} per call{taken}; \
             `thread::sleep(0)` returns without a system call",
            est(&y),
            est(&p)
        ));
    }
    // A 1 ms sleep, and tokio's.
    let (std_ms, tokio_ms) = (
        CallsKey::of(Call::StdSleep(MS1)),
        CallsKey::of(Call::TokioSleep(MS1)),
    );
    if let Some(late) = r.estimate_of(|x| x.find(&std_ms).map(|l| l.sample.ns - TICK_NS as f64)) {
        let mut s = format!(
            "a 1 ms `thread::sleep` in a loop of them ended {} late per call",
            est(&late)
        );
        if let Some(c) = r.compare(&tokio_ms, &std_ms) {
            let tokio_ms = tokio_ms.call.name();
            let cmp = format!(
                "{} per call ({})",
                est(&c.a),
                comparison_sentence("tokio's", "`thread::sleep`'s", &c, Better::Lower)
            );
            s.push_str(&format!(
                "; `{tokio_ms}` took {cmp}, for the reason measured in \
                 [tokio's millisecond timer](#tokios-millisecond-timer)"
            ));
        }
        out.push(s);
    }
    out
}

/// The write-up's own answer, from its published numbers.
fn writeup_line() -> String {
    let Ok(refs) = reference_data() else {
        return String::new();
    };
    let v = |id: &str, os: &str| {
        refs.rows
            .iter()
            .find(|r| r.id == id)
            .and_then(|r| r.on(os))
            .map(|v| fmt_ref(Some(v)))
            .unwrap_or_else(|| "–".into())
    };
    format!(
        "on Linux 4.1 a 1 ns `nanosleep` took {} ns and a 1 ns interval timerfd {} ns, so for \
         short sleeps it found timerfd timers \"far superior to all other variants\"; on OS X \
         10.10 `pselect(1 ns)` took {} ns, and on Windows 10 `Sleep(1)` {} ns.",
        v("nanosleep-1ns", "linux"),
        v("timerfd-interval-1ns", "linux"),
        v("pselect-1ns", "macos"),
        v("win-sleep-1ms", "windows"),
    )
}

fn answer(r: &Results<CallsRound>) -> anyhow::Result<String> {
    let sentences = answer_sentences(r);
    anyhow::ensure!(!sentences.is_empty(), "no call has a result to answer with");
    Ok(answer_block(sentences, &writeup_line()))
}

// ---------------------------------------------------------------------------------
// `millisecond`: tokio's timer by phase, and a 1 ms sleep in context
// ---------------------------------------------------------------------------------

/// A tokio request as the tables name it: `1 ms`, `1.50 ms`.
fn request_us_label(us: u32) -> String {
    fmt_request(std::time::Duration::from_micros(u64::from(us)))
}

/// This round's wake-up cost: the median lateness of its `thread::sleep(1 ms)` sleeps
/// begun at the chosen phases (all bins together).
fn wake_cost(round: &MsRound) -> Option<f64> {
    let v: Vec<f64> = round
        .cells
        .iter()
        .filter(|c| matches!(c.arm, MsArm::Std { .. }))
        .flat_map(|c| c.sleeps.iter().map(|s| s.late_ns))
        .collect();
    median(v)
}

/// The median of `v`, `None` when it is empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(harness::stats::median_sorted(&v))
}

/// How far each reading of tokio's timer misses this round's tokio sleeps: the median
/// over them of |measured lateness − wake-up cost − predicted|, for (next tick, whole
/// ticks).
fn model_misses(round: &MsRound) -> Option<(f64, f64)> {
    let c = wake_cost(round)?;
    let (mut next, mut whole) = (Vec::new(), Vec::new());
    for cell in &round.cells {
        let MsArm::Tokio { request_us, .. } = cell.arm else {
            continue;
        };
        for s in &cell.sleeps {
            let (n, w) = tick_models(f64::from(request_us) * 1e3, s.phase_ns);
            next.push((s.late_ns - c - n).abs());
            whole.push((s.late_ns - c - w).abs());
        }
    }
    if next.is_empty() {
        return None;
    }
    next.sort_by(f64::total_cmp);
    whole.sort_by(f64::total_cmp);
    Some((
        harness::stats::median_sorted(&next),
        harness::stats::median_sorted(&whole),
    ))
}

/// Lateness against the phase at which the sleep began: tokio's two requests and the
/// standard library's 1 ms, with each reading's prediction as a line.
fn tokio_plot(r: &Results<MsRound>) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        "how late a sleep ends, by where in tokio's millisecond tick it began",
        "where in the tick the sleep began (bars: 95 % intervals over rounds)",
        "median lateness per round",
    )
    .x(Axis::Linear, PlotUnit::Nanos)
    .y(Axis::Linear, PlotUnit::Nanos);
    let series = |name: String, arm: &dyn Fn(u32) -> MsArm| {
        let points: Vec<(f64, Estimate)> = (0..PHASE_BINS)
            .filter_map(|b| Some((bin_centre_ns(b) as f64, r.estimate(&arm(b))?)))
            .collect();
        Series::estimates(name, points)
    };
    for us in TOKIO_REQUESTS_US {
        plot = plot.series(series(
            format!("tokio::time::sleep({})", request_us_label(us)),
            &|bin| MsArm::Tokio {
                request_us: us,
                bin,
            },
        ));
    }
    plot = plot.series(series("thread::sleep(1 ms)".into(), &|bin| MsArm::Std {
        request_us: 1_000,
        bin,
    }));
    let c = r
        .estimate_of(wake_cost)
        .ok_or_else(|| anyhow::anyhow!("no thread::sleep(1 ms) to take the wake-up cost from"))?;
    for us in TOKIO_REQUESTS_US {
        let grid: Vec<f64> = (0..=100)
            .map(|i| f64::from(i) * TICK_NS as f64 / 100.0)
            .collect();
        let line = |pick: fn((f64, f64)) -> f64| -> Vec<(f64, f64)> {
            grid.iter()
                .map(|&p| (p, c.median + pick(tick_models(f64::from(us) * 1e3, p))))
                .collect()
        };
        let label = request_us_label(us);
        plot = plot
            .series(
                Series::new(format!("{label}: whole ticks predicts"), line(|m| m.1)).line_only(),
            )
            .series(Series::new(format!("{label}: next tick predicts"), line(|m| m.0)).line_only());
    }
    plot.to_svg()
}

/// This round's median lateness over the sleeps of one kind begun in the first half of
/// the tick (`second` false) or in the second half.
fn half_median(round: &MsRound, tokio: bool, request_us: u32, second: bool) -> Option<f64> {
    let v: Vec<f64> = round
        .cells
        .iter()
        .filter(|c| match c.arm {
            MsArm::Tokio { request_us: u, bin } => {
                tokio && u == request_us && (bin >= PHASE_BINS / 2) == second
            }
            MsArm::Std { request_us: u, bin } => {
                !tokio && u == request_us && (bin >= PHASE_BINS / 2) == second
            }
            MsArm::After { .. } => false,
        })
        .flat_map(|c| c.sleeps.iter().map(|s| s.late_ns))
        .collect();
    median(v)
}

/// What each reading predicts for the second half of the tick minus the first, for a
/// request (the mean over each half of the prediction, on a fine grid).
fn predicted_halves(request_us: u32) -> (f64, f64) {
    let half = |second: bool, pick: fn((f64, f64)) -> f64| {
        let n = 500;
        (0..n)
            .map(|i| {
                let p = (f64::from(i) + 0.5) / f64::from(n) * TICK_NS as f64 / 2.0
                    + if second { TICK_NS as f64 / 2.0 } else { 0.0 };
                pick(tick_models(f64::from(request_us) * 1e3, p))
            })
            .sum::<f64>()
            / f64::from(n)
    };
    (
        half(true, |m| m.0) - half(false, |m| m.0),
        half(true, |m| m.1) - half(false, |m| m.1),
    )
}

/// A signed difference in words: `+1.00 ms`, `−500 µs`, `0`.
fn signed(ns: f64) -> String {
    if ns.abs() < 0.5 {
        "0".into()
    } else if ns > 0.0 {
        format!("+{}", fmt_ns(ns))
    } else {
        format!("−{}", fmt_ns(-ns))
    }
}

/// Sentences that tell the readings of tokio's timer apart: the second half of the
/// tick against the first, for each request, and how far each reading misses.
fn tokio_findings(r: &Results<MsRound>) -> Vec<String> {
    let mut out = Vec::new();
    for (tokio, us) in TOKIO_REQUESTS_US
        .iter()
        .map(|us| (true, *us))
        .chain([(false, 1_000)])
    {
        let Some(c) = r.compare_of(
            |x| half_median(x, tokio, us, true),
            |x| half_median(x, tokio, us, false),
        ) else {
            continue;
        };
        let (a, b) = (c.b, c.a);
        let name = if tokio {
            format!("`tokio::time::sleep({})`", request_us_label(us))
        } else {
            "`thread::sleep(1 ms)`".to_string()
        };
        let outcome = format!(
            "{} in the second half; {}",
            signed(b.median - a.median),
            comparison_sentence(
                "the second half's lateness",
                "the first's",
                &c,
                Better::Higher
            )
        );
        let predicted = if tokio {
            let (next, whole) = predicted_halves(us);
            format!(
                "; *whole ticks* predicts {}, *next tick* {}",
                signed(whole),
                signed(next)
            )
        } else {
            " (the standard library has no tick)".to_string()
        };
        out.push(format!(
            "{name} begun in the first half of a tick ended late by {}, in the second half by \
             {}: {outcome}{predicted}",
            est(&a),
            est(&b)
        ));
    }
    if let Some(c) = r.compare_of(
        |x| model_misses(x).map(|m| m.1),
        |x| model_misses(x).map(|m| m.0),
    ) {
        let (w, n) = (c.a, c.b);
        let judged = comparison_sentence("*whole ticks*' miss", "*next tick*'s", &c, Better::Lower);
        out.push(format!(
            "less the wake-up cost of a plain `thread::sleep(1 ms)` begun at the same phases, \
             *whole ticks* misses each tokio sleep by a median of {}, *next tick* by {}: {judged}",
            est(&w),
            est(&n)
        ));
    }
    out
}

/// Lateness per phase bin, then the sentences that tell the readings apart.
fn tokio_table(r: &Results<MsRound>) -> anyhow::Result<String> {
    let mut headers = vec!["begun into the tick".to_string()];
    headers.extend(
        TOKIO_REQUESTS_US
            .iter()
            .map(|us| format!("tokio::time::sleep({})", request_us_label(*us))),
    );
    headers.push("thread::sleep(1 ms)".into());
    let mut t = Table::new(headers);
    for bin in 0..PHASE_BINS {
        let mut row: Vec<Cell> = vec![bin_label(bin).into()];
        for us in TOKIO_REQUESTS_US {
            row.push(
                fmt_opt_estimate(
                    r.estimate(&MsArm::Tokio {
                        request_us: us,
                        bin,
                    }),
                    Unit::Nanos,
                )
                .into(),
            );
        }
        row.push(
            fmt_opt_estimate(
                r.estimate(&MsArm::Std {
                    request_us: 1_000,
                    bin,
                }),
                Unit::Nanos,
            )
            .into(),
        );
        t.row(row);
    }
    anyhow::ensure!(
        r.rounds.iter().any(|x| !x.data.cells.is_empty()),
        "no sleep of the millisecond experiment ran"
    );
    let grid = r
        .estimate_of(|x| Some(x.origin_uncertainty_ns / 2.0))
        .map_or_else(|| "–".into(), |e| fmt_ns(e.median));
    Ok(format!(
        "{}\nHow late each sleep ended (actual − requested), by where in tokio's tick it \
         began: in each round the median of its sleeps in that tenth of a tick, here the \
         median over the {} rounds with its 95 % interval. The tick grid is placed between \
         the two clock reads around the runtime's `build()`, so a phase is known to within \
         {grid} (median over rounds).\n\n{}",
        t.to_markdown(),
        r.rounds.len(),
        harness::render::findings(tokio_findings(r))
    ))
}

/// A 1 ms sleep right after another and after a long sleep.
fn one_ms_table(r: &Results<MsRound>) -> anyhow::Result<String> {
    let before = r.param("before_ms").map_or(50, |v| v as u32);
    let (short, long) = (
        MsArm::After { before_ms: 1 },
        MsArm::After { before_ms: before },
    );
    let Some(c) = r.compare(&long, &short) else {
        anyhow::bail!("the 1 ms sleeps in context did not run");
    };
    let (a, b) = (c.b, c.a);
    let mut t = Table::new(["`thread::sleep(1 ms)`", "late by"]);
    t.row(cells!["right after a 1 ms sleep", est(&a)]);
    t.row(cells![format!("right after a {before} ms sleep"), est(&b)]);
    let sentence = comparison_sentence(
        &format!("the lateness of a 1 ms sleep right after a {before} ms sleep"),
        "that of one right after a 1 ms sleep",
        &c,
        Better::Higher,
    );
    Ok(format!(
        "{}\nLateness (actual − requested) of single 1 ms sleeps, each right after a sleep of \
         the length given, in the same rounds: medians over rounds with 95 % intervals.\n\n{}",
        t.to_markdown(),
        harness::render::findings([sentence])
    ))
}

// ---------------------------------------------------------------------------------
// `yield`: with and without a busy thread on the same CPU
// ---------------------------------------------------------------------------------

/// A per-loop value of one yield cell, as an estimate over rounds.
fn yield_loop(
    r: &Results<YieldRound>,
    key: &YieldKey,
    f: impl Fn(&Sample) -> Option<f64>,
) -> Option<Estimate> {
    r.estimate_of(|x| x.find(key).and_then(|l| f(&l.sample)))
}

/// Each yielding call pinned to one CPU, alone and with a busy thread pinned beside it.
fn yield_table(r: &Results<YieldRound>) -> anyhow::Result<String> {
    let calls = crate::YIELD_CALLS;
    let mut t = Table::new([
        "call",
        "its CPU",
        "time per call",
        "CPU per call",
        "blocked",
        "preempted",
        "waiting for a CPU",
        "calls per loop",
    ])
    // Words, not a figure: they wrap.
    .align(1, harness::render::Align::Left);
    for call in calls {
        for busy in [false, true] {
            let key = YieldKey { call, busy };
            let Some(e) = r.estimate(&key) else {
                continue;
            };
            let f = |g: fn(&Sample) -> Option<f64>| yield_loop(r, &key, g);
            t.row(cells![
                call.name(),
                if busy {
                    "shared with a busy thread"
                } else {
                    "alone"
                }
                .to_string(),
                fmt_estimate(&e, Unit::Nanos),
                fmt_opt_estimate(f(|s| s.cpu_ns), Unit::Nanos),
                per_call_count(f(|s| s.voluntary)),
                per_call_count(f(|s| s.involuntary)),
                fmt_opt_estimate(f(|s| s.run_delay_ns), Unit::Nanos),
                per_call_count(f(|s| Some(f64::from(s.calls)))).replace(".00", ""),
            ]);
        }
    }
    if t.is_empty() && !cfg!(target_os = "linux") {
        return Ok(
            "This experiment pins two threads to one CPU with `sched_setaffinity`, \
                   which this chapter uses on Linux only; it did not run on this system.\n"
                .into(),
        );
    }
    anyhow::ensure!(!t.is_empty(), "the yield experiment has no loop to show");
    let mut out = Vec::new();
    for call in calls {
        let (a, b) = (
            YieldKey { call, busy: true },
            YieldKey { call, busy: false },
        );
        let name = call.name();
        if let Some(c) = r.compare(&a, &b) {
            out.push(comparison_sentence(
                &format!("{} with a busy thread on its CPU", code(&name)),
                "alone",
                &c,
                Better::Lower,
            ));
        }
        let taken = |g: fn(&Sample) -> Option<f64>| {
            yield_loop(r, &a, g).map(|e| format!("{:.2}", e.median))
        };
        if let (Some(v), Some(i)) = (taken(|s| s.voluntary), taken(|s| s.involuntary)) {
            let wait = yield_loop(r, &a, |s| s.run_delay_ns).map_or_else(String::new, |w| {
                format!(", and waited {} per call for its CPU", est(&w))
            });
            // A mean over calls that switched and calls that did not: per switch instead.
            let per_switch = yield_loop(r, &a, |s| {
                let i = s.involuntary.filter(|i| *i > 0.0)?;
                Some(s.ns / i)
            })
            .map_or_else(String::new, |e| {
                format!(
                    "; its time per call mixes calls that returned at once with calls that \
                     gave the CPU away, so per switch away: {} (the loop's time ÷ its \
                     switches)",
                    est(&e)
                )
            });
            out.push(format!(
                "with the busy thread beside it, {} *blocked* {v} and was *preempted* {i} \
                 times per call (medians over rounds){wait}{per_switch}",
                code(&name)
            ));
        }
    }
    if let [y, p] = calls
        && let Some(c) = r.compare(
            &YieldKey {
                call: p,
                busy: true,
            },
            &YieldKey {
                call: y,
                busy: true,
            },
        )
    {
        out.push(comparison_sentence(
            &format!("{} with a busy thread on its CPU", code(&p.name())),
            &code(&y.name()),
            &c,
            Better::Lower,
        ));
    }
    Ok(format!(
        "{}\nEach round runs four loops, in an order that changes from round to round: each \
         call with the measuring thread pinned to the CPU it was on, once alone and once \
         with a second thread pinned to that CPU that spins for the whole loop. Medians over \
         the {} rounds with 95 % intervals; the counters are the measuring thread's, read as \
         in the calls table (so in loops this short CPU per call can exceed time per call by \
         about one CPU-clock read ÷ the calls). A loop makes `yield_calls` calls ({}) or fewer where its first \
         calls show it would outrun `yield_bound_ms` ({} ms): *calls per loop* is the median \
         count.\n\n{}",
        t.to_markdown(),
        r.rounds.len(),
        param_count(r, "yield_calls"),
        param_count(r, "yield_bound_ms"),
        harness::render::findings(out)
    ))
}

// ---------------------------------------------------------------------------------
// The same calls on other operating systems
// ---------------------------------------------------------------------------------

/// One call of another OS's `calls` result, as the per-OS section shows it: the label,
/// the reading (the call with the thread's own slack: every OS's calls are named in
/// every build, and a test on each OS checks this table against that OS's
/// [`VARIANTS`]), and the write-up's rows for the same call.
pub struct OtherRow {
    pub label: &'static str,
    pub key: CallsKey,
    pub reference: &'static [&'static str],
}

const fn row(label: &'static str, call: Call, reference: &'static [&'static str]) -> OtherRow {
    OtherRow {
        label,
        key: CallsKey::of(call),
        reference,
    }
}

/// Windows: the write-up's set (its `sleep_for` with 0 ns and 0 ms is one call in Rust,
/// whose `Duration` has one zero), then the calls we add.
pub const WINDOWS_ROWS: &[OtherRow] = &[
    row(
        "empty loop (ground truth)",
        Call::Nothing,
        &["ground-truth"],
    ),
    row(
        "thread::sleep(0): sleep_for(0 ns) and sleep_for(0 ms)",
        Call::StdSleep(ZERO),
        &["std-sleep-0", "std-sleep-0ms"],
    ),
    row("Sleep(0)", Call::Sleep(0), &["win-sleep-0"]),
    row("SleepEx(0, FALSE)", Call::SleepEx(0), &["win-sleepex-0"]),
    row("yield_now() (SwitchToThread)", Call::YieldNow, &[]),
    row(
        "thread::sleep(1 ns): sleep_for(1 ns)",
        Call::StdSleep(NS1),
        &["std-sleep-1ns"],
    ),
    row(
        "thread::sleep(1 ms): sleep_for(1 ms)",
        Call::StdSleep(MS1),
        &["std-sleep-1ms"],
    ),
    row("Sleep(1)", Call::Sleep(1), &["win-sleep-1ms"]),
    row("SleepEx(1, FALSE)", Call::SleepEx(1), &["win-sleepex-1ms"]),
    row(
        "high-resolution waitable timer (100 ns)",
        Call::WaitableTimer(Duration::from_nanos(100)),
        &[],
    ),
    row("tokio::time::sleep(1 ns)", Call::TokioSleep(NS1), &[]),
    row("tokio::time::sleep(1 ms)", Call::TokioSleep(MS1), &[]),
];

/// macOS: the write-up's set (nanosleep, pselect, sched_yield, sleep_for), then ours.
pub const MACOS_ROWS: &[OtherRow] = &[
    row(
        "empty loop (ground truth)",
        Call::Nothing,
        &["ground-truth"],
    ),
    row("thread::sleep(0)", Call::StdSleep(ZERO), &["std-sleep-0"]),
    row("nanosleep(0)", Call::Nanosleep(ZERO), &["nanosleep-0"]),
    row("pselect(0)", Call::Pselect(ZERO), &["pselect-0"]),
    row("sched_yield()", Call::SchedYield, &["sched-yield"]),
    row("yield_now()", Call::YieldNow, &[]),
    row(
        "thread::sleep(1 ns)",
        Call::StdSleep(NS1),
        &["std-sleep-1ns"],
    ),
    row("nanosleep(1 ns)", Call::Nanosleep(NS1), &["nanosleep-1ns"]),
    row("pselect(1 ns)", Call::Pselect(NS1), &["pselect-1ns"]),
    row("tokio::time::sleep(1 ns)", Call::TokioSleep(NS1), &[]),
    row(
        "thread::sleep(1 ms)",
        Call::StdSleep(MS1),
        &["std-sleep-1ms"],
    ),
    row("tokio::time::sleep(1 ms)", Call::TokioSleep(MS1), &[]),
];

/// Linux, as another machine (a reader on a Mac imports a Linux runner's results):
/// every call with the thread's own slack.
pub const LINUX_ROWS: &[OtherRow] = &[
    row(
        "empty loop (ground truth)",
        Call::Nothing,
        &["ground-truth"],
    ),
    row("thread::sleep(0)", Call::StdSleep(ZERO), &["std-sleep-0"]),
    row("nanosleep(0)", Call::Nanosleep(ZERO), &["nanosleep-0"]),
    row("pselect(0)", Call::Pselect(ZERO), &["pselect-0"]),
    row("sched_yield()", Call::SchedYield, &["sched-yield"]),
    row("yield_now()", Call::YieldNow, &[]),
    row(
        "thread::sleep(1 ns)",
        Call::StdSleep(NS1),
        &["std-sleep-1ns"],
    ),
    row("nanosleep(1 ns)", Call::Nanosleep(NS1), &["nanosleep-1ns"]),
    row("clock_nanosleep(1 ns)", Call::ClockNanosleep(NS1), &[]),
    row("pselect(1 ns)", Call::Pselect(NS1), &["pselect-1ns"]),
    row(
        "timerfd created per call (1 ns)",
        Call::Timerfd(Timerfd::PerCall, NS1),
        &["timerfd-recreate-1ns"],
    ),
    row(
        "timerfd re-armed one-shot (1 ns)",
        Call::Timerfd(Timerfd::Rearmed, NS1),
        &["timerfd-reuse-1ns"],
    ),
    row(
        "timerfd with 1 ns interval",
        Call::Timerfd(Timerfd::Interval, NS1),
        &["timerfd-interval-1ns"],
    ),
    row("tokio::time::sleep(1 ns)", Call::TokioSleep(NS1), &[]),
    row(
        "thread::sleep(1 ms)",
        Call::StdSleep(MS1),
        &["std-sleep-1ms"],
    ),
    row("tokio::time::sleep(1 ms)", Call::TokioSleep(MS1), &[]),
];

/// The rows of an OS family (`windows`, `macos`, `linux`; the BSDs read as macOS: the
/// same POSIX calls, no timerfd).
pub fn other_rows(family: &str) -> &'static [OtherRow] {
    match family {
        "windows" => WINDOWS_ROWS,
        "linux" => LINUX_ROWS,
        _ => MACOS_ROWS,
    }
}

/// What an OS family lacks of the write-up's calls, as the section's note says it.
pub fn other_lacks(family: &str) -> &'static str {
    match family {
        "windows" => {
            "Windows has no nanosleep, pselect, sched_yield, timerfd or timer slack: \
             `Sleep` and `SleepEx` take whole milliseconds, so their shortest sleep waits for \
             a tick of the system timer."
        }
        "linux" => {
            "Linux has every call of the write-up; its per-thread timer slack, which Linux \
             alone has, is left out here."
        }
        _ => {
            "This system has no timerfd and no per-thread timer slack (both are Linux-only), \
             and not every libc here has clock_nanosleep: the write-up's timerfd rows and \
             the slack rows have no counterpart here."
        }
    }
}

/// The write-up's system of an OS family, as its columns name it.
fn writeup_system(family: &str) -> Option<(&'static str, &'static str)> {
    match family {
        "windows" => Some(("windows", "Windows 10")),
        "linux" => Some(("linux", "Linux 4.1")),
        "macos" => Some(("macos", "OS X 10.10")),
        _ => None,
    }
}

/// Where one table row pairs with two of the write-up's, which is which.
fn ref_tag(id: &str) -> &str {
    match id {
        "std-sleep-0" => "sleep_for(0 ns)",
        "std-sleep-0ms" => "sleep_for(0 ms)",
        other => other,
    }
}

/// What the section says without another machine's results.
pub const NO_OTHER_OS: &str = "No results from another operating system have been \
    imported into this build. To add one, measure the book on that machine (`make build`; \
    on Windows, `cargo build --release --workspace --bins`, then \
    `target\\release\\all-results measure --profile quick`), copy its results folder \
    (`target/book-results`, or the folder `COW_RESULTS_DIR` named) here, and run \
    `target/release/all-results import THAT-FOLDER`: its records are checked like every \
    results file, kept apart from this machine's, and shown here, labelled with their \
    machine.";

/// The section "The same calls on other operating systems": for each other machine
/// (its OS family and its `calls` record, imported with `all-results import`), its
/// figures for the calls its OS has beside the write-up's 2015 figures for the same
/// calls on the same kind of system; without one, how to add one. Everything taken
/// from a record is escaped; the rows and their labels are this table's, never the
/// record's.
pub fn other_os_section(machines: &[(&str, &harness::Record)]) -> anyhow::Result<String> {
    let refs = reference_data()?;
    if machines.is_empty() {
        return Ok(format!(
            "{NO_OTHER_OS}\n\n<p class=\"cow-provenance\">No other machine's results in this \
             build.</p>\n"
        ));
    }
    let mut out = String::new();
    for (family, r) in machines {
        let m = &r.provenance.machine;
        let system = writeup_system(family);
        let theirs_header = system.map_or_else(
            || "the write-up (ns)".to_string(),
            |(_, name)| format!("the write-up, {name}, 2015 (ns)"),
        );
        let mut t = Table::new(["call", theirs_header.as_str(), "that machine"]);
        for row in other_rows(family) {
            let mine = r.estimate(&row.key.stored());
            let theirs: Vec<String> = row
                .reference
                .iter()
                .filter_map(|id| {
                    let v = refs.rows.iter().find(|x| x.id == *id)?.on(system?.0)?;
                    Some(if row.reference.len() > 1 {
                        format!("{} ({})", fmt_ref(Some(v)), ref_tag(id))
                    } else {
                        fmt_ref(Some(v))
                    })
                })
                .collect();
            if mine.is_none() && theirs.is_empty() {
                continue;
            }
            let theirs = if theirs.is_empty() {
                "–".to_string()
            } else {
                theirs.join("; ")
            };
            t.row(cells![
                row.label.to_string(),
                theirs,
                fmt_opt_estimate(mine, Unit::Nanos),
            ]);
        }
        let timer = r
            .details
            .iter()
            .find(|(k, _)| k == crate::experiments::TIMER_RESOLUTION_DETAIL)
            .map(|(_, v)| format!(" Its system timer resolution: {}.", harness::safe::text(v)))
            .unwrap_or_default();
        let writeup_timer = if *family == "windows" {
            " The write-up read its system's timer with ClockRes: maximum interval \
             15.625 ms, minimum 0.500 ms, current 1.001 ms."
        } else {
            ""
        };
        // Rust's name for Windows is `windows`; the machine line reads better with a capital.
        let os = if m.os == "windows" {
            "Windows".to_string()
        } else {
            m.os_line()
        };
        // The machine's line is its provenance (no separate block: the page's provenance
        // stays a small share of its words however many machines are imported).
        let disturbed = r
            .rounds
            .iter()
            .filter(|x| x.noise.disturbance().is_some())
            .count();
        out.push_str(&format!(
            "**{}** · {} · {} ({} build), {} profile, {} rounds ({disturbed} disturbed), \
             measured {}\n\n{}\n{}{timer}{writeup_timer}\n\n",
            harness::safe::text(&os),
            harness::safe::text(&m.cpu_line()),
            harness::safe::text(&m.rustc),
            harness::safe::text(&r.build),
            r.profile.name(),
            r.rounds.len(),
            harness::safe::text(&r.provenance.measured_at),
            t.to_markdown(),
            other_lacks(family),
        ));
    }
    out.push_str(&format!(
        "*That machine*: the medians over that machine's rounds, per call, with their 95 % \
         intervals, measured by its own build of this chapter. *The write-up*: its value ± \
         the half-width of its 99.9 % interval for the same call on its system of the same \
         kind, on other hardware, in 2015. A dash: not measured there. {}\n",
        refs.attribution()
    ));
    out.push_str(&format!(
        "\n<p class=\"cow-provenance\">Measured on {} other machine{}, each named above its \
         table; imported into this build, not measured by it.</p>\n",
        machines.len(),
        if machines.len() == 1 { "" } else { "s" }
    ));
    Ok(out)
}

/// The readings every view of `calls` may read, for tests: those of the plan.
pub fn calls_keys(low: u64) -> Vec<CallsKey> {
    plan().iter().map(|c| c.key(low)).collect()
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
                    .all(|k| matches!(k.call, Call::Sleep(_) | Call::SleepEx(_))),
                "{missing:?}"
            );
        }
        assert_eq!(code("empty loop"), "the empty loop");
    }

    /// The per-OS section's table for this OS names every call this OS measures by the
    /// key it is stored under, and the write-up's rows it pairs with them exist. (Each
    /// OS's CI job runs this for its own table.)
    #[test]
    fn other_os_rows_match_this_os_variants() {
        let family = if cfg!(windows) {
            "windows"
        } else if cfg!(target_os = "linux") {
            "linux"
        } else {
            "macos"
        };
        let rows = other_rows(family);
        for v in VARIANTS {
            let found = rows.iter().find(|r| r.key == CallsKey::of(v.call));
            let found = found.unwrap_or_else(|| panic!("{} not in the {family} rows", v.id));
            let refs = reference_data().unwrap();
            if refs
                .rows
                .iter()
                .any(|r| r.id == v.id && r.on(family).is_some())
            {
                assert!(found.reference.contains(&v.id), "{}", v.id);
            }
        }
        let refs = reference_data().unwrap();
        for fam in ["windows", "macos", "linux"] {
            for r in other_rows(fam) {
                for id in r.reference {
                    assert!(refs.rows.iter().any(|x| x.id == *id), "{fam}: {id}");
                }
            }
        }
    }

    /// Another system's record is read by the calls of its rows, which this build may
    /// not make: a Windows record's `Sleep(0)` on any build.
    #[test]
    fn another_systems_readings_are_found_by_their_calls() {
        let readings = |k: &CallsKey, v: f64| harness::Reading::of(k, Unit::Nanos, v);
        let sleep0 = CallsKey::of(Call::Sleep(0));
        let timer = CallsKey::of(Call::WaitableTimer(Duration::from_nanos(100)));
        let rounds = (0..3)
            .map(|_| vec![readings(&sleep0, 60.0), readings(&timer, 520_000.0)])
            .collect();
        let record = harness::fixture::record_of_readings("short-sleeps", "calls", rounds);
        let text = other_os_section(&[("windows", &record)]).unwrap();
        let row = |label: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("| {label} |")))
                .unwrap_or_else(|| panic!("no {label} row: {text}"))
                .to_string()
        };
        assert!(row("Sleep(0)").contains("| 60.0 ns"), "{text}");
        assert!(
            row("high-resolution waitable timer (100 ns)").contains("| – | 520 µs"),
            "{text}"
        );
        assert!(row("SleepEx(0, FALSE)").ends_with("| – |"), "{text}");
    }

    #[test]
    fn other_os_section_without_machines_says_how_to_add_one() {
        let text = other_os_section(&[]).unwrap();
        assert!(text.contains("all-results import"), "{text}");
        assert!(!text.contains("  "), "one line, no runs of spaces: {text}");
    }
}
