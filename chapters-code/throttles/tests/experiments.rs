//! Every throttle runs the operations asked and every datagram arrives; every
//! experiment's round runs (with small parameters), stays within its bound and gives
//! one reading per variant; every view renders from such rounds; the coordinated
//! omission client matches answers by sequence number; the binary refuses bad input.
//! Nothing here asserts how fast anything is.

use harness::params::{Override, resolve};
use harness::{AnyExperiment, Ctx, Profile, ReadingKey, Record, ViewKind};
use std::time::{Duration, Instant};
use throttles::experiments::{self, Measure, NAIVE, OMISSION, RATES, RatesKey, SWEEP, SweepKey};
use throttles::{OmissionPlan, Pacer, Run, StallingEcho, closed_loop_client};

#[test]
fn every_pacer_runs_exactly_the_operations_asked() {
    for pacer in Pacer::ALL {
        let mut count = 0u32;
        let mut op = || count += 1;
        let mut run = Run::new(&mut op, 25, Instant::now() + Duration::from_secs(20));
        pacer.drive(5_000.0, &mut run).unwrap();
        assert_eq!(run.starts.len(), 25, "{pacer:?}");
        drop(run);
        assert_eq!(count, 25, "{pacer:?}");
    }
}

#[test]
fn a_bad_rate_is_an_error_for_every_pacer() {
    for pacer in Pacer::ALL {
        let mut op = || {};
        let mut run = Run::new(&mut op, 5, Instant::now() + Duration::from_secs(1));
        let err = pacer.drive(0.0, &mut run).unwrap_err().to_string();
        assert!(err.contains("not positive"), "{pacer:?}: {err}");
        assert!(run.starts.is_empty());
    }
}

#[test]
fn runs_stop_at_their_deadline_and_keep_what_they_have() {
    let mut op = || {};
    // 10 ops/s for 1,000 operations would take 100 s; the run must stop at 150 ms.
    let mut run = Run::new(&mut op, 1_000, Instant::now() + Duration::from_millis(150));
    let start = Instant::now();
    Pacer::Deadline.drive(10.0, &mut run).unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!((1..=3).contains(&run.starts.len()), "{}", run.starts.len());
}

#[test]
fn every_datagram_of_every_run_arrives() {
    let far = Instant::now() + Duration::from_secs(30);
    for pacer in Pacer::ALL {
        for rate in [1_000.0, 100_000.0] {
            let r =
                experiments::measure_rate(pacer, rate, 6, None, throttles::Sink::InProcess, far)
                    .unwrap();
            assert_eq!(r.ran, r.asked, "{pacer:?} at {rate}");
            assert_eq!(
                r.datagrams_received.unwrap() + r.send_errors,
                r.ran,
                "{pacer:?}"
            );
            assert_eq!(r.gaps.len(), r.ran - 1);
            assert!(r.achieved > 0.0 && r.reading().is_some());
            // The CPU window runs from the throttle's set-up done (a runtime built) to
            // its last operation: inside the run's wall time, and at least the span
            // from its first start to its last (ninth review: tokio's runtime build
            // and drop were spread over a short run's operations).
            let paced = r.paced_ns.expect("a paced window");
            let span = r.drift_ns + (r.ran - 1) as f64 * 1e9 / rate;
            assert!(
                paced <= r.wall_ns && paced >= span * 0.99,
                "{pacer:?}: {paced} {span}"
            );
            #[cfg(target_os = "linux")]
            assert!(
                r.cpu_ns.is_some_and(|c| c <= paced * 1.01 + 1e5),
                "{pacer:?}"
            );
        }
    }
}

/// Sent to a port nobody holds, as the write-up did, every send goes out: the kernel's
/// "port unreachable" answers never turn into errors on an unconnected socket.
#[test]
fn sends_to_a_closed_port_all_go_out() {
    let mut op = throttles::UdpOp::new().unwrap();
    for _ in 0..50 {
        op.send();
        std::thread::sleep(Duration::from_micros(200));
    }
    assert_eq!((op.sent, op.errors), (50, 0));
    assert_eq!(op.finish(), None);
}

