//! Real MPI: the lab's own commands, run through the same code path as `cargo lab d02 ...`.
//! Skipped with a printed reason when mpirun is not installed (scripts/test installs it).

use std::time::{Duration, Instant};

use lab_core::Failure;

fn have_mpi() -> bool {
    if lab_core::launch::which("mpirun").is_none() {
        eprintln!("skipped: mpirun not found (apt-get install openmpi-bin libopenmpi-dev libclang-dev)");
        return false;
    }
    true
}

/// Every algorithm x type x op, p = 1..=9 (oversubscribed), counts 0, 1, p-1, p+1 and a large
/// prime: integers bit-exact against MPI_Allreduce (the command fails otherwise, and the check
/// is repeated here on the returned data).
#[test]
fn hand_algorithms_equal_mpi_allreduce_for_p_1_to_9() {
    if !have_mpi() {
        return;
    }
    let t = lab::run_args(&["d02", "correctness", "--ranks", "1-9", "--prime", "10007", "--timeout", "120"])
        .expect("correctness run passes");
    d02_mpi::cli::check_correctness(&t.data).expect("invariants hold");
    let reports = t.data["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 9);
    for (i, r) in reports.iter().enumerate() {
        let p = i + 1;
        assert_eq!(r["p"], p);
        let counts: std::collections::BTreeSet<u64> =
            r["cases"].as_array().unwrap().iter().map(|c| c["count"].as_u64().unwrap()).collect();
        for want in [0, 1, p as u64 - 1, p as u64 + 1, 10007] {
            assert!(counts.contains(&want), "p = {p}: count {want} not checked");
        }
        // 4 algorithms x 4 types x 3 ops per count.
        assert_eq!(r["cases"].as_array().unwrap().len(), counts.len() * 48);
    }
}

/// The check itself must be able to fail: a tampered integer case is caught.
#[test]
fn the_correctness_check_rejects_a_mismatch() {
    if !have_mpi() {
        return;
    }
    let t = lab::run_args(&["d02", "correctness", "--ranks", "2", "--prime", "11"]).expect("runs");
    let mut data = t.data.clone();
    let case = data["reports"][0]["cases"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["elem"] == "i64")
        .unwrap();
    case["differ_from_mpi"] = 1.into();
    let err = d02_mpi::cli::check_correctness(&data).unwrap_err().to_string();
    assert!(err.contains("differ from MPI_Allreduce"), "{err}");
}

/// A rank that leaves without MPI_Finalize makes the lab fail (exit 1) with a message, quickly.
#[test]
fn a_rank_that_exits_early_fails_the_lab_within_bounded_time() {
    if !have_mpi() {
        return;
    }
    // Build first so the clock measures the failure, not the compile.
    lab_core::launch::rank_program("d02-mpi-ranks", "d02-ranks").expect("rank program builds");
    let start = Instant::now();
    let err = lab::run_args(&["d02", "correctness", "--ranks", "3", "--prime", "11", "--exit-early", "1", "--timeout", "60"])
        .expect_err("an early exit must fail the lab");
    let elapsed = start.elapsed();
    assert!(err.chain().any(|e| e.is::<Failure>()), "a failed run is a Failure (exit 1): {err:#}");
    let msg = format!("{err:#}");
    assert!(msg.contains("MPI job failed") && msg.contains("3 ranks"), "{msg}");
    assert!(elapsed < Duration::from_secs(75), "took {elapsed:?}");
}

/// The bench at a tiny size: every timed result right, predictions and ratios consistent.
#[test]
fn bench_at_small_sizes_satisfies_its_invariants() {
    if !have_mpi() {
        return;
    }
    let t = lab::run_args(&[
        "d02", "bench", "--ranks", "2", "--sizes", "8:128KiB", "--forced", "ring,segmented-ring", "--budget", "4MiB",
        "--rounds", "1", "--target-from", "16KiB",
    ])
    .expect("bench runs");
    d02_mpi::cli::check_bench(&t.data).expect("invariants hold");
    assert_eq!(t.data["targets"]["rows"].as_array().unwrap().len(), 4);
    assert!(t.data["fit"]["beta"].as_f64().unwrap() > 0.0, "a Hockney fit from the ping-pong");
    let text = t.render_text();
    assert!(text.starts_with("MEASURED on "), "{text}");
    assert!(text.contains("ring(4)") && text.contains("segmented-ring(5)"), "{text}");
    assert!(text.contains("D01's prediction vs measurement"), "{text}");
    // Tampering with a stored time breaks the ratio invariant.
    let mut data = t.data.clone();
    data["targets"]["rows"][0]["ratio_default"] = 0.5.into();
    data["targets"]["rows"][0]["hand_ring"] = 1.0.into();
    data["targets"]["rows"][0]["mpi_default"] = 1.0.into();
    assert!(d02_mpi::cli::check_bench(&data).is_err());
}

#[test]
fn bad_input_is_a_one_line_error() {
    for args in [
        vec!["d02", "correctness", "--ranks", "0"],
        vec!["d02", "bench", "--sizes", "ten"],
        vec!["d02", "bench", "--hostfile", "/nonexistent/hosts"],
    ] {
        let err = lab::run_args(&args).expect_err("bad input");
        assert!(!err.chain().any(|e| e.is::<Failure>()), "bad input is not a Failure: {err:#}");
        assert_eq!(format!("{err:#}").lines().count(), 1, "{err:#}");
    }
}
