//! The `cargo lab` CLI as a library, so the whole-course tests call the same code paths a
//! student does: [`run_args`] runs one lab from its argument list, [`regen`] rewrites
//! `outputs/`, and [`verify`] proves the published files still match.
//!
//! Architecture invariant: a transcript's recorded command is built from the very argument list
//! that produced it, so the `$ cargo lab ...` line in every published file regenerates that file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use lab_core::registry::command_line;
use lab_core::{Entry, EntryKind, Failure, Transcript};

/// An executable course on distributed and cluster computing: every number in the book comes
/// from one of these commands.
#[derive(Parser, Debug)]
#[command(name = "cargo lab", bin_name = "cargo lab", version, disable_help_subcommand = true)]
pub struct Cli {
    /// Print the transcript as JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// The outputs folder to read and write [default: the workspace's outputs/].
    #[arg(long, global = true, value_name = "DIR")]
    pub outputs: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List every published transcript: id, analytic|measured, the command that regenerates it.
    List {
        /// Print a Markdown table (the book's appendix is this output).
        #[arg(long)]
        markdown: bool,
    },
    /// Run one published transcript's command and print it; outputs/ is not touched.
    Run {
        /// A transcript id such as d01/scaling-wall (see `cargo lab list`).
        id: String,
    },
    /// Re-run labs and rewrite their files in outputs/ (analytic ones unless --measured).
    Regen {
        /// Transcript ids or module names (d01); all analytic transcripts when empty.
        ids: Vec<String>,
        /// Also re-measure measured transcripts on this machine.
        #[arg(long)]
        measured: bool,
    },
    /// Re-run and compare with outputs/; exits 1 with a diff on any mismatch.
    Verify {
        /// Transcript ids or module names (d01); everything when empty.
        ids: Vec<String>,
        /// For measured transcripts, also re-run a small version here and check its invariants.
        #[arg(long)]
        rerun: bool,
    },
    /// D01 scaling limits and the cost of talking: Amdahl, Gustafson, alpha-beta, the wall.
    #[command(subcommand)]
    D01(d01_scaling::cli::Command),
    /// D02 message passing: hand-written allreduce algorithms against a real MPI_Allreduce.
    #[command(subcommand)]
    D02(d02_mpi::cli::Command),
    /// D03 GPU collectives: an nccl-tests-compatible bus-bandwidth harness, log import, busbw model.
    #[command(subcommand)]
    D03(d03_collectives::cli::Command),
    /// D05 topology: fat-tree, dragonfly and torus, as explicit graphs and closed forms.
    #[command(subcommand)]
    D05(d05_topology::cli::Command),
}

/// Every published transcript, in book order.
pub fn entries() -> Vec<Entry> {
    let mut all = Vec::new();
    all.extend(d01_scaling::cli::entries());
    all.extend(d02_mpi::cli::entries());
    all.extend(d03_collectives::cli::entries());
    all.extend(d05_topology::cli::entries());
    all
}

/// The workspace's `outputs/` folder.
pub fn default_outputs() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../outputs");
    dir.canonicalize().unwrap_or(dir)
}

/// Run one lab command given its arguments (without the leading `cargo lab`).
pub fn run_args<S: AsRef<str>>(args: &[S]) -> Result<Transcript> {
    let argv = std::iter::once("lab").chain(args.iter().map(AsRef::as_ref));
    let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{}", first_line(&e.to_string())))?;
    let recorded: Vec<&str> = args.iter().map(AsRef::as_ref).filter(|a| *a != "--json").collect();
    run_module(&cli.command, &recorded)?.context("not a lab command")
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim_start_matches("error: ").to_string()
}

/// Dispatch a module command; `None` for the course-level commands (list, run, ...).
pub fn run_module(command: &Command, recorded_args: &[&str]) -> Result<Option<Transcript>> {
    let mut t = match command {
        Command::D01(c) => d01_scaling::cli::run(c)?,
        Command::D02(c) => d02_mpi::cli::run(c)?,
        Command::D03(c) => d03_collectives::cli::run(c)?,
        Command::D05(c) => d05_topology::cli::run(c)?,
        _ => return Ok(None),
    };
    t.command = command_line(recorded_args.iter().copied());
    Ok(Some(t))
}

pub fn find(id: &str) -> Result<Entry> {
    entries()
        .into_iter()
        .find(|e| e.id == id)
        .ok_or_else(|| anyhow::anyhow!("unknown transcript id '{id}' (`cargo lab list` shows them all)"))
}

