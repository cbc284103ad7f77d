//! Correctness of the chapter's building blocks: counts, bounds, errors, the OS
//! wrappers, whole rounds and every view. Nothing here asserts speed; the only time
//! checks are lower bounds (a sleep never returns before it was asked to) and bounds
//! that must hold (a loop or a point stops at its limit).

use harness::params::Override;
use harness::record::Record;
use harness::{AnyExperiment, Profile, ReadingKey, ViewKind};
use short_sleeps::experiments::{
    CALLS_EXP, MS_EXP, SWEEP_EXP, SweepKey, YIELD_EXP, YieldKey, ms_plan, plan,
};
use short_sleeps::*;
use std::cell::Cell;
use std::io;
use std::time::{Duration, Instant};

#[test]
fn per_call_makes_exactly_the_calls_asked_for() {
    let count = Cell::new(0u32);
    let s = per_call(3_000, false, || {
        count.set(count.get() + 1);
        Ok(())
    })
    .unwrap();
    assert_eq!(count.get(), 3_000);
    assert_eq!(s.calls, 3_000);
    assert!(s.ns >= 0.0 && s.ns.is_finite());
}

/// A loop of calls that take milliseconds times each call too: its sample holds their
/// median, which is the round's figure, and lies within the loop's whole window. A fast
/// loop times none and keeps its mean.
#[test]
fn a_slow_loop_times_each_call_and_a_fast_one_none() {
    let slow = run_loop(Call::StdSleep(MS1), 3).unwrap();
    let median = slow.median_ns.expect("a 1 ms sleep is timed call by call");
    assert!(median >= 1e6 && median <= slow.ns * 3.0, "{slow:?}");
    assert_eq!(slow.figure(), median);
    let fast = run_loop(Call::StdSleep(ZERO), 10).unwrap();
    assert_eq!((fast.median_ns, fast.figure()), (None, fast.ns));
    let tokio = tokio_sleep(2, MS1).unwrap();
    assert!(tokio.median_ns.is_some_and(|m| m >= 1e6), "{tokio:?}");
}

#[test]
fn a_loops_cpu_time_fits_in_the_wall_time_around_its_bracket() {
    // The wall clock is read inside the CPU clock (so the timed window holds no
    // CPU-clock read); the CPU time can exceed the inner window, never the outer one.
    for calls in [1, 10, 1_000] {
        let outer = Instant::now();
        let s = per_call(calls, false, || Ok(())).unwrap();
        let outer = outer.elapsed().as_nanos() as f64;
        if let Some(cpu) = s.cpu_ns {
            assert!(cpu * f64::from(calls) <= outer, "{calls} calls: {s:?}");
        }
        assert!(s.ns * f64::from(calls) <= outer, "{calls} calls: {s:?}");
    }
}

#[test]
fn clock_read_costs_are_positive_where_the_clocks_exist() {
    let (wall, cpu) = clock_read_costs(3, 10);
    assert!(wall.is_finite() && wall >= 0.0);
    assert_eq!(cpu.is_some(), harness::thread_cpu_time().is_some());
}

#[cfg(target_os = "linux")]
#[test]
fn every_timed_sleep_says_whether_it_blocked() {
    let far = Instant::now() + Duration::from_secs(10);
    let t = timed_sleeps(Mode::Sleep, Duration::from_millis(1), MS1, 3, far).unwrap();
    // A millisecond's sleep puts the thread to sleep: one voluntary switch at least.
    assert!(t.sleeps.iter().all(|x| x.blocked == Some(true)), "{t:?}");
    assert_eq!(blocked_since(None), None);
}

#[cfg(target_os = "linux")]
#[test]
fn one_cpu_runs_the_loop_there_with_the_busy_thread_and_restores_the_mask() {
    fn allowed() -> usize {
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(unsafe { libc::sched_getaffinity(0, size, &mut set) }, 0);
        unsafe { libc::CPU_COUNT(&set) as usize }
    }
    let before = allowed();
    for busy in [false, true] {
        let (n, s) = on_one_cpu(busy, || Ok((allowed(), run_loop(Call::SchedYield, 3)?))).unwrap();
        assert_eq!((n, s.calls), (1, 3), "pinned to one CPU while it ran");
        assert_eq!(allowed(), before, "the old mask is back");
    }
}

