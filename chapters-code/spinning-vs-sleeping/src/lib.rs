//! Chapter 1, *Spinning vs sleeping*: how long a message waits when the receiver
//! blocks in the kernel, against a receiver that busy-waits for it.
//!
//! Every variant has the same shape: a sender stays idle for a gap, stamps the time and
//! sends eight bytes; the receiver waits for them (blocking, spinning or both) and
//! records how long they took. One message is in flight at a time.

use serde::{Deserialize, Serialize};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, TryRecvError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

mod experiments;
mod views;

pub use experiments::{CHAPTER, EXPERIMENTS};

// ANCHOR: clock
/// One monotonic origin for the whole process. Both ends of a measurement read it, so a
/// timestamp crosses a channel or a socket as a plain `u64` of nanoseconds: no wall
/// clock, no floating point, nothing lost in transit.
static ORIGIN: OnceLock<Instant> = OnceLock::new();

pub fn now_ns() -> u64 {
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}
// ANCHOR_END: clock

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
    /// Ask the OS (or the runtime) to put the thread to sleep until data arrives.
    Block,
    /// Poll without ever giving up the CPU.
    Spin,
    /// Poll for a bounded time, then block.
    Hybrid,
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
    pub messages: usize,
    /// How long the sender stays idle before each message.
    pub gap: Duration,
    /// How long the hybrid receiver spins before it blocks.
    pub hybrid_spin: Duration,
    pub placement: Placement,
    /// Everything stops here, finished or not.
    pub deadline: Instant,
}

/// What one run of a variant measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// Send-to-receive latency of each message, in nanoseconds.
    pub latencies_ns: Vec<f64>,
    /// CPU time of the whole process (all threads) during the run, where the OS tells.
    pub cpu_ns: Option<f64>,
    pub wall_ns: f64,
    /// Why the run ended before all messages arrived, if it did.
    pub stopped: Option<String>,
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
        if polls % 1024 == 0 && Instant::now() >= until {
            return Spun::TimedOut;
        }
        std::hint::spin_loop();
    }
}
// ANCHOR_END: spin

/// The receiving end of a std transport, able to wait in each of the three ways.
pub trait Link {
    /// Takes a message if one is there, without waiting.
    fn attempt(&mut self) -> Attempt<u64>;
    /// Sleeps in the kernel until a message arrives or `deadline` passes.
    fn block(&mut self, deadline: Instant) -> Option<u64>;
}

// ANCHOR: receive
/// Receives one message, waiting as `wait` says. The hybrid spins for
/// `plan.hybrid_spin` and only then asks the kernel to put the thread to sleep.
pub fn receive(link: &mut impl Link, wait: Wait, plan: &Plan) -> Option<u64> {
    match wait {
        Wait::Block => link.block(plan.deadline),
        Wait::Spin => match spin(plan.deadline, || link.attempt()) {
            Spun::Got(stamp) => Some(stamp),
            Spun::Closed | Spun::TimedOut => None,
        },
        Wait::Hybrid => {
            let spin_until = (Instant::now() + plan.hybrid_spin).min(plan.deadline);
            match spin(spin_until, || link.attempt()) {
                Spun::Got(stamp) => Some(stamp),
                Spun::Closed => None,
                Spun::TimedOut => link.block(plan.deadline),
            }
        }
    }
}
// ANCHOR_END: receive

fn time_left(deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    (!left.is_zero()).then_some(left)
}

// ANCHOR: mpsc_link
impl Link for mpsc::Receiver<u64> {
    fn attempt(&mut self) -> Attempt<u64> {
        match self.try_recv() {
            Ok(stamp) => Attempt::Got(stamp),
            Err(TryRecvError::Empty) => Attempt::Empty,
            Err(TryRecvError::Disconnected) => Attempt::Closed,
        }
    }

    fn block(&mut self, deadline: Instant) -> Option<u64> {
        // A timeout and a closed channel both end the wait without a message.
        self.recv_timeout(time_left(deadline)?).ok()
    }
}
// ANCHOR_END: mpsc_link

