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

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::io;
use std::time::{Duration, Instant};

mod experiments;
pub mod sys;
mod views;

pub use experiments::{CHAPTER, EXPERIMENTS};

/// The experiment plumbing, exposed for the integration tests.
#[doc(hidden)]
pub mod experiments_for_tests {
    pub use crate::experiments::{Kind, measure_kind, slope};
    pub fn reference_parses() -> anyhow::Result<()> {
        crate::views::reference_data().map(|_| ())
    }
}
pub use sys::Usage;

/// The timed laps of one brigade.
#[derive(Debug, Clone, Default)]
pub struct Rounds {
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
}

/// Why a brigade has fewer members than were asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub wanted: usize,
    /// The members that were built and run.
    pub built: usize,
    /// The limit that stopped it, in a reader's words.
    pub limit: String,
    /// The error or the numbers behind the diagnosis.
    pub detail: String,
}

/// Ceilings a brigade builder stops at before the operating system says no. `guard_*`
/// keep shared, system-wide resources (process ids, memory maps) from being used up
/// for everyone else on the machine; `fake_*` simulate a failing call, for tests.
#[derive(Debug, Clone)]
pub struct Caps {
    pub guard_threads: usize,
    pub guard_reason: String,
    pub resident_budget: Option<u64>,
    /// Stop building at this instant (the experiment's time bound).
    pub build_deadline: Option<Instant>,
    pub fake_link_failure_at: Option<usize>,
    pub fake_spawn_failure_at: Option<usize>,
}

impl Default for Caps {
    fn default() -> Caps {
        Caps {
            guard_threads: usize::MAX,
            guard_reason: String::new(),
            resident_budget: None,
            build_deadline: None,
            fake_link_failure_at: None,
            fake_spawn_failure_at: None,
        }
    }
}

impl Caps {
    /// Whether building should stop before member `i`, and why (checked every 1,024
    /// members, so the clock and /proc are read rarely).
    fn out_of_budget(&self, i: usize) -> Option<String> {
        if i == 0 || i % 1024 != 0 {
            return None;
        }
        if self.build_deadline.is_some_and(|d| Instant::now() >= d) {
            return Some("the experiment's time bound (building took too long)".into());
        }
        let budget = self.resident_budget?;
        let r = sys::resident_bytes().filter(|&r| r > budget)?;
        Some(format!(
            "this chapter's memory budget ({} resident)",
            mib(r)
        ))
    }

    fn fake(at: Option<usize>, i: usize, what: &str) -> io::Result<()> {
        match at {
            Some(n) if i >= n => Err(io::Error::other(format!(
                "artificial cap: no {what} after {n} (injected for testing)"
            ))),
            _ => Ok(()),
        }
    }
}

/// A few descriptors held while a brigade is built and given back afterwards, so that
/// a brigade that runs into the open-file limit still leaves the process room to read
/// `/proc`, write its results and report the limit.
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

