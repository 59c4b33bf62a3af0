//! mdBook preprocessor `lab-book`: the one way prose quotes a lab's figure.
//!
//! In a chapter, `{{quote d01/scaling-wall#ring.p_opt}}` becomes the string stored under
//! `quotes["ring.p_opt"]` in `outputs/d01/scaling-wall.json`, and `{{plot d01/scaling-wall#speedup}}`
//! becomes the SVG `outputs/d01/scaling-wall.speedup.svg`, inlined. A missing transcript, key
//! or plot stops the build with a one-line error naming the chapter, so a stale quote cannot ship.
//! Write `\{{quote ...}}` to show a directive literally.
//!
//! Protocol (mdBook 0.5): `lab-book supports <renderer>` exits 0; otherwise read
//! `[context, book]` as JSON on stdin and write the book back on stdout. The book is walked as
//! untyped JSON (every chapter's `content`), which keeps this binary free of mdBook's crates.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("supports") {
        return; // html and anything else: the replacements are plain text
    }
    if let Err(e) = run() {
        eprintln!("lab-book: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| format!("reading stdin: {e}"))?;
    let parsed: Value = serde_json::from_str(&input).map_err(|e| format!("bad input from mdbook: {e}"))?;
    let [context, mut book] = match parsed {
        Value::Array(v) if v.len() == 2 => <[Value; 2]>::try_from(v).expect("length checked"),
        _ => return Err("expected [context, book] from mdbook".into()),
    };
    let root = context.get("root").and_then(Value::as_str).ok_or("context has no root")?;
    let outputs = outputs_dir(Path::new(root));
    walk(&mut book, &outputs)?;
    println!("{book}");
    Ok(())
}

/// `outputs/` sits beside `book.toml`; `LAB_OUTPUTS` overrides it (tests point it at a copy).
fn outputs_dir(book_root: &Path) -> PathBuf {
    std::env::var_os("LAB_OUTPUTS").map(PathBuf::from).unwrap_or_else(|| book_root.join("outputs"))
}

fn walk(v: &mut Value, outputs: &Path) -> Result<(), String> {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(ch)) = map.get_mut("Chapter") {
                let name = ch.get("name").and_then(Value::as_str).unwrap_or("?").to_string();
                if let Some(Value::String(content)) = ch.get_mut("content") {
                    *content = expand(content, outputs).map_err(|e| format!("chapter '{name}': {e}"))?;
                }
            }
            for (_, child) in map.iter_mut() {
                walk(child, outputs)?;
            }
        }
        Value::Array(items) => {
            for child in items {
                walk(child, outputs)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Replace every `{{quote ID#KEY}}` and `{{plot ID#NAME}}` in `text`.
pub fn expand(text: &str, outputs: &Path) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        // `\{{quote ...}}` is the escape for showing a directive literally, as mdBook's own.
        if rest[..start].ends_with('\\') {
            out.push_str(&rest[..start - 1]);
            out.push_str("{{");
            rest = after;
            continue;
        }
        let directive = ["quote ", "plot "].iter().find(|d| after.starts_with(**d));
        let Some(directive) = directive else {
            out.push_str(&rest[..start + 2]);
            rest = after;
            continue;
        };
        let end = after.find("}}").ok_or_else(|| format!("unclosed {{{{{}", directive.trim()))?;
        let target = after[directive.len()..end].trim();
        let (id, key) = target.split_once('#').ok_or_else(|| format!("'{target}' should look like dNN/name#key"))?;
        out.push_str(&rest[..start]);
        match directive.trim() {
            "quote" => out.push_str(&quote(outputs, id, key)?),
            _ => out.push_str(&plot(outputs, id, key)?),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn quote(outputs: &Path, id: &str, key: &str) -> Result<String, String> {
    let path = outputs.join(format!("{id}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e} (run `cargo lab regen {id}`)", path.display()))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    json.get("quotes")
        .and_then(|q| q.get(key))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("{id} has no quote '{key}'"))
}

fn plot(outputs: &Path, id: &str, name: &str) -> Result<String, String> {
    let path = outputs.join(format!("{id}.{name}.svg"));
    let svg = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e} (run `cargo lab regen {id}`)", path.display()))?;
    // A blank line would end the raw-HTML block in Markdown; an SVG has no need of one.
    let body: Vec<&str> = svg.lines().filter(|l| !l.trim().is_empty()).collect();
    Ok(format!("<figure class=\"lab-plot\">\n{}\n</figure>", body.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_plots_expand_and_missing_ones_fail() {
        let dir = std::env::temp_dir().join(format!("lab-book-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("d01")).unwrap();
        std::fs::write(dir.join("d01/x.json"), r#"{"quotes": {"wall": "4,096"}}"#).unwrap();
        std::fs::write(dir.join("d01/x.speedup.svg"), "<svg>\n\n<line/>\n</svg>\n").unwrap();
        let text = "wall at {{quote d01/x#wall}} ranks {{#include a.md}}\n{{plot d01/x#speedup}}";
        let out = expand(text, &dir).unwrap();
        assert!(out.starts_with("wall at 4,096 ranks {{#include a.md}}"));
        assert!(out.contains("<svg>\n<line/>\n</svg>"));
        assert!(expand("{{quote d01/x#nope}}", &dir).unwrap_err().contains("no quote 'nope'"));
        assert!(expand("{{quote d01/y#wall}}", &dir).is_err());
        assert_eq!(expand(r"write `\{{quote dNN/x#k}}`", &dir).unwrap(), "write `{{quote dNN/x#k}}`");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
