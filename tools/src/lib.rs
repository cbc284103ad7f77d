//! Empty: this package exists only to pin and build the book's tools (see Cargo.toml).
