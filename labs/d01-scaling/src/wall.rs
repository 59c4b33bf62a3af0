//! Compute plus communication, and the scaling wall.
//!
//! A data-parallel training step on p ranks takes
//!
//! ```text
//! T(p) = serial + parallel / p + T_allreduce(gradient bytes, p)
//! ```
//!
//! `serial` is work every rank repeats (the optimizer step, input pipeline), `parallel` is the
//! compute that splits across ranks, and the gradient allreduce is the cost of talking, from
//! [`crate::collectives`]. Speedup is T(1)/T(p) and efficiency speedup/p. Two walls:
//!
//! * the **efficiency wall**: the first p at which efficiency falls below a threshold;
//! * the **time wall**: the p that minimises T(p); past it more ranks make the step slower.
//!
//! For the ring both have closed forms (below), which the tests check against a numeric sweep.

use serde::Serialize;

use crate::collectives::Allreduce;
use crate::cost::{Cost, Machine};

// ANCHOR: workload
/// One training step's work and the machine it talks over.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Workload {
    /// Seconds every rank spends on work that does not shrink with p.
    pub serial: f64,
    /// Seconds of divisible compute on one rank.
    pub parallel: f64,
    /// Bytes allreduced per step (the gradient).
    pub bytes: f64,
    pub machine: Machine,
}
// ANCHOR_END: workload

/// T(p) split into its terms.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Step {
    pub p: u64,
    pub serial: f64,
    pub compute: f64,
    pub comm: Cost,
}

impl Step {
    pub fn total(&self) -> f64 {
        self.serial + self.compute + self.comm.total()
    }

    /// Which of serial work, divided compute, or one of the communication terms is largest.
    pub fn dominant(&self) -> &'static str {
        let terms = [
            ("serial", self.serial),
            ("compute", self.compute),
            ("latency", self.comm.latency),
            ("bandwidth", self.comm.bandwidth),
            ("reduction", self.comm.compute),
        ];
        terms.iter().fold(terms[0], |best, t| if t.1 > best.1 { *t } else { best }).0
    }
}

// ANCHOR: workload_impl
impl Workload {
    pub fn step(&self, algo: Allreduce, p: u64) -> Step {
        Step {
            p,
            serial: self.serial,
            compute: self.parallel / p as f64,
            comm: algo.cost(&self.machine, self.bytes, p),
        }
    }

    pub fn time(&self, algo: Allreduce, p: u64) -> f64 {
        self.step(algo, p).total()
    }

    pub fn speedup(&self, algo: Allreduce, p: u64) -> f64 {
        self.time(algo, 1) / self.time(algo, p)
    }

    pub fn efficiency(&self, algo: Allreduce, p: u64) -> f64 {
        self.speedup(algo, p) / p as f64
    }

    /// The Amdahl fraction this workload would have with free communication.
    pub fn parallel_fraction(&self) -> f64 {
        self.parallel / (self.serial + self.parallel)
    }
// ANCHOR_END: workload_impl

    // ANCHOR: ring_time_optimal
    /// Ring only: the real p* minimising T(p). With
    /// T(p) = s + w/p + 2(p-1)a + 2(p-1)/p nb + (p-1)/p ng, dT/dp = -(w - 2nb - ng)/p^2 + 2a,
    /// so p* = sqrt((w - 2nb - ng) / 2a). When the numerator is not positive the bandwidth cost of
    /// a second rank already outweighs the compute it saves, and p* = 1.
    pub fn ring_time_optimal_p(&self) -> f64 {
        let m = &self.machine;
        let num = self.parallel - 2.0 * self.bytes * m.beta - self.bytes * m.gamma;
        if num <= 0.0 || m.alpha == 0.0 {
            return if num <= 0.0 { 1.0 } else { f64::INFINITY };
        }
        (num / (2.0 * m.alpha)).sqrt().max(1.0)
    }
    // ANCHOR_END: ring_time_optimal

