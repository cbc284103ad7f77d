//! The chapter's registry: its experiments, views, headline figures and findings, as
//! the command line, the book-wide measuring driver, the guide and the appendix find
//! them. It lives apart from the mechanism (`lib.rs`), which never imports the views.
//!
//! The findings are the rows of the decision table (`table answer`), each judged by
//! the harness's verdict rule on the rounds' own pairs. A pair compares like with
//! like: the same link, and hops that run where the other arm's run.

use crate::experiments::{
    LIMITS, LimitsRound, Probe, ProbeKey, SPREAD_SHARE, SWEEP, Spawned, SweepKey, SweepRound,
    VARIANTS, VariantsKey, VariantsRound,
};
use crate::{Kind, experiments, headline, views};
use harness::render::{fmt_count, sig3};
use harness::stats::Better;
use harness::{Evidence, Finding, Headline, Results, Unit, Why};

/// The chapter: its experiments, views, headline figures and findings.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [VARIANTS, SWEEP, LIMITS],
    views: [
        views::HOP_CDF, views::VARIANTS_TABLE, views::PAIRS, views::SWITCHES,
        views::SPAWN_TABLE, views::REFERENCE, views::MEMORY_TABLE, views::SWEEP_MEMORY,
        views::SWEEP_HOP, views::LIMIT_RUNS, views::LIMITS_TABLE,
    ],
    headlines: [
        Headline::new(headline::THREADS_PER_HOP, &VARIANTS, &VariantsKey::hop(Kind::Thread))
            .params(&["tasks"])
            .about("one hand-over in the thread brigade over socket pairs: median lap ÷ tasks"),
        Headline::new(headline::ASYNC_CURRENT_SOCKET_PER_HOP, &VARIANTS, &VariantsKey::hop(Kind::AsyncCurrentSocket))
            .params(&["tasks"])
            .about("one hand-over between async tasks on tokio's current-thread runtime over socket pairs: median lap ÷ tasks"),
        Headline::new(headline::ASYNC_CURRENT_CHANNEL_PER_HOP, &VARIANTS, &VariantsKey::hop(Kind::AsyncCurrentChannel))
            .params(&["tasks"])
            .about("one hand-over between async tasks on tokio's current-thread runtime over tokio channels: median lap ÷ tasks"),
        Headline::new(headline::ASYNC_TASK_BYTES, &SWEEP, &experiments::ASYNC_TASK_BYTES)
            .params(&["max_threads"])
            .about("resident memory one more async task adds (current-thread runtime, socket pairs): the slope over a sweep of sizes"),
    ],
    findings: [
        THREAD_OR_TASK, CHANNEL_OR_SOCKET, RUNTIME, RUNTIME_CHANNEL, SPAWN, MEMORY, HOW_MANY_TASKS,
        PLACEMENT, SPREAD_PLACEMENT, HANDOFF, RUNTIME_SPREAD,
        RUNTIME_SPREAD_SOCKET, CREATION, FIRST_LAP, ONE_SIZE,
    ],
);

/// Two brigades' time per hop, judged on the rounds' pairs.
fn hops(r: &Results<VariantsRound>, a: (&str, Kind), b: (&str, Kind)) -> Option<Evidence> {
    Evidence::readings(
        r,
        (a.0, &VariantsKey::hop(a.1)),
        (b.0, &VariantsKey::hop(b.1)),
    )
}

/// Threads against tasks, every hop on one CPU: threads pinned to one CPU, tasks on
/// the current-thread runtime (one thread), both over socket pairs.
pub static THREAD_OR_TASK: Finding<VariantsRound> = Finding::new(
    "brigades-thread-or-task",
    &VARIANTS,
    "Threads or tasks for hand-offs over socket pairs, on one CPU",
    |r| {
        hops(
            r,
            ("tasks on one thread", Kind::AsyncCurrentSocket),
            ("threads on one CPU", Kind::ThreadOneCpu),
        )
    },
)
.better(Better::Lower)
.advice(
    "Hand work along with async tasks, not threads",
    "Use threads: their hand-over cost less here",
    "Choose on other grounds: the hand-over did not decide",
)
.why(Why::Counter(
    "voluntary switches per hop (*Where the time goes*): a thread blocks and is woken \
     each hop, a task does not",
))
.guide("handoffs");

