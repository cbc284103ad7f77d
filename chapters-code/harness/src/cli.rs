//! The command line every chapter binary shares:
//! `list`, `run [--profile quick|full] [--only NAME]… [--missing] [--set NAME=VALUE]…`,
//! `table NAME`, `plot NAME`; and the hidden `__worker` that runs rounds.
//!
//! Bad input (an unknown name, a bad profile, a parameter out of range, a setting in
//! the environment that is not UTF-8) exits with status 2 and lists what is valid.
//! The grammar, the help and the `list` text are in `usage.rs`, outside the code key.

use crate::cache::{self, MeasureLock};
use crate::experiment::{Chapter, ViewKind};
use crate::params::{self, Override};
use crate::profile::Profile;
use crate::render::render_view;
use crate::runner::{self, Mode, Request};
use crate::{usage, worker};
use std::path::Path;
use std::process::ExitCode;

/// Exit status of a binary whose embedded code key no longer matches the sources on
/// disk (asked with `COW_CHECK_FRESH=1`): `run.sh` rebuilds and runs it again.
pub const STALE: u8 = 75;

/// Runs the chapter binary's command line; returns its exit code.
pub fn main(ch: &'static Chapter) -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(worker::WORKER_ARG) {
        return worker::worker_main(&[ch], &args[2..]);
    }
    if let Some(code) = stale_check(&[ch]) {
        return code;
    }
    main_from(ch, args)
}

/// With `COW_CHECK_FRESH=1`: exits [`STALE`] when a chapter's sources on disk differ
/// from those this binary was compiled from.
pub fn stale_check(chapters: &[&Chapter]) -> Option<ExitCode> {
    let crates: Vec<(&str, &str)> = chapters.iter().map(|c| (c.dir, c.source_hash)).collect();
    stale_check_crates(&crates)
}

/// [`stale_check`] for crates given as (`CARGO_MANIFEST_DIR`, `COW_SOURCE_HASH`).
pub fn stale_check_crates(crates: &[(&str, &str)]) -> Option<ExitCode> {
    std::env::var_os("COW_CHECK_FRESH")?;
    for (dir, hash) in crates {
        let dir = Path::new(dir);
        if dir.is_dir() && crate::key::source_hash(dir) != *hash {
            eprintln!(
                "{}: the sources changed since this binary was built",
                dir.display()
            );
            return Some(ExitCode::from(STALE));
        }
    }
    None
}

/// The profile named by `$COW_PROFILE` (quick when unset or empty); exit 2 when it is
/// not one or not UTF-8, or when `$COW_THRESHOLD` is set to something that is not a
/// percentage.
pub fn profile_from_env() -> Result<Profile, ExitCode> {
    if let Some(e) = crate::stats::threshold_problem() {
        eprintln!("error: {e}");
        return Err(ExitCode::from(2));
    }
    Profile::from_env().map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}

/// The overrides `$COW_SET` gives this chapter, read with the one parser
/// ([`params::SetList`]): every entry must name a chapter of the book
/// ([`usage::BOOK_CHAPTERS`], or this chapter), and this chapter's entries parameters
/// it declares, with values they can take (an entry with a typo would otherwise show
/// the default results without a word). Other chapters' entries are checked by their
/// binaries and by `all-results`, which every build runs.
pub fn set_for(ch: &Chapter) -> Result<Vec<Override>, String> {
    let mut chapters = usage::BOOK_CHAPTERS.to_vec();
    if !chapters.contains(&ch.name) {
        chapters.push(ch.name);
    }
    let decl: Vec<(&str, &[params::Param])> = ch
        .experiments
        .iter()
        .map(|e| (e.name(), e.params()))
        .collect();
    params::SetList::from_env(&chapters)?.check_for(ch.name, &decl)
}

