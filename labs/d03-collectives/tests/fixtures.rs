//! The harness's text against real published nccl-tests output, and the log import against the
//! fixtures (short excerpts of published logs; sources in fixtures/SOURCES.md).

use clap::Parser;
use d03_collectives::format::{self, Row, Side};
use d03_collectives::import;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn header_and_row_match_a_real_nccl_tests_log_line_for_line() {
    let log = fixture("nccl-2441-h100nvl-4ranks.log");
    let lines: Vec<&str> = log.lines().collect();
    let start = lines.iter().position(|l| l.contains("out-of-place")).unwrap();
    let ours = format::header();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(ours.len(), 3);
    for (i, line) in ours.iter().enumerate() {
        assert_eq!(*line, lines[start + i], "header line {i} differs (widths or trailing spaces)");
    }
    // The published row, re-rendered from its own values, is byte-identical.
    let row = Row {
        size: 500000,
        count: 125000,
        dtype: "float".into(),
        redop: "sum".into(),
        root: -1,
        out_of_place: Side { seconds: 188.69e-6, algbw: 2.65, busbw: 3.97, wrong: Some(0) },
        in_place: Side { seconds: 187.07e-6, algbw: 2.67, busbw: 4.01, wrong: Some(0) },
    };
    assert_eq!(format::row(&row).trim_end_matches('\n'), lines[start + 3]);
}

#[test]
fn the_trailer_matches_published_trailers() {
    // rocm-blogs' MI300X trailer: "# Avg bus bandwidth    : 116.669" (nccl-tests prints a trailing space).
    let t = format::footer(&[], "all_reduce_perf");
    assert!(t.starts_with("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0 \n#\n# Collective test concluded: all_reduce_perf\n"));
    assert_eq!(format!("# {:<20} : {}", "Avg bus bandwidth", format::c_g(116.669_0)), "# Avg bus bandwidth    : 116.669");
}

fn import_one(name: &str) -> (import::Log, import::Factor, Vec<import::Recomputed>) {
    let log = import::parse(&fixture(name)).unwrap();
    let f = import::factor(&log, None, None).unwrap();
    let rec = import::recompute(&log, &f);
    (log, f, rec)
}

#[test]
fn every_published_fixture_recomputes() {
    for (name, coll, ranks, rows) in [
        ("nccl-2441-h100nvl-4ranks.log", Some("all_reduce"), Some(4), 1),
        ("nccl-tests-232-h100-2nodes-tree.log", Some("all_reduce"), Some(2), 5),
        ("nccl-tests-119-hdr.log", Some("all_reduce"), Some(24), 6),
        ("rccl-1490-mi250x-all-gather.log", Some("all_gather"), Some(32), 5),
        ("rocm-blogs-mi300x-all-reduce.log", Some("all_reduce"), Some(8), 2),
    ] {
        let (log, f, rec) = import_one(name);
        assert_eq!(log.rows.len(), rows, "{name}");
        assert_eq!(f.ranks, ranks, "{name}: {}", f.how);
        assert_eq!(f.collective.map(|c| c.name()).or(if name.contains("1490") { Some("all_gather") } else { None }), coll, "{name}");
        let bad: Vec<_> = rec.iter().filter(|r| !r.agrees).collect();
        assert!(bad.is_empty(), "{name}: {bad:?}");
    }
    let (_, _, rec) = import_one("rocm-blogs-mi300x-all-reduce.log");
    assert!((rec[2].busbw - 318.98).abs() < 0.01);
}

#[test]
fn the_oldest_all_gather_printed_algbw_from_one_rank_share() {
    // size = 2 x count x 4 B: an all_gather-type test on 2 GPUs whose algbw is half of size/time.
    let (log, f, rec) = import_one("nccl-340-oldest-layout.log");
    assert_eq!(log.layout, import::Layout::Oldest);
    assert_eq!(f.ranks, Some(2));
    assert!(rec.iter().all(|r| !r.agrees && r.why.starts_with("algbw printed")), "{rec:?}");
    assert!(rec.iter().all(|r| !r.why.contains("busbw printed")));
}

