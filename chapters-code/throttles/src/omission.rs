//! Coordinated omission: a paced client against a server that sometimes stalls,
//! latency measured from the actual send and from the intended (scheduled) send.

use crate::throttle::Throttle;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// A UDP echo server on 127.0.0.1 (port 0) that, every `stall_every` requests,
/// sleeps `stall` before answering: a garbage-collection pause, a page fault storm,
/// a lock held too long.
pub struct StallingEcho {
    pub addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<u64>>,
}

impl StallingEcho {
    pub fn start(stall_every: u64, stall: Duration) -> anyhow::Result<StallingEcho> {
        anyhow::ensure!(stall_every > 0, "stall_every must be at least 1");
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_read_timeout(Some(Duration::from_millis(20)))?;
        let addr = socket.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = thread::Builder::new()
            .name("stalling-echo".into())
            .spawn(move || {
                let mut buf = [0u8; 64];
                let mut served = 0u64;
                while !s.load(Ordering::Relaxed) {
                    let Ok((len, from)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    served += 1;
                    if served % stall_every == 0 {
                        thread::sleep(stall);
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

    /// Stops the server; returns how many requests it served.
    pub fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or(0)
    }
}

impl Drop for StallingEcho {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The three ways of recording the same requests' latency.
pub struct OmissionHistograms {
    /// From the moment the request was actually sent: what a closed-loop tester sees.
    pub from_send: Histogram<u64>,
    /// The same values, with HdrHistogram's after-the-fact correction
    /// (`record_correct` with the intended interval).
    pub corrected: Histogram<u64>,
    /// From the moment the schedule said the request should be sent.
    pub from_intent: Histogram<u64>,
    pub requests: u64,
    pub lost: u64,
}

fn histogram() -> anyhow::Result<Histogram<u64>> {
    Ok(Histogram::new_with_bounds(1, 120_000_000_000, 3)?)
}

// ANCHOR: omission
/// Sends one request per slot of a deadline schedule (no catch-up bound: the load
/// must arrive when the schedule says), waits for each answer, and records its
/// latency twice: from when it went out, and from when it was meant to go out.
pub fn closed_loop_client(
    server: std::net::SocketAddr,
    rate: f64,
    requests: u64,
    stop_at: Instant,
) -> anyhow::Result<OmissionHistograms> {
    let socket = UdpSocket::bind("127.0.0.1:0")?;
    socket.connect(server)?;
    socket.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut throttle = Throttle::per_second(rate)?
        .max_lag(Duration::MAX)
        .min_sleep(Duration::ZERO);
    let period_ns = (1e9 / rate) as u64;
    let (mut from_send, mut corrected, mut from_intent) =
        (histogram()?, histogram()?, histogram()?);
    let (mut done, mut lost) = (0u64, 0u64);
    let first = Instant::now();
    let mut buf = [0u8; 64];
    while done < requests && Instant::now() < stop_at {
        throttle.wait();
        let intended = first + Duration::from_nanos(done * period_ns);
        let sent = Instant::now();
        socket.send(b"QOTD")?;
        if socket.recv(&mut buf).is_err() {
            lost += 1; // no answer within 2 s: counted, not recorded
            done += 1;
            continue;
        }
        let answered = Instant::now();
        let service = (answered - sent).as_nanos() as u64;
        from_send.record(service.max(1))?;
        corrected.record_correct(service.max(1), period_ns)?;
        from_intent.record((answered - intended.min(sent)).as_nanos() as u64)?;
        done += 1;
    }
    Ok(OmissionHistograms {
        from_send,
        corrected,
        from_intent,
        requests: done,
        lost,
    })
}
// ANCHOR_END: omission

/// A distribution as (latency ns, quantile) points for a CDF plot.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Curve(pub Vec<(f64, f64)>);

impl Curve {
    pub fn of(h: &Histogram<u64>) -> Curve {
        if h.is_empty() {
            return Curve(Vec::new());
        }
        let mut qs: Vec<f64> = (0..=99).map(|i| f64::from(i) / 100.0).collect();
        qs.extend((1..=9).map(|i| 0.99 + f64::from(i) / 1000.0));
        qs.extend([0.9995, 0.9999, 1.0]);
        Curve(
            qs.into_iter()
                .map(|q| (h.value_at_quantile(q) as f64, q))
                .collect(),
        )
    }
}
