//! Results files from someone else, as an attacker or a careless user would write them
//! (issue 19): `all-results compare` and `all-results import` refuse what breaks the
//! schema with the file and the first reason, print nothing a terminal or Markdown
//! would act on, and never write outside the results folder. The hostile files are
//! kept in `book-tests/tests/fixtures/hostile/`.

use crate::common;
use common::{all_results, fixture, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn compare(a: &Path, b: &Path) -> Output {
    let dir = tempfile::tempdir().unwrap();
    all_results(
        &["compare".as_ref(), a.as_os_str(), b.as_os_str()],
        dir.path(),
    )
}

#[test]
fn a_good_file_compares_with_itself() {
    let good = fixture("good.json");
    let out = compare(&good, &good);
    assert!(out.status.success(), "{}", stderr(&out));
    let md = stdout(&out);
    assert_eq!(md.matches("1.00×").count(), 2, "{md}");
}

/// 1e308 printed as `18,446,744,073,709,551,615 s`; lo > hi was accepted.
#[test]
fn absurd_numbers_and_upside_down_intervals_are_refused() {
    let good = fixture("good.json");
    for (file, why) in [
        ("absurd-value.json", "beyond any measured value"),
        ("lo-above-hi.json", "does not hold its median"),
        ("string-median.json", "is not a results file of this book"),
        ("unknown-unit.json", "furlongs"),
    ] {
        let out = compare(&good, &fixture(file));
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains(file), "{file}: {err}");
        assert!(
            err.contains(why) || (why.contains("results file") && err.contains("invalid type")),
            "{file}: {err}"
        );
        assert!(stdout(&out).is_empty(), "{file}: nothing is shown");
    }
}

/// A machine name and a date with escape sequences (screen clear, title change) went
/// to the terminal raw; a date made a Markdown link; a backtick broke a code span.
#[test]
fn text_from_a_file_reaches_the_terminal_and_markdown_as_text() {
    let good = fixture("good.json");
    // Control characters: refused at the door, and nothing raw reaches the terminal.
    let out = compare(&good, &fixture("control-characters.json"));
    assert_eq!(out.status.code(), Some(2));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{all:?}");
    // A name with a backtick and markup: the figure name is not a name; refused.
    let out = compare(&good, &fixture("backtick-name.json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a name"), "{}", stderr(&out));
    assert!(!stderr(&out).contains('\u{1b}'));
    // A date that is Markdown: refused too (a date is digits, letters and `:.+-`).
    let out = compare(&good, &fixture("markdown-date.json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a date"), "{}", stderr(&out));
}

/// Issue 28: a results file whose machine line is `{{#include /proc/self/environ}}`
/// (which mdbook expands wherever it lands) or holds a right-to-left override was
/// compared and shown; both are refused at the door now, with the reason.
#[test]
fn directives_and_format_characters_in_a_file_are_refused() {
    let good = fixture("good.json");
    for (file, why) in [
        ("include-machine.json", "mdbook directive"),
        ("format-machine.json", "format character U+202E"),
    ] {
        let out = compare(&good, &fixture(file));
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains(file) && err.contains(why), "{file}: {err}");
        assert!(stdout(&out).is_empty(), "{file}: nothing is shown");
        assert!(!err.contains("{{") && !err.contains('\u{202E}'), "{err}");
    }
}

/// The Markdown `compare` prints escapes what comes from the files even where the
/// schema lets it through (a file name, a machine line with markup characters).
#[test]
fn the_printed_markdown_cannot_make_links_or_markup() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("good.json")).unwrap()).unwrap();
    v["machine"] =
        "[x](javascript:alert(1)) ![](http://other.host/t.png) <script>alert(2)</script> `".into();
    let b = dir.path().join("[y](javascript:alert(3)).json");
    std::fs::write(&b, v.to_string()).unwrap();
    let out = compare(&fixture("good.json"), &b);
    assert!(out.status.success(), "{}", stderr(&out));
    let md = stdout(&out);
    for bad in ["](", "<script", "![", "`</", "[x]", "[y]"] {
        assert!(!md.contains(bad), "{bad:?} in {md}");
    }
    assert!(md.contains("&lt;script&gt;"), "{md}");
}

