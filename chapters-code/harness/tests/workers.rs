//! Rounds in worker processes, and what happens when a round fails, panics, hangs,
//! aborts or is killed: every end is recorded as what it was, nothing hangs, nothing
//! is left behind. Uses the harness's test chapter (`fixture-chapter`).

use harness::cache;
use harness::fixture::{self, CHAPTER};
use harness::record::Status;
use harness::runner::{Mode, Request, measure};
use harness::{AnyExperiment, Profile};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fixture-chapter"))
}

fn run(exp: &'static dyn AnyExperiment) -> harness::Record {
    measure(&Request {
        chapter: &CHAPTER,
        experiment: exp,
        profile: Profile::Quick,
        overrides: &[],
        mode: Mode::Workers { exe: exe() },
    })
    .expect("default parameters are valid")
}

fn pids(r: &harness::Record) -> Vec<u64> {
    r.rounds
        .iter()
        .map(|x| x.data["pid"].as_u64().unwrap())
        .collect()
}

#[test]
fn each_round_runs_in_a_fresh_process_with_its_noise() {
    let r = run(&fixture::OK);
    assert_eq!(r.status, Status::Ok);
    // Steady readings: the interval is tight at once, so the minimum of 6 rounds.
    assert_eq!(r.rounds.len(), 6);
    let mut p = pids(&r);
    p.sort();
    p.dedup();
    assert_eq!(p.len(), 6, "six rounds, six processes: {p:?}");
    assert!(!p.contains(&u64::from(std::process::id())));
    assert_eq!(r.details, vec![("derived".to_string(), "6".to_string())]);
    assert_eq!(
        r.notes.len(),
        1,
        "the same note from six rounds is kept once"
    );
    assert_eq!(r.isolation, "a fresh process per round");
    if cfg!(target_os = "linux") {
        let n = &r.rounds[0].noise;
        assert!(n.steal.is_some() && n.others_busy.is_some(), "{n:?}");
        assert!(
            n.involuntary_switches.is_some() && n.cpu_s.is_some(),
            "{n:?}"
        );
    }
    let e = r.estimate("steady").unwrap();
    assert_eq!((e.median, e.n), (1003.0, 6));
}

/// The noise sensors count no thread of the measurement as another's: rounds of
/// bursts of short-lived threads and then 500 that wake and sleep again every 10 ms
/// are never said to have 20 or more other runnable threads while other processes
/// used under 0.05 cores.
#[cfg(target_os = "linux")]
#[test]
fn a_crowd_of_our_own_threads_is_not_other_work() {
    let r = run(&fixture::CROWD);
    assert_eq!(r.status, Status::Ok);
    let mut known = 0;
    for x in &r.rounds {
        let n = &x.noise;
        let Some(q) = n.others_runnable else { continue };
        known += 1;
        let busy = n.others_busy.expect("read on Linux");
        assert!(q < 20.0 || busy >= 0.05, "round {}: {n:?}", x.index);
    }
    assert!(
        known > 0,
        "no round could count its threads: {:?}",
        r.rounds
    );
}

#[test]
fn one_process_rounds_share_a_process() {
    let r = run(&fixture::ONE);
    assert_eq!(r.status, Status::Ok);
    let p = pids(&r);
    assert!(p.len() >= 3 && p.iter().all(|x| *x == p[0]), "{p:?}");
    assert!(r.isolation.contains("the test says so"));
}

#[test]
fn errors_and_panics_are_recorded_as_failures() {
    let r = run(&fixture::FAILS);
    assert_eq!(
        r.status,
        Status::Failed {
            error: "no such device".into()
        }
    );
    let r = run(&fixture::PANICS);
    assert!(
        matches!(&r.status, Status::Failed { error } if error.contains("it panicked: boom")),
        "{:?}",
        r.status
    );
}

#[test]
fn a_hanging_round_is_killed_at_its_bound() {
    let t0 = Instant::now();
    let r = run(&fixture::HANGS);
    let took = t0.elapsed();
    assert!(
        matches!(r.status, Status::TimedOut { after_s } if after_s > 3.0),
        "{:?}",
        r.status
    );
    // Bound (0.5 s + 3 s) plus 2 s of grace, and a little slack for a loaded machine.
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert!(r.status.describe().contains("timed out after"));
}

