//! What the CLI asks the rank program to do, and what rank 0 sends back: one JSON document each
//! way (the job as the program's only argument, the report on rank 0's stdout). Kept here, in
//! the crate without MPI, so both sides share one definition.

use serde::{Deserialize, Serialize};

use crate::algorithms::Algorithm;
use crate::elem::{ElemType, Op};

/// A job for the rank program.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", tag = "job")]
pub enum Job {
    /// Every hand algorithm x type x op x count against MPI_Allreduce.
    Correctness {
        /// The large prime element count (the other counts follow from p: 0, 1, p-1, p+1).
        prime: usize,
        seed: u64,
        /// Test hook: this rank exits without MPI_Finalize right after start-up.
        exit_early: Option<usize>,
    },
    /// osu-style timings of hand algorithms and MPI_Allreduce, plus ping-pong and reduce speed.
    Bench {
        sizes: Vec<usize>,
        hand: Vec<Algorithm>,
        /// Label for the MPI_Allreduce rows: "default" or the forced tuned algorithm's name.
        mpi_label: String,
        /// Cap on timed bytes per size and implementation (iterations = min(osu, budget/size)).
        byte_budget: usize,
        pingpong: bool,
        /// Repeat the whole sweep this many times, sizes and implementations interleaved, and
        /// keep each row's best (lowest average) round: a filter against background load.
        rounds: usize,
        exit_early: Option<usize>,
    },
}

impl Job {
    pub fn exit_early(&self) -> Option<usize> {
        match self {
            Job::Correctness { exit_early, .. } | Job::Bench { exit_early, .. } => *exit_early,
        }
    }
}

/// osu_allreduce's statistics: each rank's mean time per call, reduced over ranks. Seconds.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
}

/// Warm-up and timed iterations for one size.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Iterations {
    pub warmup: usize,
    pub timed: usize,
}

impl Iterations {
    /// osu_allreduce's defaults: 1000 timed + 100 warm-up up to 8 KiB, 100 + 10 above.
    pub fn osu(bytes: usize) -> Self {
        if bytes <= 8192 { Iterations { warmup: 100, timed: 1000 } } else { Iterations { warmup: 10, timed: 100 } }
    }

    /// osu_latency's defaults: 10000 + 100 up to 8 KiB, 1000 + 10 above.
    pub fn osu_latency(bytes: usize) -> Self {
        if bytes <= 8192 { Iterations { warmup: 100, timed: 10_000 } } else { Iterations { warmup: 10, timed: 1000 } }
    }

    /// Fewer iterations for large sizes so a sweep to 64 MiB stays short: at most `budget`
    /// bytes timed per size, never fewer than 10 timed and 2 warm-up iterations.
    pub fn capped(self, bytes: usize, budget: usize) -> Self {
        let timed = self.timed.min((budget / bytes.max(1)).max(10));
        Iterations { warmup: self.warmup.min((timed / 10).max(2)), timed }
    }
}

/// One case of the correctness sweep, reduced over all ranks.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Case {
    pub p: usize,
    pub count: usize,
    pub elem: ElemType,
    pub op: Op,
    pub algorithm: Algorithm,
    /// Elements (summed over ranks) where the hand result differs from MPI_Allreduce's.
    pub differ_from_mpi: u64,
    /// Largest ulp distance between the hand result and MPI_Allreduce's.
    pub max_ulps_vs_mpi: u64,
    /// Largest ulp distance from the correctly rounded (f32: exact f64; f64: compensated) sum.
    pub max_ulps_hand_vs_exact: u64,
    pub max_ulps_mpi_vs_exact: u64,
    /// Elements whose error exceeds the recursive-summation bound (p-1)u/(1-(p-1)u) * sum|x|.
    pub over_bound_hand: u64,
    pub over_bound_mpi: u64,
    /// Largest error in units of u * sum|x_i| (float sums only; a correct sum stays below ~p-1).
    #[serde(default)]
    pub max_err_hand: f64,
    #[serde(default)]
    pub max_err_mpi: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CorrectnessReport {
    pub p: usize,
    pub mpi_library: String,
    pub cases: Vec<Case>,
}

/// osu_latency: one-way time = round trip / 2.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PingPong {
    pub bytes: usize,
    pub iterations: usize,
    pub one_way: f64,
}

/// Time of `out = a + b` (f32) per byte of `out`, on every rank at once.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReduceSpeed {
    pub bytes: usize,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Timing {
    /// "hand ring", "MPI default", "MPI ring", ...
    pub implementation: String,
    pub bytes: usize,
    pub iterations: Iterations,
    pub stats: Stats,
    /// Elements of the last result that differ from the exact answer (inputs are small
    /// integers stored as f32, so every summation order is exact).
    pub wrong: u64,
    /// The average of every round, in round order (`stats` is the best of them): the spread
    /// says how much the host's other work disturbed this row.
    #[serde(default)]
    pub round_avgs: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BenchReport {
    pub p: usize,
    pub mpi_library: String,
    pub pingpong: Vec<PingPong>,
    /// Ranks 0 and 1 swap `bytes` with one MPI_Sendrecv each (both directions at once, as in
    /// every ring step); `one_way` holds the time per exchange.
    #[serde(default)]
    pub exchange: Vec<PingPong>,
    pub reduce: Vec<ReduceSpeed>,
    pub timings: Vec<Timing>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_round_trip_through_json() {
        let j = Job::Bench {
            sizes: vec![8, 1 << 20],
            hand: vec![Algorithm::Ring],
            mpi_label: "default".into(),
            byte_budget: 1 << 30,
            pingpong: true,
            rounds: 1,
            exit_early: None,
        };
        let s = serde_json::to_string(&j).unwrap();
        assert_eq!(serde_json::from_str::<Job>(&s).unwrap(), j);
    }

    #[test]
    fn iterations_follow_osu_then_cap() {
        assert_eq!(Iterations::osu(8192).timed, 1000);
        assert_eq!(Iterations::osu(8193).timed, 100);
        let c = Iterations::osu(64 << 20).capped(64 << 20, 1 << 30);
        assert_eq!(c, Iterations { warmup: 2, timed: 16 });
        assert_eq!(Iterations::osu(8).capped(8, 1 << 30), Iterations::osu(8));
    }
}
