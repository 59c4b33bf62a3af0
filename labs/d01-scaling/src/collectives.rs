//! What each collective algorithm costs in the alpha-beta-gamma model.
//!
//! `n` is the message size in bytes as MPI users think of it: for allreduce, reduce-scatter and
//! broadcast the size of each rank's whole buffer; for allgather the size of the gathered result;
//! for alltoall the total each rank sends. Formulas follow Thakur, Rabenseifner and Gropp
//! (IJHPCA 2005) as kept in MPICH's `src/mpi/coll/` headers, with (p-1)/p factors kept exact so
//! that one rank costs nothing. `lg` is log2; where an algorithm needs a power of two we write
//! floor/ceil explicitly.
//!
//! Architecture invariant: every function here returns zero for p = 1, and is affine in `n`
//! (a fixed part plus a per-byte part), which is what makes [`crossover`] a closed form.

use serde::Serialize;

use crate::cost::{Cost, Machine};

fn lg_floor(p: u64) -> f64 {
    (63 - p.leading_zeros()) as f64
}

fn lg_ceil(p: u64) -> f64 {
    if p <= 1 { 0.0 } else { (64 - (p - 1).leading_zeros()) as f64 }
}

fn is_pow2(p: u64) -> bool {
    p.is_power_of_two()
}

/// The fraction of a buffer each rank does not already own: (p - 1) / p.
fn rest(p: u64) -> f64 {
    (p - 1) as f64 / p as f64
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Allreduce {
    /// Ring reduce-scatter then ring allgather: bandwidth-optimal, latency linear in p.
    Ring,
    /// Exchange whole buffers with partner rank ^ 2^k: latency-optimal, bandwidth lg p times n.
    RecursiveDoubling,
    /// Recursive-halving reduce-scatter then recursive-doubling allgather (Rabenseifner).
    Rabenseifner,
    /// Binomial-tree reduce to a root, then binomial broadcast.
    BinomialReduceBcast,
}

impl Allreduce {
    pub const ALL: [Allreduce; 4] =
        [Allreduce::Ring, Allreduce::RecursiveDoubling, Allreduce::Rabenseifner, Allreduce::BinomialReduceBcast];

    pub fn name(&self) -> &'static str {
        match self {
            Allreduce::Ring => "ring",
            Allreduce::RecursiveDoubling => "recursive-doubling",
            Allreduce::Rabenseifner => "rabenseifner",
            Allreduce::BinomialReduceBcast => "binomial",
        }
    }

    // ANCHOR: allreduce_cost
    /// The cost of an allreduce of an `n`-byte buffer on `p` ranks.
    pub fn cost(&self, m: &Machine, n: f64, p: u64) -> Cost {
        assert!(p >= 1, "a collective needs at least one rank");
        let pf = p as f64;
        match self {
            // 2(p-1) steps, each moving n/p bytes; the reduce-scatter half reduces n(p-1)/p.
            Allreduce::Ring => Cost::from_counts(m, 2.0 * (pf - 1.0), 2.0 * n * rest(p), n * rest(p)),
            // Power of two: lg p exchanges of the whole buffer. Otherwise the extra ranks first
            // fold into a partner (one message, one reduction) and get the result back at the end.
            Allreduce::RecursiveDoubling => {
                if is_pow2(p) {
                    let l = lg_floor(p);
                    Cost::from_counts(m, l, n * l, n * l)
                } else {
                    let l = lg_floor(p);
                    Cost::from_counts(m, l + 2.0, n * (l + 2.0), n * (l + 1.0))
                }
            }
            // MPICH's header: 2 lg p alpha + 2n(p-1)/p beta + n(p-1)/p gamma for p = 2^k, and
            // (2 floor(lg p) + 2) alpha + (2(p-1)/p + 2) n beta + n(1 + (p-1)/p) gamma otherwise.
            Allreduce::Rabenseifner => {
                let l = lg_floor(p);
                if is_pow2(p) {
                    Cost::from_counts(m, 2.0 * l, 2.0 * n * rest(p), n * rest(p))
                } else {
                    Cost::from_counts(m, 2.0 * l + 2.0, (2.0 * rest(p) + 2.0) * n, n * (1.0 + rest(p)))
                }
            }
            // ceil(lg p) rounds of reduce, each sending and reducing the whole buffer, then the same
            // rounds of broadcast.
            Allreduce::BinomialReduceBcast => {
                let l = lg_ceil(p);
                Cost::from_counts(m, 2.0 * l, 2.0 * n * l, n * l)
            }
        }
    }
    // ANCHOR_END: allreduce_cost
}

