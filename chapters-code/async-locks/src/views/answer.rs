//! The chapter's findings: the rows of its decision table (`table answer`), each read
//! from the rounds by the experiments' own keys. The harness picks each row's advice
//! from the verdict rule; nothing here words a verdict.

use super::{CT, MT};
use crate::Design::{StdMutexTask, TaskEach, TokioMutexCap1, TokioMutexCapN};
use crate::experiments::{DESIGNS, DesignKey, DesignsRound, HAZARDS, HazardsRound};
use crate::{Design, Hazard};
use harness::render::Better;
use harness::{Evidence, Finding, Why};

const fn on(design: Design, flavour: crate::Flavour) -> DesignKey {
    DesignKey::new(design, flavour)
}

/// Design 1's brief std mutex against the same structure without it: the lock alone.
pub static LOCK: Finding<DesignsRound> = Finding::new(
    "async-locks-brief-std-mutex",
    &DESIGNS,
    "10,000 timeouts: a sync callback locks a `std::sync::Mutex` briefly (multi-thread runtime)",
    |r| {
        Evidence::readings(
            r,
            ("std mutex", &on(StdMutexTask, MT)),
            ("no lock", &on(TaskEach, MT)),
        )
    },
)
.better(Better::Lower)
.advice(
    "Keep the brief `std::sync::Mutex`: it cost nothing here",
    "Hold the lock for less: it added lateness here",
    "Keep the brief `std::sync::Mutex` where the waits table shows its lockings seldom blocked",
)
.why(Why::Counter(
    "each locking is one push or one pop; the waits table counts how often design 1 found the \
     lock taken and times how long those lockings blocked. Lateness cannot resolve a lock this \
     brief, and its control differs by more than the lock (threats table).",
))
.guide("locks");

/// The hazard the advice warns against: a std mutex guard held across an `.await`.
pub static GUARD: Finding<HazardsRound> = Finding::new(
    "async-locks-guard-across-await",
    &HAZARDS,
    "A `std::sync::Mutex` guard is held across an `.await`",
    |r| {
        let runs: Vec<_> = r
            .data()
            .filter_map(|d| d.find(Hazard::GuardAcrossAwait, CT))
            .collect();
        let stalled = runs.iter().filter(|x| x.stalled).count();
        (!runs.is_empty()).then(|| {
            Evidence::count(
                "deadlocked the current-thread runtime",
                stalled as u32,
                runs.len() as u32,
            )
        })
    },
)
.advice(
    "Never hold a `std::sync::Mutex` guard across `.await`",
    "Never hold a `std::sync::Mutex` guard across `.await`",
    "No deadlock this time; still, never hold it across `.await`",
)
.why(Why::Counter(
    "callbacks fell due while the guard was held (the hazards table counts them). One that \
     blocks on the lock holds a thread the holder needs: the only one on the current-thread \
     runtime; on the multi-thread one, as we read tokio, the workers that drive its timer.",
))
.guide("locks");

/// The write-up's async redesign (tokio mutex, one-slot channel) against design 1.
pub static DESIGN2: Finding<DesignsRound> = Finding::new(
    "async-locks-tokio-mutex-channel",
    &DESIGNS,
    "Swapping the std mutex for a tokio mutex and a channel (multi-thread runtime)",
    |r| {
        Evidence::readings(
            r,
            ("tokio mutex + channel (design 2)", &on(TokioMutexCap1, MT)),
            (
                "std mutex in the callback (design 1)",
                &on(StdMutexTask, MT),
            ),
        )
    },
)
.better(Better::Lower)
.advice(
    "The tokio mutex and channel paid off here",
    "Keep design 1; give a channel room (next row: its one slot made the redesign late)",
    "Keep the simpler std mutex: the redesign gained nothing",
)
.why(Why::Counter(
    "design 2's senders found its one slot full (waits table); the next row tests the slot \
     alone. On one thread the gap is smaller (threats table), where the hand-over crosses \
     no thread (*switches per timeout* in the cost tables).",
));

/// Design 2 against the same with room in the channel for every message.
pub static SLOT: Finding<DesignsRound> = Finding::new(
    "async-locks-one-slot-channel",
    &DESIGNS,
    "A burst of expiries passes through a bounded channel (multi-thread runtime)",
    |r| {
        Evidence::readings(
            r,
            ("one slot", &on(TokioMutexCap1, MT)),
            ("room for all", &on(TokioMutexCapN, MT)),
        )
    },
)
.better(Better::Lower)
.advice(
    "One slot kept up here; size the channel for bursts anyway",
    "Give the channel room for the whole burst",
    "Capacity made no difference beyond the noise here",
)
.why(Why::Counter(
    "with one slot, senders found it full (waits table), so expiries were handed over one at a time.",
));

/// Design 4 (each expiry's data in its message) against design 1.
pub static DESIGN4: Finding<DesignsRound> = Finding::new(
    "async-locks-data-in-message",
    &DESIGNS,
    "Each expiry sends its own data to one handler",
    |r| {
        Evidence::readings(
            r,
            (
                "one handler, data in the message (design 4, spawned from the `block_on` thread)",
                &on(Design::FixBlockOn, MT),
            ),
            (
                "std mutex in the callback (design 1)",
                &on(StdMutexTask, MT),
            ),
        )
    },
)
.better(Better::Lower)
.advice(
    "Choose for clarity: design 4 was quicker here, but the two differ in more than the \
     message (why, below), so the design is not shown to be why",
    "Choose for clarity: design 1 was quicker here, but the two differ in more than the \
     message (why, below), so the design is not shown to be why",
    "Unresolved: the rounds did not separate them; choose for clarity",
)
.why(Why::Counter(
    "the two differ in more than the message, and none of the differences is controlled: \
     design 4's expiry is handled after a channel hand-over to one handler, design 1's inside \
     its callback; design 1 sets each deadline before it spawns its task, design 4 in its \
     task (the threats table's span row for design 4 compares the spreads); and where design \
     4 spawns its tasks can move it too (the spawn-site row measures that). This row's arm spawns from \
     the `block_on` thread, as design 1 does.",
));

/// Design 1 on the two runtime flavours.
pub static FLAVOUR: Finding<DesignsRound> = Finding::new(
    "async-locks-runtime-flavour",
    &DESIGNS,
    "The std-mutex design on one thread (`#[tokio::test]`) or many",
    |r| {
        Evidence::readings(
            r,
            ("current-thread", &on(StdMutexTask, CT)),
            ("multi-thread", &on(StdMutexTask, MT)),
        )
    },
)
.better(Better::Lower)
.advice(
    "One thread was quicker here; more workers bought nothing",
    "Expect later callbacks on a current-thread runtime",
    "Unresolved: the rounds did not separate the runtimes; see the flavours table",
)
.why(Why::Hypothesis(
    "a gap here would not name the runtime alone: design 1's deadlines may span a different \
     time on each runtime (threats table), and a span that differs can move lateness by \
     itself (not controlled here). Workers running callbacks side by side is the obvious \
     reading of a gap; the threats table tests it without the lock (*task each, no lock* on \
     both runtimes), and it explains a gap here only where that row separates them too.",
));
