//! `all-results`: the book's results as a whole. See `all-results --help`.

use all_results::{
    Bundle, CHAPTERS, all_shown, appendix, changes, compare, figures, records, same, selftest,
    session,
};
use clap::{Parser, Subcommand};
use harness::cache::results_dir;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "all-results",
    about = "Every result of The Cost of Waiting: the appendix's tables, the headline figures, the published bundle, what changed, and comparisons of two machines or runs",
    after_help = "Results are read from target/book-results/ (or $COW_RESULTS_DIR); `table`, `json`, \
                  `headlines` and `stamp` measure what is missing, in $COW_PROFILE (default quick). \
                  $COW_PROFILE, $COW_SET or $COW_THRESHOLD set to nothing counts as unset, as \
                  $COW_RESULTS_DIR does; one that is not UTF-8 text is refused.\n\n\
                  Exit status: 0 when the command did what it says; 1 when it ran and failed \
                  (an import that imported nothing; a snapshot, table or stamp that could not \
                  be made or written, a results folder another user controls included); 2 \
                  when it was refused (a bad argument or setting, a file `compare` or \
                  `import` cannot read; for `measure`, a results folder, chapter folder or \
                  measuring lock that is not this user's or that others can write), or when \
                  `measure` could not store a result. A refused `measure` has written \
                  nothing, the previous run included."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Markdown for the appendix's and How we measure's markers: overview, download, headlines, compare-data, budgets, aa (the A/A self-test), two-runs (how often two runs disagreed), same (one quantity measured by two experiments), or a chapter's slug
    Table { name: String },
    /// The whole run (headline figures and every record) as one JSON document
    Json,
    /// The headline figures, one line each (`--json`: one JSON object per line)
    Headlines {
        #[arg(long)]
        json: bool,
    },
    /// Measure the whole book in one session, every experiment's rounds interleaved
    /// (round 1 of each, then round 2 of each, …); without --missing it first remembers
    /// what the book showed and ends with what moved
    Measure {
        /// quick or full; default: $COW_PROFILE, else quick
        #[arg(long)]
        profile: Option<harness::Profile>,
        /// Only experiments the book has no good result for (full or quick) from the current code
        #[arg(long)]
        missing: bool,
        /// CHAPTER.NAME=VALUE or CHAPTER.EXPERIMENT.NAME=VALUE; the result is stored
        /// beside the default one, which the book keeps showing
        #[arg(long = "set", value_name = "CHAPTER.NAME=VALUE")]
        set: Vec<String>,
    },
    /// Remember what the book shows now, as the previous run
    Snapshot,
    /// What moved since the previous run (`snapshot`), beyond both runs' intervals
    Changes,
    /// Headline figures of two results files side by side, as a Markdown table
    Compare { a: PathBuf, b: PathBuf },
    /// Write the measuring machine onto a built site's front page
    Stamp { site: PathBuf },
    /// Copy the good results of another results folder that match the current code; those of
    /// another operating system are kept apart, under other-machines/, for the per-OS sections
    Import { from: PathBuf },
}

