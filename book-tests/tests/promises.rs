//! What the README and the pages promise, checked against what the code does: the Rust
//! version, the budgets' aims and hard bounds, the README's two commands (first on the
//! page, each a real target or CI's own test command), CI running that test command
//! with fmt and clippy, links between the top-level documents that lead somewhere, and
//! `make test-browser` failing without a browser. Facts, not sentences: the README's
//! wording is free.

use all_results::{FULL_AIM, FULL_WORST, QUICK_AIM, QUICK_WORST, budget_total};
use book_tests::book_root;
use harness::Profile;
use regex::Regex;
use std::process::Command;
use std::time::Duration;

fn read(rel: &str) -> String {
    std::fs::read_to_string(book_root().join(rel)).unwrap()
}

/// The commands in a Markdown file's `sh` code blocks, as (1-based line, command
/// without its trailing comment).
fn shell_commands(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(lang) = t.strip_prefix("```") {
            in_sh = !in_sh && (lang == "sh" || lang == "bash" || lang == "console");
            continue;
        }
        if in_sh {
            let cmd = t.split(" #").next().unwrap_or("").trim();
            if !cmd.is_empty() && !cmd.starts_with('#') {
                out.push((i + 1, cmd.to_string()));
            }
        }
    }
    out
}

/// The targets the Makefile defines (`name:` at the start of a line).
fn make_targets() -> Vec<String> {
    let re = Regex::new(r"(?m)^([a-z][a-z0-9-]*):").unwrap();
    re.captures_iter(&read("Makefile"))
        .map(|c| c[1].to_string())
        .collect()
}

/// The commands `.ci/run` runs with cargo or make, in order.
fn ci_commands() -> Vec<String> {
    read(".ci/run")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo ") || l.starts_with("make "))
        .map(String::from)
        .collect()
}

#[test]
fn the_readme_asks_for_the_rust_version_the_workspace_declares() {
    let manifest: toml::Table = toml::from_str(&read("Cargo.toml")).unwrap();
    let version = manifest["workspace"]["package"]["rust-version"]
        .as_str()
        .unwrap()
        .to_string();
    let readme = read("README.md");
    let named: Vec<String> = Regex::new(r"\bRust (1\.[0-9]+)\b")
        .unwrap()
        .captures_iter(&readme)
        .map(|c| c[1].to_string())
        .collect();
    assert!(
        named.contains(&version),
        "the README should name the workspace's rust-version, Rust {version}; it names {named:?}"
    );
}

/// The README's first screen holds its two commands — one to read the book, one to
/// test it — and each is real: the `make` target exists, and the test command is the
/// one CI runs.
#[test]
fn the_readmes_two_commands_come_first_and_are_real() {
    let readme = read("README.md");
    let commands = shell_commands(&readme);
    let first_screen: Vec<&String> = commands
        .iter()
        .filter(|(line, _)| *line <= 25)
        .map(|(_, c)| c)
        .collect();
    let make: Vec<&&String> = first_screen
        .iter()
        .filter(|c| c.starts_with("make "))
        .collect();
    let test: Vec<&&String> = first_screen
        .iter()
        .filter(|c| c.starts_with("cargo test"))
        .collect();
    assert!(
        make.len() == 1 && test.len() == 1,
        "the README's first 25 lines should hold one make command and one cargo test \
         command in a sh block; they hold {first_screen:?}"
    );
    let targets = make_targets();
    let target = make[0].split_whitespace().nth(1).unwrap_or_default();
    assert!(
        targets.iter().any(|t| t == target),
        "the README's `{}` names no Makefile target",
        make[0]
    );
    assert!(
        ci_commands().contains(test[0]),
        "CI (.ci/run) does not run the README's test command `{}`",
        test[0]
    );
}

