//! The wait counters of the designs. One test in its own binary: the counters are
//! process-wide and every run resets them, so no other run may overlap.

use async_locks::{Design, Flavour, run_design};
use std::time::{Duration, Instant};

#[test]
fn each_design_counts_the_waits_it_can_have() {
    let (n, after) = (400u64, Duration::from_millis(5));
    let far = || Instant::now() + Duration::from_secs(60);
    let run = |d, fl| run_design(d, fl, n as usize, after, far()).unwrap();
    let ct = Flavour::CurrentThread;

    // Design 1 inline: one push and one pop per timeout, on one thread, so never taken.
    let w = run(Design::StdMutex, ct).waits;
    assert_eq!((w.locks.calls, w.locks.waited), (2 * n, 0));
    assert_eq!(w.sends.calls, 0);
    assert!(w.timers.calls >= n);

    // Design 2 with one slot: every expiry is a send; with room for all N, none waits.
    let w = run(Design::TokioMutexCap1, ct).waits;
    assert_eq!(w.sends.calls, n);
    assert_eq!(w.receives.calls, n);
    assert_eq!(w.locks.calls, 2 * n);
    let w = run(Design::TokioMutexCapN, ct).waits;
    assert_eq!((w.sends.calls, w.sends.waited), (n, 0));

    // The fix: every offer finds room.
    let w = run(Design::Fix, Flavour::MultiThread).waits;
    assert_eq!((w.sends.calls, w.sends.waited, w.locks.calls), (n, 0, 0));

    // With the budget off, no timer poll is ever refused.
    let w = run(Design::BaselineUnconstrained, ct).waits;
    assert_eq!(w.timers.refused, 0);

    // Design 3: its timer task spends its budget at the start, and a `lock()` refused
    // by the budget returns Pending holding the mutex; with every `lock()` out of the
    // budget, none does.
    for fl in Flavour::ALL {
        let w = run(Design::TwoRuntimes, fl).waits;
        eprintln!("design 3, {}: {:?}", fl.label(), w.locks);
        assert_eq!(w.locks.calls, 2 * n);
        assert!(w.locks.held >= 1, "{:?}", w.locks);
        let w = run(Design::TwoRuntimesFreeLock, fl).waits;
        eprintln!("design 3 unconstrained, {}: {:?}", fl.label(), w.locks);
        assert_eq!((w.locks.calls, w.locks.held), (2 * n, 0));
    }

    // The process counters are read where the OS offers them.
    let r = run(Design::Baseline, Flavour::MultiThread);
    if cfg!(target_os = "linux") {
        let c = r.counters;
        assert!(c.cpu_ns.is_some() && c.voluntary.is_some() && c.run_delay_ns.is_some());
    }
}
