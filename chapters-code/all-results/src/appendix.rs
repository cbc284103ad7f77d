//! The appendix page's Markdown: an overview of every experiment, the headline figures,
//! one table per experiment with every reading's median over rounds, and the whole run
//! as one JSON download.

use base64::Engine as _;
use harness::cache::Shown;
use harness::cells;
use harness::render::{
    Align, Table, escape_html, fmt_count, fmt_estimate, fmt_ns, fmt_percent, machine_line,
    noise_notes, notes, provenance_line, sig3,
};
use harness::{Chapter, Figure, Record};

fn status_text(r: &Record) -> String {
    match &r.status {
        harness::record::Status::Ok => "ok".into(),
        s => s.describe(),
    }
}

/// The registry's own names of a record's chapter and experiment, if it has both.
fn registry_names(r: &Record) -> Option<(&'static str, &'static str)> {
    let ch = crate::chapter(&r.chapter)?;
    let exp = ch.experiment(&r.experiment)?;
    Some((ch.name, exp.name()))
}

/// One row per experiment: how it ended, in which profile, with how many rounds.
pub fn overview(shown: &[Shown]) -> String {
    let mut t = Table::new([
        "chapter",
        "experiment",
        "status",
        "profile",
        "rounds",
        "took",
    ])
    .align(1, Align::Left)
    .align(2, Align::Left)
    .align(3, Align::Left);
    for s in shown {
        let r = &s.record;
        // Names in links and ids come from the registry, never from a record.
        let Some((chapter, experiment)) = registry_names(r) else {
            continue;
        };
        t.row(cells![
            format!("[{chapter}](./{chapter}.md)"),
            format!("[{experiment}](#{chapter}-{experiment})"),
            escape_html(&status_text(r)),
            r.profile.name().to_string(),
            fmt_count(r.rounds.len() as u64),
            fmt_ns(r.wall_s * 1e9),
        ]);
    }
    let records: Vec<&Record> = shown.iter().map(|s| &s.record).collect();
    let mut out = t.to_markdown();
    let machines: std::collections::BTreeSet<String> = records
        .iter()
        .map(|r| machine_line(&r.provenance.machine))
        .collect();
    out.push('\n');
    if machines.len() == 1 {
        out.push_str(&format!(
            "All {} results come from one machine: {}.\n",
            records.len(),
            escape_html(machines.iter().next().expect("one"))
        ));
    } else {
        out.push_str(&format!(
            "These results come from {} different machine descriptions — compare with care:\n\n",
            machines.len()
        ));
        for m in &machines {
            out.push_str(&format!("- {}\n", escape_html(m)));
        }
    }
    out.push('\n');
    out.push_str(&summary_provenance(&records));
    out
}

/// How often the verdict rule calls two identical arms different, per count of rounds,
/// simulated when the page is built ([`harness::stats::simulated_false_verdicts`]): the
/// table behind the fewest rounds a verdict needs.
pub fn verdict_rates() -> String {
    use harness::stats::{
        SIMULATED_ARM_SIGMA, SIMULATED_ROUND_SIGMA, VERDICT_MIN_ROUNDS, simulated_false_verdicts,
        worst_false_verdicts,
    };
    const TRIALS: u32 = 4_000;
    let mut t = Table::new([
        "rounds",
        "at most, whatever the noise",
        "simulated, mild noise",
        "the page states a verdict",
    ])
    .align(3, Align::Left);
    for n in 3..=10u32 {
        t.row([
            n.to_string(),
            fmt_percent(worst_false_verdicts(n)),
            fmt_percent(simulated_false_verdicts(n, TRIALS)),
            if n >= VERDICT_MIN_ROUNDS {
                "yes"
            } else {
                "no: figures only"
            }
            .to_string(),
        ]);
    }
    format!(
        "{}\n<p class=\"cow-provenance\">How often identical arms are called different. \
         <em>At most</em>: one minus the coverage of the interval the rule judges, for independent \
         rounds. <em>Simulated</em> when this page was built: {} runs per count, paired rounds \
         whose shared round effect has σ {} (log-normal) and whose arms add σ {} each, \
         judged at the default 5 % threshold. The round effect cancels in each round's \
         ratio, so it is the arms' own noise that the paired rule meets; noisier arms \
         approach the bound.</p>\n",
        t.to_markdown(),
        fmt_count(u64::from(TRIALS)),
        SIMULATED_ROUND_SIGMA,
        SIMULATED_ARM_SIGMA
    )
}