/// Runs `rounds` rounds of an experiment in this process with `sets` applied, as the
/// harness would store them.
fn record(exp: &'static dyn AnyExperiment, sets: &[&str], rounds: u32) -> Record {
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let r = harness::runner::rounds_in_process(
        &harness::runner::Request {
            chapter: &throttles::CHAPTER,
            experiment: exp,
            profile: Profile::Quick,
            overrides: &overrides,
            mode: harness::runner::Mode::InProcess,
        },
        rounds,
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(r.rounds.len() as u32, rounds, "{:?}", r.status);
    assert!(
        r.notes.iter().all(|n| !n.text.contains("could not run")),
        "{:?}",
        r.notes
    );
    r
}

fn render(kind: ViewKind, name: &str, r: &Record) -> String {
    let view = throttles::CHAPTER.view(kind, name).expect("view exists");
    view.render(r)
        .unwrap_or_else(|e| panic!("{name} failed to render: {e:#}"))
}

#[test]
fn the_sweep_and_the_write_ups_loop_run_and_render() {
    let sweep = record(&SWEEP, &["sleeps=1"], 3);
    // One reading per length per round, and a sleep never returns early.
    // One reading per length and one for the back-to-back 1 ms sleeps, per round.
    for round in &sweep.rounds {
        assert_eq!(round.readings.len(), experiments::SWEEP_MS.len() + 1);
        assert!(round.readings.iter().all(|r| r.value >= 0.0));
    }
    assert!(sweep.estimate(&SweepKey::Late(1).stored()).is_some());
    assert!(sweep.estimate(&SweepKey::BackToBack.stored()).is_some());
    let md = render(ViewKind::Table, "sweep", &sweep);
    assert!(md.contains("| 50 ms |"), "{md}");
    assert!(!md.lines().next().unwrap().contains("p99"), "{md}");
    assert!(md.contains("| 1 ms, back to back |"), "{md}");
    assert!(md.contains("÷ 1 ms's"), "{md}");
    let md = render(ViewKind::Table, "sweep-reference", &sweep);
    assert!(md.contains("1.995 ms") && md.contains("0.0070 ms"), "{md}");
    assert!(md.contains("(ours)") && !md.contains("Windows)"), "{md}");

    let naive = record(&NAIVE, &["ops=5"], 3);
    for round in &naive.rounds {
        assert_eq!(round.data["datagrams_sent"], 5);
        assert!(round.data["datagrams_received"].is_null());
        assert_eq!(round.data["send_errors"], 0);
        assert_eq!(round.readings.len(), 2);
    }
    let md = render(ViewKind::Table, "naive", &naive);
    assert!(
        md.contains("1.994 ± 0.0016 ms") && md.contains("502 ops/s for *send; sleep(1 ms)*"),
        "{md}"
    );
    assert!(!md.contains("Windows)"), "{md}");
}

#[test]
fn every_throttle_runs_at_every_rate_and_every_view_renders() {
    let rates = record(
        &RATES,
        &[
            "rates_from=1000",
            "rates_to=10000",
            "run_ms=3",
            "run_ms_1k=5",
            "min_ops=4",
        ],
        3,
    );
    for round in &rates.rounds {
        // Two target rates, the stall runs, the A/A twin and the two control arms.
        assert_eq!(round.readings.len(), 3 * Pacer::ALL.len() + 1 + 2);
        let twin = RatesKey::twin(experiments::TWIN, 1_000.0).stored();
        assert!(round.readings.iter().any(|r| r.key == twin), "{twin}");
        let control = RatesKey::reader(Pacer::Deadline, 10_000.0).stored();
        assert!(round.readings.iter().any(|r| r.key == control), "{control}");
    }
    // The twin is a reading of its own, never a row of the tables.
    let md = render(ViewKind::Table, "checks", &rates);
    assert!(md.contains("A/A: deadline at 1,000/s"), "{md}");
    assert!(md.contains("reader thread"), "{md}");
    // The decision table: every finding of the rates experiment has its figure.
    let md =
        harness::answer::chapter_answer(throttles::CHAPTER.findings, std::slice::from_ref(&rates));
    assert!(
        md.starts_with("<div class=\"cow-live cow-answer\">"),
        "{md}"
    );
    assert!(md.contains("| Pacing at 10,000 ops/s"), "{md}");
    assert_eq!(
        md.matches("no figure").count(),
        1,
        "only the omission row: {md}"
    );
    let md = render(ViewKind::Table, "why-1k", &rates);
    assert!(
        md.contains("| deadline |") && md.contains("sleeps per op"),
        "{md}"
    );
    assert!(
        rates
            .estimate(&RatesKey::rate(Pacer::Deadline, 10_000.0).stored())
            .is_some()
    );
    assert!(
        rates
            .estimate(&RatesKey::Stall(Pacer::TokioBurst).stored())
            .is_some()
    );
    let md = render(ViewKind::Table, "stall", &rates);
    assert!(md.contains("| tokio Delay |"), "{md}");
    let md = render(ViewKind::Table, "achieved", &rates);
    assert!(
        md.contains("| deadline |") && md.contains("10,000/s"),
        "{md}"
    );
    // The runs at the write-up's rate have their own planned length, and the note says so.
    assert!(md.contains("3 ms of operations (5 ms at 1,000/s)"), "{md}");
    for name in ["jitter-1k", "jitter-10k"] {
        let md = render(ViewKind::Table, name, &rates);
        assert!(md.contains("tokio Skip"), "{md}");
        // Four columns, so the table fits the text column.
        assert_eq!(md.lines().next().unwrap().matches('|').count(), 5, "{md}");
    }
    let md = render(ViewKind::Table, "cpu", &rates);
    assert!(
        md.contains("| governor, burst 1 |") && md.contains("divided by its operations"),
        "{md}"
    );
    let md = render(ViewKind::Table, "pairs", &rates);
    assert!(md.contains("| tokio Burst ÷ tokio Delay |"), "{md}");
    // No ratio is stated for a pair the verdict rule leaves undecided.
    assert!(!md.contains("| 1.00× "), "{md}");
    for name in ["achieved", "gaps-1k", "gaps-10k"] {
        assert!(
            render(ViewKind::Plot, name, &rates).starts_with("<svg"),
            "{name}"
        );
    }
    // A view of a rate that was not measured says so instead of drawing nothing.
    let one = record(&RATES, &["rates_from=500", "rates_to=500", "run_ms=2"], 1);
    let e = throttles::CHAPTER
        .view(ViewKind::Table, "jitter-1k")
        .unwrap()
        .render(&one)
        .unwrap_err()
        .to_string();
    assert!(e.contains("rates_from"), "{e}");
}

#[test]
fn rates_from_above_rates_to_is_a_clear_error() {
    let overrides = [
        Override::parse("rates_from=1000").unwrap(),
        Override::parse("rates_to=10").unwrap(),
    ];
    let params = resolve("rates", RATES.params, Profile::Quick, &overrides).unwrap();
    let ctx = Ctx::new(
        Profile::Quick,
        0,
        params,
        Instant::now() + Duration::from_secs(5),
    );
    let e = RATES
        .run_round(ctx)
        .map(|_| ())
        .expect_err("refused")
        .to_string();
    assert!(e.contains("rates_from"), "{e}");
}

#[test]
fn the_omission_test_sees_the_stalls_only_from_the_intended_send() {
    let om = record(
        &OMISSION,
        &["rate=2000", "requests=200", "stall_every=50", "stall_ms=10"],
        3,
    );
    for round in &om.rounds {
        assert_eq!(round.data["sent"], 200);
        assert_eq!(round.data["answered"], 200);
        assert_eq!(round.data["lost"], 0);
        assert_eq!(round.readings.len(), 3);
    }
    let p90 = |m: Measure| om.estimate(&m.stored()).unwrap().median;
    // Four pauses of 10 ms in 100 ms of schedule: over 10 % of the requests are held
    // up, so the p90 from the intended send is at least a millisecond; from the actual
    // send only one request per pause waits.
    assert!(
        p90(Measure::FromIntent) > 1e6,
        "{}",
        p90(Measure::FromIntent)
    );
    assert!(p90(Measure::FromIntent) > p90(Measure::FromSend));
    let md = render(ViewKind::Table, "omission", &om);
    assert!(md.contains("record_correct"), "{md}");
    assert!(render(ViewKind::Plot, "omission", &om).starts_with("<svg"));
}

#[test]
fn an_answer_later_than_the_patience_does_not_shift_later_latencies() {
    // One request in every 5 is answered after 300 ms; the client waits 200 ms for it.
    // The echo server answers in order, so the next request's answer waits out the
    // rest of the stall: it comes about 100 ms after that request was sent, well
    // inside its patience, and the stalled answer arrives just before it. Both
    // margins are 100 ms, wide enough for a loaded machine.
    let server = StallingEcho::start(5, Duration::from_millis(300)).unwrap();
    let plan = OmissionPlan {
        rate: 500.0,
        requests: 20,
        patience: Duration::from_millis(200),
        deadline: Instant::now() + Duration::from_secs(20),
    };
    let got = closed_loop_client(server.addr, &plan).unwrap();
    server.stop();
    assert_eq!(got.sent, 20);
    assert_eq!(got.lost, 4, "the four stalled requests are given up");
    assert_eq!(got.answered.len() as u64 + got.lost, got.sent);
    assert!(
        got.late >= 3,
        "their answers came later and were skipped: {}",
        got.late
    );
    // Matched by order, a late answer would be taken for the request after it, and
    // every latency after the first stall would be one request off: a matched answer
    // never takes longer than the stall's remainder plus scheduling.
    for e in &got.answered {
        let latency = e.answered.duration_since(e.sent);
        assert!(latency < Duration::from_millis(200), "{latency:?}");
    }
}

#[test]
fn a_deadline_stops_the_client_instead_of_hanging() {
    let server = StallingEcho::start(1, Duration::from_secs(3)).unwrap();
    let plan = OmissionPlan {
        rate: 1_000.0,
        requests: 1_000,
        patience: Duration::from_secs(10),
        deadline: Instant::now() + Duration::from_millis(300),
    };
    let start = Instant::now();
    let got = closed_loop_client(server.addr, &plan).unwrap();
    assert!(got.stopped || got.lost > 0);
    assert!(got.sent < 1_000);
    // Stopping the server cuts its pause short.
    drop(server);
    assert!(
        start.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        start.elapsed()
    );
}

fn bin(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_throttles"))
        .args(args)
        .env(
            "COW_RESULTS_DIR",
            std::env::temp_dir().join("throttles-test-results"),
        )
        .output()
        .unwrap()
}

#[test]
fn the_binary_refuses_bad_rates_and_names_and_hides_no_command() {
    for set in ["rates_from=0", "rates_to=fast", "rate=-3", "run_ms=1e300"] {
        let out = bin(&["run", "--only", "rates", "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{set}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("must be") || err.contains("no parameter"),
            "{set}: {err}"
        );
    }
    // What `pace` used to do is a parameter now; the command is gone.
    assert!(!bin(&["pace", "2000"]).status.success());
    let out = bin(&["table", "nonsense"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sweep") && err.contains("answer"), "{err}");
    let out = bin(&["list"]);
    let s = String::from_utf8_lossy(&out.stdout);
    for p in ["rates_from", "rates_to", "run_ms", "min_ops", "patience_ms"] {
        assert!(s.contains(p), "{s}");
    }
}
