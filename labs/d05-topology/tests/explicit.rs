//! Closed forms against explicit graphs, for every small size the test budget allows.

use d05_topology::build::{bisection_sides, build, ring_order};
use d05_topology::closed::{Metrics, metrics};
use d05_topology::graph::Graph;
use d05_topology::measure::{Sources, differences, measure, measure_graph, ring_mapping_explicit};
use d05_topology::model::ring_mapping;
use d05_topology::spec::{Clos, Dragonfly, Rail, Topology, Torus};

/// Build, measure from every endpoint, and compare every metric and the ring mapping.
fn agrees(t: &Topology) {
    assert!(t.validate().is_ok(), "{t}");
    let g = build(t);
    let closed = metrics(t);
    let explicit = measure_graph(t, &g, Sources::All, true).metrics;
    let diff = differences(&closed, &explicit);
    assert!(diff.is_empty(), "{t}: {diff:?}\nclosed   {closed:?}\nexplicit {explicit:?}");
    if closed.bisection.is_some() {
        assert_eq!(closed.bisection, explicit.bisection, "{t}");
    }
    let order = ring_order(t);
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, (0..closed.endpoints as u32).collect::<Vec<_>>(), "{t}: ring visits every endpoint once");
    assert_eq!(ring_mapping_explicit(t, &g), ring_mapping(t), "{t}: ring mapping");
}

#[test]
fn clos_closed_forms_match_explicit_graphs() {
    let mut tried = 0;
    for k in [2u64, 4, 6, 8, 10] {
        for tiers in 1..=3u32 {
            let downs: Vec<Vec<u64>> = match tiers {
                1 => vec![vec![]],
                2 => (1..k).map(|d| vec![d]).collect(),
                _ => (1..k).flat_map(|a| (1..k).map(move |b| vec![a, b])).collect(),
            };
            for down in downs {
                for pods in (2..=k).step_by(2) {
                    let c = Topology::Clos(Clos { k, tiers, down: down.clone(), pods: if tiers == 1 { 1 } else { pods } });
                    if c.validate().is_err() || metrics(&c).endpoints > 600 {
                        continue;
                    }
                    agrees(&c);
                    tried += 1;
                    if tiers == 1 {
                        break;
                    }
                }
            }
        }
    }
    agrees(&Topology::Clos(Clos::non_blocking(4, 4, 4)));
    assert!(tried > 40, "only {tried} Clos shapes tried");
}

#[test]
fn rail_closed_forms_match_explicit_graphs() {
    let mut tried = 0;
    for k in [4u64, 6, 8, 10, 16, 30, 32] {
        for gpus in 1..=8 {
            for units in 1..=8 {
                let r = Topology::Rail(Rail { k, gpus, units });
                if r.validate().is_ok() && metrics(&r).endpoints <= 1024 {
                    agrees(&r);
                    tried += 1;
                }
            }
        }
    }
    assert!(tried >= 10, "only {tried} rail shapes tried");
}

#[test]
fn dragonfly_closed_forms_match_explicit_graphs() {
    let mut tried = 0;
    for p in 1..=4u64 {
        for a in 1..=6u64 {
            for h in 1..=3u64 {
                for g in 1..=a * h + 1 {
                    agrees(&Topology::Dragonfly(Dragonfly { p, a, h, g }));
                    tried += 1;
                }
            }
        }
    }
    assert!(tried > 150);
}

#[test]
fn torus_and_mesh_closed_forms_match_explicit_graphs() {
    for wrap in [true, false] {
        for n in 1..=3u32 {
            for k in 2..=10u64 {
                if k.pow(n) > 1000 {
                    continue;
                }
                for cube in 1..=3 {
                    agrees(&Topology::Torus(Torus { k, n, wrap, cube }));
                }
            }
        }
    }
    agrees(&Topology::Torus(Torus { k: 2, n: 6, wrap: true, cube: 4 }));
}

/// The smallest cut over every balanced split of the endpoints (endpoint 0 fixed on side A).
fn exact_bisection(g: &Graph) -> u64 {
    let n = g.endpoints().len();
    let mut best = u64::MAX;
    let half = n / 2;
    // Every subset of size `half` that contains endpoint 0, by bit mask.
    for mask in 0u32..(1 << (n - 1)) {
        if mask.count_ones() as usize != half - 1 {
            continue;
        }
        let side: Vec<bool> = (0..n).map(|e| e == 0 || (mask >> (e - 1)) & 1 == 1).collect();
        best = best.min(g.min_cut(&side));
    }
    best
}

