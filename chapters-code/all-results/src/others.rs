//! Results from other operating systems: a CI runner on macOS or Windows, a reader's
//! laptop. `all-results import` keeps them apart from this machine's, under
//! `<results>/other-machines/<machine>/<chapter>/`, and the chapters' per-OS sections
//! read them from there; they never stand in for this machine's own figures.
//!
//! Why a folder of their own: the code key says which *code* measured (sources,
//! dependencies, compiler, profile, flags), not on which target it ran, so a record
//! from a Mac built from the same commit with the same rustc carries this build's key.
//! Filed beside this machine's records it would be shown as the reader's own numbers.
//! So a record is routed by the operating system its machine reports: one of this
//! machine's kind goes through the usual door (kept only when it matches the current
//! code), one of another kind goes here, whatever its key (another OS compiles other
//! variants, and its runner may use another rustc).
//!
//! Every file, read here or imported, passes the same door as every record
//! ([`harness::cache::read_checked`], then [`harness::cache::store`]); the machine's
//! folder name is made here from a hash of its description, never from a record's text.

use harness::Record;
use harness::cache;
use harness::machine::{Machine, TargetOs};
use harness::safe::{Folder, Kind, Trust};
use std::path::{Path, PathBuf};

/// The folder under the results folder that holds other machines' records.
pub const DIR: &str = "other-machines";

/// The operating-system family a machine's own description names (`os`:
/// `/etc/os-release`'s name on Linux, `macOS 14.5`, `Windows 10.0 (build 19045)`):
/// `windows`, `macos`, `bsd`, else `linux`. Records that name the OS they were built
/// for are routed by that instead ([`is_other_os`]); this reads older ones.
pub fn os_family(os: &str) -> &'static str {
    TargetOs::from_description(os).name()
}

/// This build's family, as [`os_family`] names them.
pub fn this_family() -> &'static str {
    TargetOs::this_build().name()
}

/// Whether a record was measured on another operating system than this build's: the
/// OS its build was made for ([`Machine::target_os`]), never what the machine's text
/// says, where the record names it (a Windows build run by Wine on Linux once
/// described the Linux host).
pub fn is_other_os(r: &Record) -> bool {
    r.provenance.machine.target_os() != TargetOs::this_build()
}

/// The folder name of a machine: the OS its build was made for and 16 hex digits of an
/// FNV-1a hash of its description (OS, kernel, architecture, CPU, logical CPUs, and
/// the typed OS where the record has it). Always a checked name.
pub fn machine_id(m: &Machine) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let cpus = m.logical_cpus.to_string();
    let mut parts = vec![m.os.as_str(), &m.kernel, &m.arch, &m.cpu, &cpus];
    // Older records hash as they did, so their folders keep their names.
    parts.extend(m.target_os.map(TargetOs::name));
    for part in parts {
        for b in part.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    let id = format!("{}-{h:016x}", m.target_os().name());
    debug_assert!(harness::safe::is_name(&id));
    id
}

/// What [`import`] did.
#[derive(Debug, Default)]
pub struct Imported {
    /// Good records of this machine's kind matching the current code, stored as its own.
    pub copied: usize,
    /// Good records of other operating systems, stored under [`DIR`].
    pub other_machines: usize,
    /// Files refused, with the first reason.
    pub refused: Vec<(PathBuf, String)>,
    /// Files left out, with why (a failed run, other code).
    pub skipped: Vec<(PathBuf, String)>,
}

/// What `import` was given, read: each record with where it came from.
type Read = Vec<(PathBuf, Result<Record, String>)>;

/// The files of what `import` was given: a results folder (one folder per chapter, as
/// `results/` holds them, or its files laid out flat), or a results bundle (what
/// `make publish` writes beside the site, `all-results json`), whose records are read
/// one by one. `Err` says what was given instead, before anything is written.
pub fn read_source(from: &Path) -> Result<Read, String> {
    let shown = harness::safe::terminal(&from.display().to_string());
    if from.is_file() {
        let bundle = crate::Bundle::read(from).map_err(|e| {
            format!(
                "{}; import takes a results folder or a results bundle (cost-of-waiting-results.json)",
                harness::safe::terminal(&format!("{e:#}"))
            )
        })?;
        let mut out = Vec::new();
        for (i, r) in bundle.records.into_iter().enumerate() {
            let name = from.join(format!("#record-{}", i + 1));
            if r.rounds.iter().any(|round| round.data.is_null()) {
                out.push((
                    name,
                    Err("its rounds were left out (the appendix's download keeps only the figures); \
                         import the site's cost-of-waiting-results.json or a results folder instead"
                        .into()),
                ));
            } else {
                out.push((name, Ok(r)));
            }
        }
        return Ok(out);
    }
    if !from.is_dir() {
        return Err(format!(
            "{shown} is neither a results folder nor a results bundle (no such file or folder)"
        ));
    }
    // Chapter folders, and records copied without their chapter folders (a flat
    // folder); the results folder's own files (the previous run, the two-runs history)
    // are not records. No symbolic link in it is followed: each is named with why
    // (issue 35: an `x.json` link made import read the file it led to).
    let out = cache::read_folder(from, Trust::Foreign, true);
    if out.is_empty()
        && machine_folders(&from.join(DIR), Trust::Foreign, &mut Vec::new()).is_empty()
    {
        return Err(format!(
            "{shown} holds no results files; import takes a results folder (a checkout's results/, \
             or the COW_RESULTS_DIR it was measured into) or a results bundle (cost-of-waiting-results.json)"
        ));
    }
    Ok(out)
}

