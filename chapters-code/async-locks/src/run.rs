//! Running a design: the runtime its handler runs on ([`Flavour`]), one run of one
//! design ([`Run`]) and [`run_design`], which runs it on a fresh runtime within a bound
//! and reads its counters.

use crate::designs::{
    Budgeted, Design, Spawner, baseline, baseline_unconstrained, own_deadline_channel,
    std_mutex_inline, std_mutex_task_each, task_each, tokio_mutex_channel, two_runtimes,
};
use crate::os;
use crate::timeout::Sample;
use crate::waits::Waits;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use tokio::time::timeout_at;

/// The runtime a design's handler (and, in design 3, its timers) runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flavour {
    /// `#[tokio::main(flavor = "current_thread")]`, `#[tokio::test]`.
    CurrentThread,
    /// `#[tokio::main]`: one worker per core.
    MultiThread,
}

impl Flavour {
    pub const ALL: [Flavour; 2] = [Flavour::MultiThread, Flavour::CurrentThread];

    pub fn label(self) -> &'static str {
        match self {
            Flavour::CurrentThread => "current-thread",
            Flavour::MultiThread => "multi-thread",
        }
    }

    pub fn runtime(self) -> std::io::Result<tokio::runtime::Runtime> {
        match self {
            Flavour::CurrentThread => tokio::runtime::Builder::new_current_thread(),
            Flavour::MultiThread => tokio::runtime::Builder::new_multi_thread(),
        }
        .enable_time()
        .on_thread_start(os::thread_started)
        .on_thread_stop(os::thread_stopped)
        .build()
    }
}

/// One run of one design.
#[derive(Debug, Clone)]
pub struct Run {
    pub design: Design,
    pub flavour: Flavour,
    pub n: usize,
    pub samples: Vec<Sample>,
    pub wall: Duration,
    /// CPU time of the whole process during the run, where the OS reports it.
    pub cpu: Option<Duration>,
    /// The process's scheduler counters during the run: context switches and CPU of
    /// every thread, run-queue delay of every thread that ran in it (see [`os`]).
    pub counters: harness::Counters,
    /// How often the run's locks, sends, receives and timers waited.
    pub waits: Waits,
}

impl Run {
    /// Fewer expiries were handled than timeouts were started.
    pub fn stalled(&self) -> bool {
        self.samples.len() < self.n
    }
}

/// Runs `design` with `n` timeouts of `after` on a fresh runtime of `flavour`,
/// stopping (and keeping what was handled) at `give_up`. The runtime is shut down
/// with a bound, so a task left waiting cannot hold the round up.
pub fn run_design(
    design: Design,
    flavour: Flavour,
    n: usize,
    after: Duration,
    give_up: Instant,
) -> anyhow::Result<Run> {
    anyhow::ensure!(n >= 1, "N must be at least 1 timeout (got {n})");
    os::new_run();
    let rt = flavour.runtime()?;
    let _ = Waits::take();
    let before = os::counters();
    let cpu0 = harness::process_cpu_time();
    let t0 = Instant::now();
    let samples = match design {
        Design::TwoRuntimes => {
            two_runtimes(&rt, flavour.runtime()?, n, after, give_up, Budgeted::Yes)
        }
        Design::TwoRuntimesFreeLock => {
            two_runtimes(&rt, flavour.runtime()?, n, after, give_up, Budgeted::No)
        }
        Design::Baseline => rt.block_on(all_or_nothing(baseline(n, after), give_up)),
        Design::BaselineUnconstrained => {
            rt.block_on(all_or_nothing(baseline_unconstrained(n, after), give_up))
        }
        Design::TaskEach => rt.block_on(all_or_nothing(task_each(n, after), give_up)),
        Design::StdMutexTask => rt.block_on(all_or_nothing(std_mutex_task_each(n, after), give_up)),
        Design::StdMutex => rt.block_on(all_or_nothing(std_mutex_inline(n, after), give_up)),
        Design::TokioMutexCap1 => rt.block_on(tokio_mutex_channel(n, after, 1, give_up)),
        Design::TokioMutexCapN => rt.block_on(tokio_mutex_channel(n, after, n, give_up)),
        Design::Fix => rt.block_on(own_deadline_channel(n, after, give_up, Spawner::Task)),
        Design::FixBlockOn => {
            rt.block_on(own_deadline_channel(n, after, give_up, Spawner::BlockOn))
        }
    };
    let wall = t0.elapsed();
    let cpu = harness::process_cpu_time()
        .zip(cpu0)
        .map(|(b, a)| b.saturating_sub(a));
    let counters = os::counters().since(&before);
    let waits = Waits::take();
    rt.shutdown_timeout(Duration::from_millis(200));
    Ok(Run {
        design,
        flavour,
        n,
        samples,
        wall,
        cpu,
        counters,
        waits,
    })
}

/// `join_all` hands back all its outputs or none: past `give_up`, none.
async fn all_or_nothing(
    f: impl std::future::Future<Output = Vec<Sample>>,
    give_up: Instant,
) -> Vec<Sample> {
    timeout_at(give_up.into(), f).await.unwrap_or_default()
}