/// The link between tasks: a tokio channel against a socket pair, both on the
/// current-thread runtime.
pub static CHANNEL_OR_SOCKET: Finding<VariantsRound> = Finding::new(
    "brigades-channel-or-socket",
    &VARIANTS,
    "Tasks pass data on: tokio channel or socket pair",
    |r| {
        hops(
            r,
            ("a channel hop", Kind::AsyncCurrentChannel),
            ("a socket-pair hop", Kind::AsyncCurrentSocket),
        )
    },
)
.better(Better::Lower)
.advice(
    "Link tasks of one process with a tokio channel",
    "Keep the socket pair: it handed over faster here",
    "Choose either link: the hop cost did not decide",
)
.why(Why::Hypothesis(
    "a channel hop makes no system call of its own (the runtime still polls epoll every 61 \
     task polls); a socket-pair hop makes system calls, not counted here",
));

/// tokio's two runtimes, the same tasks over the same socket pairs, every lap run
/// inside one task on the runtime: a lap driven by `block_on` from outside would add,
/// on the multi-thread runtime only, a worker woken at its start and the `block_on`
/// thread at its end (the threats table measures that hand-off).
pub static RUNTIME: Finding<VariantsRound> = Finding::new(
    "brigades-runtime",
    &VARIANTS,
    "A chain of tasks over socket pairs: current-thread or multi-thread runtime",
    |r| {
        hops(
            r,
            ("current-thread", Kind::AsyncCurrentSocketInTask),
            ("multi-thread", Kind::AsyncMultiSocketInTask),
        )
    },
)
.better(Better::Lower)
.advice(RUNTIME_ADVICE[0], RUNTIME_ADVICE[1], RUNTIME_ADVICE[2])
.why(Why::Counter(
    "both arms run every lap inside one task on the runtime, so no lap crosses `block_on`. \
     The threats table counts the rounds in which a second worker ran part of the \
     multi-thread chain (tokio's busy time per worker, read while every worker was \
     parked); few voluntary switches (*Where the time goes*) say only that no worker was \
     woken from sleep. The current-thread socket chain's own hop can differ by more \
     between rounds than the runtimes do (its hop per round is in the records); what \
     sets it is not measured here",
));

/// The advice of both runtime rows (sockets, channels): the same choice of runtime.
const RUNTIME_ADVICE: [&str; 3] = [
    "Run such a chain on the current-thread runtime",
    "Keep the multi-thread runtime: its hops cost less here",
    "Unresolved: the rounds named no winner; the threats table shows where the chain ran",
];

/// The same two runtimes with tokio channels as links, every lap inside one task: a
/// hop is short enough that the multi-thread runtime's second worker may take part of
/// the chain in some rounds.
pub static RUNTIME_CHANNEL: Finding<VariantsRound> = Finding::new(
    "brigades-runtime-channel",
    &VARIANTS,
    "A chain of tasks over tokio channels: current-thread or multi-thread runtime",
    |r| {
        hops(
            r,
            ("current-thread", Kind::AsyncCurrentChannelInTask),
            ("multi-thread", Kind::AsyncMultiChannelInTask),
        )
    },
)
.better(Better::Lower)
.advice(RUNTIME_ADVICE[0], RUNTIME_ADVICE[1], RUNTIME_ADVICE[2])
.why(Why::Counter(
    "both arms run every lap inside one task on the runtime. The row pools every round; \
     the threats table gives each round's second-worker busy share, wake-ups a lap and \
     time a hop, so it shows whether the dear rounds are those with many wake-ups. The \
     current-thread hop also moves between rounds (its interval under *Every brigade*); \
     what moves it is not measured. *Our hypothesis* for the dear rounds: after 3 polls \
     from a worker's LIFO slot, a woken task goes to its run queue and a parked worker is \
     woken, if none is searching for work already (tokio 1.54.1, \
     `src/runtime/scheduler/multi_thread/worker.rs`, `Context::run_task` and \
     `Handle::schedule_local`; `idle.rs`, `Idle::worker_to_notify`). By that rule a wake-up \
     is tried about every fourth hop; the threats table's wake-ups a lap show how few land, \
     and why more land in some rounds is not measured",
));

