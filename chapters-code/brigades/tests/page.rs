//! The chapter's page and its code agree: every listing is a whole top-level item that
//! starts at column 0, at most 40 lines, with no test plumbing inside; every anchor in
//! the code is shown; every marker names a view of this chapter; every view renders
//! from real rounds into a table of at most five columns.

use harness::Profile;
use harness::experiment::ViewKind;
use harness::params::Override;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn page() -> String {
    std::fs::read_to_string(root().join("../../src/brigades.md")).unwrap()
}

/// Every `ANCHOR: name` in the crate's sources, with the lines it covers.
fn anchors() -> BTreeMap<String, (String, Vec<String>)> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("src")).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut open: Option<(String, Vec<String>)> = None;
        for line in text.lines() {
            if let Some(name) = line.trim().strip_prefix("// ANCHOR: ") {
                assert!(open.is_none(), "{file}: nested anchor {name}");
                open = Some((name.to_string(), Vec::new()));
            } else if let Some(name) = line.trim().strip_prefix("// ANCHOR_END: ") {
                let (n, lines) = open
                    .take()
                    .unwrap_or_else(|| panic!("{file}: stray end {name}"));
                assert_eq!(n, name, "{file}: anchor {n} ends as {name}");
                assert!(
                    out.insert(n.clone(), (file.clone(), lines)).is_none(),
                    "{n} twice"
                );
            } else if let Some((_, lines)) = open.as_mut() {
                lines.push(line.to_string());
            }
        }
        assert!(open.is_none(), "{file}: an anchor is never closed");
    }
    out
}

#[test]
fn listings_are_whole_items_at_column_zero_and_every_anchor_is_shown() {
    let page = page();
    let anchors = anchors();
    let included: Vec<(String, String)> = page
        .lines()
        .filter_map(|l| {
            let inner = l
                .trim()
                .strip_prefix("{{#include ../chapters-code/brigades/src/")?;
            let inner = inner.strip_suffix("}}")?;
            let (file, anchor) = inner.split_once(':')?;
            Some((file.to_string(), anchor.to_string()))
        })
        .collect();
    for (name, (file, lines)) in &anchors {
        assert!(
            included.iter().any(|(f, a)| f == file && a == name),
            "anchor {file}:{name} is shown nowhere"
        );
        assert!(lines.len() <= 40, "{name}: {} lines", lines.len());
        let first = lines.iter().find(|l| !l.trim().is_empty()).unwrap();
        assert!(!first.starts_with(' '), "{name} does not start at column 0");
        let opens = lines.iter().map(|l| l.matches('{').count()).sum::<usize>();
        let closes = lines.iter().map(|l| l.matches('}').count()).sum::<usize>();
        assert_eq!(opens, closes, "{name} is not a whole item");
        let body = lines.join("\n");
        for hook in ["fake", "for_test", "#[cfg(test)]"] {
            assert!(!body.contains(hook), "{name} shows test plumbing ({hook})");
        }
    }
    for (file, anchor) in &included {
        assert!(
            anchors.get(anchor).is_some_and(|(f, _)| f == file),
            "the page includes {file}:{anchor}, which does not exist"
        );
    }
}

#[test]
fn every_marker_names_a_view_of_this_chapter() {
    let ch = &brigades::CHAPTER;
    let mut shown = Vec::new();
    for line in page().lines() {
        let Some(cmd) = line
            .trim()
            .strip_prefix("<!-- cmdrun -0 sh ../chapters-code/harness/run.sh brigades ")
        else {
            continue;
        };
        let mut words = cmd.trim_end_matches("-->").split_whitespace();
        let (kind, name) = (words.next().unwrap(), words.next().unwrap());
        let kind = if kind == "table" {
            ViewKind::Table
        } else {
            ViewKind::Plot
        };
        assert!(ch.view(kind, name).is_some(), "no {kind:?} {name}");
        shown.push(name.to_string());
    }
    for v in ch.views {
        assert!(
            shown.iter().any(|s| s == v.name()),
            "view {} is not on the page",
            v.name()
        );
    }
}

