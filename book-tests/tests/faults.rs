//! Faults a reader's machine can throw at the book, injected on purpose: a killed
//! measurement, tight operating-system limits, a failing marker, bad input. Each must
//! end in a visible note or a clear error — no panic, no hang, nothing left behind.
//! (The harness's own tests cover corrupt, truncated and failed results, timeouts,
//! crashes and concurrent measurements with its test chapter.) Linux only.

#![cfg(target_os = "linux")]

use book_tests::{book_root, build_chapter_binaries, target_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A release binary of the workspace, built once for all tests.
fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    if let Err(e) = BUILT.get_or_init(|| build_chapter_binaries().map_err(|e| format!("{e:#}"))) {
        panic!("{e}");
    }
    target_dir().join("release").join(name)
}

/// Runs a bash command line (bash: `ulimit -u` is not in every `sh`) with the results
/// in `dir`, under a time limit. Its output is read while it runs, so a chatty command
/// cannot fill the pipe and stall.
fn sh(dir: &Path, line: &str, limit: Duration) -> Output {
    let child = Command::new("bash")
        .args(["-c", line])
        .env("COW_RESULTS_DIR", dir)
        // Its own measuring lock: the tests of this file run side by side.
        .env("COW_LOCK_FILE", dir.join("measure.lock"))
        .env_remove("COW_PROFILE")
        .env_remove("COW_SET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("`{line}` hung for more than {limit:?}");
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            out.extend(files(&e.path()));
        } else {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

/// `make build` and `make publish` end with `make check-site`: a page holding a
/// failed marker's error makes it fail, naming the page.
#[test]
fn a_failing_marker_fails_the_build_naming_the_page() {
    let site = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(site.path().join("sub")).unwrap();
    std::fs::write(site.path().join("index.html"), "<p>fine</p>").unwrap();
    let check = || {
        Command::new("make")
            .args(["-s", "--no-print-directory", "-C"])
            .arg(book_root())
            .arg("check-site")
            .arg(format!("SITE={}", site.path().display()))
            .output()
            .unwrap()
    };
    assert!(check().status.success(), "{}", text(&check()));
    std::fs::write(
        site.path().join("sub/brigades.html"),
        "<p><strong>cmdrun error</strong>: 'sh ../x.sh' returned exit code 2 instead of 0.</p>",
    )
    .unwrap();
    let out = check();
    assert!(!out.status.success());
    let t = text(&out);
    assert!(
        t.contains("sub/brigades.html") && t.contains("failed to render"),
        "{t}"
    );
}

/// `kill -9` of a measurement: its worker dies with it, the next run succeeds, and no
/// temporary file is left in the results folder.
#[test]
fn a_killed_measurement_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let exe = bin("spinning-vs-sleeping");
    let mut child = Command::new(&exe)
        .args(["run", "--only", "gaps"])
        .env("COW_RESULTS_DIR", dir.path())
        .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", child.id()))
        .unwrap_or_default();
    assert!(
        !children.trim().is_empty(),
        "no worker was running 0.7 s into the measurement"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let start = Instant::now();
    for pid in children.split_whitespace() {
        while Path::new(&format!("/proc/{pid}")).exists()
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s.contains(") Z "))
        {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "worker {pid} outlived its parent"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let out = sh(
        dir.path(),
        &format!("{} run --only floor --missing", exe.display()),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", text(&out));
    let names = files(dir.path());
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("floor.quick")),
        "{names:?}"
    );
}

/// Tight limits for the brigades: few open files, few processes. The limit probe says
/// which limit stopped it, in a note under the first view of its result on the page
/// (`limit-runs`); nothing panics or hangs.
#[test]
fn the_brigades_meet_tight_limits_with_notes() {
    let exe = bin("brigades");
    for (limit, what) in [
        ("ulimit -n 64", "open files"),
        ("ulimit -u 200", "processes"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = sh(
            dir.path(),
            &format!(
                "{limit} && {0} run --only limits && {0} table limit-runs",
                exe.display()
            ),
            Duration::from_secs(90),
        );
        let t = text(&out);
        assert!(out.status.success(), "{limit}: {t}");
        assert!(!t.contains("panicked"), "{limit}: {t}");
        assert!(
            t.contains("Limit reached"),
            "{limit} ({what}): no Limit note:\n{t}"
        );
    }
}

/// Bad input exits with status 2 and lists what is valid.
#[test]
fn bad_input_is_refused_with_the_valid_choices() {
    let dir = tempfile::tempdir().unwrap();
    let exe = bin("spinning-vs-sleeping");
    for (line, expect) in [
        (
            format!("COW_PROFILE=fast {} run --only floor", exe.display()),
            "quick, full",
        ),
        (format!("{} run --profile fast", exe.display()), "quick"),
        (format!("{} table nonsense", exe.display()), "variants"),
        (
            format!("{} run --set gap_ms=5000", exe.display()),
            "from 0 to 1,000",
        ),
        (
            format!("{} run --set no_such=1", exe.display()),
            "no parameter `no_such`",
        ),
        (
            format!("{} table nonsense", bin("all-results").display()),
            "overview",
        ),
        (
            format!(
                "{} compare /nonexistent.json /nonexistent.json",
                bin("all-results").display()
            ),
            "cannot read",
        ),
    ] {
        let out = sh(dir.path(), &line, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(2), "{line}: {}", text(&out));
        assert!(text(&out).contains(expect), "{line}: {}", text(&out));
    }
}

/// Issue 19: a relative `COW_RESULTS_DIR` was read against `src/`, where the markers
/// run, so `make build` measured twice and wrote into `src/` (which `mdbook serve`
/// watches). `run.sh` makes it absolute against the book's root.
#[test]
fn a_relative_results_folder_is_the_book_root_s() {
    bin("fixture-chapter");
    let rel = format!("target/book-tests/relative-{}", std::process::id());
    let root = book_root();
    let _ = std::fs::remove_dir_all(root.join(&rel));
    let lock = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg("../chapters-code/harness/run.sh")
        .args(["harness/fixture-chapter", "table", "steady"])
        .current_dir(root.join("src"))
        .env("COW_RESULTS_DIR", &rel)
        .env("COW_LOCK_FILE", lock.path().join("measure.lock"))
        .env_remove("COW_PROFILE")
        .env_remove("COW_SET")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !root.join("src").join("target").exists(),
        "results were written under src/"
    );
    let stored = files(&root.join(&rel));
    let _ = std::fs::remove_dir_all(root.join(&rel));
    assert!(
        stored.iter().any(|f| f.ends_with(".json")),
        "nothing stored in the book root's {rel}: {stored:?}"
    );
}
