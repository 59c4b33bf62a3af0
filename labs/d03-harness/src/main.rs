//! `d03-rank`: the program `mpirun` starts for D03. Every rank runs nccl-tests' method
//! (d03_collectives::method) over one backend:
//!
//! * `--backend mpi`: real MPI collectives on CPU buffers (src/mpi_backend.rs);
//! * `--backend nccl`: NCCL on GPUs through cudarc, loaded at run time (src/nccl_backend.rs):
//!   one process per GPU with the unique id broadcast over MPI, or `-g N` GPUs in one process.
//!
//! Rank 0 prints nccl-tests' text (or, with `--json`, one JSON document). Exit status: 0 on
//! success, 1 if any element was wrong, 2 on bad input or a missing GPU/NCCL (one line on stderr).

#[cfg(feature = "mpi")]
mod mpi_backend;
mod nccl_backend;
#[cfg(feature = "mpi")]
mod overhead;
mod procs;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use d03_collectives::args::BenchArgs;
use d03_collectives::coll::Collective;
use d03_collectives::format;
use d03_collectives::method::{self, Outcome, Plan};
use procs::Procs;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BackendKind {
    Mpi,
    Nccl,
}

/// nccl-tests' flags over MPI or NCCL; see `cargo lab d03 bench --help`.
#[derive(Parser, Debug)]
#[command(name = "d03-rank")]
struct Cli {
    /// all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall or sendrecv.
    #[arg(long, default_value = "all_reduce")]
    collective: String,
    #[arg(long, value_enum, default_value = "mpi")]
    backend: BackendKind,
    /// Print one JSON document on rank 0 instead of nccl-tests' text.
    #[arg(long)]
    json: bool,
    /// Folder holding libnccl.so.2 [env: D03_NCCL_LIB].
    #[arg(long)]
    nccl_lib: Option<PathBuf>,
    /// GPUs per process (nccl-tests -g).
    #[arg(short = 'g', long = "ngpus", default_value_t = 1)]
    gpus: usize,
    /// Measure the harness's own overhead and compare with a bare MPI_Allreduce loop and D02.
    #[arg(long)]
    overhead: bool,
    /// Alternating repetitions per method in --overhead.
    #[arg(long, default_value_t = 7)]
    reps: usize,
    #[command(flatten)]
    bench: BenchArgs,
}

/// A one-line error and its exit code.
struct Exit(u8, String);

impl From<anyhow::Error> for Exit {
    fn from(e: anyhow::Error) -> Self {
        Exit(2, format!("{e:#}").replace('\n', " "))
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let msg = e.to_string();
            eprintln!("{}", msg.lines().next().unwrap_or("bad arguments"));
            return ExitCode::from(2);
        }
    };
    #[cfg(feature = "mpi")]
    let universe = match mpi::initialize() {
        Some(u) => u,
        None => {
            eprintln!("error: MPI could not be initialised");
            return ExitCode::from(2);
        }
    };
    #[cfg(feature = "mpi")]
    let world = universe.world();
    #[cfg(not(feature = "mpi"))]
    let world = procs::Solo;
    match run(&cli, &world) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Exit(code, msg)) => {
            if world.rank() == 0 {
                eprintln!("error: {msg}");
            }
            ExitCode::from(code)
        }
    }
}

#[cfg(feature = "mpi")]
type World = mpi::topology::SimpleCommunicator;
#[cfg(not(feature = "mpi"))]
type World = procs::Solo;

