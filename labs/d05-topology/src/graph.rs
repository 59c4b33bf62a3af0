//! An explicit network graph and the measurements made on it: breadth-first search (plain, or
//! limited to a number of global links for dragonfly minimal routing), shortest-path counting,
//! greedy shortest-path routing, and max-flow min-cut for bisection.
//!
//! Nodes are endpoints (hosts, GPUs, torus nodes), network switches, or switches inside a server
//! (an NVSwitch), which are not counted as network switches. Edges are undirected; parallel
//! edges are allowed (a Clos top tier may join a pod with several links).

use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Endpoint,
    Switch,
    /// A switch inside a server (NVSwitch): part of the node, not of the network.
    ServerSwitch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkKind {
    /// Endpoint to its first switch, inside the rack: an electrical cable.
    HostElectrical,
    /// Endpoint to its first switch in a network rack (rail-optimised leaves): optical.
    HostOptical,
    /// Dragonfly terminal link: endpoint to router inside the cabinet.
    Terminal,
    /// Switch to switch between tiers: optical.
    Uplink,
    /// Dragonfly link between routers of one group (one cabinet): electrical.
    Local,
    /// Dragonfly link between groups: optical.
    Global,
    /// Torus or mesh link inside a cube of nodes: electrical.
    TorusElectrical,
    /// Torus or mesh link leaving a cube (or wrapping around): optical.
    TorusOptical,
    /// NVLink inside a server: not a network cable.
    NvLink,
}

impl LinkKind {
    /// Counted as a network link (and a cable)?
    pub fn is_network(self) -> bool {
        self != LinkKind::NvLink
    }

    pub fn is_optical(self) -> bool {
        matches!(self, LinkKind::HostOptical | LinkKind::Uplink | LinkKind::Global | LinkKind::TorusOptical)
    }

    pub fn is_global(self) -> bool {
        self == LinkKind::Global
    }

    /// Capacity in a bisection cut, in links. Links that a bisection must never cut (inside a
    /// server, or an endpoint's attachment to its dragonfly router) get a capacity no cut pays.
    pub fn cut_capacity(self) -> u64 {
        match self {
            LinkKind::NvLink | LinkKind::Terminal => UNCUTTABLE,
            _ => 1,
        }
    }
}

pub const UNCUTTABLE: u64 = 1 << 40;
const UNSEEN: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub kinds: Vec<NodeKind>,
    pub edges: Vec<(u32, u32, LinkKind)>,
    /// CSR adjacency: neighbours of v are adj[start[v]..start[v+1]] as (node, edge index).
    start: Vec<u32>,
    adj: Vec<(u32, u32)>,
}

impl Graph {
    pub fn new() -> Self {
        Graph::default()
    }

    pub fn add_node(&mut self, kind: NodeKind) -> u32 {
        self.kinds.push(kind);
        (self.kinds.len() - 1) as u32
    }

    pub fn add_nodes(&mut self, kind: NodeKind, count: usize) -> u32 {
        let first = self.kinds.len() as u32;
        self.kinds.extend(std::iter::repeat_n(kind, count));
        first
    }

    pub fn add_edge(&mut self, a: u32, b: u32, kind: LinkKind) {
        self.edges.push((a, b, kind));
    }

