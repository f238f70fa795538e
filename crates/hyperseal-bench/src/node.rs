//! `node` (the Node hybrid library, in Node.js): runs the binding's own benchmark,
//! `bindings/node/bench/bench.js --json FILE`, which times that library's design and the hyperseal
//! addon side by side in one Node process, and turns its JSON into a table. When the addon is not built or `node` is missing, the
//! table is a note, never a failure of the whole bench.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;

use super::child::script_json;
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_size, fmt_time};
use super::{Ctx, Table};

pub struct Node;

const NOT_BUILT: &str = "node addon not built (cd bindings/node && npm ci && npm run build)";

/// `bindings/node` of the checkout named by `--repo` (default: the current directory).
fn binding_dir(ctx: &Ctx) -> Option<PathBuf> {
    let dir = ctx.repo.join("bindings/node");
    dir.join("bench/bench.js").is_file().then_some(dir)
}

fn node_version() -> Option<String> {
    let out = Command::new("node").arg("--version").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Table for Node {
    fn id(&self) -> &'static str {
        "node"
    }
    fn title(&self) -> &'static str {
        "Node.js binding: the Node hybrid library's design vs the hyperseal addon, sync and async"
    }
    fn mirrors(&self) -> &'static str {
        "the Node hybrid library (encryptByPublicKey / encryptByPublicKeyAsync in Node.js), run in Node on this machine"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let Some(dir) = binding_dir(ctx) else {
            out.note(format!(
                "{}/bindings/node/bench/bench.js not found (run from the repository root, or pass --repo DIR)",
                ctx.repo.display()
            ));
            return Ok(());
        };
        if !dir.join("hyperseal.node").is_file() {
            out.note(NOT_BUILT);
            return Ok(());
        }
        let Some(version) = node_version() else {
            out.note("`node` is not on PATH: node table skipped");
            return Ok(());
        };
        let json_path = ctx.path("node-bench.json");
        let mut cmd = Command::new("node");
        cmd.current_dir(&dir).arg("--expose-gc").arg("bench/bench.js").arg("--json").arg(&json_path);
        if ctx.full {
            cmd.arg("--full");
        } else {
            cmd.arg("--quick");
        }
        ctx.progress(
            self.id(),
            format!("node {version} bench/bench.js ({})", if ctx.full { "--full" } else { "--quick" }),
        );
        out.note(format!(
            "`node --expose-gc bench/bench.js --{} --json FILE` in {} with Node {version}: every figure is the best per-call time \
             the script measured in one Node process (its own method, not the median used elsewhere here). \
             `--size-scale` does not apply: the script always runs 1 KB … 100 MB.",
            if ctx.full { "full" } else { "quick" },
            dir.display()
        ));
        let parsed = match script_json(&mut cmd, "node bench/bench.js", &json_path) {
            Ok(v) => v,
            Err(why) => {
                out.note(format!("{why}; node table skipped"));
                return Ok(());
            }
        };
        let mut sec = Section::new(
            "Per call (in-memory buffers)",
            &["size", "implementation", "encrypt", "decrypt", "encrypt MB/s", "decrypt MB/s", "expansion"],
        );
        let mut chart = Chart::new("Node: encrypt throughput vs size", "buffer size", "MB/s", true);
        for r in parsed["rows"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            let (Some(size), Some(name)) = (r["size"].as_f64(), r["impl"].as_str()) else { continue };
            let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
            let (enc, dec) = (f("encMs") / 1e3, f("decMs") / 1e3);
            // The script's MB is 2^20 bytes; the report's MB/s is 10^6 bytes per second.
            let (enc_bps, dec_bps) = (size / enc, size / dec);
            chart.point(name, size, enc_bps / 1e6);
            sec.rows.push(vec![
                Cell::num(size, "B", fmt_size(size as u64)),
                Cell::text(name),
                Cell::num(enc, "s", fmt_time(enc)),
                Cell::num(dec, "s", fmt_time(dec)),
                Cell::num(enc_bps / 1e6, "MB/s", fmt_mbps(enc_bps)),
                Cell::num(dec_bps / 1e6, "MB/s", fmt_mbps(dec_bps)),
                Cell::num(f("expansion"), "%", format!("{:.2}%", f("expansion"))),
            ]);
        }
        out.sections.push(sec);
        if let Some(ms) = parsed["nodeAes256Gcm100MB"]["ms"].as_f64() {
            let bps = (100u64 << 20) as f64 / (ms / 1e3);
            out.note(format!(
                "Node's own AES-256-GCM, one call over 100 MiB: {} ({}) — the ceiling of a single-shot design in Node.",
                fmt_time(ms / 1e3),
                fmt_mbps(bps)
            ));
        }
        out.charts.push(chart);
        Ok(())
    }
}
