//! The chapter's tables: latency and cost of the variants, the arms beside them, the
//! gap sweep, the placements and the atomic floor.

use super::{chan, chan_key, counter_cell, fmt_share, gap_key, keys, per_run, pooled};
use crate::experiments::{
    Arm, BOUNDED_BELOW_US, BUSY_SENDER_GAPS_MS, FLOOR, FloorKey, FloorRound, GAPS_US, PLACEMENTS,
    RUNTIMES, Run, RunKey, Runs, SWEPT, TRANSPORTS, gap_label,
};
use crate::{Placement, Runtime, Wait};
use harness::cells;
use harness::render::{
    Align, Cell, Table, Tails, fmt_count, fmt_estimate, fmt_opt_estimate, fmt_percent, ratio_cell,
};
use harness::{Dist, Estimate, Results, Summary, Unit};

/// Summed as 64-bit: rounds' counts of up to 2³²−1 each overflowed a `u32` (issue 35).
fn lost(r: &Results<Runs>, key: &RunKey) -> u64 {
    r.data()
        .filter_map(|x| x.find(key))
        .map(|x| u64::from(x.lost))
        .sum()
}

/// A latency row: the label, the median over rounds, then the pooled samples, minimum
/// and the tails they support.
fn latency_row(label: String, e: Option<Estimate>, s: &Summary, tails: Tails) -> Vec<Cell> {
    let mut row = cells![
        label,
        fmt_opt_estimate(e, Unit::Nanos),
        fmt_count(s.n),
        Unit::Nanos.format(s.min),
    ]
    .to_vec();
    row.extend(
        tails
            .tail_cells(s, |v| Unit::Nanos.format(v))
            .into_iter()
            .map(Cell::from),
    );
    row
}

/// Latency of each variant: the median over rounds of each round's median, with its
/// interval; then the pooled messages' extremes (and the p99 where there are enough).
pub(super) fn latency_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let keys = keys(r);
    let dists: Vec<Dist> = keys.iter().map(|k| pooled(r, k)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len)).without_p999();
    let any_lost = keys.iter().any(|k| lost(r, k) > 0);
    let mut headers = vec!["variant", "median latency", "messages", "min"];
    headers.extend(tails.tail_headers());
    headers.push("gap as it happened");
    if any_lost {
        headers.push("lost");
    }
    let mut t = Table::new(headers);
    for (k, d) in keys.iter().zip(&dists) {
        let Some(s) = d.summary() else { continue };
        let mut row = latency_row(k.label(), r.estimate(k), &s, tails);
        row.push(counter_cell(r, k, |x| x.gap_p50_ns, Unit::Nanos).into());
        if any_lost {
            row.push(lost(r, k).to_string().into());
        }
        t.row(row);
    }
    Ok(t.to_markdown())
}

/// What each strategy costs in CPU, and the counters that say why (message to message,
/// gap included): two tables of the same runs, so that each fits the text column.
pub(super) fn cost_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut cost = Table::new("variant | process CPU per message | receiver CPU per message | cores busy | receiver blocked".split(" | "));
    let mut steps = Table::new(
        "variant | receiver preempted | run-queue delay | send call | same CPU".split(" | "),
    );
    for k in keys(r) {
        cost.row(cells![
            k.label(),
            counter_cell(r, &k, |x| x.cpu_per_message_ns, Unit::Nanos),
            counter_cell(r, &k, |x| x.receiver_cpu_per_message_ns, Unit::Nanos),
            counter_cell(r, &k, |x| x.cores_busy, Unit::Number),
            counter_cell(r, &k, |x| x.voluntary_per_message, Unit::Number),
        ]);
        steps.row(cells![
            k.label(),
            counter_cell(r, &k, |x| x.involuntary_per_message, Unit::Number),
            counter_cell(r, &k, |x| x.run_delay_per_message_ns, Unit::Nanos),
            counter_cell(r, &k, |x| x.send_p50_ns, Unit::Nanos),
            per_run(r, &k, |x| x.same_cpu).map_or_else(|| "–".into(), |e| fmt_share(&e)),
        ]);
    }
    Ok(format!(
        "{}\nFrom one message to the next, gap included; send call and same CPU describe the hand-over:\n\n{}",
        cost.to_markdown(),
        steps.to_markdown()
    ))
}