    /// Build the adjacency lists; call once after the last edge.
    pub fn finish(&mut self) {
        let n = self.kinds.len();
        let mut degree = vec![0u32; n + 1];
        for &(a, b, _) in &self.edges {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        let mut start = vec![0u32; n + 1];
        for v in 0..n {
            start[v + 1] = start[v] + degree[v];
        }
        let mut fill = start.clone();
        let mut adj = vec![(0u32, 0u32); self.edges.len() * 2];
        for (i, &(a, b, _)) in self.edges.iter().enumerate() {
            adj[fill[a as usize] as usize] = (b, i as u32);
            fill[a as usize] += 1;
            adj[fill[b as usize] as usize] = (a, i as u32);
            fill[b as usize] += 1;
        }
        self.start = start;
        self.adj = adj;
    }

    pub fn nodes(&self) -> usize {
        self.kinds.len()
    }

    pub fn neighbours(&self, v: u32) -> &[(u32, u32)] {
        &self.adj[self.start[v as usize] as usize..self.start[v as usize + 1] as usize]
    }

    pub fn endpoints(&self) -> Vec<u32> {
        (0..self.nodes() as u32).filter(|&v| self.kinds[v as usize] == NodeKind::Endpoint).collect()
    }

    /// Network ports used on the busiest switch (or, in a direct network, endpoint router).
    pub fn max_network_degree(&self, kind: NodeKind) -> u32 {
        (0..self.nodes() as u32)
            .filter(|&v| self.kinds[v as usize] == kind)
            .map(|v| self.neighbours(v).iter().filter(|&&(_, e)| self.edges[e as usize].2.is_network()).count() as u32)
            .max()
            .unwrap_or(0)
    }

    /// Shortest distances (in links) and shortest-path counts from `source`, using at most
    /// `max_global` global links when it is `Some` (dragonfly minimal routing), else any path.
    /// Counts are f64: exact below 2^53, which covers every graph the tests compare exactly.
    pub fn bfs(&self, source: u32, max_global: Option<u32>) -> Bfs {
        let layers = max_global.map_or(1, |g| g as usize + 1);
        let n = self.nodes();
        let mut dist = vec![UNSEEN; n * layers];
        let mut count = vec![0f64; n * layers];
        let mut queue = VecDeque::new();
        dist[source as usize] = 0;
        count[source as usize] = 1.0;
        queue.push_back((source, 0usize));
        while let Some((v, layer)) = queue.pop_front() {
            let here = layer * n + v as usize;
            let d = dist[here];
            for &(w, e) in self.neighbours(v) {
                let mut next = layer;
                if max_global.is_some() && self.edges[e as usize].2.is_global() {
                    next += 1;
                    if next >= layers {
                        continue;
                    }
                }
                let there = next * n + w as usize;
                if dist[there] == UNSEEN {
                    dist[there] = d + 1;
                    queue.push_back((w, next));
                }
                if dist[there] == d + 1 {
                    count[there] += count[here];
                }
            }
        }
        // A node's distance is the best over layers; its path count sums the layers that reach it
        // at that distance (a walk's layer is fixed by how many global links it used).
        let mut best = vec![UNSEEN; n];
        let mut paths = vec![0f64; n];
        for v in 0..n {
            for l in 0..layers {
                let d = dist[l * n + v];
                if d < best[v] {
                    best[v] = d;
                    paths[v] = count[l * n + v];
                } else if d == best[v] && d != UNSEEN {
                    paths[v] += count[l * n + v];
                }
            }
        }
        Bfs { dist: best, paths }
    }

    /// The links of one shortest path from `from` to `to` (at most `max_global` global links),
    /// taking at every node the first neighbour, in adjacency order, that gets closer: a fixed,
    /// deterministic routing such as a switch's first-match forwarding table would give.
    pub fn route(&self, from: u32, to: u32, max_global: Option<u32>) -> Vec<(u32, u32)> {
        // Distances to `to` by layer of global links still allowed.
        let layers = max_global.map_or(1, |g| g as usize + 1);
        let n = self.nodes();
        let mut dist = vec![UNSEEN; n * layers];
        let mut queue = VecDeque::new();
        // Layer l here means "l global links already used"; searching backwards from `to`
        // fills every layer's distance to the destination.
        for l in 0..layers {
            dist[l * n + to as usize] = 0;
            queue.push_back((to, l));
        }
        while let Some((v, layer)) = queue.pop_front() {
            let d = dist[layer * n + v as usize];
            for &(w, e) in self.neighbours(v) {
                let prev = if max_global.is_some() && self.edges[e as usize].2.is_global() {
                    if layer == 0 {
                        continue;
                    }
                    layer - 1
                } else {
                    layer
                };
                let there = prev * n + w as usize;
                if dist[there] == UNSEEN {
                    dist[there] = d + 1;
                    queue.push_back((w, prev));
                }
            }
        }
        let mut path = Vec::new();
        let (mut v, mut layer) = (from, 0usize);
        while v != to {
            let d = dist[layer * n + v as usize];
            let step = self.neighbours(v).iter().find_map(|&(w, e)| {
                let next = if max_global.is_some() && self.edges[e as usize].2.is_global() { layer + 1 } else { layer };
                (next < layers && dist[next * n + w as usize] == d - 1).then_some((w, next))
            });
            let (w, next) = step.expect("a connected graph has a next hop");
            path.push((v, w));
            v = w;
            layer = next;
        }
        path
    }

    /// The minimum cut, in links, that separates endpoints marked `true` from those marked
    /// `false` (other nodes go to whichever side is cheaper): max-flow by Dinic's algorithm.
    pub fn min_cut(&self, side: &[bool]) -> u64 {
        let eps = self.endpoints();
        assert_eq!(eps.len(), side.len(), "one side per endpoint");
        let n = self.nodes();
        let (s, t) = (n, n + 1);
        let mut flow = FlowNet::new(n + 2);
        for &(a, b, k) in &self.edges {
            flow.add(a as usize, b as usize, k.cut_capacity());
        }
        for (&v, &in_a) in eps.iter().zip(side) {
            if in_a { flow.add_arc(s, v as usize, UNCUTTABLE * 4) } else { flow.add_arc(v as usize, t, UNCUTTABLE * 4) }
        }
        flow.max_flow(s, t)
    }
}

/// Distances and shortest-path counts from one source.
pub struct Bfs {
    pub dist: Vec<u32>,
    pub paths: Vec<f64>,
}

/// A residual network for Dinic's max-flow.
struct FlowNet {
    head: Vec<usize>,
    to: Vec<usize>,
    cap: Vec<u64>,
    next: Vec<usize>,
}

impl FlowNet {
    fn new(n: usize) -> Self {
        FlowNet { head: vec![usize::MAX; n], to: Vec::new(), cap: Vec::new(), next: Vec::new() }
    }

