//! Verdicts have one rule and one wording: every page's "faster", "no clear
//! difference" and "about the same" come from `harness::stats::Comparison`, worded by
//! `harness/src/comparison.rs`. This test reads the source (no build, no measuring): no
//! other file of the chapters, the appendix crate, the guide or the Compare page's
//! script writes a verdict phrase; no chapter view judges two arms of one result with
//! the unpaired rule (`stats::verdict` on two marginal estimates) or chooses what to
//! say by a verdict (that choice is a finding's advice, `harness::finding`); and each
//! chapter's views stay small enough to place (at most 900 lines).

use book_tests::book_root;
use std::path::{Path, PathBuf};

/// Phrases only the wording layer writes.
const PHRASES: [&str; 11] = [
    "no clear difference",
    "about the same (within",
    "is faster than",
    "is slower than",
    "× faster",
    "× slower",
    "Not measurably",
    "intervals overlap",
    "clearly sooner",
    "clearly enough",
    "Nothing clearly",
];

/// The one file allowed to word verdicts.
const WORDING: &str = "chapters-code/harness/src/comparison.rs";

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a source file before its unit tests, without comment lines.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

#[test]
fn verdict_phrases_are_written_in_one_file() {
    let root = book_root();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root.join("chapters-code"))
        .unwrap()
        .flatten()
    {
        rust_files(&entry.path().join("src"), &mut files);
    }
    files.push(root.join("assets/js/compare.js"));
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        if rel == WORDING {
            continue;
        }
        for (n, line) in code_lines(f) {
            for p in PHRASES {
                if line.contains(p) {
                    found.push(format!("{rel}:{n}: `{p}` in {}", line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "verdict phrases outside {WORDING} (declare a finding, or word them with \
         comparison_sentence, ratio_cell or undecided_text):\n{}",
        found.join("\n")
    );
}

/// Each chapter's view files: `src/views.rs`, or every file of `src/views/`.
fn chapter_views() -> Vec<(String, PathBuf)> {
    let root = book_root();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join("chapters-code"))
        .unwrap()
        .flatten()
    {
        let mut files = Vec::new();
        let single = entry.path().join("src/views.rs");
        if single.exists() {
            files.push(single);
        }
        rust_files(&entry.path().join("src/views"), &mut files);
        let name = entry.file_name().to_string_lossy().to_string();
        out.extend(files.into_iter().map(|f| (name.clone(), f)));
    }
    out
}

/// The lines of every chapter's views for which `matches` holds, as `file:line: code`.
fn view_lines_where(matches: impl Fn(&str) -> bool) -> Vec<String> {
    let root = book_root();
    let mut found = Vec::new();
    for (_, views) in chapter_views() {
        let rel = views
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        for (n, line) in code_lines(&views) {
            if matches(&line) {
                found.push(format!("{rel}:{n}: {}", line.trim()));
            }
        }
    }
    found
}

#[test]
fn chapter_views_judge_arms_of_one_result_on_their_pairs() {
    let found = view_lines_where(|line| {
        line.contains(" verdict(")
            || line.contains("(verdict(")
            || line.contains("stats::verdict")
            || line.contains("verdict_with(")
    });
    assert!(
        found.is_empty(),
        "chapter views calling the unpaired rule (use Results::compare or compare_of, or \
         Comparison::unpaired where the two really were measured apart):\n{}",
        found.join("\n")
    );
}

#[test]
fn chapter_views_choose_no_words_by_a_verdict() {
    let found = view_lines_where(|line| {
        line.contains("Verdict::") || line.contains(".verdict") || line.contains(".is_clear()")
    });
    assert!(
        found.is_empty(),
        "chapter views branching on a verdict (what to say for each outcome is a finding's \
         advice, harness::Finding):\n{}",
        found.join("\n")
    );
}

/// The most lines a chapter's views may take, tests inside them included.
const VIEWS_MAX_LINES: usize = 900;

#[test]
fn each_chapter_s_views_fit_in_900_lines() {
    let mut lines: std::collections::BTreeMap<String, usize> = Default::default();
    for (chapter, views) in chapter_views() {
        *lines.entry(chapter).or_default() +=
            std::fs::read_to_string(&views).unwrap().lines().count();
    }
    let over: Vec<String> = lines
        .iter()
        .filter(|(_, n)| **n > VIEWS_MAX_LINES)
        .map(|(c, n)| format!("{c}: {n} lines"))
        .collect();
    assert!(
        over.is_empty(),
        "views over {VIEWS_MAX_LINES} lines (move sentences into findings, shared pieces \
         into the harness): {over:?}"
    );
}
