//! Experiments, their views, and running one under a time bound.

use crate::cache;
use crate::machine::Machine;
use crate::profile::Profile;
use crate::record::{Note, NoteKind, Provenance, Record, Status};
use crate::render;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

/// What an experiment gets while it runs: its profile, its deadline, a place for its
/// parameters and notes, and progress bars.
pub struct Ctx {
    pub profile: Profile,
    label: String,
    deadline: Instant,
    params: Vec<(String, String)>,
    notes: Vec<Note>,
}

impl Ctx {
    pub fn new(profile: Profile, label: impl Into<String>, bound: Duration) -> Ctx {
        Ctx {
            profile,
            label: label.into(),
            deadline: Instant::now() + bound,
            params: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Records a parameter for the provenance line, and returns it.
    pub fn param<T: std::fmt::Display>(&mut self, name: &str, value: T) -> T {
        self.params.push((name.to_string(), value.to_string()));
        value
    }

    /// A note the reader sees under every view of this result.
    pub fn note(&mut self, kind: NoteKind, text: impl Into<String>) {
        self.notes.push(Note {
            kind,
            text: text.into(),
        });
    }

    /// When the experiment should stop, keeping what it has, and say so with a note.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    pub fn past_deadline(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Time left before the deadline (zero once past it).
    pub fn time_left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// A progress bar on stderr (hidden when stderr is not a terminal) that says what is
    /// running and how long is left.
    pub fn progress(&self, len: u64, what: &str) -> ProgressBar {
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:.bold} {wide_msg} [{bar:30}] {pos}/{len} {elapsed_precise} ETA {eta}",
            )
            .expect("a valid progress template")
            .progress_chars("=> "),
        );
        bar.set_prefix(self.label.clone());
        bar.set_message(what.to_string());
        bar
    }
}

/// One measurement of a chapter. `run` returns the experiment's data; `bound` is the
/// wall-clock time it may take in each profile.
pub struct Experiment {
    pub name: &'static str,
    pub about: &'static str,
    pub bound: fn(Profile) -> Duration,
    pub run: fn(&mut Ctx) -> anyhow::Result<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKind {
    Table,
    Plot,
}

/// A rendering of one experiment's result: a Markdown table or an SVG plot.
pub struct View {
    pub name: &'static str,
    pub kind: ViewKind,
    pub experiment: &'static str,
    pub render: fn(&Record) -> anyhow::Result<String>,
}

/// Everything a chapter binary serves.
pub struct Chapter {
    /// The crate's package name, which is also the chapter's slug.
    pub name: &'static str,
    /// `env!("CARGO_MANIFEST_DIR")` of the chapter crate, for the code key.
    pub dir: &'static str,
    pub experiments: &'static [Experiment],
    pub views: &'static [View],
}

impl Chapter {
    pub fn experiment(&self, name: &str) -> Option<&Experiment> {
        self.experiments.iter().find(|e| e.name == name)
    }

    pub fn view(&self, kind: ViewKind, name: &str) -> Option<&View> {
        self.views.iter().find(|v| v.kind == kind && v.name == name)
    }

    pub fn view_names(&self, kind: ViewKind) -> Vec<&'static str> {
        self.views
            .iter()
            .filter(|v| v.kind == kind)
            .map(|v| v.name)
            .collect()
    }

    pub fn key(&self) -> String {
        cache::code_key(self.dir)
    }
}

fn utc_now() -> String {
    let s = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    s.replace('T', " ").replace('Z', " UTC")
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs one experiment on its own thread under its time bound. An error, a panic or
/// an overrun becomes a record with that status: the book shows it, the build goes on.
pub fn measure(chapter: &Chapter, exp: &Experiment, profile: Profile) -> Record {
    let bound = (exp.bound)(profile);
    let label = format!("{}/{}", chapter.name, exp.name);
    eprintln!(
        "measuring {label} (profile {profile}, time bound {})",
        render::fmt_ns(bound.as_nanos() as f64)
    );
    let ctx = Ctx::new(profile, label, bound);
    let start = Instant::now();
    let run = exp.run;
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(exp.name.into())
        .spawn(move || {
            let mut ctx = ctx;
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&mut ctx)));
            let _ = tx.send((out, ctx.params, ctx.notes));
        });
    // The experiment should stop itself at its deadline; this is the last resort.
    let grace = bound / 2 + Duration::from_secs(2);
    let (status, params, notes, data) = match spawned {
        Err(e) => (
            Status::Failed {
                error: format!("could not start the experiment's thread: {e}"),
            },
            vec![],
            vec![],
            serde_json::Value::Null,
        ),
        Ok(_) => match rx.recv_timeout(bound + grace) {
            Ok((Ok(Ok(data)), params, notes)) => (Status::Ok, params, notes, data),
            Ok((Ok(Err(e)), params, notes)) => (
                Status::Failed {
                    error: format!("{e:#}"),
                },
                params,
                notes,
                serde_json::Value::Null,
            ),
            Ok((Err(panic), params, notes)) => (
                Status::Failed {
                    error: format!("it panicked: {}", panic_message(&*panic)),
                },
                params,
                notes,
                serde_json::Value::Null,
            ),
            Err(_) => (
                Status::TimedOut {
                    bound_s: (bound + grace).as_secs_f64(),
                },
                vec![],
                vec![],
                serde_json::Value::Null,
            ),
        },
    };
    Record {
        chapter: chapter.name.into(),
        experiment: exp.name.into(),
        key: chapter.key(),
        profile,
        provenance: Provenance {
            machine: Machine::current(),
            measured_at: utc_now(),
        },
        params,
        status,
        notes,
        wall_s: start.elapsed().as_secs_f64(),
        data,
    }
}