    fn push(&mut self, a: usize, b: usize, c: u64) {
        self.to.push(b);
        self.cap.push(c);
        self.next.push(self.head[a]);
        self.head[a] = self.to.len() - 1;
    }

    /// An undirected link: capacity c each way, sharing one residual pair.
    fn add(&mut self, a: usize, b: usize, c: u64) {
        self.push(a, b, c);
        self.push(b, a, c);
    }

    fn add_arc(&mut self, a: usize, b: usize, c: u64) {
        self.push(a, b, c);
        self.push(b, a, 0);
    }

    fn max_flow(&mut self, s: usize, t: usize) -> u64 {
        let n = self.head.len();
        let mut total = 0;
        loop {
            let mut level = vec![u32::MAX; n];
            level[s] = 0;
            let mut queue = VecDeque::from([s]);
            while let Some(v) = queue.pop_front() {
                let mut e = self.head[v];
                while e != usize::MAX {
                    let w = self.to[e];
                    if self.cap[e] > 0 && level[w] == u32::MAX {
                        level[w] = level[v] + 1;
                        queue.push_back(w);
                    }
                    e = self.next[e];
                }
            }
            if level[t] == u32::MAX {
                return total;
            }
            let mut it = self.head.clone();
            loop {
                let pushed = self.augment(s, t, u64::MAX, &level, &mut it);
                if pushed == 0 {
                    break;
                }
                total += pushed;
            }
        }
    }

    /// One blocking-flow path, iteratively (graphs of 100,000 nodes would overflow recursion).
    fn augment(&mut self, s: usize, t: usize, limit: u64, level: &[u32], it: &mut [usize]) -> u64 {
        let mut stack: Vec<usize> = Vec::new(); // arcs on the current path
        let mut v = s;
        loop {
            if v == t {
                let pushed = stack.iter().map(|&e| self.cap[e]).min().unwrap_or(limit).min(limit);
                for &e in &stack {
                    self.cap[e] -= pushed;
                    self.cap[e ^ 1] += pushed;
                }
                return pushed;
            }
            let mut advanced = false;
            while it[v] != usize::MAX {
                let e = it[v];
                let w = self.to[e];
                if self.cap[e] > 0 && level[w] == level[v] + 1 {
                    stack.push(e);
                    v = w;
                    advanced = true;
                    break;
                }
                it[v] = self.next[e];
            }
            if !advanced {
                // Dead end: retreat and skip the arc that led here.
                match stack.pop() {
                    None => return 0,
                    Some(e) => {
                        v = self.to[e ^ 1];
                        it[v] = self.next[it[v]];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: u32) -> Graph {
        let mut g = Graph::new();
        g.add_nodes(NodeKind::Endpoint, n as usize);
        for v in 1..n {
            g.add_edge(v - 1, v, LinkKind::TorusElectrical);
        }
        g.finish();
        g
    }

    #[test]
    fn bfs_on_a_path_counts_distances() {
        let g = path(5);
        let b = g.bfs(0, None);
        assert_eq!(b.dist, vec![0, 1, 2, 3, 4]);
        assert_eq!(b.paths, vec![1.0; 5]);
        assert_eq!(g.route(0, 4, None).len(), 4);
    }

    #[test]
    fn min_cut_of_a_square_with_a_diagonal() {
        let mut g = Graph::new();
        g.add_nodes(NodeKind::Endpoint, 4);
        for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)] {
            g.add_edge(a, b, LinkKind::TorusElectrical);
        }
        g.finish();
        assert_eq!(g.min_cut(&[true, true, false, false]), 3);
        assert_eq!(g.min_cut(&[true, false, true, false]), 4);
    }

    #[test]
    fn global_budget_forbids_two_global_hops() {
        // 0 -g- 1 -g- 2 and a long local detour 0 - 3 - 4 - 5 - 2.
        let mut g = Graph::new();
        g.add_nodes(NodeKind::Endpoint, 6);
        g.add_edge(0, 1, LinkKind::Global);
        g.add_edge(1, 2, LinkKind::Global);
        for (a, b) in [(0, 3), (3, 4), (4, 5), (5, 2)] {
            g.add_edge(a, b, LinkKind::Local);
        }
        g.finish();
        assert_eq!(g.bfs(0, None).dist[2], 2);
        assert_eq!(g.bfs(0, Some(1)).dist[2], 4);
        assert_eq!(g.route(0, 2, Some(1)).len(), 4);
    }
}
