//! The chapter's experiments: what runs in each profile, under which time bound, and
//! the data each one keeps for its views.

use crate::sys::{self, Usage};
use crate::{AsyncBrigade, Caps, ChannelLink, Flavor, Link, PipeLink, Rounds, Stop};
use harness::stats::{MeanCi, Summary};
use harness::{Chapter, Ctx, Experiment, NoteKind, Profile};
use serde::{Deserialize, Serialize};
use std::io;
use std::time::{Duration, Instant};

pub const CHAPTER: Chapter = Chapter {
    name: env!("CARGO_PKG_NAME"),
    dir: env!("CARGO_MANIFEST_DIR"),
    experiments: EXPERIMENTS,
    views: crate::views::VIEWS,
};

pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "variants",
        about: "every brigade at the write-up's size: time per lap and per hop, switches, CPU",
        bound: |p| p.pick(Duration::from_secs(4), Duration::from_secs(140)),
        run: variants,
    },
    Experiment {
        name: "sweep",
        about: "time per hop and resident memory per task against the number of tasks",
        bound: |p| p.pick(Duration::from_secs(3), Duration::from_secs(20)),
        run: sweep,
    },
    Experiment {
        name: "limits",
        about: "threads and async tasks as far as this machine allows, and what stops them",
        bound: |p| p.pick(Duration::from_secs(3), Duration::from_secs(15)),
        run: limits,
    },
    Experiment {
        name: "spawn",
        about: "what starting (and joining) one thread or one tokio task costs",
        bound: |p| p.pick(Duration::from_secs(1), Duration::from_secs(5)),
        run: spawn,
    },
];

/// The brigade kinds of the chapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Thread,
    ThreadPinned,
    AsyncMultiSocket,
    AsyncCurrentSocket,
    AsyncMultiChannel,
    AsyncCurrentChannel,
    AsyncCurrentPipe,
    OneThread,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Thread => "threads",
            Kind::ThreadPinned => "threads, all on one CPU",
            Kind::AsyncMultiSocket => "async, multi-thread runtime",
            Kind::AsyncCurrentSocket => "async, current-thread runtime",
            Kind::AsyncMultiChannel => "async channels, multi-thread runtime",
            Kind::AsyncCurrentChannel => "async channels, current-thread runtime",
            Kind::AsyncCurrentPipe => "async in-memory pipes, current-thread runtime",
            Kind::OneThread => "one thread does all the I/O",
        }
    }

    pub fn link(self) -> &'static str {
        match self {
            Kind::AsyncMultiChannel | Kind::AsyncCurrentChannel => ChannelLink::NAME,
            Kind::AsyncCurrentPipe => PipeLink::NAME,
            _ => "socket pair",
        }
    }

    pub fn uses_fds(self) -> bool {
        self.link() == "socket pair"
    }

    pub fn is_thread(self) -> bool {
        matches!(self, Kind::Thread | Kind::ThreadPinned)
    }
}

/// A brigade of any kind, built and ready for laps.
pub enum Built {
    #[cfg(unix)]
    Thread(crate::ThreadBrigade),
    #[cfg(unix)]
    OneThread(crate::OneThreadBrigade),
    #[cfg(unix)]
    Socket(AsyncBrigade<crate::SocketLink>),
    Channel(AsyncBrigade<ChannelLink>),
    Pipe(AsyncBrigade<PipeLink>),
}

