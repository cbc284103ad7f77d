//! Keeps the book's markers from running stale code.
//!
//! `harness/run.sh` rebuilds a binary when its own crate or the harness changed, but
//! this crate also links every chapter: a stale binary could measure a missing result
//! with old chapter code. So the binary checks the chapters' sources itself, rebuilds
//! with cargo when one is newer than the binary, and runs the new binary instead.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::SystemTime;

const CHECKED: &str = "COW_FRESH_CHECKED";

fn newest_below(dir: &Path, than: SystemTime) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            if let Some(found) = newest_below(&p, than) {
                return Some(found);
            }
        } else if e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|m| m > than)
        {
            return Some(p);
        }
    }
    None
}

/// If a source this binary is built from is newer than the binary, rebuilds `package`
/// in release mode and runs it again with the same arguments; returns its exit code.
/// Returns `None` when the running binary is current (or cannot be checked).
pub fn rerun_if_stale(package: &str, dirs: &[&str]) -> Option<ExitCode> {
    if std::env::var_os(CHECKED).is_some() || cfg!(debug_assertions) {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let built = exe.metadata().and_then(|m| m.modified()).ok()?;
    let changed = dirs
        .iter()
        .find_map(|d| newest_below(Path::new(d), built))?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    eprintln!(
        "{} changed since {package} was built; rebuilding it",
        changed.display()
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--quiet", "--release", "-p", package, "--bins"])
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    if !status.success() {
        eprintln!("error: cargo build -p {package} failed");
        return Some(ExitCode::FAILURE);
    }
    // cargo leaves an up-to-date binary untouched; mark it as checked now.
    let _ = Command::new("touch").arg(&exe).status();
    let code = Command::new(&exe)
        .args(std::env::args_os().skip(1))
        .env(CHECKED, "1")
        .status()
        .ok()?
        .code()
        .unwrap_or(1);
    Some(ExitCode::from(code as u8))
}

/// The source folders of this crate and of every chapter it links (the harness is
/// watched by `run.sh`, and is part of every chapter's code key anyway).
pub fn source_dirs() -> Vec<&'static str> {
    let mut dirs: Vec<&'static str> = crate::CHAPTERS.iter().map(|c| c.dir).collect();
    dirs.push(env!("CARGO_MANIFEST_DIR"));
    dirs
}
