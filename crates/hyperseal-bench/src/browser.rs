//! `browser` (@ldesign/crypto's browser peers, FISE's "frontend" claim, age in
//! TypeScript): runs `bindings/wasm/bench/browser.mjs --json FILE` (`npm run bench:browser`),
//! which measures hyperseal's WebAssembly build beside @noble/ciphers, WebCrypto, hash-wasm,
//! crypto-js, node-forge and age-encryption (typage) in one headless Chromium page with the same
//! inputs, and turns its JSON into a table. When the build, the npm packages or Chromium are
//! missing, the table is a note, never a failure of the whole bench.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Result;
use serde_json::Value;

use super::child::{missing_note, script_json};
use super::report::{Cell, Chart, Section, TableReport};
use super::stats::{fmt_mbps, fmt_time};
use super::{Ctx, Table};

pub struct Browser;

const CHROMIUM: &str = "/usr/bin/chromium";

/// `bindings/wasm` of the checkout, or why the table cannot run.
fn binding_dir(ctx: &Ctx) -> std::result::Result<PathBuf, String> {
    const NPM: (&str, &str) = ("the npm packages", "cd bindings/wasm && npm ci");
    let needed = [
        (
            "bindings/wasm/bench/browser.mjs",
            "bindings/wasm/bench/browser.mjs",
            "run from the repository root, or pass --repo DIR",
        ),
        ("bindings/wasm/pkg/hyperseal_bg.wasm", "the WebAssembly build", "make wasm"),
        ("bindings/wasm/node_modules/playwright-core", NPM.0, NPM.1),
        ("bindings/wasm/node_modules/age-encryption", NPM.0, NPM.1),
    ];
    if let Some(why) = missing_note(&ctx.repo, "browser", &needed) {
        return Err(why);
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| CHROMIUM.into());
    if !std::path::Path::new(&chromium).is_file() {
        return Err("Chromium missing (make chromium); browser table skipped".into());
    }
    Ok(ctx.repo.join("bindings/wasm"))
}

