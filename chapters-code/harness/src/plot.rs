//! SVG plots with plotters: line/point series on linear or logarithmic axes, and
//! latency distributions. Text is laid out with plotters' built-in estimate, so no
//! system fonts are needed and the same data always gives the same SVG.

use crate::fmt::{fmt_ns, sig3};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// How axis tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Values are nanoseconds: `1.2 µs`.
    Nanos,
    /// Plain numbers with three significant digits.
    Number,
    /// Fractions shown as percentages.
    Percent,
    /// Bytes: `9.5 KiB`.
    Bytes,
}

impl Unit {
    fn fmt(self, v: f64) -> String {
        match self {
            Unit::Nanos => trim_zeros(&fmt_ns(v)),
            Unit::Number => {
                if v.abs() >= 1e4 && v.fract() == 0.0 {
                    crate::fmt::fmt_count(v as u64)
                } else {
                    sig3(v)
                }
            }
            Unit::Percent => format!("{}%", sig3(v * 100.0)),
            Unit::Bytes => trim_zeros(&crate::fmt::fmt_bytes(v)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Linear,
    Log,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Draw markers at the points as well as the line.
    pub markers: bool,
    /// Vertical interval bars: (x, low, high).
    pub bars: Vec<(f64, f64, f64)>,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            markers: true,
            bars: Vec::new(),
        }
    }

    /// Medians over rounds at each x, with their intervals drawn as bars.
    pub fn estimates(
        name: impl Into<String>,
        points: Vec<(f64, crate::stats::Estimate)>,
    ) -> Series {
        let mut s = Series::new(name, points.iter().map(|(x, e)| (*x, e.median)).collect());
        s.bars = points.iter().map(|(x, e)| (*x, e.lo, e.hi)).collect();
        s
    }

    pub fn line_only(mut self) -> Series {
        self.markers = false;
        self
    }
}

#[derive(Debug, Clone)]
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_axis: Axis,
    pub y_axis: Axis,
    pub x_unit: Unit,
    pub y_unit: Unit,
    pub series: Vec<Series>,
    /// When set, x values 0, 1, 2, … are categories with these names.
    pub x_categories: Vec<String>,
    pub width: u32,
    pub height: u32,
}

/// A colour-blind-safe palette (Okabe and Ito), in a fixed order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// Series `i`'s colour: the palette's, in order. Past the palette's end a colour comes
/// round again with its blue channel one step apart per lap (no eye sees it), so that
/// every series keeps a stroke colour of its own in the SVG, by which its dash is
/// found ([`dash`]).
pub fn color(i: usize) -> RGBColor {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    let lap = (i / PALETTE.len()) as u8;
    RGBColor(r, g, if b >= 128 { b - lap } else { b + lap })
}

/// Dash patterns: series `i` gets the palette's colour `i` and dash `i` (solid,
/// dashed, dotted, dash-dot, then round again), so neighbours differ in dash as well as
/// colour, and a reader who cannot tell the colours apart still tells two lines apart.
const DASHES: [&str; 4] = ["", "9,4", "2,3", "9,3,2,3"];

/// Series `i`'s dash pattern (`""`: solid).
pub fn dash(i: usize) -> &'static str {
    DASHES[(i + i / PALETTE.len()) % DASHES.len()]
}

/// Gives every data line and legend swatch of series `i` its dash: plotters draws
/// solid lines only, so the SVG's polylines of each series' own stroke colour, drawn
/// 2 or 3 wide (a line, a swatch; interval bars are 1 wide and stay solid), get a
/// `stroke-dasharray`.
fn with_dashes(svg: String, series: usize) -> String {
    let mut out = svg;
    for i in 0..series {
        let d = dash(i);
        if d.is_empty() {
            continue;
        }
        let c = color(i);
        let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        for width in ["2", "3"] {
            let from = format!("{stroke} stroke-width=\"{width}\"");
            let to = format!("{from} stroke-dasharray=\"{d}\"");
            out = out.replace(&from, &to);
        }
    }
    out
}

