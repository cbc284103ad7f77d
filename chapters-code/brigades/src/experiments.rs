//! The chapter's experiments: what one round runs, with which parameters, and the one
//! value per variant each round is summarised by.
//!
//! Every round gets a share of its experiment's time budget (the budget over the
//! planned rounds) and shares it out among its brigades by their expected cost; a
//! brigade whose share runs out keeps the laps it has, and a note says so. So a slow
//! machine gets fewer laps, never a run that overshoots its budget.

use crate::os::{self, Usage};
use crate::{Brigade, Caps, Kind, Laps, MIN_MEMBERS, Refused, Stop, measure};
use harness::bounds::{Limit, Params, RoundBounds};
use harness::record::twin_key;
use harness::render::fmt_count;
use harness::unit::grouped;
use harness::{Budget, Ctx, Dist, Experiment, Keyed, NoteKind, Param, Reading, ReadingKey, Unit};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------
// parameters

const TASKS: Param = Param::int("tasks", 2, 100_000)
    .defaults(500, 500)
    .unit("members per brigade")
    .about("threads or tasks in every brigade (the write-up: 500)");
const LAPS: Param = Param::int("laps", 1, 1_000_000)
    .defaults(10, 1_000)
    .unit("per brigade and round")
    .about("timed laps of each brigade in one round (the write-up: 10,000 in all)");
const BASELINE_LAPS: Param = Param::int("baseline_laps", 1, 1_000_000)
    .defaults(5, 100)
    .unit("per brigade and round")
    .about("timed laps of the two baselines (threads pinned to one CPU; one thread doing all the I/O) in one round");
const WARMUP: Param = Param::int("warmup", 0, 100_000)
    .defaults(2, 20)
    .unit("laps")
    .about("untimed laps before each brigade's timed ones");

const HOPS: Param = Param::int("hops_per_point", 100, 100_000_000)
    .defaults(1_000, 5_000)
    .unit("hops")
    .about("hops timed at each size of the sweep (laps = hops ÷ size, at least 3)");
const MAX_THREADS: Param = Param::int("max_threads", 1_000, 1_000_000)
    .defaults(1_000, 3_000)
    .unit("members")
    .about("largest thread and socket brigade of the sweep (sizes 10, 100, 1,000, …: at least three for a memory slope)");
const MAX_TASKS: Param = Param::int("max_tasks", 1_000, 10_000_000)
    .defaults(3_000, 100_000)
    .unit("members")
    .about("largest channel and in-memory pipe brigade of the sweep (sizes 10, 100, 1,000, …: at least three for a memory slope)");

const PROBE_THREADS: Param = Param::int("threads", 2, 10_000_000)
    .defaults(2_000, 1_000_000)
    .unit("members")
    .about("the thread brigade asks for this many (the full profile: until a limit says no)");
const PROBE_TASKS: Param = Param::int("async_tasks", 2, 100_000_000)
    .defaults(50_000, 1_000_000)
    .unit("members")
    .about("the async brigade (in-memory pipes) asks for this many (the write-up's memory figures: 50,000)");
const PROBE_LAPS: Param = Param::int("probe_laps", 1, 1_000)
    .defaults(2, 1)
    .unit("per brigade and round")
    .about("timed laps through each of the two largest brigades");

const SPAWN_THREADS: Param = Param::int("threads_per_batch", 1, 100_000)
    .defaults(200, 1_000)
    .unit("threads")
    .about("threads started (and joined) in one batch");
const SPAWN_TASKS: Param = Param::int("tasks_per_batch", 1, 10_000_000)
    .defaults(10_000, 100_000)
    .unit("tasks")
    .about("tokio tasks started (and awaited) in one batch");

// ---------------------------------------------------------------------------------
// experiments

pub static VARIANTS: Experiment<VariantsRound> = Experiment::new(
    "variants",
    "every brigade side by side: the time per hop, switches and CPU",
    variants,
    VariantsRound::readings,
)
.params(&[
    TASKS,
    LAPS,
    BASELINE_LAPS,
    WARMUP,
    SPAWN_THREADS,
    SPAWN_TASKS,
])
.budget(|p| p.pick(Budget::quick(8), Budget::full(142, 10)));

pub static SWEEP: Experiment<SweepRound> = Experiment::new(
    "sweep",
    "the time per hop and the resident memory per member against the brigade's size",
    sweep,
    SweepRound::readings,
)
.params(&[HOPS, MAX_THREADS, MAX_TASKS])
// Quick: 5 s (5 rounds of about 0.7 s in 3.5 s at 4 s; a verdict needs 6).
.budget(|p| p.pick(Budget::quick(5), Budget::full(24, 10)));

pub static LIMITS: Experiment<LimitsRound> = Experiment::new(
    "limits",
    "the largest thread brigade and async brigade this machine allows, up to the sizes asked for",
    limits,
    LimitsRound::readings,
)
.params(&[PROBE_THREADS, PROBE_TASKS, PROBE_LAPS])
// Quick: 3 s, a second a round for its 3 rounds (`round_end`): at 1 s a round had 0.3 s,
// and the 2,000-thread probe left the task probe 1 ms, so builds stopped at the round's
// time bound, not at a limit. Its rows are counts and figures, with no verdict.
.budget(|p| p.pick(Budget::quick(3).rounds(3, 40), Budget::full(33, 10)));

// ---------------------------------------------------------------------------------
// shared

/// When this round must be done: its part of the experiment's budget (the budget
/// over the planned rounds, less what starting a process and tearing brigades down
/// take), and never past the hard deadline.
fn round_end<R>(ctx: &Ctx, exp: &Experiment<R>) -> Instant {
    let b = (exp.budget)(ctx.profile);
    let each = b.time / b.min_rounds.max(1);
    let share = each
        .mul_f64(0.9)
        .max(each.saturating_sub(Duration::from_millis(300)));
    (Instant::now() + share).min(ctx.deadline())
}

/// What a brigade's build stopping short says to the reader.
fn note_stop(ctx: &mut Ctx, what: &str, stop: &Stop) {
    if stop.by_time() {
        ctx.note(
            NoteKind::Timeout,
            format!(
                "{what}: in some rounds the build reached the round's time bound before all \
                 {} members were built; those rounds measured the members that were.",
                fmt_count(stop.wanted as u64)
            ),
        );
        return;
    }
    ctx.note(
        NoteKind::Limit,
        format!(
            "{what}: asked for {} members, built {}; stopped by {}.",
            fmt_count(stop.wanted as u64),
            fmt_count(stop.built as u64),
            stop.limit
        ),
    );
}