#[cfg(unix)]
#[test]
fn crashes_and_kills_are_told_apart() {
    let r = run(&fixture::ABORTS);
    assert!(
        matches!(&r.status, Status::Crashed { what } if what.contains("SIGABRT")),
        "{:?}",
        r.status
    );
    // Killed in its second round: the first round is kept and the kill noted, but the
    // run is not a good result, so it could never replace one.
    let r = run(&fixture::KILLED);
    assert!(
        matches!(&r.status, Status::Crashed { what } if what.contains("signal 9") && what.contains("out-of-memory")),
        "{:?}",
        r.status
    );
    assert_eq!(r.rounds.len(), 1);
    assert!(
        r.notes
            .iter()
            .any(|n| n.text.contains("ended early") && n.text.contains("round 2")),
        "{:?}",
        r.notes
    );
    // The same in a one-process worker: the round it had finished and sent survives.
    let r = run(&fixture::KILLED_ONE);
    assert!(
        matches!(&r.status, Status::Crashed { .. }),
        "{:?}",
        r.status
    );
    assert_eq!(r.rounds.len(), 1, "{:?}", r.notes);
}

fn cli(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(exe())
        .args(args)
        .env("COW_RESULTS_DIR", dir)
        .env("COW_LOCK_FILE", dir.join("measure.lock"))
        .env_remove("COW_PROFILE")
        .env_remove("COW_SET")
        .output()
        .unwrap()
}

#[test]
fn a_run_that_ended_early_never_replaces_a_good_one() {
    let dir = tempfile::tempdir().unwrap();
    assert!(cli(dir.path(), &["run", "--only", "ok"]).status.success());
    let good = cache::all_records(dir.path());
    let mut partial = run(&fixture::KILLED);
    partial.experiment = "ok".into();
    cache::store(dir.path(), &partial).unwrap();
    // The good result is still what the page shows, with the newer failure noted.
    let md = String::from_utf8_lossy(&cli(dir.path(), &["table", "steady"]).stdout).into_owned();
    assert!(md.contains("| 6 |"), "{md}");
    assert!(md.contains("was killed (signal 9"), "{md}");
    assert_eq!(
        cache::all_records(dir.path())
            .iter()
            .filter(|r| r.is_ok())
            .count(),
        good.len()
    );
    // And `run --missing` still counts the good result as current.
    let out = cli(dir.path(), &["run", "--only", "ok", "--missing"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("up to date"));
}

#[test]
fn run_missing_measures_only_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path(), &["run", "--only", "ok", "--missing"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok in"));
    let before = cache::all_records(dir.path());
    let out = cli(dir.path(), &["run", "--only", "ok", "--missing"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("up to date"), "{s}");
    // Nothing was measured: the stored record is the same one.
    assert_eq!(cache::all_records(dir.path()), before);
    // The table renders the stored result with its provenance.
    let out = cli(dir.path(), &["table", "steady"]);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("| 6 |") && md.contains("cow-provenance"),
        "{md}"
    );
    assert!(md.contains("6 rounds, a fresh process per round"), "{md}");
    assert!(md.contains("n = 3"), "{md}");
}

/// Issue 19: `--missing` decided what was missing before waiting for the lock, so a
/// second `make build` re-measured everything the first had just stored. It looks
/// again once it holds the lock.
#[test]
fn run_missing_looks_again_once_it_holds_the_lock() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("measure.lock");
    let held = cache::MeasureLock::acquire_at(&lock).unwrap();
    let mut child = Command::new(exe())
        .args(["run", "--only", "ok", "--missing"])
        .env("COW_RESULTS_DIR", dir.path())
        .env("COW_LOCK_FILE", &lock)
        .env_remove("COW_PROFILE")
        .env_remove("COW_SET")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until it says it waits for the lock: it has decided the result is missing.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("waiting for the measurement") {
                let _ = tx.send(None);
            }
            all.push_str(&line);
            all.push('\n');
        }
        let _ = tx.send(Some(all));
    });
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(60)).unwrap(),
        None,
        "it never waited for the lock"
    );
    // Meanwhile the other build stores the result.
    let stored = run(&fixture::OK);
    cache::store(dir.path(), &stored).unwrap();
    drop(held);
    let out = child.wait_with_output().unwrap();
    let err = rx.recv_timeout(Duration::from_secs(60)).unwrap().unwrap();
    assert!(out.status.success(), "{err}");
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("up to date"), "{s}{err}");
    assert!(!err.contains("measuring "), "{err}");
    let now = cache::all_records(dir.path());
    assert_eq!(now.len(), 1);
    assert_eq!(
        now[0].provenance.measured_unix,
        stored.provenance.measured_unix
    );
}

