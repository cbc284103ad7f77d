//! The chapter's registry: its experiments, views, headline figures and findings, as the
//! command line, the book-wide measuring driver, the guide and the appendix find them.
//! It lives apart from the mechanism (`lib.rs`), which never imports the views.

use crate::experiments::{
    DESIGNS, DesignKey, DesignsRound, HAZARDS, HazardsRound, SWEEP, UNIT_CHECK, UNIT_EXTRA,
    UNIT_FIRST, UnitKey, UnitRound,
};
use crate::{Design, Flavour, headline, views};
use harness::render::Better;
use harness::stats::median_sorted;
use harness::{Evidence, Finding, Headline, Unit};

const MT: Flavour = Flavour::MultiThread;
const CT: Flavour = Flavour::CurrentThread;

/// Threat: design 1 and its control differ by more than the lock.
pub static LOCK_CONTROL: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-lock-control",
    &DESIGNS,
    "Design 1 and *task each, no lock* differ by more than the lock: design 1 pushes each \
     start onto the queue before its timeout is made and pops one in the callback, which \
     may change how far apart the deadlines fall",
    "Sets the two side by side on the current-thread runtime too, in the same rounds (the \
     lock is never contended there). Where they differ, the control is not equivalent and \
     the lock row's lateness cannot speak for the lock: the waits table's count of the lock \
     found taken does. The next row tests one candidate cause, the deadlines' span",
    |r| {
        Evidence::readings(
            r,
            (
                "design 1, current-thread",
                &DesignKey::new(Design::StdMutexTask, CT),
            ),
            ("no lock", &DesignKey::new(Design::TaskEach, CT)),
        )
    },
)
.better(Better::Lower);

/// Threat: design 1's push before each timeout spreads its deadlines wider than its
/// control's.
pub static LOCK_SPAN: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-lock-span",
    &DESIGNS,
    "The push could spread design 1's deadlines wider than its control's, so fewer fall \
     due together and its lateness reads lower for a reason that is not the lock",
    "Records each run's deadline span, its last deadline minus its first, per round \
     (multi-thread runtime, as the decision table's row). A span that differs can move \
     lateness by itself (not measured here); where this row cannot separate the spans and its interval is wide, \
     it cannot rule the cause out. Deadlines fixed by construction are not measured",
    |r| {
        let span = |design| {
            move |d: &DesignsRound| {
                let run = d.find(design, MT).filter(|x| x.complete())?;
                run.deadline_span_ns
            }
        };
        let c = r.compare_of(span(Design::StdMutexTask), span(Design::TaskEach))?;
        Some(Evidence::pair(
            "design 1's deadline span",
            "no lock's",
            Unit::Nanos,
            c,
        ))
    },
)
.better(Better::Smaller);

/// Threat: tokio's cooperative budget makes a refused `lock()` hold design 3's mutex.
pub static BUDGET_LOCK: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-budget-holds-lock",
    &DESIGNS,
    "Design 3's figure could measure tokio's budget, not the design: a `lock()` refused by \
     the budget returns *Pending* holding the mutex (`Acquire::poll`, \
     `tokio/src/sync/batch_semaphore.rs`, 1.54.1), and every other `lock()` queues behind it",
    "Runs design 3 with every `lock()` out of the budget (`tokio::task::coop::unconstrained`) \
     in the same rounds; the waits table shows the lock found taken, and the refused \
     `lock()` holding it, for both. Lateness counts from each deadline, made after \
     `lock()` returns, so it cannot see the hold; this row reads what the order table \
     reads, each run's median time from the start popped off the queue to the handled \
     expiry: design 3, then its control",
    |r| {
        let from_start = |design| {
            move |d: &DesignsRound| {
                let run = d.find(design, MT).filter(|x| x.complete())?;
                Some(run.pairing.as_ref()?.fifo_p50_ns)
            }
        };
        let c = r.compare_of(
            from_start(Design::TwoRuntimes),
            from_start(Design::TwoRuntimesFreeLock),
        )?;
        Some(Evidence::pair(
            "design 3",
            "its lock out of the budget",
            Unit::Nanos,
            c,
        ))
    },
);

