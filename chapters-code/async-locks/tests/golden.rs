//! Golden tests: every view of the chapter's registry, rendered as the page shows it
//! (table or plot, then the notes and the provenance line) from fixed records kept in
//! `tests/golden/records/`, must read exactly as its snapshot in `tests/snapshots/`.
//! A reworded sentence, a changed cell or a moved plot fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p async-locks --test golden`
//!   rewrites the snapshots (or `cargo insta review` accepts them one by one); read the
//!   diff, then commit it. Under `CI=true` insta writes nothing and the test fails.
//! - The records themselves: `COW_GOLDEN_RECORDS=1 cargo test -p async-locks --test golden
//!   -- --ignored` measures every experiment afresh (quick profile, 6 rounds, in this
//!   process) and writes them, with the machine, the date and the code key pinned
//!   (`harness::fixture::pin_golden`); then update the snapshots as above.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only: the records were measured on Linux and the snapshots are Linux's
//!   pages (some views word what the OS they are built for lacks), so on macOS and
//!   Windows these tests are compiled out.

#![cfg(target_os = "linux")]

use async_locks::CHAPTER;
use harness::cache::Shown;
use harness::fixture::{golden_views, stale_snapshots, write_golden_records};
use harness::render::render_view;

#[test]
fn every_view_reads_as_its_snapshot() {
    assert!(
        std::env::var_os("COW_THRESHOLD").is_none(),
        "unset COW_THRESHOLD: the snapshots hold the verdicts of the default threshold"
    );
    let views = golden_views(&CHAPTER).unwrap_or_else(|e| panic!("{e:#}"));
    let mut differ = Vec::new();
    for (name, view, record) in views {
        let page = render_view(
            view,
            &Shown {
                record,
                newer_failures: vec![],
            },
        );
        assert!(
            !page.contains("No result for"),
            "{name} did not render:\n{page}"
        );
        // Every view is compared before the test fails, naming all that differ.
        if std::panic::catch_unwind(|| insta::assert_snapshot!(name.as_str(), page)).is_err() {
            differ.push(name);
        }
    }
    assert!(
        differ.is_empty(),
        "these views read differently: {differ:?}"
    );
}

#[test]
fn every_snapshot_is_of_a_view_in_the_registry() {
    let views = golden_views(&CHAPTER).unwrap_or_else(|e| panic!("{e:#}"));
    let names: Vec<&str> = views.iter().map(|(name, _, _)| name.as_str()).collect();
    let stale = stale_snapshots(CHAPTER.dir, &names);
    assert!(
        stale.is_empty(),
        "snapshots of no view: {stale:?}; remove them"
    );
}

#[test]
#[ignore = "measures and writes the golden records: COW_GOLDEN_RECORDS=1 … -- --ignored"]
fn write_the_golden_records() {
    if std::env::var_os("COW_GOLDEN_RECORDS").is_none() {
        eprintln!("set COW_GOLDEN_RECORDS=1 to measure and write the golden records");
        return;
    }
    write_golden_records(&CHAPTER, 6, |_| vec![]).unwrap();
}
