//! How the chapter's results are shown: Markdown tables, sentences decided by the
//! intervals, and SVG plots. Every figure is a median over rounds with its interval
//! unless a header says otherwise; distributions pool every lap of every round.

use crate::Kind;
use crate::experiments::{
    LIMITS, LimitsRound, PROBE_KINDS, Probe, ProbeKey, SWEEP, SWEEP_KINDS, Spawned, SweepKey,
    SweepRound, VARIANT_KINDS, VARIANTS, VariantsKey, VariantsRound,
};
use crate::os::LimitValue;
use harness::cells;
use harness::plot::{Axis, Plot, Series, Unit as PlotUnit, dist_cdf};
use harness::reference::Published;
use harness::render::capitalise;
use harness::render::{
    Align, Better, Cell, Formatted, Table, Tails, comparison_sentence, fmt_bytes, fmt_count,
    fmt_estimate, fmt_opt_estimate, fmt_ratio_estimate, sig3, undecided_text,
};
use harness::stats::{Comparison, Verdict};
use harness::{Dist, Estimate, Results, Unit, View};
use serde::Deserialize;

pub static ANSWER: View<VariantsRound> = View::table("answer", &VARIANTS, answer);
pub static VARIANTS_TABLE: View<VariantsRound> =
    View::table("variants", &VARIANTS, variants_table).brief();
pub static HOP_CDF: View<VariantsRound> = View::plot("hop-cdf", &VARIANTS, hop_cdf).brief();
pub static FINDINGS: View<VariantsRound> = View::table("findings", &VARIANTS, findings).brief();
pub static REFERENCE: View<VariantsRound> =
    View::table("reference", &VARIANTS, reference_table).brief();
pub static SWITCHES: View<VariantsRound> =
    View::table("switches", &VARIANTS, switches_table).brief();
pub static PINNING: View<VariantsRound> = View::table("pinning", &VARIANTS, pinning_table).brief();
pub static SPAWN_TABLE: View<VariantsRound> = View::table("spawn", &VARIANTS, spawn_table).brief();
pub static MEMORY: View<SweepRound> = View::table("memory", &SWEEP, memory_table);
pub static SWEEP_MEMORY: View<SweepRound> =
    View::plot("sweep-memory", &SWEEP, sweep_memory_plot).brief();
pub static SWEEP_HOP: View<SweepRound> = View::plot("sweep-hop", &SWEEP, sweep_hop_plot).brief();
pub static LIMITS_TABLE: View<LimitsRound> = View::table("limits", &LIMITS, limits_table);
pub static LIMIT_RUNS: View<LimitsRound> =
    View::table("limit-runs", &LIMITS, limit_runs_table).brief();

// ---------------------------------------------------------------------------------
// the write-up's published numbers

/// The write-up's numbers, with its source and machines (`Published`).
pub type Reference = Published<Numbers>;

#[derive(Debug, Deserialize)]
pub struct Numbers {
    pub brigade: RefBrigade,
    pub memory: RefMemory,
    pub limits: RefLimits,
}

#[derive(Debug, Deserialize)]
pub struct RefBrigade {
    pub tasks: usize,
    pub iterations: usize,
    pub thread_mean_ns: f64,
    pub thread_stddev_ns: f64,
    pub async_mean_ns: f64,
    pub async_stddev_ns: f64,
    /// The per-task times the write-up states.
    pub thread_hop_ns: f64,
    pub async_hop_ns: f64,
    /// Our division of its mean lap by its 500 tasks.
    pub thread_lap_div_tasks_ns: f64,
    pub async_lap_div_tasks_ns: f64,
    pub async_over_thread_published: f64,
    pub thread_user_s: f64,
    pub thread_system_s: f64,
    pub thread_elapsed_s: f64,
    pub async_user_s: f64,
    pub async_system_s: f64,
    pub async_elapsed_s: f64,
    pub thread_rss_bytes: f64,
    pub async_rss_bytes: f64,
}

#[derive(Debug, Deserialize)]
pub struct RefMemory {
    pub tasks: usize,
    pub thread_rss_bytes: f64,
    pub async_rss_bytes: f64,
    /// Our division of the two sizes by the task count.
    pub thread_per_task_bytes: f64,
    pub async_per_task_bytes: f64,
    /// The per-task figures as the write-up states them.
    pub thread_per_task_published_kib: f64,
    pub async_per_task_published_kib: f64,
}

#[derive(Debug, Deserialize)]
pub struct RefLimits {
    pub largest_async_tasks: usize,
    pub largest_threads: usize,
}

pub fn reference_data() -> anyhow::Result<Reference> {
    Published::load(include_str!("../../../assets/reference/brigades.toml"))
}

/// A published duration with the digits it was published with: `2.763 ms`,
/// `537.584 µs`, `5.5 µs`.
pub fn fmt_published_ns(ns: f64) -> String {
    let (v, unit) = match ns.abs() {
        x if x < 1e3 => (ns, "ns"),
        x if x < 1e6 => (ns / 1e3, "µs"),
        x if x < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} {unit}")
}

/// A published size in MiB as the write-up gave it: `466 MiB`, `21 MiB`.
pub fn fmt_published_mib(bytes: f64) -> String {
    let s = format!("{:.1}", bytes / 1048576.0);
    format!("{} MiB", s.trim_end_matches('0').trim_end_matches('.'))
}

// ---------------------------------------------------------------------------------
// helpers

/// Every round's per-hop times of one brigade, pooled.
fn pooled_hops(r: &Results<VariantsRound>, kind: Kind) -> Dist {
    harness::render::pooled(r.data(), |round| round.find(kind).map(|v| &v.hop))
}

fn per_variant(
    r: &Results<VariantsRound>,
    kind: Kind,
    f: impl Fn(&crate::experiments::Variant) -> Option<f64>,
) -> Option<Estimate> {
    r.estimate_of(|round| round.find(kind).and_then(&f))
}

/// The brigades of a result, in table order.
fn kinds_in(r: &Results<VariantsRound>) -> Vec<Kind> {
    VARIANT_KINDS
        .into_iter()
        .filter(|&k| r.data().any(|x| x.find(k).is_some()))
        .collect()
}

/// The row label: the short name, and the member count where a limit made it smaller
/// than asked for.
fn label(r: &Results<VariantsRound>, kind: Kind) -> String {
    let asked = r.data().map(|x| x.tasks).max().unwrap_or(0);
    let had = r
        .data()
        .filter_map(|x| x.find(kind))
        .map(|v| v.tasks)
        .min()
        .unwrap_or(asked);
    if had < asked {
        format!("{} ({} members)", kind.short(), fmt_count(had as u64))
    } else {
        kind.short().to_string()
    }
}

fn median_cell(e: Option<Estimate>, f: impl Fn(f64) -> String) -> String {
    e.map_or_else(|| "–".into(), |e| f(e.median))
}

// ---------------------------------------------------------------------------------
// the answer

/// A per-hop counter of one brigade, as an estimate over rounds.
fn counter(
    r: &Results<VariantsRound>,
    kind: Kind,
    f: fn(&crate::Usage) -> Option<f64>,
) -> Option<Estimate> {
    per_variant(r, kind, |v| v.per_hop.as_ref().and_then(f))
}

fn cpu_of(u: &crate::Usage) -> Option<f64> {
    Some(u.cpu_ns)
}

fn wait_of(u: &crate::Usage) -> Option<f64> {
    u.run_delay_ns
}

fn voluntary_of(u: &crate::Usage) -> Option<f64> {
    Some(u.voluntary_switches)
}

