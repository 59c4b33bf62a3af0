//! nccl-tests' measurement method, written once over a [`Backend`], so the MPI backend (CPU
//! buffers, measured here) and the NCCL backend (GPU buffers) run the very same loop.
//!
//! Per size, and for out-of-place then in-place (nccl-tests' `BenchTime`):
//! 1. one untimed call, wait for it, barrier;
//! 2. start a wall clock, issue `iters` calls back to back, wait for the last, stop the clock;
//! 3. time per call = elapsed / iters, then averaged over ranks (`-a 1`) before any bandwidth;
//! 4. algbw = S / t, busbw = algbw x factor;
//! 5. in separate untimed runs, fill verifiable data, run once, count wrong elements, sum the
//!    count over ranks.
//!
//! Before the sweep every size is warmed up (`-w` calls, out-of-place), as nccl-tests 2.17+ does.

use std::time::Instant;

use anyhow::{Result, bail};
use serde::Serialize;

use crate::coll::{Collective, Counts, DType, RedOp, bandwidths, counts};
use crate::data;
use crate::format::{Row, Side};

/// The two buffers every rank owns, each `max_bytes` long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buf {
    Send,
    Recv,
}

/// A place in a buffer, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    pub buf: Buf,
    pub offset: usize,
}

/// One collective call, fully resolved: what to run and where its data lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call {
    pub coll: Collective,
    pub dtype: DType,
    pub op: RedOp,
    pub root: usize,
    pub counts: Counts,
    pub in_place: bool,
    pub send: Loc,
    pub recv: Loc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    Sum,
    Min,
    Max,
}

/// What a backend provides: buffers, one collective, completion, and a few tiny collectives of
/// its own to agree on times and error counts.
pub trait Backend {
    fn rank(&self) -> usize;
    fn nranks(&self) -> usize;
    /// Allocate (or grow) both buffers to `bytes` each, zero-filled.
    fn alloc(&mut self, bytes: usize) -> Result<()>;
    fn write(&mut self, at: Loc, data: &[u8]) -> Result<()>;
    fn read(&mut self, at: Loc, len: usize) -> Result<Vec<u8>>;
    /// Issue one collective (asynchronous on a GPU stream, blocking for MPI).
    fn start(&mut self, call: &Call) -> Result<()>;
    /// Wait until everything issued has finished.
    fn complete(&mut self) -> Result<()>;
    fn barrier(&mut self) -> Result<()>;
    fn allreduce_f64(&mut self, x: f64, how: Combine) -> Result<f64>;
    fn allreduce_u64(&mut self, x: u64) -> Result<u64>;
    /// MPI's in-place reduce-scatter leaves each rank's block at the start of the buffer; NCCL
    /// leaves it at `rank * block`. The checker reads the result where the backend put it.
    fn reduce_scatter_in_place_at_start(&self) -> bool {
        false
    }
}

/// nccl-tests' `-a`: how the per-rank times become one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Average {
    #[value(name = "0")]
    Rank0,
    #[value(name = "1")]
    Mean,
    #[value(name = "2")]
    Min,
    #[value(name = "3")]
    Max,
}

/// Everything one harness run needs, already validated.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub coll: Collective,
    pub dtypes: Vec<DType>,
    pub ops: Vec<RedOp>,
    pub root: usize,
    pub sizes: Vec<usize>,
    pub iters: usize,
    pub warmup: usize,
    pub check: usize,
    pub average: Average,
    /// Test-only: corrupt one element of the last rank's result before it is checked.
    pub corrupt: bool,
}

impl Plan {
    pub fn max_bytes(&self) -> usize {
        self.sizes.iter().copied().max().unwrap_or(0)
    }

    /// Refuse what cannot run: a root outside the ranks, a size with no element per rank.
    pub fn validate(&self, nranks: usize) -> Result<()> {
        if self.coll.has_root() && self.root >= nranks {
            bail!("root {} does not exist with {nranks} ranks", self.root);
        }
        if self.iters == 0 {
            bail!("-n must be at least 1");
        }
        for &d in &self.dtypes {
            for &s in &self.sizes {
                counts(self.coll, s, d, nranks)?;
            }
        }
        Ok(())
    }

