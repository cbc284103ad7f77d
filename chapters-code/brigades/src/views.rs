//! Tables and plots of the chapter, each from one experiment's stored data.

use crate::experiments::{Kind, LimitsData, SpawnData, SweepData, Variant, VariantsData, slope};
use harness::plot::{Axis, Plot, Series, Unit, quantile_cdf};
use harness::reference::{self, Compare, RefMachine, Source};
use harness::render::{Table, fmt_bytes, fmt_count, fmt_ns, fmt_ratio, sig3};
use harness::{Record, View, ViewKind};
use serde::Deserialize;

pub const VIEWS: &[View] = &[
    View {
        name: "variants",
        kind: ViewKind::Table,
        experiment: "variants",
        render: variants_table,
    },
    View {
        name: "reference",
        kind: ViewKind::Table,
        experiment: "variants",
        render: reference_table,
    },
    View {
        name: "switches",
        kind: ViewKind::Table,
        experiment: "variants",
        render: switches_table,
    },
    View {
        name: "pinning",
        kind: ViewKind::Table,
        experiment: "variants",
        render: pinning_table,
    },
    View {
        name: "hop-cdf",
        kind: ViewKind::Plot,
        experiment: "variants",
        render: hop_cdf,
    },
    View {
        name: "sweep-hop",
        kind: ViewKind::Plot,
        experiment: "sweep",
        render: sweep_hop_plot,
    },
    View {
        name: "sweep-memory",
        kind: ViewKind::Plot,
        experiment: "sweep",
        render: sweep_memory_plot,
    },
    View {
        name: "memory",
        kind: ViewKind::Table,
        experiment: "sweep",
        render: memory_table,
    },
    View {
        name: "limits",
        kind: ViewKind::Table,
        experiment: "limits",
        render: limits_table,
    },
    View {
        name: "limit-runs",
        kind: ViewKind::Table,
        experiment: "limits",
        render: limit_runs_table,
    },
    View {
        name: "spawn",
        kind: ViewKind::Table,
        experiment: "spawn",
        render: spawn_table,
    },
];

#[derive(Debug, Deserialize)]
pub struct Reference {
    pub source: Source,
    pub machines: Vec<RefMachine>,
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
    pub thread_hop_ns: f64,
    pub async_hop_ns: f64,
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
    pub thread_per_task_bytes: f64,
    pub async_per_task_bytes: f64,
}

#[derive(Debug, Deserialize)]
pub struct RefLimits {
    pub largest_async_tasks: usize,
    pub largest_threads: usize,
}

pub fn reference_data() -> anyhow::Result<Reference> {
    reference::parse(include_str!("../../../assets/reference/brigades.toml"))
}

fn attribution(r: &Reference) -> String {
    let m: Vec<&RefMachine> = r.machines.iter().collect();
    reference::attribution(&r.source, &m)
}

fn find(d: &VariantsData, kind: Kind) -> Option<&Variant> {
    d.variants
        .iter()
        .find(|v| v.kind == kind && v.laps.is_some())
}

fn hop(v: &Variant, x: f64) -> f64 {
    x / v.tasks.max(1) as f64
}

fn variants_table(r: &Record) -> anyhow::Result<String> {
    let d: VariantsData = r.data()?;
    let mut t = Table::new([
        "brigade",
        "link",
        "tasks",
        "laps",
        "mean / lap",
        "stddev",
        "p50 / lap",
        "p99 / lap",
        "max / lap",
        "mean / hop",
        "p50 / hop",
    ]);
    for v in &d.variants {
        match &v.laps {
            Some(s) => t.row([
                v.kind.label().to_string(),
                v.kind.link().to_string(),
                fmt_count(v.tasks as u64),
                fmt_count(s.n),
                fmt_ns(s.mean),
                fmt_ns(s.stddev),
                fmt_ns(s.p50),
                fmt_ns(s.p99),
                fmt_ns(s.max),
                fmt_ns(hop(v, s.mean)),
                fmt_ns(hop(v, s.p50)),
            ]),
            None => t.row([
                v.kind.label().to_string(),
                v.kind.link().to_string(),
                "–".into(),
                "–".into(),
                format!("did not run: {}", v.error.clone().unwrap_or_default()),
            ]),
        };
    }
    Ok(t.to_markdown())
}

