//! The book's results as a whole: the one registry of chapters, what the book shows for
//! every experiment, the headline figures, the published bundle, the appendix, what
//! changed since the previous run, and the comparison of two machines or runs.
//!
//! Nothing here knows a chapter's data types: it reads each result's per-round
//! readings and each chapter's declared headline figures, both typed by the harness.

pub mod appendix;
pub mod changes;
pub mod compare;
pub mod others;
pub mod same;
pub mod selftest;
pub mod session;
pub mod worked;

use harness::cache::{self, Shown};
use harness::params::{Override, SetList};
use harness::runner::{Mode, obtain};
use harness::{Chapter, Figure, Profile, Record};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// This crate's sources as its build script hashed them, for the staleness check of
/// the binaries built on it (the appendix's and the guide's).
pub const SOURCE: (&str, &str) = (env!("CARGO_MANIFEST_DIR"), env!("COW_SOURCE_HASH"));

/// Every crate whose code a binary built on this one runs: the chapters and this one.
pub fn sources() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&str, &str)> = CHAPTERS.iter().map(|c| (c.dir, c.source_hash)).collect();
    v.push(SOURCE);
    v
}

/// The chapters of the book, in reading order: the one registry a new chapter joins
/// (a slice, so adding one changes no count). `book-tests`' registry test checks that
/// the chapter folders, `src/SUMMARY.md`, the introduction's list, the appendix page
/// and this crate's `Cargo.toml` agree with it.
pub static CHAPTERS: &[&Chapter] = &[
    &spinning_vs_sleeping::CHAPTER,
    &brigades::CHAPTER,
    &short_sleeps::CHAPTER,
    &throttles::CHAPTER,
    &async_locks::CHAPTER,
];

/// The appendix's tables that are not a chapter's (`all-results table NAME`); every
/// chapter's slug names a table too. `other-os` is short sleeps' section of other
/// machines' figures ([`others`]), on that chapter's page: it reads other machines'
/// records only, and measures nothing.
pub const APPENDIX_TABLES: [&str; 13] = [
    "overview",
    "findings",
    "verdict-rates",
    "download",
    "headlines",
    "compare-data",
    "budgets",
    "watcher",
    "aa",
    "two-runs",
    "same",
    "verdict-example",
    "other-os",
];

/// The quick profile's promise: every chapter's budgets add up to at most this. An
/// aim, not a bound: an experiment that overruns its budget is stopped only at its
/// hard bound ([`harness::Budget::bound`]), and the bounds add up to at most
/// [`QUICK_WORST`]. The README, the introduction and "How we measure" say so, and a
/// test (`book-tests/tests/promises.rs`) checks the sums and the words.
pub const QUICK_AIM: Duration = Duration::from_secs(90);
/// The quick profile's worst case: the hard bounds add up to at most this.
pub const QUICK_WORST: Duration = Duration::from_secs(150);
/// The full profile's promise (an aim, as [`QUICK_AIM`]).
pub const FULL_AIM: Duration = Duration::from_secs(15 * 60);
/// The full profile's worst case: the hard bounds add up to at most this.
pub const FULL_WORST: Duration = Duration::from_secs(25 * 60);

/// The whole book's budgets in a profile, and their hard bounds, summed.
pub fn budget_total(profile: Profile) -> (Duration, Duration) {
    let budgets = || {
        CHAPTERS
            .iter()
            .flat_map(|c| c.experiments.iter())
            .map(|e| e.budget(profile))
    };
    (
        budgets().map(|b| b.time).sum(),
        budgets().map(|b| b.bound()).sum(),
    )
}

/// A chapter by its slug.
pub fn chapter(slug: &str) -> Option<&'static Chapter> {
    CHAPTERS.iter().copied().find(|c| c.name == slug)
}

/// The most rounds `profile`'s budget runs of `chapter`'s `experiment`, if the book has
/// that experiment: the round count a record of it may hold (issue 35, item 2).
pub fn max_rounds(chapter: &str, experiment: &str, profile: harness::Profile) -> Option<u32> {
    let exp = crate::chapter(chapter)?.experiment(experiment)?;
    Some(exp.budget(profile).max_rounds)
}

