//! The chapter's tables: lateness per design, the counters behind it, the sweep over N
//! and the hazards. Comparisons are cells of `ratio_cell`, never words of ours.

use super::{CT, MT, est, per_run, pooled, shown, stalled, waited};
use crate::experiments::{
    DesignKey, DesignRun, DesignsRound, HazardKey, HazardRunData, HazardsRound, SWEPT, SweepKey,
    SweepRound, TWINNED,
};
use crate::{Design, Flavour, Hazard, Tallied};
use harness::cells;
use harness::render::{
    Better, Cell, Formatted, Table, Tails, aa_sentence, fmt_count, fmt_ns, fmt_opt_estimate,
    fmt_percent, fmt_ratio_estimate, linux_only, ratio_cell, sig3,
};
use harness::{Dist, Estimate, Results, Unit};

/// Lateness on the multi-thread runtime: the median over rounds of each run's median,
/// with its interval; then the tails of every timeout of every round, pooled.
pub fn designs_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let dists: Vec<(Design, Dist)> = Design::ALL.iter().map(|&d| (d, pooled(r, d, MT))).collect();
    // Tail columns as far as every design that has any timeouts supports them.
    let tails = Tails::for_counts(dists.iter().map(|(_, d)| d.len()).filter(|n| *n > 0));
    let any_stalled = Design::ALL.iter().any(|&d| stalled(r, d, MT) > 0);
    let mut headers = vec!["design", "median lateness", "n"];
    headers.extend(tails.tail_headers());
    if any_stalled {
        headers.push("stalled rounds");
    }
    let mut t = Table::new(headers);
    for (design, d) in &dists {
        let mut row: Vec<Cell> = cells![
            shown(*design),
            fmt_opt_estimate(est(r, *design, MT), Unit::Nanos),
            fmt_count(d.len()),
        ]
        .into();
        match d.summary() {
            Some(s) => row.extend(tails.tail_cells(&s, fmt_ns).into_iter().map(Cell::from)),
            None => row.extend(tails.tail_headers().iter().map(|_| Cell::from("–"))),
        }
        if any_stalled {
            row.push(stalled(r, *design, MT).to_string().into());
        }
        t.row(row);
    }
    // The A/A self-check: the twinned arm against its twin, by the verdict rule.
    let aa = r
        .compare(&DesignKey::new(TWINNED.0, TWINNED.1), &DesignKey::TWIN)
        .map_or_else(String::new, |c| {
            let fig = |e| fmt_opt_estimate(Some(e), Unit::Nanos).to_string();
            let what = format!(
                "the {} on the {} runtime",
                shown(TWINNED.0),
                TWINNED.1.label()
            );
            format!(
                "\n{}.\n",
                aa_sentence(&what, None, &fig(c.a), &fig(c.b), &c, Better::Lower)
            )
        });
    Ok(format!("{}{aa}", t.to_markdown()))
}

/// Median lateness per design on each runtime, and the per-round ratio between them.
pub fn flavours_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "design",
        "current-thread",
        "multi-thread",
        "multi ÷ current",
    ]);
    for design in Design::ALL {
        let ratio = r
            .compare(&DesignKey::new(design, MT), &DesignKey::new(design, CT))
            .map_or_else(|| "–".into(), |c| ratio_cell(&c));
        t.row(cells![
            shown(design),
            fmt_opt_estimate(est(r, design, CT), Unit::Nanos),
            fmt_opt_estimate(est(r, design, MT), Unit::Nanos),
            ratio,
        ]);
    }
    Ok(t.to_markdown())
}

