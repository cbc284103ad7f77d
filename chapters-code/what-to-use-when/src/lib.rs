//! The closing chapter: a decision guide whose every number and every comparison is
//! computed from the reader's own results. It reads only the chapters' typed headline
//! figures (medians over rounds with their intervals); a comparison is stated only
//! when the two intervals do not overlap, otherwise the guide says this run cannot
//! tell. Where a figure is missing, the guide says so.

use all_results::{CHAPTERS, all_shown, records};
use harness::cells;
use harness::render::capitalise;
use harness::render::{
    Align, Better, Table, comparison_sentence, escape_html, fmt_estimate, threshold_text,
};
use harness::stats::{Comparison, Estimate, Verdict};
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

    /// The record two headline figures share, with their reading keys: `None` when
    /// they come from different records (then they cannot be paired round by round).
    fn shared_record(&self, a: &str, b: &str) -> Option<(&'a Record, String, String)> {
        let (ra, rb) = (self.record_of(a)?, self.record_of(b)?);
        let reading = |n: &str| {
            CHAPTERS
                .iter()
                .find_map(|c| c.headline(n))
                .map(|h| h.reading.stored())
        };
        std::ptr::eq(ra, rb).then_some((ra, reading(a)?, reading(b)?))
    }

    /// Two figures judged by the book's rule: on their per-round pairs when both come
    /// from the same rounds of one record, else apart, on their two intervals.
    fn comparison(&self, a: &str, b: &str) -> Option<Comparison> {
        let (fa, fb) = (self.figure(a)?, self.figure(b)?);
        if let Some(c) = self
            .shared_record(a, b)
            .and_then(|(r, ka, kb)| r.compare(&ka, &kb))
        {
            return Some(c);
        }
        Some(Comparison::unpaired(fa.estimate(), fb.estimate()))
    }

    /// A sentence comparing two figures by the book's rule.
    fn compare(&self, a: &str, an: &str, b: &str, bn: &str, better: Better) -> Option<String> {
        Some(comparison_sentence(an, bn, &self.comparison(a, b)?, better))
    }

    /// Whether `a` is clearly below `b`.
    fn clearly_below(&self, a: &str, b: &str) -> Option<bool> {
        Some(self.comparison(a, b)?.verdict == Verdict::Below)
    }

    /// The section's table of figures, then its sentences, then what is missing and the
    /// provenance of every record used.
    fn render(&self, wanted: &[Wanted], sentences: Vec<Option<String>>) -> String {
        let mut t = Table::new(["figure", "median (95 % interval)", "rounds", "measured by"])
            .align(3, Align::Left);
        let mut missing = Vec::new();
        let mut used: Vec<&Record> = Vec::new();
        for x in wanted {
            match self.figure(x.name) {
                Some(f) => {
                    t.row(cells![
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
        let figs: Vec<(&str, &str)> = options
            .iter()
            .map(|(n, l)| self.figure(n).map(|_| (*n, *l)))
            .collect::<Option<_>>()?;
        let wins = |a: &str, b: &str| {
            let v = self.comparison(a, b).map(|c| c.verdict);
            match better {
                Better::Lower | Better::Smaller => v == Some(Verdict::Below),
                Better::Higher => v == Some(Verdict::Above),
            }
        };
        let best = figs.iter().enumerate().find(|(i, (a, _))| {
            figs.iter()
                .enumerate()
                .filter(|(j, _)| j != i)
                .all(|(_, (b, _))| wins(a, b))
        });
        Some(match best {
            Some((_, (_, label))) => format!(
                "so on this machine, in this run, {label} {what}: the rule finds it ahead of every other option here, beyond the {} threshold",
                threshold_text()
            ),
            None => format!(
                "so this run names no single winner here: no option is ahead of all the others by more than {} with an interval clear of no difference",
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
                "so this run gives no latency reason to spin on std's channel here (the \
                 chapter judges the other runtime–transport pairs)"
                    .to_string()
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

/// Which throttle holds a rate: judged by how close each comes to its target, never by
/// which is faster (a throttle that overshoots fails as surely as one that falls short).
pub fn throttles(g: &Guide) -> String {
    const TARGET: f64 = 10_000.0;
    let named = [
        (throttles::headline::NAIVE_RATE_AT_10K, "the naive loop"),
        (
            throttles::headline::DEADLINE_RATE_AT_10K,
            "the deadline throttle",
        ),
        (
            throttles::headline::GOVERNOR_BURST_RATE_AT_10K,
            "governor with a 10 ms burst",
        ),
    ];
    let wanted = [
        w(named[0].0, "naive loop, asked for 10,000 ops/s"),
        w(named[1].0, "deadline throttle, asked for 10,000 ops/s"),
        w(named[2].0, "governor, 10 ms burst, asked for 10,000 ops/s"),
        w(
            short_sleeps::headline::THREAD_SLEEP_1MS_LATE,
            "how late a 1 ms sleep wakes",
        ),
    ];
    // Each figure against the target, a fixed figure: judged on the figure's interval.
    let against_target = |name: &str, label: &str| {
        let e = g.figure(name)?.estimate();
        let target = Estimate {
            median: TARGET,
            lo: TARGET,
            hi: TARGET,
            drift: None,
            ..e
        };
        Some(comparison_sentence(
            &format!("{label}'s rate"),
            "the target of 10,000 ops/s",
            &Comparison::unpaired(e, target),
            Better::Higher,
        ))
    };
    let mut sentences: Vec<Option<String>> =
        named.iter().map(|(n, l)| against_target(n, l)).collect();
    // Closeness: each round's distance from the target, |ln(rate ÷ target)|, paired
    // between two throttles of the same rounds.
    let distance = |a: &str, b: &str| -> Option<Comparison> {
        let (r, ka, kb) = g.shared_record(a, b)?;
        let (va, vb) = harness::record::aligned(&r.values(&ka), &r.values(&kb));
        let off = |v: Vec<f64>| -> Vec<f64> { v.iter().map(|x| (x / TARGET).ln().abs()).collect() };
        Comparison::paired(&off(va), &off(vb))
    };
    let (deadline, others) = (named[1], [named[0], named[2]]);
    for (o, label) in others {
        sentences.push(distance(deadline.0, o).map(|c| {
            comparison_sentence(
                "the deadline throttle's distance from the target (|ln(rate ÷ target)| per round)",
                &format!("{label}'s"),
                &c,
                Better::Smaller,
            )
        }));
    }
    // The lateness comes from the experiment designed to measure it (short sleeps'
    // sweep), the figure that chapter shows, not from the throttles' own sweep.
    sentences.push(g.figure(short_sleeps::headline::THREAD_SLEEP_1MS_LATE).map(|f| {
        format!(
            "for scale, a 1 ms `thread::sleep` wakes {} late on this machine (the short-sleeps chapter's sweep, the experiment that measures how late sleeps wake); our hypothesis, which the throttles chapter measures for its own loop: the naive loop falls short because each of its sleeps wakes late by about that much and it never makes the time up",
            fmt_estimate(&f.estimate(), f.unit)
        )
    }));
    sentences.push(Some(
        "a throttle is judged here by how close it holds its target, not by how fast it goes: \
         a rate above the target (governor's start-up burst, in a run this short) breaks the \
         contract as surely as one below it; which throttle to use is in the throttles \
         chapter's answer block, at the write-up's 1,000 ops/s"
            .to_string(),
    ));
    g.render(&wanted, sentences)
}

/// A lock inside async code: the lock judged against the same structure without it,
/// then advice computed from which comparisons the rule decided.
pub fn locks(g: &Guide) -> String {
    use async_locks::headline::{
        DESIGN2_MULTI_THREAD_LATENESS_P50 as D2, FIX_MULTI_THREAD_LATENESS_P50 as FIX,
        NO_LOCK_MULTI_THREAD_LATENESS_P50 as NO_LOCK, STD_MUTEX_MULTI_THREAD_LATENESS_P50 as STD,
    };
    let wanted = [
        w(STD, "std mutex in the callback (design 1)"),
        w(NO_LOCK, "the same structure without the lock"),
        w(D2, "tokio mutex plus a one-slot channel (design 2)"),
        w(FIX, "the chapter's fix"),
    ];
    let lock = g.comparison(STD, NO_LOCK);
    let slot = g.comparison(D2, FIX);
    let mut sentences = vec![
        lock.map(|c| {
            comparison_sentence(
                "the std mutex (design 1)",
                "the same structure without it",
                &c,
                Better::Lower,
            )
        }),
        slot.map(|c| comparison_sentence("design 2", "the fix", &c, Better::Lower)),
    ];
    // The advice follows from the verdicts, and says which figure it rests on.
    let advice_lock = match lock.map(|c| c.verdict) {
        Some(Verdict::Above) => Some(
            "advice from these numbers: here even a short std-mutex section cost lateness \
             against the same code without it; keep the critical section as short as it can \
             be, or take the shared state out of the path (the fix carries its data in the \
             message)",
        ),
        Some(_) => Some(
            "advice from these numbers: a `std::sync::Mutex` held for one push or pop cost \
             nothing this run could resolve against the same code without it, so in async \
             code keep it, held briefly and never across an `.await` (the chapter's hazard \
             arms show what holding it across one does)",
        ),
        None => None,
    };
    let advice_slot = match slot.map(|c| c.verdict) {
        Some(Verdict::Above) => Some(
            "advice from these numbers: design 2 was later than the fix; the chapter's \
             design 2′ (design 2 with room in the channel for every message, nothing else \
             changed) tests whether its one-slot channel is why, and where it is, give the \
             channel between many producers and one handler room for a burst",
        ),
        _ => None,
    };
    sentences.push(advice_lock.map(str::to_string));
    sentences.push(advice_slot.map(str::to_string));
    g.render(&wanted, sentences)
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
