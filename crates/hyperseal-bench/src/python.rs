//! `python`: runs the Python package's own benchmark, `python -m
//! hyperseal.bench --json FILE` in the project venv (`.tools/venv`, made by `make python`), which
//! measures hyperseal beside pyca/cryptography (`AESGCM`, `Cobblestone256`) and pyrage (age) in
//! one Python process with the same inputs, and turns its JSON into a table with ratios against
//! the peer measured in the same run. When the venv or the package is missing, the table is a
//! note, never a failure of the whole bench.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;
use serde_json::Value;

use super::child::script_json;
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, fmt_time};
use super::{Ctx, Table};

pub struct Python;

/// The venv's interpreter, or why the table cannot run.
fn interpreter(ctx: &Ctx) -> std::result::Result<PathBuf, String> {
    let python = ctx.repo.join(".tools/venv/bin/python");
    if !python.is_file() {
        return Err(format!("{} missing (make python); python table skipped", python.display()));
    }
    let probe = Command::new(&python).args(["-c", "import hyperseal.bench, cryptography, pyrage"]).output();
    match probe {
        Ok(o) if o.status.success() => Ok(python),
        Ok(o) => Err(format!(
            "the venv cannot import hyperseal.bench or its peers ({}; make python); python table skipped",
            String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")
        )),
        Err(e) => Err(format!("cannot run {}: {e}; python table skipped", python.display())),
    }
}

impl Table for Python {
    fn id(&self) -> &'static str {
        "python"
    }
    fn title(&self) -> &'static str {
        "Python package: hyperseal vs pyca/cryptography (AESGCM, Cobblestone256) and pyrage, one process"
    }
    fn mirrors(&self) -> &'static str {
        "pyca/cryptography (AESGCM one-shot, Cobblestone256 = C2SP chunked) and pyrage (age), as Python users run them"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let python = match interpreter(ctx) {
            Ok(p) => p,
            Err(why) => {
                out.note(why);
                return Ok(());
            }
        };
        let nominal: &[u64] = if ctx.full {
            &[1 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20]
        } else {
            &[1 << 10, 1 << 20, 256 << 20]
        };
        let sizes: Vec<String> = nominal.iter().map(|&n| ctx.size(n).to_string()).collect();
        let runs = if ctx.full { "5" } else { "3" };
        let json_path = ctx.path("python-bench.json");
        let mut cmd = Command::new(&python);
        cmd.current_dir(&ctx.repo)
            .args(["-m", "hyperseal.bench", "--sizes", &sizes.join(","), "--runs", runs, "--dir"])
            .arg(ctx.tmp.path())
            .arg("--json")
            .arg(&json_path);
        ctx.progress(
            self.id(),
            format!("python -m hyperseal.bench --sizes {} --runs {runs}", sizes.join(",")),
        );
        let parsed = match script_json(&mut cmd, "python -m hyperseal.bench", &json_path) {
            Ok(v) => v,
            Err(why) => {
                out.note(format!("{why}; python table skipped"));
                return Ok(());
            }
        };
        let v = &parsed["versions"];
        out.note(format!(
            "One CPython {} process ({} cores), the same inputs for hyperseal {} and its peers (pyca/cryptography {}, \
             pyrage {}); median of {runs} runs per figure (at least 50 below 1 MiB); files in {}. Ratios: the \
             peer's time ÷ hyperseal's for the same table, size and operation (above 1: hyperseal is faster). \
             Load average at start / end: {} / {}; other processes' CPU during each table (in cores, \
             from /proc/stat): {}.",
            v["python"].as_str().unwrap_or("?"),
            parsed["cores"].as_u64().unwrap_or(0),
            v["hyperseal"].as_str().unwrap_or("?"),
            v["cryptography"].as_str().unwrap_or("?"),
            v["pyrage"].as_str().unwrap_or("?"),
            ctx.tmp_note,
            parsed["load"][0].as_f64().map_or("?".into(), |l| format!("{l:.2}")),
            parsed["load"][1].as_f64().map_or("?".into(), |l| format!("{l:.2}")),
            parsed["others_cpu"]
                .as_object()
                .map(|m| m
                    .iter()
                    .map(|(t, x)| format!("{t} {:.2}", x.as_f64().unwrap_or(f64::NAN)))
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_else(|| "unknown".into()),
        ));
        let mut sec = Section::new(
            "Per call, in one Python process",
            &["table", "size", "implementation", "op", "time", "MB/s", "CPU", "peer ÷ hyperseal"],
        );
        let mut chart = Chart::new("Python: throughput vs size", "input size", "MB/s", true);
        let field = |r: &Value, k: &str| r[k].as_str().unwrap_or("").to_string();
        for r in parsed["rows"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            let (Some(size), Some(secs)) = (r["size"].as_f64(), r["seconds"].as_f64()) else { continue };
            let (table, name, op) = (field(r, "table"), field(r, "impl"), field(r, "op"));
            let bps = size / secs;
            if table != "small" {
                chart.point(&format!("{table}: {name} {op}"), size, bps / 1e6);
            }
            sec.rows.push(vec![
                Cell::text(table),
                Cell::num(size, "B", fmt_size(size as u64)),
                Cell::text(name),
                Cell::text(op),
                Cell::num(secs, "s", fmt_time(secs)),
                Cell::num(bps / 1e6, "MB/s", fmt_mbps(bps)),
                Cell::num(
                    r["cpu"].as_f64().unwrap_or(f64::NAN),
                    "",
                    format!("{:.2}", r["cpu"].as_f64().unwrap_or(0.0)),
                ),
                match r["ratio"].as_f64() {
                    Some(x) => Cell::num(x, "×", format!("{x:.2}×")),
                    None => Cell::text("–"),
                },
            ]);
        }
        out.sections.push(sec);
        out.charts.push(chart);
        let t = &parsed["targets"];
        let ratio =
            |k: &str| t[k]["min_ratio"].as_f64().map_or("not measured".into(), |x| format!("{x:.2}×"));
        out.note(format!(
            "Targets: C2SP chunked ≥ 1.7× pyca's Cobblestone256 at 256 MiB — slower direction {} at {}; \
             age files ≥ 3× pyrage — slower direction {} at {}; 1 KB hybrid encrypt + decrypt ≤ 150 µs — {}.",
            ratio("c2sp_vs_cobblestone"),
            t["c2sp_vs_cobblestone"]["size"].as_u64().map_or("?".into(), fmt_size),
            ratio("age_files_vs_pyrage"),
            t["age_files_vs_pyrage"]["size"].as_u64().map_or("?".into(), fmt_size),
            t["hybrid_1kb_round_trip_us"]["us"]
                .as_f64()
                .map_or("not measured".into(), |us| format!("{us:.0} µs")),
        ));
        Ok(())
    }
}
