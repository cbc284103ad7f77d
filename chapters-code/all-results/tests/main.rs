//! Every integration test of this crate in one binary: each file beside this one is a
//! module here, so the crate's dependencies are linked once, not once per file (run one
//! with `cargo test -p all-results --test it MODULE::`).

mod common;
mod door;
mod golden;
mod hostile;
mod other_machines;
mod windows;
