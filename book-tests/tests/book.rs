//! Builds the whole book with the reader's pinned tools and the quick profile, and checks what a reader
//! would see: every page, every live table and plot with its provenance, every code
//! listing, every internal link.

use book_tests::{
    book_root, build_chapter_binaries, pages_with_errors, prepare_test_results, summary_entries,
    target_dir,
};
use regex::Regex;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Builds the book once for all tests of this file; every test reads the result.
fn built() -> &'static Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = target_dir().join("book-tests").join("html");
        let _ = std::fs::remove_dir_all(&out);
        build_chapter_binaries().map_err(|e| format!("{e:#}"))?;
        let results = prepare_test_results().map_err(|e| format!("{e:#}"))?;
        // The markers' environment is set on mdbook's process, not on this
        // multi-threaded test process.
        let start = std::time::Instant::now();
        book_tests::build_book(
            &out,
            &[
                ("COW_PROFILE", Path::new("quick")),
                ("COW_RESULTS_DIR", &results),
            ],
        )
        .map_err(|e| format!("building the book failed: {e:#}"))?;
        eprintln!(
            "book built in {:.1} s into {}",
            start.elapsed().as_secs_f64(),
            out.display()
        );
        Ok(out)
    })
}

fn out() -> &'static Path {
    match built() {
        Ok(p) => p,
        Err(e) => panic!("the book did not build: {e}"),
    }
}

fn html_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, acc: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, acc);
            } else if p.extension().is_some_and(|x| x == "html") {
                acc.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(out(), &mut v);
    v
}

fn page(src: &str) -> String {
    let html = out().join(Path::new(src).with_extension("html"));
    std::fs::read_to_string(&html).unwrap_or_else(|e| panic!("{}: {e}", html.display()))
}

/// The `<main>` part of a page: what the chapter itself says.
fn main_of(html: &str) -> &str {
    let start = html.find("<main>").expect("a page has <main>");
    let end = html[start..].find("</main>").expect("a page closes <main>") + start;
    &html[start..end]
}

#[test]
fn every_summary_entry_is_rendered() {
    let entries = summary_entries().unwrap();
    assert!(entries.len() >= 8, "{entries:?}");
    for (title, src) in entries {
        let html = page(&src);
        let main = main_of(&html);
        assert!(main.contains("<h1"), "{src} has no title");
        assert!(
            main.contains(&title.replace('&', "&amp;")),
            "{src} does not show its title {title}"
        );
    }
}

#[test]
fn no_command_failed_or_was_left_unrun() {
    let failed = pages_with_errors(out());
    assert!(failed.is_empty(), "pages with a failed marker: {failed:?}");
    for f in html_files() {
        let html = std::fs::read_to_string(&f).unwrap();
        for bad in ["cmdrun error", "<!-- cmdrun", "{{#include", "ANCHOR"] {
            assert!(!html.contains(bad), "{} contains {bad:?}", f.display());
        }
    }
}

/// Markers in a page's source, by kind.
fn markers(src: &str) -> Vec<String> {
    let text = std::fs::read_to_string(book_root().join("src").join(src)).unwrap();
    let re = Regex::new(r"<!-- cmdrun -0 (.*?) -->").unwrap();
    re.captures_iter(&text).map(|c| c[1].to_string()).collect()
}