/// Builds a brigade of `kind` with up to `tasks` members. `Err` only when the kind
/// is not available on this OS or not even one member could be built.
pub fn build(kind: Kind, tasks: usize, caps: &Caps) -> io::Result<Built> {
    let flavor = match kind {
        Kind::AsyncMultiSocket | Kind::AsyncMultiChannel => Flavor::MultiThread,
        _ => Flavor::CurrentThread,
    };
    match kind {
        Kind::AsyncMultiChannel | Kind::AsyncCurrentChannel => {
            AsyncBrigade::build(tasks, flavor, caps).map(Built::Channel)
        }
        Kind::AsyncCurrentPipe => AsyncBrigade::build(tasks, flavor, caps).map(Built::Pipe),
        #[cfg(unix)]
        Kind::Thread => crate::ThreadBrigade::build(tasks, caps, None).map(Built::Thread),
        #[cfg(all(unix, not(target_os = "linux")))]
        Kind::ThreadPinned => Err(unsupported(
            "this OS does not let a program pin a thread to one CPU, so there is no pinned run",
        )),
        #[cfg(target_os = "linux")]
        Kind::ThreadPinned => {
            let core = core_affinity::get_core_ids()
                .and_then(|c| c.into_iter().next())
                .ok_or_else(|| unsupported("this OS does not let a thread pick its CPU"))?;
            crate::ThreadBrigade::build(tasks, caps, Some(core)).map(Built::Thread)
        }
        #[cfg(unix)]
        Kind::OneThread => crate::OneThreadBrigade::build(tasks).map(Built::OneThread),
        #[cfg(unix)]
        Kind::AsyncMultiSocket | Kind::AsyncCurrentSocket => {
            AsyncBrigade::build(tasks, flavor, caps).map(Built::Socket)
        }
        #[cfg(not(unix))]
        _ => Err(unsupported(
            "Unix-domain socket pairs do not exist on this OS, so the socket brigades cannot run",
        )),
    }
}

fn unsupported(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, why.to_string())
}

impl Built {
    pub fn tasks(&self) -> usize {
        match self {
            #[cfg(unix)]
            Built::Thread(b) => b.tasks(),
            #[cfg(unix)]
            Built::OneThread(b) => b.tasks(),
            #[cfg(unix)]
            Built::Socket(b) => b.tasks(),
            Built::Channel(b) => b.tasks(),
            Built::Pipe(b) => b.tasks(),
        }
    }

    pub fn stop(&self) -> Option<Stop> {
        match self {
            #[cfg(unix)]
            Built::Thread(b) => b.stop.clone(),
            #[cfg(unix)]
            Built::OneThread(_) => None,
            #[cfg(unix)]
            Built::Socket(b) => b.stop.clone(),
            Built::Channel(b) => b.stop.clone(),
            Built::Pipe(b) => b.stop.clone(),
        }
    }

    /// Times laps; a pinned thread brigade is driven from a thread on the same CPU.
    #[cfg_attr(not(unix), allow(unused_variables))]
    pub fn rounds(
        &mut self,
        warmup: usize,
        rounds: usize,
        deadline: Instant,
        pin_driver: bool,
    ) -> io::Result<Rounds> {
        match self {
            #[cfg(unix)]
            Built::Thread(b) if pin_driver => std::thread::scope(|s| {
                s.spawn(|| {
                    if let Some(core) =
                        core_affinity::get_core_ids().and_then(|c| c.first().copied())
                    {
                        core_affinity::set_for_current(core);
                    }
                    b.rounds(warmup, rounds, deadline)
                })
                .join()
                .map_err(|_| io::Error::other("the pinned driver panicked"))?
            }),
            #[cfg(unix)]
            Built::Thread(b) => b.rounds(warmup, rounds, deadline),
            #[cfg(unix)]
            Built::OneThread(b) => b.rounds(warmup, rounds, deadline),
            #[cfg(unix)]
            Built::Socket(b) => b.rounds(warmup, rounds, deadline),
            Built::Channel(b) => b.rounds(warmup, rounds, deadline),
            Built::Pipe(b) => b.rounds(warmup, rounds, deadline),
        }
    }

    /// Closes the brigade; returns how many bytes each member passed on.
    pub fn finish(self) -> io::Result<Vec<u64>> {
        match self {
            #[cfg(unix)]
            Built::Thread(b) => b.finish(),
            #[cfg(unix)]
            Built::OneThread(b) => Ok(vec![0; b.tasks()]),
            #[cfg(unix)]
            Built::Socket(b) => b.finish(),
            Built::Channel(b) => b.finish(),
            Built::Pipe(b) => b.finish(),
        }
    }
}

/// Returns freed heap to the OS so the next resident-memory reading starts clean.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of glibc's allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn note_stop(ctx: &mut Ctx, what: &str, stop: &Stop) {
    ctx.note(
        NoteKind::Limit,
        format!(
            "{what}: asked for {} members, built {}; stopped by {} ({}).",
            harness::render::fmt_count(stop.wanted as u64),
            harness::render::fmt_count(stop.built as u64),
            stop.limit,
            stop.detail
        ),
    );
}

