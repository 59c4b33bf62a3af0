//! `cargo lab d01 ...`: the scaling-wall calculator and its published transcripts.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use lab_core::plot::{LinePlot, Series};
use lab_core::units::{fmt_bandwidth, fmt_bytes, fmt_count, fmt_sig, fmt_size, fmt_time};
use lab_core::{Boundary, Entry, EntryKind, Table, Transcript};
use serde_json::json;

use crate::collectives::{Allgather, Allreduce, Alltoall, Broadcast, ReduceScatter, allreduce_lower_bound, crossover};
use crate::cost::Machine;
use crate::karp_flatt;
use crate::laws;
use crate::wall::{Workload, ladder_ps};

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The scaling wall: T(p) = serial + compute/p + allreduce(gradient, p) for p = 1..100,000.
    Wall(WallArgs),
    /// Karp-Flatt's serial fraction from measured (p, time) pairs in a CSV, or from the wall model.
    KarpFlatt(KarpFlattArgs),
    /// Collective costs over message sizes, per algorithm, with crossover sizes per rank count.
    Collectives(CollectivesArgs),
    /// Amdahl's and Gustafson's speedups side by side.
    Laws(LawsArgs),
    /// Time this module's own labs (a benchmark, not a published transcript).
    Bench,
}

fn parse_time(s: &str) -> Result<f64, String> {
    lab_core::units::parse_time(s).map_err(|e| e.to_string())
}

fn parse_positive_time(s: &str) -> Result<f64, String> {
    let t = parse_time(s)?;
    if t > 0.0 { Ok(t) } else { Err(format!("'{s}' must be greater than zero")) }
}

fn parse_bytes(s: &str) -> Result<f64, String> {
    lab_core::units::parse_bytes(s).map_err(|e| e.to_string())
}

fn parse_bandwidth(s: &str) -> Result<f64, String> {
    lab_core::units::parse_bandwidth(s).map_err(|e| e.to_string())
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    let f: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    if (0.0..=1.0).contains(&f) { Ok(f) } else { Err(format!("'{s}' is outside [0, 1]")) }
}

fn parse_open_fraction(s: &str) -> Result<f64, String> {
    let f = parse_fraction(s)?;
    if f > 0.0 && f < 1.0 { Ok(f) } else { Err(format!("'{s}' must be strictly between 0 and 1")) }
}

fn parse_ranks(s: &str) -> Result<u64, String> {
    let p: i64 = s.replace([',', '_'], "").parse().map_err(|_| format!("'{s}' is not a whole number of ranks"))?;
    if p >= 1 { Ok(p as u64) } else { Err(format!("'{s}': ranks must be at least 1")) }
}

/// The machine and its message costs: shared by `wall` and `collectives`.
#[derive(Args, Debug, Clone)]
pub struct MachineArgs {
    /// Per-message latency alpha (assumed default: 10 us, an inter-node message through a switch).
    #[arg(long, default_value = "10us", value_parser = parse_time)]
    pub alpha: f64,
    /// Per-rank link bandwidth 1/beta (assumed default: 50 GB/s, one 400 Gb/s NIC per rank).
    #[arg(long, default_value = "50GB/s", value_parser = parse_bandwidth)]
    pub bandwidth: f64,
    /// Reduction arithmetic throughput 1/gamma (assumed default: 1 TB/s, a GPU reducing in HBM).
    #[arg(long, default_value = "1TB/s", value_parser = parse_bandwidth)]
    pub reduce_bandwidth: f64,
}

impl MachineArgs {
    pub fn machine(&self) -> Machine {
        Machine::new(self.alpha, self.bandwidth, self.reduce_bandwidth)
    }
}

#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Work every rank repeats per step, not divided by p (optimizer step, input pipeline).
    #[arg(long, default_value = "20ms", value_parser = parse_time)]
    pub serial: f64,
    /// Divisible compute per step on one rank.
    #[arg(long, default_value = "100s", value_parser = parse_positive_time)]
    pub compute: f64,
    /// Gradient bytes allreduced per step (default: 1e9 parameters in bf16).
    #[arg(long, default_value = "2GB", value_parser = parse_bytes)]
    pub bytes: f64,
    #[command(flatten)]
    pub machine: MachineArgs,
}

