//! Two hashes of a crate's code, computed the same way by the measuring crates' build
//! script (`build.rs` beside this file), which embeds both in the binary, and by the
//! binary at run time (`harness::key`):
//!
//! - the **source hash** ([`source_hash`]) covers every file the binary is compiled
//!   from, views and reference numbers included. The binary compares it with the
//!   files on disk (`COW_CHECK_FRESH=1`) to tell `run.sh` that it is stale, and cargo
//!   then decides what to recompile;
//! - the **code key** ([`code_key`]) covers only the code that *measures*, and keys
//!   the stored results: rewording a view rebuilds the binary but keeps its results.
//!
//! What the code key covers, for a crate and each crate it depends on by path:
//!
//! - a chapter's `src/` except its views (`src/views.rs`, `src/views/`), its registry
//!   (`src/chapter.rs`) and its entry point (`src/main.rs`): the convention is that
//!   everything a round runs lives
//!   outside those, and that views only read results ([`VIEW_ONLY`]);
//! - the harness's `src/` except its page layer ([`HARNESS_PAGE_LAYER`]: tables,
//!   plots, number formatting, the command line's help, the words about the machine)
//!   and, for every crate but the harness, its test chapter ([`HARNESS_TEST_ONLY`]);
//! - this key code (`harness/key/`);
//! - each manifest, less its comments, its description and its test-only sections;
//!   from the workspace manifest, `[workspace.package]`, the `[profile…]` sections and
//!   the `[workspace.dependencies]` entries those crates use;
//! - the locked version and checksum of every package in the dependency closure of
//!   their normal dependencies (read from `Cargo.lock`; dev-dependencies, build
//!   dependencies and other crates' dependencies are left out);
//! - the cargo profile, `RUSTFLAGS` and the compiler version (see [`code_key`]).
//!
//! It does not cover views, the page layer, the write-up's reference numbers (only
//! views read them), tests, benches, or other crates' dependencies.
//!
//! SHA-256 (the `sha2` crate) rather than std's `DefaultHasher`: stored keys must mean
//! the same thing after a compiler upgrade, and std does not promise to keep
//! `DefaultHasher`'s algorithm. The build script may use only this file and `sha2`.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The files of a chapter crate (relative to its folder) that only show results, or
/// list what shows them (the registry, `src/chapter.rs`): left out of the code key. A
/// chapter that keeps view-only code elsewhere must put it
/// under `src/views/` to keep it out.
pub const VIEW_ONLY: &[&str] = &["src/views.rs", "src/views", "src/chapter.rs", "src/main.rs"];

/// The harness's page layer, its number formatting (`fmt.rs`: how a figure reads, not
/// what it is; the stored `Unit` is in `unit.rs`, inside the key) and its entry points
/// (relative to its folder): left out of the code key. Among them the command line's
/// help and `list` text (`usage.rs`) and the words the book shows about the machine
/// (`machine_words.rs`). Everything else in `harness/src` is the measuring core, so a
/// new file is covered unless it is added here; `harness/tests/layers.rs` checks that
/// this list is the page layer, which the core may not import.
pub const HARNESS_PAGE_LAYER: &[&str] = &[
    "src/aa.rs",
    "src/answer.rs",
    "src/comparison.rs",
    "src/fmt.rs",
    "src/machine_words.rs",
    "src/notes.rs",
    "src/provenance.rs",
    "src/table.rs",
    "src/tails.rs",
    "src/render.rs",
    "src/plot.rs",
    "src/reference.rs",
    "src/usage.rs",
    "src/bin",
];

/// The harness's test chapter (`fixture.rs`, for its own tests; nothing in the book
/// imports it, which `harness/tests/layers.rs` checks): left out of every other
/// crate's key. It is the harness's own chapter, so the harness's key keeps it.
pub const HARNESS_TEST_ONLY: &[&str] = &["src/fixture.rs"];

/// The folder of the workspace (`<root>/chapters-code/<crate>` → `<root>`).
fn root_of(crate_dir: &Path) -> PathBuf {
    crate_dir.join("../..")
}