fn migrations_of(u: &crate::Usage) -> Option<f64> {
    u.migrations
}

/// Fewer voluntary switches a hop than this (one per 20 hops) and a multi-thread
/// brigade's tasks stayed on one worker: a hop that moved to another worker would
/// wake it, a voluntary switch of that worker at each such hop.
pub const ONE_WORKER_SWITCHES: f64 = 0.05;

/// The unpinned thread brigade counts as spread over the CPUs where its members were
/// moved to another CPU at least once in ten hops, or it kept more than 1.15 CPUs busy.
pub const SPREAD_MIGRATIONS: f64 = 0.1;
pub const SPREAD_CPUS_BUSY: f64 = 1.15;

fn memory_of(r: &Results<VariantsRound>, kind: Kind) -> Option<Estimate> {
    per_variant(r, kind, |v| v.resident_per_member)
}

/// A per-variant value of two brigades, judged on the rounds' pairs.
fn compare_variants(
    r: &Results<VariantsRound>,
    a: Kind,
    b: Kind,
    f: impl Fn(&crate::experiments::Variant) -> Option<f64>,
) -> Option<Comparison> {
    r.compare_of(
        |round| round.find(a).and_then(&f),
        |round| round.find(b).and_then(&f),
    )
}

/// A per-hop counter of two brigades, judged on the rounds' pairs.
fn counter_comparison(
    r: &Results<VariantsRound>,
    a: Kind,
    b: Kind,
    f: fn(&crate::Usage) -> Option<f64>,
) -> Option<Comparison> {
    compare_variants(r, a, b, |v| v.per_hop.as_ref().and_then(f))
}

/// A per-hop counter of two brigades compared, on the rounds' pairs.
fn compare_counter(
    r: &Results<VariantsRound>,
    (a, an): (Kind, &str),
    (b, bn): (Kind, &str),
    f: fn(&crate::Usage) -> Option<f64>,
) -> Option<String> {
    let c = counter_comparison(r, a, b, f)?;
    Some(comparison_sentence(an, bn, &c, Better::Higher))
}

/// The time per hop of two brigades compared, on the rounds' pairs.
fn compare_hops(
    r: &Results<VariantsRound>,
    (a, an): (Kind, &str),
    (b, bn): (Kind, &str),
) -> Option<String> {
    let c = r.compare(&VariantsKey::hop(a), &VariantsKey::hop(b))?;
    Some(comparison_sentence(an, bn, &c, Better::Lower))
}

/// A count rounded to three significant digits: 885,621 → 886,000.
fn round3(x: f64) -> u64 {
    if x < 1000.0 {
        return x.round() as u64;
    }
    let scale = 10f64.powi(x.log10().floor() as i32 - 2);
    ((x / scale).round() * scale) as u64
}

fn ns(e: &Estimate) -> Formatted {
    fmt_estimate(e, Unit::Nanos)
}

/// How far a brigade could grow here, from the limits its rounds read live.
fn how_far(r: &Results<VariantsRound>) -> Option<String> {
    let l = r.data().find_map(|x| x.limits.clone())?;
    let sockets = l.open_files.map(|f| f / 2);
    let room = (l.thread_room != usize::MAX).then_some(l.thread_room as u64);
    let threads = match (sockets, room) {
        (Some(s), Some(t)) if s <= t => format!(
            "a thread brigade over socket pairs stops at about {} members, at the open-file \
             limit of {} descriptors (two a member); with more descriptors, the chapter's \
             thread guard would stop it at about {} threads (from {}, less a margin for \
             other programs and the threads already running)",
            fmt_count(round3(s as f64)),
            fmt_count(l.open_files.unwrap_or(0)),
            fmt_count(round3(t as f64)),
            l.thread_limit
        ),
        (_, Some(t)) => format!(
            "a thread brigade stops at about {} threads, at the chapter's thread guard (from \
             {}, less a margin for other programs and the threads already running)",
            fmt_count(round3(t as f64)),
            l.thread_limit
        ),
        (Some(s), None) => format!(
            "a thread brigade over socket pairs stops at about {} members, at the open-file \
             limit of {} descriptors (no limit on threads could be read)",
            fmt_count(round3(s as f64)),
            fmt_count(l.open_files.unwrap_or(0))
        ),
        (None, None) => "no limit on threads or descriptors could be read here".to_string(),
    };
    // How far a task brigade went is measured by the limits experiment, shown in its
    // own table: this view reads only the variants' rounds, so it names what can stop
    // one and points there rather than extrapolating from a member's memory.
    let budget = if l.memory_budget == u64::MAX {
        "memory".to_string()
    } else {
        format!(
            "the chapter's own budget of {} of added resident memory",
            fmt_bytes(l.memory_budget as f64)
        )
    };
    let tasks = format!(
        "; a task brigade over tokio's in-memory pipes needs neither threads nor \
         descriptors, so only {budget}, or the round's time, stops it (how far it got here: \
         the limit runs below)"
    );
    Some(format!(
        "How far, from the limits read live: {threads}{tasks}"
    ))
}

