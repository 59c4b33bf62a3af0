//! The topologies this module knows, their parameters, and the checks that reject impossible
//! ones. A topology is written as `family:key=value,...`, for example `fat-tree:k=48`,
//! `clos:k=64,tiers=3,oversub=1:1/7:1,pods=64`, `rail:k=64,gpus=8,units=8`,
//! `dragonfly:p=4,a=8,h=4` (groups default to a*h+1), `torus:k=16,n=3`, `mesh:k=8,n=2`.

use std::collections::BTreeMap;
use std::fmt;

/// A folded Clos: `tiers` levels of radix-`k` switches. Tier t < tiers uses `down[t-1]` ports
/// towards the endpoints and k - down[t-1] up; the top tier joins `pods` copies of the
/// (tiers-1)-level pod, each pair of top switch and pod by k/pods parallel links.
#[derive(Clone, Debug, PartialEq)]
pub struct Clos {
    pub k: u64,
    pub tiers: u32,
    pub down: Vec<u64>,
    pub pods: u64,
}

impl Clos {
    /// Al-Fares' k-ary fat-tree: three tiers, k/2 down and k/2 up, k pods.
    pub fn fat_tree(k: u64) -> Self {
        Clos { k, tiers: 3, down: vec![k / 2, k / 2], pods: k }
    }

    /// A non-blocking folded Clos with `pods` pods (k for the full size).
    pub fn non_blocking(k: u64, tiers: u32, pods: u64) -> Self {
        Clos { k, tiers, down: vec![k / 2; tiers.saturating_sub(1) as usize], pods: if tiers == 1 { 1 } else { pods } }
    }

    pub fn up(&self, tier: usize) -> u64 {
        self.k - self.down[tier - 1]
    }

    /// Parallel links between a top switch and a pod.
    pub fn parallel(&self) -> u64 {
        self.k / self.pods
    }
}

/// A rail-optimised two-tier fabric: servers of `gpus` GPUs joined inside by NVLink; in each
/// scalable unit of k/2 servers, GPU r of every server attaches to the unit's rail-r leaf; every
/// spine joins every leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Rail {
    pub k: u64,
    pub gpus: u64,
    pub units: u64,
}

impl Rail {
    pub fn servers_per_unit(&self) -> u64 {
        self.k / 2
    }
    pub fn leaves(&self) -> u64 {
        self.gpus * self.units
    }
    pub fn spines(&self) -> u64 {
        self.leaves() / 2
    }
    pub fn parallel(&self) -> u64 {
        self.k / self.leaves()
    }
}

/// A dragonfly (Kim, Dally, Scott and Abts, 2008): `p` endpoints per router, `a` routers per
/// group joined all-to-all, `h` global ports per router, `g` groups. Global links follow the
/// "consecutive" (palm-tree) arrangement: global port j = c(g-1) + (d-1) of group i, for copy c
/// and offset d in 1..g, joins group (i + d) mod g, so every pair of groups gets
/// m = floor(a*h / (g-1)) links and leftover ports stay unused.
#[derive(Clone, Debug, PartialEq)]
pub struct Dragonfly {
    pub p: u64,
    pub a: u64,
    pub h: u64,
    pub g: u64,
}

impl Dragonfly {
    pub fn max_groups(p: u64, a: u64, h: u64) -> Self {
        Dragonfly { p, a, h, g: a * h + 1 }
    }

    /// Global links between each pair of groups.
    pub fn links_per_pair(&self) -> u64 {
        if self.g <= 1 { 0 } else { self.a * self.h / (self.g - 1) }
    }

    pub fn radix(&self) -> u64 {
        self.p + self.a - 1 + self.h
    }

    /// The router that owns global port j of a group.
    pub fn port_router(&self, j: u64) -> u64 {
        j / self.h
    }

    /// Target-group offset (1..g) of global port j, if the port is used.
    pub fn port_offset(&self, j: u64) -> Option<u64> {
        let m = self.links_per_pair();
        (j < m * (self.g - 1)).then(|| j % (self.g - 1) + 1)
    }
}

