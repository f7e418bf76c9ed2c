//! Speedup curves as a standalone SVG, hand-written, for a sweep's
//! [`Summary`]: one curve per site, x = the site's virtual speedup (%),
//! y = the change in progress rate against the site's 0% cells (the
//! median over rounds, `Line::change_median`; 0 at 0% by definition).
//!
//! Each measured speedup has a marker and a whisker over the rounds'
//! interval (`change_lo … change_hi`). A marker is hollow when its change
//! is noise (`Line::noise`: below the A/A noise floor, or the interval
//! contains 0); a site whose every change is noise is drawn dashed and
//! faded, and marked `~` in the legend. The noise floor itself is a grey
//! band around the dashed y = 0 line.

use super::report::{Line, Summary};
use std::fmt::Write as _;

/// Distinct colors, readable on white; more sites go round the hue circle.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];

fn color(i: usize) -> String {
    match PALETTE.get(i) {
        Some(c) => (*c).to_string(),
        None => format!("hsl({:.0},65%,42%)", (i as f64 * 137.508) % 360.0),
    }
}

/// Escapes text for XML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Not allowed in XML 1.0 at all.
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Values further out than this (in %) are clamped: the plot stays finite
/// and readable whatever the data.
const CLAMP_PCT: f64 = 1e6;

/// A change as a plottable percentage.
fn pct(x: Option<f64>) -> Option<f64> {
    x.map(|x| x * 100.0)
        .filter(|x| x.is_finite())
        .map(|x| x.clamp(-CLAMP_PCT, CLAMP_PCT))
}

/// A linear axis with round ticks.
struct Axis {
    lo: f64,
    hi: f64,
    step: f64,
}

impl Axis {
    /// Covers `[lo, hi]` (`lo < hi`) with about `target` round steps.
    fn new(lo: f64, hi: f64, target: f64) -> Axis {
        let raw = (hi - lo) / target;
        let mag = 10f64.powf(raw.log10().floor());
        let norm = raw / mag;
        let nice = [1.0, 2.0, 2.5, 5.0, 10.0]
            .into_iter()
            .find(|m| norm <= m + 1e-9)
            .unwrap_or(10.0);
        let step = nice * mag;
        Axis {
            lo: (lo / step + 1e-9).floor() * step,
            hi: (hi / step - 1e-9).ceil() * step,
            step,
        }
    }

    fn ticks(&self) -> Vec<f64> {
        let first = (self.lo / self.step).round() as i64;
        let last = (self.hi / self.step).round() as i64;
        (first..=last).map(|k| k as f64 * self.step).collect()
    }

    /// Maps a value to `[from, to]` (pixels).
    fn map(&self, v: f64, from: f64, to: f64) -> f64 {
        from + (v - self.lo) / (self.hi - self.lo) * (to - from)
    }

    /// Decimals the tick labels need.
    fn decimals(&self) -> usize {
        (0..4)
            .find(|&d| {
                let scaled = self.step * 10f64.powi(d as i32);
                (scaled - scaled.round()).abs() < 1e-6
            })
            .unwrap_or(4)
    }
}

/// A percentage label: `0%`, `+12.5%`, `−5%`.
fn label(v: f64, decimals: usize, signed: bool) -> String {
    let text = format!("{:.*}", decimals, v.abs());
    if text.trim_start_matches(['0', '.']).is_empty() {
        "0%".to_string()
    } else if v < 0.0 {
        format!("\u{2212}{text}%")
    } else if signed {
        format!("+{text}%")
    } else {
        format!("{text}%")
    }
}

/// One site's curve.
struct Curve<'a> {
    name: &'a str,
    lines: Vec<&'a Line>,
    /// Every measured change is noise, or none was measured.
    noisy: bool,
    measured: bool,
}

