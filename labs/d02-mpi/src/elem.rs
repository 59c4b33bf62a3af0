//! Element types and reduction operations: what an allreduce combines, and how.
//!
//! Every hand algorithm is generic over an [`Element`] (i32, i64, f32, f64) and an [`Op`]
//! (sum, min, max). Elements are plain bytes ([`bytemuck::Pod`]), so a communicator only ever
//! moves bytes and never needs to know the type: that keeps the [`crate::comm::Comm`] trait free
//! of MPI's datatype machinery.

use std::fmt::Debug;

use serde::{Deserialize, Serialize};

/// The reduction operations of the lab: MPI_SUM, MPI_MIN, MPI_MAX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Sum,
    Min,
    Max,
}

impl Op {
    pub const ALL: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Min => "min",
            Op::Max => "max",
        }
    }
}

/// The element types of the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    I32,
    I64,
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 4] = [ElemType::I32, ElemType::I64, ElemType::F32, ElemType::F64];

    pub fn name(self) -> &'static str {
        match self {
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }
}

/// One element of a reduction buffer.
pub trait Element: bytemuck::Pod + PartialEq + Debug + Send + Sync + 'static {
    const TYPE: ElemType;
    fn sum(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
    /// A deterministic test value for element `index` of rank `rank`: every rank can compute every
    /// other rank's input, so any rank can check a result without extra messages.
    fn test_value(seed: u64, rank: usize, index: usize) -> Self;
    fn to_f64(self) -> f64;
    /// Distance in units in the last place (0 for equal values; integers: 0 or the difference).
    fn ulps(a: Self, b: Self) -> u64;
}

/// SplitMix64: a tiny, well-mixed hash for reproducible test inputs.
pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn test_bits(seed: u64, rank: usize, index: usize) -> u64 {
    splitmix(splitmix(splitmix(seed) ^ rank as u64) ^ index as u64)
}