fn bounds(values: impl Iterator<Item = f64>, axis: Axis) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (axis == Axis::Linear || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        return None;
    }
    Some(match axis {
        Axis::Log => {
            let (lo, hi) = if lo == hi {
                (lo / 2.0, hi * 2.0)
            } else {
                (lo, hi)
            };
            (lo / 1.25, hi * 1.25)
        }
        Axis::Linear => {
            let pad = if hi > lo {
                (hi - lo) * 0.05
            } else {
                hi.abs().max(1.0) * 0.1
            };
            let lo = if lo >= 0.0 && lo - pad < 0.0 {
                0.0
            } else {
                lo - pad
            };
            (lo, hi + pad)
        }
    })
}

/// `2.00 µs` → `2 µs`, `2.50 µs` → `2.5 µs`: tick labels read better without padding.
fn trim_zeros(s: &str) -> String {
    let (num, unit) = s.split_once(' ').unwrap_or((s, ""));
    let num = if num.contains('.') {
        num.trim_end_matches('0').trim_end_matches('.')
    } else {
        num
    };
    if unit.is_empty() {
        num.to_string()
    } else {
        format!("{num} {unit}")
    }
}

const LEGEND_ROW: u32 = 20;

/// Tick positions for a logarithmic axis: each power of ten in range, and 2× and 5×
/// steps too when the range spans fewer than three decades; for bytes, powers of two
/// (every second or fourth one on wide ranges).
fn log_ticks((lo, hi): (f64, f64), unit: Unit) -> Vec<f64> {
    if unit == Unit::Bytes {
        let (a, b) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
        let step = ((b - a) / 8 + 1).max(1);
        return (a..=b)
            .filter(|e| e % step == 0)
            .map(|e| 2f64.powi(e))
            .collect();
    }
    let decades = (hi / lo).log10();
    let steps: &[f64] = if decades < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    let mut p = 10f64.powf(lo.log10().floor());
    while p <= hi {
        for s in steps {
            let t = p * s;
            if t >= lo && t <= hi {
                ticks.push(t);
            }
        }
        p *= 10.0;
    }
    ticks
}

impl Plot {
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Plot {
        Plot {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_axis: Axis::Linear,
            y_axis: Axis::Linear,
            x_unit: Unit::Number,
            y_unit: Unit::Number,
            series: Vec::new(),
            x_categories: Vec::new(),
            width: 760,
            height: 440,
        }
    }

    pub fn x(mut self, axis: Axis, unit: Unit) -> Plot {
        self.x_axis = axis;
        self.x_unit = unit;
        self
    }

    pub fn y(mut self, axis: Axis, unit: Unit) -> Plot {
        self.y_axis = axis;
        self.y_unit = unit;
        self
    }

    /// Names the x positions 0, 1, 2, … (a linear axis with one tick per category).
    pub fn x_categories<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Plot {
        self.x_axis = Axis::Linear;
        self.x_categories = names.into_iter().map(Into::into).collect();
        self
    }

    pub fn series(mut self, s: Series) -> Plot {
        if !s.points.is_empty() {
            self.series.push(s);
        }
        self
    }

