//! Experiments, views and headline figures: the one typed contract from a chapter's
//! measuring code to its page.
//!
//! A chapter declares each experiment as an [`Experiment<R>`]: a function that runs
//! **one round** (every variant once) and returns the round's data `R`, and a function
//! that reads one value per variant out of `R` (its [`Reading`]s). The harness runs
//! rounds — each in a fresh worker process unless the experiment says why not — until
//! the budget says stop, stores them, and hands views the typed rounds back
//! ([`Results<R>`]). Erasure to JSON, caching and Markdown happen here, once.

use crate::noise::Noise;
use crate::params::{Param, ParamValue};
use crate::profile::Profile;
use crate::record::{Keyed, Note, NoteKind, Reading, ReadingKey, Record, RoundRecord, Unit};
use crate::stats::{Comparison, Estimate};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

/// How long an experiment may measure, and how many rounds it runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Rounds start only while they are expected to end within this time.
    pub time: Duration,
    /// Rounds to run before the interval may stop the run (the interval reaches
    /// 95 % only from 6 rounds).
    pub min_rounds: u32,
    pub max_rounds: u32,
    /// Stop early once every reading's interval is within this fraction of its median.
    pub target: f64,
}

/// Whatever the budget says, a run has at least this many rounds when its bound
/// allows (fewer cannot give an interval at all).
pub const MIN_ROUNDS: u32 = 3;

impl Budget {
    /// The quick profile: rounds until every interval's half-width is at most 10 % of its
    /// median, from 6 rounds on, or until `seconds` are spent.
    pub const fn quick(seconds: u64) -> Budget {
        Budget {
            time: Duration::from_secs(seconds),
            min_rounds: 6,
            max_rounds: 40,
            target: 0.10,
        }
    }

    /// The full profile: exactly `rounds` rounds (at least 10), within `seconds`.
    pub const fn full(seconds: u64, rounds: u32) -> Budget {
        let rounds = if rounds < 10 { 10 } else { rounds };
        Budget {
            time: Duration::from_secs(seconds),
            min_rounds: rounds,
            max_rounds: rounds,
            target: 0.0,
        }
    }

    pub const fn rounds(self, min: u32, max: u32) -> Budget {
        Budget {
            min_rounds: min,
            max_rounds: max,
            ..self
        }
    }

    /// The hard bound: past it the worker is killed. Rounds should stop themselves at
    /// their deadline well before.
    pub fn bound(&self) -> Duration {
        self.time + (self.time / 2).max(Duration::from_millis(2_500))
    }
}

/// Where an experiment's rounds run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Each round in a fresh worker process, so CPU placement, address-space layout
    /// and the state of the allocator vary between rounds as between rebuilds.
    FreshProcess,
    /// All rounds in one worker process, for the reason given (shown on the page).
    OneProcess(&'static str),
}

impl Isolation {
    pub fn describe(self) -> String {
        match self {
            Isolation::FreshProcess => "a fresh process per round".into(),
            Isolation::OneProcess(why) => format!("all rounds in one process ({why})"),
        }
    }
}

/// What a round gets while it runs: the profile, the round's index, the parameters,
/// the deadline, and a place for notes and details.
pub struct Ctx {
    pub profile: Profile,
    /// 0 for the first round.
    pub round: u32,
    params: Vec<ParamValue>,
    details: Vec<(String, String)>,
    deadline: Instant,
    notes: Vec<Note>,
}

impl Ctx {
    pub fn new(profile: Profile, round: u32, params: Vec<ParamValue>, deadline: Instant) -> Ctx {
        Ctx {
            profile,
            round,
            params,
            details: Vec::new(),
            deadline,
            notes: Vec::new(),
        }
    }

    /// A context for calling a round function directly (tests, benchmarks): the
    /// declared defaults of `profile`, round 0, and `bound` to run.
    pub fn for_test(profile: Profile, params: &[Param], bound: Duration) -> Ctx {
        let values =
            crate::params::resolve("test", params, profile, &[]).expect("defaults are valid");
        Ctx::new(profile, 0, values, Instant::now() + bound)
    }

    fn value(&self, p: &Param) -> f64 {
        self.params
            .iter()
            .find(|v| v.name == p.name)
            .map(|v| v.value)
            .unwrap_or_else(|| panic!("parameter `{}` is not declared by this experiment", p.name))
    }

