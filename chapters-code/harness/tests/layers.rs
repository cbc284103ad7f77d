//! The harness in layers, checked: the `crate::…` edges between its modules (outside
//! their test modules) form no cycle, and each module imports only from its own layer
//! or the layers below it.
//!
//! - **leaf**: numbers and units, statistics, privacy, profiles, noise sensors,
//!   counters, the code key — they import nothing but other leaves;
//! - **core**: the measuring core — parameters, the machine, records, the cache,
//!   experiments and their rounds, the runner and its worker processes; it knows
//!   nothing of pages;
//! - **page**: tables, plots, verdict sentences, provenance, reference numbers;
//! - **top**: the command line and the crate root, which tie the others together;
//! - **test**: the harness's test chapter, which only tests and its binary use.
//!
//! The code key (`key/hash.rs`) leaves out exactly the page layer and the number
//! formatting, and the test chapter for every crate but the harness: since the leaf
//! and the core import nothing of the page layer, what the key leaves out cannot
//! change what a round measures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const LEAF: &[&str] = &[
    "fmt", "unit", "env", "stats", "privacy", "procfs", "safe", "profile", "noise", "counters",
    "key",
];
const CORE: &[&str] = &[
    "params",
    "machine",
    "record",
    "cache",
    "validate",
    "experiment",
    "rounds",
    "runner",
    "worker",
    "session",
];
const PAGE: &[&str] = &[
    "render",
    "plot",
    "reference",
    "aa",
    "usage",
    "machine_words",
];
const TOP: &[&str] = &["cli", "lib"];
/// The harness's test chapter: above everything, so nothing but tests imports it.
const TEST: &[&str] = &["fixture"];

fn layer(m: &str) -> usize {
    [LEAF, CORE, PAGE, TOP, TEST]
        .iter()
        .position(|l| l.contains(&m))
        .unwrap_or_else(|| panic!("module `{m}` is in no layer: add it to tests/layers.rs"))
}

/// The source without its `#[cfg(test)]` modules (they may reach anywhere).
fn without_tests(src: &str) -> String {
    match src.find("#[cfg(test)]\nmod tests") {
        Some(i) => src[..i].to_string(),
        None => src.to_string(),
    }
}

/// Every module named after `crate::` in a source, including inside `use crate::{a, b::c}`.
fn edges(
    src: &str,
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = src;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let names: Vec<String> = if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            inner[..end]
                .split(',')
                .map(|p| p.trim().split("::").next().unwrap_or("").trim().to_string())
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")
                    .to_string(),
            ]
        };
        for n in names {
            if modules.contains(&n) {
                out.insert(n);
            } else if let Some(m) = reexports.get(&n) {
                out.insert(m.clone());
            }
        }
    }
    out
}

#[test]
fn the_harness_has_layers_and_no_import_cycle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "rs") {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            sources.insert(name, std::fs::read_to_string(&p).unwrap());
        }
    }
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    // Names the crate root re-exports (`pub use record::{Reading, …}`) lead to their module.
    let mut reexports = BTreeMap::new();
    for line in sources["lib"].lines() {
        if let Some(rest) = line.trim().strip_prefix("pub use ") {
            let (m, names) = rest.split_once("::").unwrap_or((rest, ""));
            for n in names
                .trim_matches(|c| c == '{' || c == '}' || c == ';')
                .split(',')
            {
                reexports.insert(n.trim().to_string(), m.to_string());
            }
        }
    }
    let mut graph = BTreeMap::new();
    let mut wrong = Vec::new();
    for (m, src) in &sources {
        let mut deps = edges(&without_tests(src), &modules, &reexports);
        deps.remove(m);
        for d in &deps {
            if layer(d) > layer(m) {
                wrong.push(format!(
                    "{m} (layer {}) imports {d} (layer {})",
                    layer(m),
                    layer(d)
                ));
            }
        }
        graph.insert(m.clone(), deps);
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
    // No cycle within a layer either: a depth-first search for a back edge.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let i = path.iter().position(|p| p == m).unwrap();
                let mut cycle = path[i..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        if m == "lib" {
            continue;
        }
        let mut path = Vec::new();
        if let Some(c) = visit(m, &graph, &mut state, &mut path) {
            panic!("an import cycle in the harness: {}", c.join(" → "));
        }
    }
}