#[test]
fn every_live_table_and_plot_has_numbers_and_provenance() {
    let table_re = Regex::new(r"(?s)<table>(.*?)</table>").unwrap();
    let cell_re = Regex::new(r"(?s)<td[^>]*>(.*?)</td>").unwrap();
    for (_, src) in summary_entries().unwrap() {
        let ms = markers(&src);
        if ms.is_empty() {
            continue;
        }
        let html = page(&src);
        let main = main_of(&html);
        // A second view of the same run says "Same run as above" (cow-provenance
        // cow-same-run): it counts as the marker's provenance line.
        let provenance = main.matches("class=\"cow-provenance").count();
        assert!(
            provenance >= ms.len(),
            "{src}: {} markers but {provenance} provenance lines",
            ms.len()
        );
        assert!(
            !main.contains("No result for"),
            "{src}: an experiment did not produce a result on this machine"
        );
        // Every table on a live page holds numbers.
        for t in table_re.captures_iter(main) {
            let numeric = cell_re
                .captures_iter(&t[1])
                .filter(|c| c[1].chars().any(|ch| ch.is_ascii_digit()))
                .count();
            assert!(numeric > 0, "{src}: a table without numbers:\n{}", &t[0]);
        }
        // A "table" view prints a table, or a list of findings computed from the intervals.
        // (The appendix's download link and the compare page's data are no tables.)
        let tables = ms
            .iter()
            .filter(|m| {
                m.contains(" table ") && !m.ends_with(" download") && !m.ends_with(" compare-data")
            })
            .count();
        let rendered = table_re.captures_iter(main).count() + main.matches("<ul>").count();
        assert!(
            rendered >= tables,
            "{src}: fewer tables and lists than table markers"
        );
    }
}