    // ANCHOR: ring_efficiency_wall
    /// Ring only: the first integer p at which efficiency drops below `threshold`.
    /// E(p) < e  <=>  p T(p) > T(1)/e, and p T(p) = 2a p^2 + (s - 2a + 2nb + ng) p + (w - 2nb - ng)
    /// is increasing for p >= 1, so the wall is floor(r) + 1 for the larger root r of
    /// p T(p) = T(1)/e. Returns 1 if even one rank is below the threshold (impossible for e <= 1).
    pub fn ring_efficiency_wall(&self, threshold: f64) -> u64 {
        let m = &self.machine;
        let t1 = self.serial + self.parallel;
        let c = 2.0 * self.bytes * m.beta + self.bytes * m.gamma;
        let a = 2.0 * m.alpha;
        let b = self.serial - 2.0 * m.alpha + c;
        let k = self.parallel - c - t1 / threshold;
        let r = if a == 0.0 { -k / b } else { (-b + (b * b - 4.0 * a * k).sqrt()) / (2.0 * a) };
        let mut p = (r.floor().max(0.0) as u64) + 1;
        // The closed form lands on the boundary; one step of integer arithmetic settles rounding.
        while p > 1 && self.efficiency(Allreduce::Ring, p - 1) < threshold {
            p -= 1;
        }
        while self.efficiency(Allreduce::Ring, p) >= threshold {
            p += 1;
        }
        p
    }
    // ANCHOR_END: ring_efficiency_wall

    // ANCHOR: log_time_optimal
    /// Rabenseifner (and the other logarithmic-latency algorithms on powers of two): the
    /// continuous optimum. T(x) over x = lg p is w 2^-x + c x + const, convex, so the best power of
    /// two is the floor or ceiling of lg p*. Rabenseifner: p* = (w - 2nb - ng) ln 2 / (2a);
    /// recursive doubling: p* = w ln 2 / (a + nb + ng); binomial: p* = w ln 2 / (2a + 2nb + ng).
    pub fn log_time_optimal_p(&self, algo: Allreduce) -> f64 {
        let m = &self.machine;
        let (n, w) = (self.bytes, self.parallel);
        let (num, per_lg) = match algo {
            Allreduce::Rabenseifner => (w - 2.0 * n * m.beta - n * m.gamma, 2.0 * m.alpha),
            Allreduce::RecursiveDoubling => (w, m.alpha + n * m.beta + n * m.gamma),
            Allreduce::BinomialReduceBcast => (w, 2.0 * m.alpha + 2.0 * n * m.beta + n * m.gamma),
            Allreduce::Ring => return self.ring_time_optimal_p(),
        };
        if num <= 0.0 { 1.0 } else { (num * std::f64::consts::LN_2 / per_lg).max(1.0) }
    }
    // ANCHOR_END: log_time_optimal

    // ANCHOR: sweep
    /// Numeric sweep over every integer p in 1..=max_p: (p with the least time, the efficiency
    /// wall if it lies within the sweep). The wall is one past the *last* p whose efficiency is at
    /// least `threshold`: for the ring efficiency falls monotonically, so that is also the first p
    /// below it, but the fold that non-powers of two pay makes the other algorithms' efficiency
    /// saw-toothed, and a dip at p = 3 * 2^k is not yet a wall if p = 2^(k+2) is still above it.
    pub fn sweep(&self, algo: Allreduce, max_p: u64, threshold: f64) -> (u64, Option<u64>) {
        let t1 = self.time(algo, 1);
        let mut best = (1, t1);
        let mut last_above = 1;
        for p in 1..=max_p {
            let t = self.time(algo, p);
            if t < best.1 {
                best = (p, t);
            }
            if t1 / (t * p as f64) >= threshold {
                last_above = p;
            }
        }
        (best.0, (last_above < max_p).then_some(last_above + 1))
    }
    // ANCHOR_END: sweep

    /// The best power of two up to `max_p` (what the logarithmic algorithms run best on).
    pub fn best_power_of_two(&self, algo: Allreduce, max_p: u64) -> u64 {
        let mut best = (1, self.time(algo, 1));
        let mut p = 2;
        while p <= max_p {
            let t = self.time(algo, p);
            if t < best.1 {
                best = (p, t);
            }
            p *= 2;
        }
        best.0
    }
}

