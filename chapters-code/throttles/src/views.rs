//! How the chapter's results are shown: Markdown tables, sentences decided by the
//! intervals, and SVG plots. Every figure is a median over rounds with its 95 %
//! interval; distributions and extremes pool every sample of every round.

use crate::Pacer;
use crate::experiments::{
    BACK_TO_BACK, Measure, NAIVE, NaiveKey, NaiveRound, OMISSION, OmissionRound, RATES,
    READER_ARMS, RateRun, RatesKey, RatesRound, STALL_AT, STALL_RATE, SWEEP, SWEEP_MS, SweepKey,
    SweepLength, SweepRound, TWIN, WITH_SEND, WRITEUP_RATE,
};
use harness::cells;
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::Published;
use harness::render::capitalise;
use harness::render::{
    Better, Cell, Table, Tails, answer_block, comparison_sentence, fmt_count, fmt_estimate,
    fmt_opt_estimate, fmt_range, paired_sentence, sig3, threshold_text, undecided_lists,
};
use harness::stats::{Comparison, Verdict, threshold};
use harness::{Dist, Estimate, Results, Unit, View};
use serde::Deserialize;

pub static ANSWER: View<RatesRound> = View::table("answer", &RATES, answer);
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
pub static WHY_1K: View<RatesRound> = View::table("why-1k", &RATES, why_table).brief();
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

/// The write-up's numbers, with its source and machines (`Published`).
type Reference = Published<Numbers>;

#[derive(Debug, Deserialize)]
struct Numbers {
    naive: Vec<RefRow>,
    sweep: Vec<RefRow>,
}

fn reference() -> anyhow::Result<Reference> {
    Published::load(include_str!("../../../assets/reference/throttles.toml"))
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

// ------------------------------------------------------------------- the answer

/// A rate, as a percentage of its target, against the target by the verdict rule (a
/// target is a figure without spread).
fn against_target(share: &Estimate) -> Verdict {
    let target = Estimate {
        median: 100.0,
        lo: 100.0,
        hi: 100.0,
        ..*share
    };
    // One arm against a fixed figure: nothing to pair, so the two intervals decide.
    Comparison::unpaired(*share, target).verdict
}

/// Where a throttle's rate (as a % of its target) stands: short of the target or above
/// it by the verdict rule, within the threshold of it over its whole interval, or not
/// decided by this run.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Held {
    Short,
    Over,
    Within,
    Undecided,
}

fn held(share: &Estimate) -> Held {
    let band = threshold() * 100.0;
    match against_target(share) {
        Verdict::Below => Held::Short,
        Verdict::Above => Held::Over,
        _ if share.lo >= 100.0 - band && share.hi <= 100.0 + band => Held::Within,
        _ => Held::Undecided,
    }
}

