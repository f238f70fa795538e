//! The S3 part of the `rekey` table: `rekey_s3.py` (embedded here, written to the scratch
//! directory and run in the project venv) starts MinIO on 127.0.0.1, puts one object of 256 MiB
//! (1 GiB with `--full`) and measures `hyperseal.rekey_file("s3://…")` against the store's
//! server-side copy and a decrypt + encrypt streamed through Python, counting the client's
//! bytes; `rekey_prefix.py` (beside it) puts 1,000 objects under a prefix and measures
//! `hyperseal.dask.rekey_prefix` on 2 Dask workers against a `CopyObject` of every object on the
//! same workers. Both take MinIO's start-up and the counting relay from the Python tests'
//! `s3_local.py`. Without the venv, the package, s3fs, Dask or MinIO a part is a note: `make
//! bench` never fails because of it.

use std::process::Command;

use serde_json::Value;

use super::files::ratio;
use super::report::{Cell, Section, TableReport};
use super::stats::{fmt_size, fmt_time, with_spread, Stats};
use super::Ctx;

const SCRIPT: &str = include_str!("rekey_s3.py");
const PREFIX_SCRIPT: &str = include_str!("rekey_prefix.py");
/// MinIO's start-up and the counting relay: the Python tests' own (both scripts import it).
const S3_LOCAL: &str = include_str!("../../../bindings/python/tests/s3_local.py");

/// Runs the S3 part; every failure becomes a note on the table.
pub fn s3(ctx: &Ctx, out: &mut TableReport) {
    if let Err(why) = std::fs::write(ctx.path("s3_local.py"), S3_LOCAL) {
        out.note(format!("S3: {why}; the S3 rows are skipped."));
        return;
    }
    if let Err(why) = run(ctx, out) {
        out.note(format!("S3: {why}; the S3 rows are skipped."));
    }
    if let Err(why) = prefix(ctx, out) {
        out.note(format!("S3 prefix: {why}; the prefix rows are skipped."));
    }
}

/// 1,000 objects under a prefix: `rekey_prefix` on 2 workers against the floor of a write of
/// new first bytes (GET + PUT under S3's 5 MiB part, `CopyObject` above).
fn prefix(ctx: &Ctx, out: &mut TableReport) -> Result<(), String> {
    let runs = if ctx.scale < 0.01 { 1 } else { 3 };
    let objects = 1000;
    // rekey_prefix.py imports its MinIO start-up and relay from rekey_s3.py, written beside it.
    std::fs::write(ctx.path("rekey_s3.py"), SCRIPT).map_err(|e| e.to_string())?;
    ctx.progress("rekey", format!("S3: {objects} objects on MinIO, 2 Dask workers, {runs} rounds"));
    let v = python_script(ctx, "rekey_prefix.py", PREFIX_SCRIPT, &["--objects", &objects.to_string()], runs)?;
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    let get = |op: &str| rows.iter().find(|r| r["op"] == op).and_then(times);
    let copy = get("floor").ok_or("no floor figure")?;
    let rekey = get("rekey_prefix").ok_or("no rekey_prefix figure")?;
    let stored = v["stored"].as_u64().unwrap_or(0);
    let mut sec = Section::new(
        format!(
            "{objects} S3 objects ({} in all) on MinIO (127.0.0.1), 2 Dask workers: time and client traffic",
            fmt_size(stored)
        ),
        &["objects", "how", "time", "client bytes (down + up)", "÷ floor"],
    );
    for r in &rows {
        let Some(t) = times(r) else { continue };
        let bytes = r["up"].as_u64().unwrap_or(0) + r["down"].as_u64().unwrap_or(0);
        let how = match r["op"].as_str().unwrap_or("?") {
            "rekey_prefix" => "hyperseal.dask.rekey_prefix (ranged GET + PutObject / UploadPartCopy)",
            "floor" => "GET + PUT of each object under 5 MiB, CopyObject of each larger one",
            other => other,
        };
        sec.rows.push(vec![
            Cell::num(objects as f64, "", objects.to_string()),
            Cell::text(how.to_string()),
            Cell::measured(t.scale(1e3), "ms", with_spread(fmt_time(t.median), &t)),
            Cell::num(bytes as f64, "B", fmt_size(bytes)),
            ratio(t.median / copy.median),
        ]);
    }
    out.sections.push(sec);
    out.note(format!(
        "S3 prefix: {objects} objects under one prefix (mostly 0–64 KiB, four past S3's 5 MiB part, one \
         of 12 MiB), re-keyed A → B then B → A on a LocalCluster of 2 worker processes (1 thread \
         each, 16 objects in flight per worker), the manifest kept in the bucket. The floor: no store \
         can splice new first bytes into an object under S3's 5 MiB part minimum, so for those it is \
         a plain GET + PUT of each object, and for larger ones the store's own CopyObject, on the \
         same workers in the same batches. {runs} rounds after one warm-up, whose client bytes a \
         TCP relay counts. Goal: time ≤ 1.2× the floor — {} ({:.2}×).",
        if rekey.median <= 1.2 * copy.median { "met" } else { "missed" },
        rekey.median / copy.median,
    ));
    Ok(())
}

fn run(ctx: &Ctx, out: &mut TableReport) -> Result<(), String> {
    let size = ctx.size(if ctx.full { 1 << 30 } else { 256 << 20 });
    let runs = if ctx.scale < 0.01 { 1 } else { 3 };
    ctx.progress("rekey", format!("S3: {} object on MinIO, {runs} rounds", fmt_size(size)));
    let v = python_script(ctx, "rekey_s3.py", SCRIPT, &["--size", &size.to_string()], runs)?;
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    let get = |op: &str| rows.iter().find(|r| r["op"] == op);
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

/// Writes `script` (embedded) to the scratch directory as `name` and runs it in the project venv
/// against a MinIO with its data in a scratch folder (`--minio --dir --json --runs`, then
/// `args`); its JSON report. The last line of its stderr (Dask's own log lines left out) is
/// the error.
fn python_script(ctx: &Ctx, name: &str, script: &str, args: &[&str], runs: usize) -> Result<Value, String> {
    let python = ctx.repo.join(".tools/venv/bin/python");
    let minio = ctx.repo.join(".tools/bin/minio");
    if !python.is_file() {
        return Err(format!("{} missing (make python)", python.display()));
    }
    if !minio.exists() {
        return Err(format!("{} missing (make minio)", minio.display()));
    }
    let stem = name.trim_end_matches(".py");
    let (path, json, data) =
        (ctx.path(name), ctx.path(&format!("{stem}.json")), ctx.path(&format!("minio-{stem}")));
    std::fs::write(&path, script).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    let o = Command::new(&python)
        .arg(&path)
        .arg("--minio")
        .arg(&minio)
        .args(["--runs", &runs.to_string(), "--dir"])
        .arg(&data)
        .arg("--json")
        .arg(&json)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let _ = std::fs::remove_dir_all(&data);
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err.lines().rev().find(|l| !l.contains("distributed.")).unwrap_or("");
        return Err(format!("{name} failed ({}): {last}", o.status));
    }
    serde_json::from_slice(&std::fs::read(&json).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

/// The seconds of one row of a script's report.
fn times(r: &Value) -> Option<Stats> {
    let s: Vec<f64> = r["seconds"].as_array()?.iter().filter_map(Value::as_f64).collect();
    (!s.is_empty()).then(|| Stats::of(&s))
}
