//! The decision table: a chapter's findings ([`crate::finding`]) rendered from its
//! results, the same way for the chapter's opening, the guide and the appendix.
//!
//! | situation | do this | on this machine | interval | rounds |
//!
//! "Do this" is the finding's advice for the outcome the verdict rule found; the
//! figure, its interval and the rounds that agree come from [`evidence_cells`]. Under
//! the table: one line with the rule and a link to the page that explains it, then the
//! why of each row (a counter on the page, or our hypothesis), then which runs the
//! figures come from.

use crate::comparison::evidence_cells;
use crate::finding::{AnyFinding, Evidence, Why};
use crate::fmt::{confidence_text, threshold_text};
use crate::record::Record;
use crate::render::{Align, Table, escape_html};

/// The name of the table a chapter's findings render as (`table answer`).
pub const ANSWER_VIEW: &str = "answer";

/// The name of the table a chapter's threats to validity render as (`table threats`).
pub const THREATS_VIEW: &str = "threats";

/// One finding and what its result gave: the evidence, or why there is none.
pub struct Row<'a> {
    pub finding: &'a dyn AnyFinding,
    pub outcome: Result<Evidence, String>,
    /// Where the finding is explained, for the guide: `spinning-vs-sleeping.md`.
    pub link: Option<String>,
}

impl<'a> Row<'a> {
    /// The finding's evidence in `record` (`None`: no result on this machine).
    pub fn of(finding: &'a dyn AnyFinding, record: Option<&Record>) -> Row<'a> {
        let outcome = match record {
            None => Err("no result on this machine".to_string()),
            Some(r) if r.rounds.is_empty() => {
                Err(format!("the experiment {}", r.status.describe()))
            }
            Some(r) => match finding.evidence(r) {
                Ok(Some(e)) => Ok(e),
                Ok(None) => Err("the result lacks the figures it needs".to_string()),
                Err(e) => Err(format!("{e:#}")),
            },
        };
        Row {
            finding,
            outcome,
            link: None,
        }
    }

    pub fn linked(mut self, page: String) -> Row<'a> {
        self.link = Some(page);
        self
    }

    /// The advice this row's outcome supports (none when the figures are missing).
    pub fn advice(&self) -> Option<&'static str> {
        let e = self.outcome.as_ref().ok()?;
        if e.too_few_rounds() {
            return Some(crate::evidence::TOO_FEW_ROUNDS_ADVICE);
        }
        Some(
            self.finding
                .advice()
                .chosen(e.favours(self.finding.better())),
        )
    }

    /// The guide's recommendation from this row: "situation: advice. On this machine:
    /// figure (interval …; rounds …)."
    pub fn recommendation(&self) -> Option<String> {
        let e = self.outcome.as_ref().ok()?;
        let [figure, interval, rounds] = evidence_cells(e, self.finding.better());
        Some(format!(
            "{}: {}. On this machine: {figure} (interval {interval}; {rounds}).",
            self.finding.situation().trim_end_matches('.'),
            self.advice()?.trim_end_matches('.')
        ))
    }
}

/// The five columns of a decision or threats table under `headers`, one line per row:
/// the first two texts from `texts` (situation and advice, or risk and control), then
/// what the evidence shows, its interval and the rounds that agree.
fn five_columns(headers: [&str; 5], rows: &[Row], texts: impl Fn(&Row) -> [String; 2]) -> Table {
    let mut t = Table::new(headers)
        .align(0, Align::Left)
        .align(1, Align::Left)
        .align(2, Align::Left);
    for row in rows {
        let [first, second] = texts(row);
        let [figure, interval, rounds] = match &row.outcome {
            Ok(e) => evidence_cells(e, row.finding.better()),
            Err(why) => [
                format!("no figure: {}", escape_html(why)),
                "–".into(),
                "–".into(),
            ],
        };
        t.row([first, second, figure, interval, rounds]);
    }
    t
}

/// The table of rows, with the rule's footnote; the whole is the chapter's answer
/// block (`cow-answer`).
pub fn decision_table(rows: &[Row]) -> String {
    let headers = [
        "situation",
        "do this",
        "on this machine",
        "interval",
        "rounds",
    ];
    let t = five_columns(headers, rows, |row| {
        let situation = match &row.link {
            Some(page) => format!("{} ([chapter]({page}))", row.finding.situation()),
            None => row.finding.situation().to_string(),
        };
        let advice = row.advice().unwrap_or("–").to_string();
        [situation, advice]
    });
    format!(
        "<div class=\"cow-live cow-answer\">\n\n{}\n{}\n\n</div>\n",
        t.to_markdown(),
        rule_footnote()
    )
}

