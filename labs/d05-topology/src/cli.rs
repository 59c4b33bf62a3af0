//! The `cargo lab d05` commands and this module's published transcripts.

use std::time::Instant;

use anyhow::{Result, bail};
use lab_core::plot::{LinePlot, Series};
use lab_core::units::{fmt_bandwidth, fmt_bytes, fmt_count, fmt_time};
use lab_core::{Align, Entry, EntryKind, Failure, Provenance, Table, Transcript};
use serde_json::json;

use crate::closed::{Metrics, metrics};
use crate::measure::{Sources, differences, measure, measure_graph, ring_mapping_explicit};
use crate::model::{CostParams, NetParams, cost, dragonfly_routing, ring_mapping};
use crate::spec::{Clos, Dragonfly, Rail, Topology, Torus, parse};
use crate::sweep::{self, ALLREDUCE_BYTES, ALLTOALL_BYTES, Family};

fn topology_arg(s: &str) -> Result<Topology, String> {
    parse(s)
}

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Metrics of reference configurations of every family, from the closed forms.
    Families,
    /// Closed forms against explicit graphs (BFS, max-flow, routed rings) at moderate sizes.
    Check,
    /// Cost, power and bisection per endpoint from 8 to 1,000,000+ endpoints.
    Sweep {
        #[command(flatten)]
        prices: Prices,
    },
    /// Ring allreduce and all-to-all on each family vs N; dragonfly minimal vs Valiant routing.
    Collectives,
    /// D05's "what breaks first" table.
    Boundaries,
    /// Drawings of small members of each family, from their explicit graphs.
    Draw,
    /// Metrics of one topology, e.g. `fat-tree:k=48`, `dragonfly:p=4,a=8,h=4`, `torus:k=16,n=3`.
    Metrics {
        #[arg(value_parser = topology_arg)]
        topology: Topology,
        /// Also build the explicit graph and compare (BFS from representative endpoints).
        #[arg(long)]
        explicit: bool,
    },
    /// Time explicit builds of a 65,536-endpoint fat-tree and a ~100,000-endpoint dragonfly,
    /// and the closed-form sweep to 1,000,000 endpoints.
    Bench {
        /// Small sizes, for `verify --rerun`.
        #[arg(long)]
        quick: bool,
    },
}

fn non_negative(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{s}' must be a finite number >= 0"));
    }
    Ok(v)
}

/// The cost and power parameters; every default is an assumption (see `d05/families`).
#[derive(clap::Args, Debug)]
pub struct Prices {
    /// USD per switch or router port.
    #[arg(long, default_value = "700", value_parser = non_negative)]
    pub port_usd: f64,
    /// USD per electrical cable.
    #[arg(long, default_value = "150", value_parser = non_negative)]
    pub electrical_usd: f64,
    /// USD per optical link (two transceivers and the fibre).
    #[arg(long, default_value = "1400", value_parser = non_negative)]
    pub optical_usd: f64,
    /// Watts per switch port.
    #[arg(long, default_value = "12", value_parser = non_negative)]
    pub port_watts: f64,
    /// Watts per optical link (both transceivers).
    #[arg(long, default_value = "24", value_parser = non_negative)]
    pub optical_watts: f64,
}

impl Prices {
    fn params(&self) -> CostParams {
        CostParams {
            port_usd: self.port_usd,
            electrical_usd: self.electrical_usd,
            optical_usd: self.optical_usd,
            port_watts: self.port_watts,
            optical_watts: self.optical_watts,
        }
    }
}

pub fn run(command: &Command) -> Result<Transcript> {
    match command {
        Command::Families => Ok(families()),
        Command::Check => check(),
        Command::Sweep { prices } => Ok(sweep_transcript(&prices.params())),
        Command::Collectives => Ok(collectives()),
        Command::Boundaries => Ok(boundaries()),
        Command::Draw => Ok(drawings()),
        Command::Metrics { topology, explicit } => one(topology, *explicit),
        Command::Bench { quick } => bench(*quick),
    }
}

