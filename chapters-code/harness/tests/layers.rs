//! The harness in layers, checked: the `crate::…` edges between its modules (outside
//! their test modules and comments) form no cycle, and each module imports only from
//! its own layer or the layers below it.
//!
//! - **leaf**: numbers and units, statistics, privacy, profiles, noise sensors,
//!   counters, the code key, and the crate root's own items (`AA_TWIN`, the CPU clocks:
//!   what `lib.rs` defines rather than declares or re-exports) — they import nothing
//!   but other leaves;
//! - **core**: the measuring core — parameters, the machine, records, the cache,
//!   experiments and their rounds, the runner and its worker processes; it knows
//!   nothing of pages;
//! - **page**: tables, plots, verdict sentences, provenance, reference numbers, the
//!   A/A self-test's judging, the command line's help text and the machine page's words;
//! - **top**: the command line and the crate root's declarations and re-exports, which
//!   tie the others together;
//! - **test**: the harness's test chapter, which only tests and its binary use.
//!
//! The code key (`key/hash.rs`) leaves out exactly the page layer and the number
//! formatting, and the test chapter for every crate but the harness: since the leaf
//! and the core import nothing of the page layer, what the key leaves out cannot
//! change what a round measures.
//!
//! A name used as `crate::NAME` leads to its module: a module's own name, a name the
//! crate root re-exports (`pub use record::{Reading, …}`, one line or several) to the
//! module it comes from, an item the crate root defines to [`ROOT_ITEMS`]. A name that
//! leads nowhere fails the test, so no edge goes unseen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The crate root's own items, checked as a module of their own (`lib.rs` less its
/// `mod` declarations and `pub use` re-exports).
const ROOT_ITEMS: &str = "lib (own items)";

const LEAF: &[&str] = &[
    "fmt", "unit", "env", "stats", "privacy", "procfs", "safe", "profile", "noise", "counters",
    "key", ROOT_ITEMS,
];
const CORE: &[&str] = &[
    "params",
    "machine",
    "record",
    "cache",
    "validate",
    "bounds",
    "evidence",
    "experiment",
    "finding",
    "rounds",
    "runner",
    "worker",
];
const PAGE: &[&str] = &[
    "render",
    "table",
    "tails",
    "notes",
    "provenance",
    "comparison",
    "answer",
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

/// The source without its comment lines: a doc link to `crate::x` is no import.
fn without_comments(src: &str) -> String {
    src.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The parts of a `{a, b::{c, d}, e}` list (without its outer braces), split at the
/// commas outside inner braces.
fn split_top_level(list: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut from) = (Vec::new(), 0i32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&list[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[from..]);
    parts
}

/// The text inside the braces that open `s` (`{…}`, nested braces kept).
fn braced(s: &str) -> &str {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &s[1..i];
                }
            }
            _ => {}
        }
    }
    &s[1.min(s.len())..]
}

