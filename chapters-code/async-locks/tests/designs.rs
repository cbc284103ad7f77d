//! Correctness of the chapter's designs and views. Nothing here asserts speed.

use async_locks::designs::{Design, Flavour, extended_timeout, run_design};
use async_locks::timeout::Timeout;
use async_locks::{CHAPTER, DesignResult, DesignsData, SweepData};
use harness::{Profile, ViewKind};
use std::time::{Duration, Instant};

fn far() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

#[test]
fn every_design_handles_exactly_n_expiries_on_both_runtimes() {
    let (n, after) = (300, Duration::from_millis(5));
    for flavour in Flavour::ALL {
        for design in Design::ALL {
            let run = run_design(design, flavour, n, after, far()).unwrap();
            let what = format!("{} on {}", design.name(), flavour.label());
            assert_eq!(run.samples.len(), n, "{what}");
            assert!(!run.stalled(), "{what}");
            for s in &run.samples {
                // A timeout never completes before its deadline, so the time from
                // its start to its handling is at least its length.
                assert!(s.elapsed >= after, "{what}: {:?}", s.elapsed);
                assert!(s.elapsed >= s.lateness, "{what}");
                assert_eq!(s.fifo_elapsed.is_some(), design.uses_queue(), "{what}");
                if !design.uses_queue() {
                    assert!(!s.mispaired, "{what}");
                }
            }
        }
    }
}

#[test]
fn the_full_size_runs_with_the_write_ups_timeout() {
    let run = run_design(
        Design::StdMutex,
        Flavour::MultiThread,
        10_000,
        async_locks::TIMEOUT,
        far(),
    )
    .unwrap();
    assert_eq!(run.samples.len(), 10_000);
    // FIFO pairing pops every start exactly once, so its mean equals the true one.
    let fifo: f64 = run
        .samples
        .iter()
        .map(|s| s.fifo_elapsed.unwrap().as_secs_f64())
        .sum();
    let own: f64 = run.samples.iter().map(|s| s.elapsed.as_secs_f64()).sum();
    assert!((fifo - own).abs() / own < 1e-9, "{fifo} vs {own}");
}

#[test]
fn zero_timeouts_is_a_clear_error() {
    let err = run_design(
        Design::Fix,
        Flavour::CurrentThread,
        0,
        Duration::ZERO,
        far(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("at least 1"), "{err}");
}

#[test]
fn unknown_design_names_list_the_valid_ones() {
    assert_eq!(Design::parse("two-runtimes").unwrap(), Design::TwoRuntimes);
    let err = Design::parse("spinlock").unwrap_err().to_string();
    for d in Design::ALL {
        assert!(err.contains(d.name()), "{err}");
    }
}

#[test]
fn a_stalled_design_is_reported_not_hung() {
    // The handler gives up long before the timeouts are due.
    let give_up = Instant::now() + Duration::from_millis(20);
    for design in [
        Design::TokioMutexCap1,
        Design::TwoRuntimes,
        Design::Fix,
        Design::StdMutex,
    ] {
        let run = run_design(
            design,
            Flavour::MultiThread,
            50,
            Duration::from_millis(400),
            give_up,
        )
        .unwrap();
        assert!(run.stalled(), "{}", design.name());
        assert!(run.samples.len() < 50);
    }
}

#[test]
fn extended_timeout_fires_inside_the_write_ups_window() {
    let rt = Flavour::CurrentThread.runtime().unwrap();
    let (twenty, low, high) = (
        Duration::from_millis(20),
        Duration::from_millis(36),
        Duration::from_millis(44),
    );
    // Never early, on any attempt; inside the window on at least one of a few
    // attempts (a loaded machine may delay one now and then).
    let mut inside = false;
    for _ in 0..5 {
        let fired = rt.block_on(extended_timeout(twenty, twenty));
        assert!(fired >= 2 * twenty, "fired early: {fired:?}");
        inside |= fired > low && fired < high;
        if inside {
            break;
        }
    }
    assert!(inside, "no attempt fired within (36, 44) ms");
}

#[test]
fn an_extension_made_while_waiting_is_followed() {
    let rt = Flavour::MultiThread.runtime().unwrap();
    rt.block_on(async {
        let timeout = Timeout::new(Duration::from_millis(10));
        let first = timeout.deadline();
        let other = timeout.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(2)).await;
            other.extend(Duration::from_millis(30));
        });
        timeout.expire().await;
        assert_eq!(timeout.deadline(), first + Duration::from_millis(30));
        assert!(Instant::now() >= timeout.deadline());
    });
}

#[test]
fn reference_numbers_parse_and_name_known_designs() {
    let r = async_locks::reference_data().unwrap();
    assert_eq!(r.designs.len(), 3);
    assert!(
        r.designs
            .iter()
            .all(|d| d.n == 10_000 && d.timeout_ms == 20.0)
    );
}

#[test]
fn bad_cli_names_fail() {
    for args in [
        vec!["async-locks", "table", "no-such-table"],
        vec!["async-locks", "plot", "designs"],
        vec!["async-locks", "run", "--only", "nope"],
    ] {
        let code = harness::cli::main_from(&CHAPTER, args.clone());
        assert_ne!(code, std::process::ExitCode::SUCCESS, "{args:?}");
    }
}

#[test]
fn every_view_renders_from_small_runs() {
    let after = Duration::from_millis(2);
    let mut results = Vec::new();
    let mut sweep = Vec::new();
    for flavour in Flavour::ALL {
        for design in Design::ALL {
            let run = run_design(design, flavour, 20, after, far()).unwrap();
            let r = DesignResult::of(std::slice::from_ref(&run), 50).unwrap();
            assert_eq!(r.handled, 20);
            sweep.push((20, DesignResult::of(&[run], 0).unwrap()));
            results.push(r);
        }
    }
    let designs = serde_json::to_value(DesignsData {
        n: 20,
        repetitions: 1,
        results,
    })
    .unwrap();
    let sweep = serde_json::to_value(SweepData {
        ns: vec![20],
        results: sweep,
    })
    .unwrap();
    let unit = harness::experiment::measure(
        &CHAPTER,
        CHAPTER.experiment("unit-check").unwrap(),
        Profile::Quick,
    );
    assert!(unit.is_ok(), "{:?}", unit.status);
    for view in CHAPTER.views {
        let mut record = unit.clone();
        record.experiment = view.experiment.into();
        record.data = match view.experiment {
            "designs" => designs.clone(),
            "sweep" => sweep.clone(),
            _ => unit.data.clone(),
        };
        let out = (view.render)(&record).unwrap_or_else(|e| panic!("{}: {e:#}", view.name));
        match view.kind {
            ViewKind::Table => assert!(out.contains("| ---: |"), "{}: {out}", view.name),
            ViewKind::Plot => assert!(out.starts_with("<svg"), "{}", view.name),
        }
    }
}
