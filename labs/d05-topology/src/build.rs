//! Explicit graphs of every topology, node by node and cable by cable, so that the closed forms
//! in [`crate::closed`] can be checked by counting and by search. Endpoints always come first
//! (nodes 0..N), in the order the bisection halves and ring orders below refer to.

use crate::graph::{Graph, LinkKind, NodeKind};
use crate::spec::{Clos, Dragonfly, Rail, Topology, Torus};

pub fn build(t: &Topology) -> Graph {
    let mut g = match t {
        Topology::Clos(c) => clos(c),
        Topology::Rail(r) => rail(r),
        Topology::Dragonfly(d) => dragonfly(d),
        Topology::Torus(t) => torus(t),
    };
    g.finish();
    g
}

/// Build one pod of `tier` tiers whose endpoints start at `*next_host`; return the pod's top
/// switches in plane order (the switch a higher tier reaches as "switch j of this pod").
fn clos_pod(g: &mut Graph, c: &Clos, tier: usize, next_host: &mut u32) -> Vec<u32> {
    if tier == 1 {
        let leaf = g.add_node(NodeKind::Switch);
        for _ in 0..c.down[0] {
            g.add_edge(*next_host, leaf, LinkKind::HostElectrical);
            *next_host += 1;
        }
        return vec![leaf];
    }
    let subs: Vec<Vec<u32>> = (0..c.down[tier - 1]).map(|_| clos_pod(g, c, tier - 1, next_host)).collect();
    let planes = subs[0].len();
    let mut layer = Vec::new();
    for j in 0..planes {
        for _ in 0..c.up(tier - 1) {
            let s = g.add_node(NodeKind::Switch);
            for sub in &subs {
                g.add_edge(sub[j], s, LinkKind::Uplink);
            }
            layer.push(s);
        }
    }
    layer
}

// ANCHOR: clos_builder
fn clos(c: &Clos) -> Graph {
    let mut g = Graph::new();
    if c.tiers == 1 {
        g.add_nodes(NodeKind::Endpoint, c.k as usize);
        let s = g.add_node(NodeKind::Switch);
        for h in 0..c.k as u32 {
            g.add_edge(h, s, LinkKind::HostElectrical);
        }
        return g;
    }
    let top = c.tiers as usize;
    let per_pod: u64 = c.down.iter().product();
    g.add_nodes(NodeKind::Endpoint, (c.pods * per_pod) as usize);
    let mut next_host = 0u32;
    let pods: Vec<Vec<u32>> = (0..c.pods).map(|_| clos_pod(&mut g, c, top - 1, &mut next_host)).collect();
    // Plane j of the top tier serves switch j of every pod; each of its switches takes
    // `parallel` links from every pod, so a pod switch's uplinks fill its plane exactly.
    let m = c.parallel();
    for j in 0..pods[0].len() {
        for _ in 0..c.up(top - 1) / m {
            let s = g.add_node(NodeKind::Switch);
            for pod in &pods {
                for _ in 0..m {
                    g.add_edge(pod[j], s, LinkKind::Uplink);
                }
            }
        }
    }
    g
}
// ANCHOR_END: clos_builder

fn rail(r: &Rail) -> Graph {
    let mut g = Graph::new();
    let servers = r.units * r.servers_per_unit();
    g.add_nodes(NodeKind::Endpoint, (servers * r.gpus) as usize);
    let gpu = |server: u64, rail: u64| (server * r.gpus + rail) as u32;
    for s in 0..servers {
        let nvswitch = g.add_node(NodeKind::ServerSwitch);
        for x in 0..r.gpus {
            g.add_edge(gpu(s, x), nvswitch, LinkKind::NvLink);
        }
    }
    let mut leaves = Vec::new();
    for u in 0..r.units {
        for x in 0..r.gpus {
            let leaf = g.add_node(NodeKind::Switch);
            for s in u * r.servers_per_unit()..(u + 1) * r.servers_per_unit() {
                g.add_edge(gpu(s, x), leaf, LinkKind::HostOptical);
            }
            leaves.push(leaf);
        }
    }
    for _ in 0..r.spines() {
        let spine = g.add_node(NodeKind::Switch);
        for &leaf in &leaves {
            for _ in 0..r.parallel() {
                g.add_edge(leaf, spine, LinkKind::Uplink);
            }
        }
    }
    g
}

// ANCHOR: dragonfly_builder
fn dragonfly(d: &Dragonfly) -> Graph {
    let mut g = Graph::new();
    let routers = d.a * d.g;
    g.add_nodes(NodeKind::Endpoint, (routers * d.p) as usize);
    let first_router = g.add_nodes(NodeKind::Switch, routers as usize);
    let router = |group: u64, r: u64| first_router + (group * d.a + r) as u32;
    for group in 0..d.g {
        for r in 0..d.a {
            for e in 0..d.p {
                g.add_edge(((group * d.a + r) * d.p + e) as u32, router(group, r), LinkKind::Terminal);
            }
            for s in r + 1..d.a {
                g.add_edge(router(group, r), router(group, s), LinkKind::Local);
            }
        }
    }
    // Palm-tree arrangement: port c(g-1) + (d-1) of group i goes to group i+d, where it lands on
    // port c(g-1) + (g-1-d). Each link is added once, from the lower-numbered group.
    for i in 0..d.g {
        for j in 0..d.a * d.h {
            let Some(offset) = d.port_offset(j) else { continue };
            let target = (i + offset) % d.g;
            if i < target {
                let c = j / (d.g - 1);
                let peer = c * (d.g - 1) + (d.g - 1 - offset);
                g.add_edge(router(i, d.port_router(j)), router(target, d.port_router(peer)), LinkKind::Global);
            }
        }
    }
    g
}
// ANCHOR_END: dragonfly_builder