fn reference_table(r: &Record) -> anyhow::Result<String> {
    let d: VariantsData = r.data()?;
    let rf = reference_data()?;
    let b = &rf.brigade;
    let get = |k: Kind, f: fn(&Variant, &harness::Summary) -> f64| {
        find(&d, k).and_then(|v| v.laps.as_ref().map(|s| f(v, s)))
    };
    let same_size = d.tasks == b.tasks;
    let lap_rows = [
        (
            "threads: mean per lap",
            b.thread_mean_ns,
            get(Kind::Thread, |_, s| s.mean),
        ),
        (
            "threads: stddev per lap",
            b.thread_stddev_ns,
            get(Kind::Thread, |_, s| s.stddev),
        ),
        (
            "async: mean per lap",
            b.async_mean_ns,
            get(Kind::AsyncMultiSocket, |_, s| s.mean),
        ),
        (
            "async: stddev per lap",
            b.async_stddev_ns,
            get(Kind::AsyncMultiSocket, |_, s| s.stddev),
        ),
    ];
    let mut rows: Vec<Compare> = Vec::new();
    for (label, theirs, yours) in lap_rows {
        rows.push(Compare {
            label: label.into(),
            theirs: Some(theirs),
            yours: if same_size { yours } else { None },
        });
    }
    rows.push(Compare {
        label: "threads: mean per hop".into(),
        theirs: Some(b.thread_hop_ns),
        yours: get(Kind::Thread, |v, s| hop(v, s.mean)),
    });
    rows.push(Compare {
        label: "async: mean per hop".into(),
        theirs: Some(b.async_hop_ns),
        yours: get(Kind::AsyncMultiSocket, |v, s| hop(v, s.mean)),
    });
    let mut md =
        reference::compare_table("what (socket-pair links)", "theirs", &rows, fmt_ns).to_markdown();
    let ratio = |t: Option<f64>, a: Option<f64>| match (t, a) {
        (Some(t), Some(a)) if t > 0.0 => Some(a / t),
        _ => None,
    };
    md.push_str(&format!(
        "| async ÷ threads, mean per hop | {} | {} | |\n",
        fmt_ratio(Some(b.async_mean_ns / b.thread_mean_ns)),
        fmt_ratio(ratio(
            get(Kind::Thread, |v, s| hop(v, s.mean)),
            get(Kind::AsyncMultiSocket, |v, s| hop(v, s.mean))
        )),
    ));
    md.push('\n');
    if !same_size {
        md.push_str(&format!(
            "Per-lap rows are left empty: this result has {} tasks, the write-up's {}; per-hop rows compare.\n\n",
            d.tasks, b.tasks
        ));
    }
    md.push_str(&attribution(&rf));
    md.push('\n');
    Ok(md)
}

fn switches_table(r: &Record) -> anyhow::Result<String> {
    let d: VariantsData = r.data()?;
    let rf = reference_data()?;
    let b = &rf.brigade;
    let mut t = Table::new([
        "brigade",
        "voluntary switches / hop",
        "involuntary switches / hop",
        "user CPU / hop",
        "system CPU / hop",
        "CPU ÷ wall",
    ]);
    for v in &d.variants {
        let (Some(u), Some(_)) = (v.per_hop, &v.laps) else {
            continue;
        };
        let hops = v
            .laps
            .as_ref()
            .map(|s| s.n as f64 * v.tasks as f64)
            .unwrap_or(1.0);
        let cpu = (u.user_ns + u.system_ns) * hops;
        t.row([
            v.kind.label().to_string(),
            sig3(u.voluntary_switches),
            sig3(u.involuntary_switches),
            fmt_ns(u.user_ns),
            fmt_ns(u.system_ns),
            if v.wall_ns > 0.0 {
                sig3(cpu / v.wall_ns)
            } else {
                "–".into()
            },
        ]);
    }
    let hops = (b.tasks * b.iterations) as f64;
    for (label, user, sys, wall) in [
        (
            "theirs: threads (`time`, whole run)",
            b.thread_user_s,
            b.thread_system_s,
            b.thread_elapsed_s,
        ),
        (
            "theirs: async (`time`, whole run)",
            b.async_user_s,
            b.async_system_s,
            b.async_elapsed_s,
        ),
    ] {
        t.row([
            label.to_string(),
            "–".into(),
            "–".into(),
            fmt_ns(user * 1e9 / hops),
            fmt_ns(sys * 1e9 / hops),
            sig3((user + sys) / wall),
        ]);
    }
    Ok(format!("{}\n{}\n", t.to_markdown(), attribution(&rf)))
}

