//! The command line every chapter binary shares:
//! `list`, `run [--profile quick|full] [--only NAME]…`, `table NAME`, `plot NAME`.

use crate::cache;
use crate::experiment::{Chapter, ViewKind, measure, obtain, render_view};
use crate::profile::Profile;
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, Command, value_parser};
use std::process::ExitCode;

fn command(ch: &Chapter) -> Command {
    let experiments: Vec<&'static str> = ch.experiments.iter().map(|e| e.name).collect();
    Command::new(ch.name)
        .about(format!(
            "Measurements of the chapter `{}` of The Cost of Waiting",
            ch.name
        ))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(Command::new("list").about("List the experiments, tables and plots"))
        .subcommand(
            Command::new("run")
                .about("Measure experiments afresh and store the results")
                .arg(
                    Arg::new("profile")
                        .long("profile")
                        .value_parser(value_parser!(Profile))
                        .default_value("quick"),
                )
                .arg(
                    Arg::new("missing")
                        .long("missing")
                        .action(ArgAction::SetTrue)
                        .help("Only experiments with no cached result matching the code"),
                )
                .arg(
                    Arg::new("only")
                        .long("only")
                        .action(ArgAction::Append)
                        .value_parser(PossibleValuesParser::new(experiments)),
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
            "Results are cached in target/book-results/ (or $COW_RESULTS_DIR). `table` and `plot` \
             use a full-profile result matching the code, else a quick one, else measure in \
             $COW_PROFILE (default quick).",
        )
}

/// Runs the chapter binary's command line; returns its exit code.
pub fn main(ch: &Chapter) -> ExitCode {
    main_from(ch, std::env::args_os())
}

pub fn main_from<I, T>(ch: &Chapter, args: I) -> ExitCode
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
            println!("experiments:");
            for e in ch.experiments {
                println!("  {:<16} {}", e.name, e.about);
            }
            for (kind, label) in [(ViewKind::Table, "tables"), (ViewKind::Plot, "plots")] {
                println!("{label}:");
                for v in ch.views.iter().filter(|v| v.kind == kind) {
                    println!("  {:<16} (from {})", v.name, v.experiment);
                }
            }
            ExitCode::SUCCESS
        }
        Some(("run", m)) => {
            let profile = *m.get_one::<Profile>("profile").expect("has a default");
            let only: Vec<&String> = m
                .get_many::<String>("only")
                .map(|v| v.collect())
                .unwrap_or_default();
            let mut failed = 0;
            for e in ch
                .experiments
                .iter()
                .filter(|e| only.is_empty() || only.iter().any(|o| *o == e.name))
            {
                let r = measure(ch, e, profile);
                let status = match &r.status {
                    crate::record::Status::Ok => "ok".to_string(),
                    s => {
                        failed += 1;
                        format!("{s:?}")
                    }
                };
                match cache::store(&dir, &r) {
                    Ok(p) => println!(
                        "{}/{}: {status} in {:.1} s -> {}",
                        ch.name,
                        e.name,
                        r.wall_s,
                        p.display()
                    ),
                    Err(err) => {
                        eprintln!("{}/{}: cannot store the result: {err:#}", ch.name, e.name);
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
        Some((sub @ ("table" | "plot"), m)) => {
            let kind = if sub == "table" {
                ViewKind::Table
            } else {
                ViewKind::Plot
            };
            let name = m.get_one::<String>("name").expect("required");
            let view = ch.view(kind, name).expect("validated by clap");
            let Some(exp) = ch.experiment(view.experiment) else {
                eprintln!(
                    "internal error: view `{name}` names no experiment `{}`",
                    view.experiment
                );
                return ExitCode::FAILURE;
            };
            let profile = match Profile::from_env() {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: COW_PROFILE: {e}");
                    return ExitCode::from(2);
                }
            };
            let record = obtain(ch, exp, profile, &dir);
            print!("{}", render_view(view, &record));
            ExitCode::SUCCESS
        }
        _ => unreachable!("clap requires a subcommand"),
    }
}
