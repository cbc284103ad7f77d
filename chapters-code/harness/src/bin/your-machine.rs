//! Prints the "Your machine" page's table: facts and limits read live.

use harness::machine_words::facts;
use harness::render::{Align, Table, escape_html, scrub};
use std::process::ExitCode;

fn main() -> ExitCode {
    if let Some(code) =
        harness::cli::stale_check_crates(&[(env!("CARGO_MANIFEST_DIR"), env!("COW_SOURCE_HASH"))])
    {
        return code;
    }
    let mut t = Table::new(["what", "on this machine", "why it matters"])
        .align(1, Align::Left)
        .align(2, Align::Left);
    for f in facts() {
        let value = f
            .value
            .map_or_else(|| "not readable here".into(), |v| scrub(&v));
        t.row([f.name, escape_html(&value), f.why]);
    }
    print!("{}", t.to_markdown());
    println!(
        "\n<p class=\"cow-provenance\">Read live when this page was built, by the harness crate ({} build).</p>",
        env!("COW_BUILD")
    );
    ExitCode::SUCCESS
}
