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
fn the_decision_table_comes_first_with_a_plot_and_answers_from_real_rounds() {
    // The question, the decision table, then at once a plot; listings only later.
    let page = page();
    let answer = page
        .find("run.sh brigades table answer")
        .expect("an answer marker");
    let plot = page.find("run.sh brigades plot").expect("a plot marker");
    let listing = page.find("{{#include").expect("a listing");
    assert!(answer < plot && plot < listing, "answer, plot, listings");
    assert!(page[..answer].split_whitespace().count() < 80);
    assert!(page[answer..plot].split_whitespace().count() < 20);

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
    let md = harness::answer::chapter_answer(ch.findings, std::slice::from_ref(&record));
    assert!(
        md.starts_with("<div class=\"cow-live cow-answer\">"),
        "{md}"
    );
    // Every finding of this experiment has a figure; the others say what is missing.
    #[cfg(target_os = "linux")]
    for situation in [
        "Threads or tasks",
        "tokio channel",
        "current-thread",
        "short jobs",
    ] {
        let row = md
            .lines()
            .find(|l| l.contains(situation))
            .unwrap_or_else(|| panic!("no row {situation:?} in {md}"));
        assert!(!row.contains("no figure"), "{row}");
    }
    assert!(md.contains("no figure: no result on this machine"), "{md}");
    // The A/A twin is compared in the pairs table and kept out of the other tables.
    let pairs = ch
        .view(ViewKind::Table, "pairs")
        .unwrap()
        .render(&record)
        .unwrap();
    assert!(pairs.contains("A/A check"), "{pairs}");
    let table = ch
        .view(ViewKind::Table, "variants")
        .unwrap()
        .render(&record)
        .unwrap();
    assert!(!table.contains("twin"), "{table}");
}
