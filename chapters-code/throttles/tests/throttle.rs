//! The `Throttle` type: its errors, its schedule (with made-up instants, so exact),
//! and its behaviour on the real clock (lower bounds only, plus one generous upper
//! bound: a loaded machine can only make things later).

use std::time::{Duration, Instant};
use throttles::{DEFAULT_MIN_SLEEP, MAX_RATE, MIN_RATE, RateError, Throttle, period_ns};

#[test]
fn bad_rates_are_refused_with_a_clear_error() {
    for (rate, expect) in [
        (0.0, "not positive"),
        (-5.0, "not positive"),
        (f64::NAN, "not a finite number"),
        (f64::INFINITY, "not a finite number"),
        (f64::NEG_INFINITY, "not a finite number"),
        (1e12, "more than one operation per nanosecond"),
        (1e-9, "would wait more than"),
    ] {
        let err = Throttle::per_second(rate).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(expect), "{rate}: {text}");
        assert!(text.contains("between"), "the range is named: {text}");
    }
    assert!(matches!(
        Throttle::per_second(0.0),
        Err(RateError::NotPositive(_))
    ));
    assert!(Throttle::per_second(MIN_RATE).is_ok());
    assert!(Throttle::per_second(MAX_RATE).is_ok());
    assert_eq!(period_ns(1_000.0).unwrap(), 1e6);
}

#[test]
fn the_schedule_is_absolute_and_the_first_operation_goes_at_once() {
    let t0 = Instant::now();
    let mut th = Throttle::per_second(1_000.0).unwrap();
    assert_eq!(th.plan(t0), None);
    assert_eq!(th.plan(t0), Some(t0 + Duration::from_millis(1)));
    // Woke 300 µs late: the next deadline is still on the grid, not 1 ms after waking.
    let late = t0 + Duration::from_micros(1_300);
    assert_eq!(th.plan(late), Some(t0 + Duration::from_millis(2)));
}

#[test]
fn catch_up_after_a_stall_is_bounded() {
    let t0 = Instant::now();
    let mut th = Throttle::per_second(1_000.0)
        .unwrap()
        .max_lag(Duration::from_millis(5));
    assert_eq!(th.plan(t0), None);
    assert!(th.plan(t0).is_some());
    // A 50 ms stall: slots 2..=50 are overdue (49 of them). Five go at once.
    let now = t0 + Duration::from_millis(50);
    let mut at_once = 0;
    let next = loop {
        match th.plan(now) {
            None => at_once += 1,
            Some(t) => break t,
        }
        assert!(at_once <= 1_000, "the burst never ended");
    };
    assert_eq!(at_once, 5);
    assert_eq!(next, now + Duration::from_millis(1));
    assert_eq!(th.dropped(), 44);
}

#[test]
fn short_periods_are_batched_not_slept() {
    let t0 = Instant::now();
    // 100,000 ops/s: a 10 µs period, far below what a sleep honours.
    let mut th = Throttle::per_second(100_000.0).unwrap();
    let mut go = 0;
    let wake = loop {
        match th.plan(t0) {
            None => go += 1,
            Some(t) => break t,
        }
        assert!(go <= 1_000, "never slept");
    };
    // Due times 0, 10, …, 100 µs are within the minimum sleep: 11 go at once.
    assert_eq!(DEFAULT_MIN_SLEEP, Duration::from_micros(100));
    assert_eq!(go, 11);
    assert_eq!(wake, t0 + Duration::from_micros(110));
    // Without batching every wait is slept.
    let mut th = Throttle::per_second(100_000.0)
        .unwrap()
        .min_sleep(Duration::ZERO);
    assert_eq!(th.plan(t0), None);
    assert_eq!(th.plan(t0), Some(t0 + Duration::from_micros(10)));
}

#[test]
fn real_rate_is_held_within_a_generous_bound() {
    let mut th = Throttle::per_second(500.0).unwrap();
    let mut starts = Vec::new();
    for _ in 0..30 {
        th.wait();
        starts.push(Instant::now());
    }
    let span = starts[29] - starts[0];
    // Never faster than the schedule allows (29 periods of 2 ms, less the batching
    // allowance); a loaded machine may be slower, so the upper bound is loose.
    assert!(
        span >= Duration::from_millis(58) - DEFAULT_MIN_SLEEP,
        "{span:?}"
    );
    assert!(span < Duration::from_secs(3), "{span:?}");
}

#[test]
fn a_real_stall_is_followed_by_a_bounded_burst() {
    let mut th = Throttle::per_second(1_000.0)
        .unwrap()
        .max_lag(Duration::from_millis(5))
        .min_sleep(Duration::ZERO);
    th.wait();
    std::thread::sleep(Duration::from_millis(60)); // the injected stall
    let after_stall = Instant::now();
    for _ in 0..20 {
        th.wait();
    }
    // Five operations may go at once; the other fifteen are paced at 1 ms. An
    // unbounded catch-up would have run all twenty at once.
    assert!(
        after_stall.elapsed() >= Duration::from_millis(15),
        "{:?}",
        after_stall.elapsed()
    );
    assert!(th.dropped() >= 50, "{}", th.dropped());
}

#[test]
fn wait_reports_the_moment_each_operation_was_due() {
    let mut th = Throttle::per_second(1_000.0)
        .unwrap()
        .min_sleep(Duration::ZERO);
    let d0 = th.wait();
    let d1 = th.wait();
    let d2 = th.wait();
    // Exactly on the grid, however late each wake-up was.
    assert_eq!(d1 - d0, Duration::from_millis(1));
    assert_eq!(d2 - d0, Duration::from_millis(2));
    assert!(Instant::now() >= d2);
}