/// What a brigade that could not be measured says to the reader.
fn note_refused(ctx: &mut Ctx, what: &str, r: &Refused) {
    match r {
        Refused::Limit(s) => ctx.note(
            if s.by_time() {
                NoteKind::Timeout
            } else {
                NoteKind::Limit
            },
            format!(
                "{what}: asked for {} members, {} left {}; a brigade needs at least \
                 {MIN_MEMBERS}, so this one was not measured.",
                fmt_count(s.wanted as u64),
                s.limit,
                fmt_count(s.built as u64),
            ),
        ),
        Refused::Unsupported(why) => ctx.note(NoteKind::Unsupported, format!("{what}: {why}.")),
        Refused::Failed(e) => ctx.note(NoteKind::Info, format!("{what} failed: {e}.")),
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| harness::stats::median_sorted(&v))
}

// ---------------------------------------------------------------------------------
// variants

/// The brigades of the variants experiment, in the order the tables list them.
pub const VARIANT_KINDS: [Kind; 14] = [
    Kind::Thread,
    Kind::ThreadOneCpu,
    Kind::AsyncCurrentSocket,
    Kind::AsyncMultiSocket,
    Kind::AsyncSpreadUnpinned,
    Kind::AsyncSpreadOneCpu,
    Kind::AsyncSpreadSocket,
    Kind::AsyncCurrentChannel,
    Kind::AsyncMultiChannel,
    Kind::AsyncCurrentSocketInTask,
    Kind::AsyncMultiSocketInTask,
    Kind::AsyncCurrentChannelInTask,
    Kind::AsyncMultiChannelInTask,
    Kind::OneThread,
];

/// One arm of the variants experiment: a brigade, or its A/A twin (the same code run
/// again as a separate arm in the same rounds, to check the verdict rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm {
    pub kind: Kind,
    pub twin: bool,
}

const fn arm(kind: Kind) -> Arm {
    Arm { kind, twin: false }
}

/// Every arm of a variants round: the brigades, and a twin of the cheapest (the
/// current-thread channel brigade, about a tenth of a microsecond a hop).
pub const VARIANT_ARMS: [Arm; 15] = [
    arm(Kind::Thread),
    arm(Kind::ThreadOneCpu),
    arm(Kind::AsyncCurrentSocket),
    arm(Kind::AsyncMultiSocket),
    arm(Kind::AsyncSpreadUnpinned),
    arm(Kind::AsyncSpreadOneCpu),
    arm(Kind::AsyncSpreadSocket),
    arm(Kind::AsyncCurrentChannel),
    arm(Kind::AsyncMultiChannel),
    arm(Kind::AsyncCurrentSocketInTask),
    arm(Kind::AsyncMultiSocketInTask),
    arm(Kind::AsyncCurrentChannelInTask),
    arm(Kind::AsyncMultiChannelInTask),
    arm(Kind::OneThread),
    Arm {
        kind: Kind::AsyncCurrentChannel,
        twin: true,
    },
];

/// The readings of the variants experiment, by what they are: each arm's time per hop,
/// and each way of starting a thread or task. Stored as the brigade's key (with
/// [`harness::AA_TWIN`] for the twin) or the spawn's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantsKey {
    Arm(Arm),
    Spawn(Spawned),
}

impl VariantsKey {
    /// A brigade's own arm (not its twin): the time per hop.
    pub const fn hop(kind: Kind) -> VariantsKey {
        VariantsKey::Arm(arm(kind))
    }
}

impl ReadingKey for VariantsKey {
    fn stored(&self) -> String {
        match *self {
            VariantsKey::Arm(Arm { kind, twin: false }) => kind.key().to_string(),
            VariantsKey::Arm(Arm { kind, twin: true }) => twin_key(kind.key()),
            VariantsKey::Spawn(what) => what.key().to_string(),
        }
    }
}

impl Keyed for VariantsRound {
    type Key = VariantsKey;
}

/// Roughly what one hop costs on a small virtual machine, in nanoseconds: only to
/// share a round's time out among its brigades (a slower machine gets fewer laps).
fn est_hop_ns(kind: Kind) -> f64 {
    match kind {
        Kind::Thread => 16_000.0,
        Kind::ThreadOneCpu => 12_000.0,
        Kind::AsyncCurrentSocket | Kind::AsyncCurrentSocketInTask => 4_200.0,
        Kind::AsyncMultiSocket | Kind::AsyncMultiSocketInTask => 4_700.0,
        Kind::AsyncSpreadSocket => 30_000.0,
        Kind::AsyncSpreadOneCpu | Kind::AsyncSpreadUnpinned => 9_000.0,
        Kind::OneThread => 1_900.0,
        Kind::AsyncCurrentChannel | Kind::AsyncCurrentChannelInTask => 110.0,
        Kind::AsyncMultiChannel | Kind::AsyncMultiChannelInTask => 250.0,
        Kind::AsyncCurrentPipe => 130.0,
    }
}

/// Roughly what building, and tearing down, one member costs, in nanoseconds.
fn est_build_ns(kind: Kind) -> f64 {
    match kind {
        Kind::Thread | Kind::ThreadOneCpu => 90_000.0,
        Kind::AsyncCurrentSocket
        | Kind::AsyncMultiSocket
        | Kind::AsyncCurrentSocketInTask
        | Kind::AsyncMultiSocketInTask
        | Kind::AsyncSpreadSocket
        | Kind::AsyncSpreadOneCpu
        | Kind::AsyncSpreadUnpinned => 25_000.0,
        Kind::OneThread => 10_000.0,
        Kind::AsyncCurrentChannel
        | Kind::AsyncMultiChannel
        | Kind::AsyncCurrentChannelInTask
        | Kind::AsyncMultiChannelInTask
        | Kind::AsyncCurrentPipe => 3_000.0,
    }
}

/// What starting and stopping one brigade costs besides its members (a runtime, the
/// driver's first lap), in nanoseconds.
const EST_FIXED_NS: f64 = 2e6;

/// No brigade gets less than this of a round, however cheap it is expected to be.
const MIN_SHARE: Duration = Duration::from_millis(20);

/// Laps the sweep times at one size: `hops` hops, at least 3 and at most 1,000 laps.
fn sweep_laps(hops: usize, tasks: usize) -> usize {
    (hops / tasks.max(1)).clamp(3, 1_000)
}

