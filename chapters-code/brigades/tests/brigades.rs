//! Correctness of the brigades: the byte reaches every member, counts are exact, limits
//! (injected, never real) are reported, stalls end at the deadline. No timing asserts.

use brigades::experiments_for_tests as ex;
use brigades::{AsyncBrigade, Caps, ChannelLink, Flavor, Link, PipeLink};
use std::io;
use std::time::{Duration, Instant};

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(20)
}

#[cfg(unix)]
#[test]
fn thread_brigade_passes_every_byte_through_every_member() {
    let mut b = brigades::ThreadBrigade::build(20, &Caps::default(), None).unwrap();
    assert_eq!(b.tasks(), 20);
    assert!(b.stop.is_none());
    // One lap by hand: the byte comes back increased once per member.
    assert_eq!(b.lap(250).unwrap(), 250u8.wrapping_add(20));
    let r = b.rounds(3, 10, soon()).unwrap();
    assert_eq!((r.ns.len(), r.laps_run, r.stopped_early), (10, 13, false));
    assert_eq!(b.finish().unwrap(), vec![14; 20]);
}

#[cfg(unix)]
#[test]
fn one_thread_brigade_does_the_same_arithmetic() {
    let mut b = brigades::OneThreadBrigade::build(300).unwrap();
    assert_eq!(b.lap(7).unwrap(), 7u8.wrapping_add(300u16 as u8));
    let r = b.rounds(2, 5, soon()).unwrap();
    assert_eq!(r.ns.len(), 5);
}

fn async_counts<L: Link>(flavor: Flavor) {
    let mut b = AsyncBrigade::<L>::build(257, flavor, &Caps::default()).unwrap();
    let r = b.rounds(2, 6, soon()).unwrap();
    assert_eq!(
        (r.tasks, r.ns.len(), r.laps_run),
        (257, 6, 8),
        "{}",
        L::NAME
    );
    assert_eq!(b.finish().unwrap(), vec![8; 257], "{}", L::NAME);
}

#[test]
fn async_brigades_pass_every_byte_on_both_runtimes() {
    for flavor in [Flavor::CurrentThread, Flavor::MultiThread] {
        async_counts::<ChannelLink>(flavor);
        async_counts::<PipeLink>(flavor);
        #[cfg(unix)]
        async_counts::<brigades::SocketLink>(flavor);
    }
}

#[cfg(unix)]
#[test]
fn a_refused_socket_pair_shortens_the_thread_brigade_and_says_why() {
    let caps = Caps {
        fake_link_failure_at: Some(6),
        ..Caps::default()
    };
    let mut b = brigades::ThreadBrigade::build(50, &caps, None).unwrap();
    let stop = b.stop.clone().expect("a stop");
    // Six links make a brigade of five members.
    assert_eq!((stop.wanted, stop.built, b.tasks()), (50, 5, 5));
    assert!(stop.detail.contains("artificial cap"), "{stop:?}");
    b.rounds(1, 3, soon()).unwrap();
    assert_eq!(b.finish().unwrap(), vec![4; 5]);
}

#[cfg(unix)]
#[test]
fn a_refused_thread_ends_the_brigade_at_the_last_member() {
    let caps = Caps {
        fake_spawn_failure_at: Some(3),
        ..Caps::default()
    };
    let mut b = brigades::ThreadBrigade::build(10, &caps, None).unwrap();
    let stop = b.stop.clone().unwrap();
    assert_eq!((stop.built, b.tasks()), (3, 3));
    assert!(stop.limit.contains("artificial cap"), "{stop:?}");
    assert_eq!(b.lap(0).unwrap(), 3);
    assert_eq!(b.finish().unwrap(), vec![1; 3]);

    let guard = Caps {
        guard_threads: 4,
        guard_reason: "a test guard".into(),
        ..Caps::default()
    };
    let b = brigades::ThreadBrigade::build(10, &guard, None).unwrap();
    assert_eq!(b.stop.as_ref().unwrap().limit, "a test guard");
    assert_eq!(b.finish().unwrap().len(), 4);
}

