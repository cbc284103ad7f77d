//! Build script of every crate that measures (`build = "../harness/key/build.rs"`):
//! embeds the key of the code being compiled, so a stored result is matched with the
//! code that made it, never with whatever is on disk when the binary runs.
//!
//! - `COW_SOURCE_HASH`: the sources (see `hash.rs`), for the run-time staleness check;
//! - `COW_CODE_KEY`: the sources, the cargo profile, `RUSTFLAGS` and the compiler;
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
    for p in hash::inputs(&dir).iter().filter(|p| p.exists()) {
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
    let key = hash::code_key(&sources, build, &rustflags, &version);
    println!("cargo:rustc-env=COW_SOURCE_HASH={sources}");
    println!("cargo:rustc-env=COW_CODE_KEY={key}");
    println!("cargo:rustc-env=COW_BUILD={build}");
    println!("cargo:rustc-env=COW_RUSTC={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