/// One brigade's laps in one round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    pub kind: Kind,
    /// An A/A twin: the same brigade again, kept out of the chapter's tables.
    #[serde(default)]
    pub twin: bool,
    /// Members it had (fewer than asked for only where a limit said so).
    pub tasks: usize,
    /// Timed laps.
    pub laps: usize,
    /// Every timed lap divided by the members, pooled with other rounds for tails.
    pub hop: Dist,
    /// This round's median lap ÷ members: the value the round contributes.
    pub hop_p50_ns: f64,
    /// This round's mean lap and the standard deviation of its laps, the two figures
    /// the write-up printed.
    pub lap_mean_ns: f64,
    pub lap_stddev_ns: f64,
    /// Resource usage of the whole process per hop, over the timed laps.
    pub per_hop: Option<Usage>,
    /// CPU time over wall time of the timed laps: how many CPUs were kept busy.
    pub cores_busy: Option<f64>,
    /// Resident memory the brigade added (once its laps had run) ÷ its members.
    #[serde(default)]
    pub resident_per_member: Option<f64>,
    /// The first lap through the fresh brigade ÷ its members (untimed warm-up laps
    /// keep it out of `hop_p50_ns`).
    #[serde(default)]
    pub first_hop_ns: Option<f64>,
    /// Building the brigade ÷ its members: timed apart, before the first lap.
    #[serde(default)]
    pub build_per_member_ns: Option<f64>,
    /// A multi-thread runtime's workers: the time each was busy over the timed laps
    /// (tokio's `worker_total_busy_duration`), by worker index, in nanoseconds. Read
    /// while every worker was parked, so none lags its work (`laps.rs`, `Probes`);
    /// `None` where they did not all park.
    #[serde(default)]
    pub worker_busy_ns: Option<Vec<f64>>,
    /// A multi-thread runtime's workers: how many times each parked over the timed
    /// laps (tokio's `worker_park_count`), by worker index. A park ends in a wake-up.
    #[serde(default)]
    pub worker_parks: Option<Vec<f64>>,
}

impl Variant {
    fn new(a: Arm, r: &Laps) -> Option<Variant> {
        let kind = a.kind;
        let n = r.tasks.max(1) as f64;
        let hop_p50_ns = median(r.ns.clone())? / n;
        let w: harness::Welford = r.ns.iter().copied().collect();
        let wall: f64 = r.ns.iter().sum();
        let hops = r.ns.len() as f64 * n;
        Some(Variant {
            kind,
            twin: a.twin,
            tasks: r.tasks,
            laps: r.ns.len(),
            hop: Dist::from_samples(r.ns.iter().map(|x| x / n)),
            hop_p50_ns,
            lap_mean_ns: w.mean(),
            lap_stddev_ns: w.stddev(),
            per_hop: r.usage.map(|u| u.per(hops)),
            cores_busy: r.usage.filter(|_| wall > 0.0).map(|u| u.cpu_ns / wall),
            resident_per_member: r.resident_added.map(|b| b / n),
            first_hop_ns: r.first_ns.map(|x| x / n),
            build_per_member_ns: r.build_ns.map(|x| x / n),
            worker_busy_ns: r.worker_busy_ns.clone(),
            worker_parks: r.worker_parks.clone(),
        })
    }

    /// The busy time of the second-busiest worker over the timed laps, as a share of
    /// the laps' wall time: how much of the chain a second worker ran. `None` without
    /// worker readings (a current-thread runtime, threads) or with one worker.
    pub fn second_worker_share(&self) -> Option<f64> {
        let mut busy = self.worker_busy_ns.clone()?;
        busy.sort_by(|a, b| b.total_cmp(a));
        let wall = self.lap_mean_ns * self.laps as f64;
        (wall > 0.0).then_some(*busy.get(1)? / wall)
    }

    /// Wake-ups of the runtime's workers per hop over the timed laps: their parks,
    /// summed, ÷ hops. A worker that parks is woken to go on, so a chain that stays
    /// on one worker reads near 0.
    pub fn wakeups_per_hop(&self) -> Option<f64> {
        let parks: f64 = self.worker_parks.as_ref()?.iter().sum();
        let hops = (self.tasks * self.laps) as f64;
        (hops > 0.0).then(|| parks / hops)
    }
}

/// A round counts as spread over two workers when the second-busiest worker was busy
/// for at least this share of the timed laps' wall time.
pub const SPREAD_SHARE: f64 = 0.1;

/// The limits a round found, read live: how far a brigade could grow here.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RoundLimits {
    /// Threads this process could still start, and the limit that says so
    /// (`kernel.pid_max = 32,768`; empty where none was found). `None`: no limit was
    /// found (a Windows build reads none), which a record must not store as `usize::MAX`.
    pub thread_room: Option<usize>,
    pub thread_limit: String,
    /// The soft open-file limit after raising it to the hard one.
    pub open_files: Option<u64>,
    /// The chapter's memory budget for one brigade, and where it comes from.
    pub memory_budget: u64,
    pub memory_why: String,
}

/// One round of the variants experiment: every brigade once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantsRound {
    /// Members asked for.
    pub tasks: usize,
    pub variants: Vec<Variant>,
    #[serde(default)]
    pub limits: Option<RoundLimits>,
    /// What starting one thread or one task cost in this round.
    #[serde(default)]
    pub spawn: Vec<SpawnRow>,
}

/// A variants round holds at most one brigade per arm, of at most `tasks` members and
/// `laps` (or `baseline_laps`) timed laps, and one batch per way of starting a thread
/// or task, of at most the batch its parameter sets.
impl RoundBounds for VariantsRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        Limit::count(VARIANT_ARMS.len(), "arms").len("variants", "brigades", &self.variants)?;
        let tasks = p.limit(&TASKS);
        tasks.check("the round", "members asked for", self.tasks as u64)?;
        let laps = p.limit(&LAPS).max(p.limit(&BASELINE_LAPS));
        for v in &self.variants {
            let what = format!("the brigade {}", v.kind.key());
            tasks.check(&what, "members", v.tasks as u64)?;
            laps.check(&what, "laps", v.laps as u64)?;
            laps.dist(&format!("{what}: its hops"), &v.hop)?;
        }
        Limit::count(Spawned::ALL.len(), "ways of starting").len(
            "spawn",
            "batches",
            &self.spawn,
        )?;
        for r in &self.spawn {
            let batch = match r.what {
                Spawned::Thread => p.limit(&SPAWN_THREADS),
                _ => p.limit(&SPAWN_TASKS),
            };
            batch.check(
                &format!("the batch {}", r.what.key()),
                "starts",
                r.batch as u64,
            )?;
        }
        Ok(())
    }
}