impl WorkloadArgs {
    pub fn workload(&self) -> Workload {
        Workload { serial: self.serial, parallel: self.compute, bytes: self.bytes, machine: self.machine.machine() }
    }
}

#[derive(Args, Debug)]
pub struct WallArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Efficiency below which a rank count counts as past the wall.
    #[arg(long, default_value = "0.5", value_parser = parse_open_fraction)]
    pub threshold: f64,
    /// The largest rank count to sweep.
    #[arg(long, default_value = "100000", value_parser = parse_ranks)]
    pub max_ranks: u64,
}

#[derive(Args, Debug)]
pub struct KarpFlattArgs {
    /// A CSV of `p,time` rows (header optional, times with units or in seconds; needs p = 1).
    #[arg(long, value_name = "FILE", conflicts_with = "from_model")]
    pub csv: Option<std::path::PathBuf>,
    /// Feed the wall model's own T(p) for p = 1, 2, 4, ..., 4096 through Karp-Flatt instead.
    #[arg(long)]
    pub from_model: bool,
    #[command(flatten)]
    pub workload: WorkloadArgs,
}

#[derive(Args, Debug)]
pub struct CollectivesArgs {
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Rank counts to compare, comma-separated.
    #[arg(long, value_delimiter = ',', default_values = ["8", "64", "512", "4096", "100000"], value_parser = parse_ranks)]
    pub ranks: Vec<u64>,
    /// Smallest message size.
    #[arg(long, default_value = "8B", value_parser = parse_bytes)]
    pub min_bytes: f64,
    /// Largest message size.
    #[arg(long, default_value = "1GiB", value_parser = parse_bytes)]
    pub max_bytes: f64,
}

#[derive(Args, Debug)]
pub struct LawsArgs {
    /// Parallel fractions to compare, comma-separated, each in [0, 1].
    #[arg(long, value_delimiter = ',', default_values = ["0.9", "0.99", "0.999", "0.9999"], value_parser = parse_fraction)]
    pub fractions: Vec<f64>,
}

pub fn run(command: &Command) -> Result<Transcript> {
    match command {
        Command::Wall(a) => wall(a),
        Command::KarpFlatt(a) => karp_flatt_cmd(a),
        Command::Collectives(a) => collectives(a),
        Command::Laws(a) => laws_cmd(a),
        Command::Bench => bench(),
    }
}

pub fn entries() -> Vec<Entry> {
    vec![
        Entry {
            id: "d01/laws",
            args: &["d01", "laws"],
            kind: EntryKind::Analytic,
            about: "Amdahl's ceiling against Gustafson's scaled speedup",
        },
        Entry {
            id: "d01/collectives",
            args: &["d01", "collectives"],
            kind: EntryKind::Analytic,
            about: "allreduce algorithms over message sizes; crossover sizes per rank count",
        },
        Entry {
            id: "d01/scaling-wall",
            args: &["d01", "wall"],
            kind: EntryKind::Analytic,
            about: "T(p) of a data-parallel step from 1 to 100,000 ranks: the efficiency and time walls",
        },
        Entry {
            id: "d01/karp-flatt",
            args: &["d01", "karp-flatt", "--from-model"],
            kind: EntryKind::Analytic,
            about: "Karp-Flatt's serial fraction of the wall model's own times: communication shows as rising e",
        },
    ]
}

/// A rank count from a formula: whole and comma-separated once it is large.
fn fmt_p(x: f64) -> String {
    if !x.is_finite() {
        "inf".into()
    } else if x >= 100.0 {
        fmt_count(x.round() as u64)
    } else {
        fmt_sig(x, 3)
    }
}

/// A percentage with one decimal, or two significant digits below 1% so small ones never read 0.0%.
fn pct(x: f64) -> String {
    let v = x * 100.0;
    if v != 0.0 && v.abs() < 1.0 { format!("{}%", fmt_sig(v, 2)) } else { format!("{v:.1}%") }
}

fn machine_text(m: &Machine) -> String {
    format!(
        "machine: alpha = {} per message, link {} (beta = {:.3e} s/B), reduction {} (gamma = {:.3e} s/B)\n\
         half-performance message size n_1/2 = alpha * B = {}",
        fmt_time(m.alpha),
        fmt_bandwidth(m.bandwidth()),
        m.beta,
        fmt_bandwidth(1.0 / m.gamma),
        m.gamma,
        fmt_bytes(m.n_half())
    )
}

