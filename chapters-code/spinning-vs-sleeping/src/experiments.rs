//! The chapter's experiments: what one round runs, with which parameters, and the one
//! value per variant each round is summarised by (the round's median latency).

use crate::floor::ROUND_TRIPS_PER_SAMPLE;
use crate::{
    Host, Idle, Outcome, Placement, Plan, Runtime, Transport, Wait, atomic_ping_pong, clock_read_ns,
};
use harness::bounds::{Limit, Params, RoundBounds};
use harness::record::twin_key;
use harness::render::fmt_count;
use harness::{Budget, Ctx, Dist, Experiment, Keyed, NoteKind, Param, Reading, ReadingKey, Unit};

use serde::{Deserialize, Serialize};
use std::time::Duration;

const MESSAGES: Param = Param::int("messages", 1, 10_000)
    .defaults(6, 10)
    .unit("per variant and round")
    .about("timed messages each variant receives in one round");
const VARIANT_MESSAGES: Param = Param::int("messages", 1, 10_000)
    .defaults(4, 10)
    .unit("per variant and round")
    .about("timed messages each variant receives in one round");
const ARM_MESSAGES: Param = Param::int("arm_messages", 1, 10_000)
    .defaults(4, 4)
    .unit("per arm and round")
    .about("timed messages of each arm beside the variants (bounded blocking, spawned tokio receivers)");
const WARMUP: Param = Param::int("warmup_messages", 0, 100)
    .defaults(1, 1)
    .unit("per variant and round")
    .about("messages sent first, with no gap and not timed, so that no timed message is the first of its channel");
const GAP_MS: Param = Param::int("gap_ms", 0, 1_000)
    .defaults(10, 100)
    .unit("ms")
    .about("how long the sender stays idle before each message");
const PATIENCE_MS: Param = Param::int("patience_ms", 10, 60_000)
    .defaults(1_000, 1_000)
    .unit("ms")
    .about("how long past its gap a message may take before it counts as lost");
const AFTER_LONG: Param = Param::int("messages_after_long_gaps", 1, 10_000)
    .defaults(3, 4)
    .unit("per variant and round")
    .about("timed messages after gaps of 10 ms and more (each costs its gap in idle time)");
const UDP_LONGEST: Param = Param::int("udp_longest_gap_ms", 10, 100)
    .defaults(10, 100)
    .unit("ms")
    .about("the longest gap the sweep runs UDP at (each message after 100 ms costs 100 ms)");
const HYBRID_SPIN_US: Param = Param::int("hybrid_spin_us", 0, 1_000_000)
    .defaults(100, 100)
    .unit("µs")
    .about("how long the hybrid receiver spins before it blocks");
const PIN_GAP_MS: Param = Param::int("gap_ms", 0, 1_000)
    .defaults(5, 10)
    .unit("ms")
    .about("how long the sender stays idle before each message");
const ROUND_TRIPS: Param = Param::int("round_trips", 100, 100_000_000)
    .defaults(100_000, 200_000)
    .unit("per placement and round")
    .about("atomic round trips timed in one round, in batches between two clock reads (a tenth more are timed one at a time, as a control)");

pub static VARIANTS: Experiment<Runs> = Experiment::new(
    "variants",
    "the write-up's 12 variants: mpsc, TCP, UDP × std, tokio × blocking, spinning; bounded-blocking and spawned-tokio arms beside them; the std channel pinned to different CPUs",
    variants,
    Runs::readings,
)
.params(&[VARIANT_MESSAGES, ARM_MESSAGES, WARMUP, GAP_MS, PATIENCE_MS])
// Quick: 9 s, as 6 rounds took 7.87 s of 8 here once the bounded arm was pinned too.
.budget(|p| p.pick(Budget::quick(9), Budget::full(237, 10)));

pub static GAPS: Experiment<Runs> = Experiment::new(
    "gaps",
    "the idle gap before each message: 0, 10 µs to 1 ms, 10 and 100 ms; blocking, spinning, hybrid",
    gaps,
    Runs::readings,
)
.params(&[
    MESSAGES,
    WARMUP,
    AFTER_LONG,
    UDP_LONGEST,
    HYBRID_SPIN_US,
    PATIENCE_MS,
])
// Quick: 10 s (7 rounds in 11.2 s at 12 s; 1.6 s a round, so 6 fit); two seconds went to
// throttles' rates and async-locks' hazards, so that each gets the 6 rounds a verdict needs.
.budget(|p| p.pick(Budget::quick(10), Budget::full(50, 10)));