impl VariantsRound {
    /// One value per arm: this round's median lap divided by its members.
    fn readings(&self) -> Vec<Reading> {
        self.variants
            .iter()
            .map(|v| {
                let key = VariantsKey::Arm(Arm {
                    kind: v.kind,
                    twin: v.twin,
                });
                Reading::of(&key, Unit::Nanos, v.hop_p50_ns)
            })
            .chain(
                self.spawn
                    .iter()
                    .map(|r| Reading::of(&VariantsKey::Spawn(r.what), Unit::Nanos, r.per_spawn_ns)),
            )
            .collect()
    }

    pub fn spawned(&self, what: Spawned) -> Option<&SpawnRow> {
        self.spawn.iter().find(|r| r.what == what)
    }

    /// A brigade's arm (never its A/A twin).
    pub fn find(&self, kind: Kind) -> Option<&Variant> {
        self.variants.iter().find(|v| v.kind == kind && !v.twin)
    }
}

fn variants(ctx: &mut Ctx) -> anyhow::Result<VariantsRound> {
    let open_files = harness::machine::raise_fd_limit();
    let tasks = ctx.count(&TASKS);
    let (laps, baseline_laps, warmup) = (
        ctx.count(&LAPS),
        ctx.count(&BASELINE_LAPS),
        ctx.count(&WARMUP),
    );
    let laps_of = |k: Kind| match k {
        Kind::ThreadOneCpu | Kind::OneThread => baseline_laps,
        _ => laps,
    };
    let cost = |k: Kind| {
        let n = tasks as f64;
        est_hop_ns(k) * n * (laps_of(k) + warmup) as f64 + est_build_ns(k) * n + EST_FIXED_NS
    };
    let end = round_end(ctx, &VARIANTS);
    let caps = Caps::here(end);
    let limits = RoundLimits {
        thread_room: (caps.threads != usize::MAX).then_some(caps.threads),
        thread_limit: caps.threads_limit.clone(),
        open_files,
        memory_budget: caps.memory,
        memory_why: caps.memory_why.clone(),
    };
    let order = ctx.rotated(&VARIANT_ARMS);
    // The first brigade a fresh process builds pays for the allocator's and the
    // kernel's first growth: its build and resident memory read high. An untimed
    // brigade of the first arm's kind, one lap, thrown away, takes that cost instead.
    if let Some(a) = order.first() {
        let _ = measure(a.kind, tasks, 1, 0, &caps, Instant::now() + MIN_SHARE);
    }
    let mut out = Vec::new();
    for (i, &a) in order.iter().enumerate() {
        let kind = a.kind;
        // This arm's part of what is left of the round, by expected cost.
        let rest: f64 = order[i..].iter().map(|a| cost(a.kind)).sum();
        let share = end.saturating_duration_since(Instant::now());
        let deadline = Instant::now() + share.mul_f64(cost(kind) / rest).max(MIN_SHARE);
        let name = VariantsKey::Arm(a).stored();
        match measure(kind, tasks, warmup, laps_of(kind), &caps, deadline) {
            Ok((r, stop)) => {
                if let Some(s) = &stop {
                    note_stop(ctx, &name, s);
                }
                if r.stopped_early {
                    // One note for every brigade and round: the laps column says which.
                    ctx.note(
                        NoteKind::Timeout,
                        "in some rounds a brigade's share of the round's time ran out before \
                         all its laps had run; those rounds use the laps that did (at least \
                         three), and the laps column of the table counts them.",
                    );
                }
                match Variant::new(a, &r) {
                    Some(v) => out.push(v),
                    None => ctx.note(
                        NoteKind::Timeout,
                        format!("{}: not one lap ran within its share of a round.", name),
                    ),
                }
            }
            Err(e) => note_refused(ctx, &name, &e),
        }
    }
    out.sort_by_key(|v| {
        VARIANT_ARMS
            .iter()
            .position(|a| a.kind == v.kind && a.twin == v.twin)
    });
    if cfg!(unix) && Usage::now().is_none() {
        ctx.note(NoteKind::Unsupported, "getrusage failed: no switch counts.");
    }
    let spawn = spawn_rows(ctx, caps.threads, &caps.threads_why);
    Ok(VariantsRound {
        tasks,
        variants: out,
        limits: Some(limits),
        spawn,
    })
}

// ---------------------------------------------------------------------------------
// sweep

/// The brigades of the sweep, in the order the plots list them.
pub const SWEEP_KINDS: [Kind; 5] = [
    Kind::Thread,
    Kind::AsyncCurrentSocket,
    Kind::AsyncMultiSocket,
    Kind::AsyncCurrentChannel,
    Kind::AsyncCurrentPipe,
];

/// The readings of the sweep, by what they are: a series' time per hop at one size,
/// and its memory per member (the slope over sizes). Stored as
/// `threads · socket · 1,000 members · per hop` and `threads · socket · bytes per task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepKey {
    PerHop(Kind, usize),
    BytesPerTask(Kind),
}

impl ReadingKey for SweepKey {
    fn stored(&self) -> String {
        match *self {
            SweepKey::PerHop(kind, tasks) => {
                format!(
                    "{} · {} members · per hop",
                    kind.key(),
                    grouped(tasks as u64)
                )
            }
            SweepKey::BytesPerTask(kind) => format!("{} · bytes per task", kind.key()),
        }
    }
}

impl Keyed for SweepRound {
    type Key = SweepKey;
}

/// The headline reading of memory per async task.
pub const ASYNC_TASK_BYTES: SweepKey = SweepKey::BytesPerTask(Kind::AsyncCurrentSocket);

