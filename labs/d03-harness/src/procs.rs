//! The processes of a run: MPI's world when built with the `mpi` feature (the default), or a
//! single process when built without it, for GPU machines that have NCCL but no MPI (the
//! single-process multi-GPU mode, `-g N`).

use d03_collectives::method::Combine;

pub trait Procs {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Every process's line, in rank order, on rank 0 (empty elsewhere).
    fn gather_lines(&self, line: &str) -> Vec<String>;
    /// Rank 0's bytes to everyone.
    fn broadcast(&self, bytes: &mut [u8]);
    fn allreduce_f64(&self, x: f64, how: Combine) -> f64;
}

/// One process, no MPI.
#[cfg_attr(feature = "mpi", allow(dead_code))]
pub struct Solo;

impl Procs for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn gather_lines(&self, line: &str) -> Vec<String> {
        vec![line.to_string()]
    }
    fn broadcast(&self, _: &mut [u8]) {}
    fn allreduce_f64(&self, x: f64, _: Combine) -> f64 {
        x
    }
}

#[cfg(feature = "mpi")]
impl Procs for mpi::topology::SimpleCommunicator {
    fn rank(&self) -> usize {
        mpi::traits::Communicator::rank(self) as usize
    }
    fn size(&self) -> usize {
        mpi::traits::Communicator::size(self) as usize
    }
    fn gather_lines(&self, line: &str) -> Vec<String> {
        use mpi::traits::*;
        let mut buf = [0u8; 2048];
        let n = line.len().min(2047);
        buf[..n].copy_from_slice(&line.as_bytes()[..n]);
        let root = self.process_at_rank(0);
        if Communicator::rank(self) != 0 {
            root.gather_into(&buf[..]);
            return Vec::new();
        }
        let mut all = vec![0u8; 2048 * Communicator::size(self) as usize];
        root.gather_into_root(&buf[..], &mut all[..]);
        all.chunks(2048)
            .map(|c| String::from_utf8_lossy(&c[..c.iter().position(|&b| b == 0).unwrap_or(c.len())]).into_owned())
            .collect()
    }
    fn broadcast(&self, bytes: &mut [u8]) {
        use mpi::traits::*;
        self.process_at_rank(0).broadcast_into(bytes);
    }
    fn allreduce_f64(&self, x: f64, how: Combine) -> f64 {
        use mpi::collective::SystemOperation;
        use mpi::traits::*;
        let op = match how {
            Combine::Sum => SystemOperation::sum(),
            Combine::Min => SystemOperation::min(),
            Combine::Max => SystemOperation::max(),
        };
        let mut y = 0.0;
        self.all_reduce_into(&x, &mut y, op);
        y
    }
}
