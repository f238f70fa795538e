//! A passkey's identity string (`AGE-PLUGIN-FIDO2PRF-1…`, from typage's `createCredential` or
//! a page's) in an identity file is an age plugin identity: the CLI hands the file's
//! `age-encryption.org/fido2prf` stanza to `age-plugin-fido2prf`, which asks the security key.
//! No hardware token here: the plugin is absent, and the error must name it, with nothing
//! written. The file and the identity are typage's (vectors/fido2prf.json).

use std::fs;
use std::path::Path;
use std::process::Command;

const HS: &str = env!("CARGO_BIN_EXE_hyperseal");

fn vectors() -> serde_json::Value {
    serde_json::from_str(include_str!("../../../vectors/fido2prf.json")).unwrap()
}

#[test]
fn a_passkey_identity_names_age_plugin_fido2prf() {
    use base64::Engine;
    let v = vectors();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let id = d.join("passkey.txt");
    fs::write(
        &id,
        format!("# a security key, made in a page\n{}\n", v["file"]["identity"].as_str().unwrap()),
    )
    .unwrap();
    let file = d.join("from-typage.age");
    let bytes =
        base64::engine::general_purpose::STANDARD.decode(v["file"]["file"].as_str().unwrap()).unwrap();
    fs::write(&file, bytes).unwrap();
    let out = d.join("never");
    // A PATH with no age-plugin-fido2prf on it.
    let empty = d.join("bin");
    fs::create_dir(&empty).unwrap();
    let o = Command::new(HS)
        .args(["decrypt", "-i", id.to_str().unwrap(), "-o", out.to_str().unwrap(), file.to_str().unwrap()])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.starts_with("hyperseal: error: "), "{err}");
    assert!(err.contains("age-plugin-fido2prf not found on PATH"), "{err}");
    assert!(err.contains("hint: "), "{err}");
    assert!(!Path::new(&out).exists(), "nothing written");
}