/// D01's rows of the ladder, computed for a workload: where each term takes over and where the
/// walls are. D06 calls this with its reference workload.
pub fn scale_boundaries(w: &Workload, threshold: f64) -> Vec<Boundary> {
    let m = &w.machine;
    let ring_wall = w.ring_efficiency_wall(threshold);
    let p_star = w.ring_time_optimal_p();
    let best = w.sweep(Allreduce::Ring, (p_star.ceil() as u64).max(2), 0.0).0;
    // The whole ring allreduce (latency + bandwidth + reduction) first outlasts the divided compute:
    // 2 alpha p(p-1) + (p-1)(2n beta + n gamma) > w, the larger root of a quadratic, settled on integers.
    let comm_over_compute = {
        let c = 2.0 * w.bytes * m.beta + w.bytes * m.gamma;
        let (qa, qb, qc) = (2.0 * m.alpha, c - 2.0 * m.alpha, -(w.parallel + c));
        let r = if qa == 0.0 { -qc / qb } else { (-qb + (qb * qb - 4.0 * qa * qc).sqrt()) / (2.0 * qa) };
        let outlasts = |p: u64| w.step(Allreduce::Ring, p).comm.total() > w.parallel / p as f64;
        let mut p = (r.floor().max(1.0)) as u64;
        while p > 1 && outlasts(p - 1) {
            p -= 1;
        }
        while !outlasts(p) {
            p += 1;
        }
        p
    };
    // Ring latency 2(p-1) alpha exceeds its bandwidth term 2(p-1)/p n beta when p > n beta / alpha.
    let latency_over_bw = (w.bytes * m.beta / m.alpha).floor() as u64 + 1;
    let rab_star = w.log_time_optimal_p(Allreduce::Rabenseifner);
    let rab_best = w.best_power_of_two(Allreduce::Rabenseifner, 1 << 24);
    let mut rows = vec![
        Boundary::new(
            "d01",
            comm_over_compute as f64,
            format!("p = {}", fmt_count(comm_over_compute)),
            "the gradient allreduce outlasts the compute it serves",
            format!(
                "compute w/p = {} < ring allreduce {} (latency + bandwidth + reduction)",
                fmt_time(w.parallel / comm_over_compute as f64),
                fmt_time(w.step(Allreduce::Ring, comm_over_compute).comm.total())
            ),
        ),
        Boundary::new(
            "d01",
            ring_wall as f64,
            format!("p = {}", fmt_count(ring_wall)),
            format!("efficiency falls below {} (ring)", pct(threshold)),
            format!(
                "E = {:.2}% at p = {}, {:.2}% at p = {}",
                w.efficiency(Allreduce::Ring, ring_wall - 1) * 100.0,
                fmt_count(ring_wall - 1),
                w.efficiency(Allreduce::Ring, ring_wall) * 100.0,
                fmt_count(ring_wall)
            ),
        ),
        Boundary::new(
            "d01",
            best as f64,
            format!("p = {}", fmt_count(best)),
            "more ranks make the step slower (ring: latency 2(p-1) alpha)",
            format!("p* = sqrt((w - 2n beta - n gamma) / 2 alpha) = {}; T = {}", fmt_p(p_star), fmt_time(w.time(Allreduce::Ring, best))),
        ),
        Boundary::new(
            "d01",
            latency_over_bw as f64,
            format!("p = {}", fmt_count(latency_over_bw)),
            "the ring's latency term overtakes its bandwidth term",
            format!("2(p-1) alpha > 2(p-1)/p n beta once p > n beta / alpha = {}", fmt_p(w.bytes * m.beta / m.alpha)),
        ),
        Boundary::new(
            "d01",
            rab_best as f64,
            format!("p = {}", fmt_count(rab_best)),
            "Rabenseifner's lg p latency finally stops paying",
            format!("p* = (w - 2n beta - n gamma) ln 2 / (2 alpha) = {}", fmt_p(rab_star)),
        ),
    ];
    rows.sort_by(|a, b| a.at.total_cmp(&b.at));
    rows
}

