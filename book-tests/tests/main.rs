//! Every integration test of this crate in one binary: each file beside this one is a
//! module here, so the crate's dependencies are linked once, not once per file (run one
//! with `cargo test -p book-tests --test it MODULE::`).

mod book;
// Needs Chromium: `make test-browser` (cargo test --features browser … browser::).
#[cfg(feature = "browser")]
mod browser;
mod faults;
mod fuzz;
mod hostile;
mod listings;
mod markdown;
mod pages;
mod paths;
mod promises;
mod registry;
mod verdicts;
