//! Every integration test of this crate in one binary: each file beside this one is a
//! module here, so the crate's dependencies are linked once, not once per file (run one
//! with `cargo test -p harness --test it MODULE::`).

mod key;
mod layers;
mod workers;
