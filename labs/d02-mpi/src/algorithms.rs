//! Hand-written allreduce algorithms over point-to-point messages.
//!
//! Every algorithm has the signature of an out-of-place MPI_Allreduce: each rank passes its own
//! `send` buffer and gets the reduction of all ranks' buffers in `recv` (same length on every
//! rank). They are generic over the element type and the operation, and correct for every
//! p >= 1 and every count >= 0, including counts that p does not divide.
//!
//! None of them copies `send` into `recv` up front: the first reduction of each region writes
//! `recv = send op incoming` directly, which saves one pass over the buffer.

use std::cell::RefCell;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::comm::Comm;
use crate::elem::{Element, Op, reduce_in, reduce_out};

/// The hand algorithms, named as D01's cost model names them.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    Ring,
    RecursiveDoubling,
    Rabenseifner,
    Binomial,
}

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Ring,
        Algorithm::RecursiveDoubling,
        Algorithm::Rabenseifner,
        Algorithm::Binomial,
    ];

    pub fn name(self) -> &'static str {
        self.model().name()
    }

    /// The D01 cost formula for this algorithm.
    pub fn model(self) -> d01_scaling::Allreduce {
        match self {
            Algorithm::Ring => d01_scaling::Allreduce::Ring,
            Algorithm::RecursiveDoubling => d01_scaling::Allreduce::RecursiveDoubling,
            Algorithm::Rabenseifner => d01_scaling::Allreduce::Rabenseifner,
            Algorithm::Binomial => d01_scaling::Allreduce::BinomialReduceBcast,
        }
    }

    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name)
    }

    pub fn run<C: Comm, T: Element>(self, comm: &C, op: Op, send: &[T], recv: &mut [T]) {
        match self {
            Algorithm::Ring => ring(comm, op, send, recv),
            Algorithm::RecursiveDoubling => recursive_doubling(comm, op, send, recv),
            Algorithm::Rabenseifner => rabenseifner(comm, op, send, recv),
            Algorithm::Binomial => binomial(comm, op, send, recv),
        }
    }
}

/// Element range of block `b` when `n` elements are split into `parts` blocks whose sizes differ
/// by at most one (the first `n % parts` blocks get the extra element).
// ANCHOR: chunk
pub fn block(n: usize, parts: usize, b: usize) -> Range<usize> {
    let (base, extra) = (n / parts, n % parts);
    let start = b * base + b.min(extra);
    start..start + base + usize::from(b < extra)
}
// ANCHOR_END: chunk

/// Elements of the contiguous block range `blocks` (a window of whole blocks).
fn blocks(n: usize, parts: usize, blocks: Range<usize>) -> Range<usize> {
    if blocks.is_empty() {
        return 0..0;
    }
    block(n, parts, blocks.start).start..block(n, parts, blocks.end - 1).end
}