pub fn entries() -> Vec<Entry> {
    vec![
        Entry { id: "d05/families", args: &["d05", "families"], kind: EntryKind::Analytic, about: "fat-tree, Clos, rail, dragonfly and torus metrics from closed forms" },
        Entry { id: "d05/check", args: &["d05", "check"], kind: EntryKind::Analytic, about: "closed forms == explicit graphs (BFS, max-flow, routed rings)" },
        Entry { id: "d05/sweep", args: &["d05", "sweep"], kind: EntryKind::Analytic, about: "cost and bisection per endpoint, 8 to 1,000,000 endpoints" },
        Entry { id: "d05/collectives", args: &["d05", "collectives"], kind: EntryKind::Analytic, about: "allreduce and all-to-all time per topology vs N; minimal vs Valiant" },
        Entry { id: "d05/boundaries", args: &["d05", "boundaries"], kind: EntryKind::Analytic, about: "D05 scale-boundary table" },
        Entry { id: "d05/draw", args: &["d05", "draw"], kind: EntryKind::Analytic, about: "drawings of a k=4 fat-tree, a rail fabric, a dragonfly and a 4x4 torus" },
        Entry {
            id: "d05/bench",
            args: &["d05", "bench"],
            kind: EntryKind::Measured { check: check_bench, quick_args: &["d05", "bench", "--quick"], needs: lab_core::registry::Needs::Nothing },
            about: "explicit 65,536-endpoint fat-tree and ~100k dragonfly; closed-form sweep time",
        },
    ]
}

fn opt_count(x: Option<u64>) -> String {
    x.map_or("-".into(), fmt_count)
}

fn metric_columns() -> Vec<&'static str> {
    vec!["topology", "endpoints", "switches", "links", "optical", "radix", "diameter", "avg hops", "paths", "bisection", "bisect/full", "USD/endpoint", "W/endpoint"]
}

fn metric_row(t: &Topology, m: &Metrics, c: &CostParams) -> Vec<String> {
    let cost = cost(t, m, c);
    let e = m.endpoints as f64;
    vec![
        t.label(),
        fmt_count(m.endpoints),
        fmt_count(m.switches),
        fmt_count(m.links),
        fmt_count(m.optical),
        m.radix_used.to_string(),
        m.diameter.to_string(),
        format!("{:.3}", m.avg_hops),
        if m.path_diversity < 1e9 { fmt_count(m.path_diversity as u64) } else { format!("{:.3e}", m.path_diversity) },
        opt_count(m.bisection),
        m.bisection_fraction().map_or("-".into(), |f| format!("{f:.3}")),
        format!("{:.0}", cost.usd / e),
        format!("{:.1}", cost.watts / e),
    ]
}

fn metrics_json(t: &Topology, m: &Metrics) -> serde_json::Value {
    json!({
        "topology": t.label(), "endpoints": m.endpoints, "switches": m.switches, "links": m.links,
        "electrical": m.electrical, "optical": m.optical, "radix_used": m.radix_used, "diameter": m.diameter,
        "avg_hops": m.avg_hops, "path_diversity": m.path_diversity, "bisection": m.bisection,
    })
}

fn reference_topologies() -> Vec<(&'static str, Topology)> {
    vec![
        ("fat_tree_48", Topology::Clos(Clos::fat_tree(48))),
        ("clos_64_2", Topology::Clos(Clos::non_blocking(64, 2, 64))),
        ("clos_64_3", Topology::Clos(Clos::non_blocking(64, 3, 64))),
        ("clos_64_3_7to1", Topology::Clos(Clos { k: 64, tiers: 3, down: vec![32, 56], pods: 64 })),
        ("clos_128_3", Topology::Clos(Clos::non_blocking(128, 3, 128))),
        ("rail_64_8", Topology::Rail(Rail { k: 64, gpus: 8, units: 8 })),
        ("dragonfly_8_4_4", Topology::Dragonfly(Dragonfly::max_groups(4, 8, 4))),
        ("dragonfly_32_16_16", Topology::Dragonfly(Dragonfly::max_groups(16, 32, 16))),
        ("torus_16_3", Topology::Torus(Torus { k: 16, n: 3, wrap: true, cube: 4 })),
        ("torus_8_6", Topology::Torus(Torus { k: 8, n: 6, wrap: true, cube: 4 })),
        ("mesh_16_3", Topology::Torus(Torus { k: 16, n: 3, wrap: false, cube: 4 })),
    ]
}

