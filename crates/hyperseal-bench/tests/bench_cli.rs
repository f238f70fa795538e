//! Keeps `hyperseal-bench` from rotting: runs cheap tables at a tiny size scale and checks that
//! all three report files appear and the JSON names the tables that were asked for.
//!
//! The whole-process tables run the `hyperseal` binary next to `hyperseal-bench` in the target
//! directory: `cargo test --workspace` (`make test`) builds it; alone, run
//! `cargo build --release -p hyperseal-cli` first (a test cannot run cargo: it holds the lock).

use std::path::PathBuf;
use std::process::Command;

const BENCH: &str = env!("CARGO_BIN_EXE_hyperseal-bench");

/// The `hyperseal` binary the bench will measure (next to it).
fn hyperseal() -> PathBuf {
    let p = PathBuf::from(BENCH).with_file_name(format!("hyperseal{}", std::env::consts::EXE_SUFFIX));
    assert!(p.is_file(), "{} missing: build it first (cargo build --release -p hyperseal-cli)", p.display());
    p
}

fn bench(only: &str) -> serde_json::Value {
    bench_with_path(only, None)
}

/// [`bench`] with `PATH` set (a table whose peer lives in `.tools/bin`).
fn bench_with_path(only: &str, path: Option<String>) -> serde_json::Value {
    hyperseal();
    let dir = tempfile::tempdir().unwrap();
    // Run from the repository root, as `make bench` does, so the node table finds bindings/node.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut c = Command::new(BENCH);
    if let Some(path) = path {
        c.env("PATH", path);
    }
    let out = c
        .current_dir(&root)
        .args(["--quick", "--only", only, "--size-scale", "0.001", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "bench failed: {}", String::from_utf8_lossy(&out.stderr));
    for f in ["report.md", "report.json", "report.html"] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), md.trim(), "stdout is the Markdown report");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<svg") && !html.contains("<script"), "inline SVG, no scripts");
    serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap()).unwrap()
}

