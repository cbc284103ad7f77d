//! Every page and the code it shows agree, for every chapter: every `{{#include}}`
//! resolves to a file and an anchor that exist; every anchor in the chapters' code
//! (and in the page scripts) is shown somewhere; every listing is a whole top-level
//! item at column 0, at most 40 lines, with no test plumbing; every live marker sits
//! outside code fences and names a view, table or section that exists; every view of
//! a chapter is on its page. Reads the sources only, so it measures nothing.

use book_tests::book_root;
use harness::experiment::ViewKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every page of the book: (file name, text).
fn pages() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(book_root().join("src"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// An anchor: the file it is in (relative to the book's root) and the lines it covers.
type Anchors = BTreeMap<(PathBuf, String), Vec<String>>;

/// Every `ANCHOR: name` … `ANCHOR_END: name` in the chapters' sources and the
/// page scripts.
fn anchors() -> Anchors {
    let root = book_root();
    let mut files: Vec<PathBuf> = Vec::new();
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "rs" || x == "js") {
                files.push(p);
            }
        }
    }
    for e in std::fs::read_dir(root.join("chapters-code"))
        .unwrap()
        .flatten()
    {
        walk(&e.path().join("src"), &mut files);
    }
    walk(&root.join("assets/js"), &mut files);
    let mut out = Anchors::new();
    for path in files {
        let rel = path.strip_prefix(&root).unwrap().to_path_buf();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut open: Option<(String, Vec<String>)> = None;
        for line in text.lines() {
            let t = line.trim();
            if let Some(name) = t.strip_prefix("// ANCHOR: ") {
                assert!(open.is_none(), "{}: nested anchor {name}", rel.display());
                open = Some((name.trim().to_string(), Vec::new()));
            } else if let Some(name) = t.strip_prefix("// ANCHOR_END: ") {
                let (n, lines) = open
                    .take()
                    .unwrap_or_else(|| panic!("{}: stray end {name}", rel.display()));
                assert_eq!(
                    n,
                    name.trim(),
                    "{}: anchor {n} ends as {name}",
                    rel.display()
                );
                let key = (rel.clone(), n.clone());
                assert!(
                    out.insert(key, lines).is_none(),
                    "{}: {n} twice",
                    rel.display()
                );
            } else if let Some((_, lines)) = open.as_mut() {
                lines.push(line.to_string());
            }
        }
        assert!(
            open.is_none(),
            "{}: an anchor is never closed",
            rel.display()
        );
    }
    out
}

/// Every `{{#include path[:anchor]}}` of a page: (path relative to the book's root,
/// anchor).
fn includes(page: &str) -> Vec<(PathBuf, Option<String>)> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("{{#include ") {
        let after = &rest[i + "{{#include ".len()..];
        let end = after.find("}}").expect("an include is closed");
        let spec = after[..end].trim();
        let (path, anchor) = match spec.split_once(':') {
            Some((p, a)) => (p, Some(a.to_string())),
            None => (spec, None),
        };
        let rel = Path::new("src").join(path);
        // Normalise `src/../x` to `x`.
        let mut norm = PathBuf::new();
        for c in rel.components() {
            match c {
                std::path::Component::ParentDir => {
                    norm.pop();
                }
                c => norm.push(c),
            }
        }
        out.push((norm, anchor));
        rest = &after[end..];
    }
    out
}

#[test]
fn every_include_resolves_and_every_anchor_is_shown() {
    let root = book_root();
    let anchors = anchors();
    let mut shown: Vec<(PathBuf, String)> = Vec::new();
    for (page, text) in pages() {
        for (path, anchor) in includes(&text) {
            assert!(
                root.join(&path).is_file(),
                "{page} includes {}, which does not exist",
                path.display()
            );
            if let Some(a) = anchor {
                assert!(
                    anchors.contains_key(&(path.clone(), a.clone())),
                    "{page} includes {}:{a}, an anchor that does not exist",
                    path.display()
                );
                shown.push((path, a));
            }
        }
    }
    for (file, name) in anchors.keys() {
        assert!(
            shown.iter().any(|(f, a)| f == file && a == name),
            "the anchor {}:{name} is shown on no page",
            file.display()
        );
    }
}

