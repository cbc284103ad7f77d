//! Markdown to HTML as the book's mdbook renders a page's text: pulldown-cmark at the
//! version mdbook 0.4.52 uses (tools/Cargo.lock), with the options its
//! `utils::render_markdown` turns on (`new_cmark_parser`: tables, footnotes,
//! strikethrough, task lists, heading attributes; no smart punctuation). The tests that
//! check no markup reaches a page from a record's text read this HTML; what mdbook adds
//! after the parser (footnote back-links, link rewriting, table wrappers) makes no tag
//! from text.

use pulldown_cmark::{Options, Parser, html};

pub fn render(text: &str) -> String {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_FOOTNOTES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    opts.insert(Options::ENABLE_HEADING_ATTRIBUTES);
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, Parser::new_ext(text, opts));
    out
}

/// The options are mdbook's: a table renders as one, and inline HTML in a record's
/// text stays text only because the views escape it (checked by the callers).
#[test]
fn renders_as_mdbook_does() {
    let html = render("| a | b |\n|---|---|\n| 1 | ~~2~~ |\n\n- [x] done\n");
    assert!(html.contains("<table>"), "{html}");
    assert!(html.contains("<del>2</del>"), "{html}");
    assert!(html.contains("type=\"checkbox\""), "{html}");
}
