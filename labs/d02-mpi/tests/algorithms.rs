//! Every hand algorithm, on the thread simulator, over p = 1..=9 and many counts, every element
//! type and op: integers must equal the serial reduction exactly; floats must all ranks agree
//! bit for bit and stay within the recursive-summation bound. (The same algorithms are checked
//! bit-exact against real MPI_Allreduce in labs/d02-mpi-ranks/tests.)

use std::time::Duration;

use d02_mpi::algorithms::{Algorithm, naive_ring, ring};
use d02_mpi::check::local_case;
use d02_mpi::elem::{Element, Op, test_input};
use d02_mpi::sim::{Protocol, panic_message, run_ranks, run_ranks_with_deadline};
use proptest::prelude::*;

/// The serial reduction over ranks in rank order: what every algorithm must agree with
/// (exactly for integers; within the error bound for floats).
fn serial<T: Element>(op: Op, seed: u64, p: usize, count: usize) -> Vec<T> {
    let mut acc = test_input::<T>(seed, 0, count);
    for r in 1..p {
        d02_mpi::elem::reduce_in(op, &mut acc, &test_input::<T>(seed, r, count));
    }
    acc
}

fn check_one<T: Element>(algorithm: Algorithm, op: Op, p: usize, count: usize, seed: u64, protocol: Protocol) {
    let results = run_ranks(p, protocol, |c| {
        let send = test_input::<T>(seed, d02_mpi::Comm::rank(c), count);
        let mut recv = vec![T::zeroed(); count];
        algorithm.run(c, op, &send, &mut recv);
        recv
    });
    let expected = serial::<T>(op, seed, p, count);
    for (rank, got) in results.iter().enumerate() {
        // Every rank holds the same bits (each block is reduced once, then copied).
        assert_eq!(got, &results[0], "{algorithm:?} {op:?} p={p} n={count}: rank {rank} differs from rank 0");
        if T::TYPE.is_float() && op == Op::Sum {
            let c = local_case(op, seed, p, got, &expected);
            assert_eq!(c.over_bound_hand, 0, "{algorithm:?} p={p} n={count}: error above the bound");
        } else {
            assert_eq!(got, &expected, "{algorithm:?} {:?} {op:?} p={p} n={count} rank {rank}", T::TYPE);
        }
    }
}

fn check_all_types(algorithm: Algorithm, op: Op, p: usize, count: usize, seed: u64) {
    check_one::<i32>(algorithm, op, p, count, seed, Protocol::Eager);
    check_one::<i64>(algorithm, op, p, count, seed, Protocol::Eager);
    check_one::<f32>(algorithm, op, p, count, seed, Protocol::Eager);
    check_one::<f64>(algorithm, op, p, count, seed, Protocol::Eager);
}

#[test]
fn every_algorithm_type_and_op_at_the_edge_counts() {
    for p in 1usize..=9 {
        let counts = [0, 1, p.saturating_sub(1), p + 1, 2 * p + 3, 1009];
        for &count in &counts {
            for algorithm in Algorithm::ALL {
                for op in Op::ALL {
                    check_all_types(algorithm, op, p, count, 42 + count as u64);
                }
            }
        }
    }
}

#[test]
fn sendrecv_algorithms_survive_rendezvous_sends() {
    // With rendezvous every send waits for its receive: algorithms must pair their messages.
    for p in [2, 3, 5, 8] {
        for algorithm in Algorithm::ALL {
            check_one::<i64>(algorithm, Op::Sum, p, 37, 5, Protocol::Rendezvous);
        }
    }
}

#[test]
fn naive_send_then_receive_ring_deadlocks_with_rendezvous() {
    let run = |protocol| {
        std::panic::catch_unwind(|| {
            run_ranks_with_deadline(4, protocol, Duration::from_millis(300), |c| {
                let send = test_input::<i32>(1, d02_mpi::Comm::rank(c), 64);
                let mut recv = vec![0i32; 64];
                naive_ring(c, Op::Sum, &send, &mut recv);
                recv
            })
        })
    };
    // Eager: the naive ring is correct.
    let ok = run(Protocol::Eager).expect("eager naive ring completes");
    assert_eq!(ok[0], serial::<i32>(Op::Sum, 1, 4, 64));
    // Rendezvous: every rank blocks in its first send.
    let err = run(Protocol::Rendezvous).expect_err("rendezvous naive ring must deadlock");
    assert!(panic_message(&err).contains("deadlock"), "{}", panic_message(&err));
    // The Sendrecv ring on the same setting completes.
    let fine = run_ranks(4, Protocol::Rendezvous, |c| {
        let send = test_input::<i32>(1, d02_mpi::Comm::rank(c), 64);
        let mut recv = vec![0i32; 64];
        ring(c, Op::Sum, &send, &mut recv);
        recv
    });
    assert_eq!(fine[3], serial::<i32>(Op::Sum, 1, 4, 64));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_sizes_and_rank_counts(p in 1usize..=9, count in 0usize..300, seed in any::<u64>(), a in 0usize..4, o in 0usize..3) {
        check_all_types(Algorithm::ALL[a], Op::ALL[o], p, count, seed);
    }
}