fn curves(summary: &Summary) -> Vec<Curve<'_>> {
    let mut out: Vec<Curve> = Vec::new();
    for line in &summary.lines {
        match out.iter_mut().find(|c| c.name == line.site) {
            Some(c) => c.lines.push(line),
            None => out.push(Curve {
                name: &line.site,
                lines: vec![line],
                noisy: false,
                measured: false,
            }),
        }
    }
    for c in &mut out {
        c.lines.sort_by_key(|l| l.speedup_pct);
        let measured: Vec<&&Line> = c
            .lines
            .iter()
            .filter(|l| l.speedup_pct != 0 && pct(l.change_median).is_some())
            .collect();
        c.measured = !measured.is_empty();
        c.noisy = measured.iter().all(|l| l.noise);
    }
    out
}

// Layout, in pixels.
const WIDTH_MIN: f64 = 760.0;
const HEIGHT_MIN: f64 = 460.0;
const LEFT: f64 = 72.0;
const TOP: f64 = 64.0;
const BOTTOM: f64 = 56.0;
const PLOT_W: f64 = 480.0;
const ROW: f64 = 20.0;
/// Gap between the frame and the first and last speedups.
const INSET: f64 = 14.0;

/// `11,840`: a rate rounded, with thousands separators.
fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return "?".to_string();
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < -0.5 {
        format!("\u{2212}{out}")
    } else {
        out
    }
}

fn f(v: f64) -> String {
    // Coordinates are finite by construction; keep the file valid anyway.
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "0".to_string()
    }
}

/// Where everything goes: the canvas, the plot area and both axes.
struct Frame {
    width: f64,
    height: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    xaxis: Axis,
    yaxis: Axis,
}

impl Frame {
    /// Sizes the canvas for the legend's rows and longest name, and scales
    /// x from 0 to the largest speedup, y over every median and interval
    /// end, always with 0 and at least ±1%.
    fn new(summary: &Summary, curves: &[Curve]) -> Frame {
        let longest = curves
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0);
        let legend_w = (70.0 + 7.2 * longest as f64).clamp(280.0, 440.0);
        let width = (LEFT + PLOT_W + 24.0 + legend_w).max(WIDTH_MIN);
        let legend_h = (curves.len() as f64 + 5.0) * ROW;
        let height = (TOP + legend_h + BOTTOM).max(HEIGHT_MIN);
        let max_pct = summary
            .lines
            .iter()
            .map(|l| f64::from(l.speedup_pct))
            .fold(0.0, f64::max);
        let xaxis = Axis::new(0.0, if max_pct > 0.0 { max_pct } else { 100.0 }, 5.0);
        let (lo, hi) = summary
            .lines
            .iter()
            .filter(|l| l.speedup_pct != 0)
            .flat_map(|l| [pct(l.change_median), pct(l.change_lo), pct(l.change_hi)])
            .flatten()
            .fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let pad = (hi - lo) * 0.05;
        let yaxis = Axis::new((lo - pad).min(-1.0), (hi + pad).max(1.0), 6.0);
        Frame {
            width,
            height,
            x0: LEFT,
            x1: LEFT + PLOT_W,
            y0: height - BOTTOM,
            y1: TOP,
            xaxis,
            yaxis,
        }
    }

    /// A speedup's x; markers at 0% and at the largest speedup stay inside
    /// the frame.
    fn px(&self, v: f64) -> f64 {
        self.xaxis.map(v, self.x0 + INSET, self.x1 - INSET)
    }

    fn py(&self, v: f64) -> f64 {
        self.yaxis.map(v, self.y0, self.y1)
    }
}

/// Renders `summary` as an SVG document titled `title`.
pub(crate) fn svg(summary: &Summary, title: &str) -> String {
    let curves = curves(summary);
    let frame = Frame::new(summary, &curves);
    let mut s = String::new();
    heading(&mut s, &frame, summary, title);
    grid(&mut s, &frame, summary.noise_floor);
    axes(&mut s, &frame);
    if !curves.iter().any(|c| c.measured) {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#888">no reliable measurement to plot</text>"##,
            f((frame.x0 + frame.x1) / 2.0),
            f(frame.py(0.0) - 12.0)
        );
    }
    // Sites side by side (dodged) where they share a speedup.
    let n = curves.len();
    let dodge = if n > 1 {
        (24.0 / (n - 1) as f64).min(4.0)
    } else {
        0.0
    };
    for (i, c) in curves.iter().enumerate() {
        let dx = (i as f64 - (n as f64 - 1.0) / 2.0) * dodge;
        curve(&mut s, &frame, c, &color(i), dx);
    }
    legend(&mut s, &frame, &curves);
    let _ = writeln!(s, "</svg>");
    s
}

