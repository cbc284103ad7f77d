//! The closing chapter: a decision guide whose every number and every comparison is
//! computed from the reader's own results. It reads only the chapters' typed headline
//! figures (medians over rounds with their intervals); a comparison is stated only
//! when the two intervals do not overlap, otherwise the guide says this run cannot
//! tell. Where a figure is missing, the guide says so.

use all_results::{CHAPTERS, all_shown, records};
use harness::render::capitalise;
use harness::render::{
    Better, Table, compare_sentence_paired, escape_html, fmt_estimate, threshold_text,
};
use harness::stats::{Verdict, verdict};
use harness::{Figure, Profile, Record};
use std::path::Path;

/// The guide's sections, in page order.
pub const SECTIONS: [&str; 5] = ["waiting", "handoffs", "sleeps", "throttles", "locks"];

/// The figures a section reads, by headline name, with how the guide labels them.
struct Wanted {
    name: &'static str,
    label: &'static str,
}

const fn w(name: &'static str, label: &'static str) -> Wanted {
    Wanted { name, label }
}

/// What one section has to work with: the figures found and the records behind them.
pub struct Guide<'a> {
    records: &'a [Record],
}

impl<'a> Guide<'a> {
    pub fn new(records: &'a [Record]) -> Guide<'a> {
        Guide { records }
    }

    fn figure(&self, name: &str) -> Option<Figure> {
        all_results::figure(self.records, name)
    }

    /// The record a headline figure is read from.
    fn record_of(&self, name: &str) -> Option<&'a Record> {
        let (ch, h) = CHAPTERS
            .iter()
            .find_map(|c| c.headline(name).map(|h| (c, h)))?;
        self.records
            .iter()
            .find(|r| r.chapter == ch.name && r.experiment == h.experiment)
    }

    /// The per-round ratio a ÷ b when both figures come from the same rounds.
    fn paired_ratio(&self, a: &str, b: &str) -> Option<harness::Estimate> {
        let (ra, rb) = (self.record_of(a)?, self.record_of(b)?);
        if !std::ptr::eq(ra, rb) {
            return None;
        }
        let reading = |n: &str| {
            CHAPTERS
                .iter()
                .find_map(|c| c.headline(n))
                .map(|h| h.reading)
        };
        ra.ratio(reading(a)?, reading(b)?)
    }

    /// A sentence comparing two figures, decided by their intervals.
    fn compare(&self, a: &str, an: &str, b: &str, bn: &str, better: Better) -> Option<String> {
        let (fa, fb) = (self.figure(a)?, self.figure(b)?);
        Some(compare_sentence_paired(
            (an, &fa.estimate()),
            (bn, &fb.estimate()),
            self.paired_ratio(a, b).as_ref(),
            self.paired_ratio(b, a).as_ref(),
            better,
        ))
    }

    /// Whether `a` is clearly below `b`.
    fn clearly_below(&self, a: &str, b: &str) -> Option<bool> {
        let (fa, fb) = (self.figure(a)?, self.figure(b)?);
        Some(verdict(&fa.estimate(), &fb.estimate()) == Verdict::Below)
    }

    /// The section's table of figures, then its sentences, then what is missing and the
    /// provenance of every record used.
    fn render(&self, wanted: &[Wanted], sentences: Vec<Option<String>>) -> String {
        let mut t = Table::new(["figure", "median (95 % interval)", "rounds", "measured by"]);
        let mut missing = Vec::new();
        let mut used: Vec<&Record> = Vec::new();
        for x in wanted {
            match self.figure(x.name) {
                Some(f) => {
                    t.row([
                        format!("{} (`{}`)", x.label, x.name),
                        fmt_estimate(&f.estimate(), f.unit),
                        f.rounds.to_string(),
                        measured_by(x.name),
                    ]);
                    if let Some(r) = self.record_of(x.name)
                        && !used.iter().any(|u| std::ptr::eq(*u, r))
                    {
                        used.push(r);
                    }
                }
                None => missing.push(x),
            }
        }
        let mut out = String::new();
        if !t.is_empty() {
            out.push_str(&t.to_markdown());
            out.push('\n');
        }
        let said: Vec<String> = sentences.into_iter().flatten().collect();
        for s in &said {
            out.push_str(&format!("- {}\n", capitalise(s)));
        }
        if !said.is_empty() {
            out.push('\n');
        }
        for m in missing {
            let why = self
                .record_of(m.name)
                .filter(|r| !r.is_ok())
                .map(|r| format!(": `{}/{}` {}", r.chapter, r.experiment, r.status.describe()))
                .unwrap_or_else(|| " on this machine".into());
            out.push_str(&format!(
                "> **Not available:** {} (`{}`) has no result{}.\n\n",
                m.label,
                m.name,
                escape_html(&why)
            ));
        }
        out.push_str(&provenance_of_section(&used));
        out
    }
}