/// Threat: the baseline read as a floor, when its one task's budget delays its timers.
pub static BUDGET_BASELINE: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-budget-baseline",
    &DESIGNS,
    "The baseline read as a floor: on the current-thread runtime all its timers share one \
     task, whose budget turns most of their polls away when they fall due together",
    "Runs the baseline with the budget off for its task (*baseline, no budget*) in the same \
     rounds; shown on the current-thread runtime, where the budget bites. On the \
     multi-thread one few polls are refused: as we read tokio, `block_on` polls the task \
     outside the scheduler, a refused timer wakes it at once, and `join_all` yields after \
     two such wakes (see *One thread or many*)",
    |r| {
        Evidence::readings(
            r,
            ("baseline", &DesignKey::new(Design::Baseline, CT)),
            (
                "no budget",
                &DesignKey::new(Design::BaselineUnconstrained, CT),
            ),
        )
    },
);

/// Threat: a runtime's first deadline (the sweep's N = 1) differs from later ones.
/// By our reading of tokio 1.54.1 the millisecond rounding does not explain it:
/// `deadline_to_tick` rounds up and `Driver::park_internal` parks from a floored now
/// (`tokio/src/runtime/time/source.rs`, `tokio/src/runtime/time/mod.rs`), so the
/// fractions cancel. This row shows whether it differs, not why.
pub static FIRST_TICK: Finding<UnitRound> = Finding::threat(
    "async-locks-threat-first-tick",
    &UNIT_CHECK,
    "A runtime's first deadline (the sweep's N = 1 runs one) could fire unlike later \
     ones; where it differs, the cause is not isolated here",
    "The unit check times its extended timeouts one after another on one runtime: the \
     first one's lateness (fired − 40 ms) against the later ones', per round (with one \
     later timeout, its own; with more, their median)",
    |r| {
        // Lateness, not the whole 40 ms: the threshold must judge the part that differs.
        let deadline = (UNIT_FIRST + UNIT_EXTRA).as_nanos() as f64;
        let late =
            |u: &UnitRound| -> Vec<f64> { u.fired_ns.iter().map(|f| f - deadline).collect() };
        let c = r.compare_of(
            |u| late(u).first().copied(),
            |u| {
                let mut later = late(u).get(1..)?.to_vec();
                later.sort_by(f64::total_cmp);
                (!later.is_empty()).then(|| median_sorted(&later))
            },
        )?;
        let one_later = r.data().all(|u| u.fired_ns.len() <= 2);
        let later = if one_later {
            "the later one's"
        } else {
            "the later ones' median"
        };
        Some(Evidence::pair(
            "the first timeout's lateness",
            later,
            Unit::Nanos,
            c,
        ))
    },
);

/// Threat: the timer's 1 ms tick inside every lateness.
pub static TICK: Finding<UnitRound> = Finding::threat(
    "async-locks-threat-ms-tick",
    &UNIT_CHECK,
    "A lone timer's lateness holds about 1 ms of the timer's own (0–2 ms): tokio rounds each \
     deadline up to its next millisecond tick (`deadline_to_tick`, \
     `tokio/src/runtime/time/source.rs`) and parks for whole milliseconds from a floored \
     now (`Driver::park_internal`, `tokio/src/runtime/time/mod.rs`); less when the driver \
     is already awake at the tick",
    "Compares designs with one another, never with zero; the write-up's unit check times a \
     40 ms deadline alone (extended 20 ms timeout, window 36–44 ms). A finer timer is not \
     measured",
    |r| Evidence::reading(r, "the 40 ms timeout fired after", &UnitKey::FiredAfter),
);

/// Threat: the multi-thread runtime's worker count and placement on this machine. The
/// chapter's main comparison (design 2 against design 1) is shown on both runtimes.
pub static WORKERS: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-workers",
    &DESIGNS,
    "The multi-thread runtime starts one worker per CPU, wherever the OS puts them, and \
     the `block_on` thread competes with them for the CPUs, so its figures hold this \
     machine's CPU count and placement",
    "Runs every design on current-thread runtimes (one thread each; design 3 runs two) in the same \
     rounds too. This row sets design 2 against design 1 on the multi-thread runtime, the \
     next on the current-thread one. Pinned workers are not measured",
    |r| {
        Evidence::readings(
            r,
            (
                "design 2, multi-thread",
                &DesignKey::new(Design::TokioMutexCap1, MT),
            ),
            ("design 1", &DesignKey::new(Design::StdMutexTask, MT)),
        )
    },
)
.better(Better::Lower);

