//! What the command-line tests of `all-results` share: the hostile fixtures' folder, a
//! run of the binary against a results folder of the test's own, and its output.
#![allow(dead_code)] // each test file uses its own part

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
