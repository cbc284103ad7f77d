//! The chapter's findings: the rows of its decision table, each read from one
//! experiment's rounds. The harness picks each row's advice from the verdict rule.

use super::{chan, compare_runs};
use crate::experiments::{Arm, Run, RunKey, Runs, VARIANTS};
use crate::{Placement, Runtime, Transport, Wait};
use harness::render::Better;
use harness::{Evidence, Finding, Unit, Why};

/// The std channel, each thread pinned to its own CPU, in the same rounds as the unpinned.
pub(super) const SPIN: RunKey = chan(Wait::Spin).placed(Placement::OtherCpu);
pub(super) const BLOCK: RunKey = chan(Wait::Block).placed(Placement::OtherCpu);

/// The write-up's question on the std channel: spinning against blocking, after the
/// experiment's idle gap, within one placement (each thread pinned to its own CPU).
pub static SPIN_OR_BLOCK: Finding<Runs> = Finding::new(
    "spin-or-block",
    &VARIANTS,
    "A message arrives after an idle gap (std channel, pinned to different CPUs)",
    |r| {
        // The gap is the run's parameter, in the evidence: the question is fixed text
        // (the sixth review found the guide printing the parameter's name).
        let spin = format!("spinning through a {} ms gap", r.param("gap_ms")?);
        Evidence::readings(r, (&spin, &SPIN), ("blocking", &BLOCK))
    },
)
.better(Better::Lower)
.advice(
    "Spin, if a core can be spared per waiter",
    "Block: spinning was slower here",
    "Block; spinning gave no clear gain here",
)
.why(Why::Counter(
    "the cost tables' different CPUs rows: the blocking receiver blocks once a message and \
     waits little for a CPU, while the sender's send call, which wakes it, is longer than \
     the spinner's, by less than the latency differs; the rest is untimed (our hypothesis: \
     the idle CPU coming back). The unpinned rows' same CPU gives their mix",
))
.guide("waiting");

/// The receiving thread's CPU per message without its own probe reads after each
/// message: read where those reads begin and end, nothing subtracted.
pub static CPU: Finding<Runs> = Finding::new(
    "spinning-cpu",
    &VARIANTS,
    "The receiving thread's CPU per message, its own probe reads left out (std channel, pinned to different CPUs)",
    |r| {
        let own = |x: &Run| x.receiver_wait_cpu_per_message_ns;
        let c = compare_runs(r, &SPIN, &BLOCK, own)?;
        let spin = format!("spinning through a {} ms gap", r.param("gap_ms")?);
        Some(Evidence::pair(&spin, "blocking", Unit::Nanos, c))
    },
)
.better(Better::Smaller)
.advice(
    "Spin: it cost no more CPU than blocking here",
    "Spin only where a whole core per waiter is spare",
    "Unclear here; assume a spinner keeps a core busy",
)
.why(Why::Counter(
    "a spinner's CPU is the gap it spins through (cores busy, cost table); blocking's is its \
     receive, sleep, wake-up and waking the sender for its next turn; probe reads are left out",
))
.guide("waiting");

/// What the idle gap does to a spinning receiver: the same variant with no gap, in the
/// same rounds and the same placement (both pinned to different CPUs).
pub static GAP: Finding<Runs> = Finding::new(
    "idle-gap-spinning",
    &VARIANTS,
    "A spinning receiver: a message after idle, or with no added gap (pinned to different CPUs)",
    |r| {
        let after = format!("after {} ms idle", r.param("gap_ms")?);
        Evidence::readings(r, ("no added gap", &SPIN.arm(Arm::NoGap)), (&after, &SPIN))
    },
)
.better(Better::Lower)
.advice(
    "Expect a slower message after idle, even when spinning",
    "Idle did not slow the spinner here",
    "Unclear here; allow for a slower message after idle",
)
.why(Why::Hypothesis(
    "the gap slows the sender's send call. The gap-why table shows that call growing with the \
     gap, with a sleeping sender and with a busy-waiting one, which never idles; its share of \
     the added latency varies by gap and round. Why the call grows is untested: the send path \
     going cold in the caches, or the host using that core",
));

/// A blocking tokio receiver as a spawned task against the same in `block_on`.
pub static TOKIO_TASK: Finding<Runs> = Finding::new(
    "tokio-spawned-receiver",
    &VARIANTS,
    "A blocking tokio receiver: a spawned task or `block_on` (the sending task sleeps right after it sends)",
    |r| {
        let v = RunKey::variant(Runtime::Tokio, Transport::Mpsc, Wait::Block);
        Evidence::readings(
            r,
            ("spawned task", &v.arm(Arm::Spawned)),
            ("`block_on`", &v),
        )
    },
)
.better(Better::Lower)
.advice(
    "Receive in a spawned task, not in `block_on`, when the sender sleeps right after sending",
    "Keep the receiver in `block_on`; spawning was slower",
    "Either; spawning gave no clear gain here",
)
.why(Why::Hypothesis(
    "the send wakes the task onto the sender's own worker, which runs it once the sending \
     task sleeps; the receiver's thread is not woken (the sender's sleep, registered in the \
     window, may still wake tokio's driver). The `block_on` receiver is a thread to wake, \
     which can wait for the worker's busy CPU (the cost table's *run-queue delay*). The \
     task's next-task slot is never stolen: a sender that kept running would delay it (not \
     tested)",
));