fn crate_name(crate_dir: &Path) -> String {
    crate_dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// What the source hash covers, relative to the crate's folder
/// (`<root>/chapters-code/<crate>`): its sources and manifest, the write-up's numbers
/// its views include (`assets/reference/<crate>.toml`), the harness's sources,
/// manifest and this key code, and the workspace's manifest and lock file.
pub fn inputs(crate_dir: &Path) -> Vec<PathBuf> {
    let harness = crate_dir.join("../harness");
    let root = root_of(crate_dir);
    let name = crate_name(crate_dir);
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

/// Feeds one labelled part into the hash, length-prefixed so parts cannot run together.
fn part(h: &mut Sha256, label: &str, bytes: &[u8]) {
    h.update((label.len() as u64).to_le_bytes());
    h.update(label.as_bytes());
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// Hashes a file, or a folder's files in name order, skipping `skip` (full paths).
fn hash_path(h: &mut Sha256, path: &Path, name: &str, skip: &[PathBuf]) {
    if skip.iter().any(|s| s == path) {
        return;
    }
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
            hash_path(h, &p, &format!("{name}/{n}"), skip);
        }
    } else if let Ok(bytes) = std::fs::read(path) {
        part(h, name, &bytes);
    }
}

fn hex16(h: Sha256) -> String {
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The hash of everything a crate's binary is compiled from (see [`inputs`]), as 16
/// hex digits: a binary whose embedded hash differs from this is stale.
pub fn source_hash(crate_dir: &Path) -> String {
    let mut h = Sha256::new();
    for (i, p) in inputs(crate_dir).iter().enumerate() {
        hash_path(&mut h, p, &i.to_string(), &[]);
    }
    hex16(h)
}

/// The parts of the code key of a crate, as (label, bytes), and the paths they were
/// read from (for the build script's `rerun-if-changed`). Panics, with the reason,
/// where the manifests and the lock file disagree: a key that silently left out a
/// dependency would keep stale results.
pub fn measured_parts(crate_dir: &Path) -> (Vec<(String, Vec<u8>)>, Vec<PathBuf>) {
    let root = root_of(crate_dir);
    let lock_text = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let lock = parse_lock(&lock_text);
    let root_manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();

    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    let mut read: Vec<PathBuf> = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    // The crates of the workspace this one is built from: itself and its path
    // dependencies, transitively (for a chapter: the chapter and the harness).
    let mut crates: BTreeSet<String> = BTreeSet::new();
    let mut todo = vec![crate_name(crate_dir)];
    let mut external: BTreeSet<String> = BTreeSet::new();
    let mut direct_names: BTreeSet<String> = BTreeSet::new();
    while let Some(name) = todo.pop() {
        if !crates.insert(name.clone()) {
            continue;
        }
        let dir = crate_dir.join("..").join(&name);
        let manifest_path = dir.join("Cargo.toml");
        let manifest = std::fs::read_to_string(&manifest_path).unwrap_or_else(|e| {
            panic!(
                "code key: the path dependency `{name}` is not at {}: {e}",
                manifest_path.display()
            )
        });
        let skip: Vec<PathBuf> = if name == "harness" {
            let test_only = if name == crate_name(crate_dir) {
                &[][..]
            } else {
                HARNESS_TEST_ONLY
            };
            HARNESS_PAGE_LAYER
                .iter()
                .chain(test_only)
                .map(|p| dir.join(p))
                .collect()
        } else {
            VIEW_ONLY.iter().map(|p| dir.join(p)).collect()
        };
        let mut h = Sha256::new();
        hash_path(&mut h, &dir.join("src"), "src", &skip);
        parts.push((format!("{name}/src"), h.finalize().to_vec()));
        parts.push((
            format!("{name}/Cargo.toml"),
            manifest_for_key(&manifest).into_bytes(),
        ));
        read.push(dir.join("src"));
        read.push(manifest_path);

        let deps = normal_dependencies(&manifest);
        let Some(pkg) = lock.iter().find(|p| p.name == name && p.source.is_none()) else {
            panic!("code key: `{name}` is not in Cargo.lock");
        };
        for dep in &deps {
            let Some(spec) = pkg.deps.iter().find(|d| d.split(' ').next() == Some(dep)) else {
                panic!(
                    "code key: `{name}` depends on `{dep}`, which Cargo.lock does not list for it"
                );
            };
            let target = find(&lock, spec)
                .unwrap_or_else(|| panic!("code key: Cargo.lock has no package `{spec}`"));
            if target.source.is_none() {
                todo.push(target.name.clone());
            } else {
                closure(&lock, target, &mut external);
            }
            direct_names.insert(dep.clone());
        }
    }
    let harness_key = crate_dir.join("../harness/key");
    let mut h = Sha256::new();
    hash_path(&mut h, &harness_key, "key", &[]);
    parts.push(("harness/key".into(), h.finalize().to_vec()));
    read.push(harness_key);
    parts.push((
        "workspace manifest".into(),
        workspace_for_key(&root_manifest, &direct_names).into_bytes(),
    ));
    let locked: Vec<String> = external.into_iter().collect();
    parts.push(("locked dependencies".into(), locked.join("\n").into_bytes()));
    (parts, read)
}

/// The code key: the measuring code ([`measured_parts`]) plus what else decides the
/// compiled code — the cargo profile (`release` or `debug`), `RUSTFLAGS` and the
/// compiler's version line — as 16 hex digits.
pub fn code_key(crate_dir: &Path, build: &str, rustflags: &str, rustc: &str) -> String {
    let mut h = Sha256::new();
    part(&mut h, "scheme", b"code key 3");
    for (label, bytes) in measured_parts(crate_dir).0 {
        part(&mut h, &label, &bytes);
    }
    part(&mut h, "build", build.as_bytes());
    part(&mut h, "rustflags", rustflags.as_bytes());
    part(&mut h, "rustc", rustc.as_bytes());
    hex16(h)
}

/// One `[[package]]` of `Cargo.lock`.
#[derive(Debug, Clone, Default)]
pub struct LockedPackage {
    pub name: String,
    pub version: String,
    /// `None` for the workspace's own (path) packages.
    pub source: Option<String>,
    pub checksum: Option<String>,
    /// As written: `name`, `name version` or `name version (source)`.
    pub deps: Vec<String>,
}

/// Reads the `[[package]]` entries of a `Cargo.lock` (format version 3 or 4).
pub fn parse_lock(text: &str) -> Vec<LockedPackage> {
    let mut out: Vec<LockedPackage> = Vec::new();
    let mut in_deps = false;
    let unquote = |s: &str| {
        s.trim()
            .trim_end_matches(',')
            .trim()
            .trim_matches('"')
            .to_string()
    };
    for line in text.lines() {
        let t = line.trim();
        if t == "[[package]]" {
            out.push(LockedPackage::default());
            in_deps = false;
            continue;
        }
        if t.starts_with('[') {
            in_deps = false;
        }
        let Some(p) = out.last_mut() else { continue };
        if in_deps {
            if t == "]" {
                in_deps = false;
            } else if !t.is_empty() {
                p.deps.push(unquote(t));
            }
            continue;
        }
        let Some((k, v)) = t.split_once('=') else {
            continue;
        };
        match k.trim() {
            "name" => p.name = unquote(v),
            "version" => p.version = unquote(v),
            "source" => p.source = Some(unquote(v)),
            "checksum" => p.checksum = Some(unquote(v)),
            "dependencies" => {
                let v = v.trim();
                if let Some(inline) = v.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                    p.deps = inline
                        .split(',')
                        .map(unquote)
                        .filter(|s| !s.is_empty())
                        .collect();
                } else {
                    in_deps = true;
                }
            }
            _ => {}
        }
    }
    out
}

/// The package a lock dependency names (`name`, `name version`, `name version (source)`).
fn find<'a>(lock: &'a [LockedPackage], spec: &str) -> Option<&'a LockedPackage> {
    let mut it = spec.splitn(3, ' ');
    let name = it.next()?;
    let version = it.next();
    let source = it
        .next()
        .map(|s| s.trim_start_matches('(').trim_end_matches(')'));
    lock.iter().find(|p| {
        p.name == name
            && version.is_none_or(|v| p.version == v)
            && source.is_none_or(|s| p.source.as_deref() == Some(s))
    })
}

