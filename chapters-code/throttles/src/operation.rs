//! The operation every throttle drives: a datagram on loopback, to a port nobody
//! holds or to a socket of this process whose thread reads it.

use serde::{Deserialize, Serialize};
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

/// Where the operation's datagrams go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sink {
    /// A loopback port nobody holds, as in the write-up (which sent to the QOTD port,
    /// 17, with nothing listening): the kernel answers each datagram with an ICMP "port
    /// unreachable", and no thread of this process is woken.
    ClosedPort,
    /// A socket of this process with a thread that reads every datagram: each send
    /// wakes that thread. The write-up had no such thread; this is the control that
    /// shows what one costs.
    InProcess,
}

// ANCHOR: operation
/// The operation every throttle drives: send a 4-byte datagram on loopback.
///
/// The socket is not connected: on Linux a connected UDP socket reports an ICMP
/// "port unreachable" as an error on its *next* send, which then sends nothing, so
/// every other operation would be skipped. An unconnected socket is not told (nothing
/// here asks for the error queue), so every send goes out; errors are still counted.
pub struct UdpOp {
    socket: UdpSocket,
    to: SocketAddr,
    pub sent: u64,
    pub errors: u64,
    sink: Option<thread::JoinHandle<u64>>,
    stop: Arc<AtomicBool>,
}

impl UdpOp {
    /// Sends to a loopback port that nobody holds: one bound to port 0 and released.
    pub fn new() -> anyhow::Result<UdpOp> {
        let to = UdpSocket::bind("127.0.0.1:0")?.local_addr()?; // the socket closes here
        Ok(UdpOp {
            socket: UdpSocket::bind("127.0.0.1:0")?,
            to,
            sent: 0,
            errors: 0,
            sink: None,
            stop: Arc::new(AtomicBool::new(false)),
        })
    }
}
// ANCHOR_END: operation

impl UdpOp {
    /// Sends to a socket of this process whose thread reads and counts every datagram.
    pub fn with_reader() -> anyhow::Result<UdpOp> {
        let rx = UdpSocket::bind("127.0.0.1:0")?;
        rx.set_read_timeout(Some(Duration::from_millis(100)))?;
        let to = rx.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sink = thread::Builder::new()
            .name("udp-sink".into())
            .spawn(move || {
                let mut buf = [0u8; 64];
                let mut received = 0;
                loop {
                    match rx.recv(&mut buf) {
                        // The empty datagram `finish` sends last: everything sent
                        // before it is already here.
                        Ok(0) => return received,
                        Ok(_) => received += 1,
                        Err(_) if flag.load(Ordering::Relaxed) => return received,
                        Err(_) => {}
                    }
                }
            })?;
        Ok(UdpOp {
            socket: UdpSocket::bind("127.0.0.1:0")?,
            to,
            sent: 0,
            errors: 0,
            sink: Some(sink),
            stop,
        })
    }

    /// The operation for a [`Sink`].
    pub fn to(sink: Sink) -> anyhow::Result<UdpOp> {
        match sink {
            Sink::ClosedPort => UdpOp::new(),
            Sink::InProcess => UdpOp::with_reader(),
        }
    }

    pub fn send(&mut self) {
        match self.socket.send_to(b"QOTD", self.to) {
            Ok(_) => self.sent += 1,
            Err(_) => self.errors += 1,
        }
    }

    /// Stops the reading thread, if there is one, and returns how many datagrams it
    /// received (`None`: nobody reads them).
    pub fn finish(mut self) -> Option<u64> {
        self.stop_sink()
    }

    fn stop_sink(&mut self) -> Option<u64> {
        let sink = self.sink.take()?;
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.socket.send_to(&[], self.to);
        Some(sink.join().unwrap_or(0))
    }
}

impl Drop for UdpOp {
    fn drop(&mut self) {
        self.stop_sink();
    }
}
