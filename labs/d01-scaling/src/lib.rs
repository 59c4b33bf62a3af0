//! D01, the theory spine: the vocabulary every other module quotes instead of re-deriving.
//!
//! * [`laws`]: Amdahl, Gustafson, Karp-Flatt, isoefficiency.
//! * [`cost`]: the Hockney alpha-beta model with gamma for reduction arithmetic, and LogP/LogGP.
//! * [`collectives`]: the cost of every collective algorithm in alpha-beta-gamma terms, and the
//!   allreduce bandwidth lower bound.
//! * [`wall`]: compute plus communication, T(p) = serial + parallel/p + T_comm(p), and the
//!   scaling wall: where efficiency drops below a threshold and where more ranks make it slower.
//! * [`karp_flatt`]: the experimentally determined serial fraction from measured (p, time) pairs.
//! * [`cli`]: the `cargo lab d01 ...` commands and their published transcripts.
//!
//! All quantities are SI: seconds, bytes, bytes per second.

pub mod cli;
pub mod collectives;
pub mod cost;
pub mod karp_flatt;
pub mod laws;
pub mod wall;

pub use collectives::{Allgather, Allreduce, Alltoall, Broadcast, ReduceScatter};
pub use cost::{Cost, Machine};