#[test]
fn a_doctored_fixture_row_is_flagged() {
    let text = fixture("rocm-blogs-mi300x-all-reduce.log").replace("318.98", "338.98");
    let log = import::parse(&text).unwrap();
    let f = import::factor(&log, Some(d03_collectives::coll::Collective::AllReduce), Some(8)).unwrap();
    let bad: Vec<_> = import::recompute(&log, &f).into_iter().filter(|r| !r.agrees).collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].line, 2);
    assert!(bad[0].why.contains("busbw printed 338.98"));
}

#[derive(Parser)]
struct Lab {
    #[command(subcommand)]
    command: d03_collectives::cli::Command,
}

fn run(args: &[&str]) -> anyhow::Result<lab_core::Transcript> {
    let lab = Lab::try_parse_from(std::iter::once("d03").chain(args.iter().copied())).map_err(|e| anyhow::anyhow!("{e}"))?;
    d03_collectives::cli::run(&lab.command)
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("d03-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = dir.join("cut.log");
    std::fs::write(&cut, format!("{}      600000\n", fixture("nccl-2441-h100nvl-4ranks.log"))).unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["bench".into(), "--collective".into(), "all_scatter".into()], "unknown collective"),
        (vec!["bench".into(), "-b".into(), "64M".into(), "-e".into(), "8".into()], "larger than -e"),
        (vec!["bench".into(), "--collective".into(), "alltoall".into(), "--ranks".into(), "8".into(), "-b".into(), "64".into(), "-e".into(), "64".into()], "too small for alltoall on 8 ranks"),
        (vec!["bench".into(), "-d".into(), "half".into()], "no half"),
        (vec!["import".into(), "/nonexistent/x.log".into()], "cannot read"),
        (vec!["import".into(), cut.display().to_string()], "cut-off result row"),
    ];
    for (args, want) in cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = run(&a).err().unwrap_or_else(|| panic!("{args:?} should fail"));
        let msg = format!("{err:#}");
        assert!(msg.contains(want), "{args:?}: {msg}");
        assert!(!msg.contains('\n'), "{args:?}: not one line: {msg}");
        assert_eq!(lab_core::error::exit_code(&err), 2, "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_nccl_backend_says_why_it_cannot_run() {
    match d03_collectives::gpu::probe(None) {
        Ok(n) => eprintln!("skipped: this machine has {n} GPU(s); the no-GPU path is not reachable here"),
        Err(_) => {
            let err = run(&["bench", "--backend", "nccl"]).err().expect("no GPU: must fail");
            let msg = format!("{err:#}");
            assert!(msg.starts_with("nccl backend unavailable: "), "{msg}");
            assert!(!msg.contains('\n'));
            assert_eq!(lab_core::error::exit_code(&err), 2);
        }
    }
}

/// GPU transcripts brought back by scripts/gpu-d03.sh (outputs/d03/gpu/) are nccl-tests text:
/// every row must recompute (busbw = algbw x factor) and show #wrong 0.
#[test]
fn collected_gpu_transcripts_hold_their_invariants() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../outputs/d03/gpu");
    let Ok(files) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: no GPU transcripts collected yet (run scripts/gpu-d03.sh on a GPU machine)");
        return;
    };
    for f in files {
        let path = f.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("gpu-") || !name.ends_with(".txt") || name == "gpu-status.txt" || name == "gpu-nvidia-smi.txt" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let log = import::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let f = import::factor(&log, None, None).unwrap();
        // Our harness prints busbw 0 on one rank; nccl-tests' factor 1 does not apply there.
        if f.ranks == Some(1) {
            assert!(log.rows.iter().all(|r| r.sides.iter().all(|s| s.busbw.value == 0.0)), "{name}");
        } else {
            assert!(import::recompute(&log, &f).iter().all(|r| r.agrees), "{name}");
        }
        assert!(log.rows.iter().all(|r| r.sides.iter().all(|s| s.wrong == Some(0.0))), "{name}: #wrong");
    }
}
