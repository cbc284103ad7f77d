//! The write-ups' published numbers, kept as TOML in `assets/reference/`, and the
//! "theirs vs yours" tables that put them beside the reader's.

use crate::render::{Table, fmt_ratio};
use serde::{Deserialize, de::DeserializeOwned};

/// Where reference numbers come from.
#[derive(Debug, Clone, Deserialize)]
pub struct Source {
    pub title: String,
    pub author: String,
    pub url: String,
    pub license: String,
}

/// A machine the write-up measured on.
#[derive(Debug, Clone, Deserialize)]
pub struct RefMachine {
    pub id: String,
    pub name: String,
}

/// Parses a reference file; the chapter defines its shape.
pub fn parse<T: DeserializeOwned>(toml_text: &str) -> anyhow::Result<T> {
    toml::from_str(toml_text).map_err(|e| anyhow::anyhow!("bad reference data: {e}"))
}

/// A write-up's published numbers as every chapter keeps them: where they come from
/// (`[source]`), the machines they were measured on (`[[machines]]`), and the chapter's
/// own figures (`T`, the rest of the same TOML file). It reads as `T` (`Deref`), so a
/// chapter writes `refs.designs`, and gives the one attribution line every reference
/// table ends with.
#[derive(Debug, Clone, Deserialize)]
pub struct Published<T> {
    pub source: Source,
    pub machines: Vec<RefMachine>,
    #[serde(flatten)]
    pub numbers: T,
}

impl<T: DeserializeOwned> Published<T> {
    /// The reference file's text (a chapter's `include_str!` of
    /// `assets/reference/<chapter>.toml`), parsed.
    pub fn load(toml_text: &str) -> anyhow::Result<Published<T>> {
        parse(toml_text)
    }
}

impl<T> Published<T> {
    /// The sentence naming the write-up, its licence and every machine it measured on.
    pub fn attribution(&self) -> String {
        let machines: Vec<&RefMachine> = self.machines.iter().collect();
        attribution(&self.source, &machines)
    }
}

impl<T> std::ops::Deref for Published<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.numbers
    }
}

/// One line of a comparison: what, their number, the reader's.
#[derive(Debug, Clone)]
pub struct Compare {
    pub label: String,
    pub theirs: Option<f64>,
    pub yours: Option<f64>,
}

/// A table with columns: label, theirs, yours, yours ÷ theirs.
pub fn compare_table(
    label_header: &str,
    theirs_header: &str,
    rows: &[Compare],
    fmt: fn(f64) -> String,
) -> Table {
    let mut t = Table::new([label_header, theirs_header, "yours", "yours ÷ theirs"]);
    for r in rows {
        let cell = |v: Option<f64>| v.map(fmt).unwrap_or_else(|| "–".into());
        let ratio = match (r.yours, r.theirs) {
            (Some(y), Some(t)) if t > 0.0 => Some(y / t),
            _ => None,
        };
        t.row([
            r.label.clone(),
            cell(r.theirs),
            cell(r.yours),
            fmt_ratio(ratio),
        ]);
    }
    t
}

/// One sentence that names the source and machine of reference numbers.
pub fn attribution(source: &Source, machines: &[&RefMachine]) -> String {
    let names: Vec<&str> = machines.iter().map(|m| m.name.as_str()).collect();
    format!(
        "Reference numbers: “{}” by {} ({}, {}), measured on {}.",
        source.title,
        source.author,
        source.url,
        source.license,
        names.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_compares() {
        #[derive(Deserialize)]
        struct R {
            source: Source,
            machines: Vec<RefMachine>,
        }
        let r: R = parse(
            r#"
            [source]
            title = "T"
            author = "A"
            url = "https://example.org"
            license = "MIT"
            [[machines]]
            id = "m"
            name = "Laptop"
            "#,
        )
        .unwrap();
        assert_eq!(r.machines[0].name, "Laptop");
        let t = compare_table(
            "what",
            "theirs",
            &[Compare {
                label: "x".into(),
                theirs: Some(2.0),
                yours: Some(5.0),
            }],
            |v| format!("{v}"),
        );
        assert!(t.to_markdown().contains("| x | 2 | 5 | 2.50× |"));
        assert!(attribution(&r.source, &[&r.machines[0]]).contains("Laptop"));
        assert!(parse::<R>("nonsense = [").is_err());
    }
}
