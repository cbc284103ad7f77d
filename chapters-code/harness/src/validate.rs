//! One validation at the door. Every record read from disk (the result cache, an
//! imported folder, a results file given to `all-results compare`) is checked here
//! before anything uses it; a record that fails is refused with the first reason and is
//! never shown or stored.
//!
//! The schema, beyond what the types already say (units from the known set, profiles,
//! statuses):
//!
//! - names (chapter, experiment, code key, figure) match [`crate::safe::is_name`]
//!   (`[a-z0-9-]`), the build is `release` or `debug`, parameter names are
//!   `[a-z0-9_]`; the caller checks them against the registry where it has one;
//! - every number is finite and no larger in size than [`MAX_VALUE`] (10^18, about 32
//!   years in nanoseconds); an interval has lo ≤ median ≤ hi;
//! - every string is at most [`MAX_TEXT`] characters with no control character, no
//!   Unicode format character ([`crate::safe::is_format`]: U+202E, U+2028, …) and no
//!   `{{` (the opening of an mdbook directive, which no measurement writes); the
//!   strings of a round's own data and the reading names, which chapter views put into
//!   tables as they are, hold none of `< > [ ] { } \``, which could start markup, a
//!   link, an image or an mdbook include;
//! - dates are short and made of digits, letters, spaces and `:.+-`;
//! - an HTML character reference (`&#x202E;`, `&lrm;`) is read as the character it
//!   stands for before these checks, since a page renders it as that character; a
//!   round's data and the reading names hold no `&` at all, nor `*`, `|` or `\`,
//!   which Markdown would act on (issue 35, item 13).
//!
//! **Sizes** (issue 35, items 3 and 10). A record is bounded so that neither a reader
//! nor the site can be exhausted by one, whatever its numbers say:
//!
//! - at most [`MAX_ROUNDS`] rounds (no profile runs more than 40), each with a distinct
//!   index and at most [`MAX_READINGS`] readings; a record file holds at most
//!   [`MAX_RECORD_VALUES`] JSON values and a bundle [`MAX_BUNDLE_VALUES`], counted
//!   before the file is parsed ([`check_values`]), so a file of zeros inside the size
//!   cap cannot make a tree of gigabytes, and nests at most [`MAX_DEPTH`] levels;
//! - every number of a round's data is no larger in size than [`MAX_VALUE`], and a
//!   stored distribution holds at most [`crate::stats::MAX_DIST_SAMPLES`] samples
//!   (checked as a round is decoded); views answer from (value, count) pairs and never
//!   expand a count;
//! - at most [`MAX_NOTES`] notes of at most [`MAX_NOTE`] characters, at most
//!   [`MAX_DETAILS`] details (name at most 64, value at most 256 characters), an
//!   isolation of at most 512 characters, texts in a round's data of at most
//!   [`MAX_DATA_TEXT`] characters. What a page prints of a record beside its tables
//!   (machine, isolation, notes, details) is then under 80 KiB per view even with every
//!   machine text at its 512-character cap (notes and details are at most 13 KiB of
//!   it), so the book's hundred-odd views cannot grow the site by more than about
//!   8 MB whatever the records say (1,900 notes of 4 KB made a 319 MB site); the
//!   tables' own cells come from the readings and data bounded above.
//!
//! These caps are book-wide. Where a reader knows the experiment (import, the page's
//! reader of stored results, another machine's records, `compare`'s rounds), the
//! record is then held to what that experiment makes from the parameters it stores
//! ([`crate::AnyExperiment::check_rounds`], [`crate::bounds`]): its profile's budget of
//! rounds, readings the code gives for each round's data, and every count of a round.
//!
//! The book's own measurements pass by construction: [`sanitize`] applies the same
//! rules to a fresh record before it is stored (a round's text that held one of those
//! characters gets a look-alike instead).

use crate::experiment::Figure;
use crate::record::{FORMAT, Record, Status};
use crate::safe::is_name;

/// The largest size a stored number may have.
pub const MAX_VALUE: f64 = 1e18;
/// The longest string a record may hold, in characters.
pub const MAX_TEXT: usize = 4096;
/// The most rounds a record may hold: no profile runs more than 40 (quick stops at 40,
/// full runs the write-ups' 10 or 20), and `book-tests`' fuzz test checks every
/// experiment's budget against it.
pub const MAX_ROUNDS: usize = 100;
/// The most readings one round may give (the book's most is 61).
pub const MAX_READINGS: usize = crate::bounds::MAX_READINGS;
/// The most notes a record may carry, and the longest note.
pub const MAX_NOTES: usize = 16;
pub const MAX_NOTE: usize = 512;
/// The most details a record may carry.
pub const MAX_DETAILS: usize = 16;
/// The longest text in a round's data or a reading's name.
pub const MAX_DATA_TEXT: usize = 256;
/// The most JSON values one record file may hold (the book's largest quick record
/// holds about 270,000, all its records together about 490,000).
pub const MAX_RECORD_VALUES: usize = 1_000_000;
/// The most JSON values a bundle (`all-results json`) may hold: eight times the
/// whole book's records, a parsed tree of at most a few hundred MB.
pub const MAX_BUNDLE_VALUES: usize = 4_000_000;
/// Characters a round's data and reading names may not hold: markup, links, includes,
/// character references and Markdown's emphasis, table and escape characters.
const NOT_IN_DATA: &[char] = &['<', '>', '[', ']', '{', '}', '`', '&', '*', '|', '\\'];

