//! Issue 28: the door fuzzed. Records with arbitrary and hostile text in every text
//! field, and records whose JSON is mutated byte by byte, go through the schema
//! (`harness::validate`) and, where it lets them in, through every renderer that shows
//! a record: a chapter's table and the appendix (as Markdown, then as HTML through
//! mdbook's own renderer), the Compare machines page's data, and the terminal. Each
//! record is refused, or its output holds no `<script`, no `{{`, no `javascript:` link
//! and no control or format character (the property-based `proptest` crate draws the
//! cases; a failure prints the smallest record it found).

use all_results::Bundle;
use harness::cache::Shown;
use harness::{Record, ViewKind};
use proptest::prelude::*;

fn base() -> Record {
    let path =
        book_tests::book_root().join("book-tests/tests/fixtures/hostile/records/hostile-text.json");
    let mut r = harness::cache::read_checked(&path).expect("the fixture passes the schema");
    r.key = all_results::chapter("brigades").unwrap().key.to_string();
    r
}

/// Pieces an attacker would try, and ordinary words, joined at random.
fn hostile_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "<script>alert(1)</script>",
        "</script><script>",
        "{{#include /etc/hostname}}",
        "{{",
        "}}",
        "{",
        "#include",
        "[x](javascript:alert(1))",
        "javascript:",
        "![](http://other.host/t.png)",
        "<img src=x onerror=alert(1)>",
        "<!--",
        "\u{202E}",
        "\u{2028}",
        "\u{200B}",
        "\n\n",
        "\u{1b}[2J",
        "\"",
        "`",
        "|",
        "*",
        "\\",
        "&lt;",
        "cpu ",
        "x86_64",
    ]);
    prop_oneof![
        3 => prop::collection::vec(pieces, 0..8).prop_map(|v| v.concat()),
        1 => any::<String>(),
    ]
}

/// A control character (a newline is the renderers' own) or a format character.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n') || harness::safe::is_format(c)
}

/// Every renderer's output for a record the schema let in.
fn check_rendered(r: &Record) {
    let s = Shown {
        record: r.clone(),
        newer_failures: Vec::new(),
    };
    let mut md = all_results::appendix::overview(std::slice::from_ref(&s));
    // A mutated record may name another chapter, or none of the book's.
    if let Some(ch) = all_results::chapter(&r.chapter) {
        if let Some(view) = ch.view(ViewKind::Table, "variants") {
            md.push_str(&harness::render::render_view(view, &s));
        }
        md.push_str(&all_results::appendix::chapter_tables(
            ch,
            std::slice::from_ref(&s),
        ));
    }
    md.push_str(&all_results::appendix::published_stamp(
        std::slice::from_ref(r),
    ));
    assert!(!md.contains("{{"), "a directive in the Markdown: {md}");
    assert!(!md.chars().any(hidden), "a hidden character in: {md:?}");
    let html = mdbook::utils::render_markdown(&md, false).to_ascii_lowercase();
    for bad in [
        "<script",
        "<img",
        "href=\"javascript:",
        "src=\"javascript:",
        "src=\"http",
    ] {
        assert!(!html.contains(bad), "{bad} in {html}");
    }
    let data = all_results::appendix::compare_data(&Bundle::of(vec![r.clone()])).unwrap();
    let script = data
        .split("<script type=\"application/json\" id=\"cow-built-figures\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the page's data element");
    assert!(
        !script.contains('<') && !script.contains("{{") && !script.chars().any(hidden),
        "the page's data: {script}"
    );
    for text in [
        &r.provenance.machine.cpu,
        &r.provenance.machine.os,
        &r.isolation,
    ] {
        assert!(!harness::safe::terminal(text).chars().any(hidden));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn hostile_text_in_any_field_is_refused_or_rendered_as_text(
        cpu in hostile_text(),
        os in hostile_text(),
        isolation in hostile_text(),
        note in hostile_text(),
        detail in hostile_text(),
        failure in prop::option::of(hostile_text()),
    ) {
        let mut r = base();
        r.provenance.machine.cpu = cpu;
        r.provenance.machine.os = os;
        r.isolation = isolation;
        r.notes.push(harness::record::Note {
            kind: harness::record::NoteKind::Info,
            text: note,
        });
        r.details.push(("detail".into(), detail));
        if let Some(error) = failure {
            r.status = harness::record::Status::Failed { error };
        }
        match harness::validate::record(&r) {
            // A refusal's reason reaches a terminal: nothing in it may act there.
            Err(why) => prop_assert!(!harness::safe::terminal(&why).chars().any(hidden)),
            Ok(()) => check_rendered(&r),
        }
    }

    #[test]
    fn a_mutated_record_file_is_refused_or_rendered_as_text(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = serde_json::to_vec(&base()).unwrap();
        for (at, b) in flips {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record.json");
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(r) = harness::cache::read_checked(&path) {
            check_rendered(&r);
        }
    }
}