fn cost_table(c: &CostParams) -> Table {
    let mut t = Table::new(["parameter", "value", "unit", "source"]).with_align(vec![Align::Left, Align::Right, Align::Left, Align::Left]);
    let defaults = CostParams::default().rows();
    for ((name, v, unit), (_, default, _)) in c.rows().into_iter().zip(defaults) {
        let source = if v == default { "ASSUMPTION (no cited price list)" } else { "given on the command line" };
        t.push([name.to_string(), v, unit.to_string(), source.into()]);
    }
    t
}

fn families() -> Transcript {
    let c = CostParams::default();
    let mut t = Transcript::analytic();
    t.heading("Reference configurations (closed forms)");
    t.text(
        "Hops are links between two endpoints (injection links included; a torus node is its own router).\n\
         Dragonfly hops use minimal routing (one global link). paths = shortest paths between two endpoints\n\
         at the diameter. bisection = links across the halves; bisect/full = bisection / (N/2).\n\
         Cost and power count switch ports and cables only (endpoint NICs are the same in every family).",
    );
    let mut table = Table::new(metric_columns());
    let mut data = serde_json::Map::new();
    for (key, topo) in reference_topologies() {
        let m = metrics(&topo);
        table.push(metric_row(&topo, &m, &c));
        let cost = cost(&topo, &m, &c);
        t.quote(format!("{key}.endpoints"), fmt_count(m.endpoints));
        t.quote(format!("{key}.switches"), fmt_count(m.switches));
        t.quote(format!("{key}.diameter"), m.diameter.to_string());
        t.quote(format!("{key}.avg_hops"), format!("{:.2}", m.avg_hops));
        t.quote(format!("{key}.bisect_full"), m.bisection_fraction().map_or("-".into(), |f| format!("{f:.2}")));
        t.quote(format!("{key}.usd"), format!("{:.0}", cost.usd / m.endpoints as f64));
        t.quote(format!("{key}.radix"), m.radix_used.to_string());
        t.quote(format!("{key}.paths"), fmt_count(m.path_diversity as u64));
        t.quote(format!("{key}.optical"), fmt_count(m.optical));
        t.quote(format!("{key}.links"), fmt_count(m.links));
        if let Topology::Dragonfly(d) = &topo {
            t.quote(format!("{key}.groups"), fmt_count(d.g));
        }
        data.insert(key.into(), metrics_json(&topo, &m));
    }
    t.table("", table);
    t.heading("Cost and power parameters");
    t.table("", cost_table(&c));
    t.data = serde_json::Value::Object(data);
    t
}

/// The sizes `check` builds explicitly: every family, several shapes, small enough for
/// all-source BFS in a few seconds.
fn check_cases() -> Vec<Topology> {
    let specs = [
        "clos:k=8,tiers=1",
        "fat-tree:k=4",
        "fat-tree:k=8",
        "fat-tree:k=16",
        "clos:k=8,tiers=2,pods=4",
        "clos:k=8,tiers=3,oversub=3:1/1:1",
        "clos:k=8,tiers=3,oversub=1:1/3:1,pods=4",
        "clos:k=4,tiers=4",
        "rail:k=8,gpus=4,units=2",
        "rail:k=16,gpus=8,units=2",
        "dragonfly:p=2,a=4,h=2",
        "dragonfly:p=4,a=8,h=4",
        "dragonfly:p=2,a=4,h=2,g=4",
        "dragonfly:p=3,a=5,h=3,g=7",
        "torus:k=8,n=3",
        "torus:k=5,n=3",
        "torus:k=2,n=6",
        "mesh:k=6,n=2",
        "mesh:k=4,n=3",
    ];
    specs.iter().map(|s| parse(s).expect("check cases are valid")).collect()
}

