//! The one place a verdict becomes words: sentences and table cells for a
//! [`Comparison`], the A/A self-check's sentence, and the decision table's cells for a
//! finding's [`Evidence`]. `book-tests/tests/verdicts.rs` checks that no other file
//! writes verdict words.

use crate::finding::Evidence;
use crate::fmt::*;
use crate::record::Unit;
use crate::stats::{Better, Comparison, Estimate, Pairing, VERDICT_MIN_ROUNDS, Verdict};

/// The table cell for a comparison the verdict rule leaves undecided: "no clear
/// difference" (intervals overlap) or "about the same (within 5 %)"; `None` for a
/// difference the page may state.
pub fn undecided_text(v: Verdict) -> Option<String> {
    match v {
        Verdict::Unclear => Some("no clear difference".into()),
        Verdict::Same => Some(format!("about the same (within {})", threshold_text())),
        Verdict::Below | Verdict::Above => None,
    }
}

/// The table cell for a difference the rule finds between figures measured apart
/// (two runs, two machines): "beyond both intervals and the 5 % threshold".
pub fn apart_text() -> String {
    format!(
        "beyond both intervals and the {} threshold",
        threshold_text()
    )
}

/// The A/A self-check every chapter ends its findings with, in one wording: `what` ran
/// twice in every round as two arms of the same code, shown as `first` and `second`
/// (each a figure as the chapter writes it), then the verdict rule's sentence on the
/// pair, and what a clear difference between identical arms means. `quantity` names
/// what is compared where the arm alone would not say it (a rate: "the first arm's
/// rate was higher"); a time needs none ("the first arm was slower").
pub fn aa_sentence(
    what: &str,
    quantity: Option<&str>,
    first: &str,
    second: &str,
    c: &Comparison,
    better: Better,
) -> String {
    let (an, bn) = match quantity {
        Some(q) => (format!("the first arm's {q}"), "the second's".to_string()),
        None => ("the first arm".to_string(), "the second".to_string()),
    };
    let verdict = comparison_sentence(&an, &bn, c, better);
    let meaning = if c.is_clear() {
        " — a false verdict on identical code, so this run's other verdicts deserve less \
         trust (How we measure counts how often the rule makes one)"
    } else {
        ", as it should for identical code"
    };
    format!(
        "Self-check (A/A): {what} ran twice in every round, as two arms of the same code: \
         {first} and {second}; {verdict}{meaning}"
    )
}

