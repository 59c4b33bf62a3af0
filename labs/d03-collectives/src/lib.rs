//! D03 GPU collectives: an nccl-tests-compatible bus-bandwidth harness and what surrounds it.
//!
//! * [`coll`]: collectives, types, ops, nccl-tests' byte counts and busbw factors.
//! * [`method`]: nccl-tests' measurement loop over a [`method::Backend`] (MPI or NCCL backends
//!   live in the `d03-harness` rank program, so this crate needs neither MPI nor CUDA).
//! * [`data`]: verifiable data and the exact `#wrong` count.
//! * [`format`]: nccl-tests' table, byte for byte.
//! * [`import`]: parsing and recomputing published nccl-tests / rccl-tests logs.
//! * [`model`]: D01's cost model turned into predicted busbw for described nodes, and
//!   [`scale_boundaries`] for D06.
//! * [`cli`]: `cargo lab d03 ...`.

pub mod args;
pub mod cli;
pub mod coll;
pub mod data;
pub mod format;
pub mod gpu;
pub mod import;
pub mod method;
pub mod model;

pub use model::scale_boundaries;