    /// An integer parameter's value (declared with [`Param::int`]).
    pub fn int(&self, p: &Param) -> u64 {
        self.value(p).max(0.0) as u64
    }

    /// An integer parameter as a `usize`.
    pub fn count(&self, p: &Param) -> usize {
        self.int(p) as usize
    }

    /// A real-valued parameter's value.
    pub fn float(&self, p: &Param) -> f64 {
        self.value(p)
    }

    /// A fact of this run for the provenance line (a size derived from the
    /// parameters, a limit that was read); the first round's is kept.
    pub fn detail(&mut self, name: &str, value: impl std::fmt::Display) {
        if let Some(d) = self.details.iter_mut().find(|(n, _)| n == name) {
            d.1 = value.to_string();
        } else {
            self.details.push((name.to_string(), value.to_string()));
        }
    }

    /// A note the reader sees under every view of this result. Paths that would name
    /// this machine's user or cgroup are replaced by neutral words.
    pub fn note(&mut self, kind: NoteKind, text: impl AsRef<str>) {
        let text = crate::privacy::scrub(text.as_ref());
        if !self.notes.iter().any(|n| n.kind == kind && n.text == text) {
            self.notes.push(Note { kind, text });
        }
    }

    /// When the round must stop, keeping what it has, and say so with a note.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    pub fn past_deadline(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Time left before the deadline (zero once past it).
    pub fn time_left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// `items` in the order this round runs them: the round's row of a balanced Latin
    /// square (Williams' design), so that over `n` rounds (`2n` for an odd count) each
    /// variant runs once in every position and, for an even count, right after each
    /// other variant once; no variant always follows the same one.
    pub fn rotated<T: Clone>(&self, items: &[T]) -> Vec<T> {
        latin_row(items, self.round)
    }

    pub(crate) fn into_parts(self) -> (Vec<Note>, Vec<(String, String)>) {
        (self.notes, self.details)
    }
}

/// One experiment whose rounds return `R`. Build it with [`Experiment::new`] and the
/// `const` setters.
pub struct Experiment<R> {
    pub name: &'static str,
    pub about: &'static str,
    pub params: &'static [Param],
    pub budget: fn(Profile) -> Budget,
    pub isolation: Isolation,
    /// Runs one round: every variant once, in the order [`Ctx::rotated`] gives.
    pub round: fn(&mut Ctx) -> anyhow::Result<R>,
    /// One value per variant of a round, the figures the rounds are summarised by.
    pub readings: fn(&R) -> Vec<Reading>,
    data: PhantomData<fn() -> R>,
}

impl<R> Experiment<R> {
    pub const fn new(
        name: &'static str,
        about: &'static str,
        round: fn(&mut Ctx) -> anyhow::Result<R>,
        readings: fn(&R) -> Vec<Reading>,
    ) -> Experiment<R> {
        Experiment {
            name,
            about,
            params: &[],
            budget: default_budget,
            isolation: Isolation::FreshProcess,
            round,
            readings,
            data: PhantomData,
        }
    }

    pub const fn params(self, params: &'static [Param]) -> Experiment<R> {
        Experiment { params, ..self }
    }

    pub const fn budget(self, budget: fn(Profile) -> Budget) -> Experiment<R> {
        Experiment { budget, ..self }
    }

    /// Runs every round in one worker process, for the reason given.
    pub const fn one_process(self, why: &'static str) -> Experiment<R> {
        Experiment {
            isolation: Isolation::OneProcess(why),
            ..self
        }
    }
}

fn default_budget(p: Profile) -> Budget {
    p.pick(Budget::quick(5), Budget::full(60, 10))
}

/// An experiment with its data type erased: what the harness's runner, cache and
/// command line see.
pub trait AnyExperiment: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    fn params(&self) -> &'static [Param];
    fn budget(&self, profile: Profile) -> Budget;
    fn isolation(&self) -> Isolation;
    /// Runs one round and erases its data to JSON; the executor fills in its noise.
    fn run_round(&self, ctx: Ctx) -> anyhow::Result<RoundRecord>;
    /// Whether every round of `record` decodes into this experiment's own round type:
    /// checked before an imported record is stored (issue 28: rounds of `{}` replaced a
    /// good result, and the page then had nothing to show), and before a stored one is
    /// shown. Each reading must also be one this experiment's code gives for that
    /// round's data, in its unit (issue 35, item 4: a time stored as a size was shown
    /// as one); the record's parameters lie in their declared ranges, it holds no more
    /// rounds than its profile's budget runs, and each round's counts are within what
    /// the code makes with those parameters ([`crate::bounds::RoundBounds`]).
    fn check_rounds(&self, record: &Record) -> Result<(), String>;
}