/// [`max_rounds`] of every experiment, as the Compare page's data carries it:
/// `{"chapter/experiment": {"quick": 40, "full": 10}, …}`.
pub fn max_rounds_table() -> serde_json::Value {
    let mut table = serde_json::Map::new();
    for ch in CHAPTERS {
        for e in ch.experiments {
            let mut by = serde_json::Map::new();
            for p in harness::Profile::ALL {
                by.insert(p.name().into(), e.budget(p).max_rounds.into());
            }
            table.insert(format!("{}/{}", ch.name, e.name()), by.into());
        }
    }
    table.into()
}

/// What the book shows for one experiment: the best good stored result for the
/// current code, else (when `measure` is set) a fresh measurement in `profile`.
pub fn shown(
    ch: &Chapter,
    experiment: &str,
    profile: Profile,
    dir: &Path,
    measure: bool,
) -> Option<Shown> {
    let exp = ch.experiment(experiment)?;
    let overrides = overrides(ch);
    if measure {
        obtain(ch, exp, profile, &overrides, dir, Mode::this_executable()).ok()
    } else {
        let values =
            harness::params::resolve(exp.name(), exp.params(), profile, &overrides).ok()?;
        cache::best(
            dir,
            ch.name,
            exp.name(),
            ch.key,
            ch.build,
            harness::params::tag(&values),
            &|r| exp.check_rounds(r),
        )
    }
}

/// `$COW_SET` for one chapter; [`check_set`] has refused bad entries already.
fn overrides(ch: &Chapter) -> Vec<Override> {
    SetList::from_env(&slugs())
        .map(|s| s.for_chapter(ch.name))
        .unwrap_or_default()
}

/// The chapters' slugs, in reading order.
pub fn slugs() -> Vec<&'static str> {
    CHAPTERS.iter().map(|c| c.name).collect()
}

/// Every `$COW_SET` entry must name a chapter, and a parameter it declares with a value
/// it can take: a bad value is refused here rather than leaving that chapter's figures
/// out of every table without a word. Read once, with the harness's one parser, and
/// each chapter's entries checked once (1,600 entries were once quadratic).
pub fn check_set() -> Result<(), String> {
    let set = SetList::from_env(&slugs())?;
    for slug in set.chapters() {
        let ch = chapter(slug).expect("SetList::parse checked the slug");
        set.check_for(ch.name, &declared(ch))?;
    }
    Ok(())
}

/// A chapter's experiments and the parameters each declares.
pub fn declared(ch: &Chapter) -> Vec<(&'static str, &'static [harness::Param])> {
    ch.experiments
        .iter()
        .map(|e| (e.name(), e.params()))
        .collect()
}

/// Every experiment of every chapter as the book shows it (measuring what is missing
/// when `measure` is set).
pub fn all_shown(profile: Profile, dir: &Path, measure: bool) -> Vec<Shown> {
    CHAPTERS
        .iter()
        .flat_map(|ch| {
            ch.experiments
                .iter()
                .filter_map(move |e| shown(ch, e.name(), profile, dir, measure))
        })
        .collect()
}

/// The records of [`all_shown`].
pub fn records(shown: &[Shown]) -> Vec<Record> {
    shown.iter().map(|s| s.record.clone()).collect()
}

/// The rows of the chapters' findings that `keep` selects, in chapter order, each read
/// from the record of its experiment and linked to its chapter; with the records used.
/// The appendix shows every finding; the guide a section's.
pub fn finding_rows(
    records: &[Record],
    keep: impl Fn(&dyn harness::AnyFinding) -> bool,
) -> (Vec<harness::answer::Row<'static>>, Vec<&Record>) {
    let mut rows = Vec::new();
    let mut used: Vec<&Record> = Vec::new();
    for ch in CHAPTERS {
        for f in ch.findings.iter().filter(|f| !f.is_threat() && keep(**f)) {
            let record = records
                .iter()
                .find(|r| r.chapter == ch.name && r.experiment == f.experiment());
            if let Some(r) = record
                && !used.iter().any(|u| std::ptr::eq(*u, r))
            {
                used.push(r);
            }
            rows.push(harness::answer::Row::of(*f, record).linked(format!("{}.md", ch.name)));
        }
    }
    (rows, used)
}

