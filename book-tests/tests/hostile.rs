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
    // Beyond the schema too (issue 28: the door lets no `{{` in now): an mdbook
    // directive and a right-to-left override, in the machine and the isolation.
    unchecked.provenance.machine.os = "{{#include ../book.toml}} \u{202E}x".into();
    unchecked.isolation = "{{ #include /proc/self/environ }} </script><script>alert(10)".into();
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
        // No mdbook directive can be made of what is inlined (the `links`
        // preprocessor runs after cmdrun), nor an override reverse a line.
        assert!(
            !md.contains("{{") && !md.contains('\u{202E}'),
            "{what}: {md}"
        );
        let html = crate::markdown::render(&md);
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
    assert_no_markup_from_data(&crate::markdown::render(&md), "named");
    let e = harness::cache::read_checked(&fixtures().join("records/script-experiment.json"))
        .unwrap_err();
    assert!(e.contains("is not a name"), "{e}");
    let e = harness::cache::read_checked(&fixtures().join("records/include-directive.json"))
        .unwrap_err();
    assert!(e.contains("mdbook directive"), "{e}");
    let e = harness::cache::read_checked(&fixtures().join("records/format-characters.json"))
        .unwrap_err();
    assert!(e.contains("format character"), "{e}");
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
    // The budgets the page's data carries, as `all-results table compare-data` writes them.
    let scratch = tempfile::tempdir().unwrap();
    let budgets = scratch.path().join("max-rounds.json");
    std::fs::write(&budgets, all_results::max_rounds_table().to_string()).unwrap();
    let run = |file: &str| {
        let out = std::process::Command::new(node)
            .arg(fixtures().join("compare-page.js"))
            .arg(book_root().join("assets/js/compare.js"))
            .arg(fixtures().join("good.json"))
            .arg(fixtures().join(file))
            .arg(&budgets)
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
    // Ten rounds that drifted (ρ = 0.8) are worth two independent ones: no verdict.
    let drifted = run("moved-drifted.json");
    assert!(!drifted.contains("beyond"), "{drifted}");
    for (file, why) in book_tests::HOSTILE_COMPARE_FILES
        .into_iter()
        .chain([book_tests::DEEP_COMPARE_FILE])
    {
        let text = run(file);
        assert!(
            text.starts_with("Cannot compare") && text.contains(why) && !text.contains("NaN"),
            "{file}: {text}"
        );
    }
    // Issue 28: a file's own text ("1.00 ns" beside a median of 10^15 ns) was shown; the
    // page writes every figure from its numbers.
    let lying = run("lying-shown.json");
    assert!(
        lying.contains("1,000,000 s") && !lying.contains("1.00 ns"),
        "{lying}"
    );
}

/// The strings every record of the hostile results folder gets: printable, so they
/// pass the schema and reach every page that shows a record.
const PAYLOADS: &[&str] = &[
    "cow-hostile [x](javascript:alert(1))",
    "cow-hostile ![](http://other.host/t.png)",
    "cow-hostile <script>alert(2)</script>",
    "cow-hostile <img src=x onerror=alert(3)>",
    "cow-hostile </script><script>alert(4)</script><!--",
    "cow-hostile { {#include ../book.toml} }",
    "cow-hostile <http://other.host/x>",
];

/// A file whose content must appear in no page: records name it in mdbook directives.
fn secret_file() -> (PathBuf, String) {
    let path = target_dir().join("book-tests").join("hostile-secret.txt");
    let secret = format!("cow-secret-{}-never-on-a-page", std::process::id());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &secret).unwrap();
    (path, secret)
}

/// Every text field of a record (the machine's, the isolation, the notes, a failure's
/// text) gets `text` (appended, so a field's own words stay); the short fields (a unit,
/// at most 64 characters; a detail, at most 64 and 256) get `short`.
fn poison_every_text(record: &mut serde_json::Value, text: &str, short: &str) {
    fn append(v: &mut serde_json::Value, text: &str) {
        let old = v.as_str().unwrap_or("").to_string();
        *v = format!("{old} {text}").into();
    }
    let add = |v: &mut serde_json::Value| append(v, text);
    for field in ["cpu", "os", "kernel", "arch", "rustc", "build"] {
        add(&mut record["provenance"]["machine"][field]);
    }
    add(&mut record["isolation"]);
    if let Some(notes) = record["notes"].as_array_mut() {
        for n in notes.iter_mut() {
            add(&mut n["text"]);
        }
        notes.push(serde_json::json!({"kind": "Info", "text": text}));
    }
    // A detail's value holds at most 256 characters at the door (issue 35): it gets
    // the short text, and `poison` gives each payload a detail of its own.
    if let Some(details) = record["details"].as_array_mut() {
        for d in details.iter_mut() {
            append(&mut d[1], short);
        }
        details.push(serde_json::json!([short, short]));
    }
    if let Some(params) = record["params"].as_array_mut() {
        for p in params.iter_mut() {
            append(&mut p["unit"], short);
        }
    }
    if let Some(status) = record["status"].as_object_mut() {
        for v in status.values_mut() {
            if let Some(o) = v.as_object_mut() {
                for x in o.values_mut() {
                    if x.is_string() {
                        add(x);
                    }
                }
            }
        }
    }
}

fn poison(record: &mut serde_json::Value) {
    let all = PAYLOADS.join(" ");
    if let Some(notes) = record["notes"].as_array_mut() {
        for p in PAYLOADS {
            notes.push(serde_json::json!({"kind": "Info", "text": p}));
        }
    }
    if let Some(details) = record["details"].as_array_mut() {
        for p in PAYLOADS {
            details.push(serde_json::json!([p, p]));
        }
    }
    poison_every_text(record, &all, "</script><script>");
}

