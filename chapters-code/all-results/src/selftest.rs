//! What "How we measure" shows about the method itself, live: the A/A self-test
//! (pairs of identical arms, judged by the book's verdict rule) and how often two runs
//! on this machine disagreed (what `changes` counted after each measuring session).

use crate::appendix::summary_provenance;
use crate::changes::{TwoRuns, two_runs};
use harness::Record;
use harness::aa::{self, Pair};
use harness::cells;
use harness::render::{
    Align, Table, escape_html, fmt_estimate, fmt_percent, fmt_ratio_estimate, sig3, threshold_text,
    undecided_text,
};
use std::path::Path;

/// The false-verdict rate above which a build says its verdicts are suspect.
pub const AA_LIMIT: f64 = 0.05;

fn percent(k: usize, n: usize) -> String {
    format!(
        "{} %",
        sig3(k as f64 / n.max(1) as f64 * 100.0).replace("0.00", "0")
    )
}

/// The chance that a rule which calls identical arms different at `rate` calls at
/// least `k` of `n` independent pairs different: P(X ≥ k), X ~ Binomial(n, rate).
pub fn chance_of_at_least(k: usize, n: usize, rate: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    let mut term = (1.0 - rate).powi(n as i32);
    let mut below = term;
    for i in 0..k - 1 {
        term *= (n - i) as f64 / (i + 1) as f64 * rate / (1.0 - rate);
        below += term;
    }
    (1.0 - below).clamp(0.0, 1.0)
}