// ANCHOR: lower_bound
/// The allreduce bandwidth lower bound: every rank must send and receive at least 2(p-1)/p * n
/// bytes (Patarasuk and Yuan, JPDC 2009), so T >= 2(p-1)/p * n / B.
pub fn allreduce_lower_bound(m: &Machine, n: f64, p: u64) -> f64 {
    2.0 * rest(p) * n * m.beta
}
// ANCHOR_END: lower_bound

// ANCHOR: in_network
/// An allreduce reduced inside the switch (NVLink SHARP, InfiniBand SHARP): each rank owns 1/p
/// of the buffer, the switch pulls that slice from every rank, reduces it and multicasts the
/// result back. Per rank and direction that is n + n/p bytes in two steps, whatever p is, and
/// no reduction arithmetic on the rank. With nccl-tests' allreduce factor 2(p-1)/p the busbw this
/// reports is 2(p-1)/(p+1) times the link bandwidth: above line rate for p > 3.
pub fn in_network_allreduce(m: &Machine, n: f64, p: u64) -> Cost {
    if p <= 1 {
        return Cost::default();
    }
    Cost::from_counts(m, 2.0, n + n / p as f64, 0.0)
}
// ANCHOR_END: in_network

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Allgather {
    Ring,
    RecursiveDoubling,
    Bruck,
}

