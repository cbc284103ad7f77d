//! `what-to-use-when table <section>`: one section of the decision guide as Markdown,
//! computed from the cached results (measuring what is missing, in `$COW_PROFILE`).

use std::process::ExitCode;
use what_to_use_when::{SECTIONS, section};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let profile = match harness::Profile::from_env() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: COW_PROFILE: {e}");
            return ExitCode::from(2);
        }
    };
    match args
        .iter()
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
