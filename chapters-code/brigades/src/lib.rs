//! Chapter 2, *Context-switch brigades*: one byte is handed along a chain of N
//! threads or N async tasks, each one waiting for it, adding one and passing it on.
//! The time a full lap takes, divided by N, is the cost of one hand-over: one wake-up,
//! one read, one write, and whatever the scheduler does in between.
//!
//! Every brigade has the same shape. Link 0 runs from the driver to member 0, link
//! `i + 1` from member `i` to member `i + 1`, and the last link back to the driver.
//! The driver writes a byte into link 0 and waits for it on the last link; it must
//! come back increased by N (mod 256), which proves that every member handled it.
//! Closing link 0 ends the brigade: each member sees end-of-file, closes its own
//! outgoing link and returns how many bytes it passed on.
//!
//! `lib.rs` holds the mechanism and the names of the headline figures;
//! `experiments.rs` the rounds; `views.rs` the tables and plots; `os.rs` what the
//! operating system says; `chapter.rs` the chapter's registry (its experiments, views
//! and headlines), kept apart so that the mechanism imports nothing that builds on it.

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

pub mod experiments;
pub mod os;
pub mod views;

pub mod chapter;
pub use chapter::CHAPTER;

pub use os::Usage;

/// The names of the chapter's headline figures: the guide, the appendix and the
/// comparisons read them by these constants, so a renamed figure fails to compile.
pub mod headline {
    pub const THREADS_PER_HOP: &str = "threads-per-hop";
    pub const ASYNC_CURRENT_SOCKET_PER_HOP: &str = "async-current-socket-per-hop";
    pub const ASYNC_CURRENT_CHANNEL_PER_HOP: &str = "async-current-channel-per-hop";
    pub const ASYNC_TASK_BYTES: &str = "async-task-bytes";
}

/// A brigade smaller than this is not measured: its laps would say nothing about
/// hand-overs between members, so a limit that leaves fewer is reported, not timed.
pub const MIN_MEMBERS: usize = 2;

/// The brigades of the chapter: what waits (a thread or an async task, on which tokio
/// runtime) and what links the members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// A thread per member, Unix-domain socket pairs: the write-up's thread brigade.
    Thread,
    /// The same, every member and the driver pinned to one CPU.
    ThreadOneCpu,
    /// A tokio task per member on the current-thread runtime, socket pairs.
    AsyncCurrentSocket,
    /// The same on tokio's multi-thread runtime: the write-up's async brigade, by our
    /// reading.
    AsyncMultiSocket,
    /// Tasks linked by tokio `mpsc` channels, current-thread runtime.
    AsyncCurrentChannel,
    /// Channels on the multi-thread runtime.
    AsyncMultiChannel,
    /// tokio's in-memory pipe (no file descriptor), current-thread runtime.
    AsyncCurrentPipe,
    /// Socket pairs, tasks spread over two threads: members alternate between two
    /// current-thread runtimes, each on its own thread, so every hop wakes the other
    /// thread (what the multi-thread runtime does when a woken task lands on another
    /// worker, made to happen at every hop).
    AsyncSpreadSocket,
    /// One thread does every read and write of a socket brigade itself.
    OneThread,
}

impl Kind {
    /// The reading's key: what waits, and over which link.
    pub const fn key(self) -> &'static str {
        match self {
            Kind::Thread => "threads · socket",
            Kind::ThreadOneCpu => "threads on one CPU · socket",
            Kind::AsyncCurrentSocket => "async current-thread · socket",
            Kind::AsyncMultiSocket => "async multi-thread · socket",
            Kind::AsyncCurrentChannel => "async current-thread · channel",
            Kind::AsyncMultiChannel => "async multi-thread · channel",
            Kind::AsyncCurrentPipe => "async current-thread · in-memory pipe",
            Kind::AsyncSpreadSocket => "async on two threads · socket",
            Kind::OneThread => "one thread · socket",
        }
    }

    /// A short row label for tables (the page gives the legend: ct = current-thread,
    /// mt = multi-thread runtime).
    pub const fn short(self) -> &'static str {
        match self {
            Kind::Thread => "threads",
            Kind::ThreadOneCpu => "threads, one CPU",
            Kind::AsyncCurrentSocket => "async ct, socket",
            Kind::AsyncMultiSocket => "async mt, socket",
            Kind::AsyncCurrentChannel => "async ct, channel",
            Kind::AsyncMultiChannel => "async mt, channel",
            Kind::AsyncCurrentPipe => "async ct, mem pipe",
            Kind::AsyncSpreadSocket => "async 2 threads, socket",
            Kind::OneThread => "one thread, socket",
        }
    }

    pub fn is_thread(self) -> bool {
        matches!(self, Kind::Thread | Kind::ThreadOneCpu)
    }

    /// Whether its links are socket pairs (two file descriptors each).
    pub fn uses_fds(self) -> bool {
        matches!(
            self,
            Kind::Thread
                | Kind::ThreadOneCpu
                | Kind::AsyncCurrentSocket
                | Kind::AsyncMultiSocket
                | Kind::AsyncSpreadSocket
                | Kind::OneThread
        )
    }

    fn flavor(self) -> Flavor {
        match self {
            Kind::AsyncMultiSocket | Kind::AsyncMultiChannel => Flavor::MultiThread,
            _ => Flavor::CurrentThread,
        }
    }
}

