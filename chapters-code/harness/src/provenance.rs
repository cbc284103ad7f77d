//! Provenance: the short line under every live table and plot, and the full record
//! behind it, one click away.

use crate::fmt::*;
use crate::notes::{estimates, lowest_coverage_of};
use crate::privacy::scrub;
use crate::record::Record;
use crate::safe::text as escape_html;

/// What the record's intervals cover, for its provenance: `at 95 %`, the shortfall of
/// the lowest, or, when only figures whose rounds drifted fall short, both.
fn coverage_words(r: &Record) -> String {
    let estimates = estimates(r);
    let stated = format!("at {}", confidence_text());
    let Some(low) = lowest_coverage_of(&estimates) else {
        return stated;
    };
    let shortfall = if low.drift.is_none() && (low.n as usize) < r.rounds.len() {
        format!(
            "at {:.0} % for a figure with a value in only {} of the {} rounds",
            low.confidence * 100.0,
            low.n,
            r.rounds.len()
        )
    } else {
        coverage_shortfall(&low).unwrap_or_default()
    };
    let rest_stated = estimates
        .iter()
        .filter(|(_, e)| e.drift.is_none())
        .all(|(_, e)| e.at_stated_confidence());
    if low.drift.is_some() && rest_stated {
        format!("{stated}, and {shortfall}")
    } else {
        shortfall
    }
}

fn mean_of<T>(rounds: &[T], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = rounds.iter().filter_map(f).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The noise part of the provenance line: averages per round.
pub fn noise_summary(r: &Record) -> String {
    let rs = &r.rounds;
    let mut parts = Vec::new();
    match mean_of(rs, |x| x.noise.steal) {
        Some(s) => parts.push(format!("steal {} %", sig3(s * 100.0))),
        None => parts.push("steal not readable".into()),
    }
    if let Some(b) = mean_of(rs, |x| x.noise.others_busy) {
        parts.push(format!("others busy {} cores", sig3(b)));
    }
    if let Some(q) = mean_of(rs, |x| x.noise.others_runnable) {
        parts.push(format!("{} other runnable", sig3(q)));
    }
    match mean_of(rs, |x| x.noise.involuntary_switches.map(|v| v as f64)) {
        Some(v) => parts.push(format!("{} involuntary switches", sig3(v))),
        None => parts.push("switches not readable".into()),
    }
    match mean_of(rs, |x| x.noise.migrations.map(|v| v as f64)) {
        Some(v) => parts.push(format!("{} migrations", sig3(v))),
        None => parts.push("migrations not readable".into()),
    }
    // The machine's own speed (`noise::syscall_probe_ns`): its median, and its range,
    // which says whether the machine changed during the session.
    let mut probes: Vec<f64> = rs.iter().filter_map(|x| x.noise.syscall_ns).collect();
    probes.sort_by(f64::total_cmp);
    if let (Some(lo), Some(hi)) = (probes.first(), probes.last()) {
        parts.push(format!(
            "a system call {} ({} over rounds)",
            fmt_ns(crate::stats::median_sorted(&probes)),
            crate::fmt::fmt_range(*lo, *hi, crate::fmt::Unit::Nanos)
        ));
    }
    let disturbed = rs
        .iter()
        .filter(|x| x.noise.disturbance().is_some())
        .count();
    format!(
        "noise per round: {}; {disturbed} of {} rounds disturbed",
        parts.join(", "),
        rs.len()
    )
}

/// What sits under every live table and plot: one short line (profile, rounds, how
/// disturbed, when) that opens, one click away, onto the full record (machine,
/// compiler, parameters, how rounds ran, noise sensors, time taken).
pub fn provenance_line(r: &Record) -> String {
    provenance_line_of(r, None)
}

/// The short part of the provenance: `quick profile · 6 rounds · 0 of 6 rounds
/// disturbed · 2026-11-24 11:30 UTC`.
pub fn provenance_summary(r: &Record) -> String {
    let disturbed = r
        .rounds
        .iter()
        .filter(|x| x.noise.disturbance().is_some())
        .count();
    let set = if r.params.iter().any(|p| !p.default) {
        " · parameters set by hand"
    } else {
        ""
    };
    format!(
        "{} profile · {} rounds · {disturbed} of {} disturbed{set} · {}",
        r.profile.name(),
        r.rounds.len(),
        r.rounds.len(),
        r.provenance.measured_at,
    )
}

/// The full record behind [`provenance_summary`].
pub fn provenance_details(r: &Record) -> String {
    let m = &r.provenance.machine;
    // Names only: the units are in `list` and in the chapter (`gap_ms = 10 ms` said it twice).
    let mut params: Vec<String> = r
        .params
        .iter()
        .map(|p| {
            let set = if p.default { "" } else { " (set)" };
            format!("{} = {}{set}", p.name, p.display())
        })
        .collect();
    params.extend(r.details.iter().map(|(k, v)| format!("{k}: {v}")));
    let params = if params.is_empty() {
        String::new()
    } else {
        format!("; parameters: {}", params.join(", "))
    };
    format!(
        "Measured on {} · {} build{params} · {} rounds, {}, intervals over rounds {} · {} · took {}",
        crate::machine_words::details_line(m),
        r.build,
        r.rounds.len(),
        r.isolation,
        coverage_words(r),
        noise_summary(r),
        fmt_ns(r.wall_s * 1e9),
    )
}

/// [`provenance_line`], opened by a label saying which result it is (for pages that
/// draw on several). One HTML block without blank lines, its text escaped, so nothing
/// in it is read as Markdown.
pub fn provenance_line_of(r: &Record, label: Option<&str>) -> String {
    let summary = match label {
        Some(l) => format!("{l}: {}", provenance_summary(r)),
        None => provenance_summary(r),
    };
    format!(
        "<div class=\"cow-provenance\"><details><summary>{}</summary><p>{}</p></details></div>\n",
        escape_html(&scrub(&summary)).replace('\n', " "),
        escape_html(&scrub(&provenance_details(r))).replace('\n', " "),
    )
}

/// The provenance of a second view of a result whose first view sits just above it on
/// the page: the run is said once, so this line only points up.
pub fn provenance_same_run(r: &Record) -> String {
    format!(
        "<p class=\"cow-provenance cow-same-run\">Same run as above ({}).</p>\n",
        escape_html(&format!(
            "{} profile, {} rounds",
            r.profile.name(),
            r.rounds.len()
        ))
    )
}