    fn ops_for_coll(&self) -> Vec<Option<RedOp>> {
        if self.coll.reduces() { self.ops.iter().copied().map(Some).collect() } else { vec![None] }
    }
}

/// The rows of one run plus what the trailer needs.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub rows: Vec<Row>,
    pub nranks: usize,
}

/// The calls of one timed batch: the same call with its buffers shifted by one message per
/// iteration, wrapping within `max_bytes`, so back-to-back calls do not reuse the same cache lines
/// (nccl-tests' `startColl`). Built once per batch, so an iteration costs an add and a multiply.
#[derive(Clone, Copy, Debug)]
pub struct CallSeq {
    base: Call,
    total: usize,
    steps: usize,
}

impl CallSeq {
    pub fn new(rank: usize, plan: &Plan, c: &Counts, dtype: DType, op: RedOp, in_place: bool) -> Self {
        let elt = dtype.size();
        let total = c.size_bytes(dtype);
        let steps = plan.max_bytes().checked_div(total).unwrap_or(1).max(1);
        let (send, recv) = if in_place {
            (
                Loc { buf: Buf::Recv, offset: rank * c.send_inplace_offset * elt },
                Loc { buf: Buf::Recv, offset: rank * c.recv_inplace_offset * elt },
            )
        } else {
            (Loc { buf: Buf::Send, offset: 0 }, Loc { buf: Buf::Recv, offset: 0 })
        };
        CallSeq { base: Call { coll: plan.coll, dtype, op, root: plan.root, counts: *c, in_place, send, recv }, total, steps }
    }

    /// The call at shift step `k` (0 <= k < steps).
    #[inline]
    pub fn step(&self, k: usize) -> Call {
        let shift = self.total * k;
        let mut c = self.base;
        c.send.offset += shift;
        c.recv.offset += shift;
        c
    }

    /// The call of iteration `iter`.
    pub fn at(&self, iter: usize) -> Call {
        self.step(iter % self.steps)
    }
}

/// The call for iteration `iter` (see [`CallSeq`]).
pub fn call_for(rank: usize, plan: &Plan, c: &Counts, dtype: DType, op: RedOp, in_place: bool, iter: usize) -> Call {
    CallSeq::new(rank, plan, c, dtype, op, in_place).at(iter)
}

/// Per-call seconds of `iters` back-to-back calls, timed by the wall clock to completion.
// ANCHOR: timed
pub fn time_batch(b: &mut dyn Backend, seq: &CallSeq, iters: usize) -> Result<f64> {
    // One untimed call, wait for it, line everyone up.
    b.start(&seq.step(0))?;
    b.complete()?;
    b.barrier()?;
    let start = Instant::now();
    let mut k = 0;
    for _ in 0..iters {
        b.start(&seq.step(k))?;
        k += 1;
        if k == seq.steps {
            k = 0;
        }
    }
    b.complete()?;
    Ok(start.elapsed().as_secs_f64() / iters as f64)
}
// ANCHOR_END: timed

/// The same loop with the collective taken out: what the harness itself costs per iteration.
pub fn time_empty_loop(seq: &CallSeq, iters: usize) -> f64 {
    let start = Instant::now();
    let mut k = 0;
    for _ in 0..iters {
        std::hint::black_box(seq.step(k));
        k += 1;
        if k == seq.steps {
            k = 0;
        }
    }
    start.elapsed().as_secs_f64() / iters as f64
}

fn combine_time(b: &mut dyn Backend, t: f64, how: Average) -> Result<f64> {
    Ok(match how {
        Average::Mean => b.allreduce_f64(t, Combine::Sum)? / b.nranks() as f64,
        Average::Min => b.allreduce_f64(t, Combine::Min)?,
        Average::Max => b.allreduce_f64(t, Combine::Max)?,
        Average::Rank0 => b.allreduce_f64(if b.rank() == 0 { t } else { 0.0 }, Combine::Sum)?,
    })
}