/// The rank counts a wall table shows: powers of two to 65,536, plus the ladder's rungs
/// (an NVL72 rack, a 3,072-GPU pod, a 24,576-GPU cluster, 100,000).
pub fn ladder_ps(max_p: u64) -> Vec<u64> {
    let mut ps: Vec<u64> = (0..=16).map(|k| 1u64 << k).collect();
    ps.extend([72, 3_072, 24_576, 100_000]);
    ps.retain(|&p| p <= max_p);
    ps.sort_unstable();
    ps.dedup();
    ps
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference() -> Workload {
        Workload { serial: 0.02, parallel: 100.0, bytes: 2e9, machine: Machine::new(10e-6, 50e9, 1e12) }
    }

    #[test]
    fn one_rank_is_the_serial_time() {
        let w = reference();
        assert_eq!(w.time(Allreduce::Ring, 1), w.serial + w.parallel);
        assert_eq!(w.efficiency(Allreduce::Ring, 1), 1.0);
    }

    #[test]
    fn free_communication_is_amdahl() {
        let w = Workload { machine: Machine { alpha: 0.0, beta: 0.0, gamma: 0.0 }, ..reference() };
        for p in [1, 7, 64, 1000] {
            let amdahl = crate::laws::amdahl_speedup(w.parallel_fraction(), p as f64);
            assert!((w.speedup(Allreduce::Ring, p) - amdahl).abs() < 1e-9 * amdahl);
        }
    }

    #[test]
    fn reference_closed_forms_equal_the_sweep() {
        let w = reference();
        let (best, wall) = w.sweep(Allreduce::Ring, 100_000, 0.5);
        let p_star = w.ring_time_optimal_p();
        assert!(best == p_star.floor() as u64 || best == p_star.ceil() as u64, "{best} vs {p_star}");
        assert_eq!(wall, Some(w.ring_efficiency_wall(0.5)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Karp-Flatt applied to the ring model gives e(p) = (s + 2n beta + n gamma + 2 alpha p) / T(1)
        /// exactly: the bandwidth floor looks like serial work, and only latency makes e rise.
        #[test]
        fn karp_flatt_of_the_ring_model_is_exact(
            serial in 0.0f64..1.0,
            parallel in 0.1f64..1000.0,
            bytes in 1e3f64..1e10,
            alpha in 1e-7f64..1e-4,
            p in 2u64..50_000,
        ) {
            let w = Workload { serial, parallel, bytes, machine: Machine::new(alpha, 50e9, 1e12) };
            let m = &w.machine;
            let e = crate::laws::karp_flatt(w.speedup(Allreduce::Ring, p), p as f64);
            let t1 = serial + parallel;
            let expected = (serial + 2.0 * bytes * m.beta + bytes * m.gamma + 2.0 * alpha * p as f64) / t1;
            prop_assert!((e - expected).abs() <= 1e-9 * expected.max(1e-12), "{} vs {}", e, expected);
        }

        /// The closed-form ring optimum and efficiency wall equal a brute-force sweep.
        #[test]
        fn ring_closed_forms_match_sweep(
            serial in 0.0f64..1.0,
            parallel in 0.01f64..1000.0,
            bytes in 1e3f64..1e10,
            alpha in 1e-7f64..1e-4,
            bw in 1e9f64..1e12,
            e in 0.1f64..0.95,
        ) {
            let w = Workload { serial, parallel, bytes, machine: Machine::new(alpha, bw, 1e12) };
            let p_star = w.ring_time_optimal_p();
            prop_assume!(p_star < 20_000.0);
            let (best, wall) = w.sweep(Allreduce::Ring, 40_000, e);
            let lo = p_star.floor() as u64;
            let hi = p_star.ceil() as u64;
            // The integer optimum is the floor or ceiling of p*; exact ties may pick either.
            let t = |p: u64| w.time(Allreduce::Ring, p);
            prop_assert!(best == lo || best == hi || (t(best) - t(lo).min(t(hi))).abs() <= 1e-12 * t(best), "best {} p* {}", best, p_star);
            if let Some(wall) = wall {
                prop_assert_eq!(wall, w.ring_efficiency_wall(e));
            }
        }

        /// For the logarithmic algorithms the best power of two brackets the continuous optimum.
        #[test]
        fn log_optimum_brackets_the_best_power_of_two(
            parallel in 0.1f64..1000.0,
            bytes in 1e3f64..1e9,
            alpha in 1e-6f64..1e-4,
        ) {
            let w = Workload { serial: 0.0, parallel, bytes, machine: Machine::new(alpha, 50e9, 1e12) };
            for algo in [Allreduce::Rabenseifner, Allreduce::RecursiveDoubling, Allreduce::BinomialReduceBcast] {
                let p_star = w.log_time_optimal_p(algo);
                prop_assume!(p_star < 1e6);
                let best = w.best_power_of_two(algo, 1 << 21);
                let x = p_star.log2();
                let lo = 1u64 << (x.floor() as u32);
                let hi = 1u64 << (x.ceil() as u32);
                prop_assert!(best == lo || best == hi, "{:?}: best {} p* {}", algo, best, p_star);
            }
        }
    }
}
