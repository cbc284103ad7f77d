//! The thread brigade: a thread per member, joined by Unix-domain socket pairs, each
//! blocking in `read` until its byte arrives; and the same links driven by one thread
//! alone, which never blocks.

use crate::laps::{Laps, STALL_GRACE, drive, stalled};
use crate::limits::{Caps, FdReserve, Stop};
use crate::os;
use std::io;
use std::time::Instant;

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
pub(crate) fn socket_pairs(n: usize) -> (Vec<(UnixStream, UnixStream)>, Option<String>) {
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
        drive(tasks, (warmup, laps), deadline, None, |b| {
            thread_lap(head, tail, b)
        })
        .map_err(stalled)
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
        drive(tasks, (warmup, laps), deadline, None, |b| {
            one_thread_lap(&mut self.links, b)
        })
    }
}
