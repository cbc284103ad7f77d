//! How the chapter's results are shown: Markdown tables, sentences computed from the
//! intervals, and SVG plots. Every figure is a median over rounds with its interval;
//! distributions pool every message of every round. Two arms measured in the same
//! rounds are judged on their per-round ratios (`Results::compare`); every verdict is
//! worded by `harness::render`.

use crate::experiments::{
    Arm, BOUNDED_BELOW_US, FLOOR, FloorKey, FloorRound, GAPS, GAPS_US, PINNING, PLACEMENTS,
    RUNTIMES, Run, RunKey, Runs, SWEPT, TRANSPORTS, VARIANTS, gap_label,
};
use crate::{Placement, Runtime, Transport, Wait};
use harness::cells;
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::Published;
use harness::render::{
    Align, Better, Cell, Formatted, Table, Tails, answer_block, comparison_sentence,
    findings as bullets, fmt_count, fmt_estimate, fmt_opt_estimate, ratio_cell,
};
use harness::stats::{Comparison, Verdict};
use harness::{Dist, Estimate, Profile, Results, Unit, View};
use serde::Deserialize;

pub static ANSWER: View<Runs> = View::table("answer", &VARIANTS, answer);
pub static LATENCY: View<Runs> = View::table("variants", &VARIANTS, latency_table).brief();
pub static COST: View<Runs> = View::table("cost", &VARIANTS, cost_table).brief();
pub static ARMS: View<Runs> = View::table("arms", &VARIANTS, arms_table).brief();
pub static ARMS_COUNTERS: View<Runs> =
    View::table("arms-counters", &VARIANTS, arms_counters_table).brief();
pub static SPEEDUPS: View<Runs> = View::table("speedups", &VARIANTS, speedups_table).brief();
pub static FINDINGS: View<Runs> = View::table("findings", &VARIANTS, findings).brief();
pub static REFERENCE: View<Runs> = View::table("reference", &VARIANTS, reference_table).brief();
pub static REFERENCE_SPEEDUPS: View<Runs> =
    View::table("reference-speedups", &VARIANTS, reference_speedups_table).brief();
pub static CDF_STD: View<Runs> =
    View::plot("cdf-std", &VARIANTS, |r| cdf_plot(r, Runtime::Std)).brief();
pub static CDF_TOKIO: View<Runs> =
    View::plot("cdf-tokio", &VARIANTS, |r| cdf_plot(r, Runtime::Tokio)).brief();
pub static GAPS_LATENCY: View<Runs> = View::plot("gaps-latency", &GAPS, |r| gaps_plot(r, false));
pub static GAPS_CPU: View<Runs> = View::plot("gaps-cpu", &GAPS, |r| gaps_plot(r, true)).brief();
pub static GAPS_TABLE: View<Runs> = View::table("gaps", &GAPS, gaps_table).brief();
pub static GAP_WHY: View<Runs> = View::table("gap-why", &GAPS, gap_why_table).brief();
pub static GAP_FINDINGS: View<Runs> = View::table("gap-findings", &GAPS, gap_findings).brief();
pub static PINNING_TABLE: View<Runs> = View::table("pinning", &PINNING, pinning_table);
pub static PINNING_FINDINGS: View<Runs> =
    View::table("pinning-findings", &PINNING, pinning_findings).brief();
pub static FLOOR_TABLE: View<FloorRound> = View::table("floor", &FLOOR, floor_table);
pub static FLOOR_TAILS: View<FloorRound> =
    View::table("floor-tails", &FLOOR, floor_tails_table).brief();
pub static FLOOR_CDF: View<FloorRound> = View::plot("floor-cdf", &FLOOR, floor_plot).brief();

/// All rounds' latencies of one variant, pooled.
fn pooled(r: &Results<Runs>, key: &RunKey) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(key).map(|run| &run.latency))
}

/// The keys of an experiment's variants and its arms that have rows in the tables
/// (bounded blocking, spawned tokio receivers), in the order the rounds list them; the
/// no-gap arm, its A/A twin and the busy sender have lines of their own.
fn keys(r: &Results<Runs>) -> Vec<RunKey> {
    let mut keys: Vec<RunKey> = Vec::new();
    for k in r.data().flat_map(Runs::keys) {
        let own_line = k.twin || matches!(k.arm, Arm::NoGap | Arm::BusySender);
        if !own_line && !keys.contains(&k) && r.estimate(&k).is_some() {
            keys.push(k);
        }
    }
    keys
}

/// The write-up's twelve variants only: the keys of `keys` without the extra arms.
fn main_keys(r: &Results<Runs>) -> Vec<RunKey> {
    keys(r)
        .into_iter()
        .filter(|k| k.arm != Arm::Spawned && k.wait != Wait::BlockBounded)
        .collect()
}

/// Median over rounds of a per-run value of one variant.
fn per_run(r: &Results<Runs>, key: &RunKey, f: impl Fn(&Run) -> Option<f64>) -> Option<Estimate> {
    r.estimate_of(|round| round.find(key).and_then(&f))
}

/// A per-run value of two variants, judged on the rounds' pairs.
fn compare_runs(
    r: &Results<Runs>,
    a: &RunKey,
    b: &RunKey,
    f: impl Fn(&Run) -> Option<f64>,
) -> Option<Comparison> {
    r.compare_of(|x| x.find(a).and_then(&f), |x| x.find(b).and_then(&f))
}

/// A sentence comparing two readings of the same rounds (lower is better), judged on
/// their pairs; `None` when either is missing.
fn pair(r: &Results<Runs>, a: &RunKey, b: &RunKey, an: &str, bn: &str) -> Option<String> {
    let c = r.compare(a, b)?;
    Some(comparison_sentence(an, bn, &c, Better::Lower))
}

fn lost(r: &Results<Runs>, key: &RunKey) -> u32 {
    r.data().filter_map(|x| x.find(key)).map(|x| x.lost).sum()
}

/// Latency of each variant: the median over rounds of each round's median, with its
/// interval; then the pooled messages' extremes (and the p99 where there are enough).
fn latency_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let keys = keys(r);
    let dists: Vec<Dist> = keys.iter().map(|k| pooled(r, k)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len)).without_p999();
    let any_lost = keys.iter().any(|k| lost(r, k) > 0);
    let mut headers = vec!["variant", "median latency", "messages", "min"];
    headers.extend(tails.tail_headers());
    if any_lost {
        headers.push("lost");
    }
    let mut t = Table::new(headers);
    for (k, d) in keys.iter().zip(&dists) {
        let Some(s) = d.summary() else { continue };
        let mut row = cells![
            k.label(),
            fmt_opt_estimate(r.estimate(k), Unit::Nanos),
            fmt_count(s.n),
            Unit::Nanos.format(s.min),
        ]
        .to_vec();
        row.extend(
            tails
                .tail_cells(&s, |v| Unit::Nanos.format(v))
                .into_iter()
                .map(Cell::from),
        );
        if any_lost {
            row.push(lost(r, k).to_string().into());
        }
        t.row(row);
    }
    Ok(t.to_markdown())
}

