//! `cargo lab d03 ...`: the harness (through mpirun), log import, the busbw model and the
//! scale-boundary table, with their published transcripts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use lab_core::launch::{Launch, Launcher};
use lab_core::plot::{LinePlot, Series};
use lab_core::registry::Needs;
use lab_core::units::{fmt_bytes, fmt_sig};
use lab_core::{Entry, EntryKind, Failure, Provenance, Table, Transcript};
use serde_json::{Value, json};

use crate::args::{BenchArgs, parse_collectives};
use crate::coll::{Collective, algbw_bytes};
use crate::format::{self, Row};
use crate::import;
use crate::model::{self, Algorithm};

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the nccl-tests-compatible harness under mpirun: nccl-tests' flags, table and trailer.
    Bench(BenchCmd),
    /// Harness overhead and the MPI backend against a bare MPI_Allreduce loop and D02's timing.
    Overhead(OverheadCmd),
    /// Parse nccl-tests / rccl-tests logs, recompute algbw and busbw, flag rows that disagree.
    Import(ImportCmd),
    /// Predicted busbw (D01's cost model) for described nodes beside the published figures.
    Model,
    /// D03's scale-boundary table: what breaks first for GPU collectives.
    Boundaries,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// MPI collectives on CPU buffers (measures on this machine).
    Mpi,
    /// NCCL on GPUs through cudarc, one rank per GPU (needs a CUDA driver and libnccl).
    Nccl,
}

#[derive(Args, Debug)]
pub struct LaunchArgs {
    /// Ranks to start (mpirun -n).
    #[arg(long, default_value_t = 2)]
    pub ranks: u32,
    /// An MPI hostfile for a real cluster.
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "mpirun")]
    pub launcher: Launcher,
    /// Kill the job after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
}

impl LaunchArgs {
    fn launch(&self) -> Launch {
        let mut l = Launch::new(self.ranks);
        l.hostfile = self.hostfile.clone();
        l.launcher = self.launcher.clone();
        l.timeout = Duration::from_secs(self.timeout);
        l
    }
}

#[derive(Args, Debug)]
pub struct BenchCmd {
    /// Collectives, comma-separated, or `all`: all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv.
    #[arg(long, default_value = "all_reduce")]
    pub collective: String,
    #[arg(long, value_enum, default_value = "mpi")]
    pub backend: BackendKind,
    /// Folder of libnccl.so.2 (nccl backend), e.g. site-packages/nvidia/nccl/lib [env: D03_NCCL_LIB].
    #[arg(long)]
    pub nccl_lib: Option<PathBuf>,
    /// GPUs driven by each rank (nccl-tests -g): >1 is the single-process multi-GPU mode.
    #[arg(short = 'g', long = "ngpus", default_value_t = 1)]
    pub gpus: usize,
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub bench: BenchArgs,
}

#[derive(Args, Debug)]
pub struct OverheadCmd {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Smallest size.
    #[arg(short = 'b', long = "minbytes", default_value = "8")]
    pub min_bytes: String,
    /// Largest size.
    #[arg(short = 'e', long = "maxbytes", default_value = "4M")]
    pub max_bytes: String,
    /// Size factor per step.
    #[arg(short = 'f', long = "stepfactor", default_value_t = 8)]
    pub step_factor: usize,
    /// Calls per timed batch.
    #[arg(short = 'n', long = "iters", default_value_t = 100)]
    pub iters: usize,
    /// Alternating repetitions of each method (the fastest is kept).
    #[arg(long, default_value_t = 21)]
    pub reps: usize,
}

#[derive(Args, Debug)]
pub struct ImportCmd {
    /// nccl-tests or rccl-tests output files.
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// The collective, if the log does not name it (all_reduce, all_gather, ...).
    #[arg(long)]
    pub collective: Option<String>,
    /// The rank count, if the log does not list its ranks.
    #[arg(long)]
    pub ranks: Option<usize>,
}

pub fn run(command: &Command) -> Result<Transcript> {
    match command {
        Command::Bench(c) => bench(c),
        Command::Overhead(c) => overhead(c),
        Command::Import(c) => import_cmd(c),
        Command::Model => model_cmd(),
        Command::Boundaries => boundaries_cmd(),
    }
}

