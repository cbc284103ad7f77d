//! Chapter 1, *Spinning vs sleeping*: how long a message waits when the receiver
//! blocks in the kernel, against a receiver that busy-waits for it.
//!
//! Every variant has the same shape: a sender stays idle for a gap, stamps the time and
//! sends a sequence number with the stamp; the receiver waits for it (blocking,
//! spinning or both) and records how long it took. One message is in flight at a time.
//! The write-up's blocking receive has no time bound, and neither has ours: a run is
//! bounded by its sender, which stops at the deadline and closes its end, which wakes
//! the receiver. The bounded receive (`recv_timeout`, a read timeout, `timeout_at`) is
//! an arm of its own, where a message that does not come within its bound is counted as
//! lost and the run goes on.
//!
//! `lib.rs` holds the mechanism and the names of the headline figures;
//! `experiments.rs` the rounds; `views.rs` the tables and plots; `chapter.rs` the
//! chapter's registry (its experiments, views and headlines), kept apart so that the
//! mechanism imports nothing that builds on it.

use serde::{Deserialize, Serialize};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, TryRecvError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub mod experiments;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

pub use harness::counters::Counters;

/// The names of the chapter's headline figures: the guide, the appendix and the
/// comparisons read them by these constants, so a renamed figure fails to compile.
pub mod headline {
    pub const STD_MPSC_BLOCKING_P50: &str = "std-mpsc-blocking-p50";
    pub const STD_MPSC_SPINNING_P50: &str = "std-mpsc-spinning-p50";
    pub const STD_UDP_BLOCKING_P50: &str = "std-udp-blocking-p50";
    pub const STD_UDP_SPINNING_P50: &str = "std-udp-spinning-p50";
    pub const ATOMIC_FLOOR_ONE_WAY: &str = "atomic-floor-one-way";
}

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
}

/// The logical CPU the calling thread runs on now, where the OS tells.
pub fn current_cpu() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and touches no memory of ours.
        let c = unsafe { libc::sched_getcpu() };
        u32::try_from(c).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// What the two threads note beside each message, off the timed path: the CPU the
/// sender stamped it on, so the receiver can tell whether it took it on the same one,
/// and the receiving thread's counters when it last took a message, so it can tell
/// whether it was preempted while it waited for this one and what the wait cost it.
pub struct Probe {
    sender_cpu: AtomicU32,
    receiver_last: std::sync::Mutex<Option<(std::thread::ThreadId, Counters)>>,
    receiver_sum: std::sync::Mutex<(Option<Counters>, u64)>,
}

impl Default for Probe {
    fn default() -> Probe {
        Probe {
            sender_cpu: AtomicU32::new(u32::MAX),
            receiver_last: std::sync::Mutex::new(None),
            receiver_sum: std::sync::Mutex::new((None, 0)),
        }
    }
}

impl Probe {
    /// On the receiving thread, after the last untimed message: start counting.
    fn start(&self) {
        if let Ok(mut last) = self.receiver_last.lock() {
            *last = Some((std::thread::current().id(), Counters::thread()));
        }
    }

    /// On the receiving thread, once a message is taken: how often it was preempted
    /// since the last message, and that interval's counters added to the run's. `None`
    /// where the receiver changed threads in between (a tokio task can).
    fn preempted_since_last(&self) -> Option<u64> {
        let now = (std::thread::current().id(), Counters::thread());
        let mut last = self.receiver_last.lock().ok()?;
        let (thread, before) = last.replace(now)?;
        (thread == now.0).then_some(())?;
        let d = now.1.since(&before);
        if let Ok(mut sum) = self.receiver_sum.lock() {
            sum.0 = Some(sum.0.map_or(d, |s| s.plus(&d)));
            sum.1 += 1;
        }
        d.involuntary
    }

    /// The receiving thread's counters over the messages counted, and how many.
    fn receiver(&self) -> (Option<Counters>, u64) {
        self.receiver_sum.lock().map(|s| *s).unwrap_or((None, 0))
    }

    fn stamping_on(&self, cpu: Option<u32>) {
        self.sender_cpu
            .store(cpu.unwrap_or(u32::MAX), Ordering::Relaxed);
    }

    /// Whether the receiver, now, runs where the sender stamped the last message.
    fn same_cpu(&self) -> Option<bool> {
        let s = self.sender_cpu.load(Ordering::Relaxed);
        (s != u32::MAX).then_some(())?;
        current_cpu().map(|r| r == s)
    }
}

/// The wall time and the CPU time of the whole process over the timed messages.
struct Meter {
    cpu0: Option<Duration>,
    t0: Instant,
}

impl Meter {
    fn start() -> Meter {
        Meter {
            cpu0: harness::process_cpu_time(),
            t0: Instant::now(),
        }
    }

    /// Writes the run's wall and CPU time, and the receiving thread's counters, into
    /// `out`.
    fn finish(self, out: &mut Outcome, probe: &Probe) {
        out.wall_ns = self.t0.elapsed().as_nanos() as f64;
        out.cpu_ns = match (self.cpu0, harness::process_cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_nanos() as f64),
            _ => None,
        };
        (out.receiver, out.receiver_messages) = probe.receiver();
    }
}

