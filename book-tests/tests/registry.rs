//! One registry, guarded: the chapter folders, `src/SUMMARY.md`, the introduction's
//! list, the appendix page and the registry (`all_results::CHAPTERS`, with the
//! appendix crate's dependencies) agree; and a chapter added the way CONTRIBUTING.md's
//! "Adding a chapter" says joins all of them, while leaving out any one of the edits it
//! names fails the check, naming the file.

use book_tests::book_root;
use book_tests::registry::{EDITED_FILES, places, problems};
use std::path::Path;

fn tables() -> &'static [&'static str] {
    &all_results::APPENDIX_TABLES
}

#[test]
fn every_place_agrees_with_the_registry() {
    let p = problems(&book_root(), tables());
    assert!(p.is_empty(), "{}", p.join("\n"));
}

#[test]
fn the_registry_as_read_is_the_compiled_one() {
    let read = places(&book_root(), tables()).registry;
    let compiled: Vec<String> = all_results::CHAPTERS
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    assert_eq!(read, compiled);
    for t in tables() {
        assert!(
            all_results::chapter(t).is_none(),
            "{t} is both a table and a chapter"
        );
    }
}

/// CONTRIBUTING.md's "Adding a chapter" names, in its first paragraph, exactly the
/// existing files the registry test reads, and says how many they are.
#[test]
fn contributing_names_the_files_a_new_chapter_edits() {
    let text = std::fs::read_to_string(book_root().join("CONTRIBUTING.md")).unwrap();
    let section = text
        .split("\n## Adding a chapter")
        .nth(1)
        .expect("CONTRIBUTING.md has a section \"## Adding a chapter\"");
    let intro = section
        .trim_start()
        .split("\n\n")
        .next()
        .expect("the section has a first paragraph");
    let intro = intro.split_whitespace().collect::<Vec<_>>().join(" ");
    let named: Vec<&str> = intro
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains('/') && !s.contains(' '))
        .collect();
    let mut named_sorted = named.clone();
    named_sorted.sort();
    let mut edited = EDITED_FILES.to_vec();
    edited.sort();
    assert_eq!(named_sorted, edited, "CONTRIBUTING.md names {named:?}");
    let count = ["one", "two", "three", "four", "five", "six", "seven"][EDITED_FILES.len() - 1];
    assert!(
        intro.contains(&format!("{count} existing files")),
        "the paragraph should say how many existing files a new chapter edits ({count}): {intro}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (p, q) = (e.path(), to.join(e.file_name()));
        if p.is_dir() {
            if e.file_name() != "target" {
                copy_dir(&p, &q);
            }
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

const SLUG: &str = "fixture-waits";

/// Inserts `new` after the last line of `path` for which `after` holds.
fn insert_after(path: &Path, after: impl Fn(&str) -> bool, new: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .rposition(|l| after(l))
        .unwrap_or_else(|| panic!("{}: no place to insert {new:?}", path.display()));
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out.insert(at + 1, new.to_string());
    std::fs::write(path, out.join("\n") + "\n").unwrap();
}

/// The new files of a chapter, as CONTRIBUTING.md lists them (a crate whose `chapter.rs`
/// declares the chapter, and its page).
fn new_files(root: &Path) {
    let dir = root.join("chapters-code").join(SLUG);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{SLUG}\"\nversion = \"0.1.0\"\nedition.workspace = true\n\
             build = \"../harness/key/build.rs\"\n\n[build-dependencies]\nsha2.workspace = true\n\n\
             [dependencies]\nharness.workspace = true\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub mod chapter;\npub mod experiments;\npub mod views;\n\npub use chapter::CHAPTER;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/chapter.rs"),
        "use crate::{experiments, views};\n\n\
         pub static CHAPTER: harness::Chapter = harness::chapter!(\n    \
         experiments: [experiments::WAITS],\n    views: [views::WAITS],\n    headlines: [],\n);\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() -> std::process::ExitCode {\n    harness::cli::main(&fixture_waits::CHAPTER)\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src").join(format!("{SLUG}.md")),
        "# Fixture waits\n\n<!-- cmdrun -0 sh ../chapters-code/harness/run.sh fixture-waits table waits -->\n",
    )
    .unwrap();
}