#[test]
fn async_limits_are_reported_not_panicked_on() {
    let caps = Caps {
        fake_link_failure_at: Some(9),
        ..Caps::default()
    };
    let mut b = AsyncBrigade::<ChannelLink>::build(100, Flavor::CurrentThread, &caps).unwrap();
    assert_eq!(b.stop.as_ref().unwrap().built, 8);
    b.rounds(0, 2, soon()).unwrap();
    assert_eq!(b.finish().unwrap(), vec![2; 8]);

    // A budget of one byte stops the build at the first memory check.
    let caps = Caps {
        resident_budget: Some(1),
        ..Caps::default()
    };
    let b = AsyncBrigade::<PipeLink>::build(4000, Flavor::CurrentThread, &caps).unwrap();
    let stop = b.stop.clone().unwrap();
    assert_eq!(stop.built, 1024);
    assert!(stop.limit.contains("memory budget"), "{stop:?}");
    assert_eq!(b.finish().unwrap().len(), 1024);

    // So does a build deadline that has already passed.
    let caps = Caps {
        build_deadline: Some(Instant::now()),
        ..Caps::default()
    };
    let b = AsyncBrigade::<PipeLink>::build(5000, Flavor::MultiThread, &caps).unwrap();
    assert!(b.stop.as_ref().unwrap().limit.contains("time bound"));
    assert_eq!(b.finish().unwrap().len(), 1024);
}

/// A link that loses every byte: the brigade stalls.
struct BlackHole;

impl Link for BlackHole {
    type Tx = tokio::sync::mpsc::Sender<u8>;
    type Rx = tokio::sync::mpsc::Receiver<u8>;
    const NAME: &'static str = "black hole";
    fn pair() -> io::Result<(Self::Tx, Self::Rx)> {
        Ok(tokio::sync::mpsc::channel(1))
    }
    async fn send(_: &mut Self::Tx, _: u8) -> io::Result<()> {
        Ok(())
    }
    async fn recv(rx: &mut Self::Rx) -> io::Result<Option<u8>> {
        Ok(rx.recv().await)
    }
    async fn close(tx: Self::Tx) {
        drop(tx);
    }
}

#[test]
fn a_stalled_brigade_stops_at_the_deadline() {
    let mut b =
        AsyncBrigade::<BlackHole>::build(5, Flavor::CurrentThread, &Caps::default()).unwrap();
    let started = Instant::now();
    let r = b
        .rounds(0, 10, Instant::now() + Duration::from_millis(150))
        .unwrap();
    assert!(r.stopped_early && r.ns.is_empty());
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "it must not wait forever"
    );
    assert_eq!(b.finish().unwrap(), vec![0; 5]);
}

#[cfg(unix)]
#[test]
fn a_deadline_in_the_past_keeps_the_laps_that_ran() {
    let mut b = brigades::ThreadBrigade::build(3, &Caps::default(), None).unwrap();
    let r = b.rounds(0, 1000, Instant::now()).unwrap();
    assert!(r.stopped_early);
    assert_eq!(r.ns.len(), 1);
    assert_eq!(b.finish().unwrap(), vec![1; 3]);
}

#[test]
fn measure_kind_checks_the_counts_of_channel_brigades() {
    for kind in [ex::Kind::AsyncCurrentChannel, ex::Kind::AsyncMultiChannel] {
        let (r, stop) = ex::measure_kind(kind, 50, 2, 20, soon()).unwrap();
        assert!(stop.is_none());
        assert_eq!(r.ns.len(), 20);
    }
}

#[test]
fn slope_fits_a_line() {
    let pts: Vec<(f64, f64)> = (1..=5)
        .map(|n| (n as f64 * 100.0, 4096.0 * n as f64 * 100.0 + 7e6))
        .collect();
    assert!((ex::slope(&pts).unwrap() - 4096.0).abs() < 1e-6);
    assert_eq!(ex::slope(&pts[..1]), None);
}

#[test]
fn the_cli_rejects_unknown_names_and_lists_the_valid_ones() {
    let code = harness::cli::main_from(&brigades::CHAPTER, ["brigades", "table", "no-such-table"]);
    assert_ne!(code, std::process::ExitCode::SUCCESS);
    let code =
        harness::cli::main_from(&brigades::CHAPTER, ["brigades", "run", "--profile", "slow"]);
    assert_ne!(code, std::process::ExitCode::SUCCESS);
    assert_eq!(
        harness::cli::main_from(&brigades::CHAPTER, ["brigades", "list"]),
        std::process::ExitCode::SUCCESS
    );
}

#[test]
fn every_view_names_an_experiment_and_the_reference_parses() {
    for v in brigades::CHAPTER.views {
        assert!(
            brigades::CHAPTER.experiment(v.experiment).is_some(),
            "{}",
            v.name
        );
    }
    ex::reference_parses().unwrap();
}