/// The code key leaves out exactly the page layer and the number formatting, so a
/// reworded table or a new number format measures nothing, and anything else in the
/// harness keys the results (`key/hash.rs`, `HARNESS_PAGE_LAYER`).
#[test]
fn the_code_key_leaves_out_the_page_layer_only() {
    let mut left_out: BTreeSet<String> = harness::key::HARNESS_PAGE_LAYER
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert!(left_out.remove("src/bin"), "{left_out:?}");
    let test_only: BTreeSet<String> = harness::key::HARNESS_TEST_ONLY
        .iter()
        .map(|p| p.to_string())
        .collect();
    let test_layer: BTreeSet<String> = TEST.iter().map(|m| format!("src/{m}.rs")).collect();
    assert_eq!(
        test_only, test_layer,
        "HARNESS_TEST_ONLY and the test layer disagree"
    );
    let expected: BTreeSet<String> = PAGE
        .iter()
        .chain(&["fmt"])
        .map(|m| format!("src/{m}.rs"))
        .collect();
    assert_eq!(
        left_out, expected,
        "HARNESS_PAGE_LAYER and the page layer disagree"
    );
}

/// The modules a chapter's source refers to: `crate::m`, `super::m`, and in the crate
/// root a bare `m::` (outside `mod m;` and `pub use m::…;` lines, which declare and
/// re-export, and outside its test module).
fn chapter_edges(m: &str, src: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let body = without_tests(src);
    // `crate::name` of an item that is no module names something in the crate root.
    let mut root_items = BTreeMap::new();
    for (i, _) in body.match_indices("crate::") {
        let rest = &body[i + "crate::".len()..];
        let names: Vec<String> = match rest.strip_prefix('{') {
            Some(inner) => inner[..inner.find('}').unwrap_or(inner.len())]
                .split(',')
                .map(|p| p.trim().split("::").next().unwrap_or("").trim().to_string())
                .collect(),
            None => vec![
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            ],
        };
        for n in names {
            if !n.is_empty() && !modules.contains(&n) {
                root_items.insert(n, "lib".to_string());
            }
        }
    }
    let mut out = edges(&body, modules, &root_items);
    for prefix in ["super::"] {
        for (i, _) in body.match_indices(prefix) {
            let name: String = body[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) {
                out.insert(name);
            }
        }
    }
    if m == "lib" {
        for line in body.lines() {
            let t = line.trim();
            if t.starts_with("pub mod ") || t.starts_with("mod ") || t.starts_with("pub use ") {
                continue;
            }
            for other in modules {
                let pat = format!("{other}::");
                if let Some(i) = t.find(&pat)
                    && !t[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                {
                    out.insert(other.clone());
                }
            }
        }
    }
    out.remove(m);
    out
}

/// No chapter's modules import each other in a circle: `lib.rs` is the mechanism,
/// which imports none of the experiments, views or the registry (`chapter.rs`) that
/// build on it.
#[test]
fn no_chapter_has_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let src_dir = e.path().join("src");
        if e.file_name() == "harness" || !src_dir.join("lib.rs").is_file() {
            continue;
        }
        let mut sources = BTreeMap::new();
        for f in std::fs::read_dir(&src_dir).unwrap().flatten() {
            let p = f.path();
            if p.extension().is_some_and(|x| x == "rs") {
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                sources.insert(name, std::fs::read_to_string(&p).unwrap());
            }
        }
        sources.remove("main");
        let modules: BTreeSet<String> = sources.keys().cloned().collect();
        let graph: BTreeMap<String, BTreeSet<String>> = sources
            .iter()
            .map(|(m, s)| (m.clone(), chapter_edges(m, s, &modules)))
            .collect();
        // Kahn's algorithm: whatever cannot be ordered sits on a cycle.
        let mut left = graph.clone();
        loop {
            let free: Vec<String> = left
                .iter()
                .filter(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
                .map(|(m, _)| m.clone())
                .collect();
            if free.is_empty() {
                break;
            }
            for m in free {
                left.remove(&m);
            }
        }
        assert!(
            left.is_empty(),
            "{}: these modules import each other in a circle: {:?}",
            e.path().display(),
            left
        );
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} chapter crates found");
}