/// The one place a verdict becomes words. Paired comparisons say how many rounds put
/// `a` on each side of `b`; unpaired ones say they were judged on two intervals.
///
/// - a difference: "a is slower than b: it takes 2.11× (1.40–5.35) as long (slower in
///   9 of 9 rounds)";
/// - the whole interval within the threshold: "a and b are about the same (within
///   5 %): they differ by only 2.0 %";
/// - not resolved: "there is no clear difference between a and b (…)", saying why.
pub fn comparison_sentence(an: &str, bn: &str, c: &Comparison, better: Better) -> String {
    let short = if c.confidence() + 1e-9 < crate::stats::CONFIDENCE {
        format!(
            " (interval at only {:.0} %, from {} rounds)",
            c.confidence().max(0.0) * 100.0,
            c.rounds()
        )
    } else {
        String::new()
    };
    let (worse, better_word) = match better {
        Better::Lower => ("slower", "faster"),
        Better::Higher => ("higher", "lower"),
        Better::Smaller => ("larger", "smaller"),
    };
    let counts = |word: &str, n: Option<u32>| match (c.pairing, n) {
        (Pairing::Paired { rounds, .. }, Some(k)) => format!(" ({word} in {k} of {rounds} rounds)"),
        (Pairing::Paired { .. }, None) => String::new(),
        (Pairing::Unpaired, _) => " (measured apart: judged on the two intervals)".into(),
    };
    let (above, below) = match c.pairing {
        Pairing::Paired { above, below, .. } => (above, below),
        Pairing::Unpaired => (None, None),
    };
    let ab = match c.pairing {
        Pairing::Paired { .. } => fmt_ratio_estimate(&c.ratio),
        Pairing::Unpaired => fmt_ratio(Some(c.a.median / c.b.median)).into(),
    };
    let ba = match c.pairing {
        Pairing::Paired { .. } => fmt_ratio_estimate(&c.ratio_inv),
        Pairing::Unpaired => fmt_ratio(Some(c.b.median / c.a.median)).into(),
    };
    match (c.verdict, better) {
        (Verdict::Same, _) => format!(
            "{an} and {bn} are about the same (within {}): they differ by only {} %{short}",
            threshold_text(),
            sig3(c.difference() * 100.0)
        ),
        (Verdict::Unclear, _) if c.too_few_rounds() => format!(
            "there is no clear difference between {an} and {bn} (only {} round(s) behind \
             {}; the rule needs {VERDICT_MIN_ROUNDS} independent ones)",
            c.rounds_text(),
            if c.is_paired() {
                "the pair"
            } else {
                "one of them"
            }
        ),
        (Verdict::Unclear, _) => match c.pairing {
            // Apart from 1, but neither beyond the threshold nor shown within it.
            Pairing::Paired { .. } if c.apart_but_unresolved() => format!(
                "there is no clear difference between {an} and {bn}: their per-round ratio, \
                 {}, excludes 1, but its median is within {} and its interval reaches \
                 past it{short}",
                fmt_ratio_estimate(&c.ratio),
                threshold_text()
            ),
            Pairing::Unpaired if c.apart_but_unresolved() => format!(
                "there is no clear difference between {an} and {bn} (measured apart: their \
                 intervals do not overlap, but the medians differ by only {} % and the \
                 intervals reach past {}){short}",
                sig3(c.difference() * 100.0),
                threshold_text()
            ),
            Pairing::Paired { rounds, .. } => {
                let sides = match above {
                    Some(k) => format!("; {an} was {worse} in {k} of {rounds} rounds"),
                    None => String::new(),
                };
                format!(
                    "there is no clear difference between {an} and {bn} (the {} interval of \
                     their per-round ratio, {}, holds 1{sides}){short}",
                    if short.is_empty() {
                        confidence_text()
                    } else {
                        format!("{:.0} %", c.confidence().max(0.0) * 100.0)
                    },
                    fmt_ratio_interval(&c.ratio),
                )
            }
            Pairing::Unpaired => {
                let cover = if short.is_empty() {
                    format!("their {} intervals", confidence_text())
                } else {
                    "their intervals".to_string()
                };
                format!(
                    "there is no clear difference between {an} and {bn} (measured apart, \
                     {cover} overlap){short}"
                )
            }
        },
        (Verdict::Below, Better::Lower) => format!(
            "{an} is {better_word} than {bn}: {bn} takes {ba} as long{}{short}",
            counts(better_word, below)
        ),
        (Verdict::Above, Better::Lower) => format!(
            "{an} is {worse} than {bn}: it takes {ab} as long{}{short}",
            counts(worse, above)
        ),
        (Verdict::Above, Better::Smaller) => format!(
            "{an} is {worse} than {bn}, by a factor of {ab}{}{short}",
            counts(worse, above)
        ),
        (Verdict::Below, Better::Smaller) => format!(
            "{an} is {better_word} than {bn}: {bn} is {ba} as large{}{short}",
            counts(better_word, below)
        ),
        (Verdict::Above, Better::Higher) => format!(
            "{an} is {worse} than {bn}, by a factor of {ab}{}{short}",
            counts(worse, above)
        ),
        (Verdict::Below, Better::Higher) => format!(
            "{an} is {better_word} than {bn}, by a factor of {ba}{}{short}",
            counts(better_word, below)
        ),
    }
}

/// A ratio's interval alone: `0.85–1.40×`.
pub fn fmt_ratio_interval(r: &Estimate) -> String {
    format!("{}–{}×", ratio_bound(r.lo), ratio_bound(r.hi))
}