impl Table for Browser {
    fn id(&self) -> &'static str {
        "browser"
    }
    fn title(&self) -> &'static str {
        "Browser: hyperseal's WebAssembly build vs the libraries pages use, in headless Chromium"
    }
    fn mirrors(&self) -> &'static str {
        "@ldesign/crypto (Chrome: crypto-js, node-forge, WebCrypto), @noble/ciphers, hash-wasm, age-encryption (typage), FISE's frontend tokens"
    }

    fn run(&self, ctx: &Ctx, out: &mut TableReport) -> Result<()> {
        let dir = match binding_dir(ctx) {
            Ok(d) => d,
            Err(why) => {
                out.note(why);
                return Ok(());
            }
        };
        let json_path = ctx.path("browser-bench.json");
        let mut cmd = Command::new("node");
        cmd.current_dir(&dir).arg("bench/browser.mjs").arg("--json").arg(&json_path);
        cmd.arg(if ctx.full { "--full" } else { "--quick" });
        if ctx.scale != 1.0 {
            cmd.arg("--size-scale").arg(ctx.scale.to_string());
        }
        ctx.progress(
            self.id(),
            format!("node bench/browser.mjs ({})", if ctx.full { "--full" } else { "--quick" }),
        );
        let parsed = match script_json(&mut cmd, "node bench/browser.mjs", &json_path) {
            Ok(v) => v,
            Err(why) => {
                out.note(format!("{why}; browser table skipped"));
                return Ok(());
            }
        };
        out.note(
            "The WorkerPool groups run twice, in a page served with COOP/COEP (cross-origin isolated: the pool's \
             workers share memory with it, `[SharedArrayBuffer, COOP/COEP]`) and in one served without \
             (parts moved as transferable ArrayBuffers, `[transferables, no COOP/COEP]`).",
        );
        out.note(format!(
            "One headless Chromium {} page on {} ({} cores), main thread, the same inputs for every implementation; \
             median time per call. The hyperseal .wasm is {} bytes, {} gzipped. Ratios are the peer's time ÷ \
             hyperseal's in the same group, size and operation (above 1: hyperseal is faster).",
            parsed["chromium"].as_str().unwrap_or("?"),
            parsed["cpu"].as_str().unwrap_or("?"),
            parsed["cores"].as_u64().unwrap_or(0),
            parsed["wasmBytes"].as_u64().unwrap_or(0),
            parsed["wasmGzipBytes"].as_u64().unwrap_or(0),
        ));
        out.note(
            "Targets and what limits them where a run misses one (measured on a 2-core AMD EPYC Zen 4 VM, \
             Chromium 156): ChaCha20-Poly1305 ≥ 4× @noble/ciphers — ChaCha20 runs at about 1.5 GB/s and \
             Poly1305 at 2.4 GB/s in the page; a new 16 MB result array costs both sides about 8 ms of \
             first-touch page faults (28.5 ms of `aead.seal` against 20.7 ms for `aead.sealInto`, which \
             writes into an array the caller reuses), so at 16 MB `aead.seal` sits at 4.0× and `sealInto` \
             at 5×; age encrypt ≥ 4× typage, to a passkey too at 16 MB (the time in \
             navigator.credentials.get not counted: a person is in that loop) — at 1 KB two X25519 operations (curve25519-dalek's 32-bit \
             field arithmetic: about 30 µs fixed-base, 110 µs variable-base) are 140 of the call's 150 µs; \
             WorkerPool ≥ 1.6× one stream at 16 MB — on a cross-origin isolated page its floor on two CPUs \
             is about 1.8× (the one stream's work plus one more copy of the input, made on the page's \
             thread while the workers run) and runs give 1.59–1.76×; with transferables the page copies \
             every part in and every result out on one of the two CPUs the workers need (0.96–1.3×), and \
             a one-stream row swings 28–62 ms between runs when a collection lands in it; files are bound \
             by Chromium's Blob reads and writes, which cross to the browser process (16 MB: read 11 ms \
             alone in a worker, 10–26 ms per 4 MB slice when two workers read at once, a new Blob 15–18 \
             ms); token seal + open ≤ 20 µs.",
        );
        let rows = parsed["rows"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let field = |r: &Value, k: &str| r[k].as_str().unwrap_or("").to_string();
        let mut sec = Section::new(
            "Per call, in the page",
            &["group", "size", "implementation", "op", "time", "MB/s", "peer ÷ hyperseal"],
        );
        let mut chart = Chart::new("Browser: throughput vs size", "input size", "MB/s", true);
        for r in rows {
            let (Some(size), Some(secs)) = (r["size"].as_f64(), r["seconds"].as_f64()) else { continue };
            let (group, name, op) = (field(r, "group"), field(r, "impl"), field(r, "op"));
            let ours = rows.iter().find(|o| {
                field(o, "group") == group
                    && o["size"].as_f64() == Some(size)
                    && field(o, "op") == op
                    && field(o, "impl").starts_with("hyperseal")
            });
            let ratio = ours.and_then(|o| o["seconds"].as_f64()).map(|h| secs / h);
            let bps = size / secs;
            chart.point(&format!("{group}: {name} {op}"), size, bps / 1e6);
            sec.rows.push(vec![
                Cell::text(group),
                Cell::num(size, "B", format!("{size}")),
                Cell::text(name),
                Cell::text(op),
                Cell::num(secs, "s", fmt_time(secs)),
                Cell::num(bps / 1e6, "MB/s", fmt_mbps(bps)),
                match ratio {
                    Some(x) => Cell::num(x, "×", format!("{x:.2}×")),
                    None => Cell::text("–"),
                },
            ]);
        }
        out.sections.push(sec);
        out.charts.push(chart);
        Ok(())
    }
}
