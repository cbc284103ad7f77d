//! The appendix page's Markdown: an overview of every experiment, one table per
//! experiment with its provenance, and the whole run as one JSON download.

use crate::stats::{Stat, stats};
use harness::record::Status;
use harness::render::{Table, fmt_count, fmt_ns, provenance_line};
use harness::{Chapter, Record};

fn status_text(r: &Record) -> String {
    match &r.status {
        Status::Ok => "ok".into(),
        Status::TimedOut { bound_s } => format!("abandoned after {bound_s:.0} s"),
        Status::Failed { error } => format!("failed: {error}"),
    }
}

fn params_text(r: &Record) -> String {
    if r.params.is_empty() {
        return "–".into();
    }
    r.params
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One row per experiment of the run: where it comes from, how it ended, how long it took.
pub fn overview(records: &[Record]) -> String {
    let mut t = Table::new([
        "chapter",
        "experiment",
        "status",
        "profile",
        "summaries",
        "took",
        "measured (UTC)",
        "parameters",
    ])
    .align(1, harness::render::Align::Left)
    .align(2, harness::render::Align::Left)
    .align(3, harness::render::Align::Left)
    .align(7, harness::render::Align::Left);
    for r in records {
        t.row([
            format!("[{}](./{}.md)", r.chapter, r.chapter),
            format!("[{}](#{}-{})", r.experiment, r.chapter, r.experiment),
            status_text(r),
            r.profile.name().to_string(),
            fmt_count(stats(&r.data).len() as u64),
            fmt_ns(r.wall_s * 1e9),
            r.provenance
                .measured_at
                .trim_end_matches(" UTC")
                .to_string(),
            params_text(r),
        ]);
    }
    let mut out = t.to_markdown();
    let machines: std::collections::BTreeSet<String> = records
        .iter()
        .map(|r| {
            let m = &r.provenance.machine;
            format!("{} · {} · {}", m.cpu_line(), m.os_line(), m.rustc)
        })
        .collect();
    out.push('\n');
    if machines.len() == 1 {
        out.push_str(&format!(
            "All {} results come from one machine: {}.\n",
            records.len(),
            machines.iter().next().expect("one")
        ));
    } else {
        out.push_str(&format!(
            "These results come from {} different machine descriptions — compare with care:\n\n",
            machines.len()
        ));
        for m in &machines {
            out.push_str(&format!("- {m}\n"));
        }
    }
    out.push('\n');
    out.push_str(&summary_provenance(records));
    out
}

/// One provenance line for a set of records: the machine, and the span of their times.
pub fn summary_provenance(records: &[Record]) -> String {
    let Some(first) = records.first() else {
        return "<p class=\"cow-provenance\">No results.</p>\n".into();
    };
    let mut times: Vec<&str> = records
        .iter()
        .map(|r| r.provenance.measured_at.as_str())
        .collect();
    times.sort();
    let m = &first.provenance.machine;
    let profiles: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.profile.name()).collect();
    let text = format!(
        "Measured on {} · {} · {} · {} build · profile {} · between {} and {}",
        m.cpu_line(),
        m.os_line(),
        m.rustc,
        m.build,
        profiles.into_iter().collect::<Vec<_>>().join(" and "),
        times[0],
        times[times.len() - 1],
    );
    format!(
        "<p class=\"cow-provenance\">{}</p>\n",
        text.replace('&', "&amp;").replace('<', "&lt;")
    )
}

fn stat_table(stats: &[Stat]) -> String {
    let mut t = Table::new(["what", "n", "p50", "mean ± 99.9 % CI", "p99", "max"]);
    let dash = || "–".to_string();
    for s in stats {
        t.row([
            s.label.clone(),
            fmt_count(s.n),
            s.p50.map(fmt_ns).unwrap_or_else(dash),
            format!("{} ± {}", fmt_ns(s.mean), fmt_ns(s.ci)),
            s.p99.map(fmt_ns).unwrap_or_else(dash),
            s.max.map(fmt_ns).unwrap_or_else(dash),
        ]);
    }
    t.to_markdown()
}

/// Every experiment of one chapter: a heading, its summaries as a table, its provenance.
pub fn chapter_tables(ch: &Chapter, records: &[Record]) -> String {
    let mut out = String::new();
    for r in records.iter().filter(|r| r.chapter == ch.name) {
        let about = ch
            .experiment(&r.experiment)
            .map(|e| e.about)
            .unwrap_or_default();
        out.push_str(&format!(
            "<h3 id=\"{0}-{1}\">{1}</h3>\n\n{2}\n\n",
            r.chapter, r.experiment, about
        ));
        let found = stats(&r.data);
        match &r.status {
            Status::Ok if found.is_empty() => out.push_str(
                "> **Note:** this result holds no latency summaries (only curves or counts); \
                 its chapter shows it as a plot, and the JSON download holds all of it.\n\n",
            ),
            Status::Ok => {
                out.push_str(&stat_table(&found));
                out.push('\n');
            }
            _ => out.push_str(&format!(
                "> **No result for `{}` on this machine:** {}\n\n",
                r.experiment,
                status_text(r)
            )),
        }
        if !r.notes.is_empty() {
            out.push_str(&harness::render::notes(&r.notes));
            out.push('\n');
        }
        out.push_str(&provenance_line(r));
        out.push('\n');
    }
    out
}

/// The whole run as one JSON document.
pub fn bundle(records: &[Record]) -> anyhow::Result<String> {
    let doc = serde_json::json!({
        "book": "The Cost of Waiting",
        "about": "Every experiment's result as the book showed it: the chapter, the experiment, \
                  the code key, the profile, the machine and time of measurement, the parameters, \
                  how it ended, notes, and the experiment's own data (latencies in nanoseconds).",
        "results": records,
    });
    Ok(serde_json::to_string(&doc)?)
}

/// A link that downloads the whole run as one JSON file, with no server behind it.
/// (The `data:` address is single-quoted: it is not a link into the site, and
/// `book-tests`' internal-link check, which reads `href="…"`, has no case for it.)
pub fn download(records: &[Record]) -> anyhow::Result<String> {
    let json = bundle(records)?;
    let name = "cost-of-waiting-results.json";
    Ok(format!(
        "<p class=\"cow-download\"><a download=\"{name}\" href='data:application/json;base64,{}'>\
         Download every result of this run ({name}, {} records, {})</a></p>\n\n{}",
        crate::base64(json.as_bytes()),
        records.len(),
        harness::render::fmt_bytes(json.len() as f64),
        summary_provenance(records),
    ))
}

/// The HTML stamped onto a published site's front page: which machine made its numbers.
pub fn published_stamp(records: &[Record]) -> String {
    let body = summary_provenance(records)
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

#[cfg(test)]
mod tests {
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