/// The table cell for a comparison: its ratio a ÷ b with the interval (paired: the
/// rounds' own ratio) where the rule finds a difference, else what the rule says ("no
/// clear difference", "about the same (within 5 %)"). A reader never meets "no clear
/// difference" beside a ratio that says otherwise.
pub fn ratio_cell(c: &Comparison) -> Formatted {
    // Below the count the rule needs, the cell says so rather than "no clear difference".
    if c.too_few_rounds() {
        return Formatted::plain(format!(
            "too few rounds ({} of {VERDICT_MIN_ROUNDS})",
            c.rounds_text()
        ));
    }
    // Apart from 1, but its median within the threshold and its interval past it: a
    // difference shown, too small to act on and too uncertain to call the same.
    if c.is_paired() && c.apart_but_unresolved() {
        return Formatted::with_interval(
            format!(
                "apart from 1, median within {}: {}×",
                threshold_text(),
                ratio_bound(c.ratio.median)
            ),
            format!("{}–{}", ratio_bound(c.ratio.lo), ratio_bound(c.ratio.hi)),
        );
    }
    match undecided_text(c.verdict) {
        Some(t) => Formatted::plain(t),
        None if c.is_paired() => fmt_ratio_estimate(&c.ratio),
        None => Formatted::plain(fmt_ratio(Some(c.a.median / c.b.median))),
    }
}

/// One figure in two runs (measured apart, judged on the two intervals): "moved
/// ×1.22" where the rule finds a difference, else "no clear move".
pub fn move_cell(after: &Estimate, before: &Estimate) -> String {
    if Comparison::unpaired(*after, *before).is_clear() {
        format!("moved ×{}", sig3(after.median / before.median))
    } else {
        "no clear move".to_string()
    }
}

/// Whether the machine itself moved between two runs, from the system call timed
/// before every round (`after`, `before`: its estimates in the two runs).
pub fn machine_move_sentence(after: &Estimate, before: &Estimate) -> String {
    let cell = format!(
        "{} → {}",
        fmt_estimate(before, Unit::Nanos),
        fmt_estimate(after, Unit::Nanos)
    );
    if Comparison::unpaired(*after, *before).is_clear() {
        format!(
            "The machine itself moved between the runs: a system call (timed before every round) took {cell} (×{}). Figures that enter the kernel may have moved with it; intervals over the rounds of one run cannot cover a change between runs.",
            sig3(after.median / before.median)
        )
    } else {
        format!(
            "The machine itself did not clearly move: a system call (timed before every round) took {cell}."
        )
    }
}

/// The word for the winning side of a comparison: "faster", "higher", "smaller".
fn better_word(better: Better) -> &'static str {
    match better {
        Better::Lower => "faster",
        Better::Higher => "higher",
        Better::Smaller => "smaller",
    }
}

/// A figure's interval as its own cell: `41.2–75.6 µs`, with the confidence where it
/// falls short of the stated one (`(75 %)`).
pub fn interval_cell(e: &Estimate, unit: Unit) -> String {
    let short = coverage_note(e);
    format!("{}{short}", fmt_range(e.lo, e.hi, unit))
}

/// A ratio's interval as its own cell: `9.8–14.1×`.
pub fn ratio_interval_cell(e: &Estimate) -> String {
    format!("{}{}", fmt_ratio_interval(e), coverage_note(e))
}

fn coverage_note(e: &Estimate) -> String {
    if e.at_stated_confidence() {
        String::new()
    } else {
        format!(" ({:.0} %)", e.confidence.max(0.0) * 100.0)
    }
}