/// Every chapter's findings in one decision table, each row linked to its chapter:
/// the book's conclusions at a glance, rendered as the chapters render them.
pub fn findings(records: &[Record]) -> String {
    harness::answer::decision_table(&crate::finding_rows(records, |_| true).0)
}

/// One provenance line for a set of records: the machine, and the span of their times.
pub fn summary_provenance(records: &[&Record]) -> String {
    let Some(first) = records.first() else {
        return "<p class=\"cow-provenance\">No results.</p>\n".into();
    };
    let mut times: Vec<&str> = records
        .iter()
        .map(|r| r.provenance.measured_at.as_str())
        .collect();
    times.sort();
    let profiles: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.profile.name()).collect();
    let rounds: usize = records.iter().map(|r| r.rounds.len()).sum();
    // One record, or records finished in the same second: one time, not "between".
    let (a, b) = (times[0], times[times.len() - 1]);
    let when = if a == b {
        format!("finished {a}")
    } else {
        format!("finished between {a} and {b}")
    };
    let text = format!(
        "Measured on {} · {} build · profile {} · {} rounds in all · {when}",
        machine_line(&first.provenance.machine),
        first.build,
        profiles.into_iter().collect::<Vec<_>>().join(" and "),
        fmt_count(rounds as u64),
    );
    format!("<p class=\"cow-provenance\">{}</p>\n", escape_html(&text))
}

/// What the parent's sampling of other processes cost while the shown rounds ran: each
/// sample runs on one CPU, inside a round, and its CPU is left out of "other processes"
/// (it is ours), so this is where a reader sees it.
pub fn watcher(records: &[Record]) -> String {
    let costs: Vec<(f64, harness::noise::WatchCost)> = records
        .iter()
        .flat_map(|r| &r.rounds)
        .filter_map(|round| Some((round.noise.wall_s, round.noise.watch?)))
        .filter(|(wall, w)| {
            wall.is_finite() && *wall > 0.0 && w.total_ns.is_finite() && w.longest_ns.is_finite()
        })
        .collect();
    let shown: Vec<&Record> = records.iter().collect();
    if costs.is_empty() {
        return format!(
            "No shown round recorded the watcher's samples (records from before it counted \
             them, or an OS where it does not sample).\n\n{}",
            summary_provenance(&shown)
        );
    }
    let rounds = costs.len();
    let samples: f64 = costs.iter().map(|(_, w)| w.samples as f64).sum();
    let total_ns: f64 = costs.iter().map(|(_, w)| w.total_ns).sum();
    let wall_ns: f64 = costs.iter().map(|(wall, _)| wall * 1e9).sum();
    let mut longest: Vec<f64> = costs.iter().map(|(_, w)| w.longest_ns).collect();
    longest.sort_by(f64::total_cmp);
    let (median_longest, max_longest) = (longest[rounds / 2], longest[rounds - 1]);
    let total: usize = records.iter().map(|r| r.rounds.len()).sum();
    format!(
        "Of the {total} rounds shown in this build, {rounds} lasted long enough for a sample \
         (the first comes after {} ms). In them the parent sampled the other processes {} \
         times, {} each on average ({} of one CPU over those rounds' time). In the median \
         round its longest sample took {}; the longest of all took {}. A sample runs on \
         one CPU while the round measures, so an operation that overlaps one can be that much \
         later; its CPU is ours and is not counted in *other processes*.\n\n{}",
        harness::worker::SAMPLE_EVERY.as_millis(),
        fmt_count(samples as u64),
        fmt_ns(total_ns / samples.max(1.0)),
        fmt_percent(total_ns / wall_ns.max(1.0)),
        fmt_ns(median_longest),
        fmt_ns(max_longest),
        summary_provenance(&shown)
    )
}