/// The chapter's answer in numbers: a hop and a member's memory for a thread against
/// a task, why (counters), how far each goes here, and the write-up's own answer.
fn answer(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let members = fmt_count(r.param("tasks").unwrap_or(0.0) as u64);
    let e = |k: Kind| r.estimate(&VariantsKey::hop(k));
    let (th, ct, mt) = (
        Kind::Thread,
        Kind::AsyncCurrentSocket,
        Kind::AsyncMultiSocket,
    );
    let pin = Kind::ThreadOneCpu;
    let mut out = Vec::new();
    // Like with like: every hop on one CPU, threads pinned against tasks on one thread.
    if let (Some(p), Some(c), Some(cmp)) = (
        e(pin),
        e(ct),
        compare_hops(
            r,
            (pin, "a thread hop"),
            (ct, "a task hop on the current-thread runtime"),
        ),
    ) {
        out.push(format!(
            "Like with like, every hop on one CPU: with {members} members linked by socket \
             pairs, a hop took {} between threads pinned to one CPU and {} between tokio \
             tasks on the current-thread runtime, which runs them all on one thread: {cmp}",
            ns(&p),
            ns(&c),
        ));
    }
    // tokio's default runtime: where its tasks ran, from the counter that shows it.
    if let (Some(m), Some(vm), Some(cmp)) = (
        e(mt),
        counter(r, mt, voluntary_of),
        compare_hops(
            r,
            (pin, "a pinned thread hop"),
            (mt, "a multi-thread task hop"),
        ),
    ) {
        let placed = if vm.median < ONE_WORKER_SWITCHES {
            format!(
                "its tasks stayed on one worker thread ({} voluntary context switches a hop, \
                 about two a lap of hops: the driver's wait for the lap and, by our reading, \
                 the worker parking once the lap is done), so like the pinned threads its \
                 hops did not change thread",
                sig3(vm.median)
            )
        } else {
            format!(
                "its tasks did not stay on one worker ({} voluntary context switches a hop: \
                 hops woke other threads)",
                sig3(vm.median)
            )
        };
        out.push(format!(
            "On tokio's default multi-thread runtime a task hop took {}; {placed}: {cmp}",
            ns(&m)
        ));
    }
    // The write-up's pair, kept: unpinned threads against the multi-thread runtime.
    if let (Some(a), Some(cmp)) = (
        e(th),
        compare_hops(
            r,
            (th, "an unpinned thread hop"),
            (mt, "a multi-thread task hop"),
        ),
    ) {
        let spread = match (
            counter(r, th, migrations_of),
            per_variant(r, th, |v| v.cores_busy),
        ) {
            (Some(g), Some(b)) => format!(
                " (the scheduler moved a member to another CPU {} times a hop, and the brigade \
                 kept {} CPUs busy on average)",
                sig3(g.median),
                sig3(b.median)
            ),
            _ => String::new(),
        };
        let pinning = compare_hops(r, (pin, "a pinned thread hop"), (th, "an unpinned one"))
            .map_or_else(String::new, |c| format!("; pinning alone: {c}"));
        let spread_here = match (
            counter(r, th, migrations_of),
            per_variant(r, th, |v| v.cores_busy),
        ) {
            (Some(g), Some(b)) => g.median >= SPREAD_MIGRATIONS || b.median >= SPREAD_CPUS_BUSY,
            _ => true,
        };
        out.push(if spread_here {
            format!(
                "The write-up's pair, unpinned threads against the multi-thread runtime, \
                 mixes placement: the unpinned threads spread over the CPUs{spread}, the \
                 tasks did not. Unpinned, a thread hop took {}: {cmp}{pinning}",
                ns(&a)
            )
        } else {
            format!(
                "The write-up's pair, unpinned threads against the multi-thread runtime: in \
                 this run the unpinned threads, too, stayed mostly on one CPU{spread}, so here \
                 it compares like with like. Unpinned, a thread hop took {}: {cmp}{pinning}",
                ns(&a)
            )
        });
    }
    // Spread like unpinned threads: tasks that change thread at every hop.
    let sp = Kind::AsyncSpreadSocket;
    if let (Some(s2), Some(v), Some(cmp)) = (
        e(sp),
        counter(r, sp, voluntary_of),
        compare_hops(
            r,
            (th, "an unpinned thread hop"),
            (sp, "a task hop across two threads"),
        ),
    ) {
        out.push(format!(
            "Tasks spread as threads are: with the members alternating between two \
             current-thread runtimes, each on its own thread, every hop wakes the other \
             thread ({} voluntary context switches a hop) and a hop took {}: {cmp}",
            sig3(v.median),
            ns(&s2)
        ));
    }
    if let (Some(ch), Some(cmp)) = (
        e(Kind::AsyncCurrentChannel),
        compare_hops(
            r,
            (ct, "a task hop over a socket pair"),
            (Kind::AsyncCurrentChannel, "one over a channel"),
        ),
    ) {
        out.push(format!(
            "Over tokio channels a task hop took {} (current-thread runtime): {cmp}",
            ns(&ch)
        ));
    }
    let med = |k: Kind, f: fn(&crate::Usage) -> Option<f64>| counter(r, k, f).map(|e| e.median);
    // The same pair as the first sentence: pinned threads against current-thread tasks.
    if let (Some(vt), Some(vm), Some(mt_cpu), Some(th_cpu), Some(cpu)) = (
        med(pin, voluntary_of),
        med(ct, voluntary_of),
        med(ct, cpu_of),
        med(pin, cpu_of),
        compare_counter(
            r,
            (pin, "a pinned thread hop's CPU time"),
            (ct, "a current-thread task hop's"),
            cpu_of,
        ),
    ) {
        let blocks = if (0.9..=1.1).contains(&vt) {
            " (each member blocks in its read and is woken)"
        } else {
            ""
        };
        // The current-thread brigade runs on one thread: what it waited for a CPU, it
        // waited behind other work on the machine.
        let waited = match share_of_window(r, ct, wait_of) {
            Some(w) if w.median >= 0.2 => format!(
                " Of a current-thread task hop's wall time, {} was spent runnable but waiting \
                 for a CPU (median over rounds): behind other work on the machine, as the \
                 brigade runs on one thread",
                harness::render::fmt_percent(w.median)
            ),
            _ => String::new(),
        };
        out.push(format!(
            "Why, measured: a pinned thread hop made {} voluntary context switches{blocks} \
             and used {} of CPU, a current-thread task hop {} and {}; {cpu}.{waited}",
            sig3(vt),
            Unit::Nanos.format(th_cpu),
            sig3(vm),
            Unit::Nanos.format(mt_cpu),
        ));
    }
    if let (Some(mth), Some(mct), Some(mem)) = (
        memory_of(r, th),
        memory_of(r, ct),
        compare_variants(r, th, ct, |v| v.resident_per_member),
    ) {
        out.push(format!(
            "A member's memory, as the resident memory building a brigade of {members} added \
             ÷ {members} (the last column of the table of every brigade; user memory only, so \
             a thread's kernel stack comes on top): {} per thread, {} per current-thread \
             socket task; {}",
            fmt_estimate(&mth, Unit::Bytes),
            fmt_estimate(&mct, Unit::Bytes),
            comparison_sentence("a thread's", "a task's", &mem, Better::Higher)
        ));
    }
    if let Some(far) = how_far(r) {
        out.push(far);
    }
    anyhow::ensure!(!out.is_empty(), "no brigade could be measured here");
    let b = &rf.brigade;
    let m = &rf.memory;
    let writeup = format!(
        "{} timed {} tasks over {} iterations: a mean lap of {} with threads and {} with \
         async tasks, “1.8 / 2.7 ≅ 0.67”; at {} tasks, about {} KiB of resident memory per \
         thread against {} KiB per task; it ran {} async tasks, and {} threads after raising \
         system limits by hand.",
        rf.source.author,
        fmt_count(b.tasks as u64),
        fmt_count(b.iterations as u64),
        fmt_published_ns(b.thread_mean_ns),
        fmt_published_ns(b.async_mean_ns),
        fmt_count(m.tasks as u64),
        m.thread_per_task_published_kib,
        m.async_per_task_published_kib,
        fmt_count(rf.limits.largest_async_tasks as u64),
        fmt_count(rf.limits.largest_threads as u64),
    );
    Ok(harness::render::answer_block(out, &writeup))
}

// ---------------------------------------------------------------------------------
// variants

/// The time per hop of every brigade: the median over rounds of each round's median
/// lap ÷ members, with its interval; then every lap of every round, pooled.
fn variants_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let kinds = kinds_in(r);
    anyhow::ensure!(!kinds.is_empty(), "no brigade could be measured here");
    let dists: Vec<Dist> = kinds.iter().map(|&k| pooled_hops(r, k)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len));
    let mut t = Table::new([
        "brigade",
        "per hop",
        "laps",
        if tails.p99 {
            "p99 per hop"
        } else {
            "max per hop"
        },
        "resident added ÷ members",
    ]);
    for (&k, d) in kinds.iter().zip(&dists) {
        let Some(s) = d.summary() else { continue };
        let tail = if tails.p99 {
            s.p99.unwrap_or(s.max)
        } else {
            s.max
        };
        t.row(cells![
            label(r, k),
            fmt_opt_estimate(r.estimate(&VariantsKey::hop(k)), Unit::Nanos),
            fmt_count(s.n),
            Unit::Nanos.format(tail),
            // The baseline has no members: what its sockets added is no member's cost.
            if k == Kind::OneThread {
                "–".into()
            } else {
                fmt_opt_estimate(memory_of(r, k), Unit::Bytes)
            },
        ]);
    }
    Ok(t.to_markdown())
}

fn hop_cdf(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let series: Vec<(String, Dist)> = kinds_in(r)
        .into_iter()
        .map(|k| (k.short().to_string(), pooled_hops(r, k)))
        .collect();
    dist_cdf(
        "Time per hop (lap ÷ members), every timed lap of every round",
        "time per hop (log scale)",
        series.iter().map(|(n, d)| (n.clone(), d)),
    )
    .to_svg()
}

