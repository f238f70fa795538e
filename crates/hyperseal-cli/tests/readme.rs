//! The CLI guide's toolkit example (docs/CLI.md) runs as written, line by line, and its comments
//! tell the truth.

use std::fs;
use std::process::Command;

/// The `sh` block of the docs/CLI.md section `title`.
fn sh_block(title: &str) -> Vec<String> {
    let readme = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/CLI.md")).unwrap();
    let section = readme.split(&format!("## {title}")).nth(1).expect("section");
    let block = section.split("```sh\n").nth(1).expect("sh block").split("```").next().unwrap();
    block.lines().map(str::to_string).collect()
}

#[test]
fn toolkit_example_runs_as_written() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for (name, data) in [
        ("big.iso", &b"not really an iso"[..]),
        ("report.pdf", b"%PDF-1.7 report"),
        ("a", b"a"),
        ("b", b"b"),
        ("k.bin", b"mac key"),
        ("password.txt", b"hunter2\n"),
    ] {
        fs::write(p.join(name), data).unwrap();
    }
    let sums = Command::new("sha256sum").arg("big.iso").current_dir(p).output().unwrap();
    fs::write(p.join("SHA256SUMS"), sums.stdout).unwrap();
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_hyperseal")).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut ran = 0;
    for line in sh_block("Toolkit commands") {
        let cmd = line.split("  #").next().unwrap().trim();
        if cmd.is_empty() || cmd.starts_with('#') {
            continue;
        }
        let o = Command::new("sh").args(["-c", cmd]).current_dir(p).env("PATH", &path).output().unwrap();
        assert!(o.status.success(), "docs/CLI.md line failed: {cmd}\n{}", String::from_utf8_lossy(&o.stderr));
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} commands found");
}

/// The token comment names the suite `token seal` really picks by default on this CPU.
#[test]
fn token_comment_names_the_default_suite() {
    let block = sh_block("Toolkit commands").join("\n");
    assert!(
        block.contains("# AES-256-GCM-SIV token where the CPU has AES instructions, else XChaCha20-Poly1305"),
        "{block}"
    );
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("t.key");
    let bin = env!("CARGO_BIN_EXE_hyperseal");
    assert!(Command::new(bin)
        .args(["token", "keygen", "-o", key.to_str().unwrap()])
        .output()
        .unwrap()
        .status
        .success());
    let mut seal = Command::new(bin)
        .args(["token", "seal", "--key", key.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(seal.stdin.take());
    let token = String::from_utf8(seal.wait_with_output().unwrap().stdout).unwrap();
    // Byte 1 of the base64url token is the suite id: 1 XChaCha20-Poly1305, 2 AES-256-GCM-SIV.
    // Its 6 bits sit in characters 1 and 2: the low 4 bits of char 1, the top 4 of char 2.
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let v = |i: usize| ALPHABET.iter().position(|&c| c == token.as_bytes()[i]).unwrap() as u8;
    let suite = ((v(1) & 0x0f) << 4) | (v(2) >> 2);
    #[cfg(target_arch = "x86_64")]
    let aes = std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("pclmulqdq");
    #[cfg(not(target_arch = "x86_64"))]
    let aes = false;
    assert_eq!(suite, if aes { 2 } else { 1 }, "token {token}");
}