/// The sizes a sweep visits: 10, 100, 1,000, 3,000, 10,000, … up to `max`.
pub fn sizes(max: usize) -> Vec<usize> {
    let ladder = [
        10, 100, 1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000,
    ];
    let mut v: Vec<usize> = ladder.into_iter().filter(|&n| n <= max).collect();
    if v.last() != Some(&max) {
        v.push(max);
    }
    v
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepPoint {
    pub tasks: usize,
    pub laps: usize,
    /// Median lap divided by the number of members.
    pub hop_p50_ns: f64,
    /// Resident memory the brigade added, once every member had run twice.
    pub resident_delta: Option<f64>,
    /// Kernel stacks added system-wide (`KernelStack` in /proc/meminfo): noisy when
    /// other programs start threads at the same time.
    pub kernel_stack_delta: Option<f64>,
}

/// Sizes a series needs in a round before that round gives a memory slope.
pub const MIN_SLOPE_POINTS: usize = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepSeries {
    pub kind: Kind,
    pub points: Vec<SweepPoint>,
}

impl SweepSeries {
    pub fn at(&self, tasks: usize) -> Option<&SweepPoint> {
        self.points.iter().find(|p| p.tasks == tasks)
    }

    /// One more member's resident memory in this round: the least-squares slope of
    /// the resident memory added against the size, so the fixed cost (the runtime,
    /// the allocator's bookkeeping) does not leak into it. Only from at least
    /// [`MIN_SLOPE_POINTS`] sizes: a line through the two smallest alone (a series the
    /// time bound cut short) is mostly the allocator's noise, even below zero.
    pub fn bytes_per_task(&self) -> Option<f64> {
        let pts: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter_map(|p| Some((p.tasks as f64, p.resident_delta?)))
            .collect();
        (pts.len() >= MIN_SLOPE_POINTS)
            .then(|| slope(&pts))
            .flatten()
    }

    pub fn kernel_stack_per_task(&self) -> Option<f64> {
        let pts: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter_map(|p| Some((p.tasks as f64, p.kernel_stack_delta?)))
            .collect();
        slope(&pts)
    }
}

/// One round of the sweep: every series once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepRound {
    pub series: Vec<SweepSeries>,
    /// The page size resident memory moves by (`sysconf(_SC_PAGESIZE)`), the least
    /// difference it can show; `None` where not read (records from before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_bytes: Option<u64>,
}

/// A sweep round holds at most one series per brigade kind, one point per size its
/// largest size gives ([`sizes`]), of at most that size, and at most the laps
/// `hops_per_point` gives a size (at least 3, at most 1,000).
impl RoundBounds for SweepRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        Limit::count(SWEEP_KINDS.len(), "brigades").len("series", "series", &self.series)?;
        if let Some(b) = self.page_bytes {
            Limit::new(1 << 30, "a page of at most 1 GiB").check("the round", "page bytes", b)?;
        }
        let hops = p.limit(&HOPS);
        for s in &self.series {
            let largest = if s.kind.uses_fds() {
                p.limit(&MAX_THREADS)
            } else {
                p.limit(&MAX_TASKS)
            };
            let what = format!("the series {}", s.kind.key());
            let up_to = format!("sizes up to {}", largest.why);
            Limit::count(sizes(largest.n as usize).len(), &up_to)
                .len(&what, "points", &s.points)?;
            for x in &s.points {
                largest.check(&what, "members", x.tasks as u64)?;
                let laps = sweep_laps(hops.n as usize, x.tasks) as u64;
                Limit::new(
                    laps,
                    format!(
                        "{} ÷ {} members, from 3 to 1,000",
                        hops.why,
                        fmt_count(x.tasks as u64)
                    ),
                )
                .check(&what, "laps", x.laps as u64)?;
            }
        }
        Ok(())
    }
}

impl SweepRound {
    /// One value per series and size (the median lap ÷ members), and one per series
    /// for memory (the slope of resident memory against the size).
    fn readings(&self) -> Vec<Reading> {
        let mut out = Vec::new();
        for s in &self.series {
            for p in &s.points {
                out.push(Reading::of(
                    &SweepKey::PerHop(s.kind, p.tasks),
                    Unit::Nanos,
                    p.hop_p50_ns,
                ));
            }
            if let Some(b) = s.bytes_per_task() {
                out.push(Reading::of(&SweepKey::BytesPerTask(s.kind), Unit::Bytes, b));
            }
        }
        out
    }

    pub fn find(&self, kind: Kind) -> Option<&SweepSeries> {
        self.series.iter().find(|s| s.kind == kind)
    }
}

/// Least-squares slope of `y` against `x` (bytes per task from a sweep).
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Builds one brigade of the sweep, reads the memory it added once every member has
/// run, then times laps.
fn sweep_point(
    kind: Kind,
    tasks: usize,
    hops: usize,
    caps: &Caps,
    deadline: Instant,
) -> Result<SweepPoint, Refused> {
    os::trim_heap();
    let rss0 = os::resident_bytes();
    let ks0 = os::meminfo_bytes("KernelStack");
    let mut b = Brigade::build(kind, tasks, caps)?;
    if let Some(stop) = b.stop() {
        let _ = b.finish();
        return Err(Refused::Limit(stop));
    }
    let laps = sweep_laps(hops, tasks);
    let warm = b.laps(2, 0, deadline);
    let (rss1, ks1) = (os::resident_bytes(), os::meminfo_bytes("KernelStack"));
    let timed = warm.and_then(|_| b.laps(0, laps, deadline));
    let counts = b.finish();
    let r = timed.map_err(Refused::Failed)?;
    counts.map_err(Refused::Failed)?;
    let p50 = median(r.ns.clone())
        .ok_or_else(|| Refused::Failed(std::io::Error::other("no lap within the time bound")))?;
    let delta = |a: Option<u64>, b: Option<u64>| Some(b? as f64 - a? as f64);
    Ok(SweepPoint {
        tasks,
        laps: r.ns.len(),
        hop_p50_ns: p50 / tasks as f64,
        resident_delta: delta(rss0, rss1),
        kernel_stack_delta: delta(ks0, ks1),
    })
}

/// A sweep series that a limit (or the time bound) cut short.
fn note_sweep_stop(ctx: &mut Ctx, kind: Kind, s: &SweepSeries, stop: &Stop) {
    if stop.by_time() {
        note_sweep_short(ctx);
        return;
    }
    let ends = match s.points.last() {
        Some(p) => format!("the series ends at {} members", fmt_count(p.tasks as u64)),
        None => "not measured".to_string(),
    };
    ctx.note(
        NoteKind::Limit,
        format!(
            "sweep, {}: {ends}: at {} members, {} stopped the build.",
            kind.key(),
            fmt_count(stop.wanted as u64),
            stop.limit
        ),
    );
}

/// One note for every series and round that the round's time cut short (the plots
/// show which sizes each series reached).
fn note_sweep_short(ctx: &mut Ctx) {
    ctx.note(
        NoteKind::Timeout,
        "sweep: in some rounds a series' share of the round's time ran out before its \
         largest sizes; those rounds have fewer points.",
    );
}