    /// Renders to an SVG string fit to inline in Markdown (no blank lines).
    pub fn to_svg(&self) -> anyhow::Result<String> {
        let xs = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
        };
        let ys = || {
            self.series.iter().flat_map(|s| {
                s.points
                    .iter()
                    .map(|p| p.1)
                    .chain(s.bars.iter().flat_map(|b| [b.1, b.2]))
            })
        };
        let (Some(mut xb), Some(yb)) = (bounds(xs(), self.x_axis), bounds(ys(), self.y_axis))
        else {
            anyhow::bail!("the plot `{}` has no data points", self.title);
        };
        if !self.x_categories.is_empty() {
            xb = (-0.3, self.x_categories.len() as f64 - 0.7);
        }
        // The legend goes under the chart, never over the data: one or two columns.
        let longest = self
            .series
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        let columns = if longest > 44 { 1 } else { 2 };
        let rows = self.series.len().div_ceil(columns) as u32;
        let legend_h = if rows == 0 { 0 } else { rows * LEGEND_ROW + 12 };
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (self.width, self.height + legend_h))
                .into_drawing_area();
            root.fill(&WHITE)?;
            let (chart, legend) = root.split_vertically(self.height);
            let (xu, yu) = (self.x_unit, self.y_unit);
            let log =
                |b: (f64, f64), u: Unit| (b.0..b.1).log_scale().with_key_points(log_ticks(b, u));
            match (self.x_axis, self.y_axis) {
                (Axis::Linear, Axis::Linear) => self.draw(&chart, xb.0..xb.1, yb.0..yb.1)?,
                (Axis::Log, Axis::Linear) => self.draw(&chart, log(xb, xu), yb.0..yb.1)?,
                (Axis::Linear, Axis::Log) => self.draw(&chart, xb.0..xb.1, log(yb, yu))?,
                (Axis::Log, Axis::Log) => self.draw(&chart, log(xb, xu), log(yb, yu))?,
            }
            let col_w = (self.width as i32 - 100) / columns as i32;
            for (i, series) in self.series.iter().enumerate() {
                let (col, row) = ((i % columns) as i32, (i / columns) as i32);
                let x = 84 + col * col_w;
                let y = 6 + row * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
                let c = color(i);
                legend.draw(&PathElement::new(
                    vec![(x, y), (x + 22, y)],
                    c.stroke_width(3),
                ))?;
                if series.markers {
                    legend.draw(&Circle::new((x + 11, y), 3, c.filled()))?;
                }
                legend.draw(&Text::new(
                    series.name.clone(),
                    (x + 30, y - 7),
                    ("sans-serif", 13).into_font(),
                ))?;
            }
            root.present()?;
        }
        let title = self.title.replace('&', "&amp;").replace('<', "&lt;");
        let svg = with_dashes(svg, self.series.len());
        let svg = svg
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n")
            .replacen(
                "<svg ",
                &format!("<svg role=\"img\" aria-label=\"{title}\" "),
                1,
            );
        Ok(svg)
    }

    fn draw<DB, X, Y>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
        x: X,
        y: Y,
    ) -> anyhow::Result<()>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(78)
            .build_cartesian_2d(x, y)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let (xu, yu) = (self.x_unit, self.y_unit);
        let cats = &self.x_categories;
        let x_fmt = |v: &f64| {
            if cats.is_empty() {
                xu.fmt(*v)
            } else if (v - v.round()).abs() < 1e-6 && v.round() >= 0.0 {
                cats.get(v.round() as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        if !cats.is_empty() {
            mesh.x_labels(cats.len() * 2 + 1);
        }
        mesh.x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&|v| yu.fmt(*v))
            .light_line_style(WHITE)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (i, s) in self.series.iter().enumerate() {
            let c = color(i);
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|&(px, py)| {
                    px.is_finite()
                        && py.is_finite()
                        && (self.x_axis == Axis::Linear || px > 0.0)
                        && (self.y_axis == Axis::Linear || py > 0.0)
                })
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let bars = s.bars.iter().filter(|&&(bx, lo, hi)| {
                bx.is_finite()
                    && lo.is_finite()
                    && hi.is_finite()
                    && (self.x_axis == Axis::Linear || bx > 0.0)
                    && (self.y_axis == Axis::Linear || lo > 0.0)
            });
            chart
                .draw_series(bars.map(|&(bx, lo, hi)| {
                    PathElement::new(vec![(bx, lo), (bx, hi)], c.stroke_width(1))
                }))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if s.markers {
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
        }
        Ok(())
    }
}

/// A distribution plot from precomputed quantile curves, (quantile, value) pairs as
/// [`crate::stats::Dist::curve`] makes them: x = the value (log scale, nanoseconds),
/// y = the fraction of samples at or below it (a CDF), one curve per series.
pub fn quantile_cdf<'a>(
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: impl IntoIterator<Item = (String, &'a [(f64, f64)])>,
) -> Plot {
    let mut plot = Plot::new(title, x_label, y_label)
        .x(Axis::Log, Unit::Nanos)
        .y(Axis::Linear, Unit::Percent);
    for (name, curve) in curves {
        let pts = curve.iter().map(|&(q, v)| (v, q)).collect();
        plot = plot.series(Series::new(name, pts).line_only());
    }
    plot
}

