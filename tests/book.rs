//! The book builds, every include and quote resolves, internal links land, and (where Chromium is
//! installed) the rendered pages draw their mermaid diagrams.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

/// On CI a missing tool is a failure (scripts/test installs it); elsewhere the test says why it skips.
fn require(tool: &str) -> bool {
    if have(tool) {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false") {
        panic!("{tool} is not installed; scripts/test installs it");
    }
    eprintln!("skipped: {tool} is not installed (run scripts/test, which installs it)");
    false
}

/// Build once per test process into target/test-book (tests in this file share it).
fn build_book() -> Option<PathBuf> {
    static BUILT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            if !require("mdbook") || !require("mdbook-mermaid") {
                return None;
            }
            let dest = root().join("target/test-book");
            let out = Command::new("mdbook").arg("build").arg("-d").arg(&dest).current_dir(root()).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "mdbook build failed:\n{stderr}");
            let bad: Vec<&str> = stderr.lines().filter(|l| l.contains("ERROR") || l.contains("WARN")).collect();
            assert!(bad.is_empty(), "mdbook build warned:\n{}", bad.join("\n"));
            Some(dest)
        })
        .clone()
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
}

/// Every chapter listed in SUMMARY.md, as its built .html path.
fn chapters(site: &Path) -> Vec<PathBuf> {
    let summary = std::fs::read_to_string(root().join("book/SUMMARY.md")).unwrap();
    summary
        .lines()
        .filter_map(|l| l.split("](").nth(1).and_then(|r| r.split(')').next()))
        .filter(|p| p.ends_with(".md"))
        .map(|p| site.join(p.replace(".md", ".html")))
        .collect()
}

#[test]
fn book_builds_and_every_directive_resolves() {
    let Some(site) = build_book() else { return };
    let pages = chapters(&site);
    assert!(pages.len() >= 12, "SUMMARY lists the six modules, front matter and appendices");
    for page in &pages {
        let html = std::fs::read_to_string(page).unwrap_or_else(|_| panic!("{} was not built", page.display()));
        // "d0" skips the escaped examples (`\{{quote dNN/...}}`) that the appendix shows on purpose.
        for leftover in ["{{#include", "{{#rustdoc_include", "{{quote d0", "{{plot d0"] {
            assert!(!html.contains(leftover), "{} still contains {leftover}", page.display());
        }
    }
    for m in ["d01", "d02", "d03", "d04", "d05", "d06"] {
        let html = std::fs::read_to_string(site.join(m).join("index.html")).unwrap();
        assert!(html.contains("class=\"mermaid\""), "{m}'s overview has a mermaid diagram");
    }
}

#[test]
fn internal_links_resolve() {
    let Some(site) = build_book() else { return };
    let mut files = Vec::new();
    html_files(&site, &mut files);
    let mut broken = Vec::new();
    for f in &files {
        let html = std::fs::read_to_string(f).unwrap();
        for part in html.split("href=\"").skip(1) {
            let target = part.split('"').next().unwrap_or("");
            if target.is_empty() || target.starts_with('#') || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap();
            if path.is_empty() {
                continue;
            }
            let resolved = f.parent().unwrap().join(path);
            if !resolved.exists() {
                broken.push(format!("{} -> {target}", f.strip_prefix(&site).unwrap().display()));
            }
        }
    }
    broken.sort();
    broken.dedup();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A real headless browser renders every page that has a diagram, and mermaid turns each one into SVG.
#[test]
fn pages_render_their_mermaid_diagrams_in_a_browser() {
    let Some(site) = build_book() else { return };
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"].into_iter().find(|c| have(c)) else {
        eprintln!("skipped: no Chromium installed (scripts/test installs it when run as root)");
        return;
    };
    let pages: Vec<PathBuf> = chapters(&site)
        .into_iter()
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|h| h.contains("class=\"mermaid\"")))
        .collect();
    assert!(pages.len() >= 6, "every module has at least one diagram");
    for page in &pages {
        let m = page.strip_prefix(&site).unwrap().display().to_string();
        let profile = std::env::temp_dir().join(format!("track-d-chromium-{}", std::process::id()));
        let out = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--virtual-time-budget=15000",
                "--dump-dom",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("file://{}", page.display()))
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&profile);
        let dom = String::from_utf8_lossy(&out.stdout);
        let diagrams = dom.matches("class=\"mermaid\"").count();
        assert!(diagrams >= 1, "{m}: no mermaid block in the DOM");
        // Rendered diagrams carry an SVG with mermaid's own id prefix and aria role.
        let rendered = dom.matches("aria-roledescription=").count();
        assert!(rendered >= diagrams, "{m}: {diagrams} mermaid blocks but {rendered} rendered diagrams");
    }
}
