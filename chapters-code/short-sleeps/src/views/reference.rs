//! The write-up's numbers per operating system, beside this machine's and beside other
//! machines' imported ones (`all-results table other-os`); each row names its systems.

use super::{count, cpu_cell, est, opt, param_count, per_loop, sparse};
use crate::Call::{self, *};
use crate::Timerfd::{Interval, PerCall, Rearmed};
use crate::experiments::{CallsKey, CallsRound};
use crate::{MS1, NS1, Sample, ZERO};
use harness::reference::{Published, attribution};
use harness::render::{Cell, Table, fmt_count, fmt_ns, sig3};
use harness::{ReadingKey, Results};
use serde::Deserialize;
use std::time::Duration;

/// A value as the write-up published it: a central value and the half-width of its
/// 99.9 % confidence interval, per call or (with `per`) per loop of that many calls.
#[derive(Debug, Clone, Deserialize)]
pub struct RefValue {
    pub mean: f64,
    pub ci: f64,
    #[serde(default)]
    pub per: Option<f64>,
}

impl RefValue {
    /// Per call: as published, or divided by the loop's calls (our division).
    pub fn per_call(&self) -> (f64, f64) {
        let d = self.per.unwrap_or(1.0);
        (self.mean / d, self.ci / d)
    }
}

/// One call of the write-up: its values by system (`windows`, `linux`, `macos`).
#[derive(Debug, Clone, Deserialize)]
pub struct RefRow {
    pub id: String,
    pub label: String,
    #[serde(flatten)]
    pub on: std::collections::BTreeMap<String, RefValue>,
}

impl RefRow {
    pub fn on(&self, os: &str) -> Option<&RefValue> {
        self.on.get(os)
    }
}

/// The write-up's numbers, with its source and machines.
pub type RefData = Published<RefRows>;

#[derive(Debug, Clone, Deserialize)]
pub struct RefRows {
    pub rows: Vec<RefRow>,
}

/// The write-up's numbers, parsed from `assets/reference/short-sleeps.toml`.
pub fn reference_data() -> anyhow::Result<RefData> {
    Published::load(include_str!(
        "../../../../assets/reference/short-sleeps.toml"
    ))
}

/// A value of theirs: as published where it was published per call (whole
/// nanoseconds), to three significant digits where we divided a per-loop value.
pub fn fmt_ref(v: Option<&RefValue>) -> String {
    match v {
        None => "–".into(),
        Some(v @ RefValue { per: Some(_), .. }) => {
            let (m, ci) = v.per_call();
            format!("{} ± {}", sig3(m), sig3(ci))
        }
        Some(v) => format!(
            "{} ± {}",
            fmt_count(v.mean.round() as u64),
            fmt_count(v.ci.round() as u64)
        ),
    }
}

const W: u8 = 1;
const M: u8 = 2;
const L: u8 = 4;

/// One call as the per-system tables show it: its label, its reading (at the thread's
/// own slack), the write-up's rows for the same call, and the systems it belongs to.
pub struct OtherRow {
    pub label: &'static str,
    pub key: CallsKey,
    pub reference: Ids,
    on: u8,
}

/// The write-up's rows for a call, by id.
type Ids = &'static [&'static str];

const fn row(label: &'static str, call: Call, reference: Ids, on: u8) -> OtherRow {
    let key = CallsKey::of(call);
    OtherRow {
        label,
        key,
        reference,
        on,
    }
}

