//! The chapter's tables: every brigade, the pairs compared like with like, the
//! counters per hop, spawning, memory, and the limits.

use super::{counter, kinds_in, label, median_cell, per_variant, pooled_hops, reference_data};
use crate::Kind;
use crate::experiments::{
    Arm, PROBE_KINDS, Probe, ProbeKey, SWEEP_KINDS, Spawned, SweepKey, SweepRound, VariantsKey,
    VariantsRound,
};
use crate::experiments::{LimitRun, LimitsRound};
use crate::os::{LimitValue, Usage};
use harness::cells;
use harness::render::{
    Align, Cell, Formatted, Table, Tails, fmt_bytes, fmt_count, fmt_estimate, fmt_opt_estimate,
    fmt_percent, linux_only, ratio_cell, sig3,
};
use harness::{Dist, Results, Unit};

/// The time per hop of every brigade: the median over rounds of each round's median
/// lap ÷ members, with its interval; then every lap of every round, pooled.
pub fn variants_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let kinds = kinds_in(r);
    anyhow::ensure!(!kinds.is_empty(), "no brigade could be measured here");
    let dists: Vec<Dist> = kinds.iter().map(|&k| pooled_hops(r, k)).collect();
    let tails = Tails::for_counts(dists.iter().map(Dist::len));
    let tail = if tails.p99 { "p99" } else { "max" };
    let mut t = Table::new([
        "brigade",
        "per hop",
        "laps",
        &format!("{tail} per hop"),
        "resident added ÷ members",
    ]);
    for (&k, d) in kinds.iter().zip(&dists) {
        let Some(s) = d.summary() else { continue };
        t.row(cells![
            label(r, k),
            fmt_opt_estimate(r.estimate(&VariantsKey::hop(k)), Unit::Nanos),
            fmt_count(s.n),
            Unit::Nanos.format(if tails.p99 {
                s.p99.unwrap_or(s.max)
            } else {
                s.max
            }),
            // The baseline has no members: what its sockets added is no member's cost.
            if k == Kind::OneThread {
                "–".into()
            } else {
                fmt_opt_estimate(per_variant(r, k, |v| v.resident_per_member), Unit::Bytes)
            },
        ]);
    }
    Ok(t.to_markdown())
}

/// The pairs that differ in one thing only, each the median of the rounds' own
/// ratios where the rule finds a difference.
const PAIRS: [(Kind, Kind, &str, &str); 7] = [
    (
        Kind::AsyncCurrentSocket,
        Kind::ThreadOneCpu,
        "tasks on one thread ÷ threads on one CPU",
        "what waits (every hop on one CPU)",
    ),
    (
        Kind::AsyncCurrentChannel,
        Kind::AsyncCurrentSocket,
        "async ct: channel ÷ socket pair",
        "the link",
    ),
    (
        Kind::AsyncCurrentSocketInTask,
        Kind::AsyncMultiSocketInTask,
        "socket pairs, laps in a task: async ct ÷ async mt",
        "the runtime",
    ),
    (
        Kind::AsyncCurrentChannelInTask,
        Kind::AsyncMultiChannelInTask,
        "channels, laps in a task: async ct ÷ async mt",
        "the runtime",
    ),
    (
        Kind::AsyncSpreadOneCpu,
        Kind::AsyncCurrentSocket,
        "tasks on two threads, one CPU ÷ tasks on one thread",
        "a change of thread at every hop (two runtimes)",
    ),
    (
        Kind::AsyncSpreadSocket,
        Kind::AsyncSpreadOneCpu,
        "tasks on two threads: two CPUs ÷ one CPU",
        "a change of CPU at every hop",
    ),
    (
        Kind::OneThread,
        Kind::AsyncCurrentSocket,
        "one thread, no waiting ÷ tasks on one thread",
        "waiting",
    ),
];

