//! Interoperability with the real age (v1.3.1, installed into `.tools/bin` by `make test`):
//! files made by either tool must open with the other, for X25519 and mlkem768x25519 keys,
//! armored or not, at sizes around the 64 KiB chunk boundary, with several recipients per file
//! and identity files holding several identities and comments. Passphrase (scrypt) files go
//! through `age-plugin-batchpass`, which age v1.3 ships for non-interactive use.
//! Without `.tools/bin/age` every test prints a note and passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::peer;

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");
const SIZES: [usize; 6] = [0, 1, 65535, 65536, 65537, 2 * 65536 + 500];

use common::peer_run as run;

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 65536) as u8).collect()
}

struct Keys {
    /// One identity file with several identities and comments, and the recipients it holds.
    ids: String,
    recipients: Vec<String>,
}

/// Two keys of one kind (one from age-keygen, one from hyperseal keygen) in one identity file.
fn keys(dir: &Path, pq: bool) -> Keys {
    let keygen = peer("age-keygen").unwrap();
    let tag = if pq { "pq" } else { "x25519" };
    let a = dir.join(format!("age-{tag}.key"));
    let mut args = vec!["-o", a.to_str().unwrap()];
    if pq {
        args.insert(0, "-pq");
    }
    run(&keygen, &args, &[]);
    let h = dir.join(format!("hs-{tag}.key"));
    run(
        Path::new(HS),
        &["keygen", "--kind", if pq { "hybrid" } else { "x25519" }, "-o", h.to_str().unwrap()],
        &[],
    );
    let mut recipients = Vec::new();
    for k in [&a, &h] {
        let out = run(&keygen, &["-y", k.to_str().unwrap()], &[]);
        recipients.push(String::from_utf8(out.stdout).unwrap().trim().to_string());
    }
    let both = dir.join(format!("both-{tag}.keys"));
    let text = format!(
        "# identities for the interop test\n\n{}\n# a comment between identities\n{}\n",
        fs::read_to_string(&a).unwrap(),
        fs::read_to_string(&h).unwrap()
    );
    fs::write(&both, text).unwrap();
    Keys { ids: both.to_str().unwrap().to_string(), recipients }
}

/// `hyperseal decrypt -q ID… -o OUT CT` (`id`: the identity arguments), asserted to succeed:
/// what it wrote.
fn hs_open(id: &[&str], ct: &Path, out: &Path) -> Vec<u8> {
    let mut args = vec!["decrypt", "-q"];
    args.extend(id);
    args.extend(["-o", out.to_str().unwrap(), ct.to_str().unwrap()]);
    run(Path::new(HS), &args, &[]);
    fs::read(out).unwrap()
}

/// Two keys of one kind (post-quantum with `pq`) through [`check_both_directions`].
fn keys_both_directions(pq: bool, label: &str) {
    if peer("age").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let k = keys(dir.path(), pq);
    check_both_directions(dir.path(), &k, label);
}