fn check() -> Result<Transcript> {
    let mut t = Transcript::analytic();
    t.heading("Closed form == explicit graph");
    t.text(
        "Each topology is built node by node; distances and path counts come from breadth-first search\n\
         from every endpoint (dragonfly: a second BFS layer after the one global link minimal routing allows),\n\
         bisection from max-flow across the stated halves, the ring from routing every ring step.",
    );
    let mut table = Table::new(["topology", "endpoints", "diameter", "avg hops", "paths", "bisection", "ring hops", "ring shared", "closed == explicit"]);
    let mut rows = Vec::new();
    let mut wrong = 0;
    for topo in check_cases() {
        let closed = metrics(&topo);
        let g = crate::build::build(&topo);
        let explicit = measure_graph(&topo, &g, Sources::All, true).metrics;
        let mut diff = differences(&closed, &explicit);
        let ring = ring_mapping_explicit(&topo, &g);
        let ring_closed = ring_mapping(&topo);
        if ring != ring_closed {
            diff.push("ring");
        }
        wrong += diff.len();
        table.push([
            topo.label(),
            fmt_count(explicit.endpoints),
            explicit.diameter.to_string(),
            format!("{:.4}", explicit.avg_hops),
            fmt_count(explicit.path_diversity as u64),
            opt_count(explicit.bisection),
            ring.max_hops.to_string(),
            ring.shared.to_string(),
            if diff.is_empty() { "yes".to_string() } else { format!("NO: {}", diff.join(", ")) },
        ]);
        rows.push(json!({"topology": topo.label(), "differences": diff, "closed": metrics_json(&topo, &closed), "explicit": metrics_json(&topo, &explicit)}));
    }
    t.table("", table);
    t.quote("cases", rows.len().to_string());
    t.quote("mismatches", wrong.to_string());
    t.data = json!({"cases": rows, "mismatches": wrong});
    if wrong > 0 {
        return Err(Failure(format!("{wrong} closed-form metric(s) differ from the explicit graph:\n{}", t.render_text())).into());
    }
    Ok(t)
}

fn log_plot(title: &str, y: &str) -> LinePlot {
    LinePlot::new(title, "endpoints N", y).log_x()
}

fn sweep_transcript(costs: &CostParams) -> Transcript {
    let points = sweep::sweep_with(1 << 20, costs, &NetParams::default());
    let mut t = Transcript::analytic();
    t.heading("Cost and power parameters");
    t.table("", cost_table(costs));
    t.heading("Each family sized for N endpoints (closed forms)");
    t.text(
        "fat-tree: non-blocking folded Clos of radix-64 switches, fewest tiers, pods rounded up to a power of two.\n\
         dragonfly: balanced a = 2p = 2h, smallest p whose radix 4p-1 <= 64 reaches N, ceil(N / 2p^2) groups.\n\
         3D torus: k = cube root of N rounded up to even; 4x4x4 cubes, electrical inside, optical between.\n\
         Cost per endpoint divides by the endpoints built (>= N).",
    );
    let mut table = Table::new(["N", "family", "built as", "endpoints", "diameter", "bisect/full", "USD/endpoint", "W/endpoint"]);
    let mut data = Vec::new();
    for p in &points {
        table.push([
            fmt_count(p.n),
            p.family.name().to_string(),
            p.topology.label(),
            fmt_count(p.metrics.endpoints),
            p.metrics.diameter.to_string(),
            p.metrics.bisection_fraction().map_or("-".into(), |f| format!("{f:.3}")),
            format!("{:.0}", p.usd_per_endpoint),
            format!("{:.1}", p.watts_per_endpoint),
        ]);
        data.push(json!({"n": p.n, "family": p.family.key(), "topology": p.topology.label(), "endpoints": p.metrics.endpoints,
            "usd_per_endpoint": p.usd_per_endpoint, "watts_per_endpoint": p.watts_per_endpoint, "bisection_fraction": p.metrics.bisection_fraction()}));
        let key = format!("{}.{}", p.family.key(), p.n);
        t.quote(format!("{key}.usd"), format!("{:.0}", p.usd_per_endpoint));
        t.quote(format!("{key}.bisect"), p.metrics.bisection_fraction().map_or("-".into(), |f| format!("{f:.2}")));
        t.quote(format!("{key}.built"), p.topology.label());
    }
    t.table("", table);
    let mut cost_plot = log_plot("Network cost per endpoint", "USD per endpoint");
    let mut bis_plot = log_plot("Bisection per endpoint (1 = full)", "bisection / (N/2)").log_y().hline(1.0 / 7.0, "a 7:1 oversubscribed tier");
    for f in Family::ALL {
        let pts: Vec<&sweep::Point> = points.iter().filter(|p| p.family == f).collect();
        cost_plot = cost_plot.series(Series::new(f.name(), pts.iter().map(|p| (p.n as f64, p.usd_per_endpoint)).collect()));
        bis_plot = bis_plot.series(Series::new(
            f.name(),
            pts.iter().filter_map(|p| p.metrics.bisection_fraction().map(|b| (p.n as f64, b))).collect(),
        ));
    }
    t.plot("cost", cost_plot.to_svg());
    t.plot("bisection", bis_plot.to_svg());
    t.data = json!({"points": data});
    t
}