fn run(cli: &Cli, world: &World) -> Result<(), Exit> {
    let coll = Collective::parse(&cli.collective)?;
    #[cfg(feature = "mpi")]
    if cli.overhead {
        let v = overhead::measure(world, &cli.bench, cli.reps)?;
        if world.rank() == 0 {
            println!("{v}");
        }
        return Ok(());
    }
    #[cfg(not(feature = "mpi"))]
    if cli.overhead || cli.backend == BackendKind::Mpi {
        return Err(Exit(2, "this d03-rank was built without MPI (--no-default-features): only --backend nccl works".into()));
    }
    let outcome = match cli.backend {
        #[cfg(feature = "mpi")]
        BackendKind::Mpi => {
            let mut plan = cli.bench.plan(coll, world.size())?;
            if cli.bench.datatype == "all" {
                // `-d all` means every type this backend has; MPI has no half or bfloat16.
                plan.dtypes.retain(|d| !matches!(d, d03_collectives::coll::DType::Half | d03_collectives::coll::DType::Bfloat16));
            }
            mpi_backend::check_types(&plan)?;
            let mut b = mpi_backend::MpiBackend::new(world)?;
            let library = b.library.split(',').next().unwrap_or("").to_string();
            let cpu = vec![("-".to_string(), d03_lab_host_cpu())];
            let preamble = preamble(&plan, &cli.bench, world as &dyn Procs, "mpi", &library, &cpu);
            run_plan(cli, &plan, &mut b, preamble, world.rank() == 0)?
        }
        #[cfg(not(feature = "mpi"))]
        BackendKind::Mpi => unreachable!("refused above"),
        BackendKind::Nccl => {
            if let Err(why) = d03_collectives::gpu::probe(cli.nccl_lib.as_deref()) {
                return Err(Exit(2, format!("nccl backend unavailable: {why}")));
            }
            let nranks = world.size() * cli.gpus;
            let plan = cli.bench.plan(coll, nranks)?;
            let devices = nccl_backend::device_names(world as &dyn Procs, cli.gpus);
            let preamble = preamble(&plan, &cli.bench, world as &dyn Procs, "nccl", "NCCL (cudarc, dynamically loaded)", &devices);
            nccl_backend::run(world as &dyn Procs, cli.gpus, &plan, |b, is_printer| run_plan(cli, &plan, b, preamble.clone(), is_printer))?
        }
    };
    let wrong = format::total_wrong(&outcome.rows);
    if wrong > 0 {
        return Err(Exit(1, format!("Out of bounds values : {wrong} FAILED")));
    }
    Ok(())
}

/// Run the method and print from the printing rank: nccl-tests' text, or JSON.
pub(crate) fn run_plan(cli: &Cli, plan: &Plan, b: &mut dyn method::Backend, preamble: String, is_printer: bool) -> Result<Outcome, Exit> {
    let program = format!("{}_perf", plan.coll.name());
    let text_mode = !cli.json && is_printer;
    if text_mode {
        print!("{preamble}{}", format::header());
    }
    let outcome = method::run(b, plan, &mut |row| {
        if text_mode {
            print!("{row}");
        } else if is_printer {
            eprint!("{row}");
        }
    })?;
    if is_printer {
        if cli.json {
            let v = serde_json::json!({
                "program": program,
                "preamble": preamble,
                "nranks": outcome.nranks,
                "rows": outcome.rows,
                "avg_busbw": format::avg_busbw(&outcome.rows),
                "wrong": format::total_wrong(&outcome.rows),
            });
            println!("{v}");
        } else {
            print!("{}", format::footer(&outcome.rows, &program));
        }
    }
    Ok(outcome)
}

/// nccl-tests' preamble: version, test, parameters, one line per rank.
fn preamble(plan: &Plan, bench: &BenchArgs, world: &dyn Procs, backend: &str, library: &str, devices: &[(String, String)]) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
    // One line per rank: one per process for MPI, one per GPU for NCCL (`-g N` GPUs per process).
    let mut line = String::new();
    for (i, (dev, name)) in devices.iter().enumerate() {
        line.push_str(&format!(
            "#  Rank {:2} Group {:2} Pid {:6} on {:>10} device {:>2} [{}] {}\n",
            world.rank() * devices.len() + i, 0, std::process::id(), host, dev, if dev == "-" { "cpu" } else { "gpu" }, name
        ));
    }
    let all = world.gather_lines(&line);
    let (min, max) = (plan.sizes[0], bench.max_bytes_value().unwrap_or(plan.max_bytes()));
    let (step, kind) = bench.step();
    let mut s = format!("# d03-harness (the nccl-tests 2.19 method) backend {backend}: {library}\n");
    s.push_str(&format!("# Collective test starting: {}_perf\n", plan.coll.name()));
    s.push_str(&format!(
        "# nThread 1 nGpus {} minBytes {min} maxBytes {max} step: {step}({kind}) warmup iters: {} iters: {} agg iters: 1 validation: {} graph: 0 unalign: 0\n",
        devices.len(),
        plan.warmup, plan.iters, plan.check
    ));
    s.push_str("#\n# Using devices\n");
    for l in all {
        s.push_str(&l);
    }
    s.push_str("#\n");
    s
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn d03_lab_host_cpu() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().to_string()))
        .unwrap_or_else(|| "CPU".into())
}
