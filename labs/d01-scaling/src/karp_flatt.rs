//! Karp-Flatt: read measured (p, time) pairs, compute each run's experimentally determined
//! serial fraction, and say whether it grows with p.

use anyhow::{Result, bail};
use serde::Serialize;

use crate::laws::karp_flatt;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sample {
    pub p: u64,
    pub time: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub p: u64,
    pub time: f64,
    pub speedup: f64,
    pub efficiency: f64,
    /// Karp-Flatt's e; undefined (None) for p = 1.
    pub serial_fraction: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    pub rows: Vec<Row>,
    /// Least-squares slope of e against log2 p (per doubling of p).
    pub slope_per_doubling: f64,
    /// The slope relative to the mean e: the fraction by which e changes per doubling.
    pub relative_slope: f64,
    pub verdict: &'static str,
}

/// Parse `p,time` CSV: a header line is optional, `#` starts a comment, time takes units (`1.5s`,
/// `300ms`) or is seconds. Needs a p = 1 row (speedup is relative to it) and at least one p > 1.
pub fn parse_csv(text: &str) -> Result<Vec<Sample>> {
    let mut samples = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 2 {
            bail!("line {}: expected two fields 'p,time', found {}", i + 1, fields.len());
        }
        let Ok(p) = fields[0].parse::<u64>() else {
            if samples.is_empty() && fields[0].chars().any(|c| c.is_alphabetic()) {
                continue; // a header such as "p,time"
            }
            bail!("line {}: '{}' is not a rank count", i + 1, fields[0]);
        };
        if p == 0 {
            bail!("line {}: rank count must be at least 1", i + 1);
        }
        let time = lab_core::units::parse_time(fields[1]).map_err(|e| anyhow::anyhow!("line {}: {e}", i + 1))?;
        if time <= 0.0 {
            bail!("line {}: time must be positive", i + 1);
        }
        samples.push(Sample { p, time });
    }
    if samples.is_empty() {
        bail!("no (p, time) rows found");
    }
    samples.sort_by_key(|s| s.p);
    if samples.windows(2).any(|w| w[0].p == w[1].p) {
        bail!("a rank count appears twice; give one time per p (average repeats first)");
    }
    if samples[0].p != 1 {
        bail!("needs a row for p = 1: speedup is measured against one rank");
    }
    if samples.len() < 2 {
        bail!("needs at least one row with p > 1");
    }
    Ok(samples)
}

/// e for every p > 1 and the trend: e changing by more than 2% of its mean per doubling of p
/// counts as a trend (a relative test, because a serial fraction of 0.001 is common).
pub fn analyse(samples: &[Sample]) -> Analysis {
    let t1 = samples[0].time;
    let rows: Vec<Row> = samples
        .iter()
        .map(|s| {
            let speedup = t1 / s.time;
            Row {
                p: s.p,
                time: s.time,
                speedup,
                efficiency: speedup / s.p as f64,
                serial_fraction: (s.p > 1).then(|| karp_flatt(speedup, s.p as f64)),
            }
        })
        .collect();
    let pts: Vec<(f64, f64)> =
        rows.iter().filter_map(|r| r.serial_fraction.map(|e| ((r.p as f64).log2(), e))).collect();
    let slope = if pts.len() < 2 {
        0.0
    } else {
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        if sxx == 0.0 { 0.0 } else { sxy / sxx }
    };
    let mean_e = if pts.is_empty() { 0.0 } else { pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64 };
    let relative = if mean_e.abs() > 1e-15 { slope / mean_e.abs() } else { 0.0 };
    let verdict = if relative > 0.02 {
        "e grows with p: overhead (communication, imbalance) grows with the rank count, not just serial work"
    } else if relative < -0.02 {
        "e falls with p: superlinear effects (caches) or a noisy one-rank baseline"
    } else {
        "e is flat: a fixed serial fraction (Amdahl) explains the lost efficiency"
    };
    Analysis { rows, slope_per_doubling: slope, relative_slope: relative, verdict }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn csv_errors_are_one_line() {
        assert!(parse_csv("").unwrap_err().to_string().contains("no (p, time) rows"));
        assert!(parse_csv("p,time\n2,1s\n").unwrap_err().to_string().contains("p = 1"));
        assert!(parse_csv("1,1s\n2,x\n").unwrap_err().to_string().contains("line 2"));
        assert!(parse_csv("1,1s,3\n").unwrap_err().to_string().contains("two fields"));
        assert!(parse_csv("1,1s\n").unwrap_err().to_string().contains("p > 1"));
        assert!(parse_csv("1,1s\n0,1s\n").is_err());
        let s = parse_csv("# timings\np,time\n1, 10s\n4,2.6s\n2, 5100ms\n").unwrap();
        assert_eq!(s.iter().map(|s| s.p).collect::<Vec<_>>(), vec![1, 2, 4]);
        assert!((s[1].time - 5.1).abs() < 1e-12);
    }

    proptest! {
        /// Synthetic Amdahl timings give back their serial fraction at every p, and a flat trend.
        #[test]
        fn recovers_a_known_serial_fraction(serial in 0.001f64..0.5, t1 in 0.1f64..1e4) {
            let samples: Vec<Sample> = [1u64, 2, 4, 8, 16, 64, 256]
                .iter()
                .map(|&p| Sample { p, time: t1 * (serial + (1.0 - serial) / p as f64) })
                .collect();
            let a = analyse(&samples);
            for r in &a.rows[1..] {
                prop_assert!((r.serial_fraction.unwrap() - serial).abs() < 1e-9);
            }
            prop_assert!(a.verdict.starts_with("e is flat"));
        }

        /// An overhead that grows with p shows up as a rising e.
        #[test]
        fn growing_overhead_is_flagged(serial in 0.001f64..0.1, overhead in 0.01f64..0.1) {
            let samples: Vec<Sample> = [1u64, 2, 4, 8, 16, 32]
                .iter()
                .map(|&p| Sample { p, time: serial + (1.0 - serial) / p as f64 + overhead * (p as f64).log2() })
                .collect();
            prop_assert!(analyse(&samples).verdict.starts_with("e grows"));
        }
    }
}