/// The result of one attempt to take a message without waiting.
pub enum Attempt<T> {
    Got(T),
    Empty,
    Closed,
}

/// How a spin ended.
pub enum Spun<T> {
    Got(T),
    Closed,
    TimedOut,
}

// ANCHOR: spin
/// Busy-waits: calls `attempt` until it yields a message, the other side closes, or
/// `until` passes. The clock is read only every 1,024 attempts so that checking the
/// time does not slow the loop down; `spin_loop` tells the CPU this is a wait.
pub fn spin<T>(until: Instant, mut attempt: impl FnMut() -> Attempt<T>) -> Spun<T> {
    let mut polls: u32 = 0;
    loop {
        match attempt() {
            Attempt::Got(v) => return Spun::Got(v),
            Attempt::Closed => return Spun::Closed,
            Attempt::Empty => {}
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(1024) && Instant::now() >= until {
            return Spun::TimedOut;
        }
        std::hint::spin_loop();
    }
}
// ANCHOR_END: spin

/// The receiving end of a std transport, able to wait in each of the ways.
pub trait Link {
    /// Takes a message if one is there, without waiting.
    fn attempt(&mut self) -> Attempt<Msg>;
    /// Sleeps in the kernel until a message arrives or the sender closes its end, with
    /// no time bound: the write-up's blocking receive.
    fn block(&mut self) -> Option<Msg>;
    /// Sleeps in the kernel until a message arrives or `until` passes.
    fn block_until(&mut self, until: Instant) -> Option<Msg>;
}

// ANCHOR: receive
/// Receives one message, waiting as `wait` says. Blocking has no time bound (the
/// sender closing its end ends it); the bounded wait, the spin and the hybrid's spin
/// end at `until`. The hybrid spins for `hybrid_spin` and only then blocks.
pub fn receive(
    link: &mut impl Link,
    wait: Wait,
    hybrid_spin: Duration,
    until: Instant,
) -> Option<Msg> {
    match wait {
        Wait::Block => link.block(),
        Wait::BlockBounded => link.block_until(until),
        Wait::Spin => match spin(until, || link.attempt()) {
            Spun::Got(msg) => Some(msg),
            Spun::Closed | Spun::TimedOut => None,
        },
        Wait::Hybrid => {
            let spin_until = (Instant::now() + hybrid_spin).min(until);
            match spin(spin_until, || link.attempt()) {
                Spun::Got(msg) => Some(msg),
                Spun::Closed => None,
                Spun::TimedOut => link.block(),
            }
        }
    }
}
// ANCHOR_END: receive

fn time_left(until: Instant) -> Option<Duration> {
    let left = until.saturating_duration_since(Instant::now());
    (!left.is_zero()).then_some(left)
}

impl Link for mpsc::Receiver<Msg> {
    fn attempt(&mut self) -> Attempt<Msg> {
        match self.try_recv() {
            Ok(msg) => Attempt::Got(msg),
            Err(TryRecvError::Empty) => Attempt::Empty,
            Err(TryRecvError::Disconnected) => Attempt::Closed,
        }
    }

    fn block(&mut self) -> Option<Msg> {
        // Only a closed channel ends this wait without a message.
        self.recv().ok()
    }

    fn block_until(&mut self, until: Instant) -> Option<Msg> {
        // A timeout and a closed channel both end the wait without a message.
        self.recv_timeout(time_left(until)?).ok()
    }
}

/// A socket that switches between non-blocking mode (for attempts) and blocking mode
/// (for sleeping, with or without a read timeout), changing mode only when it has to.
pub struct Socket<S> {
    sock: S,
    nonblocking: bool,
    /// Whether a read timeout is set (the bounded wait sets one before each read).
    timeout: bool,
}

pub trait SocketMode {
    fn set_nonblocking(&self, on: bool) -> io::Result<()>;
    fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()>;
}

impl SocketMode for TcpStream {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        TcpStream::set_nonblocking(self, on)
    }
    fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, d)
    }
}

impl SocketMode for UdpSocket {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        UdpSocket::set_nonblocking(self, on)
    }
    fn set_read_timeout(&self, d: Option<Duration>) -> io::Result<()> {
        UdpSocket::set_read_timeout(self, d)
    }
}

impl<S: SocketMode> Socket<S> {
    fn new(sock: S) -> Socket<S> {
        Socket {
            sock,
            nonblocking: false,
            timeout: false,
        }
    }

    fn mode(&mut self, nonblocking: bool) -> io::Result<()> {
        if self.nonblocking != nonblocking {
            self.sock.set_nonblocking(nonblocking)?;
            self.nonblocking = nonblocking;
        }
        Ok(())
    }
}

/// A socket link: one read, interpreted as a whole message, nothing yet, or closed.
pub trait ReadMsg {
    type Sock: SocketMode;
    fn socket(&mut self) -> &mut Socket<Self::Sock>;
    fn read_msg(&mut self) -> Attempt<Msg>;
}

