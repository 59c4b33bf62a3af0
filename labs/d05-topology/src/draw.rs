//! Drawings of small explicit graphs as SVG, laid out per family: a Clos by tiers, a dragonfly
//! as a ring of groups, a 2D torus as a grid. Drawn from the same graph the tests measure, so a
//! drawing cannot disagree with the model. Coordinates are rounded to one decimal, so the
//! output is byte-identical on every machine.

use std::fmt::Write;

use crate::build::build;
use crate::graph::{Graph, LinkKind, NodeKind};
use crate::spec::Topology;

const W: f64 = 720.0;
const H: f64 = 500.0;

/// Node positions for the family's layout.
fn layout(t: &Topology, g: &Graph) -> Vec<(f64, f64)> {
    let n = g.nodes();
    match t {
        Topology::Dragonfly(d) => {
            let mut pos = vec![(0.0, 0.0); n];
            let (cx, cy) = (W / 2.0, H / 2.0 + 30.0);
            let big = 150.0;
            let small = 42.0;
            let routers = (d.a * d.g) as usize;
            let first_router = n - routers;
            for r in 0..routers {
                let group = r / d.a as usize;
                let local = r % d.a as usize;
                let ga = std::f64::consts::TAU * group as f64 / d.g as f64 - std::f64::consts::FRAC_PI_2;
                let (gx, gy) = (cx + big * ga.cos(), cy + big * ga.sin());
                let la = ga + std::f64::consts::TAU * (local as f64 + 0.5) / d.a as f64;
                pos[first_router + r] = (gx + small * la.cos(), gy + small * la.sin());
                for e in 0..d.p as usize {
                    let ea = la + 0.35 * (e as f64 - (d.p as f64 - 1.0) / 2.0);
                    pos[r * d.p as usize + e] = (gx + (small + 22.0) * ea.cos(), gy + (small + 22.0) * ea.sin());
                }
            }
            pos
        }
        Topology::Torus(tt) => {
            let k = tt.k as usize;
            let step = (H - 190.0) / (k as f64 - 1.0).max(1.0);
            let (x0, y0) = (W / 2.0 - step * (k as f64 - 1.0) / 2.0, 120.0);
            // A torus is drawn (and cabled) folded: 0, k-1, 1, k-2, ... so that the wrap-around
            // link is as short as the others and no link spans more than two places.
            let place = |x: usize| if !tt.wrap { x } else if x < k.div_ceil(2) { 2 * x } else { 2 * (k - 1 - x) + 1 };
            (0..n).map(|v| (x0 + step * place(v % k) as f64, y0 + step * place(v / k % k) as f64)).collect()
        }
        _ => {
            // Tiers by distance from the nearest endpoint; each tier in node order, spread evenly.
            let mut tier = vec![u32::MAX; n];
            let mut queue = std::collections::VecDeque::new();
            for v in g.endpoints() {
                tier[v as usize] = 0;
                queue.push_back(v);
            }
            while let Some(v) = queue.pop_front() {
                for &(w, e) in g.neighbours(v) {
                    let step = if g.edges[e as usize].2 == LinkKind::NvLink { 0 } else { 1 };
                    if step == 1 && tier[w as usize] == u32::MAX {
                        tier[w as usize] = tier[v as usize] + 1;
                        queue.push_back(w);
                    }
                }
            }
            // A server's NVSwitch sits just above its GPUs.
            let top = tier.iter().filter(|&&t| t != u32::MAX).max().copied().unwrap_or(0) as f64;
            let mut pos = vec![(0.0, 0.0); n];
            for level in 0..=top as u32 {
                let members: Vec<usize> = (0..n).filter(|&v| tier[v] == level).collect();
                let y = H - 40.0 - (H - 160.0) * level as f64 / top.max(1.0);
                for (i, &v) in members.iter().enumerate() {
                    pos[v] = (40.0 + (W - 80.0) * (i as f64 + 0.5) / members.len() as f64, y);
                }
            }
            let nvs: Vec<usize> = (0..n).filter(|&v| tier[v] == u32::MAX).collect();
            for (i, &v) in nvs.iter().enumerate() {
                pos[v] = (40.0 + (W - 80.0) * (i as f64 + 0.5) / nvs.len() as f64, H - 72.0);
            }
            pos
        }
    }
}

