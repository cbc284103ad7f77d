//! The transports' two ends: the std receiving links (channel, TCP stream, UDP
//! socket) with the wait each offers, how a socket's bytes become a message, the
//! loopback pairs, and the tokio ends of the same three transports.

use crate::variant::{Msg, Transport};
use crate::wait::{Attempt, Link, time_left};
use std::io::{self, ErrorKind, Read};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::mpsc::{self, TryRecvError};
use std::time::{Duration, Instant};

impl Link for mpsc::Receiver<Msg> {
    fn attempt(&mut self) -> Attempt<Msg> {
        match self.try_recv() {
            Ok(msg) => Attempt::Got(msg),
            Err(TryRecvError::Empty) => Attempt::Empty,
            Err(TryRecvError::Disconnected) => Attempt::Closed,
        }
    }

    fn block(&mut self) -> Option<Msg> {
        // Only a closed channel ends this wait without a message. What this wait is,
        // read from std 1.95's source (`library/std/src/sync/`): `mpsc::channel` builds
        // an unbounded list channel (`mpmc/mod.rs`, `channel`), whose `recv`
        // (`mpmc/list.rs`, `Channel::recv` with no deadline) calls `start_recv` once
        // (it spins with `Backoff` only while a sender installs a block: the channel's
        // first, or the next at a block's end); on an empty channel it registers the
        // thread as a waiting receiver and parks it in `Context::wait_until`
        // (`mpmc/context.rs`: `thread.park()` until an operation is selected). No spin
        // or yield precedes the park.
        self.recv().ok()
    }

    fn block_until(&mut self, until: Instant) -> Option<Msg> {
        // A timeout and a closed channel both end the wait without a message.
        self.recv_timeout(time_left(until)?).ok()
    }
}

/// A socket that switches between non-blocking mode (for attempts) and blocking mode
/// (for sleeping, with or without a read timeout), changing mode only when it has to.
pub struct Socket<S> {
    sock: S,
    nonblocking: bool,
    /// Whether a read timeout is set (the bounded wait sets one before each read).
    timeout: bool,
}

