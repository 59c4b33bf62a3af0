//! Verifiable data: what each rank puts in, what each rank must get back, and how many elements
//! are wrong. Like nccl-tests' verifiable data, every value is chosen so that the exact result is
//! known whatever order the library adds in: small integers for sum, max, min and avg; ones and
//! twos for prod. The comparison is exact, except float `avg`, which may be 2 ulps off (nccl-tests
//! allows the same, because NCCL may scale before it adds).

use crate::coll::{Collective, Counts, DType, RedOp};

/// The value rank `rank` holds at element `index` of its send buffer, for a check round `seed`.
pub fn input_value(op: RedOp, rank: usize, index: usize, seed: u64) -> i64 {
    let mix = (rank as u64).wrapping_mul(131).wrapping_add((index as u64).wrapping_mul(17)).wrapping_add(seed.wrapping_mul(7));
    match op {
        RedOp::Prod => 1 + (mix % 2) as i64,
        _ => (mix % 8) as i64,
    }
}

/// Encode an exact small value in an element type (integers wrap like the hardware does).
pub fn encode(dtype: DType, v: f64, out: &mut Vec<u8>) {
    match dtype {
        DType::Int8 => out.push(v as i64 as i8 as u8),
        DType::Uint8 => out.push(v as i64 as u8),
        DType::Int32 => out.extend((v as i64 as i32).to_le_bytes()),
        DType::Uint32 => out.extend((v as i64 as u32).to_le_bytes()),
        DType::Int64 => out.extend((v as i64).to_le_bytes()),
        DType::Uint64 => out.extend((v as i64 as u64).to_le_bytes()),
        DType::Half => out.extend(half::f16::from_f64(v).to_le_bytes()),
        DType::Bfloat16 => out.extend(half::bf16::from_f64(v).to_le_bytes()),
        DType::Float => out.extend((v as f32).to_le_bytes()),
        DType::Double => out.extend(v.to_le_bytes()),
    }
}

/// Decode element `i` of a buffer as f64 (exact for every value this module produces).
pub fn decode(dtype: DType, bytes: &[u8], i: usize) -> f64 {
    let w = dtype.size();
    let b = &bytes[i * w..(i + 1) * w];
    match dtype {
        DType::Int8 => b[0] as i8 as f64,
        DType::Uint8 => b[0] as f64,
        DType::Int32 => i32::from_le_bytes(b.try_into().unwrap()) as f64,
        DType::Uint32 => u32::from_le_bytes(b.try_into().unwrap()) as f64,
        DType::Int64 => i64::from_le_bytes(b.try_into().unwrap()) as f64,
        DType::Uint64 => u64::from_le_bytes(b.try_into().unwrap()) as f64,
        DType::Half => half::f16::from_le_bytes(b.try_into().unwrap()).to_f64(),
        DType::Bfloat16 => half::bf16::from_le_bytes(b.try_into().unwrap()).to_f64(),
        DType::Float => f32::from_le_bytes(b.try_into().unwrap()) as f64,
        DType::Double => f64::from_le_bytes(b.try_into().unwrap()),
    }
}

/// The bits of element `i`, as an integer that orders like the float (for the ulp distance).
fn ordered_bits(dtype: DType, bytes: &[u8], i: usize) -> i64 {
    let w = dtype.size();
    let b = &bytes[i * w..(i + 1) * w];
    let (raw, bits) = match w {
        2 => (u16::from_le_bytes(b.try_into().unwrap()) as u64, 16),
        4 => (u32::from_le_bytes(b.try_into().unwrap()) as u64, 32),
        8 => (u64::from_le_bytes(b.try_into().unwrap()), 64),
        _ => (b[0] as u64, 8),
    };
    let sign = 1u64 << (bits - 1);
    let magnitude = (raw & (sign - 1)) as i64;
    if raw & sign != 0 { -magnitude } else { magnitude }
}

/// A rank's whole send buffer: `counts.send` elements.
pub fn send_buffer(dtype: DType, op: RedOp, rank: usize, counts: &Counts, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(counts.send * dtype.size());
    for i in 0..counts.send {
        encode(dtype, input_value(op, rank, i, seed) as f64, &mut out);
    }
    out
}

/// The reduction of one element over every rank, in the element type's own arithmetic.
fn reduce(dtype: DType, op: RedOp, nranks: usize, value: impl Fn(usize) -> i64) -> f64 {
    let vals = (0..nranks).map(&value);
    let wrap = |v: i64| -> f64 {
        // Round-trip through the element type, so integer overflow wraps exactly as on the wire.
        let mut b = Vec::new();
        encode(dtype, v as f64, &mut b);
        decode(dtype, &b, 0)
    };
    match op {
        RedOp::Sum => wrap(vals.fold(0i64, i64::wrapping_add)),
        RedOp::Prod if dtype.is_float() => vals.map(|v| v as f64).product(),
        RedOp::Prod => wrap(vals.fold(1i64, i64::wrapping_mul)),
        RedOp::Max => vals.max().unwrap_or(0) as f64,
        RedOp::Min => vals.min().unwrap_or(0) as f64,
        RedOp::Avg => {
            let sum = wrap(vals.fold(0i64, i64::wrapping_add));
            match dtype {
                DType::Float => (sum as f32 / nranks as f32) as f64,
                DType::Double | DType::Half | DType::Bfloat16 => sum / nranks as f64,
                // Integer average truncates, as ncclAvg does.
                _ => (sum / nranks as f64).trunc(),
            }
        }
    }
}

