//! What a chapter's binary tells people about its command line: the grammar and help
//! of `--help` ([`command`]), the `list` subcommand's text ([`list`]), and the
//! chapters a `$COW_SET` entry may name ([`BOOK_CHAPTERS`]). Part of the page layer,
//! outside the code key (`key/hash.rs`): rewording the help measures nothing.

use crate::experiment::{Chapter, ViewKind};
use crate::fmt::fmt_number;
use crate::profile::Profile;
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, Command, value_parser};

/// The chapters of the book, by slug, in reading order, for the binaries that know
/// only their own chapter: a `$COW_SET` entry must name one of them. `all-results`
/// holds the registry (`CHAPTERS`); its test `the_harness_knows_every_chapter_by_name`
/// checks that this list is the same, so the binaries never read the sources to find
/// the chapters.
pub const BOOK_CHAPTERS: &[&str] = &[
    "spinning-vs-sleeping",
    "brigades",
    "short-sleeps",
    "throttles",
    "async-locks",
];

/// The environment variables, after the subcommands in `--help`.
pub const AFTER_HELP: &str = "Results are stored in target/book-results/ (or $COW_RESULTS_DIR). \
`table` and `plot` show the good full-profile result for the current code, else the quick \
one, else measure in $COW_PROFILE (default quick). $COW_SET (e.g. \"brigades.tasks=2000\") \
makes them show the result measured with those parameters. $COW_PROFILE, $COW_SET or \
$COW_THRESHOLD set to nothing counts as unset, as $COW_RESULTS_DIR does; one that is not \
UTF-8 text is refused.";

/// The command line's grammar and help (`--help`) for a chapter's binary.
pub fn command(ch: &Chapter) -> Command {
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
        .after_help(AFTER_HELP)
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
            h.name,
            h.experiment,
            h.reading.stored()
        ));
    }
    out
}
