//! A view's Markdown, put together: the table or plot, its notes and its provenance
//! line (`render_view`), and everything a view needs to write one, re-exported from
//! the modules that own each output: `comparison` (verdicts), `table`, `tails`,
//! `notes`, `provenance`, `fmt` (numbers).

pub use crate::comparison::*;
pub use crate::fmt::*;
pub use crate::machine::machine_line;
pub use crate::notes::*;
pub use crate::privacy::scrub;
pub use crate::provenance::*;
pub use crate::stats::Better;
pub use crate::table::*;
pub use crate::tails::*;

use crate::cache::Shown;
use crate::experiment::{AnyView, ViewKind};
use crate::record::{Note, NoteKind, Status};
use crate::stats::Dist;

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

/// Text for a page, from data: see [`crate::safe::text`] (HTML escaped, Markdown
/// specials made inert, no newline that could end an HTML block).
pub fn escape_html(s: &str) -> String {
    crate::safe::text(s)
}

/// A cell of a counter that only Linux gives (run-queue delay, migrations, kernel
/// stacks): as it is for a record measured by a Linux build; "Linux only" for any
/// other, whose build never reads it. Not a dash, which reads as "not measured this
/// time"; not the Linux host's figure, which Wine once showed a Windows build.
pub fn linux_only<T: From<&'static str>>(record: &crate::Record, cell: T) -> T {
    match record.provenance.machine.target_os() {
        crate::machine::TargetOs::Linux => cell,
        _ => T::from("Linux only"),
    }
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
    use crate::cells;
    use crate::stats::{Estimate, Summary};

    #[test]
    fn a_linux_only_counter_says_so_for_another_os() {
        use crate::machine::TargetOs;
        let mut r = crate::fixture::record_of_readings("c", "e", vec![]);
        r.provenance.machine.target_os = Some(TargetOs::Linux);
        assert_eq!(linux_only(&r, "1.5 µs".to_string()), "1.5 µs");
        for os in [TargetOs::Windows, TargetOs::Macos, TargetOs::Bsd] {
            r.provenance.machine.target_os = Some(os);
            assert_eq!(linux_only(&r, "–".to_string()), "Linux only");
        }
    }

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
        // Short of 95 %, the bracket says what it covers.
        assert_eq!(
            fmt_estimate(&e, Unit::Nanos).to_string(),
            "1.00 µs (990 ns–1.02 µs, 75 %)"
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