/// Every system's rows: the write-up's calls, then ours. On Windows, Rust's one zero
/// `Duration` stands for the write-up's `sleep_for` with 0 ns and with 0 ms.
#[rustfmt::skip]
const ROWS: &[OtherRow] = &[
    row("empty loop (ground truth)", Nothing, &["ground-truth"], W | M | L),
    row("thread::sleep(0): sleep_for(0 ns) and sleep_for(0 ms)", StdSleep(ZERO), &["std-sleep-0", "std-sleep-0ms"], W),
    row("thread::sleep(0)", StdSleep(ZERO), &["std-sleep-0"], M | L),
    row("Sleep(0)", Sleep(0), &["win-sleep-0"], W),
    row("SleepEx(0, FALSE)", SleepEx(0), &["win-sleepex-0"], W),
    row("nanosleep(0)", Nanosleep(ZERO), &["nanosleep-0"], M | L),
    row("pselect(0)", Pselect(ZERO), &["pselect-0"], M | L),
    row("sched_yield()", SchedYield, &["sched-yield"], M | L),
    row("yield_now() (SwitchToThread)", YieldNow, &[], W),
    row("yield_now()", YieldNow, &[], M | L),
    row("thread::sleep(1 ns): sleep_for(1 ns)", StdSleep(NS1), &["std-sleep-1ns"], W),
    row("thread::sleep(1 ns)", StdSleep(NS1), &["std-sleep-1ns"], M | L),
    row("nanosleep(1 ns)", Nanosleep(NS1), &["nanosleep-1ns"], M | L),
    row("clock_nanosleep(1 ns)", ClockNanosleep(NS1), &[], L),
    row("pselect(1 ns)", Pselect(NS1), &["pselect-1ns"], M | L),
    row("timerfd per call (1 ns)", Timerfd(PerCall, NS1), &["timerfd-recreate-1ns"], L),
    row("timerfd re-armed (1 ns)", Timerfd(Rearmed, NS1), &["timerfd-reuse-1ns"], L),
    row("timerfd interval (1 ns)", Timerfd(Interval, NS1), &["timerfd-interval-1ns"], L),
    row("thread::sleep(1 ms): sleep_for(1 ms)", StdSleep(MS1), &["std-sleep-1ms"], W),
    row("Sleep(1)", Sleep(1), &["win-sleep-1ms"], W),
    row("SleepEx(1, FALSE)", SleepEx(1), &["win-sleepex-1ms"], W),
    row("high-resolution waitable timer (100 ns)", WaitableTimer(Duration::from_nanos(100)), &[], W),
    row("tokio::time::sleep(1 ns)", TokioSleep(NS1), &[], W | M | L),
    row("thread::sleep(1 ms)", StdSleep(MS1), &["std-sleep-1ms"], M | L),
    row("tokio::time::sleep(1 ms)", TokioSleep(MS1), &[], W | M | L),
];

/// The OS families these tables know: each one's bit in a row's `on`, and the
/// write-up's system of the same kind.
const SYSTEMS: [(&str, u8, &str); 3] = [
    ("windows", W, "Windows 10"),
    ("macos", M, "OS X 10.10"),
    ("linux", L, "Linux 4.1"),
];

/// The OS family this build is for.
const THIS: &str = if cfg!(windows) {
    "windows"
} else if cfg!(target_os = "linux") {
    "linux"
} else {
    "macos"
};

/// Said where a record has CPU loops ([`crate::cpu_loop`]).
const CPU_LOOP_WORDS: &str = " A loop that read under ten steps was followed by a longer loop of the same \
     call, up to 200 ms, for its CPU time alone; a call that blocks gets none, and \
     where a longer loop read no step the cell gives a bound.";

/// An OS family's bit and the write-up's system (`windows`, `macos`, `linux`; BSDs none).
fn system(family: &str) -> Option<(u8, &'static str)> {
    SYSTEMS.iter().find(|s| s.0 == family).map(|s| (s.1, s.2))
}

/// The rows of an OS family (the BSDs read as macOS: the same POSIX calls, no timerfd).
pub fn other_rows(family: &str) -> Vec<&'static OtherRow> {
    let bit = system(family).map_or(M, |s| s.0);
    ROWS.iter().filter(|r| r.on & bit != 0).collect()
}