/// Copies the good results into `hostile`, every record poisoned; the records of
/// the chapter `directive` also carry `{{#include SECRET}}` in every text field.
/// Returns the poisoned files and those of them that carry the directive.
fn copy_and_poison(
    good: &Path,
    hostile: &Path,
    directive: Option<(&str, &Path)>,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let _ = std::fs::remove_dir_all(hostile);
    let mut poisoned = Vec::new();
    let mut with_directive = Vec::new();
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
            if let Some((chapter, secret)) = directive
                && ch.file_name() == chapter
            {
                let include = format!(
                    "{{{{#include {}}}}} </script><script>alert(5)</script> {{{{ #include ../book.toml }}}}",
                    secret.display()
                );
                poison_every_text(&mut v, &include, &include);
                with_directive.push(to.join(f.file_name()));
            }
            std::fs::write(to.join(f.file_name()), serde_json::to_vec(&v).unwrap()).unwrap();
            poisoned.push(to.join(f.file_name()));
        }
    }
    (poisoned, with_directive)
}

/// The chapter whose stored results took the least time to measure (the one whose
/// records are refused and measured again).
fn cheapest_chapter(good: &Path) -> String {
    let mut best: Option<(f64, String)> = None;
    for ch in std::fs::read_dir(good).into_iter().flatten().flatten() {
        let mut total = 0.0;
        let mut any = false;
        for f in std::fs::read_dir(ch.path()).into_iter().flatten().flatten() {
            if let Ok(r) = harness::cache::read_checked(&f.path()) {
                total += r.wall_s;
                any = true;
            }
        }
        if any && best.as_ref().is_none_or(|(t, _)| total < *t) {
            best = Some((total, ch.file_name().to_string_lossy().into_owned()));
        }
    }
    best.expect("a chapter with results").1
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
/// text in every text field (its machine, isolation, notes, details, units), and
/// whose records of one chapter also carry `{{#include FILE}}` and
/// `</script><script>` in every text field (issue 28: a machine text
/// `{{#include /proc/self/environ}}` passed the door and mdbook expanded it inside
/// the Compare machines page's data, and an included record ran its script there).
/// No page holds the file's content, an mdbook include's output or a live script.
/// (After tests/book.rs has measured, the build reuses its results and measures only
/// the refused chapter again.)
#[test]
fn a_book_built_from_a_hostile_results_folder_shows_the_text_as_text() {
    build_chapter_binaries().unwrap();
    let good = prepare_test_results().unwrap();
    let hostile = target_dir().join("book-tests").join("hostile-results");
    let (secret_path, secret) = secret_file();
    let build = |out: &Path, results: &Path| {
        let _ = std::fs::remove_dir_all(out);
        if let Err(e) = book_tests::build_book(
            out,
            &[
                ("COW_PROFILE", Path::new("quick")),
                ("COW_RESULTS_DIR", results),
            ],
        ) {
            panic!("building the book from {} failed: {e:#}", results.display());
        }
    };
    if copy_and_poison(&good, &hostile, None).0.is_empty() {
        // Run alone, before tests/book.rs measured anything: measure first (into the
        // tests' shared results folder), then poison what was measured.
        build(&target_dir().join("book-tests").join("measure-html"), &good);
    }
    let chapter = cheapest_chapter(&good);
    let (poisoned, with_directive) =
        copy_and_poison(&good, &hostile, Some((&chapter, &secret_path)));
    assert!(
        !poisoned.is_empty(),
        "no results to poison in {}",
        good.display()
    );
    assert!(!with_directive.is_empty(), "{chapter}: nothing to poison");
    let out = target_dir().join("book-tests").join("hostile-html");
    build(&out, &hostile);
    // Every record with only printable hostile text passed the schema: none was
    // measured again. Every record with a directive was refused at the door (and its
    // experiment measured again, into the same file).
    for f in poisoned.iter().filter(|f| !with_directive.contains(f)) {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(
            text.contains("cow-hostile"),
            "{}: a record with printable hostile text was refused or replaced",
            f.display()
        );
    }
    let mut pages = Vec::new();
    html_files(&out, &mut pages);
    let mut seen = 0;
    let mut compare_page = false;
    for p in &pages {
        let html = std::fs::read_to_string(p).unwrap();
        let name = p.display().to_string();
        // Nowhere, not even outside <main> (the print page, the search index): the
        // included file, an expanded include of book.toml.
        assert!(
            !html.contains(&secret),
            "{name}: the planted file's content"
        );
        assert!(
            !html.contains("[output.html]"),
            "{name}: book.toml was included"
        );
        let Some(start) = html.find("<main>") else {
            continue;
        };
        let main = &html[start
            ..html[start..]
                .find("</main>")
                .map_or(html.len(), |e| start + e)];
        seen += main.matches("cow-hostile").count();
        assert_no_markup_from_data(main, &name);
        // The page's data block holds no directive nor anything that could close it.
        const DATA: &str = "<script type=\"application/json\" id=\"cow-built-figures\">";
        if let Some(a) = main.find(DATA) {
            compare_page = true;
            let json = &main[a + DATA.len()..a + main[a..].find("</script>").unwrap()];
            assert!(!json.contains("{{"), "{name}: `{{{{` in the page's data");
            assert!(
                json.contains("cow-hostile"),
                "{name}: the data is not the hostile run's"
            );
        }
        for bad in [
            "href=\"javascript:",
            "src=\"http://other.host",
            "<img src=x",
            "<script>alert(",
            // The records with a directive were refused: nothing of theirs is shown.
            "alert(5)",
        ] {
            assert!(!html.contains(bad), "{name}: {bad}");
        }
    }
    assert!(compare_page, "no page held the Compare machines data");
    assert!(
        seen > 0,
        "no page showed the hostile text: the test is vacuous"
    );
}