pub static PINNING: Experiment<Runs> = Experiment::new(
    "pinning",
    "sender and receiver unpinned, on the same CPU, on different CPUs",
    pinning,
    Runs::readings,
)
.params(&[MESSAGES, WARMUP, PIN_GAP_MS, PATIENCE_MS])
// Quick: 3 s (10 rounds in 4 s here); a second went to async-locks' designs.
.budget(|p| p.pick(Budget::quick(3), Budget::full(25, 10)));

pub static FLOOR: Experiment<FloorRound> = Experiment::new(
    "floor",
    "an atomic ping-pong between two spinning threads: the least a hand-over costs",
    floor,
    FloorRound::readings,
)
.params(&[ROUND_TRIPS])
// Quick: 1 s; it stops once tight (9 rounds in 0.4 s here, each timing 100,000 round trips
// in batches and 10,000 one at a time per placement), and three seconds went to others.
.budget(|p| p.pick(Budget::quick(1), Budget::full(15, 10)));

/// One variant's messages in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub runtime: Runtime,
    pub transport: Transport,
    pub wait: Wait,
    pub placement: Placement,
    /// The gap in microseconds (the sweep has gaps under a millisecond).
    #[serde(default)]
    pub gap_us: u64,
    /// Which arm of the experiment this run is (an extra beside the main variants).
    #[serde(default)]
    pub arm: Arm,
    /// The A/A twin of that arm: the same code again, in the same rounds.
    #[serde(default)]
    pub twin: bool,
    /// This round's latencies, pooled with the other rounds' for distributions.
    pub latency: Dist,
    /// This round's median latency, exact: the value the round contributes.
    pub p50_ns: Option<f64>,
    pub received: usize,
    pub lost: u32,
    /// CPU time of the whole process per message received.
    pub cpu_per_message_ns: Option<f64>,
    /// CPU time of the receiving thread per message received (on tokio, of the thread
    /// that ran the receiver: the main thread for `block_on`, a worker for a spawned
    /// task; only intervals between two messages on the same thread). Includes the
    /// receiver's probe reads.
    #[serde(default)]
    pub receiver_cpu_per_message_ns: Option<f64>,
    /// The same without the probe reads: the receiving thread's CPU from the end of its
    /// reads after one message to the start of its reads after the next (its waiting),
    /// read at those two points, so nothing is subtracted; the mean over messages.
    #[serde(default)]
    pub receiver_wait_cpu_per_message_ns: Option<f64>,
    /// The receiver's own bookkeeping per message (its probe reads: the CPU it is on,
    /// its counters, the next bound), timed on its thread: the mean span.
    #[serde(default)]
    pub probe_per_message_ns: Option<f64>,
    /// The latency of the run's first message: the channel's first, with no gap,
    /// untimed in every other figure.
    #[serde(default)]
    pub first_ns: Option<f64>,
    /// Median gap as it happened: from the receiver letting the sender go on to the
    /// next message's stamp.
    #[serde(default)]
    pub gap_p50_ns: Option<f64>,
    /// CPU time over wall time: how many cores the strategy kept busy.
    pub cores_busy: Option<f64>,
    pub stopped: Option<String>,
    /// Share of the messages taken on the CPU the sender stamped them on.
    #[serde(default)]
    pub same_cpu: Option<f64>,
    /// This round's latencies split by that: same CPU, different CPUs.
    #[serde(default)]
    pub latency_same_cpu: Dist,
    #[serde(default)]
    pub latency_other_cpu: Dist,
    /// Share of the messages whose receiver was never preempted while it waited for
    /// them, and those messages' latencies.
    #[serde(default)]
    pub unpreempted: Option<f64>,
    #[serde(default)]
    pub latency_unpreempted: Dist,
    /// Median time from a message's stamp to the return of the send call (std only).
    #[serde(default)]
    pub send_p50_ns: Option<f64>,
    /// The receiving thread, per message received: context switches it asked for
    /// (it blocked), switches forced on it (preempted), and time it was runnable but
    /// waiting for a CPU.
    #[serde(default)]
    pub voluntary_per_message: Option<f64>,
    #[serde(default)]
    pub involuntary_per_message: Option<f64>,
    #[serde(default)]
    pub run_delay_per_message_ns: Option<f64>,
}

/// The arms of an experiment besides its main variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Arm {
    #[default]
    Main,
    /// The variant with no idle gap before each message.
    NoGap,
    /// The variant with a sender that busy-waits through the gap instead of sleeping.
    BusySender,
    /// A tokio receiver spawned as a task instead of run in `block_on`.
    Spawned,
}

