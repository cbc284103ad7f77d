//! "How we measure"'s worked example of the verdict rule, from this build's own
//! results: one pair of arms measured in the same rounds, its rounds side by side,
//! each arm's median and interval, the per-round ratio with its interval, and what the
//! rule says of the pair judged on its pairs and judged apart.

use crate::appendix::summary_provenance;
use harness::Record;
use harness::cells;
use harness::render::{
    Better, Table, comparison_sentence, confidence_text, escape_html, fmt_estimate,
    fmt_ratio_estimate, sig3,
};
use harness::stats::{Comparison, Estimate};

/// The pair the example shows: of every two readings of one record (no A/A twin, same
/// unit, at least six rounds with both), one the rule decides on its pairs but not on
/// the two intervals (the case the pairing is for), else a decided one, else any; the
/// fewest rounds first, so the table stays short.
fn pick(records: &[Record]) -> Option<(&Record, String, String, Comparison)> {
    let mut best: Option<(u8, u32, &Record, String, String, Comparison)> = None;
    for r in records {
        let keys: Vec<&str> = r
            .keys()
            .into_iter()
            .filter(|k| !k.ends_with(harness::AA_TWIN))
            .collect();
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                if r.unit(a) != r.unit(b) {
                    continue;
                }
                let Some(c) = r.compare(a, b) else { continue };
                if c.rounds() < 6 {
                    continue;
                }
                let unpaired = Comparison::unpaired(c.a, c.b);
                let rank = match (c.is_clear(), unpaired.is_clear()) {
                    (true, false) => 0,
                    (true, true) => 1,
                    _ => 2,
                };
                let better = best
                    .as_ref()
                    .is_none_or(|(br, bn, ..)| (rank, c.rounds()) < (*br, *bn));
                if better {
                    best = Some((rank, c.rounds(), r, a.to_string(), b.to_string(), c));
                }
            }
        }
    }
    best.map(|(_, _, r, a, b, c)| (r, a, b, c))
}

/// The live worked example (Markdown), or a sentence saying there is no pair yet.
pub fn view(records: &[Record]) -> String {
    let Some((r, a, b, c)) = pick(records) else {
        return "No result of this build has two readings of the same rounds yet, so there is no \
                worked example to show.\n"
            .into();
    };
    let unit = r.unit(&a).unwrap_or(harness::Unit::Nanos);
    let (an, bn) = (escape_html(&a), escape_html(&b));
    let mut t = Table::new([
        "round (in the order run)".to_string(),
        format!("A: {an}"),
        format!("B: {bn}"),
        "A ÷ B".to_string(),
    ]);
    let (va, vb) = (r.values(&a), r.values(&b));
    let mut rounds: Vec<u32> = va.iter().map(|(i, _)| *i).collect();
    rounds.sort_unstable();
    for i in rounds {
        let (Some(x), Some(y)) = (
            va.iter().find(|(j, _)| *j == i).map(|(_, v)| *v),
            vb.iter().find(|(j, _)| *j == i).map(|(_, v)| *v),
        ) else {
            continue;
        };
        t.row(cells![
            (i + 1).to_string(),
            unit.format(x),
            unit.format(y),
            format!("{}×", sig3(x / y)),
        ]);
    }
    let unpaired = Comparison::unpaired(c.a, c.b);
    let est = |e: &Estimate| fmt_estimate(e, unit);
    format!(
        "Result: [{chapter}/{experiment}](./{chapter}.md), readings A = {an} and B = {bn}.\n\n\
         {table}\n\
         - Each arm's median over its rounds, with its {conf} interval: A {ea}, B {eb}.\n\
         - The median of the per-round ratios A ÷ B, with its {conf} interval from the same \
         order statistics: {ratio}.\n\
         - **Judged on its pairs**, as the book judges two arms of the same rounds: {paired}.\n\
         - Judged apart, on the two arms' intervals alone, as the book judges figures from \
         different runs or machines: {apart}.\n\n{prov}",
        chapter = escape_html(&r.chapter),
        experiment = escape_html(&r.experiment),
        table = t.to_markdown(),
        conf = confidence_text(),
        ea = est(&c.a),
        eb = est(&c.b),
        ratio = fmt_ratio_estimate(&c.ratio),
        paired = comparison_sentence("A", "B", &c, Better::Lower),
        apart = comparison_sentence("A", "B", &unpaired, Better::Lower),
        prov = summary_provenance(&[r]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::record::{Reading, Unit};

    #[test]
    fn the_example_prefers_a_pair_only_the_pairing_resolves() {
        // Noisy rounds; "slow" is 1.5× "fast" in every round, "other" is unrelated.
        let fast = [3.0, 9.0, 4.0, 14.0, 7.0, 5.0, 8.0, 12.0, 6.5];
        let rounds = fast
            .iter()
            .enumerate()
            .map(|(i, x)| {
                vec![
                    Reading::new("fast", Unit::Nanos, *x),
                    Reading::new("slow", Unit::Nanos, x * 1.5),
                    Reading::new("other", Unit::Nanos, 5.0 + i as f64),
                ]
            })
            .collect();
        let rec = harness::fixture::record_of_readings("ch", "exp", rounds);
        let md = view(&[rec]);
        assert!(md.contains("A = fast and B = slow"), "{md}");
        assert!(
            md.contains("**Judged on its pairs**, as the book judges two arms of the same rounds: A is faster than B"),
            "{md}"
        );
        assert!(md.contains("faster in 9 of 9 rounds"), "{md}");
        assert!(
            md.contains("different runs or machines: there is no clear difference"),
            "{md}"
        );
        assert!(view(&[]).starts_with("No result"));
    }
}