#[test]
fn every_plot_is_a_valid_svg_with_data() {
    let plot_re = Regex::new(r#"(?s)<div class="cow-plot">\s*(<svg.*?</svg>)\s*</div>"#).unwrap();
    let mut plots = 0;
    for (_, src) in summary_entries().unwrap() {
        let expected = markers(&src)
            .iter()
            .filter(|m| m.contains(" plot "))
            .count();
        let html = page(&src);
        let found: Vec<_> = plot_re.captures_iter(&html).collect();
        assert_eq!(
            found.len(),
            expected,
            "{src}: plots rendered vs plot markers"
        );
        for c in found {
            let svg = &c[1];
            let doc = roxmltree::Document::parse(svg)
                .unwrap_or_else(|e| panic!("{src}: a plot is not valid SVG: {e}"));
            assert_eq!(doc.root_element().tag_name().name(), "svg");
            let lines = doc
                .descendants()
                .filter(|n| n.has_tag_name("polyline"))
                .filter(|n| {
                    n.attribute("points")
                        .is_some_and(|p| p.split(' ').count() >= 2)
                })
                .count();
            let dots = doc
                .descendants()
                .filter(|n| n.has_tag_name("circle"))
                .count();
            assert!(lines + dots > 0, "{src}: a plot without data points");
            plots += 1;
        }
    }
    assert!(plots > 0, "the book has no plots");
}

#[test]
fn every_code_listing_is_filled() {
    let code_re = Regex::new(r#"(?s)<code class="language-[^"]*">(.*?)</code>"#).unwrap();
    for (_, src) in summary_entries().unwrap() {
        let text = std::fs::read_to_string(book_root().join("src").join(&src)).unwrap();
        let includes = text.matches("{{#include").count();
        let html = page(&src);
        let listings: Vec<_> = code_re.captures_iter(&html).collect();
        assert!(listings.len() >= includes, "{src}: listings missing");
        for l in listings {
            assert!(l[1].trim().len() > 20, "{src}: an empty listing");
        }
    }
}

#[test]
fn internal_links_resolve() {
    let href_re = Regex::new(r#"href="([^"]+)""#).unwrap();
    let id_re = Regex::new(r#"id="([^"]+)""#).unwrap();
    let mut ids_cache: std::collections::HashMap<PathBuf, HashSet<String>> = Default::default();
    for f in html_files() {
        let html = std::fs::read_to_string(&f).unwrap();
        for c in href_re.captures_iter(&html) {
            let href = &c[1];
            if href.contains("://")
                || href.starts_with("mailto:")
                || href.starts_with("javascript:")
            {
                continue;
            }
            let (path, frag) = href.split_once('#').unwrap_or((href, ""));
            let target = if path.is_empty() {
                f.clone()
            } else if let Some(site_path) = path.strip_prefix('/') {
                out().join(site_path) // site-absolute, as on the 404 page
            } else {
                f.parent().unwrap().join(path)
            };
            let target = if target.is_dir() {
                target.join("index.html")
            } else {
                target
            };
            assert!(
                target.exists(),
                "{}: link {href} points to a missing {}",
                f.display(),
                target.display()
            );
            if !frag.is_empty() && target.extension().is_some_and(|e| e == "html") {
                let ids = ids_cache.entry(target.clone()).or_insert_with(|| {
                    let t = std::fs::read_to_string(&target).unwrap();
                    id_re.captures_iter(&t).map(|c| c[1].to_string()).collect()
                });
                assert!(
                    ids.contains(frag),
                    "{}: link {href}: no id {frag} in {}",
                    f.display(),
                    target.display()
                );
            }
        }
    }
}

#[test]
fn the_search_index_and_print_page_exist() {
    assert!(out().join("searchindex.js").exists() || out().join("searchindex.json").exists());
    let print = std::fs::read_to_string(out().join("print.html")).unwrap();
    assert!(print.contains("cow-provenance"));
}

#[test]
fn the_decision_guide_found_every_result_it_reads() {
    // The guide reads the chapters' headline figures; one that is missing shows up as
    // "Not available", which this catches on the platform that runs every experiment.
    if !cfg!(target_os = "linux") {
        return;
    }
    let main_html = page("what-to-use-when.md");
    let main = main_of(&main_html);
    assert!(
        !main.contains("Not available"),
        "the guide is missing figures"
    );
}

/// Every headline figure a chapter declares is found in its results: a reading renamed
/// in a chapter's rounds but not in its headline would compile and show nothing.
#[test]
fn every_declared_headline_figure_is_in_the_appendix() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let html = page("all-results.md");
    let main = main_of(&html);
    for ch in all_results::CHAPTERS {
        for h in ch.headlines {
            assert!(
                main.contains(&format!("<code>{}</code>", h.name)),
                "{}'s headline `{}` has no figure: no good result of `{}` has the reading `{}`",
                ch.name,
                h.name,
                h.experiment,
                h.reading.stored()
            );
        }
    }
}

/// A tail percentile is shown only over enough samples: every table with a p99 column
/// has a count column, and every count there is at least 1,000 (10,000 for p99.9).
#[test]
fn no_tail_percentile_without_its_samples() {
    let table_re = Regex::new(r"(?s)<table>(.*?)</table>").unwrap();
    let th_re = Regex::new(r"(?s)<th[^>]*>(.*?)</th>").unwrap();
    let tr_re = Regex::new(r"(?s)<tr>(.*?)</tr>").unwrap();
    let td_re = Regex::new(r"(?s)<td[^>]*>(.*?)</td>").unwrap();
    const COUNTS: [&str; 9] = [
        "n", "messages", "samples", "calls", "timeouts", "laps", "sleeps", "hops", "requests",
    ];
    for (_, src) in summary_entries().unwrap() {
        let html = page(&src);
        for t in table_re.captures_iter(main_of(&html)) {
            let headers: Vec<String> = th_re
                .captures_iter(&t[1])
                .map(|c| c[1].trim().to_lowercase())
                .collect();
            for (tail, min) in [("p99", 1_000u64), ("p99.9", 10_000)] {
                if !headers.iter().any(|h| h == tail) {
                    continue;
                }
                let count = headers
                    .iter()
                    .position(|h| COUNTS.contains(&h.as_str()))
                    .unwrap_or_else(|| {
                        panic!("{src}: a {tail} column without a sample count: {headers:?}")
                    });
                for row in tr_re.captures_iter(&t[1]).skip(1) {
                    let cells: Vec<String> = td_re
                        .captures_iter(&row[1])
                        .map(|c| c[1].to_string())
                        .collect();
                    let Some(n) = cells
                        .get(count)
                        .and_then(|c| c.replace(',', "").trim().parse::<u64>().ok())
                    else {
                        continue;
                    };
                    assert!(n >= min, "{src}: {tail} shown over {n} samples: {cells:?}");
                }
            }
        }
    }
}

/// The chapters: the pages whose crate is a chapter (they open with an answer).
fn chapter_pages() -> Vec<String> {
    summary_entries()
        .unwrap()
        .into_iter()
        .map(|(_, src)| src)
        .filter(|src| {
            let slug = src.trim_end_matches(".md");
            book_root()
                .join("chapters-code")
                .join(slug)
                .join("Cargo.toml")
                .is_file()
                && !["all-results", "what-to-use-when"].contains(&slug)
        })
        .collect()
}

/// A page's visible text: tags dropped, entities for spaces and dashes kept as text.
fn text_of(html: &str) -> String {
    let tag = Regex::new(r"(?s)<[^>]*>").unwrap();
    tag.replace_all(html, " ").into_owned()
}

fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

/// Each chapter answers its question first: its decision table (the findings), from a live
/// `answer` view, before the first code listing, within the first screen (under 300
/// words of text before it at 1280 px, where a screen holds about 350).
#[test]
fn every_chapter_opens_with_its_answer() {
    let chapters = chapter_pages();
    assert!(chapters.len() >= 5, "{chapters:?}");
    for src in chapters {
        let slug = src.trim_end_matches(".md");
        let source = std::fs::read_to_string(book_root().join("src").join(&src)).unwrap();
        let marker = format!("{slug} table answer -->");
        let at = source
            .find(&marker)
            .unwrap_or_else(|| panic!("{src}: no `answer` marker"));
        if let Some(listing) = source.find("{{#include") {
            assert!(
                at < listing,
                "{src}: the answer comes after the first listing"
            );
        }
        let html = page(&src);
        let main = main_of(&html);
        let block = main
            .find("class=\"cow-live cow-answer\"")
            .unwrap_or_else(|| panic!("{src}: the answer block did not render"));
        if let Some(code) = main.find("<pre>") {
            assert!(block < code, "{src}: a listing comes before the answer");
        }
        let before = words(&text_of(&main[..block]));
        assert!(
            before < 300,
            "{src}: {before} words before the answer; it should be on the first screen"
        );
        let end = main[block..]
            .find("</div>")
            .map_or(main.len(), |e| block + e);
        let answer = text_of(&main[block..end]);
        assert!(
            answer.matches(|c: char| c.is_ascii_digit()).count() >= 3,
            "{src}: the answer holds no numbers: {answer}"
        );
    }
}

/// No verdict on a nil difference: a comparison word with a ratio inside the practical
/// threshold (5 %: between 0.952× and 1.05×) is a verdict nobody would act on.
#[test]
fn no_verdict_rests_on_a_ratio_inside_the_threshold() {
    let verdict = Regex::new(
        r"(?i)\b(faster|slower|higher|lower|more|less|wins?|beats?)\b[^.;:]{0,160}?(?:by a factor of|takes|as long|as much|:)\s*([0-9]+(?:\.[0-9]+)?)×",
    )
    .unwrap();
    let threshold = 0.05;
    let mut bad = Vec::new();
    for (_, src) in summary_entries().unwrap() {
        let text = text_of(main_of(&page(&src)));
        for c in verdict.captures_iter(&text) {
            let r: f64 = c[2].parse().unwrap();
            if r > 1.0 / (1.0 + threshold) && r < 1.0 + threshold {
                bad.push(format!(
                    "{src}: “{}”",
                    c[0].split_whitespace().collect::<Vec<_>>().join(" ")
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "verdicts on a difference inside the threshold:\n{}",
        bad.join("\n")
    );
}

/// Provenance informs without drowning the page: what a reader sees of it before a
/// click (each line's summary; the full record stays folded in its `<details>`) is under
/// 8 % of any page's words. The appendix (`all-results.md`) is left out: its subject is
/// every run's provenance, one block per experiment, and the chapters point there for it.
#[test]
fn provenance_stays_under_its_share_of_each_page() {
    let prov = Regex::new(r#"(?s)<(div|p) class="cow-provenance[^"]*">.*?</(div|p)>"#).unwrap();
    let folded = Regex::new(r"(?s)</summary>.*").unwrap();
    for (_, src) in summary_entries().unwrap() {
        if src == "all-results.md" {
            continue;
        }
        let html = page(&src);
        let main = main_of(&html);
        let total = words(&text_of(main));
        if total == 0 {
            continue;
        }
        let in_prov: usize = prov
            .find_iter(main)
            .map(|m| words(&text_of(&folded.replace_all(m.as_str(), "</summary>"))))
            .sum();
        let share = in_prov as f64 / total as f64;
        assert!(
            share < 0.08,
            "{src}: provenance is {:.1} % of the page's words ({in_prov} of {total})",
            share * 100.0
        );
    }
}

/// One quantity, one figure: every configuration two experiments measure is paired on
/// "How we measure"; each pair either agrees by the verdict rule or is listed with what
/// each run measured of its context.
#[test]
fn paired_quantities_agree_or_say_what_differed() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let html = page("how-we-measure.md");
    let main = main_of(&html);
    let start = main
        .find("designed to measure it")
        .expect("How we measure shows the paired quantities");
    let block = &main[start..];
    let rows = Regex::new(r"(?s)<tr>(.*?)</tr>").unwrap();
    let table_end = block.find("</table>").expect("the pairs' table ends");
    let table = &block[..table_end];
    let pairs: Vec<String> = rows
        .captures_iter(table)
        .skip(1)
        .map(|c| c[1].to_string())
        .collect();
    assert!(pairs.len() >= 3, "too few paired quantities: {table}");
    let differ = pairs
        .iter()
        .filter(|r| r.contains("<strong>different</strong>"))
        .count();
    let agree = pairs
        .iter()
        .filter(|r| {
            r.contains("no clear difference (measured apart")
                || r.contains("about the same (within")
        })
        .count();
    // A run cut short by its budget (a loaded machine: CI's gave the gaps experiment 5
    // rounds) judges nothing, and says so.
    let too_few = pairs
        .iter()
        .filter(|r| r.contains("too few rounds to judge"))
        .count();
    assert_eq!(
        differ + agree + too_few,
        pairs.len(),
        "a pair without a verdict or a reason for none: {pairs:?}"
    );
    let rest = &block[table_end..];
    let explained = rest.matches("differs between the two experiments").count();
    assert_eq!(
        explained, differ,
        "every pair that differs says what each run measured of its context"
    );
    if differ > 0 {
        assert!(rest.contains("noise per round"), "{rest}");
    }
}

/// Every guide row's figure is the figure its chapter's decision table shows: the guide
/// and the chapters render one list of findings from the same results.
#[test]
fn every_guide_row_shows_its_chapter_s_figure() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let guide = page("what-to-use-when.md");
    let tags = Regex::new(r"<[^>]*>").unwrap();
    let text = |html: &str| {
        tags.replace_all(html, "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let link = Regex::new(r#"href="([a-z-]+)\.html""#).unwrap();
    let td = Regex::new(r"(?s)<td[^>]*>(.*?)</td>").unwrap();
    let mut rows = 0;
    for row in Regex::new(r"(?s)<tr>(.*?)</tr>")
        .unwrap()
        .captures_iter(main_of(&guide))
    {
        let cells: Vec<String> = td
            .captures_iter(&row[1])
            .map(|c| c[1].trim().to_string())
            .collect();
        let Some(chapter) = cells.first().and_then(|c| link.captures(c)) else {
            continue;
        };
        rows += 1;
        let chapter_page = text(main_of(&page(&format!("{}.md", &chapter[1]))));
        assert!(
            chapter_page.contains(&text(&cells[2])),
            "the guide's “{}” is not on {}.html",
            text(&cells[2]),
            &chapter[1]
        );
    }
    assert!(rows >= 5, "the guide shows {rows} rows from the chapters");
}

/// Each section of the guide ends in a recommendation built from its findings.
#[test]
fn every_guide_section_ends_in_a_recommendation() {
    let guide = page("what-to-use-when.md");
    let main = main_of(&guide);
    let sections: Vec<&str> = main.split("<h2").skip(1).collect();
    let with_markers = sections.iter().filter(|s| s.contains("cow-answer")).count();
    assert_eq!(with_markers, 5, "the guide has five decision tables");
    for s in sections.iter().filter(|s| s.contains("cow-answer")) {
        assert!(
            s.contains("<strong>Recommendation:</strong>"),
            "a guide section without a recommendation:\n{}",
            &s[..s.len().min(400)]
        );
        if cfg!(target_os = "linux") {
            assert!(!s.contains("none yet"), "a section with no result:\n{s}");
        }
    }
}

/// What a reader meets on a chapter page, measured as `shared/tools/reader-metrics.py`
/// measures it: the prose blocks (paragraphs and list items outside tables, code, plots,
/// provenance lines and noise notes).
fn prose_blocks(main: &str) -> Vec<String> {
    let drop = [
        Regex::new(r"(?s)<svg\b.*?</svg>").unwrap(),
        Regex::new(r"(?s)<pre\b.*?</pre>").unwrap(),
        Regex::new(r"(?s)<table\b.*?</table>").unwrap(),
        Regex::new(r"(?s)<script\b.*?</script>").unwrap(),
        Regex::new(r"(?s)<style\b.*?</style>").unwrap(),
        Regex::new(r#"(?s)<p class="cow-(listing-file|provenance)".*?</p>"#).unwrap(),
        Regex::new(r#"(?s)<div class="cow-provenance".*?</div>"#).unwrap(),
        // A run's notes say what its rounds met (disturbed rounds, figures that varied 2×
        // or more, time bounds reached): their length follows the machine's load, not the
        // writing. A loaded clean-clone run added about 100 words of noise notes to three
        // chapters, and a build beside a CI run 120 words of time-bound notes to one, each
        // past the limit below where a quiet build of the same code passed.
        Regex::new(&format!(
            r"(?s)<blockquote>\s*<p><strong>(?:{}):</strong>.*?</blockquote>",
            harness::record::NoteKind::ALL.map(|k| k.label()).join("|")
        ))
        .unwrap(),
    ];
    let mut m = main.to_string();
    for r in &drop {
        m = r.replace_all(&m, " ").into_owned();
    }
    Regex::new(r"(?s)<(?:p|li)\b[^>]*>(.*?)</(?:p|li)>")
        .unwrap()
        .captures_iter(&m)
        .map(|c| {
            let t = text_of(&c[1])
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'");
            t.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect()
}

/// Sentence lengths in words: a sentence ends at `.`, `!` or `?` followed by a space
/// and a capital letter, an opening quote or a bracket; fragments under 3 words are
/// left out (as the reader-metrics tool does).
fn sentence_lengths(blocks: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    for b in blocks {
        let chars: Vec<char> = b.chars().collect();
        let mut start = 0;
        let mut cut = |from: usize, to: usize| {
            let s: String = chars[from..to].iter().collect();
            let n = s.split_whitespace().count();
            if n >= 3 {
                out.push(n);
            }
        };
        for i in 0..chars.len() {
            let ends = matches!(chars[i], '.' | '!' | '?')
                && chars.get(i + 1) == Some(&' ')
                && chars
                    .get(i + 2)
                    .is_some_and(|c| c.is_uppercase() || *c == '“' || *c == '(');
            if ends {
                cut(start, i + 1);
                start = i + 2;
            }
        }
        cut(start, chars.len());
    }
    out
}

/// Two legend swatches alike (same stroke colour and dash) in one plot.
fn legend_collisions(svg: &str) -> usize {
    let attr = |el: &str, name: &str| {
        el.split(&format!("{name}=\""))
            .nth(1)
            .and_then(|t| t.split('"').next())
            .map(str::to_string)
    };
    let keys: Vec<(String, String)> = svg
        .split("<polyline")
        .skip(1)
        .filter(|el| {
            let pts = attr(el, "points").unwrap_or_default();
            let width: f64 = attr(el, "stroke-width")
                .and_then(|w| w.parse().ok())
                .unwrap_or(0.0);
            pts.split_whitespace().count() == 2 && width >= 3.0
        })
        .filter_map(|el| {
            let c = attr(el, "stroke")?.to_uppercase();
            (c != "#000000" && c != "#FFFFFF")
                .then(|| (c, attr(el, "stroke-dasharray").unwrap_or_default()))
        })
        .collect();
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    keys.len() - unique.len()
}

/// The `<div>` that opens at `start`, through its matching `</div>` (a table inside it
/// sits in a `<div>` of its own).
fn div_at(html: &str, start: usize) -> &str {
    let mut depth = 0i32;
    let mut i = start;
    loop {
        let open = html[i..].find("<div");
        let close = html[i..].find("</div");
        let (off, closing) = match (open, close) {
            (Some(o), Some(c)) if o < c => (o, false),
            (_, Some(c)) => (c, true),
            (Some(o), None) => (o, false),
            (None, None) => return &html[start..],
        };
        let at = i + off;
        depth += if closing { -1 } else { 1 };
        if closing && depth == 0 {
            return &html[start..at + "</div>".len()];
        }
        i = at + 4;
    }
}

/// A reader with five minutes: each chapter answers in a short block (at most 150 words
/// of prose besides its table), in sentences of at most 20 words at the median, shows a
/// plot within the first 600 words of prose, draws no two series alike, and stays
/// under 4,500 words of prose in all.
#[test]
fn every_chapter_reads_in_five_minutes() {
    let table = Regex::new(r"(?s)<table\b.*?</table>").unwrap();
    let svg = Regex::new(r"(?s)<svg.*?</svg>").unwrap();
    let mut bad = Vec::new();
    for src in chapter_pages() {
        let html = page(&src);
        let main = main_of(&html);
        let Some(a) = main.find("cow-answer") else {
            bad.push(format!("{src}: no answer block"));
            continue;
        };
        let start = main[..a].rfind("<div").unwrap_or(a);
        let block = table.replace_all(div_at(main, start), " ").into_owned();
        let answer_words = text_of(&block).split_whitespace().count();
        let blocks = prose_blocks(main);
        let mut lengths = sentence_lengths(&blocks);
        lengths.sort();
        let median = match lengths.len() {
            0 => 0.0,
            n if n % 2 == 1 => lengths[n / 2] as f64,
            n => (lengths[n / 2 - 1] + lengths[n / 2]) as f64 / 2.0,
        };
        let prose: usize = blocks.iter().map(|b| b.split_whitespace().count()).sum();
        let plot_at = main.find("class=\"cow-plot\"").map(|p| {
            prose_blocks(&main[..p])
                .iter()
                .map(|b| b.split_whitespace().count())
                .sum::<usize>()
        });
        let alike: usize = svg
            .find_iter(main)
            .map(|m| legend_collisions(m.as_str()))
            .sum();
        eprintln!(
            "{src}: answer {answer_words} words; median sentence {median} words; first plot \
             after {plot_at:?} words; {prose} prose words; {alike} alike series"
        );
        if answer_words > 150 {
            bad.push(format!(
                "{src}: answer block of {answer_words} words (at most 150)"
            ));
        }
        if median > 20.0 {
            bad.push(format!(
                "{src}: median sentence of {median} words (at most 20)"
            ));
        }
        match plot_at {
            Some(w) if w <= 600 => {}
            w => bad.push(format!("{src}: first plot after {w:?} words (at most 600)")),
        }
        if prose > 4_500 {
            bad.push(format!("{src}: {prose} words of prose (at most 4,500)"));
        }
        if alike > 0 {
            bad.push(format!("{src}: {alike} plot series drawn alike"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