/// The speedup no allreduce can beat: T(1) over the part of T(p) that does not shrink with p
/// (serial work plus the bandwidth-optimal 2n beta + n gamma as p grows).
fn bandwidth_ceiling(w: &Workload) -> f64 {
    let m = &w.machine;
    (w.serial + w.parallel) / (w.serial + 2.0 * w.bytes * m.beta + w.bytes * m.gamma)
}

fn workload_text(w: &Workload) -> String {
    format!(
        "workload: one data-parallel training step\n\
         serial (repeated on every rank) = {}, divisible compute on one rank = {}, gradient = {}\n\
         free-communication Amdahl fraction f = {} (ceiling 1/(1-f) = {})\n{}",
        fmt_time(w.serial),
        fmt_time(w.parallel),
        fmt_size(w.bytes),
        fmt_sig(w.parallel_fraction(), 6),
        fmt_sig(laws::amdahl_limit(w.parallel_fraction()), 4),
        machine_text(&w.machine)
    )
}

fn wall(a: &WallArgs) -> Result<Transcript> {
    let w = a.workload.workload();
    let mut t = Transcript::analytic();
    t.text(workload_text(&w));
    t.text("T(p) = serial + compute/p + allreduce(gradient, p); speedup S = T(1)/T(p); efficiency E = S/p.\nDefaults are assumptions chosen to be typical of a GPU cluster, not measurements.");

    let ps = ladder_ps(a.max_ranks);
    let mut table = Table::new(["p", "T(p)", "compute", "latency", "bandwidth", "reduction", "speedup", "efficiency", "dominant"]);
    let mut rows_json = Vec::new();
    for &p in &ps {
        let s = w.step(Allreduce::Ring, p);
        let sp = w.speedup(Allreduce::Ring, p);
        table.push([
            fmt_count(p),
            fmt_time(s.total()),
            fmt_time(s.compute),
            fmt_time(s.comm.latency),
            fmt_time(s.comm.bandwidth),
            fmt_time(s.comm.compute),
            fmt_sig(sp, 3),
            pct(sp / p as f64),
            s.dominant().to_string(),
        ]);
        rows_json.push(json!({"p": p, "time": s.total(), "speedup": sp, "efficiency": sp / p as f64, "dominant": s.dominant()}));
    }
    t.heading("T(p) with a ring allreduce");
    t.table("", table);

    t.heading(format!("The walls, per allreduce algorithm (efficiency threshold {})", pct(a.threshold)));
    let sweep_label = format!("best p (sweep to {})", fmt_count(a.max_ranks));
    let mut walls = Table::new(["algorithm", "p* (closed form)", sweep_label.as_str(), "T at best p", "speedup", "efficiency wall"]);
    let mut walls_json = serde_json::Map::new();
    let mut ring_swept_wall = None;
    for algo in Allreduce::ALL {
        let (best, wall_p) = w.sweep(algo, a.max_ranks, a.threshold);
        if algo == Allreduce::Ring {
            ring_swept_wall = wall_p;
        }
        let closed = w.log_time_optimal_p(algo);
        let closed_s = fmt_p(closed);
        let wall_s = wall_p.map(fmt_count).unwrap_or_else(|| format!("> {}", fmt_count(a.max_ranks)));
        walls.push([
            algo.name().to_string(),
            closed_s.clone(),
            fmt_count(best),
            fmt_time(w.time(algo, best)),
            fmt_p(w.speedup(algo, best)),
            wall_s.clone(),
        ]);
        t.quote(format!("{}.p_opt", algo.name()), fmt_count(best));
        t.quote(format!("{}.p_star", algo.name()), closed_s);
        t.quote(format!("{}.t_min", algo.name()), fmt_time(w.time(algo, best)));
        t.quote(format!("{}.speedup_max", algo.name()), fmt_p(w.speedup(algo, best)));
        t.quote(format!("{}.wall", algo.name()), wall_s);
        walls_json.insert(algo.name().into(), json!({"p_star": closed, "best_p": best, "efficiency_wall": wall_p}));
    }
    t.table("", walls);
    let closed_wall = w.ring_efficiency_wall(a.threshold);
    let agreement = if ring_swept_wall == Some(closed_wall) { "the sweep agrees" } else { "the sweep DISAGREES" };
    t.text(format!(
        "closed forms: ring efficiency wall = {} ({agreement}); ring p* = sqrt((w - 2n beta - n gamma) / (2 alpha)); logarithmic algorithms: p* = (numerator) ln 2 / (per-doubling cost), realised on a power of two",
        fmt_count(closed_wall)
    ));

    t.heading("D01 scale boundaries: what breaks first");
    let bounds = scale_boundaries(&w, a.threshold);
    t.table("", lab_core::boundary::table(&bounds));
    t.text(format!(
        "no allreduce algorithm beats the bandwidth floor: speedup <= T(1) / (serial + 2n beta + n gamma) = {}",
        fmt_p(bandwidth_ceiling(&w))
    ));

    for p in [8u64, 512, 1024, 2048, 4096, 100_000] {
        if p <= a.max_ranks {
            let s = w.step(Allreduce::Ring, p);
            t.quote(format!("ring.at{p}.time"), fmt_time(s.total()));
            t.quote(format!("ring.at{p}.efficiency"), pct(w.efficiency(Allreduce::Ring, p)));
            t.quote(format!("ring.at{p}.dominant"), s.dominant());
            t.quote(format!("ring.at{p}.latency"), fmt_time(s.comm.latency));
            t.quote(format!("ring.at{p}.bandwidth"), fmt_time(s.comm.bandwidth));
            t.quote(format!("ring.at{p}.compute"), fmt_time(s.compute));
            t.quote(format!("ring.at{p}.comm"), fmt_time(s.comm.total()));
        }
    }
    let floor = w.serial + 2.0 * w.bytes * w.machine.beta + w.bytes * w.machine.gamma;
    t.quote("floor", fmt_time(floor));
    t.quote("bandwidth_ceiling", fmt_p(bandwidth_ceiling(&w)));
    t.quote("amdahl.f", fmt_sig(w.parallel_fraction(), 6));
    t.quote("amdahl.limit", fmt_sig(laws::amdahl_limit(w.parallel_fraction()), 4));
    t.quote("n_half", fmt_bytes(w.machine.n_half()));
    t.quote("threshold", pct(a.threshold));
    for b in &bounds {
        let key = match b.what_breaks.as_str() {
            s if s.starts_with("the gradient") => "boundary.comm_over_compute",
            s if s.starts_with("efficiency") => "boundary.efficiency",
            s if s.starts_with("more ranks") => "boundary.time",
            s if s.starts_with("the ring's latency") => "boundary.latency_over_bandwidth",
            _ => "boundary.rabenseifner",
        };
        t.quote(key, b.scale.trim_start_matches("p = "));
    }

    // Plots: speedup and efficiency against p, every algorithm, on a dense log grid.
    let grid: Vec<u64> = log_grid(a.max_ranks);
    let mut sp_plot = LinePlot::new("Speedup of one training step", "ranks p", "speedup T(1)/T(p)").log_x().log_y();
    let mut eff_plot = LinePlot::new("Parallel efficiency", "ranks p", "efficiency S/p").log_x();
    for algo in Allreduce::ALL {
        sp_plot = sp_plot.series(Series::new(algo.name(), grid.iter().map(|&p| (p as f64, w.speedup(algo, p))).collect()));
        eff_plot = eff_plot.series(Series::new(algo.name(), grid.iter().map(|&p| (p as f64, w.efficiency(algo, p))).collect()));
    }
    let f = w.parallel_fraction();
    sp_plot = sp_plot.series(
        Series::new("Amdahl, free communication", grid.iter().map(|&p| (p as f64, laws::amdahl_speedup(f, p as f64))).collect()).dashed(),
    );
    eff_plot = eff_plot.hline(a.threshold, format!("threshold {}", pct(a.threshold)));
    t.plot("speedup", sp_plot.to_svg());
    t.plot("efficiency", eff_plot.to_svg());

    t.data = json!({
        "workload": w,
        "threshold": a.threshold,
        "ring": rows_json,
        "walls": walls_json,
        "boundaries": bounds,
    });
    Ok(t)
}

