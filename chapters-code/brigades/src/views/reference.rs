//! The write-up's published numbers, and the table that puts yours beside them.

use super::{median_cell, per_variant};
use crate::Kind;
use crate::experiments::VariantsRound;
use harness::cells;
use harness::reference::Published;
use harness::render::{Table, fmt_count, fmt_opt_estimate, fmt_ratio_estimate, sig3};
use harness::{Results, Unit};
use serde::Deserialize;

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
    Published::load(include_str!("../../../../assets/reference/brigades.toml"))
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

/// The write-up's published figures beside yours: its thread brigade beside your
/// unpinned one, its async brigade beside your multi-thread socket brigade.
pub fn reference_table(r: &Results<VariantsRound>) -> anyhow::Result<String> {
    let rf = reference_data()?;
    let b = &rf.brigade;
    let same_size = r.param("tasks") == Some(b.tasks as f64);
    let at_size = |f: fn(&crate::experiments::Variant) -> Option<f64>, k: Kind| {
        if same_size {
            fmt_opt_estimate(per_variant(r, k, f), Unit::Nanos)
        } else {
            "–".into()
        }
    };
    let per_task = |v: &crate::experiments::Variant| v.lap_mean_ns / v.tasks.max(1) as f64;
    // Async ÷ threads of each round, mean per hop, against one thread brigade.
    let ratio = |th: Kind| {
        r.estimate_of(|x| {
            let (t, a) = (x.find(th)?, x.find(Kind::AsyncMultiSocket)?);
            (t.lap_mean_ns > 0.0).then(|| per_task(a) / per_task(t))
        })
        .map_or_else(|| "–".into(), |e| fmt_ratio_estimate(&e))
    };
    let mut t = Table::new(["what", "theirs", "yours"]);
    let (th, am, pin) = (Kind::Thread, Kind::AsyncMultiSocket, Kind::ThreadOneCpu);
    for (k, who, mean, sd) in [
        (th, "threads", b.thread_mean_ns, b.thread_stddev_ns),
        (am, "async", b.async_mean_ns, b.async_stddev_ns),
    ] {
        t.row(cells![
            format!("{who}: mean lap"),
            fmt_published_ns(mean),
            at_size(|v| Some(v.lap_mean_ns), k),
        ]);
        t.row(cells![
            format!("{who}: standard deviation of laps"),
            fmt_published_ns(sd),
            at_size(|v| (v.laps >= 2).then_some(v.lap_stddev_ns), k),
        ]);
    }
    for (k, who, stated, divided) in [
        (th, "threads", b.thread_hop_ns, b.thread_lap_div_tasks_ns),
        (am, "async", b.async_hop_ns, b.async_lap_div_tasks_ns),
        (pin, "threads on one CPU", f64::NAN, f64::NAN),
    ] {
        let theirs = if stated.is_nan() {
            "–".to_string()
        } else {
            format!(
                "{}; {}",
                fmt_published_ns(stated),
                fmt_published_ns(divided)
            )
        };
        t.row(cells![
            format!("{who}: mean lap ÷ members"),
            theirs,
            fmt_opt_estimate(per_variant(r, k, |v| Some(per_task(v))), Unit::Nanos),
        ]);
    }
    t.row(cells![
        "async ÷ threads (placement differs)",
        format!("≈ {} (as stated)", b.async_over_thread_published),
        ratio(th),
    ]);
    t.row(cells!["async ÷ threads on one CPU", "–", ratio(pin)]);
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
    let size = if same_size {
        String::new()
    } else {
        format!(
            " The per-lap rows stay empty: this result has {} members, the write-up's {}.",
            fmt_count(r.param("tasks").unwrap_or(0.0) as u64),
            b.tasks
        )
    };
    Ok(format!(
        "{}\n*Threads* is your unpinned thread brigade. *Async* is your multi-thread socket \
         brigade; that theirs ran on that runtime is our reading. Theirs per hop: the \
         figure it states, then its mean lap ÷ {} (our division).{size} Its thread brigade \
         kept more than one CPU busy, its async brigade about one: its ratio mixes \
         placement.\n\n{}\n",
        t.to_markdown(),
        b.tasks,
        rf.attribution()
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
    fn published_durations_keep_their_digits() {
        assert_eq!(fmt_published_ns(2_763_000.0), "2.763 ms");
        assert_eq!(fmt_published_ns(537_584.0), "537.584 µs");
        assert_eq!(fmt_published_ns(5_500.0), "5.5 µs");
        assert_eq!(fmt_published_ns(1_858_000.0), "1.858 ms");
    }
}
