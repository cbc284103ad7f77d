//! Issue 37: the Windows build's records on this side. `.ci/run windows` has Wine run
//! the Windows build's `all-results.exe measure --profile quick`, then imports those
//! records with `all-results import` into a scratch folder and runs this module with
//! `COW_WINDOWS_RESULTS` naming that folder. There, with no hand edit: every
//! experiment of the book has a good record from a build made for Windows, whose
//! machine says so; all of them are kept apart as another OS (under `other-machines/`,
//! in one `windows-…` folder, none among this machine's); and every table and plot of
//! each experiment renders from its record here, with no panic and no "No result",
//! except where the record itself notes that its OS lacks what the view shows.
//!
//! Without `COW_WINDOWS_RESULTS` (an ordinary test run) the same checks run on the
//! chapters' golden records relabelled as a Windows build's, imported the same way.

use all_results::CHAPTERS;
use all_results::others::{self, DIR};
use harness::machine::TargetOs;
use harness::{NoteKind, Record, cache};
use std::path::{Path, PathBuf};

/// What is wrong with a results folder that a Windows build's records were imported
/// into; empty when nothing is.
fn problems(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let machines: Vec<PathBuf> = std::fs::read_dir(dir.join(DIR))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    let names: Vec<String> = machines
        .iter()
        .filter_map(|p| Some(p.file_name()?.to_str()?.to_string()))
        .collect();
    let [machine] = machines.as_slice() else {
        return vec![format!(
            "{}: one other machine expected, found {names:?}",
            dir.display()
        )];
    };
    if !names[0].starts_with("windows-") {
        out.push(format!(
            "the other machine's folder is {}, not windows-…",
            names[0]
        ));
    }
    // Kept apart: nothing was filed as this machine's own.
    let own = cache::all_files(dir);
    if !own.is_empty() {
        out.push(format!(
            "{} records are filed as this machine's ({})",
            own.len(),
            own[0].0.display()
        ));
    }
    let records: Vec<Record> = cache::all_files(machine)
        .into_iter()
        .filter_map(|(path, read)| match read {
            Ok(r) => Some(r),
            Err(why) => {
                out.push(format!("{}: refused: {why}", path.display()));
                None
            }
        })
        .collect();
    let mut experiments = 0;
    for ch in CHAPTERS {
        for exp in ch.experiments {
            experiments += 1;
            let name = format!("{}/{}", ch.name, exp.name());
            let Some(r) = records.iter().find(|r| {
                r.is_ok()
                    && r.chapter == ch.name
                    && r.experiment == exp.name()
                    && harness::params::tag(&r.params).is_none()
            }) else {
                out.push(format!("{name}: no good record"));
                continue;
            };
            let m = &r.provenance.machine;
            if m.target_os != Some(TargetOs::Windows) || !m.os.starts_with("Windows") {
                out.push(format!(
                    "{name}: its machine does not name Windows ({:?}, {:?})",
                    m.target_os, m.os
                ));
            }
            if !others::is_other_os(r) {
                out.push(format!("{name}: not another OS's record"));
            }
            let unsupported = r.notes.iter().any(|n| n.kind == NoteKind::Unsupported);
            let shown = cache::Shown {
                record: r.clone(),
                newer_failures: Vec::new(),
            };
            for v in ch.views.iter().filter(|v| v.experiment() == exp.name()) {
                let md = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    harness::render::render_view(*v, &shown)
                }));
                match md {
                    Err(_) => out.push(format!("{name}: the view {} panicked", v.name())),
                    // A view of calls that OS lacks (timer slack, pinning with
                    // sched_setaffinity) has nothing to show, which its record says
                    // in a note of its own: said, not a failure.
                    Ok(md) if md.contains("No result for") && !unsupported => {
                        let line = md.lines().find(|l| l.contains("No result for"));
                        out.push(format!("{name}: {}", line.unwrap_or_default()));
                    }
                    Ok(md) if md.contains("No result for") => {
                        let line = md.lines().find(|l| l.contains("No result for"));
                        eprintln!(
                            "{name}: {} (its record: not available there)",
                            line.unwrap_or_default()
                        );
                    }
                    Ok(md) => {
                        if let Some(line) = dash_in_a_sentence(&md) {
                            out.push(format!(
                                "{name}: the view {} puts a dash for a missing figure in a sentence: {line}",
                                v.name()
                            ));
                        }
                    }
                }
            }
        }
    }
    if experiments == 0 {
        out.push("the book has no experiments".into());
    }
    out
}

/// The first line of prose (not a table row, heading or code) in which an en dash
/// stands alone for a figure the record lacks ("costs – here", "–/–", "(–)"); a dash
/// between two numbers is a range and passes. Tables may show "–" in a cell.
fn dash_in_a_sentence(md: &str) -> Option<String> {
    let mut code = false;
    for line in md.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            code = !code;
            continue;
        }
        if code || t.starts_with('|') || t.starts_with('#') || t.starts_with('<') {
            continue;
        }
        let chars: Vec<char> = t.chars().collect();
        let lone = |i: usize| {
            let apart =
                |c: Option<&char>| c.is_none_or(|c| c.is_whitespace() || "(/:,;.)".contains(*c));
            apart(i.checked_sub(1).and_then(|j| chars.get(j))) && apart(chars.get(i + 1))
        };
        if (0..chars.len()).any(|i| chars[i] == '–' && lone(i)) {
            return Some(t.to_string());
        }
    }
    None
}

#[test]
fn a_lone_dash_in_prose_is_found_and_a_range_is_not() {
    assert!(dash_in_a_sentence("One costs – here.").is_some());
    assert!(dash_in_a_sentence("Shares per round: –/–, 40/–.").is_some());
    assert!(dash_in_a_sentence("A range 10–100 ms, and 0.37–1.1×.").is_none());
    assert!(dash_in_a_sentence("| a | – |").is_none());
}

/// The golden records of every chapter, as a Windows build under Wine would have
/// written them (the typed OS says Windows; the description was the Linux host's
/// before issue 37 and must not matter).
fn golden_as_windows(to: &Path) {
    for ch in CHAPTERS {
        let dir = Path::new(ch.dir).join("tests/golden/records");
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let mut r = cache::read_checked(&e.path())
                .unwrap_or_else(|why| panic!("{}: {why}", e.path().display()));
            r.provenance.machine.target_os = Some(TargetOs::Windows);
            r.provenance.machine.os = "Windows 10.0 (build 19045), run by Wine 8.0".into();
            r.provenance.machine.kernel = String::new();
            cache::store(to, &r).unwrap();
        }
    }
}

#[test]
fn a_windows_builds_records_are_kept_apart_and_every_view_renders_from_them() {
    if let Some(dir) = std::env::var_os("COW_WINDOWS_RESULTS") {
        let found = problems(Path::new(&dir));
        assert!(found.is_empty(), "{}", found.join("\n"));
        return;
    }
    let from = tempfile::tempdir().unwrap();
    let to = tempfile::tempdir().unwrap();
    golden_as_windows(from.path());
    let done = others::import(from.path(), to.path()).unwrap();
    assert_eq!(done.copied, 0, "{:?}", done.refused);
    assert!(done.other_machines >= 19, "{done:?}");
    let found = problems(to.path());
    assert!(found.is_empty(), "{}", found.join("\n"));
    // A record filed as this machine's is said.
    golden_as_windows(to.path());
    let found = problems(to.path());
    assert!(
        found.iter().any(|p| p.contains("as this machine's")),
        "{found:?}"
    );
}