/// The largest true rate of false verdicts that `k` of `n` still leaves plausible: the
/// one-sided 95 % upper bound (Clopper–Pearson), the `p` at which seeing `k` or fewer
/// has probability 5 %. Found by bisection on the binomial distribution.
pub fn upper_bound(k: usize, n: usize) -> f64 {
    if k >= n {
        return 1.0;
    }
    let at_most_k = |p: f64| -> f64 {
        // P(X ≤ k) for X ~ Binomial(n, p), term by term.
        let mut term = (1.0 - p).powi(n as i32);
        let mut sum = term;
        for i in 0..k {
            term *= (n - i) as f64 / (i + 1) as f64 * p / (1.0 - p);
            sum += term;
        }
        sum
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if at_most_k(mid) > 0.05 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Every A/A pair in the records, with the result it came from.
pub fn aa_pairs(records: &[Record]) -> Vec<(&Record, Pair)> {
    records
        .iter()
        .filter(|r| r.is_ok())
        .flat_map(|r| aa::pairs(r).into_iter().map(move |p| (r, p)))
        .collect()
}

/// The A/A self-test, as "How we measure" shows it.
pub fn aa_view(records: &[Record]) -> String {
    let pairs = aa_pairs(records);
    if pairs.is_empty() {
        return format!(
            "No result on this machine has an A/A twin yet, so this build cannot check its own verdict rule.\n\n{}",
            summary_provenance(&records.iter().collect::<Vec<_>>())
        );
    }
    let n = pairs.len();
    let called = pairs.iter().filter(|(_, p)| p.called_different()).count();
    let apart = pairs.iter().filter(|(_, p)| p.apart()).count();
    // The result and its reading share the one text column, which wraps, so that the
    // table fits the page's text column whatever the names.
    let mut t = Table::new([
        "result: reading",
        "original",
        "its twin",
        "twin ÷ original, per round",
        "the rule says",
    ]);
    for (r, p) in &pairs {
        t.row(cells![
            format!(
                "[{}/{}](./{}.md): {}",
                r.chapter,
                r.experiment,
                r.chapter,
                escape_html(&p.key)
            ),
            fmt_estimate(&p.original, p.unit),
            fmt_estimate(&p.twin, p.unit),
            fmt_ratio_estimate(&p.comparison.ratio),
            match undecided_text(p.verdict()) {
                Some(t) => t,
                None => "**different** (a false verdict)".to_string(),
            },
        ]);
    }
    // Failed only when so many false verdicts are unlikely from a rule that keeps its
    // promise: one of five pairs happens in about 1 build in 4 at 5 % (the seventh
    // review found one pair reported as a failed build).
    let chance = chance_of_at_least(called, n, AA_LIMIT);
    let verdict = if chance < 0.05 {
        format!(
            "<div class=\"cow-live cow-aa-failed\"><p><strong>This build failed its A/A self-test:</strong> the rule called {called} of {n} pairs of identical arms different. A rule that calls {} of them different would do that in {} of builds. On this machine, in this run, a verdict elsewhere in the book is more often a false one than the rule promises; the results concerned say so under their tables. Measure again (<code>make regenerate</code>) before acting on a close call.</p></div>\n\n",
            sig3(AA_LIMIT * 100.0).replace(".00", "") + " %",
            fmt_percent(chance),
        )
    } else {
        String::new()
    };
    let records_used: Vec<&Record> = {
        let mut v: Vec<&Record> = Vec::new();
        for (r, _) in &pairs {
            if !v.iter().any(|u| std::ptr::eq(*u, *r)) {
                v.push(r);
            }
        }
        v
    };
    format!(
        "{verdict}{}\n- With the book's rule for two arms of the same rounds (the interval of their per-round ratio clear of 1 **and** its median more than {} from 1), {called} of {n} A/A pairs were called different: a false-verdict rate of **{}** on this build.\n- By the ratio's interval alone, without the threshold, {apart} of {n} would have been ({}).\n- {n} pairs are a small sample: {called} of {n} is consistent with a true false-verdict rate of up to {:.0} % (one-sided 95 % bound), and a rule that misfires {} of the time {} in {} of builds. The self-test catches a rule that misfires often; it cannot show that the rule misfires less than {} of the time.\n\n{}",
        t.to_markdown(),
        threshold_text(),
        percent(called, n),
        percent(apart, n),
        upper_bound(called, n) * 100.0,
        sig3(AA_LIMIT * 100.0).replace(".00", "") + " %",
        // "At least 0 of 5" is every build: with none called, the chance of exactly that.
        if called == 0 {
            format!("calls none of {n} different")
        } else {
            format!("calls at least {called} of {n} different")
        },
        fmt_percent(if called == 0 {
            (1.0 - AA_LIMIT).powi(n as i32)
        } else {
            chance
        }),
        sig3(AA_LIMIT * 100.0).replace(".00", "") + " %",
        summary_provenance(&records_used)
    )
}

/// The last comparisons of two runs on this machine, newest first.
pub fn two_runs_view(dir: &Path) -> String {
    let all = two_runs(dir);
    let provenance = |last: &TwoRuns| {
        format!(
            "<p class=\"cow-provenance\">{}</p>\n",
            escape_html(&format!(
                "Counted by all-results measure (and make regenerate) after each measuring session that measured the whole book, on {}; the last {} comparison{} kept",
                last.machine,
                all.len(),
                if all.len() == 1 { "" } else { "s" }
            ))
        )
    };
    let Some(last) = all.last() else {
        return "No two runs have been compared on this machine yet: every `make regenerate` (or \
                `all-results measure` without `--missing`) ends by comparing its results with \
                the ones before it, and this page then shows the count.\n\n\
                <p class=\"cow-provenance\">No comparison stored on this machine.</p>\n"
            .to_string();
    };
    let mut t = Table::new([
        "compared (UTC)",
        "profiles",
        "summaries moved",
        "headline figures moved",
        "the machine (a system call): earlier run → later run",
    ])
    // Text that may wrap: lists of headline names, and whatever an older file stored.
    .align(3, Align::Left)
    .align(4, Align::Left);
    const SHOWN: usize = 5;
    // The file is data from the results folder: its text is escaped like any other.
    for r in all.iter().rev().take(SHOWN) {
        t.row(cells![
            escape_html(&r.at),
            escape_html(&r.profiles),
            format!(
                "{} of {} ({}){}",
                r.moved,
                r.summaries,
                percent(r.moved, r.summaries),
                crate::changes::too_few_text(r.too_few)
            ),
            if r.headlines_moved.is_empty() {
                format!("0 of {}", r.headlines)
            } else {
                format!(
                    "{} of {} ({})",
                    r.headlines_moved.len(),
                    r.headlines,
                    escape_html(&r.headlines_moved.join(", "))
                )
            },
            r.machine_speed
                .as_deref()
                .map_or_else(|| "not timed".to_string(), escape_html),
        ]);
    }
    let headline = |r: &TwoRuns| {
        format!(
            "**{} of {} summaries moved ({})** — intervals apart and medians more than {} % apart{} — and {} of {} headline figures{}",
            r.moved,
            r.summaries,
            percent(r.moved, r.summaries),
            r.threshold_percent,
            crate::changes::too_few_text(r.too_few),
            r.headlines_moved.len(),
            r.headlines,
            match (&r.machine_speed, r.machine_speed_moved) {
                (Some(m), true) => format!(
                    "; between them the machine itself moved (a system call, timed before every round: {}), which intervals over one run's rounds cannot cover",
                    escape_html(m)
                ),
                _ => String::new(),
            },
        ) + &r.before_sessions_min.map_or_else(String::new, |m| {
            format!(
                ". The earlier run's records finished up to {m} minutes apart, in more than \
                 one session, so the count spans those sessions too"
            )
        })
    };
    // A comparison across profiles also counts what the profiles change.
    let mut out = match all.iter().rev().find(|r| r.same_profile()) {
        Some(r) => format!(
            "The last two runs of one profile compared on this machine ({}, {}): {}.",
            escape_html(&r.at),
            escape_html(&r.profiles),
            headline(r)
        ),
        None => "No two runs of the same profile have been compared on this machine yet; \
                 only such a pair says how well an interval covers a rebuild."
            .to_string(),
    };
    if !last.same_profile() {
        out.push_str(&format!(
            " The newest comparison ({}, {}: {}) is across profiles, whose parameters differ, \
             so it counts what the profiles change as well as what the machine does.",
            escape_html(&last.at),
            escape_html(&last.profiles),
            headline(last)
        ));
    }
    // Figures measured after the last count (`make build` measures what is missing and
    // compares nothing): the count is of earlier runs, not of what the pages show.
    let newest = crate::changes::current(dir)
        .iter()
        .map(|r| (r.provenance.measured_unix, r.provenance.measured_at.clone()))
        .max();
    if let Some((_, at)) = newest.filter(|(unix, _)| *unix > last.at_unix) {
        out.push_str(&format!(
            " Not yet counted: the figures on these pages were measured after it (the \
             latest {}) by a session that measured only what was missing, which compares \
             nothing. The count says how an earlier pair of runs on this machine carried, \
             not these figures.",
            escape_html(&at)
        ));
    }
    let shown = if all.len() > SHOWN {
        format!(
            "The table shows the newest {SHOWN} of the {} comparisons kept.\n\n",
            all.len()
        )
    } else {
        String::new()
    };
    format!("{out}\n\n{}\n{shown}{}", t.to_markdown(), provenance(last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::record::{Reading, Unit};

    /// A synthetic record with `pairs` A/A pairs, of which `wrong` differ by 20 %.
    fn record(pairs: usize, wrong: usize) -> Record {
        let rounds = (0..6)
            .map(|i| {
                (0..pairs)
                    .flat_map(|p| {
                        let v = 100.0 + f64::from(i) * 0.1;
                        let twin = if p < wrong { v * 1.2 } else { v + 0.05 };
                        [
                            Reading::new(format!("v{p}"), Unit::Nanos, v),
                            Reading::new(format!("v{p}{}", harness::AA_TWIN), Unit::Nanos, twin),
                        ]
                    })
                    .collect()
            })
            .collect();
        harness::fixture::record_of_readings("short-sleeps", "calls", rounds)
    }

    #[test]
    fn the_aa_view_counts_false_verdicts_and_says_when_there_are_too_many() {
        let good = aa_view(&[record(20, 1)]);
        assert!(
            good.contains("1 of 20 A/A pairs were called different"),
            "{good}"
        );
        assert!(good.contains("**5.00 %**"), "{good}");
        assert!(!good.contains("failed its A/A"), "{good}");
        // Two of 20 happens in about a quarter of builds at 5 %: no failure; four of 20
        // in under 2 %: failed.
        let two = aa_view(&[record(20, 2), record(0, 0)]);
        assert!(!two.contains("failed its A/A"), "{two}");
        let bad = aa_view(&[record(20, 4), record(0, 0)]);
        assert!(bad.contains("failed its A/A self-test"), "{bad}");
        assert!(
            (chance_of_at_least(1, 5, 0.05) - 0.226).abs() < 0.001
                && (chance_of_at_least(2, 5, 0.05) - 0.0226).abs() < 0.0001
                && chance_of_at_least(0, 5, 0.05) == 1.0,
            "binomial tail"
        );
        assert!(bad.contains("cow-provenance"), "{bad}");
        let none = aa_view(&[record(0, 0)]);
        assert!(
            none.contains("No result on this machine has an A/A twin"),
            "{none}"
        );
        assert!(none.contains("cow-provenance"));
    }

    #[test]
    fn the_two_runs_view_shows_the_last_count() {
        let dir = tempfile::tempdir().unwrap();
        assert!(two_runs_view(dir.path()).contains("No two runs have been compared"));
        let rec = |v: f64, at| {
            let mut r = record(1, 0);
            r.provenance.measured_unix = at;
            for round in &mut r.rounds {
                round.readings[0].value *= v;
            }
            r
        };
        crate::changes::report_and_remember(&[rec(1.0, 1)], &[rec(2.0, 2)], dir.path());
        let v = two_runs_view(dir.path());
        assert!(v.contains("**1 of 2 summaries moved (50.0 %)**"), "{v}");
        assert!(v.contains("cow-provenance"), "{v}");
        assert!(v.contains("The last two runs of one profile"), "{v}");
        assert!(!v.contains("across profiles"), "{v}");
        // A newer quick → full comparison is flagged, and the headline stays with the
        // same-profile pair.
        let mut full = rec(2.0, 3);
        full.profile = harness::Profile::Full;
        crate::changes::report_and_remember(&[rec(2.0, 2)], &[full], dir.path());
        let v = two_runs_view(dir.path());
        assert!(v.contains("is across profiles"), "{v}");
        assert!(v.contains("quick → quick"), "{v}");
        // Both comparisons are shown: no line says the table holds only some.
        assert!(!v.contains("The table shows the newest"), "{v}");
        assert!(v.contains("not timed"), "{v}");
    }

    #[test]
    fn the_two_runs_view_names_a_machine_that_moved_and_escapes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = crate::changes::TwoRuns {
            at: "<script>at</script>".into(),
            at_unix: 1,
            machine: "m".into(),
            profiles: "quick → quick".into(),
            experiments: 1,
            summaries: 10,
            moved: 1,
            too_few: 3,
            before_sessions_min: Some(16),
            headlines: 2,
            headlines_moved: vec!["h".into()],
            threshold_percent: 5.0,
            machine_speed: Some("200 ns (199–201) → 250 ns (249–251), moved ×1.25 <b>".into()),
            machine_speed_moved: true,
        };
        std::fs::write(
            crate::changes::two_runs_path(dir.path()),
            serde_json::to_vec(&[run]).unwrap(),
        )
        .unwrap();
        let v = two_runs_view(dir.path());
        assert!(v.contains("the machine itself moved"), "{v}");
        assert!(v.contains("moved ×1.25"), "{v}");
        assert!(!v.contains("<script>") && !v.contains("<b>"), "{v}");
        // Summaries the rule could not judge are counted apart (ninth review: a quarter
        // of a count could never have moved).
        assert!(
            v.contains("1 of 10 (10.0 %); 3 more had under 6 independent rounds"),
            "{v}"
        );
        assert!(v.contains("finished up to 16 minutes apart"), "{v}");
        // Figures measured after the count are not in it, and the page says so.
        assert!(!v.contains("Not yet counted"), "{v}");
        let mut newer = record(1, 0);
        newer.provenance.measured_unix = 100;
        newer.provenance.measured_at = "2026-01-01 00:00:00 UTC".into();
        harness::cache::store(dir.path(), &newer).unwrap();
        let v = two_runs_view(dir.path());
        assert!(
            v.contains("Not yet counted") && v.contains("2026-01-01 00:00:00 UTC"),
            "{v}"
        );
    }

    #[test]
    fn the_aa_bound_is_clopper_pearson() {
        // 0 of n: 1 − 0.05^(1/n); 0 of 5 leaves up to 45 % plausible.
        assert!((upper_bound(0, 5) - (1.0 - 0.05f64.powf(0.2))).abs() < 1e-9);
        assert!((upper_bound(0, 5) - 0.4507).abs() < 1e-3);
        // 1 of 10: the known value 0.3942.
        assert!((upper_bound(1, 10) - 0.3942).abs() < 1e-3);
        assert_eq!(upper_bound(5, 5), 1.0);
    }
}
