//! The `cargo lab d02 ...` commands: each launches the rank program with `mpirun` (or `srun`),
//! reads rank 0's JSON report and renders the transcript.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use d01_scaling::{Allreduce, Machine};
use lab_core::launch::{Launch, Launcher, find_mpirun, rank_program};
use lab_core::plot::{LinePlot, Series};
use lab_core::registry::Needs;
use lab_core::units::{fmt_bandwidth, fmt_bytes, fmt_count, fmt_sig, fmt_time, parse_bytes_u64};
use lab_core::{Entry, EntryKind, Failure, Provenance, Table, Transcript, host};
use serde_json::{Value, json};

use crate::algorithms::Algorithm;
use crate::elem::{ElemType, Op};
use crate::model::{self, HockneyFit};
use crate::protocol::{BenchReport, CorrectnessReport, Job, Timing};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Every hand algorithm x element type x op against MPI_Allreduce, for each rank count
    /// (oversubscribed is fine: this checks results, not speed).
    Correctness(CorrectnessArgs),
    /// osu_allreduce-style timings of the hand algorithms, MPI_Allreduce (default and each forced
    /// tuned algorithm) and a ping-pong fit of alpha and beta, with D01's predictions.
    Bench(BenchArgs),
}

/// How to start the ranks.
#[derive(clap::Args, Debug, Clone)]
pub struct LaunchArgs {
    /// An MPI hostfile, for a real cluster (mpirun only).
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// mpirun here or with a hostfile; srun inside a Slurm allocation.
    #[arg(long, value_enum, default_value_t = Launcher::Mpirun)]
    pub launcher: Launcher,
    /// shm forces Open MPI's shared-memory transport (btl self,vader); tcp forces TCP (btl
    /// self,tcp), even on one host; auto lets Open MPI choose.
    #[arg(long, value_enum, default_value_t = Transport::Auto)]
    pub transport: Transport,
    /// Extra arguments for the launcher, e.g. --launcher-arg=--bind-to --launcher-arg=core.
    #[arg(long = "launcher-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub launcher_args: Vec<String>,
    /// Kill the job and fail after this many seconds per launch (mpirun --timeout as a backstop).
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    Auto,
    Shm,
    Tcp,
}

#[derive(clap::Args, Debug)]
pub struct CorrectnessArgs {
    /// Rank counts: one (4), a range (1-9) or a list (2,3,5).
    #[arg(long, value_name = "LIST", default_value = "1-9", value_parser = parse_rank_list)]
    pub ranks: RankList,
    /// The large prime element count (the others follow from p: 0, 1, p-1, p+1).
    #[arg(long, default_value_t = 10007, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub prime: u64,
    /// Seed of the deterministic test inputs.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Test hook: this rank exits without MPI_Finalize, as a crashed rank would.
    #[arg(long, hide = true)]
    pub exit_early: Option<usize>,
    #[command(flatten)]
    pub launch: LaunchArgs,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Ranks to time with (at most the host's cores, or timings mean nothing).
    #[arg(long, default_value_t = 2, value_parser = parse_ranks)]
    pub ranks: u32,
    /// Message sizes: MIN:MAX doubling (osu's -m), or a comma list. Multiples of 4 bytes (f32).
    #[arg(long, value_name = "SIZES", default_value = "8B:64MiB", value_parser = parse_sizes)]
    pub sizes: SizeList,
    /// Hand algorithms to time.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "ring,recursive-doubling,rabenseifner,binomial")]
    pub hand: Vec<Algorithm>,
    /// Open MPI tuned allreduce algorithms to force, one launch each (with the hand ring timed
    /// in the same launch).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "ring,segmented-ring,recursive-doubling,rabenseifner,nonoverlapping")]
    pub forced: Vec<Tuned>,
    /// Segment size for Open MPI's segmented ring (coll_tuned_allreduce_algorithm_segmentsize).
    #[arg(long, value_name = "BYTES", default_value = "1MiB", value_parser = parse_positive_bytes)]
    pub segment_size: u64,
    /// At most this many bytes timed per size and implementation (fewer iterations at large sizes).
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = parse_positive_bytes)]
    pub budget: u64,
    /// Repeat each launch's sweep this many times (interleaved) and keep each row's best round.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub rounds: u64,
    /// Performance targets apply from this size up.
    #[arg(long, value_name = "BYTES", default_value = "1MiB", value_parser = parse_positive_bytes)]
    pub target_from: u64,
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Test hook: this rank exits without MPI_Finalize.
    #[arg(long, hide = true)]
    pub exit_early: Option<usize>,
}

/// Open MPI 4.1's tuned allreduce algorithms (`ompi_info --param coll tuned --level 9`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Tuned {
    /// 2: tuned reduce then tuned broadcast.
    Nonoverlapping,
    /// 3
    RecursiveDoubling,
    /// 4
    Ring,
    /// 5: the ring, pipelined in segments.
    SegmentedRing,
    /// 6
    Rabenseifner,
}

impl Tuned {
    pub fn number(self) -> u32 {
        match self {
            Tuned::Nonoverlapping => 2,
            Tuned::RecursiveDoubling => 3,
            Tuned::Ring => 4,
            Tuned::SegmentedRing => 5,
            Tuned::Rabenseifner => 6,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tuned::Nonoverlapping => "nonoverlapping",
            Tuned::RecursiveDoubling => "recursive-doubling",
            Tuned::Ring => "ring",
            Tuned::SegmentedRing => "segmented-ring",
            Tuned::Rabenseifner => "rabenseifner",
        }
    }

    /// The D01 formula that describes it, where one does.
    pub fn model(self) -> Option<Allreduce> {
        match self {
            Tuned::Nonoverlapping => None,
            Tuned::RecursiveDoubling => Some(Allreduce::RecursiveDoubling),
            Tuned::Ring | Tuned::SegmentedRing => Some(Allreduce::Ring),
            Tuned::Rabenseifner => Some(Allreduce::Rabenseifner),
        }
    }

    pub fn label(self) -> String {
        format!("{} (tuned {})", self.name(), self.number())
    }
}

#[derive(Clone, Debug)]
pub struct RankList(pub Vec<u32>);

#[derive(Clone, Debug)]
pub struct SizeList(pub Vec<usize>);

