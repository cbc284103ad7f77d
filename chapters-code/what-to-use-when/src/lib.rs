//! The closing chapter: a decision guide whose every number and every comparison is
//! computed from the reader's own results, read from the same cache the chapters use
//! (and measured when missing). Nothing here states a conclusion the data did not
//! produce; where a number is missing, the guide says so.
//!
//! The chapters' data is read as JSON by field name, so a field a chapter renames
//! shows up here as "not available" rather than a wrong number.

use harness::record::Status;
use harness::render::{Table, fmt_bytes, fmt_count, fmt_ns, fmt_ratio, provenance_line, sig3};
use harness::{Profile, Record};
use serde_json::Value;
use std::path::Path;

/// The guide's sections, in page order.
pub const SECTIONS: [&str; 5] = ["waiting", "handoffs", "sleeps", "throttles", "locks"];

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}
fn f(v: &Value, path: &[&str]) -> Option<f64> {
    get(v, path)?.as_f64()
}
fn s<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(v, path)?.as_str()
}
fn list<'a>(r: &'a Record, key: &str) -> Vec<&'a Value> {
    r.data
        .get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}
fn ns(x: Option<f64>) -> String {
    x.map(fmt_ns).unwrap_or_else(|| "not available".into())
}
fn pct(x: f64) -> String {
    format!("{} %", sig3(x * 100.0))
}

/// The records one section reads, obtained (measured if missing) through the harness.
pub struct Inputs {
    records: Vec<Record>,
    missing: Vec<String>,
}

impl Inputs {
    pub fn obtain(wanted: &[(&str, &str)], profile: Profile, dir: &Path) -> Inputs {
        let mut records = Vec::new();
        let mut missing = Vec::new();
        for (chapter, experiment) in wanted {
            match all_results::chapter(chapter)
                .and_then(|ch| all_results::record(ch, experiment, profile, dir))
            {
                Some(r) => records.push(r),
                None => missing.push(format!("{chapter}/{experiment}")),
            }
        }
        Inputs { records, missing }
    }

    /// A successful record, or `None` (its failure is reported by [`Inputs::footer`]).
    fn ok(&self, chapter: &str, experiment: &str) -> Option<&Record> {
        self.records
            .iter()
            .find(|r| r.chapter == chapter && r.experiment == experiment && r.is_ok())
    }

    /// Notes for anything unavailable, then one provenance line per record used.
    fn footer(&self) -> String {
        let mut out = String::new();
        for m in &self.missing {
            out.push_str(&format!(
                "> **Not available:** the experiment `{m}` no longer exists in its chapter.\n\n"
            ));
        }
        for r in &self.records {
            match &r.status {
                Status::Ok => {}
                Status::Failed { error } => out.push_str(&format!(
                    "> **Not available on this machine:** `{}/{}` failed: {error}\n\n",
                    r.chapter, r.experiment
                )),
                Status::TimedOut { bound_s } => out.push_str(&format!(
                    "> **Not available on this machine:** `{}/{}` did not finish within {bound_s:.0} s.\n\n",
                    r.chapter, r.experiment
                )),
            }
        }
        for r in &self.records {
            out.push_str(&provenance_line(r));
        }
        out
    }
}

fn unavailable(what: &str) -> String {
    format!("> **Not available:** {what} is missing from this machine's results.\n\n")
}

/// (chapter, experiment) a section reads.
type Wanted = (&'static str, &'static str);
/// A section's renderer.
type Render = fn(&Inputs) -> String;

/// Renders one section, measuring whatever it needs that is not cached.
pub fn section(name: &str, profile: Profile, dir: &Path) -> Option<String> {
    let (wanted, render): (&[Wanted], Render) = match name {
        "waiting" => (
            &[
                ("spinning-vs-sleeping", "variants"),
                ("spinning-vs-sleeping", "gaps"),
                ("spinning-vs-sleeping", "floor"),
            ],
            waiting,
        ),
        "handoffs" => (
            &[
                ("brigades", "variants"),
                ("brigades", "sweep"),
                ("brigades", "limits"),
            ],
            handoffs,
        ),
        "sleeps" => (
            &[("short-sleeps", "calls"), ("short-sleeps", "sweep")],
            sleeps,
        ),
        "throttles" => (
            &[("throttles", "rates"), ("throttles", "omission")],
            throttles,
        ),
        "locks" => (&[("async-locks", "designs")], locks),
        _ => return None,
    };
    let inputs = Inputs::obtain(wanted, profile, dir);
    Some(format!("{}\n{}", render(&inputs), inputs.footer()))
}

