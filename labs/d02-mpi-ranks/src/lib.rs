//! The MPI side of D02: the [`d02_mpi::Comm`] trait over real MPI point-to-point (rsmpi), and
//! osu_allreduce-style timing routines. The `d02-ranks` binary (src/main.rs) is the program
//! `mpirun` starts; other labs' rank programs may depend on this library to time MPI_Allreduce
//! exactly the same way in the same run.
//!
//! Public timing API (stable, used by D03's harness):
//!
//! ```text
//! pub fn time_mpi_allreduce(world: &SimpleCommunicator, bytes: usize, it: Iterations) -> Stats
//! pub fn time_hand_allreduce(world: &SimpleCommunicator, algorithm: Algorithm, bytes: usize, it: Iterations) -> Stats
//! pub fn time_osu(world: &SimpleCommunicator, it: Iterations, call: impl FnMut()) -> Stats
//! ```
//!
//! `Stats { min, avg, max }` are seconds per call: each rank's mean over `it.timed` iterations
//! (after `it.warmup` untimed ones), reduced over ranks with MIN, SUM / size and MAX, exactly as
//! osu_allreduce does. Each call is timed alone with MPI_Wtime and followed by an untimed
//! MPI_Barrier. Buffers are f32 with MPI_SUM (osu_allreduce's default), `bytes / 4` elements,
//! out of place. `Iterations::osu(bytes)` gives osu_allreduce's counts (1000 + 100 warm-up up to
//! 8 KiB, 100 + 10 above) and `.capped(bytes, budget)` limits large sizes. All ranks must call
//! these collectively with the same arguments.

use d02_mpi::Comm;
pub use d02_mpi::protocol::{Iterations, Stats};
use d02_mpi::{Algorithm, Element, Op};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Real MPI point-to-point behind the hand algorithms. Messages travel as bytes (MPI_BYTE), so
/// one implementation serves every element type.
pub struct MpiComm<'a> {
    world: &'a SimpleCommunicator,
}

impl<'a> MpiComm<'a> {
    pub fn new(world: &'a SimpleCommunicator) -> Self {
        MpiComm { world }
    }
}

// ANCHOR: mpi_comm
impl Comm for MpiComm<'_> {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn send<T: Element>(&self, buf: &[T], dest: usize) {
        self.world.process_at_rank(dest as i32).send(bytemuck::cast_slice::<T, u8>(buf));
    }

    fn recv<T: Element>(&self, buf: &mut [T], src: usize) {
        let bytes = bytemuck::cast_slice_mut::<T, u8>(buf);
        let expected = bytes.len();
        let status = self.world.process_at_rank(src as i32).receive_into(bytes);
        assert_eq!(status.count(u8::equivalent_datatype()) as usize, expected, "short message from rank {src}");
    }

    fn sendrecv<T: Element>(&self, send: &[T], dest: usize, recv: &mut [T], src: usize) {
        let to = self.world.process_at_rank(dest as i32);
        let from = self.world.process_at_rank(src as i32);
        let bytes = bytemuck::cast_slice_mut::<T, u8>(recv);
        let expected = bytes.len();
        let status = mpi::point_to_point::send_receive_into(bytemuck::cast_slice::<T, u8>(send), &to, bytes, &from);
        assert_eq!(status.count(u8::equivalent_datatype()) as usize, expected, "short message from rank {src}");
    }
}
// ANCHOR_END: mpi_comm

/// MPI's predefined operation for a lab operation.
pub fn system_op(op: Op) -> SystemOperation {
    match op {
        Op::Sum => SystemOperation::sum(),
        Op::Min => SystemOperation::min(),
        Op::Max => SystemOperation::max(),
    }
}

/// Reduce each rank's mean time to osu_allreduce's min / avg / max over ranks.
pub fn reduce_stats(world: &SimpleCommunicator, mean: f64) -> Stats {
    let (mut min, mut max, mut sum) = (0.0f64, 0.0f64, 0.0f64);
    world.all_reduce_into(&mean, &mut min, SystemOperation::min());
    world.all_reduce_into(&mean, &mut max, SystemOperation::max());
    world.all_reduce_into(&mean, &mut sum, SystemOperation::sum());
    Stats { min, avg: sum / world.size() as f64, max }
}

/// osu_allreduce's loop around any collective call: a barrier, then `warmup + timed` calls, each
/// timed alone with MPI_Wtime and followed by an untimed barrier.
// ANCHOR: time_osu
pub fn time_osu(world: &SimpleCommunicator, it: Iterations, mut call: impl FnMut()) -> Stats {
    world.barrier();
    let mut total = 0.0;
    for i in 0..it.warmup + it.timed {
        let start = mpi::time();
        call();
        let elapsed = mpi::time() - start;
        if i >= it.warmup {
            total += elapsed;
        }
        world.barrier();
    }
    reduce_stats(world, if it.timed > 0 { total / it.timed as f64 } else { 0.0 })
}
// ANCHOR_END: time_osu

/// Input element `i` of `rank` for timing runs: a small integer stored as f32, so that every
/// summation order gives the exact answer and a timed result can be checked bit for bit.
pub fn timing_value(rank: usize, i: usize) -> f32 {
    ((rank * 7 + i * 13) % 2001) as f32 - 1000.0
}