impl Arm {
    pub fn suffix(self) -> &'static str {
        match self {
            Arm::Main => "",
            Arm::NoGap => " · no gap",
            Arm::BusySender => " · busy sender",
            Arm::Spawned => " · spawned task",
        }
    }
}

impl Run {
    fn new(spec: &Spec, outcome: &Outcome) -> Run {
        let mut sorted = outcome.latencies_ns.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let receiver = outcome
            .receiver
            .unwrap_or_default()
            .per_op(outcome.receiver_messages);
        let mut gaps = outcome.gap_ns.clone();
        gaps.sort_by(f64::total_cmp);
        let split = |same: bool| {
            Dist::from_samples(
                outcome
                    .latencies_ns
                    .iter()
                    .zip(&outcome.same_cpu)
                    .filter(|(_, s)| **s == Some(same))
                    .map(|(l, _)| *l),
            )
        };
        let placed: Vec<bool> = outcome.same_cpu.iter().flatten().copied().collect();
        let calm: Vec<bool> = outcome
            .preempted
            .iter()
            .flatten()
            .map(|p| *p == 0)
            .collect();
        let mut send = outcome.send_ns.clone();
        send.sort_by(f64::total_cmp);
        Run {
            runtime: spec.runtime,
            transport: spec.transport,
            wait: spec.wait,
            placement: spec.placement,
            gap_us: spec.gap.as_micros() as u64,
            arm: spec.arm,
            twin: spec.twin,
            latency: Dist::from_samples(sorted.iter().copied()),
            p50_ns: (n > 0).then(|| harness::stats::median_sorted(&sorted)),
            received: n,
            lost: outcome.lost,
            cpu_per_message_ns: outcome.cpu_ns.filter(|_| n > 0).map(|c| c / n as f64),
            receiver_cpu_per_message_ns: receiver.cpu_ns,
            receiver_wait_cpu_per_message_ns: (!outcome.wait_cpu_ns.is_empty()).then(|| {
                outcome.wait_cpu_ns.iter().sum::<f64>() / outcome.wait_cpu_ns.len() as f64
            }),
            probe_per_message_ns: (!outcome.probe_ns.is_empty())
                .then(|| outcome.probe_ns.iter().sum::<f64>() / outcome.probe_ns.len() as f64),
            first_ns: outcome.first_ns,
            gap_p50_ns: (!gaps.is_empty()).then(|| harness::stats::median_sorted(&gaps)),
            cores_busy: outcome
                .cpu_ns
                .filter(|_| outcome.wall_ns > 0.0)
                .map(|c| c / outcome.wall_ns),
            stopped: outcome.stopped.clone(),
            same_cpu: (!placed.is_empty())
                .then(|| placed.iter().filter(|s| **s).count() as f64 / placed.len() as f64),
            latency_same_cpu: split(true),
            latency_other_cpu: split(false),
            unpreempted: (!calm.is_empty())
                .then(|| calm.iter().filter(|c| **c).count() as f64 / calm.len() as f64),
            latency_unpreempted: Dist::from_samples(
                outcome
                    .latencies_ns
                    .iter()
                    .zip(&outcome.preempted)
                    .filter(|(_, p)| **p == Some(0))
                    .map(|(l, _)| *l),
            ),
            send_p50_ns: (!send.is_empty()).then(|| harness::stats::median_sorted(&send)),
            voluntary_per_message: receiver.voluntary,
            involuntary_per_message: receiver.involuntary,
            run_delay_per_message_ns: receiver.run_delay_ns,
        }
    }

    /// The reading this run gives: its variant, with the gap or placement where the
    /// experiment (`with`) varies those (or where a pinned arm sits among unpinned
    /// variants), its arm and whether it is the twin.
    pub fn key(&self, with: Extra) -> RunKey {
        let detail = match with {
            Extra::None if self.placement != Placement::Unpinned => {
                Detail::Placement(self.placement)
            }
            Extra::None => Detail::None,
            Extra::Gap => Detail::Gap(self.gap_us),
            Extra::Placement => Detail::Placement(self.placement),
        };
        RunKey {
            detail,
            arm: self.arm,
            twin: self.twin,
            ..RunKey::variant(self.runtime, self.transport, self.wait)
        }
    }
}

/// A gap as keys and tables name it: "10 ms", "50 µs", "0 ms".
pub fn gap_label(gap_us: u64) -> String {
    if gap_us.is_multiple_of(1_000) {
        format!("{} ms", gap_us / 1_000)
    } else {
        format!("{gap_us} µs")
    }
}

