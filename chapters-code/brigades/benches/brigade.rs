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

#[cfg(unix)]
fn one_hop(c: &mut Criterion) {
    let mut g = c.benchmark_group("lap through one member");
    let far = Instant::now() + Duration::from_secs(3600);
    let mut t = brigades::ThreadBrigade::build(1, &brigades::Caps::default(), None).unwrap();
    g.bench_function("thread, socket pair", |b| {
        b.iter_custom(|n| {
            let r = t.rounds(0, n as usize, far).unwrap();
            Duration::from_nanos(r.ns.iter().sum::<f64>() as u64)
        })
    });
    let mut a = brigades::AsyncBrigade::<brigades::SocketLink>::build(
        1,
        brigades::Flavor::CurrentThread,
        &brigades::Caps::default(),
    )
    .unwrap();
    g.bench_function("async current-thread, socket pair", |b| {
        b.iter_custom(|n| {
            let r = a.rounds(0, n as usize, far).unwrap();
            Duration::from_nanos(r.ns.iter().sum::<f64>() as u64)
        })
    });
    let mut one = brigades::OneThreadBrigade::build(1).unwrap();
    g.bench_function("one thread, socket pair", |b| {
        b.iter_custom(|n| {
            let r = one.rounds(0, n as usize, far).unwrap();
            Duration::from_nanos(r.ns.iter().sum::<f64>() as u64)
        })
    });
    g.finish();
    t.finish().unwrap();
    a.finish().unwrap();
}

#[cfg(not(unix))]
fn one_hop(_: &mut Criterion) {}

criterion_group!(benches, spawning, one_hop);
criterion_main!(benches);