const FIXTURES: &[&str] = &[
    "labs/d03-collectives/fixtures/nccl-2441-h100nvl-4ranks.log",
    "labs/d03-collectives/fixtures/nccl-tests-232-h100-2nodes-tree.log",
    "labs/d03-collectives/fixtures/nccl-tests-119-hdr.log",
    "labs/d03-collectives/fixtures/rccl-1490-mi250x-all-gather.log",
    "labs/d03-collectives/fixtures/rocm-blogs-mi300x-all-reduce.log",
    "labs/d03-collectives/fixtures/nccl-340-oldest-layout.log",
];

pub fn entries() -> Vec<Entry> {
    let mut import_args: Vec<&'static str> = vec!["d03", "import"];
    import_args.extend_from_slice(FIXTURES);
    vec![
        Entry { id: "d03/model", args: &["d03", "model"], kind: EntryKind::Analytic, about: "predicted busbw (D01 ring / NVLS cost) beside published nccl-tests and rccl-tests figures" },
        Entry { id: "d03/import", args: Box::leak(import_args.into_boxed_slice()), kind: EntryKind::Analytic, about: "published nccl-tests / rccl-tests log excerpts: every column recomputed, peaks per collective" },
        Entry { id: "d03/boundaries", args: &["d03", "boundaries"], kind: EntryKind::Analytic, about: "D03 scale boundaries: latency floor, NVLS's edge, rings vs trees, the factor's limit" },
        Entry {
            id: "d03/bench-mpi",
            args: &["d03", "bench", "--collective", "all", "--ranks", "2", "-b", "64", "-e", "16M", "-f", "4", "-n", "20"],
            kind: EntryKind::Measured {
                check: check_bench,
                quick_args: &["d03", "bench", "--collective", "all", "--ranks", "2", "-b", "64", "-e", "64K", "-f", "16", "-n", "5"],
                needs: Needs::Mpi,
            },
            about: "the harness's MPI backend on this machine: every collective, 2 ranks, nccl-tests format",
        },
        Entry {
            id: "d03/overhead",
            args: &["d03", "overhead", "--ranks", "2"],
            kind: EntryKind::Measured { check: check_overhead, quick_args: &["d03", "overhead", "--ranks", "2", "-e", "64K", "-n", "50", "--reps", "3"], needs: Needs::Mpi },
            about: "harness overhead vs an empty loop; MPI backend all_reduce vs a bare loop and D02's MPI_Allreduce timing",
        },
    ]
}

/// Resolve a path given on the command line: as given, else relative to the workspace root (so
/// the published commands work from any folder).
fn resolve(p: &Path) -> PathBuf {
    if p.exists() || p.is_absolute() {
        return p.to_path_buf();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let alt = root.join(p);
    if alt.exists() { alt } else { p.to_path_buf() }
}

fn provenance(backend: &str, ranks: u32) -> Provenance {
    let mut facts = lab_core::host::base_facts();
    let mpi = lab_core::launch::mpi_version();
    facts.insert("mpi".into(), mpi.clone());
    facts.insert("backend".into(), backend.into());
    facts.insert("ranks".into(), ranks.to_string());
    facts.insert("transport".into(), "Open MPI's default between ranks of one host (shared memory)".into());
    Provenance {
        summary: format!("{}, {mpi}, {ranks} ranks", lab_core::host::summary()),
        facts,
        tolerance: "times vary run to run; re-runs on similar hardware land within 25% per row; invariants must hold exactly".into(),
        invariants: vec![],
    }
}

/// Run the rank program and parse rank 0's JSON.
fn run_ranks(launch: &Launch, args: &[String]) -> Result<Value> {
    let program = lab_core::launch::rank_program("d03-harness", "d03-rank")?;
    let out = launch.run(&program, args)?;
    let line = out.stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).context("the rank program printed no JSON")?;
    serde_json::from_str(line).context("the rank program's JSON does not parse")
}