// ANCHOR: socket_link
/// Waiting on a socket: an attempt is one non-blocking read; a block, blocking reads
/// with no timeout (the write-up's); a bounded block, each read timed out at `until`.
impl<T: ReadMsg> Link for T {
    fn attempt(&mut self) -> Attempt<Msg> {
        if self.socket().mode(true).is_err() {
            return Attempt::Closed;
        }
        self.read_msg()
    }

    fn block(&mut self) -> Option<Msg> {
        let s = self.socket();
        s.mode(false).ok()?;
        if s.timeout {
            s.sock.set_read_timeout(None).ok()?;
            s.timeout = false;
        }
        loop {
            match self.read_msg() {
                Attempt::Got(msg) => return Some(msg),
                Attempt::Empty => continue, // part of a message, or an interrupted read
                Attempt::Closed => return None,
            }
        }
    }

    fn block_until(&mut self, until: Instant) -> Option<Msg> {
        self.socket().mode(false).ok()?;
        loop {
            let timeout = Some(time_left(until)?);
            self.socket().sock.set_read_timeout(timeout).ok()?;
            self.socket().timeout = true;
            match self.read_msg() {
                Attempt::Got(msg) => return Some(msg),
                Attempt::Empty => continue, // part of a message, or a timeout slice
                Attempt::Closed => return None,
            }
        }
    }
}
// ANCHOR_END: socket_link