/// Two readings of the same rounds (a, b, the row's name): the two medians and the
/// per-round ratio a ÷ b, by the verdict rule.
fn pairs_table(
    r: &Results<Runs>,
    headers: [&str; 4],
    pairs: impl IntoIterator<Item = (RunKey, RunKey, String)>,
) -> anyhow::Result<Table> {
    let mut t = Table::new(headers);
    for (a, b, name) in pairs {
        let Some(c) = r.compare(&a, &b) else { continue };
        t.row(cells![
            name,
            fmt_estimate(&c.a, Unit::Nanos),
            fmt_estimate(&c.b, Unit::Nanos),
            ratio_cell(&c),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no pair of readings to compare");
    Ok(t)
}

/// The arms beside the write-up's variants, each against the variant it changes one
/// thing of (spawned against `block_on`, bounded against unbounded).
pub(super) fn arms_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut pairs = Vec::new();
    for tr in TRANSPORTS {
        for wait in [Wait::Block, Wait::Spin] {
            let v = RunKey::variant(Runtime::Tokio, tr, wait);
            let name = format!(
                "tokio · {} · {}: spawned ÷ block_on",
                tr.label(),
                wait.label()
            );
            pairs.push((v.arm(Arm::Spawned), v, name));
        }
    }
    let bounded = |v: RunKey| RunKey {
        wait: Wait::BlockBounded,
        ..v
    };
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            let name = format!("{} · {}: bounded ÷ unbounded", rt.label(), tr.label());
            let v = RunKey::variant(rt, tr, Wait::Block);
            pairs.push((bounded(v), v, name));
        }
    }
    let pinned = chan(Wait::Block).placed(Placement::OtherCpu);
    let name = "std · mpsc · different CPUs: bounded ÷ unbounded".to_string();
    pairs.push((bounded(pinned), pinned, name));
    let headers = ["arm ÷ variant", "arm", "variant", "ratio"];
    Ok(pairs_table(r, headers, pairs)?.to_markdown())
}

/// Blocking against spinning, per runtime and transport; then the A/A self-check, the
/// same code twice in every round.
pub(super) fn speedups_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut pairs = Vec::new();
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            let (b, s) = (
                RunKey::variant(rt, tr, Wait::Block),
                RunKey::variant(rt, tr, Wait::Spin),
            );
            pairs.push((b, s, format!("{} · {}", rt.label(), tr.label())));
        }
    }
    // The std channel pinned to different CPUs: one placement, the answer's row.
    let name = "std · mpsc · different CPUs".to_string();
    pairs.push((super::answer::BLOCK, super::answer::SPIN, name));
    let headers = [
        "runtime · transport",
        "blocking",
        "spinning",
        "blocking ÷ spinning",
    ];
    let t = pairs_table(r, headers, pairs)?;
    let k = super::chan(Wait::Spin).arm(Arm::NoGap);
    let aa = r.compare(&k, &k.twin()).map_or_else(String::new, |c| {
        format!(
            "\nSelf-check (A/A): the spinning std channel with no gap ran twice in every \
             round. First ÷ second: {}. A ratio here, not an undecided result, is a \
             false verdict on identical code.\n",
            ratio_cell(&c)
        )
    });
    let pct = |k: &RunKey, x: &Runs| {
        let s = x.find(k).and_then(|run| run.same_cpu);
        s.map_or("–".into(), |s| format!("{:.0}", s * 100.0))
    };
    let after = super::chan(Wait::Spin);
    let mix: Vec<String> = r
        .data()
        .map(|x| format!("{}/{}", pct(&after, x), pct(&k, x)))
        .collect();
    let mix = match r.record.provenance.machine.target_os() {
        harness::machine::TargetOs::Linux => format!(
            "\nUnpinned, the spinning std channel's messages taken on the sender's CPU, in % \
             per round (after the gap/no added gap): {}.\n",
            mix.join(", ")
        ),
        _ => "\nWhere the unpinned messages ran is read on Linux only.\n".to_string(),
    };
    Ok(format!("{}{aa}{mix}", t.to_markdown()))
}