/// The measuring budgets the code declares, per chapter and in all, beside what the
/// shown results took to measure (and in which profile).
pub fn budgets(shown: &[Shown]) -> String {
    use harness::Profile;
    let secs = |d: std::time::Duration| d.as_secs_f64();
    let fmt_s = |s: f64| fmt_ns(s * 1e9);
    let mut t = Table::new([
        "chapter",
        "quick budget",
        "full budget",
        "this build measured",
    ]);
    let (mut quick, mut full, mut bound) = (0.0, 0.0, 0.0);
    let mut took_total = 0.0;
    for ch in crate::CHAPTERS {
        let q: f64 = ch
            .experiments
            .iter()
            .map(|e| secs(e.budget(Profile::Quick).time))
            .sum();
        let f: f64 = ch
            .experiments
            .iter()
            .map(|e| secs(e.budget(Profile::Full).time))
            .sum();
        let b: f64 = ch
            .experiments
            .iter()
            .map(|e| secs(e.budget(Profile::Full).bound()))
            .sum();
        let mine: Vec<&Record> = shown
            .iter()
            .map(|s| &s.record)
            .filter(|r| r.chapter == ch.name)
            .collect();
        let took: f64 = mine.iter().map(|r| r.wall_s).sum();
        let profiles: std::collections::BTreeSet<&str> =
            mine.iter().map(|r| r.profile.name()).collect();
        quick += q;
        full += f;
        bound += b;
        took_total += took;
        t.row(cells![
            format!("[{}](./{}.md)", ch.name, ch.name),
            fmt_s(q),
            fmt_s(f),
            format!(
                "{} ({})",
                fmt_s(took),
                profiles.into_iter().collect::<Vec<_>>().join(" and ")
            ),
        ]);
    }
    t.row(cells![
        "**the whole book**".to_string(),
        format!("**{}**", fmt_s(quick)),
        format!("**{}**", fmt_s(full)),
        format!("**{}**", fmt_s(took_total)),
    ]);
    let records: Vec<&Record> = shown.iter().map(|s| &s.record).collect();
    format!(
        "{}\nThe budgets are when each experiment stops starting new rounds; its hard bound adds \
         half again, at least 2.5 s (the full profile's bounds add up to {}). *This build measured* is the \
         time the results shown in this book took, from their records, in the profile \
         named.\n\n{}",
        t.to_markdown(),
        fmt_s(bound),
        summary_provenance(&records)
    )
}

/// Every chapter's headline figures: the numbers Compare machines and `all-results compare` read.
pub fn headlines(figures: &[Figure]) -> String {
    let mut t = Table::new([
        "figure",
        "median (interval, 95 % or less with fewer rounds)",
        "rounds",
        "parameters",
    ])
    .align(3, Align::Left);
    for f in figures {
        let params: Vec<String> = f.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        t.row(cells![
            format!("`{}`", f.name),
            fmt_estimate(&f.estimate(), f.unit),
            f.rounds.to_string(),
            if params.is_empty() {
                "–".into()
            } else {
                escape_html(&params.join(", "))
            },
        ]);
    }
    if figures.is_empty() {
        return "> **Note:** no headline figure has a result yet.\n".into();
    }
    t.to_markdown()
}

/// Every experiment of one chapter: a heading, each reading's median over rounds with
/// its interval and the spread between rounds, the notes, the provenance.
pub fn chapter_tables(ch: &Chapter, shown: &[Shown]) -> String {
    let mut out = String::new();
    for s in shown.iter().filter(|s| s.record.chapter == ch.name) {
        let r = &s.record;
        // The heading, its id and every name below are the registry's, never the record's.
        let Some(exp) = ch.experiment(&r.experiment) else {
            continue;
        };
        let name = exp.name();
        out.push_str(&format!(
            "<h3 id=\"{0}-{1}\">{1}</h3>\n\n{2} ({3}).\n\n",
            ch.name,
            name,
            escape_html(exp.about()),
            escape_html(&r.isolation)
        ));
        if r.is_ok() {
            let mut t = Table::new([
                "reading",
                "median (interval, 95 % or less with fewer rounds)",
                "rounds",
                "spread",
            ]);
            for key in r.keys() {
                let (Some(e), Some(unit)) = (r.estimate(key), r.unit(key)) else {
                    continue;
                };
                t.row(cells![
                    escape_html(key),
                    fmt_estimate(&e, unit),
                    e.n.to_string(),
                    r.spread(key)
                        .map_or_else(|| "–".into(), |x| format!("{}×", sig3(x))),
                ]);
            }
            if t.is_empty() {
                out.push_str(
                    "> **Note:** this result holds no per-round readings (only counts or limits); \
                     its chapter shows it, and the JSON download holds all of it.\n\n",
                );
            } else {
                out.push_str(&t.to_markdown());
                out.push('\n');
            }
        } else {
            out.push_str(&format!(
                "> **No result for `{}` on this machine:** {}\n\n",
                name,
                escape_html(&status_text(r))
            ));
        }
        let mut all = r.notes.clone();
        all.extend(noise_notes(r));
        if !all.is_empty() {
            out.push_str(&notes(&all));
            out.push('\n');
        }
        out.push_str(&provenance_line(r));
        out.push('\n');
    }
    out
}

