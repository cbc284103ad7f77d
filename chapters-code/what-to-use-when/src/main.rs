//! `what-to-use-when table <section>`: one section of the decision guide as Markdown,
//! computed from the stored results (measuring what is missing, in `$COW_PROFILE`).

use std::process::ExitCode;
use what_to_use_when::{SECTIONS, section};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(harness::worker::WORKER_ARG) {
        return harness::worker::worker_main(all_results::CHAPTERS, &args[2..]);
    }
    // The guide runs the appendix crate's code too: a change there makes it stale.
    let mut crates = all_results::sources();
    crates.push((env!("CARGO_MANIFEST_DIR"), env!("COW_SOURCE_HASH")));
    if let Some(code) = harness::cli::stale_check_crates(&crates) {
        return code;
    }
    if let Err(e) = all_results::check_set() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let profile = match harness::cli::profile_from_env() {
        Ok(p) => p,
        Err(code) => return code,
    };
    match args
        .iter()
        .skip(1)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["table", name] => match section(name, profile, &harness::cache::results_dir()) {
            Some(md) => {
                print!("{md}");
                ExitCode::SUCCESS
            }
            None => {
                eprintln!(
                    "error: no table `{name}`; the tables are: {}",
                    SECTIONS.join(", ")
                );
                ExitCode::from(2)
            }
        },
        _ => {
            eprintln!(
                "usage: what-to-use-when table <name>\ntables: {}",
                SECTIONS.join(", ")
            );
            ExitCode::from(2)
        }
    }
}
