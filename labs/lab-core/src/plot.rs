//! Line plots as SVG strings, through plotters' SVG backend (no system libraries, deterministic
//! output, so analytic plots verify byte for byte like the text).

use plotters::coord::Shift;
use plotters::prelude::*;

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Dashed lines mark predictions drawn beside measurements.
    pub dashed: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { name: name.into(), points, dashed: false }
    }

    pub fn dashed(mut self) -> Self {
        self.dashed = true;
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

#[derive(Clone, Debug)]
pub struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
    /// Horizontal reference lines (value, label), e.g. an efficiency threshold or a line rate.
    pub hlines: Vec<(f64, String)>,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(0xDB, 0x27, 0x77), // the track colour
    RGBColor(0x25, 0x63, 0xEB),
    RGBColor(0x05, 0x96, 0x69),
    RGBColor(0xD9, 0x77, 0x06),
    RGBColor(0x7C, 0x3A, 0xED),
    RGBColor(0x0F, 0x17, 0x2A),
    RGBColor(0xDC, 0x26, 0x26),
    RGBColor(0x64, 0x74, 0x8B),
];

impl LinePlot {
    pub fn new(title: impl Into<String>, x_label: impl Into<String>, y_label: impl Into<String>) -> Self {
        LinePlot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            series: Vec::new(),
            hlines: Vec::new(),
        }
    }

    pub fn log_x(mut self) -> Self {
        self.x_scale = Scale::Log;
        self
    }

    pub fn log_y(mut self) -> Self {
        self.y_scale = Scale::Log;
        self
    }

    pub fn series(mut self, s: Series) -> Self {
        self.series.push(s);
        self
    }

    pub fn hline(mut self, y: f64, label: impl Into<String>) -> Self {
        self.hlines.push((y, label.into()));
        self
    }

    fn range(&self, pick: impl Fn(&(f64, f64)) -> f64, scale: Scale, extra: &[f64]) -> (f64, f64) {
        let vals = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(&pick))
            .chain(extra.iter().copied())
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0));
        let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if !lo.is_finite() {
            return (1.0, 10.0);
        }
        match scale {
            Scale::Log => {
                let lo = 10f64.powf(lo.log10().floor());
                let hi = 10f64.powf(hi.log10().ceil());
                if hi <= lo { (lo, lo * 10.0) } else { (lo, hi) }
            }
            Scale::Linear => {
                let lo = lo.min(0.0);
                let pad = (hi - lo).abs() * 0.05;
                if hi <= lo { (lo, lo + 1.0) } else { (lo, hi + pad) }
            }
        }
    }

    /// Render to an SVG string, 720x440.
    pub fn to_svg(&self) -> String {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (720, 440)).into_drawing_area();
            self.draw(&root).expect("drawing into a string cannot fail");
            root.present().expect("presenting into a string cannot fail");
        }
        svg
    }

    fn draw(&self, root: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let hl: Vec<f64> = self.hlines.iter().map(|h| h.0).collect();
        let (x0, x1) = self.range(|p| p.0, self.x_scale, &[]);
        let (y0, y1) = self.range(|p| p.1, self.y_scale, &hl);
        let mut builder = ChartBuilder::on(root);
        builder
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70);
        // Four axis combinations, one drawing routine: plotters' coordinate types differ per scale.
        match (self.x_scale, self.y_scale) {
            (Scale::Linear, Scale::Linear) => self.finish(builder.build_cartesian_2d(x0..x1, y0..y1).map_err(err)?),
            (Scale::Log, Scale::Linear) => self.finish(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1).map_err(err)?),
            (Scale::Linear, Scale::Log) => self.finish(builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale()).map_err(err)?),
            (Scale::Log, Scale::Log) => {
                self.finish(builder.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale()).map_err(err)?)
            }
        }
    }

    fn finish<'a, X, Y>(
        &self,
        mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    ) -> Result<(), String>
    where
        X: plotters::coord::ranged1d::Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
        Y: plotters::coord::ranged1d::Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        let (xr, _) = (chart.x_range(), chart.y_range());
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| short_number(*v))
            .y_label_formatter(&|v| short_number(*v))
            .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
            .draw().map_err(err)?;
        for (i, s) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
            let style = color.stroke_width(2);
            let anno = if s.dashed {
                chart.draw_series(DashedLineSeries::new(pts, 6, 4, style)).map_err(err)?
            } else {
                chart.draw_series(LineSeries::new(pts, style)).map_err(err)?
            };
            anno.label(s.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        }
        for (y, label) in &self.hlines {
            let grey = RGBColor(0x64, 0x74, 0x8B);
            chart
                .draw_series(DashedLineSeries::new(vec![(xr.start, *y), (xr.end, *y)], 3, 3, grey.stroke_width(1)))
                .map_err(err)?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], grey.stroke_width(1)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(0xCB, 0xD5, 0xE1))
            .position(SeriesLabelPosition::UpperLeft)
            .draw().map_err(err)?;
        Ok(())
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Axis labels: `100k`, `1M`, `0.001`, `64`.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 1e9 {
        format!("{}G", crate::units::fmt_sig(v / 1e9, 3))
    } else if a >= 1e6 {
        format!("{}M", crate::units::fmt_sig(v / 1e6, 3))
    } else if a >= 1e4 {
        format!("{}k", crate::units::fmt_sig(v / 1e3, 3))
    } else if a == 0.0 {
        "0".into()
    } else if a < 1e-3 {
        format!("{v:e}")
    } else {
        crate::units::fmt_sig(v, 3)
    };
    // "1.00k" reads worse than "1k".
    if s.contains('.') {
        let (num, suffix) = s.split_at(s.find(|c: char| c.is_alphabetic()).unwrap_or(s.len()));
        let num = num.trim_end_matches('0').trim_end_matches('.');
        format!("{num}{suffix}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_is_deterministic_and_has_legend() {
        let p = LinePlot::new("t", "p", "speedup")
            .log_x()
            .log_y()
            .series(Series::new("ring", vec![(1.0, 1.0), (10.0, 8.0), (100.0, 40.0)]))
            .hline(50.0, "limit");
        let a = p.to_svg();
        assert_eq!(a, p.to_svg());
        assert!(a.starts_with("<svg"));
        assert!(a.contains("ring"));
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(100_000.0), "100k");
        assert_eq!(short_number(1e6), "1M");
        assert_eq!(short_number(0.5), "0.5");
        assert_eq!(short_number(1e-10), "1e-10");
    }
}
