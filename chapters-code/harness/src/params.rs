//! An experiment's parameters, declared once: name, unit, valid range and the default
//! of each profile. The same declaration feeds the experiment (typed reads through
//! [`crate::Ctx`]), `list`, `run --set NAME=VALUE` (validated here), the provenance
//! line and the result cache's key (a result measured with other values never
//! replaces the one the book shows).

use crate::fmt::fmt_number;
use crate::profile::Profile;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One declared parameter. Build it with [`Param::int`] or [`Param::float`] and the
/// `const` setters, e.g.
/// `Param::int("tasks", 2, 1_000_000).defaults(100, 500).unit("tasks").about("…")`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    pub name: &'static str,
    /// What one unit of the value is, for people: "ms", "messages per round".
    pub unit: &'static str,
    pub about: &'static str,
    pub integer: bool,
    pub min: f64,
    pub max: f64,
    pub quick: f64,
    pub full: f64,
}

impl Param {
    /// An integer parameter valid from `min` to `max` inclusive.
    pub const fn int(name: &'static str, min: i64, max: i64) -> Param {
        Param {
            name,
            unit: "",
            about: "",
            integer: true,
            min: min as f64,
            max: max as f64,
            quick: min as f64,
            full: min as f64,
        }
    }

    /// A real-valued parameter valid from `min` to `max` inclusive.
    pub const fn float(name: &'static str, min: f64, max: f64) -> Param {
        Param {
            name,
            unit: "",
            about: "",
            integer: false,
            min,
            max,
            quick: min,
            full: min,
        }
    }

    /// The defaults of the quick and the full profile.
    pub const fn defaults(self, quick: i64, full: i64) -> Param {
        Param {
            quick: quick as f64,
            full: full as f64,
            ..self
        }
    }

    /// The defaults of a real-valued parameter.
    pub const fn defaults_f(self, quick: f64, full: f64) -> Param {
        Param {
            quick,
            full,
            ..self
        }
    }

    pub const fn unit(self, unit: &'static str) -> Param {
        Param { unit, ..self }
    }

    pub const fn about(self, about: &'static str) -> Param {
        Param { about, ..self }
    }

    pub fn default_for(&self, profile: Profile) -> f64 {
        profile.pick(self.quick, self.full)
    }

    /// "an integer from 1 to 1,000,000".
    pub fn range_text(&self) -> String {
        format!(
            "{} from {} to {}",
            if self.integer {
                "an integer"
            } else {
                "a number"
            },
            fmt_number(self.min, self.integer),
            fmt_number(self.max, self.integer)
        )
    }

    /// Parses and checks a value given on the command line.
    pub fn parse(&self, text: &str) -> Result<f64, String> {
        let bad = || {
            format!(
                "`{}` must be {} (got `{text}`)",
                self.name,
                self.range_text()
            )
        };
        let t = plain_number(text.trim(), self.integer).ok_or_else(bad)?;
        let v: f64 = if self.integer {
            t.parse::<i64>().map_err(|_| bad())? as f64
        } else {
            t.parse::<f64>().map_err(|_| bad())?
        };
        if !v.is_finite() || v < self.min || v > self.max {
            return Err(bad());
        }
        Ok(v)
    }
}

/// `text` as digits only, when it is a number as people write one: digits, with `_` or
/// `,` allowed only between groups of three (`1,000`, `1_000_000`; not `1,0,0`), and for
/// a real number a `.` and more digits. Anything else (a sign, an exponent, `inf`,
/// spaces inside) is `None`.
pub fn plain_number(text: &str, integer: bool) -> Option<String> {
    let (whole, frac) = match text.split_once('.') {
        Some((w, f)) if !integer => (w, Some(f)),
        Some(_) => return None,
        None => (text, None),
    };
    if let Some(f) = frac
        && (f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let sep = whole.bytes().find(|b| *b == b'_' || *b == b',');
    let groups: Vec<&str> = match sep {
        Some(c) => whole.split(c as char).collect(),
        None => vec![whole],
    };
    let digits = |g: &str| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit());
    if !groups.iter().all(|g| digits(g)) {
        return None;
    }
    if groups.len() > 1 && (groups[0].len() > 3 || groups[1..].iter().any(|g| g.len() != 3)) {
        return None;
    }
    let mut out = groups.concat();
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    Some(out)
}