/// The decision table's cells for one finding's evidence: what this machine showed,
/// the interval of the figure it rests on, and how many rounds agree.
///
/// - a pair the rule decides: "spinning 12.3× faster than blocking (0.91 µs against
///   11.2 µs)", the interval of that ratio, "8 of 8 agree" (rounds on the winner's side);
/// - a pair it leaves undecided: "no clear difference (0.91 µs against 1.10 µs)" or
///   "about the same (within 5 %) (…)", the interval of a ÷ b, the rounds;
/// - a figure: "`sleep(1 ms)` 2.10 ms", its interval, its rounds;
/// - a count: "deadlocked in 3 of 3 rounds", no interval, "3 rounds".
pub fn evidence_cells(e: &Evidence, better: Better) -> [String; 3] {
    match e {
        Evidence::Pair {
            a,
            b,
            unit,
            comparison: c,
        } => {
            let (va, vb) = (unit.format(c.a.median), unit.format(c.b.median));
            let (above, below) = match c.pairing {
                Pairing::Paired { above, below, .. } => (above, below),
                Pairing::Unpaired => (None, None),
            };
            let rounds = |k: Option<u32>| match (c.pairing, k) {
                (Pairing::Paired { .. }, Some(k)) => format!("{k} of {} agree", c.rounds()),
                (Pairing::Paired { .. }, None) => format!("{} rounds", c.rounds()),
                (Pairing::Unpaired, _) => "measured apart".to_string(),
            };
            match e.favours(better) {
                Some(a_wins) => {
                    // The winner's advantage: loser ÷ winner for a time or a size,
                    // winner ÷ loser for a rate; paired, from the rounds' own ratios.
                    let a_over_b = matches!(better, Better::Higher) == a_wins;
                    let r = match (a_over_b, c.is_paired()) {
                        (true, true) => c.ratio,
                        (false, true) => c.ratio_inv,
                        (true, false) => point(c.a.median / c.b.median, c.rounds()),
                        (false, false) => point(c.b.median / c.a.median, c.rounds()),
                    };
                    // Rounds on the winner's side: a below b for a time, above for a rate.
                    let a_low = matches!(better, Better::Lower | Better::Smaller);
                    let k = if a_wins == a_low { below } else { above };
                    let (w, l, vw, vl) = if a_wins {
                        (a, b, &va, &vb)
                    } else {
                        (b, a, &vb, &va)
                    };
                    [
                        format!(
                            "{w} {}× {} than {l} ({vw} against {vl})",
                            ratio_bound(r.median),
                            better_word(better)
                        ),
                        if c.is_paired() {
                            ratio_interval_cell(&r)
                        } else {
                            "two intervals apart".to_string()
                        },
                        rounds(k),
                    ]
                }
                None => {
                    let what = if e.too_few_rounds() {
                        "too few rounds to tell".to_string()
                    } else if c.is_paired() && c.apart_but_unresolved() {
                        // Apart from 1 with its median within the threshold.
                        format!("apart from 1, median within {}", threshold_text())
                    } else {
                        undecided_text(c.verdict).unwrap_or_default()
                    };
                    [
                        // The ratio is named here, so its interval cell stays a number
                        // (a long label there would widen the table past the column).
                        if c.is_paired() {
                            // The median of per-round ratios, named so: it can fall on
                            // the other side of 1 from the two medians' ratio.
                            format!(
                                "{what}: {a} {va}, {b} {vb} ({a} ÷ {b}, median per round: {})",
                                fmt_ratio(Some(c.ratio.median))
                            )
                        } else {
                            format!("{what}: {a} {va}, {b} {vb}")
                        },
                        if c.is_paired() {
                            ratio_interval_cell(&c.ratio)
                        } else {
                            "measured apart".to_string()
                        },
                        rounds(None),
                    ]
                }
            }
        }
        Evidence::Figure {
            what,
            unit,
            estimate,
        } => [
            format!("{what} {}", unit.format(estimate.median)),
            interval_cell(estimate, *unit),
            format!("{} rounds", estimate.n),
        ],
        Evidence::Count { what, k, n } => [
            format!("{what} in {k} of {n} rounds"),
            "–".to_string(),
            format!("{n} rounds"),
        ],
    }
}

