//! Correctness of the chapter's building blocks: counts, errors, the OS wrappers and
//! the views. Nothing here asserts speed; the only time checks are lower bounds (a
//! sleep never returns before it was asked to).

use short_sleeps::*;
use std::cell::Cell;
use std::io;
use std::time::{Duration, Instant};

#[test]
fn per_call_makes_exactly_the_calls_asked_for() {
    let count = Cell::new(0u32);
    let s = per_call(3_000, || {
        count.set(count.get() + 1);
        Ok(())
    })
    .unwrap();
    assert_eq!(count.get(), 3_000);
    assert!(s.ns >= 0.0 && s.ns.is_finite());
}

#[test]
fn per_call_stops_at_the_first_error_and_returns_it() {
    let count = Cell::new(0u32);
    let err = per_call(100, || {
        count.set(count.get() + 1);
        if count.get() == 7 {
            Err(io::Error::other("seventh call failed"))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert_eq!(count.get(), 7);
    assert!(err.to_string().contains("seventh"), "{err}");
}

#[test]
fn every_variant_runs_a_few_calls() {
    for v in VARIANTS {
        let n = if v.slow { 2 } else { 5 };
        let s = (v.run)(n).unwrap_or_else(|e| panic!("{} failed: {e}", v.id));
        assert!(s.ns.is_finite() && s.ns >= 0.0, "{}: {s:?}", v.id);
    }
}

#[test]
fn tokio_sleep_waits_at_least_what_was_asked() {
    let start = Instant::now();
    tokio_sleep(3, Duration::from_millis(1)).unwrap();
    assert!(start.elapsed() >= Duration::from_millis(3));
}

#[test]
fn hybrid_sleep_never_returns_early() {
    for request in [Duration::from_micros(1), Duration::from_micros(300)] {
        for margin in [Duration::from_micros(10), Duration::from_millis(1)] {
            let start = Instant::now();
            hybrid_sleep(request, margin);
            assert!(start.elapsed() >= request);
        }
    }
    let m = calibrate_margin();
    assert!(m >= Duration::from_micros(10) && m <= Duration::from_micros(500));
}

#[test]
fn sweep_requests_span_1us_to_10ms() {
    let r = sweep_requests();
    assert_eq!(r.first(), Some(&Duration::from_micros(1)));
    assert_eq!(r.last(), Some(&Duration::from_millis(10)));
    assert_eq!(r.len(), 13);
    assert!(r.windows(2).all(|w| w[0] < w[1]));
    let budget = Duration::from_millis(30);
    assert_eq!(sweep_count(Duration::from_micros(1), budget, 20, 300), 300);
    assert_eq!(sweep_count(Duration::from_millis(10), budget, 20, 300), 20);
    assert_eq!(sweep_count(Duration::from_millis(1), budget, 20, 300), 30);
    assert_eq!(sweep_count(Duration::ZERO, budget, 20, 300), 300);
}

#[cfg(unix)]
mod unix {
    use super::*;

    #[test]
    fn posix_sleeps_last_at_least_the_request() {
        let d = Duration::from_micros(200);
        for (name, f) in [
            ("nanosleep", os::nanosleep as fn(Duration) -> io::Result<()>),
            ("pselect", os::pselect),
        ] {
            let start = Instant::now();
            f(d).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(start.elapsed() >= d, "{name}");
        }
        os::nanosleep(Duration::ZERO).unwrap();
        os::pselect(Duration::ZERO).unwrap();
        os::sched_yield().unwrap();
    }

    #[test]
    fn an_unrepresentable_duration_is_an_error_not_a_panic() {
        let err = os::nanosleep(Duration::MAX).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(os::pselect(Duration::MAX).is_err());
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;

    #[test]
    fn clock_nanosleep_lasts_at_least_the_request() {
        let d = Duration::from_micros(200);
        let start = Instant::now();
        os::clock_nanosleep(d).unwrap();
        assert!(start.elapsed() >= d);
    }

    #[test]
    fn timerfd_one_shot_fires_once_and_then_refuses_to_block_forever() {
        let t = os::TimerFd::new().unwrap();
        let d = Duration::from_millis(1);
        let start = Instant::now();
        t.set_oneshot(d).unwrap();
        assert_eq!(t.wait().unwrap(), 1);
        assert!(start.elapsed() >= d);
        let err = t.wait().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("not armed"), "{err}");
        // Re-arming makes it usable again.
        t.set_oneshot(Duration::from_nanos(1)).unwrap();
        assert_eq!(t.wait().unwrap(), 1);
    }

    #[test]
    fn timerfd_rejects_zero_which_would_disarm_it() {
        let t = os::TimerFd::new().unwrap();
        for r in [
            t.set_oneshot(Duration::ZERO),
            t.set_interval(Duration::ZERO),
        ] {
            let err = r.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
            assert!(err.to_string().contains("zero"), "{err}");
        }
        assert!(t.wait().is_err(), "a never-armed timer must not block");
    }

    #[test]
    fn timerfd_interval_keeps_firing_and_counts_expirations() {
        let t = os::TimerFd::new().unwrap();
        t.set_interval(Duration::from_micros(100)).unwrap();
        let start = Instant::now();
        let mut total = 0;
        for _ in 0..5 {
            let n = t.wait().unwrap();
            assert!(n >= 1);
            total += n;
        }
        // Expirations cannot outrun the clock.
        let possible = start.elapsed().as_micros() as u64 / 100 + 2;
        assert!(total <= possible, "{total} > {possible}");
    }

    #[test]
    fn slack_guard_sets_restores_and_is_per_thread() {
        let before = os::timer_slack().unwrap();
        assert!(os::proc_timer_slack().is_ok());
        {
            let _g = os::SlackGuard::set(1).unwrap();
            assert_eq!(os::timer_slack().unwrap(), 1);
            let other = std::thread::spawn(|| os::timer_slack().unwrap());
            // A new thread inherits the slack at creation: 1 here.
            assert_eq!(other.join().unwrap(), 1);
            with_min_slack(|| {
                assert_eq!(os::timer_slack().unwrap(), 1);
                Ok(())
            })
            .unwrap();
            assert_eq!(os::timer_slack().unwrap(), 1);
        }
        assert_eq!(os::timer_slack().unwrap(), before);
        // A thread started before the change keeps its own value.
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            go_rx.recv().unwrap();
            tx.send(os::timer_slack().unwrap()).unwrap();
        });
        let g = os::SlackGuard::set(1).unwrap();
        go_tx.send(()).unwrap();
        assert_eq!(rx.recv().unwrap(), before);
        h.join().unwrap();
        drop(g);
        let err = os::SlackGuard::set(0).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(os::timer_slack().unwrap(), before);
    }
}

mod views {
    use super::*;
    use harness::record::{Provenance, Status};
    use harness::{Profile, Record};

    fn record(experiment: &str, data: serde_json::Value) -> Record {
        Record {
            chapter: "short-sleeps".into(),
            experiment: experiment.into(),
            key: "test".into(),
            profile: Profile::Quick,
            provenance: Provenance {
                machine: harness::machine::Machine::current(),
                measured_at: "now".into(),
            },
            params: vec![],
            status: Status::Ok,
            notes: vec![],
            wall_s: 0.0,
            data,
        }
    }

    fn row(id: &str, slack: Slack, mean: f64, error: Option<&str>) -> CallRow {
        CallRow {
            id: id.into(),
            label: format!("`{id}`"),
            arg: Arg::OneNs,
            slack,
            sleeps: true,
            calls: 3_000,
            per_call: error.is_none().then_some(harness::MeanCi {
                n: 20,
                mean,
                stddev: 1.0,
                half_width: 0.5,
            }),
            cpu_per_call: None,
            voluntary_per_call: Some(1.0),
            involuntary_per_call: None,
            error: error.map(String::from),
        }
    }

    fn calls_record() -> Record {
        let data = CallsData {
            calls: 3_000,
            slow_calls: 100,
            reps_planned: 20,
            reps_done: 20,
            thread_slack_ns: Some(50_000),
            proc_slack_ns: Some(50_000),
            rows: vec![
                row("nanosleep-1ns", Slack::Default, 80_000.0, None),
                row("nanosleep-1ns", Slack::OneNs, 10_000.0, None),
                row(
                    "timerfd-reuse-1ns",
                    Slack::Default,
                    0.0,
                    Some("no timerfd here"),
                ),
            ],
        };
        record("calls", serde_json::to_value(data).unwrap())
    }

    fn view(name: &str) -> &'static harness::View {
        CHAPTER.views.iter().find(|v| v.name == name).unwrap()
    }

    #[test]
    fn calls_table_shows_every_row_and_errors() {
        let md = (view("calls").render)(&calls_record()).unwrap();
        assert!(
            md.contains("| `nanosleep-1ns` | 1 ns | 3,000 × 20 | 80.0 µs ± 0.500 ns |"),
            "{md}"
        );
        assert!(md.contains("unavailable: no timerfd here"), "{md}");
        // Only the default-slack rows.
        assert_eq!(md.matches("`nanosleep-1ns`").count(), 1, "{md}");
    }

    #[test]
    fn slack_table_pairs_default_and_minimum() {
        let md = (view("slack").render)(&calls_record()).unwrap();
        if cfg!(target_os = "linux") {
            assert!(md.contains("default slack (50.0 µs)"), "{md}");
            assert!(
                md.contains("80.0 µs ± 0.500 ns | 10.0 µs ± 0.500 ns | 8.00× |"),
                "{md}"
            );
        } else {
            assert!(md.contains("Linux"), "{md}");
        }
    }

    #[test]
    fn reference_table_names_the_source_and_machines() {
        let md = (view("reference").render)(&calls_record()).unwrap();
        assert!(md.contains("Daniel Schemmel"), "{md}");
        assert!(md.contains("X5680") && md.contains("MacBook Pro"), "{md}");
        // Linux 4.1 nanosleep(1 ns): 498 693 ns published.
        assert!(md.contains("499 µs ± 353 ns"), "{md}");
        // The ground truth was published per 3,000 calls: 604 / 3000 ns.
        assert!(md.contains("0.201 ns"), "{md}");
    }

    #[test]
    fn reference_ids_name_variants_of_this_os() {
        let refs = short_sleeps::views::reference_data().unwrap();
        let os = short_sleeps::views::this_os().unwrap();
        for r in &refs.rows {
            let measured_on_this_os = match os {
                "linux" => r.linux.is_some(),
                "macos" => r.macos.is_some(),
                _ => r.windows.is_some(),
            };
            let exists = VARIANTS.iter().any(|v| v.id == r.id);
            // Rows with no counterpart here are the write-up's extra C++ overloads.
            if measured_on_this_os && !exists {
                assert!(
                    r.id.contains("0ms"),
                    "reference row {} has no variant",
                    r.id
                );
            }
        }
    }

    #[test]
    fn sweep_views_render_and_refuse_empty_data() {
        let s = harness::Summary::of(&[1_000.0, 2_000.0, 3_000.0]).unwrap();
        let data = SweepData {
            margin_ns: 50_000.0,
            points: vec![
                SweepPoint {
                    mode: Mode::Sleep,
                    request_ns: 1_000.0,
                    actual: s.clone(),
                    cpu_ns: None,
                },
                SweepPoint {
                    mode: Mode::Hybrid,
                    request_ns: 1_000.0,
                    actual: s.clone(),
                    cpu_ns: Some(900.0),
                },
                SweepPoint {
                    mode: Mode::Sleep,
                    request_ns: 10_000.0,
                    actual: s,
                    cpu_ns: None,
                },
            ],
        };
        let r = record("sweep", serde_json::to_value(data).unwrap());
        let md = (view("sweep").render)(&r).unwrap();
        assert!(md.contains("| 1.00 µs | 2.00 µs / 3.00 µs |"), "{md}");
        assert!(md.contains("900 ns"), "{md}");
        for p in ["sweep-mean", "sweep-p99"] {
            let svg = (view(p).render)(&r).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("requested (ideal)"));
        }
        let empty = record(
            "sweep",
            serde_json::to_value(SweepData {
                margin_ns: 0.0,
                points: vec![],
            })
            .unwrap(),
        );
        assert!((view("sweep-mean").render)(&empty).is_err());
        let wrong = record("sweep", serde_json::json!({"nonsense": 1}));
        let err = (view("sweep").render)(&wrong).unwrap_err().to_string();
        assert!(err.contains("expected shape"), "{err}");
    }
}