/// Starting one: a thread (spawn and join) against a task on tokio's default runtime
/// (spawn and await).
pub static SPAWN: Finding<VariantsRound> = Finding::new(
    "brigades-spawn",
    &VARIANTS,
    "Many short jobs, each started as a thread or a task",
    |r| {
        Evidence::readings(
            r,
            ("a task", &VariantsKey::Spawn(Spawned::TaskMultiThread)),
            ("a thread", &VariantsKey::Spawn(Spawned::Thread)),
        )
    },
)
.better(Better::Lower)
.advice(
    "Spawn tasks: one started for less than a thread",
    "Spawn threads: one started for less than a task here",
    "Choose either: the start-up cost did not decide",
)
.why(Why::Hypothesis(
    "a thread's start maps a stack and calls `clone`, a task's allocates and queues; the \
     spawn table counts CPU and minor page faults per spawn, not the system calls",
));

/// One more member's resident memory, a task against a thread, both over socket
/// pairs: the slope over the sweep's sizes.
pub static MEMORY: Finding<SweepRound> = Finding::new(
    "brigades-memory",
    &SWEEP,
    "Many idle waiters, as tasks or as threads (memory per member, from a slope over sizes)",
    |r: &Results<SweepRound>| {
        Evidence::readings(
            r,
            ("a task", &SweepKey::BytesPerTask(Kind::AsyncCurrentSocket)),
            ("a thread", &SweepKey::BytesPerTask(Kind::Thread)),
        )
    },
)
.better(Better::Smaller)
.advice(
    "Use tasks where waiters must be many and cheap",
    "A thread held less memory here: measure your own",
    "Choose on other grounds: memory did not decide",
)
.why(Why::Counter(
    "resident memory per member (memory table); a thread's kernel stack comes on top",
))
.guide("handoffs");

/// How many async tasks the limit run built: as many as asked for, or what a limit or
/// the time bound allowed.
pub static HOW_MANY_TASKS: Finding<LimitsRound> = Finding::new(
    "brigades-how-many-tasks",
    &LIMITS,
    "Sizing how many waiting tasks (in-memory pipes) this machine holds",
    |r: &Results<LimitsRound>| {
        let kind = Kind::AsyncCurrentPipe;
        let runs: Vec<_> = r
            .data()
            .filter_map(|x| x.runs.iter().find(|l| l.kind == kind))
            .collect();
        let all = runs
            .iter()
            .filter(|l| l.built >= l.wanted && l.stop.is_none())
            .count();
        let wanted = runs.first().map(|l| l.wanted);
        let same = |w: &usize| all == runs.len() && runs.iter().all(|l| l.wanted == *w);
        // Every build reached the number asked for: that number is no limit found.
        if let Some(w) = wanted.filter(same) {
            let what = format!(
                "asked for {}; all built, no ceiling reached,",
                fmt_count(w as u64)
            );
            return Some(Evidence::count(&what, all as u32, runs.len() as u32));
        }
        Evidence::reading(r, "the limit run built:", &ProbeKey(kind, Probe::Members))
    },
)
.always(
    "Count on at least this many where the limits table says nothing stopped the build; \
     socket pairs need two open files each",
)
.why(Why::Counter(
    "the *stopped by* column of the limit runs names what ended each build",
));

// ---------------------------------------------------------------------------------
// threats to validity (`table threats`): what could make a figure wrong, what the
// chapter does about it, and the figure before and after that control

/// The median over rounds of a brigade's migrations per hop (the scheduler moving one
/// of the process's threads to another CPU), as the threats table's labels show it.
fn moves(r: &Results<VariantsRound>, kind: Kind) -> String {
    r.estimate_of(|x| x.find(kind)?.per_hop.as_ref()?.migrations)
        .map_or_else(
            || "moves not counted".into(),
            |e| format!("{} moves a hop", sig3(e.median)),
        )
}

