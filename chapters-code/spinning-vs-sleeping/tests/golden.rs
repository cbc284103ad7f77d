//! Golden tests: every view of the chapter's registry, rendered as the page shows it
//! (table or plot, then the notes and the provenance line) from fixed records kept in
//! `tests/golden/records/`, must read exactly as its snapshot in `tests/snapshots/`.
//! A reworded sentence, a changed cell or a moved plot fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p spinning-vs-sleeping --test it golden::`
//!   rewrites the snapshots (or `cargo insta review` accepts them one by one); read the
//!   diff, then commit it. Under `CI=true` insta writes nothing and the test fails.
//! - The records themselves: `COW_GOLDEN_RECORDS=1 cargo test -p spinning-vs-sleeping --test it golden::
//!   -- --ignored` measures every experiment afresh (quick profile, 6 rounds, in this
//!   process) and writes them, with the machine, the date and the code key pinned
//!   (`harness::fixture::pin_golden`); then update the snapshots as above.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only: the records were measured on Linux and the snapshots are Linux's
//!   pages (some views word what the OS they are built for lacks), so on macOS and
//!   Windows these tests are compiled out.

#![cfg(target_os = "linux")]

harness::golden_tests!(spinning_vs_sleeping::CHAPTER);

/// Issue 35, item 3: a run whose latency holds 4,294,967,295 samples made a view use
/// 24 GB; it is refused at the door, naming the bound and the parameter it comes from.
#[test]
fn a_count_beyond_its_parameter_is_refused() {
    let e = harness::fixture::golden_grown(&spinning_vs_sleeping::CHAPTER, "pinning", |d| {
        d["runs"][0]["latency"] = serde_json::json!({"buckets": [[1000, 4_294_967_295u64]]});
    })
    .unwrap_err();
    assert!(
        e.starts_with("round 0: the run ")
            && e.ends_with(
                "its latency holds 4,294,967,295 samples; this experiment makes at most 6 a round (messages = 6)"
            ),
        "{e}"
    );
    let e = harness::fixture::golden_grown(&spinning_vs_sleeping::CHAPTER, "floor", |d| {
        d["runs"][0]["one_way"]["buckets"][0][1] = 1_000_000u64.into();
    })
    .unwrap_err();
    assert!(
        e.contains("at most 100 a round (round_trips = 100,000 ÷ 1,000 round trips a sample)"),
        "{e}"
    );
}