/// A socket that switches between non-blocking mode (for attempts) and blocking mode
/// with a read timeout (for sleeping), changing mode only when it has to.
struct Socket<S> {
    sock: S,
    nonblocking: bool,
}

trait SocketMode {
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

// ANCHOR: socket_link
/// A socket link: one read, interpreted as a whole stamp, nothing yet, or closed.
trait ReadStamp {
    type Sock: SocketMode;
    fn socket(&mut self) -> &mut Socket<Self::Sock>;
    fn read_stamp(&mut self) -> Attempt<u64>;
}

/// Both ways of waiting on a socket: an attempt is one read in non-blocking mode; a
/// block is reads in blocking mode, each with a timeout that ends at the deadline.
impl<T: ReadStamp> Link for T {
    fn attempt(&mut self) -> Attempt<u64> {
        if self.socket().mode(true).is_err() {
            return Attempt::Closed;
        }
        self.read_stamp()
    }

    fn block(&mut self, deadline: Instant) -> Option<u64> {
        self.socket().mode(false).ok()?;
        loop {
            let timeout = Some(time_left(deadline)?);
            self.socket().sock.set_read_timeout(timeout).ok()?;
            match self.read_stamp() {
                Attempt::Got(stamp) => return Some(stamp),
                Attempt::Empty => continue, // part of a stamp, or a timeout slice
                Attempt::Closed => return None,
            }
        }
    }
}

/// Would-block and interrupted reads mean "nothing yet"; other errors end the link.
fn nothing_yet(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted)
}
// ANCHOR_END: socket_link

// ANCHOR: tcp_link
/// A TCP stream delivers bytes, not messages: a stamp may arrive in pieces, so the
/// link keeps what it has read until all eight bytes are there.
pub struct TcpLink {
    socket: Socket<TcpStream>,
    buf: [u8; 8],
    filled: usize,
}

impl ReadStamp for TcpLink {
    type Sock = TcpStream;

    fn socket(&mut self) -> &mut Socket<TcpStream> {
        &mut self.socket
    }

    fn read_stamp(&mut self) -> Attempt<u64> {
        match self.socket.sock.read(&mut self.buf[self.filled..]) {
            Ok(0) => Attempt::Closed,
            Ok(n) => {
                self.filled += n;
                if self.filled < 8 {
                    return Attempt::Empty;
                }
                self.filled = 0;
                Attempt::Got(u64::from_le_bytes(self.buf))
            }
            Err(e) if nothing_yet(&e) => Attempt::Empty,
            Err(_) => Attempt::Closed,
        }
    }
}
// ANCHOR_END: tcp_link

// ANCHOR: udp_link
/// A datagram arrives whole or not at all.
pub struct UdpLink {
    socket: Socket<UdpSocket>,
}

impl ReadStamp for UdpLink {
    type Sock = UdpSocket;

    fn socket(&mut self) -> &mut Socket<UdpSocket> {
        &mut self.socket
    }

    fn read_stamp(&mut self) -> Attempt<u64> {
        let mut buf = [0u8; 8];
        match self.socket.sock.recv(&mut buf) {
            Ok(8) => Attempt::Got(u64::from_le_bytes(buf)),
            Ok(_) => Attempt::Closed, // not one of ours
            Err(e) if nothing_yet(&e) => Attempt::Empty,
            Err(_) => Attempt::Closed,
        }
    }
}
// ANCHOR_END: udp_link

// ANCHOR: pacer
/// Keeps one message in flight: the sender waits until the receiver has taken the
/// previous message before its gap starts, so no message ever queues behind another
/// and every latency is that of a single hand-over.
#[derive(Default)]
pub struct Pacer {
    taken: AtomicUsize,
}

