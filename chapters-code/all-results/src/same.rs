//! One quantity, one figure: where two experiments measure the same configuration —
//! a sleep of the same length, a receiver after the same idle gap, a hop in a brigade
//! of the same size — the book pairs their figures and checks them with its verdict
//! rule. A pair the rule calls different is shown with what each run measured of its
//! context, so a reader sees the disagreement and what differed, not two numbers that
//! silently contradict each other.

use crate::appendix::summary_provenance;
use harness::cells;
use harness::render::{
    Table, escape_html, fmt_count, fmt_estimate, noise_summary, sig3, undecided_text,
};
use harness::stats::{Comparison, Estimate, Verdict};
use harness::{ReadingKey, Record, Results};

/// Two readings of the same quantity in two experiments.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The quantity, in words.
    pub what: String,
    /// `chapter/experiment` and reading key of the experiment designed to measure it.
    pub owner: (String, String),
    /// The same for the experiment that measures it again, in another context.
    pub other: (String, String),
}

/// Whether a record holds a reading under this stored key (the first one found ends
/// the search; no list of every key is built).
fn has(r: &Record, key: &str) -> bool {
    r.unit(key).is_some()
}

fn id(r: &Record) -> String {
    format!("{}/{}", r.chapter, r.experiment)
}

fn find<'a>(records: &'a [Record], chapter: &str, experiment: &str) -> Option<&'a Record> {
    records
        .iter()
        .find(|r| r.chapter == chapter && r.experiment == experiment && r.is_ok())
}

/// Every pair the records hold.
pub fn pairs(records: &[Record]) -> Vec<Pair> {
    let mut out = Vec::new();
    // A sleep of the same length: short sleeps' sweep measures how late sleeps wake;
    // the throttles' sweep measures it again, between a throttle's operations.
    if let (Some(a), Some(b)) = (
        find(records, "short-sleeps", "sweep"),
        find(records, "throttles", "sweep"),
    ) {
        for ms in throttles::experiments::SWEEP_MS {
            let theirs = throttles::experiments::SweepKey::Late(ms).stored();
            let mine = short_sleeps::experiments::SweepKey::late(
                short_sleeps::Mode::Sleep,
                ms * 1_000_000,
                0,
            )
            .stored();
            if has(a, &mine) && has(b, &theirs) {
                out.push(Pair {
                    what: format!("how late a {ms} ms `thread::sleep` wakes"),
                    owner: (id(a), mine),
                    other: (id(b), theirs),
                });
            }
        }
    }
    // A receiver after the same idle gap: the gap sweep measures the gap's effect; the
    // variants table measures every transport at one gap.
    if let (Some(a), Some(b)) = (
        find(records, "spinning-vs-sleeping", "gaps"),
        find(records, "spinning-vs-sleeping", "variants"),
    ) && let Some(gap) = b.param("gap_ms")
        && let Ok(variants) = Results::<spinning_vs_sleeping::experiments::Runs>::decode(b)
    {
        let g = number(gap);
        let mut seen = Vec::new();
        for key in variants.data().flat_map(|r| r.keys()) {
            // The gap sweep runs unpinned only: a pinned variant is another quantity
            // (placement moved a blocking median 3×), not the same one measured twice.
            if key.arm != spinning_vs_sleeping::experiments::Arm::Main
                || key.twin
                || matches!(key.detail, spinning_vs_sleeping::experiments::Detail::Placement(p) if p != spinning_vs_sleeping::Placement::Unpinned)
                || seen.contains(&key)
            {
                continue;
            }
            seen.push(key);
            let mine = key.at_gap((gap * 1_000.0).round() as u64).stored();
            if has(a, &mine) && has(b, &key.stored()) {
                out.push(Pair {
                    what: format!("a `{}` receiver after a {g} ms gap", key.label()),
                    owner: (id(b), key.stored()),
                    other: (id(a), mine),
                });
            }
        }
    }
    // A hop in a brigade of the same size: the variants table is built for it; the
    // sweep measures it again at a few sizes.
    if let (Some(a), Some(b)) = (
        find(records, "brigades", "variants"),
        find(records, "brigades", "sweep"),
    ) && let Some(tasks) = a.param("tasks")
    {
        for kind in brigades::experiments::VARIANT_KINDS {
            let mine = brigades::experiments::VariantsKey::hop(kind).stored();
            let theirs = brigades::experiments::SweepKey::PerHop(kind, tasks as usize).stored();
            if has(a, &mine) && has(b, &theirs) {
                out.push(Pair {
                    what: format!(
                        "a hop in a `{}` brigade of {} members",
                        kind.key(),
                        fmt_count(tasks as u64)
                    ),
                    owner: (id(a), mine),
                    other: (id(b), theirs),
                });
            }
        }
    }
    out
}

