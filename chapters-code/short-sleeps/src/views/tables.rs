//! The chapter's tables other than the write-up's (`reference.rs`). Each caption says
//! what its cells are, in short sentences.

use super::{count, est, low_slack, param_count, per_loop, request_label, slack_saving, sparse};
use crate::experiments::{CallsKey, CallsRound, MsRound, SweepKey, SweepRound};
use crate::experiments::{YieldKey, YieldRound};
use crate::{Mode, MsArm, Sample, Slack, VARIANTS, fmt_slack, sweep_requests};
use harness::cells;
use harness::render::{
    Cell, Formatted, Table, Tails, fmt_ns, fmt_opt_estimate, fmt_percent, ratio_cell,
};
use harness::{Results, Unit};

/// The sleeping variants with the thread's slack and with the low slack.
pub fn slack(r: &Results<CallsRound>) -> anyhow::Result<String> {
    if !crate::experiments::LOW_SLACK_HERE {
        let none = "Timer slack is a Linux setting (`prctl(PR_SET_TIMERSLACK)`). This system has none, so there is nothing to compare.\n";
        return Ok(none.into());
    }
    let low = low_slack(r);
    let seen: std::collections::BTreeSet<u64> =
        r.data().filter_map(|x| x.thread_slack_ns).collect();
    let seen: Vec<String> = seen.into_iter().map(fmt_slack).collect();
    let default = format!("default slack ({})", seen.join(", ")).replace(" ()", "");
    let s = fmt_slack(low);
    let mut t = Table::new([
        "call".to_string(),
        default,
        format!("slack {s}"),
        "default ÷ low".into(),
        "default − low".into(),
        format!("blocked: default · {s}"),
    ]);
    for v in VARIANTS.iter().filter(|v| v.call.sleeps()) {
        let [dk, lk] = [Slack::Default, Slack::Low].map(|s| CallsKey::with(v.call, s, low));
        let (Some(de), Some(le)) = (r.estimate(&dk), r.estimate(&lk)) else {
            continue;
        };
        // A call of a millisecond or more blocks with either slack: its saving is an
        // amount, which a ratio would show as a share of a few percent.
        let c = (!v.call.slow()).then(|| r.compare(&dk, &lk)).flatten();
        let ratio = c.map_or_else(|| Formatted::plain("–"), |c| ratio_cell(&c));
        let blocked = |k: &CallsKey| {
            Formatted::plain(count(per_loop(r, k, |s| s.voluntary)).unwrap_or("–".into()))
        };
        t.row(cells![
            v.call.name(),
            est(&de),
            est(&le),
            ratio,
            fmt_opt_estimate(slack_saving(r, v.call), Unit::Nanos),
            Cell::join([blocked(&dk), blocked(&lk)], " · ")
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no sleeping call ran at both slacks");
    Ok(format!(
        "{}\nEach round runs every call twice: with the thread's own slack, and after \
         `prctl(PR_SET_TIMERSLACK, {low})`. *Default ÷ low* is the median of the rounds' own \
         ratios, left out for calls of a millisecond or more; *default − low* the median \
         of their own differences, a fixed amount that a ratio would show as a share. *Blocked* counts voluntary context switches per call; 0.00 means under one \
         call in 200.\n",
        t.to_markdown()
    ))
}

/// Each yielding call pinned to one CPU, alone and with a busy thread on that CPU.
pub fn yields(r: &Results<YieldRound>) -> anyhow::Result<String> {
    let head = "call|alone|a busy thread on its CPU|busy ÷ alone|switches away per call";
    let mut t = Table::new(head.split('|').chain(["time per switch away"]));
    for call in crate::YIELD_CALLS {
        let [alone, busy] = [false, true].map(|busy| YieldKey { call, busy });
        let (Some(b), Some(a), Some(c)) = (
            r.estimate(&busy),
            r.estimate(&alone),
            r.compare(&busy, &alone),
        ) else {
            continue;
        };
        let f = |g: &dyn Fn(&Sample) -> Option<f64>| {
            r.estimate_of(|x| x.find(&busy).and_then(|l| g(&l.sample)))
        };
        // Where under half the rounds switched at all, a few preemptions would stand
        // for the call: the cell says how many rounds instead.
        let n = r.rounds.len();
        let per_switch = match f(&|s| Some(s.ns / s.involuntary.filter(|i| *i > 0.0)?)) {
            Some(e) if 2 * e.n as usize >= n => fmt_opt_estimate(Some(e), Unit::Nanos),
            e => Formatted::plain(format!(
                "switched in {} of {n} rounds",
                e.map_or(0, |e| e.n)
            )),
        };
        t.row(cells![
            call.name(),
            est(&a),
            est(&b),
            ratio_cell(&c),
            count(f(&|s| s.involuntary)).unwrap_or_else(|| "–".into()),
            per_switch,
        ]);
    }
    if t.is_empty() && !cfg!(target_os = "linux") {
        let none = "This experiment pins two threads to one CPU with `sched_setaffinity`, which this chapter uses on Linux only. It did not run here.\n";
        return Ok(none.into());
    }
    anyhow::ensure!(!t.is_empty(), "the yield experiment has no loop to show");
    Ok(format!(
        "{}\nEach round pins the measuring thread to its CPU and times each call twice: \
         alone, and with a second thread spinning on that CPU. Time per call: medians over \
         the {} rounds, with their intervals. *Switches away* are the involuntary context \
         switches per call beside the busy thread. *Time per switch away* is the loop's time \
         divided by them, over the rounds that switched, where at least half did. A loop makes {} calls, fewer where it would outrun {} ms.\n",
        t.to_markdown(),
        r.rounds.len(),
        param_count(r, "yield_calls"),
        param_count(r, "yield_bound_ms"),
    ))
}

/// How far each reading of tokio's timer misses the tokio sleeps (the plot shows them
/// by phase), and how late a 1 ms sleep ends after a short and after a long sleep.
pub fn tokio(r: &Results<MsRound>) -> anyhow::Result<String> {
    // Two comparisons of two arms each: the readings' misses, a 1 ms sleep in context.
    let before = r.param("before_ms").map_or(50, |v| v as u32);
    let after = |before_ms| MsArm::After { before_ms };
    let whole = "*whole ticks* misses a tokio sleep by";
    let short = "`thread::sleep(1 ms)` right after a 1 ms sleep ends late by";
    let long = format!("right after a {before} ms sleep, late by");
    let misses = r.compare_of(|x| x.misses().map(|m| m.0), |x| x.misses().map(|m| m.1));
    let pairs = [
        ([whole.into(), "*next tick* misses it by".into()], misses),
        ([short.into(), long], r.compare(&after(before), &after(1))),
    ];
    // The sleeps over 0.5 ms late after a sleep of `b` ms: pooled, and a share per round.
    let share = |x: &MsRound, b| x.late_over(b, 5e5).map(|(k, n)| k as f64 / n as f64);
    let tail = |b| {
        let late = r.data().filter_map(|x| x.late_over(b, 5e5));
        let (k, n) = late.fold((0, 0), |a, l| (a.0 + l.0, a.1 + l.1));
        let e = r.estimate_of(|x| share(x, b));
        let p = e.map(|e| [e.median, e.lo, e.hi].map(fmt_percent));
        let p = p.map_or_else(String::new, |p| format!(" · {} ({}–{})", p[0], p[1], p[2]));
        format!("{k} of {n}{p}")
    };
    let tails = [String::new(), String::new(), tail(1), tail(before)];
    let head = "more than 0.5 ms late: pooled · per round";
    let mut m = Table::new(["", "median over rounds", "÷ the row above", head]);
    for (([first, second], c), t) in pairs.into_iter().zip(tails.chunks(2)) {
        let c = c.ok_or_else(|| anyhow::anyhow!("the millisecond experiment has no result"))?;
        m.row(cells![first, est(&c.b), "", t[0].as_str()]);
        m.row(cells![second, est(&c.a), ratio_cell(&c), t[1].as_str()]);
    }
    let diffs = r
        .data()
        .filter_map(|x| Some(share(x, before)? - share(x, 1)?));
    let (up, down, n) = diffs.fold((0, 0, 0), |(u, d, n), x| {
        (u + usize::from(x > 0.0), d + usize::from(x < 0.0), n + 1)
    });
    let worst = r
        .data()
        .map(|x| x.origin_uncertainty_ns / 2.0)
        .fold(0.0, f64::max);
    let phase = r
        .estimate_of(|x| Some(x.origin_uncertainty_ns / 2.0))
        .map_or_else(String::new, |e| {
            let (median, worst) = (fmt_ns(e.median), fmt_ns(worst));
            format!(" A phase is known to within {median} (median over rounds; at worst {worst}).")
        });
    Ok(format!(
        "{}\nMedians over the {} rounds, with intervals.{phase} A miss is how far a \
         reading's prediction lands from a tokio sleep, less the wake-up cost: the lateness \
         of `thread::sleep(1 ms)` over the round's chosen phases, all bins together. The last two rows time {} \
         single 1 ms sleeps a round, each right after a sleep of the length given. Each ratio \
         is the median of the rounds' own. The last column counts the sleeps over 0.5 ms \
         late, pooled, then gives their share per round (median, interval). That share was \
         higher after the {before} ms sleep in {up} of {n} rounds, lower in {down}.\n",
        m.to_markdown(),
        r.rounds.len(),
        param_count(r, "after_sleeps"),
    ))
}

/// The ways of sleeping that have a result, in their fixed order.
pub(super) fn sweep_modes(r: &Results<SweepRound>) -> Vec<Mode> {
    Mode::available()
        .iter()
        .copied()
        .filter(|m| r.data().any(|x| x.points.iter().any(|p| p.mode == *m)))
        .collect()
}

/// The requested lengths, in nanoseconds.
pub(super) fn requests() -> Vec<f64> {
    sweep_requests()
        .iter()
        .map(|d| d.as_nanos() as f64)
        .collect()
}

/// A sweep table: a row per requested length (`label` names it under `first`), a
/// column per way of sleeping (`cell` fills it); and the sentence that names the
/// low-slack column.
fn grid(
    r: &Results<SweepRound>,
    (first, label): (&str, &dyn Fn(f64) -> String),
    cell: impl Fn(Mode, f64) -> Option<Cell>,
) -> anyhow::Result<(Table, String)> {
    let low = low_slack(r);
    let modes = sweep_modes(r);
    anyhow::ensure!(!modes.is_empty(), "no way of sleeping has a result");
    let s = fmt_slack(low);
    let heads = modes.iter().map(|m| match m {
        Mode::SleepLowSlack => format!("slack {s}"),
        m => m.label(low),
    });
    let rows = requests().into_iter().filter_map(|q| {
        let cells: Vec<Option<Cell>> = modes.iter().map(|m| cell(*m, q)).collect();
        cells.iter().any(Option::is_some).then(|| (label(q), cells))
    });
    let headers: Vec<String> = std::iter::once(first.to_string()).chain(heads).collect();
    let legend = (modes.contains(&Mode::SleepLowSlack)).then(|| {
        format!(" *Slack {s}* is `thread::sleep` after `prctl(PR_SET_TIMERSLACK, {low})`.")
    });
    Ok((sparse(&headers, rows.collect()), legend.unwrap_or_default()))
}

/// The share of a point's sleeps that blocked, pooled over every round.
fn blocked_share(r: &Results<SweepRound>, mode: Mode, q: f64) -> Option<f64> {
    let points = r.data().filter_map(|x| x.find(mode, q));
    let pairs = points.filter_map(|p| Some((p.blocked_share?, p.late.len() as f64)));
    let (blocked, all) = pairs.fold((0.0, 0.0), |a, (b, n)| (a.0 + b * n, a.1 + n));
    (all > 0.0).then(|| blocked / all)
}

/// Median lateness per round, with intervals, and the share of sleeps that blocked
/// (where the system counts switches).
pub fn sweep(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let (low, dot) = (low_slack(r), std::cell::Cell::new(""));
    let (t, legend) = grid(r, ("requested", &request_label), |m, q| {
        let e = fmt_opt_estimate(r.estimate(&SweepKey::late(m, q as u64, low)), Unit::Nanos);
        let Some(b) = blocked_share(r, m, q) else {
            return Some(e.into());
        };
        dot.set(" After the dot: the share of sleeps that **blocked**, pooled over rounds.");
        Some(Cell::join([e, fmt_percent(b).into()], " · "))
    })?;
    let counts = r.data().flat_map(|x| x.points.iter().map(|p| p.late.len()));
    let (few, most) = counts.fold((u64::MAX, 0), |(a, b), n| (a.min(n), b.max(n)));
    Ok(format!(
        "{}\nHow late each sleep ended (actual − requested). Each round gives the median over \
         its sleeps of one length: {few} to {most} sleeps, the fewer the longer the request. \
         The table gives the median over the {} rounds, with its interval.{}{legend}\n",
        t.to_markdown(),
        r.rounds.len(),
        dot.get(),
    ))
}

/// The pooled tail of the lateness: p99 where every point of a row pooled at least
/// 1,000 sleeps, the maximum otherwise (the row says which).
pub fn sweep_tails(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let pooled = |m, q| harness::render::pooled(r.data(), |x| x.find(m, q).map(|p| &p.late));
    let modes = sweep_modes(r);
    let p99 = |q: f64| Tails::for_counts(modes.iter().map(|m| pooled(*m, q).len())).p99;
    let tail = |q: f64| if p99(q) { "p99" } else { "max" };
    let label = |q: f64| format!("{} · {}", request_label(q), tail(q));
    let (t, legend) = grid(r, ("requested · tail", &label), |m, q| {
        let s = pooled(m, q).summary()?;
        Some(fmt_ns(s.p99.filter(|_| p99(q)).unwrap_or(s.max)).into())
    })?;
    anyhow::ensure!(!t.is_empty(), "no point has a sleep to pool");
    Ok(format!(
        "{}\nThe tail of the lateness, pooling every sleep of every round. A row shows the \
         99th percentile where each of its points pooled 1,000 sleeps or more, else the \
         maximum.{legend}\n",
        t.to_markdown(),
    ))
}

/// What accuracy costs: the thread's CPU time per sleep in each way of sleeping, and
/// how long the hybrid spun.
pub fn sweep_cpu(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let of = |m: Mode, q: f64, f: fn(&crate::experiments::Point) -> Option<f64>| {
        r.estimate_of(|x| x.find(m, q).and_then(f))
    };
    let (t, legend) = grid(r, ("requested", &request_label), |m, q| {
        let cpu = fmt_opt_estimate(of(m, q, |p| p.cpu_ns), Unit::Nanos);
        Some(match of(m, q, |p| p.spun_ns) {
            Some(spun) => Cell::join([cpu, est(&spun)], " · "),
            None => cpu.into(),
        })
    })?;
    let margin = r
        .estimate_of(|x| Some(x.margin_ns))
        .map_or_else(String::new, |m| {
            format!(" Its margin had a median of {}.", est(&m))
        });
    Ok(format!(
        "{}\nThe measuring thread's CPU time per sleep: a point's batch divided by its sleeps, \
         medians over rounds. It includes timing each sleep and reading its switch count. \
         After the dot: how long the hybrid spun per sleep.{margin}{legend}\n",
        t.to_markdown()
    ))
}
