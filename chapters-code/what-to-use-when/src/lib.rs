//! The closing chapter: a decision guide computed from the reader's own results. It
//! holds no figure and no verdict of its own: each section gathers the chapters'
//! findings tagged for it (`Finding::guide`), renders them as the same decision table
//! the chapters open with, and ends in the recommendation the first of them supports on
//! this machine ("advice — here: figure"). Where a result is missing, the row says so.

use all_results::{all_shown, records};
use harness::Profile;
use harness::Record;
use harness::answer::{Row, decision_table, provenance_of, whys};
use std::path::Path;

/// The guide's sections, in page order.
pub const SECTIONS: [&str; 5] = ["waiting", "handoffs", "sleeps", "throttles", "locks"];

/// The rows of a section: every chapter's findings tagged for it, in chapter order.
pub fn rows<'a>(section: &str, records: &'a [Record]) -> (Vec<Row<'static>>, Vec<&'a Record>) {
    all_results::finding_rows(records, |f| f.guide() == Some(section))
}

/// One section of the guide from `records`: the decision table, the recommendation, why
/// each row comes out as it does, and which runs the figures come from.
pub fn render(section: &str, records: &[Record]) -> String {
    let (rows, used) = rows(section, records);
    if rows.is_empty() {
        return format!(
            "> **Not available:** no chapter names a finding for the section `{section}`.\n"
        );
    }
    let recommendation = rows
        .iter()
        .find_map(Row::recommendation)
        .map(|r| format!("**Recommendation:** {r}\n"))
        .unwrap_or_else(|| {
            "**Recommendation:** none yet: this machine has no result for these rows.\n".into()
        });
    format!(
        "{}\n{recommendation}\n{}\n{}",
        decision_table(&rows),
        whys(&rows),
        provenance_of(&used)
    )
}

/// Renders one section from the results the book shows (measuring what is missing).
pub fn section(name: &str, profile: Profile, dir: &Path) -> Option<String> {
    SECTIONS.contains(&name).then(|| {
        let records = records(&all_shown(profile, dir, true));
        render(name, &records)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_results_every_row_says_so_and_nothing_is_claimed() {
        for s in SECTIONS {
            let md = render(s, &[]);
            assert!(
                md.contains("no result on this machine") || md.contains("Not available"),
                "{md}"
            );
            assert!(!md.contains("× faster") && !md.contains("no clear"), "{md}");
            assert!(
                md.contains("none yet") || md.contains("Not available"),
                "{md}"
            );
        }
    }
}