pub trait SocketMode {
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
    pub(crate) fn new(sock: S) -> Socket<S> {
        Socket {
            sock,
            nonblocking: false,
            timeout: false,
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

/// A socket link: one read, interpreted as a whole message, nothing yet, or closed.
pub trait ReadMsg {
    type Sock: SocketMode;
    fn socket(&mut self) -> &mut Socket<Self::Sock>;
    fn read_msg(&mut self) -> Attempt<Msg>;
}

// ANCHOR: socket_link
/// Waiting on a socket: an attempt is one non-blocking read; a block, blocking reads
/// with no timeout (the write-up's); a bounded block, each read timed out at `until`.
impl<T: ReadMsg> Link for T {
    fn attempt(&mut self) -> Attempt<Msg> {
        if self.socket().mode(true).is_err() {
            return Attempt::Closed;
        }
        self.read_msg()
    }

    fn block(&mut self) -> Option<Msg> {
        let s = self.socket();
        s.mode(false).ok()?;
        if s.timeout {
            s.sock.set_read_timeout(None).ok()?;
            s.timeout = false;
        }
        loop {
            match self.read_msg() {
                Attempt::Got(msg) => return Some(msg),
                Attempt::Empty => continue, // part of a message, or an interrupted read
                Attempt::Closed => return None,
            }
        }
    }

    fn block_until(&mut self, until: Instant) -> Option<Msg> {
        self.socket().mode(false).ok()?;
        loop {
            let timeout = Some(time_left(until)?);
            self.socket().sock.set_read_timeout(timeout).ok()?;
            self.socket().timeout = true;
            match self.read_msg() {
                Attempt::Got(msg) => return Some(msg),
                Attempt::Empty => continue, // part of a message, or a timeout slice
                Attempt::Closed => return None,
            }
        }
    }
}
// ANCHOR_END: socket_link

/// Would-block, timed-out and interrupted reads mean "nothing yet"; other errors end
/// the link.
fn nothing_yet(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

// ANCHOR: tcp_link
/// A TCP stream delivers bytes, not messages: a message may arrive in pieces, so
/// the link keeps what it has read until all sixteen bytes are there.
pub struct TcpLink {
    pub(crate) socket: Socket<TcpStream>,
    pub(crate) buf: [u8; 16],
    pub(crate) filled: usize,
}

impl ReadMsg for TcpLink {
    type Sock = TcpStream;

    fn socket(&mut self) -> &mut Socket<TcpStream> {
        &mut self.socket
    }

    fn read_msg(&mut self) -> Attempt<Msg> {
        let read = self.socket.sock.read(&mut self.buf[self.filled..]);
        gather(&mut self.buf, &mut self.filled, read)
    }
}

/// Adds what one read of a stream returned to the `filled` bytes kept so far: a
/// message once all sixteen are there, nothing yet before that.
fn gather(buf: &mut [u8; 16], filled: &mut usize, read: io::Result<usize>) -> Attempt<Msg> {
    match read {
        Ok(0) => Attempt::Closed,
        Ok(n) => {
            *filled += n;
            if *filled < 16 {
                return Attempt::Empty;
            }
            *filled = 0;
            Attempt::Got(Msg::from_bytes(*buf))
        }
        Err(e) if nothing_yet(&e) => Attempt::Empty,
        Err(_) => Attempt::Closed,
    }
}
// ANCHOR_END: tcp_link

/// A datagram arrives whole or not at all (and on a busy machine, sometimes not).
pub struct UdpLink {
    pub(crate) socket: Socket<UdpSocket>,
}

impl ReadMsg for UdpLink {
    type Sock = UdpSocket;

    fn socket(&mut self) -> &mut Socket<UdpSocket> {
        &mut self.socket
    }

    fn read_msg(&mut self) -> Attempt<Msg> {
        let mut buf = [0u8; 16];
        let read = self.socket.sock.recv(&mut buf);
        datagram(&buf, read)
    }
}

/// The sequence number of the datagram a UDP sender sends when it stops: a datagram
/// socket has no end of stream, so this one tells a receiver blocked without a time
/// bound that the run is over.
pub const CLOSE_SEQ: u64 = u64::MAX;

/// What one receive from a datagram socket returned: a message, the sender's closing
/// datagram, or nothing yet.
fn datagram(buf: &[u8; 16], read: io::Result<usize>) -> Attempt<Msg> {
    match read {
        Ok(16) if Msg::from_bytes(*buf).seq == CLOSE_SEQ => Attempt::Closed,
        Ok(16) => Attempt::Got(Msg::from_bytes(*buf)),
        Ok(_) => Attempt::Empty, // not one of ours: ignore it
        Err(e) if nothing_yet(&e) => Attempt::Empty,
        Err(_) => Attempt::Closed,
    }
}

/// Connects a TCP pair on loopback without a thread blocked in `accept`: the
/// connection is queued by the kernel as soon as `connect` returns, so `accept` on a
/// non-blocking listener takes it at once (or the error says why not).
pub(crate) fn tcp_pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let client = TcpStream::connect_timeout(&listener.local_addr()?, Duration::from_secs(5))?;
    listener.set_nonblocking(true)?;
    let start = Instant::now();
    let server = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e)
                if e.kind() == ErrorKind::WouldBlock
                    && start.elapsed() < Duration::from_secs(5) =>
            {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => return Err(e),
        }
    };
    server.set_nonblocking(false)?;
    server.set_nodelay(true)?;
    client.set_nodelay(true)?;
    Ok((server, client))
}

/// A UDP sender that, when dropped, sends the closing datagram (`CLOSE_SEQ`): the
/// end of a run for a receiver blocked without a time bound.
pub(crate) struct UdpSender(pub(crate) UdpSocket);

impl Drop for UdpSender {
    fn drop(&mut self) {
        let close = Msg {
            seq: CLOSE_SEQ,
            stamp: 0,
        };
        let _ = self.0.send(&close.to_bytes());
    }
}

// ANCHOR: tokio_recv
/// The tokio receivers. Blocking is an `.await` that parks the task; spinning calls
/// `attempt` in a loop that never yields. For sockets, `try_read` and `try_recv` make
/// no system call until tokio's reactor has seen the socket become readable: the spin
/// polls tokio's readiness flag, which a worker that parks holding the I/O driver sets
/// after `epoll_wait` returns: another worker, or the sender's own (tokio 1.54.1,
/// `runtime/io/registration.rs`, `try_io`). `try_recv` on a channel needs no reactor and does not use
/// tokio's cooperative budget, so a spin on it never yields to the scheduler. It can
/// park the thread only while it catches a send half done (tokio 1.54.1,
/// `sync/mpsc/chan.rs`, `TryPopResult::Busy`).
pub(crate) enum TokioLink {
    Mpsc(tokio::sync::mpsc::UnboundedReceiver<Msg>),
    Tcp(tokio::net::TcpStream, [u8; 16], usize),
    Udp(tokio::net::UdpSocket),
}

impl TokioLink {
    /// Takes a message if one is there, without waiting: what a spinning tokio
    /// receiver calls on every poll.
    pub(crate) fn attempt(&mut self) -> Attempt<Msg> {
        use tokio::sync::mpsc::error::TryRecvError;
        match self {
            TokioLink::Mpsc(rx) => match rx.try_recv() {
                Ok(msg) => Attempt::Got(msg),
                Err(TryRecvError::Empty) => Attempt::Empty,
                Err(TryRecvError::Disconnected) => Attempt::Closed,
            },
            TokioLink::Tcp(stream, buf, filled) => {
                let read = stream.try_read(&mut buf[*filled..]);
                gather(buf, filled, read)
            }
            TokioLink::Udp(sock) => {
                let mut buf = [0u8; 16];
                let read = sock.try_recv(&mut buf);
                datagram(&buf, read)
            }
        }
    }
}
// ANCHOR_END: tokio_recv

impl TokioLink {
    /// Waits for a message the runtime's way: the task parks until tokio wakes it.
    pub(crate) async fn block(&mut self) -> Option<Msg> {
        use tokio::io::AsyncReadExt;
        match self {
            TokioLink::Mpsc(rx) => rx.recv().await,
            TokioLink::Tcp(stream, buf, filled) => {
                stream.read_exact(&mut buf[*filled..]).await.ok()?;
                *filled = 0;
                Some(Msg::from_bytes(*buf))
            }
            TokioLink::Udp(sock) => {
                let mut buf = [0u8; 16];
                loop {
                    match sock.recv(&mut buf).await {
                        Ok(16) if Msg::from_bytes(buf).seq == CLOSE_SEQ => return None,
                        Ok(16) => return Some(Msg::from_bytes(buf)),
                        Ok(_) => continue,
                        Err(_) => return None,
                    }
                }
            }
        }
    }
}

pub(crate) enum TokioSender {
    Mpsc(tokio::sync::mpsc::UnboundedSender<Msg>),
    Tcp(tokio::net::TcpStream),
    Udp(tokio::net::UdpSocket),
}

impl TokioSender {
    pub(crate) async fn send(&mut self, msg: Msg) -> io::Result<()> {
        use tokio::io::AsyncWriteExt;
        match self {
            TokioSender::Mpsc(tx) => tx
                .send(msg)
                .map_err(|_| io::Error::from(ErrorKind::BrokenPipe)),
            TokioSender::Tcp(s) => s.write_all(&msg.to_bytes()).await,
            TokioSender::Udp(s) => s.send(&msg.to_bytes()).await.map(drop),
        }
    }
}

/// A UDP sender's end sends the closing datagram when dropped, as the std one does.
impl Drop for TokioSender {
    fn drop(&mut self) {
        if let TokioSender::Udp(s) = self {
            let close = Msg {
                seq: CLOSE_SEQ,
                stamp: 0,
            };
            let _ = s.try_send(&close.to_bytes());
        }
    }
}

pub(crate) async fn tokio_pair(transport: Transport) -> io::Result<(TokioSender, TokioLink)> {
    Ok(match transport {
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
            (TokioSender::Tcp(server), TokioLink::Tcp(client, [0; 16], 0))
        }
        Transport::Udp => {
            let rx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
            let tx = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
            tx.connect(rx.local_addr()?).await?;
            (TokioSender::Udp(tx), TokioLink::Udp(rx))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    /// A TCP message that arrives in two reads is put together; end of stream closes
    /// the link and a read that would block is "nothing yet".
    #[test]
    fn a_message_in_pieces_is_put_together() {
        let sent = Msg { seq: 7, stamp: 42 };
        let bytes = sent.to_bytes();
        let (mut buf, mut filled) = ([0u8; 16], 0);
        buf[..5].copy_from_slice(&bytes[..5]);
        assert!(matches!(
            gather(&mut buf, &mut filled, Ok(5)),
            Attempt::Empty
        ));
        buf[5..].copy_from_slice(&bytes[5..]);
        match gather(&mut buf, &mut filled, Ok(11)) {
            Attempt::Got(m) => assert_eq!(m, sent),
            _ => panic!("the second read completes the message"),
        }
        assert_eq!(filled, 0);
        let would_block = Err(io::Error::from(ErrorKind::WouldBlock));
        assert!(matches!(
            gather(&mut buf, &mut filled, would_block),
            Attempt::Empty
        ));
        assert!(matches!(
            gather(&mut buf, &mut filled, Ok(0)),
            Attempt::Closed
        ));
    }
}