/// Every chapter's headline figures that the records hold, in chapter order.
pub fn figures(records: &[Record]) -> Vec<Figure> {
    let mut out = Vec::new();
    for ch in CHAPTERS {
        for h in ch.headlines {
            let found = records
                .iter()
                .find(|r| r.chapter == ch.name && r.experiment == h.experiment && r.is_ok());
            if let Some(f) = found.and_then(|r| Figure::of(h, r)) {
                out.push(f);
            }
        }
    }
    out
}

/// One headline figure by name, from records.
pub fn figure(records: &[Record], name: &str) -> Option<Figure> {
    figures(records).into_iter().find(|f| f.name == name)
}

/// What `make publish` writes as `cost-of-waiting-results.json` and `all-results json`
/// prints: the headline figures and every record, with a format tag so that a file from
/// another version of the book is recognised.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bundle {
    pub format: String,
    pub version: u32,
    /// The machine, in one line (from the first record).
    pub machine: String,
    pub generated_at: String,
    pub figures: Vec<Figure>,
    pub records: Vec<Record>,
}

pub const BUNDLE_FORMAT: &str = "cost-of-waiting-results";
/// Version 2: results in rounds, figures with intervals over rounds.
pub const BUNDLE_VERSION: u32 = 2;

impl Bundle {
    pub fn of(records: Vec<Record>) -> Bundle {
        let machine = records
            .first()
            .map(|r| harness::render::machine_line(&r.provenance.machine))
            .unwrap_or_else(|| "no results".into());
        Bundle {
            format: BUNDLE_FORMAT.into(),
            version: BUNDLE_VERSION,
            machine,
            generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                .to_string(),
            figures: figures(&records),
            records,
        }
    }

    /// The same without each round's raw data (distributions, samples): the figures,
    /// every reading, the noise and the provenance — a small file to offer in a page.
    /// `make publish` writes the whole bundle beside the site.
    pub fn without_round_data(&self) -> Bundle {
        let mut b = self.clone();
        for r in &mut b.records {
            for round in &mut r.rounds {
                round.data = serde_json::Value::Null;
            }
        }
        b
    }

