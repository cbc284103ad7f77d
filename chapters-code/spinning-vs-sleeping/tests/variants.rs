//! Correctness of the chapter's measuring code: every message arrives, once, with a
//! sane latency, whatever the transport, runtime, wait or placement. Nothing here
//! asserts how fast anything is.

use spinning_vs_sleeping::*;
use std::time::{Duration, Instant};

fn plan(messages: usize, gap_ms: u64, placement: Placement) -> Plan {
    Plan {
        messages,
        warmup: 1,
        gap: Duration::from_millis(gap_ms),
        sender: Idle::Sleep,
        hybrid_spin: Duration::from_micros(50),
        placement,
        patience: Duration::from_secs(5),
        deadline: Instant::now() + Duration::from_secs(30),
    }
}

fn check(o: &Outcome, messages: usize, what: &str) {
    assert!(o.stopped.is_none(), "{what}: stopped: {:?}", o.stopped);
    assert_eq!(o.lost, 0, "{what}: nothing is lost on loopback here");
    assert_eq!(
        o.latencies_ns.len(),
        messages,
        "{what}: every message arrives"
    );
    for &l in &o.latencies_ns {
        assert!(l > 0.0 && l < 30e9, "{what}: latency {l} ns is not sane");
    }
    assert!(o.wall_ns > 0.0);
}

#[test]
fn every_std_variant_delivers_every_message() {
    for transport in [Transport::Mpsc, Transport::Tcp, Transport::Udp] {
        for wait in [Wait::Block, Wait::BlockBounded, Wait::Spin, Wait::Hybrid] {
            let o = run_std(transport, wait, &plan(12, 1, Placement::Unpinned)).unwrap();
            check(&o, 12, &format!("std {transport:?} {wait:?}"));
        }
    }
}

#[test]
fn every_tokio_variant_delivers_every_message() {
    for transport in [Transport::Mpsc, Transport::Tcp, Transport::Udp] {
        for wait in [Wait::Block, Wait::BlockBounded, Wait::Spin] {
            for host in [Host::BlockOn, Host::Spawned] {
                let o =
                    run_tokio(transport, wait, host, &plan(12, 1, Placement::Unpinned)).unwrap();
                check(&o, 12, &format!("tokio {transport:?} {wait:?} {host:?}"));
            }
        }
    }
    assert!(
        run_tokio(
            Transport::Mpsc,
            Wait::Hybrid,
            Host::BlockOn,
            &plan(1, 0, Placement::Unpinned)
        )
        .is_err()
    );
}

#[test]
fn back_to_back_messages_never_queue() {
    // With no gap the pacer still keeps one message in flight, so nothing is lost or
    // reordered and each latency is a single hand-over.
    let o = run_std(
        Transport::Udp,
        Wait::Block,
        &plan(200, 0, Placement::Unpinned),
    )
    .unwrap();
    check(&o, 200, "udp back to back");
}

#[test]
fn pinned_placements_deliver_where_supported() {
    for placement in [Placement::SameCpu, Placement::OtherCpu] {
        if !placement_supported(placement) {
            continue;
        }
        let o = run_std(Transport::Mpsc, Wait::Block, &plan(5, 1, placement)).unwrap();
        check(&o, 5, &format!("{placement:?}"));
    }
}

#[test]
fn a_deadline_stops_a_run_instead_of_hanging() {
    // Every way of waiting, the unbounded blocking receive included: the sender stops
    // at the deadline and closes its end, which ends the receiver's wait.
    for transport in [Transport::Mpsc, Transport::Tcp, Transport::Udp] {
        for wait in [Wait::Block, Wait::Spin, Wait::Hybrid] {
            let mut p = plan(1_000, 50, Placement::Unpinned);
            p.deadline = Instant::now() + Duration::from_millis(200);
            let start = Instant::now();
            let o = run_std(transport, wait, &p).unwrap();
            assert!(o.stopped.is_some(), "{transport:?} {wait:?}");
            assert!(o.latencies_ns.len() < 1_000);
            assert!(start.elapsed() < Duration::from_secs(10));
        }
        let mut p = plan(1_000, 50, Placement::Unpinned);
        p.deadline = Instant::now() + Duration::from_millis(200);
        let o = run_tokio(transport, Wait::Block, Host::Spawned, &p).unwrap();
        assert!(o.stopped.is_some(), "tokio {transport:?}");
    }
}

