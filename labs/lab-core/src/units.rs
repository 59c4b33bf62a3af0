//! Human units in and out.
//!
//! Conventions, chosen to agree with nccl-tests where it matters:
//!
//! * Sizes: `B`; decimal `kB`/`KB`, `MB`, `GB`, `TB` (10^3 steps); binary `KiB`, `MiB`, `GiB`,
//!   `TiB` (2^10 steps). A bare suffix `K`, `M`, `G` is binary, as in nccl-tests' `-b 8 -e 128M`.
//! * Bandwidth: `GB/s` is 10^9 bytes per second (nccl-tests' GB); `GiB/s` is 2^30; `Gb/s` and
//!   `Gbps` are 10^9 *bits* per second, as link vendors quote them.
//! * Time: `ns`, `us` (or `µs`), `ms`, `s`, `min`, `h`.
//!
//! Every quantity is carried internally in SI base units as `f64`: bytes, seconds, bytes/second.

use anyhow::{Result, bail};

fn split_number(s: &str) -> Result<(f64, &str)> {
    let s = s.trim();
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
        i += 1;
    }
    // An exponent only if digits follow it, so `5e-6s` is a number and `5ex` is not.
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let (num, unit) = s.split_at(i);
    let num: String = num.chars().filter(|&c| c != '_').collect();
    if num.is_empty() || num == "-" || num == "+" {
        bail!("'{s}' does not start with a number");
    }
    let value: f64 = num.parse().map_err(|_| anyhow::anyhow!("'{s}' is not a number with a unit"))?;
    if !value.is_finite() {
        bail!("'{s}' is not a finite number");
    }
    Ok((value, unit.trim()))
}

/// Parse a size such as `64MiB`, `1GB`, `128M` (binary, nccl-tests style) or `4096` into bytes.
pub fn parse_bytes(s: &str) -> Result<f64> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "" | "B" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "K" | "k" | "KiB" => 1024.0,
        "M" | "MiB" => 1024.0 * 1024.0,
        "G" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "T" | "TiB" => 1024f64.powi(4),
        _ => bail!("'{s}': unknown size unit '{unit}' (use B, kB, MB, GB, KiB, MiB, GiB, or K/M/G = KiB/MiB/GiB)"),
    };
    if v < 0.0 {
        bail!("'{s}': a size cannot be negative");
    }
    Ok(v * mult)
}

/// Parse a size that must be a whole number of bytes.
pub fn parse_bytes_u64(s: &str) -> Result<u64> {
    let b = parse_bytes(s)?;
    if b.fract() != 0.0 || b > u64::MAX as f64 {
        bail!("'{s}' is not a whole number of bytes");
    }
    Ok(b as u64)
}

/// Parse a duration such as `2us`, `1.5ms`, `10s` into seconds. A bare number is seconds.
pub fn parse_time(s: &str) -> Result<f64> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        _ => bail!("'{s}': unknown time unit '{unit}' (use ns, us, ms, s, min, h)"),
    };
    if v < 0.0 {
        bail!("'{s}': a time cannot be negative");
    }
    Ok(v * mult)
}

/// Parse a bandwidth such as `25GB/s`, `400Gb/s`, `400Gbps` or `50GiB/s` into bytes per second.
pub fn parse_bandwidth(s: &str) -> Result<f64> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "B/s" => 1.0,
        "kB/s" | "KB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        "TB/s" => 1e12,
        "KiB/s" => 1024.0,
        "MiB/s" => 1024f64.powi(2),
        "GiB/s" => 1024f64.powi(3),
        "Mb/s" | "Mbps" => 1e6 / 8.0,
        "Gb/s" | "Gbps" => 1e9 / 8.0,
        "Tb/s" | "Tbps" => 1e12 / 8.0,
        _ => bail!("'{s}': unknown bandwidth unit '{unit}' (use GB/s = 1e9 B/s, GiB/s, or Gb/s = 1e9 bit/s)"),
    };
    if v <= 0.0 {
        bail!("'{s}': a bandwidth must be positive");
    }
    Ok(v * mult)
}

/// Round to `sig` significant digits and print without exponent, trimming nothing: `fmt_sig(0.012345, 3)` is `0.0123`.
pub fn fmt_sig(x: f64, sig: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let mag = x.abs().log10().floor() as i32;
    let decimals = (sig as i32 - 1 - mag).max(0) as usize;
    let s = format!("{x:.decimals$}");
    // Rounding can carry into a new digit (9.996 -> "10.00"); one decimal fewer keeps `sig` digits.
    let digits = s.chars().filter(|c| c.is_ascii_digit()).collect::<String>().trim_start_matches('0').len();
    if decimals > 0 && digits > sig { format!("{x:.prec$}", prec = decimals - 1) } else { s }
}