/// Why a brigade has fewer members than were asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub wanted: usize,
    /// The members that were built.
    pub built: usize,
    /// The limit that stopped it, in a reader's words.
    pub limit: String,
}

/// What [`Stop::limit`] says when the round's time, not a limit, ended the build.
pub const TIME_BOUND: &str = "the time bound of this round";

impl Stop {
    pub fn new(wanted: usize, built: usize, limit: String) -> Stop {
        Stop {
            wanted,
            built,
            limit,
        }
    }

    /// Whether the round's time bound, not a resource limit, stopped the build.
    pub fn by_time(&self) -> bool {
        self.limit == TIME_BOUND
    }
}

/// Ceilings a builder stops at before the operating system says no.
#[derive(Debug, Clone)]
pub struct Caps {
    /// Threads this process may still start, and the limit that says so.
    pub threads: usize,
    pub threads_why: String,
    /// That limit and its value, short (`kernel.pid_max = 32,768`).
    pub threads_limit: String,
    /// Resident memory one build may add, and where that budget comes from.
    pub memory: u64,
    pub memory_why: String,
    /// Building stops at this instant.
    pub deadline: Option<Instant>,
}

impl Caps {
    /// No ceilings but the operating system's own.
    pub fn none() -> Caps {
        Caps {
            threads: usize::MAX,
            threads_why: String::new(),
            threads_limit: String::new(),
            memory: u64::MAX,
            memory_why: String::new(),
            deadline: None,
        }
    }

    /// The ceilings of this machine now: threads left under the limits they share
    /// with others (see [`os::thread_guard`]), and the memory budget (1 GiB, or what
    /// this cgroup leaves).
    pub fn here(deadline: Instant) -> Caps {
        let guard = os::thread_guard_named();
        let (memory, source) = os::memory_budget();
        let memory_why = format!("the memory budget ({source})");
        Caps {
            threads: guard.room,
            threads_why: guard.why,
            threads_limit: guard.limit,
            memory,
            memory_why,
            deadline: Some(deadline),
        }
    }

    /// Why member `i` must not be built, if it must not. The thread count is checked
    /// for every member, the clock and resident memory every 1,024.
    fn refuse(&self, i: usize, thread: bool, start_rss: Option<u64>) -> Option<String> {
        if thread && i >= self.threads {
            return Some(self.threads_why.clone());
        }
        if i == 0 || !i.is_multiple_of(1024) {
            return None;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(TIME_BOUND.into());
        }
        let grown = os::resident_bytes()?.saturating_sub(start_rss?);
        (grown > self.memory).then(|| self.memory_why.clone())
    }
}

/// A few descriptors held while a brigade is built and given back afterwards, so that
/// a brigade that runs into the open-file limit still leaves the process room to read
/// `/proc`, start its runtime and report the limit.
struct FdReserve(#[allow(dead_code)] Vec<std::fs::File>);

impl FdReserve {
    fn new() -> FdReserve {
        #[cfg(unix)]
        let v = (0..16)
            .filter_map(|_| std::fs::File::open("/dev/null").ok())
            .collect();
        #[cfg(not(unix))]
        let v = Vec::new();
        FdReserve(v)
    }
}

/// The timed laps of one brigade.
#[derive(Debug, Clone, Default)]
pub struct Laps {
    /// Members in the chain (threads or tasks).
    pub tasks: usize,
    /// Nanoseconds per lap, one entry per timed lap (warm-up laps are not kept).
    pub ns: Vec<f64>,
    /// What the whole process spent during the timed laps (getrusage), where available.
    pub usage: Option<Usage>,
    /// The deadline came before every requested lap ran.
    pub stopped_early: bool,
    /// Laps that completed, warm-up included.
    pub laps_run: u64,
    /// Resident memory the brigade added (read after its laps, before it closed).
    pub resident_added: Option<f64>,
}

fn round_trip_check(sent: u8, got: u8, tasks: usize) -> io::Result<()> {
    let want = sent.wrapping_add(tasks as u8);
    if got == want {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the byte came back as {got}, expected {want}: a member skipped it"),
        ))
    }
}

// ANCHOR: drive
/// Runs `warmup + laps` laps, timing each of the last `laps` from the write into the
/// first link to the read out of the last, and checks that the byte came back
/// increased once per member. Stops at `deadline`, keeping the laps it has (at
/// least three timed laps, so a slow build still gives the round a value).
pub fn drive(
    tasks: usize,
    warmup: usize,
    laps: usize,
    deadline: Instant,
    mut lap: impl FnMut(u8) -> io::Result<u8>,
) -> io::Result<Laps> {
    let mut out = Laps {
        tasks,
        ns: Vec::with_capacity(laps),
        ..Laps::default()
    };
    for i in 0..warmup + laps {
        if i == warmup {
            out.usage = Usage::now(); // its reads end before the first lap's start
        }
        let sent = i as u8;
        let start = Instant::now();
        let got = lap(sent)?;
        let took = start.elapsed();
        round_trip_check(sent, got, tasks)?;
        out.laps_run += 1;
        if i >= warmup {
            out.ns.push(took.as_nanos() as f64);
        }
        // The deadline ends the timed laps, but not before the first three.
        let enough = out.ns.len() >= laps.min(3);
        if Instant::now() >= deadline && enough && i + 1 < warmup + laps {
            out.stopped_early = true;
            break;
        }
    }
    out.usage = Usage::since(out.usage); // its reads start after the last lap's end
    Ok(out)
}
// ANCHOR_END: drive

