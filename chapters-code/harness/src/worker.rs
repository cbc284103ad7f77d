//! Worker processes: the measuring binary runs itself again as
//! `BINARY __worker <chapter> <experiment> …`, once per round (or once for all
//! rounds, each reported as soon as it finishes). The parent reads the result lines
//! from the worker's standard output, kills the worker at its bound, and tells a
//! crash, an out-of-memory kill and a timeout apart. A worker refuses to run if its
//! code key is not the parent's (the binary was rebuilt in between). On Linux the
//! worker dies with its parent, so a killed build leaves no measurement running.

use crate::experiment::{Budget, Chapter};
use crate::noise::{self, Usage};
use crate::params::Override;
use crate::profile::Profile;
use crate::record::{Note, RoundEnd, RoundRecord, Status};
use crate::rounds::{self, Exec, InProcess, Rounds};
use clap::Parser;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// How often the parent wakes, while a worker measures, to sample the other processes
/// (each sample then waits [`crate::noise::SAMPLE_SPACING`] times its own length).
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// The first argument that makes a measuring binary a worker.
pub const WORKER_ARG: &str = "__worker";
const RESULT_PREFIX: &str = "COW-WORKER-RESULT ";
/// A finished round of a one-process worker, sent before the next one starts.
const ROUND_PREFIX: &str = "COW-WORKER-ROUND ";

/// A one-process worker's last answer; its rounds came one by one before it.
#[derive(Serialize, Deserialize)]
struct AllReply {
    notes: Vec<Note>,
    details: Vec<(String, String)>,
    status: Status,
}

fn override_args(overrides: &[Override]) -> Vec<OsString> {
    overrides
        .iter()
        .flat_map(|o| {
            let lhs = match &o.experiment {
                Some(e) => format!("{e}.{}", o.name),
                None => o.name.clone(),
            };
            [
                OsString::from("--set"),
                OsString::from(format!("{lhs}={}", o.value)),
            ]
        })
        .collect()
}

fn base_args(
    chapter: &Chapter,
    experiment: &str,
    profile: Profile,
    deadline: Instant,
) -> Vec<OsString> {
    let ms = deadline
        .saturating_duration_since(Instant::now())
        .as_millis();
    vec![
        WORKER_ARG.into(),
        chapter.name.into(),
        experiment.into(),
        "--key".into(),
        chapter.key.into(),
        "--profile".into(),
        profile.name().into(),
        "--deadline-ms".into(),
        ms.to_string().into(),
        "--parent".into(),
        std::process::id().to_string().into(),
    ]
}

/// Rounds, each in a fresh worker process.
pub struct PerRound<'a> {
    pub exe: &'a Path,
    pub chapter: &'a Chapter,
    pub experiment: &'a str,
    pub profile: Profile,
    pub overrides: &'a [Override],
}

impl Exec for PerRound<'_> {
    fn round(&mut self, index: u32, deadline: Instant, kill_at: Instant) -> RoundEnd {
        let mut args = base_args(self.chapter, self.experiment, self.profile, deadline);
        args.extend(["--round".into(), index.to_string().into()]);
        args.extend(override_args(self.overrides));
        let Supervised {
            ended,
            usage,
            own_cpu_s,
            watch,
            ..
        } = supervise(self.exe, &args, kill_at, Sample::Runnable);
        // The worker measured its own migrations around the round; the rest of the
        // noise is seen from here, around the whole process.
        match serde_json::from_str::<RoundEnd>(&ended?) {
            Ok(Ok(round)) => Ok(RoundRecord {
                noise: watch.finish(usage, own_cpu_s, round.noise.migrations),
                ..round
            }),
            Ok(Err(status)) => Err(status),
            Err(e) => Err(unreadable(e)),
        }
    }
}

