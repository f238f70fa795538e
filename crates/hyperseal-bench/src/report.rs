//! The report as data: tables of cells (text, or a measured figure with its spread) and charts,
//! with its two plain-text forms, JSON and Markdown (the HTML page is `html.rs`). The writers
//! only render it.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::machine::Machine;
use super::stats::Stats;
use super::Ctx;

/// One cell: plain text, a number, or a measured figure (median with min/max).
#[derive(Clone, Debug)]
pub enum Cell {
    Text(String),
    Num { value: f64, unit: &'static str, text: String },
    Measured { stats: Stats, unit: &'static str, text: String },
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }
    pub fn num(value: f64, unit: &'static str, text: impl Into<String>) -> Cell {
        Cell::Num { value, unit, text: text.into() }
    }
    pub fn measured(stats: Stats, unit: &'static str, text: impl Into<String>) -> Cell {
        Cell::Measured { stats, unit, text: text.into() }
    }
    pub fn none() -> Cell {
        Cell::Text("—".into())
    }
    pub fn display(&self) -> &str {
        match self {
            Cell::Text(t) | Cell::Num { text: t, .. } | Cell::Measured { text: t, .. } => t,
        }
    }
    fn to_json(&self) -> Value {
        match self {
            Cell::Text(t) => Value::String(t.clone()),
            Cell::Num { value, unit, .. } => json!({ "value": value, "unit": unit }),
            Cell::Measured { stats, unit, .. } => json!({
                "median": stats.median, "min": stats.min, "max": stats.max, "runs": stats.n, "unit": unit
            }),
        }
    }
}

/// A titled grid of cells.
#[derive(Default)]
pub struct Section {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Section {
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Section {
        Section {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }
}

/// One line of a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line chart (y against x); the HTML writer draws it as inline SVG.
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// X values are byte sizes (axis labels as KiB/MiB).
    pub x_bytes: bool,
    /// When set, x = 1, 2, … index these names and the chart is drawn as bars.
    pub categories: Vec<String>,
    pub series: Vec<Series>,
}

impl Chart {
    pub fn new(title: &str, x_label: &str, y_label: &str, x_bytes: bool) -> Chart {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_bytes,
            categories: Vec::new(),
            series: Vec::new(),
        }
    }
    /// Adds a point to the series `name`, creating it on first use.
    pub fn point(&mut self, name: &str, x: f64, y: f64) {
        match self.series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => self.series.push(Series { name: name.into(), points: vec![(x, y)] }),
        }
    }
}

/// The result of one table.
pub struct TableReport {
    pub id: &'static str,
    pub title: &'static str,
    pub mirrors: &'static str,
    pub notes: Vec<String>,
    pub sections: Vec<Section>,
    pub charts: Vec<Chart>,
    pub error: Option<String>,
    pub seconds: f64,
}

impl TableReport {
    pub fn new(id: &'static str, title: &'static str, mirrors: &'static str) -> Self {
        TableReport {
            id,
            title,
            mirrors,
            notes: vec![],
            sections: vec![],
            charts: vec![],
            error: None,
            seconds: 0.0,
        }
    }
    pub fn note(&mut self, s: impl Into<String>) {
        self.notes.push(s.into());
    }
}

/// The whole report.
pub struct Report {
    pub machine: Machine,
    pub version: &'static str,
    pub date: String,
    pub profile: &'static str,
    pub scale: f64,
    pub scratch: String,
    pub peers: Vec<(String, Option<String>)>,
    pub tables: Vec<TableReport>,
    pub unavailable: Vec<(String, String)>,
    pub seconds: f64,
}

impl Report {
    pub fn new(ctx: &Ctx, machine: Machine, peers: Vec<(String, Option<String>)>) -> Report {
        Report {
            machine,
            version: env!("CARGO_PKG_VERSION"),
            date: super::machine::utc_now(),
            profile: if ctx.full { "full" } else { "quick" },
            scale: ctx.scale,
            scratch: ctx.tmp_note.clone(),
            peers,
            tables: Vec::new(),
            unavailable: Vec::new(),
            seconds: 0.0,
        }
    }

