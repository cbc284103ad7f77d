//! The result cache: JSON files under `target/book-results/<chapter>/` (or
//! `$COW_RESULTS_DIR`), written atomically, matched to the compiled measuring code by
//! its key.
//!
//! One file per experiment, profile, build kind and parameter set holds the newest
//! *good* run; a failed or timed-out run goes to a `.failed.json` beside it and never
//! replaces a good one. The book shows the best good result (full, else quick) and
//! says when a newer run failed.
//!
//! Every record read here passes [`crate::validate::record`] first; one that does not
//! is refused with its path and the first reason, and reads as absent.
//!
//! Every file written here (results, failures, `.retried` marks, and through
//! [`write_atomically`] the previous run and the two-runs history of `all-results`)
//! goes into a folder this user owns and no one else can write
//! ([`check_private_folder`]), through a temporary file created new, never through a
//! symbolic link, private (0600), under an unpredictable name.
//!
//! Measuring holds an advisory lock ([`MeasureLock`]) on a per-user file —
//! `$XDG_RUNTIME_DIR/cost-of-waiting.measure.lock`, else one in the user's cache
//! folder or the cargo target folder (see [`lock_path`]) — so two measurements
//! of one user (an `mdbook serve` rebuild during `make regenerate`) run one after the
//! other instead of disturbing each other. Measurements of two different users are not
//! kept apart.

use crate::params::tag;
use crate::profile::Profile;
use crate::record::Record;
use crate::safe::{Folder, Kind, Trust};
use crate::validate;
use anyhow::Context;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Where results live: `$COW_RESULTS_DIR`, else `book-results/` in the cargo target
/// folder the running binary was built into.
pub fn results_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("COW_RESULTS_DIR").filter(|d| !d.is_empty()) {
        // Relative to where the command runs (`make` and `run.sh` make it absolute
        // first, against the book's root).
        let dir = PathBuf::from(dir);
        return std::path::absolute(&dir).unwrap_or(dir);
    }
    default_results_dir()
}

/// `book-results/` in the cargo target folder the running binary was built into.
fn default_results_dir() -> PathBuf {
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

    /// Which build last measured this slot's stored failure again ([`claim_retry`]).
    pub fn retried_path(&self, dir: &Path) -> PathBuf {
        dir.join(self.chapter)
            .join(format!(".{}.retried", self.stem()))
    }
}

/// What identifies "this build": the `mdbook` process (or the tests' `build-book`)
/// this command runs under, by its pid and start time, so every marker of one
/// `mdbook build` (or of one `mdbook serve` session) shares it; a command run by hand
/// is a build of its own. Linux reads it from `/proc`; elsewhere each command is one.
pub fn build_id() -> String {
    #[cfg(target_os = "linux")]
    {
        let stat = |pid: u32| -> Option<(String, u32, String)> {
            let s = crate::procfs::stat(format!("/proc/{pid}/stat"))?;
            Some((s.comm, s.ppid, s.starttime))
        };
        let me = std::process::id();
        let mut pid = me;
        for _ in 0..16 {
            let Some((comm, ppid, start)) = stat(pid) else {
                break;
            };
            if comm == "mdbook" || comm == "build-book" {
                return format!("{comm} {pid} {start}");
            }
            if ppid <= 1 {
                break;
            }
            pid = ppid;
        }
        if let Some((comm, _, start)) = stat(me) {
            return format!("{comm} {me} {start}");
        }
    }
    format!("pid {}", std::process::id())
}

pub fn claim_retry(dir: &Path, failed: &Record) -> bool {
    if failed.is_ok() || validate::record(failed).is_err() {
        return false;
    }
    let path = slot_of(failed).retried_path(dir);
    let id = build_id();
    // Through the door: a FIFO or a huge file there is not read (it is replaced below).
    if crate::safe::read_own_file(&path, MARK_CAP)
        .is_ok_and(|t| t.is_some_and(|t| t == id.as_bytes()))
    {
        return false;
    }
    write_atomically(&path, id.as_bytes()).is_ok()
}

/// The most a `.retried` mark may weigh: it holds one build's name.
const MARK_CAP: u64 = 4096;

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

/// Writes `bytes` to `target` atomically: a new temporary file in the same folder,
/// then a rename. A reader never sees half a file.
///
/// The folder, and every folder above it, is checked on its open handle
/// ([`crate::safe::Folder`], [`crate::safe::Trust::Write`]): it belongs to this user
/// and no one else can write it, and no link another user made is followed on the way
/// (issue 35). The temporary file is created new — never opened if anything (a file, a
/// symbolic link) already has its name, never following a link — readable by this user
/// only (0600), under a name that holds this process's id and a random part, so that no
/// one can plant a link where it will be (issue 28). The rename replaces `target`
/// itself, never what a link there points to.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let folder = target.parent().context("a result path has a folder")?;
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .context("a result path has a file name")?;
    Folder::open(folder, Trust::Write, true)
        .and_then(|f| f.write_atomically(name, bytes))
        .map_err(anyhow::Error::msg)
}

/// Whether results can be stored under `dir`, checked *before* measuring (issue 28: a
/// folder that could not be written was found out only when the first result, minutes
/// of measuring later, failed to store): the folder is created if missing, must pass
/// [`check_private_folder`], and a temporary file is written and removed in it
/// ([`crate::safe::Folder::probe`]).
pub fn check_writable(dir: &Path) -> anyhow::Result<()> {
    check_writable_chapters(dir, &[])
}