#[test]
fn per_call_stops_at_the_first_error_and_returns_it() {
    let count = Cell::new(0u32);
    let err = per_call(100, false, || {
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
        let n = if v.call.slow() { 2 } else { 5 };
        let s = run_loop(v.call, n).unwrap_or_else(|e| panic!("{} failed: {e}", v.id));
        assert_eq!(s.calls, n, "{}", v.id);
        assert!(s.ns.is_finite() && s.ns >= 0.0, "{}: {s:?}", v.id);
    }
}

#[test]
fn a_loop_that_would_outrun_its_bound_makes_fewer_calls() {
    // 1,000 sleeps of 1 ms cannot fit in 30 ms: the probe sees it and the loop shrinks.
    let start = Instant::now();
    let s = bounded_loop(Call::StdSleep(MS1), None, 1_000, Duration::from_millis(30)).unwrap();
    assert!(s.calls >= 1 && s.calls <= 30, "{s:?}");
    assert!(start.elapsed() < Duration::from_millis(500));
    // A loop that fits makes every call.
    let s = bounded_loop(Call::Nothing, None, 1_000, Duration::from_secs(1)).unwrap();
    assert_eq!(s.calls, 1_000);
}

#[test]
fn tokio_sleep_waits_at_least_what_was_asked() {
    let start = Instant::now();
    let s = tokio_sleep(3, MS1).unwrap();
    assert!(start.elapsed() >= Duration::from_millis(3));
    assert!(s.ns >= 1e6, "{s:?}");
}

#[test]
fn hybrid_sleep_never_returns_early() {
    for request in [Duration::from_micros(1), Duration::from_micros(300)] {
        for margin in [Duration::from_micros(10), MS1] {
            let start = Instant::now();
            let spun = hybrid_sleep(request, margin);
            assert!(start.elapsed() >= request);
            assert!(spun <= request, "{spun:?} spun for {request:?}");
        }
    }
    let m = calibrate_margin();
    assert!(m >= Duration::from_micros(10) && m <= Duration::from_micros(500));
}

#[test]
fn timed_sleeps_are_never_early_and_stop_at_their_bound() {
    let request = Duration::from_micros(200);
    let far = Instant::now() + Duration::from_secs(10);
    for &mode in Mode::available() {
        let t = timed_sleeps(mode, request, Duration::from_micros(50), 4, far).unwrap();
        assert_eq!(t.sleeps.len(), 4, "{mode:?}");
        assert!(
            t.sleeps.iter().all(|x| x.actual >= request),
            "{mode:?}: {t:?}"
        );
        // Only the hybrid sleeper spins, and never longer than its margin here.
        let spun = t.sleeps.iter().map(|x| x.spun);
        if mode == Mode::Hybrid {
            assert!(
                spun.clone().all(|x| x.is_some_and(|d| d <= request)),
                "{t:?}"
            );
        } else {
            assert!(spun.clone().all(|x| x.is_none()), "{t:?}");
        }
    }
    let now = Instant::now();
    let t = timed_sleeps(Mode::Sleep, request, request, 1_000, now).unwrap();
    assert!(t.sleeps.is_empty(), "a bound already past takes no sleep");
}

#[test]
fn sweep_requests_span_1us_to_10ms() {
    let r = sweep_requests();
    assert_eq!(r.first(), Some(&Duration::from_micros(1)));
    assert_eq!(r.last(), Some(&Duration::from_millis(10)));
    assert_eq!(r.len(), 13);
    assert!(r.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn the_registry_is_consistent_and_headlines_name_planned_readings() {
    CHAPTER.check().unwrap();
    let keys: Vec<String> = plan().iter().map(|c| c.key(1).stored()).collect();
    // The calls experiment's headlines read its planned calls; the sweep's headline (a
    // 1 ms sleep's lateness) is checked with the sweep's own keys below.
    for h in CHAPTER
        .headlines
        .iter()
        .filter(|h| h.experiment == CALLS_EXP.name())
    {
        let reading = h.reading.stored();
        let here = keys.contains(&reading);
        // Linux gives every headline; macOS all but the low-slack one (timer slack is
        // Linux-only); Windows has neither nanosleep nor sched_yield.
        let expected = if cfg!(target_os = "linux") {
            true
        } else if cfg!(unix) {
            !reading.contains("slack")
        } else {
            false
        };
        assert_eq!(here, expected, "{} reads `{reading}`", h.name);
    }
    let points: Vec<String> = Mode::available()
        .iter()
        .flat_map(|&m| {
            sweep_requests()
                .into_iter()
                .map(move |q| SweepKey::late(m, q.as_nanos() as u64, 1).stored())
        })
        .collect();
    for h in CHAPTER
        .headlines
        .iter()
        .filter(|h| h.experiment == SWEEP_EXP.name())
    {
        let reading = h.reading.stored();
        assert!(
            points.contains(&reading),
            "{} reads `{reading}`, which is no sweep point",
            h.name
        );
    }
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
        assert!(os::context_switches().is_some());
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
        let d = MS1;
        let start = Instant::now();
        t.set_oneshot(d).unwrap();
        assert_eq!(t.wait().unwrap(), 1);
        assert!(start.elapsed() >= d);
        let err = t.wait().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("not armed"), "{err}");
        // Re-arming makes it usable again.
        t.set_oneshot(NS1).unwrap();
        assert_eq!(t.wait().unwrap(), 1);
    }

    #[test]
    fn timerfd_rejects_zero_which_would_disarm_it() {
        let t = os::TimerFd::new().unwrap();
        for r in [t.set_oneshot(ZERO), t.set_interval(ZERO)] {
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
            with_slack(7, || {
                assert_eq!(os::timer_slack().unwrap(), 7);
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

    #[test]
    fn a_low_slack_loop_runs_with_that_slack_and_restores_it() {
        let before = os::timer_slack().unwrap();
        let s = bounded_loop(Call::Nanosleep(NS1), Some(1), 20, Duration::from_secs(1)).unwrap();
        assert_eq!(s.calls, 20);
        assert_eq!(os::timer_slack().unwrap(), before);
    }
}

/// Runs `rounds` rounds of `exp` in this process with small sizes, as the harness
/// would in workers, and stores them in a record the views can read.
fn record_of(exp: &'static dyn AnyExperiment, overrides: &[&str], rounds: u32) -> Record {
    let ov: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    let r = harness::runner::rounds_in_process(
        &harness::runner::Request {
            chapter: &short_sleeps::CHAPTER,
            experiment: exp,
            profile: Profile::Quick,
            overrides: &ov,
            mode: harness::runner::Mode::InProcess,
        },
        rounds,
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!(r.rounds.len() as u32, rounds, "{:?}", r.status);
    r
}

fn render(name: &str, kind: ViewKind, r: &Record) -> anyhow::Result<String> {
    CHAPTER.view(kind, name).unwrap().render(r)
}

#[test]
fn calls_rounds_read_one_value_per_cell_and_every_view_renders() {
    let r = record_of(&CALLS_EXP, &["calls=20", "slow_calls=2"], 3);
    let cells = plan().len();
    for round in &r.rounds {
        assert_eq!(
            round.readings.len(),
            cells,
            "one reading per (variant, slack)"
        );
    }
    assert!(
        r.notes.iter().all(|n| n.kind != harness::NoteKind::Limit),
        "{:?}",
        r.notes
    );
    let md = render("calls", ViewKind::Table, &r).unwrap();
    let family = if cfg!(windows) {
        "windows"
    } else if cfg!(target_os = "linux") {
        "linux"
    } else {
        "macos"
    };
    let rows = short_sleeps::views::other_rows(family);
    for v in VARIANTS {
        let key = short_sleeps::experiments::CallsKey::of(v.call);
        let row = rows.iter().find(|r| r.key == key).unwrap();
        assert!(md.contains(&format!("| {} |", row.label)), "{md}");
    }
    assert!(
        md.contains("loop of every call: 20 calls, or 2 for"),
        "{md}"
    );
    let slack = render("slack", ViewKind::Table, &r).unwrap();
    if cfg!(target_os = "linux") {
        assert!(slack.contains("| nanosleep(1 ns) |"), "{slack}");
        assert!(slack.contains("default slack (50 µs)") || slack.contains("default slack ("));
    } else {
        assert!(slack.contains("Linux"), "{slack}");
    }
    // The write-up's figure for this system's kind beside yours.
    assert!(
        md.contains("Daniel Schemmel") && md.contains("our reading"),
        "{md}"
    );
    let nanosleep = md.lines().find(|l| l.starts_with("| nanosleep(1 ns) |"));
    if cfg!(target_os = "linux") {
        assert!(
            nanosleep
                .unwrap()
                .starts_with("| nanosleep(1 ns) | 498,693 ± 353 | "),
            "{md}"
        );
    } else if cfg!(unix) {
        assert!(
            nanosleep
                .unwrap()
                .starts_with("| nanosleep(1 ns) | 14,831 ± 234 | "),
            "{md}"
        );
    }
    assert_eq!(md.contains("| Sleep(1) |"), cfg!(windows), "{md}");
}

#[test]
fn sweep_rounds_read_every_point_and_every_view_renders() {
    let r = record_of(&SWEEP_EXP, &["sleeps=4", "min_sleeps=1", "point_ms=1"], 3);
    let points = sweep_requests().len() * Mode::available().len();
    let keys: Vec<String> = sweep_requests()
        .into_iter()
        .flat_map(|q| {
            Mode::available()
                .iter()
                .map(move |&m| SweepKey::late(m, q.as_nanos() as u64, 1).stored())
        })
        .collect();
    for round in &r.rounds {
        assert_eq!(round.readings.len(), points);
        // One reading per point, each under its point's key (a lateness).
        for x in &round.readings {
            assert!(keys.contains(&x.key), "{}", x.key);
        }
    }
    let svg = render("sweep", ViewKind::Plot, &r).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("hybrid"),
        "{svg:.200}"
    );
    let md = render("sweep", ViewKind::Table, &r).unwrap();
    assert!(md.contains("| 1 µs |") && md.contains("| 10 ms |"), "{md}");
    let tails = render("sweep-tails", ViewKind::Table, &r).unwrap();
    // 3 rounds of at most 4 sleeps: far from 1,000, so every row shows the max.
    assert!(
        tails.contains("| 1 µs · max |") && !tails.contains("p99 |"),
        "{tails}"
    );
    let cpu = render("sweep-cpu", ViewKind::Table, &r).unwrap();
    assert!(
        cpu.contains("| hybrid |") && cpu.contains("margin"),
        "{cpu}"
    );
}

#[test]
fn yield_rounds_read_six_loops_and_the_view_renders() {
    let r = record_of(&YIELD_EXP, &["yield_calls=3"], 2);
    let md = render("yield", ViewKind::Table, &r).unwrap();
    if cfg!(target_os = "linux") {
        for round in &r.rounds {
            assert_eq!(
                round.readings.len(),
                6,
                "two yields and a 1 ns sleep, alone and beside a busy thread"
            );
        }
        assert!(md.contains("| sched_yield() |"), "{md}");
        assert!(md.contains("| pselect(0) |"), "{md}");
        assert!(md.contains("| thread::sleep(1 ns) |"), "{md}");
        assert!(md.contains("| busy ÷ alone |"), "{md}");
        let alone = YieldKey {
            call: Call::Pselect(ZERO),
            busy: false,
        };
        assert_eq!(alone.stored(), "pselect(0) · alone on its CPU");
        assert!(
            r.rounds
                .iter()
                .all(|x| x.readings.iter().any(|y| y.key == alone.stored()))
        );
    } else {
        assert!(md.contains("Linux only"), "{md}");
    }
}

#[test]
fn sweep_rows_show_the_share_that_blocked() {
    let r = record_of(&SWEEP_EXP, &["sleeps=2", "min_sleeps=1", "point_ms=1"], 1);
    let md = render("sweep", ViewKind::Table, &r).unwrap();
    let row = md.lines().find(|l| l.starts_with("| 10 ms |")).unwrap();
    if cfg!(target_os = "linux") {
        // A 10 ms sleep blocks in every mode that sleeps natively.
        // (The separator may break there on a page: it is marked to.)
        assert!(row.contains("> · </span>100 %"), "{row}");
    }
}

#[test]
fn tokio_readings_predict_what_the_source_says() {
    let ms = |x: f64| x * 1e6;
    let close = |a: f64, b: f64| (a - b).abs() < 1.0;
    // A 1 ms sleep begun 0.3 ms into a tick: the deadline (1.3) rounds up to tick 2.
    let (next, whole) = tick_models(ms(1.0), ms(0.3));
    assert!(
        close(next, ms(0.7)) && close(whole, ms(1.0)),
        "{next} {whole}"
    );
    // Whole ticks: the same lateness wherever a 1 ms sleep begins.
    let (_, w) = tick_models(ms(1.0), ms(0.9));
    assert!(close(w, ms(1.0)));
    // 1.5 ms: a step of a whole tick where the deadline crosses into the next tick.
    let (n, w) = tick_models(ms(1.5), ms(0.2));
    assert!(close(n, ms(0.3)) && close(w, ms(0.5)), "{n} {w}");
    let (n, w) = tick_models(ms(1.5), ms(0.7));
    assert!(close(n, ms(0.8)) && close(w, ms(1.5)), "{n} {w}");
    // Bins are tenths of a tick, named by their range, centred.
    assert_eq!(bin_centre_ns(0), 50_000);
    assert_eq!(bin_centre_ns(PHASE_BINS - 1), 950_000);
    assert_eq!(short_sleeps::experiments::bin_label(3), "0.3–0.4 ms");
}

#[test]
fn the_tick_grid_gives_phases_within_a_tick() {
    let (_rt, ticks) = timer_runtime().unwrap();
    let t = ticks.origin + Duration::from_micros(2_300);
    assert_eq!(ticks.phase_ns(t), 300_000);
    assert_eq!(ticks.phase_ns(ticks.origin), 0);
    let at = ticks.wait_for_phase(500_000);
    assert!(ticks.phase_ns(at) < TICK_NS);
}

#[test]
fn the_twin_is_one_cheap_arm_kept_out_of_the_tables() {
    let twins: Vec<_> = plan().into_iter().filter(|c| c.twin).collect();
    if cfg!(unix) {
        assert_eq!(twins.len(), 1);
        assert_eq!(twins[0].key(1).stored(), "sched_yield() (A/A twin)");
        assert!(!twins[0].variant.call.slow());
    }
    let keys: Vec<String> = plan().iter().map(|c| c.key(1).stored()).collect();
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "every arm has its own key");
}

#[test]
fn millisecond_rounds_read_every_arm_and_every_view_renders() {
    let r = record_of(&MS_EXP, &["phase_sleeps=1", "before_ms=2"], 3);
    let arms = ms_plan(2);
    assert_eq!(arms.len() as u32, 3 * PHASE_BINS + 2);
    let keys: Vec<String> = arms.iter().map(|a| a.stored()).collect();
    for round in &r.rounds {
        assert_eq!(round.readings.len(), arms.len(), "{:?}", r.notes);
        for x in &round.readings {
            assert!(keys.contains(&x.key), "{}", x.key);
        }
    }
    assert_eq!(
        arms[0].stored(),
        "tokio::time::sleep(1 ms) · begun 0.0–0.1 ms into a tick · late by"
    );
    let svg = render("tokio-phase", ViewKind::Plot, &r).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("whole ticks"),
        "{svg:.200}"
    );
    let md = render("tokio-phase", ViewKind::Table, &r).unwrap();
    assert!(
        md.contains("*whole ticks* misses") && md.contains("*next tick*"),
        "{md}"
    );
    assert!(md.contains("right after a 2 ms sleep"), "{md}");
}

#[test]
fn the_decision_table_has_a_row_per_finding_and_keeps_the_twin_out_of_the_tables() {
    let r = record_of(&CALLS_EXP, &["calls=20", "slow_calls=2"], 3);
    let md = harness::answer::chapter_answer(CHAPTER.findings, std::slice::from_ref(&r));
    assert!(
        md.contains("cow-answer") && md.contains("| situation |"),
        "{md}"
    );
    assert!(md.contains("`thread::sleep(1 ns)` took"), "{md}");
    assert!(md.contains("`tokio::time::sleep(1 ms)`"), "{md}");
    let calls = render("calls", ViewKind::Table, &r).unwrap();
    assert!(!calls.contains("A/A twin"), "{calls}");
}

#[test]
fn a_stored_result_of_another_shape_is_an_error_not_a_panic() {
    let mut r = record_of(&SWEEP_EXP, &["sleeps=1", "min_sleeps=1", "point_ms=1"], 1);
    r.rounds[0].data = serde_json::json!({"nonsense": 1});
    let err = render("sweep", ViewKind::Table, &r)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected shape"), "{err}");
}

#[test]
fn the_binary_refuses_unknown_names_with_the_valid_ones() {
    let bin = env!("CARGO_BIN_EXE_short-sleeps");
    let out = std::process::Command::new(bin)
        .args(["table", "nonsense"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("answer") && err.contains("sweep-tails"),
        "{err}"
    );
    let out = std::process::Command::new(bin)
        .arg("list")
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("calls") && s.contains("low_slack_ns"), "{s}");
}

mod reference {
    use short_sleeps::experiments::CallsKey;
    use short_sleeps::views::{fmt_ref, other_os_section, other_rows, reference_data};
    use short_sleeps::{Call, VARIANTS};
    use std::time::Duration;

    #[test]
    fn reference_data_parses_and_divides_per_loop_values() {
        let refs = reference_data().unwrap();
        let gt = refs.rows.iter().find(|r| r.id == "ground-truth").unwrap();
        let (m, ci) = gt.on("linux").unwrap().per_call();
        assert!((m - 604.0 / 3000.0).abs() < 1e-9 && (ci - 44.0 / 3000.0).abs() < 1e-9);
        assert_eq!(fmt_ref(gt.on("linux")), "0.201 ± 0.0147");
        let nanosleep = refs.rows.iter().find(|r| r.id == "nanosleep-1ns").unwrap();
        assert_eq!(fmt_ref(nanosleep.on("linux")), "498,693 ± 353");
        assert_eq!(fmt_ref(None), "–");
    }

    /// The per-OS table for this OS names every call this OS measures by the key it is
    /// stored under, and the write-up's rows it pairs with them exist. (Each OS's CI
    /// job runs this for its own table.)
    #[test]
    fn other_os_rows_match_this_os_variants() {
        let family = if cfg!(windows) {
            "windows"
        } else if cfg!(target_os = "linux") {
            "linux"
        } else {
            "macos"
        };
        let refs = reference_data().unwrap();
        let rows = other_rows(family);
        for v in VARIANTS {
            let found = rows.iter().find(|r| r.key == CallsKey::of(v.call));
            let found = found.unwrap_or_else(|| panic!("{} not in the {family} rows", v.id));
            if refs
                .rows
                .iter()
                .any(|r| r.id == v.id && r.on(family).is_some())
            {
                assert!(found.reference.contains(&v.id), "{}", v.id);
            }
        }
        for fam in ["windows", "macos", "linux"] {
            for r in other_rows(fam) {
                for id in r.reference {
                    assert!(refs.rows.iter().any(|x| x.id == *id), "{fam}: {id}");
                }
            }
        }
    }

    /// Another system's record is read by the calls of its rows, which this build may
    /// not make: a Windows record's `Sleep(0)` on any build.
    #[test]
    fn another_systems_readings_are_found_by_their_calls() {
        let reading = |k: &CallsKey, v: f64| harness::Reading::of(k, harness::Unit::Nanos, v);
        let sleep0 = CallsKey::of(Call::Sleep(0));
        let timer = CallsKey::of(Call::WaitableTimer(Duration::from_nanos(100)));
        let rounds = (0..3)
            .map(|_| vec![reading(&sleep0, 60.0), reading(&timer, 520_000.0)])
            .collect();
        let record = harness::fixture::record_of_readings("short-sleeps", "calls", rounds);
        let text = other_os_section(&[("windows", &record)]).unwrap();
        let row = |label: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("| {label} |")))
                .unwrap_or_else(|| panic!("no {label} row: {text}"))
                .to_string()
        };
        assert!(row("Sleep(0)").contains("| 60.0 ns"), "{text}");
        assert!(
            row("high-resolution waitable timer (100 ns)").contains("| – | 520 µs"),
            "{text}"
        );
        assert!(row("SleepEx(0, FALSE)").ends_with("| – |"), "{text}");
    }

    /// A Windows record's CPU per call: a loop whose CPU time read less than one step
    /// of the thread's CPU clock gives a bound ("below" the step ÷ its calls), never a
    /// 0 as if measured; a loop long enough for the clock gives its figure.
    #[test]
    fn a_cpu_time_under_the_clocks_step_reads_as_a_bound() {
        use harness::ReadingKey;
        use short_sleeps::experiments::{CallsRound, Loop};
        let (sleep0, sleep1) = (CallsKey::of(Call::Sleep(0)), CallsKey::of(Call::Sleep(1)));
        let sample = |calls: u32, ns: f64, cpu_ns: f64| short_sleeps::Sample {
            calls,
            ns,
            cpu_ns: Some(cpu_ns),
            voluntary: None,
            involuntary: None,
            run_delay_ns: None,
            first_ns: None,
            probe_first_ns: None,
            median_ns: None,
        };
        let lp = |key: &CallsKey, sample: short_sleeps::Sample| Loop {
            id: String::new(),
            key: key.stored(),
            slack: short_sleeps::Slack::Default,
            planned: sample.calls,
            sample,
            cpu_loop: None,
        };
        // The longer CPU loops where the clock is coarse: yield_now() read 20 steps of
        // 10 ms over 250,000 calls (800 ns a call); thread::sleep(0) read none over
        // 400,000 calls (a bound of 10 ms ÷ 400,000 = 25 ns).
        let (yield_now, sleep_zero) = (
            CallsKey::of(Call::YieldNow),
            CallsKey::of(Call::StdSleep(std::time::Duration::ZERO)),
        );
        let long = |key: &CallsKey, calls: u64, cpu_ns: f64| Loop {
            cpu_loop: Some(short_sleeps::CpuLoop {
                calls,
                cpu_ns,
                step_ns: 1e7,
            }),
            ..lp(key, sample(500, 800.0, 0.0))
        };
        let reading = |k: &CallsKey, v: f64| harness::Reading::of(k, harness::Unit::Nanos, v);
        let rounds = (0..3)
            .map(|_| {
                vec![
                    reading(&sleep0, 600.0),
                    reading(&sleep1, 1.1e6),
                    reading(&yield_now, 800.0),
                    reading(&sleep_zero, 800.0),
                ]
            })
            .collect();
        let mut record = harness::fixture::record_of_readings("short-sleeps", "calls", rounds);
        for r in &mut record.rounds {
            let data = CallsRound {
                thread_slack_ns: None,
                low_slack_ns: 1,
                // 500 calls of 600 ns read 0 on a 10 ms clock; 10,000 calls of 1.1 ms
                // read 40 ms of CPU time.
                loops: vec![
                    lp(&sleep0, sample(500, 600.0, 0.0)),
                    lp(&sleep1, sample(10_000, 1.1e6, 4_000.0)),
                    long(&yield_now, 250_000, 2e8),
                    long(&sleep_zero, 400_000, 0.0),
                ],
                clock_read_ns: None,
                cpu_clock_read_ns: None,
                cpu_clock_step_ns: Some(1e7),
            };
            r.data = serde_json::to_value(data).unwrap();
        }
        let text = other_os_section(&[("windows", &record)]).unwrap();
        let row = |label: &str| {
            let line = text
                .lines()
                .find(|l| l.starts_with(&format!("| {label} |")));
            line.unwrap_or_else(|| panic!("no {label} row: {text}"))
                .to_string()
        };
        assert!(row("Sleep(0)").contains("below 20.0 µs"), "{text}");
        assert!(row("Sleep(1)").contains("| 4.00 µs"), "{text}");
        assert!(
            row("yield_now() (SwitchToThread)").contains("| 800 ns<"),
            "{text}"
        );
        assert!(
            row("thread::sleep(0): sleep_for(0 ns) and sleep_for(0 ms)").contains("below 25.0 ns"),
            "{text}"
        );
        assert!(text.contains("a longer loop of the same call"), "{text}");
        assert!(
            text.contains("CPU clock moved in steps of 10.0 ms"),
            "{text}"
        );
        assert!(text.contains("*below* the step divided by"), "{text}");
    }

    /// Without another machine, the section shows the write-up's figures for the other
    /// systems and says how to add a machine.
    #[test]
    fn other_os_section_without_machines_shows_the_writeup_and_how_to_add_one() {
        let text = other_os_section(&[]).unwrap();
        assert!(text.contains("all-results import"), "{text}");
        assert!(!text.contains("  "), "no runs of spaces: {text}");
        if cfg!(target_os = "linux") {
            assert!(text.contains("| Sleep(1) | 2,000,949 ± 135 |"), "{text}");
            assert!(text.contains("| pselect(1 ns) | 416 ± 12 |"), "{text}");
            assert!(!text.contains("Linux 4.1"), "{text}");
        }
    }
}
