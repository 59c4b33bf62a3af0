//! The transcript contract.
//!
//! Every number the book shows comes from a [`Transcript`]:
//!
//! ```text
//! ANALYTIC MODEL: not a measurement            <- or "MEASURED on <host summary>"
//! $ cargo lab d01 wall                          <- the exact command that regenerates it
//! # ...provenance, tolerance, invariants (measured only)
//!
//! ## sections: free text and aligned tables
//! ```
//!
//! It is written as `outputs/dNN/NAME.txt` (the text above), `NAME.json` (the same tables plus
//! machine-readable `data` and the prose-quotable `quotes`) and `NAME.PLOT.svg` per plot.
//! Analytic transcripts must be byte-identical on every run: labs format their own numbers with
//! fixed precision and use ordered maps only (serde_json's `Map` is a `BTreeMap` here).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::table::Table;

pub const ANALYTIC_BANNER: &str = "ANALYTIC MODEL: not a measurement";

/// What a measured number ran on, and what a re-run may and must do.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Provenance {
    /// One line: `2x AMD EPYC 7B13 (2 cores), Linux 6.1, Open MPI 4.1.4, shared memory`.
    pub summary: String,
    /// Everything else worth recording, in order: cpu, cores, os, mpi, transport, gpu, driver, date.
    pub facts: BTreeMap<String, String>,
    /// For example "re-runs on similar hardware land within 15%".
    pub tolerance: String,
    /// Checked by `cargo lab verify` on the stored JSON: "hand ring == MPI_Allreduce for integers".
    pub invariants: Vec<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub enum Banner {
    Analytic,
    Measured(Provenance),
}

impl Banner {
    pub fn line(&self) -> String {
        match self {
            Banner::Analytic => ANALYTIC_BANNER.to_string(),
            Banner::Measured(p) => format!("MEASURED on {}", p.summary),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Block {
    Heading { text: String },
    Text { text: String },
    Table { title: String, table: Table },
}

/// An SVG plot that belongs to a transcript; written as `NAME.<name>.svg`.
#[derive(Clone, Debug)]
pub struct Plot {
    pub name: String,
    pub svg: String,
}

#[derive(Clone, Debug)]
pub struct Transcript {
    pub banner: Banner,
    /// Filled in by the CLI from the real argv, so it is always the regenerating command.
    pub command: String,
    pub blocks: Vec<Block>,
    /// Machine-readable figures (any JSON); measured invariants are checked against this.
    pub data: Value,
    /// Preformatted figures the prose quotes by key: `{{quote d01/scaling-wall#ring.p_opt}}`.
    pub quotes: BTreeMap<String, String>,
    pub plots: Vec<Plot>,
}

impl Transcript {
    pub fn analytic() -> Self {
        Self::with_banner(Banner::Analytic)
    }

    pub fn measured(provenance: Provenance) -> Self {
        Self::with_banner(Banner::Measured(provenance))
    }

    fn with_banner(banner: Banner) -> Self {
        Transcript {
            banner,
            command: String::new(),
            blocks: Vec::new(),
            data: Value::Null,
            quotes: BTreeMap::new(),
            plots: Vec::new(),
        }
    }

    pub fn is_analytic(&self) -> bool {
        self.banner == Banner::Analytic
    }

    pub fn heading(&mut self, text: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Heading { text: text.into() });
        self
    }

    pub fn text(&mut self, text: impl Into<String>) -> &mut Self {
        self.blocks.push(Block::Text { text: text.into() });
        self
    }

    pub fn table(&mut self, title: impl Into<String>, table: Table) -> &mut Self {
        self.blocks.push(Block::Table { title: title.into(), table });
        self
    }

    pub fn quote(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.quotes.insert(key.into(), value.into());
        self
    }

    pub fn plot(&mut self, name: impl Into<String>, svg: String) -> &mut Self {
        self.plots.push(Plot { name: name.into(), svg });
        self
    }

    /// The `.txt` form: what a chapter includes and what `cargo lab run` prints.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.banner.line());
        out.push('\n');
        out.push_str(&format!("$ {}\n", self.command));
        if let Banner::Measured(p) = &self.banner {
            for (k, v) in &p.facts {
                out.push_str(&format!("# {k}: {v}\n"));
            }
            out.push_str(&format!("# tolerance: {}\n", p.tolerance));
            for inv in &p.invariants {
                out.push_str(&format!("# invariant: {inv}\n"));
            }
        }
        for block in &self.blocks {
            out.push('\n');
            match block {
                Block::Heading { text } => out.push_str(&format!("## {text}\n")),
                Block::Text { text } => {
                    out.push_str(text.trim_end());
                    out.push('\n');
                }
                Block::Table { title, table } => {
                    if !title.is_empty() {
                        out.push_str(&format!("{title}\n"));
                    }
                    out.push_str(&table.render());
                }
            }
        }
        out
    }

    /// The `.json` form: the same content, machine-readable, with stable key order.
    pub fn render_json(&self) -> String {
        let (kind, provenance) = match &self.banner {
            Banner::Analytic => ("analytic", Value::Null),
            Banner::Measured(p) => ("measured", serde_json::to_value(p).expect("provenance serialises")),
        };
        let v = serde_json::json!({
            "banner": self.banner.line(),
            "kind": kind,
            "command": self.command,
            "provenance": provenance,
            "quotes": self.quotes,
            "data": self.data,
            "blocks": self.blocks,
        });
        let mut s = serde_json::to_string_pretty(&v).expect("transcript serialises");
        s.push('\n');
        s
    }

    /// Every file this transcript publishes, as (file name suffix, contents), for id `dNN/NAME`:
    /// `.txt`, `.json` and one `.<plot>.svg` per plot.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut files = vec![(".txt".to_string(), self.render_text()), (".json".to_string(), self.render_json())];
        for p in &self.plots {
            files.push((format!(".{}.svg", p.name), p.svg.clone()));
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analytic_banner_is_first_line_and_command_second() {
        let mut t = Transcript::analytic();
        t.command = "cargo lab d01 wall".into();
        t.text("hello");
        let text = t.render_text();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(ANALYTIC_BANNER));
        assert_eq!(lines.next(), Some("$ cargo lab d01 wall"));
    }

    #[test]
    fn measured_banner_carries_provenance() {
        let p = Provenance {
            summary: "test host".into(),
            tolerance: "within 15%".into(),
            invariants: vec!["#wrong == 0".into()],
            ..Default::default()
        };
        let mut t = Transcript::measured(p);
        t.command = "cargo lab d02 bench".into();
        let text = t.render_text();
        assert!(text.starts_with("MEASURED on test host\n$ cargo lab d02 bench\n"));
        assert!(text.contains("# tolerance: within 15%"));
        assert!(text.contains("# invariant: #wrong == 0"));
        assert!(t.render_json().contains("\"kind\": \"measured\""));
    }
}
