//! The runner of a variant: the pacer that keeps one message in flight, the sender's
//! and the receiver's loops with the receiver's bookkeeping, and the std and tokio
//! runs that set them going on two threads or two tasks.

use crate::probe::{Meter, Probe, current_cpu, pin};
use crate::transport::{
    Socket, TcpLink, TokioLink, TokioSender, UdpLink, UdpSender, tcp_pair, tokio_pair,
};
use crate::variant::{Host, Idle, Missed, Msg, Outcome, Plan, Runtime, Transport, Wait, now_ns};
use crate::wait::{Spun, receive, spin, time_left};
use harness::counters::Counters;
use std::io::{self, ErrorKind, Write};
use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
}
// ANCHOR_END: pacer

// ANCHOR: pacer_async
impl Pacer {
    /// The same for a tokio task, looking once a millisecond. tokio 1.54.1 rounds a
    /// sleep's deadline up to the end of a millisecond (`TimeSource::deadline_to_tick`,
    /// `~/.cargo/registry/src/*/tokio-1.54.1/src/runtime/time/source.rs`) and its
    /// driver parks for whole milliseconds from a now rounded down (`runtime/time/mod.rs`):
    /// each sleep can end up to about 2 ms after its deadline, the gap's own sleep and
    /// each look for the turn alike. The runs' *gap as it happened* (`gap_ns`) measures
    /// the sum.
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
// ANCHOR_END: pacer_async

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
    // Asleep until the receiver is done with the last message (or stops): on a shared
    // CPU, the sender's counters and exit would otherwise run inside its timed window.
    pacer.wait_turn(plan.total(), plan.deadline);
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
/// Takes what one wait for message `i` gave: its latency (a warm-up message's apart),
/// then, off the timed path, the side measurements; a late message, skipped by its
/// number; a loss, counted; or the run's end. `released`: when the sender went on.
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
            out.begin_probe(); // the wait's CPU span ends, the probe's begins (to `done`)
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
        let mut out = Outcome::default();
        if meter.is_some() {
            out.begin_wait(harness::thread_cpu_time());
        }
        Receiving {
            plan,
            pacer,
            probe,
            out,
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
        // The probe's span for this message ends here, and the next wait's span begins.
        let cpu = harness::thread_cpu_time();
        if let (Some(a), Some(b)) = (self.out.probe_from.take(), cpu) {
            self.out
                .probe_ns
                .push(b.saturating_sub(a).as_nanos() as f64);
        }
        if i + 1 >= self.plan.warmup as u64 {
            self.out.begin_wait(cpu);
        }
        self.released = now_ns();
        self.pacer.done();
    }
}
// ANCHOR_END: receiver_done

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
    pacer.wait_turn_async(plan.total(), plan.deadline).await; // as `sender_loop`
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Placement;
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

#[cfg(test)]
mod last_message {
    use super::*;
    use crate::variant::Placement;

    /// Prints every timed latency of a blocking std channel with both threads on one
    /// CPU, in order: the last message must read like the others (run with
    /// `--nocapture`; a check by eye, not a timed assertion).
    #[test]
    fn print_same_cpu_latencies_in_order() {
        if !crate::placement_supported(Placement::SameCpu) {
            return;
        }
        let plan = Plan {
            messages: 8,
            warmup: 1,
            gap: Duration::from_millis(2),
            sender: Idle::Sleep,
            hybrid_spin: Duration::ZERO,
            placement: Placement::SameCpu,
            patience: Duration::from_millis(1_000),
            deadline: Instant::now() + Duration::from_secs(20),
        };
        for _ in 0..3 {
            let out = run_std(Transport::Mpsc, Wait::Block, &plan).expect("the run");
            let us: Vec<String> = out
                .latencies_ns
                .iter()
                .map(|l| format!("{:.1}", l / 1e3))
                .collect();
            eprintln!("same CPU, µs in order: {}", us.join(" "));
            assert_eq!(out.latencies_ns.len(), plan.messages);
        }
    }
}
