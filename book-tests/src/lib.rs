//! Builds the book with the reader's own pinned tools (`make tools`: `.tools/bin/mdbook`
//! and `.tools/bin/mdbook-cmdrun`, built from `tools/`), exactly as `make build` does,
//! and offers the helpers the tests use to read the result.

pub mod registry;

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The hostile results files (in `tests/fixtures/hostile/`) that the Compare page's
/// script must refuse, each with words of the reason it gives: the Node test and the
/// browser test check the same list.
pub const HOSTILE_COMPARE_FILES: [(&str, &str); 34] = [
    ("unknown-unit.json", "unknown unit"),
    ("string-median.json", "not a number"),
    ("absurd-value.json", "not a number"),
    ("lo-above-hi.json", "does not hold its median"),
    ("backtick-name.json", "no valid name"),
    ("control-characters.json", "control"),
    // Issue 28: what the command line refused and the page accepted.
    ("markdown-date.json", "not a date"),
    ("include-machine.json", "mdBook directive"),
    ("format-machine.json", "format characters"),
    ("object-param.json", "not a named number"),
    ("confidence-above-one.json", "confidence"),
    ("drift-above-one.json", "drift"),
    ("no-rounds.json", "how many rounds"),
    ("duplicate-key.json", "twice"),
    ("byte-order-mark.json", "byte-order mark"),
    // Issue 35, item 12: what the page accepted and the command line refused (an
    // escaped duplicate key, format characters, texts of records, a parameter name with
    // `-`, a chapter that is a path, 7.0 rounds, a lone surrogate), and the reverse (a
    // key twice inside a round's data); item 13: character references.
    ("escaped-duplicate-key.json", "twice"),
    ("format-tag-character.json", "format characters"),
    ("format-musical.json", "format characters"),
    ("format-in-record-note.json", "format character"),
    ("format-in-record-isolation.json", "format character"),
    ("bidi-in-record.json", "format character"),
    ("directive-in-record.json", "mdBook directive"),
    ("dash-param.json", "not a named number"),
    ("path-chapter.json", "no valid name"),
    ("fractional-rounds.json", "not a whole number"),
    ("lone-surrogate.json", "format characters"),
    ("data-duplicate-key.json", "twice"),
    ("entity-in-reading.json", "format character"),
    ("entity-in-note.json", "format character"),
    // Items 3, 9 and 10: the door's sizes, and a reading below zero, in a record.
    // Issue 35's bounds: no more rounds than the record's profile runs of its
    // experiment (the page reads each budget from its data, `max_rounds`).
    ("many-rounds.json", "profile runs at most 40"),
    (
        "profile-rounds.json",
        "the quick profile runs at most 40 of async-locks/unit-check",
    ),
    ("long-note.json", "longer than the book writes"),
    ("negative-reading.json", "zero or more"),
    // Item 15: a reading in bytes in one round and in nanoseconds in the next.
    ("unit-changes.json", "unit changes"),
];

/// A file the page must refuse for its nesting (JSON.parse would take it): apart from
/// [`HOSTILE_COMPARE_FILES`] only because the browser test chooses files one by one.
pub const DEEP_COMPARE_FILE: (&str, &str) = ("deep-nesting.json", "nests deeper");

/// The book's root (where `book.toml` is).
pub fn book_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("book-tests sits in the book's root")
        .to_path_buf()
}

/// The cargo target folder the tests run from.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                book_root().join(p)
            }
        })
        .unwrap_or_else(|| book_root().join("target"))
}

/// The results folder the tests' book build uses: its own, under `target/`, so
/// whether the tests pass never depends on what ran before them.
pub fn test_results_dir() -> PathBuf {
    target_dir().join("book-tests").join("results")
}