/// A parameter's value in one run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ParamValue {
    pub name: String,
    pub value: f64,
    pub integer: bool,
    pub unit: String,
    /// Whether this is the profile's default (false: set with `--set`).
    pub default: bool,
}

impl ParamValue {
    pub fn display(&self) -> String {
        fmt_number(self.value, self.integer)
    }
}

/// A `NAME=VALUE` override from the command line (or `EXPERIMENT.NAME=VALUE`, which
/// applies to that experiment only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub experiment: Option<String>,
    pub name: String,
    pub value: String,
}

impl Override {
    pub fn parse(text: &str) -> Result<Override, String> {
        let (lhs, value) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not NAME=VALUE"))?;
        let (experiment, name) = match lhs.trim().split_once('.') {
            Some((e, n)) => (Some(e.to_string()), n.to_string()),
            None => (None, lhs.trim().to_string()),
        };
        if name.is_empty() {
            return Err(format!("`{text}` names no parameter"));
        }
        Ok(Override {
            experiment,
            name,
            value: value.trim().to_string(),
        })
    }

    fn applies_to(&self, experiment: &str) -> bool {
        self.experiment.as_deref().is_none_or(|e| e == experiment)
    }
}

/// The values an experiment runs with: its defaults for `profile`, with `overrides`
/// applied where they name one of its parameters. An override that names a parameter
/// of this experiment with a bad value is an error; one that names a parameter it
/// does not have is left for [`check_overrides`].
pub fn resolve(
    experiment: &str,
    defs: &[Param],
    profile: Profile,
    overrides: &[Override],
) -> Result<Vec<ParamValue>, String> {
    defs.iter()
        .map(|p| {
            let set = overrides
                .iter()
                .rev()
                .find(|o| o.applies_to(experiment) && o.name == p.name);
            let value = match set {
                Some(o) => p.parse(&o.value)?,
                None => p.default_for(profile),
            };
            Ok(ParamValue {
                name: p.name.to_string(),
                value,
                integer: p.integer,
                unit: p.unit.to_string(),
                default: value == p.default_for(profile),
            })
        })
        .collect()
}

/// Every override must name a parameter of at least one of `experiments` (name,
/// parameters); otherwise the error lists the parameters there are.
pub fn check_overrides(
    overrides: &[Override],
    experiments: &[(&str, &[Param])],
) -> Result<(), String> {
    for o in overrides {
        if let Some(e) = &o.experiment
            && !experiments.iter().any(|(name, _)| name == e)
        {
            let names: Vec<&str> = experiments.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "no experiment `{e}` here; the experiments are: {}",
                names.join(", ")
            ));
        }
        let known = experiments
            .iter()
            .filter(|(name, _)| o.applies_to(name))
            .any(|(_, defs)| defs.iter().any(|p| p.name == o.name));
        if !known {
            let mut listed = Vec::new();
            for (name, defs) in experiments.iter().filter(|(n, _)| o.applies_to(n)) {
                let ps: Vec<&str> = defs.iter().map(|p| p.name).collect();
                listed.push(format!(
                    "{name}: {}",
                    if ps.is_empty() {
                        "(none)".to_string()
                    } else {
                        ps.join(", ")
                    }
                ));
            }
            return Err(format!(
                "no parameter `{}`; the parameters are — {}",
                o.name,
                listed.join("; ")
            ));
        }
    }
    Ok(())
}