/// `std · mpsc · blocking`: a variant, as the tables and headline figures name it.
pub fn variant_label(runtime: Runtime, transport: Transport, wait: Wait) -> String {
    format!(
        "{} · {} · {}",
        runtime.label(),
        transport.label(),
        wait.label()
    )
}

/// What a run's reading is: the variant, then the gap or placement where the experiment
/// varies it, the arm and the twin. Stored as `std · mpsc · blocking`,
/// `std · mpsc · spinning · 10 ms`, `std · udp · blocking · same CPU`,
/// `std · mpsc · blocking · no gap (A/A twin)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunKey {
    pub runtime: Runtime,
    pub transport: Transport,
    pub wait: Wait,
    pub detail: Detail,
    pub arm: Arm,
    pub twin: bool,
}

/// What an experiment varies besides the variant: nothing, the gap (µs) or the placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    None,
    Gap(u64),
    Placement(Placement),
}

impl RunKey {
    /// A main variant of the variants experiment.
    pub const fn variant(runtime: Runtime, transport: Transport, wait: Wait) -> RunKey {
        RunKey {
            runtime,
            transport,
            wait,
            detail: Detail::None,
            arm: Arm::Main,
            twin: false,
        }
    }

    /// The same variant at one gap of the gaps experiment.
    pub const fn at_gap(self, gap_us: u64) -> RunKey {
        RunKey {
            detail: Detail::Gap(gap_us),
            ..self
        }
    }

    /// The same variant with one placement of the pinning experiment.
    pub const fn placed(self, placement: Placement) -> RunKey {
        RunKey {
            detail: Detail::Placement(placement),
            ..self
        }
    }

    /// The same variant's extra arm.
    pub const fn arm(self, arm: Arm) -> RunKey {
        RunKey { arm, ..self }
    }

    /// The A/A twin of this arm.
    pub const fn twin(self) -> RunKey {
        RunKey { twin: true, ..self }
    }

    /// How a table row names it: the stored key without the twin's mark.
    pub fn label(&self) -> String {
        let base = variant_label(self.runtime, self.transport, self.wait);
        let detail = match self.detail {
            Detail::None => String::new(),
            Detail::Gap(us) => format!(" · {}", gap_label(us)),
            Detail::Placement(p) => format!(" · {}", p.label()),
        };
        format!("{base}{detail}{}", self.arm.suffix())
    }
}

impl ReadingKey for RunKey {
    fn stored(&self) -> String {
        if self.twin {
            twin_key(&self.label())
        } else {
            self.label()
        }
    }
}

impl Keyed for Runs {
    type Key = RunKey;
}

/// The floor's readings: one per placement of the two spinning threads, stored as the
/// placement's name (`unpinned`, `different CPUs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloorKey(pub Placement);

impl ReadingKey for FloorKey {
    fn stored(&self) -> String {
        self.0.label().to_string()
    }
}

impl Keyed for FloorRound {
    type Key = FloorKey;
}

/// What distinguishes the variants of an experiment besides runtime, transport, wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Extra {
    None,
    Gap,
    Placement,
}

/// One round of an experiment: every variant once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Runs {
    pub extra: Extra,
    pub runs: Vec<Run>,
}

/// A round of `variants`, `gaps` or `pinning` holds at most one run per spec its
/// experiment builds (told apart by `extra`), and a run at most the timed messages its
/// parameters give (the largest of `messages`, `arm_messages` and
/// `messages_after_long_gaps` its record stores), and loses at most those and the
/// warm-up messages.
impl RoundBounds for Runs {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        let specs = match self.extra {
            // 12 variants, 4 bounded, 6 spawned, the gap-less arm and its twin, 6 pinned.
            Extra::None => Limit::new(30, "30 specs of the variants experiment"),
            Extra::Gap => Limit::count(
                GAPS_US.len() * SWEPT.len() * 3
                    + GAPS_US.iter().filter(|g| **g < BOUNDED_BELOW_US).count()
                    + BUSY_SENDER_GAPS_MS.len(),
                "specs of the gap sweep",
            ),
            Extra::Placement => Limit::count(
                PLACEMENTS.len() * SWEPT.len() * 2,
                "specs of the pinning experiment",
            ),
        };
        specs.len("runs", "runs", &self.runs)?;
        let timed = [&ARM_MESSAGES, &AFTER_LONG]
            .into_iter()
            .filter_map(|q| p.stored(q))
            .fold(p.limit(&MESSAGES), Limit::max);
        let sent = timed.clone().plus(p.limit(&WARMUP));
        for r in &self.runs {
            let what = format!("the run {}", r.key(self.extra).stored());
            timed.check(&what, "messages received", r.received as u64)?;
            sent.check(&what, "lost messages", u64::from(r.lost))?;
            for (field, d) in [
                ("latency", &r.latency),
                ("same-CPU latency", &r.latency_same_cpu),
                ("other-CPU latency", &r.latency_other_cpu),
                ("unpreempted latency", &r.latency_unpreempted),
            ] {
                timed.dist(&format!("{what}: its {field}"), d)?;
            }
        }
        Ok(())
    }
}