/// How long a lap may take past the deadline before the brigade counts as stalled.
const STALL_GRACE: Duration = Duration::from_secs(2);

#[cfg(unix)]
pub use std::os::unix::net::UnixStream;

// ANCHOR: thread_member
/// A member of the thread brigade: block in `read` until a byte arrives, add one,
/// write it to the next link. End-of-file means the brigade is over.
#[cfg(unix)]
pub fn thread_member(mut from: UnixStream, mut to: UnixStream) -> io::Result<u64> {
    use std::io::{Read, Write};
    let mut byte = [0u8; 1];
    let mut passed = 0;
    loop {
        match from.read(&mut byte) {
            Ok(0) => return Ok(passed),
            Ok(_) => {
                byte[0] = byte[0].wrapping_add(1);
                to.write_all(&byte)?;
                passed += 1;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}
// ANCHOR_END: thread_member

// ANCHOR: thread_lap
/// One lap of a thread brigade: write the byte into the first link, block until it
/// comes out of the last one.
#[cfg(unix)]
pub fn thread_lap(head: &mut UnixStream, tail: &mut UnixStream, byte: u8) -> io::Result<u8> {
    use std::io::{Read, Write};
    head.write_all(&[byte])?;
    let mut got = [0u8; 1];
    tail.read_exact(&mut got)?;
    Ok(got[0])
}
// ANCHOR_END: thread_lap

/// N threads joined by Unix-domain socket pairs.
#[cfg(unix)]
pub struct ThreadBrigade {
    head: UnixStream,
    tail: UnixStream,
    members: Vec<std::thread::JoinHandle<io::Result<u64>>>,
    /// Set when a limit stopped the build short of the size asked for.
    pub stop: Option<Stop>,
}

/// Up to `n` socket pairs; the first refusal ends the list and names its limit.
#[cfg(unix)]
fn socket_pairs(n: usize) -> (Vec<(UnixStream, UnixStream)>, Option<String>) {
    let mut pairs = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        match UnixStream::pair() {
            Ok(p) => pairs.push(p),
            Err(e) => return (pairs, Some(os::diagnose_link_error(&e))),
        }
    }
    (pairs, None)
}

/// Starts a member thread. It receives its two link ends only once it exists, so a
/// refused spawn hands `from` back and the brigade can end at the previous member.
#[cfg(unix)]
fn spawn_member(
    from: UnixStream,
    to: UnixStream,
    cpu: Option<core_affinity::CoreId>,
) -> Result<std::thread::JoinHandle<io::Result<u64>>, (io::Error, UnixStream)> {
    let (give, take) = std::sync::mpsc::sync_channel::<(UnixStream, UnixStream)>(1);
    let spawned = std::thread::Builder::new().spawn(move || {
        if let Some(core) = cpu {
            core_affinity::set_for_current(core);
        }
        let (from, to) = take.recv().map_err(io::Error::other)?;
        thread_member(from, to)
    });
    match spawned {
        Ok(handle) => match give.send((from, to)) {
            Ok(()) => Ok(handle),
            Err(back) => Err((io::Error::other("a member thread ended at once"), back.0.0)),
        },
        Err(e) => Err((e, from)),
    }
}

// ANCHOR: thread_build
/// Builds a thread brigade of up to `tasks` members: the N + 1 socket pairs, then a
/// thread per member. Whatever refuses first (a socket pair, a thread, a ceiling in
/// `caps`) ends the brigade at the members that exist; `stop` names the limit.
#[cfg(unix)]
pub fn build_thread_brigade(
    tasks: usize,
    caps: &Caps,
    cpu: Option<core_affinity::CoreId>,
) -> Result<ThreadBrigade, Stop> {
    let reserve = FdReserve::new(); // spare descriptors, given back below
    let start_rss = os::resident_bytes();
    let (pairs, mut refused) = socket_pairs(tasks + 1);
    let mut pairs = pairs.into_iter();
    let (head, mut tail) = pairs
        .next()
        .ok_or_else(|| Stop::new(tasks, 0, refused.clone().unwrap_or_default()))?;
    let mut members = Vec::with_capacity(tasks.min(1 << 16));
    for (i, (next_in, next_out)) in pairs.enumerate() {
        if let Some(why) = caps.refuse(i, true, start_rss) {
            refused = Some(why);
            break;
        }
        match spawn_member(tail, next_in, cpu) {
            Ok(member) => members.push(member),
            Err((e, back)) => {
                (tail, refused) = (back, Some(os::diagnose_spawn_error(&e)));
                break;
            }
        }
        tail = next_out;
    }
    drop(reserve);
    let stop = refused.map(|why| Stop::new(tasks, members.len(), why));
    Ok(ThreadBrigade {
        head,
        tail,
        members,
        stop,
    })
}
// ANCHOR_END: thread_build

#[cfg(unix)]
impl ThreadBrigade {
    pub fn tasks(&self) -> usize {
        self.members.len()
    }

    /// Times laps until `laps` ran or `deadline` passed. A lap that never returns (a
    /// stalled brigade) fails shortly after the deadline instead of hanging.
    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        let patience = deadline.saturating_duration_since(Instant::now()) + STALL_GRACE;
        self.tail.set_read_timeout(Some(patience))?;
        let (head, tail, tasks) = (&mut self.head, &mut self.tail, self.members.len());
        drive(tasks, warmup, laps, deadline, |b| thread_lap(head, tail, b)).map_err(stalled)
    }

    /// Closes the brigade and returns how many bytes each member passed on.
    pub fn finish(self) -> io::Result<Vec<u64>> {
        drop(self.head);
        let mut counts = Vec::with_capacity(self.members.len());
        for m in self.members {
            let n = m
                .join()
                .map_err(|_| io::Error::other("a member thread panicked"))??;
            counts.push(n);
        }
        Ok(counts)
    }
}

fn stalled(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            "the byte did not come back before the time bound: the brigade stalled",
        ),
        _ => e,
    }
}

