//! Every integration test of this crate in one binary: each file beside this one is a
//! module here, so the crate's dependencies are linked once, not once per file (run one
//! with `cargo test -p book-tests --test it MODULE::`).

mod book;
mod browser;
mod faults;
mod fuzz;
mod hostile;
mod listings;
mod pages;
mod paths;
mod promises;
mod registry;
mod verdicts;