fn table_ids(v: &serde_json::Value) -> Vec<String> {
    v["tables"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn engine_and_pubkey_tables() {
    let v = bench("engine,pubkey");
    assert_eq!(table_ids(&v), ["engine", "pubkey"]);
    for t in v["tables"].as_array().unwrap() {
        assert!(t["error"].is_null(), "{} failed: {}", t["id"], t["error"]);
        assert!(!t["sections"].as_array().unwrap().is_empty());
    }
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
}

#[test]
fn file_table_runs_the_binary() {
    let v = bench("modes");
    assert_eq!(table_ids(&v), ["modes"]);
    let rows = v["tables"][0]["sections"][0]["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "modes measured nothing");
}

#[test]
fn tokens_primitives_sm4_hazmat_node_tables() {
    let v = bench("tokens,primitives,sm4,hazmat,node");
    assert_eq!(table_ids(&v), ["tokens", "primitives", "sm4", "hazmat", "node"]);
    assert!(v["not_yet_available"].as_array().unwrap().is_empty());
    for t in v["tables"].as_array().unwrap() {
        assert!(t["error"].is_null(), "{} failed: {}", t["id"], t["error"]);
        let sections = t["sections"].as_array().unwrap();
        if t["id"] == "node" || (t["id"] == "hazmat" && which("openssl").is_none()) {
            // Only a note when the addon is not built, node or openssl is missing; never a failure.
            assert!(!sections.is_empty() || !t["notes"].as_array().unwrap().is_empty());
        } else {
            assert!(!sections.is_empty(), "{} measured nothing", t["id"]);
            assert!(!sections[0]["rows"].as_array().unwrap().is_empty(), "{} has no rows", t["id"]);
        }
    }
    let tokens = &v["tables"][0]["sections"][0];
    assert_eq!(tokens["rows"].as_array().unwrap().len(), 6, "six message sizes");
    if which("openssl").is_some() {
        let hazmat = &v["tables"][3]["sections"][0];
        assert_eq!(hazmat["rows"].as_array().unwrap().len(), 18, "nine ciphers, both directions");
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(tool)).find(|p| p.is_file())
}

/// The shipped binary has no benchmark in it: `hyperseal bench` is an unknown command.
#[test]
fn the_shipped_binary_has_no_bench() {
    let out = Command::new(hyperseal()).args(["bench", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn unknown_table_is_an_error() {
    let out = Command::new(BENCH).args(["--only", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("hyperseal-bench: error: unknown table \"nope\""), "{err}");
    assert!(err.contains("hyperseal-bench: hint: choose from: files,"), "{err}");
}

#[test]
fn browser_table() {
    let v = bench("browser");
    assert_eq!(table_ids(&v), ["browser"]);
    let t = &v["tables"][0];
    assert!(t["error"].is_null(), "browser failed: {}", t["error"]);
    let wasm = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bindings/wasm");
    let ready = wasm.join("pkg/hyperseal_bg.wasm").is_file()
        && wasm.join("node_modules/age-encryption").is_dir()
        && std::path::Path::new(&std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()))
            .is_file()
        && which("node").is_some();
    let sections = t["sections"].as_array().unwrap();
    if ready {
        // `make wasm-test` (or `make wasm` and `npm ci` in bindings/wasm) has run: the table must measure.
        let rows = sections[0]["rows"].as_array().unwrap();
        assert!(rows.len() > 30, "{} rows", rows.len());
    } else {
        // `make test` sets this (and builds them first): there a missing peer is a failure.
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        // Only a note when the build, the npm packages or Chromium are missing; never a failure.
        assert!(!t["notes"].as_array().unwrap().is_empty());
    }
}

#[test]
fn python_table() {
    let v = bench("python");
    assert_eq!(table_ids(&v), ["python"]);
    let t = &v["tables"][0];
    assert!(t["error"].is_null(), "python failed: {}", t["error"]);
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python");
    let ready = python.is_file()
        && Command::new(&python)
            .args(["-c", "import hyperseal.bench, cryptography, pyrage"])
            .status()
            .is_ok_and(|s| s.success());
    let sections = t["sections"].as_array().unwrap();
    if ready {
        // `make python` has run: every table of the Python benchmark must measure, with ratios.
        let rows = sections[0]["rows"].as_array().unwrap();
        assert!(rows.len() >= 40, "{} rows", rows.len());
        let text = serde_json::to_string(rows).unwrap();
        for name in ["pyca AESGCM", "pyca Cobblestone256", "pyrage", "hyperseal hybrid"] {
            assert!(text.contains(name), "no {name} row");
        }
    } else {
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        assert!(!t["notes"].as_array().unwrap().is_empty());
    }
}

/// The rekey table at a tiny size: the file and small-file parts must measure; the S3 part is a
/// note when MinIO or the venv is missing, never a failure.
#[test]
fn rekey_table() {
    let v = bench("rekey");
    assert_eq!(table_ids(&v), ["rekey"]);
    let t = &v["tables"][0];
    assert!(t["error"].is_null(), "rekey failed: {}", t["error"]);
    let sections = t["sections"].as_array().unwrap();
    assert!(sections.len() >= 2, "{} sections", sections.len());
    for s in &sections[..2] {
        assert!(s["rows"].as_array().unwrap().len() >= 2, "{} has too few rows", s["title"]);
    }
    let text = serde_json::to_string(&sections[0]).unwrap();
    assert!(text.contains("hyperseal rekey (in place)"), "the slack file was not re-keyed in place");
}

/// The backup table at a tiny size: hyperseal's row measures every run and its restore holds
/// the tree's bytes, its rekey rewrites no object; peers that are not installed are notes.
#[test]
fn backup_table() {
    let v = bench("backup");
    assert_eq!(table_ids(&v), ["backup"]);
    let t = &v["tables"][0];
    assert!(t["error"].is_null(), "backup failed: {}", t["error"]);
    let rows = t["sections"][0]["rows"].as_array().unwrap();
    let ours = rows
        .iter()
        .find(|r| r["tool"] == "hyperseal backup")
        .unwrap_or_else(|| panic!("no hyperseal row: {t}"));
    for col in ["first backup", "unchanged", "round 3", "repository", "full restore", "peak RSS restore"] {
        assert!(ours[col]["value"].as_f64().is_some_and(|v| v > 0.0), "{col}: {ours}");
    }

    let notes = serde_json::to_string(&t["notes"]).unwrap();
    assert!(!notes.contains("hyperseal backup:"), "hyperseal failed or restored short: {notes}");
    // Removing a reader rewrites headers in place: no object is rewritten.
    let rekey = &t["sections"][1]["rows"][0];
    assert!(rekey["headers in place"]["value"].as_f64().is_some_and(|v| v > 0.0), "{rekey}");
    assert_eq!(rekey["rewritten"]["value"].as_f64(), Some(0.0), "{rekey}");
}

/// The agent table at a tiny size: the agent starts, and every section measures (the age one
/// where age is installed).
#[test]
fn agent_table() {
    let v = bench("agent");
    assert_eq!(table_ids(&v), ["agent"]);
    let t = &v["tables"][0];
    assert!(t["error"].is_null(), "agent failed: {}", t["error"]);
    let sections = t["sections"].as_array().unwrap();
    assert!(sections.len() >= 2, "{} sections", sections.len());
    // In turn (agent, plain, protected), then each in a row (agent, plain).
    let rows = sections[0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert!(serde_json::to_string(rows).unwrap().contains("in a row"), "{rows:?}");
    assert_eq!(sections[1]["rows"].as_array().unwrap().len(), 2);
    let notes = serde_json::to_string(&t["notes"]).unwrap();
    assert!(notes.contains("Goals:"), "{notes}");
}

/// The sops table at a tiny size, with the real sops from `.tools/bin` (`make sops`; under
/// `make test` a missing sops fails the test): both ways measure, re-key and rotation, and the repository still
/// opens with sops afterwards (the table checks it).
#[test]
fn sops_table() {
    let tools = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin");
    if !tools.join("sops").is_file() {
        eprintln!("note: .tools/bin/sops not built (make sops); skipping");
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        return;
    }
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap_or_default());
    let v = bench_with_path("sops", Some(path));
    assert_eq!(table_ids(&v), ["sops"]);
    let t = &v["tables"][0];
    assert!(t["error"].is_null(), "sops failed: {}", t["error"]);
    let sections = t["sections"].as_array().unwrap();
    // The re-key against updatekeys, and the rotation against sops rotate.
    assert_eq!(sections.len(), 2, "the table measured nothing");
    for s in sections {
        assert_eq!(s["rows"].as_array().unwrap().len(), 2, "{}", s["title"]);
    }
}