// ---------------------------------------------------------------------------------
// variants

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    pub kind: Kind,
    pub tasks: usize,
    /// Nanoseconds per lap.
    pub laps: Option<Summary>,
    /// Process resource usage per hop (per lap per member).
    pub per_hop: Option<Usage>,
    /// (fraction, lap time ÷ tasks) pairs: the per-hop distribution, for the CDF plot.
    pub hop_quantiles: Vec<(f64, f64)>,
    /// Wall time of the timed laps, for CPU ÷ wall.
    pub wall_ns: f64,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantsData {
    pub tasks: usize,
    pub iterations: usize,
    pub warmup: usize,
    pub variants: Vec<Variant>,
}

pub const VARIANT_KINDS: [Kind; 7] = [
    Kind::Thread,
    Kind::ThreadPinned,
    Kind::AsyncMultiSocket,
    Kind::AsyncCurrentSocket,
    Kind::AsyncMultiChannel,
    Kind::AsyncCurrentChannel,
    Kind::OneThread,
];

/// Roughly how long each variant's laps take relative to the thread brigade's, to
/// share the time bound out fairly.
fn weight(kind: Kind) -> f64 {
    match kind {
        Kind::Thread | Kind::ThreadPinned => 1.0,
        Kind::AsyncMultiSocket | Kind::AsyncCurrentSocket => 0.8,
        Kind::OneThread => 0.5,
        _ => 0.1,
    }
}

/// Builds one brigade, times its laps and checks that every member passed on every
/// byte (warm-up included).
pub fn measure_kind(
    kind: Kind,
    tasks: usize,
    warmup: usize,
    iterations: usize,
    deadline: Instant,
) -> io::Result<(Rounds, Option<Stop>)> {
    let mut b = build(kind, tasks, &Caps::default())?;
    let stop = b.stop();
    let r = b.rounds(warmup, iterations, deadline, kind == Kind::ThreadPinned);
    let counts = b.finish();
    let r = r?;
    // A lap cut off by the deadline may have got part of the way along.
    let ok = |c: u64| c == r.laps_run || (r.stopped_early && c == r.laps_run + 1);
    if let Some(bad) = counts?
        .iter()
        .position(|&c| !ok(c) && kind != Kind::OneThread)
    {
        return Err(io::Error::other(format!(
            "member {bad} did not pass on all {} bytes",
            r.laps_run
        )));
    }
    Ok((r, stop))
}

fn variants(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    harness::machine::raise_fd_limit();
    let tasks = ctx.param("tasks", ctx.profile.pick(100, 500));
    let iterations = ctx.param("iterations", ctx.profile.pick(300, 10_000));
    let warmup = ctx.param("warm-up laps", ctx.profile.pick(30, 200));
    let bar = ctx.progress(VARIANT_KINDS.len() as u64, "brigade variants");
    let mut out = Vec::new();
    for (i, kind) in VARIANT_KINDS.into_iter().enumerate() {
        // Share what is left of the time bound among the variants still to run.
        let rest: f64 = VARIANT_KINDS[i..].iter().map(|&k| weight(k)).sum();
        let deadline = Instant::now() + ctx.time_left().mul_f64(0.95 * weight(kind) / rest);
        let start = Instant::now();
        let res = measure_kind(kind, tasks, warmup, iterations, deadline);
        let wall_ns = start.elapsed().as_nanos() as f64;
        bar.inc(1);
        match res {
            Ok((r, stop)) => {
                if let Some(s) = &stop {
                    note_stop(ctx, kind.label(), s);
                }
                if r.stopped_early {
                    ctx.note(
                        NoteKind::Timeout,
                        format!(
                            "{}: {} of {iterations} laps ran before its share of the time bound ran out.",
                            kind.label(),
                            r.ns.len()
                        ),
                    );
                }
                let hops = (r.ns.len() * r.tasks.max(1)) as f64;
                let mut sorted: Vec<f64> =
                    r.ns.iter().map(|ns| ns / r.tasks.max(1) as f64).collect();
                sorted.sort_by(f64::total_cmp);
                out.push(Variant {
                    kind,
                    tasks: r.tasks,
                    laps: Summary::of(&r.ns),
                    per_hop: r.usage.map(|u| u.per(hops)),
                    hop_quantiles: harness::stats::quantile_curve(&sorted, 101),
                    wall_ns: r.ns.iter().sum::<f64>(),
                    error: None,
                });
            }
            Err(e) => {
                let kind_note = if e.kind() == io::ErrorKind::Unsupported {
                    NoteKind::Unsupported
                } else {
                    NoteKind::Info
                };
                ctx.note(kind_note, format!("{}: {e}", kind.label()));
                out.push(Variant {
                    kind,
                    tasks,
                    laps: None,
                    per_hop: None,
                    hop_quantiles: vec![],
                    wall_ns,
                    error: Some(e.to_string()),
                });
            }
        }
    }
    bar.finish_and_clear();
    if cfg!(unix) && Usage::now().is_none() {
        ctx.note(NoteKind::Unsupported, "getrusage failed: no switch counts.");
    }
    Ok(serde_json::to_value(VariantsData {
        tasks,
        iterations,
        warmup,
        variants: out,
    })?)
}