/// What each design costs per timeout started, on the multi-thread runtime and then on
/// the current-thread one.
pub fn cost_tables(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    Ok(format!(
        "Multi-thread runtime:\n\n{}\nCurrent-thread runtime:\n\n{}",
        cost_table(r, MT)?,
        cost_table(r, CT)?
    ))
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
        let delay = fmt_opt_estimate(e(DesignRun::run_delay_per_timeout), Unit::Nanos);
        t.row(cells![
            shown(design),
            fmt_opt_estimate(e(DesignRun::cpu_per_timeout), Unit::Nanos),
            e(DesignRun::switches_per_timeout).map_or_else(|| "–".into(), |x| fmt_plain(&x)),
            linux_only(r.record, delay),
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
pub fn waits_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "design",
        "lock found taken",
        "blocked in lock()",
        "sender found slot full",
        "handler found channel empty",
        "budget refusals per timeout",
        "lock() Pending holding it",
    ]);
    let cell = |design: Design, f: fn(&DesignRun) -> Option<f64>, show: fn(f64) -> String| {
        let one = |fl| per_run(r, design, fl, f).map(|e| show(e.median));
        match (one(MT), one(CT)) {
            (None, None) => "–".into(),
            (a, b) => Cell::join(
                [a, b].map(|x| Formatted::plain(x.unwrap_or_else(|| "–".into()))),
                " · ",
            ),
        }
    };
    let refused = |x: &DesignRun| x.per_timeout(Some(x.waits.timers.refused));
    let held = |x: &DesignRun| tokio_lock(x).then_some(x.waits.locks.held as f64);
    // Time a run's std `lock()` calls blocked (std-mutex designs that locked).
    let blocked = |x: &DesignRun| {
        let std_lock = x.waits.locks.calls > 0 && !tokio_lock(x);
        Some(x.waits.locks.blocked_ns? as f64).filter(|_| std_lock)
    };
    for design in Design::ALL {
        t.row(cells![
            shown(design),
            cell(design, |x| waited(&x.waits.locks), fmt_percent),
            cell(design, blocked, fmt_ns),
            cell(design, |x| waited(&x.waits.sends), fmt_percent),
            cell(design, |x| waited(&x.waits.receives), fmt_percent),
            cell(design, refused, sig3),
            cell(design, held, sig3),
        ]);
    }
    Ok(format!(
        "{}\nEach cell: multi-thread · current-thread runtime, the median over rounds of one \
         run's figure. A dash: the design has no such wait. *Blocked in lock()*: time in \
         the std `lock()` after a failed `try_lock`, per run. *lock() Pending holding it*: \
         polls of a tokio `lock()` that took the mutex and returned *Pending*, per run.\n",
        t.to_markdown()
    ))
}

/// Whether a design's queue sits behind tokio's mutex (designs 2 and 3).
fn tokio_lock(x: &DesignRun) -> bool {
    matches!(
        x.design,
        Design::TokioMutexCap1
            | Design::TokioMutexCapN
            | Design::TwoRuntimes
            | Design::TwoRuntimesFreeLock
    )
}

/// The FIFO pairing of the queue designs against each timeout's own start,
/// multi-thread runtime: medians over rounds of each run's figures.
pub fn pairing_table(r: &Results<DesignsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "design",
        "mis-paired",
        "mean: own / FIFO",
        "p99: own / FIFO",
        "max: own / FIFO",
    ]);
    type Pick = fn(&crate::experiments::Pairing) -> Option<f64>;
    for design in Design::ALL.into_iter().filter(|d| d.uses_queue()) {
        let median =
            |f: Pick| per_run(r, design, MT, |x| x.pairing.as_ref().and_then(f)).map(|e| e.median);
        let both = |a: Pick, b: Pick| match (median(a), median(b)) {
            (Some(a), Some(b)) => Cell::join([fmt_ns(a).into(), fmt_ns(b).into()], " / "),
            _ => "–".into(),
        };
        let share = per_run(r, design, MT, |x| {
            let p = x.pairing.as_ref()?;
            Some(p.mispaired as f64 / x.handled.max(1) as f64)
        });
        let Some(share) = share else { continue };
        t.row(cells![
            shown(design),
            format!("{} %", sig3(share.median * 100.0)),
            both(|p| Some(p.own_mean_ns), |p| Some(p.fifo_mean_ns)),
            both(|p| p.own_p99_ns, |p| p.fifo_p99_ns),
            both(|p| Some(p.own_max_ns), |p| Some(p.fifo_max_ns)),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no queue design has a result");
    Ok(t.to_markdown())
}

/// Per design and runtime: the median lateness at every size the sweep ran, and the
/// per-round ratio of the largest to the smallest (how much the lateness grew with N).
pub fn sweep_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let sizes: Vec<usize> = r.data().next().map(|x| x.sizes.clone()).unwrap_or_default();
    let (Some(&lo), Some(&hi)) = (sizes.first(), sizes.last()) else {
        anyhow::bail!("the sweep has no sizes");
    };
    let mut headers = vec!["design".to_string(), "runtime".to_string()];
    headers.extend(
        sizes
            .iter()
            .map(|&n| format!("N = {}", fmt_count(n as u64))),
    );
    let (h, l) = (fmt_count(hi as u64), fmt_count(lo as u64));
    headers.push(format!("N = {h} ÷ N = {l}"));
    headers.push(format!("lock found taken, N = {h}"));
    let mut t = Table::new(headers);
    for flavour in Flavour::ALL {
        for design in SWEPT {
            let key = |n| SweepKey::new(design, flavour, n);
            let mut row: Vec<Cell> = cells![shown(design), flavour.label()].into();
            for &n in &sizes {
                row.push(fmt_opt_estimate(r.estimate(&key(n)), Unit::Nanos).into());
            }
            row.push(
                r.ratio(&key(hi), &key(lo))
                    .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e))
                    .into(),
            );
            // The share of the largest N's lockings that found the lock taken, per run.
            let taken = r.estimate_of(|d| waited(&d.find(design, flavour, hi)?.waits.locks));
            row.push(taken.map_or("–".into(), |e| fmt_percent(e.median)).into());
            t.row(row);
        }
    }
    Ok(t.to_markdown())
}