/// Adds a registry package and everything it depends on (its lock entry lists only
/// normal and build dependencies) to `out`, one line each.
fn closure(lock: &[LockedPackage], p: &LockedPackage, out: &mut BTreeSet<String>) {
    let line = format!(
        "{} {} {} {}",
        p.name,
        p.version,
        p.source.as_deref().unwrap_or("path"),
        p.checksum.as_deref().unwrap_or("-")
    );
    if !out.insert(line) {
        return;
    }
    for d in &p.deps {
        if let Some(q) = find(lock, d) {
            closure(lock, q, out);
        }
    }
}

/// A manifest's sections as (header, lines without comments and blank lines); the
/// lines before the first header come under the header "", and `[[bench]]` has the
/// header `bench`.
fn sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = vec![(String::new(), Vec::new())];
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.starts_with('[') {
            let header = t.trim_start_matches('[').trim_end_matches(']').trim();
            out.push((header.to_string(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(t.to_string());
        }
    }
    out
}

/// The key name of a `key = value` or `key.sub = value` line.
fn line_key(line: &str) -> Option<String> {
    let (k, _) = line.split_once('=')?;
    let k = k.trim();
    Some(k.split('.').next()?.trim().trim_matches('"').to_string())
}

fn is_normal_deps(header: &str) -> bool {
    header == "dependencies" || (header.starts_with("target.") && header.ends_with(".dependencies"))
}

/// The names of a manifest's normal dependencies (not dev- or build-dependencies), less
/// the optional ones its `default` feature does not turn on: the measured binaries are
/// built with the default features (criterion, behind `bench`, is for `cargo bench`).
pub fn normal_dependencies(manifest: &str) -> Vec<String> {
    let sections = sections(manifest);
    let defaults: Vec<String> = sections
        .iter()
        .filter(|(h, _)| h == "features")
        .flat_map(|(_, lines)| lines)
        .filter(|l| line_key(l).as_deref() == Some("default"))
        .flat_map(|l| {
            let list = l.split_once('=').map(|(_, v)| v).unwrap_or("");
            list.trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .map(|s| {
                    s.trim()
                        .trim_matches('"')
                        .trim_start_matches("dep:")
                        .to_string()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let optional = |l: &str| l.replace(' ', "").contains("optional=true");
    let mut out = Vec::new();
    for (header, lines) in &sections {
        if is_normal_deps(header) {
            out.extend(
                lines
                    .iter()
                    .filter_map(|l| line_key(l).map(|k| (k, optional(l))))
                    .filter(|(k, opt)| !opt || defaults.contains(k))
                    .map(|(k, _)| k),
            );
        } else if let Some(name) = header.strip_prefix("dependencies.") {
            let name = name.trim_matches('"').to_string();
            if !lines.iter().any(|l| optional(l)) || defaults.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// A crate manifest as the key sees it: no comments, no description, no test-only
/// sections (dev-dependencies, benches, tests, examples).
fn manifest_for_key(manifest: &str) -> String {
    let mut out = String::new();
    for (header, lines) in sections(manifest) {
        let test_only = header.contains("dev-dependencies")
            || ["bench", "test", "example", "badges", "lints"].contains(&header.as_str());
        if test_only {
            continue;
        }
        out.push_str(&format!("[{header}]\n"));
        for l in lines {
            if header == "package" && line_key(&l).as_deref() == Some("description") {
                continue;
            }
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// The workspace manifest as the key sees it: `[workspace.package]`, the profiles, and
/// the `[workspace.dependencies]` entries named in `used`.
fn workspace_for_key(manifest: &str, used: &BTreeSet<String>) -> String {
    let mut kept: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (header, lines) in sections(manifest) {
        if header == "workspace.package" || header.starts_with("profile") {
            kept.entry(header).or_default().extend(lines);
        } else if header == "workspace.dependencies" {
            let l: Vec<String> = lines
                .into_iter()
                .filter(|l| line_key(l).is_some_and(|k| used.contains(&k)))
                .collect();
            kept.entry(header).or_default().extend(l);
        } else if let Some(name) = header.strip_prefix("workspace.dependencies.")
            && used.contains(name.trim_matches('"'))
        {
            kept.entry(header).or_default().extend(lines);
        }
    }
    kept.into_iter()
        .map(|(h, l)| format!("[{h}]\n{}\n", l.join("\n")))
        .collect()
}
