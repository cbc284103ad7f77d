//! How the chapter's results are shown: Markdown tables, sentences computed from the
//! intervals, and SVG plots. Every figure is a median over rounds with its interval;
//! distributions pool every message of every round.

use crate::experiments::{
    Arm, FLOOR, FloorRound, GAPS, GAPS_MS, PINNING, PLACEMENTS, RUNTIMES, Run, Runs, SWEPT,
    TRANSPORTS, VARIANTS, variant_key,
};
use crate::{Placement, Runtime, Transport, Wait};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::{RefMachine, Source, attribution};
use harness::render::{
    Align, Better, Table, Tails, answer_block, compare_sentence, findings as bullets, fmt_count,
    fmt_estimate, fmt_opt_estimate, fmt_ratio, fmt_ratio_estimate, undecided_text,
};
use harness::stats::{Verdict, relative_difference, threshold, verdict};
use harness::{Dist, Estimate, Profile, Results, Unit, View};
use serde::Deserialize;

pub static ANSWER: View<Runs> = View::table("answer", &VARIANTS, answer);
pub static LATENCY: View<Runs> = View::table("variants", &VARIANTS, latency_table).brief();
pub static COST: View<Runs> = View::table("cost", &VARIANTS, cost_table).brief();
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
fn pooled(r: &Results<Runs>, key: &str) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(key).map(|run| &run.latency))
}

/// The keys of an experiment's main variants, in the order the rounds list them (the
/// extra arms, such as the A/A twin, have tables of their own or a line).
fn keys(r: &Results<Runs>) -> Vec<String> {
    let extra = [Arm::NoGap, Arm::BusySender];
    r.record
        .keys()
        .into_iter()
        .filter(|k| {
            !k.ends_with(harness::AA_TWIN) && !extra.iter().any(|a| k.ends_with(a.suffix()))
        })
        .map(String::from)
        .collect()
}

/// Median over rounds of a per-run value of one variant.
fn per_run(r: &Results<Runs>, key: &str, f: impl Fn(&Run) -> Option<f64>) -> Option<Estimate> {
    r.estimate_of(|round| round.find(key).and_then(&f))
}

fn lost(r: &Results<Runs>, key: &str) -> u32 {
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
        let mut row = vec![
            k.clone(),
            fmt_opt_estimate(r.estimate(k), Unit::Nanos),
            fmt_count(s.n),
            Unit::Nanos.format(s.min),
        ];
        row.extend(tails.tail_cells(&s, |v| Unit::Nanos.format(v)));
        if any_lost {
            row.push(lost(r, k).to_string());
        }
        t.row(row);
    }
    Ok(t.to_markdown())
}

/// What each strategy costs in CPU: per message received, and in cores kept busy.
fn cost_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "variant",
        "CPU per message",
        "cores busy",
        "receiver blocked",
        "receiver preempted",
        "same CPU",
    ]);
    for k in keys(r) {
        t.row([
            k.clone(),
            fmt_opt_estimate(per_run(r, &k, |x| x.cpu_per_message_ns), Unit::Nanos),
            fmt_opt_estimate(per_run(r, &k, |x| x.cores_busy), Unit::Number),
            fmt_opt_estimate(per_run(r, &k, |x| x.voluntary_per_message), Unit::Number),
            fmt_opt_estimate(per_run(r, &k, |x| x.involuntary_per_message), Unit::Number),
            per_run(r, &k, |x| x.same_cpu).map_or_else(|| "–".into(), |e| fmt_share(&e)),
        ]);
    }
    Ok(t.to_markdown())
}

/// Spinning against blocking, per runtime and transport: the per-round ratio of the
/// medians, where the two intervals are apart at all.
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
                variant_key(rt, tr, Wait::Block),
                variant_key(rt, tr, Wait::Spin),
            );
            let (Some(be), Some(se)) = (r.estimate(&b), r.estimate(&s)) else {
                continue;
            };
            let ratio = match undecided_text(verdict(&be, &se)) {
                Some(text) => text,
                None => r
                    .ratio(&b, &s)
                    .map_or_else(|| "–".into(), |x| fmt_ratio_estimate(&x)),
            };
            t.row([
                format!("{} · {}", rt.label(), tr.label()),
                fmt_estimate(&be, Unit::Nanos),
                fmt_estimate(&se, Unit::Nanos),
                ratio,
            ]);
        }
    }
    Ok(t.to_markdown())
}