impl<R: Serialize + DeserializeOwned + crate::bounds::RoundBounds + 'static> AnyExperiment
    for Experiment<R>
{
    fn name(&self) -> &'static str {
        self.name
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn params(&self) -> &'static [Param] {
        self.params
    }
    fn budget(&self, profile: Profile) -> Budget {
        (self.budget)(profile)
    }
    fn isolation(&self) -> Isolation {
        self.isolation
    }
    fn run_round(&self, mut ctx: Ctx) -> anyhow::Result<RoundRecord> {
        let data = (self.round)(&mut ctx)?;
        let readings = (self.readings)(&data);
        let index = ctx.round;
        let (notes, details) = ctx.into_parts();
        Ok(RoundRecord {
            index,
            noise: Noise::default(),
            readings,
            data: serde_json::to_value(&data)?,
            notes,
            details,
        })
    }
    fn check_rounds(&self, record: &Record) -> Result<(), String> {
        self.check_params(record)?;
        // No more rounds than the record's profile runs of this experiment (issue 35,
        // item 2), rather than a book-wide cap.
        let max = self.budget(record.profile).max_rounds;
        if record.rounds.len() > max as usize {
            return Err(format!(
                "it holds {} rounds; the {} profile runs at most {max} of `{}` (its budget)",
                record.rounds.len(),
                record.profile,
                self.name
            ));
        }
        let params = crate::bounds::Params::of(record);
        let strict = params.this_os();
        record.rounds.iter().try_for_each(|r| {
            let data = R::deserialize(&r.data).map_err(|e| {
                format!(
                    "round {} does not have the shape of `{}`'s rounds ({e})",
                    r.index, self.name
                )
            })?;
            // Every stored reading is one the code gives for this round's data, in the
            // unit it gives it, once (issue 35, items 4 and 15). A record of another
            // OS's build may hold arms this build lacks: those are not refused.
            let made = (self.readings)(&data);
            let mut seen = std::collections::HashSet::new();
            for x in &r.readings {
                let name = crate::safe::terminal(&x.key.chars().take(80).collect::<String>());
                if !seen.insert(x.key.as_str()) {
                    return Err(format!(
                        "round {}: the reading {name} is stored twice",
                        r.index
                    ));
                }
                match made.iter().find(|m| m.key == x.key) {
                    // Another OS's build has arms this one's code does not give; its
                    // readings are held to the unit where this code names them.
                    None if !strict => {}
                    None => {
                        return Err(format!(
                            "round {}: the reading {name} is not one `{}` gives for that round's data",
                            r.index, self.name
                        ));
                    }
                    Some(m) if m.unit != x.unit => {
                        return Err(format!(
                            "round {}: the reading {name} is stored in {}, but `{}` gives it in {}",
                            r.index,
                            x.unit.name(),
                            self.name,
                            m.unit.name()
                        ));
                    }
                    Some(_) => {}
                }
            }
            data.check_bounds(&params)
                .map_err(|why| format!("round {}: {why}", r.index))
        })
    }
}

impl<R> Experiment<R> {
    /// Every parameter the record stores is one this experiment takes, within its
    /// declared range (a whole number where it takes one): the round bounds read them.
    fn check_params(&self, record: &Record) -> Result<(), String> {
        for v in &record.params {
            let name = crate::safe::terminal(&v.name.chars().take(80).collect::<String>());
            let Some(p) = self.params.iter().find(|p| p.name == v.name) else {
                return Err(format!(
                    "it stores the parameter {name}, which `{}` does not take",
                    self.name
                ));
            };
            if !(p.min <= v.value && v.value <= p.max) || (p.integer && v.value.fract() != 0.0) {
                return Err(format!(
                    "its parameter {name} is {}, outside what `{}` takes ({})",
                    v.value,
                    self.name,
                    p.range_text()
                ));
            }
        }
        Ok(())
    }
}

