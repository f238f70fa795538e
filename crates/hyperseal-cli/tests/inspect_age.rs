//! `hyperseal inspect --json` on age files against the real `age-inspect --json` (age v1.3.1,
//! `.tools/bin` from `make age`): every field age-inspect reports (version, postquantum, armor,
//! stanza_types, sizes) is in hyperseal's output with the same value, for X25519, post-quantum,
//! scrypt and several-recipient files, armored or not, empty or around 64 KiB, made by age or by
//! hyperseal, read from a file or from a pipe. A file cut inside a chunk fails in both.
//! Without `.tools/bin/age-inspect` every test prints a note and passes (as the other age tests).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{peer, tools_path};

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");

/// Runs `program ARGS`, feeding `stdin` (a file's bytes, for the pipe case) when given.
fn run(program: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let path = tools_path();
    let mut child = Command::new(program)
        .args(args)
        .env("PATH", path)
        .env("AGE_PASSPHRASE", "inspect passphrase")
        .env("AGE_PASSPHRASE_WORK_FACTOR", "10")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.map(<[u8]>::to_vec);
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        if let Some(d) = data {
            let _ = input.write_all(&d);
        }
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn json(o: &Output, what: &str) -> serde_json::Value {
    assert!(o.status.success(), "{what}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Asserts that every field of age-inspect's report is in hyperseal's with the same value.
fn same_report(file: &Path, inspect: &Path, label: &str) {
    let f = file.to_str().unwrap();
    let bytes = fs::read(file).unwrap();
    for piped in [false, true] {
        let (args, stdin): (&[&str], _) =
            if piped { (&["--json"], Some(&bytes[..])) } else { (&["--json", f], None) };
        let want = json(&run(inspect, args, stdin), &format!("age-inspect {label}"));
        let mut hs_args = vec!["inspect", "--json"];
        hs_args.push(if piped { "-" } else { f });
        let got = json(&run(Path::new(HS), &hs_args, stdin), &format!("hyperseal inspect {label}"));
        let fields = want.as_object().unwrap();
        assert_eq!(fields.len(), 5, "{label}: age-inspect's fields changed: {want}");
        for (k, v) in fields {
            assert_eq!(&got[k], v, "{label} piped={piped}: field {k}\nage-inspect: {want}\nhyperseal: {got}");
        }
    }
}

#[test]
fn inspect_json_matches_age_inspect() {
    let (Some(age), Some(keygen), Some(inspect)) = (peer("age"), peer("age-keygen"), peer("age-inspect"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let recipient = |name: &str, pq: bool| {
        let key = d.join(name);
        let mut args = vec!["-o", key.to_str().unwrap()];
        if pq {
            args.insert(0, "-pq");
        }
        assert!(run(&keygen, &args, None).status.success());
        let o = run(&keygen, &["-y", key.to_str().unwrap()], None);
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let (x1, x2, pq1, pq2) =
        (recipient("x1", false), recipient("x2", false), recipient("p1", true), recipient("p2", true));
    let kinds: [(&str, Vec<&str>); 5] = [
        ("X25519", vec!["-r", &x1]),
        ("hybrid", vec!["-r", &pq1]),
        ("scrypt", vec!["-e", "-j", "batchpass"]),
        ("X25519 x2", vec!["-r", &x1, "-r", &x2]),
        ("hybrid x2", vec!["-r", &pq1, "-r", &pq2]),
    ];
    let mut checked = 0;
    for (kind, args) in &kinds {
        for n in [0usize, 1, 65536, 65537, 3 * 65536 + 9] {
            let plain = d.join("plain");
            fs::write(&plain, vec![0x5au8; n]).unwrap();
            for armor in [false, true] {
                for (maker, program, prefix) in
                    [("age", &age, &[][..]), ("hyperseal", &PathBuf::from(HS), &["age"][..])]
                {
                    let file = d.join("f.age");
                    let _ = fs::remove_file(&file);
                    let mut a: Vec<&str> = prefix.to_vec();
                    a.extend(args);
                    if armor {
                        a.push("-a");
                    }
                    a.extend(["-o", file.to_str().unwrap(), plain.to_str().unwrap()]);
                    let o = run(program, &a, None);
                    assert!(o.status.success(), "{maker} {a:?}: {}", String::from_utf8_lossy(&o.stderr));
                    same_report(&file, &inspect, &format!("{kind} n={n} armor={armor} by {maker}"));
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 5 * 5 * 2 * 2);
}

/// The verdicts themselves, so a test that compares with age-inspect also pins what it says.
#[test]
fn postquantum_verdicts_and_sizes() {
    let (Some(age), Some(keygen)) = (peer("age"), peer("age-keygen")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("k");
    assert!(run(&keygen, &["-pq", "-o", key.to_str().unwrap()], None).status.success());
    let pq = String::from_utf8(run(&keygen, &["-y", key.to_str().unwrap()], None).stdout).unwrap();
    let file = dir.path().join("f.age");
    let f = file.to_str().unwrap();
    let o = run(&age, &["-r", pq.trim(), "-a", "-o", f], Some(&[7u8; 65537]));
    assert!(o.status.success());
    let j = json(&run(Path::new(HS), &["inspect", "--json", f], None), "inspect");
    assert_eq!(j["postquantum"], "yes");
    assert_eq!(j["post_quantum"], true);
    assert_eq!(j["sizes"]["min_payload"], 65537);
    assert_eq!(j["sizes"]["overhead"], 16 + 2 * 16);
    let total = fs::metadata(&file).unwrap().len();
    let parts: u64 =
        ["header", "armor", "overhead", "min_payload"].iter().map(|k| j["sizes"][k].as_u64().unwrap()).sum();
    assert_eq!(parts, total);

    // Cut to a final chunk shorter than its tag (no file has that length): both tools fail.
    let o = run(&age, &["-r", pq.trim(), "-o", f], Some(&[7u8; 65537]));
    assert!(o.status.success());
    let whole = fs::read(&file).unwrap();
    fs::write(&file, &whole[..whole.len() - 10]).unwrap();
    assert_eq!(run(Path::new(HS), &["inspect", "--json", f], None).status.code(), Some(1));
    if let Some(inspect) = peer("age-inspect") {
        assert_eq!(run(&inspect, &["--json", f], None).status.code(), Some(1));
    }
}
