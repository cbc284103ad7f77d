//! The book's results as a whole: every experiment of every chapter, collected from
//! the result cache (measuring what is missing), summarised generically, compared
//! with the previous run, and bundled as one JSON file.
//!
//! Nothing here knows a chapter's data types: a result's data is walked as JSON and
//! every harness summary found in it ([`harness::Summary`] or [`harness::MeanCi`]) is
//! picked up, labelled by the fields that tell its siblings apart.

pub mod appendix;
pub mod changes;
pub mod stats;

use harness::{Chapter, Profile, Record};
use std::path::Path;

/// The chapters of the book, in reading order.
pub const CHAPTERS: [&Chapter; 5] = [
    &spinning_vs_sleeping::CHAPTER,
    &brigades::CHAPTER,
    &short_sleeps::CHAPTER,
    &throttles::CHAPTER,
    &async_locks::CHAPTER,
];

/// A chapter by its slug.
pub fn chapter(slug: &str) -> Option<&'static Chapter> {
    CHAPTERS.iter().copied().find(|c| c.name == slug)
}

/// The record the book shows for one experiment: a cached result matching the code,
/// else a fresh measurement in `profile` (stored for next time).
pub fn record(ch: &Chapter, experiment: &str, profile: Profile, dir: &Path) -> Option<Record> {
    let exp = ch.experiment(experiment)?;
    Some(harness::experiment::obtain(ch, exp, profile, dir))
}

/// Every experiment of every chapter, as the book shows it.
pub fn all_records(profile: Profile, dir: &Path) -> Vec<Record> {
    CHAPTERS
        .iter()
        .flat_map(|ch| {
            ch.experiments
                .iter()
                .map(|e| harness::experiment::obtain(ch, e, profile, dir))
        })
        .collect()
}

/// The profile to measure missing results in (`$COW_PROFILE`, default quick).
pub fn profile_from_env() -> anyhow::Result<Profile> {
    Profile::from_env()
}

/// Standard base64 (RFC 4648, with padding), for the `data:` download link.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn every_chapter_is_listed_once() {
        let mut names: Vec<_> = super::CHAPTERS.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 5);
        assert!(super::chapter("brigades").is_some());
        assert!(super::chapter("nope").is_none());
    }
}