/// Where the result of `call` lies after it ran on this backend.
fn output_loc(b: &dyn Backend, call: &Call) -> Loc {
    if call.in_place && call.coll == Collective::ReduceScatter && b.reduce_scatter_in_place_at_start() {
        call.send
    } else {
        call.recv
    }
}

// ANCHOR: check
/// One verification round: fresh verifiable data, one call, an exact comparison; returns the
/// wrong elements summed over ranks.
fn check_once(b: &mut dyn Backend, plan: &Plan, call: &Call, seed: u64) -> Result<u64> {
    let (rank, n) = (b.rank(), b.nranks());
    let c = &call.counts;
    let elt = call.dtype.size();
    let op = call.op;
    // Poison the output region so a call that writes nothing cannot pass.
    let span = c.size_bytes(call.dtype);
    b.write(Loc { buf: Buf::Recv, offset: call.recv.offset.min(call.send.offset) }, &vec![0xA5; span])?;
    b.write(call.send, &data::send_buffer(call.dtype, op, rank, c, seed))?;
    b.start(call)?;
    b.complete()?;
    let mut wrong = 0;
    if let Some(expected) = data::expected_output(call.coll, call.dtype, op, rank, n, call.root, c, seed) {
        let at = output_loc(b, call);
        if plan.corrupt && rank == n - 1 {
            // The test-only hook: damage one element of this rank's result before it is read.
            let mut first = b.read(at, elt)?;
            first[0] ^= 0x5A;
            b.write(at, &first)?;
        }
        let got = b.read(at, expected.len())?;
        wrong = data::count_wrong(call.dtype, op, &got, &expected);
    }
    b.allreduce_u64(wrong)
}
// ANCHOR_END: check

/// Run the whole plan: warm-up, then every (type, op, size) row. Rows come back on every rank;
/// rank 0 prints them.
pub fn run(b: &mut dyn Backend, plan: &Plan, progress: &mut dyn FnMut(&str)) -> Result<Outcome> {
    let n = b.nranks();
    plan.validate(n)?;
    b.alloc(plan.max_bytes())?;
    let mut rows = Vec::new();
    for &dtype in &plan.dtypes {
        for op in plan.ops_for_coll() {
            let op_used = op.unwrap_or(RedOp::Sum);
            // Warm-up: every size from the smallest, doubling, out-of-place.
            let mut s = plan.sizes[0];
            while s <= plan.max_bytes() {
                let c = counts(plan.coll, s, dtype, n)?;
                for iter in 0..plan.warmup {
                    b.start(&call_for(b.rank(), plan, &c, dtype, op_used, false, iter))?;
                }
                b.complete()?;
                s *= 2;
            }
            for &size in &plan.sizes {
                let c = counts(plan.coll, size, dtype, n)?;
                let mut sides = Vec::new();
                for in_place in [false, true] {
                    let seq = CallSeq::new(b.rank(), plan, &c, dtype, op_used, in_place);
                    let t = time_batch(b, &seq, plan.iters)?;
                    let t = combine_time(b, t, plan.average)?;
                    let (algbw, busbw) = bandwidths(plan.coll, c.param, dtype, t, n);
                    b.barrier()?;
                    let mut wrong = None;
                    for round in 0..plan.check {
                        let w = check_once(b, plan, &seq.step(0), 1 + round as u64)?;
                        wrong = Some(w);
                        if w > 0 {
                            break;
                        }
                    }
                    sides.push(Side { seconds: t, algbw, busbw, wrong });
                }
                let row = Row {
                    size: c.size_bytes(dtype) as u64,
                    count: c.param as u64,
                    dtype: dtype.name().into(),
                    redop: op.map(|o| o.name()).unwrap_or("none").into(),
                    root: if plan.coll.has_root() { plan.root as i64 } else { -1 },
                    out_of_place: sides[0],
                    in_place: sides[1],
                };
                progress(&crate::format::row(&row));
                rows.push(row);
            }
        }
    }
    Ok(Outcome { rows, nranks: n })
}