pub fn pairs(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let mut t = Table::new(["pair (a ÷ b)", "what differs", "a ÷ b per hop"]).align(1, Align::Left);
    for (a, b, name, differs) in PAIRS {
        if let Some(c) = r.compare(&VariantsKey::hop(a), &VariantsKey::hop(b)) {
            t.row(cells![name, differs, ratio_cell(&c)]);
        }
    }
    anyhow::ensure!(!t.is_empty(), "no two brigades have results to compare");
    // The A/A self-check: the same brigade run twice as two arms of the same rounds.
    let k = Kind::AsyncCurrentChannel;
    let twin = VariantsKey::Arm(Arm {
        kind: k,
        twin: true,
    });
    if let Some(c) = r.compare(&VariantsKey::hop(k), &twin) {
        t.row(cells![
            "async ct, channel ÷ itself",
            "nothing (A/A check)",
            ratio_cell(&c)
        ]);
    }
    Ok(t.to_markdown())
}

/// The least CPU time (over every round's timed laps) for which the table shows the
/// kernel's share: getrusage splits CPU time by sampling at the scheduler's tick,
/// every 1 to 10 ms, so a shorter window's split is mostly chance.
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
pub fn switches_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let b = &rf.brigade;
    let mut t = Table::new([
        "brigade",
        "per hop",
        "CPU (kernel share)",
        "waiting for a CPU",
        "switches: voluntary, involuntary · moved to another CPU",
    ]);
    let cpu_cell = |cpu: String, share: Option<f64>| match share {
        Some(x) => format!("{cpu}, {} kernel", fmt_percent(x)),
        None => cpu,
    };
    let ns = |v: f64| Unit::Nanos.format(v);
    for k in kinds_in(r) {
        let usage = |f: fn(&crate::Usage) -> Option<f64>| counter(r, k, f);
        let switches = format!(
            "{}, {}",
            median_cell(usage(|u| Some(u.voluntary_switches)), sig3),
            median_cell(usage(|u| Some(u.involuntary_switches)), sig3),
        );
        t.row(cells![
            k.short(),
            median_cell(r.estimate(&VariantsKey::hop(k)), ns),
            cpu_cell(
                median_cell(usage(|u| Some(u.cpu_ns)), ns),
                system_share(r, k)
            ),
            linux_only(r.record, median_cell(usage(|u| u.run_delay_ns), ns)),
            Cell::join(
                [
                    switches.into(),
                    linux_only(r.record, median_cell(usage(|u| u.migrations), sig3)).into()
                ],
                " · "
            ),
        ]);
    }
    let hops = (b.tasks * b.iterations) as f64;
    for (who, mean, user, sys) in [
        (
            "threads",
            b.thread_mean_ns,
            b.thread_user_s,
            b.thread_system_s,
        ),
        ("async", b.async_mean_ns, b.async_user_s, b.async_system_s),
    ] {
        t.row([
            format!("theirs: {who}"),
            ns(mean / b.tasks as f64),
            cpu_cell(ns((user + sys) * 1e9 / hops), Some(sys / (user + sys))),
            "–".into(),
            "–".into(),
        ]);
    }
    Ok(format!(
        "{}\nWhole process, per hop over the timed laps; medians over rounds. The counters \
         are per average hop, so slow laps can lift one above the median *per hop*. \
         *Waiting for a CPU* is summed over threads. The kernel share is shown where a \
         brigade's laps used {} of CPU in all. Theirs: the mean lap ÷ {}, and user plus \
         system seconds ÷ {} hops (our arithmetic).\n",
        t.to_markdown(),
        Unit::Nanos.format(SPLIT_MIN_CPU_NS),
        fmt_count(b.tasks as u64),
        fmt_count(hops as u64),
    ))
}

