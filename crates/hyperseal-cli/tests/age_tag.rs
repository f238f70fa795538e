//! age v1.3's tag recipients (`age1tag1…`, `age1tagpq1…`) against the real age v1.3.1, and the
//! native P-256 kinds (`p256`, `p256-mlkem768`) through the CLI.
//!
//! age has no software identity for tag recipients: its own test plugin `age-plugin-tagtest`
//! (built by `make tools` from age v1.3.1) holds two fixed keys. So:
//! * hyperseal → age: hyperseal encrypts to the plugin's two recipients, `age -d -j tagtest`
//!   must decrypt (the only way age can, short of a hardware key);
//! * age → hyperseal: `age -r` encrypts to them, and hyperseal decrypts with the same two keys as
//!   hyperseal identities (`tests/data/age_tagtest_identities.txt`, derived as the plugin derives
//!   them; `recipient::tag` tests check the derivation) — and, for a freshly generated key, to
//!   the `pubkey --age-tag` form of `keygen --kind p256` / `p256-mlkem768`.
//!
//! Armored and not, around 64 KiB (age's chunk size). Without the tools every test prints a
//! note and passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;
use common::peers;

/// age and the tag test plugin.
fn age() -> Option<PathBuf> {
    peers(&["age", "age-plugin-tagtest"])
}

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");
const IDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../hyperseal/tests/data/age_tagtest_identities.txt");
const CLASSIC: &str = "age1tag1qwe0kafsjrar4txm6heqnhpfuggzr0gvznz7fvygxrlq90u5mq2pysxtw6h";
const HYBRID_FILE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../hyperseal/tests/data/age_tagtest_hybrid_recipient.txt");
const SIZES: [usize; 3] = [65535, 65536, 65537];

fn hybrid() -> String {
    fs::read_to_string(HYBRID_FILE).unwrap().trim().to_string()
}

fn cmd(bin: &Path, args: &[&str]) -> Output {
    common::peer_cmd(bin, args, &[])
}

fn run(bin: &Path, args: &[&str]) -> Output {
    common::peer_run(bin, args, &[])
}

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

fn p(x: &Path) -> &str {
    x.to_str().unwrap()
}

/// `DIR/in` holding `data`: the plaintext file of a test.
fn input_in(dir: &Path, data: &[u8]) -> PathBuf {
    let input = dir.join("in");
    fs::write(&input, data).unwrap();
    input
}

/// `hyperseal keygen --kind KIND -o DIR/NAME`: the key file and the public key it printed.
fn keygen(dir: &Path, name: &str, kind: &str) -> (PathBuf, String) {
    let key = dir.join(name);
    let o = run(Path::new(HS), &["keygen", "--kind", kind, "-o", p(&key)]);
    let said = String::from_utf8(o.stderr).unwrap();
    (key, said.trim().strip_prefix("Public key: ").unwrap().to_string())
}

fn is_armored(file: &Path) -> bool {
    fs::read(file).unwrap().starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----")
}

/// For each tagtest recipient (classic and hybrid), armored and not, and each size: the
/// plaintext written to `in`, `seal(recipient, armor, input, file)` run, the file's armor
/// checked, then `open(kind, armor, n, file)`. Both directions walk the same matrix.
fn each_sealed(
    direction: &str,
    seal: impl Fn(&str, bool, &Path, &Path),
    open: impl Fn(&str, bool, usize, &Path),
) {
    let dir = tempfile::tempdir().unwrap();
    for (kind, r) in [("tag", CLASSIC.to_string()), ("tagpq", hybrid())] {
        for armor in [false, true] {
            for n in SIZES {
                let (input, file) =
                    (dir.path().join("in"), dir.path().join(format!("{kind}-{armor}-{n}.age")));
                fs::write(&input, data(n)).unwrap();
                seal(&r, armor, &input, &file);
                assert_eq!(is_armored(&file), armor);
                open(kind, armor, n, &file);
            }
        }
        println!("{direction} ({kind}): plain and armored OK");
    }
}

