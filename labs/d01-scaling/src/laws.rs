//! The scaling laws: what fraction of the work can use more ranks, and what that buys.

// ANCHOR: amdahl
/// Amdahl's speedup on `p` ranks when a fraction `f` of the one-rank time parallelises perfectly:
/// S(p) = 1 / ((1 - f) + f / p). Strong scaling: the problem size is fixed.
pub fn amdahl_speedup(f: f64, p: f64) -> f64 {
    1.0 / ((1.0 - f) + f / p)
}

/// The ceiling Amdahl's speedup approaches as p grows: 1 / (1 - f) (infinite when f = 1).
pub fn amdahl_limit(f: f64) -> f64 {
    1.0 / (1.0 - f)
}
// ANCHOR_END: amdahl

// ANCHOR: gustafson
/// Gustafson's scaled speedup when a fraction `s` of the *parallel run's* time is serial:
/// S(p) = s + (1 - s) p = p + (1 - p) s. Weak scaling: the problem grows with p.
pub fn gustafson_speedup(s: f64, p: f64) -> f64 {
    s + (1.0 - s) * p
}
// ANCHOR_END: gustafson

// ANCHOR: karp_flatt
/// Karp-Flatt's experimentally determined serial fraction from a measured speedup `psi` on
/// `p > 1` ranks: e = (1/psi - 1/p) / (1 - 1/p). Constant e means Amdahl explains the loss;
/// e growing with p means overhead (communication, imbalance) that grows with p.
pub fn karp_flatt(psi: f64, p: f64) -> f64 {
    (1.0 / psi - 1.0 / p) / (1.0 - 1.0 / p)
}
// ANCHOR_END: karp_flatt

/// Parallel efficiency E = S / p.
pub fn efficiency(speedup: f64, p: f64) -> f64 {
    speedup / p
}

// ANCHOR: isoefficiency
/// Isoefficiency's constant: to hold efficiency E, the work W must grow as K * T_o(W, p) where
/// T_o = p T_p - W is the total overhead and K = E / (1 - E) (Grama, Gupta and Kumar).
pub fn isoefficiency_k(e: f64) -> f64 {
    e / (1.0 - e)
}

/// Efficiency from work and total overhead: E = 1 / (1 + T_o / W).
pub fn efficiency_from_overhead(work: f64, overhead: f64) -> f64 {
    1.0 / (1.0 + overhead / work)
}
// ANCHOR_END: isoefficiency

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn amdahl_approaches_its_limit() {
        assert!((amdahl_speedup(0.95, 1e12) - 20.0).abs() < 1e-6);
        assert_eq!(amdahl_speedup(0.95, 1.0), 1.0);
        assert!((amdahl_limit(0.95) - 20.0).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn amdahl_is_below_its_limit_and_below_p(f in 0.0f64..0.999, p in 1.0f64..1e6) {
            let s = amdahl_speedup(f, p);
            prop_assert!(s <= amdahl_limit(f) * (1.0 + 1e-12));
            prop_assert!(s <= p * (1.0 + 1e-12));
        }

        /// Gustafson's two forms agree, and his s (measured on the parallel run) is Amdahl's
        /// serial fraction of a problem p times bigger: the two laws describe the same machine.
        #[test]
        fn gustafson_identity(s in 0.0f64..1.0, p in 1.0f64..1e5) {
            let a = gustafson_speedup(s, p);
            prop_assert!((a - (p + (1.0 - p) * s)).abs() <= 1e-9 * a.max(1.0));
            // The scaled problem: serial time s, parallel time (1-s) per rank, so on one rank
            // it would take s + (1-s)p; Amdahl's f for that problem is (1-s)p / (s + (1-s)p).
            let t1 = s + (1.0 - s) * p;
            let f = (1.0 - s) * p / t1;
            prop_assert!((amdahl_speedup(f, p) - a).abs() <= 1e-6 * a);
        }

        #[test]
        fn karp_flatt_recovers_amdahls_serial_fraction(f in 0.0f64..1.0, p in 2u32..100_000) {
            let p = p as f64;
            let e = karp_flatt(amdahl_speedup(f, p), p);
            prop_assert!((e - (1.0 - f)).abs() < 1e-9);
        }

        #[test]
        fn isoefficiency_holds_e(e in 0.01f64..0.99, overhead in 1e-3f64..1e3) {
            let w = isoefficiency_k(e) * overhead;
            prop_assert!((efficiency_from_overhead(w, overhead) - e).abs() < 1e-12);
        }
    }
}