/// Node index of coordinates x (dimension 0 least significant).
fn torus_index(k: u64, x: &[u64]) -> u32 {
    x.iter().rev().fold(0u64, |acc, &xi| acc * k + xi) as u32
}

fn torus(t: &Torus) -> Graph {
    let mut g = Graph::new();
    let n_nodes = t.k.pow(t.n);
    g.add_nodes(NodeKind::Endpoint, n_nodes as usize);
    let mut x = vec![0u64; t.n as usize];
    for v in 0..n_nodes {
        let mut rest = v;
        for xi in x.iter_mut() {
            *xi = rest % t.k;
            rest /= t.k;
        }
        for dim in 0..t.n as usize {
            let here = x[dim];
            let (there, wraps) = if here + 1 < t.k {
                (here + 1, false)
            } else if t.wrap && t.k >= 3 {
                (0, true)
            } else {
                continue;
            };
            // A cable is optical if it leaves its cube, or wraps around a ring longer than a cube.
            let optical = if wraps { t.k > t.cube } else { here / t.cube != there / t.cube };
            let mut y = x.clone();
            y[dim] = there;
            let kind = if optical { LinkKind::TorusOptical } else { LinkKind::TorusElectrical };
            g.add_edge(v as u32, torus_index(t.k, &y), kind);
        }
    }
    g
}

/// The two halves the closed-form bisection refers to, as a side per endpoint (true = A).
/// Clos and torus: the first half of the endpoints in index order (half the pods, the slab
/// x_{n-1} < k/2). Rail: the first floor(S/2) of the S servers, which is exactly half when S
/// is even. Dragonfly: groups 1..=(g-1)/2 with the first
/// floor(a/2) routers of group 0 when g is odd, so group 0's global ports mostly stay on their side;
/// groups 0..g/2 when g is even.
pub fn bisection_sides(t: &Topology) -> Vec<bool> {
    let n = crate::closed::endpoints(t) as usize;
    match t {
        Topology::Dragonfly(d) => {
            let per_group = (d.a * d.p) as usize;
            (0..n)
                .map(|e| {
                    let group = (e / per_group) as u64;
                    let router = ((e % per_group) as u64) / d.p;
                    if d.g % 2 == 0 {
                        group < d.g / 2
                    } else if group == 0 {
                        router < d.a / 2
                    } else {
                        group <= (d.g - 1) / 2
                    }
                })
                .collect()
        }
        // Servers stay whole (NVLink is never cut): the first floor(S/2) servers.
        Topology::Rail(r) => {
            let servers = r.units * r.servers_per_unit();
            (0..n).map(|e| (e as u64 / r.gpus) < servers / 2).collect()
        }
        _ => (0..n).map(|e| e < n / 2).collect(),
    }
}

/// The order in which a ring allreduce visits the endpoints.
/// Clos: index order. Torus: the reflected k-ary Gray code, so every step is one link.
/// Dragonfly: group by group; inside a group, start at the router where the link from the
/// previous group lands and end at the router that owns the link to the next group.
pub fn ring_order(t: &Topology) -> Vec<u32> {
    match t {
        Topology::Clos(_) | Topology::Rail(_) => (0..crate::closed::endpoints(t) as u32).collect(),
        Topology::Torus(t) => gray_order(t.k, t.n),
        Topology::Dragonfly(d) => {
            let (enter, leave) = dragonfly_ring_routers(d);
            let mut routers: Vec<u64> = vec![enter];
            routers.extend((0..d.a).filter(|&r| r != enter && r != leave));
            if leave != enter {
                routers.push(leave);
            }
            let mut order = Vec::new();
            for group in 0..d.g {
                for &r in &routers {
                    for e in 0..d.p {
                        order.push(((group * d.a + r) * d.p + e) as u32);
                    }
                }
            }
            order
        }
    }
}

/// (router where the ring enters a group, router where it leaves): the ring leaves through
/// global port 0 (offset 1, owned by router 0), which lands on port g-2 of the next group.
pub fn dragonfly_ring_routers(d: &Dragonfly) -> (u64, u64) {
    if d.g < 2 { (0, d.a - 1) } else { (d.port_router(d.g - 2), 0) }
}

/// The reflected k-ary Gray code over n digits: consecutive codes differ by one in one digit.
fn gray_order(k: u64, n: u32) -> Vec<u32> {
    let total = k.pow(n);
    (0..total)
        .map(|i| {
            // Digit d of the Gray code runs forward or backward depending on the higher digits.
            let mut digits = vec![0u64; n as usize];
            let mut rest = i;
            for dd in digits.iter_mut() {
                *dd = rest % k;
                rest /= k;
            }
            let mut x = vec![0u64; n as usize];
            let mut reflect = false;
            for dim in (0..n as usize).rev() {
                let v = digits[dim];
                x[dim] = if reflect { k - 1 - v } else { v };
                // The digits below run backwards whenever this (already reflected) digit is odd.
                if x[dim] % 2 == 1 {
                    reflect = !reflect;
                }
            }
            torus_index(k, &x)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gray_code_steps_change_one_digit_by_one() {
        for (k, n) in [(4u64, 2u32), (3, 3), (2, 4), (5, 1)] {
            let order = gray_order(k, n);
            let mut seen = order.clone();
            seen.sort();
            assert_eq!(seen, (0..k.pow(n) as u32).collect::<Vec<_>>());
            for w in order.windows(2) {
                let (a, b) = (w[0] as u64, w[1] as u64);
                let diff: u64 = (0..n).map(|d| ((a / k.pow(d)) % k).abs_diff((b / k.pow(d)) % k)).sum();
                assert_eq!(diff, 1, "k={k} n={n} {a}->{b}");
            }
        }
    }
}