/// Would-block, timed-out and interrupted reads mean "nothing yet"; other errors end
/// the link.
fn nothing_yet(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

// ANCHOR: tcp_link
/// A TCP stream delivers bytes, not messages: a message may arrive in pieces, so
/// the link keeps what it has read until all sixteen bytes are there.
pub struct TcpLink {
    socket: Socket<TcpStream>,
    buf: [u8; 16],
    filled: usize,
}

impl ReadMsg for TcpLink {
    type Sock = TcpStream;

    fn socket(&mut self) -> &mut Socket<TcpStream> {
        &mut self.socket
    }

    fn read_msg(&mut self) -> Attempt<Msg> {
        let read = self.socket.sock.read(&mut self.buf[self.filled..]);
        gather(&mut self.buf, &mut self.filled, read)
    }
}

/// Adds what one read of a stream returned to the `filled` bytes kept so far: a
/// message once all sixteen are there, nothing yet before that.
fn gather(buf: &mut [u8; 16], filled: &mut usize, read: io::Result<usize>) -> Attempt<Msg> {
    match read {
        Ok(0) => Attempt::Closed,
        Ok(n) => {
            *filled += n;
            if *filled < 16 {
                return Attempt::Empty;
            }
            *filled = 0;
            Attempt::Got(Msg::from_bytes(*buf))
        }
        Err(e) if nothing_yet(&e) => Attempt::Empty,
        Err(_) => Attempt::Closed,
    }
}
// ANCHOR_END: tcp_link

/// A datagram arrives whole or not at all (and on a busy machine, sometimes not).
pub struct UdpLink {
    socket: Socket<UdpSocket>,
}

impl ReadMsg for UdpLink {
    type Sock = UdpSocket;

    fn socket(&mut self) -> &mut Socket<UdpSocket> {
        &mut self.socket
    }

    fn read_msg(&mut self) -> Attempt<Msg> {
        let mut buf = [0u8; 16];
        let read = self.socket.sock.recv(&mut buf);
        datagram(&buf, read)
    }
}

/// The sequence number of the datagram a UDP sender sends when it stops: a datagram
/// socket has no end of stream, so this one tells a receiver blocked without a time
/// bound that the run is over.
pub const CLOSE_SEQ: u64 = u64::MAX;

/// What one receive from a datagram socket returned: a message, the sender's closing
/// datagram, or nothing yet.
fn datagram(buf: &[u8; 16], read: io::Result<usize>) -> Attempt<Msg> {
    match read {
        Ok(16) if Msg::from_bytes(*buf).seq == CLOSE_SEQ => Attempt::Closed,
        Ok(16) => Attempt::Got(Msg::from_bytes(*buf)),
        Ok(_) => Attempt::Empty, // not one of ours: ignore it
        Err(e) if nothing_yet(&e) => Attempt::Empty,
        Err(_) => Attempt::Closed,
    }
}

// ANCHOR: pacer
/// One message in flight: the sender sleeps until the receiver is done with the last
/// one, so it wants no CPU during a hand-over. A tokio sender sleeps on tokio's timer:
/// woken by the receiver's task it would sit in that worker's unstealable LIFO slot.
#[derive(Default)]
pub struct Pacer {
    done: AtomicUsize,
    stop: AtomicBool,
    lock: std::sync::Mutex<()>,
    turn: std::sync::Condvar,
}

impl Pacer {
    /// The sender's turn for message `i` has come (false: stop, or the deadline).
    pub fn wait_turn(&self, i: usize, deadline: Instant) -> bool {
        let Ok(mut guard) = self.lock.lock() else {
            return false;
        };
        while !self.is_turn(i) && !self.stopped() {
            let Some(left) = time_left(deadline) else {
                return false;
            };
            guard = match self.turn.wait_timeout(guard, left) {
                Ok((g, _)) => g,
                Err(_) => return false,
            };
        }
        !self.stopped()
    }

    /// The same for a tokio task, looking once a millisecond.
    pub async fn wait_turn_async(&self, i: usize, deadline: Instant) -> bool {
        while !self.is_turn(i) && !self.stopped() {
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        !self.stopped()
    }
}
// ANCHOR_END: pacer

impl Pacer {
    pub fn is_turn(&self, i: usize) -> bool {
        self.done.load(Ordering::Acquire) >= i
    }

    /// The receiver is done with one message (took it, or gave up on it): the sender
    /// may go on. It signals only after it has read the clock. Either side can stop
    /// the other.
    pub fn done(&self) {
        self.done.fetch_add(1, Ordering::Release);
        self.wake();
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        drop(self.lock.lock());
        self.turn.notify_all();
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// Pins the calling thread for a placement; `role` 0 is the sender, 1 the receiver.
/// Returns false where pinning is impossible (one CPU, or an OS that does not allow it).
pub fn pin(placement: Placement, role: usize) -> bool {
    let cores = match core_affinity::get_core_ids() {
        Some(c) if !c.is_empty() => c,
        _ => return placement == Placement::Unpinned,
    };
    match placement {
        Placement::Unpinned => true,
        Placement::SameCpu => core_affinity::set_for_current(cores[0]),
        Placement::OtherCpu => cores.len() >= 2 && core_affinity::set_for_current(cores[role]),
    }
}

/// Whether this machine can run `placement` at all.
pub fn placement_supported(placement: Placement) -> bool {
    let can_pin = cfg!(any(
        target_os = "linux",
        target_os = "windows",
        target_os = "android"
    ));
    match placement {
        Placement::Unpinned => true,
        Placement::SameCpu => can_pin,
        Placement::OtherCpu => {
            can_pin && core_affinity::get_core_ids().is_some_and(|c| c.len() >= 2)
        }
    }
}

// ANCHOR: sender_loop
/// Sends every message of a run, one in flight at a time: the warm-up messages at
/// once, then each timed one after an idle gap; stamps and sends. Returns each timed
/// message's send-call time (stamp to return). The caller then drops `send`, closing
/// the sender's end.
fn sender_loop(
    plan: &Plan,
    pacer: &Pacer,
    probe: &Probe,
    mut send: impl FnMut(Msg) -> io::Result<()>,
) -> Vec<f64> {
    fine_timer_slack();
    let mut send_ns = Vec::with_capacity(plan.messages);
    for i in 0..plan.total() {
        if !pacer.wait_turn(i, plan.deadline) {
            break;
        }
        idle(plan.sender, plan.gap_before(i as u64));
        probe.stamping_on(current_cpu());
        let stamp = now_ns();
        if send(Msg {
            seq: i as u64,
            stamp,
        })
        .is_err()
        {
            break;
        }
        if i >= plan.warmup {
            send_ns.push(now_ns().saturating_sub(stamp) as f64);
        }
    }
    send_ns
}
// ANCHOR_END: sender_loop

/// The sender's gap: asleep, or busy-waiting on the clock.
fn idle(how: Idle, gap: Duration) {
    match how {
        _ if gap.is_zero() => {}
        Idle::Sleep => std::thread::sleep(gap),
        Idle::Spin => {
            let end = Instant::now() + gap;
            while Instant::now() < end {
                std::hint::spin_loop();
            }
        }
    }
}

/// Asks Linux to wake the calling (sending) thread from a sleep within 1 µs of the
/// time asked for instead of the default 50 µs, so that a gap of tens of microseconds
/// is about that long. It moves when the sender wakes, never what a latency measures
/// (the stamp is read after the wake-up); `gap_ns` records the gaps as they happened.
fn fine_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong);
    }
}

/// What the receiver does next with what one wait gave it.
enum Step {
    /// On to the next message.
    Next,
    /// Wait again for this one.
    Again,
    /// The run is over.
    Stop,
}

// ANCHOR: take
/// Takes what one wait for message `i` gave: its latency (a warm-up message's kept
/// apart), then, off the timed path, the side measurements; a late message, skipped by
/// its sequence number; a loss, counted; or the run's end. `released`: when the
/// receiver let the sender go on to this message.
fn take(
    out: &mut Outcome,
    plan: &Plan,
    probe: &Probe,
    (i, released): (u64, u64),
    got: Option<Msg>,
    until: Instant,
) -> Step {
    match got {
        Some(m) if m.seq == i => {
            let latency = now_ns().saturating_sub(m.stamp) as f64;
            if i < plan.warmup as u64 {
                if i == 0 {
                    out.first_ns = Some(latency);
                }
                return Step::Next;
            }
            out.latencies_ns.push(latency);
            out.gap_ns.push(m.stamp.saturating_sub(released) as f64);
            out.same_cpu.push(probe.same_cpu()); // after the clock read
            out.preempted.push(probe.preempted_since_last());
            Step::Next
        }
        Some(_) => Step::Again, // a message we had given up on
        None => match plan.missed(until, out.latencies_ns.len()) {
            Missed::Late => {
                out.lost += 1;
                Step::Next
            }
            Missed::Over(why) => {
                out.stopped = Some(why);
                Step::Stop
            }
        },
    }
}
// ANCHOR_END: take

// ANCHOR: receiver_loop
/// Receives every message of a run: the warm-up messages, then the latency of each
/// timed one that comes (a bounded wait counts one that does not come within its bound
/// as lost). A message that turns up after the receiver gave up on it is recognised
/// by its sequence number and ignored, so it can never be taken for the next one.
fn receiver_loop(
    plan: &Plan,
    pacer: &Pacer,
    probe: &Probe,
    mut recv: impl FnMut(Instant) -> Option<Msg>,
) -> Outcome {
    let mut r = Receiving::new(plan, pacer, probe);
    'messages: for i in 0..plan.total() as u64 {
        loop {
            match r.take(i, recv(r.until)) {
                Step::Again => continue,
                Step::Next => break,
                Step::Stop => break 'messages,
            }
        }
        r.done(i);
    }
    r.finish()
}
// ANCHOR_END: receiver_loop

