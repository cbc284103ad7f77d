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
    let html = crate::markdown::render(&md).to_ascii_lowercase();
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

/// Issue 35, "one rulebook, two readers": every fixture of
/// [`book_tests::HOSTILE_COMPARE_FILES`] is refused by the command line's door
/// (`Bundle::read`, what `all-results compare` reads files through) and by the Compare
/// page's script (run in Node, where there is one); the good ones are accepted by
/// both, and a figure in other units is shown by both, not compared (item 15).
#[test]
fn the_page_and_the_command_line_refuse_and_accept_the_same_files() {
    let dir = book_tests::book_root().join("book-tests/tests/fixtures/hostile");
    let node = ["node", "nodejs"].into_iter().find(|n| {
        std::process::Command::new(n)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    // The budgets the page's data carries, as `all-results table compare-data` writes them.
    let scratch = tempfile::tempdir().unwrap();
    let budgets = scratch.path().join("max-rounds.json");
    std::fs::write(&budgets, all_results::max_rounds_table().to_string()).unwrap();
    let page = |file: &str| -> Option<String> {
        let out = std::process::Command::new(node?)
            .arg(dir.join("compare-page.js"))
            .arg(book_tests::book_root().join("assets/js/compare.js"))
            .arg(dir.join("good.json"))
            .arg(dir.join(file))
            .arg(&budgets)
            .output()
            .unwrap();
        assert!(out.status.success(), "{file}: {out:?}");
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    for (file, why) in book_tests::HOSTILE_COMPARE_FILES
        .into_iter()
        .chain([book_tests::DEEP_COMPARE_FILE])
    {
        let cli = Bundle::read(&dir.join(file));
        assert!(cli.is_err(), "the command line accepts {file}");
        if let Some(text) = page(file) {
            assert!(
                text.starts_with("Cannot compare") && text.contains(why),
                "the page on {file}: {text}"
            );
        }
    }
    let good = Bundle::read(&dir.join("good.json")).unwrap();
    for file in [
        "good.json",
        "good-with-record.json",
        "other-units.json",
        "moved.json",
        "moved-drifted.json",
        "lying-shown.json",
    ] {
        let theirs = Bundle::read(&dir.join(file))
            .unwrap_or_else(|e| panic!("the command line refuses {file}: {e:#}"));
        let md = all_results::compare::markdown(&good, &theirs, "good.json", file);
        let shown = page(file);
        if let Some(text) = &shown {
            assert!(
                !text.starts_with("Cannot compare"),
                "the page on {file}: {text}"
            );
        }
        // Both readers call the 6-round move and not the drifted one (worth 2 rounds).
        let beyond = "beyond both intervals";
        if file == "moved-drifted.json" {
            assert!(!md.contains(beyond), "{md}");
            assert!(
                shown.as_ref().is_none_or(|t| !t.contains(beyond)),
                "{shown:?}"
            );
        }
        if file == "other-units.json" {
            assert!(md.contains("not comparable: other units"), "{md}");
            if let Some(text) = shown {
                assert!(text.contains("not comparable: other units"), "{text}");
            }
        }
    }
}

/// No profile runs more rounds than the door lets a record hold.
#[test]
fn every_budget_fits_the_door_s_round_cap() {
    for ch in all_results::CHAPTERS {
        for e in ch.experiments {
            for p in [harness::Profile::Quick, harness::Profile::Full] {
                let b = e.budget(p);
                assert!(
                    b.max_rounds as usize <= harness::validate::MAX_ROUNDS,
                    "{}/{}: {} rounds",
                    ch.name,
                    e.name(),
                    b.max_rounds
                );
            }
        }
    }
}

/// How a round's numbers are mutated for the numbers fuzz.
#[derive(Clone, Copy, Debug)]
enum Mutation {
    /// Every whole number set to this.
    Whole(u64),
    /// Every list emptied.
    EmptyLists,
    /// One round left.
    OneRound,
}

fn mutate(v: &mut serde_json::Value, m: Mutation) {
    match v {
        serde_json::Value::Number(n) if n.is_u64() || n.is_i64() => {
            if let Mutation::Whole(x) = m {
                *v = serde_json::json!(x);
            }
        }
        serde_json::Value::Array(items) => {
            if let Mutation::EmptyLists = m {
                items.clear();
            }
            items.iter_mut().for_each(|x| mutate(x, m));
        }
        serde_json::Value::Object(map) => map.values_mut().for_each(|x| mutate(x, m)),
        _ => {}
    }
}

/// The child side of the numbers fuzz: with `COW_FUZZ_NUMBERS` naming a folder of
/// records, every record the door lets in has every view of its experiment rendered.
/// Without it (an ordinary test run) it does nothing.
#[test]
fn numbers_child() {
    let Some(dir) = std::env::var_os("COW_FUZZ_NUMBERS") else {
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for path in files {
        let Ok(r) = harness::cache::read_checked(&path) else {
            continue;
        };
        let ch = all_results::chapter(&r.chapter).expect("a chapter of the book");
        let s = Shown {
            record: r.clone(),
            newer_failures: Vec::new(),
        };
        for v in ch.views.iter().filter(|v| v.experiment() == r.experiment) {
            let md = harness::render::render_view(*v, &s);
            assert!(!md.is_empty(), "{}: {}", path.display(), v.name());
        }
    }
}

/// Issue 35, "the fuzz reaches numbers": every chapter's golden records with their
/// rounds' whole numbers set to 0, to 2³²−1, to u64::MAX and to 10¹⁸ (the door's
/// largest number), their lists emptied and their rounds cut to one, each rendered by
/// every view of its experiment in a child process under a memory limit (`ulimit -v`, 3 GiB of address space: a test binary
/// maps a few hundred MB before it allocates) and a time limit (60 s, far above the
/// second or so it takes): every view renders or the record is refused, no panic, no
/// exhausted memory, no hang. The bounds are generous; this is no speed test.
#[test]
fn numbers_in_round_data_are_refused_or_rendered_within_bounds() {
    let test_name = module_path!()
        .split_once("::")
        .map_or("numbers_child".to_string(), |(_, m)| {
            format!("{m}::numbers_child")
        });
    let mutations = [
        Mutation::Whole(0),
        Mutation::Whole(4_294_967_295),
        Mutation::Whole(u64::MAX),
        Mutation::Whole(1_000_000_000_000_000_000),
        Mutation::EmptyLists,
        Mutation::OneRound,
    ];
    for ch in all_results::CHAPTERS {
        let records = harness::fixture::golden_records(ch).unwrap();
        for r in records {
            let dir = tempfile::tempdir().unwrap();
            for (i, m) in mutations.iter().enumerate() {
                let mut r = r.clone();
                r.key = ch.key.to_string();
                if let Mutation::OneRound = m {
                    r.rounds.truncate(1);
                }
                for round in &mut r.rounds {
                    mutate(&mut round.data, *m);
                }
                std::fs::write(
                    dir.path().join(format!("{i}.json")),
                    serde_json::to_vec(&r).unwrap(),
                )
                .unwrap();
            }
            let mut child = std::process::Command::new("sh")
                .arg("-c")
                .arg("ulimit -v 3145728 && exec \"$0\" \"$@\"")
                .arg(std::env::current_exe().unwrap())
                .args([&test_name, "--exact", "--nocapture", "--test-threads=1"])
                .env("COW_FUZZ_NUMBERS", dir.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::fs::File::create(dir.path().join("stderr.txt")).unwrap())
                .spawn()
                .unwrap();
            let start = std::time::Instant::now();
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if start.elapsed() > std::time::Duration::from_secs(60) {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "{}/{}: the views took more than 60 s",
                        ch.name, r.experiment
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            };
            let err = std::fs::read_to_string(dir.path().join("stderr.txt")).unwrap_or_default();
            assert!(
                status.success(),
                "{}/{}: a view panicked or ran out of memory ({status}): {}",
                ch.name,
                r.experiment,
                err.lines()
                    .filter(|l| l.contains("panicked") || l.contains("memory") || l.contains("at "))
                    .take(12)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}