/// Starting a thread or a task: the time per spawn, then what the process used around
/// the batch, per spawn (CPU of every thread, page faults).
pub fn spawn_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let mut t = Table::new("what | batch size | per spawn | CPU | minor page faults".split(" | "));
    for w in Spawned::ALL {
        let Some(e) = r.estimate(&VariantsKey::Spawn(w)) else {
            continue;
        };
        let batch = r.data().find_map(|x| x.spawned(w)).map_or(0, |x| x.batch);
        let used = |f: fn(&Usage) -> f64, unit| {
            fmt_opt_estimate(r.estimate_of(|x| x.spawned(w)?.usage.as_ref().map(f)), unit)
        };
        t.row(cells![
            w.key(),
            fmt_count(batch as u64),
            fmt_estimate(&e, Unit::Nanos),
            used(|u| u.cpu_ns, Unit::Nanos),
            used(|u| u.minor_faults, Unit::Number),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "nothing could be started here");
    Ok(format!(
        "{}\nPer spawn, around the timed batch: the process's **CPU** time (every thread's, \
         the started ones' included) and its **minor page faults** (a page touched for \
         the first time, served without I/O). Both are exact counts (the process's CPU \
         clock and getrusage); which system calls a spawn makes is not counted.{}\n",
        t.to_markdown(),
        fault_ratio(r)
    ))
}

/// A thread's start against the task start that faulted most: both touch fresh pages.
fn fault_ratio(r: &Results<VariantsRound>) -> String {
    let faults = |w: Spawned| {
        let e = r.estimate_of(|x| x.spawned(w)?.usage.as_ref().map(|u| u.minor_faults));
        e.map(|e| e.median)
    };
    let tasks = [Spawned::TaskCurrentThread, Spawned::TaskMultiThread];
    let task = tasks.into_iter().filter_map(faults).reduce(f64::max);
    match (faults(Spawned::Thread), task) {
        (Some(th), Some(task)) if task > 0.0 => format!(
            " A thread's start touched {}× the fresh pages of a task's start \
             ({} against {} minor faults per start, medians).",
            sig3(th / task),
            sig3(th),
            sig3(task)
        ),
        _ => String::new(),
    }
}

pub fn memory_table(r: &Results<SweepRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let m = &rf.memory;
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
        let kernel = if k.is_thread() {
            let stack = r.estimate_of(|x| x.find(k)?.kernel_stack_per_task());
            linux_only(r.record, fmt_opt_estimate(stack, Unit::Bytes))
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
            kernel,
            theirs,
        ]);
    }
    anyhow::ensure!(
        !t.is_empty(),
        "no series had three sizes to fit a line through"
    );
    Ok(format!(
        "{}\nTheirs: the write-up's per-task figures at {} tasks, beside whole-process sizes \
         of {} (threads) and {} (async). That it divided those sizes is our inference; the \
         division gives {} and {}.\n\n{}\n",
        t.to_markdown(),
        fmt_count(m.tasks as u64),
        super::fmt_published_mib(m.thread_rss_bytes),
        super::fmt_published_mib(m.async_rss_bytes),
        fmt_bytes(m.thread_per_task_bytes),
        fmt_bytes(m.async_per_task_bytes),
        rf.attribution()
    ))
}

// ---------------------------------------------------------------------------------
// limits

pub fn limits_table(r: &Results<LimitsRound>) -> anyhow::Result<String> {
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
        ("vm.max_map_count (per process)", num(l.max_map_count), 4),
    ] {
        t.row([what.to_string(), v.words(), threads(v, per)]);
    }
    let guard = s
        .thread_guard
        .map_or("none".into(), |g| fmt_count(g as u64));
    for (what, v) in [
        (
            "threads on the whole system when measured",
            num(s.system_threads).words(),
        ),
        ("this chapter's thread guard", guard),
        (
            "this chapter's memory budget",
            fmt_bytes(s.memory_budget as f64),
        ),
    ] {
        t.row([what.to_string(), v, "–".into()]);
    }
    let mut md = t.to_markdown();
    md.push('\n');
    let unread = [s.fds_after_raise, l.pid_max, l.threads_max, l.max_map_count].contains(&None);
    let legend: Vec<&str> = [
        (
            [s.nproc, s.cgroup_pids].contains(&LimitValue::Unlimited),
            "*unlimited*: the limit reads `max` (or infinity).",
        ),
        (
            [s.nproc, s.cgroup_pids].contains(&LimitValue::NotSet),
            "*no limit set*: no such cgroup file, here or in a parent.",
        ),
        (
            unread || [s.nproc, s.cgroup_pids].contains(&LimitValue::NotReadable),
            "*not readable*: the value could not be read here.",
        ),
    ]
    .into_iter()
    .filter_map(|(shown, text)| shown.then_some(text))
    .collect();
    md.push_str(&legend.join(" "));
    if !s.thread_guard_reason.is_empty() {
        md.push_str(&format!(" The thread guard is {}.", s.thread_guard_reason));
    }
    md.push_str(&format!(
        " A brigade stops growing when its resident memory has grown by {}.\n",
        s.memory_budget_reason
    ));
    Ok(md)
}

