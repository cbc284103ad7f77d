//! What the command-line tests of `all-results` share: the hostile fixtures' folder, a
//! run of the binary against a results folder of the test's own, and its output.
#![allow(dead_code)] // each test file uses its own part

use harness::machine::Machine;
use harness::record::{Provenance, RoundRecord, Status};
use harness::{Profile, Reading, Record, Unit};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A file of `book-tests/tests/fixtures/hostile/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../book-tests/tests/fixtures/hostile")
        .join(name)
}

/// `all-results ARGS` with `results` as its results folder, a lock of its own, and no
/// parameters or freshness check from the caller's environment.
pub fn all_results(args: &[&std::ffi::OsStr], results: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_all-results"))
        .args(args)
        .env("COW_RESULTS_DIR", results)
        .env("COW_LOCK_FILE", results.join("measure.lock"))
        .env_remove("COW_SET")
        .env_remove("COW_CHECK_FRESH")
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A round of short sleeps' `calls` as the chapter's type reads it (import decodes every
/// round and holds each stored reading to the ones the code gives for its data, issue
/// 35): one loop of the thread's own slack per reading, `(key, ns per call)`, of 500
/// calls. Readings of another OS's calls may be given too; its records keep them.
pub fn calls_data(readings: &[(&str, f64)]) -> serde_json::Value {
    let loops: Vec<serde_json::Value> = readings
        .iter()
        .map(|(key, ns)| {
            serde_json::json!({
                "id": "fixture", "key": key, "planned": 500, "slack": "Default",
                "sample": {"calls": 500, "ns": ns}
            })
        })
        .collect();
    serde_json::json!({"thread_slack_ns": null, "low_slack_ns": 50_000, "loops": loops})
}

/// A good quick `calls` record of short sleeps carrying the current code's key: three
/// rounds of the given readings (per call, ns), each round's value a little apart so
/// the interval is not a point, and `data` as every round's data.
pub fn calls_record(
    m: Machine,
    readings: &[(&str, f64)],
    details: &[(&str, &str)],
    data: serde_json::Value,
) -> Record {
    let key = all_results::chapter("short-sleeps").unwrap().key;
    let rounds = (0..3)
        .map(|i| RoundRecord {
            index: i,
            readings: readings
                .iter()
                .map(|(k, v)| Reading::new(*k, Unit::Nanos, v * (1.0 + 0.01 * f64::from(i))))
                .collect(),
            data: data.clone(),
            ..Default::default()
        })
        .collect();
    Record {
        format: harness::record::FORMAT,
        chapter: "short-sleeps".into(),
        experiment: "calls".into(),
        key: key.into(),
        profile: Profile::Quick,
        build: "release".into(),
        provenance: Provenance {
            machine: m,
            measured_at: "2026-06-01 12:00:00 UTC".into(),
            measured_unix: 1_780_315_200,
        },
        params: Vec::new(),
        details: details
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        isolation: "a fresh process per round".into(),
        status: Status::Ok,
        notes: Vec::new(),
        wall_s: 3.0,
        rounds,
    }
}

/// A results folder as a machine's build leaves it, holding `r` as
/// `short-sleeps/calls.quick.release.json`.
pub fn results_folder(root: &Path, name: &str, r: &Record) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("short-sleeps")).unwrap();
    std::fs::write(
        dir.join("short-sleeps").join("calls.quick.release.json"),
        serde_json::to_vec(r).unwrap(),
    )
    .unwrap();
    dir
}
