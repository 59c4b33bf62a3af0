//! Model vs measurement: alpha and beta from a ping-pong sweep, predictions from D01's formulas,
//! and this module's scale boundaries.
//!
//! The ping-pong is fitted in two regimes, because MPI itself has two protocols: small messages
//! go eagerly (copied through a shared buffer, one start-up cost), large ones by rendezvous (a
//! handshake, then one copy straight between the processes). Alpha is the intercept of the
//! small-message line, beta the slope of the large-message line; the error of the fitted
//! `alpha + n * beta` is printed for every size, so the reader sees where the straight line fails.

use d01_scaling::{Allreduce, Machine};
use lab_core::Boundary;
use lab_core::units::{fmt_bytes, fmt_count, fmt_time};
use serde::{Deserialize, Serialize};

/// Least squares y = a + b x minimising the *relative* residuals (a + b x - y) / y, i.e.
/// weighted least squares with weights 1/y^2: a fit over sizes spanning decades should be as
/// good in percent at the small end as at the large end. None with fewer than two distinct x.
pub fn line_fit(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 || points.iter().any(|p| p.1 <= 0.0) {
        return None;
    }
    let w = |p: &(f64, f64)| 1.0 / (p.1 * p.1);
    let sw: f64 = points.iter().map(w).sum();
    let mx = points.iter().map(|p| w(p) * p.0).sum::<f64>() / sw;
    let my = points.iter().map(|p| w(p) * p.1).sum::<f64>() / sw;
    let sxx: f64 = points.iter().map(|p| w(p) * (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| w(p) * (p.0 - mx) * (p.1 - my)).sum();
    let b = sxy / sxx;
    Some((my - b * mx, b))
}

/// Sizes at or below this are fitted for alpha (eager regime) ...
pub const SMALL_MAX: usize = 1024;
/// ... and sizes at or above this for beta (rendezvous, single copy).
pub const LARGE_MIN: usize = 64 * 1024;

/// The Hockney fit of a ping-pong sweep.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct HockneyFit {
    pub alpha: f64,
    pub beta: f64,
}

/// Fit alpha from the sizes <= [`SMALL_MAX`] and beta from those >= [`LARGE_MIN`] of
/// (bytes, one-way seconds). Alpha is floored at zero (a negative start-up time is noise).
pub fn fit_hockney(one_way: &[(usize, f64)]) -> Option<HockneyFit> {
    let small: Vec<(f64, f64)> = one_way.iter().filter(|p| p.0 <= SMALL_MAX).map(|&(b, t)| (b as f64, t)).collect();
    let large: Vec<(f64, f64)> = one_way.iter().filter(|p| p.0 >= LARGE_MIN).map(|&(b, t)| (b as f64, t)).collect();
    let (alpha, _) = line_fit(&small)?;
    let (_, beta) = line_fit(&large)?;
    (beta > 0.0).then_some(HockneyFit { alpha: alpha.max(0.0), beta })
}

