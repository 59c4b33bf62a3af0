//! Checking one rank's allreduce result against MPI_Allreduce's and against an exact reference.
//!
//! Integers must match MPI bit for bit: sum (wrapping), min and max are associative and
//! commutative, so every order gives the same answer. Floating-point addition is not
//! associative, so two correct algorithms that add in different orders may differ in the last
//! bits; both must stay within the recursive-summation error bound
//! |computed - exact| <= gamma_{p-1} * sum |x_i|, gamma_k = k u / (1 - k u) (Higham, "Accuracy and
//! Stability of Numerical Algorithms", 2nd ed., section 4.2), whatever tree the sum used.

use crate::elem::{ElemType, Element, Op};

/// One rank's view of one case; the rank program sums the counts and maxes the ulps over ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalCase {
    pub differ_from_mpi: u64,
    pub max_ulps_vs_mpi: u64,
    pub max_ulps_hand_vs_exact: u64,
    pub max_ulps_mpi_vs_exact: u64,
    pub over_bound_hand: u64,
    pub over_bound_mpi: u64,
    /// Largest |computed - exact| / (u * sum|x_i|): the error in the units the bound is stated in
    /// (a correct sum of p terms stays below about p - 1). Zero for integers, min and max.
    pub max_err_hand: f64,
    pub max_err_mpi: f64,
}

/// Unit roundoff of the type (0 for integers, which are exact).
pub fn unit_roundoff(t: ElemType) -> f64 {
    match t {
        ElemType::F32 => f32::EPSILON as f64 / 2.0,
        ElemType::F64 => f64::EPSILON / 2.0,
        _ => 0.0,
    }
}

/// Neumaier's compensated sum: close to correctly rounded even when terms cancel.
pub fn compensated_sum(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for x in xs {
        let t = s + x;
        c += if s.abs() >= x.abs() { (s - t) + x } else { (x - t) + s };
        s = t;
    }
    s + c
}

/// The reference for element `i`: (rounded to T, exact in f64, sum |x_i|). For f32 inputs the
/// f64 sum of a few dozen terms is exact; for f64 the compensated sum is within about one ulp,
/// which the bound's slack allows for.
fn reference<T: Element>(op: Op, seed: u64, p: usize, i: usize) -> (T, f64, f64) {
    let xs: Vec<T> = (0..p).map(|r| T::test_value(seed, r, i)).collect();
    match op {
        Op::Min => (xs.iter().copied().reduce(T::min).expect("p >= 1"), 0.0, 0.0),
        Op::Max => (xs.iter().copied().reduce(T::max).expect("p >= 1"), 0.0, 0.0),
        Op::Sum => {
            let acc = xs.iter().copied().reduce(T::sum).expect("p >= 1");
            if !T::TYPE.is_float() {
                return (acc, 0.0, 0.0);
            }
            let exact = compensated_sum(xs.iter().map(|x| x.to_f64()));
            let abs_sum: f64 = xs.iter().map(|x| x.to_f64().abs()).sum();
            (from_f64::<T>(exact), exact, abs_sum)
        }
    }
}

/// The recursive-summation bound gamma_{p-1} * sum|x| plus slack for the reference's own
/// rounding (to T, and the compensated sum's error).
fn bound(t: ElemType, p: usize, exact: f64, abs_sum: f64) -> f64 {
    let u = unit_roundoff(t);
    let k = (p - 1) as f64;
    k * u / (1.0 - k * u) * abs_sum + 2.0 * u * exact.abs()
}

fn from_f64<T: Element>(x: f64) -> T {
    match T::TYPE {
        ElemType::F32 => bytemuck::cast::<f32, T>(x as f32),
        ElemType::F64 => bytemuck::cast::<f64, T>(x),
        _ => unreachable!("only floats are rounded from f64"),
    }
}

/// Compare this rank's hand result and MPI result with each other and with the reference.
pub fn local_case<T: Element>(op: Op, seed: u64, p: usize, hand: &[T], mpi: &[T]) -> LocalCase {
    assert_eq!(hand.len(), mpi.len());
    let mut c = LocalCase::default();
    for (i, (&h, &m)) in hand.iter().zip(mpi).enumerate() {
        if h != m {
            c.differ_from_mpi += 1;
        }
        c.max_ulps_vs_mpi = c.max_ulps_vs_mpi.max(T::ulps(h, m));
        let (rounded, exact, abs_sum) = reference::<T>(op, seed, p, i);
        c.max_ulps_hand_vs_exact = c.max_ulps_hand_vs_exact.max(T::ulps(h, rounded));
        c.max_ulps_mpi_vs_exact = c.max_ulps_mpi_vs_exact.max(T::ulps(m, rounded));
        if op == Op::Sum && T::TYPE.is_float() {
            let limit = bound(T::TYPE, p, exact, abs_sum);
            let (eh, em) = ((h.to_f64() - exact).abs(), (m.to_f64() - exact).abs());
            c.over_bound_hand += u64::from(eh > limit);
            c.over_bound_mpi += u64::from(em > limit);
            let unit = unit_roundoff(T::TYPE) * abs_sum;
            if unit > 0.0 {
                c.max_err_hand = c.max_err_hand.max(eh / unit);
                c.max_err_mpi = c.max_err_mpi.max(em / unit);
            }
        } else {
            c.over_bound_hand += u64::from(h != rounded);
            c.over_bound_mpi += u64::from(m != rounded);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compensated_sum_recovers_what_naive_loses() {
        let xs = [1e16, 1.0, -1e16];
        assert_eq!(xs.iter().sum::<f64>(), 0.0);
        assert_eq!(compensated_sum(xs), 1.0);
    }

    #[test]
    fn a_wrong_result_is_caught() {
        let p = 3;
        let good: Vec<f32> = (0..50).map(|i| reference::<f32>(Op::Sum, 1, p, i).0).collect();
        let c = local_case(Op::Sum, 1, p, &good, &good);
        assert_eq!((c.differ_from_mpi, c.over_bound_hand, c.over_bound_mpi), (0, 0, 0));
        assert!(c.max_err_hand <= 1.0, "a correctly rounded sum errs by at most half an ulp");
        let mut bad = good.clone();
        bad[7] += 1.0;
        let c = local_case(Op::Sum, 1, p, &bad, &good);
        assert_eq!(c.differ_from_mpi, 1);
        assert_eq!(c.over_bound_hand, 1);
        assert_eq!(c.over_bound_mpi, 0);
    }
}