/// The chapter's answer: which throttle holds 1,000 ops/s, and how late it runs.
fn answer(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let t = WRITEUP_RATE;
    anyhow::ensure!(
        targets(r).contains(&t),
        "this result has no runs at {} (see rates_from and rates_to)",
        per_s(t)
    );
    let share = |p: Pacer| {
        r.estimate(&RatesKey::rate(p, t))
            .map(|e| e.scaled(100.0 / t))
    };
    let per_run =
        |p: Pacer, f: fn(&RateRun) -> Option<f64>| r.estimate_of(|d| d.find(p, t).and_then(f));
    let ns = |e: Option<Estimate>| fmt_opt_estimate(e, Unit::Nanos);
    let mut out = Vec::new();

    let mut groups: [(Held, &str, Vec<String>); 4] = [
        (Held::Within, "", Vec::new()),
        (Held::Short, "short of it", Vec::new()),
        (Held::Over, "above it", Vec::new()),
        (Held::Undecided, "too uncertain here to call", Vec::new()),
    ];
    for pacer in Pacer::ALL {
        let Some(e) = share(pacer) else { continue };
        let h = held(&e);
        if let Some(g) = groups.iter_mut().find(|g| g.0 == h) {
            g.2.push(format!("*{}* {}", pacer.label(), pct(&e.scaled(0.01))));
        }
    }
    let within = format!(
        "within {} of the target over their whole interval",
        threshold_text()
    );
    let listed: Vec<String> = groups
        .iter()
        .filter(|g| !g.2.is_empty())
        .map(|g| {
            let name = if g.0 == Held::Within {
                within.as_str()
            } else {
                g.1
            };
            format!("{name}: {}", g.2.join(", "))
        })
        .collect();
    if !listed.is_empty() {
        out.push(format!(
            "Which throttle holds the write-up's {}: {}",
            per_s(t),
            listed.join("; ")
        ));
    }

    let late = |p: Pacer| ns(per_run(p, |x| x.late_p50_ns));
    let gap = |p: Pacer| ns(per_run(p, |x| x.gap_p50_ns));
    out.push(format!(
        "How late and how even: the deadline throttle started its operations a median {} \
         after their scheduled times, with a median gap of {} for a period of {}; tokio's \
         `interval` (Burst) a median {} late, with a median gap of {} (its millisecond \
         timer is explained and measured in [Short \
         sleeps](short-sleeps.md#tokios-millisecond-timer))",
        late(Pacer::Deadline),
        gap(Pacer::Deadline),
        Unit::Nanos.format(1e9 / t),
        late(Pacer::TokioBurst),
        gap(Pacer::TokioBurst),
    ));

    if let Some(naive) = share(Pacer::Naive) {
        let standing = match held(&naive) {
            Held::Short => "short of it".to_string(),
            Held::Over => "above it".to_string(),
            Held::Within => format!("within {} of it", threshold_text()),
            Held::Undecided => "too uncertain here to call".to_string(),
        };
        let (kd, kn) = (
            RatesKey::rate(Pacer::Deadline, t),
            RatesKey::rate(Pacer::Naive, t),
        );
        let versus = match (r.estimate(&kd), r.estimate(&kn)) {
            (Some(_), Some(_)) => format!(
                "; {}",
                paired_sentence(
                    r,
                    "the deadline throttle's rate",
                    "the naive loop's",
                    &kd,
                    &kn,
                    Better::Higher
                )
            ),
            _ => String::new(),
        };
        out.push(format!(
            "The write-up's naive `op; sleep(1 ms)` loop reached {} of the target, \
             {standing}: it waited {} between operations where it asked for 1 ms, and, \
             keeping no schedule, started its operations a median {} after the times a \
             schedule would have set{versus}",
            pct(&naive.scaled(0.01)),
            ns(per_run(Pacer::Naive, |x| x.wait_per_op_ns)),
            late(Pacer::Naive),
        ));
    }

    let burst = |p: Pacer| {
        r.estimate_of(|d| Some(d.stall(p)?.stall.as_ref()?.burst as f64))
            .map_or("–".into(), |e| sig3(e.median))
    };
    if let Some(hiccup) = r.param("hiccup_ms") {
        out.push(format!(
            "After one {} ms stall, the operations each throttle sent back to back to catch \
             up (medians over rounds): tokio Burst {}, the debt loop as published {}, the \
             deadline throttle {} (it allows 10 ms' worth, ten operations, and the first of \
             them ends the stall's long gap), tokio Delay {} and Skip {}",
            fmt_count(hiccup as u64),
            burst(Pacer::TokioBurst),
            burst(Pacer::DebtAsPublished),
            burst(Pacer::Deadline),
            burst(Pacer::TokioDelay),
            burst(Pacer::TokioSkip),
        ));
    }

    let refs = reference()?;
    let mean = |send: bool| refs.naive.iter().find(|x| x.with_send == send);
    let late: Vec<f64> = refs
        .sweep
        .iter()
        .map(|x| x.mean_ms - x.requested_ms as f64)
        .collect();
    let (least, most) = late
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let writeup = match (mean(true), mean(false)) {
        (Some(a), Some(b)) if least.is_finite() => format!(
            "its naive loop took a Mean of {} per operation with the send and {} without \
             (about {} and {}, our arithmetic, for a target of 1,000 per second); its sleeps \
             of 1 to 50 ms ran {} to {} late on average (Mean minus request, our \
             subtraction). It sketched a \
             compensating loop it was “not even sure” was correct, and measured no throttle \
             that holds the rate.",
            mean_ms(a.mean_ms),
            mean_ms(b.mean_ms),
            Unit::OpsPerSec.format(1e3 / a.mean_ms),
            Unit::OpsPerSec.format(1e3 / b.mean_ms),
            mean_ms(least),
            mean_ms(most),
        ),
        _ => String::new(),
    };
    Ok(answer_block(out, &writeup))
}

// ------------------------------------------------------------------ the naive loop

/// The write-up's benchmark on your machine, beside its published Mean.
fn naive_table(r: &Results<NaiveRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new([
        "loop",
        "time per op",
        "asleep per op",
        "rate",
        "write-up: Mean ± Error",
    ]);
    let mut ours = Vec::new();
    for with_send in WITH_SEND {
        let Some(e) = r.estimate(&NaiveKey { with_send }) else {
            continue;
        };
        let theirs = refs.naive.iter().find(|x| x.with_send == with_send);
        if let Some(x) = theirs {
            ours.push(format!(
                "{} for *{}*",
                Unit::OpsPerSec.format(1e3 / x.mean_ms),
                loop_name(with_send)
            ));
        }
        t.row(cells![
            loop_name(with_send),
            fmt_estimate(&e, Unit::Nanos),
            fmt_opt_estimate(asleep(r, with_send), Unit::Nanos),
            fmt_estimate(&e.inverse().scaled(1e9), Unit::OpsPerSec),
            theirs.map_or("–".into(), |x| {
                format!("{:.3} ± {} ms", x.mean_ms, spread_ms(x.error_ms))
            }),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "the loop recorded no iterations");
    let sent: u64 = r.data().map(|d| d.datagrams_sent).sum();
    let errors: u64 = r.data().map(|d| d.send_errors).sum();
    let received: Option<u64> = r.data().map(|d| d.datagrams_received).sum();
    let whither = match received {
        Some(n) => format!("received by the reading thread: {}", fmt_count(n)),
        None => format!(
            "to a loopback port nobody holds, as in the write-up; send errors: {}",
            fmt_count(errors)
        ),
    };
    Ok(format!(
        "{}\n*Time per op*: one iteration of {} operations per loop and round, divided; \
         *asleep per op*: the part of it spent inside the 1 ms sleeps; *rate*: one second \
         over the time per op. Medians over rounds with 95 % intervals. One second over the \
         write-up's Mean (our arithmetic) gives {}. Datagrams sent: {}, {whither}.\n\n{}\n\n{}\n",
        t.to_markdown(),
        r.param("ops").map_or("–".into(), |v| fmt_count(v as u64)),
        ours.join(" and "),
        fmt_count(sent),
        naive_findings(r).join(" "),
        refs.attribution()
    ))
}

/// A naive loop as the table and sentences name it.
fn loop_name(with_send: bool) -> &'static str {
    if with_send {
        "send; sleep(1 ms)"
    } else {
        "sleep(1 ms) only"
    }
}

/// The mean time per operation a loop spent in its sleeps, over rounds.
fn asleep(r: &Results<NaiveRound>, with_send: bool) -> Option<Estimate> {
    r.estimate_of(|d| {
        d.runs
            .iter()
            .find(|x| x.with_send == with_send)?
            .asleep_per_op_ns
    })
}

/// Where the naive loop's time goes, and whether the send shows, by the verdict rule.
fn naive_findings(r: &Results<NaiveRound>) -> Vec<String> {
    let mut out = Vec::new();
    let (ka, kb) = (NaiveKey { with_send: true }, NaiveKey { with_send: false });
    if let (Some(per_op), Some(slept)) = (r.estimate(&ka), asleep(r, true)) {
        let over = per_op.median - 1e6;
        let share = (slept.median - 1e6) / over;
        if over > 0.0 && share.is_finite() {
            out.push(format!(
                "With the send, an operation took {} more than the 1 ms asked; the sleep's own \
                 overshoot ({} asleep per operation, less 1 ms) is {:.0} % of that excess.",
                Unit::Nanos.format(over),
                Unit::Nanos.format(slept.median),
                (share * 100.0).clamp(0.0, 100.0)
            ));
        }
    }
    if r.estimate(&ka).is_some() && r.estimate(&kb).is_some() {
        out.push(format!(
            "What the send costs: {}.",
            paired_sentence(
                r,
                "the loop with the send",
                "the loop without",
                &ka,
                &kb,
                Better::Lower
            )
        ));
    }
    out
}

// ----------------------------------------------------------------- the sleep sweep

/// All rounds' sleeps of one length, pooled.
fn pooled_sleeps(r: &Results<SweepRound>, ms: u64) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(ms).map(|l| &l.actual))
}

