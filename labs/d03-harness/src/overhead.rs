//! `--overhead`: what the harness costs around the collective, and how its MPI all_reduce time
//! compares with a bare MPI_Allreduce loop and with D02's osu-style timing, in one run.
//!
//! The methods alternate batch by batch (harness, bare, empty, D02, harness, ...) and the
//! fastest batch of each is kept, so slow drifts and other jobs on the machine hit all alike.

use std::os::raw::c_int;
use std::time::Instant;

use anyhow::Result;
use d02_mpi::protocol::Iterations;
use d03_collectives::args::BenchArgs;
use d03_collectives::coll::{Collective, DType, RedOp, counts};
use d03_collectives::method::{self, Backend, Combine};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde_json::{Value, json};

use crate::mpi_backend::MpiBackend;

/// The fastest batch: on a shared machine, interference only ever adds time, so the minimum
/// of many alternating batches is the fairest estimate of each method's own cost.
fn fastest(v: Vec<f64>) -> f64 {
    v.into_iter().fold(f64::INFINITY, f64::min)
}

pub fn measure(world: &SimpleCommunicator, args: &BenchArgs, reps: usize) -> Result<Value> {
    let n = world.size() as usize;
    let full = args.plan(Collective::AllReduce, n)?;
    let iters = full.iters;
    let mut b = MpiBackend::new(world)?;
    let mut rows = Vec::new();
    for &size in &full.sizes {
        let plan = method::Plan { sizes: vec![size], dtypes: vec![DType::Float], ops: vec![RedOp::Sum], ..full.clone() };
        b.alloc(size)?;
        let c = counts(Collective::AllReduce, size, DType::Float, n)?;
        let rank = b.rank();
        let seq = method::CallSeq::new(rank, &plan, &c, DType::Float, RedOp::Sum, false);
        let (mut harness, mut bare, mut empty, mut d02) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // Touched before timing, like the harness's buffers, so no batch pays first-touch faults.
        let send = vec![1.0f32; c.param];
        let mut recv = vec![1.0f32; c.param];
        for _ in 0..reps.max(1) {
            let t = method::time_batch(&mut b, &seq, iters)?;
            harness.push(b.allreduce_f64(t, Combine::Sum)? / n as f64);

            // The bare loop: the same call, no harness around it.
            world.barrier();
            let start = Instant::now();
            for _ in 0..iters {
                // SAFETY: both buffers hold c.param floats.
                unsafe {
                    ffi::MPI_Allreduce(
                        send.as_ptr() as *const _, recv.as_mut_ptr() as *mut _, c.param as c_int,
                        ffi::RSMPI_FLOAT, ffi::RSMPI_SUM, world.as_raw(),
                    );
                }
            }
            let t = start.elapsed().as_secs_f64() / iters as f64;
            bare.push(b.allreduce_f64(t, Combine::Sum)? / n as f64);

            let t = method::time_empty_loop(&seq, iters);
            empty.push(b.allreduce_f64(t, Combine::Max)?);

            let stats = d02_mpi_ranks::time_mpi_allreduce(world, size, Iterations { warmup: 2, timed: iters });
            d02.push(stats.avg);
        }
        // One verification round through the harness.
        let check_plan = method::Plan { iters: 1, warmup: 0, check: 1, ..plan.clone() };
        let out = method::run(&mut b, &check_plan, &mut |_| {})?;
        let wrong = d03_collectives::format::total_wrong(&out.rows);
        rows.push(json!({
            "size": size, "harness_s": fastest(harness), "bare_s": fastest(bare), "empty_s": fastest(empty), "d02_s": fastest(d02), "wrong": wrong,
        }));
        if world.rank() == 0 {
            eprintln!("overhead: {size} B done");
        }
    }
    Ok(json!({
        "rows": rows,
        "iters": iters,
        "reps": reps,
        "d02_about": "d02_mpi_ranks::time_mpi_allreduce: osu_allreduce's loop (each call timed alone by MPI_Wtime, untimed barrier after it), f32 sum, same sizes, same ranks, same run",
    }))
}
