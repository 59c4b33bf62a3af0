//! The same metrics as [`crate::closed`], measured on the explicit graph: counts by walking the
//! node and edge lists, distances and path counts by breadth-first search, bisection by
//! max-flow, ring mappings by routing every ring step.

use crate::build::{bisection_sides, build, ring_order};
use crate::closed::Metrics;
use crate::graph::{Graph, NodeKind};
use crate::spec::Topology;

/// Which sources the breadth-first searches start from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sources {
    /// Every endpoint: exact for any graph.
    All,
    /// One endpoint per symmetry class: exact where the topology's symmetries map every
    /// endpoint onto one of them (every host of a Clos or rail fabric, every torus node,
    /// a dragonfly endpoint on each router of group 0), and a sample otherwise (mesh).
    Representatives,
}

/// Minimal routing: at most one global link on a dragonfly; unrestricted elsewhere.
pub fn global_budget(t: &Topology) -> Option<u32> {
    matches!(t, Topology::Dragonfly(_)).then_some(1)
}

fn representatives(t: &Topology, endpoints: usize) -> Vec<u32> {
    match t {
        Topology::Dragonfly(d) => (0..d.a).map(|r| (r * d.p) as u32).collect(),
        Topology::Torus(t) if !t.wrap => {
            // A mesh is not vertex-transitive: sample a corner, a centre and a few between.
            let step = (endpoints / 7).max(1);
            (0..endpoints).step_by(step).map(|v| v as u32).collect()
        }
        // Every endpoint is alike: 16 spread-out sources give the exact averages (and a check).
        _ => {
            let step = endpoints.div_ceil(16).max(1);
            (0..endpoints).step_by(step).map(|v| v as u32).collect()
        }
    }
}

pub struct Measured {
    pub metrics: Metrics,
    /// How many BFS sources were used.
    pub sources: usize,
}

pub fn measure(t: &Topology, sources: Sources, with_bisection: bool) -> Measured {
    let g = build(t);
    measure_graph(t, &g, sources, with_bisection)
}

pub fn measure_graph(t: &Topology, g: &Graph, sources: Sources, with_bisection: bool) -> Measured {
    let eps = g.endpoints();
    let n = eps.len();
    let network: Vec<_> = g.edges.iter().filter(|e| e.2.is_network()).collect();
    let optical = network.iter().filter(|e| e.2.is_optical()).count() as u64;
    let switches = g.kinds.iter().filter(|&&k| k == NodeKind::Switch).count() as u64;
    let radix_kind = if switches == 0 { NodeKind::Endpoint } else { NodeKind::Switch };
    let srcs: Vec<u32> = match sources {
        Sources::All => eps.clone(),
        Sources::Representatives => representatives(t, n),
    };
    let budget = global_budget(t);
    let (mut total, mut diameter, mut fewest) = (0f64, 0u32, f64::INFINITY);
    for &s in &srcs {
        let b = g.bfs(s, budget);
        for &v in &eps {
            if v == s {
                continue;
            }
            let d = b.dist[v as usize];
            total += d as f64;
            if d > diameter {
                diameter = d;
                fewest = b.paths[v as usize];
            } else if d == diameter {
                fewest = fewest.min(b.paths[v as usize]);
            }
        }
    }
    let bisection = with_bisection.then(|| g.min_cut(&bisection_sides(t)));
    Measured {
        metrics: Metrics {
            endpoints: n as u64,
            switches,
            links: network.len() as u64,
            electrical: network.len() as u64 - optical,
            optical,
            radix_used: g.max_network_degree(radix_kind) as u64,
            diameter: diameter as u64,
            avg_hops: if n > 1 { total / (srcs.len() as f64 * (n - 1) as f64) } else { 0.0 },
            path_diversity: if n > 1 { fewest } else { 0.0 },
            bisection,
        },
        sources: srcs.len(),
    }
}

/// Which fields of two metric sets differ (averages compared to 1e-9 relative).
pub fn differences(closed: &Metrics, explicit: &Metrics) -> Vec<&'static str> {
    let mut out = Vec::new();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    if closed.endpoints != explicit.endpoints { out.push("endpoints") }
    if closed.switches != explicit.switches { out.push("switches") }
    if closed.links != explicit.links { out.push("links") }
    if closed.electrical != explicit.electrical { out.push("electrical") }
    if closed.optical != explicit.optical { out.push("optical") }
    if closed.radix_used != explicit.radix_used { out.push("radix used") }
    if closed.diameter != explicit.diameter { out.push("diameter") }
    if !close(closed.avg_hops, explicit.avg_hops) { out.push("average hops") }
    if !close(closed.path_diversity, explicit.path_diversity) { out.push("path diversity") }
    if let (Some(a), Some(b)) = (closed.bisection, explicit.bisection)
        && a != b
    {
        out.push("bisection")
    }
    out
}

/// A ring allreduce laid on the topology: the most links any ring step crosses, and the most
/// ring steps that share one directed link (each step routed by [`Graph::route`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingMapping {
    pub max_hops: u64,
    pub shared: u64,
}

pub fn ring_mapping_explicit(t: &Topology, g: &Graph) -> RingMapping {
    ring_mapping_of_order(t, g, &ring_order(t))
}

/// The same for any order of the endpoints.
pub fn ring_mapping_of_order(t: &Topology, g: &Graph, order: &[u32]) -> RingMapping {
    let budget = global_budget(t);
    let mut load = std::collections::BTreeMap::<(u32, u32), u64>::new();
    let mut max_hops = 0;
    for i in 0..order.len() {
        let (a, b) = (order[i], order[(i + 1) % order.len()]);
        if a == b {
            continue;
        }
        let path = g.route(a, b, budget);
        max_hops = max_hops.max(path.len() as u64);
        for hop in path {
            *load.entry(hop).or_default() += 1;
        }
    }
    RingMapping { max_hops, shared: load.values().copied().max().unwrap_or(0) }
}
