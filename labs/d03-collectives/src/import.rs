//! Reading real nccl-tests and rccl-tests logs: every row's algbw and busbw are recomputed from
//! its size and time, and any row whose printed columns disagree is reported.
//!
//! Three row layouts exist in the wild (all handled):
//! * current (nccl-tests since the NCCL 2.13 resync, rccl-tests): size count type redop root,
//!   then time algbw busbw #wrong for out-of-place and for in-place;
//! * 2.x before that: size count type redop, then time algbw busbw error per side;
//! * the oldest: size count type, then time algbw busbw error per side.
//!
//! Lines may carry a launcher's prefix (`[0]`, `[1,0]<stdout>:`, srun's ` 0: `); it is removed.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::coll::Collective;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Printed {
    pub value: f64,
    /// Digits after the decimal point as printed (a rounding bound for the check).
    pub decimals: u32,
}

impl Printed {
    fn parse(s: &str) -> Option<Printed> {
        let value: f64 = s.parse().ok()?;
        let decimals = if s.contains(['e', 'E']) { 0 } else { s.split_once('.').map(|(_, f)| f.len() as u32).unwrap_or(0) };
        Some(Printed { value, decimals })
    }

    /// Half a unit in the last printed place.
    fn half_ulp(&self) -> f64 {
        0.5 * 10f64.powi(-(self.decimals as i32))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogSide {
    pub time_us: Printed,
    pub algbw: Printed,
    pub busbw: Printed,
    /// `#wrong` (or the old `error` column); None for `N/A`.
    pub wrong: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogRow {
    pub line: usize,
    pub size: u64,
    pub count: u64,
    pub dtype: String,
    pub redop: Option<String>,
    pub root: Option<i64>,
    pub sides: Vec<LogSide>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// size count type redop root + 4 per side.
    Current,
    /// size count type redop + 4 per side.
    NoRoot,
    /// size count type + 4 per side.
    Oldest,
}

impl Layout {
    pub fn describe(self) -> &'static str {
        match self {
            Layout::Current => "current (size count type redop root | time algbw busbw #wrong)",
            Layout::NoRoot => "pre-2.13 (size count type redop | time algbw busbw error)",
            Layout::Oldest => "oldest (size count type | time algbw busbw error)",
        }
    }
}

/// A parsed log.
#[derive(Clone, Debug, Serialize)]
pub struct Log {
    pub collective: Option<Collective>,
    /// Ranks listed in the `Rank N` lines.
    pub listed_ranks: Option<usize>,
    pub layout: Layout,
    pub rows: Vec<LogRow>,
    pub printed_avg_busbw: Option<f64>,
    pub printed_out_of_bounds: Option<String>,
}

/// Remove a launcher's per-line tag: `[0] `, `[1,0]<stdout>:`, ` 0: `.
fn strip_prefix(line: &str) -> &str {
    let mut s = line.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix('[')
            && let Some(end) = rest.find(']')
            && rest[..end].chars().all(|c| c.is_ascii_digit() || c == ',')
        {
            s = rest[end + 1..].trim_start_matches("<stdout>:").trim_start_matches("<stderr>:").trim_start();
            continue;
        }
        if let Some(colon) = s.find(':')
            && colon > 0
            && s[..colon].chars().all(|c| c.is_ascii_digit())
        {
            s = s[colon + 1..].trim_start();
            continue;
        }
        return s;
    }
}

fn is_word(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// Parse a data row, or None if the line is not one; Err if it starts like one but is cut short.
fn parse_row(line_no: usize, text: &str) -> Result<Option<(Layout, LogRow)>> {
    let t: Vec<&str> = text.split_whitespace().collect();
    if t.len() < 3 || t[0].parse::<u64>().is_err() || t[1].parse::<u64>().is_err() || !is_word(t[2]) {
        // A lone size (a line cut right after its first column) is a truncated row.
        if !t.is_empty() && t.len() < 3 && t.iter().all(|x| x.parse::<u64>().is_ok()) {
            bail!("line {line_no} is a cut-off result row: '{}'", text.trim());
        }
        return Ok(None);
    }
    let (layout, head) = if t.len() > 3 && is_word(t[3]) && t[3] != "N/A" {
        if t.len() > 4 && t[4].parse::<i64>().is_ok() && (t.len() - 5).is_multiple_of(4) && t.len() > 5 {
            (Layout::Current, 5)
        } else {
            (Layout::NoRoot, 4)
        }
    } else {
        (Layout::Oldest, 3)
    };
    let rest = &t[head..];
    if rest.is_empty() || !rest.len().is_multiple_of(4) || rest.len() > 8 {
        bail!("line {line_no} is cut short or malformed ({} columns after the type): '{}'", rest.len(), text.trim());
    }
    let mut sides = Vec::new();
    for chunk in rest.chunks(4) {
        let p = |s: &str| Printed::parse(s).with_context(|| format!("line {line_no}: '{s}' is not a number"));
        let wrong = if chunk[3] == "N/A" { None } else { Some(p(chunk[3])?.value) };
        sides.push(LogSide { time_us: p(chunk[0])?, algbw: p(chunk[1])?, busbw: p(chunk[2])?, wrong });
    }
    Ok(Some((
        layout,
        LogRow {
            line: line_no,
            size: t[0].parse()?,
            count: t[1].parse()?,
            dtype: t[2].to_string(),
            redop: (head >= 4).then(|| t[3].to_string()),
            root: (head == 5).then(|| t[4].parse().unwrap_or(-1)),
            sides,
        },
    )))
}

/// Parse the text of a log. Errors (one line each): no result rows, or a row cut short.
pub fn parse(text: &str) -> Result<Log> {
    let mut collective = None;
    let mut ranks: BTreeMap<u64, ()> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut layout = None;
    let mut avg = None;
    let mut oob = None;
    for (i, raw) in text.lines().enumerate() {
        let line = strip_prefix(raw);
        let body = line.trim_start_matches('#').trim();
        if collective.is_none() {
            if let Some(name) = body.strip_prefix("Collective test starting:") {
                collective = Collective::parse(name.trim()).ok();
            } else if let Some(tok) = body.split_whitespace().find(|w| w.ends_with("_perf")) {
                collective = Collective::parse(tok).ok();
            }
        }
        if let Some(r) = body.strip_prefix("Rank ")
            && let Some(n) = r.split_whitespace().next().and_then(|x| x.parse::<u64>().ok())
        {
            ranks.insert(n, ());
            continue;
        }
        if let Some(v) = body.strip_prefix("Avg bus bandwidth") {
            avg = v.trim_start_matches([' ', ':']).split_whitespace().next().and_then(|x| x.parse().ok());
            continue;
        }
        if let Some(v) = body.strip_prefix("Out of bounds values") {
            oob = Some(v.trim_start_matches([' ', ':']).trim().to_string());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if let Some((l, row)) = parse_row(i + 1, line)? {
            layout.get_or_insert(l);
            rows.push(row);
        }
    }
    let Some(layout) = layout else {
        bail!("no nccl-tests result rows found (is this an nccl-tests or rccl-tests log?)");
    };
    let listed_ranks = ranks.keys().next_back().map(|&m| m as usize + 1);
    Ok(Log { collective, listed_ranks, layout, rows, printed_avg_busbw: avg, printed_out_of_bounds: oob })
}

/// How the busbw factor of a log was decided.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Factor {
    pub value: f64,
    pub collective: Option<Collective>,
    pub ranks: Option<usize>,
    pub how: String,
}

/// The factor from the collective and rank count when the log names them; otherwise inferred:
/// * `size = k x count x element` with k > 1 can only be all_gather, reduce_scatter or alltoall on
///   k ranks (their size column is the whole buffer, their count one rank's share), factor (k-1)/k;
/// * else a least-squares fit of printed busbw against algbw gives f: f > 1 is all_reduce with
///   n = 2 / (2 - f); f = 1 is broadcast, reduce, sendrecv (or all_reduce on 2 ranks).
pub fn factor(log: &Log, coll: Option<Collective>, ranks: Option<usize>) -> Result<Factor> {
    let coll = coll.or(log.collective);
    let ranks = ranks.or(log.listed_ranks);
    if let (Some(c), Some(n)) = (coll, ranks) {
        return Ok(Factor { value: c.nccl_tests_factor(n), collective: Some(c), ranks: Some(n), how: format!("{} on {n} ranks (named in the log)", c.name()) });
    }
    let first = log.rows.first().context("no rows")?;
    let elt = crate::coll::DType::ALL.into_iter().find(|d| d.name() == first.dtype).map(|d| d.size() as u64);
    let share = elt.filter(|&e| first.count > 0 && first.size % (first.count * e) == 0).map(|e| first.size / (first.count * e));
    if let Some(k) = share.filter(|&k| k > 1) {
        let k = k as usize;
        let family = matches!(coll, None | Some(Collective::AllGather | Collective::ReduceScatter | Collective::Alltoall));
        if family {
            let name = coll.map(|c| c.name()).unwrap_or("all_gather / reduce_scatter / alltoall");
            return Ok(Factor {
                value: (k as f64 - 1.0) / k as f64,
                collective: coll,
                ranks: Some(k),
                how: format!("{name}: size = {k} x count x {} B, so {k} ranks", elt.unwrap_or(0)),
            });
        }
    }
    // Least squares through the origin over every side: f = sum(alg * bus) / sum(alg^2).
    let (num, den) = log.rows.iter().flat_map(|r| r.sides.iter()).fold((0.0, 0.0), |(n, d), s| (n + s.algbw.value * s.busbw.value, d + s.algbw.value * s.algbw.value));
    if den == 0.0 {
        bail!("every row has algbw 0: cannot infer the busbw factor");
    }
    let f = num / den;
    let c = coll.unwrap_or(if f > 1.01 { Collective::AllReduce } else { Collective::Broadcast });
    let named = coll.is_some();
    match c {
        Collective::AllReduce if f > 0.99 => {
            let n = (2.0 / (2.0 - f)).round().max(2.0) as usize;
            Ok(Factor {
                value: c.nccl_tests_factor(n),
                collective: Some(c),
                ranks: Some(n),
                how: format!("all_reduce{}, ranks inferred from busbw/algbw = {f:.4}: n = {n}", if named { "" } else { " (factor above 1)" }),
            })
        }
        Collective::AllGather | Collective::ReduceScatter | Collective::Alltoall if f < 1.0 => {
            let n = (1.0 / (1.0 - f)).round() as usize;
            Ok(Factor { value: c.nccl_tests_factor(n), collective: Some(c), ranks: Some(n), how: format!("{}, ranks inferred from busbw/algbw = {f:.4}: n = {n}", c.name()) })
        }
        _ => Ok(Factor {
            value: 1.0,
            collective: named.then_some(c),
            ranks: None,
            how: if named { format!("{} (factor 1 for any rank count)", c.name()) } else { format!("factor 1 (busbw/algbw = {f:.4}): broadcast, reduce, sendrecv or all_reduce on 2 ranks") },
        }),
    }
}

/// One side's recomputation.
#[derive(Clone, Debug, Serialize)]
pub struct Recomputed {
    pub line: usize,
    pub size: u64,
    pub side: &'static str,
    pub time_us: f64,
    /// The time as printed.
    pub time_text: String,
    pub algbw_printed: f64,
    pub algbw: f64,
    pub busbw_printed: f64,
    pub busbw: f64,
    pub agrees: bool,
    pub why: String,
}

// ANCHOR: recompute
/// Recompute algbw = size / time and busbw = algbw x factor for every side of every row. A side
/// disagrees when a printed column is further from the recomputed value than the printed
/// rounding of time and bandwidth allows.
pub fn recompute(log: &Log, f: &Factor) -> Vec<Recomputed> {
    let mut out = Vec::new();
    for r in &log.rows {
        for (k, s) in r.sides.iter().enumerate() {
            let t = s.time_us.value;
            let algbw = if t > 0.0 { r.size as f64 / (t * 1e3) } else { f64::INFINITY };
            let busbw = algbw * f.value;
            // The time's own rounding moves algbw by up to algbw * dt / t.
            let rel_t = if t > 0.0 { s.time_us.half_ulp() / t } else { 0.0 };
            let tol_alg = algbw * rel_t * 1.001 + s.algbw.half_ulp() + 1e-9;
            let tol_bus = busbw * rel_t * 1.001 + s.busbw.half_ulp() + 1e-9;
            let mut why = Vec::new();
            if (s.algbw.value - algbw).abs() > tol_alg {
                why.push(format!("algbw printed {} but size/time = {algbw:.3}", s.algbw.value));
            }
            if (s.busbw.value - busbw).abs() > tol_bus {
                why.push(format!("busbw printed {} but algbw x {:.4} = {busbw:.3}", s.busbw.value, f.value));
            }
            out.push(Recomputed {
                line: r.line,
                size: r.size,
                side: if r.sides.len() == 1 { "in-place" } else if k == 0 { "out-of-place" } else { "in-place" },
                time_us: t,
                time_text: format!("{t:.*}", s.time_us.decimals as usize),
                algbw_printed: s.algbw.value,
                algbw,
                busbw_printed: s.busbw.value,
                busbw,
                agrees: why.is_empty(),
                why: why.join("; "),
            });
        }
    }
    out
}
// ANCHOR_END: recompute

/// The largest printed busbw of a log and the size it was reached at.
pub fn peak(log: &Log) -> Option<(f64, u64)> {
    log.rows
        .iter()
        .flat_map(|r| r.sides.iter().map(move |s| (s.busbw.value, r.size)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The mean of every printed busbw: what the trailer's `Avg bus bandwidth` should say.
pub fn mean_busbw(log: &Log) -> f64 {
    let all: Vec<f64> = log.rows.iter().flat_map(|r| r.sides.iter().map(|s| s.busbw.value)).collect();
    if all.is_empty() { 0.0 } else { all.iter().sum::<f64>() / all.len() as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURRENT: &str = "\
# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid 1 on a device  0 [0000:61:00] X
#  Rank  1 Group  0 Pid 2 on a device  1 [0000:81:00] X
     1048576        262144     float     sum      -1    50.00   20.97   20.97       0    50.00   20.97   20.97       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 20.97
";

    #[test]
    fn current_layout_parses_and_agrees() {
        let log = parse(CURRENT).unwrap();
        assert_eq!(log.layout, Layout::Current);
        assert_eq!(log.collective, Some(Collective::AllReduce));
        assert_eq!(log.listed_ranks, Some(2));
        let f = factor(&log, None, None).unwrap();
        assert_eq!(f.value, 1.0);
        assert!(recompute(&log, &f).iter().all(|r| r.agrees));
        assert_eq!(log.printed_avg_busbw, Some(20.97));
    }

    #[test]
    fn a_doctored_busbw_is_flagged() {
        let doctored = CURRENT.replacen("20.97       0    50.00", "29.97       0    50.00", 1);
        let log = parse(&doctored).unwrap();
        let f = factor(&log, None, None).unwrap();
        let bad: Vec<_> = recompute(&log, &f).into_iter().filter(|r| !r.agrees).collect();
        assert_eq!(bad.len(), 1);
        assert!(bad[0].why.contains("busbw printed 29.97"), "{}", bad[0].why);
    }

    #[test]
    fn prefixes_and_old_layouts() {
        assert_eq!(strip_prefix("[1,0]<stdout>:  8  2 float"), "8  2 float");
        assert_eq!(strip_prefix(" 0:        65536"), "65536");
        assert_eq!(strip_prefix("[0]      1048576"), "1048576");
        let old = "       65536          8192   float    16.57    1.98    1.98  0e+00    13.83    2.37    2.37  0e+00\n";
        let log = parse(old).unwrap();
        assert_eq!(log.layout, Layout::Oldest);
        assert_eq!(log.rows[0].sides[1].time_us.value, 13.83);
    }

    #[test]
    fn truncated_and_empty_logs_are_errors() {
        let cut = format!("{CURRENT}      600000\n");
        assert!(parse(&cut).unwrap_err().to_string().contains("cut-off"));
        let half = "     1048576        262144     float     sum      -1    50.00   20.97\n";
        assert!(parse(half).unwrap_err().to_string().contains("cut short"));
        assert!(parse("hello\n").unwrap_err().to_string().contains("no nccl-tests result rows"));
    }
}