/// A 61 MB file took 77 s (matching by name was quadratic). A file of about 10 MB
/// with tens of thousands of figures compares in linear time: checked with a bound
/// no loaded machine comes near (the old code took minutes on such a file).
#[test]
fn a_large_file_compares_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("good.json")).unwrap()).unwrap();
    let template = v["figures"][0].clone();
    let figures: Vec<serde_json::Value> = (0..40_000)
        .map(|i| {
            let mut f = template.clone();
            f["name"] = format!("figure-{i}").into();
            f["machine"] = "m".repeat(160).into();
            f
        })
        .collect();
    v["figures"] = figures.into();
    let big = dir.path().join("big.json");
    std::fs::write(&big, v.to_string()).unwrap();
    let size = std::fs::metadata(&big).unwrap().len();
    assert!(size > 10_000_000, "{size}");
    let start = std::time::Instant::now();
    let out = compare(&big, &big);
    let took = start.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).matches("1.00×").count(), 40_000);
    eprintln!("compare of a {size}-byte file took {took:?}");
    // A debug build on a loaded machine: the bound only catches quadratic matching.
    assert!(took.as_secs() < 60, "{took:?}");
    // The matching itself is linear: twice the figures, about twice the rows' work.
    let a = all_results::Bundle::read(&big).unwrap();
    let t0 = std::time::Instant::now();
    assert_eq!(all_results::compare::rows(&a, &a).len(), 40_000);
    assert!(t0.elapsed().as_secs() < 5, "{:?}", t0.elapsed());
}

/// The reproduction of issue 19: `"experiment": "../../x/y"` or
/// `"build": "release/../../../z/w"` wrote outside the results folder on import and
/// reported "imported 2 good results". The record fixtures carry the current code's
/// key, as an attacker's would.
#[test]
fn import_refuses_paths_and_writes_only_inside_the_results_folder() {
    let root = tempfile::tempdir().unwrap();
    let from = root.path().join("from");
    let to = root.path().join("deep").join("deeper").join("results");
    std::fs::create_dir_all(from.join("brigades")).unwrap();
    std::fs::create_dir_all(&to).unwrap();
    let key = all_results::chapter("brigades").unwrap().key;
    let records = fixture("records");
    for e in std::fs::read_dir(&records).unwrap().flatten() {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap();
        v["key"] = key.into();
        std::fs::write(from.join("brigades").join(e.file_name()), v.to_string()).unwrap();
    }
    let out = all_results(&["import".as_ref(), from.as_os_str()], &to);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    for refused in [
        "traversal-experiment.json",
        "traversal-build.json",
        "script-experiment.json",
        "control-characters.json",
        // Issue 28: an mdbook directive and invisible format characters (U+202E,
        // U+2028) in a record's texts passed the door.
        "include-directive.json",
        "format-characters.json",
    ] {
        assert!(err.contains(refused), "{refused} not named: {err}");
    }
    assert!(err.contains("mdbook directive"), "{err}");
    assert!(err.contains("format character U+202E"), "{err}");
    assert!(!err.contains('\u{202E}') && !err.contains("{{"), "{err}");
    assert!(
        stdout(&out).starts_with("imported 1 good results"),
        "{}",
        stdout(&out)
    );
    // Every file under the root is a source file or inside the results folder.
    fn walk(d: &Path, acc: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.path().is_dir() {
                walk(&e.path(), acc);
            } else {
                acc.push(e.path());
            }
        }
    }
    let mut files = Vec::new();
    walk(root.path(), &mut files);
    for f in &files {
        assert!(
            f.starts_with(&from) || f.starts_with(&to),
            "written outside: {}",
            f.display()
        );
    }
    assert!(
        to.join("brigades")
            .join("variants.quick.release.json")
            .is_file(),
        "{files:?}"
    );
}

