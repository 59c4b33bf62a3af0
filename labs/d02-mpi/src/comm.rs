//! The point-to-point interface the hand algorithms are written against.
//!
//! Two implementations: [`crate::sim::ThreadComm`] (ranks are threads, messages go through
//! channels; for fast property tests without MPI) and `d02_mpi_ranks::MpiComm` (real MPI through
//! rsmpi, in the rank program that `mpirun` starts). The algorithms cannot tell them apart.

use crate::elem::Element;

// ANCHOR: comm
/// Blocking point-to-point messages between the ranks of one communicator.
///
/// The semantics are MPI's: `send` may return before the receiver has the data (eager) or may
/// wait for the matching receive (rendezvous), so an algorithm must never rely on `send` returning
/// early. `sendrecv` sends and receives at the same time and so cannot deadlock when every rank of a
/// ring calls it at once.
pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    fn send<T: Element>(&self, buf: &[T], dest: usize);
    /// Receive exactly `buf.len()` elements from `src`.
    fn recv<T: Element>(&self, buf: &mut [T], src: usize);
    /// Send `send` to `dest` while receiving `recv.len()` elements from `src` (MPI_Sendrecv).
    fn sendrecv<T: Element>(&self, send: &[T], dest: usize, recv: &mut [T], src: usize);
}
// ANCHOR_END: comm