fn cores(run: &Value) -> Option<f64> {
    let cpu = f(run, &["outcome", "cpu_ns"])?;
    let wall = f(run, &["outcome", "wall_ns"])?;
    (wall > 0.0).then(|| cpu / wall)
}

/// Blocking against spinning: the wake-up cost, and the CPU the spinning burns.
pub fn waiting(i: &Inputs) -> String {
    let mut out = String::new();
    let Some(v) = i.ok("spinning-vs-sleeping", "variants") else {
        return unavailable("the blocking-vs-spinning comparison");
    };
    let runs = list(v, "runs");
    let find = |t: &str, rt: &str, w: &str| {
        runs.iter().copied().find(|r| {
            s(r, &["transport"]) == Some(t)
                && s(r, &["runtime"]) == Some(rt)
                && s(r, &["wait"]) == Some(w)
        })
    };
    let mut t = Table::new([
        "channel",
        "blocking p50",
        "spinning p50",
        "blocking ÷ spinning",
        "difference",
        "cores busy, spinning",
        "cores busy, blocking",
    ]);
    let mut pairs = 0;
    let mut spin_wins = 0;
    let mut pairs_seen: Vec<(String, String)> = Vec::new();
    for r in &runs {
        let (Some(tr), Some(rt)) = (s(r, &["transport"]), s(r, &["runtime"])) else {
            continue;
        };
        if pairs_seen.iter().any(|(a, b)| a == tr && b == rt) {
            continue;
        }
        pairs_seen.push((tr.into(), rt.into()));
        let (Some(b), Some(sp)) = (find(tr, rt, "Block"), find(tr, rt, "Spin")) else {
            continue;
        };
        let (Some(bp), Some(sp50)) = (f(b, &["summary", "p50"]), f(sp, &["summary", "p50"])) else {
            continue;
        };
        pairs += 1;
        if sp50 < bp {
            spin_wins += 1;
        }
        t.row([
            format!("{} · {}", pretty(rt), pretty(tr)),
            fmt_ns(bp),
            fmt_ns(sp50),
            fmt_ratio(Some(bp / sp50)),
            fmt_ns(bp - sp50),
            cores(sp).map(sig3).unwrap_or_else(|| "–".into()),
            cores(b).map(sig3).unwrap_or_else(|| "–".into()),
        ]);
    }
    let cpus = v.provenance.machine.logical_cpus.max(1);
    let gap = v
        .params
        .iter()
        .find(|(k, _)| k == "gap_ms")
        .map(|(_, g)| format!("{g} ms"))
        .unwrap_or_else(|| "the chapter's".into());
    match (find("Mpsc", "Std", "Block"), find("Mpsc", "Std", "Spin")) {
        (Some(b), Some(sp)) => {
            let bp = f(b, &["summary", "p50"]).unwrap_or(f64::NAN);
            let sp50 = f(sp, &["summary", "p50"]).unwrap_or(f64::NAN);
            out.push_str(&format!(
                "**On this machine**, after a {gap} pause, a blocking `std::sync::mpsc` receive \
                 returned a median of **{}** after the send, and a spinning one **{}**. ",
                fmt_ns(bp),
                fmt_ns(sp50)
            ));
            if sp50 < bp {
                out.push_str(&format!(
                    "Blocking cost **{}** the spinning wait: about **{}** of wake-up per message. ",
                    fmt_ratio(Some(bp / sp50)),
                    fmt_ns(bp - sp50)
                ));
            } else {
                out.push_str(
                    "Here spinning was **not** faster at the median — on a machine this busy or \
                     this small, the spinner competes with the sender for a CPU. ",
                );
            }
            if let (Some(cs), Some(cb)) = (cores(sp), cores(b)) {
                out.push_str(&format!(
                    "While it waited, the spinning process kept **{} cores** busy on average, \
                     the blocking one {}. With {cpus} logical CPUs here, one spinning waiter \
                     takes about {} of the machine.\n\n",
                    sig3(cs),
                    sig3(cb),
                    pct(1.0 / cpus as f64)
                ));
            } else {
                out.push_str("(The CPU time of the runs is not available on this system.)\n\n");
            }
        }
        _ => out.push_str(&unavailable("the std channel pair")),
    }
    if pairs > 0 {
        out.push_str(&format!(
            "Across the {pairs} channel kinds measured, spinning gave the lower median in \
             **{spin_wins} of {pairs}**.\n\n"
        ));
        out.push_str(&t.to_markdown());
        out.push_str(
            "\n\"Cores busy\" is the process's CPU time divided by the run's wall time: \
             1 means one CPU fully used for the whole run.\n\n",
        );
    }
    if let Some(g) = i.ok("spinning-vs-sleeping", "gaps") {
        let gr = list(g, "runs");
        let longest = gr
            .iter()
            .filter_map(|r| f(r, &["gap_ns"]))
            .fold(f64::NAN, f64::max);
        let at = |w: &str| {
            gr.iter().copied().find(|r| {
                s(r, &["transport"]) == Some("Mpsc")
                    && s(r, &["wait"]) == Some(w)
                    && f(r, &["gap_ns"]) == Some(longest)
            })
        };
        if let (Some(h), Some(b), Some(sp)) = (at("Hybrid"), at("Block"), at("Spin")) {
            out.push_str(&format!(
                "**Spin, then block.** After {} pauses, a receiver that spins briefly and then \
                 blocks had a median of **{}** (blocking: {}, spinning: {}) while keeping {} \
                 cores busy (blocking: {}, spinning: {}).\n\n",
                fmt_ns(longest),
                ns(f(h, &["summary", "p50"])),
                ns(f(b, &["summary", "p50"])),
                ns(f(sp, &["summary", "p50"])),
                cores(h).map(sig3).unwrap_or_else(|| "–".into()),
                cores(b).map(sig3).unwrap_or_else(|| "–".into()),
                cores(sp).map(sig3).unwrap_or_else(|| "–".into()),
            ));
        }
    }
    if let Some(fl) = i.ok("spinning-vs-sleeping", "floor") {
        let best = list(fl, "runs")
            .iter()
            .filter_map(|r| f(r, &["summary", "p50"]))
            .fold(f64::NAN, f64::min);
        if best.is_finite() {
            out.push_str(&format!(
                "**The floor.** Two spinning threads handing over through one atomic variable \
                 needed **{}** one way (best median). Whatever a channel costs above that is \
                 the price of the library and the operating system.\n\n",
                fmt_ns(best)
            ));
        }
    }
    out.push_str(&if pairs == 0 {
        String::new()
    } else if spin_wins * 2 > pairs {
        format!(
            "**So, here:** spinning won the median in most channel kinds, at the price of the \
             cores in the spinning column — with {cpus} logical CPUs, spin only where a CPU per \
             waiter is free and the difference column matters; block elsewhere.\n"
        )
    } else {
        format!(
            "**So, here:** spinning won the median in only {spin_wins} of {pairs} channel kinds \
             and burned the cores in the spinning column: on this machine, block.\n"
        )
    });
    out
}

