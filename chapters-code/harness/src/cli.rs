//! The command line every chapter binary shares:
//! `list`, `run [--profile quick|full] [--only NAME]… [--missing] [--set NAME=VALUE]…`,
//! `table NAME`, `plot NAME`; and the hidden `__worker` that runs rounds.
//!
//! Bad input (an unknown name, a bad profile, a parameter out of range) exits with
//! status 2 and lists what is valid.

use crate::cache::{self, MeasureLock};
use crate::experiment::{Chapter, ViewKind};
use crate::params::{self, Override};
use crate::profile::Profile;
use crate::render::{fmt_number, render_view};
use crate::runner::{self, Mode, Request};
use crate::worker;
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, Command, value_parser};
use std::path::Path;
use std::process::ExitCode;

/// Exit status of a binary whose embedded code key no longer matches the sources on
/// disk (asked with `COW_CHECK_FRESH=1`): `run.sh` rebuilds and runs it again.
pub const STALE: u8 = 75;

fn command(ch: &Chapter) -> Command {
    let experiments: Vec<&'static str> = ch.experiments.iter().map(|e| e.name()).collect();
    Command::new(ch.name)
        .about(format!(
            "Measurements of the chapter `{}` of The Cost of Waiting",
            ch.name
        ))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(
            Command::new("list")
                .about("List the experiments with their parameters, the tables, plots and headline figures"),
        )
        .subcommand(
            Command::new("run")
                .about("Measure experiments afresh and store the results")
                .arg(
                    Arg::new("profile")
                        .long("profile")
                        .value_parser(value_parser!(Profile))
                        .help("quick or full; default: $COW_PROFILE, else quick"),
                )
                .arg(
                    Arg::new("missing")
                        .long("missing")
                        .action(ArgAction::SetTrue)
                        .help("Only experiments the book has no good result for (full or quick) from the current code"),
                )
                .arg(
                    Arg::new("only")
                        .long("only")
                        .action(ArgAction::Append)
                        .value_parser(PossibleValuesParser::new(experiments)),
                )
                .arg(
                    Arg::new("set")
                        .long("set")
                        .value_name("NAME=VALUE")
                        .action(ArgAction::Append)
                        .help("Set a parameter (see `list`); EXPERIMENT.NAME=VALUE sets it for one experiment. The result is stored beside the default one, which the book keeps showing."),
                ),
        )
        .subcommand(
            Command::new("table")
                .about("Print a table as Markdown (measuring first if no result matches the code)")
                .arg(
                    Arg::new("name")
                        .required(true)
                        .value_parser(PossibleValuesParser::new(ch.view_names(ViewKind::Table))),
                ),
        )
        .subcommand(
            Command::new("plot")
                .about("Print a plot as inline SVG (measuring first if no result matches the code)")
                .arg(
                    Arg::new("name")
                        .required(true)
                        .value_parser(PossibleValuesParser::new(ch.view_names(ViewKind::Plot))),
                ),
        )
        .after_help(
            "Results are stored in target/book-results/ (or $COW_RESULTS_DIR). `table` and `plot` \
             show the good full-profile result for the current code, else the quick one, else \
             measure in $COW_PROFILE (default quick). $COW_SET (e.g. \"brigades.tasks=2000\") \
             makes them show the result measured with those parameters.",
        )
}

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

/// The profile named by `$COW_PROFILE` (quick when unset); exit 2 when it is not one,
/// or when `$COW_THRESHOLD` is set to something that is not a percentage.
pub fn profile_from_env() -> Result<Profile, ExitCode> {
    if let Some(e) = crate::stats::threshold_problem() {
        eprintln!("error: {e}");
        return Err(ExitCode::from(2));
    }
    Profile::from_env().map_err(|e| {
        eprintln!("error: COW_PROFILE: {e}");
        ExitCode::from(2)
    })
}

/// The overrides `$COW_SET` gives this chapter: space-separated
/// `CHAPTER.NAME=VALUE` or `CHAPTER.EXPERIMENT.NAME=VALUE`; other chapters' entries
/// are skipped, and an entry that names no chapter is an error.
pub fn overrides_from_env(chapter: &str) -> Result<Vec<Override>, String> {
    let Ok(text) = std::env::var("COW_SET") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in text.split_whitespace() {
        let lhs = item.split_once('=').map_or(item, |(l, _)| l);
        let Some((ch, _)) = lhs.split_once('.') else {
            return Err(format!(
                "COW_SET: `{item}` names no chapter; write CHAPTER.NAME=VALUE, e.g. brigades.tasks=2000"
            ));
        };
        if ch == chapter {
            out.push(Override::parse(&item[ch.len() + 1..]).map_err(|e| format!("COW_SET: {e}"))?);
        }
    }
    Ok(out)
}

