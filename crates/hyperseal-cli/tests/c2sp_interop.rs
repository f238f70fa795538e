//! `--format c2sp-chunked` against the real pyca/cryptography (`cryptography.cobblestone`,
//! version pinned in requirements-test.txt, installed into `.tools/venv` by `make venv`):
//! messages made by either side open with the other, for both key sizes, with and without a
//! context, at sizes around the 16 KiB chunk boundary and at 10 MiB; and every kind of damage to
//! a pyca message is rejected by hyperseal on every decrypt path (and by pyca too, which shows the
//! damage is real). The Python side is `tests/c2sp_peer.py`, run once per batch of jobs.
//! Without the venv every test prints a note and passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::{hs, peak};

const VENV_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.tools/venv/bin/python");
const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c2sp_peer.py");
const CHUNK: usize = 16 << 10;
const WIRE: usize = CHUNK + 16;
const HEADER: usize = 56;
const SIZES: [usize; 7] = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 500, 10 << 20];
const CONTEXTS: [&str; 2] = ["", "6332737020746573740063747821"]; // "c2sp test\0ctx!"

fn python() -> Option<&'static str> {
    if Path::new(VENV_PYTHON).exists() {
        Some(VENV_PYTHON)
    } else {
        eprintln!("note: {VENV_PYTHON} missing (run `make venv`); skipping the pyca interop test");
        // `make test` sets this: there a missing peer is a failure, never a quiet skip.
        assert!(std::env::var_os("HYPERSEAL_REQUIRE_PEERS").is_none(), "a peer is missing under make test");
        None
    }
}

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 65521) as u8).collect()
}

/// One job for the Python side.
struct Job {
    op: &'static str,
    key: Vec<u8>,
    context: &'static str,
    input: PathBuf,
    output: PathBuf,
    piece: usize,
}

/// Runs every job in one Python process; returns each job's result ("ok" or the exception).
fn pyca(py: &str, dir: &Path, jobs: &[Job]) -> Vec<String> {
    let list: Vec<serde_json::Value> = jobs
        .iter()
        .map(|j| {
            serde_json::json!({"op": j.op, "key": hex(&j.key), "context": j.context,
                "input": j.input, "output": j.output, "piece": j.piece})
        })
        .collect();
    let (jobs_file, results_file) = (dir.join("jobs.json"), dir.join("results.json"));
    fs::write(&jobs_file, serde_json::to_vec(&list).unwrap()).unwrap();
    let o = Command::new(py)
        .args([PEER.as_ref(), jobs_file.as_os_str(), results_file.as_os_str()])
        .output()
        .unwrap();
    assert!(o.status.success(), "c2sp_peer.py failed: {}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&fs::read(results_file).unwrap()).unwrap();
    let version = r["version"].as_str().unwrap();
    assert!(version.split('.').next().unwrap().parse::<u32>().unwrap() >= 50, "pyca {version}");
    r["results"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn key_file(dir: &Path, len: usize) -> (PathBuf, Vec<u8>) {
    let key: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(73).wrapping_add(len as u8)).collect();
    let path = dir.join(format!("key{len}"));
    fs::write(&path, &key).unwrap();
    (path, key)
}

fn args<'a>(verb: &'a str, key: &'a Path, ctx: &'a str) -> Vec<&'a str> {
    let mut a = vec![verb, "--format", "c2sp-chunked", "--key-file", key.to_str().unwrap()];
    if !ctx.is_empty() {
        a.extend(["--context", ctx]);
    }
    a
}

fn sealed_len(n: usize) -> usize {
    HEADER + n + (n / CHUNK + 1) * 16
}