/// A sentence comparing two readings of the same rounds (lower is better), decided by
/// their intervals; `None` when either is missing.
fn pair(r: &Results<Runs>, a: &str, b: &str, an: &str, bn: &str) -> Option<String> {
    let (ae, be) = (r.estimate(a)?, r.estimate(b)?);
    Some(compare_sentence(
        (an, &ae),
        (bn, &be),
        r.ratio(a, b).as_ref(),
        Better::Lower,
    ))
}

/// The speedup of spinning over blocking (blocking ÷ spinning) in one round.
fn round_speedup(round: &Runs, rt: Runtime, tr: Transport) -> Option<f64> {
    let b = round.find(&variant_key(rt, tr, Wait::Block))?.p50_ns?;
    let s = round.find(&variant_key(rt, tr, Wait::Spin))?.p50_ns?;
    (s > 0.0).then(|| b / s)
}

/// Whether spinning gains more over blocking on the std channel than on a std socket:
/// the two speedups' intervals decide, and the per-round ratio of the speedups says by
/// how much.
fn speedup_sentence(r: &Results<Runs>, socket: Transport) -> Option<String> {
    let speedup = |tr| r.estimate_of(|x| round_speedup(x, Runtime::Std, tr));
    let (chan, sock) = (speedup(Transport::Mpsc)?, speedup(socket)?);
    let ratio = r.estimate_of(|x| {
        Some(
            round_speedup(x, Runtime::Std, Transport::Mpsc)?
                / round_speedup(x, Runtime::Std, socket)?,
        )
    });
    Some(compare_sentence(
        ("spinning's speedup on the std channel", &chan),
        (&format!("its speedup on std {}", socket.label()), &sock),
        ratio.as_ref(),
        Better::Higher,
    ))
}

/// Sentences decided by the intervals: what this run shows, and what it does not.
fn findings(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let pair = |a: String, b: String, an: &str, bn: &str| pair(r, &a, &b, an, bn);
    for tr in TRANSPORTS {
        if let Some(s) = pair(
            variant_key(Runtime::Std, tr, Wait::Spin),
            variant_key(Runtime::Std, tr, Wait::Block),
            &format!("spinning on std {}", tr.label()),
            "blocking",
        ) {
            out.push(s);
        }
    }
    for socket in [Transport::Tcp, Transport::Udp] {
        out.extend(speedup_sentence(r, socket));
    }
    for (socket, name) in [
        (Transport::Tcp, "TCP stream"),
        (Transport::Udp, "UDP socket"),
    ] {
        out.extend(pair(
            variant_key(Runtime::Tokio, socket, Wait::Spin),
            variant_key(Runtime::Std, socket, Wait::Spin),
            &format!("spinning on tokio's {name}"),
            "spinning on std's",
        ));
    }
    out.extend(placement_sentence(r));
    anyhow::ensure!(!out.is_empty(), "no variant has a result to compare");
    out.extend(twin_sentence(r));
    Ok(bullets(out))
}

// The write-up's published numbers.
#[derive(Deserialize)]
struct Reference {
    source: Source,
    machines: Vec<RefMachine>,
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

    fn speedup(&self, machine: &str, rt: Runtime, tr: Transport) -> Option<&RefSpeedup> {
        self.speedups
            .iter()
            .find(|x| x.machine == machine && x.runtime == rt.label() && x.transport == tr.label())
    }

