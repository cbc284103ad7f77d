//! criterion benchmarks of the chapter's variants, at the book's confidence level
//! (99.9 %). Each criterion sample is one loop of the same code the book measures, so
//! `cargo bench -p short-sleeps` cross-checks the table with criterion's statistics.

use criterion::{Criterion, criterion_group, criterion_main};
use short_sleeps::{Slack, VARIANTS, Variant, with_min_slack};
use std::time::Duration;

fn one_loop(v: &Variant, slack: Slack, iters: u64) -> Duration {
    let calls = u32::try_from(iters).unwrap_or(u32::MAX);
    let sample = match slack {
        Slack::Default => (v.run)(calls),
        Slack::OneNs => with_min_slack(|| (v.run)(calls)),
    };
    match sample {
        Ok(s) => Duration::from_nanos((s.ns * calls as f64) as u64),
        Err(e) => panic!("{} cannot run on this machine: {e}", v.id),
    }
}

fn variants(c: &mut Criterion) {
    let mut group = c.benchmark_group("short-sleeps");
    group
        .confidence_level(0.999)
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for v in VARIANTS {
        group.bench_function(format!("{} default slack", v.id), |b| {
            b.iter_custom(|iters| one_loop(v, Slack::Default, iters))
        });
        if cfg!(target_os = "linux") && v.sleeps {
            group.bench_function(format!("{} slack 1ns", v.id), |b| {
                b.iter_custom(|iters| one_loop(v, Slack::OneNs, iters))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, variants);
criterion_main!(benches);