/// Threads against async tasks: the cost of a hand-off, memory per waiter, limits.
pub fn handoffs(i: &Inputs) -> String {
    let mut out = String::new();
    let Some(v) = i.ok("brigades", "variants") else {
        return unavailable("the brigade comparison");
    };
    let variants = list(v, "variants");
    let hop = |kind: &str| {
        variants
            .iter()
            .find(|x| s(x, &["kind"]) == Some(kind))
            .and_then(|x| Some(f(x, &["laps", "p50"])? / f(x, &["tasks"])?))
    };
    let mut t = Table::new(["brigade", "per hop (median lap ÷ tasks)", "vs threads"]);
    let thread = hop("Thread");
    for x in &variants {
        let Some(kind) = s(x, &["kind"]) else {
            continue;
        };
        if let Some(h) = hop(kind) {
            t.row([pretty(kind), fmt_ns(h), fmt_ratio(thread.map(|th| th / h))]);
        }
    }
    match (
        thread,
        hop("AsyncCurrentSocket"),
        hop("AsyncCurrentChannel"),
    ) {
        (Some(th), Some(a), ch) => {
            out.push_str(&format!(
                "**On this machine**, passing a token from one OS thread to the next through a \
                 socket took **{}** per hop; between async tasks on a current-thread runtime, \
                 through the same kind of socket, **{}** — {} less. ",
                fmt_ns(th),
                fmt_ns(a),
                fmt_ratio(Some(th / a))
            ));
            if let Some(c) = ch {
                out.push_str(&format!(
                    "Through an in-memory async channel, with no system call at all, **{}** \
                     ({} less than threads).",
                    fmt_ns(c),
                    fmt_ratio(Some(th / c))
                ));
            }
            out.push_str("\n\n");
        }
        _ => out.push_str(&unavailable("the thread or async brigade")),
    }
    out.push_str(&t.to_markdown());
    out.push('\n');
    if let Some(sw) = i.ok("brigades", "sweep") {
        let per_task = |kind: &str| {
            list(sw, "series")
                .into_iter()
                .find(|x| s(x, &["kind"]) == Some(kind))
                .and_then(|x| {
                    let p = x.get("points")?.as_array()?.iter().max_by(|a, b| {
                        f(a, &["tasks"])
                            .unwrap_or(0.0)
                            .total_cmp(&f(b, &["tasks"]).unwrap_or(0.0))
                    })?;
                    let n = f(p, &["tasks"])?;
                    let mem =
                        f(p, &["resident_delta"])? + f(p, &["kernel_stack_delta"]).unwrap_or(0.0);
                    Some((n, mem / n))
                })
        };
        match (per_task("Thread"), per_task("AsyncCurrentSocket")) {
            (Some((nt, mt)), Some((na, ma))) => out.push_str(&format!(
                "**Memory per waiter.** At the largest sizes measured ({} threads, {} tasks), \
                 each thread added about **{}** (resident memory plus kernel stack) and each \
                 async task about **{}**. Ten thousand waiters would need about {} as threads \
                 and {} as tasks.\n\n",
                fmt_count(nt as u64),
                fmt_count(na as u64),
                fmt_bytes(mt),
                fmt_bytes(ma),
                fmt_bytes(mt * 1e4),
                fmt_bytes(ma * 1e4),
            )),
            _ => out.push_str(&unavailable("memory per thread or per task")),
        }
    }
    if let Some(l) = i.ok("brigades", "limits") {
        for r in list(l, "runs") {
            let (Some(kind), Some(built), Some(wanted)) =
                (s(r, &["kind"]), f(r, &["built"]), f(r, &["wanted"]))
            else {
                continue;
            };
            let why = match (r.get("stop"), r.get("error")) {
                (Some(Value::Null) | None, Some(Value::Null) | None) => String::new(),
                (Some(stop), _) if !stop.is_null() => format!(", stopped by {}", brief(stop)),
                (_, Some(e)) => format!(", stopped by {}", brief(e)),
                _ => String::new(),
            };
            out.push_str(&format!(
                "- {kind}: {} of the {} asked for ran here{why}.\n",
                fmt_count(built as u64),
                fmt_count(wanted as u64)
            ));
        }
        out.push('\n');
    }
    if let (Some(th), Some(a)) = (thread, hop("AsyncCurrentSocket")) {
        out.push_str(&if a < th {
            format!(
                "**So, here:** an async hand-off was {} cheaper than a thread hand-off. For a \
                 few waiters that mostly compute, that difference is small against the work; for \
                 thousands of waiters that mostly wait, it and the memory line decide for async \
                 tasks.\n",
                fmt_ratio(Some(th / a))
            )
        } else {
            "**So, here:** async tasks did not hand off faster than threads on this machine; \
             choose by memory and by the limits above rather than by speed.\n"
                .to_string()
        });
    }
    out
}

