//! The chapter's experiments: which variants run, with which parameters per profile.

use crate::views::VIEWS;
use crate::{Outcome, Placement, Plan, Runtime, Transport, Wait, atomic_ping_pong};
use harness::{Chapter, Ctx, Experiment, NoteKind, Summary};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub const CHAPTER: Chapter = Chapter {
    name: env!("CARGO_PKG_NAME"),
    dir: env!("CARGO_MANIFEST_DIR"),
    experiments: EXPERIMENTS,
    views: VIEWS,
};

pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "variants",
        about: "the write-up's 12 variants: mpsc, TCP, UDP × std, tokio × blocking, spinning",
        bound: |p| p.pick(Duration::from_secs(20), Duration::from_secs(200)),
        run: variants,
    },
    Experiment {
        name: "gaps",
        about: "the idle gap before each message: 0, 1, 10, 100 ms; blocking, spinning, hybrid",
        bound: |p| p.pick(Duration::from_secs(20), Duration::from_secs(90)),
        run: gaps,
    },
    Experiment {
        name: "pinning",
        about: "sender and receiver unpinned, on the same CPU, on different CPUs",
        bound: |p| p.pick(Duration::from_secs(15), Duration::from_secs(60)),
        run: pinning,
    },
    Experiment {
        name: "floor",
        about: "an atomic ping-pong between two spinning threads: the least a hand-over costs",
        bound: |p| p.pick(Duration::from_secs(10), Duration::from_secs(30)),
        run: floor,
    },
];

/// One run of one variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub runtime: Runtime,
    pub transport: Transport,
    pub wait: Wait,
    pub placement: Placement,
    pub gap_ns: f64,
    pub outcome: Outcome,
    pub summary: Option<Summary>,
}

impl Run {
    pub fn label(&self) -> String {
        format!(
            "{} · {} · {}",
            self.runtime.label(),
            self.transport.label(),
            self.wait.label()
        )
    }

    pub fn cpu_per_message_ns(&self) -> Option<f64> {
        let n = self.outcome.latencies_ns.len();
        (n > 0).then_some(self.outcome.cpu_ns? / n as f64)
    }

