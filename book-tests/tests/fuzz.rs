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
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many drawn records the schema let in and every renderer showed.
static RENDERED: AtomicUsize = AtomicUsize::new(0);

fn base() -> Record {
    let path =
        book_tests::book_root().join("book-tests/tests/fixtures/hostile/records/hostile-text.json");
    let mut r = harness::cache::read_checked(&path).expect("the fixture passes the schema");
    r.key = all_results::chapter("brigades").unwrap().key.to_string();
    r
}

/// Pieces an attacker would try that the schema lets through (printable markup,
/// links, lone braces), and ordinary words, joined at random: these reach the renderers.
fn printable_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "<script>alert(1)</script>",
        "</script><script>",
        "{",
        "}",
        "{ {#include /etc/hostname} }",
        "#include",
        "[x](javascript:alert(1))",
        "javascript:",
        "![](http://other.host/t.png)",
        "<img src=x onerror=alert(1)>",
        "<http://other.host/x>",
        "<!--",
        "\"",
        "'",
        "`",
        "|",
        "*",
        "_",
        "\\",
        "&lt;",
        "cpu ",
        "x86_64",
    ]);
    prop::collection::vec(pieces, 0..8).prop_map(|v| v.concat())
}

/// What the schema must refuse (a directive, control and format characters) among the
/// printable pieces, and arbitrary strings.
fn hostile_text() -> impl Strategy<Value = String> {
    let refused = prop::sample::select(vec![
        "{{#include /etc/hostname}}",
        "{{",
        "\u{202E}",
        "\u{2028}",
        "\u{200B}",
        "\n\n",
        "\u{1b}[2J",
    ]);
    prop_oneof![
        6 => printable_text(),
        1 => (printable_text(), refused, printable_text()).prop_map(|(a, b, c)| a + b + &c),
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
    RENDERED.fetch_add(1, Ordering::Relaxed);
    for text in [
        &r.provenance.machine.cpu,
        &r.provenance.machine.os,
        &r.isolation,
    ] {
        assert!(!harness::safe::terminal(text).chars().any(hidden));
    }
}

/// One drawn record: hostile text in the machine, the isolation, a note, a detail and
/// perhaps a failure's text.
fn hostile_record() -> impl Strategy<Value = Record> {
    (
        hostile_text(),
        hostile_text(),
        hostile_text(),
        hostile_text(),
        hostile_text(),
        prop::option::of(hostile_text()),
    )
        .prop_map(|(cpu, os, isolation, note, detail, failure)| {
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
            r
        })
}

/// Run by hand rather than through `proptest!`, so that the test can also check it
/// was not vacuous: a good share of the drawn records pass the schema and are rendered.
#[test]
fn hostile_text_in_any_field_is_refused_or_rendered_as_text() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 96,
        ..ProptestConfig::default()
    });
    let before = RENDERED.load(Ordering::Relaxed);
    runner
        .run(&hostile_record(), |r| {
            match harness::validate::record(&r) {
                // A refusal's reason reaches a terminal: nothing in it may act there.
                Err(why) => prop_assert!(!harness::safe::terminal(&why).chars().any(hidden)),
                Ok(()) => check_rendered(&r),
            }
            Ok(())
        })
        .unwrap();
    let rendered = RENDERED.load(Ordering::Relaxed) - before;
    assert!(
        rendered >= 10,
        "only {rendered} of 96 records reached the renderers"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

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