/// The receiver's bookkeeping around each message, shared by the std and the tokio
/// receive loops. Every counter, and the next wait's bound, is read before the
/// receiver lets the sender go on ([`Receiving::done`]), so none of it lands inside a
/// timed window.
struct Receiving<'a> {
    plan: &'a Plan,
    pacer: &'a Pacer,
    probe: &'a Probe,
    out: Outcome,
    meter: Option<Meter>,
    /// When the receiver let the sender go on to the current message.
    released: u64,
    /// The current wait's bound.
    until: Instant,
}

impl<'a> Receiving<'a> {
    fn new(plan: &'a Plan, pacer: &'a Pacer, probe: &'a Probe) -> Receiving<'a> {
        let meter = (plan.warmup == 0).then(|| {
            probe.start();
            Meter::start()
        });
        Receiving {
            plan,
            pacer,
            probe,
            out: Outcome::default(),
            meter,
            released: now_ns(),
            until: plan.wait_until(0),
        }
    }

    /// Takes what one wait for message `i` gave ([`take`]).
    fn take(&mut self, i: u64, got: Option<Msg>) -> Step {
        take(
            &mut self.out,
            self.plan,
            self.probe,
            (i, self.released),
            got,
            self.until,
        )
    }

    fn finish(mut self) -> Outcome {
        self.pacer.stop();
        if let Some(m) = self.meter {
            m.finish(&mut self.out, self.probe);
        }
        self.out
    }
}

// ANCHOR: receiver_done
impl Receiving<'_> {
    /// Done with message `i`: the counters start after the last warm-up message, the
    /// next bound is read, and the sender may go on.
    fn done(&mut self, i: u64) {
        if i + 1 == self.plan.warmup as u64 {
            self.probe.start(); // count from here: the timed messages
            self.meter = Some(Meter::start());
        }
        self.until = self.plan.wait_until(i + 1);
        self.released = now_ns();
        self.pacer.done();
    }
}
// ANCHOR_END: receiver_done

/// Connects a TCP pair on loopback without a thread blocked in `accept`: the
/// connection is queued by the kernel as soon as `connect` returns, so `accept` on a
/// non-blocking listener takes it at once (or the error says why not).
fn tcp_pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let client = TcpStream::connect_timeout(&listener.local_addr()?, Duration::from_secs(5))?;
    listener.set_nonblocking(true)?;
    let start = Instant::now();
    let server = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e)
                if e.kind() == ErrorKind::WouldBlock
                    && start.elapsed() < Duration::from_secs(5) =>
            {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => return Err(e),
        }
    };
    server.set_nonblocking(false)?;
    server.set_nodelay(true)?;
    client.set_nodelay(true)?;
    Ok((server, client))
}

/// A UDP sender that, when dropped, sends the closing datagram (`CLOSE_SEQ`): the
/// end of a run for a receiver blocked without a time bound.
struct UdpSender(UdpSocket);

impl Drop for UdpSender {
    fn drop(&mut self) {
        let close = Msg {
            seq: CLOSE_SEQ,
            stamp: 0,
        };
        let _ = self.0.send(&close.to_bytes());
    }
}