/// The timing input of `rank`: `bytes / 4` f32 elements.
pub fn timing_input(rank: usize, bytes: usize) -> Vec<f32> {
    (0..bytes / 4).map(|i| timing_value(rank, i)).collect()
}

/// Elements of an f32 sum result that differ from the exact sum of [`timing_input`]s.
pub fn count_wrong(p: usize, result: &[f32]) -> u64 {
    result.iter().enumerate().filter(|&(i, &x)| x != (0..p).map(|r| timing_value(r, i)).sum::<f32>()).count() as u64
}

/// Time MPI_Allreduce (f32, MPI_SUM, out of place) osu-style; also returns the number of wrong
/// elements in the last result (summed over ranks).
pub fn time_mpi_allreduce_checked(world: &SimpleCommunicator, bytes: usize, it: Iterations) -> (Stats, u64) {
    let send = timing_input(world.rank() as usize, bytes);
    let mut recv = vec![0.0f32; send.len()];
    let stats = time_osu(world, it, || world.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum()));
    (stats, sum_over_ranks(world, count_wrong(world.size() as usize, &recv)))
}

/// Time a hand algorithm (f32, sum, out of place) osu-style, with the wrong-element count.
pub fn time_hand_allreduce_checked(
    world: &SimpleCommunicator,
    algorithm: Algorithm,
    bytes: usize,
    it: Iterations,
) -> (Stats, u64) {
    let comm = MpiComm::new(world);
    let send = timing_input(world.rank() as usize, bytes);
    let mut recv = vec![0.0f32; send.len()];
    let stats = time_osu(world, it, || algorithm.run(&comm, Op::Sum, &send, &mut recv));
    (stats, sum_over_ranks(world, count_wrong(world.size() as usize, &recv)))
}

/// osu_allreduce-style timing of MPI_Allreduce on `bytes` bytes (f32, MPI_SUM).
pub fn time_mpi_allreduce(world: &SimpleCommunicator, bytes: usize, it: Iterations) -> Stats {
    time_mpi_allreduce_checked(world, bytes, it).0
}

/// osu_allreduce-style timing of a hand algorithm on `bytes` bytes (f32, sum).
pub fn time_hand_allreduce(world: &SimpleCommunicator, algorithm: Algorithm, bytes: usize, it: Iterations) -> Stats {
    time_hand_allreduce_checked(world, algorithm, bytes, it).0
}

pub fn sum_over_ranks(world: &SimpleCommunicator, x: u64) -> u64 {
    let mut total = 0u64;
    world.all_reduce_into(&x, &mut total, SystemOperation::sum());
    total
}

pub fn max_f64_over_ranks(world: &SimpleCommunicator, x: f64) -> f64 {
    let mut m = 0f64;
    world.all_reduce_into(&x, &mut m, SystemOperation::max());
    m
}

pub fn max_over_ranks(world: &SimpleCommunicator, x: u64) -> u64 {
    let mut m = 0u64;
    world.all_reduce_into(&x, &mut m, SystemOperation::max());
    m
}

/// osu_latency: rank 0 sends `bytes` to rank 1 and waits for them to come back; one-way time is
/// the round trip / 2. Other ranks only join the barriers. Returns rank 0's figure on rank 0.
// ANCHOR: pingpong
pub fn pingpong(world: &SimpleCommunicator, bytes: usize, it: Iterations) -> f64 {
    let mut buf = vec![0u8; bytes];
    let rank = world.rank();
    world.barrier();
    let mut start = mpi::time();
    for i in 0..it.warmup + it.timed {
        if i == it.warmup {
            start = mpi::time();
        }
        if rank == 0 {
            world.process_at_rank(1).send(&buf[..]);
            world.process_at_rank(1).receive_into(&mut buf[..]);
        } else if rank == 1 {
            world.process_at_rank(0).receive_into(&mut buf[..]);
            world.process_at_rank(0).send(&buf[..]);
        }
    }
    let one_way = (mpi::time() - start) / (2.0 * it.timed as f64);
    world.barrier();
    one_way
}
// ANCHOR_END: pingpong

/// Ranks 0 and 1 swap `bytes` with one MPI_Sendrecv each, the primitive of every ring step.
/// Returns the time per exchange on rank 0; other ranks only join the barriers.
pub fn exchange(world: &SimpleCommunicator, bytes: usize, it: Iterations) -> f64 {
    let out = vec![0u8; bytes];
    let mut inc = vec![0u8; bytes];
    let rank = world.rank();
    world.barrier();
    let mut start = mpi::time();
    for i in 0..it.warmup + it.timed {
        if i == it.warmup {
            start = mpi::time();
        }
        if rank < 2 {
            let peer = world.process_at_rank(1 - rank);
            mpi::point_to_point::send_receive_into(&out[..], &peer, &mut inc[..], &peer);
        }
    }
    let per = (mpi::time() - start) / it.timed as f64;
    world.barrier();
    per
}

/// The MPI library's own version line (MPI_Get_library_version), e.g. "Open MPI v4.1.4, ...".
pub fn library_version() -> String {
    mpi::environment::library_version()
        .map(|v| v.lines().next().unwrap_or("").trim().trim_end_matches('\0').to_string())
        .unwrap_or_else(|_| "unknown MPI".into())
}