/// Issue 28, item 11: a refused `measure` changes nothing. Bad parameters used to be
/// found only after the previous run had been overwritten, so `changes` then compared
/// with nothing.
#[test]
fn a_refused_measure_leaves_the_previous_run_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let previous = dir.path().join("previous-run.json");
    std::fs::write(&previous, "{\"kept\": true}").unwrap();
    let out = all_results(
        &[
            "measure".as_ref(),
            "--profile".as_ref(),
            "quick".as_ref(),
            "--set".as_ref(),
            "brigades.tasks=1,0,0".as_ref(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&previous).unwrap(),
        "{\"kept\": true}",
        "the refused command rewrote the previous run"
    );
}

/// Issue 28, item 18: an unreadable threshold is refused, not silently taken as 5 %.
#[test]
fn an_unreadable_threshold_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["abc", "-5", "nan", "150"] {
        let out = Command::new(env!("CARGO_BIN_EXE_all-results"))
            .args(["table", "budgets"])
            .env("COW_RESULTS_DIR", dir.path())
            .env("COW_THRESHOLD", bad)
            .env_remove("COW_SET")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("COW_THRESHOLD"), "{}", stderr(&out));
    }
}

/// Issue 28, item 8: a value no experiment can take is refused with the reason, not
/// left to remove that chapter's figures from every table without a word.
#[test]
fn a_bad_value_in_cow_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [
        &["table", "overview"][..],
        &["headlines"][..],
        &["json"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_all-results"))
            .args(cmd)
            .env("COW_RESULTS_DIR", dir.path())
            .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
            .env("COW_SET", "brigades.tasks=abc")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("tasks"), "{}", stderr(&out));
    }
}

/// Issue 28, item 17: a `COW_SET` or `COW_PROFILE` that is not UTF-8 is refused with
/// its name, not ignored (it used to show the default results without a word).
#[cfg(unix)]
#[test]
fn settings_that_are_not_text_are_refused() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    for var in ["COW_SET", "COW_PROFILE"] {
        let out = Command::new(env!("CARGO_BIN_EXE_all-results"))
            .args(["table", "budgets"])
            .env("COW_RESULTS_DIR", dir.path())
            .env("COW_LOCK_FILE", dir.path().join("measure.lock"))
            .env_remove("COW_SET")
            .env_remove("COW_PROFILE")
            .env(var, std::ffi::OsStr::from_bytes(b"brigades.tasks=2\xff"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{var}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(var) && stderr(&out).contains("not UTF-8"),
            "{}",
            stderr(&out)
        );
    }
}

/// Issue 35, item 8: an import that imports nothing fails and names why for each file:
/// here every record was refused at the door or carries another code key (the fixtures'
/// key is not this build's). It used to exit 0 with "imported 0 good results".
#[test]
fn an_import_of_nothing_fails_and_names_each_file() {
    let root = tempfile::tempdir().unwrap();
    let from = root.path().join("from");
    let to = root.path().join("results");
    std::fs::create_dir_all(from.join("brigades")).unwrap();
    std::fs::create_dir_all(&to).unwrap();
    let records = fixture("records");
    let mut names = Vec::new();
    for e in std::fs::read_dir(&records).unwrap().flatten() {
        std::fs::copy(e.path(), from.join("brigades").join(e.file_name())).unwrap();
        names.push(e.file_name().to_string_lossy().to_string());
    }
    let out = all_results(&["import".as_ref(), from.as_os_str()], &to);
    assert!(!out.status.success(), "{}", stdout(&out));
    let err = stderr(&out);
    for n in &names {
        assert!(err.contains(n.as_str()), "{n} not named: {err}");
    }
    assert!(err.contains("other code than this build's"), "{err}");
    assert!(err.contains("nothing imported"), "{err}");
}
