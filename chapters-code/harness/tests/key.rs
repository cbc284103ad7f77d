//! The code key covers the code that measures and nothing else: rewording a view, a
//! number format or the write-up's numbers keeps every stored result; changing a
//! round re-measures that chapter only; changing the measuring core or a dependency a
//! chapter uses re-measures what uses it. Each test edits a temporary copy of the
//! workspace's manifests, lock file, sources and reference numbers.

use harness::key::{HARNESS_PAGE_LAYER, VIEW_ONLY, code_key, source_hash};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The workspace's crates in `chapters-code/` (folder names).
fn crates(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root.join("chapters-code"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (p, q) = (e.path(), to.join(e.file_name()));
        if p.is_dir() {
            if e.file_name() != "target" {
                copy_dir(&p, &q);
            }
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

/// A copy of what the keys read: the workspace's manifest and lock file, every crate
/// in `chapters-code/` and the reference numbers.
fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let r = root();
    for f in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(r.join(f), t.path().join(f)).unwrap();
    }
    copy_dir(&r.join("chapters-code"), &t.path().join("chapters-code"));
    copy_dir(
        &r.join("assets/reference"),
        &t.path().join("assets/reference"),
    );
    t
}

fn keys(root: &Path) -> Vec<(String, String)> {
    crates(root)
        .into_iter()
        .map(|c| {
            let k = code_key(
                &root.join("chapters-code").join(&c),
                "release",
                "",
                "rustc x",
            );
            (c, k)
        })
        .collect()
}

fn append(path: &Path, text: &str) {
    let mut s = std::fs::read_to_string(path).unwrap();
    s.push_str(text);
    std::fs::write(path, s).unwrap();
}

fn replace(path: &Path, from: &str, to: &str) {
    let s = std::fs::read_to_string(path).unwrap();
    assert!(s.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, s.replacen(from, to, 1)).unwrap();
}

/// The crates whose key differs between two sets of keys.
fn changed(before: &[(String, String)], after: &[(String, String)]) -> Vec<String> {
    before
        .iter()
        .zip(after)
        .filter(|(a, b)| a.1 != b.1)
        .map(|(a, _)| a.0.clone())
        .collect()
}

/// The chapters: every crate that has views (the harness, the appendix and the guide
/// have none).
fn chapters(root: &Path) -> Vec<String> {
    crates(root)
        .into_iter()
        .filter(|c| {
            root.join("chapters-code")
                .join(c)
                .join("src/views.rs")
                .exists()
        })
        .collect()
}

#[test]
fn every_crate_has_a_key_of_sixteen_hex_digits_and_no_two_chapters_share_one() {
    let k = keys(&root());
    assert!(k.len() >= 6, "{k:?}");
    for (c, key) in &k {
        assert_eq!(key.len(), 16, "{c}: {key}");
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()), "{c}: {key}");
    }
    let mut distinct: Vec<&String> = k.iter().map(|x| &x.1).collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), k.len(), "{k:?}");
}

#[test]
fn the_key_depends_on_the_build_the_flags_and_the_compiler() {
    let dir = root().join("chapters-code/brigades");
    let k = code_key(&dir, "release", "", "rustc 1");
    assert_eq!(k, code_key(&dir, "release", "", "rustc 1"));
    assert_ne!(k, code_key(&dir, "debug", "", "rustc 1"));
    assert_ne!(
        k,
        code_key(&dir, "release", "-Ctarget-cpu=native", "rustc 1")
    );
    assert_ne!(k, code_key(&dir, "release", "", "rustc 2"));
}

#[test]
fn rewording_a_view_keeps_every_key_but_makes_the_binary_stale() {
    let t = tree();
    let before = keys(t.path());
    for c in chapters(t.path()) {
        let dir = t.path().join("chapters-code").join(&c);
        let hash = source_hash(&dir);
        append(&dir.join("src/views.rs"), "\n// A reworded sentence.\n");
        append(
            &dir.join("src/main.rs"),
            "\n// A comment in the entry point.\n",
        );
        assert_ne!(source_hash(&dir), hash, "{c}: the binary must be rebuilt");
    }
    assert_eq!(changed(&before, &keys(t.path())), Vec::<String>::new());
}

#[test]
fn the_reference_numbers_and_the_page_layer_are_not_in_the_key() {
    let t = tree();
    let before = keys(t.path());
    let brigades = t.path().join("chapters-code/brigades");
    let hash = source_hash(&brigades);
    append(
        &t.path().join("assets/reference/brigades.toml"),
        "\n# reworded\n",
    );
    assert_ne!(
        source_hash(&brigades),
        hash,
        "views include the reference numbers"
    );
    for f in HARNESS_PAGE_LAYER {
        let p = t.path().join("chapters-code/harness").join(f);
        if p.is_file() {
            append(&p, "\n// A new number format.\n");
        }
    }
    // A comment or a description in a manifest, and a test-only dependency.
    replace(
        &brigades.join("Cargo.toml"),
        "[dev-dependencies]\n",
        "[dev-dependencies]\n# a comment\nproptest = \"1\"\n",
    );
    assert_eq!(changed(&before, &keys(t.path())), Vec::<String>::new());
}

#[test]
fn changing_a_round_re_measures_that_chapter_only() {
    let t = tree();
    let before = keys(t.path());
    let exp = t.path().join("chapters-code/brigades/src/experiments.rs");
    append(&exp, "\npub const A_NEW_ROUND_DETAIL: u32 = 1;\n");
    let after = keys(t.path());
    // The appendix and the guide link the chapter's code too, but measure nothing.
    let changed = changed(&before, &after);
    assert!(changed.contains(&"brigades".to_string()), "{changed:?}");
    for c in chapters(t.path()) {
        assert_eq!(changed.contains(&c), c == "brigades", "{c}: {changed:?}");
    }
}