/// One round, typed, as views see it.
pub struct Round<'a, R> {
    pub index: u32,
    pub record: &'a RoundRecord,
    pub data: R,
}

/// A stored result with its rounds decoded into the experiment's own type.
pub struct Results<'a, R> {
    pub record: &'a Record,
    pub rounds: Vec<Round<'a, R>>,
}

impl<'a, R: DeserializeOwned> Results<'a, R> {
    pub fn decode(record: &'a Record) -> anyhow::Result<Results<'a, R>> {
        let rounds = record
            .rounds
            .iter()
            .map(|r| {
                Ok(Round {
                    index: r.index,
                    record: r,
                    data: serde_json::from_value(r.data.clone()).map_err(|e| {
                        anyhow::anyhow!(
                            "the stored result of `{}` does not have the expected shape ({e}); run `make regenerate`",
                            record.experiment
                        )
                    })?,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Results { record, rounds })
    }
}

/// Readings are asked for by the round type's own key ([`Keyed`]), never by a string.
impl<R: Keyed> Results<'_, R> {
    /// The median over rounds of a reading, with its interval.
    pub fn estimate(&self, key: &R::Key) -> Option<Estimate> {
        self.record.estimate(&key.stored())
    }

    /// The per-round ratio of two readings.
    pub fn ratio(&self, num: &R::Key, den: &R::Key) -> Option<Estimate> {
        self.record.ratio(&num.stored(), &den.stored())
    }

    /// The per-round difference `a − b` of two readings (see [`Record::difference`]).
    pub fn difference(&self, a: &R::Key, b: &R::Key) -> Option<Estimate> {
        self.record.difference(&a.stored(), &b.stored())
    }

    /// Two readings judged on their pairs (see [`Record::compare`]).
    pub fn compare(&self, a: &R::Key, b: &R::Key) -> Option<Comparison> {
        self.record.compare(&a.stored(), &b.stored())
    }
}

impl<R> Results<'_, R> {
    /// The median over rounds of any per-round value the views derive from the data.
    pub fn estimate_of(&self, f: impl Fn(&R) -> Option<f64>) -> Option<Estimate> {
        let v: Vec<f64> = self.rounds.iter().filter_map(|r| f(&r.data)).collect();
        Estimate::of_rounds(&v)
    }

    /// Two per-round values the views derive from the data, judged on their pairs:
    /// each round gives one of each (NaN where it lacks one).
    pub fn compare_of(
        &self,
        a: impl Fn(&R) -> Option<f64>,
        b: impl Fn(&R) -> Option<f64>,
    ) -> Option<Comparison> {
        let va: Vec<f64> = self
            .rounds
            .iter()
            .map(|r| a(&r.data).unwrap_or(f64::NAN))
            .collect();
        let vb: Vec<f64> = self
            .rounds
            .iter()
            .map(|r| b(&r.data).unwrap_or(f64::NAN))
            .collect();
        Comparison::paired(&va, &vb)
    }

    /// Every round's data, for pooling distributions.
    pub fn data(&self) -> impl Iterator<Item = &R> {
        self.rounds.iter().map(|r| &r.data)
    }

    pub fn param(&self, name: &str) -> Option<f64> {
        self.record.param(name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKind {
    Table,
    Plot,
}

/// A table or plot rendered from one experiment's typed results.
pub struct View<R: 'static> {
    pub name: &'static str,
    pub kind: ViewKind,
    pub experiment: &'static Experiment<R>,
    pub render: fn(&Results<R>) -> anyhow::Result<String>,
    /// Shows only the provenance line under it, not the run's notes: for a second
    /// view of a result whose first view on the page carries them.
    pub brief: bool,
}

impl<R> View<R> {
    pub const fn table(
        name: &'static str,
        experiment: &'static Experiment<R>,
        render: fn(&Results<R>) -> anyhow::Result<String>,
    ) -> View<R> {
        View {
            name,
            kind: ViewKind::Table,
            experiment,
            render,
            brief: false,
        }
    }

    pub const fn plot(
        name: &'static str,
        experiment: &'static Experiment<R>,
        render: fn(&Results<R>) -> anyhow::Result<String>,
    ) -> View<R> {
        View {
            name,
            kind: ViewKind::Plot,
            experiment,
            render,
            brief: false,
        }
    }

    /// Leaves the run's notes to another view of the same result on the page.
    pub const fn brief(self) -> View<R> {
        View {
            brief: true,
            ..self
        }
    }
}

/// A view with its data type erased.
pub trait AnyView: Sync {
    fn name(&self) -> &'static str;
    fn kind(&self) -> ViewKind;
    fn experiment(&self) -> &'static str;
    fn brief(&self) -> bool;
    fn render(&self, record: &Record) -> anyhow::Result<String>;
}

impl<R: DeserializeOwned + 'static> AnyView for View<R> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn kind(&self) -> ViewKind {
        self.kind
    }
    fn experiment(&self) -> &'static str {
        self.experiment.name
    }
    fn brief(&self) -> bool {
        self.brief
    }
    fn render(&self, record: &Record) -> anyhow::Result<String> {
        (self.render)(&Results::decode(record)?)
    }
}

/// A figure a chapter names as its headline: one reading of one experiment, the
/// median over rounds with its interval. The guide, the appendix, `changes` and
/// `compare` read figures only through these.
#[derive(Debug, Clone, Copy)]
pub struct Headline {
    pub name: &'static str,
    pub experiment: &'static str,
    /// The reading, by the experiment's own key type.
    pub reading: &'static (dyn ReadingKey + Sync),
    /// The parameters that say what the figure is (e.g. `tasks`), copied into it.
    pub params: &'static [&'static str],
    pub about: &'static str,
}