#[test]
fn stated_bisection_is_the_exact_minimum_on_small_graphs() {
    let exact_cases = [
        Topology::Clos(Clos::non_blocking(4, 1, 1)),
        Topology::Clos(Clos::non_blocking(4, 2, 4)),
        Topology::Clos(Clos::non_blocking(4, 2, 2)),
        Topology::Clos(Clos::fat_tree(4)),
        Topology::Clos(Clos { k: 4, tiers: 2, down: vec![3], pods: 4 }),
        Topology::Clos(Clos { k: 4, tiers: 3, down: vec![1, 3], pods: 4 }),
        Topology::Rail(Rail { k: 4, gpus: 2, units: 1 }),
        Topology::Rail(Rail { k: 4, gpus: 2, units: 2 }),
        Topology::Rail(Rail { k: 4, gpus: 4, units: 1 }),
        Topology::Torus(Torus { k: 4, n: 1, wrap: true, cube: 2 }),
        Topology::Torus(Torus { k: 8, n: 1, wrap: true, cube: 2 }),
        Topology::Torus(Torus { k: 4, n: 2, wrap: true, cube: 2 }),
        Topology::Torus(Torus { k: 2, n: 4, wrap: true, cube: 2 }),
        Topology::Torus(Torus { k: 4, n: 2, wrap: false, cube: 2 }),
        Topology::Torus(Torus { k: 6, n: 2, wrap: false, cube: 2 }),
    ];
    for t in &exact_cases {
        let g = build(t);
        assert!(g.endpoints().len() <= 36);
        if g.endpoints().len() > 16 {
            continue;
        }
        assert_eq!(Some(exact_bisection(&g)), metrics(t).bisection, "{t}");
    }
    // A dragonfly's stated halves keep groups whole: an upper bound on the true minimum in
    // general, and the exact minimum on every dragonfly small enough to search.
    for d in [
        Dragonfly::max_groups(1, 2, 1),
        Dragonfly::max_groups(2, 2, 1),
        Dragonfly::max_groups(1, 2, 2),
        Dragonfly::max_groups(1, 3, 1),
        Dragonfly { p: 1, a: 4, h: 2, g: 4 },
        Dragonfly { p: 2, a: 2, h: 2, g: 4 },
        Dragonfly { p: 1, a: 4, h: 1, g: 4 },
        Dragonfly { p: 2, a: 4, h: 1, g: 2 },
        Dragonfly { p: 1, a: 3, h: 2, g: 5 },
    ] {
        let t = Topology::Dragonfly(d);
        let g = build(&t);
        let exact = exact_bisection(&g);
        let stated = metrics(&t).bisection.unwrap();
        assert_eq!(exact, stated, "{t}");
        assert_eq!(g.min_cut(&bisection_sides(&t)), stated, "{t}");
    }
}

#[test]
fn representative_sources_give_the_exact_averages_on_larger_graphs() {
    for t in [
        Topology::Clos(Clos::fat_tree(16)),
        Topology::Clos(Clos { k: 16, tiers: 3, down: vec![8, 12], pods: 16 }),
        Topology::Rail(Rail { k: 32, gpus: 8, units: 4 }),
        Topology::Dragonfly(Dragonfly::max_groups(4, 8, 4)),
        Topology::Dragonfly(Dragonfly { p: 4, a: 8, h: 4, g: 12 }),
        Topology::Torus(Torus { k: 10, n: 3, wrap: true, cube: 4 }),
    ] {
        let closed: Metrics = metrics(&t);
        let m = measure(&t, Sources::Representatives, true);
        assert!(m.sources < closed.endpoints as usize);
        assert_eq!(differences(&closed, &m.metrics), Vec::<&str>::new(), "{t}");
    }
}

fn topology_strategy() -> impl proptest::strategy::Strategy<Value = Topology> {
    use proptest::prelude::*;
    prop_oneof![
        (2u64..=8, 2u32..=3, proptest::collection::vec(1u64..16, 2), 1u64..=8).prop_map(|(half, tiers, downs, pods)| {
            let k = 2 * half;
            let down: Vec<u64> = downs.iter().take(tiers as usize - 1).map(|d| 1 + d % (k - 1)).collect();
            Topology::Clos(Clos { k, tiers, down, pods: 2 * pods })
        }),
        (1u64..=6, 1u64..=10, 1u64..=6, 0u64..1000).prop_map(|(p, a, h, g)| Topology::Dragonfly(Dragonfly { p, a, h, g: 1 + g % (a * h + 1) })),
        (2u64..=12, 1u32..=3, any::<bool>(), 1u64..=5).prop_map(|(k, n, wrap, cube)| Topology::Torus(Torus { k, n, wrap, cube })),
        (2u64..=16, 1u64..=8, 1u64..=8).prop_map(|(half, gpus, units)| Topology::Rail(Rail { k: 2 * half, gpus, units })),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Random shapes, measured from representative endpoints (exact by symmetry) and, for the
    /// bisection, by max-flow: every metric equals its closed form.
    #[test]
    fn random_shapes_agree_with_their_closed_forms(t in topology_strategy()) {
        proptest::prop_assume!(t.validate().is_ok());
        let closed = metrics(&t);
        proptest::prop_assume!(closed.endpoints <= 4000);
        let sources = if matches!(&t, Topology::Torus(x) if !x.wrap) { Sources::All } else { Sources::Representatives };
        let m = measure(&t, sources, true);
        proptest::prop_assert_eq!(differences(&closed, &m.metrics), Vec::<&str>::new(), "{}", t);
    }
}