/// Sentences decided by the intervals: what these results show, and what they do not.
fn findings(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let pairs: [(Kind, Kind, &str, &str); 11] = [
        (
            Kind::Thread,
            Kind::AsyncSpreadSocket,
            "a hop between unpinned threads",
            "a hop between async tasks alternating between two threads (both over socket \
             pairs)",
        ),
        (
            Kind::AsyncSpreadSocket,
            Kind::AsyncCurrentSocket,
            "an async hop between two threads",
            "one on a single thread (current-thread runtime; both over socket pairs)",
        ),
        (
            Kind::ThreadOneCpu,
            Kind::AsyncCurrentSocket,
            "a hop between threads pinned to one CPU",
            "a hop between async tasks on the current-thread runtime (both on one CPU, over \
             socket pairs)",
        ),
        (
            Kind::ThreadOneCpu,
            Kind::AsyncMultiSocket,
            "a hop between threads pinned to one CPU",
            "a hop between async tasks on the multi-thread runtime (both over socket pairs)",
        ),
        (
            Kind::Thread,
            Kind::AsyncCurrentSocket,
            "a hop between unpinned threads",
            "a hop between async tasks on the current-thread runtime (both over socket pairs)",
        ),
        (
            Kind::Thread,
            Kind::AsyncMultiSocket,
            "a hop between unpinned threads (the write-up's pair)",
            "a hop between async tasks on the multi-thread runtime (both over socket pairs)",
        ),
        (
            Kind::AsyncCurrentSocket,
            Kind::AsyncMultiSocket,
            "an async hop over socket pairs on the current-thread runtime",
            "one on the multi-thread runtime",
        ),
        (
            Kind::AsyncCurrentChannel,
            Kind::AsyncCurrentSocket,
            "an async hop through a tokio channel (current-thread runtime)",
            "one through a socket pair",
        ),
        (
            Kind::AsyncCurrentChannel,
            Kind::AsyncMultiChannel,
            "an async hop through a channel on the current-thread runtime",
            "one on the multi-thread runtime",
        ),
        (
            Kind::ThreadOneCpu,
            Kind::Thread,
            "a hop between threads pinned to one CPU",
            "one between unpinned threads",
        ),
        (
            Kind::OneThread,
            Kind::AsyncCurrentSocket,
            "a hop done by one thread doing every socket read and write itself",
            "an async hop over socket pairs on the current-thread runtime",
        ),
    ];
    let mut out = Vec::new();
    for (a, b, an, bn) in pairs {
        let Some(c) = r.compare(&VariantsKey::hop(a), &VariantsKey::hop(b)) else {
            continue;
        };
        out.push(comparison_sentence(an, bn, &c, Better::Lower));
    }
    anyhow::ensure!(!out.is_empty(), "no two brigades have results to compare");
    if let Some(s) = aa_sentence(r) {
        out.push(s);
    }
    Ok(out
        .iter()
        .map(|s| format!("- {}.\n", capitalise(s)))
        .collect())
}

/// The A/A self-check: the current-thread channel brigade against its twin, the same
/// code as a separate arm in the same rounds, kept out of the tables.
fn aa_sentence(r: &Results<VariantsRound>) -> Option<String> {
    let k = Kind::AsyncCurrentChannel;
    let twin = VariantsKey::Arm(crate::experiments::Arm {
        kind: k,
        twin: true,
    });
    let c = r.compare(&VariantsKey::hop(k), &twin)?;
    Some(harness::render::aa_sentence(
        "the current-thread channel brigade",
        None,
        &fmt_estimate(&c.a, Unit::Nanos).to_string(),
        &fmt_estimate(&c.b, Unit::Nanos).to_string(),
        &c,
        Better::Lower,
    ))
}

/// The write-up's published figures beside yours.
fn reference_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let b = &rf.brigade;
    let same_size = r.param("tasks") == Some(b.tasks as f64);
    let mean = |k: Kind| per_variant(r, k, |v| Some(v.lap_mean_ns));
    let sd = |k: Kind| per_variant(r, k, |v| (v.laps >= 2).then_some(v.lap_stddev_ns));
    let per_task = |k: Kind| per_variant(r, k, |v| Some(v.lap_mean_ns / v.tasks.max(1) as f64));
    let at_size = |e: Option<Estimate>| {
        if same_size {
            fmt_opt_estimate(e, Unit::Nanos)
        } else {
            "–".into()
        }
    };
    let mut t = Table::new([
        "what (their “pipes”; socket pairs by our inference)",
        "theirs",
        "yours",
    ]);
    let (th, am) = (Kind::Thread, Kind::AsyncMultiSocket);
    t.row(cells![
        "threads: mean lap",
        fmt_published_ns(b.thread_mean_ns),
        at_size(mean(th)),
    ]);
    t.row(cells![
        "threads: standard deviation of laps",
        fmt_published_ns(b.thread_stddev_ns),
        at_size(sd(th)),
    ]);
    t.row(cells![
        "async: mean lap",
        fmt_published_ns(b.async_mean_ns),
        at_size(mean(am)),
    ]);
    t.row(cells![
        "async: standard deviation of laps",
        fmt_published_ns(b.async_stddev_ns),
        at_size(sd(am)),
    ]);
    for (k, who, stated, divided) in [
        (th, "threads", b.thread_hop_ns, b.thread_lap_div_tasks_ns),
        (am, "async", b.async_hop_ns, b.async_lap_div_tasks_ns),
    ] {
        t.row(cells![
            format!("{who}: per hop (theirs: as stated; mean lap ÷ tasks)"),
            format!(
                "{}; {}",
                fmt_published_ns(stated),
                fmt_published_ns(divided)
            ),
            fmt_opt_estimate(per_task(k), Unit::Nanos),
        ]);
    }
    let yours_ratio = r
        .estimate_of(|x| {
            let (t, a) = (x.find(th)?, x.find(am)?);
            (t.lap_mean_ns > 0.0).then(|| {
                (a.lap_mean_ns / a.tasks.max(1) as f64) / (t.lap_mean_ns / t.tasks.max(1) as f64)
            })
        })
        .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e));
    t.row(cells![
        "async ÷ threads, mean per hop",
        format!("≈ {} (as stated)", b.async_over_thread_published),
        yours_ratio,
    ]);
    // The clean pair beside the write-up's: threads pinned to one CPU, as the tasks were.
    let pin = Kind::ThreadOneCpu;
    t.row(cells![
        "threads pinned to one CPU: per hop (mean lap ÷ tasks)",
        "–",
        fmt_opt_estimate(per_task(pin), Unit::Nanos),
    ]);
    let pinned_ratio = r
        .estimate_of(|x| {
            let (t, a) = (x.find(pin)?, x.find(am)?);
            (t.lap_mean_ns > 0.0).then(|| {
                (a.lap_mean_ns / a.tasks.max(1) as f64) / (t.lap_mean_ns / t.tasks.max(1) as f64)
            })
        })
        .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e));
    t.row(cells![
        "async ÷ threads pinned to one CPU, mean per hop",
        "–",
        pinned_ratio,
    ]);
    for (k, who, user, system, elapsed) in [
        (
            th,
            "threads",
            b.thread_user_s,
            b.thread_system_s,
            b.thread_elapsed_s,
        ),
        (
            am,
            "async",
            b.async_user_s,
            b.async_system_s,
            b.async_elapsed_s,
        ),
    ] {
        t.row([
            format!("{who}: CPUs busy (CPU time ÷ wall time)"),
            format!("{} (whole run)", sig3((user + system) / elapsed)),
            median_cell(per_variant(r, k, |v| v.cores_busy), sig3),
        ]);
    }
    let mut md = t.to_markdown();
    md.push('\n');
    md.push_str(
        "Async rows: theirs is the write-up's async brigade; yours is the async brigade on \
         the multi-thread runtime (that theirs ran on it is our reading). Yours are medians \
         over rounds of each round's figure, with their intervals; your per-hop figure is \
         your mean lap ÷ your members, the write-up's is the figure it states, then its mean \
         lap ÷ 500 (our division)",
    );
    if same_size {
        md.push_str(".\n\n");
    } else {
        md.push_str(&format!(
            "; the per-lap rows are left empty because this result has {} members per \
             brigade and the write-up's had {}.\n\n",
            fmt_count(r.param("tasks").unwrap_or(0.0) as u64),
            b.tasks
        ));
    }
    if let Some(why) = reference_why(r, &rf) {
        md.push_str(&why);
        md.push_str("\n\n");
    }
    md.push_str(&rf.attribution());
    md.push('\n');
    Ok(md)
}