impl Allgather {
    pub fn name(&self) -> &'static str {
        match self {
            Allgather::Ring => "ring",
            Allgather::RecursiveDoubling => "recursive-doubling",
            Allgather::Bruck => "bruck",
        }
    }

    /// `n` is the size of the gathered result; each rank contributes n/p.
    pub fn cost(&self, m: &Machine, n: f64, p: u64) -> Cost {
        match self {
            Allgather::Ring => Cost::from_counts(m, (p - 1) as f64, n * rest(p), 0.0),
            // Recursive doubling needs a power of two; Bruck's shifts work for any p in ceil(lg p).
            Allgather::RecursiveDoubling | Allgather::Bruck => Cost::from_counts(m, lg_ceil(p), n * rest(p), 0.0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceScatter {
    RecursiveHalving,
    Pairwise,
    Ring,
}

impl ReduceScatter {
    pub fn name(&self) -> &'static str {
        match self {
            ReduceScatter::RecursiveHalving => "recursive-halving",
            ReduceScatter::Pairwise => "pairwise",
            ReduceScatter::Ring => "ring",
        }
    }

    /// `n` is each rank's input buffer; each rank ends with n/p reduced bytes.
    pub fn cost(&self, m: &Machine, n: f64, p: u64) -> Cost {
        match self {
            ReduceScatter::RecursiveHalving => Cost::from_counts(m, lg_ceil(p), n * rest(p), n * rest(p)),
            ReduceScatter::Pairwise | ReduceScatter::Ring => {
                Cost::from_counts(m, (p - 1) as f64, n * rest(p), n * rest(p))
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Alltoall {
    Bruck,
    Pairwise,
}

impl Alltoall {
    pub fn name(&self) -> &'static str {
        match self {
            Alltoall::Bruck => "bruck",
            Alltoall::Pairwise => "pairwise",
        }
    }

    /// `n` is the total each rank sends (n/p to every rank, itself included).
    pub fn cost(&self, m: &Machine, n: f64, p: u64) -> Cost {
        match self {
            // ceil(lg p) rounds, each forwarding about half of the data.
            Alltoall::Bruck => Cost::from_counts(m, lg_ceil(p), n / 2.0 * lg_ceil(p), 0.0),
            // p - 1 exchanges of n/p bytes each.
            Alltoall::Pairwise => Cost::from_counts(m, (p - 1) as f64, n * rest(p), 0.0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Broadcast {
    Binomial,
    /// Scatter from the root, then recursive-doubling allgather (van de Geijn).
    ScatterAllgather,
    /// Scatter, then ring allgather.
    ScatterRingAllgather,
}

impl Broadcast {
    pub fn name(&self) -> &'static str {
        match self {
            Broadcast::Binomial => "binomial",
            Broadcast::ScatterAllgather => "scatter-allgather",
            Broadcast::ScatterRingAllgather => "scatter-ring-allgather",
        }
    }

    pub fn cost(&self, m: &Machine, n: f64, p: u64) -> Cost {
        match self {
            Broadcast::Binomial => Cost::from_counts(m, lg_ceil(p), n * lg_ceil(p), 0.0),
            Broadcast::ScatterAllgather => Cost::from_counts(m, 2.0 * lg_ceil(p), 2.0 * n * rest(p), 0.0),
            Broadcast::ScatterRingAllgather => {
                Cost::from_counts(m, lg_ceil(p) + (p - 1) as f64, 2.0 * n * rest(p), 0.0)
            }
        }
    }
}

// ANCHOR: crossover
/// The message size at which two affine cost curves cross: `Some(n)` with n > 0 where
/// `a(n) = b(n)`, `None` if one is never slower than the other for n > 0.
pub fn crossover(a: impl Fn(f64) -> f64, b: impl Fn(f64) -> f64) -> Option<f64> {
    // Both are affine in n, so their difference is d0 + d1 * n.
    let d0 = a(0.0) - b(0.0);
    let d1 = (a(1e6) - b(1e6) - d0) / 1e6;
    if d1 == 0.0 {
        return None;
    }
    let n = -d0 / d1;
    (n > 0.0 && n.is_finite()).then_some(n)
}
// ANCHOR_END: crossover

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn machine() -> Machine {
        Machine::new(5e-6, 25e9, 100e9)
    }

    #[test]
    fn logs() {
        assert_eq!(lg_floor(1), 0.0);
        assert_eq!(lg_floor(5), 2.0);
        assert_eq!(lg_ceil(5), 3.0);
        assert_eq!(lg_ceil(8), 3.0);
        assert_eq!(lg_ceil(1), 0.0);
    }

    #[test]
    fn one_rank_costs_nothing() {
        let m = machine();
        for a in Allreduce::ALL {
            assert_eq!(a.cost(&m, 1e9, 1).total(), 0.0, "{a:?}");
        }
        for a in [Allgather::Ring, Allgather::RecursiveDoubling, Allgather::Bruck] {
            assert_eq!(a.cost(&m, 1e9, 1).total(), 0.0);
        }
        for a in [ReduceScatter::RecursiveHalving, ReduceScatter::Pairwise, ReduceScatter::Ring] {
            assert_eq!(a.cost(&m, 1e9, 1).total(), 0.0);
        }
        for a in [Alltoall::Bruck, Alltoall::Pairwise] {
            assert_eq!(a.cost(&m, 1e9, 1).total(), 0.0);
        }
        for a in [Broadcast::Binomial, Broadcast::ScatterAllgather, Broadcast::ScatterRingAllgather] {
            assert_eq!(a.cost(&m, 1e9, 1).total(), 0.0);
        }
        assert_eq!(in_network_allreduce(&m, 1e9, 1).total(), 0.0);
    }

    #[test]
    fn in_network_busbw_exceeds_line_rate_beyond_three_ranks() {
        let m = Machine::new(0.0, 450e9, f64::INFINITY);
        for p in [2u64, 3, 4, 8, 72] {
            let n = 1e9;
            let busbw = n / in_network_allreduce(&m, n, p).total() * 2.0 * (p - 1) as f64 / p as f64;
            let expected = m.bandwidth() * 2.0 * (p - 1) as f64 / (p + 1) as f64;
            assert!((busbw - expected).abs() < 1e-3 * expected);
            assert_eq!(busbw > m.bandwidth() * (1.0 + 1e-12), p > 3, "p = {p}");
        }
    }

    #[test]
    fn crossover_of_ring_and_recursive_doubling_matches_its_closed_form() {
        let m = machine();
        let p = 64u64;
        let pf = p as f64;
        let l = pf.log2();
        let closed = (2.0 * (pf - 1.0) - l) * m.alpha
            / ((l - 2.0 * (pf - 1.0) / pf) * m.beta + (l - (pf - 1.0) / pf) * m.gamma);
        let n = crossover(|n| Allreduce::Ring.cost(&m, n, p).total(), |n| {
            Allreduce::RecursiveDoubling.cost(&m, n, p).total()
        })
        .unwrap();
        assert!((n - closed).abs() / closed < 1e-9, "{n} vs {closed}");
        // Below it recursive doubling wins, above it the ring does.
        assert!(Allreduce::RecursiveDoubling.cost(&m, n / 2.0, p).total() < Allreduce::Ring.cost(&m, n / 2.0, p).total());
        assert!(Allreduce::Ring.cost(&m, n * 2.0, p).total() < Allreduce::RecursiveDoubling.cost(&m, n * 2.0, p).total());
    }

    proptest! {
        /// The ring's bandwidth term is exactly the lower bound: it is bandwidth-optimal.
        #[test]
        fn ring_bandwidth_term_equals_the_lower_bound(p in 1u64..200_000, n in 0.0f64..1e10) {
            let m = machine();
            let ring = Allreduce::Ring.cost(&m, n, p).bandwidth;
            let lb = allreduce_lower_bound(&m, n, p);
            prop_assert!((ring - lb).abs() <= 1e-12 * lb.max(1e-30));
        }

        /// No algorithm beats the bound.
        #[test]
        fn no_allreduce_beats_the_lower_bound(p in 1u64..200_000, n in 0.0f64..1e10) {
            let m = machine();
            for a in Allreduce::ALL {
                prop_assert!(a.cost(&m, n, p).bandwidth >= allreduce_lower_bound(&m, n, p) * (1.0 - 1e-12));
            }
        }

        /// Latency: the ring is linear in p, the tree-like algorithms logarithmic.
        #[test]
        fn latency_terms_scale_as_stated(k in 1u32..16) {
            let m = machine();
            let p = 1u64 << k;
            let ring = Allreduce::Ring.cost(&m, 0.0, p).latency / m.alpha;
            let rd = Allreduce::RecursiveDoubling.cost(&m, 0.0, p).latency / m.alpha;
            let rab = Allreduce::Rabenseifner.cost(&m, 0.0, p).latency / m.alpha;
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
            prop_assert!(close(ring, 2.0 * (p as f64 - 1.0)));
            prop_assert!(close(rd, k as f64));
            prop_assert!(close(rab, 2.0 * k as f64));
        }

        /// Rabenseifner on a power of two is a reduce-scatter (halving) plus an allgather (doubling).
        #[test]
        fn rabenseifner_is_reduce_scatter_plus_allgather(k in 0u32..17, n in 0.0f64..1e10) {
            let m = machine();
            let p = 1u64 << k;
            let whole = Allreduce::Rabenseifner.cost(&m, n, p).total();
            let parts = ReduceScatter::RecursiveHalving.cost(&m, n, p).total()
                + Allgather::RecursiveDoubling.cost(&m, n, p).total();
            prop_assert!((whole - parts).abs() <= 1e-9 * whole.max(1e-12));
        }

        #[test]
        fn every_cost_is_affine_in_n(p in 1u64..5000, n in 0.0f64..1e9) {
            let m = machine();
            for a in Allreduce::ALL {
                let f = |n: f64| a.cost(&m, n, p).total();
                let lin = f(0.0) + (f(1e6) - f(0.0)) / 1e6 * n;
                prop_assert!((f(n) - lin).abs() <= 1e-9 * f(n).max(1e-12));
            }
        }
    }
}