/// A per-run counter as a cell: its median over rounds with the interval, "–" where
/// it was not measured.
fn counter_cell(
    r: &Results<Runs>,
    key: &RunKey,
    f: fn(&Run) -> Option<f64>,
    unit: Unit,
) -> Formatted {
    fmt_opt_estimate(per_run(r, key, f), unit)
}

/// What each strategy costs in CPU (the whole process's and the receiving thread's
/// own), and the counters that say why: the receiver's switches and run-queue delay per
/// message, the sender's send call, where the receiver ran.
fn cost_table(r: &Results<Runs>) -> anyhow::Result<String> {
    // Two tables of the same runs, so that each fits the page's text column: what
    // waiting costs, then the steps of the hand-over.
    let mut cost = Table::new([
        "variant",
        "process CPU per message",
        "receiver CPU per message",
        "cores busy",
        "receiver blocked",
    ]);
    let mut steps = Table::new([
        "variant",
        "receiver preempted",
        "run-queue delay",
        "send call",
        "same CPU",
    ]);
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
        "{}\nThe hand-over in the same runs:\n\n{}",
        cost.to_markdown(),
        steps.to_markdown()
    ))
}

/// An arm beside the variant it changes one thing of: keys, the table's name for the
/// pair, and the names a sentence gives the two.
struct ArmPair {
    arm: RunKey,
    variant: RunKey,
    name: String,
    arm_name: String,
    variant_name: String,
}

/// The arms beside the write-up's variants, each against the variant it changes one
/// thing of: the bounded blocking receive against the unbounded one, a spawned tokio
/// receiver against the one in `block_on`.
fn arm_pairs(r: &Results<Runs>) -> Vec<ArmPair> {
    let mut out = Vec::new();
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            let arm = RunKey::variant(rt, tr, Wait::BlockBounded);
            if r.estimate(&arm).is_some() {
                out.push(ArmPair {
                    arm,
                    variant: RunKey::variant(rt, tr, Wait::Block),
                    name: format!("{} · {}: bounded ÷ unbounded", rt.label(), tr.label()),
                    arm_name: format!(
                        "the bounded blocking receive on {} {}",
                        rt.label(),
                        tr.label()
                    ),
                    variant_name: "the unbounded one".into(),
                });
            }
        }
    }
    for tr in TRANSPORTS {
        for wait in [Wait::Block, Wait::Spin] {
            let variant = RunKey::variant(Runtime::Tokio, tr, wait);
            let arm = variant.arm(Arm::Spawned);
            if r.estimate(&arm).is_some() {
                out.push(ArmPair {
                    arm,
                    variant,
                    name: format!(
                        "tokio · {} · {}: spawned task ÷ block_on",
                        tr.label(),
                        wait.label()
                    ),
                    arm_name: format!(
                        "a {} tokio {} receiver as a spawned task",
                        wait.label(),
                        tr.label()
                    ),
                    variant_name: "the same in `block_on`".into(),
                });
            }
        }
    }
    out
}

/// Each arm against its variant: the two medians and the per-round ratio.
fn arms_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new(["arm ÷ variant", "arm", "variant", "ratio"]);
    for p in arm_pairs(r) {
        let Some(c) = r.compare(&p.arm, &p.variant) else {
            continue;
        };
        t.row(cells![
            p.name,
            fmt_estimate(&c.a, Unit::Nanos),
            fmt_estimate(&c.b, Unit::Nanos),
            ratio_cell(&c),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no arm has a result beside its variant");
    Ok(t.to_markdown())
}

/// Each arm against its variant, what the receiver did per message: blocked and
/// preempted (medians over rounds) and the slowest message of all rounds. A table of its
/// own, so that neither outgrows the text column.
fn arms_counters_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "arm ÷ variant",
        "blocked: arm / variant",
        "preempted: arm / variant",
        "max: arm / variant",
    ]);
    let num = |k: &RunKey, f: fn(&Run) -> Option<f64>| {
        per_run(r, k, f).map_or_else(|| "–".into(), |e| harness::render::sig3(e.median))
    };
    let max = |k: &RunKey| {
        pooled(r, k)
            .summary()
            .map_or_else(|| "–".into(), |s| Unit::Nanos.format(s.max))
    };
    for p in arm_pairs(r) {
        let (a, b) = (&p.arm, &p.variant);
        if r.estimate(a).is_none() || r.estimate(b).is_none() {
            continue;
        }
        let pair = |a: String, b: String| Cell::join([a.into(), b.into()], " / ");
        t.row(cells![
            p.name,
            pair(
                num(a, |x| x.voluntary_per_message),
                num(b, |x| x.voluntary_per_message)
            ),
            pair(
                num(a, |x| x.involuntary_per_message),
                num(b, |x| x.involuntary_per_message)
            ),
            pair(max(a), max(b)),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no arm has a result beside its variant");
    Ok(t.to_markdown())
}

/// Spinning against blocking, per runtime and transport: the per-round ratio of the
/// medians where the rule finds a difference, else what the rule says.
fn speedups_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "runtime · transport",
        "blocking",
        "spinning",
        "blocking ÷ spinning",
    ]);
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            let (b, s) = (
                RunKey::variant(rt, tr, Wait::Block),
                RunKey::variant(rt, tr, Wait::Spin),
            );
            let Some(c) = r.compare(&b, &s) else { continue };
            t.row(cells![
                format!("{} · {}", rt.label(), tr.label()),
                fmt_estimate(&c.a, Unit::Nanos),
                fmt_estimate(&c.b, Unit::Nanos),
                ratio_cell(&c),
            ]);
        }
    }
    Ok(t.to_markdown())
}

/// The speedup of spinning over blocking (blocking ÷ spinning) in one round.
fn round_speedup(round: &Runs, rt: Runtime, tr: Transport) -> Option<f64> {
    let b = round.find(&RunKey::variant(rt, tr, Wait::Block))?.p50_ns?;
    let s = round.find(&RunKey::variant(rt, tr, Wait::Spin))?.p50_ns?;
    (s > 0.0).then(|| b / s)
}