impl Pacer {
    /// The sender's turn for message `i` has come (false: the deadline passed).
    pub fn wait_turn(&self, i: usize, deadline: Instant) -> bool {
        while self.taken.load(Ordering::Acquire) < i {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    pub fn is_turn(&self, i: usize) -> bool {
        self.taken.load(Ordering::Acquire) >= i
    }

    pub fn taken(&self) {
        self.taken.fetch_add(1, Ordering::Release);
    }
}
// ANCHOR_END: pacer

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
    match placement {
        Placement::Unpinned => true,
        Placement::SameCpu => {
            cfg!(any(
                target_os = "linux",
                target_os = "windows",
                target_os = "android"
            ))
        }
        Placement::OtherCpu => {
            cfg!(any(
                target_os = "linux",
                target_os = "windows",
                target_os = "android"
            )) && core_affinity::get_core_ids().is_some_and(|c| c.len() >= 2)
        }
    }
}

fn sender_loop(plan: &Plan, pacer: &Pacer, mut send: impl FnMut(u64) -> io::Result<()>) {
    for i in 0..plan.messages {
        if !pacer.wait_turn(i, plan.deadline) {
            return;
        }
        if !plan.gap.is_zero() {
            std::thread::sleep(plan.gap);
        }
        if send(now_ns()).is_err() {
            return;
        }
    }
}

fn receiver_loop(plan: &Plan, pacer: &Pacer, mut recv: impl FnMut() -> Option<u64>) -> Outcome {
    let cpu0 = harness::process_cpu_time();
    let t0 = Instant::now();
    let mut latencies_ns = Vec::with_capacity(plan.messages);
    let mut stopped = None;
    for _ in 0..plan.messages {
        match recv() {
            Some(stamp) => {
                latencies_ns.push(now_ns().saturating_sub(stamp) as f64);
                pacer.taken();
            }
            None => {
                stopped = Some(if Instant::now() >= plan.deadline {
                    "the time bound was reached".to_string()
                } else {
                    "the sender closed its end early".to_string()
                });
                break;
            }
        }
    }
    let wall_ns = t0.elapsed().as_nanos() as f64;
    let cpu_ns = match (cpu0, harness::process_cpu_time()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a).as_nanos() as f64),
        _ => None,
    };
    Outcome {
        latencies_ns,
        cpu_ns,
        wall_ns,
        stopped,
    }
}

/// Runs one std variant: a sender thread and a receiver thread, both fresh so that
/// pinning one run never leaks into the next.
pub fn run_std(transport: Transport, wait: Wait, plan: &Plan) -> anyhow::Result<Outcome> {
    now_ns(); // fix the origin before either side reads it
    let pacer = Pacer::default();
    std::thread::scope(|s| -> anyhow::Result<Outcome> {
        let pacer = &pacer;
        let receiver = match transport {
            Transport::Mpsc => {
                let (tx, rx) = mpsc::channel::<u64>();
                s.spawn(move || {
                    pin(plan.placement, 0);
                    sender_loop(plan, pacer, |stamp| {
                        tx.send(stamp)
                            .map_err(|_| io::Error::from(ErrorKind::BrokenPipe))
                    })
                });
                s.spawn(move || {
                    pin(plan.placement, 1);
                    let mut rx = rx;
                    receiver_loop(plan, pacer, || receive(&mut rx, wait, plan))
                })
            }
            Transport::Tcp => {
                let listener = TcpListener::bind("127.0.0.1:0")?;
                let addr = listener.local_addr()?;
                s.spawn(move || {
                    pin(plan.placement, 0);
                    let Ok((mut stream, _)) = listener.accept() else {
                        return;
                    };
                    let _ = stream.set_nodelay(true);
                    sender_loop(plan, pacer, |stamp| stream.write_all(&stamp.to_le_bytes()))
                });
                let stream = TcpStream::connect(addr)?;
                stream.set_nodelay(true)?;
                s.spawn(move || {
                    pin(plan.placement, 1);
                    let mut link = TcpLink {
                        socket: Socket::new(stream),
                        buf: [0; 8],
                        filled: 0,
                    };
                    receiver_loop(plan, pacer, || receive(&mut link, wait, plan))
                })
            }
            Transport::Udp => {
                let rx = UdpSocket::bind("127.0.0.1:0")?;
                let tx = UdpSocket::bind("127.0.0.1:0")?;
                tx.connect(rx.local_addr()?)?;
                s.spawn(move || {
                    pin(plan.placement, 0);
                    sender_loop(plan, pacer, |stamp| {
                        tx.send(&stamp.to_le_bytes()).map(|_| ())
                    })
                });
                s.spawn(move || {
                    pin(plan.placement, 1);
                    let mut link = UdpLink {
                        socket: Socket::new(rx),
                    };
                    receiver_loop(plan, pacer, || receive(&mut link, wait, plan))
                })
            }
        };
        receiver
            .join()
            .map_err(|_| anyhow::anyhow!("the receiver thread panicked"))
    })
}

