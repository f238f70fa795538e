//! The self-contained HTML report: inline CSS, tables, and line charts drawn as inline SVG here
//! (no scripts, no fonts, no network), so the file can be mailed or archived as it is.

use std::fmt::Write as _;

use super::report::{Chart, Report};
use super::stats::fmt_size;

const PALETTE: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
    "#bcbd22", "#393b79", "#637939",
];

const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}\
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}\
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}\
td:first-child,th:first-child{text-align:left}h2{margin-top:2em;border-bottom:2px solid #ddd}\
.note{color:#555;margin:.2em 0}.err{color:#b00;font-weight:bold}svg{background:#fff;border:1px solid #ddd;margin:.5em 0}\
code{background:#f5f5f5;padding:0 3px}";

pub fn render(r: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>hyperseal benchmark</title><style>{CSS}</style></head><body>"
    );
    let _ = write!(h, "<h1>hyperseal benchmark ({} profile)</h1><table>", esc(r.profile));
    let m = &r.machine;
    let mut kv = |k: &str, v: &str| {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    };
    kv("hyperseal", r.version);
    kv("date", &r.date);
    kv("CPU", &m.cpu);
    kv("cores (available_parallelism)", &m.cores.to_string());
    kv("CPU features", &m.feature_line());
    kv("memory", &m.memory);
    kv("OS", &m.os);
    kv("scratch files", &r.scratch);
    for (tool, v) in &r.peers {
        kv(tool, v.as_deref().unwrap_or("not installed"));
    }
    if r.scale != 1.0 {
        kv("size scale", &format!("{} (test run: figures are not meaningful)", r.scale));
    }
    kv("total time", &format!("{:.1} s", r.seconds));
    h.push_str("</table><p class=\"note\">Every figure is the median of several runs after a warm-up; ±N% is the largest \
                distance of the fastest or slowest run (10th/90th percentile from ten runs up) from the median. MB/s = 10<sup>6</sup> bytes/s; sizes are binary.</p>");
    for t in &r.tables {
        let _ = write!(h, "<h2 id=\"{0}\"><code>{0}</code>: {1}</h2>", esc(t.id), esc(t.title));
        let _ = write!(h, "<p class=\"note\"><em>Mirrors: {}.</em> ({:.1} s)</p>", esc(t.mirrors), t.seconds);
        for n in &t.notes {
            let _ = write!(h, "<p class=\"note\">{}</p>", esc(n));
        }
        if let Some(e) = &t.error {
            let _ = write!(h, "<p class=\"err\">Failed: {}</p>", esc(e));
        }
        for sec in &t.sections {
            let _ = write!(h, "<h3>{}</h3><table><tr>", esc(&sec.title));
            for c in &sec.columns {
                let _ = write!(h, "<th>{}</th>", esc(c));
            }
            h.push_str("</tr>");
            for row in &sec.rows {
                h.push_str("<tr>");
                for c in row {
                    let _ = write!(h, "<td>{}</td>", esc(c.display()));
                }
                h.push_str("</tr>");
            }
            h.push_str("</table>");
        }
        for c in &t.charts {
            h.push_str(&if c.categories.is_empty() { line_chart(c) } else { bar_chart(c) });
        }
    }
    if !r.unavailable.is_empty() {
        h.push_str("<h2>Not yet available</h2><ul>");
        for (id, what) in &r.unavailable {
            let _ = write!(h, "<li><code>{}</code>: {}</li>", esc(id), esc(what));
        }
        h.push_str("</ul>");
    }
    h.push_str("</body></html>\n");
    h
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// One axis: maps data values to pixels, logarithmic when the data spans a wide range.
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Axis {
    fn fit(values: impl Iterator<Item = f64>, force_log: bool) -> Axis {
        let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
        let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if !min.is_finite() {
            return Axis { log: false, lo: 0.0, hi: 1.0 };
        }
        let log = min > 0.0 && (force_log || max / min > 100.0);
        if log {
            let (lo, hi) = (min.log10(), max.log10());
            let pad = ((hi - lo) * 0.05).max(0.05);
            Axis { log, lo: lo - pad, hi: hi + pad }
        } else {
            Axis { log, lo: 0.0_f64.min(min), hi: if max > 0.0 { max * 1.08 } else { 1.0 } }
        }
    }
    /// Position in 0..=1.
    fn frac(&self, x: f64) -> f64 {
        let x = if self.log { x.max(1e-300).log10() } else { x };
        (x - self.lo) / (self.hi - self.lo)
    }
    /// Tick values: powers of 10 (log), powers of 4 for byte sizes (log), or 5 steps (linear).
    fn ticks(&self, bytes: bool) -> Vec<f64> {
        if self.log {
            let (a, b) = (10f64.powf(self.lo), 10f64.powf(self.hi));
            let base: f64 = if bytes { 4.0 } else { 10.0 };
            let mut t = base.powf((a.log(base)).ceil());
            let mut v = Vec::new();
            while t <= b && v.len() < 40 {
                v.push(t);
                t *= base;
            }
            while v.len() > 8 {
                v = v.into_iter().step_by(2).collect();
            }
            v
        } else {
            let step = nice_step((self.hi - self.lo) / 5.0);
            let mut t = (self.lo / step).ceil() * step;
            let mut v = Vec::new();
            while t <= self.hi + 1e-9 {
                v.push(t);
                t += step;
            }
            v
        }
    }
}

fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    }
}

fn fmt_num(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.0e}", v)
    } else if v >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else if v >= 0.1 {
        format!("{v:.1}")
    } else {
        format!("{v:.0e}")
    }
}