/// [`check_writable`] for `dir` and each of the chapter folders `chapters` under it
/// (issue 35: a chapter folder that could not take a result was found out after
/// measuring): each is made if missing, checked and probed.
pub fn check_writable_chapters(dir: &Path, chapters: &[&str]) -> anyhow::Result<()> {
    anyhow::ensure!(
        !dir.exists() || dir.is_dir(),
        "the results folder {} is a file, not a folder (set COW_RESULTS_DIR to a folder)",
        dir.display()
    );
    let root = Folder::open(dir, Trust::Write, true).map_err(anyhow::Error::msg)?;
    root.probe().map_err(anyhow::Error::msg)?;
    for ch in chapters {
        root.child(ch, true)
            .and_then(|f| f.probe())
            .map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// A folder results are written into must belong to this user and be writable by no
/// one else, nor any folder above it but a sticky one: another user who can write it
/// could plant files or links where results go, or replace them. Refused with the
/// reason and what to do. (Elsewhere than Unix there is nothing to check.)
pub fn check_private_folder(folder: &Path) -> anyhow::Result<()> {
    Folder::open(folder, Trust::Write, false)
        .map(|_| ())
        .map_err(anyhow::Error::msg)
}

/// Removes temporary files left by a writer of this book that was killed (its process
/// is gone), in `folder` only when it passes [`check_private_folder`], and only names
/// this book makes ([`crate::safe::temporary_pid`]).
pub fn remove_stray_temporaries(folder: &Path) {
    if let Ok(f) = Folder::open(folder, Trust::Write, false) {
        f.remove_stray_temporaries();
    }
}

/// Stores a record: a good one replaces the slot's good file (and any older failure
/// beside it); a failed one is kept beside the good one, which it never replaces.
/// The record is first made to pass [`validate::record`] ([`validate::sanitize`]) and
/// then checked: a record whose names are not names (a path, `..`) is refused, so the
/// path it is stored at is always made of checked names.
pub fn store(dir: &Path, record: &Record) -> anyhow::Result<PathBuf> {
    let mut record = record.clone();
    validate::sanitize(&mut record);
    validate::record(&record).map_err(|e| anyhow::anyhow!("refused to store a result: {e}"))?;
    let slot = slot_of(&record);
    // Compact: a full run's rounds of pooled distributions run to megabytes pretty-printed.
    let json = serde_json::to_vec(&record)?;
    // A record the door would refuse to read back would be measured again on every
    // build: say so now instead.
    anyhow::ensure!(
        json.len() as u64 <= crate::safe::RECORD_CAP,
        "the result of {}/{} is {} bytes, more than the {} MB a stored record may hold; \
         measure it with fewer rounds or smaller parameters",
        record.chapter,
        record.experiment,
        json.len(),
        crate::safe::RECORD_CAP >> 20
    );
    // The results folder, then the chapter's, each checked on its open handle; every
    // name below is written and removed relative to the chapter's.
    let folder = Folder::open(dir, Trust::Write, true)
        .and_then(|root| root.child(slot.chapter, true))
        .map_err(anyhow::Error::msg)?;
    let name = |p: PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
            .context("a result path has a file name")
    };
    let target = if record.is_ok() {
        slot.good_path(dir)
    } else {
        slot.failed_path(dir)
    };
    folder
        .write_atomically(&name(target.clone())?, &json)
        .map_err(anyhow::Error::msg)?;
    if record.is_ok() {
        folder.remove(&name(slot.failed_path(dir))?);
        folder.remove(&name(slot.retried_path(dir))?);
    }
    Ok(target)
}

/// Reads a results file of anyone's through the door ([`crate::safe::read_results_file`])
/// and checks it against the schema ([`validate::record`]): for files read on purpose
/// (an import, a fixture). `Err` says why it is refused (it cannot be read, is not JSON
/// of a record, or breaks the schema), without the path.
pub fn read_checked(path: &Path) -> Result<Record, String> {
    let bytes = crate::safe::read_results_file(path, crate::safe::RECORD_CAP)?;
    parse_checked(&bytes)
}

/// A record from its bytes, checked against the schema.
pub fn parse_checked(bytes: &[u8]) -> Result<Record, String> {
    validate::check_values(bytes, validate::MAX_RECORD_VALUES)?;
    let r: Record = serde_json::from_slice(bytes)
        .map_err(|e| format!("it is not a result of this book: {e}"))?;
    validate::record(&r)?;
    Ok(r)
}

/// A stored record of this user's results, if the file exists, parses, has the current
/// format and passes the schema, and it and its folders are this user's (or root's)
/// and no one else can write them ([`crate::safe::read_own_file`]). A corrupt,
/// truncated, hostile or foreign file reads as absent (the next good run replaces it);
/// one that exists is named on stderr with the first reason.
pub fn load_file(path: &Path) -> Option<Record> {
    if std::fs::symlink_metadata(path).is_err() {
        return None;
    }
    crate::safe::read_own_file(path, crate::safe::RECORD_CAP)
        .and_then(|b| b.map(|b| parse_checked(&b)).transpose())
        .map_err(|why| warn_ignored(path, &why))
        .ok()
        .flatten()
}

/// Says on stderr that a results file is ignored, and the first reason, both made safe
/// for a terminal: the one wording for every reader that skips a bad file.
pub fn warn_ignored(path: &Path, why: &str) {
    eprintln!(
        "warning: ignoring {}: {}",
        crate::safe::terminal(&path.display().to_string()),
        crate::safe::terminal(why)
    );
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
/// `check` is the experiment's own door ([`crate::AnyExperiment::check_rounds`]: its
/// rounds, readings and counts within its parameters' bounds); a record it refuses is
/// named on stderr and read as absent.
pub fn best(
    dir: &Path,
    chapter: &str,
    experiment: &str,
    key: &str,
    build: &str,
    params: Option<String>,
    check: &dyn Fn(&Record) -> Result<(), String>,
) -> Option<Shown> {
    let slot = |profile| Slot {
        chapter,
        experiment,
        profile,
        build,
        params: params.clone(),
    };
    // A file must hold the result its name says it holds: a record copied under
    // another experiment's name is not that experiment's.
    let matching = |p: PathBuf, profile: Profile| {
        load_file(&p)
            .filter(|r| {
                r.key == key
                    && r.chapter == chapter
                    && r.experiment == experiment
                    && r.build == build
                    && r.profile == profile
                    && tag(&r.params) == params
            })
            .filter(|r| check(r).map_err(|why| warn_ignored(&p, &why)).is_ok())
    };
    let good = [Profile::Full, Profile::Quick]
        .into_iter()
        .find_map(|p| matching(slot(p).good_path(dir), p));
    let mut failures: Vec<Record> = Profile::ALL
        .into_iter()
        .filter_map(|p| matching(slot(p).failed_path(dir), p))
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
/// `changes`; a file or folder that cannot be read or is not to be trusted
/// ([`read_folder`], [`Trust::Read`]) is named on stderr and skipped.
pub fn all_records(dir: &Path) -> Vec<Record> {
    read_folder(dir, Trust::Read, false)
        .into_iter()
        .filter_map(|(path, read)| read.map_err(|why| warn_ignored(&path, &why)).ok())
        .collect()
}

/// What [`import_good`] did.
#[derive(Debug, Default)]
pub struct Imported {
    /// How many good records matching the code were stored.
    pub copied: usize,
    /// Files refused, with the first reason.
    pub refused: Vec<(PathBuf, String)>,
    /// Good files left out, with why: a run that did not end well, or a record of other
    /// code than this build's. Named, so an import of nothing says why.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Copies into `to` every good record of `from` that `registry` accepts. `registry`
/// gets each record that passed the schema and returns the registry's own names for its
/// chapter and experiment when both exist and its key is the chapter's current one, or
/// `Err` with why a record of this book is refused (rounds that do not fit). The
/// stored file's name is built from those names, never from the record's, so a record
/// cannot choose where it is written. Returns how many were copied and which files were
/// refused, with why.
pub fn import_good(
    from: &Path,
    to: &Path,
    registry: impl Fn(&Record) -> Result<Option<(&'static str, &'static str)>, String>,
) -> Imported {
    import_records(all_files(from), to, registry)
}

/// [`import_good`] of records already read (each named by where it came from: a file,
/// or a record of a bundle).
pub fn import_records(
    files: Vec<(PathBuf, Result<Record, String>)>,
    to: &Path,
    registry: impl Fn(&Record) -> Result<Option<(&'static str, &'static str)>, String>,
) -> Imported {
    let mut done = Imported::default();
    for (path, read) in files {
        let r = match read {
            Ok(r) => r,
            Err(why) => {
                done.refused.push((path, why));
                continue;
            }
        };
        if !r.is_ok() {
            done.skipped
                .push((path, format!("the run {}", r.status.describe())));
            continue;
        }
        let (chapter, experiment) = match registry(&r) {
            Ok(Some(names)) => names,
            Ok(None) => {
                done.skipped.push((
                    path,
                    "it was measured by other code than this build's (its code key differs)".into(),
                ));
                continue;
            }
            Err(why) => {
                done.refused.push((path, why));
                continue;
            }
        };
        let build = if r.build == "debug" {
            "debug"
        } else {
            "release"
        };
        let slot = Slot {
            chapter,
            experiment,
            profile: r.profile,
            build,
            params: tag(&r.params),
        };
        let mut record = r.clone();
        record.chapter = chapter.to_string();
        record.experiment = experiment.to_string();
        record.build = build.to_string();
        let stored = store(to, &record);
        match stored {
            Ok(p) if p == slot.good_path(to) => done.copied += 1,
            Ok(p) => done
                .refused
                .push((path, format!("stored at {} instead", p.display()))),
            Err(e) => done.refused.push((path, format!("{e:#}"))),
        }
    }
    done
}

/// Every `*.json` file one level down in `dir` (one folder per chapter) of a folder
/// read on purpose (an import), each read and checked; no symbolic link in it is
/// followed, and each is named with why ([`read_folder`], [`Trust::Foreign`]).
pub fn all_files(dir: &Path) -> Vec<(PathBuf, Result<Record, String>)> {
    read_folder(dir, Trust::Foreign, false)
}

/// [`all_files`] of a folder of this user's results ([`Trust::Read`]).
pub fn own_files(dir: &Path) -> Vec<(PathBuf, Result<Record, String>)> {
    read_folder(dir, Trust::Read, false)
}

/// Every `*.json` file one level down in `dir` (one folder per chapter) and, with
/// `flat`, in `dir` itself (but the previous run and the two-runs history, which are
/// not records), each read through its folder opened as `trust` says
/// ([`Folder::read`]) and checked. A symbolic link (whatever its name at the top, a
/// `*.json` one below) and a folder that is refused are listed with why, never
/// followed.
pub fn read_folder(dir: &Path, trust: Trust, flat: bool) -> Vec<(PathBuf, Result<Record, String>)> {
    let mut out = Vec::new();
    let root = match Folder::open(dir, trust, false) {
        Ok(f) => f,
        Err(why) => {
            if std::fs::symlink_metadata(dir).is_ok() {
                out.push((dir.to_path_buf(), Err(why)));
            }
            return out;
        }
    };
    let is_json = |n: &str| n.ends_with(".json");
    for (name, kind) in root.entries().unwrap_or_default() {
        let path = dir.join(&name);
        match kind {
            Kind::Folder => match root.child(&name, false) {
                Ok(ch) => {
                    for (file, kind) in ch.entries().unwrap_or_default() {
                        let path = path.join(&file);
                        match kind {
                            Kind::Link(to) if is_json(&file) => {
                                out.push((path, Err(link_why(trust, &to))))
                            }
                            // A FIFO or a device is refused by the door, unread.
                            Kind::File | Kind::Other if is_json(&file) => {
                                out.push((path, read_in(&ch, &file)))
                            }
                            _ => {}
                        }
                    }
                }
                Err(why) => out.push((path, Err(why))),
            },
            Kind::Link(to) => out.push((path, Err(link_why(trust, &to)))),
            Kind::File | Kind::Other
                if flat
                    && is_json(&name)
                    && name != "previous-run.json"
                    && name != "two-runs.json" =>
            {
                out.push((path, read_in(&root, &name)))
            }
            _ => {}
        }
    }
    out
}

/// The record `name` of `folder`, read through the door and checked.
fn read_in(folder: &Folder, name: &str) -> Result<Record, String> {
    match folder.read(name, crate::safe::RECORD_CAP)? {
        Some(bytes) => parse_checked(&bytes),
        None => Err("it went away while the folder was read".into()),
    }
}

/// Why a symbolic link (to `to`) in a folder read as `trust` is not followed.
fn link_why(trust: Trust, to: &str) -> String {
    let to = crate::safe::terminal(to);
    if trust == Trust::Foreign {
        format!(
            "it is a symbolic link (to {to}): import reads only what is inside the folder it \
             is given and follows no link out of it; copy the file itself"
        )
    } else {
        format!(
            "it is a symbolic link (to {to}): a results folder holds its own files, and no \
             link in it is followed"
        )
    }
}

/// The measuring lock, held while measuring. Released when dropped or when the process
/// dies (an advisory `flock`).
pub struct MeasureLock {
    _file: std::fs::File,
}

/// The lock's file: one per user, whatever results folder a measurement writes to, so
/// that `cargo test`, a second checkout or a `COW_RESULTS_DIR` run of the same user
/// cannot measure at the same time as `make regenerate`:
///
/// - `$COW_LOCK_FILE` where it is set;
/// - else `$XDG_RUNTIME_DIR/cost-of-waiting.measure.lock` where that folder exists,
///   belongs to the user and no one else can write it (checked, as a results folder
///   is: a runtime folder pointing at a shared one is passed over);
/// - else `cost-of-waiting/measure.lock` in the user's cache folder
///   (`$XDG_CACHE_HOME`, else `$HOME/.cache`);
/// - else `cost-of-waiting.measure.lock` in the cargo target folder the running binary
///   was built into.
///
/// Never a predictable name in the shared temporary folder (issue 28): a file planted
/// there by another user made every build of its victim fail, and the victim could
/// not remove it.
///
/// Two *users* measuring at once are not kept apart: a lock file that every user can
/// open is one that any user can hold, or turn against another, so the book does not
/// offer machine-wide exclusion across users.
pub fn lock_path() -> PathBuf {
    lock_path_from(
        std::env::var_os("COW_LOCK_FILE"),
        std::env::var_os("XDG_RUNTIME_DIR"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`lock_path`] given `$COW_LOCK_FILE`, `$XDG_RUNTIME_DIR`, `$XDG_CACHE_HOME` and
/// `$HOME`.
pub fn lock_path_from(
    cow_lock_file: Option<std::ffi::OsString>,
    xdg_runtime_dir: Option<std::ffi::OsString>,
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> PathBuf {
    if let Some(p) = cow_lock_file.filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    // The runtime folder is used only when it is this user's and no one else can write
    // it (issue 35: one pointing at a shared folder let another user create the lock
    // first); otherwise the next choice is taken.
    if let Some(run) = xdg_runtime_dir.map(PathBuf::from)
        && run.is_absolute()
        && Folder::open(&run, Trust::Write, false).is_ok()
    {
        return run.join("cost-of-waiting.measure.lock");
    }
    let cache = xdg_cache_home
        .map(PathBuf::from)
        .filter(|c| c.is_absolute())
        .or_else(|| {
            home.map(PathBuf::from)
                .filter(|h| h.is_absolute() && h.parent().is_some())
                .map(|h| h.join(".cache"))
        });
    if let Some(cache) = cache {
        return cache.join("cost-of-waiting").join("measure.lock");
    }
    default_results_dir().with_file_name("cost-of-waiting.measure.lock")
}

#[cfg(unix)]
fn user_id() -> u32 {
    crate::safe::my_uid()
}

/// Opens the lock file without following a symbolic link, creating it readable and
/// writable by this user only (0600), and never truncating it on open. It is used only
/// when it is a regular file with one name, owned by this user: otherwise someone else
/// put it there, and it is refused with the reason.
///
/// Its folder is made if missing and checked like a results folder (issue 35: another
/// user who can write it, a shared `XDG_RUNTIME_DIR` say, could create the lock first),
/// and the file is opened relative to that folder's open handle.
fn open_lock_file(path: &Path) -> anyhow::Result<std::fs::File> {
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty());
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("the measuring lock {} has no file name", path.display()))?;
    let folder = Folder::open(folder.unwrap_or(Path::new("/")), Trust::Write, true)
        .map_err(|why| anyhow::anyhow!("the measuring lock's folder: {why}; set COW_LOCK_FILE to a file in a folder of your own"))?;
    let file = folder.open_private(name).with_context(|| {
        format!(
            "cannot open the measuring lock {} (a symbolic link there is refused; set COW_LOCK_FILE to use another file)",
            path.display()
        )
    })?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot inspect {}", path.display()))?;
    anyhow::ensure!(
        meta.file_type().is_file(),
        "the measuring lock {} is not a regular file; remove it or set COW_LOCK_FILE",
        path.display()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        anyhow::ensure!(
            meta.uid() == user_id(),
            "the measuring lock {} belongs to another user (uid {}); remove it or set COW_LOCK_FILE",
            path.display(),
            meta.uid()
        );
        anyhow::ensure!(
            meta.nlink() == 1,
            "the measuring lock {} has other names (hard links); remove it or set COW_LOCK_FILE",
            path.display()
        );
    }
    Ok(file)
}

impl MeasureLock {
    /// Takes this user's measuring lock ([`lock_path`]), waiting for another
    /// measurement to end and saying so on stderr.
    pub fn acquire() -> anyhow::Result<MeasureLock> {
        MeasureLock::acquire_at(&lock_path())
    }

    /// [`MeasureLock::acquire`] on the lock file `path`.
    pub fn acquire_at(path: &Path) -> anyhow::Result<MeasureLock> {
        let path = path.to_path_buf();
        // A relative name is a different file in each folder a measuring command runs
        // in (`make` runs in the checkout, the page markers in `src/`): two locks, no
        // exclusion (issue 28).
        anyhow::ensure!(
            path.is_absolute(),
            "the measuring lock {} is a relative path: set COW_LOCK_FILE to an absolute one",
            path.display()
        );
        let mut file = open_lock_file(&path)?;
        // A lock file holds nothing or a pid; anything else is some other file that
        // COW_LOCK_FILE names, whose content would be replaced by our pid.
        let mut held = Vec::new();
        (&file).take(64).read_to_end(&mut held)?;
        anyhow::ensure!(
            held.len() <= 20 && held.iter().all(u8::is_ascii_digit),
            "the measuring lock {} holds something other than a pid: it is not a lock file, \
             and is left as it is (set COW_LOCK_FILE to a new file's name)",
            path.display()
        );
        file.rewind()?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = (&file).take(32).read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if !holder.is_empty() && holder.bytes().all(|b| b.is_ascii_digit()) {
                    holder
                } else {
                    "?"
                };
                eprintln!(
                    "waiting for the measurement of pid {holder} to finish (one measurement at a time; lock {}) …",
                    path.display()
                );
                file.lock().context("cannot take the measuring lock")?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).context("cannot take the measuring lock");
            }
        }
        // Ours, checked above: only now is its old content replaced by our pid.
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
    use crate::record::{FORMAT, Provenance, RoundRecord, Status};

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
            // A good result has at least one round (the door refuses one without).
            rounds: if status == Status::Ok {
                vec![RoundRecord::default()]
            } else {
                vec![]
            },
            status,
            notes: vec![],
            wall_s: 0.5,
        }
    }

    fn best_of(dir: &Path, key: &str) -> Option<Shown> {
        best(dir, "ch", "exp", key, "release", None, &|_| Ok(()))
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
        assert!(
            best(
                dir.path(),
                "ch",
                "exp",
                "k",
                "release",
                tag(&set.params),
                &|_| Ok(())
            )
            .is_some()
        );
    }

    #[test]
    fn stray_temporaries_of_dead_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("ch");
        std::fs::create_dir_all(&folder).unwrap();
        // pid 0x7ffffffe is not a live process; our own pid is.
        let dead = folder.join(".exp.quick.release.json.2147483646.tmp");
        let ours = folder.join(format!(".x.json.{}.tmp", std::process::id()));
        // Today's names carry a random part after the pid.
        let dead_new = folder.join(".exp.quick.release.json.2147483646.0123456789abcdef.tmp");
        let ours_new = folder.join(format!(
            ".x.json.{}.0123456789abcdef.tmp",
            std::process::id()
        ));
        for p in [&dead, &ours, &dead_new, &ours_new] {
            std::fs::write(p, b"half").unwrap();
        }
        store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        assert!(!dead.exists() && !dead_new.exists());
        assert!(ours.exists() && ours_new.exists());
        // What stays is ours: the stored result, the two of ours; no temporary of the
        // writer is left behind.
        let left = std::fs::read_dir(&folder).unwrap().count();
        assert_eq!(left, 3);
    }

    /// Issue 28: `write_atomically` wrote `.NAME.PID.tmp` with `std::fs::write`, which
    /// follows a symbolic link and truncates its target; another user who could write
    /// the results folder planted links for the coming pids and the measuring user
    /// overwrote the links' targets (and the stored result became a link to one).
    #[cfg(unix)]
    #[test]
    fn links_planted_for_the_coming_pids_leave_their_targets_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victims = tempfile::tempdir().unwrap();
        let good = record(Profile::Quick, "k", Status::Ok, 1);
        let mut failed = record(Profile::Quick, "k", Status::Failed { error: "e".into() }, 2);
        failed.experiment = "other".into();
        let folder = dir.path().join("ch");
        std::fs::create_dir_all(&folder).unwrap();
        let me = std::process::id();
        let mut planted = Vec::new();
        for target in [
            slot_of(&good).good_path(dir.path()),
            slot_of(&failed).failed_path(dir.path()),
            slot_of(&failed).retried_path(dir.path()),
        ] {
            let name = target.file_name().unwrap().to_string_lossy().into_owned();
            for pid in me.saturating_sub(2)..me + 64 {
                let victim = victims.path().join(format!("{name}.{pid}.victim"));
                std::fs::write(&victim, "precious").unwrap();
                std::os::unix::fs::symlink(&victim, folder.join(format!(".{name}.{pid}.tmp")))
                    .unwrap();
                planted.push(victim);
            }
        }
        let stored = store(dir.path(), &good).unwrap();
        store(dir.path(), &failed).unwrap();
        assert!(claim_retry(dir.path(), &failed));
        for victim in &planted {
            assert_eq!(
                std::fs::read_to_string(victim).unwrap(),
                "precious",
                "{} was written through a planted link",
                victim.display()
            );
        }
        // What was stored is a file of its own, private, and reads back.
        for p in [
            stored.clone(),
            slot_of(&failed).failed_path(dir.path()),
            slot_of(&failed).retried_path(dir.path()),
        ] {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::symlink_metadata(&p).unwrap();
            assert!(meta.file_type().is_file(), "{} is not a file", p.display());
            assert_eq!(meta.permissions().mode() & 0o077, 0, "{}", p.display());
        }
        assert_eq!(read_checked(&stored).unwrap().key, "k");
        // A link planted where the result itself goes is replaced, not followed.
        let victim = victims.path().join("result.victim");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::remove_file(&stored).unwrap();
        std::os::unix::fs::symlink(&victim, &stored).unwrap();
        store(dir.path(), &good).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&stored).unwrap().is_file());
    }

    /// Issue 28: nothing checked who owns the results folder or who else may write it.
    #[cfg(unix)]
    #[test]
    fn a_results_folder_others_can_write_is_refused_with_the_reason() {
        use std::os::unix::fs::PermissionsExt;
        let good = record(Profile::Quick, "k", Status::Ok, 1);
        for (root_mode, chapter_mode) in [
            (0o777, 0o755),
            (0o775, 0o755),
            (0o755, 0o777),
            (0o1777, 0o755),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let folder = dir.path().join("ch");
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(root_mode))
                .unwrap();
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(chapter_mode))
                .unwrap();
            // Group-write counts when the group is not the user's own private group
            // (root can hand the folder to another group; others cannot, and there the
            // 0775 case reads as the private group's, which the next test accepts).
            if root_mode == 0o775 {
                if user_id() != 0 {
                    continue;
                }
                std::os::unix::fs::chown(dir.path(), None, Some(4242)).unwrap();
            }
            let e = format!("{:#}", store(dir.path(), &good).unwrap_err());
            assert!(
                e.contains("other users can write to it") && e.contains("chmod go-w"),
                "{root_mode:o}/{chapter_mode:o}: {e}"
            );
            assert!(!slot_of(&good).good_path(dir.path()).exists());
            // A retry mark and the previous run go through the same door.
            let open = if root_mode & 0o022 != 0 {
                dir.path().to_path_buf()
            } else {
                folder.clone()
            };
            assert!(write_atomically(&open.join("previous-run.json"), b"[]").is_err());
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
            store(dir.path(), &good).unwrap();
        }
        // A folder of another user: `/` for anyone but root; root gets a folder of its
        // own handed to nobody.
        let dir = tempfile::tempdir().unwrap();
        let theirs = if user_id() == 0 {
            std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).unwrap();
            dir.path().to_path_buf()
        } else {
            PathBuf::from("/")
        };
        let e = format!("{:#}", check_private_folder(&theirs).unwrap_err());
        assert!(
            e.contains("belongs to another user") && e.contains("COW_RESULTS_DIR"),
            "{e}"
        );
        // Folders the cache creates are private enough whatever the umask.
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("a/b");
        write_atomically(&fresh.join("x.json"), b"{}").unwrap();
        check_private_folder(&fresh).unwrap();
        check_private_folder(&dir.path().join("a")).unwrap();
    }

    /// Debian's and Ubuntu's user-private groups with a umask of 002 make every new
    /// folder group-writable by a group of one: that lets no other user in, so a results
    /// folder there is trusted.
    #[cfg(unix)]
    #[test]
    fn a_folder_only_the_user_s_private_group_can_write_is_trusted() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let gid = std::fs::metadata(dir.path()).unwrap().gid();
        // SAFETY: getegid has no preconditions.
        let mine = gid == unsafe { libc::getegid() };
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o775)).unwrap();
        let private = mine && crate::safe::is_private_group(gid);
        let good = record(Profile::Quick, "k", Status::Ok, 1);
        let r = store(dir.path(), &good);
        assert_eq!(r.is_ok(), private, "gid {gid}: {r:?}");
    }

    #[test]
    fn import_takes_only_good_matching_records() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        store(from.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        store(from.path(), &record(Profile::Full, "old", Status::Ok, 1)).unwrap();
        let failed = Status::Failed { error: "x".into() };
        store(from.path(), &record(Profile::Full, "k", failed, 2)).unwrap();
        let done = import_good(from.path(), to.path(), |r| {
            Ok((r.key == "k").then_some(("ch", "exp")))
        });
        assert_eq!(done.copied, 1);
        assert!(done.refused.is_empty(), "{:?}", done.refused);
        assert_eq!(all_records(to.path()).len(), 1);
    }

    /// The reproduction of issue 19: a record whose `experiment` or `build` is a path
    /// wrote outside the results folder on import. Now it is refused at the door, and
    /// a record that passes is stored under the registry's names.
    #[test]
    fn import_never_writes_where_a_record_says() {
        let root = tempfile::tempdir().unwrap();
        let from = root.path().join("from");
        let to = root.path().join("a").join("b").join("to");
        std::fs::create_dir_all(from.join("ch")).unwrap();
        std::fs::create_dir_all(&to).unwrap();
        let mut traversal = record(Profile::Quick, "k", Status::Ok, 1);
        traversal.experiment = "../../x/y".into();
        let mut build = record(Profile::Quick, "k", Status::Ok, 1);
        build.build = "release/../../../z/w".into();
        let mut chapter = record(Profile::Quick, "k", Status::Ok, 1);
        chapter.chapter = "../../../escape".into();
        for (i, r) in [traversal, build, chapter].iter().enumerate() {
            std::fs::write(
                from.join("ch").join(format!("evil{i}.json")),
                serde_json::to_vec(r).unwrap(),
            )
            .unwrap();
        }
        let done = import_good(&from, &to, |r| Ok((r.key == "k").then_some(("ch", "exp"))));
        assert_eq!(done.copied, 0);
        assert_eq!(done.refused.len(), 3, "{:?}", done.refused);
        assert!(
            done.refused[0].1.contains("is not a name"),
            "{:?}",
            done.refused
        );
        assert!(done.refused[1].1.contains("neither release nor debug"));
        // Nothing was written anywhere under the root but the source files.
        let mut written = Vec::new();
        fn walk(d: &Path, acc: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(d).unwrap().flatten() {
                if e.path().is_dir() {
                    walk(&e.path(), acc);
                } else {
                    acc.push(e.path());
                }
            }
        }
        walk(root.path(), &mut written);
        assert!(written.iter().all(|p| p.starts_with(&from)), "{written:?}");
        // A good record is stored under the names the registry gives, whatever it says.
        let ok = record(Profile::Quick, "k", Status::Ok, 1);
        std::fs::write(
            from.join("ch").join("ok.json"),
            serde_json::to_vec(&ok).unwrap(),
        )
        .unwrap();
        let done = import_good(&from, &to, |r| {
            Ok((r.key == "k").then_some(("registry-ch", "registry-exp")))
        });
        assert_eq!(done.copied, 1);
        assert!(
            to.join("registry-ch")
                .join("registry-exp.quick.release.json")
                .is_file()
        );
    }

    #[test]
    fn a_hostile_or_misplaced_record_reads_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let p = store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        assert!(best_of(dir.path(), "k").is_some());
        let mut bad = record(Profile::Quick, "k", Status::Ok, 1);
        bad.notes.push(crate::record::Note {
            kind: crate::record::NoteKind::Info,
            text: "a\n\n<script>alert(1)</script>".into(),
        });
        std::fs::write(&p, serde_json::to_vec(&bad).unwrap()).unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        assert!(read_checked(&p).unwrap_err().contains("control character"));
        // A valid record of another experiment, copied under this one's name.
        let mut other = record(Profile::Quick, "k", Status::Ok, 1);
        other.experiment = "other".into();
        std::fs::write(&p, serde_json::to_vec(&other).unwrap()).unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        // A store refuses a record whose names are paths.
        let mut path = record(Profile::Quick, "k", Status::Ok, 1);
        path.experiment = "../up".into();
        assert!(store(dir.path(), &path).is_err());
    }

    #[test]
    fn the_book_s_own_records_are_made_to_pass_before_they_are_stored() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = record(Profile::Quick, "k", Status::Ok, 1);
        r.notes.push(crate::record::Note {
            kind: crate::record::NoteKind::Info,
            text: "line one\nline two".into(),
        });
        r.rounds.clear();
        r.rounds.push(crate::record::RoundRecord {
            index: 0,
            noise: crate::noise::Noise::default(),
            readings: vec![crate::record::Reading::new(
                "x",
                crate::record::Unit::Nanos,
                1.0,
            )],
            data: serde_json::json!({"why": "Vec<u8> [1] `x`", "n": 3}),
            ..Default::default()
        });
        store(dir.path(), &r).unwrap();
        let shown = best_of(dir.path(), "k").unwrap().record;
        assert_eq!(shown.notes[0].text, "line one line two");
        assert_eq!(shown.rounds[0].data["why"], "Vec‹u8› (1) 'x'");
    }

    /// A stored failure with no good result is measured again by the next command that
    /// shows it, once per build.
    #[test]
    fn a_stored_failure_is_retried_once_per_build() {
        let dir = tempfile::tempdir().unwrap();
        let failed = record(
            Profile::Quick,
            "k",
            Status::Crashed {
                what: "was killed (signal 9)".into(),
            },
            5,
        );
        store(dir.path(), &failed).unwrap();
        let shown = best_of(dir.path(), "k").unwrap().record;
        assert!(claim_retry(dir.path(), &shown));
        // The same build does not try again, whatever the new failure's time.
        assert!(!claim_retry(dir.path(), &shown));
        let again = record(Profile::Quick, "k", failed.status.clone(), 6);
        store(dir.path(), &again).unwrap();
        assert!(!claim_retry(
            dir.path(),
            &best_of(dir.path(), "k").unwrap().record
        ));
        // Another build does.
        std::fs::write(slot_of(&again).retried_path(dir.path()), "mdbook 1 1").unwrap();
        assert!(claim_retry(dir.path(), &again));
        // A good record is never retried, and clears the mark.
        let good = record(Profile::Quick, "k", Status::Ok, 7);
        store(dir.path(), &good).unwrap();
        assert!(!claim_retry(dir.path(), &good));
        assert!(!slot_of(&good).retried_path(dir.path()).exists());
    }

    #[test]
    fn the_lock_excludes_a_second_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("machine.lock");
        let held = MeasureLock::acquire_at(&path).unwrap();
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

    /// Issue 19: the lock was created 0644 in the shared temporary folder, followed
    /// symbolic links and truncated what it opened.
    #[cfg(unix)]
    #[test]
    fn the_lock_is_private_and_never_follows_or_truncates_a_planted_file() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fresh.lock");
        drop(MeasureLock::acquire_at(&path).unwrap());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
        // A symbolic link planted where the lock goes: refused, its target untouched.
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("planted.lock");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = MeasureLock::acquire_at(&link)
            .err()
            .expect("a symlink is refused");
        assert!(format!("{e:#}").contains("symbolic link"), "{e:#}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // A hard link to a file of ours: refused, untouched.
        let hard = dir.path().join("hard.lock");
        std::fs::hard_link(&victim, &hard).unwrap();
        assert!(MeasureLock::acquire_at(&hard).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::metadata(&victim).unwrap().nlink(), 2);
        // A folder is not a lock file.
        assert!(MeasureLock::acquire_at(dir.path()).is_err());
    }

    /// A record too large for the door to read back is refused when stored, saying
    /// why, rather than written and then measured again on every build.
    #[test]
    fn a_record_over_the_cap_is_refused_when_stored() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = record(Profile::Quick, "k", Status::Ok, 1);
        r.rounds = vec![RoundRecord {
            data: serde_json::json!(vec![0u8; (crate::safe::RECORD_CAP / 2 + 1) as usize]),
            ..Default::default()
        }];
        let e = store(dir.path(), &r).unwrap_err();
        assert!(format!("{e:#}").contains("more than the 8 MB"), "{e:#}");
        assert!(all_records(dir.path()).is_empty());
    }

    /// Issue 28, items 15 and 16: a relative `COW_LOCK_FILE` named a different file in
    /// each folder (two locks, no exclusion), and one naming an existing file had its
    /// content replaced with the pid.
    #[test]
    fn the_lock_refuses_a_relative_name_and_a_file_that_is_not_a_lock() {
        let e = MeasureLock::acquire_at(Path::new("cow.lock"))
            .err()
            .expect("a relative name is refused");
        assert!(format!("{e:#}").contains("relative path"), "{e:#}");
        assert!(!Path::new("cow.lock").exists());
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "my notes").unwrap();
        let e = MeasureLock::acquire_at(&notes)
            .err()
            .expect("a file that is not a lock is refused");
        assert!(format!("{e:#}").contains("not a lock file"), "{e:#}");
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes");
        // A lock left by an earlier measurement (its pid) is taken.
        let old = dir.path().join("old.lock");
        std::fs::write(&old, "12345").unwrap();
        drop(MeasureLock::acquire_at(&old).unwrap());
    }

    #[test]
    fn the_lock_is_per_user_and_never_in_the_shared_temporary_folder() {
        let run = tempfile::tempdir().unwrap();
        assert_eq!(
            lock_path_from(None, Some(run.path().into()), None, None),
            run.path().join("cost-of-waiting.measure.lock")
        );
        // Without a runtime folder: the user's cache folder (issue 28: it was
        // `/tmp/cost-of-waiting-<uid>.measure.lock`, a name anyone could take first).
        assert_eq!(
            lock_path_from(None, None, Some("/c".into()), Some("/h".into())),
            PathBuf::from("/c/cost-of-waiting/measure.lock")
        );
        let home = lock_path_from(None, None, None, Some("/h".into()));
        assert_eq!(
            home,
            PathBuf::from("/h/.cache/cost-of-waiting/measure.lock")
        );
        // A runtime or cache folder that does not exist, or is relative, is not used.
        assert_eq!(
            lock_path_from(
                None,
                Some("relative".into()),
                Some("rel".into()),
                Some("/h".into())
            ),
            home
        );
        // Without any of them: the cargo target folder, not the temporary folder (a
        // checkout may itself live under /tmp, so the test compares folders, not
        // prefixes).
        let last = lock_path_from(None, None, None, None);
        assert_eq!(
            last.parent(),
            default_results_dir().parent(),
            "{}",
            last.display()
        );
        assert_ne!(
            last.parent(),
            Some(std::env::temp_dir().as_path()),
            "{}",
            last.display()
        );
        assert_eq!(
            last.file_name().unwrap().to_string_lossy(),
            "cost-of-waiting.measure.lock"
        );
        assert_eq!(
            lock_path_from(
                Some("/x/y.lock".into()),
                Some(run.path().into()),
                None,
                None
            ),
            PathBuf::from("/x/y.lock")
        );
        // No choice is a predictable name in the shared temporary folder.
        for (a, b, c) in [
            (None, None, None),
            (Some(run.path().into()), None, None),
            (None, Some("/c".into()), None),
            (None, None, Some("/h".into())),
        ] {
            let p = lock_path_from(None, a, b, c);
            assert!(
                p.parent() != Some(std::env::temp_dir().as_path())
                    && (!p.starts_with(std::env::temp_dir())
                        || p.starts_with(run.path())
                        || p.parent() == default_results_dir().parent()),
                "{}",
                p.display()
            );
        }
    }

    /// Issue 35, item 1: the stray-temporary clean-up deleted `~/.bashrc.12345.tmp` in a
    /// folder a planted link led to. It deletes only its own temporaries now (a result,
    /// a failure, a retry mark, the previous run, a probe), and only in a checked folder.
    #[test]
    fn the_clean_up_deletes_only_its_own_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("ch");
        std::fs::create_dir_all(&folder).unwrap();
        let theirs = folder.join(".bashrc.2147483646.tmp");
        let also = folder.join(".notes.txt.2147483646.0123456789abcdef.tmp");
        let ours = folder.join(".exp.quick.release.json.2147483646.0123456789abcdef.tmp");
        for p in [&theirs, &also, &ours] {
            std::fs::write(p, b"x").unwrap();
        }
        store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        assert!(
            theirs.exists() && also.exists(),
            "a file not ours was deleted"
        );
        assert!(!ours.exists(), "our dead writer's temporary stays");
    }

    /// Issue 35, item 2: reads never checked owner or mode. A record in a chapter folder
    /// others can write, or one another user wrote, reads as absent now, said on stderr.
    #[cfg(unix)]
    #[test]
    fn records_others_could_have_written_read_as_absent() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = store(dir.path(), &record(Profile::Quick, "k", Status::Ok, 1)).unwrap();
        assert!(best_of(dir.path(), "k").is_some());
        assert_eq!(all_records(dir.path()).len(), 1);
        let ch = p.parent().unwrap();
        std::fs::set_permissions(ch, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        assert!(all_records(dir.path()).is_empty());
        std::fs::set_permissions(ch, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A file others can write is not read either.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(best_of(dir.path(), "k").is_none());
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(best_of(dir.path(), "k").is_some());
        // A record another user wrote (root can make one; see all-results' door tests
        // for the other ways).
        if user_id() == 0 {
            std::os::unix::fs::chown(&p, Some(4242), Some(4242)).unwrap();
            assert!(best_of(dir.path(), "k").is_none());
        } else {
            eprintln!("NOT CHECKED HERE: another user's record (not root)");
        }
    }

    /// Issue 35, item 11: the `.retried` mark was read with `read_to_string`: a FIFO
    /// there hung the page marker, a huge sparse file took its size in memory. It is
    /// read through the door now, and a mark that is not one is replaced.
    #[cfg(unix)]
    #[test]
    fn a_retry_mark_that_is_a_fifo_or_huge_neither_hangs_nor_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let failed = record(Profile::Quick, "k", Status::Failed { error: "e".into() }, 5);
        store(dir.path(), &failed).unwrap();
        let mark = slot_of(&failed).retried_path(dir.path());
        let c = std::ffi::CString::new(mark.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let (d, f) = (dir.path().to_path_buf(), failed.clone());
        std::thread::spawn(move || tx.send(claim_retry(&d, &f)));
        let claimed = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("claim_retry hung on a FIFO");
        assert!(claimed);
        assert!(std::fs::symlink_metadata(&mark).unwrap().is_file());
        // A huge (sparse) mark: not read, replaced.
        std::fs::remove_file(&mark).unwrap();
        let huge = std::fs::File::create(&mark).unwrap();
        huge.set_len(1 << 30).unwrap();
        drop(huge);
        assert!(claim_retry(dir.path(), &failed));
        assert!(std::fs::metadata(&mark).unwrap().len() < 4096);
    }

    /// Issue 35, item 16: `XDG_RUNTIME_DIR` pointing at a shared folder was trusted (another
    /// user could create the lock there first). It is used only when it is this user's
    /// and no one else can write it; a shared one is passed over.
    #[cfg(unix)]
    #[test]
    fn a_shared_runtime_folder_is_not_used_for_the_lock() {
        use std::os::unix::fs::PermissionsExt;
        let shared = tempfile::tempdir().unwrap();
        std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let p = lock_path_from(None, Some(shared.path().into()), Some("/c".into()), None);
        assert_eq!(p, PathBuf::from("/c/cost-of-waiting/measure.lock"));
        // A lock in a shared folder named outright is refused, saying why.
        let e = MeasureLock::acquire_at(&shared.path().join("x.lock"))
            .err()
            .expect("a lock in a shared folder is refused");
        assert!(format!("{e:#}").contains("can write"), "{e:#}");
    }
}
