//! A measured result as stored in the cache and rendered into the book: the rounds,
//! each with its readings (one value per variant), its noise and its raw data, and
//! everything needed to say where and how it was measured.

use crate::machine::Machine;
use crate::noise::Noise;
use crate::params::ParamValue;
use crate::profile::Profile;
use crate::stats::{Comparison, Estimate, paired_ratio, spread};
use serde::{Deserialize, Serialize};

/// The version of the stored format; records of another version are not read.
pub const FORMAT: u32 = 2;

/// Why a note is shown under a table or plot.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum NoteKind {
    /// A resource limit stopped the experiment early.
    Limit,
    /// The experiment's time bound or budget was reached.
    Timeout,
    /// This operating system lacks what the experiment needs.
    Unsupported,
    /// The rounds were disturbed, or disagree widely.
    Noise,
    /// Anything else the reader should know about this run.
    Info,
}

impl NoteKind {
    /// Every kind, in declaration order (a test checks that none is missing).
    pub const ALL: [NoteKind; 5] = [
        NoteKind::Limit,
        NoteKind::Timeout,
        NoteKind::Unsupported,
        NoteKind::Noise,
        NoteKind::Info,
    ];

    pub fn label(self) -> &'static str {
        match self {
            NoteKind::Limit => "Limit reached",
            NoteKind::Timeout => "Time bound reached",
            NoteKind::Unsupported => "Not available on this system",
            NoteKind::Noise => "Noise",
            NoteKind::Info => "Note",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Note {
    pub kind: NoteKind,
    pub text: String,
}

pub use crate::unit::Unit;

/// One value a round gives for one variant: that round's median latency, per-call
/// mean, lap time, achieved rate …
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reading {
    /// Names the variant and the measure, e.g. `std · mpsc · blocking`.
    pub key: String,
    pub unit: Unit,
    pub value: f64,
}

impl Reading {
    /// A reading under a plain string key: for the harness's own tests and tools. A
    /// chapter names its readings with its own key type, through [`Reading::of`].
    pub fn new(key: impl Into<String>, unit: Unit, value: f64) -> Reading {
        Reading {
            key: key.into(),
            unit,
            value,
        }
    }

    /// A reading under a chapter's typed key, stored as the key's [`ReadingKey::stored`].
    pub fn of(key: &impl ReadingKey, unit: Unit, value: f64) -> Reading {
        Reading::new(key.stored(), unit, value)
    }
}

/// A chapter's name for one of its readings, as a value of its own type (an enum of its
/// variants, or a variant with its size): the experiment stores the reading under
/// [`ReadingKey::stored`], and views, headlines and the A/A twin ask for it by the same
/// value, never by a string. A reading a view asks for then cannot be spelled
/// differently from the one the experiment stored, and a renamed label, which the key
/// may use, renames both. `stored` is written with the measuring code's own names and
/// formats, inside the code key, never with the page layer's.
pub trait ReadingKey: std::fmt::Debug {
    /// The string a record stores the reading under. The same value always gives the
    /// same string, and two values never share one: stored results are found by it, so
    /// it changes only with the code key.
    fn stored(&self) -> String;
}

/// A round type's reading keys: what [`crate::experiment::Results`] of these rounds is
/// asked for.
pub trait Keyed {
    type Key: ReadingKey;
}

/// The stored key of an A/A twin: the original's followed by [`crate::AA_TWIN`].
pub fn twin_key(original: &str) -> String {
    format!("{original}{}", crate::AA_TWIN)
}

/// One round: the one type that carries a round from the experiment's function
/// (`AnyExperiment::run_round`) through the worker's pipe and the
/// round loop into the stored record. The executor fills in `noise` around the round;
/// the round loop moves `notes` and `details` up to the run (they say the same thing
/// every round), so a stored round never carries them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RoundRecord {
    pub index: u32,
    pub noise: Noise,
    pub readings: Vec<Reading>,
    /// The experiment's own data for this round; its views know its type.
    pub data: serde_json::Value,
    /// What the round noted about itself (limits reached, an OS feature missing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// What the round recorded of its set-up, for the provenance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<(String, String)>,
}

/// How a round ended: the round, or the [`Status`] that ended the run (never
/// [`Status::Ok`]).
pub type RoundEnd = Result<RoundRecord, Status>;

/// How the run ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Status {
    /// At least one round finished.
    Ok,
    /// No round finished before the bound; the worker was killed.
    TimedOut { after_s: f64 },
    /// The experiment returned an error or panicked.
    Failed { error: String },
    /// The worker process died (a signal: a crash, or the out-of-memory killer).
    Crashed { what: String },
}

impl Status {
    pub fn describe(&self) -> String {
        match self {
            Status::Ok => "ok".into(),
            Status::TimedOut { after_s } => {
                format!("timed out after {after_s:.0} s and was stopped")
            }
            Status::Failed { error } => format!("failed: {error}"),
            Status::Crashed { what } => format!("its worker process {what}"),
        }
    }
}

/// Where and when a result was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    pub machine: Machine,
    /// UTC, to the second.
    pub measured_at: String,
    /// Seconds since the Unix epoch, to order runs.
    pub measured_unix: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub format: u32,
    pub chapter: String,
    pub experiment: String,
    /// The key of the compiled measuring code; a record whose key differs is stale.
    pub key: String,
    pub profile: Profile,
    /// `release` or `debug`.
    pub build: String,
    pub provenance: Provenance,
    /// The declared parameters, in declaration order.
    pub params: Vec<ParamValue>,
    /// Other facts of the run the experiment reported (derived sizes, limits read).
    pub details: Vec<(String, String)>,
    /// How rounds were isolated: "a fresh process per round", or why not.
    pub isolation: String,
    pub status: Status,
    pub notes: Vec<Note>,
    /// Wall-clock seconds the whole experiment took.
    pub wall_s: f64,
    pub rounds: Vec<RoundRecord>,
}