/// About 12 points per decade from 1 to max_p, deduplicated integers.
fn log_grid(max_p: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..)
        .map(|i| 10f64.powf(i as f64 / 12.0).round() as u64)
        .take_while(|&p| p <= max_p)
        .collect();
    v.push(max_p);
    v.dedup();
    v
}

fn karp_flatt_cmd(a: &KarpFlattArgs) -> Result<Transcript> {
    let (samples, source) = match (&a.csv, a.from_model) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            let s = karp_flatt::parse_csv(&text).with_context(|| format!("{}", path.display()))?;
            (s, format!("measured times from {}", path.display()))
        }
        (None, true) => {
            let w = a.workload.workload();
            let s = (0..=12)
                .map(|k| 1u64 << k)
                .map(|p| karp_flatt::Sample { p, time: w.time(Allreduce::Ring, p) })
                .collect();
            (s, format!("the wall model's own T(p) with a ring allreduce\n{}", workload_text(&w)))
        }
        (None, false) => anyhow::bail!("give --csv FILE with p,time rows, or --from-model"),
    };
    let analysis = karp_flatt::analyse(&samples);
    let mut t = Transcript::analytic();
    t.text(format!("source: {source}\ne = (1/S - 1/p) / (1 - 1/p): the serial fraction that would explain each measured speedup"));
    let mut table = Table::new(["p", "time", "speedup", "efficiency", "Karp-Flatt e"]);
    for r in &analysis.rows {
        table.push([
            fmt_count(r.p),
            fmt_time(r.time),
            fmt_sig(r.speedup, 4),
            pct(r.efficiency),
            r.serial_fraction.map(|e| format!("{e:.6}")).unwrap_or_else(|| "-".into()),
        ]);
    }
    t.table("", table);
    t.text(format!(
        "trend: e changes by {:+.6} per doubling of p ({:+.1}% of its mean)\nverdict: {}",
        analysis.slope_per_doubling,
        analysis.relative_slope * 100.0,
        analysis.verdict
    ));
    t.quote("slope", format!("{:+.6}", analysis.slope_per_doubling));
    t.quote("verdict", analysis.verdict);
    if let (Some(first), Some(last)) = (analysis.rows.get(1), analysis.rows.last()) {
        t.quote("e.first", format!("{:.6}", first.serial_fraction.unwrap_or(0.0)));
        t.quote("e.first_p", fmt_count(first.p));
        t.quote("e.last", format!("{:.6}", last.serial_fraction.unwrap_or(0.0)));
        t.quote("e.last_p", fmt_count(last.p));
    }
    t.data = serde_json::to_value(&analysis)?;
    Ok(t)
}