fn sweep(ctx: &mut Ctx) -> anyhow::Result<SweepRound> {
    harness::machine::raise_fd_limit();
    let hops = ctx.count(&HOPS);
    let (threads, tasks) = (sizes(ctx.count(&MAX_THREADS)), sizes(ctx.count(&MAX_TASKS)));
    let sizes_of = |k: Kind| if k.uses_fds() { &threads } else { &tasks };
    // Expected cost of one size of a series, and of a whole series: hops and builds.
    let cost_at = |k: Kind, n: usize| {
        let n_hops = (sweep_laps(hops, n) + 2) * n;
        est_hop_ns(k) * n_hops as f64 + est_build_ns(k) * n as f64 + EST_FIXED_NS
    };
    let cost = |k: Kind| sizes_of(k).iter().map(|&n| cost_at(k, n)).sum::<f64>();
    let end = round_end(ctx, &SWEEP);
    let caps = Caps::here(end);
    let order = ctx.rotated(&SWEEP_KINDS);
    let mut series = Vec::new();
    for (i, &kind) in order.iter().enumerate() {
        let rest: f64 = order[i..].iter().map(|&k| cost(k)).sum();
        let share = end.saturating_duration_since(Instant::now());
        let series_end = Instant::now() + share.mul_f64(cost(kind) / rest).max(MIN_SHARE);
        let mut s = SweepSeries {
            kind,
            points: Vec::new(),
        };
        let sizes = sizes_of(kind);
        // The first brigade of a kind pays for its first growth (a runtime's workers,
        // the allocator's first arenas), which would land on the smallest size alone and
        // bend the line (the eleventh review: 200–850 KB at 10 members of the multi-thread
        // socket chain, every round). One untimed brigade of the smallest size, one lap,
        // thrown away, takes it, as the variants experiment does per round.
        if let Some(&n) = sizes.first() {
            let _ = measure(kind, n, 1, 0, &caps, Instant::now() + MIN_SHARE / 2);
        }
        for (j, &n) in sizes.iter().enumerate() {
            let now = Instant::now();
            if now >= series_end {
                note_sweep_short(ctx);
                break;
            }
            // Each size gets its part of what is left of the series' share, by cost.
            let left: f64 = sizes[j..].iter().map(|&m| cost_at(kind, m)).sum();
            let part = (series_end - now).mul_f64(cost_at(kind, n) / left);
            let deadline = now + part.max(MIN_SHARE / 2);
            match sweep_point(kind, n, hops, &caps, deadline) {
                Ok(p) => s.points.push(p),
                Err(Refused::Limit(stop)) => {
                    note_sweep_stop(ctx, kind, &s, &stop);
                    break;
                }
                Err(e) => {
                    note_refused(ctx, &format!("sweep, {}", kind.key()), &e);
                    break;
                }
            }
        }
        series.push(s);
    }
    series.sort_by_key(|s| SWEEP_KINDS.iter().position(|k| *k == s.kind));
    os::trim_heap();
    Ok(SweepRound {
        series,
        page_bytes: os::page_bytes(),
    })
}

// ---------------------------------------------------------------------------------
// limits

/// One of the two largest brigades of a round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LimitRun {
    pub kind: Kind,
    pub wanted: usize,
    pub built: usize,
    /// What stopped the build short, if anything did.
    pub stop: Option<Stop>,
    pub build_ns: f64,
    /// Median lap ÷ members.
    pub hop_p50_ns: Option<f64>,
    /// Resident memory the brigade added, once every member had run.
    pub resident_delta: Option<f64>,
    pub error: Option<String>,
}

/// The limits of this machine as the round found them (no cgroup paths).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LimitsSeen {
    pub limits: harness::machine::Limits,
    /// The soft open-file limit after raising it to the hard one.
    pub fds_after_raise: Option<u64>,
    /// Threads the chapter's guard allowed, and the limit it came from.
    /// `None`: no limit was found.
    pub thread_guard: Option<usize>,
    pub thread_guard_reason: String,
    /// The chapter's memory budget and where it comes from.
    pub memory_budget: u64,
    pub memory_budget_reason: String,
    pub system_threads: Option<u64>,
    /// The soft RLIMIT_NPROC and this cgroup's (or a parent's) `pids.max`, with the
    /// words for "no value" kept apart: unlimited, no limit set, not readable.
    #[serde(default)]
    pub nproc: os::LimitValue,
    #[serde(default)]
    pub cgroup_pids: os::LimitValue,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LimitsRound {
    pub seen: LimitsSeen,
    pub runs: Vec<LimitRun>,
}

/// What a limits probe reports of one brigade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    Members,
    PerHop,
    BytesPerTask,
}

/// The readings of the limits experiment: one probe figure of one brigade, stored as
/// `threads · socket · members`, `… · per hop`, `… · bytes per task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeKey(pub Kind, pub Probe);

impl ReadingKey for ProbeKey {
    fn stored(&self) -> String {
        let what = match self.1 {
            Probe::Members => "members",
            Probe::PerHop => "per hop",
            Probe::BytesPerTask => "bytes per task",
        };
        format!("{} · {what}", self.0.key())
    }
}

impl Keyed for LimitsRound {
    type Key = ProbeKey;
}

/// A limits round holds at most one run per probe, each of at most the members its
/// parameter asks for.
impl RoundBounds for LimitsRound {
    fn check_bounds(&self, p: &Params) -> Result<(), String> {
        Limit::count(PROBE_KINDS.len(), "probes").len("runs", "runs", &self.runs)?;
        for r in &self.runs {
            let asked = if r.kind == Kind::Thread {
                p.limit(&PROBE_THREADS)
            } else {
                p.limit(&PROBE_TASKS)
            };
            let what = format!("the probe {}", r.kind.key());
            asked.check(&what, "members asked for", r.wanted as u64)?;
            asked.check(&what, "members built", r.built as u64)?;
        }
        Ok(())
    }
}

impl LimitsRound {
    fn readings(&self) -> Vec<Reading> {
        let mut out = Vec::new();
        for r in &self.runs {
            if r.built < MIN_MEMBERS {
                continue; // a limit note says why; a brigade this small is no result
            }
            out.push(Reading::of(
                &ProbeKey(r.kind, Probe::Members),
                Unit::Number,
                r.built as f64,
            ));
            if let Some(h) = r.hop_p50_ns {
                out.push(Reading::of(
                    &ProbeKey(r.kind, Probe::PerHop),
                    Unit::Nanos,
                    h,
                ));
            }
            if let Some(m) = r.resident_delta.filter(|_| r.built > 0) {
                out.push(Reading::of(
                    &ProbeKey(r.kind, Probe::BytesPerTask),
                    Unit::Bytes,
                    m / r.built as f64,
                ));
            }
        }
        out
    }