fn pinning_table(r: &Record) -> anyhow::Result<String> {
    let d: VariantsData = r.data()?;
    let mut t = Table::new([
        "threads",
        "p50 / hop",
        "mean / hop",
        "p99 / lap",
        "switches / hop",
        "speed-up (p50)",
    ]);
    let base = find(&d, Kind::Thread).and_then(|v| v.laps.as_ref().map(|s| hop(v, s.p50)));
    for k in [Kind::Thread, Kind::ThreadPinned] {
        let Some(v) = find(&d, k) else {
            t.row([k.label().to_string(), "did not run".into()]);
            continue;
        };
        let s = v.laps.as_ref().expect("found only with laps");
        let sw = v
            .per_hop
            .map(|u| sig3(u.voluntary_switches + u.involuntary_switches))
            .unwrap_or_else(|| "–".into());
        t.row([
            k.label().to_string(),
            fmt_ns(hop(v, s.p50)),
            fmt_ns(hop(v, s.mean)),
            fmt_ns(s.p99),
            sw,
            fmt_ratio(base.and_then(|b| harness::stats::speedup(b, hop(v, s.p50)))),
        ]);
    }
    Ok(t.to_markdown())
}

fn hop_cdf(r: &Record) -> anyhow::Result<String> {
    let d: VariantsData = r.data()?;
    quantile_cdf(
        "Distribution of the time per hop (lap time ÷ tasks)",
        "time per hop (log scale)",
        "fraction of laps ≤ time",
        d.variants
            .iter()
            .map(|v| (v.kind.label().to_string(), v.hop_quantiles.as_slice())),
    )
    .to_svg()
}

fn sweep_hop_plot(r: &Record) -> anyhow::Result<String> {
    let d: SweepData = r.data()?;
    let mut plot = Plot::new(
        "Time per hop against brigade size",
        "tasks (log scale)",
        "median lap ÷ tasks",
    )
    .x(Axis::Log, Unit::Number)
    .y(Axis::Log, Unit::Nanos);
    for s in &d.series {
        let pts = s
            .points
            .iter()
            .map(|p| (p.tasks as f64, p.hop_p50_ns))
            .collect();
        plot = plot.series(Series::new(
            format!("{} ({})", s.kind.label(), s.kind.link()),
            pts,
        ));
    }
    plot.to_svg()
}

fn sweep_memory_plot(r: &Record) -> anyhow::Result<String> {
    let d: SweepData = r.data()?;
    let mut plot = Plot::new(
        "Resident memory added per task",
        "tasks (log scale)",
        "resident bytes added ÷ tasks",
    )
    .x(Axis::Log, Unit::Number)
    .y(Axis::Log, Unit::Bytes);
    for s in &d.series {
        let pts = s
            .points
            .iter()
            .filter_map(|p| Some((p.tasks as f64, p.resident_delta? / p.tasks as f64)))
            .filter(|p| p.1 > 0.0)
            .collect();
        plot = plot.series(Series::new(
            format!("{} ({})", s.kind.label(), s.kind.link()),
            pts,
        ));
    }
    plot.to_svg()
}

fn memory_table(r: &Record) -> anyhow::Result<String> {
    let d: SweepData = r.data()?;
    let rf = reference_data()?;
    let m = &rf.memory;
    let mut t = Table::new([
        "brigade",
        "points",
        "fitted resident bytes / task",
        "largest size",
        "resident added there",
        "kernel stacks / task",
        "theirs / task",
    ]);
    for s in &d.series {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|p| Some((p.tasks as f64, p.resident_delta?)))
            .collect();
        let ks: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|p| Some((p.tasks as f64, p.kernel_stack_delta?)))
            .collect();
        let last = s.points.last();
        let theirs = match s.kind {
            Kind::Thread => fmt_bytes(m.thread_per_task_bytes),
            Kind::AsyncMultiSocket => fmt_bytes(m.async_per_task_bytes),
            _ => "–".into(),
        };
        t.row([
            format!("{} ({})", s.kind.label(), s.kind.link()),
            pts.len().to_string(),
            slope(&pts).map(fmt_bytes).unwrap_or_else(|| "–".into()),
            last.map(|p| fmt_count(p.tasks as u64))
                .unwrap_or_else(|| "–".into()),
            last.and_then(|p| p.resident_delta)
                .map(fmt_bytes)
                .unwrap_or_else(|| "–".into()),
            if s.kind.is_thread() {
                slope(&ks).map(fmt_bytes).unwrap_or_else(|| "–".into())
            } else {
                "–".into()
            },
            theirs,
        ]);
    }
    Ok(format!(
        "{}\nTheirs: {} resident for {} threads and {} for {} async tasks, divided by the task count \
         (at {} tasks: {} and {}, whole process). {}\n",
        t.to_markdown(),
        fmt_bytes(m.thread_rss_bytes),
        fmt_count(m.tasks as u64),
        fmt_bytes(m.async_rss_bytes),
        fmt_count(m.tasks as u64),
        rf.brigade.tasks,
        fmt_bytes(rf.brigade.thread_rss_bytes),
        fmt_bytes(rf.brigade.async_rss_bytes),
        attribution(&rf)
    ))
}

