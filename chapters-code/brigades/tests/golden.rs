//! Golden tests: every view of the chapter's registry, rendered as the page shows it
//! (table or plot, then the notes and the provenance line) from fixed records kept in
//! `tests/golden/records/`, must read exactly as its snapshot in `tests/snapshots/`.
//! A reworded sentence, a changed cell or a moved plot fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p brigades --test it golden::`
//!   rewrites the snapshots (or `cargo insta review` accepts them one by one); read the
//!   diff, then commit it. Under `CI=true` insta writes nothing and the test fails.
//! - The records themselves: `COW_GOLDEN_RECORDS=1 cargo test -p brigades --test it golden::
//!   -- --ignored` measures every experiment afresh (quick profile, 6 rounds, in this
//!   process) and writes them, with the machine, the date and the code key pinned
//!   (`harness::fixture::pin_golden`); then update the snapshots as above.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only: the records were measured on Linux and the snapshots are Linux's
//!   pages (some views word what the OS they are built for lacks), so on macOS and
//!   Windows these tests are compiled out.

#![cfg(target_os = "linux")]

harness::golden_tests!(brigades::CHAPTER);

/// Issue 35: a brigade that says it had more members than its parameter asks for is
/// refused at the door, naming the bound and the parameter it comes from.
#[test]
fn a_count_beyond_its_parameter_is_refused() {
    let e = harness::fixture::golden_grown(&brigades::CHAPTER, "variants", |d| {
        d["variants"][0]["tasks"] = 4_294_967_295u64.into();
    })
    .unwrap_err();
    assert!(
        e.starts_with("round 0: the brigade ")
            && e.ends_with(
                "holds 4,294,967,295 members; this experiment makes at most 500 a round (tasks = 500)"
            ),
        "{e}"
    );
    let e = harness::fixture::golden_grown(&brigades::CHAPTER, "sweep", |d| {
        d["series"][0]["points"][0]["laps"] = 5_000u64.into();
    })
    .unwrap_err();
    assert!(e.contains("a round (hops_per_point = "), "{e}");
}

/// The one-size threat leaves out the rounds whose two figures lie within one page over
/// the members, by the page size each round recorded: the larger the page, the fewer
/// rounds resolve; with pages larger than any difference none does, and the row has no
/// pair.
#[test]
fn one_size_ties_follow_the_recorded_page_size() {
    use harness::AnyFinding;
    let mut records = harness::fixture::golden_records(&brigades::CHAPTER).unwrap();
    let sweep = records
        .iter_mut()
        .find(|r| r.experiment == "sweep")
        .unwrap();
    let pairs = |r: &mut harness::Record, page: u64| {
        for round in &mut r.rounds {
            round.data["page_bytes"] = page.into();
        }
        match brigades::chapter::ONE_SIZE.evidence(r).unwrap() {
            Some(harness::Evidence::Pair { comparison, .. }) => comparison.rounds(),
            _ => 0,
        }
    };
    let resolved: Vec<u32> = [1, 4096, 100_000, 110_000, 1 << 30]
        .iter()
        .map(|&page| pairs(sweep, page))
        .collect();
    assert!(resolved[0] > 0, "{resolved:?}");
    assert!(resolved.windows(2).all(|w| w[0] >= w[1]), "{resolved:?}");
    assert!(resolved[0] > resolved[3], "{resolved:?}");
    assert_eq!(resolved[4], 0, "{resolved:?}");
}