#[test]
fn parameters_are_set_validated_and_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let out = cli(dir.path(), &["run", "--only", "ok", "--set", "n=40"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let set = cache::all_records(dir.path());
    assert_eq!(set.len(), 1);
    assert_eq!(set[0].param("n"), Some(40.0));
    assert!(!set[0].default_params());
    // The book's default result is not replaced: the table measures the default.
    let out = cli(dir.path(), &["table", "steady"]);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("n = 3") && !md.contains("(set)"), "{md}");
    let out = Command::new(exe())
        .args(["table", "steady"])
        .env("COW_RESULTS_DIR", dir.path())
        .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
        .env("COW_SET", "fixture.n=40 brigades.x=1")
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("n = 40 (set)"), "{md}");
    let out = Command::new(exe())
        .args(["table", "steady"])
        .env("COW_RESULTS_DIR", dir.path())
        .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
        .env("COW_SET", "n=40")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names no chapter"));
    // Issue 19: a chapter's name misspelt was skipped, and the default result shown.
    for (set, args) in [
        ("brigdes.tasks=2000", &["table", "steady"][..]),
        ("fixtur.n=40", &["table", "steady"][..]),
        ("brigdes.tasks=2000", &["run", "--only", "ok"][..]),
    ] {
        let out = Command::new(exe())
            .args(args)
            .env("COW_RESULTS_DIR", dir.path())
            .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
            .env("COW_SET", set)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{set} {args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("names no chapter") && err.contains("brigades"),
            "{err}"
        );
    }
    for (args, expect) in [
        (vec!["run", "--set", "n=-1"], "an integer from 1 to 1,000"),
        (vec!["run", "--set", "no_such=1"], "no parameter `no_such`"),
        (vec!["run", "--set", "n"], "NAME=VALUE"),
        (vec!["run", "--profile", "fast"], "quick"),
        (vec!["run", "--only", "nonsense"], "sleepy"),
        (vec!["table", "nonsense"], "steady"),
    ] {
        let out = cli(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
    let out = Command::new(exe())
        .args(["table", "steady"])
        .env("COW_RESULTS_DIR", tempfile::tempdir().unwrap().path())
        .env("COW_PROFILE", "fast")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid profiles: quick, full"));
    // `run` reads COW_PROFILE too when no --profile is given.
    let out = Command::new(exe())
        .args(["run", "--only", "ok"])
        .env("COW_RESULTS_DIR", dir.path())
        .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
        .env("COW_PROFILE", "fast")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid profiles: quick, full"));
}

#[test]
fn corrupt_and_truncated_results_are_measured_again() {
    let dir = tempfile::tempdir().unwrap();
    assert!(cli(dir.path(), &["run", "--only", "ok"]).status.success());
    let path = dir.path().join("fixture").join("ok.quick.release.json");
    let path = if path.exists() {
        path
    } else {
        dir.path().join("fixture").join("ok.quick.debug.json")
    };
    let good = std::fs::read(&path).unwrap();
    for bad in [&good[..good.len() / 3], b"\x00 not json at all".as_slice()] {
        std::fs::write(&path, bad).unwrap();
        let out = cli(dir.path(), &["table", "steady"]);
        let md = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            md.contains("| 6 |") && md.contains("cow-provenance"),
            "{md}"
        );
        // The bad file was replaced by a good one.
        assert!(harness::cache::load_file(&path).is_some());
    }
}