    /// Reads a results file, refusing one of another format or version with a
    /// message that says what to do.
    pub fn read(path: &Path) -> anyhow::Result<Bundle> {
        // Through the book's one door: a regular file under the bundle cap, no FIFO or
        // device (issue 28).
        let bytes = harness::safe::read_results_file(path, harness::safe::BUNDLE_CAP)
            .map_err(|why| anyhow::anyhow!("cannot read {}: {why}", path.display()))?;
        // JSON has no byte-order mark (RFC 8259 forbids writing one); some editors add it.
        anyhow::ensure!(
            !bytes.starts_with("\u{feff}".as_bytes()),
            "{} starts with a byte-order mark, which JSON does not allow: save it as UTF-8 without one",
            path.display()
        );
        // Counted before it is parsed: 64 MiB of zeros made a tree of gigabytes (issue 35,
        // item 10).
        harness::validate::check_values(&bytes, harness::validate::MAX_BUNDLE_VALUES)
            .map_err(|why| anyhow::anyhow!("{} is refused: {why}", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text, so not JSON", path.display()))?;
        // First only the tags (the rest is skipped, not built), then the typed bundle:
        // no tree of the whole file is held in memory.
        #[derive(Deserialize)]
        struct Tags {
            format: Option<serde_json::Value>,
            version: Option<serde_json::Value>,
            results: Option<serde::de::IgnoredAny>,
        }
        let tags: Tags = serde_json::from_str(&text).map_err(|e| {
            let said = e.to_string();
            if said.starts_with("duplicate field") {
                // A key given twice: which one counts is a guess, so refuse the file.
                anyhow::anyhow!(
                    "{} is refused: it gives a key twice ({})",
                    path.display(),
                    said.split(" at line").next().unwrap_or(&said)
                )
            } else if e.classify() == serde_json::error::Category::Data {
                anyhow::anyhow!(
                    "{} is not a results file of this book (no \"format\": \"{BUNDLE_FORMAT}\")",
                    path.display()
                )
            } else {
                anyhow::anyhow!("{} is not JSON: {e}", path.display())
            }
        })?;
        let format = tags.format.as_ref().and_then(|f| f.as_str());
        let version = tags.version.as_ref().and_then(|f| f.as_u64());
        match (format, version) {
            (Some(BUNDLE_FORMAT), Some(v)) if v == u64::from(BUNDLE_VERSION) => {}
            (Some(BUNDLE_FORMAT), Some(v)) => anyhow::bail!(
                "{} was written by another version of the book (results format {v}; this one reads {BUNDLE_VERSION}). \
                 Publish it again with this version (`make publish`, or `target/release/all-results json`).",
                path.display()
            ),
            _ if tags.results.is_some() => anyhow::bail!(
                "{} was written by an older version of the book (results before rounds, without headline figures). \
                 Publish it again with this version (`make publish`, or `target/release/all-results json`).",
                path.display()
            ),
            _ => anyhow::bail!(
                "{} is not a results file of this book (no \"format\": \"{BUNDLE_FORMAT}\")",
                path.display()
            ),
        }
        let bundle: Bundle =
            serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        bundle
            .check()
            .map_err(|why| anyhow::anyhow!("{} is refused: {why}", path.display()))?;
        Ok(bundle)
    }

    /// The first reason the bundle breaks the schema ([`harness::validate`]), if it does:
    /// every figure and every record is checked before anything is shown.
    pub fn check(&self) -> Result<(), String> {
        use harness::validate;
        validate::check_text("its machine line", &self.machine, 2048)?;
        if self.generated_at.len() > 40
            || !self
                .generated_at
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | ':' | '.' | '+' | '-'))
        {
            return Err("its date (generated_at) is not a date".into());
        }
        for f in &self.figures {
            validate::figure(f)?;
        }
        for (i, r) in self.records.iter().enumerate() {
            validate::record(r).map_err(|why| format!("record {}: {why}", i + 1))?;
            // No more rounds than the record's profile runs of its experiment, a rule
            // the Compare page applies too (`max_rounds` in its data). The rest of the
            // experiment's door (its rounds' shape and counts) is `import`'s, which
            // stores records; `compare` reads only the figures.
            if let Some(max) = max_rounds(&r.chapter, &r.experiment, r.profile)
                && r.rounds.len() > max as usize
            {
                return Err(format!(
                    "record {}: it holds {} rounds; the {} profile runs at most {max} of {}/{} (its budget)",
                    i + 1,
                    r.rounds.len(),
                    r.profile,
                    r.chapter,
                    r.experiment
                ));
            }
        }
        Ok(())
    }

    /// The bundle as `all-results json` writes it, refused rather than written when it
    /// exceeds what the book's own readers take (`compare`, `import`, the Compare page:
    /// `max_bytes` and `max_values`, issue 35): the book never writes a file it refuses.
    pub fn to_json(&self, max_bytes: u64, max_values: usize) -> anyhow::Result<String> {
        let json = serde_json::to_string(self)? + "\n";
        if json.len() as u64 > max_bytes {
            anyhow::bail!(
                "the results make a bundle of {} bytes, more than the {max_bytes} a bundle \
                 may hold (the book's compare and import would refuse it); remove the \
                 largest records or measure with fewer rounds",
                json.len()
            );
        }
        harness::validate::check_values(json.as_bytes(), max_values).map_err(|why| {
            anyhow::anyhow!(
                "the results make a bundle the book's compare and import would refuse: {why}"
            )
        })?;
        Ok(json)
    }
}

#[cfg(test)]
mod tests {