/// Resolve ids or module names (`d01`) to entries; empty means all.
pub fn select(ids: &[String]) -> Result<Vec<Entry>> {
    if ids.is_empty() {
        return Ok(entries());
    }
    let mut out = Vec::new();
    for id in ids {
        let id = id.trim_end_matches('/');
        let by_module: Vec<Entry> = entries().into_iter().filter(|e| e.module() == id).collect();
        if !by_module.is_empty() && !id.contains('/') {
            out.extend(by_module);
        } else {
            out.push(find(id)?);
        }
    }
    Ok(out)
}

/// `cargo lab list` as text or as the Markdown table the book's appendix includes.
pub fn list(markdown: bool) -> String {
    let entries = entries();
    if markdown {
        let mut s = String::from("| id | kind | regenerate with | what it shows |\n|---|---|---|---|\n");
        for e in &entries {
            s.push_str(&format!("| `{}` | {} | `{}` | {} |\n", e.id, e.kind_name(), e.command(), e.about));
        }
        s
    } else {
        let mut t = lab_core::Table::new(["id", "kind", "command"]).with_align(vec![lab_core::Align::Left; 3]);
        for e in &entries {
            t.push([e.id.to_string(), e.kind_name().to_string(), e.command()]);
        }
        t.render()
    }
}

/// The index of every transcript, written beside them and included by the book's appendix.
pub const INDEX_FILE: &str = "index.md";

fn files_for(outputs: &Path, entry: &Entry, t: &Transcript) -> Vec<(PathBuf, String)> {
    t.files().into_iter().map(|(suffix, body)| (outputs.join(format!("{}{suffix}", entry.id)), body)).collect()
}

/// Re-run the selected labs and rewrite their files. Measured ones only with `measured`.
/// Progress goes to stderr; returns the files written.
pub fn regen(outputs: &Path, ids: &[String], measured: bool) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let selected = select(ids)?;
    let n = selected.len();
    for (i, entry) in selected.iter().enumerate() {
        if !entry.is_analytic() && !measured {
            eprintln!("[{}/{n}] {}: measured, skipped (add --measured to re-measure here)", i + 1, entry.id);
            continue;
        }
        eprintln!("[{}/{n}] {}: {}", i + 1, entry.id, entry.command());
        let t = run_args(entry.args).with_context(|| format!("{} failed", entry.id))?;
        // Old plots of this id go first, so a plot a lab stopped drawing does not linger.
        remove_files_of(outputs, entry.id)?;
        for (path, body) in files_for(outputs, entry, &t) {
            std::fs::create_dir_all(path.parent().expect("has a parent"))?;
            std::fs::write(&path, body).with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
    }
    if ids.is_empty() {
        let index = outputs.join(INDEX_FILE);
        std::fs::write(&index, list(true))?;
        written.push(index);
    }
    Ok(written)
}