/// A chapter's serialised variant name as a reader's label: the chapters' own words
/// where this guide quotes them, else the name split into lower-case words
/// (`DebtAsPublished` → `debt as published`).
pub fn pretty(raw: &str) -> String {
    let known = match raw {
        "Thread" => "threads",
        "ThreadPinned" => "threads, all on one CPU",
        "AsyncMultiSocket" => "async tasks, multi-thread runtime",
        "AsyncCurrentSocket" => "async tasks, current-thread runtime",
        "AsyncMultiChannel" => "async channels, multi-thread runtime",
        "AsyncCurrentChannel" => "async channels, current-thread runtime",
        "AsyncCurrentPipe" => "async in-memory pipes, current-thread runtime",
        "OneThread" => "one thread does all the I/O",
        "Sleep" => "std::thread::sleep",
        "SleepMinSlack" => "std::thread::sleep, slack 1 ns",
        "TimerFd" => "timerfd",
        "Hybrid" => "sleep, then spin",
        "Naive" => "naive: op; sleep(period)",
        "Deadline" => "deadline Throttle",
        "Governor" => "governor, burst 1",
        "GovernorBurst" => "governor, burst 10 ms",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    let mut out = String::new();
    for (i, c) in raw.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn brief(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string().replace(['{', '}', '"'], ""),
    }
}

/// How long a short sleep really takes, and which timer gets closest.
pub fn sleeps(i: &Inputs) -> String {
    let mut out = String::new();
    let Some(c) = i.ok("short-sleeps", "calls") else {
        return unavailable("the per-call sleep costs");
    };
    let rows = list(c, "rows");
    let cost = |id: &str, slack: &str| {
        rows.iter()
            .find(|r| s(r, &["id"]) == Some(id) && s(r, &["slack"]) == Some(slack))
            .and_then(|r| f(r, &["per_call", "mean"]))
    };
    let slack = f(&c.data, &["thread_slack_ns"]);
    out.push_str(&format!(
        "**On this machine**, `std::thread::sleep` asked for 1 ns took **{}** per call \
         (timer slack of the thread: {}). With the thread's timer slack set to 1 ns it took \
         **{}**. A re-armed `timerfd` took {}; `sched_yield` {}; `sleep(0)` {}. A tokio sleep \
         of 1 ns took **{}**, and a `std::thread::sleep` of 1 ms {}.\n\n",
        ns(cost("std-sleep-1ns", "Default")),
        ns(slack),
        ns(cost("std-sleep-1ns", "OneNs")),
        ns(cost("timerfd-reuse-1ns", "Default")),
        ns(cost("sched-yield", "Default")),
        ns(cost("std-sleep-0", "Default")),
        ns(cost("tokio-sleep-1ns", "Default")),
        ns(cost("std-sleep-1ms", "Default")),
    ));
    if let Some(sw) = i.ok("short-sleeps", "sweep") {
        let pts = list(sw, "points");
        let mut t = Table::new([
            "sleep",
            "smallest request within 10 % (median)",
            "median overshoot at that size",
            "smallest overshoot seen",
        ]);
        for mode in ["Sleep", "SleepMinSlack", "TimerFd", "Hybrid"] {
            let mut ps: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| s(p, &["mode"]) == Some(mode))
                .filter_map(|p| Some((f(p, &["request_ns"])?, f(p, &["actual", "p50"])?)))
                .collect();
            if ps.is_empty() {
                continue;
            }
            ps.sort_by(|a, b| a.0.total_cmp(&b.0));
            // The smallest request from which every longer one also stays within 10 %.
            let ok_from = (0..ps.len())
                .find(|&k| ps[k..].iter().all(|(r, a)| (a - r) <= 0.1 * r))
                .map(|k| ps[k]);
            let least = ps.iter().map(|(r, a)| a - r).fold(f64::NAN, f64::min);
            t.row([
                pretty(mode),
                ok_from
                    .map(|p| fmt_ns(p.0))
                    .unwrap_or_else(|| "none measured".into()),
                ok_from
                    .map(|p| fmt_ns(p.1 - p.0))
                    .unwrap_or_else(|| "–".into()),
                fmt_ns(least),
            ]);
        }
        if !t.is_empty() {
            out.push_str(&t.to_markdown());
            out.push('\n');
        }
    }
    out.push_str(
        "**So:** a sleep shorter than the first column above is really a sleep of the \
         overshoot beside it. Below that, either accept the overshoot, lower the timer slack \
         (Linux), or sleep to just before the deadline and spin the rest (the hybrid), \
         paying its CPU.\n",
    );
    out
}