/// The reading keys of `rounds`, in the order they first appear.
pub fn reading_keys(rounds: &[RoundRecord]) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for r in rounds {
        for x in &r.readings {
            if !keys.contains(&x.key.as_str()) {
                keys.push(&x.key);
            }
        }
    }
    keys
}

/// Every round's value for `key`, as (round index, value).
pub fn reading_values(rounds: &[RoundRecord], key: &str) -> Vec<(u32, f64)> {
    rounds
        .iter()
        .filter_map(|r| {
            r.readings
                .iter()
                .find(|x| x.key == key)
                .map(|x| (r.index, x.value))
        })
        .collect()
}

impl Record {
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// The reading keys in the order the first round gave them.
    pub fn keys(&self) -> Vec<&str> {
        reading_keys(&self.rounds)
    }

    pub fn unit(&self, key: &str) -> Option<Unit> {
        self.rounds
            .iter()
            .flat_map(|r| &r.readings)
            .find(|x| x.key == key)
            .map(|x| x.unit)
    }

    /// Every round's value for `key`, as (round index, value).
    pub fn values(&self, key: &str) -> Vec<(u32, f64)> {
        reading_values(&self.rounds, key)
    }

    /// The median over rounds of `key`, with its interval (the rounds in the order
    /// they ran, for [`Estimate::of_rounds`]).
    pub fn estimate(&self, key: &str) -> Option<Estimate> {
        let mut v = self.values(key);
        v.sort_by_key(|(i, _)| *i);
        let v: Vec<f64> = v.into_iter().map(|(_, v)| v).collect();
        Estimate::of_rounds(&v)
    }

    /// The per-round ratio `num / den` over the rounds that have both, in the order
    /// they ran.
    pub fn ratio(&self, num: &str, den: &str) -> Option<Estimate> {
        let mut d = std::collections::BTreeMap::new();
        for (i, b) in self.values(den) {
            d.entry(i).or_insert(b);
        }
        let mut n = self.values(num);
        n.sort_by_key(|(i, _)| *i);
        let (a, b): (Vec<f64>, Vec<f64>) = n
            .into_iter()
            .filter_map(|(i, a)| d.get(&i).map(|b| (a, *b)))
            .unzip();
        paired_ratio(&a, &b)
    }

    /// The per-round difference `a − b` over the rounds that have both, in the order
    /// they ran: an amount where a ratio would show a share (what a setting saved).
    pub fn difference(&self, a: &str, b: &str) -> Option<Estimate> {
        let (va, vb) = aligned(&self.values(a), &self.values(b));
        let d: Vec<f64> = va.iter().zip(&vb).map(|(x, y)| x - y).collect();
        Estimate::of_rounds(&d)
    }

    /// Two readings of the same rounds judged on their pairs ([`Comparison::paired`]):
    /// round i of `a` against round i of `b`, in the order the rounds ran; a round
    /// that lacks one of them is left out of the pairs.
    pub fn compare(&self, a: &str, b: &str) -> Option<Comparison> {
        let (va, vb) = aligned(&self.values(a), &self.values(b));
        Comparison::paired(&va, &vb)
    }

    /// Largest over smallest round value of `key`.
    pub fn spread(&self, key: &str) -> Option<f64> {
        let v: Vec<f64> = self.values(key).into_iter().map(|(_, v)| v).collect();
        spread(&v)
    }

    /// A parameter's value, if the experiment declares it.
    pub fn param(&self, name: &str) -> Option<f64> {
        self.params.iter().find(|p| p.name == name).map(|p| p.value)
    }

    /// Whether every parameter has its profile's default.
    pub fn default_params(&self) -> bool {
        self.params.iter().all(|p| p.default)
    }
}

/// Two per-round series (round index, value) as two value lists over every round
/// either has, in round order; a round missing from one side reads NaN there.
pub fn aligned(a: &[(u32, f64)], b: &[(u32, f64)]) -> (Vec<f64>, Vec<f64>) {
    // By round index, first value kept, as a search from the front would find it; a
    // map, so that many rounds cost n log n, not n² (issue 35, item 10).
    let index = |v: &[(u32, f64)]| {
        let mut m = std::collections::BTreeMap::new();
        for &(i, x) in v {
            m.entry(i).or_insert(x);
        }
        m
    };
    let (ma, mb) = (index(a), index(b));
    let mut idx: Vec<u32> = ma.keys().chain(mb.keys()).copied().collect();
    idx.sort_unstable();
    idx.dedup();
    let pick =
        |m: &std::collections::BTreeMap<u32, f64>, i: u32| m.get(&i).copied().unwrap_or(f64::NAN);
    idx.iter().map(|&i| (pick(&ma, i), pick(&mb, i))).unzip()
}

#[cfg(test)]
mod tests {
    use super::NoteKind;

    /// `NoteKind::ALL` holds every kind once, in order. The match has no wildcard, so a
    /// kind added to the enum does not compile here until it is listed.
    #[test]
    fn every_note_kind_is_listed() {
        let index = |k: NoteKind| match k {
            NoteKind::Limit => 0,
            NoteKind::Timeout => 1,
            NoteKind::Unsupported => 2,
            NoteKind::Noise => 3,
            NoteKind::Info => 4,
        };
        for (i, k) in NoteKind::ALL.iter().enumerate() {
            assert_eq!(index(*k), i);
        }
        assert_eq!(NoteKind::ALL.len(), 5);
    }
}
