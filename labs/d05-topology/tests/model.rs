//! The sweep, the collective model on topologies, the scale boundaries and the CLI's bad input.

use clap::Parser;
use d01_scaling::collectives::Allreduce;
use d01_scaling::cost::Machine;
use d05_topology::closed::metrics;
use d05_topology::model::{NetParams, allreduce_ring, alltoall, dragonfly_routing, ring_mapping};
use d05_topology::spec::{Clos, Dragonfly, Topology};
use d05_topology::sweep::{Family, design, largest_clos, sizes, sweep};

#[test]
fn every_design_holds_n_and_the_sweep_reaches_a_million() {
    for n in sizes(1 << 20) {
        for f in Family::ALL {
            if let Some(t) = design(f, n) {
                assert!(t.validate().is_ok(), "{t}");
                assert!(metrics(&t).endpoints >= n, "{t} < {n}");
            } else {
                assert_eq!(f, Family::Dragonfly, "only the radix-64 dragonfly runs out");
                assert!(n > 262_656);
            }
        }
    }
    let points = sweep(1 << 20);
    assert!(points.iter().any(|p| p.n == 1_000_000 && p.family == Family::FatTree));
    // Full bisection for the non-blocking fat-tree at every size.
    for p in points.iter().filter(|p| p.family == Family::FatTree) {
        assert_eq!(p.metrics.bisection_fraction(), Some(1.0));
    }
}

#[test]
fn largest_clos_is_two_times_half_radix_to_the_tiers() {
    assert_eq!(largest_clos(64, 2), 2_048);
    assert_eq!(largest_clos(64, 3), 65_536);
    assert_eq!(largest_clos(128, 2), 8_192);
    assert_eq!(largest_clos(128, 3), 524_288);
    for k in [8u64, 16, 32] {
        for l in 1..=4u32 {
            assert_eq!(largest_clos(k, l), 2 * (k / 2).pow(l));
        }
    }
}

#[test]
fn ring_allreduce_is_d01_ring_with_the_hops_added_to_alpha() {
    let net = NetParams::default();
    let t = Topology::Clos(Clos::fat_tree(16));
    let hops = ring_mapping(&t).max_hops;
    for (n, p) in [(0.0, 1u64), (1e6, 7), (1e9, 1024)] {
        let m = Machine::new(net.alpha + hops as f64 * net.per_hop, net.link, net.reduce);
        assert_eq!(allreduce_ring(&t, &net, n, p), Allreduce::Ring.cost(&m, n, p));
    }
    // One rank costs nothing.
    assert_eq!(allreduce_ring(&t, &net, 1e9, 1).total(), 0.0);
}

#[test]
fn alltoall_is_bisection_bound_only_below_half_bisection() {
    let net = NetParams::default();
    let bytes = 64.0 * 1024.0 * 1024.0;
    let fat = metrics(&Topology::Clos(Clos::fat_tree(16)));
    let thin = metrics(&Topology::Clos(Clos { k: 16, tiers: 3, down: vec![8, 14], pods: 16 }));
    let ranks = 1024;
    let injection = bytes * (ranks - 1) as f64 / ranks as f64 / net.link;
    assert!(alltoall(&fat, &net, bytes, ranks) < 1.01 * injection + 1.0);
    // 7:1 below the top leaves 1/7 of full bisection: 3.5 times slower than injection.
    let f = thin.bisection_fraction().unwrap();
    assert!((f - 1.0 / 7.0).abs() < 1e-12);
    assert!(alltoall(&thin, &net, bytes, ranks) > 3.4 * injection);
}

#[test]
fn valiant_beats_minimal_on_the_adversarial_shift_and_loses_on_uniform() {
    let net = NetParams::default();
    for d in [Dragonfly::max_groups(4, 8, 4), Dragonfly::max_groups(16, 32, 16), Dragonfly { p: 2, a: 4, h: 2, g: 3 }] {
        let r = dragonfly_routing(&d, &net, 1e8);
        assert!(r.shift_valiant <= r.shift_minimal, "{d:?}");
        assert!(r.uniform_minimal <= r.uniform_valiant, "{d:?}");
    }
}

#[test]
fn scale_boundaries_name_the_published_clos_limits() {
    let rows = d05_topology::scale_boundaries();
    let ats: Vec<f64> = rows.iter().map(|r| r.at).collect();
    for n in [2_048.0, 65_536.0, 262_656.0] {
        assert!(ats.contains(&n), "{n} missing from {ats:?}");
    }
    assert!(ats.windows(2).all(|w| w[0] <= w[1]), "sorted by scale");
    assert!(rows.iter().all(|r| r.module == "d05"));
}

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: d05_topology::cli::Command,
}

#[test]
fn bad_topologies_are_rejected_before_running() {
    for bad in ["fat-tree:k=7", "fat-tree:k=0", "dragonfly:p=4,a=8,h=4,g=34", "torus:k=1,n=2", "clos:k=-4,tiers=2"] {
        let err = Cli::try_parse_from(["d05", "metrics", bad]).err().expect(bad);
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation, "{bad}");
    }
    let ok = Cli::try_parse_from(["d05", "metrics", "fat-tree:k=8", "--explicit"]).unwrap();
    let t = d05_topology::cli::run(&ok.command).unwrap();
    assert!(t.render_text().contains("closed form == explicit graph"));
}

#[test]
fn published_transcripts_are_deterministic() {
    for args in [["d05", "families"], ["d05", "sweep"], ["d05", "boundaries"], ["d05", "draw"]] {
        let cli = Cli::try_parse_from(args).unwrap();
        let a = d05_topology::cli::run(&cli.command).unwrap();
        let b = d05_topology::cli::run(&cli.command).unwrap();
        assert_eq!(a.render_json(), b.render_json());
    }
}

#[test]
fn prices_change_the_sweep_and_bad_prices_are_rejected() {
    let cheap_optics = Cli::try_parse_from(["d05", "sweep", "--optical-usd", "0"]).unwrap();
    let text = d05_topology::cli::run(&cheap_optics.command).unwrap().render_text();
    assert!(text.contains("given on the command line"));
    let default = d05_topology::cli::run(&Cli::try_parse_from(["d05", "sweep"]).unwrap().command).unwrap().render_text();
    assert_ne!(text, default);
    for bad in ["-1", "abc", "inf"] {
        assert!(Cli::try_parse_from(["d05", "sweep", "--port-usd", bad]).is_err(), "{bad}");
    }
}
