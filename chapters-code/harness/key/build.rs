//! Build script of every crate that measures (`build = "../harness/key/build.rs"`):
//! embeds the key of the code being compiled, so a stored result is matched with the
//! code that made it, never with whatever is on disk when the binary runs.
//!
//! - `COW_SOURCE_HASH`: every file the binary is compiled from (see `hash.rs`), for the
//!   run-time staleness check;
//! - `COW_CODE_KEY`: the code that measures, its locked dependencies, the cargo
//!   profile, `RUSTFLAGS` and the compiler (see `hash.rs`): the key of stored results;
//! - `COW_BUILD`: `release` or `debug`;
//! - `COW_RUSTC`: the compiler's version line.

#[path = "hash.rs"]
mod hash;

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    // Only paths that exist: cargo reruns a build script on every build while one of
    // its paths is missing. A reference file that appears later is seen through its
    // folder.
    let (_, key_inputs) = hash::measured_parts(&dir);
    let mut watched = hash::inputs(&dir);
    watched.extend(key_inputs);
    watched.sort();
    watched.dedup();
    for p in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        dir.join("../../assets/reference").display()
    );
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc (unknown version)".into());
    let build = match std::env::var("PROFILE").as_deref() {
        Ok("release") => "release",
        _ => "debug",
    };
    let rustflags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let sources = hash::source_hash(&dir);
    let key = hash::code_key(&dir, build, &rustflags, &version);
    println!("cargo:rustc-env=COW_SOURCE_HASH={sources}");
    println!("cargo:rustc-env=COW_CODE_KEY={key}");
    println!("cargo:rustc-env=COW_BUILD={build}");
    println!("cargo:rustc-env=COW_RUSTC={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