/// One short line for a section's figures: which runs they come from (profile,
/// rounds, when). Each figure's full record is one click away under its table in the
/// chapter the "measured by" column links to, so the guide does not repeat it (the
/// page says so once).
fn provenance_of_section(used: &[&Record]) -> String {
    if used.is_empty() {
        return "<p class=\"cow-provenance\">No result of this machine's yet.</p>\n".into();
    }
    let names: Vec<String> = used
        .iter()
        .map(|r| format!("{}/{}", r.chapter, r.experiment))
        .collect();
    let mut profiles: Vec<&str> = used.iter().map(|r| r.profile.name()).collect();
    profiles.dedup();
    let rounds = used.iter().map(|r| r.rounds.len());
    let (lo, hi) = (rounds.clone().min().unwrap_or(0), rounds.max().unwrap_or(0));
    let rounds = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    };
    let latest = used
        .iter()
        .max_by_key(|r| r.provenance.measured_unix)
        .map(|r| r.provenance.measured_at.as_str())
        .unwrap_or_default();
    format!(
        "<p class=\"cow-provenance\">From {}: {} profile, {rounds} rounds, up to {}.</p>\n",
        escape_html(&names.join(", ")),
        escape_html(&profiles.join("/")),
        escape_html(latest)
    )
}

/// The experiment a headline figure comes from, linked to its chapter:
/// `[short-sleeps / sweep](short-sleeps.md)`.
fn measured_by(name: &str) -> String {
    CHAPTERS
        .iter()
        .find_map(|c| c.headline(name).map(|h| (c.name, h.experiment)))
        .map_or_else(String::new, |(c, e)| format!("[{c} / {e}]({c}.md)"))
}

impl Guide<'_> {
    /// The section's conclusion: which of `options` (headline, label) is the best
    /// (`better`), stated only when its interval is clear of every other's and beyond
    /// the practical threshold; `None` when a figure is missing.
    fn best_of(&self, options: &[(&str, &str)], better: Better, what: &str) -> Option<String> {
        let figs: Vec<(&str, harness::Estimate)> = options
            .iter()
            .map(|(n, l)| self.figure(n).map(|f| (*l, f.estimate())))
            .collect::<Option<_>>()?;
        let wins = |a: &harness::Estimate, b: &harness::Estimate| {
            let v = verdict(a, b);
            match better {
                Better::Lower => v == Verdict::Below,
                Better::Higher => v == Verdict::Above,
            }
        };
        let best = figs.iter().enumerate().find(|(i, (_, a))| {
            figs.iter()
                .enumerate()
                .filter(|(j, _)| j != i)
                .all(|(_, (_, b))| wins(a, b))
        });
        Some(match best {
            Some((_, (label, _))) => format!(
                "so on this machine, in this run, {label} {what}: its interval is clear of every other's here and beyond the {} threshold",
                threshold_text()
            ),
            None => format!(
                "so this run names no single winner here: no option's interval is clear of all the others' by more than {}",
                threshold_text()
            ),
        })
    }
}

/// Blocking against spinning, and the floor under both.
pub fn waiting(g: &Guide) -> String {
    let wanted = [
        w(
            spinning_vs_sleeping::headline::STD_MPSC_BLOCKING_P50,
            "std channel, receiver blocks",
        ),
        w(
            spinning_vs_sleeping::headline::STD_MPSC_SPINNING_P50,
            "std channel, receiver spins",
        ),
        w(
            spinning_vs_sleeping::headline::STD_UDP_BLOCKING_P50,
            "UDP socket, receiver blocks",
        ),
        w(
            spinning_vs_sleeping::headline::STD_UDP_SPINNING_P50,
            "UDP socket, receiver spins",
        ),
        w(
            spinning_vs_sleeping::headline::ATOMIC_FLOOR_ONE_WAY,
            "atomic hand-over between spinning threads",
        ),
    ];
    let so = g
        .clearly_below(
            spinning_vs_sleeping::headline::STD_MPSC_SPINNING_P50,
            spinning_vs_sleeping::headline::STD_MPSC_BLOCKING_P50,
        )
        .map(|below| {
            if below {
                "so on this machine spinning buys latency, at the price of a core kept busy for \
                 as long as it waits (the chapter's CPU table); our advice, which this book does \
                 not measure with more spinners than cores: spin only with a core to spare per \
                 waiter and only where the wake-up matters"
                    .to_string()
            } else {
                "so this run gives no latency reason to spin on a channel here".to_string()
            }
        });
    g.render(
        &wanted,
        vec![
            g.compare(
                spinning_vs_sleeping::headline::STD_MPSC_SPINNING_P50,
                "a spinning channel receiver",
                spinning_vs_sleeping::headline::STD_MPSC_BLOCKING_P50,
                "a blocking one",
                Better::Lower,
            ),
            g.compare(
                spinning_vs_sleeping::headline::STD_UDP_SPINNING_P50,
                "a spinning UDP receiver",
                spinning_vs_sleeping::headline::STD_UDP_BLOCKING_P50,
                "a blocking one",
                Better::Lower,
            ),
            so,
        ],
    )
}

