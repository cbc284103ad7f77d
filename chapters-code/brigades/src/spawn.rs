//! What starting costs: `n` threads that do nothing against `n` tokio tasks that do
//! nothing.

use std::io;
use std::time::{Duration, Instant};

// ANCHOR: spawn_cost
/// Starts `n` threads that do nothing and waits for all of them.
pub fn spawn_threads(n: usize) -> io::Result<Duration> {
    let start = Instant::now();
    let handles = (0..n)
        .map(|_| std::thread::Builder::new().spawn(|| ()))
        .collect::<io::Result<Vec<_>>>()?;
    for h in handles {
        h.join()
            .map_err(|_| io::Error::other("a thread panicked"))?;
    }
    Ok(start.elapsed())
}

/// Starts `n` tokio tasks that do nothing and waits for all of them.
pub fn spawn_tasks(rt: &tokio::runtime::Runtime, n: usize) -> io::Result<Duration> {
    rt.block_on(async {
        let start = Instant::now();
        let handles: Vec<_> = (0..n).map(|_| tokio::spawn(async {})).collect();
        for h in handles {
            h.await.map_err(io::Error::other)?;
        }
        Ok(start.elapsed())
    })
}
// ANCHOR_END: spawn_cost
