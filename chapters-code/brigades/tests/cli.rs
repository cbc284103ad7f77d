//! The chapter binary: bad names and values are refused with the valid ones; declared
//! parameters reach the rounds; a round under a small `ulimit` reports the limit as a
//! note instead of panicking, hanging or timing a brigade of no members.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_brigades");

fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env(
        "COW_RESULTS_DIR",
        std::env::temp_dir().join(format!("cow-brigades-cli-{}", std::process::id())),
    );
    c
}

#[test]
fn unknown_names_and_bad_values_are_refused_with_the_valid_ones() {
    let out = bin().args(["table", "nonsense"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("variants") && err.contains("answer"), "{err}");

    let out = bin()
        .args(["run", "--only", "variants", "--set", "tasks=-1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("an integer from 2 to 100,000"), "{err}");

    let out = bin().args(["run", "--profile", "slow"]).output().unwrap();
    assert!(!out.status.success());
}

#[test]
fn list_names_every_experiment_and_headline() {
    let out = bin().arg("list").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for name in [
        "variants",
        "sweep",
        "limits",
        "spawn",
        "--set tasks=",
        "threads-per-hop",
        "async-current-socket-per-hop",
        "async-current-channel-per-hop",
        "async-task-bytes",
        "a fresh process per round",
    ] {
        assert!(s.contains(name), "{name} missing from:\n{s}");
    }
}

/// A resource limit a test sets for a worker, as `ulimit -n` or `ulimit -u` would.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, Debug)]
enum Ulimit {
    OpenFiles(u64),
    Processes(u64),
}

/// Runs one round of `experiment` in a worker process under `limit` (soft and hard,
/// like the shell's `ulimit`) and returns its reply.
#[cfg(target_os = "linux")]
fn one_round(limit: Ulimit, experiment: &str, sets: &[&str]) -> serde_json::Value {
    use std::os::unix::process::CommandExt;
    let mut args = vec![
        "__worker".to_string(),
        "brigades".into(),
        experiment.into(),
        // The test is built from the same sources as the binary, so its key is the one.
        "--key".into(),
        brigades::CHAPTER.key.into(),
        "--profile".into(),
        "quick".into(),
        "--deadline-ms".into(),
        "20000".into(),
        "--parent".into(),
        std::process::id().to_string(),
        "--round".into(),
        "0".into(),
    ];
    for s in sets {
        args.extend(["--set".to_string(), s.to_string()]);
    }
    let (resource, value) = match limit {
        Ulimit::OpenFiles(n) => (libc::RLIMIT_NOFILE, n),
        Ulimit::Processes(n) => (libc::RLIMIT_NPROC, n),
    };
    let mut cmd = Command::new(BIN);
    cmd.args(&args);
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &r) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let started = std::time::Instant::now();
    let out = cmd.output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "a round under {limit:?} took too long"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("COW-WORKER-RESULT "))
        .unwrap_or_else(|| {
            panic!(
                "no result under {limit:?}: status {:?}, stderr {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    // The worker answers with the round (`Ok`) or the status that ended it (`Err`).
    assert!(v.get("Ok").is_some(), "the round failed: {v}");
    v["Ok"].clone()
}

#[cfg(target_os = "linux")]
fn notes(out: &serde_json::Value, kind: &str) -> Vec<String> {
    // A round with no notes leaves the field out.
    out["notes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|n| n["kind"] == kind)
        .map(|n| n["text"].as_str().unwrap().to_string())
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn a_set_parameter_reaches_the_round() {
    let out = one_round(
        Ulimit::OpenFiles(4096),
        "variants",
        &["tasks=40", "laps=3", "warmup=1"],
    );
    assert_eq!(out["data"]["tasks"], 40);
    for v in out["data"]["variants"].as_array().unwrap() {
        assert_eq!(v["tasks"], 40, "{v}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn few_open_files_give_limit_notes_and_smaller_brigades() {
    let out = one_round(Ulimit::OpenFiles(64), "variants", &["laps=3", "warmup=1"]);
    let limits = notes(&out, "Limit");
    assert!(
        limits.iter().any(|n| n.contains("RLIMIT_NOFILE")),
        "{limits:?}"
    );
    for v in out["data"]["variants"].as_array().unwrap() {
        assert!(v["tasks"].as_u64().unwrap() >= 2, "{v}");
    }
    let out = one_round(Ulimit::OpenFiles(64), "limits", &["async_tasks=5000"]);
    assert!(
        notes(&out, "Limit")
            .iter()
            .any(|n| n.contains("RLIMIT_NOFILE"))
    );
    let out = one_round(
        Ulimit::OpenFiles(64),
        "sweep",
        &["hops_per_point=200", "max_tasks=1000"],
    );
    assert!(
        notes(&out, "Limit")
            .iter()
            .any(|n| n.contains("RLIMIT_NOFILE"))
    );
}

#[cfg(target_os = "linux")]
#[test]
fn few_processes_give_limit_notes_and_no_thread_rows() {
    // Root is exempt from RLIMIT_NPROC in the kernel; the chapter respects it anyway.
    let out = one_round(Ulimit::Processes(50), "variants", &["laps=3", "warmup=1"]);
    let limits = notes(&out, "Limit");
    assert!(
        limits.iter().any(|n| n.contains("RLIMIT_NPROC")),
        "{limits:?}"
    );
    for v in out["data"]["variants"].as_array().unwrap() {
        assert!(v["tasks"].as_u64().unwrap() >= 2, "{v}");
    }
    let out = one_round(
        Ulimit::Processes(50),
        "variants",
        &["laps=3", "warmup=1", "threads_per_batch=100"],
    );
    assert!(
        notes(&out, "Limit")
            .iter()
            .any(|n| n.contains("RLIMIT_NPROC"))
    );
    let out = one_round(Ulimit::Processes(50), "limits", &["async_tasks=5000"]);
    assert!(
        notes(&out, "Limit")
            .iter()
            .any(|n| n.contains("RLIMIT_NPROC"))
    );
}

#[cfg(target_os = "linux")]
#[test]
fn no_note_names_a_cgroup_folder() {
    let out = one_round(
        Ulimit::OpenFiles(4096),
        "limits",
        &["threads=50", "async_tasks=5000"],
    );
    let text = out.to_string();
    assert!(!text.contains("/sys/fs/cgroup"), "{text}");
    if let Ok(cg) = std::fs::read_to_string("/proc/self/cgroup") {
        for path in cg.lines().filter_map(|l| l.splitn(3, ':').nth(2)) {
            if path.len() > 1 {
                assert!(!text.contains(path), "{path} in {text}");
            }
        }
    }
}