/// Every round in one worker process (the experiment said why). The rounds that
/// finished are kept even if the worker dies or is killed later.
pub fn all_rounds(
    exe: &Path,
    chapter: &Chapter,
    experiment: &str,
    profile: Profile,
    overrides: &[Override],
    budget: Budget,
) -> Rounds {
    let start = Instant::now();
    let deadline = start + budget.bound();
    let kill_at = deadline + Duration::from_secs(3);
    let mut args = base_args(chapter, experiment, profile, deadline);
    args.push("--all-rounds".into());
    args.extend(override_args(overrides));
    // Each round's noise is the worker's own ([`InProcess`]); sampling from here
    // would only add this process's reads to the others' work those rounds see.
    let run = supervise(exe, &args, kill_at, Sample::Nothing);
    let rounds: Vec<RoundRecord> = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix(ROUND_PREFIX))
        .filter_map(|j| serde_json::from_str(j).ok())
        .collect();
    let status = match run
        .ended
        .map(|line| serde_json::from_str::<AllReply>(&line))
    {
        Ok(Ok(r)) => {
            return Rounds {
                rounds,
                notes: r.notes,
                details: r.details,
                status: r.status,
            };
        }
        Ok(Err(e)) => unreadable(e),
        Err(status) => status,
    };
    let (mut notes, details) = (Vec::new(), Vec::new());
    if !rounds.is_empty() {
        rounds::ended_early_note(&status, rounds.len(), &mut notes);
    }
    Rounds {
        rounds,
        notes,
        details,
        status,
    }
}

fn unreadable(e: serde_json::Error) -> Status {
    Status::Crashed {
        what: format!("sent an unreadable result ({e})"),
    }
}

/// How a worker that exited without a result line ended: a signal, or an exit code
/// with the last line it wrote to its standard error.
fn died(status: Option<std::process::ExitStatus>, stderr_tail: &str) -> Status {
    #[cfg(unix)]
    if let Some(sig) = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)) {
        return Status::Crashed {
            what: describe_signal(sig),
        };
    }
    let code = status
        .and_then(|s| s.code())
        .map_or("no code".to_string(), |c| format!("code {c}"));
    let last = stderr_tail
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Status::Crashed {
        what: crate::privacy::scrub(&format!(
            "exited with {code} without a result{}",
            if last.is_empty() {
                String::new()
            } else {
                format!(": {last}")
            }
        )),
    }
}

#[cfg(unix)]
fn describe_signal(sig: i32) -> String {
    match sig {
        9 => "was killed (signal 9, SIGKILL) — the kernel's out-of-memory killer does this when memory runs out".into(),
        11 => "crashed (signal 11, SIGSEGV: a bad memory access or a stack overflow)".into(),
        6 => "aborted (signal 6, SIGABRT)".into(),
        7 => "crashed (signal 7, SIGBUS)".into(),
        s => format!("was killed by signal {s}"),
    }
}

struct Supervised {
    /// The worker's result line (the JSON after the prefix), or how it ended without one.
    ended: Result<String, Status>,
    /// Everything the worker wrote to its standard output.
    stdout: String,
    usage: Option<Usage>,
    own_cpu_s: f64,
    watch: noise::Watch,
}

/// Whether the parent samples other processes' runnable threads while its worker runs.
#[derive(Clone, Copy, PartialEq)]
enum Sample {
    Runnable,
    Nothing,
}