/// Whether spinning gains more over blocking on the std channel than on a std socket:
/// the two speedups of each round, judged on their pairs.
fn speedup_sentence(r: &Results<Runs>, socket: Transport) -> Option<String> {
    let c = r.compare_of(
        |x| round_speedup(x, Runtime::Std, Transport::Mpsc),
        |x| round_speedup(x, Runtime::Std, socket),
    )?;
    Some(comparison_sentence(
        "spinning's speedup on the std channel",
        &format!("its speedup on std {}", socket.label()),
        &c,
        Better::Higher,
    ))
}

/// Sentences decided by the verdict rule: what this run shows, and what it does not.
fn findings(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    for tr in TRANSPORTS {
        out.extend(pair(
            r,
            &RunKey::variant(Runtime::Std, tr, Wait::Spin),
            &RunKey::variant(Runtime::Std, tr, Wait::Block),
            &format!("spinning on std {}", tr.label()),
            "blocking",
        ));
    }
    for socket in [Transport::Tcp, Transport::Udp] {
        out.extend(speedup_sentence(r, socket));
    }
    for (socket, name) in [
        (Transport::Tcp, "TCP stream"),
        (Transport::Udp, "UDP socket"),
    ] {
        out.extend(pair(
            r,
            &RunKey::variant(Runtime::Tokio, socket, Wait::Spin),
            &RunKey::variant(Runtime::Std, socket, Wait::Spin),
            &format!("spinning on tokio's {name}"),
            "spinning on std's",
        ));
    }
    for p in arm_pairs(r) {
        out.extend(pair(r, &p.arm, &p.variant, &p.arm_name, &p.variant_name));
    }
    out.extend(placement_sentence(r));
    anyhow::ensure!(!out.is_empty(), "no variant has a result to compare");
    out.extend(twin_sentence(r));
    Ok(bullets(out))
}

// The write-up's published numbers.
/// The write-up's numbers, with its source and machines (`Published`).
type Reference = Published<Numbers>;

#[derive(Deserialize)]
struct Numbers {
    results: Vec<RefResult>,
    speedups: Vec<RefSpeedup>,
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

/// A speedup exactly as the write-up printed it.
#[derive(Deserialize)]
struct RefSpeedup {
    machine: String,
    runtime: String,
    transport: String,
    avg_x: f64,
    median_x: f64,
}

fn reference() -> anyhow::Result<Reference> {
    Published::load(include_str!(
        "../../../assets/reference/spinning-vs-sleeping.toml"
    ))
}

impl Numbers {
    fn get(&self, machine: &str, rt: Runtime, tr: Transport, wait: Wait) -> Option<&RefResult> {
        self.results.iter().find(|x| {
            x.machine == machine
                && x.runtime == rt.label()
                && x.transport == tr.label()
                && x.wait == wait.label()
        })
    }

    fn speedup(&self, machine: &str, rt: Runtime, tr: Transport) -> Option<&RefSpeedup> {
        self.speedups
            .iter()
            .find(|x| x.machine == machine && x.runtime == rt.label() && x.transport == tr.label())
    }
}

/// Under a "theirs vs yours" table: a line whenever yours were measured with another
/// gap than the write-up's 100 ms.
fn gap_line(r: &Results<Runs>) -> String {
    let Some(gap) = r.param("gap_ms").filter(|g| *g != 100.0) else {
        return String::new();
    };
    let why = match r.record.profile {
        Profile::Quick if gap == 10.0 => " (the quick profile)",
        _ => "",
    };
    format!(
        "\nYours were measured with a {gap} ms gap before each message{why}; the \
         write-up's gap was 100 ms. The gap sweep below shows how much the gap moves \
         the std channel's and UDP's figures here; the full profile (`make regenerate`) measures with 100 ms.\n"
    )
}

/// Their average and median beside your median, per variant.
fn reference_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new([
        "variant",
        "theirs, macOS: avg / median",
        "theirs, Ubuntu: avg / median",
        "yours: median",
    ]);
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            for wait in [Wait::Block, Wait::Spin] {
                let key = RunKey::variant(rt, tr, wait);
                let theirs = |m: &str| {
                    refs.get(m, rt, tr, wait).map_or_else(
                        || Cell::from("–"),
                        |x| {
                            Cell::join(
                                [
                                    Unit::Nanos.format(x.avg_us * 1e3).into(),
                                    Unit::Nanos.format(x.median_us * 1e3).into(),
                                ],
                                " / ",
                            )
                        },
                    )
                };
                t.row(cells![
                    key.label(),
                    theirs("macos"),
                    theirs("ubuntu"),
                    fmt_opt_estimate(r.estimate(&key), Unit::Nanos),
                ]);
            }
        }
    }
    Ok(format!(
        "{}\n{}\n{}",
        t.to_markdown(),
        refs.attribution(),
        gap_line(r)
    ))
}

/// The speedups the write-up printed, beside yours (blocking ÷ spinning, medians).
fn reference_speedups_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let refs = reference()?;
    let mut t = Table::new([
        "runtime · transport",
        "theirs, macOS: avg / median",
        "theirs, Ubuntu: avg / median",
        "yours: median",
    ]);
    for rt in RUNTIMES {
        for tr in TRANSPORTS {
            let printed = |m: &str| {
                refs.speedup(m, rt, tr).map_or_else(
                    || Cell::from("–"),
                    |x| {
                        Cell::join(
                            [
                                printed_ratio(x.avg_x).into(),
                                printed_ratio(x.median_x).into(),
                            ],
                            " / ",
                        )
                    },
                )
            };
            // Yours by the same rule as every verdict, judged on the rounds' pairs: a
            // ratio only where it decides.
            let yours = r
                .compare(
                    &RunKey::variant(rt, tr, Wait::Block),
                    &RunKey::variant(rt, tr, Wait::Spin),
                )
                .map_or_else(|| "–".into(), |c| ratio_cell(&c));
            t.row(cells![
                format!("{} · {}", rt.label(), tr.label()),
                printed("macos"),
                printed("ubuntu"),
                yours,
            ]);
        }
    }
    Ok(format!(
        "{}\n{}\n{}",
        t.to_markdown(),
        refs.attribution(),
        gap_line(r)
    ))
}

/// A speedup as the write-up printed it: one decimal ("295.6x", "6.0x"), with the
/// book's × sign.
fn printed_ratio(x: f64) -> String {
    format!("{x:.1}×")
}

