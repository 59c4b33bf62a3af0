//! What a measured transcript ran on: CPU model and cores, OS, date. Labs add their own facts
//! (MPI library and version, transport, GPU and driver) to [`crate::Provenance::facts`].

use std::collections::BTreeMap;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// CPU model name from /proc/cpuinfo (Linux); "unknown CPU" elsewhere.
pub fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Kernel name and release, e.g. `Linux 6.1.0`.
pub fn os() -> String {
    let release = read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string());
    match release {
        Some(r) => format!("{} {r}", std::env::consts::OS),
        None => std::env::consts::OS.to_string(),
    }
}

/// Today's date in UTC as YYYY-MM-DD, from the system clock (civil-from-days, Howard Hinnant's method).
pub fn date_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let days = secs.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}")
}

/// The facts every measured transcript records; labs extend the map.
pub fn base_facts() -> BTreeMap<String, String> {
    let mut f = BTreeMap::new();
    f.insert("cpu".into(), cpu_model());
    f.insert("cores".into(), cores().to_string());
    f.insert("os".into(), os());
    f.insert("date".into(), date_utc());
    f
}

/// `AMD EPYC 7B13 (2 cores), linux 6.1.0`: the start of a MEASURED banner.
pub fn summary() -> String {
    format!("{} ({} cores), {}", cpu_model(), cores(), os())
}

#[cfg(test)]
mod tests {
    #[test]
    fn date_looks_like_a_date() {
        let d = super::date_utc();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"));
    }
}
