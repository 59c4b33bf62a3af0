//! A scale boundary: one row of a module's "what breaks first" table. Every module's library
//! returns its rows from code (never typed into prose), and D06 consolidates them into one ladder.

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Boundary {
    /// The module that owns the row: "d01", "d02", ...
    pub module: String,
    /// The rank count (or endpoint count) at which the boundary sits, for sorting the ladder.
    pub at: f64,
    /// How the scale is shown: "p = 2,236", "8 GPUs", "65,536 endpoints".
    pub scale: String,
    /// What stops working there.
    pub what_breaks: String,
    /// The numbers behind it, from the module's model or measurement.
    pub evidence: String,
}

impl Boundary {
    pub fn new(module: &str, at: f64, scale: impl Into<String>, what_breaks: impl Into<String>, evidence: impl Into<String>) -> Self {
        Boundary { module: module.into(), at, scale: scale.into(), what_breaks: what_breaks.into(), evidence: evidence.into() }
    }
}

/// The standard table for a list of boundaries, as every module prints it.
pub fn table(rows: &[Boundary]) -> crate::Table {
    let mut t = crate::Table::new(["scale", "what breaks first", "evidence"])
        .with_align(vec![crate::Align::Left; 3]);
    for b in rows {
        t.push([b.scale.clone(), b.what_breaks.clone(), b.evidence.clone()]);
    }
    t
}