fn parse_ranks(s: &str) -> std::result::Result<u32, String> {
    let n: u32 = s.trim().parse().map_err(|_| format!("'{s}' is not a rank count"))?;
    if n == 0 {
        return Err("--ranks must be at least 1".into());
    }
    if n > 4096 {
        return Err(format!("--ranks {n}: at most 4096 in this lab"));
    }
    Ok(n)
}

fn parse_rank_list(s: &str) -> std::result::Result<RankList, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        if let Some((a, b)) = part.split_once('-') {
            let (a, b) = (parse_ranks(a)?, parse_ranks(b)?);
            if a > b {
                return Err(format!("'{part}': the range is empty"));
            }
            out.extend(a..=b);
        } else {
            out.push(parse_ranks(part)?);
        }
    }
    Ok(RankList(out))
}

fn parse_positive_bytes(s: &str) -> std::result::Result<u64, String> {
    let b = parse_bytes_u64(s).map_err(|e| e.to_string())?;
    if b == 0 { Err(format!("'{s}': must be more than 0 bytes")) } else { Ok(b) }
}

fn parse_sizes(s: &str) -> std::result::Result<SizeList, String> {
    let check = |b: u64| -> std::result::Result<usize, String> {
        if b == 0 || !b.is_multiple_of(4) {
            return Err(format!("size {b} B: sizes must be positive multiples of 4 bytes (f32 elements)"));
        }
        if b > 1 << 30 {
            return Err(format!("size {b} B: at most 1 GiB per message in this lab"));
        }
        Ok(b as usize)
    };
    let mut out = Vec::new();
    if let Some((lo, hi)) = s.split_once(':') {
        let (lo, hi) = (check(parse_positive_bytes(lo)?)?, check(parse_positive_bytes(hi)?)?);
        if lo > hi {
            return Err(format!("'{s}': MIN is above MAX"));
        }
        let mut b = lo;
        while b <= hi {
            out.push(b);
            b *= 2;
        }
    } else {
        for part in s.split(',') {
            out.push(check(parse_positive_bytes(part.trim())?)?);
        }
        out.sort_unstable();
        out.dedup();
    }
    Ok(SizeList(out))
}

pub fn run(command: &Command) -> Result<Transcript> {
    match command {
        Command::Correctness(a) => correctness(a),
        Command::Bench(a) => bench(a),
    }
}

// ---------------------------------------------------------------------------------------------
// Launching

impl LaunchArgs {
    /// Everything that can be wrong with the request, before anything is built or started.
    fn preflight(&self) -> Result<()> {
        if let Some(h) = &self.hostfile {
            if !h.is_file() {
                bail!("hostfile {} does not exist", h.display());
            }
            if self.launcher == Launcher::Srun {
                bail!("--hostfile is for mpirun; srun takes its hosts from the Slurm allocation");
            }
        }
        if self.launcher == Launcher::Mpirun {
            find_mpirun()?;
        } else if lab_core::launch::which("srun").is_none() {
            bail!("srun not found: run inside a Slurm allocation, or use --launcher mpirun");
        }
        Ok(())
    }

    fn launch(&self, ranks: u32, mca: Vec<(String, String)>) -> Launch {
        let mut l = Launch::new(ranks);
        l.launcher = self.launcher.clone();
        l.hostfile = self.hostfile.clone();
        l.extra = self.launcher_args.clone();
        l.timeout = Duration::from_secs(self.timeout);
        let btl = match self.transport {
            Transport::Auto => None,
            Transport::Shm => Some("self,vader"),
            Transport::Tcp => Some("self,tcp"),
        };
        if let Some(btl) = btl {
            l.mca.push(("btl".into(), btl.into()));
        }
        l.mca.extend(mca);
        l
    }

    fn transport_fact(&self) -> String {
        match (self.transport, &self.hostfile, &self.launcher) {
            (Transport::Shm, _, _) => "shared memory (Open MPI btl vader, forced)".into(),
            (Transport::Tcp, _, _) => "TCP (Open MPI btl tcp, forced)".into(),
            (Transport::Auto, None, Launcher::Mpirun) => "shared memory (one host: Open MPI picks btl vader)".into(),
            (Transport::Auto, _, _) => "Open MPI's choice across hosts".into(),
        }
    }