    pub fn find(&self, kind: Kind) -> Option<&LimitRun> {
        self.runs.iter().find(|r| r.kind == kind)
    }
}

/// The two probes: threads over socket pairs, and async tasks over in-memory pipes (a
/// socket pair per member would need two million descriptors for a million).
pub const PROBE_KINDS: [Kind; 2] = [Kind::Thread, Kind::AsyncCurrentPipe];

/// Builds as large a brigade of `kind` as allowed, runs a few laps through it, and
/// reports how far it got and what stopped it.
fn limit_run(kind: Kind, wanted: usize, caps: &Caps, laps: usize, deadline: Instant) -> LimitRun {
    os::trim_heap();
    let rss0 = os::resident_bytes();
    let start = Instant::now();
    let mut run = LimitRun {
        kind,
        wanted,
        built: 0,
        stop: None,
        build_ns: 0.0,
        hop_p50_ns: None,
        resident_delta: None,
        error: None,
    };
    let mut b = match Brigade::build(kind, wanted, caps) {
        Ok(b) => b,
        Err(Refused::Limit(s)) => {
            run.built = s.built;
            run.stop = Some(s);
            return run;
        }
        Err(e) => {
            run.error = Some(e.to_string());
            return run;
        }
    };
    run.build_ns = start.elapsed().as_nanos() as f64;
    run.built = b.tasks();
    run.stop = b.stop();
    let warm = b.laps(1, 0, deadline);
    run.resident_delta = match (rss0, os::resident_bytes()) {
        (Some(a), Some(b)) => Some(b as f64 - a as f64),
        _ => None,
    };
    let timed = warm.and_then(|_| b.laps(0, laps, deadline));
    let counts = b.finish();
    match (timed, counts) {
        (Ok(r), Ok(_)) => run.hop_p50_ns = median(r.ns).map(|m| m / run.built.max(1) as f64),
        (Err(e), _) | (_, Err(e)) => run.error = Some(e.to_string()),
    }
    os::trim_heap();
    run
}

fn limits(ctx: &mut Ctx) -> anyhow::Result<LimitsRound> {
    let fds_after_raise = harness::machine::raise_fd_limit();
    let end = round_end(ctx, &LIMITS);
    let caps = Caps::here(end);
    let seen = LimitsSeen {
        limits: harness::machine::Limits::current(),
        fds_after_raise,
        thread_guard: (caps.threads != usize::MAX).then_some(caps.threads),
        thread_guard_reason: caps.threads_why.clone(),
        memory_budget: caps.memory,
        memory_budget_reason: caps.memory_why.clone(),
        system_threads: os::system_threads(),
        nproc: os::nproc_limit(),
        cgroup_pids: os::cgroup_pids_max(),
    };
    let wanted = [ctx.count(&PROBE_THREADS), ctx.count(&PROBE_TASKS)];
    let laps = ctx.count(&PROBE_LAPS);
    let mut runs = Vec::new();
    // The thread probe's part of the round; the million tasks take the rest.
    let parts = [0.3, 1.0];
    for ((kind, wanted), part) in PROBE_KINDS.into_iter().zip(wanted).zip(parts) {
        let share = end.saturating_duration_since(Instant::now()).mul_f64(part);
        let deadline = Instant::now() + share;
        // Building gets at most three quarters of the share; laps and teardown the rest.
        let caps = Caps {
            deadline: Some(Instant::now() + share.mul_f64(0.75)),
            ..caps.clone()
        };
        let run = limit_run(kind, wanted, &caps, laps, deadline);
        match (&run.stop, run.built < MIN_MEMBERS) {
            (Some(s), true) => note_refused(ctx, kind.key(), &Refused::Limit(s.clone())),
            (Some(s), false) => note_stop(ctx, kind.key(), s),
            _ => {}
        }
        if let Some(e) = &run.error {
            ctx.note(NoteKind::Info, format!("{}: {e}.", kind.key()));
        }
        runs.push(run);
    }
    Ok(LimitsRound { seen, runs })
}

// ---------------------------------------------------------------------------------
// spawn

/// What is started in a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Spawned {
    Thread,
    TaskCurrentThread,
    TaskMultiThread,
}

impl Spawned {
    pub const ALL: [Spawned; 3] = [
        Spawned::Thread,
        Spawned::TaskCurrentThread,
        Spawned::TaskMultiThread,
    ];

