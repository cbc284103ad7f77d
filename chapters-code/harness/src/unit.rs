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

/// An integer with thousands separators, `1,000,000`, as reading keys store sizes and
/// rates (`… · 1,000 members · per hop`). Inside the code key, so that how a record
/// names a reading cannot change with the page's number format; the page writes counts
/// with it too (`fmt::fmt_count`).
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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
