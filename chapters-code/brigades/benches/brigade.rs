//! Criterion benchmarks of the chapter's building blocks: starting a thread against
//! starting a tokio task, and one lap through a one-member brigade (one hop each way).

use criterion::{Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

fn spawning(c: &mut Criterion) {
    let mut g = c.benchmark_group("spawn and join one");
    g.bench_function("std thread", |b| {
        b.iter(|| brigades::spawn_threads(1).expect("spawn"))
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    g.bench_function("tokio task, current-thread", |b| {
        b.iter(|| brigades::spawn_tasks(&rt, 1).expect("spawn"))
    });
    g.finish();
}

/// Criterion's `iter_custom` over the laps of a brigade: the sum of `n` timed laps.
fn laps(b: &mut brigades::Brigade, n: u64) -> Duration {
    let far = Instant::now() + Duration::from_secs(3600);
    let r = b.laps(0, n as usize, far).expect("laps");
    Duration::from_nanos(r.ns.iter().sum::<f64>() as u64)
}

fn one_hop(c: &mut Criterion) {
    let mut g = c.benchmark_group("lap through two members");
    let caps = brigades::Caps::none();
    for kind in [
        brigades::Kind::Thread,
        brigades::Kind::AsyncCurrentSocket,
        brigades::Kind::AsyncCurrentChannel,
        brigades::Kind::OneThread,
    ] {
        // Two members: the smallest brigade the chapter measures.
        let Ok(mut b) = brigades::Brigade::build(kind, 2, &caps) else {
            continue; // not available on this OS
        };
        g.bench_function(kind.key(), |bench| bench.iter_custom(|n| laps(&mut b, n)));
        b.finish().expect("every byte passed on");
    }
    g.finish();
}

criterion_group!(benches, spawning, one_hop);
criterion_main!(benches);
