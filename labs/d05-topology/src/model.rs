//! Cost, power and collective time on a topology. Collective costs come from D01's alpha-beta
//! model ([`d01_scaling::collectives`]); this module only decides what the topology does to
//! alpha (hops) and beta (links shared, bisection).

use d01_scaling::collectives::{Allreduce, Alltoall};
use d01_scaling::cost::Machine;

use crate::closed::Metrics;
use crate::measure::RingMapping;
use crate::spec::Topology;

/// Prices and power. None of these has a public source we can cite; every default is an
/// ASSUMPTION, chosen as a round order of magnitude for 400 Gb/s-class gear in 2024-2026.
#[derive(Clone, Debug, PartialEq)]
pub struct CostParams {
    pub port_usd: f64,
    pub electrical_usd: f64,
    /// An optical link: two transceivers and the fibre.
    pub optical_usd: f64,
    pub port_watts: f64,
    /// Both transceivers of an optical link.
    pub optical_watts: f64,
}

impl Default for CostParams {
    fn default() -> Self {
        CostParams { port_usd: 700.0, electrical_usd: 150.0, optical_usd: 1_400.0, port_watts: 12.0, optical_watts: 24.0 }
    }
}

impl CostParams {
    /// (name, value, unit) rows for the transcript, every one marked as an assumption.
    pub fn rows(&self) -> Vec<(&'static str, String, &'static str)> {
        vec![
            ("switch or router port", format!("{:.0}", self.port_usd), "USD"),
            ("electrical cable (in rack or cabinet)", format!("{:.0}", self.electrical_usd), "USD"),
            ("optical link (2 transceivers + fibre)", format!("{:.0}", self.optical_usd), "USD"),
            ("switch port power", format!("{:.0}", self.port_watts), "W"),
            ("optical link power (2 transceivers)", format!("{:.0}", self.optical_watts), "W"),
        ]
    }
}

pub struct Cost {
    pub usd: f64,
    pub watts: f64,
}

// ANCHOR: cost
/// The network's cost and power: ports plus cables. The endpoint's own NIC is left out, being
/// the same in every family; a torus node's router ports are priced like switch ports.
pub fn cost(t: &Topology, m: &Metrics, c: &CostParams) -> Cost {
    let ports = m.ports(t) as f64;
    Cost {
        usd: ports * c.port_usd + m.electrical as f64 * c.electrical_usd + m.optical as f64 * c.optical_usd,
        watts: ports * c.port_watts + m.optical as f64 * c.optical_watts,
    }
}
// ANCHOR_END: cost

/// The network a collective runs on.
#[derive(Clone, Debug, PartialEq)]
pub struct NetParams {
    /// Per-message software and NIC start-up (seconds).
    pub alpha: f64,
    /// Added per link crossed: a switch traversal plus cable flight (seconds).
    pub per_hop: f64,
    /// Bytes per second per link per direction.
    pub link: f64,
    /// Bytes per second of reduction arithmetic.
    pub reduce: f64,
}

impl Default for NetParams {
    fn default() -> Self {
        // 400 Gb/s per port (InfiniBand NDR); 2 us start-up (healthy InfiniBand is about 1-2 us);
        // per hop and reduction speed: ASSUMPTIONS (see the transcript).
        NetParams { alpha: 2e-6, per_hop: 250e-9, link: 50e9, reduce: 1e12 }
    }
}

impl NetParams {
    fn machine(&self, hops: u64, shared: u64) -> Machine {
        Machine::new(self.alpha + hops as f64 * self.per_hop, self.link / shared.max(1) as f64, self.reduce)
    }
}