/// What an OS family lacks of the write-up's calls.
pub fn other_lacks(family: &str) -> &'static str {
    match family {
        "windows" => {
            "Windows has no nanosleep, pselect, sched_yield, timerfd or timer slack. `Sleep` \
             and `SleepEx` take whole milliseconds, so their shortest sleep waits for a tick \
             of the system timer. The write-up read its system's timer with ClockRes: \
             maximum interval 15.625 ms, minimum 0.500 ms, current 1.001 ms."
        }
        "linux" => "Linux has every call of the write-up. Its per-thread timer slack is left out.",
        _ => {
            "This chapter times no timerfd here (it calls one on Linux only), and this system \
             has no per-thread timer slack to set. Not every libc here has clock_nanosleep."
        }
    }
}

/// A column of a machine's figures: its header, and its cell for a reading.
type Column<'a> = (&'a str, &'a dyn Fn(&CallsKey) -> Option<Cell>);

/// An OS family's table: each call, the write-up's figure for it on the same kind of
/// system, then `columns` (a machine's figures), each shown where some row has one.
fn os_table(family: &str, refs: &RefData, columns: &[Column]) -> Table {
    let system = system(family);
    let mut headers = vec![
        "call".to_string(),
        // Short enough to wrap: the table sits in the text column at 1280 px.
        system.map_or("theirs (ns)".into(), |s| format!("theirs, {} (ns)", s.1)),
    ];
    headers.extend(columns.iter().map(|(h, _)| h.to_string()));
    let rows = other_rows(family).into_iter().filter_map(|row| {
        let theirs: Vec<String> = row
            .reference
            .iter()
            .filter_map(|id| {
                let v = refs.rows.iter().find(|x| x.id == *id)?.on(family)?;
                // Windows' sleep(0) pairs with two of the write-up's calls.
                let tag = match (row.reference.len(), *id) {
                    (1, _) => "",
                    (_, "std-sleep-0ms") => " (sleep_for(0 ms))",
                    _ => " (sleep_for(0 ns))",
                };
                Some(format!("{}{tag}", fmt_ref(Some(v))))
            })
            .collect();
        let mut cells = vec![(!theirs.is_empty()).then(|| theirs.join("; ").into())];
        cells.extend(columns.iter().map(|(_, f)| f(&row.key)));
        cells
            .iter()
            .any(Option::is_some)
            .then(|| (row.label.to_string(), cells))
    });
    sparse(&headers, rows.collect())
}

/// The sentence that names the write-up and the machines of `families`.
fn source(refs: &RefData, families: &[&str]) -> String {
    let machines: Vec<_> = refs
        .machines
        .iter()
        .filter(|m| families.contains(&m.id.as_str()))
        .collect();
    attribution(&refs.source, &machines)
}

/// What the write-up's figures are, in short sentences.
const THEIRS: &str = "The write-up's figure is its value for one call ± the half-width of \
    its 99.9 % interval, in nanoseconds. It published some per loop of 3,000 calls; we \
    divided those by 3,000. That the value is a mean is our reading.";

/// What the counter columns are, where this system has them.
const COUNTERS: &str = match THIS.as_bytes() {
    b"windows" => crate::os::WINDOWS_CPU_NOTE,
    b"linux" => {
        " *Blocked / preempted* counts the thread's voluntary and involuntary context \
         switches per call. A call that really slept blocked about once. *Run-queue wait* \
         is the thread's time waiting for a CPU per call."
    }
    _ => {
        " *Blocked / preempted* counts the process's voluntary and involuntary context \
         switches per call. A call that really slept blocked about once."
    }
};