/// Placement: unpinned members hop within one CPU or across two, in a mix the kernel
/// picks; the pinned brigade runs every hop on one CPU.
pub static PLACEMENT: Finding<VariantsRound> = Finding::threat(
    "brigades-threat-placement",
    &VARIANTS,
    "Where the threads run: the kernel places and moves unpinned members, so a hop stays \
     on one CPU or crosses to another, in a mix that may change between rounds",
    "Pins every thread member and the driver to one CPU; no decision row pits pinned \
     against unpinned threads. Before: the unpinned thread brigade; after: the pinned one (each with \
     the scheduler's moves to another CPU per hop)",
    |r| {
        let a = format!("unpinned ({})", moves(r, Kind::Thread));
        let b = format!("pinned ({})", moves(r, Kind::ThreadOneCpu));
        Evidence::readings(
            r,
            (&a, &VariantsKey::hop(Kind::Thread)),
            (&b, &VariantsKey::hop(Kind::ThreadOneCpu)),
        )
    },
)
.better(Better::Lower);

/// The two-thread brigade's placement: unpinned, the kernel may keep both threads on
/// one CPU, and then no hop crosses CPUs.
pub static SPREAD_PLACEMENT: Finding<VariantsRound> = Finding::threat(
    "brigades-threat-spread-placement",
    &VARIANTS,
    "Where the two-thread brigade's threads run: unpinned, the kernel may keep both on \
     one CPU, and then no hop crosses CPUs",
    "Pins the two threads, as two arms: both to one CPU, or one to each of two CPUs. \
     Before: the two threads unpinned; after: pinned to two CPUs, the placement the \
     pair *a change of CPU* needs",
    |r| {
        // The moves per hop would not tell the mix: two threads that never move may
        // share a CPU or not. The two pinned arms do.
        Evidence::readings(
            r,
            ("unpinned", &VariantsKey::hop(Kind::AsyncSpreadUnpinned)),
            (
                "pinned to two CPUs",
                &VariantsKey::hop(Kind::AsyncSpreadSocket),
            ),
        )
    },
)
.better(Better::Lower);

/// The hand-off at each lap's ends: a lap driven by `block_on` from outside a
/// multi-thread runtime wakes a worker at its start (the first link's reader) and the
/// `block_on` thread at its end, work a hop inside the chain does not do.
pub static HANDOFF: Finding<VariantsRound> = Finding::threat(
    "brigades-threat-handoff",
    &VARIANTS,
    "A lap driven from outside the multi-thread runtime: each lap wakes a worker at its \
     start and the `block_on` thread at its end, a cost of the lap that the time per hop \
     shares out over the members. On a channel chain the chain can spread over both workers \
     in either arm (the spread row counts the rounds of the laps-in-a-task arm), so the pair \
     can mix the hand-off with where the chain ran; it does not size the hand-off alone",
    "The rows that compare the two runtimes run every lap inside one task on the runtime, \
     timed there. Before: the multi-thread channel chain with one `block_on` a lap; after: \
     the same chain with every lap inside one task",
    |r| {
        Evidence::readings(
            r,
            (
                "one `block_on` a lap",
                &VariantsKey::hop(Kind::AsyncMultiChannel),
            ),
            (
                "laps in a task",
                &VariantsKey::hop(Kind::AsyncMultiChannelInTask),
            ),
        )
    },
)
.better(Better::Lower);

