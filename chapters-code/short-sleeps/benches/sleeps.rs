//! criterion benchmarks of the chapter's variants, at the book's confidence level
//! (95 %). Each criterion sample is one loop of the same code the book measures
//! (`run_loop`), so `cargo bench -p short-sleeps --features bench` cross-checks the `calls` table with
//! criterion's statistics.

use criterion::{Criterion, criterion_group, criterion_main};
use short_sleeps::{VARIANTS, Variant, run_loop, with_slack};
use std::time::Duration;

/// One loop of `iters` calls, with the thread's slack or with `slack_ns`.
fn one_loop(v: &Variant, slack_ns: Option<u64>, iters: u64) -> Duration {
    let calls = u32::try_from(iters).unwrap_or(u32::MAX);
    let sample = match slack_ns {
        None => run_loop(v.call, calls),
        Some(ns) => with_slack(ns, || run_loop(v.call, calls)),
    };
    match sample {
        Ok(s) => Duration::from_nanos((s.ns * f64::from(calls)) as u64),
        Err(e) => panic!("{} cannot run on this machine: {e}", v.id),
    }
}

fn variants(c: &mut Criterion) {
    let mut group = c.benchmark_group("short-sleeps");
    group
        .confidence_level(0.95)
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for v in VARIANTS {
        group.bench_function(format!("{} default slack", v.id), |b| {
            b.iter_custom(|iters| one_loop(v, None, iters))
        });
        if cfg!(target_os = "linux") && v.call.sleeps() {
            group.bench_function(format!("{} slack 1ns", v.id), |b| {
                b.iter_custom(|iters| one_loop(v, Some(1), iters))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, variants);
criterion_main!(benches);
