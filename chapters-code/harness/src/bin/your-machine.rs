//! Prints the "Your machine" page's table: facts and limits read live.

use harness::machine::facts;
use harness::render::Table;

fn main() {
    let mut t = Table::new(["what", "on this machine", "why it matters"])
        .align(1, harness::render::Align::Left)
        .align(2, harness::render::Align::Left);
    for f in facts() {
        let value = f.value.unwrap_or_else(|| "not readable here".into());
        t.row([f.name, value, f.why]);
    }
    print!("{}", t.to_markdown());
    println!(
        "\n<p class=\"cow-provenance\">Read live when this page was built, by the harness crate ({}).</p>",
        if cfg!(debug_assertions) {
            "(debug build)"
        } else {
            "(release build)"
        }
    );
}