// ---------------------------------------------------------------------------------
// sweep

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepPoint {
    pub tasks: usize,
    pub laps: usize,
    /// Mean and median lap time divided by the number of members.
    pub hop_mean_ns: f64,
    pub hop_p50_ns: f64,
    /// Resident memory the brigade added (after its warm-up laps).
    pub resident_delta: Option<f64>,
    /// Kernel stacks added system-wide (`KernelStack` in /proc/meminfo): noisy when
    /// other programs start threads at the same time.
    pub kernel_stack_delta: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepSeries {
    pub kind: Kind,
    pub points: Vec<SweepPoint>,
    pub stop: Option<Stop>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepData {
    pub series: Vec<SweepSeries>,
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

fn sweep_point(
    kind: Kind,
    tasks: usize,
    hop_budget: usize,
    caps: &Caps,
    deadline: Instant,
) -> io::Result<(SweepPoint, Option<Stop>)> {
    trim_heap();
    let rss0 = sys::resident_bytes();
    let ks0 = sys::meminfo_bytes("KernelStack");
    let mut b = build(kind, tasks, caps)?;
    let stop = b.stop();
    let n = b.tasks().max(1);
    let laps = (hop_budget / n).clamp(3, 200);
    let warm = b.rounds(2, 0, deadline, false);
    // Read memory once every member has run (and touched its stack) at least once.
    let rss1 = sys::resident_bytes();
    let ks1 = sys::meminfo_bytes("KernelStack");
    let timed = warm.and_then(|_| b.rounds(0, laps, deadline, false));
    let counts = b.finish();
    let r = timed?;
    counts?;
    let s = Summary::of(&r.ns).ok_or_else(|| io::Error::other("no laps within the time bound"))?;
    let delta = |a: Option<u64>, b: Option<u64>| Some(b? as f64 - a? as f64);
    Ok((
        SweepPoint {
            tasks: r.tasks,
            laps: r.ns.len(),
            hop_mean_ns: s.mean / n as f64,
            hop_p50_ns: s.p50 / n as f64,
            resident_delta: delta(rss0, rss1),
            kernel_stack_delta: delta(ks0, ks1),
        },
        stop,
    ))
}

pub const SWEEP_KINDS: [Kind; 5] = [
    Kind::Thread,
    Kind::AsyncCurrentSocket,
    Kind::AsyncMultiSocket,
    Kind::AsyncCurrentChannel,
    Kind::AsyncCurrentPipe,
];

fn sweep(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    harness::machine::raise_fd_limit();
    let p = ctx.profile;
    let threads: &[usize] = p.pick(
        &[10, 100, 300, 1000],
        &[10, 30, 100, 300, 1000, 3000, 10_000],
    );
    let sockets: &[usize] = p.pick(&[10, 100, 1000], &[10, 100, 1000, 3000, 10_000]);
    let memory: &[usize] = p.pick(
        &[10, 100, 1000, 10_000],
        &[10, 100, 1000, 10_000, 30_000, 100_000],
    );
    let hop_budget = ctx.param("hops per point", p.pick(10_000, 60_000));
    ctx.param(
        "largest thread brigade",
        harness::render::fmt_count(*threads.last().unwrap() as u64),
    );
    ctx.param(
        "largest channel brigade",
        harness::render::fmt_count(*memory.last().unwrap() as u64),
    );
    let (guard, why) = sys::thread_guard();
    let caps = Caps {
        guard_threads: guard,
        guard_reason: why,
        resident_budget: Some(1 << 30),
        build_deadline: Some(ctx.deadline()),
        ..Caps::default()
    };
    let total: usize = SWEEP_KINDS
        .iter()
        .map(|k| match k {
            Kind::Thread => threads.len(),
            k if k.uses_fds() => sockets.len(),
            _ => memory.len(),
        })
        .sum();
    let bar = ctx.progress(total as u64, "sweep of brigade sizes");
    let mut series = Vec::new();
    for kind in SWEEP_KINDS {
        let sizes = match kind {
            Kind::Thread => threads,
            k if k.uses_fds() => sockets,
            _ => memory,
        };
        let mut s = SweepSeries {
            kind,
            points: vec![],
            stop: None,
            error: None,
        };
        for &n in sizes {
            bar.inc(1);
            if ctx.past_deadline() {
                ctx.note(
                    NoteKind::Timeout,
                    format!(
                        "{}: the sweep reached its time bound before {n} tasks.",
                        kind.label()
                    ),
                );
                break;
            }
            let deadline = Instant::now() + ctx.time_left() / 2;
            match sweep_point(kind, n, hop_budget, &caps, deadline) {
                Ok((pt, stop)) => {
                    s.points.push(pt);
                    if let Some(stop) = stop {
                        note_stop(ctx, &format!("sweep, {}", kind.label()), &stop);
                        s.stop = Some(stop);
                        break;
                    }
                }
                Err(e) => {
                    ctx.note(
                        NoteKind::Info,
                        format!("sweep, {} at {n}: {e}", kind.label()),
                    );
                    s.error = Some(e.to_string());
                    break;
                }
            }
        }
        series.push(s);
    }
    bar.finish_and_clear();
    trim_heap();
    Ok(serde_json::to_value(SweepData { series })?)
}

// ---------------------------------------------------------------------------------
// limits

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LimitRun {
    pub kind: Kind,
    pub wanted: usize,
    pub built: usize,
    pub stop: Option<Stop>,
    pub build_ns: f64,
    pub laps: Option<Summary>,
    pub resident: Option<f64>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LimitsData {
    pub limits: harness::machine::Limits,
    /// The soft open-file limit after raising it to the hard one.
    pub fds_after_raise: Option<u64>,
    pub thread_guard: usize,
    pub thread_guard_reason: String,
    pub system_threads: Option<u64>,
    pub runs: Vec<LimitRun>,
}

/// Builds as large a brigade of `kind` as allowed, runs a few laps through it, and
/// reports how far it got and what stopped it.
pub fn limit_run(
    kind: Kind,
    wanted: usize,
    caps: &Caps,
    laps: usize,
    deadline: Instant,
) -> LimitRun {
    trim_heap();
    let rss0 = sys::resident_bytes();
    let start = Instant::now();
    let mut run = LimitRun {
        kind,
        wanted,
        built: 0,
        stop: None,
        build_ns: 0.0,
        laps: None,
        resident: None,
        error: None,
    };
    let mut b = match build(kind, wanted, caps) {
        Ok(b) => b,
        Err(e) => {
            run.error = Some(e.to_string());
            return run;
        }
    };
    run.build_ns = start.elapsed().as_nanos() as f64;
    run.built = b.tasks();
    run.stop = b.stop();
    let r = b.rounds(1, laps, deadline, false);
    run.resident = match (rss0, sys::resident_bytes()) {
        (Some(a), Some(b)) => Some(b as f64 - a as f64),
        _ => None,
    };
    let counts = b.finish();
    match (r, counts) {
        (Ok(r), Ok(_)) => run.laps = Summary::of(&r.ns),
        (Err(e), _) | (_, Err(e)) => run.error = Some(e.to_string()),
    }
    trim_heap();
    run
}

fn limits(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let fds_after_raise = harness::machine::raise_fd_limit();
    let limits = harness::machine::Limits::current();
    let (guard, why) = sys::thread_guard();
    let quick_cap = 2_000;
    let threads_wanted = ctx.param("threads asked for", ctx.profile.pick(quick_cap, 1_000_000));
    let tasks_wanted = ctx.param(
        "async tasks asked for",
        ctx.profile.pick(100_000, 1_000_000),
    );
    let laps = ctx.param("laps", ctx.profile.pick(2, 3));
    if ctx.profile == Profile::Quick {
        ctx.note(
            NoteKind::Info,
            format!(
                "The quick profile stops the thread brigade at {quick_cap} threads; `make regenerate` (the full profile) runs it until a limit says no."
            ),
        );
    }
    let caps = Caps {
        guard_threads: guard,
        guard_reason: format!("this chapter's guard below {why}"),
        resident_budget: Some(1 << 30),
        ..Caps::default()
    };
    let mut caps = caps;
    let mut runs = Vec::new();
    let plan = [
        (Kind::Thread, threads_wanted),
        (Kind::AsyncCurrentPipe, tasks_wanted),
    ];
    for (i, (kind, wanted)) in plan.into_iter().enumerate() {
        let deadline = Instant::now() + ctx.time_left().mul_f64(0.9) / (plan.len() - i) as u32;
        // Building gets at most half of this run's share; the laps and the teardown the rest.
        caps.build_deadline = Some(Instant::now() + (deadline - Instant::now()) / 2);
        let run = limit_run(kind, wanted, &caps, laps, deadline);
        if let Some(s) = &run.stop {
            note_stop(ctx, kind.label(), s);
        }
        if let Some(e) = &run.error {
            ctx.note(NoteKind::Info, format!("{}: {e}", kind.label()));
        }
        runs.push(run);
    }
    Ok(serde_json::to_value(LimitsData {
        limits,
        fds_after_raise,
        thread_guard: guard,
        thread_guard_reason: why,
        system_threads: sys::system_threads(),
        runs,
    })?)
}

// ---------------------------------------------------------------------------------
// spawn

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpawnRow {
    pub what: String,
    pub per_batch: usize,
    /// Nanoseconds per spawn-and-join, one value per repetition.
    pub per_spawn: Option<MeanCi>,
    pub p50_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpawnData {
    pub rows: Vec<SpawnRow>,
}

fn spawn(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
    let threads = ctx.param("threads per batch", ctx.profile.pick(200, 1000));
    let tasks = ctx.param("tasks per batch", ctx.profile.pick(10_000, 100_000));
    let reps = ctx.param("batches", ctx.profile.pick(5, 20));
    let ct = tokio::runtime::Builder::new_current_thread().build()?;
    let mt = tokio::runtime::Builder::new_multi_thread().build()?;
    let mut rows = Vec::new();
    type Batch<'a> = Box<dyn Fn() -> io::Result<Duration> + 'a>;
    let plans: [(&str, usize, Batch); 3] = [
        (
            "std::thread::spawn + join",
            threads,
            Box::new(|| crate::spawn_threads(threads)),
        ),
        (
            "tokio::spawn + await, current-thread",
            tasks,
            Box::new(|| crate::spawn_tasks(&ct, tasks)),
        ),
        (
            "tokio::spawn + await, multi-thread",
            tasks,
            Box::new(|| crate::spawn_tasks(&mt, tasks)),
        ),
    ];
    for (what, n, batch) in plans {
        let mut per = Vec::new();
        for _ in 0..reps {
            if ctx.past_deadline() {
                ctx.note(
                    NoteKind::Timeout,
                    format!("{what}: {} of {reps} batches ran.", per.len()),
                );
                break;
            }
            match batch() {
                Ok(d) => per.push(d.as_nanos() as f64 / n as f64),
                Err(e) => {
                    ctx.note(NoteKind::Limit, format!("{what}: {e}"));
                    break;
                }
            }
        }
        rows.push(SpawnRow {
            what: what.into(),
            per_batch: n,
            per_spawn: MeanCi::of(&per),
            p50_ns: Summary::of(&per).map(|s| s.p50),
        });
    }
    Ok(serde_json::to_value(SpawnData { rows })?)
}
