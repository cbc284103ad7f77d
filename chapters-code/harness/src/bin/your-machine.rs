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
    // The rows above are measured while the page builds; each measuring session reads the
    // clock once too (`Underneath::current`), away from the build (the eleventh review
    // found the two 35 % apart). Both are shown.
    let stored: Vec<f64> = harness::cache::all_records(&harness::cache::results_dir())
        .iter()
        .filter_map(|r| r.provenance.machine.underneath.as_ref()?.clock.read_ns)
        .collect();
    let (lo, hi) = stored
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(a, b), x| (a.min(*x), b.max(*x)));
    let ns = harness::fmt::fmt_ns;
    if let Some(e) = harness::Estimate::of(&stored) {
        let figure = if ns(lo) == ns(hi) {
            ns(e.median)
        } else {
            format!(
                "{} (median of {} results, range {}–{})",
                ns(e.median),
                stored.len(),
                ns(lo),
                ns(hi)
            )
        };
        println!(
            "\nThe measured rows ran while this page was built, beside the build's own work. \
             The clock's reading cost as the stored results' measuring sessions read it (once \
             a session, in the measuring process): {figure}."
        );
    }
    println!(
        "\n<p class=\"cow-provenance\">Read live when this page was built, by the harness crate ({} build).</p>",
        env!("COW_BUILD")
    );
    ExitCode::SUCCESS
}
