//! What nccl-tests measures: the collectives, their element types and reduction operators, how a
//! requested size becomes per-rank element counts, and how a time becomes algbw and busbw.
//!
//! Everything here follows nccl-tests (src/*.cu `GetCollByteCount` and `GetBw`, cited in
//! shared/reference/collective-benchmarks.md §1), so a row this harness prints means the same as
//! a row nccl-tests or rccl-tests prints.

use anyhow::{Result, bail};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    #[value(alias = "all_to_all")]
    Alltoall,
    Sendrecv,
}

impl Collective {
    pub const ALL: [Collective; 7] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::Broadcast,
        Collective::Reduce,
        Collective::Alltoall,
        Collective::Sendrecv,
    ];

    /// The nccl-tests name: the binary is `<name>_perf`.
    pub fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all_reduce",
            Collective::AllGather => "all_gather",
            Collective::ReduceScatter => "reduce_scatter",
            Collective::Broadcast => "broadcast",
            Collective::Reduce => "reduce",
            Collective::Alltoall => "alltoall",
            Collective::Sendrecv => "sendrecv",
        }
    }

    /// `all_reduce`, `allreduce`, `all_reduce_perf`, `./build/all_reduce_perf`: all the same test.
    pub fn parse(s: &str) -> Result<Collective> {
        let base = s.rsplit('/').next().unwrap_or(s).trim();
        let base = base.strip_suffix("_perf").unwrap_or(base);
        let squash = |x: &str| x.replace('_', "").to_ascii_lowercase();
        Collective::ALL
            .into_iter()
            .find(|c| squash(c.name()) == squash(base))
            .ok_or_else(|| anyhow::anyhow!("unknown collective '{s}' (known: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv)"))
    }

    pub fn reduces(self) -> bool {
        matches!(self, Collective::AllReduce | Collective::ReduceScatter | Collective::Reduce)
    }

    pub fn has_root(self) -> bool {
        matches!(self, Collective::Broadcast | Collective::Reduce)
    }

    /// busbw / algbw: the fraction of the data each rank must move over its own link for the
    /// ring-style algorithm, so busbw is comparable across rank counts (derived in the chapter).
    // ANCHOR: factor
    pub fn busbw_factor(self, nranks: usize) -> f64 {
        let n = nranks as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather | Collective::ReduceScatter | Collective::Alltoall => (n - 1.0) / n,
            // With one rank nothing crosses a bus, so 0 (nccl-tests itself prints 1 here: see
            // `nccl_tests_factor`, which the log import uses).
            Collective::Broadcast | Collective::Reduce | Collective::Sendrecv => {
                if nranks > 1 { 1.0 } else { 0.0 }
            }
        }
    }
    // ANCHOR_END: factor

    /// The factor nccl-tests' `*GetBw` really applies: the same, except that broadcast, reduce
    /// and sendrecv keep 1 even on one rank. Importing a published log recomputes with this one.
    pub fn nccl_tests_factor(self, nranks: usize) -> f64 {
        match self {
            Collective::Broadcast | Collective::Reduce | Collective::Sendrecv => 1.0,
            _ => self.busbw_factor(nranks),
        }
    }
}

/// Element types, named as nccl-tests' `-d` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
#[value(rename_all = "lowercase")]
pub enum DType {
    Int8,
    Uint8,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Half,
    Float,
    Double,
    Bfloat16,
}

impl DType {
    pub const ALL: [DType; 10] = [
        DType::Int8,
        DType::Uint8,
        DType::Int32,
        DType::Uint32,
        DType::Int64,
        DType::Uint64,
        DType::Half,
        DType::Float,
        DType::Double,
        DType::Bfloat16,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DType::Int8 => "int8",
            DType::Uint8 => "uint8",
            DType::Int32 => "int32",
            DType::Uint32 => "uint32",
            DType::Int64 => "int64",
            DType::Uint64 => "uint64",
            DType::Half => "half",
            DType::Float => "float",
            DType::Double => "double",
            DType::Bfloat16 => "bfloat16",
        }
    }

    pub fn size(self) -> usize {
        match self {
            DType::Int8 | DType::Uint8 => 1,
            DType::Half | DType::Bfloat16 => 2,
            DType::Int32 | DType::Uint32 | DType::Float => 4,
            DType::Int64 | DType::Uint64 | DType::Double => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::Half | DType::Float | DType::Double | DType::Bfloat16)
    }
}

