//! Every integration test of this crate in one binary: each file beside this one is a
//! module here, so the crate's dependencies are linked once, not once per file (run one
//! with `cargo test -p what-to-use-when --test it MODULE::`).

mod golden;
