//! The code key, computed at build time by `key/build.rs` and embedded in every
//! measuring binary; [`source_hash`] recomputes its source part at run time so a
//! binary can tell that it is stale.

#[path = "../key/hash.rs"]
mod hash;

pub use hash::{code_key, inputs, source_hash};
