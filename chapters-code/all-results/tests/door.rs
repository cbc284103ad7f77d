//! Issue 28, round 2: one door for every results file, and mistakes that say what they
//! are. Each test here failed on the code before it: a FIFO hung `import`, a huge file
//! was read whole, rounds the chapter could not read replaced a good result, `import`
//! of the wrong thing said "imported 0" and exited 0, `stamp` of a missing site
//! measured first, a folder that could not be written was found out after measuring,
//! and `compare` blamed the wrong thing for a key given twice or a byte-order mark.
//! Correctness only: no figure here is measured.

use crate::common;
use common::{all_results, calls_data, calls_record, fixture, results_folder, stderr, stdout};
use harness::Record;
use harness::machine::Machine;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A good `calls` record from this kind of machine, with `data` as every round's.
fn calls_on_this_machine(data: serde_json::Value) -> Record {
    let mut machine = Machine::current();
    machine.build = "release".into();
    calls_record(machine, &[("sleep(0)", 100.0)], &[], data)
}

fn good_calls() -> Record {
    calls_on_this_machine(calls_data())
}

const STORED: &str = "short-sleeps/calls.quick.release.json";

/// Item 7: rounds of `{}` passed the schema and replaced the good result; the page then
/// had nothing to show, and `make build` did not measure again.
#[test]
fn import_refuses_rounds_the_chapter_cannot_read_and_keeps_the_good_result() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    let good = results_folder(root.path(), "good", &good_calls());
    let out = all_results(&["import".as_ref(), good.as_os_str()], &results);
    assert!(stdout(&out).starts_with("imported 1 good"), "{out:?}");
    let kept = std::fs::read(results.join(STORED)).unwrap();
    let empty = results_folder(
        root.path(),
        "empty",
        &calls_on_this_machine(serde_json::json!({})),
    );
    let out = all_results(&["import".as_ref(), empty.as_os_str()], &results);
    // Nothing imported is a failure that says why (issue 35, item 8).
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr(&out).contains("nothing imported"), "{out:?}");
    assert!(
        stderr(&out).contains("does not have the shape of `calls`'s rounds"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(results.join(STORED)).unwrap(), kept);
}

/// Item 12: a missing path, a results bundle and a flat folder each gave "imported 0
/// good results", exit 0.
#[test]
fn import_of_the_wrong_thing_says_what_it_was_given() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    let missing = root.path().join("no-such-folder");
    let out = all_results(&["import".as_ref(), missing.as_os_str()], &results);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("neither a results folder nor a results bundle"),
        "{}",
        stderr(&out)
    );
    // A folder with nothing of this book in it.
    let blank = root.path().join("blank");
    std::fs::create_dir_all(&blank).unwrap();
    let out = all_results(&["import".as_ref(), blank.as_os_str()], &results);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("holds no results files"), "{out:?}");
    // A flat folder: the record without its chapter's folder is imported.
    let flat = root.path().join("flat");
    std::fs::create_dir_all(&flat).unwrap();
    std::fs::write(
        flat.join("calls.quick.release.json"),
        serde_json::to_vec(&good_calls()).unwrap(),
    )
    .unwrap();
    let out = all_results(&["import".as_ref(), flat.as_os_str()], &results);
    assert!(stdout(&out).starts_with("imported 1 good"), "{out:?}");
    // A results bundle, as `all-results json` writes it: its records are imported.
    let bundle = all_results::Bundle::of(vec![good_calls()]);
    let path = root.path().join("cost-of-waiting-results.json");
    std::fs::write(&path, serde_json::to_vec(&bundle).unwrap()).unwrap();
    let other = root.path().join("other-results");
    let out = all_results(&["import".as_ref(), path.as_os_str()], &other);
    assert!(stdout(&out).starts_with("imported 1 good"), "{out:?}");
    assert!(other.join(STORED).is_file());
    // The appendix's download keeps no rounds: refused, saying which file to take.
    let figures_only = all_results::Bundle::of(vec![good_calls()]).without_round_data();
    let path = root.path().join("download.json");
    std::fs::write(&path, serde_json::to_vec(&figures_only).unwrap()).unwrap();
    let out = all_results(&["import".as_ref(), path.as_os_str()], &other);
    assert!(
        stderr(&out).contains("its rounds were left out"),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Items 5 and 6: a FIFO named `*.json` hung `import` (and every reader of results);
/// a huge record was read whole and stored; a link to /dev/zero was read until memory
/// ran out. Each is refused now, without blocking, and the rest is imported.
#[cfg(unix)]
#[test]
fn a_fifo_a_device_and_a_huge_file_are_refused_without_reading_them() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    let from = results_folder(root.path(), "from", &good_calls());
    let ch = from.join("short-sleeps");
    let fifo = ch.join("calls.full.release.json");
    mkfifo(&fifo);
    std::os::unix::fs::symlink("/dev/zero", ch.join("sweep.quick.release.json")).unwrap();
    let huge = std::fs::File::create(ch.join("millisecond.quick.release.json")).unwrap();
    huge.set_len(harness::safe::RECORD_CAP + 1).unwrap();
    let start = Instant::now();
    let out = all_results(&["import".as_ref(), from.as_os_str()], &results);
    assert!(start.elapsed() < Duration::from_secs(60), "it blocked");
    assert!(stdout(&out).starts_with("imported 1 good"), "{out:?}");
    let err = stderr(&out);
    for why in ["named pipe (FIFO)", "a device", "more than the 8 MB"] {
        assert!(err.contains(why), "{why}: {err}");
    }
    // The same FIFO in the results folder: a page marker's reader passes it by.
    let stored_fifo = results.join("short-sleeps").join("calls.full.release.json");
    mkfifo(&stored_fifo);
    let start = Instant::now();
    let out = all_results(&["table".as_ref(), "other-os".as_ref()], &results);
    assert!(start.elapsed() < Duration::from_secs(60), "it blocked");
    assert!(out.status.success(), "{out:?}");
}