    /// Issue 35, item 16: `all-results json` wrote bundles (77 MB from 10 records of
    /// 7.5 MB) that the book's own compare refuses. Past either cap it now refuses to
    /// write, and says why; within both it writes a bundle the door reads back.
    #[test]
    fn the_json_bundle_is_never_one_the_book_refuses() {
        let records = harness::fixture::golden_records(&short_sleeps::CHAPTER).unwrap();
        let bundle = super::Bundle::of(records);
        let json = bundle
            .to_json(
                harness::safe::BUNDLE_CAP,
                harness::validate::MAX_BUNDLE_VALUES,
            )
            .unwrap();
        let len = json.len() as u64;
        let e = format!("{:#}", bundle.to_json(len - 1, usize::MAX).unwrap_err());
        assert!(
            e.contains("more than the") && e.contains("would refuse"),
            "{e}"
        );
        let e = format!("{:#}", bundle.to_json(len, 10).unwrap_err());
        assert!(e.contains("would refuse"), "{e}");
        assert!(bundle.to_json(len, usize::MAX).is_ok());
    }

    /// The registry walk the design asks for: every chapter's views and headlines name
    /// experiments it has, names are unique, parameter defaults lie in their ranges.
    #[test]
    fn every_chapter_registry_is_consistent() {
        let mut names: Vec<_> = super::CHAPTERS.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), super::CHAPTERS.len());
        for ch in super::CHAPTERS {
            ch.check().unwrap();
        }
        let mut headlines: Vec<&str> = super::CHAPTERS
            .iter()
            .flat_map(|c| c.headlines.iter().map(|h| h.name))
            .collect();
        let n = headlines.len();
        headlines.sort();
        headlines.dedup();
        assert_eq!(
            headlines.len(),
            n,
            "headline names are unique across chapters"
        );
    }

    /// The chapter binaries refuse a `$COW_SET` entry naming no chapter of the book,
    /// as the harness lists them (`harness::usage::BOOK_CHAPTERS`): the same chapters,
    /// in the same order, as this registry.
    #[test]
    fn the_harness_knows_every_chapter_by_name() {
        assert_eq!(super::slugs(), harness::usage::BOOK_CHAPTERS);
    }

    /// The headline figures Compare machines and `compare` read exist, in the chapters that
    /// name them (by the chapters' constants, so a renamed figure fails to compile).
    #[test]
    fn the_required_headlines_are_declared() {
        for (chapter, name) in [
            (
                "spinning-vs-sleeping",
                spinning_vs_sleeping::headline::STD_MPSC_BLOCKING_P50,
            ),
            (
                "spinning-vs-sleeping",
                spinning_vs_sleeping::headline::STD_MPSC_SPINNING_P50,
            ),
            (
                "spinning-vs-sleeping",
                spinning_vs_sleeping::headline::STD_UDP_BLOCKING_P50,
            ),
            (
                "spinning-vs-sleeping",
                spinning_vs_sleeping::headline::STD_UDP_SPINNING_P50,
            ),
            (
                "spinning-vs-sleeping",
                spinning_vs_sleeping::headline::ATOMIC_FLOOR_ONE_WAY,
            ),
            ("brigades", brigades::headline::THREADS_PER_HOP),
            ("brigades", brigades::headline::ASYNC_CURRENT_SOCKET_PER_HOP),
            (
                "brigades",
                brigades::headline::ASYNC_CURRENT_CHANNEL_PER_HOP,
            ),
            ("brigades", brigades::headline::ASYNC_TASK_BYTES),
            (
                "short-sleeps",
                short_sleeps::headline::NANOSLEEP_1NS_DEFAULT_SLACK,
            ),
            (
                "short-sleeps",
                short_sleeps::headline::NANOSLEEP_1NS_SLACK_1NS,
            ),
            ("short-sleeps", short_sleeps::headline::SCHED_YIELD),
            ("throttles", throttles::headline::NAIVE_RATE_AT_10K),
            ("throttles", throttles::headline::DEADLINE_RATE_AT_10K),
            ("throttles", throttles::headline::SLEEP_1MS_LATENESS),
            (
                "async-locks",
                async_locks::headline::DESIGN2_MULTI_THREAD_LATENESS_P50,
            ),
            (
                "async-locks",
                async_locks::headline::FIX_MULTI_THREAD_LATENESS_P50,
            ),
            (
                "async-locks",
                async_locks::headline::STD_MUTEX_MULTI_THREAD_LATENESS_P50,
            ),
        ] {
            let ch = super::chapter(chapter).unwrap();
            assert!(
                ch.headline(name).is_some(),
                "{chapter} declares no `{name}`"
            );
        }
    }
}