/// The warm-up messages are sent and taken but not timed: the first one's latency is
/// kept apart, and the counters cover the timed messages only.
#[test]
fn warm_up_messages_are_not_timed() {
    let mut p = plan(4, 1, Placement::Unpinned);
    p.warmup = 2;
    let o = run_std(Transport::Mpsc, Wait::Block, &p).unwrap();
    check(&o, 4, "warm-up");
    assert!(o.first_ns.is_some());
    assert_eq!(o.gap_ns.len(), 4);
    assert!(o.gap_ns.iter().all(|g| *g >= 1e6), "{:?}", o.gap_ns);
    if cfg!(target_os = "linux") {
        assert_eq!(o.receiver_messages, 4);
        let r = o.receiver.unwrap();
        assert!(r.voluntary.is_some() && r.cpu_ns.is_some());
    }
}

#[test]
fn ping_pong_counts_every_round_trip() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return;
    }
    let v = atomic_ping_pong(
        5_000,
        1,
        Placement::Unpinned,
        Instant::now() + Duration::from_secs(20),
    );
    assert_eq!(v.len(), 5_000);
    assert!(v.iter().all(|&x| x > 0.0));
}

/// Batched, a sample times `per_sample` round trips: whole batches only, each one way
/// (the batch's time over twice its round trips).
#[test]
fn ping_pong_in_batches_gives_one_sample_a_batch() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return;
    }
    let end = Instant::now() + Duration::from_secs(20);
    let v = atomic_ping_pong(5_500, 1_000, Placement::Unpinned, end);
    assert_eq!(v.len(), 5);
    assert!(v.iter().all(|&x| x > 0.0));
    // Fewer round trips than a batch: no sample, no hang.
    assert!(atomic_ping_pong(10, 1_000, Placement::Unpinned, end).is_empty());
}

#[test]
fn spin_reports_closed_and_timeout() {
    let closed = spin(Instant::now() + Duration::from_secs(1), || {
        Attempt::<u64>::Closed
    });
    assert!(matches!(closed, Spun::Closed));
    let t = spin(Instant::now() + Duration::from_millis(5), || {
        Attempt::<u64>::Empty
    });
    assert!(matches!(t, Spun::TimedOut));
}

#[test]
fn clock_stamps_are_monotonic() {
    let a = now_ns();
    let b = now_ns();
    assert!(b >= a);
}

#[test]
fn messages_round_trip_through_their_bytes() {
    let m = Msg {
        seq: 7,
        stamp: 123_456_789,
    };
    assert_eq!(Msg::from_bytes(m.to_bytes()), m);
}

/// The side measurements line up with the messages: one placement per latency, one
/// send time per message sent, the two threads' counters; a sender that busy-waits its
/// gap delivers like one that sleeps.
#[test]
fn side_measurements_line_up_with_the_messages() {
    for sender in [Idle::Sleep, Idle::Spin] {
        let mut p = plan(6, 2, Placement::Unpinned);
        p.sender = sender;
        let o = run_std(Transport::Mpsc, Wait::Spin, &p).unwrap();
        check(&o, 6, &format!("{sender:?} sender"));
        assert_eq!(o.same_cpu.len(), 6);
        assert_eq!(o.preempted.len(), 6);
        assert_eq!(o.send_ns.len(), 6);
        assert!(o.send_ns.iter().all(|s| (0.0..30e9).contains(s)));
        assert!(o.receiver.is_some() && o.sender.is_some());
        if cfg!(target_os = "linux") {
            assert!(o.same_cpu.iter().all(Option::is_some));
            // One wait and one probe span per timed message, read on one thread.
            assert_eq!(o.wait_cpu_ns.len(), 6);
            assert_eq!(o.probe_ns.len(), 6);
        }
    }
    // With no warm-up, the first wait starts where counting starts.
    let mut cold = plan(3, 0, Placement::Unpinned);
    cold.warmup = 0;
    let o = run_std(Transport::Mpsc, Wait::Block, &cold).unwrap();
    if cfg!(target_os = "linux") {
        assert_eq!(o.wait_cpu_ns.len(), 3);
    }
    let o = run_tokio(
        Transport::Mpsc,
        Wait::Spin,
        Host::Spawned,
        &plan(3, 1, Placement::Unpinned),
    )
    .unwrap();
    assert_eq!(o.same_cpu.len(), 3);
    assert_eq!(o.gap_ns.len(), 3);
    let mut busy = plan(1, 1, Placement::Unpinned);
    busy.sender = Idle::Spin;
    assert!(run_tokio(Transport::Mpsc, Wait::Spin, Host::BlockOn, &busy).is_err());
}