/// Runs `exe args`, reading its standard output for the result line and keeping the
/// tail of its standard error; kills it at `kill_at`.
fn supervise(exe: &Path, args: &[OsString], kill_at: Instant, sample: Sample) -> Supervised {
    // The watch first: its probe of the machine is not the watcher's CPU time, which
    // `others_busy` leaves out of the machine's busy time.
    let mut watch = noise::Watch::start();
    let own0 = Usage::of_self();
    let spawned = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return Supervised {
                ended: Err(Status::Failed {
                    error: format!("could not start a worker process: {e}"),
                }),
                stdout: String::new(),
                usage: None,
                own_cpu_s: 0.0,
                watch,
            };
        }
    };
    let pid = child.id();
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = tx.send(out);
    });
    let err_thread = std::thread::spawn(move || {
        // Keep only the end: a panic message or an error line.
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 8192 {
                tail.drain(..tail.len() - 4096);
            }
        }
        String::from_utf8_lossy(&tail).into_owned()
    });
    let started = Instant::now();
    let mut output = None;
    let mut killed = false;
    while output.is_none() {
        let left = kill_at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            kill(&mut child);
            killed = true;
            break;
        }
        match rx.recv_timeout(left.min(SAMPLE_EVERY)) {
            Ok(out) => output = Some(out),
            // Left out as ours: the worker and this process (the sampling thread's),
            // and their children, however many threads they have.
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if sample == Sample::Runnable => {
                watch.sample(&[pid, std::process::id()]);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => output = Some(String::new()),
        }
    }
    let waited = wait(&mut child, kill_at);
    if output.is_none() {
        // Killed: what it had written before (a one-process worker's finished rounds).
        output = rx.recv_timeout(Duration::from_secs(2)).ok();
    }
    let stderr_tail = err_thread.join().unwrap_or_default();
    let own_cpu_s = noise::usage_since(own0, Usage::of_self()).map_or(0.0, |u| u.cpu_s);
    let reply = output.as_deref().and_then(|o| {
        o.lines()
            .rev()
            .find_map(|l| l.strip_prefix(RESULT_PREFIX))
            .map(str::to_string)
    });
    // A result that arrived counts even if the worker then lingered and was killed.
    let ended = if let Some(line) = reply {
        Ok(line)
    } else if killed || waited.killed_by_us {
        Err(Status::TimedOut {
            after_s: started.elapsed().as_secs_f64(),
        })
    } else {
        Err(died(waited.status, &stderr_tail))
    };
    Supervised {
        ended,
        stdout: output.unwrap_or_default(),
        usage: waited.usage,
        own_cpu_s,
        watch,
    }
}

/// How a worker process ended: its exit status (none if it could not be read), whether
/// we killed it, and its resource usage.
struct Waited {
    status: Option<std::process::ExitStatus>,
    killed_by_us: bool,
    usage: Option<Usage>,
}

fn kill(child: &mut std::process::Child) {
    let _ = child.kill();
}

