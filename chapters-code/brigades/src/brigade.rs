//! A brigade of any kind: the chapter's kinds ([`Kind`]), building one of them
//! ([`Brigade`]) or learning why it could not be measured ([`Refused`]), and
//! [`measure`], which builds, times, closes and checks it.

use crate::laps::Laps;
use crate::limits::{Caps, MIN_MEMBERS, Stop};
use crate::os;
use crate::tasks::{AsyncBrigade, ChannelLink, Flavor, PipeLink};
#[cfg(unix)]
use crate::tasks::{SocketLink, SpreadBrigade};
#[cfg(unix)]
use crate::threads::{OneThreadBrigade, ThreadBrigade, build_thread_brigade};
use serde::{Deserialize, Serialize};
use std::io;
use std::time::Instant;

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
    /// Socket pairs on the current-thread runtime, every lap run inside one task on the
    /// runtime (the arms above run each lap as a `block_on` from outside).
    AsyncCurrentSocketInTask,
    /// Socket pairs on the multi-thread runtime, every lap inside one task: no lap
    /// wakes a worker at its start or the `block_on` thread at its end.
    AsyncMultiSocketInTask,
    /// Channels on the current-thread runtime, every lap inside one task.
    AsyncCurrentChannelInTask,
    /// Channels on the multi-thread runtime, every lap inside one task: no lap wakes a
    /// worker at its start or the `block_on` thread at its end.
    AsyncMultiChannelInTask,
    /// tokio's in-memory pipe (no file descriptor), current-thread runtime.
    AsyncCurrentPipe,
    /// Socket pairs, tasks spread over two threads: members alternate between two
    /// current-thread runtimes, each on its own thread, so every hop wakes the other
    /// thread (what the multi-thread runtime does when a woken task lands on another
    /// worker, made to happen at every hop). The two threads are pinned to two CPUs,
    /// so every hop also crosses CPUs (Linux; elsewhere not measured).
    AsyncSpreadSocket,
    /// The same two threads pinned to one CPU: a change of thread at every hop, never
    /// a change of CPU (Linux; elsewhere not measured).
    AsyncSpreadOneCpu,
    /// The same two threads unpinned, where the kernel places them: the threats table's
    /// "before" for the two pinned arms.
    AsyncSpreadUnpinned,
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
            Kind::AsyncCurrentSocketInTask => "async current-thread · socket · laps in a task",
            Kind::AsyncMultiSocketInTask => "async multi-thread · socket · laps in a task",
            Kind::AsyncCurrentChannelInTask => "async current-thread · channel · laps in a task",
            Kind::AsyncMultiChannelInTask => "async multi-thread · channel · laps in a task",
            Kind::AsyncCurrentPipe => "async current-thread · in-memory pipe",
            Kind::AsyncSpreadSocket => "async on two threads · socket",
            Kind::AsyncSpreadOneCpu => "async on two threads, one CPU · socket",
            Kind::AsyncSpreadUnpinned => "async on two threads, unpinned · socket",
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
            Kind::AsyncCurrentSocketInTask => "async ct, socket, laps in a task",
            Kind::AsyncMultiSocketInTask => "async mt, socket, laps in a task",
            Kind::AsyncCurrentChannelInTask => "async ct, channel, laps in a task",
            Kind::AsyncMultiChannelInTask => "async mt, channel, laps in a task",
            Kind::AsyncCurrentPipe => "async ct, mem pipe",
            Kind::AsyncSpreadSocket => "async 2 CPUs, socket",
            Kind::AsyncSpreadOneCpu => "async 2 threads, 1 CPU, socket",
            Kind::AsyncSpreadUnpinned => "async 2 threads, unpinned, socket",
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
                | Kind::AsyncCurrentSocketInTask
                | Kind::AsyncMultiSocketInTask
                | Kind::AsyncSpreadSocket
                | Kind::AsyncSpreadOneCpu
                | Kind::AsyncSpreadUnpinned
                | Kind::OneThread
        )
    }

    fn flavor(self) -> Flavor {
        match self {
            Kind::AsyncMultiSocket
            | Kind::AsyncMultiChannel
            | Kind::AsyncMultiSocketInTask
            | Kind::AsyncMultiChannelInTask => Flavor::MultiThread,
            _ => Flavor::CurrentThread,
        }
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

/// The first two CPUs, where the spread brigade's two threads run.
#[cfg(target_os = "linux")]
fn two_cpus() -> Option<(core_affinity::CoreId, core_affinity::CoreId)> {
    let mut ids = core_affinity::get_core_ids()?.into_iter();
    Some((ids.next()?, ids.next()?))
}

/// Runs `f` on a scoped thread pinned to `cpu`, where a pinned brigade's laps are
/// driven from.
#[cfg(target_os = "linux")]
fn on_cpu<T: Send>(
    cpu: core_affinity::CoreId,
    f: impl FnOnce() -> io::Result<T> + Send,
) -> io::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            core_affinity::set_for_current(cpu);
            f()
        })
        .join()
        .map_err(|_| io::Error::other("the pinned driver panicked"))?
    })
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
            Kind::AsyncCurrentChannelInTask | Kind::AsyncMultiChannelInTask => {
                AsyncBrigade::build(tasks, kind.flavor(), caps).map(|mut b| {
                    b.laps_in_task = true;
                    Brigade::Channel(b)
                })
            }
            Kind::AsyncCurrentPipe => {
                AsyncBrigade::build(tasks, kind.flavor(), caps).map(Brigade::Pipe)
            }
            #[cfg(unix)]
            Kind::AsyncCurrentSocket | Kind::AsyncMultiSocket => {
                AsyncBrigade::build(tasks, kind.flavor(), caps).map(Brigade::Socket)
            }
            #[cfg(unix)]
            Kind::AsyncCurrentSocketInTask | Kind::AsyncMultiSocketInTask => {
                AsyncBrigade::build(tasks, kind.flavor(), caps).map(|mut b| {
                    b.laps_in_task = true;
                    Brigade::Socket(b)
                })
            }
            #[cfg(target_os = "linux")]
            Kind::AsyncSpreadSocket => {
                let cpus = two_cpus().ok_or(Refused::Unsupported(
                    "fewer than two CPUs here to pin the two threads to",
                ))?;
                SpreadBrigade::build(tasks, caps, Some(cpus)).map(Brigade::Spread)
            }
            #[cfg(target_os = "linux")]
            Kind::AsyncSpreadOneCpu => {
                let cpu = first_cpu().ok_or(Refused::Unsupported(
                    "this system does not let a program pick a thread's CPU",
                ))?;
                SpreadBrigade::build(tasks, caps, Some((cpu, cpu))).map(Brigade::Spread)
            }
            #[cfg(unix)]
            Kind::AsyncSpreadUnpinned => {
                SpreadBrigade::build(tasks, caps, None).map(Brigade::Spread)
            }
            #[cfg(all(unix, not(target_os = "linux")))]
            Kind::AsyncSpreadSocket | Kind::AsyncSpreadOneCpu => Err(Refused::Unsupported(
                "this OS does not let a program pin a thread to one CPU",
            ))?,
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

    /// The CPU a brigade's laps are driven from, on a thread pinned there: the pinned
    /// thread brigade's, the pinned two-thread brigade's driver's, and the first CPU for
    /// a brigade that runs on one thread and is paired with those (tokio's
    /// current-thread runtime runs its tasks on the thread that calls `block_on`; the
    /// one-thread baseline). So such a pair runs where the pinned arms run. The arms
    /// with their laps in a task are paired with the multi-thread runtime, whose
    /// workers are not pinned, and stay unpinned too. `None`: where the kernel puts it.
    #[cfg(target_os = "linux")]
    fn driver_cpu(&self) -> Option<core_affinity::CoreId> {
        let one = |one_thread: bool, in_task: bool| (one_thread && !in_task).then(first_cpu);
        match self {
            Brigade::Threads(_, true) | Brigade::OneThread(_) => first_cpu(),
            Brigade::Spread(b) => b.driver_cpu,
            Brigade::Socket(b) => one(b.on_one_thread(), b.laps_in_task).flatten(),
            Brigade::Channel(b) => one(b.on_one_thread(), b.laps_in_task).flatten(),
            Brigade::Pipe(b) => one(b.on_one_thread(), b.laps_in_task).flatten(),
            Brigade::Threads(_, false) => None,
        }
    }

    /// Times laps, from a thread pinned to [`Brigade::driver_cpu`] where there is one.
    pub fn laps(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        #[cfg(target_os = "linux")]
        if let Some(cpu) = self.driver_cpu() {
            return on_cpu(cpu, || self.laps_here(warmup, laps, deadline));
        }
        self.laps_here(warmup, laps, deadline)
    }

    /// Times laps on the calling thread.
    fn laps_here(&mut self, warmup: usize, laps: usize, deadline: Instant) -> io::Result<Laps> {
        match self {
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
    let built = Instant::now();
    let mut b = Brigade::build(kind, tasks, caps)?;
    let build_ns = built.elapsed().as_nanos() as f64;
    let stop = b.stop();
    let timed = b.laps(warmup, laps, deadline);
    let rss1 = os::resident_bytes();
    let counts = b.finish();
    let mut r = timed.map_err(Refused::Failed)?;
    r.build_ns = Some(build_ns);
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