/// "12 of 80 lockings (15 %)"; "none of 80 lockings" for zero. In a table the share in
/// brackets may wrap under the count, as an interval does.
fn count_text(t: &Tallied) -> Formatted {
    if t.waited == 0 {
        return Formatted::plain(format!("none of {} lockings", fmt_count(t.calls)));
    }
    Formatted::with_interval(
        format!("{} of {} lockings", fmt_count(t.waited), fmt_count(t.calls)),
        fmt_percent(t.waited as f64 / t.calls as f64),
    )
}

/// The guard arm's overlaps per round: callbacks that came due while the guard was held
/// across the `.await` (the same count in every round, or its range).
fn overlaps(h: Hazard, runs: &[&HazardRunData]) -> String {
    let mut per: Vec<u64> = runs.iter().map(|x| x.overlapped).collect();
    per.sort_unstable();
    let (n, fc) = (per.len(), |x: &u64| fmt_count(*x));
    match (h, per.first(), per.last()) {
        (Hazard::GuardAcrossAwait, Some(lo), Some(hi)) if lo == hi => {
            format!("{} in each of {n} rounds", fc(lo))
        }
        (Hazard::GuardAcrossAwait, Some(lo), Some(hi)) => {
            format!("{} to {} ({n} rounds)", fc(lo), fc(hi))
        }
        _ => "–".into(),
    }
}

/// The long section under the lock ÷ the same work unlocked, over all rounds, then over
/// those whose control ran side by side; a part a clause, so the cell breaks between.
fn vs_unlocked(r: &Results<HazardsRound>, stalled: usize, fl: Flavour) -> Option<Cell> {
    let key = |h| HazardKey::new(h, fl);
    let all = r.compare(&key(Hazard::LongUnderLock), &key(Hazard::LongNoLock))?;
    // A stalled run has no lateness: its round leaves the pair, said.
    let mut parts = vec![ratio_cell(&all)];
    (stalled > 0).then(|| parts.push(format!("stalled in {stalled} more").into()));
    let (serial, of) = crate::experiments::control_serial(r, fl);
    if serial > 0 {
        let only = crate::experiments::side_by_side_only(r, fl);
        let only = only.map_or_else(|| "–".into(), |c| ratio_cell(&c));
        parts.push(
            format!("the control ran in turn or over its time in {serial} of {of} rounds").into(),
        );
        parts.push(only.labelled(&format!("the other {} alone: ", of - serial)));
    }
    Some(Cell::join(parts, "; "))
}

/// Each round's callbacks per thread and how many worked at once: `20+20 (1.98), …`,
/// one part a round, so the cell may break after each comma.
fn splits(runs: &[&HazardRunData]) -> Cell {
    let mut each: Vec<harness::fmt::Formatted> = runs
        .iter()
        .filter(|x| !x.per_thread.is_empty())
        .map(|x| {
            let split: Vec<String> = x.per_thread.iter().map(u64::to_string).collect();
            let at_once = x.at_once.map_or_else(|| "–".into(), |a| format!("{a:.2}"));
            format!("{} ({at_once}{})", split.join("+"), x.over_time()).into()
        })
        .collect();
    each.is_empty().then(|| each.push("–".into()));
    Cell::join(each, ", ")
}