fn check_both_directions(dir: &Path, k: &Keys, label: &str) {
    let age = peer("age").unwrap();
    for &n in &SIZES {
        let plain = dir.join("plain");
        fs::write(&plain, data(n)).unwrap();
        for armor in [false, true] {
            let (ct, out) = (dir.join("ct"), dir.join("out"));
            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            let a: &[&str] = if armor { &["-a"] } else { &[] };
            let mut rs = Vec::new();
            for r in &k.recipients {
                rs.extend(["-r", r.as_str()]);
            }

            // hyperseal → age
            let mut args = vec!["encrypt", "--format", "age", "-q", "-o", ct.to_str().unwrap()];
            args.extend(a);
            args.extend(&rs);
            args.push(plain.to_str().unwrap());
            run(Path::new(HS), &args, &[]);
            run(&age, &["-d", "-i", &k.ids, "-o", out.to_str().unwrap(), ct.to_str().unwrap()], &[]);
            assert_eq!(fs::read(&out).unwrap(), data(n), "{label} hyperseal→age n={n} armor={armor}");

            // age → hyperseal
            let _ = (fs::remove_file(&ct), fs::remove_file(&out));
            let mut args = vec!["-e", "-o", ct.to_str().unwrap()];
            args.extend(a);
            args.extend(&rs);
            args.push(plain.to_str().unwrap());
            run(&age, &args, &[]);
            let opened = hs_open(&["-i", &k.ids], &ct, &out);
            assert_eq!(opened, data(n), "{label} age→hyperseal n={n} armor={armor}");
        }
    }
    // Each identity alone opens a file made for both recipients, in both tools.
    let plain = dir.join("plain");
    fs::write(&plain, data(1000)).unwrap();
    let ct = dir.join("multi");
    let (rs, c) = (&k.recipients, ct.to_str().unwrap());
    run(&age, &["-e", "-r", &rs[0], "-r", &rs[1], "-o", c, plain.to_str().unwrap()], &[]);
    let singles: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "key"))
        .collect();
    assert_eq!(singles.len(), 2, "{singles:?}");
    for (i, single) in singles.iter().enumerate() {
        let out = dir.join(format!("multi-out-{i}"));
        assert_eq!(hs_open(&["-i", single.to_str().unwrap()], &ct, &out), data(1000));
    }
}

#[test]
fn x25519_both_directions() {
    keys_both_directions(false, "x25519");
}

#[test]
fn mlkem768x25519_both_directions() {
    keys_both_directions(true, "pq");
}

#[test]
fn scrypt_both_directions() {
    let Some(age) = peer("age") else { return };
    if peer("age-plugin-batchpass").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pass = "correct horse battery staple";
    let pass_file = d.join("pass");
    fs::write(&pass_file, format!("{pass}\n")).unwrap();
    let env = [("AGE_PASSPHRASE", pass), ("AGE_PASSPHRASE_WORK_FACTOR", "12")];
    for &n in &[0usize, 65537] {
        let plain = d.join("plain");
        fs::write(&plain, data(n)).unwrap();
        for armor in [false, true] {
            let (ct, out) = (d.join(format!("ct{n}{armor}")), d.join(format!("out{n}{armor}")));
            let mut args =
                vec!["encrypt", "--format", "age", "-q", "--passphrase-file", pass_file.to_str().unwrap()];
            if armor {
                args.push("-a");
            }
            args.extend(["-o", ct.to_str().unwrap(), plain.to_str().unwrap()]);
            run(Path::new(HS), &args, &[]);
            let head = fs::read(&ct).unwrap();
            assert!(armor || head.starts_with(b"age-encryption.org/v1\n-> scrypt "));
            run(&age, &["-d", "-j", "batchpass", "-o", out.to_str().unwrap(), ct.to_str().unwrap()], &env);
            assert_eq!(fs::read(&out).unwrap(), data(n), "hyperseal→age scrypt n={n} armor={armor}");

            let (ct, out) = (d.join(format!("act{n}{armor}")), d.join(format!("aout{n}{armor}")));
            let mut args = vec!["-e", "-j", "batchpass", "-o", ct.to_str().unwrap()];
            if armor {
                args.push("-a");
            }
            args.push(plain.to_str().unwrap());
            run(&age, &args, &env);
            let opened = hs_open(&["--passphrase-file", pass_file.to_str().unwrap()], &ct, &out);
            assert_eq!(opened, data(n), "age→hyperseal scrypt n={n} armor={armor}");
        }
    }
    // A wrong passphrase is refused, and nothing is written.
    let ct = d.join("act0false");
    fs::write(&pass_file, "wrong\n").unwrap();
    let out = d.join("never");
    let (pf, o, c) = (pass_file.to_str().unwrap(), out.to_str().unwrap(), ct.to_str().unwrap());
    let o = Command::new(HS).args(["decrypt", "--passphrase-file", pf, "-o", o, c]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("incorrect passphrase"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.exists());
}