impl Runs {
    /// One value per variant: the round's median latency.
    fn readings(&self) -> Vec<Reading> {
        self.runs
            .iter()
            .filter_map(|r| Some(Reading::of(&r.key(self.extra), Unit::Nanos, r.p50_ns?)))
            .collect()
    }

    /// This round's run of one reading.
    pub fn find(&self, key: &RunKey) -> Option<&Run> {
        self.runs.iter().find(|r| r.key(self.extra) == *key)
    }

    /// The readings of this round's runs, in the order they are listed.
    pub fn keys(&self) -> impl Iterator<Item = RunKey> + '_ {
        self.runs.iter().map(|r| r.key(self.extra))
    }
}

#[derive(Debug, Clone, Copy)]
struct Spec {
    runtime: Runtime,
    transport: Transport,
    wait: Wait,
    placement: Placement,
    gap: Duration,
    messages: usize,
    arm: Arm,
    twin: bool,
}

impl Spec {
    fn new(
        runtime: Runtime,
        transport: Transport,
        wait: Wait,
        gap: Duration,
        messages: usize,
    ) -> Spec {
        Spec {
            runtime,
            transport,
            wait,
            placement: Placement::Unpinned,
            gap,
            messages,
            arm: Arm::Main,
            twin: false,
        }
    }

    fn arm(self, arm: Arm) -> Spec {
        Spec { arm, ..self }
    }

    fn host(&self) -> Host {
        if self.arm == Arm::Spawned {
            Host::Spawned
        } else {
            Host::BlockOn
        }
    }

    /// The A/A twin of this spec: the same code, its reading key marked as the twin's.
    fn twin(self) -> Spec {
        Spec { twin: true, ..self }
    }
}

/// Runs the specs of one round, in the round's rotated order, under its deadline.
/// Runs come back in the specs' own order, so every round's data reads alike.
fn run_round(ctx: &mut Ctx, specs: &[Spec], extra: Extra, hybrid_spin: Duration) -> Runs {
    let patience = Duration::from_millis(ctx.int(&PATIENCE_MS));
    let warmup = ctx.count(&WARMUP);
    let order: Vec<usize> = ctx.rotated(&(0..specs.len()).collect::<Vec<_>>());
    let mut runs: Vec<Option<Run>> = vec![None; specs.len()];
    for i in order {
        let spec = &specs[i];
        if ctx.past_deadline() {
            ctx.note(
                NoteKind::Timeout,
                "the time bound was reached before every variant of a round had run; the missing ones have fewer rounds",
            );
            break;
        }
        let plan = Plan {
            messages: spec.messages,
            warmup,
            gap: if spec.arm == Arm::NoGap {
                Duration::ZERO
            } else {
                spec.gap
            },
            sender: if spec.arm == Arm::BusySender {
                Idle::Spin
            } else {
                Idle::Sleep
            },
            hybrid_spin,
            placement: spec.placement,
            patience,
            deadline: ctx.deadline(),
        };
        let label = variant_label(spec.runtime, spec.transport, spec.wait);
        match crate::run_variant(spec.runtime, spec.transport, spec.wait, spec.host(), &plan) {
            Ok(outcome) => {
                if let Some(why) = &outcome.stopped {
                    ctx.note(
                        NoteKind::Timeout,
                        format!("{label} ({}): {why}", spec.placement.label()),
                    );
                }
                if outcome.lost > 0 {
                    ctx.note(
                        NoteKind::Info,
                        format!(
                            "{label}: some messages did not arrive within {} ms past their gap and were counted as lost; the receiver went on without them",
                            patience.as_millis()
                        ),
                    );
                }
                runs[i] = Some(Run::new(spec, &outcome));
            }
            Err(e) => ctx.note(NoteKind::Info, format!("{label} could not run: {e:#}")),
        }
    }
    Runs {
        extra,
        runs: runs.into_iter().flatten().collect(),
    }
}

pub const RUNTIMES: [Runtime; 2] = [Runtime::Std, Runtime::Tokio];
pub const TRANSPORTS: [Transport; 3] = [Transport::Mpsc, Transport::Tcp, Transport::Udp];

