//! Coordinated omission: a server that stalls now and then, the closed-loop client
//! that drives it on a schedule, and the correction that adds back the requests a
//! stall kept from being sent.

use crate::throttle::Throttle;
use std::io::{self, ErrorKind};
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// A UDP echo server on 127.0.0.1 (port 0) that, once in every `stall_every`
/// requests, sleeps `stall` before answering: a garbage-collection pause, a
/// page-fault storm, a lock held too long. It answers with the request's own bytes
/// (its sequence number).
pub struct StallingEcho {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<Served>>,
}

/// What the stalling server did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    pub requests: u64,
    pub pauses: u64,
}

/// Whether the server pauses before answering its `n`th request (1-based): the
/// middle request of every block of `every`, so that no pause falls on the last
/// request of a round, where it would delay no request after it.
pub fn pauses_at(n: u64, every: u64) -> bool {
    every > 0 && n % every == every / 2
}

impl StallingEcho {
    pub fn start(stall_every: u64, stall: Duration) -> anyhow::Result<StallingEcho> {
        anyhow::ensure!(stall_every > 0, "stall_every must be at least 1");
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let addr = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = thread::Builder::new()
            .name("stalling-echo".into())
            .spawn(move || {
                let mut buf = [0u8; 64];
                let mut served = Served::default();
                while !flag.load(Ordering::Relaxed) {
                    let Ok((len, from)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    if len == 0 {
                        break; // `stop` wakes the server with an empty datagram
                    }
                    served.requests += 1;
                    if pauses_at(served.requests, stall_every) {
                        served.pauses += 1;
                        // The pause; `stop` cuts it short, so stopping never waits it out.
                        let until = Instant::now() + stall;
                        while !flag.load(Ordering::Relaxed) && Instant::now() < until {
                            thread::park_timeout(until.saturating_duration_since(Instant::now()));
                        }
                    }
                    let _ = socket.send_to(&buf[..len], from);
                }
                served
            })?;
        Ok(StallingEcho {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the server; returns how many requests it served, and its pauses.
    pub fn stop(mut self) -> Served {
        self.halt()
    }

    fn halt(&mut self) -> Served {
        let Some(t) = self.thread.take() else {
            return Served::default();
        };
        self.stop.store(true, Ordering::Relaxed);
        t.thread().unpark();
        if let Ok(s) = UdpSocket::bind("127.0.0.1:0") {
            let _ = s.send_to(&[], self.addr);
        }
        t.join().unwrap_or_default()
    }
}

impl Drop for StallingEcho {
    fn drop(&mut self) {
        self.halt();
    }
}

/// What the closed-loop client is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct OmissionPlan {
    pub rate: f64,
    pub requests: u64,
    /// How long the client waits for an answer before it counts the request as lost.
    pub patience: Duration,
    /// Everything stops here, finished or not.
    pub deadline: Instant,
}

/// One answered request: when the schedule wanted it sent, when it was sent, and when
/// its answer came.
#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    pub due: Instant,
    pub sent: Instant,
    pub answered: Instant,
}

/// What the client saw.
#[derive(Debug, Clone, Default)]
pub struct Exchanges {
    pub answered: Vec<Exchange>,
    /// Requests sent whose answer did not come within the patience.
    pub lost: u64,
    /// Answers that came after their request had been given up (and were skipped).
    pub late: u64,
    /// Requests sent (answered or not).
    pub sent: u64,
    /// The deadline ended the run before every request was sent.
    pub stopped: bool,
}

// ANCHOR: await_reply
/// Waits until `give_up` for the answer to request `seq`. An answer to an earlier
/// request, one the client already gave up on, is counted as late and skipped: a
/// slow answer is never taken for a later request's, so one stall cannot shift every
/// later latency by one.
pub fn await_reply(
    socket: &UdpSocket,
    seq: u64,
    give_up: Instant,
    late: &mut u64,
) -> io::Result<Option<Instant>> {
    let mut buf = [0u8; 16];
    loop {
        let left = give_up.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        socket.set_read_timeout(Some(left))?;
        match socket.recv(&mut buf) {
            Ok(8) => match u64::from_le_bytes(buf[..8].try_into().expect("8 bytes")) {
                s if s == seq => return Ok(Some(Instant::now())),
                s if s < seq => *late += 1,
                _ => {} // not an answer to anything sent: ignore it
            },
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
// ANCHOR_END: await_reply

// ANCHOR: omission
/// Sends request `k` when the schedule says (a deadline throttle with no catch-up
/// bound: every request goes, late if need be), waits for its answer, and keeps
/// both moments its latency can be measured from: when it went out, and when it
/// was due.
pub fn closed_loop_client(server: SocketAddr, plan: &OmissionPlan) -> anyhow::Result<Exchanges> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.connect(server)?;
    let mut throttle = Throttle::per_second(plan.rate)?
        .max_lag(Duration::MAX)
        .min_sleep(Duration::ZERO);
    let mut out = Exchanges::default();
    for seq in 0..plan.requests {
        if Instant::now() >= plan.deadline {
            out.stopped = true;
            break;
        }
        let due = throttle.wait();
        let sent = Instant::now();
        socket.send(&seq.to_le_bytes())?;
        out.sent += 1;
        let give_up = (sent + plan.patience).min(plan.deadline);
        match await_reply(&socket, seq, give_up, &mut out.late)? {
            Some(answered) => out.answered.push(Exchange {
                due,
                sent,
                answered,
            }),
            None => out.lost += 1,
        }
    }
    Ok(out)
}
// ANCHOR_END: omission

/// HdrHistogram's `record_correct`, over plain samples: a latency longer than the
/// intended interval implies requests that were never sent while it lasted; each
/// gets a sample one interval shorter than the one before, down to the interval.
pub fn with_omitted(samples: &[f64], interval_ns: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(samples.len());
    for &v in samples {
        out.push(v);
        if interval_ns > 0.0 {
            let mut missing = v - interval_ns;
            while missing >= interval_ns {
                out.push(missing);
                missing -= interval_ns;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn omitted_samples_form_a_staircase() {
        assert_eq!(
            with_omitted(&[0.5, 3.5, 1.0], 1.0),
            vec![0.5, 3.5, 2.5, 1.5, 1.0]
        );
        assert_eq!(with_omitted(&[5.0], 0.0), vec![5.0]);
    }

    #[test]
    fn pauses_fall_mid_block_never_on_the_last_request() {
        let at = |every: u64, n: u64| (1..=n).filter(|&k| pauses_at(k, every)).collect::<Vec<_>>();
        assert_eq!(at(100, 200), vec![50, 150]);
        assert_eq!(at(200, 1_000), vec![100, 300, 500, 700, 900]);
        assert_eq!(at(1, 3), vec![1, 2, 3]);
        assert_eq!(at(3, 7), vec![1, 4, 7]);
        assert!(at(0, 5).is_empty());
    }

    /// A late answer is skipped and counted, and the awaited one is still found.
    #[test]
    fn a_late_answer_is_never_taken_for_the_next() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client.connect(server.local_addr().unwrap()).unwrap();
        let to = client.local_addr().unwrap();
        for seq in [3u64, 4, 7] {
            server.send_to(&seq.to_le_bytes(), to).unwrap();
        }
        let mut late = 0;
        let far = Instant::now() + Duration::from_secs(5);
        assert!(await_reply(&client, 7, far, &mut late).unwrap().is_some());
        assert_eq!(late, 2);
        // Nothing more comes: the wait ends at its bound.
        let soon = Instant::now() + Duration::from_millis(30);
        assert!(await_reply(&client, 8, soon, &mut late).unwrap().is_none());
        assert!(Instant::now() >= soon);
    }
}