#[test]
fn pyca_and_hyperseal_open_each_others_messages() {
    let Some(py) = python() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let (mut to_pyca, mut checks) = (Vec::new(), Vec::new());
    let mut case = 0;
    for key_len in [16, 32] {
        let (kf, key) = key_file(dir, key_len);
        for ctx in CONTEXTS {
            for n in SIZES {
                case += 1;
                let plain = dir.join(format!("{case}.plain"));
                fs::write(&plain, data(n)).unwrap();
                // hyperseal → pyca: with all threads and with one.
                let ours = dir.join(format!("{case}.hs"));
                let threads = if case % 2 == 0 { "1" } else { "4" };
                let mut a = args("encrypt", &kf, ctx);
                a.extend(["--threads", threads, "-o", ours.to_str().unwrap(), plain.to_str().unwrap()]);
                common::ok(&hs(&a, None));
                assert_eq!(fs::metadata(&ours).unwrap().len() as usize, sealed_len(n));
                let op = |op, input: &Path, output: PathBuf, piece| Job {
                    op,
                    key: key.clone(),
                    context: ctx,
                    input: input.to_path_buf(),
                    output,
                    piece,
                };
                to_pyca.push(op("decrypt", &ours, dir.join(format!("{case}.hs.out")), 7000));
                // pyca → hyperseal (made in the first batch below).
                to_pyca.push(op("encrypt", &plain, dir.join(format!("{case}.py")), 5000));
                checks.push((case, n, kf.clone(), ctx));
            }
        }
    }
    let results = pyca(py, dir, &to_pyca);
    assert!(results.iter().all(|r| r == "ok"), "{results:?}");
    for (case, n, kf, ctx) in checks {
        let want = data(n);
        assert_eq!(
            fs::read(dir.join(format!("{case}.hs.out"))).unwrap(),
            want,
            "pyca opened ours, case {case}"
        );
        let theirs = dir.join(format!("{case}.py"));
        assert_eq!(fs::metadata(&theirs).unwrap().len() as usize, sealed_len(n));
        let out = dir.join(format!("{case}.py.out"));
        let mut a = args("decrypt", &kf, ctx);
        a.extend(["-o", out.to_str().unwrap(), theirs.to_str().unwrap()]);
        common::ok(&hs(&a, None));
        assert_eq!(fs::read(&out).unwrap(), want, "we opened pyca's, case {case}");
        // Through stdin on one thread, and through the seekable reader from the middle.
        let mut a = args("decrypt", &kf, ctx);
        a.extend(["--threads", "1"]);
        let o = hs(&a, Some(&fs::read(&theirs).unwrap()));
        assert!(o.status.success() && o.stdout == want, "stdin, case {case}");
        let mut a = args("decrypt", &kf, ctx);
        a.extend(["--offset", "16000", "--length", "20000", theirs.to_str().unwrap()]);
        let o = hs(&a, None);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, want[n.min(16000)..n.min(36000)], "range, case {case}");
    }
}

/// Damaged copies of a three-chunk pyca message, each with what was done to it.
fn damaged(ct: &[u8], other: &[u8]) -> Vec<(String, Vec<u8>)> {
    let at = |i: usize| HEADER + i * WIRE;
    let cat = |parts: &[&[u8]]| parts.concat();
    let mut v = Vec::new();
    for (what, pos) in [
        ("salt", 0),
        ("commitment", 30),
        ("chunk 0", at(0) + 100),
        ("chunk 0 tag", at(1) - 1),
        ("chunk 1", at(1)),
        ("chunk 1 tag", at(2) - 16),
        ("final chunk", at(2) + 3),
        ("final chunk tag", ct.len() - 1),
    ] {
        let mut c = ct.to_vec();
        c[pos] ^= 0x01;
        v.push((format!("flipped byte in the {what}"), c));
    }
    for len in [0, HEADER - 1, HEADER, at(1) - 1, at(1), at(2) - 1, at(2), at(2) + 15, ct.len() - 1] {
        v.push((format!("truncated to {len} bytes"), ct[..len].to_vec()));
    }
    let (c0, c1, fin) = (&ct[at(0)..at(1)], &ct[at(1)..at(2)], &ct[at(2)..]);
    let head = &ct[..HEADER];
    v.push(("chunk 0 dropped".into(), cat(&[head, c1, fin])));
    v.push(("chunk 1 dropped".into(), cat(&[head, c0, fin])));
    v.push(("chunks 0 and 1 swapped".into(), cat(&[head, c1, c0, fin])));
    v.push(("chunk 1 and the final chunk swapped".into(), cat(&[head, c0, fin, c1])));
    v.push(("chunk 0 appended".into(), cat(&[ct, c0])));
    v.push(("final chunk appended again".into(), cat(&[ct, fin])));
    v.push(("20 bytes appended".into(), cat(&[ct, &[0u8; 20]])));
    v.push(("another message appended".into(), cat(&[ct, other])));
    v.push(("chunk 1 from another message".into(), cat(&[head, c0, &other[at(1)..at(2)], fin])));
    v.push(("header from another message".into(), cat(&[&other[..HEADER], &ct[HEADER..]])));
    v
}