/// A float test value in [-1000, 1000] with magnitudes spread over six decades, so that the order
/// of summation visibly changes the rounded result.
fn float_test_value(bits: u64) -> f64 {
    let mantissa = (bits >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
    let decade = ((bits >> 3) % 7) as i32 - 3; // 10^-3 .. 10^3
    let sign = if bits & 1 == 0 { 1.0 } else { -1.0 };
    sign * (1.0 + mantissa) * 10f64.powi(decade)
}

/// Map a float's bits onto integers in the same order as the floats, so that adjacent floats are
/// adjacent integers: the ulp distance is then a subtraction.
/// `bits` is the float's bit pattern read as a signed integer of the same width (so negative
/// floats are negative), widened to i64; `min` is that width's minimum. -0.0 maps to 0 like +0.0.
fn ordered(bits: i64, min: i64) -> i64 {
    if bits < 0 { min - bits } else { bits }
}

macro_rules! int_element {
    ($t:ty, $e:expr, $range:expr) => {
        impl Element for $t {
            const TYPE: ElemType = $e;
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self {
                // Integer sums in MPI wrap in practice; wrapping keeps any summation order exact.
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                if a < b { a } else { b }
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                if a > b { a } else { b }
            }
            fn test_value(seed: u64, rank: usize, index: usize) -> Self {
                // Kept well inside the type's range so that even 9 ranks never overflow.
                let range: u64 = $range;
                ((test_bits(seed, rank, index) % (2 * range + 1)) as i64 - range as i64) as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn ulps(a: Self, b: Self) -> u64 {
                (a as i128 - b as i128).unsigned_abs() as u64
            }
        }
    };
}

int_element!(i32, ElemType::I32, 1 << 26);
int_element!(i64, ElemType::I64, 1 << 58);

macro_rules! float_element {
    ($t:ty, $e:expr, $bits:ty, $sign:expr) => {
        impl Element for $t {
            const TYPE: ElemType = $e;
            #[inline(always)]
            fn sum(a: Self, b: Self) -> Self {
                a + b
            }
            // The same comparison Open MPI's MPI_MIN and MPI_MAX use for floats.
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self {
                if a < b { a } else { b }
            }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self {
                if a > b { a } else { b }
            }
            fn test_value(seed: u64, rank: usize, index: usize) -> Self {
                float_test_value(test_bits(seed, rank, index)) as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn ulps(a: Self, b: Self) -> u64 {
                let oa = ordered(a.to_bits() as $bits as i64, $sign);
                let ob = ordered(b.to_bits() as $bits as i64, $sign);
                (oa as i128 - ob as i128).unsigned_abs() as u64
            }
        }
    };
}

float_element!(f32, ElemType::F32, i32, i32::MIN as i64);
float_element!(f64, ElemType::F64, i64, i64::MIN);

/// `acc[i] = acc[i] op other[i]`. The match sits outside the loop so each loop vectorises.
// ANCHOR: reduce
pub fn reduce_in<T: Element>(op: Op, acc: &mut [T], other: &[T]) {
    debug_assert_eq!(acc.len(), other.len());
    match op {
        Op::Sum => acc.iter_mut().zip(other).for_each(|(a, &b)| *a = T::sum(*a, b)),
        Op::Min => acc.iter_mut().zip(other).for_each(|(a, &b)| *a = T::min(*a, b)),
        Op::Max => acc.iter_mut().zip(other).for_each(|(a, &b)| *a = T::max(*a, b)),
    }
}
// ANCHOR_END: reduce

/// `out[i] = a[i] op b[i]`: the first reduction into a fresh output buffer, which saves the
/// copy of the input that an in-place algorithm would need.
pub fn reduce_out<T: Element>(op: Op, out: &mut [T], a: &[T], b: &[T]) {
    debug_assert!(out.len() == a.len() && a.len() == b.len());
    let it = out.iter_mut().zip(a.iter().zip(b));
    match op {
        Op::Sum => it.for_each(|(o, (&x, &y))| *o = T::sum(x, y)),
        Op::Min => it.for_each(|(o, (&x, &y))| *o = T::min(x, y)),
        Op::Max => it.for_each(|(o, (&x, &y))| *o = T::max(x, y)),
    }
}

/// Rank `rank`'s whole test input of `count` elements.
pub fn test_input<T: Element>(seed: u64, rank: usize, count: usize) -> Vec<T> {
    (0..count).map(|i| T::test_value(seed, rank, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulps_count_representable_steps() {
        assert_eq!(f32::ulps(1.0, 1.0), 0);
        assert_eq!(f32::ulps(1.0, f32::from_bits(1.0f32.to_bits() + 3)), 3);
        assert_eq!(f64::ulps(-1.0, f64::from_bits((-1.0f64).to_bits() + 2)), 2);
        // Across zero: the smallest positive and negative subnormals are 2 apart (via +0/-0).
        assert_eq!(f32::ulps(f32::from_bits(1), -f32::from_bits(1)), 2);
        assert_eq!(i32::ulps(-3, 4), 7);
    }

    #[test]
    fn test_values_are_in_range_and_deterministic() {
        for i in 0..1000 {
            let v = f64::test_value(7, 3, i);
            assert!(v.abs() <= 2000.0 && v.abs() >= 1e-3);
            assert_eq!(v, f64::test_value(7, 3, i));
            assert!(i32::test_value(1, 2, i).unsigned_abs() <= 1 << 26);
        }
    }

    #[test]
    fn reductions_are_elementwise() {
        let mut a = vec![1i32, 5, -2];
        reduce_in(Op::Max, &mut a, &[3, 4, -1]);
        assert_eq!(a, vec![3, 5, -1]);
        let mut out = vec![0.0f64; 2];
        reduce_out(Op::Sum, &mut out, &[1.5, 2.0], &[0.25, -2.0]);
        assert_eq!(out, vec![1.75, 0.0]);
    }
}