// ANCHOR: one_thread_lap
/// One lap done by one thread over a brigade's links: every read finds its byte
/// already waiting, so nothing ever blocks and nothing is switched.
#[cfg(unix)]
pub fn one_thread_lap(links: &mut [(UnixStream, UnixStream)], byte: u8) -> io::Result<u8> {
    use std::io::{Read, Write};
    let (mut b, n) = ([byte], links.len() - 1);
    links[0].0.write_all(&b)?;
    for i in 0..n {
        links[i].1.read_exact(&mut b)?;
        b[0] = b[0].wrapping_add(1);
        links[i + 1].0.write_all(&b)?;
    }
    links[n].1.read_exact(&mut b)?;
    Ok(b[0])
}
// ANCHOR_END: one_thread_lap

/// The same links as a thread brigade, but one thread does every read and write.
#[cfg(unix)]
pub struct OneThreadBrigade {
    links: Vec<(UnixStream, UnixStream)>,
    pub stop: Option<Stop>,
}

#[cfg(unix)]
impl OneThreadBrigade {
    pub fn build(tasks: usize) -> OneThreadBrigade {
        let reserve = FdReserve::new();
        let (links, refused) = socket_pairs(tasks + 1);
        drop(reserve);
        let built = links.len().saturating_sub(1);
        OneThreadBrigade {
            links,
            stop: refused.map(|limit| Stop {
                wanted: tasks,
                built,
                limit,
            }),
        }
    }

    pub fn tasks(&self) -> usize {
        self.links.len().saturating_sub(1)
    }

    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        let tasks = self.tasks();
        drive(tasks, warmup, laps, deadline, |b| {
            one_thread_lap(&mut self.links, b)
        })
    }
}

/// A one-way link between async tasks.
pub trait Link: 'static {
    type Tx: Send + 'static;
    type Rx: Send + 'static;
    const NAME: &'static str;
    /// A new link; file-descriptor links need to be made inside the runtime.
    fn pair() -> io::Result<(Self::Tx, Self::Rx)>;
    fn send(tx: &mut Self::Tx, byte: u8) -> impl Future<Output = io::Result<()>> + Send;
    /// The next byte, or `None` once the sending side is closed.
    fn recv(rx: &mut Self::Rx) -> impl Future<Output = io::Result<Option<u8>>> + Send;
    fn close(tx: Self::Tx) -> impl Future<Output = ()> + Send;
}

// ANCHOR: async_member
/// A member of an async brigade: the same loop as the thread's, but a read that finds
/// nothing suspends the task and gives its thread back to the runtime.
pub async fn async_member<L: Link>(mut from: L::Rx, mut to: L::Tx) -> io::Result<u64> {
    let mut passed = 0;
    while let Some(byte) = L::recv(&mut from).await? {
        L::send(&mut to, byte.wrapping_add(1)).await?;
        passed += 1;
    }
    L::close(to).await;
    Ok(passed)
}
// ANCHOR_END: async_member

// ANCHOR: async_lap
/// One lap of an async brigade, driven from outside the runtime by `block_on`: send
/// the byte into the first link and wait for it on the last.
pub async fn async_lap<L: Link>(head: &mut L::Tx, tail: &mut L::Rx, byte: u8) -> io::Result<u8> {
    L::send(head, byte).await?;
    L::recv(tail)
        .await?
        .ok_or_else(|| io::ErrorKind::UnexpectedEof.into())
}
// ANCHOR_END: async_lap

/// One byte through any tokio byte stream (a socket, or tokio's in-memory pipe).
async fn write_byte<W: tokio::io::AsyncWrite + Unpin>(tx: &mut W, byte: u8) -> io::Result<()> {
    use tokio::io::AsyncWriteExt;
    tx.write_all(&[byte]).await
}

/// `None` when the other end has closed.
async fn read_byte<R: tokio::io::AsyncRead + Unpin>(rx: &mut R) -> io::Result<Option<u8>> {
    use tokio::io::AsyncReadExt;
    let mut b = [0u8; 1];
    Ok((rx.read(&mut b).await? == 1).then_some(b[0]))
}

async fn shut<W: tokio::io::AsyncWrite + Unpin>(mut tx: W) {
    use tokio::io::AsyncWriteExt;
    let _ = tx.shutdown().await;
}