// ANCHOR: expected
/// What rank `rank` must find in its output region, or None where nothing is defined (the
/// receive buffer of a non-root rank after reduce).
#[allow(clippy::too_many_arguments)]
pub fn expected_output(
    coll: Collective,
    dtype: DType,
    op: RedOp,
    rank: usize,
    nranks: usize,
    root: usize,
    counts: &Counts,
    seed: u64,
) -> Option<Vec<u8>> {
    let n = nranks;
    let base = counts.param;
    let v = |k: usize, i: usize| input_value(op, k, i, seed);
    let values: Vec<f64> = match coll {
        Collective::AllReduce => (0..counts.recv).map(|i| reduce(dtype, op, n, |k| v(k, i))).collect(),
        Collective::Reduce if rank == root => (0..counts.recv).map(|i| reduce(dtype, op, n, |k| v(k, i))).collect(),
        Collective::Reduce => return None,
        Collective::ReduceScatter => (0..base).map(|j| reduce(dtype, op, n, |k| v(k, rank * base + j))).collect(),
        Collective::AllGather => (0..n * base).map(|i| v(i / base, i % base) as f64).collect(),
        Collective::Alltoall => (0..n * base).map(|i| v(i / base, rank * base + i % base) as f64).collect(),
        Collective::Broadcast => (0..counts.recv).map(|i| v(root, i) as f64).collect(),
        Collective::Sendrecv => (0..counts.recv).map(|i| v((rank + n - 1) % n, i) as f64).collect(),
    };
    let mut out = Vec::with_capacity(values.len() * dtype.size());
    for x in values {
        encode(dtype, x, &mut out);
    }
    Some(out)
}
// ANCHOR_END: expected

/// The number of elements of `got` that differ from `expected`.
pub fn count_wrong(dtype: DType, op: RedOp, got: &[u8], expected: &[u8]) -> u64 {
    let n = expected.len() / dtype.size();
    let tolerant = op == RedOp::Avg && dtype.is_float();
    (0..n)
        .filter(|&i| {
            if tolerant {
                (ordered_bits(dtype, got, i) - ordered_bits(dtype, expected, i)).abs() > 2
            } else {
                let w = dtype.size();
                got[i * w..(i + 1) * w] != expected[i * w..(i + 1) * w]
            }
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coll::counts;

    #[test]
    fn every_type_round_trips_small_integers() {
        for d in DType::ALL {
            let mut b = Vec::new();
            for v in 0..8 {
                encode(d, v as f64, &mut b);
            }
            for v in 0..8 {
                assert_eq!(decode(d, &b, v), v as f64, "{d:?}");
            }
        }
    }

    #[test]
    fn int8_sums_wrap_like_the_hardware() {
        // 40 ranks of 7 = 280, which wraps to 24 in int8.
        assert_eq!(reduce(DType::Int8, RedOp::Sum, 40, |_| 7), 24.0);
        assert_eq!(reduce(DType::Uint8, RedOp::Prod, 9, |_| 2), 0.0);
        assert_eq!(reduce(DType::Float, RedOp::Prod, 9, |_| 2), 512.0);
    }

    #[test]
    fn a_flipped_element_is_counted_once() {
        let c = counts(Collective::AllReduce, 64, DType::Float, 4).unwrap();
        let exp = expected_output(Collective::AllReduce, DType::Float, RedOp::Sum, 0, 4, 0, &c, 1).unwrap();
        let mut got = exp.clone();
        assert_eq!(count_wrong(DType::Float, RedOp::Sum, &got, &exp), 0);
        got[5] ^= 0x40;
        assert_eq!(count_wrong(DType::Float, RedOp::Sum, &got, &exp), 1);
    }

    #[test]
    fn float_avg_tolerates_two_ulps() {
        let mut exp = Vec::new();
        encode(DType::Float, 1.0 / 3.0, &mut exp);
        let bits = f32::from_le_bytes(exp[..4].try_into().unwrap()).to_bits();
        let near = f32::from_bits(bits + 2).to_le_bytes();
        let far = f32::from_bits(bits + 3).to_le_bytes();
        assert_eq!(count_wrong(DType::Float, RedOp::Avg, &near, &exp), 0);
        assert_eq!(count_wrong(DType::Float, RedOp::Avg, &far, &exp), 1);
        assert_eq!(count_wrong(DType::Float, RedOp::Sum, &near, &exp), 1);
    }
}