fn sizes(min: f64, max: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut n = min.max(1.0);
    while n <= max {
        v.push(n);
        n *= 4.0;
    }
    v
}

fn collectives(a: &CollectivesArgs) -> Result<Transcript> {
    if a.min_bytes > a.max_bytes {
        anyhow::bail!("--min-bytes {} is larger than --max-bytes {}", fmt_bytes(a.min_bytes), fmt_bytes(a.max_bytes));
    }
    let m = a.machine.machine();
    let mut t = Transcript::analytic();
    t.text(format!("{}\nallreduce of an n-byte buffer on p ranks; times from the alpha-beta-gamma formulas (module d01_scaling::collectives)", machine_text(&m)));
    let ns = sizes(a.min_bytes, a.max_bytes);
    let mut data = serde_json::Map::new();
    for &p in &a.ranks {
        let mut table = Table::new(["n", "ring", "recursive-doubling", "rabenseifner", "binomial", "lower bound", "best"]);
        for &n in &ns {
            let times: Vec<f64> = Allreduce::ALL.iter().map(|al| al.cost(&m, n, p).total()).collect();
            let best = Allreduce::ALL[times.iter().enumerate().fold(0, |b, (i, x)| if *x < times[b] { i } else { b })];
            let mut row = vec![fmt_bytes(n)];
            row.extend(times.iter().map(|x| fmt_time(*x)));
            row.push(fmt_time(allreduce_lower_bound(&m, n, p)));
            row.push(if p == 1 { "-".into() } else { best.name().to_string() });
            table.push(row);
        }
        t.heading(format!("allreduce on p = {}", fmt_count(p)));
        t.table("", table);
    }

    t.heading("crossover sizes: above n*, the bandwidth-optimal algorithm wins");
    let mut cross = Table::new(["p", "ring beats recursive doubling", "rabenseifner beats recursive doubling", "ring beats rabenseifner"]);
    let show = |x: Option<f64>| x.map(fmt_bytes).unwrap_or_else(|| "never".into());
    for &p in &a.ranks {
        let cost = |al: Allreduce| move |n: f64| al.cost(&m, n, p).total();
        let rr = crossover(cost(Allreduce::Ring), cost(Allreduce::RecursiveDoubling));
        let br = crossover(cost(Allreduce::Rabenseifner), cost(Allreduce::RecursiveDoubling));
        let rb = crossover(cost(Allreduce::Ring), cost(Allreduce::Rabenseifner));
        // The ring beats Rabenseifner only if its slope is smaller; on a power of two they tie on bandwidth.
        let ring_wins = rb.filter(|&n| Allreduce::Ring.cost(&m, n * 2.0, p).total() < Allreduce::Rabenseifner.cost(&m, n * 2.0, p).total());
        cross.push([fmt_count(p), show(rr), show(br), show(ring_wins)]);
        t.quote(format!("cross.ring_rd.p{p}"), show(rr));
        t.quote(format!("cross.rab_rd.p{p}"), show(br));
        t.quote(format!("cross.ring_rab.p{p}"), show(ring_wins));
        data.insert(format!("p{p}"), json!({"ring_vs_rd": rr, "rabenseifner_vs_rd": br}));
    }
    t.table("", cross);

    // The other collectives at one size, for the vocabulary table.
    let (n, p) = (64.0 * 1024.0 * 1024.0, 64u64);
    t.heading(format!("every collective at n = {}, p = {}", fmt_bytes(n), fmt_count(p)));
    let mut other = Table::new(["collective", "algorithm", "latency", "bandwidth", "reduction", "total"]);
    let mut push = |coll: &str, algo: &str, c: crate::cost::Cost| {
        other.push([coll.into(), algo.into(), fmt_time(c.latency), fmt_time(c.bandwidth), fmt_time(c.compute), fmt_time(c.total())]);
    };
    for al in Allreduce::ALL {
        push("allreduce", al.name(), al.cost(&m, n, p));
    }
    for al in [ReduceScatter::Ring, ReduceScatter::RecursiveHalving, ReduceScatter::Pairwise] {
        push("reduce-scatter", al.name(), al.cost(&m, n, p));
    }
    for al in [Allgather::Ring, Allgather::RecursiveDoubling, Allgather::Bruck] {
        push("allgather", al.name(), al.cost(&m, n, p));
    }
    for al in [Broadcast::Binomial, Broadcast::ScatterAllgather, Broadcast::ScatterRingAllgather] {
        push("broadcast", al.name(), al.cost(&m, n, p));
    }
    for al in [Alltoall::Pairwise, Alltoall::Bruck] {
        push("alltoall", al.name(), al.cost(&m, n, p));
    }
    t.table("", other);

    let plot_p = a.ranks.iter().copied().find(|&p| p == 64).unwrap_or(a.ranks[0]);
    let dense: Vec<f64> = (0..).map(|i| a.min_bytes.max(1.0) * 2f64.powi(i)).take_while(|&n| n <= a.max_bytes).collect();
    let mut plot = LinePlot::new(format!("Allreduce time on p = {}", fmt_count(plot_p)), "message size n (bytes)", "time (s)").log_x().log_y();
    for al in Allreduce::ALL {
        plot = plot.series(Series::new(al.name(), dense.iter().map(|&n| (n, al.cost(&m, n, plot_p).total())).collect()));
    }
    plot = plot.series(Series::new("bandwidth lower bound", dense.iter().map(|&n| (n, allreduce_lower_bound(&m, n, plot_p))).collect()).dashed());
    t.plot("time-vs-size", plot.to_svg());
    t.quote("plot_p", fmt_count(plot_p));
    t.quote("n_half", fmt_bytes(m.n_half()));
    t.data = json!({"machine": m, "crossovers": data});
    Ok(t)
}