/// How many JSON values `bytes` holds at most, counted without parsing (each `,`, `[`
/// and `{` outside a string starts one more): the check that comes before a file is
/// parsed into a tree.
pub fn json_values(bytes: &[u8]) -> usize {
    scan(bytes).0
}

/// The deepest a results file nests (the Compare page's limit too): a record's data
/// may nest 32 levels below the five of a bundle.
pub const MAX_DEPTH: usize = 64;

/// [`json_values`], and how deep the file nests.
fn scan(bytes: &[u8]) -> (usize, usize) {
    let (mut n, mut in_string, mut escaped) = (1usize, false, false);
    let (mut depth, mut deepest) = (0usize, 0usize);
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                n += 1;
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => n += 1,
            _ => {}
        }
    }
    (n, deepest)
}

/// Refuses a file of more than `max` JSON values ([`json_values`]) before it is parsed,
/// and one that gives a key twice in one object anywhere, a round's data included
/// (`"median"` and `"m\u0065dian"` are the same key): which of the two counts would be a
/// guess, and the Compare page refuses it too (issue 35, item 12). Text that is not
/// JSON passes here; the parser that follows says why.
pub fn check_values(bytes: &[u8], max: usize) -> Result<(), String> {
    let (n, deepest) = scan(bytes);
    if n > max {
        return Err(format!(
            "it holds about {n} JSON values, more than the {max} any results file of this book holds"
        ));
    }
    if deepest > MAX_DEPTH {
        return Err(format!(
            "it nests deeper than {MAX_DEPTH} levels ({deepest}), deeper than any results file of this book"
        ));
    }
    match serde_json::from_slice::<Walk>(bytes) {
        Err(e) if e.to_string().starts_with("duplicate field `") => {
            let said = e.to_string();
            let said = said.split(" at line").next().unwrap_or(&said);
            Err(format!(
                "it gives a key twice ({})",
                crate::safe::terminal(&said.chars().take(120).collect::<String>())
            ))
        }
        _ => Ok(()),
    }
}

/// A walk over any JSON that keeps nothing but the keys of the object it is in, to find
/// a key given twice.
struct Walk;

impl<'de> serde::Deserialize<'de> for Walk {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Walk, D::Error> {
        d.deserialize_any(Walk)
    }
}

impl<'de> serde::de::Visitor<'de> for Walk {
    type Value = Walk;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_str<E>(self, _: &str) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_unit<E>(self) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Walk, A::Error> {
        while a.next_element::<Walk>()?.is_some() {}
        Ok(Walk)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Walk, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(k) = a.next_key::<String>()? {
            if keys.contains(&k) {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate field `{k}`"
                )));
            }
            a.next_value::<Walk>()?;
            keys.insert(k);
        }
        Ok(Walk)
    }
}

/// The character an HTML character reference at the start of `s` (just after its
/// `&`) stands for, and its length: numeric ones (`#x202E;`, `#8238;`) and the named
/// ones of invisible or markup characters. A page shows the character, so the text
/// checks read it.
fn reference(s: &str) -> Option<(char, usize)> {
    let end = s.find(';').filter(|&e| e <= 40)?;
    let body = &s[..end];
    let c = if let Some(num) = body.strip_prefix('#') {
        let v = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse::<u32>().ok()?,
        };
        // A reference to no character (a surrogate, beyond U+10FFFF, NUL) reads as
        // the replacement character, as a browser shows it, and is refused as such.
        char::from_u32(v).filter(|&c| c != '\0').unwrap_or('\u{7f}')
    } else {
        match body {
            "lt" | "LT" => '<',
            "gt" | "GT" => '>',
            "amp" | "AMP" => '&',
            "quot" | "QUOT" => '"',
            "apos" => '\'',
            "lbrace" | "lcub" => '{',
            "rbrace" | "rcub" => '}',
            "lsqb" | "lbrack" => '[',
            "rsqb" | "rbrack" => ']',
            "grave" => '`',
            "ast" | "midast" => '*',
            "verbar" | "vert" | "VerticalLine" => '|',
            "bsol" => '\\',
            "lrm" => '\u{200E}',
            "rlm" => '\u{200F}',
            "zwj" => '\u{200D}',
            "zwnj" => '\u{200C}',
            "shy" => '\u{AD}',
            "ZeroWidthSpace"
            | "NegativeThinSpace"
            | "NegativeMediumSpace"
            | "NegativeThickSpace"
            | "NegativeVeryThinSpace" => '\u{200B}',
            "NoBreak" => '\u{2060}',
            "ApplyFunction" | "af" => '\u{2061}',
            "InvisibleTimes" | "it" => '\u{2062}',
            "InvisibleComma" | "ic" => '\u{2063}',
            "NewLine" => '\n',
            "Tab" => '\t',
            _ => return None,
        }
    };
    Some((c, end + 1))
}