// ANCHOR: tokio_recv
/// The tokio receivers. Blocking is an `.await` that parks the task; spinning calls the
/// `try_*` method in a loop that never yields. For sockets, `try_read` and `try_recv`
/// make no system call until tokio's reactor has seen the socket become readable: the
/// spin polls tokio's readiness flag, which another worker thread must set after
/// waking from `epoll_wait`. `try_recv` on a channel needs no reactor and does not use
/// tokio's cooperative budget, so a spin on it never stalls.
enum TokioLink {
    Mpsc(tokio::sync::mpsc::UnboundedReceiver<u64>),
    Tcp(tokio::net::TcpStream, [u8; 8], usize),
    Udp(tokio::net::UdpSocket),
}

impl TokioLink {
    fn attempt(&mut self) -> Attempt<u64> {
        use tokio::sync::mpsc::error::TryRecvError;
        match self {
            TokioLink::Mpsc(rx) => match rx.try_recv() {
                Ok(stamp) => Attempt::Got(stamp),
                Err(TryRecvError::Empty) => Attempt::Empty,
                Err(TryRecvError::Disconnected) => Attempt::Closed,
            },
            TokioLink::Tcp(stream, buf, filled) => match stream.try_read(&mut buf[*filled..]) {
                Ok(0) => Attempt::Closed,
                Ok(n) if *filled + n < 8 => {
                    *filled += n;
                    Attempt::Empty
                }
                Ok(_) => {
                    *filled = 0;
                    Attempt::Got(u64::from_le_bytes(*buf))
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => Attempt::Empty,
                Err(_) => Attempt::Closed,
            },
            TokioLink::Udp(sock) => {
                let mut buf = [0u8; 8];
                match sock.try_recv(&mut buf) {
                    Ok(8) => Attempt::Got(u64::from_le_bytes(buf)),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => Attempt::Empty,
                    _ => Attempt::Closed,
                }
            }
        }
    }

    async fn block(&mut self) -> Option<u64> {
        use tokio::io::AsyncReadExt;
        match self {
            TokioLink::Mpsc(rx) => rx.recv().await,
            TokioLink::Tcp(stream, buf, filled) => {
                stream.read_exact(&mut buf[*filled..]).await.ok()?;
                *filled = 0;
                Some(u64::from_le_bytes(*buf))
            }
            TokioLink::Udp(sock) => {
                let mut buf = [0u8; 8];
                match sock.recv(&mut buf).await {
                    Ok(8) => Some(u64::from_le_bytes(buf)),
                    _ => None,
                }
            }
        }
    }
}
// ANCHOR_END: tokio_recv

enum TokioSender {
    Mpsc(tokio::sync::mpsc::UnboundedSender<u64>),
    Tcp(tokio::net::TcpStream),
    Udp(tokio::net::UdpSocket),
}

impl TokioSender {
    async fn send(&mut self, stamp: u64) -> io::Result<()> {
        use tokio::io::AsyncWriteExt;
        let bytes = stamp.to_le_bytes();
        match self {
            TokioSender::Mpsc(tx) => tx
                .send(stamp)
                .map_err(|_| io::Error::from(ErrorKind::BrokenPipe)),
            TokioSender::Tcp(s) => s.write_all(&bytes).await,
            TokioSender::Udp(s) => s.send(&bytes).await.map(|_| ()),
        }
    }
}

/// Runs one tokio variant on a multi-thread runtime with the default number of worker
/// threads, as `#[tokio::main]` would: the sender is a spawned task, the receiver is
/// the future given to `block_on`.
pub fn run_tokio(transport: Transport, wait: Wait, plan: &Plan) -> anyhow::Result<Outcome> {
    anyhow::ensure!(wait != Wait::Hybrid, "the tokio variants block or spin");
    now_ns();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let plan = *plan;
    rt.block_on(async move {
        let (mut sender, mut link) = match transport {
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
                (TokioSender::Tcp(server), TokioLink::Tcp(client, [0; 8], 0))
            }
            Transport::Udp => {
                let rx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
                let tx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
                tx.connect(rx.local_addr()?).await?;
                (TokioSender::Udp(tx), TokioLink::Udp(rx))
            }
        };
        let pacer = Arc::new(Pacer::default());
        let sender_pacer = pacer.clone();
        let send_task = tokio::spawn(async move {
            for i in 0..plan.messages {
                while !sender_pacer.is_turn(i) {
                    if Instant::now() >= plan.deadline {
                        return;
                    }
                    tokio::task::yield_now().await;
                }
                if !plan.gap.is_zero() {
                    tokio::time::sleep(plan.gap).await;
                }
                if sender.send(now_ns()).await.is_err() {
                    return;
                }
            }
        });
        let cpu0 = harness::process_cpu_time();
        let t0 = Instant::now();
        let mut latencies_ns = Vec::with_capacity(plan.messages);
        let mut stopped = None;
        for _ in 0..plan.messages {
            let got = match wait {
                Wait::Spin => match spin(plan.deadline, || link.attempt()) {
                    Spun::Got(stamp) => Some(stamp),
                    _ => None,
                },
                _ => tokio::time::timeout_at(plan.deadline.into(), link.block())
                    .await
                    .ok()
                    .flatten(),
            };
            match got {
                Some(stamp) => {
                    latencies_ns.push(now_ns().saturating_sub(stamp) as f64);
                    pacer.taken();
                }
                None => {
                    stopped = Some("the time bound was reached or the sender stopped".into());
                    break;
                }
            }
        }
        let wall_ns = t0.elapsed().as_nanos() as f64;
        let cpu_ns = match (cpu0, harness::process_cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_nanos() as f64),
            _ => None,
        };
        send_task.abort();
        Ok(Outcome {
            latencies_ns,
            cpu_ns,
            wall_ns,
            stopped,
        })
    })
}