/// Every `make TARGET` the README names, in code or in prose, is a target of the
/// Makefile.
#[test]
fn every_make_command_the_readme_names_exists() {
    let readme = read("README.md");
    let targets = make_targets();
    let re = Regex::new(r"(?m)(?:`|^)make ([a-z][a-z0-9-]*)").unwrap();
    let named: Vec<String> = re
        .captures_iter(&readme)
        .map(|c| c[1].to_string())
        .collect();
    assert!(named.len() >= 2, "the README names make targets: {named:?}");
    for n in &named {
        assert!(
            targets.contains(n),
            "the README names `make {n}`, which the Makefile lacks"
        );
    }
}

/// GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as
/// dashes.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The README, CONTRIBUTING.md and ARCHITECTURE.md link only to files that exist, and
/// to headings those files have.
#[test]
fn the_top_level_documents_link_to_what_exists() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let root = book_root();
    let mut bad = Vec::new();
    for doc in ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"] {
        let text = read(doc);
        // Code is not prose: a marker in a table cell or a listing is no link.
        let prose: String = text.split("```").step_by(2).collect::<Vec<_>>().join("\n");
        for c in link.captures_iter(&prose) {
            let target = &c[1];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, frag) = target.split_once('#').unwrap_or((target, ""));
            let file = if path.is_empty() { doc } else { path };
            let Ok(body) = std::fs::read_to_string(root.join(file)) else {
                bad.push(format!("{doc}: {target}: no file {file}"));
                continue;
            };
            if !frag.is_empty() {
                let has = body
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .map(|h| anchor_of(h.trim_start_matches('#')))
                    .any(|a| a == frag);
                if !has {
                    bad.push(format!("{doc}: {target}: no heading #{frag} in {file}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "links that lead nowhere:\n{}",
        bad.join("\n")
    );
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs())
}

fn minutes(d: Duration) -> String {
    format!("{} minutes", d.as_secs() / 60)
}

/// The aims and worst cases hold, and the pages state them as they are: the budgets'
/// sums as aims, beside the hard bounds' sums.
#[test]
fn the_budgets_keep_the_aims_and_bounds_the_pages_state() {
    for (profile, aim, worst) in [
        (Profile::Quick, QUICK_AIM, QUICK_WORST),
        (Profile::Full, FULL_AIM, FULL_WORST),
    ] {
        let (budgets, bounds) = budget_total(profile);
        assert!(budgets <= aim, "{profile:?}: budgets {budgets:?} > {aim:?}");
        assert!(
            bounds <= worst,
            "{profile:?}: hard bounds {bounds:?} > {worst:?}"
        );
    }
    let quick = [seconds(QUICK_AIM), seconds(QUICK_WORST)];
    let full = [minutes(FULL_AIM), minutes(FULL_WORST)];
    for (file, words) in [
        ("README.md", [&quick[..], &full[..]].concat()),
        ("src/introduction.md", quick.to_vec()),
        ("src/how-we-measure.md", [&quick[..], &full[..]].concat()),
    ] {
        let text = read(file).split_whitespace().collect::<Vec<_>>().join(" ");
        for w in &words {
            assert!(text.contains(w.as_str()), "{file} does not say {w:?}");
        }
        assert!(
            text.contains("aim") && text.contains("bound"),
            "{file}: the budgets are an aim, the bounds the worst case"
        );
    }
}

/// CI runs fmt, clippy (every feature, so the browser test is linted too), the
/// README's test command (checked above) and the browser test, in that order; other
/// steps (the Windows build under Wine) may run commands between them.
#[test]
fn ci_runs_the_readmes_test_command_with_fmt_and_clippy() {
    let want = [
        "cargo fmt --all -- --check",
        "cargo clippy --workspace --all-targets --all-features -- -D warnings",
        "cargo test --workspace",
        "make test-browser",
    ];
    let got = ci_commands();
    let mut rest = got.iter();
    for w in want {
        assert!(
            rest.any(|c| c == w),
            "`{w}` is missing from .ci/run or out of order: {got:?}"
        );
    }
    let workflow = read(".github/workflows/book.yml");
    for needed in [
        "run: make setup",
        "actions/cache/save@",
        "Swatinem/rust-cache@",
        ".ci/run",
        "cancel-in-progress: false",
    ] {
        assert!(workflow.contains(needed), "the workflow has no {needed:?}");
    }
    // The deploy job is the one that is never cancelled part-way.
    let deploy = workflow.split("\n  deploy:").nth(1).expect("a deploy job");
    assert!(deploy.contains("cancel-in-progress: false"));
}

fn check_browser(skip: bool) -> std::process::Output {
    let mut cmd = Command::new("make");
    cmd.current_dir(book_root())
        .args([
            "--no-print-directory",
            "check-browser",
            "CHROMIUM=/nonexistent/chromium",
            "CHROMEDRIVER=/nonexistent/chromedriver",
        ])
        .env_remove("COW_SKIP_BROWSER");
    if skip {
        cmd.env("COW_SKIP_BROWSER", "1");
    }
    cmd.output().expect("make runs")
}

#[test]
fn make_test_browser_fails_without_a_browser_unless_skipped_on_purpose() {
    let out = check_browser(false);
    assert!(!out.status.success(), "a missing browser must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/chromium") && err.contains("COW_SKIP_BROWSER=1"),
        "{err}"
    );
    assert!(check_browser(true).status.success());
    let makefile = read("Makefile");
    assert!(makefile.contains("test-browser: check-browser publish"));
    assert!(makefile.contains("SKIPPED on purpose"));
}