    fn attribution(&self) -> String {
        let machines: Vec<&RefMachine> = self.machines.iter().collect();
        attribution(&self.source, &machines)
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
                let key = variant_key(rt, tr, wait);
                let theirs = |m: &str| {
                    refs.get(m, rt, tr, wait).map_or_else(
                        || "–".into(),
                        |x| {
                            format!(
                                "{} / {}",
                                Unit::Nanos.format(x.avg_us * 1e3),
                                Unit::Nanos.format(x.median_us * 1e3)
                            )
                        },
                    )
                };
                t.row([
                    key.clone(),
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
                    || "–".into(),
                    |x| format!("{} / {}", printed_ratio(x.avg_x), printed_ratio(x.median_x)),
                )
            };
            // Yours by the same rule as every verdict: a ratio only where it decides.
            let (b, s) = (
                variant_key(rt, tr, Wait::Block),
                variant_key(rt, tr, Wait::Spin),
            );
            let undecided = match (r.estimate(&b), r.estimate(&s)) {
                (Some(be), Some(se)) => undecided_text(verdict(&be, &se)),
                _ => None,
            };
            let yours = undecided.unwrap_or_else(|| {
                r.ratio(&b, &s)
                    .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e))
            });
            t.row([
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
    let series: Vec<(String, Dist)> = keys(r)
        .into_iter()
        .filter_map(|k| {
            let name = k.strip_prefix(&prefix)?.to_string();
            Some((name, pooled(r, &k)))
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

fn gap_key(tr: Transport, wait: Wait, gap_ms: u64) -> String {
    format!("{} · {gap_ms} ms", variant_key(Runtime::Std, tr, wait))
}

fn gaps_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new([
        "transport · wait",
        "gap",
        "median latency",
        "CPU per message",
    ]);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
            for g in GAPS_MS {
                let k = gap_key(tr, wait, g);
                let Some(e) = r.estimate(&k) else { continue };
                t.row([
                    format!("{} · {}", tr.label(), wait.label()),
                    format!("{g} ms"),
                    fmt_estimate(&e, Unit::Nanos),
                    fmt_opt_estimate(per_run(r, &k, |x| x.cpu_per_message_ns), Unit::Nanos),
                ]);
            }
        }
    }
    Ok(format!("{}{}", t.to_markdown(), hybrid_budget(r)))
}

/// The hybrid's spin budget, and what it spent beyond blocking at each gap longer than
/// the budget: the per-round difference of CPU per message, hybrid minus blocking, which
/// is (our reading) the CPU its spin took, since after the spin it blocks like blocking.
fn hybrid_budget(r: &Results<Runs>) -> String {
    let Some(budget_us) = r.param("hybrid_spin_us") else {
        return String::new();
    };
    let budget = budget_us * 1e3;
    let mut lines = Vec::new();
    for tr in SWEPT {
        let cells: Vec<String> = GAPS_MS
            .iter()
            .filter(|&&g| g as f64 * 1e6 > budget)
            .filter_map(|&g| {
                let (h, b) = (gap_key(tr, Wait::Hybrid, g), gap_key(tr, Wait::Block, g));
                let cpu = |round: &Runs, k: &str| round.find(k)?.cpu_per_message_ns;
                let d = r.estimate_of(|round| Some(cpu(round, &h)? - cpu(round, &b)?))?;
                // The verdict rule against a fixed value: the interval beyond it and the
                // median more than the threshold away.
                let apart = relative_difference(d.median, budget) > threshold();
                let against = if d.lo > budget && apart {
                    format!("{} the budget", fmt_ratio(Some(d.median / budget)))
                } else if d.hi < budget && apart {
                    "less than the budget".to_string()
                } else {
                    "not clearly more than the budget".to_string()
                };
                Some(format!(
                    "{g} ms {}, {against}",
                    fmt_estimate(&d, Unit::Nanos)
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
         any deadline, once every 1,024 attempts. CPU per message, hybrid minus blocking, \
         per round (our reading: what its spin took, as it then blocks like the blocking \
         receiver), at the gaps longer than the budget: {}.\n",
        Unit::Nanos.format(budget),
        lines.join(" — ")
    )
}

fn gaps_plot(r: &Results<Runs>, cpu: bool) -> anyhow::Result<String> {
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
        .x_categories(GAPS_MS.iter().map(|g| format!("{g} ms")))
        .y(Axis::Log, PlotUnit::Nanos);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
            let points = GAPS_MS
                .iter()
                .enumerate()
                .filter_map(|(i, &g)| {
                    let k = gap_key(tr, wait, g);
                    let e = if cpu {
                        per_run(r, &k, |x| x.cpu_per_message_ns)?
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
    ])
    .align(1, Align::Left);
    for tr in SWEPT {
        for wait in [Wait::Block, Wait::Spin] {
            for placement in PLACEMENTS {
                let k = format!(
                    "{} · {}",
                    variant_key(Runtime::Std, tr, wait),
                    placement.label()
                );
                let Some(e) = r.estimate(&k) else { continue };
                let d = pooled(r, &k);
                t.row([
                    format!("{} · {}", tr.label(), wait.label()),
                    placement.label().to_string(),
                    fmt_estimate(&e, Unit::Nanos),
                    fmt_count(d.len()),
                    d.summary()
                        .map_or_else(|| "–".into(), |s| Unit::Nanos.format(s.max)),
                ]);
            }
        }
    }
    Ok(t.to_markdown())
}

/// What the pinning rows say, sentence by sentence: spinning against blocking on one
/// CPU, and one CPU against two for each way of waiting.
fn pinning_findings(r: &Results<Runs>) -> anyhow::Result<String> {
    let key =
        |tr, wait, p: Placement| format!("{} · {}", variant_key(Runtime::Std, tr, wait), p.label());
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
        t.row([
            placement.label().to_string(),
            fmt_opt_estimate(r.estimate(placement.label()), Unit::Nanos),
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

/// A ratio as a sentence shows it: the per-round ratio where the rounds give one, else
/// the ratio of the medians.
fn times(r: &Results<Runs>, num: &str, den: &str, fallback: f64) -> String {
    match r.ratio(num, den) {
        Some(e) => format!("{}×", harness::render::sig3(e.median)),
        None => fmt_ratio(Some(fallback)),
    }
}

/// One runtime's spinning against blocking for one transport, by the verdict rule:
/// "std 441 ns against 51.1 µs, blocking 116× as long".
fn spin_fragment(r: &Results<Runs>, rt: Runtime, tr: Transport) -> Option<String> {
    let (s, b) = (
        variant_key(rt, tr, Wait::Spin),
        variant_key(rt, tr, Wait::Block),
    );
    let (se, be) = (r.estimate(&s)?, r.estimate(&b)?);
    let nums = format!(
        "{} {} against {}",
        rt.label(),
        Unit::Nanos.format(se.median),
        Unit::Nanos.format(be.median)
    );
    let tail = match verdict(&se, &be) {
        Verdict::Below => format!(
            "blocking took {} as long",
            times(r, &b, &s, be.median / se.median)
        ),
        Verdict::Above => format!(
            "spinning took {} as long",
            times(r, &s, &b, se.median / be.median)
        ),
        v => undecided_text(v).unwrap_or_default(),
    };
    Some(format!("{nums} ({tail})"))
}

/// The chapter's answer in numbers: what spinning saves per message, per transport and
/// runtime; what it costs in CPU; what the idle gap does even to a spinner; and the
/// write-up's own answer.
fn answer(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let gap = r.param("gap_ms").unwrap_or(0.0);
    // How many runtime-transport pairs the rule decides for spinning.
    let (mut sooner, mut pairs) = (0, 0);
    for tr in TRANSPORTS {
        let frags: Vec<String> = RUNTIMES
            .iter()
            .filter_map(|&rt| {
                let f = spin_fragment(r, rt, tr)?;
                pairs += 1;
                let (s, b) = (
                    r.estimate(&variant_key(rt, tr, Wait::Spin))?,
                    r.estimate(&variant_key(rt, tr, Wait::Block))?,
                );
                sooner += usize::from(verdict(&s, &b) == Verdict::Below);
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
    out.insert(
        0,
        format!(
            "median latency, spinning receiver against blocking one, with a {gap} ms idle gap \
             before each message: spinning was clearly sooner in {sooner} of {pairs} \
             runtime–transport pairs{shortfall}; each “as long” is the median of the rounds' \
             own ratios, not one median shown divided by the other"
        ),
    );
    let chan = |w| variant_key(Runtime::Std, Transport::Mpsc, w);
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
    let cpu = |k: &str| per_run(r, k, |x| x.cpu_per_message_ns);
    let cores = |k: &str| per_run(r, k, |x| x.cores_busy);
    if let (Some(cs), Some(cb), Some(ks), Some(kb)) = (
        cpu(&chan(Wait::Spin)),
        cpu(&chan(Wait::Block)),
        cores(&chan(Wait::Spin)),
        cores(&chan(Wait::Block)),
    ) {
        let v = verdict(&cs, &cb);
        let (lead, how) = match v {
            Verdict::Above => (
                "spinning pays in CPU",
                format!("{} as much", fmt_ratio(Some(cs.median / cb.median))),
            ),
            Verdict::Below => ("spinning cost less CPU here", "less".to_string()),
            _ => (
                "spinning did not clearly cost more CPU here",
                undecided_text(v).unwrap_or_default(),
            ),
        };
        out.push(format!(
            "{lead}: a spinning std channel receiver's process used {} of CPU per message \
             against {} blocking ({how}), {} cores busy against {}",
            Unit::Nanos.format(cs.median),
            Unit::Nanos.format(cb.median),
            harness::render::sig3(ks.median),
            harness::render::sig3(kb.median),
        ));
    }
    let no_gap = format!("{}{}", chan(Wait::Spin), Arm::NoGap.suffix());
    if let (Some(g), Some(z)) = (r.estimate(&chan(Wait::Spin)), r.estimate(&no_gap)) {
        let ratio = times(r, &chan(Wait::Spin), &no_gap, g.median / z.median);
        let v = verdict(&g, &z);
        let (lead, how) = match v {
            Verdict::Above => (
                "even a spinning receiver pays for the idle gap",
                format!(
                    "{ratio} as long; the idle-gap section below measures this again in a \
                     separate experiment, with figures of its own"
                ),
            ),
            Verdict::Below => (
                "the idle gap did not slow a spinning receiver here",
                format!("{ratio} as long"),
            ),
            _ => (
                "the idle gap made no clear difference to a spinning receiver here",
                undecided_text(v).unwrap_or_default(),
            ),
        };
        out.push(format!(
            "{lead}: the std channel {} after the {gap} ms gap, {} with none ({how})",
            harness::render::fmt_estimate(&g, Unit::Nanos),
            harness::render::fmt_estimate(&z, Unit::Nanos),
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
fn chan_key(gap_ms: u64, busy: bool) -> String {
    let arm = if busy { Arm::BusySender } else { Arm::Main };
    format!(
        "{}{}",
        gap_key(Transport::Mpsc, Wait::Spin, gap_ms),
        arm.suffix()
    )
}

/// The rows of the gap-why table: every gap with a sleeping sender, and the gaps where
/// a busy-waiting sender ran too.
fn gap_rows() -> Vec<(u64, bool)> {
    let mut rows = Vec::new();
    for g in GAPS_MS {
        rows.push((g, false));
        if crate::experiments::BUSY_SENDER_GAPS_MS.contains(&g) {
            rows.push((g, true));
        }
    }
    rows
}

/// A share as a percentage with its interval over rounds.
fn fmt_share(e: &Estimate) -> String {
    format!(
        "{:.0} % ({:.0}–{:.0})",
        e.median * 100.0,
        e.lo * 100.0,
        e.hi * 100.0
    )
}

/// Every round's messages of one key whose receiver was never preempted while it
/// waited for them, pooled.
fn pooled_unpreempted(r: &Results<Runs>, key: &str) -> Dist {
    harness::render::pooled(r.data(), |round| {
        round.find(key).map(|run| &run.latency_unpreempted)
    })
}

/// What the gap adds to a spinning std channel, with the counters that can say why:
/// the sender's send call, whether the receiver kept its CPU, where the two threads ran.
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
        t.row([
            format!("{g} ms: {}", if busy { "busy-waits" } else { "sleeps" }),
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
/// which part of the growth the counters account for.
fn gap_findings(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    let long = *GAPS_MS.last().expect("gaps");
    let lat = |g, busy| r.estimate(&chan_key(g, busy));
    let send = |g| per_run(r, &chan_key(g, false), |x| x.send_p50_ns);
    let (l0, ll) = (lat(0, false), lat(long, false));
    if let (Some(a), Some(b)) = (&ll, &l0) {
        out.push(compare_sentence(
            (
                &format!("the spinning std channel after a {long} ms gap"),
                a,
            ),
            ("with no gap", b),
            r.ratio(&chan_key(long, false), &chan_key(0, false))
                .as_ref(),
            Better::Lower,
        ));
    }
    // The same comparison over the messages whose receiver kept its CPU throughout.
    let (c0, cl) = (
        pooled_unpreempted(r, &chan_key(0, false)),
        pooled_unpreempted(r, &chan_key(long, false)),
    );
    let calm = match (Estimate::of(&values(&cl)), Estimate::of(&values(&c0))) {
        (Some(a), Some(b)) => {
            out.push(format!(
                "counting only the messages whose receiver was never preempted while it \
                 waited ({} after {long} ms, median {}, and {} with no gap, median {}, pooled \
                 over rounds; these intervals are over messages, not rounds), {}",
                cl.len(),
                fmt_estimate(&a, Unit::Nanos),
                c0.len(),
                fmt_estimate(&b, Unit::Nanos),
                compare_sentence(
                    (&format!("their median after {long} ms"), &a),
                    ("with no gap", &b),
                    None,
                    Better::Lower,
                )
            ));
            Some(verdict(&a, &b))
        }
        _ => None,
    };
    let (s0, sl) = (send(0), send(long));
    if let (Some(a), Some(b)) = (&sl, &s0) {
        out.push(compare_sentence(
            (
                &format!("the sender's send call (from its stamp to its return) after {long} ms"),
                a,
            ),
            ("with no gap", b),
            None,
            Better::Lower,
        ));
    }
    for g in crate::experiments::BUSY_SENDER_GAPS_MS {
        if let (Some(a), Some(b)) = (lat(g, true), lat(g, false)) {
            out.push(compare_sentence(
                (&format!("a busy-waiting sender's latency after {g} ms"), &a),
                ("a sleeping sender's", &b),
                r.ratio(&chan_key(g, true), &chan_key(g, false)).as_ref(),
                Better::Lower,
            ));
        }
    }
    // What the counters account for, computed from the verdicts above.
    if let (Some(a), Some(b)) = (&ll, &l0) {
        if verdict(a, b) != Verdict::Above {
            out.push(
                "so this run shows no clear growth with the gap for the counters to explain".into(),
            );
        } else {
            match calm {
                Some(Verdict::Above) => out.push(
                    "so the growth is there even when the receiver never lost its CPU: \
                     preemption does not explain it"
                        .into(),
                ),
                Some(_) => out.push(
                    "so the growth comes with the receiver losing its CPU while it spun: the \
                     messages it waited for without being preempted did not clearly slow down"
                        .into(),
                ),
                None => {}
            }
            if let (Some(x), Some(y)) = (&sl, &s0) {
                out.push(if verdict(x, y) == Verdict::Above {
                    format!(
                        "the send call grew by {} of the {} the median latency grew by: that \
                         part passed between the sender's stamp and the return of its send (when \
                         within it the message became visible to the receiver is not measured)",
                        Unit::Nanos.format(x.median - y.median),
                        Unit::Nanos.format(a.median - b.median)
                    )
                } else {
                    "the send call did not clearly grow, so the growth is not in it".into()
                });
            }
            if let (Some(x), Some(y)) = (lat(long, true), &ll) {
                out.push(match verdict(&x, y) {
                    Verdict::Below => format!(
                        "a sender that never slept avoided {} of it after {long} ms: that \
                         part comes with the sender's sleep",
                        Unit::Nanos.format(y.median - x.median)
                    ),
                    Verdict::Above => format!(
                        "a sender that never slept did worse after {long} ms, so the \
                         sender's sleep does not explain the growth"
                    ),
                    _ => format!(
                        "a sender that never slept did not clearly avoid it after {long} ms, \
                         so this run does not show the sender's sleep to be the cause"
                    ),
                });
            }
            if calm != Some(Verdict::Below) && calm != Some(Verdict::Same) {
                out.push(leftover_sentence(r, long));
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
/// busy-sender row ran, its figures, since a sender that never slept rules out any
/// explanation that needs the sender's CPU to have gone idle; then our hypothesis, worded
/// so that it holds for both rows.
fn leftover_sentence(r: &Results<Runs>, long: u64) -> String {
    let mut s = "what the counters leave of it is not measured here".to_string();
    let busy = chan_key(long, true);
    let (quiet, none) = (chan_key(long, false), chan_key(0, false));
    let send = |k: &str| per_run(r, k, |x| x.send_p50_ns);
    if let (Some(bl), Some(bs), Some(zl), Some(zs), Some(sleep)) = (
        r.estimate(&busy),
        send(&busy),
        r.estimate(&none),
        send(&none),
        r.estimate(&quiet),
    ) && verdict(&bl, &sleep) != Verdict::Below
        && verdict(&bl, &zl) == Verdict::Above
    {
        s.push_str(&format!(
            ". It does not need the sender's CPU to have gone idle: with a sender that \
             busy-waited through the {long} ms gap the latency was {} and the send call {}, \
             against {} and {} with no gap",
            fmt_estimate(&bl, Unit::Nanos),
            fmt_estimate(&bs, Unit::Nanos),
            fmt_estimate(&zl, Unit::Nanos),
            fmt_estimate(&zs, Unit::Nanos),
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
/// another one, how much that varied between rounds, and what it did to the latency.
fn placement_sentence(r: &Results<Runs>) -> Option<String> {
    let k = variant_key(Runtime::Std, Transport::Mpsc, Wait::Spin);
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
        s.push_str(&compare_sentence(
            (
                &format!(
                    "the median message taken on the sender's CPU ({} messages)",
                    same.len()
                ),
                &a,
            ),
            (
                &format!("the median one taken on another CPU ({})", other.len()),
                &b,
            ),
            None,
            Better::Lower,
        ));
    }
    Some(s)
}

/// The A/A self-check: the spinning std channel and its twin, the same code in the same
/// rounds, compared by the same rule as every other finding.
fn twin_sentence(r: &Results<Runs>) -> Option<String> {
    let k = format!(
        "{}{}",
        variant_key(Runtime::Std, Transport::Mpsc, Wait::Spin),
        Arm::NoGap.suffix()
    );
    let twin = format!("{k}{}", harness::AA_TWIN);
    let (a, b) = (r.estimate(&k)?, r.estimate(&twin)?);
    let v = verdict(&a, &b);
    Some(format!(
        "self-check (A/A): the spinning std channel with no gap, measured twice in the same \
         rounds, took {} and {}: {}",
        fmt_estimate(&a, Unit::Nanos),
        fmt_estimate(&b, Unit::Nanos),
        match undecided_text(v) {
            Some(t) => format!("{t}, as it should be"),
            None => "the rule calls them different, a false verdict: this run's \
                     verdicts deserve extra doubt"
                .into(),
        }
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
        for table in [latency_table(&r).unwrap(), cost_table(&r).unwrap()] {
            assert!(
                !table.contains(harness::AA_TWIN) && !table.contains("no gap"),
                "{table}"
            );
            assert_eq!(table.matches("\n| std · ").count(), 6, "{table}");
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
        let rec = in_process(&GAPS, &["messages=1", "messages_after_100ms=1"], 3);
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