impl Headline {
    pub const fn new<R: Keyed<Key: Sync + 'static>>(
        name: &'static str,
        experiment: &Experiment<R>,
        reading: &'static R::Key,
    ) -> Headline {
        Headline {
            name,
            experiment: experiment.name,
            reading,
            params: &[],
            about: "",
        }
    }

    pub const fn params(self, params: &'static [&'static str]) -> Headline {
        Headline { params, ..self }
    }

    pub const fn about(self, about: &'static str) -> Headline {
        Headline { about, ..self }
    }
}

/// A headline figure with its value, as `all-results headlines --json` prints it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Figure {
    pub chapter: String,
    pub name: String,
    pub unit: Unit,
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub confidence: f64,
    pub rounds: u32,
    /// Where the rounds drifted over the session, their correlation ([`crate::stats::drift`]):
    /// they then count as fewer independent ones for a verdict. Absent otherwise, and in
    /// files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<f64>,
    pub params: serde_json::Map<String, serde_json::Value>,
    pub profile: Profile,
    pub measured_at: String,
    /// The machine it was measured on, in one line.
    pub machine: String,
    /// The median and its interval as the book writes them, so that a page's script
    /// (the compare page's) shows them without a formatter of its own. Empty in files
    /// written before it existed.
    #[serde(default)]
    pub shown: String,
}

impl Figure {
    pub fn estimate(&self) -> Estimate {
        Estimate {
            median: self.median,
            lo: self.lo,
            hi: self.hi,
            confidence: self.confidence,
            n: self.rounds,
            drift: self.drift,
        }
    }

    /// Reads a headline out of the record of its experiment.
    pub fn of(h: &Headline, record: &Record) -> Option<Figure> {
        let key = h.reading.stored();
        let e = record.estimate(&key)?;
        let mut params = serde_json::Map::new();
        for name in h.params {
            if let Some(p) = record.params.iter().find(|p| p.name == *name) {
                let v = if p.integer {
                    serde_json::Value::from(p.value as i64)
                } else {
                    serde_json::Value::from(p.value)
                };
                params.insert(p.name.clone(), v);
            }
        }
        let unit = record.unit(&key)?;
        Some(Figure {
            chapter: record.chapter.clone(),
            name: h.name.to_string(),
            unit,
            shown: crate::fmt::fmt_estimate(&e, unit).to_string(),
            median: e.median,
            lo: e.lo,
            hi: e.hi,
            confidence: e.confidence,
            rounds: e.n,
            drift: e.drift,
            params,
            profile: record.profile,
            measured_at: record.provenance.measured_at.clone(),
            machine: crate::machine::machine_line(&record.provenance.machine),
        })
    }
}