/// A Unix-domain socket pair registered with tokio's reactor (epoll on Linux).
#[cfg(unix)]
pub struct SocketLink;

// ANCHOR: socket_link
/// A socket pair as an async link: a read that finds no byte returns `EAGAIN` inside
/// tokio, which parks the task until epoll reports the socket readable.
#[cfg(unix)]
impl Link for SocketLink {
    type Tx = tokio::net::UnixStream;
    type Rx = tokio::net::UnixStream;
    const NAME: &'static str = "socket pair";

    fn pair() -> io::Result<(Self::Tx, Self::Rx)> {
        tokio::net::UnixStream::pair()
    }
    async fn send(tx: &mut Self::Tx, byte: u8) -> io::Result<()> {
        write_byte(tx, byte).await
    }
    async fn recv(rx: &mut Self::Rx) -> io::Result<Option<u8>> {
        read_byte(rx).await
    }
    async fn close(tx: Self::Tx) {
        shut(tx).await
    }
}
// ANCHOR_END: socket_link

/// tokio's in-memory pipe (`tokio::io::simplex`): the same read/write calls as a
/// socket, no file descriptor, no system call.
pub struct PipeLink;

impl Link for PipeLink {
    type Tx = tokio::io::WriteHalf<tokio::io::SimplexStream>;
    type Rx = tokio::io::ReadHalf<tokio::io::SimplexStream>;
    const NAME: &'static str = "in-memory pipe";

    fn pair() -> io::Result<(Self::Tx, Self::Rx)> {
        let (rx, tx) = tokio::io::simplex(16);
        Ok((tx, rx))
    }
    async fn send(tx: &mut Self::Tx, byte: u8) -> io::Result<()> {
        write_byte(tx, byte).await
    }
    async fn recv(rx: &mut Self::Rx) -> io::Result<Option<u8>> {
        read_byte(rx).await
    }
    async fn close(tx: Self::Tx) {
        shut(tx).await
    }
}

/// A bounded tokio channel of capacity one: no I/O at all.
pub struct ChannelLink;

// ANCHOR: channel_link
/// A tokio `mpsc` channel of capacity one as an async link: no socket, no system call
/// while both ends are on one thread.
impl Link for ChannelLink {
    type Tx = tokio::sync::mpsc::Sender<u8>;
    type Rx = tokio::sync::mpsc::Receiver<u8>;
    const NAME: &'static str = "tokio mpsc channel";

    fn pair() -> io::Result<(Self::Tx, Self::Rx)> {
        Ok(tokio::sync::mpsc::channel(1))
    }
    async fn send(tx: &mut Self::Tx, byte: u8) -> io::Result<()> {
        tx.send(byte)
            .await
            .map_err(|_| io::ErrorKind::BrokenPipe.into())
    }
    async fn recv(rx: &mut Self::Rx) -> io::Result<Option<u8>> {
        Ok(rx.recv().await)
    }
    async fn close(tx: Self::Tx) {
        drop(tx);
    }
}
// ANCHOR_END: channel_link

/// Which tokio scheduler runs the brigade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Flavor {
    /// Every task on the driver's own thread.
    CurrentThread,
    /// tokio's default: one worker per CPU, with work stealing.
    MultiThread,
}

/// Worker threads of a multi-thread runtime here: one per logical CPU, tokio's default.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Times the laps of a brigade driven from outside its runtime: each lap is one
/// `block_on`, bounded, so a stalled brigade fails shortly after the deadline. Shared by
/// the async brigades and the spread one.
fn runtime_laps<L: Link>(
    rt: &tokio::runtime::Runtime,
    head: &mut L::Tx,
    tail: &mut L::Rx,
    members: usize,
    (warmup, laps): (usize, usize),
    deadline: Instant,
) -> io::Result<Laps> {
    let give_up = tokio::time::Instant::from_std(deadline + STALL_GRACE);
    drive(members, warmup, laps, deadline, |b| {
        rt.block_on(async { tokio::time::timeout_at(give_up, async_lap::<L>(head, tail, b)).await })
            .map_err(|_| stalled(io::ErrorKind::TimedOut.into()))?
    })
}

/// N async tasks joined by links of kind `L`.
pub struct AsyncBrigade<L: Link> {
    rt: tokio::runtime::Runtime,
    head: L::Tx,
    tail: L::Rx,
    members: Vec<tokio::task::JoinHandle<io::Result<u64>>>,
    pub stop: Option<Stop>,
}

