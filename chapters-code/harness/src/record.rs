//! A measured result as stored in the cache and rendered into the book.

use crate::machine::Machine;
use crate::profile::Profile;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// Why a note is shown under a table or plot.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum NoteKind {
    /// A resource limit stopped the experiment early.
    Limit,
    /// The experiment's time bound was reached.
    Timeout,
    /// This operating system lacks what the experiment needs.
    Unsupported,
    /// Anything else the reader should know about this run.
    Info,
}

impl NoteKind {
    pub fn label(self) -> &'static str {
        match self {
            NoteKind::Limit => "Limit reached",
            NoteKind::Timeout => "Time bound reached",
            NoteKind::Unsupported => "Not available on this system",
            NoteKind::Info => "Note",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Note {
    pub kind: NoteKind,
    pub text: String,
}

/// How the run ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Status {
    Ok,
    /// The experiment did not return within its bound (plus grace) and was abandoned.
    TimedOut {
        bound_s: f64,
    },
    /// The experiment returned an error or panicked.
    Failed {
        error: String,
    },
}

/// Where and when a result was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    pub machine: Machine,
    /// UTC, to the second.
    pub measured_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub chapter: String,
    pub experiment: String,
    /// Identifies the measuring code; a record whose key differs is stale.
    pub key: String,
    pub profile: Profile,
    pub provenance: Provenance,
    /// The parameters the experiment ran with, in the order it declared them.
    pub params: Vec<(String, String)>,
    pub status: Status,
    pub notes: Vec<Note>,
    /// Wall-clock seconds the experiment took.
    pub wall_s: f64,
    /// The experiment's own data; its views know its shape.
    pub data: serde_json::Value,
}

impl Record {
    /// The experiment's data as its own type.
    pub fn data<T: DeserializeOwned>(&self) -> anyhow::Result<T> {
        serde_json::from_value(self.data.clone()).map_err(|e| {
            anyhow::anyhow!(
                "the stored result of `{}` does not have the expected shape ({e}); run `make regenerate`",
                self.experiment
            )
        })
    }

    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }
}