/// Threat: the same comparison on the current-thread runtime (no workers to place).
pub static WORKERS_CT: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-workers-current-thread",
    &DESIGNS,
    "The same comparison could owe its size to the workers: more than one thread to run \
     callbacks and senders, placed by the OS",
    "Design 2 against design 1 on the current-thread runtime, in the same rounds: one \
     thread runs everything. The decision table's design 2 row is the multi-thread \
     runtime's",
    |r| {
        Evidence::readings(
            r,
            (
                "design 2, current-thread",
                &DesignKey::new(Design::TokioMutexCap1, CT),
            ),
            ("design 1", &DesignKey::new(Design::StdMutexTask, CT)),
        )
    },
)
.better(Better::Lower);

/// Threat: design 4's tasks spawned from the `block_on` thread, where every other design
/// spawns from a task.
pub static SPAWN_SITE: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-spawn-site",
    &DESIGNS,
    "Where a design spawns its tasks matters: design 1, *task each, no lock* and the \
     hazards spawn from the thread that called `block_on`; design 2 and design 4 from a \
     spawner task on the runtime",
    "Design 4 spawns from a spawner task; *4, spawned in block_on* spawns from where \
     design 1 does, in the same rounds (multi-thread runtime). The decision row on design \
     4 uses that arm, so both sides spawn from the same thread, though not alike: design 1 \
     from inside its `join_all` futures, between its locked pushes, design 4 in a plain loop",
    |r| {
        Evidence::readings(
            r,
            (
                "spawned in block_on",
                &DesignKey::new(Design::FixBlockOn, MT),
            ),
            ("from a task", &DesignKey::new(Design::Fix, MT)),
        )
    },
)
.better(Better::Lower);

/// Threat: design 1 and design 4 set their deadlines at different moments.
pub static DESIGN4_SPAN: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-design4-span",
    &DESIGNS,
    "Design 1 sets each deadline before it spawns the timeout's task, design 4 in the task; \
     their deadlines can spread differently, and fewer falling due together lowers \
     lateness for a reason that is not the lock or the message",
    "Records each run's deadline span per round (multi-thread runtime): design 1's against \
     *4, spawned in block_on*'s, the arm of the decision row. The two do not share one \
     deadline schedule, so the decision row gives no advice on speed",
    |r| {
        let span = |design| {
            move |d: &DesignsRound| {
                d.find(design, MT)
                    .filter(|x| x.complete())?
                    .deadline_span_ns
            }
        };
        let c = r.compare_of(span(Design::StdMutexTask), span(Design::FixBlockOn))?;
        Some(Evidence::pair(
            "design 1's deadline span",
            "design 4's (spawned in block_on)",
            Unit::Nanos,
            c,
        ))
    },
)
.better(Better::Smaller);

/// Threat: design 1's deadlines spread differently on the two runtimes.
pub static FLAVOUR_SPAN: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-flavour-span",
    &DESIGNS,
    "Design 1's deadlines could spread differently on the two runtimes, and a span that \
     differs can move lateness by itself (not measured here), not through the runtime's workers",
    "Records design 1's deadline span per round on both runtimes, in the same rounds: \
     current-thread, then multi-thread. Where the spans differ, the runtime row in the \
     decision table names no cause",
    |r| {
        let span = |flavour| {
            move |d: &DesignsRound| {
                d.find(Design::StdMutexTask, flavour)
                    .filter(|x| x.complete())?
                    .deadline_span_ns
            }
        };
        let c = r.compare_of(span(CT), span(MT))?;
        Some(Evidence::pair(
            "design 1's deadline span, current-thread",
            "multi-thread",
            Unit::Nanos,
            c,
        ))
    },
)
.better(Better::Smaller);

/// Threat: design 1's gap between the runtimes read as callbacks spread over workers.
pub static SPREAD_FLAVOUR: Finding<DesignsRound> = Finding::threat(
    "async-locks-threat-spread-flavour",
    &DESIGNS,
    "Design 1's gap between the runtimes could be read as the multi-thread runtime running \
     its callbacks side by side on its workers",
    "Runs *task each, no lock* on both runtimes in the same rounds: the same tasks without \
     the lock. Only where this row separates the runtimes can spreading explain design 1's",
    |r| {
        Evidence::readings(
            r,
            (
                "no lock, multi-thread",
                &DesignKey::new(Design::TaskEach, MT),
            ),
            ("current-thread", &DesignKey::new(Design::TaskEach, CT)),
        )
    },
)
.better(Better::Lower);