/// Prepares [`test_results_dir`]: only good results that match the current code, taken
/// from the folder's previous contents and from the developer's own results
/// (`target/book-results`: after `make build` or `make regenerate` nothing needs
/// measuring again). Failed, stale, corrupt and half-written records are left behind;
/// whatever is missing is measured by the build, in the quick profile.
pub fn prepare_test_results() -> Result<PathBuf> {
    let dir = test_results_dir();
    let fresh = dir.with_extension("new");
    let _ = std::fs::remove_dir_all(&fresh);
    std::fs::create_dir_all(&fresh)?;
    let importer = target_dir().join("release").join("all-results");
    for from in [dir.clone(), target_dir().join("book-results")] {
        if !from.is_dir() {
            continue;
        }
        let status = Command::new(&importer)
            .arg("import")
            .arg(&from)
            .env("COW_RESULTS_DIR", &fresh)
            .stdout(std::process::Stdio::null())
            .status()
            .with_context(|| format!("cannot run {}", importer.display()))?;
        // Exit 1: nothing of it matched the current code (after a change, everything
        // is measured again); anything else but success is a failure.
        anyhow::ensure!(
            status.success() || status.code() == Some(1),
            "importing results from {} failed",
            from.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&fresh, &dir)?;
    Ok(dir)
}

/// The pages of a built site that hold a failed marker's error, as `make check-site`
/// finds them.
pub fn pages_with_errors(site: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, acc: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, acc);
            } else if p.extension().is_some_and(|x| x == "html")
                && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("cmdrun error"))
            {
                acc.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(site, &mut v);
    v.sort();
    v
}

/// Builds every chapter binary in release mode once, so the book's markers find them
/// ready (one cargo invocation compiles the crates in parallel).
pub fn build_chapter_binaries() -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(book_root())
        // The Makefile's own command, so the release build of `make build` is reused as
        // it is (with book-tests in, its mdbook would be compiled for release too, and
        // the features shared dependencies are built with could differ).
        .args([
            "build",
            "--release",
            "--workspace",
            "--exclude",
            "book-tests",
            "--bins",
            "--quiet",
        ])
        .status()
        .context("cannot run cargo")?;
    anyhow::ensure!(
        status.success(),
        "cargo build --release of the chapters failed"
    );
    Ok(())
}

/// The reader's tools, built once per test process by the Makefile's own `make tools`
/// (nothing to do after `make build`; about a minute on a clean checkout). Returns
/// the folder holding `mdbook` and `mdbook-cmdrun`.
pub fn tools() -> Result<PathBuf> {
    static TOOLS: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    TOOLS
        .get_or_init(|| {
            let status = Command::new("make")
                .current_dir(book_root())
                .args(["--no-print-directory", "-s", "tools"])
                // The tools need no results folder; the Makefile refuses one whose
                // path make cannot handle, which must not stop a test run.
                .env_remove("COW_RESULTS_DIR")
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("cannot run make (it builds the pinned tools): {e}"))?;
            if !status.success() {
                return Err(format!("make tools failed ({status})"));
            }
            Ok(book_root().join(".tools").join("bin"))
        })
        .clone()
        .map_err(|e| anyhow::anyhow!(e))
}

/// Builds the book into `out` as `make build` does: the pinned `mdbook build`, whose
/// cmdrun markers run with `env` added (`COW_PROFILE`, `COW_RESULTS_DIR`) and without
/// the reader's `COW_SET`.
pub fn build_book(out: &Path, env: &[(&str, &Path)]) -> Result<()> {
    let bin = tools()?;
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))?;
    let mut cmd = Command::new(bin.join("mdbook"));
    cmd.current_dir(book_root())
        .arg("build")
        .arg("--dest-dir")
        .arg(out)
        .env("PATH", path)
        .env_remove("COW_SET")
        .stdout(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {}", bin.join("mdbook").display()))?;
    anyhow::ensure!(status.success(), "mdbook build failed ({status})");
    Ok(())
}

/// The chapters listed in SUMMARY.md, as (title, source path relative to src/).
pub fn summary_entries() -> Result<Vec<(String, String)>> {
    let summary = std::fs::read_to_string(book_root().join("src/SUMMARY.md"))?;
    let link = regex::Regex::new(r"\[([^\]]+)\]\(([^)]+\.md)\)").expect("valid regex");
    Ok(link
        .captures_iter(&summary)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect())
}
