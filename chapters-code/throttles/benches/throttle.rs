//! What one scheduling decision costs, without sleeping: `Throttle::plan` with a
//! clock that never reaches the next deadline, so every call is a pure computation.
//! `cargo bench -p throttles --features bench`

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use throttles::Throttle;

fn plan(c: &mut Criterion) {
    let now = Instant::now();
    c.bench_function("Throttle::plan, batching at 10^8 ops/s", |b| {
        let mut th = Throttle::per_second(1e8)
            .unwrap()
            .min_sleep(Duration::from_secs(3600));
        b.iter(|| black_box(th.plan(black_box(now))));
    });
    c.bench_function("Instant::now", |b| b.iter(Instant::now));
}

criterion_group! {
    name = benches;
    config = Criterion::default().confidence_level(0.999).measurement_time(Duration::from_secs(2));
    targets = plan
}
criterion_main!(benches);