/// A duration with a unit chosen to keep 3 significant digits readable: `12.3 us`, `4.56 ms`.
pub fn fmt_time(seconds: f64) -> String {
    let a = seconds.abs();
    let (v, unit) = if a == 0.0 {
        return "0 s".into();
    } else if a < 1e-6 {
        (seconds * 1e9, "ns")
    } else if a < 1e-3 {
        (seconds * 1e6, "us")
    } else if a < 1.0 {
        (seconds * 1e3, "ms")
    } else if a < 600.0 {
        (seconds, "s")
    } else if a < 36_000.0 {
        (seconds / 60.0, "min")
    } else {
        (seconds / 3600.0, "h")
    };
    format!("{} {unit}", fmt_sig(v, 3))
}

/// A size in binary units: `64 MiB`, `1.5 KiB`, `8 B`.
pub fn fmt_bytes(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    let num = if v.fract() == 0.0 { format!("{v:.0}") } else { fmt_sig(v, 3) };
    format!("{num} {}", units[i])
}

/// A size in the units it was most likely given in: binary (`64 MiB`) when it is a whole number of
/// KiB, MiB, ...; decimal (`2 GB`) when it is a whole number of kB, MB, ... but not binary.
pub fn fmt_size(bytes: f64) -> String {
    // The largest power of `base` that divides `bytes` exactly, up to `steps` times.
    let exact = |base: f64| {
        let (mut v, mut k) = (bytes, 0);
        while v >= base && (v / base).fract() == 0.0 && k < 5 {
            v /= base;
            k += 1;
        }
        (v, k)
    };
    let (bin_v, bin_k) = exact(1024.0);
    let (si_v, si_k) = exact(1000.0);
    if si_k > 0 && (bin_k == 0 || si_v < bin_v) && bytes.fract() == 0.0 {
        let si = ["B", "kB", "MB", "GB", "TB", "PB"];
        return format!("{si_v} {}", si[si_k]);
    }
    fmt_bytes(bytes)
}

/// A bandwidth in decimal GB/s (10^9 B/s), as nccl-tests prints it.
pub fn fmt_bandwidth(bytes_per_s: f64) -> String {
    format!("{} GB/s", fmt_sig(bytes_per_s / 1e9, 3))
}

/// An integer with thousands separators: `100,000`.
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_stated_conventions() {
        assert_eq!(parse_bytes("64MiB").unwrap(), 64.0 * 1024.0 * 1024.0);
        assert_eq!(parse_bytes("128M").unwrap(), 128.0 * 1024.0 * 1024.0);
        assert_eq!(parse_bytes("1GB").unwrap(), 1e9);
        assert_eq!(parse_bytes("8").unwrap(), 8.0);
        assert_eq!(parse_bytes("2 KiB").unwrap(), 2048.0);
        assert!(parse_bytes("12XB").is_err());
        assert!(parse_bytes("MB").is_err());
        assert!(parse_bytes("-1MB").is_err());
    }

    #[test]
    fn times_and_bandwidths_parse() {
        assert!((parse_time("2us").unwrap() - 2e-6).abs() < 1e-18);
        assert!((parse_time("5e-6s").unwrap() - 5e-6).abs() < 1e-18);
        assert_eq!(parse_time("1.5ms").unwrap(), 1.5e-3);
        assert_eq!(parse_bandwidth("25GB/s").unwrap(), 25e9);
        assert_eq!(parse_bandwidth("400Gb/s").unwrap(), 50e9);
        assert_eq!(parse_bandwidth("400Gbps").unwrap(), 50e9);
        assert!(parse_bandwidth("0GB/s").is_err());
        assert!(parse_time("3 fortnights").is_err());
    }

    #[test]
    fn formatting_is_fixed() {
        assert_eq!(fmt_time(12.345e-6), "12.3 us");
        assert_eq!(fmt_time(9.996e-3), "10.0 ms");
        assert_eq!(fmt_bytes(64.0 * 1024.0 * 1024.0), "64 MiB");
        assert_eq!(fmt_bytes(1536.0), "1.50 KiB");
        assert_eq!(fmt_bandwidth(370e9), "370 GB/s");
        assert_eq!(fmt_size(2e9), "2 GB");
        assert_eq!(fmt_size(64.0 * 1024.0 * 1024.0), "64 MiB");
        assert_eq!(fmt_size(1000.0), "1 kB");
        assert_eq!(fmt_size(8.0), "8 B");
        assert_eq!(fmt_count(100_000), "100,000");
        assert_eq!(fmt_count(8), "8");
        assert_eq!(fmt_sig(0.012345, 3), "0.0123");
    }

    proptest::proptest! {
        #[test]
        fn bytes_round_trip_through_binary_units(k in 0u32..40) {
            let b = 2f64.powi(k as i32);
            let shown = fmt_bytes(b).replace(' ', "");
            proptest::prop_assert_eq!(parse_bytes(&shown).unwrap(), b);
        }
    }
}
