//! A results file is data, never markup (issue 19). Records written by an attacker —
//! kept as fixtures in `tests/fixtures/hostile/` — are rendered the way the book
//! renders them, through mdbook's own Markdown; and the whole book is built from a
//! results folder whose every record carries hostile text. No script, no image, no
//! `javascript:` link, no request to another host and no mdbook include may come out
//! of it: the text is shown as text.

use book_tests::{book_root, build_chapter_binaries, prepare_test_results, target_dir};
use harness::ViewKind;
use harness::cache::Shown;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    book_root().join("book-tests/tests/fixtures/hostile")
}

/// What markup from data would look like in HTML, if any came through.
fn assert_no_markup_from_data(html: &str, context: &str) {
    // The Compare machines page's own data element (not from a record's text): its
    // JSON may hold no `<` at all, so nothing in it can close it or open a comment.
    const DATA: &str = "<script type=\"application/json\" id=\"cow-built-figures\">";
    let mut html = html.to_string();
    if let Some(a) = html.find(DATA) {
        let end = html[a..]
            .find("</script>")
            .expect("the data element is closed")
            + a;
        let json = &html[a + DATA.len()..end];
        assert!(
            !json.contains('<'),
            "{context}: `<` in the page's data: {json}"
        );
        html.replace_range(a..end + "</script>".len(), "");
    }
    let lower = html.to_ascii_lowercase();
    for bad in [
        "<script",
        "<img",
        "<b>bold",
        "href=\"javascript:",
        "src=\"javascript:",
        "href=\"http://other.host",
        "src=\"http://other.host",
    ] {
        let bad_lower = bad.to_ascii_lowercase();
        assert!(!lower.contains(&bad_lower), "{context}: {bad} in\n{html}");
    }
    assert!(
        !html.contains("[output.html]"),
        "{context}: an mdbook include was expanded"
    );
}

fn hostile_record() -> harness::Record {
    harness::cache::read_checked(&fixtures().join("records/hostile-text.json"))
        .expect("the printable hostile record passes the schema")
}

/// Notes, failure texts, the machine and the isolation reach the chapter pages and the
/// appendix as text: `[x](javascript:…)` was a live link, `![](http://…)` an image
/// from another host, and a record's `experiment` went raw into the appendix's
/// heading and link.
#[test]
fn hostile_text_in_a_record_renders_as_text() {
    let mut r = hostile_record();
    let ch = all_results::chapter("brigades").unwrap();
    r.key = ch.key.to_string();
    let mut failed = r.clone();
    failed.status = harness::record::Status::Failed {
        error: "[f](javascript:alert(6)) <img src=x onerror=alert(7)>".into(),
    };
    // Beyond the schema (as if a record got past it): newlines and a blank line, which
    // would end the provenance's HTML block and let Markdown read what follows.
    let mut unchecked = r.clone();
    unchecked.provenance.machine.cpu =
        "cpu\n\n[y](javascript:alert(3)) ![](http://other.host/t.png)\n\n<script>alert(8)</script>"
            .into();
    unchecked.notes[0].text = "a\n\n[n](javascript:alert(9))".into();
    let shown = |r: &harness::Record| Shown {
        record: r.clone(),
        newer_failures: vec![failed.clone()],
    };
    let view = ch.view(ViewKind::Table, "variants").unwrap();
    for (what, rec) in [
        ("checked", &r),
        ("failed", &failed),
        ("unchecked", &unchecked),
    ] {
        let s = shown(rec);
        let mut md = harness::render::render_view(view, &s);
        md.push_str(&all_results::appendix::overview(std::slice::from_ref(&s)));
        md.push_str(&all_results::appendix::chapter_tables(
            ch,
            std::slice::from_ref(&s),
        ));
        md.push_str(&all_results::appendix::published_stamp(
            std::slice::from_ref(&s.record),
        ));
        let html = mdbook::utils::render_markdown(&md, false);
        assert_no_markup_from_data(&html, what);
        // Not vacuous: the hostile text is on the page, as text.
        assert!(html.contains("javascript:alert("), "{what}: {html}");
        assert!(
            html.contains("&lt;script&gt;") || what == "failed",
            "{what}: {html}"
        );
    }
    // A record whose experiment is markup is not the registry's: the appendix takes
    // its names from the registry, and the cache refuses such a record at the door.
    let mut named = r.clone();
    named.experiment = "sweep<img src=x onerror=alert(1)><script>alert(2)</script>".into();
    let s = Shown {
        record: named,
        newer_failures: vec![],
    };
    let md = format!(
        "{}{}",
        all_results::appendix::overview(std::slice::from_ref(&s)),
        all_results::appendix::chapter_tables(ch, std::slice::from_ref(&s))
    );
    assert_no_markup_from_data(&mdbook::utils::render_markdown(&md, false), "named");
    let e = harness::cache::read_checked(&fixtures().join("records/script-experiment.json"))
        .unwrap_err();
    assert!(e.contains("is not a name"), "{e}");
}