/// A pair's two estimates and the rule's verdict on them.
pub fn judge<'a>(
    records: &'a [Record],
    p: &Pair,
) -> Option<(&'a Record, Estimate, &'a Record, Estimate, Verdict)> {
    let rec = |id: &str| {
        records
            .iter()
            .find(|r| format!("{}/{}", r.chapter, r.experiment) == id)
    };
    let (ra, rb) = (rec(&p.owner.0)?, rec(&p.other.0)?);
    let (a, b) = (ra.estimate(&p.owner.1)?, rb.estimate(&p.other.1)?);
    Some((ra, a, rb, b, Comparison::unpaired(b, a).verdict))
}

/// The view on "How we measure": every pair, and for those the rule calls different,
/// what each run measured of its context.
pub fn view(records: &[Record]) -> String {
    let ps = pairs(records);
    let mut t = Table::new([
        "quantity: where it is designed to be measured, where again",
        "designed to measure it",
        "measured again",
        "the rule says",
    ])
    // The verdict is words, not a figure: it wraps.
    .align(3, harness::render::Align::Left);
    let mut differ = Vec::new();
    let mut unjudged = 0;
    let mut used: Vec<&Record> = Vec::new();
    for p in &ps {
        let Some((ra, a, rb, b, v)) = judge(records, p) else {
            continue;
        };
        for r in [ra, rb] {
            if !used.iter().any(|u| std::ptr::eq(*u, r)) {
                used.push(r);
            }
        }
        let unit = ra.unit(&p.owner.1).unwrap_or(harness::Unit::Nanos);
        let short = a.n.min(b.n) < harness::stats::VERDICT_MIN_ROUNDS;
        unjudged += usize::from(short && undecided_text(v).is_some());
        let said = match undecided_text(v) {
            // Not judged: the rule needs more rounds behind each side.
            Some(_) if short => format!(
                "too few rounds to judge ({} of {})",
                a.n.min(b.n),
                harness::stats::VERDICT_MIN_ROUNDS
            ),
            Some(t) => format!("{t} (measured apart: judged on the two intervals)"),
            None => {
                differ.push((p, ra, rb));
                format!("**different**: {}× — see below", sig3(b.median / a.median))
            }
        };
        // The experiments are named in the text column, which wraps, so that the two
        // number columns stay narrow enough for the text column of the page.
        t.row(cells![
            format!(
                "{}: [{}]({}.md), [{}]({}.md)",
                p.what, p.owner.0, ra.chapter, p.other.0, rb.chapter
            ),
            fmt_estimate(&a, unit),
            fmt_estimate(&b, unit),
            said,
        ]);
    }
    if t.is_empty() {
        return format!(
            "No two experiments of this build measured the same configuration.\n\n{}",
            summary_provenance(&records.iter().collect::<Vec<_>>())
        );
    }
    let mut out = t.to_markdown();
    out.push('\n');
    let n = t_len(&ps, records);
    out.push_str(&format!(
        "- By the book's rule (judged apart, on the two intervals), {} of {n} pairs read {} or {}; {} {}{}.\n",
        n - differ.len() - unjudged,
        undecided_text(Verdict::Unclear).unwrap_or_default(),
        undecided_text(Verdict::Same).unwrap_or_default(),
        differ.len(),
        if differ.len() == 1 { "differs" } else { "differ" },
        match unjudged {
            0 => String::new(),
            k => format!("; {k} had too few rounds to judge"),
        }
    ));
    for (p, ra, rb) in &differ {
        out.push_str(&format!(
            "- **{}** differs between the two experiments. They measure it inside different experiments (other variants share their rounds, with other parameters); what each run measured of its context — `{}`: {} rounds, {}; {}. `{}`: {} rounds, {}; {}.\n",
            p.what,
            p.owner.0,
            ra.rounds.len(),
            params_text(ra),
            escape_html(&noise_summary(ra)),
            p.other.0,
            rb.rounds.len(),
            params_text(rb),
            escape_html(&noise_summary(rb)),
        ));
    }
    out.push('\n');
    out.push_str(&summary_provenance(&used));
    out
}

fn t_len(ps: &[Pair], records: &[Record]) -> usize {
    ps.iter().filter(|p| judge(records, p).is_some()).count()
}

/// A parameter value as the reading keys write it: `10`, `0.5`.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn params_text(r: &Record) -> String {
    r.params
        .iter()
        .map(|p| format!("{} = {}", p.name, p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The view of the records in `$COW_SAME_DIR` (for looking at a real run).
    #[test]
    #[ignore]
    fn print_the_view_of_a_results_folder() {
        let dir = std::env::var("COW_SAME_DIR").expect("COW_SAME_DIR");
        let records = harness::cache::all_records(std::path::Path::new(&dir));
        println!("{}", view(&records));
    }
}