fn laws_cmd(a: &LawsArgs) -> Result<Transcript> {
    let mut t = Transcript::analytic();
    t.text("Amdahl (strong scaling, fixed problem): S(p) = 1 / ((1-f) + f/p), ceiling 1/(1-f)\nGustafson (weak scaling, problem grows with p): S(p) = s + (1-s) p with s = 1-f measured on the parallel run");
    let ps = [1u64, 8, 64, 512, 4096, 16_384, 100_000];
    let mut table = Table::new(["law", "f"].into_iter().map(String::from).chain(ps.iter().map(|p| format!("p={}", fmt_count(*p)))).chain(["limit".to_string()]));
    for &f in &a.fractions {
        let mut row = vec!["Amdahl".to_string(), format!("{f}")];
        row.extend(ps.iter().map(|&p| fmt_sig(laws::amdahl_speedup(f, p as f64), 4)));
        row.push(if f < 1.0 { fmt_sig(laws::amdahl_limit(f), 5) } else { "inf".into() });
        table.push(row);
        t.quote(format!("amdahl.f{f}.limit"), if f < 1.0 { fmt_sig(laws::amdahl_limit(f), 5) } else { "inf".into() });
        t.quote(format!("amdahl.f{f}.p4096"), fmt_sig(laws::amdahl_speedup(f, 4096.0), 4));
    }
    for &f in &a.fractions {
        let mut row = vec!["Gustafson".to_string(), format!("{f}")];
        row.extend(ps.iter().map(|&p| fmt_sig(laws::gustafson_speedup(1.0 - f, p as f64), 4)));
        row.push("none".into());
        table.push(row);
        t.quote(format!("gustafson.f{f}.p4096"), fmt_sig(laws::gustafson_speedup(1.0 - f, 4096.0), 4));
    }
    t.table("", table);
    let grid = log_grid(100_000);
    let mut plot = LinePlot::new("Amdahl (solid) vs Gustafson (dashed)", "ranks p", "speedup").log_x().log_y();
    for &f in &a.fractions {
        plot = plot.series(Series::new(format!("Amdahl f={f}"), grid.iter().map(|&p| (p as f64, laws::amdahl_speedup(f, p as f64))).collect()));
    }
    for &f in &a.fractions {
        plot = plot.series(
            Series::new(format!("Gustafson f={f}"), grid.iter().map(|&p| (p as f64, laws::gustafson_speedup(1.0 - f, p as f64))).collect())
                .dashed(),
        );
    }
    t.plot("speedup", plot.to_svg());
    t.data = json!({"fractions": a.fractions});
    Ok(t)
}