#[test]
fn hyperseal_rejects_every_kind_of_damage() {
    let Some(py) = python() else { return };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let plain = dir.join("plain");
    let want = data(2 * CHUNK + 500);
    fs::write(&plain, &want).unwrap();
    for key_len in [16, 32] {
        let (kf, key) = key_file(dir, key_len);
        let ctx = CONTEXTS[1];
        let job = |op, input: PathBuf, output: PathBuf| Job {
            op,
            key: key.clone(),
            context: ctx,
            input,
            output,
            piece: 0,
        };
        let made = [dir.join("a.py"), dir.join("b.py")];
        let r = pyca(
            py,
            dir,
            &[job("encrypt", plain.clone(), made[0].clone()), job("encrypt", plain.clone(), made[1].clone())],
        );
        assert_eq!(r, ["ok", "ok"]);
        let (ct, other) = (fs::read(&made[0]).unwrap(), fs::read(&made[1]).unwrap());

        let mut cases = damaged(&ct, &other);
        let mut wrong = Vec::new(); // (what, key file, context) on the intact message
        let other_key = dir.join(format!("other{key_len}"));
        fs::write(&other_key, vec![0x5a; key_len]).unwrap();
        let half_key = dir.join("half");
        fs::write(&half_key, &key[..16]).unwrap();
        wrong.push(("wrong key", other_key.clone(), ctx));
        wrong.push(("wrong context", kf.clone(), "00"));
        wrong.push(("no context", kf.clone(), ""));
        if key_len == 32 {
            wrong.push(("the 16-byte half of the key", half_key.clone(), ctx));
        }

        // pyca rejects every damaged copy too: the damage is real.
        let files: Vec<PathBuf> = (0..cases.len()).map(|i| dir.join(format!("bad{i}"))).collect();
        let mut jobs = Vec::new();
        for ((_, c), f) in cases.iter().zip(&files) {
            fs::write(f, c).unwrap();
            jobs.push(job("decrypt", f.clone(), f.with_extension("pyout")));
        }
        let r = pyca(py, dir, &jobs);
        for ((what, _), res) in cases.iter().zip(&r) {
            assert_ne!(res, "ok", "pyca accepted: {what}");
        }

        let mut runs: Vec<(String, PathBuf, PathBuf, &str)> = Vec::new();
        for ((what, _), f) in cases.drain(..).zip(&files) {
            runs.push((what, f.clone(), kf.clone(), ctx));
        }
        for (what, k, c) in wrong {
            runs.push((what.to_string(), made[0].clone(), k, c));
        }
        for (what, file, k, c) in &runs {
            let what = format!("{what} ({key_len}-byte key)");
            // To a file: fails with one error line, and leaves no file behind.
            let out = dir.join("out");
            let mut a = args("decrypt", k, c);
            a.extend(["-o", out.to_str().unwrap(), file.to_str().unwrap()]);
            let o = hs(&a, None);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "accepted: {what}");
            assert!(err.starts_with("hyperseal: error: "), "{what}: {err}");
            assert!(
                !out.exists()
                    && fs::read_dir(dir)
                        .unwrap()
                        .all(|e| { !e.unwrap().file_name().to_string_lossy().ends_with(".partial") }),
                "{what}: output left behind"
            );
            // To stdout, one thread and several: only authenticated whole chunks come out.
            for threads in ["1", "3"] {
                let mut a = args("decrypt", k, c);
                a.extend(["--threads", threads, file.to_str().unwrap()]);
                let o = hs(&a, None);
                assert_eq!(o.status.code(), Some(1), "accepted on stdout: {what}");
                assert!(
                    o.stdout.len().is_multiple_of(CHUNK) && want.starts_with(&o.stdout),
                    "{what}: released bad bytes"
                );
            }
            // Random access: the reader checks the commitment, the length and the final chunk.
            let mut a = args("decrypt", k, c);
            a.extend(["--offset", "0", file.to_str().unwrap()]);
            let o = hs(&a, None);
            assert_eq!(o.status.code(), Some(1), "accepted by the reader: {what}");
            assert!(want.starts_with(&o.stdout), "{what}: reader released bad bytes");
        }
    }
}

/// 1 GiB through `encrypt | decrypt` on every core: both processes stay under 64 MiB resident
/// (the pipeline holds `threads + 2` batches of about 2 MiB), and every byte comes back.
#[test]
fn c2sp_streams_run_in_constant_memory() {
    if !peak::fresh() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (kf, _) = key_file(d.path(), 32);
    let mut enc = args("encrypt", &kf, "00");
    enc.push("-q");
    let mut dec = args("decrypt", &kf, "00");
    dec.push("-q");
    let (e, d) = peak::pipeline(&enc, &dec, 1 << 30);
    assert!(e < 64.0 && d < 64.0, "peak RSS: encrypt {e:.1} MiB, decrypt {d:.1} MiB");
}
