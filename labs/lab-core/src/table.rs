//! A plain-text table with aligned columns: the body of most transcripts.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Align {
    Left,
    Right,
}

/// Rows of already-formatted cells. Formatting numbers is the lab's job, so the bytes a
/// transcript contains are decided in one place, by the code that knows the quantity.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub columns: Vec<String>,
    #[serde(skip)]
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table whose first column is left-aligned and the rest right-aligned (labels, then numbers).
    pub fn new<S: Into<String>>(columns: impl IntoIterator<Item = S>) -> Self {
        let columns: Vec<String> = columns.into_iter().map(Into::into).collect();
        let align = (0..columns.len()).map(|i| if i == 0 { Align::Left } else { Align::Right }).collect();
        Table { columns, align, rows: Vec::new() }
    }

    pub fn with_align(mut self, align: Vec<Align>) -> Self {
        assert_eq!(align.len(), self.columns.len(), "one alignment per column");
        self.align = align;
        self
    }

    pub fn push<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) {
        let row: Vec<String> = row.into_iter().map(Into::into).collect();
        assert_eq!(row.len(), self.columns.len(), "row width must match the header");
        self.rows.push(row);
    }

    pub fn render(&self) -> String {
        let width = |i: usize| {
            self.rows.iter().map(|r| r[i].chars().count()).chain([self.columns[i].chars().count()]).max().unwrap_or(0)
        };
        let widths: Vec<usize> = (0..self.columns.len()).map(width).collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| match self.align[i] {
                    Align::Left => format!("{c:<w$}", w = widths[i]),
                    Align::Right => format!("{c:>w$}", w = widths[i]),
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.columns);
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let mut t = Table::new(["p", "time"]);
        t.push(["1", "10.0 s"]);
        t.push(["1024", "9.1 ms"]);
        assert_eq!(t.render(), "p       time\n----  ------\n1     10.0 s\n1024  9.1 ms\n");
    }
}
