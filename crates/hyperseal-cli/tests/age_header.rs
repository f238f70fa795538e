//! Detached headers against the real age v1.3.1: `age-header` (tests/support/age_header, `make
//! age-header`) runs age's own `ExtractHeader` and `DecryptHeader` over every C2SP CCTV vector,
//! and `hyperseal header extract` / `header decrypt` must agree with it byte for byte: the same
//! header where age extracts one, the same file key where age opens the header, a refusal
//! where age refuses. Where age opens the whole file with that key
//! (`NewInjectedFileKeyIdentity`), `hyperseal decrypt --file-key-fd` gives the same plaintext.
//! Then the command line's own rules: a key never to a terminal, only the descriptor named.
//! Without `.tools/bin/age-header` the vector test prints a note and passes.

use std::fs;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use base64::Engine;

use crate::common;
use common::{hs, keypair, ok, peer};

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");
const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../hyperseal/tests/data/age-testkit");

/// `hyperseal ARGS` with descriptor 3 of the child open on `fd3` (read or write).
fn hs_fd3(args: &[&str], fd3: &fs::File) -> Output {
    let fd = fd3.as_raw_fd();
    let mut c = Command::new(HS);
    c.args(args).stdin(Stdio::null());
    // Descriptor 3 in the child is `fd3`: duplicated there between fork and exec.
    use std::os::unix::process::CommandExt;
    // SAFETY: dup2 and fcntl are async-signal-safe, the only calls made between fork and exec.
    // When `fd3` already is descriptor 3, dup2 leaves its close-on-exec flag: cleared by hand.
    unsafe {
        c.pre_exec(move || {
            let r = match fd {
                3 => libc::fcntl(3, libc::F_SETFD, 0),
                _ => libc::dup2(fd, 3),
            };
            match r {
                -1 => Err(std::io::Error::last_os_error()),
                _ => Ok(()),
            }
        });
    }
    c.output().unwrap()
}

fn header_decrypt(dir: &Path, name: &str, v: &serde_json::Value, header: &Path) -> (Output, Vec<u8>) {
    let mut args = vec!["header".to_string(), "decrypt".into(), "--file-key-fd".into(), "3".into()];
    if let Some(p) = v["passphrase"].as_str() {
        let pf = dir.join(format!("{name}.pass"));
        fs::write(&pf, format!("{p}\n")).unwrap();
        args.extend(["--passphrase-file".into(), pf.to_str().unwrap().to_string()]);
    }
    let ids: Vec<&str> = v["identities"]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap()).collect())
        .unwrap_or_default();
    if !ids.is_empty() {
        let idf = dir.join(format!("{name}.key"));
        fs::write(&idf, ids.join("\n") + "\n").unwrap();
        args.extend(["-i".into(), idf.to_str().unwrap().to_string()]);
    }
    args.push(header.to_str().unwrap().to_string());
    let key_path = dir.join(format!("{name}.filekey"));
    let sink = fs::File::create(&key_path).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = hs_fd3(&args, &sink);
    (out, fs::read(&key_path).unwrap())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn every_cctv_vector_matches_age() {
    let Some(judge) = peer("age-header") else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = fs::read_dir(VECTORS)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".md"))
        .collect();
    names.sort();
    let mut cmd = Command::new(judge);
    cmd.arg(dir.path());
    cmd.args(names.iter().map(|n| format!("{VECTORS}/{n}")));
    let judged = cmd.output().unwrap();
    assert!(judged.status.success(), "age-header: {}", String::from_utf8_lossy(&judged.stderr));
    let lines: Vec<serde_json::Value> = judged
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), names.len());

    let (mut headers, mut keys, mut payloads, mut stricter) = (0, 0, 0, Vec::new());
    for v in &lines {
        let name = v["name"].as_str().unwrap();
        let file = dir.path().join(format!("{name}.age"));
        let ours = hs(&["header", "extract", file.to_str().unwrap()], None);
        let theirs =
            v["header"].as_str().map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap());
        match (&theirs, ours.status.success()) {
            (Some(h), true) => {
                assert_eq!(&ours.stdout, h, "{name}: the extracted headers differ");
                headers += 1;
            }
            // hyperseal's header reader refuses at once some headers that age parses but then
            // cannot open (a passphrase stanza beside another): allowed only where age's
            // DecryptHeader refuses the header too.
            (Some(_), false) => {
                assert!(
                    v["file_key"].is_null(),
                    "{name}: age opens the header, hyperseal cannot extract it: {}",
                    String::from_utf8_lossy(&ours.stderr)
                );
                stricter.push(name.to_string());
                continue;
            }
            (None, ours_ok) => assert!(
                !ours_ok,
                "{name}: age refuses to extract a header ({}), hyperseal did not",
                v["extract_error"]
            ),
        }
        let Some(h) = theirs else { continue };
        let header = dir.path().join(format!("{name}.header"));
        fs::write(&header, &h).unwrap();
        let (out, key) = header_decrypt(dir.path(), name, v, &header);
        match v["file_key"].as_str() {
            Some(k) => {
                assert!(
                    out.status.success(),
                    "{name}: age opens the header, hyperseal: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(hex(&key), k, "{name}: the file keys differ");
                keys += 1;
            }
            None => {
                assert!(
                    !out.status.success(),
                    "{name}: age refuses the header ({}), hyperseal opened it",
                    v["decrypt_error"]
                );
                assert!(key.is_empty(), "{name}: a refused header wrote a key");
                continue;
            }
        }
        // The payload, opened with the key alone.
        let key_file = fs::File::open(dir.path().join(format!("{name}.filekey"))).unwrap();
        let opened = hs_fd3(&["decrypt", "--file-key-fd", "3", file.to_str().unwrap()], &key_file);
        match fs::read(dir.path().join(format!("{name}.plain"))) {
            Ok(plain) => {
                assert!(
                    opened.status.success(),
                    "{name}: age opens the file with the key, hyperseal: {}",
                    String::from_utf8_lossy(&opened.stderr)
                );
                assert_eq!(opened.stdout, plain, "{name}: the plaintexts differ");
                payloads += 1;
            }
            Err(_) => {
                assert!(!opened.status.success(), "{name}: age refuses the payload, hyperseal opened it")
            }
        }
    }
    eprintln!(
        "{headers} headers, {keys} file keys and {payloads} payloads as age's, of {} vectors; \
         refused at extraction where age refuses later: {stricter:?}",
        lines.len()
    );
    // The counts of this vector set (143 vectors): a change in either tool shows here.
    assert_eq!((headers, keys, payloads), (84, 39, 19), "vectors reaching each step");
}

