//! The CLI as a person meets it: help texts and one-line errors with exit code 2 (snapshots).

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};
use std::process::Command;

fn lab() -> Command {
    Command::new(get_cargo_bin("lab"))
}

#[test]
fn help() {
    assert_cmd_snapshot!(lab().arg("--help"));
    assert_cmd_snapshot!(lab().args(["d01", "--help"]));
    assert_cmd_snapshot!(lab().args(["d01", "wall", "--help"]));
    assert_cmd_snapshot!(lab().args(["verify", "--help"]));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    assert_cmd_snapshot!("unknown_id", lab().args(["run", "d09/nothing"]));
    assert_cmd_snapshot!("threshold_outside_0_1", lab().args(["d01", "wall", "--threshold", "1.5"]));
    assert_cmd_snapshot!("malformed_unit", lab().args(["d01", "wall", "--alpha", "3fortnights"]));
    assert_cmd_snapshot!("zero_ranks", lab().args(["d01", "collectives", "--ranks", "0"]));
    assert_cmd_snapshot!("negative_ranks", lab().args(["d01", "wall", "--max-ranks=-4"]));
    assert_cmd_snapshot!("missing_csv", lab().args(["d01", "karp-flatt", "--csv", "/nonexistent/t.csv"]));
    assert_cmd_snapshot!("no_source", lab().args(["d01", "karp-flatt"]));
    assert_cmd_snapshot!("fraction_outside_0_1", lab().args(["d01", "laws", "--fractions", "0.5,1.2"]));
    assert_cmd_snapshot!("unknown_id_for_verify", lab().args(["verify", "d01/nope"]));
}

#[test]
fn malformed_csv_names_the_line() {
    let dir = std::env::temp_dir().join(format!("lab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "p,time\n1,10s\n2,fast\n").unwrap();
    for (f, expect) in [(&empty, "no (p, time) rows"), (&bad, "line 3")] {
        let out = lab().args(["d01", "karp-flatt", "--csv"]).arg(f).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.contains(expect), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn json_output_is_machine_readable() {
    let out = lab().args(["d01", "laws", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "analytic");
    assert_eq!(v["command"], "cargo lab d01 laws", "--json is not part of the recorded command");
}