fn variants(ctx: &mut Ctx) -> anyhow::Result<Runs> {
    let messages = ctx.count(&VARIANT_MESSAGES);
    let gap = Duration::from_millis(ctx.int(&GAP_MS));
    let mut specs = Vec::new();
    for runtime in RUNTIMES {
        for transport in TRANSPORTS {
            for wait in [Wait::Block, Wait::Spin] {
                specs.push(Spec::new(runtime, transport, wait, gap, messages));
            }
        }
    }
    // The bounded blocking receive beside the write-up's unbounded one: std's three
    // transports and tokio's channel. The arms time fewer messages in the full profile
    // than the write-up's variants, so that ten arms do not double its time.
    let arm = ctx.count(&ARM_MESSAGES);
    for transport in TRANSPORTS {
        specs.push(Spec::new(
            Runtime::Std,
            transport,
            Wait::BlockBounded,
            gap,
            arm,
        ));
    }
    specs.push(Spec::new(
        Runtime::Tokio,
        Transport::Mpsc,
        Wait::BlockBounded,
        gap,
        arm,
    ));
    // Each tokio receiver again as a spawned task, on a worker, instead of in
    // `block_on` beside the workers.
    for transport in TRANSPORTS {
        for wait in [Wait::Block, Wait::Spin] {
            specs.push(Spec::new(Runtime::Tokio, transport, wait, gap, arm).arm(Arm::Spawned));
        }
    }
    // Two extra arms, rotated with the others: the spinning std channel with no gap
    // (what the gap adds, for the answer) and its A/A twin. Neither has idle time, so
    // together they cost a fraction of a percent of a round.
    let no_gap =
        Spec::new(Runtime::Std, Transport::Mpsc, Wait::Spin, gap, messages).arm(Arm::NoGap);
    specs.push(no_gap);
    specs.push(no_gap.twin());
    // The std channel again with sender and receiver pinned each to a CPU of its own,
    // blocking and spinning, in the same rounds: spin against block within one
    // placement. Unpinned, some rounds put the receiver on the sender's CPU and others
    // not, so an unpinned figure mixes two placements; and a spinner on the sender's
    // CPU starves it, so different CPUs is the placement a spinner is meant for.
    // The back-to-back arm is pinned the same way, so that the gap's effect is judged
    // within one placement; on the sender's own CPU too, as a named arm beside the
    // spinning channel after the gap on that CPU.
    if crate::placement_supported(Placement::OtherCpu) {
        for wait in [Wait::Block, Wait::Spin] {
            specs.push(Spec {
                placement: Placement::OtherCpu,
                ..Spec::new(Runtime::Std, Transport::Mpsc, wait, gap, messages)
            });
        }
        // The bounded blocking channel on different CPUs too: unpinned, the bounded and
        // the unbounded arm can land on different placements in one round.
        specs.push(Spec {
            placement: Placement::OtherCpu,
            ..Spec::new(Runtime::Std, Transport::Mpsc, Wait::BlockBounded, gap, arm)
        });
        for placement in [Placement::OtherCpu, Placement::SameCpu] {
            let spin = Spec {
                placement,
                ..Spec::new(Runtime::Std, Transport::Mpsc, Wait::Spin, gap, messages)
            };
            specs.push(spin.arm(Arm::NoGap));
            if placement == Placement::SameCpu {
                specs.push(spin);
            }
        }
    } else {
        ctx.note(
            NoteKind::Unsupported,
            "the pinned std channel (different CPUs) needs thread pinning and at least two \
             logical CPUs, which this system does not offer; only the unpinned figures, \
             which mix placements, are measured",
        );
    }
    Ok(run_round(ctx, &specs, Extra::None, Duration::ZERO))
}

/// The gaps of the sweep, in microseconds: none; 10 µs to 1 ms, around the hybrid's
/// spin budget (100 µs by default); then 10 and 100 ms.
pub const GAPS_US: [u64; 9] = [0, 10, 50, 100, 200, 500, 1_000, 10_000, 100_000];
pub const SWEPT: [Transport; 2] = [Transport::Mpsc, Transport::Udp];

/// Gaps from here on get fewer timed messages (`messages_after_long_gaps`).
pub const LONG_GAP_US: u64 = 10_000;

/// The gaps after which the sweep also runs a busy-waiting sender beside the spinning
/// std channel: is it the sender's sleep, or the time that passed?
pub const BUSY_SENDER_GAPS_MS: [u64; 2] = [10, 100];

/// The bounded blocking receive on the std channel runs at every gap but the
/// longest (where each message costs 100 ms).
pub const BOUNDED_BELOW_US: u64 = 100_000;

