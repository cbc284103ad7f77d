//! The two hashes of a crate's code (see `key/hash.rs`), computed at build time by
//! `key/build.rs` and embedded in every measuring binary: [`source_hash`] recomputes
//! the hash of everything the binary was compiled from at run time, so a binary can
//! tell that it is stale; [`code_key`] is the key of stored results and covers only
//! the code that measures.

#[path = "../key/hash.rs"]
mod hash;

pub use hash::{
    HARNESS_PAGE_LAYER, HARNESS_TEST_ONLY, LockedPackage, VIEW_ONLY, code_key, inputs,
    measured_parts, normal_dependencies, parse_lock, source_hash,
};
