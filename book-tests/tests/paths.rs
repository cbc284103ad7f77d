//! Issue 28, items 13 and 14: make splits words on spaces. A results folder with a
//! space (`make build COW_RESULTS_DIR="my results"`) sent results to a folder nobody
//! named, and a checkout whose path held a space failed `make setup` with a cargo
//! error about package names. Both are refused by the Makefile before anything runs,
//! saying why (`make -n`: nothing is built or measured here). Unix only: the Makefile
//! is for make on Linux and macOS.

#![cfg(unix)]

use book_tests::book_root;
use std::process::Command;

fn make_n(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("make")
        .arg("-n")
        .args(args)
        .current_dir(dir)
        .env_remove("COW_RESULTS_DIR")
        .output()
        .expect("make runs")
}

#[test]
fn a_results_folder_with_a_space_is_refused_before_anything_runs() {
    let out = make_n(&book_root(), &["build", "COW_RESULTS_DIR=my results"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("COW_RESULTS_DIR holds a space"), "{err}");
    assert!(out.stdout.is_empty(), "it would have run something");
}

#[test]
fn a_checkout_whose_path_holds_a_space_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spaced = dir.path().join("my checkout");
    std::fs::create_dir_all(&spaced).unwrap();
    std::fs::copy(book_root().join("Makefile"), spaced.join("Makefile")).unwrap();
    let out = make_n(&spaced, &["setup"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("path holds a space"), "{err}");
    // Without a space the same Makefile is accepted.
    let out = make_n(&book_root(), &["test"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 35, item 14: the Makefile passes a reader's own `COW_SET` on to what it runs
/// (it used to blank it with `SET`'s empty default, so `COW_SET=brigades.tasks=abc make
/// measure` measured nothing and said nothing); `SET=` still sets it.
#[test]
fn a_readers_cow_set_reaches_the_commands() {
    let shown = |env: Option<&str>, args: &[&str]| {
        let mut cmd = Command::new("make");
        cmd.args([
            "--no-print-directory",
            "--eval",
            "show-set: ; @echo \"[$$COW_SET]\"",
        ])
        .args(args)
        .arg("show-set")
        .current_dir(book_root())
        .env_remove("COW_SET")
        .env_remove("SET");
        if let Some(v) = env {
            cmd.env("COW_SET", v);
        }
        let out = cmd.output().expect("make runs");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(
        shown(Some("brigades.tasks=abc"), &[]),
        "[brigades.tasks=abc]"
    );
    assert_eq!(
        shown(None, &["SET=brigades.tasks=2000"]),
        "[brigades.tasks=2000]"
    );
    assert_eq!(shown(None, &[]), "[]");
}