/// Why your async ÷ threads ratio differs from the write-up's: which hop differs, what
/// pinning does to it, what the counters say about placement, and what is only our
/// hypothesis.
fn reference_why(r: &Results<VariantsRound>, rf: &Reference) -> Option<String> {
    let b = &rf.brigade;
    let (th, pin, am) = (Kind::Thread, Kind::ThreadOneCpu, Kind::AsyncMultiSocket);
    let per_task = |k: Kind| per_variant(r, k, |v| Some(v.lap_mean_ns / v.tasks.max(1) as f64));
    let (t, a) = (per_task(th)?, per_task(am)?);
    let mut out = Vec::new();
    // Your ratio against the published one, a fixed value: judged apart.
    if let Some(yours) = r.estimate_of(|x| {
        let (t, a) = (x.find(th)?, x.find(am)?);
        (t.lap_mean_ns > 0.0).then(|| {
            (a.lap_mean_ns / a.tasks.max(1) as f64) / (t.lap_mean_ns / t.tasks.max(1) as f64)
        })
    }) {
        let p = b.async_over_thread_published;
        let theirs = Estimate {
            median: p,
            lo: p,
            hi: p,
            confidence: 1.0,
            n: yours.n,
            drift: None,
        };
        out.push(format!(
            "{}.",
            capitalise(&comparison_sentence(
                "your async ÷ threads ratio",
                "the write-up's published one",
                &Comparison::unpaired(yours, theirs),
                Better::Higher,
            ))
        ));
    }
    out.push(format!(
        "Your async hop is {} against the write-up's {}, your unpinned thread hop {} \
         against its {}.",
        ns(&a),
        fmt_published_ns(b.async_lap_div_tasks_ns),
        ns(&t),
        fmt_published_ns(b.thread_lap_div_tasks_ns),
    ));
    let pinned = r.compare(&VariantsKey::hop(pin), &VariantsKey::hop(th));
    let pinning = pinned.map(|c| {
        comparison_sentence(
            "a hop between threads pinned to one CPU",
            "one between unpinned threads",
            &c,
            Better::Lower,
        )
    });
    let pinned_faster = pinned.is_some_and(|c| c.verdict == Verdict::Below);
    let (moved, busy) = (
        counter(r, th, migrations_of),
        per_variant(r, th, |v| v.cores_busy),
    );
    if let (Some(g), Some(c), Some(cmp)) = (moved, busy, pinning) {
        let spread = g.median >= SPREAD_MIGRATIONS || c.median >= SPREAD_CPUS_BUSY;
        let counts = format!(
            "the scheduler moved a member to another CPU {} times a hop and the brigade kept \
             {} CPUs busy",
            sig3(g.median),
            sig3(c.median)
        );
        out.push(if spread && pinned_faster {
            format!(
                "Unpinned, your threads spread over the CPUs ({counts}); {cmp}: here the \
                 thread hop's extra cost lies partly in its placement (how much, the pinned \
                 rows above show). Our hypothesis for why a hop to \
                 another CPU costs more than a hop on one, not measured on this page: this \
                 is a virtual machine, where waking a thread on the other virtual CPU goes \
                 by way of the hypervisor; see the *one exit to the hypervisor*, *guest \
                 halt-poll window* and *idle states* rows on [Your \
                 machine](your-machine.md) (and `VM exit`, `halt-poll` and `idle` in the \
                 provenance line below)."
            )
        } else if spread {
            format!("Unpinned, your threads spread over the CPUs ({counts}); {cmp}.")
        } else {
            format!(
                "In this run your unpinned threads stayed mostly on one CPU, as the pinned \
                 ones did ({counts}), so placement does not tell them apart here: {cmp}."
            )
        });
    }
    if let Some(v) = counter(r, am, voluntary_of).filter(|v| v.median < ONE_WORKER_SWITCHES) {
        out.push(format!(
            "Your multi-thread tasks stayed on one worker ({} voluntary switches a hop).",
            sig3(v.median)
        ));
    }
    out.push(format!(
        "The write-up's thread brigade kept more than one CPU busy (its `time` output reads \
         “133%CPU”: user plus system seconds over elapsed, {} by our arithmetic) and its \
         async brigade about one (“107%CPU”), so on our reading its pair mixed placement: its \
         row is kept, and the pinned rows are the clean pair beside it. Its machine is, in \
         its words, “my laptop” (its cgroup example comes from Fedora; CPU and core count are \
         not stated).",
        sig3((b.thread_user_s + b.thread_system_s) / b.thread_elapsed_s),
    ));
    Some(out.join(" "))
}

/// The least CPU time (over every round's timed laps) for which the table shows the
/// kernel's share: getrusage splits CPU time into user and system time by sampling at
/// the scheduler's tick, every 1 to 10 ms, so a shorter window's split is mostly chance.
/// One second is a hundred ticks even at the slowest common tick.
pub const SPLIT_MIN_CPU_NS: f64 = 1e9;

/// The kernel's share of a brigade's CPU time, pooled over every round's timed laps,
/// where they used enough CPU for the tick-sampled split to mean something.
fn system_share(r: &Results<VariantsRound>, kind: Kind) -> Option<f64> {
    let (mut cpu, mut user, mut system) = (0.0, 0.0, 0.0);
    for v in r.data().filter_map(|x| x.find(kind)) {
        let Some(u) = v.per_hop else { continue };
        let hops = (v.laps * v.tasks) as f64;
        cpu += u.cpu_ns * hops;
        user += u.user_ns * hops;
        system += u.system_ns * hops;
    }
    (cpu >= SPLIT_MIN_CPU_NS && user + system > 0.0).then(|| system / (user + system))
}