    fn launcher_fact(&self) -> String {
        let mut s = match self.launcher {
            Launcher::Mpirun => "mpirun".to_string(),
            Launcher::Srun => "srun".to_string(),
        };
        if let Some(h) = &self.hostfile {
            s.push_str(&format!(" --hostfile {}", h.display()));
        }
        for a in &self.launcher_args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Build the rank program and run one job on `ranks` ranks; rank 0's JSON comes back.
fn run_job<R: serde::de::DeserializeOwned>(launch: &Launch, job: &Job) -> Result<R> {
    let program = rank_program("d02-mpi-ranks", "d02-ranks")?;
    let arg = serde_json::to_string(job).expect("jobs serialise");
    let out = launch.run(&program, &[arg])?;
    let line = out.stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).ok_or_else(|| {
        Failure(format!("the ranks finished but rank 0 printed no report (stderr: {})", out.stderr.trim()))
    })?;
    serde_json::from_str(line).with_context(|| "reading rank 0's report")
}

/// A launcher that starts N one-rank "singletons" (srun without a working PMI) reports p = 1.
fn expect_ranks(got: usize, asked: u32) -> Result<()> {
    if got != asked as usize {
        return Err(Failure(format!(
            "asked for {asked} ranks but MPI_COMM_WORLD has {got}: the launcher did not wire the ranks together (srun needs --mpi=pmix or pmi2 matching Open MPI's build)"
        ))
        .into());
    }
    Ok(())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// One MCA parameter's current value from `ompi_info --parsable` (Open MPI only).
pub fn ompi_param(framework: &str, component: &str, name: &str) -> Option<String> {
    let ompi_info = lab_core::launch::which("ompi_info")?;
    let out = std::process::Command::new(ompi_info)
        .args(["--parsable", "--param", framework, component, "--level", "9"])
        .output()
        .ok()?;
    let key = format!("mca:{framework}:{component}:param:{name}:value:");
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| l.strip_prefix(&key).map(str::to_string))
}

fn short_mpi(library: &str) -> String {
    // "Open MPI v4.1.4, package: ..." -> "Open MPI 4.1.4"
    let first = library.split(',').next().unwrap_or(library).trim();
    first.replace(" v", " ")
}

fn provenance(launch: &LaunchArgs, mpi: &str, ranks: &str, tolerance: &str, invariants: Vec<String>) -> Provenance {
    let mut facts = host::base_facts();
    facts.insert("mpi".into(), mpi.to_string());
    facts.insert("transport".into(), launch.transport_fact());
    facts.insert("ranks".into(), ranks.to_string());
    facts.insert("launcher".into(), launch.launcher_fact());
    facts.insert("load average at start".into(), load_average());
    if let (Some(eager), Some(copy)) =
        (ompi_param("btl", "vader", "btl_vader_eager_limit"), ompi_param("btl", "vader", "btl_vader_single_copy_mechanism"))
    {
        facts.insert("shared-memory protocol".into(), format!("eager up to {eager} B (btl_vader_eager_limit), then rendezvous with single copy by {copy}"));
    }
    let transport = launch.transport_fact();
    let transport = transport.split(" (").next().unwrap_or("").to_string();
    Provenance {
        summary: format!("{}, {}, {transport}, {ranks} ranks", host::summary(), short_mpi(mpi)),
        facts,
        tolerance: tolerance.into(),
        invariants,
    }
}

// ---------------------------------------------------------------------------------------------
// Correctness

const CORRECTNESS_INVARIANTS: [&str; 3] = [
    "integers (i32, i64; sum, min, max): every hand algorithm == MPI_Allreduce, bit for bit, on every rank",
    "floats min and max: hand == MPI_Allreduce bit for bit",
    "floats sum: hand and MPI_Allreduce both within (p-1)u/(1-(p-1)u) * sum|x_i| of the exact sum",
];

fn correctness(a: &CorrectnessArgs) -> Result<Transcript> {
    a.launch.preflight()?;
    let mut reports: Vec<CorrectnessReport> = Vec::new();
    for &p in &a.ranks.0 {
        eprintln!("d02 correctness: {p} ranks");
        let launch = a.launch.launch(p, Vec::new());
        let job = Job::Correctness { prime: a.prime as usize, seed: a.seed, exit_early: a.exit_early };
        let report: CorrectnessReport = run_job(&launch, &job).with_context(|| format!("correctness on {p} ranks"))?;
        expect_ranks(report.p, p)?;
        reports.push(report);
    }
    let data = json!({ "reports": reports });
    check_correctness(&data).map_err(|e| Failure(format!("{e:#}")))?;

    let mpi = reports.first().map(|r| r.mpi_library.clone()).unwrap_or_default();
    let ranks = ranks_label(&a.ranks.0);
    let mut t = Transcript::measured(provenance(
        &a.launch,
        &mpi,
        &ranks,
        "exact: integer results and float min/max must match bit for bit on any machine; float sums may differ in their last bits between machines, MPI libraries and algorithms, always within the stated bound",
        CORRECTNESS_INVARIANTS.iter().map(|s| s.to_string()).collect(),
    ));
    t.heading("Hand algorithms against MPI_Allreduce");
    t.text(format!(
        "Counts per p: 0, 1, p-1, p+1 and {} (prime); types i32 i64 f32 f64; ops sum min max; inputs seeded with {}.\n\
         'differ' counts elements (over all ranks) where the hand result is not bit-identical to MPI_Allreduce's.",
        fmt_count(a.prime),
        a.seed
    ));
    let mut table = Table::new(["p", "cases", "int differ", "float min/max differ", "float sums differ", "over bound"]);
    for r in &reports {
        let int_differ: u64 = r.cases.iter().filter(|c| !c.elem.is_float()).map(|c| c.differ_from_mpi).sum();
        let fminmax: u64 = r.cases.iter().filter(|c| c.elem.is_float() && c.op != Op::Sum).map(|c| c.differ_from_mpi).sum();
        let fsum: u64 = r.cases.iter().filter(|c| c.elem.is_float() && c.op == Op::Sum).map(|c| c.differ_from_mpi).sum();
        let over: u64 = r.cases.iter().map(|c| c.over_bound_hand + c.over_bound_mpi).sum();
        table.push([r.p.to_string(), r.cases.len().to_string(), int_differ.to_string(), fminmax.to_string(), fsum.to_string(), over.to_string()]);
    }
    t.table("", table);

    t.heading("Float sums: largest difference in ulps");
    let max_p = reports.iter().map(|r| r.p).max().unwrap_or(1);
    t.text(format!(
        "At the prime count, over all p. 'exact' is the correctly rounded sum (f32: summed exactly in f64; f64: compensated sum).\n\
         Inputs mix signs and six decades, so some sums cancel to near zero, where one ulp is tiny: large ulp counts there\n\
         are still within the bound, which is relative to sum|x_i|, not to the result. The last two columns give the largest\n\
         error in those units, u·Σ|x_i| (u = 2^-24 for f32, 2^-53 for f64); the bound is about p-1 = {} at p = {}.",
        max_p.saturating_sub(1),
        max_p
    ));
    let mut ulps = Table::new(["type", "algorithm", "hand vs MPI", "hand vs exact", "MPI vs exact", "hand err / u·Σ|x|", "MPI err / u·Σ|x|"]);
    let mut quotes = BTreeMap::new();
    for elem in [ElemType::F32, ElemType::F64] {
        for alg in Algorithm::ALL {
            let cases: Vec<_> = reports
                .iter()
                .flat_map(|r| &r.cases)
                .filter(|c| c.elem == elem && c.algorithm == alg && c.op == Op::Sum && c.count == a.prime as usize)
                .collect();
            let max = |f: fn(&crate::protocol::Case) -> u64| cases.iter().map(|c| f(c)).max().unwrap_or(0);
            let (vs_mpi, hand_exact, mpi_exact) = (max(|c| c.max_ulps_vs_mpi), max(|c| c.max_ulps_hand_vs_exact), max(|c| c.max_ulps_mpi_vs_exact));
            let maxf = |f: fn(&crate::protocol::Case) -> f64| cases.iter().map(|c| f(c)).fold(0.0f64, f64::max);
            let (err_hand, err_mpi) = (maxf(|c| c.max_err_hand), maxf(|c| c.max_err_mpi));
            quotes.insert(format!("{}.{}.err_units", elem.name(), alg.name()), fmt_sig(err_hand, 2));
            quotes.insert(format!("{}.mpi.err_units", elem.name()), fmt_sig(err_mpi, 2));
            quotes.insert(format!("{}.{}.ulps_vs_mpi", elem.name(), alg.name()), fmt_count(vs_mpi));
            quotes.insert(format!("{}.{}.ulps_vs_exact", elem.name(), alg.name()), fmt_count(hand_exact));
            quotes.insert(format!("{}.mpi.ulps_vs_exact", elem.name()), fmt_count(mpi_exact));
            ulps.push([
                elem.name().to_string(),
                alg.name().to_string(),
                fmt_count(vs_mpi),
                fmt_count(hand_exact),
                fmt_count(mpi_exact),
                format!("{:.2}", err_hand),
                format!("{:.2}", err_mpi),
            ]);
        }
    }
    t.table("", ulps);
    let total_cases: usize = reports.iter().map(|r| r.cases.len()).sum();
    let int_cases: usize = reports.iter().flat_map(|r| &r.cases).filter(|c| !c.elem.is_float()).count();
    t.text(format!(
        "All invariants hold: {} cases, {} of them integer, on {ranks} ranks.",
        fmt_count(total_cases as u64),
        fmt_count(int_cases as u64)
    ));
    for (k, v) in quotes {
        t.quote(k, v);
    }
    t.quote("cases", fmt_count(total_cases as u64));
    t.quote("int_cases", fmt_count(int_cases as u64));
    t.quote("ranks", ranks.clone());
    t.quote("prime", fmt_count(a.prime));
    t.data = data;
    Ok(t)
}

fn ranks_label(ranks: &[u32]) -> String {
    let contiguous = ranks.windows(2).all(|w| w[1] == w[0] + 1);
    match ranks {
        [one] => one.to_string(),
        [first, .., last] if contiguous => format!("{first}-{last}"),
        _ => ranks.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
    }
}

/// The invariants of a correctness transcript's data.
pub fn check_correctness(data: &Value) -> Result<()> {
    let reports: Vec<CorrectnessReport> =
        serde_json::from_value(data["reports"].clone()).context("data.reports is not a list of correctness reports")?;
    if reports.is_empty() {
        bail!("no rank counts were checked");
    }
    for r in &reports {
        if r.cases.len() < Algorithm::ALL.len() * ElemType::ALL.len() * Op::ALL.len() {
            bail!("p = {}: only {} cases", r.p, r.cases.len());
        }
        for c in &r.cases {
            let what = || format!("p = {} n = {} {} {} {}", c.p, c.count, c.elem.name(), c.op.name(), c.algorithm.name());
            let exact_required = !c.elem.is_float() || c.op != Op::Sum;
            if exact_required && c.differ_from_mpi != 0 {
                bail!("{}: {} elements differ from MPI_Allreduce", what(), c.differ_from_mpi);
            }
            if c.over_bound_hand != 0 {
                bail!("{}: {} hand elements are wrong (outside the error bound)", what(), c.over_bound_hand);
            }
            if c.over_bound_mpi != 0 {
                bail!("{}: {} MPI_Allreduce elements are outside the error bound", what(), c.over_bound_mpi);
            }
            if c.p != r.p {
                bail!("{}: case of the wrong run", what());
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Bench

const BENCH_INVARIANTS: [&str; 4] = [
    "#wrong == 0: every timed result equals the exact sum (inputs are small integers stored as f32)",
    "min <= avg <= max for every row",
    "predictions == D01's formulas at the fitted alpha, beta, gamma",
    "ratios == the quotients of the stored average times",
];

fn hand_ring_label() -> String {
    hand_label(Algorithm::Ring)
}

fn hand_label(a: Algorithm) -> String {
    format!("hand {}", a.name())
}

fn mpi_label(t: Option<Tuned>) -> String {
    match t {
        None => "MPI default".into(),
        Some(t) => format!("MPI {}", t.label()),
    }
}

fn find<'a>(timings: &'a [Timing], implementation: &str, bytes: usize) -> Option<&'a Timing> {
    timings.iter().find(|t| t.implementation == implementation && t.bytes == bytes)
}

fn bench(a: &BenchArgs) -> Result<Transcript> {
    a.launch.preflight()?;
    if a.sizes.0.is_empty() {
        bail!("--sizes selects no sizes");
    }
    let p = a.ranks as usize;
    let launch_default = a.launch.launch(a.ranks, Vec::new());
    if launch_default.oversubscribed() {
        eprintln!("warning: {p} ranks on {} cores: oversubscribed, timings will mean little", host::cores());
    }
    let job = |hand: Vec<Algorithm>, label: String, pingpong: bool| Job::Bench {
        sizes: a.sizes.0.clone(),
        hand,
        mpi_label: label,
        byte_budget: a.budget as usize,
        pingpong,
        rounds: a.rounds as usize,
        exit_early: a.exit_early,
    };
    let load = load_average();
    eprintln!("d02 bench: default launch (hand algorithms, MPI_Allreduce default, ping-pong)");
    let main: BenchReport = run_job(&launch_default, &job(a.hand.clone(), "default".into(), true))?;
    expect_ranks(main.p, a.ranks)?;
    let mut launches = vec![json!({ "forced": Value::Null, "report": main })];
    let mut timings = main.timings.clone();
    // Each forced algorithm needs its own launch (MCA parameters are read at MPI_Init); the hand
    // ring runs in the same launch, so its ratio to the forced one compares like with like.
    let mut forced_ring_pairs = Vec::new();
    for &tuned in &a.forced {
        eprintln!("d02 bench: MPI_Allreduce forced to {}", tuned.label());
        let mca = vec![
            ("coll_tuned_use_dynamic_rules".to_string(), "1".to_string()),
            ("coll_tuned_allreduce_algorithm".to_string(), tuned.number().to_string()),
            ("coll_tuned_allreduce_algorithm_segmentsize".to_string(), a.segment_size.to_string()),
        ];
        let l = a.launch.launch(a.ranks, mca);
        let label = tuned.label();
        let r: BenchReport = run_job(&l, &job(vec![Algorithm::Ring], label.clone(), false))?;
        for t in &r.timings {
            if t.implementation.starts_with("hand") {
                forced_ring_pairs.push((tuned, t.clone()));
            } else {
                timings.push(t.clone());
            }
        }
        launches.push(json!({ "forced": tuned.name(), "report": r }));
    }

    // The model: alpha and beta from the ping-pong, gamma from the reduce loop.
    let pp: Vec<(usize, f64)> = main.pingpong.iter().map(|x| (x.bytes, x.one_way)).collect();
    let fit = model::fit_hockney(&pp);
    let gamma = model::fit_gamma(&main.reduce.iter().map(|x| (x.bytes, x.seconds)).collect::<Vec<_>>());
    let machine = fit.map(|f| Machine { alpha: f.alpha, beta: f.beta, gamma: gamma.unwrap_or(0.0) });

    let mpi = main.mpi_library.clone();
    let mut t = Transcript::measured(provenance(
        &a.launch,
        &mpi,
        &p.to_string(),
        "each row is the best of the rounds (see data.rounds); timings are this host's at this load; re-runs on a quiet host of the same kind land within 15% per row at sizes >= 64 KiB, more below (microsecond rows are noisy); ratios between implementations are steadier than absolute times",
        BENCH_INVARIANTS.iter().map(|s| s.to_string()).collect(),
    ));
    let mut quotes: BTreeMap<String, String> = BTreeMap::new();
    quotes.insert("load".into(), load.clone());
    if let Some(e) = ompi_param("btl", "vader", "btl_vader_eager_limit") {
        quotes.insert("eager_limit".into(), format!("{e} B"));
    }
    if let Some(c) = ompi_param("btl", "vader", "btl_vader_single_copy_mechanism") {
        quotes.insert("single_copy".into(), c);
    }
    quotes.insert("ranks".into(), p.to_string());

    // Ping-pong and fit.
    t.heading("Ping-pong (osu_latency style) and the Hockney fit");
    if let (Some(f), Some(m)) = (fit, machine) {
        t.text(format!(
            "alpha = {} (intercept of sizes <= {}), beta = 1/{} (slope of sizes >= {}), n_1/2 = alpha/beta = {}\n\
             gamma = {} per reduced byte, i.e. {} for out = a + b (f32), fitted over sizes >= 4 KiB; all fits minimise relative error",
            fmt_time(f.alpha),
            fmt_bytes(model::SMALL_MAX as f64),
            fmt_bandwidth(1.0 / f.beta),
            fmt_bytes(model::LARGE_MIN as f64),
            fmt_bytes(m.n_half().round()),
            fmt_time(m.gamma),
            fmt_bandwidth(1.0 / m.gamma),
        ));
        quotes.insert("alpha".into(), fmt_time(f.alpha));
        quotes.insert("bandwidth".into(), fmt_bandwidth(1.0 / f.beta));
        quotes.insert("n_half".into(), fmt_bytes(m.n_half().round()));
        quotes.insert("reduce_bandwidth".into(), fmt_bandwidth(1.0 / m.gamma));
    } else {
        t.text("No fit: a ping-pong needs at least 2 ranks.");
    }
    let mut pt = Table::new(["size", "iterations", "one-way", "fit alpha + n*beta", "fit error"]);
    for x in &main.pingpong {
        let (fitted, err) = match fit {
            Some(f) => {
                let y = f.alpha + x.bytes as f64 * f.beta;
                (fmt_time(y), pct(model::rel_error(y, x.one_way)))
            }
            None => ("-".into(), "-".into()),
        };
        pt.push([fmt_bytes(x.bytes as f64), fmt_count(x.iterations as u64), fmt_time(x.one_way), fitted, err]);
    }
    t.table("", pt);

    // All timings, average over ranks.
    let mut implementations: Vec<String> = a.hand.iter().map(|&h| hand_label(h)).collect();
    implementations.push(mpi_label(None));
    implementations.extend(a.forced.iter().map(|&f| mpi_label(Some(f))));
    t.heading(format!("Allreduce time (osu_allreduce style: avg over ranks of per-rank means; f32 sum; best of {} rounds)", a.rounds));
    let mut cols = vec!["size".to_string(), "iters".to_string()];
    cols.extend(implementations.iter().map(|s| s.trim_start_matches("MPI ").replace(" (tuned ", "(")));
    let mut tt = Table::new(cols);
    for &bytes in &a.sizes.0 {
        let iters = find(&timings, &implementations[0], bytes).map(|x| x.iterations.timed).unwrap_or(0);
        let mut row = vec![fmt_bytes(bytes as f64), fmt_count(iters as u64)];
        for imp in &implementations {
            row.push(find(&timings, imp, bytes).map(|x| fmt_time(x.stats.avg)).unwrap_or_else(|| "-".into()));
        }
        tt.push(row);
    }
    t.table("", tt);
    t.text(format!(
        "Columns after 'MPI default' are MPI_Allreduce forced to one algorithm of Open MPI's tuned component (its number in\n\
         parentheses), one launch each. Iterations: osu_allreduce's (1000 + 100 warm-up up to 8 KiB, 100 + 10 above), capped at\n\
         {} timed per size; each row is the best of {} interleaved rounds.",
        fmt_bytes(a.budget as f64),
        a.rounds
    ));

    // Predicted vs measured.
    let mut predictions = Vec::new();
    if let Some(m) = machine {
        t.heading("D01's prediction vs measurement");
        t.text("predicted = Allreduce::<algorithm>.cost(machine, n, p).total() from d01_scaling at the fitted alpha, beta, gamma; error = (predicted - measured) / measured.");
        let mut modelled: Vec<(String, Allreduce)> = a.hand.iter().map(|&h| (hand_label(h), h.model())).collect();
        for &f in &a.forced {
            if let Some(model) = f.model() {
                modelled.push((mpi_label(Some(f)), model));
            }
        }
        let mut cols = vec!["size".to_string()];
        cols.extend(modelled.iter().map(|(l, _)| l.trim_start_matches("MPI ").to_string()));
        let mut pv = Table::new(cols);
        for &bytes in &a.sizes.0 {
            let mut row = vec![fmt_bytes(bytes as f64)];
            for (label, model) in &modelled {
                let cell = match find(&timings, label, bytes) {
                    Some(x) => {
                        let pred = model::predict(*model, &m, bytes, p);
                        let err = model::rel_error(pred, x.stats.avg);
                        predictions.push(json!({ "implementation": label, "model": model.name(), "bytes": bytes, "predicted": pred, "measured": x.stats.avg, "error": err }));
                        format!("{} ({})", fmt_time(pred), pct(err))
                    }
                    None => "-".into(),
                };
                row.push(cell);
            }
            pv.push(row);
        }
        t.table("predicted (error against the measured average)", pv);
    }

    // Where the hand ring's time goes: the same D01 formula with constants measured at the
    // block size each step really moves.
    let mut breakdown = Vec::new();
    if let Some(f) = fit {
        t.heading("Where the hand ring's time goes");
        t.text(
            "Same D01 ring formula, three sets of constants: the global fit above; beta and gamma measured at the block size\n\
             m = n/p each step moves (ping-pong one-way time t(m), reduce time r(m)), i.e. 2(p-1) t(m) + (p-1) r(m); and the same\n\
             with t(m) from a two-way MPI_Sendrecv exchange, which is what a ring step does (the model assumes a rank sends and\n\
             receives at once). 'rounds' is the slowest round's average over the best one: how much the host's other work\n\
             disturbed the row (1x: not at all).",
        );
        let mut bt = Table::new([
            "size",
            "measured",
            "rounds (slowest/best)",
            "D01 global fit",
            "D01 at m (ping-pong)",
            "D01 at m (exchange)",
            "exchange(m)",
            "reduce(m)",
        ]);
        for &bytes in a.sizes.0.iter().filter(|&&b| b >= 64 * 1024) {
            let Some(row) = find(&timings, &hand_ring_label(), bytes) else { continue };
            let measured = row.stats.avg;
            let slowest = row.round_avgs.iter().copied().fold(measured, f64::max);
            let spread = slowest / measured;
            let global = machine.map(|m| model::predict(Allreduce::Ring, &m, bytes, p));
            let pp = local_ring_prediction(&main, f.alpha, bytes, p, false);
            let ex = local_ring_prediction(&main, f.alpha, bytes, p, true);
            let m = bytes as f64 / p as f64;
            let ex_t = interpolate(&main.exchange.iter().map(|x| (x.bytes, x.one_way)).collect::<Vec<_>>(), m);
            let red_t = interpolate(&main.reduce.iter().map(|x| (x.bytes, x.seconds)).collect::<Vec<_>>(), m);
            let cell = |x: Option<f64>| x.map(|v| format!("{} ({})", fmt_time(v), pct(model::rel_error(v, measured)))).unwrap_or_else(|| "-".into());
            bt.push([
                fmt_bytes(bytes as f64),
                fmt_time(measured),
                format!("{}x", fmt_sig(spread, 3)),
                cell(global),
                cell(pp),
                cell(ex),
                ex_t.map(fmt_time).unwrap_or_else(|| "-".into()),
                red_t.map(fmt_time).unwrap_or_else(|| "-".into()),
            ]);
            breakdown.push(json!({
                "bytes": bytes, "measured": measured, "round_spread": spread, "global": global, "local_pingpong": pp, "local_exchange": ex,
                "error_global": global.map(|v| model::rel_error(v, measured)),
                "error_local_pingpong": pp.map(|v| model::rel_error(v, measured)),
                "error_local_exchange": ex.map(|v| model::rel_error(v, measured)),
            }));
        }
        t.table("", bt);
    }

    // Targets.
    t.heading("Targets (sizes >= target size)");
    let target_from = a.target_from as usize;
    let big: Vec<usize> = a.sizes.0.iter().copied().filter(|&b| b >= target_from).collect();
    let mut ratios = Vec::new();
    let hand_ring = hand_label(Algorithm::Ring);
    let mut tg = Table::new(["size", "hand ring", "/ forced ring (same launch)", "/ MPI default", "model error (hand ring)"]);
    for &bytes in &big {
        let hr = find(&timings, &hand_ring, bytes);
        let forced = forced_ring_pairs.iter().find(|(f, h)| *f == Tuned::Ring && h.bytes == bytes).map(|(_, h)| h);
        let fr = find(&timings, &mpi_label(Some(Tuned::Ring)), bytes);
        let def = find(&timings, &mpi_label(None), bytes);
        let r_forced = match (forced, fr) {
            (Some(h), Some(f)) => Some(h.stats.avg / f.stats.avg),
            _ => None,
        };
        let r_default = match (hr, def) {
            (Some(h), Some(d)) => Some(h.stats.avg / d.stats.avg),
            _ => None,
        };
        let err = predictions
            .iter()
            .find(|x| x["implementation"] == hand_ring.as_str() && x["bytes"] == bytes)
            .and_then(|x| x["error"].as_f64());
        ratios.push(json!({
            "bytes": bytes,
            "hand_ring_same_launch": forced.map(|h| h.stats.avg),
            "forced_ring": fr.map(|f| f.stats.avg),
            "hand_ring": hr.map(|h| h.stats.avg),
            "mpi_default": def.map(|d| d.stats.avg),
            "ratio_forced_ring": r_forced,
            "ratio_default": r_default,
            "model_error": err,
        }));
        tg.push([
            fmt_bytes(bytes as f64),
            hr.map(|h| fmt_time(h.stats.avg)).unwrap_or_else(|| "-".into()),
            r_forced.map(|r| fmt_sig(r, 3)).unwrap_or_else(|| "-".into()),
            r_default.map(|r| fmt_sig(r, 3)).unwrap_or_else(|| "-".into()),
            err.map(pct).unwrap_or_else(|| "-".into()),
        ]);
    }
    t.table("", tg);
    let worst = |key: &str, abs: bool| {
        ratios
            .iter()
            .filter_map(|r| r[key].as_f64())
            .map(|v| if abs { v.abs() } else { v })
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    let (w_forced, w_default, w_err) = (worst("ratio_forced_ring", false), worst("ratio_default", false), worst("model_error", true));
    let verdict = |w: Option<f64>, target: f64| match w {
        Some(w) if w <= target => format!("{} (target <= {}: met)", fmt_sig(w, 3), fmt_sig(target, 3)),
        Some(w) => format!("{} (target <= {}: MISSED)", fmt_sig(w, 3), fmt_sig(target, 3)),
        None => "not measured".into(),
    };
    t.text(format!(
        "worst hand ring / Open MPI forced ring: {}\nworst hand ring / MPI_Allreduce default: {}\nworst |model error| of the hand ring: {}",
        verdict(w_forced, 1.05),
        verdict(w_default, 1.25),
        match w_err {
            Some(e) => format!("{} (target <= 15%: {})", pct(e).trim_start_matches('+'), if e <= 0.15 { "met" } else { "MISSED" }),
            None => "not measured".into(),
        }
    ));
    let worst_local = |key: &str| {
        breakdown
            .iter()
            .filter(|r| r["bytes"].as_u64().is_some_and(|b| b >= target_from as u64))
            .filter_map(|r| r[key].as_f64())
            .map(f64::abs)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    let (w_pp, w_ex) = (worst_local("error_local_pingpong"), worst_local("error_local_exchange"));
    let verdict15 = |w: Option<f64>| match w {
        Some(e) => format!("{} (target <= 15%: {})", pct(e).trim_start_matches('+'), if e <= 0.15 { "met" } else { "MISSED" }),
        None => "not measured".into(),
    };
    t.text(format!(
        "worst |model error| of the hand ring with constants at the block size: ping-pong {}; exchange {}",
        verdict15(w_pp),
        verdict15(w_ex)
    ));
    let max_spread = breakdown
        .iter()
        .filter(|r| r["bytes"].as_u64().is_some_and(|b| b >= target_from as u64))
        .filter_map(|r| r["round_spread"].as_f64())
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    if let Some(sp) = max_spread {
        quotes.insert("ring_round_spread_max".into(), format!("{}x", fmt_sig(sp, 3)));
    }
    if let Some(e) = w_pp {
        quotes.insert("worst_model_error_local_pingpong".into(), pct(e).trim_start_matches('+').to_string());
    }
    if let Some(e) = w_ex {
        quotes.insert("worst_model_error_local_exchange".into(), pct(e).trim_start_matches('+').to_string());
    }
    if let Some(w) = w_forced {
        quotes.insert("worst_ratio_forced_ring".into(), fmt_sig(w, 3));
    }
    if let Some(w) = w_default {
        quotes.insert("worst_ratio_default".into(), fmt_sig(w, 3));
    }
    if let Some(e) = w_err {
        quotes.insert("worst_model_error".into(), pct(e).trim_start_matches('+').to_string());
    }
    quotes.insert("target_from".into(), fmt_bytes(target_from as f64));

    // Scale boundaries from the fitted machine.
    let mut boundaries = Vec::new();
    if let Some(m) = machine {
        let rows = model::scale_boundaries(&m, host::cores(), 8, &[1 << 20, 64 << 20]);
        t.heading("What breaks first (D01's formulas at the fitted alpha, beta, gamma; analytic beyond this host)");
        t.table("", lab_core::boundary::table(&rows));
        for b in &rows {
            let key = if b.what_breaks.contains("out of cores") {
                "cores".to_string()
            } else if b.what_breaks.contains("10x slower") {
                "small".to_string()
            } else {
                format!("ring_{}", b.what_breaks.split_whitespace().take(3).skip(1).collect::<String>())
            };
            quotes.insert(format!("boundary.{key}"), b.scale.clone());
        }
        boundaries = rows.iter().map(|b| json!({ "at": b.at, "scale": b.scale, "what_breaks": b.what_breaks, "evidence": b.evidence })).collect();
    }

    // Plot: measured (solid) and predicted (dashed), hand algorithms and Open MPI's ring.
    let mut plot = LinePlot::new(format!("Allreduce on {p} ranks: measured (solid) vs D01 (dashed)"), "bytes", "seconds").log_x().log_y();
    let mut plotted: Vec<String> = a.hand.iter().map(|&h| hand_label(h)).collect();
    plotted.push(mpi_label(None));
    if a.forced.contains(&Tuned::Ring) {
        plotted.push(mpi_label(Some(Tuned::Ring)));
    }
    for imp in &plotted {
        let pts: Vec<(f64, f64)> = timings.iter().filter(|x| &x.implementation == imp).map(|x| (x.bytes as f64, x.stats.avg)).collect();
        plot = plot.series(Series::new(imp.clone(), pts));
    }
    if machine.is_some() {
        for &h in &a.hand {
            let pts: Vec<(f64, f64)> = predictions
                .iter()
                .filter(|x| x["implementation"] == hand_label(h).as_str())
                .filter_map(|x| Some((x["bytes"].as_f64()?, x["predicted"].as_f64()?)))
                .collect();
            plot = plot.series(Series::new(format!("D01 {}", h.name()), pts).dashed());
        }
    }
    t.plot("time", plot.to_svg());

    for (k, v) in quotes {
        t.quote(k, v);
    }
    t.data = json!({
        "p": p,
        "sizes": a.sizes.0,
        "load_average": load,
        "rounds": a.rounds,
        "fit": fit,
        "gamma": gamma,
        "launches": launches,
        "predictions": predictions,
        "targets": { "from_bytes": target_from, "rows": ratios, "worst_ratio_forced_ring": w_forced, "worst_ratio_default": w_default, "worst_model_error": w_err, "worst_model_error_local_pingpong": w_pp, "worst_model_error_local_exchange": w_ex },
        "boundaries": boundaries,
        "breakdown": breakdown,
    });
    check_bench(&t.data).map_err(|e| Failure(format!("{e:#}")))?;
    Ok(t)
}

/// Linear interpolation of measured (bytes, seconds) at `m` bytes; None outside the range.
fn interpolate(points: &[(usize, f64)], m: f64) -> Option<f64> {
    let hi = points.iter().position(|&(b, _)| b as f64 >= m)?;
    let (b1, t1) = points[hi];
    if b1 as f64 == m || hi == 0 {
        return (b1 as f64 == m).then_some(t1);
    }
    let (b0, t0) = points[hi - 1];
    Some(t0 + (t1 - t0) * (m - b0 as f64) / (b1 as f64 - b0 as f64))
}

/// D01's ring formula with size-local constants: beta and gamma taken from the measurements at
/// the block size m = n/p that each ring step really sends and reduces (ping-pong one-way time,
/// or the two-way exchange), alpha from the global fit. Equals 2(p-1) t(m) + (p-1) t_reduce(m).
pub fn local_ring_prediction(report: &BenchReport, alpha: f64, bytes: usize, p: usize, two_way: bool) -> Option<f64> {
    if p < 2 {
        return None;
    }
    let m = bytes as f64 / p as f64;
    let transfers = if two_way { &report.exchange } else { &report.pingpong };
    let t: Vec<(usize, f64)> = transfers.iter().map(|x| (x.bytes, x.one_way)).collect();
    let r: Vec<(usize, f64)> = report.reduce.iter().map(|x| (x.bytes, x.seconds)).collect();
    let (t_m, r_m) = (interpolate(&t, m)?, interpolate(&r, m)?);
    let machine = Machine { alpha, beta: (t_m - alpha) / m, gamma: r_m / m };
    Some(model::predict(Allreduce::Ring, &machine, bytes, p))
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-30)
}

/// The invariants of a bench transcript's data.
pub fn check_bench(data: &Value) -> Result<()> {
    let p = data["p"].as_u64().context("data.p missing")? as usize;
    let launches = data["launches"].as_array().context("data.launches missing")?;
    if launches.is_empty() {
        bail!("no launches");
    }
    let mut all: Vec<Timing> = Vec::new();
    for l in launches {
        let r: BenchReport = serde_json::from_value(l["report"].clone()).context("a launch report is malformed")?;
        if r.p != p {
            bail!("a launch ran on {} ranks, not {p}", r.p);
        }
        for x in &r.timings {
            let what = || format!("{} at {} B", x.implementation, x.bytes);
            if x.wrong != 0 {
                bail!("{}: #wrong = {}", what(), x.wrong);
            }
            let s = x.stats;
            if !(s.min > 0.0 && s.min <= s.avg * (1.0 + 1e-12) && s.avg <= s.max * (1.0 + 1e-12)) {
                bail!("{}: min/avg/max out of order ({} {} {})", what(), s.min, s.avg, s.max);
            }
        }
        all.extend(r.timings);
    }
    if let Some(fit) = data.get("fit").filter(|f| !f.is_null()) {
        let f: HockneyFit = serde_json::from_value(fit.clone()).context("data.fit is malformed")?;
        let m = Machine { alpha: f.alpha, beta: f.beta, gamma: data["gamma"].as_f64().unwrap_or(0.0) };
        for x in data["predictions"].as_array().context("data.predictions missing")? {
            let model = Allreduce::ALL
                .into_iter()
                .find(|a| x["model"] == a.name())
                .with_context(|| format!("unknown model {}", x["model"]))?;
            let bytes = x["bytes"].as_u64().context("prediction without bytes")? as usize;
            let pred = x["predicted"].as_f64().context("prediction without value")?;
            if !close(pred, model::predict(model, &m, bytes, p)) {
                bail!("prediction for {} at {bytes} B is not D01's formula at the stored fit", x["implementation"]);
            }
            let imp = x["implementation"].as_str().unwrap_or("");
            let measured = all.iter().find(|t| t.implementation == imp && t.bytes == bytes).context("prediction without a timing")?;
            if !close(x["measured"].as_f64().unwrap_or(f64::NAN), measured.stats.avg)
                || !close(x["error"].as_f64().unwrap_or(f64::NAN), model::rel_error(pred, measured.stats.avg))
            {
                bail!("prediction error for {imp} at {bytes} B does not match the stored timing");
            }
        }
    }
    if let (Some(fit), Some(main)) = (data.get("fit").filter(|f| !f.is_null()), launches.first()) {
        let f: HockneyFit = serde_json::from_value(fit.clone())?;
        let main: BenchReport = serde_json::from_value(main["report"].clone())?;
        for r in data["breakdown"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            let bytes = r["bytes"].as_u64().context("breakdown row without bytes")? as usize;
            for (key, two_way) in [("local_pingpong", false), ("local_exchange", true)] {
                let fresh = local_ring_prediction(&main, f.alpha, bytes, p, two_way);
                let stored = r[key].as_f64();
                if fresh.is_some() != stored.is_some() || fresh.zip(stored).is_some_and(|(a, b)| !close(a, b)) {
                    bail!("breakdown {key} at {bytes} B is not D01's ring at the stored local constants");
                }
            }
        }
    }
    for r in data["targets"]["rows"].as_array().context("data.targets missing")? {
        for (ratio, num, den) in [("ratio_forced_ring", "hand_ring_same_launch", "forced_ring"), ("ratio_default", "hand_ring", "mpi_default")] {
            if let (Some(q), Some(n), Some(d)) = (r[ratio].as_f64(), r[num].as_f64(), r[den].as_f64())
                && !close(q, n / d)
            {
                bail!("{ratio} at {} B is not {num} / {den}", r["bytes"]);
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Published transcripts

fn check_correctness_entry(data: &Value) -> Result<()> {
    check_correctness(data)
}

fn check_bench_entry(data: &Value) -> Result<()> {
    check_bench(data)
}

pub fn entries() -> Vec<Entry> {
    vec![
        Entry {
            id: "d02/correctness",
            args: &["d02", "correctness", "--ranks", "1-9"],
            kind: EntryKind::Measured {
                check: check_correctness_entry,
                quick_args: &["d02", "correctness", "--ranks", "2-3", "--prime", "101"],
                needs: Needs::Mpi,
            },
            about: "every hand allreduce (ring, recursive doubling, Rabenseifner, binomial) x type x op against MPI_Allreduce, p = 1..9",
        },
        Entry {
            id: "d02/bench",
            args: &["d02", "bench", "--ranks", "2"],
            kind: EntryKind::Measured {
                check: check_bench_entry,
                quick_args: &["d02", "bench", "--ranks", "2", "--sizes", "4KiB:1MiB", "--forced", "ring", "--budget", "64MiB", "--rounds", "1"],
                needs: Needs::Mpi,
            },
            about: "osu-style timings: hand algorithms vs MPI_Allreduce (default and forced), ping-pong alpha-beta fit, D01 predictions, scale boundaries",
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lists() {
        assert_eq!(parse_rank_list("1-4").unwrap().0, vec![1, 2, 3, 4]);
        assert_eq!(parse_rank_list("2,5").unwrap().0, vec![2, 5]);
        assert!(parse_rank_list("0").unwrap_err().contains("at least 1"));
        assert!(parse_rank_list("4-2").is_err());
        assert!(parse_rank_list("x").is_err());
    }

    #[test]
    fn size_lists() {
        assert_eq!(parse_sizes("8B:64").unwrap().0, vec![8, 16, 32, 64]);
        assert_eq!(parse_sizes("1KiB,8").unwrap().0, vec![8, 1024]);
        assert!(parse_sizes("6").is_err());
        assert!(parse_sizes("lots").is_err());
        assert!(parse_sizes("1MiB:1KiB").is_err());
    }

    #[test]
    fn labels() {
        assert_eq!(ranks_label(&[1, 2, 3]), "1-3");
        assert_eq!(ranks_label(&[2, 5]), "2,5");
        assert_eq!(short_mpi("Open MPI v4.1.4, package: Debian OpenMPI"), "Open MPI 4.1.4");
    }
}