/// Everything a chapter binary serves.
pub struct Chapter {
    /// The crate's package name, which is also the chapter's slug.
    pub name: &'static str,
    /// `env!("CARGO_MANIFEST_DIR")` of the chapter crate.
    pub dir: &'static str,
    /// `env!("COW_SOURCE_HASH")`, embedded by the build script.
    pub source_hash: &'static str,
    /// `env!("COW_CODE_KEY")`, embedded by the build script.
    pub key: &'static str,
    /// `env!("COW_BUILD")`: `release` or `debug`.
    pub build: &'static str,
    pub experiments: &'static [&'static dyn AnyExperiment],
    pub views: &'static [&'static dyn AnyView],
    pub headlines: &'static [Headline],
    /// What the chapter concludes, as data: its decision table (`table answer`), the
    /// guide's rows and the appendix's overview are rendered from these.
    pub findings: &'static [&'static dyn crate::evidence::AnyFinding],
}

/// Declares a chapter's [`Chapter`] with the build script's key embedded:
/// `harness::chapter!(experiments: [...], views: [...], headlines: [...])`.
#[macro_export]
macro_rules! chapter {
    (experiments: [$($e:expr),* $(,)?], views: [$($v:expr),* $(,)?], headlines: [$($h:expr),* $(,)?] $(,)?) => {
        $crate::chapter!(experiments: [$($e),*], views: [$($v),*], headlines: [$($h),*], findings: [])
    };
    (experiments: [$($e:expr),* $(,)?], views: [$($v:expr),* $(,)?], headlines: [$($h:expr),* $(,)?], findings: [$($f:expr),* $(,)?] $(,)?) => {
        $crate::Chapter {
            name: env!("CARGO_PKG_NAME"),
            dir: env!("CARGO_MANIFEST_DIR"),
            source_hash: env!("COW_SOURCE_HASH"),
            key: env!("COW_CODE_KEY"),
            build: env!("COW_BUILD"),
            experiments: &[$(&$e),*],
            views: &[$(&$v),*],
            headlines: &[$($h),*],
            findings: &[$(&$f),*],
        }
    };
}

