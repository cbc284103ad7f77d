//! The result cache: JSON files under `target/book-results/<chapter>/` (or
//! `$COW_RESULTS_DIR`), written atomically, matched to the compiled measuring code by
//! its key.
//!
//! One file per experiment, profile, build kind and parameter set holds the newest
//! *good* run; a failed or timed-out run goes to a `.failed.json` beside it and never
//! replaces a good one. The book shows the best good result (full, else quick) and
//! says when a newer run failed.
//!
//! Measuring holds an advisory lock on `.measure.lock` in the results folder, so two
//! measurements on one machine (an `mdbook serve` rebuild during `make regenerate`)
//! run one after the other instead of disturbing each other.

use crate::params::tag;
use crate::profile::Profile;
use crate::record::{FORMAT, Record};
use anyhow::Context;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Where results live: `$COW_RESULTS_DIR`, else `book-results/` in the cargo target
/// folder the running binary was built into.
pub fn results_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("COW_RESULTS_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    // target/<profile>/binary -> target/
    dir.pop();
    dir.join("book-results")
}

/// What identifies one stored result: chapter, experiment, profile, build kind and
/// (when not all defaults) a tag of the parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot<'a> {
    pub chapter: &'a str,
    pub experiment: &'a str,
    pub profile: Profile,
    pub build: &'a str,
    pub params: Option<String>,
}

impl Slot<'_> {
    fn stem(&self) -> String {
        let mut s = format!("{}.{}.{}", self.experiment, self.profile.name(), self.build);
        if let Some(t) = &self.params {
            s.push('.');
            s.push_str(t);
        }
        s
    }

    pub fn good_path(&self, dir: &Path) -> PathBuf {
        dir.join(self.chapter).join(format!("{}.json", self.stem()))
    }

    pub fn failed_path(&self, dir: &Path) -> PathBuf {
        dir.join(self.chapter)
            .join(format!("{}.failed.json", self.stem()))
    }
}

/// The slot a record belongs in.
pub fn slot_of(r: &Record) -> Slot<'_> {
    Slot {
        chapter: &r.chapter,
        experiment: &r.experiment,
        profile: r.profile,
        build: &r.build,
        params: tag(&r.params),
    }
}

/// Writes `bytes` to `target` atomically: a temporary file named after this process
/// in the same folder, then a rename. A reader never sees half a file.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let folder = target.parent().context("a result path has a folder")?;
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    remove_stray_temporaries(folder);
    let name = target
        .file_name()
        .context("a result path has a file name")?
        .to_string_lossy();
    let tmp = folder.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, target)
        .with_context(|| format!("cannot move {} into place", tmp.display()))
}

