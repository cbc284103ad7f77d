//! Markdown output: number formatting, tables, notes and the provenance line.

use crate::record::{Note, Record};

/// Formats nanoseconds with three significant digits and a unit a reader expects:
/// `412 ns`, `12.3 µs`, `45.1 ms`, `1.23 s`.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "–".into();
    }
    let (value, unit) = match ns.abs() {
        x if x < 1e3 => (ns, "ns"),
        x if x < 1e6 => (ns / 1e3, "µs"),
        x if x < 1e9 => (ns / 1e6, "ms"),
        _ => (ns / 1e9, "s"),
    };
    format!("{} {unit}", sig3(value))
}

/// A number with three significant digits (no exponent, no trailing noise).
pub fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = x.abs().log10().floor() as i32;
    let decimals = (2 - digits).clamp(0, 6) as usize;
    format!("{x:.decimals$}")
}

/// A ratio such as a speedup: `48.3×`.
pub fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        Some(r) if r.is_finite() => format!("{}×", sig3(r)),
        _ => "–".into(),
    }
}

/// An integer with thin thousands separators: `1,000,000`.
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in binary units: `9.50 KiB`.
pub fn fmt_bytes(b: f64) -> String {
    let (v, u) = match b.abs() {
        x if x < 1024.0 => (b, "B"),
        x if x < 1024.0 * 1024.0 => (b / 1024.0, "KiB"),
        x if x < 1024.0 * 1024.0 * 1024.0 => (b / 1024.0 / 1024.0, "MiB"),
        _ => (b / 1024.0 / 1024.0 / 1024.0, "GiB"),
    };
    format!("{} {u}", sig3(v))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A GitHub-flavoured Markdown table.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// The first column is left-aligned (labels), the others right-aligned (numbers).
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        let align = (0..headers.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Table {
            headers,
            align,
            rows: Vec::new(),
        }
    }

    pub fn align(mut self, column: usize, align: Align) -> Table {
        self.align[column] = align;
        self
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Table {
        let mut cells: Vec<String> = cells.into_iter().map(Into::into).collect();
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let mut out = String::new();
        let line = |cells: &[String]| {
            let inner: Vec<String> = cells.iter().map(|c| esc(c)).collect();
            format!("| {} |\n", inner.join(" | "))
        };
        out.push_str(&line(&self.headers));
        let seps: Vec<String> = self
            .align
            .iter()
            .map(|a| match a {
                Align::Left => ":---".to_string(),
                Align::Right => "---:".to_string(),
            })
            .collect();
        out.push_str(&format!("| {} |\n", seps.join(" | ")));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// The standard latency columns of the book.
pub const LATENCY_HEADERS: [&str; 6] = ["n", "min", "p50", "mean", "p99", "max"];

/// Latency cells for a summary: n, min, p50, mean, p99 (and p99.9 when asked), max.
pub fn latency_cells(s: &crate::stats::Summary, with_p999: bool) -> Vec<String> {
    let mut cells = vec![
        fmt_count(s.n),
        fmt_ns(s.min),
        fmt_ns(s.p50),
        fmt_ns(s.mean),
        fmt_ns(s.p99),
    ];
    if with_p999 {
        cells.push(s.p999.map(fmt_ns).unwrap_or_else(|| "–".into()));
    }
    cells.push(fmt_ns(s.max));
    cells
}

/// Headers matching [`latency_cells`].
pub fn latency_headers(with_p999: bool) -> Vec<&'static str> {
    let mut h = vec!["n", "min", "p50", "mean", "p99"];
    if with_p999 {
        h.push("p99.9");
    }
    h.push("max");
    h
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Notes as Markdown blockquotes, one per note.
pub fn notes(notes: &[Note]) -> String {
    notes
        .iter()
        .map(|n| format!("> **{}:** {}\n", n.kind.label(), n.text.replace('\n', " ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The one line under every live table and plot that says where its numbers come from.
pub fn provenance_line(r: &Record) -> String {
    let m = &r.provenance.machine;
    let params = if r.params.is_empty() {
        String::new()
    } else {
        let p: Vec<String> = r.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        format!(" ({})", p.join(", "))
    };
    let text = format!(
        "Measured on {} · {} · {} · {} build · profile {}{} · {} · took {}",
        m.cpu_line(),
        m.os_line(),
        m.rustc,
        m.build,
        r.profile.name(),
        params,
        r.provenance.measured_at,
        fmt_ns(r.wall_s * 1e9),
    );
    format!("<p class=\"cow-provenance\">{}</p>\n", escape_html(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(fmt_ns(412.0), "412 ns");
        assert_eq!(fmt_ns(1.5), "1.50 ns");
        assert_eq!(fmt_ns(12_345.0), "12.3 µs");
        assert_eq!(fmt_ns(81_087.0), "81.1 µs");
        assert_eq!(fmt_ns(45_100_000.0), "45.1 ms");
        assert_eq!(fmt_ns(1_234_000_000.0), "1.23 s");
        assert_eq!(fmt_ns(f64::NAN), "–");
    }

    #[test]
    fn counts_bytes_and_ratios() {
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1000), "1,000");
        assert_eq!(fmt_count(1_000_000), "1,000,000");
        assert_eq!(fmt_bytes(9728.0), "9.50 KiB");
        assert_eq!(fmt_ratio(Some(48.27)), "48.3×");
        assert_eq!(fmt_ratio(None), "–");
    }

    #[test]
    fn markdown_table_shape() {
        let mut t = Table::new(["what", "value"]);
        t.row(["a|b", "1"]);
        t.row(["short"]);
        let md = t.to_markdown();
        assert_eq!(
            md,
            "| what | value |\n| :--- | ---: |\n| a\\|b | 1 |\n| short |  |\n"
        );
    }
}