fn published_files_of(outputs: &Path, id: &str) -> Result<Vec<PathBuf>> {
    let path = outputs.join(id);
    let dir = path.parent().expect("ids have a module folder");
    let stem = path.file_name().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for f in rd {
            let f = f?.path();
            let name = f.file_name().and_then(|s| s.to_str()).unwrap_or_default();
            // NAME.txt, NAME.json or NAME.PLOT.svg, where PLOT has no dot of its own.
            let ours = name.strip_prefix(&stem).is_some_and(|rest| {
                let plot = rest.strip_prefix('.').and_then(|r| r.strip_suffix(".svg"));
                rest == ".txt" || rest == ".json" || plot.is_some_and(|p| !p.is_empty() && !p.contains('.'))
            });
            if ours {
                out.push(f);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn remove_files_of(outputs: &Path, id: &str) -> Result<()> {
    for f in published_files_of(outputs, id)? {
        std::fs::remove_file(f)?;
    }
    Ok(())
}

/// The outcome of `verify`: what was checked, and every problem found.
#[derive(Debug, Default)]
pub struct Report {
    pub checked: Vec<String>,
    pub skipped: Vec<String>,
    pub problems: Vec<String>,
}

/// Compare published files with a fresh run (analytic) or check their invariants (measured).
/// Problems are collected, not thrown, so one run reports every mismatch.
pub fn verify(outputs: &Path, ids: &[String], rerun: bool) -> Result<Report> {
    let mut report = Report::default();
    let selected = select(ids)?;
    for entry in &selected {
        match entry.kind {
            EntryKind::Analytic => {
                let t = run_args(entry.args).with_context(|| format!("{} failed to run", entry.id))?;
                let expected = files_for(outputs, entry, &t);
                let expected_paths: BTreeSet<PathBuf> = expected.iter().map(|(p, _)| p.clone()).collect();
                for (path, fresh) in &expected {
                    match std::fs::read_to_string(path) {
                        Ok(published) if published == *fresh => {}
                        Ok(published) => report.problems.push(format!(
                            "{}: {} differs from a fresh run (- published, + regenerated):\n{}",
                            entry.id,
                            path.display(),
                            diff(&published, fresh)
                        )),
                        Err(_) => report.problems.push(format!(
                            "{}: {} is missing (run `cargo lab regen {}`)",
                            entry.id,
                            path.display(),
                            entry.id
                        )),
                    }
                }
                for f in published_files_of(outputs, entry.id)? {
                    if !expected_paths.contains(&f) {
                        report.problems.push(format!("{}: {} is no longer produced by the lab", entry.id, f.display()));
                    }
                }
                report.checked.push(entry.id.to_string());
            }
            EntryKind::Measured { check, quick_args, needs } => {
                let path = outputs.join(format!("{}.json", entry.id));
                match read_json(&path) {
                    Ok(json) => match check(&json["data"]) {
                        Ok(()) => report.checked.push(entry.id.to_string()),
                        Err(e) => report.problems.push(format!("{}: published invariant broken: {e:#}", entry.id)),
                    },
                    Err(e) => report.problems.push(format!("{}: {e:#}", entry.id)),
                }
                if rerun {
                    match run_args(quick_args) {
                        Ok(t) => {
                            if let Err(e) = check(&t.data) {
                                report.problems.push(format!("{}: re-run here broke an invariant: {e:#}", entry.id));
                            }
                        }
                        Err(e) => report.skipped.push(format!("{} re-run ({needs:?}): {e:#}", entry.id)),
                    }
                }
            }
        }
    }
    if ids.is_empty() {
        let index = outputs.join(INDEX_FILE);
        let fresh = list(true);
        match std::fs::read_to_string(&index) {
            Ok(published) if published == fresh => {}
            Ok(published) => report.problems.push(format!(
                "{} differs from `cargo lab list --markdown` (run `cargo lab regen`):\n{}",
                index.display(),
                diff(&published, &fresh)
            )),
            Err(_) => report.problems.push(format!("{} is missing (run `cargo lab regen`)", index.display())),
        }
        orphans(outputs, &selected, &mut report)?;
    }
    Ok(report)
}

/// Files under outputs/ that no entry publishes: nothing is published without a command.
fn orphans(outputs: &Path, entries: &[Entry], report: &mut Report) -> Result<()> {
    let mut owned = BTreeSet::new();
    for e in entries {
        owned.extend(published_files_of(outputs, e.id)?);
    }
    let Ok(modules) = std::fs::read_dir(outputs) else { return Ok(()) };
    for m in modules {
        let m = m?.path();
        if !m.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&m)? {
            let f = f?.path();
            if f.is_file() && !owned.contains(&f) && f.extension().is_some_and(|x| x == "txt" || x == "json" || x == "svg") {
                report.problems.push(format!("{} is published but no transcript id produces it", f.display()));
            }
        }
    }
    Ok(())
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{} is missing", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))
}

/// A line diff with a little context, capped so a wholesale change stays readable.
pub fn diff(old: &str, new: &str) -> String {
    let d = similar::TextDiff::from_lines(old, new);
    let mut out = String::new();
    for (i, group) in d.grouped_ops(1).iter().enumerate() {
        if i == 8 {
            out.push_str("  ... (more differences)\n");
            break;
        }
        for op in group {
            for change in d.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                let line = change.value().trim_end_matches('\n');
                let line = if line.len() > 160 { format!("{}...", &line[..line.floor_char_boundary(160)]) } else { line.to_string() };
                out.push_str(&format!("  {sign} {line}\n"));
            }
        }
    }
    out
}

/// Turn a failed report into the error `cargo lab verify` exits 1 with.
pub fn report_result(report: &Report) -> Result<()> {
    if report.problems.is_empty() {
        return Ok(());
    }
    Err(Failure(format!("{} problem(s):\n{}", report.problems.len(), report.problems.join("\n"))).into())
}

/// Validate ids before a long run, with the one-line error bad input deserves.
pub fn check_ids(ids: &[String]) -> Result<()> {
    select(ids).map(|_| ())
}

/// Guard for commands that need no transcripts: make sure the outputs folder exists.
pub fn outputs_or_default(cli: &Cli) -> Result<PathBuf> {
    let dir = cli.outputs.clone().unwrap_or_else(default_outputs);
    if !dir.is_dir() {
        bail!("outputs folder {} does not exist", dir.display());
    }
    Ok(dir)
}