/// The document's opening, background, title and the line under it.
fn heading(s: &mut String, frame: &Frame, summary: &Summary, title: &str) {
    let (width, height) = (frame.width, frame.height);
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif" font-size="12" fill="#222">"##,
        w = f(width),
        h = f(height)
    );
    let _ = writeln!(s, "<title>{}</title>", esc(title));
    let _ = writeln!(
        s,
        r##"<rect width="{}" height="{}" fill="#fff"/>"##,
        f(width),
        f(height)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="26" font-size="16" font-weight="bold">{}</text>"#,
        f(LEFT),
        esc(title)
    );
    let mut sub = format!(
        "baseline {}/s (pooled 0% cells)",
        thousands(summary.baseline_rate)
    );
    if let Some(floor) = summary.noise_floor {
        let _ = write!(sub, " · noise floor ±{:.1}%", floor * 100.0);
    }
    let _ = write!(
        sub,
        " · {}",
        crate::output::count(summary.cells as u64, "cell")
    );
    if summary.unreliable_cells > 0 {
        let _ = write!(sub, ", {} unreliable (left out)", summary.unreliable_cells);
    }
    let _ = writeln!(
        s,
        r##"<text x="{}" y="46" fill="#555">{}</text>"##,
        f(LEFT),
        esc(&sub)
    );
}

/// The grid lines at every tick, the noise floor's band and the dashed
/// y = 0 line.
fn grid(s: &mut String, frame: &Frame, noise_floor: Option<f64>) {
    let Frame {
        x0,
        x1,
        y0,
        y1,
        ref xaxis,
        ref yaxis,
        ..
    } = *frame;
    let px = |v| frame.px(v);
    let py = |v| frame.py(v);
    let _ = writeln!(s, r##"<g stroke="#e6e6e6" stroke-width="1">"##);
    for t in xaxis.ticks() {
        let _ = writeln!(
            s,
            r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}"/>"#,
            f(y0),
            f(y1),
            x = f(px(t))
        );
    }
    for t in yaxis.ticks() {
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}"/>"#,
            f(x0),
            f(x1),
            y = f(py(t))
        );
    }
    let _ = writeln!(s, "</g>");
    if let Some(floor) = noise_floor.and_then(|x| pct(Some(x))) {
        let top = py(floor.min(yaxis.hi));
        let bottom = py((-floor).max(yaxis.lo));
        if bottom > top {
            let _ = writeln!(
                s,
                r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#000" fill-opacity="0.06"><title>noise floor ±{:.1}%</title></rect>"##,
                f(x0),
                f(top),
                f(PLOT_W),
                f(bottom - top),
                floor
            );
        }
    }
    let _ = writeln!(
        s,
        r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#555" stroke-width="1" stroke-dasharray="5 4"/>"##,
        f(x0),
        f(x1),
        y = f(py(0.0))
    );
}