/// Threads against async tasks, per hop of a token round a ring.
pub fn handoffs(g: &Guide) -> String {
    let wanted = [
        w(
            brigades::headline::THREADS_PER_HOP,
            "threads over socket pairs, per hop",
        ),
        w(
            brigades::headline::ASYNC_CURRENT_SOCKET_PER_HOP,
            "async tasks over socket pairs, per hop",
        ),
        w(
            brigades::headline::ASYNC_CURRENT_CHANNEL_PER_HOP,
            "async tasks over channels, per hop",
        ),
        w(
            brigades::headline::ASYNC_TASK_BYTES,
            "memory per async task",
        ),
    ];
    g.render(
        &wanted,
        vec![
            g.compare(
                brigades::headline::ASYNC_CURRENT_SOCKET_PER_HOP,
                "a hop between async tasks on tokio's current-thread runtime",
                brigades::headline::THREADS_PER_HOP,
                "a hop between threads",
                Better::Lower,
            ),
            g.compare(
                brigades::headline::ASYNC_CURRENT_CHANNEL_PER_HOP,
                "a hop over an async channel",
                brigades::headline::ASYNC_CURRENT_SOCKET_PER_HOP,
                "one over a socket pair",
                Better::Lower,
            ),
            g.best_of(
                &[
                    (
                        brigades::headline::THREADS_PER_HOP,
                        "a thread brigade over socket pairs",
                    ),
                    (
                        brigades::headline::ASYNC_CURRENT_SOCKET_PER_HOP,
                        "an async brigade over socket pairs",
                    ),
                    (
                        brigades::headline::ASYNC_CURRENT_CHANNEL_PER_HOP,
                        "an async brigade over channels",
                    ),
                ],
                Better::Lower,
                "hands over fastest",
            ),
        ],
    )
}

/// Which short sleep, and what timer slack does to it.
pub fn sleeps(g: &Guide) -> String {
    let wanted = [
        w(
            short_sleeps::headline::NANOSLEEP_1NS_DEFAULT_SLACK,
            "nanosleep(1 ns), default timer slack",
        ),
        w(
            short_sleeps::headline::NANOSLEEP_1NS_SLACK_1NS,
            "nanosleep(1 ns), timer slack 1 ns",
        ),
        w(short_sleeps::headline::SCHED_YIELD, "sched_yield"),
    ];
    g.render(
        &wanted,
        vec![
            g.compare(
                short_sleeps::headline::NANOSLEEP_1NS_SLACK_1NS,
                "a 1 ns sleep with 1 ns of timer slack",
                short_sleeps::headline::NANOSLEEP_1NS_DEFAULT_SLACK,
                "one with the default slack",
                Better::Lower,
            ),
            g.compare(
                short_sleeps::headline::SCHED_YIELD,
                "a `sched_yield`",
                short_sleeps::headline::NANOSLEEP_1NS_SLACK_1NS,
                "a 1 ns `nanosleep` with 1 ns of timer slack",
                Better::Lower,
            ),
            g.clearly_below(
                short_sleeps::headline::NANOSLEEP_1NS_SLACK_1NS,
                short_sleeps::headline::NANOSLEEP_1NS_DEFAULT_SLACK,
            )
            .map(|below| {
                let slack = if below {
                    "so on this machine lowering the thread's timer slack \
                     (`prctl(PR_SET_TIMERSLACK)`) shortens a short `nanosleep`; which call gives \
                     the shortest sleep of all, if any one does, is the short-sleeps chapter's \
                     answer (it compares every sleeping call)"
                } else {
                    "so on this machine lowering the timer slack gave no clear gain for a short sleep"
                };
                format!(
                    "{slack}. A `sched_yield` is not a sleep: it only offers the CPU to another \
                     runnable thread and returns at once when there is none (the chapter's calls \
                     table counts whether it gave the CPU away)"
                )
            }),
        ],
    )
}

