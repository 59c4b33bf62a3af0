//! Two kinds of error, told apart by exit code.
//!
//! Bad input (a malformed unit, zero ranks, an unknown id) is a plain `anyhow::Error` and exits 2.
//! A check that ran and failed (a transcript that no longer matches, a wrong element, a crashed
//! rank) is wrapped in [`Failure`] and exits 1.

use std::fmt;

/// A check that ran and did not pass. `cargo lab` exits 1 for it (2 for everything else).
#[derive(Debug)]
pub struct Failure(pub String);

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

/// Shorthand for a bad-input error with a one-line message.
pub fn bad_input(msg: impl fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{msg}")
}

/// The exit code `cargo lab` uses for an error: 1 for a failed check, 2 for bad input.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if err.chain().any(|e| e.is::<Failure>()) { 1 } else { 2 }
}
