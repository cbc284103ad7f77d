//! Worker processes: the measuring binary runs itself again as
//! `BINARY __worker <chapter> <experiment> …`, once per round (or once for all
//! rounds, each reported as soon as it finishes). The parent reads the result lines
//! from the worker's standard output, kills the worker at its bound, and tells a
//! crash, an out-of-memory kill and a timeout apart. A worker refuses to run if its
//! code key is not the parent's (the binary was rebuilt in between). On Linux the
//! worker dies with its parent, so a killed build leaves no measurement running.

use crate::experiment::RoundOutput;
use crate::experiment::{Budget, Chapter};
use crate::noise::{self, Usage};
use crate::params::Override;
use crate::profile::Profile;
use crate::record::{Note, RoundRecord, Status};
use crate::rounds::{self, Exec, InProcess, RoundEnd, Rounds};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The first argument that makes a measuring binary a worker.
pub const WORKER_ARG: &str = "__worker";
const RESULT_PREFIX: &str = "COW-WORKER-RESULT ";
/// A finished round of a one-process worker, sent before the next one starts.
const ROUND_PREFIX: &str = "COW-WORKER-ROUND ";

/// A one-round worker's answer.
#[derive(Serialize, Deserialize)]
enum RoundReply {
    Done {
        out: RoundOutput,
        migrations: Option<u64>,
    },
    Failed(String),
}

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
        let run = supervise(self.exe, &args, kill_at);
        match run.ended {
            Ended::Reply(line) => match serde_json::from_str::<RoundReply>(&line) {
                Ok(RoundReply::Done { out, migrations }) => {
                    let noise = run.watch.finish(run.usage, run.own_cpu_s, migrations);
                    RoundEnd::Done { out, noise }
                }
                Ok(RoundReply::Failed(e)) => RoundEnd::Failed(e),
                Err(e) => RoundEnd::Crashed(format!("sent an unreadable result ({e})")),
            },
            other => other.into_end(),
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
    let run = supervise(exe, &args, kill_at);
    let rounds: Vec<RoundRecord> = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix(ROUND_PREFIX))
        .filter_map(|j| serde_json::from_str(j).ok())
        .collect();
    let (mut notes, details, status) = match run.ended {
        Ended::Reply(line) => match serde_json::from_str::<AllReply>(&line) {
            Ok(r) => {
                return Rounds {
                    rounds,
                    notes: r.notes,
                    details: r.details,
                    status: r.status,
                };
            }
            Err(e) => (
                Vec::new(),
                Vec::new(),
                Status::Crashed {
                    what: format!("sent an unreadable result ({e})"),
                },
            ),
        },
        other => (
            Vec::new(),
            Vec::new(),
            match other.into_end() {
                RoundEnd::TimedOut { after_s } => Status::TimedOut { after_s },
                RoundEnd::Failed(error) => Status::Failed { error },
                RoundEnd::Crashed(what) => Status::Crashed { what },
                RoundEnd::Done { .. } => Status::Crashed {
                    what: "ended oddly".into(),
                },
            },
        ),
    };
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

/// How a supervised worker ended.
enum Ended {
    /// It printed its result line (the JSON after the prefix).
    Reply(String),
    TimedOut(f64),
    /// Killed by a signal it did not get from us.
    Signal(i32),
    /// Exited without a result line.
    Exit(Option<i32>, String),
    /// It could not be started.
    Spawn(String),
}

impl Ended {
    fn into_end(self) -> RoundEnd {
        match self {
            Ended::Reply(_) => RoundEnd::Crashed("ended oddly".into()),
            Ended::TimedOut(after_s) => RoundEnd::TimedOut { after_s },
            Ended::Signal(sig) => RoundEnd::Crashed(describe_signal(sig)),
            Ended::Exit(code, tail) => {
                let code = code.map_or("no code".to_string(), |c| format!("code {c}"));
                let last = tail
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                RoundEnd::Crashed(crate::privacy::scrub(&format!(
                    "exited with {code} without a result{}",
                    if last.is_empty() {
                        String::new()
                    } else {
                        format!(": {last}")
                    }
                )))
            }
            Ended::Spawn(e) => RoundEnd::Failed(format!("could not start a worker process: {e}")),
        }
    }
}

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
    ended: Ended,
    /// Everything the worker wrote to its standard output.
    stdout: String,
    usage: Option<Usage>,
    own_cpu_s: f64,
    watch: noise::Watch,
}

/// Runs `exe args`, reading its standard output for the result line and keeping the
/// tail of its standard error; kills it at `kill_at`.
fn supervise(exe: &Path, args: &[OsString], kill_at: Instant) -> Supervised {
    let own0 = Usage::of_self();
    let mut watch = noise::Watch::start();
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
                ended: Ended::Spawn(e.to_string()),
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
        match rx.recv_timeout(left.min(Duration::from_millis(100))) {
            Ok(out) => output = Some(out),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                watch.sample_with(noise::running_threads(pid, 64));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => output = Some(String::new()),
        }
    }
    let (status, usage) = wait(&mut child, kill_at);
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
        Ended::Reply(line)
    } else if killed || status == WaitStatus::KilledByUs {
        Ended::TimedOut(started.elapsed().as_secs_f64())
    } else {
        match status {
            WaitStatus::Signal(s) => Ended::Signal(s),
            WaitStatus::Code(c) => Ended::Exit(c, stderr_tail),
            WaitStatus::KilledByUs => unreachable!("handled above"),
        }
    };
    Supervised {
        ended,
        stdout: output.unwrap_or_default(),
        usage,
        own_cpu_s,
        watch,
    }
}