fn gaps(ctx: &mut Ctx) -> anyhow::Result<Runs> {
    let messages = ctx.count(&MESSAGES);
    let long = ctx.count(&AFTER_LONG);
    let spin = Duration::from_micros(ctx.int(&HYBRID_SPIN_US));
    let udp_longest = ctx.int(&UDP_LONGEST) * 1_000;
    let mut specs = Vec::new();
    for gap in GAPS_US {
        let n = if gap >= LONG_GAP_US { long } else { messages };
        let gap_d = Duration::from_micros(gap);
        for transport in SWEPT {
            if transport == Transport::Udp && gap > udp_longest {
                continue;
            }
            for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
                specs.push(Spec::new(Runtime::Std, transport, wait, gap_d, n));
            }
        }
        if gap < BOUNDED_BELOW_US {
            specs.push(Spec::new(
                Runtime::Std,
                Transport::Mpsc,
                Wait::BlockBounded,
                gap_d,
                n,
            ));
        }
        if BUSY_SENDER_GAPS_MS.iter().any(|g| g * 1_000 == gap) {
            let chan = Spec::new(Runtime::Std, Transport::Mpsc, Wait::Spin, gap_d, n);
            specs.push(chan.arm(Arm::BusySender));
        }
    }
    Ok(run_round(ctx, &specs, Extra::Gap, spin))
}

pub const PLACEMENTS: [Placement; 3] =
    [Placement::Unpinned, Placement::SameCpu, Placement::OtherCpu];

fn pinning(ctx: &mut Ctx) -> anyhow::Result<Runs> {
    let messages = ctx.count(&MESSAGES);
    let gap = Duration::from_millis(ctx.int(&PIN_GAP_MS));
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
                    placement,
                    ..Spec::new(Runtime::Std, transport, wait, gap, messages)
                });
            }
        }
    }
    Ok(run_round(ctx, &specs, Extra::Placement, Duration::ZERO))
}

/// One placement of the atomic ping-pong in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FloorRun {
    pub placement: Placement,
    /// One-way times of this round, one per sample (a batch of round trips, see
    /// [`FloorRound::round_trips_per_sample`]), pooled for the distribution.
    pub one_way: Dist,
    /// This round's exact median one-way time.
    pub p50_ns: Option<f64>,
    /// The same placement in the same round timed one round trip at a time (two clock
    /// reads around each): the median one-way time, which holds the reads' own cost.
    #[serde(default)]
    pub one_by_one_p50_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FloorRound {
    pub runs: Vec<FloorRun>,
    /// What one `Instant::now()` cost in this round.
    #[serde(default)]
    pub clock_read_ns: Option<f64>,
    /// Round trips timed between two clock reads in each sample of `one_way`; absent
    /// in records made before the batches, which timed one at a time.
    #[serde(default)]
    pub round_trips_per_sample: Option<u64>,
    /// What Linux reports about the two CPUs of *different CPUs*: one core or two, and
    /// the caches they share (absent elsewhere, and in older records).
    #[serde(default)]
    pub pair: Option<crate::probe::PairTopology>,
}

impl FloorRound {
    /// Round trips per sample of `one_way` (1 in records older than the batches).
    pub fn per_sample(&self) -> u64 {
        self.round_trips_per_sample.unwrap_or(1).max(1)
    }
}

/// A floor round holds at most one run per placement, each of at most `round_trips`
/// round trips, so at most `round_trips` ÷ the round trips per sample one-way times.
impl RoundBounds for FloorRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        Limit::count(FLOOR_PLACEMENTS.len(), "placements").len("runs", "runs", &self.runs)?;
        let trips = p.limit(&ROUND_TRIPS);
        let per = self.per_sample();
        let samples = match per {
            1 => trips,
            _ => Limit::new(
                trips.n / per,
                format!("{} ÷ {} round trips a sample", trips.why, fmt_count(per)),
            ),
        };
        for r in &self.runs {
            samples.dist(&format!("the run {}", r.placement.label()), &r.one_way)?;
        }
        if let Some(t) = &self.pair {
            let levels = Limit::count(crate::probe::MOST_CACHE_LEVELS, "cache levels");
            levels.len("the pinned pair", "shared cache levels", &t.shared_caches)?;
        }
        Ok(())
    }
}

impl FloorRound {
    fn readings(&self) -> Vec<Reading> {
        self.runs
            .iter()
            .filter_map(|r| Some(Reading::of(&FloorKey(r.placement), Unit::Nanos, r.p50_ns?)))
            .collect()
    }
}