fn limits_table(r: &Record) -> anyhow::Result<String> {
    let d: LimitsData = r.data()?;
    let l = &d.limits;
    let num = |v: Option<u64>| {
        v.map(fmt_count)
            .unwrap_or_else(|| "not set or not readable".into())
    };
    let per_thread = |v: Option<u64>, div: u64| {
        v.map(|x| format!("≈ {} threads", fmt_count(x / div)))
            .unwrap_or_else(|| "–".into())
    };
    let mut t = Table::new(["limit", "value here", "allows a thread brigade of"]);
    t.row([
        "open files, soft limit after raising it to the hard one".into(),
        num(d.fds_after_raise),
        per_thread(d.fds_after_raise, 2) + " (two descriptors per socket pair)",
    ]);
    t.row([
        "open files, hard limit".into(),
        num(l.open_files_hard),
        "–".into(),
    ]);
    t.row([
        "cgroup pids.max".into(),
        num(l.cgroup_pids_max),
        per_thread(l.cgroup_pids_max, 1),
    ]);
    t.row([
        "kernel.pid_max (system-wide)".into(),
        num(l.pid_max),
        per_thread(l.pid_max, 1),
    ]);
    t.row([
        "kernel.threads-max (system-wide)".into(),
        num(l.threads_max),
        per_thread(l.threads_max, 1),
    ]);
    t.row([
        "vm.max_map_count (per process)".into(),
        num(l.max_map_count),
        per_thread(l.max_map_count, 2),
    ]);
    t.row([
        "processes per user (RLIMIT_NPROC)".into(),
        num(l.processes_soft),
        per_thread(l.processes_soft, 1),
    ]);
    t.row([
        "memory".into(),
        l.memory_total
            .map(|b| fmt_bytes(b as f64))
            .unwrap_or_else(|| "–".into()),
        "–".into(),
    ]);
    t.row([
        "threads running on the whole system when measured".into(),
        num(d.system_threads),
        "–".into(),
    ]);
    t.row([
        "this chapter's guard (leaves room for everyone else)".into(),
        if d.thread_guard == usize::MAX {
            "none".into()
        } else {
            fmt_count(d.thread_guard as u64)
        },
        if d.thread_guard_reason.is_empty() {
            "–".into()
        } else {
            d.thread_guard_reason.clone()
        },
    ]);
    Ok(t.to_markdown())
}

fn limit_runs_table(r: &Record) -> anyhow::Result<String> {
    let d: LimitsData = r.data()?;
    let rf = reference_data()?;
    let mut t = Table::new([
        "brigade",
        "link",
        "asked for",
        "ran with",
        "stopped by",
        "build time",
        "resident added",
        "mean / hop",
        "theirs, largest",
    ]);
    for run in &d.runs {
        let theirs = match run.kind {
            k if k.is_thread() => fmt_count(rf.limits.largest_threads as u64),
            _ => fmt_count(rf.limits.largest_async_tasks as u64),
        };
        let stopped = match (&run.stop, &run.error) {
            (Some(s), _) => s.limit.clone(),
            (None, Some(e)) => format!("error: {e}"),
            (None, None) => "nothing: every member was built".into(),
        };
        t.row([
            run.kind.label().to_string(),
            run.kind.link().to_string(),
            fmt_count(run.wanted as u64),
            fmt_count(run.built as u64),
            stopped,
            fmt_ns(run.build_ns),
            run.resident.map(fmt_bytes).unwrap_or_else(|| "–".into()),
            run.laps
                .as_ref()
                .map(|s| fmt_ns(s.mean / run.built.max(1) as f64))
                .unwrap_or_else(|| "–".into()),
            theirs,
        ]);
    }
    Ok(format!("{}\n{}\n", t.to_markdown(), attribution(&rf)))
}

fn spawn_table(r: &Record) -> anyhow::Result<String> {
    let d: SpawnData = r.data()?;
    let mut t = Table::new([
        "what",
        "per batch",
        "batches",
        "mean per spawn ± 99.9 % CI",
        "p50 of batches",
    ]);
    for row in &d.rows {
        match &row.per_spawn {
            Some(m) => t.row([
                row.what.clone(),
                fmt_count(row.per_batch as u64),
                m.n.to_string(),
                format!("{} ± {}", fmt_ns(m.mean), fmt_ns(m.half_width)),
                row.p50_ns.map(fmt_ns).unwrap_or_else(|| "–".into()),
            ]),
            None => t.row([
                row.what.clone(),
                fmt_count(row.per_batch as u64),
                "0".into(),
                "did not run".into(),
            ]),
        };
    }
    Ok(t.to_markdown())
}