thread_local! {
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Run `body` with a scratch buffer of `len` elements that is kept and reused across calls on
/// this thread (its contents are whatever the last call left). Allocating per call costs more
/// than it seems: glibc hands allocations of 32 MiB and more straight back to the kernel on
/// free, so a fresh buffer that size page-faults in again on every call.
// ANCHOR: scratch
pub fn with_scratch<T: Element, R>(len: usize, body: impl FnOnce(&mut [T]) -> R) -> R {
    SCRATCH.with(|cell| {
        let mut words = cell.take(); // taken, not borrowed: a nested call gets its own buffer
        let need = (len * std::mem::size_of::<T>()).div_ceil(8);
        if words.len() < need {
            words.resize(need, 0);
        }
        let out = body(&mut bytemuck::cast_slice_mut::<u64, T>(&mut words[..need])[..len]);
        cell.replace(words);
        out
    })
}
// ANCHOR_END: scratch

/// Borrow `read` immutably and `write` mutably from one buffer; the ranges must not overlap.
fn split_disjoint<T>(buf: &mut [T], read: Range<usize>, write: Range<usize>) -> (&[T], &mut [T]) {
    assert!(
        read.end <= write.start || write.end <= read.start,
        "ranges overlap"
    );
    if read.start < write.start {
        let (lo, hi) = buf.split_at_mut(write.start);
        (&lo[read], &mut hi[..write.end - write.start])
    } else {
        let (lo, hi) = buf.split_at_mut(read.start);
        (&hi[..read.end - read.start], &mut lo[write])
    }
}

/// Ring allreduce: a reduce-scatter around the ring (p - 1 steps), after which rank r holds the
/// fully reduced block r + 1, then an allgather around the ring (p - 1 steps) that passes the
/// finished blocks on. Every step is one MPI_Sendrecv: send right, receive from the left.
/// Each block arrives at a rank exactly once during the reduce-scatter, so it can land straight
/// in its place in `recv`: the ring needs no scratch buffer and never copies its input.
// ANCHOR: ring
pub fn ring<C: Comm, T: Element>(comm: &C, op: Op, send: &[T], recv: &mut [T]) {
    let (p, r, n) = (comm.size(), comm.rank(), send.len());
    assert_eq!(recv.len(), n, "send and receive buffers differ in length");
    if p == 1 || n == 0 {
        recv.copy_from_slice(send);
        return;
    }
    let (right, left) = ((r + 1) % p, (r + p - 1) % p);
    let chunk = |c: usize| block(n, p, c % p);

    // Reduce-scatter. Step s: send block r - s (our own input at s = 0, afterwards the block we
    // finished reducing in the previous step), receive the left neighbour's partial sum of block
    // r - s - 1 into place and add our own input to it.
    for s in 0..p - 1 {
        let (out_block, in_block) = (chunk(r + p - s), chunk(r + 2 * p - s - 1));
        if s == 0 {
            comm.sendrecv(&send[out_block], right, &mut recv[in_block.clone()], left);
        } else {
            let (outgoing, into) = split_disjoint(recv, out_block, in_block.clone());
            comm.sendrecv(outgoing, right, into, left);
        }
        reduce_in(op, &mut recv[in_block.clone()], &send[in_block]);
    }

    // Allgather. Rank r now owns the finished block r + 1. Step s: send block r + 1 - s,
    // receive block r - s straight into place.
    for s in 0..p - 1 {
        let (out_block, in_block) = (chunk(r + 1 + p - s), chunk(r + p - s));
        let (outgoing, into) = split_disjoint(recv, out_block, in_block);
        comm.sendrecv(outgoing, right, into, left);
    }
}
// ANCHOR_END: ring

/// The ring as a beginner writes it: send right, then receive from the left. With eager sends it
/// works; once messages are large enough for rendezvous every rank waits in `send` for a receive
/// that nobody has posted, and the ring deadlocks. Kept to demonstrate exactly that.
// ANCHOR: naive
pub fn naive_ring<C: Comm, T: Element>(comm: &C, op: Op, send: &[T], recv: &mut [T]) {
    let (p, r, n) = (comm.size(), comm.rank(), send.len());
    recv.copy_from_slice(send);
    if p == 1 || n == 0 {
        return;
    }
    let (right, left) = ((r + 1) % p, (r + p - 1) % p);
    let mut incoming = vec![T::zeroed(); block(n, p, 0).len()];
    for s in 0..p - 1 {
        let (out_block, in_block) = (
            block(n, p, (r + p - s) % p),
            block(n, p, (r + 2 * p - s - 1) % p),
        );
        comm.send(&recv[out_block], right); // every rank sends first ...
        let tmp = &mut incoming[..in_block.len()];
        comm.recv(tmp, left); // ... so with rendezvous nobody ever gets here
        reduce_in(op, &mut recv[in_block], tmp);
    }
    for s in 0..p - 1 {
        let (out_block, in_block) = (
            block(n, p, (r + 1 + p - s) % p),
            block(n, p, (r + p - s) % p),
        );
        comm.send(&recv[out_block], right);
        comm.recv(&mut recv[in_block], left);
    }
}
// ANCHOR_END: naive

/// `recv = (first ? send : recv) op incoming`, then mark `recv` as holding data.
fn accumulate<T: Element>(op: Op, send: &[T], recv: &mut [T], incoming: &[T], first: &mut bool) {
    if *first {
        reduce_out(op, recv, send, incoming);
        *first = false;
    } else {
        reduce_in(op, recv, incoming);
    }
}

/// The non-power-of-two fold shared by recursive doubling and Rabenseifner. With p = 2^k + rem,
/// the first 2*rem ranks pair up: each even rank sends its buffer to the odd rank above it and
/// sits out. The 2^k remaining ranks get new ranks 0..2^k. Returns this rank's new rank (None for
/// a rank that sat out) and whether `recv` still needs its first write.
fn fold<C: Comm, T: Element>(
    comm: &C,
    op: Op,
    send: &[T],
    recv: &mut [T],
    tmp: &mut [T],
) -> (Option<usize>, bool) {
    let (p, r) = (comm.size(), comm.rank());
    let rem = p - pof2_floor(p);
    let mut first = true;
    if r < 2 * rem {
        if r % 2 == 0 {
            comm.send(send, r + 1);
            return (None, first);
        }
        comm.recv(tmp, r - 1);
        accumulate(op, send, recv, tmp, &mut first);
        return (Some(r / 2), first);
    }
    (Some(r - rem), first)
}

/// The real rank behind new rank `new` after [`fold`].
fn unfolded(new: usize, rem: usize) -> usize {
    if new < rem { 2 * new + 1 } else { new + rem }
}

/// The end of the fold: odd ranks hand the result back to the even rank that sat out.
fn unfold<C: Comm, T: Element>(comm: &C, recv: &mut [T]) {
    let (p, r) = (comm.size(), comm.rank());
    let rem = p - pof2_floor(p);
    if r < 2 * rem {
        if r % 2 == 0 {
            comm.recv(recv, r + 1)
        } else {
            comm.send(recv, r - 1)
        }
    }
}

pub fn pof2_floor(p: usize) -> usize {
    1 << (usize::BITS - 1 - p.leading_zeros())
}

/// Recursive doubling: in round k every rank exchanges its whole partial result with the rank
/// whose (new) rank differs in bit k, and reduces. lg p rounds, whole buffer each time.
// ANCHOR: recursive_doubling
pub fn recursive_doubling<C: Comm, T: Element>(comm: &C, op: Op, send: &[T], recv: &mut [T]) {
    let (p, n) = (comm.size(), send.len());
    assert_eq!(recv.len(), n, "send and receive buffers differ in length");
    if p == 1 || n == 0 {
        recv.copy_from_slice(send);
        return;
    }
    let (pof2, rem) = (pof2_floor(p), p - pof2_floor(p));
    with_scratch(n, |tmp: &mut [T]| {
        let (new_rank, mut first) = fold(comm, op, send, recv, tmp);
        if let Some(me) = new_rank {
            let mut mask = 1;
            while mask < pof2 {
                let partner = unfolded(me ^ mask, rem);
                let outgoing = if first { send } else { &*recv };
                comm.sendrecv(outgoing, partner, tmp, partner);
                accumulate(op, send, recv, tmp, &mut first);
                mask <<= 1;
            }
        }
    });
    unfold(comm, recv);
}
// ANCHOR_END: recursive_doubling

/// Rabenseifner: a reduce-scatter by recursive halving (each round exchanges half of the current
/// window with the partner and keeps reducing the other half), then an allgather by recursive
/// doubling that retraces the rounds backwards. Non-powers of two fold first, like recursive
/// doubling.
// ANCHOR: rabenseifner
pub fn rabenseifner<C: Comm, T: Element>(comm: &C, op: Op, send: &[T], recv: &mut [T]) {
    let (p, n) = (comm.size(), send.len());
    assert_eq!(recv.len(), n, "send and receive buffers differ in length");
    if p == 1 || n == 0 {
        recv.copy_from_slice(send);
        return;
    }
    let (pof2, rem) = (pof2_floor(p), p - pof2_floor(p));
    with_scratch(n, |tmp: &mut [T]| {
        let (new_rank, mut first) = fold(comm, op, send, recv, tmp);
        if let Some(me) = new_rank {
            // The buffer is cut into pof2 blocks; `window` is the range of blocks this rank is
            // still responsible for. Halving from the top bit down leaves block `me`.
            let elems = |w: &Range<usize>| blocks(n, pof2, w.clone());
            let mut window = 0..pof2;
            let mut mask = pof2 / 2;
            while mask > 0 {
                let partner = unfolded(me ^ mask, rem);
                let mid = (window.start + window.end) / 2;
                let (keep, give) = if me & mask == 0 {
                    (window.start..mid, mid..window.end)
                } else {
                    (mid..window.end, window.start..mid)
                };
                let (keep_e, give_e) = (elems(&keep), elems(&give));
                let outgoing = if first { &send[give_e] } else { &recv[give_e] };
                let incoming = &mut tmp[..keep_e.len()];
                comm.sendrecv(outgoing, partner, incoming, partner);
                if first {
                    reduce_out(op, &mut recv[keep_e.clone()], &send[keep_e], incoming);
                } else {
                    reduce_in(op, &mut recv[keep_e], incoming);
                }
                first = false;
                window = keep;
                mask >>= 1;
            }
            // Allgather: double the window each round by swapping it with the partner's neighbour.
            let mut mask = 1;
            while mask < pof2 {
                let partner = unfolded(me ^ mask, rem);
                let width = window.end - window.start;
                let theirs = if me & mask == 0 {
                    window.end..window.end + width
                } else {
                    window.start - width..window.start
                };
                let (outgoing, into) = split_disjoint(recv, elems(&window), elems(&theirs));
                comm.sendrecv(outgoing, partner, into, partner);
                window = window.start.min(theirs.start)..window.end.max(theirs.end);
                mask <<= 1;
            }
        }
    });
    unfold(comm, recv);
}
// ANCHOR_END: rabenseifner

/// Binomial-tree reduce to rank 0, then binomial-tree broadcast from rank 0. In round k of the
/// reduce, ranks with bit k set send their partial result to rank - 2^k and drop out.
// ANCHOR: binomial
pub fn binomial<C: Comm, T: Element>(comm: &C, op: Op, send: &[T], recv: &mut [T]) {
    let (p, r, n) = (comm.size(), comm.rank(), send.len());
    assert_eq!(recv.len(), n, "send and receive buffers differ in length");
    if p == 1 || n == 0 {
        recv.copy_from_slice(send);
        return;
    }
    with_scratch(n, |tmp: &mut [T]| {
        let mut first = true;
        let mut mask = 1;
        while mask < p {
            if r & mask != 0 {
                comm.send(if first { send } else { &*recv }, r - mask);
                break;
            }
            if r + mask < p {
                comm.recv(tmp, r + mask);
                accumulate(op, send, recv, tmp, &mut first);
            }
            mask <<= 1;
        }
    });
    // Broadcast: receive from the parent (the rank without our lowest set bit), then send down
    // to children r + 2^j for every j below that bit.
    let mut mask = 1;
    while mask < p {
        if r & mask != 0 {
            comm.recv(recv, r - mask);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if r + mask < p {
            comm.send(recv, r + mask);
        }
        mask >>= 1;
    }
}
// ANCHOR_END: binomial

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_tile_the_buffer() {
        for n in 0..40 {
            for parts in 1..10 {
                let mut next = 0;
                for b in 0..parts {
                    let r = block(n, parts, b);
                    assert_eq!(r.start, next);
                    assert!(r.len() == n / parts || r.len() == n / parts + 1);
                    next = r.end;
                }
                assert_eq!(next, n);
                assert_eq!(blocks(n, parts, 0..parts), 0..n);
            }
        }
    }

    #[test]
    fn pof2_floor_is_the_largest_power_below() {
        assert_eq!(pof2_floor(1), 1);
        assert_eq!(pof2_floor(7), 4);
        assert_eq!(pof2_floor(8), 8);
        assert_eq!(pof2_floor(9), 8);
    }
}