fn sweep_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let mut dists: Vec<Dist> = SWEEP_MS.iter().map(|&ms| pooled_sleeps(r, ms)).collect();
    dists.push(pooled_back_to_back(r));
    let tails = Tails::for_counts(dists.iter().map(Dist::len)).without_p999();
    let mut headers = vec![
        "requested",
        "actual sleep",
        "late by",
        "waiting for a CPU",
        "sleeps",
    ];
    headers.extend(tails.tail_headers());
    let mut t = Table::new(headers);
    let rows = SWEEP_MS
        .iter()
        .map(|&ms| (format!("{ms} ms"), SweepKey::Late(ms), Some(ms)))
        .chain([("1 ms, back to back".to_string(), SweepKey::BackToBack, None)]);
    for ((label, key, ms), d) in rows.zip(&dists) {
        let (Some(late), Some(s)) = (r.estimate(&key), d.summary()) else {
            continue;
        };
        fn length(x: &SweepRound, ms: Option<u64>) -> Option<&SweepLength> {
            match ms {
                Some(ms) => x.find(ms),
                None => x.back_to_back.as_ref(),
            }
        }
        let actual = r.estimate_of(|x| length(x, ms)?.median_ns);
        let waiting = r.estimate_of(|x| length(x, ms)?.run_delay_ns);
        let mut row: Vec<Cell> = cells![
            label,
            fmt_opt_estimate(actual, Unit::Nanos),
            fmt_estimate(&late, Unit::Nanos),
            fmt_opt_estimate(waiting, Unit::Nanos),
            fmt_count(s.n),
        ]
        .into();
        row.extend(
            tails
                .tail_cells(&s, |v| Unit::Nanos.format(v))
                .into_iter()
                .map(Cell::from),
        );
        t.row(row);
    }
    anyhow::ensure!(!t.is_empty(), "the sweep recorded no sleeps");
    Ok(format!(
        "{}\n*Actual sleep*, *late by* (actual minus requested) and *waiting for a CPU* (the \
         thread's run-queue delay during the sleep: runnable, not yet running): the median \
         over rounds of each round's median for that length, with its 95 % interval. \
         *Sleeps* and *max* pool every sleep of every round{}. Each sleep of the sweep \
         follows a sleep of another length; *1 ms, back to back* are 1 ms sleeps that each \
         follow another 1 ms sleep ({} of each block of {}, the first left out).{}\n\n{}\n",
        t.to_markdown(),
        if tails.p99 {
            ""
        } else {
            " (a p99 column appears from 1,000 sleeps per length)"
        },
        BACK_TO_BACK - 1,
        BACK_TO_BACK,
        slack_note(r),
        sweep_findings(r).join(" "),
    ))
}

/// The back-to-back 1 ms sleeps of every round, pooled.
fn pooled_back_to_back(r: &Results<SweepRound>) -> Dist {
    harness::render::pooled(r.data(), |round| {
        round.back_to_back.as_ref().map(|l| &l.actual)
    })
}

