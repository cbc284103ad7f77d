//! The chapter's experiments: plain functions with explicit parameters, and the thin
//! wrappers the harness runs under a profile and a time bound.

use crate::omission::{self, Curve, StallingEcho};
use crate::pacers::{Pacer, Run, UdpOp};
use harness::stats::{MeanCi, Summary, quantile_curve};
use harness::{Ctx, NoteKind};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// The write-up's requested sleeps, in milliseconds.
pub const SWEEP_MS: [u64; 9] = [1, 2, 3, 5, 10, 15, 20, 30, 50];
/// The target rates every throttle is asked to hold.
pub const TARGET_RATES: [f64; 4] = [100.0, 1_000.0, 10_000.0, 100_000.0];

/// A small deterministic shuffle (xorshift), so rounds interleave the sizes without
/// a random-number crate and a run is reproducible.
fn shuffle<T>(items: &mut [T], seed: &mut u64) {
    for i in (1..items.len()).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        items.swap(i, (*seed % (i as u64 + 1)) as usize);
    }
}

// ---------------------------------------------------------------- the sleep sweep

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepRow {
    pub requested_ms: u64,
    /// One value per sleep, in nanoseconds.
    pub actual: MeanCi,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepData {
    pub rounds_done: usize,
    pub rows: Vec<SweepRow>,
}

// ANCHOR: sweep
/// One round of the sweep: sleeps each requested duration once, in a shuffled order,
/// and times every sleep with the monotonic clock. Returns nanoseconds, in the order
/// of `requested_ms`.
pub fn sweep_round(requested_ms: &[u64], seed: &mut u64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..requested_ms.len()).collect();
    shuffle(&mut order, seed);
    let mut actual = vec![0.0; requested_ms.len()];
    for i in order {
        let asked = Duration::from_millis(requested_ms[i]);
        let start = Instant::now();
        std::thread::sleep(asked);
        actual[i] = start.elapsed().as_nanos() as f64;
    }
    actual
}
// ANCHOR_END: sweep

/// Runs up to `rounds` rounds, stopping before one that could not finish by `stop_at`.
pub fn sleep_sweep(
    requested_ms: &[u64],
    rounds: usize,
    stop_at: Instant,
    mut on_round: impl FnMut(),
) -> SweepData {
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); requested_ms.len()];
    let round_ms: u64 = requested_ms.iter().sum();
    let mut seed = 0x9E37_79B9_7F4A_7C15;
    let mut rounds_done = 0;
    while rounds_done < rounds && Instant::now() + Duration::from_millis(round_ms * 2) < stop_at {
        for (s, v) in samples.iter_mut().zip(sweep_round(requested_ms, &mut seed)) {
            s.push(v);
        }
        rounds_done += 1;
        on_round();
    }
    let rows = requested_ms
        .iter()
        .zip(&samples)
        .filter_map(|(&ms, s)| {
            let (ci, sum) = (MeanCi::of(s)?, Summary::of(s)?);
            Some(SweepRow {
                requested_ms: ms,
                actual: ci,
                p50: sum.p50,
                p99: sum.p99,
                max: sum.max,
            })
        })
        .collect();
    SweepData { rounds_done, rows }
}

pub fn run_sweep(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let rounds = ctx.param("rounds", ctx.profile.pick(8, 50));
    let bar = ctx.progress(rounds as u64, "sleep sweep");
    let data = sleep_sweep(&SWEEP_MS, rounds, ctx.deadline(), || bar.inc(1));
    bar.finish_and_clear();
    if data.rounds_done < rounds {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "the time bound stopped the sweep after {} of {rounds} rounds",
                data.rounds_done
            ),
        );
    }
    Ok(serde_json::to_value(data)?)
}

