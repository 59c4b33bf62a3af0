//! The list of published transcripts.
//!
//! Each module crate exposes `entries() -> Vec<Entry>`; the `lab` CLI concatenates them. An entry
//! names its id (`d01/scaling-wall`, which is also its path under `outputs/`), the `cargo lab`
//! arguments that regenerate it, and how `cargo lab verify` checks it:
//!
//! * **Analytic**: re-run and compare every published file byte for byte.
//! * **Measured**: re-measuring gives different numbers, so verify checks the stored JSON's
//!   invariants with `check` (busbw = algbw x factor, #wrong == 0, hand == MPI for integers);
//!   `verify --rerun` also runs `quick_args` (the same lab at a small size) here and checks the
//!   invariants on that fresh result.

use anyhow::Result;
use serde_json::Value;

/// What a lab needs beyond a Rust toolchain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    /// `mpirun` from Open MPI (or MPICH) on PATH.
    Mpi,
    /// A CUDA driver and NCCL library.
    Gpu,
}

#[derive(Clone, Copy)]
pub enum EntryKind {
    Analytic,
    Measured {
        /// Invariants of the stored JSON (`data` as written by the lab). Err says which failed.
        check: fn(&Value) -> Result<()>,
        /// A small, fast variant of `args` that `verify --rerun` runs here.
        quick_args: &'static [&'static str],
        needs: Needs,
    },
}

#[derive(Clone)]
pub struct Entry {
    /// `dNN/name`: also the path of its files under `outputs/`.
    pub id: &'static str,
    /// Arguments to `cargo lab` that regenerate it, e.g. `["d01", "wall"]`.
    pub args: &'static [&'static str],
    pub kind: EntryKind,
    /// One line for `cargo lab list` and the book's appendix.
    pub about: &'static str,
}

impl Entry {
    pub fn is_analytic(&self) -> bool {
        matches!(self.kind, EntryKind::Analytic)
    }

    pub fn kind_name(&self) -> &'static str {
        if self.is_analytic() { "analytic" } else { "measured" }
    }

    pub fn command(&self) -> String {
        command_line(self.args.iter().copied())
    }

    pub fn module(&self) -> &str {
        self.id.split('/').next().unwrap_or(self.id)
    }
}

/// `cargo lab` followed by the arguments, each quoted only if the shell would need it.
pub fn command_line<'a>(args: impl IntoIterator<Item = &'a str>) -> String {
    let mut s = String::from("cargo lab");
    for a in args {
        s.push(' ');
        let plain = !a.is_empty()
            && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c));
        if plain { s.push_str(a) } else { s.push_str(&format!("'{}'", a.replace('\'', r"'\''"))) }
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_lines_quote_only_when_needed() {
        assert_eq!(super::command_line(["d01", "wall", "--alpha", "5us"]), "cargo lab d01 wall --alpha 5us");
        assert_eq!(super::command_line(["x", "a b"]), "cargo lab x 'a b'");
    }
}
