//! The hash of the measuring code's sources, computed the same way by the chapter
//! crates' build script (`build.rs` beside this file), which embeds it in the binary,
//! and by the binary at run time, which compares it with the sources on disk to tell
//! whether it is stale. Only `std`, so the build script needs no dependencies.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

/// What the hash of a crate covers, relative to the crate's folder
/// (`<root>/chapters-code/<crate>`): its sources and manifest, the write-up's numbers
/// its views include (`assets/reference/<crate>.toml`), the harness's sources,
/// manifest and this key code, and the workspace's manifest and lock file.
pub fn inputs(crate_dir: &Path) -> Vec<PathBuf> {
    let harness = crate_dir.join("../harness");
    let root = crate_dir.join("../..");
    let name = crate_dir.file_name().unwrap_or_default().to_string_lossy();
    vec![
        root.join("assets/reference").join(format!("{name}.toml")),
        crate_dir.join("src"),
        crate_dir.join("Cargo.toml"),
        harness.join("src"),
        harness.join("key"),
        harness.join("Cargo.toml"),
        root.join("Cargo.toml"),
        root.join("Cargo.lock"),
    ]
}

fn hash_path(h: &mut DefaultHasher, path: &Path, name: &str) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut names: Vec<(String, PathBuf)> = entries
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        names.sort();
        for (n, p) in names {
            hash_path(h, &p, &format!("{name}/{n}"));
        }
    } else if let Ok(bytes) = std::fs::read(path) {
        h.write(name.as_bytes());
        h.write_u64(bytes.len() as u64);
        h.write(&bytes);
    }
}

/// The hash of a crate's measuring sources (see [`inputs`]), as 16 hex digits.
pub fn source_hash(crate_dir: &Path) -> String {
    let mut h = DefaultHasher::new();
    for (i, p) in inputs(crate_dir).iter().enumerate() {
        hash_path(&mut h, p, &i.to_string());
    }
    format!("{:016x}", h.finish())
}

/// The cache key: the sources plus what else decides the compiled code.
pub fn code_key(source_hash: &str, build: &str, rustflags: &str, rustc: &str) -> String {
    let mut h = DefaultHasher::new();
    for part in [source_hash, build, rustflags, rustc] {
        h.write(part.as_bytes());
        h.write_u8(0);
    }
    format!("{:016x}", h.finish())
}