#[test]
fn every_rust_listing_is_a_whole_item_at_column_zero_of_at_most_forty_lines() {
    for ((file, name), lines) in anchors() {
        if file.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let at = format!("{}:{name}", file.display());
        assert!(lines.len() <= 40, "{at}: {} lines", lines.len());
        let first = lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_else(|| panic!("{at} is empty"));
        assert!(!first.starts_with(' '), "{at} does not start at column 0");
        let opens: usize = lines.iter().map(|l| l.matches('{').count()).sum();
        let closes: usize = lines.iter().map(|l| l.matches('}').count()).sum();
        assert_eq!(opens, closes, "{at} is not a whole item");
        let body = lines.join("\n");
        for hook in ["fake", "for_test", "#[cfg(test)]"] {
            assert!(!body.contains(hook), "{at} shows test plumbing ({hook})");
        }
    }
}

/// A live marker: (package, binary, kind, name) from
/// `<!-- cmdrun -0 sh ../chapters-code/harness/run.sh PKG[/BIN] [KIND NAME] -->`.
#[derive(Debug)]
struct Marker {
    package: String,
    binary: String,
    kind: Option<String>,
    name: Option<String>,
}

/// The markers of a page; panics on a marker inside a code fence or of another form.
fn markers(page: &str, text: &str) -> Vec<Marker> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !t.starts_with("<!-- cmdrun") {
            continue;
        }
        assert!(!fenced, "{page}: a marker inside a code fence: {t}");
        let cmd = t
            .strip_prefix("<!-- cmdrun -0 sh ../chapters-code/harness/run.sh ")
            .and_then(|c| c.strip_suffix("-->"))
            .unwrap_or_else(|| panic!("{page}: a marker of another form: {t}"));
        let mut words = cmd.split_whitespace();
        let target = words.next().expect("a package");
        let (package, binary) = target.split_once('/').unwrap_or((target, target));
        out.push(Marker {
            package: package.to_string(),
            binary: binary.to_string(),
            kind: words.next().map(str::to_string),
            name: words.next().map(str::to_string),
        });
    }
    out
}

#[test]
fn every_marker_names_what_exists_and_every_view_is_on_its_page() {
    let mut shown: Vec<(String, String)> = Vec::new();
    for (page, text) in pages() {
        for m in markers(&page, &text) {
            let name = m.name.clone().unwrap_or_default();
            let what = format!("{page}: {m:?}");
            if let Some(ch) = all_results::chapter(&m.package) {
                let kind = match m.kind.as_deref() {
                    Some("table") => ViewKind::Table,
                    Some("plot") => ViewKind::Plot,
                    _ => panic!("{what}: neither table nor plot"),
                };
                assert!(
                    ch.view(kind, &name).is_some() || ch.view_names(kind).contains(&name.as_str()),
                    "{what}: no such view"
                );
                assert_eq!(
                    page,
                    format!("{}.md", ch.name),
                    "{what}: a chapter's view belongs on its page"
                );
            } else if m.package == "all-results" {
                assert_eq!(m.kind.as_deref(), Some("table"), "{what}");
                assert!(
                    all_results::APPENDIX_TABLES.contains(&name.as_str())
                        || all_results::chapter(&name).is_some(),
                    "{what}: no such appendix table"
                );
            } else if m.package == "what-to-use-when" {
                assert_eq!(m.kind.as_deref(), Some("table"), "{what}");
                assert!(
                    what_to_use_when::SECTIONS.contains(&name.as_str()),
                    "{what}: no such section of the guide"
                );
            } else {
                let bin = book_root()
                    .join("chapters-code")
                    .join(&m.package)
                    .join("src/bin")
                    .join(format!("{}.rs", m.binary));
                assert!(bin.is_file(), "{what}: no binary {}", bin.display());
            }
            shown.push((m.package.clone(), name));
        }
    }
    let on_a_page = |package: &str, name: &str| {
        shown
            .iter()
            .any(|(p, n)| p.as_str() == package && n.as_str() == name)
    };
    for ch in all_results::CHAPTERS {
        for name in ch.view_names(ViewKind::Table) {
            assert!(
                on_a_page(ch.name, name),
                "the table {name} of {} is on no page",
                ch.name
            );
        }
        for v in ch.views {
            assert!(
                on_a_page(ch.name, v.name()),
                "the view {} of {} is on no page",
                v.name(),
                ch.name
            );
        }
    }
    for t in all_results::APPENDIX_TABLES {
        assert!(
            on_a_page("all-results", t),
            "the appendix table {t} is on no page"
        );
    }
    for s in what_to_use_when::SECTIONS {
        assert!(
            on_a_page("what-to-use-when", s),
            "the guide's section {s} is on no page"
        );
    }
}