fn bench(c: &BenchCmd) -> Result<Transcript> {
    let colls = parse_collectives(&c.collective)?;
    let nranks = c.launch.ranks as usize * c.gpus;
    for &coll in &colls {
        let plan = c.bench.plan(coll, nranks)?;
        if c.backend == BackendKind::Mpi
            && c.bench.datatype != "all"
            && let Some(d) = plan.dtypes.iter().find(|d| matches!(d, crate::coll::DType::Half | crate::coll::DType::Bfloat16))
        {
            bail!("the mpi backend has no {} (MPI has no such datatype); use -d float or the nccl backend", d.name());
        }
    }
    if c.launch.ranks == 0 {
        bail!("--ranks must be at least 1");
    }
    if c.backend == BackendKind::Nccl
        && let Err(why) = crate::gpu::probe(c.nccl_lib.as_deref())
    {
        bail!("nccl backend unavailable: {why}");
    }
    let launch = c.launch.launch();
    let mut p = provenance(match c.backend { BackendKind::Mpi => "mpi", BackendKind::Nccl => "nccl" }, c.launch.ranks);
    p.invariants = vec!["busbw == algbw x factor(collective, ranks) on every row".into(), "#wrong == 0 on every row".into()];
    if launch.oversubscribed() {
        p.tolerance = "OVERSUBSCRIBED (more ranks than cores): times are meaningless, only #wrong counts".into();
    }
    let mut t = Transcript::measured(p);
    let mut data = Vec::new();
    let mut plot = LinePlot::new("busbw of the MPI backend (out-of-place)", "size (bytes)", "busbw (GB/s)").log_x();
    let mut failed = Vec::new();
    for &coll in &colls {
        let mut args = vec!["--collective".to_string(), coll.name().into(), "--json".into()];
        args.extend(c.bench.to_args());
        if c.backend == BackendKind::Nccl {
            args.extend(["--backend".into(), "nccl".into(), "-g".into(), c.gpus.to_string()]);
            if let Some(d) = &c.nccl_lib {
                args.extend(["--nccl-lib".into(), d.display().to_string()]);
            }
        }
        let v = run_ranks(&launch, &args)?;
        let rows: Vec<Row> = serde_json::from_value(v["rows"].clone()).context("rows in the rank program's JSON")?;
        let program = format!("{}_perf", coll.name());
        let mut text = v["preamble"].as_str().unwrap_or("").to_string();
        text.push_str(&format::header());
        for r in &rows {
            text.push_str(&format::row(r));
        }
        text.push_str(&format::footer(&rows, &program));
        t.heading(format!("{} on {} ranks", coll.name(), nranks));
        t.text(text);
        let wrong = format::total_wrong(&rows);
        if wrong > 0 {
            failed.push(format!("{}: {wrong} wrong elements", coll.name()));
        }
        t.quote(format!("{}.avg_busbw", coll.name()), format::c_g(format::avg_busbw(&rows)));
        if let Some(last) = rows.last() {
            t.quote(format!("{}.peak_busbw", coll.name()), format!("{:.2}", rows.iter().map(|r| r.out_of_place.busbw).fold(0.0, f64::max)));
            t.quote(format!("{}.largest.time_us", coll.name()), format::float_str(last.out_of_place.seconds * 1e6, 7).trim().to_string());
        }
        plot = plot.series(Series::new(coll.name(), rows.iter().map(|r| (r.size as f64, r.out_of_place.busbw)).collect()));
        data.push(json!({"collective": coll.name(), "nranks": nranks, "rows": rows}));
    }
    t.plot("busbw", plot.to_svg());
    t.data = json!({"runs": data});
    if !failed.is_empty() {
        return Err(Failure(format!("Out of bounds values FAILED: {}", failed.join(", "))).into());
    }
    Ok(t)
}

