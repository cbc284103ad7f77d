//! What starting costs: `n` threads that do nothing against `n` tokio tasks that do
//! nothing.
//!
//! From std 1.95's source (`$(rustc --print sysroot)/lib/rustlib/src/rust/library/std/
//! src/`): `thread/lifecycle.rs`, `spawn_unchecked`, asks for a stack of `RUST_MIN_STACK`
//! or `sys/thread/unix.rs`'s `DEFAULT_MIN_STACK_SIZE` (2 MiB on Linux); `sys/thread/
//! unix.rs`, `Thread::new`, sets it with `pthread_attr_setstacksize` and calls
//! `pthread_create`. What `pthread_create` does then (map the stack, call `clone`) is
//! the C library's, not read here: the page marks it as our hypothesis. From tokio
//! 1.54.1's source: `src/runtime/task/list.rs`, `OwnedTasks::bind`, allocates the
//! task (`task::new_task`) before the scheduler queues it.

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
