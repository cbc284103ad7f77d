//! Markdown output: number formatting, tables, estimates with their intervals,
//! honest tail columns, notes (escaped, scrubbed of private paths), noise notes and
//! the provenance line.

pub use crate::comparison::*;
pub use crate::fmt::*;
pub use crate::machine::machine_line;
pub use crate::privacy::scrub;
pub use crate::stats::Better;

use crate::cache::Shown;
use crate::experiment::{AnyView, ViewKind};
use crate::record::{Note, NoteKind, Record, Status};
use crate::stats::{Dist, Estimate, P99_MIN_SAMPLES, P999_MIN_SAMPLES, Summary};

/// One distribution pooled over every round (`rounds`: a result's rounds' data, as
/// `Results::data` gives them); `pick` gives a round's part, or none where the round
/// lacks it. The one way chapter views pool a variant's samples across rounds.
pub fn pooled<'a, R: 'a>(
    rounds: impl IntoIterator<Item = &'a R>,
    pick: impl Fn(&'a R) -> Option<&'a Dist>,
) -> Dist {
    let mut d = Dist::new();
    for part in rounds.into_iter().filter_map(pick) {
        d.merge(part);
    }
    d
}

/// The block that opens a chapter: "On this machine", the computed sentences that
/// answer the chapter's question (each already decided by the verdict rule), and one
/// line with the write-up's own answer. Blank lines inside the `<div>` let the
/// sentences keep their Markdown (code spans, emphasis); the sentences come from the
/// chapter's code and the registry's names, never from a results file's text.
pub fn answer_block<S: AsRef<str>>(
    sentences: impl IntoIterator<Item = S>,
    writeup: &str,
) -> String {
    let mut out = String::from(
        "<div class=\"cow-live cow-answer\">\n\n**On this machine** (computed from the \
         measurements on this page when it was built):\n\n",
    );
    out.push_str(&findings(sentences));
    if !writeup.trim().is_empty() {
        out.push_str(&format!("\n*The write-up:* {}\n", writeup.trim()));
    }
    out.push_str("\n</div>\n");
    out
}

/// Findings as a Markdown list, one sentence each, capitalised and closed with a full
/// stop: what a chapter's `findings` view prints.
pub fn findings<S: AsRef<str>>(sentences: impl IntoIterator<Item = S>) -> String {
    sentences
        .into_iter()
        .map(|s| format!("- {}.\n", capitalise(s.as_ref().trim_end_matches('.'))))
        .collect()
}

/// The sentence with its first letter upper-case (a sentence that starts with code,
/// `` `pselect(0)` is … ``, is left as it is).
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A table cell: one figure or text, or several figures in one cell joined by a
/// separator (`74.4 µs (73.4–112) · 100 %`, `1.00 / 1.00`). It keeps each figure's parts,
/// so a page's table decides from them where a cell may break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    parts: Vec<Formatted>,
    separator: &'static str,
}

impl Cell {
    /// Several figures in one cell, `separator` between them (` · `, ` / `); in a page's
    /// number column the cell may break after each separator.
    pub fn join(parts: impl IntoIterator<Item = Formatted>, separator: &'static str) -> Cell {
        Cell {
            parts: parts.into_iter().collect(),
            separator,
        }
    }

    /// The cell for a page: in a number column each interval may go to a second line
    /// under its value and the cell may break after each separator; neither a value nor
    /// an interval ever breaks inside (number cells do not wrap otherwise, see
    /// `assets/css/cow.css`). A cell that starts with words ("no clear difference")
    /// wraps like words. Text and labels are left as they are.
    fn on_page(&self, numbers: bool) -> String {
        let text = self.to_string();
        if !numbers {
            return text;
        }
        if text.starts_with(char::is_alphabetic) {
            return format!("<span class=\"cow-may-wrap\">{text}</span>");
        }
        let formatted = |f: &Formatted| match &f.interval {
            Some(i) => format!(
                "{}<span class=\"cow-may-wrap\"> <span class=\"cow-interval\">({i})</span></span>",
                f.value
            ),
            None => f.value.clone(),
        };
        let separator = format!("<span class=\"cow-may-wrap\">{}</span>", self.separator);
        self.parts
            .iter()
            .map(formatted)
            .collect::<Vec<_>>()
            .join(&separator)
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(self.separator)?;
            }
            write!(f, "{part}")?;
        }
        Ok(())
    }
}