/// Runs one std variant: a sender thread and a receiver thread, both fresh so that
/// pinning one run never leaks into the next. Sockets are connected before either
/// thread starts, and if a thread cannot start, the other is stopped.
pub fn run_std(transport: Transport, wait: Wait, plan: &Plan) -> anyhow::Result<Outcome> {
    now_ns(); // fix the origin before either side reads it
    let pacer = Pacer::default();
    let hybrid = plan.hybrid_spin;
    type Sender = Box<dyn FnMut(Msg) -> io::Result<()> + Send>;
    type Receiver = Box<dyn FnMut(Instant) -> Option<Msg> + Send>;
    let (send, recv): (Sender, Receiver) = match transport {
        Transport::Mpsc => {
            let (tx, mut rx) = mpsc::channel::<Msg>();
            (
                Box::new(move |m| {
                    tx.send(m)
                        .map_err(|_| io::Error::from(ErrorKind::BrokenPipe))
                }),
                Box::new(move |until| receive(&mut rx, wait, hybrid, until)),
            )
        }
        Transport::Tcp => {
            let (mut server, client) = tcp_pair()?;
            let mut link = TcpLink {
                socket: Socket::new(client),
                buf: [0; 16],
                filled: 0,
            };
            (
                Box::new(move |m| server.write_all(&m.to_bytes())),
                Box::new(move |until| receive(&mut link, wait, hybrid, until)),
            )
        }
        Transport::Udp => {
            let rx = UdpSocket::bind("127.0.0.1:0")?;
            let tx = UdpSocket::bind("127.0.0.1:0")?;
            tx.connect(rx.local_addr()?)?;
            let mut link = UdpLink {
                socket: Socket::new(rx),
            };
            let tx = UdpSender(tx);
            (
                Box::new(move |m| tx.0.send(&m.to_bytes()).map(drop)),
                Box::new(move |until| receive(&mut link, wait, hybrid, until)),
            )
        }
    };
    let probe = Probe::default();
    std::thread::scope(|s| -> anyhow::Result<Outcome> {
        let (pacer, probe) = (&pacer, &probe);
        let sender = std::thread::Builder::new()
            .name("sender".into())
            .spawn_scoped(s, move || {
                pin(plan.placement, 0);
                let c0 = Counters::thread();
                let send_ns = sender_loop(plan, pacer, probe, send);
                (send_ns, Counters::thread().since(&c0))
            })?;
        let receiver = std::thread::Builder::new()
            .name("receiver".into())
            .spawn_scoped(s, move || {
                pin(plan.placement, 1);
                receiver_loop(plan, pacer, probe, recv)
            });
        let mut out = match receiver {
            Ok(r) => r
                .join()
                .map_err(|_| anyhow::anyhow!("the receiver thread panicked"))?,
            Err(e) => {
                pacer.stop();
                return Err(e.into());
            }
        };
        let (send_ns, counts) = sender
            .join()
            .map_err(|_| anyhow::anyhow!("the sender thread panicked"))?;
        out.send_ns = send_ns;
        out.sender = Some(counts);
        Ok(out)
    })
}

// ANCHOR: tokio_recv
/// The tokio receivers. Blocking is an `.await` that parks the task; spinning calls
/// `attempt` in a loop that never yields. For sockets, `try_read` and `try_recv` make
/// no system call until tokio's reactor has seen the socket become readable: the spin
/// polls tokio's readiness flag, which another worker thread must set after waking
/// from `epoll_wait`. `try_recv` on a channel needs no reactor and does not use
/// tokio's cooperative budget, so a spin on it never stalls.
enum TokioLink {
    Mpsc(tokio::sync::mpsc::UnboundedReceiver<Msg>),
    Tcp(tokio::net::TcpStream, [u8; 16], usize),
    Udp(tokio::net::UdpSocket),
}

impl TokioLink {
    /// Takes a message if one is there, without waiting: what a spinning tokio
    /// receiver calls on every poll.
    fn attempt(&mut self) -> Attempt<Msg> {
        use tokio::sync::mpsc::error::TryRecvError;
        match self {
            TokioLink::Mpsc(rx) => match rx.try_recv() {
                Ok(msg) => Attempt::Got(msg),
                Err(TryRecvError::Empty) => Attempt::Empty,
                Err(TryRecvError::Disconnected) => Attempt::Closed,
            },
            TokioLink::Tcp(stream, buf, filled) => {
                let read = stream.try_read(&mut buf[*filled..]);
                gather(buf, filled, read)
            }
            TokioLink::Udp(sock) => {
                let mut buf = [0u8; 16];
                let read = sock.try_recv(&mut buf);
                datagram(&buf, read)
            }
        }
    }
}
// ANCHOR_END: tokio_recv

impl TokioLink {
    /// Waits for a message the runtime's way: the task parks until tokio wakes it.
    async fn block(&mut self) -> Option<Msg> {
        use tokio::io::AsyncReadExt;
        match self {
            TokioLink::Mpsc(rx) => rx.recv().await,
            TokioLink::Tcp(stream, buf, filled) => {
                stream.read_exact(&mut buf[*filled..]).await.ok()?;
                *filled = 0;
                Some(Msg::from_bytes(*buf))
            }
            TokioLink::Udp(sock) => {
                let mut buf = [0u8; 16];
                loop {
                    match sock.recv(&mut buf).await {
                        Ok(16) if Msg::from_bytes(buf).seq == CLOSE_SEQ => return None,
                        Ok(16) => return Some(Msg::from_bytes(buf)),
                        Ok(_) => continue,
                        Err(_) => return None,
                    }
                }
            }
        }
    }
}

enum TokioSender {
    Mpsc(tokio::sync::mpsc::UnboundedSender<Msg>),
    Tcp(tokio::net::TcpStream),
    Udp(tokio::net::UdpSocket),
}

impl TokioSender {
    async fn send(&mut self, msg: Msg) -> io::Result<()> {
        use tokio::io::AsyncWriteExt;
        match self {
            TokioSender::Mpsc(tx) => tx
                .send(msg)
                .map_err(|_| io::Error::from(ErrorKind::BrokenPipe)),
            TokioSender::Tcp(s) => s.write_all(&msg.to_bytes()).await,
            TokioSender::Udp(s) => s.send(&msg.to_bytes()).await.map(drop),
        }
    }
}