/// A latency distribution plot from pooled distributions (nanoseconds): one CDF per
/// series.
pub fn dist_cdf<'a>(
    title: &str,
    x_label: &str,
    series: impl IntoIterator<Item = (String, &'a crate::stats::Dist)>,
) -> Plot {
    let curves: Vec<(String, Vec<(f64, f64)>)> = series
        .into_iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(n, d)| (n, d.curve(200)))
        .collect();
    quantile_cdf(
        title,
        x_label,
        "fraction of samples ≤ value",
        curves.iter().map(|(n, c)| (n.clone(), c.as_slice())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_is_deterministic_and_has_points() {
        let p = Plot::new("t", "x", "y")
            .x(Axis::Log, Unit::Nanos)
            .series(Series::new("a", vec![(1e3, 1.0), (1e6, 2.0), (1e9, 3.0)]));
        let a = p.to_svg().unwrap();
        let b = p.to_svg().unwrap();
        assert_eq!(a, b);
        assert!(a.starts_with("<svg"), "{}", &a[..50]);
        assert!(a.contains("<circle"));
        assert!(a.contains("<polyline"));
        assert!(!a.contains("\n\n"));
        assert!(a.contains("µs") || a.contains("ms"));
    }

    /// The legend's swatches, as a reader sees them: (colour, dash) of every line 3
    /// wide with two points.
    fn swatches(svg: &str) -> Vec<(String, String)> {
        svg.split("<polyline")
            .skip(1)
            .filter(|el| el.contains("stroke-width=\"3\""))
            .map(|el| {
                let attr = |name: &str| {
                    el.split(&format!("{name}=\""))
                        .nth(1)
                        .and_then(|t| t.split('"').next())
                        .unwrap_or("")
                        .to_string()
                };
                (attr("stroke"), attr("stroke-dasharray"))
            })
            .collect()
    }

    #[test]
    fn no_two_series_look_alike() {
        for n in [2usize, 3, 8, 12] {
            let mut p = Plot::new("t", "x", "y");
            for i in 0..n {
                let pts = vec![(1.0, i as f64), (2.0, i as f64 + 1.0), (3.0, 0.5)];
                p = p.series(Series::new(format!("s{i}"), pts).line_only());
            }
            let svg = p.to_svg().unwrap();
            let keys = swatches(&svg);
            assert_eq!(keys.len(), n, "one swatch per series");
            let mut unique = keys.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), n, "{n} series: two swatches alike: {keys:?}");
            // Neighbours differ in dash too, for a reader who cannot tell the colours
            // apart.
            assert!(keys.windows(2).all(|w| w[0].1 != w[1].1), "{keys:?}");
            // The data lines carry the same dash as their swatch.
            for (i, (_, d)) in keys.iter().enumerate().filter(|(_, k)| !k.1.is_empty()) {
                assert!(
                    svg.contains(&format!("stroke-width=\"2\" stroke-dasharray=\"{d}\"")),
                    "series {i}'s line is not dashed like its swatch"
                );
            }
        }
    }

    #[test]
    fn log_ticks_are_round_numbers() {
        assert_eq!(
            log_ticks((800.0, 1.2e6), Unit::Nanos),
            vec![1e3, 1e4, 1e5, 1e6]
        );
        assert_eq!(
            log_ticks((1.5, 60.0), Unit::Number),
            vec![2.0, 5.0, 10.0, 20.0, 50.0]
        );
        assert_eq!(
            log_ticks((300.0, 5000.0), Unit::Bytes),
            vec![512.0, 1024.0, 2048.0, 4096.0]
        );
        assert_eq!(Unit::Nanos.fmt(2000.0), "2 µs");
        assert_eq!(Unit::Nanos.fmt(2500.0), "2.5 µs");
        assert_eq!(Unit::Nanos.fmt(100.0), "100 ns");
    }

    #[test]
    fn empty_plot_is_an_error_not_a_panic() {
        let p = Plot::new("empty", "x", "y").series(Series::new("none", vec![]));
        assert!(p.to_svg().is_err());
    }

    #[test]
    fn cdf_has_one_curve_per_series() {
        let a = crate::stats::Dist::from_samples([100.0, 200.0, 300.0]);
        let b = crate::stats::Dist::from_samples([1e4; 5]);
        let empty = crate::stats::Dist::new();
        let p = dist_cdf(
            "cdf",
            "latency",
            [
                ("a".to_string(), &a),
                ("b".to_string(), &b),
                ("none".to_string(), &empty),
            ],
        );
        assert_eq!(p.series.len(), 2);
        assert!(p.to_svg().unwrap().matches("<polyline").count() >= 2);
    }
}