impl From<Formatted> for Cell {
    fn from(f: Formatted) -> Cell {
        Cell::join([f], "")
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Formatted::plain(s).into()
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Formatted::plain(s).into()
    }
}

/// A table row from cells of different kinds (text, [`Formatted`]s, [`Cell`]s):
/// `t.row(cells![name, fmt_estimate(&e, Unit::Nanos), ratio_cell(&c)])`.
#[macro_export]
macro_rules! cells {
    ($($cell:expr),* $(,)?) => {
        [$($crate::render::Cell::from($cell)),*]
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A GitHub-flavoured Markdown table.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// The first column is left-aligned (labels), the others right-aligned (numbers).
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        let align = (0..headers.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Table {
            headers,
            align,
            rows: Vec::new(),
        }
    }

    pub fn align(mut self, column: usize, align: Align) -> Table {
        self.align[column] = align;
        self
    }

    pub fn row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) -> &mut Table {
        let mut cells: Vec<Cell> = cells.into_iter().map(Into::into).collect();
        cells.resize(self.headers.len(), Cell::from(""));
        self.rows.push(cells);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table for a page: a number cell's interval may wrap under its value.
    pub fn to_markdown(&self) -> String {
        self.markdown(true)
    }

    /// The table for a terminal or a file read outside the book: Markdown only.
    pub fn to_plain_markdown(&self) -> String {
        self.markdown(false)
    }

    fn markdown(&self, page: bool) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(self.headers.iter().map(|h| esc(h)).collect());
        let seps: Vec<String> = self
            .align
            .iter()
            .map(|a| match a {
                Align::Left => ":---".to_string(),
                Align::Right => "---:".to_string(),
            })
            .collect();
        out.push_str(&line(seps));
        for r in &self.rows {
            let cells = r
                .iter()
                .zip(&self.align)
                .map(|(c, a)| esc(&c.on_page(page && *a == Align::Right)))
                .collect();
            out.push_str(&line(cells));
        }
        out
    }
}

/// Which tail columns a set of distributions supports: p99 only when every one has at
/// least 1,000 samples, p99.9 only from 10,000.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tails {
    pub p99: bool,
    pub p999: bool,
}

impl Tails {
    pub fn for_counts(counts: impl IntoIterator<Item = u64>) -> Tails {
        let min = counts.into_iter().min().unwrap_or(0);
        Tails {
            p99: min >= P99_MIN_SAMPLES,
            p999: min >= P999_MIN_SAMPLES,
        }
    }

    /// Only up to the p99, for a table that keeps its columns few.
    pub fn without_p999(self) -> Tails {
        Tails {
            p999: false,
            ..self
        }
    }

    /// The tail columns alone, `[p99], [p99.9], max`, for a table with columns of its
    /// own before them.
    pub fn tail_headers(self) -> Vec<&'static str> {
        let mut h = Vec::new();
        if self.p99 {
            h.push("p99");
        }
        if self.p999 {
            h.push("p99.9");
        }
        h.push("max");
        h
    }

    /// The cells for [`Tails::tail_headers`], each formatted by `fmt` ("–" for a tail the
    /// distribution does not have).
    pub fn tail_cells(self, s: &Summary, fmt: impl Fn(f64) -> String) -> Vec<String> {
        let mut c = Vec::new();
        if self.p99 {
            c.push(s.p99.map_or_else(|| "–".into(), &fmt));
        }
        if self.p999 {
            c.push(s.p999.map_or_else(|| "–".into(), &fmt));
        }
        c.push(fmt(s.max));
        c
    }

    /// Headers for [`Tails::cells`]: `n, min, [p99], [p99.9], max` (the median is the
    /// table's own column, over rounds).
    pub fn headers(self) -> Vec<&'static str> {
        let mut h = vec!["n", "min"];
        h.extend(self.tail_headers());
        h
    }

    /// The cells of a pooled distribution in nanoseconds.
    pub fn cells(self, s: &Summary) -> Vec<String> {
        let mut c = vec![fmt_count(s.n), fmt_ns(s.min)];
        c.extend(self.tail_cells(s, fmt_ns));
        c
    }
}

