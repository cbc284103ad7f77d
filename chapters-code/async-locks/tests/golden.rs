//! Golden tests: every view of the chapter's registry, rendered as the page shows it
//! (table or plot, then the notes and the provenance line) from fixed records kept in
//! `tests/golden/records/`, must read exactly as its snapshot in `tests/snapshots/`.
//! A reworded sentence, a changed cell or a moved plot fails here.
//!
//! - A change you meant: `INSTA_UPDATE=always cargo test -p async-locks --test it golden::`
//!   rewrites the snapshots (or `cargo insta review` accepts them one by one); read the
//!   diff, then commit it. Under `CI=true` insta writes nothing and the test fails.
//! - The records themselves: `COW_GOLDEN_RECORDS=1 cargo test -p async-locks --test it golden::
//!   -- --ignored` measures every experiment afresh (quick profile, 6 rounds, in this
//!   process) and writes them, with the machine, the date and the code key pinned
//!   (`harness::fixture::pin_golden`); then update the snapshots as above.
//! - `COW_THRESHOLD` must be unset: it moves the verdicts.
//! - Linux only: the records were measured on Linux and the snapshots are Linux's
//!   pages (some views word what the OS they are built for lacks), so on macOS and
//!   Windows these tests are compiled out.

#![cfg(target_os = "linux")]

harness::golden_tests!(async_locks::CHAPTER);

/// Issue 35: a run that says it handled more timeouts than its parameter starts is
/// refused at the door, naming the bound and the parameter it comes from.
#[test]
fn a_count_beyond_its_parameter_is_refused() {
    let e = harness::fixture::golden_grown(&async_locks::CHAPTER, "unit-check", |d| {
        d["fired_ns"] = serde_json::json!(vec![40e6; 3]);
    })
    .unwrap_err();
    assert_eq!(
        e,
        "round 0: fired_ns holds 3 checks; this experiment makes at most 2 a round (checks = 2)"
    );
    let e = harness::fixture::golden_grown(&async_locks::CHAPTER, "designs", |d| {
        d["runs"][0]["lateness"] = serde_json::json!({"buckets": [[1000, 4_294_967_295u64]]});
    })
    .unwrap_err();
    assert!(
        e.ends_with(
            "its lateness holds 4,294,967,295 samples; this experiment makes at most 10,000 a round (timeouts = 10,000)"
        ),
        "{e}"
    );
    // A run may not say more threads ran its callbacks than its runtime has workers.
    let e = harness::fixture::golden_grown(&async_locks::CHAPTER, "hazards", |d| {
        d["runs"][1]["per_thread"] = serde_json::json!([1, 1, 1]);
        d["runs"][1]["workers"] = serde_json::json!(2);
    })
    .unwrap_err();
    assert!(
        e.ends_with(
            "holds 3 threads that ran callbacks; this experiment makes at most 2 a round (the run's workers)"
        ),
        "{e}"
    );
}

/// Where the unlocked control ran alone in some rounds, the ÷ same work unlocked cell
/// adds clauses; each is a part of its own, so the nine-column table can still break
/// between them (a clean clone's browser test found a cell that could not).
#[test]
fn the_control_ran_alone_clause_may_break() {
    let mut r = harness::fixture::golden_records(&async_locks::CHAPTER)
        .unwrap()
        .into_iter()
        .find(|r| r.experiment == "hazards")
        .unwrap();
    // Round 0's control ran slower than the lock; made like the others, so the cell
    // opens with a figure rather than words.
    r.rounds[0].data["runs"][2]["p50_ns"] = serde_json::json!(12e6);
    r.rounds[0].readings[1].value = 12e6;
    // Every round's control kept its work to its time: only the two below ran alone.
    for round in &mut r.rounds {
        round.data["runs"][2]["stretch"] = serde_json::json!(1.0);
    }
    for round in &mut r.rounds[4..] {
        let run = &mut round.data["runs"][2];
        assert_eq!(run["hazard"], "long-no-lock");
        assert_eq!(run["flavour"], "multi-thread");
        run["at_once"] = serde_json::json!(1.0);
    }
    let view = async_locks::CHAPTER
        .views
        .iter()
        .find(|v| v.experiment() == "hazards" && v.name() == "hazards")
        .unwrap();
    let out = view.render(&r).unwrap();
    let may = "<span class=\"cow-may-wrap\">; </span>";
    assert!(
        out.contains(&format!(
            "{may}the control ran in turn or over its time in 2 of 6 rounds{may}the other 4 alone: "
        )),
        "{out}"
    );
}
