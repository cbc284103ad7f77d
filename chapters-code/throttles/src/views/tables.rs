//! The chapter's tables. Each cell is a median over rounds with its 95 % interval, or a
//! ratio worded by the verdict rule (`ratio_cell`); the notes under a table define its
//! columns and nothing more.

use super::reference::{reference, spread_ms};
use super::{Of, has_target, per_s, pooled_gaps, targets};
use crate::Pacer;
use crate::experiments::{
    BACK_TO_BACK, Measure, NaiveKey, NaiveRound, OmissionRound, READER_ARMS, RateRun, RatesKey,
    RatesRound, STALL_AT, STALL_RATE, SWEEP_MS, Stalled, SweepKey, SweepLength, SweepRound, TWIN,
    WITH_SEND, WRITEUP_RATE, stalled_runs,
};
use harness::cells;
use harness::render::{
    Cell, Table, Tails, fmt_count, fmt_estimate, fmt_ns, fmt_opt_estimate, ratio_cell,
};
use harness::stats::{Comparison, Pairing};
use harness::{Dist, Estimate, ReadingKey, Results, Summary, Unit};

/// A comparison's cell: its ratio where the rule finds a difference, else what the rule
/// says; "–" when the rounds lack one arm.
fn ratio(c: Option<Comparison>) -> Cell {
    c.map_or_else(|| "–".into(), |c| ratio_cell(&c).into())
}

/// A per-run value of one throttle at one target, over rounds.
fn per_run(r: &Results<RatesRound>, pacer: Pacer, target: f64, f: Of) -> Option<Estimate> {
    r.estimate_of(|d| d.find(pacer, target).and_then(f))
}

fn opt(e: Option<Estimate>, unit: Unit) -> Cell {
    fmt_opt_estimate(e, unit).into()
}

// ------------------------------------------------------------------ the naive loop

fn loop_name(with_send: bool) -> &'static str {
    if with_send {
        "send; sleep(1 ms)"
    } else {
        "sleep(1 ms) only"
    }
}