/// Waits for the child (killing it at `kill_at` if it has closed its output but not
/// exited) and returns how it ended with its resource usage.
#[cfg(unix)]
fn wait(child: &mut std::process::Child, kill_at: Instant) -> Waited {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut killed = false;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: wait4 writes only into `status` and `ru`; the pid is our child.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if killed { 0 } else { libc::WNOHANG };
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if r == pid {
            return Waited {
                status: Some(std::process::ExitStatus::from_raw(status)),
                killed_by_us: killed,
                usage: Some(Usage::from_rusage(&ru)),
            };
        }
        if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if r < 0 {
            // Already reaped (e.g. by `kill`'s error path): nothing more to learn.
            return Waited {
                status: None,
                killed_by_us: killed,
                usage: None,
            };
        }
        if !killed && Instant::now() >= kill_at {
            kill(child);
            killed = true;
            continue;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(not(unix))]
fn wait(child: &mut std::process::Child, kill_at: Instant) -> Waited {
    loop {
        match child.try_wait() {
            Ok(Some(s)) => {
                return Waited {
                    status: Some(s),
                    killed_by_us: false,
                    usage: None,
                };
            }
            Ok(None) if Instant::now() >= kill_at => {
                kill(child);
                let _ = child.wait();
                return Waited {
                    status: None,
                    killed_by_us: true,
                    usage: None,
                };
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => {
                return Waited {
                    status: None,
                    killed_by_us: false,
                    usage: None,
                };
            }
        }
    }
}

/// Makes this worker die with its parent (Linux), and exits at once if the parent is
/// already gone.
fn follow_parent(parent: u32) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_PDEATHSIG only sets this process's death signal.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    #[cfg(unix)]
    if std::os::unix::process::parent_id() != parent {
        std::process::exit(3);
    }
    #[cfg(not(unix))]
    let _ = parent;
}

/// Writes one prefixed JSON line to standard output and flushes it.
fn send_line<T: Serialize>(prefix: &str, value: &T) -> std::io::Result<()> {
    use std::io::Write;
    let json = serde_json::to_string(value).map_err(std::io::Error::other)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{prefix}{json}")?;
    out.flush()
}

fn reply<T: Serialize>(value: &T) -> ExitCode {
    match send_line(RESULT_PREFIX, value) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cannot send the result: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The worker's command line (after `__worker`); only the parent writes it, so a
/// mistake in it is the harness's, and the worker says what it was and exits 2.
#[derive(Parser, Debug)]
#[command(name = "__worker", no_binary_name = true)]
struct WorkerArgs {
    chapter: String,
    experiment: String,
    /// The parent's code key: a rebuilt binary refuses to measure.
    #[arg(long)]
    key: String,
    #[arg(long, value_enum)]
    profile: Profile,
    /// Milliseconds until the run's hard bound.
    #[arg(long)]
    deadline_ms: u64,
    /// The parent's process id: the worker dies with it.
    #[arg(long)]
    parent: u32,
    /// Run this one round and answer with it.
    #[arg(
        long,
        required_unless_present = "all_rounds",
        conflicts_with = "all_rounds"
    )]
    round: Option<u32>,
    /// Run every round, each sent as soon as it finishes.
    #[arg(long)]
    all_rounds: bool,
    /// `NAME=VALUE` or `EXPERIMENT.NAME=VALUE`.
    #[arg(long = "set", value_parser = Override::parse)]
    set: Vec<Override>,
}

/// The worker's side: `__worker <chapter> <experiment> --key K --profile P
/// --deadline-ms N --parent PID (--round I | --all-rounds) [--set NAME=VALUE]…`.
/// `args` starts after `__worker`.
pub fn worker_main(chapters: &[&Chapter], args: &[String]) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("worker: {msg}");
        ExitCode::from(2)
    };
    let a = match WorkerArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => return fail(e.to_string()),
    };
    follow_parent(a.parent);
    let Some(ch) = chapters.iter().find(|c| c.name == a.chapter) else {
        return fail(format!("no chapter `{}` in this binary", a.chapter));
    };
    let Some(exp) = ch.experiment(&a.experiment) else {
        return fail(format!(
            "no experiment `{}` in `{}`",
            a.experiment, a.chapter
        ));
    };
    if a.key != ch.key {
        let refused = Status::Failed {
            error: format!(
                "the measuring binary was rebuilt while it measured (its code key is {}, the measurement's {}); measure again",
                ch.key, a.key
            ),
        };
        return if a.all_rounds {
            reply(&AllReply {
                notes: Vec::new(),
                details: Vec::new(),
                status: refused,
            })
        } else {
            reply(&RoundEnd::Err(refused))
        };
    }
    let params = match crate::params::resolve(exp.name(), exp.params(), a.profile, &a.set) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let deadline = Instant::now() + Duration::from_millis(a.deadline_ms);
    let mut exec = InProcess {
        experiment: exp,
        profile: a.profile,
        params,
    };
    match a.round {
        // Each round goes out as soon as it finishes, so a later crash loses nothing.
        None => {
            let r = rounds::run_rounds(exp.budget(a.profile), &mut exec, |round| {
                let _ = send_line(ROUND_PREFIX, round);
            });
            reply(&AllReply {
                notes: r.notes,
                details: r.details,
                status: r.status,
            })
        }
        // The round with its own notes, details and migrations; the parent adds the
        // rest of its noise.
        Some(index) => reply(&exec.round(index, deadline, deadline)),
    }
}