/// A link that downloads the whole run as one JSON file, with no server behind it.
/// (The `data:` address is single-quoted: it is not a link into the site, and
/// `book-tests`' internal-link check, which reads `href="…"`, has no case for it.)
pub fn download(bundle: &crate::Bundle) -> anyhow::Result<String> {
    let json = serde_json::to_string(bundle)?;
    let name = "cost-of-waiting-results.json";
    let records: Vec<&Record> = bundle.records.iter().collect();
    Ok(format!(
        "<p class=\"cow-download\"><a download=\"{name}\" href='data:application/json;base64,{}'>\
         Download the results of this run ({name}, {} records, {} headline figures, {})</a></p>\n\n{}",
        base64::engine::general_purpose::STANDARD.encode(json.as_bytes()),
        bundle.records.len(),
        bundle.figures.len(),
        harness::render::fmt_bytes(json.len() as f64),
        summary_provenance(&records),
    ))
}

/// The figures the "Compare machines" page was built with, as JSON for its script
/// (`<script type="application/json">`, with `<`, `>`, `&`, `{` and `}` escaped in
/// its strings so the data cannot close the element or hold an mdbook directive), then the visible machine line and the provenance.
pub fn compare_data(bundle: &crate::Bundle) -> anyhow::Result<String> {
    // The format tag and version the page's script accepts and the verdict rule come
    // from here, and each figure carries its text (`shown`): the script repeats none.
    let data = serde_json::json!({
        "format": bundle.format,
        "version": bundle.version,
        "machine": bundle.machine,
        "generated_at": bundle.generated_at,
        "figures": bundle.figures,
        // The most rounds each profile runs of each experiment: the page refuses a
        // record of more, as `compare` does (issue 35).
        "max_rounds": crate::max_rounds_table(),
        // The verdict rule of every page, so the script calls a difference as they do.
        "rule": {
            "threshold": harness::stats::threshold(),
            "threshold_text": harness::render::threshold_text(),
            "min_rounds": harness::stats::VERDICT_MIN_ROUNDS,
            // Its words, from the one place the book words verdicts: the page's
            // script shows these and writes none of its own.
            "words": {
                "clear": harness::render::apart_text(),
                "same": harness::render::undecided_text(harness::stats::Verdict::Same),
                "unclear": harness::render::undecided_text(harness::stats::Verdict::Unclear),
            },
        },
    });
    // Inside the JSON strings `<`, `>`, `&`, `{` and `}` become `\u003c` …, which mean
    // the same to `JSON.parse`: no text from a record can close the element, open a
    // comment in it, or hold an mdbook directive (`{{#include …}}`), which mdbook's
    // `links` preprocessor, running after cmdrun, would expand even here (issue 28).
    let json = harness::safe::json_for_script(&serde_json::to_string(&data)?);
    let records: Vec<&Record> = bundle.records.iter().collect();
    Ok(format!(
        "<script type=\"application/json\" id=\"cow-built-figures\">{json}</script>\n\n\
         This page was built with {} headline figures measured on {}.\n\n{}",
        bundle.figures.len(),
        escape_html(&bundle.machine),
        summary_provenance(&records)
    ))
}

/// The HTML stamped onto a published site's front page: which machine made its numbers.
pub fn published_stamp(records: &[Record]) -> String {
    let refs: Vec<&Record> = records.iter().collect();
    let body = summary_provenance(&refs)
        .replace("<p class=\"cow-provenance\">", "")
        .replace("</p>\n", "");
    format!(
        "<div class=\"cow-published\" id=\"cow-published\"><p><strong>This copy of the book \
         was published with the numbers of the machine that built it.</strong> {body}. \
         Build it yourself (<code>make serve</code>) to see your own.</p></div>"
    )
}

