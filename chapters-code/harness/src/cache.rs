//! The result cache: one JSON file per experiment and profile under
//! `target/book-results/<chapter>/`, written atomically, keyed by the measuring code.

use crate::profile::Profile;
use crate::record::Record;
use anyhow::Context;
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

/// Where results live: `$COW_RESULTS_DIR`, else `book-results/` in the cargo target
/// folder the running binary was built into.
pub fn results_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("COW_RESULTS_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    // target/<profile>/binary -> target/
    dir.pop();
    dir.join("book-results")
}

/// Hashes every file below `dir` (sorted, so the order is stable) into `h`.
fn hash_tree(h: &mut DefaultHasher, dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            hash_tree(h, &p);
        } else if let Ok(bytes) = std::fs::read(&p) {
            h.write(p.file_name().unwrap_or_default().as_encoded_bytes());
            h.write(&bytes);
        }
    }
}

/// The key of the measuring code: the chapter crate's `src/` and manifest, the
/// harness's `src/`, the compiler and the build kind. Any change makes cached results
/// stale. (The hash is SipHash with fixed keys: stable for one toolchain, which is part
/// of the key anyway.)
pub fn code_key(chapter_dir: &str) -> String {
    let mut h = DefaultHasher::new();
    let chapter = Path::new(chapter_dir);
    hash_tree(&mut h, &chapter.join("src"));
    if let Ok(m) = std::fs::read(chapter.join("Cargo.toml")) {
        h.write(&m);
    }
    hash_tree(&mut h, &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    h.write(env!("HARNESS_RUSTC_VERSION").as_bytes());
    h.write(if cfg!(debug_assertions) {
        b"debug"
    } else {
        b"release"
    });
    format!("{:016x}", h.finish())
}

pub fn path(dir: &Path, chapter: &str, experiment: &str, profile: Profile) -> PathBuf {
    dir.join(chapter)
        .join(format!("{experiment}.{}.json", profile.name()))
}

/// Writes a record atomically (temporary file in the same folder, then rename), so a
/// reader never sees half a file even if two builds run at once.
pub fn store(dir: &Path, record: &Record) -> anyhow::Result<PathBuf> {
    let target = path(dir, &record.chapter, &record.experiment, record.profile);
    let folder = target.parent().expect("a result path has a folder");
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let tmp = folder.join(format!(".{}.{}.tmp", record.experiment, std::process::id()));
    let json = serde_json::to_vec_pretty(record)?;
    std::fs::write(&tmp, json).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &target)
        .with_context(|| format!("cannot move {} into place", tmp.display()))?;
    Ok(target)
}

/// A stored record, if there is one and it parses.
pub fn load(dir: &Path, chapter: &str, experiment: &str, profile: Profile) -> Option<Record> {
    let bytes = std::fs::read(path(dir, chapter, experiment, profile)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The record the book should show for an experiment: a full-profile result that
/// matches the current code if there is one, else a matching quick one.
pub fn best_match(dir: &Path, chapter: &str, experiment: &str, key: &str) -> Option<Record> {
    [Profile::Full, Profile::Quick]
        .into_iter()
        .filter_map(|p| load(dir, chapter, experiment, p))
        .find(|r| r.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use crate::record::{Provenance, Status};

    fn record(profile: Profile, key: &str) -> Record {
        Record {
            chapter: "ch".into(),
            experiment: "exp".into(),
            key: key.into(),
            profile,
            provenance: Provenance {
                machine: Machine::current(),
                measured_at: "now".into(),
            },
            params: vec![("n".into(), "3".into())],
            status: Status::Ok,
            notes: vec![],
            wall_s: 0.5,
            data: serde_json::json!({"x": 1}),
        }
    }

    #[test]
    fn store_then_load_and_prefer_full_when_it_matches() {
        let dir = tempfile::tempdir().unwrap();
        assert!(best_match(dir.path(), "ch", "exp", "k1").is_none());
        store(dir.path(), &record(Profile::Quick, "k1")).unwrap();
        assert_eq!(
            best_match(dir.path(), "ch", "exp", "k1").unwrap().profile,
            Profile::Quick
        );
        store(dir.path(), &record(Profile::Full, "k1")).unwrap();
        assert_eq!(
            best_match(dir.path(), "ch", "exp", "k1").unwrap().profile,
            Profile::Full
        );
        // A stale full result (other code) gives way to a matching quick one.
        store(dir.path(), &record(Profile::Full, "old")).unwrap();
        assert_eq!(
            best_match(dir.path(), "ch", "exp", "k1").unwrap().profile,
            Profile::Quick
        );
        // No temporary files are left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("ch"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn code_key_changes_with_the_code() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}").unwrap();
        let a = code_key(dir.path().to_str().unwrap());
        assert_eq!(a, code_key(dir.path().to_str().unwrap()));
        std::fs::write(dir.path().join("src/lib.rs"), "fn b() {}").unwrap();
        assert_ne!(a, code_key(dir.path().to_str().unwrap()));
    }
}
