//! Sizing each family for N endpoints with radix-64 switches (the size of a 64-port 400G or
//! 800G switch ASIC), and the scale boundaries that fall out of the closed forms.

use lab_core::Boundary;
use lab_core::units::{fmt_count, fmt_sig};

use crate::closed::{Metrics, metrics};
use crate::model::{CostParams, NetParams, allreduce_ring, alltoall, cost};
use crate::spec::{Clos, Dragonfly, Topology, Torus};

pub const RADIX: u64 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Non-blocking folded Clos of radix-64 switches, as few tiers as fit.
    FatTree,
    /// Balanced dragonfly (a = 2p = 2h) with routers of radix <= 64.
    Dragonfly,
    /// 3D torus, k rounded up to even, cubes of 4x4x4 nodes.
    Torus3d,
}

impl Family {
    pub const ALL: [Family; 3] = [Family::FatTree, Family::Dragonfly, Family::Torus3d];

    pub fn name(self) -> &'static str {
        match self {
            Family::FatTree => "fat-tree (radix 64)",
            Family::Dragonfly => "dragonfly (radix <= 64)",
            Family::Torus3d => "3D torus",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Family::FatTree => "fat_tree",
            Family::Dragonfly => "dragonfly",
            Family::Torus3d => "torus3d",
        }
    }
}

// ANCHOR: design
/// The smallest member of a family with at least `n` endpoints, or None if the family cannot
/// reach `n` with radix-64 parts.
pub fn design(family: Family, n: u64) -> Option<Topology> {
    match family {
        Family::FatTree => {
            let half = RADIX / 2;
            if n <= RADIX {
                return Some(Topology::Clos(Clos::non_blocking(RADIX, 1, 1)));
            }
            // L tiers hold pods * 32^(L-1) endpoints with up to 64 pods.
            let tiers = (2..=6u32).find(|&l| RADIX * half.pow(l - 1) >= n)?;
            let per_pod = half.pow(tiers - 1);
            let pods = n.div_ceil(per_pod).max(2).next_power_of_two();
            Some(Topology::Clos(Clos::non_blocking(RADIX, tiers, pods)))
        }
        Family::Dragonfly => {
            // Radix 4p - 1 <= 64 allows p up to 16: at most 2p^2 (2p^2 + 1) endpoints.
            let p = (1..=16u64).find(|&p| 2 * p * p * (2 * p * p + 1) >= n)?;
            let per_group = 2 * p * p;
            Some(Topology::Dragonfly(Dragonfly { p, a: 2 * p, h: p, g: n.div_ceil(per_group) }))
        }
        Family::Torus3d => {
            let mut k = (n as f64).cbrt().ceil() as u64;
            while k.pow(3) < n {
                k += 1;
            }
            k += k % 2;
            Some(Topology::Torus(Torus { k: k.max(2), n: 3, wrap: true, cube: 4 }))
        }
    }
}
// ANCHOR_END: design

/// The endpoint counts of the sweeps: powers of two from 8 to 2^20, plus 100,000 and 1,000,000.
pub fn sizes(max: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (3..=20).map(|e| 1u64 << e).filter(|&n| n <= max).collect();
    v.extend([100_000, 1_000_000].into_iter().filter(|&n| n <= max));
    v.sort();
    v
}

/// One family at one size, everything the plots and tables need.
pub struct Point {
    pub family: Family,
    pub n: u64,
    pub topology: Topology,
    pub metrics: Metrics,
    pub usd_per_endpoint: f64,
    pub watts_per_endpoint: f64,
    pub allreduce: f64,
    pub alltoall: f64,
}

/// Reference message sizes (ASSUMPTIONS): a 1 GiB gradient; 1 GiB sent per rank in all-to-all.
pub const ALLREDUCE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;
pub const ALLTOALL_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

pub fn point(family: Family, n: u64, costs: &CostParams, net: &NetParams) -> Option<Point> {
    let topology = design(family, n)?;
    let m = metrics(&topology);
    let c = cost(&topology, &m, costs);
    let e = m.endpoints as f64;
    Some(Point {
        family,
        n,
        allreduce: allreduce_ring(&topology, net, ALLREDUCE_BYTES, n).total(),
        alltoall: alltoall(&m, net, ALLTOALL_BYTES, n),
        usd_per_endpoint: c.usd / e,
        watts_per_endpoint: c.watts / e,
        topology,
        metrics: m,
    })
}

/// Every family at every size: the closed-form sweep, at the default prices.
pub fn sweep(max: u64) -> Vec<Point> {
    sweep_with(max, &CostParams::default(), &NetParams::default())
}

pub fn sweep_with(max: u64, costs: &CostParams, net: &NetParams) -> Vec<Point> {
    let mut out = Vec::new();
    for n in sizes(max) {
        for f in Family::ALL {
            if let Some(p) = point(f, n, costs, net) {
                out.push(p);
            }
        }
    }
    out
}