/// Inserts the stamp at the top of a page's `<main>`, replacing an earlier stamp.
pub fn stamp_page(html: &str, stamp: &str) -> Option<String> {
    const OPEN: &str = "<div class=\"cow-published\"";
    const CLOSE: &str = "<!--/cow-published-->";
    let html = match (html.find(OPEN), html.find(CLOSE)) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &html[..a], &html[b + CLOSE.len()..]),
        _ => html.to_string(),
    };
    let at = html.find("<main>")? + "<main>".len();
    Some(format!("{}{stamp}{CLOSE}{}", &html[..at], &html[at..]))
}

/// Where a published site's listings link to: the repository's files at the commit it
/// was built from, e.g. `https://github.com/OWNER/REPO/blob/COMMIT` (`COW_SOURCE_URL`).
/// Only an `https://` address of plain URL characters is taken: it goes into every
/// page's HTML, so nothing in it may close an attribute or start markup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceUrl(String);

impl SourceUrl {
    pub fn parse(s: &str) -> Result<SourceUrl, String> {
        let plain = |c: char| c.is_ascii_alphanumeric() || "-._~/:%+@".contains(c);
        let rest = s.strip_prefix("https://").unwrap_or_default();
        if rest.is_empty() || !rest.chars().all(plain) || rest.starts_with('/') {
            return Err(format!(
                "COW_SOURCE_URL must be an https:// address of letters, digits and - . _ ~ / : % + @                  (such as https://github.com/OWNER/REPO/blob/COMMIT), not {s:?}"
            ));
        }
        Ok(SourceUrl(s.trim_end_matches('/').to_string()))
    }
}

/// Links each listing's caption (`<p class="cow-listing-file"><code>PATH</code></p>`,
/// which every page writes above its listings) to the file in the repository. A
/// caption whose path is not a plain relative path is left as it is. Returns the page
/// and how many captions it linked; a caption linked before is not linked again.
pub fn link_listings(html: &str, source: &SourceUrl) -> (String, usize) {
    const OPEN: &str = "<p class=\"cow-listing-file\"><code>";
    const CLOSE: &str = "</code></p>";
    let plain = |p: &str| {
        !p.is_empty()
            && !p.starts_with('/')
            && !p.split('/').any(|part| part == "..")
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c))
    };
    let (mut out, mut rest, mut n) = (String::new(), html, 0);
    while let Some(i) = rest.find(OPEN) {
        let after = &rest[i + OPEN.len()..];
        let Some(j) = after.find(CLOSE) else { break };
        let path = &after[..j];
        out.push_str(&rest[..i]);
        if plain(path) {
            out.push_str(&format!(
                "<p class=\"cow-listing-file\"><a href=\"{}/{path}\"><code>{path}</code></a></p>",
                source.0
            ));
            n += 1;
        } else {
            out.push_str(&rest[i..i + OPEN.len() + j + CLOSE.len()]);
        }
        rest = &after[j + CLOSE.len()..];
    }
    out.push_str(rest);
    (out, n)
}

#[cfg(test)]
mod tests {
    /// The watcher's samples, summed over rounds and the longest found; rounds without
    /// them (older records) are left out, and with none the view says so.
    #[test]
    fn the_watcher_s_cost_is_summed_over_the_rounds_that_recorded_it() {
        use harness::noise::WatchCost;
        use harness::record::{Reading, Unit};
        let mut r = harness::fixture::record_of_readings(
            "brigades",
            "x",
            vec![vec![Reading::new("x", Unit::Nanos, 1.0)]; 3],
        );
        assert!(super::watcher(std::slice::from_ref(&r)).starts_with("No shown round"));
        for (i, round) in r.rounds.iter_mut().enumerate().take(2) {
            round.noise.wall_s = 1.0;
            round.noise.watch = Some(WatchCost {
                samples: 10,
                total_ns: 10.0 * 50_000.0,
                longest_ns: [80_000.0, 200_000.0][i],
            });
        }
        let md = super::watcher(&[r]);
        assert!(
            md.contains("Of the 3 rounds shown in this build, 2 lasted")
                && md.contains("20 times, 50.0 µs each")
                && md.contains("(0.05 % of one CPU")
                && md.contains("the longest of all took 200 µs"),
            "{md}"
        );
    }

