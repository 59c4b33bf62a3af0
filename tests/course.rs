//! Whole-course checks: every published number is reproducible, and tampering is caught.

use std::path::{Path, PathBuf};

fn outputs() -> PathBuf {
    lab::default_outputs()
}

/// Copy outputs/ to a fresh temporary folder, so tests can tamper without touching the real one.
fn copy_outputs(tag: &str) -> PathBuf {
    let dst = std::env::temp_dir().join(format!("track-d-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    copy_dir(&outputs(), &dst);
    dst
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

#[test]
fn every_published_transcript_verifies() {
    let report = lab::verify(&outputs(), &[], false).expect("verify runs");
    for s in &report.skipped {
        eprintln!("skipped: {s}");
    }
    assert!(report.problems.is_empty(), "{}", report.problems.join("\n"));
    let analytic = lab::entries().iter().filter(|e| e.is_analytic()).count();
    assert!(analytic >= 4, "the course publishes analytic transcripts");
    assert_eq!(report.checked.len(), lab::entries().len(), "every entry was checked");
}

#[test]
fn every_transcript_has_a_banner_and_its_command() {
    for e in lab::entries() {
        let text = std::fs::read_to_string(outputs().join(format!("{}.txt", e.id))).unwrap();
        let mut lines = text.lines();
        let banner = lines.next().unwrap_or_default();
        if e.is_analytic() {
            assert_eq!(banner, lab_core::transcript::ANALYTIC_BANNER, "{}", e.id);
        } else {
            assert!(banner.starts_with("MEASURED on "), "{}: {banner}", e.id);
            assert!(text.contains("# tolerance: "), "{} states its tolerance", e.id);
        }
        assert_eq!(lines.next(), Some(format!("$ {}", e.command()).as_str()), "{}", e.id);
    }
}

/// Changing one digit anywhere in an analytic transcript's files must fail verification.
#[test]
fn a_changed_digit_fails_verification() {
    let dir = copy_outputs("tamper");
    for e in lab::entries().into_iter().filter(|e| e.is_analytic()) {
        let stem = dir.join(e.id);
        let module_dir = stem.parent().unwrap().to_path_buf();
        let name = stem.file_name().unwrap().to_str().unwrap().to_string();
        let files: Vec<PathBuf> = std::fs::read_dir(&module_dir)
            .unwrap()
            .map(|f| f.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_str().unwrap();
                n.strip_prefix(&name).is_some_and(|rest| rest.starts_with('.'))
            })
            .collect();
        assert!(!files.is_empty(), "{} has published files", e.id);
        for f in files {
            let original = std::fs::read_to_string(&f).unwrap();
            // The last digit in the file: deep in a table, not in the banner.
            let pos = original.rfind(|c: char| c.is_ascii_digit()).expect("a transcript has digits");
            let old = original.as_bytes()[pos];
            let new = if old == b'9' { b'0' } else { old + 1 };
            let mut tampered = original.clone().into_bytes();
            tampered[pos] = new;
            std::fs::write(&f, tampered).unwrap();
            let report = lab::verify(&dir, &[e.id.to_string()], false).unwrap();
            assert!(!report.problems.is_empty(), "tampering {} went unnoticed", f.display());
            assert!(lab::report_result(&report).is_err());
            std::fs::write(&f, original).unwrap();
        }
        let clean = lab::verify(&dir, &[e.id.to_string()], false).unwrap();
        assert!(clean.problems.is_empty(), "restored copy verifies: {:?}", clean.problems);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_stray_or_missing_file_fails_verification() {
    let dir = copy_outputs("stray");
    std::fs::write(dir.join("d01/not-from-any-lab.txt"), "42\n").unwrap();
    let report = lab::verify(&dir, &[], false).unwrap();
    assert!(report.problems.iter().any(|p| p.contains("not-from-any-lab")), "{:?}", report.problems);
    std::fs::remove_file(dir.join("d01/not-from-any-lab.txt")).unwrap();
    std::fs::remove_file(dir.join("d01/scaling-wall.json")).unwrap();
    let report = lab::verify(&dir, &["d01/scaling-wall".to_string()], false).unwrap();
    assert!(report.problems.iter().any(|p| p.contains("missing")), "{:?}", report.problems);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn analytic_transcripts_are_deterministic() {
    for e in lab::entries().into_iter().filter(|e| e.is_analytic()) {
        let a = lab::run_args(e.args).unwrap();
        let b = lab::run_args(e.args).unwrap();
        assert_eq!(a.files(), b.files(), "{} differs between two runs", e.id);
    }
}

#[test]
fn the_appendix_index_lists_every_transcript() {
    let index = std::fs::read_to_string(outputs().join(lab::INDEX_FILE)).unwrap();
    for e in lab::entries() {
        assert!(index.contains(&format!("`{}`", e.id)), "{} missing from the index", e.id);
        assert!(index.contains(&e.command()), "{}'s command missing from the index", e.id);
    }
}