fn table_names() -> Vec<&'static str> {
    let mut v = all_results::APPENDIX_TABLES.to_vec();
    v.extend(CHAPTERS.iter().map(|c| c.name));
    v
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(harness::worker::WORKER_ARG) {
        return harness::worker::worker_main(CHAPTERS, &args[2..]);
    }
    if let Some(code) = harness::cli::stale_check_crates(&all_results::sources()) {
        return code;
    }
    if let Err(e) = all_results::check_set() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    let dir = results_dir();
    let profile = match harness::cli::profile_from_env() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let out: anyhow::Result<String> = match cli.command {
        Command::Table { name } => {
            if !table_names().contains(&name.as_str()) {
                eprintln!(
                    "error: no table `{name}`; the tables are: {}",
                    table_names().join(", ")
                );
                return ExitCode::from(2);
            }
            // Other machines' figures only: nothing of this machine is measured for it.
            if name == "other-os" {
                return print_or_fail(all_results::others::short_sleeps_section(&dir));
            }
            let shown = all_shown(profile, &dir, true);
            match name.as_str() {
                "overview" => Ok(appendix::overview(&shown)),
                "findings" => Ok(appendix::findings(&records(&shown))),
                "verdict-rates" => Ok(appendix::verdict_rates()),
                "download" => appendix::download(&Bundle::of(records(&shown)).without_round_data()),
                "headlines" => Ok(appendix::headlines(&figures(&records(&shown)))),
                "compare-data" => appendix::compare_data(&Bundle::of(records(&shown))),
                "budgets" => Ok(appendix::budgets(&shown)),
                "watcher" => Ok(appendix::watcher(&records(&shown))),
                "aa" => Ok(selftest::aa_view(&records(&shown))),
                "two-runs" => Ok(selftest::two_runs_view(&dir)),
                "same" => Ok(same::view(&records(&shown))),
                "verdict-example" => Ok(all_results::worked::view(&records(&shown))),
                slug => Ok(appendix::chapter_tables(
                    all_results::chapter(slug).expect("listed"),
                    &shown,
                )),
            }
        }
        Command::Json => Bundle::of(records(&all_shown(profile, &dir, true))).to_json(
            harness::safe::BUNDLE_CAP,
            harness::validate::MAX_BUNDLE_VALUES,
        ),
        Command::Headlines { json } => {
            let figs = figures(&records(&all_shown(profile, &dir, true)));
            figs.iter()
                .map(|f| {
                    if json {
                        serde_json::to_string(f)
                            .map(|j| j + "\n")
                            .map_err(Into::into)
                    } else {
                        Ok(format!(
                            "{:<40} {}\n",
                            f.name,
                            harness::render::fmt_estimate(&f.estimate(), f.unit)
                        ))
                    }
                })
                .collect()
        }
        Command::Measure {
            profile: chosen,
            missing,
            set,
        } => {
            let profile = chosen.unwrap_or(profile);
            // Bad parameters are refused before anything is written, the previous run
            // included.
            if let Err(e) = session::check(profile, &set) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            // The lock, the folder probes and every other check come before anything is
            // written, the previous run included (issue 35, items 6 and 7).
            let ready = match session::prepare(profile, missing, &set, &dir) {
                Ok(ready) => ready,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            // A session that measures everything is one of "two runs": it remembers
            // what the book showed, to say afterwards what moved.
            let before = if missing {
                None
            } else {
                let before = changes::current(&dir);
                if let Err(e) = changes::snapshot(&dir) {
                    eprintln!("warning: could not remember the previous run: {e:#}");
                }
                Some(before)
            };
            match session::measure(profile, ready, &dir) {
                Ok(outcome) => Ok(session::summary(&outcome, &dir, before.as_deref())),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        Command::Snapshot => changes::snapshot(&dir).map(|n| {
            format!(
                "saved the {n} results the book shows now as the previous run ({})\n",
                changes::snapshot_path(&dir).display()
            )
        }),
        Command::Changes => Ok(match changes::load_snapshot(&dir) {
            // Only reported: the measuring session that made `after` remembered it.
            Some(before) => changes::compare(&before, &changes::current(&dir)).render(),
            None => format!(
                "What changed since the previous run: nothing to compare with (no {}).\n",
                changes::snapshot_path(&dir).display()
            ),
        }),
        Command::Compare { a, b } => match (Bundle::read(&a), Bundle::read(&b)) {
            (Ok(x), Ok(y)) => Ok(compare::markdown(
                &x,
                &y,
                &a.display().to_string(),
                &b.display().to_string(),
            )),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("error: {}", harness::safe::terminal(&format!("{e:#}")));
                return ExitCode::from(2);
            }
        },
        Command::Stamp { site } => {
            // A site that is not there is said before anything is measured.
            if !["index.html", "introduction.html"]
                .iter()
                .any(|p| site.join(p).is_file())
            {
                eprintln!(
                    "error: no built site in {} (no index.html); run `mdbook build` or `make build` first",
                    harness::safe::terminal(&site.display().to_string())
                );
                return ExitCode::from(2);
            }
            // Where the listings link to, checked before anything is measured too.
            let source = match harness::env::text("COW_SOURCE_URL")
                .and_then(|s| s.map(|s| appendix::SourceUrl::parse(&s)).transpose())
            {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {}", harness::safe::terminal(&e));
                    return ExitCode::from(2);
                }
            };
            stamp(
                &site,
                &records(&all_shown(profile, &dir, true)),
                source.as_ref(),
            )
        }
        Command::Import { from } => {
            // Stored under the registry's names, never the record's; other operating
            // systems' records apart from this machine's (see others::import).
            let done = match all_results::others::import(&from, &dir) {
                Ok(done) => done,
                Err(why) => {
                    eprintln!("error: {why}");
                    return ExitCode::from(2);
                }
            };
            for (verb, list) in [("refused", &done.refused), ("skipped", &done.skipped)] {
                for (path, why) in list {
                    eprintln!(
                        "{verb} {}: {}",
                        harness::safe::terminal(&path.display().to_string()),
                        harness::safe::terminal(why)
                    );
                }
            }
            // An import that imports nothing failed, whatever the reasons (named above):
            // exit 1, apart from the 2 of a source that cannot be read at all.
            if done.copied == 0 && done.other_machines == 0 {
                eprintln!(
                    "error: nothing imported from {}: {} files refused, {} skipped",
                    harness::safe::terminal(&from.display().to_string()),
                    done.refused.len(),
                    done.skipped.len()
                );
                return ExitCode::FAILURE;
            }
            Ok(format!(
                "imported {} good results matching the current code from {}{}{}\n",
                done.copied,
                harness::safe::terminal(&from.display().to_string()),
                if done.other_machines == 0 {
                    String::new()
                } else {
                    format!(
                        "; kept {} good results of other operating systems apart, in {}",
                        done.other_machines,
                        harness::safe::terminal(
                            &dir.join(all_results::others::DIR).display().to_string()
                        )
                    )
                },
                if done.refused.is_empty() {
                    String::new()
                } else {
                    format!("; refused {} files (named above)", done.refused.len())
                }
            ))
        }
    };
    print_or_fail(out)
}