fn cdf_plot(r: &Results<Runs>, rt: Runtime) -> anyhow::Result<String> {
    let prefix = format!("{} · ", rt.label());
    let series: Vec<(String, Dist)> = main_keys(r)
        .into_iter()
        .filter(|k| k.runtime == rt)
        .map(|k| {
            let label = k.label();
            let name = label.strip_prefix(&prefix).unwrap_or(&label).to_string();
            (name, pooled(r, &k))
        })
        .collect();
    dist_cdf(
        &format!(
            "{}: send-to-receive latency, every message of every round",
            rt.label()
        ),
        "latency (log scale)",
        series.iter().map(|(n, d)| (n.clone(), d)),
    )
    .to_svg()
}

fn gap_key(tr: Transport, wait: Wait, gap_us: u64) -> RunKey {
    RunKey::variant(Runtime::Std, tr, wait).at_gap(gap_us)
}

/// The ways of waiting the sweep runs on a transport: the bounded receive on the
/// channel only.
fn swept_waits(tr: Transport) -> Vec<Wait> {
    let mut w = vec![Wait::Block, Wait::Spin, Wait::Hybrid];
    if tr == Transport::Mpsc {
        w.push(Wait::BlockBounded);
    }
    w
}

fn gaps_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "transport · wait",
        "gap",
        "gap as it happened",
        "median latency",
        "receiver blocked",
        "receiver CPU per message",
    ]);
    for tr in SWEPT {
        for wait in swept_waits(tr) {
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
                ]);
            }
        }
    }
    let mut bounded = format!(
        "\n*Receiver CPU* is the receiving thread's own; the whole process's, which adds \
         the sender and the harness's reads, is in the results file and, at the write-up's \
         gap, in the cost table above. The bounded blocking receive (`recv_timeout`) runs \
         on the channel at every gap under {}.",
        gap_label(BOUNDED_BELOW_US)
    );
    let longest = *GAPS_US.last().expect("gaps");
    if let Some(udp) = r
        .param("udp_longest_gap_ms")
        .filter(|u| *u * 1e3 < longest as f64)
    {
        bounded.push_str(&format!(
            " UDP runs up to {udp} ms gaps here (`udp_longest_gap_ms`, to keep this \
             profile's time); the full profile runs it at {} too.",
            gap_label(longest)
        ));
    }
    bounded.push('\n');
    Ok(format!("{}{}{bounded}", t.to_markdown(), hybrid_budget(r)))
}

/// The hybrid's spin budget, and what it spent beyond blocking at each gap longer than
/// the budget: the per-round difference of the receiving thread's CPU per message,
/// hybrid minus blocking, which is (our reading) the CPU its spin took, since after the
/// spin it blocks like blocking. Against the budget, a fixed value, by the rule for
/// arms measured apart.
fn hybrid_budget(r: &Results<Runs>) -> String {
    let Some(budget_us) = r.param("hybrid_spin_us") else {
        return String::new();
    };
    let budget = budget_us * 1e3;
    let mut lines = Vec::new();
    for tr in SWEPT {
        let cells: Vec<String> = GAPS_US
            .iter()
            .filter(|&&g| g as f64 * 1e3 > budget)
            .filter_map(|&g| {
                let (h, b) = (gap_key(tr, Wait::Hybrid, g), gap_key(tr, Wait::Block, g));
                let cpu = |round: &Runs, k: &RunKey| round.find(k)?.receiver_cpu_per_message_ns;
                let d = r.estimate_of(|round| Some(cpu(round, &h)? - cpu(round, &b)?))?;
                let fixed = Estimate {
                    median: budget,
                    lo: budget,
                    hi: budget,
                    confidence: 1.0,
                    n: d.n,
                    drift: None,
                };
                let c = Comparison::unpaired(d, fixed);
                Some(format!(
                    "{} {} (÷ the budget: {})",
                    gap_label(g),
                    fmt_estimate(&d, Unit::Nanos),
                    ratio_cell(&c)
                ))
            })
            .collect();
        if !cells.is_empty() {
            lines.push(format!("{}: {}", tr.label(), cells.join("; ")));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nThe hybrid's spin budget here: {} (`hybrid_spin_us`), checked as `spin` checks \
         any deadline, once every 1,024 attempts. The receiving thread's CPU per message, \
         hybrid minus blocking, per round (our reading: what its spin took, as it then \
         blocks like the blocking receiver), at the gaps longer than the budget: {}.\n",
        Unit::Nanos.format(budget),
        lines.join(" — ")
    )
}

fn gaps_plot(r: &Results<Runs>, cpu: bool) -> anyhow::Result<String> {
    let (title, y_label) = if cpu {
        (
            "the receiving thread's CPU time per message against the idle gap",
            "receiver CPU time per message (log)",
        )
    } else {
        (
            "median latency against the idle gap before each message",
            "median send-to-receive latency (log)",
        )
    };
    // The bars' coverage, as the rounds allow it (95 % from six rounds up).
    let confidence = keys(r)
        .iter()
        .filter_map(|k| r.estimate(k))
        .map(|e| e.confidence)
        .fold(1.0, f64::min)
        .min(harness::stats::CONFIDENCE);
    let x_label = format!(
        "gap before each message (bars: {:.0} % intervals over rounds)",
        confidence * 100.0
    );
    let mut plot = Plot::new(title, &x_label, y_label)
        .x_categories(GAPS_US.iter().map(|g| gap_label(*g)))
        .y(Axis::Log, PlotUnit::Nanos);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
            let points = GAPS_US
                .iter()
                .enumerate()
                .filter_map(|(i, &g)| {
                    let k = gap_key(tr, wait, g);
                    let e = if cpu {
                        per_run(r, &k, |x| x.receiver_cpu_per_message_ns)?
                    } else {
                        r.estimate(&k)?
                    };
                    Some((i as f64, e))
                })
                .collect();
            plot = plot.series(Series::estimates(
                format!("{} {}", tr.label(), wait.label()),
                points,
            ));
        }
    }
    plot.to_svg()
}

fn pinning_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "transport · wait",
        "placement",
        "median latency",
        "messages",
        "max",
        "receiver blocked",
        "receiver preempted",
    ])
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

