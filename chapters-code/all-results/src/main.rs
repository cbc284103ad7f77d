//! The appendix's command line:
//!
//! - `table overview|download|<chapter>`: Markdown for the book's markers (measures
//!   what is missing, in `$COW_PROFILE`, like every chapter binary);
//! - `json`: the whole run as one JSON document on stdout;
//! - `snapshot`, `changes`: what `make regenerate` uses to say what moved;
//! - `stamp <site folder>`: writes the measuring machine onto a built site's front page.

use all_results::{CHAPTERS, all_records, appendix, changes};
use harness::cache::results_dir;
use std::process::ExitCode;

const USAGE: &str =
    "usage: all-results table <view> | json | snapshot | changes | stamp <site folder>";

fn table_names() -> Vec<&'static str> {
    let mut v = vec!["overview", "download"];
    v.extend(CHAPTERS.iter().map(|c| c.name));
    v
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let dir = results_dir();
    let profile = match all_results::profile_from_env() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: COW_PROFILE: {e}");
            return ExitCode::from(2);
        }
    };
    let out = match args.as_slice() {
        ["table", name] if table_names().contains(name) => {
            let records = all_records(profile, &dir);
            match *name {
                "overview" => Ok(appendix::overview(&records)),
                "download" => appendix::download(&records),
                slug => Ok(appendix::chapter_tables(
                    all_results::chapter(slug).expect("listed"),
                    &records,
                )),
            }
        }
        ["table", name] => {
            eprintln!(
                "error: no table `{name}`; the tables are: {}",
                table_names().join(", ")
            );
            return ExitCode::from(2);
        }
        ["json"] => appendix::bundle(&all_records(profile, &dir)).map(|j| j + "\n"),
        ["snapshot"] => changes::snapshot(&dir).map(|n| {
            format!(
                "saved the {n} results the book shows now as the previous run ({})\n",
                changes::snapshot_path(&dir).display()
            )
        }),
        ["changes"] => Ok(match changes::load_snapshot(&dir) {
            Some(before) => changes::compare(&before, &changes::current(&dir)).render(),
            None => format!(
                "What changed since the previous run: nothing to compare with (no {}).\n",
                changes::snapshot_path(&dir).display()
            ),
        }),
        ["stamp", site] => stamp(site, &all_records(profile, &dir)),
        _ => {
            eprintln!("{USAGE}\ntables: {}", table_names().join(", "));
            return ExitCode::from(2);
        }
    };
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

/// Stamps the front page (`index.html` and the first chapter's own page) of a built site.
fn stamp(site: &str, records: &[harness::Record]) -> anyhow::Result<String> {
    let stamp = appendix::published_stamp(records);
    let mut done = Vec::new();
    for page in ["index.html", "introduction.html"] {
        let path = std::path::Path::new(site).join(page);
        let Ok(html) = std::fs::read_to_string(&path) else {
            continue;
        };
        let stamped = appendix::stamp_page(&html, &stamp)
            .ok_or_else(|| anyhow::anyhow!("{} has no <main>", path.display()))?;
        std::fs::write(&path, stamped)?;
        done.push(path.display().to_string());
    }
    anyhow::ensure!(!done.is_empty(), "no front page found in {site}");
    Ok(format!(
        "stamped the measuring machine onto {}\n",
        done.join(" and ")
    ))
}
