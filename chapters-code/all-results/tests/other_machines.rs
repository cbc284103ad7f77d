//! Issue 26: results from other operating systems. Fixture results folders of a "macOS"
//! and a "Windows" machine (records of short sleeps' `calls`, written here from the
//! record type, as those machines' builds would write them, and carrying this build's
//! key, as a runner built from the same commit with the same rustc would) are imported
//! with `all-results import`: they are kept apart from this machine's results, under
//! `other-machines/<machine>/`, never shown as this machine's; and short sleeps'
//! section "The same calls on other operating systems" (`all-results table other-os`,
//! the chapter page's marker) shows each, labelled with its machine, beside the
//! write-up's figures. Without imports the section says how to add one. Correctness
//! only: the figures are the fixtures'.

use crate::common;
use common::{all_results, calls_data, calls_record, results_folder};
use harness::Record;
use harness::machine::Machine;

fn machine(os: &str, kernel: &str, arch: &str, cpu: &str, cpus: usize) -> Machine {
    Machine {
        cpu: cpu.into(),
        logical_cpus: cpus,
        virtualised: Some(true),
        // As records older than the typed field: the description names the OS.
        target_os: None,
        os: os.into(),
        kernel: kernel.into(),
        arch: arch.into(),
        rustc: "rustc 1.95.0".into(),
        build: "release".into(),
        underneath: None,
    }
}

const MAC: &[(&str, f64)] = &[
    ("empty loop", 0.4),
    ("thread::sleep(0)", 3.0),
    ("nanosleep(0)", 900.0),
    ("pselect(0)", 400.0),
    ("sched_yield()", 170.0),
    ("yield_now()", 175.0),
    ("thread::sleep(1 ns)", 11_000.0),
    ("nanosleep(1 ns)", 12_000.0),
    ("pselect(1 ns)", 420.0),
    ("thread::sleep(1 ms)", 1_250_000.0),
];

fn mac() -> Record {
    calls_record(
        machine("macOS 14.5", "23.5.0", "aarch64", "Apple M1 (Virtual)", 3),
        MAC,
        &[],
        calls_data(MAC),
    )
}

const WINDOWS: &[(&str, f64)] = &[
    ("empty loop", 0.3),
    ("thread::sleep(0)", 120.0),
    ("Sleep(0)", 60.0),
    ("SleepEx(0, FALSE)", 65.0),
    ("thread::sleep(1 ns)", 1_100_000.0),
    ("thread::sleep(1 ms)", 1_990_000.0),
    ("Sleep(1)", 1_995_000.0),
    ("SleepEx(1, FALSE)", 1_996_000.0),
    ("waitable timer (100 ns)", 520_000.0),
];

fn windows() -> Record {
    calls_record(
        machine(
            "windows",
            "",
            "x86_64",
            "AMD EPYC 7763 64-Core Processor <b>",
            4,
        ),
        WINDOWS,
        &[(
            short_sleeps::experiments::TIMER_RESOLUTION_DETAIL,
            "current 1 ms (coarsest 15.6 ms, finest 500 µs)",
        )],
        calls_data(WINDOWS),
    )
}

#[test]
fn without_imports_the_section_says_how_to_add_one() {
    let results = tempfile::tempdir().unwrap();
    let out = all_results(&["table".as_ref(), "other-os".as_ref()], results.path());
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("No results from another operating system"),
        "{text}"
    );
    assert!(text.contains("all-results import"), "{text}");
    // It measured nothing: the results folder holds no result of this machine.
    assert!(!results.path().join("short-sleeps").exists());
}