/// Every call of this system with the thread's own slack: the write-up's figure, then
/// this machine's time, CPU and context switches per call.
pub fn calls(r: &Results<CallsRound>) -> anyhow::Result<String> {
    anyhow::ensure!(
        r.rounds.iter().any(|x| !x.data.loops.is_empty()),
        "no variant could run on this machine"
    );
    let refs = reference_data()?;
    let of = |k: &CallsKey, f: fn(&Sample) -> Option<f64>| per_loop(r, k, f);
    let n = |k: &CallsKey, f| count(of(k, f)).map(Cell::from);
    // Two counts in one column, so the table fits the text column at 1280 px.
    let c = |k: &CallsKey, f| count(of(k, f));
    let switches = |k: &CallsKey| {
        let (b, p) = (c(k, |s| s.voluntary)?, c(k, |s| s.involuntary)?);
        Some(Cell::from(format!("{b} / {p}")))
    };
    let t = os_table(
        THIS,
        &refs,
        &[
            ("yours", &|k| opt(r.estimate(k))),
            ("CPU per call", &|k| cpu_cell(r, k)),
            ("blocked / preempted", &switches),
            ("run-queue wait", &|k| opt(of(k, |s| s.run_delay_ns))),
        ],
    );
    let cpu_read = r
        .estimate_of(|x| x.cpu_clock_read_ns)
        .map_or_else(String::new, |c| {
            format!(" One read of the thread's CPU clock cost {} here.", est(&c))
        });
    // The one count of context switches the write-up gives, beside this run's.
    let key = CallsKey::of(Timerfd(Interval, NS1));
    let switches = match (n(&key, |s| s.voluntary), n(&key, |s| s.involuntary)) {
        (Some(v), Some(i)) => format!(
            " For its interval timerfd the write-up counted \"about 3000 context switches\" \
             with GNU Time, about one per call. Here that call *blocked* {v} and was \
             *preempted* {i} times per call."
        ),
        _ => String::new(),
    };
    Ok(format!(
        "{}\nEach round times one loop of every call: {} calls, or {} for calls that take \
         milliseconds. A loop's figure is its mean per call, the write-up's: one call held \
         up for a few ms adds that ÷ the calls. A loop of calls that take milliseconds also \
         times each call, and its figure is their median: one stall would decide a mean of \
         so few. *Yours* is the median of the figures over the {} rounds, with its interval, \
         at the thread's own slack. *CPU per call* is the measuring thread's own CPU time.\
         {cpu_read}{COUNTERS} {THEIRS}{switches}{} {}\n",
        t.to_markdown(),
        param_count(r, "calls"),
        param_count(r, "slow_calls"),
        r.rounds.len(),
        kernel_work(r).unwrap_or_default(),
        source(&refs, &[THIS]),
    ))
}

/// The CPU of a sleep that hardly blocks (`nanosleep(1 ns)`, low slack) in system calls
/// and hypervisor exits: what the emulated-timers hypothesis rests on; `None` if missing.
fn kernel_work(r: &Results<CallsRound>) -> Option<String> {
    let key = CallsKey::low_slack(Nanosleep(NS1), super::low_slack(r));
    let cpu = per_loop(r, &key, |s| s.cpu_ns)?.median;
    let blocked = count(per_loop(r, &key, |s| s.voluntary))?;
    let sys = harness::noise::syscall_estimate(r.rounds.iter().map(|x| &x.record.noise))?;
    let under = r.record.provenance.machine.underneath.as_ref();
    let vm = under
        .and_then(|u| u.cpuid.as_ref())
        .filter(|c| c.hypervisor);
    let link = "[Your machine](your-machine.md)";
    let exit = vm.map(|c| {
        format!(
            ", or {:.1} exits to the hypervisor ({} each, {link})",
            cpu / c.ns,
            fmt_ns(c.ns)
        )
    });
    Some(format!(
        " At the low slack `nanosleep(1 ns)` blocked {blocked} times per call, yet its thread \
         used {} of CPU per call: {:.0} times the cheapest system call ({} each, the rounds' \
         probe){}.",
        fmt_ns(cpu),
        cpu / sys.median,
        fmt_ns(sys.median),
        exit.unwrap_or_default(),
    ))
}