/// Switches, CPU and run-queue wait per hop around the timed laps; theirs from the
/// `time` output the write-up printed.
fn switches_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let b = &rf.brigade;
    let mut t = Table::new([
        "brigade",
        "per hop",
        "CPU (kernel share)",
        "waiting for a CPU",
        "switches: voluntary, involuntary · moved to another CPU",
    ]);
    let mut hidden = 0;
    let cpu_cell = |cpu: String, share: Option<f64>| match share {
        Some(x) => format!("{cpu}, {} kernel", harness::render::fmt_percent(x)),
        None => cpu,
    };
    for k in kinds_in(r) {
        let usage = |f: fn(&crate::Usage) -> Option<f64>| counter(r, k, f);
        let share = system_share(r, k);
        hidden += usize::from(share.is_none());
        let switches = format!(
            "{}, {}",
            median_cell(usage(voluntary_of), sig3),
            median_cell(usage(|u| Some(u.involuntary_switches)), sig3),
        );
        t.row(cells![
            k.short(),
            median_cell(r.estimate(&VariantsKey::hop(k)), |v| Unit::Nanos.format(v)),
            cpu_cell(median_cell(usage(cpu_of), |v| Unit::Nanos.format(v)), share),
            median_cell(usage(wait_of), |v| Unit::Nanos.format(v)),
            Cell::join(
                [
                    switches.into(),
                    median_cell(usage(migrations_of), sig3).into()
                ],
                " · "
            ),
        ]);
    }
    let hops = (b.tasks * b.iterations) as f64;
    for (label, mean, user, sys) in [
        (
            "theirs: threads",
            b.thread_mean_ns,
            b.thread_user_s,
            b.thread_system_s,
        ),
        (
            "theirs: async",
            b.async_mean_ns,
            b.async_user_s,
            b.async_system_s,
        ),
    ] {
        t.row([
            label.to_string(),
            Unit::Nanos.format(mean / b.tasks as f64),
            cpu_cell(
                Unit::Nanos.format((user + sys) * 1e9 / hops),
                Some(sys / (user + sys)),
            ),
            "–".into(),
            "–".into(),
        ]);
    }
    let mut md = t.to_markdown();
    let window = window_fit(r).map_or_else(String::new, |gap| {
        format!(
            " (their wall time matches the laps' own sum to within {} in every round)",
            harness::render::fmt_percent(gap)
        )
    });
    md.push_str(&format!(
        "\nWhole process, per hop over the timed laps; yours are medians over rounds. \
         *Per hop* is, as in every table, a round's median lap ÷ members. The counters are \
         read just before the first timed lap's start stamp and just after the last one's \
         end stamp, so their window is the timed laps{window}: they are per average hop (the \
         *wall time a hop* below is the window ÷ hops, the mean lap ÷ members), and slow laps \
         pull a mean above the median, so a counter can exceed the *per hop* beside it. \
         *Waiting for a CPU*: time its threads were runnable but not running (Linux's \
         run-queue delay), summed over the threads, so it can exceed the hop when several \
         wait at once. *Moved to another CPU*: the scheduler's migrations of the process's \
         threads (`se.nr_migrations`, Linux), per hop: a member woken on another CPU than \
         the one it last ran on."
    ));
    if hidden > 0 {
        md.push_str(&format!(
            " The kernel share comes from `getrusage`, which samples at the scheduler's tick \
             (every 1 to 10 ms); it is shown only where a brigade's laps used {} of CPU in \
             all rounds together.",
            Unit::Nanos.format(SPLIT_MIN_CPU_NS)
        ));
    }
    md.push_str(&format!(
        " Theirs, by our arithmetic on the write-up's output: the mean lap ÷ {}, and the \
         user plus system seconds of its `time` output ÷ ({} × {} hops), with the system \
         seconds' share.\n",
        fmt_count(b.tasks as u64),
        fmt_count(b.tasks as u64),
        fmt_count(b.iterations as u64),
    ));
    if let Some(s) = why_sentences(r) {
        md.push_str(&format!("\n{s}"));
    }
    Ok(md)
}

/// The largest gap, over every brigade and round, between the counters' wall time and
/// the sum of the timed laps, as a share of the laps: what the window holds besides them.
fn window_fit(r: &Results<VariantsRound>) -> Option<f64> {
    r.data()
        .flat_map(|x| x.variants.iter())
        .filter_map(|v| {
            let u = v.per_hop.as_ref()?;
            let laps = v.lap_mean_ns / v.tasks.max(1) as f64;
            (laps > 0.0 && u.wall_ns > 0.0).then(|| (u.wall_ns - laps).abs() / laps)
        })
        .max_by(f64::total_cmp)
}

fn window_of(u: &crate::Usage) -> Option<f64> {
    (u.wall_ns > 0.0).then_some(u.wall_ns)
}

/// A share of the counters' window, round by round: `part` over the wall time per hop
/// between the two readings.
fn share_of_window(
    r: &Results<VariantsRound>,
    k: Kind,
    part: impl Fn(&crate::Usage) -> Option<f64>,
) -> Option<Estimate> {
    per_variant(r, k, |v| {
        let u = v.per_hop.as_ref()?;
        Some(part(u)? / window_of(u)?)
    })
}

/// What the counters say about the hops, each sentence computed from them.
fn why_sentences(r: &Results<VariantsRound>) -> Option<String> {
    let mut out = Vec::new();
    let med = |k: Kind, f: fn(&crate::Usage) -> Option<f64>| counter(r, k, f).map(|e| e.median);
    let t = |v: f64| Unit::Nanos.format(v);
    // One thread does everything: its wall time is its CPU time plus its wait for a CPU.
    for (k, what) in [
        (
            Kind::AsyncCurrentSocket,
            "the current-thread task brigade over socket pairs",
        ),
        (Kind::OneThread, "the one-thread baseline"),
    ] {
        let (Some(wall), Some(cpu), Some(wait), Some(both)) = (
            med(k, window_of),
            med(k, cpu_of),
            med(k, wait_of),
            share_of_window(r, k, |u| Some(u.cpu_ns + u.run_delay_ns?)),
        ) else {
            continue;
        };
        out.push(format!(
            "{what} runs on one thread: of its {} of wall time a hop, {} was CPU time and \
             {} waiting for a CPU, together {} of it (medians over rounds)",
            t(wall),
            t(cpu),
            t(wait),
            harness::render::fmt_percent(both.median)
        ));
    }
    if let (Some(wall), Some(cpu), Some(wait), Some(vol)) = (
        med(Kind::Thread, window_of),
        med(Kind::Thread, cpu_of),
        med(Kind::Thread, wait_of),
        med(Kind::Thread, voluntary_of),
    ) {
        out.push(format!(
            "the thread brigade made {} voluntary switches a hop; in its {} of wall time a \
             hop its threads used {} of CPU and, summed over them, waited {} for a CPU",
            sig3(vol),
            t(wall),
            t(cpu),
            t(wait)
        ));
    }
    for (k, what) in [
        (Kind::AsyncMultiSocket, "a multi-thread task hop's"),
        (Kind::AsyncCurrentSocket, "a current-thread task hop's"),
    ] {
        if let Some(cmp) = compare_counter(
            r,
            (Kind::Thread, "a thread hop's CPU time"),
            (k, what),
            cpu_of,
        ) {
            out.push(cmp);
        }
    }
    (!out.is_empty()).then(|| harness::render::findings(out))
}

