//! Two machines, or two runs, side by side: `all-results compare A.json B.json` puts
//! every headline figure of A beside B's, with the ratio B ÷ A and whether the
//! difference lies beyond both intervals and the practical threshold. The files are what `make publish` writes
//! (`cost-of-waiting-results.json`) or `all-results json` prints.

use crate::Bundle;
use crate::changes::moved;
use harness::Figure;
use harness::cells;
use harness::render::{
    Formatted, Table, apart_text, escape_html, fmt_estimate, sig3, threshold_text, undecided_text,
};
use harness::stats::{Comparison, Verdict};
use std::collections::{HashMap, HashSet};

/// One headline figure in both files.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub a: Option<Figure>,
    pub b: Option<Figure>,
}

impl Row {
    /// B ÷ A of the medians, with the widest ratio the two intervals allow.
    pub fn ratio(&self) -> Option<(f64, f64, f64)> {
        let (a, b) = (self.a.as_ref()?, self.b.as_ref()?);
        (a.unit == b.unit && a.median > 0.0 && a.lo > 0.0 && a.hi > 0.0)
            .then(|| (b.median / a.median, b.lo / a.hi, b.hi / a.lo))
    }

    /// Whether the difference lies beyond both intervals and the practical threshold.
    pub fn differs(&self) -> Option<bool> {
        let (a, b) = (self.a.as_ref()?, self.b.as_ref()?);
        if a.unit != b.unit {
            return None;
        }
        Some(moved(&b.estimate(), &a.estimate()))
    }

    /// Whether the intervals are apart but the medians within the threshold.
    fn resolved_but_small(&self) -> bool {
        match (&self.a, &self.b) {
            (Some(a), Some(b)) if a.unit == b.unit => {
                Comparison::unpaired(b.estimate(), a.estimate()).verdict == Verdict::Same
            }
            _ => false,
        }
    }