    pub fn to_json(&self) -> Value {
        let tables: Vec<Value> = self
            .tables
            .iter()
            .map(|t| {
                let sections: Vec<Value> = t
                    .sections
                    .iter()
                    .map(|s| {
                        let rows: Vec<Value> = s
                            .rows
                            .iter()
                            .map(|r| {
                                let mut m = Map::new();
                                for (c, cell) in s.columns.iter().zip(r) {
                                    m.insert(c.clone(), cell.to_json());
                                }
                                Value::Object(m)
                            })
                            .collect();
                        json!({ "title": s.title, "columns": s.columns, "rows": rows })
                    })
                    .collect();
                let charts: Vec<Value> = t
                    .charts
                    .iter()
                    .map(|c| {
                        let series: Vec<Value> =
                            c.series.iter().map(|s| json!({ "name": s.name, "points": s.points })).collect();
                        json!({ "title": c.title, "x": c.x_label, "y": c.y_label, "series": series })
                    })
                    .collect();
                json!({
                    "id": t.id, "title": t.title, "mirrors": t.mirrors, "notes": t.notes,
                    "sections": sections, "charts": charts, "error": t.error, "seconds": t.seconds,
                })
            })
            .collect();
        let peers: Map<String, Value> = self
            .peers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().map_or(Value::Null, Value::String)))
            .collect();
        let unavailable: Vec<Value> =
            self.unavailable.iter().map(|(id, what)| json!({ "id": id, "planned": what })).collect();
        json!({
            "hyperseal_version": self.version,
            "date": self.date,
            "profile": self.profile,
            "size_scale": self.scale,
            "scratch_dir": self.scratch,
            "machine": self.machine.to_json(),
            "peers": peers,
            "tables": tables,
            "not_yet_available": unavailable,
            "seconds": self.seconds,
            "units": { "MB/s": "10^6 bytes per second", "sizes": "binary (1 KiB = 1024 B)" },
        })
    }
}

/// The Markdown report (stdout and report.md).
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# hyperseal benchmark ({} profile)\n", r.profile);
    let m = &r.machine;
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| hyperseal | {} |", r.version);
    let _ = writeln!(s, "| date | {} |", r.date);
    let _ = writeln!(s, "| CPU | {} |", m.cpu);
    let _ = writeln!(s, "| cores (available_parallelism) | {} |", m.cores);
    let _ = writeln!(s, "| CPU features | {} |", m.feature_line());
    let _ = writeln!(s, "| memory | {} |", m.memory);
    let _ = writeln!(s, "| OS | {} |", m.os);
    let _ = writeln!(s, "| scratch files | {} |", r.scratch);
    for (tool, v) in &r.peers {
        let _ = writeln!(s, "| {tool} | {} |", v.as_deref().unwrap_or("not installed"));
    }
    if r.scale != 1.0 {
        let _ = writeln!(s, "| size scale | {} (test run: figures are not meaningful) |", r.scale);
    }
    let _ = writeln!(s, "| total time | {:.1} s |", r.seconds);
    let _ = writeln!(
        s,
        "\nEvery figure is the median of several runs after a warm-up; ±N% is the largest distance of the \
         fastest or slowest run (10th/90th percentile from ten runs up) from the median. MB/s = 10^6 bytes/s; sizes are binary (1 KiB = 1024 B).\n"
    );
    for t in &r.tables {
        let _ = writeln!(s, "## `{}`: {}\n", t.id, t.title);
        let _ = writeln!(s, "*Mirrors: {}.* ({:.1} s)\n", t.mirrors, t.seconds);
        for n in &t.notes {
            let _ = writeln!(s, "- {n}");
        }
        if !t.notes.is_empty() {
            s.push('\n');
        }
        if let Some(e) = &t.error {
            let _ = writeln!(s, "**Failed:** {e}\n");
        }
        for sec in &t.sections {
            markdown_section(&mut s, sec);
        }
    }
    if !r.unavailable.is_empty() {
        let _ = writeln!(s, "## Not yet available\n");
        for (id, what) in &r.unavailable {
            let _ = writeln!(s, "- `{id}`: {what}");
        }
        s.push('\n');
    }
    s
}

fn markdown_section(s: &mut String, sec: &Section) {
    let _ = writeln!(s, "### {}\n", sec.title);
    let _ = writeln!(s, "| {} |", sec.columns.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(sec.columns.len()));
    for row in &sec.rows {
        let cells: Vec<&str> = row.iter().map(|c| c.display()).collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s.push('\n');
}
