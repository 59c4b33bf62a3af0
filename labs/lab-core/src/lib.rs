//! What every lab shares.
//!
//! * [`transcript`]: the contract between a lab and the book: a banner that says what kind of
//!   number follows, the exact command that regenerates it, tables, quotable figures and plots.
//! * [`registry`]: the list of published transcripts (`cargo lab list`).
//! * [`units`]: human units in and out (`2us`, `25GB/s`, `64MiB`).
//! * [`plot`]: SVG line plots through plotters.
//! * [`host`]: what a measured transcript ran on.
//! * [`error`]: bad input (exit 2) versus a failed check (exit 1).

pub mod boundary;
pub mod error;
pub mod host;
pub mod launch;
pub mod plot;
pub mod registry;
pub mod table;
pub mod transcript;
pub mod units;

pub use boundary::Boundary;
pub use error::{Failure, bad_input};
pub use registry::{Entry, EntryKind};
pub use table::{Align, Table};
pub use transcript::{Banner, Provenance, Transcript};
