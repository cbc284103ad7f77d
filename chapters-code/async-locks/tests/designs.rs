//! Correctness of the chapter's designs, rounds and views. Nothing here asserts speed.

use async_locks::experiments::{DESIGNS, DesignKey, DesignRun, HAZARDS, SWEEP, UNIT_CHECK, sizes};
use async_locks::{
    CHAPTER, Design, Flavour, Hazard, Timeout, at_once, extended_timeout, late_and_idle,
    run_design, stretch,
};
use harness::experiment::AnyExperiment;
use harness::params::Override;
use harness::record::Record;
use harness::{Profile, ReadingKey, ViewKind};
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
fn fifo_pairing_keeps_the_mean_at_the_full_size() {
    for design in [Design::StdMutexTask, Design::StdMutex] {
        let run = run_design(
            design,
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
    assert_eq!(
        Design::parse("std-mutex-task").unwrap(),
        Design::StdMutexTask
    );
    let err = Design::parse("spinlock").unwrap_err().to_string();
    for d in Design::ALL {
        assert!(err.contains(d.name()), "{err}");
    }
}

#[test]
fn a_design_past_its_bound_stops_with_what_it_has() {
    // Every design gives up long before its timeouts are due, and returns promptly.
    for flavour in Flavour::ALL {
        for design in Design::ALL {
            let t0 = Instant::now();
            let give_up = t0 + Duration::from_millis(30);
            let run = run_design(design, flavour, 50, Duration::from_millis(800), give_up).unwrap();
            assert!(run.stalled(), "{} {}", design.name(), flavour.label());
            assert!(run.samples.is_empty());
            // A stopped run contributes no reading to its round.
            let stored = DesignRun::new(&run, true);
            assert!(!stored.complete() && stored.reading().is_none());
            assert!(
                t0.elapsed() < Duration::from_millis(700),
                "{} on {} took {:?} to stop",
                design.name(),
                flavour.label(),
                t0.elapsed()
            );
        }
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
fn sweep_sizes_are_powers_of_the_step_up_to_the_largest() {
    assert_eq!(sizes(1, 10), vec![1]);
    assert_eq!(sizes(1_000, 10), vec![1, 10, 100, 1_000]);
    assert_eq!(sizes(30_000, 10), vec![1, 10, 100, 1_000, 10_000, 30_000]);
    // The quick profile's two sizes.
    assert_eq!(sizes(1_000, 1_000), vec![1, 1_000]);
}

#[test]
fn bad_cli_names_fail() {
    for args in [
        vec!["async-locks", "table", "no-such-table"],
        vec!["async-locks", "plot", "designs"],
        vec!["async-locks", "run", "--only", "nope"],
        vec!["async-locks", "run", "--set", "timeouts=0"],
    ] {
        let code = harness::cli::main_from(&CHAPTER, args.clone());
        assert_ne!(code, std::process::ExitCode::SUCCESS, "{args:?}");
    }
}

#[test]
fn the_registry_is_consistent() {
    CHAPTER.check().unwrap();
    for name in [
        "design2-multi-thread-lateness-p50",
        "fix-multi-thread-lateness-p50",
        "std-mutex-multi-thread-lateness-p50",
    ] {
        assert!(CHAPTER.headline(name).is_some(), "{name}");
    }
}

/// Runs `rounds` rounds of an experiment in this process with small parameters, as
/// the harness would store them.
fn record(exp: &'static dyn AnyExperiment, sets: &[&str], rounds: u32) -> Record {
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let r = harness::runner::rounds_in_process(
        &harness::runner::Request {
            chapter: &CHAPTER,
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
    r
}

#[test]
fn rounds_give_one_reading_per_run_and_every_view_renders() {
    let small = ["timeout_ms=2", "run_bound_ms=5000"];
    let designs = record(&DESIGNS, &[&["timeouts=1200"], &small[..]].concat(), 3);
    // One reading per design and runtime, each a round's median lateness, and one for
    // the A/A twin.
    for round in &designs.rounds {
        assert_eq!(
            round.readings.len(),
            Design::ALL.len() * Flavour::ALL.len() + 1
        );
        let twin = DesignKey::TWIN.stored();
        assert!(round.readings.iter().any(|r| r.key == twin));
    }
    let design2 = DesignKey::new(Design::TokioMutexCap1, Flavour::MultiThread);
    assert!(designs.estimate(&design2.stored()).is_some());
    let sweep = record(
        &SWEEP,
        &[&["largest_timeouts=100", "step=10"], &small[..]].concat(),
        3,
    );
    assert_eq!(sweep.rounds[0].readings.len(), 7 * 2 * 3);
    let unit = record(&UNIT_CHECK, &["checks=2"], 3);
    let hazards = record(&HAZARDS, &["hazard_timeouts=4", "work_us=200"], 3);
    // Every hazard on both runtimes, every round: finished with every expiry, or
    // stalled and left behind at its bound; never a hang.
    for round in hazards.rounds.iter() {
        let runs = round.data["runs"].as_array().unwrap();
        assert_eq!(runs.len(), Hazard::ALL.len() * Flavour::ALL.len());
        for run in runs {
            let stalled = run["stalled"].as_bool().unwrap();
            assert!(stalled || run["handled"] == 4, "{run}");
            // A finished long section says which threads ran its callbacks: every
            // callback once, on no more threads than the runtime has workers.
            let per_thread: Vec<u64> = serde_json::from_value(run["per_thread"].clone()).unwrap();
            let workers = run["workers"].as_u64().unwrap();
            if !stalled && run["hazard"] != "guard-across-await" {
                assert_eq!(per_thread.iter().sum::<u64>(), 4, "{run}");
                assert!(per_thread.len() as u64 <= workers, "{run}");
                assert!(per_thread.windows(2).all(|w| w[0] >= w[1]), "{run}");
                let a = run["at_once"].as_f64().unwrap();
                assert!((1.0 - 1e-9..=workers as f64 + 1e-9).contains(&a), "{run}");
            }
            // A locking that never found the lock taken never blocked in `lock()`.
            let locks = &run["locks"];
            assert!(locks["blocked_ns"].is_u64(), "{run}");
            if locks["waited"] == 0 {
                assert_eq!(locks["blocked_ns"], 0, "{run}");
            }
        }
    }
    for view in CHAPTER.views {
        let rec = match view.experiment() {
            "designs" => &designs,
            "sweep" => &sweep,
            "hazards" => &hazards,
            _ => &unit,
        };
        let out = view
            .render(rec)
            .unwrap_or_else(|e| panic!("{}: {e:#}", view.name()));
        match view.kind() {
            ViewKind::Table => assert!(
                out.contains("| ---: |") || out.contains("\n- "),
                "{}: {out}",
                view.name()
            ),
            ViewKind::Plot => assert!(out.starts_with("<svg"), "{}", view.name()),
        }
        match view.name() {
            // The A/A twin shows up only in the designs table's self-check.
            "designs" => assert!(out.contains("Self-check (A/A)"), "{out}"),
            "cost" | "waits" | "flavours" => {
                assert!(!out.contains("A/A"), "{}: {out}", view.name())
            }
            _ => {}
        }
    }
    // The decision table: every finding reads a figure from these records.
    let answer =
        harness::answer::chapter_answer(CHAPTER.findings, &[designs.clone(), hazards.clone()]);
    assert!(answer.contains("cow-answer"), "{answer}");
    assert!(!answer.contains("no figure"), "{answer}");
}

#[test]
fn reference_data_parses_and_names_known_designs() {
    let r = async_locks::views::reference().unwrap();
    assert_eq!(r.designs.len(), 3);
    assert!(
        r.designs
            .iter()
            .all(|d| d.n == 10_000 && d.timeout_ms == 20.0 && d.reported_as == "medium value")
    );
    let design1 = r
        .designs
        .iter()
        .find(|d| d.design == Design::StdMutexTask.name());
    assert_eq!(design1.map(|d| d.medium_value_ms), Some(45.1209));
    assert_eq!((r.unit_check.low_ms, r.unit_check.high_ms), (36, 44));
}

#[test]
fn at_once_is_work_over_the_time_any_worked() {
    let t = Instant::now();
    let ms = |k| t + Duration::from_millis(k);
    let near = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
    // One at a time, with a gap: 1, however long the gap.
    assert!(near(
        at_once(&[(ms(0), ms(1)), (ms(1), ms(2)), (ms(5), ms(6))]),
        1.0
    ));
    // Two side by side all along: 2.
    assert!(near(at_once(&[(ms(0), ms(2)), (ms(0), ms(2))]), 2.0));
    // Overlapped by half, in either order: 4 ms of work over 3 ms.
    assert!(near(at_once(&[(ms(1), ms(3)), (ms(0), ms(2))]), 4.0 / 3.0));
    // One inside another: 3 ms of work over 2 ms.
    assert!(near(at_once(&[(ms(0), ms(2)), (ms(0), ms(1))]), 1.5));
    assert_eq!(at_once(&[(ms(0), ms(1))]), None);
    assert_eq!(at_once(&[]), None);
}

/// What *at once* cannot see: a late first start, idle time between callbacks, and
/// work that ran over its time (the ninth review's slow control rounds).
#[test]
fn late_idle_and_stretch_are_what_at_once_leaves_out() {
    let t = Instant::now();
    let ms = |k| t + Duration::from_millis(k);
    // Due at 0, first work at 2, idle from 3 to 5: late 2 ms, idle 2 ms.
    let worked = [(ms(2), ms(3)), (ms(5), ms(6)), (ms(5), ms(6))];
    assert_eq!(
        late_and_idle(&worked, Some(ms(0))),
        Some((Duration::from_millis(2), Duration::from_millis(2)))
    );
    assert_eq!(late_and_idle(&[], Some(ms(0))), None);
    // 1 ms asked of each: on time, and one spin 2 ms long (4 ms over 3 asked).
    let one = Duration::from_millis(1);
    assert_eq!(stretch(&worked, one), Some(1.0));
    let long = [(ms(0), ms(1)), (ms(0), ms(2)), (ms(2), ms(3))];
    assert!((stretch(&long, one).unwrap() - 4.0 / 3.0).abs() < 1e-9);
    assert_eq!(stretch(&[], one), None);
}