/// How long the D01 labs take here: every published transcript, and the 100,000-rank sweep alone.
fn bench() -> Result<Transcript> {
    use clap::Parser;
    use std::time::Instant;

    #[derive(Parser)]
    struct Wrap {
        #[command(subcommand)]
        c: Command,
    }
    let mut provenance = lab_core::Provenance {
        summary: lab_core::host::summary(),
        facts: lab_core::host::base_facts(),
        tolerance: "timings vary run to run; compare against the targets, not the digits".into(),
        invariants: vec!["the best of 5 runs is reported".into()],
    };
    provenance.facts.insert("build".into(), if cfg!(debug_assertions) { "debug".into() } else { "release".into() });
    let mut t = Transcript::measured(provenance);
    let best_of = |f: &dyn Fn() -> Result<()>| -> Result<f64> {
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let start = Instant::now();
            f()?;
            best = best.min(start.elapsed().as_secs_f64());
        }
        Ok(best)
    };
    let mut table = Table::new(["what", "best of 5", "target"]);
    let mut total = 0.0;
    for e in entries() {
        let args: Vec<&str> = std::iter::once("lab").chain(e.args.iter().skip(1).copied()).collect();
        let cmd = Wrap::try_parse_from(args)?.c;
        let secs = best_of(&|| {
            let tr = run(&cmd)?;
            // Rendering is part of regenerating: text, JSON and every SVG.
            std::hint::black_box(tr.files());
            Ok(())
        })?;
        total += secs;
        table.push([format!("regenerate {}", e.id), fmt_time(secs), String::new()]);
    }
    table.push(["regenerate all D01 transcripts".to_string(), fmt_time(total), "< 2 s".into()]);
    let w = WorkloadArgs { serial: 0.02, compute: 100.0, bytes: 2e9, machine: MachineArgs { alpha: 10e-6, bandwidth: 50e9, reduce_bandwidth: 1e12 } }.workload();
    let sweep = best_of(&|| {
        std::hint::black_box(w.sweep(Allreduce::Ring, 100_000, 0.5));
        Ok(())
    })?;
    table.push(["ring wall sweep, p = 1..100,000".to_string(), fmt_time(sweep), "< 100 ms".into()]);
    t.table("", table);
    t.data = json!({"total_seconds": total, "sweep_seconds": sweep});
    Ok(t)
}