/// `s` with its HTML character references replaced by the characters they stand for
/// ([`reference`]), as a page would show it.
pub fn decode_references(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('&') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match reference(after) {
            Some((c, len)) => {
                out.push(c);
                rest = &after[len..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// A text of at most `max` characters with no control character, no format
/// character and no `{{`.
pub fn check_text(what: &str, s: &str, max: usize) -> Result<(), String> {
    let n = s.chars().count();
    if n > max {
        return Err(format!("{what} is {n} characters long (at most {max})"));
    }
    let decoded = decode_references(s);
    let s: &str = &decoded;
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{what} holds the control character U+{:04X}",
            c as u32
        ));
    }
    if let Some(c) = s.chars().find(|&c| crate::safe::is_format(c)) {
        return Err(format!(
            "{what} holds the invisible format character U+{:04X}, which no measurement writes",
            c as u32
        ));
    }
    if s.contains("{{") {
        return Err(format!(
            "{what} holds two `{{` in a row, the opening of an mdbook directive, which no measurement writes"
        ));
    }
    Ok(())
}

fn check_data_text(what: &str, s: &str) -> Result<(), String> {
    check_text(what, s, MAX_DATA_TEXT)?;
    if let Some(c) = s.chars().find(|c| NOT_IN_DATA.contains(c)) {
        return Err(format!("{what} holds `{c}`, which no measurement writes"));
    }
    Ok(())
}

fn check_name(what: &str, s: &str) -> Result<(), String> {
    if is_name(s) {
        Ok(())
    } else {
        Err(format!(
            "{what} `{}` is not a name (lower-case letters, digits and `-`, at most 64)",
            crate::safe::terminal(&s.chars().take(80).collect::<String>())
        ))
    }
}

fn check_param_name(what: &str, s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} `{}` is not a parameter name (lower-case letters, digits and `_`)",
            crate::safe::terminal(&s.chars().take(80).collect::<String>())
        ))
    }
}

fn check_date(what: &str, s: &str) -> Result<(), String> {
    let ok = s.len() <= 40
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | ':' | '.' | '+' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} `{}` is not a date",
            crate::safe::terminal(&s.chars().take(80).collect::<String>())
        ))
    }
}

/// A number that a measurement could have written.
pub fn check_number(what: &str, v: f64) -> Result<(), String> {
    if !v.is_finite() {
        return Err(format!("{what} is not a finite number ({v})"));
    }
    if v.abs() > MAX_VALUE {
        return Err(format!(
            "{what} is {v:e}, beyond any measured value (at most 1e18)"
        ));
    }
    Ok(())
}

/// An interval: three numbers with lo ≤ median ≤ hi.
pub fn check_interval(what: &str, lo: f64, median: f64, hi: f64) -> Result<(), String> {
    check_number(&format!("{what}: the median"), median)?;
    check_number(&format!("{what}: the interval's low end"), lo)?;
    check_number(&format!("{what}: the interval's high end"), hi)?;
    if !(lo <= median && median <= hi) {
        return Err(format!(
            "{what}: the interval {lo}–{hi} does not hold its median {median} (lo ≤ median ≤ hi)"
        ));
    }
    Ok(())
}

/// Every string of a JSON value (object keys too) and every number, for a round's data.
fn check_json(what: &str, v: &serde_json::Value, depth: usize) -> Result<(), String> {
    if depth > 32 {
        return Err(format!("{what} is nested more than 32 levels deep"));
    }
    match v {
        serde_json::Value::String(s) => check_data_text(what, s),
        // JSON has no NaN or infinity; a round's own numbers (counts, sizes, raw
        // samples, which may be below zero) are bounded in size like every other
        // number (issue 35, item 3: a count of u64::MAX overflowed a view's sum).
        serde_json::Value::Number(x) => match x.as_f64() {
            Some(v) => check_number(what, v),
            None => Err(format!("{what} holds a number that is not a number")),
        },
        serde_json::Value::Array(items) => items
            .iter()
            .try_for_each(|x| check_json(what, x, depth + 1)),
        serde_json::Value::Object(map) => map.iter().try_for_each(|(k, x)| {
            check_data_text(what, k)?;
            check_json(what, x, depth + 1)
        }),
        serde_json::Value::Bool(_) | serde_json::Value::Null => Ok(()),
    }
}