/// The invariants of a measured harness run: busbw = algbw x factor, algbw = S / t, #wrong = 0.
pub fn check_bench(data: &Value) -> Result<()> {
    let runs = data["runs"].as_array().context("no runs")?;
    if runs.is_empty() {
        bail!("no runs");
    }
    for run in runs {
        let coll = Collective::parse(run["collective"].as_str().context("collective")?)?;
        let n = run["nranks"].as_u64().context("nranks")? as usize;
        let rows: Vec<Row> = serde_json::from_value(run["rows"].clone())?;
        if rows.is_empty() {
            bail!("{}: no rows", coll.name());
        }
        for r in &rows {
            let dtype = crate::coll::DType::ALL.into_iter().find(|d| d.name() == r.dtype).context("type")?;
            for s in [r.out_of_place, r.in_place] {
                let want = s.algbw * coll.busbw_factor(n);
                if (s.busbw - want).abs() > 1e-9 * want.abs().max(1e-12) {
                    bail!("{} size {}: busbw {} != algbw {} x factor", coll.name(), r.size, s.busbw, s.algbw);
                }
                let alg = algbw_bytes(coll, r.count as usize, dtype, n) as f64 / 1e9 / s.seconds;
                if (alg - s.algbw).abs() > 1e-9 * alg {
                    bail!("{} size {}: algbw {} != S / t = {alg}", coll.name(), r.size, s.algbw);
                }
                if s.wrong != Some(0) {
                    bail!("{} size {}: #wrong = {:?}", coll.name(), r.size, s.wrong);
                }
            }
        }
    }
    Ok(())
}

fn overhead(c: &OverheadCmd) -> Result<Transcript> {
    let launch = c.launch.launch();
    let args: Vec<String> = vec![
        "--overhead".into(), "--json".into(), "-b".into(), c.min_bytes.clone(), "-e".into(), c.max_bytes.clone(),
        "-f".into(), c.step_factor.to_string(), "-n".into(), c.iters.to_string(), "--reps".into(), c.reps.to_string(),
    ];
    BenchArgs { min_bytes: c.min_bytes.clone(), max_bytes: c.max_bytes.clone(), step_factor: c.step_factor, ..default_bench() }
        .plan(Collective::AllReduce, c.launch.ranks as usize)?;
    let v = run_ranks(&launch, &args)?;
    let mut p = provenance("mpi", c.launch.ranks);
    p.invariants = vec![
        "empty harness loop <= 1% of the all_reduce time at every size".into(),
        "harness all_reduce and bare MPI_Allreduce agree on the result (#wrong == 0)".into(),
    ];
    if launch.oversubscribed() {
        p.tolerance = "OVERSUBSCRIBED: times are meaningless".into();
    }
    let mut t = Transcript::measured(p);
    t.text(format!(
        "MPI_Allreduce of float sums on {} ranks, {} calls per batch, fastest of {} alternating batches per method.\n\
         harness: the nccl-tests loop of this crate (method::time_batch) around the MPI backend\n\
         bare: MPI_Allreduce called in a plain for-loop on the same buffers, same clock\n\
         empty: the harness loop with the collective taken out (what the harness itself costs)\n\
         d02: {}",
        c.launch.ranks, c.iters, c.reps,
        v["d02_about"].as_str().unwrap_or("D02's osu-style MPI_Allreduce timing")
    ));
    let rows = v["rows"].as_array().context("rows")?;
    let mut table = Table::new(["size", "harness (us)", "bare (us)", "empty (us)", "d02 (us)", "empty/harness", "harness/bare", "harness/d02"]);
    for r in rows {
        let f = |k: &str| r[k].as_f64();
        let us = |x: Option<f64>| x.map(|x| format!("{:.3}", x * 1e6)).unwrap_or_else(|| "-".into());
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.4}", a / b),
            _ => "-".into(),
        };
        table.push([
            fmt_bytes(r["size"].as_f64().unwrap_or(0.0)),
            us(f("harness_s")),
            us(f("bare_s")),
            us(f("empty_s")),
            us(f("d02_s")),
            ratio(f("empty_s"), f("harness_s")),
            ratio(f("harness_s"), f("bare_s")),
            ratio(f("harness_s"), f("d02_s")),
        ]);
    }
    t.table("", table);
    let max_empty = rows.iter().filter_map(|r| Some(r["empty_s"].as_f64()? / r["harness_s"].as_f64()?)).fold(0.0, f64::max);
    t.quote("max_empty_ratio", format!("{:.4}%", max_empty * 100.0));
    let d02: Vec<f64> = rows.iter().filter_map(|r| Some(r["harness_s"].as_f64()? / r["d02_s"].as_f64()?)).collect();
    if !d02.is_empty() {
        let worst = d02.iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
        t.quote("max_d02_deviation", format!("{:.1}%", worst * 100.0));
        let within = d02.iter().filter(|x| (*x - 1.0).abs() <= 0.10).count();
        t.quote("d02_within_10", format!("{within} of {}", d02.len()));
        t.text(format!("harness vs D02: {within} of {} sizes within 10%; largest deviation {:.1}%", d02.len(), worst * 100.0));
    }
    t.data = v;
    Ok(t)
}

