//! What the README and the pages promise, checked against what the code does: the Rust
//! version, the budgets' aims and hard bounds, CI running the README's test command
//! with fmt and clippy, and `make test-browser` failing without a browser.

use all_results::{FULL_AIM, FULL_WORST, QUICK_AIM, QUICK_WORST, budget_total};
use book_tests::book_root;
use harness::Profile;
use std::process::Command;
use std::time::Duration;

fn read(rel: &str) -> String {
    std::fs::read_to_string(book_root().join(rel)).unwrap()
}

#[test]
fn the_readme_asks_for_the_rust_version_the_workspace_declares() {
    let manifest: toml::Table = toml::from_str(&read("Cargo.toml")).unwrap();
    let version = manifest["workspace"]["package"]["rust-version"]
        .as_str()
        .unwrap()
        .to_string();
    let readme = read("README.md");
    assert!(
        readme.contains(&format!("Rust {version} or newer")),
        "the README should say \"Rust {version} or newer\""
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

#[test]
fn ci_runs_the_readmes_test_command_with_fmt_and_clippy() {
    let readme = read("README.md");
    assert!(
        readme.contains("\ncargo test --workspace "),
        "the README's test command"
    );
    let ci = read(".ci/run");
    let commands: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo ") || l.starts_with("make "))
        .collect();
    assert_eq!(
        commands,
        [
            "cargo fmt --all -- --check",
            "cargo clippy --workspace --all-targets -- -D warnings",
            "cargo test --workspace",
            "make test-browser",
        ]
    );
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