/// The first reason `r` breaks the schema, if it does.
pub fn record(r: &Record) -> Result<(), String> {
    if r.format != FORMAT {
        return Err(format!(
            "it has results format {} (this build reads {FORMAT})",
            r.format
        ));
    }
    check_name("the chapter", &r.chapter)?;
    check_name("the experiment", &r.experiment)?;
    check_name("the code key", &r.key)?;
    if r.build != "release" && r.build != "debug" {
        return Err(format!(
            "the build `{}` is neither release nor debug",
            crate::safe::terminal(&r.build.chars().take(80).collect::<String>())
        ));
    }
    let p = &r.provenance;
    check_date("the measuring date", &p.measured_at)?;
    let m = &p.machine;
    for (what, s) in [
        ("the machine's CPU", &m.cpu),
        ("the machine's OS", &m.os),
        ("the machine's kernel", &m.kernel),
        ("the machine's architecture", &m.arch),
        ("the machine's compiler", &m.rustc),
        ("the machine's build", &m.build),
    ] {
        check_text(what, s, 512)?;
    }
    if let Some(u) = &m.underneath {
        if u.idle.states.len() > 32 || u.idle.guest_halt_poll.len() > 32 {
            return Err(
                "the machine lists more than 32 idle states or halt-poll parameters".into(),
            );
        }
        for (what, s) in u.texts() {
            check_text(what, s, 512)?;
        }
        for (what, v) in u.numbers() {
            check_number(what, v)?;
        }
    }
    for pv in &r.params {
        check_param_name("a parameter", &pv.name)?;
        check_number(&format!("the parameter {}", pv.name), pv.value)?;
        check_text(&format!("the parameter {}'s unit", pv.name), &pv.unit, 64)?;
    }
    if r.details.len() > MAX_DETAILS {
        return Err(format!(
            "it carries {} details (at most {MAX_DETAILS})",
            r.details.len()
        ));
    }
    for (k, v) in &r.details {
        check_text("a detail's name", k, 64)?;
        check_text("a detail", v, 256)?;
    }
    check_text("the isolation", &r.isolation, 512)?;
    match &r.status {
        // A good result has rounds: one with none would replace a good result with
        // "no result" and be called up to date (issue 35, item 5).
        Status::Ok if r.rounds.is_empty() => {
            return Err("it says it ended well but holds no round".into());
        }
        Status::Ok => {}
        Status::TimedOut { after_s } => check_number("the time-out", *after_s)?,
        Status::Failed { error } => check_text("the error", error, MAX_TEXT)?,
        Status::Crashed { what } => check_text("the crash", what, MAX_TEXT)?,
    }
    if r.notes.len() > MAX_NOTES {
        return Err(format!(
            "it carries {} notes (at most {MAX_NOTES})",
            r.notes.len()
        ));
    }
    for n in &r.notes {
        check_text("a note", &n.text, MAX_NOTE)?;
    }
    check_number("the time taken", r.wall_s)?;
    if r.rounds.len() > MAX_ROUNDS {
        return Err(format!(
            "it holds {} rounds; no profile runs more than 40 (at most {MAX_ROUNDS})",
            r.rounds.len()
        ));
    }
    let mut indices: Vec<u32> = r.rounds.iter().map(|x| x.index).collect();
    indices.sort_unstable();
    if let Some(w) = indices.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "it holds round {} twice, which a measurement never writes",
            w[0]
        ));
    }
    // A reading keeps the unit the experiment gives it in every round: a size in one
    // round and a time in the next would be compared as one figure (issue 35, item 15).
    let mut units: std::collections::HashMap<&str, crate::Unit> = std::collections::HashMap::new();
    for round in &r.rounds {
        for x in &round.readings {
            let unit = *units.entry(x.key.as_str()).or_insert(x.unit);
            if unit != x.unit {
                return Err(format!(
                    "round {}: the reading {} is in {}, in {} in an earlier round",
                    round.index,
                    crate::safe::terminal(&x.key.chars().take(80).collect::<String>()),
                    x.unit.name(),
                    unit.name()
                ));
            }
        }
    }
    for round in &r.rounds {
        let what = format!("round {}", round.index);
        if round.readings.len() > MAX_READINGS {
            return Err(format!(
                "{what} gives {} readings (at most {MAX_READINGS})",
                round.readings.len()
            ));
        }
        // The round loop moves a round's notes and details up to the run before it
        // stores it, so a stored round carries none.
        if !round.notes.is_empty() || !round.details.is_empty() {
            return Err(format!(
                "{what} carries notes or details of its own, which a stored round never does"
            ));
        }
        for x in &round.readings {
            check_data_text(&format!("{what}: a reading's name"), &x.key)?;
            check_number(&format!("{what}: the reading {}", x.key), x.value)?;
            // Every reading is a time, a size, a rate or a count (issue 35, item 9).
            if x.value < 0.0 {
                return Err(format!(
                    "{what}: the reading {} is below zero ({}), which no reading can be",
                    crate::safe::terminal(&x.key.chars().take(80).collect::<String>()),
                    x.value
                ));
            }
        }
        let n = &round.noise;
        for v in [
            n.steal,
            n.others_busy,
            n.others_runnable,
            n.cpu_s,
            n.syscall_ns,
            Some(n.wall_s),
        ]
        .into_iter()
        .flatten()
        {
            check_number(&format!("{what}: a noise reading"), v)?;
        }
        check_json(&format!("{what}: its data"), &round.data, 0)?;
    }
    Ok(())
}