/// The book tests build the book with the reader's own tools (`make tools`, from
/// tools/Cargo.toml and its lock), the README names those versions, and the tests'
/// Markdown renderer is the parser at the version that mdbook uses.
#[test]
fn the_readers_tools_are_the_versions_the_tests_build_with() {
    let pin = |file: &str, name: &str| {
        let re = Regex::new(&format!(r#"(?m)^{name} = (?:\{{ version = )?"=([0-9.]+)""#)).unwrap();
        re.captures(&read(file))
            .unwrap_or_else(|| panic!("{file} pins no {name} (`{name} = \"=x.y.z\"`)"))[1]
            .to_string()
    };
    let readme = read("README.md");
    for name in ["mdbook", "mdbook-cmdrun"] {
        let tools = pin("tools/Cargo.toml", name);
        assert!(
            readme.contains(&format!("**{name} {tools}**")),
            "the README does not name {name} {tools}"
        );
        assert!(
            !read("book-tests/Cargo.toml").contains(&format!("\n{name} =")),
            "book-tests depends on {name} itself; it builds with the reader's tools"
        );
    }
    let lock = read("tools/Cargo.lock");
    let locked = Regex::new(r#"name = "pulldown-cmark"\nversion = "([0-9.]+)""#).unwrap();
    let mdbooks = &locked
        .captures(&lock)
        .expect("tools/Cargo.lock has pulldown-cmark")[1];
    assert_eq!(
        pin("book-tests/Cargo.toml", "pulldown-cmark"),
        mdbooks,
        "the tests' Markdown renderer is not the parser mdbook uses"
    );
    assert!(
        read("book-tests/src/lib.rs").contains(r#"["--no-print-directory", "-s", "tools"]"#),
        "the book tests do not build the book with `make tools`' tools"
    );
}

/// The fewest rounds a verdict needs, as the introduction and How we measure state it,
/// is the rule's own count; How we measure's rate at one round fewer is the bound the
/// rule rests on.
#[test]
fn the_pages_state_the_rounds_a_verdict_needs() {
    let n = harness::stats::VERDICT_MIN_ROUNDS;
    let intro = read("src/introduction.md").replace('\n', " ");
    assert!(
        intro.contains(&format!("a comparison is stated only from {n} rounds")),
        "the introduction does not say {n} rounds"
    );
    let method = read("src/how-we-measure.md").replace('\n', " ");
    assert!(
        method.contains(&format!("a comparison needs at least {n} rounds")),
        "How we measure does not say {n} rounds"
    );
    let fewer = harness::stats::worst_false_verdicts(n - 1) * 100.0;
    assert!(
        method.contains(&format!("{fewer} % with {} rounds", n - 1)),
        "How we measure does not give {fewer} % for {} rounds",
        n - 1
    );
}