// ------------------------------------------------- the naive loop at 1,000 ops/s

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NaiveRow {
    pub with_send: bool,
    /// Time per operation (ns): mean over iterations of `ops_per_iteration` each.
    pub per_op: MeanCi,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NaiveData {
    pub ops_per_iteration: usize,
    pub iterations_done: usize,
    pub rows: Vec<NaiveRow>,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
}

// ANCHOR: naive_bench
/// One iteration of the write-up's benchmark: `ops` rounds of (send?) + sleep(1 ms);
/// returns the time per operation in nanoseconds.
pub fn naive_iteration(op: &mut UdpOp, with_send: bool, ops: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..ops {
        if with_send {
            op.send();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed().as_nanos() as f64 / ops as f64
}
// ANCHOR_END: naive_bench

/// Alternates the two variants, iteration by iteration, until `iterations` of each
/// ran or `stop_at` is near.
pub fn naive_loop(
    iterations: usize,
    ops: usize,
    stop_at: Instant,
    mut on_iteration: impl FnMut(),
) -> anyhow::Result<NaiveData> {
    let mut op = UdpOp::new()?;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    let one = Duration::from_millis(4 * ops as u64);
    while with.len() < iterations && Instant::now() + one < stop_at {
        with.push(naive_iteration(&mut op, true, ops));
        without.push(naive_iteration(&mut op, false, ops));
        on_iteration();
    }
    let sent = op.sent;
    let received = op.finish();
    let rows = [(true, &with), (false, &without)]
        .into_iter()
        .filter_map(|(with_send, v)| {
            Some(NaiveRow {
                with_send,
                per_op: MeanCi::of(v)?,
            })
        })
        .collect();
    Ok(NaiveData {
        ops_per_iteration: ops,
        iterations_done: with.len(),
        rows,
        datagrams_sent: sent,
        datagrams_received: received,
    })
}

pub fn run_naive(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let iterations = ctx.param("iterations", ctx.profile.pick(6, 40));
    let ops = ctx.param("ops per iteration", 25);
    let bar = ctx.progress(iterations as u64, "naive loop at 1,000 ops/s");
    let data = naive_loop(iterations, ops, ctx.deadline(), || bar.inc(1))?;
    bar.finish_and_clear();
    if data.iterations_done < iterations {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "the time bound stopped the loop after {} of {iterations} iterations",
                data.iterations_done
            ),
        );
    }
    Ok(serde_json::to_value(data)?)
}

// ------------------------------------------------------ every throttle, every rate

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RateRun {
    pub pacer: Pacer,
    pub target: f64,
    pub asked: u64,
    pub ran: u64,
    /// Operations per second between the first and the last start.
    pub achieved: f64,
    /// How late the last operation started against the schedule set by the first
    /// (negative: early), in nanoseconds.
    pub drift_ns: f64,
    /// Inter-arrival times (ns) between successive starts.
    pub gaps: Option<Summary>,
    /// (gap ns, quantile) for the distribution plot.
    pub gap_curve: Vec<(f64, f64)>,
    /// CPU time of the pacing thread (operation included), ns; `None` where the OS
    /// has no per-thread CPU clock.
    pub cpu_ns: Option<f64>,
    pub wall_ns: f64,
    pub datagrams_received: u64,
    pub send_errors: u64,
}

impl RateRun {
    pub fn capped(&self) -> bool {
        self.ran < self.asked
    }
}

/// Runs one throttle at one rate for about `seconds` (rate × seconds operations),
/// giving up at twice that or at `hard_stop`, whichever comes first.
pub fn measure_rate(
    pacer: Pacer,
    rate: f64,
    seconds: f64,
    hard_stop: Instant,
) -> anyhow::Result<RateRun> {
    let period_ns = crate::throttle::period_ns(rate)?;
    let asked = ((rate * seconds).ceil() as u64).max(2);
    let mut op = UdpOp::new()?;
    let start = Instant::now();
    let stop_at = hard_stop.min(start + Duration::from_secs_f64(2.0 * seconds + 0.02));
    let cpu0 = harness::thread_cpu_time();
    let starts = {
        let mut send = || op.send();
        let mut run = Run::new(&mut send, asked as usize, stop_at);
        pacer.drive(rate, &mut run)?;
        run.starts
    };
    let cpu = harness::thread_cpu_time()
        .zip(cpu0)
        .map(|(b, a)| (b - a).as_nanos() as f64);
    let wall_ns = start.elapsed().as_nanos() as f64;
    let send_errors = op.errors;
    let received = op.finish();
    let gaps: Vec<f64> = starts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_nanos() as f64)
        .collect();
    let span = match (starts.first(), starts.last()) {
        (Some(a), Some(b)) => (*b - *a).as_nanos() as f64,
        _ => 0.0,
    };
    let n = starts.len() as u64;
    let achieved = if span > 0.0 {
        (n - 1) as f64 * 1e9 / span
    } else {
        0.0
    };
    let mut sorted = gaps.clone();
    sorted.sort_by(f64::total_cmp);
    Ok(RateRun {
        pacer,
        target: rate,
        asked,
        ran: n,
        achieved,
        drift_ns: span - n.saturating_sub(1) as f64 * period_ns,
        gaps: Summary::of(&gaps),
        gap_curve: quantile_curve(&sorted, 101),
        cpu_ns: cpu,
        wall_ns,
        datagrams_received: received,
        send_errors,
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RatesData {
    pub seconds_per_run: f64,
    pub runs: Vec<RateRun>,
}

pub fn run_rates(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let seconds = ctx.param("seconds per run", ctx.profile.pick(0.1, 1.5));
    ctx.param("rates", "100, 1,000, 10,000, 100,000 ops/s");
    let total = (TARGET_RATES.len() * Pacer::ALL.len()) as u64;
    let bar = ctx.progress(total, "throttles × target rates");
    let mut runs = Vec::new();
    'all: for rate in TARGET_RATES {
        for pacer in Pacer::ALL {
            // A run may take up to twice its planned length.
            if ctx.time_left() < Duration::from_secs_f64(2.0 * seconds + 0.05) {
                ctx.note(
                    NoteKind::Timeout,
                    format!(
                        "the time bound stopped the runs after {} of {total}; the last one that ran was at {} ops/s",
                        runs.len(),
                        harness::render::fmt_count(rate as u64)
                    ),
                );
                break 'all;
            }
            runs.push(measure_rate(pacer, rate, seconds, ctx.deadline())?);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let capped: Vec<String> = runs
        .iter()
        .filter(|r| r.capped())
        .map(|r| {
            format!(
                "{} at {}/s ({} of {})",
                r.pacer.label(),
                harness::render::fmt_count(r.target as u64),
                harness::render::fmt_count(r.ran),
                harness::render::fmt_count(r.asked)
            )
        })
        .collect();
    if !capped.is_empty() {
        ctx.note(
            NoteKind::Limit,
            format!(
                "these runs fell so far behind that they were stopped at twice the planned time, before all their operations ran: {}",
                capped.join("; ")
            ),
        );
    }
    if harness::thread_cpu_time().is_none() {
        ctx.note(
            NoteKind::Unsupported,
            "this OS has no per-thread CPU clock, so the CPU column is empty",
        );
    }
    Ok(serde_json::to_value(RatesData {
        seconds_per_run: seconds,
        runs,
    })?)
}

// ------------------------------------------------------------ coordinated omission

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OmissionData {
    pub rate: f64,
    pub stall_every: u64,
    pub stall_ns: f64,
    pub requests: u64,
    pub lost: u64,
    pub served: u64,
    pub from_send: Option<Summary>,
    pub corrected: Option<Summary>,
    pub from_intent: Option<Summary>,
    pub curves: Vec<(String, Curve)>,
}

pub const FROM_SEND: &str = "from actual send";
pub const CORRECTED: &str = "from actual send, record_correct";
pub const FROM_INTENT: &str = "from intended send";

pub fn coordinated_omission(
    rate: f64,
    requests: u64,
    stall_every: u64,
    stall: Duration,
    stop_at: Instant,
) -> anyhow::Result<OmissionData> {
    let server = StallingEcho::start(stall_every, stall)?;
    let h = omission::closed_loop_client(server.addr, rate, requests, stop_at)?;
    let served = server.stop();
    Ok(OmissionData {
        rate,
        stall_every,
        stall_ns: stall.as_nanos() as f64,
        requests: h.requests,
        lost: h.lost,
        served,
        from_send: Summary::of_histogram(&h.from_send),
        corrected: Summary::of_histogram(&h.corrected),
        from_intent: Summary::of_histogram(&h.from_intent),
        curves: vec![
            (FROM_SEND.into(), Curve::of(&h.from_send)),
            (CORRECTED.into(), Curve::of(&h.corrected)),
            (FROM_INTENT.into(), Curve::of(&h.from_intent)),
        ],
    })
}

pub fn run_omission(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let rate = ctx.param("rate (ops/s)", 1_000.0);
    let seconds = ctx.profile.pick(1.2, 10.0);
    let requests = ctx.param("requests", (rate * seconds) as u64);
    let stall_every = ctx.param("stall every", 400);
    let stall_ms = ctx.param("stall (ms)", 50);
    let stop_at = ctx.deadline() - ctx.time_left().min(Duration::from_secs(1));
    let data = coordinated_omission(
        rate,
        requests,
        stall_every,
        Duration::from_millis(stall_ms),
        stop_at,
    )?;
    if data.requests < requests {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "the time bound stopped the client after {} of {requests} requests",
                data.requests
            ),
        );
    }
    if data.lost > 0 {
        ctx.note(
            NoteKind::Info,
            format!(
                "{} requests got no answer within 2 s and are not in the latencies",
                data.lost
            ),
        );
    }
    Ok(serde_json::to_value(data)?)
}
