//! Notes under a table: the run's own (escaped, private paths scrubbed), and what the
//! noise sensors and the spread between rounds say about a record.

use crate::fmt::*;
use crate::record::{Note, NoteKind, Record};
use crate::safe::text as escape_html;
use crate::stats::Estimate;

/// Notes as Markdown blockquotes, one per note, their text escaped.
pub fn notes(notes: &[Note]) -> String {
    notes
        .iter()
        .map(|n| format!("> **{}:** {}\n", n.kind.label(), escape_html(&n.text)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the noise sensors and the spread between rounds say about a record, as notes:
/// which rounds were disturbed, and which figures vary widely between rounds.
pub fn noise_notes(r: &Record) -> Vec<Note> {
    let mut out = Vec::new();
    let estimates = estimates(r);
    if let Some(e) = lowest_coverage_of(&estimates) {
        let text = match e.drift {
            Some(rho) => format!(
                "rounds that drifted (named below) count as {} independent ones of {}, so the interval of that figure covers {:.0} %, not {}: read differences with it with more caution.",
                crate::stats::independent_rounds(e.n, rho),
                e.n,
                e.confidence * 100.0,
                confidence_text()
            ),
            // A figure some rounds gave no value for (a run that stalled or stopped
            // before it): its own shortfall, not the budget's.
            None if (e.n as usize) < r.rounds.len() => format!(
                "a figure has a value in only {} of the {} rounds (the others gave none for it: see its table), so its interval covers {:.0} %, not {}: read differences with it with more caution.",
                e.n,
                r.rounds.len(),
                e.confidence * 100.0,
                confidence_text()
            ),
            None => format!(
                "only {} rounds fitted in the budget, so the intervals cover {:.0} %, not {}: read differences between them with more caution.",
                e.n,
                e.confidence * 100.0,
                confidence_text()
            ),
        };
        out.push(Note {
            kind: NoteKind::Noise,
            text,
        });
    }
    // Figures whose rounds drifted over the session (`stats::drift`).
    let drifted: Vec<(f64, String)> = estimates
        .iter()
        .filter_map(|(k, e)| {
            let rho = e.drift?;
            Some((
                rho,
                format!(
                    "{k} (correlation {}: {} rounds count as {})",
                    sig3(rho),
                    e.n,
                    crate::stats::independent_rounds(e.n, rho)
                ),
            ))
        })
        .collect();
    if !drifted.is_empty() {
        let one = drifted.len() == 1;
        let (listed, more) = largest_three(drifted);
        out.push(Note {
            kind: NoteKind::Noise,
            text: format!(
                "The rounds of {listed}{} drifted over the session: each round was clearly closer to the round before it than to the rest, so they are not independent, and {} wider for it. A rebuild may land further along the drift.",
                if more > 0 {
                    format!(" and {}", more_figures(more))
                } else {
                    String::new()
                },
                if one {
                    "its interval counts fewer independent rounds and is"
                } else {
                    "their intervals count fewer independent rounds and are"
                }
            ),
        });
    }
    // The result's own A/A pair, called different by the rule (see `aa`).
    out.extend(crate::aa::note(r));
    let disturbed: Vec<String> = r
        .rounds
        .iter()
        .filter_map(|x| {
            x.noise
                .disturbance()
                .map(|why| format!("round {}: {why}", x.index + 1))
        })
        .collect();
    if !disturbed.is_empty() {
        let shown: Vec<&str> = disturbed.iter().take(3).map(String::as_str).collect();
        out.push(Note {
            kind: NoteKind::Noise,
            text: format!(
                "{} of {} rounds {} disturbed ({}{}); {} included in the medians and intervals.",
                disturbed.len(),
                r.rounds.len(),
                if disturbed.len() == 1 { "was" } else { "were" },
                shown.join("; "),
                if disturbed.len() > 3 { "; …" } else { "" },
                if disturbed.len() == 1 {
                    "it is"
                } else {
                    "they are"
                }
            ),
        });
    }
    let wide: Vec<(f64, String)> = r
        .keys()
        .into_iter()
        .filter_map(|k| {
            let s = r.spread(k).filter(|s| *s >= 2.0)?;
            Some((s, format!("{k}: varies {}× between rounds", sig3(s))))
        })
        .collect();
    if !wide.is_empty() {
        let (listed, more) = largest_three(wide);
        out.push(Note {
            kind: NoteKind::Noise,
            text: format!(
                "On this machine {listed}{}. That spread is part of what the intervals describe.",
                if more > 0 {
                    format!(" (and {} by 2× or more)", more_figures(more))
                } else {
                    String::new()
                }
            ),
        });
    }
    out
}

/// Every reading's estimate over rounds, in the record's order of readings.
pub(crate) fn estimates(r: &Record) -> Vec<(&str, Estimate)> {
    r.keys()
        .into_iter()
        .filter_map(|k| Some((k, r.estimate(k)?)))
        .collect()
}

/// The three items with the largest weight, joined with "; ", and how many more there
/// are.
fn largest_three(mut items: Vec<(f64, String)>) -> (String, usize) {
    items.sort_by(|a, b| b.0.total_cmp(&a.0));
    let more = items.len().saturating_sub(3);
    let listed: Vec<String> = items.into_iter().take(3).map(|(_, t)| t).collect();
    (listed.join("; "), more)
}

/// "1 more figure", "4 more figures".
fn more_figures(n: usize) -> String {
    format!("{n} more figure{}", if n == 1 { "" } else { "s" })
}

pub(crate) fn lowest_coverage_of(estimates: &[(&str, Estimate)]) -> Option<Estimate> {
    estimates
        .iter()
        .map(|(_, e)| *e)
        .filter(|e| !e.at_stated_confidence())
        .min_by(|a, b| a.confidence.total_cmp(&b.confidence))
}
