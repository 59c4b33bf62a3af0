//! D02, message passing: hand-written allreduce algorithms against a real MPI_Allreduce.
//!
//! This crate has no MPI in it, so it builds anywhere; MPI lives in the rank program
//! (`labs/d02-mpi-ranks`), which `mpirun` starts and which implements [`comm::Comm`] over rsmpi.
//!
//! * [`elem`]: element types (i32, i64, f32, f64) and operations (sum, min, max).
//! * [`comm`]: the point-to-point trait every algorithm is written against.
//! * [`algorithms`]: ring, recursive doubling, Rabenseifner, binomial reduce + broadcast.
//! * [`sim`]: ranks as threads and channels, for fast property tests without MPI.
//! * [`check`]: comparing results with MPI and with an exact reference (ulps, error bounds).
//! * [`protocol`]: the job the CLI sends to the ranks and the report rank 0 sends back.
//! * [`model`]: fitting alpha and beta from a ping-pong, predictions from D01, scale boundaries.
//! * [`cli`]: `cargo lab d02 ...`, which launches `mpirun` and renders the transcripts.

pub mod algorithms;
pub mod check;
pub mod cli;
pub mod comm;
pub mod elem;
pub mod model;
pub mod protocol;
pub mod sim;

pub use algorithms::Algorithm;
pub use comm::Comm;
pub use elem::{ElemType, Element, Op};
pub use model::{boundaries_from_bench, scale_boundaries};
pub use protocol::{Iterations, Stats};
