//! The rank program under a real mpirun: every collective, every MPI type and op, rank counts
//! 1..8 (oversubscribed: correctness only), #wrong 0 on correct runs and non-zero when the
//! test-only hook corrupts a buffer, the nccl backend's one-line refusal without a GPU.

use std::path::Path;
use std::process::Command;

use lab_core::launch::{Launch, which};

fn rank_program() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_d03-rank"))
}

fn mpi_here() -> bool {
    if which("mpirun").is_none() {
        eprintln!("skipped: mpirun not installed");
        return false;
    }
    true
}

fn json_of(out: &str) -> serde_json::Value {
    let line = out.lines().rev().find(|l| l.starts_with('{')).expect("rank 0 printed JSON");
    serde_json::from_str(line).unwrap()
}

#[test]
fn every_collective_is_correct_on_1_to_8_ranks() {
    if !mpi_here() {
        return;
    }
    for n in [1u32, 2, 3, 5, 8] {
        for coll in ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"] {
            // 8 ranks x 16 B is the smallest size every collective accepts; 1000 B is not a
            // multiple of 16 x n, so per-rank shares get truncated.
            let args: Vec<String> = ["--collective", coll, "--json", "-b", "128", "-e", "1000", "-i", "872", "-n", "2", "-d", "all", "-o", "all", "-r"]
                .iter()
                .map(|s| s.to_string())
                .chain([(n - 1).to_string()])
                .collect();
            let out = Launch::new(n).run(rank_program(), &args).unwrap_or_else(|e| panic!("{coll} on {n}: {e:#}"));
            let v = json_of(&out.stdout);
            assert_eq!(v["wrong"], 0, "{coll} on {n} ranks");
            let rows = v["rows"].as_array().unwrap();
            // 8 MPI types, and 5 ops for the reducing collectives, 2 sizes each.
            let ops = if ["all_reduce", "reduce_scatter", "reduce"].contains(&coll) { 5 } else { 1 };
            assert_eq!(rows.len(), 8 * ops * 2, "{coll} on {n}");
            for r in rows {
                for side in ["out_of_place", "in_place"] {
                    let (alg, bus) = (r[side]["algbw"].as_f64().unwrap(), r[side]["busbw"].as_f64().unwrap());
                    let f = d03_collectives::coll::Collective::parse(coll).unwrap().busbw_factor(n as usize);
                    assert!((bus - alg * f).abs() <= 1e-9 * alg, "{coll} n={n}: {bus} vs {alg} x {f}");
                    if n == 1 {
                        assert_eq!(bus, 0.0);
                    }
                }
            }
        }
    }
}

#[test]
fn a_corrupted_buffer_gives_wrong_elements_and_exit_1() {
    if !mpi_here() {
        return;
    }
    let mut cmd = Launch::new(2).command(rank_program(), &["-b".into(), "1K".into(), "-e".into(), "4K".into(), "-f".into(), "2".into(), "--test-corrupt".into()]).unwrap();
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(stdout.contains("# Out of bounds values : 6 FAILED"), "{stdout}");
    // Every row shows one wrong element on each side.
    let rows: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.ends_with("       1") && r.split_whitespace().nth(8) == Some("1")), "{rows:?}");
}

#[test]
fn the_nccl_backend_refuses_in_one_line_without_a_gpu() {
    if let Ok(n) = d03_collectives::gpu::probe(None) {
        eprintln!("skipped: {n} GPU(s) here; the refusal path cannot be reached");
        return;
    }
    // A singleton MPI process (no mpirun), as a user would start it on a GPU box.
    let out = Command::new(rank_program())
        .args(["--backend", "nccl"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("skipped the GPU run: {}", stderr.trim());
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: nccl backend unavailable: "), "{stderr}");
}

#[test]
fn bad_input_to_the_rank_program_is_one_line_and_exit_2() {
    for (args, want) in [
        (vec!["--collective", "all_scatter"], "unknown collective"),
        (vec!["-b", "1M", "-e", "1K"], "larger than -e"),
        (vec!["-d", "half"], "no half"),
    ] {
        let out = Command::new(rank_program())
            .args(&args)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
}

#[test]
fn the_gpu_script_stops_in_one_line_without_a_gpu() {
    if let Ok(n) = d03_collectives::gpu::probe(None) {
        eprintln!("skipped: {n} GPU(s) here; run scripts/gpu-d03.sh remote for real");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("d03-gpu-{}", std::process::id()));
    let run = Command::new("bash")
        .arg(root.join("scripts/gpu-d03.sh"))
        .arg("remote")
        .arg(&out)
        .env("D03_RANK", rank_program())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    eprintln!("skipped the GPU run: {}", stderr.trim());
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    let status = std::fs::read_to_string(out.join("d03/gpu-status.txt")).unwrap();
    assert!(status.contains("nccl backend unavailable"), "{status}");
    assert_eq!(status.trim().lines().count(), 1);
    let _ = std::fs::remove_dir_all(&out);
}