/// The record to show for `exp`: a cached one matching the code, or a fresh
/// measurement in `profile` (stored for next time).
pub fn obtain(chapter: &Chapter, exp: &Experiment, profile: Profile, dir: &Path) -> Record {
    if let Some(r) = cache::best_match(dir, chapter.name, exp.name, &chapter.key()) {
        return r;
    }
    let r = measure(chapter, exp, profile);
    if let Err(e) = cache::store(dir, &r) {
        eprintln!("warning: could not cache the result: {e:#}");
    }
    r
}

/// A view's Markdown: the table or plot, then any notes, then the provenance line.
/// A failed or abandoned run renders as a note saying so.
pub fn render_view(view: &View, record: &Record) -> String {
    let mut out = String::new();
    let body = match &record.status {
        Status::Ok => (view.render)(record).map_err(|e| format!("{e:#}")),
        Status::Failed { error } => Err(format!("the experiment failed: {error}")),
        Status::TimedOut { bound_s } => Err(format!(
            "the experiment did not finish within {bound_s:.0} s and was abandoned"
        )),
    };
    match body {
        Ok(b) if view.kind == ViewKind::Plot => {
            out.push_str("<div class=\"cow-plot\">\n");
            out.push_str(&b);
            out.push_str("\n</div>\n\n");
        }
        Ok(b) => {
            out.push_str(&b);
            out.push('\n');
        }
        Err(e) => {
            out.push_str(&format!(
                "> **No result for `{}` on this machine:** {e}\n\n",
                view.name
            ));
        }
    }
    if !record.notes.is_empty() {
        out.push_str(&render::notes(&record.notes));
        out.push('\n');
    }
    out.push_str(&render::provenance_line(record));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok_run(ctx: &mut Ctx) -> anyhow::Result<serde_json::Value> {
        let n = ctx.param("n", 3);
        ctx.note(NoteKind::Info, "a note");
        Ok(serde_json::json!({ "n": n }))
    }
    fn failing_run(_: &mut Ctx) -> anyhow::Result<serde_json::Value> {
        anyhow::bail!("no such device")
    }
    fn panicking_run(_: &mut Ctx) -> anyhow::Result<serde_json::Value> {
        panic!("boom")
    }
    fn slow_run(_: &mut Ctx) -> anyhow::Result<serde_json::Value> {
        std::thread::sleep(Duration::from_secs(60));
        Ok(serde_json::Value::Null)
    }
    fn zero(_: Profile) -> Duration {
        Duration::ZERO
    }
    fn short(_: Profile) -> Duration {
        Duration::from_secs(1)
    }
    fn render_n(r: &Record) -> anyhow::Result<String> {
        #[derive(serde::Deserialize)]
        struct D {
            n: u32,
        }
        Ok(format!("n is {}\n", r.data::<D>()?.n))
    }

    const EXPERIMENTS: &[Experiment] = &[
        Experiment {
            name: "ok",
            about: "",
            bound: short,
            run: ok_run,
        },
        Experiment {
            name: "fails",
            about: "",
            bound: short,
            run: failing_run,
        },
        Experiment {
            name: "panics",
            about: "",
            bound: short,
            run: panicking_run,
        },
        Experiment {
            name: "slow",
            about: "",
            bound: zero,
            run: slow_run,
        },
    ];
    const VIEWS: &[View] = &[View {
        name: "n",
        kind: ViewKind::Table,
        experiment: "ok",
        render: render_n,
    }];
    const CHAPTER: Chapter = Chapter {
        name: "test-chapter",
        dir: env!("CARGO_MANIFEST_DIR"),
        experiments: EXPERIMENTS,
        views: VIEWS,
    };

    #[test]
    fn a_good_run_renders_with_notes_and_provenance() {
        let r = measure(&CHAPTER, &EXPERIMENTS[0], Profile::Quick);
        assert!(r.is_ok());
        assert_eq!(r.params, vec![("n".to_string(), "3".to_string())]);
        let md = render_view(&VIEWS[0], &r);
        assert!(md.starts_with("n is 3"), "{md}");
        assert!(md.contains("**Note:** a note"), "{md}");
        assert!(
            md.contains("cow-provenance") && md.contains("profile quick (n = 3)"),
            "{md}"
        );
    }

    #[test]
    fn failures_panics_and_overruns_become_visible_notes() {
        for (exp, expect) in [
            (&EXPERIMENTS[1], "no such device"),
            (&EXPERIMENTS[2], "panicked: boom"),
            (&EXPERIMENTS[3], "did not finish within"),
        ] {
            let r = measure(&CHAPTER, exp, Profile::Quick);
            assert!(!r.is_ok());
            let md = render_view(&VIEWS[0], &r);
            assert!(md.contains("No result for"), "{md}");
            assert!(md.contains(expect), "{md}");
            assert!(md.contains("cow-provenance"), "{md}");
        }
    }

    #[test]
    fn obtain_uses_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let a = obtain(&CHAPTER, &EXPERIMENTS[0], Profile::Quick, dir.path());
        let b = obtain(&CHAPTER, &EXPERIMENTS[0], Profile::Full, dir.path());
        assert_eq!(a, b, "the second call must reuse the first result");
    }
}