/// Item 21: `stamp /nonexistent` measured the whole book before finding no site.
#[test]
fn stamp_of_a_missing_site_measures_nothing() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    let out = all_results(
        &["stamp".as_ref(), root.path().join("no-site").as_os_str()],
        &results,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("no built site"), "{}", stderr(&out));
    assert!(!results.exists(), "it measured");
}

/// A source address that could break out of the caption's link is refused, before
/// anything is measured, naming the variable.
#[test]
fn stamp_refuses_a_source_address_that_is_not_plain() {
    let root = tempfile::tempdir().unwrap();
    let site = root.path().join("site");
    std::fs::create_dir(&site).unwrap();
    std::fs::write(site.join("index.html"), "<main></main>").unwrap();
    let results = root.path().join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_all-results"))
        .args(["stamp".as_ref(), site.as_os_str()])
        .env("COW_RESULTS_DIR", &results)
        .env("COW_LOCK_FILE", root.path().join("measure.lock"))
        .env("COW_SOURCE_URL", "https://x\"><script>alert(1)</script>")
        .env_remove("COW_SET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("COW_SOURCE_URL"), "{}", stderr(&out));
    assert!(!results.exists(), "it measured");
}

/// Item 22: a results folder that cannot be written was found out only after
/// measuring ("File exists"). A file where the folder should be is refused first.
#[test]
fn a_results_folder_that_cannot_take_results_is_refused_before_measuring() {
    let root = tempfile::tempdir().unwrap();
    let not_a_folder = root.path().join("results");
    std::fs::write(&not_a_folder, "a file").unwrap();
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_all-results"))
        .args(["measure", "--profile", "quick"])
        .env("COW_RESULTS_DIR", &not_a_folder)
        .env("COW_LOCK_FILE", root.path().join("measure.lock"))
        .env_remove("COW_SET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("is a file, not a folder"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("measuring"),
        "it began measuring: {}",
        stderr(&out)
    );
    assert!(start.elapsed() < Duration::from_secs(60));
}

/// Item 23 and item 9's files: what the Compare page now refuses, the command line
/// refuses too, each for its own reason (a key given twice was blamed on a missing
/// format tag, a byte-order mark on broken JSON).
#[test]
fn compare_names_the_real_cause() {
    let dir = tempfile::tempdir().unwrap();
    for (file, why) in [
        (
            "duplicate-key.json",
            "gives a key twice (duplicate field `format`)",
        ),
        ("byte-order-mark.json", "byte-order mark"),
        ("object-param.json", "is not a number"),
        ("confidence-above-one.json", "not between 0 and 1"),
        ("no-rounds.json", "missing field `rounds`"),
    ] {
        let out = all_results(
            &[
                "compare".as_ref(),
                fixture("good.json").as_os_str(),
                fixture(file).as_os_str(),
            ],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stdout(&out));
        assert!(stderr(&out).contains(why), "{file}: {}", stderr(&out));
    }
    // A file's own text is never what is shown: the figure is written from its numbers.
    let out = all_results(
        &[
            "compare".as_ref(),
            fixture("good.json").as_os_str(),
            fixture("lying-shown.json").as_os_str(),
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{out:?}");
    assert!(!stdout(&out).contains("1.00 ns"), "{}", stdout(&out));
}