/// The cheapest family at `n` whose time for the traffic is within `slack` of the fastest.
pub fn cheapest(points: &[Point], n: u64, time: impl Fn(&Point) -> f64, slack: f64) -> Option<&Point> {
    let here: Vec<&Point> = points.iter().filter(|p| p.n == n).collect();
    let best = here.iter().map(|p| time(p)).fold(f64::INFINITY, f64::min);
    here.into_iter()
        .filter(|p| time(p) <= slack * best)
        .min_by(|a, b| a.usd_per_endpoint.total_cmp(&b.usd_per_endpoint))
}

/// The largest non-blocking folded Clos of radix k and L tiers: 2 (k/2)^L endpoints.
pub fn largest_clos(k: u64, tiers: u32) -> u64 {
    metrics(&Topology::Clos(Clos::non_blocking(k, tiers, k))).endpoints
}

// ANCHOR: boundaries
/// D05's rows of the scale-boundary ladder, all computed from the closed forms.
pub fn scale_boundaries() -> Vec<Boundary> {
    keyed_boundaries().into_iter().map(|(_, b)| b).collect()
}

/// The same rows, each with a key the book quotes it by.
pub fn keyed_boundaries() -> Vec<(String, Boundary)> {
    let mut rows: Vec<(String, Boundary)> = Vec::new();
    for tiers in 1..=3u32 {
        let n = largest_clos(RADIX, tiers);
        let here = Topology::Clos(Clos::non_blocking(RADIX, tiers, RADIX));
        let next = Topology::Clos(Clos::non_blocking(RADIX, tiers + 1, 2));
        let (mh, mn) = (metrics(&here), metrics(&next));
        let per_endpoint = |t: &Topology, m: &Metrics| fmt_sig(m.ports(t) as f64 / m.endpoints as f64, 3);
        rows.push((format!("clos_{tiers}_tiers"), Boundary::new(
            "d05",
            n as f64,
            format!("{} endpoints", fmt_count(n)),
            format!("a {tiers}-tier radix-64 Clos is full; one more endpoint needs tier {}", tiers + 1),
            format!(
                "diameter {} -> {} links; switch ports per endpoint {} -> {}",
                mh.diameter,
                mn.diameter,
                per_endpoint(&here, &mh),
                per_endpoint(&next, &mn)
            ),
        )));
    }
    // The largest balanced dragonfly with radix-64 routers.
    let big = Topology::Dragonfly(Dragonfly::max_groups(16, 32, 16));
    let m = metrics(&big);
    rows.push(("dragonfly_max".into(), Boundary::new(
        "d05",
        m.endpoints as f64,
        format!("{} endpoints", fmt_count(m.endpoints)),
        "the largest balanced dragonfly of radix-64 routers (p=16, a=32, h=16): one global link per group pair",
        format!(
            "{} groups, diameter {} links, bisection {} of full",
            fmt_count(m.endpoints / (16 * 32)),
            m.diameter,
            fmt_sig(m.bisection_fraction().unwrap_or(0.0), 3)
        ),
    )));
    // Where a 3D torus's bisection per endpoint falls below a dragonfly's (about 1/2) and
    // below 1/7 (thinner than a 7:1 oversubscribed tier).
    for (key, threshold, what) in
        [("torus_half", 0.5, "half of full"), ("torus_seventh", 1.0 / 7.0, "1/7 of full, thinner than a 7:1 oversubscribed tier")]
    {
        if let Some(n) = (2..).step_by(2).map(|k: u64| k * k * k).find(|&n| {
            let t = Topology::Torus(Torus { k: (n as f64).cbrt().round() as u64, n: 3, wrap: true, cube: 4 });
            metrics(&t).bisection_fraction().unwrap_or(1.0) < threshold
        }) {
            let k = (n as f64).cbrt().round() as u64;
            rows.push((key.to_string(), Boundary::new(
                "d05",
                n as f64,
                format!("{} endpoints", fmt_count(n)),
                format!("3D torus bisection per endpoint (4/k) falls below {what}"),
                format!("k = {k}: {} links across for {} endpoints per half", fmt_count(2 * k * k), fmt_count(n / 2)),
            )));
        }
    }
    // Which family is cheapest, within 1.5x of the fastest, for each traffic pattern.
    let points = sweep(1 << 20);
    for (tag, name, pick) in [
        ("allreduce", "allreduce (ring)", (|p: &Point| p.allreduce) as fn(&Point) -> f64),
        ("alltoall", "all-to-all", |p: &Point| p.alltoall),
    ] {
        let mut last: Option<Family> = None;
        for n in sizes(1 << 20) {
            if let Some(best) = cheapest(&points, n, pick, 1.5) {
                if last.is_some() && last != Some(best.family) {
                    rows.push((format!("cheapest_{tag}_{}", best.family.key()), Boundary::new(
                        "d05",
                        n as f64,
                        format!("{} endpoints", fmt_count(n)),
                        format!("for {name}, the cheapest fabric within 1.5x of the fastest becomes the {}", best.family.name()),
                        format!(
                            "{} USD per endpoint, {} for the reference message",
                            fmt_sig(best.usd_per_endpoint, 3),
                            lab_core::units::fmt_time(pick(best))
                        ),
                    )));
                }
                last = Some(best.family);
            }
        }
    }
    rows.sort_by(|a, b| a.1.at.total_cmp(&b.1.at));
    rows
}
// ANCHOR_END: boundaries