/// Reduction operators, as nccl-tests' `-o` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
#[value(rename_all = "lowercase")]
pub enum RedOp {
    Sum,
    Prod,
    Max,
    Min,
    Avg,
}

impl RedOp {
    pub const ALL: [RedOp; 5] = [RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min, RedOp::Avg];

    pub fn name(self) -> &'static str {
        match self {
            RedOp::Sum => "sum",
            RedOp::Prod => "prod",
            RedOp::Max => "max",
            RedOp::Min => "min",
            RedOp::Avg => "avg",
        }
    }
}

/// Where a collective's bytes go for one requested size: nccl-tests' `GetCollByteCount`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Elements each rank sends.
    pub send: usize,
    /// Elements each rank receives.
    pub recv: usize,
    /// The count passed to the collective call, and printed in the `count` column.
    pub param: usize,
    /// In place, the send buffer is `recv + rank * send_inplace_offset` elements.
    pub send_inplace_offset: usize,
    /// In place, the receive buffer is `send + rank * recv_inplace_offset` elements.
    pub recv_inplace_offset: usize,
}

impl Counts {
    /// The `size` column: max(send bytes, receive bytes).
    pub fn size_bytes(&self, dtype: DType) -> usize {
        self.send.max(self.recv) * dtype.size()
    }
}

// ANCHOR: counts
/// Per-rank element counts for a requested `bytes`, exactly as nccl-tests computes them. For
/// all_gather, reduce_scatter and alltoall each rank's share is `bytes / nranks`, truncated to a
/// multiple of 16 bytes; a size that leaves no element per rank is an error.
pub fn counts(coll: Collective, bytes: usize, dtype: DType, nranks: usize) -> Result<Counts> {
    let elt = dtype.size();
    let count = bytes / elt;
    if count == 0 {
        bail!("size {bytes} B is smaller than one {} element", dtype.name());
    }
    let per_rank = || -> Result<usize> {
        // (count / nranks) & ~(16 / elt - 1): whole 16-byte units per rank.
        let base = (count / nranks) & !(16 / elt - 1);
        if base == 0 {
            bail!(
                "size {bytes} B is too small for {} on {nranks} ranks: each rank needs at least 16 B (use -b {} or more)",
                coll.name(),
                16 * nranks
            );
        }
        Ok(base)
    };
    Ok(match coll {
        Collective::AllReduce | Collective::Broadcast | Collective::Reduce | Collective::Sendrecv => {
            Counts { send: count, recv: count, param: count, send_inplace_offset: 0, recv_inplace_offset: 0 }
        }
        Collective::AllGather => {
            let base = per_rank()?;
            Counts { send: base, recv: base * nranks, param: base, send_inplace_offset: base, recv_inplace_offset: 0 }
        }
        Collective::ReduceScatter => {
            let base = per_rank()?;
            Counts { send: base * nranks, recv: base, param: base, send_inplace_offset: 0, recv_inplace_offset: base }
        }
        Collective::Alltoall => {
            let base = per_rank()?;
            Counts { send: base * nranks, recv: base * nranks, param: base, send_inplace_offset: 0, recv_inplace_offset: 0 }
        }
    })
}
// ANCHOR_END: counts

// ANCHOR: bandwidth
/// algbw and busbw in GB/s (1e9 B/s) for a time per call in seconds, from the `count` column:
/// nccl-tests' `*GetBw`. The bytes behind algbw are the whole user buffer S.
pub fn bandwidths(coll: Collective, param_count: usize, dtype: DType, seconds: f64, nranks: usize) -> (f64, f64) {
    let s = algbw_bytes(coll, param_count, dtype, nranks) as f64;
    let algbw = s / 1.0e9 / seconds;
    (algbw, algbw * coll.busbw_factor(nranks))
}

/// S, the bytes algbw divides by the time.
pub fn algbw_bytes(coll: Collective, param_count: usize, dtype: DType, nranks: usize) -> usize {
    let per_call = param_count * dtype.size();
    match coll {
        Collective::AllGather | Collective::ReduceScatter | Collective::Alltoall => per_call * nranks,
        _ => per_call,
    }
}
// ANCHOR_END: bandwidth