pub(super) fn gaps_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new("transport · wait | gap | gap as it happened | median latency | receiver blocked | receiver CPU per message | on the sender's CPU".split(" | "));
    for tr in SWEPT {
        // The bounded receive runs on the channel only.
        for wait in [Wait::Block, Wait::Spin, Wait::Hybrid, Wait::BlockBounded] {
            for g in GAPS_US {
                let k = gap_key(tr, wait, g);
                let Some(e) = r.estimate(&k) else { continue };
                t.row(cells![
                    format!("{} · {}", tr.label(), wait.label()),
                    gap_label(g),
                    counter_cell(r, &k, |x| x.gap_p50_ns, Unit::Nanos),
                    fmt_estimate(&e, Unit::Nanos),
                    counter_cell(r, &k, |x| x.voluntary_per_message, Unit::Number),
                    counter_cell(r, &k, |x| x.receiver_cpu_per_message_ns, Unit::Nanos),
                    per_run(r, &k, |x| x.same_cpu).map_or_else(|| "–".into(), |e| fmt_share(&e)),
                ]);
            }
        }
    }
    let mut notes = format!(
        "\n*Receiver CPU* is the receiving thread's own, including its probe reads after \
         each message. *On the sender's CPU*: the share of messages taken there, median \
         over rounds (a receiver there waits for the sender to give the CPU up). The hybrid spins for {} (`hybrid_spin_us`) before it blocks on \
         the channel; over UDP, where each try is a system call and it reads the clock \
         every 1,024 tries, it spins longer (its receiver CPU shows how long). The \
         bounded receive (`recv_timeout`) runs at every gap under {}.",
        r.param("hybrid_spin_us")
            .map_or_else(|| "–".into(), |us| Unit::Nanos.format(us * 1e3)),
        gap_label(BOUNDED_BELOW_US)
    );
    let longest = *GAPS_US.last().expect("gaps") as f64;
    if let Some(udp) = r.param("udp_longest_gap_ms").filter(|u| u * 1e3 < longest) {
        notes.push_str(&format!(
            " UDP runs up to {udp} ms gaps here (`udp_longest_gap_ms`)."
        ));
    }
    notes.push('\n');
    Ok(format!("{}{notes}", t.to_markdown()))
}

/// The gap-why table's rows: every gap with a sleeping sender, and with a busy one.
fn gap_rows() -> Vec<(u64, bool)> {
    let mut rows = Vec::new();
    for g in GAPS_US {
        rows.push((g, false));
        if BUSY_SENDER_GAPS_MS.iter().any(|b| b * 1_000 == g) {
            rows.push((g, true));
        }
    }
    rows
}

/// What the gap adds to a spinning std channel, with the counters that can say why:
/// the sender's send call, whether the receiver kept its CPU, where the two threads ran,
/// the receiver's run-queue delay. The first row is each run's first message, the
/// untimed warm-up, with no gap before it.
pub(super) fn gap_why_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new("gap: sender | median latency | send call | never preempted | their median | same CPU | run-queue delay".split(" | "));
    let zk = chan_key(0, false);
    if let Some(e) = per_run(r, &zk, |x| x.first_ns) {
        let first = "a new channel's first message";
        let mut row = cells![first, fmt_estimate(&e, Unit::Nanos)].to_vec();
        row.resize(7, Cell::from("–"));
        t.row(row);
    }
    for (g, busy) in gap_rows() {
        let k = chan_key(g, busy);
        let Some(e) = r.estimate(&k) else { continue };
        let est = |f: fn(&Run) -> Option<f64>| per_run(r, &k, f);
        let calm = harness::render::pooled(r.data(), |round| {
            round.find(&k).map(|run| &run.latency_unpreempted)
        });
        t.row(cells![
            format!(
                "{}: {}",
                gap_label(g),
                if busy { "busy-waits" } else { "sleeps" }
            ),
            fmt_estimate(&e, Unit::Nanos),
            fmt_opt_estimate(est(|x| x.send_p50_ns), Unit::Nanos),
            est(|x| x.unpreempted).map_or_else(|| "–".into(), |e| fmt_share(&e)),
            calm.quantile(0.5)
                .map_or_else(|| "–".into(), |v| Unit::Nanos.format(v)),
            est(|x| x.same_cpu).map_or_else(|| "–".into(), |e| fmt_share(&e)),
            fmt_opt_estimate(est(|x| x.run_delay_per_message_ns), Unit::Nanos),
        ]);
    }
    anyhow::ensure!(
        !t.is_empty(),
        "the spinning std channel has no result in the sweep"
    );
    Ok(t.to_markdown())
}