// ANCHOR: ring_mapping
/// Where the ring of [`crate::build::ring_order`] runs, in closed form.
pub fn ring_mapping(t: &Topology) -> RingMapping {
    if crate::closed::endpoints(t) <= 1 {
        return RingMapping { max_hops: 0, shared: 0 };
    }
    match t {
        // In index order a step leaves its leaf only at a leaf boundary and climbs only as high
        // as the two endpoints' smallest common pod: 2L links at a top-level pod boundary.
        // Every pod sends exactly one step out and takes one in, so no link carries two.
        Topology::Clos(c) => RingMapping { max_hops: 2 * c.tiers as u64, shared: 1 },
        Topology::Rail(_) => RingMapping { max_hops: 4, shared: 1 },
        // The Gray code moves one link per step; for odd k (n >= 2) the closing step wraps back
        // in every dimension, n links on wrap-around links no other step uses.
        Topology::Torus(t) if t.wrap => {
            let hops = if t.k % 2 == 0 || t.n == 1 { 1 } else { t.n as u64 };
            RingMapping { max_hops: hops, shared: 1 }
        }
        // A mesh has no wrap-around: the closing step walks back from the Gray code's last
        // node, (k-1, 0, ..) for even k and (k-1, .., k-1) for odd k, against the ring's direction.
        Topology::Torus(t) => {
            let hops = if t.k % 2 == 0 { t.k - 1 } else { t.n as u64 * (t.k - 1) };
            RingMapping { max_hops: hops, shared: 1 }
        }
        // Inside a group a step is one local link (3 links endpoint to endpoint). Between groups
        // the step runs from the group's last router to the next group's entry router over the
        // best of the m links to offset 1: 3 links, plus a local link at either end if needed.
        Topology::Dragonfly(d) => {
            let (enter, leave) = crate::build::dragonfly_ring_routers(d);
            let within = if d.a >= 2 { 3 } else { 2 };
            let last = if leave != enter || d.a == 1 {
                leave
            } else if enter != d.a - 1 {
                d.a - 1
            } else {
                d.a - 2
            };
            let between = (0..d.links_per_pair())
                .map(|c| {
                    let (mine, theirs) = (c * (d.g - 1), c * (d.g - 1) + d.g - 2);
                    3 + (d.port_router(mine) != last) as u64 + (d.port_router(theirs) != enter) as u64
                })
                .min()
                .unwrap_or(0);
            RingMapping { max_hops: within.max(between), shared: 1 }
        }
    }
}
// ANCHOR_END: ring_mapping

// ANCHOR: collectives
/// Ring allreduce of `bytes` on `ranks` endpoints: D01's ring formula on a machine whose
/// start-up carries the longest step's hops and whose link is shared by overlapping steps.
pub fn allreduce_ring(t: &Topology, net: &NetParams, bytes: f64, ranks: u64) -> d01_scaling::cost::Cost {
    let ring = ring_mapping(t);
    Allreduce::Ring.cost(&net.machine(ring.max_hops, ring.shared), bytes, ranks)
}

/// All-to-all of `bytes` sent per rank on `ranks` endpoints: D01's pairwise exchange at the
/// average hop count, its bandwidth term replaced by the bisection's when that is slower.
/// Half of each rank's bytes cross the bisection: (ranks/2)(bytes/2) each way over
/// f * ranks/2 links, where f is the bisection per endpoint (1 = full), so the bisection
/// needs bytes / (2 f B) whatever the size.
pub fn alltoall(m: &Metrics, net: &NetParams, bytes: f64, ranks: u64) -> f64 {
    let hops = m.avg_hops.round() as u64;
    let c = Alltoall::Pairwise.cost(&net.machine(hops, 1), bytes, ranks);
    c.latency + c.bandwidth.max(alltoall_bisection_time(m, net, bytes))
}

pub fn alltoall_bisection_time(m: &Metrics, net: &NetParams, bytes: f64) -> f64 {
    m.bisection_fraction().map_or(0.0, |f| bytes / (2.0 * f * net.link))
}
// ANCHOR_END: collectives

/// A dragonfly exchange in which every endpoint of group i sends `bytes` to group i+1
/// (adversarial for minimal routing), and uniform random traffic, each under minimal and
/// Valiant routing: bandwidth-limited time in seconds.
pub struct DragonflyRouting {
    pub shift_minimal: f64,
    pub shift_valiant: f64,
    pub uniform_minimal: f64,
    pub uniform_valiant: f64,
}

// ANCHOR: valiant
pub fn dragonfly_routing(d: &crate::spec::Dragonfly, net: &NetParams, bytes: f64) -> DragonflyRouting {
    let inject = bytes / net.link;
    let group_bytes = (d.p * d.a) as f64 * bytes;
    let m = d.links_per_pair().max(1) as f64;
    let global_ports = (d.a * d.h) as f64;
    // Minimal: a group's whole output squeezes through the m links to the next group.
    let shift_minimal = inject.max(group_bytes / (m * net.link));
    // Valiant: bounce through a random group, so every byte crosses two global links but the
    // load spreads over all a*h global ports of the group.
    let shift_valiant = inject.max(2.0 * group_bytes / (global_ports * net.link));
    // Uniform: all but 1/g of a group's traffic leaves it, spread over its used global ports.
    let leaving = group_bytes * (d.g - 1) as f64 / d.g as f64;
    let used = (m * (d.g - 1) as f64).max(1.0);
    let uniform_minimal = inject.max(leaving / (used * net.link));
    let uniform_valiant = inject.max(2.0 * leaving / (used * net.link));
    DragonflyRouting { shift_minimal, shift_valiant, uniform_minimal, uniform_valiant }
}
// ANCHOR_END: valiant
