//! Verdicts have one rule and one wording: every page's "faster", "no clear
//! difference" and "about the same" come from `harness::stats::Comparison`, worded by
//! `harness/src/render.rs`. This test reads the source (no build, no measuring): no
//! other file of the chapters, the appendix crate, the guide or the Compare page's
//! script writes a verdict phrase, and no chapter view judges two arms of one result
//! with the unpaired rule (`stats::verdict` on two marginal estimates).

use book_tests::book_root;
use std::path::{Path, PathBuf};

/// Phrases only the wording layer writes.
const PHRASES: [&str; 6] = [
    "no clear difference",
    "about the same (within",
    "is faster than",
    "is slower than",
    "Not measurably",
    "intervals overlap",
];

/// The one file allowed to word verdicts.
const WORDING: &str = "chapters-code/harness/src/render.rs";

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
        "verdict phrases outside {WORDING} (word them with render's comparison_sentence, \
         ratio_cell, undecided_text or undecided_lists):\n{}",
        found.join("\n")
    );
}

#[test]
fn chapter_views_judge_arms_of_one_result_on_their_pairs() {
    let root = book_root();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root.join("chapters-code"))
        .unwrap()
        .flatten()
    {
        let views = entry.path().join("src/views.rs");
        if !views.exists() {
            continue;
        }
        let rel = views
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        for (n, line) in code_lines(&views) {
            let calls_unpaired = line.contains(" verdict(")
                || line.contains("(verdict(")
                || line.contains("stats::verdict")
                || line.contains("verdict_with(");
            if calls_unpaired {
                found.push(format!("{rel}:{n}: {}", line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "chapter views calling the unpaired rule (use Results::compare or compare_of, or \
         Comparison::unpaired where the two really were measured apart):\n{}",
        found.join("\n")
    );
}
