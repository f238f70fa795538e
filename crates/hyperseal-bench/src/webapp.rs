//! `web app` (the offline page people use: docs/WEB.md): runs `bindings/wasm/web/bench.mjs
//! --json FILE`, which encrypts and then decrypts one file read from the disk through the
//! page's own buttons (`make web` → target/web, written through its save picker to the Origin
//! Private File System), and the same file through a page that uses typage's own streams, each
//! in a fresh headless Chromium; it reports MB/s and the peak memory of the tab's renderers
//! above the idle page. 1 GiB with `--full`, 256 MiB otherwise (times `--size-scale`). When the page, the npm packages
//! or Chromium are missing the table is a note, never a failure of the whole bench.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;
use serde_json::Value;

use super::child::{missing_note, script_json};
use super::report::{Cell, Section, TableReport};
use super::stats::fmt_mbps;
use super::{Ctx, Table};

pub struct WebApp;

/// `bindings/wasm` of the checkout, or why the table cannot run.
fn binding_dir(ctx: &Ctx) -> std::result::Result<PathBuf, String> {
    const NPM: (&str, &str) = ("the npm packages", "cd bindings/wasm && npm ci");
    let needed = [
        (
            "bindings/wasm/web/bench.mjs",
            "bindings/wasm/web/bench.mjs",
            "run from the repository root, or pass --repo DIR",
        ),
        ("target/web/index.html", "the page", "make web"),
        ("bindings/wasm/node_modules/playwright-core", NPM.0, NPM.1),
        ("bindings/wasm/node_modules/age-encryption", NPM.0, NPM.1),
        (".tools/bin/age-keygen", "age-keygen", "make age"),
    ];
    match missing_note(&ctx.repo, "web app", &needed) {
        Some(why) => Err(why),
        None => Ok(ctx.repo.join("bindings/wasm")),
    }
}

impl Table for WebApp {
    fn id(&self) -> &'static str {
        "webapp"
    }
    fn title(&self) -> &'static str {
        "Web app: a file from disk through hyperseal web and through typage's streams, in headless Chromium"
    }
    fn mirrors(&self) -> &'static str {
        "the age web pages (agewasm, rage-encry.pt, age-online, anoni-net's passkey page) and typage's streams"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let dir = match binding_dir(ctx) {
            Ok(d) => d,
            Err(why) => {
                out.note(why);
                return Ok(());
            }
        };
        let mib = ctx.size(if ctx.full { 1024 } else { 256 });
        let json_path = ctx.path("webapp-bench.json");
        let mut cmd = Command::new("node");
        cmd.current_dir(&dir).arg("web/bench.mjs").arg("--json").arg(&json_path);
        cmd.arg("--size-mib").arg(mib.to_string());
        ctx.progress(self.id(), format!("node web/bench.mjs --size-mib {mib}"));
        let parsed = match script_json(&mut cmd, "node web/bench.mjs", &json_path) {
            Ok(v) => v,
            Err(why) => {
                out.note(format!("{why}; web app table skipped"));
                return Ok(());
            }
        };
        out.note(format!(
            "Headless Chromium {} on {} ({} cores), one fresh browser per implementation, {mib} MiB of random \
             bytes read from the disk and written to the Origin Private File System (the tests' stand-in for \
             the save dialogs), to an X25519 key from age-keygen. Time: from the click (or the call) to the \
             last byte written; memory: the peak resident size of the browser's renderer processes (the page, \
             its service worker and their workers) above the idle page, sampled every 100 ms. Ratio: \
             typage's time ÷ the app's (above 1: the app is faster).",
            parsed["chromium"].as_str().unwrap_or("?"),
            parsed["cpu"].as_str().unwrap_or("?"),
            parsed["cores"].as_u64().unwrap_or(0),
        ));
        let rows = parsed["rows"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let field = |r: &Value, k: &str| r[k].as_str().unwrap_or("").to_string();
        let mut sec = Section::new(
            "One file, encrypted then decrypted",
            &["implementation", "op", "MB/s", "peak memory above idle", "typage ÷ app"],
        );
        for r in rows {
            let (Some(size), Some(secs), Some(peak)) =
                (r["size"].as_f64(), r["seconds"].as_f64(), r["peakBytes"].as_f64())
            else {
                continue;
            };
            let op = field(r, "op");
            let app = rows
                .iter()
                .find(|o| field(o, "op") == op && field(o, "impl") == "hyperseal web")
                .and_then(|o| o["seconds"].as_f64());
            let typage = rows
                .iter()
                .find(|o| field(o, "op") == op && field(o, "impl").starts_with("typage"))
                .and_then(|o| o["seconds"].as_f64());
            let ratio = match (field(r, "impl") == "hyperseal web", app, typage) {
                (true, Some(a), Some(t)) => Cell::num(t / a, "×", format!("{:.2}×", t / a)),
                _ => Cell::text("–"),
            };
            let mib_peak = peak / f64::from(1u32 << 20);
            sec.rows.push(vec![
                Cell::text(field(r, "impl")),
                Cell::text(op),
                Cell::num(size / secs / 1e6, "MB/s", fmt_mbps(size / secs)),
                Cell::num(mib_peak, "MiB", format!("{mib_peak:.0} MiB")),
                ratio,
            ]);
        }
        out.sections.push(sec);
        Ok(())
    }
}