/// Small sizes, so a few real rounds take a second or two.
fn small(experiment: &str) -> Vec<Override> {
    let sets: &[&str] = match experiment {
        "variants" => &[
            "tasks=20",
            "laps=5",
            "baseline_laps=5",
            "warmup=1",
            "threads_per_batch=10",
            "tasks_per_batch=100",
        ],
        "sweep" => &["hops_per_point=200", "max_threads=1000", "max_tasks=1000"],
        "limits" => &["threads=50", "async_tasks=3000", "probe_laps=1"],
        _ => &[],
    };
    sets.iter().map(|s| Override::parse(s).unwrap()).collect()
}

#[test]
fn every_view_renders_from_real_rounds_into_at_most_five_columns() {
    let ch = &brigades::CHAPTER;
    for exp in ch.experiments {
        let overrides = small(exp.name());
        let record = harness::runner::rounds_in_process(
            &harness::runner::Request {
                chapter: ch,
                experiment: *exp,
                profile: Profile::Quick,
                overrides: &overrides,
                mode: harness::runner::Mode::InProcess,
            },
            3,
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(
            record.rounds.len(),
            3,
            "{}: {:?}",
            exp.name(),
            record.status
        );
        for v in ch.views.iter().filter(|v| v.experiment() == exp.name()) {
            let md = v
                .render(&record)
                .unwrap_or_else(|e| panic!("{}: {e:#}", v.name()));
            assert!(!md.trim().is_empty(), "{} is empty", v.name());
            if v.kind() == ViewKind::Table {
                for header in md.lines().filter(|l| l.starts_with("| ")).take(1) {
                    let columns = header.matches(" | ").count() + 1;
                    assert!(columns <= 5, "{}: {columns} columns", v.name());
                }
                assert!(!md.contains("p99"), "{}: a p99 over a few laps", v.name());
            } else {
                assert!(md.contains("<svg"), "{}", v.name());
            }
        }
    }
}

#[test]
fn the_answer_comes_first_and_answers_from_real_rounds() {
    // Placed before the first listing, right after the opening paragraph.
    let page = page();
    let answer = page
        .find("run.sh brigades table answer")
        .expect("an answer marker");
    let listing = page.find("{{#include").expect("a listing");
    assert!(answer < listing, "the answer comes after a listing");
    assert!(page[..answer].split_whitespace().count() < 200);

    let ch = &brigades::CHAPTER;
    let exp = ch.experiment("variants").unwrap();
    let overrides = small("variants");
    let record = harness::runner::rounds_in_process(
        &harness::runner::Request {
            chapter: ch,
            experiment: exp,
            profile: Profile::Quick,
            overrides: &overrides,
            mode: harness::runner::Mode::InProcess,
        },
        3,
        Duration::from_secs(20),
    )
    .unwrap();
    let md = ch
        .view(ViewKind::Table, "answer")
        .unwrap()
        .render(&record)
        .unwrap();
    assert!(
        md.starts_with("<div class=\"cow-live cow-answer\">"),
        "{md}"
    );
    assert!(md.contains("*The write-up:* Jim Blandy"), "{md}");
    assert!(md.contains("“1.8 / 2.7 ≅ 0.67”"), "{md}");
    #[cfg(target_os = "linux")]
    for part in [
        "a hop took",
        "voluntary context switches",
        "per thread",
        "How far",
    ] {
        assert!(md.contains(part), "no {part:?} in {md}");
    }
    // The A/A twin is compared in the findings and kept out of the tables.
    let findings = ch
        .view(ViewKind::Table, "findings")
        .unwrap()
        .render(&record)
        .unwrap();
    assert!(findings.contains("Self-check (A/A"), "{findings}");
    let table = ch
        .view(ViewKind::Table, "variants")
        .unwrap()
        .render(&record)
        .unwrap();
    assert!(!table.contains("twin"), "{table}");
}
