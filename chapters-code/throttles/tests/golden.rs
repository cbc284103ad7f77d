//! Golden tests: every view of the chapter's registry, rendered as the page shows it
//! (table or plot, then the notes and the provenance line) from fixed records kept in
//! `tests/golden/records/`, must read exactly as its snapshot in `tests/snapshots/`.
//! A reworded sentence, a changed cell or a moved plot fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p throttles --test it golden::`
//!   rewrites the snapshots (or `cargo insta review` accepts them one by one); read the
//!   diff, then commit it. Under `CI=true` insta writes nothing and the test fails.
//! - The records themselves: `COW_GOLDEN_RECORDS=1 cargo test -p throttles --test it golden::
//!   -- --ignored` measures every experiment afresh (quick profile, 6 rounds, in this
//!   process) and writes them, with the machine, the date and the code key pinned
//!   (`harness::fixture::pin_golden`); then update the snapshots as above.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only: the records were measured on Linux and the snapshots are Linux's
//!   pages (some views word what the OS they are built for lacks), so on macOS and
//!   Windows these tests are compiled out.

#![cfg(target_os = "linux")]

harness::golden_tests!(throttles::CHAPTER);

/// Issue 35, item 3: a gap distribution of u64::MAX samples made a view panic; a count
/// beyond what the parameters make is refused at the door, naming the bound.
#[test]
fn a_count_beyond_its_parameter_is_refused() {
    let e = harness::fixture::golden_grown(&throttles::CHAPTER, "omission", |d| {
        d["sent"] = 4_294_967_295u64.into();
    })
    .unwrap_err();
    assert_eq!(
        e,
        "round 0: the round holds 4,294,967,295 requests sent; this experiment makes at most 200 a round (requests = 200)"
    );
    let e = harness::fixture::golden_grown(&throttles::CHAPTER, "sweep", |d| {
        d["lengths"][0]["actual"] = serde_json::json!({"buckets": [[1000, 1_000_000]]});
    })
    .unwrap_err();
    assert!(e.contains("at most 3 a round (sleeps = 3)"), "{e}");
}
