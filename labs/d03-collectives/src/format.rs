//! nccl-tests' text output, byte for byte: the preamble, the three-line table header, one row
//! per size (out-of-place then in-place), and the trailer with `Avg bus bandwidth`.
//!
//! This is the one place where printf-style formatting is written by hand, because matching
//! nccl-tests' columns is the point: the format strings are those of nccl-tests' src/util.cu
//! (`writeResultHeader`, `writeBenchmarkLinePreamble`, `writeBenchmarkLineBody`, `getFloatStr`,
//! `writeResultFooter`).

use serde::{Deserialize, Serialize};

/// One side of a row (out-of-place or in-place).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Seconds per call, averaged over ranks.
    pub seconds: f64,
    /// GB/s (1e9 B/s).
    pub algbw: f64,
    pub busbw: f64,
    /// Wrong elements summed over ranks; None when checking was off (`-c 0`).
    pub wrong: Option<u64>,
}

/// One printed row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub size: u64,
    pub count: u64,
    pub dtype: String,
    pub redop: String,
    pub root: i64,
    pub out_of_place: Side,
    pub in_place: Side,
}

// ANCHOR: float_str
/// nccl-tests' `getFloatStr`: two decimals if they fit the width, else one, else none, else an
/// exponent. Times get 7 characters, bandwidths 6.
pub fn float_str(value: f64, width: usize) -> String {
    for decimals in [2, 1, 0] {
        let s = format!("{value:>width$.decimals$}");
        if s.len() <= width {
            return s;
        }
    }
    let s = c_exp(value, if width >= 7 { 1 } else { 0 });
    // snprintf(str, width + 1, ...) truncates whatever does not fit.
    let s = format!("{s:>width$}");
    s.chars().take(width).collect()
}
// ANCHOR_END: float_str

/// C's `%.{p}e`: `1.2e+07`.
fn c_exp(value: f64, precision: usize) -> String {
    let s = format!("{value:.precision$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// C's `%g` (6 significant digits, trailing zeros dropped, exponent below 1e-4 or from 1e6).
pub fn c_g(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    if !value.is_finite() {
        return if value.is_nan() { "nan".into() } else if value > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let exp = format!("{value:.5e}");
    let e: i32 = exp.split_once('e').map(|(_, e)| e.parse().unwrap_or(0)).unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    };
    if !(-4..6).contains(&e) {
        let (mant, _) = exp.split_once('e').unwrap_or((&exp, ""));
        format!("{}e{}{:02}", trim(mant.to_string()), if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let decimals = (5 - e).max(0) as usize;
        trim(format!("{value:.decimals$}"))
    }
}

/// C's `%{w}g`.
fn c_g_width(value: f64, width: usize) -> String {
    format!("{:>width$}", c_g(value))
}

// ANCHOR: header
/// The three header lines of the result table, as nccl-tests prints them (trailing spaces included).
pub fn header() -> String {
    let lead = |a: &str, b: &str| format!("# {a:>10}  {b:>12}  {:>8}  {:>6}  {:>6}", "", "", "");
    let mut s = String::new();
    s.push_str(&lead("", ""));
    s.push_str("           out-of-place                       in-place          \n");
    let cols = |c: [&str; 5], side: [&str; 4]| {
        format!(
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
            c[0], c[1], c[2], c[3], c[4], side[0], side[1], side[2], side[3], side[0], side[1], side[2], side[3]
        )
    };
    s.push_str(&cols(["size", "count", "type", "redop", "root"], ["time", "algbw", "busbw", "#wrong"]));
    s.push_str(&cols(["(B)", "(elements)", "", "", ""], ["(us)", "(GB/s)", "(GB/s)", ""]));
    s
}
// ANCHOR_END: header

/// One result row, newline included.
pub fn row(r: &Row) -> String {
    let mut s = format!("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.size, r.count, r.dtype, r.redop, r.root);
    for side in [&r.out_of_place, &r.in_place] {
        s.push_str(&format!(
            "  {:>7}  {:>6}  {:>6}",
            float_str(side.seconds * 1e6, 7),
            float_str(side.algbw, 6),
            float_str(side.busbw, 6)
        ));
        match side.wrong {
            Some(w) => s.push_str(&format!("  {}", c_g_width(w as f64, 6))),
            None => s.push_str("    N/A"),
        }
    }
    s.push('\n');
    s
}

/// The plain mean of every busbw printed, in-place and out-of-place: nccl-tests' trailer figure.
pub fn avg_busbw(rows: &[Row]) -> f64 {
    if rows.is_empty() {
        return 0.0;
    }
    rows.iter().map(|r| r.out_of_place.busbw + r.in_place.busbw).sum::<f64>() / (2 * rows.len()) as f64
}

/// Wrong elements over every row and side.
pub fn total_wrong(rows: &[Row]) -> u64 {
    rows.iter().map(|r| r.out_of_place.wrong.unwrap_or(0) + r.in_place.wrong.unwrap_or(0)).sum()
}

/// The trailer: out-of-bounds count, the average bus bandwidth, the closing line.
pub fn footer(rows: &[Row], program: &str) -> String {
    let errors = total_wrong(rows);
    let mut s = format!("# {:<20} : {} {}\n", "Out of bounds values", errors, if errors > 0 { "FAILED" } else { "OK" });
    s.push_str(&format!("# {:<20} : {} \n", "Avg bus bandwidth", c_g(avg_busbw(rows))));
    s.push_str("#\n");
    s.push_str(&format!("# Collective test concluded: {program}\n"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_strings_shrink_to_fit() {
        assert_eq!(float_str(188.69, 7), " 188.69");
        assert_eq!(float_str(5970.6, 7), "5970.60");
        assert_eq!(float_str(94254.2, 7), "94254.2");
        assert_eq!(float_str(125807.4, 7), " 125807");
        assert_eq!(float_str(318.98, 6), "318.98");
        assert_eq!(float_str(1234.5, 6), "1234.5");
        assert_eq!(float_str(12345.6, 6), " 12346");
        assert_eq!(float_str(123456789.0, 7), "1.2e+08");
        assert_eq!(float_str(0.0, 6), "  0.00");
    }

    #[test]
    fn c_g_matches_printf() {
        assert_eq!(c_g(116.669_123), "116.669");
        assert_eq!(c_g(84.85581), "84.8558");
        assert_eq!(c_g(6.6972), "6.6972");
        assert_eq!(c_g(0.0), "0");
        assert_eq!(c_g(1234567.0), "1.23457e+06");
        assert_eq!(c_g(0.00001234), "1.234e-05");
        assert_eq!(c_g(100000.0), "100000");
    }
}
