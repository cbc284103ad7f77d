//! Where the book lists its chapters, read from the files of a book's root, and the
//! check that every place agrees with the registry (`CHAPTERS` in
//! `chapters-code/all-results/src/lib.rs`). It reads text only, so the tests can run
//! it on a temporary copy of the book with a chapter added the way CONTRIBUTING.md says.
//!
//! The places:
//!
//! 1. the chapter folders: every crate in `chapters-code/` whose registry (`src/chapter.rs`,
//!    or `src/lib.rs`) declares
//!    `harness::chapter!(` (with its page `src/<slug>.md`);
//! 2. `src/SUMMARY.md`, the entries under `# The experiments`;
//! 3. the introduction's numbered list under `## The chapters`;
//! 4. the appendix page `src/all-results.md`, a marker `all-results table <slug>` each;
//! 5. the registry `CHAPTERS`, and the path dependencies of `all-results/Cargo.toml`.

use std::path::Path;

/// The files a new chapter edits, as CONTRIBUTING.md's "Adding a chapter" names them.
pub const EDITED_FILES: [&str; 5] = [
    "src/SUMMARY.md",
    "src/introduction.md",
    "chapters-code/all-results/src/lib.rs",
    "chapters-code/all-results/Cargo.toml",
    "src/all-results.md",
];

/// The chapters each place lists, by slug (the crate's package name, its folder and
/// its page's file name), in the order the place gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// Folders in `chapters-code/` that hold a chapter, sorted by name.
    pub folders: Vec<String>,
    pub summary: Vec<String>,
    pub introduction: Vec<String>,
    pub appendix: Vec<String>,
    pub registry: Vec<String>,
    /// The chapter crates `all-results` depends on, in its manifest's order.
    pub registry_deps: Vec<String>,
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_default()
}

/// `slug` of a Markdown link target `slug.md` (or `./slug.md`).
fn md_slug(link: &str) -> Option<String> {
    let l = link.trim().trim_start_matches("./");
    l.strip_suffix(".md").map(str::to_string)
}

/// The link targets of `[..](target)` in a line.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(j) = after.find(')') else { break };
        out.push(after[..j].to_string());
        rest = &after[j..];
    }
    out
}

/// The lines of a Markdown section: after the heading line `heading`, up to the next
/// heading of the same or a higher level.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = text.lines();
    if !lines.any(|l| l.trim() == heading) {
        return Vec::new();
    }
    lines
        .take_while(|l| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            !(hashes > 0 && hashes <= level && l[hashes..].starts_with(' '))
        })
        .collect()
}

/// Reads every place in the book at `root`.
pub fn places(root: &Path, appendix_tables: &[&str]) -> Places {
    let mut folders: Vec<String> = std::fs::read_dir(root.join("chapters-code"))
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    // A chapter's folder: its registry, in chapter.rs (or lib.rs),
                    // holds `harness::chapter!(`.
                    ["src/chapter.rs", "src/lib.rs"].iter().any(|f| {
                        std::fs::read_to_string(e.path().join(f))
                            .is_ok_and(|s| s.contains("harness::chapter!("))
                    })
                })
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    folders.sort();

    let summary_text = read(root, "src/SUMMARY.md");
    let summary = section(&summary_text, "# The experiments")
        .iter()
        .filter(|l| l.trim_start().starts_with("- ["))
        .flat_map(|l| link_targets(l).into_iter().take(1))
        .filter_map(|t| md_slug(&t))
        .collect();

    let intro_text = read(root, "src/introduction.md");
    let introduction = section(&intro_text, "## The chapters")
        .iter()
        .filter(|l| {
            let t = l.trim_start();
            t.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .flat_map(|l| link_targets(l).into_iter().take(1))
        .filter_map(|t| md_slug(&t))
        .collect();

    let appendix = read(root, "src/all-results.md")
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix(
                "<!-- cmdrun -0 sh ../chapters-code/harness/run.sh all-results table ",
            )?;
            let name = rest.trim_end_matches("-->").trim();
            (!appendix_tables.contains(&name)).then(|| name.to_string())
        })
        .collect();

    let lib = read(root, "chapters-code/all-results/src/lib.rs");
    let registry = lib
        .split_once("pub static CHAPTERS")
        .and_then(|(_, rest)| rest.split_once("];"))
        .map(|(body, _)| {
            body.split('&')
                .filter_map(|item| {
                    let path = item.trim().trim_end_matches(',').trim();
                    let krate = path.strip_suffix("::CHAPTER")?;
                    Some(krate.replace('_', "-"))
                })
                .collect()
        })
        .unwrap_or_default();

    let manifest = read(root, "chapters-code/all-results/Cargo.toml");
    let registry_deps = manifest
        .lines()
        .filter_map(|l| {
            let (name, value) = l.split_once('=')?;
            let path = value.split("path").nth(1)?;
            let target = path.split('"').nth(1)?;
            let slug = target.strip_prefix("../")?;
            (slug == name.trim() && slug != "harness").then(|| slug.to_string())
        })
        .collect();

    Places {
        folders,
        summary,
        introduction,
        appendix,
        registry,
        registry_deps,
    }
}

/// What disagrees with the registry, one sentence per problem naming the file to edit;
/// empty when every place agrees.
pub fn problems(root: &Path, appendix_tables: &[&str]) -> Vec<String> {
    let p = places(root, appendix_tables);
    let mut out = Vec::new();
    let registry = &p.registry;
    let reg = "the registry CHAPTERS in chapters-code/all-results/src/lib.rs";
    if registry.is_empty() {
        out.push(format!("{reg} lists no chapter (or cannot be read)"));
    }
    let mut sorted = registry.clone();
    sorted.sort();
    for slug in &p.folders {
        if !registry.contains(slug) {
            out.push(format!(
                "chapters-code/{slug} declares a chapter, but {reg} does not list it"
            ));
        }
    }
    for slug in registry {
        if !p.folders.contains(slug) {
            out.push(format!(
                "{reg} lists {slug}, but chapters-code/{slug} declares no chapter (no harness::chapter! in src/chapter.rs or src/lib.rs)"
            ));
        }
        if !root.join("src").join(format!("{slug}.md")).is_file() {
            out.push(format!("the chapter {slug} has no page src/{slug}.md"));
        }
    }
    let mut deps = p.registry_deps.clone();
    deps.sort();
    if deps != sorted {
        out.push(format!(
            "chapters-code/all-results/Cargo.toml depends on the chapters {deps:?}, but {reg} lists {sorted:?}"
        ));
    }
    for (place, file, listed) in [
        (
            "the entries under \"# The experiments\"",
            "src/SUMMARY.md",
            &p.summary,
        ),
        (
            "the lines of the numbered list under \"## The chapters\"",
            "src/introduction.md",
            &p.introduction,
        ),
        (
            "the `all-results table <slug>` markers",
            "src/all-results.md",
            &p.appendix,
        ),
    ] {
        if listed != registry {
            out.push(format!(
                "{file}: {place} list {listed:?}, but {reg} lists {registry:?} (the same chapters in the same order)"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_end_at_the_next_heading_of_their_level() {
        let text = "# A\n- [x](x.md)\n## sub\n- [y](y.md)\n# B\n- [z](z.md)\n";
        assert_eq!(section(text, "# A").len(), 3);
        assert_eq!(
            link_targets("1. **[T](t.md)** and [u](./u.md)"),
            ["t.md", "./u.md"]
        );
        assert_eq!(md_slug("./u.md").as_deref(), Some("u"));
    }
}
