//! The S3 part of the `rekey` table: `rekey_s3.py` (embedded here, written to the scratch
//! directory and run in the project venv) starts MinIO on 127.0.0.1, puts one object of 256 MiB
//! (1 GiB with `--full`) and measures `hyperseal.rekey_file("s3://…")` against the store's
//! server-side copy and a decrypt + encrypt streamed through Python, counting the client's
//! bytes. Without the venv, the package, s3fs or MinIO the part is a note: `make bench` never
//! fails because of it.

use std::process::Command;

use serde_json::Value;

use super::files::ratio;
use super::report::{Cell, Section, TableReport};
use super::stats::{fmt_size, fmt_time, with_spread, Stats};
use super::Ctx;

const SCRIPT: &str = include_str!("rekey_s3.py");

/// Runs the S3 part; every failure becomes a note on the table.
pub fn s3(ctx: &Ctx, out: &mut TableReport) {
    if let Err(why) = run(ctx, out) {
        out.note(format!("S3: {why}; the S3 rows are skipped."));
    }
}

fn run(ctx: &Ctx, out: &mut TableReport) -> Result<(), String> {
    let python = ctx.repo.join(".tools/venv/bin/python");
    let minio = ctx.repo.join(".tools/bin/minio");
    if !python.is_file() {
        return Err(format!("{} missing (make python)", python.display()));
    }
    if !minio.exists() {
        return Err(format!("{} missing (make minio)", minio.display()));
    }
    let size = ctx.size(if ctx.full { 1 << 30 } else { 256 << 20 });
    let runs = if ctx.scale < 0.01 { 1 } else { 3 };
    let (script, json, data) = (ctx.path("rekey_s3.py"), ctx.path("rekey-s3.json"), ctx.path("minio"));
    std::fs::write(&script, SCRIPT).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    ctx.progress("rekey", format!("S3: {} object on MinIO, {runs} rounds", fmt_size(size)));
    let o = Command::new(&python)
        .arg(&script)
        .arg("--minio")
        .arg(&minio)
        .args(["--size", &size.to_string(), "--runs", &runs.to_string(), "--dir"])
        .arg(&data)
        .arg("--json")
        .arg(&json)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let _ = std::fs::remove_dir_all(&data);
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(format!("rekey_s3.py failed ({}): {}", o.status, err.lines().last().unwrap_or("")));
    }
    let v: Value = serde_json::from_slice(&std::fs::read(&json).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    let get = |op: &str| rows.iter().find(|r| r["op"] == op);
    let times = |r: &Value| -> Option<Stats> {
        let s: Vec<f64> = r["seconds"].as_array()?.iter().filter_map(Value::as_f64).collect();
        (!s.is_empty()).then(|| Stats::of(&s))
    };
    let copy = get("server copy").and_then(times).ok_or("no server-copy figure")?;
    let rekey = get("rekey").and_then(times).ok_or("no rekey figure")?;
    let mut sec = Section::new(
        format!("One {} object on MinIO (127.0.0.1): time and client traffic", fmt_size(size)),
        &["size", "how", "time", "client bytes (down + up)", "÷ server copy", "÷ hyperseal rekey"],
    );
    let mut traffic = 0u64;
    for r in &rows {
        let Some(t) = times(r) else { continue };
        let bytes = r["up"].as_u64().unwrap_or(0) + r["down"].as_u64().unwrap_or(0);
        let op = r["op"].as_str().unwrap_or("?");
        if op == "rekey" {
            traffic = bytes;
        }
        let how = match op {
            "rekey" => "hyperseal.rekey_file(\"s3://…\") (ranged GET + UploadPartCopy)".to_string(),
            "server copy" => "s3fs copy (the store's server-side copy)".to_string(),
            "decrypt + encrypt" => {
                "hyperseal.open(s3fs file) → hyperseal.open(new object), in Python".to_string()
            }
            other => other.to_string(),
        };
        sec.rows.push(vec![
            Cell::num(size as f64, "B", fmt_size(size)),
            Cell::text(how),
            Cell::measured(t.scale(1e3), "ms", with_spread(fmt_time(t.median), &t)),
            Cell::num(bytes as f64, "B", fmt_size(bytes)),
            ratio(t.median / copy.median),
            ratio(t.median / rekey.median),
        ]);
    }
    out.sections.push(sec);
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    out.note(format!(
        "S3: MinIO on 127.0.0.1 with its data in {}; CPython {}, s3fs {}, hyperseal {}; the object \
         as `hyperseal.open(…, \"wb\")` writes it, re-keyed A → B then B → A ({} written); {runs} \
         rounds of the three in turn after one warm-up, in which the client's bytes are counted by \
         a TCP relay. Goals: client traffic ≤ 16 MiB — {} ({}); time ≤ 1.2× the server-side copy — \
         {} ({:.2}×).",
        ctx.tmp_note,
        v["versions"]["python"].as_str().unwrap_or("?"),
        v["versions"]["s3fs"].as_str().unwrap_or("?"),
        v["versions"]["hyperseal"].as_str().unwrap_or("?"),
        v["written"].as_str().unwrap_or("?"),
        verdict(traffic <= 16 << 20),
        fmt_size(traffic),
        verdict(rekey.median <= 1.2 * copy.median),
        rekey.median / copy.median,
    ));
    Ok(())
}
