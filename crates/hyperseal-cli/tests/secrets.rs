//! No message ever repeats a secret: secret keys, PEM private keys, token keys and passphrases
//! put in the wrong place are named for what they are, never echoed (not even a prefix).

use std::fs;
use std::path::Path;

use crate::common;
use common::{hs, ok, stderr};

/// The secret part of a key text: the bech32 data after the last `1` of each key line, the
/// base64 body of a PEM, or the whole text (a passphrase).
fn secret_parts(text: &str) -> Vec<String> {
    if text.contains("-----BEGIN") {
        return text.lines().filter(|l| !l.starts_with("-----")).map(str::to_string).collect();
    }
    let keys: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.rsplit_once('1').map_or(l, |(_, d)| d).to_string())
        .collect();
    if keys.is_empty() {
        vec![text.trim().to_string()]
    } else {
        keys
    }
}

/// Asserts that no 6-character piece of any secret part appears in `out`.
fn assert_not_echoed(secret: &str, out: &str, what: &str) {
    let lower = out.to_ascii_lowercase();
    for part in secret_parts(secret) {
        let chars: Vec<char> = part.to_ascii_lowercase().chars().collect();
        for w in chars.windows(6) {
            let piece: String = w.iter().collect();
            assert!(!lower.contains(&piece), "{what}: {piece:?} of the secret appears in:\n{out}");
        }
    }
}

fn keygen(dir: &Path, kind: &str) -> (String, String) {
    let key = dir.join(format!("{kind}.key"));
    ok(&hs(&["keygen", "--kind", kind, "-o", key.to_str().unwrap()], None));
    let public = ok(&hs(&["pubkey", "-i", key.to_str().unwrap()], None));
    (key.to_str().unwrap().to_string(), public)
}

const IDENTITY_HINT: &str =
    "hyperseal: hint: that is an identity (secret key); use -i, or 'hyperseal pubkey -i FILE' for its recipient";

#[test]
fn an_identity_given_as_recipient_is_named_not_quoted() {
    let d = tempfile::tempdir().unwrap();
    for kind in ["x25519", "hybrid", "mlkem1024", "rsa3072"] {
        let (key, _) = keygen(d.path(), kind);
        let text = fs::read_to_string(&key).unwrap();
        // As a recipients file (-R), the mistake of the report.
        let o = hs(&["encrypt", "-R", &key], Some(b"data"));
        assert_eq!(o.status.code(), Some(1), "{kind}");
        let err = stderr(&o);
        assert_not_echoed(&text, &err, kind);
        assert_eq!(err.lines().nth(1), Some(IDENTITY_HINT), "{kind}: {err}");
        assert!(o.stdout.is_empty());
        // As -r, pasted on the command line (bech32 kinds; the PEM is a file).
        if kind != "rsa3072" {
            let line = text.lines().find(|l| !l.starts_with('#')).unwrap();
            for variant in [line.to_string(), line.to_lowercase(), format!("  {line}  ")] {
                let o = hs(&["encrypt", "-r", &variant], Some(b"data"));
                let err = stderr(&o);
                assert_eq!(o.status.code(), Some(1), "{kind}");
                assert_not_echoed(&text, &err, kind);
                assert_eq!(err.lines().nth(1), Some(IDENTITY_HINT), "{kind}: {err}");
            }
        }
    }
    // A token key is a secret too.
    let tok = d.path().join("tok");
    ok(&hs(&["token", "keygen", "-o", tok.to_str().unwrap()], None));
    let text = fs::read_to_string(&tok).unwrap();
    let o = hs(&["encrypt", "-r", text.trim()], Some(b"data"));
    assert_not_echoed(text.trim_start_matches("HYPERSEAL-TOKEN-KEY-1"), &stderr(&o), "token key");
    assert_eq!(stderr(&o).lines().nth(1), Some(IDENTITY_HINT));
}

#[test]
fn secrets_in_place_of_file_names_are_not_echoed() {
    let d = tempfile::tempdir().unwrap();
    let (key, public) = keygen(d.path(), "x25519");
    let line = fs::read_to_string(&key).unwrap().lines().find(|l| !l.starts_with('#')).unwrap().to_string();
    let (_, pq_public) = keygen(d.path(), "hybrid");
    let enc = d.path().join("f.hs");
    ok(&hs(&["encrypt", "-r", public.trim(), "-o", enc.to_str().unwrap()], Some(b"x")));
    let e = enc.to_str().unwrap();
    let tok = d.path().join("tok");
    ok(&hs(&["token", "keygen", "-o", tok.to_str().unwrap()], None));
    let tok_line = fs::read_to_string(&tok).unwrap().trim().to_string();
    let passphrase = "correct-horse-battery-staple-42";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // The key itself where its file belongs.
        (vec!["decrypt", "-i", &line, e], &line),
        (vec!["pubkey", "-i", &line], &line),
        (vec!["encrypt", "-r", pq_public.trim(), &line], &line),
        (vec!["inspect", &line], &line),
        (vec!["hash", &line], &line),
        (vec!["token", "open", "--key", &tok_line], &tok_line),
        // A passphrase where its file belongs, or left over on the command line.
        (vec!["decrypt", "--passphrase-file", passphrase, e], passphrase),
        (vec!["encrypt", "--passphrase-file", passphrase], passphrase),
        (vec!["kdf", "--password-file", passphrase, "--salt", "00112233445566778899"], passphrase),
        (vec!["mac", "--key-file", passphrase], passphrase),
        (vec!["encrypt", "-r", public.trim(), e, passphrase], passphrase),
        (vec!["decrypt", "-i", &key, e, passphrase], passphrase),
    ];
    for (args, secret) in &cases {
        let o = hs(args, Some(b""));
        assert!(!o.status.success(), "{args:?}");
        let err = stderr(&o);
        assert!(err.starts_with("hyperseal: error: "), "{err}");
        assert_not_echoed(secret, &err, &format!("{:?}", args[0]));
    }
    // A recipient given where an identity belongs is named too.
    let pubfile = d.path().join("pub");
    fs::write(&pubfile, &public).unwrap();
    let o = hs(&["decrypt", "-i", pubfile.to_str().unwrap(), e], None);
    assert!(stderr(&o).contains("a public key (recipient) was given"), "{}", stderr(&o));
}