/// A k-ary n-cube: a torus (with wrap-around links) or a mesh (without). Nodes integrate the
/// router, as in Blue Gene, TPU and Fugaku. Cables inside a cube of `cube`^n nodes are
/// electrical; those leaving a cube are optical.
#[derive(Clone, Debug, PartialEq)]
pub struct Torus {
    pub k: u64,
    pub n: u32,
    pub wrap: bool,
    pub cube: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Topology {
    Clos(Clos),
    Rail(Rail),
    Dragonfly(Dragonfly),
    Torus(Torus),
}

/// The largest explicit or closed-form topology this module accepts (2^50 endpoints).
const MAX_ENDPOINTS: u128 = 1 << 50;

impl Topology {
    pub fn family(&self) -> &'static str {
        match self {
            Topology::Clos(_) => "folded Clos",
            Topology::Rail(_) => "rail-optimised",
            Topology::Dragonfly(_) => "dragonfly",
            Topology::Torus(t) if t.wrap => "torus",
            Topology::Torus(_) => "mesh",
        }
    }

    /// A short parameter string: `clos k=64 L=3 1:1/1:1 pods=64`.
    pub fn label(&self) -> String {
        match self {
            Topology::Clos(c) => {
                if *c == Clos::fat_tree(c.k) {
                    return format!("fat-tree k={}", c.k);
                }
                let ratios: Vec<String> = (1..c.tiers as usize).map(|t| ratio(c.down[t - 1], c.up(t))).collect();
                let mut s = format!("clos k={} L={}", c.k, c.tiers);
                if ratios.iter().any(|r| r != "1:1") {
                    s.push_str(&format!(" {}", ratios.join("/")));
                }
                if c.tiers > 1 && c.pods != c.k {
                    s.push_str(&format!(" pods={}", c.pods));
                }
                s
            }
            Topology::Rail(r) => format!("rail k={} gpus={} units={}", r.k, r.gpus, r.units),
            Topology::Dragonfly(d) => format!("dragonfly p={} a={} h={} g={}", d.p, d.a, d.h, d.g),
            Topology::Torus(t) => format!("{} k={} n={}", if t.wrap { "torus" } else { "mesh" }, t.k, t.n),
        }
    }

    /// Reject every impossible combination with a one-line reason.
    pub fn validate(&self) -> Result<(), String> {
        let endpoints: u128 = match self {
            Topology::Clos(c) => {
                if c.k < 2 || c.k % 2 == 1 {
                    return Err(format!("a Clos or fat-tree needs an even radix k >= 2, got k={}", c.k));
                }
                if !(1..=6).contains(&c.tiers) {
                    return Err(format!("tiers must be 1 to 6, got {}", c.tiers));
                }
                if c.down.len() != c.tiers as usize - 1 {
                    return Err(format!("{} tiers need {} oversubscription ratios, got {}", c.tiers, c.tiers - 1, c.down.len()));
                }
                if c.down.iter().any(|&d| d == 0 || d >= c.k) {
                    return Err(format!("every tier below the top needs at least one port down and one up (k={})", c.k));
                }
                if c.tiers > 1 {
                    if c.pods < 2 || c.pods % 2 == 1 || c.k % c.pods != 0 {
                        return Err(format!("pods must be even, at least 2 and divide k={}, got {}", c.k, c.pods));
                    }
                    let top_up = c.up(c.tiers as usize - 1);
                    if top_up % c.parallel() != 0 {
                        return Err(format!(
                            "with {} pods each top switch has {} links per pod, which must divide the {} uplinks per pod switch",
                            c.pods,
                            c.parallel(),
                            top_up
                        ));
                    }
                    let n = c.down.iter().fold(c.pods as u128, |acc, &d| acc.saturating_mul(d as u128));
                    // Links between tier t and t+1: (N / E_t) * (u_1 ... u_t). Bounding their sum
                    // keeps every count in the closed forms inside 64 bits.
                    let (mut e, mut ups, mut links) = (1u128, 1u128, n);
                    for t in 1..c.tiers as usize {
                        e = e.saturating_mul(c.down[t - 1] as u128);
                        ups = ups.saturating_mul(c.up(t) as u128);
                        links = links.saturating_add((n / e.max(1)).saturating_mul(ups));
                    }
                    if links > 1 << 56 {
                        return Err(format!("{} has more than 2^56 links", self.label()));
                    }
                    n
                } else {
                    c.k as u128
                }
            }
            Topology::Rail(r) => {
                if r.k < 4 || r.k % 2 == 1 {
                    return Err(format!("a rail-optimised fabric needs an even radix k >= 4, got k={}", r.k));
                }
                if r.gpus == 0 || r.units == 0 {
                    return Err("gpus and units must be at least 1".into());
                }
                let leaves = r.gpus as u128 * r.units as u128;
                if leaves % 2 == 1 || leaves > r.k as u128 || r.k as u128 % leaves != 0 {
                    return Err(format!(
                        "gpus*units = {leaves} leaves must be even and divide the spine radix k={}",
                        r.k
                    ));
                }
                leaves * (r.k / 2) as u128
            }
            Topology::Dragonfly(d) => {
                if d.p == 0 || d.a == 0 || d.h == 0 || d.g == 0 {
                    return Err(format!("dragonfly p, a, h and g must be at least 1, got p={} a={} h={} g={}", d.p, d.a, d.h, d.g));
                }
                // The closed forms loop over router pairs and global ports (a^3 h steps): keep
                // routers at or below 256 ports, the largest switch ASICs sold today.
                let radix = d.p as u128 + d.a as u128 + d.h as u128 - 1;
                if radix > 256 {
                    return Err(format!("dragonfly router radix p+a-1+h = {radix} exceeds 256"));
                }
                let max = d.a as u128 * d.h as u128 + 1;
                if d.g as u128 > max {
                    return Err(format!("a dragonfly with a={} h={} has at most a*h+1 = {max} groups, got g={}", d.a, d.h, d.g));
                }
                d.p as u128 * d.a as u128 * d.g as u128
            }
            Topology::Torus(t) => {
                if t.k < 2 {
                    return Err(format!("a torus or mesh needs k >= 2 nodes per dimension, got k={}", t.k));
                }
                if t.n == 0 || t.n > 12 {
                    return Err(format!("dimensions n must be 1 to 12, got {}", t.n));
                }
                if t.cube == 0 {
                    return Err("cube must be at least 1".into());
                }
                (t.k as u128).checked_pow(t.n).unwrap_or(u128::MAX)
            }
        };
        if endpoints > MAX_ENDPOINTS {
            return Err(format!("{} has more than 2^50 endpoints", self.label()));
        }
        Ok(())
    }
}