/// The first reason a headline figure breaks the schema, if it does.
pub fn figure(f: &Figure) -> Result<(), String> {
    check_name("a figure's name", &f.name)?;
    let what = format!("the figure `{}`", f.name);
    check_name(&format!("{what}: its chapter"), &f.chapter)?;
    check_interval(&what, f.lo, f.median, f.hi)?;
    // Every headline is a time, a rate, a count or a size: none is below zero, and a
    // negative one would turn a comparison's ratio negative.
    if f.lo < 0.0 {
        return Err(format!(
            "{what}: its interval starts below zero ({}), which no headline figure can",
            f.lo
        ));
    }
    if !(0.0..=1.0).contains(&f.confidence) {
        return Err(format!(
            "{what}: its confidence {} is not between 0 and 1",
            f.confidence
        ));
    }
    // A drift correlation above zero and below one (`stats::drift` caps it at 0.99).
    if let Some(rho) = f.drift
        && !(rho > 0.0 && rho < 1.0)
    {
        return Err(format!("{what}: its drift {rho} is not between 0 and 1"));
    }
    for (k, v) in &f.params {
        check_param_name(&format!("{what}: a parameter"), k)?;
        match v.as_f64() {
            Some(x) => check_number(&format!("{what}: the parameter {k}"), x)?,
            None => return Err(format!("{what}: the parameter {k} is not a number")),
        }
    }
    check_date(&format!("{what}: its date"), &f.measured_at)?;
    check_text(&format!("{what}: its machine"), &f.machine, 2048)?;
    check_text(&format!("{what}: its shown text"), &f.shown, 256)?;
    Ok(())
}

