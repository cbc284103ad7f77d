//! The per-message primitives behind the chapter, timed by criterion:
//! `cargo bench -p spinning-vs-sleeping --features bench`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::mpsc;
use std::time::Instant;

fn primitives(c: &mut Criterion) {
    let mut g = c.benchmark_group("primitives");

    g.bench_function("Instant::now", |b| b.iter(|| black_box(Instant::now())));
    g.bench_function("shared-origin stamp (now_ns)", |b| {
        b.iter(|| black_box(spinning_vs_sleeping::now_ns()))
    });

    let (_tx, rx) = mpsc::channel::<u64>();
    g.bench_function("std mpsc try_recv, empty", |b| {
        b.iter(|| black_box(rx.try_recv().is_err()))
    });

    let (tx, rx) = mpsc::channel::<u64>();
    g.bench_function("std mpsc send + recv, one thread", |b| {
        b.iter(|| {
            tx.send(black_box(1)).unwrap();
            black_box(rx.recv().unwrap())
        })
    });

    let (ttx, mut trx) = tokio::sync::mpsc::unbounded_channel::<u64>();
    g.bench_function("tokio mpsc try_recv, empty", |b| {
        b.iter(|| black_box(trx.try_recv().is_err()))
    });
    g.bench_function("tokio mpsc send + try_recv, one thread", |b| {
        b.iter(|| {
            ttx.send(black_box(1)).unwrap();
            black_box(trx.try_recv().unwrap())
        })
    });

    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 8];
    g.bench_function(
        "UDP recv on an empty non-blocking socket (a syscall)",
        |b| b.iter(|| black_box(sock.recv(&mut buf).is_err())),
    );
    g.finish();
}

criterion_group!(benches, primitives);
criterion_main!(benches);