fn default_bench() -> BenchArgs {
    BenchArgs {
        min_bytes: "32M".into(), max_bytes: "32M".into(), step_factor: 1, step_bytes: "1M".into(), iters: 20, warmup: 1, check: 1,
        datatype: "float".into(), op: "sum".into(), root: 0, average: crate::method::Average::Mean, corrupt: false,
    }
}

pub fn check_overhead(data: &Value) -> Result<()> {
    let rows = data["rows"].as_array().context("rows")?;
    if rows.is_empty() {
        bail!("no rows");
    }
    for r in rows {
        let (e, h) = (r["empty_s"].as_f64().context("empty_s")?, r["harness_s"].as_f64().context("harness_s")?);
        if h.is_nan() || h <= 0.0 || e / h > 0.01 {
            bail!("size {}: the empty harness loop costs {:.3}% of the collective (limit 1%)", r["size"], 100.0 * e / h);
        }
        if r["wrong"].as_u64() != Some(0) {
            bail!("size {}: wrong elements {}", r["size"], r["wrong"]);
        }
    }
    Ok(())
}

fn import_cmd(c: &ImportCmd) -> Result<Transcript> {
    let coll = c.collective.as_deref().map(Collective::parse).transpose()?;
    let mut t = Transcript::analytic();
    t.text("every row: algbw = size / time (GB = 1e9 B), busbw = algbw x factor; a column disagrees when it is further off than the printed rounding allows");
    let mut summary = Table::new(["log", "collective", "ranks", "rows", "disagree", "peak busbw (GB/s)", "at size", "Avg bus bandwidth printed / mean of rows"]);
    let mut data = Vec::new();
    let mut per_coll: std::collections::BTreeMap<String, (f64, String, u64)> = std::collections::BTreeMap::new();
    for path in &c.logs {
        let full = resolve(path);
        let text = std::fs::read_to_string(&full).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let log = import::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let f = import::factor(&log, coll, c.ranks)?;
        let rec = import::recompute(&log, &f);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        t.heading(name.clone());
        t.text(format!("layout: {}\nfactor: {:.4} ({})", log.layout.describe(), f.value, f.how));
        let mut table = Table::new(["line", "size", "side", "time (us)", "algbw", "recomputed", "busbw", "recomputed", "verdict"]);
        for r in &rec {
            table.push([
                r.line.to_string(), r.size.to_string(), r.side.to_string(), r.time_text.clone(),
                format!("{:.2}", r.algbw_printed), format!("{:.3}", r.algbw), format!("{:.2}", r.busbw_printed), format!("{:.3}", r.busbw),
                if r.agrees { "ok".into() } else if r.why.contains("busbw") && r.why.contains("algbw printed") { "DISAGREES (both)".into() } else if r.why.contains("algbw printed") { "DISAGREES (algbw)".into() } else { "DISAGREES (busbw)".into() },
            ]);
        }
        t.table("", table);
        let bad: Vec<&import::Recomputed> = rec.iter().filter(|r| !r.agrees).collect();
        if let Some(first) = bad.first() {
            let ratios: Vec<f64> = bad.iter().map(|r| r.algbw_printed / r.algbw).collect();
            let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
            let mut note = format!("{} of {} sides disagree; first (line {}): {}", bad.len(), rec.len(), first.line, first.why);
            if bad.len() == rec.len() && hi - lo < 0.01 {
                note.push_str(&format!("\nevery printed algbw is {:.2} x size/time: this tool counted different bytes than today's nccl-tests (S = the whole buffer)", (lo + hi) / 2.0));
            }
            t.text(note);
        } else {
            t.text(format!("all {} sides agree with size/time and the factor", rec.len()));
        }
        let (peak, at) = import::peak(&log).unwrap_or((0.0, 0));
        let mean = import::mean_busbw(&log);
        let avg = match log.printed_avg_busbw {
            Some(a) => format!("{} / {}", format::c_g(a), format::c_g(mean)),
            None => format!("(no trailer) / {}", format::c_g(mean)),
        };
        summary.push([
            name.clone(),
            f.collective.map(|c| c.name().to_string()).unwrap_or_else(|| "?".into()),
            f.ranks.map(|n| n.to_string()).unwrap_or_else(|| "?".into()),
            log.rows.len().to_string(),
            bad.len().to_string(),
            format!("{peak:.2}"),
            fmt_bytes(at as f64),
            avg,
        ]);
        let cname = f.collective.map(|c| c.name().to_string()).unwrap_or_else(|| "unnamed (factor 1 or (n-1)/n)".into());
        let e = per_coll.entry(cname).or_insert((0.0, String::new(), 0));
        if peak > e.0 {
            *e = (peak, name.clone(), at);
        }
        let key = name.trim_end_matches(".log").to_string();
        t.quote(format!("{key}.peak"), format!("{peak:.2}"));
        t.quote(format!("{key}.disagree"), bad.len().to_string());
        t.quote(format!("{key}.factor"), format!("{:.4}", f.value));
        data.push(json!({"log": name, "factor": f, "rows": rec, "peak_busbw": peak, "peak_size": at, "printed_avg": log.printed_avg_busbw, "mean_busbw": mean}));
    }
    t.heading("summary: peak busbw per log");
    t.table("", summary);
    t.heading("peak busbw per collective");
    let mut pc = Table::new(["collective", "peak busbw (GB/s)", "size", "log"]);
    for (c, (p, log, at)) in &per_coll {
        pc.push([c.clone(), format!("{p:.2}"), fmt_bytes(*at as f64), log.clone()]);
    }
    t.table("", pc);
    t.data = json!({"logs": data});
    Ok(t)
}