/// Holding a rate: which pacer gets the rate it asks for, and what hides stalls.
pub fn throttles(i: &Inputs) -> String {
    let mut out = String::new();
    let Some(r) = i.ok("throttles", "rates") else {
        return unavailable("the throttle comparison");
    };
    let runs = list(r, "runs");
    let mut targets: Vec<f64> = runs.iter().filter_map(|x| f(x, &["target"])).collect();
    targets.sort_by(f64::total_cmp);
    targets.dedup();
    let mut pacers: Vec<&str> = Vec::new();
    for x in &runs {
        if let Some(p) = s(x, &["pacer"])
            && !pacers.contains(&p)
        {
            pacers.push(p);
        }
    }
    let achieved = |p: &str, t: f64| {
        runs.iter()
            .find(|x| s(x, &["pacer"]) == Some(p) && f(x, &["target"]) == Some(t))
            .and_then(|x| f(x, &["achieved"]))
    };
    let mut headers = vec!["pacer".to_string()];
    headers.extend(
        targets
            .iter()
            .map(|t| format!("{} ops/s", fmt_count(*t as u64))),
    );
    let mut table = Table::new(headers);
    for p in &pacers {
        let mut row = vec![pretty(p)];
        for t in &targets {
            row.push(
                achieved(p, *t)
                    .map(|a| pct(a / t))
                    .unwrap_or_else(|| "–".into()),
            );
        }
        table.row(row);
    }
    let within = |p: &str| {
        targets
            .iter()
            .copied()
            .take_while(|t| achieved(p, *t).is_some_and(|a| (a - t).abs() <= 0.02 * t))
            .last()
    };
    if targets.contains(&1000.0) {
        out.push_str(&format!(
            "**On this machine**, asked for 1,000 operations a second, the naive loop \
             (`op; sleep(1 ms)`) achieved **{}** of the rate; the deadline throttle **{}**. ",
            achieved("Naive", 1000.0)
                .map(|a| pct(a / 1000.0))
                .unwrap_or_else(|| "–".into()),
            achieved("Deadline", 1000.0)
                .map(|a| pct(a / 1000.0))
                .unwrap_or_else(|| "–".into()),
        ));
    }
    let say = |p: &str| match within(p) {
        Some(t) => format!("up to {} ops/s", fmt_count(t as u64)),
        None => "at none of the rates measured".into(),
    };
    out.push_str(&format!(
        "The naive loop held its target within 2 % {}; the deadline throttle {}.\n\n",
        say("Naive"),
        say("Deadline")
    ));
    out.push_str("Achieved rate as a share of the target, by pacer:\n\n");
    out.push_str(&table.to_markdown());
    out.push('\n');
    if let Some(o) = i.ok("throttles", "omission") {
        out.push_str(&format!(
            "**Measuring it.** With a stall of {} every {} requests, the p99 latency measured \
             from each request's actual send was **{}**; measured from when it should have been \
             sent, **{}**. A load generator that waits out the stall before sending reports the \
             first number and hides the stall.\n\n",
            ns(f(&o.data, &["stall_ns"])),
            f(&o.data, &["stall_every"])
                .map(|x| fmt_count(x as u64))
                .unwrap_or_else(|| "–".into()),
            ns(f(&o.data, &["from_send", "p99"])),
            ns(f(&o.data, &["from_intent", "p99"])),
        ));
    }
    if let Some(top) = targets.last() {
        let held: Vec<String> = pacers
            .iter()
            .copied()
            .filter(|p| achieved(p, *top).is_some_and(|a| (a - top).abs() <= 0.02 * top))
            .map(pretty)
            .collect();
        out.push_str(&format!(
            "**So, here:** at {} ops/s, the pacers that held the rate within 2 % were: {}. \
             Time each request from when it was due, not from when it was sent.\n",
            fmt_count(*top as u64),
            if held.is_empty() {
                "none".to_string()
            } else {
                held.join(", ")
            }
        ));
    }
    out
}