/// The frame's two axes with their ticks, tick labels and titles.
fn axes(s: &mut String, frame: &Frame) {
    let Frame {
        x0,
        x1,
        y0,
        y1,
        ref xaxis,
        ref yaxis,
        ..
    } = *frame;
    let px = |v| frame.px(v);
    let py = |v| frame.py(v);
    let _ = writeln!(
        s,
        r##"<g stroke="#333" stroke-width="1"><line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"/><line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/>"##,
        x0 = f(x0),
        x1 = f(x1),
        y0 = f(y0),
        y1 = f(y1)
    );
    for t in xaxis.ticks() {
        let _ = writeln!(
            s,
            r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}"/>"#,
            f(y0),
            f(y0 + 5.0),
            x = f(px(t))
        );
    }
    for t in yaxis.ticks() {
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}"/>"#,
            f(x0 - 5.0),
            f(x0),
            y = f(py(t))
        );
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(s, r#"<g text-anchor="middle">"#);
    for t in xaxis.ticks() {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{}</text>"#,
            f(px(t)),
            f(y0 + 19.0),
            label(t, xaxis.decimals(), false)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}">virtual speedup of the site</text>"#,
        f((x0 + x1) / 2.0),
        f(y0 + 42.0)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate({} {}) rotate(-90)">change in progress rate</text>"#,
        f(18.0),
        f((y0 + y1) / 2.0)
    );
    let _ = writeln!(s, "</g>");
    let _ = writeln!(s, r#"<g text-anchor="end">"#);
    for t in yaxis.ticks() {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{}</text>"#,
            f(x0 - 8.0),
            f(py(t) + 4.0),
            label(t, yaxis.decimals(), true)
        );
    }
    let _ = writeln!(s, "</g>");
}

