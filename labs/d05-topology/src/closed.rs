//! Closed forms for every metric of every topology: arithmetic on the parameters, no graph, so
//! they run at a million endpoints and beyond. The tests check each one against the explicit
//! graph of [`crate::build`] measured by [`crate::measure`].
//!
//! Conventions. Hop counts are links between two endpoints, injection links included; torus
//! nodes are their own routers, so a torus hop is one torus link. Averages are over ordered
//! pairs of distinct endpoints. Dragonfly distances use minimal routing (at most one global
//! link). Path diversity is the number of shortest paths between two endpoints at the
//! diameter (the fewest, if such pairs differ). Bisection is in links, across the halves of
//! [`crate::build::bisection_sides`]; for Clos, rail and even-k torus those halves give the
//! exact minimum bisection (checked by exhaustive search on small graphs).

use crate::spec::{Clos, Dragonfly, Rail, Topology, Torus};

#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    pub endpoints: u64,
    /// Network switches (dragonfly routers included; torus routers are inside the nodes).
    pub switches: u64,
    /// Network links = cables (NVLink inside a server is neither).
    pub links: u64,
    pub electrical: u64,
    pub optical: u64,
    /// Network ports used on the busiest switch or router (torus: per node).
    pub radix_used: u64,
    pub diameter: u64,
    pub avg_hops: f64,
    pub path_diversity: f64,
    /// Links across the stated halves; None where the closed form is not given (odd-k torus).
    pub bisection: Option<u64>,
}

impl Metrics {
    /// Switch or router ports in use: both ends of a switch-to-switch link, the switch end of a
    /// host link. A torus node's router ports count at both ends.
    pub fn ports(&self, t: &Topology) -> u64 {
        match t {
            Topology::Torus(_) => 2 * self.links,
            _ => self.links + (self.links - self.endpoints),
        }
    }

    /// Bisection links per endpoint in one half: 1.0 is full bisection (every endpoint in one
    /// half can send to the other half at line rate at the same time).
    pub fn bisection_fraction(&self) -> Option<f64> {
        self.bisection.map(|b| b as f64 / (self.endpoints as f64 / 2.0))
    }
}

pub fn endpoints(t: &Topology) -> u64 {
    match t {
        Topology::Clos(c) => {
            if c.tiers == 1 { c.k } else { c.pods * c.down.iter().product::<u64>() }
        }
        Topology::Rail(r) => r.leaves() * r.servers_per_unit(),
        Topology::Dragonfly(d) => d.p * d.a * d.g,
        Topology::Torus(t) => t.k.pow(t.n),
    }
}

pub fn metrics(t: &Topology) -> Metrics {
    match t {
        Topology::Clos(c) => clos(c),
        Topology::Rail(r) => rail(r),
        Topology::Dragonfly(d) => dragonfly(d),
        Topology::Torus(t) => torus(t),
    }
}