/// The sizes of a sweep: from `min` to `max` by `factor` (if > 1) or by `step` bytes, like
/// nccl-tests' `-b`, `-e`, `-f`, `-i`.
pub fn sweep(min: usize, max: usize, factor: usize, step: usize) -> Result<Vec<usize>> {
    if min > max {
        bail!("-b {min} is larger than -e {max}");
    }
    if min == 0 {
        bail!("-b must be at least 1 byte");
    }
    if factor <= 1 && step == 0 {
        bail!("give a step factor -f above 1 or a step -i above 0");
    }
    let mut sizes = Vec::new();
    let mut s = min;
    while s <= max {
        sizes.push(s);
        let next = if factor > 1 { s.checked_mul(factor) } else { s.checked_add(step) };
        match next {
            Some(n) => s = n,
            None => break,
        }
        if sizes.len() > 10_000 {
            bail!("the sweep from {min} to {max} has more than 10,000 sizes; use a larger -f or -i");
        }
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_parse_back() {
        for c in Collective::ALL {
            assert_eq!(Collective::parse(c.name()).unwrap(), c);
            assert_eq!(Collective::parse(&format!("./build/{}_perf", c.name())).unwrap(), c);
        }
        assert_eq!(Collective::parse("allreduce").unwrap(), Collective::AllReduce);
        assert!(Collective::parse("all_scatter").unwrap_err().to_string().contains("unknown collective"));
    }

    #[test]
    fn one_rank_has_zero_busbw() {
        for c in Collective::ALL {
            let (algbw, busbw) = bandwidths(c, 1024, DType::Float, 1e-3, 1);
            assert!(algbw > 0.0);
            assert_eq!(busbw, 0.0, "{c:?}");
        }
    }

    #[test]
    fn counts_truncate_to_16_bytes_per_rank() {
        let c = counts(Collective::AllGather, 1000, DType::Float, 3).unwrap();
        // 250 floats / 3 = 83, truncated to a multiple of 4 floats = 80.
        assert_eq!(c.param, 80);
        assert_eq!(c.recv, 240);
        assert_eq!(c.size_bytes(DType::Float), 960);
        let err = counts(Collective::Alltoall, 64, DType::Float, 8).unwrap_err().to_string();
        assert!(err.contains("too small for alltoall on 8 ranks"), "{err}");
        assert!(counts(Collective::AllReduce, 2, DType::Float, 8).is_err());
    }

    #[test]
    fn sweeps_follow_nccl_tests() {
        assert_eq!(sweep(8, 128, 2, 0).unwrap(), vec![8, 16, 32, 64, 128]);
        assert_eq!(sweep(500_000, 800_000, 1, 100_000).unwrap(), vec![500_000, 600_000, 700_000, 800_000]);
        assert!(sweep(64, 8, 2, 0).unwrap_err().to_string().contains("larger than"));
    }

    proptest! {
        /// For every collective and n = 1..8: busbw = algbw x factor, and n = 1 gives busbw 0.
        #[test]
        fn busbw_is_algbw_times_factor(n in 1usize..=8, k in 4u32..30, t in 1e-7f64..10.0, d in 0usize..10) {
            let dtype = DType::ALL[d];
            for c in Collective::ALL {
                let Ok(cnt) = counts(c, 1usize << k, dtype, n) else { continue };
                let (algbw, busbw) = bandwidths(c, cnt.param, dtype, t, n);
                prop_assert!((busbw - algbw * c.busbw_factor(n)).abs() <= 1e-12 * busbw.abs().max(1e-300));
                if n == 1 { prop_assert_eq!(busbw, 0.0); }
                // algbw's bytes are the size column for every collective (the whole buffer S).
                prop_assert_eq!(algbw_bytes(c, cnt.param, dtype, n), cnt.size_bytes(dtype));
            }
        }

        /// Per-rank shares are whole 16-byte units and never exceed the requested size.
        #[test]
        fn shares_are_16_byte_units(n in 1usize..=64, bytes in 1usize..1_000_000, d in 0usize..10) {
            let dtype = DType::ALL[d];
            for c in [Collective::AllGather, Collective::ReduceScatter, Collective::Alltoall] {
                if let Ok(cnt) = counts(c, bytes, dtype, n) {
                    prop_assert_eq!(cnt.param * dtype.size() % 16, 0);
                    prop_assert!(cnt.size_bytes(dtype) <= bytes);
                }
            }
        }
    }
}