/// The write-up's benchmark on this machine, beside its published Mean.
pub(super) fn naive(r: &Results<NaiveRound>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new([
        "loop",
        "time per op",
        "asleep per op",
        "rate",
        "÷ without the send",
        "write-up: Mean ± Error",
    ]);
    let mut inverted = Vec::new();
    let (with, without) = (NaiveKey { with_send: true }, NaiveKey { with_send: false });
    for with_send in WITH_SEND {
        let Some(e) = r.estimate(&NaiveKey { with_send }) else {
            continue;
        };
        let theirs = refs.naive.iter().find(|x| x.with_send == with_send);
        if let Some(x) = theirs {
            let rate = Unit::OpsPerSec.format(1e3 / x.mean_ms);
            inverted.push(format!("{rate} for *{}*", loop_name(with_send)));
        }
        let run = |d: &NaiveRound| d.runs.iter().find(|x| x.with_send == with_send).cloned();
        let asleep = r.estimate_of(|d| run(d)?.asleep_per_op_ns);
        t.row(cells![
            loop_name(with_send),
            fmt_estimate(&e, Unit::Nanos),
            fmt_opt_estimate(asleep, Unit::Nanos),
            fmt_estimate(&e.inverse().scaled(1e9), Unit::OpsPerSec),
            ratio(r.compare(&with, &without).filter(|_| with_send)),
            theirs.map_or("–".into(), |x| {
                format!("{:.3} ± {} ms", x.mean_ms, spread_ms(x.error_ms))
            }),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "the loop recorded no iterations");
    let sent: u64 = r.data().map(|d| d.datagrams_sent).sum();
    let errors: u64 = r.data().map(|d| d.send_errors).sum();
    let whither = match r.data().map(|d| d.datagrams_received).sum::<Option<u64>>() {
        Some(n) => format!("received by a reading thread: {}", fmt_count(n)),
        None => format!("to a port nobody holds; send errors: {}", fmt_count(errors)),
    };
    Ok(format!(
        "{}\n*Time per op*: one iteration of {} operations, divided. *Asleep per op*: \
         the part of it inside the 1 ms sleeps. *Rate*: one second over the time per op. \
         The write-up's Mean, inverted (our arithmetic): {}. Datagrams sent: {}, \
         {whither}.\n\n{}\n",
        t.to_markdown(),
        r.param("ops").map_or("–".into(), |v| fmt_count(v as u64)),
        inverted.join(" and "),
        fmt_count(sent),
        refs.attribution()
    ))
}

// ----------------------------------------------------------------- the sleep sweep

/// The sleeps of one length (`None`: the back-to-back 1 ms sleeps) in one round.
fn length(x: &SweepRound, ms: Option<u64>) -> Option<&SweepLength> {
    match ms {
        Some(ms) => x.find(ms),
        None => x.back_to_back.as_ref(),
    }
}

/// A row's cells followed by the tails of its pooled samples.
fn with_tails(mut row: Vec<Cell>, tails: Tails, s: &Summary) -> Vec<Cell> {
    row.extend(tails.tail_cells(s, fmt_ns).into_iter().map(Cell::from));
    row
}

/// How late each requested sleep was, against the 1 ms sleep, and the tails.
pub(super) fn sweep(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let lengths: Vec<Option<u64>> = SWEEP_MS.iter().map(|&ms| Some(ms)).chain([None]).collect();
    let pool = |ms| harness::render::pooled(r.data(), |d| length(d, ms).map(|l| &l.actual));
    let dists: Vec<Dist> = lengths.iter().map(|&ms| pool(ms)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len)).without_p999();
    let mut headers = vec![
        "requested",
        "late by",
        "÷ 1 ms's",
        "waiting for a CPU",
        "sleeps",
    ];
    headers.extend(tails.tail_headers());
    let mut t = Table::new(headers);
    let one = SweepKey::Late(1);
    for (&ms, d) in lengths.iter().zip(&dists) {
        let key = ms.map_or(SweepKey::BackToBack, SweepKey::Late);
        let (Some(late), Some(s)) = (r.estimate(&key), d.summary()) else {
            continue;
        };
        let row = cells![
            ms.map_or("1 ms, back to back".into(), |ms| format!("{ms} ms")),
            fmt_estimate(&late, Unit::Nanos),
            ratio(r.compare(&key, &one).filter(|_| key != one)),
            opt(r.estimate_of(|x| length(x, ms)?.run_delay_ns), Unit::Nanos),
            fmt_count(s.n),
        ];
        t.row(with_tails(row.into(), tails, &s));
    }
    anyhow::ensure!(!t.is_empty(), "the sweep recorded no sleeps");
    let mut slack: Vec<u64> = r.data().filter_map(|d| d.timer_slack_ns).collect();
    slack.sort_unstable();
    slack.dedup();
    let slack: Vec<String> = slack.iter().map(|&v| fmt_ns(v as f64)).collect();
    Ok(format!(
        "{}\n*Late by*: actual minus requested, the median over rounds of each round's \
         median. *÷ 1 ms's*: per round, against the 1 ms row. *Waiting for a CPU*: the \
         thread's run-queue delay during the sleep. *Sleeps* and the tails pool every \
         round. *Back to back*: 1 ms sleeps that follow a 1 ms sleep ({} of each block of \
         {}); every other sleep follows one of another length. Timer slack: {}.\n",
        t.to_markdown(),
        BACK_TO_BACK - 1,
        BACK_TO_BACK,
        if slack.is_empty() {
            "not read on this OS".into()
        } else {
            slack.join(", ")
        },
    ))
}

// ------------------------------------------------------ every throttle, every rate

/// A table with a column per target rate: a row per key, named, each cell from `cell`.
fn grid<K: Copy>(
    r: &Results<RatesRound>,
    first: &str,
    keys: impl IntoIterator<Item = (K, String)>,
    mut cell: impl FnMut(K, f64) -> Cell,
) -> anyhow::Result<Table> {
    let targets = targets(r);
    anyhow::ensure!(!targets.is_empty(), "no throttle ran");
    let mut t = Table::new(
        [first.to_string()]
            .into_iter()
            .chain(targets.iter().map(|&t| per_s(t))),
    );
    for (k, name) in keys {
        t.row(
            [Cell::from(name)]
                .into_iter()
                .chain(targets.iter().map(|&x| cell(k, x))),
        );
    }
    Ok(t)
}

fn pacers() -> impl Iterator<Item = (Pacer, String)> {
    Pacer::ALL.into_iter().map(|p| (p, p.label().to_string()))
}

/// The runs with a stall inside (see [`stalled_runs`]), as a sentence.
fn stalled(found: &[Stalled], total: usize) -> String {
    let mut said: Vec<String> = (found.iter().take(6))
        .map(|s| {
            let [v, m] = [s.value_ns, s.median_ns].map(fmt_ns);
            format!("{}: {} {v} against {m}", s.run.key().stored(), s.what())
        })
        .collect();
    said.extend((found.len() > 6).then(|| format!("and {} more", found.len() - 6)));
    format!(
        " A § marks a figure with a stall inside a run: a gap between two starts that overran the period \
         by over 3× as much, and 1 ms more, than the median over the arm's rounds of each one's longest gap, or a latest \
         start over 3×, and 1 ms, later than the arm's median. Those runs: {} of {total}{}{}.",
        found.len(),
        if said.is_empty() { "" } else { ": " },
        said.join("; "),
    )
}

const DAGGER: &str = " A † marks a run stopped in some round at twice its planned time plus 20 ms, \
    counted over the operations that ran.";
const START_UP: &str = " A ‡ marks a figure that reads start-up, not a pace: runs that plan \
    fewer than 10 starts past the 2 ms start-up, or governor's 10 ms burst still draining \
    after it (our arithmetic from its time per send).";

/// Achieved rate as a percentage of the target, per throttle and target.
pub(super) fn achieved(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let (mut dagger, mut start_up) = (false, false);
    let (found, total) = stalled_runs(r.data());
    let t = grid(r, "throttle", pacers(), |pacer, target| {
        let Some(e) = r.estimate(&RatesKey::rate(pacer, target)) else {
            return "–".into();
        };
        let share = fmt_estimate(&e.scaled(100.0 / target), Unit::Number);
        let runs = || r.data().filter_map(|d| d.find(pacer, target));
        let capped = runs().any(RateRun::capped);
        let early = runs().any(RateRun::start_up_only);
        dagger |= capped;
        start_up |= early;
        let stall = runs().any(|x| found.iter().any(|f| std::ptr::eq(f.run, x)));
        let marks = [(capped, " †"), (early, " ‡"), (stall, " §")];
        let marks: String = marks.iter().filter(|m| m.0).map(|m| m.1).collect();
        // A marked figure is written as text, so its interval keeps to its line.
        if marks.is_empty() {
            share.into()
        } else {
            format!("{share}{marks}").into()
        }
    })?;
    let ms = |name: &str| fmt_count(r.param(name).unwrap_or(0.0) as u64);
    Ok(format!(
        "{}\nAchieved rate in **% of the target**, in steady state (see the text; stall \
         runs: second start to last). Each run asked for {} ms of operations ({} ms at \
         {}), at least {}.{}{}{}\n",
        t.to_markdown(),
        ms("run_ms"),
        ms("run_ms_1k"),
        per_s(WRITEUP_RATE),
        ms("min_ops"),
        (if dagger { DAGGER } else { "" }),
        (if start_up { START_UP } else { "" }),
        stalled(&found, total),
    ))
}

/// How evenly each throttle spreads its operations at one target, how late they
/// start against the schedule, and the time of a run outside its first→last span.
pub(super) fn jitter(r: &Results<RatesRound>, target: f64) -> anyhow::Result<String> {
    has_target(r, target)?;
    let mut t = Table::new(["throttle", "median gap", "late, median", "first wait"]);
    for pacer in Pacer::ALL {
        if pooled_gaps(r, pacer, target).is_empty() {
            continue;
        }
        t.row(cells![
            pacer.label(),
            opt(per_run(r, pacer, target, |x| x.gap_p50_ns), Unit::Nanos),
            opt(per_run(r, pacer, target, |x| x.late_p50_ns), Unit::Nanos),
            opt(per_run(r, pacer, target, |x| x.first_wait_ns), Unit::Nanos),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no throttle ran at {}", per_s(target));
    Ok(format!(
        "{}\nAt {}, where the ideal gap is {}. *Late*: how long after its slot on the \
         schedule (first start plus *k* periods) operation *k* started, the median over a \
         run. *First wait*: from the throttle's set-up (tokio: its runtime and `interval` \
         built) to its first operation, the start-up lateness the rates leave out.\n",
        t.to_markdown(),
        per_s(target),
        Unit::Nanos.format(1e9 / target),
    ))
}

/// Where each throttle's time goes at one target, and what the scheduler did to its
/// thread, per operation.
pub(super) fn why(r: &Results<RatesRound>, target: f64) -> anyhow::Result<String> {
    has_target(r, target)?;
    let mut t = Table::new([
        "throttle",
        "waiting per op",
        "in the send per op",
        "sleeps per op",
        "preempted per op",
        "waiting for a CPU per op",
    ]);
    for pacer in Pacer::ALL {
        let Some(wait) = per_run(r, pacer, target, |x| x.wait_per_op_ns) else {
            continue;
        };
        let cell = |f: Of, u| opt(per_run(r, pacer, target, f), u);
        t.row(cells![
            pacer.label(),
            fmt_estimate(&wait, Unit::Nanos),
            cell(|x| x.send_ns_per_op, Unit::Nanos),
            cell(|x| x.per_op.voluntary, Unit::Number),
            cell(|x| x.per_op.involuntary, Unit::Number),
            cell(|x| x.per_op.run_delay_ns, Unit::Nanos),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no throttle ran at {}", per_s(target));
    Ok(format!(
        "{}\nAt {}, per operation. *Waiting*: time between operations outside them. *In \
         the send*: time inside the operation. *Sleeps*: voluntary context switches (the \
         thread blocked). *Preempted*: involuntary ones. *Waiting for a CPU*: run-queue \
         delay. Empty where the OS gives no such counter.\n",
        t.to_markdown(),
        per_s(target),
    ))
}

const RATE_PAIRS: [(Pacer, Pacer); 6] = [
    (Pacer::Deadline, Pacer::Naive),
    (Pacer::Deadline, Pacer::Compensating),
    (Pacer::TokioBurst, Pacer::TokioDelay),
    (Pacer::TokioSkip, Pacer::TokioDelay),
    (Pacer::TokioBurst, Pacer::TokioSkip),
    (Pacer::TokioBurst, Pacer::Deadline),
];

/// Pairs of throttles, their rates' per-round ratio at every target.
pub(super) fn pairs(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let keys = RATE_PAIRS.map(|(a, b)| ((a, b), format!("{} ÷ {}", a.label(), b.label())));
    let t = grid(r, "rate ratio", keys, |(a, b), target| {
        ratio(r.compare(&RatesKey::rate(a, target), &RatesKey::rate(b, target)))
    })?;
    Ok(format!(
        "{}\nEach cell: the first throttle's rate over the second's, per round.\n",
        t.to_markdown()
    ))
}

/// The pacing thread's CPU time per operation, per throttle and target.
pub(super) fn cpu(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let mut any = false;
    let t = grid(r, "throttle", pacers(), |pacer, target| {
        let e = per_run(r, pacer, target, RateRun::cpu_per_op);
        any |= e.is_some();
        opt(e, Unit::Nanos)
    })?;
    anyhow::ensure!(any, "this OS has no per-thread CPU clock the chapter reads");
    Ok(format!(
        "{}\nCPU time of the pacing thread from its throttle's set-up done to its last \
         operation (sends included; a runtime's building and dropping left out), divided by \
         its operations.\n",
        t.to_markdown()
    ))
}

/// Every throttle's stall run: its rate, how far behind it ended, its catch-up burst.
pub(super) fn stall(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let headers = [
        "rate, % of target",
        "behind at the end",
        "back to back after",
    ];
    let mut t = Table::new(["throttle"].into_iter().chain(headers));
    for pacer in Pacer::ALL {
        let Some(e) = r.estimate(&RatesKey::Stall(pacer)) else {
            continue;
        };
        let stalled = |f: Of, u| opt(r.estimate_of(|d| d.stall(pacer).and_then(f)), u);
        t.row(cells![
            pacer.label(),
            fmt_estimate(&e.scaled(100.0 / STALL_RATE), Unit::Number),
            stalled(|x| Some(x.drift_ns), Unit::Nanos),
            stalled(|x| Some(x.stall.as_ref()?.burst as f64), Unit::Number),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no stall run finished");
    let first = r.data().find_map(|d| d.stalls.first());
    Ok(format!(
        "{}\nAt {}, {} operations per run; operation {STALL_AT} takes {} ms longer, once. \
         *Behind at the end*: how late the last operation started against its slot. *Back \
         to back after*: operations under half a period after the one before, right after \
         the stall.\n",
        t.to_markdown(),
        per_s(STALL_RATE),
        first.map_or("–".into(), |x| fmt_count(x.asked)),
        first
            .and_then(|x| x.stall.as_ref())
            .map_or("–".into(), |s| fmt_count(s.hiccup_ms)),
    ))
}

fn deadline_1k(d: &RatesRound) -> Option<&RateRun> {
    d.find(Pacer::Deadline, WRITEUP_RATE)
}

/// The checks behind the method: where a rate is counted from, what a reader thread
/// costs, the A/A twin, and the published debt loop's pairs.
pub(super) fn checks(r: &Results<RatesRound>) -> anyhow::Result<String> {
    let t1k = WRITEUP_RATE;
    let mut t = Table::new(["check", "first", "second", "first ÷ second"]);
    let mut pair = |name: String, c: Option<Comparison>, unit: Unit| {
        let Some(c) = c else { return };
        let [a, b] = [c.a, c.b].map(|e| fmt_estimate(&e, unit));
        t.row(cells![name, a, b, ratio_cell(&c)]);
    };
    pair(
        format!(
            "deadline at {}: rate from start 1, steady state",
            per_s(t1k)
        ),
        r.compare_of(
            |d| Some(deadline_1k(d)?.achieved),
            |d| deadline_1k(d)?.reading(),
        ),
        Unit::OpsPerSec,
    );
    let mut leaned = Vec::new();
    for (p, target) in READER_ARMS {
        let (with, without) = (RatesKey::reader(p, target), RatesKey::rate(p, target));
        let at = format!("{} at {}", p.label(), per_s(target));
        pair(
            format!("{at}: rate with a reader thread, without"),
            r.compare(&with, &without),
            Unit::OpsPerSec,
        );
        let send = r.compare_of(
            |d| d.control(p, target)?.send_ns_per_op,
            |d| d.find(p, target)?.send_ns_per_op,
        );
        // Where the rule calls no difference, which way the noise leaned.
        if let Some(Pairing::Paired { above, rounds, .. }) = send.map(|c| c.pairing) {
            leaned.extend(above.map(|k| format!("{at}, {k} of {rounds}")));
        }
        pair(
            format!("{at}: time in a send, with a reader thread, without"),
            send,
            Unit::Nanos,
        );
    }
    pair(
        format!("A/A: {} at {}, twin and original", TWIN.label(), per_s(t1k)),
        r.compare(&RatesKey::twin(TWIN, t1k), &RatesKey::rate(TWIN, t1k)),
        Unit::OpsPerSec,
    );
    let short = r.estimate_of(|d| {
        let x = d.find(Pacer::DebtAsPublished, t1k)?;
        (x.ran >= 2).then(|| x.short_gaps as f64 / (x.ran - 1) as f64 * 100.0)
    });
    if let Some(e) = short {
        t.row(cells![
            format!("debt, as published, at {}: % gaps < ½ period", per_s(t1k)),
            fmt_estimate(&e, Unit::Number),
            "–",
            "–"
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no check has both arms");
    let leaned = (!leaned.is_empty()).then(|| {
        format!(
            " Rounds a send took longer with the reader: {}.",
            leaned.join("; ")
        )
    });
    Ok(format!(
        "{}\nRatios per round. The A/A twin is the same code as a second arm: a ratio \
         there is a false verdict. A reader thread's run sends to a socket of the process \
         that a thread reads.{}\n",
        t.to_markdown(),
        leaned.unwrap_or_default()
    ))
}

// ------------------------------------------------------------ coordinated omission

pub(super) fn pooled_latency(r: &Results<OmissionRound>, m: Measure) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(m).map(|x| &x.latency))
}

pub(super) fn omission(r: &Results<OmissionRound>) -> anyhow::Result<String> {
    let dists: Vec<Dist> = Measure::ALL.iter().map(|&m| pooled_latency(r, m)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len));
    let mut headers = vec!["latency measured", "p90", "÷ intended-send p90", "n"];
    headers.extend(tails.tail_headers());
    let mut t = Table::new(headers);
    for (&m, d) in Measure::ALL.iter().zip(&dists) {
        let (Some(e), Some(s)) = (r.estimate(&m), d.summary()) else {
            continue;
        };
        let intent = Measure::FromIntent;
        let versus = ratio(r.compare(&m, &intent).filter(|_| m != intent));
        let (p90, n) = (fmt_estimate(&e, Unit::Nanos), fmt_count(s.n));
        let row = cells![m.label(), p90, versus, n];
        t.row(with_tails(row.into(), tails, &s));
    }
    anyhow::ensure!(!t.is_empty(), "no request was answered");
    let first = r.data().next().expect("a round, since the table has rows");
    let sum = |f: fn(&OmissionRound) -> u64| -> u64 { r.data().map(f).sum() };
    let count = |f: fn(&OmissionRound) -> u64| fmt_count(sum(f));
    let latest = r.data().filter_map(|d| d.send_late_max_ns).reduce(f64::max);
    let mut held = Table::new(["held up", "sent late by, median of all answered", "latest"]);
    held.row(cells![
        format!("{} of {}", count(|d| d.sent_late), count(|d| d.answered)),
        fmt_opt_estimate(r.estimate_of(|d| d.send_late_p50_ns), Unit::Nanos),
        latest.map_or("–".into(), |v| Unit::Nanos.format(v)),
    ]);
    Ok(format!(
        "{}\nEach round: {} requests at {} to a UDP echo server on loopback. It pauses {} ms \
         before one answer in every {}. *p90*: median over rounds of each round's 90th \
         percentile; the other columns pool every round. All rounds: {} sent, {} answered, \
         {} lost, {} late answers skipped, {} pauses.\n\n{}\n*Held up*: answered requests \
         sent more than one period after their slot; the median is over all answered.\n",
        t.to_markdown(),
        fmt_count(first.sent),
        per_s(first.rate),
        first.stall_ms,
        fmt_count(first.stall_every),
        count(|d| d.sent),
        count(|d| d.answered),
        count(|d| d.lost),
        count(|d| d.late),
        count(|d| d.pauses),
        held.to_markdown(),
    ))
}