// ANCHOR: clos_closed
fn clos(c: &Clos) -> Metrics {
    let k = c.k;
    if c.tiers == 1 {
        let n = k;
        return Metrics {
            endpoints: n, switches: 1, links: n, electrical: n, optical: 0, radix_used: k,
            diameter: 2, avg_hops: 2.0, path_diversity: 1.0, bisection: Some(n / 2),
        };
    }
    let top = c.tiers as usize;
    // For a pod of t tiers: endpoints e, switches in its top layer n_top, all switches w,
    // switch-to-switch links inside it, and uplinks leaving it.
    let (mut e, mut n_top, mut w, mut inside) = (c.down[0], 1u64, 1u64, 0u64);
    let mut uplinks = n_top * c.up(1);
    let mut pod_endpoints = vec![1, e]; // E_0 = 1 (the endpoint itself), E_1, ...
    let mut cut_per_endpoint = vec![1.0, uplinks as f64 / e as f64];
    for t in 2..top {
        let d = c.down[t - 1];
        inside = d * (inside + uplinks);
        n_top *= c.up(t - 1);
        w = d * w + n_top;
        e *= d;
        uplinks = n_top * c.up(t);
        pod_endpoints.push(e);
        cut_per_endpoint.push(uplinks as f64 / e as f64);
    }
    let n = c.pods * e;
    let top_switches = uplinks / c.parallel();
    let inter = c.pods * (inside + uplinks);
    // Same pod of t tiers but not of t-1: 2t links away; other top-level pods: 2L.
    let mut total = 0.0;
    for t in 1..top {
        total += (pod_endpoints[t] - pod_endpoints[t - 1]) as f64 * 2.0 * t as f64;
    }
    total += (n - e) as f64 * 2.0 * top as f64;
    let ups: f64 = (1..top).map(|t| c.up(t) as f64).product();
    // Bisection: cut the links leaving half of the pods at the thinnest level.
    let thinnest = cut_per_endpoint.iter().cloned().fold(f64::INFINITY, f64::min);
    Metrics {
        endpoints: n,
        switches: c.pods * w + top_switches,
        links: n + inter,
        electrical: n,
        optical: inter,
        radix_used: k,
        diameter: 2 * top as u64,
        avg_hops: total / (n - 1) as f64,
        path_diversity: ups * c.parallel() as f64,
        bisection: Some((thinnest * n as f64 / 2.0).round() as u64),
    }
}
// ANCHOR_END: clos_closed

fn rail(r: &Rail) -> Metrics {
    let (d, gpus, units) = (r.servers_per_unit(), r.gpus, r.units);
    let n = d * gpus * units;
    let uplinks = r.leaves() * (r.k / 2);
    let links = n + uplinks;
    // From one GPU: its server's other GPUs (NVLink, 2), its rail in its unit (leaf, 2),
    // every other GPU of its unit (4: NVLink then rail leaf, or rail leaf then spine) and every
    // GPU of another unit (4: through a spine).
    let total = 2.0 * (gpus - 1) as f64
        + 2.0 * (d - 1) as f64
        + 4.0 * ((d - 1) * (gpus - 1)) as f64
        + 4.0 * ((units - 1) * d * gpus) as f64;
    let spine_paths = r.spines() as f64 * (r.parallel() as f64).powi(2);
    let diversity = if units >= 2 { spine_paths } else { spine_paths + 2.0 };
    Metrics {
        endpoints: n,
        switches: r.leaves() + r.spines(),
        links,
        electrical: 0,
        optical: links,
        radix_used: r.k,
        diameter: 4,
        avg_hops: total / (n - 1) as f64,
        path_diversity: diversity,
        // The fabric is non-blocking, so the cut is the smaller side's injection links; with an
        // odd number of servers the halves differ by one server.
        bisection: Some(gpus * (units * d / 2)),
    }
}