fn print_or_fail(out: anyhow::Result<String>) -> ExitCode {
    match out {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Stamps the front page (`index.html` and the first chapter's own page) of a built site;
/// with a source address, links every page's listing captions to their files.
fn stamp(
    site: &std::path::Path,
    records: &[harness::Record],
    source: Option<&appendix::SourceUrl>,
) -> anyhow::Result<String> {
    let stamp = appendix::published_stamp(records);
    let mut done = Vec::new();
    for page in ["index.html", "introduction.html"] {
        let path = site.join(page);
        let Ok(html) = std::fs::read_to_string(&path) else {
            continue;
        };
        let stamped = appendix::stamp_page(&html, &stamp)
            .ok_or_else(|| anyhow::anyhow!("{} has no <main>", path.display()))?;
        std::fs::write(&path, stamped)?;
        done.push(path.display().to_string());
    }
    anyhow::ensure!(
        !done.is_empty(),
        "no front page found in {}",
        site.display()
    );
    let mut said = format!(
        "stamped the measuring machine onto {}\n",
        done.join(" and ")
    );
    if let Some(source) = source {
        let mut linked = 0;
        for e in std::fs::read_dir(site)?.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "html") || !path.is_file() {
                continue;
            }
            let html = std::fs::read_to_string(&path)?;
            let (out, n) = appendix::link_listings(&html, source);
            if n > 0 {
                std::fs::write(&path, out)?;
                linked += n;
            }
        }
        said.push_str(&format!(
            "linked {linked} listing captions to their files\n"
        ));
    }
    Ok(said)
}