fn collectives() -> Transcript {
    let net = NetParams::default();
    let points = sweep::sweep(1 << 17);
    let mut t = Transcript::analytic();
    t.heading("Network parameters");
    let mut p = Table::new(["parameter", "value", "source"]).with_align(vec![Align::Left, Align::Right, Align::Left]);
    p.push(["link bandwidth per direction".to_string(), fmt_bandwidth(net.link), "400 Gb/s InfiniBand NDR port".into()]);
    p.push(["start-up alpha per message".to_string(), fmt_time(net.alpha), "upper end of healthy InfiniBand (1-2 us)".into()]);
    p.push(["added per link crossed".to_string(), fmt_time(net.per_hop), "ASSUMPTION (switch traversal + cable)".into()]);
    p.push(["reduction throughput".to_string(), fmt_bandwidth(net.reduce), "ASSUMPTION (GPU-class memory bandwidth)".into()]);
    p.push(["allreduce buffer".to_string(), fmt_bytes(ALLREDUCE_BYTES), "ASSUMPTION (reference gradient)".into()]);
    p.push(["all-to-all bytes sent per rank".to_string(), fmt_bytes(ALLTOALL_BYTES), "ASSUMPTION".into()]);
    t.table("", p);
    t.heading("Collective time on each family (D01 ring and pairwise formulas, topology-adjusted)");
    t.text(
        "allreduce: D01 ring with alpha + (longest ring step in links) x per-link latency, link shared by overlapping steps.\n\
         all-to-all: D01 pairwise at the average hop count; bandwidth term = max(injection, bisection), where\n\
         N/2 x n/2 bytes must cross the bisection each way.",
    );
    let mut table = Table::new(["N", "family", "ring hops", "allreduce", "dominant", "all-to-all", "a2a bound"]);
    let mut data = Vec::new();
    for pt in &points {
        let ring = ring_mapping(&pt.topology);
        let inj = ALLTOALL_BYTES * (pt.n - 1) as f64 / pt.n as f64 / net.link;
        let bis = crate::model::alltoall_bisection_time(&pt.metrics, &net, ALLTOALL_BYTES);
        let dominant = crate::model::allreduce_ring(&pt.topology, &net, ALLREDUCE_BYTES, pt.n).dominant();
        table.push([
            fmt_count(pt.n),
            pt.family.name().into(),
            ring.max_hops.to_string(),
            fmt_time(pt.allreduce),
            dominant.into(),
            fmt_time(pt.alltoall),
            if bis > inj { "bisection".into() } else { "injection".to_string() },
        ]);
        let key = format!("{}.{}", pt.family.key(), pt.n);
        t.quote(format!("{key}.allreduce"), fmt_time(pt.allreduce));
        t.quote(format!("{key}.alltoall"), fmt_time(pt.alltoall));
        t.quote(format!("{key}.a2a_bisection"), fmt_time(bis));
        t.quote(format!("{key}.a2a_injection"), fmt_time(inj));
        t.quote(format!("{key}.ring_hops"), ring.max_hops.to_string());
        data.push(json!({"n": pt.n, "family": pt.family.key(), "allreduce_s": pt.allreduce, "alltoall_s": pt.alltoall, "ring_hops": ring.max_hops}));
    }
    t.table("", table);
    let mut ar = log_plot("Ring allreduce of 1 GiB", "seconds").log_y();
    let mut a2a = log_plot("All-to-all, 1 GiB sent per rank", "seconds").log_y();
    for f in Family::ALL {
        let pts: Vec<&sweep::Point> = points.iter().filter(|p| p.family == f).collect();
        ar = ar.series(Series::new(f.name(), pts.iter().map(|p| (p.n as f64, p.allreduce)).collect()));
        a2a = a2a.series(Series::new(f.name(), pts.iter().map(|p| (p.n as f64, p.alltoall)).collect()));
    }
    t.plot("allreduce", ar.to_svg());
    t.plot("alltoall", a2a.to_svg());

    t.heading("Ring order on a dragonfly (routed on the explicit graph)");
    {
        let topo = Topology::Dragonfly(Dragonfly::max_groups(4, 8, 4));
        let g = crate::build::build(&topo);
        let n = metrics(&topo).endpoints;
        let index_order: Vec<u32> = (0..n as u32).collect();
        let mut rt = Table::new(["ring order", "hops per step", "steps sharing a link", "allreduce 1 GiB"]);
        for (key, name, order) in [
            ("index", "endpoint index order", index_order),
            ("aware", "enter and leave each group at its global-link routers", crate::build::ring_order(&topo)),
        ] {
            let ring = crate::measure::ring_mapping_of_order(&topo, &g, &order);
            let m = d01_scaling::cost::Machine::new(
                net.alpha + ring.max_hops as f64 * net.per_hop,
                net.link / ring.shared as f64,
                net.reduce,
            );
            let time = d01_scaling::collectives::Allreduce::Ring.cost(&m, ALLREDUCE_BYTES, n).total();
            rt.push([name.to_string(), ring.max_hops.to_string(), ring.shared.to_string(), fmt_time(time)]);
            t.quote(format!("ring_{key}.hops"), ring.max_hops.to_string());
            t.quote(format!("ring_{key}.shared"), ring.shared.to_string());
            t.quote(format!("ring_{key}.time"), fmt_time(time));
        }
        t.table(format!("{} ({} endpoints)", topo.label(), fmt_count(n)), rt);
    }

    t.heading("Dragonfly: minimal vs Valiant routing (bandwidth-limited time, 1 GiB per endpoint)");
    t.text(
        "shift: every endpoint of group i sends to group i+1 (the adversarial pattern for minimal routing).\n\
         uniform: every endpoint spreads its bytes evenly over all groups.",
    );
    let mut dt = Table::new(["dragonfly", "endpoints", "links/pair", "shift minimal", "shift Valiant", "uniform minimal", "uniform Valiant"]);
    let mut ddata = Vec::new();
    for (key, d) in [
        ("df_4_8_4", Dragonfly::max_groups(4, 8, 4)),
        ("df_8_16_8", Dragonfly::max_groups(8, 16, 8)),
        ("df_16_32_16", Dragonfly::max_groups(16, 32, 16)),
        ("df_16_32_16_g64", Dragonfly { p: 16, a: 32, h: 16, g: 64 }),
    ] {
        let r = dragonfly_routing(&d, &net, ALLTOALL_BYTES);
        let n = d.p * d.a * d.g;
        dt.push([
            Topology::Dragonfly(d.clone()).label(),
            fmt_count(n),
            d.links_per_pair().to_string(),
            fmt_time(r.shift_minimal),
            fmt_time(r.shift_valiant),
            fmt_time(r.uniform_minimal),
            fmt_time(r.uniform_valiant),
        ]);
        t.quote(format!("{key}.shift_minimal"), fmt_time(r.shift_minimal));
        t.quote(format!("{key}.shift_valiant"), fmt_time(r.shift_valiant));
        t.quote(format!("{key}.uniform_minimal"), fmt_time(r.uniform_minimal));
        t.quote(format!("{key}.uniform_valiant"), fmt_time(r.uniform_valiant));
        t.quote(format!("{key}.slowdown"), format!("{:.0}", r.shift_minimal / r.shift_valiant));
        ddata.push(json!({"dragonfly": key, "shift_minimal_s": r.shift_minimal, "shift_valiant_s": r.shift_valiant,
            "uniform_minimal_s": r.uniform_minimal, "uniform_valiant_s": r.uniform_valiant}));
    }
    t.table("", dt);
    t.quote("inject_time", fmt_time(ALLTOALL_BYTES / net.link));
    t.data = json!({"points": data, "dragonfly_routing": ddata});
    t
}