    /// CPU time over wall time: how many cores the strategy kept busy.
    pub fn cores_busy(&self) -> Option<f64> {
        (self.outcome.wall_ns > 0.0).then_some(self.outcome.cpu_ns? / self.outcome.wall_ns)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Runs {
    pub runs: Vec<Run>,
}

struct Spec {
    runtime: Runtime,
    transport: Transport,
    wait: Wait,
    placement: Placement,
    gap: Duration,
    messages: usize,
}

/// Runs the specs in order under the experiment's deadline, with a progress bar.
fn run_specs(ctx: &mut Ctx, specs: Vec<Spec>, hybrid_spin: Duration) -> anyhow::Result<Runs> {
    let bar = ctx.progress(specs.len() as u64, "variants");
    let mut runs = Vec::new();
    for spec in specs {
        if ctx.past_deadline() {
            ctx.note(
                NoteKind::Timeout,
                format!(
                    "the time bound was reached after {} of the planned runs; the rest are missing",
                    runs.len()
                ),
            );
            break;
        }
        let plan = Plan {
            messages: spec.messages,
            gap: spec.gap,
            hybrid_spin,
            placement: spec.placement,
            deadline: ctx.deadline(),
        };
        let mut run = Run {
            runtime: spec.runtime,
            transport: spec.transport,
            wait: spec.wait,
            placement: spec.placement,
            gap_ns: spec.gap.as_nanos() as f64,
            outcome: Outcome::default(),
            summary: None,
        };
        bar.set_message(format!("{} ({})", run.label(), spec.placement.label()));
        match crate::run_variant(spec.runtime, spec.transport, spec.wait, &plan) {
            Ok(outcome) => {
                if let Some(why) = &outcome.stopped {
                    ctx.note(
                        NoteKind::Timeout,
                        format!(
                            "{} ({}) stopped after {} of {} messages: {why}",
                            run.label(),
                            spec.placement.label(),
                            outcome.latencies_ns.len(),
                            spec.messages
                        ),
                    );
                }
                run.summary = Summary::of(&outcome.latencies_ns);
                run.outcome = outcome;
            }
            Err(e) => ctx.note(
                NoteKind::Info,
                format!("{} could not run: {e:#}", run.label()),
            ),
        }
        runs.push(run);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(Runs { runs })
}

pub const RUNTIMES: [Runtime; 2] = [Runtime::Std, Runtime::Tokio];
pub const TRANSPORTS: [Transport; 3] = [Transport::Mpsc, Transport::Tcp, Transport::Udp];

fn variants(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let messages = ctx.param("messages", ctx.profile.pick(25, 99));
    let gap_ms = ctx.param("gap_ms", ctx.profile.pick(10, 100));
    let mut specs = Vec::new();
    for runtime in RUNTIMES {
        for transport in TRANSPORTS {
            for wait in [Wait::Block, Wait::Spin] {
                specs.push(Spec {
                    runtime,
                    transport,
                    wait,
                    placement: Placement::Unpinned,
                    gap: Duration::from_millis(gap_ms),
                    messages,
                });
            }
        }
    }
    Ok(serde_json::to_value(run_specs(
        ctx,
        specs,
        Duration::ZERO,
    )?)?)
}

pub const GAPS_MS: [u64; 4] = [0, 1, 10, 100];
pub const SWEPT: [Transport; 2] = [Transport::Mpsc, Transport::Udp];

fn gaps(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let messages = ctx.param("messages", ctx.profile.pick(20, 99));
    let long = ctx.param("messages_after_100ms", ctx.profile.pick(5, 40));
    let spin_us = ctx.param("hybrid_spin_us", 100);
    let mut specs = Vec::new();
    for gap in GAPS_MS {
        for transport in SWEPT {
            for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
                specs.push(Spec {
                    runtime: Runtime::Std,
                    transport,
                    wait,
                    placement: Placement::Unpinned,
                    gap: Duration::from_millis(gap),
                    messages: if gap >= 100 { long } else { messages },
                });
            }
        }
    }
    Ok(serde_json::to_value(run_specs(
        ctx,
        specs,
        Duration::from_micros(spin_us),
    )?)?)
}

pub const PLACEMENTS: [Placement; 3] =
    [Placement::Unpinned, Placement::SameCpu, Placement::OtherCpu];

fn pinning(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let messages = ctx.param("messages", ctx.profile.pick(20, 99));
    let gap_ms = ctx.param("gap_ms", ctx.profile.pick(5, 10));
    let mut specs = Vec::new();
    for placement in PLACEMENTS {
        if !crate::placement_supported(placement) {
            ctx.note(
                NoteKind::Unsupported,
                format!(
                    "“{}” needs thread pinning{}, which this system does not offer",
                    placement.label(),
                    if placement == Placement::OtherCpu {
                        " and at least two logical CPUs"
                    } else {
                        ""
                    }
                ),
            );
            continue;
        }
        for transport in SWEPT {
            for wait in [Wait::Block, Wait::Spin] {
                specs.push(Spec {
                    runtime: Runtime::Std,
                    transport,
                    wait,
                    placement,
                    gap: Duration::from_millis(gap_ms),
                    messages,
                });
            }
        }
    }
    Ok(serde_json::to_value(run_specs(
        ctx,
        specs,
        Duration::ZERO,
    )?)?)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FloorRun {
    pub placement: Placement,
    pub summary: Option<Summary>,
    /// (quantile, one-way nanoseconds), for the distribution plot.
    pub curve: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Floor {
    pub runs: Vec<FloorRun>,
}

fn floor(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let trips = ctx.param("round_trips", ctx.profile.pick(200_000, 2_000_000));
    let mut runs = Vec::new();
    let placements = [Placement::Unpinned, Placement::OtherCpu];
    let bar = ctx.progress(placements.len() as u64, "atomic ping-pong");
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        ctx.note(
            NoteKind::Unsupported,
            "two spinning threads need two logical CPUs; with one, each hand-over waits for \
             the scheduler to switch threads, so the floor is not measured",
        );
        return Ok(serde_json::to_value(Floor { runs })?);
    }
    for placement in placements {
        if !crate::placement_supported(placement) {
            ctx.note(
                NoteKind::Unsupported,
                format!("“{}” needs thread pinning", placement.label()),
            );
            continue;
        }
        let mut one_way = atomic_ping_pong(trips, placement, ctx.deadline());
        if one_way.len() < trips {
            ctx.note(
                NoteKind::Timeout,
                format!(
                    "{}: {} of {trips} round trips before the time bound",
                    placement.label(),
                    one_way.len()
                ),
            );
        }
        one_way.sort_by(f64::total_cmp);
        runs.push(FloorRun {
            placement,
            summary: Summary::of(&one_way),
            curve: harness::stats::quantile_curve(&one_way, 200),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(serde_json::to_value(Floor { runs })?)
}