/// Pinned against unpinned threads.
fn pinning_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let (un, pin) = (Kind::Thread, Kind::ThreadOneCpu);
    let mut t = Table::new([
        "brigade",
        "per hop",
        "CPU per hop",
        "waiting for a CPU",
        "CPUs busy",
    ]);
    for k in [un, pin] {
        let Some(e) = r.estimate(&VariantsKey::hop(k)) else {
            t.row([k.short().to_string(), "did not run".into()]);
            continue;
        };
        t.row(cells![
            k.short(),
            fmt_estimate(&e, Unit::Nanos),
            fmt_opt_estimate(counter(r, k, cpu_of), Unit::Nanos),
            fmt_opt_estimate(counter(r, k, wait_of), Unit::Nanos),
            median_cell(per_variant(r, k, |v| v.cores_busy), sig3),
        ]);
    }
    let mut md = t.to_markdown();
    md.push_str(
        "\n*CPUs busy* is CPU time over the laps' wall time: how many CPUs the brigade kept \
         busy on average.\n\n",
    );
    let mut out = Vec::new();
    if let Some(s) = compare_hops(
        r,
        (pin, "a hop between threads pinned to one CPU"),
        (un, "one between unpinned threads"),
    ) {
        out.push(s);
    }
    if let Some(s) = compare_counter(
        r,
        (pin, "a pinned thread hop's CPU time"),
        (un, "an unpinned one's"),
        cpu_of,
    ) {
        out.push(s);
    }
    if let Some(s) = compare_counter(
        r,
        (pin, "a pinned thread hop's wait for a CPU"),
        (un, "an unpinned one's"),
        wait_of,
    ) {
        out.push(s);
    }
    if let Some(pinning) = r.compare(&VariantsKey::hop(pin), &VariantsKey::hop(un)) {
        // Which counter the difference is in, by the same rule as the sentences above.
        let differs = |f: fn(&crate::Usage) -> Option<f64>| {
            counter_comparison(r, pin, un, f).map_or(Verdict::Unclear, |c| c.verdict)
        };
        let (cpu, wait) = (differs(cpu_of), differs(wait_of));
        out.push(match pinning.verdict {
            Verdict::Below if cpu == Verdict::Below && wait != Verdict::Below => {
                "so what pinning saved is CPU time spent per hop, not time spent waiting for a \
                 CPU. Our hypothesis for that CPU time, which these counters do not split: \
                 unpinned, a member is often woken on the other CPU, so the waker has to \
                 signal that CPU (an interrupt, unless that CPU is idle and polling; on a \
                 virtual machine, possibly by way of the hypervisor: see the halt-poll and hypervisor-exit rows on [Your machine](your-machine.md)), and the byte and the \
                 member's state move between the CPUs' caches; pinned, every wake-up stays on \
                 one CPU"
                    .to_string()
            }
            Verdict::Below => "the counters above do not say which part of the hop pinning \
                               saved; our hypothesis: unpinned, a member is often woken on \
                               the other CPU, and signalling it and moving data between the \
                               CPUs' caches costs time that a wake-up on the same CPU does not"
                .to_string(),
            Verdict::Above => "our hypothesis for the difference: pinned, the driver and every \
                               member share one CPU, and that crowding cost more than the \
                               local wake-ups saved"
                .to_string(),
            Verdict::Same | Verdict::Unclear => format!(
                "so for a thread hop, pinned against unpinned, {}",
                undecided_text(pinning.verdict).unwrap_or_default()
            ),
        });
    }
    md.push_str(&harness::render::findings(out));
    Ok(md)
}

// ---------------------------------------------------------------------------------
// spawn

fn spawn_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let mut t = Table::new(["what", "batch size", "per spawn"]);
    for w in Spawned::ALL {
        let Some(e) = r.estimate(&VariantsKey::Spawn(w)) else {
            continue;
        };
        let batch = r.data().find_map(|x| x.spawned(w)).map_or(0, |x| x.batch);
        t.row(cells![
            w.key(),
            fmt_count(batch as u64),
            fmt_estimate(&e, Unit::Nanos),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "nothing could be started here");
    Ok(t.to_markdown())
}

// ---------------------------------------------------------------------------------
// sweep

/// The sizes any round of the sweep measured for `kind`.
fn sweep_sizes(r: &Results<SweepRound>, kind: Kind) -> Vec<usize> {
    let mut v: Vec<usize> = r
        .data()
        .filter_map(|x| x.find(kind))
        .flat_map(|s| s.points.iter().map(|p| p.tasks))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn memory_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let m = &rf.memory;
    // A round gives a figure only where two of its sizes fitted a line: say how many.
    let mut t = Table::new([
        "brigade",
        "resident per member",
        "rounds with a fit",
        "kernel stack per member",
        "theirs per task",
    ]);
    for k in SWEEP_KINDS {
        let Some(e) = r.estimate(&SweepKey::BytesPerTask(k)) else {
            continue;
        };
        let ks = if k.is_thread() {
            fmt_opt_estimate(
                r.estimate_of(|x| x.find(k)?.kernel_stack_per_task()),
                Unit::Bytes,
            )
        } else {
            "–".into()
        };
        let theirs = match k {
            Kind::Thread => format!("{} KiB", m.thread_per_task_published_kib),
            Kind::AsyncMultiSocket => format!("{} KiB", m.async_per_task_published_kib),
            _ => "–".into(),
        };
        t.row(cells![
            k.short(),
            fmt_estimate(&e, Unit::Bytes),
            format!("{} of {}", e.n, r.rounds.len()),
            ks,
            theirs,
        ]);
    }
    anyhow::ensure!(
        !t.is_empty(),
        "no series had two sizes to fit a line through"
    );
    let mut md = t.to_markdown();
    md.push('\n');
    if let Some(c) = r.compare(
        &SweepKey::BytesPerTask(Kind::Thread),
        &SweepKey::BytesPerTask(Kind::AsyncCurrentSocket),
    ) {
        md.push_str(&format!(
            "In these results, for resident memory (both over socket pairs): {}.",
            comparison_sentence(
                "one more thread",
                "one more async task on the current-thread runtime",
                &c,
                Better::Higher
            )
        ));
        md.push(' ');
    }
    let b = &rf.brigade;
    md.push_str(&format!(
        "Theirs: the write-up's own figures, for its thread brigade and its async brigade \
         (the multi-thread row, by our reading), stated beside whole-process resident sizes \
         at {} tasks of {} and {}; that they come from dividing those sizes by {} is our \
         inference, and that division gives {} and {}. At {} tasks the write-up gives \
         whole-process resident sizes of {} and {}, which this chapter does not measure.\n\n{}\n",
        fmt_count(m.tasks as u64),
        fmt_published_mib(m.thread_rss_bytes),
        fmt_published_mib(m.async_rss_bytes),
        fmt_count(m.tasks as u64),
        fmt_bytes(m.thread_per_task_bytes),
        fmt_bytes(m.async_per_task_bytes),
        fmt_count(b.tasks as u64),
        fmt_published_mib(b.thread_rss_bytes),
        fmt_published_mib(b.async_rss_bytes),
        rf.attribution()
    ));
    Ok(md)
}

fn sweep_memory_plot(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        "Resident memory added per member, against the brigade's size",
        "members (log scale; bars: 95 % intervals over rounds)",
        "resident memory added ÷ members",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Bytes);
    for k in SWEEP_KINDS {
        let points = sweep_sizes(r, k)
            .into_iter()
            .filter_map(|n| {
                let e = r.estimate_of(|x| {
                    let d = x.find(k)?.at(n)?.resident_delta?;
                    (d > 0.0).then(|| d / n as f64)
                })?;
                Some((n as f64, e))
            })
            .collect();
        plot = plot.series(Series::estimates(k.short(), points));
    }
    plot.to_svg()
}

fn sweep_hop_plot(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let mut plot = Plot::new(
        "Time per hop against the brigade's size",
        "members (log scale; bars: 95 % intervals over rounds)",
        "median lap ÷ members (log scale)",
    )
    .x(Axis::Log, PlotUnit::Number)
    .y(Axis::Log, PlotUnit::Nanos);
    for k in SWEEP_KINDS {
        let points = sweep_sizes(r, k)
            .into_iter()
            .filter_map(|n| Some((n as f64, r.estimate(&SweepKey::PerHop(k, n))?)))
            .collect();
        plot = plot.series(Series::estimates(k.short(), points));
    }
    plot.to_svg()
}