/// Synchronous locks in async code: what each design's lateness was here.
pub fn locks(i: &Inputs) -> String {
    let mut out = String::new();
    let Some(d) = i.ok("async-locks", "designs") else {
        return unavailable("the lock designs");
    };
    let results = list(d, "results");
    let mut flavours: Vec<&str> = Vec::new();
    for r in &results {
        if let Some(fl) = s(r, &["flavour"])
            && !flavours.contains(&fl)
        {
            flavours.push(fl);
        }
    }
    let mut t = Table::new([
        "design",
        "runtime",
        "lateness p50",
        "lateness p99",
        "mispaired by FIFO",
    ]);
    for r in &results {
        t.row([
            s(r, &["design"]).unwrap_or("?").to_string(),
            s(r, &["flavour"]).unwrap_or("?").to_string(),
            ns(f(r, &["lateness", "p50"])),
            ns(f(r, &["lateness", "p99"])),
            f(r, &["mispaired"])
                .map(|m| fmt_count(m as u64))
                .unwrap_or_else(|| "–".into()),
        ]);
    }
    let n = f(&d.data, &["n"])
        .map(|x| fmt_count(x as u64))
        .unwrap_or_else(|| "N".into());
    let mut verdicts: Vec<String> = Vec::new();
    for fl in &flavours {
        let shared: Vec<(&str, f64)> = results
            .iter()
            .filter(|r| s(r, &["flavour"]) == Some(fl))
            .filter_map(|r| Some((s(r, &["design"])?, f(r, &["lateness", "p99"])?)))
            .filter(|(design, _)| !design.starts_with("baseline"))
            .collect();
        let p99 = |name: &str| shared.iter().find(|(d, _)| *d == name).map(|x| x.1);
        if let (Some((best, b)), Some(m)) = (
            shared.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
            p99("std-mutex"),
        ) {
            verdicts.push(if m <= 1.5 * b {
                format!(
                    "on the {fl} runtime the blocking lock's p99 was within 1.5× of the best \
                     design's ({}), so the lock was not what made timeouts late",
                    fmt_ratio(Some(m / b))
                )
            } else {
                format!(
                    "on the {fl} runtime the blocking lock's p99 was {} the best design's \
                     ({best})",
                    fmt_ratio(Some(m / b))
                )
            });
        }
        if let Some((best, b)) = shared.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
            out.push_str(&format!(
                "- **{fl} runtime**, {n} timeouts: among the designs that share state, the lowest \
                 p99 lateness came from **{best}** ({}); the blocking `std::sync::Mutex` design \
                 had {}, the tokio mutex with a capacity-1 channel {}.\n",
                fmt_ns(*b),
                ns(p99("std-mutex")),
                ns(p99("tokio-mutex-cap1")),
            ));
        }
    }
    out.push('\n');
    out.push_str(&t.to_markdown());
    if !verdicts.is_empty() {
        out.push_str(&format!("\n**So, here:** {}. ", verdicts.join("; ")));
    }
    out.push_str(
        "The FIFO column counts the expiries that the write-up's way of measuring paired with \
         another timeout's start: measure each timeout against its own deadline.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_result_is_said_not_guessed() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = Inputs::obtain(
            &[("brigades", "no-such-experiment")],
            Profile::Quick,
            dir.path(),
        );
        for render in [waiting, handoffs, sleeps, throttles, locks] {
            assert!(render(&inputs).contains("**Not available:**"));
        }
        assert_eq!(pretty("DebtAsPublished"), "debt as published");
        assert_eq!(pretty("Std"), "std");
        assert_eq!(pretty("Thread"), "threads");
        {}
        assert!(inputs.footer().contains("brigades/no-such-experiment"));
        assert!(section("nope", Profile::Quick, dir.path()).is_none());
    }
}