const W: f64 = 760.0;
const H: f64 = 380.0;
const L: f64 = 70.0;
const R: f64 = 230.0;
const T: f64 = 34.0;
const B: f64 = 50.0;

fn line_chart(c: &Chart) -> String {
    let xs = Axis::fit(c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), c.x_bytes);
    let ys = Axis::fit(c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)), false);
    let (pw, ph) = (W - L - R, H - T - B);
    let px = |x: f64| L + xs.frac(x) * pw;
    let py = |y: f64| T + (1.0 - ys.frac(y)) * ph;
    let mut s = svg_open(c);
    for t in xs.ticks(c.x_bytes) {
        let x = px(t);
        let label = if c.x_bytes { fmt_size(t as u64) } else { fmt_num(t) };
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{T}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/><text x=\"{x:.1}\" y=\"{:.1}\" \
             text-anchor=\"middle\">{}</text>",
            T + ph,
            T + ph + 16.0,
            esc(&label)
        );
    }
    for t in ys.ticks(false) {
        let y = py(t);
        let _ = write!(
            s,
            "<line x1=\"{L}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/><text x=\"{:.1}\" y=\"{:.1}\" \
             text-anchor=\"end\">{}</text>",
            L + pw,
            L - 6.0,
            y + 4.0,
            fmt_num(t)
        );
    }
    axes(&mut s, c, pw, ph, xs.log, ys.log);
    for (i, series) in c.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let dash = if series.name.ends_with("(published)") || series.name == "cp" {
            " stroke-dasharray=\"5 4\""
        } else {
            ""
        };
        let mut pts: Vec<(f64, f64)> = series.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = pts.iter().map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y))).collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>",
            path.join(" ")
        );
        for (x, y) in &pts {
            let label = if c.x_bytes { fmt_size(*x as u64) } else { fmt_num(*x) };
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{}: {} → {:.3} {}</title></circle>",
                px(*x),
                py(*y),
                esc(&series.name),
                esc(&label),
                y,
                esc(&c.y_label)
            );
        }
        legend(&mut s, i, &series.name, color);
    }
    s.push_str("</svg>");
    s
}

fn bar_chart(c: &Chart) -> String {
    let bars: Vec<(String, f64, usize)> = c
        .series
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.points.iter().map(move |(x, y)| {
                let cat = c.categories.get((*x as usize).wrapping_sub(1)).cloned().unwrap_or_default();
                (format!("{} {}", s.name, cat), *y, i)
            })
        })
        .collect();
    let max = bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-9);
    let row = 20.0;
    let label_w = 300.0;
    let height = T + row * bars.len() as f64 + 20.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{height}\" font-size=\"11\" \
         font-family=\"sans-serif\"><text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{}</text>",
        W / 2.0,
        esc(&c.title)
    );
    for (k, (label, v, i)) in bars.iter().enumerate() {
        let y = T + row * k as f64;
        let w = (W - label_w - 90.0) * v / max;
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect x=\"{label_w}\" y=\"{:.1}\" width=\"{w:.1}\" \
             height=\"{:.1}\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{:.0} {}</text>",
            label_w - 6.0,
            y + 13.0,
            esc(label),
            y + 2.0,
            row - 5.0,
            PALETTE[i % PALETTE.len()],
            label_w + w + 4.0,
            y + 13.0,
            v,
            esc(&c.y_label)
        );
    }
    s.push_str("</svg>");
    s
}

fn svg_open(c: &Chart) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-size=\"11\" \
         font-family=\"sans-serif\"><text x=\"{:.1}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{}</text>",
        L + (W - L - R) / 2.0,
        esc(&c.title)
    )
}

fn axes(s: &mut String, c: &Chart, pw: f64, ph: f64, xlog: bool, ylog: bool) {
    let _ = write!(
        s,
        "<rect x=\"{L}\" y=\"{T}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#888\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}{}</text>\
         <text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}{}</text>",
        L + pw / 2.0,
        H - 12.0,
        esc(&c.x_label),
        if xlog { " (log scale)" } else { "" },
        T + ph / 2.0,
        esc(&c.y_label),
        if ylog { " (log scale)" } else { "" }
    );
}

fn legend(s: &mut String, i: usize, name: &str, color: &str) {
    let (x, y) = (W - R + 12.0, T + 4.0 + 16.0 * i as f64);
    let _ = write!(
        s,
        "<line x1=\"{x}\" y1=\"{y}\" x2=\"{:.1}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"3\"/><text x=\"{:.1}\" \
         y=\"{:.1}\">{}</text>",
        x + 18.0,
        x + 24.0,
        y + 4.0,
        esc(name)
    );
}