/// What the pinning rows say, sentence by sentence: spinning against blocking on one
/// CPU, and one CPU against two for each way of waiting.
fn pinning_findings(r: &Results<Runs>) -> anyhow::Result<String> {
    let key = |tr, wait, p: Placement| RunKey::variant(Runtime::Std, tr, wait).placed(p);
    let (same, other) = (Placement::SameCpu, Placement::OtherCpu);
    let mut out = Vec::new();
    for tr in SWEPT {
        let t = tr.label();
        out.extend(pair(
            r,
            &key(tr, Wait::Spin, same),
            &key(tr, Wait::Block, same),
            &format!("spinning on std {t} on the sender's CPU"),
            "blocking there",
        ));
        out.extend(pair(
            r,
            &key(tr, Wait::Spin, same),
            &key(tr, Wait::Spin, other),
            &format!("spinning on std {t} on the sender's CPU"),
            "spinning on another CPU",
        ));
        out.extend(pair(
            r,
            &key(tr, Wait::Block, same),
            &key(tr, Wait::Block, other),
            &format!("blocking on std {t} on the sender's CPU"),
            "blocking on another CPU",
        ));
    }
    if out.is_empty() {
        return Ok("Nothing to compare: this system did not run the pinned rows.\n".into());
    }
    Ok(bullets(out))
}

/// Every round's one-way times, pooled per placement.
fn floor_pooled(r: &Results<FloorRound>) -> Vec<(Placement, Dist)> {
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

/// The floor: the median over rounds of each round's median one-way time, how many
/// samples the rounds pooled and the smallest; then what one clock read cost.
fn floor_table(r: &Results<FloorRound>) -> anyhow::Result<String> {
    let pooled = floor_pooled(r);
    anyhow::ensure!(!pooled.is_empty(), "the floor could not be measured here");
    let mut t = Table::new(["one way", "median of rounds", "samples", "min"]);
    for (placement, d) in &pooled {
        let Some(s) = d.summary() else { continue };
        t.row(cells![
            placement.label().to_string(),
            fmt_opt_estimate(r.estimate(&FloorKey(*placement)), Unit::Nanos),
            fmt_count(s.n),
            Unit::Nanos.format(s.min),
        ]);
    }
    let clock = r
        .estimate_of(|x| x.clock_read_ns)
        .map(|e| {
            format!(
                "\nOne `Instant::now()` took {} here (median over rounds of each round's \
                 median batch of 10,000 reads).\n",
                fmt_estimate(&e, Unit::Nanos)
            )
        })
        .unwrap_or_default();
    Ok(format!("{}{clock}", t.to_markdown()))
}

/// The floor's tails: every sample of every round, pooled per placement (p99 from
/// 1,000 samples, p99.9 from 10,000).
fn floor_tails_table(r: &Results<FloorRound>) -> anyhow::Result<String> {
    let pooled = floor_pooled(r);
    anyhow::ensure!(!pooled.is_empty(), "the floor could not be measured here");
    let tails = Tails::for_counts(pooled.iter().map(|(_, d)| d.len()));
    // The tails with the count they rest on; min is in the table above.
    let without_min = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .enumerate()
            .filter_map(|(i, c)| (i != 1).then_some(c))
            .collect()
    };
    let mut headers = vec!["one way".to_string()];
    headers.extend(without_min(
        tails.headers().into_iter().map(String::from).collect(),
    ));
    let mut t = Table::new(headers);
    for (placement, d) in &pooled {
        let Some(s) = d.summary() else { continue };
        let mut row = vec![placement.label().to_string()];
        row.extend(without_min(tails.cells(&s)));
        t.row(row);
    }
    Ok(t.to_markdown())
}

fn floor_plot(r: &Results<FloorRound>) -> anyhow::Result<String> {
    let pooled = floor_pooled(r);
    dist_cdf(
        "atomic ping-pong: one-way hand-over between two spinning threads",
        "one-way latency (log scale)",
        pooled.iter().map(|(p, d)| (p.label().to_string(), d)),
    )
    .to_svg()
}

/// How a transport is named in a sentence.
fn through(tr: Transport) -> &'static str {
    match tr {
        Transport::Mpsc => "channel",
        Transport::Tcp => "TCP",
        Transport::Udp => "UDP",
    }
}

/// One runtime's spinning against blocking for one transport, judged on the rounds'
/// pairs: "std (441 ns spinning, 51.1 µs blocking): spinning is faster than blocking:
/// …".
fn spin_fragment(r: &Results<Runs>, rt: Runtime, tr: Transport) -> Option<(String, Comparison)> {
    let c = r.compare(
        &RunKey::variant(rt, tr, Wait::Spin),
        &RunKey::variant(rt, tr, Wait::Block),
    )?;
    Some((
        format!(
            "{} ({} spinning, {} blocking): {}",
            rt.label(),
            Unit::Nanos.format(c.a.median),
            Unit::Nanos.format(c.b.median),
            comparison_sentence("spinning", "blocking", &c, Better::Lower)
        ),
        c,
    ))
}