fn ident(s: &str) -> String {
    s.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The first segment of every path after `crate::` (or `$crate::`) in a source,
/// including each of `use crate::{a, b::c}`.
fn crate_names(src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in src.match_indices("crate::") {
        let rest = &src[i + "crate::".len()..];
        if rest.starts_with('{') {
            for part in split_top_level(braced(rest)) {
                out.insert(ident(part));
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// What the crate root re-exports, name → module, from its `pub use m::x;` and
/// `pub use m::{x, y};` statements, one line or several.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let body = without_comments(&without_tests(lib));
    for (i, _) in body.match_indices("pub use ") {
        if i > 0 && !body[..i].ends_with('\n') {
            continue;
        }
        let stmt = &body[i + "pub use ".len()..];
        let stmt = &stmt[..stmt.find(';').unwrap_or(stmt.len())];
        let Some((module, names)) = stmt.split_once("::") else {
            continue;
        };
        let names = names.trim();
        let list = if names.starts_with('{') {
            split_top_level(braced(names))
        } else {
            vec![names]
        };
        for n in list {
            // `x as y` is known as `y`.
            let n = n.rsplit(" as ").next().unwrap_or(n);
            let n = ident(n.rsplit("::").next().unwrap_or(n));
            if !n.is_empty() && n != "self" {
                out.insert(n, module.trim().to_string());
            }
        }
    }
    out
}

/// The items the crate root defines itself (not a module, not a re-export), and the
/// crate root's source without its declarations and re-exports: the part those items
/// are made of.
fn root_items(lib: &str) -> (BTreeSet<String>, String) {
    let body = without_comments(&without_tests(lib));
    let mut items = BTreeSet::new();
    let mut own = Vec::new();
    let mut in_use = false;
    for line in body.lines() {
        let t = line.trim();
        if in_use {
            in_use = !t.ends_with(';');
            continue;
        }
        if t.starts_with("pub use ") || t.starts_with("use ") {
            in_use = !t.ends_with(';');
            continue;
        }
        if t.starts_with("pub mod ") || t.starts_with("mod ") {
            continue;
        }
        own.push(line);
        // Items at the top level only (no indentation), with or without `pub`.
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let mut words = t.split_whitespace();
        let mut w = words.next().unwrap_or("");
        if w.starts_with("pub") {
            w = words.next().unwrap_or("");
        }
        if w == "unsafe" || w == "async" || (w == "const" && t.contains("const fn")) {
            w = words.next().unwrap_or("");
        }
        if [
            "fn", "const", "static", "struct", "enum", "type", "trait", "union",
        ]
        .contains(&w)
            || w == "macro_rules!"
        {
            let name = ident(words.next().unwrap_or(""));
            if !name.is_empty() {
                items.insert(name);
            }
        }
    }
    (items, own.join("\n"))
}

/// Macros a module exports at the crate root (`#[macro_export] macro_rules! m`).
fn exported_macros(src: &str) -> Vec<String> {
    src.split("#[macro_export]")
        .skip(1)
        .filter_map(|rest| rest.trim_start().strip_prefix("macro_rules!"))
        .map(ident)
        .collect()
}

#[test]
fn the_harness_has_layers_and_no_import_cycle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "rs") {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            files.insert(name, std::fs::read_to_string(&p).unwrap());
        }
    }
    // Every module a layer lists exists, and every module is in a layer.
    for m in [LEAF, CORE, PAGE, TOP].concat() {
        assert!(
            m == ROOT_ITEMS || files.contains_key(m),
            "tests/layers.rs lists `{m}`, which is no module of the harness (src/{m}.rs)"
        );
    }
    for m in files.keys() {
        layer(m);
    }
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let lib = files["lib"].clone();
    // Where a name after `crate::` leads: its module.
    let mut leads_to: BTreeMap<String, String> = reexports(&lib);
    let (items, own) = root_items(&lib);
    assert!(
        items.contains("AA_TWIN") && items.contains("thread_cpu_time"),
        "the crate root's own items as read: {items:?}"
    );
    for i in &items {
        leads_to.insert(i.clone(), ROOT_ITEMS.to_string());
    }
    for (m, src) in &files {
        for mac in exported_macros(src) {
            leads_to.insert(mac, m.clone());
        }
    }
    let mut sources: BTreeMap<String, String> = files;
    sources.insert(ROOT_ITEMS.to_string(), own);
    let mut graph = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut unknown = Vec::new();
    for (m, src) in &sources {
        let mut deps = BTreeSet::new();
        for n in crate_names(&without_comments(&without_tests(src))) {
            if modules.contains(&n) {
                deps.insert(n);
            } else if let Some(to) = leads_to.get(&n) {
                deps.insert(to.clone());
            } else {
                unknown.push(format!("{m}: crate::{n}"));
            }
        }
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
        unknown.is_empty(),
        "names after `crate::` that lead to no module, re-export or item of the crate root \
         (teach tests/layers.rs where they live):\n{}",
        unknown.join("\n")
    );
    // The items of the crate root are seen: the leaf that reads the CPU clocks and the
    // page module that knows the A/A twins' suffix both lead there.
    assert!(
        graph["counters"].contains(ROOT_ITEMS),
        "{:?}",
        graph["counters"]
    );
    assert!(graph["aa"].contains(ROOT_ITEMS), "{:?}", graph["aa"]);
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
/// re-export, and outside its test module and comments).
fn chapter_edges(m: &str, src: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let body = without_comments(&without_tests(src));
    // `crate::name` of an item that is no module names something in the crate root.
    let mut out: BTreeSet<String> = crate_names(&body)
        .into_iter()
        .map(|n| {
            if modules.contains(&n) {
                n
            } else {
                "lib".into()
            }
        })
        .collect();
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

/// Issue 27: a chapter names its readings with its own key type (`ReadingKey`), so its
/// views, headlines and A/A twin find a reading by the same value the experiment stored
/// it under, never by a string. Its code (outside tests and comments) builds no reading
/// from a plain string, marks no twin by hand and asks the record for no reading by a
/// string key.
#[test]
fn chapters_find_readings_by_their_own_key_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let src_dir = e.path().join("src");
        if !src_dir.join("experiments.rs").is_file() {
            continue;
        }
        for f in std::fs::read_dir(&src_dir).unwrap().flatten() {
            let p = f.path();
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let code = without_comments(&without_tests(&std::fs::read_to_string(&p).unwrap()));
            for banned in [
                "Reading::new(",
                "AA_TWIN",
                "record.estimate(",
                "record.compare(",
                "record.ratio(",
                "record.values(",
                "record.keys(",
            ] {
                assert!(
                    !code.contains(banned),
                    "{} uses `{banned}`: name the reading with the chapter's key type \
                     (`Reading::of`, `Results::estimate(&Key)`, the key's twin)",
                    p.display()
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} chapter crates found");
}