/// A one-rank backend in plain memory: every collective on one rank is a copy (reductions of one
/// value are the value; avg divides by 1). It exercises the method without MPI or a GPU.
#[derive(Default)]
pub struct SelfBackend {
    send: Vec<u8>,
    recv: Vec<u8>,
}

impl SelfBackend {
    fn slice(&self, at: Loc, len: usize) -> &[u8] {
        let b = if at.buf == Buf::Send { &self.send } else { &self.recv };
        &b[at.offset..at.offset + len]
    }
}

impl Backend for SelfBackend {
    fn rank(&self) -> usize {
        0
    }
    fn nranks(&self) -> usize {
        1
    }
    fn alloc(&mut self, bytes: usize) -> Result<()> {
        self.send = vec![0; bytes];
        self.recv = vec![0; bytes];
        Ok(())
    }
    fn write(&mut self, at: Loc, data: &[u8]) -> Result<()> {
        let b = if at.buf == Buf::Send { &mut self.send } else { &mut self.recv };
        b[at.offset..at.offset + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn read(&mut self, at: Loc, len: usize) -> Result<Vec<u8>> {
        Ok(self.slice(at, len).to_vec())
    }
    fn start(&mut self, call: &Call) -> Result<()> {
        let bytes = call.counts.recv * call.dtype.size();
        let src = self.slice(call.send, bytes).to_vec();
        self.write(call.recv, &src)
    }
    fn complete(&mut self) -> Result<()> {
        Ok(())
    }
    fn barrier(&mut self) -> Result<()> {
        Ok(())
    }
    fn allreduce_f64(&mut self, x: f64, _: Combine) -> Result<f64> {
        Ok(x)
    }
    fn allreduce_u64(&mut self, x: u64) -> Result<u64> {
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coll::sweep;

    fn plan(coll: Collective, corrupt: bool) -> Plan {
        Plan {
            coll,
            dtypes: vec![DType::Float, DType::Int8],
            ops: RedOp::ALL.to_vec(),
            root: 0,
            sizes: sweep(64, 4096, 4, 0).unwrap(),
            iters: 3,
            warmup: 1,
            check: 1,
            average: Average::Mean,
            corrupt,
        }
    }

    #[test]
    fn one_rank_runs_every_collective_with_no_wrong_element_and_zero_busbw() {
        for coll in Collective::ALL {
            let out = run(&mut SelfBackend::default(), &plan(coll, false), &mut |_| {}).unwrap();
            assert!(!out.rows.is_empty());
            for r in &out.rows {
                for s in [r.out_of_place, r.in_place] {
                    assert_eq!(s.wrong, Some(0), "{coll:?} {r:?}");
                    assert_eq!(s.busbw, 0.0);
                    assert!(s.algbw > 0.0);
                }
            }
        }
    }

    #[test]
    fn a_corrupted_buffer_is_counted() {
        let out = run(&mut SelfBackend::default(), &plan(Collective::AllReduce, true), &mut |_| {}).unwrap();
        assert!(out.rows.iter().all(|r| r.out_of_place.wrong == Some(1) && r.in_place.wrong == Some(1)));
    }

    #[test]
    fn calls_shift_through_the_buffer_and_in_place_shares_it() {
        let p = plan(Collective::AllGather, false);
        let c = counts(Collective::AllGather, 1024, DType::Float, 4).unwrap();
        let a = call_for(2, &p, &c, DType::Float, RedOp::Sum, false, 1);
        assert_eq!(a.send.offset, 1024);
        let b = call_for(2, &p, &c, DType::Float, RedOp::Sum, true, 0);
        assert_eq!(b.send, Loc { buf: Buf::Recv, offset: 2 * 256 });
        assert_eq!(b.recv, Loc { buf: Buf::Recv, offset: 0 });
        // A shift never runs past the buffer.
        for iter in 0..20 {
            let x = call_for(3, &p, &c, DType::Float, RedOp::Sum, false, iter);
            assert!(x.send.offset + c.size_bytes(DType::Float) <= p.max_bytes());
        }
    }
}