    /// Issue 28: a machine text `{{#include /proc/self/environ}}` in the page's data
    /// was expanded by mdbook (after cmdrun) into the built page; a record included
    /// that way closed the element with its `</script><script>`. Texts here bypass the
    /// door (as if one got past it): the escaping alone must hold.
    #[test]
    fn the_compare_data_holds_no_directive_and_cannot_close_its_element() {
        use harness::record::{Note, NoteKind, Reading, Unit};
        let hostile = "{{#include /proc/self/environ}} </script><script>alert(1)</script> \
                       <!-- {{ #include ../book.toml }} \u{2028}\u{202E}";
        let mut r = harness::fixture::record_of_readings(
            "brigades",
            "x",
            vec![vec![Reading::new("x", Unit::Nanos, 1.0)]],
        );
        r.provenance.machine.cpu = hostile.into();
        r.provenance.machine.os = hostile.into();
        r.isolation = hostile.into();
        r.notes.push(Note {
            kind: NoteKind::Info,
            text: hostile.into(),
        });
        let mut b = crate::Bundle::of(vec![r.clone()]);
        b.machine = hostile.into();
        b.generated_at = hostile.into();
        b.figures.push(harness::Figure {
            chapter: "brigades".into(),
            name: "x".into(),
            unit: Unit::Nanos,
            median: 1.0,
            lo: 1.0,
            hi: 1.0,
            confidence: 0.95,
            rounds: 3,
            drift: None,
            params: serde_json::Map::new(),
            profile: harness::Profile::Quick,
            measured_at: r.provenance.measured_at.clone(),
            machine: hostile.into(),
            shown: hostile.into(),
        });
        let md = super::compare_data(&b).unwrap();
        assert!(!md.contains("{{"), "{md}");
        let lower = md.to_ascii_lowercase();
        assert_eq!(lower.matches("<script").count(), 1, "{md}");
        assert_eq!(lower.matches("</script").count(), 1, "{md}");
        assert!(!md.contains("<!--") && !md.contains('\u{202E}'), "{md}");
        // The script still reads the texts as they were.
        const OPEN: &str = "<script type=\"application/json\" id=\"cow-built-figures\">";
        let json = &md[md.find(OPEN).unwrap() + OPEN.len()..md.find("</script>").unwrap()];
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["machine"], hostile);
        assert_eq!(v["figures"][0]["shown"], hostile);
    }

    #[test]
    fn listings_link_to_their_file_at_the_commit_and_nothing_else_is_touched() {
        let src = super::SourceUrl::parse("https://github.com/o/r/blob/abc123/").unwrap();
        let page = "<p>x</p>\n<p class=\"cow-listing-file\"><code>chapters-code/a/src/lib.rs</code></p>\n\
                    <pre>code</pre><p class=\"cow-listing-file\"><code>../etc/passwd</code></p>";
        let (linked, n) = super::link_listings(page, &src);
        assert_eq!(n, 1);
        assert!(linked.contains(
            "<a href=\"https://github.com/o/r/blob/abc123/chapters-code/a/src/lib.rs\"><code>chapters-code/a/src/lib.rs</code></a>"
        ));
        assert!(
            linked.contains("<code>../etc/passwd</code></p>") && linked.contains("<pre>code</pre>")
        );
        // Linking a linked page changes nothing.
        assert_eq!(super::link_listings(&linked, &src), (linked.clone(), 0));
        for bad in [
            "http://github.com/o/r",
            "https://",
            "https://x\"onmouseover=alert(1)",
            "https://x/<script>",
            "javascript:alert(1)",
            "https://x y",
        ] {
            assert!(super::SourceUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn stamping_twice_leaves_one_stamp() {
        let page = "<html><main><h1>Intro</h1></main></html>";
        let stamp = "<div class=\"cow-published\">made on X</div>";
        let once = super::stamp_page(page, stamp).unwrap();
        let twice = super::stamp_page(&once, stamp).unwrap();
        assert_eq!(once, twice);
        assert_eq!(twice.matches("made on X").count(), 1);
        assert!(twice.contains(
            "<main><div class=\"cow-published\">made on X</div><!--/cow-published--><h1>"
        ));
        assert!(super::stamp_page("<html></html>", stamp).is_none());
    }
}
