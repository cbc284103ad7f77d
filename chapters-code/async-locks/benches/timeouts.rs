//! Criterion benchmarks of the chapter's designs: wall time to start N short timeouts
//! and handle every expiry. `cargo bench -p async-locks --features bench`.

use async_locks::{Design, Flavour, run_design};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::time::{Duration, Instant};

fn designs(c: &mut Criterion) {
    let mut group = c.benchmark_group("1000 timeouts of 1 ms");
    group.sample_size(10);
    for flavour in Flavour::ALL {
        for design in Design::ALL {
            group.bench_function(BenchmarkId::new(design.name(), flavour.label()), |b| {
                b.iter(|| {
                    let give_up = Instant::now() + Duration::from_secs(10);
                    run_design(design, flavour, 1_000, Duration::from_millis(1), give_up)
                        .expect("a design runs")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, designs);
criterion_main!(benches);
