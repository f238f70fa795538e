//! Command-line edges: usage errors (exit 2, one `hyperseal: error:` line and at most one hint),
//! `--threads` bounds, OS causes in messages, a reader that goes away, and `inspect` on a cut
//! file.

use std::fs;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common;
use common::{hs, ok, peak, stderr};

/// A usage error: status 2, and stderr is one error line plus at most one hint line.
fn assert_usage_error(args: &[&str]) -> String {
    let o = hs(args, Some(b"x"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.len() == 1 || lines.len() == 2, "{args:?}: {err}");
    assert!(lines[0].starts_with("hyperseal: error: "), "{args:?}: {err}");
    if let Some(h) = lines.get(1) {
        assert!(h.starts_with("hyperseal: hint: "), "{args:?}: {err}");
    }
    assert!(o.stdout.is_empty(), "{args:?}");
    err
}

fn keypair(dir: &Path) -> (String, String) {
    let key = dir.join("k.key");
    ok(&hs(&["keygen", "--kind", "x25519", "-o", key.to_str().unwrap()], None));
    let public = ok(&hs(&["pubkey", "-i", key.to_str().unwrap()], None)).trim().to_string();
    (key.to_str().unwrap().to_string(), public)
}

#[test]
fn invalid_values_and_unknown_flags_are_usage_errors() {
    let r = "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq";
    for args in [
        &["encrypt", "-r", r, "--chunk-size", "0"][..],
        &["encrypt", "-r", r, "--chunk-size", "-1"],
        &["encrypt", "-r", r, "--chunk-size", "100K"],
        &["encrypt", "-r", r, "--chunk-size", "32M"],
        &["encrypt", "-r", r, "--suite", "foo"],
        &["encrypt", "-r", r, "--format", "foo"],
        &["encrypt", "-r", r, "--bogus"],
        &["decrypt", "--offset", "-1", "f"],
        &["keygen", "--kind", "nope"],
        &["hash", "--algo", "md4"],
        &["mac", "--algo", "hmac-md4", "--key-file", "k"],
        &["kdf", "--algo", "bcrypt"],
        &["token", "seal", "--key", "k", "--suite", "aes-128-gcm"],
        &["token", "seal", "--key", "k", "--ttl", "forever"],
        &["verify", "--pubkey", "p", "--sig", "s", "--rsa-padding", "none", "f"],
        &["frobnicate"],
    ] {
        assert_usage_error(args);
    }
    // clap's multi-line text is gone, but its hints stay (one line).
    let err = assert_usage_error(&["encrypt", "--forse"]);
    assert!(err.contains("hint: ") && err.contains("--force"), "{err}");
    // --help and --version are not errors.
    for args in [&["--help"][..], &["--version"], &["encrypt", "--help"]] {
        let o = hs(args, None);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(!o.stdout.is_empty() && o.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn conflicting_options_are_rejected() {
    let d = tempfile::tempdir().unwrap();
    let pass = d.path().join("pass");
    fs::write(&pass, "pw\n").unwrap();
    let p = pass.to_str().unwrap();
    let r = "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq";
    for args in [
        &["encrypt", "-p", "--passphrase-file", p][..],
        &["encrypt", "--passphrase-file", p, "-r", r],
        &["encrypt", "-p", "-R", p],
        &["encrypt", "--format", "age", "--suite", "aes-256-gcm", "-r", r],
        &["encrypt", "--format", "age", "--chunk-size", "1M", "-r", r],
        &["encrypt"],
        &["hash", "--check", p, "other-file"],
        &["hash", "--check", p, "--tag"],
    ] {
        assert_usage_error(args);
    }
}

#[test]
fn threads_are_bounded_for_every_subcommand() {
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keypair(d.path());
    let input = d.path().join("in");
    fs::write(&input, vec![5u8; 200_000]).unwrap();
    let enc = d.path().join("in.hs");
    for bad in ["99999999999", "18446744073709551615", "18446744073709551616", "257", "-1", "many"] {
        let err = assert_usage_error(&["encrypt", "-r", &public, "--threads", bad, input.to_str().unwrap()]);
        assert!(err.contains("--threads"), "{err}");
        assert_usage_error(&["decrypt", "-i", &key, "--threads", bad, input.to_str().unwrap()]);
    }
    // 0 (all cores), 1 and the cap all work, and agree.
    for t in ["0", "1", "256"] {
        ok(&hs(
            &["encrypt", "-r", &public, "--threads", t, "-o", enc.to_str().unwrap(), input.to_str().unwrap()],
            None,
        ));
        let o = hs(&["decrypt", "-i", &key, "--threads", t, enc.to_str().unwrap()], None);
        assert_eq!(o.stdout, fs::read(&input).unwrap(), "--threads {t}");
        fs::remove_file(&enc).unwrap();
    }
}

/// The largest accepted --threads keeps the constant-memory bound (256 workers used to hold
/// ~310 MiB of chunks in flight).
#[test]
fn most_threads_stay_within_64_mib() {
    if !peak::fresh() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keypair(d.path());
    let enc = ["encrypt", "-q", "--threads", "256", "-r", &public];
    let dec = ["decrypt", "-q", "--threads", "256", "-i", &key];
    let (e, d) = peak::pipeline(&enc, &dec, 256 << 20);
    assert!(e < 64.0 && d < 64.0, "--threads 256: peak RSS encrypt {e:.1} MiB, decrypt {d:.1} MiB");
}

#[test]
fn cannot_open_names_the_os_cause() {
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keypair(d.path());
    let missing = d.path().join("nonexist");
    let m = missing.to_str().unwrap();
    for args in [&["encrypt", "-r", &public, m][..], &["decrypt", "-i", &key, m], &["inspect", m]] {
        let o = hs(args, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&o).lines().next().unwrap(),
            format!("hyperseal: error: cannot open {m}: No such file or directory"),
            "{args:?}"
        );
    }
    let o = hs(&["decrypt", "-i", m], Some(b""));
    assert!(stderr(&o).contains("No such file or directory"), "{}", stderr(&o));
}

/// `hyperseal … | head -c 10`: the reader leaves, hyperseal ends quietly as coreutils do (killed
/// by SIGPIPE: status 141 in a shell), without an error message.
#[test]
fn a_closed_pipe_ends_quietly() {
    let d = tempfile::tempdir().unwrap();
    let (_, public) = keypair(d.path());
    let big = d.path().join("big");
    fs::write(&big, vec![9u8; 8 << 20]).unwrap();
    let small = d.path().join("small");
    fs::write(&small, b"small").unwrap();
    // More lines than a pipe buffers, so a write must find the pipe closed.
    let files: Vec<String> = (0..5000).map(|_| small.to_str().unwrap().to_string()).collect();
    let mut hash_args = vec!["hash", "--algo", "blake3"];
    hash_args.extend(files.iter().map(String::as_str));
    for args in [vec!["encrypt", "-r", &public, big.to_str().unwrap()], hash_args] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hyperseal"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // The read end is dropped here: the next write hits a closed pipe.
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}: {:?}", args[0], out.status);
        assert_eq!(stderr(&out), "", "{:?}", args[0]);
    }
}

#[test]
fn inspect_flags_a_payload_cut_inside_a_chunk() {
    let d = tempfile::tempdir().unwrap();
    let (_, public) = keypair(d.path());
    let enc = d.path().join("f.hs");
    ok(&hs(
        &["encrypt", "-r", &public, "--chunk-size", "64K", "-o", enc.to_str().unwrap()],
        Some(&[3u8; 100_000]),
    ));
    let whole = fs::read(&enc).unwrap();
    let text = ok(&hs(&["inspect", enc.to_str().unwrap()], None));
    assert!(text.contains("plaintext:    100000 bytes in 2 chunk(s)"), "{text}");
    assert!(text.contains("unauthenticated until the file is decrypted"), "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&ok(&hs(&["inspect", "--json", enc.to_str().unwrap()], None))).unwrap();
    assert_eq!((j["truncated"].as_bool(), j["sizes_authenticated"].as_bool()), (Some(false), Some(false)));

    // Cut eight bytes into the second chunk: shorter than a tag, so no chunking explains it.
    let header = j["header_bytes"].as_u64().unwrap() as usize;
    fs::write(&enc, &whole[..header + 16 + 65_552 + 8]).unwrap();
    let o = hs(&["inspect", enc.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("not a whole number of chunks"), "{out}");
    assert!(!out.contains("65536 bytes in 1 chunk"), "{out}");
    assert!(stderr(&o).starts_with("hyperseal: error: the file is truncated"), "{}", stderr(&o));
    let o = hs(&["inspect", "--json", enc.to_str().unwrap()], None);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["truncated"], true);
    assert!(j.get("sizes").is_none() && j.get("chunks").is_none(), "{j}");
}

/// A missing required argument is named on the error line (clap puts it on a line of its own).
#[test]
fn a_missing_argument_is_named() {
    for (args, name) in [
        (&["header", "decrypt", "-i", "k.key", "h.hdr"][..], "--file-key-fd"),
        (&["agent", "forward"][..], "<NAME>"),
        (&["agent", "remove"][..], "<SELECTORS>"),
    ] {
        let err = assert_usage_error(args);
        assert!(err.lines().next().unwrap().contains(name), "{args:?}: {err}");
    }
}
