//! `decrypt --help` says what reaches the output when a file turns out damaged: with `-o FILE`
//! nothing is left, on stdout the chunks that authenticated are already out. Checked against
//! what the binary does.

use crate::common;

use common::hs;

#[test]
fn help_says_what_reaches_stdout_and_it_is_true() {
    let help = String::from_utf8(hs(&["decrypt", "--help"], None).stdout).unwrap();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!flat.contains("nothing is written unless"), "{flat}");
    assert!(flat.contains("With -o FILE, nothing is left unless the whole file authenticates"), "{flat}");
    assert!(flat.contains("To stdout, chunks are written as they authenticate"), "{flat}");
    assert!(flat.contains("a cut or damaged file ends with an error"), "{flat}");

    // And that is what happens: a file cut after its second chunk, to stdout and to -o.
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("key");
    assert!(hs(&["keygen", "--kind", "x25519", "-o", key.to_str().unwrap()], None).status.success());
    let data = vec![7u8; 200_000];
    let ct = hs(&["encrypt", "--format", "age", "-q", "-i", key.to_str().unwrap()], Some(&data));
    assert!(ct.status.success(), "{}", String::from_utf8_lossy(&ct.stderr));
    let cut = &ct.stdout[..ct.stdout.len() - 1000];
    let to_stdout = hs(&["decrypt", "-q", "-i", key.to_str().unwrap()], Some(cut));
    assert_eq!(to_stdout.status.code(), Some(1));
    assert!(
        !to_stdout.stdout.is_empty() && data.starts_with(&to_stdout.stdout),
        "authenticated chunks went out"
    );
    let out = d.path().join("out");
    let to_file = hs(&["decrypt", "-q", "-i", key.to_str().unwrap(), "-o", out.to_str().unwrap()], Some(cut));
    assert_eq!(to_file.status.code(), Some(1));
    assert!(!out.exists(), "nothing is left at -o");
}