    /// The verdict cell: figures measured with other parameters are not compared.
    pub fn difference(&self) -> String {
        let (Some(a), Some(b)) = (&self.a, &self.b) else {
            return "only in one file".into();
        };
        // A size is no time (issue 35, item 15: "68.8 KiB / 70.5 µs, 1.00×").
        if a.unit != b.unit {
            return format!(
                "not comparable: other units ({} / {})",
                a.unit.name(),
                b.unit.name()
            );
        }
        if a.params != b.params {
            let show = |f: &Figure| {
                f.params
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return format!(
                "not comparable: other parameters ({} / {})",
                show(a),
                show(b)
            );
        }
        let profiles = if a.profile == b.profile {
            String::new()
        } else {
            format!(" ({} / {} profile)", a.profile, b.profile)
        };
        match self.differs() {
            Some(true) => format!("{}{profiles}", apart_text()),
            _ if self.resolved_but_small() => {
                format!(
                    "{}{profiles}",
                    undecided_text(Verdict::Same).unwrap_or_default()
                )
            }
            _ => format!(
                "{}{profiles}",
                undecided_text(Verdict::Unclear).unwrap_or_default()
            ),
        }
    }
}

/// The figures of both files, in A's order, then those only B has. Matched by name
/// through a hash map: linear in the size of the files (a file that names a figure
/// twice counts its first).
pub fn rows(a: &Bundle, b: &Bundle) -> Vec<Row> {
    fn index(bundle: &Bundle) -> HashMap<&str, &Figure> {
        let mut m = HashMap::with_capacity(bundle.figures.len());
        for f in &bundle.figures {
            m.entry(f.name.as_str()).or_insert(f);
        }
        m
    }
    let (in_a, in_b) = (index(a), index(b));
    let mut seen: HashSet<&str> = HashSet::with_capacity(in_a.len() + in_b.len());
    let names = a
        .figures
        .iter()
        .chain(&b.figures)
        .map(|f| f.name.as_str())
        .filter(|n| seen.insert(n));
    names
        .map(|n| Row {
            name: n.to_string(),
            a: in_a.get(n).map(|f| (*f).clone()),
            b: in_b.get(n).map(|f| (*f).clone()),
        })
        .collect()
}

/// The comparison as Markdown: both machine lines, then one row per headline figure.
/// Everything from the files (names, machines, dates) is escaped text: no markup, no
/// link, no terminal control character comes through.
pub fn markdown(a: &Bundle, b: &Bundle, a_name: &str, b_name: &str) -> String {
    let mut t = Table::new(["figure", "A", "B", "B ÷ A", "difference"]);
    for row in rows(a, b) {
        let cell = |f: &Option<Figure>| {
            f.as_ref()
                .map_or_else(|| "–".into(), |f| fmt_estimate(&f.estimate(), f.unit))
        };
        let ratio = row.ratio().map_or_else(
            || Formatted::plain("–"),
            |(m, lo, hi)| {
                Formatted::with_interval(
                    format!("{}×", sig3(m)),
                    format!("{}–{}", sig3(lo), sig3(hi)),
                )
            },
        );
        t.row(cells![
            format!("<code>{}</code>", escape_html(&row.name)),
            cell(&row.a),
            cell(&row.b),
            ratio,
            escape_html(&row.difference()),
        ]);
    }
    format!(
        "- **A** ({}): {} — {} figures, generated {}\n- **B** ({}): {} — {} figures, generated {}\n\n{}\n\
         Each figure is a median over rounds with its interval (95 %, or less with fewer rounds). *B ÷ A* is the ratio of the \
         medians, in brackets the widest ratio the two intervals allow; the difference is called \
         clear only when the two intervals do not overlap and the medians differ by more than \
         the practical threshold ({}; two intervals whose every value lies within it of every \
         value of the other read *about the same*), and figures measured with other parameters \
         are not compared.\n",
        escape_html(a_name),
        escape_html(&a.machine),
        a.figures.len(),
        escape_html(&a.generated_at),
        escape_html(b_name),
        escape_html(&b.machine),
        b.figures.len(),
        escape_html(&b.generated_at),
        t.to_plain_markdown(),
        threshold_text()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::{Profile, Unit};

    fn figure(name: &str, median: f64, lo: f64, hi: f64) -> Figure {
        Figure {
            chapter: "ch".into(),
            name: name.into(),
            unit: Unit::Nanos,
            median,
            lo,
            hi,
            confidence: 0.97,
            rounds: 6,
            drift: None,
            params: Default::default(),
            profile: Profile::Quick,
            measured_at: "now".into(),
            machine: "m".into(),
            shown: String::new(),
        }
    }

    fn bundle(figures: Vec<Figure>) -> Bundle {
        Bundle {
            format: crate::BUNDLE_FORMAT.into(),
            version: crate::BUNDLE_VERSION,
            machine: "a machine".into(),
            generated_at: "today".into(),
            figures,
            records: vec![],
        }
    }

    #[test]
    fn a_file_against_itself_shows_no_difference() {
        let a = bundle(vec![
            figure("x", 10.0, 9.0, 11.0),
            figure("y", 5.0, 4.0, 6.0),
        ]);
        let md = markdown(&a, &a, "a.json", "a.json");
        assert_eq!(md.matches("1.00×").count(), 2, "{md}");
        assert_eq!(md.matches("no clear difference").count(), 2, "{md}");
        assert!(!md.contains("beyond both"));
    }

    /// The sixth review: a figure whose own interval is within the threshold (a rate
    /// held to 0.1 %) reads *about the same* against itself, in the terminal as on the
    /// Compare page (`compare.js` ports the same rule), and the page says so.
    #[test]
    fn a_narrow_figure_against_itself_is_about_the_same() {
        let a = bundle(vec![
            figure("wide", 10.0, 9.0, 11.0),
            figure("narrow", 10_000.0, 9_990.0, 10_000.0),
        ]);
        let md = markdown(&a, &a, "a.json", "a.json");
        assert_eq!(md.matches("1.00×").count(), 2, "{md}");
        assert_eq!(md.matches("no clear difference").count(), 1, "{md}");
        assert_eq!(md.matches("about the same (within 5 %)").count(), 1, "{md}");
        let page = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src/compare-machines.md"),
        )
        .unwrap();
        assert!(
            page.contains("*no clear difference*") && page.contains("*about the same*"),
            "Compare machines should say what a file against itself reads"
        );
    }

    #[test]
    fn differences_beyond_both_intervals_are_called() {
        let a = bundle(vec![
            figure("x", 10.0, 9.0, 11.0),
            figure("only-a", 1.0, 1.0, 1.0),
        ]);
        let b = bundle(vec![
            figure("x", 20.0, 18.0, 22.0),
            figure("only-b", 1.0, 1.0, 1.0),
        ]);
        let r = rows(&a, &b);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].differs(), Some(true));
        let (m, lo, hi) = r[0].ratio().unwrap();
        assert!(
            (m - 2.0).abs() < 1e-12
                && (lo - 18.0 / 11.0).abs() < 1e-12
                && (hi - 22.0 / 9.0).abs() < 1e-12
        );
        assert_eq!(r[1].differs(), None);
        let md = markdown(&a, &b, "a", "b");
        assert!(
            md.contains("beyond both intervals") && md.contains("only in one file"),
            "{md}"
        );
        // Intervals apart, medians 2 % apart: about the same.
        let c = bundle(vec![figure("x", 10.2, 10.15, 10.25)]);
        let d = bundle(vec![figure("x", 10.0, 9.95, 10.05)]);
        let md = markdown(&d, &c, "d", "c");
        assert!(md.contains("about the same (within 5 %)"), "{md}");
        // Other parameters: shown, not compared.
        let mut c = figure("x", 20.0, 18.0, 22.0);
        c.params.insert("tasks".into(), serde_json::json!(500));
        let md = markdown(&a, &bundle(vec![c]), "a", "c");
        assert!(
            md.contains("not comparable: other parameters ( / tasks = 500)"),
            "{md}"
        );
    }

    /// Issue 35, item 15: a figure in bytes was compared with one in nanoseconds
    /// ("68.8 KiB / 70.5 µs, 1.00×, no clear difference").
    #[test]
    fn figures_in_other_units_are_not_compared() {
        let a = bundle(vec![figure("x", 70_500.0, 70_000.0, 71_000.0)]);
        let mut bytes = figure("x", 70_450.0, 70_000.0, 71_000.0);
        bytes.unit = Unit::Bytes;
        let b = bundle(vec![bytes]);
        let r = rows(&a, &b);
        assert_eq!(r[0].ratio(), None);
        assert_eq!(r[0].differs(), None);
        let md = markdown(&a, &b, "a", "b");
        assert!(md.contains("not comparable: other units"), "{md}");
        assert!(
            !md.contains("1.00×") && !md.contains("no clear difference"),
            "{md}"
        );
    }

    #[test]
    fn files_of_other_versions_are_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        std::fs::write(&old, r#"{"book": "The Cost of Waiting", "results": []}"#).unwrap();
        let e = Bundle::read(&old).unwrap_err().to_string();
        assert!(
            e.contains("older version") && e.contains("make publish"),
            "{e}"
        );
        let newer = dir.path().join("newer.json");
        std::fs::write(
            &newer,
            r#"{"format": "cost-of-waiting-results", "version": 9}"#,
        )
        .unwrap();
        let e = Bundle::read(&newer).unwrap_err().to_string();
        assert!(e.contains("format 9"), "{e}");
        let other = dir.path().join("other.json");
        std::fs::write(&other, r#"[1, 2]"#).unwrap();
        assert!(
            Bundle::read(&other)
                .unwrap_err()
                .to_string()
                .contains("not a results file")
        );
        let good = dir.path().join("good.json");
        let b = bundle(vec![figure("x", 1.0, 1.0, 1.0)]);
        std::fs::write(&good, serde_json::to_string(&b).unwrap()).unwrap();
        assert_eq!(Bundle::read(&good).unwrap().figures.len(), 1);
    }
}