pub const FLOOR_PLACEMENTS: [Placement; 2] = [Placement::Unpinned, Placement::OtherCpu];

/// The share of a round's round trips that the one-at-a-time control times again.
const ONE_BY_ONE_SHARE: usize = 10;

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| harness::stats::median_sorted(&v))
}

fn floor(ctx: &mut Ctx) -> anyhow::Result<FloorRound> {
    let trips = ctx.count(&ROUND_TRIPS);
    let per_sample = ROUND_TRIPS_PER_SAMPLE.min(trips);
    let mut runs = Vec::new();
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        ctx.note(
            NoteKind::Unsupported,
            "two spinning threads need two logical CPUs; with one, each hand-over waits for \
             the scheduler to switch threads, so the floor is not measured",
        );
        return Ok(FloorRound {
            runs,
            clock_read_ns: None,
            round_trips_per_sample: None,
            pair: None,
        });
    }
    for placement in ctx.rotated(&FLOOR_PLACEMENTS) {
        if !crate::placement_supported(placement) {
            ctx.note(
                NoteKind::Unsupported,
                format!("“{}” needs thread pinning", placement.label()),
            );
            continue;
        }
        // The control first or last, alternating by round, so neither goes first always.
        let one_by_one =
            || atomic_ping_pong(trips / ONE_BY_ONE_SHARE, 1, placement, ctx.deadline());
        let control_first = ctx.rotated(&[true, false])[0];
        let early = control_first.then(one_by_one);
        let one_way = atomic_ping_pong(trips, per_sample, placement, ctx.deadline());
        let control = early.unwrap_or_else(one_by_one);
        if one_way.len() < trips / per_sample {
            ctx.note(
                NoteKind::Timeout,
                format!(
                    "{}: the time bound stopped a round after {} of its {} samples of {} round trips",
                    placement.label(),
                    one_way.len(),
                    trips / per_sample,
                    per_sample
                ),
            );
        }
        runs.push(FloorRun {
            placement,
            p50_ns: median(one_way.clone()),
            one_way: Dist::from_samples(one_way),
            one_by_one_p50_ns: median(control),
        });
    }
    runs.sort_by_key(|r| FLOOR_PLACEMENTS.iter().position(|p| *p == r.placement));
    Ok(FloorRound {
        runs,
        clock_read_ns: Some(clock_read_ns()),
        round_trips_per_sample: Some(per_sample as u64),
        pair: crate::placement_supported(Placement::OtherCpu)
            .then(crate::probe::pinned_pair_topology)
            .flatten(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strings records hold, pinned: a typed key must store what the stored results
    /// were found by before it existed.
    #[test]
    fn typed_keys_store_the_strings_records_hold() {
        let stored = |k: &dyn ReadingKey| k.stored();
        let chan = RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Spin);
        assert_eq!(stored(&chan), "std · mpsc · spinning");
        assert_eq!(
            stored(&chan.arm(Arm::NoGap).twin()),
            "std · mpsc · spinning · no gap (A/A twin)"
        );
        assert_eq!(
            stored(&RunKey::variant(Runtime::Tokio, Transport::Tcp, Wait::Block).arm(Arm::Spawned)),
            "tokio · tcp · blocking · spawned task"
        );
        assert_eq!(
            stored(&RunKey::variant(
                Runtime::Std,
                Transport::Udp,
                Wait::BlockBounded
            )),
            "std · udp · bounded blocking"
        );
        assert_eq!(stored(&chan.at_gap(10)), "std · mpsc · spinning · 10 µs");
        assert_eq!(
            stored(&chan.at_gap(100_000).arm(Arm::BusySender)),
            "std · mpsc · spinning · 100 ms · busy sender"
        );
        assert_eq!(
            stored(
                &RunKey::variant(Runtime::Std, Transport::Mpsc, Wait::Block)
                    .placed(Placement::Unpinned)
            ),
            "std · mpsc · blocking · unpinned"
        );
        assert_eq!(stored(&FloorKey(Placement::OtherCpu)), "different CPUs");
        // A pinned arm among the unpinned variants names its placement.
        assert_eq!(
            stored(&chan.placed(Placement::OtherCpu)),
            "std · mpsc · spinning · different CPUs"
        );
        // The back-to-back arm pinned, beside the gap arm on the same placement.
        assert_eq!(
            stored(&chan.placed(Placement::SameCpu).arm(Arm::NoGap)),
            "std · mpsc · spinning · same CPU · no gap"
        );
        // The table's name for a twin is its original's.
        assert_eq!(chan.twin().label(), chan.label());
    }
}