#[derive(Debug, PartialEq)]
enum WaitStatus {
    Code(Option<i32>),
    Signal(i32),
    KilledByUs,
}

fn kill(child: &mut std::process::Child) {
    let _ = child.kill();
}

/// Waits for the child (killing it at `kill_at` if it has closed its output but not
/// exited) and returns how it ended with its resource usage.
#[cfg(unix)]
fn wait(child: &mut std::process::Child, kill_at: Instant) -> (WaitStatus, Option<Usage>) {
    let pid = child.id() as libc::pid_t;
    let mut killed = false;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: wait4 writes only into `status` and `ru`; the pid is our child.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if killed { 0 } else { libc::WNOHANG };
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if r == pid {
            let usage = Some(Usage::from_rusage(&ru));
            let ws = if killed {
                WaitStatus::KilledByUs
            } else if libc::WIFSIGNALED(status) {
                WaitStatus::Signal(libc::WTERMSIG(status))
            } else {
                WaitStatus::Code(libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)))
            };
            return (ws, usage);
        }
        if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if r < 0 {
            // Already reaped (e.g. by `kill`'s error path): nothing more to learn.
            return (
                if killed {
                    WaitStatus::KilledByUs
                } else {
                    WaitStatus::Code(None)
                },
                None,
            );
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
fn wait(child: &mut std::process::Child, kill_at: Instant) -> (WaitStatus, Option<Usage>) {
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return (WaitStatus::Code(s.code()), None),
            Ok(None) if Instant::now() >= kill_at => {
                kill(child);
                let _ = child.wait();
                return (WaitStatus::KilledByUs, None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => return (WaitStatus::Code(None), None),
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

/// The worker's side: `__worker <chapter> <experiment> --profile P --deadline-ms N
/// --parent PID (--round I | --all-rounds) [--set NAME=VALUE]…`. `args` starts after
/// `__worker`.
pub fn worker_main(chapters: &[&Chapter], args: &[String]) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("worker: {msg}");
        ExitCode::from(2)
    };
    let [chapter, experiment, rest @ ..] = args else {
        return fail("usage: __worker CHAPTER EXPERIMENT …".into());
    };
    let Some(ch) = chapters.iter().find(|c| c.name == chapter) else {
        return fail(format!("no chapter `{chapter}` in this binary"));
    };
    let Some(exp) = ch.experiment(experiment) else {
        return fail(format!("no experiment `{experiment}` in `{chapter}`"));
    };
    let mut profile = Profile::Quick;
    let mut key = String::new();
    let mut deadline_ms = 0u64;
    let mut round: Option<u32> = None;
    let mut all = false;
    let mut overrides = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--profile" => match Profile::parse(&value()) {
                Ok(p) => profile = p,
                Err(e) => return fail(e.to_string()),
            },
            "--key" => key = value(),
            "--deadline-ms" => deadline_ms = value().parse().unwrap_or(0),
            "--parent" => follow_parent(value().parse().unwrap_or(0)),
            "--round" => round = value().parse().ok(),
            "--all-rounds" => all = true,
            "--set" => match Override::parse(&value()) {
                Ok(o) => overrides.push(o),
                Err(e) => return fail(e),
            },
            other => return fail(format!("unknown worker argument `{other}`")),
        }
    }
    if key != ch.key {
        return reply(&RoundReply::Failed(format!(
            "the measuring binary was rebuilt while it measured (its code key is {}, the measurement's {key}); measure again",
            ch.key
        )));
    }
    let params = match crate::params::resolve(exp.name(), exp.params(), profile, &overrides) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let deadline = Instant::now() + Duration::from_millis(deadline_ms);
    let mut exec = InProcess {
        experiment: exp,
        profile,
        params,
    };
    if all {
        // Each round goes out as soon as it finishes, so a later crash loses nothing.
        let r = rounds::run_rounds(exp.budget(profile), &mut exec, |round| {
            let _ = send_line(ROUND_PREFIX, round);
        });
        return reply(&AllReply {
            notes: r.notes,
            details: r.details,
            status: r.status,
        });
    }
    let Some(index) = round else {
        return fail("--round or --all-rounds is required".into());
    };
    let counter = noise::MigrationCounter::open();
    let m0 = counter.as_ref().and_then(|c| c.read());
    let ended = exec.round(index, deadline, deadline);
    let migrations = match (m0, counter.as_ref().and_then(|c| c.read())) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    match ended {
        RoundEnd::Done { out, .. } => reply(&RoundReply::Done { out, migrations }),
        RoundEnd::Failed(e) => reply(&RoundReply::Failed(e)),
        RoundEnd::TimedOut { .. } | RoundEnd::Crashed(_) => {
            reply(&RoundReply::Failed("the round ended oddly".into()))
        }
    }
}