/// Text for a page, from data: see [`crate::safe::text`] (HTML escaped, Markdown
/// specials made inert, no newline that could end an HTML block).
pub fn escape_html(s: &str) -> String {
    crate::safe::text(s)
}

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
fn estimates(r: &Record) -> Vec<(&str, Estimate)> {
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

/// What the record's intervals cover, for its provenance: `at 95 %`, the shortfall of
/// the lowest, or, when only figures whose rounds drifted fall short, both.
fn coverage_words(r: &Record) -> String {
    let estimates = estimates(r);
    let stated = format!("at {}", confidence_text());
    let Some(low) = lowest_coverage_of(&estimates) else {
        return stated;
    };
    let shortfall = if low.drift.is_none() && (low.n as usize) < r.rounds.len() {
        format!(
            "at {:.0} % for a figure with a value in only {} of the {} rounds",
            low.confidence * 100.0,
            low.n,
            r.rounds.len()
        )
    } else {
        coverage_shortfall(&low).unwrap_or_default()
    };
    let rest_stated = estimates
        .iter()
        .filter(|(_, e)| e.drift.is_none())
        .all(|(_, e)| e.at_stated_confidence());
    if low.drift.is_some() && rest_stated {
        format!("{stated}, and {shortfall}")
    } else {
        shortfall
    }
}

fn lowest_coverage_of(estimates: &[(&str, Estimate)]) -> Option<Estimate> {
    estimates
        .iter()
        .map(|(_, e)| *e)
        .filter(|e| !e.at_stated_confidence())
        .min_by(|a, b| a.confidence.total_cmp(&b.confidence))
}

fn mean_of<T>(rounds: &[T], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = rounds.iter().filter_map(f).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The noise part of the provenance line: averages per round.
pub fn noise_summary(r: &Record) -> String {
    let rs = &r.rounds;
    let mut parts = Vec::new();
    match mean_of(rs, |x| x.noise.steal) {
        Some(s) => parts.push(format!("steal {} %", sig3(s * 100.0))),
        None => parts.push("steal not readable".into()),
    }
    if let Some(b) = mean_of(rs, |x| x.noise.others_busy) {
        parts.push(format!("others busy {} cores", sig3(b)));
    }
    if let Some(q) = mean_of(rs, |x| x.noise.others_runnable) {
        parts.push(format!("{} other runnable", sig3(q)));
    }
    match mean_of(rs, |x| x.noise.involuntary_switches.map(|v| v as f64)) {
        Some(v) => parts.push(format!("{} involuntary switches", sig3(v))),
        None => parts.push("switches not readable".into()),
    }
    match mean_of(rs, |x| x.noise.migrations.map(|v| v as f64)) {
        Some(v) => parts.push(format!("{} migrations", sig3(v))),
        None => parts.push("migrations not readable".into()),
    }
    // The machine's own speed (`noise::syscall_probe_ns`): its median, and its range,
    // which says whether the machine changed during the session.
    let mut probes: Vec<f64> = rs.iter().filter_map(|x| x.noise.syscall_ns).collect();
    probes.sort_by(f64::total_cmp);
    if let (Some(lo), Some(hi)) = (probes.first(), probes.last()) {
        parts.push(format!(
            "a system call {} ({} over rounds)",
            fmt_ns(crate::stats::median_sorted(&probes)),
            crate::fmt::fmt_range(*lo, *hi, crate::fmt::Unit::Nanos)
        ));
    }
    let disturbed = rs
        .iter()
        .filter(|x| x.noise.disturbance().is_some())
        .count();
    format!(
        "noise per round: {}; {disturbed} of {} rounds disturbed",
        parts.join(", "),
        rs.len()
    )
}

/// What sits under every live table and plot: one short line (profile, rounds, how
/// disturbed, when) that opens, one click away, onto the full record (machine,
/// compiler, parameters, how rounds ran, noise sensors, time taken).
pub fn provenance_line(r: &Record) -> String {
    provenance_line_of(r, None)
}

/// The short part of the provenance: `quick profile · 6 rounds · 0 of 6 rounds
/// disturbed · 2026-11-24 11:30 UTC`.
pub fn provenance_summary(r: &Record) -> String {
    let disturbed = r
        .rounds
        .iter()
        .filter(|x| x.noise.disturbance().is_some())
        .count();
    let set = if r.params.iter().any(|p| !p.default) {
        " · parameters set by hand"
    } else {
        ""
    };
    format!(
        "{} profile · {} rounds · {disturbed} of {} disturbed{set} · {}",
        r.profile.name(),
        r.rounds.len(),
        r.rounds.len(),
        r.provenance.measured_at,
    )
}

/// The full record behind [`provenance_summary`].
pub fn provenance_details(r: &Record) -> String {
    let m = &r.provenance.machine;
    // Names only: the units are in `list` and in the chapter (`gap_ms = 10 ms` said it twice).
    let mut params: Vec<String> = r
        .params
        .iter()
        .map(|p| {
            let set = if p.default { "" } else { " (set)" };
            format!("{} = {}{set}", p.name, p.display())
        })
        .collect();
    params.extend(r.details.iter().map(|(k, v)| format!("{k}: {v}")));
    let params = if params.is_empty() {
        String::new()
    } else {
        format!("; parameters: {}", params.join(", "))
    };
    format!(
        "Measured on {} · {} build{params} · {} rounds, {}, intervals over rounds {} · {} · took {}",
        crate::machine_words::details_line(m),
        r.build,
        r.rounds.len(),
        r.isolation,
        coverage_words(r),
        noise_summary(r),
        fmt_ns(r.wall_s * 1e9),
    )
}

/// [`provenance_line`], opened by a label saying which result it is (for pages that
/// draw on several). One HTML block without blank lines, its text escaped, so nothing
/// in it is read as Markdown.
pub fn provenance_line_of(r: &Record, label: Option<&str>) -> String {
    let summary = match label {
        Some(l) => format!("{l}: {}", provenance_summary(r)),
        None => provenance_summary(r),
    };
    format!(
        "<div class=\"cow-provenance\"><details><summary>{}</summary><p>{}</p></details></div>\n",
        escape_html(&scrub(&summary)).replace('\n', " "),
        escape_html(&scrub(&provenance_details(r))).replace('\n', " "),
    )
}

/// The provenance of a second view of a result whose first view sits just above it on
/// the page: the run is said once, so this line only points up.
pub fn provenance_same_run(r: &Record) -> String {
    format!(
        "<p class=\"cow-provenance cow-same-run\">Same run as above ({}).</p>\n",
        escape_html(&format!(
            "{} profile, {} rounds",
            r.profile.name(),
            r.rounds.len()
        ))
    )
}

/// A view's Markdown: the table or plot, then the run's notes, the noise notes, any
/// newer failed run, then the provenance line. A failed run renders as a note.
pub fn render_view(view: &dyn AnyView, shown: &Shown) -> String {
    let record = &shown.record;
    let mut out = String::new();
    // A run that ended early still shows the rounds it finished (its notes say so).
    let body = match &record.status {
        Status::Ok => view.render(record).map_err(|e| format!("{e:#}")),
        _ if !record.rounds.is_empty() => view.render(record).map_err(|e| format!("{e:#}")),
        s => Err(format!("the experiment {}", s.describe())),
    };
    match body {
        Ok(b) if view.kind() == ViewKind::Plot => {
            out.push_str("<div class=\"cow-plot\">\n");
            out.push_str(&b);
            out.push_str("\n</div>\n\n");
        }
        Ok(b) => {
            out.push_str(&b);
            out.push('\n');
        }
        Err(e) => out.push_str(&format!(
            "> **No result for `{}` on this machine:** {}\n\n",
            view.name(),
            escape_html(&scrub(&e))
        )),
    }
    // A brief view (a second view of the same result on a page) leaves the notes to
    // the first, but never a failure.
    let mut all = if view.brief() && record.is_ok() {
        Vec::new()
    } else {
        let mut n = record.notes.clone();
        n.extend(noise_notes(record));
        n
    };
    for f in &shown.newer_failures {
        all.push(Note {
            kind: NoteKind::Info,
            text: format!(
                "the {} run of {} {}; showing the {} result of {}",
                f.profile,
                f.provenance.measured_at,
                f.status.describe(),
                record.profile,
                record.provenance.measured_at
            ),
        });
    }
    if !all.is_empty() {
        out.push_str(&notes(&all));
        out.push('\n');
    }
    if view.brief() && record.is_ok() && shown.newer_failures.is_empty() {
        out.push_str(&provenance_same_run(record));
    } else {
        out.push_str(&provenance_line(record));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_columns_come_from_one_place() {
        let s = Summary::of(&(1..=20_000).map(f64::from).collect::<Vec<_>>()).unwrap();
        let all = Tails::for_counts([s.n]);
        assert_eq!(all.tail_headers(), ["p99", "p99.9", "max"]);
        let cells = all.tail_cells(&s, |v| format!("{v}"));
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[2], "20000");
        let short = all.without_p999();
        assert_eq!(short.tail_headers(), ["p99", "max"]);
        assert_eq!(short.tail_cells(&s, |v| format!("{v}")).len(), 2);
        assert_eq!(Tails::for_counts([10]).tail_headers(), ["max"]);
        assert_eq!(all.headers(), ["n", "min", "p99", "p99.9", "max"]);
    }

    #[test]
    fn a_cell_of_several_figures_may_break_after_each_separator() {
        let page = |c: Cell| c.on_page(true);
        assert_eq!(
            page(Cell::join(
                [
                    Formatted::with_interval("74.4 µs", "73.4–112"),
                    Formatted::plain("100 %")
                ],
                " · "
            )),
            "74.4 µs<span class=\"cow-may-wrap\"> <span class=\"cow-interval\">(73.4–112)</span></span><span class=\"cow-may-wrap\"> · </span>100 %"
        );
        assert_eq!(
            page(Cell::join(["1.00".into(), "1.00".into()], " / ")),
            "1.00<span class=\"cow-may-wrap\"> / </span>1.00"
        );
        assert_eq!(page("12.5 µs".into()), "12.5 µs");
        assert_eq!(
            page("no clear difference".into()),
            "<span class=\"cow-may-wrap\">no clear difference</span>"
        );
        // Written out, outside a page's number column, a cell is its text.
        let c = Cell::join(
            [Formatted::with_interval("9.61×", "8.10–11.2"), "x".into()],
            " · ",
        );
        assert_eq!(c.on_page(false), c.to_string());
    }

    #[test]
    fn an_interval_may_wrap_under_its_value_and_nothing_else_does() {
        let mut t = Table::new(["design", "CPU per op", "note"]).align(2, Align::Left);
        t.row(cells![
            "a (b)",
            Formatted::with_interval("1.01 µs", "740 ns–1.44 µs"),
            "x (1)"
        ]);
        t.row(cells![
            "c",
            Formatted::with_interval("−436 µs", "−448 to −430"),
            Formatted::with_interval("y", "1")
        ]);
        t.row(["d", "– (our variant)", "z"]);
        t.row(["e", "1.07–1.22 ms", "w"]);
        t.row(["f", "1 (&#91;2&#93;)", "v"]);
        let md = t.to_markdown();
        assert!(md.contains(
            "| a (b) | 1.01 µs<span class=\"cow-may-wrap\"> <span class=\"cow-interval\">(740 ns–1.44 µs)</span></span> | x (1) |"
        ), "{md}");
        assert!(md.contains("−436 µs<span class=\"cow-may-wrap\"> <span class=\"cow-interval\">(−448 to −430)</span></span>"), "{md}");
        // Text is never marked, whatever it looks like (here, text from a record), nor
        // is a figure in a text column; headers are never marked.
        assert!(md.contains("| d | – (our variant) | z |"), "{md}");
        assert!(md.contains("| e | 1.07–1.22 ms | w |"), "{md}");
        assert!(md.contains("| f | 1 (&#91;2&#93;) | v |"), "{md}");
        assert!(md.contains("| y (1) |"), "{md}");
        // Outside the book, plain Markdown.
        assert!(
            t.to_plain_markdown()
                .contains("| a (b) | 1.01 µs (740 ns–1.44 µs) | x (1) |")
        );
        assert!(md.starts_with("| design | CPU per op | note |"), "{md}");
    }

    #[test]
    fn numbers_read_naturally() {
        assert_eq!(fmt_ns(412.0), "412 ns");
        assert_eq!(fmt_ns(1.5), "1.50 ns");
        assert_eq!(fmt_ns(12_345.0), "12.3 µs");
        assert_eq!(fmt_ns(45_100_000.0), "45.1 ms");
        assert_eq!(fmt_ns(1_234_000_000.0), "1.23 s");
        assert_eq!(fmt_ns(f64::NAN), "–");
        assert_eq!(fmt_count(1_000_000), "1,000,000");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_bytes(9728.0), "9.50 KiB");
        assert_eq!(fmt_ratio(Some(48.27)), "48.3×");
        assert_eq!(fmt_number(1_000_000.0, true), "1,000,000");
        assert_eq!(fmt_number(0.5, false), "0.5");
        assert_eq!(fmt_rate(9_876.0), "9,880");
        assert_eq!(fmt_rate(99_849.0), "99,800");
        assert_eq!(fmt_rate(1_234_567.0), "1.23 M");
        assert_eq!(fmt_rate(512.3), "512");
        assert_eq!(fmt_ns(999_600.0), "1.00 ms");
        assert_eq!(fmt_ns(-913_000.0), "−913 µs");
        assert_eq!(sig3(37_334.0), "37,300");
        assert_eq!(sig3(1_000.0), "1,000");
        assert_eq!(sig3(-0.5), "−0.500");
        assert_eq!(fmt_range(-924e3, -880e3, Unit::Nanos), "−924 to −880 µs");
    }

    #[test]
    fn estimates_show_their_interval_and_coverage() {
        let e = Estimate {
            median: 12_300.0,
            lo: 11_900.0,
            hi: 12_800.0,
            confidence: 0.969,
            n: 6,
            drift: None,
        };
        assert_eq!(
            fmt_estimate(&e, Unit::Nanos).to_string(),
            "12.3 µs (11.9–12.8)"
        );
        let e = Estimate {
            median: 1_000.0,
            lo: 990.0,
            hi: 1_020.0,
            confidence: 0.75,
            n: 3,
            drift: None,
        };
        assert_eq!(
            fmt_estimate(&e, Unit::Nanos).to_string(),
            "1.00 µs (990 ns–1.02 µs)"
        );
        assert_eq!(
            coverage_shortfall(&e).unwrap(),
            "at 75 % (3 rounds; 95 % needs 6)"
        );
        // Ten rounds that drifted and count as two: the shortfall says so, not "needs 6".
        let drifted = Estimate {
            confidence: 0.5,
            n: 10,
            drift: Some(0.65),
            ..e
        };
        assert_eq!(
            coverage_shortfall(&drifted).unwrap(),
            "at 50 % for a figure whose 10 rounds drifted and count as 2"
        );
        let r = Estimate {
            median: 9.61,
            lo: 8.1,
            hi: 11.2,
            confidence: 0.97,
            n: 6,
            drift: None,
        };
        assert_eq!(fmt_ratio_estimate(&r).to_string(), "9.61× (8.10–11.2)");
    }

    #[test]
    fn the_answer_block_is_a_live_block_of_sentences() {
        let html = answer_block(
            ["spinning saves 34 µs", "it costs a core."],
            "spinning won.",
        );
        assert!(
            html.starts_with("<div class=\"cow-live cow-answer\">\n\n"),
            "{html}"
        );
        assert!(
            html.contains("- Spinning saves 34 µs.\n- It costs a core.\n"),
            "{html}"
        );
        assert!(html.contains("*The write-up:* spinning won."), "{html}");
        assert!(html.ends_with("\n</div>\n"), "{html}");
    }

    #[test]
    fn findings_are_sentences() {
        assert_eq!(
            findings(["there is no clear difference.", "a is faster"]),
            "- There is no clear difference.\n- A is faster.\n"
        );
        assert_eq!(findings(Vec::<String>::new()), "");
        assert_eq!(capitalise("`pselect(0)` is"), "`pselect(0)` is");
        assert_eq!(capitalise(""), "");
    }

    #[test]
    fn tails_need_their_samples() {
        assert_eq!(
            Tails::for_counts([999, 5000]).headers(),
            vec!["n", "min", "max"]
        );
        let t = Tails::for_counts([1000, 20_000]);
        assert_eq!(t.headers(), vec!["n", "min", "p99", "max"]);
        assert!(Tails::for_counts([10_000]).p999);
    }

    #[test]
    fn markdown_table_shape() {
        let mut t = Table::new(["what", "value"]);
        t.row(["a|b", "1"]);
        t.row(["short"]);
        assert_eq!(
            t.to_markdown(),
            "| what | value |\n| :--- | ---: |\n| a\\|b | 1 |\n| short |  |\n"
        );
    }

    #[test]
    fn notes_are_escaped_and_paths_scrubbed() {
        let n = notes(&[Note {
            kind: NoteKind::Limit,
            text: "<script>x</script> & more".into(),
        }]);
        assert!(
            n.contains("&lt;script&gt;x&lt;/script&gt; &amp; more"),
            "{n}"
        );
        let s = scrub("pids.max in /sys/fs/cgroup/user.slice/user-1000.slice/pids.max is 20000");
        assert_eq!(s, "pids.max in this cgroup is 20000");
        if let Some(home) = std::env::var_os("HOME") {
            let home = home.to_string_lossy();
            if home.len() > 1 {
                assert_eq!(scrub(&format!("{home}/x")), "~/x");
            }
        }
    }
    #[test]
    fn a_figure_whose_rounds_drifted_is_named_and_the_probe_is_summed_up() {
        use crate::record::{Reading, Unit};
        // "trend" climbs round after round; "steady" does not.
        let rounds = (0..12)
            .map(|i| {
                vec![
                    Reading::new("trend", Unit::Nanos, 100.0 + f64::from(i)),
                    Reading::new("steady", Unit::Nanos, 100.0 + f64::from(i * 5 % 12)),
                ]
            })
            .collect();
        let mut r = crate::fixture::record_of_readings("ch", "exp", rounds);
        for (i, round) in r.rounds.iter_mut().enumerate() {
            round.noise.syscall_ns = Some(160.0 + i as f64);
        }
        let notes: Vec<String> = noise_notes(&r).into_iter().map(|n| n.text).collect();
        let drift = notes
            .iter()
            .find(|t| t.contains("drifted over the session"))
            .expect("a drift note");
        assert!(
            drift.contains("trend (correlation") && !drift.contains("steady"),
            "{drift}"
        );
        assert!(r.estimate("trend").unwrap().drift.is_some());
        let summary = noise_summary(&r);
        assert!(
            summary.contains("a system call 166 ns (160–171 ns over rounds)"),
            "{summary}"
        );
    }
}