/// The Compare machines page's script, run in Node with the few DOM objects it uses
/// (skipped where Node is not installed; `make test-browser` runs it in Chromium): an
/// unknown unit was compared and shown without a unit, a median given as a string
/// showed "NaN×".
#[test]
fn the_compare_page_script_refuses_hostile_files() {
    let node = ["node", "nodejs"].into_iter().find(|n| {
        std::process::Command::new(n)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(node) = node else {
        eprintln!("skipped: no node on this machine (make test-browser checks the page)");
        return;
    };
    let run = |file: &str| {
        let out = std::process::Command::new(node)
            .arg(fixtures().join("compare-page.js"))
            .arg(book_root().join("assets/js/compare.js"))
            .arg(fixtures().join("good.json"))
            .arg(fixtures().join(file))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let same = run("good.json");
    assert_eq!(same.matches("1.00×").count(), 2, "{same}");
    // The page calls a difference by the book's rule, with the threshold and the least
    // rounds from its data: 20 % apart on 6 rounds is clear, on 2 rounds it is not.
    let moved = run("moved.json");
    assert_eq!(
        moved
            .matches("beyond both intervals and the 5 % threshold")
            .count(),
        1,
        "{moved}"
    );
    let few = run("moved-two-rounds.json");
    assert!(!few.contains("beyond"), "{few}");
    for (file, why) in book_tests::HOSTILE_COMPARE_FILES {
        let text = run(file);
        assert!(
            text.starts_with("Cannot compare") && text.contains(why) && !text.contains("NaN"),
            "{file}: {text}"
        );
    }
}

/// The strings every record of the hostile results folder gets: printable, so they
/// pass the schema and reach every page that shows a record.
const PAYLOADS: &[&str] = &[
    "cow-hostile [x](javascript:alert(1))",
    "cow-hostile ![](http://other.host/t.png)",
    "cow-hostile <script>alert(2)</script>",
    "cow-hostile <img src=x onerror=alert(3)>",
    "cow-hostile {{#include ../book.toml}}",
    "cow-hostile <http://other.host/x>",
];

fn poison(record: &mut serde_json::Value) {
    let all = PAYLOADS.join(" ");
    if let Some(notes) = record["notes"].as_array_mut() {
        for p in PAYLOADS {
            notes.push(serde_json::json!({"kind": "Info", "text": p}));
        }
    }
    let isolation = record["isolation"].as_str().unwrap_or("").to_string();
    record["isolation"] = format!("{isolation} {all}").into();
    let cpu = record["provenance"]["machine"]["cpu"]
        .as_str()
        .unwrap_or("")
        .to_string();
    record["provenance"]["machine"]["cpu"] = format!("{cpu} {all}").into();
    if let Some(details) = record["details"].as_array_mut() {
        details.push(serde_json::json!([PAYLOADS[0], all]));
    }
}

/// Copies the good results into `hostile`, every record poisoned; returns how many.
fn copy_and_poison(good: &Path, hostile: &Path) -> usize {
    let _ = std::fs::remove_dir_all(hostile);
    let mut poisoned = 0;
    for ch in std::fs::read_dir(good).into_iter().flatten().flatten() {
        if !ch.path().is_dir() {
            continue;
        }
        let to = hostile.join(ch.file_name());
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(ch.path()).unwrap().flatten() {
            if f.path().extension().is_none_or(|x| x != "json") {
                continue;
            }
            let mut v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(f.path()).unwrap()).unwrap();
            poison(&mut v);
            std::fs::write(to.join(f.file_name()), serde_json::to_vec(&v).unwrap()).unwrap();
            poisoned += 1;
        }
    }
    poisoned
}

fn html_files(dir: &Path, acc: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            html_files(&p, acc);
        } else if p.extension().is_some_and(|x| x == "html") {
            acc.push(p);
        }
    }
}

/// The whole book, built from a results folder whose every record carries hostile
/// text in its notes, machine, isolation and details.
/// (After tests/book.rs has measured, the build reuses its results: a few seconds.)
#[test]
fn a_book_built_from_a_hostile_results_folder_shows_the_text_as_text() {
    build_chapter_binaries().unwrap();
    let good = prepare_test_results().unwrap();
    let hostile = target_dir().join("book-tests").join("hostile-results");
    let build = |out: &Path, results: &Path| {
        let _ = std::fs::remove_dir_all(out);
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_build-book"))
            .arg(out)
            .env("COW_PROFILE", "quick")
            .env("COW_RESULTS_DIR", results)
            .env_remove("COW_SET")
            .status()
            .unwrap();
        assert!(
            status.success(),
            "building the book from {} failed",
            results.display()
        );
    };
    let mut poisoned = copy_and_poison(&good, &hostile);
    if poisoned == 0 {
        // Run alone, before tests/book.rs measured anything: measure first (into the
        // tests' shared results folder), then poison what was measured.
        build(&target_dir().join("book-tests").join("measure-html"), &good);
        poisoned = copy_and_poison(&good, &hostile);
    }
    assert!(poisoned > 0, "no results to poison in {}", good.display());
    let out = target_dir().join("book-tests").join("hostile-html");
    build(&out, &hostile);
    // Every poisoned record passed the schema: none was measured again.
    let after = std::fs::read_dir(&hostile)
        .unwrap()
        .flatten()
        .flat_map(|c| std::fs::read_dir(c.path()).into_iter().flatten().flatten())
        .filter(|f| f.path().extension().is_some_and(|x| x == "json"))
        .filter(|f| std::fs::read_to_string(f.path()).is_ok_and(|t| t.contains("cow-hostile")))
        .count();
    assert_eq!(after, poisoned, "a poisoned record was refused or replaced");
    let mut pages = Vec::new();
    html_files(&out, &mut pages);
    let mut seen = 0;
    for p in &pages {
        let html = std::fs::read_to_string(p).unwrap();
        let Some(start) = html.find("<main>") else {
            continue;
        };
        let main = &html[start
            ..html[start..]
                .find("</main>")
                .map_or(html.len(), |e| start + e)];
        seen += main.matches("cow-hostile").count();
        let name = p.display().to_string();
        assert_no_markup_from_data(main, &name);
        // Nothing from data outside <main> either (the print page, the search index
        // are built from the same text).
        for bad in [
            "href=\"javascript:",
            "src=\"http://other.host",
            "<img src=x",
        ] {
            assert!(!html.contains(bad), "{name}: {bad}");
        }
    }
    assert!(
        seen > 0,
        "no page showed the hostile text: the test is vacuous"
    );
}