/// The one line under every decision table: how a row is decided.
pub fn rule_footnote() -> String {
    format!(
        "<p class=\"cow-rule\">A row names a winner only when {} or more rounds measured \
         both arms, their per-round ratio's interval excludes 1, and the gap exceeds {}; \
         \"about the same\" means the whole interval lies within {}. Intervals cover {} \
         unless a cell says less. The × is the median of per-round ratios. <a \
         href=\"how-we-measure.html#verdicts\">How we measure</a> explains the rule.</p>",
        crate::stats::VERDICT_MIN_ROUNDS,
        threshold_text(),
        threshold_text(),
        confidence_text(),
    )
}

/// Why each row comes out as it does: a counter on the page, or our hypothesis.
pub fn whys(rows: &[Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let text = match r.finding.why() {
                Why::Counter(t) => t.to_string(),
                Why::Hypothesis(t) => format!("*Our hypothesis:* {t}"),
            };
            (!text.trim().is_empty() && text != "*Our hypothesis:* ")
                .then(|| format!("- **{}:** {}", r.finding.situation(), text))
        })
        .collect();
    if items.is_empty() {
        return String::new();
    }
    format!(
        "<details class=\"cow-why\"><summary>Why, row by row</summary>\n\n{}\n\n</details>\n",
        items.join("\n")
    )
}

/// One short line for the runs a table's figures come from (profile, rounds, when);
/// each run's full record is under its own table further down the chapter.
pub fn provenance_of(used: &[&Record]) -> String {
    if used.is_empty() {
        return "<p class=\"cow-provenance\">No result of this machine's yet.</p>\n".into();
    }
    let names: Vec<String> = used
        .iter()
        .map(|r| format!("{}/{}", r.chapter, r.experiment))
        .collect();
    let mut profiles: Vec<&str> = used.iter().map(|r| r.profile.name()).collect();
    profiles.sort();
    profiles.dedup();
    let rounds = used.iter().map(|r| r.rounds.len());
    let (lo, hi) = (rounds.clone().min().unwrap_or(0), rounds.max().unwrap_or(0));
    let rounds = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    };
    let latest = used
        .iter()
        .max_by_key(|r| r.provenance.measured_unix)
        .map(|r| r.provenance.measured_at.as_str())
        .unwrap_or_default();
    format!(
        "<p class=\"cow-provenance\">From {}: {} profile, {rounds} rounds, up to {}.</p>\n",
        escape_html(&names.join(", ")),
        escape_html(&profiles.join("/")),
        escape_html(latest)
    )
}

/// The rows of a chapter's findings (`threats`: its threats to validity instead), each
/// read from the record of its experiment, with the records used.
fn chapter_rows<'a>(
    findings: &[&'a dyn AnyFinding],
    records: &'a [Record],
    threats: bool,
) -> (Vec<Row<'a>>, Vec<&'a Record>) {
    let mut rows = Vec::new();
    let mut used: Vec<&Record> = Vec::new();
    for f in findings.iter().filter(|f| f.is_threat() == threats) {
        let record = records.iter().find(|r| r.experiment == f.experiment());
        if let Some(r) = record
            && !used.iter().any(|u| std::ptr::eq(*u, r))
        {
            used.push(r);
        }
        rows.push(Row::of(*f, record));
    }
    (rows, used)
}

/// A chapter's answer: its findings, each read from the record of its experiment
/// (`records`: the chapter's results; a finding whose experiment has none says so).
pub fn chapter_answer(findings: &[&dyn AnyFinding], records: &[Record]) -> String {
    let (rows, used) = chapter_rows(findings, records, false);
    format!(
        "{}\n{}\n{}",
        decision_table(&rows),
        whys(&rows),
        provenance_of(&used)
    )
}

/// A chapter's threats to validity, from its findings marked as threats
/// ([`crate::finding::Finding::threat`]): what could make a figure wrong, what the
/// chapter does about it, and the figures before and after that control, judged by the
/// same rule as every comparison.
pub fn chapter_threats(findings: &[&dyn AnyFinding], records: &[Record]) -> String {
    let (rows, used) = chapter_rows(findings, records, true);
    let headers = [
        "what could make a figure wrong",
        "what this chapter does",
        "before and after, on this machine",
        "interval",
        "rounds",
    ];
    let t = five_columns(headers, &rows, |row| {
        [
            row.finding.situation().into(),
            row.finding.advice().a.into(),
        ]
    });
    format!(
        "<div class=\"cow-threats\">\n\n{}\n</div>\n\n{}",
        t.to_markdown(),
        provenance_of(&used)
    )
}
