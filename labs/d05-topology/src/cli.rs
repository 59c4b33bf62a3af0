//! The `cargo lab` commands of this module and its published transcripts.

use anyhow::Result;
use lab_core::{Entry, Transcript};

#[derive(clap::Subcommand, Debug)]
pub enum Command {}

pub fn run(command: &Command) -> Result<Transcript> {
    match *command {}
}

pub fn entries() -> Vec<Entry> {
    Vec::new()
}