/// What the section says without another machine's results.
pub const NO_OTHER_OS: &str = "No results from another operating system have been \
    imported into this build. To add one, measure the book on that machine (`make build`; \
    on Windows, `cargo build --release --workspace --bins`, then \
    `target\\release\\all-results measure --profile quick`). Copy its results folder \
    (`target/book-results`, or the folder `COW_RESULTS_DIR` named) here. Then run \
    `target/release/all-results import THAT-FOLDER`: its records are checked like every \
    results file and shown here, apart from this machine's.";

/// The section "The same calls on other operating systems": each imported machine's
/// `calls` figures beside the write-up's for its kind of system, or without one, the
/// write-up's and how to add a machine. A record's text is escaped; labels are ours.
pub fn other_os_section(machines: &[(&str, &harness::Record)]) -> anyhow::Result<String> {
    let refs = reference_data()?;
    let mut out = String::new();
    if machines.is_empty() {
        let others: Vec<&str> = SYSTEMS.iter().map(|s| s.0).filter(|f| *f != THIS).collect();
        for (family, _, name) in SYSTEMS.iter().filter(|s| s.0 != THIS) {
            let t = os_table(family, &refs, &[]).to_markdown();
            out.push_str(&format!("**{name}**, as the write-up measured it\n\n{t}\n"));
        }
        return Ok(format!(
            "{out}{} {THEIRS}\n\n{NO_OTHER_OS}\n\n<p class=\"cow-provenance\">No other \
             machine's results in this build.</p>\n",
            source(&refs, &others)
        ));
    }
    for (family, r) in machines {
        let (m, text) = (&r.provenance.machine, harness::safe::text);
        let calls = Results::<CallsRound>::decode(r).ok();
        let cpu = |k: &CallsKey| cpu_cell(calls.as_ref()?, k);
        let time = |k: &CallsKey| opt(r.estimate(&k.stored()));
        let t = os_table(
            family,
            &refs,
            &[("that machine", &time), ("CPU per call", &cpu)],
        );
        let step = calls
            .as_ref()
            .and_then(|c| c.estimate_of(|x| x.cpu_clock_step_ns));
        let has_loop = |x: &CallsRound| x.loops.iter().any(|l| l.cpu_loop.is_some());
        let long = calls.as_ref().is_some_and(|c| c.data().any(has_loop));
        let step = step.map_or_else(String::new, |s| {
            let s = harness::fmt::fmt_ns(s.median);
            let long = if long { CPU_LOOP_WORDS } else { "" };
            format!(
                " Its thread's CPU clock moved in steps of {s} (the median over its rounds).{long}"
            )
        });
        let timer = r
            .details
            .iter()
            .find(|(k, _)| k == crate::experiments::TIMER_RESOLUTION_DETAIL)
            .map_or_else(String::new, |(_, v)| {
                format!(" Its system timer resolution: {}.", text(v))
            });
        // Rust's name for Windows is `windows`; the machine line reads better with a capital.
        let os = if m.os == "windows" {
            "Windows".into()
        } else {
            m.os_line()
        };
        let disturbed = r.rounds.iter().filter(|x| x.noise.disturbance().is_some());
        out.push_str(&format!(
            "**{}** · {} · {} ({} build), {} profile, {} rounds ({} disturbed), \
             measured {}\n\n{}\n{}{timer}{step}\n\n",
            text(&os),
            text(&m.cpu_line()),
            text(&m.rustc),
            text(&r.build),
            r.profile.name(),
            r.rounds.len(),
            disturbed.count(),
            text(&r.provenance.measured_at),
            t.to_markdown(),
            other_lacks(family),
        ));
    }
    let plural = if machines.len() == 1 { "" } else { "s" };
    Ok(format!(
        "{out}*That machine*: the medians over its rounds, per call, with 95 % intervals, from \
         its own build of this chapter.{} {THEIRS} A dash: not measured there. {}\n\n<p \
         class=\"cow-provenance\">Measured on {} other machine{plural}, each named above its \
         table; imported into this build, not measured by it.</p>\n",
        crate::os::CPU_BELOW_NOTE,
        source(&refs, &["windows", "macos", "linux"]),
        machines.len(),
    ))
}
