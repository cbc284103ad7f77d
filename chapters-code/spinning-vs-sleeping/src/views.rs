//! How the chapter's results are shown: Markdown tables, sentences computed from the
//! intervals, and SVG plots. Every figure is a median over rounds with its interval;
//! distributions pool every message of every round.

use crate::experiments::{
    FLOOR, FloorRound, GAPS, GAPS_MS, PINNING, PLACEMENTS, RUNTIMES, Run, Runs, SWEPT, TRANSPORTS,
    VARIANTS, variant_key,
};
use crate::{Placement, Runtime, Transport, Wait};
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::{RefMachine, Source, attribution};
use harness::render::{
    Align, Better, Table, Tails, compare_sentence, fmt_count, fmt_estimate, fmt_opt_estimate,
    fmt_ratio_estimate,
};
use harness::render::{capitalise, undecided_text};
use harness::stats::verdict;
use harness::{Dist, Estimate, Profile, Results, Unit, View};
use serde::Deserialize;

pub static LATENCY: View<Runs> = View::table("variants", &VARIANTS, latency_table);
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
pub static PINNING_TABLE: View<Runs> = View::table("pinning", &PINNING, pinning_table);
pub static PINNING_FINDINGS: View<Runs> =
    View::table("pinning-findings", &PINNING, pinning_findings).brief();
pub static FLOOR_TABLE: View<FloorRound> = View::table("floor", &FLOOR, floor_table);
pub static FLOOR_TAILS: View<FloorRound> =
    View::table("floor-tails", &FLOOR, floor_tails_table).brief();
pub static FLOOR_CDF: View<FloorRound> = View::plot("floor-cdf", &FLOOR, floor_plot).brief();

/// All rounds' latencies of one variant, pooled.
fn pooled(r: &Results<Runs>, key: &str) -> Dist {
    let mut d = Dist::new();
    for round in r.data() {
        if let Some(run) = round.find(key) {
            d.merge(&run.latency);
        }
    }
    d
}

/// The keys of an experiment's variants, in the order the rounds list them.
fn keys(r: &Results<Runs>) -> Vec<String> {
    r.record.keys().into_iter().map(String::from).collect()
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
    let tails = Tails::for_counts(dists.iter().map(Dist::len));
    let any_lost = keys.iter().any(|k| lost(r, k) > 0);
    let mut headers = vec!["variant", "median latency", "messages", "min"];
    if tails.p99 {
        headers.push("p99");
    }
    headers.push("max");
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
        if tails.p99 {
            row.push(s.p99.map_or_else(|| "–".into(), |v| Unit::Nanos.format(v)));
        }
        row.push(Unit::Nanos.format(s.max));
        if any_lost {
            row.push(lost(r, k).to_string());
        }
        t.row(row);
    }
    Ok(t.to_markdown())
}

/// What each strategy costs in CPU: per message received, and in cores kept busy.
fn cost_table(r: &Results<Runs>) -> anyhow::Result<String> {
    let mut t = Table::new(["variant", "CPU per message", "cores busy"]);
    for k in keys(r) {
        t.row([
            k.clone(),
            fmt_opt_estimate(per_run(r, &k, |x| x.cpu_per_message_ns), Unit::Nanos),
            fmt_opt_estimate(per_run(r, &k, |x| x.cores_busy), Unit::Number),
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
    let cores = |k: String| per_run(r, &k, |x| x.cores_busy);
    if let (Some(s), Some(b)) = (
        cores(variant_key(Runtime::Std, Transport::Mpsc, Wait::Spin)),
        cores(variant_key(Runtime::Std, Transport::Mpsc, Wait::Block)),
    ) {
        out.push(format!(
            "a spinning std channel receiver kept {} cores busy; a blocking one {}",
            fmt_estimate(&s, Unit::Number),
            fmt_estimate(&b, Unit::Number)
        ));
    }
    anyhow::ensure!(!out.is_empty(), "no variant has a result to compare");
    Ok(bullets(&out))
}

fn bullets(sentences: &[String]) -> String {
    sentences
        .iter()
        .map(|s| format!("- {}.\n", capitalise(s)))
        .collect()
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
            let yours = r
                .ratio(
                    &variant_key(rt, tr, Wait::Block),
                    &variant_key(rt, tr, Wait::Spin),
                )
                .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e));
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
    Ok(t.to_markdown())
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
    Ok(bullets(&out))
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
}
