//! Golden tests: every view of the chapter's registry, rendered as the page shows it
//! (table or plot, then the notes and the provenance line) from fixed records kept in
//! `tests/golden/records/`, must read exactly as its snapshot in `tests/snapshots/`.
//! A reworded sentence, a changed cell or a moved plot fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p short-sleeps --test it golden::`
//!   rewrites the snapshots (or `cargo insta review` accepts them one by one); read the
//!   diff, then commit it. Under `CI=true` insta writes nothing and the test fails.
//! - The records themselves: `COW_GOLDEN_RECORDS=1 cargo test -p short-sleeps --test it golden::
//!   -- --ignored` measures every experiment afresh (quick profile, 6 rounds, in this
//!   process) and writes them, with the machine, the date and the code key pinned
//!   (`harness::fixture::pin_golden`); then update the snapshots as above.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only: the records were measured on Linux and the snapshots are Linux's
//!   pages (some views word what the OS they are built for lacks), so on macOS and
//!   Windows these tests are compiled out.

#![cfg(target_os = "linux")]

harness::golden_tests!(short_sleeps::CHAPTER);

/// Issue 35: a loop that says it made more calls than its parameter plans is refused
/// at the door, naming the bound and the parameter it comes from.
#[test]
fn a_count_beyond_its_parameter_is_refused() {
    let e = harness::fixture::golden_grown(&short_sleeps::CHAPTER, "calls", |d| {
        d["loops"][0]["sample"]["calls"] = 4_294_967_295u64.into();
    })
    .unwrap_err();
    assert!(
        e.starts_with("round 0: the loop ")
            && e.ends_with(
                "holds 4,294,967,295 calls; this experiment makes at most 500 a round (calls = 500)"
            ),
        "{e}"
    );
    let e = harness::fixture::golden_grown(&short_sleeps::CHAPTER, "sweep", |d| {
        d["points"][0]["late"]["buckets"][0][1] = 1_000_000u64.into();
    })
    .unwrap_err();
    assert!(e.contains("at most 100 a round (sleeps = 100)"), "{e}");
}