/// The hazards per arm and runtime: rounds stalled (left behind at their bound) and how
/// far they got, the finished rounds' lateness, and the counts behind them.
pub fn hazards_table(r: &Results<HazardsRound>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "arm",
        "runtime",
        "stalled rounds",
        "handled, if stalled",
        "median lateness, if finished",
        "÷ same work unlocked",
        "lock found taken",
        "callbacks per thread (at once), per round",
        "due while held, per round",
    ]);
    for fl in Flavour::ALL {
        for h in Hazard::ALL {
            let runs: Vec<_> = r.data().filter_map(|d| d.find(h, fl)).collect();
            let Some(first) = runs.first() else { continue };
            let of = fmt_count(first.n as u64);
            let got = crate::experiments::stalled_handled(&runs).map_or("–".into(), |(a, b)| {
                format!("{} to {} of {of}", fmt_count(a), fmt_count(b))
            });
            let stalled = runs.iter().filter(|x| x.stalled).count();
            let locks = runs.iter().fold(Tallied::default(), |a, x| Tallied {
                calls: a.calls + x.locks.calls,
                waited: a.waited + x.locks.waited,
                ..Tallied::default()
            });
            let vs_unlocked = (h == Hazard::LongUnderLock)
                .then(|| vs_unlocked(r, stalled, fl))
                .flatten()
                .unwrap_or_else(|| "–".into());
            // A stalled run's blocked lockings never returned: only finished runs count.
            let done = |x: &&HazardRunData| !x.stalled;
            let ns = r.estimate_of(|d| Some(d.find(h, fl).filter(done)?.locks.blocked_ns? as f64));
            let blocked = ns.map(|e| format!("blocked {} a run", fmt_ns(e.median)));
            t.row(cells![
                h.label(),
                fl.label(),
                format!("{stalled} of {}", runs.len()),
                got,
                fmt_opt_estimate(r.estimate(&HazardKey::new(h, fl)), Unit::Nanos),
                vs_unlocked,
                match (locks.calls, blocked) {
                    (0, _) => "–".into(),
                    (_, None) => Cell::from(count_text(&locks)),
                    (_, Some(b)) => Cell::join([count_text(&locks), b.into()], "; "),
                },
                splits(&runs),
                overlaps(h, &runs),
            ]);
        }
    }
    anyhow::ensure!(!t.is_empty(), "no hazard ran");
    let hold = crate::HOLD_PAST.as_millis();
    let first = r.data().next();
    let bound_of = |h: Hazard| {
        let run = first.and_then(|d| d.runs.iter().find(|x| x.hazard == h));
        fmt_ns(run.map_or(0.0, |x| x.bound_ns))
    };
    let n = first.and_then(|d| d.runs.first()).map_or(0, |x| x.n as u64);
    let work = first.map_or(0, |d| d.work_us);
    // Nine columns: inside `cow-wrap` its cells may break anywhere to fit the column.
    Ok(format!(
        "<div class=\"cow-wrap\">\n\n{}\n</div>\n\nEach run: {} timeouts of 20 ms, a task per timeout, {} µs of busy wall time in each long \
         section. A run still going at its bound ({}; the guard arm's {}) is *stalled*: it is \
         left behind and has no lateness. *Lock found taken* counts, over every round, \
         lockings whose `try_lock` failed; *blocked* is the median over rounds of the time a \
         run's lockings then spent in `lock()`. *Callbacks per thread* gives, round by round, \
         how many callbacks each thread ran, most first, and in brackets how many worked at \
         once: their work summed over the time any worked (1: one at a time); *work ×k* \
         where their work took over 5 % more time on the clock than asked (spins that ran \
         past their time while their thread waited for a CPU). Side by side means at least \
         halfway from 1 to the worker count, and no *work ×k*. The guard's holder takes it before \
         any deadline and lets go {hold} ms after them, so the last column counts callbacks \
         that came due while it was held and then tried to lock.\n",
        t.to_markdown(),
        fmt_count(n),
        fmt_count(work),
        bound_of(Hazard::LongUnderLock),
        bound_of(Hazard::GuardAcrossAwait),
    ))
}