/// Imports a results folder or bundle ([`read_source`]) into `to`: good records of this
/// OS that match the current code as this machine's (as before), good records of
/// another OS under [`DIR`] (their machine's folder), and the other machines a results
/// folder already holds (its own [`DIR`]) likewise. A record is stored under the
/// registry's chapter and experiment names, never under the names it gives, and only
/// when its rounds decode into the chapter's own round type.
pub fn import(from: &Path, to: &Path) -> Result<Imported, String> {
    let read = read_source(from)?;
    let (others, here): (Read, Read) = read
        .into_iter()
        .partition(|(_, r)| r.as_ref().is_ok_and(is_other_os));
    let here = cache::import_records(here, to, |r| {
        let Some((ch, exp)) =
            crate::chapter(&r.chapter).and_then(|ch| Some((ch, ch.experiment(&r.experiment)?)))
        else {
            return Err("it names no chapter and experiment of this book".into());
        };
        if r.key != ch.key {
            return Ok(None);
        }
        // Rounds the chapter cannot read would replace a good result with one no page
        // can show, and `--missing` would not measure it again.
        exp.check_rounds(r)?;
        Ok(Some((ch.name, exp.name())))
    });
    let mut done = Imported {
        copied: here.copied,
        other_machines: 0,
        refused: here.refused,
        skipped: here.skipped,
    };
    for (path, read) in others {
        if let Ok(r) = read {
            store_other(r, to, &mut done, path);
        }
    }
    // Other machines the folder already keeps: every one of their records, whatever
    // its OS (a Linux runner's numbers stay another machine's on a Mac too).
    // Read as the rest of the folder is: an `other-machines` that is a link (to `/`,
    // say) or a machine folder that is one was refused above or is refused here, never
    // followed (issue 35).
    if from.is_dir() {
        for machine in machine_folders(&from.join(DIR), Trust::Foreign, &mut done.refused) {
            for (path, read) in cache::all_files(&machine) {
                match read {
                    Ok(r) => store_other(r, to, &mut done, path),
                    Err(why) => done.refused.push((path, why)),
                }
            }
        }
    }
    Ok(done)
}

fn store_other(r: Record, to: &Path, done: &mut Imported, path: PathBuf) {
    if !r.is_ok() {
        return;
    }
    let Some(ch) = crate::chapter(&r.chapter) else {
        return;
    };
    let Some(exp) = ch.experiment(&r.experiment) else {
        return;
    };
    // Another machine's record is shown beside this one's only if its rounds read as the
    // chapter's own; one of older code whose rounds differ is refused, saying so.
    if let Err(why) = exp.check_rounds(&r) {
        done.refused.push((path, why));
        return;
    }
    let mut record = r;
    record.chapter = ch.name.to_string();
    record.experiment = exp.name().to_string();
    record.build = if record.build == "debug" {
        "debug"
    } else {
        "release"
    }
    .to_string();
    let folder = to.join(DIR).join(machine_id(&record.provenance.machine));
    match cache::store(&folder, &record) {
        Ok(_) => done.other_machines += 1,
        Err(e) => done.refused.push((path, format!("{e:#}"))),
    }
}

/// The folders one level down in `dir` whose names are checked names, sorted (a
/// folder of this user's results: [`Trust::Read`]).
fn subfolders(dir: &Path) -> Vec<PathBuf> {
    machine_folders(dir, Trust::Read, &mut Vec::new())
}