#[test]
fn changing_the_measuring_core_re_measures_every_chapter() {
    let t = tree();
    let before = keys(t.path());
    append(
        &t.path().join("chapters-code/harness/src/runner.rs"),
        "\n// A change in how rounds run.\n",
    );
    let changed = changed(&before, &keys(t.path()));
    for c in chapters(t.path()) {
        assert!(changed.contains(&c), "{c}: {changed:?}");
    }
}

/// Rewrites the checksum of one locked package.
fn bump(lock: &Path, name: &str) {
    let s = std::fs::read_to_string(lock).unwrap();
    let start = s
        .find(&format!("\nname = \"{name}\"\n"))
        .unwrap_or_else(|| panic!("{name} is not locked"));
    let at = start + s[start..].find("checksum = \"").unwrap() + "checksum = \"".len();
    let mut out = s.clone();
    out.replace_range(at..at + 4, "0000");
    std::fs::write(lock, out).unwrap();
}

#[test]
fn only_the_dependencies_a_chapter_uses_are_in_its_key() {
    let t = tree();
    let lock = t.path().join("Cargo.lock");
    let before = keys(t.path());
    // An optional dependency only `bench` turns on (criterion) and a dependency of the
    // book's tests only.
    bump(&lock, "criterion");
    bump(&lock, "tempfile");
    assert_eq!(changed(&before, &keys(t.path())), Vec::<String>::new());
    // tokio: the chapters that use it, not the harness.
    bump(&lock, "tokio");
    let changed = changed(&before, &keys(t.path()));
    assert!(changed.contains(&"brigades".to_string()), "{changed:?}");
    assert!(!changed.contains(&"harness".to_string()), "{changed:?}");
}

#[test]
fn the_excluded_paths_exist() {
    let r = root();
    for f in HARNESS_PAGE_LAYER {
        assert!(
            r.join("chapters-code/harness").join(f).exists(),
            "HARNESS_PAGE_LAYER names {f}, which is gone: update the list in key/hash.rs"
        );
    }
    for c in chapters(&r) {
        let dir = r.join("chapters-code").join(&c);
        assert!(
            VIEW_ONLY.iter().any(|f| dir.join(f).exists()),
            "{c} has none of {VIEW_ONLY:?}"
        );
    }
}

/// Issue 27: a `--help` edit measures nothing. The command line's help and `list`
/// text, the "Your machine" page's words and the harness's test chapter are outside
/// every chapter's key, though each rebuilds the binaries.
#[test]
fn rewording_the_help_or_the_machine_page_measures_nothing() {
    let t = tree();
    let before = keys(t.path());
    let harness = t.path().join("chapters-code/harness");
    let brigades = t.path().join("chapters-code/brigades");
    let hash = source_hash(&brigades);
    replace(
        &harness.join("src/usage.rs"),
        "Measure experiments afresh and store the results",
        "Measure experiments afresh, then store the results",
    );
    replace(
        &harness.join("src/usage.rs"),
        "UTF-8 text is refused.\";",
        "UTF-8 text is refused, with exit status 2.\";",
    );
    replace(
        &harness.join("src/machine_words.rs"),
        "threads the whole system may have",
        "how many threads the whole system may have",
    );
    append(
        &harness.join("src/fixture.rs"),
        "\npub const A_NEW_FIXTURE_DETAIL: u32 = 1;\n",
    );
    assert_ne!(source_hash(&brigades), hash, "the binary must be rebuilt");
    let changed = changed(&before, &keys(t.path()));
    // The harness's own chapter is the test fixture, so only its key moves.
    assert_eq!(changed, ["harness"], "{changed:?}");
}

/// Issue 27: a change to a round's data type re-measures its chapter, and no other.
#[test]
fn a_new_field_in_a_round_re_measures_its_chapter() {
    let t = tree();
    let before = keys(t.path());
    replace(
        &t.path().join("chapters-code/brigades/src/experiments.rs"),
        "pub struct VariantsRound {\n",
        "pub struct VariantsRound {\n    pub a_new_field: u64,\n",
    );
    let changed = changed(&before, &keys(t.path()));
    for c in chapters(t.path()) {
        assert_eq!(changed.contains(&c), c == "brigades", "{c}: {changed:?}");
    }
}

/// Issue 27: the stored unit of a reading is inside every key (it names the unit in
/// every stored result); how a value in it reads (`fmt.rs`) is not.
#[test]
fn changing_the_stored_unit_re_measures_every_chapter() {
    let t = tree();
    let before = keys(t.path());
    replace(
        &t.path().join("chapters-code/harness/src/fmt.rs"),
        "Unit::Nanos => fmt_ns(v),",
        "Unit::Nanos => fmt_ns(v).replace(' ', \"\u{a0}\"),",
    );
    assert_eq!(changed(&before, &keys(t.path())), Vec::<String>::new());
    replace(
        &t.path().join("chapters-code/harness/src/unit.rs"),
        "#[serde(rename = \"ns\")]",
        "#[serde(rename = \"nanoseconds\")]",
    );
    let changed = changed(&before, &keys(t.path()));
    for c in chapters(t.path()) {
        assert!(changed.contains(&c), "{c}: {changed:?}");
    }
}