/// The chapter's answer in numbers: what spinning saves per message, per transport and
/// runtime; what it costs the receiver in CPU; what the idle gap does even to a
/// spinner; and the write-up's own answer.
fn answer(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let gap = r.param("gap_ms").unwrap_or(0.0);
    // How many runtime-transport pairs the rule decides for spinning.
    let (mut sooner, mut pairs) = (0, 0);
    for tr in TRANSPORTS {
        let frags: Vec<String> = RUNTIMES
            .iter()
            .filter_map(|&rt| {
                let (f, c) = spin_fragment(r, rt, tr)?;
                pairs += 1;
                sooner += usize::from(c.verdict == Verdict::Below);
                Some(f)
            })
            .collect();
        if !frags.is_empty() {
            out.push(format!("{}: {}", through(tr), frags.join("; ")));
        }
    }
    anyhow::ensure!(pairs > 0, "no variant has a result to compare");
    // The rounds behind every figure here: said once, where they fall short.
    let shortfall = keys(r)
        .iter()
        .filter_map(|k| r.estimate(k))
        .min_by(|a, b| a.confidence.total_cmp(&b.confidence))
        .and_then(|e| harness::fmt::coverage_shortfall(&e))
        .map(|c| format!(" (intervals {c})"))
        .unwrap_or_default();
    let warmup = r.param("warmup_messages").unwrap_or(0.0);
    out.insert(
        0,
        format!(
            "median latency, spinning receiver against a blocking one (`recv()`, a blocking \
             read, a plain `.await`: no time bound, as in the write-up), with a {gap} ms idle \
             gap before each message and {warmup} untimed warm-up message(s) first: spinning \
             was clearly sooner in {sooner} of {pairs} runtime–transport pairs{shortfall}; \
             each ratio is the median of the rounds' own ratios, not one median shown \
             divided by the other"
        ),
    );
    let chan = |w| RunKey::variant(Runtime::Std, Transport::Mpsc, w);
    // The answer speaks of medians; the tails can tell another story.
    let max = |w| pooled(r, &chan(w)).summary().map(|s| s.max);
    if let (Some(ms), Some(mb)) = (max(Wait::Spin), max(Wait::Block)) {
        out.push(format!(
            "these are medians: the slowest single message, pooled over rounds, took {} with \
             a spinning std channel receiver and {} with a blocking one",
            Unit::Nanos.format(ms),
            Unit::Nanos.format(mb),
        ));
    }
    let (s, b) = (chan(Wait::Spin), chan(Wait::Block));
    let own = compare_runs(r, &s, &b, |x| x.receiver_cpu_per_message_ns);
    let whole = compare_runs(r, &s, &b, |x| x.cpu_per_message_ns);
    let cores = |k: &RunKey| per_run(r, k, |x| x.cores_busy);
    if let (Some(own), Some(whole), Some(ks), Some(kb)) = (own, whole, cores(&s), cores(&b)) {
        out.push(format!(
            "what waiting costs the receiver on the std channel: the receiving thread's own \
             CPU per message was {} spinning and {} blocking (spinning ÷ blocking: {}); the \
             whole process's, the sender's sleep and the harness's reads included, {} and {} \
             ({}); {} cores busy against {}",
            Unit::Nanos.format(own.a.median),
            Unit::Nanos.format(own.b.median),
            ratio_cell(&own),
            Unit::Nanos.format(whole.a.median),
            Unit::Nanos.format(whole.b.median),
            ratio_cell(&whole),
            harness::render::sig3(ks.median),
            harness::render::sig3(kb.median),
        ));
    }
    let no_gap = chan(Wait::Spin).arm(Arm::NoGap);
    if let Some(c) = r.compare(&chan(Wait::Spin), &no_gap) {
        out.push(format!(
            "the idle gap and a spinning receiver: the std channel took {} after the {gap} ms \
             gap and {} with none; {} (the idle-gap section below measures this again in a \
             separate experiment, with figures of its own)",
            fmt_estimate(&c.a, Unit::Nanos),
            fmt_estimate(&c.b, Unit::Nanos),
            comparison_sentence(
                &format!("the std channel after the {gap} ms gap"),
                "with none",
                &c,
                Better::Lower
            ),
        ));
    }
    Ok(answer_block(out, &writeup_answer()?))
}

/// The write-up's own answer, from its published numbers: what it found, as printed.
fn writeup_answer() -> anyhow::Result<String> {
    let refs = reference()?;
    let all: Vec<f64> = refs
        .speedups
        .iter()
        .flat_map(|x| [x.avg_x, x.median_x])
        .collect();
    let faster = all.iter().all(|x| *x > 1.0);
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0, f64::max);
    let chan = |m| refs.speedup(m, Runtime::Std, Transport::Mpsc);
    let (Some(mac), Some(ubu)) = (chan("macos"), chan("ubuntu")) else {
        anyhow::bail!("the reference numbers lack the std channel's speedups");
    };
    Ok(format!(
        "felix-pb found spinning {} for every runtime–transport pair on both its machines \
         (printed speedups {lo:.1}x to {hi:.1}x; std channel: “{:.1}x” by averages and \
         “{:.1}x” by medians on macOS, “{:.1}x” and “{:.1}x” on Ubuntu). Its conclusion: \
         “For those niche use cases, spinning might be useful!”",
        if faster {
            "faster"
        } else {
            "not always faster"
        },
        mac.avg_x,
        mac.median_x,
        ubu.avg_x,
        ubu.median_x,
    ))
}

/// The spinning std channel in the gap sweep: its key at a gap, with a sleeping or a
/// busy-waiting sender.
fn chan_key(gap_us: u64, busy: bool) -> RunKey {
    let arm = if busy { Arm::BusySender } else { Arm::Main };
    gap_key(Transport::Mpsc, Wait::Spin, gap_us).arm(arm)
}

/// The rows of the gap-why table: every gap with a sleeping sender, and the gaps where
/// a busy-waiting sender ran too.
fn gap_rows() -> Vec<(u64, bool)> {
    let mut rows = Vec::new();
    for g in GAPS_US {
        rows.push((g, false));
        if crate::experiments::BUSY_SENDER_GAPS_MS
            .iter()
            .any(|b| b * 1_000 == g)
        {
            rows.push((g, true));
        }
    }
    rows
}

/// A share as a percentage with its interval over rounds.
fn fmt_share(e: &Estimate) -> Formatted {
    Formatted::with_interval(
        format!("{:.0} %", e.median * 100.0),
        format!("{:.0}–{:.0}", e.lo * 100.0, e.hi * 100.0),
    )
}

/// Every round's messages of one key whose receiver was never preempted while it
/// waited for them, pooled.
fn pooled_unpreempted(r: &Results<Runs>, key: &RunKey) -> Dist {
    harness::render::pooled(r.data(), |round| {
        round.find(key).map(|run| &run.latency_unpreempted)
    })
}

