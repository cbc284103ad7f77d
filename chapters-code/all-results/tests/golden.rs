//! Golden tests of the appendix: every table `all-results table NAME` prints for the
//! book, computed from the chapters' golden records (each chapter's
//! `tests/golden/records/`, see its `tests/golden.rs`), must read exactly as its
//! snapshot in `tests/snapshots/`. A reworded sentence or a changed cell fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p all-results --test it golden::`
//!   rewrites the snapshots (or `cargo insta review` accepts them one by one); read the
//!   diff, then commit it. Under `CI=true` insta writes nothing and the test fails.
//! - Regenerated chapter records change these tables too: update these snapshots with
//!   the chapters'.
//! - What the clock gives a table is fixed here: the results file's `generated_at`.
//!   The download link's base64 payload (the same figures as `compare-data` and
//!   `headlines`, which are pinned) is replaced by its length.
//! - `two-runs` reads the comparisons stored in the results folder: it is rendered
//!   from an empty one. `other-os` reads other machines' imported records, of which
//!   there is no golden set: it is left out.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only, as the chapters' golden tests.

#![cfg(target_os = "linux")]

use all_results::{APPENDIX_TABLES, Bundle, CHAPTERS, appendix, figures, same, selftest, worked};
use harness::Record;
use harness::cache::Shown;
use harness::fixture::{golden_records, stale_snapshots};

/// The tables no golden record can render (see the module's comment).
const LEFT_OUT: [&str; 1] = ["other-os"];

/// Every table the appendix's binary prints, as its `table` command names them.
fn table_names() -> Vec<&'static str> {
    let mut v = APPENDIX_TABLES.to_vec();
    v.extend(CHAPTERS.iter().map(|c| c.name));
    v.retain(|n| !LEFT_OUT.contains(n));
    v
}

fn golden_shown() -> Vec<Shown> {
    CHAPTERS
        .iter()
        .flat_map(|ch| golden_records(ch).unwrap_or_else(|e| panic!("{e:#}")))
        .map(|record| Shown {
            record,
            newer_failures: vec![],
        })
        .collect()
}

/// The results file of the golden records, made at a fixed moment.
fn bundle(records: Vec<Record>) -> Bundle {
    let mut b = Bundle::of(records);
    b.generated_at = "2025-01-02T03:04:05Z".into();
    b
}

/// The download link with its base64 payload replaced by the payload's length.
fn without_payload(md: &str) -> String {
    let start = "base64,";
    let Some(i) = md.find(start).map(|i| i + start.len()) else {
        return md.to_string();
    };
    let n = md[i..].find('\'').expect("the link's closing quote");
    format!("{}…{n} base64 characters…{}", &md[..i], &md[i + n..])
}

/// One table as `all-results table NAME` prints it (its `main.rs` dispatches the same).
fn table(name: &str, shown: &[Shown]) -> String {
    let records: Vec<Record> = shown.iter().map(|s| s.record.clone()).collect();
    match name {
        "overview" => appendix::overview(shown),
        "findings" => appendix::findings(&records),
        "verdict-rates" => appendix::verdict_rates(),
        "download" => without_payload(
            &appendix::download(&bundle(records).without_round_data()).expect("the download"),
        ),
        "headlines" => appendix::headlines(&figures(&records)),
        "compare-data" => appendix::compare_data(&bundle(records)).expect("the data"),
        "budgets" => appendix::budgets(shown),
        "watcher" => appendix::watcher(&records),
        "aa" => selftest::aa_view(&records),
        "two-runs" => selftest::two_runs_view(tempfile::tempdir().unwrap().path()),
        "same" => same::view(&records),
        "verdict-example" => worked::view(&records),
        slug => appendix::chapter_tables(
            all_results::chapter(slug)
                .unwrap_or_else(|| panic!("a table `{slug}` this test does not render")),
            shown,
        ),
    }
}

#[test]
fn every_table_reads_as_its_snapshot() {
    assert!(
        std::env::var_os("COW_THRESHOLD").is_none(),
        "unset COW_THRESHOLD: the snapshots hold the verdicts of the default threshold"
    );
    let shown = golden_shown();
    let mut differ = Vec::new();
    for name in table_names() {
        let md = table(name, &shown);
        assert!(!md.contains("No result for"), "{name}:\n{md}");
        // Every table is compared before the test fails, naming all that differ.
        if std::panic::catch_unwind(|| harness::golden_snapshot!(name, md)).is_err() {
            differ.push(name);
        }
    }
    assert!(
        differ.is_empty(),
        "these tables read differently: {differ:?}"
    );
}

#[test]
fn every_snapshot_is_of_a_table() {
    let stale = stale_snapshots(env!("CARGO_MANIFEST_DIR"), &table_names());
    assert!(
        stale.is_empty(),
        "snapshots of no table: {stale:?}; remove them"
    );
}