fn model_cmd() -> Result<Transcript> {
    let mut t = Transcript::analytic();
    t.text(
        "model: D01's alpha-beta cost of an allreduce of S bytes on p GPUs with per-GPU bandwidth B = links x per-link x efficiency\n\
         (across nodes B = min(NVLink share, NICs per node x NIC bandwidth)); ring: D01 Allreduce::Ring; NVLS: 2 steps of S + S/p bytes.\n\
         algbw = S / T, busbw = algbw x 2(p-1)/p, as nccl-tests prints them.",
    );
    let mut table = Table::new(["system", "p", "per-GPU B (GB/s)", "size", "model algbw", "model busbw", "published busbw", "gap"]);
    let mut rows = Vec::new();
    let mut plot = LinePlot::new("Modelled all_reduce busbw vs size", "size (bytes)", "busbw (GB/s)").log_x();
    for s in model::published_systems() {
        let (alg, bus) = s.predict(s.size);
        let gap = s.published_busbw / bus - 1.0;
        table.push([
            s.name.to_string(), s.gpus.to_string(), format!("{:.1}", s.per_rank_bandwidth() / 1e9), fmt_bytes(s.size),
            format!("{alg:.1}"), format!("{bus:.1}"), format!("{}", s.published_busbw), format!("{:+.1}%", gap * 100.0),
        ]);
        let key = s.name.split(',').next().unwrap_or(s.name).replace(' ', "_").to_lowercase()
            + if s.algorithm == Algorithm::Nvls { "_nvls" } else { "_ring" };
        t.quote(format!("{key}.busbw"), format!("{bus:.0}"));
        t.quote(format!("{key}.algbw"), format!("{alg:.0}"));
        t.quote(format!("{key}.gap"), format!("{:+.1}%", gap * 100.0));
        t.quote(format!("{key}.published"), format!("{}", s.published_busbw));
        let pts: Vec<(f64, f64)> = (3..=34).map(|k| 2f64.powi(k)).map(|n| (n, s.predict(n).1)).collect();
        plot = plot.series(Series::new(s.name, pts));
        rows.push(json!({"system": s.name, "model_algbw": alg, "model_busbw": bus, "published_busbw": s.published_busbw, "gap": gap, "description": s}));
    }
    t.table("", table);
    t.heading("where the numbers come from, and why the gap");
    for s in model::published_systems() {
        t.text(format!("{}\n  published: {}\n  model:     {}\n  gap:       {}", s.name, s.published_source, s.basis, s.gap_explained));
    }
    t.heading("NVLS: why busbw exceeds line rate");
    let s = &model::published_systems()[2];
    let line = s.links_per_gpu as f64 * s.link_bw / 1e9;
    let (alg, bus) = s.predict(s.size);
    t.text(format!(
        "line rate per GPU {line:.0} GB/s; NVLS moves S + S/p per GPU and direction instead of the ring's 2(p-1)/p S,\n\
         so algbw can approach B x p/(p+1) = {:.0} GB/s, and busbw = algbw x 2(p-1)/p = {bus:.0} GB/s > {line:.0} GB/s (model algbw {alg:.0}).\n\
         busbw keeps the ring's factor because nccl-tests does not know which algorithm ran (nccl-tests#212, #153).",
        s.per_rank_bandwidth() / 1e9 * 8.0 / 9.0
    ));
    t.quote("nvls.line_rate", format!("{line:.0}"));
    t.quote("nvls.bound", format!("{:.0}", s.per_rank_bandwidth() / 1e9 * 8.0 / 9.0));

    // The protocols on 8x H100: LL, LL128, Simple as latency/bandwidth pairs (tuning.cc, §6).
    t.heading("protocols on 8x H100 (ring): NCCL's per-step latency and bandwidth share");
    let ring = &model::published_systems()[1];
    let mut proto = Table::new(["protocol", "alpha per step", "bandwidth share", "busbw at 64 KiB", "at 1 MiB", "at 256 MiB"]);
    let mut pplot = LinePlot::new("8x H100 ring: LL vs LL128 vs Simple (model)", "size (bytes)", "busbw (GB/s)").log_x();
    for (name, alpha, share) in [("LL", 0.6e-6, 0.5), ("LL128", 1.9e-6, 0.92), ("Simple", 3.4e-6, 1.0)] {
        let sys = model::System { alpha, efficiency: ring.efficiency * share, ..ring.clone() };
        let b = |n: f64| format!("{:.1}", sys.predict(n).1);
        proto.push([name.to_string(), format!("{} us", fmt_sig(alpha * 1e6, 2)), format!("{share}"), b(65536.0), b(1048576.0), b(268435456.0)]);
        pplot = pplot.series(Series::new(name, (6..=32).map(|k| 2f64.powi(k)).map(|n| (n, sys.predict(n).1)).collect()));
    }
    t.table("", proto);
    t.text("shares relative to Simple: LL carries 4 B of data per 8 B store (50%), LL128 120 B per 128 B line (NCCL applies 0.92); alphas are NCCL's NVLink ring per-step latencies (tuning.cc)");
    t.plot("busbw", plot.to_svg());
    t.plot("protocols", pplot.to_svg());
    t.data = json!({"systems": rows});
    Ok(t)
}

fn boundaries_cmd() -> Result<Transcript> {
    let mut t = Transcript::analytic();
    let rows = model::scale_boundaries();
    t.text("from the model (module d03_collectives::model, D01's ring and binomial costs); machines as in `cargo lab d03 model`");
    t.table("", lab_core::boundary::table(&rows));
    for b in &rows {
        t.quote(format!("at{}", b.at), b.scale.clone());
    }
    t.data = json!({"boundaries": rows});
    Ok(t)
}