/// Runs `warmup + rounds` laps of a blocking brigade, timing the last `rounds`, and
/// stops at `deadline` keeping the laps it has.
#[cfg_attr(not(unix), allow(dead_code))]
fn drive(
    tasks: usize,
    warmup: usize,
    rounds: usize,
    deadline: Instant,
    mut lap: impl FnMut(u8) -> io::Result<u8>,
) -> io::Result<Rounds> {
    let mut out = Rounds {
        tasks,
        ns: Vec::with_capacity(rounds),
        ..Rounds::default()
    };
    for i in 0..warmup + rounds {
        if i == warmup {
            out.usage = Usage::now();
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
        if Instant::now() >= deadline && i + 1 < warmup + rounds {
            out.stopped_early = true;
            break;
        }
    }
    out.usage = Usage::since(out.usage);
    Ok(out)
}

#[cfg(unix)]
pub use unix_brigades::{OneThreadBrigade, ThreadBrigade};

#[cfg(unix)]
mod unix_brigades {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc;
    use std::thread::{self, JoinHandle};

    // ANCHOR: thread_member
    /// A member of the thread brigade: block in `read` until a byte arrives, add one,
    /// write it to the next link. End-of-file means the brigade is over.
    fn thread_member(mut from: UnixStream, mut to: UnixStream) -> io::Result<u64> {
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

    /// N threads joined by Unix-domain socket pairs.
    pub struct ThreadBrigade {
        head: UnixStream,
        tail: UnixStream,
        members: Vec<JoinHandle<io::Result<u64>>>,
        /// Set when a limit stopped the build short of the size asked for.
        pub stop: Option<Stop>,
    }

    // ANCHOR: thread_build
    impl ThreadBrigade {
        /// Builds up to `tasks` members. When the OS refuses a socket pair or a thread
        /// (or a guard in `caps` is reached), the brigade is closed off at the members
        /// that exist and `stop` says why. `pin` puts every member on one CPU.
        pub fn build(
            tasks: usize,
            caps: &Caps,
            pin: Option<core_affinity::CoreId>,
        ) -> io::Result<ThreadBrigade> {
            let mut stop = None;
            let reserve = FdReserve::new(); // spare descriptors, given back after the build
            // All links first: N members need N + 1 of them.
            let mut links = Vec::with_capacity(tasks + 1);
            for i in 0..=tasks {
                match Caps::fake(caps.fake_link_failure_at, i, "socket pairs")
                    .and_then(|()| UnixStream::pair())
                {
                    Ok(pair) => links.push(pair),
                    Err(e) => {
                        let (limit, detail) = sys::diagnose_link_error(&e);
                        let built = i.saturating_sub(1);
                        stop = Some(Stop {
                            wanted: tasks,
                            built,
                            limit,
                            detail,
                        });
                        break;
                    }
                }
            }
            let mut links = links.into_iter();
            let Some((head, mut tail)) = links.next() else {
                return Err(io::Error::other(format!(
                    "could not create a single socket pair: {:?}",
                    stop.map(|s| s.detail)
                )));
            };
            let mut members = Vec::with_capacity(tasks);
            for (i, (next_in, next_out)) in links.enumerate() {
                // A new member receives its two ends only once it exists, so a refused
                // spawn leaves `tail` here and the brigade can end at the previous member.
                let (give, take) = mpsc::sync_channel::<(UnixStream, UnixStream)>(1);
                let budget = caps.out_of_budget(i);
                let spawned = if i >= caps.guard_threads || budget.is_some() {
                    Err(io::Error::other(caps.guard_reason.clone()))
                } else {
                    Caps::fake(caps.fake_spawn_failure_at, i, "threads").and_then(|()| {
                        thread::Builder::new().spawn(move || {
                            if let Some(core) = pin {
                                core_affinity::set_for_current(core);
                            }
                            let (from, to) = take.recv().map_err(io::Error::other)?;
                            thread_member(from, to)
                        })
                    })
                };
                match spawned {
                    Ok(handle) => {
                        give.send((tail, next_in)).map_err(io::Error::other)?;
                        members.push(handle);
                        tail = next_out;
                    }
                    Err(e) => {
                        let (limit, detail) = if let Some(why) = budget {
                            (why, format!("stopped building at {i} threads"))
                        } else if i >= caps.guard_threads {
                            (caps.guard_reason.clone(), format!("guard at {i} threads"))
                        } else {
                            sys::diagnose_spawn_error(&e, i)
                        };
                        stop = Some(Stop {
                            wanted: tasks,
                            built: i,
                            limit,
                            detail,
                        });
                        break;
                    }
                }
            }
            drop(reserve);
            Ok(ThreadBrigade {
                head,
                tail,
                members,
                stop,
            })
        }
    }
    // ANCHOR_END: thread_build

    impl ThreadBrigade {
        pub fn tasks(&self) -> usize {
            self.members.len()
        }

        // ANCHOR: thread_lap
        /// One lap: write the byte into the first link, block until it comes out of the
        /// last one.
        pub fn lap(&mut self, byte: u8) -> io::Result<u8> {
            self.head.write_all(&[byte])?;
            let mut got = [0u8; 1];
            self.tail.read_exact(&mut got)?;
            Ok(got[0])
        }
        // ANCHOR_END: thread_lap

        /// Times laps until `rounds` ran or `deadline` passed. A lap that never returns
        /// (a stalled brigade) fails once the deadline has passed instead of hanging.
        pub fn rounds(
            &mut self,
            warmup: usize,
            rounds: usize,
            deadline: Instant,
        ) -> io::Result<Rounds> {
            let patience = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(200));
            self.tail.set_read_timeout(Some(patience))?;
            let tasks = self.tasks();
            drive(tasks, warmup, rounds, deadline, |b| self.lap(b)).map_err(stalled)
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

    /// The same links, but one thread does every read and write itself: what the
    /// socket I/O costs with no wake-ups and no context switches at all.
    pub struct OneThreadBrigade {
        links: Vec<(UnixStream, UnixStream)>,
    }

    impl OneThreadBrigade {
        pub fn build(tasks: usize) -> io::Result<OneThreadBrigade> {
            let links = (0..=tasks)
                .map(|_| UnixStream::pair())
                .collect::<io::Result<Vec<_>>>()?;
            Ok(OneThreadBrigade { links })
        }

        pub fn tasks(&self) -> usize {
            self.links.len() - 1
        }

        // ANCHOR: one_thread_lap
        /// One lap done by one thread: every read finds its byte already waiting.
        pub fn lap(&mut self, byte: u8) -> io::Result<u8> {
            let (mut b, n) = ([byte], self.tasks());
            self.links[0].0.write_all(&b)?;
            for i in 0..n {
                self.links[i].1.read_exact(&mut b)?;
                b[0] = b[0].wrapping_add(1);
                self.links[i + 1].0.write_all(&b)?;
            }
            self.links[n].1.read_exact(&mut b)?;
            Ok(b[0])
        }
        // ANCHOR_END: one_thread_lap

        pub fn rounds(
            &mut self,
            warmup: usize,
            rounds: usize,
            deadline: Instant,
        ) -> io::Result<Rounds> {
            let tasks = self.tasks();
            drive(tasks, warmup, rounds, deadline, |b| self.lap(b))
        }
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
async fn async_member<L: Link>(mut from: L::Rx, mut to: L::Tx) -> io::Result<u64> {
    let mut passed = 0;
    while let Some(byte) = L::recv(&mut from).await? {
        L::send(&mut to, byte.wrapping_add(1)).await?;
        passed += 1;
    }
    L::close(to).await;
    Ok(passed)
}
// ANCHOR_END: async_member

/// A Unix-domain socket pair registered with tokio's reactor (epoll on Linux).
#[cfg(unix)]
pub struct SocketLink;

// ANCHOR: socket_link
/// One byte through any tokio byte stream (a socket here, an in-memory pipe below).
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

/// N async tasks joined by links of kind `L`.
pub struct AsyncBrigade<L: Link> {
    rt: tokio::runtime::Runtime,
    head: L::Tx,
    tail: L::Rx,
    members: Vec<tokio::task::JoinHandle<io::Result<u64>>>,
    pub stop: Option<Stop>,
}

impl<L: Link> AsyncBrigade<L> {
    // ANCHOR: async_build
    /// Builds up to `tasks` members on a new runtime. A refused link, resident memory
    /// past `caps.resident_budget` or the time bound closes the brigade off where it got to.
    pub fn build(tasks: usize, flavor: Flavor, caps: &Caps) -> io::Result<AsyncBrigade<L>> {
        let rt = match flavor {
            Flavor::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            Flavor::MultiThread => tokio::runtime::Builder::new_multi_thread(),
        }
        .enable_all()
        .build()?;
        let _in_runtime = rt.enter();
        let reserve = FdReserve::new();
        let (head, mut tail) = L::pair()?;
        let mut members = Vec::with_capacity(tasks);
        let mut stop = None;
        for i in 0..tasks {
            if let Some(limit) = caps.out_of_budget(i) {
                let detail = format!("stopped building at {i} tasks");
                stop = Some(Stop {
                    wanted: tasks,
                    built: i,
                    limit,
                    detail,
                });
                break;
            }
            match Caps::fake(caps.fake_link_failure_at, i + 1, "links").and_then(|()| L::pair()) {
                Ok((next_in, next_out)) => {
                    members.push(tokio::spawn(async_member::<L>(tail, next_in)));
                    tail = next_out;
                }
                Err(e) => {
                    let (limit, detail) = sys::diagnose_link_error(&e);
                    stop = Some(Stop {
                        wanted: tasks,
                        built: i,
                        limit,
                        detail,
                    });
                    break;
                }
            }
        }
        drop((reserve, _in_runtime));
        Ok(AsyncBrigade {
            rt,
            head,
            tail,
            members,
            stop,
        })
    }
    // ANCHOR_END: async_build

    pub fn tasks(&self) -> usize {
        self.members.len()
    }

    /// Times laps inside the runtime until `rounds` ran or `deadline` passed; a stalled
    /// brigade is abandoned at the deadline, keeping the laps that finished.
    pub fn rounds(
        &mut self,
        warmup: usize,
        rounds: usize,
        deadline: Instant,
    ) -> io::Result<Rounds> {
        let tasks = self.tasks();
        let (head, tail) = (&mut self.head, &mut self.tail);
        self.rt.block_on(async move {
            let mut out = Rounds {
                tasks,
                ns: Vec::with_capacity(rounds),
                ..Rounds::default()
            };
            let laps = async {
                // ANCHOR: async_lap
                for i in 0..warmup + rounds {
                    if i == warmup {
                        out.usage = Usage::now();
                    }
                    let sent = i as u8;
                    let start = Instant::now();
                    L::send(head, sent).await?;
                    let got = L::recv(tail).await?.ok_or(io::ErrorKind::UnexpectedEof)?;
                    let took = start.elapsed();
                    // ANCHOR_END: async_lap
                    round_trip_check(sent, got, tasks)?;
                    out.laps_run += 1;
                    if i >= warmup {
                        out.ns.push(took.as_nanos() as f64);
                    }
                    if Instant::now() >= deadline && i + 1 < warmup + rounds {
                        out.stopped_early = true;
                        break;
                    }
                }
                Ok::<(), io::Error>(())
            };
            match tokio::time::timeout_at(deadline.into(), laps).await {
                Ok(result) => result?,
                Err(_) => out.stopped_early = true,
            }
            out.usage = Usage::since(out.usage);
            Ok(out)
        })
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

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / 1048576.0)
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