/// One site's polyline, whiskers and markers, each with a tooltip.
fn curve(s: &mut String, frame: &Frame, c: &Curve, col: &str, dx: f64) {
    let px = |v| frame.px(v);
    let py = |v| frame.py(v);
    let style = if c.noisy {
        r#" stroke-dasharray="6 4" opacity="0.5""#
    } else {
        ""
    };
    let _ = writeln!(s, r#"<g stroke="{col}" fill="{col}"{style}>"#);
    let mut points: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    points.extend(
        c.lines
            .iter()
            .filter(|l| l.speedup_pct != 0)
            .filter_map(|l| Some((f64::from(l.speedup_pct), pct(l.change_median)?))),
    );
    let coords: Vec<String> = points
        .iter()
        .map(|(x, y)| format!("{},{}", f(px(*x) + dx), f(py(*y))))
        .collect();
    let _ = writeln!(
        s,
        r#"<polyline points="{}" fill="none" stroke-width="2" stroke-linejoin="round"><title>{}</title></polyline>"#,
        coords.join(" "),
        esc(c.name)
    );
    for l in &c.lines {
        let x = px(f64::from(l.speedup_pct)) + dx;
        if l.speedup_pct == 0 {
            // The baseline: drawn only if measured.
            if l.n > 0 && l.rate_median.is_finite() {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{}" cy="{}" r="3"><title>{} at 0%: {}/s, n={}</title></circle>"#,
                    f(x),
                    f(py(0.0)),
                    esc(c.name),
                    thousands(l.rate_median),
                    l.n
                );
            }
            continue;
        }
        let Some(m) = pct(l.change_median) else {
            continue;
        };
        if let (Some(a), Some(b)) = (pct(l.change_lo), pct(l.change_hi)) {
            let (ya, yb) = (py(a), py(b));
            let _ = writeln!(
                s,
                r#"<path d="M{x} {ya}V{yb}M{l} {ya}H{r}M{l} {yb}H{r}" fill="none" stroke-width="1.2" stroke-dasharray="none"/>"#,
                x = f(x),
                ya = f(ya),
                yb = f(yb),
                l = f(x - 3.5),
                r = f(x + 3.5)
            );
        }
        let tip = format!(
            "{} at {}%: {} ({} … {}), coz {}, n={}{}",
            c.name,
            l.speedup_pct,
            label(m, 1, true),
            pct(l.change_lo).map_or("?".into(), |v| label(v, 1, true)),
            pct(l.change_hi).map_or("?".into(), |v| label(v, 1, true)),
            pct(l.coz_pooled).map_or("—".into(), |v| label(v, 1, true)),
            l.n,
            if l.noise { ", ~ noise" } else { "" }
        );
        let fill = if l.noise { r##" fill="#fff""## } else { "" };
        let _ = writeln!(
            s,
            r#"<circle cx="{}" cy="{}" r="4"{fill} stroke-width="1.5" stroke-dasharray="none"><title>{}</title></circle>"#,
            f(x),
            f(py(m)),
            esc(&tip)
        );
    }
    let _ = writeln!(s, "</g>");
}

/// The legend to the right of the plot: one row per site, then what the
/// marks mean.
fn legend(s: &mut String, frame: &Frame, curves: &[Curve]) {
    let lx = frame.x1 + 24.0;
    let mut ly = TOP + 6.0;
    let _ = writeln!(s, "<g>");
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" font-weight="bold">site</text>"#,
        f(lx),
        f(ly)
    );
    ly += ROW;
    for (i, c) in curves.iter().enumerate() {
        let col = color(i);
        let style = if c.noisy {
            r#" stroke-dasharray="6 4" opacity="0.5""#
        } else {
            ""
        };
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{col}" stroke-width="2"{style}/>"#,
            f(lx),
            f(lx + 26.0),
            y = f(ly - 4.0)
        );
        let mark = if !c.measured {
            " (no data)"
        } else if c.noisy {
            " ~"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}">{}{}</text>"#,
            f(lx + 34.0),
            f(ly),
            esc(c.name),
            mark
        );
        ly += ROW;
    }
    ly += ROW / 2.0;
    let _ = writeln!(s, r##"<g font-size="11" fill="#555">"##);
    let _ = writeln!(
        s,
        r##"<circle cx="{}" cy="{}" r="4" fill="#555"/><text x="{}" y="{}">median change over rounds</text>"##,
        f(lx + 13.0),
        f(ly - 4.0),
        f(lx + 34.0),
        f(ly)
    );
    ly += ROW;
    let _ = writeln!(
        s,
        r##"<circle cx="{}" cy="{}" r="4" fill="#fff" stroke="#555" stroke-width="1.5"/><text x="{}" y="{}">~ noise: below the floor or 0 in range</text>"##,
        f(lx + 13.0),
        f(ly - 4.0),
        f(lx + 34.0),
        f(ly)
    );
    ly += ROW;
    let _ = writeln!(
        s,
        r##"<path d="M{x} {a}V{b}M{l} {a}H{r}M{l} {b}H{r}" stroke="#555" stroke-width="1.2" fill="none"/><text x="{}" y="{}">range over rounds</text>"##,
        f(lx + 34.0),
        f(ly),
        x = f(lx + 13.0),
        a = f(ly - 10.0),
        b = f(ly + 2.0),
        l = f(lx + 9.5),
        r = f(lx + 16.5)
    );
    let _ = writeln!(s, "</g>\n</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(site: &str, pct: u8, change: Option<(f64, f64, f64)>, noise: bool) -> Line {
        Line {
            site: site.to_string(),
            speedup_pct: pct,
            rate_median: 10_000.0,
            change_median: change.map(|c| c.0),
            change_lo: change.map(|c| c.1),
            change_hi: change.map(|c| c.2),
            coz_pooled: change.map(|c| 1.0 - 1.0 / (1.0 + c.0)),
            n: 5,
            unreliable: 0,
            no_visits: 0,
            ledger_warnings: 0,
            noise,
            visits_per_unit: None,
            visit_us: None,
            latency_ns_median: None,
            latency_change_median: None,
            latency_change_lo: None,
            latency_change_hi: None,
            latency_coz_pooled: None,
            latency_noise: false,
        }
    }

    fn summary(lines: Vec<Line>) -> Summary {
        Summary {
            lines,
            baseline_rate: 11_840.0,
            noise_floor: Some(0.018),
            latency_point: None,
            baseline_latency_ns: None,
            latency_noise_floor: None,
            fallback_share: 0.0,
            cells: 60,
            unreliable_cells: 2,
            ledger_errors: 0,
            ledger_warnings: 0,
        }
    }

    fn example() -> Summary {
        summary(vec![
            line("sqlite-query", 0, None, false),
            line("sqlite-query", 25, Some((0.099, 0.077, 0.121)), false),
            line("sqlite-query", 50, Some((0.233, 0.200, 0.266)), false),
            line("gzip-decode", 0, None, false),
            line("gzip-decode", 25, Some((0.04, 0.01, 0.06)), false),
            line("gzip-decode", 50, Some((0.07, -0.01, 0.12)), true),
            line("cache-lookup", 0, None, false),
            line("cache-lookup", 25, Some((-0.004, -0.02, 0.01)), true),
            line("cache-lookup", 50, Some((0.005, -0.019, 0.022)), true),
            Line {
                rate_median: f64::NAN,
                n: 0,
                ..line("http-respond", 0, None, false)
            },
            line("http-respond", 25, None, false),
            line("http-respond", 50, None, false),
        ])
    }

    /// A tiny XML checker: tags balance, attributes are quoted, entities
    /// are known. Returns the element names in document order.
    fn check_xml(doc: &str) -> Vec<String> {
        let mut stack: Vec<String> = Vec::new();
        let mut names = Vec::new();
        let mut rest = doc;
        let check_text = |text: &str| {
            for (i, _) in text.match_indices('&') {
                let entity = &text[i..];
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                        .iter()
                        .any(|e| entity.starts_with(e)),
                    "bad entity at {}",
                    &entity[..entity.len().min(12)]
                );
            }
            assert!(
                !text.contains('>') || text.trim().is_empty(),
                "stray > in {text:?}"
            );
        };
        if let Some(after) = rest.strip_prefix("<?xml") {
            let end = after.find("?>").expect("end of declaration");
            rest = &after[end + 2..];
        }
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open]);
            let close = rest[open..].find('>').expect("unclosed tag") + open;
            let tag = &rest[open + 1..close];
            assert!(!tag.contains('<'), "< inside a tag: {tag}");
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack.pop().expect("closing tag without opening");
                assert_eq!(top, name.trim(), "mismatched tags");
            } else {
                let self_closing = tag.ends_with('/');
                let body = tag.trim_end_matches('/');
                let name: String = body.chars().take_while(|c| !c.is_whitespace()).collect();
                assert!(!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()));
                // Attributes: name="value" pairs.
                let mut attrs = body[name.len()..].trim();
                while !attrs.is_empty() {
                    let eq = attrs.find("=\"").expect("quoted attribute");
                    let key = &attrs[..eq];
                    assert!(
                        key.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':'),
                        "{key}"
                    );
                    let value_end = attrs[eq + 2..].find('"').expect("closing quote") + eq + 2;
                    check_text(&attrs[eq + 2..value_end]);
                    attrs = attrs[value_end + 1..].trim_start();
                }
                names.push(name.clone());
                if !self_closing {
                    stack.push(name);
                }
            }
            rest = &rest[close + 1..];
        }
        assert!(rest.trim().is_empty(), "text after the root");
        assert!(stack.is_empty(), "unclosed: {stack:?}");
        assert_eq!(names.first().map(String::as_str), Some("svg"));
        names
    }

    /// Every number in a coordinate attribute parses and is finite.
    fn check_coordinates(doc: &str) {
        let mut count = 0;
        for attr in [
            " x=\"",
            " y=\"",
            " x1=\"",
            " y1=\"",
            " x2=\"",
            " y2=\"",
            " cx=\"",
            " cy=\"",
            " r=\"",
            " width=\"",
            " height=\"",
            " points=\"",
            " d=\"",
        ] {
            for (i, _) in doc.match_indices(attr) {
                let start = i + attr.len();
                let end = doc[start..].find('"').expect("quote") + start;
                for number in doc[start..end]
                    .split(|c: char| c == ',' || c.is_whitespace() || c.is_ascii_alphabetic())
                    .filter(|t| !t.is_empty())
                {
                    let v: f64 = number.parse().unwrap_or_else(|_| panic!("{attr}{number}"));
                    assert!(v.is_finite(), "{attr}{number}");
                    count += 1;
                }
            }
        }
        assert!(count > 50, "{count}");
        assert!(!doc.contains("NaN") && !doc.contains("inf"));
    }

    #[test]
    fn well_formed_with_one_curve_per_site() {
        let doc = svg(&example(), "ccc causal: asset-served");
        let names = check_xml(&doc);
        check_coordinates(&doc);
        assert_eq!(names.iter().filter(|n| *n == "polyline").count(), 4);
        for site in [
            "sqlite-query",
            "gzip-decode",
            "cache-lookup",
            "http-respond",
        ] {
            assert!(doc.contains(&format!(">{site}")), "{site}");
        }
        assert!(doc.contains("cache-lookup ~<"), "a noisy site is marked");
        assert!(doc.contains("http-respond (no data)"));
        assert!(!doc.contains("sqlite-query ~"));
        assert!(doc.contains("stroke-dasharray=\"5 4\""), "the y = 0 line");
        assert!(doc.contains(">+20%<"), "y ticks");
        assert!(doc.contains(">50%<"), "x ticks");
    }

    #[test]
    fn text_is_escaped() {
        let doc = svg(
            &summary(vec![
                line("a<b>&\"c\"", 0, None, false),
                line("a<b>&\"c\"", 50, Some((0.1, 0.05, 0.2)), false),
            ]),
            "R&D <profile> 'x'",
        );
        check_xml(&doc);
        assert!(doc.contains("a&lt;b&gt;&amp;&quot;c&quot;"));
        assert!(doc.contains("R&amp;D &lt;profile&gt; &apos;x&apos;"));
    }

    #[test]
    fn flat_and_missing_data_scale_sensibly() {
        // Every change ~0: the y axis still spans at least ±1%.
        let flat = summary(vec![
            line("x", 0, None, false),
            line("x", 25, Some((1e-6, -1e-6, 2e-6)), true),
            line("x", 50, Some((0.0, 0.0, 0.0)), true),
        ]);
        let doc = svg(&flat, "flat");
        check_xml(&doc);
        check_coordinates(&doc);
        assert!(doc.contains(">+1%<") || doc.contains(">+1.0%<"), "{doc}");
        assert!(doc.contains(">\u{2212}1%<") || doc.contains(">\u{2212}1.0%<"));

        // Only 0% lines, no noise floor, and an empty summary.
        let mut none = summary(vec![line("x", 0, None, false), line("y", 0, None, false)]);
        none.noise_floor = None;
        for s in [none, summary(Vec::new())] {
            let doc = svg(&s, "none");
            check_xml(&doc);
            assert!(doc.contains("no reliable measurement"));
            assert!(!doc.contains("NaN") && !doc.contains("inf"));
        }

        // Absurd values stay finite.
        let wild = summary(vec![
            line("x", 0, None, false),
            line("x", 50, Some((f64::INFINITY, f64::NAN, 1e300)), false),
            line("x", 100, Some((-0.5, -0.9, 5.0)), false),
        ]);
        let doc = svg(&wild, "wild");
        check_xml(&doc);
        check_coordinates(&doc);
    }

    #[test]
    fn many_sites_get_distinct_colors() {
        let lines: Vec<Line> = (0..14)
            .flat_map(|i| {
                let name = format!("site-{i}");
                [
                    line(&name, 0, None, false),
                    line(&name, 50, Some((i as f64 / 100.0, 0.0, 0.2)), false),
                ]
            })
            .collect();
        let doc = svg(&summary(lines), "many");
        check_xml(&doc);
        let colors: Vec<String> = (0..14).map(color).collect();
        for (i, c) in colors.iter().enumerate() {
            assert!(!colors[..i].contains(c), "{c}");
            assert!(doc.contains(&format!("stroke=\"{c}\"")));
        }
    }

    #[test]
    fn nice_axes() {
        let a = Axis::new(0.0, 50.0, 5.0);
        assert_eq!((a.lo, a.hi, a.step), (0.0, 50.0, 10.0));
        let a = Axis::new(-2.3, 27.0, 6.0);
        assert_eq!(a.step, 5.0);
        assert_eq!(a.ticks().first(), Some(&-5.0));
        assert_eq!(a.ticks().last(), Some(&30.0));
        assert_eq!(label(-5.0, 0, true), "\u{2212}5%");
        assert_eq!(label(0.0, 1, true), "0%");
        assert_eq!(label(2.5, 1, true), "+2.5%");
        assert_eq!(thousands(11_840.4), "11,840");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
    }
}