fn ratio(down: u64, up: u64) -> String {
    let g = gcd(down, up);
    format!("{}:{}", down / g, up / g)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

fn parse_count(key: &str, value: &str) -> Result<u64, String> {
    let v: i128 = value.trim().parse().map_err(|_| format!("{key}={value} is not a whole number"))?;
    if v <= 0 {
        return Err(format!("{key} must be positive, got {v}"));
    }
    u64::try_from(v).map_err(|_| format!("{key}={value} is too large"))
}

/// `1:1/3:1`: one down:up ratio per tier below the top, turned into down ports for radix k.
fn parse_oversub(k: u64, text: &str) -> Result<Vec<u64>, String> {
    text.split('/')
        .map(|r| {
            let (d, u) = r.split_once(':').ok_or_else(|| format!("oversubscription '{r}' must be down:up, such as 3:1"))?;
            let (d, u) = (parse_count("down", d)?, parse_count("up", u)?);
            let (kk, dd, uu) = (k as u128, d as u128, u as u128);
            if (kk * dd) % (dd + uu) != 0 {
                return Err(format!("ratio {d}:{u} does not split k={k} ports into whole numbers"));
            }
            Ok((kk * dd / (dd + uu)) as u64)
        })
        .collect()
}

/// Parse `family:key=value,...` into a validated topology.
pub fn parse(text: &str) -> Result<Topology, String> {
    let (family, rest) = text.split_once(':').unwrap_or((text, ""));
    let mut kv = BTreeMap::new();
    for part in rest.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| format!("'{part}' is not key=value"))?;
        kv.insert(k.trim().to_string(), v.trim().to_string());
    }
    let mut take = |key: &str| kv.remove(key);
    let need = |key: &str, v: Option<String>| -> Result<u64, String> {
        let v = v.ok_or_else(|| format!("{family} needs {key}=..."))?;
        parse_count(key, &v)
    };
    let opt = |key: &str, v: Option<String>, default: u64| -> Result<u64, String> {
        v.map_or(Ok(default), |v| parse_count(key, &v))
    };
    let topo = match family.trim() {
        "fat-tree" => {
            let k = need("k", take("k"))?;
            if k % 2 == 1 {
                return Err(format!("a fat-tree needs an even k, got k={k}"));
            }
            Topology::Clos(Clos::fat_tree(k))
        }
        "clos" => {
            let k = need("k", take("k"))?;
            let tiers = need("tiers", take("tiers"))?;
            if tiers > 6 {
                return Err(format!("tiers must be 1 to 6, got {tiers}"));
            }
            let tiers = tiers as u32;
            if k % 2 == 1 {
                return Err(format!("a Clos needs an even radix k, got k={k}"));
            }
            let down = match take("oversub") {
                Some(o) => parse_oversub(k, &o)?,
                None => vec![k / 2; tiers.saturating_sub(1) as usize],
            };
            let pods = opt("pods", take("pods"), if tiers == 1 { 1 } else { k })?;
            Topology::Clos(Clos { k, tiers, down, pods })
        }
        "rail" => Topology::Rail(Rail {
            k: need("k", take("k"))?,
            gpus: need("gpus", take("gpus"))?,
            units: need("units", take("units"))?,
        }),
        "dragonfly" => {
            let (p, a, h) = (need("p", take("p"))?, need("a", take("a"))?, need("h", take("h"))?);
            let g = opt("g", take("g"), a.saturating_mul(h).saturating_add(1))?;
            Topology::Dragonfly(Dragonfly { p, a, h, g })
        }
        "torus" | "mesh" => {
            let k = need("k", take("k"))?;
            let n = need("n", take("n"))?;
            let n = u32::try_from(n).map_err(|_| format!("n={n} is too large"))?;
            let cube = opt("cube", take("cube"), 4)?;
            Topology::Torus(Torus { k, n, wrap: family.trim() == "torus", cube })
        }
        other => {
            return Err(format!("unknown topology '{other}' (use fat-tree, clos, rail, dragonfly, torus, mesh)"));
        }
    };
    if let Some(extra) = kv.keys().next() {
        return Err(format!("{family} has no parameter '{extra}'"));
    }
    topo.validate()?;
    Ok(topo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_but_valid_topologies_have_finite_closed_forms() {
        for spec in ["torus:k=33554432,n=2", "mesh:k=1125899906842624,n=1", "rail:k=1099511627776,gpus=2,units=1", "clos:k=1048576,tiers=3,pods=2"] {
            let t = parse(spec).unwrap();
            let m = crate::closed::metrics(&t);
            assert!(m.avg_hops.is_finite() && m.avg_hops > 0.0, "{spec}");
        }
    }

    #[test]
    fn good_specs_parse() {
        assert_eq!(parse("fat-tree:k=48").unwrap(), Topology::Clos(Clos::fat_tree(48)));
        let Topology::Clos(c) = parse("clos:k=64,tiers=3,oversub=1:1/7:1").unwrap() else { panic!() };
        assert_eq!(c.down, vec![32, 56]);
        assert_eq!(c.pods, 64);
        let Topology::Dragonfly(d) = parse("dragonfly:p=4,a=8,h=4").unwrap() else { panic!() };
        assert_eq!(d.g, 33);
        assert!(parse("torus:k=16,n=3").is_ok());
        assert!(parse("rail:k=64,gpus=8,units=8").is_ok());
    }

    proptest::proptest! {
        #[test]
        fn parsing_never_panics(family in "(fat-tree|clos|rail|dragonfly|torus|mesh)",
                                keys in proptest::collection::vec(("(k|tiers|pods|oversub|gpus|units|p|a|h|g|n|cube)", "-?[0-9]{1,22}(:[0-9]{1,3})?"), 0..6)) {
            let body: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let text = format!("{family}:{}", body.join(","));
            match parse(&text) {
                Ok(t) => {
                    proptest::prop_assert!(t.validate().is_ok());
                    let _ = crate::closed::metrics(&t);
                }
                Err(e) => proptest::prop_assert!(!e.is_empty() && !e.contains('\n')),
            }
        }
    }

    #[test]
    fn bad_specs_are_rejected_with_one_line() {
        for bad in [
            "fat-tree:k=5",
            "fat-tree:k=0",
            "fat-tree:k=-4",
            "clos:k=64,tiers=3,pods=3",
            "clos:k=64,tiers=3,oversub=2:1",
            "clos:k=64,tiers=3,oversub=1:1/1:1,pods=2,x=1",
            "dragonfly:p=4,a=8,h=4,g=34",
            "dragonfly:p=0,a=8,h=4",
            "torus:k=1,n=3",
            "torus:k=4,n=0",
            "mesh:k=2",
            "rail:k=64,gpus=8,units=16",
            "hypercube:k=2",
            "torus:k=1000,n=12",
            "clos:k=1099511627776,tiers=6,oversub=1:1099511627775/1:1099511627775/1:1099511627775/1:1099511627775/1:1099511627775,pods=2",
            "dragonfly:p=1,a=100000,h=1",
            "clos:k=64,tiers=4294967298",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(!err.contains('\n') && !err.is_empty(), "{bad}: {err}");
        }
    }
}