/// A UDP sender's end sends the closing datagram when dropped, as the std one does.
impl Drop for TokioSender {
    fn drop(&mut self) {
        if let TokioSender::Udp(s) = self {
            let close = Msg {
                seq: CLOSE_SEQ,
                stamp: 0,
            };
            let _ = s.try_send(&close.to_bytes());
        }
    }
}

async fn tokio_pair(transport: Transport) -> io::Result<(TokioSender, TokioLink)> {
    Ok(match transport {
        Transport::Mpsc => {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            (TokioSender::Mpsc(tx), TokioLink::Mpsc(rx))
        }
        Transport::Tcp => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let client = tokio::net::TcpStream::connect(listener.local_addr()?).await?;
            let (server, _) = listener.accept().await?;
            server.set_nodelay(true)?;
            client.set_nodelay(true)?;
            (TokioSender::Tcp(server), TokioLink::Tcp(client, [0; 16], 0))
        }
        Transport::Udp => {
            let rx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
            let tx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
            tx.connect(rx.local_addr()?).await?;
            (TokioSender::Udp(tx), TokioLink::Udp(rx))
        }
    })
}

/// Runs one tokio variant on a multi-thread runtime with the default number of worker
/// threads (one per core): the sender is a spawned task; the receiver is the future
/// given to `block_on` (`Host::BlockOn`, the write-up's `#[tokio::main]`) or a task
/// of its own (`Host::Spawned`). Setting up is bounded like everything else.
pub fn run_tokio(
    transport: Transport,
    wait: Wait,
    host: Host,
    plan: &Plan,
) -> anyhow::Result<Outcome> {
    anyhow::ensure!(wait != Wait::Hybrid, "the tokio variants block or spin");
    anyhow::ensure!(
        plan.sender == Idle::Sleep,
        "the tokio sender sleeps through its gap"
    );
    now_ns();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let plan = *plan;
    let out = rt.block_on(async move {
        let (sender, link) =
            tokio::time::timeout(Duration::from_secs(5), tokio_pair(transport)).await??;
        let pacer = Arc::new(Pacer::default());
        let probe = Arc::new(Probe::default());
        let send_task = tokio::spawn(tokio_sender(sender, plan, pacer.clone(), probe.clone()));
        let receiving = tokio_receiver(link, wait, plan, pacer, probe);
        let out = match host {
            Host::BlockOn => receiving.await,
            Host::Spawned => tokio::spawn(receiving).await?,
        };
        send_task.abort();
        Ok::<Outcome, anyhow::Error>(out)
    })?;
    // Worker threads still parked in a blocking call must not hold the round up.
    rt.shutdown_timeout(Duration::from_secs(1));
    Ok(out)
}

// ANCHOR: tokio_sender
/// The tokio sender: the same loop as `sender_loop`, asleep on tokio's timer between
/// messages and through each gap, so it takes no CPU while it waits. Returning drops the sender's end, which ends a receiver's wait.
async fn tokio_sender(mut sender: TokioSender, plan: Plan, pacer: Arc<Pacer>, probe: Arc<Probe>) {
    for i in 0..plan.total() {
        if !pacer.wait_turn_async(i, plan.deadline).await {
            return;
        }
        let gap = plan.gap_before(i as u64);
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
        }
        probe.stamping_on(current_cpu());
        let msg = Msg {
            seq: i as u64,
            stamp: now_ns(),
        };
        if sender.send(msg).await.is_err() {
            return;
        }
    }
}
// ANCHOR_END: tokio_sender

/// The tokio receiver: the same loop as `receiver_loop`, with an `.await` where that
/// one blocks (bounded by `timeout_at` in the bounded arm only).
async fn tokio_receiver(
    mut link: TokioLink,
    wait: Wait,
    plan: Plan,
    pacer: Arc<Pacer>,
    probe: Arc<Probe>,
) -> Outcome {
    let mut r = Receiving::new(&plan, &pacer, &probe);
    'messages: for i in 0..plan.total() as u64 {
        loop {
            let until = r.until;
            let got = match wait {
                Wait::Spin => match spin(until, || link.attempt()) {
                    Spun::Got(msg) => Some(msg),
                    _ => None,
                },
                Wait::BlockBounded => tokio::time::timeout_at(until.into(), link.block())
                    .await
                    .ok()
                    .flatten(),
                _ => link.block().await,
            };
            match r.take(i, got) {
                Step::Again => continue,
                Step::Next => break,
                Step::Stop => break 'messages,
            }
        }
        r.done(i);
    }
    r.finish()
}

/// Runs any variant (`host` matters for tokio only).
pub fn run_variant(
    runtime: Runtime,
    transport: Transport,
    wait: Wait,
    host: Host,
    plan: &Plan,
) -> anyhow::Result<Outcome> {
    match runtime {
        Runtime::Std => run_std(transport, wait, plan),
        Runtime::Tokio => run_tokio(transport, wait, host, plan),
    }
}

