//! The async brigades: a tokio task per member, the links between them (socket pairs,
//! tokio's in-memory pipe, `mpsc` channels), the runtime that runs them, and the
//! socket brigade spread over two threads.

use crate::laps::{LapLog, Laps, Probes, STALL_GRACE, drive, stalled};
use crate::limits::{Caps, FdReserve, Stop};
use crate::os;
#[cfg(unix)]
use crate::threads::{UnixStream, socket_pairs};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::io;
use std::time::Instant;
use tokio::sync::oneshot;

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

// From tokio 1.54.1's source (`~/.cargo/registry/src/*/tokio-1.54.1/`):
// `src/io/poll_evented.rs`, `PollEvented::poll_read`: a read is tried only while the
// reactor marks the socket readable; a read that returns `WouldBlock` (`EAGAIN`)
// clears that mark and the task waits. A read that fills less than its buffer also
// clears it (epoll and kqueue), but `read_byte`'s one-byte buffer is always filled, so
// a member's next read is the one that returns `EAGAIN`. The wait:
// `src/runtime/io/driver.rs`, `Driver::turn` calls `self.poll.poll` (mio's `epoll_wait`
// on Linux) when the current-thread scheduler parks (`src/runtime/scheduler/
// current_thread/mod.rs`, `Context::park`).
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
/// socket, no file descriptor, no system call. From tokio 1.54.1's source,
/// `src/io/util/mem.rs`, `simplex` and `SimplexStream`: a `BytesMut` buffer and two
/// wakers, behind a mutex.
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

// From tokio 1.54.1's source, `src/runtime/scheduler/current_thread/mod.rs`,
// `impl Schedule for Arc<Handle>`, `schedule`: a task woken on the runtime's own thread
// is pushed onto its local queue (`Core::push_task`), with no system call; one woken
// from another thread goes to the inject queue and the driver is unparked.
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
    /// Every task on the driver's own thread. tokio 1.54.1, `src/runtime/mod.rs`
    /// (module docs, "Current-Thread Scheduler") and `src/runtime/scheduler/
    /// current_thread/mod.rs`, `CoreGuard::block_on`: tasks run only inside
    /// `Runtime::block_on`, so a brigade's members are first polled in its first lap.
    CurrentThread,
    /// tokio's default: `src/runtime/runtime.rs`, `Runtime::new` builds
    /// `Builder::new_multi_thread`. Work stealing: `src/runtime/scheduler/multi_thread/
    /// worker.rs`, `Core::steal_work`.
    MultiThread,
}

/// Worker threads of a multi-thread runtime here: one per logical CPU, tokio's default
/// (tokio 1.54.1, `src/runtime/builder.rs`, `build_threaded_runtime`: `worker_threads`
/// or `loom::sys::num_cpus`, which is `src/loom/std/mod.rs`'s `TOKIO_WORKER_THREADS`
/// or else `std::thread::available_parallelism`). Set explicitly, so that variable
/// does not change it.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Times the laps of a brigade driven from outside its runtime: each lap is one
/// `block_on`, bounded, so a stalled brigade fails shortly after the deadline. Shared by
/// the async brigades and the spread one. `busy`: the runtime whose workers' busy time
/// is read around the timed laps.
///
/// What the bound adds, from tokio 1.54.1's source: every runtime here is built with
/// `enable_all`, so each park already passes through the time driver, bound or not
/// (`src/runtime/time/mod.rs`, `Driver::park_internal`: it takes the driver's lock and
/// reads the next expiry before parking, and after the park `Handle::process` reads the
/// clock and takes the lock again). The `timeout_at` only registers an entry: a clock
/// read before the park, and a finite `epoll_wait` timeout instead of an endless one.
fn runtime_laps<L: Link>(
    rt: &tokio::runtime::Runtime,
    (head, tail): (&mut L::Tx, &mut L::Rx),
    members: usize,
    (warmup, laps): (usize, usize),
    deadline: Instant,
    busy: Option<tokio::runtime::RuntimeMetrics>,
) -> io::Result<Laps> {
    let give_up = tokio::time::Instant::from_std(deadline + STALL_GRACE);
    drive(members, (warmup, laps), deadline, busy, |b| {
        rt.block_on(async { tokio::time::timeout_at(give_up, async_lap::<L>(head, tail, b)).await })
            .map_err(|_| stalled(io::ErrorKind::TimedOut.into()))?
    })
}

// ANCHOR: laps_in_task
/// Every lap of a brigade inside one task spawned on its runtime, each timed there:
/// no lap starts or ends outside the runtime, so on the multi-thread runtime no lap
/// wakes a worker at its start or the `block_on` thread at its end. Before the first
/// timed lap the task hands over to the waiting thread, which reads the counters
/// (none of them on a worker) and lets it go on. Returns the links with the laps.
async fn laps_in_task<L: Link>(
    (mut head, mut tail): (L::Tx, L::Rx),
    members: usize,
    plan: (usize, usize),
    deadline: Instant,
    (ready, go): (oneshot::Sender<()>, oneshot::Receiver<()>),
) -> (L::Tx, L::Rx, io::Result<Laps>) {
    let mut log = LapLog::new(members, plan, deadline, None);
    let mut gate = Some((ready, go));
    for i in 0..log.total() {
        if let Some((ready, go)) = gate.take_if(|_| log.first_timed(i)) {
            let _ = ready.send(());
            let _ = go.await;
        }
        let start = Instant::now();
        let lap = async_lap::<L>(&mut head, &mut tail, i as u8).await;
        match lap.and_then(|got| log.after(i, got, start.elapsed())) {
            Ok(false) => {}
            Ok(true) => break,
            Err(e) => return (head, tail, Err(e)),
        }
    }
    (head, tail, Ok(log.finish()))
}
// ANCHOR_END: laps_in_task

