//! What a variant is and what one run of it sends and measures: the process's one
//! clock, the message, the variant's parts (runtime, transport, wait, the sender's
//! idle, placement, tokio host), the plan of a run and its outcome.

use harness::counters::Counters;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

// ANCHOR: clock
/// One monotonic origin for the whole process. Both ends of a measurement read it, so a
/// timestamp crosses a channel or a socket as a plain `u64` of nanoseconds: no wall
/// clock, no floating point, nothing lost in transit.
static ORIGIN: OnceLock<Instant> = OnceLock::new();

pub fn now_ns() -> u64 {
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}
// ANCHOR_END: clock

/// What travels: which message this is, and when it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg {
    pub seq: u64,
    pub stamp: u64,
}

impl Msg {
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.seq.to_le_bytes());
        b[8..].copy_from_slice(&self.stamp.to_le_bytes());
        b
    }

    pub fn from_bytes(b: [u8; 16]) -> Msg {
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Msg {
            seq: word(0),
            stamp: word(8),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Runtime {
    Std,
    Tokio,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transport {
    Mpsc,
    Tcp,
    Udp,
}

/// How the receiver waits for a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Wait {
    /// Ask the OS (or the runtime) to put the thread to sleep until data arrives, with
    /// no time bound: `recv()`, a blocking `read`, a plain `.await` (the write-up's way).
    Block,
    /// The same with a time bound: `recv_timeout`, a socket read timeout
    /// (`SO_RCVTIMEO`), tokio's `timeout_at`.
    BlockBounded,
    /// Poll without ever giving up the CPU.
    Spin,
    /// Poll for a bounded time, then block.
    Hybrid,
}

/// How the sender stays idle for the gap before each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Idle {
    /// `std::thread::sleep`: the sender's CPU may go idle (the write-up's way).
    Sleep,
    /// A busy-wait on the clock: the sender never leaves its CPU.
    Spin,
}

/// Where the sender and the receiver threads may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Wherever the scheduler likes.
    Unpinned,
    /// Both pinned to the same logical CPU.
    SameCpu,
    /// Pinned to two different logical CPUs.
    OtherCpu,
}

/// Where a tokio receiver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Host {
    /// The future given to `block_on`, on the thread that called it, beside the
    /// runtime's workers (what `#[tokio::main]` does with `main`'s body).
    #[default]
    BlockOn,
    /// A task spawned on the runtime, run by one of its workers.
    Spawned,
}

impl Runtime {
    pub fn label(self) -> &'static str {
        match self {
            Runtime::Std => "std",
            Runtime::Tokio => "tokio",
        }
    }
}

impl Transport {
    pub fn label(self) -> &'static str {
        match self {
            Transport::Mpsc => "mpsc",
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
        }
    }
}

impl Wait {
    pub fn label(self) -> &'static str {
        match self {
            Wait::Block => "blocking",
            Wait::BlockBounded => "bounded blocking",
            Wait::Spin => "spinning",
            Wait::Hybrid => "hybrid",
        }
    }
}

impl Placement {
    pub fn label(self) -> &'static str {
        match self {
            Placement::Unpinned => "unpinned",
            Placement::SameCpu => "same CPU",
            Placement::OtherCpu => "different CPUs",
        }
    }
}

/// What one run of a variant does.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Messages timed.
    pub messages: usize,
    /// Messages sent first, with no gap and not timed, so that no timed message is the
    /// first of its channel (the first one allocates and touches cold code and data);
    /// the first one's latency is kept apart.
    pub warmup: usize,
    /// How long the sender stays idle before each message.
    pub gap: Duration,
    /// How the sender spends the gap: asleep (the write-up's way), or busy-waiting.
    pub sender: Idle,
    /// How long the hybrid receiver spins before it blocks.
    pub hybrid_spin: Duration,
    pub placement: Placement,
    /// How long a message may take beyond its gap before it counts as lost.
    pub patience: Duration,
    /// Everything stops here, finished or not.
    pub deadline: Instant,
}

impl Plan {
    /// The gap before message `i` (none before a warm-up message).
    pub fn gap_before(&self, i: u64) -> Duration {
        if i < self.warmup as u64 {
            Duration::ZERO
        } else {
            self.gap
        }
    }

    /// Every message a run sends, warm-up and timed.
    pub fn total(&self) -> usize {
        self.warmup + self.messages
    }

    /// The latest a bounded receiver waits for message `i`: its gap plus the patience,
    /// and never past the deadline.
    pub fn wait_until(&self, i: u64) -> Instant {
        (Instant::now() + self.gap_before(i) + self.patience).min(self.deadline)
    }