/// What the gap adds to a spinning std channel, with the counters that can say why:
/// the sender's send call, whether the receiver kept its CPU, where the two threads ran,
/// the receiver's run-queue delay.
fn gap_why_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "gap: sender",
        "median latency",
        "send call",
        "never preempted",
        "their median",
        "same CPU",
        "run-queue delay",
    ]);
    for (g, busy) in gap_rows() {
        let k = chan_key(g, busy);
        let Some(e) = r.estimate(&k) else { continue };
        let est = |f: fn(&Run) -> Option<f64>| per_run(r, &k, f);
        let calm = pooled_unpreempted(r, &k);
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

/// What the gap sweep shows about the spinning std channel, sentence by sentence, and
/// which part of the growth the counters account for. Every comparison of two rows is
/// judged on the rounds' pairs; the messages pooled over rounds are judged apart.
fn gap_findings(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let long = *GAPS_US.last().expect("gaps");
    let (lk, zk) = (chan_key(long, false), chan_key(0, false));
    let lg = gap_label(long);
    // The channel's first message, untimed in every other figure, against the warm
    // ones of the same runs.
    if let Some(c) = r.compare_of(|x| x.find(&zk)?.first_ns, |x| x.find(&zk)?.p50_ns) {
        out.push(format!(
            "the first message of a new channel (a warm-up message, not timed elsewhere, \
             with no gap before it) took {}: {}. Our hypothesis, which these counters do \
             not split: the channel, its memory and the code on its path are used for the \
             first time, and the receiver may not yet be running when it is sent, or share \
             the sender's CPU",
            fmt_estimate(&c.a, Unit::Nanos),
            comparison_sentence(
                "the first message",
                "the timed messages of the same runs with no gap (their median)",
                &c,
                Better::Lower
            )
        ));
    }
    let lat = r.compare(&lk, &zk);
    if let Some(c) = &lat {
        out.push(comparison_sentence(
            &format!("the spinning std channel after a {lg} gap"),
            "with no gap",
            c,
            Better::Lower,
        ));
    }
    // The same comparison over the messages whose receiver kept its CPU throughout.
    let (c0, cl) = (pooled_unpreempted(r, &zk), pooled_unpreempted(r, &lk));
    let calm = match (Estimate::of(&values(&cl)), Estimate::of(&values(&c0))) {
        (Some(a), Some(b)) => {
            let c = Comparison::unpaired(a, b);
            out.push(format!(
                "counting only the messages whose receiver was never preempted while it \
                 waited ({} after {lg}, median {}, and {} with no gap, median {}, pooled \
                 over rounds; these intervals are over messages, not rounds), {}",
                cl.len(),
                fmt_estimate(&a, Unit::Nanos),
                c0.len(),
                fmt_estimate(&b, Unit::Nanos),
                comparison_sentence(
                    &format!("their median after {lg}"),
                    "with no gap",
                    &c,
                    Better::Lower
                )
            ));
            Some(c.verdict)
        }
        _ => None,
    };
    let send = compare_runs(r, &lk, &zk, |x| x.send_p50_ns);
    if let Some(c) = &send {
        out.push(comparison_sentence(
            &format!("the sender's send call (from its stamp to its return) after {lg}"),
            "with no gap",
            c,
            Better::Lower,
        ));
    }
    let mut busy = None;
    for g in crate::experiments::BUSY_SENDER_GAPS_MS {
        let g = g * 1_000;
        if let Some(c) = r.compare(&chan_key(g, true), &chan_key(g, false)) {
            out.push(comparison_sentence(
                &format!("a busy-waiting sender's latency after {}", gap_label(g)),
                "a sleeping sender's",
                &c,
                Better::Lower,
            ));
            if g == long {
                busy = Some(c);
            }
        }
    }
    // What the counters account for, from the verdicts above.
    if let Some(c) = &lat {
        if c.verdict != Verdict::Above {
            out.push(format!(
                "so the latency after {lg} did not grow clearly enough in this run for the \
                 counters to have anything to explain (the first line says why)"
            ));
        } else {
            match calm {
                Some(Verdict::Above) => out.push(
                    "so the growth is there even when the receiver never lost its CPU: \
                     preemption does not explain it"
                        .into(),
                ),
                Some(_) => out.push(
                    "so the growth comes with the receiver losing its CPU while it spun: \
                     the messages it waited for without being preempted did not grow by the \
                     rule"
                        .into(),
                ),
                None => {}
            }
            if let Some(sc) = &send {
                out.push(if sc.verdict == Verdict::Above {
                    format!(
                        "the send call grew by {} of the {} the median latency grew by: that \
                         part passed between the sender's stamp and the return of its send \
                         (when within it the message became visible to the receiver is not \
                         measured)",
                        Unit::Nanos.format(sc.a.median - sc.b.median),
                        Unit::Nanos.format(c.a.median - c.b.median)
                    )
                } else {
                    "the send call did not grow by the rule, so the growth is not in it".into()
                });
            }
            if let Some(b) = &busy {
                out.push(match b.verdict {
                    Verdict::Below => format!(
                        "a sender that never slept avoided {} of it after {lg}: that part \
                         comes with the sender's sleep",
                        Unit::Nanos.format(b.b.median - b.a.median)
                    ),
                    Verdict::Above => format!(
                        "a sender that never slept did worse after {lg}, so the sender's \
                         sleep does not explain the growth"
                    ),
                    _ => format!(
                        "a sender that never slept did not avoid it by the rule after {lg}, so \
                         this run does not show the sender's sleep to be the cause"
                    ),
                });
            }
            if calm != Some(Verdict::Below) && calm != Some(Verdict::Same) {
                out.push(leftover_sentence(r, long, busy.as_ref()));
            }
        }
    }
    anyhow::ensure!(
        !out.is_empty(),
        "the spinning std channel has no result in the sweep"
    );
    Ok(bullets(out))
}

/// What the counters leave of the gap's growth: not measured, said so; where the
/// busy-sender row ran and was itself slower than no gap, its figures, since a sender
/// that never slept rules out any explanation that needs the sender's CPU to have gone
/// idle; then our hypothesis, worded so that it holds for both rows.
fn leftover_sentence(r: &Results<Runs>, long: u64, busy: Option<&Comparison>) -> String {
    let mut s = "what the counters leave of it is not measured here".to_string();
    let busy_key = chan_key(long, true);
    let none = chan_key(0, false);
    let against_none = r.compare(&busy_key, &none);
    let sends = compare_runs(r, &busy_key, &none, |x| x.send_p50_ns);
    if let (Some(b), Some(c), Some(sc)) = (busy, against_none, sends)
        && b.verdict != Verdict::Below
        && c.verdict == Verdict::Above
    {
        s.push_str(&format!(
            ". It does not need the sender's CPU to have gone idle: with a sender that \
             busy-waited through the {} gap the latency was {} and the send call {}, \
             against {} and {} with no gap ({})",
            gap_label(long),
            fmt_estimate(&c.a, Unit::Nanos),
            fmt_estimate(&sc.a, Unit::Nanos),
            fmt_estimate(&c.b, Unit::Nanos),
            fmt_estimate(&sc.b, Unit::Nanos),
            comparison_sentence("the busy sender's latency", "no gap's", &c, Better::Lower),
        ));
    }
    s.push_str(
        ". Our hypothesis, which this page does not test: over a long gap, other work (the \
         kernel's, other processes' or, on a virtual machine, the host's) displaces what the \
         send path uses (its code, the allocator's and the channel's memory, their address \
         translations) from the caches, whether the sender sleeps or busy-waits meanwhile",
    );
    s
}

/// The message latencies a distribution holds, as sorted values (three significant
/// digits): what an interval over messages is computed from.
fn values(d: &Dist) -> Vec<f64> {
    let n = d.len();
    (0..n)
        .filter_map(|i| d.quantile((i as f64 + 0.5) / n as f64))
        .collect()
}

/// Where the spinning std channel's receiver took its messages: on the sender's CPU or
/// another one, how much that varied between rounds, and what it did to the latency
/// (messages pooled over rounds, so judged as two samples measured apart).
fn placement_sentence(r: &Results<Runs>) -> Option<String> {
    let k = RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Spin);
    let shares: Vec<f64> = r.data().filter_map(|x| x.find(&k)?.same_cpu).collect();
    let share = per_run(r, &k, |x| x.same_cpu)?;
    let (lo, hi) = shares
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(a, b), x| (a.min(*x), b.max(*x)));
    let (mut same, mut other) = (Dist::new(), Dist::new());
    for run in r.data().filter_map(|x| x.find(&k)) {
        same.merge(&run.latency_same_cpu);
        other.merge(&run.latency_other_cpu);
    }
    let spread = if (hi - lo).abs() < 1e-9 {
        "in every round".to_string()
    } else {
        format!(
            "median over rounds; rounds ranged from {:.0} % to {:.0} %",
            lo * 100.0,
            hi * 100.0
        )
    };
    let mut s = format!(
        "the spinning std channel's receiver took {:.0} % of its messages on the CPU the \
         sender stamped them on ({spread})",
        share.median * 100.0,
    );
    if let (Some(a), Some(b)) = (Estimate::of(&values(&same)), Estimate::of(&values(&other))) {
        s.push_str("; pooled over rounds, ");
        s.push_str(&comparison_sentence(
            &format!(
                "the median message taken on the sender's CPU ({} messages)",
                same.len()
            ),
            &format!("the median one taken on another CPU ({})", other.len()),
            &Comparison::unpaired(a, b),
            Better::Lower,
        ));
    }
    Some(s)
}

