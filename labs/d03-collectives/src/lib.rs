//! (placeholder: this module's lab is being built)

pub mod cli;