/// Gamma (seconds per reduced byte) as the slope through the origin that minimises the relative
/// residuals of the measured reduce times: the one constant the D01 model has for all sizes.
pub fn fit_gamma(reduce: &[(usize, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = reduce.iter().filter(|p| p.1 > 0.0).map(|&(b, t)| (b as f64, t)).collect();
    let sxx: f64 = pts.iter().map(|&(x, y)| (x / y).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|&(x, y)| x / y).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// D01's prediction of an allreduce of `bytes` on `p` ranks.
pub fn predict(algorithm: Allreduce, m: &Machine, bytes: usize, p: usize) -> f64 {
    algorithm.cost(m, bytes as f64, p as u64).total()
}

/// Relative error of a prediction, (predicted - measured) / measured.
pub fn rel_error(predicted: f64, measured: f64) -> f64 {
    (predicted - measured) / measured
}

/// The smallest p in 2..=max_p (scanning every integer) where `f(p)` holds.
fn first_p(max_p: u64, f: impl Fn(u64) -> bool) -> Option<u64> {
    (2..=max_p).find(|&p| f(p))
}

/// The rank count up to which the course's ladders reach.
pub const LADDER_TOP: u64 = 100_000;

/// What breaks first for allreduce by message passing, on machine `m` (alpha, beta, gamma from a
/// measurement or a spec sheet), for a host with `cores` cores:
/// * past `cores` ranks a single host is oversubscribed and timings stop meaning anything;
/// * for a small message the ring's 2(p-1) start-ups dominate: the p where a ring allreduce of
///   `small` bytes costs more than recursive doubling by 10x;
/// * for each of `sizes`, the p where the ring's latency term 2(p-1) alpha overtakes its
///   bandwidth term 2n(p-1)/p beta, i.e. where chunks shrink below n_1/2 = alpha/beta.
// ANCHOR: boundaries
pub fn scale_boundaries(m: &Machine, cores: usize, small: usize, sizes: &[usize]) -> Vec<Boundary> {
    let mut rows = Vec::new();
    rows.push(Boundary::new(
        "d02",
        (cores + 1) as f64,
        format!("p = {}", fmt_count(cores as u64 + 1)),
        "one host runs out of cores: ranks are oversubscribed, busy-polling ranks steal each other's time, timings stop meaning anything",
        format!("this host has {cores} cores; correctness still holds (the lab checks up to 9 ranks)"),
    ));
    let ring = |n: usize, p: u64| Allreduce::Ring.cost(m, n as f64, p);
    let rd = |n: usize, p: u64| Allreduce::RecursiveDoubling.cost(m, n as f64, p);
    if let Some(p) = first_p(LADDER_TOP, |p| ring(small, p).total() > 10.0 * rd(small, p).total()) {
        rows.push(Boundary::new(
            "d02",
            p as f64,
            format!("p = {}", fmt_count(p)),
            format!("a {} allreduce by ring is 10x slower than recursive doubling: 2(p-1) start-ups against lg p", fmt_bytes(small as f64)),
            format!(
                "ring {} vs recursive doubling {} (alpha = {})",
                fmt_time(ring(small, p).total()),
                fmt_time(rd(small, p).total()),
                fmt_time(m.alpha)
            ),
        ));
    }
    for &n in sizes {
        if let Some(p) = first_p(LADDER_TOP, |p| ring(n, p).latency > ring(n, p).bandwidth) {
            let c = ring(n, p);
            rows.push(Boundary::new(
                "d02",
                p as f64,
                format!("p = {}", fmt_count(p)),
                format!(
                    "a {} ring allreduce turns latency-bound: chunks of n/p = {} fall below n_1/2 = {}",
                    fmt_bytes(n as f64),
                    fmt_bytes((n as f64 / p as f64).round()),
                    fmt_bytes(m.n_half().round())
                ),
                format!("latency term {} > bandwidth term {}", fmt_time(c.latency), fmt_time(c.bandwidth)),
            ));
        } else {
            rows.push(Boundary::new(
                "d02",
                LADDER_TOP as f64,
                format!("beyond p = {}", fmt_count(LADDER_TOP)),
                format!("a {} ring allreduce stays bandwidth-bound", fmt_bytes(n as f64)),
                format!("n/p stays above n_1/2 = {}", fmt_bytes(m.n_half().round())),
            ));
        }
    }
    rows.sort_by(|a, b| a.at.total_cmp(&b.at));
    rows
}
// ANCHOR_END: boundaries

/// The boundary rows a published `d02/bench` transcript measured (its `data.boundaries`), for
/// D06's ladder: the same rows [`scale_boundaries`] computed from that run's fitted machine.
pub fn boundaries_from_bench(data: &serde_json::Value) -> Vec<Boundary> {
    data["boundaries"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| {
                    Some(Boundary::new(
                        "d02",
                        r["at"].as_f64()?,
                        r["scale"].as_str()?,
                        r["what_breaks"].as_str()?,
                        r["evidence"].as_str()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_fit_recovers_a_line() {
        let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 2.0 + 0.5 * i as f64)).collect();
        assert!(fit_gamma(&[(10, 20.0), (20, 40.0)]).is_some_and(|g| (g - 2.0).abs() < 1e-12));
        let (a, b) = line_fit(&pts).unwrap();
        assert!((a - 2.0).abs() < 1e-12 && (b - 0.5).abs() < 1e-12);
        assert!(line_fit(&pts[..1]).is_none());
    }

    #[test]
    fn hockney_fit_uses_both_regimes() {
        // alpha = 1 us, beta = 1 ns/B, plus a protocol jump of 5 us above 4 KiB.
        let pts: Vec<(usize, f64)> = [0usize, 8, 64, 512, 1024, 65536, 1 << 20, 1 << 24]
            .iter()
            .map(|&b| (b, 1e-6 + b as f64 * 1e-9 + if b > 4096 { 5e-6 } else { 0.0 }))
            .collect();
        let f = fit_hockney(&pts).unwrap();
        assert!((f.alpha - 1e-6).abs() < 1e-12, "{f:?}");
        assert!((f.beta - 1e-9).abs() < 1e-15, "{f:?}");
    }

    #[test]
    fn published_rows_round_trip() {
        let m = Machine::new(1e-6, 1e9, 1e10);
        let rows = scale_boundaries(&m, 2, 8, &[1 << 20]);
        let data = serde_json::json!({ "boundaries": rows });
        assert_eq!(boundaries_from_bench(&data), rows);
    }

    #[test]
    fn ring_turns_latency_bound_where_chunks_reach_n_half() {
        let m = Machine::new(1e-6, 1e9, f64::INFINITY); // n_1/2 = 1000 B
        let rows = scale_boundaries(&m, 2, 8, &[1_000_000]);
        assert_eq!(rows[0].scale, "p = 3");
        // 2(p-1) alpha > 2n(p-1)/p beta  <=>  p > n beta / alpha = 1000.
        assert!(rows.iter().any(|r| r.scale == "p = 1,001"), "{rows:?}");
    }
}