impl<L: Link> AsyncBrigade<L> {
    /// Builds up to `tasks` members on a new runtime. A refused link, resident memory
    /// past `caps.memory` or the time bound closes the brigade off where it got to.
    /// `Err` only when the runtime itself (or its first link) cannot be made, or a
    /// multi-thread runtime would need more threads than `caps` allows.
    pub fn build(tasks: usize, flavor: Flavor, caps: &Caps) -> Result<AsyncBrigade<L>, Stop> {
        let none = |limit: String| Stop {
            wanted: tasks,
            built: 0,
            limit,
        };
        let reserve = FdReserve::new();
        let rt = match flavor {
            Flavor::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            Flavor::MultiThread if caps.threads < workers() => {
                return Err(none(caps.threads_why.clone()));
            }
            Flavor::MultiThread => {
                let mut b = tokio::runtime::Builder::new_multi_thread();
                b.worker_threads(workers());
                b
            }
        }
        .enable_all()
        .build()
        .map_err(|e| none(os::diagnose_spawn_error(&e)))?;
        let in_runtime = rt.enter();
        let start_rss = os::resident_bytes();
        let (head, mut tail) = L::pair().map_err(|e| none(os::diagnose_link_error(&e)))?;
        let mut members = Vec::with_capacity(tasks.min(1 << 20));
        let mut refused = None;
        for i in 0..tasks {
            if let Some(why) = caps.refuse(i, false, start_rss) {
                refused = Some(why);
                break;
            }
            match L::pair() {
                Ok((next_in, next_out)) => {
                    members.push(tokio::spawn(async_member::<L>(tail, next_in)));
                    tail = next_out;
                }
                Err(e) => {
                    refused = Some(os::diagnose_link_error(&e));
                    break;
                }
            }
        }
        drop((reserve, in_runtime));
        let stop = refused.map(|limit| Stop {
            wanted: tasks,
            built: members.len(),
            limit,
        });
        Ok(AsyncBrigade {
            rt,
            head,
            tail,
            members,
            stop,
        })
    }

    pub fn tasks(&self) -> usize {
        self.members.len()
    }

    /// Times laps until `laps` ran or `deadline` passed; each lap is one `block_on`,
    /// bounded, so a stalled brigade fails shortly after the deadline.
    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        let n = self.members.len();
        runtime_laps::<L>(
            &self.rt,
            &mut self.head,
            &mut self.tail,
            n,
            (warmup, laps),
            deadline,
        )
    }

    /// Closes the brigade and returns how many bytes each member passed on.
    pub fn finish(self) -> io::Result<Vec<u64>> {
        let AsyncBrigade {
            rt, head, members, ..
        } = self;
        let counts = rt.block_on(async move {
            L::close(head).await;
            let mut counts = Vec::with_capacity(members.len());
            for m in members {
                counts.push(m.await.map_err(io::Error::other)??);
            }
            Ok::<_, io::Error>(counts)
        });
        rt.shutdown_background();
        counts
    }
}

// ANCHOR: spread
/// N async tasks over socket pairs, spread over two threads: member `i` runs on one of
/// two current-thread runtimes, alternately, so each hop hands the byte to a task on
/// the other thread, which epoll must wake. The driver's thread runs one runtime (in
/// `block_on`), a thread of its own the other.
#[cfg(unix)]
pub struct SpreadBrigade {
    rt: tokio::runtime::Runtime,
    /// The second runtime's thread, which runs until this sender is dropped.
    other: Option<(
        std::thread::JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    )>,
    head: tokio::net::UnixStream,
    tail: tokio::net::UnixStream,
    members: Vec<tokio::task::JoinHandle<io::Result<u64>>>,
    pub stop: Option<Stop>,
}

/// A member on whichever runtime polls it: its link ends are registered with that
/// runtime's reactor on its first poll.
#[cfg(unix)]
async fn spread_member(from: UnixStream, to: UnixStream) -> io::Result<u64> {
    let tokio_end = |s: UnixStream| {
        s.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(s)
    };
    async_member::<SocketLink>(tokio_end(from)?, tokio_end(to)?).await
}
// ANCHOR_END: spread

#[cfg(unix)]
impl SpreadBrigade {
    /// Builds up to `tasks` members; the second runtime needs one thread.
    pub fn build(tasks: usize, caps: &Caps) -> Result<SpreadBrigade, Stop> {
        let none = |limit: String| Stop::new(tasks, 0, limit);
        if caps.threads < 1 {
            return Err(none(caps.threads_why.clone()));
        }
        let reserve = FdReserve::new();
        let runtime = || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| none(os::diagnose_spawn_error(&e)))
        };
        let (rt, rt2) = (runtime()?, runtime()?);
        let other = rt2.handle().clone();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .spawn(move || {
                rt2.block_on(async {
                    let _ = stop_rx.await;
                });
            })
            .map_err(|e| none(os::diagnose_spawn_error(&e)))?;
        let start_rss = os::resident_bytes();
        let (pairs, mut refused) = socket_pairs(tasks + 1);
        let mut pairs = pairs.into_iter();
        let Some((head, mut tail)) = pairs.next() else {
            return Err(none(refused.unwrap_or_default()));
        };
        let mut members = Vec::with_capacity(tasks.min(1 << 16));
        for (i, (next_in, next_out)) in pairs.enumerate() {
            if let Some(why) = caps.refuse(i, false, start_rss) {
                refused = Some(why);
                break;
            }
            let member = spread_member(tail, next_in);
            members.push(if i % 2 == 0 {
                other.spawn(member)
            } else {
                rt.spawn(member)
            });
            tail = next_out;
        }
        drop(reserve);
        let tokio_end = |s: UnixStream| {
            let _in_runtime = rt.enter();
            s.set_nonblocking(true)?;
            tokio::net::UnixStream::from_std(s)
        };
        let fail = |e: io::Error| none(os::diagnose_link_error(&e));
        let (head, tail) = (
            tokio_end(head).map_err(fail)?,
            tokio_end(tail).map_err(fail)?,
        );
        let stop = refused.map(|why| Stop::new(tasks, members.len(), why));
        Ok(SpreadBrigade {
            rt,
            other: Some((thread, stop_tx)),
            head,
            tail,
            members,
            stop,
        })
    }

    pub fn tasks(&self) -> usize {
        self.members.len()
    }

    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        let n = self.members.len();
        runtime_laps::<SocketLink>(
            &self.rt,
            &mut self.head,
            &mut self.tail,
            n,
            (warmup, laps),
            deadline,
        )
    }

    /// Closes the brigade, returns how many bytes each member passed on, and stops the
    /// second runtime's thread.
    pub fn finish(mut self) -> io::Result<Vec<u64>> {
        let members = std::mem::take(&mut self.members);
        let SpreadBrigade {
            rt, other, head, ..
        } = self;
        let counts = rt.block_on(async move {
            SocketLink::close(head).await;
            let mut counts = Vec::with_capacity(members.len());
            for m in members {
                counts.push(m.await.map_err(io::Error::other)??);
            }
            Ok::<_, io::Error>(counts)
        });
        rt.shutdown_background();
        if let Some((thread, stop)) = other {
            let _ = stop.send(());
            thread
                .join()
                .map_err(|_| io::Error::other("the second runtime's thread panicked"))?;
        }
        counts
    }
}

