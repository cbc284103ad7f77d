//! The chapter binary's command line: bad names are refused with the valid ones.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spinning-vs-sleeping"))
}

#[test]
fn unknown_table_lists_valid_names() {
    let out = bin().args(["table", "nonsense"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("variants") && err.contains("speedups"),
        "{err}"
    );
}

#[test]
fn unknown_plot_and_profile_are_refused() {
    let out = bin().args(["plot", "variants"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cdf-std"));
    let out = bin().args(["run", "--profile", "fast"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("quick") && err.contains("full"), "{err}");
    let out = bin()
        .args(["table", "variants"])
        .env("COW_PROFILE", "fast")
        .env(
            "COW_RESULTS_DIR",
            std::env::temp_dir().join("cow-cli-test-empty"),
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid profiles"));
}

#[test]
fn list_names_every_experiment() {
    let out = bin().arg("list").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for name in ["variants", "gaps", "pinning", "floor"] {
        assert!(s.contains(name), "{s}");
    }
}