/// The book-wide parameter settings: `$COW_SET` (space-separated) or the entries of
/// `all-results measure --set`, each `CHAPTER.NAME=VALUE` or
/// `CHAPTER.EXPERIMENT.NAME=VALUE`. The one parser of that form: every binary reads
/// `$COW_SET` through [`SetList::from_env`], so an entry means the same everywhere,
/// and a bad one is refused by all of them alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetList {
    /// Where the entries came from, for messages: `COW_SET` or `--set`.
    source: &'static str,
    /// (chapter slug, the override within that chapter), in the order given.
    entries: Vec<(String, Override)>,
}

impl SetList {
    /// The variable the book's binaries read.
    pub const VAR: &'static str = "COW_SET";

    /// Parses `items`, which came from `source`. Every entry must be `NAME=VALUE`
    /// behind the slug of one of `chapters`; otherwise the error names the entry and
    /// lists the chapters. Linear in the number of entries.
    pub fn parse<'a>(
        source: &'static str,
        items: impl IntoIterator<Item = &'a str>,
        chapters: &[&str],
    ) -> Result<SetList, String> {
        let mut entries = Vec::new();
        for item in items {
            let lhs = item.split_once('=').map_or(item, |(l, _)| l);
            let slug = lhs.split_once('.').map(|(c, _)| c);
            let Some(slug) = slug.filter(|s| chapters.contains(s)) else {
                return Err(format!(
                    "{source}: `{item}` names no chapter; write CHAPTER.NAME=VALUE with one of: {}",
                    chapters.join(", ")
                ));
            };
            let o =
                Override::parse(&item[slug.len() + 1..]).map_err(|e| format!("{source}: {e}"))?;
            entries.push((slug.to_string(), o));
        }
        Ok(SetList { source, entries })
    }

    /// `$COW_SET`, parsed as [`SetList::parse`] does: empty when the variable is unset
    /// or empty, an error when it is not UTF-8 (see `crate::env`).
    pub fn from_env(chapters: &[&str]) -> Result<SetList, String> {
        match crate::env::text(Self::VAR)? {
            None => Ok(SetList {
                source: Self::VAR,
                entries: Vec::new(),
            }),
            Some(text) => SetList::parse(Self::VAR, text.split_whitespace(), chapters),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The chapters the entries name, each once, in the order first named.
    pub fn chapters(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (c, _) in &self.entries {
            if !out.contains(&c.as_str()) {
                out.push(c);
            }
        }
        out
    }

    /// The overrides for one chapter, in the order given.
    pub fn for_chapter(&self, chapter: &str) -> Vec<Override> {
        self.entries
            .iter()
            .filter(|(c, _)| c == chapter)
            .map(|(_, o)| o.clone())
            .collect()
    }

    /// The entries for `chapter` must name parameters of its `experiments` (name,
    /// parameters) and give values they can take: a typo or a bad value is refused
    /// here, not left to drop the chapter's figures without a word. Returns the
    /// chapter's overrides.
    pub fn check_for(
        &self,
        chapter: &str,
        experiments: &[(&str, &[Param])],
    ) -> Result<Vec<Override>, String> {
        let source = self.source;
        let overrides = self.for_chapter(chapter);
        if overrides.is_empty() {
            return Ok(overrides);
        }
        check_overrides(&overrides, experiments)
            .map_err(|e| format!("{source}: {chapter}: {e}"))?;
        // Whether a value is valid depends on the parameter's range only, not on the
        // profile: one profile checks them all.
        for (name, defs) in experiments {
            resolve(name, defs, Profile::Quick, &overrides)
                .map_err(|e| format!("{source}: {chapter}: {e}"))?;
        }
        Ok(overrides)
    }
}

/// A short stable tag of the values that differ from the defaults, for file names:
/// `None` when every value is the default.
pub fn tag(values: &[ParamValue]) -> Option<String> {
    let set: Vec<&ParamValue> = values.iter().filter(|v| !v.default).collect();
    if set.is_empty() {
        return None;
    }
    // SHA-256, not std's DefaultHasher: the tag names stored files, so it must not
    // change with the compiler.
    let mut h = Sha256::new();
    for v in set {
        h.update((v.name.len() as u64).to_le_bytes());
        h.update(v.name.as_bytes());
        h.update(v.value.to_bits().to_le_bytes());
    }
    let d = h.finalize();
    Some(format!("p{:02x}{:02x}{:02x}{:02x}", d[0], d[1], d[2], d[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_group_by_three_or_not_at_all() {
        for (text, want) in [
            ("1000", "1000"),
            ("1,000", "1000"),
            ("1_000", "1000"),
            ("12_345_678", "12345678"),
            ("100", "100"),
        ] {
            assert_eq!(plain_number(text, true).as_deref(), Some(want), "{text}");
        }
        for bad in [
            "1,0,0",
            "1_0_0",
            "10,00",
            "1,000_000",
            ",100",
            "100,",
            "1__000",
            "1e3",
            "-5",
            "+5",
            "0x10",
            "1 000",
            "",
            "inf",
            "NaN",
            "1.5",
        ] {
            assert_eq!(plain_number(bad, true), None, "{bad}");
        }
        assert_eq!(plain_number("0.5", false).as_deref(), Some("0.5"));
        assert_eq!(plain_number("1,000.25", false).as_deref(), Some("1000.25"));
        for bad in ["1.", ".5", "1.2.3", "1e-3", "inf", "1,0.5"] {
            assert_eq!(plain_number(bad, false), None, "{bad}");
        }
        let p = Param::int("tasks", 2, 1_000_000).defaults(100, 500);
        assert_eq!(p.parse("1,000"), Ok(1000.0));
        assert!(p.parse("1,0,0").is_err());
        assert!(p.parse("1_0_0").is_err());
    }

    const TASKS: Param = Param::int("tasks", 2, 1_000_000)
        .defaults(100, 500)
        .unit("tasks");
    const GAP: Param = Param::float("gap_ms", 0.0, 1000.0).defaults_f(10.0, 100.0);

    fn ov(s: &str) -> Override {
        Override::parse(s).unwrap()
    }

    #[test]
    fn defaults_per_profile_and_overrides() {
        let v = resolve("variants", &[TASKS, GAP], Profile::Quick, &[]).unwrap();
        assert_eq!((v[0].value, v[0].default), (100.0, true));
        assert_eq!(v[1].value, 10.0);
        assert_eq!(tag(&v), None);
        let v = resolve("variants", &[TASKS, GAP], Profile::Full, &[ov("tasks=40")]).unwrap();
        assert_eq!((v[0].value, v[0].default), (40.0, false));
        assert_eq!(v[1].value, 100.0);
        assert!(tag(&v).unwrap().starts_with('p'));
        // Setting the default value is the default result.
        let v = resolve("variants", &[TASKS], Profile::Quick, &[ov("tasks=100")]).unwrap();
        assert!(v[0].default && tag(&v).is_none());
        // An experiment-qualified override applies only there.
        let v = resolve(
            "sweep",
            &[TASKS],
            Profile::Quick,
            &[ov("variants.tasks=40")],
        )
        .unwrap();
        assert_eq!(v[0].value, 100.0);
        assert_eq!(
            resolve("x", &[TASKS], Profile::Quick, &[ov("tasks=1_000")]).unwrap()[0].value,
            1000.0
        );
    }

    #[test]
    fn bad_values_say_the_valid_range() {
        for bad in [
            "tasks=-1",
            "tasks=1",
            "tasks=2000000",
            "tasks=ten",
            "tasks=2.5",
        ] {
            let e = resolve("v", &[TASKS], Profile::Quick, &[ov(bad)]).unwrap_err();
            assert!(e.contains("an integer from 2 to 1,000,000"), "{bad}: {e}");
        }
        let e = resolve("v", &[GAP], Profile::Quick, &[ov("gap_ms=nan")]).unwrap_err();
        assert!(e.contains("a number from 0 to 1,000"), "{e}");
        assert!(Override::parse("tasks").is_err());
        assert!(Override::parse("=3").is_err());
    }

    const CHAPTERS: &[&str] = &["brigades", "throttles"];

    #[test]
    fn a_set_list_names_a_chapter_in_every_entry() {
        let s = SetList::parse(
            "COW_SET",
            [
                "brigades.tasks=2000",
                "throttles.x.gap_ms=3",
                "brigades.variants.tasks=9",
            ],
            CHAPTERS,
        )
        .unwrap();
        assert_eq!(s.chapters(), ["brigades", "throttles"]);
        assert_eq!(
            s.for_chapter("brigades"),
            [ov("tasks=2000"), ov("variants.tasks=9")]
        );
        assert_eq!(s.for_chapter("throttles"), [ov("x.gap_ms=3")]);
        assert!(s.for_chapter("short-sleeps").is_empty());
        for bad in ["tasks=2000", "brigdes.tasks=1", "nochapter", ".tasks=1"] {
            let e = SetList::parse("COW_SET", [bad], CHAPTERS).unwrap_err();
            assert!(
                e.starts_with("COW_SET: ")
                    && e.contains("names no chapter")
                    && e.contains("brigades, throttles"),
                "{bad}: {e}"
            );
        }
        let e = SetList::parse("--set", ["brigades.tasks"], CHAPTERS).unwrap_err();
        assert!(e.starts_with("--set: ") && e.contains("NAME=VALUE"), "{e}");
    }

    #[test]
    fn a_set_list_is_checked_against_a_chapter_s_parameters_and_ranges() {
        let exps: [(&str, &[Param]); 2] = [("variants", &[TASKS, GAP]), ("limits", &[])];
        let s = SetList::parse(
            "COW_SET",
            ["brigades.tasks=40", "throttles.nope=1"],
            CHAPTERS,
        )
        .unwrap();
        assert_eq!(s.check_for("brigades", &exps).unwrap(), [ov("tasks=40")]);
        let e = s.check_for("throttles", &exps).unwrap_err();
        assert!(e.contains("no parameter `nope`"), "{e}");
        let s = SetList::parse("COW_SET", ["brigades.tasks=abc"], CHAPTERS).unwrap();
        let e = s.check_for("brigades", &exps).unwrap_err();
        assert!(
            e.contains("tasks") && e.contains("an integer from 2"),
            "{e}"
        );
    }

    /// Issue 28, item 10: many entries are read in one pass each (no timing is
    /// checked: a quadratic reading of 50,000 entries would hold the test for minutes).
    #[test]
    fn many_entries_are_read_in_one_pass() {
        let items: Vec<String> = (0..50_000)
            .map(|i| format!("brigades.tasks={}", 2 + i % 900))
            .collect();
        let s = SetList::parse("COW_SET", items.iter().map(String::as_str), CHAPTERS).unwrap();
        let exps: [(&str, &[Param]); 1] = [("variants", &[TASKS])];
        assert_eq!(s.check_for("brigades", &exps).unwrap().len(), 50_000);
    }

    #[test]
    fn unknown_names_list_the_parameters() {
        let exps: [(&str, &[Param]); 2] = [("variants", &[TASKS, GAP]), ("limits", &[])];
        assert!(check_overrides(&[ov("tasks=3")], &exps).is_ok());
        let e = check_overrides(&[ov("no_such=1")], &exps).unwrap_err();
        assert!(
            e.contains("no_such")
                && e.contains("variants: tasks, gap_ms")
                && e.contains("limits: (none)"),
            "{e}"
        );
        let e = check_overrides(&[ov("nope.tasks=3")], &exps).unwrap_err();
        assert!(e.contains("variants, limits"), "{e}");
        let e = check_overrides(&[ov("limits.tasks=3")], &exps).unwrap_err();
        assert!(e.contains("limits: (none)"), "{e}");
    }
}