/// The timer slack the sleeping thread ran with, as the rounds read it.
fn slack_note(r: &Results<SweepRound>) -> String {
    let mut seen: Vec<u64> = r.data().filter_map(|d| d.timer_slack_ns).collect();
    seen.sort_unstable();
    seen.dedup();
    match seen.as_slice() {
        [] => String::new(),
        [one] => format!(
            " Timer slack in force on the sleeping thread: {}.",
            Unit::Nanos.format(*one as f64)
        ),
        many => format!(
            " Timer slack in force on the sleeping thread: {} (it differed between rounds).",
            many.iter()
                .map(|&v| Unit::Nanos.format(v as f64))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What the 1 ms sleep's lateness is made of, and whether what came before it matters.
fn sweep_findings(r: &Results<SweepRound>) -> Vec<String> {
    let mut out = Vec::new();
    let one = SweepKey::Late(1);
    let waiting = r.estimate_of(|x| x.find(1)?.run_delay_ns);
    if let (Some(late), Some(w)) = (r.estimate(&one), waiting) {
        out.push(format!(
            "Of a 1 ms sleep's lateness, {}, the thread's run-queue delay counter \
             (*waiting for a CPU*) accounts for {}.",
            fmt_estimate(&late, Unit::Nanos),
            fmt_estimate(&w, Unit::Nanos),
        ));
    }
    let last = SWEEP_MS[SWEEP_MS.len() - 1];
    let long = SweepKey::Late(last);
    if r.estimate(&long).is_some() && r.estimate(&one).is_some() {
        out.push(format!(
            "Length against lateness: {}.",
            paired_sentence(
                r,
                &format!("the lateness of a {last} ms sleep"),
                "that of a 1 ms sleep",
                &long,
                &one,
                Better::Higher
            )
        ));
    }
    if r.estimate(&one).is_some() && r.estimate(&SweepKey::BackToBack).is_some() {
        out.push(format!(
            "What came before the sleep: {}.",
            paired_sentence(
                r,
                "the lateness of a 1 ms sleep after a 30 or 50 ms one",
                "that of a 1 ms sleep right after another",
                &one,
                &SweepKey::BackToBack,
                Better::Higher
            )
        ));
    }
    out
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
        t.row(cells![
            ms_.to_string(),
            mean_ms(row.mean_ms),
            Cell::join(
                [
                    spread_ms(row.error_ms).into(),
                    format!("{} ms", spread_ms(row.stddev_ms)).into(),
                ],
                " / "
            ),
            Unit::Nanos.format((row.mean_ms - ms_ as f64) * 1e6),
            r.estimate(&SweepKey::Late(ms_))
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
        let mut row: Vec<Cell> = vec![pacer.label().into()];
        for &target in &targets {
            row.push(match r.estimate(&RatesKey::rate(pacer, target)) {
                Some(e) => {
                    let capped = any_capped(r, pacer, target);
                    dagger |= capped;
                    let share = fmt_estimate(&e.scaled(100.0 / target), Unit::Number);
                    // A marked figure is written as text, so its interval keeps to its
                    // line, as the page has always shown it.
                    if capped {
                        format!("{share} †").into()
                    } else {
                        share.into()
                    }
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
        "{}\nAchieved rate in **% of the target**: the median over rounds of each run's rate, \
         with its 95 % interval. A run's rate is counted from its *second* operation to its \
         last (n − 2 gaps over that time): every throttle lets the first operation go without \
         a wait, so a rate counted from it charges one wake-up's lateness, the last \
         operation's, against the whole run, and in a short run that endpoint decides the \
         first decimal (the findings set the two countings side by side). Each run asked for \
         the operations of {} ms at its target{at_1k}, at least {}.{}\n",
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
            .filter_map(|&t| Some((t, r.estimate(&RatesKey::rate(pacer, t))?)))
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

/// Comparisons by the verdict rule, said briefly: each clear difference in a sentence
/// with its ratio; the pairs the rule calls about the same, or cannot tell apart,
/// listed. `key` gives a throttle's reading; each pair is (a, b) with the names the
/// sentences use.
fn verdicts(
    r: &Results<RatesRound>,
    key: impl Fn(Pacer) -> RatesKey,
    pairs: &[(Named, Named)],
) -> Vec<String> {
    let mut clear = Vec::new();
    let mut undecided = Vec::new();
    for &((a, an), (b, bn)) in pairs {
        let Some(c) = r.compare(&key(a), &key(b)) else {
            continue;
        };
        if c.is_clear() {
            // tokio's name stays lower-case at the start of a sentence.
            clear.push(keep_tokio(comparison_sentence(
                &format!("{an}'s rate"),
                &format!("{bn}'s"),
                &c,
                Better::Higher,
            )));
        } else {
            undecided.push((format!("{an} and {bn}"), c));
        }
    }
    clear.extend(undecided_lists(&undecided));
    clear
}

/// A sentence capitalised, unless it opens with tokio's name.
fn keep_tokio(s: String) -> String {
    if s.starts_with("tokio") {
        s
    } else {
        capitalise(&s)
    }
}

/// The pairs the findings compare at every rate.
const RATE_PAIRS: [(Named, Named); 6] = [
    (
        (Pacer::Deadline, "the deadline throttle"),
        (Pacer::Naive, "the naive loop"),
    ),
    (
        (Pacer::Deadline, "the deadline throttle"),
        (Pacer::Compensating, "the compensating loop"),
    ),
    (
        (Pacer::TokioBurst, "tokio Burst"),
        (Pacer::TokioDelay, "tokio Delay"),
    ),
    (
        (Pacer::TokioSkip, "tokio Skip"),
        (Pacer::TokioDelay, "tokio Delay"),
    ),
    (
        (Pacer::TokioBurst, "tokio Burst"),
        (Pacer::TokioSkip, "tokio Skip"),
    ),
    (
        (Pacer::TokioBurst, "tokio Burst"),
        (Pacer::Deadline, "the deadline throttle"),
    ),
];

/// What each throttle reached, and comparisons decided by the verdict rule.
fn findings(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    for t in targets(r) {
        let said = verdicts(r, |p| RatesKey::rate(p, t), &RATE_PAIRS);
        if said.is_empty() {
            continue;
        }
        out.push(format!("**{}**: {}.", per_s(t), said.join(". ")));
    }
    if let Some(s) = endpoint_finding(r) {
        out.push(s);
    }
    if let Some(s) = reader_finding(r) {
        out.push(s);
    }
    if let Some(s) = pairs_finding(r) {
        out.push(s);
    }
    if let Some(s) = debt_rate_finding(r) {
        out.push(s);
    }
    if let Some(s) = stall_findings(r) {
        out.push(s);
    }
    if let Some(s) = twin_finding(r) {
        out.push(s);
    }
    anyhow::ensure!(!out.is_empty(), "no throttle has a result to compare");
    Ok(out.iter().map(|s| format!("- {s}\n")).collect())
}

/// The deadline throttle's rate counted from the first operation against the reading
/// (from the second), at every rate: what the endpoint does to a short run.
fn endpoint_finding(r: &Results<RatesRound>) -> Option<String> {
    let p = Pacer::Deadline;
    let mut parts = Vec::new();
    for t in targets(r) {
        let from_first = |d: &RatesRound| Some(d.find(p, t)?.achieved * 100.0 / t);
        let from_second = |d: &RatesRound| Some(d.find(p, t)?.reading()? * 100.0 / t);
        let Some(c) = r.compare_of(from_first, from_second) else {
            continue;
        };
        let n = r
            .estimate_of(|d| Some(d.find(p, t)?.ran as f64))
            .map_or(0, |e| e.median.round() as u64);
        parts.push(format!(
            "at {} (n = {}), {} % of the target counted from the first start and {} % from \
             the second: {}",
            per_s(t),
            fmt_count(n),
            fmt_estimate(&c.a, Unit::Number),
            fmt_estimate(&c.b, Unit::Number),
            comparison_sentence(
                "the rate from the first start",
                "the rate from the second",
                &c,
                Better::Higher
            )
        ));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "**Where a run's rate is counted from**, the deadline throttle: {}. By our \
         arithmetic, counted from the first start the rate is (n − 1)P ÷ ((n − 1)P + L), \
         with L the last operation's lateness (the *late* column of the jitter tables), \
         since the first operation goes at once and is late by nothing.",
        parts.join("; ")
    ))
}

/// The control arms: the same throttle at the same rate, sending to a thread of the
/// process that reads every datagram, against sending where the write-up did.
fn reader_finding(r: &Results<RatesRound>) -> Option<String> {
    let mut parts = Vec::new();
    for (p, t) in READER_ARMS {
        let Some(rate) = r.compare(&RatesKey::reader(p, t), &RatesKey::rate(p, t)) else {
            continue;
        };
        let mut s = format!(
            "{} at {}: {}",
            p.label(),
            per_s(t),
            comparison_sentence(
                "the rate with a reader thread",
                "the rate without",
                &rate,
                Better::Higher
            )
        );
        let both = |f: fn(&RateRun) -> Option<f64>| {
            r.compare_of(|d| f(d.control(p, t)?), |d| f(d.find(p, t)?))
        };
        let preempted = |control: bool| {
            r.estimate_of(|d| {
                let x = if control {
                    d.control(p, t)
                } else {
                    d.find(p, t)
                };
                x?.per_op.involuntary
            })
        };
        if let (Some(with), Some(without)) = (preempted(true), preempted(false)) {
            s.push_str(&format!(
                "; the pacing thread was preempted {} times per operation with it and {} \
                 without",
                fmt_estimate(&with, Unit::Number),
                fmt_estimate(&without, Unit::Number),
            ));
        }
        if let Some(c) = both(|x| x.send_ns_per_op) {
            s.push_str(&format!(
                "; a send took {} with it and {} without: {}",
                fmt_estimate(&c.a, Unit::Nanos),
                fmt_estimate(&c.b, Unit::Nanos),
                comparison_sentence(
                    "the send with a reader",
                    "the send without",
                    &c,
                    Better::Lower
                )
            ));
        }
        parts.push(s);
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "**What a reader thread in the process costs** (the control arms: the same runs, \
         sending to a socket of the process that a thread reads, as this chapter did before; \
         every other run sends to a port nobody holds, as the write-up did): {}.",
        parts.join("; ")
    ))
}

/// The published debt loop's back-to-back pairs at the write-up's rate, counted.
fn pairs_finding(r: &Results<RatesRound>) -> Option<String> {
    let t = WRITEUP_RATE;
    let short = r.estimate_of(|d| {
        let x = d.find(Pacer::DebtAsPublished, t)?;
        (x.ran >= 2).then(|| x.short_gaps as f64 / (x.ran - 1) as f64 * 100.0)
    })?;
    let gap = r.estimate_of(|d| d.find(Pacer::DebtAsPublished, t)?.gap_p50_ns)?;
    let sleeps = r
        .estimate_of(|d| d.find(Pacer::DebtAsPublished, t)?.per_op.voluntary)
        .map(|e| {
            format!(
                "; its thread slept {} times per operation",
                fmt_estimate(&e, Unit::Number)
            )
        })
        .unwrap_or_default();
    Some(format!(
        "**The debt loop as published, at {}**: {} of its gaps were shorter than half a \
         period (operations back to back), and its median gap was {} for a period of {}{sleeps}.",
        per_s(t),
        pct(&short.scaled(0.01)),
        fmt_estimate(&gap, Unit::Nanos),
        Unit::Nanos.format(1e9 / t),
    ))
}

/// Why the published debt loop reads above its target: its runs end on the second
/// operation of a pair, so the last one starts about a period before its slot, and a
/// rate counted from the first operation to the last covers n − 1 gaps in about n − 2
/// periods. The early end is measured (the drift); the arithmetic is ours.
fn debt_rate_finding(r: &Results<RatesRound>) -> Option<String> {
    let p = Pacer::DebtAsPublished;
    let mut parts = Vec::new();
    let mut case =
        |name: String, period_ns: f64, find: &dyn Fn(&RatesRound) -> Option<&RateRun>| {
            let rate = r.estimate_of(|d| Some(find(d)?.achieved * period_ns / 1e9))?;
            let drift = r.estimate_of(|d| Some(find(d)?.drift_ns))?;
            let n = r.estimate_of(|d| Some(find(d)?.ran as f64))?.median.round();
            // Only where the premise is measured: the run ended early on its schedule, and
            // with an even count, on the second operation of a pair.
            if drift.hi >= 0.0 || n < 3.0 || n % 2.0 != 0.0 {
                return None;
            }
            parts.push(format!(
                "{name} (a period of {}), the last of n = {} operations ended {} behind the \
             schedule set by the first, and (n − 1)/(n − 2) = {:.1} % against a measured {} \
             counted from the first operation",
                Unit::Nanos.format(period_ns),
                fmt_count(n as u64),
                fmt_estimate(&drift, Unit::Nanos),
                (n - 1.0) / (n - 2.0) * 100.0,
                pct(&rate),
            ));
            Some(())
        };
    for t in targets(r) {
        case(format!("at {}", per_s(t)), 1e9 / t, &|d| d.find(p, t));
    }
    case("in the stall run".to_string(), 1e9 / STALL_RATE, &|d| {
        d.stall(p)
    });
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "**Why the debt loop as published reads above its target when its rate is counted \
         from the first operation** (our hypothesis, with our arithmetic): it runs in pairs, \
         and a run with an even number of operations ends on the second of a pair, which \
         goes about a period before its slot; a rate counted from the first operation to the \
         last then covers n − 1 gaps in about n − 2 periods (counted from the second, as the \
         tables do, it covers n − 2 gaps in about n − 2 periods). {}.",
        capitalise(&parts.join("; "))
    ))
}

/// The A/A self-check: the twin arm against the run it repeats, by the verdict rule.
fn twin_finding(r: &Results<RatesRound>) -> Option<String> {
    let t = WRITEUP_RATE;
    let c = r.compare(&RatesKey::rate(TWIN, t), &RatesKey::twin(TWIN, t))?;
    Some(format!(
        "{}.",
        harness::render::aa_sentence(
            &format!("the deadline throttle at {}", per_s(t)),
            Some("rate"),
            &format!("{} of the target", pct(&c.a.scaled(1.0 / t))),
            &pct(&c.b.scaled(1.0 / t)),
            &c,
            Better::Higher,
        )
    ))
}

/// A throttle and how a finding names it.
type Named = (Pacer, &'static str);

/// The pairs the stall finding compares: tokio's behaviours, and Burst against the
/// deadline throttle.
const STALL_PAIRS: [(Named, Named); 3] = [
    (
        (Pacer::TokioBurst, "tokio Burst"),
        (Pacer::TokioDelay, "tokio Delay"),
    ),
    (
        (Pacer::TokioSkip, "tokio Skip"),
        (Pacer::TokioDelay, "tokio Delay"),
    ),
    (
        (Pacer::TokioBurst, "tokio Burst"),
        (Pacer::Deadline, "the deadline throttle"),
    ),
];

/// The stall runs: what each tokio behaviour, and the bounded catch-up, did with one
/// stalled operation.
fn stall_findings(r: &Results<RatesRound>) -> Option<String> {
    let hiccup = r.param("hiccup_ms")?;
    let share = |p: Pacer| {
        r.estimate(&RatesKey::Stall(p))
            .map(|e| e.scaled(1.0 / STALL_RATE))
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
    Some(format!(
        "**With one {} ms stall at {}**: over the run, {} of the target. {}.",
        fmt_count(hiccup as u64),
        per_s(STALL_RATE),
        reach.join(", "),
        verdicts(r, RatesKey::Stall, &STALL_PAIRS).join(". ")
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
        let Some(e) = r.estimate(&RatesKey::Stall(pacer)) else {
            continue;
        };
        let per_run =
            |f: fn(&RateRun) -> Option<f64>| r.estimate_of(|d| d.stall(pacer).and_then(f));
        t.row(cells![
            pacer.label(),
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
         longer, once. *Rate*: from the second operation to the last, stall included. *Behind at the end*: how late \
         the last operation started against the schedule set by the first. *Back to back \
         after*: operations less than half a period after the one before, right after the \
         stall. Medians over rounds, with 95 % intervals.\n",
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
    harness::render::pooled(r.data(), |round| round.find(pacer, target).map(|x| &x.gaps))
}

/// How evenly each throttle spreads its operations at one target rate, and how late
/// they start against the schedule.
fn jitter_table(r: &Results<RatesRound>, target: f64) -> anyhow::Result<String> {
    anyhow::ensure!(
        targets(r).contains(&target),
        "this result has no runs at {} (see rates_from and rates_to)",
        per_s(target)
    );
    let mut t = Table::new(["throttle", "median gap", "shortest–longest", "late, median"]);
    let mut gaps = u64::MAX;
    for pacer in Pacer::ALL {
        let per_run =
            |f: fn(&RateRun) -> Option<f64>| r.estimate_of(|d| d.find(pacer, target).and_then(f));
        let d = pooled_gaps(r, pacer, target);
        gaps = gaps.min(d.len());
        let Some(s) = d.summary() else { continue };
        t.row(cells![
            pacer.label(),
            fmt_opt_estimate(per_run(|x| x.gap_p50_ns), Unit::Nanos),
            fmt_range(s.min, s.max, Unit::Nanos),
            fmt_opt_estimate(per_run(|x| x.late_p50_ns), Unit::Nanos),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no throttle ran at {}", per_s(target));
    let ideal = Unit::Nanos.format(1e9 / target);
    if target != WRITEUP_RATE {
        return Ok(format!(
            "{}\nThe ideal gap is {ideal}; the columns are those of the table at {}.\n",
            t.to_markdown(),
            per_s(WRITEUP_RATE)
        ));
    }
    Ok(format!(
        "{}\nThe ideal gap is {ideal}. *Late*: how much later than its schedule operation *k* \
         started (the first operation's start plus *k* periods; negative: early), the median \
         over a run. *Median gap* and *late*: medians over rounds of each run's value, with \
         95 % intervals. *Shortest–longest*: over every gap of every round (at least {} per \
         throttle).\n",
        t.to_markdown(),
        fmt_count(gaps)
    ))
}

/// Why each throttle runs as it does at the write-up's rate: where its time goes and
/// what the scheduler did to its thread, per operation.
fn why_table(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let target = WRITEUP_RATE;
    anyhow::ensure!(
        targets(r).contains(&target),
        "this result has no runs at {} (see rates_from and rates_to)",
        per_s(target)
    );
    let mut t = Table::new([
        "throttle",
        "waiting per op",
        "in the send per op",
        "sleeps per op",
        "preempted per op",
        "waiting for a CPU per op",
    ]);
    let mut any_counter = false;
    for pacer in Pacer::ALL {
        let per_run =
            |f: fn(&RateRun) -> Option<f64>| r.estimate_of(|d| d.find(pacer, target).and_then(f));
        let Some(wait) = per_run(|x| x.wait_per_op_ns) else {
            continue;
        };
        let counts = [
            per_run(|x| x.per_op.voluntary),
            per_run(|x| x.per_op.involuntary),
        ];
        let delay = per_run(|x| x.per_op.run_delay_ns);
        any_counter |= counts.iter().any(Option::is_some) || delay.is_some();
        t.row(cells![
            pacer.label(),
            fmt_estimate(&wait, Unit::Nanos),
            fmt_opt_estimate(per_run(|x| x.send_ns_per_op), Unit::Nanos),
            fmt_opt_estimate(counts[0], Unit::Number),
            fmt_opt_estimate(counts[1], Unit::Number),
            fmt_opt_estimate(delay, Unit::Nanos),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no throttle ran at {}", per_s(target));
    Ok(format!(
        "{}\nAt {}, per operation of each run: *waiting*, the time between operations not \
         spent in one (the sleep, the throttle's bookkeeping); *in the send*, the time \
         inside the operation (one `send_to` to a loopback port nobody holds); *sleeps*, the pacing thread's \
         voluntary context switches (it blocked: a sleep, or tokio parking its thread); \
         *preempted*, its involuntary ones (the scheduler took the CPU away); *waiting for a \
         CPU*, its run-queue delay (runnable, not running). Medians over rounds with 95 % \
         intervals.{}\n",
        t.to_markdown(),
        per_s(target),
        if any_counter {
            ""
        } else {
            " This OS does not give the thread's context switches or run-queue delay, so those \
             columns are empty."
        }
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
        let mut row: Vec<Cell> = vec![pacer.label().into()];
        for &target in &targets {
            let e = r.estimate_of(|d| Some(d.find(pacer, target)?.cpu_share()? * 100.0));
            any |= e.is_some();
            row.push(fmt_opt_estimate(e, Unit::Number).into());
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
         of one core**: the median over rounds of each run's share, with its 95 % interval.\n\n{}",
        t.to_markdown(),
        cpu_findings(r, &targets)
    ))
}

/// At 10,000/s and at the highest rate: tokio's interval against the deadline
/// throttle, in how often each put its thread to sleep and in CPU, and whether fewer
/// sleeps went with less CPU there.
fn cpu_findings(r: &Results<RatesRound>, targets: &[f64]) -> String {
    let mut rates: Vec<f64> = targets.iter().copied().filter(|&t| t == 10_000.0).collect();
    if let Some(&top) = targets.last()
        && !rates.contains(&top)
    {
        rates.push(top);
    }
    let cpu = |x: &RateRun| Some(x.cpu_share()? * 100.0);
    let sleeps = |x: &RateRun| x.per_op.voluntary;
    let (tokio, deadline) = (Pacer::TokioBurst, Pacer::Deadline);
    let mut out = Vec::new();
    for at_rate in rates {
        let both = |f: &dyn Fn(&RateRun) -> Option<f64>| {
            r.compare_of(
                |d| d.find(tokio, at_rate).and_then(f),
                |d| d.find(deadline, at_rate).and_then(f),
            )
        };
        let Some(slept) = both(&sleeps) else {
            continue;
        };
        let (sa, sb) = (slept.a, slept.b);
        let mut s = format!(
            "At {}, tokio Burst's thread slept {} times per operation and the deadline \
             throttle's {}: {}",
            per_s(at_rate),
            fmt_estimate(&sa, Unit::Number),
            fmt_estimate(&sb, Unit::Number),
            comparison_sentence(
                "tokio's count",
                "the deadline throttle's",
                &slept,
                Better::Higher
            )
        );
        if let Some(cpu) = both(&cpu) {
            let (ca, cb) = (cpu.a, cpu.b);
            let fewer = slept.verdict == Verdict::Below;
            let less = cpu.verdict == Verdict::Below;
            let reading = match (fewer, less) {
                (true, true) => " Here fewer sleeps went with less CPU.",
                (true, false) => " Here fewer sleeps did not show as less CPU.",
                _ => "",
            };
            s.push_str(&format!(
                ". Its CPU share was {} % of one core, the deadline throttle's {} %: {}.{reading}",
                fmt_estimate(&ca, Unit::Number),
                fmt_estimate(&cb, Unit::Number),
                comparison_sentence(
                    &format!("tokio Burst's share at {}", per_s(at_rate)),
                    "the deadline throttle's",
                    &cpu,
                    Better::Higher,
                )
            ));
        }
        out.push(s);
    }
    if out.is_empty() {
        return String::new();
    }
    format!("{}\n", harness::render::findings(out))
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
    headers.extend(tails.tail_headers());
    let mut t = Table::new(headers);
    for (&m, d) in Measure::ALL.iter().zip(&dists) {
        let (Some(e), Some(s)) = (r.estimate(&m), d.summary()) else {
            continue;
        };
        let mut row: Vec<Cell> =
            cells![m.label(), fmt_estimate(&e, Unit::Nanos), fmt_count(s.n)].into();
        row.extend(
            tails
                .tail_cells(&s, |v| Unit::Nanos.format(v))
                .into_iter()
                .map(Cell::from),
        );
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
        r.estimate(&a.0).zip(r.estimate(&b.0))?;
        Some(paired_sentence(r, a.1, b.1, &a.0, &b.0, Better::Higher))
    };
    let answered: u64 = r.data().map(|d| d.answered).sum();
    let held_up: u64 = r.data().map(|d| d.sent_late).sum();
    let late = r.estimate_of(|d| d.send_late_p50_ns);
    let worst = r.data().filter_map(|d| d.send_late_max_ns).reduce(f64::max);
    let pauses: u64 = r.data().map(|d| d.pauses).sum();
    let first = r.data().next();
    let stall_ms = first.map_or(0, |d| d.stall_ms);
    // A pause of `stall_ms` holds up the requests due during it, less the one it delays.
    let per_pause = first.map_or(0.0, |d| (d.stall_ms as f64 * d.rate / 1e3 - 1.0).max(0.0));
    let could = (pauses as f64 * per_pause).round() as u64;
    let intended = (answered > 0).then(|| {
        format!(
            "Intended against actual send: {} of {} answered requests ({:.1} %) went out more \
             than one period after their intended time (the rounds' {} pauses of {} ms hold up \
             the requests due while they last: about {}); the median request went out {} after it, the latest {}.",
            fmt_count(held_up),
            fmt_count(answered),
            held_up as f64 * 100.0 / answered as f64,
            fmt_count(pauses),
            stall_ms,
            fmt_count(could),
            fmt_opt_estimate(late, Unit::Nanos),
            worst.map_or("–".into(), |v| Unit::Nanos.format(v)),
        )
    });
    let sentences: Vec<String> = [
        intended,
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

    /// A rate is short of its target or above it only by the verdict rule, within the
    /// threshold only when its whole interval is, and undecided otherwise.
    #[test]
    fn a_rate_holds_its_target_by_the_verdict_rule() {
        let e = |median: f64, lo: f64, hi: f64| Estimate {
            median,
            lo,
            hi,
            confidence: 0.95,
            n: 6,
            drift: None,
        };
        assert_eq!(held(&e(90.8, 72.1, 91.2)), Held::Short);
        assert_eq!(held(&e(130.0, 129.0, 131.0)), Held::Over);
        // Apart from the target but within 5 %: held.
        assert_eq!(held(&e(98.3, 98.0, 98.5)), Held::Within);
        // Overlapping the target and inside the band: held.
        assert_eq!(held(&e(99.8, 99.7, 100.2)), Held::Within);
        // Overlapping the target, but the interval reaches past the band: undecided.
        assert_eq!(held(&e(98.5, 81.7, 100.0)), Held::Undecided);
        // Apart and more than 5 % off, but only just below: still short.
        assert_eq!(held(&e(94.0, 93.0, 94.5)), Held::Short);
    }

    #[test]
    fn percentages_and_sentences_read_well() {
        let e = Estimate::of(&[0.5, 0.52, 0.51, 0.49, 0.5, 0.53]).unwrap();
        assert_eq!(pct(&e), "50.5 % (49.0–53.0)");
    }
}