    /// Why a wait that was to end at `until` came back without its message, after
    /// `received` messages: the message is late, or the run cannot go on.
    pub fn missed(&self, until: Instant, received: usize) -> Missed {
        let now = Instant::now();
        if now >= self.deadline {
            Missed::Over(format!(
                "the time bound was reached after {received} of {} messages",
                self.messages
            ))
        } else if now >= until {
            Missed::Late
        } else {
            Missed::Over("the sender closed its end early".into())
        }
    }
}

/// Why a wait ended without the message it waited for.
pub enum Missed {
    /// Its bound passed: the message counts as lost and the receiver goes on.
    Late,
    /// The run is over (the time bound, or a closed sender), and why.
    Over(String),
}

/// What one run of a variant measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// Send-to-receive latency of each message that arrived, in nanoseconds.
    pub latencies_ns: Vec<f64>,
    /// Messages that did not arrive within their bound (the run went on without them).
    pub lost: u32,
    /// CPU time of the whole process (all threads) during the run, where the OS tells.
    pub cpu_ns: Option<f64>,
    pub wall_ns: f64,
    /// Why the run ended before all messages were sent, if it did.
    pub stopped: Option<String>,
    /// For each latency: whether the receiver took the message on the CPU the sender
    /// stamped it on (`None` where the OS cannot tell).
    pub same_cpu: Vec<Option<bool>>,
    /// For each latency: how often the receiver was preempted while it waited for
    /// that message (from taking the previous one).
    pub preempted: Vec<Option<u64>>,
    /// For each message sent: from its stamp to the return of the send call.
    pub send_ns: Vec<f64>,
    /// The receiving thread's scheduler counters (switches, CPU time, run-queue
    /// delay) over the timed messages: from each message taken to the next, read on the
    /// receiving thread after it read the clock. A tokio task may change threads between
    /// two messages; such an interval is left out (see `receiver_messages`).
    pub receiver: Option<Counters>,
    /// The messages `receiver` covers.
    pub receiver_messages: u64,
    /// The latency of the run's first message (the channel's first, with no gap).
    pub first_ns: Option<f64>,
    /// For each timed message: from the moment the receiver was done with the previous
    /// message (and let the sender go on) to this one's stamp: the gap as it happened.
    pub gap_ns: Vec<f64>,
    /// The sending thread's, where the sender is one thread (std).
    pub sender: Option<Counters>,
    /// For each timed message: the receiving thread's CPU time over its own
    /// bookkeeping, from just after the clock read that ends its latency to just before
    /// it lets the sender go on (where it is, its counters, the next bound): what its
    /// probe reads add to its CPU per message. A thread CPU clock, so that a preemption
    /// in between does not count.
    #[serde(default)]
    pub probe_ns: Vec<f64>,
    /// The receiving thread's CPU clock when that span began; `None` once it is noted.
    #[serde(skip)]
    pub probe_from: Option<Duration>,
    /// For each timed message taken: the receiving thread's CPU time from the end of
    /// its bookkeeping for the previous message (or from the start of counting) to the
    /// start of its bookkeeping for this one: its waiting alone, read at the two ends
    /// of the probe's span, so that nothing needs subtracting. Left out where a tokio
    /// task changed threads in between.
    #[serde(default)]
    pub wait_cpu_ns: Vec<f64>,
    /// Where and when (thread CPU clock) the current wait began; `None` once noted.
    #[serde(skip)]
    pub wait_from: Option<(std::thread::ThreadId, Duration)>,
}

impl Outcome {
    /// The receiver starts waiting for the next message, where no earlier wait is still
    /// open (a message given up on leaves its wait open, so the next one adds to it).
    pub(crate) fn begin_wait(&mut self, cpu: Option<Duration>) {
        if self.wait_from.is_none() {
            self.wait_from = cpu.map(|c| (std::thread::current().id(), c));
        }
    }

    /// The receiver took a timed message and begins its bookkeeping: one read of its
    /// CPU clock ends the wait's span (noted where it stayed on one thread) and begins
    /// the probe's.
    pub(crate) fn begin_probe(&mut self) {
        let cpu = harness::thread_cpu_time();
        self.probe_from = cpu;
        if let (Some((thread, from)), Some(to)) = (self.wait_from.take(), cpu)
            && thread == std::thread::current().id()
        {
            self.wait_cpu_ns
                .push(to.saturating_sub(from).as_nanos() as f64);
        }
    }
}