fn colour(kind: LinkKind) -> (&'static str, &'static str) {
    match kind {
        LinkKind::Global => ("#DB2777", ""),
        LinkKind::Uplink | LinkKind::HostOptical | LinkKind::TorusOptical => ("#2563EB", " stroke-dasharray=\"5 3\""),
        LinkKind::NvLink => ("#059669", ""),
        _ => ("#64748B", ""),
    }
}

/// An SVG drawing of `t` with a title and a legend.
pub fn draw(t: &Topology, title: &str) -> String {
    let g = build(t);
    let pos = layout(t, &g);
    let mut s = String::new();
    let _ = writeln!(s, "<svg width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" xmlns=\"http://www.w3.org/2000/svg\">");
    let _ = writeln!(s, "<rect width=\"{W}\" height=\"{H}\" fill=\"#FFFFFF\"/>");
    let _ = writeln!(s, "<text x=\"{}\" y=\"26\" font-family=\"sans-serif\" font-size=\"18\" text-anchor=\"middle\">{title}</text>", W / 2.0);
    let torus_step = match t {
        Topology::Torus(tt) => Some((H - 190.0) / (tt.k as f64 - 1.0).max(1.0)),
        _ => None,
    };
    for &(a, b, kind) in &g.edges {
        let ((x1, y1), (x2, y2)) = (pos[a as usize], pos[b as usize]);
        let (stroke, dash) = colour(kind);
        let length = (x1 - x2).abs() + (y1 - y2).abs();
        if torus_step.is_some_and(|step| length > 1.5 * step) {
            // A link that skips a place bows sideways so it does not run through the node between.
            let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
            let (cx, cy) = if (y1 - y2).abs() < 1.0 { (mx, my - 14.0) } else { (mx - 14.0, my) };
            let _ = writeln!(s, "<path d=\"M{x1:.1} {y1:.1} Q{cx:.1} {cy:.1} {x2:.1} {y2:.1}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"1.2\"{dash}/>");
        } else {
            let _ = writeln!(s, "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{stroke}\" stroke-width=\"1.2\"{dash}/>");
        }
    }
    for (v, &(x, y)) in pos.iter().enumerate() {
        match g.kinds[v] {
            NodeKind::Endpoint => {
                let _ = writeln!(s, "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"#0F172A\"/>");
            }
            NodeKind::Switch => {
                let _ = writeln!(s, "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"#F59E0B\" stroke=\"#0F172A\"/>", x - 6.0, y - 6.0);
            }
            NodeKind::ServerSwitch => {
                let _ = writeln!(s, "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"#059669\"/>", x - 5.0, y - 5.0);
            }
        }
    }
    let legend = [
        ("#0F172A", "", "endpoint (dot); switch or router (square)"),
        ("#059669", "", "NVLink inside a server"),
        ("#64748B", "", "electrical link"),
        ("#2563EB", " stroke-dasharray=\"5 3\"", "optical link"),
        ("#DB2777", "", "dragonfly global link (optical)"),
    ];
    for (i, (c, dash, label)) in legend.iter().enumerate() {
        let y = 48.0 + 14.0 * i as f64;
        let _ = writeln!(s, "<line x1=\"10\" y1=\"{y:.1}\" x2=\"28\" y2=\"{y:.1}\" stroke=\"{c}\" stroke-width=\"2\"{dash}/>");
        let _ = writeln!(s, "<text x=\"34\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"11\">{label}</text>", y + 4.0);
    }
    s.push_str("</svg>\n");
    s
}