    pub const fn key(self) -> &'static str {
        match self {
            Spawned::Thread => "thread: spawn + join",
            Spawned::TaskCurrentThread => "task, current-thread: spawn + await",
            Spawned::TaskMultiThread => "task, multi-thread: spawn + await",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpawnRow {
    pub what: Spawned,
    pub batch: usize,
    /// The batch's time divided by its size.
    pub per_spawn_ns: f64,
    /// The process's resource usage around the timed batch, divided by its size: CPU
    /// time (every thread's, the started ones' included), minor page faults, switches.
    #[serde(default)]
    pub usage: Option<os::Usage>,
}

/// One batch of `what`, after a small untimed one (so the first thread's stack
/// mapping or the runtime's first task is not in the figure): its time, and the
/// process's usage around it.
fn spawn_batch(what: Spawned, n: usize) -> std::io::Result<(Duration, Option<os::Usage>)> {
    let runtime = |multi: bool| {
        if multi {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(crate::workers())
                .build()
        } else {
            tokio::runtime::Builder::new_current_thread().build()
        }
    };
    match what {
        Spawned::Thread => {
            crate::spawn_threads((n / 10).max(1))?;
            let u0 = os::Usage::now();
            let took = crate::spawn_threads(n)?;
            Ok((took, os::Usage::since(u0)))
        }
        Spawned::TaskCurrentThread | Spawned::TaskMultiThread => {
            let rt = runtime(what == Spawned::TaskMultiThread)?;
            crate::spawn_tasks(&rt, (n / 10).max(1))?;
            let u0 = os::Usage::now();
            let took = crate::spawn_tasks(&rt, n);
            let used = os::Usage::since(u0);
            rt.shutdown_background();
            Ok((took?, used))
        }
    }
}

/// Starting a batch of threads and of tasks, once each per round, after the brigades.
fn spawn_rows(ctx: &mut Ctx, room: usize, why: &str) -> Vec<SpawnRow> {
    let (threads, tasks) = (ctx.count(&SPAWN_THREADS), ctx.count(&SPAWN_TASKS));
    let mut rows = Vec::new();
    for what in ctx.rotated(&Spawned::ALL) {
        let n = match what {
            Spawned::Thread => threads,
            _ => tasks,
        };
        // Threads the batch needs at once: the batch itself, or the runtime's workers.
        let needs = match what {
            Spawned::Thread => n,
            Spawned::TaskMultiThread => crate::workers(),
            Spawned::TaskCurrentThread => 0,
        };
        if needs > room {
            ctx.note(
                NoteKind::Limit,
                format!(
                    "{}: needs {} threads at once, but {} allows {}; not measured.",
                    what.key(),
                    fmt_count(needs as u64),
                    why,
                    fmt_count(room as u64)
                ),
            );
            continue;
        }
        if ctx.past_deadline() {
            ctx.note(
                NoteKind::Timeout,
                "the time bound came before every batch had run.",
            );
            break;
        }
        match spawn_batch(what, n) {
            Ok((d, used)) => rows.push(SpawnRow {
                what,
                batch: n,
                per_spawn_ns: d.as_nanos() as f64 / n as f64,
                usage: used.map(|u| u.per(n as f64)),
            }),
            Err(e) => ctx.note(
                NoteKind::Limit,
                format!(
                    "{}: the OS refused ({e}); stopped by {}.",
                    what.key(),
                    os::diagnose_spawn_error(&e)
                ),
            ),
        }
    }
    rows.sort_by_key(|r| Spawned::ALL.iter().position(|w| *w == r.what));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::Profile;

    /// The strings records hold, pinned: a typed key must store what the stored
    /// results were found by before it existed.
    #[test]
    fn typed_keys_store_the_strings_records_hold() {
        let stored = |k: &dyn ReadingKey| k.stored();
        assert_eq!(stored(&VariantsKey::hop(Kind::Thread)), "threads · socket");
        assert_eq!(
            stored(&ASYNC_TASK_BYTES),
            "async current-thread · socket · bytes per task"
        );
        assert_eq!(
            stored(&SweepKey::PerHop(Kind::Thread, 1_000_000)),
            "threads · socket · 1,000,000 members · per hop"
        );
        assert_eq!(
            stored(&SweepKey::PerHop(Kind::Thread, 100)),
            "threads · socket · 100 members · per hop"
        );
        assert_eq!(
            stored(&ProbeKey(Kind::AsyncCurrentPipe, Probe::BytesPerTask)),
            "async current-thread · in-memory pipe · bytes per task"
        );
        assert_eq!(
            stored(&VariantsKey::Spawn(Spawned::Thread)),
            "thread: spawn + join"
        );
    }

    #[test]
    fn the_twin_reads_under_its_own_key_and_stays_out_of_find() {
        let twin = Arm {
            kind: Kind::AsyncCurrentChannel,
            twin: true,
        };
        assert_eq!(
            VariantsKey::Arm(twin).stored(),
            format!("{}{}", Kind::AsyncCurrentChannel.key(), harness::AA_TWIN)
        );
        assert_eq!(VARIANT_ARMS.iter().filter(|a| a.twin).count(), 1);
        let v = |twin: bool, hop: f64| Variant {
            kind: Kind::AsyncCurrentChannel,
            twin,
            tasks: 2,
            laps: 1,
            hop: Dist::from_samples([hop]),
            hop_p50_ns: hop,
            lap_mean_ns: hop * 2.0,
            lap_stddev_ns: 0.0,
            per_hop: None,
            cores_busy: None,
            resident_per_member: None,
            first_hop_ns: None,
            build_per_member_ns: None,
            worker_busy_ns: None,
            worker_parks: None,
        };
        let round = VariantsRound {
            tasks: 2,
            variants: vec![v(true, 7.0), v(false, 5.0)],
            limits: None,
            spawn: Vec::new(),
        };
        assert_eq!(
            round.find(Kind::AsyncCurrentChannel).unwrap().hop_p50_ns,
            5.0
        );
        let keys: Vec<String> = round.readings().into_iter().map(|r| r.key).collect();
        assert_eq!(
            keys,
            vec![
                VariantsKey::Arm(twin).stored(),
                Kind::AsyncCurrentChannel.key().to_string()
            ]
        );
    }

    #[test]
    fn sizes_climb_to_the_largest_asked_for() {
        assert_eq!(sizes(1_000), vec![10, 100, 1_000]);
        assert_eq!(sizes(2_000), vec![10, 100, 1_000, 2_000]);
        assert_eq!(sizes(10), vec![10]);
    }

    #[test]
    fn slope_fits_a_line() {
        let pts: Vec<(f64, f64)> = (1..=5)
            .map(|n| (n as f64 * 100.0, 4096.0 * n as f64 * 100.0 + 7e6))
            .collect();
        assert!((slope(&pts).unwrap() - 4096.0).abs() < 1e-6);
        assert_eq!(slope(&pts[..1]), None);
    }

    #[test]
    fn a_series_cut_to_two_sizes_gives_no_memory_slope() {
        let point = |tasks: usize| SweepPoint {
            tasks,
            laps: 3,
            hop_p50_ns: 1.0,
            resident_delta: Some(1_000.0 * tasks as f64),
            kernel_stack_delta: None,
        };
        let mut s = SweepSeries {
            kind: Kind::AsyncCurrentSocket,
            points: vec![point(10), point(100)],
        };
        assert_eq!(s.bytes_per_task(), None);
        s.points.push(point(1_000));
        assert!((s.bytes_per_task().unwrap() - 1_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_variants_round_reads_one_value_per_brigade() {
        let mut ctx = Ctx::for_test(Profile::Quick, VARIANTS.params, Duration::from_secs(30));
        let round = variants(&mut ctx).unwrap();
        let readings = VariantsRound::readings(&round);
        // One per brigade and A/A twin, one per spawn batch.
        assert_eq!(readings.len(), round.variants.len() + round.spawn.len());
        assert!(round.variants.iter().any(|v| v.twin));
        for v in &round.variants {
            assert!(v.tasks >= MIN_MEMBERS && v.laps > 0 && v.hop_p50_ns > 0.0);
            assert_eq!(v.hop.len() as usize, v.laps);
        }
        #[cfg(target_os = "linux")]
        assert!(
            round.find(Kind::Thread).is_some() && round.find(Kind::AsyncCurrentSocket).is_some()
        );
    }
}
