//! `cargo lab`: see the library docs for the commands and `--help` for their flags.

use std::process::ExitCode;

use clap::Parser;
use lab::{Cli, Command};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One line that names the problem; `--help` has the rest.
            let msg = e.to_string();
            let first = msg.lines().next().unwrap_or("invalid arguments");
            eprintln!("{first} (see --help)");
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print(); // --help and --version
            return ExitCode::SUCCESS;
        }
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let msg = format!("{e:#}");
            // Failures carry a multi-line diff; bad input stays on one line.
            eprintln!("error: {msg}");
            ExitCode::from(lab_core::error::exit_code(&e) as u8)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    match &cli.command {
        Command::List { markdown } => print!("{}", lab::list(*markdown)),
        Command::Run { id } => {
            let entry = lab::find(id)?;
            let t = lab::run_args(entry.args)?;
            print_transcript(cli, &t);
        }
        Command::Regen { ids, measured } => {
            lab::check_ids(ids)?;
            let outputs = lab::outputs_or_default(cli)?;
            let written = lab::regen(&outputs, ids, *measured)?;
            eprintln!("wrote {} file(s) under {}", written.len(), outputs.display());
        }
        Command::Verify { ids, rerun } => {
            lab::check_ids(ids)?;
            let outputs = lab::outputs_or_default(cli)?;
            let report = lab::verify(&outputs, ids, *rerun)?;
            for s in &report.skipped {
                eprintln!("skipped: {s}");
            }
            lab::report_result(&report)?;
            println!("verified {} transcript(s): published == regenerated (analytic), invariants hold (measured)", report.checked.len());
        }
        module => {
            let args: Vec<String> = std::env::args().skip(1).collect();
            let recorded = strip_global_flags(&args);
            let t = lab::run_module(module, &recorded)?.expect("module commands produce transcripts");
            print_transcript(cli, &t);
        }
    }
    Ok(())
}

/// `--json` and `--outputs DIR` change where a transcript goes, not what it says.
fn strip_global_flags(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
        } else if a == "--json" || a.starts_with("--outputs=") {
        } else if a == "--outputs" {
            skip_next = true;
        } else {
            out.push(a.as_str());
        }
    }
    out
}

fn print_transcript(cli: &Cli, t: &lab_core::Transcript) {
    if cli.json { print!("{}", t.render_json()) } else { print!("{}", t.render_text()) }
}
