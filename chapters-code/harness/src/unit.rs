//! The unit a reading is stored in. Its serialised names are part of every stored
//! result, so this file is inside the code key (`key/hash.rs`): renaming a unit
//! re-measures the book. How a value in a unit reads to people (`Unit::format`) is
//! number formatting, and lives in `fmt.rs`, outside the key.

use serde::{Deserialize, Serialize};

/// The unit of a reading, as the headline figures name it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub enum Unit {
    #[serde(rename = "ns")]
    Nanos,
    #[serde(rename = "bytes")]
    Bytes,
    #[serde(rename = "ops/s")]
    OpsPerSec,
    /// A plain number (a ratio, a count, a fraction).
    #[serde(rename = "1")]
    Number,
}

impl Unit {
    /// The name it is stored under.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Nanos => "ns",
            Unit::Bytes => "bytes",
            Unit::OpsPerSec => "ops/s",
            Unit::Number => "1",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Unit;

    #[test]
    fn a_unit_is_stored_under_its_name() {
        for u in [Unit::Nanos, Unit::Bytes, Unit::OpsPerSec, Unit::Number] {
            let json = serde_json::to_string(&u).unwrap();
            assert_eq!(json, format!("\"{}\"", u.name()));
            assert_eq!(serde_json::from_str::<Unit>(&json).unwrap(), u);
        }
    }
}