/// The A/A self-check: the spinning std channel and its twin, the same code in the same
/// rounds, judged on their pairs like every other finding.
fn twin_sentence(r: &Results<Runs>) -> Option<String> {
    let k = RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Spin).arm(Arm::NoGap);
    let c = r.compare(&k, &k.twin())?;
    Some(harness::render::aa_sentence(
        "the spinning std channel with no gap",
        None,
        &fmt_estimate(&c.a, Unit::Nanos).to_string(),
        &fmt_estimate(&c.b, Unit::Nanos).to_string(),
        &c,
        Better::Lower,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_data_parses_with_every_published_speedup() {
        let r = reference().unwrap();
        assert_eq!(r.results.len(), 24);
        assert_eq!(r.speedups.len(), 12);
        let s = r.speedup("macos", Runtime::Std, Transport::Mpsc).unwrap();
        assert_eq!((s.avg_x, s.median_x), (48.3, 295.6));
    }

    /// The write-up's speedups render as it printed them, not padded to three digits.
    #[test]
    fn printed_speedups_render_verbatim() {
        assert_eq!(printed_ratio(295.6), "295.6×");
        assert_eq!(printed_ratio(3.4), "3.4×");
        assert_eq!(printed_ratio(6.0), "6.0×");
        assert_eq!(printed_ratio(172.4), "172.4×");
    }

    /// A distribution's samples come back sorted, at its three significant digits.
    #[test]
    fn values_give_back_the_samples() {
        let d = Dist::from_samples([300.0, 100.0, 200.0, 1_000_000.0]);
        let v = values(&d);
        assert_eq!(v.len(), 4);
        assert!(
            (v[0] - 100.0).abs() < 1.0 && (v[3] - 1e6).abs() < 1e3,
            "{v:?}"
        );
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        assert!(values(&Dist::new()).is_empty());
    }

    /// The write-up's line quotes its printed speedups and its conclusion exactly.
    #[test]
    fn the_writeups_answer_is_as_printed() {
        let w = writeup_answer().unwrap();
        assert!(w.contains("found spinning faster"), "{w}");
        assert!(
            w.contains("“48.3x” by averages and “295.6x” by medians on macOS"),
            "{w}"
        );
        assert!(w.contains("“3.4x” and “3.2x” on Ubuntu"), "{w}");
        assert!(w.contains("speedups 1.5x to 295.6x"), "{w}");
        assert!(w.contains("“For those niche use cases, spinning might be useful!”"));
    }

    fn in_process(
        exp: &'static dyn harness::AnyExperiment,
        set: &[&str],
        rounds: u32,
    ) -> harness::Record {
        use harness::params::Override;
        use harness::runner::{Mode, Request, rounds_in_process};
        let overrides: Vec<Override> = set.iter().map(|s| Override::parse(s).unwrap()).collect();
        rounds_in_process(
            &Request {
                chapter: &crate::CHAPTER,
                experiment: exp,
                profile: Profile::Quick,
                overrides: &overrides,
                mode: Mode::InProcess,
            },
            rounds,
            std::time::Duration::from_secs(60),
        )
        .unwrap()
    }

    /// From real rounds: the answer opens the page's block and has its sentences and the
    /// write-up's line; the extra arms stay out of the variant tables; the findings end
    /// with the A/A self-check.
    #[test]
    fn the_answer_and_the_extra_arms_render_from_real_rounds() {
        let rec = in_process(&VARIANTS, &["messages=2", "gap_ms=1"], 3);
        let r = Results::<Runs>::decode(&rec).unwrap();
        let a = answer(&r).unwrap();
        assert!(a.starts_with("<div class=\"cow-live cow-answer\">"), "{a}");
        assert!(a.contains("runtime–transport pairs"), "{a}");
        assert!(
            a.contains("- TCP: std ") && a.contains("*The write-up:*"),
            "{a}"
        );
        assert!(a.contains("with none"), "{a}");
        // The cost view is two tables of the same rows.
        for (table, tables) in [
            (latency_table(&r).unwrap(), 1),
            (cost_table(&r).unwrap(), 2),
        ] {
            assert!(
                !table.contains(harness::AA_TWIN) && !table.contains("no gap"),
                "{table}"
            );
            // The six std variants and the three bounded std arms.
            assert_eq!(table.matches("\n| std · ").count(), 9 * tables, "{table}");
        }
        let f = findings(&r).unwrap();
        assert!(
            f.trim_end()
                .lines()
                .last()
                .unwrap()
                .contains("Self-check (A/A)"),
            "{f}"
        );
    }

    /// From real rounds of the sweep: the gap-why table has a row per gap and sender,
    /// and its findings compare the longest gap with none.
    #[test]
    fn the_gap_why_views_render_from_real_rounds() {
        let rec = in_process(&GAPS, &["messages=1", "messages_after_long_gaps=1"], 3);
        let r = Results::<Runs>::decode(&rec).unwrap();
        let t = gap_why_table(&r).unwrap();
        assert_eq!(t.lines().count(), 2 + gap_rows().len(), "{t}");
        assert!(t.contains("busy-waits"), "{t}");
        let f = gap_findings(&r).unwrap();
        assert!(
            f.contains("after a 100 ms gap") && f.contains("send call"),
            "{f}"
        );
    }
}