/// What the book's own measurement stores passes [`record`]: control characters in
/// texts become spaces, over-long texts are cut, and the characters a round's data may
/// not hold become look-alikes. Names and numbers are the code's own.
pub fn sanitize(r: &mut Record) {
    fn text(s: &mut String, max: usize) {
        let unprintable = |c: char| c.is_control() || crate::safe::is_format(c);
        if s.chars().any(unprintable) || s.chars().count() > max {
            *s = s
                .chars()
                .map(|c| if unprintable(c) { ' ' } else { c })
                .take(max)
                .collect();
        }
        // `{{` opens an mdbook directive: `{ {` says the same to a reader.
        while s.contains("{{") {
            *s = s.replace("{{", "{ {");
        }
        // A character reference that stands for one of those reads as its text.
        let decoded = decode_references(s);
        if decoded.chars().any(unprintable) || decoded.contains("{{") {
            *s = s.replace('&', "＆");
        }
    }
    fn data_text(s: &mut String) {
        text(s, MAX_DATA_TEXT);
        if s.contains(NOT_IN_DATA) {
            *s = s
                .chars()
                .map(|c| match c {
                    '<' => '‹',
                    '>' => '›',
                    '[' | '{' => '(',
                    ']' | '}' => ')',
                    '`' => '\'',
                    '&' => '＆',
                    '*' => '∗',
                    '|' => '│',
                    '\\' => '∖',
                    c => c,
                })
                .collect();
        }
    }
    fn json(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => data_text(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(json),
            serde_json::Value::Object(map) => {
                let bad: Vec<String> = map
                    .keys()
                    .filter(|k| {
                        k.contains(NOT_IN_DATA)
                            || k.chars()
                                .any(|c| c.is_control() || crate::safe::is_format(c))
                    })
                    .cloned()
                    .collect();
                for k in bad {
                    if let Some(x) = map.remove(&k) {
                        let mut k2 = k;
                        data_text(&mut k2);
                        map.insert(k2, x);
                    }
                }
                map.values_mut().for_each(json);
            }
            _ => {}
        }
    }
    let m = &mut r.provenance.machine;
    for s in [
        &mut m.cpu,
        &mut m.os,
        &mut m.kernel,
        &mut m.arch,
        &mut m.rustc,
        &mut m.build,
    ] {
        text(s, 512);
    }
    if let Some(u) = &mut m.underneath {
        u.texts_mut().into_iter().for_each(|s| text(s, 512));
    }
    for pv in &mut r.params {
        text(&mut pv.unit, 64);
    }
    r.details.truncate(MAX_DETAILS);
    for (k, v) in &mut r.details {
        text(k, 64);
        text(v, 256);
    }
    text(&mut r.isolation, 512);
    match &mut r.status {
        Status::Failed { error: s } | Status::Crashed { what: s } => text(s, MAX_TEXT),
        Status::Ok | Status::TimedOut { .. } => {}
    }
    r.notes.truncate(MAX_NOTES);
    for n in &mut r.notes {
        text(&mut n.text, MAX_NOTE);
    }
    for round in &mut r.rounds {
        for x in &mut round.readings {
            data_text(&mut x.key);
        }
        json(&mut round.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Note, NoteKind, Reading, RoundRecord, Unit};

    #[test]
    fn a_negative_headline_figure_is_refused() {
        let mut f = Figure {
            chapter: "ch".into(),
            name: "fig".into(),
            unit: Unit::Nanos,
            median: 5.0,
            lo: 4.0,
            hi: 6.0,
            confidence: 0.95,
            rounds: 6,
            drift: None,
            params: serde_json::Map::new(),
            profile: crate::Profile::Quick,
            measured_at: "2026-11-27 14:00:00 UTC".into(),
            machine: "a machine".into(),
            shown: String::new(),
        };
        assert_eq!(figure(&f), Ok(()));
        (f.lo, f.median, f.hi) = (-5.4e13, -5.4e13, -5.4e13);
        let e = figure(&f).unwrap_err();
        assert!(e.contains("below zero"), "{e}");
        (f.lo, f.median, f.hi) = (4.0, 5.0, 6.0);
        f.drift = Some(1.5);
        let e = figure(&f).unwrap_err();
        assert!(e.contains("drift 1.5 is not between 0 and 1"), "{e}");
    }

    /// Issue 35, items 5 and 9: a good record with no round, or with a reading below
    /// zero, is refused at the door (it used to import, replace the good result and
    /// show "−54,000 s").
    #[test]
    fn a_good_record_without_rounds_or_with_a_negative_reading_is_refused() {
        use crate::record::{Reading, Unit};
        let good = crate::fixture::record_of_readings(
            "ch",
            "exp",
            vec![vec![Reading::of(&crate::fixture::Steady, Unit::Nanos, 5.0)]; 3],
        );
        assert_eq!(record(&good), Ok(()));
        let mut empty = good.clone();
        empty.rounds.clear();
        assert!(record(&empty).unwrap_err().contains("no round"));
        let mut negative = good.clone();
        negative.rounds[1].readings[0].value = -5.4e13;
        let e = record(&negative).unwrap_err();
        assert!(e.contains("below zero"), "{e}");
    }

    /// Issue 28: `{{#include /proc/self/environ}}` in a machine text reached the
    /// Compare page's data, where mdbook expanded it; U+202E reversed a line.
    #[test]
    fn directives_and_format_characters_are_refused_in_every_text() {
        let good = crate::fixture::record_of_readings(
            "ch",
            "exp",
            vec![vec![Reading::new("x", Unit::Nanos, 1.0)]],
        );
        assert_eq!(record(&good), Ok(()));
        type Plant = fn(&mut Record, &str);
        let plants: &[(&str, Plant)] = &[
            ("cpu", |r, s| r.provenance.machine.cpu = s.into()),
            ("os", |r, s| r.provenance.machine.os = s.into()),
            ("kernel", |r, s| r.provenance.machine.kernel = s.into()),
            ("arch", |r, s| r.provenance.machine.arch = s.into()),
            ("rustc", |r, s| r.provenance.machine.rustc = s.into()),
            ("machine build", |r, s| {
                r.provenance.machine.build = s.into()
            }),
            ("isolation", |r, s| r.isolation = s.into()),
            ("note", |r, s| {
                r.notes.push(Note {
                    kind: NoteKind::Info,
                    text: s.into(),
                })
            }),
            ("detail name", |r, s| r.details.push((s.into(), "v".into()))),
            ("detail", |r, s| r.details.push(("k".into(), s.into()))),
            ("error", |r, s| {
                r.status = Status::Failed { error: s.into() }
            }),
            ("crash", |r, s| {
                r.status = Status::Crashed { what: s.into() }
            }),
        ];
        for hostile in [
            "x {{#include /proc/self/environ}}",
            "{{ #include ../book.toml }}",
            "abc\u{202E}fed",
            "line\u{2028}break",
            "para\u{2029}break",
            "zero\u{200B}width",
            "bom\u{FEFF}",
        ] {
            for (field, plant) in plants {
                let mut r = good.clone();
                plant(&mut r, hostile);
                let e = record(&r).expect_err(&format!("{field}: {hostile:?} passed"));
                assert!(
                    e.contains("mdbook directive") || e.contains("format character"),
                    "{field}: {e}"
                );
                // The book's own records are made to pass: sanitize clears them.
                let mut own = r.clone();
                sanitize(&mut own);
                assert_eq!(record(&own), Ok(()), "{field}: {hostile:?}");
            }
        }
        // A single brace is text (a parameter set written `{a, b}`).
        let mut braces = good.clone();
        braces.isolation = "{a, b} } {".into();
        assert_eq!(record(&braces), Ok(()));
    }

    #[test]
    fn a_stored_round_with_notes_or_details_of_its_own_is_refused() {
        let good = crate::fixture::record_of_readings(
            "ch",
            "exp",
            vec![vec![Reading::new("x", Unit::Nanos, 1.0)]],
        );
        assert_eq!(record(&good), Ok(()));
        let mut noted = good.clone();
        noted.rounds[0].notes.push(Note {
            kind: NoteKind::Info,
            text: "hello".into(),
        });
        assert!(
            record(&noted)
                .unwrap_err()
                .contains("round 0 carries notes")
        );
        let mut detailed = good.clone();
        detailed.rounds[0].details.push(("a".into(), "b".into()));
        assert!(record(&detailed).is_err());
    }

    #[test]
    fn the_machine_underneath_is_optional_and_checked_like_other_machine_texts() {
        let good = crate::fixture::record_of_readings(
            "ch",
            "exp",
            vec![vec![Reading::new("x", Unit::Nanos, 1.0)]],
        );
        // A record written before the machine's underneath was read still reads.
        let mut json = serde_json::to_value(&good).unwrap();
        json["provenance"]["machine"]
            .as_object_mut()
            .unwrap()
            .remove("underneath");
        let old: Record = serde_json::from_value(json).unwrap();
        assert_eq!(old.provenance.machine.underneath, None);
        assert_eq!(record(&old), Ok(()));
        // Its texts are checked, and made safe before storing.
        let mut bad = good.clone();
        let u = bad.provenance.machine.underneath.get_or_insert_default();
        u.idle.driver = Some("halt\u{7}poll".into());
        assert!(record(&bad).unwrap_err().contains("cpuidle driver"));
        sanitize(&mut bad);
        assert_eq!(record(&bad), Ok(()));
        let mut nan = good;
        nan.provenance
            .machine
            .underneath
            .get_or_insert_default()
            .clock
            .step_ns = Some(f64::NAN);
        assert!(record(&nan).unwrap_err().contains("smallest step"));
    }

    /// Issue 37: the OS a record's build was made for is a typed field; a record
    /// written before it reads as before (its OS from the machine's description), and
    /// a name the harness does not know is refused.
    #[test]
    fn the_typed_os_is_optional_and_only_a_known_name() {
        use crate::machine::TargetOs;
        let mut typed = good();
        typed.provenance.machine.target_os = Some(TargetOs::Windows);
        let json = serde_json::to_value(&typed).unwrap();
        assert_eq!(json["provenance"]["machine"]["target_os"], "windows");
        let back: Record = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.provenance.machine.target_os(), TargetOs::Windows);
        assert_eq!(record(&back), Ok(()));
        let mut old = json.clone();
        old["provenance"]["machine"]
            .as_object_mut()
            .unwrap()
            .remove("target_os");
        old["provenance"]["machine"]["os"] = "Microsoft Windows Server 2022".into();
        let old: Record = serde_json::from_value(old).unwrap();
        assert_eq!(old.provenance.machine.target_os, None);
        assert_eq!(old.provenance.machine.target_os(), TargetOs::Windows);
        assert_eq!(record(&old), Ok(()));
        let mut odd = json;
        odd["provenance"]["machine"]["target_os"] = "plan9".into();
        let why = serde_json::from_value::<Record>(odd)
            .unwrap_err()
            .to_string();
        assert!(why.contains("plan9"), "{why}");
    }

    fn good() -> Record {
        crate::fixture::record_of_readings(
            "ch",
            "exp",
            vec![vec![Reading::new("x", Unit::Nanos, 1.0)]; 3],
        )
    }

    /// Issue 35, items 3 and 10: a record of 23,000 rounds (quadratic intervals, a 6 s
    /// table), 1,900 notes of 4 KB (a 319 MB site) or a count of u64::MAX in a
    /// round's data (a panic) is refused at the door; a count of 2³²−1 is a number
    /// like any other.
    #[test]
    fn a_record_beyond_the_size_caps_is_refused() {
        let g = good();
        assert_eq!(record(&g), Ok(()));
        type Grow = fn(&mut Record);
        let cases: &[(&str, Grow, &str)] = &[
            (
                "23,000 rounds",
                |r| {
                    r.rounds = (0..23_000)
                        .map(|i| RoundRecord {
                            index: i,
                            ..r.rounds[0].clone()
                        })
                        .collect()
                },
                "23000 rounds",
            ),
            (
                "a round twice",
                |r| r.rounds[1].index = r.rounds[0].index,
                "twice",
            ),
            (
                "257 readings",
                |r| {
                    r.rounds[0].readings = (0..257)
                        .map(|i| Reading::new(format!("x{i}"), Unit::Nanos, 1.0))
                        .collect()
                },
                "257 readings",
            ),
            (
                "1,900 notes",
                |r| {
                    r.notes = vec![
                        Note {
                            kind: NoteKind::Info,
                            text: "a".repeat(400),
                        };
                        1_900
                    ]
                },
                "1900 notes",
            ),
            (
                "a 4 KB note",
                |r| {
                    r.notes.push(Note {
                        kind: NoteKind::Info,
                        text: "a".repeat(4_000),
                    })
                },
                "4000 characters",
            ),
            (
                "17 details",
                |r| r.details = vec![("k".into(), "v".into()); 17],
                "17 details",
            ),
            (
                "a count of u64::MAX",
                |r| {
                    r.rounds[0].data = serde_json::json!({"buckets": [[1000, u64::MAX]]});
                },
                "beyond any measured value",
            ),
        ];
        for (case, grow, why) in cases {
            let mut r = g.clone();
            grow(&mut r);
            let e = record(&r).expect_err(case);
            assert!(e.contains(why), "{case}: {e}");
        }
        // A reading whose unit changes from one round to the next (item 15).
        let mut units = g.clone();
        units.rounds[1].readings[0].unit = Unit::Bytes;
        let e = record(&units).unwrap_err();
        assert!(e.contains("in bytes, in ns in an earlier round"), "{e}");
        let mut big = g.clone();
        big.rounds[0].data = serde_json::json!({"buckets": [[1000, 4_294_967_295u64]]});
        assert_eq!(record(&big), Ok(()));
        // The book's own records are cut to the caps before they are stored.
        let mut own = g.clone();
        own.notes = vec![
            Note {
                kind: NoteKind::Info,
                text: "a".repeat(4_000),
            };
            40
        ];
        own.details = vec![("k".repeat(100), "v".repeat(1_000)); 40];
        own.isolation = "i".repeat(2_000);
        sanitize(&mut own);
        assert_eq!(record(&own), Ok(()));
    }

    /// Issue 35, item 10: 64 MiB of zeros inside the size cap made a tree of gigabytes;
    /// the values are counted before anything is parsed.
    #[test]
    fn a_file_of_too_many_values_is_refused_before_it_is_parsed() {
        let zeros = format!("[{}0]", "0,".repeat(MAX_RECORD_VALUES));
        let e = check_values(zeros.as_bytes(), MAX_RECORD_VALUES).unwrap_err();
        assert!(e.contains("JSON values"), "{e}");
        // Commas, brackets and braces inside strings are text, not values.
        assert_eq!(json_values(br#"{"a,[{": "x\",{", "b": [1, 2]}"#), 5);
        let one = serde_json::to_vec(&good()).unwrap();
        assert_eq!(check_values(&one, MAX_RECORD_VALUES), Ok(()));
    }

    /// Issue 35, item 12: a key given twice inside a round's data was read as its
    /// last; an escaped spelling of a key is the same key.
    #[test]
    fn a_key_given_twice_anywhere_is_refused() {
        for (json, key) in [
            (r#"{"rounds": [{"data": {"n": 1, "n": 2}}]}"#, "n"),
            (r#"{"median": 1, "m\u0065dian": 2}"#, "median"),
            (r#"[{"a": {"b": [1, {"c": 1, "c": 1}]}}]"#, "c"),
        ] {
            let e = check_values(json.as_bytes(), MAX_RECORD_VALUES).unwrap_err();
            assert!(
                e.contains(&format!("gives a key twice (duplicate field `{key}`)")),
                "{json}: {e}"
            );
        }
        // Nesting beyond what a results file holds (the page's limit too).
        let deep = format!("{}1{}", "[".repeat(65), "]".repeat(65));
        let e = check_values(deep.as_bytes(), MAX_RECORD_VALUES).unwrap_err();
        assert!(e.contains("nests deeper than 64 levels"), "{e}");
        let fine = format!("{}1{}", "[".repeat(64), "]".repeat(64));
        assert_eq!(check_values(fine.as_bytes(), MAX_RECORD_VALUES), Ok(()));
        // The same key in two objects is no repeat; what is not JSON is the parser's.
        for json in [r#"[{"n": 1}, {"n": 2}]"#, "{\"a\": ", "\u{feff}{}"] {
            assert_eq!(check_values(json.as_bytes(), 10), Ok(()), "{json}");
        }
    }

    /// Issue 35, item 13: `&#x202E;gnp.exe&#x202C; **bold**` in a round's text put a
    /// raw U+202E and `<strong>` into a page. References are read as what they stand
    /// for; a round's text holds no `&`, `*`, `|` or `\`.
    #[test]
    fn character_references_and_markdown_are_refused_where_they_would_act() {
        let g = good();
        let hostile = "&#x202E;gnp.exe&#x202C; **bold**";
        let mut data = g.clone();
        data.rounds[0].data = serde_json::json!({"label": hostile});
        let e = record(&data).unwrap_err();
        assert!(e.contains("U+202E"), "{e}");
        data.rounds[0].data = serde_json::json!({"label": "gnp.exe **bold**"});
        let e = record(&data).unwrap_err();
        assert!(e.contains("`*`"), "{e}");
        for (text, why) in [
            ("&#x202E;gnp.exe", "U+202E"),
            ("&#8238;gnp.exe", "U+202E"),
            ("a&lrm;b", "U+200E"),
            ("&#123;&#123;#include /etc/passwd}}", "mdbook directive"),
            ("&lbrace;&lbrace;#include x}}", "mdbook directive"),
            ("&#xD800;", "control character"),
            ("&#27;[2J", "control character"),
        ] {
            let mut r = g.clone();
            r.notes.push(Note {
                kind: NoteKind::Info,
                text: text.into(),
            });
            let e = record(&r).expect_err(text);
            assert!(e.contains(why), "{text}: {e}");
            sanitize(&mut r);
            assert_eq!(record(&r), Ok(()), "{text}");
        }
        for text in ["a & b", "x &amp; y", "&lt;none&gt;", "&unknown;", "&#x41;"] {
            let mut r = g.clone();
            r.notes.push(Note {
                kind: NoteKind::Info,
                text: text.into(),
            });
            assert_eq!(record(&r), Ok(()), "{text}");
        }
        for mark in ["**bold**", "a | b", "a \\| b", "x & y"] {
            let mut r = g.clone();
            r.rounds[0].readings[0].key = mark.into();
            assert!(record(&r).is_err(), "{mark}");
            sanitize(&mut r);
            assert_eq!(record(&r), Ok(()), "{mark}");
        }
    }
}