fn drawings() -> Transcript {
    let mut t = Transcript::analytic();
    t.heading("Drawings of small explicit graphs");
    let mut table = Table::new(["drawing", "topology", "endpoints", "switches", "links"]);
    for (name, spec, title) in [
        ("fat_tree", "fat-tree:k=4", "k = 4 fat-tree: 16 hosts, 3 tiers of switches"),
        ("rail", "rail:k=8,gpus=4,units=2", "rail-optimised: 4-GPU servers, 2 scalable units"),
        ("dragonfly", "dragonfly:p=2,a=4,h=1", "dragonfly p = 2, a = 4, h = 1: a*h+1 groups"),
        ("torus", "torus:k=4,n=2,cube=2", "4 x 4 torus, folded; 2 x 2 cubes cabled electrically"),
    ] {
        let topo = parse(spec).expect("drawing specs are valid");
        let m = metrics(&topo);
        table.push([name.to_string(), topo.label(), fmt_count(m.endpoints), fmt_count(m.switches), fmt_count(m.links)]);
        t.quote(format!("{name}.endpoints"), fmt_count(m.endpoints));
        t.quote(format!("{name}.switches"), fmt_count(m.switches));
        t.plot(name, crate::draw::draw(&topo, title));
    }
    t.table("", table);
    t.data = json!({"drawings": ["fat_tree", "rail", "dragonfly", "torus"]});
    t
}