/// Per-source-router sums for a dragonfly under minimal routing, exact for the palm-tree
/// arrangement: (sum of endpoint distances, diameter, fewest paths at the diameter).
// ANCHOR: dragonfly_distances
fn dragonfly_distances(d: &Dragonfly) -> (f64, u64, f64) {
    let (p, a, g) = (d.p, d.a, d.g);
    let m = d.links_per_pair();
    // For every offset, the (source router, target router) of each of the m links.
    let mut links: Vec<Vec<(u64, u64)>> = vec![Vec::new(); g as usize];
    for j in 0..a * d.h {
        if let Some(off) = d.port_offset(j) {
            let c = j / (g - 1);
            let peer = c * (g - 1) + (g - 1 - off);
            links[off as usize].push((d.port_router(j), d.port_router(peer)));
        }
    }
    let mut total = 0.0;
    let mut diameter = 0u64;
    let mut fewest = f64::INFINITY;
    let see = |dist: u64, paths: f64, diameter: &mut u64, fewest: &mut f64| {
        if dist > *diameter {
            *diameter = dist;
            *fewest = paths;
        } else if dist == *diameter {
            *fewest = fewest.min(paths);
        }
    };
    for s in 0..a {
        // Same router: 2 links (in, out). Same group: 3 (one local link between).
        if p >= 2 {
            total += ((p - 1) * 2) as f64;
            see(2, 1.0, &mut diameter, &mut fewest);
        }
        if a >= 2 {
            total += ((a - 1) * p * 3) as f64;
            see(3, 1.0, &mut diameter, &mut fewest);
        }
        // Another group: terminal, [local], global, [local], terminal; take the best of the m links.
        for off in 1..g as usize {
            for u in 0..a {
                let extra = |&(r, q): &(u64, u64)| (r != s) as u64 + (q != u) as u64;
                let best = links[off].iter().map(extra).min().expect("m >= 1 links per pair");
                let paths = links[off].iter().filter(|l| extra(l) == best).count() as f64;
                total += ((3 + best) * p) as f64;
                see(3 + best, paths, &mut diameter, &mut fewest);
            }
        }
        debug_assert!(g < 2 || m >= 1);
    }
    (total * p as f64, diameter, fewest)
}
// ANCHOR_END: dragonfly_distances

fn dragonfly(d: &Dragonfly) -> Metrics {
    let (p, a, g) = (d.p, d.a, d.g);
    let n = p * a * g;
    let m = d.links_per_pair();
    let local = g * a * (a - 1) / 2;
    let global = m * g * (g - 1) / 2;
    let (sum_group0, diameter, fewest) = dragonfly_distances(d);
    // Groups are alike (rotating the group numbers is a symmetry of the palm-tree arrangement).
    let total = sum_group0 * g as f64;
    let used_global = if g >= 2 { (0..a).map(|r| (0..d.h).filter(|i| d.port_offset(r * d.h + i).is_some()).count() as u64).max().unwrap_or(0) } else { 0 };
    Metrics {
        endpoints: n,
        switches: a * g,
        links: n + local + global,
        electrical: n + local,
        optical: global,
        radix_used: p + (a - 1) + used_global,
        diameter,
        avg_hops: if n > 1 { total / (n as f64 * (n - 1) as f64) } else { 0.0 },
        path_diversity: if n > 1 { fewest } else { 0.0 },
        bisection: Some(dragonfly_bisection(d)),
    }
}

/// Global (and, for odd g, local) links across the halves of [`crate::build::bisection_sides`].
fn dragonfly_bisection(d: &Dragonfly) -> u64 {
    let (a, g) = (d.a, d.g);
    let m = d.links_per_pair();
    if g % 2 == 0 {
        return m * (g / 2) * (g / 2);
    }
    let half = (g - 1) / 2;
    let split_local = (a / 2) * (a - a / 2);
    // Group 0's own global ports that land on the other side from their router.
    let crossing = (0..a * d.h)
        .filter(|&j| match d.port_offset(j) {
            Some(off) => (d.port_router(j) < a / 2) != (off <= half),
            None => false,
        })
        .count() as u64;
    m * half * half + split_local + crossing
}

/// The multinomial (sum of parts)! / prod(part!) for `count` equal parts of size `part`: exact
/// while the factorials fit an f64 (170!), in log space beyond (large tori have astronomically
/// many shortest paths; the table prints them in scientific notation).
fn multinomial(part: u64, count: u64) -> f64 {
    let total = part * count;
    if total <= 170 {
        let fact = |n: u64| (1..=n).map(|i| i as f64).product::<f64>();
        fact(total) / fact(part).powi(count as i32)
    } else {
        (ln_factorial(total) - count as f64 * ln_factorial(part)).exp()
    }
}