/// Why a brigade of some kind could not be measured.
#[derive(Debug)]
pub enum Refused {
    /// A limit left fewer than [`MIN_MEMBERS`] members.
    Limit(Stop),
    /// This operating system lacks what the kind needs.
    Unsupported(&'static str),
    /// Anything else: a stalled brigade, a member that skipped a byte.
    Failed(io::Error),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Limit(s) => write!(
                f,
                "asked for {} members, a limit left {}: {}",
                s.wanted, s.built, s.limit
            ),
            Refused::Unsupported(why) => f.write_str(why),
            Refused::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// A brigade of any kind, built and ready for laps.
pub enum Brigade {
    #[cfg(unix)]
    Threads(ThreadBrigade, bool),
    #[cfg(unix)]
    OneThread(OneThreadBrigade),
    #[cfg(unix)]
    Socket(AsyncBrigade<SocketLink>),
    #[cfg(unix)]
    Spread(SpreadBrigade),
    Channel(AsyncBrigade<ChannelLink>),
    Pipe(AsyncBrigade<PipeLink>),
}

/// The first CPU, where a pinned brigade runs.
#[cfg(target_os = "linux")]
fn first_cpu() -> Option<core_affinity::CoreId> {
    core_affinity::get_core_ids().and_then(|c| c.into_iter().next())
}

impl Brigade {
    /// Builds a brigade of `kind` with up to `tasks` members. A limit that leaves
    /// fewer than [`MIN_MEMBERS`] is [`Refused::Limit`]: such a brigade is closed at
    /// once, never timed.
    pub fn build(kind: Kind, tasks: usize, caps: &Caps) -> Result<Brigade, Refused> {
        let b = match kind {
            Kind::AsyncCurrentChannel | Kind::AsyncMultiChannel => {
                AsyncBrigade::build(tasks, kind.flavor(), caps).map(Brigade::Channel)
            }
            Kind::AsyncCurrentPipe => {
                AsyncBrigade::build(tasks, kind.flavor(), caps).map(Brigade::Pipe)
            }
            #[cfg(unix)]
            Kind::AsyncCurrentSocket | Kind::AsyncMultiSocket => {
                AsyncBrigade::build(tasks, kind.flavor(), caps).map(Brigade::Socket)
            }
            #[cfg(unix)]
            Kind::AsyncSpreadSocket => SpreadBrigade::build(tasks, caps).map(Brigade::Spread),
            #[cfg(unix)]
            Kind::Thread => {
                build_thread_brigade(tasks, caps, None).map(|b| Brigade::Threads(b, false))
            }
            #[cfg(target_os = "linux")]
            Kind::ThreadOneCpu => {
                let cpu = first_cpu().ok_or(Refused::Unsupported(
                    "this system does not let a program pick a thread's CPU",
                ))?;
                build_thread_brigade(tasks, caps, Some(cpu)).map(|b| Brigade::Threads(b, true))
            }
            #[cfg(all(unix, not(target_os = "linux")))]
            Kind::ThreadOneCpu => Err(Refused::Unsupported(
                "this OS does not let a program pin a thread to one CPU",
            ))?,
            #[cfg(unix)]
            Kind::OneThread => Ok(Brigade::OneThread(OneThreadBrigade::build(tasks))),
            #[cfg(not(unix))]
            _ => Err(Refused::Unsupported(
                "Unix-domain socket pairs do not exist on this OS",
            ))?,
        }
        .map_err(Refused::Limit)?;
        if b.tasks() < MIN_MEMBERS {
            let stop = b.stop().unwrap_or_else(|| Stop {
                wanted: tasks,
                built: b.tasks(),
                limit: "nothing: fewer members were asked for".into(),
            });
            let _ = b.finish();
            return Err(Refused::Limit(stop));
        }
        Ok(b)
    }

    pub fn tasks(&self) -> usize {
        match self {
            #[cfg(unix)]
            Brigade::Threads(b, _) => b.tasks(),
            #[cfg(unix)]
            Brigade::OneThread(b) => b.tasks(),
            #[cfg(unix)]
            Brigade::Socket(b) => b.tasks(),
            #[cfg(unix)]
            Brigade::Spread(b) => b.tasks(),
            Brigade::Channel(b) => b.tasks(),
            Brigade::Pipe(b) => b.tasks(),
        }
    }

    pub fn stop(&self) -> Option<Stop> {
        match self {
            #[cfg(unix)]
            Brigade::Threads(b, _) => b.stop.clone(),
            #[cfg(unix)]
            Brigade::OneThread(b) => b.stop.clone(),
            #[cfg(unix)]
            Brigade::Socket(b) => b.stop.clone(),
            #[cfg(unix)]
            Brigade::Spread(b) => b.stop.clone(),
            Brigade::Channel(b) => b.stop.clone(),
            Brigade::Pipe(b) => b.stop.clone(),
        }
    }

    /// Times laps; a pinned thread brigade is driven from a thread on the same CPU.
    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        match self {
            #[cfg(target_os = "linux")]
            Brigade::Threads(b, true) => std::thread::scope(|s| {
                s.spawn(|| {
                    if let Some(core) = first_cpu() {
                        core_affinity::set_for_current(core);
                    }
                    b.laps(warmup, laps, deadline)
                })
                .join()
                .map_err(|_| io::Error::other("the pinned driver panicked"))?
            }),
            #[cfg(unix)]
            Brigade::Threads(b, _) => b.laps(warmup, laps, deadline),
            #[cfg(unix)]
            Brigade::OneThread(b) => b.laps(warmup, laps, deadline),
            #[cfg(unix)]
            Brigade::Socket(b) => b.laps(warmup, laps, deadline),
            #[cfg(unix)]
            Brigade::Spread(b) => b.laps(warmup, laps, deadline),
            Brigade::Channel(b) => b.laps(warmup, laps, deadline),
            Brigade::Pipe(b) => b.laps(warmup, laps, deadline),
        }
    }

    /// Closes the brigade; returns how many bytes each member passed on (the
    /// one-thread brigade has no members of its own).
    pub fn finish(self) -> io::Result<Vec<u64>> {
        match self {
            #[cfg(unix)]
            Brigade::Threads(b, _) => b.finish(),
            #[cfg(unix)]
            Brigade::OneThread(_) => Ok(Vec::new()),
            #[cfg(unix)]
            Brigade::Socket(b) => b.finish(),
            #[cfg(unix)]
            Brigade::Spread(b) => b.finish(),
            Brigade::Channel(b) => b.finish(),
            Brigade::Pipe(b) => b.finish(),
        }
    }
}

/// Builds a brigade, times its laps, reads the resident memory it added, closes it
/// and checks that every member passed on every byte (warm-up included).
pub fn measure(
    kind: Kind,
    tasks: usize,
    warmup: usize,
    laps: usize,
    caps: &Caps,
    deadline: Instant,
) -> Result<(Laps, Option<Stop>), Refused> {
    os::trim_heap();
    let rss0 = os::resident_bytes();
    let mut b = Brigade::build(kind, tasks, caps)?;
    let stop = b.stop();
    let timed = b.laps(warmup, laps, deadline);
    let rss1 = os::resident_bytes();
    let counts = b.finish();
    let mut r = timed.map_err(Refused::Failed)?;
    r.resident_added = match (rss0, rss1) {
        (Some(a), Some(b)) => Some(b as f64 - a as f64),
        _ => None,
    };
    check_counts(&r, &counts.map_err(Refused::Failed)?).map_err(Refused::Failed)?;
    Ok((r, stop))
}

/// Every member passed on every lap's byte (a lap cut off by the deadline may have
/// got part of the way along).
pub fn check_counts(r: &Laps, counts: &[u64]) -> io::Result<()> {
    let ok = |c: u64| c == r.laps_run || (r.stopped_early && c == r.laps_run + 1);
    match counts.iter().position(|&c| !ok(c)) {
        Some(bad) => Err(io::Error::other(format!(
            "member {bad} passed on {} bytes, not {}",
            counts[bad], r.laps_run
        ))),
        None => Ok(()),
    }
}

// ANCHOR: spawn_cost
/// Starts `n` threads that do nothing and waits for all of them.
pub fn spawn_threads(n: usize) -> io::Result<Duration> {
    let start = Instant::now();
    let handles = (0..n)
        .map(|_| std::thread::Builder::new().spawn(|| ()))
        .collect::<io::Result<Vec<_>>>()?;
    for h in handles {
        h.join()
            .map_err(|_| io::Error::other("a thread panicked"))?;
    }
    Ok(start.elapsed())
}

/// Starts `n` tokio tasks that do nothing and waits for all of them.
pub fn spawn_tasks(rt: &tokio::runtime::Runtime, n: usize) -> io::Result<Duration> {
    rt.block_on(async {
        let start = Instant::now();
        let handles: Vec<_> = (0..n).map(|_| tokio::spawn(async {})).collect();
        for h in handles {
            h.await.map_err(io::Error::other)?;
        }
        Ok(start.elapsed())
    })
}
// ANCHOR_END: spawn_cost