/// The machine folders in `dir` (an `other-machines` folder) whose names are checked
/// names, sorted, opened as `trust` says; a symbolic link among them, or a folder
/// refused, is added to `refused` with why, never followed. Nothing when `dir` is not
/// there.
fn machine_folders(dir: &Path, trust: Trust, refused: &mut Vec<(PathBuf, String)>) -> Vec<PathBuf> {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return Vec::new();
    };
    // An import names an `other-machines` link with the rest of its folder's entries
    // ([`cache::read_folder`]).
    if meta.file_type().is_symlink() && trust == Trust::Foreign {
        return Vec::new();
    }
    let parent = dir.parent().unwrap_or(Path::new("/"));
    let folder = match Folder::open(parent, trust, false).and_then(|p| p.child(DIR, false)) {
        Ok(f) => f,
        Err(why) => {
            refused.push((dir.to_path_buf(), why));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (name, kind) in folder.entries().unwrap_or_default() {
        match kind {
            Kind::Folder if harness::safe::is_name(&name) => out.push(dir.join(name)),
            Kind::Link(to) => refused.push((
                dir.join(&name),
                format!(
                    "it is a symbolic link (to {}), and no link is followed",
                    harness::safe::terminal(&to)
                ),
            )),
            _ => {}
        }
    }
    out
}

/// One other machine's record of an experiment, as the per-OS sections show it.
#[derive(Debug, Clone)]
pub struct OtherMachine {
    /// The machine's folder name ([`machine_id`]).
    pub id: String,
    /// Its OS family ([`os_family`]).
    pub family: &'static str,
    pub record: Record,
}

/// The record each other machine holds for `chapter`/`experiment` with the default
/// parameters: a release build over a debug one, the full profile over the quick one,
/// then the newest. Every file is read through the same door as every record; one that
/// fails it is named on stderr and skipped. Machines in folder-name order.
pub fn machines(dir: &Path, chapter: &str, experiment: &str) -> Vec<OtherMachine> {
    let mut out = Vec::new();
    for folder in subfolders(&dir.join(DIR)) {
        let id = folder
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        // Held to the experiment's own door too (its rounds, readings and counts within
        // what its parameters make, issue 35), as import held it.
        let exp = crate::chapter(chapter).and_then(|c| c.experiment(experiment));
        let best = cache::own_files(&folder)
            .into_iter()
            .filter_map(|(path, read)| {
                let r = read.map_err(|why| cache::warn_ignored(&path, &why)).ok()?;
                let wanted = r.is_ok()
                    && r.chapter == chapter
                    && r.experiment == experiment
                    && harness::params::tag(&r.params).is_none();
                if !wanted {
                    return None;
                }
                match exp.map_or(Ok(()), |e| e.check_rounds(&r)) {
                    Ok(()) => Some(r),
                    Err(why) => {
                        cache::warn_ignored(&path, &why);
                        None
                    }
                }
            })
            .max_by_key(|r| {
                (
                    r.build == "release",
                    r.profile == harness::Profile::Full,
                    r.provenance.measured_unix,
                )
            });
        if let Some(record) = best {
            out.push(OtherMachine {
                id,
                family: record.provenance.machine.target_os().name(),
                record,
            });
        }
    }
    out
}

/// The short-sleeps chapter's section "The same calls on other operating systems",
/// from the other machines in `dir`.
pub fn short_sleeps_section(dir: &Path) -> anyhow::Result<String> {
    use harness::AnyExperiment;
    let found = machines(
        dir,
        "short-sleeps",
        short_sleeps::experiments::CALLS_EXP.name(),
    );
    let shown: Vec<(&str, &Record)> = found.iter().map(|m| (m.family, &m.record)).collect();
    short_sleeps::views::other_os_section(&shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37: a record is routed by the OS its build was made for, whatever its
    /// machine's text says (a Windows build under Wine read the Linux host's name).
    #[test]
    fn the_typed_os_routes_a_record() {
        let mut r = harness::fixture::record_of_readings(
            "ch",
            "exp",
            vec![vec![harness::Reading::new("x", harness::Unit::Nanos, 1.0)]],
        );
        let m = &mut r.provenance.machine;
        m.os = "Debian GNU/Linux 12 (bookworm)".into();
        m.target_os = Some(TargetOs::Windows);
        assert_eq!(is_other_os(&r), TargetOs::this_build() != TargetOs::Windows);
        assert!(machine_id(&r.provenance.machine).starts_with("windows-"));
        let typed = machine_id(&r.provenance.machine);
        r.provenance.machine.target_os = Some(TargetOs::this_build());
        assert!(!is_other_os(&r));
        assert!(machine_id(&r.provenance.machine).starts_with(this_family()));
        // An older record: the description decides, and its folder keeps its name.
        r.provenance.machine.target_os = None;
        r.provenance.machine.os = "macOS 14.5".into();
        assert_eq!(is_other_os(&r), this_family() != "macos");
        assert!(machine_id(&r.provenance.machine).starts_with("macos-"));
        assert_ne!(machine_id(&r.provenance.machine), typed);
    }

    #[test]
    fn families() {
        assert_eq!(os_family("windows"), "windows");
        assert_eq!(os_family("Microsoft Windows Server 2022"), "windows");
        assert_eq!(os_family("macOS 14.5"), "macos");
        assert_eq!(os_family("macos"), "macos");
        assert_eq!(os_family("Debian GNU/Linux 12 (bookworm)"), "linux");
        assert_eq!(os_family("NixOS 24.05 (Uakari)"), "linux");
        assert_eq!(os_family("FreeBSD 14.0-RELEASE"), "bsd");
        assert_eq!(this_family(), os_family(std::env::consts::OS));
    }
}