pub(super) fn pinning_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new("transport · wait | placement | median latency | messages | max | receiver blocked | receiver preempted".split(" | "))
    .align(1, Align::Left);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin] {
            for placement in PLACEMENTS {
                let k = RunKey::variant(Runtime::Std, tr, wait).placed(placement);
                let Some(e) = r.estimate(&k) else { continue };
                let d = pooled(r, &k);
                t.row(cells![
                    format!("{} · {}", tr.label(), wait.label()),
                    placement.label().to_string(),
                    fmt_estimate(&e, Unit::Nanos),
                    fmt_count(d.len()),
                    d.summary()
                        .map_or_else(|| "–".into(), |s| Unit::Nanos.format(s.max)),
                    counter_cell(r, &k, |x| x.voluntary_per_message, Unit::Number),
                    counter_cell(r, &k, |x| x.involuntary_per_message, Unit::Number),
                ]);
            }
        }
    }
    Ok(t.to_markdown())
}

/// Every round's one-way times, pooled per placement.
pub(super) fn floor_pooled(r: &Results<FloorRound>) -> Vec<(Placement, Dist)> {
    let mut out: Vec<(Placement, Dist)> = Vec::new();
    for round in r.data() {
        for run in &round.runs {
            match out.iter_mut().find(|(p, _)| *p == run.placement) {
                Some((_, d)) => d.merge(&run.one_way),
                None => out.push((run.placement, run.one_way.clone())),
            }
        }
    }
    out
}

/// The floor: the median over rounds of each round's median one-way time, then the
/// samples of every round pooled (count, min, tails); then what one clock read cost, the
/// clock's step, and why the run stopped when it did.
pub(super) fn floor_table(r: &Results<FloorRound>) -> anyhow::Result<String> {
    let pooled = floor_pooled(r);
    anyhow::ensure!(!pooled.is_empty(), "the floor could not be measured here");
    let tails = Tails::for_counts(pooled.iter().map(|(_, d)| d.len()));
    let mut headers = vec!["one way", "median of rounds", "samples", "min"];
    headers.extend(tails.tail_headers());
    let mut t = Table::new(headers);
    let mut estimates = Vec::new();
    for (placement, d) in &pooled {
        let Some(s) = d.summary() else { continue };
        let e = r.estimate(&FloorKey(*placement));
        estimates.extend(e);
        t.row(latency_row(placement.label().to_string(), e, &s, tails));
    }
    let mut lines = Vec::new();
    let per_way = 2.0 * r.data().map(FloorRound::per_sample).max().unwrap_or(1) as f64;
    if let Some(e) = r.estimate_of(|x| x.clock_read_ns) {
        lines.push(format!(
            "One `Instant::now()` took {} (median over rounds of batches of 10,000 reads). \
             A sample times {} one-way trips between two reads and divides by them, so a \
             read adds about {} to it.",
            fmt_estimate(&e, Unit::Nanos),
            fmt_count(per_way as u64),
            Unit::Nanos.format(e.median / per_way)
        ));
    }
    let clock = r.record.provenance.machine.underneath.as_ref();
    if let (Some(step), Some(e)) = (clock.and_then(|u| u.clock.step_ns), estimates.first()) {
        lines.push(format!(
            "Back-to-back clock reads came at least {} apart; over a sample that is a step \
             of {} one way, {} of the first row's median.",
            Unit::Nanos.format(step),
            Unit::Nanos.format(step / per_way),
            fmt_percent(step / per_way / e.median)
        ));
    }
    if let Some(t) = r.data().find_map(|x| x.pair.as_ref()) {
        lines.push(format!(
            "As Linux reports them, CPUs {} and {} of *different CPUs* are {} sharing {} \
             (`thread_siblings_list`, `shared_cpu_list`); in a virtual machine that is what \
             the host tells the guest.",
            t.cpus[0],
            t.cpus[1],
            ["separate cores", "one core's two threads"][usize::from(t.one_core)],
            t.caches_named()
        ));
    }
    let budget = (FLOOR.budget)(r.record.profile);
    let n = r.rounds.len();
    let tight = !estimates.is_empty()
        && estimates
            .iter()
            .all(|e| e.at_stated_confidence() && e.relative_half_width() <= budget.target);
    let profile = r.record.profile.name();
    lines.push(if (n as u32) >= budget.max_rounds {
        format!("The run has {n} rounds, the most the {profile} profile runs.")
    } else if budget.target > 0.0 && tight {
        format!(
            "The run stopped early, after {n} rounds: the first at which every interval \
             here had a half-width within {:.0} % of its median, the {profile} profile's rule.",
            budget.target * 100.0
        )
    } else {
        format!(
            "The run stopped after {n} rounds, when its time budget ({} s) was spent.",
            budget.time.as_secs()
        )
    });
    Ok(format!("{}\n{}\n", t.to_markdown(), lines.join(" ")))
}