#[test]
fn other_systems_are_kept_apart_and_shown_labelled_with_their_machine() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results");
    std::fs::create_dir_all(&results).unwrap();
    for (name, r) in [("from-mac", mac()), ("from-windows", windows())] {
        let from = results_folder(root.path(), name, &r);
        let out = all_results(&["import".as_ref(), from.as_os_str()], &results);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{out:?}");
        assert!(
            stdout.starts_with("imported 0 good results")
                && stdout.contains("kept 1 good results of other operating systems apart"),
            "{stdout}"
        );
    }
    // Never as this machine's: nothing under the chapter's own folder.
    assert!(!results.join("short-sleeps").exists());
    let machines = all_results::others::machines(&results, "short-sleeps", "calls");
    let families: Vec<&str> = machines.iter().map(|m| m.family).collect();
    assert_eq!(families.len(), 2, "{machines:?}");
    assert!(families.contains(&"macos") && families.contains(&"windows"));
    for m in &machines {
        assert!(harness::safe::is_name(&m.id), "{}", m.id);
        assert!(
            results
                .join("other-machines")
                .join(&m.id)
                .join("short-sleeps")
                .join("calls.quick.release.json")
                .is_file()
        );
    }

    let out = all_results(&["table".as_ref(), "other-os".as_ref()], &results);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // Each machine is named: OS, CPU, date, profile.
    assert!(text.contains("**macOS 14.5, kernel 23.5.0**"), "{text}");
    assert!(
        text.contains("Apple M1 (Virtual) (3 logical CPUs"),
        "{text}"
    );
    assert!(text.contains("**Windows**"), "{text}");
    let line =
        "(release build), quick profile, 3 rounds (0 disturbed), measured 2026-06-01 12:00:00 UTC";
    assert_eq!(text.matches(line).count(), 2, "{text}");
    // A record's text is escaped, never markup.
    assert!(!text.contains("<b>"), "{text}");
    assert!(text.contains("&lt;b&gt;"), "{text}");
    // The macOS table: its own figures beside the write-up's OS X ones.
    let mac_part = &text[text.find("**macOS").unwrap()..text.find("**Windows").unwrap()];
    assert!(mac_part.contains("theirs, OS X 10.10 (ns)"), "{mac_part}");
    let line = |part: &str, call: &str| {
        part.lines()
            .find(|l| l.starts_with(&format!("| {call} |")))
            .unwrap_or_else(|| panic!("no row {call} in {part}"))
            .to_string()
    };
    let pselect = line(mac_part, "pselect(1 ns)");
    assert!(
        pselect.contains("416 ± 12") && pselect.contains("420"),
        "{pselect}"
    );
    assert!(mac_part.contains("no timerfd"), "{mac_part}");
    assert!(!mac_part.contains("| Sleep(0)"), "{mac_part}");
    // The Windows table: the write-up's set, the timer resolution both read.
    let win_part = &text[text.find("**Windows").unwrap()..];
    assert!(win_part.contains("theirs, Windows 10 (ns)"), "{win_part}");
    let sleep0 = line(win_part, "Sleep(0)");
    assert!(
        sleep0.contains("64 ± 1") && sleep0.contains("60"),
        "{sleep0}"
    );
    let zero = line(
        win_part,
        "thread::sleep(0): sleep_for(0 ns) and sleep_for(0 ms)",
    );
    assert!(
        zero.contains("130 ± 1") && zero.contains("132 ± 5"),
        "{zero}"
    );
    line(win_part, "SleepEx(1, FALSE)");
    assert!(win_part.contains("Its system timer resolution: current 1 ms"));
    assert!(win_part.contains("ClockRes: maximum interval 15.625 ms"));
    assert!(!win_part.contains("| nanosleep"), "{win_part}");
    assert!(
        !text.contains("   "),
        "no runs of spaces from broken lines: {text}"
    );
}

/// A results folder that already keeps other machines (a reader's results folder, or
/// the book tests' own) carries them along on import; a hostile file among them is
/// refused at the same door as every record.
#[test]
fn other_machines_travel_with_a_results_folder_and_pass_the_same_door() {
    let root = tempfile::tempdir().unwrap();
    let first = root.path().join("first");
    let from = results_folder(root.path(), "from-windows", &windows());
    assert!(
        all_results(&["import".as_ref(), from.as_os_str()], &first)
            .status
            .success()
    );
    let bad = first
        .join("other-machines")
        .join("windows-0000000000000000")
        .join("short-sleeps");
    std::fs::create_dir_all(&bad).unwrap();
    let mut hostile = serde_json::to_value(mac()).unwrap();
    hostile["experiment"] = "../../x".into();
    std::fs::write(bad.join("calls.quick.release.json"), hostile.to_string()).unwrap();
    let second = root.path().join("second");
    let out = all_results(&["import".as_ref(), first.as_os_str()], &second);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refused"), "{stderr}");
    let machines = all_results::others::machines(&second, "short-sleeps", "calls");
    assert_eq!(machines.len(), 1, "{machines:?}");
    assert_eq!(machines[0].family, "windows");
    assert!(!root.path().join("x").exists());
}