/// hyperseal encrypts to each tagtest recipient (armored and not); age decrypts with the plugin.
#[test]
fn hyperseal_to_age_via_the_tagtest_plugin() {
    let Some(age) = age() else { return };
    let hs = Path::new(HS);
    let seal = |r: &str, armor: bool, input: &Path, file: &Path| {
        let mut args = vec!["encrypt", "-q", "--format", "age", "-r", r, "-o", p(file), p(input)];
        if armor {
            args.insert(1, "-a");
        }
        run(hs, &args);
    };
    each_sealed("hyperseal -> age", seal, |kind, armor, n, file| {
        if !armor {
            let header = fs::read(file).unwrap();
            let stanza = if kind == "tag" { "\n-> p256tag " } else { "\n-> mlkem768p256tag " };
            assert!(header.windows(stanza.len()).any(|w| w == stanza.as_bytes()), "{kind}");
        }
        let out = run(&age, &["-d", "-j", "tagtest", p(file)]);
        assert!(out.stdout == data(n), "{kind} armor={armor} n={n}: age decrypted something else");
    });
}

/// age encrypts to each tagtest recipient (armored and not); hyperseal decrypts with the same keys
/// as its own identities, and through the plugin (`-j tagtest`).
#[test]
fn age_to_hyperseal_with_the_same_keys() {
    let Some(age) = age() else { return };
    let hs = Path::new(HS);
    let seal = |r: &str, armor: bool, input: &Path, file: &Path| {
        let mut args = vec!["-r", r, "-o", p(file), p(input)];
        if armor {
            args.insert(0, "-a");
        }
        run(&age, &args);
    };
    each_sealed("age -> hyperseal", seal, |kind, armor, n, file| {
        let out = run(hs, &["decrypt", "-q", "-i", IDS, p(file)]);
        assert!(out.stdout == data(n), "{kind} armor={armor} n={n}: hyperseal decrypted something else");
        let out = run(hs, &["decrypt", "-q", "-j", "tagtest", p(file)]);
        assert!(out.stdout == data(n), "{kind} armor={armor} n={n}: via the plugin");
    });
}

/// A fresh `keygen --kind p256` / `p256-mlkem768` key: age encrypts to its `pubkey --age-tag`
/// form and hyperseal decrypts; the native recipient round-trips through hyperseal alone (age
/// cannot read hyperseal files, and refuses nothing here because it never sees them).
#[test]
fn fresh_keys_age_tag_form_and_native_form() {
    let Some(age) = age() else { return };
    let dir = tempfile::tempdir().unwrap();
    let hs = Path::new(HS);
    for (kind, prefix, tag_prefix) in
        [("p256", "hs-p2561", "age1tag1"), ("p256-mlkem768", "hs-mlkem768p2561", "age1tagpq1")]
    {
        let (key, public) = keygen(dir.path(), &format!("{kind}.key"), kind);
        assert!(public.starts_with(prefix), "{public}");
        let tag = String::from_utf8(run(hs, &["pubkey", "--age-tag", "-i", p(&key)]).stdout).unwrap();
        let tag = tag.trim();
        assert!(tag.starts_with(tag_prefix), "{tag}");
        let input = dir.path().join("in");
        fs::write(&input, data(70_000)).unwrap();
        for armor in [false, true] {
            let file = dir.path().join(format!("{kind}-{armor}.age"));
            let mut args = vec!["-r", tag, "-o", p(&file), p(&input)];
            if armor {
                args.insert(0, "-a");
            }
            run(&age, &args);
            assert!(run(hs, &["decrypt", "-q", "-i", p(&key), p(&file)]).stdout == data(70_000), "{kind}");
            // the native form, in a hyperseal file
            let native = dir.path().join(format!("{kind}-{armor}.hs"));
            let mut args = vec!["encrypt", "-q", "-r", &public, "-o", p(&native), p(&input)];
            if armor {
                args.insert(1, "-a");
            }
            run(hs, &args);
            assert!(run(hs, &["decrypt", "-q", "-i", p(&key), p(&native)]).stdout == data(70_000), "{kind}");
        }
        // An age file cannot carry the native stanza: refused, nothing written.
        let refused = dir.path().join(format!("{kind}-refused.age"));
        let o = cmd(hs, &["encrypt", "-q", "--format", "age", "-r", &public, "-o", p(&refused), p(&input)]);
        assert!(!o.status.success() && !refused.exists());
        assert!(String::from_utf8_lossy(&o.stderr).starts_with("hyperseal: error: "));
    }
}