fn boundaries() -> Transcript {
    let keyed = sweep::keyed_boundaries();
    let rows: Vec<lab_core::Boundary> = keyed.iter().map(|(_, b)| b.clone()).collect();
    let mut t = Transcript::analytic();
    t.heading("D05: what breaks first (closed forms, radix-64 parts)");
    t.text(
        "cheapest = lowest cost per endpoint among the families whose time for the reference message\n\
         is within 1.5x of the fastest family at that size (default prices: ASSUMPTIONS, see d05/families).",
    );
    t.table("", lab_core::boundary::table(&rows));
    for (key, r) in &keyed {
        t.quote(format!("{key}.scale"), r.scale.clone());
        t.quote(format!("{key}.evidence"), r.evidence.clone());
    }
    t.data = serde_json::to_value(&rows).expect("boundaries serialise");
    t
}

fn one(topo: &Topology, explicit: bool) -> Result<Transcript> {
    let c = CostParams::default();
    let m = metrics(topo);
    let mut t = Transcript::analytic();
    t.heading(format!("{} ({})", topo.label(), topo.family()));
    let mut table = Table::new(metric_columns());
    table.push(metric_row(topo, &m, &c));
    t.table("closed form", table);
    if explicit {
        let n = m.endpoints;
        if n > 2_000_000 {
            bail!("{} has {} endpoints; --explicit builds at most 2,000,000", topo.label(), fmt_count(n));
        }
        let e = measure(topo, Sources::Representatives, n <= 200_000).metrics;
        let mut table = Table::new(metric_columns());
        table.push(metric_row(topo, &e, &c));
        t.table("explicit graph (BFS from representative endpoints)", table);
        let diff = differences(&m, &e);
        if !diff.is_empty() {
            return Err(Failure(format!("closed form and explicit graph differ in: {}", diff.join(", "))).into());
        }
        t.text("closed form == explicit graph");
    }
    t.data = metrics_json(topo, &m);
    Ok(t)
}