#[test]
fn a_hyperseal_file_round_trips_through_a_detached_header() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "me", "hybrid");
    let plain = common::data(300_000, 7);
    let src = dir.path().join("p.bin");
    fs::write(&src, &plain).unwrap();
    let file = dir.path().join("f.hs");
    ok(&hs(&["encrypt", "-r", &public, "-o", file.to_str().unwrap(), src.to_str().unwrap()], None));
    let header = dir.path().join("h");
    ok(&hs(&["header", "extract", file.to_str().unwrap(), "-o", header.to_str().unwrap()], None));
    let h = fs::read(&header).unwrap();
    assert!(fs::read(&file).unwrap().starts_with(&h));
    let key_path = dir.path().join("k.bin");
    let out = hs_fd3(
        &["header", "decrypt", "-i", &key, header.to_str().unwrap(), "--file-key-fd", "3"],
        &fs::File::create(&key_path).unwrap(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "the key goes to the descriptor alone");
    assert_eq!(fs::read(&key_path).unwrap().len(), 32, "a hyperseal file key is 32 bytes");
    let dest = dir.path().join("out");
    let out = hs_fd3(
        &["decrypt", "--file-key-fd", "3", "-o", dest.to_str().unwrap(), file.to_str().unwrap()],
        &fs::File::open(&key_path).unwrap(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(fs::read(&dest).unwrap(), plain);

    // A key of another file is refused before any output exists.
    let other = dir.path().join("g.hs");
    ok(&hs(&["encrypt", "-r", &public, "-o", other.to_str().unwrap(), src.to_str().unwrap()], None));
    let dest2 = dir.path().join("out2");
    let out = hs_fd3(
        &["decrypt", "--file-key-fd", "3", "-o", dest2.to_str().unwrap(), other.to_str().unwrap()],
        &fs::File::open(&key_path).unwrap(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("does not open this file") && err.contains("hint:"),
        "{err}"
    );
    assert!(!dest2.exists());

    // Bytes that are no key: their count is said, never their value.
    let bad = dir.path().join("bad");
    fs::write(&bad, b"0123456789abcdefX").unwrap();
    let out =
        hs_fd3(&["decrypt", "--file-key-fd", "3", file.to_str().unwrap()], &fs::File::open(&bad).unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("17 bytes") && !err.contains("0123"), "{err}");

    // A closed standard output (which the program sees as /dev/null) or /dev/null itself: the
    // key would go nowhere, so the command fails instead of reporting success.
    for redirect in [">&-", ">/dev/null"] {
        let cmd = format!("\"$0\" header decrypt -i \"$1\" \"$2\" --file-key-fd 1 {redirect}");
        let out = Command::new("sh")
            .args(["-c", &cmd, HS, &key, header.to_str().unwrap()])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("written nowhere") && err.contains("hint:"),
            "{redirect}: {err}"
        );
    }

    // A descriptor that is not open, and identities beside a file key.
    let out = hs(&["header", "decrypt", "-i", &key, header.to_str().unwrap(), "--file-key-fd", "9"], None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("descriptor 9"));
    let out = hs(&["decrypt", "--file-key-fd", "3", "-i", &key, file.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn armored_files_are_refused_as_age_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keypair(dir.path(), "me", "x25519");
    let armored = ok(&hs(&["encrypt", "-a", "-r", &public], Some(b"hello")));
    let out = hs(&["header", "extract"], Some(armored.as_bytes()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("hyperseal: error:") && err.contains("hint:"), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
}

#[test]
fn a_file_key_never_goes_to_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "me", "x25519");
    let file = dir.path().join("f.hs");
    ok(&hs(&["encrypt", "-r", &public, "-o", file.to_str().unwrap()], Some(b"secret")));
    // A pseudo-terminal as descriptor 3, for writing the key (header decrypt) and for reading
    // one (decrypt): both refused, and nothing reaches the terminal.
    let script = r#"
import os, pty, select, subprocess, sys
hs, ident, f = sys.argv[1:4]
m, s = pty.openpty()
os.set_blocking(m, False)
for args in ([hs, "header", "decrypt", "-i", ident, f], [hs, "decrypt", f]):
    r = subprocess.run(args + ["--file-key-fd", str(s)], pass_fds=(s,), capture_output=True)
    shown = b""
    while select.select([m], [], [], 0.2)[0]:
        shown += os.read(m, 4096)
    print(r.returncode, len(shown), r.stderr.decode().replace("\n", " | "))
"#;
    let out =
        Command::new("python3").args(["-c", script, HS, &key, file.to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for l in lines {
        assert!(l.starts_with("1 0 ") && l.contains("is a terminal") && l.contains("hint:"), "{l}");
    }
}