// ---------------------------------------------------------------------------------
// limits

fn limits_table(r: &Results<LimitsRound>) -> anyhow::Result<String> {
    let d = r
        .data()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no round finished"))?;
    let (s, l) = (&d.seen, &d.seen.limits);
    // A sysctl or a raised rlimit that could not be read; the two limits that can be
    // unlimited or unset carry their own words.
    let num = |v: Option<u64>| v.map_or(LimitValue::NotReadable, LimitValue::Value);
    let threads = |v: LimitValue, per: u64| {
        v.value()
            .map_or_else(|| "–".into(), |x| format!("≈ {}", fmt_count(x / per)))
    };
    let mut t = Table::new(["limit", "value here", "threads it allows"]);
    for (what, v, per) in [
        (
            "open files (RLIMIT_NOFILE, raised to the hard limit)",
            num(s.fds_after_raise),
            2,
        ),
        ("processes and threads per user (RLIMIT_NPROC)", s.nproc, 1),
        ("pids.max of this cgroup or a parent", s.cgroup_pids, 1),
        ("kernel.pid_max (system-wide)", num(l.pid_max), 1),
        ("kernel.threads-max (system-wide)", num(l.threads_max), 1),
        ("vm.max_map_count (per process)", num(l.max_map_count), 2),
    ] {
        t.row([what.to_string(), v.words(), threads(v, per)]);
    }
    t.row([
        "threads on the whole system when measured".to_string(),
        num(s.system_threads).words(),
        "–".into(),
    ]);
    t.row([
        "this chapter's thread guard".to_string(),
        if s.thread_guard == usize::MAX {
            "none".into()
        } else {
            fmt_count(s.thread_guard as u64)
        },
        "–".into(),
    ]);
    t.row([
        "this chapter's memory budget".to_string(),
        fmt_bytes(s.memory_budget as f64),
        "–".into(),
    ]);
    let mut md = t.to_markdown();
    md.push('\n');
    let shown = [s.nproc, s.cgroup_pids];
    let legend = [
        (
            LimitValue::Unlimited,
            "*unlimited* means the limit reads `max` (or infinity)",
        ),
        (
            LimitValue::NotSet,
            "*no limit set* means there is no such cgroup file, at this cgroup's level or \
             a parent's",
        ),
        (
            LimitValue::NotReadable,
            "*not readable* means the value could not be read here",
        ),
    ];
    let words: Vec<&str> = legend
        .iter()
        .filter(|(w, _)| {
            shown.contains(w)
                || (*w == LimitValue::NotReadable
                    && [s.fds_after_raise, l.pid_max, l.threads_max, l.max_map_count]
                        .contains(&None))
        })
        .map(|(_, text)| *text)
        .collect();
    if !words.is_empty() {
        md.push_str(&format!("In the table, {}.", words.join("; ")));
    }
    if !s.thread_guard_reason.is_empty() {
        md.push_str(&format!(" The thread guard is {}.", s.thread_guard_reason));
    }
    md.push_str(&format!(
        " A brigade stops growing when its resident memory has grown by {}.\n",
        s.memory_budget_reason
    ));
    Ok(md)
}

fn limit_runs_table(r: &Results<LimitsRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let mut t = Table::new([
        "brigade",
        "ran with",
        "stopped by",
        "per hop",
        "resident per member",
    ])
    .align(2, Align::Left);
    let asked = |k: Kind| {
        fmt_count(
            r.data()
                .filter_map(|x| x.find(k))
                .map(|x| x.wanted)
                .max()
                .unwrap_or(0) as u64,
        )
    };
    let (mut all_built, mut by_time) = (false, false);
    for k in PROBE_KINDS {
        let runs: Vec<&crate::experiments::LimitRun> = r.data().filter_map(|x| x.find(k)).collect();
        if runs.is_empty() {
            continue;
        }
        // A resource limit if one stopped it; else how often the round's time did.
        let timed_out = runs
            .iter()
            .filter(|x| x.stop.as_ref().is_some_and(|s| s.by_time()))
            .count();
        // A limit that stopped some rounds, with the rounds the time bound stopped first.
        let by_limit = |limit: String| match timed_out {
            0 => limit,
            n => format!("{limit}; time bound ({n} of {} rounds)", runs.len()),
        };
        let stopped = runs
            .iter()
            .find_map(|x| {
                x.stop
                    .as_ref()
                    .filter(|s| !s.by_time())
                    .map(|s| by_limit(s.limit.clone()))
            })
            .or_else(|| runs.iter().find_map(|x| x.error.clone()))
            .unwrap_or_else(|| match timed_out {
                0 => {
                    all_built = true;
                    "all built".into()
                }
                n => format!("time bound ({n} of {} rounds)", runs.len()),
            });
        by_time |= timed_out > 0;
        let members = r.estimate(&ProbeKey(k, Probe::Members)).map_or_else(
            || {
                Formatted::plain(fmt_count(
                    runs.iter().map(|x| x.built).max().unwrap_or(0) as u64
                ))
            },
            |e| {
                if e.lo == e.hi {
                    Formatted::plain(fmt_count(e.median as u64))
                } else {
                    Formatted::with_interval(
                        fmt_count(e.median as u64),
                        format!("{}–{}", fmt_count(e.lo as u64), fmt_count(e.hi as u64)),
                    )
                }
            },
        );
        t.row(cells![
            k.short(),
            members,
            stopped,
            fmt_opt_estimate(r.estimate(&ProbeKey(k, Probe::PerHop)), Unit::Nanos),
            fmt_opt_estimate(r.estimate(&ProbeKey(k, Probe::BytesPerTask)), Unit::Bytes),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no probe ran");
    let mut legend = String::new();
    if all_built {
        legend.push_str(" *All built*: every member asked for was built in every round.");
    }
    if by_time {
        legend.push_str(
            " *Time bound*: in that many rounds the round's time ran out before every \
             member was built; the other rounds built them all, or stopped at the limit \
             named beside it.",
        );
    }
    Ok(format!(
        "{}\nAsked for: {} threads and {} async tasks.{legend} The write-up's largest \
         brigades: {} async tasks, and {} threads after it raised several system limits \
         by hand.\n",
        t.to_markdown(),
        asked(Kind::Thread),
        asked(Kind::AsyncCurrentPipe),
        fmt_count(rf.limits.largest_async_tasks as u64),
        fmt_count(rf.limits.largest_threads as u64),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_data_parses_with_the_published_figures() {
        let r = reference_data().unwrap();
        assert_eq!((r.brigade.tasks, r.brigade.iterations), (500, 10_000));
        assert_eq!(r.memory.thread_per_task_published_kib, 10.0);
        assert_eq!(r.memory.async_per_task_published_kib, 0.4);
        assert_eq!(r.brigade.async_over_thread_published, 0.67);
    }

    #[test]
    fn counts_round_to_three_digits() {
        assert_eq!(round3(885_621.0), 886_000);
        assert_eq!(round3(29_285.0), 29_300);
        assert_eq!(round3(512.4), 512);
    }

    #[test]
    fn published_durations_keep_their_digits() {
        assert_eq!(fmt_published_ns(2_763_000.0), "2.763 ms");
        assert_eq!(fmt_published_ns(537_584.0), "537.584 µs");
        assert_eq!(fmt_published_ns(5_500.0), "5.5 µs");
        assert_eq!(fmt_published_ns(1_858_000.0), "1.858 ms");
    }
}
