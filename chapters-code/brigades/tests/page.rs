//! Every view renders from real rounds into a table of at most five columns, and the
//! answer comes first. (That the page and the code agree — includes, anchors, markers —
//! is checked for every chapter by `book-tests/tests/pages.rs`.)

use harness::Profile;
use harness::experiment::ViewKind;
use harness::params::Override;
use std::path::PathBuf;
use std::time::Duration;

fn page() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("../../src/brigades.md")).unwrap()
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