// ANCHOR: floor
/// The floor: two threads hand a counter back and forth through one atomic, both
/// spinning. One writes an odd number and spins until the other (`echo`) answers
/// with the next even one. Half a round trip is the least a hand-over between two
/// threads can cost on this machine; no kernel, no queue, no syscall is involved.
pub fn atomic_ping_pong(round_trips: usize, placement: Placement, deadline: Instant) -> Vec<f64> {
    let ball = AtomicU64::new(0);
    let mut one_way_ns = Vec::with_capacity(round_trips);
    std::thread::scope(|s| {
        s.spawn(|| echo(&ball, placement));
        s.spawn(|| {
            pin(placement, 0);
            for i in 0..round_trips as u64 {
                let t0 = Instant::now();
                ball.store(2 * i + 1, Ordering::Release);
                let answer = 2 * i + 2;
                let answered = spin(deadline, || {
                    if ball.load(Ordering::Acquire) == answer {
                        Attempt::Got(())
                    } else {
                        Attempt::Empty
                    }
                });
                if !matches!(answered, Spun::Got(())) {
                    break; // the time bound
                }
                one_way_ns.push(t0.elapsed().as_nanos() as f64 / 2.0);
                if i % 4096 == 0 && Instant::now() >= deadline {
                    break;
                }
            }
            ball.store(STOP, Ordering::Release);
        });
    });
    one_way_ns
}
// ANCHOR_END: floor

/// What one `Instant::now()` costs here: batches of reads timed together, the median
/// batch's time per read.
pub fn clock_read_ns() -> f64 {
    const READS: u32 = 10_000;
    let mut per_read: Vec<f64> = (0..21)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..READS {
                std::hint::black_box(Instant::now());
            }
            t0.elapsed().as_nanos() as f64 / f64::from(READS)
        })
        .collect();
    per_read.sort_by(f64::total_cmp);
    harness::stats::median_sorted(&per_read)
}

// ANCHOR: floor_echo
/// Tells `echo` that the ping-pong is over.
const STOP: u64 = u64::MAX;

/// The other end of the floor: answers every odd number with the next even one,
/// spinning in between, until it reads `STOP`.
fn echo(ball: &AtomicU64, placement: Placement) {
    pin(placement, 1);
    let mut seen = 0;
    loop {
        let v = ball.load(Ordering::Acquire);
        if v == STOP {
            return;
        }
        if v != seen && v % 2 == 1 {
            seen = v + 1;
            ball.store(seen, Ordering::Release);
        }
        std::hint::spin_loop();
    }
}
// ANCHOR_END: floor_echo

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP message that arrives in two reads is put together; end of stream closes
    /// the link and a read that would block is "nothing yet".
    #[test]
    fn a_message_in_pieces_is_put_together() {
        let sent = Msg { seq: 7, stamp: 42 };
        let bytes = sent.to_bytes();
        let (mut buf, mut filled) = ([0u8; 16], 0);
        buf[..5].copy_from_slice(&bytes[..5]);
        assert!(matches!(
            gather(&mut buf, &mut filled, Ok(5)),
            Attempt::Empty
        ));
        buf[5..].copy_from_slice(&bytes[5..]);
        match gather(&mut buf, &mut filled, Ok(11)) {
            Attempt::Got(m) => assert_eq!(m, sent),
            _ => panic!("the second read completes the message"),
        }
        assert_eq!(filled, 0);
        let would_block = Err(io::Error::from(ErrorKind::WouldBlock));
        assert!(matches!(
            gather(&mut buf, &mut filled, would_block),
            Attempt::Empty
        ));
        assert!(matches!(
            gather(&mut buf, &mut filled, Ok(0)),
            Attempt::Closed
        ));
    }

    /// A lost message is counted, the run goes on, and a message that arrives after
    /// the receiver gave up on it is never taken for the next one.
    #[test]
    fn a_lost_message_is_counted_and_the_run_goes_on() {
        let plan = Plan {
            messages: 6,
            warmup: 0,
            gap: Duration::ZERO,
            sender: Idle::Sleep,
            hybrid_spin: Duration::ZERO,
            placement: Placement::Unpinned,
            patience: Duration::from_millis(50),
            deadline: Instant::now() + Duration::from_secs(20),
        };
        let (pacer, probe) = (Pacer::default(), Probe::default());
        let (tx, mut rx) = mpsc::channel::<Msg>();
        let out = std::thread::scope(|s| {
            let (pacer, probe) = (&pacer, &probe);
            s.spawn(move || {
                let mut held = None;
                sender_loop(&plan, pacer, probe, |m| {
                    match m.seq {
                        // "Lost": held back, then delivered late, just before message 4.
                        2 => held = Some(m),
                        4 => {
                            let _ = tx.send(held.take().expect("message 2 was held"));
                            let _ = tx.send(m);
                        }
                        _ => {
                            let _ = tx.send(m);
                        }
                    }
                    Ok(())
                })
            });
            receiver_loop(&plan, pacer, probe, |until| {
                receive(&mut rx, Wait::BlockBounded, Duration::ZERO, until)
            })
        });
        assert_eq!(out.lost, 1);
        assert_eq!(out.latencies_ns.len(), 5);
        assert!(out.stopped.is_none());
        // The late message 2 was skipped, so message 4's latency is its own, not 2's.
        assert!(
            out.latencies_ns.iter().all(|l| *l < 40e6),
            "{:?}",
            out.latencies_ns
        );
    }
}