/// Which throttle holds a rate.
pub fn throttles(g: &Guide) -> String {
    let wanted = [
        w(
            throttles::headline::NAIVE_RATE_AT_10K,
            "naive loop, asked for 10,000 ops/s",
        ),
        w(
            throttles::headline::DEADLINE_RATE_AT_10K,
            "deadline throttle, asked for 10,000 ops/s",
        ),
        w(
            short_sleeps::headline::THREAD_SLEEP_1MS_LATE,
            "how late a 1 ms sleep wakes",
        ),
    ];
    // The lateness comes from the experiment designed to measure it (short sleeps'
    // sweep), the figure that chapter shows, not from the throttles' own sweep.
    let late = g.figure(short_sleeps::headline::THREAD_SLEEP_1MS_LATE).map(|f| {
        format!(
            "for scale, a 1 ms `thread::sleep` wakes {} late on this machine (the short-sleeps chapter's sweep, the experiment that measures how late sleeps wake); our hypothesis, which the throttles chapter measures for its own loop: the naive loop falls short because each of its sleeps wakes late by about that much and it never makes the time up",
            fmt_estimate(&f.estimate(), f.unit)
        )
    });
    g.render(
        &wanted,
        vec![
            g.compare(
                throttles::headline::DEADLINE_RATE_AT_10K,
                "the deadline throttle's rate",
                throttles::headline::NAIVE_RATE_AT_10K,
                "the naive loop's",
                Better::Higher,
            ),
            late,
            g.best_of(
                &[
                    (throttles::headline::NAIVE_RATE_AT_10K, "the naive loop"),
                    (
                        throttles::headline::DEADLINE_RATE_AT_10K,
                        "the deadline throttle",
                    ),
                ],
                Better::Higher,
                "achieved the higher rate (both were asked for 10,000 operations a second)",
            ),
        ],
    )
}

/// A lock inside async code.
pub fn locks(g: &Guide) -> String {
    let wanted = [
        w(
            async_locks::headline::STD_MUTEX_MULTI_THREAD_LATENESS_P50,
            "std mutex in the callback",
        ),
        w(
            async_locks::headline::DESIGN2_MULTI_THREAD_LATENESS_P50,
            "tokio mutex plus a one-slot channel (design 2)",
        ),
        w(
            async_locks::headline::FIX_MULTI_THREAD_LATENESS_P50,
            "the chapter's fix",
        ),
    ];
    g.render(
        &wanted,
        vec![
            g.compare(
                async_locks::headline::FIX_MULTI_THREAD_LATENESS_P50,
                "the fix",
                async_locks::headline::DESIGN2_MULTI_THREAD_LATENESS_P50,
                "design 2",
                Better::Lower,
            ),
            g.compare(
                async_locks::headline::FIX_MULTI_THREAD_LATENESS_P50,
                "the fix",
                async_locks::headline::STD_MUTEX_MULTI_THREAD_LATENESS_P50,
                "the std mutex",
                Better::Lower,
            ),
            g.best_of(
                &[
                    (
                        async_locks::headline::STD_MUTEX_MULTI_THREAD_LATENESS_P50,
                        "the std mutex",
                    ),
                    (
                        async_locks::headline::DESIGN2_MULTI_THREAD_LATENESS_P50,
                        "design 2",
                    ),
                    (
                        async_locks::headline::FIX_MULTI_THREAD_LATENESS_P50,
                        "the fix",
                    ),
                ],
                Better::Lower,
                "handles its timeouts least late",
            ),
        ],
    )
}

/// Renders one section from the results the book shows (measuring what is missing).
pub fn section(name: &str, profile: Profile, dir: &Path) -> Option<String> {
    let render: fn(&Guide) -> String = match name {
        "waiting" => waiting,
        "handoffs" => handoffs,
        "sleeps" => sleeps,
        "throttles" => throttles,
        "locks" => locks,
        _ => return None,
    };
    let records = records(&all_shown(profile, dir, true));
    Some(render(&Guide::new(&records)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_the_guide_reads_is_a_declared_headline() {
        let declared: Vec<&str> = CHAPTERS
            .iter()
            .flat_map(|c| c.headlines.iter().map(|h| h.name))
            .collect();
        let g = Guide::new(&[]);
        for render in [waiting, handoffs, sleeps, throttles, locks] {
            let md = render(&g);
            for name in md
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|n| n.contains('-') && !n.contains('/'))
            {
                assert!(
                    declared.contains(&name),
                    "the guide reads `{name}`, which no chapter declares"
                );
            }
            // With no results, every figure is reported missing, nothing is claimed.
            assert!(md.contains("Not available"), "{md}");
            assert!(!md.contains("faster") && !md.contains("no clear"), "{md}");
        }
    }
}
