//! Markdown tables: a cell keeps its figures' parts ([`Formatted`]), so the table
//! decides from them where a cell may break, and nothing parses the text back.

use crate::fmt::Formatted;

/// A table cell: one figure or text, or several figures in one cell joined by a
/// separator (`74.4 µs (73.4–112) · 100 %`, `1.00 / 1.00`). It keeps each figure's parts,
/// so a page's table decides from them where a cell may break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    parts: Vec<Formatted>,
    separator: &'static str,
}

impl Cell {
    /// Several figures in one cell, `separator` between them (` · `, ` / `); in a page's
    /// number column the cell may break after each separator.
    pub fn join(parts: impl IntoIterator<Item = Formatted>, separator: &'static str) -> Cell {
        Cell {
            parts: parts.into_iter().collect(),
            separator,
        }
    }

    /// The cell for a page: in a number column each interval may go to a second line
    /// under its value and the cell may break after each separator; neither a value nor
    /// an interval ever breaks inside (number cells do not wrap otherwise, see
    /// `assets/css/cow.css`). A cell that starts with words ("no clear difference")
    /// wraps like words. Text and labels are left as they are.
    pub(crate) fn on_page(&self, numbers: bool) -> String {
        let text = self.to_string();
        if !numbers {
            return text;
        }
        if text.starts_with(char::is_alphabetic) {
            return format!("<span class=\"cow-may-wrap\">{text}</span>");
        }
        let formatted = |f: &Formatted| match &f.interval {
            Some(i) => format!(
                "{}<span class=\"cow-may-wrap\"> <span class=\"cow-interval\">({i})</span></span>",
                f.value
            ),
            None => f.value.clone(),
        };
        let separator = format!("<span class=\"cow-may-wrap\">{}</span>", self.separator);
        self.parts
            .iter()
            .map(formatted)
            .collect::<Vec<_>>()
            .join(&separator)
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(self.separator)?;
            }
            write!(f, "{part}")?;
        }
        Ok(())
    }
}

impl From<Formatted> for Cell {
    fn from(f: Formatted) -> Cell {
        Cell::join([f], "")
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Formatted::plain(s).into()
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Formatted::plain(s).into()
    }
}

/// A table row from cells of different kinds (text, [`Formatted`]s, [`Cell`]s):
/// `t.row(cells![name, fmt_estimate(&e, Unit::Nanos), ratio_cell(&c)])`.
#[macro_export]
macro_rules! cells {
    ($($cell:expr),* $(,)?) => {
        [$($crate::table::Cell::from($cell)),*]
    };
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
    rows: Vec<Vec<Cell>>,
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

    pub fn row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) -> &mut Table {
        let mut cells: Vec<Cell> = cells.into_iter().map(Into::into).collect();
        cells.resize(self.headers.len(), Cell::from(""));
        self.rows.push(cells);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table for a page: a number cell's interval may wrap under its value.
    pub fn to_markdown(&self) -> String {
        self.markdown(true)
    }

    /// The table for a terminal or a file read outside the book: Markdown only.
    pub fn to_plain_markdown(&self) -> String {
        self.markdown(false)
    }

    fn markdown(&self, page: bool) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(self.headers.iter().map(|h| esc(h)).collect());
        let seps: Vec<String> = self
            .align
            .iter()
            .map(|a| match a {
                Align::Left => ":---".to_string(),
                Align::Right => "---:".to_string(),
            })
            .collect();
        out.push_str(&line(seps));
        for r in &self.rows {
            let cells = r
                .iter()
                .zip(&self.align)
                .map(|(c, a)| esc(&c.on_page(page && *a == Align::Right)))
                .collect();
            out.push_str(&line(cells));
        }
        out
    }
}