/// Runs any variant.
pub fn run_variant(
    runtime: Runtime,
    transport: Transport,
    wait: Wait,
    plan: &Plan,
) -> anyhow::Result<Outcome> {
    match runtime {
        Runtime::Std => run_std(transport, wait, plan),
        Runtime::Tokio => run_tokio(transport, wait, plan),
    }
}

// ANCHOR: floor
/// The floor: two threads hand a counter back and forth through one atomic, both
/// spinning. Thread A writes an odd number and spins until B answers with the next even
/// one. Half a round trip is the least a hand-over between two threads can cost on
/// this machine; no kernel, no queue, no syscall is involved.
pub fn atomic_ping_pong(round_trips: usize, placement: Placement, deadline: Instant) -> Vec<f64> {
    const STOP: u64 = u64::MAX;
    let ball = AtomicU64::new(0);
    let mut one_way_ns = Vec::with_capacity(round_trips);
    std::thread::scope(|s| {
        let ball = &ball;
        let samples = &mut one_way_ns;
        s.spawn(move || {
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
        });
        s.spawn(move || {
            pin(placement, 0);
            'trips: for i in 0..round_trips as u64 {
                let t0 = Instant::now();
                ball.store(2 * i + 1, Ordering::Release);
                let mut polls: u32 = 0;
                while ball.load(Ordering::Acquire) != 2 * i + 2 {
                    polls = polls.wrapping_add(1);
                    if polls % 4096 == 0 && Instant::now() >= deadline {
                        break 'trips;
                    }
                    std::hint::spin_loop();
                }
                samples.push(t0.elapsed().as_nanos() as f64 / 2.0);
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