impl Chapter {
    pub fn experiment(&self, name: &str) -> Option<&'static dyn AnyExperiment> {
        self.experiments.iter().copied().find(|e| e.name() == name)
    }

    pub fn view(&self, kind: ViewKind, name: &str) -> Option<&'static dyn AnyView> {
        self.views
            .iter()
            .copied()
            .find(|v| v.kind() == kind && v.name() == name)
    }

    /// The names `table` and `plot` take: the views, and for a chapter with findings
    /// the decision table, `answer`, first.
    pub fn view_names(&self, kind: ViewKind) -> Vec<&'static str> {
        let table = kind == ViewKind::Table;
        let answer = (table && self.findings.iter().any(|f| !f.is_threat())).then_some("answer");
        let threats = (table && self.findings.iter().any(|f| f.is_threat())).then_some("threats");
        answer
            .into_iter()
            .chain(threats)
            .chain(
                self.views
                    .iter()
                    .filter(|v| v.kind() == kind)
                    .map(|v| v.name()),
            )
            .collect()
    }

    pub fn headline(&self, name: &str) -> Option<&Headline> {
        self.headlines.iter().find(|h| h.name == name)
    }

    /// The registry's own consistency: unique names, every view and headline naming
    /// an experiment of this chapter.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for e in self.experiments {
            if !seen.insert(("experiment", e.name())) {
                return Err(format!("{}: experiment `{}` twice", self.name, e.name()));
            }
            let mut params = std::collections::HashSet::new();
            for p in e.params() {
                if !params.insert(p.name) {
                    return Err(format!(
                        "{}/{}: parameter `{}` twice",
                        self.name,
                        e.name(),
                        p.name
                    ));
                }
                if !(p.min <= p.quick && p.quick <= p.max && p.min <= p.full && p.full <= p.max) {
                    return Err(format!(
                        "{}/{}: parameter `{}` has a default outside its range",
                        self.name,
                        e.name(),
                        p.name
                    ));
                }
            }
        }
        for v in self.views {
            let kind = if v.kind() == ViewKind::Table {
                "table"
            } else {
                "plot"
            };
            if !seen.insert((kind, v.name())) {
                return Err(format!("{}: {kind} `{}` twice", self.name, v.name()));
            }
            if self.experiment(v.experiment()).is_none() {
                return Err(format!(
                    "{}: {kind} `{}` reads experiment `{}`, which is not in the chapter",
                    self.name,
                    v.name(),
                    v.experiment()
                ));
            }
        }
        for f in self.findings {
            if !seen.insert(("finding", f.id())) {
                return Err(format!("{}: finding `{}` twice", self.name, f.id()));
            }
            if self.experiment(f.experiment()).is_none() {
                return Err(format!(
                    "{}: finding `{}` reads experiment `{}`, which is not in the chapter",
                    self.name,
                    f.id(),
                    f.experiment()
                ));
            }
        }
        if self.findings.iter().any(|f| !f.is_threat()) && !seen.insert(("table", "answer")) {
            return Err(format!(
                "{}: a view is named `answer`, the name of the findings' decision table",
                self.name
            ));
        }
        if self.findings.iter().any(|f| f.is_threat()) && !seen.insert(("table", "threats")) {
            return Err(format!(
                "{}: a view is named `threats`, the name of the threats-to-validity table",
                self.name
            ));
        }
        for h in self.headlines {
            if !seen.insert(("headline", h.name)) {
                return Err(format!("{}: headline `{}` twice", self.name, h.name));
            }
            let Some(e) = self.experiment(h.experiment) else {
                return Err(format!(
                    "{}: headline `{}` reads experiment `{}`, which is not in the chapter",
                    self.name, h.name, h.experiment
                ));
            };
            for p in h.params {
                if !e.params().iter().any(|d| d.name == *p) {
                    return Err(format!(
                        "{}: headline `{}` names parameter `{p}`, which `{}` does not declare",
                        self.name, h.name, h.experiment
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `items` in round `r`'s order: row `r / 2` of a balanced Latin square (Williams'
/// design), run backwards in odd rounds. Over the square's rows each item takes every
/// position equally often and, for an even count, follows each other item; and any two
/// items swap their order from each even round to the next. A run stops after a few
/// rounds, far fewer than the square's rows, and within a few consecutive rows two
/// items mostly keep their order: the A/A twin of a 30-arm experiment ran two places
/// before its original in all 6 rounds of one run. Reversal makes the order of every
/// pair alternate, so an effect of running first cannot take one side in every round.
pub fn latin_row<T: Clone>(items: &[T], r: u32) -> Vec<T> {
    let mut order = williams_row(items, r / 2);
    if r % 2 == 1 {
        order.reverse();
    }
    order
}

/// Row `r` of a balanced Latin square (Williams' design): over `n` rows (`2n` for an
/// odd count) each item takes every position once and, for an even count, follows
/// each other item once.
fn williams_row<T: Clone>(items: &[T], r: u32) -> Vec<T> {
    let n = items.len();
    if n == 0 {
        return Vec::new();
    }
    let r = r as usize;
    // 0, 1, n-1, 2, n-2, 3, …
    let base = (0..n).map(|j| match j {
        0 => 0,
        j if j % 2 == 1 => j.div_ceil(2),
        j => n - j / 2,
    });
    let mut order: Vec<T> = base.map(|b| items[(b + r) % n].clone()).collect();
    if n % 2 == 1 && (r / n) % 2 == 1 {
        order.reverse();
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: the door an experiment keeps for its records. The fixture's `ok` makes
    /// rounds of `n` (its parameter, 3 in quick) and one reading, `steady`, in ns.
    #[test]
    fn a_record_is_held_to_its_parameters_budget_and_readings() {
        use crate::fixture::{OK, Steady};
        let good = || {
            let mut r = crate::fixture::record_of_readings(
                "fixture",
                "ok",
                vec![vec![Reading::of(&Steady, Unit::Nanos, 1003.0)]; 6],
            );
            r.params = crate::params::resolve("ok", OK.params, Profile::Quick, &[]).unwrap();
            for x in &mut r.rounds {
                x.data = serde_json::json!({"pid": 1, "round": x.index, "n": 3});
            }
            r
        };
        assert_eq!(OK.check_rounds(&good()), Ok(()));
        type Lie = fn(&mut Record);
        let lies: &[(Lie, &str)] = &[
            (
                |r| r.rounds[2].data["n"] = 4_294_967_295u64.into(),
                "round 2: n holds 4,294,967,295 things; this experiment makes at most 3 a round (n = 3)",
            ),
            (
                |r| r.params[0].value = 5_000.0,
                "its parameter n is 5000, outside what `ok` takes (an integer from 1 to 1,000)",
            ),
            (
                |r| r.params[0].value = 2.5,
                "its parameter n is 2.5, outside what `ok` takes",
            ),
            (
                |r| r.params[0].name = "gap_ms".into(),
                "it stores the parameter gap_ms, which `ok` does not take",
            ),
            (
                |r| {
                    r.rounds = (0..7)
                        .flat_map(|_| r.rounds.clone())
                        .enumerate()
                        .map(|(i, x)| RoundRecord {
                            index: i as u32,
                            ..x
                        })
                        .collect()
                },
                "it holds 42 rounds; the quick profile runs at most 40 of `ok` (its budget)",
            ),
            (
                |r| {
                    r.rounds[1]
                        .readings
                        .push(Reading::new("other", Unit::Nanos, 1.0))
                },
                "round 1: the reading other is not one `ok` gives for that round's data",
            ),
            (
                |r| r.rounds[1].readings[0].unit = Unit::Bytes,
                "round 1: the reading steady is stored in bytes, but `ok` gives it in ns",
            ),
            (
                |r| {
                    let twice = r.rounds[0].readings[0].clone();
                    r.rounds[0].readings.push(twice)
                },
                "round 0: the reading steady is stored twice",
            ),
        ];
        for (lie, why) in lies {
            let mut r = good();
            lie(&mut r);
            let e = OK.check_rounds(&r).unwrap_err();
            assert!(e.starts_with(why), "{e}");
        }
        // A record of another OS's build may hold arms this build lacks.
        let mut other = good();
        other.provenance.machine.target_os = Some(match crate::machine::TargetOs::this_build() {
            crate::machine::TargetOs::Windows => crate::machine::TargetOs::Linux,
            _ => crate::machine::TargetOs::Windows,
        });
        other.rounds[1]
            .readings
            .push(Reading::new("other", Unit::Nanos, 1.0));
        assert_eq!(OK.check_rounds(&other), Ok(()));
    }

    #[test]
    fn rounds_follow_a_balanced_latin_square() {
        let ctx = |round| Ctx::new(Profile::Quick, round, vec![], Instant::now());
        for n in [2usize, 3, 4, 5, 12, 30] {
            let items: Vec<usize> = (0..n).collect();
            let rows = if n % 2 == 0 { n } else { 2 * n };
            // Even rounds walk the square's rows; odd ones run the row before backwards.
            let orders: Vec<Vec<usize>> = (0..rows)
                .map(|r| ctx(2 * r as u32).rotated(&items))
                .collect();
            for r in 0..2 * rows as u32 {
                let (this, next) = (ctx(r).rotated(&items), ctx(r + 1).rotated(&items));
                if r % 2 == 0 {
                    let mut back = this.clone();
                    back.reverse();
                    assert_eq!(next, back, "n = {n}: round {} reverses round {r}", r + 1);
                }
                // Any two items swap order from an even round to the next.
                let at = |o: &[usize], x| o.iter().position(|y| *y == x).unwrap();
                if r % 2 == 0 {
                    for a in 0..n {
                        for b in a + 1..n {
                            let before = at(&this, a) < at(&this, b);
                            assert_ne!(before, at(&next, a) < at(&next, b), "n = {n}: {a}, {b}");
                        }
                    }
                }
            }
            for order in &orders {
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, items, "each round runs every variant once");
            }
            for item in 0..n {
                let mut positions: Vec<usize> = orders[..n]
                    .iter()
                    .map(|o| o.iter().position(|x| *x == item).unwrap())
                    .collect();
                positions.sort();
                assert_eq!(positions, items, "n = {n}: {item} takes every position");
            }
            for a in 0..n {
                for b in (0..n).filter(|b| *b != a) {
                    assert!(
                        orders.iter().any(|o| o.windows(2).any(|w| w == [a, b])),
                        "n = {n}: {b} never runs right after {a}"
                    );
                }
            }
        }
        assert_eq!(ctx(0).rotated(&[0, 1, 2, 3]), vec![0, 1, 3, 2]);
        assert_eq!(ctx(1).rotated(&[0, 1, 2, 3]), vec![2, 3, 1, 0]);
        assert!(ctx(3).rotated::<u8>(&[]).is_empty());
    }
}
