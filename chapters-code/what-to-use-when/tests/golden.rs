//! Golden tests of the guide: every section, computed from the chapters' golden records
//! (each chapter's `tests/golden/records/`, see its `tests/golden.rs`), must read
//! exactly as its snapshot in `tests/snapshots/`. A reworded sentence or a changed
//! figure fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p what-to-use-when --test
//!   golden` rewrites the snapshots (or `cargo insta review` accepts them one by one);
//!   read the diff, then commit it. Under `CI=true` insta writes nothing and the test
//!   fails.
//! - Regenerated chapter records change these figures too: update these snapshots
//!   with the chapters'.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only: the records were measured on Linux and the snapshots are Linux's
//!   pages (some views word what the OS they are built for lacks), so on macOS and
//!   Windows these tests are compiled out.

#![cfg(target_os = "linux")]

use all_results::CHAPTERS;
use harness::fixture::{golden_records, stale_snapshots};
use what_to_use_when::{SECTIONS, render};

#[test]
fn every_section_reads_as_its_snapshot() {
    assert!(
        std::env::var_os("COW_THRESHOLD").is_none(),
        "unset COW_THRESHOLD: the snapshots hold the verdicts of the default threshold"
    );
    let records: Vec<harness::Record> = CHAPTERS
        .iter()
        .flat_map(|ch| golden_records(ch).unwrap_or_else(|e| panic!("{e:#}")))
        .collect();
    let mut differ = Vec::new();
    for name in SECTIONS {
        let md = render(name, &records);
        // From the golden records every row has its figure, and the section decides.
        assert!(!md.contains("Not available"), "{name}:\n{md}");
        assert!(!md.contains("no figure:"), "{name}:\n{md}");
        assert!(md.contains("**Recommendation:** "), "{name}:\n{md}");
        assert!(!md.contains("none yet"), "{name}:\n{md}");
        // Every section is compared before the test fails, naming all that differ.
        if std::panic::catch_unwind(|| harness::golden_snapshot!(name, md)).is_err() {
            differ.push(name);
        }
    }
    assert!(
        differ.is_empty(),
        "these sections read differently: {differ:?}"
    );
}

#[test]
fn every_snapshot_is_of_a_section() {
    let stale = stale_snapshots(env!("CARGO_MANIFEST_DIR"), &SECTIONS);
    assert!(
        stale.is_empty(),
        "snapshots of no section: {stale:?}; remove them"
    );
}