/// Mixed recipients in one age file, as age's own mixing rules allow: a tag key with X25519
/// (both classic), a tagpq key with age1pq1 (both post-quantum); tagpq with X25519 is refused by
/// hyperseal as by age, leaving no output.
#[test]
fn mixed_recipients_with_age() {
    let Some(age) = age() else { return };
    let dir = tempfile::tempdir().unwrap();
    let hs = Path::new(HS);
    let input = input_in(dir.path(), &data(65536));
    for (native_kind, tag_r) in [("x25519", CLASSIC.to_string()), ("hybrid", hybrid())] {
        let (key, public) = keygen(dir.path(), &format!("{native_kind}.key"), native_kind);
        let file = dir.path().join(format!("mixed-{native_kind}.age"));
        let both = ["-r", &tag_r, "-r", &public];
        run(
            hs,
            &[&["encrypt", "-q", "-a", "--format", "age"][..], &both, &["-o", p(&file), p(&input)]].concat(),
        );
        assert!(run(&age, &["-d", "-j", "tagtest", p(&file)]).stdout == data(65536));
        assert!(run(&age, &["-d", "-i", p(&key), p(&file)]).stdout == data(65536));
        // and age's own mixed file opens in hyperseal with either identity
        let theirs = dir.path().join(format!("theirs-{native_kind}.age"));
        run(&age, &["-r", &tag_r, "-r", &public, "-o", p(&theirs), p(&input)]);
        assert!(run(hs, &["decrypt", "-q", "-i", IDS, p(&theirs)]).stdout == data(65536));
        assert!(run(hs, &["decrypt", "-q", "-i", p(&key), p(&theirs)]).stdout == data(65536));
    }
    let (_, x_pub) = keygen(dir.path(), "x.key", "x25519");
    let out = dir.path().join("refused.age");
    let o = cmd(
        hs,
        &["encrypt", "-q", "--format", "age", "-r", &hybrid(), "-r", &x_pub, "-o", p(&out), p(&input)],
    );
    assert!(!o.status.success() && !out.exists(), "tagpq + X25519 must be refused");
    let o = cmd(&age, &["-r", &hybrid(), "-r", &x_pub, "-o", p(&out), p(&input)]);
    assert!(!o.status.success(), "age refuses the same mix");
}

/// A wrong key is "no identity matched"; a tag stanza with a matching tag but a damaged body is a
/// broken file. Neither leaves an output file.
#[test]
fn wrong_key_and_damaged_stanza() {
    let Some(age) = age() else { return };
    let dir = tempfile::tempdir().unwrap();
    let hs = Path::new(HS);
    let input = input_in(dir.path(), b"tag test\n");
    let file = dir.path().join("f.age");
    run(&age, &["-r", CLASSIC, "-o", p(&file), p(&input)]);
    let other = dir.path().join("other.key");
    run(hs, &["keygen", "--kind", "p256", "-o", p(&other)]);
    let out = dir.path().join("out");
    let o = cmd(hs, &["decrypt", "-q", "-i", p(&other), "-o", p(&out), p(&file)]);
    assert!(!o.status.success() && !out.exists());
    // Flip one bit of the wrapped file key (the line after the stanza's arguments).
    let bytes = fs::read(&file).unwrap();
    let start = bytes.windows(9).position(|w| w == b"\n-> p256t").unwrap() + 1;
    let body_line = start + bytes[start..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut damaged = bytes.clone();
    damaged[body_line] = if damaged[body_line] == b'A' { b'B' } else { b'A' };
    let bad = dir.path().join("bad.age");
    fs::write(&bad, &damaged).unwrap();
    let o = cmd(hs, &["decrypt", "-q", "-i", IDS, "-o", p(&out), p(&bad)]);
    assert!(!o.status.success() && !out.exists());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("hyperseal: error: ") && err.contains("p256tag"), "{err}");
    // age (through its plugin) also refuses it
    assert!(!cmd(&age, &["-d", "-j", "tagtest", p(&bad)]).status.success());
}