/// N async tasks joined by links of kind `L`.
pub struct AsyncBrigade<L: Link> {
    rt: tokio::runtime::Runtime,
    flavor: Flavor,
    /// The two ends the driver holds; `None` once a batch of laps in a task stalled
    /// (the stalled task was aborted, which dropped them and so closed the brigade).
    ends: Option<(L::Tx, L::Rx)>,
    members: Vec<tokio::task::JoinHandle<io::Result<u64>>>,
    pub stop: Option<Stop>,
    /// Run every lap inside one task on the runtime ([`laps_in_task`]) instead of one
    /// `block_on` per lap.
    pub laps_in_task: bool,
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
            flavor,
            ends: Some((head, tail)),
            members,
            stop,
            laps_in_task: false,
        })
    }

    pub fn tasks(&self) -> usize {
        self.members.len()
    }

    /// Whether every member runs on one thread, the one that drives the laps
    /// (the current-thread runtime).
    pub fn on_one_thread(&self) -> bool {
        self.flavor == Flavor::CurrentThread
    }

    /// Times laps until `laps` ran or `deadline` passed: each lap one `block_on`, or
    /// all of them inside one task. Either way bounded, so a stalled brigade fails
    /// shortly after the deadline. On the multi-thread runtime the workers' busy time
    /// is read around the timed laps.
    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        let n = self.members.len();
        let busy = (self.flavor == Flavor::MultiThread).then(|| self.rt.metrics());
        let closed = || io::Error::other("the brigade was closed by an earlier stall");
        if !self.laps_in_task {
            let (head, tail) = self.ends.as_mut().ok_or_else(closed)?;
            return runtime_laps::<L>(&self.rt, (head, tail), n, (warmup, laps), deadline, busy);
        }
        let ends = self.ends.take().ok_or_else(closed)?;
        let (ready, at_start) = oneshot::channel();
        let (go, gate) = oneshot::channel();
        let task = self.rt.spawn(laps_in_task::<L>(
            ends,
            n,
            (warmup, laps),
            deadline,
            (ready, gate),
        ));
        let abort = task.abort_handle();
        let give_up = tokio::time::Instant::from_std(deadline + STALL_GRACE);
        let mut probes = Probes::new(busy);
        // The bound is made inside the runtime, whose timer it needs. The future runs on
        // this thread, none of the multi-thread runtime's workers (tokio 1.54.1,
        // `src/runtime/scheduler/multi_thread/mod.rs`, `MultiThread::block_on`).
        let batch = async {
            if at_start.await.is_ok() {
                probes.start();
                let _ = go.send(());
            }
            task.await // the counters' ends are read below, once the task has ended
        };
        match self
            .rt
            .block_on(async { tokio::time::timeout_at(give_up, batch).await })
        {
            Ok(Ok((head, tail, laps))) => {
                self.ends = Some((head, tail));
                laps.map(|mut laps| {
                    probes.finish(&mut laps);
                    laps
                })
            }
            Ok(Err(e)) => Err(io::Error::other(e)),
            Err(_) => {
                abort.abort(); // drops the ends: the members see the brigade close
                Err(stalled(io::ErrorKind::TimedOut.into()))
            }
        }
    }

    /// Closes the brigade and returns how many bytes each member passed on.
    pub fn finish(self) -> io::Result<Vec<u64>> {
        let AsyncBrigade {
            rt, ends, members, ..
        } = self;
        let counts = rt.block_on(async move {
            if let Some((head, _)) = ends {
                L::close(head).await;
            }
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
/// `block_on`), a thread of its own the other. Where `cpus` is given, the second
/// runtime's thread is pinned to the second CPU and the laps are driven from a thread
/// pinned to the first: every hop then crosses CPUs, in every round.
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
    /// The CPU the driver's laps run on, where the brigade is pinned.
    pub driver_cpu: Option<core_affinity::CoreId>,
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
    /// Builds up to `tasks` members; the second runtime needs one thread, pinned to
    /// `cpus.1` where `cpus` is given.
    pub fn build(
        tasks: usize,
        caps: &Caps,
        cpus: Option<(core_affinity::CoreId, core_affinity::CoreId)>,
    ) -> Result<SpreadBrigade, Stop> {
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
                if let Some((_, other)) = cpus {
                    core_affinity::set_for_current(other);
                }
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
            driver_cpu: cpus.map(|c| c.0),
        })
    }

    pub fn tasks(&self) -> usize {
        self.members.len()
    }

    /// Times laps on the calling thread, which the caller pins to `driver_cpu`.
    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        let n = self.members.len();
        let ends = (&mut self.head, &mut self.tail);
        runtime_laps::<SocketLink>(&self.rt, ends, n, (warmup, laps), deadline, None)
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