/// The rounds in which a multi-thread chain (its laps in a task) spread, by
/// `spread`: a round's measure, whether it counts, and its cost. Each round's measure
/// is shown beside its cost, in round order.
fn spread_rounds(
    r: &Results<VariantsRound>,
    k: Kind,
    (what, legend): (&str, &str),
    spread: impl Fn(&VariantsRound) -> Option<(String, bool, String)>,
) -> Option<Evidence> {
    let rounds: Vec<(String, bool, String)> = r.data().filter_map(spread).collect();
    let each: Vec<String> = rounds
        .iter()
        .map(|(m, _, cost)| format!("{m} at {cost}"))
        .collect();
    Some(Evidence::count(
        &format!(
            "{}: {what} (by round, {legend}: {})",
            k.short(),
            each.join(", ")
        ),
        rounds.iter().filter(|x| x.1).count() as u32,
        u32::try_from(rounds.len()).ok().filter(|&n| n > 0)?,
    ))
}

/// Where the multi-thread runtime runs a channel chain: on one worker in some rounds,
/// over two in others. Nothing controls it; the row counts the rounds that spread, by
/// the second-busiest worker's busy time, and shows the workers' wake-ups beside it: a
/// parked worker can be woken without the chain moving to it.
pub static RUNTIME_SPREAD: Finding<VariantsRound> = Finding::threat(
    "brigades-threat-runtime-spread",
    &VARIANTS,
    "Where the multi-thread runtime runs a channel chain: it may stay on one worker in \
     some rounds and spread over two in others, and a hop may cost differently in each",
    "Nothing keeps it on one worker: the decision row on channel chains takes every \
     round, spread or not. Shown: the rounds of the chain with its laps in a task in \
     which the second-busiest worker was busy for at least 10 % of the timed laps' wall \
     time (tokio's `worker_total_busy_duration`), with each round's share, its workers' \
     wake-ups a lap (`worker_park_count`, summed) and its time a hop (not divided by the \
     current-thread hop, whose own hop moves between brigades); both counters read while \
     every worker was parked. A worker can be woken without taking the chain over",
    |r| {
        let share = |x: &VariantsRound| {
            let v = x.find(Kind::AsyncMultiChannelInTask)?;
            let s = v.second_worker_share()?;
            let woke = v.wakeups_per_hop().map(|w| w * v.tasks as f64);
            let woke = woke.map_or_else(String::new, |w| format!(", {} wake-ups", sig3(w)));
            let cost = format!("{} ns", sig3(v.hop_p50_ns));
            Some((
                format!("{} %{woke}", sig3(s * 100.0)),
                s >= SPREAD_SHARE,
                cost,
            ))
        };
        let what = (
            "a second worker busy for at least 10 % of the laps",
            "its share and wake-ups a lap at its time a hop",
        );
        spread_rounds(r, Kind::AsyncMultiChannelInTask, what, share)
    },
);

/// The same for the socket chain: the reactor's wake-ups go to the queue of the worker
/// that polled it, so the chain mostly stays on one worker, not always. A worker parks
/// in epoll at every hop of a socket chain (the next byte is not yet there), so parks do
/// not tell where it ran: the row reads the busy time instead.
pub static RUNTIME_SPREAD_SOCKET: Finding<VariantsRound> = Finding::threat(
    "brigades-threat-runtime-spread-socket",
    &VARIANTS,
    "Where the multi-thread runtime runs a socket chain: the worker that polls the \
     reactor takes the tasks it wakes, so the chain mostly stays on one worker, not always",
    "Nothing keeps it on one worker: the decision row on socket chains takes every \
     round, spread or not. A worker parks in epoll at every hop here, so parks cannot \
     tell. Shown: the rounds in which the second-busiest worker was busy for at least \
     10 % of the timed laps' wall time (tokio's `worker_total_busy_duration`, read while \
     every worker was parked, when tokio has published it), with each round's share \
     in % beside its cost a hop",
    |r| {
        let share = |x: &VariantsRound| {
            let v = x.find(Kind::AsyncMultiSocketInTask)?;
            let s = v.second_worker_share()?;
            let cost = format!("{} ns", sig3(v.hop_p50_ns));
            Some((format!("{} %", sig3(s * 100.0)), s >= SPREAD_SHARE, cost))
        };
        spread_rounds(
            r,
            Kind::AsyncMultiSocketInTask,
            (
                "a second worker busy for at least 10 % of the laps",
                "its share at the time a hop",
            ),
            share,
        )
    },
);