/// The edits to existing files, in the order of [`EDITED_FILES`].
fn edit(root: &Path, file: &str) {
    let path = root.join(file);
    match file {
        "src/SUMMARY.md" => insert_after(
            &path,
            |l| l.starts_with("- [") && !l.contains("what-to-use-when") && !l.contains("compare"),
            &format!("- [Fixture waits]({SLUG}.md)"),
        ),
        "src/introduction.md" => insert_after(
            &path,
            |l| {
                l.split_once(". **[")
                    .is_some_and(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()))
            },
            &format!("9. **[Fixture waits]({SLUG}.md)** — a chapter the registry test adds."),
        ),
        "chapters-code/all-results/src/lib.rs" => insert_after(
            &path,
            |l| l.trim().starts_with('&') && l.trim().ends_with("::CHAPTER,"),
            "    &fixture_waits::CHAPTER,",
        ),
        "chapters-code/all-results/Cargo.toml" => insert_after(
            &path,
            |l| l.contains("{ path = \"../") && !l.starts_with("harness"),
            &format!("{SLUG} = {{ path = \"../{SLUG}\" }}"),
        ),
        "src/all-results.md" => insert_after(
            &path,
            |l| {
                l.contains("all-results table ")
                    && !tables().iter().any(|t| l.contains(&format!("table {t} ")))
            },
            &format!(
                "\n## Fixture waits\n\n<!-- cmdrun -0 sh ../chapters-code/harness/run.sh all-results table {SLUG} -->"
            ),
        ),
        other => panic!("the test does not know how to edit {other}"),
    }
}

/// A copy of what the registry check reads, with the new chapter's files and every
/// edit but `skip`.
fn book_with_new_chapter(skip: Option<&str>) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let root = book_root();
    copy_dir(&root.join("src"), &t.path().join("src"));
    copy_dir(&root.join("chapters-code"), &t.path().join("chapters-code"));
    new_files(t.path());
    for f in EDITED_FILES {
        if Some(f) != skip {
            edit(t.path(), f);
        }
    }
    t
}

#[test]
fn a_chapter_added_the_documented_way_joins_every_place() {
    let t = book_with_new_chapter(None);
    let p = problems(t.path(), tables());
    assert!(p.is_empty(), "{}", p.join("\n"));
    let places = places(t.path(), tables());
    assert_eq!(places.registry.last().map(String::as_str), Some(SLUG));
    assert!(places.folders.iter().any(|f| f == SLUG));
}

#[test]
fn leaving_out_any_one_edit_fails_and_names_its_file() {
    for skipped in EDITED_FILES {
        let t = book_with_new_chapter(Some(skipped));
        let p = problems(t.path(), tables());
        assert!(!p.is_empty(), "leaving out {skipped} went unnoticed");
        assert!(
            p.iter().any(|m| m.contains(skipped)),
            "leaving out {skipped}: {}",
            p.join("\n")
        );
        eprintln!("left out {skipped}:\n  {}", p.join("\n  "));
    }
}

#[test]
fn a_chapter_folder_the_registry_misses_fails() {
    let t = tempfile::tempdir().unwrap();
    copy_dir(&book_root().join("src"), &t.path().join("src"));
    copy_dir(
        &book_root().join("chapters-code"),
        &t.path().join("chapters-code"),
    );
    new_files(t.path());
    let p = problems(t.path(), tables());
    assert!(
        p.iter()
            .any(|m| m.contains(&format!("chapters-code/{SLUG}"))),
        "{}",
        p.join("\n")
    );
}