#[test]
fn a_failed_run_never_hides_a_good_one_on_the_page() {
    let dir = tempfile::tempdir().unwrap();
    assert!(cli(dir.path(), &["run", "--only", "ok"]).status.success());
    // A failed full run of the same code, stored beside the good quick one.
    let mut failed = cache::all_records(dir.path()).remove(0);
    failed.profile = Profile::Full;
    failed.status = Status::TimedOut { after_s: 32.0 };
    failed.rounds.clear();
    failed.provenance.measured_unix += 60;
    failed.provenance.measured_at = "later".into();
    cache::store(dir.path(), &failed).unwrap();
    let md = String::from_utf8_lossy(&cli(dir.path(), &["table", "steady"]).stdout).into_owned();
    assert!(md.contains("| 6 |"), "{md}");
    assert!(
        md.contains(
            "the full run of later timed out after 32 s and was stopped; showing the quick result"
        ),
        "{md}"
    );
    // A table of an experiment that fails says why, in the page.
    let md = String::from_utf8_lossy(&cli(dir.path(), &["table", "fails"]).stdout).into_owned();
    assert!(
        md.contains(
            "No result for `fails` on this machine:** the experiment failed: no such device"
        ),
        "{md}"
    );
}

#[test]
fn two_measurements_run_one_after_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = || {
        Command::new(exe())
            .args(["run", "--only", "sleepy"])
            .env("COW_RESULTS_DIR", dir.path())
            .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = spawn();
    std::thread::sleep(Duration::from_millis(50));
    let b = spawn();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    assert!(err.contains("waiting for the measurement of pid"), "{err}");
}

#[cfg(target_os = "linux")]
#[test]
fn killing_a_measurement_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(exe())
        .args(["run", "--only", "hangs"])
        .env("COW_RESULTS_DIR", dir.path())
        .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // The worker is a child of the measuring process.
    let workers = || -> Vec<u32> {
        let Ok(text) =
            std::fs::read_to_string(format!("/proc/{}/task/{}/children", child.id(), child.id()))
        else {
            return Vec::new();
        };
        text.split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    let w = workers();
    assert!(!w.is_empty(), "a worker is running");
    child.kill().unwrap();
    child.wait().unwrap();
    // The worker dies with its parent.
    let t0 = Instant::now();
    while w
        .iter()
        .any(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
    {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "worker {w:?} outlived its parent"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The lock is free again and a measurement succeeds; no stray files.
    assert!(cli(dir.path(), &["run", "--only", "ok"]).status.success());
    let names: Vec<String> = walk(dir.path());
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

#[test]
fn the_test_chapter_registry_is_consistent() {
    CHAPTER.check().unwrap();
}

/// A worker whose code key is not the measurement's (the binary was rebuilt in
/// between) refuses to measure, and says why.
#[test]
fn a_worker_of_other_code_refuses_to_measure() {
    let out = Command::new(exe())
        .args([
            "__worker",
            "fixture",
            "ok",
            "--key",
            "not-this-code",
            "--profile",
            "quick",
        ])
        .args(["--deadline-ms", "5000", "--round", "0", "--parent"])
        .arg(std::process::id().to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("COW-WORKER-RESULT") && stdout.contains("rebuilt while it measured"),
        "{stdout}"
    );
}

/// Issue 28, item 17: a setting that is not UTF-8 is refused with its name and exit
/// status 2, not ignored; one set to nothing (the empty text) is unset, for every setting alike.
#[cfg(unix)]
#[test]
fn settings_that_are_not_text_are_refused_and_empty_ones_are_unset() {
    use std::os::unix::ffi::OsStrExt;
    let not_text = std::ffi::OsStr::from_bytes(b"fixture.n=4\xff0");
    let dir = tempfile::tempdir().unwrap();
    for var in ["COW_SET", "COW_PROFILE", "COW_THRESHOLD"] {
        for args in [&["table", "steady"][..], &["run", "--only", "ok"][..]] {
            let out = Command::new(exe())
                .args(args)
                .env("COW_RESULTS_DIR", dir.path())
                .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
                .env_remove("COW_SET")
                .env_remove("COW_PROFILE")
                .env_remove("COW_THRESHOLD")
                .env(var, not_text)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{var} {args:?}: {err}");
            assert!(
                err.contains(var) && err.contains("not UTF-8"),
                "{var} {args:?}: {err}"
            );
        }
    }
    // Empty is unset: the default (quick) result, with the default parameters.
    let out = Command::new(exe())
        .args(["table", "steady"])
        .env("COW_RESULTS_DIR", dir.path())
        .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
        .env("COW_SET", "")
        .env("COW_PROFILE", "")
        .env("COW_THRESHOLD", "")
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(md.contains("n = 3") && md.contains("quick"), "{md}");
}