fn bench(quick: bool) -> Result<Transcript> {
    let (fat, fly) = if quick {
        (Topology::Clos(Clos::fat_tree(16)), Topology::Dragonfly(Dragonfly::max_groups(4, 8, 4)))
    } else {
        (Topology::Clos(Clos::fat_tree(64)), Topology::Dragonfly(Dragonfly::max_groups(13, 26, 13)))
    };
    let mut rows = Vec::new();
    let mut table = Table::new(["what", "endpoints", "nodes", "links", "BFS sources", "build", "measure", "closed == explicit"]);
    let mut quotes = Vec::new();
    for (key, topo) in [("fat_tree", &fat), ("dragonfly", &fly)] {
        eprintln!("d05 bench: building {}", topo.label());
        let t0 = Instant::now();
        let g = crate::build::build(topo);
        let built = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let measured = measure_graph(topo, &g, Sources::Representatives, true);
        let measure_s = t1.elapsed().as_secs_f64();
        let diff = differences(&metrics(topo), &measured.metrics);
        table.push([
            topo.label(),
            fmt_count(measured.metrics.endpoints),
            fmt_count(g.nodes() as u64),
            fmt_count(g.edges.len() as u64),
            measured.sources.to_string(),
            fmt_time(built),
            fmt_time(measure_s),
            if diff.is_empty() { "yes".into() } else { format!("NO: {}", diff.join(", ")) },
        ]);
        quotes.push((format!("{key}.total"), fmt_time(built + measure_s)));
        quotes.push((format!("{key}.label"), topo.label()));
        quotes.push((format!("{key}.endpoints"), fmt_count(measured.metrics.endpoints)));
        rows.push(json!({"topology": topo.label(), "endpoints": measured.metrics.endpoints, "build_s": built,
            "measure_s": measure_s, "total_s": built + measure_s, "mismatches": diff.len()}));
    }
    let t2 = Instant::now();
    let points = sweep::sweep(1 << 20);
    let sweep_s = t2.elapsed().as_secs_f64();
    let max_n = points.iter().map(|p| p.metrics.endpoints).max().unwrap_or(0);
    let mut t = Transcript::measured(Provenance {
        summary: lab_core::host::summary(),
        facts: lab_core::host::base_facts(),
        tolerance: "times vary with the host; targets: each explicit build + measure < 10 s, sweep < 1 s (release)".into(),
        invariants: vec![
            "every explicit metric == its closed form (mismatches == 0)".into(),
            "the sweep reaches 1,000,000 endpoints".into(),
        ],
    });
    t.heading("Explicit graphs: build, BFS from representative endpoints, max-flow bisection");
    t.table("", table);
    t.heading("Closed-form sweep");
    t.text(format!(
        "{} designs (3 families x sizes 8 .. 1,048,576): {}; largest built {}\n",
        points.len(),
        fmt_time(sweep_s),
        fmt_count(max_n)
    ));
    for (k, v) in quotes {
        t.quote(k, v);
    }
    t.quote("sweep", fmt_time(sweep_s));
    t.quote("sweep_designs", points.len().to_string());
    t.data = json!({"explicit": rows, "sweep_s": sweep_s, "sweep_designs": points.len(), "sweep_max_endpoints": max_n, "quick": quick});
    Ok(t)
}

fn check_bench(data: &serde_json::Value) -> Result<()> {
    let rows = data["explicit"].as_array().ok_or_else(|| anyhow::anyhow!("no explicit rows"))?;
    if rows.is_empty() {
        bail!("no explicit graphs were measured");
    }
    for r in rows {
        if r["mismatches"].as_u64() != Some(0) {
            bail!("{}: explicit graph differs from the closed form", r["topology"]);
        }
    }
    let quick = data["quick"].as_bool().unwrap_or(false);
    if !quick && data["sweep_max_endpoints"].as_u64().unwrap_or(0) < 1_000_000 {
        bail!("the sweep did not reach 1,000,000 endpoints");
    }
    Ok(())
}
