//! The Markdown report (stdout and report.md).

use std::fmt::Write as _;

use super::report::{Report, Section};

pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# hyperseal bench ({} profile)\n", r.profile);
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
            section(&mut s, sec);
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

fn section(s: &mut String, sec: &Section) {
    let _ = writeln!(s, "### {}\n", sec.title);
    let _ = writeln!(s, "| {} |", sec.columns.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(sec.columns.len()));
    for row in &sec.rows {
        let cells: Vec<&str> = row.iter().map(|c| c.display()).collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s.push('\n');
}