/// ln(n!): summed exactly up to 1,000, Stirling's series beyond (error below 1e-12 there).
fn ln_factorial(n: u64) -> f64 {
    if n <= 1000 {
        return (1..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x) - 1.0 / (360.0 * x * x * x)
}

fn torus(t: &Torus) -> Metrics {
    let (k, n) = (t.k, t.n as u64);
    let nodes = k.pow(t.n);
    let rings = n * k.pow(t.n - 1);
    let per_ring = if !t.wrap { k - 1 } else if k >= 3 { k } else { 1 };
    let boundaries = (k - 1) / t.cube + if t.wrap && k >= 3 && k > t.cube { 1 } else { 0 };
    let links = rings * per_ring;
    let optical = rings * boundaries;
    let (diameter, avg, diversity);
    if t.wrap {
        // A ring of k: distances from one node sum to floor(k^2/4).
        diameter = n * (k / 2);
        let ring_sum = (k as u128 * k as u128 / 4) as f64;
        avg = (n * k.pow(t.n - 1)) as f64 * ring_sum / (nodes - 1).max(1) as f64;
        let f = k / 2;
        diversity = if k == 2 {
            multinomial(1, n)
        } else if k % 2 == 0 {
            2f64.powi(n as i32) * multinomial(f, n)
        } else {
            multinomial(f, n)
        };
    } else {
        // A line of k: distances over all ordered pairs sum to k(k^2-1)/3.
        diameter = n * (k - 1);
        let kf = k as f64;
        let line_pairs = kf * (kf * kf - 1.0) / 3.0;
        let pairs = n as f64 * (k.pow(t.n - 1) as f64).powi(2) * line_pairs;
        avg = pairs / (nodes as f64 * (nodes - 1) as f64);
        diversity = multinomial(k - 1, n);
    }
    let bisection = if k % 2 == 1 {
        None
    } else if t.wrap && k >= 4 {
        Some(2 * k.pow(t.n - 1))
    } else {
        Some(k.pow(t.n - 1))
    };
    let radix = if k == 2 { n } else if t.wrap || k >= 3 { 2 * n } else { n };
    Metrics {
        endpoints: nodes,
        switches: 0,
        links,
        electrical: links - optical,
        optical,
        radix_used: radix,
        diameter,
        avg_hops: avg,
        path_diversity: diversity,
        bisection,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::parse;

    fn m(s: &str) -> Metrics {
        metrics(&parse(s).unwrap())
    }

    #[test]
    fn published_reference_points() {
        // Al-Fares k = 48: 27,648 hosts and 2,880 switches.
        let f = m("fat-tree:k=48");
        assert_eq!((f.endpoints, f.switches), (27_648, 2_880));
        // Radix 64: 2,048 endpoints at two tiers, 65,536 at three.
        assert_eq!(m("clos:k=64,tiers=2").endpoints, 2_048);
        assert_eq!(m("clos:k=64,tiers=3").endpoints, 65_536);
        // Kim et al. / CODES example: a = 8, p = 4, h = 4: 33 groups, 264 routers, 1,056 endpoints.
        let d = m("dragonfly:p=4,a=8,h=4");
        assert_eq!((d.endpoints, d.switches, d.radix_used), (1_056, 264, 15));
        // Torus: diameter n*floor(k/2), bisection 2k^(n-1) for even k.
        for (k, n) in [(4u64, 2u32), (8, 3), (16, 3), (6, 1)] {
            let t = m(&format!("torus:k={k},n={n}"));
            assert_eq!(t.diameter, n as u64 * (k / 2));
            assert_eq!(t.bisection, Some(2 * k.pow(n - 1)));
        }
        assert_eq!(m("torus:k=5,n=2").diameter, 4);
    }

    #[test]
    fn fat_tree_general_forms() {
        for k in [4u64, 8, 16, 64] {
            let f = m(&format!("fat-tree:k={k}"));
            assert_eq!(f.endpoints, k * k * k / 4);
            assert_eq!(f.switches, 5 * k * k / 4);
            assert_eq!(f.path_diversity, (k * k / 4) as f64);
            assert_eq!(f.bisection, Some(f.endpoints / 2));
        }
    }
}