/// What stopped one brigade's builds: a resource limit, an error, the time bound in
/// some rounds, or nothing.
fn stopped_by(runs: &[&LimitRun]) -> String {
    let timed_out = runs
        .iter()
        .filter(|x| x.stop.as_ref().is_some_and(|s| s.by_time()))
        .count();
    let time = format!("time bound ({timed_out} of {} rounds)", runs.len());
    let limit = runs.iter().find_map(|x| {
        x.stop
            .as_ref()
            .filter(|s| !s.by_time())
            .map(|s| s.limit.clone())
            .or_else(|| x.error.clone())
    });
    match (limit, timed_out) {
        (Some(l), 0) => l,
        (Some(l), _) => format!("{l}; {time}"),
        (None, 0) => "nothing: all built".into(),
        (None, _) => time,
    }
}

pub fn limit_runs_table(r: &Results<LimitsRound>) -> anyhow::Result<String> {
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
        let n = r.data().filter_map(|x| x.find(k)).map(|x| x.wanted).max();
        fmt_count(n.unwrap_or(0) as u64)
    };
    for k in PROBE_KINDS {
        let runs: Vec<&LimitRun> = r.data().filter_map(|x| x.find(k)).collect();
        if runs.is_empty() {
            continue;
        }
        let most = runs.iter().map(|x| x.built).max().unwrap_or(0) as u64;
        let members = r.estimate(&ProbeKey(k, Probe::Members)).map_or_else(
            || Formatted::plain(fmt_count(most)),
            |e| {
                let c = |x: f64| fmt_count(x as u64);
                match e.lo == e.hi {
                    true => Formatted::plain(c(e.median)),
                    false => {
                        Formatted::with_interval(c(e.median), format!("{}–{}", c(e.lo), c(e.hi)))
                    }
                }
            },
        );
        t.row(cells![
            k.short(),
            members,
            stopped_by(&runs),
            fmt_opt_estimate(r.estimate(&ProbeKey(k, Probe::PerHop)), Unit::Nanos),
            fmt_opt_estimate(r.estimate(&ProbeKey(k, Probe::BytesPerTask)), Unit::Bytes),
        ]);
    }
    anyhow::ensure!(!t.is_empty(), "no probe ran");
    let by_time = PROBE_KINDS.iter().any(|&k| {
        r.data()
            .filter_map(|x| x.find(k)?.stop.as_ref())
            .any(|s| s.by_time())
    });
    let legend = if by_time {
        " *Time bound*: in that many rounds the round's time ran out before every member \
         was built."
    } else {
        ""
    };
    Ok(format!(
        "{}\nAsked for: {} threads and {} async tasks.{legend} The write-up's largest: {} \
         async tasks, and {} threads after raising system limits by hand.\n",
        t.to_markdown(),
        asked(Kind::Thread),
        asked(Kind::AsyncCurrentPipe),
        fmt_count(rf.limits.largest_async_tasks as u64),
        fmt_count(rf.limits.largest_threads as u64),
    ))
}