pub fn main_from<I, T>(ch: &'static Chapter, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = match usage::command(ch).try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    let dir = cache::results_dir();
    match matches.subcommand() {
        Some(("list", _)) => {
            print!("{}", usage::list(ch));
            ExitCode::SUCCESS
        }
        Some(("run", m)) => {
            if let Err(e) = set_for(ch) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            let profile = match m.get_one::<Profile>("profile") {
                Some(p) => *p,
                None => match profile_from_env() {
                    Ok(p) => p,
                    Err(code) => return code,
                },
            };
            let only: Vec<&String> = m
                .get_many::<String>("only")
                .map(|v| v.collect())
                .unwrap_or_default();
            let selected: Vec<_> = ch
                .experiments
                .iter()
                .filter(|e| only.is_empty() || only.iter().any(|o| *o == e.name()))
                .collect();
            let overrides: Result<Vec<Override>, String> = m
                .get_many::<String>("set")
                .map(|v| v.map(|s| Override::parse(s)).collect())
                .unwrap_or_else(|| Ok(Vec::new()));
            let overrides = match overrides.and_then(|o| {
                let decl: Vec<(&str, &[params::Param])> =
                    selected.iter().map(|e| (e.name(), e.params())).collect();
                params::check_overrides(&o, &decl).map(|()| o)
            }) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            // Bad values are refused before anything is measured.
            for e in &selected {
                if let Err(err) = params::resolve(e.name(), e.params(), profile, &overrides) {
                    eprintln!("error: {err}");
                    return ExitCode::from(2);
                }
            }
            run(
                ch,
                &selected,
                profile,
                &overrides,
                m.get_flag("missing"),
                &dir,
            )
        }
        Some((sub @ ("table" | "plot"), m)) => {
            let kind = if sub == "table" {
                ViewKind::Table
            } else {
                ViewKind::Plot
            };
            let name = m.get_one::<String>("name").expect("required");
            let profile = match profile_from_env() {
                Ok(p) => p,
                Err(code) => return code,
            };
            let overrides = match set_for(ch) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            if kind == ViewKind::Table
                && [crate::answer::ANSWER_VIEW, crate::answer::THREATS_VIEW]
                    .contains(&name.as_str())
            {
                return answer(
                    ch,
                    name == crate::answer::THREATS_VIEW,
                    profile,
                    &overrides,
                    &dir,
                );
            }
            let view = ch.view(kind, name).expect("validated by clap");
            let exp = ch
                .experiment(view.experiment())
                .expect("checked by Chapter::check");
            match runner::obtain(ch, exp, profile, &overrides, &dir, Mode::this_executable()) {
                Ok(shown) => {
                    print!("{}", render_view(view, &shown));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        _ => unreachable!("clap requires a subcommand"),
    }
}

/// The chapter's decision table: every experiment its findings read is obtained
/// (measured when missing, as any view's is), then the findings are rendered from
/// those results. An experiment that cannot be obtained leaves its rows saying so.
fn answer(
    ch: &'static Chapter,
    threats: bool,
    profile: Profile,
    overrides: &[Override],
    dir: &Path,
) -> ExitCode {
    let mut records = Vec::new();
    for f in ch.findings.iter().filter(|f| f.is_threat() == threats) {
        if records
            .iter()
            .any(|r: &crate::Record| r.experiment == f.experiment())
        {
            continue;
        }
        let exp = ch
            .experiment(f.experiment())
            .expect("checked by Chapter::check");
        match runner::obtain(ch, exp, profile, overrides, dir, Mode::this_executable()) {
            Ok(shown) => records.push(shown.record),
            Err(e) => eprintln!("error: {}/{}: {e}", ch.name, f.experiment()),
        }
    }
    if threats {
        print!("{}", crate::answer::chapter_threats(ch.findings, &records));
    } else {
        print!("{}", crate::answer::chapter_answer(ch.findings, &records));
    }
    ExitCode::SUCCESS
}

fn run(
    ch: &'static Chapter,
    selected: &[&&'static dyn crate::experiment::AnyExperiment],
    profile: Profile,
    overrides: &[Override],
    missing: bool,
    dir: &Path,
) -> ExitCode {
    // `--missing`: only what the book has nothing good to show for (full or quick),
    // asked before waiting for the lock and again once it is held (another build may
    // have measured it meanwhile).
    let still_missing = |e: &&&&'static dyn crate::experiment::AnyExperiment, say: bool| {
        if !missing {
            return true;
        }
        let values = params::resolve(e.name(), e.params(), profile, overrides).unwrap_or_default();
        match runner::up_to_date(ch, ***e, &values, dir) {
            Some(line) => {
                if say {
                    println!("{line}");
                }
                false
            }
            None => true,
        }
    };
    let todo: Vec<_> = selected.iter().filter(|e| still_missing(e, true)).collect();
    if todo.is_empty() {
        return ExitCode::SUCCESS;
    }
    // A folder that cannot take the results (the results folder or the chapter's: not
    // this user's, writable by others, full) is said now, not after measuring.
    if let Err(e) = cache::check_writable_chapters(dir, &[ch.name]) {
        eprintln!("error: {e:#}");
        return ExitCode::FAILURE;
    }
    let _lock = match MeasureLock::acquire() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let todo: Vec<_> = todo
        .into_iter()
        .filter(|e| still_missing(e, true))
        .collect();
    let mut failed = 0;
    for e in todo {
        let record = match runner::measure(&Request {
            chapter: ch,
            experiment: **e,
            profile,
            overrides,
            mode: Mode::this_executable(),
        }) {
            Ok(r) => r,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::from(2);
            }
        };
        if !record.is_ok() {
            failed += 1;
        }
        match cache::store(dir, &record) {
            Ok(p) => println!(
                "{}/{}: {} in {:.1} s, {} rounds -> {}",
                ch.name,
                e.name(),
                record.status.describe(),
                record.wall_s,
                record.rounds.len(),
                p.display()
            ),
            Err(err) => {
                eprintln!("{}/{}: cannot store the result: {err:#}", ch.name, e.name());
                return ExitCode::FAILURE;
            }
        }
    }
    // A failed experiment is reported in the book; the run itself succeeded.
    if failed > 0 {
        eprintln!("{failed} experiment(s) did not succeed; the book will say so");
    }
    ExitCode::SUCCESS
}
