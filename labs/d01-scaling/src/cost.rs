//! The cost of talking.
//!
//! Hockney's model: sending n bytes costs alpha + n * beta, where alpha is the start-up latency
//! and beta = 1/B the time per byte on a link of bandwidth B. Reductions add gamma per byte of
//! arithmetic. LogP and LogGP split alpha into the sender's and receiver's overhead o, the wire
//! latency L and the gap g between messages, with G per byte for long messages.

use serde::Serialize;

// ANCHOR: machine
/// A machine in the alpha-beta-gamma model. All collectives in [`crate::collectives`] take one.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Machine {
    /// Seconds per message (start-up latency).
    pub alpha: f64,
    /// Seconds per byte on the link: 1 / bandwidth.
    pub beta: f64,
    /// Seconds per byte of reduction arithmetic.
    pub gamma: f64,
}

impl Machine {
    /// From latency, link bandwidth (B/s) and reduction throughput (B/s; infinity for free).
    pub fn new(alpha: f64, bandwidth: f64, reduce_bandwidth: f64) -> Self {
        Machine { alpha, beta: 1.0 / bandwidth, gamma: 1.0 / reduce_bandwidth }
    }

    pub fn bandwidth(&self) -> f64 {
        1.0 / self.beta
    }

    /// Hockney's point-to-point time for `n` bytes.
    pub fn p2p(&self, n: f64) -> f64 {
        self.alpha + n * self.beta
    }

    /// The half-performance message size n_1/2 = alpha * B: at this size half of the time is
    /// latency, and the achieved bandwidth is half the link's.
    pub fn n_half(&self) -> f64 {
        self.alpha / self.beta
    }
}
// ANCHOR_END: machine

// ANCHOR: cost
/// A time split into the model's three terms, so a lab can say which one dominates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Cost {
    /// Message start-ups: a multiple of alpha.
    pub latency: f64,
    /// Bytes on the wire: a multiple of beta.
    pub bandwidth: f64,
    /// Reduction arithmetic: a multiple of gamma.
    pub compute: f64,
}

impl Cost {
    pub fn total(&self) -> f64 {
        self.latency + self.bandwidth + self.compute
    }

    /// `"latency"`, `"bandwidth"` or `"reduction"`: the largest term (ties go to the first).
    pub fn dominant(&self) -> &'static str {
        if self.latency >= self.bandwidth && self.latency >= self.compute {
            "latency"
        } else if self.bandwidth >= self.compute {
            "bandwidth"
        } else {
            "reduction"
        }
    }

    /// Build from counts: `messages` start-ups, `wire_bytes` on the critical path, `reduced_bytes`.
    pub fn from_counts(m: &Machine, messages: f64, wire_bytes: f64, reduced_bytes: f64) -> Self {
        Cost { latency: messages * m.alpha, bandwidth: wire_bytes * m.beta, compute: reduced_bytes * m.gamma }
    }
}
// ANCHOR_END: cost

// ANCHOR: logp
/// LogP (Culler et al., 1993): latency L, overhead o, gap g, processors P.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LogP {
    pub l: f64,
    pub o: f64,
    pub g: f64,
    pub p: u64,
}

impl LogP {
    /// One small message end to end: the sender's overhead, the wire, the receiver's overhead.
    pub fn message(&self) -> f64 {
        2.0 * self.o + self.l
    }

    /// At most ceil(L / g) messages can be in flight from one processor.
    pub fn in_flight(&self) -> u64 {
        (self.l / self.g).ceil() as u64
    }

    /// `k` back-to-back small messages from one sender to one receiver: the sender can issue one
    /// every max(g, o), and the last one still needs L + o to land.
    pub fn messages(&self, k: u64) -> f64 {
        if k == 0 {
            return 0.0;
        }
        self.o + (k - 1) as f64 * self.g.max(self.o) + self.l + self.o
    }
}

/// LogGP (Alexandrov et al., SPAA'95): LogP plus G, the gap per byte of a long message.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LogGP {
    pub logp: LogP,
    pub big_g: f64,
}

impl LogGP {
    /// One k-byte message: o + (k - 1) G + L + o. With G = 0 this is LogP's single message.
    pub fn message(&self, k: f64) -> f64 {
        let bytes_after_first = (k - 1.0).max(0.0);
        self.logp.o + bytes_after_first * self.big_g + self.logp.l + self.logp.o
    }

    /// The Hockney machine this reduces to for large messages: alpha = L + 2o - G, beta = G.
    pub fn as_hockney(&self, gamma: f64) -> Machine {
        Machine { alpha: self.logp.l + 2.0 * self.logp.o - self.big_g, beta: self.big_g, gamma }
    }
}
// ANCHOR_END: logp

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n_half_is_where_half_the_bandwidth_is_reached() {
        let m = Machine::new(5e-6, 50e9, f64::INFINITY);
        let n = m.n_half();
        assert!((n - 250_000.0).abs() < 1e-6);
        let achieved = n / m.p2p(n);
        assert!((achieved - m.bandwidth() / 2.0).abs() < 1e-3);
    }

    #[test]
    fn loggp_reduces_to_logp_and_to_hockney() {
        let logp = LogP { l: 1e-6, o: 0.5e-6, g: 0.2e-6, p: 8 };
        let gp = LogGP { logp, big_g: 0.0 };
        assert_eq!(gp.message(1.0), logp.message());
        let gp = LogGP { logp, big_g: 1e-10 };
        let h = gp.as_hockney(0.0);
        for k in [1.0, 1e3, 1e6] {
            assert!((gp.message(k) - h.p2p(k)).abs() < 1e-15);
        }
        assert_eq!(logp.in_flight(), 5);
        assert_eq!(logp.messages(1), logp.message());
    }

    #[test]
    fn dominant_term() {
        let c = Cost { latency: 1.0, bandwidth: 2.0, compute: 0.5 };
        assert_eq!(c.dominant(), "bandwidth");
        assert_eq!(c.total(), 3.5);
    }
}