/// Removes temporary files left by a writer that was killed (its process is gone).
pub fn remove_stray_temporaries(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_suffix(".tmp")
            .and_then(|s| s.rsplit('.').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !name.starts_with('.') || pid == std::process::id() || process_alive(pid) {
            continue;
        }
        let _ = std::fs::remove_file(e.path());
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true // without a cheap check, keep the file
}

/// Stores a record: a good one replaces the slot's good file (and any older failure
/// beside it); a failed one is kept beside the good one, which it never replaces.
pub fn store(dir: &Path, record: &Record) -> anyhow::Result<PathBuf> {
    let slot = slot_of(record);
    // Compact: a full run's rounds of pooled distributions run to megabytes pretty-printed.
    let json = serde_json::to_vec(record)?;
    if record.is_ok() {
        let target = slot.good_path(dir);
        write_atomically(&target, &json)?;
        let _ = std::fs::remove_file(slot.failed_path(dir));
        Ok(target)
    } else {
        let target = slot.failed_path(dir);
        write_atomically(&target, &json)?;
        Ok(target)
    }
}

/// A stored record, if the file exists, parses and has the current format. A
/// corrupt or truncated file reads as absent (the next good run replaces it).
pub fn load_file(path: &Path) -> Option<Record> {
    let bytes = std::fs::read(path).ok()?;
    let r: Record = serde_json::from_slice(&bytes).ok()?;
    (r.format == FORMAT).then_some(r)
}

/// What the book shows for one experiment.
#[derive(Debug, Clone)]
pub struct Shown {
    pub record: Record,
    /// Newer runs of the same code that failed, newest first; the shown record is
    /// older (or the shown record is itself the newest failure, when no good one exists).
    pub newer_failures: Vec<Record>,
}

/// The record the book should show for an experiment with these parameters: the
/// good full-profile result matching `key`, else the good quick one; failed runs
/// newer than it are listed. With no good result, the newest failed one (so the
/// page can say what went wrong). `None`: nothing matches the code, measure.
pub fn best(
    dir: &Path,
    chapter: &str,
    experiment: &str,
    key: &str,
    build: &str,
    params: Option<String>,
) -> Option<Shown> {
    let slot = |profile| Slot {
        chapter,
        experiment,
        profile,
        build,
        params: params.clone(),
    };
    let matching = |p: PathBuf| load_file(&p).filter(|r| r.key == key);
    let good = [Profile::Full, Profile::Quick]
        .into_iter()
        .find_map(|p| matching(slot(p).good_path(dir)));
    let mut failures: Vec<Record> = Profile::ALL
        .into_iter()
        .filter_map(|p| matching(slot(p).failed_path(dir)))
        .collect();
    failures.sort_by_key(|r| std::cmp::Reverse(r.provenance.measured_unix));
    match good {
        Some(record) => {
            failures.retain(|f| f.provenance.measured_unix >= record.provenance.measured_unix);
            Some(Shown {
                record,
                newer_failures: failures,
            })
        }
        None if !failures.is_empty() => {
            let record = failures.remove(0);
            Some(Shown {
                record,
                newer_failures: Vec::new(),
            })
        }
        None => None,
    }
}

/// Every record stored under `dir` (good and failed), for the appendix and
/// `changes`; unreadable files are skipped.
pub fn all_records(dir: &Path) -> Vec<Record> {
    let mut out = Vec::new();
    let Ok(chapters) = std::fs::read_dir(dir) else {
        return out;
    };
    for ch in chapters.flatten().filter(|e| e.path().is_dir()) {
        let Ok(files) = std::fs::read_dir(ch.path()) else {
            continue;
        };
        for f in files.flatten() {
            let p = f.path();
            if p.extension().is_some_and(|x| x == "json")
                && let Some(r) = load_file(&p)
            {
                out.push(r);
            }
        }
    }
    out
}

/// Copies into `to` every good record of `from` whose key `current_key` accepts
/// (returns the chapter's current key), so a fresh results folder starts from the
/// results that match the code. Returns how many were copied.
pub fn import_good(from: &Path, to: &Path, current_key: impl Fn(&str) -> Option<String>) -> usize {
    let mut copied = 0;
    for r in all_records(from) {
        if r.is_ok() && current_key(&r.chapter).is_some_and(|k| k == r.key) && store(to, &r).is_ok()
        {
            copied += 1;
        }
    }
    copied
}

/// The machine-wide measuring lock, held while measuring. Released when dropped or
/// when the process dies (an advisory `flock`).
pub struct MeasureLock {
    _file: std::fs::File,
}

/// The lock's file: one per machine (and user), whatever results folder a measurement
/// writes to, so that `cargo test`, a second checkout or a `COW_RESULTS_DIR` run
/// cannot measure at the same time as `make regenerate`. `$COW_LOCK_FILE` moves it.
pub fn lock_path() -> PathBuf {
    std::env::var_os("COW_LOCK_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("cost-of-waiting.measure.lock"))
}

impl MeasureLock {
    /// Takes the machine's measuring lock ([`lock_path`]), waiting for another
    /// measurement to end and saying so on stderr.
    pub fn acquire() -> anyhow::Result<MeasureLock> {
        let path = lock_path();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                eprintln!(
                    "waiting for the measurement of pid {} to finish (one measurement at a time on this machine) …",
                    if holder.is_empty() { "?" } else { holder }
                );
                file.lock().context("cannot take the measuring lock")?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).context("cannot take the measuring lock");
            }
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        file.flush()?;
        Ok(MeasureLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use crate::record::{Provenance, Status};

    pub(crate) fn record(profile: Profile, key: &str, status: Status, at: u64) -> Record {
        Record {
            format: FORMAT,
            chapter: "ch".into(),
            experiment: "exp".into(),
            key: key.into(),
            profile,
            build: "release".into(),
            provenance: Provenance {
                machine: Machine::current(),
                measured_at: format!("t{at}"),
                measured_unix: at,
            },
            params: vec![],
            details: vec![],
            isolation: "a fresh process per round".into(),
            status,
            notes: vec![],
            wall_s: 0.5,
            rounds: vec![],
        }
    }

    fn best_of(dir: &Path, key: &str) -> Option<Shown> {
        best(dir, "ch", "exp", key, "release", None)
    }

    #[test]
    fn full_beats_quick_and_stale_code_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        assert!(best_of(dir.path(), "k1").is_none());
        store(dir.path(), &record(Profile::Quick, "k1", Status::Ok, 1)).unwrap();
        assert_eq!(
            best_of(dir.path(), "k1").unwrap().record.profile,
            Profile::Quick
        );
        store(dir.path(), &record(Profile::Full, "k1", Status::Ok, 2)).unwrap();
        assert_eq!(
            best_of(dir.path(), "k1").unwrap().record.profile,
            Profile::Full
        );
        // Full from other code gives way to a matching quick one.
        store(dir.path(), &record(Profile::Full, "old", Status::Ok, 3)).unwrap();
        assert_eq!(
            best_of(dir.path(), "k1").unwrap().record.profile,
            Profile::Quick
        );
        assert!(best_of(dir.path(), "k2").is_none());
    }

    #[test]
    fn a_failed_run_never_hides_a_good_one() {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 10)).unwrap();
        let failed = Status::TimedOut { after_s: 32.0 };
        store(dir.path(), &record(Profile::Full, "k", failed.clone(), 20)).unwrap();
        let shown = best_of(dir.path(), "k").unwrap();
        assert_eq!(shown.record.profile, Profile::Quick);
        assert!(shown.record.is_ok());
        assert_eq!(shown.newer_failures.len(), 1);
        assert_eq!(shown.newer_failures[0].status, failed);
        // A later good full run replaces the failure.
        store(dir.path(), &record(Profile::Full, "k", Status::Ok, 30)).unwrap();
        let shown = best_of(dir.path(), "k").unwrap();
        assert_eq!(shown.record.profile, Profile::Full);
        assert!(shown.newer_failures.is_empty());
        // With no good run at all, the failure is shown so the page can say why.
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), &record(Profile::Quick, "k", failed.clone(), 5)).unwrap();
        let shown = best_of(dir.path(), "k").unwrap();
        assert_eq!(shown.record.status, failed);
    }

    #[test]
    fn corrupt_truncated_and_old_format_files_read_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let p = store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        let text = std::fs::read(&p).unwrap();
        std::fs::write(&p, &text[..text.len() / 2]).unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        std::fs::write(&p, b"\x00\xffnot json").unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        let mut old = record(Profile::Quick, "k", Status::Ok, 1);
        old.format = 1;
        std::fs::write(&p, serde_json::to_vec(&old).unwrap()).unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        // A good run replaces the bad file.
        store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 2)).unwrap();
        assert!(best_of(dir.path(), "k").is_some());
    }

    #[test]
    fn debug_release_and_parameters_never_mix() {
        let dir = tempfile::tempdir().unwrap();
        let mut debug = record(Profile::Quick, "k", Status::Ok, 1);
        debug.build = "debug".into();
        store(dir.path(), &debug).unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        let mut set = record(Profile::Quick, "k", Status::Ok, 1);
        set.params = vec![crate::params::ParamValue {
            name: "tasks".into(),
            value: 40.0,
            integer: true,
            unit: String::new(),
            default: false,
        }];
        let p = store(dir.path(), &set).unwrap();
        assert!(p.to_string_lossy().contains(".p"), "{}", p.display());
        assert!(best_of(dir.path(), "k").is_none());
        assert!(best(dir.path(), "ch", "exp", "k", "release", tag(&set.params)).is_some());
    }

    #[test]
    fn stray_temporaries_of_dead_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("ch");
        std::fs::create_dir_all(&folder).unwrap();
        // pid 0x7ffffffe is not a live process; our own pid is.
        let dead = folder.join(".exp.quick.release.json.2147483646.tmp");
        let ours = folder.join(format!(".x.json.{}.tmp", std::process::id()));
        std::fs::write(&dead, b"half").unwrap();
        std::fs::write(&ours, b"mine").unwrap();
        store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        assert!(!dead.exists());
        assert!(ours.exists());
    }

    #[test]
    fn import_takes_only_good_matching_records() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        store(from.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        store(from.path(), &record(Profile::Full, "old", Status::Ok, 1)).unwrap();
        let failed = Status::Failed { error: "x".into() };
        store(from.path(), &record(Profile::Full, "k", failed, 2)).unwrap();
        let n = import_good(from.path(), to.path(), |_| Some("k".into()));
        assert_eq!(n, 1);
        assert_eq!(all_records(to.path()).len(), 1);
    }

    #[test]
    fn the_lock_excludes_a_second_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("machine.lock");
        // SAFETY (of intent): no other test of this binary reads COW_LOCK_FILE.
        unsafe { std::env::set_var("COW_LOCK_FILE", &path) };
        let held = MeasureLock::acquire().unwrap();
        unsafe { std::env::remove_var("COW_LOCK_FILE") };
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            std::process::id().to_string()
        );
        // A second open file description cannot take it while it is held.
        let other = std::fs::File::open(&path).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