/// Creating the members: a thread's or a task's start inside a timed lap would be
/// counted as a hop.
pub static CREATION: Finding<VariantsRound> = Finding::threat(
    "brigades-threat-creation",
    &VARIANTS,
    "Creating members inside the timed laps: a thread's start costs several hops",
    "Builds the whole brigade (links, then threads or tasks) before the first lap and \
     times the build apart. What that keeps out of a lap through the pinned thread \
     brigade, per member: its build ÷ members, measured (a lap that built its members \
     would add this to each hop; no such lap is run)",
    |r| {
        let k = Kind::ThreadOneCpu;
        let e = r.estimate_of(|x| x.find(k)?.build_per_member_ns)?;
        Some(Evidence::figure(
            "build per member, kept out of each hop:",
            Unit::Nanos,
            e,
        ))
    },
);

/// The first lap through a fresh brigade: a new runtime's first tick, each member's
/// first wake, the first touch of every stack and socket buffer.
pub static FIRST_LAP: Finding<VariantsRound> = Finding::threat(
    "brigades-threat-first-lap",
    &VARIANTS,
    "The first lap through a fresh brigade: a new tokio runtime's first poll of each \
     task, the first touch of each socket and buffer",
    "Runs untimed warm-up laps (2 in the quick profile, 20 in the full one) before the \
     timed ones. Each round first builds one brigade it throws away, so no measured \
     brigade is its process's first. Before: the first lap ÷ members of the brigade (named) whose first lap \
     stood out most surely (the highest low end of its per-round ratio's interval, so one \
     noisy round cannot pick it); after: its median timed lap ÷ members",
    |r| {
        let compare = |k: Kind| {
            r.compare_of(|x| x.find(k)?.first_hop_ns, |x| Some(x.find(k)?.hop_p50_ns))
        };
        let (k, c) = experiments::VARIANT_KINDS
            .into_iter()
            .filter_map(|k| Some((k, compare(k)?)))
            .max_by(|a, b| a.1.ratio.lo.total_cmp(&b.1.ratio.lo))?;
        Some(Evidence::pair(
            &format!("the first lap through {}", k.short()),
            "the timed laps",
            Unit::Nanos,
            c,
        ))
    },
)
.better(Better::Lower);

/// The size memory is read at: one size's resident memory ÷ members carries the
/// runtime's fixed cost, or misses what the allocator already held.
pub static ONE_SIZE: Finding<SweepRound> = Finding::threat(
    "brigades-threat-one-size",
    &SWEEP,
    "Memory per member read at one size: the runtime's fixed cost, or memory the \
     allocator already held, moves a small brigade's figure up or down",
    "Fits a line through three or more sizes per round and reports its slope. Before: \
     resident memory added ÷ members at 100 members (tasks on one thread, socket \
     pairs); after: the slope. Resident memory moves in whole pages (each round records its \
     page size; 4 KiB is 41 B a member at 100 members): a round whose two figures lie closer \
     than one page over the members is a tie the reading cannot resolve, and leaves the pair",
    |r: &Results<SweepRound>| {
        let k = Kind::AsyncCurrentSocket;
        // One page over the members: the least difference resident memory can show.
        let one_size = |x: &SweepRound| {
            let p = x.find(k)?.at(100)?;
            let (at, slope) = (
                p.resident_delta? / p.tasks as f64,
                x.find(k)?.bytes_per_task()?,
            );
            let page = x.page_bytes.unwrap_or(4096) as f64;
            ((at - slope).abs() >= page / p.tasks as f64).then_some(at)
        };
        let c = r.compare_of(one_size, |x| x.find(k)?.bytes_per_task())?;
        Some(Evidence::pair("one size", "the slope", Unit::Bytes, c))
    },
)
.better(Better::Smaller);

#[cfg(test)]
mod tests {
    /// The findings' words state the spread threshold as "10 %".
    #[test]
    fn the_spread_threshold_is_the_one_the_words_state() {
        assert_eq!(super::SPREAD_SHARE, 0.10);
    }
}
