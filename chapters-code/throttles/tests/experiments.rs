//! Every throttle runs the operation the number of times asked, and every datagram
//! arrives; the views render from real (tiny) runs; the binary refuses bad input.

use harness::machine::Machine;
use harness::record::{Provenance, Status};
use harness::{Profile, Record};
use std::time::{Duration, Instant};
use throttles::experiments::{self, SWEEP_MS};
use throttles::pacers::{Pacer, Run};

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

fn record(experiment: &str, data: serde_json::Value) -> Record {
    Record {
        chapter: "throttles".into(),
        experiment: experiment.into(),
        key: "test".into(),
        profile: Profile::Quick,
        provenance: Provenance {
            machine: Machine::current(),
            measured_at: "now".into(),
        },
        params: vec![],
        status: Status::Ok,
        notes: vec![],
        wall_s: 0.0,
        data,
    }
}

fn view(kind: harness::ViewKind, name: &str) -> &'static harness::View {
    throttles::CHAPTER.view(kind, name).expect("view exists")
}

#[test]
fn tiny_runs_go_through_and_every_view_renders() {
    use harness::ViewKind::{Plot, Table};
    let far = Instant::now() + Duration::from_secs(30);

    let sweep = experiments::sleep_sweep(&SWEEP_MS[..2], 3, far, || {});
    assert_eq!(sweep.rounds_done, 3);
    assert!(sweep.rows.iter().all(|r| r.actual.n == 3));
    // A sleep never returns early.
    assert!(
        sweep
            .rows
            .iter()
            .all(|r| r.actual.mean >= r.requested_ms as f64 * 1e6)
    );
    let md = (view(Table, "sweep").render)(&record(
        "sleep-sweep",
        serde_json::to_value(&sweep).unwrap(),
    ))
    .unwrap();
    assert!(md.contains("| 1 |") && md.contains("1.995 ms"), "{md}");

    let naive = experiments::naive_loop(2, 5, far, || {}).unwrap();
    assert_eq!(naive.iterations_done, 2);
    assert_eq!(naive.datagrams_sent, 10);
    assert_eq!(naive.datagrams_received, 10);
    let md = (view(Table, "naive").render)(&record("naive", serde_json::to_value(&naive).unwrap()))
        .unwrap();
    assert!(md.contains("1.994 ms"), "{md}");

    let mut runs = Vec::new();
    for pacer in Pacer::ALL {
        for rate in experiments::TARGET_RATES {
            // A few operations per run: enough to render, quick to run.
            let r = experiments::measure_rate(pacer, rate, 4.0 / rate, far).unwrap();
            assert_eq!(r.ran, r.asked, "{pacer:?} at {rate}");
            assert_eq!(
                r.datagrams_received + r.send_errors,
                r.ran,
                "{pacer:?} at {rate}"
            );
            runs.push(r);
        }
    }
    let rates = record(
        "rates",
        serde_json::to_value(experiments::RatesData {
            seconds_per_run: 0.0,
            runs,
        })
        .unwrap(),
    );
    for name in ["achieved", "jitter"] {
        let md = (view(Table, name).render)(&rates).unwrap();
        assert!(md.contains("deadline Throttle"), "{md}");
    }
    for name in ["achieved", "gaps-1k", "gaps-10k"] {
        let svg = (view(Plot, name).render)(&rates).unwrap();
        assert!(svg.starts_with("<svg"), "{name}");
    }

    let om =
        experiments::coordinated_omission(2_000.0, 200, 50, Duration::from_millis(5), far).unwrap();
    assert_eq!(om.requests, 200);
    assert_eq!(om.lost, 0);
    assert_eq!(om.served, 200);
    assert_eq!(om.from_send.as_ref().unwrap().n, 200);
    // Latency from the intended send includes every stall in full.
    assert!(om.from_intent.as_ref().unwrap().max >= 5e6);
    let rec = record("omission", serde_json::to_value(&om).unwrap());
    let md = (view(Table, "omission").render)(&rec).unwrap();
    assert!(md.contains("record_correct"), "{md}");
    assert!(
        (view(Plot, "omission").render)(&rec)
            .unwrap()
            .starts_with("<svg")
    );
}

#[test]
fn a_record_of_the_wrong_shape_is_a_clear_error() {
    let md = (view(harness::ViewKind::Table, "jitter").render)(&record(
        "rates",
        serde_json::json!({"x": 1}),
    ));
    assert!(md.unwrap_err().to_string().contains("make regenerate"));
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
fn the_binary_refuses_bad_rates_and_names() {
    for (rate, expect) in [
        ("0", "not positive"),
        ("-3", "not positive"),
        ("NaN", "not a finite number"),
        ("1e300", "nanosecond"),
        ("fast", "not a number"),
    ] {
        let out = bin(&["pace", rate]);
        assert_eq!(out.status.code(), Some(2), "{rate}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{rate}: {err}");
    }
    let out = bin(&["pace", "2000", "10"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("achieved"));
    let out = bin(&["table", "nonsense"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sweep") && err.contains("jitter"), "{err}");
}