/// Threat: the unlocked control ran its callbacks one at a time, as the lock does.
pub static SERIAL_CONTROL: Finding<HazardsRound> = Finding::threat(
    "async-locks-threat-serial-control",
    &HAZARDS,
    "The long section's unlocked control should beat the lock by more where its callbacks \
     work side by side, each on a CPU of its own. Where one worker runs most of them, it runs \
     them in turn as the lock does. Where the control's spins (1 ms of busy wall time, \
     `spin_for`) run over their time more than the lock's, a spin's thread having lost its \
     CPU for a while, it gains less. Either way the ÷ same work unlocked cell can read nearer 1",
    "Records which thread ran each callback and when its work began and ended \
     (multi-thread runtime). *At once* is their work summed over the time any worked: 1 one \
     at a time, 2 on two workers side by side. This row counts the rounds whose control \
     stayed under halfway, (1 + workers) ÷ 2, or whose work took over 5 % more time on \
     the clock than asked (*work ×k*); the hazards table shows each round's figures",
    |r| {
        let (serial, of) = crate::experiments::control_serial(r, MT);
        let (k, n) = (serial as u32, of as u32);
        let what = "the control ran its callbacks mostly in turn, or its spins over their time";
        (of > 0).then(|| Evidence::count(what, k, n))
    },
);

/// Threat control: the long section against its control over only the rounds in which
/// the control's callbacks worked side by side.
pub static SIDE_BY_SIDE_ONLY: Finding<HazardsRound> = Finding::threat(
    "async-locks-threat-side-by-side-only",
    &HAZARDS,
    "The ÷ same work unlocked cell mixes rounds in which the control ran side by side \
     within its time with rounds in which it ran mostly in turn or over its time",
    "Compares 1 ms of busy wall time under the std mutex with the same work unlocked \
     (multi-thread runtime) over only the rounds whose control ran side by side within its \
     time (previous row)",
    |r| {
        let c = crate::experiments::side_by_side_only(r, MT)?;
        Some(Evidence::pair(
            "std mutex, rounds whose control ran side by side",
            "no lock",
            Unit::Nanos,
            c,
        ))
    },
)
.better(Better::Lower);

/// The chapter: its experiments, views and headline figures.
pub static CHAPTER: harness::Chapter = harness::chapter!(
    experiments: [DESIGNS, SWEEP, HAZARDS, UNIT_CHECK],
    views: [
        views::DESIGNS_CDF, views::DESIGNS_TABLE, views::WAITS, views::COST,
        views::FLAVOURS, views::FLAVOURS_CDF, views::WRITEUP, views::SWEEP_TABLE, views::HAZARDS_TABLE, views::UNIT_CHECK_TABLE,
    ],
    headlines: [
        Headline::new(
            headline::DESIGN2_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::TokioMutexCap1, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 2 (tokio mutex, channel of capacity 1), multi-thread runtime: lateness of a timeout past its own deadline, the median over rounds of each round's median"),
        Headline::new(
            headline::FIX_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::Fix, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 4 (each timeout's own deadline in its message, a channel with room for all), multi-thread runtime: lateness, the median over rounds of each round's median"),
        Headline::new(
            headline::STD_MUTEX_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::StdMutexTask, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 1 as re-created (std mutex, synchronous callback in a task per timeout), multi-thread runtime: lateness, the median over rounds of each round's median"),
        Headline::new(
            headline::NO_LOCK_MULTI_THREAD_LATENESS_P50,
            &DESIGNS,
            &DesignKey::new(Design::TaskEach, Flavour::MultiThread),
        )
        .params(&["timeouts", "timeout_ms"])
        .about("design 1's structure without its lock (a task per timeout, nothing shared), the control for the lock question, multi-thread runtime: lateness, the median over rounds of each round's median"),
    ],
    findings: [
        views::LOCK, views::GUARD, views::DESIGN2, views::SLOT, views::DESIGN4, views::FLAVOUR,
        LOCK_CONTROL, LOCK_SPAN, BUDGET_LOCK, BUDGET_BASELINE, FIRST_TICK, TICK, WORKERS, WORKERS_CT, SPAWN_SITE,
        DESIGN4_SPAN, FLAVOUR_SPAN, SPREAD_FLAVOUR, SERIAL_CONTROL, SIDE_BY_SIDE_ONLY,
    ],
);