/// Whether the crate in `dir` declares a chapter: its registry (`src/chapter.rs`, or
/// `src/lib.rs` for a chapter that keeps it there) holds `harness::chapter!(`.
pub fn declares_a_chapter(dir: &Path) -> bool {
    ["src/chapter.rs", "src/lib.rs"].iter().any(|f| {
        std::fs::read_to_string(dir.join(f)).is_ok_and(|s| s.contains("harness::chapter!("))
    })
}

/// The chapters of the book, by slug, for the binaries that know only their own
/// chapter (`dir` is the chapter crate's folder): the crates beside it whose registry
/// (`src/chapter.rs`, or `src/lib.rs`) declares a chapter (`harness::chapter!(`), so no second list of
/// chapters is kept here. `all-results` holds the registry, and `book-tests`' registry
/// test checks that the folders and the registry agree. Empty where the sources are not
/// on disk.
pub fn book_chapters(dir: &Path) -> Vec<String> {
    let Some(parent) = dir.parent() else {
        return Vec::new();
    };
    let mut out: Vec<String> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| declares_a_chapter(&e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// `$COW_SET`'s entries must name a chapter of the book, and those for this chapter
/// parameters it declares (an entry with a typo would otherwise show the default
/// results without a word). Other chapters' parameters are checked by their binaries
/// and by `all-results`, which every build runs.
pub fn check_set_for(ch: &Chapter) -> Result<(), String> {
    if let Ok(text) = std::env::var("COW_SET") {
        for item in text.split_whitespace() {
            let lhs = item.split_once('=').map_or(item, |(l, _)| l);
            let slug = lhs.split_once('.').map_or(lhs, |(c, _)| c);
            if slug == ch.name {
                continue;
            }
            let known = book_chapters(Path::new(ch.dir));
            if !known.is_empty() && !known.iter().any(|k| k == slug) {
                return Err(format!(
                    "COW_SET: `{item}` names no chapter; write CHAPTER.NAME=VALUE with one of: {}",
                    known.join(", ")
                ));
            }
        }
    }
    let overrides = overrides_from_env(ch.name)?;
    let decl: Vec<(&str, &[params::Param])> = ch
        .experiments
        .iter()
        .map(|e| (e.name(), e.params()))
        .collect();
    params::check_overrides(&overrides, &decl).map_err(|e| format!("COW_SET: {e}"))
}

pub fn main_from<I, T>(ch: &'static Chapter, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = match command(ch).try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    let dir = cache::results_dir();
    match matches.subcommand() {
        Some(("list", _)) => {
            print!("{}", list(ch));
            ExitCode::SUCCESS
        }
        Some(("run", m)) => {
            if let Err(e) = check_set_for(ch) {
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
            let view = ch.view(kind, name).expect("validated by clap");
            let exp = ch
                .experiment(view.experiment())
                .expect("checked by Chapter::check");
            let profile = match profile_from_env() {
                Ok(p) => p,
                Err(code) => return code,
            };
            let overrides = match check_set_for(ch).and_then(|()| overrides_from_env(ch.name)) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
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

/// `list`: experiments with their budgets and parameters, views, headline figures.
pub fn list(ch: &Chapter) -> String {
    let mut out = String::from("experiments:\n");
    for e in ch.experiments {
        let (q, f) = (e.budget(Profile::Quick), e.budget(Profile::Full));
        out.push_str(&format!(
            "  {:<14} {}\n  {:<14} budget: quick {} s ({}–{} rounds), full {} s ({} rounds); {}\n",
            e.name(),
            e.about(),
            "",
            q.time.as_secs(),
            q.min_rounds,
            q.max_rounds,
            f.time.as_secs(),
            f.min_rounds,
            e.isolation().describe()
        ));
        for p in e.params() {
            out.push_str(&format!(
                "  {:<14}   --set {}=…  {}{}; {}; quick {}, full {}\n",
                "",
                p.name,
                p.about,
                if p.unit.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", p.unit)
                },
                p.range_text(),
                fmt_number(p.quick, p.integer),
                fmt_number(p.full, p.integer)
            ));
        }
    }
    for (kind, label) in [(ViewKind::Table, "tables"), (ViewKind::Plot, "plots")] {
        out.push_str(&format!("{label}:\n"));
        for v in ch.views.iter().filter(|v| v.kind() == kind) {
            out.push_str(&format!("  {:<16} (from {})\n", v.name(), v.experiment()));
        }
    }
    out.push_str("headline figures:\n");
    for h in ch.headlines {
        out.push_str(&format!(
            "  {:<36} {}/{}\n",
            h.name, h.experiment, h.reading
        ));
    }
    out
}