/// A ratio known only as a point (two arms measured apart).
fn point(x: f64, n: u32) -> Estimate {
    Estimate {
        median: x,
        lo: x,
        hi: x,
        confidence: crate::stats::CONFIDENCE,
        n,
        drift: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_the_intervals() {
        let fast = Estimate {
            median: 2.0,
            lo: 1.8,
            hi: 2.2,
            confidence: 0.97,
            n: 6,
            drift: None,
        };
        let slow = Estimate {
            median: 20.0,
            lo: 18.0,
            hi: 22.0,
            confidence: 0.97,
            n: 6,
            drift: None,
        };
        let s = comparison_sentence(
            "spinning",
            "blocking",
            &Comparison::unpaired(fast, slow),
            Better::Lower,
        );
        assert!(s.starts_with("spinning is faster than blocking"), "{s}");
        assert!(s.contains("10.0×"), "{s}");
        let near = Estimate {
            median: 2.1,
            lo: 1.9,
            hi: 2.4,
            confidence: 0.97,
            n: 6,
            drift: None,
        };
        let s = comparison_sentence("a", "b", &Comparison::unpaired(fast, near), Better::Lower);
        assert!(s.starts_with("there is no clear difference"), "{s}");
        let s = comparison_sentence(
            "deadline",
            "naive",
            &Comparison::unpaired(slow, fast),
            Better::Higher,
        );
        assert!(s.starts_with("deadline is higher than naive"), "{s}");
        // Apart, but 2 % apart: no verdict, whatever the intervals resolve.
        let a = Estimate {
            median: 100.0,
            lo: 99.5,
            hi: 100.5,
            confidence: 0.97,
            n: 6,
            drift: None,
        };
        let b = Estimate {
            median: 102.0,
            lo: 101.5,
            hi: 102.5,
            confidence: 0.97,
            n: 6,
            drift: None,
        };
        let s = comparison_sentence("a", "b", &Comparison::unpaired(a, b), Better::Lower);
        assert!(
            s.starts_with("a and b are about the same (within 5 %)"),
            "{s}"
        );
        assert!(!s.contains('×'), "{s}");
    }

    #[test]
    fn paired_comparisons_are_judged_and_worded_on_their_rounds() {
        // Noisy rounds whose intervals overlap, but blocking is slower in every one.
        let spin = [3.0, 9.0, 4.0, 14.0, 7.0, 5.0, 8.0, 12.0, 6.5];
        let block: Vec<f64> = spin.iter().map(|x| x * 1.5).collect();
        let c = Comparison::paired(&block, &spin).unwrap();
        let s = comparison_sentence("blocking", "spinning", &c, Better::Lower);
        assert!(s.starts_with("blocking is slower than spinning: it takes 1.50× (1.50–1.50) as long (slower in 9 of 9 rounds)"), "{s}");
        assert_eq!(ratio_cell(&c).to_string(), "1.50× (1.50–1.50)");
        // Judged apart, the same two figures are not resolved, and the page says how.
        let u = Comparison::unpaired(c.a, c.b);
        let s = comparison_sentence("blocking", "spinning", &u, Better::Lower);
        assert!(
            s.starts_with(
                "there is no clear difference between blocking and spinning (measured apart"
            ),
            "{s}"
        );
        assert_eq!(ratio_cell(&u).to_string(), "no clear difference");
        // Rounds on both sides: the sentence says how many went each way.
        let mixed = [3.3, 8.0, 4.4, 13.0, 7.7, 4.5, 8.8, 11.0, 7.0];
        let c = Comparison::paired(&mixed, &spin).unwrap();
        let s = comparison_sentence("a", "b", &c, Better::Lower);
        assert!(s.contains("holds 1; a was slower in 5 of 9 rounds"), "{s}");
    }

    /// A count that never happened favours neither arm, so its row shows the advice
    /// for that case (a review found "Never hold …" beside "in 0 of 3 rounds").
    #[test]
    fn a_count_of_nothing_chooses_the_neither_advice() {
        let advice = crate::evidence::Advice {
            a: "happened",
            b: "b",
            neither: "did not happen",
        };
        let never = Evidence::count("deadlocked", 0, 3);
        assert_eq!(
            advice.chosen(never.favours(Better::Lower)),
            "did not happen"
        );
        let once = Evidence::count("deadlocked", 1, 3);
        assert_eq!(advice.chosen(once.favours(Better::Lower)), "happened");
        let [what, _, rounds] = evidence_cells(&never, Better::Lower);
        assert_eq!(
            (what.as_str(), rounds.as_str()),
            ("deadlocked in 0 of 3 rounds", "3 rounds")
        );
    }

    /// A figure that is a difference (what a setting saved) chooses its advice only when
    /// its interval lies on one side of zero (a review found "Expect 1 ns of slack to
    /// save about this much" beside an interval from −291 to 68.3 µs).
    #[test]
    fn a_figure_whose_interval_reaches_both_sides_of_zero_chooses_neither() {
        let advice = crate::evidence::Advice {
            a: "saves this",
            b: "saves this",
            neither: "no clear saving",
        };
        let of = |v: &[f64]| {
            let e = Estimate::of_rounds(v).unwrap();
            Evidence::figure("saved", crate::Unit::Nanos, e)
        };
        let mixed = of(&[-290e3, 48e3, 49e3, 61e3, 68e3, 49e3, 61e3]);
        assert_eq!(
            advice.chosen(mixed.favours(Better::Lower)),
            "no clear saving"
        );
        let signed = of(&[29e3, 48e3, 49e3, 61e3, 68e3, 49e3, 61e3, 78e3]);
        assert_eq!(advice.chosen(signed.favours(Better::Lower)), "saves this");
        // A figure that is no difference (a time, a size) is never below zero.
        assert_eq!(of(&[0.0, 0.0, 0.0]).favours(Better::Lower), Some(true));
    }

    /// A pair with fewer rounds than the rule needs is not "no difference": it says
    /// too few rounds, and its advice is none of the finding's three (a page read
    /// "Capacity made no difference" beside a 49× ratio from 4 rounds).
    #[test]
    fn a_pair_with_too_few_rounds_gets_no_advice_of_its_own() {
        let four = Comparison::paired(&[10.0, 12.0, 30.0, 11.0], &[1.0, 2.0, 3.0, 1.5]).unwrap();
        let e = Evidence::pair("one slot", "room for all", crate::Unit::Nanos, four);
        assert!(e.too_few_rounds());
        assert_eq!(e.favours(Better::Lower), None);
        let [what, _, _] = evidence_cells(&e, Better::Lower);
        assert!(what.starts_with("too few rounds to tell"), "{what}");
        // Five rounds all on one side are still too few: 2 in 32 runs of identical arms
        // do that whatever the noise (6.25 %, over the 5 % the rule allows).
        let five = Comparison::paired(&[10.0, 12.0, 30.0, 11.0, 14.0], &[1.0, 2.0, 3.0, 1.5, 2.0])
            .unwrap();
        assert!(Evidence::pair("a", "b", crate::Unit::Nanos, five).too_few_rounds());
        let six = Comparison::paired(
            &[10.0, 12.0, 30.0, 11.0, 14.0, 9.0],
            &[1.0, 2.0, 3.0, 1.5, 2.0, 1.0],
        )
        .unwrap();
        assert!(!Evidence::pair("a", "b", crate::Unit::Nanos, six).too_few_rounds());
        assert!(!Evidence::count("deadlocked", 0, 3).too_few_rounds());
    }

    /// "About the same" needs the whole interval within the threshold; an interval apart
    /// from 1 whose median is within the threshold but whose ends reach past it (a
    /// throttles pair read 1.002–1.152, median 1.002) decides nothing, and its sentence
    /// does not claim the interval holds 1.
    #[test]
    fn about_the_same_needs_the_whole_interval_within_the_threshold() {
        let b = [1.0; 6];
        let reaching = Comparison::paired(&[1.002, 1.002, 1.002, 1.039, 1.152, 1.002], &b).unwrap();
        assert_eq!(reaching.verdict, Verdict::Unclear);
        let text = comparison_sentence("Burst", "Skip", &reaching, Better::Lower);
        assert!(text.contains("excludes 1"), "{text}");
        assert!(!text.contains("holds 1"), "{text}");
        let cell = ratio_cell(&reaching).to_string();
        // A median of 1.002 keeps its side of 1: `1.002×`, not `1.00×`.
        assert!(
            cell.starts_with("apart from 1, median within 5 %: 1.002×"),
            "{cell}"
        );
        let within = Comparison::paired(&[0.99, 1.01, 1.03, 0.98, 1.0, 1.02], &b).unwrap();
        assert_eq!(within.verdict, Verdict::Same);
        let beyond = Comparison::paired(&[1.2, 1.3, 1.25, 1.1, 1.4, 1.22], &b).unwrap();
        assert_eq!(beyond.verdict, Verdict::Above);
    }
}
